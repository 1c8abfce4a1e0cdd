//! The flow driver: a scheme's [`Sender`](crate::controller::Sender) + a traffic [`Source`] + a [`Pacer`] → packets.
//!
//! The simulator and `wisp-net` drive a flow the same way:
//!
//! ```text
//! loop {
//!     while let Some(header) = flow.poll_transmit(now) { send(header) }
//!     sleep until flow.poll_timeout() or a feedback message arrives (flow.on_feedback)
//! }
//! ```

use crate::controller::{Allowance, SendContext, WireSender};
use crate::pacer::{Pacer, WokenPacer};
use crate::packet::{Content, DataHeader, Ecn, SchemeFields};
use crate::source::Source;
use crate::time::Instant;
use crate::units::DataSize;
use crate::wire::{Feedback, WireError};

/// Counters of what a flow has sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub packets: u64,
    pub bytes: u64,
}

/// Drives one flow's sending side: the scheme's sender `S` (at the wire level; the registry's
/// flows use [`AnySender`](crate::scheme::AnySender)).
#[derive(Debug)]
pub struct FlowSender<S> {
    sender: S,
    source: Source,
    pacer: WokenPacer,
    mtu: DataSize,
    next_seq: u64,
    byte_seq: u64,
}

impl<S: WireSender> FlowSender<S> {
    pub fn new(sender: S, source: Source, pacer: Pacer, mtu: DataSize) -> Self {
        FlowSender {
            sender,
            source,
            pacer: WokenPacer::new(pacer),
            mtu,
            next_seq: 0,
            byte_seq: 0,
        }
    }

    pub fn sender(&self) -> &S {
        &self.sender
    }

    /// The sender half (e.g. for the transport to take a packet's payload from it).
    pub fn sender_mut(&mut self) -> &mut S {
        &mut self.sender
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
        self.sender.on_time(now);
        let (target, limit, pacing) = match self.sender.allowance(now) {
            Allowance::Rate { target, pacing } => (Some(target), None, Some(pacing)),
            Allowance::Window { bytes, pacing } => (None, Some(bytes), pacing),
            Allowance::WindowedRate {
                target,
                bytes,
                pacing,
                discard_after,
            } => {
                if let Some(limit) = discard_after {
                    self.source.discard_older(now, limit);
                }
                (Some(target), Some(bytes), Some(pacing))
            }
        };
        self.source.advance(now, target);
        let Some((size, content)) = self.source.peek(self.mtu, limit) else {
            self.pacer.idle(now);
            return None;
        };
        // A late wake-up is served as the instant it was asked for (see [`WokenPacer`]).
        if !self.pacer.admit(now, size, pacing) {
            return None;
        }
        let waited = self.source.waited(now);
        self.source.pop(size);
        Some(self.emit_waited(now, size, content, waited))
    }

    fn emit(&mut self, now: Instant, size: DataSize, content: Content) -> DataHeader {
        self.emit_waited(now, size, content, None)
    }

    fn emit_waited(
        &mut self,
        now: Instant,
        size: DataSize,
        content: Content,
        waited: Option<crate::time::Duration>,
    ) -> DataHeader {
        let mut header = DataHeader {
            seq: self.next_seq,
            byte_seq: self.byte_seq,
            send_time: now,
            size,
            content,
            ecn: Ecn::NotEct,
            fields: SchemeFields::EMPTY,
        };
        self.next_seq += 1;
        self.byte_seq += size.bytes();
        let ctx = SendContext {
            backlog_after: self.source.backlog(),
            waited,
        };
        self.sender.on_packet_sent(now, &mut header, &ctx);
        header
    }

    /// When to call [`FlowSender::poll_transmit`] next if no feedback arrives first.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [
            self.sender.poll_timeout(),
            self.source.poll_timeout(),
            self.pacer.wake(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// A feedback message arrived. One that the scheme cannot decode is an error (the caller
    /// counts it) and changes nothing.
    pub fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), WireError> {
        self.sender.on_feedback(now, feedback)
    }
}

#[cfg(test)]
mod tests {
    use crate::scheme::{SchemeConfig, SchemeContext};
    use crate::time::{Duration, Instant};

    /// Drives `scheme` for `secs`, polling each wake-up `late` after the instant it asked for
    /// (a real clock); returns the packets sent.
    fn run(scheme: &str, secs: u64, late: Duration) -> usize {
        let c: SchemeConfig = scheme.parse().unwrap();
        let (mut flow, _) = c.build(SchemeContext::new()).unwrap();
        let start = Instant::from_nanos(123_456_789);
        let end = start + Duration::from_secs(secs);
        let mut now = start;
        let mut n = 0;
        while now < end {
            while flow.poll_transmit(now).is_some() {
                n += 1;
            }
            let wake = flow.poll_timeout().unwrap();
            assert!(
                wake > now || late.is_zero(),
                "asked to be woken in the past"
            );
            now = wake.max(now + Duration::from_nanos(1)) + late;
        }
        n
    }

    #[test]
    fn late_wake_ups_neither_stall_nor_slow_the_flow() {
        // GCC's pacer sends only on its 5-ms ticks; a real clock is never exactly on one.
        let exact = run("gcc-remb", 2, Duration::ZERO);
        let late = run("gcc-remb", 2, Duration::from_micros(37));
        assert!(exact > 50);
        assert!(late.abs_diff(exact) <= exact / 20, "{late} vs {exact}");
        // The same with probe clusters and padding sent through the seam's extra packets.
        let exact = run("gcc:padding-kbps=500", 2, Duration::ZERO);
        let late = run("gcc:padding-kbps=500", 2, Duration::from_micros(37));
        assert!(exact > 100);
        assert!(late.abs_diff(exact) <= exact / 20, "{late} vs {exact}");
        // A constant-rate pacer keeps its rate: lateness is not lost from the schedule.
        let exact = run("cbr:rate-kbps=1200", 1, Duration::ZERO);
        let late = run("cbr:rate-kbps=1200", 1, Duration::from_micros(370));
        assert_eq!(exact, 100);
        assert!(late.abs_diff(exact) <= 1, "{late} vs {exact}");
    }

    /// A constant-rate sender that marks its packets with `ecn`, and records the codepoint
    /// each `on_packet_sent` saw.
    #[derive(Debug)]
    struct Marking {
        inner: crate::scheme::CbrSender,
        ecn: crate::packet::Ecn,
        seen: Vec<crate::packet::Ecn>,
    }

    impl crate::controller::Sender for Marking {
        type Feedback = crate::wire::NoFeedback;
        type Fields = ();
        fn on_packet_sent(
            &mut self,
            now: Instant,
            packet: &crate::packet::DataHeader,
            ctx: &crate::controller::SendContext,
        ) {
            self.seen.push(packet.ecn);
            self.inner.on_packet_sent(now, packet, ctx);
        }
        fn on_feedback(&mut self, _now: Instant, feedback: &crate::wire::NoFeedback) {
            match *feedback {}
        }
        fn allowance(&self, now: Instant) -> crate::controller::Allowance {
            self.inner.allowance(now)
        }
        fn ecn(&self) -> crate::packet::Ecn {
            self.ecn
        }
    }

    /// The codepoint a sender chooses is the one its packets leave with, and the one its own
    /// `on_packet_sent` sees; a sender that chooses none sends Not-ECT.
    #[test]
    fn packets_leave_with_the_senders_ecn_codepoint() {
        use crate::packet::Ecn;
        use crate::scheme::{CbrConfig, Scheme};
        for ecn in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1] {
            let h = CbrConfig::default().build(SchemeContext::new()).unwrap();
            let sender = Marking {
                inner: h.sender,
                ecn,
                seen: vec![],
            };
            let mut flow = super::FlowSender::new(sender, h.source, h.pacer, h.mtu);
            let mut sent = vec![];
            let mut now = Instant::ZERO;
            while sent.len() < 5 {
                sent.extend(std::iter::from_fn(|| flow.poll_transmit(now)));
                now = flow
                    .poll_timeout()
                    .unwrap()
                    .max(now + Duration::from_nanos(1));
            }
            assert!(sent.iter().all(|p| p.ecn == ecn), "{ecn:?}: {sent:?}");
            assert_eq!(flow.sender().seen, vec![ecn; sent.len()]);
        }
        let c: SchemeConfig = "cbr".parse().unwrap();
        let (mut flow, _) = c.build(SchemeContext::new()).unwrap();
        assert_eq!(flow.poll_transmit(Instant::ZERO).unwrap().ecn, Ecn::NotEct);
    }
}
