//! `wisp send`, `wisp recv`, `wisp link` and `wisp analyze` end to end, over loopback and
//! through the emulated link.
//!
//! Tests that need root (network namespaces, TUN devices, packet capture) or a tool (ping,
//! iperf3, tshark) skip with a message when those are missing, except in CI (`CI=true`), where
//! they fail: CI runs as root and installs the tools. Traffic goes only to loopback or to the
//! addresses of namespaces the tests create.

mod common;
use common::*;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn spawn_recv(listen: &str, extra: &[&str]) -> Guarded {
    let mut r = Command::new(bin())
        .args(["recv", "--listen", listen, "--json"])
        .args(extra)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded();
    await_listening(&mut r, true);
    r
}

/// Garbage of every kind the receiver and sender must survive.
fn hostile_datagrams() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = vec![
        vec![],
        vec![0x80],
        vec![0x40, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1],
        vec![
            0x90, 96, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xbe, 0xde, 0xff, 0xff,
        ],
        vec![0x80, 200, 0xff, 0xff, 1, 2, 3, 4],
        vec![
            0x80, 204, 0, 3, 1, 2, 3, 4, b'W', b'I', b'S', b'P', 9, 0xff, 0xff, 0,
        ],
        vec![
            0x8f, 206, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, b'R', b'E', b'M', b'B', 0xff, 0xff,
        ],
        vec![0x8b, 205, 0, 0x40, 0, 0, 0, 1],
    ];
    // Pseudo-random bytes (a fixed LCG: reproducible).
    let mut x: u32 = 12345;
    for len in [3usize, 17, 64, 200, 1400] {
        v.push(
            (0..len)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect(),
        );
    }
    // A valid data packet, truncated.
    let mut buf = Vec::new();
    wisp_net::rtp::encode(
        &wisp_core::packet::DataHeader {
            size: wisp_core::DataSize::from_bytes(1500),
            ..Default::default()
        },
        7,
        &mut buf,
    )
    .unwrap();
    v.push(buf[..100].to_vec());
    v
}

#[test]
fn send_recv_over_loopback_and_hostile_input_is_counted() {
    let _real_time = real_time();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let recv = spawn_recv(&listen, &["--idle-timeout-s", "5"]);
    let junk = UdpSocket::bind("127.0.0.1:0").unwrap();
    let garbage = hostile_datagrams();
    for g in &garbage {
        junk.send_to(g, &listen).unwrap();
    }
    let sent = wisp(&[
        "send",
        "--scheme",
        "cbr:rate-kbps=600",
        "--to",
        &listen,
        "--duration-s",
        "1.5",
        "--json",
    ]);
    assert_ok(&sent);
    let got = recv.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // One progress line per second on stderr.
    assert!(
        err.lines().filter(|l| l.contains("kbit/s")).count() >= 1,
        "{err}"
    );
    let s = json(&sent.stdout);
    let r = json(&got.stdout);
    let sf = &s["flows"][0];
    let rf = &r["flows"][0];
    assert_eq!(r["scheme"], "cbr:rate-kbps=600");
    assert_eq!(rf["malformed_packets"], garbage.len());
    assert_eq!(rf["packets_lost"], 0);
    assert_eq!(rf["packets_delivered"], sf["packets_sent"], "{rf}\n{sf}");
    assert_eq!(rf["clock"], "synchronised");
    for key in [
        "throughput_kbps",
        "delay_p50_ms",
        "e2e_delay_p95_ms",
        "loss_rate",
    ] {
        assert!(rf[key].is_number(), "{key} in {rf}");
    }
    assert!(sf["rtt_p50_ms"].is_number(), "{sf}");
}

/// IP and UDP header bytes by address family, from the standards (not from wisp): IPv4's
/// header without options is 20 bytes (RFC 791), IPv6's fixed header 40 (RFC 8200 §3), UDP's 8
/// (RFC 768).
fn ip_udp_header_of(addr: &std::net::SocketAddr) -> u64 {
    if addr.is_ipv4() { 20 + 8 } else { 40 + 8 }
}

/// Runs `wisp send` (cbr) to a plain socket bound on `host` and returns its JSON report with
/// the lengths of the RTP datagrams that arrived and the socket's address.
fn capture_send(host: &str) -> (Value, Vec<u64>, std::net::SocketAddr) {
    let sock = UdpSocket::bind(format!("{host}:0")).unwrap();
    let to = sock.local_addr().unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let child = Command::new(bin())
        .args(["send", "--scheme", "cbr:rate-kbps=600", "--duration-s", "1"])
        .args(["--to", &to.to_string(), "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded();
    let reader = std::thread::spawn(move || {
        let (mut lens, mut buf) = (vec![], vec![0u8; 65536]);
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut quiet = 0;
        // Until the sender has been quiet for a second (its BYE is its last datagram).
        while quiet < 5 && Instant::now() < deadline {
            match sock.recv(&mut buf) {
                Ok(n) => {
                    quiet = 0;
                    // RTCP (RFC 5761 §4: packet types 192-223 in the second byte) is not data.
                    if !(n >= 2 && (192..=223).contains(&buf[1])) {
                        lens.push(n as u64);
                    }
                }
                Err(_) => quiet += 1,
            }
        }
        lens
    });
    let out = child.wait_with_output().unwrap();
    assert_ok(&out);
    (json(&out.stdout), reader.join().unwrap(), to)
}

/// A packet the scheme sizes as N bytes is N bytes of IP on the wire over IPv4 and IPv6: the
/// datagrams' lengths plus the family's IP and UDP headers add up to what the sender counted
/// (its `bytes_sent`, the sum of the scheme's packet sizes), and cbr's full packets are the
/// 1500-byte MTU, not 1520 over IPv6.
#[test]
fn send_sizes_its_datagrams_for_the_address_family() {
    let _real_time = real_time();
    for host in ["127.0.0.1", "[::1]"] {
        let (report, lens, to) = capture_send(host);
        let header = ip_udp_header_of(&to);
        let sf = &report["flows"][0];
        assert!(!lens.is_empty(), "{host}: no data packet arrived");
        assert_eq!(
            lens.len() as u64,
            sf["packets_sent"].as_u64().unwrap(),
            "{host}: {sf}"
        );
        let ip_bytes: u64 = lens.iter().map(|l| l + header).sum();
        assert_eq!(ip_bytes, sf["bytes_sent"].as_u64().unwrap(), "{host}: {sf}");
        let largest = lens.iter().max().unwrap() + header;
        assert_eq!(
            largest, 1500,
            "{host}: largest packet {largest} bytes of IP"
        );
    }
}

/// Over IPv6 `wisp recv` decodes every packet of `wisp send` (none malformed, none lost) and
/// counts the IP bytes the sender counted; packets sized for IPv4's headers over IPv6 (an
/// older sender) are refused with a note saying so.
#[test]
fn send_recv_over_ipv6_loopback_count_the_same_ip_bytes() {
    let _real_time = real_time();
    let port = free_port();
    let listen = format!("[::1]:{port}");
    let recv = spawn_recv(&listen, &["--idle-timeout-s", "5"]);
    // Three packets declared as 1500 bytes but 1472-byte datagrams (IPv4's sizing).
    let junk = UdpSocket::bind("[::1]:0").unwrap();
    let mut buf = Vec::new();
    wisp_net::rtp::encode(
        &wisp_core::packet::DataHeader {
            size: wisp_core::DataSize::from_bytes(1500),
            ..Default::default()
        },
        7,
        &mut buf,
    )
    .unwrap();
    assert_eq!(buf.len(), 1472);
    for _ in 0..3 {
        junk.send_to(&buf, &listen).unwrap();
    }
    let sent = wisp(&[
        "send",
        "--scheme",
        "cbr:rate-kbps=600",
        "--to",
        &listen,
        "--duration-s",
        "1.5",
        "--json",
    ]);
    assert_ok(&sent);
    let got = recv.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{err}");
    let (sf, r) = (&json(&sent.stdout)["flows"][0], json(&got.stdout));
    let rf = &r["flows"][0];
    assert_eq!(rf["malformed_packets"], 3, "{rf}");
    assert!(
        err.contains("sized for IPv4's 28 header bytes over IPv6"),
        "{err}"
    );
    assert_eq!(rf["packets_lost"], 0, "{rf}");
    assert_eq!(rf["packets_delivered"], sf["packets_sent"], "{rf}\n{sf}");
    // Throughput is the delivered IP bytes over the receiver's window: the sender's bytes.
    let window = rf["window_end_s"].as_f64().unwrap() - rf["window_start_s"].as_f64().unwrap();
    let bytes = rf["throughput_kbps"].as_f64().unwrap() * 1e3 / 8.0 * window;
    let sent_bytes = sf["bytes_sent"].as_f64().unwrap();
    assert!(
        (bytes - sent_bytes).abs() <= 0.01 * sent_bytes,
        "received {bytes:.0} B over {window:.3} s, sent {sent_bytes} B: {rf}"
    );
}

/// `alfalfa` fills its packets with pieces of the diff; over IPv6 it leaves room for the 20 more
/// header bytes, so every piece travels (none refused by the encoder, none malformed).
#[test]
fn alfalfa_fills_its_packets_for_ipv6() {
    let _real_time = real_time();
    let port = free_port();
    let listen = format!("[::1]:{port}");
    let recv = spawn_recv(&listen, &["--idle-timeout-s", "5"]);
    let sent = wisp(&[
        "send",
        "--scheme",
        "alfalfa",
        "--to",
        &listen,
        "--duration-s",
        "2",
        "--json",
    ]);
    assert_ok(&sent);
    let got = recv.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{err}");
    let (sf, r) = (&json(&sent.stdout)["flows"][0], json(&got.stdout));
    let rf = &r["flows"][0];
    assert!(sf["packets_sent"].as_u64().unwrap() > 0, "{sf}");
    assert_eq!(rf["malformed_packets"], 0, "{rf}");
    assert_eq!(rf["packets_delivered"], sf["packets_sent"], "{rf}\n{sf}");
}

/// With don't-fragment, a scheme's packet larger than the path MTU is refused by the kernel and
/// `wisp send` stops with one line naming the packet and the MTU (exit code 2), over both
/// families (a namespace whose loopback has a 1280-byte MTU, IPv6's minimum).
#[test]
fn a_packet_over_the_path_mtu_is_a_clear_error() {
    if !privileged("a_packet_over_the_path_mtu_is_a_clear_error") {
        return;
    }
    for to in ["127.0.0.1:9", "[::1]:9"] {
        let out = Command::new("unshare")
            .args(["-n", "sh", "-c"])
            .arg(format!(
                "ip link set lo up mtu 1280 && exec {} send --scheme cbr:rate-kbps=600 \
                 --to {to} --duration-s 1",
                bin()
            ))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{to}: {err}");
        assert!(
            err.contains("1500 bytes") && err.contains("path MTU") && err.contains("1280 bytes"),
            "{to}: {err}"
        );
        assert!(!err.contains("panicked"), "{to}: {err}");
    }
}

#[test]
fn the_sender_survives_hostile_feedback() {
    let _real_time = real_time();
    let fake = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = fake.local_addr().unwrap().to_string();
    fake.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let garbage = hostile_datagrams();
    let replier = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut sent = 0;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok((_, from)) = fake.recv_from(&mut buf) {
                for g in &garbage {
                    let _ = fake.send_to(g, from);
                    sent += 1;
                }
                if sent > 100 {
                    break;
                }
            }
        }
        sent
    });
    let o = wisp(&[
        "send",
        "--scheme",
        "cbr",
        "--to",
        &addr,
        "--duration-s",
        "1",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let s = json(&o.stdout);
    assert!(replier.join().unwrap() > 0);
    // RTP-looking junk is "foreign" (a sender expects only RTCP); the rest is malformed.
    let f = &s["flows"][0];
    let dropped = f["malformed_packets"].as_u64().unwrap() + f["foreign_packets"].as_u64().unwrap();
    assert!(dropped > 0, "{f}");
}

#[test]
fn our_traffic_decodes_as_rtp_and_rtcp_in_tshark() {
    let _real_time = real_time();
    let t = "our_traffic_decodes_as_rtp_and_rtcp_in_tshark";
    if !privileged(t) || !have(t, "tshark") || !have(t, "dumpcap") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("cap.pcapng");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut cap = Command::new("dumpcap")
        .args(["-q", "-i", "lo", "-f", &format!("udp port {port}"), "-w"])
        .arg(&pcap)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_guarded();
    // Wait for the capture to start (the file appears).
    let t0 = Instant::now();
    while !pcap.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let recv = spawn_recv(&listen, &[]);
    std::thread::sleep(Duration::from_millis(200));
    let sent = wisp(&[
        "send",
        "--scheme",
        "cbr:rate-kbps=400",
        "--to",
        &listen,
        "--duration-s",
        "1.2",
    ]);
    assert!(sent.status.success());
    assert!(recv.wait_with_output().unwrap().status.success());
    // The feedback packets cbr does not use: REMB, APP with a Feedback, RFC 8888.
    use wisp_core::wire::{Feedback, Remb};
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut b = Vec::new();
    wisp_net::rtcp::encode_feedback(
        &Feedback::encode(&Remb::new(wisp_core::Bitrate::from_kbps(1500))),
        1,
        2,
        &mut b,
    )
    .unwrap();
    s.send_to(&b, &listen).unwrap();
    b.clear();
    wisp_net::rtcp::encode_feedback(
        &Feedback::encode(&wisp_core::scheme::tcp::ack::TcpAck::new(
            1,
            wisp_core::Instant::from_millis(5),
            wisp_core::Instant::from_millis(25),
            &[wisp_core::scheme::tcp::ack::SeqRange { start: 1, end: 2 }],
        )),
        1,
        2,
        &mut b,
    )
    .unwrap();
    s.send_to(&b, &listen).unwrap();
    b.clear();
    let rt = wisp_core::Instant::from_secs(100);
    wisp_net::rtcp::encode_arrivals(
        1,
        &wisp_net::rtcp::Arrivals {
            media_ssrc: 2,
            begin_seq: 10,
            report_time: rt,
            packets: vec![
                Some(rt - wisp_core::Duration::from_millis(30)),
                None,
                Some(rt),
            ],
        },
        &mut b,
    )
    .unwrap();
    s.send_to(&b, &listen).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(cap.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    cap.wait().unwrap();
    let decode = |filter: &str, fields: &[&str]| -> String {
        let mut c = Command::new("tshark");
        c.arg("-r").arg(&pcap).args([
            "-d",
            &format!("udp.port=={port},rtp"),
            "-Y",
            filter,
            "-T",
            "fields",
        ]);
        for f in fields {
            c.args(["-e", f]);
        }
        let o = c.output().unwrap();
        assert_ok(&o);
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let all = decode("udp", &["frame.number"]);
    assert!(
        all.lines().count() > 30,
        "captured only {} packets",
        all.lines().count()
    );
    let bad = decode(
        "_ws.malformed || _ws.expert.severity >= \"warning\"",
        &["frame.number", "_ws.expert.message"],
    );
    assert!(
        bad.trim().is_empty(),
        "malformed or warnings in the capture:\n{bad}"
    );
    let rtp = decode(
        "rtp && rtp.p_type == 96 && rtp.ext.rfc5285.id == 1",
        &["rtp.seq"],
    );
    assert!(
        rtp.lines().count() > 30,
        "RTP packets: {}",
        rtp.lines().count()
    );
    let pts = decode("rtcp", &["rtcp.pt"]);
    for (pt, what) in [
        ("200", "SR"),
        ("201", "RR"),
        ("202", "SDES"),
        ("203", "BYE"),
        ("204", "APP"),
        ("205", "RTPFB"),
        ("206", "PSFB"),
    ] {
        assert!(pts.contains(pt), "no {what} (PT {pt}) decoded:\n{pts}");
    }
    let fb = decode("rtcp.psfb.fmt == 15 || rtcp.rtpfb.fmt == 11", &["rtcp.pt"]);
    assert_eq!(fb.lines().count(), 2, "REMB and RFC 8888:\n{fb}");
}

/// Runs `wisp link ARGS -- sh -c SCRIPT`; returns the output.
fn link(args: &[&str], script: &str) -> Output {
    Command::new(bin())
        .arg("link")
        .args(args)
        .args(["--", "sh", "-c", script])
        .current_dir(root())
        .output()
        .unwrap()
}

/// Per-packet RTTs from `ping` output.
fn ping_rtts(out: &str) -> Vec<f64> {
    out.lines()
        .filter_map(|l| l.split("time=").nth(1))
        .filter_map(|s| s.split_whitespace().next()?.parse().ok())
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn const_trace(dir: &Path) -> PathBuf {
    // One 1500-byte opportunity per millisecond: 12 Mbit/s, as Mahimahi's constant traces.
    let p = dir.join("12mbps.trace");
    let text: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn ping_through_the_link_takes_the_modelled_time() {
    let t = "ping_through_the_link_takes_the_modelled_time";
    if !privileged(t) || !have(t, "ping") {
        return;
    }
    let _real_time = real_time_shared();
    let dir = tempfile::tempdir().unwrap();
    let trace = const_trace(dir.path());
    let trace = trace.to_str().unwrap();
    // A serialiser at 12 Mbit/s: the 84-byte ping takes 56 µs each way, so RTT ≈ 40.1 ms.
    let o = link(
        &["--downlink", "const:12mbps", "--uplink", "const:12mbps"],
        "ping -c 30 -i 0.05 $WISP_LINK_PEER",
    );
    assert_ok(&o);
    let mut rtt = ping_rtts(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(rtt.len(), 30);
    let m = median(&mut rtt);
    eprintln!("ping on const:12mbps, 20 ms each way: median RTT {m:.3} ms");
    assert!((m - 40.0).abs() <= 1.0, "median RTT {m} ms on const:12mbps");
    // The 12 Mbit/s trace: 20 ms each way plus the wait for the next opportunity (the log's
    // per-packet delays). The emulator adds nothing to what the model says.
    let logs = dir.path().join("logs");
    let o = link(
        &[
            "--downlink",
            trace,
            "--uplink",
            trace,
            "--log",
            logs.to_str().unwrap(),
        ],
        "ping -c 30 -i 0.05 $WISP_LINK_PEER",
    );
    assert_ok(&o);
    let mut rtt = ping_rtts(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(rtt.len(), 30);
    let m = median(&mut rtt);
    let model = |f: &str| -> Vec<f64> {
        std::fs::read_to_string(logs.join(f))
            .unwrap()
            .lines()
            .filter(|l| l.contains(" - "))
            .map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
            .collect()
    };
    let (up, down) = (model("uplink.log"), model("downlink.log"));
    assert_eq!((up.len(), down.len()), (30, 30));
    // Each ping's modelled RTT: its request's wait on the uplink plus its reply's on the
    // downlink (the logs list them in order).
    let mut modelled: Vec<f64> = up.iter().zip(&down).map(|(u, d)| 40.0 + u + d).collect();
    let predicted = median(&mut modelled);
    eprintln!(
        "ping on a 12 Mbit/s trace, 20 ms each way: median RTT {m:.3} ms, model {predicted:.3} ms"
    );
    assert!(
        (m - predicted).abs() <= 0.5,
        "median RTT {m} ms, model {predicted} ms"
    );
    assert!(
        m > 40.0 && m < 42.5,
        "median RTT {m} ms on the 12 Mbit/s trace"
    );
}

fn cellular(name: &str) -> String {
    root()
        .join("traces/cellular")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn iperf3_gets_what_the_trace_offered_while_backlogged() {
    let t = "iperf3_gets_what_the_trace_offered_while_backlogged";
    if !privileged(t) || !have(t, "iperf3") {
        return;
    }
    let _real_time = real_time();
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let port = free_port().to_string();
    let mut server = Command::new("iperf3")
        .args(["-s", "-1", "-p", &port])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_guarded();
    std::thread::sleep(Duration::from_millis(500));
    // The namespace sends (uplink) at 20 Mbit/s into the Verizon LTE downlink trace, with a
    // queue short enough for iperf3's control connection to get through.
    let client = dir.path().join("client.json");
    let o = link(
        &[
            "--uplink",
            &cellular("Verizon-LTE-short.down"),
            "--downlink",
            &cellular("Verizon-LTE-short.up"),
            "--uplink-queue",
            "droptail:packets=150",
            "--log",
            logs.to_str().unwrap(),
        ],
        &format!(
            "iperf3 -c $WISP_LINK_PEER -p {port} -u -b 20M -l 1472 -t 15 --json > {}",
            client.display()
        ),
    );
    reap(&mut server, Duration::from_secs(5));
    assert_ok(&o);
    let c = json(&std::fs::read(&client).unwrap());
    let recv_bps = c["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    // iperf3 counts UDP payload; the link carries IP packets (1472 + 28 bytes).
    let ip_kbps = recv_bps * 1500.0 / 1472.0 / 1e3;
    let a = wisp(&[
        "analyze",
        "--json",
        logs.join("uplink.log").to_str().unwrap(),
    ]);
    assert!(a.status.success());
    let a = json(&a.stdout);
    let offered = a["logs"][0]["offered_while_backlogged_kbps"]
        .as_f64()
        .unwrap();
    let err = (ip_kbps - offered).abs() / offered;
    eprintln!(
        "iperf3 received {:.1} kbit/s of payload = {ip_kbps:.1} kbit/s of IP; the trace offered {offered:.1} kbit/s while backlogged ({:.2}% apart)",
        recv_bps / 1e3,
        err * 100.0
    );
    assert!(
        err < 0.05,
        "iperf3 received {ip_kbps:.1} kbit/s (IP), the trace offered {offered:.1} while backlogged"
    );
}

/// Whether any process is in the network namespace `net:[ino]`.
fn namespace_in_use(ino: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read_link(e.path().join("ns/net")).is_ok_and(|l| l.to_string_lossy().contains(ino))
    })
}

fn host_links() -> String {
    String::from_utf8_lossy(
        &Command::new("ip")
            .args(["-o", "link"])
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned()
}

fn host_routes() -> String {
    String::from_utf8_lossy(&Command::new("ip").args(["route"]).output().unwrap().stdout)
        .into_owned()
}

/// Whether process `pid` exists and is not a zombie (an orphan nobody reaped yet).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// Starts `wisp link` whose command (a shell) starts a long `sleep`, writes both pids and its
/// namespace to files, and waits; returns the link process, the shell's and the sleep's pids
/// and the namespace (`net:[INODE]`).
fn start_sleeping_link(dir: &Path) -> (Guarded, i32, i32, String) {
    let info = dir.join("info");
    let mut c = Command::new(bin())
        .args(["link", "--downlink", "const:10mbps", "--uplink", "const:10mbps", "--", "sh", "-c"])
        .arg(format!(
            "sleep 600 & echo $$ $! $(readlink /proc/self/ns/net) > {0}.tmp && mv {0}.tmp {0}; wait $!",
            info.display()
        ))
        .stderr(Stdio::piped())
        .spawn_guarded();
    let t0 = Instant::now();
    while !info.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the command did not start"
        );
        if let Some(s) = c.try_wait().unwrap() {
            let mut e = String::new();
            BufReader::new(c.stderr.take().unwrap())
                .lines()
                .for_each(|l| e.push_str(&l.unwrap()));
            panic!("wisp link exited early ({s}): {e}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&info).unwrap();
    let f: Vec<&str> = text.split_whitespace().collect();
    (
        c,
        f[0].parse().unwrap(),
        f[1].parse().unwrap(),
        f[2].to_string(),
    )
}

#[test]
fn the_link_cleans_up_when_the_command_is_killed_or_interrupted() {
    let t = "the_link_cleans_up_when_the_command_is_killed_or_interrupted";
    if !privileged(t) {
        return;
    }
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    for how in ["kill the command", "interrupt wisp link"] {
        let dir = tempfile::tempdir().unwrap();
        let (mut link, shell, sleep, ns) = start_sleeping_link(dir.path());
        let dev = format!("wisp{}", link.id());
        assert!(host_links().contains(&dev), "{how}: no {dev} while running");
        assert!(namespace_in_use(&ns));
        match how {
            // SIGKILL to the command itself: its `sleep` is left behind in the namespace.
            "kill the command" => kill(Pid::from_raw(shell), Signal::SIGKILL).unwrap(),
            // Ctrl-C to wisp link: it ends the command (SIGTERM).
            _ => kill(Pid::from_raw(link.id() as i32), Signal::SIGINT).unwrap(),
        }
        let status = link.wait().unwrap();
        assert!(!status.success(), "{how}: {status}");
        if how == "kill the command" {
            assert_eq!(status.code(), Some(128 + 9), "{how}");
        }
        assert!(!host_links().contains(&dev), "{how}: {dev} is still there");
        assert!(
            !host_routes().contains(&dev),
            "{how}: a route via {dev} is still there"
        );
        // Nothing is left in the namespace, so it is gone.
        assert!(!namespace_in_use(&ns), "{how}: {ns} still has processes");
        assert!(!alive(sleep), "{how}: sleep {sleep} survived");
    }
}

/// `kill -9` of `wisp link` leaves it no chance to end the command: the kernel removes the
/// devices and their routes, and the command's parent-death signal ends it too, instead of
/// leaving it running in the orphaned namespace.
#[test]
fn the_command_ends_when_the_link_is_killed_with_sigkill() {
    let t = "the_command_ends_when_the_link_is_killed_with_sigkill";
    if !privileged(t) {
        return;
    }
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let dir = tempfile::tempdir().unwrap();
    let info = dir.path().join("pid");
    // The shell writes its pid and becomes `sleep` (same process, so the pid is the command's).
    let mut link = Command::new(bin())
        .args([
            "link",
            "--downlink",
            "const:12mbps",
            "--uplink",
            "const:12mbps",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "echo $$ > {0}.tmp && mv {0}.tmp {0}; exec sleep 30",
            info.display()
        ))
        .stderr(Stdio::null())
        .spawn_guarded();
    let t0 = Instant::now();
    while !info.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the command did not start"
        );
        assert!(link.try_wait().unwrap().is_none(), "wisp link exited early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let cmd: i32 = std::fs::read_to_string(&info)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let dev = format!("wisp{}", link.id());
    assert!(alive(cmd), "the command {cmd} is not running");
    assert!(host_links().contains(&dev), "no {dev} while running");
    kill(Pid::from_raw(link.id() as i32), Signal::SIGKILL).unwrap();
    link.wait().unwrap();
    let killed = Instant::now();
    while alive(cmd) && killed.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let survived = alive(cmd);
    eprintln!(
        "after kill -9 of wisp link the command {}",
        if survived {
            "was still running 2 s later".to_string()
        } else {
            format!(
                "was gone within {:.0} ms",
                killed.elapsed().as_secs_f64() * 1e3
            )
        }
    );
    if survived {
        let _ = kill(Pid::from_raw(cmd), Signal::SIGKILL);
    }
    assert!(!survived, "the command {cmd} survived kill -9 of wisp link");
    assert!(!host_links().contains(&dev), "{dev} is still there");
    assert!(
        !host_routes().contains(&dev),
        "a route via {dev} is still there"
    );
}

#[test]
fn a_failing_command_passes_its_exit_code_through() {
    let t = "a_failing_command_passes_its_exit_code_through";
    if !privileged(t) {
        return;
    }
    let o = link(
        &["--downlink", "const:10mbps", "--uplink", "const:10mbps"],
        "exit 3",
    );
    assert_eq!(o.status.code(), Some(3));
    let o = Command::new(bin())
        .args([
            "link",
            "--downlink",
            "const:1mbps",
            "--uplink",
            "const:1mbps",
            "--",
            "/nonexistent/cmd",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.lines().any(|l| l.contains("/nonexistent/cmd")), "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn without_root_the_link_says_so_in_one_line() {
    let t = "without_root_the_link_says_so_in_one_line";
    if !privileged(t) || !have(t, "setpriv") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A folder the unprivileged user may write in: --log would be created there.
    let writable = dir.path().join("w");
    std::fs::create_dir(&writable).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = wisp_as_nobody(
        dir.path(),
        &[
            "link",
            "--downlink",
            "const:1mbps",
            "--uplink",
            "const:1mbps",
            "--log",
            "w/logs",
            "--",
            "true",
        ],
    );
    // Missing permission is bad input (exit code 2), as for `wisp pingpair`.
    let line = the_one_error_line(&o, "link as nobody", seed_line);
    assert!(line.contains("needs root (CAP_NET_ADMIN)"), "{line}");
    // Nothing left behind: not even an empty log folder.
    assert!(!writable.join("logs").exists(), "{line}");
}

#[test]
fn wmm_lets_the_voice_class_overtake_a_full_queue() {
    let t = "wmm_lets_the_voice_class_overtake_a_full_queue";
    if !privileged(t) || !have(t, "ping") {
        return;
    }
    let _real_time = real_time();
    // The namespace floods best-effort traffic at 3 Mbit/s into a 2 Mbit/s uplink for 5 s (a
    // queue that grows by 1 Mbit/s); after 2 s, a ping marked EF (TOS 0xb8) goes around the
    // queue while an unmarked one waits behind it.
    let script = format!(
        "{} send --scheme cbr:rate-kbps=3000 --to $WISP_LINK_PEER:9 --duration-s 5 2>/dev/null & \
         sleep 2; ping -c 5 -i 0.2 -Q 0xb8 $WISP_LINK_PEER; ping -c 5 -i 0.2 $WISP_LINK_PEER; wait",
        bin()
    );
    let o = link(
        &[
            "--uplink",
            "const:2mbps",
            "--downlink",
            "const:50mbps",
            "--wmm",
        ],
        &script,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rtts = ping_rtts(&out);
    assert_eq!(rtts.len(), 10, "{out}");
    let (mut ef, mut be) = (rtts[..5].to_vec(), rtts[5..].to_vec());
    let (ef, be) = (median(&mut ef), median(&mut be));
    assert!(ef < 50.0, "EF ping {ef} ms should skip the queue");
    assert!(
        be > 500.0,
        "best-effort ping {be} ms should wait behind the flood"
    );
}

/// One real flow: `wisp send/recv --scheme SCHEME` through `wisp link` on the Verizon LTE
/// traces for `secs`. Returns the receiver's metrics, how far into the traces the flow started,
/// the sender's median timer lateness in µs, and the link's stderr.
fn real_flow(scheme: &str, secs: u32) -> (Value, f64, f64, String) {
    real_flow_with(scheme, secs, &[], &[])
}

/// [`real_flow`] with more arguments for `wisp send` and for `wisp recv`.
fn real_flow_with(
    scheme: &str,
    secs: u32,
    send_extra: &[&str],
    recv_extra: &[&str],
) -> (Value, f64, f64, String) {
    let down = cellular("Verizon-LTE-short.down");
    let up = cellular("Verizon-LTE-short.up");
    let path = RealPath {
        link_args: vec!["--downlink".into(), down.clone(), "--uplink".into(), up],
        known_link: format!("trace:{down}"),
        delay_ms: 20,
    };
    real_flow_through(&path, scheme, secs, send_extra, recv_extra)
}

/// What `wisp link` emulates for a real flow: its options (before `--`), and what the receiver
/// is told of the data direction (`wisp recv --link`, `--delay-ms`: `delay_ms` is also given to
/// `wisp link` as its `--delay-ms`).
struct RealPath {
    link_args: Vec<String>,
    known_link: String,
    delay_ms: u32,
}

/// One real flow, `wisp send/recv --scheme SCHEME` for `secs`, through `wisp link` set up as
/// `path`; returns what [`real_flow`] does.
fn real_flow_through(
    path: &RealPath,
    scheme: &str,
    secs: u32,
    send_extra: &[&str],
    recv_extra: &[&str],
) -> (Value, f64, f64, String) {
    // The receiver runs inside the namespace behind the downlink; the sender on the host.
    let port = free_port().to_string();
    let delay = path.delay_ms.to_string();
    let mut link = Command::new(bin())
        .arg("link")
        .args(&path.link_args)
        .args(["--delay-ms", &delay, "--"])
        .args([
            bin(),
            "recv",
            "--listen",
            &format!("0.0.0.0:{port}"),
            "--link",
            &path.known_link,
        ])
        .args(["--delay-ms", &delay, "--json"])
        .args(recv_extra)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn_guarded();
    let (ns, drain) = namespace_address(&mut link);
    std::thread::sleep(Duration::from_millis(300));
    let sent = wisp(
        &[
            "send",
            "--scheme",
            scheme,
            "--to",
            &format!("{ns}:{port}"),
            "--duration-s",
            &secs.to_string(),
            "--json",
        ]
        .into_iter()
        .chain(send_extra.iter().copied())
        .collect::<Vec<_>>(),
    );
    assert_ok(&sent);
    let late_p50 = json(&sent.stdout)["flows"][0]["pacing_late_p50_us"]
        .as_f64()
        .unwrap_or(0.0);
    let out = link.wait_with_output().unwrap();
    let log = drain.join().unwrap();
    assert!(out.status.success(), "{log}");
    let real = json(&out.stdout)["flows"][0].clone();
    assert_eq!(real["clock"], "synchronised", "{real}");
    // The flow started this far into the traces (`wisp link` began replaying them first): the
    // simulator starts there too.
    let offset = real["link_offset_ms"].as_f64().unwrap();
    assert!((0.0..10_000.0).contains(&offset), "{real}");
    (real, offset, late_p50, log)
}

/// `wisp run` as the real flow ran: the same scheme, traces, delay and duration, started
/// `offset` ms into the traces, with the sender's timers late by U(0, J) where J = 2 × the real
/// sender's median lateness (at least 1 µs), for seeds 1–5.
fn simulated_flows(scheme: &str, secs: u32, offset: f64, late_p50: f64) -> Vec<Value> {
    let down = cellular("Verizon-LTE-short.down");
    let up = cellular("Verizon-LTE-short.up");
    let jitter = (2.0 * late_p50).max(1.0);
    (1..=5)
        .map(|seed| {
            let sim = wisp(&[
                "run",
                "--scheme",
                scheme,
                "--trace",
                &down,
                "--reverse-trace",
                &up,
                "--duration-s",
                &secs.to_string(),
                "--trace-offset-ms",
                &format!("{offset:.3}"),
                "--timer-jitter-us",
                &format!("{jitter:.3}"),
                "--seed",
                &seed.to_string(),
                "--json",
            ]);
            assert_ok(&sim);
            json(&sim.stdout)["flows"][0].clone()
        })
        .collect()
}

/// The simulator/real-path agreement check: real flows of `secs` through `wisp link` on the
/// Verizon LTE traces, each against `wisp run` as it ran ([`simulated_flows`]: the real flow's
/// offset into the traces and its host's timer lateness, seeds 1–5). The median of the real
/// flows' throughput and of their self-inflicted delay must be within a tolerance of the median
/// of the simulated ones. `stages` is a sequential plan, `(flows so far, tolerance)`: after each
/// stage the check passes if both medians are within that stage's tolerance, and the last
/// stage's tolerance (20%) is the bar. (A closed loop such as GCC's is chaotic on this trace: a
/// run's outcome spreads by ±20% with the timers' microseconds, in the simulator and on the
/// real path alike, so it takes many runs to compare them; a clear agreement ends early.) The
/// real flows run `parallel` at a time, each through a `wisp link` of its own.
fn sim_and_real_agree(scheme: &str, secs: u32, stages: &[(usize, f64)], parallel: usize) {
    let _real_time = real_time();
    agree(scheme, secs, stages, parallel);
}

/// [`sim_and_real_agree`] for a caller that holds the real-time lock.
fn agree(scheme: &str, secs: u32, stages: &[(usize, f64)], parallel: usize) {
    let (mut reals, mut sims, mut logs) = (vec![], vec![], String::new());
    for (i, &(runs, tolerance)) in stages.iter().enumerate() {
        while reals.len() < runs {
            let batch = (runs - reals.len()).min(parallel.max(1));
            let flows: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..batch)
                    .map(|_| s.spawn(|| real_flow(scheme, secs)))
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (real, offset, late_p50, log) in flows {
                let writes = log
                    .lines()
                    .find_map(|l| l.split("; ").find(|p| p.starts_with("writes late")))
                    .unwrap_or("writes late ?");
                eprintln!(
                    "{scheme}: the flow started {offset:.1} ms into the traces; sender timers \
                     late by a median {late_p50:.1} µs; link {writes}; receiver read lag p50 {} \
                     p99 {} µs",
                    real["read_lag_p50_us"], real["read_lag_p99_us"]
                );
                sims.extend(simulated_flows(scheme, secs, offset, late_p50));
                reals.push(real);
                logs.push_str(&log);
            }
        }
        let apart = |key: &str| {
            let mut a: Vec<f64> = sims.iter().map(|s| s[key].as_f64().unwrap()).collect();
            let mut b: Vec<f64> = reals.iter().map(|s| s[key].as_f64().unwrap()).collect();
            let (ma, mb) = (median(&mut a), median(&mut b));
            let rel = (ma - mb).abs() / ma.abs().max(1e-9);
            let list = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:.1}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            eprintln!(
                "{scheme}: {} real flows: {key}: simulator {ma:.1} ({}), real {mb:.1} ({}): \
                 {:.1}% apart",
                reals.len(),
                list(&a),
                list(&b),
                rel * 100.0
            );
            (rel, format!("{key}: simulator {ma:.1}, real {mb:.1}"))
        };
        let (thr, thr_text) = apart("throughput_kbps");
        let (delay, delay_text) = apart("self_inflicted_delay_ms");
        if thr <= tolerance && delay <= tolerance {
            return;
        }
        assert!(
            i + 1 < stages.len(),
            "{scheme}: {} real flows: {thr_text}; {delay_text} (more than {}% apart)\n{logs}",
            reals.len(),
            tolerance * 100.0
        );
    }
}

/// CBR (open loop) and Sprout (closed loop) in CI, one 60-s flow each, the two at once (each
/// through its own `wisp link`; in turn they took 121 s).
#[test]
fn cbr_and_sprout_agree_between_the_simulator_and_the_real_path() {
    if !privileged("cbr_and_sprout_agree_between_the_simulator_and_the_real_path") {
        return;
    }
    let _real_time = real_time_shared();
    std::thread::scope(|s| {
        let flows: Vec<_> = ["cbr", "sprout"]
            .map(|scheme| s.spawn(move || agree(scheme, 60, &[(1, 0.20)], 1)))
            .into_iter()
            .collect();
        for f in flows {
            if let Err(e) = f.join() {
                std::panic::resume_unwind(e);
            }
        }
    });
}

/// GCC in CI. Its closed loop is chaotic on this trace: one 60-s flow's outcome spreads over
/// about ±20% with the timers' microseconds (333–542 kbit/s and 13–36 ms over 80 simulated
/// flows), in the simulator and on the real path alike, so one real flow cannot be held to 20%
/// of a prediction; the median of many can. Twelve flows first, passing if both medians are
/// within 15%; otherwise twelve more, and the median of the 24 must be within 20%. The flows
/// run twelve at a time, each through its own `wisp link` in its own namespaces: one batch of
/// 60 s (six at a time took two, 121 s; two at a time six, 363 s). On the 2-core machine on
/// 3 Dec 2026, twelve at a time: the emulators' writes 175–583 µs late at p99 (57–125 µs six
/// at a time), the sender timers 34–98 µs at the median (2–42 µs), and the twelve flows 2.4% /
/// 2.5% apart (throughput / delay; six at a time 1.5% / 7.6% and 4.5% / 9.7% in two runs).
/// The flows, their length and the bounds are unchanged, so the statistics keep their power.
#[test]
fn gcc_agrees_over_many_flows_between_the_simulator_and_the_real_path() {
    if !privileged("gcc_agrees_over_many_flows_between_the_simulator_and_the_real_path") {
        return;
    }
    sim_and_real_agree("gcc-remb", 60, &[(12, 0.15), (24, 0.20)], 12);
}

/// RFC 8867 §5.1 as `wisp reproduce rmcat` runs it (`capacity_cases` and `queue_300ms` in
/// crates/wisp-sim/src/reproduce/rmcat.rs): one flow for 100 s over a bottleneck whose capacity
/// steps (from s, kbit/s) are these, 50 ms one way in each direction, a drop-tail queue of
/// 300 ms at the first capacity (1 Mbit/s: 37 500 bytes), and a feedback path of the delay only.
/// `wisp reproduce rmcat --quick` runs it at half length: every step at half its time, 50 s
/// (the `scale` of the functions below: 1 or 0.5).
const RMCAT_5_1_STEPS: [(f64, f64); 4] =
    [(0.0, 1000.0), (40.0, 2500.0), (60.0, 600.0), (80.0, 1000.0)];
const RMCAT_5_1_SECS: f64 = 100.0;
const RMCAT_5_1_DELAY_MS: u32 = 50;
const RMCAT_5_1_QUEUE: &str = "droptail:bytes=37500";

/// §5.1's schedule as a `steps:` link seen from `from_ms` into it: the step in force then
/// starts at 0, the later ones `from_ms` earlier (the simulator's flow starts at its time 0,
/// the real one this far into `wisp link`'s schedule).
fn rmcat_5_1_link(from_ms: f64, scale: f64) -> String {
    let starts: Vec<f64> = (RMCAT_5_1_STEPS.iter())
        .map(|s| s.0 * scale * 1000.0)
        .collect();
    let items: Vec<String> = (RMCAT_5_1_STEPS.iter().enumerate())
        .filter(|&(i, _)| starts.get(i + 1).is_none_or(|&next| next > from_ms))
        .map(|(i, &(_, kbps))| format!("{kbps}kbps@{:.3}ms", (starts[i] - from_ms).max(0.0)))
        .collect();
    format!("steps:{}", items.join(","))
}

/// Per phase of §5.1 (the schedule's steps, up to 100 s), as `wisp reproduce rmcat` measures
/// it: the utilisation over the phase's second half and the p95 of the queueing delay of the
/// packets that left the queue during the phase. `departures` are (when the packet left the
/// queue, ms on the schedule's clock; its bytes; its time in the queue, ms).
fn rmcat_5_1_phases(departures: &[(f64, u64, f64)], scale: f64) -> Vec<(f64, f64)> {
    (0..RMCAT_5_1_STEPS.len())
        .map(|i| {
            let (from, kbps) = RMCAT_5_1_STEPS[i];
            let from = from * scale;
            let to = (RMCAT_5_1_STEPS.get(i + 1)).map_or(RMCAT_5_1_SECS, |s| s.0) * scale;
            let mid = (from + to) / 2.0;
            let within = |t: f64, a: f64| t >= a * 1000.0 && t < to * 1000.0;
            let bytes: u64 = (departures.iter())
                .filter(|d| within(d.0, mid))
                .map(|d| d.1)
                .sum();
            let util = bytes as f64 * 8.0 / 1000.0 / (to - mid) / kbps;
            let mut q: Vec<f64> = (departures.iter())
                .filter(|d| within(d.0, from))
                .map(|d| d.2)
                .collect();
            (util, quantile(&mut q, 0.95))
        })
        .collect()
}

/// The departures of a `wisp link` downlink log (Mahimahi's `T - BYTES DELAY` lines: T in ms
/// since the link started, DELAY the packet's time in the queue).
fn link_log_departures(log: &Path) -> Vec<(f64, u64, f64)> {
    let text = std::fs::read_to_string(log).unwrap();
    (text.lines())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4 && f[1] == "-").then(|| {
                (
                    f[0].parse().unwrap(),
                    f[2].parse().unwrap(),
                    f[3].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// The deliveries of a simulated run's packets.csv as [`link_log_departures`] gives them,
/// `offset_ms` added to put them on the real link's clock.
fn sim_departures(packets_csv: &Path, offset_ms: f64) -> Vec<(f64, u64, f64)> {
    let mut r = csv::Reader::from_path(packets_csv).unwrap();
    let head = r.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (size, enq, del) = (col("size"), col("enqueued_ms"), col("delivered_ms"));
    (r.records())
        .filter_map(|row| {
            let row = row.unwrap();
            let d: f64 = row[del].parse().ok()?;
            let e: f64 = row[enq].parse().unwrap();
            Some((d + offset_ms, row[size].parse().unwrap(), d - e))
        })
        .collect()
}

/// The mean time in the queue of `departures` ([`link_log_departures`]), ms.
fn mean_queue_ms(departures: &[(f64, u64, f64)]) -> f64 {
    departures.iter().map(|d| d.2).sum::<f64>() / departures.len().max(1) as f64
}

/// What one side of the §5.1 comparison measured: mean throughput (kbit/s), the mean and p95
/// of the queueing delay over the run (ms), and per phase the utilisation and queueing-delay p95.
#[derive(Debug)]
struct Rmcat51 {
    throughput_kbps: f64,
    queue_mean_ms: f64,
    queue_p95_ms: f64,
    phases: Vec<(f64, f64)>,
}

/// `wisp run` on §5.1 as the real flow saw it (its link schedule from `offset` ms, the sender's
/// timers late by U(0, 2 × the real sender's median lateness)), seeds 1–5: the median of each
/// figure over the seeds. The whole run's queueing-delay p95 is the simulator's own
/// `queue_delay_p95_ms`; the mean is over its packets.csv.
fn simulated_rmcat_5_1(
    scheme: &str,
    offset: f64,
    late_p50: f64,
    dir: &Path,
    scale: f64,
) -> Rmcat51 {
    let jitter = (2.0 * late_p50).max(1.0);
    let runs: Vec<Rmcat51> = (1..=5)
        .map(|seed| {
            let out = dir.join(format!("sim-{scheme}-{seed}"));
            let sim = wisp(&[
                "run",
                "--scheme",
                scheme,
                "--link",
                &rmcat_5_1_link(offset, scale),
                "--delay-ms",
                &RMCAT_5_1_DELAY_MS.to_string(),
                "--queue",
                RMCAT_5_1_QUEUE,
                "--duration-s",
                &(RMCAT_5_1_SECS * scale).to_string(),
                "--timer-jitter-us",
                &format!("{jitter:.3}"),
                "--seed",
                &seed.to_string(),
                "--json",
                "--out",
                out.to_str().unwrap(),
            ]);
            assert_ok(&sim);
            let f = &json(&sim.stdout)["flows"][0];
            let departures = sim_departures(&out.join("packets.csv"), offset);
            Rmcat51 {
                throughput_kbps: f["throughput_kbps"].as_f64().unwrap(),
                queue_mean_ms: mean_queue_ms(&departures),
                queue_p95_ms: f["queue_delay_p95_ms"].as_f64().unwrap(),
                phases: rmcat_5_1_phases(&departures, scale),
            }
        })
        .collect();
    let med = |f: &dyn Fn(&Rmcat51) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
    Rmcat51 {
        throughput_kbps: med(&|r| r.throughput_kbps),
        queue_mean_ms: med(&|r| r.queue_mean_ms),
        queue_p95_ms: med(&|r| r.queue_p95_ms),
        phases: (0..RMCAT_5_1_STEPS.len())
            .map(|i| (med(&|r| r.phases[i].0), med(&|r| r.phases[i].1)))
            .collect(),
    }
}

/// The issue-36 acceptance item "NADA and SCReAM over real sockets through `wisp link` within
/// 20% of the simulator on RFC 8867 §5.1" ([`nada_and_scream_on_rmcat_5_1_through_wisp_link`]
/// at `scale` 1, `--ignored`: 101 s), and its half-length form in every test run (`wisp
/// reproduce rmcat --quick`'s §5.1, 51 s). Each scheme runs §5.1 (100 s × `scale`) over UDP
/// through its own `wisp link` (the schedule as a `steps:` downlink, 50 ms each way, the
/// 37 500-byte drop-tail queue; the feedback uplink at 1 Gbit/s, the simulator's delay-only
/// path), the two at once; then `wisp run` runs the same link from where the real flow started
/// on it ([`simulated_rmcat_5_1`]). Per scheme the mean throughput (the receivers'
/// `throughput_kbps`) and the mean queueing delay over the run (each packet's time in the
/// bottleneck queue: the link's log on the real path, packets.csv in the simulator) must be
/// within 20%, and so must each phase's utilisation over its second half.
///
/// Printed, not held: the queueing-delay p95 over the run (the real one: the receiver's one-way
/// delay p95 less the 50 ms of propagation, which the link log's p95 matches to 0.1 ms) and per
/// phase (from the link's log). The run's p95 falls inside the queue's drain after the drop to
/// 0.6 Mbit/s and spreads by ±20% in the simulator alone: SCReAM's over seeds 1–8 and timer
/// jitter 1/20/100 µs (24 runs) was 52.8–82.3 ms (NADA's 76.1–90.5), where its mean was
/// 21.3–23.8 ms (NADA's 30.5–32.7); one real flow cannot be held to 20% of the p95's median. A
/// phase's p95 in the 2.5 Mbit/s phase is a few ms (NADA's 8), where 20% is a millisecond.
fn nada_and_scream_on_rmcat_5_1_through_wisp_link(test: &str, scale: f64) {
    if !privileged(test) {
        return;
    }
    let _real_time = real_time_shared();
    let dir = tempfile::tempdir().unwrap();
    let schemes = ["nada", "scream"];
    let secs = (RMCAT_5_1_SECS * scale).round() as u32;
    let reals: Vec<_> = std::thread::scope(|s| {
        let flows: Vec<_> = (schemes.iter())
            .map(|&scheme| {
                let logs = dir.path().join(format!("link-{scheme}"));
                s.spawn(move || {
                    let path = RealPath {
                        link_args: [
                            "--downlink",
                            &rmcat_5_1_link(0.0, scale),
                            "--uplink",
                            "const:1gbps",
                            "--downlink-queue",
                            RMCAT_5_1_QUEUE,
                            "--log",
                            logs.to_str().unwrap(),
                        ]
                        .map(String::from)
                        .to_vec(),
                        known_link: rmcat_5_1_link(0.0, scale),
                        delay_ms: RMCAT_5_1_DELAY_MS,
                    };
                    let flow = real_flow_through(&path, scheme, secs, &[], &[]);
                    (flow, link_log_departures(&logs.join("downlink.log")))
                })
            })
            .collect();
        flows.into_iter().map(|f| f.join().unwrap()).collect()
    });
    let apart = |sim: f64, real: f64| (sim - real).abs() / sim.abs().max(1e-9);
    let mut over = vec![];
    for (&scheme, ((real, offset, late_p50, log), departures)) in schemes.iter().zip(&reals) {
        let sim = simulated_rmcat_5_1(scheme, *offset, *late_p50, dir.path(), scale);
        let real_fig = Rmcat51 {
            throughput_kbps: real["throughput_kbps"].as_f64().unwrap(),
            queue_mean_ms: mean_queue_ms(departures),
            queue_p95_ms: real["delay_p95_ms"].as_f64().unwrap() - f64::from(RMCAT_5_1_DELAY_MS),
            phases: rmcat_5_1_phases(departures, scale),
        };
        let mut q: Vec<f64> = departures.iter().map(|d| d.2).collect();
        eprintln!(
            "{scheme} on RFC 8867 §5.1, {secs} s, started {offset:.1} ms into the link's schedule; \
             sender timers late by a median {late_p50:.1} µs; link log's queueing p95 {:.1} ms",
            quantile(&mut q, 0.95)
        );
        let mut check = |what: String, s: f64, r: f64| {
            let rel = apart(s, r);
            eprintln!(
                "{scheme}: {what}: simulator {s:.3}, real {r:.3}: {:.1}% apart",
                rel * 100.0
            );
            if rel > 0.20 {
                over.push(format!("{scheme}: {what}: simulator {s:.3}, real {r:.3}"));
            }
        };
        check(
            "throughput kbit/s".into(),
            sim.throughput_kbps,
            real_fig.throughput_kbps,
        );
        check(
            "queueing delay mean ms".into(),
            sim.queue_mean_ms,
            real_fig.queue_mean_ms,
        );
        eprintln!(
            "{scheme}: queueing delay p95 ms: simulator {:.1}, real {:.1}: {:.1}% apart \
             (reported)",
            sim.queue_p95_ms,
            real_fig.queue_p95_ms,
            apart(sim.queue_p95_ms, real_fig.queue_p95_ms) * 100.0
        );
        for (i, (s, r)) in sim.phases.iter().zip(&real_fig.phases).enumerate() {
            let (from, kbps) = RMCAT_5_1_STEPS[i];
            let from = from * scale;
            check(
                format!("phase {i} ({kbps} kbit/s from {from} s) utilisation"),
                s.0,
                r.0,
            );
            eprintln!(
                "{scheme}: phase {i} queueing delay p95 ms: simulator {:.1}, real {:.1}: {:.1}% \
                 apart (reported)",
                s.1,
                r.1,
                apart(s.1, r.1) * 100.0
            );
        }
        if !over.is_empty() {
            eprintln!("{log}");
        }
    }
    assert!(over.is_empty(), "more than 20% apart: {over:#?}");
}

/// §5.1 at full length: the figures of docs/rmcat.md and the issue's acceptance.
#[test]
#[ignore = "101 s; the half-length form runs in every test run"]
fn nada_and_scream_agree_with_the_simulator_on_rmcat_5_1_through_wisp_link() {
    nada_and_scream_on_rmcat_5_1_through_wisp_link(
        "nada_and_scream_agree_with_the_simulator_on_rmcat_5_1_through_wisp_link",
        1.0,
    );
}

/// §5.1 at half length (`wisp reproduce rmcat --quick`'s), in every test run.
#[test]
fn nada_and_scream_agree_with_the_simulator_on_half_length_rmcat_5_1_through_wisp_link() {
    nada_and_scream_on_rmcat_5_1_through_wisp_link(
        "nada_and_scream_agree_with_the_simulator_on_half_length_rmcat_5_1_through_wisp_link",
        0.5,
    );
}

/// What a video.csv says of the shown frames: (pictures captured, frames shown, mean SSIM dB,
/// frame delay p50 and p95 ms, capture → display).
fn video_figures(csv_path: &Path) -> (u64, usize, f64, f64, f64) {
    let mut r =
        csv::Reader::from_path(csv_path).unwrap_or_else(|e| panic!("{}: {e}", csv_path.display()));
    let head = r.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (source, capture, display, ssim) = (
        col("source"),
        col("capture_ms"),
        col("display_ms"),
        col("ssim_db"),
    );
    let (mut captured, mut delays, mut ssims) = (0u64, vec![], vec![]);
    for row in r.records() {
        let row = row.unwrap();
        let f = |i: usize| row[i].parse::<f64>().unwrap();
        captured = captured.max(row[source].parse::<u64>().unwrap() + 1);
        if !row[display].is_empty() {
            delays.push(f(display) - f(capture));
            ssims.push(f(ssim));
        }
    }
    assert!(!delays.is_empty(), "{}: no frame shown", csv_path.display());
    let mean = ssims.iter().sum::<f64>() / ssims.len() as f64;
    let shown = delays.len();
    (
        captured,
        shown,
        mean,
        quantile(&mut delays, 0.5),
        quantile(&mut delays, 0.95),
    )
}

/// Alfalfa over real sockets (Alfalfa's real path): `wisp send --scheme alfalfa --video CLIP`
/// through `wisp link` on Verizon-LTE-short (20 ms each way), 30 s, the receiver reassembling
/// and decoding the diffs the packets carry, against `wisp run --scheme alfalfa` on the same
/// setting started as far into the traces as the real flow: mean SSIM and frame delay p50 and
/// p95 of the shown frames within 15%; no piece malformed.
#[test]
fn alfalfa_video_agrees_between_the_simulator_and_the_real_path() {
    let t = "alfalfa_video_agrees_between_the_simulator_and_the_real_path";
    if !privileged(t) {
        return;
    }
    let _real_time = real_time();
    let dir = tempfile::tempdir().unwrap();
    let clip = root().join("media/bigbuckbunny-qcif-3s.y4m");
    let clip = clip.to_str().unwrap();
    let (real_dir, sim_dir) = (dir.path().join("real"), dir.path().join("sim"));
    let (_, offset, _, log) = real_flow_with(
        "alfalfa",
        30,
        &["--video", clip],
        &["--out", real_dir.to_str().unwrap()],
    );
    assert!(log.contains(", 0 bad pieces"), "{log}");
    let sim = wisp(&[
        "run",
        "--scheme",
        "alfalfa",
        "--trace",
        &cellular("Verizon-LTE-short.down"),
        "--reverse-trace",
        &cellular("Verizon-LTE-short.up"),
        "--video",
        clip,
        "--duration-s",
        "30",
        "--trace-offset-ms",
        &format!("{offset:.3}"),
        "--out",
        sim_dir.to_str().unwrap(),
    ]);
    assert_ok(&sim);
    let real = video_figures(&real_dir.join("video.csv"));
    let sim = video_figures(&sim_dir.join("video.csv"));
    eprintln!(
        "alfalfa, 30 s through wisp link started {offset:.1} ms into Verizon-LTE-short \
         (captured, shown, mean SSIM dB, frame delay p50 ms, p95 ms): real {real:?}, \
         simulator {sim:?}"
    );
    let apart = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-9);
    for (what, r, s) in [
        ("mean SSIM", real.2, sim.2),
        ("frame delay p50", real.3, sim.3),
        ("frame delay p95", real.4, sim.4),
        ("frames shown", real.1 as f64, sim.1 as f64),
    ] {
        assert!(
            apart(r, s) <= 0.15,
            "{what}: real {r:.2}, simulator {s:.2}: more than 15% apart\n{log}"
        );
    }
}

/// More schemes on demand: `WISP_AGREEMENT_SCHEMES=gcc-grouping cargo test --release -p wisp-cli
/// --test net agreement_for_requested_schemes -- --nocapture`, with `WISP_AGREEMENT_RUNS`
/// real flows (default 5), `WISP_AGREEMENT_PARALLEL` at a time (default 1).
#[test]
fn agreement_for_requested_schemes() {
    let Ok(list) = std::env::var("WISP_AGREEMENT_SCHEMES") else {
        return;
    };
    if !privileged("agreement_for_requested_schemes") {
        return;
    }
    let count = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (runs, parallel) = (
        count("WISP_AGREEMENT_RUNS", 5),
        count("WISP_AGREEMENT_PARALLEL", 1),
    );
    for s in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        sim_and_real_agree(s, 60, &[(runs, 0.20)], parallel);
    }
}

#[test]
fn analyze_reads_a_log_and_rejects_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.log");
    std::fs::write(
        &good,
        "# base timestamp: 0\n0 + 1500\n1 # 1500\n1 - 1500 1.000\n2 # 1500\n",
    )
    .unwrap();
    let o = wisp(&["analyze", "--json", good.to_str().unwrap()]);
    assert_ok(&o);
    let j = json(&o.stdout);
    assert_eq!(j["logs"][0]["packets_departed"], 1);
    let bad = dir.path().join("bad.log");
    std::fs::write(&bad, "0 + 1500\n1 x 3\n").unwrap();
    let o = wisp(&["analyze", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.log:2"), "{err}");
    // Time going back (was sorted and accepted): the line that goes back is named.
    let back = dir.path().join("back.log");
    std::fs::write(&back, "0 + 1500\n5 # 1500\n5 - 1500 5.000\n3 # 1500\n").unwrap();
    let o = wisp(&["analyze", back.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("back.log:4:") && err.contains("line 3"),
        "{err}"
    );
    // An empty log: the file is named, not a line 0 of it.
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "# base timestamp: 0\n").unwrap();
    let o = wisp(&["analyze", empty.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("empty.log: no events"), "{err}");
}

#[test]
fn a_port_in_use_is_bad_input_naming_listen() {
    let taken = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for extra in [&[][..], &["--twcc"][..]] {
        let mut args = vec!["recv", "--listen", &addr];
        args.extend(extra);
        let o = wisp(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("--listen {addr}")), "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn recv_refuses_bad_output_paths_and_epochs_before_it_waits() {
    // The shipped clip with its frame rate raised to 10^6 frames/s.
    let dir = tempfile::tempdir().unwrap();
    let clip = std::fs::read(root().join("media/bigbuckbunny-qcif-3s.y4m")).unwrap();
    let end = clip.iter().position(|&b| b == b'\n').unwrap();
    let header = String::from_utf8_lossy(&clip[..end])
        .split(' ')
        .map(|p| if p.starts_with('F') { "F1000000:1" } else { p })
        .collect::<Vec<_>>()
        .join(" ");
    let fast = dir.path().join("fast.y4m");
    std::fs::write(&fast, [header.as_bytes(), &clip[end..]].concat()).unwrap();
    let fast_clip_path = fast.to_str().unwrap();
    // Refused at once: before, recv waited for a sender and failed only after the flow (with
    // --out already written when --decoded failed).
    for (extra, needle) in [
        (vec!["--out", "Cargo.toml"], "--out Cargo.toml"),
        (
            vec![
                "--video",
                "media/bigbuckbunny-qcif-3s.y4m",
                "--decoded",
                "media",
            ],
            "--decoded media",
        ),
        // A clip at a frame rate `wisp send --video` refuses (accepted before, then clamped).
        (vec!["--video", "FAST_CLIP"], "1000000 frames/s"),
        // A trace that starts in the future (accepted before).
        (
            vec![
                "--link",
                "const:1mbps",
                "--link-epoch-ns",
                "18446744073709551615",
            ],
            "--link-epoch-ns",
        ),
    ] {
        let extra: Vec<&str> = extra
            .iter()
            .map(|a| {
                if *a == "FAST_CLIP" {
                    fast_clip_path
                } else {
                    *a
                }
            })
            .collect();
        let mut r = wisp_command()
            .args(["recv", "--listen", "127.0.0.1:0"])
            .args(&extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn_guarded();
        let status = reap(&mut r, Duration::from_secs(5));
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(2),
            "{extra:?}: still waiting"
        );
        let o = r.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn recv_says_where_it_listens_while_it_waits() {
    // Port 0: only the line tells where the sender must go.
    // spawn_recv returns once the line came (bounded: at most 10 s).
    let mut r = spawn_recv("127.0.0.1:0", &[]);
    r.kill().unwrap();
    let o = r.wait_with_output().unwrap();
    let line = String::from_utf8_lossy(&o.stderr).into_owned();
    let port: u16 = line
        .split("listening on 127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no listening line: {line:?}"));
    assert_ne!(port, 0, "{line}");
}

#[test]
fn bad_network_arguments_are_one_line_and_exit_code_2() {
    for (args, needle) in [
        (
            vec!["send", "--scheme", "cbr", "--to", "no-such-host.invalid:1"],
            "--to",
        ),
        (
            vec!["send", "--scheme", "ideal", "--to", "127.0.0.1:9"],
            "simulation",
        ),
        (
            vec!["send", "--scheme", "nope", "--to", "127.0.0.1:9"],
            "nope",
        ),
        (vec!["recv", "--listen", "127.0.0.1:notaport"], "--listen"),
        (
            vec!["recv", "--listen", "127.0.0.1:0", "--link", "const:1mbps"],
            "epoch",
        ),
        (
            vec![
                "link",
                "--downlink",
                "nosuch.trace",
                "--uplink",
                "const:1mbps",
                "--",
                "true",
            ],
            "nosuch.trace",
        ),
        (
            vec![
                "link",
                "--downlink",
                "const:1mbps",
                "--uplink",
                "const:1mbps",
                "--downlink-queue",
                "fifo",
                "--",
                "true",
            ],
            "fifo",
        ),
        (
            vec![
                "link",
                "--downlink",
                "const:1mbps",
                "--uplink",
                "const:1mbps",
                "--wmm-map",
                "99=vo",
                "--",
                "true",
            ],
            "DSCP",
        ),
        // Numbers too large for the clock once added to an instant: the sender's end wrapped
        // to the past (nothing sent, exit 0), the link's delay to nothing.
        (
            vec![
                "send",
                "--scheme",
                "cbr",
                "--to",
                "127.0.0.1:9",
                "--duration-s",
                "1e300",
            ],
            "--duration-s",
        ),
        (
            vec![
                "link",
                "--downlink",
                "const:1mbps",
                "--uplink",
                "const:1mbps",
                "--delay-ms",
                "1e300",
                "--",
                "true",
            ],
            "--delay-ms",
        ),
        // Negative numbers name their option (not "unexpected argument '-1'").
        (
            vec![
                "send",
                "--scheme",
                "cbr",
                "--to",
                "127.0.0.1:9",
                "--duration-s",
                "-1",
            ],
            "--duration-s",
        ),
        (
            vec!["recv", "--listen", "127.0.0.1:0", "--delay-ms", "-5"],
            "--delay-ms",
        ),
        // Port 0 reaches nobody.
        (
            vec!["send", "--scheme", "cbr", "--to", "127.0.0.1:0"],
            "--to",
        ),
        // A --log that is a file, refused before the link is built.
        (
            vec![
                "link",
                "--downlink",
                "const:1mbps",
                "--uplink",
                "const:1mbps",
                "--log",
                "Cargo.toml",
                "--",
                "true",
            ],
            "--log",
        ),
    ] {
        let o = wisp(&args);
        let line = the_one_error_line(&o, &format!("{args:?}"), seed_line);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
}

/// The simulator's saturation throughput of `spec` (Mbit/s of IP packets of `bytes`): the AP
/// keeps the measured station's downlink queue backlogged for `secs` simulated seconds.
fn wifi_simulated_mbps(spec: &str, bytes: u32, secs: u64) -> f64 {
    use wisp_sim::wifi::link::{AP, STATION, WifiLink};
    let mut link = WifiLink::new(&spec.parse().unwrap(), 1);
    let t0 = wisp_core::Instant::ZERO;
    for tag in 0..100 {
        assert!(link.push(t0, AP, STATION, 0, tag, bytes));
    }
    let end = wisp_core::Instant::from_secs(secs);
    let (mut out, mut tag, mut delivered) = (vec![], 100, 0u64);
    while let Some(t) = link.next_event().filter(|&t| t <= end) {
        link.advance(t, &mut out);
        for o in out.drain(..) {
            delivered += u64::from(o.delivered) * u64::from(bytes);
            assert!(link.push(t, AP, STATION, 0, tag, bytes));
            tag += 1;
        }
    }
    delivered as f64 * 8.0 / secs as f64 / 1e6
}

/// The simulator's ping RTTs (ms) over `spec` with no propagation delay: an 84-byte echo
/// request from the station every `every`, its reply from the AP when the request arrives
/// (pings lost at the retry limit have no RTT).
fn wifi_simulated_pings(spec: &str, count: u64, every: wisp_core::Duration) -> Vec<f64> {
    use wisp_sim::wifi::link::{AP, STATION, WifiLink};
    let mut link = WifiLink::new(&spec.parse().unwrap(), 1);
    let mut out = vec![];
    let mut sent = std::collections::HashMap::new();
    let mut rtts = vec![];
    let (mut k, mut resolved) = (0, 0);
    let at = |k: u64| wisp_core::Instant::ZERO + every * k;
    while resolved < count {
        let next = link.next_event();
        if k < count && next.is_none_or(|t| at(k) <= t) {
            link.advance(at(k), &mut out);
            assert!(link.push(at(k), STATION, AP, 0, k, 84));
            sent.insert(k, at(k));
            k += 1;
        } else {
            link.advance(next.unwrap(), &mut out);
        }
        for o in out.drain(..) {
            if !o.delivered {
                // Lost at the retry limit, as a real ping may be.
                resolved += 1;
            } else if o.tag < count {
                assert!(link.push(o.at, AP, STATION, 0, o.tag + count, 84));
            } else {
                rtts.push((o.at - sent[&(o.tag - count)]).as_millis_f64());
                resolved += 1;
            }
        }
    }
    rtts
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// A UDP flow at saturation through the emulated medium gets what the simulator's medium
/// carries in the same setting (within 10%).
fn iperf3_through_wifi(t: &str, spec: &str) {
    if !privileged(t) || !have(t, "iperf3") {
        return;
    }
    let _real_time = real_time();
    let dir = tempfile::tempdir().unwrap();
    let port = free_port().to_string();
    let mut server = Command::new("iperf3")
        .args(["-s", "-1", "-p", &port])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_guarded();
    std::thread::sleep(Duration::from_millis(500));
    // The host (behind the AP) sends 60 Mbit/s of 1500-byte IP packets to the namespace (the
    // measured station): more than the medium carries.
    let client = dir.path().join("client.json");
    let o = link(
        &["--downlink", spec, "--delay-ms", "1"],
        &format!(
            "iperf3 -c $WISP_LINK_PEER -p {port} -u -b 60M -l 1472 -t 8 -R --json > {}",
            client.display()
        ),
    );
    reap(&mut server, Duration::from_secs(5));
    assert_ok(&o);
    let c = json(&std::fs::read(&client).unwrap());
    let recv_bps = c["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    let ip_mbps = recv_bps * 1500.0 / 1472.0 / 1e6;
    let sim = wifi_simulated_mbps(spec.trim_start_matches("wifi:"), 1500, 20);
    let err = (ip_mbps - sim).abs() / sim;
    eprintln!(
        "{spec}: iperf3 received {ip_mbps:.2} Mbit/s of IP, the simulated medium carries {sim:.2} ({:.1}% apart)",
        err * 100.0
    );
    assert!(err < 0.10, "{spec}: {ip_mbps:.2} Mbit/s against {sim:.2}");
}

#[test]
fn iperf3_through_the_wifi_medium_alone() {
    iperf3_through_wifi(
        "iperf3_through_the_wifi_medium_alone",
        "wifi:std=11g,rate=54mbps,stations=0",
    );
}

#[test]
fn iperf3_through_the_wifi_medium_with_contenders() {
    iperf3_through_wifi(
        "iperf3_through_the_wifi_medium_with_contenders",
        "wifi:std=11g,rate=54mbps,stations=2,load=saturated",
    );
}

#[test]
fn ping_through_the_wifi_medium_shows_its_access_delay() {
    let t = "ping_through_the_wifi_medium_shows_its_access_delay";
    if !privileged(t) || !have(t, "ping") {
        return;
    }
    let _real_time = real_time_shared();
    // Four saturated contenders: the echo request waits for the station's access to the
    // channel, the reply for the AP's; no propagation delay, so the RTT is the medium's.
    let spec = "std=11g,rate=54mbps,stations=4,load=saturated";
    let o = link(
        &["--downlink", &format!("wifi:{spec}"), "--delay-ms", "0"],
        "ping -c 150 -i 0.02 $WISP_LINK_PEER",
    );
    assert_ok(&o);
    let mut real = ping_rtts(&String::from_utf8_lossy(&o.stdout));
    assert!(real.len() >= 140, "{} replies", real.len());
    let mut sim = wifi_simulated_pings(spec, 2000, wisp_core::Duration::from_millis(20));
    let (rm, r95) = (quantile(&mut real, 0.5), quantile(&mut real, 0.95));
    let (sm, s95) = (quantile(&mut sim, 0.5), quantile(&mut sim, 0.95));
    eprintln!(
        "ping through wifi:{spec}: median {rm:.3} ms, p95 {r95:.3} ms; simulated median {sm:.3} ms, p95 {s95:.3} ms"
    );
    // The medium's access delay is there (an idle 11g channel answers in ~0.2 ms), and the
    // emulator adds at most its own scheduling (a few hundred µs) to the model's median.
    assert!(sm > 1.0, "simulated median {sm} ms");
    assert!(
        (rm - sm).abs() <= 0.25 * sm + 0.3,
        "median {rm:.3} ms against the simulator's {sm:.3} ms"
    );
}

#[test]
fn bad_wifi_link_specs_are_refused_before_anything_runs() {
    // No root needed: the specs are checked before the namespace is made.
    for (args, needle) in [
        (&["--downlink", "wifi:rate=7mbps"][..], "`rate`"),
        (&["--downlink", "wifi:load=bulk"][..], "`load`"),
        (
            &[
                "--downlink",
                "wifi:stations=1",
                "--uplink",
                "wifi:stations=2",
            ][..],
            "must be the same",
        ),
        (&["--downlink", "const:1mbps"][..], "--uplink is required"),
    ] {
        let o = link(args, "true");
        let line = the_one_error_line(&o, &format!("{args:?}"), seed_line);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
}

#[test]
fn every_network_command_helps_with_its_output_and_an_example() {
    for cmd in [
        &["send"][..],
        &["recv"],
        &["link"],
        &["analyze"],
        &["saturate"],
        &["saturate", "server"],
        &["saturate", "client"],
        &["pingpair"],
        &["wbest", "server"],
        &["wbest", "client"],
    ] {
        let o = wisp(&[cmd, &["--help"][..]].concat());
        assert_ok(&o);
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(
            help.contains("Example"),
            "{cmd:?} --help has no example:\n{help}"
        );
        assert!(
            help.contains("Output") || help.contains("stderr") || help.contains("stdout"),
            "{cmd:?} --help does not say what it prints:\n{help}"
        );
    }
    // What recv does with --link and no epoch: refuses (the help said "else the flow's start").
    let o = wisp(&["recv", "--help"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("else the flow's start"));
}

/// `wisp recv`'s output once it has ended by itself within `secs`; a receiver still running
/// then (one that took a stranger for its peer ignores the sender's BYE) is killed and the
/// test fails.
fn recv_output_within(mut recv: Guarded, secs: u64) -> Output {
    let t = Instant::now();
    while recv.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(secs) {
            let _ = recv.kill();
            let o = recv.wait_with_output().unwrap();
            panic!(
                "wisp recv did not end within {secs} s of the sender's end:\n{}\n{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    recv.wait_with_output().unwrap()
}

/// The flow's figures once a session is over: the receiver must have taken the real sender,
/// counted every other datagram as foreign and ended at the sender's BYE.
fn assert_the_sender_was_the_peer(
    sent: &Output,
    got: &Output,
    foreign_at_least: u64,
    relayed: Option<u64>,
) {
    assert_ok(sent);
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{err}");
    assert!(
        !err.contains("idle timeout"),
        "ended by BYE, not idle: {err}"
    );
    let s = json(&sent.stdout);
    let r = json(&got.stdout);
    let (sf, rf) = (&s["flows"][0], &r["flows"][0]);
    // Every packet sent (or, through a relay, every one it passed on) was delivered.
    let expected = relayed.unwrap_or_else(|| sf["packets_sent"].as_u64().unwrap());
    assert_eq!(rf["packets_delivered"], expected, "{rf}\n{sf}");
    if relayed.is_none() {
        assert_eq!(rf["packets_lost"], 0, "{rf}");
    }
    assert!(
        rf["foreign_packets"].as_u64().unwrap() >= foreign_at_least,
        "{rf}"
    );
    // The sender heard the receiver (its reports, hence an RTT): they went to the sender,
    // not to a stranger.
    assert!(sf["rtt_p50_ms"].is_number(), "{sf}");
    assert_eq!(r["scheme"], "cbr:rate-kbps=2000");
}

/// One stray RTCP datagram (`80c9000112345678`, a receiver report header), or
/// 20,000 random datagrams from 20 ports, sent before the sender used to become `wisp recv`'s
/// peer: the real flow was then "foreign" (506 packets), nothing was delivered and the
/// sender's BYE was ignored. The peer is now the first valid media packet's source.
#[test]
fn a_stray_datagram_or_a_flood_before_the_sender_does_not_take_over_recv() {
    let _real_time = real_time();
    for flood in [0usize, 20_000] {
        let listen = format!("127.0.0.1:{}", free_port());
        let recv = spawn_recv(&listen, &["--idle-timeout-s", "8"]);
        let strangers: Vec<UdpSocket> = (0..20)
            .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
            .collect();
        strangers[0]
            .send_to(&[0x80, 0xc9, 0, 1, 0x12, 0x34, 0x56, 0x78], &listen)
            .unwrap();
        // Pseudo-random datagrams (a fixed LCG), a quarter shaped as RTP and a quarter as
        // RTCP (version 2, an RTCP type).
        let mut x: u32 = 37;
        let mut next = || {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        };
        for i in 0..flood {
            let len = 1 + usize::from(next()) % 200;
            let mut d: Vec<u8> = (0..len).map(|_| next()).collect();
            match i % 4 {
                0 => d[0] = 0x80 | (d[0] & 0x3f),
                1 if len > 1 => {
                    d[0] = 0x80 | (d[0] & 0x1f);
                    d[1] = 200 + d[1] % 5;
                }
                _ => {}
            }
            let _ = strangers[i % 20].send_to(&d, &listen);
            if i % 1000 == 999 {
                // Let the receiver drain its socket: the flood is to be read, not dropped.
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
        let sent = send_cbr_2mbps(&listen, "1.5");
        let got = recv_output_within(recv, 5);
        assert_the_sender_was_the_peer(&sent, &got, 1, None);
        let r = json(&got.stdout);
        let peer: std::net::SocketAddr = r["peer"].as_str().unwrap().parse().unwrap();
        assert!(
            strangers.iter().all(|s| s.local_addr().unwrap() != peer),
            "flood {flood}: a stranger became the peer {peer}"
        );
    }
}

/// A replay of the sender's own captured packets (media, its announcement and a
/// BYE with its SSRC) from another address during the session used to take the session over
/// and end it (6 packets, "loss 92%"). It is now foreign and ends nothing. The test relays
/// the sender's datagrams to the receiver (and the feedback back), keeping copies to replay.
#[test]
fn a_replay_from_another_address_during_a_session_is_foreign() {
    let _real_time = real_time();
    let listen = format!("127.0.0.1:{}", free_port());
    let recv = spawn_recv(&listen, &["--idle-timeout-s", "8"]);
    let relay = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay_addr = relay.local_addr().unwrap();
    let target: std::net::SocketAddr = listen.parse().unwrap();
    // Bounded: the relay stops 8 s after it starts, or when the sender's BYE has gone by.
    let relay_thread = std::thread::spawn(move || {
        relay
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let replayer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let (mut sender, mut captured, mut replayed) = (None, Vec::new(), 0usize);
        let mut media = 0u64;
        let start = Instant::now();
        let mut buf = [0u8; 2048];
        while start.elapsed() < Duration::from_secs(8) {
            let Ok((n, from)) = relay.recv_from(&mut buf) else {
                continue;
            };
            let d = buf[..n].to_vec();
            if from == target {
                if let Some(s) = sender {
                    let _ = relay.send_to(&d, s);
                }
                continue;
            }
            sender = Some(from);
            if relay.send_to(&d, target).is_ok() && !wisp_net::rtp::is_rtcp(&d) {
                media += 1;
            }
            let bye = wisp_net::rtp::is_rtcp(&d)
                && wisp_net::rtcp::decode(&d).is_ok_and(|items| {
                    items
                        .iter()
                        .any(|i| matches!(i, wisp_net::rtcp::RtcpItem::Bye { .. }))
                });
            if captured.len() < 100 {
                captured.push(d);
            } else if replayed == 0 {
                // Mid-session: replay what was captured, then a BYE with the sender's SSRC.
                for c in &captured {
                    let _ = replayer.send_to(c, target);
                }
                let ssrc = captured
                    .iter()
                    .find(|c| !wisp_net::rtp::is_rtcp(c))
                    .map(|c| u32::from_be_bytes([c[8], c[9], c[10], c[11]]))
                    .unwrap();
                let mut b = Vec::new();
                wisp_net::rtcp::encode_bye(ssrc, &mut b).unwrap();
                let _ = replayer.send_to(&b, target);
                replayed = captured.len() + 1;
            }
            if bye {
                break;
            }
        }
        (replayed, media)
    });
    let sent = send_cbr_2mbps(&relay_addr.to_string(), "2");
    let (replayed, relayed) = relay_thread.join().unwrap();
    assert_eq!(replayed, 101);
    let got = recv_output_within(recv, 5);
    assert_the_sender_was_the_peer(&sent, &got, 101, Some(relayed));
    let r = json(&got.stdout);
    assert_eq!(r["peer"], relay_addr.to_string());
}

/// A wait that ends says what was awaited, from whom and for how long: a sender
/// killed mid-flow (no BYE) ends `wisp recv` at its idle timeout with one note naming both
/// (was "no packet for the idle timeout; ending").
#[test]
fn the_idle_timeout_names_the_peer_and_the_bound() {
    let _real_time = real_time();
    let listen = format!("127.0.0.1:{}", free_port());
    let recv = spawn_recv(&listen, &["--idle-timeout-s", "1"]);
    let mut send = Command::new(bin())
        .args(["send", "--scheme", "cbr:rate-kbps=500", "--to", &listen])
        .args(["--duration-s", "20"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn_guarded();
    std::thread::sleep(Duration::from_millis(800));
    // SIGKILL: no BYE.
    send.kill().unwrap();
    let _ = send.wait();
    let got = recv_output_within(recv, 5);
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(got.status.success(), "{err}");
    let r = json(&got.stdout);
    let peer = r["peer"].as_str().unwrap();
    assert!(
        err.contains(&format!(
            "note: no packet from {peer} within the idle timeout of 1 s; ending"
        )),
        "{err}"
    );
}

/// `wisp send --scheme cbr --rate-kbps 2000 --to TO --duration-s SECS --json`.
fn send_cbr_2mbps(to: &str, secs: &str) -> Output {
    wisp(&[
        "send",
        "--scheme",
        "cbr",
        "--rate-kbps",
        "2000",
        "--to",
        to,
        "--duration-s",
        secs,
        "--json",
    ])
}

/// L4S over real sockets: `scream:ecn=l4s` stamps ECT(1) on its packets' IP headers
/// (`IP_TOS`), `wisp link`'s `dualpi2` downlink queue (RFC 9332) marks them CE in the IP header
/// from its L queue's 0.8–1.2 ms ramp, `wisp recv` reads the codepoint (`IP_RECVTOS`) into
/// SCReAM's RFC 8888 feedback, and the sender's L4S response keeps the queue short. Beside it,
/// the same call without ECN (Not-ECT: DualPI2's Classic queue, PI2 at 15 ms) through its own
/// `wisp link`. 10 Mbit/s each way, 10 ms each way, 12 s each, the two at once.
///
/// Held: the L4S flow's packets arrive CE, exactly as many as its link marked (every packet
/// delivered carries the link's mark, no other); its queueing delay (one-way delay p95 less the
/// 10 ms of propagation) is under 5 ms, and under the Classic flow's. The Classic flow sees no
/// mark. (The simulator gives 1.9 ms at 10 Mbit/s for the L4S flow, 19 ms for the classic one;
/// 5 ms leaves room for the real path's timers, not a figure from the draft.)
#[test]
fn l4s_marks_from_wisp_link_reach_scream_over_real_sockets() {
    if !privileged("l4s_marks_from_wisp_link_reach_scream_over_real_sockets") {
        return;
    }
    let _real_time = real_time_shared();
    let path = RealPath {
        link_args: [
            "--downlink",
            "const:10mbps",
            "--uplink",
            "const:10mbps",
            "--downlink-queue",
            "dualpi2",
        ]
        .map(String::from)
        .to_vec(),
        known_link: "const:10mbps".into(),
        delay_ms: 10,
    };
    let schemes = ["scream:ecn=l4s,max-kbps=20000", "scream:max-kbps=20000"];
    let runs: Vec<_> = std::thread::scope(|s| {
        let flows: Vec<_> = (schemes.iter())
            .map(|&scheme| {
                let path = &path;
                s.spawn(move || real_flow_through(path, scheme, 12, &[], &[]))
            })
            .collect();
        flows.into_iter().map(|f| f.join().unwrap()).collect()
    });
    // "marked CE (ECN) uplink U, downlink D packets", absent when nothing was marked.
    let link_marks = |log: &str| -> u64 {
        log.lines()
            .find_map(|l| l.split("marked CE (ECN) uplink ").nth(1))
            .and_then(|r| r.split("downlink ").nth(1))
            .and_then(|r| r.split_whitespace().next())
            .map_or(0, |n| n.parse().unwrap())
    };
    let (l4s, classic) = (&runs[0], &runs[1]);
    let queueing = |r: &Value| r["delay_p95_ms"].as_f64().unwrap() - 10.0;
    let (ql, qc) = (queueing(&l4s.0), queueing(&classic.0));
    let ce = |r: &Value| r["packets_ce"].as_u64().unwrap();
    println!(
        "ecn=l4s: {:.0} kbit/s, queueing p95 {ql:.2} ms, {} packets arrived CE, link marked {}; \
         ecn=off: {:.0} kbit/s, queueing p95 {qc:.2} ms, {} CE, link marked {}",
        l4s.0["throughput_kbps"].as_f64().unwrap(),
        ce(&l4s.0),
        link_marks(&l4s.3),
        classic.0["throughput_kbps"].as_f64().unwrap(),
        ce(&classic.0),
        link_marks(&classic.3),
    );
    assert!(ce(&l4s.0) > 0, "{}", l4s.0);
    assert_eq!(ce(&l4s.0), link_marks(&l4s.3), "{}", l4s.3);
    assert_eq!((ce(&classic.0), link_marks(&classic.3)), (0, 0));
    assert!(ql < 5.0, "{ql}");
    assert!(ql < qc, "l4s {ql} ms, classic {qc} ms");
}
