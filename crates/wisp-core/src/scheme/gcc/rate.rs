//! A windowed rate counter: bytes received in the last *W* milliseconds, as a bit rate.
//!
//! Same semantics as libwebrtc's `RateStatistics` (and aiortc's `RateCounter`, whose unit test
//! `RateCounterTest.test_add` is ported below): samples fall in 1-ms buckets; the window starts
//! at the first sample and slides so it never covers more than *W* ms; the rate is
//! `8000 · bytes / active_ms` rounded, where `active_ms = now − oldest + 1`, and is unknown
//! while `active_ms ≤ 1` or there is no sample.

use crate::time::Instant;
use crate::units::{Bitrate, DataSize};

/// Bytes received in 1-ms buckets over a sliding window.
#[derive(Clone, Debug, PartialEq)]
pub struct RateCounter {
    /// (packets, bytes) per millisecond, a ring of `window_ms` buckets.
    buckets: Vec<(u32, u64)>,
    /// Bucket index of `origin_ms`.
    origin_index: usize,
    origin_ms: Option<u64>,
    total_packets: u64,
    total_bytes: u64,
}

impl RateCounter {
    /// A counter over the last `window_ms` milliseconds (at least 1).
    pub fn new(window_ms: u64) -> Self {
        RateCounter {
            buckets: vec![(0, 0); window_ms.max(1) as usize],
            origin_index: 0,
            origin_ms: None,
            total_packets: 0,
            total_bytes: 0,
        }
    }

    fn window(&self) -> u64 {
        self.buckets.len() as u64
    }

    /// Forgets every sample.
    pub fn reset(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = (0, 0));
        self.origin_index = 0;
        self.origin_ms = None;
        self.total_packets = 0;
        self.total_bytes = 0;
    }

    /// Adds `size` received at `now`. Samples must come in non-decreasing time.
    pub fn add(&mut self, size: DataSize, now: Instant) {
        let now_ms = now.as_millis();
        let origin = match self.origin_ms {
            None => {
                self.origin_ms = Some(now_ms);
                now_ms
            }
            Some(_) => self.erase_old(now_ms),
        };
        let w = self.window();
        let idx = (self.origin_index as u64 + now_ms.saturating_sub(origin)) % w;
        let b = &mut self.buckets[idx as usize];
        b.0 += 1;
        b.1 += size.bytes();
        self.total_packets += 1;
        self.total_bytes += size.bytes();
    }

    /// Whether [`RateCounter::rate`] would return a rate at `now` (without computing it).
    pub fn has_rate(&mut self, now: Instant) -> bool {
        self.active_ms(now).is_some()
    }

    /// The active window length at `now`, if the rate is known.
    fn active_ms(&mut self, now: Instant) -> Option<u64> {
        self.origin_ms?;
        let now_ms = now.as_millis();
        let origin = self.erase_old(now_ms);
        let active = (now_ms + 1).saturating_sub(origin);
        (self.total_packets > 0 && active > 1).then_some(active)
    }

    /// The rate over the window ending at `now`, if known.
    pub fn rate(&mut self, now: Instant) -> Option<Bitrate> {
        let active = self.active_ms(now)?;
        let bps = (8000.0 * self.total_bytes as f64 / active as f64).round_ties_even();
        Some(Bitrate::from_bps(bps as u64))
    }

    /// Drops buckets older than `now_ms − W + 1`; returns the new origin.
    fn erase_old(&mut self, now_ms: u64) -> u64 {
        let w = self.window();
        let mut origin = self.origin_ms.expect("erase_old needs an origin");
        let new_origin = (now_ms + 1).saturating_sub(w);
        if new_origin >= origin + w {
            // Everything is older than the window.
            self.buckets.iter_mut().for_each(|b| *b = (0, 0));
            self.total_packets = 0;
            self.total_bytes = 0;
            self.origin_index = ((self.origin_index as u64 + new_origin - origin) % w) as usize;
            origin = new_origin;
        }
        while origin < new_origin {
            let b = &mut self.buckets[self.origin_index];
            self.total_packets -= u64::from(b.0);
            self.total_bytes -= b.1;
            *b = (0, 0);
            self.origin_index = (self.origin_index + 1) % w as usize;
            origin += 1;
        }
        self.origin_ms = Some(origin);
        origin
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }
    fn b(n: u64) -> DataSize {
        DataSize::from_bytes(n)
    }

    /// aiortc `tests/test_rate.py` `RateCounterTest.test_add` (a port of libwebrtc's
    /// `RateStatistics` test): the same samples give the same rates.
    #[test]
    fn ported_rate_counter_test_add() {
        let mut c = RateCounter::new(10);
        assert_eq!(c.rate(at(0)), None);
        c.add(b(500), at(123));
        assert_eq!(c.rate(at(123)), None);
        c.add(b(501), at(123));
        assert_eq!(c.rate(at(123)), None);
        c.add(b(502), at(125));
        assert_eq!(c.rate(at(125)), Some(Bitrate::from_bps(4_008_000)));
        c.add(b(503), at(128));
        assert_eq!(c.rate(at(128)), Some(Bitrate::from_bps(2_674_667)));
        c.add(b(504), at(132));
        assert_eq!(c.rate(at(132)), Some(Bitrate::from_bps(2_008_000)));
        c.add(b(505), at(134));
        assert_eq!(c.rate(at(134)), Some(Bitrate::from_bps(1_611_200)));
        c.add(b(506), at(135));
        assert_eq!(c.rate(at(135)), Some(Bitrate::from_bps(1_614_400)));
    }

    #[test]
    fn a_long_gap_empties_the_window() {
        let mut c = RateCounter::new(500);
        for i in 0..100 {
            c.add(b(1250), at(10 * i));
        }
        // 99 packets in the last 500 ms window of 990 ms of samples... at 990: 50 packets.
        assert_eq!(c.rate(at(990)), Some(Bitrate::from_bps(1_000_000)));
        assert_eq!(c.rate(at(100_000)), None);
        c.add(b(1000), at(100_000));
        c.add(b(1000), at(100_009));
        // The window still spans 500 ms back from the newest sample (active 500 ms).
        assert_eq!(c.rate(at(100_009)), Some(Bitrate::from_bps(32_000)));
        c.reset();
        c.add(b(1000), at(100_000));
        c.add(b(1000), at(100_009));
        assert_eq!(c.rate(at(100_009)), Some(Bitrate::from_bps(1_600_000)));
    }
}
