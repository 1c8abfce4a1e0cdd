//! Scenario tests on the shipped traces.

mod common;

use wisp_sim::queue::QueueSpec;
use wisp_sim::run::run;
use wisp_sim::sim::Scenario;

fn trace(name: &str) -> wisp_sim::link::LinkModel {
    common::cellular(name)
}

#[test]
fn ideal_uses_the_whole_link_without_queueing() {
    let s = Scenario::new(trace("Verizon-LTE-short.down"), "ideal".parse().unwrap());
    let r = run(&s, None).unwrap();
    let f = &r.report.flows[0];
    println!("{f:?}");
    assert!(f.utilization >= 0.99, "utilization {}", f.utilization);
    assert!(
        f.self_inflicted_delay_ms.unwrap().abs() <= 1.0,
        "self-inflicted {:?}",
        f.self_inflicted_delay_ms
    );
    assert_eq!(f.queue_delay_p95_ms, Some(0.0));
    assert_eq!(f.delay_p95_ms, Some(20.0));
}

#[test]
fn cbr_above_capacity_builds_a_queue_that_codel_bounds() {
    let link = trace("TMobile-UMTS-driving.down");
    let mut s = Scenario::new(link, "cbr:rate-kbps=2000".parse().unwrap());
    let inf = run(&s, None).unwrap().report.flows[0].clone();
    s.queue = QueueSpec::Codel(Default::default());
    let codel = run(&s, None).unwrap().report.flows[0].clone();
    println!("infinite: {inf:?}\ncodel: {codel:?}");
    assert!(inf.e2e_delay_p95_ms.unwrap() > 2000.0);
    assert!(codel.e2e_delay_p95_ms.unwrap() < inf.e2e_delay_p95_ms.unwrap() / 4.0);
    assert!(codel.loss_rate > 0.0 && inf.loss_rate == 0.0);
}
