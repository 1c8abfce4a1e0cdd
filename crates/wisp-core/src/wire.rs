//! Feedback messages and their byte encoding.
//!
//! Every feedback message a receiver emits is a typed [`Feedback`] value with a byte encoding,
//! so the simulator can carry it over a modelled reverse path (its size is the encoded size plus
//! [`IP_UDP_OVERHEAD`](crate::packet::IP_UDP_OVERHEAD)) and `wisp-net` can carry it over UDP.
//!
//! Framing: `kind: u8`, `length: u16` (big-endian, bytes of payload), payload. All integers are
//! big-endian. [`Feedback::parse`] never panics: truncated input, unknown kinds and trailing bytes
//! are errors.
//!
//! Kind codes are allocated by family so schemes never collide: 1–9 generic (ACK, receiver
//! report, REMB), 10–19 Sprout, 20–29 GCC, 30–39 TCP baselines, 40–49 utility-maximisation
//! controllers, 50–59 Ping-Pair/Kwikr, 60–69 WBest and other probers.

use crate::time::Instant;
use crate::units::Bitrate;

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

/// A per-packet acknowledgement (for ACK-clocked senders).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ack {
    /// Sequence number of the packet this acknowledges.
    pub seq: u64,
    /// Every packet with a lower sequence number has arrived (cumulative ACK).
    pub cumulative: u64,
    /// The acknowledged packet's send time, echoed.
    pub send_time: Instant,
    /// When the receiver got it.
    pub recv_time: Instant,
    /// Its wire size in bytes.
    pub size: u32,
}

/// A periodic receiver report (RTCP RR-like).
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
}

/// A receiver's estimate of the rate the sender may use (REMB-like).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remb {
    pub bitrate: Bitrate,
}

/// A run of received packet sequence numbers, `start..end` (end exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SeqRange {
    pub start: u64,
    pub end: u64,
}

impl SeqRange {
    pub fn contains(&self, seq: u64) -> bool {
        self.start <= seq && seq < self.end
    }
}

/// A TCP-family per-packet acknowledgement with SACK-like ranges (kind 30).
///
/// One is sent for every data packet received. It names the packet that triggered it (`seq`,
/// with its send time echoed as TCP's TSecr, RFC 7323 §3) and when it arrived, and carries up to
/// [`TcpAck::MAX_RANGES`] ranges of received sequence numbers: the range containing `seq` first,
/// then the highest other ranges in descending order (RFC 2018 §4's ordering rule). Every packet,
/// a retransmission included, has a new sequence number (as QUIC, RFC 9000 §12.3), so the ranges
/// are unambiguous and a lost ACK's information reaches the sender in the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpAck {
    /// The packet this ACK was sent for.
    pub seq: u64,
    /// Its send time, echoed (the sender's clock).
    pub send_time: Instant,
    /// When it arrived (the receiver's clock).
    pub recv_time: Instant,
    len: u8,
    ranges: [SeqRange; TcpAck::MAX_RANGES],
}

impl TcpAck {
    /// At most this many ranges per ACK (three SACK blocks fit next to TCP timestamps).
    pub const MAX_RANGES: usize = 3;

    /// An ACK with the first [`TcpAck::MAX_RANGES`] of `ranges`.
    pub fn new(seq: u64, send_time: Instant, recv_time: Instant, ranges: &[SeqRange]) -> Self {
        let mut a = TcpAck {
            seq,
            send_time,
            recv_time,
            len: 0,
            ranges: [SeqRange::default(); TcpAck::MAX_RANGES],
        };
        for r in ranges.iter().take(TcpAck::MAX_RANGES) {
            a.ranges[a.len as usize] = *r;
            a.len += 1;
        }
        a
    }

    /// The acknowledged ranges, most important first.
    pub fn ranges(&self) -> &[SeqRange] {
        &self.ranges[..self.len as usize]
    }
}

/// Sprout's delivery forecast (Winstein et al., NSDI 2013, §3.4), sent by the receiver once
/// per tick.
///
/// Encoding: `received_or_lost: u64`, `n: u8`, then `n` × `u32` cumulative byte counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SproutForecast {
    /// Bytes of the flow the receiver has received or written off as lost (the throwaway
    /// rule), from the start of the flow.
    pub received_or_lost: u64,
    /// Bytes expected (at the forecast's cautious quantile) to be delivered through the end of
    /// each of the next ticks, cumulative; at most 255 ticks.
    pub cumulative_bytes: Vec<u32>,
}

/// Every feedback message a scheme can send from receiver to sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Feedback {
    Ack(Ack),
    ReceiverReport(ReceiverReport),
    Remb(Remb),
    TcpAck(TcpAck),
    SproutForecast(SproutForecast),
}

mod kind {
    pub const ACK: u8 = 1;
    pub const RECEIVER_REPORT: u8 = 2;
    pub const REMB: u8 = 3;
    pub const TCP_ACK: u8 = 30;
    pub const SPROUT_FORECAST: u8 = 10;
}

impl Feedback {
    /// Appends the encoding of `self` to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.put_u8(0);
        out.put_u16(0);
        let kind = match self {
            Feedback::Ack(a) => {
                out.put_u64(a.seq);
                out.put_u64(a.cumulative);
                out.put_instant(a.send_time);
                out.put_instant(a.recv_time);
                out.put_u32(a.size);
                kind::ACK
            }
            Feedback::ReceiverReport(r) => {
                out.put_u64(r.highest_seq);
                out.put_u64(r.received);
                out.put_u64(r.cumulative_lost);
                out.put_u8(r.fraction_lost);
                kind::RECEIVER_REPORT
            }
            Feedback::Remb(r) => {
                out.put_u64(r.bitrate.bps());
                kind::REMB
            }
            Feedback::TcpAck(a) => {
                out.put_u64(a.seq);
                out.put_instant(a.send_time);
                out.put_instant(a.recv_time);
                out.put_u8(a.len);
                for r in a.ranges() {
                    out.put_u64(r.start);
                    out.put_u64(r.end);
                }
                kind::TCP_ACK
            }
            Feedback::SproutForecast(f) => {
                debug_assert!(f.cumulative_bytes.len() <= u8::MAX as usize);
                let n = f.cumulative_bytes.len().min(u8::MAX as usize);
                out.put_u64(f.received_or_lost);
                out.put_u8(n as u8);
                for &c in &f.cumulative_bytes[..n] {
                    out.put_u32(c);
                }
                kind::SPROUT_FORECAST
            }
        };
        let len = out.len() - start - 3;
        debug_assert!(len <= u16::MAX as usize);
        out[start] = kind;
        out[start + 1..start + 3].copy_from_slice(&(len as u16).to_be_bytes());
    }

    /// The encoding as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(48);
        self.emit(&mut v);
        v
    }

    /// Encoded size in bytes (without IP/UDP overhead).
    pub fn encoded_len(&self) -> usize {
        3 + match self {
            Feedback::Ack(_) => 36,
            Feedback::ReceiverReport(_) => 25,
            Feedback::Remb(_) => 8,
            Feedback::TcpAck(a) => 25 + 16 * a.ranges().len(),
            Feedback::SproutForecast(f) => 9 + 4 * f.cumulative_bytes.len().min(u8::MAX as usize),
        }
    }

    /// Parses exactly one message from `buf`. Never panics.
    pub fn parse(buf: &[u8]) -> Result<Feedback, WireError> {
        let mut r = Reader::new(buf);
        let kind = r.u8()?;
        let len = r.u16()? as usize;
        let mut p = Reader::new(r.bytes(len)?);
        r.finish()?;
        let msg = match kind {
            kind::ACK => Feedback::Ack(Ack {
                seq: p.u64()?,
                cumulative: p.u64()?,
                send_time: p.instant()?,
                recv_time: p.instant()?,
                size: p.u32()?,
            }),
            kind::RECEIVER_REPORT => Feedback::ReceiverReport(ReceiverReport {
                highest_seq: p.u64()?,
                received: p.u64()?,
                cumulative_lost: p.u64()?,
                fraction_lost: p.u8()?,
            }),
            kind::REMB => Feedback::Remb(Remb {
                bitrate: Bitrate::from_bps(p.u64()?),
            }),
            kind::TCP_ACK => {
                let seq = p.u64()?;
                let send_time = p.instant()?;
                let recv_time = p.instant()?;
                let n = p.u8()? as usize;
                if n > TcpAck::MAX_RANGES {
                    return Err(WireError::Invalid("too many TCP ACK ranges"));
                }
                let mut ranges = [SeqRange::default(); TcpAck::MAX_RANGES];
                for r in ranges.iter_mut().take(n) {
                    *r = SeqRange {
                        start: p.u64()?,
                        end: p.u64()?,
                    };
                    if r.start >= r.end {
                        return Err(WireError::Invalid("empty TCP ACK range"));
                    }
                }
                Feedback::TcpAck(TcpAck::new(seq, send_time, recv_time, &ranges[..n]))
            }
            kind::SPROUT_FORECAST => {
                let received_or_lost = p.u64()?;
                let n = p.u8()? as usize;
                if p.remaining() < 4 * n {
                    return Err(WireError::Truncated {
                        needed: 4 * n - p.remaining(),
                    });
                }
                let cumulative_bytes = (0..n).map(|_| p.u32()).collect::<Result<_, _>>()?;
                Feedback::SproutForecast(SproutForecast {
                    received_or_lost,
                    cumulative_bytes,
                })
            }
            k => return Err(WireError::UnknownKind(k)),
        };
        p.finish()?;
        Ok(msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn samples() -> Vec<Feedback> {
        vec![
            Feedback::Ack(Ack {
                seq: 7,
                cumulative: 5,
                send_time: Instant::from_millis(100),
                recv_time: Instant::from_millis(140),
                size: 1500,
            }),
            Feedback::ReceiverReport(ReceiverReport {
                highest_seq: 99,
                received: 95,
                cumulative_lost: 4,
                fraction_lost: 10,
            }),
            Feedback::Remb(Remb {
                bitrate: Bitrate::from_kbps(1234),
            }),
            Feedback::TcpAck(TcpAck::new(
                41,
                Instant::from_millis(100),
                Instant::from_millis(125),
                &[
                    SeqRange { start: 40, end: 42 },
                    SeqRange { start: 30, end: 38 },
                    SeqRange { start: 0, end: 29 },
                ],
            )),
            Feedback::TcpAck(TcpAck::new(
                0,
                Instant::ZERO,
                Instant::ZERO,
                &[SeqRange { start: 0, end: 1 }],
            )),
            Feedback::SproutForecast(SproutForecast {
                received_or_lost: 123_456,
                cumulative_bytes: vec![1500, 4500, 9000, 12000, 15000, 19500, 22500, 27000],
            }),
            Feedback::SproutForecast(SproutForecast {
                received_or_lost: 0,
                cumulative_bytes: vec![],
            }),
        ]
    }

    #[test]
    fn emit_parse_round_trip() {
        for m in samples() {
            let b = m.to_bytes();
            assert_eq!(b.len(), m.encoded_len(), "{m:?}");
            assert_eq!(Feedback::parse(&b).unwrap(), m);
        }
    }

    #[test]
    fn fixed_bytes() {
        let b = Feedback::Remb(Remb {
            bitrate: Bitrate::from_bps(0x0102),
        })
        .to_bytes();
        assert_eq!(b, [3, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2]);
    }

    #[test]
    fn tcp_ack_fixed_bytes() {
        let b = Feedback::TcpAck(TcpAck::new(
            2,
            Instant::from_nanos(3),
            Instant::from_nanos(0x0405),
            &[SeqRange { start: 1, end: 3 }],
        ))
        .to_bytes();
        #[rustfmt::skip]
        let expected = [
            30, 0, 41,
            0, 0, 0, 0, 0, 0, 0, 2,
            0, 0, 0, 0, 0, 0, 0, 3,
            0, 0, 0, 0, 0, 0, 4, 5,
            1,
            0, 0, 0, 0, 0, 0, 0, 1,
            0, 0, 0, 0, 0, 0, 0, 3,
        ];
        assert_eq!(b, expected);
    }

    #[test]
    fn tcp_ack_keeps_at_most_three_ranges() {
        let r = |s| SeqRange {
            start: s,
            end: s + 1,
        };
        let a = TcpAck::new(9, Instant::ZERO, Instant::ZERO, &[r(9), r(7), r(5), r(3)]);
        assert_eq!(a.ranges(), &[r(9), r(7), r(5)]);
        assert!(r(9).contains(9) && !r(9).contains(10) && !r(9).contains(8));
    }

    #[test]
    fn tcp_ack_rejects_bad_ranges() {
        let good = Feedback::TcpAck(TcpAck::new(
            1,
            Instant::ZERO,
            Instant::ZERO,
            &[SeqRange { start: 1, end: 2 }],
        ))
        .to_bytes();
        // Four ranges declared.
        let mut b = good.clone();
        b[27] = 4;
        assert_eq!(
            Feedback::parse(&b),
            Err(WireError::Invalid("too many TCP ACK ranges"))
        );
        // An empty range (start == end).
        let mut b = good.clone();
        b[43] = 1;
        assert_eq!(
            Feedback::parse(&b),
            Err(WireError::Invalid("empty TCP ACK range"))
        );
    }

    #[test]
    fn sprout_forecast_fixed_bytes() {
        let b = Feedback::SproutForecast(SproutForecast {
            received_or_lost: 0x0102,
            cumulative_bytes: vec![0x0304, 0x05060708],
        })
        .to_bytes();
        assert_eq!(
            b,
            [
                10, 0, 17, // kind, length
                0, 0, 0, 0, 0, 0, 1, 2, // received_or_lost
                2, // ticks
                0, 0, 3, 4, 5, 6, 7, 8, // cumulative bytes
            ]
        );
        // A tick count that promises more than the payload holds.
        let mut bad = b.clone();
        bad[11] = 3;
        assert_eq!(
            Feedback::parse(&bad),
            Err(WireError::Truncated { needed: 4 })
        );
        // Fewer ticks than the payload holds.
        bad[11] = 1;
        assert_eq!(Feedback::parse(&bad), Err(WireError::Trailing(4)));
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            Feedback::parse(&[]),
            Err(WireError::Truncated { needed: 1 })
        );
        assert_eq!(Feedback::parse(&[9, 0, 0]), Err(WireError::UnknownKind(9)));
        assert_eq!(
            Feedback::parse(&[3, 0, 200, 1]),
            Err(WireError::Truncated { needed: 199 })
        );
        assert_eq!(
            Feedback::parse(&[3, 0, 1, 1]),
            Err(WireError::Truncated { needed: 7 })
        );
        let mut b = samples()[0].to_bytes();
        b.push(0);
        assert_eq!(Feedback::parse(&b), Err(WireError::Trailing(1)));
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Feedback::parse(&bytes);
        }

        #[test]
        fn truncation_is_an_error(which in 0usize..7, cut in 0usize..80) {
            let b = samples()[which].to_bytes();
            prop_assert!(Feedback::parse(&b[..cut.min(b.len() - 1)]).is_err());
        }

        #[test]
        fn tcp_ack_truncation_is_an_error(which in 3usize..5, cut in 0usize..80) {
            let b = samples()[which].to_bytes();
            prop_assert!(Feedback::parse(&b[..cut.min(b.len() - 1)]).is_err());
        }

        #[test]
        fn tcp_ack_round_trips(
            seq in any::<u64>(),
            t in any::<u64>(),
            u in any::<u64>(),
            ranges in proptest::collection::vec((0u64..1 << 40, 1u64..1000), 0..4),
        ) {
            let ranges: Vec<SeqRange> =
                ranges.iter().map(|&(s, l)| SeqRange { start: s, end: s + l }).collect();
            let m = Feedback::TcpAck(TcpAck::new(
                seq,
                Instant::from_nanos(t),
                Instant::from_nanos(u),
                &ranges,
            ));
            let b = m.to_bytes();
            prop_assert_eq!(b.len(), m.encoded_len());
            prop_assert_eq!(Feedback::parse(&b).unwrap(), m);
        }

        #[test]
        fn sprout_forecast_round_trips(
            received_or_lost in any::<u64>(),
            cumulative_bytes in proptest::collection::vec(any::<u32>(), 0..20),
        ) {
            let m = Feedback::SproutForecast(SproutForecast { received_or_lost, cumulative_bytes });
            let b = m.to_bytes();
            prop_assert_eq!(b.len(), m.encoded_len());
            prop_assert_eq!(Feedback::parse(&b).unwrap(), m);
        }
    }
}
