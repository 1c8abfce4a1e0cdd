//! `wisp reproduce`: files written, determinism, and bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

fn wisp() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_wisp"));
    c.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    c.env_remove("WISP_SEED");
    c
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wisp-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn quick_gcc_wifi_writes_figures_and_data_deterministically() {
    let (a, b) = (scratch("a"), scratch("b"));
    for dir in [&a, &b] {
        let out = wisp()
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
    let html = String::from_utf8(
        fa.iter()
            .find(|f| f.0 == Path::new("report.html"))
            .unwrap()
            .1
            .clone(),
    )
    .unwrap();
    assert!(html.matches("<svg").count() >= 9, "figures are inlined");
    // Same seed, same bytes.
    assert_eq!(fa, files(&b));
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

#[test]
fn a_missing_trace_is_bad_input_and_writes_nothing() {
    let dir = scratch("missing");
    let out = wisp()
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
    let out = wisp().args(["reproduce", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
}
