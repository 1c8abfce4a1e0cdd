//! `wisp send` / `wisp recv`: one flow of any registered scheme over real UDP.
//!
//! The sender runs the scheme's [`FlowSender`](wisp_core::flow::FlowSender) (its sender half with
//! the traffic source and pacer that [`SchemeConfig::build`] gives it) on [`Clock`] time, and sends each packet as RTP
//! ([`crate::rtp`]) the moment the flow releases it, waking at the flow's exact wake-up instant
//! ([`Waiter`]). The receiver runs the scheme's receiver half on every arriving packet and sends
//! its feedback back to the sender's address as RTCP ([`crate::rtcp`]). Both exchange RFC 3550
//! session reports (SR/RR + SDES CNAME) every RTCP interval, the sender announces its scheme
//! (APP), so `wisp recv` needs no `--scheme`, and ends the flow with BYE.
//!
//! The receiver takes each datagram's arrival instant from the kernel (`SO_TIMESTAMPNS`), so how
//! late its thread wakes up (tens of µs, up to a millisecond on a loaded host) does not enter the
//! delays and delay gradients the scheme sees; the report gives that lag (`read_lag_p50_us`).
//!
//! What the session does — reports, feedback, who the peer is, when it ends, what it counts — is
//! the sans-IO state machines [`SendSession`] and [`RecvSession`] of [`wisp_core::session`], over
//! typed packets; this module is their socket loops: the clock, the sockets, the bytes
//! ([`crate::rtp`], [`crate::rtcp`]), the progress lines and the summaries. The loop is the one
//! of [`wisp_core::flow`]: send what the session releases now, then sleep until its next
//! wake-up or until a datagram arrives. Nothing is spawned; one thread per side.
//!
//! Packets carry zeros after the RTP header, except a scheme's own payload (a video scheme's
//! piece of a diff), which the sender takes from the sending half by sequence number
//! ([`take_payload`](wisp_core::controller::WireSender::take_payload)) and the receiver hands to
//! the receiving half before the packet
//! ([`on_payload`](wisp_core::controller::WireReceiver::on_payload)); the report then holds the
//! frames it decoded ([`ReceiverReport::video`](crate::report::ReceiverReport::video), from the
//! receiver's [`video_log`](wisp_core::controller::WireReceiver::video_log)).
//!
//! Any datagram that is not a valid packet of the session (malformed, truncated, wrong version,
//! hostile lengths, another SSRC or another address) is counted and dropped; it never panics.
//! The receiver's peer and media SSRC are those of the first valid media packet; RTCP before it
//! is held, bounded, and read when its source becomes the peer ([`RecvSession`]).
//!
//! With [`RecvOptions::pingpair`] (`wisp recv --pingpair-target`) the receiver also runs
//! Ping-Pair ([`crate::pingpair`]) against the gateway in the same loop; each resolved pair is
//! handed, after the data packets that arrived before its replies, to a `kwikr`/`skype-ukf`
//! receiver, which counts its own sandwiched packets (CoNEXT'17 §5.3) and feeds T_c to eq. (3).
//! The replies' kernel times (`CLOCK_REALTIME`) are put on the monotonic clock the data packets
//! use, as the data packets' own stamps are.

use crate::report::{
    KnownLink, ReceiverMetrics, ReceiverReport, SenderMetrics, SenderReport, WindowSpec, fmt_opt,
    percentiles, progress_line, receiver_metrics,
};
use crate::rtcp;
use crate::rtp;
use crate::timer::Waiter;
use crate::{Clock, boot_id};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use wisp_core::controller::WireReceiver;
use wisp_core::packet::{DEFAULT_MTU, Ecn};
use wisp_core::scheme::{AnyReceiver, BuildError, SchemeConfig, SchemeContext};
use wisp_core::session::{
    MediaPacket, RecvConfig, RecvEnd, RecvProgress, RecvSession, RecvTransmit, SendConfig,
    SendProgress, SendSession, SendTransmit, SenderCompound,
};
use wisp_core::tables::Tables;
use wisp_core::video::InjectedCodecs;
use wisp_core::{DataSize, Duration, Instant};

/// Errors that end a session.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("{0}")]
    Build(#[from] BuildError),
    #[error("{what}: {err}")]
    Io { what: String, err: io::Error },
    #[error("{0}")]
    Input(String),
}

pub(crate) fn io_ctx(what: impl Into<String>) -> impl FnOnce(io::Error) -> NetError {
    let what = what.into();
    move |err| NetError::Io { what, err }
}

/// Options of `wisp send`.
#[derive(Clone, Debug)]
pub struct SendOptions {
    pub scheme: SchemeConfig,
    pub to: SocketAddr,
    pub duration: Duration,
    pub rtcp_interval: Duration,
    /// Spin margin of the pacing timer (see [`Waiter`]).
    pub spin: Duration,
    /// DSCP to mark data packets with (IPv4 TOS = DSCP << 2).
    pub dscp: Option<u8>,
    pub mtu: DataSize,
    /// Master seed of the flow's random streams (the media source's), as in the simulator.
    pub seed: u64,
    /// The fingerprint of the clip a video sender codes (`wisp_core::video::y4m::fingerprint`),
    /// announced with the scheme so that a receiver given another clip refuses the flow.
    pub clip_fingerprint: Option<u64>,
}

impl SendOptions {
    pub fn new(scheme: SchemeConfig, to: SocketAddr) -> Self {
        SendOptions {
            scheme,
            to,
            duration: Duration::from_secs(30),
            rtcp_interval: Duration::from_secs(1),
            spin: Duration::ZERO,
            dscp: None,
            mtu: DEFAULT_MTU,
            seed: wisp_sim::seed::DEFAULT_SEED,
            clip_fingerprint: None,
        }
    }
}

/// Options of `wisp recv`.
#[derive(Clone, Debug)]
pub struct RecvOptions {
    pub listen: SocketAddr,
    /// The scheme to run; `None`: the one the sender announces.
    pub scheme: Option<SchemeConfig>,
    /// Stop this long after the first packet.
    pub duration: Option<Duration>,
    /// Stop when no packet came for this long after the flow started.
    pub idle_timeout: Duration,
    pub rtcp_interval: Duration,
    /// The link the path is known to be (for capacity and self-inflicted delay).
    pub link: Option<KnownLink>,
    pub mtu: DataSize,
    /// Ping-Pair alongside the flow: the receiver probes this gateway and, when its scheme is
    /// `kwikr`, feeds each valid pair to it (its own packets sandwiched between the replies).
    pub pingpair: Option<PingPairRecv>,
    /// The video codec an `alfalfa` flow (or a variant) runs when it is not the model (e.g.
    /// VP8 over the clip `wisp recv --video` names), given to the scheme the sender announces.
    pub video_codecs: Option<InjectedCodecs>,
    /// The fingerprint of the clip this receiver measures against (`wisp recv --video`): a
    /// sender announcing another one is refused ([`NetError::Input`]), one announcing none is
    /// run with a note.
    pub clip_fingerprint: Option<u64>,
}

/// `wisp recv --pingpair-target`.
#[derive(Clone, Debug)]
pub struct PingPairRecv {
    pub target: std::net::Ipv4Addr,
    /// Time between pairs (Kwikr: 500 ms, §6).
    pub interval: Duration,
    pub tos_high: u8,
    /// R of T_a = n_a (s_a / R + t): the Wi-Fi MAC rate of the downlink.
    pub mac_rate: wisp_core::Bitrate,
}

impl RecvOptions {
    pub fn new(listen: SocketAddr) -> Self {
        RecvOptions {
            listen,
            scheme: None,
            duration: None,
            idle_timeout: Duration::from_secs(10),
            rtcp_interval: Duration::from_secs(1),
            link: None,
            mtu: DEFAULT_MTU,
            pingpair: None,
            video_codecs: None,
            clip_fingerprint: None,
        }
    }
}

/// Where progress lines go (one per second).
pub type Progress<'a> = &'a mut dyn FnMut(&str);

fn cname() -> String {
    format!(
        "{}@{}",
        std::process::id(),
        boot_id().unwrap_or_else(|| "unknown".into())
    )
}

pub(crate) fn set_buffers(sock: &UdpSocket) {
    use nix::sys::socket::{setsockopt, sockopt};
    // Best effort: the kernel caps these at net.core.[rw]mem_max.
    let _ = setsockopt(sock, sockopt::RcvBuf, &(4 << 20));
    let _ = setsockopt(sock, sockopt::SndBuf, &(4 << 20));
}

/// Asks the kernel to stamp each received datagram (`SO_TIMESTAMPNS`), so that arrival instants
/// do not include how late the receiving thread woke up. Best effort: without it, arrivals are
/// stamped when read.
pub(crate) fn enable_receive_timestamps(sock: &UdpSocket) -> bool {
    use nix::sys::socket::{setsockopt, sockopt};
    setsockopt(sock, sockopt::ReceiveTimestampns, &true).is_ok()
}

/// Asks the kernel to pass each received datagram's IP TOS byte (`IP_RECVTOS`; IPv6's traffic
/// class, `IPV6_RECVTCLASS`, on an IPv6 socket, which also receives IPv4-mapped packets'
/// TOS as IPv4's), so that the receiver knows the ECN codepoint each packet arrived with.
pub(crate) fn enable_receive_ecn(sock: &UdpSocket, v6: bool) -> bool {
    use nix::sys::socket::{setsockopt, sockopt};
    let v4 = setsockopt(sock, sockopt::IpRecvTos, &true).is_ok();
    if v6 {
        setsockopt(sock, sockopt::Ipv6RecvTClass, &true).is_ok()
    } else {
        v4
    }
}

/// [`recv_stamped`], and the ECN codepoint of the datagram's IP header when the kernel passed
/// it ([`enable_receive_ecn`]), else Not-ECT.
pub(crate) fn recv_stamped_ecn(
    sock: &UdpSocket,
    buf: &mut [u8],
    clock: &Clock,
) -> io::Result<(usize, SocketAddr, Instant, Option<Duration>, Ecn)> {
    let mut ecn = Ecn::NotEct;
    let (n, from, at, lag) = recv_with(sock, buf, clock, &mut ecn)?;
    Ok((n, from, at, lag, ecn))
}

/// One datagram with its arrival instant on `clock`: the kernel's receive timestamp when there
/// is one (`CLOCK_REALTIME`, mapped onto the monotonic clock through the two clocks' offset
/// read now), else the instant of reading. Also returns how long ago the kernel stamped it.
pub(crate) fn recv_stamped(
    sock: &UdpSocket,
    buf: &mut [u8],
    clock: &Clock,
) -> io::Result<(usize, SocketAddr, Instant, Option<Duration>)> {
    recv_with(sock, buf, clock, &mut Ecn::NotEct)
}

/// [`recv_stamped`], setting `ecn` from the TOS or traffic-class message if one came.
fn recv_with(
    sock: &UdpSocket,
    buf: &mut [u8],
    clock: &Clock,
    ecn: &mut Ecn,
) -> io::Result<(usize, SocketAddr, Instant, Option<Duration>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, SockaddrStorage, recvmsg};
    use nix::sys::time::TimeSpec;
    use std::os::fd::AsRawFd;
    let mut iov = [io::IoSliceMut::new(buf)];
    let mut space = nix::cmsg_space!(TimeSpec, u8, i32);
    let msg = recvmsg::<SockaddrStorage>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::empty(),
    )
    .map_err(io::Error::from)?;
    let now = clock.now();
    let n = msg.bytes;
    let from = msg
        .address
        .and_then(|a| {
            a.as_sockaddr_in()
                .map(|v4| SocketAddr::from(std::net::SocketAddrV4::from(*v4)))
                .or_else(|| {
                    a.as_sockaddr_in6()
                        .map(|v6| SocketAddr::from(std::net::SocketAddrV6::from(*v6)))
                })
        })
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no source address"))?;
    let mut stamped = None;
    if let Ok(cmsgs) = msg.cmsgs() {
        for c in cmsgs {
            match c {
                ControlMessageOwned::ScmTimestampns(ts) => stamped = Some(ts),
                ControlMessageOwned::Ipv4Tos(tos) => *ecn = Ecn::from_bits(tos),
                ControlMessageOwned::Ipv6TClass(tc) => *ecn = Ecn::from_bits(tc as u8),
                _ => {}
            }
        }
    }
    let Some(ts) = stamped else {
        return Ok((n, from, now, None));
    };
    let realtime = |t: TimeSpec| t.tv_sec() as i128 * 1_000_000_000 + t.tv_nsec() as i128;
    let Ok(rt_now) = nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME) else {
        return Ok((n, from, now, None));
    };
    let lag = realtime(rt_now) - realtime(ts);
    // A stamp from the future or from more than a second ago (a clock step): read instant.
    if !(0..1_000_000_000).contains(&lag) {
        return Ok((n, from, now, None));
    }
    let lag = Duration::from_nanos(lag as u64);
    Ok((n, from, now - lag, Some(lag)))
}

fn unspecified_for(addr: &SocketAddr) -> SocketAddr {
    if addr.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    }
}

/// Opens the sender's socket: connected to `opts.to`, non-blocking, don't-fragment, and marked
/// with `opts.dscp`.
fn send_socket(opts: &SendOptions) -> Result<UdpSocket, NetError> {
    let sock =
        UdpSocket::bind(unspecified_for(&opts.to)).map_err(io_ctx("cannot open a UDP socket"))?;
    sock.connect(opts.to)
        .map_err(io_ctx(format!("cannot send to {}", opts.to)))?;
    sock.set_nonblocking(true)
        .map_err(io_ctx("cannot make the socket non-blocking"))?;
    set_buffers(&sock);
    // Don't-fragment: a packet larger than the path MTU is refused by the kernel (an error in
    // `send_media`), never sent in fragments.
    crate::set_dont_fragment(&sock, opts.to.is_ipv6())
        .map_err(io_ctx("cannot set don't-fragment on the socket"))?;
    if opts.dscp.is_some() {
        set_tos(&sock, opts, tos(opts, Ecn::NotEct))
            .map_err(|e| NetError::Input(format!("--dscp: {e}")))?;
    }
    Ok(sock)
}

/// The IP TOS byte (IPv6: traffic class) of `opts`'s DSCP and the ECN codepoint `ecn`.
fn tos(opts: &SendOptions, ecn: Ecn) -> i32 {
    i32::from(opts.dscp.unwrap_or(0)) << 2 | i32::from(ecn.bits())
}

/// Sets the socket's ECN codepoint to `want` if it is not `*now` already (RTCP leaves Not-ECT,
/// media with the scheme's codepoint, [`Sender::ecn`](wisp_core::controller::Sender::ecn)).
fn set_ecn(sock: &UdpSocket, opts: &SendOptions, now: &mut Ecn, want: Ecn) -> Result<(), NetError> {
    if *now == want {
        return Ok(());
    }
    set_tos(sock, opts, tos(opts, want))?;
    *now = want;
    Ok(())
}

fn set_tos(sock: &UdpSocket, opts: &SendOptions, tos: i32) -> Result<(), NetError> {
    use nix::sys::socket::{setsockopt, sockopt};
    // IP_TOS on an IPv6 socket is accepted and marks nothing: IPv6 has its traffic class.
    let r = if opts.to.is_ipv6() {
        setsockopt(sock, sockopt::Ipv6TClass, &tos)
    } else {
        setsockopt(sock, sockopt::Ipv4Tos, &tos)
    };
    r.map_err(|e| {
        NetError::Input(format!(
            "cannot set the packets' TOS byte to {tos:#04x}: {e}"
        ))
    })
}

/// The sender's compound report as RTCP (SR, SDES CNAME, the scheme's APP, and BYE in the last),
/// appended to `out`.
fn encode_compound(c: &SenderCompound, out: &mut Vec<u8>) -> Result<(), NetError> {
    let e = |e: rtcp::RtcpError| NetError::Input(e.to_string());
    rtcp::encode_sender_report(
        c.ssrc,
        c.at,
        rtp::rtp_timestamp(c.last_send_time),
        c.packets,
        c.octets,
        &c.cname,
        out,
    )
    .map_err(e)?;
    rtcp::encode_scheme(c.ssrc, &c.scheme, c.clip_fingerprint, out).map_err(e)?;
    if c.bye {
        rtcp::encode_bye(c.ssrc, out).map_err(e)?;
    }
    Ok(())
}

/// Sends one of the sender's datagrams. A media packet the kernel refuses as larger than the
/// path MTU ends the session with a line that names it; one it has no room for is lost, as on
/// the path.
fn send_transmit(
    sock: &UdpSocket,
    opts: &SendOptions,
    t: SendTransmit,
    buf: &mut Vec<u8>,
    ecn: &mut Ecn,
) -> Result<(), NetError> {
    let (ssrc, h, payload) = match t {
        SendTransmit::Compound(c) => {
            buf.clear();
            encode_compound(&c, buf)?;
            set_ecn(sock, opts, ecn, Ecn::NotEct)?;
            let _ = sock.send(buf);
            return Ok(());
        }
        SendTransmit::Media {
            ssrc,
            header,
            payload,
        } => (ssrc, header, payload),
    };
    set_ecn(sock, opts, ecn, h.ecn)?;
    // A packet the scheme sizes as N bytes is N bytes of IP on the wire: the datagram leaves
    // room for this family's IP and UDP headers.
    let header = crate::ip_udp_header(&opts.to);
    rtp::encode_over(&h, ssrc, payload.as_deref().unwrap_or(&[]), header, buf)
        .map_err(|e| NetError::Input(e.to_string()))?;
    match sock.send(buf) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(nix::libc::EMSGSIZE) => {
            let mtu = sock
                .local_addr()
                .and_then(|l| crate::path_mtu(l.ip(), opts.to));
            Err(NetError::Input(format!(
                "`{}` sized a packet of {} bytes, larger than the path MTU to {} \
                 ({}): not sent (don't-fragment); the schemes' packets take up to \
                 {} bytes of IP: use a path whose MTU is at least that",
                opts.scheme,
                h.size.bytes(),
                opts.to,
                mtu.map_or_else(|e| format!("unknown: {e}"), |m| format!("{m} bytes")),
                opts.mtu.bytes(),
            )))
        }
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionRefused
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(io_ctx("send")(e)),
    }
}

/// A datagram on the sender's socket: RTCP from the receiver, or foreign.
fn on_sender_datagram(s: &mut SendSession, buf: &[u8], now: Instant) {
    if !rtp::is_rtcp(buf) {
        s.on_foreign();
        return;
    }
    match rtcp::decode(buf) {
        Ok(items) => s.on_rtcp(now, items),
        Err(_) => s.on_malformed(),
    }
}

fn send_progress_line(p: &SendProgress) -> String {
    let loss = p
        .loss
        .map_or_else(|| "-".into(), |l| format!("{:.2}%", l * 100.0));
    let rest = format!(
        "target {}  rtt {}  loss {loss}",
        fmt_opt(p.target_kbps, "kbit/s"),
        fmt_opt(p.rtt_ms, "ms"),
    );
    progress_line("send", p.elapsed_s, p.rate_kbps, &rest)
}

/// Runs the sending side of one flow until `opts.duration` has passed or `stop` is set.
pub fn send(
    opts: &SendOptions,
    stop: &AtomicBool,
    progress: Progress<'_>,
) -> Result<SenderReport, NetError> {
    let clock = Clock::new();
    let ctx = SchemeContext {
        mtu: opts.mtu,
        ideal_schedule: None,
        // The simulator's stream for flow 0: the same seed gives the same media source.
        rng: Some(wisp_sim::seed::stream(opts.seed, "flow/0/media")),
        tables: Tables::new(),
        ip_udp_header: DataSize::from_bytes(u64::from(crate::ip_udp_header(&opts.to))),
        codecs: None,
    };
    let (flow, _) = opts.scheme.build(ctx)?;
    let sock = send_socket(opts)?;
    let mut waiter = Waiter::new(opts.spin).map_err(io_ctx("cannot create a timer"))?;
    waiter.add(&sock, 0).map_err(io_ctx("epoll"))?;
    let config = SendConfig {
        ssrc: rand::random(),
        cname: cname(),
        scheme: opts.scheme.to_string(),
        clip_fingerprint: opts.clip_fingerprint,
        duration: opts.duration,
        rtcp_interval: opts.rtcp_interval,
    };
    let mut s = SendSession::new(flow, config, clock.now());
    let (mut buf, mut rx, mut ready) = (Vec::with_capacity(2048), vec![0u8; 65536], vec![]);
    // The socket's ECN codepoint: Not-ECT until the scheme asks for another.
    let mut ecn = Ecn::NotEct;
    loop {
        let now = clock.now();
        if stop.load(Ordering::Relaxed) || s.is_over(now) {
            break;
        }
        // Feedback.
        loop {
            match sock.recv(&mut rx) {
                Ok(n) => on_sender_datagram(&mut s, &rx[..n], now),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // ICMP port unreachable of an earlier packet (the receiver is not up yet).
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(io_ctx("receive")(e)),
            }
        }
        // The report when it is due, then everything the flow releases now.
        while let Some(t) = s.poll_transmit(now) {
            send_transmit(&sock, opts, t, &mut buf, &mut ecn)?;
        }
        if let Some(p) = s.poll_progress(now) {
            progress(&send_progress_line(&p));
        }
        waiter
            .wait(s.poll_timeout(), &mut ready)
            .map_err(io_ctx("wait"))?;
    }
    // End of the flow: a final SR (its timestamp marks the end) and BYE, repeated in case one is
    // lost on the way.
    let stopped = clock.now();
    buf.clear();
    encode_compound(&s.close(stopped), &mut buf)?;
    set_ecn(&sock, opts, &mut ecn, Ecn::NotEct)?;
    for _ in 0..3 {
        let _ = sock.send(&buf);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(sender_report(&s, opts, stopped))
}

/// `wisp send`'s summary of the session that stopped at `stopped`.
fn sender_report(s: &SendSession, opts: &SendOptions, stopped: Instant) -> SenderReport {
    let spec = opts.scheme.to_string();
    let st = s.stats();
    let secs = (stopped - s.start()).as_secs_f64();
    let rtt = percentiles(&mut st.rtt_ms.clone(), &[0.5, 0.95]);
    let late = percentiles(&mut st.late_us.clone(), &[0.5, 0.99, 1.0]);
    let probe_late = percentiles(&mut st.probe_late_us.clone(), &[0.5, 0.99, 1.0]);
    SenderReport {
        role: "sender",
        scheme: spec.clone(),
        to: opts.to.to_string(),
        flows: vec![SenderMetrics {
            flow: 0,
            scheme: spec,
            duration_s: secs,
            send_rate_kbps: if secs > 0.0 {
                st.bytes as f64 * 8.0 / secs / 1e3
            } else {
                0.0
            },
            packets_sent: st.packets,
            bytes_sent: st.bytes,
            rtt_p50_ms: rtt[0],
            rtt_p95_ms: rtt[1],
            loss_rate: st.loss,
            pacing_late_p50_us: late[0],
            pacing_late_p99_us: late[1],
            pacing_late_max_us: late[2],
            probe_packets: st.probe_late_us.len() as u64,
            probe_late_p50_us: probe_late[0],
            probe_late_p99_us: probe_late[1],
            probe_late_max_us: probe_late[2],
            feedback_messages: st.feedback,
            malformed_packets: st.malformed,
            foreign_packets: st.foreign,
        }],
        samples: st.samples.clone(),
    }
}

/// What the receiving session is, from `wisp recv`'s options; `ssrc` is ours.
fn recv_config(opts: &RecvOptions, ssrc: u32) -> RecvConfig {
    RecvConfig {
        ssrc,
        cname: cname(),
        boot_id: boot_id(),
        scheme: opts.scheme.clone(),
        mtu: opts.mtu,
        duration: opts.duration,
        idle_timeout: opts.idle_timeout,
        rtcp_interval: opts.rtcp_interval,
        video_codecs: opts.video_codecs.clone(),
        clip_fingerprint: opts.clip_fingerprint,
    }
}

/// Opens a receiving socket on `listen`: non-blocking, with large buffers and the kernel's
/// receive timestamps (a note through `progress` when there are none), registered with a new
/// [`Waiter`]. Returns the address it is bound to.
pub(crate) fn listen_socket(
    listen: SocketAddr,
    progress: Progress<'_>,
) -> Result<(UdpSocket, SocketAddr, Waiter), NetError> {
    let sock = UdpSocket::bind(listen).map_err(io_ctx(format!("cannot listen on {listen}")))?;
    let bound = sock.local_addr().map_err(io_ctx("local address"))?;
    sock.set_nonblocking(true)
        .map_err(io_ctx("cannot make the socket non-blocking"))?;
    set_buffers(&sock);
    if !enable_receive_timestamps(&sock) {
        progress("note: no kernel receive timestamps; arrivals are stamped when read");
    }
    if !enable_receive_ecn(&sock, bound.is_ipv6()) {
        progress(
            "note: the kernel does not pass the packets' ECN bits; every packet counts Not-ECT",
        );
    }
    let waiter = Waiter::new(Duration::ZERO).map_err(io_ctx("cannot create a timer"))?;
    waiter.add(&sock, 0).map_err(io_ctx("epoll"))?;
    Ok((sock, bound, waiter))
}

/// A datagram from `from` that arrived at `at`: RTCP, or a media packet of wisp's form (its RTP
/// header extensions, checked sizes); anything else is malformed.
fn on_receiver_datagram(r: &mut RecvSession, buf: &[u8], at: Instant, from: SocketAddr, ecn: Ecn) {
    if rtp::is_rtcp(buf) {
        match rtcp::decode(buf) {
            Ok(items) => r.on_rtcp(at, from, items, buf.len()),
            Err(_) => r.on_malformed(),
        }
        return;
    }
    // The datagram's IP bytes count this family's headers, as the sender sized it.
    let header = crate::ip_udp_header(&from);
    let mut p = match rtp::decode_over(buf, header) {
        Ok(p) => p,
        Err(_) => {
            r.on_malformed();
            if header != crate::IPV4_UDP_HEADER
                && rtp::decode_over(buf, crate::IPV4_UDP_HEADER).is_ok()
            {
                r.note(format!(
                    "{from} sends packets sized for IPv4's {} header bytes over IPv6 ({header}): \
                     a `wisp send` older than this `wisp recv`? Its packets are counted malformed",
                    crate::IPV4_UDP_HEADER
                ));
            }
            return;
        }
    };
    // RTP does not carry the ECN field: the IP header's, as the kernel passed it.
    p.header.ecn = ecn;
    let payload = buf.get(p.payload_at..).unwrap_or_default();
    r.on_media(
        at,
        from,
        MediaPacket {
            ssrc: p.ssrc,
            header: p.header,
            payload,
        },
    );
}

/// Sends one of the receiver's datagrams to the peer (a send that fails is lost, as on the
/// path); feedback counts with its bytes on the wire.
fn send_receiver_transmit(
    sock: &UdpSocket,
    r: &mut RecvSession,
    t: RecvTransmit,
    buf: &mut Vec<u8>,
) {
    buf.clear();
    match t {
        RecvTransmit::Feedback {
            to,
            ssrc,
            media_ssrc,
            feedback,
        } => {
            if rtcp::encode_feedback(&feedback, ssrc, media_ssrc, buf).is_ok() {
                r.on_feedback_sent(buf.len() as u64 + u64::from(crate::ip_udp_header(&to)));
                let _ = sock.send_to(buf, to);
            }
        }
        RecvTransmit::Report {
            to,
            ssrc,
            block,
            cname,
        } => {
            if rtcp::encode_receiver_report(ssrc, Some(block), &cname, buf).is_ok() {
                let _ = sock.send_to(buf, to);
            }
        }
    }
}

fn recv_progress_line(p: &RecvProgress) -> String {
    let delay = |q| fmt_opt(q, "ms");
    let rest = format!(
        "delay p50 {} p95 {}  loss {:.2}%",
        delay(p.delay_p50_ms),
        delay(p.delay_p95_ms),
        p.loss_percent
    );
    progress_line("recv", p.elapsed_s, p.rate_kbps, &rest)
}

/// Runs the receiving side of one flow: until the sender's BYE, `opts.duration` after the
/// first packet, `opts.idle_timeout` without packets, or `stop`.
pub fn recv(
    opts: &RecvOptions,
    stop: &AtomicBool,
    progress: Progress<'_>,
) -> Result<ReceiverReport, NetError> {
    let clock = Clock::new();
    let (sock, listen, mut waiter) = listen_socket(opts.listen, progress)?;
    let mut r = RecvSession::new(recv_config(opts, rand::random()))?;
    let mut pp = match &opts.pingpair {
        Some(p) => {
            let ps = PingPairSide::new(p, clock.now())?;
            waiter.add(ps.sock.fd(), 1).map_err(io_ctx("epoll"))?;
            Some(ps)
        }
        None => None,
    };
    // Once everything is set up (an error is then the only line): until the first packet
    // nothing else is said; the address (its port, when the kernel chose it) tells the user
    // where to point the sender, and that the receiver is waiting.
    progress(&format!("listening on {listen}; waiting for a sender"));
    let (mut rx, mut buf, mut ready) = (vec![0u8; 65536], Vec::with_capacity(2048), vec![]);
    let mut read_lag_us = vec![];
    loop {
        let now = clock.now();
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match r.poll_end(now) {
            Some(RecvEnd::Refused(why)) => return Err(NetError::Input(why)),
            Some(_) => break,
            None => {}
        }
        loop {
            match recv_stamped_ecn(&sock, &mut rx, &clock) {
                Ok((n, from, stamped, lag, ecn)) => {
                    if let Some(lag) = lag {
                        read_lag_us.push(lag.as_nanos() as f64 / 1e3);
                    }
                    on_receiver_datagram(&mut r, &rx[..n], stamped, from, ecn);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(io_ctx("receive")(e)),
            }
        }
        let now = clock.now();
        r.on_read_done(now);
        // Ping-Pair: pairs resolved by replies read before this round's data packets (so every
        // packet that arrived before a normal-priority reply is in the receiver's history),
        // then new replies, then the next probes.
        let mut pp_busy = false;
        if let Some(ps) = &mut pp {
            ps.on_events(r.receiver_mut());
            pp_busy = ps.read_replies(&clock).map_err(|e| NetError::Io {
                what: "ping-pair receive".into(),
                err: io::Error::from(e),
            })?;
            ps.transmit(clock.now());
        }
        r.on_timeout(now);
        // Feedback, then the receiver report when it is due.
        while let Some(t) = r.poll_transmit(now) {
            send_receiver_transmit(&sock, &mut r, t, &mut buf);
        }
        if let Some(p) = r.poll_progress(now) {
            progress(&recv_progress_line(&p));
        }
        while let Some(n) = r.poll_note() {
            progress(&format!("note: {n}"));
        }
        let mut deadline = [
            r.poll_timeout(),
            pp.as_ref().and_then(PingPairSide::poll_timeout),
        ]
        .into_iter()
        .flatten()
        .min();
        if r.awaits_scheme() || pp_busy {
            deadline = Some(now + Duration::from_millis(if pp_busy { 0 } else { 100 }));
        }
        waiter.wait(deadline, &mut ready).map_err(io_ctx("wait"))?;
    }
    let stopped = clock.now();
    while let Some(n) = r.poll_note() {
        progress(&format!("note: {n}"));
    }
    let mut report = summary(&r, opts, listen, stopped, read_lag_us);
    if let Some(mut ps) = pp {
        ps.on_events(r.receiver_mut());
        report.pingpair = Some(ps.stats());
    }
    Ok(report)
}

/// The receiver's Ping-Pair prober and what it measured.
struct PingPairSide {
    sock: crate::pingpair::IcmpSocket,
    prober: wisp_core::pingpair::Prober,
    wmm: wisp_core::pingpair::WmmCheck,
    target: std::net::Ipv4Addr,
    mac_rate: wisp_core::Bitrate,
    pairs: u64,
    t_q_ms: Vec<f64>,
    n_a: Vec<f64>,
    t_c_last: Duration,
    t_c_max: Duration,
    malformed: u64,
    foreign: u64,
}

impl PingPairSide {
    fn new(p: &PingPairRecv, now: Instant) -> Result<Self, NetError> {
        let sock = crate::pingpair::IcmpSocket::open().map_err(|e| match e {
            crate::pingpair::OpenError::Permission { .. } => NetError::Input(e.to_string()),
            crate::pingpair::OpenError::Other(_) => NetError::Io {
                what: "ping-pair".into(),
                err: io::Error::other(e.to_string()),
            },
        })?;
        let config = wisp_core::pingpair::ProberConfig {
            interval: p.interval,
            tos_high: p.tos_high,
            ..Default::default()
        };
        Ok(PingPairSide {
            sock,
            prober: wisp_core::pingpair::Prober::new(config, now),
            wmm: Default::default(),
            target: p.target,
            mac_rate: p.mac_rate,
            pairs: 0,
            t_q_ms: vec![],
            n_a: vec![],
            t_c_last: Duration::ZERO,
            t_c_max: Duration::ZERO,
            malformed: 0,
            foreign: 0,
        })
    }

    /// Results: each pair goes to a `kwikr`/`skype-ukf` receiver (§5.3: it counts its own
    /// sandwiched packets); other schemes only get it measured.
    fn on_events(&mut self, mut receiver: Option<&mut AnyReceiver>) {
        use wisp_core::pingpair::ProberEvent;
        while let Some(e) = self.prober.poll_event() {
            match e {
                ProberEvent::Triplet(t) => self.wmm.on_run(t),
                ProberEvent::Pair(p) => {
                    self.pairs += 1;
                    let Ok(t_q) = p.t_q else { continue };
                    self.t_q_ms.push(t_q.as_millis_f64());
                    if let Some(u) = receiver
                        .as_deref_mut()
                        .and_then(|r| r.on_ping_pair(p.replies, self.mac_rate))
                    {
                        self.n_a.push(u.n_a as f64);
                        self.t_c_last = u.t_c_smoothed;
                        self.t_c_max = self.t_c_max.max(self.t_c_last);
                    }
                }
            }
        }
    }

    /// Reads the replies waiting; each reply's kernel time (`CLOCK_REALTIME`) is put on the
    /// monotonic clock the flow's arrivals use. Returns whether any datagram was read.
    fn read_replies(&mut self, clock: &Clock) -> Result<bool, nix::errno::Errno> {
        let mut any = false;
        while let Some((parsed, stamp)) = self.sock.try_recv()? {
            any = true;
            let lag = crate::pingpair::realtime().saturating_duration_since(stamp);
            let at = clock.now() - lag.min(Duration::from_secs(1));
            match parsed {
                Ok(reply) => {
                    self.prober.on_reply(at, reply.seq);
                }
                Err(e) if e.is_foreign() => self.foreign += 1,
                Err(_) => self.malformed += 1,
            }
        }
        Ok(any)
    }

    /// When the prober wants to run next.
    fn poll_timeout(&self) -> Option<Instant> {
        self.prober.poll_timeout()
    }

    fn transmit(&mut self, now: Instant) {
        self.prober.on_time(now);
        while let Some(p) = self.prober.poll_transmit(now) {
            // A probe that cannot leave (no route yet) is a lost pair, not a failed call.
            let _ = self.sock.send(self.target, p.seq, p.tos, p.payload);
        }
    }

    fn stats(&self) -> crate::report::PingPairStats {
        let mut t_q = self.t_q_ms.clone();
        let mut n_a = self.n_a.clone();
        let verdict = self.wmm.verdict();
        crate::report::PingPairStats {
            target: self.target.to_string(),
            socket: self.sock.kind().name().into(),
            pairs: self.pairs,
            valid: self.t_q_ms.len() as u64,
            t_q_p50_ms: percentiles(&mut t_q, &[0.5])[0],
            n_a_p50: percentiles(&mut n_a, &[0.5])[0],
            t_c_last_ms: self.t_c_last.as_millis_f64(),
            t_c_max_ms: self.t_c_max.as_millis_f64(),
            wmm_reversals: verdict.map(|v| v.reversals),
            wmm_enabled: verdict.map(|v| v.enabled),
            malformed: self.malformed,
            foreign: self.foreign,
        }
    }
}

/// `wisp recv`'s summary of the session that stopped at `stopped`.
fn summary(
    r: &RecvSession,
    opts: &RecvOptions,
    listen: SocketAddr,
    stopped: Instant,
    mut read_lag_us: Vec<f64>,
) -> ReceiverReport {
    let s = r.summary(stopped);
    let w = WindowSpec {
        from: s.from,
        to: s.to,
        synchronised: s.synchronised,
        link: opts.link.as_ref(),
        mtu: opts.mtu,
    };
    let mut m: ReceiverMetrics = receiver_metrics(s.stats.deliveries(), &w, s.scheme.clone());
    let expected = s.stats.expected();
    m.packets_lost = s.stats.lost();
    m.loss_rate = if expected > 0 {
        m.packets_lost as f64 / expected as f64
    } else {
        0.0
    };
    m.jitter_ms = s.stats.jitter_ns() / 1e6;
    m.packets_duplicate = s.stats.duplicates();
    m.packets_reordered = s.stats.reordered();
    m.malformed_packets = s.malformed;
    m.foreign_packets = s.foreign;
    m.packets_ce = s.ce;
    m.feedback_packets = s.feedback_packets;
    m.feedback_bytes = s.feedback_bytes;
    let q = percentiles(&mut read_lag_us, &[0.5, 0.99]);
    (m.read_lag_p50_us, m.read_lag_p99_us) = (q[0], q[1]);
    ReceiverReport {
        role: "receiver",
        scheme: s.scheme,
        listen: listen.to_string(),
        peer: s.peer.map(|p| p.to_string()),
        trace: opts.link.as_ref().map(|k| k.link.name()),
        flows: vec![m],
        pingpair: None,
        video: s.video.cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wisp_core::packet::DataHeader;
    use wisp_core::session::{MAX_UNBOUND_PER_SOURCE, MAX_UNBOUND_SOURCES, ReportBlock};

    #[test]
    fn arrivals_carry_the_kernels_stamp_not_the_read_instant() {
        let clock = Clock::new();
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(enable_receive_timestamps(&rx));
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sent = clock.now();
        tx.send_to(b"stamp", rx.local_addr().unwrap()).unwrap();
        // Read 30 ms after it arrived: the arrival instant is still the kernel's.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let mut buf = [0u8; 64];
        let (n, from, arrived, lag) = recv_stamped(&rx, &mut buf, &clock).unwrap();
        assert_eq!((n, from), (5, tx.local_addr().unwrap()));
        let lag = lag.expect("a kernel stamp");
        assert!(lag >= Duration::from_millis(29), "{lag:?}");
        assert!(arrived >= sent, "{arrived:?} {sent:?}");
        assert!(
            arrived - sent < Duration::from_millis(5),
            "{:?}",
            arrived - sent
        );
    }

    /// `--dscp` marks IPv6 packets too (their traffic class; IP_TOS was set and ignored) and
    /// IPv4 ones (their TOS): the receiver reads the mark the kernel delivered.
    #[test]
    fn dscp_marks_ipv4_and_ipv6_packets() {
        use nix::sys::socket::sockopt;
        use nix::sys::socket::{
            ControlMessageOwned, MsgFlags, SockaddrStorage, recvmsg, setsockopt,
        };
        for host in ["127.0.0.1", "[::1]"] {
            let Ok(rx) = UdpSocket::bind(format!("{host}:0")) else {
                eprintln!("skipping {host}: no such address here");
                continue;
            };
            let v6 = host.starts_with('[');
            if v6 {
                setsockopt(&rx, sockopt::Ipv6RecvTClass, &true).unwrap();
            } else {
                setsockopt(&rx, sockopt::IpRecvTos, &true).unwrap();
            }
            rx.set_read_timeout(Some(std::time::Duration::from_secs(5)))
                .unwrap();
            let mut o = SendOptions::new(
                "cbr:rate-kbps=200".parse().unwrap(),
                rx.local_addr().unwrap(),
            );
            o.duration = Duration::from_millis(100);
            o.dscp = Some(46);
            let stop = AtomicBool::new(false);
            send(&o, &stop, &mut |_| {}).unwrap();
            let mut buf = [0u8; 2048];
            let mut iov = [std::io::IoSliceMut::new(&mut buf)];
            let mut cmsg = nix::cmsg_space!(i32, i32);
            let m = recvmsg::<SockaddrStorage>(
                std::os::fd::AsRawFd::as_raw_fd(&rx),
                &mut iov,
                Some(&mut cmsg),
                MsgFlags::empty(),
            )
            .unwrap();
            let marks: Vec<i32> = m
                .cmsgs()
                .unwrap()
                .filter_map(|c| match c {
                    ControlMessageOwned::Ipv6TClass(t) => Some(t),
                    ControlMessageOwned::Ipv4Tos(t) => Some(i32::from(t)),
                    _ => None,
                })
                .collect();
            assert_eq!(marks, vec![46 << 2], "{host}");
        }
    }

    /// A scheme's ECN codepoint is on its media packets' IP headers (IPv4's TOS, IPv6's traffic
    /// class) beside the DSCP, RTCP leaves Not-ECT, and the receiving side reads it back
    /// ([`recv_stamped_ecn`]): `scream:ecn=l4s` is ECT(1), `nada:ecn=true` ECT(0), `cbr`
    /// Not-ECT.
    #[test]
    fn media_packets_carry_the_schemes_ecn_codepoint() {
        for host in ["127.0.0.1", "[::1]"] {
            for (scheme, want) in [
                ("scream:ecn=l4s", Ecn::Ect1),
                ("nada:ecn=true", Ecn::Ect0),
                ("cbr:rate-kbps=200", Ecn::NotEct),
            ] {
                let Ok(rx) = UdpSocket::bind(format!("{host}:0")) else {
                    eprintln!("skipping {host}: no such address here");
                    continue;
                };
                assert!(enable_receive_ecn(&rx, host.starts_with('[')));
                rx.set_read_timeout(Some(std::time::Duration::from_millis(200)))
                    .unwrap();
                let mut o = SendOptions::new(scheme.parse().unwrap(), rx.local_addr().unwrap());
                o.duration = Duration::from_millis(200);
                o.dscp = Some(46);
                send(&o, &AtomicBool::new(false), &mut |_| {}).unwrap();
                let clock = Clock::new();
                let mut buf = [0u8; 2048];
                let (mut media, mut rtcp) = (vec![], vec![]);
                while let Ok((n, _, _, _, ecn)) = recv_stamped_ecn(&rx, &mut buf, &clock) {
                    if rtp::is_rtcp(&buf[..n]) {
                        rtcp.push(ecn);
                    } else {
                        media.push(ecn);
                    }
                }
                assert!(!media.is_empty() && !rtcp.is_empty(), "{host} {scheme}");
                assert!(
                    media.iter().all(|&e| e == want),
                    "{host} {scheme}: {media:?}"
                );
                assert!(
                    rtcp.iter().all(|&e| e == Ecn::NotEct),
                    "{host} {scheme}: {rtcp:?}"
                );
            }
        }
    }

    #[test]
    fn a_cbr_flow_over_loopback() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut ropts = RecvOptions::new("127.0.0.1:0".parse().unwrap());
        ropts.duration = Some(Duration::from_secs(5));
        // Bind first to learn the port.
        let probe = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = probe.local_addr().unwrap().port();
        drop(probe);
        ropts.listen = SocketAddr::from(([127, 0, 0, 1], port));
        let s2 = Arc::clone(&stop);
        let rx = std::thread::spawn(move || recv(&ropts, &s2, &mut |_| {}).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(100));
        let mut sopts = SendOptions::new(
            "cbr:rate-kbps=1200".parse().unwrap(),
            SocketAddr::from(([127, 0, 0, 1], port)),
        );
        sopts.duration = Duration::from_millis(1500);
        let mut lines = vec![];
        let sent = send(&sopts, &stop, &mut |l| lines.push(l.to_string())).unwrap();
        let got = rx.join().unwrap();
        let s = &sent.flows[0];
        let g = &got.flows[0];
        // 1200 kbit/s of 1500-byte packets: one every 10 ms, 150 in 1.5 s (fewer if the machine
        // is so loaded that wake-ups come late: the pacer does not catch up).
        assert!((120..=151).contains(&s.packets_sent), "{s:?}");
        assert_eq!(
            g.packets_delivered + g.packets_lost,
            s.packets_sent,
            "{g:?}"
        );
        assert_eq!(g.packets_lost, 0);
        assert_eq!(got.scheme, "cbr:rate-kbps=1200");
        assert_eq!(g.clock, "synchronised");
        assert!(
            g.throughput_kbps > 900.0 && g.throughput_kbps < 1300.0,
            "{g:?}"
        );
        assert!(g.delay_p50_ms.unwrap() < 50.0, "{g:?}");
        assert!(s.rtt_p50_ms.is_some_and(|r| r < 100.0), "{s:?}");
        assert_eq!(s.loss_rate, Some(0.0));
        assert_eq!(g.malformed_packets, 0);
        assert!(!lines.is_empty());
    }

    /// `alfalfa` over loopback: the diffs travel in the packets, and the receiver decodes what
    /// the sender coded: every frame it shows is one the sender logged, with the same state,
    /// picture, bytes, SSIM and base, and the capture instant the piece's age gives.
    #[test]
    fn alfalfa_diffs_travel_in_the_packets() {
        use wisp_core::scheme::alfalfa::{AlfalfaConfig, VideoLog};
        let stop = Arc::new(AtomicBool::new(false));
        let port = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut ropts = RecvOptions::new(SocketAddr::from(([127, 0, 0, 1], port)));
        ropts.duration = Some(Duration::from_secs(5));
        let s2 = Arc::clone(&stop);
        let rx = std::thread::spawn(move || recv(&ropts, &s2, &mut |_| {}).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(100));
        let sent_log = VideoLog::default();
        let config = AlfalfaConfig {
            log: Some(sent_log.clone()),
            ..AlfalfaConfig::default()
        };
        let mut sopts = SendOptions::new(
            SchemeConfig::Alfalfa(Box::new(config)),
            SocketAddr::from(([127, 0, 0, 1], port)),
        );
        sopts.duration = Duration::from_millis(2000);
        send(&sopts, &stop, &mut |_| {}).unwrap();
        let got = rx.join().unwrap();
        assert_eq!(got.scheme, "alfalfa");
        let log = got.video.expect("an alfalfa receiver has a video log");
        let (sent, shown) = (sent_log.frames(), log.frames());
        assert!(sent.len() >= 20, "{} frames coded in 2 s", sent.len());
        assert!(
            shown.len() * 10 >= sent.len() * 9,
            "{} of {}",
            shown.len(),
            sent.len()
        );
        assert_eq!(log.bad_pieces(), 0);
        for f in &shown {
            let s = sent
                .iter()
                .find(|s| s.state == f.state)
                .unwrap_or_else(|| panic!("{f:?} was never sent"));
            assert_eq!(
                (f.source, f.bytes, f.ssim_db, f.base),
                (s.source, s.bytes, s.ssim_db, s.base)
            );
            let d = f.capture.as_nanos().abs_diff(s.capture.as_nanos());
            assert!(d < 1000, "capture {:?} vs {:?}", f.capture, s.capture);
            assert!(f.display.is_some_and(|t| t >= f.capture));
        }
    }

    /// The progress lines, character for character.
    #[test]
    fn progress_lines() {
        let send = SendProgress {
            elapsed_s: 3.04,
            rate_kbps: 1199.96,
            target_kbps: Some(1500.0),
            rtt_ms: None,
            loss: Some(0.0123),
        };
        assert_eq!(
            send_progress_line(&send),
            "   3.0 s  send   1200.0 kbit/s  target 1500.0 kbit/s  rtt -  loss 1.23%"
        );
        let recv = RecvProgress {
            elapsed_s: 12.0,
            rate_kbps: 96.0,
            delay_p50_ms: Some(21.25),
            delay_p95_ms: None,
            loss_percent: 0.0,
        };
        assert_eq!(
            recv_progress_line(&recv),
            "  12.0 s  recv     96.0 kbit/s  delay p50 21.2 ms p95 -  loss 0.00%"
        );
    }

    #[test]
    fn ideal_refuses_to_run_on_a_real_network() {
        let stop = AtomicBool::new(false);
        let o = SendOptions::new("ideal".parse().unwrap(), "127.0.0.1:9".parse().unwrap());
        let e = send(&o, &stop, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("simulation"), "{e}");
    }

    /// A sending session of `gcc` with our SSRC `ssrc`.
    fn sending(ssrc: u32) -> SendSession {
        let (flow, _) = "gcc-remb"
            .parse::<SchemeConfig>()
            .unwrap()
            .build(SchemeContext::new())
            .unwrap();
        let config = SendConfig {
            ssrc,
            cname: "1@x".into(),
            scheme: "gcc-remb".into(),
            clip_fingerprint: None,
            duration: Duration::from_secs(30),
            rtcp_interval: Duration::from_secs(1),
        };
        SendSession::new(flow, config, Instant::ZERO)
    }

    #[test]
    fn feedback_and_reports_reach_the_sender() {
        use wisp_core::wire::{Feedback, Remb};
        let mut s = sending(9);
        let mut buf = vec![];
        let fb = Feedback::encode(&Remb::new(wisp_core::Bitrate::from_kbps(700)));
        rtcp::encode_feedback(&fb, 5, 9, &mut buf).unwrap();
        on_sender_datagram(&mut s, &buf, Instant::from_millis(50));
        assert_eq!(s.stats().feedback, 1);
        // Another scheme's message (a TCP ACK) does not decode as GCC's: malformed.
        buf.clear();
        let ack = Feedback::encode(&wisp_core::scheme::tcp::ack::TcpAck::new(
            3,
            Instant::from_millis(1),
            Instant::from_millis(21),
            &[],
        ));
        rtcp::encode_feedback(&ack, 5, 9, &mut buf).unwrap();
        on_sender_datagram(&mut s, &buf, Instant::from_millis(51));
        assert_eq!((s.stats().feedback, s.stats().malformed), (1, 1));
        // A receiver report about our SSRC 9: LSR = the SR sent at 1 s, held 5 ms, now 1.045 s.
        buf.clear();
        let sr_at = Instant::from_secs(1);
        let block = ReportBlock {
            ssrc: 9,
            fraction_lost: 0,
            total_lost: 2,
            highest_seq: 99,
            jitter: 0,
            last_sr: rtcp::ntp_middle(sr_at),
            delay_since_last_sr: rtcp::to_q16(Duration::from_millis(5)),
        };
        rtcp::encode_receiver_report(5, Some(block), "x@y", &mut buf).unwrap();
        on_sender_datagram(&mut s, &buf, sr_at + Duration::from_millis(45));
        let rtt = &s.stats().rtt_ms;
        assert_eq!(rtt.len(), 1);
        assert!((rtt[0] - 40.0).abs() < 0.05, "{rtt:?}");
        assert_eq!(s.stats().loss, Some(0.02));
        // Reports about another SSRC are not ours.
        let mut other = sending(10);
        on_sender_datagram(&mut other, &buf, sr_at + Duration::from_millis(45));
        assert!(other.stats().rtt_ms.is_empty());
        on_sender_datagram(&mut s, &[0x80, 201, 0, 9], Instant::ZERO);
        assert_eq!(s.stats().malformed, 2);
        // RTP is not for the sender: foreign.
        buf.clear();
        rtp::encode(&DataHeader::default(), 9, &mut buf).unwrap();
        on_sender_datagram(&mut s, &buf, Instant::ZERO);
        assert_eq!(s.stats().foreign, 1);
    }

    /// A receiving session with our SSRC 1 that runs the scheme the sender announces.
    fn receiving() -> RecvSession {
        let opts = RecvOptions::new("127.0.0.1:0".parse().unwrap());
        RecvSession::new(recv_config(&opts, 1)).unwrap()
    }

    #[test]
    fn hostile_datagrams_are_counted_and_dropped() {
        let mut r = receiving();
        let from: SocketAddr = "127.0.0.1:5".parse().unwrap();
        for b in [
            &[][..],
            &[0x80, 200, 0xff, 0xff],
            &[0x40, 96, 0, 0, 0, 0],
            &[0xff; 40],
        ] {
            feed(&mut r, b, from);
        }
        assert_eq!(r.malformed(), 4);
        assert!(r.stats().deliveries().is_empty());
        // A valid packet with a hostile sequence number does not allocate or panic.
        let mut buf = vec![];
        let h = DataHeader {
            seq: u64::MAX - 1,
            size: DataSize::from_bytes(200),
            ..Default::default()
        };
        rtp::encode(&h, 9, &mut buf).unwrap();
        feed(&mut r, &buf, from);
        feed(&mut r, &buf, from);
        assert_eq!(r.stats().duplicates(), 1);
        assert_eq!(r.stats().lost(), 0);
        let other: SocketAddr = "127.0.0.1:6".parse().unwrap();
        feed(&mut r, &buf, other);
        assert_eq!(r.foreign(), 1);
    }

    /// A wisp media packet from `ssrc` with sequence number `seq`.
    fn media(ssrc: u32, seq: u64) -> Vec<u8> {
        let mut buf = vec![];
        let h = DataHeader {
            seq,
            size: DataSize::from_bytes(1200),
            send_time: Instant::from_millis(seq),
            ..Default::default()
        };
        rtp::encode(&h, ssrc, &mut buf).unwrap();
        buf
    }

    /// The sender's compound report with its scheme announcement.
    fn announcement(ssrc: u32, spec: &str) -> Vec<u8> {
        let mut buf = vec![];
        rtcp::encode_sender_report(ssrc, Instant::from_secs(1), 0, 0, 0, "1@x", &mut buf).unwrap();
        rtcp::encode_scheme(ssrc, spec, None, &mut buf).unwrap();
        buf
    }

    fn feed(r: &mut RecvSession, b: &[u8], from: SocketAddr) {
        on_receiver_datagram(r, b, Instant::from_secs(1), from, Ecn::NotEct);
    }

    /// One stray RTCP datagram (a receiver report header from another port) used
    /// to become the peer, and the real sender's whole flow was then foreign.
    #[test]
    fn a_stray_rtcp_datagram_does_not_choose_the_peer() {
        let mut r = receiving();
        let stranger: SocketAddr = "127.0.0.1:7".parse().unwrap();
        let sender: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        feed(
            &mut r,
            &[0x80, 0xc9, 0, 1, 0x12, 0x34, 0x56, 0x78],
            stranger,
        );
        // A stranger's announcement of another scheme is not taken either.
        feed(&mut r, &announcement(0xbad, "tcp"), stranger);
        assert_eq!(r.peer(), None);
        feed(&mut r, &announcement(42, "cbr:rate-kbps=100"), sender);
        for seq in 0..10 {
            feed(&mut r, &media(42, seq), sender);
        }
        assert_eq!(r.peer(), Some(sender));
        assert_eq!(r.scheme(), Some("cbr:rate-kbps=100"));
        assert_eq!(r.stats().deliveries().len(), 10);
        assert_eq!(r.foreign(), 2);
        // The stranger's BYE neither ends the session nor counts as the sender's.
        let mut bye = vec![];
        rtcp::encode_bye(42, &mut bye).unwrap();
        feed(&mut r, &bye, stranger);
        assert!(!r.has_ended());
        assert_eq!(r.foreign(), 3);
        // The sender's own BYE does.
        feed(&mut r, &bye, sender);
        assert!(r.has_ended());
    }

    /// A replay of the sender's own packets from another address during the session is
    /// foreign: it is never adopted, and its BYE ends nothing.
    #[test]
    fn a_replay_from_elsewhere_is_foreign() {
        let mut r = receiving();
        let sender: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let replayer: SocketAddr = "127.0.0.1:6000".parse().unwrap();
        feed(&mut r, &announcement(42, "cbr"), sender);
        feed(&mut r, &media(42, 0), sender);
        let mut bye = announcement(42, "cbr");
        rtcp::encode_bye(42, &mut bye).unwrap();
        for seq in 0..50 {
            feed(&mut r, &media(42, seq), replayer);
        }
        feed(&mut r, &bye, replayer);
        assert_eq!((r.peer(), r.foreign()), (Some(sender), 51));
        assert!(!r.has_ended());
        assert_eq!(r.stats().deliveries().len(), 1);
        // Another SSRC from the peer's own address is foreign too.
        feed(&mut r, &media(43, 1), sender);
        assert_eq!(r.foreign(), 52);
    }

    proptest::proptest! {
        /// Random datagrams before the sender (a 20,000-datagram mix locked the
        /// receiver) choose no peer and keep a bounded few bytes; the sender is then taken.
        #[test]
        fn random_datagrams_never_choose_the_peer(
            flood in proptest::collection::vec(
                (proptest::collection::vec(proptest::prelude::any::<u8>(), 0..120), 1u16..2000, 0u8..4),
                0..300,
            )
        ) {
            let mut r = receiving();
            for (mut b, port, shape) in flood {
                // Some look like RTP or RTCP: version 2, an RTCP type, or a whole wisp report.
                match (shape, b.len()) {
                    (1, 2..) => { b[0] = 0x80 | (b[0] & 0x3f); }
                    (2, 2..) => { b[0] = 0x80 | (b[0] & 0x1f); b[1] = 200 + b[1] % 5; }
                    (3, _) => b = announcement(u32::from(port), "tcp"),
                    _ => {}
                }
                let from = SocketAddr::from(([127, 0, 0, 1], port));
                feed(&mut r, &b, from);
            }
            proptest::prop_assert_eq!(r.peer(), None);
            proptest::prop_assert!(r.scheme().is_none());
            proptest::prop_assert!(r.held() <= MAX_UNBOUND_SOURCES * MAX_UNBOUND_PER_SOURCE);
            let sender: SocketAddr = "127.0.0.1:5000".parse().unwrap();
            feed(&mut r, &announcement(42, "cbr"), sender);
            feed(&mut r, &media(42, 0), sender);
            proptest::prop_assert_eq!(r.peer(), Some(sender));
            proptest::prop_assert_eq!(r.scheme(), Some("cbr:rate-kbps=1000"));
            proptest::prop_assert!(r.held() == 0);
        }
    }
}
