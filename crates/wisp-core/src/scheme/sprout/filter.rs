//! The receiver's estimators: what turns each tick's packet count into a delivery forecast.
//!
//! * [`BayesFilter`] — Sprout (§3.2–3.3): evolve, observe, normalise, forecast the 5th percentile.
//! * [`EwmaForecaster`] — Sprout-EWMA (§6.4): an EWMA of the per-tick count, extrapolated.
//! * [`AdaptiveFilter`] — beyond the paper: a Bayesian mixture of Sprout filters with different σ,
//!   weighted by how well each predicted the counts seen so far.
//!
//! All three are driven the same way, once per tick: [`Estimator::on_tick`] with what the tick's
//! count says ([`Observation`]), or `None` when it says nothing (a silent tick while the
//! sender's time-to-next promise had not expired, §3.2).

use super::model::{
    Belief, Forecast, MAX_TICKS, ModelParams, Observation, SproutModel, mixture_forecast,
};
use crate::stats::Ewma;
use crate::tables::Tables;
use std::sync::Arc;

/// One tick of Sprout's inference (§3.2) over a [`SproutModel`].
#[derive(Clone, Debug)]
pub struct BayesFilter {
    model: Arc<SproutModel>,
    belief: Belief,
}

impl BayesFilter {
    /// A filter at the uniform prior.
    pub fn new(model: Arc<SproutModel>) -> Self {
        let belief = model.prior();
        BayesFilter { model, belief }
    }

    pub fn model(&self) -> &SproutModel {
        &self.model
    }

    pub fn belief(&self) -> &Belief {
        &self.belief
    }

    /// Step 1: Brownian motion and outage persistence over one tick.
    pub fn evolve(&mut self) {
        self.model.evolve(&mut self.belief);
    }

    /// Steps 2 and 3: the Poisson likelihood of exactly `count` packets, then normalisation.
    /// Returns the log predictive likelihood of the count (up to a constant common to all
    /// models).
    pub fn observe(&mut self, count: u32) -> f64 {
        self.model
            .observe(&mut self.belief, Observation::Exact(count))
    }

    /// Steps 2 and 3 for any observation, exact or censored.
    pub fn observe_tick(&mut self, obs: Observation) -> f64 {
        self.model.observe(&mut self.belief, obs)
    }

    /// §3.3: cumulative deliveries over the next ticks at the model's quantile.
    pub fn forecast(&self) -> Forecast {
        self.model.forecast(&self.belief)
    }

    /// The posterior mean of λ in packets per second.
    pub fn mean_rate(&self) -> f64 {
        let p = self.belief.probabilities();
        (0..p.len()).map(|s| p[s] * self.model.rate(s)).sum()
    }

    /// P(outage).
    pub fn outage_probability(&self) -> f64 {
        self.belief.probabilities()[0]
    }

    /// The equal-tailed credible interval of λ with mass `mass` (0.9: from the 5th to the 95th
    /// percentile), from bin edges, in packets per second.
    pub fn credible_interval(&self, mass: f64) -> (f64, f64) {
        let p = self.belief.probabilities();
        let tail = (1.0 - mass) / 2.0;
        let (mut lo, mut hi) = (None, None);
        let mut acc = 0.0;
        for (s, &ps) in p.iter().enumerate() {
            acc += ps;
            if lo.is_none() && acc >= tail {
                lo = Some(self.model.edges(s).0);
            }
            if acc >= 1.0 - tail {
                hi = Some(self.model.edges(s).1);
                break;
            }
        }
        let top = self.model.params().max_rate;
        (lo.unwrap_or(0.0), hi.unwrap_or(top))
    }
}

/// Sprout-EWMA's estimate (§6.4; the `ewma-noforecast` branch): the per-tick count smoothed with
/// weight `alpha` per tick (1/8), starting at 0, forecast to continue for `ticks` ticks.
#[derive(Clone, Debug)]
pub struct EwmaForecaster {
    ewma: Ewma,
    ticks: usize,
}

impl EwmaForecaster {
    pub fn new(alpha: f64, ticks: usize) -> Self {
        EwmaForecaster {
            ewma: Ewma::starting_at(alpha, 0.0),
            ticks: ticks.clamp(1, MAX_TICKS),
        }
    }

    pub fn observe(&mut self, count: u32) {
        self.ewma.update(f64::from(count));
    }

    /// An exact count is averaged in; a lower bound only pulls the average up to it.
    pub fn observe_tick(&mut self, obs: Observation) {
        match obs {
            Observation::Exact(k) => self.observe(k),
            Observation::AtLeast(k) => {
                if f64::from(k) > self.rate_per_tick() {
                    self.observe(k);
                }
            }
        }
    }

    /// Packets per tick.
    pub fn rate_per_tick(&self) -> f64 {
        self.ewma.value().unwrap_or(0.0)
    }

    /// `[r, 2r, …, ticks·r]`.
    pub fn forecast(&self) -> Forecast {
        let r = self.rate_per_tick();
        let mut c = [0.0; MAX_TICKS];
        for (k, v) in c[..self.ticks].iter_mut().enumerate() {
            *v = r * (k + 1) as f64;
        }
        Forecast::from_cumulative(&c[..self.ticks])
    }
}

/// Sprout with σ inferred online (beyond the paper; §3.1 suggests letting σ "vary slowly with
/// time"): one [`BayesFilter`] per σ in a grid, run in parallel on the same counts. Model *m*'s
/// weight is its posterior probability given every count so far, w_m ∝ w_m · P(k | m, past), with
/// a fixed-share step (w ← (1 − ε)·w + ε/M per tick) so that a model that fell behind can
/// regain weight when the link's variability changes. The forecast is the quantile of the
/// weighted mixture of the filters' predictive distributions.
#[derive(Clone, Debug)]
pub struct AdaptiveFilter {
    filters: Vec<BayesFilter>,
    weights: Vec<f64>,
    share: f64,
}

impl AdaptiveFilter {
    /// One filter per σ in `sigmas` (packets/s per √s), the rest of `params` shared; `share` is
    /// the fixed-share switching probability per tick.
    pub fn new(tables: &Tables, params: ModelParams, sigmas: &[f64], share: f64) -> Self {
        let filters: Vec<BayesFilter> = sigmas
            .iter()
            .map(|&sigma| {
                BayesFilter::new(SproutModel::shared(tables, ModelParams { sigma, ..params }))
            })
            .collect();
        let m = filters.len().max(1) as f64;
        AdaptiveFilter {
            weights: vec![1.0 / m; filters.len()],
            filters,
            share,
        }
    }

    pub fn evolve(&mut self) {
        self.filters.iter_mut().for_each(BayesFilter::evolve);
    }

    pub fn observe(&mut self, obs: Observation) {
        let ll: Vec<f64> = self
            .filters
            .iter_mut()
            .map(|f| f.observe_tick(obs))
            .collect();
        let top = ll.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut sum = 0.0;
        for (w, l) in self.weights.iter_mut().zip(&ll) {
            *w *= (l - top).exp();
            sum += *w;
        }
        let m = self.weights.len() as f64;
        for w in &mut self.weights {
            *w = (1.0 - self.share) * *w / sum + self.share / m;
        }
    }

    pub fn forecast(&self) -> Forecast {
        let parts: Vec<(f64, &SproutModel, &Belief)> = self
            .weights
            .iter()
            .zip(&self.filters)
            .map(|(&w, f)| (w, f.model(), f.belief()))
            .collect();
        mixture_forecast(&parts)
    }

    /// `(σ, weight)` of each model.
    pub fn weights(&self) -> Vec<(f64, f64)> {
        self.filters
            .iter()
            .zip(&self.weights)
            .map(|(f, &w)| (f.model().params().sigma, w))
            .collect()
    }

    /// The posterior mean rate, averaged over the models.
    pub fn mean_rate(&self) -> f64 {
        self.filters
            .iter()
            .zip(&self.weights)
            .map(|(f, w)| w * f.mean_rate())
            .sum()
    }
}

/// The receiver's estimator.
#[derive(Clone, Debug)]
pub enum Estimator {
    Bayes(BayesFilter),
    Ewma(EwmaForecaster),
    Adaptive(AdaptiveFilter),
}

impl Estimator {
    /// One tick: evolve the belief, then observe the tick's count if it says anything (§3.2).
    pub fn on_tick(&mut self, obs: Option<Observation>) {
        match self {
            Estimator::Bayes(f) => {
                f.evolve();
                if let Some(o) = obs {
                    f.observe_tick(o);
                }
            }
            Estimator::Ewma(e) => {
                if let Some(o) = obs {
                    e.observe_tick(o);
                }
            }
            Estimator::Adaptive(a) => {
                a.evolve();
                if let Some(o) = obs {
                    a.observe(o);
                }
            }
        }
    }

    pub fn forecast(&self) -> Forecast {
        match self {
            Estimator::Bayes(f) => f.forecast(),
            Estimator::Ewma(e) => e.forecast(),
            Estimator::Adaptive(a) => a.forecast(),
        }
    }

    /// The current rate estimate in packets per second (posterior mean, or the EWMA).
    pub fn mean_rate(&self, tick_s: f64) -> f64 {
        match self {
            Estimator::Bayes(f) => f.mean_rate(),
            Estimator::Ewma(e) => e.rate_per_tick() / tick_s,
            Estimator::Adaptive(a) => a.mean_rate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn filter() -> BayesFilter {
        BayesFilter::new(SproutModel::shared(&Tables::new(), ModelParams::default()))
    }

    /// A Poisson draw by inversion (means here are ≤ 20 per tick).
    fn poisson(rng: &mut impl Rng, mean: f64) -> u32 {
        let u: f64 = rng.random();
        let mut k = 0u32;
        let mut p = (-mean).exp();
        let mut cdf = p;
        while cdf < u && k < 1000 {
            k += 1;
            p *= mean / f64::from(k);
            cdf += p;
        }
        k
    }

    /// One run at a constant rate: (mean of the posterior mean over seconds 2–10, fraction of
    /// those ticks whose 90% credible interval holds the rate).
    fn constant_rate(rate: f64, seed: u64) -> (f64, f64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut f = filter();
        let (mut sum, mut inside, mut n) = (0.0, 0usize, 0usize);
        for tick in 1..=500 {
            f.evolve();
            f.observe(poisson(&mut rng, rate * 0.02));
            if tick > 100 {
                sum += f.mean_rate();
                let (lo, hi) = f.credible_interval(0.9);
                inside += usize::from(lo <= rate && rate <= hi);
                n += 1;
            }
        }
        (sum / n as f64, inside as f64 / n as f64)
    }

    #[test]
    fn constant_rates_are_tracked_with_calibrated_intervals() {
        for (rate, seed) in [(200.0, 1), (500.0, 2), (900.0, 3)] {
            let (mean, coverage) = constant_rate(rate, seed);
            println!("rate {rate}: mean {mean:.1}, 90% interval coverage {coverage:.3}");
            assert!(
                (mean - rate).abs() <= 0.05 * rate,
                "rate {rate}: mean {mean}"
            );
            assert!(coverage >= 0.8, "rate {rate}: coverage {coverage}");
        }
    }

    /// Ticks of zero arrivals until every horizon of the forecast is 0, after 5 s at `rate`.
    /// `fresh` is the filter to start from.
    fn ticks_to_zero_forecast(fresh: &BayesFilter, rate: f64, seed: u64) -> Option<usize> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut f = fresh.clone();
        // 5 s at the rate, and on until the forecast is positive (at 50 packets/s a tick is
        // silent by chance 37% of the time, and one is enough to put the 5th percentile at 0).
        let mut ticks = 0;
        while ticks < 250 || f.forecast().cumulative()[7] == 0.0 {
            f.evolve();
            f.observe(poisson(&mut rng, rate * 0.02));
            ticks += 1;
            assert!(ticks < 500, "rate {rate}: no positive forecast");
        }
        (1..=20).find(|_| {
            f.evolve();
            f.observe(0);
            f.forecast().cumulative().iter().all(|&c| c == 0.0)
        })
    }

    #[test]
    fn an_outage_drives_the_forecast_to_zero_within_three_ticks() {
        for (i, rate) in [50.0, 100.0, 200.0, 400.0, 800.0, 950.0]
            .into_iter()
            .enumerate()
        {
            let ticks: Vec<Option<usize>> = (0..5)
                .map(|seed| ticks_to_zero_forecast(&filter(), rate, 7 + 10 * i as u64 + seed))
                .collect();
            println!("outage from {rate} packets/s: forecast 0 after {ticks:?} ticks (5 seeds)");
            assert!(
                ticks.iter().all(|t| t.is_some_and(|t| t <= 3)),
                "rate {rate}: {ticks:?}"
            );
        }
    }

    #[test]
    fn without_the_outage_jump_a_fast_link_takes_longer() {
        // The paper's model (deviation 3): the belief can only diffuse into the outage, a few
        // σ√τ per tick of silence.
        let paper = BayesFilter::new(SproutModel::shared(
            &Tables::new(),
            ModelParams {
                outage_entry: 0.0,
                ..ModelParams::default()
            },
        ));
        let slow = ticks_to_zero_forecast(&paper, 100.0, 7);
        let fast = ticks_to_zero_forecast(&paper, 800.0, 7);
        println!("paper's model: forecast 0 after {slow:?} ticks from 100, {fast:?} from 800");
        assert!(slow.is_some_and(|t| t <= 2), "{slow:?}");
        assert!(fast.is_some_and(|t| t > 3), "{fast:?}");
    }

    #[test]
    fn a_rate_step_is_tracked_within_half_a_second() {
        let mut later_sum = 0.0;
        let seeds = 10;
        for seed in 0..seeds {
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            let mut f = filter();
            for _ in 0..250 {
                f.evolve();
                f.observe(poisson(&mut rng, 800.0 * 0.02));
            }
            let mut within = None;
            let mut later = 0.0;
            for tick in 1..=75 {
                f.evolve();
                f.observe(poisson(&mut rng, 200.0 * 0.02));
                if within.is_none() && (f.mean_rate() - 200.0).abs() <= 0.2 * 200.0 {
                    within = Some(tick);
                }
                if tick > 25 {
                    later += f.mean_rate() / 50.0;
                }
            }
            println!(
                "seed {seed}: 800 → 200 packets/s within 20% after {within:?} ticks; then {later:.1}"
            );
            assert!(within.is_some_and(|t| t <= 25), "seed {seed}: {within:?}");
            later_sum += later;
        }
        // Once tracked, it stays on the new rate. (The posterior mean's own noise at 4 packets
        // per tick is about ±50 packets/s, so single ticks and single runs stray further.)
        let later = later_sum / seeds as f64;
        assert!((later - 200.0).abs() <= 0.1 * 200.0, "{later}");
    }

    #[test]
    fn a_lower_bound_rules_out_slower_links_and_keeps_faster_ones() {
        let mut f = filter();
        for _ in 0..100 {
            f.evolve();
            f.observe(4);
        }
        let before = f.mean_rate();
        // A tick in which the sender's queue ran dry after 4 packets: the link could have
        // delivered at least 4, so nothing moves down.
        f.evolve();
        f.observe_tick(Observation::AtLeast(4));
        assert!(
            f.mean_rate() >= before - 1.0,
            "{before} → {}",
            f.mean_rate()
        );
        // Repeated lower bounds well above the belief drag it up; an exact count of the same
        // number would too, but a bound never drags it down.
        let mut g = filter();
        for _ in 0..100 {
            g.evolve();
            g.observe(2);
        }
        for _ in 0..20 {
            g.evolve();
            g.observe_tick(Observation::AtLeast(10));
        }
        assert!(g.mean_rate() > 450.0, "{}", g.mean_rate());
        // A heartbeat-only tick (at least one packet) rules out the outage.
        let mut h = filter();
        for _ in 0..20 {
            h.evolve();
            h.observe(0);
        }
        assert!(h.outage_probability() > 0.5);
        h.evolve();
        h.observe_tick(Observation::AtLeast(1));
        assert_eq!(h.outage_probability(), 0.0);
    }

    #[test]
    fn the_forecast_grows_with_the_horizon_and_the_rate() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut prev_last = 0.0;
        for rate in [200.0, 400.0, 800.0] {
            let mut f = filter();
            for _ in 0..200 {
                f.evolve();
                f.observe(poisson(&mut rng, rate * 0.02));
            }
            let c = f.forecast();
            assert!(c.cumulative().windows(2).all(|w| w[0] <= w[1]), "{c:?}");
            // Cautious: below the mean deliveries over 8 ticks, but not absurdly so.
            let last = c.cumulative()[7];
            assert!(
                last < rate * 0.16 && last > rate * 0.16 * 0.4,
                "{rate}: {c:?}"
            );
            assert!(last > prev_last);
            prev_last = last;
        }
    }

    #[test]
    fn ewma_extrapolates_the_smoothed_count() {
        let mut e = EwmaForecaster::new(1.0 / 8.0, 8);
        assert_eq!(e.forecast().cumulative(), &[0.0; 8]);
        e.observe(8);
        assert_eq!(e.rate_per_tick(), 1.0);
        assert_eq!(e.forecast().cumulative()[4], 5.0);
        for _ in 0..200 {
            e.observe(10);
        }
        assert!((e.rate_per_tick() - 10.0).abs() < 1e-6);
        // A lower bound below the average says nothing; above it, it pulls the average up.
        e.observe_tick(Observation::AtLeast(3));
        assert!((e.rate_per_tick() - 10.0).abs() < 1e-6);
        e.observe_tick(Observation::AtLeast(18));
        assert!((e.rate_per_tick() - 11.0).abs() < 1e-6);
        let mut est = Estimator::Ewma(e);
        // Skipped ticks leave the estimate alone.
        est.on_tick(None);
        assert!((est.mean_rate(0.02) - 550.0).abs() < 1e-3);
    }

    #[test]
    fn adaptive_weights_follow_the_link_variability() {
        let params = ModelParams::default();
        let mut a = AdaptiveFilter::new(&Tables::new(), params, &[50.0, 200.0, 800.0], 0.002);
        // A constant link: the smallest σ explains it best.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..500 {
            a.evolve();
            a.observe(Observation::Exact(poisson(&mut rng, 400.0 * 0.02)));
        }
        let w = a.weights();
        println!("constant: {w:?}");
        assert!(w[0].1 > w[2].1, "{w:?}");
        // A link that jumps between 100 and 900 packets/s every 100 ms: the largest σ wins.
        for tick in 0..500 {
            let rate = if (tick / 5) % 2 == 0 { 100.0 } else { 900.0 };
            a.evolve();
            a.observe(Observation::Exact(poisson(&mut rng, rate * 0.02)));
        }
        let w = a.weights();
        println!("jumping: {w:?}");
        assert!(w[2].1 > w[0].1, "{w:?}");
        let f = a.forecast();
        assert!(f.cumulative().windows(2).all(|x| x[0] <= x[1]));
    }
}
