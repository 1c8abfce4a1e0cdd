//! `wisp saturate`: the Saturator (Sprout paper §5.1.1) over real sockets. It records a link's
//! delivery opportunities as a Mahimahi trace by keeping the link backlogged with MTU-sized UDP
//! packets and writing down when each one arrives.
//!
//! The sessions themselves are sans-IO state machines in [`wisp_core::saturator`]
//! ([`ClientSession`], [`Server`]): this module opens the sockets, reads the clock, stamps
//! arrivals, and runs the loops that feed them datagrams and the time and send what they hand
//! out.
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
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
pub use wisp_core::saturator::wire::{MIN_PACKET_BYTES, check_packet_bytes};
use wisp_core::saturator::wire::{Message, Packet, Path};
use wisp_core::saturator::{
    ClientEvent, ClientFailure, ClientSession, ClientSettings, Datagram, Progress, Server,
    ServerEvent, ServerSettings, SessionEnd, Transmit, WindowConfig,
};
pub use wisp_core::saturator::{ClientReport, DirectionRecord, PacketErrors, RecordingSettings};
use wisp_core::{Duration, Instant};

/// The default UDP payload: a 1500-byte IPv4 packet.
pub const DEFAULT_PACKET_BYTES: usize = 1472;

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

/// Sends: `Ok(false)` when the socket refused the datagram (a full buffer, or a peer not up
/// yet), which is not an error.
fn send(sock: &Sock, b: &[u8], to: &Peer) -> io::Result<bool> {
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

fn emit(p: &Packet, buf: &mut Vec<u8>) -> Result<(), SaturateError> {
    p.emit_into(buf)
        .map_err(|e| SaturateError::Input(e.to_string()))
}

/// Sends a state machine's packet to `to` over `sock`: `Ok(false)` when the socket refused it
/// (a full buffer); a best-effort answer that cannot be sent is let go.
fn transmit<A>(
    t: &Transmit<A>,
    sock: &Sock,
    to: &Peer,
    buf: &mut Vec<u8>,
) -> Result<bool, SaturateError> {
    emit(&t.packet, buf)?;
    if t.best_effort {
        let _ = sock.send_to(buf, to);
        return Ok(true);
    }
    send(sock, buf, to).map_err(io_ctx("send"))
}

/// The socket of a path: the data path's is the first, the feedback path's the second.
fn socket_index(path: Path) -> usize {
    match path {
        Path::Data => 0,
        Path::Feedback => 1,
    }
}

/// An epoll set over `socks`.
fn waiter_for(socks: &[Sock]) -> Result<Waiter, SaturateError> {
    let waiter = Waiter::new(Duration::ZERO).map_err(io_ctx("cannot create a timer"))?;
    for (i, s) in socks.iter().enumerate() {
        waiter.add(s.fd(), i as u64).map_err(io_ctx("epoll"))?;
    }
    Ok(waiter)
}

/// Reads every datagram waiting on `socks`, handing each (its path, sender, arrival and bytes)
/// to `on`.
fn read_all(
    socks: &[Sock],
    clock: &Clock,
    rx: &mut [u8],
    mut on: impl FnMut(Datagram<'_, Peer>),
) -> Result<(), SaturateError> {
    for (sock, path) in socks.iter().zip([Path::Data, Path::Feedback]) {
        while let Some((n, from, at)) = sock.recv(rx, clock).map_err(io_ctx("receive"))? {
            if n > 0 {
                on(Datagram {
                    path,
                    from,
                    at,
                    bytes: &rx[..n],
                });
            }
        }
    }
    Ok(())
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

/// Serves saturator clients, one session at a time, until `stop` is set or `sessions` have
/// ended.
pub fn server(
    cfg: &ServerConfig,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<(), SaturateError> {
    cfg.window.validate().map_err(SaturateError::Input)?;
    let mut socks = vec![Sock::Udp(udp(cfg.listen)?)];
    match &cfg.feedback_listen {
        Some(FeedbackAddr::Udp(a)) => socks.push(Sock::Udp(udp(*a)?)),
        Some(FeedbackAddr::Unix(p)) => socks.push(Sock::Unix(unix_bound(p)?)),
        None => {}
    }
    let waiter = waiter_for(&socks)?;
    progress(&format!(
        "wisp saturate server: listening on {}{}",
        cfg.listen,
        cfg.feedback_listen
            .as_ref()
            .map(|f| format!(", feedback on {f}"))
            .unwrap_or_default()
    ));
    let mut sm = Server::new(ServerSettings {
        window: cfg.window,
        sessions: cfg.sessions,
        idle: cfg.idle,
        boot: boot_hash(),
    });
    let result = serve(&mut sm, &socks, waiter, stop, progress);
    let errors = sm.errors();
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

/// The server's loop over its open sockets.
fn serve(
    sm: &mut Server<Peer>,
    socks: &[Sock],
    mut waiter: Waiter,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<(), SaturateError> {
    let clock = Clock::new();
    let (mut buf, mut rx, mut ready) = (Vec::with_capacity(2048), vec![0u8; 65536], vec![]);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        sm.on_timeout(clock.now());
        while let Some(t) = sm.poll_transmit(clock.now()) {
            if !transmit(&t, &socks[socket_index(t.path)], &t.to, &mut buf)? {
                sm.on_send_refused(clock.now(), &t);
            }
        }
        while let Some(e) = sm.poll_event() {
            progress(&server_line(&e));
        }
        if sm.is_finished() {
            return Ok(());
        }
        // At least every 100 ms: `stop` is polled.
        let poll = clock.now() + Duration::from_millis(100);
        let deadline = sm.poll_timeout().map_or(poll, |t| t.min(poll));
        waiter
            .wait(Some(deadline), &mut ready)
            .map_err(io_ctx("wait"))?;
        read_all(socks, &clock, &mut rx, |d| sm.on_datagram(clock.now(), d))?;
    }
}

/// The server's line for an event.
fn server_line(e: &ServerEvent<Peer>) -> String {
    match e {
        ServerEvent::Started {
            session,
            from,
            up,
            down,
        } => format!(
            "wisp saturate server: session {session:08x} from {from} ({}{})",
            if *up { "up" } else { "" },
            if *down { " down" } else { "" }
        ),
        ServerEvent::Silent { session, idle } => format!(
            "wisp saturate server: session {session:08x} ended: the client was silent for {:.0} s",
            idle.as_secs_f64()
        ),
        ServerEvent::Ended(end) => ended_line(end),
        ServerEvent::Malformed { from, error } => {
            format!("wisp saturate server: malformed packet from {from}: {error}")
        }
    }
}

fn ended_line(s: &SessionEnd) -> String {
    let o = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0} ms"));
    format!(
        "wisp saturate server: session {:08x} ended after {:.1} s: received {} packets up, sent {} down ({} sends refused; downlink window {}, RTT p50 {} p95 {})",
        s.session,
        s.elapsed.as_secs_f64(),
        s.received,
        s.sent,
        s.send_failed,
        s.window,
        o(s.rtt_p50_ms),
        o(s.rtt_p95_ms)
    )
}

// ------------------------------------------------------------------------------------------
// Client

/// `wisp saturate client`'s settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub server: SocketAddr,
    pub feedback: Option<FeedbackAddr>,
    /// What is recorded (its `epoch` a monotonic instant of this host).
    pub recording: RecordingSettings,
}

/// The client's sockets: the data path and, optionally, the feedback path.
struct Paths {
    socks: Vec<Sock>,
    peers: Vec<Peer>,
    /// A Unix socket file of ours, removed at the end.
    own_path: Option<PathBuf>,
}

impl Paths {
    /// Tells the server the session is over (best effort, three times over every path, as the
    /// feedback path may be the broken one): on an interruption or a failure, so that it stops
    /// sending and serves the next client at once rather than after its idle timeout.
    fn bye(&self, session: u32) {
        let mut buf = Vec::with_capacity(64);
        let bye = Packet {
            session,
            message: Message::Bye,
        };
        if emit(&bye, &mut buf).is_ok() {
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
    let session: u32 = rand::random::<u32>() | 1;
    let settings = ClientSettings {
        session,
        boot: boot_hash(),
        recording: cfg.recording.clone(),
        feedback: cfg.feedback.as_ref().map(ToString::to_string),
    };
    settings
        .recording
        .validate()
        .map_err(SaturateError::Input)?;
    // Both directions carry packets of this size: refuse one the route to the server cannot
    // carry whole before the handshake (packets are sent with don't-fragment).
    let ip = cfg.recording.packet_bytes as u32 + crate::ip_udp_header(&cfg.server);
    if let Ok(mtu) = crate::path_mtu(unspecified_for(&cfg.server).ip(), cfg.server)
        && ip > mtu
    {
        return Err(SaturateError::Protocol(format!(
            "--packet-bytes {ip}: a {ip}-byte IP packet is larger than the path MTU of {mtu} bytes to {} (packets are sent with don't-fragment; give --packet-bytes {mtu} or less)",
            cfg.server
        )));
    }
    let paths = open_paths(cfg, session)?;
    let r = client_session(cfg, stop, progress, &paths, settings);
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
    settings: ClientSettings,
) -> Result<ClientReport, SaturateError> {
    let clock = Clock::new();
    let mut waiter = waiter_for(&paths.socks)?;
    let session = settings.session;
    let mut sm = ClientSession::new(settings, clock.now());
    let (mut buf, mut rx, mut ready) = (Vec::with_capacity(2048), vec![0u8; 65536], vec![]);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(SaturateError::Protocol("interrupted".into()));
        }
        sm.on_timeout(clock.now());
        while let Some(t) = sm.poll_transmit(clock.now()) {
            let k = socket_index(t.path);
            if !transmit(&t, &paths.socks[k], &paths.peers[k], &mut buf)? {
                sm.on_send_refused(clock.now(), &t);
            }
        }
        while let Some(e) = sm.poll_event() {
            progress(&client_line(cfg, session, &e));
        }
        if let Some(r) = sm.result() {
            return r.map_err(|f| client_failure(cfg, f));
        }
        waiter
            .wait(sm.poll_timeout(), &mut ready)
            .map_err(io_ctx("wait"))?;
        read_all(&paths.socks, &clock, &mut rx, |d| {
            sm.on_datagram(clock.now(), d.at, d.bytes);
        })?;
    }
}

/// The client's line for an event.
fn client_line(cfg: &ClientConfig, session: u32, e: &ClientEvent) -> String {
    let (handshake_rtt, same_clock, offset) = match e {
        ClientEvent::Progress(p) => return progress_line(cfg, p),
        ClientEvent::Connected {
            handshake_rtt,
            same_clock,
            clock_offset_ns,
        } => (handshake_rtt, *same_clock, *clock_offset_ns),
    };
    format!(
        "wisp saturate: session {session:08x} with {}: handshake RTT {:.2} ms, {}; saturating {} for {:.1} s + {:.1} s of warm-up",
        cfg.server,
        handshake_rtt.as_millis_f64(),
        if same_clock {
            "one clock (same host)".to_string()
        } else {
            format!("clock offset {:.3} ms", offset as f64 / 1e6)
        },
        match (cfg.recording.up, cfg.recording.down) {
            (true, true) => "both directions",
            (true, false) => "the uplink",
            _ => "the downlink",
        },
        cfg.recording.duration.as_secs_f64(),
        cfg.recording.warmup.as_secs_f64()
    )
}

/// A second of saturation: window, packets in flight, RTT and rates.
fn progress_line(cfg: &ClientConfig, p: &Progress) -> String {
    let secs = p.interval.as_secs_f64();
    let ip_bytes = cfg.recording.packet_bytes as f64 + f64::from(crate::ip_udp_header(&cfg.server));
    let mbps = |pkts: f64| pkts * ip_bytes * 8.0 / secs / 1e6;
    let mut line = format!("t={:5.1} s", p.elapsed.as_secs_f64());
    if p.warming_up {
        line.push_str(" (warm-up)");
    }
    if let Some(w) = &p.up {
        line.push_str(&format!(
            " | up: window {} in flight {} rtt {} sent {:.2} Mbit/s",
            w.window,
            w.in_flight,
            w.rtt
                .map_or("-".into(), |r| format!("{:.0} ms", r.as_millis_f64())),
            mbps(w.sent as f64)
        ));
    }
    if let Some(n) = p.down_received {
        line.push_str(&format!(" | down: received {:.2} Mbit/s", mbps(n as f64)));
    }
    line
}

/// A failed session's error.
fn client_failure(cfg: &ClientConfig, f: ClientFailure) -> SaturateError {
    SaturateError::Protocol(match f {
        ClientFailure::NoAnswer => format!(
            "no answer from {} within 5 s (is `wisp saturate server` running there?)",
            cfg.server
        ),
        ClientFailure::NoFeedbackAnswer => format!(
            "no answer over the feedback path {} within 5 s (does the server listen there: --feedback-listen?)",
            cfg.feedback
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
        ),
        f => f.to_string(),
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
            recording: RecordingSettings {
                up: true,
                down: true,
                duration: Duration::from_millis(500),
                warmup: Duration::from_millis(100),
                packet_bytes: 200,
                window,
                epoch: None,
            },
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
