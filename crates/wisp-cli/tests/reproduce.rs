//! `wisp reproduce`: files written, determinism, and bad input.

mod common;
use common::*;

use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wisp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn quick_gcc_wifi_writes_figures_and_data_deterministically() {
    let (a, b) = (scratch("a"), scratch("b"));
    for dir in [&a, &b] {
        let out = wisp_command()
            .args(["reproduce", "gcc-wifi", "--quick", "--seed", "3", "--out"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout.contains("raises the average sending rate"),
            "{stdout}"
        );
    }
    let fa = files(&a);
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
    assert!(!summary["checks"].as_array().unwrap().is_empty());
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
    assert_eq!(fa, files(&b));
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
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

#[test]
fn quick_sprout_writes_tables_figures_and_claims_deterministically() {
    let (a, b) = (scratch("sprout-a"), scratch("sprout-b"));
    let mut stdout = String::new();
    for dir in [&a, &b] {
        let out = wisp_command()
            .args(["reproduce", "sprout", "--quick", "--seed", "5", "--out"])
            .arg(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout = String::from_utf8(out.stdout).unwrap();
    }
    let fa = files(&a);
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

    // The claims that hold with a wide margin on the quick subset.
    let met = |id: &str, scope: &str| {
        checks
            .iter()
            .filter(|c| c["id"] == id && c["scope"].as_str().unwrap().starts_with(scope))
            .all(|c| c["met"] == true)
    };
    for (id, scope) in [
        ("lte-downlink", "Verizon-LTE-short.down"),
        ("sprout-low-delay", "Verizon-LTE-short"),
        ("ewma-more", ""),
        ("cubic-seconds", ""),
        ("loss-falls", ""),
        ("loss-resilient", ""),
    ] {
        assert!(met(id, scope), "{id} on {scope}: {stdout}");
    }

    let html = String::from_utf8(file(&fa, "report.html").to_vec()).unwrap();
    assert!(html.matches("<svg").count() >= 4, "the charts are inlined");
    assert!(html.contains("The paper's claims, measured"));
    // Same seed, same bytes.
    assert_eq!(fa, files(&b));
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
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
