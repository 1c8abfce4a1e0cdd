//! Per-packet costs of wisp-net's own code (no system calls): the RTP and RTCP codecs and one
//! direction of the emulated link (loss, delay line, queue, trace server), fed 10,000 packets of
//! 1428 bytes at 400 Mbit/s over a link offering 2 Gbit/s with 20 ms of delay.
//!
//! The forwarding benchmark through the kernel (TUN devices, iperf3) is
//! `benches/link_forwarding.sh`; it needs root.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use wisp_core::packet::DataHeader;
use wisp_core::wire::{Feedback, Remb};
use wisp_core::{Bitrate, DataSize, Duration, Instant};
use wisp_net::emulator::{Direction, DirectionSpec};
use wisp_sim::link::LinkSpec;

fn codecs(c: &mut Criterion) {
    let mut g = c.benchmark_group("wire");
    g.throughput(Throughput::Elements(1));
    let h = DataHeader {
        seq: 1234,
        byte_seq: 1_851_000,
        send_time: Instant::from_millis(123_456),
        size: DataSize::from_bytes(1500),
        ..Default::default()
    };
    let mut buf = Vec::with_capacity(1500);
    g.bench_function("rtp_encode", |b| {
        b.iter(|| wisp_net::rtp::encode(black_box(&h), 7, &mut buf).unwrap())
    });
    wisp_net::rtp::encode(&h, 7, &mut buf).unwrap();
    g.bench_function("rtp_decode", |b| {
        b.iter(|| wisp_net::rtp::decode(black_box(&buf)).unwrap())
    });
    let fb = Feedback::encode(&Remb::new(Bitrate::from_kbps(2500)));
    let mut out = Vec::new();
    wisp_net::rtcp::encode_feedback(&fb, 1, 2, &mut out).unwrap();
    g.bench_function("rtcp_remb_decode", |b| {
        b.iter(|| wisp_net::rtcp::decode(black_box(&out)).unwrap())
    });
    g.finish();
}

fn direction(c: &mut Criterion) {
    let link = LinkSpec::Const(Bitrate::from_mbps(2000)).load().unwrap();
    let spec = DirectionSpec {
        link,
        delay: Duration::from_millis(20),
        queue: "infinite".parse().unwrap(),
        loss: "0".parse().unwrap(),
        wmm: None,
        wifi: None,
    };
    let packet = vec![0x45u8; 1428];
    let n = 10_000u64;
    let gap = Duration::from_nanos(1428 * 8 * 1000 / 400);
    let mut g = c.benchmark_group("link");
    g.throughput(Throughput::Elements(n));
    g.bench_function("direction_10k_packets", |b| {
        b.iter(|| {
            let mut d = Direction::<Vec<u8>>::new(
                &spec,
                wisp_sim::seed::stream(1, "a"),
                wisp_sim::seed::stream(1, "b"),
                None,
            );
            let mut out = 0usize;
            let mut t = Instant::ZERO;
            for _ in 0..n {
                d.advance(t, &mut |p, _| out += p.len());
                d.on_arrival(t, &packet);
                t += gap;
            }
            while let Some(next) = d.next_event() {
                d.advance(next, &mut |p, _| out += p.len());
            }
            black_box(out)
        })
    });
    g.finish();
}

criterion_group!(benches, codecs, direction);
criterion_main!(benches);
