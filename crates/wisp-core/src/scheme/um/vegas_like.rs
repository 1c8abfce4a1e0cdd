//! `vegas-like` — TCP-Vegas-like rate control, Mehrotra et al. §IV-B.
//!
//! ```text
//! per ACK:   ΔR = + M² / (R · SRTT²)   if δ < κ
//!                  0                    if κ ≤ δ < ζ
//!                − M² / (R · SRTT²)    if δ ≥ ζ
//! per NACK:  ΔR = − R / 2
//! ```
//!
//! The paper gives no values for κ and ζ. Vegas (Brakmo & Peterson 1995) keeps between α = 2
//! and β = 4 segments queued at the bottleneck; a flow sending R bytes/s with queueing delay δ
//! has R·δ bytes queued (Vegas's diff·baseRTT with W = R·RTT), so κ = α·S/R and ζ = β·S/R,
//! S the segment size. This is what §IV-B describes: "rate control algorithms with fixed
//! parameters have an operating congestion point which decreases with bitrate" — 80 ms of
//! queueing at 250 kbit/s, 4 ms at 5 Mbit/s, within the WiMAX link's noise.
//!
//! Parameters: `alpha=2,beta=4` (segments).
//!
//! Deviations: κ and ζ as above; the segment size S is the largest packet the flow has sent
//! (a full video packet, 1240 B).

use super::RateParams;
use super::newreno_like::tcp_increase;
use super::sender::{AckInfo, LossInfo, RateLaw};
use crate::scheme::params::{Checked, Given, Validate, ordered, range, scheme_config};
use crate::time::Instant;

scheme_config! {
    /// Configuration of [`VegasLike`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct VegasLikeConfig {
        /// κ, segments queued.
        // Vegas's α.
        pub alpha: f64,
        /// ζ, segments queued.
        // Vegas's β.
        pub beta: f64,
        #[group]
        pub rate: RateParams,
    }
}

impl Default for VegasLikeConfig {
    fn default() -> Self {
        VegasLikeConfig {
            alpha: 2.0,
            beta: 4.0,
            rate: RateParams::default(),
        }
    }
}

impl Validate for VegasLikeConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        range("alpha", self.alpha, 0.0, 1000.0, "segments, 0 to 1000")?;
        range("beta", self.beta, 0.0, 1000.0, "segments, 0 to 1000")?;
        ordered(&[("alpha", self.alpha), ("beta", self.beta)])?;
        self.rate.check(given)
    }
}

/// The Vegas-like law.
#[derive(Clone, Debug, PartialEq)]
pub struct VegasLike {
    alpha: f64,
    beta: f64,
}

impl VegasLike {
    pub fn new(c: &VegasLikeConfig) -> Self {
        VegasLike {
            alpha: c.alpha,
            beta: c.beta,
        }
    }

    /// κ and ζ in seconds at rate `r` (bytes/s) for segments of `segment` bytes.
    pub fn thresholds(&self, r: f64, segment: u64) -> (f64, f64) {
        let s = segment as f64;
        (self.alpha * s / r, self.beta * s / r)
    }
}

impl RateLaw for VegasLike {
    fn on_ack(&mut self, _now: Instant, ack: &AckInfo, r: &mut f64) {
        let (kappa, zeta) = self.thresholds(*r, ack.segment.max(ack.size));
        let delta = ack.delta.as_secs_f64();
        let step = tcp_increase(ack, *r);
        if delta < kappa {
            *r += step;
        } else if delta >= zeta {
            *r -= step;
        }
    }

    fn on_loss(&mut self, _now: Instant, _loss: &LossInfo, r: &mut f64) {
        *r /= 2.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Duration, ms};

    fn ack(delta: Duration) -> AckInfo {
        AckInfo::with_delta(delta)
    }

    #[test]
    fn three_zones_scaled_by_the_rate() {
        let mut l = VegasLike::new(&VegasLikeConfig::default());
        // R = 100 kB/s, S = 1000 B: κ = 20 ms, ζ = 40 ms; a step is 1000 B/s.
        assert_eq!(l.thresholds(100_000.0, 1000), (0.02, 0.04));
        for (d, expected) in [
            (10, 101_000.0),
            (20, 100_000.0),
            (39, 100_000.0),
            (40, 99_000.0),
        ] {
            let mut r = 100_000.0;
            l.on_ack(Instant::ZERO, &ack(ms(d)), &mut r);
            assert!((r - expected).abs() < 1e-6, "δ = {d} ms: {r}");
        }
        // Ten times the rate: the thresholds are ten times lower.
        let (k, z) = l.thresholds(1_000_000.0, 1000);
        assert!((k - 0.002).abs() < 1e-12 && (z - 0.004).abs() < 1e-12);
        let mut r = 100_000.0;
        l.on_loss(
            Instant::ZERO,
            &LossInfo {
                seq: 0,
                size: 1000,
                send_time: Instant::ZERO,
            },
            &mut r,
        );
        assert_eq!(r, 50_000.0);
    }

    #[test]
    fn params() {
        use crate::scheme::ParamError;
        use crate::scheme::params::{Parameters, changed};
        let mut c = VegasLikeConfig::default();
        c.set_params(&[("alpha", "1")]).unwrap();
        assert!(matches!(
            c.set_params(&[("gamma", "1")]),
            Err(ParamError::UnknownParam { .. })
        ));
        assert!(c.set_params(&[("alpha", "9")]).is_err());
        assert_eq!(changed(&c), vec![("alpha", "1".to_string())]);
    }
}
