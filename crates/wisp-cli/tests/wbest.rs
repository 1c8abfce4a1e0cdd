//! `wisp wbest server|client` end to end: bad input, loopback, and through `wisp link` on a
//! 12 Mbit/s constant link, alone and beside a 6 Mbit/s iperf3 UDP flow (WBest).
//!
//! The `wisp link` tests need root (network namespaces, TUN) and iperf3: they skip with a
//! message otherwise, except in CI (`CI=true`), where they fail. Traffic goes only to loopback
//! or to the namespace the link creates; every process is bounded (`--clients 1`, timeouts).

mod common;
use common::*;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn server(port: u16) -> Guarded {
    wisp_server(
        &[
            "wbest",
            "server",
            "--listen",
            &format!("0.0.0.0:{port}"),
            "--clients",
            "1",
        ],
        false,
        None,
    )
}

/// The client's JSON line from a command's stdout.
fn estimate(o: &Output) -> serde_json::Value {
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.contains("capacity_mbps"))
        .unwrap_or_else(|| panic!("no estimate in:\n{out}"));
    json(line.as_bytes())
}

#[test]
fn out_of_range_parameters_are_bad_input() {
    for (args, needle) in [
        (vec!["--pairs", "0"], "--pairs"),
        (vec!["--pairs", "1001"], "--pairs"),
        (vec!["--train", "1"], "--train"),
        (vec!["--size", "10"], "--size"),
        // The IP packet: 49 bytes hold IPv4's and UDP's headers and the probe's, 64 is the
        // least WBest's config takes, 65535 the largest IP packet.
        (vec!["--size", "63"], "--size"),
        (vec!["--size", "65536"], "--size"),
        (vec!["--plus", "--pairs", "20"], "--pairs"),
    ] {
        let mut full = vec!["wbest", "client", "--server", "127.0.0.1:9"];
        full.extend(args);
        let o = wisp(&full);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{full:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        // A message about WBest+'s bursts only when --plus was asked for.
        assert_eq!(err.contains("--plus"), full.contains(&"--plus"), "{err}");
    }
}

#[test]
fn server_bad_input_and_its_listening_line() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    for (args, needle) in [
        (vec!["wbest", "server", "--listen", &taken], "--listen"),
        (vec!["wbest", "server", "--clients", "0"], "--clients"),
        (
            vec!["wbest", "client", "--server", "127.0.0.1:0"],
            "--server",
        ),
    ] {
        let o = wisp(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    // No server there: the message names the flag and the address (was "connect: Connection
    // refused"); exit 1, the network's answer rather than bad input.
    let nobody = format!("127.0.0.1:{}", free_port());
    let o = wisp(&["wbest", "client", "--server", &nobody]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("--server {nobody}")), "{err}");
    // A server on port 0 says which port it got (it was silent).
    let mut s = wisp_server(
        &[
            "wbest",
            "server",
            "--listen",
            "127.0.0.1:0",
            "--clients",
            "1",
        ],
        true,
        None,
    );
    s.kill().unwrap();
    let o = s.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let port: u16 = err
        .split("listening on 127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no listening line: {err}"));
    assert_ne!(port, 0, "{err}");
}

#[test]
fn loopback_estimate_has_the_json_fields() {
    let _rt = real_time();
    let port = free_port();
    let mut s = server(port);
    let o = wisp(&[
        "wbest",
        "client",
        "--server",
        &format!("127.0.0.1:{port}"),
        "--json",
    ]);
    reap(&mut s, Duration::from_secs(5));
    assert_ok(&o);
    let e = estimate(&o);
    assert_eq!(e["bytes_sent"].as_u64(), Some(90 * 1500));
    assert!(e["capacity_mbps"].as_f64().unwrap() > 0.0);
    assert!(e["time_s"].as_f64().unwrap() > 0.29, "{e}"); // 30 pairs 10 ms apart
    // What went into A: every pair and every train packet arrives on loopback; the gaps used
    // and those left out as sender-late are the train's 29.
    assert_eq!(e["pairs_used"].as_u64(), Some(30), "{e}");
    assert_eq!(e["train_lost"].as_u64(), Some(0), "{e}");
    let (used, late) = (
        e["gaps_used"].as_u64().unwrap(),
        e["gaps_sender_late"].as_u64().unwrap(),
    );
    assert_eq!(used + late, 29, "{e}");
    assert!(e["achievable_mbps"].as_f64().unwrap() > 0.0, "{e}");
}

/// `--server` takes HOST:PORT: a name (`localhost`, resolved by the system) or an IPv6
/// address (`[::1]`, where the probes are IPv6 packets: 1452 bytes of UDP payload in 1500).
/// A name that does not resolve is one line naming `--server`, exit code 2.
#[test]
fn server_is_host_port() {
    let _rt = real_time();
    for (listen, server) in [("127.0.0.1", "localhost"), ("[::1]", "[::1]")] {
        let port = free_port();
        let mut s = wisp_server(
            &[
                "wbest",
                "server",
                "--listen",
                &format!("{listen}:{port}"),
                "--clients",
                "1",
            ],
            false,
            None,
        );
        let o = wisp(&[
            "wbest",
            "client",
            "--server",
            &format!("{server}:{port}"),
            "--json",
        ]);
        reap(&mut s, Duration::from_secs(5));
        assert_ok(&o);
        assert_eq!(estimate(&o)["bytes_sent"].as_u64(), Some(90 * 1500));
    }
    let o = wisp(&["wbest", "client", "--server", "no-such-host.invalid:9878"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--server") && err.contains("no-such-host.invalid"),
        "{err}"
    );
}

/// `--size` is the IP packet: 65535 bytes, the largest, fits loopback's 65536-byte MTU (a UDP
/// payload of 65507) and is sent whole.
#[test]
fn loopback_takes_the_largest_ip_packet() {
    let _rt = real_time();
    let port = free_port();
    let mut s = server(port);
    let o = wisp(&[
        "wbest",
        "client",
        "--server",
        &format!("127.0.0.1:{port}"),
        "--size",
        "65535",
        "--pairs",
        "5",
        "--train",
        "5",
        "--json",
    ]);
    reap(&mut s, Duration::from_secs(5));
    assert_ok(&o);
    assert_eq!(estimate(&o)["bytes_sent"].as_u64(), Some(15 * 65535));
}

#[test]
fn loopback_wbest_plus_sends_its_bursts_and_longer_train() {
    let _rt = real_time();
    let port = free_port();
    let mut s = server(port);
    let o = wisp(&[
        "wbest",
        "client",
        "--server",
        &format!("127.0.0.1:{port}"),
        "--plus",
        "--json",
    ]);
    reap(&mut s, Duration::from_secs(5));
    assert_ok(&o);
    let e = estimate(&o);
    // WBest+ (Farshad et al.): 165 pairs and a train of 100, 1500 bytes each.
    assert_eq!(e["bytes_sent"].as_u64(), Some((2 * 165 + 100) * 1500));
    assert!(e["capacity_mbps"].as_f64().unwrap() > 0.0);
    // Five bursts of 33 pairs, 10 ms apart: at least 40 ms before the train.
    assert!(e["time_s"].as_f64().unwrap() > 0.04, "{e}");
}

/// Runs the client inside `wisp link` on const:12mbps both ways.
fn through_link() -> serde_json::Value {
    through(
        &["--downlink", "const:12mbps", "--uplink", "const:12mbps"],
        false,
        "1500",
    )
}

fn through(link: &[&str], crossing: bool, size: &str) -> serde_json::Value {
    let o = run_through(link, crossing, size);
    assert_ok(&o);
    estimate(&o)
}

fn run_through(link: &[&str], crossing: bool, size: &str) -> Output {
    run_beside(link, crossing.then_some(Path::new("/dev/null")), size)
}

/// [`run_through`]; with `iperf_json`, an iperf3 UDP flow of 6 Mbit/s host → namespace (the
/// probes' direction) starts 2 s before the client, and writes its JSON report there.
fn run_beside(link: &[&str], iperf_json: Option<&Path>, size: &str) -> Output {
    let crossing = iperf_json.is_some();
    let port = free_port();
    let iperf_port = free_port();
    let mut iperf = crossing.then(|| {
        Command::new("iperf3")
            .args(["-s", "-1", "-p", &iperf_port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn_guarded()
    });
    let mut s = server(port);
    let client = format!(
        "{} wbest client --server $WISP_LINK_PEER:{port} --size {size} --json",
        bin()
    );
    let script = match iperf_json {
        Some(json) => format!(
            "iperf3 -c $WISP_LINK_PEER -p {iperf_port} -u -b 6M -l 1472 -R -t 5 -i 0.5 --json >{} & sleep 2; {client}; wait",
            json.display()
        ),
        None => client,
    };
    let o = Command::new(bin())
        .arg("link")
        .args(link)
        .args(["--", "timeout", "25", "sh", "-c", &script])
        .current_dir(root())
        .output()
        .unwrap();
    reap(&mut s, Duration::from_secs(5));
    if let Some(i) = iperf.as_mut() {
        reap(i, Duration::from_secs(5));
    }
    o
}

/// WBest's probes are 1500-byte packets on the wire: through `wisp link` (TUN MTU 1500) with
/// the default `--size`, the link's log shows each of the 90 probes as one 1500-byte IP packet
/// (a 1500-byte UDP payload went as a 1500-byte fragment and a 48-byte one), and C_e is the
/// link's 12 Mbit/s of IP. A probe over the MTU fails the run naming `--size` and the MTU.
#[test]
fn probes_are_size_byte_ip_packets_on_the_wire() {
    let t = "probes_are_size_byte_ip_packets_on_the_wire";
    if !privileged(t) {
        return;
    }
    let _rt = real_time();
    let logs = tempfile::tempdir().unwrap();
    let log_dir = logs.path().join("l");
    let log_arg = log_dir.to_str().unwrap().to_string();
    let o = run_through(
        &[
            "--downlink",
            "const:12mbps",
            "--uplink",
            "const:12mbps",
            "--log",
            &log_arg,
        ],
        false,
        "1500",
    );
    assert_ok(&o);
    let e = estimate(&o);
    eprintln!("wbest --size 1500 on const:12mbps: {e}");
    let log = std::fs::read_to_string(log_dir.join("downlink.log")).unwrap();
    let sizes: Vec<u64> = log
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[1] == "+").then(|| f[2].parse().unwrap())
        })
        .collect();
    let full = sizes.iter().filter(|&&b| b == 1500).count();
    let other = sizes.len() - full;
    eprintln!("downlink: {full} packets of 1500 bytes, {other} others ({sizes:?})");
    assert_eq!(full, 90, "{sizes:?}");
    // The rest is the control connection (a handful of TCP segments), not 90 fragments.
    assert!(other < 30, "{other} other packets: {sizes:?}");
    assert_eq!(e["bytes_sent"].as_u64(), Some(90 * 1500));
    let ce = e["capacity_mbps"].as_f64().unwrap();
    assert!((ce - 12.0).abs() / 12.0 < 0.10, "C_e {ce}");

    // 1600 bytes do not fit the link's 1500: refused loudly, no estimate.
    let o = run_through(
        &["--downlink", "const:12mbps", "--uplink", "const:12mbps"],
        false,
        "1600",
    );
    let err = String::from_utf8_lossy(&o.stderr);
    eprintln!("--size 1600: {err}");
    assert!(!o.status.success(), "{err}");
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("capacity_mbps"),
        "{err}"
    );
    let line = err
        .lines()
        .find(|l| l.contains("--size 1600"))
        .unwrap_or_else(|| panic!("no --size line: {err}"));
    assert!(line.contains("MTU of 1500"), "{line}");
}

#[test]
fn on_a_12_mbps_link_ce_and_a_are_12() {
    let t = "on_a_12_mbps_link_ce_and_a_are_12";
    if !privileged(t) {
        return;
    }
    let _rt = real_time();
    let e = through_link();
    let (ce, a) = (
        e["capacity_mbps"].as_f64().unwrap(),
        e["available_mbps"].as_f64().unwrap(),
    );
    eprintln!("wbest on const:12mbps: {e}");
    assert!((ce - 12.0).abs() / 12.0 < 0.10, "C_e {ce}");
    assert!((a - 12.0).abs() / 12.0 < 0.10, "A {a}");
}

#[test]
fn beside_6_mbps_of_iperf3_a_is_6() {
    let t = "beside_6_mbps_of_iperf3_a_is_6";
    if !privileged(t) || !have(t, "iperf3") {
        return;
    }
    let _rt = real_time();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("iperf3.json");
    let link = ["--downlink", "const:12mbps", "--uplink", "const:12mbps"];
    // The claim needs its premise: 6 Mbit/s crossing while WBest probes (from 2 s in, for
    // well under a second). A run where iperf3 delivered less around the probe says nothing
    // about WBest; it is retried, twice at most, and each attempt is printed.
    for attempt in 1..=3 {
        let o = run_beside(&link, Some(&json), "1500");
        assert_ok(&o);
        let e = estimate(&o);
        let a = e["available_mbps"].as_f64().unwrap();
        let crossing = iperf3_received_mbps(&json, 1.0, 4.0);
        eprintln!(
            "attempt {attempt}: wbest on const:12mbps beside iperf3 -u -b 6M: {e}; \
             iperf3 received {crossing:.2?} Mbit/s per 0.5 s over 1-4 s"
        );
        let mean = crossing.iter().sum::<f64>() / crossing.len().max(1) as f64;
        if crossing.len() < 6 || mean < 5.0 {
            eprintln!("attempt {attempt}: the crossing flow was not at 6 Mbit/s ({mean:.2} mean)");
            continue;
        }
        assert!(
            (a - 6.0).abs() / 6.0 < 0.20,
            "A {a}, crossing {crossing:.2?}"
        );
        return;
    }
    panic!("iperf3 did not deliver its 6 Mbit/s across the link in 3 attempts");
}

/// iperf3's received rate in each of its intervals that lies within `from`..`to` s.
fn iperf3_received_mbps(json: &Path, from: f64, to: f64) -> Vec<f64> {
    let text = std::fs::read_to_string(json).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    v["intervals"]
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|i| &i["sum"])
        .filter(|s| s["start"].as_f64() >= Some(from) && s["end"].as_f64() <= Some(to + 0.01))
        .filter_map(|s| s["bits_per_second"].as_f64())
        .map(|b| b / 1e6)
        .collect()
}

/// On the emulated 802.11g medium (idle, 54 Mbit/s): C_e within 15% of the simulated
/// saturation throughput of one station with 1500-byte packets (`wisp wifi bianchi`).
#[test]
fn on_the_wifi_medium_ce_is_the_saturation_throughput() {
    let t = "on_the_wifi_medium_ce_is_the_saturation_throughput";
    if !privileged(t) {
        return;
    }
    let _rt = real_time();
    let b = wisp(&[
        "wifi",
        "bianchi",
        "--std",
        "11g",
        "--rate-mbps",
        "54",
        "--stations",
        "1",
        "--bytes",
        "1500",
        "--duration-s",
        "10",
        "--json",
    ]);
    assert_ok(&b);
    let sat = json(&b.stdout)["simulated_mbps"].as_f64().unwrap();
    // 1500-byte IP packets, as the saturation run's.
    let e = through(
        &[
            "--downlink",
            "wifi:std=11g,rate=54mbps,stations=0,load=none",
        ],
        false,
        "1500",
    );
    let ce_ip = e["capacity_mbps"].as_f64().unwrap();
    eprintln!("wbest on wifi:std=11g (saturation {sat:.2} Mbit/s): {e}");
    assert!(
        (ce_ip - sat).abs() / sat < 0.15,
        "C_e {ce_ip} (IP) vs {sat}"
    );
}

/// Floods `addr` (loopback) with forged WBest announcements and probes (probe header: "WP",
/// phase, index, a guessed session nonce, send time) from one socket until `done` is set or
/// 8 s passed; returns how many datagrams the server sent to it.
fn stranger(
    addr: std::net::SocketAddr,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_nonblocking(true).unwrap();
        let (mut got, mut buf) = (0u64, [0u8; 2048]);
        let start = std::time::Instant::now();
        let mut k = 0u16;
        while !done.load(std::sync::atomic::Ordering::Relaxed)
            && start.elapsed() < Duration::from_secs(8)
        {
            for index in [0xffff, k % 60] {
                let mut p = vec![0u8; 1472];
                p[..2].copy_from_slice(b"WP");
                p[2] = (k % 2) as u8;
                p[3..5].copy_from_slice(&index.to_be_bytes());
                p[5..13].copy_from_slice(&u64::from(k).to_be_bytes());
                let _ = s.send_to(&p, addr);
            }
            k = k.wrapping_add(1);
            while s.recv(&mut buf).is_ok() {
                got += 1;
            }
            std::thread::sleep(Duration::from_micros(300));
        }
        got
    })
}

/// A stranger sending probe headers ("WP", index 0xFFFF) while a client ran got
/// 60 of the server's probes (88 KB) and the client failed ("no packet pair arrived whole");
/// forged probes during `--direction to-server` gave `available_mbps 0.0`, `train_lost 192`.
/// Probes are now bound to the control connection's address and a session nonce.
#[test]
fn a_stranger_neither_receives_probes_nor_spoils_the_estimate() {
    let _rt = real_time();
    for direction in ["from-server", "to-server"] {
        let port = free_port();
        let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut s = wisp_server(
            &[
                "wbest",
                "server",
                "--listen",
                &addr.to_string(),
                "--clients",
                "1",
                "--json",
            ],
            false,
            None,
        );
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flood = stranger(addr, done.clone());
        std::thread::sleep(Duration::from_millis(100));
        let o = wisp(&[
            "wbest",
            "client",
            "--server",
            &addr.to_string(),
            "--direction",
            direction,
            "--json",
        ]);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let sent_to_stranger = flood.join().unwrap();
        reap(&mut s, Duration::from_secs(5));
        assert_ok(&o);
        let e = estimate(&o);
        assert_eq!(
            sent_to_stranger, 0,
            "{direction}: the server probed a stranger"
        );
        assert_eq!(e["train_lost"].as_u64(), Some(0), "{direction}: {e}");
        assert_eq!(e["pairs_used"].as_u64(), Some(30), "{direction}: {e}");
        assert!(
            e["available_mbps"].as_f64().unwrap() > 0.0,
            "{direction}: {e}"
        );
    }
}

/// A client that never announces its UDP port, and a control header that
/// promises 65,535 bytes and sends 10, ended in "udp announce: Resource temporarily
/// unavailable (os error 11)" or "control read: …". The server now says what it awaited,
/// from whom and for how long, and serves the next client.
#[test]
fn server_timeouts_say_what_was_awaited() {
    use std::io::Write;
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let s = wisp_server(
        &["wbest", "server", "--listen", &addr, "--clients", "2"],
        true,
        None,
    );
    let version = wisp_net::wbest_wire::VERSION;
    // A Hello (from-server, 30 pairs, 30 train, 1500 bytes), then no UDP announcement.
    let mut quiet = std::net::TcpStream::connect(&addr).unwrap();
    quiet
        .write_all(&[b'W', b'B', version, 1, 0, 7, 1, 0, 30, 0, 30, 0x05, 0xdc])
        .unwrap();
    // The server serves one client at a time: the second waits for the first's timeout.
    let mut short = std::net::TcpStream::connect(&addr).unwrap();
    let mut bytes = vec![b'W', b'B', version, 1, 0xff, 0xff];
    bytes.extend([0u8; 4]);
    short.write_all(&bytes).unwrap();
    let short_addr = short.local_addr().unwrap();
    let t = std::time::Instant::now();
    let o = s.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(t.elapsed() < Duration::from_secs(30), "{err}");
    assert!(
        err.contains("wisp wbest server: no UDP announcement from 127.0.0.1 within 10 s"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "wisp wbest server: a control message from {short_addr} announced 65535 bytes; 4 came within 10 s"
        )),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
    drop((quiet, short));
}
