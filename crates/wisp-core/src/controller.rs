//! The controller contract: one shape for every scheme.
//!
//! A scheme is a pair of halves that talk only through wire messages of the scheme's own types:
//!
//! * a [`Sender`] is told of each packet it sends ([`Sender::on_packet_sent`], which returns the
//!   scheme's own header fields for the packet, [`Sender::Fields`]) and each feedback message it
//!   receives ([`Sender::on_feedback`], a [`Sender::Feedback`]); it answers *how much may I send
//!   now* ([`Sender::allowance`], a query: a target bitrate plus pacing, or a window in bytes)
//!   and when it next wants to be woken ([`Sender::poll_timeout`]). State changes happen in the
//!   event hooks, [`Sender::on_time`] among them, never in the queries;
//! * a [`Receiver`] is told of each data packet that arrives, with the sender's fields decoded
//!   and the ECN codepoint it arrived with ([`DataHeader::ecn`]: CE if a queue marked it), and
//!   emits feedback when it wants to ([`Receiver::poll_feedback`]), with its own wake-up time.
//!
//! Neither half sends packets itself: the flow driver ([`crate::flow::FlowSender`]) combines the
//! sender with a traffic source and a pacer and produces the packets, in the simulator and over
//! real sockets alike. Every call takes `now`; nothing reads a clock.
//!
//! The layers below a scheme see neither of its message types: [`WireSender`] and
//! [`WireReceiver`], implemented for every [`Sender`] and [`Receiver`], encode and decode them
//! at the edge of the scheme, so the simulator and `wisp-net` carry bytes ([`Feedback`],
//! [`SchemeFields`](crate::packet::SchemeFields)) and count what does not decode.

use crate::packet::{DataHeader, Ecn, HeaderFields};
use crate::pingpair::{PairReplies, PingPairUse};
use crate::time::Instant;
use crate::units::{Bitrate, DataSize};
use crate::video::log::VideoLog;
use crate::wire::{Feedback, Message, WireError};
use core::fmt;

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
    /// Both (a media sender with a window, SCReAM's): the source is asked to produce
    /// `target`; packets leave paced at `pacing` while the sender may send `bytes` more. Video
    /// that has waited in the source longer than `discard_after`, if given, is discarded (and
    /// the encoder asked for a key frame).
    WindowedRate {
        target: Bitrate,
        bytes: DataSize,
        pacing: Bitrate,
        discard_after: Option<crate::time::Duration>,
    },
}

impl Allowance {
    /// The pacing rate, if any.
    pub fn pacing(&self) -> Option<Bitrate> {
        match *self {
            Allowance::Rate { pacing, .. } => Some(pacing),
            Allowance::Window { pacing, .. } => pacing,
            Allowance::WindowedRate { pacing, .. } => Some(pacing),
        }
    }
}

/// What the flow driver knows when a packet leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SendContext {
    /// Bytes the source still has ready after this packet; `None` for an always-backlogged
    /// source.
    pub backlog_after: Option<DataSize>,
    /// How long this packet waited in the source since it was queued (its frame's time);
    /// `None` for a bulk source or an audio packet.
    pub waited: Option<crate::time::Duration>,
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

/// What a flow's controller reported at one instant: the simulator's log and `wisp send --out`
/// sample it every [`SENDER_SAMPLE_INTERVAL`] of the flow's activity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderSample {
    pub flow: u16,
    pub at: Instant,
    /// The rate the controller targets, if it has one.
    pub target_rate: Option<Bitrate>,
    /// The controller's window, if it has one.
    pub window: Option<DataSize>,
    /// The queueing delay the controller aims at, if it has one.
    pub delay_target: Option<crate::time::Duration>,
}

impl SenderSample {
    /// `sender`'s figures at `at`.
    pub fn of(flow: u16, at: Instant, sender: &(impl WireSender + ?Sized)) -> Self {
        let stats = sender.stats();
        SenderSample {
            flow,
            at,
            target_rate: stats.target_rate,
            window: stats.window,
            delay_target: sender.delay_target(),
        }
    }
}

/// How often a flow's controller is sampled (at its first activity after each interval).
pub const SENDER_SAMPLE_INTERVAL: crate::time::Duration = crate::time::Duration::from_millis(100);

/// The sending half of a scheme. Hooks a scheme may ignore have no-op defaults.
pub trait Sender {
    /// The messages this scheme's receiver sends ([`crate::wire::NoFeedback`] if none).
    type Feedback: Message;
    /// The per-packet header fields this scheme's sender stamps (`()` if none).
    type Fields: HeaderFields;

    /// A packet is leaving now: the sender updates its accounting and returns the packet's
    /// scheme fields. `seq`, `byte_seq`, `send_time`, `size`, `content` and `ecn` (from
    /// [`Sender::ecn`]) are set.
    fn on_packet_sent(
        &mut self,
        now: Instant,
        packet: &DataHeader,
        ctx: &SendContext,
    ) -> Self::Fields;

    /// A feedback message from the receiver arrived.
    fn on_feedback(&mut self, now: Instant, feedback: &Self::Feedback);

    /// Time has reached `now`: update what depends on time alone (drain a queue estimate, accrue
    /// credit, open or close a measurement window). The flow driver calls it before each
    /// [`Sender::allowance`] query.
    fn on_time(&mut self, _now: Instant) {}

    /// How much may be sent now. A query: it changes nothing.
    fn allowance(&self, now: Instant) -> Allowance;

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

    /// The bytes packet `seq` carries after its header, for a scheme whose packets carry real
    /// payload (coded video); taken once, when the packet leaves. `None`: the packet is padding
    /// of its size.
    fn take_payload(&mut self, _seq: u64) -> Option<Vec<u8>> {
        None
    }

    /// The IP ECN codepoint of the next packet to leave: [`Ecn::NotEct`] by default; ECT(0) for
    /// a sender that takes CE marks as classic ECN (RFC 3168), ECT(1) for an L4S one (RFC 9331).
    /// Asked once per packet, just before [`Sender::on_packet_sent`], which sees the answer in
    /// [`DataHeader::ecn`]. A query: it changes nothing.
    fn ecn(&self) -> Ecn {
        Ecn::NotEct
    }
}

/// The receiving half of a scheme.
pub trait Receiver {
    /// The messages it sends (the same type as its sender's [`Sender::Feedback`]).
    type Feedback: Message;
    /// The header fields its sender stamps (the same type as [`Sender::Fields`]).
    type Fields: HeaderFields;

    /// A data packet arrived now, with the sender's fields decoded; `packet.ecn` is the
    /// codepoint it arrived with (CE if a queue on the path marked it).
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, fields: &Self::Fields);

    /// The next feedback message to send, if any. Called until it returns `None` after every
    /// arrival and every timeout.
    fn poll_feedback(&mut self, _now: Instant) -> Option<Self::Feedback> {
        None
    }

    /// When the receiver next wants [`Receiver::on_timeout`] called, if ever.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn on_timeout(&mut self, _now: Instant) {}

    /// The payload packet `seq` carried (see [`Sender::take_payload`]); called just before the
    /// packet is delivered with [`Receiver::on_packet_received`].
    fn on_payload(&mut self, _seq: u64, _payload: &[u8]) {}

    /// A Ping-Pair measured the flow's Wi-Fi downlink (Das et al., CoNEXT 2017, §5): the two
    /// replies' arrival times and the MAC rate of the normal reply's frame. Sent only to a
    /// scheme that asks for the probing ([`Needs::ping_pair`](crate::scheme::Needs)); a scheme
    /// that uses the pair returns what it took from it.
    fn on_ping_pair(&mut self, _replies: PairReplies, _mac_rate: Bitrate) -> Option<PingPairUse> {
        None
    }

    /// The frame log of a scheme that codes video (shared with its sender), for the figures a
    /// video run reports.
    fn video_log(&self) -> Option<&VideoLog> {
        None
    }
}

/// A [`Sender`] seen from the layers below the scheme: feedback arrives as bytes and the
/// scheme's fields leave in the packet's [`SchemeFields`](crate::packet::SchemeFields) block.
/// Implemented for every [`Sender`]; object-safe, for schemes registered at run time.
pub trait WireSender: fmt::Debug {
    /// Stamps `packet.ecn` and `packet.fields`.
    fn on_packet_sent(&mut self, now: Instant, packet: &mut DataHeader, ctx: &SendContext);
    /// Decodes and delivers a feedback message; a message that does not decode is an error and
    /// changes nothing.
    fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), WireError>;
    fn on_time(&mut self, now: Instant);
    fn allowance(&self, now: Instant) -> Allowance;
    fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket>;
    fn poll_timeout(&self) -> Option<Instant>;
    fn on_timeout(&mut self, now: Instant);
    fn stats(&self) -> SenderStats;
    fn delay_target(&self) -> Option<crate::time::Duration>;
    /// See [`Sender::take_payload`].
    fn take_payload(&mut self, _seq: u64) -> Option<Vec<u8>> {
        None
    }
}

impl<S: Sender + fmt::Debug> WireSender for S {
    fn on_packet_sent(&mut self, now: Instant, packet: &mut DataHeader, ctx: &SendContext) {
        packet.ecn = Sender::ecn(self);
        packet.fields = Sender::on_packet_sent(self, now, packet, ctx).emit();
    }
    fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), WireError> {
        let message = feedback.decode::<S::Feedback>()?;
        Sender::on_feedback(self, now, &message);
        Ok(())
    }
    fn on_time(&mut self, now: Instant) {
        Sender::on_time(self, now);
    }
    fn allowance(&self, now: Instant) -> Allowance {
        Sender::allowance(self, now)
    }
    fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket> {
        Sender::poll_extra(self, now)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Sender::poll_timeout(self)
    }
    fn on_timeout(&mut self, now: Instant) {
        Sender::on_timeout(self, now);
    }
    fn stats(&self) -> SenderStats {
        Sender::stats(self)
    }
    fn delay_target(&self) -> Option<crate::time::Duration> {
        Sender::delay_target(self)
    }
    fn take_payload(&mut self, seq: u64) -> Option<Vec<u8>> {
        Sender::take_payload(self, seq)
    }
}

/// A [`Receiver`] seen from the layers below the scheme (see [`WireSender`]).
pub trait WireReceiver: fmt::Debug {
    /// Decodes the packet's scheme fields and delivers it; a packet whose fields do not decode
    /// is an error and is not delivered.
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader) -> Result<(), WireError>;
    fn poll_feedback(&mut self, now: Instant) -> Option<Feedback>;
    fn poll_timeout(&self) -> Option<Instant>;
    fn on_timeout(&mut self, now: Instant);
    /// See [`Receiver::on_payload`].
    fn on_payload(&mut self, _seq: u64, _payload: &[u8]) {}
    /// See [`Receiver::on_ping_pair`].
    fn on_ping_pair(&mut self, _replies: PairReplies, _mac_rate: Bitrate) -> Option<PingPairUse> {
        None
    }
    /// See [`Receiver::video_log`].
    fn video_log(&self) -> Option<&VideoLog> {
        None
    }
}

impl<R: Receiver + fmt::Debug> WireReceiver for R {
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader) -> Result<(), WireError> {
        let fields = R::Fields::parse(&packet.fields)?;
        Receiver::on_packet_received(self, now, packet, &fields);
        Ok(())
    }
    fn poll_feedback(&mut self, now: Instant) -> Option<Feedback> {
        Receiver::poll_feedback(self, now).map(|m| Feedback::encode(&m))
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Receiver::poll_timeout(self)
    }
    fn on_timeout(&mut self, now: Instant) {
        Receiver::on_timeout(self, now);
    }
    fn on_payload(&mut self, seq: u64, payload: &[u8]) {
        Receiver::on_payload(self, seq, payload);
    }
    fn on_ping_pair(&mut self, replies: PairReplies, mac_rate: Bitrate) -> Option<PingPairUse> {
        Receiver::on_ping_pair(self, replies, mac_rate)
    }
    fn video_log(&self) -> Option<&VideoLog> {
        Receiver::video_log(self)
    }
}

/// A boxed half is the half (the registry boxes its larger schemes to keep the enums small).
impl<S: Sender> Sender for Box<S> {
    type Feedback = S::Feedback;
    type Fields = S::Fields;
    fn on_packet_sent(
        &mut self,
        now: Instant,
        packet: &DataHeader,
        ctx: &SendContext,
    ) -> S::Fields {
        (**self).on_packet_sent(now, packet, ctx)
    }
    fn on_feedback(&mut self, now: Instant, feedback: &S::Feedback) {
        (**self).on_feedback(now, feedback);
    }
    fn on_time(&mut self, now: Instant) {
        (**self).on_time(now);
    }
    fn allowance(&self, now: Instant) -> Allowance {
        (**self).allowance(now)
    }
    fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket> {
        (**self).poll_extra(now)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        (**self).poll_timeout()
    }
    fn on_timeout(&mut self, now: Instant) {
        (**self).on_timeout(now);
    }
    fn stats(&self) -> SenderStats {
        (**self).stats()
    }
    fn delay_target(&self) -> Option<crate::time::Duration> {
        (**self).delay_target()
    }
    fn take_payload(&mut self, seq: u64) -> Option<Vec<u8>> {
        (**self).take_payload(seq)
    }
    fn ecn(&self) -> Ecn {
        (**self).ecn()
    }
}

impl<R: Receiver> Receiver for Box<R> {
    type Feedback = R::Feedback;
    type Fields = R::Fields;
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, fields: &R::Fields) {
        (**self).on_packet_received(now, packet, fields);
    }
    fn poll_feedback(&mut self, now: Instant) -> Option<R::Feedback> {
        (**self).poll_feedback(now)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        (**self).poll_timeout()
    }
    fn on_timeout(&mut self, now: Instant) {
        (**self).on_timeout(now);
    }
    fn on_payload(&mut self, seq: u64, payload: &[u8]) {
        (**self).on_payload(seq, payload);
    }
    fn on_ping_pair(&mut self, replies: PairReplies, mac_rate: Bitrate) -> Option<PingPairUse> {
        (**self).on_ping_pair(replies, mac_rate)
    }
    fn video_log(&self) -> Option<&VideoLog> {
        (**self).video_log()
    }
}
