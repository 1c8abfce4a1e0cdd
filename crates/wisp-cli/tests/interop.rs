//! Interop with a real WebRTC stack: pion (github.com/pion/rtp, pion/rtcp, pion/interceptor),
//! through the Go program in `interop/pion/`, over `wisp link`.
//!
//! * pion's sender with pion's GCC (send-side, transport-wide feedback) → `wisp link` →
//!   `wisp recv --twcc`, which answers with transport-wide feedback: pion's target follows the
//!   link (on 2 Mbit/s and after a step down to 0.6 Mbit/s).
//! * `wisp send --scheme gcc-remb` → a pion relay that parses every datagram of both directions
//!   with pion's parsers → `wisp recv`: zero parse errors, every packet type counted.
//! * `wisp send --scheme gcc` (libwebrtc's goog_cc) and `gcc-twcc` (the 2016 send-side form) →
//!   `wisp link` → pion's receiver, whose own transport-wide feedback generator (`pkg/twcc`)
//!   answers: wisp's target follows the link.
//!
//! * Without root: pion's sender and `wisp recv --twcc` on loopback (the loop runs), and the
//!   mode's bad-input errors; `wisp send --scheme gcc-twcc` to `wisp recv` (which runs the
//!   scheme's receiver half) and to `wisp recv --twcc` (standard feedback only) on loopback.
//!
//! The link tests need root (namespaces, TUN); all pion tests need Go (`go build` fetches the pinned modules through the
//! module proxy). Outside CI they skip with a message when either is missing; in CI
//! (`CI=true`) they fail. Traffic goes only to the namespace the link creates and to loopback.

mod common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The pion program, built once per test run with `go build`; `None` (skip) when Go is missing
/// outside CI.
fn pion(test: &str) -> Option<PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let have_go = Command::new("go")
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !have_go {
            return Err("`go` is not installed".into());
        }
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pion-interop");
        let o = Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(root().join("interop/pion"))
            .output()
            .expect("run go build");
        assert!(
            o.status.success(),
            "go build failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        Ok(out)
    });
    match built {
        Ok(p) => Some(p.clone()),
        Err(why) => {
            assert!(!in_ci(), "{test}: {why} (CI installs it)");
            eprintln!("skipping {test}: {why}");
            None
        }
    }
}

fn spawn(cmd: &mut Command) -> Guarded {
    cmd.current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded()
}

/// Runs `wisp link ARGS -- sh -c SCRIPT`.
fn link(args: &[&str], script: &str) -> Output {
    Command::new(bin())
        .arg("link")
        .args(args)
        .args(["--", "sh", "-c", script])
        .current_dir(root())
        .output()
        .unwrap()
}

fn assert_ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
}

/// One pion GCC sender in the namespace sending for `secs` over the uplink `uplink` to
/// `wisp recv --twcc` on the host. Returns pion's samples `(seconds since the link started,
/// target bit/s)`, pion's summary and wisp recv's summary.
fn pion_to_wisp(pion: &Path, uplink: &str, secs: u32) -> (Vec<(f64, f64)>, Value, Value) {
    let port = free_port();
    let recv = spawn(Command::new(bin()).args([
        "recv",
        "--listen",
        &format!("0.0.0.0:{port}"),
        "--twcc",
        // Ends 1 s after pion's last packet (pion lingers 2 s for the link's queue to drain);
        // the duration only bounds the test if pion never starts.
        "--duration-s",
        &(secs + 10).to_string(),
        "--idle-timeout-s",
        "1",
        "--json",
    ]));
    std::thread::sleep(std::time::Duration::from_millis(300));
    // pion starts at 1.5 Mbit/s (its default is 10 kbit/s, and its increase of 8%/s without
    // probing would take a minute to reach the link's rate).
    let script = format!(
        "{} send -to $WISP_LINK_PEER:{port} -duration {secs}s -initial-kbps 1500 -epoch-ns $WISP_LINK_EPOCH_NS",
        pion.display()
    );
    let o = link(&["--uplink", uplink, "--downlink", "const:10mbps"], &script);
    assert_ok(&o, "wisp link + pion send");
    let got = recv.wait_with_output().unwrap();
    assert_ok(&got, "wisp recv --twcc");
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| json(l.as_bytes()))
        .collect();
    let samples = lines
        .iter()
        .filter(|v| v["type"] == "sample")
        .map(|v| {
            (
                v["link_t_s"].as_f64().unwrap(),
                v["target_bps"].as_f64().unwrap(),
            )
        })
        .collect();
    let summary = lines
        .iter()
        .find(|v| v["type"] == "summary")
        .expect("pion's summary line")
        .clone();
    (samples, summary, json(&got.stdout))
}

/// What both pion runs must show about the feedback loop itself.
fn feedback_flowed(pion: &Value, wisp: &Value, secs: f64) {
    assert_eq!(pion["parse_errors"], 0, "{pion}");
    assert_eq!(wisp["malformed_packets"], 0, "{wisp}");
    assert_eq!(wisp["foreign_packets"], 0, "{wisp}");
    // The infinite queue drops nothing: every packet pion sent arrived, and feedback said so.
    assert_eq!(
        wisp["packets_received"], pion["packets_sent"],
        "{wisp}\n{pion}"
    );
    assert_eq!(wisp["packets_lost"], 0, "{wisp}");
    // One feedback packet per 50 ms, and pion read them as transport-wide feedback.
    let fb = wisp["feedback_packets"].as_f64().unwrap();
    assert!(
        fb >= secs / 0.05 * 0.9 && fb <= secs / 0.05 * 1.1 + 2.0,
        "{wisp}"
    );
    let seen = pion["feedback_packets"].as_f64().unwrap();
    assert!(seen >= fb * 0.95 && seen <= fb, "{pion}\n{wisp}");
}

fn mbps(v: &[(f64, f64)]) -> String {
    v.iter()
        .map(|(t, r)| format!("{t:.1}:{:.2}", r / 1e6))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn pions_gcc_follows_a_2_mbps_link_on_wisps_transport_wide_feedback() {
    let t = "pions_gcc_follows_a_2_mbps_link_on_wisps_transport_wide_feedback";
    if !privileged(t) {
        return;
    }
    let Some(pion) = pion(t) else { return };
    let _real_time = real_time_shared();
    let secs = 20;
    let (samples, summary, wisp) = pion_to_wisp(&pion, "const:2mbps", secs);
    feedback_flowed(&summary, &wisp, f64::from(secs));
    // Settled: from 5 s on (pion starts at 1.5 Mbit/s and increases by ~8%/s).
    let mut settled: Vec<f64> = samples
        .iter()
        .filter(|s| s.0 >= 5.0)
        .map(|s| s.1 / 1e6)
        .collect();
    assert!(settled.len() >= 140, "{}", mbps(&samples));
    settled.sort_by(f64::total_cmp);
    let (lo, med, hi) = (
        settled[0],
        settled[settled.len() / 2],
        settled[settled.len() - 1],
    );
    eprintln!(
        "pion's target on const:2mbps from 5 s: median {med:.3} Mbit/s, range {lo:.3}–{hi:.3}"
    );
    assert!(
        lo >= 1.4 && hi <= 2.4,
        "target left 1.4–2.4 Mbit/s: {}",
        mbps(&samples)
    );
}

#[test]
fn pions_gcc_drops_within_2_s_of_a_step_to_0_6_mbps() {
    let t = "pions_gcc_drops_within_2_s_of_a_step_to_0_6_mbps";
    if !privileged(t) {
        return;
    }
    let Some(pion) = pion(t) else { return };
    let _real_time = real_time_shared();
    let (secs, step) = (14, 10.0);
    let (samples, summary, wisp) = pion_to_wisp(&pion, "steps:2mbps@0,0.6mbps@10s", secs);
    feedback_flowed(&summary, &wisp, f64::from(secs));
    // Before the step it followed 2 Mbit/s.
    let before: Vec<f64> = samples
        .iter()
        .filter(|s| (5.0..step).contains(&s.0))
        .map(|s| s.1)
        .collect();
    assert!(!before.is_empty());
    assert!(
        before.iter().all(|&r| r >= 1.4e6),
        "before the step: {}",
        mbps(&samples)
    );
    // The bound 0.9 Mbit/s is 1.5 × the new capacity: pion's rate controller never targets more
    // than 1.5 × the rate it sees delivered, so a target below it means the estimator acted on
    // the new capacity; one multiplicative decrease from ~2 Mbit/s (× 0.85) gives ~1.7 and does
    // not pass it.
    let drop = samples
        .iter()
        .find(|s| s.0 >= step && s.1 < 0.9e6)
        .unwrap_or_else(|| panic!("never below 0.9 Mbit/s: {}", mbps(&samples)));
    eprintln!(
        "pion's target below 0.9 Mbit/s {:.2} s after the step to 0.6 Mbit/s ({:.3} Mbit/s); after: {}",
        drop.0 - step,
        drop.1 / 1e6,
        mbps(&samples[samples.len().saturating_sub(40)..])
    );
    assert!(drop.0 - step <= 2.0, "{}", mbps(&samples));
    // And it stays there (the link stays at 0.6 Mbit/s).
    assert!(
        samples
            .iter()
            .filter(|s| s.0 >= drop.0)
            .all(|s| s.1 < 0.9e6),
        "{}",
        mbps(&samples)
    );
}

#[test]
fn pion_parses_every_packet_of_a_wisp_gcc_session() {
    let t = "pion_parses_every_packet_of_a_wisp_gcc_session";
    if !privileged(t) {
        return;
    }
    let Some(pion) = pion(t) else { return };
    let _real_time = real_time_shared();
    // wisp send (in the namespace) → uplink → pion relay on the host → wisp recv on loopback;
    // wisp recv's RTCP (RR, REMB, …) → relay → downlink → wisp send. The relay parses every
    // datagram of both directions with pion's parsers before passing it on unchanged.
    let (relay_port, recv_port) = (free_port(), free_port());
    let relay = spawn(Command::new(&pion).args([
        "recv",
        "-listen",
        &format!("0.0.0.0:{relay_port}"),
        "-forward",
        &format!("127.0.0.1:{recv_port}"),
        "-duration",
        "30s",
        "-idle",
        "2s",
    ]));
    let recv = spawn(Command::new(bin()).args([
        "recv",
        "--listen",
        &format!("127.0.0.1:{recv_port}"),
        "--idle-timeout-s",
        "5",
        "--json",
    ]));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let script = format!(
        "{} send --scheme gcc-remb --to $WISP_LINK_PEER:{relay_port} --duration-s 8 --rtcp-interval-ms 500 --json",
        bin()
    );
    let o = link(
        &["--uplink", "const:3mbps", "--downlink", "const:10mbps"],
        &script,
    );
    assert_ok(&o, "wisp link + wisp send");
    let sent = json(&o.stdout);
    let got = recv.wait_with_output().unwrap();
    assert_ok(&got, "wisp recv");
    let tap = relay.wait_with_output().unwrap();
    assert_ok(&tap, "pion recv (relay)");
    let tap = json(&tap.stdout);
    let got = json(&got.stdout);
    eprintln!("pion's view of the session: {tap}");
    assert_eq!(tap["parse_errors"], 0, "{tap}");
    assert_eq!(tap["forward_errors"], 0, "{tap}");
    let (fwd, back) = (&tap["from_sender"], &tap["from_receiver"]);
    // Every data packet wisp sent reached pion and parsed, with both standard extensions.
    let sent_packets = &sent["flows"][0]["packets_sent"];
    assert!(sent_packets.as_u64().unwrap() > 500, "{sent}");
    assert_eq!(&fwd["rtp_packets"], sent_packets, "{tap}\n{sent}");
    assert_eq!(&fwd["abs_send_time_extensions"], sent_packets, "{tap}");
    assert_eq!(&fwd["transport_cc_extensions"], sent_packets, "{tap}");
    let delivered = got["flows"][0]["packets_delivered"].as_u64().unwrap();
    assert!(
        delivered as f64 >= sent_packets.as_f64().unwrap() * 0.99,
        "{got}"
    );
    assert_eq!(got["flows"][0]["malformed_packets"], 0, "{got}");
    // Each RTCP packet type each side sends, parsed by pion into its own type (none left as
    // an unrecognised raw packet).
    let count = |d: &Value, k: &str| d["rtcp_packets"][k].as_u64().unwrap_or(0);
    for k in ["SR", "SDES", "APP", "BYE"] {
        assert!(count(fwd, k) > 0, "no {k} from wisp send: {tap}");
    }
    for k in ["RR", "SDES", "REMB"] {
        assert!(count(back, k) > 0, "no {k} from wisp recv: {tap}");
    }
    assert_eq!(
        count(fwd, "unrecognised") + count(back, "unrecognised"),
        0,
        "{tap}"
    );
    assert_eq!(
        fwd["rtp_packets"].as_u64().unwrap() + fwd["rtcp_datagrams"].as_u64().unwrap(),
        fwd["datagrams"].as_u64().unwrap()
    );
    assert_eq!(back["rtp_packets"], 0, "{tap}");
    // The REMB pion read is a plausible estimate for a 3 Mbit/s link.
    let remb = back["last_remb_bps"].as_f64().unwrap();
    assert!(remb > 100e3 && remb < 10e6, "{tap}");
}

/// `(seconds since the start, target kbit/s)` from `wisp send`'s progress lines
/// (`wisp send:    6.0 s  send … kbit/s  target 1915.7 kbit/s  …`).
fn wisp_targets(stderr: &[u8]) -> Vec<(f64, f64)> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("wisp send:")?;
            let t = rest.split_whitespace().next()?.parse().ok()?;
            let target = rest.split("target").nth(1)?.split_whitespace().next()?;
            Some((t, target.parse().ok()?))
        })
        .collect()
}

#[test]
fn wisp_gcc_twcc_follows_a_2_mbps_link_on_pions_transport_wide_feedback() {
    // wisp starts at 1.5 Mbit/s (as pion's sender in the tests above: without probing, the
    // 2016 form's increase of 5–8 %/s from the 300-kbit/s default would take ~40 s to reach the
    // link).
    follows_a_2_mbps_link_on_pions_feedback(
        "wisp_gcc_twcc_follows_a_2_mbps_link_on_pions_transport_wide_feedback",
        "gcc-twcc:start-kbps=1500",
    );
}

/// `gcc`, libwebrtc's goog_cc, from its own 300-kbit/s start: its probes find the link.
#[test]
fn wisp_gcc_follows_a_2_mbps_link_on_pions_transport_wide_feedback() {
    follows_a_2_mbps_link_on_pions_feedback(
        "wisp_gcc_follows_a_2_mbps_link_on_pions_transport_wide_feedback",
        "gcc",
    );
}

/// `wisp send --scheme SCHEME` through a 2 Mbit/s `wisp link` to pion's receiver, which answers
/// with its own transport-wide feedback: pion parses everything, wisp reads every feedback,
/// and wisp's target settles within 1.4–2.4 Mbit/s from 8 s on.
fn follows_a_2_mbps_link_on_pions_feedback(t: &str, scheme: &str) {
    if !privileged(t) {
        return;
    }
    let Some(pion) = pion(t) else { return };
    let _real_time = real_time_shared();
    let secs = 25;
    // pion's receiver on the host: parses every datagram and answers the RTP with pion's
    // transport-wide feedback (every 50 ms) to where it came from.
    let port = free_port();
    let recv = spawn(Command::new(&pion).args([
        "recv",
        "-listen",
        &format!("0.0.0.0:{port}"),
        "-twcc",
        "-duration",
        &format!("{}s", secs + 10),
        "-idle",
        "2s",
    ]));
    std::thread::sleep(std::time::Duration::from_millis(300));
    // The link lingers a second after wisp send ends, as pion's sender does, so that what is
    // still queued (the last packets, the BYE) reaches pion before the link is torn down.
    let script = format!(
        "{} send --scheme {scheme} --to $WISP_LINK_PEER:{port} --duration-s {secs} --json; rc=$?; sleep 1; exit $rc",
        bin()
    );
    let o = link(
        &["--uplink", "const:2mbps", "--downlink", "const:10mbps"],
        &script,
    );
    assert_ok(&o, "wisp link + wisp send");
    let sent = json(&o.stdout);
    let got = recv.wait_with_output().unwrap();
    assert_ok(&got, "pion recv -twcc");
    let tap = json(&got.stdout);
    let flow = &sent["flows"][0];
    eprintln!(
        "pion's receiver: {tap}
wisp send: {sent}"
    );
    // The feedback loop: pion parsed everything wisp sent and answered every 50 ms; wisp's
    // sender read every feedback packet as transport-wide feedback.
    assert_eq!(tap["parse_errors"], 0, "{tap}");
    assert_eq!(tap["twcc_write_errors"], 0, "{tap}");
    assert_eq!(
        tap["from_sender"]["transport_cc_extensions"], flow["packets_sent"],
        "{tap}\n{sent}"
    );
    let written = tap["twcc_feedback_packets"].as_f64().unwrap();
    let read = flow["feedback_messages"].as_f64().unwrap();
    let secs = f64::from(secs);
    assert!(
        written >= secs / 0.05 * 0.9 && written <= secs / 0.05 * 1.1 + 10.0,
        "{tap}"
    );
    assert!(read >= written * 0.95 && read <= written, "{tap}\n{sent}");
    assert_eq!(flow["malformed_packets"], 0, "{sent}");
    assert_eq!(flow["foreign_packets"], 0, "{sent}");
    // wisp's target settles on the link: from 8 s on within 1.4–2.4 Mbit/s.
    let samples = wisp_targets(&o.stderr);
    let mut settled: Vec<f64> = samples
        .iter()
        .filter(|s| s.0 >= 8.0)
        .map(|s| s.1 / 1e3)
        .collect();
    let fmt = || {
        samples
            .iter()
            .map(|(t, r)| format!("{t:.0}:{:.2}", r / 1e3))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(settled.len() >= 15, "{}", fmt());
    settled.sort_by(f64::total_cmp);
    let (lo, med, hi) = (
        settled[0],
        settled[settled.len() / 2],
        settled[settled.len() - 1],
    );
    eprintln!(
        "wisp {scheme}'s target on const:2mbps (pion's feedback) from 8 s: median {med:.3} Mbit/s, range {lo:.3}–{hi:.3}; {}",
        fmt()
    );
    assert!(
        lo >= 1.4 && hi <= 2.4,
        "target left 1.4–2.4 Mbit/s: {}",
        fmt()
    );
}

#[test]
fn wisp_gcc_twcc_reads_its_own_receivers_and_standard_feedback_over_loopback() {
    // No root, no Go: the loop runs against both receivers, and the feedback moves the target.
    let _real_time = real_time_shared();
    for standard_only in [false, true] {
        let port = free_port();
        let addr = format!("127.0.0.1:{port}");
        let mut args = vec!["recv", "--listen", &addr, "--idle-timeout-s", "1", "--json"];
        if standard_only {
            args.push("--twcc");
        }
        let recv = spawn(Command::new(bin()).args(&args));
        std::thread::sleep(std::time::Duration::from_millis(300));
        let o = Command::new(bin())
            .args(["send", "--scheme", "gcc-twcc", "--to", &addr])
            .args(["--duration-s", "4", "--json"])
            .output()
            .unwrap();
        assert_ok(&o, "wisp send --scheme gcc-twcc");
        let got = recv.wait_with_output().unwrap();
        assert_ok(&got, "wisp recv");
        let sent = json(&o.stdout);
        let flow = &sent["flows"][0];
        // Transport-wide feedback every 50 ms, each read by the sender half.
        let fb = flow["feedback_messages"].as_f64().unwrap();
        assert!((72.0..=82.0).contains(&fb), "{sent}");
        assert_eq!(flow["malformed_packets"], 0, "{sent}");
        // Without feedback the target would stay at the 300-kbit/s start.
        let targets = wisp_targets(&o.stderr);
        let last = targets.last().expect("progress lines").1;
        assert!(last > 310.0, "standard only: {standard_only}: {targets:?}");
    }
}

#[test]
fn pion_and_wisp_recv_twcc_over_loopback() {
    // Without root: the feedback loop on loopback (no link, so no rate figure to check).
    let t = "pion_and_wisp_recv_twcc_over_loopback";
    let Some(pion) = pion(t) else { return };
    let _real_time = real_time_shared();
    let port = free_port();
    let recv = spawn(Command::new(bin()).args([
        "recv",
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--twcc",
        "--duration-s",
        "13",
        "--idle-timeout-s",
        "1",
        "--json",
    ]));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = Command::new(&pion)
        .args([
            "send",
            "-to",
            &format!("127.0.0.1:{port}"),
            "-duration",
            "3s",
        ])
        .output()
        .unwrap();
    assert_ok(&o, "pion send");
    let got = recv.wait_with_output().unwrap();
    assert_ok(&got, "wisp recv --twcc");
    let summary = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| json(l.as_bytes()))
        .find(|v| v["type"] == "summary")
        .expect("pion's summary");
    feedback_flowed(&summary, &json(&got.stdout), 3.0);
}

#[test]
fn twcc_mode_refuses_a_scheme_and_a_bad_extension_id() {
    for args in [
        &["--twcc", "--scheme", "gcc-remb"][..],
        &["--twcc=15"][..],
        &["--twcc=0"][..],
    ] {
        let o = wisp_command()
            .args(["recv", "--listen", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--twcc"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
