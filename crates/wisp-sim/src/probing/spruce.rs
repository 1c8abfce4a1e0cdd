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

/// Where Spruce's capacity `C` comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapacitySource {
    /// A packet-pair capacity phase before Spruce's pairs (pathrate's Phase I, see the module
    /// doc): what a user of the tool has. The default; the comparison uses it.
    Measured { pairs: u32 },
    /// Bianchi's model at the case's PHY rate: an oracle no real tool has (sensitivity only).
    Oracle,
}

/// Spruce's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpruceConfig {
    /// Spruce's pairs (the tool's `-n`, default 100).
    pub pairs: u32,
    pub capacity: CapacitySource,
}

impl Default for SpruceConfig {
    fn default() -> Self {
        SpruceConfig {
            pairs: 100,
            capacity: CapacitySource::Measured { pairs: 100 },
        }
    }
}

impl SpruceConfig {
    /// The oracle variant: `C` from Bianchi's model, no capacity phase.
    pub fn oracle() -> Self {
        SpruceConfig {
            capacity: CapacitySource::Oracle,
            ..Self::default()
        }
    }
}

/// One Spruce estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpruceResult {
    /// Mbit/s.
    pub available: f64,
    /// The `C` Spruce was given (measured, or the oracle's), Mbit/s.
    pub capacity: f64,
    /// Pairs of the capacity phase that arrived whole (0 with the oracle).
    pub capacity_pairs_used: u32,
    pub pairs_used: u32,
    /// Both phases.
    pub bytes_sent: u64,
    /// First probe (of the capacity phase, if any) to the result.
    pub time: Duration,
}

/// Spruce's per-pair sample `a` (before the capacity factor).
pub fn sample(d_in: f64, d_out: f64) -> f64 {
    (1.0 - (d_out - d_in).max(0.0) / d_in).max(-0.8)
}

/// The capacity (Mbit/s) from packet-pair bandwidth samples (Mbit/s), as the module doc's
/// steps 3–4: pathrate's bin width, the most populated bin (ties: the higher one), its middle.
/// `None` without a positive finite sample.
pub fn pathrate_mode(samples: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = samples
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let range = if n > 30 {
        let lim = n / 10;
        s[n - lim - 1] - s[lim]
    } else {
        s[n - 1] - s[0]
    };
    let width = if range < 1.0 {
        range / 4.0
    } else {
        range / 8.0
    };
    if width <= 0.0 {
        return Some(s[n / 2]);
    }
    let lo = s[0];
    let mut counts = std::collections::BTreeMap::<u64, usize>::new();
    for &x in &s {
        *counts.entry(((x - lo) / width).floor() as u64).or_default() += 1;
    }
    // Highest count; among equal counts the higher bin (iteration is ascending, `>=` keeps
    // the last).
    let mut best = (0u64, 0usize);
    for (&bin, &c) in &counts {
        if c >= best.1 {
            best = (bin, c);
        }
    }
    Some(lo + (best.0 as f64 + 0.5) * width)
}

/// Spruce with `cfg` on `case` with `seed`, after the warm-up. `None` when the capacity phase
/// got no pair through (Spruce cannot run without `C`).
pub fn run_once(case: &Case, cfg: SpruceConfig, seed: u64) -> Option<SpruceResult> {
    let spec = case.spec();
    let mut tb = Testbed::new(case, seed);
    let start = Instant::ZERO + Testbed::warmup();
    tb.run_until(start, &mut vec![]);
    let bits = 8.0 * f64::from(PACKET_BYTES);
    let pair_bytes = 2 * u64::from(PACKET_BYTES);
    let mut bytes = 0u64;
    let mut t = start;
    let mut now = start;
    let (capacity, capacity_pairs_used) = match cfg.capacity {
        CapacitySource::Oracle => (
            bianchi_difs_mbps(&Phy::new(spec.standard), spec.rate, 1, PACKET_BYTES),
            0,
        ),
        CapacitySource::Measured { pairs } => {
            let mut rng = crate::seed::stream(seed, "probing/spruce-capacity");
            let offs = [Duration::ZERO, Duration::ZERO];
            let mut b = vec![];
            for k in 0..pairs {
                let (arr, end) =
                    tb.probe_train(t, &offs, PACKET_BYTES, (1 << 40) + u64::from(k) * 2);
                now = end;
                bytes += pair_bytes;
                if let [Some(a), Some(z)] = arr[..] {
                    let gap = z.saturating_duration_since(a).as_secs_f64() * 1e6; // µs
                    if gap > 0.0 {
                        b.push(bits / gap);
                    }
                }
                let gap = 0.1 * wisp_core::stats::standard_exponential(&mut rng);
                t = (t + Duration::from_secs_f64(gap)).max(end);
            }
            let used = b.len() as u32;
            (pathrate_mode(&b)?, used)
        }
    };
    let mut rng = crate::seed::stream(seed, "probing/spruce");
    let d_in = bits / capacity; // µs
    let mean_gap = (2.0 * d_in / 0.05 * 1e-6).max(0.1);
    let offs = [Duration::ZERO, Duration::from_secs_f64(d_in * 1e-6)];
    let (mut sum, mut used) = (0.0, 0u32);
    for k in 0..cfg.pairs {
        let (arr, end) = tb.probe_train(t, &offs, PACKET_BYTES, u64::from(k) * 2);
        now = end;
        bytes += pair_bytes;
        if let [Some(a), Some(b)] = arr[..] {
            let d_out = (b.saturating_duration_since(a)).as_secs_f64() * 1e6;
            sum += sample(d_in, d_out);
            used += 1;
        }
        let gap = mean_gap * wisp_core::stats::standard_exponential(&mut rng);
        t = (t + Duration::from_secs_f64(gap)).max(end);
    }
    let avg = if used > 0 { sum / f64::from(used) } else { 0.0 };
    Some(SpruceResult {
        available: avg.max(0.0) * capacity,
        capacity,
        capacity_pairs_used,
        pairs_used: used,
        bytes_sent: bytes,
        time: now - start,
    })
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

    #[test]
    fn the_capacity_is_the_middle_of_the_strongest_bin() {
        // Five samples: range 20, width 2.5 from 10; 20, 20, 21 share bin 4 → 10 + 4.5 × 2.5.
        let c = pathrate_mode(&[30.0, 20.0, 10.0, 21.0, 20.0]).unwrap();
        assert!((c - 21.25).abs() < 1e-9, "{c}");
        // A tie: the higher bin (range 10, width 1.25, bins 0 and 8).
        let c = pathrate_mode(&[10.0, 10.0, 20.0, 20.0]).unwrap();
        assert!((c - 20.625).abs() < 1e-9, "{c}");
        // A range below 1 Mbit/s (0.8): a quarter of it (0.2); 5.25 twice is bin 1.
        let c = pathrate_mode(&[5.0, 5.25, 5.25, 5.8]).unwrap();
        assert!((c - (5.0 + 1.5 * 0.2)).abs() < 1e-9, "{c}");
        // All equal: that value. Nothing usable: none.
        assert_eq!(pathrate_mode(&[7.0, 7.0, 7.0]), Some(7.0));
        assert_eq!(pathrate_mode(&[]), None);
        assert_eq!(pathrate_mode(&[0.0, f64::NAN, f64::INFINITY, -3.0]), None);
    }

    #[test]
    fn with_more_than_30_samples_a_tenth_at_each_end_does_not_set_the_width() {
        // 40 samples: 4 at 1, 16 at 20.0..23.75, 16 at 25, 4 at 100. The range without 4 at
        // each end is 25 − 20 = 5 → width 0.625 from 1; 25 falls in bin 38 (16 samples).
        let mut v = vec![1.0; 4];
        v.extend((0..16).map(|i| 20.0 + 0.25 * f64::from(i)));
        v.extend([25.0; 16]);
        v.extend([100.0; 4]);
        let c = pathrate_mode(&v).unwrap();
        assert!((c - (1.0 + 38.5 * 0.625)).abs() < 1e-9, "{c}");
    }

    #[test]
    fn on_an_idle_channel_the_measured_capacity_is_near_the_saturation_throughput() {
        // Case 0: the pairs' mode against Bianchi's one-station figure (the independent model);
        // both phases' bytes are counted.
        let case = Case::table1(0).unwrap();
        let r = run_once(&case, SpruceConfig::default(), 3).unwrap();
        let spec = case.spec();
        let model = bianchi_difs_mbps(&Phy::new(spec.standard), spec.rate, 1, PACKET_BYTES);
        assert!(
            (r.capacity - model).abs() / model < 0.15,
            "{r:?} vs {model}"
        );
        assert_eq!(r.bytes_sent, 200 * 2 * u64::from(PACKET_BYTES));
        assert!(r.capacity_pairs_used > 90, "{r:?}");
        let o = run_once(&case, SpruceConfig::oracle(), 3).unwrap();
        assert_eq!(o.capacity, model);
        assert_eq!(o.bytes_sent, 100 * 2 * u64::from(PACKET_BYTES));
        assert_eq!(o.capacity_pairs_used, 0);
        assert!(
            o.time < r.time,
            "the capacity phase takes time: {o:?} vs {r:?}"
        );
        assert_eq!(run_once(&case, SpruceConfig::default(), 3), Some(r));
    }
}
