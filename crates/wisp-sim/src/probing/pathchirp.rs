//! pathChirp — Ribeiro, Riedi, Baraniuk, Navratil, Cottrell, "pathChirp: Efficient Available
//! Bandwidth Estimation for Network Paths", PAM 2003; the tool's defaults and steps are in
//! the project's notes (§2.2). Driven on the simulated testbed ([`super::Testbed`]), AP → A.
//!
//! * A chirp: `N` packets of `P` = 1000 bytes whose instantaneous rates grow by the spread
//!   factor γ = 1.2 from `low` = 10 to `high` = 200 Mbit/s: `N − 1` = the least n with
//!   `low·γⁿ ≥ high` (17); `R_{N−2} = high`, `R_k = R_{k+1}/γ`, gap `Δ_k = 8P/R_k`. Chirps
//!   start `N·8P / 0.3 Mbit/s` (0.48 s) apart.
//! * Queueing delay `q_k = (r_k − r_1) − (s_k − s_1)`.
//! * Excursions: from each `i` with `q_i < q_{i+1}`, extend `j` while tracking
//!   `max_q = max(q_l − q_i)`; it ends at the first `j` with `q_j − q_i < max_q / F` (F = 1.5).
//!   If `j − i ≥ L` (L = 5), every `k` in `[i, j)` with `q_k < q_{k+1}` gets `E_k = R_k`. An
//!   excursion still open at the chirp's end, starting at `l`, gives `E_k = R_l` for `k ≥ l`;
//!   every other `k` gets `E_k = R_l` too (`R_{N−2}` with no open excursion).
//! * Per chirp `D = Σ E_k Δ_k / Σ Δ_k`; the output is the mean of the last 11 chirps'.
//! * Convergence as WBest's paper ran it (§III, after its reference 12): the first output (from the 11th
//!   chirp on) at which the 90th and 10th percentiles of the last 11 chirp estimates differ by
//!   less than 6 Mbit/s ("1/5 of the available bandwidth" of their testbed); at most 100 chirps.
//!
//! Deviations:
//! - No automatic range adjustment (low/high stay 10/200 Mbit/s).
//! - A chirp with a lost packet is skipped (the tool marks it bad); no context-switch filter
//!   (the simulated receive timestamps are exact).

use super::{Case, Testbed};
use wisp_core::{Duration, Instant};

/// pathChirp's parameters (the tool's defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChirpConfig {
    pub bytes: u32,
    pub spread: f64,
    pub decrease: f64,
    pub busy: usize,
    pub smoothing: usize,
    pub low_mbps: f64,
    pub high_mbps: f64,
    pub avg_mbps: f64,
    pub converge_mbps: f64,
    pub max_chirps: usize,
}

impl Default for ChirpConfig {
    fn default() -> Self {
        ChirpConfig {
            bytes: 1000,
            spread: 1.2,
            decrease: 1.5,
            busy: 5,
            smoothing: 11,
            low_mbps: 10.0,
            high_mbps: 200.0,
            avg_mbps: 0.3,
            converge_mbps: 6.0,
            max_chirps: 100,
        }
    }
}

impl ChirpConfig {
    /// Instantaneous rates `R_k` (Mbit/s) of the chirp's gaps.
    pub fn rates(&self) -> Vec<f64> {
        let mut n = 0;
        while self.low_mbps * self.spread.powi(n) < self.high_mbps {
            n += 1;
        }
        let mut r = vec![self.high_mbps; n as usize];
        for k in (0..r.len().saturating_sub(1)).rev() {
            r[k] = r[k + 1] / self.spread;
        }
        r
    }
}

/// One chirp's estimate (Mbit/s) from its rates and queueing delays (`q.len() = rates + 1`).
pub fn chirp_estimate(cfg: &ChirpConfig, rates: &[f64], q: &[f64]) -> f64 {
    let n = q.len();
    let gaps: Vec<f64> = rates
        .iter()
        .map(|r| 8.0 * f64::from(cfg.bytes) / r)
        .collect();
    let mut e: Vec<Option<f64>> = vec![None; n - 1];
    let mut open: Option<usize> = None;
    let mut i = 0;
    while i + 1 < n {
        if q[i] >= q[i + 1] {
            i += 1;
            continue;
        }
        let mut max_q: f64 = 0.0;
        let mut end = None;
        for (j, &qj) in q.iter().enumerate().skip(i + 1) {
            max_q = max_q.max(qj - q[i]);
            if qj - q[i] < max_q / cfg.decrease {
                end = Some(j);
                break;
            }
        }
        let Some(j) = end else {
            open = Some(i);
            break;
        };
        if j - i >= cfg.busy {
            for k in i..j {
                if q[k] < q[k + 1] {
                    e[k] = Some(rates[k]);
                }
            }
        }
        i = j;
    }
    let rest = open.map_or(rates[rates.len() - 1], |l| rates[l]);
    if let Some(l) = open {
        for x in e.iter_mut().skip(l) {
            *x = Some(rest);
        }
    }
    let num: f64 = e
        .iter()
        .zip(&gaps)
        .map(|(x, g)| x.unwrap_or(rest) * g)
        .sum();
    num / gaps.iter().sum::<f64>()
}

/// One pathChirp run to convergence.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChirpResult {
    /// Mbit/s: the mean of the last 11 chirp estimates at convergence (or at the cap).
    pub available: f64,
    pub converged: bool,
    pub bytes_sent: u64,
    pub time: Duration,
}

fn pct(v: &[f64], p: f64) -> f64 {
    wisp_core::stats::quantile_of(v, p).unwrap_or(f64::NAN)
}

/// pathChirp on `case` with `seed`, after the warm-up.
pub fn run_once(case: &Case, cfg: ChirpConfig, seed: u64) -> ChirpResult {
    let mut tb = Testbed::new(case, seed);
    let start = Instant::ZERO + Testbed::warmup();
    tb.run_until(start, &mut vec![]);
    let rates = cfg.rates();
    let mut offs = vec![Duration::ZERO];
    for r in &rates {
        let last = *offs.last().expect("one");
        offs.push(last + Duration::from_secs_f64(8.0 * f64::from(cfg.bytes) / (r * 1e6)));
    }
    let period = Duration::from_secs_f64(
        offs.len() as f64 * 8.0 * f64::from(cfg.bytes) / (cfg.avg_mbps * 1e6),
    );
    let mut est: Vec<f64> = vec![];
    let mut bytes = 0u64;
    let mut now = start;
    for c in 0..cfg.max_chirps {
        let t0 = start + period * c as u64;
        let (arr, end) = tb.probe_train(t0, &offs, cfg.bytes, (c * offs.len()) as u64);
        bytes += offs.len() as u64 * u64::from(cfg.bytes);
        now = end;
        if arr.iter().all(Option::is_some) {
            let r1 = arr[0].expect("all arrived");
            let q: Vec<f64> = arr
                .iter()
                .zip(&offs)
                .map(|(a, s)| {
                    (a.expect("all arrived") - r1).as_secs_f64() * 1e6 - s.as_secs_f64() * 1e6
                })
                .collect();
            est.push(chirp_estimate(&cfg, &rates, &q));
        }
        if est.len() >= cfg.smoothing {
            let last = &est[est.len() - cfg.smoothing..];
            if pct(last, 0.9) - pct(last, 0.1) < cfg.converge_mbps {
                return ChirpResult {
                    available: last.iter().sum::<f64>() / last.len() as f64,
                    converged: true,
                    bytes_sent: bytes,
                    time: now - start,
                };
            }
        }
    }
    let k = est.len().min(cfg.smoothing).max(1);
    ChirpResult {
        available: est[est.len().saturating_sub(k)..].iter().sum::<f64>() / k as f64,
        converged: false,
        bytes_sent: bytes,
        time: now - start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_chirp_has_17_gaps_ending_at_200() {
        let r = ChirpConfig::default().rates();
        assert_eq!(r.len(), 17); // 10·1.2^17 = 222 ≥ 200 > 10·1.2^16
        assert_eq!(r[16], 200.0);
        assert!((r[0] - 200.0 / 1.2f64.powi(16)).abs() < 1e-9);
    }

    #[test]
    fn a_flat_chirp_reports_its_top_rate_and_a_late_rise_its_start() {
        let cfg = ChirpConfig::default();
        let rates = cfg.rates();
        // No queueing at all: every E_k = R_{N−2} = 200.
        let q = vec![0.0; 18];
        assert!((chirp_estimate(&cfg, &rates, &q) - 200.0).abs() < 1e-9);
        // Queueing rises from packet 10 on and never recovers: E_k = R_10 for every k, so D
        // = R_10.
        let q: Vec<f64> = (0..18)
            .map(|k| if k > 10 { (k - 10) as f64 } else { 0.0 })
            .collect();
        assert!((chirp_estimate(&cfg, &rates, &q) - rates[10]).abs() < 1e-9);
    }
}
