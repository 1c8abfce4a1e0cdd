//! A run from scenario to report: simulate, then compute every flow's metrics and the series.

use crate::link::LinkModel;
use crate::log::RunLog;
use crate::metrics::{
    FlowMetrics, MetricsContext, TimeSeries, flow_metrics_of, link_window_or_cancel,
    time_series_given,
};
use crate::options::RunOptions;
use crate::sim::{
    Cancel, FlowSpec, Network, Progress, Scenario, SimError, simulate_network_or_cancel,
    simulate_or_cancel,
};
use crate::wifi::link::WifiSpec;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use wisp_core::{Bitrate, Duration, Instant};

/// The summary of a run (what `wisp run --json` prints).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunReport {
    /// The scheme spec (flows joined by `+` when they differ).
    pub scheme: String,
    /// The forward link's name (the trace's file name, or the link spec).
    pub trace: String,
    pub seed: u64,
    /// The reverse path: the reverse trace's name, or `delay-only`.
    pub reverse: String,
    pub delay_ms: f64,
    pub queue: String,
    pub loss: String,
    /// Loss of feedback on the reverse path.
    pub reverse_loss: String,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub flows: Vec<FlowMetrics>,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub report: RunReport,
    pub series: TimeSeries,
    pub log: RunLog,
}

/// Simulates `scenario` and measures it.
pub fn run(scenario: &Scenario, progress: Option<Progress<'_>>) -> Result<RunResult, SimError> {
    run_or_cancel(scenario, progress, None)
}

/// [`run`] with a cancel point ([`Cancel`]): [`SimError::Cancelled`] once `cancel` says stop.
pub fn run_or_cancel(
    scenario: &Scenario,
    progress: Option<Progress<'_>>,
    cancel: Option<Cancel<'_>>,
) -> Result<RunResult, SimError> {
    let ctx = MetricsContext {
        link: &scenario.forward,
        delay: scenario.delay,
        mtu: scenario.run.mtu,
        end: scenario.run.end(),
        warmup: scenario.run.warmup,
    };
    let flows: Vec<Measured<'_>> = (scenario.flows.iter())
        .map(|f| Measured {
            ctx: ctx.clone(),
            interval: interval(f),
            scheme: f.scheme.to_string(),
        })
        .collect();
    let (log, flows, series) = measure_while_simulating(
        || simulate_or_cancel(scenario, progress, cancel),
        flows,
        &scenario.forward,
        (scenario.run.end(), scenario.run.bin),
        cancel,
    )?;
    let report = RunReport {
        scheme: scheme_names(scenario.flows.iter()),
        trace: scenario.forward.name(),
        seed: scenario.run.seed,
        reverse: scenario
            .reverse
            .as_ref()
            .map_or_else(|| "delay-only".to_string(), |r| r.name()),
        delay_ms: scenario.delay.as_millis_f64(),
        queue: scenario.queue.to_string(),
        loss: scenario.loss.to_string(),
        reverse_loss: scenario.reverse_loss.to_string(),
        duration_s: scenario.run.duration.as_secs_f64(),
        warmup_s: scenario.run.warmup.as_secs_f64(),
        flows,
    };
    Ok(RunResult {
        report,
        series,
        log,
    })
}

/// A flow's `[start, stop)` from the run's start (`stop` the end of time if it never stops).
fn interval(f: &FlowSpec) -> (Instant, Instant) {
    let start = Instant::ZERO + f.start;
    (start, f.stop.map_or(Instant::MAX, |d| Instant::ZERO + d))
}

/// What one flow's metrics are measured on: its reference link, its sending interval, its
/// scheme's name.
struct Measured<'a> {
    ctx: MetricsContext<'a>,
    interval: (Instant, Instant),
    scheme: String,
}

/// Runs `simulate` on this thread while a second one computes what the metrics need of the
/// links alone over `[0, end)` in bins of `bin` (each flow's [`crate::metrics::LinkWindow`]: the ideal sender's delay and the
/// link's bytes over its window; and the series' capacity per bin, on the first flow's link);
/// then each flow's metrics here beside the time series there. The figures are those of
/// [`crate::metrics::flow_metrics_or_cancel`] and [`crate::metrics::time_series`], computed in
/// the same way, only on two cores. `cancel` is polled on this thread; the second one stops
/// with the simulation's error.
fn measure_while_simulating(
    simulate: impl FnOnce() -> Result<RunLog, SimError>,
    flows: Vec<Measured<'_>>,
    series_link: &LinkModel,
    (end, bin): (Instant, Duration),
    cancel: Option<Cancel<'_>>,
) -> Result<(RunLog, Vec<FlowMetrics>, TimeSeries), SimError> {
    let stop = AtomicBool::new(false);
    let (log, links) = std::thread::scope(|s| {
        let links = s.spawn(|| {
            let stopped = || stop.load(Ordering::Relaxed);
            let windows: Result<Vec<_>, _> = (flows.iter())
                .map(|f| link_window_or_cancel(&f.ctx, f.interval, Some(&stopped)))
                .collect();
            (windows, series_link.capacity_bins(Instant::ZERO, end, bin))
        });
        let log = simulate();
        if log.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        (log, links.join())
    });
    let log = log?;
    let (windows, capacity) = links.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let windows = windows?;
    let n = flows.len();
    let (metrics, series) = std::thread::scope(|s| {
        let series = s.spawn(|| time_series_given(&log, capacity, n, end, bin));
        // Each flow's packets, in send order, found in one pass over the log.
        let mut by_flow: Vec<Vec<u32>> = vec![vec![]; n];
        for (k, p) in log.packets.iter().enumerate() {
            if let Some(v) = by_flow.get_mut(p.flow as usize) {
                v.push(k as u32);
            }
        }
        let metrics: Result<Vec<_>, _> = (flows.into_iter().zip(windows).enumerate())
            .map(|(i, (f, link))| {
                let mine = by_flow[i].iter().map(|&k| &log.packets[k as usize]);
                flow_metrics_of(mine, &f.ctx, i, f.scheme, f.interval, link, cancel)
            })
            .collect();
        (metrics, series.join())
    });
    let series = series.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    Ok((log, metrics?, series))
}

/// The flows' schemes for a report: their names joined by `+`, a run of flows of one scheme
/// named once.
pub(crate) fn scheme_names<'a>(flows: impl Iterator<Item = &'a FlowSpec>) -> String {
    let mut names: Vec<String> = flows.map(|f| f.scheme.to_string()).collect();
    names.dedup();
    names.join("+")
}

/// Simulates the network of `wisp run --link wifi:SPEC` ([`RunOptions::wifi_network`]) and
/// reports it as `wisp run` does: `trace` is the link spec, `reverse` the medium's uplink,
/// capacity 0 (the medium has no fixed capacity) and no ideal delay.
pub fn run_wifi(
    spec: &WifiSpec,
    options: &RunOptions,
    flows: Vec<FlowSpec>,
    seed: u64,
    progress: Option<Progress<'_>>,
) -> Result<RunResult, SimError> {
    run_wifi_or_cancel(spec, options, flows, seed, progress, None)
}

/// [`run_wifi`] with a cancel point ([`Cancel`]): [`SimError::Cancelled`] once `cancel` says
/// stop.
pub fn run_wifi_or_cancel(
    spec: &WifiSpec,
    options: &RunOptions,
    flows: Vec<FlowSpec>,
    seed: u64,
    progress: Option<Progress<'_>>,
    cancel: Option<Cancel<'_>>,
) -> Result<RunResult, SimError> {
    if flows.is_empty() {
        return Err(SimError::NoFlows);
    }
    let net = options.wifi_network(spec, flows, seed);
    let r = run_network_or_cancel(&net, progress, cancel)?;
    let report = RunReport {
        scheme: scheme_names(net.flows.iter().map(|f| &f.spec)),
        trace: format!("wifi:{spec}"),
        seed,
        reverse: "wifi (station 1 to the AP)".into(),
        delay_ms: options.delay.as_millis_f64(),
        queue: format!("wifi queue={}", spec.queue),
        loss: options.loss.to_string(),
        reverse_loss: options.reverse_loss.to_string(),
        duration_s: net.run.duration.as_secs_f64(),
        warmup_s: net.run.warmup.as_secs_f64(),
        flows: r.flows,
    };
    Ok(RunResult {
        report,
        series: r.series,
        log: r.log,
    })
}

/// What a run over a [`Network`] produced: every flow's metrics, the series and the log.
#[derive(Clone, Debug)]
pub struct NetworkResult {
    pub flows: Vec<FlowMetrics>,
    pub series: TimeSeries,
    pub log: RunLog,
}

/// Simulates `net` and measures every flow against its reference link (capacity, utilisation
/// and the ideal sender's delay over that link alone, with the delay in front of it); a flow
/// without one has capacity 0 and no ideal delay. The series' capacity is flow 0's reference.
pub fn run_network(
    net: &Network,
    progress: Option<Progress<'_>>,
) -> Result<NetworkResult, SimError> {
    run_network_or_cancel(net, progress, None)
}

/// [`run_network`] with a cancel point ([`Cancel`]): [`SimError::Cancelled`] once `cancel` says
/// stop.
pub fn run_network_or_cancel(
    net: &Network,
    progress: Option<Progress<'_>>,
    cancel: Option<Cancel<'_>>,
) -> Result<NetworkResult, SimError> {
    let none = LinkModel::constant(Bitrate::ZERO);
    let reference = |f: usize| {
        net.reference(f)
            .unwrap_or((&none, wisp_core::Duration::ZERO))
    };
    let flows: Vec<Measured<'_>> = (net.flows.iter().enumerate())
        .map(|(i, f)| {
            let (link, delay) = reference(i);
            Measured {
                ctx: MetricsContext {
                    link,
                    delay,
                    mtu: net.run.mtu,
                    end: net.run.end(),
                    warmup: net.run.warmup,
                },
                interval: interval(&f.spec),
                scheme: f.spec.scheme.to_string(),
            }
        })
        .collect();
    let (log, flows, series) = measure_while_simulating(
        || simulate_network_or_cancel(net, progress, cancel),
        flows,
        reference(0).0,
        (net.run.end(), net.run.bin),
        cancel,
    )?;
    Ok(NetworkResult { flows, series, log })
}
