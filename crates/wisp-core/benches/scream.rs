//! CPU per packet of `scream` (SCReAMv2): the sender's record of each packet sent, the
//! receiver's RFC 8888 record of its arrival, and the feedback (§5's triggers: every frame's
//! last packet, every 16) matched back at the sender with the reference window, pacing and
//! target updates, on 20 s of a 2 Mbit/s, 30 frames/s call through a 2.5 Mbit/s bottleneck,
//! 20 ms each way.
//!
//! `cargo bench -p wisp-core --bench scream`; criterion reports the time per packet ("thrpt"
//! in elements/s, and the time of one batch of the stream's packets).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use wisp_core::controller::{Receiver, SendContext, Sender};
use wisp_core::packet::{Content, DataHeader};
use wisp_core::scheme::scream::{ScreamConfig, ScreamReceiver, ScreamSender};
use wisp_core::{Bitrate, DataSize, Duration, Instant};

/// `(arrival, header)` in sending order: frames of ~8.3 kB (±20 % from a fixed pattern) in
/// packets of at most 1240 bytes, paced at 3 Mbit/s, through the bottleneck.
fn stream() -> Vec<(Instant, DataHeader)> {
    let frame_bytes = 2_000_000 / 8 / 30;
    let (pace, link) = (Bitrate::from_kbps(3000), Bitrate::from_kbps(2500));
    let mut out = vec![];
    let (mut seq, mut sent, mut link_free) = (0u64, Instant::ZERO, Instant::ZERO);
    for frame in 0..600u64 {
        let capture = Instant::ZERO + Duration::from_nanos(frame * 1_000_000_000 / 30);
        let bytes = frame_bytes * (80 + (frame * 37 % 41)) / 100;
        let n = bytes.div_ceil(1200);
        for i in 0..n {
            let size = DataSize::from_bytes(bytes / n + 40);
            sent = sent.max(capture);
            let start = link_free.max(sent + Duration::from_millis(20));
            link_free = start + size.transmit_time(link);
            let header = DataHeader {
                seq,
                send_time: sent,
                size,
                content: Content::Video {
                    frame: frame as u32,
                    last: i + 1 == n,
                    key: false,
                },
                ..Default::default()
            };
            out.push((link_free, header));
            sent += size.transmit_time(pace);
            seq += 1;
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let packets = stream();
    let mut group = c.benchmark_group("scream_per_packet");
    group.throughput(Throughput::Elements(packets.len() as u64));
    for (name, config) in [
        ("scream", ScreamConfig::default()),
        (
            "scream:reduce-jitter=true",
            ScreamConfig {
                reduce_jitter: true,
                ..ScreamConfig::default()
            },
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || (ScreamSender::new(&config, 30), ScreamReceiver::new(&config)),
                |(mut s, mut r)| {
                    let ctx = SendContext::default();
                    for (arrival, p) in &packets {
                        s.on_packet_sent(p.send_time, p, &ctx);
                        r.on_packet_received(*arrival, p, &());
                        while let Some(fb) = r.poll_feedback(*arrival) {
                            s.on_feedback(*arrival + Duration::from_millis(20), &fb);
                        }
                        black_box(s.allowance(*arrival));
                    }
                    black_box(s.target_bitrate())
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
