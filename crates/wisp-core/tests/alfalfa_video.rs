//! Alfalfa's video layer on Sprout's real halves, over a hand-rolled bottleneck: a prototype of
//! the glue the `alfalfa` scheme will have (docs/alfalfa.md, "What is left"), with the model
//! codec. Each captured picture (25/s) is coded within Sprout's window (eq. 6), on the newest
//! state sent if `drains_within_lookahead` says it arrives in time, else on the newest
//! acknowledged one; the receiver's slot reports and Sprout's forecasts travel back.
//!
//! The link is a first-in-first-out queue at a rate that steps between 2 and 0.5 Mbit/s every
//! 2 s (bursty, as a cellular link), 20 ms each way, Bernoulli loss on data packets.

use rand::{RngExt, SeedableRng};
use std::collections::{BTreeMap, VecDeque};
use wisp_core::controller::{Receiver, SendContext, Sender};
use wisp_core::packet::{Content, DataHeader};
use wisp_core::scheme::sprout::wire::{SproutFields, SproutForecast};
use wisp_core::scheme::sprout::{SproutConfig, SproutReceiver, SproutSender};
use wisp_core::tables::Tables;
use wisp_core::units::DataSize;
use wisp_core::video::StateId;
use wisp_core::video::model::{ModelCodec, ModelDecoder};
use wisp_core::video::sync::{Delivery, SlotReport, SyncConfig, SyncReceiver, SyncSender};
use wisp_core::{Duration, Instant};

#[derive(Debug, Default)]
struct Outcome {
    captured: u32,
    /// (capture, display) of every picture shown.
    shown: Vec<(Instant, Instant)>,
    key_frames: u64,
    missing_base: u64,
    /// Pictures not coded: the window could not hold even the coarsest diff.
    skipped: u64,
    on_acked: u64,
}

fn kbps_at(t: Instant) -> f64 {
    if (t.as_millis() / 2000) % 2 == 0 {
        2000.0
    } else {
        500.0
    }
}

fn run(seed: u64, loss: f64, secs: u64) -> Outcome {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mtu = DataSize::from_bytes(1500);
    let config = SproutConfig::default();
    let mut stx = SproutSender::new(&config, mtu);
    let mut srx = SproutReceiver::new(&config, mtu, &Tables::new());
    let mut vtx = SyncSender::new(ModelCodec::default(), SyncConfig::default());
    let mut vrx = SyncReceiver::new(ModelDecoder);
    let one_way = Duration::from_millis(20);
    let mut link_free = Instant::ZERO;
    // Data: (arrival, header, fields, video piece (state, index, count, bytes)).
    type Piece = Option<(StateId, u16, u16, Vec<u8>)>;
    let mut data: VecDeque<(Instant, DataHeader, SproutFields, Piece)> = VecDeque::new();
    let mut forecasts: VecDeque<(Instant, SproutForecast)> = VecDeque::new();
    let mut reports: VecDeque<(Instant, SlotReport)> = VecDeque::new();
    let (mut seq, mut byte_seq) = (0u64, 0u64);
    let mut capture: BTreeMap<StateId, Instant> = BTreeMap::new();
    let mut out = Outcome::default();
    let mut send =
        |now: Instant,
         size: u64,
         content: Content,
         piece: Piece,
         backlog: u64,
         stx: &mut SproutSender,
         data: &mut VecDeque<(Instant, DataHeader, SproutFields, Piece)>| {
            let header = DataHeader {
                seq,
                byte_seq,
                send_time: now,
                size: DataSize::from_bytes(size),
                content,
                ..Default::default()
            };
            seq += 1;
            byte_seq += size;
            let ctx = SendContext {
                backlog_after: Some(DataSize::from_bytes(backlog)),
                ..Default::default()
            };
            let fields = stx.on_packet_sent(now, &header, &ctx);
            // Serialisation at the link's rate now, then the propagation delay.
            let start = link_free.max(now);
            let service = Duration::from_secs_f64(size as f64 * 8.0 / (kbps_at(start) * 1e3));
            link_free = start + service;
            if !rng.random_bool(loss) {
                data.push_back((link_free + one_way, header, fields, piece));
            }
        };
    let end = Instant::ZERO + Duration::from_secs(secs);
    let mut now = Instant::ZERO;
    let mut next_frame = Instant::ZERO;
    let mut k = 0u32;
    while now < end {
        // Arrivals at the receiver.
        let mut report_changed = false;
        while data.front().is_some_and(|d| d.0 <= now) {
            let (_, h, f, piece) = data.pop_front().unwrap();
            srx.on_packet_received(now, &h, &f);
            if let Some((state, i, n, bytes)) = piece {
                match vrx.on_packet(state, i, n, &bytes) {
                    Some(Delivery::Shown { state, .. }) => {
                        out.shown.push((capture[&state], now));
                        report_changed = true;
                    }
                    Some(Delivery::Refused { .. }) => report_changed = true,
                    None => {}
                }
            }
        }
        if srx.poll_timeout().is_some_and(|t| t <= now) {
            srx.on_timeout(now);
        }
        while let Some(fc) = srx.poll_feedback(now) {
            forecasts.push_back((now + one_way, fc));
        }
        if report_changed {
            reports.push_back((now + one_way, vrx.report()));
        }
        // Feedback at the sender.
        while forecasts.front().is_some_and(|f| f.0 <= now) {
            let (_, fc) = forecasts.pop_front().unwrap();
            stx.on_feedback(now, &fc);
        }
        while reports.front().is_some_and(|r| r.0 <= now) {
            let (_, r) = reports.pop_front().unwrap();
            vtx.on_report(&r);
        }
        if stx.poll_timeout().is_some_and(|t| t <= now) {
            stx.on_timeout(now);
        }
        if let Some(x) = stx.poll_extra(now) {
            send(now, x.size.bytes(), x.content, None, 0, &mut stx, &mut data);
        }
        stx.on_time(now);
        if now >= next_frame {
            out.captured += 1;
            let window = stx.window(now) as usize;
            let in_time = stx.drains_within_lookahead(now);
            if let Some(f) = vtx.on_frame(now, k % 75, window, in_time) {
                let state = f.diff.header.target;
                capture.insert(state, now);
                let total: usize = f.packets.iter().map(|p| p.len + 40).sum();
                let mut left = total as u64;
                for p in &f.packets {
                    let size = (p.len + 40) as u64;
                    left -= size;
                    let content = Content::Video {
                        frame: state.0,
                        last: p.index + 1 == p.count,
                        key: false,
                    };
                    let bytes = f.diff.bytes[p.offset..p.offset + p.len].to_vec();
                    let piece = Some((p.state, p.index, p.count, bytes));
                    send(now, size, content, piece, left, &mut stx, &mut data);
                }
            }
            k += 1;
            next_frame += Duration::from_millis(40);
        }
        now += Duration::from_millis(1);
    }
    out.missing_base = vrx.decoder().stats().missing_base;
    out.skipped = vtx.stats().skipped;
    out.on_acked = vtx.stats().on_acked;
    out.key_frames = 0; // every diff names a base state: none is intra-coded
    out
}

fn p95_ms(shown: &[(Instant, Instant)]) -> f64 {
    assert!(!shown.is_empty());
    let mut d: Vec<u64> = shown.iter().map(|(c, s)| (*s - *c).as_nanos()).collect();
    d.sort_unstable();
    d[(d.len() * 95).div_ceil(100) - 1] as f64 / 1e6
}

#[test]
fn without_loss_every_coded_frame_is_shown_promptly() {
    let o = run(1, 0.0, 20);
    let shown = o.shown.len() as f64 / f64::from(o.captured);
    let p95 = p95_ms(&o.shown);
    eprintln!(
        "no loss: {} of {} shown ({:.1}%), frame delay p95 {p95:.0} ms, {} skipped, {} on acknowledged bases",
        o.shown.len(),
        o.captured,
        100.0 * shown,
        o.skipped,
        o.on_acked
    );
    // The delay target for alfalfa: p95 frame delay ≤ 200 ms. (Its other target, ≥ 95%
    // of frames shown, is not met here: pictures whose window cannot hold even the coarsest
    // diff are skipped — after each step down in rate Sprout's cautious forecast closes the
    // window — and are reported, not asserted; docs/alfalfa.md.)
    assert!(p95 <= 200.0, "{p95}");
    assert_eq!(o.missing_base, 0);
    // Without loss every coded picture is shown, but for the last few still in flight.
    let coded = u64::from(o.captured) - o.skipped;
    let in_flight = coded - o.shown.len() as u64;
    assert!(in_flight <= 3, "{coded} coded, {} shown", o.shown.len());
    assert!(shown > 0.5, "{shown}");
}

#[test]
fn under_five_percent_loss_the_stream_recovers_without_intra_frames() {
    let o = run(2, 0.05, 20);
    let shown = o.shown.len() as f64 / f64::from(o.captured);
    eprintln!(
        "5% loss: {} of {} shown ({:.1}%), frame delay p95 {:.0} ms, {} refused for a missing base",
        o.shown.len(),
        o.captured,
        100.0 * shown,
        p95_ms(&o.shown),
        o.missing_base
    );
    assert_eq!(o.key_frames, 0);
    // Frames keep being shown through the whole run (the last second has some).
    let last = o.shown.last().unwrap().1;
    assert!(last >= Instant::ZERO + Duration::from_secs(19), "{last:?}");
}
