//! `wisp sweep`, the mobile profiles and the Mehrotra et al. schemes end to end, and `wisp
//! reproduce mehrotra`.

mod common;
use common::*;

use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn bad_input_names_the_option() {
    assert_bad_input(&["sweep", "--link", "3g-up:loss=2"], "loss");
    assert_bad_input(&["sweep", "--link", "wimax-down:colour=red"], "colour");
    assert_bad_input(&["sweep", "--link", "handover:3g-up"], "handover");
    assert_bad_input(&["sweep", "--link", "3g-up", "--rates", "100,0"], "--rates");
    assert_bad_input(&["sweep", "--link", "3g-up", "--rates", "fast"], "--rates");
    assert_bad_input(
        &["sweep", "--link", "3g-up", "--packet-bytes", "10"],
        "--packet-bytes",
    );
    assert_bad_input(&["sweep", "--trace", "no/such.trace"], "no/such.trace");
    assert_bad_input(&["sweep"], "--link");
    assert_bad_input(
        &[
            "run",
            "--scheme",
            "adaptive-um:quantile=2",
            "--link",
            "3g-up",
        ],
        "quantile",
    );
    assert_bad_input(&["run", "--scheme", "um:k0=x", "--link", "3g-up"], "k0");
    assert_bad_input(
        &[
            "run",
            "--scheme",
            "tfrc",
            "--link",
            "handover:3g-up+cable-up@0s",
        ],
        "increase",
    );
    let o = wisp(&["reproduce", "mehrotra", "--quick", "--trace", "x.rx"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--trace does not apply to mehrotra"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn sweep_prints_the_zones_and_writes_its_files() {
    let args = [
        "sweep",
        "--link",
        "wimax-down",
        "--rates",
        "1mbps,4900,5100,6mbps",
    ];
    let o = wisp(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    // The zones are the profile's calibration (wimax-down is tuned to be free at 4.9 and
    // congested at 5.1 Mbit/s): this checks that the command reports them, not a claim.
    assert!(
        table.contains("congestion-free up to 4900 kbit/s; congested from 5100 kbit/s"),
        "{table}"
    );
    assert!(table.contains("delay threshold δ_T"), "{table}");
    // JSON: one object; the points in rate order.
    let mut j = args.to_vec();
    j.push("--json");
    let o = wisp(&j);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(text(&o.stdout).lines().count(), 1);
    let points = v["sweep"]["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    assert_eq!(points[1]["zone"], "congestion-free");
    assert_eq!(points[2]["zone"], "congested");
    assert_eq!(v["seed"], 1);
    // Files, deterministically.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in [&a, &b] {
        let mut f = args.to_vec();
        f.extend(["--out", d.path().to_str().unwrap()]);
        assert!(wisp(&f).status.success());
    }
    let fa = files(a.path());
    let names: Vec<String> = fa.iter().map(|f| f.0.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "report.html",
            "sweep.csv",
            "sweep.json",
            "sweep.svg",
            "zones.svg",
            "zones_pdf.csv"
        ]
    );
    assert_eq!(fa, files(b.path()));
    let csv = text(&fa.iter().find(|f| f.0 == Path::new("sweep.csv")).unwrap().1);
    assert_eq!(csv.lines().count(), 5);
}

#[test]
fn the_new_schemes_run_on_the_profiles() {
    let o = wisp(&["schemes"]);
    let list = text(&o.stdout);
    for s in [
        "newreno-like",
        "vegas-like",
        "ctcp-like",
        "tfrc",
        "um",
        "adaptive-um",
    ] {
        assert!(list.lines().any(|l| l.starts_with(s)), "{s} missing");
    }
    for (scheme, link) in [
        ("adaptive-um", "3g-up"),
        ("um", "wimax-down:loss=0"),
        ("tfrc", "handover:cable-up+3g-up@10s"),
    ] {
        let o = wisp(&[
            "run",
            "--scheme",
            scheme,
            "--link",
            link,
            "--duration-s",
            "20",
            "--json",
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let f = &v["flows"][0];
        assert!(
            f["throughput_kbps"].as_f64().unwrap() > 40.0,
            "{scheme} on {link}: {f}"
        );
        assert_eq!(v["scheme"], scheme);
    }
}

/// The claims met by `wisp reproduce mehrotra --quick --seed 2`, by claim text (each as the
/// paper's own tables show it, issue 35). Not met today: adaptive-um's loss at most a fifth of
/// ctcp-like's (3g-up) and um's (both networks), and each flow's 40–60 % share in Fig. 22.
const MEHROTRA_QUICK_MET: [&str; 14] = [
    "3g-up: adaptive-um's throughput at least newreno-like's",
    "3g-up: adaptive-um's throughput at least 0.95× vegas-like's",
    "3g-up: adaptive-um's throughput at least tfrc's",
    "wimax-down: adaptive-um's throughput at least newreno-like's",
    "wimax-down: adaptive-um's throughput at least vegas-like's",
    "wimax-down: adaptive-um's throughput at least tfrc's",
    "wimax-down: adaptive-um's throughput at least 1.4× ctcp-like's (paper: 1.5×)",
    "3g-up, Fig. 23: above δ_T a larger fixed δ̂ does not cost throughput",
    "wimax-down, Fig. 23: above δ_T a larger fixed δ̂ does not cost throughput",
    "fairness: Jain's index during the overlap",
    "fairness: the queueing delay stays within 30 % of its single-flow value",
    "handover 3g-up → wimax-down: δ̂ moves to the new network's level within 30 s",
    "handover: utilisation recovers to the paper's WiMAX steady state",
    "wimax-down: adaptive-um's loss below ctcp-like's",
];

#[test]
fn quick_mehrotra_writes_figures_and_data_deterministically() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for d in [&a, &b] {
        let o = wisp(&[
            "reproduce",
            "mehrotra",
            "--quick",
            "--seed",
            "2",
            "--out",
            d.path().to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let stdout = text(&o.stdout);
        assert!(stdout.contains("Jain"), "{stdout}");
        let lines: Vec<&str> = stdout.lines().collect();
        let (count, claims) = lines.split_last().expect("output on stdout");
        assert!(!claims.is_empty(), "{stdout}");
        assert!(
            claims
                .iter()
                .all(|l| l.starts_with("ok ") || l.starts_with("NO ")),
            "{stdout}"
        );
        assert!(
            count.contains("claims met (calibration checks apart: 2 of 2 met)"),
            "{stdout}"
        );
    }
    let fa = files(a.path());
    let names: Vec<String> = fa.iter().map(|f| f.0.display().to_string()).collect();
    for want in [
        "report.html",
        "summary.json",
        "tables.csv",
        "delta_hat_sweep.csv",
        "sensitivity.csv",
        "timeseries.csv",
        "sweep-3g-up.csv",
        "figures/controllers-3g-up.svg",
        "figures/controllers-wimax-down.svg",
        "figures/fig22-fairness.svg",
        "figures/fig23-delta-hat.svg",
        "figures/handover.svg",
        "figures/sweep-wimax-down.svg",
        "figures/fig19-zones-cable-up.svg",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    let summary: serde_json::Value = serde_json::from_slice(
        &fa.iter()
            .find(|f| f.0 == Path::new("summary.json"))
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(summary["result"]["seed"], 2);
    assert_eq!(summary["result"]["table"].as_array().unwrap().len(), 12);
    assert_eq!(summary["checks"].as_array().unwrap().len(), 18);
    // Exactly the claims met at --quick with seed 2 (this pins what wisp meets today).
    assert_claims_met(
        &summary["checks"],
        |c| c["claim"].as_str().unwrap().to_string(),
        &MEHROTRA_QUICK_MET,
    );
    // The sweep zones the profiles were tuned to are calibration, reported apart and not
    // counted among the claims.
    let calibration = summary["calibration"].as_array().unwrap();
    assert_eq!(calibration.len(), 2);
    assert!(
        calibration
            .iter()
            .all(|c| c["claim"].as_str().unwrap().starts_with("sweep of") && c["met"] == true),
        "{calibration:?}"
    );
    let html = text(
        &fa.iter()
            .find(|f| f.0 == Path::new("report.html"))
            .unwrap()
            .1,
    );
    assert!(html.contains("Calibration of the profiles"));
    assert!(html.contains(&format!("{} of 18 claims met", MEHROTRA_QUICK_MET.len())));
    assert_eq!(fa, files(b.path()));
}
