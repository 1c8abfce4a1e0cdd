//! `um` — primal-dual utility maximisation with fixed parameters, Mehrotra et al. §IV-E.
//!
//! With the log utility U(R) = k₀·log R, the rate follows
//!
//! ```text
//! ΔR = k₂ (k₀ − δ·R) ΔT                                                     (1)
//! ```
//!
//! per ACK, where δ is the ACK's queueing delay (s), R the rate (bytes/s) and ΔT the time since
//! the previous adjustment (s). It settles where δ·R = k₀: an operating delay δ̂ = k₀/R that
//! depends on the rate — 0.8 s at 250 kbit/s, 40 ms at 5 Mbit/s with the paper's k₀ = 25000 B,
//! k₂ = 1.6 (units as §III's: R in bytes per second).
//!
//! Parameters: `k0=25000,k2=1.6`.
//!
//! Deviations: none in the law; the first ACK only starts the clock (ΔT needs a previous
//! adjustment).

use super::RateParams;
use super::sender::{AckInfo, LossInfo, RateLaw};
use crate::scheme::params::{Checked, Given, Validate, range, scheme_config};
use crate::time::{Duration, Instant};

scheme_config! {
    /// Configuration of [`Um`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct UmConfig {
        /// k₀, bytes.
        // The utility's weight; δ̂ = k₀/R.
        pub k0: f64,
        /// k₂, 1/s².
        pub k2: f64,
        #[group]
        pub rate: RateParams,
    }
}

impl Default for UmConfig {
    fn default() -> Self {
        UmConfig {
            k0: 25_000.0,
            k2: 1.6,
            rate: RateParams::default(),
        }
    }
}

impl Validate for UmConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        range("k0", self.k0, 0.0, 1e9, "bytes, 0 to 1e9")?;
        range("k2", self.k2, 0.0, 1000.0, "a number, 0 to 1000")?;
        self.rate.check(given)
    }
}

/// The law of eq. (1).
#[derive(Clone, Debug)]
pub struct Um {
    k0: f64,
    k2: f64,
    last: Option<Instant>,
    r: f64,
}

impl Um {
    pub fn new(c: &UmConfig) -> Self {
        Um {
            k0: c.k0,
            k2: c.k2,
            last: None,
            r: 0.0,
        }
    }
}

impl RateLaw for Um {
    fn on_ack(&mut self, now: Instant, ack: &AckInfo, r: &mut f64) {
        if let Some(last) = self.last {
            let dt = now.saturating_duration_since(last).as_secs_f64();
            let delta = ack.delta.as_secs_f64();
            *r += self.k2 * (self.k0 - delta * *r) * dt;
        }
        self.last = Some(now);
        self.r = *r;
    }

    fn on_loss(&mut self, _now: Instant, _loss: &LossInfo, _r: &mut f64) {}

    /// δ̂ = k₀/R.
    fn delay_target(&self) -> Option<Duration> {
        (self.r > 0.0).then(|| Duration::from_secs_f64((self.k0 / self.r).min(3600.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn ack(delta: Duration) -> AckInfo {
        AckInfo::with_delta(delta)
    }

    #[test]
    fn eq_1_and_its_operating_point() {
        let mut u = Um::new(&UmConfig::default());
        let mut r = 50_000.0;
        u.on_ack(Instant::ZERO, &ack(ms(0)), &mut r);
        assert_eq!(r, 50_000.0);
        // 10 ms later at δ = 100 ms: 1.6·(25000 − 0.1·50000)·0.01 = 320 B/s.
        u.on_ack(Instant::ZERO + ms(10), &ack(ms(100)), &mut r);
        assert!((r - 50_320.0).abs() < 1e-6, "{r}");
        // At δ = k₀/R nothing moves.
        let d = Duration::from_secs_f64(25_000.0 / r);
        let before = r;
        u.on_ack(Instant::ZERO + ms(20), &ack(d), &mut r);
        assert!((r - before).abs() < 1e-3, "{r}");
        assert_eq!(u.delay_target(), Some(d));
    }
}
