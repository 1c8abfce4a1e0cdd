//! Scenario tests of `gcc` (libwebrtc's goog_cc as it runs today) against the figures
//! libwebrtc's own tests assert (`modules/congestion_controller/goog_cc/
//! goog_cc_network_control_unittest.cc`, read in WebKit's copy at commit 07a67793), and the
//! RFC 8867 §5.1 capacity steps. Run them with `--release`.

// Each scenario test file uses part of the shared helpers.
#[allow(dead_code)]
#[path = "common/gcc.rs"]
mod gcc_common;

use gcc_common::{delivered_bytes, link, queue_p95, step_run, utilisation};
use wisp_core::{Duration, Instant};
use wisp_sim::run::{RunResult, run};
use wisp_sim::sim::Scenario;

/// `scheme` over `link_spec` for `secs`, `delay_ms` each way.
fn call(scheme: &str, link_spec: &str, delay_ms: u64, secs: f64, seed: u64) -> RunResult {
    let mut s = Scenario::new(link(link_spec), scheme.parse().unwrap());
    s.delay = Duration::from_millis(delay_ms);
    s.run.duration = Duration::from_secs_f64(secs);
    s.run.seed = seed;
    run(&s, None).unwrap()
}

/// The sender's target (kbit/s) at `secs`: its last sample at or before then.
fn target_at(r: &RunResult, secs: f64) -> f64 {
    let t = Instant::ZERO + Duration::from_secs_f64(secs);
    r.log
        .sender_samples
        .iter()
        .take_while(|s| s.at <= t)
        .filter_map(|s| s.target_rate)
        .last()
        .expect("a sample")
        .kbps_f64()
}

/// The first time (s) the target reaches `kbps`.
fn time_to(r: &RunResult, kbps: f64) -> Option<f64> {
    r.log
        .sender_samples
        .iter()
        .find(|s| s.target_rate.is_some_and(|t| t.kbps_f64() >= kbps))
        .map(|s| (s.at - Instant::ZERO).as_secs_f64())
}

/// `CutsHighRateInSafeResetTrial`: 300 kbit/s start on a 1 Mbit/s link with 50 ms of delay:
/// 500 ms in, the estimate is 1000 ± 300 kbit/s (the initial probes at 3× and 6× the start).
#[test]
fn start_on_1_mbps_reaches_the_link_in_half_a_second() {
    let r = call("gcc", "const:1mbps", 50, 2.0, 1);
    let at = target_at(&r, 0.5);
    println!("target at 0.5 s: {at:.0} kbit/s");
    assert!((at - 1000.0).abs() <= 300.0, "{at}");
}

/// `MaintainsLowRateInSafeResetTrial`: 300 kbit/s start on a 200 kbit/s link (10 ms one way):
/// 500 ms in, the estimate is 200 ± 50 kbit/s (the probes find the link is below the start).
#[test]
fn start_above_a_200_kbps_link_comes_down_to_it() {
    let r = call("gcc", "const:200kbps", 10, 2.0, 1);
    let at = target_at(&r, 0.5);
    println!("target at 0.5 s: {at:.0} kbit/s");
    assert!((at - 200.0).abs() <= 50.0, "{at}");
}

/// `UpdatesTargetRateBasedOnLinkCapacity` (min 10, max 1500, start 300 kbit/s, 100 ms each
/// way): 500 kbit/s → 450 ± 100 after 25 s; 800 kbit/s → 750 ± 150 20 s later; 100 kbit/s →
/// 90 ± 25 50 s later. Deviation: libwebrtc's last phase also raises the delay to 200 ms; wisp's
/// scenario keeps one delay throughout.
#[test]
fn target_follows_the_link_capacity() {
    let r = call(
        "gcc:min-kbps=10,max-kbps=1500",
        "steps:500kbps@0,800kbps@25s,100kbps@45s",
        100,
        95.0,
        1,
    );
    let t = [
        target_at(&r, 25.0),
        target_at(&r, 45.0),
        target_at(&r, 95.0),
    ];
    println!("targets at 25, 45, 95 s: {t:.0?} kbit/s");
    assert!((t[0] - 450.0).abs() <= 100.0, "{t:?}");
    assert!((t[1] - 750.0).abs() <= 150.0, "{t:?}");
    assert!((t[2] - 90.0).abs() <= 25.0, "{t:?}");
}

/// `StableEstimateDoesNotVaryInSteadyState`: on 500 kbit/s with 100 ms each way, over 20 s after
/// 30 s the target varies by at least the 15 % back-off (min/max < 0.85).
#[test]
fn steady_state_target_backs_off_by_the_aimd_factor() {
    let r = call("gcc", "const:500kbps", 100, 50.0, 1);
    let t: Vec<f64> = (30..50).map(|s| target_at(&r, f64::from(s))).collect();
    let (min, max) = t
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    println!("targets 30–50 s: min {min:.0}, max {max:.0} kbit/s");
    assert!(min / max < 0.85, "{min} / {max}");
}

/// The new user: `wisp run --scheme gcc --link const:2mbps` (20 ms each way): the
/// target first reaches 80 % of the link within a second (the 2016 form needs ~35 s).
#[test]
fn reaches_80_percent_of_2_mbps_within_a_second() {
    let r = call("gcc", "const:2mbps", 20, 10.0, 1);
    let t = time_to(&r, 1600.0);
    println!("time to 1600 kbit/s: {t:?} s");
    assert!(t.is_some_and(|t| t < 1.0), "{t:?}");
}

/// RFC 8867 §5.1-style variable capacity as `gcc-remb`'s test runs it (`tests/gcc.rs`:
/// 1 → 2.5 → 0.6 → 1 Mbit/s every 25 s, 50 ms one way, a 300-ms drop-tail queue): on every one
/// of five seeds `gcc` uses at least 65 % of the link over the whole call and keeps the queueing
/// delay's 95th percentile under 250 ms.
#[test]
fn gcc_holds_the_rfc8867_capacity_steps_on_every_seed() {
    for seed in 1..=5 {
        let (r, model) = step_run("gcc", "droptail:bytes=37500".parse().unwrap(), seed);
        let u = utilisation(&r, &model, 0.0, 100.0);
        let phases = [
            utilisation(&r, &model, 0.0, 25.0),
            utilisation(&r, &model, 25.0, 50.0),
            utilisation(&r, &model, 50.0, 75.0),
            utilisation(&r, &model, 75.0, 100.0),
        ];
        let q = queue_p95(&r, 0.0, 100.0);
        println!("seed {seed}: utilisation {u:.3} (phases {phases:.3?}), queue p95 {q:.1} ms");
        assert!(u >= 0.65, "seed {seed}: utilisation {u}");
        assert!(q < 250.0, "seed {seed}: p95 {q}");
    }
}

/// Delivered kbit/s over [from, to) s.
fn throughput_kbps(r: &RunResult, from: f64, to: f64) -> f64 {
    delivered_bytes(r, from, to) as f64 * 8.0 / 1000.0 / (to - from)
}

/// `gcc:feedback=rfc8888` (RFC 8888 congestion control feedback instead of transport-wide
/// feedback, the same estimators behind the same adapter) on `wisp run`'s `const:2mbps`
/// (20 ms each way): the start-up expectation holds (80 % of the link within a second) and
/// the throughput over 0–10 s and 10–60 s is within 10 % of `gcc` with transport-wide feedback.
#[test]
fn rfc8888_feedback_runs_like_transport_wide_feedback_on_2_mbps() {
    let twcc = call("gcc", "const:2mbps", 20, 60.0, 1);
    let ccfb = call("gcc:feedback=rfc8888", "const:2mbps", 20, 60.0, 1);
    for (name, r) in [("twcc", &twcc), ("rfc8888", &ccfb)] {
        let t = time_to(r, 1600.0);
        println!(
            "{name}: time to 1600 kbit/s {t:?} s; throughput 0–10 s {:.0}, 10–60 s {:.0} kbit/s; feedback {} packets, {} bytes",
            throughput_kbps(r, 0.0, 10.0),
            throughput_kbps(r, 10.0, 60.0),
            r.log.feedback_packets,
            r.log.feedback_bytes,
        );
        assert!(t.is_some_and(|t| t < 1.0), "{name}: {t:?}");
    }
    for (from, to) in [(0.0, 10.0), (10.0, 60.0)] {
        let (a, b) = (
            throughput_kbps(&twcc, from, to),
            throughput_kbps(&ccfb, from, to),
        );
        assert!((b / a - 1.0).abs() <= 0.10, "{from}–{to} s: {a} vs {b}");
    }
}

/// `CutsHighRateInSafeResetTrial` with RFC 8888 feedback: 1000 ± 300 kbit/s 0.5 s in on a
/// 1 Mbit/s link (50 ms), as with transport-wide feedback.
#[test]
fn rfc8888_feedback_start_on_1_mbps_reaches_the_link_in_half_a_second() {
    let r = call("gcc:feedback=rfc8888", "const:1mbps", 50, 2.0, 1);
    let at = target_at(&r, 0.5);
    println!("rfc8888: target at 0.5 s: {at:.0} kbit/s");
    assert!((at - 1000.0).abs() <= 300.0, "{at}");
}

/// A capacity step (RFC 8867 §5.1's, 1 → 2.5 → 0.6 → 1 Mbit/s, 300-ms drop-tail queue) with
/// RFC 8888 feedback, five seeds: on every seed the bar `gcc` is held to (utilisation ≥ 0.65,
/// queueing delay p95 < 250 ms), and the mean utilisation within 10 % of `gcc` with
/// transport-wide feedback on the same seeds. (Single 25-s phases differ more: on seed 1 the
/// 2.5 Mbit/s phase is 0.72 with transport-wide feedback and 0.59 with RFC 8888's.)
#[test]
fn rfc8888_feedback_follows_the_capacity_steps_like_transport_wide_feedback() {
    let queue = || "droptail:bytes=37500".parse().unwrap();
    let (mut sum_twcc, mut sum_ccfb) = (0.0, 0.0);
    for seed in 1..=5 {
        let (twcc, model) = step_run("gcc", queue(), seed);
        let (ccfb, _) = step_run("gcc:feedback=rfc8888", queue(), seed);
        let (a, b) = (
            utilisation(&twcc, &model, 0.0, 100.0),
            utilisation(&ccfb, &model, 0.0, 100.0),
        );
        let phases: Vec<(f64, f64)> = [(0.0, 25.0), (25.0, 50.0), (50.0, 75.0), (75.0, 100.0)]
            .iter()
            .map(|&(f, t)| {
                (
                    utilisation(&twcc, &model, f, t),
                    utilisation(&ccfb, &model, f, t),
                )
            })
            .collect();
        let (qa, qb) = (queue_p95(&twcc, 0.0, 100.0), queue_p95(&ccfb, 0.0, 100.0));
        println!(
            "seed {seed}: utilisation twcc {a:.3}, rfc8888 {b:.3} (phases {phases:.3?}); queue p95 twcc {qa:.1}, rfc8888 {qb:.1} ms"
        );
        assert!(b >= 0.65, "seed {seed}: utilisation {b}");
        assert!(qb < 250.0, "seed {seed}: p95 {qb}");
        sum_twcc += a;
        sum_ccfb += b;
    }
    let (a, b) = (sum_twcc / 5.0, sum_ccfb / 5.0);
    println!("mean utilisation: twcc {a:.3}, rfc8888 {b:.3}");
    assert!((b - a).abs() <= 0.10 * a, "{a} vs {b}");
}

/// The queue after a capacity drop at `from` s: how long (s) until the first packet delivered
/// after the largest queueing delay in [from, to) had `ms` or less, and that largest delay (ms).
fn drain_after(r: &RunResult, from: f64, to: f64, ms: f64) -> (f64, f64) {
    let (a, b) = (
        Instant::ZERO + Duration::from_secs_f64(from),
        Instant::ZERO + Duration::from_secs_f64(to),
    );
    let q: Vec<(Instant, f64)> = r
        .log
        .packets
        .iter()
        .filter_map(|p| Some((p.delivered?, p.enqueued?)))
        .filter(|&(d, _)| d >= a && d < b)
        .map(|(d, e)| (d, (d - e).as_millis_f64()))
        .collect();
    let peak = (0..q.len())
        .max_by(|&i, &j| q[i].1.total_cmp(&q[j].1))
        .expect("packets after the drop");
    let end = q[peak..]
        .iter()
        .find(|(_, d)| *d <= ms)
        .map_or(b, |(t, _)| *t);
    ((end - a).as_secs_f64(), q[peak].1)
}

/// The drop from 2.5 to 0.6 Mbit/s of `scripts/compare-chrome.py`'s `variable` case
/// (`gcc:max-kbps=1700`, 20 ms each way, no queue limit), against Chrome 156 through
/// `wisp link` on the same link. In four Chrome calls the queueing delay was back under 100 ms
/// 3.08, 3.27, 3.36 and 3.45 s after the drop (median 3.32) and had peaked at 1,214–1,417 ms
/// (median 1,267); `docs/browser-call.md`. On five seeds `gcc` is within 30 % of both medians,
/// and it is the congestion window that does it: without it (`cwnd-queue-ms=0`) the queue
/// takes more than twice as long to drain.
#[test]
fn the_congestion_window_drains_the_queue_after_a_capacity_drop_as_chrome_does() {
    const LINK: &str = "steps:1mbps@0,2.5mbps@40s,0.6mbps@60s,1mbps@80s";
    let (chrome_drain, chrome_peak) = (3.32, 1267.0);
    for seed in 1..=5 {
        let r = call("gcc:max-kbps=1700", LINK, 20, 80.0, seed);
        let (drain, peak) = drain_after(&r, 60.0, 80.0, 100.0);
        let off = call("gcc:max-kbps=1700,cwnd-queue-ms=0", LINK, 20, 80.0, seed);
        let (off_drain, off_peak) = drain_after(&off, 60.0, 80.0, 100.0);
        println!(
            "seed {seed}: under 100 ms again {drain:.2} s after the drop, peak {peak:.0} ms; without the window {off_drain:.2} s, {off_peak:.0} ms"
        );
        assert!(
            (drain / chrome_drain - 1.0).abs() <= 0.3,
            "seed {seed}: {drain}"
        );
        assert!(
            (peak / chrome_peak - 1.0).abs() <= 0.3,
            "seed {seed}: {peak}"
        );
        assert!(
            off_drain > 2.0 * drain,
            "seed {seed}: {off_drain} vs {drain}"
        );
    }
}
