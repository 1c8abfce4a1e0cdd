//! Cost per packet of the leaky-bucket UKF (`skype-ukf`, `kwikr`): one unscented update (13
//! sigma points, 11 transitions, the 3×3 Cholesky factor) per received packet.
//!
//! `cargo bench -p wisp-core --bench ukf`; criterion reports the time of one batch of `PACKETS`
//! updates and the throughput in packets/s.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use wisp_core::scheme::ukf::{FilterParams, LeakyBucketUkf};

const PACKETS: usize = 3000;

/// 10 s of a 0.72 Mbit/s stream (30 frames/s of three 1000-byte packets sent back to back)
/// through a 2 Mbit/s leaky bucket: (send ms, delay ms, bits).
fn stream() -> Vec<(f64, f64, f64)> {
    let mut free_at = 0.0f64;
    let mut out = vec![];
    for frame in 0..(PACKETS / 3) {
        let s = frame as f64 * 1000.0 / 30.0;
        for k in 0..3 {
            free_at = free_at.max(s) + 8000.0 / 2000.0;
            let noise = ((frame * 3 + k) * 7919 % 1000) as f64 / 1000.0 - 0.5;
            out.push((s, free_at - s + 40.0 + noise, 8000.0));
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let packets = stream();
    let mut g = c.benchmark_group("ukf");
    g.throughput(Throughput::Elements(packets.len() as u64));
    for (name, t_c, beta) in [("skype-ukf", 0.0, 0.0), ("kwikr, T_c = 10 ms", 10.0, 4.0)] {
        g.bench_function(format!("{PACKETS} packets, {name}"), |b| {
            b.iter_batched(
                || LeakyBucketUkf::new(FilterParams::default()),
                |mut f| {
                    for &(s, y, z) in &packets {
                        f.update(s, y, z, t_c, beta);
                    }
                    black_box(f.rate_kbps())
                },
                BatchSize::SmallInput,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
