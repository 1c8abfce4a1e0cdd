//! Special functions and distributions shared by the estimators.
//!
//! The standard library has no `erf` or `lgamma`, so they live here once, accurate to about
//! 1e-13 (checked against reference values in the tests):
//!
//! * [`erf`], [`erfc`]: the Maclaurin series of erf for |x| < 2.5 and the continued fraction of
//!   erfc beyond (Abramowitz & Stegun 7.1.5 and 7.1.14);
//! * [`normal_cdf`]: Φ(x) = erfc(−x/√2)/2, and [`normal_interval`] for P(a < Z ≤ b) in the tails;
//! * [`ln_factorial`]: exact sums up to 20!, Stirling's series beyond (A&S 6.1.41);
//! * [`poisson_pmf`], [`poisson_ln_pmf`]: P(K = k) for K ~ Poisson(mean); [`poisson_ln_sf`]:
//!   ln P(K ≥ k).

use core::f64::consts::{FRAC_1_SQRT_2, PI};

/// 2/√π.
const FRAC_2_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;

/// The error function erf(x) = 2/√π ∫₀ˣ e^(−t²) dt.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x.abs() < 2.5 {
        erf_series(x)
    } else {
        x.signum() * (1.0 - erfc_fraction(x.abs()))
    }
}

/// The complementary error function erfc(x) = 1 − erf(x), accurate in the upper tail.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x >= 2.5 {
        erfc_fraction(x)
    } else if x <= -2.5 {
        2.0 - erfc_fraction(-x)
    } else {
        1.0 - erf_series(x)
    }
}

/// erf(x) = 2/√π Σ (−1)ⁿ x^(2n+1) / (n! (2n+1)) (A&S 7.1.5), for |x| < 2.5.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x; // (−1)ⁿ x^(2n+1) / n!
    let mut sum = x;
    let mut n = 0.0;
    loop {
        n += 1.0;
        term *= -x2 / n;
        let add = term / (2.0 * n + 1.0);
        sum += add;
        if add.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    FRAC_2_SQRT_PI * sum
}

/// erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))) (A&S 7.1.14), x ≥ 2.5,
/// evaluated from the tail (60 terms reach full precision at x = 2.5).
fn erfc_fraction(x: f64) -> f64 {
    let mut f = x;
    for n in (1..=60).rev() {
        f = x + (n as f64 / 2.0) / f;
    }
    (-x * x).exp() / (PI.sqrt() * f)
}

/// The standard normal CDF Φ(x).
pub fn normal_cdf(x: f64) -> f64 {
    if x == f64::INFINITY {
        return 1.0;
    }
    if x == f64::NEG_INFINITY {
        return 0.0;
    }
    0.5 * erfc(-x * FRAC_1_SQRT_2)
}

/// P(a < Z ≤ b) for a standard normal Z, accurate far out in either tail (the difference is
/// taken between upper-tail probabilities when both ends are positive, and lower-tail ones when
/// both are negative). Zero if b ≤ a.
pub fn normal_interval(a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let p = if a >= 0.0 {
        0.5 * (erfc(a * FRAC_1_SQRT_2) - erfc(b * FRAC_1_SQRT_2))
    } else if b <= 0.0 {
        0.5 * (erfc(-b * FRAC_1_SQRT_2) - erfc(-a * FRAC_1_SQRT_2))
    } else {
        normal_cdf(b) - normal_cdf(a)
    };
    p.max(0.0)
}

/// ln(k!).
pub fn ln_factorial(k: u64) -> f64 {
    if k <= 20 {
        let mut p: u64 = 1;
        for i in 2..=k {
            p *= i;
        }
        return (p as f64).ln();
    }
    // Stirling's series: ln n! = n ln n − n + ln(2πn)/2 + 1/(12n) − 1/(360n³) + 1/(1260n⁵) − …
    let n = k as f64;
    let inv = 1.0 / n;
    let inv2 = inv * inv;
    n * n.ln() - n
        + 0.5 * (2.0 * PI * n).ln()
        + inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))
}

/// ln P(K = k) for K ~ Poisson(`mean`); −∞ when impossible (`mean` = 0 and k > 0).
pub fn poisson_ln_pmf(k: u64, mean: f64) -> f64 {
    if mean <= 0.0 {
        return if k == 0 { 0.0 } else { f64::NEG_INFINITY };
    }
    k as f64 * mean.ln() - mean - ln_factorial(k)
}

/// P(K = k) for K ~ Poisson(`mean`).
pub fn poisson_pmf(k: u64, mean: f64) -> f64 {
    poisson_ln_pmf(k, mean).exp()
}

/// ln P(K ≥ k) for K ~ Poisson(`mean`), accurate far into the upper tail (summed upward from
/// P(K = k) when k is above the mean, else one minus the sum below k).
pub fn poisson_ln_sf(k: u64, mean: f64) -> f64 {
    if k == 0 {
        return 0.0;
    }
    if mean <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if mean < k as f64 {
        // Σ_{j≥k} P(j) = P(k)·(1 + μ/(k+1) + μ²/((k+1)(k+2)) + …), terms falling geometrically.
        let (mut term, mut sum) = (1.0, 1.0);
        let mut j = k;
        while term > 1e-17 * sum {
            j += 1;
            term *= mean / j as f64;
            sum += term;
        }
        poisson_ln_pmf(k, mean) + sum.ln()
    } else {
        // P(K < k) = P(k−1)·(1 + (k−1)/μ + (k−1)(k−2)/μ² + …): at most about a half here.
        let mut term = poisson_pmf(k - 1, mean);
        let mut below = term;
        let mut j = k - 1;
        while j > 0 && term > 1e-17 * below {
            term *= j as f64 / mean;
            below += term;
            j -= 1;
        }
        (1.0 - below).max(0.0).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn erf_matches_reference_values() {
        // Reference values (A&S 7.1, to 16 digits).
        let cases = [
            (0.0, 0.0),
            (0.1, 0.1124629160182849),
            (0.5, 0.5204998778130465),
            (1.0, 0.8427007929497149),
            (2.0, 0.9953222650189527),
            (2.49, 0.9995707121322661),
            (3.0, 0.9999779095030014),
        ];
        for (x, v) in cases {
            assert!(close(erf(x), v, 1e-13), "erf({x}) = {} ≠ {v}", erf(x));
            assert!(close(erf(-x), -v, 1e-13));
        }
        let tails = [
            (2.0, 4.677734981047266e-3),
            (2.5, 4.069520174449589e-4),
            (3.0, 2.209049699858544e-5),
            (5.0, 1.537459794428035e-12),
            (10.0, 2.088487583762545e-45),
        ];
        for (x, v) in tails {
            assert!(close(erfc(x), v, 1e-12), "erfc({x}) = {} ≠ {v}", erfc(x));
            assert!(close(erfc(-x), 2.0 - v, 1e-15));
        }
        assert!(erf(f64::NAN).is_nan());
        assert_eq!(erf(f64::INFINITY), 1.0);
        assert_eq!(erfc(f64::INFINITY), 0.0);
    }

    #[test]
    fn normal_cdf_is_symmetric_and_monotone() {
        assert_eq!(normal_cdf(0.0), 0.5);
        assert!(close(normal_cdf(1.959963984540054), 0.975, 1e-13));
        assert!(close(normal_cdf(-1.6448536269514722), 0.05, 1e-12));
        let mut prev = 0.0;
        for i in -800..=800 {
            let x = i as f64 / 100.0;
            let p = normal_cdf(x);
            assert!(p >= prev, "Φ not monotone at {x}");
            assert!(close(p + normal_cdf(-x), 1.0, 1e-14));
            prev = p;
        }
        assert_eq!(normal_cdf(f64::NEG_INFINITY), 0.0);
        assert_eq!(normal_cdf(f64::INFINITY), 1.0);
    }

    #[test]
    fn normal_interval_keeps_precision_in_the_tails() {
        assert!(close(normal_interval(-1.0, 1.0), 0.6826894921370859, 1e-13));
        // 1 − Φ(10) ≈ 7.62e-24: a plain difference of CDFs would give 0.
        assert!(close(
            normal_interval(10.0, f64::INFINITY),
            7.619853024160593e-24,
            1e-11
        ));
        assert!(close(
            normal_interval(f64::NEG_INFINITY, -10.0),
            7.619853024160593e-24,
            1e-11
        ));
        assert!(normal_interval(8.0, 8.5) > 0.0);
        assert_eq!(normal_interval(1.0, 1.0), 0.0);
        assert_eq!(normal_interval(f64::NEG_INFINITY, f64::INFINITY), 1.0);
    }

    #[test]
    fn ln_factorial_is_continuous_across_methods() {
        let mut exact = 0.0f64;
        for k in 1..=200u64 {
            exact += (k as f64).ln();
            assert!(close(ln_factorial(k), exact, 1e-13), "k = {k}");
        }
        assert_eq!(ln_factorial(0), 0.0);
    }

    #[test]
    fn poisson_sums_to_one_with_the_right_mean() {
        for mean in [0.3, 4.0, 20.0, 75.5] {
            let (mut s, mut m) = (0.0, 0.0);
            for k in 0..400 {
                let p = poisson_pmf(k, mean);
                s += p;
                m += k as f64 * p;
            }
            assert!(close(s, 1.0, 1e-12), "mean {mean}: sum {s}");
            assert!(close(m, mean, 1e-12), "mean {mean}: mean {m}");
        }
        assert_eq!(poisson_pmf(0, 0.0), 1.0);
        assert_eq!(poisson_pmf(3, 0.0), 0.0);
    }

    #[test]
    fn poisson_survival_matches_the_summed_pmf() {
        for mean in [0.05, 1.0, 4.0, 20.0, 75.5] {
            for k in 0..120u64 {
                let direct: f64 = (k..600).map(|j| poisson_pmf(j, mean)).sum();
                let sf = poisson_ln_sf(k, mean).exp();
                assert!(
                    close(sf, direct, 1e-9) || (direct < 1e-290 && sf < 1e-280),
                    "mean {mean}, k {k}: {sf} vs {direct}"
                );
            }
        }
        assert_eq!(poisson_ln_sf(0, 0.0), 0.0);
        assert_eq!(poisson_ln_sf(1, 0.0), f64::NEG_INFINITY);
        // Far in the tail, where 1 − CDF would be 0: P(K ≥ 100 | 1) = e^(−1)/100!·Σ 100!/j!.
        let series: f64 = (0..30)
            .scan(1.0, |t, i| {
                let v = *t;
                *t /= f64::from(101 + i);
                Some(v)
            })
            .sum();
        let expect = -1.0 - ln_factorial(100) + series.ln();
        assert!(close(poisson_ln_sf(100, 1.0), expect, 1e-12));
    }
}
