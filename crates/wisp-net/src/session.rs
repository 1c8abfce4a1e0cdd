//! `wisp send` / `wisp recv`: one flow of any registered scheme over real UDP.
//!
//! The sender runs the scheme's [`FlowSender`] (its sender half with the traffic source and
//! pacer that [`SchemeConfig::build`] gives it) on [`Clock`] time, and sends each packet as RTP
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
//! The loop is the one of [`wisp_core::flow`]: send what the flow releases now, then sleep until
//! the flow's next wake-up or until feedback arrives. Nothing is spawned; one thread per side.
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
//!
//! With [`RecvOptions::pingpair`] (`wisp recv --pingpair-target`) the receiver also runs
//! Ping-Pair ([`crate::pingpair`]) against the gateway in the same loop; each resolved pair is
//! handed, after the data packets that arrived before its replies, to a `kwikr`/`skype-ukf`
//! receiver, which counts its own sandwiched packets (CoNEXT'17 §5.3) and feeds T_c to eq. (3).
//! The replies' kernel times (`CLOCK_REALTIME`) are put on the monotonic clock the data packets
//! use, as the data packets' own stamps are.

use crate::report::{
    Delivery, KnownLink, ReceiverMetrics, ReceiverReport, SenderMetrics, SenderReport, WindowSpec,
    fmt_opt, percentiles, receiver_metrics,
};
use crate::rtcp::{self, ReportBlock, RtcpItem};
use crate::rtp;
use crate::timer::Waiter;
use crate::{Clock, boot_id};
use std::collections::HashSet;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use wisp_core::controller::{WireReceiver, WireSender};
use wisp_core::flow::FlowSender;
use wisp_core::packet::{Content, DEFAULT_MTU, DataHeader};
use wisp_core::scheme::alfalfa::InjectedCodecs;
use wisp_core::scheme::{AnyReceiver, AnySender, BuildError, SchemeConfig, SchemeContext};
use wisp_core::tables::Tables;
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

fn io_ctx(what: impl Into<String>) -> impl FnOnce(io::Error) -> NetError {
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

fn same_host(cname: &str) -> bool {
    match (cname.split_once('@'), boot_id()) {
        (Some((_, b)), Some(ours)) => b == ours,
        _ => false,
    }
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

/// One datagram with its arrival instant on `clock`: the kernel's receive timestamp when there
/// is one (`CLOCK_REALTIME`, mapped onto the monotonic clock through the two clocks' offset
/// read now), else the instant of reading. Also returns how long ago the kernel stamped it.
pub(crate) fn recv_stamped(
    sock: &UdpSocket,
    buf: &mut [u8],
    clock: &Clock,
) -> io::Result<(usize, SocketAddr, Instant, Option<Duration>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, SockaddrStorage, recvmsg};
    use nix::sys::time::TimeSpec;
    use std::os::fd::AsRawFd;
    let mut iov = [io::IoSliceMut::new(buf)];
    let mut space = nix::cmsg_space!(TimeSpec);
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
            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                stamped = Some(ts);
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
    let (mut flow, _) = opts.scheme.build(ctx)?;
    let spec = opts.scheme.to_string();
    let sock =
        UdpSocket::bind(unspecified_for(&opts.to)).map_err(io_ctx("cannot open a UDP socket"))?;
    sock.connect(opts.to)
        .map_err(io_ctx(format!("cannot send to {}", opts.to)))?;
    sock.set_nonblocking(true)
        .map_err(io_ctx("cannot make the socket non-blocking"))?;
    set_buffers(&sock);
    // A packet the scheme sizes as N bytes is N bytes of IP on the wire: the datagram leaves
    // room for this family's IP and UDP headers. Don't-fragment: a packet larger than the path
    // MTU is refused by the kernel (an error below), never sent in fragments.
    let header = crate::ip_udp_header(&opts.to);
    crate::set_dont_fragment(&sock, opts.to.is_ipv6())
        .map_err(io_ctx("cannot set don't-fragment on the socket"))?;
    if let Some(dscp) = opts.dscp {
        use nix::sys::socket::{setsockopt, sockopt};
        // IP_TOS on an IPv6 socket is accepted and marks nothing: IPv6 has its traffic class.
        let r = if opts.to.is_ipv6() {
            setsockopt(&sock, sockopt::Ipv6TClass, &(i32::from(dscp) << 2))
        } else {
            setsockopt(&sock, sockopt::Ipv4Tos, &(i32::from(dscp) << 2))
        };
        r.map_err(|e| NetError::Input(format!("--dscp: cannot mark the packets: {e}")))?;
    }
    let mut waiter = Waiter::new(opts.spin).map_err(io_ctx("cannot create a timer"))?;
    waiter.add(&sock, 0).map_err(io_ctx("epoll"))?;
    let ssrc: u32 = rand::random();
    let cname = cname();
    let mut s = SenderState::default();
    let start = clock.now();
    let end = start + opts.duration;
    let mut next_report = start;
    let mut next_progress = start + Duration::from_secs(1);
    let mut wanted_wake: Option<Instant> = None;
    let (mut buf, mut rx, mut ready) = (Vec::with_capacity(2048), vec![0u8; 65536], vec![]);
    let mut last_progress = (start, 0u64);
    loop {
        let now = clock.now();
        if stop.load(Ordering::Relaxed) || now >= end {
            break;
        }
        // Feedback.
        loop {
            match sock.recv(&mut rx) {
                Ok(n) => s.on_datagram(&rx[..n], now, ssrc, &mut flow),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // ICMP port unreachable of an earlier packet (the receiver is not up yet).
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(io_ctx("receive")(e)),
            }
        }
        if now >= next_report {
            buf.clear();
            s.report(ssrc, now, &cname, &spec, opts.clip_fingerprint, &mut buf)?;
            let _ = sock.send(&buf);
            next_report = now + opts.rtcp_interval;
        }
        // Data: everything the flow releases now.
        let mut sent_now = false;
        while let Some(h) = flow.poll_transmit(now) {
            // A scheme with a payload of its own (coded video's pieces of diffs) puts it first.
            let payload = flow.sender_mut().take_payload(h.seq);
            rtp::encode_over(
                &h,
                ssrc,
                payload.as_deref().unwrap_or(&[]),
                header,
                &mut buf,
            )
            .map_err(|e| NetError::Input(e.to_string()))?;
            match sock.send(&buf) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(nix::libc::EMSGSIZE) => {
                    let mtu = sock
                        .local_addr()
                        .and_then(|l| crate::path_mtu(l.ip(), opts.to));
                    return Err(NetError::Input(format!(
                        "`{spec}` sized a packet of {} bytes, larger than the path MTU to {} \
                         ({}): not sent (don't-fragment); the schemes' packets take up to \
                         {} bytes of IP: use a path whose MTU is at least that",
                        h.size.bytes(),
                        opts.to,
                        mtu.map_or_else(|e| format!("unknown: {e}"), |m| format!("{m} bytes")),
                        opts.mtu.bytes(),
                    )));
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionRefused
                    ) =>
                {
                    s.send_errors += 1
                }
                Err(e) => return Err(io_ctx("send")(e)),
            }
            s.packets += 1;
            s.bytes += h.size.bytes();
            s.last_rtp_time = rtp::rtp_timestamp(h.send_time);
            sent_now = true;
        }
        if sent_now {
            if let Some(w) = wanted_wake.filter(|&w| w <= now) {
                s.late_us.push((now - w).as_nanos() as f64 / 1e3);
            }
        }
        if now >= next_progress {
            let secs = (now - last_progress.0).as_secs_f64();
            let rate = (s.bytes - last_progress.1) as f64 * 8.0 / secs / 1e3;
            let target = WireSender::stats(flow.sender())
                .target_rate
                .map(|r| r.kbps_f64());
            progress(&format!(
                "{:6.1} s  send {:8.1} kbit/s  target {}  rtt {}  loss {}",
                (now - start).as_secs_f64(),
                rate,
                fmt_opt(target, "kbit/s"),
                fmt_opt(s.rtt_ms.last().copied(), "ms"),
                s.loss
                    .map_or_else(|| "-".into(), |l| format!("{:.2}%", l * 100.0)),
            ));
            last_progress = (now, s.bytes);
            next_progress += Duration::from_secs(1);
        }
        wanted_wake = flow.poll_timeout();
        let deadline = [
            wanted_wake,
            Some(next_report),
            Some(next_progress),
            Some(end),
        ]
        .into_iter()
        .flatten()
        .min();
        waiter.wait(deadline, &mut ready).map_err(io_ctx("wait"))?;
    }
    // End of the flow: a final SR (its timestamp marks the end) and BYE, repeated in case one is
    // lost on the way.
    let stopped = clock.now();
    buf.clear();
    s.report(
        ssrc,
        stopped,
        &cname,
        &spec,
        opts.clip_fingerprint,
        &mut buf,
    )?;
    rtcp::encode_bye(ssrc, &mut buf).map_err(|e| NetError::Input(e.to_string()))?;
    for _ in 0..3 {
        let _ = sock.send(&buf);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let secs = (stopped - start).as_secs_f64();
    let rtt = percentiles(&mut s.rtt_ms, &[0.5, 0.95]);
    let late = percentiles(&mut s.late_us, &[0.5, 0.99, 1.0]);
    Ok(SenderReport {
        role: "sender",
        scheme: spec.clone(),
        to: opts.to.to_string(),
        flows: vec![SenderMetrics {
            flow: 0,
            scheme: spec,
            duration_s: secs,
            send_rate_kbps: if secs > 0.0 {
                s.bytes as f64 * 8.0 / secs / 1e3
            } else {
                0.0
            },
            packets_sent: s.packets,
            bytes_sent: s.bytes,
            rtt_p50_ms: rtt[0],
            rtt_p95_ms: rtt[1],
            loss_rate: s.loss,
            pacing_late_p50_us: late[0],
            pacing_late_p99_us: late[1],
            pacing_late_max_us: late[2],
            feedback_messages: s.feedback,
            malformed_packets: s.malformed,
            foreign_packets: s.foreign,
        }],
    })
}

#[derive(Debug, Default)]
struct SenderState {
    packets: u64,
    bytes: u64,
    last_rtp_time: u32,
    send_errors: u64,
    rtt_ms: Vec<f64>,
    loss: Option<f64>,
    late_us: Vec<f64>,
    feedback: u64,
    malformed: u64,
    foreign: u64,
}

impl SenderState {
    fn report(
        &self,
        ssrc: u32,
        now: Instant,
        cname: &str,
        spec: &str,
        clip: Option<u64>,
        out: &mut Vec<u8>,
    ) -> Result<(), NetError> {
        let e = |e: rtcp::RtcpError| NetError::Input(e.to_string());
        rtcp::encode_sender_report(
            ssrc,
            now,
            self.last_rtp_time,
            self.packets as u32,
            self.bytes as u32,
            cname,
            out,
        )
        .map_err(e)?;
        rtcp::encode_scheme(ssrc, spec, clip, out).map_err(e)
    }

    fn on_datagram(
        &mut self,
        buf: &[u8],
        now: Instant,
        ssrc: u32,
        flow: &mut FlowSender<AnySender>,
    ) {
        if !rtp::is_rtcp(buf) {
            self.foreign += 1;
            return;
        }
        let Ok(items) = rtcp::decode(buf) else {
            self.malformed += 1;
            return;
        };
        for item in items {
            match item {
                // A message the scheme cannot decode is malformed.
                RtcpItem::Feedback(fb) => match flow.on_feedback(now, &fb) {
                    Ok(()) => self.feedback += 1,
                    Err(_) => self.malformed += 1,
                },
                RtcpItem::ReceiverReport { blocks, .. } => {
                    for b in blocks.iter().filter(|b| b.ssrc == ssrc) {
                        self.on_report_block(b, now);
                    }
                }
                _ => {}
            }
        }
    }

    /// RFC 3550 §6.4.1: RTT = A − LSR − DLSR, in 1/65536 s.
    fn on_report_block(&mut self, b: &ReportBlock, now: Instant) {
        if b.last_sr != 0 {
            let rtt = rtcp::ntp_middle(now)
                .wrapping_sub(b.last_sr)
                .wrapping_sub(b.delay_since_last_sr);
            if rtt < 1 << 31 {
                self.rtt_ms.push(rtcp::from_q16(rtt).as_millis_f64());
            }
        }
        let expected = u64::from(b.highest_seq) + 1;
        self.loss = Some((f64::from(b.total_lost.max(0)) / expected as f64).min(1.0));
    }
}

/// The receiving side's per-flow statistics (RFC 3550 §6.4.1, Appendix A.3 and A.8).
#[derive(Debug, Default)]
struct RecvStats {
    deliveries: Vec<Delivery>,
    seen: HashSet<u64>,
    base_seq: Option<u64>,
    highest_seq: u64,
    duplicates: u64,
    reordered: u64,
    /// Jitter in ns (A.8), and the previous transit time.
    jitter_ns: f64,
    last_transit: Option<i128>,
    expected_prior: u64,
    received_prior: u64,
}

impl RecvStats {
    fn on_packet(&mut self, h: &DataHeader, now: Instant) -> bool {
        if !self.seen.insert(h.seq) {
            self.duplicates += 1;
            return false;
        }
        match self.base_seq {
            None => {
                self.base_seq = Some(h.seq);
                self.highest_seq = h.seq;
            }
            Some(b) => {
                if h.seq < b {
                    self.base_seq = Some(h.seq);
                }
                if h.seq < self.highest_seq {
                    self.reordered += 1;
                } else {
                    self.highest_seq = h.seq;
                }
            }
        }
        let transit = i128::from(now.as_nanos()) - i128::from(h.send_time.as_nanos());
        if let Some(prev) = self.last_transit {
            let d = (transit - prev).unsigned_abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit = Some(transit);
        self.deliveries.push(Delivery {
            seq: h.seq,
            sent: h.send_time,
            arrived: now,
            bytes: h.size.bytes(),
        });
        true
    }

    fn expected(&self) -> u64 {
        self.base_seq
            .map_or(0, |b| self.highest_seq.saturating_sub(b).saturating_add(1))
    }

    fn lost(&self) -> u64 {
        self.expected().saturating_sub(self.seen.len() as u64)
    }

    fn block(&mut self, media: u32, last_sr: Option<(u32, Instant)>, now: Instant) -> ReportBlock {
        let expected = self.expected();
        let received = self.seen.len() as u64;
        let exp_int = expected.saturating_sub(self.expected_prior);
        let rec_int = received.saturating_sub(self.received_prior);
        self.expected_prior = expected;
        self.received_prior = received;
        let lost_int = exp_int.saturating_sub(rec_int);
        let fraction = (lost_int << 8).checked_div(exp_int).unwrap_or(0).min(255) as u8;
        let (lsr, dlsr) = last_sr.map_or((0, 0), |(lsr, at)| (lsr, rtcp::to_q16(now - at)));
        ReportBlock {
            ssrc: media,
            fraction_lost: fraction,
            total_lost: self.lost().min(0x7f_ffff) as i32,
            highest_seq: self.highest_seq as u32,
            jitter: (self.jitter_ns * rtp::CLOCK_RATE_HZ as f64 / 1e9) as u32,
            last_sr: lsr,
            delay_since_last_sr: dlsr,
        }
    }
}

/// The receiving side.
struct Receiving {
    receiver: Option<AnyReceiver>,
    /// Given to an `alfalfa` scheme that has no codec implementation ([`RecvOptions::video_codecs`]).
    video_codecs: Option<InjectedCodecs>,
    scheme: Option<String>,
    /// Packets that arrived before the scheme was known (replayed when it is), with their
    /// payload when it is not all zeros.
    pending: Vec<(Instant, DataHeader, Option<Vec<u8>>)>,
    /// RTCP datagrams that arrived before the peer was chosen, decoded: (source, arrival,
    /// items).
    unbound: std::collections::VecDeque<(SocketAddr, Instant, Vec<RtcpItem>)>,
    ssrc: u32,
    media_ssrc: Option<u32>,
    peer: Option<SocketAddr>,
    synchronised: bool,
    last_sr: Option<(u32, Instant)>,
    sender_end: Option<Instant>,
    bye: Option<Instant>,
    first_arrival: Option<Instant>,
    last_arrival: Option<Instant>,
    stats: RecvStats,
    malformed: u64,
    foreign: u64,
    feedback_packets: u64,
    feedback_bytes: u64,
    notes: Vec<String>,
    /// The fingerprint of this receiver's clip ([`RecvOptions::clip_fingerprint`]).
    clip: Option<u64>,
    /// Why the sender's flow was refused (its clip is not ours): the session ends with it.
    refused: Option<String>,
    /// How long after the kernel's stamp each datagram was read, µs.
    read_lag_us: Vec<f64>,
    /// The latest instant handed to the receiver half: a kernel stamp earlier than it (a
    /// datagram stamped while the loop ran timers) is raised to it, so time never runs
    /// backwards for the scheme.
    floor: Instant,
}

const MAX_PENDING: usize = 100_000;
/// RTCP datagrams kept from sources that are not the peer before it is known: at most this
/// many sources' worth ([`Receiving::keep_unbound`])…
const MAX_UNBOUND_SOURCES: usize = 16;
/// …of at most this many datagrams each…
const MAX_UNBOUND_PER_SOURCE: usize = 4;
/// …of at most this many bytes (a sender's compound is a few hundred).
const MAX_UNBOUND_BYTES: usize = 2048;

impl Receiving {
    /// A receiving side with our SSRC `ssrc` that has seen nothing yet.
    fn new(ssrc: u32) -> Self {
        Receiving {
            receiver: None,
            video_codecs: None,
            scheme: None,
            pending: vec![],
            unbound: Default::default(),
            ssrc,
            media_ssrc: None,
            peer: None,
            synchronised: false,
            last_sr: None,
            sender_end: None,
            bye: None,
            first_arrival: None,
            last_arrival: None,
            stats: RecvStats::default(),
            malformed: 0,
            foreign: 0,
            feedback_packets: 0,
            feedback_bytes: 0,
            notes: vec![],
            clip: None,
            refused: None,
            read_lag_us: vec![],
            floor: Instant::ZERO,
        }
    }

    fn start_scheme(&mut self, spec: &SchemeConfig, mtu: DataSize) -> Result<(), NetError> {
        let (_, r) = spec.build(SchemeContext {
            mtu,
            ideal_schedule: None,
            rng: None,
            tables: Tables::new(),
            // Only the sending half fills packets; this one's sizes come with them.
            ip_udp_header: DataSize::ZERO,
            // `--video`'s codec, for a sender that codes with one wisp-core does not link.
            codecs: self.video_codecs.clone(),
        })?;
        // A real codec's decoded pictures are kept, so that the displayed metric can measure
        // the picture on screen against later source pictures (as `wisp run` does).
        if let (Some(log), Some(_)) = (r.video_log(), &self.video_codecs) {
            log.keep_pictures();
        }
        self.receiver = Some(r);
        self.scheme = Some(spec.to_string());
        Ok(())
    }

    /// An RTCP datagram. Before the peer is known it is only kept (the latest few per source,
    /// [`MAX_UNBOUND_SOURCES`]); the first valid media packet chooses the peer, and that
    /// source's kept datagrams are then read as if they came now. After that, RTCP from any
    /// other address is foreign, and items about another SSRC are ignored.
    fn on_rtcp(&mut self, buf: &[u8], now: Instant, from: SocketAddr, mtu: DataSize) {
        let Ok(items) = rtcp::decode(buf) else {
            self.malformed += 1;
            return;
        };
        let Some(peer) = self.peer else {
            self.keep_unbound(buf.len(), items, now, from);
            return;
        };
        if peer != from {
            self.foreign += 1;
            return;
        }
        self.on_rtcp_items(items, now, mtu);
    }

    /// Keeps an RTCP datagram from a source that is not (yet) the peer: a stranger's stray
    /// datagram, or the sender's announcement that came before its first media packet.
    fn keep_unbound(&mut self, len: usize, items: Vec<RtcpItem>, now: Instant, from: SocketAddr) {
        if len > MAX_UNBOUND_BYTES {
            self.foreign += 1;
            return;
        }
        let kept = self.unbound.iter().filter(|u| u.0 == from).count();
        if kept >= MAX_UNBOUND_PER_SOURCE {
            // The oldest of this source's goes: the announcement is repeated every interval.
            if let Some(i) = self.unbound.iter().position(|u| u.0 == from) {
                self.unbound.remove(i);
                self.foreign += 1;
            }
        } else if self.unbound.len() >= MAX_UNBOUND_SOURCES * MAX_UNBOUND_PER_SOURCE {
            self.unbound.pop_front();
            self.foreign += 1;
        }
        self.unbound.push_back((from, now, items));
    }

    /// Binds the session to `peer` and its media SSRC `ssrc`: what that source sent before is
    /// read now, what every other source sent is foreign.
    fn bind(&mut self, peer: SocketAddr, ssrc: u32, mtu: DataSize) {
        self.peer = Some(peer);
        self.media_ssrc = Some(ssrc);
        for (from, at, items) in std::mem::take(&mut self.unbound) {
            if from != peer {
                self.foreign += 1;
                continue;
            }
            self.on_rtcp_items(items, at, mtu);
        }
    }

    fn on_rtcp_items(&mut self, items: Vec<RtcpItem>, now: Instant, mtu: DataSize) {
        for item in items {
            match item {
                RtcpItem::SenderReport { ssrc, ntp, .. } if self.media_ssrc == Some(ssrc) => {
                    self.last_sr = Some(((ntp >> 16) as u32, now));
                    // On one host the SR's timestamp is on our clock: the flow's latest instant
                    // so far (the final SR marks its end).
                    let ns = ((u128::from(ntp >> 32) * 1_000_000_000)
                        + ((u128::from(ntp & 0xffff_ffff) * 1_000_000_000) >> 32))
                        .min(u128::from(u64::MAX)) as u64;
                    self.sender_end = Some(Instant::from_nanos(ns));
                }
                RtcpItem::Cname { ssrc, cname } if self.media_ssrc == Some(ssrc) => {
                    self.synchronised = same_host(&cname);
                }
                RtcpItem::Scheme { ssrc, spec, clip } if self.media_ssrc == Some(ssrc) => {
                    if self.receiver.is_none() {
                        match (clip, self.clip) {
                            (Some(theirs), Some(ours)) if theirs != ours => {
                                self.refused = Some(format!(
                                    "the sender codes another clip than --video's (fingerprint {theirs:016x}, --video's {ours:016x}): refusing its flow"
                                ));
                                continue;
                            }
                            (None, Some(_)) => self.note(
                                "the sender announced no clip fingerprint: its clip is not checked against --video's".into(),
                            ),
                            _ => {}
                        }
                        match spec.parse::<SchemeConfig>() {
                            Ok(c) => match self.start_scheme(&c, mtu) {
                                Ok(()) => {}
                                Err(e) => self.note(format!("cannot run scheme `{spec}`: {e}")),
                            },
                            Err(e) => self.note(format!("sender announced a bad scheme: {e}")),
                        }
                    } else if self.scheme.as_deref() != Some(spec.as_str()) {
                        self.note(format!(
                            "the sender runs `{spec}`, this receiver `{}`",
                            self.scheme.as_deref().unwrap_or("?")
                        ));
                    }
                }
                RtcpItem::Bye { sources }
                    if self.media_ssrc.is_some_and(|m| sources.contains(&m)) =>
                {
                    self.bye = Some(now);
                }
                _ => {}
            }
        }
    }

    fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// A media packet. Only one of wisp's form (its RTP header extensions, checked sizes)
    /// counts; the first one chooses the peer and the media SSRC ([`Receiving::bind`]), which
    /// a stray or random datagram cannot do: any other source or SSRC is then foreign.
    fn on_rtp(&mut self, buf: &[u8], now: Instant, from: SocketAddr, mtu: DataSize) {
        // The datagram's IP bytes count this family's headers, as the sender sized it.
        let header = crate::ip_udp_header(&from);
        let p = match rtp::decode_over(buf, header) {
            Ok(p) => p,
            Err(_) => {
                self.malformed += 1;
                if header != crate::IPV4_UDP_HEADER
                    && rtp::decode_over(buf, crate::IPV4_UDP_HEADER).is_ok()
                {
                    self.note(format!(
                        "{from} sends packets sized for IPv4's {} header bytes over IPv6 ({header}): \
                         a `wisp send` older than this `wisp recv`? Its packets are counted malformed",
                        crate::IPV4_UDP_HEADER
                    ));
                }
                return;
            }
        };
        if self.peer.is_some_and(|a| a != from) || self.media_ssrc.is_some_and(|s| s != p.ssrc) {
            self.foreign += 1;
            return;
        }
        if self.peer.is_none() {
            self.bind(from, p.ssrc, mtu);
        }
        self.first_arrival.get_or_insert(now);
        self.last_arrival = Some(now);
        if !self.stats.on_packet(&p.header, now) {
            return;
        }
        let payload = buf.get(p.payload_at..).unwrap_or_default();
        match &mut self.receiver {
            // Fields the scheme cannot decode make the packet malformed.
            Some(r) => {
                deliver_payload(r, &p.header, payload);
                self.malformed += u64::from(r.on_packet_received(now, &p.header).is_err());
            }
            None if self.pending.len() < MAX_PENDING => {
                let kept = payload.iter().any(|&b| b != 0).then(|| payload.to_vec());
                self.pending.push((now, p.header, kept));
            }
            None => {}
        }
    }
}

/// Hands a scheme that reads its video packets' payloads the one that arrived.
fn deliver_payload(r: &mut AnyReceiver, h: &DataHeader, payload: &[u8]) {
    if let Content::Video { .. } = h.content {
        r.on_payload(h.seq, payload);
    }
}

/// Runs the receiving side of one flow: until the sender's BYE, `opts.duration` after the
/// first packet, `opts.idle_timeout` without packets, or `stop`.
pub fn recv(
    opts: &RecvOptions,
    stop: &AtomicBool,
    progress: Progress<'_>,
) -> Result<ReceiverReport, NetError> {
    let clock = Clock::new();
    let sock = UdpSocket::bind(opts.listen)
        .map_err(io_ctx(format!("cannot listen on {}", opts.listen)))?;
    let listen = sock.local_addr().map_err(io_ctx("local address"))?;
    sock.set_nonblocking(true)
        .map_err(io_ctx("cannot make the socket non-blocking"))?;
    set_buffers(&sock);
    if !enable_receive_timestamps(&sock) {
        progress("note: no kernel receive timestamps; arrivals are stamped when read");
    }
    let mut waiter = Waiter::new(Duration::ZERO).map_err(io_ctx("cannot create a timer"))?;
    waiter.add(&sock, 0).map_err(io_ctx("epoll"))?;
    let cname = cname();
    let mut r = Receiving::new(rand::random());
    r.video_codecs = opts.video_codecs.clone();
    r.clip = opts.clip_fingerprint;
    if let Some(s) = &opts.scheme {
        r.start_scheme(s, opts.mtu)?;
    }
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
    let mut rx = vec![0u8; 65536];
    let mut buf = Vec::with_capacity(2048);
    let mut ready = vec![];
    let mut next_report: Option<Instant> = None;
    let mut next_progress: Option<Instant> = None;
    let mut last_progress = (0usize, 0u64);
    let mut notes_shown = 0;
    loop {
        let now = clock.now();
        if stop.load(Ordering::Relaxed) || r.bye.is_some() {
            break;
        }
        if let Some(why) = r.refused.take() {
            return Err(NetError::Input(why));
        }
        if let (Some(first), Some(d)) = (r.first_arrival, opts.duration) {
            if now >= first + d {
                break;
            }
        }
        if r.last_arrival.is_some_and(|l| now >= l + opts.idle_timeout) {
            let from = r
                .peer
                .map_or_else(|| "the sender".into(), |p| p.to_string());
            let n = format!(
                "no packet from {from} within the idle timeout of {} s; ending",
                opts.idle_timeout.as_secs_f64()
            );
            r.note(n);
            break;
        }
        loop {
            match recv_stamped(&sock, &mut rx, &clock) {
                Ok((n, from, stamped, lag)) => {
                    if let Some(lag) = lag {
                        r.read_lag_us.push(lag.as_nanos() as f64 / 1e3);
                    }
                    let now = stamped.max(r.floor);
                    if rtp::is_rtcp(&rx[..n]) {
                        r.on_rtcp(&rx[..n], now, from, opts.mtu);
                    } else {
                        r.on_rtp(&rx[..n], now, from, opts.mtu);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(io_ctx("receive")(e)),
            }
        }
        let now = clock.now();
        r.floor = now;
        // Packets that came before the scheme was known.
        if let Some(rcv) = &mut r.receiver {
            for (t, h, payload) in r.pending.drain(..) {
                deliver_payload(rcv, &h, payload.as_deref().unwrap_or_default());
                if rcv.on_packet_received(t, &h).is_err() {
                    r.malformed += 1;
                }
            }
        }
        // Ping-Pair: pairs resolved by replies read before this round's data packets (so every
        // packet that arrived before a normal-priority reply is in the receiver's history),
        // then new replies, then the next probes.
        let mut pp_busy = false;
        if let Some(ps) = &mut pp {
            ps.on_events(&mut r.receiver);
            pp_busy = ps.read_replies(&clock).map_err(|e| NetError::Io {
                what: "ping-pair receive".into(),
                err: io::Error::from(e),
            })?;
            ps.transmit(clock.now());
        }
        if let Some(rcv) = &mut r.receiver {
            if rcv.poll_timeout().is_some_and(|t| t <= now) {
                rcv.on_timeout(now);
            }
        }
        // Feedback.
        if let (Some(rcv), Some(peer)) = (&mut r.receiver, r.peer) {
            while let Some(fb) = rcv.poll_feedback(now) {
                buf.clear();
                if rtcp::encode_feedback(&fb, r.ssrc, r.media_ssrc.unwrap_or(0), &mut buf).is_ok() {
                    r.feedback_packets += 1;
                    r.feedback_bytes += buf.len() as u64 + u64::from(crate::ip_udp_header(&peer));
                    let _ = sock.send_to(&buf, peer);
                }
            }
        }
        if let (Some(peer), Some(media)) = (r.peer, r.media_ssrc) {
            let due = *next_report.get_or_insert(now);
            if now >= due {
                buf.clear();
                let block = r.stats.block(media, r.last_sr, now);
                if rtcp::encode_receiver_report(r.ssrc, Some(block), &cname, &mut buf).is_ok() {
                    let _ = sock.send_to(&buf, peer);
                }
                next_report = Some(now + opts.rtcp_interval);
            }
        }
        if let Some(first) = r.first_arrival {
            let due = *next_progress.get_or_insert(first + Duration::from_secs(1));
            if now >= due {
                let new = &r.stats.deliveries[last_progress.0..];
                let bytes: u64 = new.iter().map(|d| d.bytes).sum();
                let mut owd: Vec<f64> = new
                    .iter()
                    .map(|d| (d.arrived - d.sent).as_millis_f64())
                    .collect();
                let q = percentiles(&mut owd, &[0.5, 0.95]);
                let expected = r.stats.expected();
                progress(&format!(
                    "{:6.1} s  recv {:8.1} kbit/s  delay p50 {} p95 {}  loss {:.2}%",
                    (now - first).as_secs_f64(),
                    bytes as f64 * 8.0 / 1e3,
                    if r.synchronised {
                        fmt_opt(q[0], "ms")
                    } else {
                        "-".into()
                    },
                    if r.synchronised {
                        fmt_opt(q[1], "ms")
                    } else {
                        "-".into()
                    },
                    if expected > 0 {
                        r.stats.lost() as f64 / expected as f64 * 100.0
                    } else {
                        0.0
                    }
                ));
                last_progress = (r.stats.deliveries.len(), 0);
                next_progress = Some(due + Duration::from_secs(1));
            }
        }
        while notes_shown < r.notes.len() {
            progress(&format!("note: {}", r.notes[notes_shown]));
            notes_shown += 1;
        }
        let mut deadline = [
            r.receiver.as_ref().and_then(WireReceiver::poll_timeout),
            next_report,
            next_progress,
            r.last_arrival.map(|l| l + opts.idle_timeout),
            r.first_arrival.zip(opts.duration).map(|(f, d)| f + d),
            pp.as_ref().and_then(|p| p.prober.poll_timeout()),
        ]
        .into_iter()
        .flatten()
        .min();
        if (r.receiver.is_none() && !r.pending.is_empty()) || pp_busy {
            deadline = Some(now + Duration::from_millis(if pp_busy { 0 } else { 100 }));
        }
        waiter.wait(deadline, &mut ready).map_err(io_ctx("wait"))?;
    }
    let stopped = clock.now();
    while notes_shown < r.notes.len() {
        progress(&format!("note: {}", r.notes[notes_shown]));
        notes_shown += 1;
    }
    let mut report = summary(&r, opts, listen, stopped);
    if let Some(mut ps) = pp {
        ps.on_events(&mut r.receiver);
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
    fn on_events(&mut self, receiver: &mut Option<AnyReceiver>) {
        use wisp_core::pingpair::ProberEvent;
        while let Some(e) = self.prober.poll_event() {
            match e {
                ProberEvent::Triplet(t) => self.wmm.on_run(t),
                ProberEvent::Pair(p) => {
                    self.pairs += 1;
                    let Ok(t_q) = p.t_q else { continue };
                    self.t_q_ms.push(t_q.as_millis_f64());
                    if let Some(u) = receiver
                        .as_mut()
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

fn summary(
    r: &Receiving,
    opts: &RecvOptions,
    listen: SocketAddr,
    stopped: Instant,
) -> ReceiverReport {
    let scheme = r.scheme.clone().unwrap_or_else(|| "unknown".into());
    let first_sent = r.stats.deliveries.iter().map(|d| d.sent).min();
    // The window: from the flow's start to its end, on the sender's clock when it is ours.
    let (from, mut to) = if r.synchronised {
        (
            first_sent.unwrap_or(stopped),
            r.sender_end.filter(|_| r.bye.is_some()).unwrap_or(stopped),
        )
    } else {
        (
            r.first_arrival.unwrap_or(stopped),
            r.bye.or(r.last_arrival).unwrap_or(stopped),
        )
    };
    if let Some(d) = opts.duration {
        to = to.min(r.first_arrival.unwrap_or(from) + d);
    }
    let w = WindowSpec {
        from,
        to,
        synchronised: r.synchronised,
        link: opts.link.as_ref(),
        mtu: opts.mtu,
    };
    let mut m: ReceiverMetrics = receiver_metrics(&r.stats.deliveries, &w, scheme.clone());
    let expected = r.stats.expected();
    m.packets_lost = r.stats.lost();
    m.loss_rate = if expected > 0 {
        m.packets_lost as f64 / expected as f64
    } else {
        0.0
    };
    m.jitter_ms = r.stats.jitter_ns / 1e6;
    m.packets_duplicate = r.stats.duplicates;
    m.packets_reordered = r.stats.reordered;
    m.malformed_packets = r.malformed;
    // RTCP datagrams still kept from sources that never became the peer are foreign too.
    m.foreign_packets = r.foreign + r.unbound.len() as u64;
    m.feedback_packets = r.feedback_packets;
    m.feedback_bytes = r.feedback_bytes;
    let mut lag = r.read_lag_us.clone();
    let q = percentiles(&mut lag, &[0.5, 0.99]);
    (m.read_lag_p50_us, m.read_lag_p99_us) = (q[0], q[1]);
    ReceiverReport {
        role: "receiver",
        scheme,
        listen: listen.to_string(),
        peer: r.peer.map(|p| p.to_string()),
        trace: opts.link.as_ref().map(|k| k.link.name()),
        flows: vec![m],
        pingpair: None,
        video: r.receiver.as_ref().and_then(|r| r.video_log()).cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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

    #[test]
    fn ideal_refuses_to_run_on_a_real_network() {
        let stop = AtomicBool::new(false);
        let o = SendOptions::new("ideal".parse().unwrap(), "127.0.0.1:9".parse().unwrap());
        let e = send(&o, &stop, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("simulation"), "{e}");
    }

    #[test]
    fn feedback_and_reports_reach_the_sender() {
        use wisp_core::wire::{Feedback, Remb};
        let (mut flow, _) = "gcc"
            .parse::<SchemeConfig>()
            .unwrap()
            .build(SchemeContext::new())
            .unwrap();
        let mut s = SenderState::default();
        let mut buf = vec![];
        let fb = Feedback::encode(&Remb::new(wisp_core::Bitrate::from_kbps(700)));
        rtcp::encode_feedback(&fb, 5, 9, &mut buf).unwrap();
        s.on_datagram(&buf, Instant::from_millis(50), 9, &mut flow);
        assert_eq!(s.feedback, 1);
        // Another scheme's message (a TCP ACK) does not decode as GCC's: malformed.
        buf.clear();
        let ack = Feedback::encode(&wisp_core::scheme::tcp::ack::TcpAck::new(
            3,
            Instant::from_millis(1),
            Instant::from_millis(21),
            &[],
        ));
        rtcp::encode_feedback(&ack, 5, 9, &mut buf).unwrap();
        s.on_datagram(&buf, Instant::from_millis(51), 9, &mut flow);
        assert_eq!((s.feedback, s.malformed), (1, 1));
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
        s.on_datagram(&buf, sr_at + Duration::from_millis(45), 9, &mut flow);
        assert_eq!(s.rtt_ms.len(), 1);
        assert!((s.rtt_ms[0] - 40.0).abs() < 0.05, "{:?}", s.rtt_ms);
        assert_eq!(s.loss, Some(0.02));
        // Reports about another SSRC are not ours.
        s.on_datagram(&buf, sr_at + Duration::from_millis(45), 10, &mut flow);
        assert_eq!(s.rtt_ms.len(), 1);
        s.on_datagram(&[0x80, 201, 0, 9], Instant::ZERO, 9, &mut flow);
        assert_eq!(s.malformed, 2);
    }

    #[test]
    fn hostile_datagrams_are_counted_and_dropped() {
        let mut r = Receiving::new(1);
        let from: SocketAddr = "127.0.0.1:5".parse().unwrap();
        let now = Instant::from_secs(1);
        for b in [
            &[][..],
            &[0x80, 200, 0xff, 0xff],
            &[0x40, 96, 0, 0, 0, 0],
            &[0xff; 40],
        ] {
            if rtp::is_rtcp(b) {
                r.on_rtcp(b, now, from, DEFAULT_MTU);
            } else {
                r.on_rtp(b, now, from, DEFAULT_MTU);
            }
        }
        assert_eq!(r.malformed, 4);
        assert!(r.stats.deliveries.is_empty());
        // A valid packet with a hostile sequence number does not allocate or panic.
        let mut buf = vec![];
        let h = DataHeader {
            seq: u64::MAX - 1,
            size: DataSize::from_bytes(200),
            ..Default::default()
        };
        rtp::encode(&h, 9, &mut buf).unwrap();
        r.on_rtp(&buf, now, from, DEFAULT_MTU);
        r.on_rtp(&buf, now, from, DEFAULT_MTU);
        assert_eq!(r.stats.duplicates, 1);
        assert_eq!(r.stats.lost(), 0);
        let other: SocketAddr = "127.0.0.1:6".parse().unwrap();
        r.on_rtp(&buf, now, other, DEFAULT_MTU);
        assert_eq!(r.foreign, 1);
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

    fn feed(r: &mut Receiving, b: &[u8], from: SocketAddr) {
        let now = Instant::from_secs(1);
        if rtp::is_rtcp(b) {
            r.on_rtcp(b, now, from, DEFAULT_MTU);
        } else {
            r.on_rtp(b, now, from, DEFAULT_MTU);
        }
    }

    /// One stray RTCP datagram (a receiver report header from another port) used
    /// to become the peer, and the real sender's whole flow was then foreign.
    #[test]
    fn a_stray_rtcp_datagram_does_not_choose_the_peer() {
        let mut r = Receiving::new(1);
        let stranger: SocketAddr = "127.0.0.1:7".parse().unwrap();
        let sender: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        feed(
            &mut r,
            &[0x80, 0xc9, 0, 1, 0x12, 0x34, 0x56, 0x78],
            stranger,
        );
        // A stranger's announcement of another scheme is not taken either.
        feed(&mut r, &announcement(0xbad, "tcp"), stranger);
        assert_eq!(r.peer, None);
        feed(&mut r, &announcement(42, "cbr:rate-kbps=100"), sender);
        for seq in 0..10 {
            feed(&mut r, &media(42, seq), sender);
        }
        assert_eq!(r.peer, Some(sender));
        assert_eq!(r.scheme.as_deref(), Some("cbr:rate-kbps=100"));
        assert_eq!(r.stats.deliveries.len(), 10);
        assert_eq!(r.foreign, 2);
        // The stranger's BYE neither ends the session nor counts as the sender's.
        let mut bye = vec![];
        rtcp::encode_bye(42, &mut bye).unwrap();
        feed(&mut r, &bye, stranger);
        assert!(r.bye.is_none());
        assert_eq!(r.foreign, 3);
        // The sender's own BYE does.
        feed(&mut r, &bye, sender);
        assert!(r.bye.is_some());
    }

    /// A replay of the sender's own packets from another address during the session is
    /// foreign: it is never adopted, and its BYE ends nothing.
    #[test]
    fn a_replay_from_elsewhere_is_foreign() {
        let mut r = Receiving::new(1);
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
        assert_eq!((r.peer, r.foreign), (Some(sender), 51));
        assert!(r.bye.is_none());
        assert_eq!(r.stats.deliveries.len(), 1);
        // Another SSRC from the peer's own address is foreign too.
        feed(&mut r, &media(43, 1), sender);
        assert_eq!(r.foreign, 52);
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
            let mut r = Receiving::new(1);
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
            proptest::prop_assert_eq!(r.peer, None);
            proptest::prop_assert!(r.receiver.is_none());
            proptest::prop_assert!(r.unbound.len() <= MAX_UNBOUND_SOURCES * MAX_UNBOUND_PER_SOURCE);
            let sender: SocketAddr = "127.0.0.1:5000".parse().unwrap();
            feed(&mut r, &announcement(42, "cbr"), sender);
            feed(&mut r, &media(42, 0), sender);
            proptest::prop_assert_eq!(r.peer, Some(sender));
            proptest::prop_assert_eq!(r.scheme.as_deref(), Some("cbr:rate-kbps=1000"));
            proptest::prop_assert!(r.unbound.is_empty());
        }
    }
}
