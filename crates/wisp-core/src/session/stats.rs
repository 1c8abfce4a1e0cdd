//! The receiving side's statistics of one flow (RFC 3550 §6.4.1, Appendix A.3 and A.8): what
//! arrived, duplicates, reordering, loss and interarrival jitter, and the report blocks that
//! carry them back to the sender.

use super::{CLOCK_RATE_HZ, ReportBlock, to_q16};
use crate::packet::DataHeader;
use crate::time::Instant;
use std::collections::HashSet;

/// One delivered packet as the receiver saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub seq: u64,
    pub sent: Instant,
    pub arrived: Instant,
    pub bytes: u64,
}

/// The receiving side's per-flow statistics.
#[derive(Debug, Default)]
pub struct ReceptionStats {
    deliveries: Vec<Delivery>,
    seen: HashSet<u64>,
    base_seq: Option<u64>,
    highest_seq: u64,
    duplicates: u64,
    reordered: u64,
    /// Jitter in ns (A.8), and the previous transit time.
    jitter_ns: f64,
    last_transit: Option<i128>,
    expected_prior: u64,
    received_prior: u64,
}

impl ReceptionStats {
    /// A packet arrived at `now`; returns whether it is new (not a duplicate).
    pub fn on_packet(&mut self, h: &DataHeader, now: Instant) -> bool {
        if !self.seen.insert(h.seq) {
            self.duplicates += 1;
            return false;
        }
        match self.base_seq {
            None => {
                self.base_seq = Some(h.seq);
                self.highest_seq = h.seq;
            }
            Some(b) => {
                if h.seq < b {
                    self.base_seq = Some(h.seq);
                }
                if h.seq < self.highest_seq {
                    self.reordered += 1;
                } else {
                    self.highest_seq = h.seq;
                }
            }
        }
        let transit = i128::from(now.as_nanos()) - i128::from(h.send_time.as_nanos());
        if let Some(prev) = self.last_transit {
            let d = (transit - prev).unsigned_abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit = Some(transit);
        self.deliveries.push(Delivery {
            seq: h.seq,
            sent: h.send_time,
            arrived: now,
            bytes: h.size.bytes(),
        });
        true
    }

    /// Every packet delivered once, in arrival order.
    pub fn deliveries(&self) -> &[Delivery] {
        &self.deliveries
    }

    /// Packets expected: from the lowest sequence number to the highest (A.3).
    pub fn expected(&self) -> u64 {
        self.base_seq
            .map_or(0, |b| self.highest_seq.saturating_sub(b).saturating_add(1))
    }

    /// Packets expected and never received.
    pub fn lost(&self) -> u64 {
        self.expected().saturating_sub(self.seen.len() as u64)
    }

    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Packets that arrived after one with a higher sequence number.
    pub fn reordered(&self) -> u64 {
        self.reordered
    }

    /// The interarrival jitter (A.8), ns.
    pub fn jitter_ns(&self) -> f64 {
        self.jitter_ns
    }

    /// The report block about `media` at `now` (§6.4.1), with the last SR received (its middle
    /// 32 NTP bits and when it arrived); starts the next reporting interval.
    pub fn block(
        &mut self,
        media: u32,
        last_sr: Option<(u32, Instant)>,
        now: Instant,
    ) -> ReportBlock {
        let expected = self.expected();
        let received = self.seen.len() as u64;
        let exp_int = expected.saturating_sub(self.expected_prior);
        let rec_int = received.saturating_sub(self.received_prior);
        self.expected_prior = expected;
        self.received_prior = received;
        let lost_int = exp_int.saturating_sub(rec_int);
        let fraction = (lost_int << 8).checked_div(exp_int).unwrap_or(0).min(255) as u8;
        let (lsr, dlsr) = last_sr.map_or((0, 0), |(lsr, at)| (lsr, to_q16(now - at)));
        ReportBlock {
            ssrc: media,
            fraction_lost: fraction,
            total_lost: self.lost().min(0x7f_ffff) as i32,
            highest_seq: self.highest_seq as u32,
            jitter: (self.jitter_ns * CLOCK_RATE_HZ as f64 / 1e9) as u32,
            last_sr: lsr,
            delay_since_last_sr: dlsr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;
    use crate::units::DataSize;

    fn packet(seq: u64, sent_ms: u64) -> DataHeader {
        DataHeader {
            seq,
            size: DataSize::from_bytes(1000),
            send_time: Instant::from_millis(sent_ms),
            ..Default::default()
        }
    }

    #[test]
    fn loss_reordering_duplicates_and_the_report_block() {
        let mut s = ReceptionStats::default();
        // 0, 1, 3, 2, 2 again, 5: seq 4 is lost, 2 came late, one duplicate.
        for (seq, arrived) in [(0, 20), (1, 30), (3, 50), (2, 52), (2, 53), (5, 70)] {
            s.on_packet(&packet(seq, seq * 10), Instant::from_millis(arrived));
        }
        assert_eq!((s.expected(), s.lost()), (6, 1));
        assert_eq!((s.duplicates(), s.reordered()), (1, 1));
        assert_eq!(s.deliveries().len(), 5);
        let sr = Some((7, Instant::from_millis(60)));
        let b = s.block(42, sr, Instant::from_millis(80));
        assert_eq!((b.ssrc, b.highest_seq, b.total_lost), (42, 5, 1));
        // One of six lost in the interval: 256 / 6.
        assert_eq!(b.fraction_lost, 42);
        assert_eq!(b.last_sr, 7);
        assert_eq!(b.delay_since_last_sr, to_q16(Duration::from_millis(20)));
        // Nothing new since: the next interval lost nothing.
        assert_eq!(s.block(42, None, Instant::from_millis(90)).fraction_lost, 0);
    }
}
