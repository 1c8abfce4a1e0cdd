//! `wisp pingpair` end to end: bad input, the permission message, and Ping-Pair through
//! `wisp link`'s WMM queues against the emulator's own log of the downlink queue.

mod common;
use common::*;

use serde_json::Value;
use std::process::{Command, Stdio};

/// Exit code 2, one line on stderr naming `needle`, nothing on stdout.
fn assert_bad_pingpair(args: &[&str], needle: &str) {
    let o = wisp(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: `{err}` lacks `{needle}`");
    assert!(o.stdout.is_empty(), "{args:?}");
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    assert_bad_pingpair(
        &["pingpair", "--target", "gateway.local"],
        "--target: `gateway.local` is not an IPv4 address",
    );
    assert_bad_pingpair(
        &["pingpair", "--target", "127.0.0.1", "--tos-high", "0x1b8"],
        "--tos-high",
    );
    assert_bad_pingpair(
        &["pingpair", "--target", "127.0.0.1", "--interval-ms", "0"],
        "--interval-ms",
    );
    assert_bad_pingpair(
        &["pingpair", "--target", "127.0.0.1", "--count", "0"],
        "--count",
    );
}

/// Without CAP_NET_RAW and outside `ping_group_range`, one line says how to grant either, and
/// the exit code is 2. (Runs as `nobody` through setpriv; nothing is sent.)
#[test]
fn without_permission_it_says_how_to_grant_it() {
    let t = "without_permission_it_says_how_to_grant_it";
    if !privileged(t) {
        return;
    }
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range").unwrap();
    let mut r = range.split_whitespace().map(|v| v.parse::<u64>().unwrap());
    let (lo, hi) = (r.next().unwrap(), r.next().unwrap());
    if (lo..=hi).contains(&65534) {
        eprintln!("skipping {t}: this namespace lets nobody open ping sockets ({range})");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("wisp");
    std::fs::copy(bin(), &exe).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&exe)
        .args(["pingpair", "--target", "127.0.0.1", "--count", "1"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("ping_group_range") && err.contains("cap_net_raw"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

/// The unprivileged path: a ping socket in a namespace whose `ping_group_range` admits the
/// caller, probing loopback (no WMM there: every pair is in order, the check fails).
#[test]
fn ping_sockets_are_used_where_the_kernel_allows_them() {
    let t = "ping_sockets_are_used_where_the_kernel_allows_them";
    if !privileged(t) {
        return;
    }
    let o = Command::new("unshare")
        .args(["-n", "sh", "-c"])
        .arg(format!(
            "ip link set lo up && sysctl -qw net.ipv4.ping_group_range='0 2147483647' && \
             {} pingpair --target 127.0.0.1 --count 3 --interval-ms 20 --json",
            bin()
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o.stdout);
    assert_eq!(v["socket"], "ping", "{v}");
    assert_eq!(v["pairs"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(v["wmm"]["enabled"], false, "{v}");
    assert_eq!(v["malformed"], 0, "{v}");
}

/// Departures of the downlink log: (ms, bytes, queueing + service delay in ms).
fn departures(log: &str) -> Vec<(f64, u64, f64)> {
    log.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4 && f[1] == "-")
                .then(|| Some((f[0].parse().ok()?, f[2].parse().ok()?, f[3].parse().ok()?)))
                .flatten()
        })
        .collect()
}

/// One run: `wisp link` with a 5 Mbit/s downlink (WMM or not) whose command waits 2 s and runs
/// `wisp pingpair` (12 pairs, about 2.7 s) at the host side; from the host, a 6 Mbit/s
/// best-effort UDP flood to the namespace for 5 s fills the downlink queue (it grows by
/// 1 Mbit/s: 200 ms more per second). The command outlives the flood by a second.
/// Returns pingpair's JSON and the downlink log.
fn run_through_link(wmm: bool, dual: bool) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().to_str().unwrap().to_string();
    let mut args = vec![
        "link",
        "--downlink",
        "const:5mbps",
        "--uplink",
        "const:5mbps",
        "--delay-ms",
        "5",
        "--log",
        &log,
    ];
    if wmm {
        args.push("--wmm");
    }
    let script = format!(
        "sleep 2; {} pingpair --target $WISP_LINK_PEER --count 12 --json {}; r=$?; sleep 1.5; \
         exit $r",
        bin(),
        if dual { "--dual" } else { "" }
    );
    let mut link = Command::new(bin())
        .args(&args)
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (ns, drain) = namespace_address(&mut link);
    // The flood: port 9 (discard) in the namespace, best effort, for the whole measurement.
    let flood = wisp(&[
        "send",
        "--scheme",
        "cbr:rate-kbps=6000",
        "--to",
        &format!("{ns}:9"),
        "--duration-s",
        "5",
    ]);
    assert!(
        flood.status.success(),
        "{}",
        String::from_utf8_lossy(&flood.stderr)
    );
    let out = link.wait_with_output().unwrap();
    let err = drain.join().unwrap();
    assert!(out.status.success(), "{err}");
    let v = json(&out.stdout);
    let log = std::fs::read_to_string(dir.path().join("downlink.log")).unwrap();
    (v, log)
}

/// Acceptance (issue 18, the real tool): through `wisp link --wmm` with best-effort flood
/// traffic queued on the downlink, every pair is valid, each T_q is within 10 % (or 2 ms) of the
/// queueing delay the emulator logged for that pair's normal-priority reply, and the WMM check
/// passes; with WMM off, the check fails and no pair is valid.
#[test]
fn ping_pair_through_wmm_matches_the_emulators_queue() {
    let t = "ping_pair_through_wmm_matches_the_emulators_queue";
    if !privileged(t) {
        return;
    }
    let _real_time = real_time();

    let (v, log) = run_through_link(true, false);
    assert_eq!(v["socket"], "raw", "{v}");
    assert_eq!(v["wmm"]["enabled"], true, "{v}");
    assert!(v["wmm"]["reversals"].as_u64().unwrap() >= 3, "{v}");
    let mut pairs: Vec<&Value> = v["pairs"].as_array().unwrap().iter().collect();
    pairs.sort_by_key(|p| p["index"].as_u64());
    assert_eq!(pairs.len(), 12, "{v}");
    assert!(pairs.iter().all(|p| p["valid"] == true), "{v}");
    // The normal-priority replies (84-byte IP packets: 56 bytes of payload) that waited behind
    // the flood, in departure order: the five triplets' small best-effort replies, then the
    // pairs'. The high-priority and intermediate ones wait at most a packet's service time.
    let queued: Vec<f64> = departures(&log)
        .into_iter()
        .filter(|&(_, bytes, delay)| bytes == 84 && delay > 10.0)
        .map(|(_, _, d)| d)
        .collect();
    assert_eq!(queued.len(), 5 + 12, "{queued:?}\n{v}");
    let mut worst: f64 = 0.0;
    for (p, logged) in pairs.iter().zip(&queued[5..]) {
        let t_q = p["t_q_ms"].as_f64().unwrap();
        let err = (t_q - logged).abs();
        worst = worst.max(err / logged);
        assert!(
            err <= (0.1 * logged).max(2.0),
            "pair {}: T_q {t_q} ms, the log {logged} ms",
            p["index"]
        );
    }
    eprintln!(
        "{t}: {} pairs, T_q {:.1}..{:.1} ms, worst relative error {:.2} %",
        pairs.len(),
        queued[5],
        queued[queued.len() - 1],
        100.0 * worst
    );
    assert_eq!(v["congestion"], "persistent", "{v}");
    assert_eq!(v["malformed"], 0, "{v}");

    let (off, _) = run_through_link(false, false);
    assert_eq!(off["wmm"]["enabled"], false, "{off}");
    assert_eq!(off["valid_pairs"], 0, "{off}");
    assert_eq!(off["congestion"], Value::Null, "{off}");

    // Dual Ping-Pair (§5.6): no retransmissions on the emulated link, so every round's two
    // pairs agree; each dual T_q is the mean of its two pairs', which the log gives as the
    // mean delay of the round's two queued normal-priority replies.
    let (d, log) = run_through_link(true, true);
    assert_eq!(d["dual"], true, "{d}");
    let mut pairs: Vec<&Value> = d["pairs"].as_array().unwrap().iter().collect();
    pairs.sort_by_key(|p| p["index"].as_u64());
    assert!(pairs.iter().all(|p| p["valid"] == true), "{d}");
    let queued: Vec<f64> = departures(&log)
        .into_iter()
        .filter(|&(_, bytes, delay)| bytes == 84 && delay > 10.0)
        .map(|(_, _, d)| d)
        .collect();
    assert_eq!(queued.len(), 5 + 2 * 12, "{queued:?}\n{d}");
    for (p, two) in pairs.iter().zip(queued[5..].chunks(2)) {
        let t_q = p["t_q_ms"].as_f64().unwrap();
        let logged = (two[0] + two[1]) / 2.0;
        assert!(
            (t_q - logged).abs() <= (0.1 * logged).max(2.0),
            "dual pair {}: T_q {t_q} ms, the log {logged} ms",
            p["index"]
        );
    }
}

/// Acceptance (issue 18, `wisp recv --scheme kwikr`): a 30-s Kwikr call through `wisp link
/// --wmm` on a constant 2 Mbit/s downlink with Ping-Pair every 500 ms against the host side
/// runs without error, every probe's reply is ours, the receiver counts its own packets between
/// the replies, and the call's rate is within 20 % of `wisp run` on the same setting. (The
/// issue's call is 60 s; 30 s keeps the test bounded.) The emulated link's rate stands for the
/// Wi-Fi MAC rate R: the queue is the call's own, so T_a explains it and T_c stays small (with
/// R = 54 Mbit/s the call's own queue reads as cross traffic and Kwikr runs the link full).
#[test]
fn kwikr_call_with_ping_pair_matches_the_simulator() {
    let t = "kwikr_call_with_ping_pair_matches_the_simulator";
    if !privileged(t) {
        return;
    }
    let _real_time = real_time();
    let port = free_port().to_string();
    let script = format!(
        "{} recv --scheme kwikr --listen 0.0.0.0:{port} --pingpair-target $WISP_LINK_PEER \
         --pingpair-mac-mbps 2 --duration-s 30 --json",
        bin()
    );
    let mut link = Command::new(bin())
        .args([
            "link",
            "--downlink",
            "const:2mbps",
            "--uplink",
            "const:2mbps",
            "--delay-ms",
            "20",
            "--wmm",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (ns, drain) = namespace_address(&mut link);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let sent = wisp(&[
        "send",
        "--scheme",
        "kwikr",
        "--to",
        &format!("{ns}:{port}"),
        "--duration-s",
        "30",
    ]);
    assert!(
        sent.status.success(),
        "{}",
        String::from_utf8_lossy(&sent.stderr)
    );
    let out = link.wait_with_output().unwrap();
    let err = drain.join().unwrap();
    assert!(out.status.success(), "{err}");
    let v = json(&out.stdout);
    let pp = &v["pingpair"];
    assert!(pp["pairs"].as_u64().unwrap() >= 50, "{pp}");
    assert!(pp["valid"].as_u64().unwrap() >= 1, "{pp}");
    assert!(pp["n_a_p50"].as_f64().is_some(), "{pp}");
    assert_eq!(pp["wmm_enabled"], true, "{pp}");
    assert_eq!(pp["malformed"], 0, "{pp}");
    let real = v["flows"][0]["throughput_kbps"].as_f64().unwrap();
    let sim = json(
        &wisp(&[
            "run",
            "--scheme",
            "kwikr",
            "--link",
            "const:2mbps",
            "--delay-ms",
            "20",
            "--duration-s",
            "30",
            "--json",
        ])
        .stdout,
    )["flows"][0]["throughput_kbps"]
        .as_f64()
        .unwrap();
    eprintln!("{t}: real {real:.0} kbit/s, simulated {sim:.0} kbit/s; ping-pair {pp}");
    assert!(
        (real - sim).abs() <= 0.2 * sim,
        "real {real} kbit/s vs simulated {sim}"
    );
}
