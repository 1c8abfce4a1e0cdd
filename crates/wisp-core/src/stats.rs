//! Small statistics shared by estimators and metrics.

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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn ewma() {
        let mut e = Ewma::new(0.5);
        assert_eq!(e.update(4.0), 4.0);
        assert_eq!(e.update(0.0), 2.0);
        let mut z = Ewma::starting_at(0.25, 0.0);
        assert_eq!(z.update(4.0), 1.0);
    }
}
