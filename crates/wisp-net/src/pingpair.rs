//! `wisp pingpair`: Ping-Pair over real ICMP sockets (CoNEXT'17 §5, §7.2), driving the sans-IO
//! [`wisp_core::pingpair::Prober`].
//!
//! * **Sockets.** An unprivileged ping socket (`SOCK_DGRAM`, `IPPROTO_ICMP`) when the caller's
//!   group is inside `net.ipv4.ping_group_range` (per network namespace; `1 0`, nobody, by
//!   default), else a raw ICMP socket (CAP_NET_RAW). Without either, [`OpenError::Permission`]
//!   says in one line how to grant one.
//! * **TOS per probe.** `IP_TOS` is set before each echo request (the normal one 0x00, the high
//!   one 0xb8 by default, the WMM triplet's intermediate one 0x80); the AP's replies copy it.
//! * **Timestamps.** Replies are timed by the kernel (`SO_TIMESTAMPNS`, `CLOCK_REALTIME`, taken
//!   when the packet reached the host); T_q is the difference of two such stamps. The prober's own
//!   schedule runs on the same clock.
//! * **Bad input.** Every datagram that is not an echo reply to one of this run's probes (see
//!   [`crate::icmp`]) is counted — malformed or foreign — and dropped.
//!
//! Deviations: the paper's Linux tool (§7.2) used raw sockets and a packet capture; wisp prefers
//! the unprivileged ping socket, where the kernel matches replies to the socket (the identifier
//! is the kernel's). Without a monitor-mode capture there are no 802.11 sequence numbers or retry
//! flags, so the channel-access delay is §7.3's fixed 0.125 ms.

use crate::icmp::{self, IcmpError};
use nix::errno::Errno;
use nix::sys::socket::{
    AddressFamily, ControlMessageOwned, MsgFlags, SockFlag, SockProtocol, SockType, SockaddrIn,
    recvmsg, sendto, setsockopt, socket, sockopt,
};
use nix::sys::time::TimeVal;
use std::io::IoSliceMut;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wisp_core::pingpair::{PairResult, Prober, ProberConfig, ProberEvent, WmmCheck, WmmVerdict};
use wisp_core::{Duration, Instant};

/// Which kind of ICMP socket a run used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketKind {
    /// `SOCK_DGRAM` + `IPPROTO_ICMP` (unprivileged, `net.ipv4.ping_group_range`).
    Ping,
    /// `SOCK_RAW` + `IPPROTO_ICMP` (CAP_NET_RAW).
    Raw,
}

impl SocketKind {
    pub fn name(self) -> &'static str {
        match self {
            SocketKind::Ping => "ping",
            SocketKind::Raw => "raw",
        }
    }
}

/// Why no ICMP socket could be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(
        "no permission to send ICMP echo requests (ping sockets need group {gid} inside \
         net.ipv4.ping_group_range, now \"{range}\"; raw sockets need CAP_NET_RAW): grant one with \
         `sudo sysctl -w net.ipv4.ping_group_range=\"0 2147483647\"` or \
         `sudo setcap cap_net_raw+ep {exe}`"
    )]
    Permission {
        gid: u32,
        range: String,
        exe: String,
    },
    #[error("cannot open an ICMP socket: {0}")]
    Other(Errno),
}

/// An ICMP socket with the per-run identity of its probes.
#[derive(Debug)]
pub struct IcmpSocket {
    fd: OwnedFd,
    kind: SocketKind,
    /// The identifier to accept (raw sockets; the kernel matches it on ping sockets).
    ident: Option<u16>,
    token: u64,
}

/// `CLOCK_REALTIME` in nanoseconds (the clock of `SO_TIMESTAMPNS`).
pub fn realtime() -> Instant {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_REALTIME).map_or(Instant::ZERO, |t| {
        Instant::from_nanos(
            (t.tv_sec() as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(t.tv_nsec() as u64),
        )
    })
}

/// The effective group id, from `/proc/self/status` (`Gid:` real, effective, …).
fn effective_gid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Gid:"))
                .and_then(|g| g.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(u32::MAX)
}

impl IcmpSocket {
    /// A ping socket if allowed, else a raw socket.
    pub fn open() -> Result<Self, OpenError> {
        let token = realtime().as_nanos() ^ (u64::from(std::process::id()) << 32);
        let ping = socket(
            AddressFamily::Inet,
            SockType::Datagram,
            SockFlag::SOCK_CLOEXEC,
            SockProtocol::Icmp,
        );
        let (fd, kind) = match ping {
            Ok(fd) => (fd, SocketKind::Ping),
            Err(Errno::EACCES | Errno::EPERM) => {
                match socket(
                    AddressFamily::Inet,
                    SockType::Raw,
                    SockFlag::SOCK_CLOEXEC,
                    SockProtocol::Icmp,
                ) {
                    Ok(fd) => (fd, SocketKind::Raw),
                    Err(Errno::EACCES | Errno::EPERM) => {
                        return Err(OpenError::Permission {
                            gid: effective_gid(),
                            range: std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range")
                                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
                                .unwrap_or_else(|_| "unreadable".into()),
                            exe: std::env::current_exe()
                                .map(|p| p.display().to_string())
                                .unwrap_or_else(|_| "wisp".into()),
                        });
                    }
                    Err(e) => return Err(OpenError::Other(e)),
                }
            }
            Err(e) => return Err(OpenError::Other(e)),
        };
        setsockopt(&fd, sockopt::ReceiveTimestampns, &true).map_err(OpenError::Other)?;
        Ok(IcmpSocket {
            fd,
            kind,
            ident: (kind == SocketKind::Raw).then_some(std::process::id() as u16),
            token,
        })
    }

    pub fn kind(&self) -> SocketKind {
        self.kind
    }

    /// The socket, to wait on it (epoll).
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    /// Sends one echo request with sequence `seq`, TOS `tos` and `payload` bytes of payload.
    pub fn send(&self, to: Ipv4Addr, seq: u16, tos: u8, payload: usize) -> Result<(), Errno> {
        setsockopt(&self.fd, sockopt::Ipv4Tos, &i32::from(tos))?;
        let m = icmp::echo_request(self.ident.unwrap_or(0), seq, self.token, payload);
        sendto(
            self.fd.as_raw_fd(),
            &m,
            &SockaddrIn::from(SocketAddrV4::new(to, 0)),
            MsgFlags::empty(),
        )?;
        Ok(())
    }

    /// Waits up to `timeout` for one datagram; returns the parse and the kernel's receive
    /// time (or `None` on timeout).
    pub fn recv(&self, timeout: Duration) -> Result<Option<Received>, Errno> {
        // SO_RCVTIMEO of zero means "forever": wait at least a microsecond.
        let us = timeout.as_micros().clamp(1, 10_000_000);
        let tv = TimeVal::new((us / 1_000_000) as _, (us % 1_000_000) as _);
        setsockopt(&self.fd, sockopt::ReceiveTimeout, &tv)?;
        self.recv_with(MsgFlags::empty())
    }

    /// One datagram if one is waiting (`None` if not).
    pub fn try_recv(&self) -> Result<Option<Received>, Errno> {
        self.recv_with(MsgFlags::MSG_DONTWAIT)
    }

    fn recv_with(&self, flags: MsgFlags) -> Result<Option<Received>, Errno> {
        let mut buf = [0u8; 2048];
        let mut iov = [IoSliceMut::new(&mut buf)];
        let mut cmsg = nix::cmsg_space!(nix::sys::time::TimeSpec);
        let (n, stamp) =
            match recvmsg::<SockaddrIn>(self.fd.as_raw_fd(), &mut iov, Some(&mut cmsg), flags) {
                Ok(msg) => {
                    let mut stamp = None;
                    if let Ok(cmsgs) = msg.cmsgs() {
                        for c in cmsgs {
                            if let ControlMessageOwned::ScmTimestampns(ts) = c {
                                stamp = Some(Instant::from_nanos(
                                    (ts.tv_sec() as u64)
                                        .saturating_mul(1_000_000_000)
                                        .saturating_add(ts.tv_nsec() as u64),
                                ));
                            }
                        }
                    }
                    (msg.bytes, stamp)
                }
                Err(Errno::EAGAIN | Errno::EINTR) => return Ok(None),
                Err(e) => return Err(e),
            };
        let at = stamp.unwrap_or_else(realtime);
        let parsed = icmp::parse_reply(
            &buf[..n],
            self.kind == SocketKind::Raw,
            self.ident,
            self.token,
        );
        Ok(Some((parsed, at)))
    }
}

/// One datagram: its parse and the kernel's receive time.
pub type Received = (Result<icmp::EchoReply, IcmpError>, Instant);

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub pairs: Vec<PairResult>,
    pub wmm: Option<WmmVerdict>,
    /// Datagrams that did not parse (truncated, bad header or checksum).
    pub malformed: u64,
    /// Well-formed datagrams meant for someone else (other ICMP, other identifiers or payloads).
    pub foreign: u64,
    /// Replies to our probes that matched none outstanding (late or duplicated).
    pub unmatched: u64,
    /// Whether the run was interrupted before its count.
    pub interrupted: bool,
}

/// Runs the prober against `target` until it has done its count (or `stop` is set), calling
/// `on_event` with each result as it comes.
pub fn run(
    sock: &IcmpSocket,
    target: Ipv4Addr,
    config: ProberConfig,
    stop: &Arc<AtomicBool>,
    mut on_event: impl FnMut(&ProberEvent),
) -> Result<Summary, Errno> {
    let mut prober = Prober::new(config, realtime());
    let mut wmm = WmmCheck::new();
    let mut s = Summary::default();
    loop {
        let now = realtime();
        while let Some(p) = prober.poll_transmit(now) {
            sock.send(target, p.seq, p.tos, p.payload)?;
        }
        prober.on_time(realtime());
        while let Some(e) = prober.poll_event() {
            match e {
                ProberEvent::Pair(r) => s.pairs.push(r),
                ProberEvent::Triplet(t) => wmm.on_run(t),
            }
            on_event(&e);
        }
        if prober.is_finished() {
            break;
        }
        if stop.load(Ordering::Relaxed) {
            s.interrupted = true;
            break;
        }
        let now = realtime();
        let wait = prober
            .poll_timeout()
            .map_or(Duration::from_millis(100), |t| {
                t.saturating_duration_since(now)
            })
            .min(Duration::from_millis(100));
        if let Some((parsed, at)) = sock.recv(wait)? {
            match parsed {
                Ok(reply) => {
                    prober.on_reply(at, reply.seq);
                }
                Err(e) if e.is_foreign() => s.foreign += 1,
                Err(_) => s.malformed += 1,
            }
        }
    }
    s.wmm = wmm.verdict();
    s.unmatched = prober.unmatched;
    Ok(s)
}
