//! Sender cost per packet of the Mehrotra et al. controllers: one packet sent and its ACK
//! processed (RTT, queueing delay, NACK detection, the rate law; adaptive-um's learner with its
//! calibration windows), on a 4 Mbit/s stream with noisy delays and 3 % loss.
//!
//! `cargo bench -p wisp-core --bench um`; criterion reports the time per packet.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use wisp_core::controller::{SendContext, Sender};
use wisp_core::packet::DataHeader;
use wisp_core::scheme::SchemeConfig;
use wisp_core::scheme::tcp::ack::{SeqRange, TcpAck};
use wisp_core::{DataSize, Duration, Instant};

/// Packets of a 4 Mbit/s stream (1240 B every 2.48 ms) with their ACKs: 3 % lost (a fixed
/// pattern), one-way delay 30 ms plus up to 40 ms of deterministic noise, ACKs 30 ms later.
const PACKETS: u64 = 20_000;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("um-sender");
    g.throughput(Throughput::Elements(PACKETS));
    for name in ["newreno-like", "tfrc", "adaptive-um"] {
        let config: SchemeConfig = name.parse().unwrap();
        let SchemeConfig::Um(c) = config else {
            unreachable!()
        };
        g.bench_function(name, |b| {
            b.iter_batched(
                || c.sender(),
                |mut s| {
                    let gap = Duration::from_micros(2480);
                    let mut received: Vec<u64> = vec![];
                    for seq in 0..PACKETS {
                        let now = Instant::ZERO + gap * seq;
                        let h = DataHeader {
                            seq,
                            send_time: now,
                            size: DataSize::from_bytes(1240),
                            ..DataHeader::default()
                        };
                        s.on_packet_sent(now, &h, &SendContext::default());
                        s.on_time(now);
                        black_box(s.allowance(now));
                        if seq % 33 == 7 {
                            continue;
                        }
                        received.push(seq);
                        let owd = Duration::from_millis(30 + (seq * 7919) % 40);
                        let ranges = [SeqRange {
                            start: received[received.len().saturating_sub(8)],
                            end: seq + 1,
                        }];
                        let ack = TcpAck::new(seq, now, now + owd, &ranges);
                        s.on_feedback(now + owd + Duration::from_millis(30), &ack);
                    }
                    s
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
