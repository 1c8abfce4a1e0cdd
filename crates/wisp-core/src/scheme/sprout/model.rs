//! Sprout's model of the link (§3.1–3.3): the states, the per-tick transition (Brownian motion
//! plus the sticky outage state), the Poisson observation, and the precomputed forecast tables.
//!
//! A belief is a probability vector over [`SproutModel::states`] states: state 0 is the outage
//! (λ = 0) and state *i* ≥ 1 is the rate bin [(i−1)·Δ, i·Δ) with midpoint (i − ½)·Δ, where
//! Δ = `max_rate` / `bins` (3.906 packets/s with the paper's values).
//!
//! * **Evolve** (eq. 1): λ moves by N(0, σ²·τ) per tick of τ seconds. A rate that moves below 0
//!   enters the outage; a rate that moves above `max_rate` stays in the top bin. From the outage
//!   the link escapes with probability 1 − e^(−λz·τ) per tick (an exponential outage duration),
//!   to a rate drawn from the same Brownian step started at 0 (a half-normal); otherwise it stays.
//!   From any rate the link also drops straight into the outage with probability
//!   1 − e^(−`outage_entry`·τ) (not in the paper; `sprout` deviation 3).
//!   Every row of the transition sums to one (no mass leaks). The Gaussian is cut at ±6σ√τ, so
//!   the matrix is a band and one step costs `states × (2·half + 1)` multiply-adds; the jump
//!   into the outage is one sum over the states, added outside the band.
//! * **Observe** (eq. 2): P(λ = x) ← P(λ = x) · x^k e^(−x) / k!, x the expected packets per tick
//!   ([`Observation::Exact`]); or, for a tick in which the sender's queue ran dry, the censored
//!   likelihood P(N ≥ k | x) ([`Observation::AtLeast`]). Then normalise.
//! * **Forecast** (eq. 3): for a belief *b*, P(C_n ≤ c) = Σ_s b(s)·F_n(c | s), where C_n is the
//!   packets delivered in the next *n* ticks and F_n(· | s) is their CDF when the link is
//!   certainly in state *s* now. The F_n are computed once ([`ForecastMethod`]):
//!   - `Paper` (default; §3.3 "evolving the probability distribution forward … to each of the
//!     eight ticks", as the original code does it): d_0 = δ_s, d_t = d_{t−1}·T; tick *t*'s count
//!     has law Σ_s' d_t(s')·Pois(x_s'); C_n is the convolution of ticks 1..n.
//!   - `Joint`: the exact law of the doubly stochastic process, by a backward recursion:
//!     P_0(c | s) = [c = 0], P_n(c | s) = Σ_s' T(s→s') Σ_a Pois(a; x_s')·P_{n−1}(c − a | s').
//!     The ticks share the rate's path, so their counts are correlated and C_n spreads wider.
//!
//!   The forecast for horizon *n* is the smallest *c* with P(C_n ≤ c) ≥ `quantile`, found by a
//!   search that starts from the extrapolated previous horizon, so a tick's forecast costs a
//!   few weighted sums over the states per horizon.

use crate::math::{normal_interval, poisson_ln_sf, poisson_pmf};
use crate::scheme::params::scheme_config;
use crate::tables::Tables;
use crate::time::Duration;
use crate::units::serde_as::ms;
use std::sync::Arc;

/// The largest forecast horizon, in ticks.
pub const MAX_TICKS: usize = 16;

/// Beliefs below this (after normalisation) are set to zero, which keeps the vector free of
/// denormals and lets the filter skip the states that cannot matter.
const FLUSH: f64 = 1e-30;

/// Exact counts up to this use the precomputed likelihood table.
const LIK_TABLE_COUNTS: usize = 64;

/// The Gaussian step is cut at this many standard deviations.
const BAND_SIGMAS: f64 = 6.0;

scheme_config! {
    /// The model's parameters. `Default` is the paper's (§3.1, §3.3).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct ModelParams {
        /// σ, the rate's Brownian noise power, packets/s per √s.
        // 200.
        pub sigma: f64,
        /// λz, the outage escape rate per second.
        // 1.
        pub outage_escape: f64,
        /// The rate per second at which the link drops into the outage from any rate (deviation 3).
        // Besides diffusing below zero (0.05: not in the paper; see the module doc of `sprout`).
        pub outage_entry: f64,
        /// Rate bins besides the outage state.
        // 256.
        pub bins: usize,
        /// The largest rate, MTU-sized packets per second.
        // 1000.
        pub max_rate: f64,
        /// The inference tick, ms.
        // 20 ms.
        #[serde(rename = "tick-ms", with = "ms")]
        pub tick: Duration,
        /// The forecast horizon, ticks.
        // 8.
        pub ticks: usize,
        /// The forecast's quantile.
        // 0.05: the 5th percentile.
        pub quantile: f64,
        /// `paper` (ticks' counts independent given the state) or `joint` (the exact law).
        // How the forecast tables treat the rate's drift over the horizon.
        #[serde(rename = "forecast")]
        pub method: ForecastMethod,
    }
}

/// How the forecast's distribution of cumulative deliveries is computed (§3.3):
/// `forecast=paper|joint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ForecastMethod {
    /// As the paper describes it (and the original code does it): from a certain state, evolve
    /// the distribution on λ to each tick of the horizon, mix the Poisson counts over it to get
    /// that tick's count distribution, and convolve the ticks' distributions. The ticks'
    /// counts are treated as independent given the state now.
    #[default]
    Paper,
    /// The exact law of the doubly stochastic model: the rate's path is shared by the ticks, so
    /// their counts are positively correlated and the cumulative spread is wider (a lower, more
    /// cautious quantile).
    Joint,
}

impl Default for ModelParams {
    fn default() -> Self {
        ModelParams {
            bins: 256,
            max_rate: 1000.0,
            sigma: 200.0,
            outage_escape: 1.0,
            outage_entry: 0.05,
            tick: Duration::from_millis(20),
            ticks: 8,
            quantile: 0.05,
            method: ForecastMethod::Paper,
        }
    }
}

impl ModelParams {
    fn key(&self) -> [u64; 9] {
        [
            self.method as u64,
            self.bins as u64,
            self.max_rate.to_bits(),
            self.sigma.to_bits(),
            self.outage_escape.to_bits(),
            self.outage_entry.to_bits(),
            self.tick.as_nanos(),
            self.ticks as u64,
            self.quantile.to_bits(),
        ]
    }

    /// Checks the ranges the model needs.
    pub fn validate(&self) -> Result<(), &'static str> {
        if !(2..=4096).contains(&self.bins) {
            return Err("bins must be 2 to 4096");
        }
        if !(self.max_rate.is_finite() && self.max_rate > 0.0 && self.max_rate <= 1e5) {
            return Err("max-rate must be in (0, 100000] packets/s");
        }
        if !(self.sigma.is_finite() && self.sigma > 0.0) {
            return Err("sigma must be positive");
        }
        if !(self.outage_escape.is_finite() && self.outage_escape >= 0.0) {
            return Err("the outage escape rate must not be negative");
        }
        if !(self.outage_entry.is_finite() && self.outage_entry >= 0.0 && self.outage_entry < 100.0)
        {
            return Err("the outage entry rate must be in [0, 100) per second");
        }
        if self.tick.is_zero() || self.tick > Duration::from_secs(1) {
            return Err("the tick must be in (0, 1 s]");
        }
        if !(1..=MAX_TICKS).contains(&self.ticks) {
            return Err("ticks must be 1 to 16");
        }
        if !(self.quantile > 0.0 && self.quantile < 1.0) {
            return Err("the quantile must be in (0, 1)");
        }
        if self.max_count() > 20_000 {
            return Err("max-rate × tick × ticks is too large (at most 20000 packets)");
        }
        Ok(())
    }

    /// The largest forecast count the tables hold: every state's expected deliveries over the
    /// horizon are at most this (the rate never exceeds `max_rate`), so its CDF at this count is
    /// past any lower quantile (checked in the tests).
    fn max_count(&self) -> usize {
        (self.max_rate * self.tick.as_secs_f64() * self.ticks as f64).ceil() as usize + 1
    }
}

/// What one tick's count says about the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observation {
    /// The link delivered exactly this many packets: the sender kept it busy all tick.
    Exact(u32),
    /// The link delivered this many and could have delivered more: the sender's queue ran dry
    /// during the tick (censored; the likelihood is P(N ≥ k | λ)).
    AtLeast(u32),
}

/// Cumulative deliveries forecast for the next 1..=`len` ticks, in packets.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Forecast {
    cumulative: [f64; MAX_TICKS],
    len: u8,
}

impl Forecast {
    /// A forecast from cumulative counts (at most [`MAX_TICKS`]; extra values are ignored).
    pub fn from_cumulative(counts: &[f64]) -> Self {
        let mut f = Forecast::default();
        let n = counts.len().min(MAX_TICKS);
        f.cumulative[..n].copy_from_slice(&counts[..n]);
        f.len = n as u8;
        f
    }

    /// `[C_1, …, C_n]`: packets expected through the end of each of the next ticks.
    pub fn cumulative(&self) -> &[f64] {
        &self.cumulative[..self.len as usize]
    }
}

/// Sprout's link model with its precomputed tables. Build it once per parameter set
/// ([`SproutModel::shared`]); it is immutable and shared between flows.
#[derive(Debug)]
pub struct SproutModel {
    params: ModelParams,
    /// Packets per tick in each state (0 in the outage).
    mean: Vec<f64>,
    /// ln(mean) (−∞ in the outage).
    ln_mean: Vec<f64>,
    /// Likelihoods of counts up to `LIK_TABLE_COUNTS`, exact ([0]) and lower bounds ([1]):
    /// lik[i][k·states + s] = exp(ln L_i(k | x_s) − lik_scale[i][k]), where lik_scale[i][k] is
    /// the largest log-likelihood over the states (so every row peaks at 1).
    lik: [Vec<f64>; 2],
    lik_scale: [Vec<f64>; 2],
    /// Half-width of the transition band, in states.
    half: usize,
    /// The probability per tick of dropping into the outage from any rate state (the band
    /// below holds the rest of those rows, scaled by 1 − jump).
    jump: f64,
    /// The transition in gather form: new[d] = Σ_w old[d − half + w] · band[d·width + w].
    band: Vec<f64>,
    /// The forecast tables: cdf[(n·(max_count+1) + c)·states + s] = F_{n+1}(c | s).
    cdf: Vec<f64>,
    max_count: usize,
}

/// The identity of a model's parameters (their exact bits), as a [`Tables`] key.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ModelKey([u64; 9]);

impl SproutModel {
    /// Computes the model (about 65 ms in release with the paper's parameters).
    ///
    /// # Panics
    /// If `params` fails [`ModelParams::validate`].
    pub fn new(params: ModelParams) -> Self {
        if let Err(e) = params.validate() {
            panic!("invalid Sprout model parameters: {e}");
        }
        let n = params.bins + 1;
        let dt = params.tick.as_secs_f64();
        let delta = params.max_rate / params.bins as f64;
        let mean: Vec<f64> = (0..n)
            .map(|s| {
                if s == 0 {
                    0.0
                } else {
                    (s as f64 - 0.5) * delta * dt
                }
            })
            .collect();
        let ln_mean: Vec<f64> = mean.iter().map(|m| m.ln()).collect();
        let mut lik = [
            vec![0.0; (LIK_TABLE_COUNTS + 1) * n],
            vec![0.0; (LIK_TABLE_COUNTS + 1) * n],
        ];
        let mut lik_scale = [
            vec![0.0; LIK_TABLE_COUNTS + 1],
            vec![0.0; LIK_TABLE_COUNTS + 1],
        ];
        for (i, (table, scale)) in lik.iter_mut().zip(&mut lik_scale).enumerate() {
            for k in 0..=LIK_TABLE_COUNTS {
                let ll = |s: usize| {
                    if i == 0 {
                        exact_ln_lik(&mean, &ln_mean, s, k as f64)
                    } else {
                        poisson_ln_sf(k as u64, mean[s])
                    }
                };
                let top = (0..n).map(ll).fold(f64::NEG_INFINITY, f64::max);
                scale[k] = top;
                for s in 0..n {
                    table[k * n + s] = (ll(s) - top).exp();
                }
            }
        }
        let step = params.sigma * dt.sqrt();
        let half = (((BAND_SIGMAS * step) / delta).ceil() as usize + 1).min(n - 1);
        let jump = entry_probability(&params);
        let trans = transition(&params, n, delta, step, half, jump);
        let width = 2 * half + 1;
        let mut band = vec![0.0; n * width];
        for d in 0..n {
            for w in 0..width {
                let s = d as isize - half as isize + w as isize;
                if (0..n as isize).contains(&s) {
                    band[d * width + w] = trans[s as usize * n + d];
                }
            }
        }
        let max_count = params.max_count();
        let cdf = match params.method {
            ForecastMethod::Paper => paper_tables(&params, &mean, &trans, jump, n, half, max_count),
            ForecastMethod::Joint => joint_tables(&params, &mean, &trans, jump, n, half, max_count),
        };
        SproutModel {
            params,
            mean,
            ln_mean,
            lik,
            lik_scale,
            half,
            jump,
            band,
            cdf,
            max_count,
        }
    }

    /// The model for `params` from `tables`: computed on first use and shared afterwards by
    /// every flow given the same [`Tables`] (the model is a pure function of the parameters).
    pub fn shared(tables: &Tables, params: ModelParams) -> Arc<SproutModel> {
        tables.get_or_make(ModelKey(params.key()), |_| SproutModel::new(params))
    }

    pub fn params(&self) -> &ModelParams {
        &self.params
    }

    /// Number of states (bins + 1).
    pub fn states(&self) -> usize {
        self.mean.len()
    }

    /// The rate of state `s` in packets per second (its bin's midpoint; 0 for the outage).
    pub fn rate(&self, s: usize) -> f64 {
        self.mean[s] / self.params.tick.as_secs_f64()
    }

    /// The lower and upper edge of state `s` in packets per second (0, 0 for the outage).
    pub fn edges(&self, s: usize) -> (f64, f64) {
        if s == 0 {
            return (0.0, 0.0);
        }
        let delta = self.params.max_rate / self.params.bins as f64;
        ((s - 1) as f64 * delta, s as f64 * delta)
    }

    /// The uniform prior of §3.1 ("at program startup, all values of λ are equally probable"),
    /// over the outage and every bin.
    pub fn prior(&self) -> Belief {
        let n = self.states();
        Belief {
            p: vec![1.0 / n as f64; n],
            lo: 0,
            hi: n,
            scratch: vec![0.0; n + 2 * self.half],
        }
    }

    /// Eq. 1: one tick of Brownian motion and outage persistence.
    pub fn evolve(&self, b: &mut Belief) {
        let n = self.states();
        let h = self.half;
        let width = 2 * h + 1;
        // Pad the old belief with `half` zeros on both sides so the gather needs no bounds.
        let pad = &mut b.scratch;
        pad.fill(0.0);
        pad[h + b.lo..h + b.hi].copy_from_slice(&b.p[b.lo..b.hi]);
        let mut lo = b.lo.saturating_sub(h);
        let hi = (b.hi + h).min(n);
        // Mass that may jump into the outage: every rate state's.
        let rates: f64 = if self.jump > 0.0 {
            b.p[b.lo.max(1)..b.hi].iter().sum()
        } else {
            0.0
        };
        b.p[b.lo..b.hi].fill(0.0);
        for d in lo..hi {
            let row = &self.band[d * width..(d + 1) * width];
            let old = &pad[d..d + width];
            b.p[d] = dot(row, old);
        }
        if rates > 0.0 {
            // State 0 is zero if it was outside the range (beliefs outside it are zero).
            lo = 0;
            b.p[0] += self.jump * rates;
        }
        b.lo = lo;
        b.hi = hi;
    }

    /// Eq. 2: multiplies the belief by the likelihood of the tick's count and normalises.
    /// Returns ln P(observation | belief before it), up to a constant that is the same for
    /// every model with these bins (the adaptive filter compares models by it).
    pub fn observe(&self, b: &mut Belief, obs: Observation) -> f64 {
        let n = self.states();
        let (kind, k) = match obs {
            Observation::Exact(k) => (0, k),
            Observation::AtLeast(k) => (1, k),
        };
        let k = k as usize;
        if k <= LIK_TABLE_COUNTS {
            // The common case, from the table (no exp per state).
            let row = &self.lik[kind][k * n + b.lo..k * n + b.hi];
            let p = &mut b.p[b.lo..b.hi];
            let mut sum = 0.0;
            for (v, l) in p.iter_mut().zip(row) {
                *v *= l;
                sum += *v;
            }
            if sum > 1e-250 {
                b.normalise(sum);
                return self.lik_scale[kind][k] + sum.ln();
            }
            // Underflow: undo and take the scaled path below.
            for (v, &l) in p.iter_mut().zip(row) {
                if l > 0.0 {
                    *v /= l;
                }
            }
        }
        // Log-likelihoods of the states the belief allows, scaled by the largest.
        let (lo, hi) = (b.lo, b.hi);
        let ll = &mut b.scratch[lo..hi];
        let mut top = f64::NEG_INFINITY;
        for ((s, l), &p) in (lo..hi).zip(ll.iter_mut()).zip(&b.p[lo..hi]) {
            *l = if p > 0.0 {
                match obs {
                    Observation::Exact(k) => {
                        exact_ln_lik(&self.mean, &self.ln_mean, s, f64::from(k))
                    }
                    Observation::AtLeast(k) => poisson_ln_sf(u64::from(k), self.mean[s]),
                }
            } else {
                f64::NEG_INFINITY
            };
            top = top.max(*l);
        }
        if top == f64::NEG_INFINITY {
            // Nothing the belief allows could have produced this count: start over.
            *b = self.prior();
            return self.observe(b, obs);
        }
        let mut sum = 0.0;
        for (p, l) in b.p[lo..hi].iter_mut().zip(&b.scratch[lo..hi]) {
            *p *= (l - top).exp();
            sum += *p;
        }
        b.normalise(sum);
        top + sum.ln()
    }

    /// Eq. 3: the `quantile` forecast of cumulative deliveries for 1..=ticks ticks.
    pub fn forecast(&self, b: &Belief) -> Forecast {
        mixture_forecast(&[(1.0, self, b)])
    }

    /// Σ_s b(s)·F_t(c | s).
    fn cdf_at(&self, b: &Belief, t: usize, c: usize) -> f64 {
        let n = self.states();
        let at = (t * (self.max_count + 1) + c) * n;
        let row = &self.cdf[at + b.lo..at + b.hi];
        dot(&b.p[b.lo..b.hi], row)
    }

    /// F_n(c | s), for tests and diagnostics.
    pub fn forecast_cdf(&self, ticks: usize, count: usize, s: usize) -> f64 {
        let c = count.min(self.max_count);
        self.cdf[((ticks - 1) * (self.max_count + 1) + c) * self.states() + s]
    }
}

/// The forecast of a weighted mixture of beliefs, each over its own model (weights summing to
/// one; the models must share bins, rate range, tick, horizon and quantile, so only σ or λz may
/// differ).
pub(crate) fn mixture_forecast(parts: &[(f64, &SproutModel, &Belief)]) -> Forecast {
    let Some(&(_, first, _)) = parts.first() else {
        return Forecast::default();
    };
    let ticks = first.params.ticks;
    let max_count = first.max_count;
    let q = first.params.quantile;
    debug_assert!(parts.iter().all(|(_, m, _)| m.max_count == max_count
        && m.params.ticks == ticks
        && m.states() == first.states()));
    let mut out = [0.0; MAX_TICKS];
    let mut found = [0usize; MAX_TICKS];
    for t in 0..ticks {
        // The smallest c with P(C_t ≤ c) ≥ q. C_{t+1} ≥ C_t, so it is at least the previous
        // horizon's answer, and the answers grow about linearly with the horizon: search
        // outward from the extrapolation.
        let at_least = if t == 0 { 0 } else { found[t - 1] };
        let guess = match t {
            0 => max_count / (2 * ticks),
            1 => 2 * found[0],
            _ => 2 * found[t - 1] - found[t - 2],
        };
        let reaches = |c: usize| -> bool {
            let p: f64 = parts.iter().map(|&(w, m, b)| w * m.cdf_at(b, t, c)).sum();
            p >= q
        };
        found[t] = first_true(at_least, max_count, guess, reaches);
        out[t] = found[t] as f64;
    }
    Forecast::from_cumulative(&out[..ticks])
}

/// The smallest c in [lo, hi] with `f(c)` (hi if none), for `f` false then true: a galloping
/// search outward from `guess`, then bisection. Two evaluations when the guess is right.
fn first_true(mut lo: usize, mut hi: usize, guess: usize, f: impl Fn(usize) -> bool) -> usize {
    let top = hi;
    let g = guess.clamp(lo, hi);
    let mut step = 1;
    if f(g) {
        hi = g;
        while hi > lo {
            let c = hi.saturating_sub(step).max(lo);
            if f(c) {
                hi = c;
                step *= 2;
            } else {
                lo = c + 1;
                break;
            }
        }
    } else {
        lo = g + 1;
        while lo < hi {
            let c = (lo + step - 1).min(hi);
            if f(c) {
                hi = c;
                break;
            }
            lo = c + 1;
            step *= 2;
        }
    }
    while lo < hi {
        let mid = (lo + hi) / 2;
        if f(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo.min(top)
}

/// A probability vector over a model's states, with the range of states that may be nonzero.
#[derive(Clone, Debug)]
pub struct Belief {
    p: Vec<f64>,
    /// p is zero outside lo..hi.
    lo: usize,
    hi: usize,
    scratch: Vec<f64>,
}

impl Belief {
    /// P(state = s).
    pub fn probabilities(&self) -> &[f64] {
        &self.p
    }

    /// Divides by `sum` and clears what is negligible.
    fn normalise(&mut self, sum: f64) {
        let inv = 1.0 / sum;
        let (mut lo, mut hi) = (usize::MAX, 0);
        for s in self.lo..self.hi {
            let v = self.p[s] * inv;
            if v < FLUSH {
                self.p[s] = 0.0;
            } else {
                self.p[s] = v;
                lo = lo.min(s);
                hi = s + 1;
            }
        }
        self.lo = lo.min(hi);
        self.hi = hi;
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    // Four accumulators let the compiler vectorise.
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0; 4];
    let ca = a.chunks_exact(4);
    let cb = b.chunks_exact(4);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..4 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// ln(x^k e^(−x)) in state s (−ln k!, the same for every state, is left out).
fn exact_ln_lik(mean: &[f64], ln_mean: &[f64], s: usize, k: f64) -> f64 {
    if s == 0 {
        if k == 0.0 { 0.0 } else { f64::NEG_INFINITY }
    } else {
        k * ln_mean[s] - mean[s]
    }
}

/// The dense transition T[s·n + d] = P(state d next tick | state s now), cut to the band. The
/// rate rows hold 1 − `jump`; the jump into the outage is added outside the band.
fn transition(
    params: &ModelParams,
    n: usize,
    delta: f64,
    step: f64,
    half: usize,
    jump: f64,
) -> Vec<f64> {
    let dt = params.tick.as_secs_f64();
    let mut t = vec![0.0; n * n];
    let lower = |d: usize| (d - 1) as f64 * delta;
    let upper = |d: usize| {
        if d == n - 1 {
            f64::INFINITY
        } else {
            d as f64 * delta
        }
    };
    for s in 0..n {
        let row = &mut t[s * n..(s + 1) * n];
        let band = s.saturating_sub(half)..(s + half + 1).min(n);
        if s == 0 {
            // §3.1: outages last Exp(λz); on escape the rate takes a Brownian step from 0.
            let stay = (-params.outage_escape * dt).exp();
            row[0] = stay;
            let mut escape = vec![0.0; n];
            for d in band.clone().filter(|&d| d > 0) {
                escape[d] = normal_interval(lower(d) / step, upper(d) / step);
            }
            let total: f64 = escape.iter().sum();
            for d in 1..n {
                row[d] = (1.0 - stay) * escape[d] / total;
            }
        } else {
            let r = (s as f64 - 0.5) * delta;
            for d in band {
                row[d] = if d == 0 {
                    normal_interval(f64::NEG_INFINITY, -r / step)
                } else {
                    normal_interval((lower(d) - r) / step, (upper(d) - r) / step)
                };
            }
            let total: f64 = row.iter().sum();
            row.iter_mut().for_each(|v| *v *= (1.0 - jump) / total);
        }
    }
    t
}

/// The probability per tick that a link at any rate drops into the outage (`outage_entry` as
/// a Poisson hazard). The transition's rate rows hold the other 1 − this; the jump itself is
/// added outside the band (state 0 is far from most rows).
fn entry_probability(params: &ModelParams) -> f64 {
    1.0 - (-params.outage_entry * params.tick.as_secs_f64()).exp()
}

/// Pois(a; x_s) for a ≤ max_count, cut where it is negligible.
fn poisson_rows(mean: &[f64], max_count: usize) -> Vec<Vec<f64>> {
    mean.iter()
        .map(|&m| {
            let mut v: Vec<f64> = (0..=max_count as u64).map(|a| poisson_pmf(a, m)).collect();
            while v.len() > 1 && *v.last().unwrap_or(&0.0) < 1e-300 && (v.len() as f64) > m {
                v.pop();
            }
            v
        })
        .collect()
}

/// Eq. 3 as the paper computes it, for every certain state s now: d_0 = δ_s; for each tick
/// t = 1..=ticks, d_t = d_{t−1}·T (evolve), the tick's count has law Σ_s' d_t(s')·Pois(x_s'),
/// and the cumulative count is the convolution of the ticks' laws.
fn paper_tables(
    params: &ModelParams,
    mean: &[f64],
    trans: &[f64],
    jump: f64,
    n: usize,
    half: usize,
    max_count: usize,
) -> Vec<f64> {
    let stride = max_count + 1;
    let pois = poisson_rows(mean, max_count);
    let mut cdf = vec![0.0; params.ticks * stride * n];
    let mut d = vec![0.0; n];
    let mut next = vec![0.0; n];
    let mut tick = vec![0.0; stride];
    let mut cum = vec![0.0; stride];
    let mut conv = vec![0.0; stride];
    for s0 in 0..n {
        d.fill(0.0);
        d[s0] = 1.0;
        let (mut lo, mut hi) = (s0, s0 + 1);
        cum.fill(0.0);
        cum[0] = 1.0;
        for t in 0..params.ticks {
            next.fill(0.0);
            for s in lo..hi {
                if d[s] == 0.0 {
                    continue;
                }
                for dst in s.saturating_sub(half)..(s + half + 1).min(n) {
                    next[dst] += d[s] * trans[s * n + dst];
                }
            }
            if jump > 0.0 {
                next[0] += jump * d[lo.max(1)..hi].iter().sum::<f64>();
            }
            std::mem::swap(&mut d, &mut next);
            lo = if jump > 0.0 {
                0
            } else {
                lo.saturating_sub(half)
            };
            hi = (hi + half).min(n);
            tick.fill(0.0);
            for s in lo..hi {
                if d[s] < 1e-300 {
                    continue;
                }
                for (a, &pa) in pois[s].iter().enumerate() {
                    tick[a] += d[s] * pa;
                }
            }
            conv.fill(0.0);
            for (a, &pa) in tick.iter().enumerate() {
                if pa == 0.0 {
                    continue;
                }
                for c in a..stride {
                    conv[c] += pa * cum[c - a];
                }
            }
            std::mem::swap(&mut cum, &mut conv);
            let mut acc = 0.0;
            for c in 0..stride {
                acc += cum[c];
                cdf[(t * stride + c) * n + s0] = acc;
            }
        }
    }
    cdf
}

/// Eq. 3 exactly: the backward recursion of the module doc over the joint law of the rate's
/// path and the counts.
fn joint_tables(
    params: &ModelParams,
    mean: &[f64],
    trans: &[f64],
    jump: f64,
    n: usize,
    half: usize,
    max_count: usize,
) -> Vec<f64> {
    let stride = max_count + 1;
    let pois = poisson_rows(mean, max_count);
    // prev[s·stride + c] = P_{k}(c | s); start from P_0 = δ(c).
    let mut prev = vec![0.0; n * stride];
    for s in 0..n {
        prev[s * stride] = 1.0;
    }
    let mut q = vec![0.0; n * stride];
    let mut next = vec![0.0; n * stride];
    let mut cdf = vec![0.0; params.ticks * stride * n];
    for t in 0..params.ticks {
        // Q(c | s') = Σ_a Pois(a; x_s') P_{t}(c − a | s'): the tick's arrivals in state s'.
        for s in 0..n {
            let p = &prev[s * stride..(s + 1) * stride];
            let out = &mut q[s * stride..(s + 1) * stride];
            out.fill(0.0);
            for (a, &pa) in pois[s].iter().enumerate() {
                if pa == 0.0 {
                    continue;
                }
                for c in a..stride {
                    out[c] += pa * p[c - a];
                }
            }
        }
        // P_{t+1}(c | s) = Σ_s' T(s→s') Q(c | s'): the state first moves into the next tick.
        for s in 0..n {
            let out = &mut next[s * stride..(s + 1) * stride];
            out.fill(0.0);
            for d in s.saturating_sub(half)..(s + half + 1).min(n) {
                let w = trans[s * n + d];
                if w == 0.0 {
                    continue;
                }
                let qd = &q[d * stride..(d + 1) * stride];
                for c in 0..stride {
                    out[c] += w * qd[c];
                }
            }
            if s > 0 && jump > 0.0 {
                for c in 0..stride {
                    out[c] += jump * q[c];
                }
            }
            let mut acc = 0.0;
            for c in 0..stride {
                acc += out[c];
                cdf[(t * stride + c) * n + s] = acc;
            }
        }
        std::mem::swap(&mut prev, &mut next);
    }
    cdf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Arc<SproutModel> {
        SproutModel::shared(&Tables::new(), ModelParams::default())
    }

    /// The paper's model: no jump into the outage, only diffusion.
    fn paper_model() -> Arc<SproutModel> {
        SproutModel::shared(
            &Tables::new(),
            ModelParams {
                outage_entry: 0.0,
                ..ModelParams::default()
            },
        )
    }

    /// The belief that the link is in state `s`.
    fn certain(m: &SproutModel, s: usize) -> Belief {
        let mut b = m.prior();
        b.p.fill(0.0);
        b.p[s] = 1.0;
        b.lo = s;
        b.hi = s + 1;
        b
    }

    #[test]
    fn paper_constants() {
        let m = model();
        assert_eq!(m.states(), 257);
        assert_eq!(m.rate(0), 0.0);
        assert!((m.rate(1) - 1.953125).abs() < 1e-9);
        assert!((m.rate(256) - 998.046875).abs() < 1e-9);
        // σ√τ = 200·√0.02 = 28.28 packets/s = 7.24 bins; cut at 6σ.
        assert_eq!(m.half, 45);
        assert_eq!(m.max_count, 161);
    }

    #[test]
    fn transition_conserves_mass_and_keeps_outages() {
        let m = model();
        let n = m.states();
        // Column sums of the gather band = row sums of T = 1.
        let width = 2 * m.half + 1;
        for s in 0..n {
            let mut total = 0.0;
            for d in 0..n {
                let w = s as isize - d as isize + m.half as isize;
                if (0..width as isize).contains(&w) {
                    total += m.band[d * width + w as usize];
                }
            }
            // Rates also jump into the outage, outside the band.
            let total = total + if s > 0 { m.jump } else { 0.0 };
            assert!((total - 1.0).abs() < 1e-12, "state {s}: {total}");
        }
        // 0.05 per second: 1 − e^(−0.001) per tick.
        assert!((m.jump - (1.0 - (-0.001f64).exp())).abs() < 1e-15);
        let mut b = certain(&m, 200);
        m.evolve(&mut b);
        assert!((b.p[0] - m.jump).abs() < 1e-15 && b.lo == 0);
        assert!((b.p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // The rest of this test is about the paper's diffusion alone.
        let m = paper_model();
        // The outage stays with probability e^(−λz·τ) = e^(−0.02).
        assert!((m.band[m.half] - (-0.02f64).exp()).abs() < 1e-12);
        // A mid-range rate moves symmetrically: mean unchanged after one step.
        let mut b = certain(&m, 128);
        m.evolve(&mut b);
        let mean: f64 = (0..n).map(|s| b.p[s] * m.rate(s)).sum();
        assert!((mean - m.rate(128)).abs() < 1e-9, "{mean}");
        let var: f64 = (0..n)
            .map(|s| b.p[s] * (m.rate(s) - m.rate(128)).powi(2))
            .sum();
        // Var = σ²τ + Δ²/12 from binning (800 + 1.27).
        assert!((var - 801.27).abs() < 2.0, "{var}");
    }

    #[test]
    fn forecast_tables_are_cdfs_that_reach_the_quantile() {
        let m = model();
        let n = m.states();
        for t in 1..=8 {
            for s in 0..n {
                let mut prev = 0.0;
                for c in 0..=m.max_count {
                    let v = m.forecast_cdf(t, c, s);
                    assert!(v >= prev - 1e-15 && v <= 1.0 + 1e-12, "t {t} s {s} c {c}");
                    prev = v;
                }
                assert!(
                    m.forecast_cdf(t, m.max_count, s) >= 0.5,
                    "the tables must reach past the 5th percentile (t {t}, s {s})"
                );
            }
        }
        // Certain outage: the link stays out for the next tick with probability e^(−λz·τ), and
        // the rate it escapes to is tiny.
        assert!(m.forecast_cdf(1, 0, 0) >= (-0.02f64).exp());
        // One tick from state s: the next state's Poisson mixture, whose mean is x_s (in the
        // paper's model; the jump into the outage lowers it by the jump's probability).
        let with_jump = m;
        let m = paper_model();
        let s = 100;
        let mean_jump: f64 = (0..=m.max_count)
            .map(|c| 1.0 - with_jump.forecast_cdf(1, c, s))
            .sum();
        assert!(
            (mean_jump - (1.0 - with_jump.jump) * m.mean[s]).abs() < 0.01,
            "{mean_jump}"
        );
        let mean: f64 = (0..=m.max_count)
            .map(|c| 1.0 - m.forecast_cdf(1, c, s))
            .sum();
        assert!((mean - m.mean[s]).abs() < 0.01, "{mean} vs {}", m.mean[s]);
        // Eight ticks: eight times as much.
        let mean8: f64 = (0..=m.max_count)
            .map(|c| 1.0 - m.forecast_cdf(8, c, s))
            .sum();
        assert!((mean8 - 8.0 * m.mean[s]).abs() < 0.05, "{mean8}");
    }

    #[test]
    fn observation_is_bayes_rule_with_the_poisson_likelihood() {
        let m = model();
        let n = m.states();
        // Counts inside the likelihood table and beyond it take different paths.
        for k in [0u32, 1, 10, 64, 65, 90] {
            let mut b = m.prior();
            m.evolve(&mut b);
            let prior = b.p.clone();
            let ev = m.observe(&mut b, Observation::Exact(k));
            let joint: Vec<f64> = (0..n)
                .map(|s| prior[s] * crate::math::poisson_pmf(u64::from(k), m.mean[s]))
                .collect();
            let z: f64 = joint.iter().sum();
            for (s, j) in joint.iter().enumerate() {
                let want = if j / z < FLUSH { 0.0 } else { j / z };
                assert!(
                    (b.p[s] - want).abs() <= 1e-12 * want.max(1e-300),
                    "k {k} s {s}"
                );
            }
            // The evidence is ln P(k) + ln k! (the constant left out).
            let want = z.ln() + crate::math::ln_factorial(u64::from(k));
            assert!((ev - want).abs() < 1e-9, "k {k}: {ev} vs {want}");
        }
        // A lower bound: P(N ≥ k | x) = 1 − P(N < k | x), from the table and beyond it.
        for k in [1u32, 3, 20, 64, 70] {
            let mut b = m.prior();
            let prior = b.p.clone();
            m.observe(&mut b, Observation::AtLeast(k));
            let joint: Vec<f64> = (0..n)
                .map(|s| {
                    let at: f64 = (u64::from(k)..400)
                        .map(|j| crate::math::poisson_pmf(j, m.mean[s]))
                        .sum();
                    prior[s] * at
                })
                .collect();
            let z: f64 = joint.iter().sum();
            for (s, j) in joint.iter().enumerate() {
                let want = if j / z < FLUSH { 0.0 } else { j / z };
                assert!(
                    (b.p[s] - want).abs() <= 1e-9 * want.max(1e-300),
                    "k {k} s {s}: {} vs {want}",
                    b.p[s]
                );
            }
            assert_eq!(b.p[0], 0.0);
        }
    }

    #[test]
    fn galloping_search_finds_the_first_true() {
        for n in [0usize, 1, 2, 7, 40] {
            for answer in 0..=n + 1 {
                for guess in 0..=n + 3 {
                    let calls = std::cell::Cell::new(0);
                    let got = first_true(0, n, guess, |c| {
                        calls.set(calls.get() + 1);
                        c >= answer
                    });
                    assert_eq!(got, answer.min(n), "n {n} answer {answer} guess {guess}");
                    if guess == answer && answer > 0 && answer <= n {
                        assert_eq!(calls.get(), 2);
                    }
                }
            }
        }
    }

    #[test]
    fn the_forecast_is_monotone_in_the_horizon() {
        let m = model();
        for s in [0, 1, 30, 128, 256] {
            let f = m.forecast(&certain(&m, s));
            assert_eq!(f.cumulative().len(), 8);
            assert!(f.cumulative().windows(2).all(|w| w[0] <= w[1]), "{f:?}");
        }
        let f = m.forecast(&m.prior());
        assert!(f.cumulative().windows(2).all(|w| w[0] <= w[1]), "{f:?}");
    }
}
