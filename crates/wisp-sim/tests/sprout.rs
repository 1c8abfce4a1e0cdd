//! Scenario tests of Sprout and Sprout-EWMA on the shipped cellular traces (Winstein et al.,
//! NSDI 2013, §6): each direction of a trace pair with the other as the feedback path, 20 ms
//! each way, infinite queue, as Cellsim ran them.

mod common;

use proptest::prelude::*;
use std::sync::Arc;
use wisp_core::packet::Content;
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::loss::LossSpec;
use wisp_sim::metrics::FlowMetrics;
use wisp_sim::run::run;
use wisp_sim::sim::Scenario;

fn trace(name: &str) -> LinkModel {
    common::cellular(name)
}

/// `scheme` over `base.{dir}` with `base.{other}` carrying the feedback.
fn scenario(scheme: &str, base: &str, dir: &str) -> Scenario {
    let other = if dir == "down" { "up" } else { "down" };
    let mut s = Scenario::new(trace(&format!("{base}.{dir}")), scheme.parse().unwrap());
    s.reverse = Some(trace(&format!("{base}.{other}")));
    s
}

fn flow(s: &Scenario) -> FlowMetrics {
    let r = run(s, None).unwrap();
    let f = r.report.flows[0].clone();
    println!(
        "{} on {} (loss {}/{}): {:.0} kbit/s, utilization {:.3}, self-inflicted {:?} ms",
        r.report.scheme,
        r.report.trace,
        r.report.loss,
        r.report.reverse_loss,
        f.throughput_kbps,
        f.utilization,
        f.self_inflicted_delay_ms
    );
    f
}

/// The paper's Verizon LTE downlink point is 4,533 kbit/s at 73 ms self-inflicted delay (§6.5,
/// on a longer trace than the one shipped); on the shipped trace wisp measures 4192 kbit/s at
/// 72 ms, checked with a margin (the reproduction's `lte-downlink` claim uses the same bounds).
#[test]
fn sprout_on_verizon_lte_downlink_uses_the_link_without_a_standing_queue() {
    use wisp_sim::reproduce::sprout::{LTE_DOWNLINK_MAX_DELAY_MS, LTE_DOWNLINK_MIN_UTILIZATION};
    let f = flow(&scenario("sprout", "Verizon-LTE-short", "down"));
    assert!(
        f.utilization >= LTE_DOWNLINK_MIN_UTILIZATION,
        "utilization {}",
        f.utilization
    );
    let d = f.self_inflicted_delay_ms.unwrap();
    assert!(
        d <= LTE_DOWNLINK_MAX_DELAY_MS,
        "self-inflicted delay {d} ms"
    );
    assert_eq!(f.loss_rate, 0.0);
}

/// A jitter-free link is the hardest case for telling an idle sender from a slow link: every
/// heartbeat lands at the same phase of the receiver's tick. Both variants must still ramp up.
#[test]
fn sprout_fills_a_constant_link() {
    for scheme in ["sprout", "sprout-ewma"] {
        let link = "const:5mbps".parse::<LinkSpec>().unwrap().load().unwrap();
        let mut s = Scenario::new(link, scheme.parse().unwrap());
        s.run.duration = wisp_core::Duration::from_secs(30);
        let f = flow(&s);
        assert!(
            f.utilization >= 0.9,
            "{scheme}: utilization {}",
            f.utilization
        );
        let d = f.self_inflicted_delay_ms.unwrap();
        assert!(d < 100.0, "{scheme}: self-inflicted delay {d} ms");
    }
}

/// §6.4: Sprout-EWMA trades delay for throughput.
#[test]
fn sprout_ewma_sends_more_and_queues_more_than_sprout() {
    for (base, dir) in [
        ("Verizon-LTE-short", "down"),
        ("Verizon-LTE-short", "up"),
        ("TMobile-UMTS-driving", "up"),
    ] {
        let sprout = flow(&scenario("sprout", base, dir));
        let ewma = flow(&scenario("sprout-ewma", base, dir));
        assert!(
            ewma.throughput_kbps > sprout.throughput_kbps,
            "{base}.{dir}: {} vs {}",
            ewma.throughput_kbps,
            sprout.throughput_kbps
        );
        assert!(
            ewma.self_inflicted_delay_ms.unwrap() > sprout.self_inflicted_delay_ms.unwrap(),
            "{base}.{dir}"
        );
    }
}

/// §6.5: Bernoulli loss in both directions (data and feedback).
#[test]
fn sprout_keeps_most_of_its_throughput_under_loss() {
    for dir in ["down", "up"] {
        let kbps: Vec<f64> = [0.0, 0.05, 0.1]
            .iter()
            .map(|&p| {
                let mut s = scenario("sprout", "Verizon-LTE-short", dir);
                if p > 0.0 {
                    s.loss = LossSpec::Bernoulli(p);
                    s.reverse_loss = LossSpec::Bernoulli(p);
                }
                flow(&s).throughput_kbps
            })
            .collect();
        assert!(kbps[0] > kbps[1] && kbps[1] > kbps[2], "{dir}: {kbps:?}");
        assert!(kbps[1] > 0.5 * kbps[0], "{dir}: {kbps:?}");
    }
}

#[test]
fn reverse_loss_drops_feedback_only() {
    let mut s = scenario("sprout", "Verizon-LTE-short", "down");
    s.run.duration = wisp_core::Duration::from_secs(20);
    s.reverse_loss = LossSpec::Bernoulli(0.2);
    let r = run(&s, None).unwrap();
    let fb = r.log.feedback_packets as f64;
    let dropped = r.log.feedback_dropped as f64;
    assert!((dropped / fb - 0.2).abs() < 0.03, "{dropped} of {fb}");
    assert_eq!(r.report.flows[0].packets_lost, 0);
}

#[test]
fn sprout_runs_are_deterministic() {
    for scheme in ["sprout", "sprout-ewma", "sprout:sigmas=50/100/200/400/800"] {
        let mut s = scenario(scheme, "TMobile-UMTS-driving", "down");
        s.run.duration = wisp_core::Duration::from_secs(20);
        s.loss = LossSpec::Bernoulli(0.05);
        s.reverse_loss = LossSpec::Bernoulli(0.05);
        s.run.seed = 42;
        let a = run(&s, None).unwrap();
        let b = run(&s, None).unwrap();
        assert_eq!(
            serde_json::to_string(&a.report).unwrap(),
            serde_json::to_string(&b.report).unwrap()
        );
        let (mut la, mut lb) = (vec![], vec![]);
        a.log.write_csv(&mut la).unwrap();
        b.log.write_csv(&mut lb).unwrap();
        assert_eq!(la, lb, "{scheme}");
        assert!(a.report.flows[0].packets_delivered > 100, "{scheme}");
    }
}

/// A random trace with bursts and gaps of up to 2 s (outages).
fn random_trace() -> impl Strategy<Value = LinkModel> {
    proptest::collection::vec(
        prop_oneof![4 => Just(0u64), 6 => 1u64..5, 1 => 20u64..2000],
        50..600,
    )
    .prop_map(|gaps| {
        let mut t = 0;
        let mut text = String::new();
        for g in gaps {
            t += g;
            text.push_str(&format!("{t}\n"));
        }
        text.push_str(&format!("{}\n", t + 1));
        LinkModel::from_trace(Arc::new(
            wisp_sim::trace::Trace::parse(&text, "random", wisp_sim::trace::TraceUnit::Millis)
                .unwrap(),
        ))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// On any link, with loss both ways: the same seed gives the same bytes, and Sprout never has
    /// more data in the network than its largest forecast.
    #[test]
    fn sprout_on_random_links_is_deterministic_and_bounded(
        link in random_trace(),
        reverse in random_trace(),
        scheme in prop_oneof![Just("sprout"), Just("sprout-ewma")],
        loss in prop_oneof![Just(0.0), 0.0..0.2],
        seed in any::<u64>(),
    ) {
        let mut s = Scenario::new(link, scheme.parse().unwrap());
        s.reverse = Some(reverse);
        s.run.duration = wisp_core::Duration::from_secs(4);
        if loss > 0.0 {
            s.loss = LossSpec::Bernoulli(loss);
            s.reverse_loss = LossSpec::Bernoulli(loss);
        }
        s.run.seed = seed;
        let a = run(&s, None).unwrap();
        let b = run(&s, None).unwrap();
        let (mut la, mut lb) = (vec![], vec![]);
        a.log.write_csv(&mut la).unwrap();
        b.log.write_csv(&mut lb).unwrap();
        prop_assert_eq!(la, lb);
        prop_assert_eq!(
            serde_json::to_string(&a.report).unwrap(),
            serde_json::to_string(&b.report).unwrap()
        );
        // Each data packet leaves only if Q + size ≤ C_{k+5} − C_k, where the queue estimate Q
        // is at least (sent − received-or-lost at the last forecast) − C_k; so data in flight
        // never exceeds the forecast's largest cumulative count: 161 packets for Sprout's tables
        // (1000 packets/s × 160 ms, rounded up). Heartbeats go outside the window.
        if scheme != "sprout" {
            return Ok(());
        }
        let mut events: Vec<(wisp_core::Instant, i64)> = vec![];
        for p in a.log.packets.iter().filter(|p| p.header.content == Content::Bulk) {
            let size = p.header.size.bytes() as i64;
            events.push((p.sent(), size));
            if let Some(t) = p.delivered.or(p.dropped) {
                events.push((t, -size));
            }
        }
        events.sort();
        let mut in_flight = 0i64;
        for (_, d) in events {
            in_flight += d;
            prop_assert!(in_flight <= 161 * 1500, "{in_flight} bytes in flight");
        }
    }
}
