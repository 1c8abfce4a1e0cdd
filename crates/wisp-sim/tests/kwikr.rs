//! `kwikr` and `skype-ukf` in the simulator. Without a Ping-Pair source (a plain run has none),
//! Kwikr's eq. (3) sees T_c = 0 and must compute exactly what the baseline does: the same
//! report, byte for byte, on a constant link, bandwidth steps and a cellular trace.

use wisp_core::scheme::SchemeConfig;
use wisp_sim::link::LinkSpec;
use wisp_sim::run::run;
use wisp_sim::sim::Scenario;

fn report(link: &str, scheme: &str, secs: u64) -> (String, f64) {
    let link = link.parse::<LinkSpec>().unwrap().load().unwrap();
    let mut s = Scenario::new(link, scheme.parse::<SchemeConfig>().unwrap());
    s.duration = wisp_core::Duration::from_secs(secs);
    s.warmup = wisp_core::Duration::from_secs(5);
    let r = run(&s, None).unwrap();
    let f = &r.report.flows[0];
    // Everything but the scheme's name.
    let mut v = serde_json::to_value(&r.report.flows).unwrap();
    for f in v.as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("scheme");
    }
    (v.to_string(), f.throughput_kbps)
}

#[test]
fn kwikr_without_ping_pair_is_the_baseline_exactly() {
    let trace = format!(
        "trace:{}/../../traces/cellular/TMobile-LTE-short.down",
        env!("CARGO_MANIFEST_DIR")
    );
    for link in [
        "const:2mbps",
        "steps:2mbps@0,1mbps@20s,3mbps@40s",
        trace.as_str(),
    ] {
        let (base, kbps) = report(link, "skype-ukf", 60);
        let (kwikr, _) = report(link, "kwikr", 60);
        assert_eq!(base, kwikr, "{link}");
        // And the run did something: a video call at a few hundred kbit/s or more.
        assert!(kbps > 200.0, "{link}: {kbps}");
        // A different β with T_c = 0 is still the baseline; a different σ_e is not (the
        // comparison can fail).
        let (other_beta, _) = report(link, "kwikr:noise-scaling=16", 60);
        assert_eq!(base, other_beta, "{link}");
        let (other_sigma, _) = report(link, "skype-ukf:sigma-e-ms=5", 60);
        assert_ne!(base, other_sigma, "{link}");
    }
}

/// The loop on a constant 2 Mbit/s link: the sender settles at about share × B (0.9 × 2 Mbit/s)
/// with a short queue.
#[test]
fn skype_ukf_fills_a_constant_link_to_its_share() {
    let link = "const:2mbps".parse::<LinkSpec>().unwrap().load().unwrap();
    let mut s = Scenario::new(link, "skype-ukf".parse::<SchemeConfig>().unwrap());
    s.duration = wisp_core::Duration::from_secs(60);
    s.warmup = wisp_core::Duration::from_secs(10);
    let r = run(&s, None).unwrap();
    let f = &r.report.flows[0];
    assert!(
        (f.utilization - 0.9).abs() < 0.05,
        "utilization {}",
        f.utilization
    );
    assert!(
        f.queue_delay_p95_ms.unwrap() < 50.0,
        "queueing p95 {:?}",
        f.queue_delay_p95_ms
    );
}
