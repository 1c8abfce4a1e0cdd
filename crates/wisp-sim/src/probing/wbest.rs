//! WBest ([`wisp_core::probe::wbest`]) on the simulated testbed: its probes go AP → client A
//! through the medium, event by event; arrival times are the ends of the PPDUs that
//! delivered them (an exact receive timestamp).

use super::{Case, PACKET_BYTES, Testbed, ground_truth};
use crate::wifi::link::{AP, STATION};
use wisp_core::Instant;
use wisp_core::probe::wbest::{Wbest, WbestConfig, WbestFailure, WbestPhase, WbestResult};

/// One WBest estimate on `case` with the run's `seed`, starting after the warm-up.
pub fn run_once(case: &Case, cfg: WbestConfig, seed: u64) -> Result<WbestResult, WbestFailure> {
    let mut tb = Testbed::new(case, seed);
    let mut out = vec![];
    let start = Instant::ZERO + Testbed::warmup();
    tb.run_until(start, &mut out);
    out.clear();
    let mut w = Wbest::new(cfg, start).expect("a valid config");
    let mut now = start;
    // Bounded: a phase ends at most `phase_timeout` after its last activity.
    for _ in 0..10_000_000u64 {
        while let Some(p) = w.poll_transmit(now) {
            let tag = match p.phase {
                WbestPhase::Pairs => u64::from(p.index),
                WbestPhase::Train => (1 << 32) | u64::from(p.index),
            };
            tb.push(now, AP, STATION, tag, p.bytes);
        }
        tb.advance(now, &mut out);
        for o in out.drain(..) {
            if o.delivered {
                let phase = if o.tag >> 32 == 0 {
                    WbestPhase::Pairs
                } else {
                    WbestPhase::Train
                };
                w.on_probe_received(o.at, phase, o.tag as u32);
            }
        }
        w.on_timeout(now);
        if let Some(r) = w.result() {
            return r;
        }
        let Some(next) = [w.poll_timeout(), tb.next_event()]
            .into_iter()
            .flatten()
            .min()
        else {
            break;
        };
        now = next.max(now);
    }
    Err(WbestFailure::NoPairs)
}

/// A case's figures over `runs` runs (seeds `seed`, `seed + 1`, …).
#[derive(Clone, Debug, PartialEq)]
pub struct CaseSummary {
    pub case: u32,
    /// Ground truth (Mbit/s): the median over the runs' seeds of [`ground_truth`].
    pub ground_truth: f64,
    /// Per run: (C_e, A) in Mbit/s, bytes sent, seconds to the result.
    pub runs: Vec<(f64, f64, u64, f64)>,
    pub failures: u32,
}

impl CaseSummary {
    fn med(mut v: Vec<f64>) -> f64 {
        wisp_core::probe::wbest::median(&mut v).unwrap_or(f64::NAN)
    }
    pub fn median_capacity(&self) -> f64 {
        Self::med(self.runs.iter().map(|r| r.0).collect())
    }
    pub fn median_available(&self) -> f64 {
        Self::med(self.runs.iter().map(|r| r.1).collect())
    }
    /// Median of |A − truth| (Mbit/s), `truth` the given ground truth.
    pub fn median_abs_error(&self, truth: f64) -> f64 {
        Self::med(self.runs.iter().map(|r| (r.1 - truth).abs()).collect())
    }
    pub fn median_bytes(&self) -> f64 {
        Self::med(self.runs.iter().map(|r| r.2 as f64).collect())
    }
    pub fn median_time(&self) -> f64 {
        Self::med(self.runs.iter().map(|r| r.3).collect())
    }
}

/// Runs WBest `runs` times on `case`, with the ground truth measured on as many seeds.
pub fn run_case(case: &Case, cfg: WbestConfig, runs: u32, seed: u64) -> CaseSummary {
    let mut gts = vec![];
    let mut out = vec![];
    let mut failures = 0;
    for k in 0..u64::from(runs) {
        let s = seed.wrapping_add(k);
        gts.push(ground_truth(
            case,
            crate::seed::mix(s, "probing/ground-truth"),
        ));
        match run_once(case, cfg, s) {
            Ok(r) => out.push((
                r.capacity.bps() as f64 / 1e6,
                r.available.bps() as f64 / 1e6,
                r.bytes_sent,
                r.time.as_secs_f64(),
            )),
            Err(_) => failures += 1,
        }
    }
    CaseSummary {
        case: case.id,
        ground_truth: CaseSummary::med(gts),
        runs: out,
        failures,
    }
}

/// Bytes of the paper's default estimate: (2·30 + 30) × 1500.
pub const DEFAULT_BYTES: u64 = 90 * PACKET_BYTES as u64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_channel_gives_a_close_to_the_saturated_throughput() {
        // Case 0: WBest's A should be the ground truth (the paper: 28.47 vs 28.94).
        let case = Case::table1(0).unwrap();
        let gt = ground_truth(&case, 7);
        let r = run_once(&case, WbestConfig::default(), 7).unwrap();
        let a = r.available.bps() as f64 / 1e6;
        assert!((a - gt).abs() / gt < 0.15, "A {a} vs ground truth {gt}");
        assert_eq!(r.bytes_sent, DEFAULT_BYTES);
    }

    #[test]
    fn same_seed_same_estimate() {
        let case = Case::table1(9).unwrap();
        let a = run_once(&case, WbestConfig::default(), 3);
        let b = run_once(&case, WbestConfig::default(), 3);
        assert_eq!(a, b);
    }
}
