//! pathload (SLoPS) — Jain & Dovrolis, "End-to-end available bandwidth: measurement
//! methodology, dynamics, and relation with TCP throughput", IEEE/ACM ToN 11(4), 2003; the
//! tool's (1.3.2) constants and rate search are in the project's notes (§2.1). Driven on the
//! simulated testbed ([`super::Testbed`]), AP → A.
//!
//! * ADR: a train of 50 back-to-back 1500-byte packets, `ADR = 8·1500·49 / Δ(first, last)`;
//!   resolution `ω = 0.02·ADR`, grey resolution `χ = min(0.05·ADR, 12 Mbit/s)`; the first rate
//!   is the ADR.
//! * A stream at rate R: K = 100 packets of L bytes every T, `T = 80 µs`, `L = R·T/8` (IP
//!   bytes, clamped to [228, 1500], T then `8L/R`). A fleet: 12 streams, each followed by 9
//!   stream durations of silence (≤ 10% of R on average).
//! * Per stream: one-way delays `D_k`; Γ = ⌊√K⌋ groups, their medians `D̂`;
//!   `PCT = #{D̂_k > D̂_{k−1}} / (Γ − 1)`, `PDT = (D̂_Γ − D̂_1) / Σ|D̂_k − D̂_{k−1}|`. PCT above
//!   1.1·0.55 is increasing, below 0.9·0.55 not; PDT the same around 0.4; between: unsure. The
//!   stream is I for (I,I), (I,U), (U,I); N for (N,N), (N,U), (U,N); else grey. Under 5 groups:
//!   discarded. A stream losing ≥ 15% ends the fleet as increasing.
//! * Fleet: ≥ 60% of the kept streams I → increasing (R > A); ≥ 60% N → no trend (R < A);
//!   else grey.
//! * Rate search: increasing → `R_max = R`; no trend → `R_min = R` (doubling until a first
//!   increasing fleet); grey → widens `[G_min, G_max]`; the next rate halves the widest
//!   remaining interval. Ends when `R_max − R_min ≤ ω`, or both `R_max − G_max` and
//!   `G_min − R_min` are ≤ χ; the estimate is the middle of the reported range (`[G_min,
//!   G_max]` when grey fleets were seen, else `[R_min, R_max]`), as WBest's paper used it.
//!
//! Deviations: no interrupt-coalescence or context-switch filters (exact simulated stamps); the
//! 3–15% loss rule across streams is not modelled; PCT divides by Γ − 1 as the paper (the tool
//! by Γ); at most 60 fleets or 100 s of probing (the paper halted pathload at 100 s).

use super::{Case, Testbed};
use wisp_core::probe::wbest::median;
use wisp_core::{Duration, Instant};

/// One pathload run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathloadResult {
    /// Mbit/s: the middle of the reported range.
    pub available: f64,
    pub low: f64,
    pub high: f64,
    pub adr: f64,
    pub fleets: u32,
    pub converged: bool,
    pub bytes_sent: u64,
    pub time: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// `Flat` is pathload's NOTREND (R < A).
enum Trend {
    Increasing,
    Flat,
    Grey,
}

/// A stream's trend from its one-way delays (µs); `None`: too few groups.
fn stream_trend(d: &[f64]) -> Option<Trend> {
    let g = (d.len() as f64).sqrt().floor() as usize;
    if g < 5 {
        return None;
    }
    let per = d.len() / g;
    let med: Vec<f64> = (0..g)
        .map(|k| median(&mut d[k * per..(k + 1) * per].to_vec()).unwrap_or(0.0))
        .collect();
    let inc = med.windows(2).filter(|w| w[1] > w[0]).count();
    let pct = inc as f64 / (g - 1) as f64;
    let var: f64 = med.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
    let pdt = if var > 0.0 {
        (med[g - 1] - med[0]) / var
    } else {
        0.0
    };
    let class = |x: f64, th: f64| {
        if x > 1.1 * th {
            1
        } else if x < 0.9 * th {
            -1
        } else {
            0
        }
    };
    Some(match (class(pct, 0.55), class(pdt, 0.4)) {
        (1, 1) | (1, 0) | (0, 1) => Trend::Increasing,
        (-1, -1) | (-1, 0) | (0, -1) => Trend::Flat,
        _ => Trend::Grey,
    })
}

/// pathload on `case` with `seed`, after the warm-up.
pub fn run_once(case: &Case, seed: u64) -> PathloadResult {
    let mut tb = Testbed::new(case, seed);
    let start = Instant::ZERO + Testbed::warmup();
    tb.run_until(start, &mut vec![]);
    let mut now = start;
    let mut bytes = 0u64;
    let mut tag = 0u64;
    // ADR.
    let offs = vec![Duration::ZERO; 50];
    let (arr, end) = tb.probe_train(now, &offs, 1500, tag);
    tag += 50;
    bytes += 50 * 1500;
    now = end + Duration::from_millis(10);
    let got: Vec<Instant> = arr.iter().flatten().copied().collect();
    let adr = match (got.first(), got.last()) {
        (Some(a), Some(b)) if b > a => {
            8.0 * 1500.0 * (got.len() - 1) as f64 / (*b - *a).as_secs_f64() / 1e6
        }
        _ => 1.0,
    };
    let omega = 0.02 * adr;
    let chi = (0.05 * adr).min(12.0);
    let (mut rmin, mut rmax): (f64, Option<f64>) = (0.0, None);
    let (mut gmin, mut gmax): (Option<f64>, Option<f64>) = (None, None);
    let mut rate = adr;
    let mut exp = true;
    let mut fleets = 0;
    let mut converged = false;
    while fleets < 60 && now - start < Duration::from_secs(100) {
        fleets += 1;
        let (trend, sent, next) = fleet(&mut tb, now, rate, &mut tag);
        bytes += sent;
        now = next;
        match trend {
            Trend::Increasing => {
                rmax = Some(rate);
                exp = false;
            }
            Trend::Flat => rmin = rate,
            Trend::Grey => {
                gmin = Some(gmin.map_or(rate, |g| g.min(rate)));
                gmax = Some(gmax.map_or(rate, |g| g.max(rate)));
            }
        }
        // Termination.
        if let Some(hi) = rmax {
            let grey_done = match (gmin, gmax) {
                (Some(a), Some(b)) => hi - b <= chi && a - rmin <= chi,
                _ => false,
            };
            if hi - rmin <= omega || grey_done {
                converged = true;
                break;
            }
        }
        // The next rate.
        rate = match (trend, rmax, gmin, gmax) {
            (Trend::Flat, None, None, _) if exp => rate * 2.0,
            (_, None, _, Some(b)) => b * 1.5,
            (_, None, None, None) => rate * 2.0,
            (_, Some(hi), Some(a), Some(b)) => {
                if hi - b >= a - rmin {
                    (hi + b) / 2.0
                } else {
                    (rmin + a) / 2.0
                }
            }
            (_, Some(hi), _, _) => (hi + rmin) / 2.0,
            (_, None, Some(a), None) => a * 1.5,
        };
        if rate < 0.01 {
            break;
        }
    }
    let (low, high) = match (gmin, gmax) {
        (Some(a), Some(b)) => (a, b),
        _ => (rmin, rmax.unwrap_or(rmin)),
    };
    PathloadResult {
        available: (low + high) / 2.0,
        low,
        high,
        adr,
        fleets,
        converged,
        bytes_sent: bytes,
        time: now - start,
    }
}

/// One fleet at `rate` Mbit/s from `now`: 12 streams of 100 packets (80 µs apart, or the packet
/// size's bounds), each judged by its one-way delays' trend; the fleet's trend (increasing when
/// a stream lost packets), the bytes sent and when the fleet ended. `tag` counts the packets.
fn fleet(tb: &mut Testbed, mut now: Instant, rate: f64, tag: &mut u64) -> (Trend, u64, Instant) {
    let mut bytes = 0u64;
    // Stream parameters.
    let mut t_us = 80.0;
    let mut l = (rate * t_us / 8.0).round();
    if !(228.0..=1500.0).contains(&l) {
        l = l.clamp(228.0, 1500.0);
        t_us = 8.0 * l / rate;
    }
    let offs: Vec<Duration> = (0..100)
        .map(|k| Duration::from_secs_f64(t_us * 1e-6 * k as f64))
        .collect();
    let dur = Duration::from_secs_f64(t_us * 1e-6 * 100.0);
    let (mut inc, mut no, mut kept) = (0, 0, 0);
    let mut lossy = false;
    for _ in 0..12 {
        let (arr, end) = tb.probe_train(now, &offs, l as u32, *tag);
        *tag += 100;
        bytes += 100 * l as u64;
        let sends = offs.iter().map(|o| now + *o);
        let d: Vec<f64> = arr
            .iter()
            .zip(sends)
            .filter_map(|(a, s)| {
                Some((a.as_ref()?.saturating_duration_since(s)).as_secs_f64() * 1e6)
            })
            .collect();
        now = end.max(now + dur * 10);
        if d.len() < 85 {
            lossy = true;
            break;
        }
        match stream_trend(&d) {
            Some(Trend::Increasing) => {
                inc += 1;
                kept += 1;
            }
            Some(Trend::Flat) => {
                no += 1;
                kept += 1;
            }
            Some(Trend::Grey) => kept += 1,
            None => {}
        }
    }
    let trend = if lossy || (kept > 0 && inc * 10 >= 6 * kept) {
        Trend::Increasing
    } else if kept > 0 && no * 10 >= 6 * kept {
        Trend::Flat
    } else {
        Trend::Grey
    };
    (trend, bytes, now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trends_of_hand_built_delays() {
        // Rising delays: PCT = 1, PDT = 1 → increasing.
        let up: Vec<f64> = (0..100).map(f64::from).collect();
        assert_eq!(stream_trend(&up), Some(Trend::Increasing));
        // Flat delays: PCT = 0, PDT = 0 → no trend.
        assert_eq!(stream_trend(&[5.0; 100]), Some(Trend::Flat));
        // Falling: PCT 0, PDT −1 → no trend.
        let down: Vec<f64> = (0..100).rev().map(f64::from).collect();
        assert_eq!(stream_trend(&down), Some(Trend::Flat));
        // Under 25 delays: fewer than 5 groups.
        assert_eq!(stream_trend(&up[..24]), None);
    }
}
