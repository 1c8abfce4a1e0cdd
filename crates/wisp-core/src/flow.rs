//! The flow driver: a scheme's [`Sender`] + a traffic [`Source`] + a [`Pacer`] → packets.
//!
//! The simulator and `wisp-net` drive a flow the same way:
//!
//! ```text
//! loop {
//!     while let Some(header) = flow.poll_transmit(now) { send(header) }
//!     sleep until flow.poll_timeout() or a feedback message arrives (flow.on_feedback)
//! }
//! ```

use crate::controller::{Allowance, SendContext, Sender};
use crate::pacer::Pacer;
use crate::packet::{Content, DataHeader};
use crate::scheme::AnySender;
use crate::source::Source;
use crate::time::Instant;
use crate::units::DataSize;
use crate::wire::Feedback;

/// Counters of what a flow has sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub packets: u64,
    pub bytes: u64,
}

/// Drives one flow's sending side.
#[derive(Debug)]
pub struct FlowSender {
    sender: AnySender,
    source: Source,
    pacer: Pacer,
    mtu: DataSize,
    next_seq: u64,
    byte_seq: u64,
    /// Set when a packet was ready but the pacer held it back.
    pacer_wake: Option<Instant>,
}

impl FlowSender {
    pub fn new(sender: AnySender, source: Source, pacer: Pacer, mtu: DataSize) -> Self {
        FlowSender {
            sender,
            source,
            pacer,
            mtu,
            next_seq: 0,
            byte_seq: 0,
            pacer_wake: None,
        }
    }

    pub fn sender(&self) -> &AnySender {
        &self.sender
    }

    /// The traffic source (e.g. to request a key frame from a media source).
    pub fn source_mut(&mut self) -> &mut Source {
        &mut self.source
    }

    pub fn counters(&self) -> FlowCounters {
        FlowCounters {
            packets: self.next_seq,
            bytes: self.byte_seq,
        }
    }

    /// The next packet to send now, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<DataHeader> {
        if self.sender.poll_timeout().is_some_and(|t| t <= now) {
            self.sender.on_timeout(now);
        }
        if let Some(extra) = self.sender.poll_extra(now) {
            return Some(self.emit(now, extra.size, extra.content));
        }
        let (target, limit, pacing) = match self.sender.allowance(now) {
            Allowance::Rate { target, pacing } => (Some(target), None, Some(pacing)),
            Allowance::Window { bytes, pacing } => (None, Some(bytes), pacing),
        };
        self.source.advance(now, target);
        let (size, content) = self.source.peek(self.mtu, limit)?;
        if let Some(rate) = pacing {
            if !self.pacer.can_send(now) {
                self.pacer_wake = Some(self.pacer.next_send_time_after(now));
                return None;
            }
            self.pacer.on_sent(now, size, rate);
        }
        self.pacer_wake = None;
        self.source.pop(size);
        Some(self.emit(now, size, content))
    }

    fn emit(&mut self, now: Instant, size: DataSize, content: Content) -> DataHeader {
        let mut header = DataHeader {
            seq: self.next_seq,
            byte_seq: self.byte_seq,
            send_time: now,
            size,
            content,
            time_to_next: None,
            throwaway: None,
        };
        self.next_seq += 1;
        self.byte_seq += size.bytes();
        let ctx = SendContext {
            backlog_after: self.source.backlog(),
        };
        self.sender.on_packet_sent(now, &mut header, &ctx);
        header
    }

    /// When to call [`FlowSender::poll_transmit`] next if no feedback arrives first.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [
            self.sender.poll_timeout(),
            self.source.poll_timeout(),
            self.pacer_wake,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn on_feedback(&mut self, now: Instant, feedback: &Feedback) {
        self.sender.on_feedback(now, feedback);
    }
}
