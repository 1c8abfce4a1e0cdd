//! Sprout's receiver costs: the one-off table precomputation and the per-tick work
//! (evolve + observe + forecast). Goal: well under a second and under 20 µs.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use wisp_core::Instant;
use wisp_core::controller::Receiver;
use wisp_core::packet::DataHeader;
use wisp_core::scheme::sprout::wire::SproutFields;
use wisp_core::scheme::sprout::{
    BayesFilter, ForecastMethod, ModelParams, Observation, SproutConfig, SproutModel,
    SproutReceiver, Variant,
};
use wisp_core::tables::Tables;
use wisp_core::time::ms;
use wisp_core::units::DataSize;

/// Counts of a 500 packets/s Poisson link (10 per tick on average), fixed so every run sees the
/// same work.
const COUNTS: [u32; 16] = [9, 12, 10, 7, 11, 14, 8, 10, 9, 13, 6, 10, 11, 9, 12, 8];

fn precompute(c: &mut Criterion) {
    let mut g = c.benchmark_group("sprout/precompute");
    g.sample_size(10);
    g.bench_function("paper", |b| {
        b.iter(|| SproutModel::new(black_box(ModelParams::default())))
    });
    g.bench_function("joint", |b| {
        b.iter(|| {
            SproutModel::new(black_box(ModelParams {
                method: ForecastMethod::Joint,
                ..ModelParams::default()
            }))
        })
    });
    g.finish();
}

fn tick(c: &mut Criterion) {
    let model = SproutModel::shared(&Tables::new(), ModelParams::default());
    let mut g = c.benchmark_group("sprout/tick");
    // The filter alone: one tick of evolve + observe + forecast at steady state.
    let mut f = BayesFilter::new(model.clone());
    for &k in COUNTS.iter().cycle().take(500) {
        f.evolve();
        f.observe(k);
    }
    let mut i = 0;
    g.bench_function("filter", |b| {
        b.iter(|| {
            f.evolve();
            f.observe(COUNTS[i % COUNTS.len()]);
            i += 1;
            black_box(f.forecast())
        })
    });
    // From the uniform prior (the widest belief, the most work): the first tick of a flow.
    g.bench_function("filter-first-tick", |b| {
        b.iter_batched(
            || BayesFilter::new(model.clone()),
            |mut f| {
                f.evolve();
                f.observe(10);
                black_box(f.forecast())
            },
            criterion::BatchSize::SmallInput,
        )
    });
    let adaptive = SproutConfig {
        sigmas: vec![50.0, 100.0, 200.0, 400.0, 800.0],
        ..SproutConfig::default()
    };
    for (name, config) in [
        ("sprout-ewma", SproutConfig::new(Variant::Ewma)),
        ("sprout-sigmas-5", adaptive),
    ] {
        let mut e = config.estimator(&Tables::new());
        for &k in COUNTS.iter().cycle().take(500) {
            e.on_tick(Some(Observation::Exact(k)));
        }
        let mut i = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                e.on_tick(Some(Observation::Exact(COUNTS[i % COUNTS.len()])));
                i += 1;
                black_box(e.forecast())
            })
        });
    }
    // The whole receiver: 10 packet arrivals, the tick, and its feedback message.
    let mut rx = SproutReceiver::new(
        &SproutConfig::default(),
        DataSize::from_bytes(1500),
        &Tables::new(),
    );
    let mut now = Instant::ZERO;
    let mut byte_seq = 0u64;
    let mut one_tick = |rx: &mut SproutReceiver| {
        for j in 0..10 {
            let h = DataHeader {
                byte_seq,
                size: DataSize::from_bytes(1500),
                ..Default::default()
            };
            let fields = SproutFields {
                time_to_next: Some(ms(0)),
                throwaway: Some(0),
            };
            rx.on_packet_received(now + ms(2 * j), &h, &fields);
            byte_seq += 1500;
        }
        now += ms(20);
        rx.on_timeout(now);
        black_box(rx.poll_feedback(now))
    };
    for _ in 0..500 {
        one_tick(&mut rx);
    }
    g.bench_function("receiver-10-packets", |b| b.iter(|| one_tick(&mut rx)));
    g.finish();
}

/// Each step of a tick alone, at steady state (500 packets/s).
fn steps(c: &mut Criterion) {
    let model = SproutModel::shared(&Tables::new(), ModelParams::default());
    let mut steady = BayesFilter::new(model);
    for &k in COUNTS.iter().cycle().take(500) {
        steady.evolve();
        steady.observe(k);
    }
    let mut evolved = steady.clone();
    evolved.evolve();
    let mut g = c.benchmark_group("sprout/step");
    g.bench_function("evolve", |b| {
        b.iter_batched(
            || steady.clone(),
            |mut f| {
                f.evolve();
                f
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("observe", |b| {
        b.iter_batched(
            || evolved.clone(),
            |mut f| {
                f.observe(10);
                f
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("observe-lower-bound", |b| {
        b.iter_batched(
            || evolved.clone(),
            |mut f| {
                f.observe_tick(Observation::AtLeast(10));
                f
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("forecast", |b| b.iter(|| black_box(steady.forecast())));
    g.finish();
}

criterion_group!(benches, precompute, tick, steps);
criterion_main!(benches);
