//! Feedback messages: the framing every scheme's messages share, and the standard messages.
//!
//! A scheme's receiver sends its sender messages of the scheme's own type (a [`Message`]: Sprout's
//! forecast, a TCP ACK, GCC's REMB and receiver report). The layers below never look inside them:
//! the receiver half's message is encoded once into a [`Feedback`] — its bytes — which the
//! simulator carries over the modelled reverse path (its size is the encoded size plus
//! [`IP_UDP_OVERHEAD`](crate::packet::IP_UDP_OVERHEAD)) and `wisp-net` carries over UDP; the
//! sender half decodes it. So the simulator carries exactly the bytes the wire does.
//!
//! Framing: `kind: u8`, `length: u16` (big-endian, bytes of payload), payload. All integers are
//! big-endian. Parsing never panics: truncated input, unknown kinds and trailing bytes are errors.
//!
//! Kinds 1–9 are the **standard** messages defined here ([`ReceiverReport`], [`Remb`],
//! [`TransportFeedback`]) and RFC 8888's ([`crate::ccfb::CongestionControlFeedback`], kind 5),
//! which a scheme's message type may include; `wisp-net` sends REMB, transport-wide feedback and
//! RFC 8888 feedback as their standard RTCP packets (PSFB REMB, RTPFB TransportLayerCC, RTPFB
//! CCFB) and everything else in an RTCP APP block. Scheme kinds are allocated by family
//! (a receiver only ever talks to the sender of its own scheme, so the ranges only keep the
//! logs readable): 10–19 Sprout, 20–29 GCC, 30–39 TCP baselines, 40–49 utility-maximisation
//! controllers, 50–59 Ping-Pair/Kwikr, 60–69 WBest and other probers, 70–79 NADA, 200–254 for
//! schemes outside the tree (tests, Python).

use crate::time::{Duration, Instant};
use crate::units::Bitrate;
use core::fmt;

/// Why bytes could not be parsed as a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("truncated message: needed {needed} more bytes")]
    Truncated { needed: usize },
    #[error("unknown message kind {0}")]
    UnknownKind(u8),
    #[error("{0} trailing bytes after the message")]
    Trailing(usize),
    #[error("invalid field: {0}")]
    Invalid(&'static str),
}

/// A bounds-checked big-endian reader over a byte slice.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.buf.len() < n {
            return Err(WireError::Truncated {
                needed: n - self.buf.len(),
            });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.bytes(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, WireError> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.bytes(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, WireError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
    pub fn instant(&mut self) -> Result<Instant, WireError> {
        Ok(Instant::from_nanos(self.u64()?))
    }
    /// Errors if any bytes are left.
    pub fn finish(self) -> Result<(), WireError> {
        match self.buf.len() {
            0 => Ok(()),
            n => Err(WireError::Trailing(n)),
        }
    }
}

/// Big-endian writers onto a `Vec<u8>`.
pub trait Writer {
    fn put_u8(&mut self, v: u8);
    fn put_u16(&mut self, v: u16);
    fn put_u32(&mut self, v: u32);
    fn put_u64(&mut self, v: u64);
    fn put_instant(&mut self, t: Instant) {
        self.put_u64(t.as_nanos());
    }
}

impl Writer for Vec<u8> {
    fn put_u8(&mut self, v: u8) {
        self.push(v);
    }
    fn put_u16(&mut self, v: u16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends one framed message: `kind`, the payload's length, and the payload `payload` writes.
pub fn frame(out: &mut Vec<u8>, kind: u8, payload: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.put_u8(kind);
    out.put_u16(0);
    payload(out);
    let len = out.len() - start - 3;
    debug_assert!(len <= usize::from(u16::MAX));
    out[start + 1..start + 3].copy_from_slice(&(len as u16).to_be_bytes());
}

/// Splits one framed message into its kind and a reader over its payload; `buf` must hold
/// exactly one message.
pub fn unframe(buf: &[u8]) -> Result<(u8, Reader<'_>), WireError> {
    let mut r = Reader::new(buf);
    let kind = r.u8()?;
    let len = usize::from(r.u16()?);
    let payload = Reader::new(r.bytes(len)?);
    r.finish()?;
    Ok((kind, payload))
}

/// A typed feedback message with its framed encoding.
///
/// A scheme's message type is often an enum over several kinds (GCC's REMB and receiver report);
/// `parse` dispatches on the kind byte. It must never panic, and must reject kinds it does not
/// know with [`WireError::UnknownKind`].
pub trait Message: Sized + Clone + fmt::Debug {
    /// Appends the framed encoding of `self` (use [`frame`]).
    fn emit(&self, out: &mut Vec<u8>);
    /// Parses exactly one framed message (use [`unframe`]).
    fn parse(buf: &[u8]) -> Result<Self, WireError>;
}

/// One encoded feedback message as the layers below a scheme carry it: framed bytes whose kind
/// and length have been checked, and nothing else.
#[derive(Clone, PartialEq, Eq)]
pub struct Feedback {
    bytes: Vec<u8>,
}

impl Feedback {
    /// Encodes `message`.
    pub fn encode<M: Message>(message: &M) -> Self {
        let mut bytes = Vec::with_capacity(48);
        message.emit(&mut bytes);
        debug_assert!(
            unframe(&bytes).is_ok(),
            "{message:?} emits a malformed frame"
        );
        Feedback { bytes }
    }

    /// Takes `bytes` as one message if the framing holds (kind, length, no trailing bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, WireError> {
        unframe(bytes)?;
        Ok(Feedback {
            bytes: bytes.to_vec(),
        })
    }

    /// Decodes the message as a scheme's type.
    pub fn decode<M: Message>(&self) -> Result<M, WireError> {
        M::parse(&self.bytes)
    }

    /// The message's kind byte.
    pub fn kind(&self) -> u8 {
        self.bytes[0]
    }

    /// The framed encoding.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Encoded size in bytes (without IP/UDP overhead).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Never true: a frame has at least its kind and length.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl fmt::Debug for Feedback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Feedback(kind {}, {} bytes)", self.kind(), self.len())
    }
}

/// The message type of schemes whose receiver sends nothing. It has no values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoFeedback {}

impl Message for NoFeedback {
    fn emit(&self, _out: &mut Vec<u8>) {
        match *self {}
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, _) = unframe(buf)?;
        Err(WireError::UnknownKind(kind))
    }
}

/// Kind codes of the standard messages.
pub mod kind {
    pub const RECEIVER_REPORT: u8 = 2;
    pub const REMB: u8 = 3;
    pub const TRANSPORT_FEEDBACK: u8 = 4;
    /// RFC 8888 feedback ([`crate::ccfb::CongestionControlFeedback`]).
    pub const CONGESTION_CONTROL_FEEDBACK: u8 = 5;
}

/// A periodic receiver report (RTCP RR-like, RFC 3550 §6.4.2), kind 2.
///
/// Encoding: `highest_seq: u64`, `received: u64`, `cumulative_lost: u64`, `fraction_lost: u8`,
/// then `1` and the [`RttEcho`] (two u64, ns) or `0` without one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiverReport {
    /// Highest sequence number received.
    pub highest_seq: u64,
    /// Packets received in total.
    pub received: u64,
    /// Packets lost in total (by sequence gaps).
    pub cumulative_lost: u64,
    /// Fraction lost since the previous report, in 1/256 (RFC 3550 §6.4.1).
    pub fraction_lost: u8,
    /// What the sender needs to measure the round-trip time, as RTCP's LSR and DLSR.
    pub echo: Option<RttEcho>,
}

/// The round-trip time echo of a [`ReceiverReport`] (RFC 3550 §6.4.1's LSR/DLSR, on the newest
/// data packet instead of the newest sender report): the sender measures RTT = now − `sent` −
/// `held`, all on its own clock but for `held`, which is a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttEcho {
    /// The send time (the sender's clock) of the newest data packet received.
    pub sent: Instant,
    /// How long the receiver held it before this report.
    pub held: crate::time::Duration,
}

impl ReceiverReport {
    fn emit_payload(&self, out: &mut Vec<u8>) {
        out.put_u64(self.highest_seq);
        out.put_u64(self.received);
        out.put_u64(self.cumulative_lost);
        out.put_u8(self.fraction_lost);
        match self.echo {
            None => out.put_u8(0),
            Some(e) => {
                out.put_u8(1);
                out.put_instant(e.sent);
                out.put_u64(e.held.as_nanos());
            }
        }
    }
    fn parse_payload(p: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ReceiverReport {
            highest_seq: p.u64()?,
            received: p.u64()?,
            cumulative_lost: p.u64()?,
            fraction_lost: p.u8()?,
            echo: match p.u8()? {
                0 => None,
                1 => Some(RttEcho {
                    sent: p.instant()?,
                    held: crate::time::Duration::from_nanos(p.u64()?),
                }),
                _ => return Err(WireError::Invalid("RTT echo flag")),
            },
        })
    }
}

impl Message for ReceiverReport {
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, kind::RECEIVER_REPORT, |out| self.emit_payload(out));
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match unframe(buf)? {
            (kind::RECEIVER_REPORT, mut p) => {
                let m = ReceiverReport::parse_payload(&mut p)?;
                p.finish()?;
                Ok(m)
            }
            (k, _) => Err(WireError::UnknownKind(k)),
        }
    }
}

/// A receiver's estimate of the rate the sender may use: REMB
/// (draft-alvestrand-rmcat-remb-03 §2.2), kind 3.
///
/// On the wire REMB carries the bitrate as an 18-bit mantissa and a 6-bit exponent, so only
/// some rates can be sent. A `Remb` holds only those: [`Remb::new`] rounds down to the nearest
/// one, as libwebrtc's encoder does (it shifts the mantissa right until it fits), so the
/// simulator's sender sees exactly the rate a real one reads from the RTCP packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Remb {
    exp: u8,
    mantissa: u32,
}

impl Remb {
    /// Bits of the mantissa.
    pub const MANTISSA_BITS: u32 = 18;
    /// The largest exponent (6 bits).
    pub const MAX_EXP: u8 = 63;

    /// The REMB for `bitrate`, rounded down to what the wire can carry.
    pub fn new(bitrate: Bitrate) -> Self {
        let bps = bitrate.bps();
        let mut exp = 0u8;
        while exp < Remb::MAX_EXP && (bps >> exp) >= 1 << Remb::MANTISSA_BITS {
            exp += 1;
        }
        Remb {
            exp,
            mantissa: ((bps >> exp) & ((1 << Remb::MANTISSA_BITS) - 1)) as u32,
        }
    }

    /// The REMB with these wire fields; `None` if either is out of range.
    pub fn from_parts(exp: u8, mantissa: u32) -> Option<Self> {
        (exp <= Remb::MAX_EXP && mantissa < 1 << Remb::MANTISSA_BITS)
            .then_some(Remb { exp, mantissa })
    }

    /// The 6-bit exponent and the 18-bit mantissa.
    pub fn parts(&self) -> (u8, u32) {
        (self.exp, self.mantissa)
    }

    /// The bitrate it carries (mantissa · 2^exp, saturating).
    pub fn bitrate(&self) -> Bitrate {
        let bps = u128::from(self.mantissa) << self.exp;
        Bitrate::from_bps(u64::try_from(bps).unwrap_or(u64::MAX))
    }
}

impl Message for Remb {
    /// Payload: the bitrate in bit/s (u64); one that REMB cannot carry exactly is invalid.
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, kind::REMB, |out| out.put_u64(self.bitrate().bps()));
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match unframe(buf)? {
            (kind::REMB, mut p) => {
                let bitrate = Bitrate::from_bps(p.u64()?);
                p.finish()?;
                let m = Remb::new(bitrate);
                if m.bitrate() != bitrate {
                    return Err(WireError::Invalid("REMB cannot carry this bitrate"));
                }
                Ok(m)
            }
            (k, _) => Err(WireError::UnknownKind(k)),
        }
    }
}

/// Transport-wide congestion control feedback
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1), kind 4: for every transport-wide
/// sequence number from `base_seq` on, whether the packet arrived and, if so, its arrival as a
/// delta on the 250 µs grid from the previous reported arrival (the first from the reference
/// time, a multiple of 64 ms).
///
/// This is the information model of the RTCP packet (RTPFB, FMT 15) and nothing more, so the
/// simulator's sender reads what a real one reads; `wisp-net` marshals it to and from the RTCP
/// packet. The rounding to the two grids happens when feedback is built
/// ([`TransportFeedbackRecorder`]), as libwebrtc's `TransportFeedback` does it.
///
/// Payload: base (u16), reference (u32, < 2^24), feedback count (u8), status count (u16), then
/// per status a symbol byte — 0 not received, 1 small delta (a u8 follows), 2 large delta (an
/// i16 follows) — as the RTCP packet's two-bit symbols.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportFeedback {
    /// The first transport-wide sequence number covered (16 bits on the wire).
    pub base_seq: u16,
    /// The reference time in multiples of 64 ms (24 bits on the wire; wraps after 12.4 days).
    pub reference: u32,
    /// The feedback packet counter (wraps at 256).
    pub fb_count: u8,
    /// One entry per sequence number from `base_seq` on: `None` not received, else the receive
    /// delta in 250 µs ticks.
    pub deltas: Vec<Option<i16>>,
}

impl TransportFeedback {
    /// The receive-delta grid: 250 µs.
    pub const TICK: Duration = Duration::from_micros(250);
    /// The reference-time grid: 64 ms.
    pub const REFERENCE_UNIT: Duration = Duration::from_millis(64);
    /// The largest reference time (24 bits).
    pub const MAX_REFERENCE: u32 = (1 << 24) - 1;

    /// Every sequence number covered with its arrival on the receiver's clock in µs (reference
    /// + cumulative deltas), or `None` when not received.
    pub fn arrivals_us(&self) -> impl Iterator<Item = (u16, Option<i64>)> + '_ {
        let mut t = i64::from(self.reference) * 64_000;
        self.deltas.iter().enumerate().map(move |(k, d)| {
            let seq = self.base_seq.wrapping_add(k as u16);
            (
                seq,
                d.map(|d| {
                    t += i64::from(d) * 250;
                    t
                }),
            )
        })
    }

    /// Packets reported received.
    pub fn received(&self) -> usize {
        self.deltas.iter().filter(|d| d.is_some()).count()
    }
}

const TF_NOT_RECEIVED: u8 = 0;
const TF_SMALL: u8 = 1;
const TF_LARGE: u8 = 2;

impl Message for TransportFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, kind::TRANSPORT_FEEDBACK, |out| {
            out.put_u16(self.base_seq);
            out.put_u32(self.reference & TransportFeedback::MAX_REFERENCE);
            out.put_u8(self.fb_count);
            out.put_u16(self.deltas.len().min(usize::from(u16::MAX)) as u16);
            for d in self.deltas.iter().take(usize::from(u16::MAX)) {
                match *d {
                    None => out.put_u8(TF_NOT_RECEIVED),
                    Some(d) if (0..=255).contains(&d) => {
                        out.put_u8(TF_SMALL);
                        out.put_u8(d as u8);
                    }
                    Some(d) => {
                        out.put_u8(TF_LARGE);
                        out.put_u16(d as u16);
                    }
                }
            }
        });
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match unframe(buf)? {
            (kind::TRANSPORT_FEEDBACK, mut p) => {
                let base_seq = p.u16()?;
                let reference = p.u32()?;
                if reference > TransportFeedback::MAX_REFERENCE {
                    return Err(WireError::Invalid("reference time beyond 24 bits"));
                }
                let fb_count = p.u8()?;
                let count = usize::from(p.u16()?);
                // Each status takes at least a byte: a count beyond what is left is truncated.
                if count > p.remaining() {
                    return Err(WireError::Truncated {
                        needed: count - p.remaining(),
                    });
                }
                let mut deltas = Vec::with_capacity(count);
                for _ in 0..count {
                    deltas.push(match p.u8()? {
                        TF_NOT_RECEIVED => None,
                        TF_SMALL => Some(i16::from(p.u8()?)),
                        TF_LARGE => Some(p.u16()? as i16),
                        _ => return Err(WireError::Invalid("transport feedback status symbol")),
                    });
                }
                p.finish()?;
                Ok(TransportFeedback {
                    base_seq,
                    reference,
                    fb_count,
                    deltas,
                })
            }
            (k, _) => Err(WireError::UnknownKind(k)),
        }
    }
}

/// The receiving side's record of transport-wide sequence numbers and arrivals, and the
/// [`TransportFeedback`] messages built from it (what libwebrtc's `RemoteEstimatorProxy` and
/// `TransportFeedback::AddReceivedPacket` decide):
///
/// * the reference time is the first reported arrival rounded down to 64 ms, and each receive
///   delta is the difference of two arrival instants each rounded down to the 250 µs grid, so
///   rounding never accumulates over a packet;
/// * a packet whose delta does not fit an i16 of ticks (±8.19 s) starts a new message;
/// * one message covers at most [`TransportFeedbackRecorder::MAX_STATUSES`] sequence numbers: a
///   gap that would cross that starts a new message at the next received one, so there are never
///   more messages than received packets, whatever sequence numbers a peer sends.
///
/// Sequence numbers are unwrapped (a step of at most ±2^15 from the highest so far). A packet
/// older than what the previous message already covered is not reported again and is counted as
/// late.
#[derive(Debug, Clone, Default)]
pub struct TransportFeedbackRecorder {
    /// Unwrapped sequence number → arrival, not yet reported.
    arrivals: std::collections::BTreeMap<i64, Instant>,
    highest: Option<i64>,
    /// The first sequence number the next message may report.
    next_base: Option<i64>,
    fb_count: u8,
    /// Packets that came after feedback had covered their sequence number, or twice.
    pub late_or_duplicate: u64,
}

impl TransportFeedbackRecorder {
    /// The most sequence numbers one message covers (the RTCP packet stays below ~1.2 kB).
    pub const MAX_STATUSES: i64 = 500;

    pub fn new() -> Self {
        TransportFeedbackRecorder::default()
    }

    /// Records a packet with transport-wide sequence number `seq` that arrived at `arrival`.
    pub fn on_packet(&mut self, seq: u16, arrival: Instant) {
        let unwrapped = match self.highest {
            None => i64::from(seq),
            Some(h) => h + i64::from(seq.wrapping_sub(h as u16) as i16),
        };
        if self.next_base.is_some_and(|b| unwrapped < b)
            || self.arrivals.insert(unwrapped, arrival).is_some()
        {
            self.late_or_duplicate += 1;
            return;
        }
        self.highest = Some(self.highest.map_or(unwrapped, |h| h.max(unwrapped)));
    }

    /// Whether packets wait to be reported.
    pub fn has_pending(&self) -> bool {
        !self.arrivals.is_empty()
    }

    /// Feedback on everything recorded since the previous call (usually one message).
    pub fn take_feedback(&mut self) -> Vec<TransportFeedback> {
        let arrivals = core::mem::take(&mut self.arrivals);
        let mut out = vec![];
        let mut cur: Option<FeedbackBuilder> = None;
        for (&seq, &at) in &arrivals {
            let fits = cur.as_mut().is_some_and(|b| b.try_add(seq, at));
            if !fits {
                if let Some(b) = cur.take() {
                    out.push(self.finish(b));
                }
                // A new message starts at the first sequence number not yet covered, unless the
                // gap to this one is too long: then it starts here.
                let base = self
                    .next_base
                    .filter(|&b| b <= seq && seq - b < Self::MAX_STATUSES)
                    .unwrap_or(seq);
                let mut b = FeedbackBuilder::new(base, at);
                let added = b.try_add(seq, at);
                debug_assert!(added);
                cur = Some(b);
            }
            self.next_base = Some(seq + 1);
        }
        if let Some(b) = cur {
            out.push(self.finish(b));
        }
        out
    }

    fn finish(&mut self, b: FeedbackBuilder) -> TransportFeedback {
        let fb = TransportFeedback {
            base_seq: b.base as u16,
            reference: ((b.ref_ticks / REF_TICKS) & u64::from(TransportFeedback::MAX_REFERENCE))
                as u32,
            fb_count: self.fb_count,
            deltas: b.deltas,
        };
        self.fb_count = self.fb_count.wrapping_add(1);
        fb
    }
}

/// Ticks of 250 µs in 64 ms.
const REF_TICKS: u64 = 256;

fn ticks(t: Instant) -> u64 {
    t.as_nanos() / TransportFeedback::TICK.as_nanos()
}

/// One message being filled.
struct FeedbackBuilder {
    base: i64,
    /// The reference time in ticks (a multiple of 256).
    ref_ticks: u64,
    /// The tick of the previous received packet.
    last_tick: u64,
    deltas: Vec<Option<i16>>,
}

impl FeedbackBuilder {
    fn new(base: i64, first_arrival: Instant) -> Self {
        let ref_ticks = ticks(first_arrival) / REF_TICKS * REF_TICKS;
        FeedbackBuilder {
            base,
            ref_ticks,
            last_tick: ref_ticks,
            deltas: vec![],
        }
    }

    /// Adds a received packet (sequence numbers ascending); false if it does not fit.
    fn try_add(&mut self, seq: i64, at: Instant) -> bool {
        let index = seq - self.base;
        if !(self.deltas.len() as i64..TransportFeedbackRecorder::MAX_STATUSES).contains(&index) {
            return false;
        }
        let tick = ticks(at);
        let Ok(delta) = i16::try_from(tick as i128 - self.last_tick as i128) else {
            return false;
        };
        self.deltas.resize(index as usize, None);
        self.deltas.push(Some(delta));
        self.last_tick = tick;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn standard_messages_round_trip() {
        let rr = ReceiverReport {
            highest_seq: 99,
            received: 95,
            cumulative_lost: 4,
            fraction_lost: 10,
            echo: None,
        };
        let fb = Feedback::encode(&rr);
        assert_eq!(fb.len(), 29);
        assert_eq!(fb.kind(), kind::RECEIVER_REPORT);
        assert_eq!(fb.decode::<ReceiverReport>(), Ok(rr.clone()));
        let echoed = ReceiverReport {
            echo: Some(RttEcho {
                sent: Instant::from_millis(7),
                held: crate::time::Duration::from_micros(300),
            }),
            ..rr
        };
        let fb = Feedback::encode(&echoed);
        assert_eq!(fb.len(), 45);
        assert_eq!(fb.decode::<ReceiverReport>(), Ok(echoed));
        let mut bad = fb.as_bytes().to_vec();
        bad[28] = 2;
        assert_eq!(
            ReceiverReport::parse(&bad),
            Err(WireError::Invalid("RTT echo flag"))
        );
        let remb = Remb::new(Bitrate::from_kbps(1234));
        let fb = Feedback::encode(&remb);
        assert_eq!(fb.len(), 11);
        assert_eq!(fb.decode::<Remb>(), Ok(remb));
        // A message of another kind is not this type.
        assert_eq!(
            fb.decode::<ReceiverReport>(),
            Err(WireError::UnknownKind(3))
        );
        assert_eq!(fb.decode::<NoFeedback>(), Err(WireError::UnknownKind(3)));
    }

    #[test]
    fn fixed_bytes() {
        let b = Feedback::encode(&Remb::new(Bitrate::from_bps(0x0102)));
        assert_eq!(b.as_bytes(), [3, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2]);
        // 2^18 + 1 bit/s needs a 19-bit mantissa.
        assert_eq!(
            Remb::parse(&[3, 0, 8, 0, 0, 0, 0, 0, 4, 0, 1]),
            Err(WireError::Invalid("REMB cannot carry this bitrate"))
        );
    }

    #[test]
    fn remb_rounds_down_to_18_bit_mantissa() {
        // Below 2^18 bit/s every rate is exact.
        let r = Remb::new(Bitrate::from_bps(262_143));
        assert_eq!(r.parts(), (0, 262_143));
        assert_eq!(r.bitrate().bps(), 262_143);
        // 1,234,567 bit/s needs exponent 3: mantissa 154,320, i.e. 1,234,560 bit/s.
        let r = Remb::new(Bitrate::from_bps(1_234_567));
        assert_eq!(r.parts(), (3, 154_320));
        assert_eq!(r.bitrate().bps(), 1_234_560);
        // Rounding is idempotent.
        assert_eq!(Remb::new(r.bitrate()), r);
        assert_eq!(Remb::from_parts(64, 0), None);
        assert_eq!(Remb::from_parts(0, 1 << 18), None);
        assert_eq!(Remb::new(Bitrate::from_bps(u64::MAX)).parts().0, 46);
    }

    #[test]
    fn framing_rejects_bad_input() {
        assert_eq!(
            Feedback::from_bytes(&[]),
            Err(WireError::Truncated { needed: 1 })
        );
        assert_eq!(
            Feedback::from_bytes(&[3, 0, 200, 1]),
            Err(WireError::Truncated { needed: 199 })
        );
        assert_eq!(
            Remb::parse(&[3, 0, 1, 1]),
            Err(WireError::Truncated { needed: 7 })
        );
        assert_eq!(
            Feedback::from_bytes(&[9, 0, 0, 0]),
            Err(WireError::Trailing(1))
        );
        assert_eq!(
            Feedback::from_bytes(&[9, 0, 0]).unwrap().decode::<Remb>(),
            Err(WireError::UnknownKind(9))
        );
    }

    #[test]
    fn transport_feedback_round_trips_and_fixed_bytes() {
        // Base 0x0102: received 1 ms after the 64-ms reference, one lost, one 100 ms later.
        let mut r = TransportFeedbackRecorder::new();
        r.on_packet(0x0102, Instant::from_millis(65));
        r.on_packet(0x0104, Instant::from_millis(165));
        let fbs = r.take_feedback();
        assert_eq!(fbs.len(), 1);
        let fb = &fbs[0];
        assert_eq!(
            *fb,
            TransportFeedback {
                base_seq: 0x0102,
                reference: 1,
                fb_count: 0,
                deltas: vec![Some(4), None, Some(400)],
            }
        );
        let bytes = Feedback::encode(fb);
        assert_eq!(
            bytes.as_bytes(),
            [
                4, 0, 15, // kind 4, 15 bytes
                1, 2, // base
                0, 0, 0, 1, // reference
                0, // count
                0, 3, // statuses
                1, 4, // small 4
                0, // not received
                2, 1, 144, // large 400
            ]
        );
        assert_eq!(bytes.decode::<TransportFeedback>().as_ref(), Ok(fb));
        let arrivals: Vec<_> = fb.arrivals_us().collect();
        assert_eq!(
            arrivals,
            vec![
                (0x0102, Some(65_000)),
                (0x0103, None),
                (0x0104, Some(165_000))
            ]
        );
        assert_eq!(fb.received(), 2);
        // A negative large delta (reordering) round-trips.
        let neg = TransportFeedback {
            base_seq: 65_535,
            reference: TransportFeedback::MAX_REFERENCE,
            fb_count: 255,
            deltas: vec![Some(10), Some(-3), None, Some(i16::MIN)],
        };
        assert_eq!(Feedback::encode(&neg).decode(), Ok(neg));
        // Reference beyond 24 bits, bad symbol, short count.
        assert_eq!(
            TransportFeedback::parse(&[4, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
            Err(WireError::Invalid("reference time beyond 24 bits"))
        );
        assert_eq!(
            TransportFeedback::parse(&[4, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 1, 7]),
            Err(WireError::Invalid("transport feedback status symbol"))
        );
        assert_eq!(
            TransportFeedback::parse(&[4, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0]),
            Err(WireError::Truncated { needed: 1 })
        );
    }

    #[test]
    fn recorder_rounds_on_the_grid_without_accumulating_and_continues() {
        let mut r = TransportFeedbackRecorder::new();
        let t0 = Instant::from_millis(1000) + Duration::from_micros(1234);
        // 0..20 every 1.1 ms: each arrival is rounded down to 250 µs on its own.
        for s in 0u16..20 {
            r.on_packet(s, t0 + Duration::from_micros(1100 * u64::from(s)));
        }
        let fb = &r.take_feedback()[0];
        assert_eq!(fb.reference, 15); // 1001.234 ms → 960 ms
        for (s, a) in fb.arrivals_us() {
            let at = t0 + Duration::from_micros(1100 * u64::from(s));
            assert_eq!(a, Some((at.as_nanos() / 250_000 * 250) as i64), "seq {s}");
        }
        // The next message starts where this one ended; late packets are not reported again.
        r.on_packet(22, t0 + Duration::from_millis(150));
        r.on_packet(3, t0 + Duration::from_millis(151));
        assert_eq!(r.late_or_duplicate, 1);
        let fb = &r.take_feedback()[0];
        assert_eq!((fb.base_seq, fb.fb_count), (20, 1));
        assert_eq!(fb.deltas.len(), 3);
        // Wrapping sequence numbers, and gaps beyond MAX_STATUSES or ±8.19 s split.
        let mut r = TransportFeedbackRecorder::new();
        let t0 = Instant::from_secs(5);
        r.on_packet(65_534, t0);
        r.on_packet(1, t0 + Duration::from_millis(2));
        r.on_packet(2000, t0 + Duration::from_millis(3));
        r.on_packet(2001, t0 + Duration::from_secs(10));
        let fbs = r.take_feedback();
        assert_eq!(fbs.len(), 3);
        assert_eq!((fbs[0].base_seq, fbs[0].deltas.len()), (65_534, 4));
        assert_eq!(fbs[1].base_seq, 2000);
        assert_eq!(fbs[2].base_seq, 2001);
    }

    proptest! {
        #[test]
        fn transport_feedback_round_trips(
            base in any::<u16>(), reference in 0u32..(1 << 24), count in any::<u8>(),
            deltas in proptest::collection::vec(proptest::option::of(any::<i16>()), 0..300),
        ) {
            let m = TransportFeedback { base_seq: base, reference, fb_count: count, deltas };
            prop_assert_eq!(Feedback::encode(&m).decode::<TransportFeedback>(), Ok(m));
        }

        #[test]
        fn recorder_never_reports_more_messages_than_packets(
            packets in proptest::collection::vec((any::<u16>(), 0u64..20_000_000_000), 1..200),
        ) {
            let mut r = TransportFeedbackRecorder::new();
            for &(seq, at) in &packets {
                r.on_packet(seq, Instant::from_nanos(at));
            }
            let fbs = r.take_feedback();
            prop_assert!(fbs.len() <= packets.len());
            for f in &fbs {
                prop_assert!(f.deltas.len() as i64 <= TransportFeedbackRecorder::MAX_STATUSES);
                prop_assert!(f.received() > 0);
                let bytes = Feedback::encode(f);
                prop_assert_eq!(bytes.decode::<TransportFeedback>(), Ok(f.clone()));
            }
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = TransportFeedback::parse(&bytes);
            let _ = Feedback::from_bytes(&bytes);
            let _ = Remb::parse(&bytes);
            let _ = ReceiverReport::parse(&bytes);
            let _ = NoFeedback::parse(&bytes);
        }

        #[test]
        fn remb_is_the_largest_representable_rate_not_above(bps in any::<u64>()) {
            let r = Remb::new(Bitrate::from_bps(bps));
            let got = r.bitrate().bps();
            prop_assert!(got <= bps);
            let (exp, _) = r.parts();
            // The next representable rate up is above `bps`.
            prop_assert!(got.saturating_add(1u64 << exp) > bps);
            prop_assert_eq!(Remb::parse(Feedback::encode(&r).as_bytes()), Ok(r));
        }
    }
}
