//! GCC's arrival-time filter: from the one-way delay variation of consecutive groups of
//! packets to an estimate of the queuing-delay variation *m*.
//!
//! ANRW'16 §3 (Carlucci, De Cicco, Holmer, Mascolo): each time the *i*-th group has arrived, the
//! measured one-way delay variation
//!
//! ```text
//! d_m(t_i) = (t_r(i) − t_r(i−1)) − (t_s(i) − t_s(i−1))                       (2)
//! ```
//!
//! (arrival spacing minus departure spacing; see [`GroupDelta`] on the sign; the grouping
//! ([`super::grouping`]) makes the deltas) is modelled as
//!
//! ```text
//! d(t_i) = m(t_i) + n(t_i),     n ~ Gaussian                                     (3)
//! ```
//!
//! and a Kalman filter estimates *m*. Three filters are offered:
//!
//! * [`KalmanEstimator`] — libwebrtc's `OveruseEstimator` (the filter of the Chrome versions the
//!   paper's experiments ran; aiortc's `OveruseEstimator`): eq. (3) with the transmission-time
//!   term the paper calls negligible kept as a second state, d = ΔL·(1/C) + m + n, where ΔL is
//!   the size difference of the two groups. Constants (libwebrtc `overuse_estimator.cc`):
//!   P(0) = diag(100, 0.1), 1/C(0) = 8/512 ms/byte, Q = diag(1e−13, 1e−3) (plus 10·Q₂₂ when the
//!   offset moves against the current hypothesis), var_v(0) = 50 ms², var_v ≥ 1, noise EWMA
//!   α = 0.01 (0.002 after 300 deltas) scaled as β = (1 − α)^(30·T_min/1000) with T_min the
//!   smallest inter-departure time of the last 60 groups, residual clipped at ±3σ, and the noise
//!   only adapted while the detector signals "normal".
//! * [`ScalarKalmanEstimator`] — eq. (3) as written, draft-ietf-rmcat-gcc-02 §5.3 and MMSys'16
//!   §3.2: m̂(i) = m̂(i−1) + k(i)·z(i), z = d − m̂, k = (e + q)/(var_v + e + q),
//!   e = (1 − k)(e + q), q = 10⁻³, e(0) = 0.1 (pion `kalman.go`), var_v updated with
//!   α = (1 − χ)^(30·T_min/1000), χ = 0.01 (the draft's interval is [0.001, 0.1]), the residual
//!   clipped at ±3σ, var_v ≥ 1; var_v(0) = 50 as libwebrtc.
//! * [`super::trendline::TrendlineEstimator`] — libwebrtc's later replacement: a
//!   least-squares slope of the accumulated, smoothed delay.
//!
//! Each filter reports *m* in milliseconds (for the trendline, slope × gain) and the number of
//! deltas it has seen, which is what [`super::overuse::OveruseDetector`] takes.
//!
//! Deviations: none in the filters; which one GCC uses is its configuration's choice.

use super::grouping::GroupDelta;
use super::kalman::Kalman;
use super::overuse::{BandwidthUsage, DELTA_COUNTER_MAX};
use super::trendline::{TrendlineConfig, TrendlineEstimator};

/// The number of past groups over which the smallest inter-departure time is taken.
const MIN_FRAME_PERIOD_HISTORY: usize = 60;

/// The smallest of the last 60 inter-departure times (libwebrtc `UpdateMinFramePeriod`).
///
/// A ring of the last 60 values with the minimum kept up to date: a rescan only when the value
/// leaving the window was the minimum.
#[derive(Clone, Debug, PartialEq)]
struct MinPeriod {
    hist: [f64; MIN_FRAME_PERIOD_HISTORY],
    len: usize,
    next: usize,
    min: f64,
}

impl MinPeriod {
    fn new() -> Self {
        MinPeriod {
            hist: [0.0; MIN_FRAME_PERIOD_HISTORY],
            len: 0,
            next: 0,
            min: f64::INFINITY,
        }
    }

    /// Records `send_delta` and returns the minimum over it and the 59 before it.
    fn update(&mut self, send_delta: f64) -> f64 {
        if self.len == MIN_FRAME_PERIOD_HISTORY {
            // `next` holds the oldest value, which leaves the window now.
            let evicted = self.hist[self.next];
            self.hist[self.next] = send_delta;
            if evicted <= self.min {
                self.min = self.hist.iter().copied().fold(f64::INFINITY, f64::min);
            } else {
                self.min = self.min.min(send_delta);
            }
        } else {
            self.hist[self.next] = send_delta;
            self.len += 1;
            self.min = self.min.min(send_delta);
        }
        self.next = (self.next + 1) % MIN_FRAME_PERIOD_HISTORY;
        self.min
    }
}

/// The measurement-noise estimate var_v shared by the Kalman filters.
#[derive(Clone, Debug, PartialEq)]
struct NoiseEstimate {
    avg: f64,
    var: f64,
    /// The last (α, T_min) and the β they gave (T_min rarely changes; `powf` is costly).
    beta_cache: Option<(f64, f64, f64)>,
}

impl NoiseEstimate {
    fn new(var: f64) -> Self {
        NoiseEstimate {
            avg: 0.0,
            var,
            beta_cache: None,
        }
    }

    /// (1 − α)^(30·T_min/1000).
    fn beta(&mut self, alpha: f64, min_period_ms: f64) -> f64 {
        match self.beta_cache {
            Some((a, t, b)) if a == alpha && t == min_period_ms => b,
            _ => {
                let b = (1.0 - alpha).powf(min_period_ms * 30.0 / 1000.0);
                self.beta_cache = Some((alpha, min_period_ms, b));
                b
            }
        }
    }

    /// One EWMA step with weight α scaled to the group rate: β = (1 − α)^(30·T_min/1000).
    fn update(&mut self, residual: f64, min_period_ms: f64, alpha: f64) {
        let beta = self.beta(alpha, min_period_ms);
        self.avg = beta * self.avg + (1.0 - beta) * residual;
        self.var = beta * self.var + (1.0 - beta) * (self.avg - residual) * (self.avg - residual);
        if self.var < 1.0 {
            self.var = 1.0;
        }
    }

    /// The residual clipped at ±3σ.
    fn clip(&self, residual: f64) -> f64 {
        let max = 3.0 * self.var.sqrt();
        if residual.abs() < max {
            residual
        } else if residual < 0.0 {
            -max
        } else {
            max
        }
    }
}

/// Parameters of [`KalmanEstimator`] (libwebrtc `overuse_estimator.cc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KalmanConfig {
    /// Initial [1/C (ms per byte), m (ms)].
    pub initial_state: [f64; 2],
    pub initial_covariance: [[f64; 2]; 2],
    pub process_noise: [f64; 2],
    pub initial_noise_var: f64,
    /// Noise EWMA weight for the first 300 deltas, then after.
    pub noise_alpha: (f64, f64),
}

impl Default for KalmanConfig {
    fn default() -> Self {
        KalmanConfig {
            initial_state: [8.0 / 512.0, 0.0],
            initial_covariance: [[100.0, 0.0], [0.0, 1e-1]],
            process_noise: [1e-13, 1e-3],
            initial_noise_var: 50.0,
            noise_alpha: (0.01, 0.002),
        }
    }
}

/// libwebrtc's two-state arrival-time filter: state [1/C, m], measurement
/// d = ΔL·(1/C) + m + n.
#[derive(Clone, Debug, PartialEq)]
pub struct KalmanEstimator {
    config: KalmanConfig,
    kalman: Kalman<2>,
    prev_offset: f64,
    noise: NoiseEstimate,
    num_deltas: u32,
    min_period: MinPeriod,
}

impl KalmanEstimator {
    pub fn new(config: KalmanConfig) -> Self {
        KalmanEstimator {
            config,
            kalman: Kalman::new(config.initial_state, config.initial_covariance),
            prev_offset: config.initial_state[1],
            noise: NoiseEstimate::new(config.initial_noise_var),
            num_deltas: 0,
            min_period: MinPeriod::new(),
        }
    }

    /// The estimated m, ms.
    pub fn offset(&self) -> f64 {
        self.kalman.state()[1]
    }

    /// The estimated inverse capacity, ms per byte.
    pub fn slope(&self) -> f64 {
        self.kalman.state()[0]
    }

    /// The measurement-noise variance var_v, ms².
    pub fn noise_var(&self) -> f64 {
        self.noise.var
    }

    pub fn num_deltas(&self) -> u32 {
        self.num_deltas
    }

    /// Feeds one group delta, given the detector's current signal.
    pub fn update(&mut self, d: &GroupDelta, hypothesis: BandwidthUsage) -> f64 {
        let min_period = self.min_period.update(d.send_delta_ms);
        self.num_deltas = (self.num_deltas + 1).min(DELTA_COUNTER_MAX);
        let q = self.config.process_noise;
        self.kalman.add_process_noise(q);
        let offset = self.offset();
        if (hypothesis == BandwidthUsage::Overusing && offset < self.prev_offset)
            || (hypothesis == BandwidthUsage::Underusing && offset > self.prev_offset)
        {
            // The offset moves against the hypothesis: let it move faster.
            self.kalman.add_process_noise_to(1, 10.0 * q[1]);
        }
        let h = [d.size_delta as f64, 1.0];
        let residual = self.kalman.residual(&h, d.delay_variation_ms());
        if hypothesis == BandwidthUsage::Normal {
            let alpha = if self.num_deltas > 10 * 30 {
                self.config.noise_alpha.1
            } else {
                self.config.noise_alpha.0
            };
            let clipped = self.noise.clip(residual);
            self.noise.update(clipped, min_period, alpha);
        }
        self.prev_offset = offset;
        self.kalman.correct(&h, residual, self.noise.var);
        self.offset()
    }
}

/// Parameters of [`ScalarKalmanEstimator`] (draft-ietf-rmcat-gcc-02 §5.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalarKalmanConfig {
    /// Process noise q.
    pub process_noise: f64,
    /// e(0).
    pub initial_error: f64,
    /// χ.
    pub chi: f64,
    pub initial_noise_var: f64,
}

impl Default for ScalarKalmanConfig {
    fn default() -> Self {
        ScalarKalmanConfig {
            process_noise: 1e-3,
            initial_error: 0.1,
            chi: 0.01,
            initial_noise_var: 50.0,
        }
    }
}

/// The scalar Kalman filter of eq. (3): d = m + n.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarKalmanEstimator {
    config: ScalarKalmanConfig,
    kalman: Kalman<1>,
    noise: NoiseEstimate,
    num_deltas: u32,
    min_period: MinPeriod,
}

impl ScalarKalmanEstimator {
    pub fn new(config: ScalarKalmanConfig) -> Self {
        ScalarKalmanEstimator {
            config,
            kalman: Kalman::new([0.0], [[config.initial_error]]),
            noise: NoiseEstimate::new(config.initial_noise_var),
            num_deltas: 0,
            min_period: MinPeriod::new(),
        }
    }

    pub fn offset(&self) -> f64 {
        self.kalman.state()[0]
    }

    pub fn num_deltas(&self) -> u32 {
        self.num_deltas
    }

    pub fn update(&mut self, d: &GroupDelta) -> f64 {
        let min_period = self.min_period.update(d.send_delta_ms);
        self.num_deltas = (self.num_deltas + 1).min(DELTA_COUNTER_MAX);
        self.kalman.add_process_noise([self.config.process_noise]);
        let z = self.kalman.residual(&[1.0], d.delay_variation_ms());
        // The draft's var_v tracks z² (a zero-mean residual), not the residual's variance.
        let clipped = self.noise.clip(z);
        let alpha = self.noise.beta(self.config.chi, min_period);
        self.noise.var = (alpha * self.noise.var + (1.0 - alpha) * clipped * clipped).max(1.0);
        self.kalman.correct(&[1.0], z, self.noise.var);
        self.offset()
    }
}

/// Which arrival-time filter a controller uses (`filter=kalman|scalar|trendline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterKind {
    /// [`KalmanEstimator`] (libwebrtc, two states).
    #[default]
    Kalman,
    /// [`ScalarKalmanEstimator`] (the draft, eq. 3 as written).
    Scalar,
    /// [`TrendlineEstimator`] (libwebrtc's later delay-based estimator).
    Trendline,
}

impl FilterKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FilterKind::Kalman => "kalman",
            FilterKind::Scalar => "scalar",
            FilterKind::Trendline => "trendline",
        }
    }
}

/// One of the arrival-time filters, by static dispatch.
///
/// The variants are kept inline (one filter per receiver; no indirection on the per-group path).
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum ArrivalFilter {
    Kalman(KalmanEstimator),
    Scalar(ScalarKalmanEstimator),
    Trendline(TrendlineEstimator),
}

impl ArrivalFilter {
    /// A filter of `kind` with its default constants.
    pub fn new(kind: FilterKind) -> Self {
        match kind {
            FilterKind::Kalman => ArrivalFilter::Kalman(KalmanEstimator::new(Default::default())),
            FilterKind::Scalar => {
                ArrivalFilter::Scalar(ScalarKalmanEstimator::new(Default::default()))
            }
            FilterKind::Trendline => {
                ArrivalFilter::Trendline(TrendlineEstimator::new(TrendlineConfig::default()))
            }
        }
    }

    /// Feeds one group delta; returns the estimate m (ms) the detector compares with γ.
    pub fn update(&mut self, d: &GroupDelta, hypothesis: BandwidthUsage) -> f64 {
        match self {
            ArrivalFilter::Kalman(k) => k.update(d, hypothesis),
            ArrivalFilter::Scalar(k) => k.update(d),
            ArrivalFilter::Trendline(t) => t.update(d),
        }
    }

    /// The current estimate m, ms.
    pub fn estimate(&self) -> f64 {
        match self {
            ArrivalFilter::Kalman(k) => k.offset(),
            ArrivalFilter::Scalar(k) => k.offset(),
            ArrivalFilter::Trendline(t) => t.estimate(),
        }
    }

    pub fn num_deltas(&self) -> u32 {
        match self {
            ArrivalFilter::Kalman(k) => k.num_deltas(),
            ArrivalFilter::Scalar(k) => k.num_deltas(),
            ArrivalFilter::Trendline(t) => t.num_deltas(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Instant, ms};

    fn delta(send: f64, arrival: f64, size: i64, at_ms: u64) -> GroupDelta {
        GroupDelta {
            send_delta_ms: send,
            arrival_delta_ms: arrival,
            size_delta: size,
            arrival: Instant::ZERO + ms(at_ms),
        }
    }

    #[test]
    fn min_period_is_over_the_last_sixty() {
        let mut m = MinPeriod::new();
        assert_eq!(m.update(5.0), 5.0);
        for _ in 0..58 {
            assert_eq!(m.update(33.0), 5.0);
        }
        // The 60th value still sees the 5.
        assert_eq!(m.update(33.0), 5.0);
        // The 61st no longer does.
        assert_eq!(m.update(33.0), 33.0);
    }

    #[test]
    fn filters_track_a_growing_queue_and_ignore_constant_delay() {
        for kind in [
            FilterKind::Kalman,
            FilterKind::Scalar,
            FilterKind::Trendline,
        ] {
            let mut f = ArrivalFilter::new(kind);
            for i in 0..100 {
                f.update(&delta(33.0, 33.0, 0, 33 * i), BandwidthUsage::Normal);
            }
            assert!(f.estimate().abs() < 0.05, "{kind:?}: {}", f.estimate());
            // The queue now grows by 2 ms per group.
            for i in 100..140 {
                f.update(&delta(33.0, 35.0, 0, 33 * i), BandwidthUsage::Normal);
            }
            assert!(f.estimate() > 0.2, "{kind:?}: {}", f.estimate());
            assert_eq!(f.num_deltas(), 140);
        }
    }

    #[test]
    fn kalman_attributes_size_driven_delay_to_the_slope() {
        // Alternating large and small groups on a 1 Mbit/s link: 1 byte = 0.008 ms.
        let mut k = KalmanEstimator::new(KalmanConfig::default());
        for i in 0..3000 {
            let size = if i % 2 == 0 { 5000 } else { -5000 };
            let d = delta(33.0, 33.0 + 0.008 * size as f64, size, 33 * i as u64);
            k.update(&d, BandwidthUsage::Normal);
        }
        assert!((k.slope() - 0.008).abs() < 0.001, "{}", k.slope());
        assert!(k.offset().abs() < 0.5, "{}", k.offset());
    }
}
