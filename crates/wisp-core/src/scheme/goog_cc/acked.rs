//! The acknowledged bitrate: what the feedback says the path delivered, as libwebrtc's
//! `modules/congestion_controller/goog_cc/acknowledged_bitrate_estimator.cc` and
//! `bitrate_estimator.cc` estimate it.
//!
//! Acknowledged bytes are summed over windows of receive time (500 ms for the first sample,
//! 150 ms after); each window's rate is a sample that a one-state Bayesian filter merges with the
//! estimate. A sample's variance grows with its distance from the estimate,
//!
//! ```text
//! σ_s = 10 · |x̂ − s| / x̂          (kbit/s; 10 = the uncertainty scale)
//! σ̂²  ← σ̂² + 5                    (the estimate's variance, predicted)
//! x̂   ← (σ_s² · x̂ + σ̂² · s) / (σ_s² + σ̂²),   σ̂² ← σ_s² · σ̂² / (σ_s² + σ̂²)
//! ```
//!
//! so a sample near the estimate moves it a lot and an outlier hardly at all; the variance
//! starts at 50. When an application-limited region ends, the first packet sent after it adds
//! 200 to the variance (`ExpectFastRateChange`), so the estimate follows the new rate quickly.
//!
//! Deviations: libwebrtc's field-trial knobs (a small-sample threshold, a symmetry cap, a floor,
//! a separate ALR scale, all defaulting to no effect) are left out; times are whole ms as there.

use crate::time::Instant;
use crate::units::{Bitrate, DataSize};

/// The first window (libwebrtc `kInitialRateWindowMs`).
const INITIAL_WINDOW_MS: i64 = 500;
/// Later windows (`kRateWindowMs`).
const WINDOW_MS: i64 = 150;
/// The uncertainty scale (`scale`).
const UNCERTAINTY_SCALE: f64 = 10.0;
/// The process noise added to the variance per sample.
const PROCESS_NOISE: f64 = 5.0;
/// The variance before the first sample.
const INITIAL_VARIANCE: f64 = 50.0;
/// What `ExpectFastRateChange` adds to the variance.
const FAST_CHANGE_VARIANCE: f64 = 200.0;

/// libwebrtc's `BitrateEstimator`.
#[derive(Clone, Debug)]
pub struct BitrateEstimator {
    sum_bytes: u64,
    window_ms: i64,
    prev_ms: Option<i64>,
    estimate_kbps: Option<f64>,
    variance: f64,
}

impl Default for BitrateEstimator {
    fn default() -> Self {
        BitrateEstimator {
            sum_bytes: 0,
            window_ms: 0,
            prev_ms: None,
            estimate_kbps: None,
            variance: INITIAL_VARIANCE,
        }
    }
}

impl BitrateEstimator {
    /// `size` acknowledged bytes that arrived `at`.
    pub fn update(&mut self, at: Instant, size: DataSize) {
        let window = if self.estimate_kbps.is_none() {
            INITIAL_WINDOW_MS
        } else {
            WINDOW_MS
        };
        let Some(sample) = self.update_window(at.as_nanos() as i64 / 1_000_000, size, window)
        else {
            return;
        };
        let Some(estimate) = self.estimate_kbps else {
            self.estimate_kbps = Some(sample);
            return;
        };
        let sigma = UNCERTAINTY_SCALE * (estimate - sample).abs() / estimate.max(1e-9);
        let sample_var = sigma * sigma;
        let predicted_var = self.variance + PROCESS_NOISE;
        let total = sample_var + predicted_var;
        self.estimate_kbps = Some((sample_var * estimate + predicted_var * sample) / total);
        self.variance = sample_var * predicted_var / total;
    }

    /// Adds `size` to the current window; a rate sample (kbit/s) when the window closes.
    fn update_window(&mut self, now_ms: i64, size: DataSize, window: i64) -> Option<f64> {
        if self.prev_ms.is_some_and(|p| now_ms < p) {
            // Time went backwards: start over.
            self.prev_ms = None;
            self.sum_bytes = 0;
            self.window_ms = 0;
        }
        if let Some(prev) = self.prev_ms {
            self.window_ms += now_ms - prev;
            if now_ms - prev > window {
                // A gap longer than a window: what was summed is too old.
                self.sum_bytes = 0;
                self.window_ms %= window;
            }
        }
        self.prev_ms = Some(now_ms);
        let mut sample = None;
        if self.window_ms >= window {
            sample = Some(8.0 * self.sum_bytes as f64 / window as f64);
            self.window_ms -= window;
            self.sum_bytes = 0;
        }
        self.sum_bytes += size.bytes();
        sample
    }

    pub fn bitrate(&self) -> Option<Bitrate> {
        self.estimate_kbps.map(Bitrate::from_kbps_f64)
    }

    /// The rate of the window being summed, if it has lasted any time (`PeekRate`).
    pub fn peek(&self) -> Option<Bitrate> {
        (self.window_ms > 0)
            .then(|| Bitrate::from_kbps_f64(8.0 * self.sum_bytes as f64 / self.window_ms as f64))
    }

    /// The rate is about to change fast (an application-limited region ended).
    pub fn expect_fast_rate_change(&mut self) {
        self.variance += FAST_CHANGE_VARIANCE;
    }
}

/// libwebrtc's `AcknowledgedBitrateEstimator`: the [`BitrateEstimator`] fed with the packets a
/// feedback acknowledges, in arrival order.
#[derive(Clone, Debug, Default)]
pub struct AckedBitrate {
    estimator: BitrateEstimator,
    alr_ended: Option<Instant>,
}

impl AckedBitrate {
    /// An application-limited region ended at `at` (send time).
    pub fn set_alr_ended(&mut self, at: Instant) {
        self.alr_ended = Some(at);
    }

    /// A packet sent at `send` of `size` arrived at `arrival` (call in arrival order).
    pub fn on_packet(&mut self, send: Instant, arrival: Instant, size: DataSize) {
        if self.alr_ended.is_some_and(|t| send > t) {
            self.estimator.expect_fast_rate_change();
            self.alr_ended = None;
        }
        self.estimator.update(arrival, size);
    }

    pub fn bitrate(&self) -> Option<Bitrate> {
        self.estimator.bitrate()
    }

    pub fn peek(&self) -> Option<Bitrate> {
        self.estimator.peek()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1200-byte packets every `gap_us` from `from_ms` for `ms`.
    fn feed(e: &mut BitrateEstimator, from_ms: u64, ms: u64, gap_us: u64) {
        let mut t = from_ms * 1000;
        while t < (from_ms + ms) * 1000 {
            e.update(Instant::from_micros(t), DataSize::from_bytes(1200));
            t += gap_us;
        }
    }

    #[test]
    fn first_sample_after_500_ms_then_150_ms_windows() {
        let mut e = BitrateEstimator::default();
        // 1200 B every 9.6 ms: 1 Mbit/s.
        feed(&mut e, 0, 499, 9600);
        assert_eq!(e.bitrate(), None);
        feed(&mut e, 499, 20, 9600);
        let first = e.bitrate().unwrap().kbps_f64();
        assert!((first - 1000.0).abs() < 40.0, "{first}");
        feed(&mut e, 519, 2000, 9600);
        let steady = e.bitrate().unwrap().kbps_f64();
        assert!((steady - 1000.0).abs() < 60.0, "{steady}");
    }

    #[test]
    fn an_outlier_moves_the_estimate_little_a_near_sample_a_lot() {
        let mut e = BitrateEstimator::default();
        feed(&mut e, 0, 3000, 9600); // 1 Mbit/s
        let before = e.bitrate().unwrap().kbps_f64();
        // One window at 2 Mbit/s.
        feed(&mut e, 3000, 150, 4800);
        feed(&mut e, 3150, 1, 4800);
        let after = e.bitrate().unwrap().kbps_f64();
        // A doubled rate moves the estimate by about a tenth of the jump.
        assert!(
            after > before && after < before * 1.15,
            "{before} → {after}"
        );
        // After a fast-change hint the same jump is followed much further.
        let mut f = BitrateEstimator::default();
        feed(&mut f, 0, 3000, 9600);
        f.expect_fast_rate_change();
        feed(&mut f, 3000, 151, 4800);
        let fast = f.bitrate().unwrap().kbps_f64();
        assert!(fast - before > 2.0 * (after - before), "{after} vs {fast}");
    }
}
