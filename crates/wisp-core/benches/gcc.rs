//! Receiver cost per packet of GCC (grouping + arrival-time filter + over-use detector + remote
//! rate controller + feedback) on a 2 Mbit/s, 30 frames/s stream; and sender cost per packet of
//! the send-side forms (`gcc`, `gcc-twcc`): each packet sent, the wake-up before it, and the
//! transport-wide feedback on the same stream (every 50 ms); and NADA's (RFC 8698) sender and
//! receiver together on the same stream (`nada_per_packet`).
//!
//! `cargo bench -p wisp-core --bench gcc`; criterion reports the time per packet ("thrpt" in
//! elements/s, and the time of one batch of `PACKETS` packets).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use wisp_core::controller::{Receiver, SendContext, Sender};
use wisp_core::packet::{Content, DataHeader, Ecn};
use wisp_core::scheme::gcc::twcc::{GccTwccConfig, GccTwccReceiver, GccTwccSender};
use wisp_core::scheme::gcc::{GccConfig, GccReceiver, Prefilter};
use wisp_core::scheme::goog_cc::{GoogCcConfig, GoogCcSender};
use wisp_core::scheme::nada::{NadaConfig, NadaReceiver, NadaSender};
use wisp_core::wire::TransportFeedback;
use wisp_core::{DataSize, Duration, Instant};

/// 20 s of a 2 Mbit/s, 30 frames/s call: frames of ~8.3 kB in packets of at most 1240 bytes,
/// paced out in 5-ms groups at 2.5× the rate, through a 2.5 Mbit/s bottleneck with 20 ms of
/// propagation delay and a little deterministic jitter. `(arrival, header)` in arrival order.
fn stream() -> Vec<(Instant, DataHeader)> {
    let rate = 2_000_000.0;
    let frame_bytes = (rate / 8.0 / 30.0) as u64;
    let link_bps = 2_500_000u64;
    let mut out = vec![];
    let mut seq = 0u64;
    let mut link_free = Instant::ZERO;
    for frame in 0..600u64 {
        let capture = Instant::ZERO + Duration::from_nanos(frame * 1_000_000_000 / 30);
        // Size noise of ±20 % from a fixed pattern.
        let bytes = frame_bytes * (80 + (frame * 37 % 41)) / 100;
        let n = bytes.div_ceil(1200);
        let budget_per_tick = (rate * 2.5 * 0.005 / 8.0) as u64;
        let mut tick = Instant::from_nanos(capture.as_nanos().div_ceil(5_000_000) * 5_000_000);
        let mut used = 0;
        for i in 0..n {
            let size = DataSize::from_bytes(bytes / n + 40);
            if used >= budget_per_tick {
                tick += Duration::from_millis(5);
                used = 0;
            }
            used += size.bytes();
            let jitter = Duration::from_micros((seq * 7919) % 700);
            let at_link = tick + Duration::from_millis(20) + jitter;
            let start = link_free.max(at_link);
            link_free = start + size.transmit_time(wisp_core::Bitrate::from_bps(link_bps));
            out.push((
                link_free,
                DataHeader {
                    seq,
                    byte_seq: 0,
                    send_time: tick,
                    size,
                    content: Content::Video {
                        frame: frame as u32,
                        last: i + 1 == n,
                        key: false,
                    },
                    ecn: Ecn::NotEct,
                    fields: Default::default(),
                },
            ));
            seq += 1;
        }
    }
    out.sort_by_key(|p| (p.0, p.1.seq));
    out
}

fn bench(c: &mut Criterion) {
    let packets = stream();
    let mut group = c.benchmark_group("gcc_receiver_per_packet");
    group.throughput(Throughput::Elements(packets.len() as u64));
    let variants = [
        ("gcc-remb", GccConfig::default()),
        ("gcc-grouping", GccConfig::grouping()),
        (
            "gcc-grouping:prefilter=libwebrtc",
            GccConfig {
                prefilter: Prefilter::Libwebrtc,
                ..GccConfig::default()
            },
        ),
        ("gcc-trendline", GccConfig::trendline()),
    ];
    for (name, config) in variants {
        let receiver = GccReceiver::new(&config);
        group.bench_function(name, |b| {
            b.iter_batched_ref(
                || receiver.clone(),
                |r| {
                    let mut feedback = 0u32;
                    for (at, h) in &packets {
                        r.on_packet_received(*at, h, &());
                        if r.poll_timeout().is_some_and(|t| t <= *at) {
                            r.on_timeout(*at);
                        }
                        while r.poll_feedback(*at).is_some() {
                            feedback += 1;
                        }
                    }
                    black_box(feedback)
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

/// What the sender meets, in time order.
enum Event {
    Sent(DataHeader),
    Feedback(TransportFeedback),
}

/// The stream's sends, and the transport-wide feedback `gcc`'s receiver sends on its arrivals
/// (20 ms back), in time order.
fn sender_events(packets: &[(Instant, DataHeader)]) -> Vec<(Instant, Event)> {
    let mut events: Vec<(Instant, Event)> = packets
        .iter()
        .map(|(_, h)| (h.send_time, Event::Sent(*h)))
        .collect();
    let mut receiver = GccTwccReceiver::new(&GccTwccConfig::default());
    for (at, h) in packets {
        if receiver.poll_timeout().is_some_and(|t| t <= *at) {
            receiver.on_timeout(*at);
        }
        receiver.on_packet_received(*at, h, &());
        while let Some(fb) = receiver.poll_feedback(*at) {
            events.push((*at + Duration::from_millis(20), Event::Feedback(fb)));
        }
    }
    events.sort_by_key(|e| e.0);
    events
}

fn drive<S: Sender<Fields = ()>>(s: &mut S, events: &[(Instant, Event)])
where
    S::Feedback: From<TransportFeedback>,
{
    let ctx = SendContext::default();
    for (t, e) in events {
        match e {
            Event::Sent(h) => {
                s.on_time(*t);
                black_box(s.poll_extra(*t));
                s.on_packet_sent(*t, h, &ctx);
            }
            Event::Feedback(fb) => s.on_feedback(*t, &fb.clone().into()),
        }
    }
}

fn bench_sender(c: &mut Criterion) {
    let packets = stream();
    let events = sender_events(&packets);
    let mut group = c.benchmark_group("gcc_sender_per_packet");
    group.throughput(Throughput::Elements(packets.len() as u64));
    let mtu = DataSize::from_bytes(1240);
    let gcc = GoogCcSender::new(&GoogCcConfig::default(), mtu);
    group.bench_function("gcc", |b| {
        b.iter_batched_ref(|| gcc.clone(), |s| drive(s, &events), BatchSize::SmallInput)
    });
    let twcc = GccTwccSender::new(&GccTwccConfig::default());
    group.bench_function("gcc-twcc", |b| {
        b.iter_batched_ref(
            || twcc.clone(),
            |s| drive(s, &events),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

/// NADA's two halves on the stream: each packet sent (the allowance queried before it) and
/// received, and every report the receiver sends (every 100 ms) handed to the sender at once.
/// The time per packet is both halves' cost.
fn bench_nada(c: &mut Criterion) {
    let packets = stream();
    // (time, arrival?, index), sends before arrivals at the same instant.
    let mut events: Vec<(Instant, bool, usize)> = (packets.iter().enumerate())
        .flat_map(|(i, (at, h))| [(h.send_time, false, i), (*at, true, i)])
        .collect();
    events.sort_by_key(|e| (e.0, e.1));
    let config = NadaConfig::default();
    let halves = (NadaSender::new(&config, 30), NadaReceiver::new(&config));
    let mut group = c.benchmark_group("nada_per_packet");
    group.throughput(Throughput::Elements(packets.len() as u64));
    let ctx = SendContext::default();
    group.bench_function("nada", |b| {
        b.iter_batched_ref(
            || halves.clone(),
            |(s, r)| {
                for &(t, arrival, i) in &events {
                    let h = &packets[i].1;
                    if !arrival {
                        s.on_time(t);
                        black_box(s.allowance(t));
                        s.on_packet_sent(t, h, &ctx);
                        continue;
                    }
                    r.on_packet_received(t, h, &());
                    if r.poll_timeout().is_some_and(|due| due <= t) {
                        r.on_timeout(t);
                    }
                    while let Some(fb) = r.poll_feedback(t) {
                        s.on_feedback(t, &fb);
                    }
                }
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench, bench_sender, bench_nada);
criterion_main!(benches);
