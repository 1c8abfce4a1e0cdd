//! `wisp wbest`: WBest ([`wisp_core::probe::wbest`]) over real sockets.
//!
//! The client connects to the server's TCP control port and sends `Hello` (direction and
//! parameters, [`crate::wbest_wire`]); the server checks them and answers `Ready` or `Error`.
//! Probes are UDP datagrams between the two hosts' UDP sockets (the server's UDP port is its
//! TCP port; the client's is announced by a datagram it sends first). The *sender* (the server
//! for `from-server`, the client for `to-server`) runs the WBest state machine: it paces each
//! phase's probes (sleep, then a busy wait, yielding, for the last 200 µs: sub-millisecond pacing), the
//! *receiver* stamps arrivals with the kernel's receive timestamp (`SO_TIMESTAMPNS`) and
//! reports them in one `Arrivals` message per phase once it has every probe of the phase or
//! 300 ms passed without one. The sender ends the phase on that report; after the train it
//! sends `Result` to the other side.
//!
//! Deviations from WBest 1.0: the receiver's timestamps are the kernel's (the tool reads
//! `gettimeofday` after `recvfrom`); the control format is this crate's; the receiver's
//! clock is shifted onto the sender's by the report's arrival (only differences matter to the
//! equations); the time to a result includes the control exchanges between the phases.
//!
//! Probe size: `WbestConfig::size` is `L`, the IP packet as the link carries it (WBest's
//! probes are 1500-byte packets on the wire, and `C_i = L / T_i` divides the bytes the link
//! serialised by the dispersion). Each probe is one UDP datagram of `L − 28` bytes over IPv4,
//! `L − 48` over IPv6 ([`probe_payload`]), sent with don't-fragment set
//! (`IP_PMTUDISC_DO` / `IPV6_PMTUDISC_DO`): a probe larger than the path MTU is refused by the
//! kernel and the run fails naming `--size` and the MTU ([`WbestError::TooBig`]) rather than
//! sending fragments, whose second piece would stretch every pair's dispersion. The sender
//! checks the route's MTU before the first probe (the server tells the client in the second
//! `Ready` or an `Error`), and an `EMSGSIZE` during the run (a smaller path MTU learned from
//! the network) ends it the same way.

use crate::Clock;
use crate::session::{enable_receive_timestamps, recv_stamped};
use crate::wbest_wire::{
    ANNOUNCE_INDEX, Control, Direction, HEADER, PROBE_HEADER, ProbeFilter, ProbeHeader,
};
pub use crate::{IPV4_UDP_HEADER, IPV6_UDP_HEADER, ip_udp_header, path_mtu};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use wisp_core::probe::wbest::{Wbest, WbestConfig, WbestPhase, WbestResult};
use wisp_core::{Duration, Instant};

/// Bound on every blocking read of the control channel.
const CONTROL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// What went wrong in a run.
#[derive(Debug, thiserror::Error)]
pub enum WbestError {
    #[error("{what}: {err}")]
    Io { what: &'static str, err: io::Error },
    /// Something awaited did not come in time: what, from whom, and for how long.
    #[error("{0}")]
    Timeout(String),
    #[error("control channel: {0}")]
    Wire(#[from] crate::wbest_wire::WireError),
    #[error("{0}")]
    Config(#[from] wisp_core::probe::wbest::WbestConfigError),
    #[error("peer: {0}")]
    Peer(String),
    #[error("protocol: {0}")]
    Protocol(String),
    #[error(
        "--size {size}: a probe is a {size}-byte IP packet, larger than the path MTU of {mtu} bytes (sent with don't-fragment; give --size {mtu} or less)"
    )]
    TooBig { size: u32, mtu: u32 },
}

/// The smallest probe (IP packet) to `peer` that carries wisp's probe header.
pub fn min_probe_size(peer: &SocketAddr) -> u32 {
    ip_udp_header(peer) + PROBE_HEADER as u32
}

/// UDP payload bytes of a probe that is a `size`-byte IP packet to `peer`; `None` when
/// `size` cannot hold the headers and wisp's probe header, or exceeds an IP packet (65535).
pub fn probe_payload(size: u32, peer: &SocketAddr) -> Option<usize> {
    (min_probe_size(peer)..=65535)
        .contains(&size)
        .then(|| (size - ip_udp_header(peer)) as usize)
}

/// Refuses a probe size the path to `peer` cannot carry unfragmented.
fn check_fits(cfg: &WbestConfig, udp: &UdpSocket, peer: SocketAddr) -> Result<(), WbestError> {
    let local = udp.local_addr().map_err(ctx("local address"))?.ip();
    match path_mtu(local, peer) {
        Ok(mtu) if cfg.size > mtu => Err(WbestError::TooBig {
            size: cfg.size,
            mtu,
        }),
        // No MTU to read (an unusual socket family): the send's EMSGSIZE still catches it.
        _ => Ok(()),
    }
}

fn ctx(what: &'static str) -> impl FnOnce(io::Error) -> WbestError {
    move |err| WbestError::Io { what, err }
}

/// A finished estimate as the tool reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WbestReport {
    /// `C_e`.
    pub capacity_mbps: f64,
    /// `A`.
    pub available_mbps: f64,
    pub bytes_sent: u64,
    pub time_s: f64,
    /// `R`, the train's dispersion rate (eq. 6's input).
    pub achievable_mbps: f64,
    /// Pairs that gave a `C_i`.
    pub pairs_used: u32,
    /// Train gaps that went into `R`.
    pub gaps_used: u32,
    /// Train gaps left out because the sender sent their second packet late (it was
    /// descheduled; [`wisp_core::probe::wbest::train_estimate`]).
    pub gaps_sender_late: u32,
    /// Train packets lost.
    pub train_lost: u32,
    /// UDP datagrams this side read that were not the run's (another address or port, or not
    /// carrying the run's session nonce): counted and ignored.
    pub foreign_datagrams: u64,
}

fn send_msg(tcp: &mut TcpStream, m: &Control) -> Result<(), WbestError> {
    tcp.write_all(&m.emit()).map_err(ctx("control write"))
}

/// "10 s", "300 ms": a bound as the messages give it.
fn fmt_bound(d: std::time::Duration) -> String {
    if d.as_millis() % 1000 == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Fills `buf` from the control connection before `deadline`; on a timeout, how many bytes
/// came. Other errors are returned as they are.
fn read_until(
    tcp: &mut TcpStream,
    buf: &mut [u8],
    deadline: std::time::Instant,
) -> Result<(), (usize, Option<io::Error>)> {
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err((got, None));
        }
        tcp.set_read_timeout(Some(left))
            .map_err(|e| (got, Some(e)))?;
        match tcp.read(&mut buf[got..]) {
            Ok(0) => {
                return Err((got, Some(io::ErrorKind::UnexpectedEof.into())));
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err((got, None));
            }
            Err(e) => return Err((got, Some(e))),
        }
    }
    Ok(())
}

/// Reads one control message, the whole of it within [`CONTROL_TIMEOUT`]; a timeout says what
/// was awaited, from whom and for how long.
fn recv_msg(tcp: &mut TcpStream) -> Result<Control, WbestError> {
    recv_msg_within(tcp, CONTROL_TIMEOUT)
}

fn recv_msg_within(tcp: &mut TcpStream, limit: std::time::Duration) -> Result<Control, WbestError> {
    let deadline = std::time::Instant::now() + limit;
    let peer = tcp
        .peer_addr()
        .map_or_else(|_| "the peer".to_string(), |a| a.to_string());
    let peer = || peer.clone();
    let mut h = [0u8; HEADER];
    if let Err((got, err)) = read_until(tcp, &mut h, deadline) {
        return Err(match err {
            Some(err) => WbestError::Io {
                what: "control read",
                err,
            },
            None if got == 0 => WbestError::Timeout(format!(
                "no control message from {} within {}",
                peer(),
                fmt_bound(limit)
            )),
            None => WbestError::Timeout(format!(
                "{got} of a control message's {HEADER} header bytes from {} within {}",
                peer(),
                fmt_bound(limit)
            )),
        });
    }
    let len = Control::body_len(&h)?;
    let mut b = h.to_vec();
    b.resize(HEADER + len, 0);
    if let Err((got, err)) = read_until(tcp, &mut b[HEADER..], deadline) {
        return Err(match err {
            Some(err) => WbestError::Io {
                what: "control read",
                err,
            },
            None => WbestError::Timeout(format!(
                "a control message from {} announced {len} bytes; {got} came within {}",
                peer(),
                fmt_bound(limit)
            )),
        });
    }
    match Control::parse(&b)? {
        Control::Error(e) => Err(WbestError::Peer(e)),
        m => Ok(m),
    }
}

fn phase_len(cfg: &WbestConfig, p: WbestPhase) -> usize {
    match p {
        WbestPhase::Pairs => 2 * cfg.pairs as usize,
        WbestPhase::Train => cfg.train as usize,
    }
}

/// The sending side: runs WBest, paces its probes to `peer`, reads the receiver's reports.
fn run_sender(
    cfg: WbestConfig,
    tcp: &mut TcpStream,
    udp: &UdpSocket,
    peer: SocketAddr,
    nonce: u64,
) -> Result<WbestResult, WbestError> {
    let clock = Clock::new();
    let mut w = Wbest::new(cfg, clock.now())?;
    let payload = probe_payload(cfg.size, &peer).ok_or_else(|| {
        WbestError::Protocol(format!(
            "a {}-byte probe cannot carry the headers to {peer} (at least {} bytes)",
            cfg.size,
            min_probe_size(&peer)
        ))
    })?;
    let mut buf = vec![0u8; payload];
    for _ in 0..2 {
        let Some(phase) = w.phase() else { break };
        // Send the phase, paced.
        while w.phase() == Some(phase) {
            let now = clock.now();
            if let Some(p) = w.poll_transmit(now) {
                let sent = clock.now();
                ProbeHeader {
                    phase: p.phase,
                    index: p.index as u16,
                    nonce,
                    sent_ns: sent.as_nanos(),
                }
                .emit(&mut buf)?;
                if let Err(e) = udp.send_to(&buf, peer) {
                    if e.raw_os_error() == Some(nix::libc::EMSGSIZE) {
                        let local = udp.local_addr().map_err(ctx("local address"))?.ip();
                        return Err(match path_mtu(local, peer) {
                            Ok(mtu) => WbestError::TooBig {
                                size: cfg.size,
                                mtu,
                            },
                            Err(_) => WbestError::Protocol(format!(
                                "--size {}: the kernel refused a probe as larger than the path MTU (EMSGSIZE; probes are sent with don't-fragment)",
                                cfg.size
                            )),
                        });
                    }
                    return Err(ctx("probe send")(e));
                }
                w.on_probe_sent(p.phase, p.index, sent);
                continue;
            }
            if w.phase_sent() {
                break;
            }
            match w.poll_timeout() {
                Some(t) => wait_until(&clock, t),
                None => break,
            }
        }
        // The receiver's report.
        let Control::Arrivals {
            phase: got,
            records,
        } = recv_msg(tcp)?
        else {
            return Err(WbestError::Protocol("expected Arrivals".into()));
        };
        if got != phase {
            return Err(WbestError::Protocol("Arrivals for the wrong phase".into()));
        }
        let now = clock.now();
        let last = records.iter().map(|r| r.1).max().unwrap_or(0);
        for (index, ns) in records {
            let at = now.saturating_sub(Duration::from_nanos(last - ns));
            w.on_probe_received(at, phase, u32::from(index));
        }
        w.on_phase_reported(now);
    }
    match w.result() {
        Some(Ok(r)) => Ok(r),
        Some(Err(e)) => Err(WbestError::Protocol(e.to_string())),
        None => Err(WbestError::Protocol("no result".into())),
    }
}

fn wait_until(clock: &Clock, t: Instant) {
    let spin = Duration::from_micros(200);
    let now = clock.now();
    if t > now + spin {
        std::thread::sleep(Clock::std_duration(t - now - spin));
    }
    while clock.now() < t {
        std::thread::yield_now();
    }
}

/// The receiving side: stamps probes and reports each phase.
/// Only the run's datagrams count (`filter`); the others are counted there and ignored.
fn run_receiver(
    cfg: WbestConfig,
    tcp: &mut TcpStream,
    udp: &UdpSocket,
    filter: &mut ProbeFilter,
) -> Result<(), WbestError> {
    let clock = Clock::new();
    let mut buf = vec![0u8; 65536];
    let mut early: Vec<(u16, u64)> = vec![]; // train probes seen before the pairs' report
    for phase in [WbestPhase::Pairs, WbestPhase::Train] {
        let want = phase_len(&cfg, phase);
        let mut got: Vec<(u16, u64)> = std::mem::take(&mut early);
        let mut seen = vec![false; want];
        let start = clock.now();
        let mut last = start;
        let mut first = true;
        // Wait at most 5 s for the phase's first probe, then 300 ms after the latest.
        while got.len() < want {
            let limit = if first {
                start + Duration::from_secs(5)
            } else {
                last + cfg.phase_timeout
            };
            let now = clock.now();
            if now >= limit {
                break;
            }
            let wait = Clock::std_duration(limit - now).max(std::time::Duration::from_micros(100));
            let Some((n, from, at)) = recv_within(udp, &mut buf, &clock, wait, "probe receive")?
            else {
                continue;
            };
            let Some(h) = filter.accept(from, &buf[..n]) else {
                continue; // not one of this run's probes
            };
            if h.index == ANNOUNCE_INDEX {
                continue; // a repeated announcement
            }
            if h.phase != phase {
                if phase == WbestPhase::Pairs {
                    early.push((h.index, at.as_nanos()));
                }
                continue;
            }
            let i = usize::from(h.index);
            if i < want && !seen[i] {
                seen[i] = true;
                got.push((h.index, at.as_nanos()));
                first = false;
                last = at.max(last);
            }
        }
        send_msg(
            tcp,
            &Control::Arrivals {
                phase,
                records: got,
            },
        )?;
    }
    Ok(())
}

/// Train packets lost, from the train's loss rate and its length.
fn train_lost(r: &WbestResult, train: u32) -> u32 {
    (r.train_loss * f64::from(train)).round() as u32
}

fn report_of(r: &WbestResult, train: u32) -> WbestReport {
    WbestReport {
        capacity_mbps: r.capacity.bps() as f64 / 1e6,
        available_mbps: r.available.bps() as f64 / 1e6,
        achievable_mbps: r.achievable.bps() as f64 / 1e6,
        pairs_used: r.pairs_used,
        gaps_used: r.gaps_used,
        gaps_sender_late: r.gaps_sender_late,
        train_lost: train_lost(r, train),
        bytes_sent: r.bytes_sent,
        time_s: r.time.as_secs_f64(),
        foreign_datagrams: 0,
    }
}

fn result_msg(r: &WbestResult, train: u32) -> Control {
    let u16_of = |n: u32| n.min(u32::from(u16::MAX)) as u16;
    Control::Result {
        capacity_bps: r.capacity.bps(),
        available_bps: r.available.bps(),
        bytes_sent: r.bytes_sent,
        time_ns: r.time.as_nanos(),
        achievable_bps: r.achievable.bps(),
        pairs_used: u16_of(r.pairs_used),
        gaps_used: u16_of(r.gaps_used),
        gaps_sender_late: u16_of(r.gaps_sender_late),
        train_lost: u16_of(train_lost(r, train)),
    }
}

fn report_from(m: Control) -> Result<WbestReport, WbestError> {
    match m {
        Control::Result {
            capacity_bps,
            available_bps,
            bytes_sent,
            time_ns,
            achievable_bps,
            pairs_used,
            gaps_used,
            gaps_sender_late,
            train_lost,
        } => Ok(WbestReport {
            capacity_mbps: capacity_bps as f64 / 1e6,
            available_mbps: available_bps as f64 / 1e6,
            bytes_sent,
            time_s: time_ns as f64 / 1e9,
            achievable_mbps: achievable_bps as f64 / 1e6,
            pairs_used: pairs_used.into(),
            gaps_used: gaps_used.into(),
            gaps_sender_late: gaps_sender_late.into(),
            train_lost: train_lost.into(),
            foreign_datagrams: 0,
        }),
        _ => Err(WbestError::Protocol("expected Result".into())),
    }
}

/// `wisp wbest client`: one estimate against `server`.
pub fn client(
    server: SocketAddr,
    cfg: WbestConfig,
    direction: Direction,
) -> Result<WbestReport, WbestError> {
    cfg.validate()?;
    let mut tcp = TcpStream::connect_timeout(&server, CONTROL_TIMEOUT).map_err(ctx("connect"))?;
    tcp.set_read_timeout(Some(CONTROL_TIMEOUT))
        .map_err(ctx("control timeout"))?;
    let _ = tcp.set_nodelay(true);
    let local = tcp.local_addr().map_err(ctx("local address"))?;
    let udp = UdpSocket::bind(SocketAddr::new(local.ip(), 0)).map_err(ctx("udp bind"))?;
    crate::session::set_buffers(&udp);
    enable_receive_timestamps(&udp);
    crate::set_dont_fragment(&udp, local.is_ipv6()).map_err(ctx("don't-fragment"))?;
    send_msg(
        &mut tcp,
        &Control::Hello {
            direction,
            pairs: cfg.pairs as u16,
            train: cfg.train as u16,
            size: cfg.size as u16,
            burst: cfg.burst as u16,
        },
    )?;
    let Control::Session { nonce } = recv_msg(&mut tcp)? else {
        return Err(WbestError::Protocol("expected Session".into()));
    };
    // Announce our UDP address to the server's UDP port (= its TCP port), with the nonce.
    let mut hello = [0u8; PROBE_HEADER];
    ProbeHeader {
        phase: WbestPhase::Pairs,
        index: ANNOUNCE_INDEX,
        nonce,
        sent_ns: 0,
    }
    .emit(&mut hello)?;
    udp.send_to(&hello, server).map_err(ctx("udp announce"))?;
    // Wait for the server's go: Ready after it saw our announcement (and, when it sends the
    // probes, found that they fit the path), or its Error.
    if recv_msg(&mut tcp)? != Control::Ready {
        return Err(WbestError::Protocol("expected Ready".into()));
    }
    // Probes come from the server's UDP socket (its control address) with the nonce.
    let mut filter = ProbeFilter::new(server, nonce);
    match direction {
        Direction::FromServer => {
            run_receiver(cfg, &mut tcp, &udp, &mut filter)?;
            let mut r = report_from(recv_msg(&mut tcp)?)?;
            r.foreign_datagrams = filter.foreign;
            Ok(r)
        }
        Direction::ToServer => {
            check_fits(&cfg, &udp, server)?;
            let r = run_sender(cfg, &mut tcp, &udp, server, nonce)?;
            send_msg(&mut tcp, &result_msg(&r, cfg.train))?;
            Ok(report_of(&r, cfg.train))
        }
    }
}

/// Reads the client's Hello on the control connection: its direction and a valid
/// configuration. A client of another version or with a configuration out of range is told
/// why.
fn read_hello(tcp: &mut TcpStream) -> Result<(Direction, WbestConfig), WbestError> {
    let hello = recv_msg(tcp);
    // A client of another version: answered in this one, whose header its parser names
    // ("unsupported version 2"), rather than with a bare reset.
    if let Err(WbestError::Wire(e @ crate::wbest_wire::WireError::Version { .. })) = &hello {
        let _ = send_msg(
            tcp,
            &Control::Error(format!("this server speaks another version: {e}")),
        );
    }
    let Control::Hello {
        direction,
        pairs,
        train,
        size,
        burst,
    } = hello?
    else {
        return Err(WbestError::Protocol("expected Hello".into()));
    };
    let cfg = WbestConfig {
        pairs: u32::from(pairs),
        train: u32::from(train),
        size: u32::from(size),
        burst: u32::from(burst),
        ..WbestConfig::default()
    };
    if let Err(e) = cfg.validate() {
        send_msg(tcp, &Control::Error(e.to_string()))?;
        return Err(e.into());
    }
    Ok((direction, cfg))
}

/// Waits, within [`CONTROL_TIMEOUT`], for the client's announcement of its UDP port: from
/// `client_ip`, with the run's nonce (`filter`'s). Anything else is counted and ignored (never
/// answered, never probed). Returns the client's UDP address.
fn await_announcement(
    udp: &UdpSocket,
    client_ip: std::net::IpAddr,
    filter: &mut ProbeFilter,
) -> Result<SocketAddr, WbestError> {
    let mut buf = vec![0u8; 65536];
    let clock = Clock::new();
    let deadline = std::time::Instant::now() + CONTROL_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let timeout = |foreign: u64| {
            WbestError::Timeout(format!(
                "no UDP announcement from {client_ip} within {}{}",
                fmt_bound(CONTROL_TIMEOUT),
                match foreign {
                    0 => String::new(),
                    n => format!(" ({n} other datagrams ignored)"),
                }
            ))
        };
        if left.is_zero() {
            return Err(timeout(filter.foreign));
        }
        let Some((n, from, _)) = recv_within(udp, &mut buf, &clock, left, "udp announce")? else {
            continue; // the deadline is checked above
        };
        if filter.accept(from, &buf[..n]).is_some() {
            if let Some(p) = filter.peer() {
                return Ok(p);
            }
        }
    }
}

/// One datagram within `wait`, with its arrival on `clock`; `None` if none came (the wait ran
/// out, or a signal cut it short). `what` names the receive in an error.
fn recv_within(
    udp: &UdpSocket,
    buf: &mut [u8],
    clock: &Clock,
    wait: std::time::Duration,
    what: &'static str,
) -> Result<Option<(usize, SocketAddr, Instant)>, WbestError> {
    udp.set_read_timeout(Some(wait))
        .map_err(ctx("udp timeout"))?;
    match recv_stamped(udp, buf, clock) {
        Ok((n, from, at, _)) => Ok(Some((n, from, at))),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(ctx(what)(e)),
    }
}

/// Serves one client on an accepted control connection.
pub fn serve_one(mut tcp: TcpStream, udp: &UdpSocket) -> Result<WbestReport, WbestError> {
    tcp.set_read_timeout(Some(CONTROL_TIMEOUT))
        .map_err(ctx("control timeout"))?;
    let _ = tcp.set_nodelay(true);
    let (direction, cfg) = read_hello(&mut tcp)?;
    // The run's nonce: the client's announcement and every probe carry it, so that only the
    // client that asked on this control connection takes part.
    let nonce: u64 = rand::random();
    send_msg(&mut tcp, &Control::Session { nonce })?;
    // The client's announcement gives its UDP port; it must come from the control
    // connection's address and carry the nonce.
    let client_ip = tcp.peer_addr().map_err(ctx("peer address"))?.ip();
    let mut filter = ProbeFilter::awaiting(client_ip, nonce);
    let peer = await_announcement(udp, client_ip, &mut filter)?;
    match direction {
        Direction::FromServer => {
            // The client hears why the probes cannot go (too big for the path, or a send
            // that failed) instead of waiting for them.
            let sent = check_fits(&cfg, udp, peer).and_then(|()| {
                send_msg(&mut tcp, &Control::Ready)?;
                run_sender(cfg, &mut tcp, udp, peer, nonce)
            });
            let r = match sent {
                Ok(r) => r,
                Err(e) => {
                    if !matches!(e, WbestError::Peer(_)) {
                        let _ = send_msg(&mut tcp, &Control::Error(e.to_string()));
                    }
                    return Err(e);
                }
            };
            send_msg(&mut tcp, &result_msg(&r, cfg.train))?;
            let mut r = report_of(&r, cfg.train);
            r.foreign_datagrams = filter.foreign;
            Ok(r)
        }
        Direction::ToServer => {
            send_msg(&mut tcp, &Control::Ready)?;
            run_receiver(cfg, &mut tcp, udp, &mut filter)?;
            let mut r = report_from(recv_msg(&mut tcp)?)?;
            r.foreign_datagrams = filter.foreign;
            Ok(r)
        }
    }
}

/// `wisp wbest server`: binds TCP and UDP on `listen` (same port) and serves clients one at a
/// time, `max_clients` of them (`None`: forever). The bound address (its port chosen by the
/// kernel when `listen` gives 0) goes to `on_listen` once both sockets are bound; each run's
/// outcome goes to `on_done`.
pub fn server(
    listen: SocketAddr,
    max_clients: Option<u64>,
    on_listen: impl FnOnce(SocketAddr),
    mut on_done: impl FnMut(Result<WbestReport, WbestError>),
) -> Result<(), WbestError> {
    let tcp = TcpListener::bind(listen).map_err(ctx("tcp bind"))?;
    let addr = tcp.local_addr().map_err(ctx("local address"))?;
    let udp = UdpSocket::bind(addr).map_err(ctx("udp bind"))?;
    crate::session::set_buffers(&udp);
    enable_receive_timestamps(&udp);
    crate::set_dont_fragment(&udp, addr.is_ipv6()).map_err(ctx("don't-fragment"))?;
    on_listen(addr);
    let mut served = 0;
    while max_clients.is_none_or(|m| served < m) {
        let (conn, _) = tcp.accept().map_err(ctx("accept"))?;
        on_done(serve_one(conn, &udp));
        served += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on loopback (its TCP control port and its UDP port are one number) serving
    /// `clients` clients one after another on a thread; each run's result goes through `keep`.
    fn loopback_server<T: Send + 'static>(
        clients: usize,
        keep: fn(Result<WbestReport, WbestError>) -> T,
    ) -> (SocketAddr, std::thread::JoinHandle<Vec<T>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let udp = UdpSocket::bind(addr).unwrap();
        enable_receive_timestamps(&udp);
        let h = std::thread::spawn(move || {
            (0..clients)
                .map(|_| keep(serve_one(l.accept().unwrap().0, &udp)))
                .collect()
        });
        (addr, h)
    }

    /// What a fresh server answers to the control message `send` writes; its run fails too.
    fn refusal(send: impl FnOnce(&mut TcpStream)) -> String {
        let (addr, h) = loopback_server(1, |r| r.is_err());
        let mut tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(CONTROL_TIMEOUT)).unwrap();
        send(&mut tcp);
        let e = match recv_msg(&mut tcp) {
            Err(WbestError::Peer(e)) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(h.join().unwrap(), [true]);
        e
    }

    #[test]
    fn loopback_from_and_to_server() {
        // Loopback only; bounded: one client per server, 10 s control timeouts.
        for direction in [Direction::FromServer, Direction::ToServer] {
            let (addr, h) = loopback_server(1, Result::unwrap);
            let r = client(addr, WbestConfig::default(), direction).unwrap();
            let s = h.join().unwrap().remove(0);
            assert_eq!(r.bytes_sent, 90 * 1500);
            assert_eq!(r, s);
            assert!(r.capacity_mbps > 0.0, "{r:?}");
        }
    }

    #[test]
    fn a_probe_is_an_ip_packet_of_size_bytes() {
        let v4: SocketAddr = "10.0.0.1:9".parse().unwrap();
        let v6: SocketAddr = "[2001:db8::1]:9".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:10.0.0.1]:9".parse().unwrap();
        // 20 + 8 and 40 + 8 header bytes.
        assert_eq!(probe_payload(1500, &v4), Some(1472));
        assert_eq!(probe_payload(1500, &v6), Some(1452));
        assert_eq!(probe_payload(1500, &mapped), Some(1472));
        assert_eq!(probe_payload(65535, &v4), Some(65507));
        // The probe header (21 bytes) must fit behind the IP and UDP headers.
        assert_eq!(min_probe_size(&v4), 49);
        assert_eq!(min_probe_size(&v6), 69);
        assert_eq!(probe_payload(48, &v4), None);
        assert_eq!(probe_payload(49, &v4), Some(21));
        assert_eq!(probe_payload(68, &v6), None);
        assert_eq!(probe_payload(65536, &v4), None);
    }

    #[test]
    fn a_client_of_another_version_is_told() {
        // Version 1's Hello (its size was the UDP payload).
        let e = refusal(|tcp| {
            tcp.write_all(&[b'W', b'B', 1, 1, 0, 7, 1, 0, 30, 0, 30, 0x05, 0xdc])
                .unwrap()
        });
        assert!(e.contains("version 1"), "{e}");
    }

    #[test]
    fn bad_parameters_are_refused_by_the_server() {
        let e = refusal(|tcp| {
            let hello = Control::Hello {
                direction: Direction::FromServer,
                pairs: 0,
                train: 30,
                size: 1500,
                burst: 1,
            };
            send_msg(tcp, &hello).unwrap()
        });
        assert!(e.contains("pairs"), "{e}");
    }

    /// A stranger flooding the server's UDP port with announcements and probes
    /// (it cannot know the run's nonce) is neither probed nor measured, in both directions.
    #[test]
    fn a_stranger_is_neither_probed_nor_measured() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        for direction in [Direction::FromServer, Direction::ToServer] {
            let (addr, h) = loopback_server(1, Result::unwrap);
            let done = Arc::new(AtomicBool::new(false));
            let d2 = Arc::clone(&done);
            // Loopback only; bounded: at most 5 s of flooding.
            let stranger = std::thread::spawn(move || {
                let s = UdpSocket::bind("127.0.0.1:0").unwrap();
                s.set_nonblocking(true).unwrap();
                let (mut got, mut buf) = (0u64, [0u8; 2048]);
                let mut probe = [0u8; 1472];
                let start = std::time::Instant::now();
                let mut k = 0u16;
                while !d2.load(Ordering::Relaxed) && start.elapsed().as_secs() < 5 {
                    for index in [ANNOUNCE_INDEX, k % 60] {
                        ProbeHeader {
                            phase: if k % 2 == 0 {
                                WbestPhase::Pairs
                            } else {
                                WbestPhase::Train
                            },
                            index,
                            nonce: u64::from(k),
                            sent_ns: 0,
                        }
                        .emit(&mut probe)
                        .unwrap();
                        let _ = s.send_to(&probe, addr);
                    }
                    k = k.wrapping_add(1);
                    while s.recv(&mut buf).is_ok() {
                        got += 1;
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                got
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            let r = client(addr, WbestConfig::default(), direction).unwrap();
            let s = h.join().unwrap().remove(0);
            done.store(true, Ordering::Relaxed);
            assert_eq!(
                stranger.join().unwrap(),
                0,
                "{direction:?}: the stranger was sent to"
            );
            assert_eq!((r.train_lost, s.train_lost), (0, 0), "{direction:?}");
            assert!(r.available_mbps > 0.0, "{direction:?} {r:?}");
            assert_eq!(r.bytes_sent, 90 * 1500);
            // The server read the stranger's datagrams and counted them.
            assert!(s.foreign_datagrams > 0, "{direction:?} {s:?}");
        }
    }

    /// A client that never announces its UDP port, and a control header that
    /// promises more than it sends, end in one line saying what was awaited, from whom and for
    /// how long (was "udp announce: Resource temporarily unavailable (os error 11)").
    #[test]
    fn timeouts_say_what_was_awaited() {
        let (addr, h) = loopback_server(2, |r| r.unwrap_err().to_string());
        // A Hello, then silence on UDP.
        let mut tcp = TcpStream::connect(addr).unwrap();
        send_msg(
            &mut tcp,
            &Control::Hello {
                direction: Direction::FromServer,
                pairs: 30,
                train: 30,
                size: 1500,
                burst: 1,
            },
        )
        .unwrap();
        // A header that promises 9 body bytes and sends 2.
        let mut short = TcpStream::connect(addr).unwrap();
        short
            .write_all(&[b'W', b'B', VERSION_NOW, 1, 0, 9, 1, 0])
            .unwrap();
        let errs = h.join().unwrap();
        assert_eq!(
            errs[0], "no UDP announcement from 127.0.0.1 within 10 s",
            "{errs:?}"
        );
        let ours = short.local_addr().unwrap();
        assert_eq!(
            errs[1],
            format!("a control message from {ours} announced 9 bytes; 2 came within 10 s")
        );
        assert!(errs.iter().all(|e| !e.contains("os error")), "{errs:?}");
        drop((tcp, short));
    }

    const VERSION_NOW: u8 = crate::wbest_wire::VERSION;
}
