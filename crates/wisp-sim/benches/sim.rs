//! Simulator throughput: `cbr` at 4 Mbit/s over the whole of ATT-LTE-driving.down (786 s), and
//! `adaptive-um` (a media call acknowledged per packet) over 300 s of the `wimax-down` profile.
//!
//! Real-time factor = simulated seconds / time per run; simulated packets per second = packets /
//! time. The run includes metrics and time series, as `wisp run` does.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::PathBuf;
use std::time::Duration;
use wisp_sim::link::LinkSpec;
use wisp_sim::sim::Scenario;
use wisp_sim::trace::TraceUnit;

fn bench(c: &mut Criterion) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/cellular/ATT-LTE-driving.down");
    let link = LinkSpec::Trace {
        path,
        unit: TraceUnit::Millis,
    }
    .load()
    .unwrap();
    let scenario = Scenario::new(link, "cbr:rate-kbps=4000".parse().unwrap());
    let packets = wisp_sim::run::run(&scenario, None)
        .unwrap()
        .log
        .packets
        .len() as u64;
    let mut g = c.benchmark_group("sim");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(packets));
    g.bench_function("cbr-4mbps-ATT-LTE-driving.down-786s", |b| {
        b.iter(|| wisp_sim::run::run(&scenario, None).unwrap())
    });
    g.bench_function("cbr-4mbps-ATT-LTE-driving.down-786s/engine-only", |b| {
        b.iter(|| wisp_sim::sim::simulate(&scenario, None).unwrap())
    });
    g.finish();
}

fn mobile(c: &mut Criterion) {
    let link = "wimax-down".parse::<LinkSpec>().unwrap().load().unwrap();
    let mut scenario = Scenario::new(link, "adaptive-um".parse().unwrap());
    scenario.run.duration = wisp_core::Duration::from_secs(300);
    let packets = wisp_sim::run::run(&scenario, None)
        .unwrap()
        .log
        .packets
        .len() as u64;
    let mut g = c.benchmark_group("sim");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(packets));
    g.bench_function("adaptive-um-wimax-down-300s", |b| {
        b.iter(|| wisp_sim::run::run(&scenario, None).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench, mobile);
criterion_main!(benches);
