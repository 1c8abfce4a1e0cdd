//! What the GCC scenario tests (`gcc.rs`, `goog_cc.rs`) share: links by spec, the RFC 8867 §5.1-style capacity steps, and
//! the utilisation and queueing-delay figures they check.

use wisp_core::stats::quantiles;
use wisp_core::{Duration, Instant};
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::queue::QueueSpec;
use wisp_sim::run::{RunResult, run};
use wisp_sim::sim::Scenario;

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
