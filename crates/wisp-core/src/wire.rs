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
//! Kinds 1–9 are the **standard** messages defined here ([`ReceiverReport`], [`Remb`]), which a
//! scheme's message type may include; `wisp-net` sends those as their standard RTCP packets
//! (RTCP RR, REMB) and everything else in an RTCP APP block. Scheme kinds are allocated by family
//! (a receiver only ever talks to the sender of its own scheme, so the ranges only keep the
//! logs readable): 10–19 Sprout, 20–29 GCC, 30–39 TCP baselines, 40–49 utility-maximisation
//! controllers, 50–59 Ping-Pair/Kwikr, 60–69 WBest and other probers, 200–254 for schemes outside
//! the tree (tests, Python).

use crate::time::Instant;
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

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
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
