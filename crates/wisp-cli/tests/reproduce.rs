//! `wisp reproduce`: files written, determinism, and bad input.

mod common;
use common::*;

use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wisp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `wisp reproduce PAPER --quick --seed SEED` twice, into two fresh directories: both runs
/// succeed and write the same bytes. Returns the files (name, bytes) and the standard output.
fn quick_twice(paper: &str, seed: &str) -> (Vec<(PathBuf, Vec<u8>)>, String) {
    let dirs = [
        scratch(&format!("{paper}-a")),
        scratch(&format!("{paper}-b")),
    ];
    let mut stdout = String::new();
    for dir in &dirs {
        stdout = quick_into(paper, seed, dir);
    }
    let fa = files(&dirs[0]);
    assert_eq!(fa, files(&dirs[1]), "same seed, same bytes");
    for d in &dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    (fa, stdout)
}

/// `wisp reproduce PAPER --quick --seed SEED --out DIR`, which must succeed: its stdout.
fn quick_into(paper: &str, seed: &str, dir: &Path) -> String {
    let out = wisp_command()
        .args(["reproduce", paper, "--quick", "--seed", seed, "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `wisp reproduce PAPER --quick --seed SEED` once: its files and stdout.
fn quick_once(paper: &str, seed: &str) -> (Vec<(PathBuf, Vec<u8>)>, String) {
    let dir = scratch(&format!("{paper}-once"));
    let stdout = quick_into(paper, seed, &dir);
    let fa = files(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    (fa, stdout)
}

#[test]
fn quick_gcc_wifi_writes_figures_and_data_deterministically() {
    let (fa, stdout) = quick_twice("gcc-wifi", "3");
    assert!(
        stdout.contains("raises the average sending rate"),
        "{stdout}"
    );
    let names: Vec<String> = fa.iter().map(|f| f.0.display().to_string()).collect();
    for want in [
        "report.html",
        "summary.json",
        "summary.csv",
        "dm_pdf.csv",
        "timeseries.csv",
        "figures/fig6-8-dm-pdf-trace.svg",
        "figures/fig9-dynamics-trace.svg",
        "figures/fig10-boxplots-trace.svg",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from {names:?}"
        );
    }
    let summary: serde_json::Value = serde_json::from_slice(
        &fa.iter()
            .find(|f| f.0 == Path::new("summary.json"))
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(summary["seed"], 3);
    assert_claims_met(
        &summary["checks"],
        |c| c["claim"].as_str().unwrap().to_string(),
        GCC_WIFI_QUICK_MET,
    );
    // Each form of the pre-filter on each synthetic outage link, against the same link without
    // outages (the quick run has the 3 and 2 Mbit/s pairs).
    let pairs = summary["against_no_outage"].as_array().unwrap();
    assert_eq!(pairs.len(), 4, "{pairs:?}");
    assert!(
        pairs
            .iter()
            .all(|p| p["comparison"]["rate_gain"].is_number())
    );
    let html = String::from_utf8(
        fa.iter()
            .find(|f| f.0 == Path::new("report.html"))
            .unwrap()
            .1
            .clone(),
    )
    .unwrap();
    assert!(html.matches("<svg").count() >= 9, "figures are inlined");
    assert!(html.contains("The pre-filter against the same link without outages"));
    // Same seed, same bytes.
}

#[test]
fn a_missing_trace_is_bad_input_and_writes_nothing() {
    let dir = scratch("missing");
    let out = wisp_command()
        .args([
            "reproduce",
            "gcc-wifi",
            "--quick",
            "--trace",
            "no/such.rx",
            "--out",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("no/such.rx"), "{stderr}");
    assert!(!dir.exists());
}

#[test]
fn an_unknown_paper_is_bad_input() {
    let out = wisp_command().args(["reproduce", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
}

fn file<'a>(files: &'a [(PathBuf, Vec<u8>)], name: &str) -> &'a [u8] {
    &files
        .iter()
        .find(|f| f.0 == Path::new(name))
        .unwrap_or_else(|| panic!("{name} missing"))
        .1
}

/// The Sprout claims met by `wisp reproduce sprout --quick --seed 5`, as `id @ scope`.
const SPROUT_QUICK_MET: [&str; 19] = [
    "sprout-low-delay @ Verizon-LTE-short.down",
    "sprout-low-delay @ Verizon-LTE-short.up",
    "sprout-low-delay @ TMobile-LTE-short.up",
    "ewma-more @ Verizon-LTE-short.down",
    "ewma-more @ Verizon-LTE-short.up",
    "ewma-more @ TMobile-LTE-short.down",
    "ewma-more @ TMobile-LTE-short.up",
    "cubic-seconds @ Verizon-LTE-short.down",
    "cubic-seconds @ Verizon-LTE-short.up",
    "cubic-seconds @ TMobile-LTE-short.down",
    "cubic-seconds @ TMobile-LTE-short.up",
    "codel-between @ Verizon-LTE-short.down",
    "codel-between @ Verizon-LTE-short.up",
    "codel-between @ TMobile-LTE-short.up",
    "lte-downlink @ Verizon-LTE-short.down",
    "loss-falls @ Verizon-LTE-short.down, loss in both directions",
    "loss-falls @ Verizon-LTE-short.up, loss in both directions",
    "loss-resilient @ Verizon-LTE-short.down, loss in both directions",
    "loss-resilient @ Verizon-LTE-short.up, loss in both directions",
];

// ---- gcc-wifi: the expected set of claims met (update here on merge) ----------------------
/// The gcc-wifi claims met by `wisp reproduce gcc-wifi --quick --seed 3`, by claim text. This is
/// the one list to update when GCC or the gcc-wifi claims change (e.g. the paper's > 20 % rate
/// claim judged beside the 15 % threshold): a claim that stops being met fails the test, and one
/// that starts being met must be added here.
const GCC_WIFI_QUICK_MET: &[&str] = &[
    // The delay claims are judged at a matched rate (issue 35): each form's queueing delay
    // (above the run's smallest one-way delay) against plain GCC pinned at the form's mean
    // rate, within max(5 ms, 10 %). Against the old judgement (one-way delay within +10 % of
    // plain GCC at its own rate) this gained outage-3mbps's Algorithm 1 median and lost
    // outage-2mbps's two 75th percentiles (+9.3 / +7.0 ms at seed 1 over the pinned run, which
    // queues less than GCC's own control at the same mean rate).
    "trace, Algorithm 1: at a matched rate, the median queueing delay grows little",
    "trace, Algorithm 1: at a matched rate, the 75th-percentile queueing delay grows little",
    "trace, libwebrtc form: at a matched rate, the median queueing delay grows little",
    "trace, libwebrtc form: at a matched rate, the 75th-percentile queueing delay grows little",
    "outage-3mbps, Algorithm 1: the pre-filter raises the average sending rate",
    "outage-3mbps, Algorithm 1: the side modes of d_m are removed",
    "outage-3mbps, Algorithm 1: at a matched rate, the median queueing delay grows little",
    "outage-3mbps, libwebrtc form: at a matched rate, the median queueing delay grows little",
    "outage-3mbps, libwebrtc form: the side modes of d_m are removed",
    "outage-2mbps, Algorithm 1: the side modes of d_m are removed",
    "trace, libwebrtc form: the pre-filter raises the average sending rate",
    "no-outage-3mbps, Algorithm 1: without outages both variants send the same",
    "no-outage-3mbps, libwebrtc form: without outages both variants send the same",
    "outage-2mbps, Algorithm 1: at a matched rate, the median queueing delay grows little",
    "outage-2mbps, libwebrtc form: at a matched rate, the median queueing delay grows little",
    "no-outage-2mbps, Algorithm 1: without outages both variants send the same",
    "no-outage-2mbps, libwebrtc form: without outages both variants send the same",
    // The EDCA medium. With 10 saturated stations (60 s, seed 3) the pre-filter
    // raises GCC's rate (224 -> 341 kbit/s with Algorithm 1, -> 293 with libwebrtc's form)
    // without growing the median and p75 queueing delay over a rate-matched plain GCC, but does
    // not remove the side modes of d_m.
    // With 4 bulk downloads plain GCC has no side modes and the pre-filter changes nothing: its
    // runs send the same traffic, so the four delay checks there cannot fail and are reported
    // not applicable (issue 35), neither met nor not met.
    // (Before the medium's EDCA slot-boundary rule, merged from h-medium, the rate claims were
    // not met there: -14 % and -22 %. Before the other stations deferred AIFS, not EIFS, after
    // a collision: 234 -> 320 and -> 427 kbit/s, the same claims met.)
    "edca-saturated, Algorithm 1: the pre-filter raises the average sending rate",
    "edca-saturated, libwebrtc form: the pre-filter raises the average sending rate",
    "edca-saturated, Algorithm 1: at a matched rate, the median queueing delay grows little",
    "edca-saturated, Algorithm 1: at a matched rate, the 75th-percentile queueing delay grows little",
    "edca-saturated, libwebrtc form: at a matched rate, the median queueing delay grows little",
    "edca-saturated, libwebrtc form: at a matched rate, the 75th-percentile queueing delay grows little",
];
// ---- end of the gcc-wifi expected set -------------------------------------------------------

#[test]
fn quick_sprout_writes_tables_figures_and_claims_deterministically() {
    let (fa, stdout) = quick_twice("sprout", "5");
    let traces = [
        "Verizon-LTE-short.down",
        "Verizon-LTE-short.up",
        "TMobile-LTE-short.down",
        "TMobile-LTE-short.up",
    ];
    for t in traces {
        file(&fa, &format!("figures/scatter-{t}.svg"));
    }
    let json: serde_json::Value = serde_json::from_slice(file(&fa, "results.json")).unwrap();
    assert_eq!(json["paper"], "sprout");
    assert_eq!(json["seed"], 5);
    assert_eq!(json["quick"], true);
    let runs = json["traces"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|t| t["trace"].as_str().unwrap()).collect();
    assert_eq!(names, traces);
    for t in runs {
        let entries: Vec<&str> = t["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["entry"].as_str().unwrap())
            .collect();
        for e in [
            "ideal",
            "sprout",
            "sprout-ewma",
            "cubic",
            "cubic-codel",
            "compound",
            "vegas",
            "ledbat",
            "newreno",
        ] {
            assert!(entries.contains(&e), "{e} missing on {}", t["trace"]);
        }
        let codel = t["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["entry"] == "cubic-codel")
            .unwrap();
        assert!(
            codel["report"]["queue"]
                .as_str()
                .unwrap()
                .starts_with("codel")
        );
        assert_eq!(codel["report"]["scheme"], "cubic");
    }
    // The §1 summary averages over the paper's networks only: Verizon LTE, both directions.
    let summary = json["summary"].as_array().unwrap();
    assert_eq!(summary.len(), 7);
    assert!(summary.iter().all(|s| s["traces"] == 2));
    // The loss runs: 5 % and 10 % in each direction, on both paths.
    let loss = json["loss"].as_array().unwrap();
    assert_eq!(loss.len(), 4);
    for l in loss {
        assert_eq!(l["report"]["loss"], l["report"]["reverse_loss"]);
        assert_eq!(
            l["report"]["trace"].as_str().unwrap().split('.').next(),
            Some("Verizon-LTE-short")
        );
    }
    assert_eq!(
        String::from_utf8_lossy(file(&fa, "loss.csv"))
            .lines()
            .count(),
        1 + 6
    );
    assert_eq!(
        String::from_utf8_lossy(file(&fa, "results.csv"))
            .lines()
            .count(),
        1 + 4 * 9 + 4
    );
    assert_eq!(
        String::from_utf8_lossy(file(&fa, "summary.csv"))
            .lines()
            .count(),
        1 + 7
    );

    // Every claim on every trace (and each loss direction), with all its fields.
    let checks = json["checks"].as_array().unwrap();
    let count = |id: &str| checks.iter().filter(|c| c["id"] == id).count();
    for id in [
        "sprout-low-delay",
        "ewma-more",
        "ewma-highest-throughput",
        "cubic-seconds",
        "codel-between",
    ] {
        assert_eq!(count(id), 4, "{id}");
    }
    assert_eq!(count("lte-downlink"), 1);
    assert_eq!(count("loss-falls"), 2);
    assert_eq!(count("loss-resilient"), 2);
    for c in checks {
        for k in ["scope", "claim", "expected", "measured"] {
            assert!(!c[k].as_str().unwrap().is_empty(), "{c}");
        }
        assert!(c["met"].is_boolean());
    }
    let printed = stdout
        .lines()
        .filter(|l| l.starts_with("ok ") || l.starts_with("NO "))
        .count();
    assert_eq!(printed, checks.len(), "{stdout}");

    // Exactly the claims met at --quick with seed 5 (the paper's claims; this list pins what
    // wisp meets today). Not met today: Sprout's delay rank and CoDel-between on
    // TMobile-LTE-short.down, and Sprout-EWMA having the highest throughput anywhere.
    assert_claims_met(
        &json["checks"],
        |c| {
            format!(
                "{} @ {}",
                c["id"].as_str().unwrap(),
                c["scope"].as_str().unwrap()
            )
        },
        &SPROUT_QUICK_MET,
    );

    let html = String::from_utf8(file(&fa, "report.html").to_vec()).unwrap();
    assert!(html.matches("<svg").count() >= 4, "the charts are inlined");
    assert!(html.contains("The paper's claims, measured"));
    // Same seed, same bytes.
}

#[test]
fn sprout_without_its_traces_is_bad_input_and_writes_nothing() {
    let dir = scratch("sprout-missing");
    for (extra, named) in [
        (
            ["--traces", "no/such/folder"],
            "no/such/folder/Verizon-LTE-short.down",
        ),
        (["--trace", "x.rx"], "--trace does not apply to sprout"),
    ] {
        let out = wisp_command()
            .args(["reproduce", "sprout", "--quick"])
            .args(extra)
            .arg("--out")
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8(out.stderr).unwrap();
        let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error")).collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(errors[0].contains(named), "{stderr}");
        assert!(!dir.exists());
    }
}

#[test]
fn quick_wbest_writes_its_summary_and_table_deterministically() {
    let (fa, _) = quick_twice("wbest", "2");
    let summary = json(file(&fa, "summary.json"));
    assert_eq!(summary["paper"], "wbest");
    assert_eq!(summary["result"]["cases"].as_array().unwrap().len(), 14);
    // 6 UDP cases, 7 TCP cases, time, bytes, one per baseline (4).
    assert_eq!(summary["checks"].as_array().unwrap().len(), 19);
    // Exactly the claims met at --quick with seed 2 (the acceptance targets; this list pins what
    // wisp meets today). Not met: crossing-TCP cases 3, 7 and 12, with the TCP window at Linux
    // 2.6.11's 128 KB too (WBest's train still gets much of C_e through beside CUBIC on a FIFO
    // AP: docs/wbest.md). Not applicable: the contending-TCP cases 4, 8 and 11
    // (testbed-dependent: what DCF leaves between the pairs).
    assert_claims_met(
        &summary["checks"],
        |c| c["claim"].as_str().unwrap().to_string(),
        &[
            "WBest, UDP case 0: median absolute error",
            "WBest, UDP case 1: median absolute error",
            "WBest, UDP case 2: median absolute error",
            "WBest, UDP case 5: median absolute error",
            "WBest, UDP case 9: median absolute error",
            "WBest, UDP case 13: median absolute error",
            "WBest, TCP case 10 (the paper's ground truth 0): median estimate",
            "WBest: time per estimate (median, worst case)",
            "WBest: bytes per estimate",
            "WBest has a lower median absolute error than igi-ptr",
            "WBest has a lower median absolute error than pathchirp",
            "WBest has a lower median absolute error than pathload",
            "WBest has a lower median absolute error than spruce",
        ],
    );
    let table = String::from_utf8(file(&fa, "table.csv").to_vec()).unwrap();
    assert_eq!(table.lines().count(), 1 + 14 * 5);
    // The page inlines one box plot per case, and the figures are files too.
    let html = String::from_utf8(file(&fa, "report.html").to_vec()).unwrap();
    assert_eq!(html.matches("<svg").count(), 14, "one box plot per case");
    assert!(html.contains("Table II") && html.contains("Table III"));
    assert!(file(&fa, "figures/boxplot-case-13.svg").starts_with(b"<svg"));
}

#[test]
fn quick_kwikr_writes_its_report_and_pins_the_claims_met() {
    let (fa, _) = quick_twice("kwikr", "1");
    let names: Vec<String> = fa.iter().map(|f| f.0.display().to_string()).collect();
    for want in [
        "summary.json",
        "report.html",
        "pairs.csv",
        "figures/fig5.svg",
        "calls.csv",
        "series.csv",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    let summary = json(file(&fa, "summary.json"));
    assert_eq!(summary["paper"], "kwikr");
    assert_eq!(summary["result"]["settings"].as_array().unwrap().len(), 2);
    // Table 1: 3 per setting; Fig. 5: 2; the call experiments (Figs. 8, 9, Table 2): the rest.
    let calls = summary["calls"]["checks"].as_array().unwrap().len();
    assert!(calls > 0);
    assert_eq!(summary["checks"].as_array().unwrap().len(), 8 + calls);
    // Exactly the claims met at --quick with seed 1 (the acceptance targets). Not met: T_q against
    // the AP's delay between the two replies within max(10 %, 2 ms) on 802.11ac 5 GHz (issue
    // 35: §5.2's definition; met on 2.4 GHz); with the call scenarios' AP queue one FIFO
    // (`ap-queue=fifo`, the paper's Fig. 1(d)), Table 2's mixed pairing (kwikr 922, skype-ukf
    // 508 kbit/s: eq. (3) counts the neighbour's frames in the shared FIFO as cross traffic;
    // docs/kwikr.md) and the two comparisons across pairings that follow from it. Not
    // applicable (issue 35: a constant-rate control at 300 and 600 kbit/s shows the full FIFO
    // sets them): Fig. 8's delay and loss. The calls are the paper's 20 per scheme and 10 per
    // pairing at --quick too.
    assert_claims_met(
        &summary["checks"],
        |c| c["claim"].as_str().unwrap().to_string(),
        &[
            "Table 1, 802.11n 2.4 GHz: Ping-Pair classifies persistent AP queues correctly",
            "Table 1, 802.11n 2.4 GHz: Ping-Pair classifies non-persistent AP queues correctly",
            "Table 1, 802.11n 2.4 GHz: T_q against the AP's delay between the two replies (normal less high), median |error|",
            "Table 1, 802.11ac 5 GHz: Ping-Pair classifies persistent AP queues correctly",
            "Table 1, 802.11ac 5 GHz: Ping-Pair classifies non-persistent AP queues correctly",
            "Fig. 5: co-channel interference from a congested neighbouring AP raises the flow's one-way delay",
            "Fig. 5: … and the Ping-Pair estimate (T_q)",
            "Fig. 8: Kwikr's mean rate in the congested minute",
            "Fig. 9: Kwikr's mean rate in the throttled minute",
            "Fig. 9: Kwikr's loss rate in the throttled minute",
            "Table 2, skype-ukf + skype-ukf: the two calls' rates",
            "Table 2, kwikr + kwikr: the two calls' rates",
        ],
    );
    let pairs = String::from_utf8(file(&fa, "pairs.csv").to_vec()).unwrap();
    // Per setting (2 and the sensitivity run) 8 steps × 30 pairs, and the idle step's more for
    // Table 1's non-persistent class (116 + 10 at 2.4 GHz, 110 + 10 at 5 GHz).
    assert_eq!(pairs.lines().count(), 1 + 3 * 210 + 126 + 120 + 126);
}

/// `wisp reproduce rmcat --quick`: deterministic, every case × scheme run, and exactly the
/// claims met listed in `tests/data/rmcat-quick-met.txt` (1035 of 1369 at seed 1 when it was
/// last written; the case × scheme matrix is in docs/rmcat.md).
#[test]
fn quick_rmcat_writes_its_report_and_pins_the_claims_met() {
    // One run (about 30 s on 2 cores); the library's
    // `reproduce::rmcat::tests::quick_runs_are_deterministic` runs one scheme's cases twice.
    let (fa, stdout) = quick_once("rmcat", "1");
    let names: Vec<String> = fa.iter().map(|f| f.0.display().to_string()).collect();
    for want in [
        "summary.json",
        "report.html",
        "table.csv",
        "figures/5.1-gcc.svg",
        "figures/5.7-nada.svg",
        "figures/cell-verizon-cbr.svg",
        "checks.html",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    // 29 cases × 9 schemes (RFC 8867's ten, 6-bottlenecks, RFC 8869's 18 Wi-Fi cases),
    // 6-not-ect × 9, 6-ecn × the two with an ECN mode, 6-priority × the one with a priority
    // (nada): a figure each.
    assert_eq!(
        names.iter().filter(|n| n.starts_with("figures/")).count(),
        273
    );
    assert!(
        names
            .iter()
            .any(|n| n == "figures/wifi-4.2.e-24-scream.svg")
    );
    assert!(names.iter().any(|n| n == "figures/6-bottlenecks-nada.svg"));
    assert!(
        stdout.contains("5.4 ") && stdout.contains("reported"),
        "{stdout}"
    );
    let summary = json(file(&fa, "summary.json"));
    assert_eq!(summary["paper"], "rmcat");
    assert_eq!(summary["result"]["runs"].as_array().unwrap().len(), 273);
    let listed = include_str!("data/rmcat-quick-met.txt");
    let want: Vec<&str> = listed.lines().filter(|l| !l.starts_with('#')).collect();
    assert_claims_met(
        &summary["checks"],
        |c| c["claim"].as_str().unwrap().to_string(),
        &want,
    );
    // The report stays small: figures are linked, not inlined.
    assert!(file(&fa, "report.html").len() < 300_000);
}
