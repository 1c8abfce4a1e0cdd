//! libwebrtc's trendline estimator: the delay-based estimator that replaced the Kalman filter in
//! libwebrtc's send-side GCC (`goog_cc/trendline_estimator.cc`).
//!
//! For each group delta it accumulates the delay variation, smooths it exponentially, keeps the
//! last `window` points (arrival time since the first group, smoothed accumulated delay) and
//! fits a least-squares line:
//!
//! ```text
//! a(i) = a(i−1) + d_m(i)                          accumulated delay
//! s(i) = λ·s(i−1) + (1 − λ)·a(i)                  smoothed, λ = 0.9
//! trend = Σ(x − x̄)(s − s̄) / Σ(x − x̄)²            over the last 20 points
//! m = gain · trend,  gain = 4                      what the detector compares (× min(n, 60))
//! ```
//!
//! The trend approximates (sending rate − capacity)/capacity. Constants: window 20
//! (`WebRTC-BweWindowSizeInPackets`), smoothing 0.9, threshold gain 4.0 (libwebrtc).
//!
//! Deviations: libwebrtc's optional sorting, slope cap and network-state predictor are not
//! implemented (all off by default there).

use super::grouping::GroupDelta;
use super::overuse::DELTA_COUNTER_MAX;
use crate::time::Instant;

/// Parameters of [`TrendlineEstimator`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrendlineConfig {
    /// Points in the regression window.
    pub window: usize,
    /// λ of the exponential smoothing.
    pub smoothing: f64,
    /// The trend is multiplied by this before the detector sees it.
    pub gain: f64,
}

impl Default for TrendlineConfig {
    fn default() -> Self {
        TrendlineConfig {
            window: 20,
            smoothing: 0.9,
            gain: 4.0,
        }
    }
}

/// The largest window [`TrendlineEstimator`] supports.
pub const MAX_WINDOW: usize = 64;

/// Least-squares slope of the smoothed accumulated delay over a sliding window.
#[derive(Clone, Debug, PartialEq)]
pub struct TrendlineEstimator {
    config: TrendlineConfig,
    accumulated: f64,
    smoothed: f64,
    first_arrival: Option<Instant>,
    /// Ring buffer of (x = ms since the first arrival, y = smoothed delay).
    points: [(f64, f64); MAX_WINDOW],
    len: usize,
    next: usize,
    trend: f64,
    num_deltas: u32,
}

impl TrendlineEstimator {
    /// `config.window` is clamped to [2, [`MAX_WINDOW`]].
    pub fn new(mut config: TrendlineConfig) -> Self {
        config.window = config.window.clamp(2, MAX_WINDOW);
        TrendlineEstimator {
            config,
            accumulated: 0.0,
            smoothed: 0.0,
            first_arrival: None,
            points: [(0.0, 0.0); MAX_WINDOW],
            len: 0,
            next: 0,
            trend: 0.0,
            num_deltas: 0,
        }
    }

    /// The raw slope (dimensionless).
    pub fn trend(&self) -> f64 {
        self.trend
    }

    /// gain × trend: the value the detector compares with γ.
    pub fn estimate(&self) -> f64 {
        self.trend * self.config.gain
    }

    pub fn num_deltas(&self) -> u32 {
        self.num_deltas
    }

    pub fn update(&mut self, d: &GroupDelta) -> f64 {
        self.num_deltas = (self.num_deltas + 1).min(DELTA_COUNTER_MAX);
        let first = *self.first_arrival.get_or_insert(d.arrival);
        self.accumulated += d.delay_variation_ms();
        let l = self.config.smoothing;
        self.smoothed = l * self.smoothed + (1.0 - l) * self.accumulated;
        let w = self.config.window;
        self.points[self.next] = ((d.arrival - first).as_millis_f64(), self.smoothed);
        self.next = (self.next + 1) % w;
        self.len = (self.len + 1).min(w);
        if self.len == w {
            if let Some(slope) = self.fit() {
                self.trend = slope;
            }
        }
        self.estimate()
    }

    fn fit(&self) -> Option<f64> {
        let pts = &self.points[..self.len];
        let n = pts.len() as f64;
        let (sx, sy) = pts
            .iter()
            .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
        let (mx, my) = (sx / n, sy / n);
        let (mut num, mut den) = (0.0, 0.0);
        for &(x, y) in pts {
            num += (x - mx) * (y - my);
            den += (x - mx) * (x - mx);
        }
        (den != 0.0).then(|| num / den)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn d(send: f64, arrival: f64, at: u64) -> GroupDelta {
        GroupDelta {
            send_delta_ms: send,
            arrival_delta_ms: arrival,
            size_delta: 0,
            arrival: Instant::ZERO + ms(at),
        }
    }

    #[test]
    fn slope_of_a_linear_delay_ramp() {
        // Delay grows 1 ms every 10 ms of arrival time: after smoothing settles the slope → 0.1.
        let mut t = TrendlineEstimator::new(TrendlineConfig::default());
        for i in 1..=300 {
            t.update(&d(9.0, 10.0, 10 * i));
        }
        assert!((t.trend() - 0.1).abs() < 1e-3, "{}", t.trend());
        assert!((t.estimate() - 0.4).abs() < 4e-3);
        // No estimate before the window is full.
        let mut t = TrendlineEstimator::new(TrendlineConfig::default());
        for i in 1..20 {
            t.update(&d(9.0, 10.0, 10 * i));
        }
        assert_eq!(t.trend(), 0.0);
        t.update(&d(9.0, 10.0, 200));
        assert!(t.trend() > 0.0);
    }
}
