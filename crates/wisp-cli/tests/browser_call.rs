//! `wisp browser-call` end to end: a 20-s call between two headless Chromiums through a
//! const:2mbps link, 20 ms each way.
//!
//! It needs root (the link's namespace) and Chromium; without them it skips with a message,
//! except in CI (`CI=true`), where it fails: CI runs as root and installs `chromium`. Traffic
//! goes only over loopback and the addresses of the namespace the command creates.

mod common;
use common::*;

#[test]
fn bad_input_is_refused_before_anything_runs() {
    assert_bad_input(
        &[
            "browser-call",
            "--link",
            "const:2mbps",
            "--clip",
            "/nonexistent/clip.y4m",
        ],
        "--clip",
    );
    assert_bad_input(
        &["browser-call", "--link", "const:2mbps", "--duration-s", "0"],
        "--duration-s",
    );
    let dir = tempfile::tempdir().unwrap();
    let not_y4m = dir.path().join("clip.y4m");
    std::fs::write(&not_y4m, "not a clip\n").unwrap();
    let clip = not_y4m.to_str().unwrap();
    assert_bad_input(
        &["browser-call", "--link", "const:2mbps", "--clip", clip],
        "not a Y4M file",
    );
}

#[test]
fn a_call_through_a_2_mbit_link_connects_and_its_media_crosses_the_link() {
    const TEST: &str = "a_call_through_a_2_mbit_link";
    if !privileged(TEST) || !have(TEST, "chromium") {
        return;
    }
    let _lock = real_time();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = wisp_command()
        .env("TMPDIR", tmp.path())
        .args(["browser-call", "--link", "const:2mbps", "--delay-ms", "20"])
        .args(["--duration-s", "20", "--json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_ok(&o);
    let s = json(&o.stdout);
    let b = &s["browser"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or_else(|| panic!("not a number: {s}"));
    // The call connected and video was decoded at the receiver.
    assert!(f(&b["frames_decoded"]) > 100.0, "{s}");
    assert!(f(&b["bytes_received"]) > 500e3, "{s}");
    // The media crossed the link: the downlink log carried at least what the receiver got, and
    // over the call the link ran at a rate a video call gives.
    assert!(
        f(&s["downlink_carried_bytes"]) >= f(&b["bytes_received"]),
        "{s}"
    );
    let thr = f(&s["downlink"]["throughput_kbps"]);
    assert!(
        (300.0..=2050.0).contains(&thr),
        "link throughput {thr}: {s}"
    );
    // The estimate is reported, and sane for a 2 Mbit/s link.
    assert!(f(&b["estimate_at_0_2s_kbps"]) > 0.0, "{s}");
    let est = f(&b["estimate_median_10s_kbps"]);
    assert!((1000.0..=3000.0).contains(&est), "estimate {est}: {s}");
    assert!(f(&b["time_to_80pct_s"]) < 20.0, "{s}");
    // The files, and nothing left in the temporary folder.
    let csv = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    assert!(csv.lines().filter(|l| l.starts_with("sender,")).count() > 80);
    assert!(csv.lines().filter(|l| l.starts_with("receiver,")).count() > 80);
    for name in ["summary.json", "uplink.log", "downlink.log"] {
        assert!(out.join(name).is_file(), "{name}");
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("wisp-browser-call-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
