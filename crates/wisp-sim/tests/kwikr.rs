//! `kwikr` and `skype-ukf` in the simulator. Without a Ping-Pair source (a run off Wi-Fi has none),
//! Kwikr's eq. (3) sees T_c = 0 and must compute exactly what the baseline does: the same
//! report, byte for byte, on a constant link, bandwidth steps and a cellular trace.

use wisp_core::scheme::SchemeConfig;
use wisp_sim::link::LinkSpec;
use wisp_sim::run::run;
use wisp_sim::sim::Scenario;

fn report(link: &str, scheme: &str, secs: u64) -> (String, f64) {
    let link = link.parse::<LinkSpec>().unwrap().load().unwrap();
    let mut s = Scenario::new(link, scheme.parse::<SchemeConfig>().unwrap());
    s.run.duration = wisp_core::Duration::from_secs(secs);
    s.run.warmup = wisp_core::Duration::from_secs(5);
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
    s.run.duration = wisp_core::Duration::from_secs(60);
    s.run.warmup = wisp_core::Duration::from_secs(10);
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

/// `wisp run --scheme S --link wifi:SPEC` for `secs` seconds (5-s warm-up), seed 1.
fn wifi_run(spec: &str, scheme: &str, secs: u64) -> wisp_sim::run::RunResult {
    let spec: wisp_sim::wifi::link::WifiSpec = spec.parse().unwrap();
    let options = wisp_sim::options::RunOptions {
        duration: Some(wisp_core::Duration::from_secs(secs)),
        warmup: wisp_core::Duration::from_secs(5),
        ..Default::default()
    };
    let flows = vec![wisp_sim::sim::FlowSpec::new(scheme.parse().unwrap())];
    wisp_sim::run::run_wifi(&spec, &options, flows, 1, None).unwrap()
}

/// On a Wi-Fi link with cross traffic (three contenders each downloading through the same AP),
/// a `kwikr` call's station runs Ping-Pair every 500 ms and its receiver takes the pairs
/// (T_c > 0 from the contenders' frames between the replies): the run differs from
/// `skype-ukf`, which does not probe.
#[test]
fn kwikr_on_wifi_takes_ping_pair_and_differs_from_the_baseline() {
    let spec = "std=11g,stations=3,load=tcp";
    let base = wifi_run(spec, "skype-ukf", 40);
    let kwikr = wifi_run(spec, "kwikr", 40);
    assert!(base.log.pings.is_empty(), "skype-ukf does not probe");
    let pings = &kwikr.log.pings;
    // A pair every 500 ms for 40 s (the last may still be in flight at the end).
    assert!((75..=80).contains(&pings.len()), "{} pairs", pings.len());
    let valid = pings.iter().filter(|p| p.t_q.is_some()).count();
    let attributed: Vec<_> = pings.iter().filter(|p| p.t_c.is_some()).collect();
    assert!(
        valid >= pings.len() * 9 / 10,
        "{valid} of {} valid",
        pings.len()
    );
    assert_eq!(
        attributed.len(),
        valid,
        "the receiver took every valid pair"
    );
    let s = wisp_sim::pingpair::summary(pings, 0);
    eprintln!(
        "kwikr {:.0} kbit/s (skype-ukf {:.0}); pairs {} valid {} T_q p50 {:?} ms, T_c mean {:?} ms, n_a mean {:?}",
        kwikr.report.flows[0].throughput_kbps,
        base.report.flows[0].throughput_kbps,
        s.pairs,
        s.valid,
        s.t_q_p50_ms,
        s.t_c_mean_ms,
        s.n_a_mean
    );
    // The contenders' frames between the replies are cross traffic: T_c > 0 on most pairs,
    // and the receiver's eq. (3) runs with it.
    let positive = attributed
        .iter()
        .filter(|p| p.t_c.unwrap() > wisp_core::Duration::ZERO)
        .count();
    assert!(
        positive * 2 > attributed.len(),
        "{positive} of {}",
        attributed.len()
    );
    assert!(
        attributed
            .iter()
            .any(|p| p.t_c_smoothed.unwrap() > wisp_core::Duration::ZERO)
    );
    // Ground truth is there for every delivered reply.
    assert!(
        pings
            .iter()
            .filter(|p| p.normal_reply.is_some())
            .all(|p| p.truth_delay.is_some() && p.truth_backlog.is_some())
    );
    let strip = |r: &wisp_sim::run::RunResult| {
        let mut v = serde_json::to_value(&r.report.flows).unwrap();
        v[0].as_object_mut().unwrap().remove("scheme");
        v.to_string()
    };
    assert_ne!(strip(&kwikr), strip(&base));
}

/// The scenario file's flow key `pingpair`: on by default for a `kwikr` flow to a station, off
/// for others, a spec string or `off`; a bad one names its place.
#[test]
fn scenario_files_take_a_pingpair_key() {
    let text = |flows: &str| {
        format!(
            r#"duration = "10s"
[nodes]
server = "host"
ap = "ap"
a = "station"
b = "station"
[[links]]
from = "server"
to = "ap"
spec = "pipe"
delay = "10ms"
reverse = "pipe"
[[wifi]]
ap = "ap"
stations = ["a", "b"]
{flows}"#
        )
    };
    let load = |flows: &str| wisp_sim::scenario_file::parse_without_files("s.toml", &text(flows));
    let f = load(
        r#"[[flows]]
scheme = "kwikr"
from = "server"
to = "a"
[[flows]]
scheme = "skype-ukf"
from = "server"
to = "b"
[[flows]]
scheme = "cbr"
from = "server"
to = "b"
pingpair = "interval=200ms,tos-high=0xc0,sample=1ms"
[[flows]]
scheme = "kwikr"
from = "server"
to = "a"
pingpair = "off"
"#,
    )
    .unwrap();
    let pp: Vec<_> = f.network.flows.iter().map(|r| r.pingpair.clone()).collect();
    assert_eq!(pp[0], Some(wisp_sim::pingpair::PingPairSpec::kwikr()));
    assert_eq!(pp[1], None);
    let v = pp[2].clone().unwrap();
    assert_eq!(v.interval, wisp_core::Duration::from_millis(200));
    assert_eq!(v.tos_high, 0xc0);
    assert_eq!(pp[3], None);
    // A bad spec, and a flow whose data does not end on a Wi-Fi hop to a station.
    let e = load(
        r#"[[flows]]
scheme = "cbr"
from = "server"
to = "a"
pingpair = "interval=soon"
"#,
    )
    .unwrap_err();
    assert_eq!(e.at.map(|a| a.0), Some(20), "{e}");
    assert!(e.message.contains("interval"), "{e}");
    let e = load(
        r#"[[flows]]
scheme = "cbr"
from = "a"
to = "server"
pingpair = "on"
"#,
    )
    .unwrap_err();
    assert!(e.message.contains("must end with a Wi-Fi hop"), "{e}");
    // The kwikr default on a flow to a station, run: pairs are logged and taken.
    let f = load(
        r#"[[flows]]
scheme = "kwikr"
from = "server"
to = "a"
"#,
    )
    .unwrap();
    let r = f.run(None).unwrap();
    let log = &r.run.log;
    assert!(log.pings.len() >= 18, "{}", log.pings.len());
    assert!(log.pings.iter().all(|p| p.flow == 0));
    assert!(log.pings.iter().filter(|p| p.n_a.is_some()).count() >= 10);
    // `wisp sim --json` reports it per flow.
    let json = serde_json::to_value(&r.report).unwrap();
    let pp = &json["flows"][0]["pingpair"];
    assert_eq!(pp["pairs"].as_u64(), Some(log.pings.len() as u64));
    assert!(pp["attributed"].as_u64().unwrap() >= 10, "{pp}");
}

/// Without WMM (one queue at the AP) the high-priority reply never overtakes: no pair is valid
/// and the receiver is given nothing (§7.3: Kwikr then falls back to the baseline's behaviour).
#[test]
fn without_wmm_no_pair_is_valid_and_kwikr_gets_nothing() {
    let r = wifi_run("std=11g,stations=3,load=tcp,wmm=off", "kwikr", 20);
    let pings = &r.log.pings;
    assert!(pings.len() >= 35, "{}", pings.len());
    assert!(pings.iter().all(|p| p.t_q.is_none() && p.t_c.is_none()));
    // The replies came back (not lost): they were just not reversed.
    let back = pings
        .iter()
        .filter(|p| p.high_reply.is_some() && p.normal_reply.is_some())
        .count();
    assert!(back * 10 >= pings.len() * 9, "{back} of {}", pings.len());
}
