//! Bianchi's saturation model — G. Bianchi, "Performance analysis of the IEEE 802.11
//! distributed coordination function", IEEE JSAC 18(3), March 2000.
//!
//! n saturated stations, `W = CWmin + 1`, m backoff stages (`CWmax + 1 = 2^m·W`):
//!
//! - Eq. (7): `τ = 2(1 − 2p) / [(1 − 2p)(W + 1) + p·W·(1 − (2p)^m)]`, computed in the
//!   equivalent form `τ = 2 / [W + 1 + p·W·Σ_{k<m} (2p)^k]`, which has no 0/0 at `p = ½`.
//! - Eq. (9): `p = 1 − (1 − τ)^{n−1}`.
//! - The fixed point is the root of `g(p) = 1 − (1 − τ(p))^{n−1} − p` on `[0, 1)`: `τ(p)`
//!   decreases with p, so g decreases strictly from `g(0) ≥ 0` to `g(1) < 0` and has exactly
//!   one root (Bianchi §III), found by bisection to 1e-12 (60 halvings).
//! - `P_tr = 1 − (1 − τ)^n`, `P_s = n·τ·(1 − τ)^{n−1} / P_tr`.
//! - Eq. (13): `S = P_s·P_tr·E[P] / [(1 − P_tr)·σ + P_tr·P_s·T_s + P_tr·(1 − P_s)·T_c]`.
//! - T_s and T_c for basic access (§IV), with δ = 0: `T_s = H + E[P] + SIFS + ACK + DIFS`,
//!   `T_c = H + E[P*] + DIFS`. `H + E[P]` is the PPDU airtime of the whole MPDU
//!   ([`Phy::ppdu_duration`]), `E[P]` counts the MSDU bits.
//! - The EIFS form: `T_c = H + E[P*] + EIFS`, since stations that heard a collision wait EIFS
//!   (`SIFS + Ack at the lowest rate + DIFS`) rather than DIFS.
//!
//! The paper is not in `papers/`: the equation numbers are as cited in the literature and
//! should be checked against the text.
//!
//! Deviations:
//! - No propagation delay (δ = 0), as in the simulated medium.
//! - No retry limit (Bianchi's model has none).

use super::phy::{Phy, PhyRate};

/// The fixed point of Eq. (7) and (9): `(τ, p)`.
pub fn fixed_point(n: u32, w: u32, m: u32) -> (f64, f64) {
    let tau = |p: f64| {
        let mut sum = 0.0;
        let mut term = 1.0;
        for _ in 0..m {
            sum += term;
            term *= 2.0 * p;
        }
        2.0 / (f64::from(w) + 1.0 + p * f64::from(w) * sum)
    };
    if n <= 1 {
        return (tau(0.0), 0.0);
    }
    let g = |p: f64| 1.0 - (1.0 - tau(p)).powi(n as i32 - 1) - p;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let p = 0.5 * (lo + hi);
    (tau(p), p)
}

/// Eq. (13): saturation throughput in bit/s per µs (= Mbit/s), given τ, n, the slot σ and
/// `T_s`, `T_c` in µs, and the payload in bits.
pub fn throughput_mbps(tau: f64, n: u32, slot_us: f64, ts_us: f64, tc_us: f64, bits: f64) -> f64 {
    let n_f = f64::from(n);
    let p_tr = 1.0 - (1.0 - tau).powi(n as i32);
    let p_s = n_f * tau * (1.0 - tau).powi(n as i32 - 1) / p_tr;
    p_s * p_tr * bits / ((1.0 - p_tr) * slot_us + p_tr * p_s * ts_us + p_tr * (1.0 - p_s) * tc_us)
}

/// Which interval follows a collision in `T_c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterCollision {
    Difs,
    Eifs,
}

/// Bianchi's saturation throughput (Mbit/s of MSDU bytes) of `n` DCF stations sending
/// `msdu_bytes` at `rate` on `phy`, basic access.
pub fn saturation_mbps(
    phy: &Phy,
    rate: PhyRate,
    n: u32,
    msdu_bytes: u32,
    after: AfterCollision,
) -> f64 {
    let us = |d: wisp_core::Duration| d.as_nanos() as f64 / 1e3;
    let w = u32::from(phy.cw_min) + 1;
    // CWmax + 1 = 2^m·W.
    let m = ((u32::from(phy.cw_max) + 1) / w).trailing_zeros();
    let (tau, _) = fixed_point(n, w, m);
    let data = us(phy.ppdu_duration(Phy::mpdu_bytes(msdu_bytes), rate));
    let ts = data + us(phy.sifs) + us(phy.ack_duration(rate)) + us(phy.difs());
    let tc = data
        + match after {
            AfterCollision::Difs => us(phy.difs()),
            AfterCollision::Eifs => us(phy.eifs()),
        };
    throughput_mbps(tau, n, us(phy.slot), ts, tc, 8.0 * f64::from(msdu_bytes))
}

/// [`saturation_mbps`] with DIFS after a collision.
pub fn bianchi_difs_mbps(phy: &Phy, rate: PhyRate, n: u32, msdu_bytes: u32) -> f64 {
    saturation_mbps(phy, rate, n, msdu_bytes, AfterCollision::Difs)
}

/// [`saturation_mbps`] with EIFS after a collision.
pub fn bianchi_eifs_mbps(phy: &Phy, rate: PhyRate, n: u32, msdu_bytes: u32) -> f64 {
    saturation_mbps(phy, rate, n, msdu_bytes, AfterCollision::Eifs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::Standard;
    use crate::wifi::phy::test_util::rate;

    #[test]
    fn one_station_is_the_mean_backoff_by_hand() {
        // n = 1: p = 0, τ = 2/(W+1), and Eq. (13) reduces to S = E[P] / (T_s + σ·(W−1)/2).
        let (tau, p) = fixed_point(1, 16, 6);
        assert_eq!(p, 0.0);
        assert!((tau - 2.0 / 17.0).abs() < 1e-15);
        // 11a, 54 Mbit/s, 1500 B: T_s = 248 + 16 + 28 + 34 = 326 µs, backoff 7.5·9 = 67.5 µs:
        // 12000 / 393.5 = 30.4956 Mbit/s.
        let a = Phy::new(Standard::A);
        let s = bianchi_difs_mbps(&a, rate(54.0), 1, 1500);
        assert!((s - 12000.0 / 393.5).abs() < 1e-9, "{s}");
        // 11b, 1 Mbit/s: T_s = 12480 + 10 + 304 + 50 = 12844 µs, backoff 15.5·20 = 310 µs.
        let b = Phy::new(Standard::B);
        let s = bianchi_difs_mbps(&b, rate(1.0), 1, 1500);
        assert!((s - 12000.0 / 13154.0).abs() < 1e-9, "{s}");
        // No collisions: the EIFS form is the same.
        assert_eq!(s, bianchi_eifs_mbps(&b, rate(1.0), 1, 1500));
    }

    #[test]
    fn fixed_point_solves_both_equations() {
        for (n, w, m) in [
            (2, 16, 6),
            (5, 32, 5),
            (10, 16, 6),
            (50, 32, 3),
            (50, 16, 6),
        ] {
            let (tau, p) = fixed_point(n, w, m);
            // Eq. (7) in Bianchi's own form (away from p = ½).
            let x = 1.0 - 2.0 * p;
            let eq7 = 2.0 * x
                / (x * (f64::from(w) + 1.0) + p * f64::from(w) * (1.0 - (2.0 * p).powi(m as i32)));
            assert!((tau - eq7).abs() < 1e-9, "n={n}: τ {tau} vs Eq. (7) {eq7}");
            let eq9 = 1.0 - (1.0 - tau).powi(n as i32 - 1);
            assert!((p - eq9).abs() < 1e-9, "n={n}: p {p} vs Eq. (9) {eq9}");
        }
    }

    #[test]
    fn two_stations_by_hand() {
        // n = 2, W = 2, m = 1 (CW 1..3 — small enough to solve with a pencil):
        // τ = 2 / (3 + 2p), p = τ  ⇒  2p² + 3p − 2 = 0  ⇒  p = ½, τ = ½.
        let (tau, p) = fixed_point(2, 2, 1);
        assert!(
            (p - 0.5).abs() < 1e-9 && (tau - 0.5).abs() < 1e-9,
            "{tau} {p}"
        );
    }

    /// ns-3's `examples/wireless/wifi-bianchi.cc` ships Bianchi's model computed by an
    /// independent (MATLAB) implementation for 1500-byte packets (`bianchiResultsDifs`,
    /// `bianchiResultsEifs`). Its overheads differ a little (its EIFS uses the Ack at the
    /// control rate, not the lowest rate; its exact T_s/T_c are not documented), so agreement
    /// is within a few per cent, not to the digit. The DIFS form is compared here.
    #[test]
    fn close_to_ns3_tables_difs() {
        let a = Phy::new(Standard::A);
        let b = Phy::new(Standard::B);
        let cases = [
            (&b, 1.0, 5, 0.8437),
            (&b, 1.0, 50, 0.6336),
            (&a, 6.0, 5, 4.7087),
            (&a, 6.0, 50, 3.5071),
            (&a, 24.0, 10, 15.1426),
            (&a, 54.0, 5, 29.8324),
            (&a, 54.0, 20, 26.2925),
            (&a, 54.0, 50, 23.5618),
        ];
        for (phy, r, n, ns3) in cases {
            let ours = bianchi_difs_mbps(phy, rate(r), n, 1500);
            let err = (ours - ns3).abs() / ns3;
            assert!(
                err < 0.025,
                "{r} Mbit/s n={n}: ours {ours:.4} ns-3 {ns3} ({:.2}%)",
                err * 100.0
            );
        }
    }

    #[test]
    fn more_stations_less_throughput_and_eifs_below_difs() {
        let a = Phy::new(Standard::A);
        let mut last = f64::INFINITY;
        for n in [2, 5, 10, 20, 50] {
            let d = bianchi_difs_mbps(&a, rate(54.0), n, 1500);
            let e = bianchi_eifs_mbps(&a, rate(54.0), n, 1500);
            assert!(e < d, "n={n}");
            assert!(d < last, "n={n}");
            last = d;
        }
    }
}
