//! Characterising a path the way Mehrotra et al. §III did (`wisp sweep`, Figs. 2–7 and 19).
//!
//! Constant-bit-rate traffic is sent at each of a list of rates for 20 s; the receiver records
//! each packet's arrival. Per rate:
//!
//! * the **one-way queueing delay** of each delivered packet: its one-way delay minus the
//!   smallest one-way delay of the whole sweep (so clock offsets cancel on a real path) — the
//!   paper's "one-way queuing delay (jitter)";
//! * the **loss rate over a sliding window of 32 packets** (by sequence number: a run of N
//!   packets gives N − 31 values), and the overall loss rate;
//!
//! each summarised by its minimum, 10th, 50th (nearest rank) and 90th percentiles, mean and
//! maximum — the vertical lines, circles, diamonds, crosses and stars of the paper's figures.
//!
//! **Zones.** The paper classifies rates as congestion-free or congested from the average delay
//! and loss at each rate against "some threshold" it does not give. Here, against the lowest
//! rate (d₀, l₀: its mean delay and loss): a rate is *congestion-free* if its mean delay is at
//! most max(1.5·d₀, d₀ + 10 ms) and its loss at most l₀ + max(0.5·l₀, 0.5 %); *congested* if its
//! mean delay exceeds 3·d₀ + 50 ms or its loss exceeds 2·l₀ + 5 %. The congestion-free zone is
//! every rate up to the highest rate below which all rates are free; the congested zone every
//! rate from the lowest above which all are congested.
//!
//! **Thresholds** (§V, Fig. 19): δ_T is the delay that best separates the samples of the
//! congestion-free rates from those of the congested rates (it minimises the fraction of free
//! samples above it plus the fraction of congested samples at or below it); ε_T is the same for
//! the 32-packet loss rate. With no congested rate, δ_T is the 99th percentile of the free set.
//!
//! The analysis ([`analyse`]) takes per-packet records ([`ProbeRecord`]) however they were
//! obtained; [`simulate`] obtains them from the simulator. A real path (the `wisp-net` layer)
//! only has to produce the records.

use crate::bench::run_all_map_or_cancel;
use crate::link::LinkModel;
use crate::queue::QueueSpec;
use crate::sim::{Scenario, SimError};
use serde::Serialize;
use std::sync::atomic::AtomicBool;
use wisp_core::scheme::{CbrConfig, SchemeConfig};
use wisp_core::stats::quantile_sorted;
use wisp_core::{Bitrate, DataSize, Duration, Instant};

/// The paper's sliding loss window, packets.
pub const LOSS_WINDOW: usize = 32;

/// The highest rate a sweep sends, kbit/s: each rate is a `cbr` flow, whose ceiling it is
/// (1 Gbit/s; above it the sender would never yield).
pub const MAX_RATE_KBPS: f64 = wisp_core::scheme::cbr::MAX_KBPS;

/// One packet of a sweep: its sequence number, when it was sent and when it arrived (`None`:
/// lost). On a real path the two clocks may differ by a constant offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeRecord {
    pub seq: u64,
    pub sent: Instant,
    pub received: Option<Instant>,
}

/// The records of one rate.
#[derive(Clone, Debug)]
pub struct RateRecords {
    pub rate: Bitrate,
    pub duration: Duration,
    pub records: Vec<ProbeRecord>,
}

/// Minimum, 10th/50th/90th percentiles (nearest rank), mean and maximum.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub min: f64,
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub mean: f64,
    pub max: f64,
    pub n: usize,
}

impl Summary {
    /// `None` for no values.
    pub fn of(values: &mut [f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        values.sort_unstable_by(f64::total_cmp);
        let q = |p| quantile_sorted(values, p).unwrap_or(f64::NAN);
        Some(Summary {
            min: values[0],
            p10: q(0.1),
            p50: q(0.5),
            p90: q(0.9),
            mean: values.iter().sum::<f64>() / values.len() as f64,
            max: values[values.len() - 1],
            n: values.len(),
        })
    }
}

/// Where a rate falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Zone {
    CongestionFree,
    Transition,
    Congested,
}

impl Zone {
    pub fn as_str(self) -> &'static str {
        match self {
            Zone::CongestionFree => "free",
            Zone::Transition => "transition",
            Zone::Congested => "congested",
        }
    }
}

/// The figures of one rate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatePoint {
    pub rate_kbps: f64,
    pub packets: usize,
    pub delivered: usize,
    /// Delivered bytes × 8 / the rate's duration.
    pub throughput_kbps: f64,
    /// One-way queueing delay, ms.
    pub delay_ms: Option<Summary>,
    /// Loss rate over each sliding window of 32 packets.
    pub loss_window: Option<Summary>,
    /// Packets lost / packets sent.
    pub loss_rate: f64,
    pub zone: Zone,
}

/// A separating threshold (Fig. 19) and how well it separates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Threshold {
    pub value: f64,
    /// Fraction of congestion-free samples above it.
    pub free_above: f64,
    /// Fraction of congested samples at or below it (`None` without congested samples).
    pub congested_below: Option<f64>,
}

/// A sweep's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sweep {
    pub link: String,
    pub packet_bytes: u64,
    pub duration_s: f64,
    /// The smallest one-way delay of the sweep, ms (the delay origin).
    pub base_owd_ms: f64,
    pub points: Vec<RatePoint>,
    /// The highest rate of the congestion-free zone, kbit/s.
    pub free_max_kbps: Option<f64>,
    /// The lowest rate of the congested zone, kbit/s.
    pub congested_min_kbps: Option<f64>,
    /// δ_T, ms.
    pub delay_threshold_ms: Option<Threshold>,
    /// ε_T (32-packet loss rate).
    pub loss_threshold: Option<Threshold>,
    /// Delay and 32-packet-loss samples of each zone (for Fig. 19's densities).
    #[serde(skip)]
    pub samples: ZoneSamples,
}

/// The samples of the congestion-free and congested zones.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZoneSamples {
    pub free_delay_ms: Vec<f64>,
    pub congested_delay_ms: Vec<f64>,
    pub free_loss: Vec<f64>,
    pub congested_loss: Vec<f64>,
}

/// Loss rates over every window of `window` consecutive packets (by sequence number).
pub fn window_losses(records: &[ProbeRecord], window: usize) -> Vec<f64> {
    let mut r: Vec<&ProbeRecord> = records.iter().collect();
    r.sort_unstable_by_key(|p| p.seq);
    if window == 0 || r.len() < window {
        return vec![];
    }
    let lost: Vec<u32> = r.iter().map(|p| u32::from(p.received.is_none())).collect();
    let mut sum: u32 = lost[..window].iter().sum();
    let mut out = Vec::with_capacity(r.len() - window + 1);
    out.push(f64::from(sum) / window as f64);
    for i in window..lost.len() {
        sum = sum + lost[i] - lost[i - window];
        out.push(f64::from(sum) / window as f64);
    }
    out
}

/// The threshold minimising (free above) + (congested at or below).
pub fn separating_threshold(free: &[f64], congested: &[f64]) -> Option<Threshold> {
    if free.is_empty() {
        return None;
    }
    let mut f = free.to_vec();
    f.sort_unstable_by(f64::total_cmp);
    if congested.is_empty() {
        let value = quantile_sorted(&f, 0.99)?;
        let above = f.iter().filter(|&&x| x > value).count() as f64 / f.len() as f64;
        return Some(Threshold {
            value,
            free_above: above,
            congested_below: None,
        });
    }
    let mut c = congested.to_vec();
    c.sort_unstable_by(f64::total_cmp);
    // Candidates: every distinct value of either set; the error is evaluated by binary search.
    let mut best: Option<(f64, f64, f64, f64)> = None;
    let mut candidates: Vec<f64> = f.iter().chain(c.iter()).copied().collect();
    candidates.sort_unstable_by(f64::total_cmp);
    candidates.dedup();
    for &t in &candidates {
        let free_above = (f.len() - f.partition_point(|&x| x <= t)) as f64 / f.len() as f64;
        let cong_below = c.partition_point(|&x| x <= t) as f64 / c.len() as f64;
        let err = free_above + cong_below;
        if best.is_none_or(|b| err < b.0) {
            best = Some((err, t, free_above, cong_below));
        }
    }
    best.map(|(_, value, free_above, c)| Threshold {
        value,
        free_above,
        congested_below: Some(c),
    })
}

/// Analyses the records of every rate (sorted by rate) into a [`Sweep`].
pub fn analyse(link: &str, packet_bytes: u64, mut rates: Vec<RateRecords>, window: usize) -> Sweep {
    rates.sort_by_key(|r| r.rate);
    let owd_ns = |p: &ProbeRecord| {
        p.received
            .map(|r| r.as_nanos() as i128 - p.sent.as_nanos() as i128)
    };
    let base = rates
        .iter()
        .flat_map(|r| r.records.iter().filter_map(owd_ns))
        .min()
        .unwrap_or(0);
    let mut delays: Vec<Vec<f64>> = vec![];
    let mut losses: Vec<Vec<f64>> = vec![];
    let mut points: Vec<RatePoint> = vec![];
    for r in &rates {
        let mut d: Vec<f64> = r
            .records
            .iter()
            .filter_map(owd_ns)
            .map(|o| (o - base) as f64 / 1e6)
            .collect();
        let mut l = window_losses(&r.records, window);
        let delivered = r.records.iter().filter(|p| p.received.is_some()).count();
        let secs = r.duration.as_secs_f64();
        let bytes = delivered as f64 * packet_bytes as f64;
        points.push(RatePoint {
            rate_kbps: r.rate.kbps_f64(),
            packets: r.records.len(),
            delivered,
            throughput_kbps: if secs > 0.0 {
                bytes * 8.0 / secs / 1e3
            } else {
                0.0
            },
            delay_ms: Summary::of(&mut d),
            loss_window: Summary::of(&mut l),
            loss_rate: if r.records.is_empty() {
                0.0
            } else {
                1.0 - delivered as f64 / r.records.len() as f64
            },
            zone: Zone::Transition,
        });
        delays.push(d);
        losses.push(l);
    }
    classify(&mut points);
    let free_max = points
        .iter()
        .take_while(|p| p.zone == Zone::CongestionFree)
        .last()
        .map(|p| p.rate_kbps);
    let congested_min = points
        .iter()
        .rev()
        .take_while(|p| p.zone == Zone::Congested)
        .last()
        .map(|p| p.rate_kbps);
    let mut samples = ZoneSamples::default();
    for (i, p) in points.iter().enumerate() {
        match p.zone {
            Zone::CongestionFree => {
                samples.free_delay_ms.extend(&delays[i]);
                samples.free_loss.extend(&losses[i]);
            }
            Zone::Congested => {
                samples.congested_delay_ms.extend(&delays[i]);
                samples.congested_loss.extend(&losses[i]);
            }
            Zone::Transition => {}
        }
    }
    Sweep {
        link: link.to_string(),
        packet_bytes,
        duration_s: rates.first().map_or(0.0, |r| r.duration.as_secs_f64()),
        base_owd_ms: base as f64 / 1e6,
        delay_threshold_ms: separating_threshold(
            &samples.free_delay_ms,
            &samples.congested_delay_ms,
        ),
        loss_threshold: separating_threshold(&samples.free_loss, &samples.congested_loss),
        points,
        free_max_kbps: free_max,
        congested_min_kbps: congested_min,
        samples,
    }
}

/// Marks the zones (see the module doc): congestion-free up to the highest rate below which
/// every rate is free, congested from the lowest rate above which every rate is congested.
fn classify(points: &mut [RatePoint]) {
    let Some(first) = points.first() else { return };
    let d0 = first.delay_ms.map_or(0.0, |s| s.mean);
    let l0 = first.loss_rate;
    let mean = |p: &RatePoint| p.delay_ms.map_or(f64::INFINITY, |s| s.mean);
    let free = |p: &RatePoint| {
        mean(p) <= (1.5 * d0).max(d0 + 10.0) && p.loss_rate <= l0 + (0.5 * l0).max(0.005)
    };
    let congested = |p: &RatePoint| mean(p) > 3.0 * d0 + 50.0 || p.loss_rate > 2.0 * l0 + 0.05;
    let n_free = points.iter().take_while(|p| free(p)).count();
    let n_cong = points.iter().rev().take_while(|p| congested(p)).count();
    let n = points.len();
    for (i, p) in points.iter_mut().enumerate() {
        p.zone = if i < n_free {
            Zone::CongestionFree
        } else if i >= n - n_cong {
            Zone::Congested
        } else {
            Zone::Transition
        };
    }
}

/// How to sweep a simulated link.
#[derive(Clone, Debug)]
pub struct SimSweep {
    pub link: LinkModel,
    pub rates: Vec<Bitrate>,
    /// Per rate (the paper: 20 s).
    pub duration: Duration,
    /// Wire size of each packet (the paper's figures: 1000 bytes).
    pub packet_size: DataSize,
    /// One-way propagation delay in front of the link.
    pub delay: Duration,
    pub queue: QueueSpec,
    pub seed: u64,
    pub jobs: usize,
}

/// The default rates: fractions of the link's mean capacity over the sweep's duration, denser
/// near the capacity.
pub fn default_rates(link: &LinkModel, duration: Duration) -> Vec<Bitrate> {
    let end = Instant::ZERO + duration.max(Duration::from_secs(60));
    let bytes: f64 = link
        .capacity_bins(Instant::ZERO, end, end - Instant::ZERO)
        .iter()
        .sum();
    let cap = bytes * 8.0 / (end - Instant::ZERO).as_secs_f64();
    [
        0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 1.02, 1.05, 1.1, 1.25, 1.5,
    ]
    .iter()
    .map(|f| Bitrate::from_bps_f64((cap * f / 1000.0).round().max(1.0) * 1000.0))
    .collect()
}

/// Runs the sweep in the simulator: one CBR run per rate, each on a fresh link from time 0 (so
/// every rate meets the same channel).
pub fn simulate(
    s: &SimSweep,
    on_done: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<RateRecords>, SimError> {
    simulate_or_cancel(s, on_done, &AtomicBool::new(false))
}

/// [`simulate`] that stops with [`SimError::Cancelled`] once `cancel` is set
/// ([`run_all_map_or_cancel`]).
pub fn simulate_or_cancel(
    s: &SimSweep,
    on_done: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<RateRecords>, SimError> {
    let scenarios: Vec<Scenario> = s
        .rates
        .iter()
        .map(|&rate| {
            let mut sc = Scenario::new(
                s.link.clone(),
                SchemeConfig::from(CbrConfig::default().rate(rate)),
            );
            sc.run.duration = s.duration;
            sc.delay = s.delay;
            sc.queue = s.queue;
            sc.run.seed = s.seed;
            sc.run.mtu = s.packet_size;
            sc
        })
        .collect();
    let results = run_all_map_or_cancel(
        &scenarios,
        s.jobs,
        &|d, n, _| on_done(d, n),
        &|_, r| r,
        cancel,
    );
    let mut out = vec![];
    for (rate, r) in s.rates.iter().zip(results) {
        let r = r?;
        out.push(RateRecords {
            rate: *rate,
            duration: s.duration,
            // Packets still in flight at the end are neither delivered nor lost: left out.
            records: r
                .log
                .packets
                .iter()
                .filter(|p| p.delivered.is_some() || p.dropped.is_some())
                .map(|p| ProbeRecord {
                    seq: p.header.seq,
                    sent: p.sent(),
                    received: p.delivered,
                })
                .collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_core::time::ms;

    fn rec(seq: u64, sent_ms: u64, owd_ms: Option<u64>) -> ProbeRecord {
        ProbeRecord {
            seq,
            sent: Instant::from_millis(sent_ms),
            received: owd_ms.map(|d| Instant::from_millis(sent_ms + d)),
        }
    }

    #[test]
    fn sliding_window_losses() {
        // 40 packets, 2 lost at 5 and 35: 9 windows of 32.
        let r: Vec<_> = (0..40)
            .map(|i| rec(i, i, (i != 5 && i != 35).then_some(10)))
            .collect();
        let l = window_losses(&r, 32);
        assert_eq!(l.len(), 9);
        // Windows 0..=5 hold packet 5 only; window 4 (4..36) holds both; 6.. hold only 35.
        assert_eq!(l[0], 1.0 / 32.0);
        assert_eq!(l[4], 2.0 / 32.0);
        assert_eq!(l[8], 1.0 / 32.0);
        assert!(window_losses(&r[..10], 32).is_empty());
    }

    #[test]
    fn delays_are_relative_to_the_smallest_and_zones_follow_the_means() {
        let mk = |kbps: u64, owd: u64, lost_every: u64| RateRecords {
            rate: Bitrate::from_kbps(kbps),
            duration: Duration::from_secs(20),
            records: (0..200)
                .map(|i| {
                    rec(
                        i,
                        i * 10,
                        (lost_every == 0 || i % lost_every != 0).then_some(owd + i % 3),
                    )
                })
                .collect(),
        };
        // A clock offset of 1000 ms cancels: delays are relative to 1000 ms.
        let s = analyse(
            "test",
            1000,
            vec![
                mk(400, 1400, 5),
                mk(100, 1000, 0),
                mk(200, 1002, 0),
                mk(300, 1030, 0),
            ],
            32,
        );
        assert_eq!(s.base_owd_ms, 1000.0);
        let zones: Vec<_> = s.points.iter().map(|p| p.zone).collect();
        assert_eq!(
            zones,
            [
                Zone::CongestionFree,
                Zone::CongestionFree,
                Zone::Transition,
                Zone::Congested
            ]
        );
        assert_eq!(s.free_max_kbps, Some(200.0));
        assert_eq!(s.congested_min_kbps, Some(400.0));
        let d = s.points[0].delay_ms.unwrap();
        assert_eq!((d.min, d.p50, d.max), (0.0, 1.0, 2.0));
        assert!((s.points[3].loss_rate - 0.2).abs() < 1e-12);
        // Free delays are 0..4 ms, congested 400..402: δ_T separates them perfectly.
        let t = s.delay_threshold_ms.unwrap();
        assert!(t.value >= 4.0 && t.value < 400.0, "{t:?}");
        assert_eq!((t.free_above, t.congested_below), (0.0, Some(0.0)));
        assert_eq!(s.samples.free_delay_ms.len(), 400);
    }

    #[test]
    fn the_threshold_minimises_misclassification() {
        let free = [1.0, 2.0, 3.0, 4.0, 50.0];
        let congested = [10.0, 20.0, 30.0, 40.0, 60.0];
        let t = separating_threshold(&free, &congested).unwrap();
        // At 4: one free sample above (0.2), no congested below: the best possible.
        assert_eq!(t.value, 4.0);
        assert_eq!((t.free_above, t.congested_below), (0.2, Some(0.0)));
        let only_free = separating_threshold(&free, &[]).unwrap();
        assert_eq!(only_free.value, 50.0);
        assert_eq!(separating_threshold(&[], &congested), None);
    }

    #[test]
    fn a_simulated_sweep_of_a_constant_link_has_two_zones() {
        let link = "const:1mbps"
            .parse::<crate::link::LinkSpec>()
            .unwrap()
            .load()
            .unwrap();
        let s = SimSweep {
            link,
            rates: [200, 500, 900, 1200]
                .iter()
                .map(|&k| Bitrate::from_kbps(k))
                .collect(),
            duration: Duration::from_secs(10),
            packet_size: DataSize::from_bytes(1000),
            delay: ms(20),
            queue: "droptail:packets=50".parse().unwrap(),
            seed: 1,
            jobs: 1,
        };
        let recs = simulate(&s, &|_, _| {}).unwrap();
        let sw = analyse("const:1mbps", 1000, recs, LOSS_WINDOW);
        println!("{sw:#?}");
        assert_eq!(sw.free_max_kbps, Some(900.0));
        assert_eq!(sw.congested_min_kbps, Some(1200.0));
        let top = &sw.points[3];
        // 1.2 Mbit/s into 1 Mbit/s: a sixth of the packets are lost once the buffer is full.
        assert!(
            top.loss_rate > 0.1 && top.loss_rate < 0.2,
            "{}",
            top.loss_rate
        );
        assert!((top.throughput_kbps - 1000.0).abs() < 30.0);
    }
}
