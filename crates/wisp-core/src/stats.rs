//! Small statistics shared by estimators and metrics, and the random draws the simulator's link
//! models use.
//!
//! The draws ([`standard_normal`], [`standard_exponential`]) are written here on purpose rather
//! than taken from `rand_distr`: wisp promises that a scenario and a seed give the same bytes of
//! output, and the rand project allows a new (0.x) release of `rand_distr` to change what a
//! distribution draws for a given generator state (a faster algorithm, a different number of
//! uniforms consumed per draw), which would silently shift every stochastic link after a
//! dependency update. Box–Muller and inversion here are two lines each, consume a fixed number
//! of uniforms per draw, and change only when this file does.

/// The quantiles and medians of the whole workspace live here, one definition each:
/// [`quantile_sorted`] (nearest rank: delays, throughputs, every reported percentile),
/// [`median_midpoint`], [`median_upper`] and [`quantile_linear`] (box plots).
///
/// The `q`-quantile (0 ≤ q ≤ 1) of `sorted` by the nearest-rank method: the smallest value
/// with at least `q·n` values at or below it. `None` for an empty slice.
///
/// Nearest rank returns an observed value (no interpolation), as Sprout's `quantiles` tool and
/// Pantheon's `np.percentile(..., interpolation='nearest')` report delays.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    let rank = (q.clamp(0.0, 1.0) * n as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, n) - 1])
}

/// Sorts `values` (NaNs last) and returns the requested quantiles.
pub fn quantiles(values: &mut [f64], qs: &[f64]) -> Vec<Option<f64>> {
    values.sort_unstable_by(f64::total_cmp);
    qs.iter().map(|&q| quantile_sorted(values, q)).collect()
}

/// The same quantiles as [`quantiles`] (nearest rank, the same values), found by selection
/// rather than a full sort: O(n) per quantile instead of O(n log n). `values` is left
/// partitioned, not sorted. For the long series of the metrics (one delay per millisecond of a
/// day's trace).
pub fn quantiles_unsorted(values: &mut [f64], qs: &[f64]) -> Vec<Option<f64>> {
    select_quantiles(values, qs, f64::total_cmp)
}

/// The nearest-rank quantiles of `values` in the order `cmp` gives (the ranks
/// [`quantile_sorted`] picks), found by selection: [`quantiles_unsorted`] for any ordered
/// type, e.g. durations as integer nanoseconds. `values` is left partitioned.
pub fn select_quantiles<T: Copy>(
    values: &mut [T],
    qs: &[f64],
    cmp: impl Fn(&T, &T) -> core::cmp::Ordering + Copy,
) -> Vec<Option<T>> {
    let n = values.len();
    if n == 0 {
        return vec![None; qs.len()];
    }
    // The rank each quantile picks (as `quantile_sorted`), selected in increasing order, each
    // within what the previous selection left above it.
    let index = |q: f64| ((q.clamp(0.0, 1.0) * n as f64).ceil() as usize).clamp(1, n) - 1;
    let mut order: Vec<usize> = (0..qs.len()).collect();
    order.sort_by_key(|&i| index(qs[i]));
    let mut out = vec![None; qs.len()];
    let mut from = 0;
    for i in order {
        let k = index(qs[i]);
        if k >= from {
            values[from..].select_nth_unstable_by(k - from, cmp);
            from = k;
        }
        out[i] = Some(values[k]);
    }
    out
}

/// The `q`-quantile of `values` (in any order; copied and sorted) by the nearest-rank method
/// ([`quantile_sorted`]).
pub fn quantile_of(values: &[f64], q: f64) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    quantile_sorted(&v, q)
}

/// The median as the mean of the two middle values for an even count (sorts `values`): the
/// usual definition, which WBest's C_e (eq. 3) and the probing tools' medians use. `None` when
/// empty.
pub fn median_midpoint(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let k = values.len();
    Some(if k % 2 == 1 {
        values[k / 2]
    } else {
        (values[k / 2 - 1] + values[k / 2]) / 2.0
    })
}

/// The upper median of `sorted`: the value at index ⌊n/2⌋ (for an even count, the greater of
/// the two middle values), as the Ping-Pair figures report T_q. `None` when empty.
pub fn median_upper(sorted: &[f64]) -> Option<f64> {
    sorted.get(sorted.len() / 2).copied()
}

/// The `q`-quantile of `sorted` by linear interpolation between the closest ranks (NumPy's
/// default), for box plots. `None` when empty.
pub fn quantile_linear(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let x = q.clamp(0.0, 1.0) * last as f64;
    let (i, f) = (x.floor() as usize, x.fract());
    Some(sorted[i] + f * (sorted[(i + 1).min(last)] - sorted[i]))
}

/// A standard normal draw from `rng` (Box–Muller; `1 − u` avoids ln 0). Two uniform draws
/// per call.
pub fn standard_normal(rng: &mut impl rand::Rng) -> f64 {
    use rand::RngExt;
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// An exponential draw with mean 1 from `rng` (inversion; `1 − u` avoids ln 0).
pub fn standard_exponential(rng: &mut impl rand::Rng) -> f64 {
    use rand::RngExt;
    -(1.0 - rng.random::<f64>()).ln()
}

/// An exponentially weighted moving average.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ewma {
    alpha: f64,
    value: Option<f64>,
}

impl Ewma {
    /// `alpha` is the weight of a new sample.
    pub fn new(alpha: f64) -> Self {
        Ewma { alpha, value: None }
    }
    /// An average that starts at `value` (the first sample is then averaged in, not copied).
    pub fn starting_at(alpha: f64, value: f64) -> Self {
        Ewma {
            alpha,
            value: Some(value),
        }
    }
    /// Adds a sample; the first sample initialises the average.
    pub fn update(&mut self, x: f64) -> f64 {
        let v = match self.value {
            None => x,
            Some(v) => v + self.alpha * (x - v),
        };
        self.value = Some(v);
        v
    }
    pub fn value(&self) -> Option<f64> {
        self.value
    }
}

/// The minimum of a signal over the last `buckets` periods of `period` (RFC 6817's base-delay
/// history: LEDBAT keeps the minimum of each of the last BASE_HISTORY minutes).
///
/// A sample opens a new bucket when it falls in a different period (`now / period`) from the
/// previous sample's, dropping the oldest bucket once there are `buckets` of them; otherwise it
/// lowers the current bucket's minimum. Periods without samples take no bucket, as in RFC 6817's
/// pseudocode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowedMin {
    period_ns: u64,
    buckets: usize,
    minima: std::collections::VecDeque<i64>,
    last_period: Option<u64>,
}

impl WindowedMin {
    /// Minima over `buckets` (at least 1) periods of `period` (at least 1 ns).
    pub fn new(period: crate::time::Duration, buckets: usize) -> Self {
        WindowedMin {
            period_ns: period.as_nanos().max(1),
            buckets: buckets.max(1),
            minima: std::collections::VecDeque::new(),
            last_period: None,
        }
    }

    /// Adds a sample taken at `now`.
    pub fn update(&mut self, now: crate::time::Instant, value: i64) {
        let period = now.as_nanos() / self.period_ns;
        if self.last_period != Some(period) {
            self.last_period = Some(period);
            if self.minima.len() == self.buckets {
                self.minima.pop_front();
            }
            self.minima.push_back(value);
        } else if let Some(tail) = self.minima.back_mut() {
            *tail = (*tail).min(value);
        }
    }

    /// The minimum over the window; `None` before any sample.
    pub fn min(&self) -> Option<i64> {
        self.minima.iter().min().copied()
    }

    /// Buckets held (at most `buckets`).
    pub fn len(&self) -> usize {
        self.minima.len()
    }

    pub fn is_empty(&self) -> bool {
        self.minima.is_empty()
    }

    /// Forgets every sample.
    pub fn reset(&mut self) {
        self.minima.clear();
        self.last_period = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Selection gives what sorting gives, at every quantile, in any order of `qs`, with ties,
    /// NaNs and the ends.
    #[test]
    fn selected_quantiles_are_the_sorted_ones() {
        let mut x = 0x2545_f491_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f64 / 10.0
        };
        let qs = [0.95, 0.0, 0.5, 1.0, 0.5, 0.01, 0.999];
        for n in [1usize, 2, 3, 10, 101, 1000, 4097] {
            let mut v: Vec<f64> = (0..n).map(|_| next()).collect();
            if n > 3 {
                v[1] = f64::NAN;
            }
            let want = quantiles(&mut v.clone(), &qs);
            let got = quantiles_unsorted(&mut v, &qs);
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "n = {n}");
        }
        assert_eq!(quantiles_unsorted(&mut [], &[0.5]), vec![None]);
    }
    use crate::time::{Duration, Instant};

    #[test]
    fn windowed_min_forgets_old_periods() {
        let mut m = WindowedMin::new(Duration::from_secs(60), 3);
        assert_eq!(m.min(), None);
        m.update(Instant::from_secs(0), 50);
        m.update(Instant::from_secs(30), 40);
        m.update(Instant::from_secs(61), 70);
        m.update(Instant::from_secs(130), 60);
        assert_eq!(m.min(), Some(40));
        // A fourth period pushes out the first (40).
        m.update(Instant::from_secs(200), 65);
        assert_eq!(m.min(), Some(60));
        // A period without samples takes no bucket.
        m.update(Instant::from_secs(1000), 80);
        assert_eq!(m.min(), Some(60));
        m.reset();
        assert_eq!(m.min(), None);
    }

    #[test]
    fn the_four_definitions_on_an_even_and_an_odd_count() {
        let even = [1.0, 2.0, 3.0, 10.0];
        let odd = [1.0, 2.0, 3.0];
        // Nearest rank: the lower middle of an even count.
        assert_eq!(quantile_of(&[10.0, 1.0, 3.0, 2.0], 0.5), Some(2.0));
        assert_eq!(median_midpoint(&mut even.clone()), Some(2.5));
        assert_eq!(median_midpoint(&mut odd.clone()), Some(2.0));
        assert_eq!(median_upper(&even), Some(3.0));
        assert_eq!(median_upper(&odd), Some(2.0));
        assert_eq!(quantile_linear(&even, 0.5), Some(2.5));
        assert_eq!(quantile_linear(&even, 1.0), Some(10.0));
        assert_eq!(quantile_linear(&even, 0.0), Some(1.0));
        for empty in [
            quantile_of(&[], 0.5),
            median_midpoint(&mut []),
            median_upper(&[]),
            quantile_linear(&[], 0.5),
        ] {
            assert_eq!(empty, None);
        }
    }

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile_sorted(&v, 0.95), Some(95.0));
        assert_eq!(quantile_sorted(&v, 0.5), Some(50.0));
        assert_eq!(quantile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(quantile_sorted(&v, 1.0), Some(100.0));
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(quantile_sorted(&[7.0], 0.95), Some(7.0));
    }

    #[test]
    fn random_draws_have_their_moments() {
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let n = 100_000;
        let x: Vec<f64> = (0..n).map(|_| standard_normal(&mut rng)).collect();
        let m = x.iter().sum::<f64>() / n as f64;
        let v = x.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / n as f64;
        assert!(m.abs() < 0.02 && (v - 1.0).abs() < 0.02, "{m} {v}");
        let e: Vec<f64> = (0..n).map(|_| standard_exponential(&mut rng)).collect();
        assert!(e.iter().all(|&a| a >= 0.0));
        assert!((e.iter().sum::<f64>() / n as f64 - 1.0).abs() < 0.02);
    }

    #[test]
    fn ewma() {
        let mut e = Ewma::new(0.5);
        assert_eq!(e.update(4.0), 4.0);
        assert_eq!(e.update(0.0), 2.0);
        let mut z = Ewma::starting_at(0.25, 0.0);
        assert_eq!(z.update(4.0), 1.0);
    }
}
