//! Scenario tests of the TCP baselines the Sprout paper compares against (§6.3–6.4): every scheme
//! fills a constant link; the delay-based ones keep the standing queue small; CUBIC over an
//! infinite queue on a cellular trace builds seconds of delay, and CoDel cuts it.

use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use wisp_core::Duration;
use wisp_core::scheme::SchemeConfig;
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::loss::LossSpec;
use wisp_sim::metrics::FlowMetrics;
use wisp_sim::queue::QueueSpec;
use wisp_sim::run::run;
use wisp_sim::sim::Scenario;
use wisp_sim::trace::{Trace, TraceUnit};

const TCP: [&str; 5] = ["cubic", "newreno", "vegas", "compound", "ledbat"];

fn link(spec: &str) -> LinkModel {
    spec.parse::<LinkSpec>().unwrap().load().unwrap()
}

fn cellular(name: &str) -> LinkModel {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../traces/cellular")
        .join(name);
    LinkSpec::Trace {
        path,
        unit: TraceUnit::Millis,
    }
    .load()
    .unwrap()
}

/// `scheme` alone on 10 Mbit/s with 20 ms each way, for `secs` seconds, measured after `warmup`.
fn on_10mbps(scheme: &str, queue: &str, secs: u64, warmup: u64) -> FlowMetrics {
    let mut s = Scenario::new(link("const:10mbps"), scheme.parse().unwrap());
    s.queue = queue.parse().unwrap();
    s.run.duration = Duration::from_secs(secs);
    s.run.warmup = Duration::from_secs(warmup);
    let f = run(&s, None).unwrap().report.flows[0].clone();
    println!(
        "{scheme:>9} {queue:>20}: {:7.0} kbit/s util {:.3} queue p95 {:?} ms delay p50 {:?} ms loss {:.4}",
        f.throughput_kbps, f.utilization, f.queue_delay_p95_ms, f.delay_p50_ms, f.loss_rate
    );
    f
}

/// `scheme` over Verizon-LTE-short (downlink data, uplink ACKs), 20 ms each way, as the paper.
fn on_verizon_lte(scheme: &str, queue: QueueSpec) -> FlowMetrics {
    let mut s = Scenario::new(cellular("Verizon-LTE-short.down"), scheme.parse().unwrap());
    s.reverse = Some(cellular("Verizon-LTE-short.up"));
    s.queue = queue;
    let f = run(&s, None).unwrap().report.flows[0].clone();
    println!(
        "{scheme:>9} {:>9}: {:7.0} kbit/s util {:.3} self-inflicted {:?} ms loss {:.4}",
        s.queue.to_string(),
        f.throughput_kbps,
        f.utilization,
        f.self_inflicted_delay_ms,
        f.loss_rate
    );
    f
}

/// 10 Mbit/s × 40 ms = 50 kB = 33.3 packets of 1500 B.
const ONE_BDP: &str = "droptail:packets=34";

#[test]
fn every_scheme_fills_a_constant_link_with_a_one_bdp_buffer() {
    for scheme in TCP {
        let f = on_10mbps(scheme, ONE_BDP, 30, 5);
        assert!(
            f.utilization >= 0.9,
            "{scheme}: utilization {}",
            f.utilization
        );
        assert!(
            f.utilization <= 1.001,
            "{scheme}: utilization {}",
            f.utilization
        );
    }
    // The loss-based schemes fill the buffer until it drops; Vegas stops short of it.
    for scheme in ["cubic", "newreno", "compound"] {
        let f = on_10mbps(scheme, ONE_BDP, 30, 5);
        assert!(f.loss_rate > 0.0, "{scheme} never filled the buffer");
    }
    assert_eq!(on_10mbps("vegas", ONE_BDP, 30, 5).loss_rate, 0.0);
}

#[test]
fn cubic_over_codel_fills_a_constant_link() {
    let f = on_10mbps("cubic", "codel", 30, 5);
    assert!(f.utilization >= 0.9, "utilization {}", f.utilization);
    // CoDel holds the queue near its 5 ms target (the 95th percentile sees its bursts).
    assert!(f.queue_delay_p95_ms.unwrap() < 30.0);
    assert!(f.loss_rate > 0.0);
}

#[test]
fn vegas_keeps_alpha_to_beta_segments_queued() {
    let f = on_10mbps("vegas", "infinite", 60, 10);
    assert!(f.utilization >= 0.95, "utilization {}", f.utilization);
    // α..β = 2..4 segments of 1.2 ms each at 10 Mbit/s; one more for the packet in service.
    let q = f.queue_delay_p95_ms.unwrap();
    assert!(
        (2.0 * 1.2..=5.0 * 1.2).contains(&q),
        "queueing delay p95 {q} ms"
    );
}

#[test]
fn ledbat_holds_the_queue_near_its_100_ms_target() {
    let f = on_10mbps("ledbat", "infinite", 60, 10);
    assert!(f.utilization >= 0.95, "utilization {}", f.utilization);
    let q = f.queue_delay_p95_ms.unwrap();
    assert!((90.0..=110.0).contains(&q), "queueing delay p95 {q} ms");
    let median = f.delay_p50_ms.unwrap() - 20.0;
    assert!(
        (85.0..=105.0).contains(&median),
        "median queueing delay {median} ms"
    );
    // A loss-based sender on the same link and queue: the queue only grows.
    let cubic = on_10mbps("cubic", "infinite", 60, 10);
    assert!(cubic.queue_delay_p95_ms.unwrap() > 1000.0);
}

#[test]
fn cubic_on_an_infinite_queue_over_verizon_lte_builds_seconds_of_delay() {
    let f = on_verizon_lte("cubic", QueueSpec::Infinite);
    let d = f.self_inflicted_delay_ms.unwrap();
    assert!(d >= 2000.0, "self-inflicted delay {d} ms");
    assert!(f.utilization >= 0.95, "utilization {}", f.utilization);
    assert_eq!(f.loss_rate, 0.0);
}

#[test]
fn cubic_over_codel_sits_between_cubic_and_the_delay_based_schemes() {
    let inf = on_verizon_lte("cubic", QueueSpec::Infinite);
    let codel = on_verizon_lte("cubic", "codel".parse().unwrap());
    let vegas = on_verizon_lte("vegas", QueueSpec::Infinite);
    let ledbat = on_verizon_lte("ledbat", QueueSpec::Infinite);
    let delay = |f: &FlowMetrics| f.self_inflicted_delay_ms.unwrap();
    // Delay: far below CUBIC's own on an infinite queue, and no worse than the worse of the
    // delay-based schemes.
    assert!(delay(&codel) * 10.0 < delay(&inf));
    assert!(delay(&codel) <= delay(&vegas).max(delay(&ledbat)));
    // Throughput: below CUBIC-infinite's (CoDel's drops cost some), above the more cautious
    // delay-based scheme's.
    assert!(codel.throughput_kbps < inf.throughput_kbps);
    assert!(codel.throughput_kbps > vegas.throughput_kbps.min(ledbat.throughput_kbps));
    assert!(codel.loss_rate > 0.0);
}

#[test]
fn acks_lost_on_a_congested_reverse_path_are_survived() {
    // 833 data packets/s need 833 ACKs/s of 64 B (427 kbit/s); 300 kbit/s with a 10-packet
    // drop-tail queue loses about a third of them. The ranges in later ACKs cover for them.
    for scheme in ["newreno", "cubic"] {
        let mut s = Scenario::new(link("const:10mbps"), scheme.parse().unwrap());
        s.queue = ONE_BDP.parse().unwrap();
        s.reverse = Some(link("const:300kbps"));
        s.reverse_queue = "droptail:packets=10".parse().unwrap();
        s.run.duration = Duration::from_secs(30);
        s.run.warmup = Duration::from_secs(5);
        let r = run(&s, None).unwrap();
        let f = &r.report.flows[0];
        println!(
            "{scheme}: util {:.3}, loss {:.4}, ACKs lost {} of {}",
            f.utilization, f.loss_rate, r.log.feedback_dropped, r.log.feedback_packets
        );
        assert!(r.log.feedback_dropped * 5 > r.log.feedback_packets);
        assert!(
            f.utilization >= 0.85,
            "{scheme}: utilization {}",
            f.utilization
        );
    }
}

/// A random Mahimahi trace: non-decreasing ms timestamps, bursts and gaps (outages included).
fn trace_strategy() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(
        prop_oneof![3 => Just(0u64), 5 => 1u64..4, 1 => 20u64..1500],
        20..300,
    )
    .prop_map(|gaps| {
        let mut t = 0;
        let mut v: Vec<u64> = gaps
            .into_iter()
            .map(|g| {
                t += g;
                t
            })
            .collect();
        if *v.last().unwrap() == 0 {
            v.push(1);
        }
        v
    })
}

fn random_link(times: &[u64]) -> LinkModel {
    let text: String = times.iter().map(|t| format!("{t}\n")).collect();
    LinkModel::from_trace(Arc::new(
        Trace::parse(&text, "random", TraceUnit::Millis).unwrap(),
    ))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Over random traces, queues and losses, with random reverse traces: the same seed gives
    /// the same bytes, every packet is accounted for, and a TCP sender never stops for good.
    #[test]
    fn tcp_runs_are_deterministic_and_keep_sending(
        scheme in 0usize..5,
        fwd in trace_strategy(),
        rev in trace_strategy(),
        queue in prop_oneof![
            Just("infinite"), Just("droptail:packets=8"), Just("codel"), Just("pie")
        ],
        loss in prop_oneof![Just(0.0), 0.0f64..0.2],
        seed in any::<u64>(),
    ) {
        let scheme: SchemeConfig = TCP[scheme].parse().unwrap();
        let mut s = Scenario::new(random_link(&fwd), scheme);
        s.reverse = Some(random_link(&rev));
        s.queue = queue.parse().unwrap();
        s.loss = if loss > 0.0 { LossSpec::Bernoulli(loss) } else { LossSpec::None };
        s.run.seed = seed;
        s.run.duration = Duration::from_secs(20);
        let a = run(&s, None).unwrap();
        let b = run(&s, None).unwrap();
        prop_assert_eq!(
            serde_json::to_string(&a.report).unwrap(),
            serde_json::to_string(&b.report).unwrap()
        );
        let (mut la, mut lb) = (vec![], vec![]);
        a.log.write_csv(&mut la).unwrap();
        b.log.write_csv(&mut lb).unwrap();
        prop_assert_eq!(la, lb);
        for p in &a.log.packets {
            prop_assert!(!(p.delivered.is_some() && p.dropped.is_some()));
        }
        // Still sending in the last quarter of the run (timeouts back off to at most 60 s, but
        // a path that delivers something keeps the ACK clock or the timer going).
        let last = a.log.packets.iter().map(|p| p.sent()).max().unwrap();
        prop_assert!(last.as_secs_f64() >= 5.0, "last packet sent at {last:?}");
    }
}
