//! Metrics, one definition used everywhere (DESIGN.md "Metrics").
//!
//! For one flow over its measurement window *W* = [max(warm-up, flow start), min(end, flow stop)):
//!
//! | field | definition |
//! |---|---|
//! | `throughput_kbps` | bytes delivered to the receiver during *W* × 8 / \|W\| |
//! | `capacity_kbps` | bytes the link offers during *W* × 8 / \|W\| (opportunities × 1500 B for traces) |
//! | `utilization` | throughput / capacity |
//! | `delay_p50_ms`, `delay_p95_ms` | median and 95th percentile of one-way delay (send → delivery) of packets delivered during *W* |
//! | `queue_delay_p95_ms` | 95th percentile of the time from reaching the bottleneck queue to delivery |
//! | `e2e_delay_p95_ms` | Sprout's 95% end-to-end delay: for every millisecond *t* in *W*, age(*t*) = *t* − send time of the most recently *sent* packet among those delivered by *t*; its 95th percentile |
//! | `ideal_e2e_delay_p95_ms` | the same for the ideal sender (every opportunity used, zero queue) on the same link and window |
//! | `self_inflicted_delay_ms` | `e2e_delay_p95_ms − ideal_e2e_delay_p95_ms` |
//! | `loss_rate` | packets sent during *W* that were dropped / packets sent during *W* |
//!
//! Percentiles are nearest-rank ([`wisp_core::stats::quantile_sorted`]). Milliseconds before
//! the first delivery of the run have no age and are skipped. Packets still in flight at the end
//! count as neither delivered nor lost.

use crate::link::LinkModel;
use crate::log::{PacketRecord, RunLog};
use crate::sim::{Cancel, SimError};
use serde::Serialize;
use wisp_core::{DataSize, Duration, Instant};

/// The metrics of one flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowMetrics {
    pub flow: usize,
    pub scheme: String,
    pub window_start_s: f64,
    pub window_end_s: f64,
    pub throughput_kbps: f64,
    pub capacity_kbps: f64,
    pub utilization: f64,
    pub delay_p50_ms: Option<f64>,
    pub delay_p95_ms: Option<f64>,
    pub queue_delay_p95_ms: Option<f64>,
    pub e2e_delay_p95_ms: Option<f64>,
    pub ideal_e2e_delay_p95_ms: Option<f64>,
    pub self_inflicted_delay_ms: Option<f64>,
    pub loss_rate: f64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_lost: u64,
}

/// What metrics need to know about the run besides its log.
#[derive(Clone, Debug)]
pub struct MetricsContext<'a> {
    pub link: &'a LinkModel,
    pub delay: Duration,
    pub mtu: DataSize,
    pub end: Instant,
    pub warmup: Duration,
}

/// The 95th percentile of Sprout's age(t) over the milliseconds of `[from, to)`, given
/// `(delivered, sent)` pairs sorted by delivery time.
pub fn e2e_delay_p95_ms(
    deliveries: impl IntoIterator<Item = (Instant, Instant)>,
    from: Instant,
    to: Instant,
) -> Option<f64> {
    e2e_delay_p95_ms_or_cancel(deliveries, from, to, None).unwrap_or(None)
}

/// How many milliseconds of age(t) between two calls of the cancel point: about a millisecond
/// of wall time.
const CANCEL_POLL_MS: u64 = 1 << 20;

/// [`e2e_delay_p95_ms`] with a cancel point, called every 2^20 milliseconds (`CANCEL_POLL_MS`) of
/// the window and before the sort (a day-long window is 86.4 M milliseconds: seconds of work).
///
/// The ages are kept as nanoseconds and the percentile selected among them: milliseconds are a
/// non-decreasing function of nanoseconds, so the selected age in milliseconds is the one a
/// selection among the milliseconds picks, and integers compare faster than `f64::total_cmp`.
pub fn e2e_delay_p95_ms_or_cancel(
    deliveries: impl IntoIterator<Item = (Instant, Instant)>,
    from: Instant,
    to: Instant,
    cancel: Option<Cancel<'_>>,
) -> Result<Option<f64>, SimError> {
    let stop = || cancel.is_some_and(|c| c());
    let mut it = deliveries.into_iter().peekable();
    let mut newest_sent: Option<Instant> = None;
    let mut ages = Vec::with_capacity(((to - from).as_millis()) as usize);
    let mut t = from;
    let mut n = 0u64;
    while t < to {
        while let Some(&(d, s)) = it.peek() {
            if d > t {
                break;
            }
            newest_sent = Some(newest_sent.map_or(s, |n| n.max(s)));
            it.next();
        }
        if let Some(s) = newest_sent {
            ages.push((t - s).as_nanos());
        }
        t += Duration::from_millis(1);
        n += 1;
        if n % CANCEL_POLL_MS == 0 && stop() {
            return Err(SimError::Cancelled);
        }
    }
    if stop() {
        return Err(SimError::Cancelled);
    }
    Ok(quantiles_of_nanos(&mut ages, &[0.95])[0])
}

/// The nearest-rank quantiles ([`wisp_core::stats::quantile_sorted`]'s ranks) of durations
/// given in nanoseconds, in milliseconds, found by selection ([`wisp_core::stats::select_quantiles`] on
/// integers): the same values as the quantiles of the durations' `as_millis_f64`, since that is
/// non-decreasing in the nanoseconds. `values` is left partitioned.
fn quantiles_of_nanos(values: &mut [u64], qs: &[f64]) -> Vec<Option<f64>> {
    wisp_core::stats::select_quantiles(values, qs, u64::cmp)
        .into_iter()
        .map(|v| v.map(|ns| Duration::from_nanos(ns).as_millis_f64()))
        .collect()
}

/// The ideal sender's 95% end-to-end delay on `ctx.link` over `[from, to)`.
pub fn ideal_e2e_delay_p95_ms(ctx: &MetricsContext<'_>, from: Instant, to: Instant) -> Option<f64> {
    ideal_e2e_delay_p95_ms_or_cancel(ctx, from, to, None).unwrap_or(None)
}

fn ideal_e2e_delay_p95_ms_or_cancel(
    ctx: &MetricsContext<'_>,
    from: Instant,
    to: Instant,
    cancel: Option<Cancel<'_>>,
) -> Result<Option<f64>, SimError> {
    let ideal = ctx
        .link
        .ideal_deliveries(ctx.delay, ctx.mtu)
        .map(|p| (p.delivered, p.sent))
        .take_while(|&(d, _)| d < to);
    e2e_delay_p95_ms_or_cancel(ideal, from, to, cancel)
}

/// Computes [`FlowMetrics`] for flow `flow` whose sending interval is `[start, stop)`.
pub fn flow_metrics(
    log: &RunLog,
    ctx: &MetricsContext<'_>,
    flow: usize,
    scheme: String,
    start: Instant,
    stop: Instant,
) -> FlowMetrics {
    flow_metrics_or_cancel(log, ctx, flow, scheme, (start, stop), None)
        .expect("no cancel point, never cancelled")
}

/// What a flow's metrics need of its link alone, not of the run: the ideal sender's 95%
/// end-to-end delay and the bytes the link offers, over the flow's measurement window. It
/// depends on the link, the window and the delay only, so a run can compute it while the
/// simulation runs ([`crate::run`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkWindow {
    pub ideal_e2e_delay_p95_ms: Option<f64>,
    pub capacity_bytes: f64,
}

/// The measurement window *W* of a flow sending over `[start, stop)` ([module](self)).
fn window(ctx: &MetricsContext<'_>, start: Instant, stop: Instant) -> (Instant, Instant) {
    let from = (Instant::ZERO + ctx.warmup).max(start);
    (from, ctx.end.min(stop).max(from))
}

/// [`LinkWindow`] for a flow sending over `interval` (`[start, stop)`), with a cancel point in
/// the ideal sender's loop.
pub fn link_window_or_cancel(
    ctx: &MetricsContext<'_>,
    (start, stop): (Instant, Instant),
    cancel: Option<Cancel<'_>>,
) -> Result<LinkWindow, SimError> {
    let (from, to) = window(ctx, start, stop);
    let ideal = ideal_e2e_delay_p95_ms_or_cancel(ctx, from, to, cancel)?;
    let capacity_bytes: f64 = ctx.link.capacity_bins(from, to, to - from).iter().sum();
    Ok(LinkWindow {
        ideal_e2e_delay_p95_ms: ideal,
        capacity_bytes,
    })
}

/// [`flow_metrics`] with a cancel point in its long loops (the end-to-end delays' milliseconds:
/// [`e2e_delay_p95_ms_or_cancel`]); `interval` is the flow's `[start, stop)`.
pub fn flow_metrics_or_cancel(
    log: &RunLog,
    ctx: &MetricsContext<'_>,
    flow: usize,
    scheme: String,
    interval: (Instant, Instant),
    cancel: Option<Cancel<'_>>,
) -> Result<FlowMetrics, SimError> {
    let link = link_window_or_cancel(ctx, interval, cancel)?;
    flow_metrics_given(log, ctx, flow, scheme, interval, link, cancel)
}

/// [`flow_metrics_or_cancel`] given what its link offered over the window
/// ([`link_window_or_cancel`]).
pub fn flow_metrics_given(
    log: &RunLog,
    ctx: &MetricsContext<'_>,
    flow: usize,
    scheme: String,
    interval: (Instant, Instant),
    link: LinkWindow,
    cancel: Option<Cancel<'_>>,
) -> Result<FlowMetrics, SimError> {
    let mine = log.packets.iter().filter(|p| p.flow as usize == flow);
    flow_metrics_of(mine, ctx, flow, scheme, interval, link, cancel)
}

/// [`flow_metrics_given`] over `packets`, flow `flow`'s packets of the log in send order (a
/// run of many flows hands each its own without a pass over the others').
pub fn flow_metrics_of<'a>(
    packets: impl Iterator<Item = &'a PacketRecord>,
    ctx: &MetricsContext<'_>,
    flow: usize,
    scheme: String,
    (start, stop): (Instant, Instant),
    link: LinkWindow,
    cancel: Option<Cancel<'_>>,
) -> Result<FlowMetrics, SimError> {
    let (from, to) = window(ctx, start, stop);
    let w = (to - from).as_secs_f64();
    let mut delivered_bytes = 0u64;
    let mut owd = Vec::new();
    let mut qd = Vec::new();
    let mut deliveries = Vec::new();
    let (mut sent, mut lost, mut delivered) = (0u64, 0u64, 0u64);
    for p in packets {
        let s = p.sent();
        if s >= from && s < to {
            sent += 1;
            if p.dropped.is_some() {
                lost += 1;
            }
        }
        if let Some(d) = p.delivered {
            deliveries.push((d, s));
            if d >= from && d < to {
                delivered += 1;
                delivered_bytes += p.header.size.bytes();
                owd.push((d - s).as_nanos());
                if let Some(e) = p.enqueued {
                    qd.push((d - e).as_nanos());
                }
            }
        }
    }
    deliveries.sort_unstable();
    let e2e = e2e_delay_p95_ms_or_cancel(deliveries.iter().copied(), from, to, cancel)?;
    let ideal = link.ideal_e2e_delay_p95_ms;
    let capacity_bytes = link.capacity_bytes;
    let throughput_kbps = if w > 0.0 {
        delivered_bytes as f64 * 8.0 / w / 1e3
    } else {
        0.0
    };
    let capacity_kbps = if w > 0.0 {
        capacity_bytes * 8.0 / w / 1e3
    } else {
        0.0
    };
    let d = quantiles_of_nanos(&mut owd, &[0.5, 0.95]);
    let q = quantiles_of_nanos(&mut qd, &[0.95]);
    Ok(FlowMetrics {
        flow,
        scheme,
        window_start_s: from.as_secs_f64(),
        window_end_s: to.as_secs_f64(),
        throughput_kbps,
        capacity_kbps,
        utilization: if capacity_kbps > 0.0 {
            throughput_kbps / capacity_kbps
        } else {
            0.0
        },
        delay_p50_ms: d[0],
        delay_p95_ms: d[1],
        queue_delay_p95_ms: q[0],
        e2e_delay_p95_ms: e2e,
        ideal_e2e_delay_p95_ms: ideal,
        self_inflicted_delay_ms: e2e.zip(ideal).map(|(a, b)| a - b),
        loss_rate: if sent > 0 {
            lost as f64 / sent as f64
        } else {
            0.0
        },
        packets_sent: sent,
        packets_delivered: delivered,
        packets_lost: lost,
    })
}

/// Per-bin series of one flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSeries {
    /// Bytes sent in the bin, as kbit/s.
    pub send_kbps: Vec<f64>,
    /// Bytes delivered in the bin, as kbit/s.
    pub throughput_kbps: Vec<f64>,
    /// Mean one-way delay of the packets delivered in the bin.
    pub delay_ms: Vec<Option<f64>>,
    /// Mean and maximum queueing delay of the packets delivered in the bin.
    pub queue_delay_ms: Vec<Option<f64>>,
    pub queue_delay_max_ms: Vec<Option<f64>>,
}

/// Time series of a run, for plots.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeSeries {
    pub bin_s: f64,
    /// Start of each bin.
    pub t_s: Vec<f64>,
    pub capacity_kbps: Vec<f64>,
    pub flows: Vec<FlowSeries>,
}

/// Bins the log from 0 to `end` in bins of `bin`.
pub fn time_series(
    log: &RunLog,
    link: &LinkModel,
    flows: usize,
    end: Instant,
    bin: Duration,
) -> TimeSeries {
    time_series_given(
        log,
        link.capacity_bins(Instant::ZERO, end, bin),
        flows,
        end,
        bin,
    )
}

/// [`time_series`] given the link's bytes per bin (`link.capacity_bins(0, end, bin)`).
pub fn time_series_given(
    log: &RunLog,
    cap: Vec<f64>,
    flows: usize,
    end: Instant,
    bin: Duration,
) -> TimeSeries {
    let n = cap.len();
    let bin_s = bin.as_secs_f64();
    let index = |t: Instant| ((t.as_nanos() / bin.as_nanos()) as usize).min(n.saturating_sub(1));
    let mut sent = vec![vec![0u64; n]; flows];
    let mut got = vec![vec![0u64; n]; flows];
    let mut delay = vec![vec![(0.0f64, 0u32); n]; flows];
    let mut queue = vec![vec![(0.0f64, 0.0f64); n]; flows];
    for p in &log.packets {
        let f = p.flow as usize;
        if p.sent() < end {
            sent[f][index(p.sent())] += p.header.size.bytes();
        }
        if let Some(d) = p.delivered.filter(|&d| d < end) {
            let i = index(d);
            got[f][i] += p.header.size.bytes();
            delay[f][i].0 += (d - p.sent()).as_millis_f64();
            delay[f][i].1 += 1;
            let q = p.enqueued.map_or(0.0, |e| (d - e).as_millis_f64());
            queue[f][i].0 += q;
            queue[f][i].1 = queue[f][i].1.max(q);
        }
    }
    let kbps = |b: u64| b as f64 * 8.0 / bin_s / 1e3;
    TimeSeries {
        bin_s,
        t_s: (0..n).map(|i| i as f64 * bin_s).collect(),
        capacity_kbps: cap.iter().map(|&b| b * 8.0 / bin_s / 1e3).collect(),
        flows: (0..flows)
            .map(|f| FlowSeries {
                send_kbps: sent[f].iter().map(|&b| kbps(b)).collect(),
                throughput_kbps: got[f].iter().map(|&b| kbps(b)).collect(),
                delay_ms: delay[f]
                    .iter()
                    .map(|&(s, c)| (c > 0).then(|| s / f64::from(c)))
                    .collect(),
                queue_delay_ms: delay[f]
                    .iter()
                    .zip(&queue[f])
                    .map(|(&(_, c), &(s, _))| (c > 0).then(|| s / f64::from(c)))
                    .collect(),
                queue_delay_max_ms: delay[f]
                    .iter()
                    .zip(&queue[f])
                    .map(|(&(_, c), &(_, m))| (c > 0).then_some(m))
                    .collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_core::stats::quantile_sorted;

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn e2e_age_is_time_since_newest_delivered_send() {
        // Sent at 0, delivered at 10; sent at 5, delivered at 20.
        let d = [(at(10), at(0)), (at(20), at(5))];
        // ms 0..10 have no delivery yet; 10..20 age = t - 0 (10..19); 20..30 age = t - 5 (15..24).
        let p95 = e2e_delay_p95_ms(d, at(0), at(30)).unwrap();
        let mut ages: Vec<f64> = (10..20).chain(15..25).map(f64::from).collect();
        ages.sort_by(f64::total_cmp);
        assert_eq!(Some(p95), quantile_sorted(&ages, 0.95));
        assert_eq!(e2e_delay_p95_ms([], at(0), at(30)), None);
    }

    /// Selecting among nanoseconds gives the quantiles of the milliseconds.
    #[test]
    fn quantiles_of_nanos_are_those_of_the_milliseconds() {
        let nanos: Vec<u64> = (0..1000u64)
            .map(|i| (i * 7_919_993 + 1_234_567) % 97_000_003)
            .chain([0, 1, 999_999, 1_000_000, 1_000_001])
            .collect();
        let qs = [0.95, 0.0, 0.5, 1.0, 0.999];
        let mut ms: Vec<f64> = nanos
            .iter()
            .map(|&n| Duration::from_nanos(n).as_millis_f64())
            .collect();
        let want = wisp_core::stats::quantiles_unsorted(&mut ms, &qs);
        assert_eq!(quantiles_of_nanos(&mut nanos.clone(), &qs), want);
        assert_eq!(quantiles_of_nanos(&mut [], &qs), vec![None; 5]);
    }

    #[test]
    fn a_late_older_packet_does_not_lower_the_age() {
        // The packet sent at 5 arrives first; the one sent at 0 arrives later and changes nothing.
        let d = [(at(10), at(5)), (at(12), at(0))];
        let p95 = e2e_delay_p95_ms(d, at(10), at(11)).unwrap();
        assert_eq!(p95, 5.0);
        let p95 = e2e_delay_p95_ms(d, at(12), at(13)).unwrap();
        assert_eq!(p95, 7.0);
    }
}
