//! `wisp saturate`: the Saturator (Sprout paper §5.1.1) over real sockets. It records a link's
//! delivery opportunities as a Mahimahi trace by keeping the link backlogged with MTU-sized UDP
//! packets and writing down when each one arrives.
//!
//! The client runs behind the link under test (inside `wisp link`, a phone's tethering, …) and
//! the server on the far side. Data goes up (client → server), down, or both at once; each
//! direction's sender runs [`wisp_core::saturator::Window`] on the acknowledgements its
//! receiver returns. Acknowledgements go over a second path when the client names one
//! (`--feedback`: a UDP address reached over another interface, or `unix:PATH`, a Unix
//! datagram socket, which crosses network namespaces on one host), as the paper's second,
//! unloaded phone did; otherwise over the reverse direction of the link itself. With one
//! direction saturated that works; with both, the acknowledgements wait behind the other
//! direction's seconds of queue, the window sees both queues in its RTT and lets the forward
//! queue run dry (on Verizon-LTE-short: −20% up, −33% down; docs/saturator.md).
//!
//! The client sends a keepalive every second over the feedback path; the server ends a session
//! after `idle` without a packet from its client.
//!
//! Timing: arrivals are stamped by the kernel (`SO_TIMESTAMPNS`) on the monotonic clock. The
//! client records the downlink; the server records the uplink and hands its arrivals over at
//! the end (`Fetch`/`Report`). The server's instants become the client's through the two
//! clocks' offset: zero when both ends report the same boot id (one host), otherwise the
//! NTP-style estimate `server − (sent + received)/2` of the handshake with the smallest RTT,
//! taken before any load (its error is half the path's delay asymmetry).
//!
//! The recording starts after a warm-up (the queue builds up first) and lasts the requested
//! duration; trace timestamps count whole ms from the start of the recording, or from an
//! explicit epoch (`--epoch-ns`: inside `wisp link`, `$WISP_LINK_EPOCH_NS` puts the recording on
//! the replayed trace's own time axis).
//!
//! Deviations from the paper's tool: UDP payloads of 1472 bytes (1500-byte IPv4 packets, one
//! full MTU per trace line as Mahimahi credits it; `wisp saturate --packet-bytes` is the IP
//! packet and gives the payload behind it per address family) instead of 1400, sent with
//! don't-fragment (a packet over the path MTU fails the run, naming the size and the MTU,
//! rather than leaving as two fragments); the window rules are in [`wisp_core::saturator`].

use crate::Clock;
use crate::session::{enable_receive_timestamps, recv_stamped, set_buffers};
use crate::timer::Waiter;
use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use wisp_core::saturator::wire::{
    DATA_BODY, Dir, HEADER, MAX_PACKET, Message, Packet, Path, report_chunks,
};
use wisp_core::saturator::{Arrivals, Window, WindowConfig, clock_offset, ms_counts};
use wisp_core::stats::quantiles;
use wisp_core::{Duration, Instant};

/// The default UDP payload: a 1500-byte IPv4 packet.
pub const DEFAULT_PACKET_BYTES: usize = 1472;
/// The smallest UDP payload: a data packet's header and body.
pub const MIN_PACKET_BYTES: usize = HEADER + DATA_BODY;

/// Where feedback goes: a UDP address or a Unix datagram socket's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeedbackAddr {
    Udp(SocketAddr),
    Unix(PathBuf),
}

impl std::str::FromStr for FeedbackAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err("unix: needs a path, e.g. unix:/tmp/saturate.sock".into());
            }
            return Ok(FeedbackAddr::Unix(PathBuf::from(p)));
        }
        crate::resolve_host_port(s)
            .map(FeedbackAddr::Udp)
            .map_err(|e| format!("{e} (or unix:PATH)"))
    }
}

impl std::fmt::Display for FeedbackAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FeedbackAddr::Udp(a) => write!(f, "{a}"),
            FeedbackAddr::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum SaturateError {
    #[error("{0}")]
    Input(String),
    #[error("{what}: {err}")]
    Io { what: String, err: io::Error },
    #[error("{0}")]
    Protocol(String),
}

fn io_ctx(what: impl Into<String>) -> impl FnOnce(io::Error) -> SaturateError {
    let what = what.into();
    move |err| SaturateError::Io { what, err }
}

/// A hash of this boot's id (0 if unreadable: then the clocks are never assumed shared).
fn boot_hash() -> u64 {
    crate::boot_id().map_or(0, |s| {
        // FNV-1a: stable across builds and hosts.
        s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    })
}

/// A peer's address on one of the two paths.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Peer {
    Udp(SocketAddr),
    Unix(PathBuf),
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Udp(a) => write!(f, "{a}"),
            Peer::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// A socket of either kind.
#[derive(Debug)]
enum Sock {
    Udp(UdpSocket),
    Unix(UnixDatagram),
}

impl Sock {
    fn send_to(&self, b: &[u8], to: &Peer) -> io::Result<usize> {
        match (self, to) {
            (Sock::Udp(s), Peer::Udp(a)) => s.send_to(b, a),
            (Sock::Unix(s), Peer::Unix(p)) => s.send_to(b, p),
            _ => Err(io::Error::other("address of the wrong kind")),
        }
    }

    /// One datagram, its sender and arrival instant (kernel-stamped on UDP), or `None` when
    /// nothing is waiting.
    fn recv(&self, buf: &mut [u8], clock: &Clock) -> io::Result<Option<(usize, Peer, Instant)>> {
        let r = match self {
            Sock::Udp(s) => recv_stamped(s, buf, clock).map(|(n, a, t, _)| (n, Peer::Udp(a), t)),
            Sock::Unix(s) => s.recv_from(buf).and_then(|(n, a)| {
                let p = a.as_pathname().map(PathBuf::from).ok_or_else(|| {
                    io::Error::new(io::ErrorKind::InvalidData, "an unnamed Unix peer")
                })?;
                Ok((n, Peer::Unix(p), clock.now()))
            }),
        };
        match r {
            Ok(v) => Ok(Some(v)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            // ICMP errors of earlier packets (the peer not up yet or gone), a peer with no path.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused
                        | io::ErrorKind::Interrupted
                        | io::ErrorKind::InvalidData
                ) =>
            {
                Ok(Some((
                    0,
                    Peer::Udp(SocketAddr::from(([0, 0, 0, 0], 0))),
                    clock.now(),
                )))
            }
            Err(e) => Err(e),
        }
    }

    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        match self {
            Sock::Udp(s) => s.as_fd(),
            Sock::Unix(s) => s.as_fd(),
        }
    }
}

/// Sends, counting a full buffer (or a peer not up yet) as a dropped send, not an error.
fn send(sock: &Sock, b: &[u8], to: &Peer, failed: &mut u64) -> io::Result<bool> {
    match sock.send_to(b, to) {
        Ok(_) => Ok(true),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock
                    | io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::NotFound
                    | io::ErrorKind::Interrupted
            ) || e.raw_os_error() == Some(nix::libc::ENOBUFS) =>
        {
            *failed += 1;
            Ok(false)
        }
        // Don't-fragment is set: a datagram over the path MTU fails loudly, naming the size.
        Err(e) if e.raw_os_error() == Some(nix::libc::EMSGSIZE) => {
            let (ip, mtu) = match to {
                Peer::Udp(a) => (
                    b.len() as u32 + crate::ip_udp_header(a),
                    crate::path_mtu(unspecified_for(a).ip(), *a)
                        .map_or(String::new(), |m| format!(" of {m} bytes")),
                ),
                Peer::Unix(_) => (b.len() as u32, String::new()),
            };
            Err(io::Error::other(format!(
                "--packet-bytes {ip}: a {ip}-byte IP packet is larger than the path MTU{mtu} to {to} (packets are sent with don't-fragment; give a smaller --packet-bytes)"
            )))
        }
        Err(e) => Err(e),
    }
}

fn unspecified_for(addr: &SocketAddr) -> SocketAddr {
    if addr.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    }
}

fn udp(bind: SocketAddr) -> Result<UdpSocket, SaturateError> {
    let s = UdpSocket::bind(bind).map_err(io_ctx(format!("cannot bind UDP {bind}")))?;
    s.set_nonblocking(true)
        .map_err(io_ctx("cannot make a socket non-blocking"))?;
    // MTU-sized packets leave whole or not at all (one packet, one trace line).
    crate::set_dont_fragment(&s, bind.is_ipv6()).map_err(io_ctx("cannot set don't-fragment"))?;
    set_buffers(&s);
    // Root may go past net.core.rmem_max (the kernel doubles the figure).
    {
        use nix::sys::socket::{setsockopt, sockopt};
        let _ = setsockopt(&s, sockopt::RcvBufForce, &(16 << 20));
        let _ = setsockopt(&s, sockopt::SndBufForce, &(4 << 20));
    }
    enable_receive_timestamps(&s);
    Ok(s)
}

fn unix_bound(path: &std::path::Path) -> Result<UnixDatagram, SaturateError> {
    // A socket file left by an earlier run.
    if std::fs::symlink_metadata(path).is_ok_and(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_socket()
    }) {
        let _ = std::fs::remove_file(path);
    }
    let s =
        UnixDatagram::bind(path).map_err(io_ctx(format!("cannot bind unix:{}", path.display())))?;
    s.set_nonblocking(true)
        .map_err(io_ctx("cannot make a socket non-blocking"))?;
    Ok(s)
}

fn packet(session: u32, message: Message) -> Packet {
    Packet { session, message }
}

fn emit(p: &Packet, buf: &mut Vec<u8>) -> Result<(), SaturateError> {
    p.emit_into(buf)
        .map_err(|e| SaturateError::Input(e.to_string()))
}

fn padding(packet_bytes: usize) -> usize {
    packet_bytes - HEADER - DATA_BODY
}

/// Checks a packet size (a UDP payload).
pub fn check_packet_bytes(n: usize) -> Result<(), String> {
    if !(HEADER + DATA_BODY..=MAX_PACKET).contains(&n) {
        return Err(format!(
            "must be {} to {MAX_PACKET} bytes, not {n}",
            HEADER + DATA_BODY
        ));
    }
    Ok(())
}

/// Counts of what went wrong with received packets.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct PacketErrors {
    /// Datagrams that are not saturator packets (wrong magic, version, length, values).
    pub malformed: u64,
    /// Packets of another session.
    pub foreign: u64,
}

// ------------------------------------------------------------------------------------------
// Server

/// `wisp saturate server`'s settings.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// A second socket for feedback (UDP or Unix datagram).
    pub feedback_listen: Option<FeedbackAddr>,
    pub window: WindowConfig,
    /// Exit after this many sessions (default: serve forever).
    pub sessions: Option<u64>,
    /// A session whose client is silent this long ends.
    pub idle: Duration,
}

/// A Fetch's window (epoch, from, to), its chunks and the packets in them.
type CachedReport = ((u64, u64, u64), Vec<Vec<(u32, u16)>>, u64);

struct ServerSession {
    id: u32,
    data: Peer,
    feedback: Option<(usize, Peer)>,
    down: bool,
    packet_bytes: usize,
    sending: bool,
    window: Window,
    arrivals: Arrivals,
    ack_due: bool,
    heard: Instant,
    started: Instant,
    send_failed: u64,
    /// The downlink's RTT samples, ms.
    rtts: Vec<f64>,
    /// The last Fetch's window and its chunks.
    report: Option<CachedReport>,
}

/// Serves saturator clients, one session at a time, until `stop` is set or `sessions` have
/// ended.
pub fn server(
    cfg: &ServerConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<(), SaturateError> {
    cfg.window.validate().map_err(SaturateError::Input)?;
    let clock = Clock::new();
    let boot = boot_hash();
    let mut socks = vec![Sock::Udp(udp(cfg.listen)?)];
    match &cfg.feedback_listen {
        Some(FeedbackAddr::Udp(a)) => socks.push(Sock::Udp(udp(*a)?)),
        Some(FeedbackAddr::Unix(p)) => socks.push(Sock::Unix(unix_bound(p)?)),
        None => {}
    }
    let mut waiter = Waiter::new(Duration::ZERO).map_err(io_ctx("cannot create a timer"))?;
    for (i, s) in socks.iter().enumerate() {
        waiter.add(s.fd(), i as u64).map_err(io_ctx("epoll"))?;
    }
    progress(&format!(
        "wisp saturate server: listening on {}{}",
        cfg.listen,
        cfg.feedback_listen
            .as_ref()
            .map(|f| format!(", feedback on {f}"))
            .unwrap_or_default()
    ));
    let mut session: Option<ServerSession> = None;
    let mut errors = PacketErrors::default();
    let mut done = 0u64;
    let (mut buf, mut rx, mut ready) = (Vec::with_capacity(2048), vec![0u8; 65536], vec![]);
    let result = loop {
        if stop.load(Ordering::Relaxed) {
            break Ok(());
        }
        let now = clock.now();
        let mut blocked = false;
        if let Some(s) = session.as_mut().filter(|s| s.sending && s.down) {
            while s.window.can_send() {
                let seq = s.window.sent();
                emit(
                    &packet(
                        s.id,
                        Message::Data {
                            dir: Dir::Down,
                            seq,
                            sent_ns: clock.now().as_nanos(),
                            padding: padding(s.packet_bytes),
                        },
                    ),
                    &mut buf,
                )?;
                if !send(&socks[0], &buf, &s.data, &mut s.send_failed).map_err(io_ctx("send"))? {
                    blocked = true;
                    break;
                }
                s.window.on_send();
            }
        }
        if let Some(s) = &session {
            if now - s.heard.min(now) > cfg.idle {
                progress(&format!(
                    "wisp saturate server: session {:08x} ended: the client was silent for {:.0} s",
                    s.id,
                    cfg.idle.as_secs_f64()
                ));
                session = None;
                done += 1;
                if cfg.sessions.is_some_and(|n| done >= n) {
                    break Ok(());
                }
            }
        }
        let wait = if blocked {
            Duration::from_millis(1)
        } else {
            Duration::from_millis(100)
        };
        waiter
            .wait(Some(clock.now() + wait), &mut ready)
            .map_err(io_ctx("wait"))?;
        let mut ended = false;
        for (i, sock) in socks.iter().enumerate() {
            while let Some((n, from, at)) = sock.recv(&mut rx, &clock).map_err(io_ctx("receive"))? {
                if n == 0 {
                    continue;
                }
                let p = match Packet::parse(&rx[..n]) {
                    Ok(p) => p,
                    Err(e) => {
                        errors.malformed += 1;
                        if errors.malformed <= 3 {
                            progress(&format!(
                                "wisp saturate server: malformed packet from {from}: {e}"
                            ));
                        }
                        continue;
                    }
                };
                let now = clock.now();
                if let Message::Hello {
                    path,
                    up,
                    down,
                    packet_bytes,
                    client_ns,
                    ..
                } = p.message
                {
                    if session.as_ref().is_some_and(|s| s.id != p.session) {
                        emit(
                            &packet(
                                p.session,
                                Message::Error("the server is busy with another client".into()),
                            ),
                            &mut buf,
                        )?;
                        let _ = sock.send_to(&buf, &from);
                        continue;
                    }
                    if check_packet_bytes(usize::from(packet_bytes)).is_err() {
                        emit(
                            &packet(
                                p.session,
                                Message::Error(format!("bad packet size {packet_bytes}")),
                            ),
                            &mut buf,
                        )?;
                        let _ = sock.send_to(&buf, &from);
                        continue;
                    }
                    let s = session.get_or_insert_with(|| {
                        progress(&format!(
                            "wisp saturate server: session {:08x} from {from} ({}{})",
                            p.session,
                            if up { "up" } else { "" },
                            if down { " down" } else { "" }
                        ));
                        ServerSession {
                            id: p.session,
                            data: from.clone(),
                            feedback: None,
                            down,
                            packet_bytes: usize::from(packet_bytes),
                            sending: false,
                            window: Window::new(cfg.window),
                            arrivals: Arrivals::default(),
                            ack_due: false,
                            heard: now,
                            started: now,
                            send_failed: 0,
                            rtts: vec![],
                            report: None,
                        }
                    });
                    match path {
                        Path::Data => s.data = from.clone(),
                        Path::Feedback => s.feedback = Some((i, from.clone())),
                    }
                    s.heard = now;
                    emit(
                        &packet(
                            p.session,
                            Message::HelloAck {
                                path,
                                echo_ns: client_ns,
                                server_ns: clock.now().as_nanos(),
                                boot,
                            },
                        ),
                        &mut buf,
                    )?;
                    let _ = sock.send_to(&buf, &from);
                    continue;
                }
                let Some(s) = session.as_mut().filter(|s| s.id == p.session) else {
                    errors.foreign += 1;
                    continue;
                };
                s.heard = now;
                let reply_to = |s: &ServerSession| -> (usize, Peer) {
                    s.feedback.clone().unwrap_or((0, s.data.clone()))
                };
                match p.message {
                    Message::Start => s.sending = true,
                    Message::Data {
                        dir: Dir::Up,
                        seq,
                        sent_ns,
                        ..
                    } => {
                        s.arrivals.on_data(at, seq, sent_ns);
                        s.ack_due = true;
                    }
                    Message::Ack {
                        dir: Dir::Down,
                        highest_seq,
                        echo_ns,
                        held_us,
                        ..
                    } => {
                        let counted = s.window.on_ack(
                            now,
                            highest_seq,
                            Instant::from_nanos(echo_ns),
                            Duration::from_micros(u64::from(held_us)),
                        );
                        if let Some(r) = s.window.rtt().filter(|_| counted) {
                            s.rtts.push(r.as_millis_f64());
                        }
                    }
                    Message::Stop => {
                        s.sending = false;
                        emit(&packet(s.id, Message::StopAck), &mut buf)?;
                        let (k, to) = reply_to(s);
                        let _ = socks[k].send_to(&buf, &to);
                    }
                    Message::Fetch {
                        index,
                        epoch_ns,
                        from_ns,
                        to_ns,
                    } => {
                        let key = (epoch_ns, from_ns, to_ns);
                        if s.report.as_ref().is_none_or(|r| r.0 != key) {
                            let counts = ms_counts(
                                &s.arrivals.times,
                                Instant::from_nanos(epoch_ns),
                                Instant::from_nanos(from_ns),
                                Instant::from_nanos(to_ns),
                            );
                            let packets = counts.iter().map(|&(_, n)| u64::from(n)).sum();
                            s.report = Some((key, report_chunks(&counts), packets));
                        }
                        let Some((_, chunks, packets)) = &s.report else {
                            continue;
                        };
                        let message = match chunks.get(index as usize) {
                            Some(c) => Message::Report {
                                index,
                                chunks: chunks.len() as u32,
                                packets: *packets,
                                entries: c.clone(),
                            },
                            None => Message::Error(format!(
                                "no chunk {index} (there are {})",
                                chunks.len()
                            )),
                        };
                        emit(&packet(s.id, message), &mut buf)?;
                        let (k, to) = reply_to(s);
                        let _ = socks[k].send_to(&buf, &to);
                    }
                    Message::Bye => ended = true,
                    _ => {}
                }
            }
        }
        if let Some(s) = session.as_mut().filter(|s| s.ack_due) {
            s.ack_due = false;
            if let Some((seq, sent_ns, at)) = s.arrivals.highest {
                let now = clock.now();
                emit(
                    &packet(
                        s.id,
                        Message::Ack {
                            dir: Dir::Up,
                            received: s.arrivals.times.len() as u64,
                            highest_seq: seq,
                            echo_ns: sent_ns,
                            held_us: u32::try_from((now - at.min(now)).as_micros())
                                .unwrap_or(u32::MAX),
                        },
                    ),
                    &mut buf,
                )?;
                let (k, to) = s.feedback.clone().unwrap_or((0, s.data.clone()));
                let mut failed = 0;
                send(&socks[k], &buf, &to, &mut failed).map_err(io_ctx("send"))?;
            }
        }
        if ended {
            if let Some(mut s) = session.take() {
                let o = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0} ms"));
                let q = quantiles(&mut s.rtts, &[0.5, 0.95]);
                let (p50, p95) = (q[0], q[1]);
                progress(&format!(
                    "wisp saturate server: session {:08x} ended after {:.1} s: received {} packets up, sent {} down ({} sends refused; downlink window {}, RTT p50 {} p95 {})",
                    s.id,
                    (clock.now() - s.started).as_secs_f64(),
                    s.arrivals.times.len(),
                    s.window.sent(),
                    s.send_failed,
                    s.window.size(),
                    o(p50),
                    o(p95)
                ));
            }
            done += 1;
            if cfg.sessions.is_some_and(|n| done >= n) {
                break Ok(());
            }
        }
    };
    if errors.malformed > 0 || errors.foreign > 0 {
        progress(&format!(
            "wisp saturate server: {} malformed packets, {} of no current session",
            errors.malformed, errors.foreign
        ));
    }
    if let Some(FeedbackAddr::Unix(p)) = &cfg.feedback_listen {
        let _ = std::fs::remove_file(p);
    }
    result
}

// ------------------------------------------------------------------------------------------
// Client

/// `wisp saturate client`'s settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub server: SocketAddr,
    pub feedback: Option<FeedbackAddr>,
    pub up: bool,
    pub down: bool,
    /// How long the recording lasts, after the warm-up.
    pub duration: Duration,
    pub warmup: Duration,
    /// UDP payload bytes of each packet (the IP packet less [`crate::ip_udp_header`]).
    pub packet_bytes: usize,
    pub window: WindowConfig,
    /// Trace timestamps count from this monotonic instant (default: the recording's start).
    pub epoch: Option<Instant>,
}

/// One recorded direction.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DirectionRecord {
    /// `(ms since the epoch, packets)` in increasing ms.
    #[serde(skip)]
    pub counts: Vec<(u64, u32)>,
    /// Packets recorded (trace lines).
    pub packets: u64,
    /// Their rate, crediting 1500 bytes per line, over the recording window.
    pub mean_mbps: f64,
    /// Packets the sender sent, over the whole session.
    pub sent: u64,
    /// The sender's window at the end, and its median and 95th-percentile RTT over the
    /// recording, ms.
    pub window_end: u32,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    /// Share of the recording's acknowledgements whose RTT was below the low threshold.
    pub rtt_below_low: Option<f64>,
    /// Sends the socket refused (full buffer).
    pub send_failed: u64,
}

/// What a client run measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ClientReport {
    /// The trace's time zero (monotonic ns on the client's clock), and the recording's window
    /// in ms since it.
    pub epoch_ns: u64,
    pub from_ms: f64,
    pub to_ms: f64,
    /// Whether both ends share one clock (same boot id); else the estimated offset
    /// (server − client) and the RTT of the handshake it came from.
    pub same_clock: bool,
    pub clock_offset_ns: i64,
    pub handshake_rtt_ms: f64,
    pub feedback: Option<String>,
    pub up: Option<DirectionRecord>,
    pub down: Option<DirectionRecord>,
    pub errors: PacketErrors,
}

/// The client's sockets: the data path and, optionally, the feedback path.
struct Paths {
    socks: Vec<Sock>,
    peers: Vec<Peer>,
    /// A Unix socket file of ours, removed at the end.
    own_path: Option<PathBuf>,
}

impl Paths {
    /// The feedback path's index (the data path's without one).
    fn fb(&self) -> usize {
        self.socks.len() - 1
    }

    /// Tells the server the session is over (best effort, three times over every path, as the
    /// feedback path may be the broken one): on an interruption or a failure, so that it stops
    /// sending and serves the next client at once rather than after its idle timeout.
    fn bye(&self, session: u32) {
        let mut buf = Vec::with_capacity(64);
        if emit(&packet(session, Message::Bye), &mut buf).is_ok() {
            for _ in 0..3 {
                for (sock, peer) in self.socks.iter().zip(&self.peers) {
                    let _ = sock.send_to(&buf, peer);
                }
            }
        }
    }
}

impl Drop for Paths {
    fn drop(&mut self) {
        if let Some(p) = &self.own_path {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn open_paths(cfg: &ClientConfig, session: u32) -> Result<Paths, SaturateError> {
    let data = udp(unspecified_for(&cfg.server))?;
    let mut socks = vec![Sock::Udp(data)];
    let mut peers = vec![Peer::Udp(cfg.server)];
    let mut own_path = None;
    match &cfg.feedback {
        Some(FeedbackAddr::Udp(a)) => {
            socks.push(Sock::Udp(udp(unspecified_for(a))?));
            peers.push(Peer::Udp(*a));
        }
        Some(FeedbackAddr::Unix(p)) => {
            let mine = PathBuf::from(format!(
                "{}.client-{}-{session:08x}",
                p.display(),
                std::process::id()
            ));
            socks.push(Sock::Unix(unix_bound(&mine)?));
            own_path = Some(mine);
            peers.push(Peer::Unix(p.clone()));
        }
        None => {}
    }
    Ok(Paths {
        socks,
        peers,
        own_path,
    })
}

/// Runs one recording against a server; `progress` gets a line per second.
pub fn client(
    cfg: &ClientConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<ClientReport, SaturateError> {
    cfg.window.validate().map_err(SaturateError::Input)?;
    check_packet_bytes(cfg.packet_bytes)
        .map_err(|e| SaturateError::Input(format!("packet size: {e}")))?;
    if !cfg.up && !cfg.down {
        return Err(SaturateError::Input("no direction to saturate".into()));
    }
    // Both directions carry packets of this size: refuse one the route to the server cannot
    // carry whole before the handshake (packets are sent with don't-fragment).
    let ip = cfg.packet_bytes as u32 + crate::ip_udp_header(&cfg.server);
    if let Ok(mtu) = crate::path_mtu(unspecified_for(&cfg.server).ip(), cfg.server)
        && ip > mtu
    {
        return Err(SaturateError::Protocol(format!(
            "--packet-bytes {ip}: a {ip}-byte IP packet is larger than the path MTU of {mtu} bytes to {} (packets are sent with don't-fragment; give --packet-bytes {mtu} or less)",
            cfg.server
        )));
    }
    let clock = Clock::new();
    let session: u32 = rand::random::<u32>() | 1;
    let paths = open_paths(cfg, session)?;
    let r = client_session(cfg, stop, progress, &paths, session, clock);
    if r.is_err() {
        paths.bye(session);
    }
    r
}

/// The client's session over its open paths: handshake, saturation, the fetch of the uplink's
/// arrivals, goodbye.
fn client_session(
    cfg: &ClientConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
    paths: &Paths,
    session: u32,
    clock: Clock,
) -> Result<ClientReport, SaturateError> {
    let mut waiter = Waiter::new(Duration::ZERO).map_err(io_ctx("cannot create a timer"))?;
    for (i, s) in paths.socks.iter().enumerate() {
        waiter.add(s.fd(), i as u64).map_err(io_ctx("epoll"))?;
    }
    let boot = boot_hash();
    let mut errors = PacketErrors::default();
    let (mut buf, mut rx, mut ready) = (Vec::with_capacity(2048), vec![0u8; 65536], vec![]);
    let mut failed = 0u64;

    // Handshake: five samples of the data path (for the clock offset), one of the feedback path.
    let t0 = clock.now();
    let mut samples: Vec<(u64, u64, u64, u64)> = vec![];
    let mut fb_ok = cfg.feedback.is_none();
    let mut next_hello = t0;
    while samples.len() < 5 || !fb_ok {
        if stop.load(Ordering::Relaxed) {
            return Err(SaturateError::Protocol("interrupted".into()));
        }
        let now = clock.now();
        if now - t0 > Duration::from_secs(5) {
            return Err(SaturateError::Protocol(if samples.is_empty() {
                format!(
                    "no answer from {} within 5 s (is `wisp saturate server` running there?)",
                    cfg.server
                )
            } else {
                format!(
                    "no answer over the feedback path {} within 5 s (does the server listen there: --feedback-listen?)",
                    cfg.feedback
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default()
                )
            }));
        }
        if now >= next_hello {
            for (k, path) in [(0, Path::Data), (paths.fb(), Path::Feedback)] {
                // The feedback hello needs a feedback path, and only until it is answered.
                if path == Path::Feedback && (k == 0 || fb_ok) {
                    continue;
                }
                emit(
                    &packet(
                        session,
                        Message::Hello {
                            path,
                            up: cfg.up,
                            down: cfg.down,
                            packet_bytes: cfg.packet_bytes as u16,
                            client_ns: clock.now().as_nanos(),
                            boot,
                        },
                    ),
                    &mut buf,
                )?;
                send(&paths.socks[k], &buf, &paths.peers[k], &mut failed)
                    .map_err(io_ctx("send"))?;
            }
            next_hello = now
                + if samples.is_empty() {
                    Duration::from_millis(100)
                } else {
                    Duration::from_millis(20)
                };
        }
        waiter
            .wait(Some(next_hello), &mut ready)
            .map_err(io_ctx("wait"))?;
        for sock in &paths.socks {
            while let Some((n, _, at)) = sock.recv(&mut rx, &clock).map_err(io_ctx("receive"))? {
                if n == 0 {
                    continue;
                }
                match Packet::parse(&rx[..n]) {
                    Ok(p) if p.session != session => errors.foreign += 1,
                    Ok(Packet {
                        message:
                            Message::HelloAck {
                                path,
                                echo_ns,
                                server_ns,
                                boot: b,
                            },
                        ..
                    }) => match path {
                        Path::Data => samples.push((echo_ns, server_ns, at.as_nanos(), b)),
                        Path::Feedback => fb_ok = true,
                    },
                    Ok(Packet {
                        message: Message::Error(e),
                        ..
                    }) => return Err(SaturateError::Protocol(format!("the server: {e}"))),
                    Ok(_) => {}
                    Err(_) => errors.malformed += 1,
                }
            }
        }
    }
    let same_clock = boot != 0 && samples.iter().all(|s| s.3 == boot);
    let (estimate, handshake_rtt) =
        clock_offset(&samples.iter().map(|s| (s.0, s.1, s.2)).collect::<Vec<_>>())
            .ok_or_else(|| SaturateError::Protocol("no usable handshake".into()))?;
    let offset: i64 = if same_clock { 0 } else { estimate };
    let to_server = |t: Instant| -> u64 {
        (i128::from(t.as_nanos()) + i128::from(offset)).clamp(0, i128::from(u64::MAX)) as u64
    };
    progress(&format!(
        "wisp saturate: session {session:08x} with {}: handshake RTT {:.2} ms, {}; saturating {} for {:.1} s + {:.1} s of warm-up",
        cfg.server,
        handshake_rtt.as_millis_f64(),
        if same_clock {
            "one clock (same host)".to_string()
        } else {
            format!("clock offset {:.3} ms", offset as f64 / 1e6)
        },
        match (cfg.up, cfg.down) {
            (true, true) => "both directions",
            (true, false) => "the uplink",
            _ => "the downlink",
        },
        cfg.duration.as_secs_f64(),
        cfg.warmup.as_secs_f64()
    ));

    // Saturation.
    let start = clock.now();
    let from = start + cfg.warmup;
    let to = from + cfg.duration;
    let epoch = cfg.epoch.unwrap_or(from);
    let mut up = cfg.up.then(|| Window::new(cfg.window));
    let mut down = Arrivals::default();
    let mut down_started = !cfg.down;
    let mut next_start = start;
    let mut ack_due = false;
    let mut rtts: Vec<f64> = vec![];
    let low = cfg.window.low_rtt.as_millis_f64();
    let mut next_progress = start + Duration::from_secs(1);
    let mut last = (start, 0u64, 0usize);
    let pad = padding(cfg.packet_bytes);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(SaturateError::Protocol("interrupted".into()));
        }
        let now = clock.now();
        if now >= to {
            break;
        }
        // `Start` asks for the downlink (every 200 ms until it flows) and is the session's
        // keepalive (every second, over the feedback path: it reaches the server through an
        // outage of the link under test).
        if now >= next_start {
            emit(&packet(session, Message::Start), &mut buf)?;
            let k = if down_started { paths.fb() } else { 0 };
            send(&paths.socks[k], &buf, &paths.peers[k], &mut failed).map_err(io_ctx("send"))?;
            next_start = now
                + if down_started {
                    Duration::from_secs(1)
                } else {
                    Duration::from_millis(200)
                };
        }
        let mut blocked = false;
        if let Some(w) = up.as_mut() {
            while w.can_send() {
                emit(
                    &packet(
                        session,
                        Message::Data {
                            dir: Dir::Up,
                            seq: w.sent(),
                            sent_ns: clock.now().as_nanos(),
                            padding: pad,
                        },
                    ),
                    &mut buf,
                )?;
                if !send(&paths.socks[0], &buf, &paths.peers[0], &mut failed)
                    .map_err(io_ctx("send"))?
                {
                    blocked = true;
                    break;
                }
                w.on_send();
            }
        }
        if now >= next_progress {
            let secs = (now - last.0).as_secs_f64();
            let ip_bytes = cfg.packet_bytes as f64 + f64::from(crate::ip_udp_header(&cfg.server));
            let mbps = |pkts: f64| pkts * ip_bytes * 8.0 / secs / 1e6;
            let mut line = format!("t={:5.1} s", (now - start).as_secs_f64());
            if now < from {
                line.push_str(" (warm-up)");
            }
            if let Some(w) = &up {
                line.push_str(&format!(
                    " | up: window {} in flight {} rtt {} sent {:.2} Mbit/s",
                    w.size(),
                    w.in_flight(),
                    w.rtt()
                        .map_or("-".into(), |r| format!("{:.0} ms", r.as_millis_f64())),
                    mbps((w.sent() - last.1) as f64)
                ));
            }
            if cfg.down {
                line.push_str(&format!(
                    " | down: received {:.2} Mbit/s",
                    mbps((down.times.len() - last.2) as f64)
                ));
            }
            progress(&line);
            last = (now, up.as_ref().map_or(0, Window::sent), down.times.len());
            next_progress = now + Duration::from_secs(1);
        }
        let deadline = if blocked {
            now + Duration::from_millis(1)
        } else {
            next_progress.min(to).min(next_start)
        };
        waiter
            .wait(Some(deadline), &mut ready)
            .map_err(io_ctx("wait"))?;
        for sock in &paths.socks {
            while let Some((n, _, at)) = sock.recv(&mut rx, &clock).map_err(io_ctx("receive"))? {
                if n == 0 {
                    continue;
                }
                let p = match Packet::parse(&rx[..n]) {
                    Ok(p) if p.session == session => p,
                    Ok(_) => {
                        errors.foreign += 1;
                        continue;
                    }
                    Err(_) => {
                        errors.malformed += 1;
                        continue;
                    }
                };
                match p.message {
                    Message::Data {
                        dir: Dir::Down,
                        seq,
                        sent_ns,
                        ..
                    } => {
                        down.on_data(at, seq, sent_ns);
                        down_started = true;
                        ack_due = true;
                    }
                    Message::Ack {
                        dir: Dir::Up,
                        highest_seq,
                        echo_ns,
                        held_us,
                        ..
                    } => {
                        if let Some(w) = up.as_mut() {
                            let now = clock.now();
                            if w.on_ack(
                                now,
                                highest_seq,
                                Instant::from_nanos(echo_ns),
                                Duration::from_micros(u64::from(held_us)),
                            ) && now >= from
                            {
                                if let Some(r) = w.rtt() {
                                    rtts.push(r.as_millis_f64());
                                }
                            }
                        }
                    }
                    Message::Error(e) => {
                        return Err(SaturateError::Protocol(format!("the server: {e}")));
                    }
                    _ => {}
                }
            }
        }
        if ack_due {
            ack_due = false;
            if let Some((seq, sent_ns, at)) = down.highest {
                let now = clock.now();
                emit(
                    &packet(
                        session,
                        Message::Ack {
                            dir: Dir::Down,
                            received: down.times.len() as u64,
                            highest_seq: seq,
                            echo_ns: sent_ns,
                            held_us: u32::try_from((now - at.min(now)).as_micros())
                                .unwrap_or(u32::MAX),
                        },
                    ),
                    &mut buf,
                )?;
                let k = paths.fb();
                send(&paths.socks[k], &buf, &paths.peers[k], &mut failed)
                    .map_err(io_ctx("send"))?;
            }
        }
    }

    // Stop the downlink, then fetch the uplink's arrivals. Both over the feedback path if there
    // is one; requests are repeated until answered (the data path may still hold seconds of
    // queue).
    let fb = paths.fb();
    let mut stopped = !cfg.down;
    let mut chunks: BTreeMap<u32, Vec<(u32, u16)>> = BTreeMap::new();
    let mut total: Option<(u32, u64)> = None;
    let end_start = clock.now();
    let mut next_try = end_start;
    let fetch_window = (to_server(epoch), to_server(from), to_server(to));
    loop {
        let want = if !stopped {
            Some(Message::Stop)
        } else if cfg.up {
            let next = (0..total.map_or(1, |t| t.0)).find(|i| !chunks.contains_key(i));
            next.map(|index| Message::Fetch {
                index,
                epoch_ns: fetch_window.0,
                from_ns: fetch_window.1,
                to_ns: fetch_window.2,
            })
        } else {
            None
        };
        let Some(want) = want else { break };
        let now = clock.now();
        if stop.load(Ordering::Relaxed) {
            return Err(SaturateError::Protocol("interrupted".into()));
        }
        if now - end_start > Duration::from_secs(30) {
            return Err(SaturateError::Protocol(
                "the server did not answer within 30 s after the recording".into(),
            ));
        }
        if now >= next_try {
            emit(&packet(session, want), &mut buf)?;
            send(&paths.socks[fb], &buf, &paths.peers[fb], &mut failed).map_err(io_ctx("send"))?;
            next_try = now + Duration::from_millis(250);
        }
        waiter
            .wait(Some(next_try), &mut ready)
            .map_err(io_ctx("wait"))?;
        for sock in &paths.socks {
            while let Some((n, _, _)) = sock.recv(&mut rx, &clock).map_err(io_ctx("receive"))? {
                if n == 0 {
                    continue;
                }
                match Packet::parse(&rx[..n]) {
                    Ok(p) if p.session != session => errors.foreign += 1,
                    Ok(p) => match p.message {
                        Message::StopAck => {
                            stopped = true;
                            next_try = clock.now();
                        }
                        Message::Report {
                            index,
                            chunks: n,
                            packets,
                            entries,
                        } => {
                            if total.is_none() {
                                total = Some((n.max(1), packets));
                            }
                            chunks.entry(index).or_insert(entries);
                            next_try = clock.now();
                        }
                        Message::Error(e) => {
                            return Err(SaturateError::Protocol(format!("the server: {e}")));
                        }
                        _ => {}
                    },
                    Err(_) => errors.malformed += 1,
                }
            }
        }
    }
    for _ in 0..3 {
        emit(&packet(session, Message::Bye), &mut buf)?;
        send(&paths.socks[fb], &buf, &paths.peers[fb], &mut failed).map_err(io_ctx("send"))?;
    }

    let window_ms = cfg.duration.as_millis_f64();
    let record = |counts: Vec<(u64, u32)>,
                  sent: u64,
                  window_end: u32,
                  rtts: &mut Vec<f64>,
                  send_failed: u64| {
        let packets: u64 = counts.iter().map(|&(_, n)| u64::from(n)).sum();
        let below = (!rtts.is_empty())
            .then(|| rtts.iter().filter(|&&r| r < low).count() as f64 / rtts.len() as f64);
        let q = quantiles(rtts, &[0.5, 0.95]);
        DirectionRecord {
            counts,
            packets,
            mean_mbps: packets as f64 * 1500.0 * 8.0 / (window_ms / 1e3) / 1e6,
            sent,
            window_end,
            rtt_p50_ms: q[0],
            rtt_p95_ms: q[1],
            rtt_below_low: below,
            send_failed,
        }
    };
    let up_record = up.as_ref().map(|w| {
        let mut counts: Vec<(u64, u32)> = vec![];
        for c in chunks.values() {
            for &(ms, n) in c {
                match counts.last_mut() {
                    Some((t, k)) if *t == u64::from(ms) => *k += u32::from(n),
                    _ => counts.push((u64::from(ms), u32::from(n))),
                }
            }
        }
        record(counts, w.sent(), w.size(), &mut rtts, failed)
    });
    let down_record = cfg.down.then(|| {
        record(
            ms_counts(&down.times, epoch, from, to),
            down.highest.map_or(0, |h| h.0 + 1),
            0,
            &mut vec![],
            0,
        )
    });
    if let (Some(r), Some((_, packets))) = (&up_record, total) {
        if r.packets != packets {
            return Err(SaturateError::Protocol(format!(
                "the uplink report is incomplete: {} of {packets} packets",
                r.packets
            )));
        }
    }
    let ms_since =
        |t: Instant| (i128::from(t.as_nanos()) - i128::from(epoch.as_nanos())) as f64 / 1e6;
    Ok(ClientReport {
        epoch_ns: epoch.as_nanos(),
        from_ms: ms_since(from),
        to_ms: ms_since(to),
        same_clock,
        clock_offset_ns: offset,
        handshake_rtt_ms: handshake_rtt.as_millis_f64(),
        feedback: cfg.feedback.as_ref().map(ToString::to_string),
        up: up_record,
        down: down_record,
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_addresses_parse() {
        assert_eq!(
            "unix:/tmp/x".parse::<FeedbackAddr>(),
            Ok(FeedbackAddr::Unix("/tmp/x".into()))
        );
        assert_eq!(
            "10.0.0.1:9".parse::<FeedbackAddr>(),
            Ok(FeedbackAddr::Udp("10.0.0.1:9".parse().unwrap()))
        );
        assert!("unix:".parse::<FeedbackAddr>().is_err());
        assert!("nowhere".parse::<FeedbackAddr>().is_err());
    }

    /// A one-direction and a two-direction recording over loopback, feedback over a Unix
    /// socket: every packet the client sent up is in the report, the windows stay in bounds.
    #[test]
    fn loopback_recording_in_both_directions() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("fb.sock");
        let port = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listen: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let window = WindowConfig {
            max: 40,
            ..WindowConfig::default()
        };
        let scfg = ServerConfig {
            listen,
            feedback_listen: Some(FeedbackAddr::Unix(sock.clone())),
            window,
            sessions: Some(1),
            idle: Duration::from_secs(5),
        };
        let server = std::thread::spawn(move || {
            let stop = AtomicBool::new(false);
            server(&scfg, &stop, &mut |_| {})
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        let cfg = ClientConfig {
            server: listen,
            feedback: Some(FeedbackAddr::Unix(sock)),
            up: true,
            down: true,
            duration: Duration::from_millis(500),
            warmup: Duration::from_millis(100),
            packet_bytes: 200,
            window,
            epoch: None,
        };
        let stop = AtomicBool::new(false);
        let r = client(&cfg, &stop, &mut |_| {}).unwrap();
        server.join().unwrap().unwrap();
        assert!(r.same_clock);
        assert_eq!(r.from_ms, 0.0);
        assert_eq!(r.to_ms, 500.0);
        for d in [r.up.as_ref().unwrap(), r.down.as_ref().unwrap()] {
            assert!(d.packets > 100, "{d:?}");
            assert!(d.counts.iter().all(|&(ms, _)| ms < 500), "{d:?}");
            assert!(d.counts.windows(2).all(|w| w[0].0 < w[1].0));
        }
        let up = r.up.unwrap();
        assert!(up.window_end <= 40 && up.window_end >= 20);
        // Loopback RTTs are far below 750 ms: the window sits at its maximum.
        assert_eq!(up.window_end, 40);
        assert_eq!(r.errors.malformed, 0);
    }
}
