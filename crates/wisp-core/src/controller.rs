//! The controller contract: one shape for every scheme.
//!
//! A scheme is a pair of halves that talk only through wire messages ([`Feedback`]):
//!
//! * a [`Sender`] is told of each packet it sends ([`Sender::on_packet_sent`], where it may stamp
//!   its own header fields) and each feedback message it receives ([`Sender::on_feedback`]); it
//!   answers *how much may I send now* ([`Sender::allowance`]: a target bitrate plus pacing, or a
//!   window in bytes) and when it next wants to be woken ([`Sender::poll_timeout`]);
//! * a [`Receiver`] is told of each data packet that arrives and emits feedback when it wants to
//!   ([`Receiver::poll_feedback`]), with its own wake-up time.
//!
//! Neither half sends packets itself: the flow driver ([`crate::flow::FlowSender`]) combines the
//! sender with a traffic source and a pacer and produces the packets, in the simulator and over
//! real sockets alike. Every call takes `now`; nothing reads a clock.

use crate::packet::DataHeader;
use crate::time::Instant;
use crate::units::{Bitrate, DataSize};
use crate::wire::Feedback;

/// How much a sender may send now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allowance {
    /// Rate-based: the source is asked to produce `target`; packets leave paced at `pacing`.
    /// (A bulk source sends full-size packets paced at `pacing`.)
    Rate { target: Bitrate, pacing: Bitrate },
    /// Window-based: the sender may send `bytes` more now (the sender keeps its own account of
    /// what is in flight, updated in [`Sender::on_packet_sent`] and [`Sender::on_feedback`]).
    /// Packets are paced at `pacing` if given, else sent back to back.
    Window {
        bytes: DataSize,
        pacing: Option<Bitrate>,
    },
}

impl Allowance {
    /// The pacing rate, if any.
    pub fn pacing(&self) -> Option<Bitrate> {
        match *self {
            Allowance::Rate { pacing, .. } => Some(pacing),
            Allowance::Window { pacing, .. } => pacing,
        }
    }
}

/// What the flow driver knows when a packet leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SendContext {
    /// Bytes the source still has ready after this packet; `None` for an always-backlogged
    /// source.
    pub backlog_after: Option<DataSize>,
}

/// A packet a sender wants sent outside its allowance (a heartbeat or a probe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtraPacket {
    pub size: DataSize,
    pub content: crate::packet::Content,
}

/// Statistics a sender may expose for plots and logs.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct SenderStats {
    /// The rate the controller currently targets, if it has one.
    pub target_rate: Option<Bitrate>,
    /// The controller's window, if it has one.
    pub window: Option<DataSize>,
}

/// The sending half of a scheme. Hooks a scheme may ignore have no-op defaults.
pub trait Sender {
    /// A packet is leaving now. The sender updates its accounting and may stamp its header fields
    /// (`time_to_next`, `throwaway`, …); `seq`, `byte_seq`, `send_time`, `size` and `content` are
    /// already set.
    fn on_packet_sent(&mut self, now: Instant, packet: &mut DataHeader, ctx: &SendContext);

    /// A feedback message from the receiver arrived.
    fn on_feedback(&mut self, now: Instant, feedback: &Feedback);

    /// How much may be sent now.
    fn allowance(&mut self, now: Instant) -> Allowance;

    /// A packet to send now regardless of the allowance (heartbeat, probe), if any.
    fn poll_extra(&mut self, _now: Instant) -> Option<ExtraPacket> {
        None
    }

    /// When the sender next wants [`Sender::on_timeout`] called, if ever.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    /// Called at (or after) the time [`Sender::poll_timeout`] returned.
    fn on_timeout(&mut self, _now: Instant) {}

    fn stats(&self) -> SenderStats {
        SenderStats::default()
    }

    /// The queueing delay the controller currently aims at, if it has such an operating point
    /// (a learned congestion threshold, say), for plots and logs.
    fn delay_target(&self) -> Option<crate::time::Duration> {
        None
    }
}

/// The receiving half of a scheme.
pub trait Receiver {
    /// A data packet arrived now.
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader);

    /// The next feedback message to send, if any. Called until it returns `None` after every
    /// arrival and every timeout.
    fn poll_feedback(&mut self, _now: Instant) -> Option<Feedback> {
        None
    }

    /// When the receiver next wants [`Receiver::on_timeout`] called, if ever.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn on_timeout(&mut self, _now: Instant) {}
}
