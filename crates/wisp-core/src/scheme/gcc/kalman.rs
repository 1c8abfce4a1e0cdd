//! A linear Kalman filter with `N` states and scalar measurements.
//!
//! Model (the one GCC's arrival-time filters use, Carlucci et al., MMSys 2016, §3.2;
//! draft-ietf-rmcat-gcc-02 §5.3):
//!
//! ```text
//! x(i) = x(i−1) + w(i),        w ~ N(0, Q)          (random walk)
//! z(i) = h(i)ᵀ x(i) + v(i),    v ~ N(0, r(i))       (one scalar measurement)
//! ```
//!
//! The update is split in three calls so that a caller can adapt the measurement noise *r* from
//! the residual before it is used (as GCC does):
//!
//! 1. [`Kalman::add_process_noise`]: P ← P + diag(q) (the time update of a random walk);
//! 2. [`Kalman::residual`]: z − hᵀx;
//! 3. [`Kalman::correct`]: K = P h / (hᵀ P h + r); x ← x + K·residual; P ← (I − K hᵀ) P.
//!
//! The arithmetic is written out term by term in a fixed order, so results are reproducible
//! bit for bit (the ported libwebrtc tests depend on it).

// Index loops read as the matrix algebra they implement and fix the order of the sums.
#![allow(clippy::needless_range_loop)]

/// Kalman filter state: the estimate `x` and its error covariance `P`.
#[derive(Clone, Debug, PartialEq)]
pub struct Kalman<const N: usize> {
    x: [f64; N],
    p: [[f64; N]; N],
}

impl<const N: usize> Kalman<N> {
    /// A filter starting at estimate `x0` with error covariance `p0`.
    pub fn new(x0: [f64; N], p0: [[f64; N]; N]) -> Self {
        Kalman { x: x0, p: p0 }
    }

    /// The current estimate.
    pub fn state(&self) -> &[f64; N] {
        &self.x
    }

    /// The current error covariance.
    pub fn covariance(&self) -> &[[f64; N]; N] {
        &self.p
    }

    /// Time update of the random-walk model: P ← P + diag(q).
    pub fn add_process_noise(&mut self, q: [f64; N]) {
        for (i, qi) in q.into_iter().enumerate() {
            self.p[i][i] += qi;
        }
    }

    /// Adds `q` to the variance of state `i` only (extra process noise on one state).
    pub fn add_process_noise_to(&mut self, i: usize, q: f64) {
        self.p[i][i] += q;
    }

    /// The innovation z − hᵀx.
    pub fn residual(&self, h: &[f64; N], z: f64) -> f64 {
        let mut r = z;
        for i in 0..N {
            r -= h[i] * self.x[i];
        }
        r
    }

    /// The innovation variance hᵀPh + r.
    pub fn innovation_variance(&self, h: &[f64; N], r: f64) -> f64 {
        let ph = self.p_h(h);
        let mut s = r;
        for i in 0..N {
            s += h[i] * ph[i];
        }
        s
    }

    fn p_h(&self, h: &[f64; N]) -> [f64; N] {
        let mut ph = [0.0; N];
        for (i, out) in ph.iter_mut().enumerate() {
            let mut s = 0.0;
            for j in 0..N {
                s += self.p[i][j] * h[j];
            }
            *out = s;
        }
        ph
    }

    /// Measurement update with `residual` (from [`Kalman::residual`]) and measurement-noise
    /// variance `r`. Returns the gain K.
    pub fn correct(&mut self, h: &[f64; N], residual: f64, r: f64) -> [f64; N] {
        let ph = self.p_h(h);
        let mut denom = r;
        for i in 0..N {
            denom += h[i] * ph[i];
        }
        let mut k = [0.0; N];
        for i in 0..N {
            k[i] = ph[i] / denom;
        }
        // P ← (I − K hᵀ) P
        let old = self.p;
        for i in 0..N {
            for j in 0..N {
                let mut s = 0.0;
                for (l, row) in old.iter().enumerate() {
                    let ikh = if i == l { 1.0 } else { 0.0 } - k[i] * h[l];
                    s += ikh * row[j];
                }
                self.p[i][j] = s;
            }
        }
        for i in 0..N {
            self.x[i] += k[i] * residual;
        }
        debug_assert!(
            (0..N).all(|i| self.p[i][i] >= 0.0),
            "covariance lost positive semi-definiteness: {:?}",
            self.p
        );
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_filter_converges_to_a_constant() {
        let mut k = Kalman::new([0.0], [[1.0]]);
        for _ in 0..200 {
            k.add_process_noise([1e-6]);
            let r = k.residual(&[1.0], 5.0);
            k.correct(&[1.0], r, 1.0);
        }
        assert!((k.state()[0] - 5.0).abs() < 0.05, "{:?}", k.state());
        assert!(k.covariance()[0][0] < 0.02);
    }

    #[test]
    fn scalar_gain_matches_the_closed_form() {
        // K = (P + q) / (P + q + r), x += K z, P = (1 − K)(P + q).
        let mut k = Kalman::new([2.0], [[0.1]]);
        k.add_process_noise([1e-3]);
        let z = k.residual(&[1.0], 12.0);
        assert_eq!(z, 10.0);
        let g = k.correct(&[1.0], z, 4.0)[0];
        let expect = 0.101 / 4.101;
        assert!((g - expect).abs() < 1e-15);
        assert!((k.state()[0] - (2.0 + expect * 10.0)).abs() < 1e-12);
        assert!((k.covariance()[0][0] - (1.0 - expect) * 0.101).abs() < 1e-15);
    }

    #[test]
    fn two_state_filter_separates_slope_and_offset() {
        // z = 0.01·size + 3 for varying sizes: both states are identifiable.
        let mut k = Kalman::new([0.0, 0.0], [[100.0, 0.0], [0.0, 10.0]]);
        for i in 0..500 {
            let size = if i % 2 == 0 { 1200.0 } else { -800.0 };
            let z = 0.01 * size + 3.0;
            k.add_process_noise([1e-10, 1e-4]);
            let h = [size, 1.0];
            let r = k.residual(&h, z);
            k.correct(&h, r, 0.5);
        }
        let x = k.state();
        assert!((x[0] - 0.01).abs() < 1e-4, "{x:?}");
        assert!((x[1] - 3.0).abs() < 0.05, "{x:?}");
        let p = k.covariance();
        assert!((p[0][1] - p[1][0]).abs() < 1e-12, "symmetric: {p:?}");
    }
}
