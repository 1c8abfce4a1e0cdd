//! Invariants of the simulator, checked on random traces, rates, packet sizes, queues and seeds.

use proptest::prelude::*;
use std::sync::Arc;
use wisp_core::Instant;
use wisp_core::scheme::SchemeConfig;
use wisp_sim::link::{BYTES_PER_LINE, LinkModel};
use wisp_sim::loss::LossSpec;
use wisp_sim::queue::QueueSpec;
use wisp_sim::run::run;
use wisp_sim::sim::{FlowSpec, Scenario};
use wisp_sim::trace::{Trace, TraceUnit};

/// A random Mahimahi trace: non-decreasing ms timestamps, bursts and gaps.
fn trace_strategy() -> impl Strategy<Value = Vec<u64>> {
    proptest::collection::vec(
        prop_oneof![3 => Just(0u64), 5 => 1u64..4, 1 => 20u64..300],
        20..400,
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

fn link(times: &[u64]) -> LinkModel {
    let text: String = times.iter().map(|t| format!("{t}\n")).collect();
    LinkModel::from_trace(Arc::new(
        Trace::parse(&text, "random", TraceUnit::Millis).unwrap(),
    ))
}

fn queue_strategy() -> impl Strategy<Value = QueueSpec> {
    prop_oneof![
        Just(QueueSpec::Infinite),
        Just("droptail:packets=20".parse().unwrap()),
        Just("drophead:bytes=20000".parse().unwrap()),
        Just("codel".parse().unwrap()),
        Just("pie".parse().unwrap()),
        Just("codel:ecn=on".parse().unwrap()),
        Just("step:threshold=2ms,packets=50".parse().unwrap()),
        Just("dualpi2:bytes=60000".parse().unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// For every window [a, b): bytes delivered ≤ bytes offered + one packet (a packet may
    /// collect credit before the window and complete inside it); from time 0 the bound is exact.
    #[test]
    fn link_never_delivers_more_than_the_trace_offers(
        times in trace_strategy(),
        rate_kbps in 100u64..20_000,
        size in prop_oneof![Just(1500u64), 40u64..=1500],
        flows in 1usize..3,
        queue in queue_strategy(),
        windows in proptest::collection::vec((0u64..3000, 1u64..1000), 20),
    ) {
        let model = link(&times);
        let scheme: SchemeConfig = format!("cbr:rate-kbps={rate_kbps},packet-bytes={size}").parse().unwrap();
        let mut s = Scenario::new(model.clone(), scheme.clone());
        s.flows = vec![FlowSpec::new(scheme); flows];
        s.queue = queue;
        s.run.duration = wisp_core::Duration::from_millis(3000);
        let r = run(&s, None).unwrap();
        let mut deliveries: Vec<(Instant, u64)> = r.log.packets.iter()
            .filter_map(|p| p.delivered.map(|d| (d, p.header.size.bytes()))).collect();
        deliveries.sort();
        let delivered = |a: Instant, b: Instant| deliveries.iter().filter(|(d, _)| *d >= a && *d < b).map(|x| x.1).sum::<u64>();
        let offered = |a: Instant, b: Instant| model.capacity_bins(a, b, b - a).iter().sum::<f64>() as u64;
        for &(a, len) in &windows {
            let (a, b) = (Instant::from_millis(a), Instant::from_millis(a + len));
            prop_assert!(delivered(a, b) <= offered(a, b) + size, "window {a:?}..{b:?}");
            prop_assert!(delivered(Instant::ZERO, b) <= offered(Instant::ZERO, b + wisp_core::Duration::from_nanos(1)));
        }
        // Packets that exactly fill an opportunity never borrow credit: the windowed bound is exact.
        if size == BYTES_PER_LINE {
            for &(a, len) in &windows {
                let (a, b) = (Instant::from_millis(a), Instant::from_millis(a + len));
                prop_assert!(delivered(a, b) <= offered(a, b), "window {a:?}..{b:?}");
            }
        }
        // Conservation: every packet is delivered, dropped, or still on its way at the end.
        for p in &r.log.packets {
            prop_assert!(!(p.delivered.is_some() && p.dropped.is_some()));
            if let (Some(d), Some(e)) = (p.delivered, p.enqueued) {
                prop_assert!(d >= e && e >= p.sent());
            }
        }
    }

    /// The same scenario and seed give byte-identical JSON.
    #[test]
    fn the_same_seed_gives_the_same_bytes(
        times in trace_strategy(),
        seed in any::<u64>(),
        queue in queue_strategy(),
        rate_kbps in 500u64..5000,
    ) {
        let scheme: SchemeConfig = format!("cbr:rate-kbps={rate_kbps}").parse().unwrap();
        let mut s = Scenario::new(link(&times), scheme);
        s.queue = queue;
        s.loss = LossSpec::GilbertElliott { p: 0.05, r: 0.3, good: 0.01, bad: 0.5 };
        s.run.seed = seed;
        s.run.duration = wisp_core::Duration::from_millis(2000);
        let a = run(&s, None).unwrap();
        let b = run(&s, None).unwrap();
        prop_assert_eq!(serde_json::to_string(&a.report).unwrap(), serde_json::to_string(&b.report).unwrap());
        prop_assert_eq!(serde_json::to_string(&a.series).unwrap(), serde_json::to_string(&b.series).unwrap());
        let (mut la, mut lb) = (vec![], vec![]);
        a.log.write_csv(&mut la).unwrap();
        b.log.write_csv(&mut lb).unwrap();
        prop_assert_eq!(la, lb);
    }
}

#[test]
fn different_seeds_give_different_loss_patterns() {
    let times: Vec<u64> = (1..=1000).collect();
    let scheme: SchemeConfig = "cbr:rate-kbps=6000".parse().unwrap();
    let mut s = Scenario::new(link(&times), scheme);
    s.loss = LossSpec::Bernoulli(0.1);
    let a = run(&s, None).unwrap();
    s.run.seed = 2;
    let b = run(&s, None).unwrap();
    let lost = |r: &wisp_sim::run::RunResult| {
        r.log
            .packets
            .iter()
            .map(|p| p.dropped.is_some())
            .collect::<Vec<_>>()
    };
    assert_ne!(lost(&a), lost(&b));
    assert!((a.report.flows[0].loss_rate - 0.1).abs() < 0.03);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The profile and handover parsers never panic, and whatever parses loads (synthetic
    /// segments read no file) and names itself back.
    #[test]
    fn mobile_and_handover_specs_never_panic(
        prefix in proptest::sample::select(vec![
            "3g-up:", "wimax-down:", "cable-up:", "handover:", "handover:3g-up+", "handover:const:1mbps+",
        ]),
        rest in "[a-z0-9=,.@+:-]{0,30}",
    ) {
        let s = format!("{prefix}{rest}");
        if let Ok(spec) = s.parse::<wisp_sim::link::LinkSpec>() {
            if !s.contains("trace") {
                let model = spec.load().unwrap();
                let again = model.name().parse::<wisp_sim::link::LinkSpec>().unwrap();
                prop_assert_eq!(again.load().unwrap().name(), model.name());
            }
        }
    }
}
