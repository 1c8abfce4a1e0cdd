//! Spruce — Strauss, Katabi, Kaashoek, "A Measurement Study of Available Bandwidth Estimation
//! Tools", IMC 2003; the tool's defaults are in the project's notes (§2.4). Driven on the
//! simulated testbed ([`super::Testbed`]), AP → A.
//!
//! `n` = 100 pairs of 1500 bytes; inside a pair the gap is the bottleneck's transmission time
//! `Δin = 8L/C`; pairs start at exponentially distributed intervals with mean
//! `max(100 ms, 2·8L/C / 0.05)` (Poisson sampling, probing at most 5% of C). Per pair
//! `a = 1 − max(0, Δout − Δin) / Δin`, clamped at −0.8; `A = max(mean(a), 0) · C`, i.e.
//! `A = C (1 − (Δout − Δin)/Δin)` averaged.
//!
//! ## The capacity `C`
//!
//! Spruce must be told `C` (`spruce_snd -c`, the notes §2.4): the tool does not measure it, a
//! user measures it first with a capacity tool. The WBest paper says the same of ProbeGap
//! ("needs to use third party capacity estimation tools") and cites pathrate (Dovrolis,
//! Ramanathan, Moore, "Packet-dispersion techniques and a capacity-estimation methodology",
//! IEEE/ACM ToN 12(6), 2004; its reference 22) as the packet-dispersion capacity tool. So by
//! default ([`CapacitySource::Measured`]) a capacity phase runs before Spruce's pairs, after
//! pathrate's Phase I, and its bytes and time count in Spruce's:
//!
//! 1. `k` = 100 pairs of 1500-byte packets, the two packets of a pair back to back, pairs
//!    starting at exponentially distributed intervals of mean 100 ms (Spruce's own pacing
//!    floor: Poisson, so the pairs do not lock onto a periodic cross flow; a draw of the
//!    run's seed stream `probing/spruce-capacity`); a pair starts no earlier than the fate
//!    of the previous one is known.
//! 2. Per pair that arrived whole, `b = 8L / gap`.
//! 3. pathrate's bandwidth resolution (its release 2.4.1): with more than 30 samples the range
//!    between the `(⌊k/10⌋+1)`-th smallest and largest sample (otherwise the whole range),
//!    and the bin width `ω` = range / 8 (range / 4 when the range is below 1 Mbit/s).
//! 4. A histogram of the samples in bins of width `ω` from the smallest sample; the capacity
//!    mode is the most populated bin (ties: the higher-bandwidth bin — cross traffic only
//!    widens a pair's gap on a last hop); `C` = the middle of that bin (pathrate reports the
//!    mode's range as its estimate). With `ω` = 0 (all samples equal) `C` is that value.
//!
//! Deviations from pathrate: no maximum-train-length and preliminary phases, no Phase II
//! (the asymptotic dispersion rate that picks among several modes: the strongest mode is
//! taken, pathrate's choice on a lightly loaded path), one packet size (pathrate's Phase I
//! varies it to weaken sub-capacity modes), 100 pairs instead of 1000, pairs ≈ 100 ms apart
//! instead of pathrate's 0.5 s or more (a faithful run takes about 15 minutes, its README).
//! This choice was written here before the measured figures were taken.
//!
//! [`CapacitySource::Oracle`] keeps the earlier setting for a sensitivity row: `C` is
//! Bianchi's saturation throughput of one 1500-byte station at the case's PHY rate (the
//! independent model of `wifi::bianchi`), which no real tool knows (and which is wrong where
//! rate adaptation runs, case 13); no capacity phase, no capacity bytes or time.
//!
//! Deviations: no control channel; `Δsend` is the scheduled gap (the simulated sender is
//! exact); lost pairs are skipped; the exponential draws come from the run's seed stream
//! `probing/spruce`.

use super::{Case, PACKET_BYTES, Testbed};
use crate::wifi::bianchi::bianchi_difs_mbps;
use crate::wifi::phy::Phy;
use wisp_core::{Duration, Instant};

/// One Spruce estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpruceResult {
    /// Mbit/s.
    pub available: f64,
    pub capacity: f64,
    pub pairs_used: u32,
    pub bytes_sent: u64,
    pub time: Duration,
}

/// Spruce's per-pair sample `a` (before the capacity factor).
pub fn sample(d_in: f64, d_out: f64) -> f64 {
    (1.0 - (d_out - d_in).max(0.0) / d_in).max(-0.8)
}

/// Spruce with `pairs` pairs on `case` with `seed`, after the warm-up.
pub fn run_once(case: &Case, pairs: u32, seed: u64) -> SpruceResult {
    let spec = case.spec();
    let capacity = bianchi_difs_mbps(&Phy::new(spec.standard), spec.rate, 1, PACKET_BYTES);
    let mut tb = Testbed::new(case, seed);
    let start = Instant::ZERO + Testbed::warmup();
    tb.run_until(start, &mut vec![]);
    let mut rng = crate::seed::stream(seed, "probing/spruce");
    let bits = 8.0 * f64::from(PACKET_BYTES);
    let d_in = bits / capacity; // µs
    let mean_gap = (2.0 * d_in / 0.05 * 1e-6).max(0.1);
    let offs = [Duration::ZERO, Duration::from_secs_f64(d_in * 1e-6)];
    let (mut sum, mut used) = (0.0, 0u32);
    let mut t = start;
    let mut now = start;
    for k in 0..pairs {
        let (arr, end) = tb.probe_train(t, &offs, PACKET_BYTES, u64::from(k) * 2);
        now = end;
        if let [Some(a), Some(b)] = arr[..] {
            let d_out = (b.saturating_duration_since(a)).as_secs_f64() * 1e6;
            sum += sample(d_in, d_out);
            used += 1;
        }
        let gap = mean_gap * wisp_core::stats::standard_exponential(&mut rng);
        t = (t + Duration::from_secs_f64(gap)).max(end);
    }
    let avg = if used > 0 { sum / f64::from(used) } else { 0.0 };
    SpruceResult {
        available: avg.max(0.0) * capacity,
        capacity,
        pairs_used: used,
        bytes_sent: u64::from(pairs) * 2 * u64::from(PACKET_BYTES),
        time: now - start,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_the_gap_model() {
        // Output gap = input gap: all available; twice the input gap: none; clamp at −0.8.
        assert_eq!(sample(400.0, 400.0), 1.0);
        assert_eq!(sample(400.0, 300.0), 1.0);
        assert_eq!(sample(400.0, 800.0), 0.0);
        assert_eq!(sample(400.0, 600.0), 0.5);
        assert_eq!(sample(400.0, 4000.0), -0.8);
    }
}
