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
    // A host name with an IPv4 address is a target (the system's resolver; as --server of the
    // other tools): the next bad option is what is named.
    assert_bad_pingpair(
        &["pingpair", "--target", "localhost", "--count", "0"],
        "--count",
    );
    assert_bad_pingpair(&["pingpair", "--target", "::1"], "--target: `::1`");
    assert_bad_pingpair(
        &[
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--pingpair-target",
            "localhost",
            "--pingpair-mac-mbps",
            "0",
        ],
        "--pingpair-mac-mbps",
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
    // The normal ping's own class: no pair could ever be valid (it ran, every pair invalid).
    assert_bad_pingpair(
        &[
            "pingpair",
            "--target",
            "127.0.0.1",
            "--count",
            "1",
            "--tos-high",
            "0",
        ],
        "--tos-high",
    );
    // Negative numbers name their option.
    assert_bad_pingpair(
        &["pingpair", "--target", "127.0.0.1", "--count", "-1"],
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
    // `wisp recv --pingpair-target` too (it said where it listened first: two lines).
    for args in [
        &["pingpair", "--target", "127.0.0.1", "--count", "1"][..],
        &[
            "recv",
            "--listen",
            "127.0.0.1:0",
            "--pingpair-target",
            "127.0.0.1",
        ],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let o = wisp_as_nobody(dir.path(), args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("ping_group_range") && err.contains("cap_net_raw"),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
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

/// On an idle link with WMM queues, no pair is valid (nothing to overtake): the verdict's reason
/// follows the WMM check rather than blaming a missing WMM (it said "without WMM the replies
/// keep their order" after "prioritisation enabled").
#[test]
fn no_valid_pair_is_explained_by_what_the_wmm_check_found() {
    let t = "no_valid_pair_is_explained_by_what_the_wmm_check_found";
    if !privileged(t) {
        return;
    }
    let o = wisp_command()
        .args([
            "link",
            "--downlink",
            "const:10mbps",
            "--uplink",
            "const:10mbps",
            "--wmm",
        ])
        .args(["--", "sh", "-c"])
        .arg(format!(
            "{} pingpair --target $WISP_LINK_PEER --count 2 --interval-ms 50",
            bin()
        ))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = |p: &str| {
        out.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no `{p}` line:\n{out}"))
            .to_string()
    };
    let (wmm, verdict) = (line("WMM check:"), line("congestion:"));
    if verdict.contains("unknown") {
        assert_eq!(
            verdict.contains("without WMM"),
            !wmm.contains("enabled"),
            "{wmm}\n{verdict}"
        );
    }
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

/// The emulated Wi-Fi medium of the acceptance runs: 802.11g at 6 Mbit/s (about 5 Mbit/s of
/// 1500-byte packets: the flood below overfills it with little CPU), the AP's WMM queues on or
/// off (legacy DCF: one queue).
fn wifi_spec(wmm: bool) -> String {
    format!(
        "wifi:std=11g,rate=6mbps,wmm={}",
        if wmm { "on" } else { "off" }
    )
}

/// The propagation delay of the runs through the medium (after it, on the wired side; the
/// emulator's log counts it in each departure's delay).
const WIRE_MS: f64 = 5.0;

/// One run: `wisp link` with the emulated `wifi:` medium ([`wifi_spec`]) as the downlink (the
/// uplink crosses the same medium) whose command waits 2 s and runs `wisp pingpair` (12 pairs,
/// about 2.7 s) at the host side, the wired side behind the AP; from the host's namespace, a
/// 6 Mbit/s best-effort UDP flood to the client's namespace for 5 s fills the AP's best-effort
/// queue (it grows by about 1 Mbit/s: some 200 ms more per second). The command outlives the
/// flood by a second. Returns pingpair's JSON and the downlink log.
fn run_through_link(wmm: bool, dual: bool) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().to_str().unwrap().to_string();
    let spec = wifi_spec(wmm);
    let wire = WIRE_MS.to_string();
    let args = vec![
        "link",
        "--downlink",
        &spec,
        "--delay-ms",
        &wire,
        "--log",
        &log,
    ];
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
        .spawn_guarded();
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

/// The queueing delay (ms) the emulator logged for each normal-priority echo reply (an 84-byte
/// IP packet: 56 bytes of payload) that waited behind the flood, in departure order: from the
/// reply's arrival at the AP to the end of the frame that carried it (the log's delay less the
/// wire after the medium). The high-priority and intermediate replies wait at most a frame's
/// airtime and an access (a few ms at 6 Mbit/s), and are left out by the 10-ms floor.
fn queued_normal_replies(log: &str) -> Vec<f64> {
    departures(log)
        .into_iter()
        .map(|(_, bytes, delay)| (bytes, delay - WIRE_MS))
        .filter(|&(bytes, q)| bytes == 84 && q > 10.0)
        .map(|(_, q)| q)
        .collect()
}

/// Acceptance (the real tool): through `wisp link` with the emulated `wifi:` downlink
/// in WMM mode and a best-effort flood queued at the AP, every pair is valid, each T_q is
/// within 10 % (or 2 ms) of the queueing delay the emulator logged for that pair's
/// normal-priority reply, and the WMM check passes; with WMM off (`wmm=off`: legacy DCF, one
/// queue), the check fails and no pair is valid.
#[test]
fn ping_pair_through_wifi_wmm_matches_the_emulators_queue() {
    let t = "ping_pair_through_wifi_wmm_matches_the_emulators_queue";
    if !privileged(t) {
        return;
    }
    let _real_time = real_time_shared();

    let (v, log) = run_through_link(true, false);
    assert_eq!(v["socket"], "raw", "{v}");
    assert_eq!(v["wmm"]["enabled"], true, "{v}");
    assert!(v["wmm"]["reversals"].as_u64().unwrap() >= 3, "{v}");
    let mut pairs: Vec<&Value> = v["pairs"].as_array().unwrap().iter().collect();
    pairs.sort_by_key(|p| p["index"].as_u64());
    assert_eq!(pairs.len(), 12, "{v}");
    assert!(pairs.iter().all(|p| p["valid"] == true), "{v}");
    // The WMM check's triplets come first (their small best-effort replies: five, or one more
    // when a reply near the flood's start waited just over the floor), then the 12 pairs': the
    // last 12 logged are the pairs'.
    let queued = queued_normal_replies(&log);
    assert!(
        (12 + 5..=12 + 10).contains(&queued.len()),
        "{queued:?}\n{v}"
    );
    let queued = &queued[queued.len() - 12..];
    let mut worst: f64 = 0.0;
    let mut worst_ms: f64 = 0.0;
    for (p, logged) in pairs.iter().zip(queued) {
        let t_q = p["t_q_ms"].as_f64().unwrap();
        let err = (t_q - logged).abs();
        worst = worst.max(err / logged);
        worst_ms = worst_ms.max(err);
        assert!(
            err <= (0.1 * logged).max(2.0),
            "pair {}: T_q {t_q} ms, the log {logged} ms",
            p["index"]
        );
    }
    eprintln!(
        "{t}: {} pairs, logged queueing {:.1}..{:.1} ms, worst error {:.2} ms ({:.2} %), WMM \
         reversals {}",
        pairs.len(),
        queued[0],
        queued[queued.len() - 1],
        worst_ms,
        100.0 * worst,
        v["wmm"]["reversals"]
    );
    assert_eq!(v["congestion"], "persistent", "{v}");
    assert_eq!(v["malformed"], 0, "{v}");

    let (off, _) = run_through_link(false, false);
    eprintln!(
        "{t}: wmm=off: WMM reversals {}, valid pairs {}",
        off["wmm"]["reversals"], off["valid_pairs"]
    );
    assert_eq!(off["wmm"]["enabled"], false, "{off}");
    assert_eq!(off["valid_pairs"], 0, "{off}");
    assert_eq!(off["congestion"], Value::Null, "{off}");

    // Dual Ping-Pair (§5.6): each kept dual T_q is the mean of its two pairs', which the log
    // gives as the mean queueing delay of the round's two queued normal-priority replies. The
    // medium has no frame errors, but the four requests of a round contend one by one with the
    // AP's flood for the uplink, and each high-priority reply may wait for a best-effort frame
    // in the air (2 ms at 6 Mbit/s), so a round's two pairs often differ by more than the
    // filter's 5 ms: 10, 5 and 8 of the 12 rounds were kept in three runs. The test asks for some
    // kept rounds, every discard for that reason, and every kept round right.
    let (d, log) = run_through_link(true, true);
    assert_eq!(d["dual"], true, "{d}");
    let mut pairs: Vec<&Value> = d["pairs"].as_array().unwrap().iter().collect();
    pairs.sort_by_key(|p| p["index"].as_u64());
    assert_eq!(pairs.len(), 12, "{d}");
    let kept = pairs.iter().filter(|p| p["valid"] == true).count();
    eprintln!("{t}: dual: {kept} of 12 rounds kept");
    assert!(kept >= 1, "{d}");
    assert!(
        pairs
            .iter()
            .all(|p| p["valid"] == true || p["invalid"] == "the dual pairs disagree"),
        "{d}"
    );
    let queued = queued_normal_replies(&log);
    assert_eq!(queued.len(), 5 + 2 * 12, "{queued:?}\n{d}");
    for (p, two) in pairs.iter().zip(queued[5..].chunks(2)) {
        let Some(t_q) = p["t_q_ms"].as_f64() else {
            continue;
        };
        let logged = (two[0] + two[1]) / 2.0;
        assert!(
            (t_q - logged).abs() <= (0.1 * logged).max(2.0),
            "dual pair {}: T_q {t_q} ms, the log {logged} ms",
            p["index"]
        );
    }
}

/// The medium of the Kwikr call: [`wifi_spec`]'s (WMM on) with one station sending a 3 Mbit/s
/// constant bit rate uplink, simulated inside the medium (its frames take about half the
/// airtime: the call has some 2 Mbit/s, below the encoder's 2.5 Mbit/s ceiling, so it must
/// adapt). Overridable with `WISP_KWIKR_CALL_SPEC` (a `wifi:` spec) to measure other settings.
fn call_spec() -> String {
    std::env::var("WISP_KWIKR_CALL_SPEC")
        .unwrap_or_else(|_| format!("{},stations=1,load=udp:3mbps", wifi_spec(true)))
}

/// The `rate=` of a `wifi:` spec in Mbit/s: the MAC rate R Ping-Pair's T_a takes.
fn phy_mbps(spec: &str) -> String {
    spec.split([':', ','])
        .find_map(|kv| kv.strip_prefix("rate="))
        .map(|r| r.trim_end_matches("mbps").to_string())
        .expect("the call's wifi spec names its rate")
}

/// The call's length (the issue's 60 s; `WISP_KWIKR_CALL_S` overrides it).
fn call_secs() -> String {
    std::env::var("WISP_KWIKR_CALL_S").unwrap_or_else(|_| "60".into())
}

/// Acceptance (`wisp recv --scheme kwikr`): a 60-s Kwikr call through `wisp link`
/// with the emulated `wifi:` medium in WMM mode ([`call_spec`]) with Ping-Pair every 500 ms
/// against the host side runs without error, every probe's reply is ours, the receiver counts
/// its own packets between the replies, and the call's rate is within 20 % of `wisp run` over
/// the same `wifi:` spec (the simulator runs the same medium, and its `kwikr` station pings the
/// AP every 500 ms too). R is the medium's PHY rate.
#[test]
fn kwikr_call_with_ping_pair_matches_the_simulator() {
    let t = "kwikr_call_with_ping_pair_matches_the_simulator";
    if !privileged(t) {
        return;
    }
    let _real_time = real_time_shared();
    let port = free_port().to_string();
    let (spec, secs) = (call_spec(), call_secs());
    let script = format!(
        "{} recv --scheme kwikr --listen 0.0.0.0:{port} --pingpair-target $WISP_LINK_PEER \
         --pingpair-mac-mbps {} --duration-s {secs} --json",
        bin(),
        phy_mbps(&spec)
    );
    let mut link = Command::new(bin())
        .args([
            "link",
            "--downlink",
            &spec,
            "--delay-ms",
            "20",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded();
    let (ns, drain) = namespace_address(&mut link);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let sent = wisp(&[
        "send",
        "--scheme",
        "kwikr",
        "--to",
        &format!("{ns}:{port}"),
        "--duration-s",
        &secs,
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
    let n: f64 = secs.parse().unwrap();
    assert!(pp["pairs"].as_f64().unwrap() >= 1.6 * n, "{pp}");
    assert!(pp["valid"].as_u64().unwrap() >= 1, "{pp}");
    assert!(pp["n_a_p50"].as_f64().is_some(), "{pp}");
    assert_eq!(pp["wmm_enabled"], true, "{pp}");
    assert_eq!(pp["malformed"], 0, "{pp}");
    let real = &v["flows"][0];
    let sim = json(
        &wisp(&[
            "run",
            "--scheme",
            "kwikr",
            "--link",
            &spec,
            "--delay-ms",
            "20",
            "--duration-s",
            &secs,
            "--json",
        ])
        .stdout,
    )["flows"][0]
        .clone();
    let (r, s) = (
        real["throughput_kbps"].as_f64().unwrap(),
        sim["throughput_kbps"].as_f64().unwrap(),
    );
    eprintln!(
        "{t}: {spec}, {secs} s: real {r:.0} kbit/s (delay p50 {} / p95 {} ms, loss {}), \
         simulated {s:.0} kbit/s (p50 {} / p95 {} ms, loss {}), {:+.1} %; ping-pair {pp}",
        real["delay_p50_ms"],
        real["delay_p95_ms"],
        real["loss_rate"],
        sim["delay_p50_ms"],
        sim["delay_p95_ms"],
        sim["loss_rate"],
        100.0 * (r / s - 1.0)
    );
    assert!((r - s).abs() <= 0.2 * s, "real {r} kbit/s vs simulated {s}");
}
