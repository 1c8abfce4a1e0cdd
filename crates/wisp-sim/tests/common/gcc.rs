//! What the scenario tests of the media schemes (`gcc.rs`, `goog_cc.rs`, `nada.rs`,
//! `scream.rs`) share: links by spec, the RFC 8867 §5.1-style capacity steps, runs of one
//! scheme's flows, and the utilisation, queueing-delay, per-flow rate and fairness figures they
//! check.

use wisp_core::stats::quantiles;
use wisp_core::{Duration, Instant};
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::queue::QueueSpec;
use wisp_sim::run::{RunResult, run};
use wisp_sim::sim::{FlowSpec, Scenario};

pub fn link(spec: &str) -> LinkModel {
    spec.parse::<LinkSpec>().unwrap().load().unwrap()
}

/// The bytes delivered over [from, to) (seconds).
pub fn delivered_bytes(r: &RunResult, from: f64, to: f64) -> u64 {
    let (a, b) = window(from, to);
    r.log
        .packets
        .iter()
        .filter(|p| p.delivered.is_some_and(|d| d >= a && d < b))
        .map(|p| p.header.size.bytes())
        .sum()
}

fn window(from: f64, to: f64) -> (Instant, Instant) {
    (
        Instant::ZERO + Duration::from_secs_f64(from),
        Instant::ZERO + Duration::from_secs_f64(to),
    )
}

/// Delivered bytes / offered bytes over [from, to) (seconds).
pub fn utilisation(r: &RunResult, model: &LinkModel, from: f64, to: f64) -> f64 {
    let (a, b) = window(from, to);
    let offered: f64 = model.capacity_bins(a, b, b - a).iter().sum();
    delivered_bytes(r, from, to) as f64 / offered
}

/// 95th percentile of the queueing delay (bottleneck queue → delivery) of the packets
/// delivered in [from, to), ms.
pub fn queue_p95(r: &RunResult, from: f64, to: f64) -> f64 {
    let (a, b) = (
        Instant::ZERO + Duration::from_secs_f64(from),
        Instant::ZERO + Duration::from_secs_f64(to),
    );
    let mut q: Vec<f64> = r
        .log
        .packets
        .iter()
        .filter_map(|p| Some((p.delivered?, p.enqueued?)))
        .filter(|&(d, _)| d >= a && d < b)
        .map(|(d, e)| (d - e).as_millis_f64())
        .collect();
    quantiles(&mut q, &[0.95])[0].unwrap()
}

pub const STEPS: &str = "steps:1mbps@0,2.5mbps@25s,0.6mbps@50s,1mbps@75s";

pub fn step_run(scheme: &str, queue: QueueSpec, seed: u64) -> (RunResult, LinkModel) {
    let model = link(STEPS);
    let mut s = Scenario::new(model.clone(), scheme.parse().unwrap());
    s.delay = Duration::from_millis(50);
    s.run.duration = Duration::from_secs(100);
    s.queue = queue;
    s.run.seed = seed;
    (run(&s, None).unwrap(), model)
}

/// Flows of `spec` starting at `starts` (s) over `link_spec` for `secs`, `one_way_ms` each way,
/// behind the queue `queue` (a `--queue` spec); seed 1.
pub fn flows_run(
    spec: &str,
    link_spec: &str,
    starts: &[u64],
    secs: u64,
    queue: &str,
    one_way_ms: u64,
) -> RunResult {
    let flow = |start: u64| FlowSpec {
        start: Duration::from_secs(start),
        ..FlowSpec::new(spec.parse().unwrap())
    };
    let mut s = Scenario::new(link(link_spec), spec.parse().unwrap());
    s.flows = starts.iter().map(|&t| flow(t)).collect();
    s.delay = Duration::from_millis(one_way_ms);
    s.queue = queue.parse().unwrap();
    s.run.duration = Duration::from_secs(secs);
    s.run.seed = 1;
    run(&s, None).unwrap()
}

/// Flow `flow`'s delivered kbit/s over [from, to) s.
pub fn flow_kbps(r: &RunResult, flow: u16, from: f64, to: f64) -> f64 {
    let (a, b) = window(from, to);
    let bytes: u64 = (r.log.packets.iter())
        .filter(|p| p.flow == flow && p.delivered.is_some_and(|d| d >= a && d < b))
        .map(|p| p.header.size.bytes())
        .sum();
    bytes as f64 * 8.0 / 1000.0 / (to - from)
}

/// The first time (s) flow 0's delivered rate over a 1-s window reaches `kbps`, looking at
/// windows that start in the first `until` s (every 100 ms).
pub fn time_to(r: &RunResult, kbps: f64, until: u64) -> Option<f64> {
    (0..until * 10)
        .map(|t| f64::from(t as u32) / 10.0)
        .find(|&t| flow_kbps(r, 0, t, t + 1.0) >= kbps)
        .map(|t| t + 1.0)
}

/// Jain's fairness index of `rates`: (Σx)² / (n·Σx²), 1 when all are equal.
pub fn jain(rates: &[f64]) -> f64 {
    let sum: f64 = rates.iter().sum();
    let squares: f64 = rates.iter().map(|x| x * x).sum();
    sum * sum / (rates.len() as f64 * squares)
}
