//! The over-use detector with the adaptive threshold γ of GCC.
//!
//! Carlucci et al., "Making Google Congestion Control robust over Wi-Fi networks using packet
//! grouping", ANRW 2016, §3 ("the over-use detector compares the estimated one way queuing delay
//! variation m(t_i) with an adaptive threshold γ(t_i)"), after Carlucci et al., MMSys 2016,
//! §3.3–3.4 and draft-ietf-rmcat-gcc-02 §5.4:
//!
//! ```text
//! signal = overuse   if m > γ  (sustained, see below)
//!          underuse  if m < −γ
//!          normal    otherwise
//! γ(t_i) = γ(t_{i−1}) + Δt_i · k_γ(t_i) · (|m(t_i)| − γ(t_{i−1}))        (γ update)
//! k_γ = k_d if |m| < γ else k_u
//! ```
//!
//! As libwebrtc (`overuse_detector.cc`), the value compared is the *modified* estimate
//! T = min(n, 60) · m, where n is the number of deltas the filter has seen; γ is clamped to
//! [6, 600] ms; γ is not adapted when |T| > γ + 15 ms (a spike should not drag it up); Δt is
//! capped at 100 ms; and "overuse" is only signalled once T has stayed above γ for more than
//! 10 ms over at least two consecutive groups while the estimate is not falling.
//!
//! Constants, with their sources:
//!
//! | constant | libwebrtc (`overuse_detector.cc`, aiortc `rate.py`) | draft-ietf-rmcat-gcc-02 §5.4, MMSys'16 |
//! |---|---|---|
//! | γ(0) | 12.5 ms | 12.5 ms |
//! | γ range | [6, 600] ms | [6, 600] ms |
//! | k_u | 0.0087 | 0.01 |
//! | k_d | 0.039 | 0.00018 |
//! | over-use time | 10 ms (adaptive-threshold trial) | 10 ms |
//! | max adapt offset | 15 ms | 15 ms |
//!
//! | value compared with γ | T = min(n, 60)·m | m (§5.4: "the offset estimate m(i) … is compared with a threshold del_var_th(i)") |
//!
//! [`ThresholdConfig::LIBWEBRTC`] is the default; [`ThresholdConfig::DRAFT`] (`threshold=draft`)
//! is the draft's detector: its gains, and m itself compared with γ and adapting γ. (Until
//! this was fixed, `draft` set the draft's gains but compared libwebrtc's T = min(n, 60)·m, as
//! pion's `adaptive_threshold.go` does; with m in the range of a ms, T crossed γ sixty times
//! sooner.)
//!
//! Deviations: the draft's detector keeps libwebrtc's requirement of two consecutive samples
//! above γ before signalling over-use (the draft asks only for `overuse_time_th` above it).

use crate::time::Instant;

/// The detector's signal *s* (libwebrtc's `BandwidthUsage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BandwidthUsage {
    #[default]
    Normal,
    Underusing,
    Overusing,
}

/// The most deltas a filter counts (`kDeltaCounterMax`).
pub const DELTA_COUNTER_MAX: u32 = 1000;

/// The number of deltas after which T = n·m stops growing with n (`kMinNumDeltas`).
pub const MIN_NUM_DELTAS: u32 = 60;

/// Parameters of the adaptive threshold and the detector.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThresholdConfig {
    /// γ(0), ms.
    pub initial_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    /// Gain when |T| ≥ γ (γ rises).
    pub k_up: f64,
    /// Gain when |T| < γ (γ falls).
    pub k_down: f64,
    /// γ is not adapted when |T| > γ + this, ms.
    pub max_adapt_offset_ms: f64,
    /// The largest Δt used in one γ update, ms.
    pub max_time_delta_ms: f64,
    /// How long T must stay above γ before "overuse" is signalled, ms.
    pub overuse_time_ms: f64,
    /// Whether the value compared with γ is T = min(n, 60)·m (libwebrtc) or m (the draft).
    pub scale_by_deltas: bool,
}

impl ThresholdConfig {
    /// libwebrtc's values (`overuse_detector.cc` with the adaptive-threshold trial on; aiortc).
    pub const LIBWEBRTC: ThresholdConfig = ThresholdConfig {
        initial_ms: 12.5,
        min_ms: 6.0,
        max_ms: 600.0,
        k_up: 0.0087,
        k_down: 0.039,
        max_adapt_offset_ms: 15.0,
        max_time_delta_ms: 100.0,
        overuse_time_ms: 10.0,
        scale_by_deltas: true,
    };

    /// draft-ietf-rmcat-gcc-02 §5.4 and MMSys'16: the draft's gains, with m itself compared
    /// with γ (pion's `adaptive_threshold.go` takes these gains but compares min(n, 60)·m).
    pub const DRAFT: ThresholdConfig = ThresholdConfig {
        k_up: 0.01,
        k_down: 0.00018,
        scale_by_deltas: false,
        ..ThresholdConfig::LIBWEBRTC
    };
}

impl Default for ThresholdConfig {
    fn default() -> Self {
        ThresholdConfig::LIBWEBRTC
    }
}

/// The two sets of threshold gains by name (`threshold=libwebrtc|draft`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Threshold {
    /// [`ThresholdConfig::LIBWEBRTC`].
    #[default]
    Libwebrtc,
    /// [`ThresholdConfig::DRAFT`].
    Draft,
}

impl From<Threshold> for ThresholdConfig {
    fn from(t: Threshold) -> Self {
        match t {
            Threshold::Libwebrtc => ThresholdConfig::LIBWEBRTC,
            Threshold::Draft => ThresholdConfig::DRAFT,
        }
    }
}

/// The adaptive threshold γ.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveThreshold {
    config: ThresholdConfig,
    gamma: f64,
    last_update: Option<Instant>,
}

impl AdaptiveThreshold {
    pub fn new(config: ThresholdConfig) -> Self {
        AdaptiveThreshold {
            config,
            gamma: config.initial_ms,
            last_update: None,
        }
    }

    /// γ in ms.
    pub fn value(&self) -> f64 {
        self.gamma
    }

    /// Adapts γ towards |`modified`| (the γ update above).
    pub fn update(&mut self, modified: f64, now: Instant) {
        let last = *self.last_update.get_or_insert(now);
        self.last_update = Some(now);
        let c = &self.config;
        if modified.abs() > self.gamma + c.max_adapt_offset_ms {
            // A latency spike (e.g. a sudden capacity drop): do not adapt to it.
            return;
        }
        let k = if modified.abs() < self.gamma {
            c.k_down
        } else {
            c.k_up
        };
        let dt_ms = (now - last).as_millis_f64().min(c.max_time_delta_ms);
        self.gamma += k * (modified.abs() - self.gamma) * dt_ms;
        self.gamma = self.gamma.clamp(c.min_ms, c.max_ms);
    }
}

/// Compares a filter's estimate with γ and signals over-use, under-use or normal.
#[derive(Clone, Debug, PartialEq)]
pub struct OveruseDetector {
    threshold: AdaptiveThreshold,
    hypothesis: BandwidthUsage,
    /// Time T has been above γ, ms; `None` while it is not.
    time_over_using: Option<f64>,
    overuse_counter: u32,
    prev_estimate: f64,
    last_modified: f64,
}

impl OveruseDetector {
    pub fn new(config: ThresholdConfig) -> Self {
        OveruseDetector {
            threshold: AdaptiveThreshold::new(config),
            hypothesis: BandwidthUsage::Normal,
            time_over_using: None,
            overuse_counter: 0,
            prev_estimate: 0.0,
            last_modified: 0.0,
        }
    }

    /// The current signal.
    pub fn state(&self) -> BandwidthUsage {
        self.hypothesis
    }

    /// γ in ms.
    pub fn threshold(&self) -> f64 {
        self.threshold.value()
    }

    /// The last value compared with γ: T = min(n, 60)·m, or m with the draft's detector.
    pub fn modified_estimate(&self) -> f64 {
        self.last_modified
    }

    /// Takes the filter's estimate `m` (ms) after a group whose inter-departure time was
    /// `send_delta_ms`, when the filter has seen `num_deltas` deltas; returns the new signal.
    pub fn detect(
        &mut self,
        m: f64,
        send_delta_ms: f64,
        num_deltas: u32,
        now: Instant,
    ) -> BandwidthUsage {
        if num_deltas < 2 {
            return BandwidthUsage::Normal;
        }
        let t = if self.threshold.config.scale_by_deltas {
            f64::from(num_deltas.min(MIN_NUM_DELTAS)) * m
        } else {
            m
        };
        self.last_modified = t;
        let gamma = self.threshold.value();
        if t > gamma {
            let over = match self.time_over_using {
                // Assume it has been over-using for half the time since the previous group.
                None => send_delta_ms / 2.0,
                Some(o) => o + send_delta_ms,
            };
            self.time_over_using = Some(over);
            self.overuse_counter += 1;
            if over > self.threshold.config.overuse_time_ms
                && self.overuse_counter > 1
                && m >= self.prev_estimate
            {
                self.time_over_using = Some(0.0);
                self.overuse_counter = 0;
                self.hypothesis = BandwidthUsage::Overusing;
            }
        } else if t < -gamma {
            self.time_over_using = None;
            self.overuse_counter = 0;
            self.hypothesis = BandwidthUsage::Underusing;
        } else {
            self.time_over_using = None;
            self.overuse_counter = 0;
            self.hypothesis = BandwidthUsage::Normal;
        }
        self.prev_estimate = m;
        self.threshold.update(t, now);
        self.hypothesis
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn at(t: u64) -> Instant {
        Instant::ZERO + ms(t)
    }

    #[test]
    fn threshold_follows_the_estimate_and_ignores_spikes() {
        let mut g = AdaptiveThreshold::new(ThresholdConfig::LIBWEBRTC);
        g.update(0.0, at(0));
        assert_eq!(g.value(), 12.5);
        // |T| = 0 < γ: γ falls with k_down over 10 ms: 12.5 − 0.039·12.5·10.
        g.update(0.0, at(10));
        assert!((g.value() - (12.5 - 0.039 * 12.5 * 10.0)).abs() < 1e-12);
        let before = g.value();
        // A spike far above γ + 15 leaves γ alone.
        g.update(100.0, at(20));
        assert_eq!(g.value(), before);
        // Never below 6 ms.
        for i in 3..100 {
            g.update(0.0, at(10 * i));
        }
        assert_eq!(g.value(), 6.0);
        // Δt is capped at 100 ms: T = 10 ≥ γ = 6 after a 1 s gap raises γ by at most 100 ms worth.
        g.update(10.0, at(2000));
        assert!((g.value() - (6.0 + 0.0087 * 4.0 * 100.0)).abs() < 1e-12);
    }

    /// `threshold=draft` compares m itself with γ (draft-ietf-rmcat-gcc-02 §5.4), not
    /// libwebrtc's T = min(n, 60)·m: an m of 1 ms is well inside γ = 12.5 ms; 13 ms is not.
    #[test]
    fn the_draft_compares_m_itself() {
        let mut d = OveruseDetector::new(ThresholdConfig::DRAFT);
        for i in 0..20 {
            assert_eq!(d.detect(1.0, 5.0, 60, at(5 * i)), BandwidthUsage::Normal);
        }
        assert_eq!(d.modified_estimate(), 1.0);
        // γ fell towards |m| with k_d over 95 ms: 12.5 − 0.00018·(12.5 − 1)·5 per sample.
        assert!(
            d.threshold() > 12.3 && d.threshold() < 12.5,
            "{}",
            d.threshold()
        );
        let mut state = BandwidthUsage::Normal;
        for (i, m) in [13.0, 13.1, 13.2, 13.3].into_iter().enumerate() {
            state = d.detect(m, 5.0, 60, at(100 + 5 * i as u64));
        }
        assert_eq!(state, BandwidthUsage::Overusing);
        assert_eq!(
            d.detect(-13.0, 5.0, 60, at(200)),
            BandwidthUsage::Underusing
        );
        // libwebrtc's detector signals over-use on the same m of 1 ms.
        let mut d = OveruseDetector::new(ThresholdConfig::LIBWEBRTC);
        let states: Vec<_> = (0..5).map(|i| d.detect(1.0, 5.0, 60, at(5 * i))).collect();
        assert_eq!(
            states.last(),
            Some(&BandwidthUsage::Overusing),
            "{states:?}"
        );
    }

    #[test]
    fn overuse_needs_time_two_samples_and_a_rising_estimate() {
        let mut d = OveruseDetector::new(ThresholdConfig::LIBWEBRTC);
        assert_eq!(d.detect(1.0, 5.0, 1, at(0)), BandwidthUsage::Normal);
        // T = 60·1 = 60 > 12.5; first sample: 2.5 ms of over-use, counter 1.
        assert_eq!(d.detect(1.0, 5.0, 60, at(5)), BandwidthUsage::Normal);
        // 7.5 ms, counter 2: still under 10 ms.
        assert_eq!(d.detect(1.0, 5.0, 60, at(10)), BandwidthUsage::Normal);
        // 12.5 ms, rising estimate: over-use.
        assert_eq!(d.detect(1.1, 5.0, 60, at(15)), BandwidthUsage::Overusing);
        // Stays over-using while above γ, even with a falling estimate.
        assert_eq!(d.detect(1.0, 5.0, 60, at(20)), BandwidthUsage::Overusing);
        assert_eq!(d.detect(-1.0, 5.0, 60, at(25)), BandwidthUsage::Underusing);
        assert_eq!(d.detect(0.0, 5.0, 60, at(30)), BandwidthUsage::Normal);
        // A falling estimate above γ does not trigger over-use.
        let mut d = OveruseDetector::new(ThresholdConfig::LIBWEBRTC);
        for (i, m) in [2.0, 1.9, 1.8, 1.7, 1.6].into_iter().enumerate() {
            assert_eq!(
                d.detect(m, 5.0, 60, at(5 * i as u64)),
                BandwidthUsage::Normal
            );
        }
    }
}
