//! The application-limited region (ALR) detector: is the sender sending much less than the
//! estimate allows? (libwebrtc `modules/congestion_controller/goog_cc/alr_detector.cc`, with the
//! budget of `modules/pacing/interval_budget.cc`).
//!
//! A budget accrues at 65 % of the estimate (the bandwidth-usage ratio) and every byte sent
//! spends it; it holds at most ±500 ms of that rate. The region starts when more than 80 % of
//! the budget is unspent and ends when less than 50 % is.
//!
//! Deviations: every packet the sender sends counts, probes and padding included (libwebrtc
//! counts what its `OnSentPacket` reports, which is the same set).

use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};

/// The share of the estimate the budget accrues at (`bandwidth_usage_ratio`).
const USAGE_RATIO: f64 = 0.65;
/// The region starts above this unspent share (`start_budget_level_ratio`).
const START_RATIO: f64 = 0.80;
/// ... and stops below this one (`stop_budget_level_ratio`).
const STOP_RATIO: f64 = 0.50;
/// The budget's window (`IntervalBudget`'s 500 ms).
const WINDOW: Duration = Duration::from_millis(500);

/// libwebrtc's `IntervalBudget` with under-use allowed to build up: bytes that may still be
/// sent, within ± the window's worth of the target rate.
#[derive(Clone, Debug, Default)]
pub struct IntervalBudget {
    rate: Bitrate,
    remaining: f64,
}

impl IntervalBudget {
    fn max_bytes(&self) -> f64 {
        (self.rate * WINDOW).bytes() as f64
    }

    pub fn set_rate(&mut self, rate: Bitrate) {
        self.rate = rate;
        let max = self.max_bytes();
        self.remaining = self.remaining.clamp(-max, max);
    }

    pub fn increase(&mut self, elapsed: Duration) {
        let bytes = self.rate.bps() as f64 * elapsed.as_secs_f64() / 8.0;
        self.remaining = (self.remaining + bytes).min(self.max_bytes());
    }

    pub fn spend(&mut self, size: DataSize) {
        self.remaining = (self.remaining - size.bytes() as f64).max(-self.max_bytes());
    }

    /// Unspent bytes over the window's worth (in [−1, 1]).
    pub fn ratio(&self) -> f64 {
        let max = self.max_bytes();
        if max <= 0.0 {
            0.0
        } else {
            self.remaining / max
        }
    }
}

/// The detector.
#[derive(Clone, Debug, Default)]
pub struct AlrDetector {
    budget: IntervalBudget,
    last_send: Option<Instant>,
    start: Option<Instant>,
    ended: Option<Instant>,
}

impl AlrDetector {
    /// The estimate the budget accrues from.
    pub fn set_estimate(&mut self, estimate: Bitrate) {
        self.budget.set_rate(estimate.mul_f64(USAGE_RATIO));
    }

    /// A packet of `size` left at `now`.
    pub fn on_sent(&mut self, now: Instant, size: DataSize) {
        let Some(last) = self.last_send.replace(now) else {
            return;
        };
        self.budget.spend(size);
        self.budget.increase(now.saturating_duration_since(last));
        let ratio = self.budget.ratio();
        if ratio > START_RATIO && self.start.is_none() {
            self.start = Some(now);
        } else if ratio < STOP_RATIO && self.start.is_some() {
            self.start = None;
            self.ended = Some(now);
        }
    }

    /// When the current region started, if the sender is in one.
    pub fn start(&self) -> Option<Instant> {
        self.start
    }

    /// When the last region ended.
    pub fn ended(&self) -> Option<Instant> {
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1000-byte packets every `gap_ms` for `ms`, from `from_ms`.
    fn send(d: &mut AlrDetector, from_ms: u64, ms: u64, gap_ms: u64) {
        for k in 0..ms / gap_ms {
            d.on_sent(
                Instant::from_millis(from_ms + k * gap_ms),
                DataSize::from_bytes(1000),
            );
        }
    }

    #[test]
    fn starts_when_sending_well_below_the_estimate_and_stops_when_not() {
        let mut d = AlrDetector::default();
        d.set_estimate(Bitrate::from_kbps(1000)); // budget at 650 kbit/s
        // 800 kbit/s: above the budget's rate, no region.
        send(&mut d, 0, 2000, 10);
        assert!(d.start().is_none());
        // 200 kbit/s: the budget fills, a region starts.
        send(&mut d, 2000, 2000, 40);
        let started = d.start().expect("in ALR");
        assert!(started > Instant::from_millis(2000));
        // 1 Mbit/s again: the region ends.
        send(&mut d, 4000, 2000, 8);
        assert!(d.start().is_none());
        assert!(d.ended().is_some_and(|e| e > started));
    }
}
