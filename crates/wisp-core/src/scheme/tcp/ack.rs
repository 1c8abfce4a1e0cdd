//! The TCP family's feedback: a per-packet ACK with SACK-like ranges (kind 30), shared by the
//! TCP baselines and the media rate controllers of Mehrotra et al. (which use the same receiver).

use crate::time::Instant;
use crate::wire::{Message, WireError, Writer, frame, unframe};

/// The kind byte of a [`TcpAck`].
pub const KIND: u8 = 30;

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

impl Message for TcpAck {
    /// `seq: u64`, `send_time: u64 ns`, `recv_time: u64 ns`, `n: u8`, `n × (start: u64, end: u64)`.
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, KIND, |out| {
            out.put_u64(self.seq);
            out.put_instant(self.send_time);
            out.put_instant(self.recv_time);
            out.put_u8(self.len);
            for r in self.ranges() {
                out.put_u64(r.start);
                out.put_u64(r.end);
            }
        });
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut p) = unframe(buf)?;
        if kind != KIND {
            return Err(WireError::UnknownKind(kind));
        }
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
        p.finish()?;
        Ok(TcpAck::new(seq, send_time, recv_time, &ranges[..n]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Feedback;
    use proptest::prelude::*;

    fn samples() -> Vec<TcpAck> {
        vec![
            TcpAck::new(
                41,
                Instant::from_millis(100),
                Instant::from_millis(125),
                &[
                    SeqRange { start: 40, end: 42 },
                    SeqRange { start: 30, end: 38 },
                    SeqRange { start: 0, end: 29 },
                ],
            ),
            TcpAck::new(
                0,
                Instant::ZERO,
                Instant::ZERO,
                &[SeqRange { start: 0, end: 1 }],
            ),
        ]
    }

    #[test]
    fn round_trip() {
        for m in samples() {
            let fb = Feedback::encode(&m);
            assert_eq!(fb.len(), 28 + 16 * m.ranges().len());
            assert_eq!(fb.decode::<TcpAck>(), Ok(m));
        }
    }

    #[test]
    fn tcp_ack_fixed_bytes() {
        let b = Feedback::encode(&TcpAck::new(
            2,
            Instant::from_nanos(3),
            Instant::from_nanos(0x0405),
            &[SeqRange { start: 1, end: 3 }],
        ));
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
        assert_eq!(b.as_bytes(), expected);
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
        let good = Feedback::encode(&TcpAck::new(
            1,
            Instant::ZERO,
            Instant::ZERO,
            &[SeqRange { start: 1, end: 2 }],
        ))
        .as_bytes()
        .to_vec();
        // Four ranges declared.
        let mut b = good.clone();
        b[27] = 4;
        assert_eq!(
            TcpAck::parse(&b),
            Err(WireError::Invalid("too many TCP ACK ranges"))
        );
        // An empty range (start == end).
        let mut b = good.clone();
        b[43] = 1;
        assert_eq!(
            TcpAck::parse(&b),
            Err(WireError::Invalid("empty TCP ACK range"))
        );
        // Another kind.
        let mut b = good;
        b[0] = 31;
        assert_eq!(TcpAck::parse(&b), Err(WireError::UnknownKind(31)));
    }

    proptest! {
        #[test]
        fn truncation_is_an_error(which in 0usize..2, cut in 0usize..80) {
            let b = Feedback::encode(&samples()[which]).as_bytes().to_vec();
            prop_assert!(TcpAck::parse(&b[..cut.min(b.len() - 1)]).is_err());
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = TcpAck::parse(&bytes);
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
            let m = TcpAck::new(seq, Instant::from_nanos(t), Instant::from_nanos(u), &ranges);
            prop_assert_eq!(Feedback::encode(&m).decode::<TcpAck>(), Ok(m));
        }
    }
}
