//! The receiver every TCP scheme shares: one [`TcpAck`] per data packet.

use super::ack::{SeqRange, TcpAck};
use crate::controller::Receiver;
use crate::packet::DataHeader;
use crate::time::Instant;
use std::collections::VecDeque;

/// Ranges of received sequence numbers the receiver remembers; older ones are forgotten (the
/// sender has long resolved those packets).
const MAX_TRACKED_RANGES: usize = 32;

/// Acknowledges every packet with the ranges received so far (RFC 2018-style SACK blocks).
#[derive(Clone, Debug, Default)]
pub struct TcpReceiver {
    /// Ascending, disjoint, non-adjacent.
    ranges: Vec<SeqRange>,
    pending: VecDeque<TcpAck>,
}

impl TcpReceiver {
    pub fn new() -> Self {
        TcpReceiver::default()
    }

    /// Adds `seq`; returns the index of the range that now holds it.
    fn insert(&mut self, seq: u64) -> usize {
        // The first range that ends at or after `seq` (it may hold it or touch it).
        let i = self.ranges.partition_point(|r| r.end < seq);
        if let Some(r) = self.ranges.get_mut(i) {
            if r.contains(seq) {
                return i;
            }
            if r.end == seq {
                r.end = seq + 1;
                if self.ranges.get(i + 1).is_some_and(|n| n.start == seq + 1) {
                    let next = self.ranges.remove(i + 1);
                    self.ranges[i].end = next.end;
                }
                return i;
            }
            if r.start == seq + 1 {
                r.start = seq;
                return i;
            }
        }
        self.ranges.insert(
            i,
            SeqRange {
                start: seq,
                end: seq + 1,
            },
        );
        i
    }
}

impl Receiver for TcpReceiver {
    type Feedback = TcpAck;
    type Fields = ();

    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, _fields: &()) {
        let i = self.insert(packet.seq);
        // RFC 2018 §4: the block holding the segment that triggered the ACK first, then the
        // others (highest first).
        let mut blocks = [SeqRange::default(); TcpAck::MAX_RANGES];
        blocks[0] = self.ranges[i];
        let mut n = 1;
        for (j, r) in self.ranges.iter().enumerate().rev() {
            if n == TcpAck::MAX_RANGES {
                break;
            }
            if j != i {
                blocks[n] = *r;
                n += 1;
            }
        }
        self.pending
            .push_back(TcpAck::new(packet.seq, packet.send_time, now, &blocks[..n]));
        if self.ranges.len() > MAX_TRACKED_RANGES {
            self.ranges.remove(0);
        }
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<TcpAck> {
        self.pending.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receive(r: &mut TcpReceiver, seq: u64) -> TcpAck {
        let h = DataHeader {
            seq,
            send_time: Instant::from_millis(seq),
            ..DataHeader::default()
        };
        r.on_packet_received(Instant::from_millis(100 + seq), &h, &());
        match r.poll_feedback(Instant::ZERO) {
            Some(a) => {
                assert!(
                    r.poll_feedback(Instant::ZERO).is_none(),
                    "one ACK per packet"
                );
                a
            }
            other => panic!("expected a TCP ACK, got {other:?}"),
        }
    }

    fn range(start: u64, end: u64) -> SeqRange {
        SeqRange { start, end }
    }

    #[test]
    fn acknowledges_every_packet_with_its_range_first() {
        let mut r = TcpReceiver::new();
        let a = receive(&mut r, 0);
        assert_eq!(a.ranges(), &[range(0, 1)]);
        assert_eq!(
            (a.seq, a.send_time, a.recv_time),
            (0, Instant::ZERO, Instant::from_millis(100))
        );
        receive(&mut r, 1);
        // 2 is lost.
        let a = receive(&mut r, 3);
        assert_eq!(a.ranges(), &[range(3, 4), range(0, 2)]);
        receive(&mut r, 4);
        // 5, 6 lost.
        let a = receive(&mut r, 7);
        assert_eq!(a.ranges(), &[range(7, 8), range(3, 5), range(0, 2)]);
        // 9 lost; only three blocks fit.
        let a = receive(&mut r, 10);
        assert_eq!(a.ranges(), &[range(10, 11), range(7, 8), range(3, 5)]);
        // A late packet fills 2: its (merged) range comes first.
        let a = receive(&mut r, 2);
        assert_eq!(a.ranges(), &[range(0, 5), range(10, 11), range(7, 8)]);
        // Filling 8..9 merges two ranges.
        receive(&mut r, 8);
        let a = receive(&mut r, 9);
        assert_eq!(a.ranges(), &[range(7, 11), range(0, 5)]);
        // A duplicate is acknowledged again.
        let a = receive(&mut r, 9);
        assert_eq!(a.ranges(), &[range(7, 11), range(0, 5)]);
        // Extending a range downwards, then closing the last hole.
        let a = receive(&mut r, 6);
        assert_eq!(a.ranges(), &[range(6, 11), range(0, 5)]);
        let a = receive(&mut r, 5);
        assert_eq!(a.ranges(), &[range(0, 11)]);
    }

    #[test]
    fn remembers_a_bounded_number_of_ranges() {
        let mut r = TcpReceiver::new();
        for k in 0..100 {
            receive(&mut r, 2 * k);
        }
        assert_eq!(r.ranges.len(), MAX_TRACKED_RANGES);
        assert_eq!(r.ranges.last(), Some(&range(198, 199)));
        assert!(r.ranges.windows(2).all(|w| w[0].end < w[1].start));
    }
}
