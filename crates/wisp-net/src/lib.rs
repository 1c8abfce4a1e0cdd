//! # wisp-net
//!
//! wisp over real networks. This is the only layer of wisp that reads a clock or touches the
//! operating system: it converts the monotonic clock to [`wisp_core::Instant`] at the edge, so
//! the same controller objects that run in the simulator drive real packets.
//!
//! * [`rtp`](mod@rtp), [`rtcp`](mod@rtcp): the wire format. Data packets are RTP (RFC 3550) with
//!   RFC 8285 header extensions; feedback is RTCP (receiver reports, REMB, RFC 8888 congestion
//!   control feedback, and APP packets that carry any [`wisp_core::wire::Feedback`]).
//! * [`session`]: `wisp send` / `wisp recv` — one flow of any registered scheme over UDP, paced
//!   with sub-millisecond accuracy ([`timer`]), with per-second progress and a summary
//!   ([`report`]): the socket loops of the sans-IO sessions of [`wisp_core::session`].
//! * [`twcc`], [`twcc_recv`]: transport-wide congestion control feedback
//!   (draft-holmer-rmcat-transport-wide-cc-extensions-01) and `wisp recv --twcc`, which answers a
//!   foreign RTP stream (pion, libwebrtc) with it; `interop/pion/` tests this against pion's GCC.
//! * [`emulator`]: `wisp link` — a user-space, trace-driven link emulator between a network
//!   namespace and the host, built on the simulator's own link, queue and loss code, with
//!   Mahimahi-format logs ([`mmlog`]) that `wisp analyze` reads back.
//! * [`browser`]: the figures of `wisp browser-call` (a WebRTC call between two headless
//!   Chromiums through the emulator) from the browsers' getStats snapshots.
//! * [`saturator`]: `wisp saturate` — the Sprout paper's Saturator, which records a link's
//!   delivery opportunities as a Mahimahi trace (the sockets around
//!   [`wisp_core::saturator`]'s sessions and packet format).
//! * [`pingpair`], [`icmp`]: `wisp pingpair` — Ping-Pair (CoNEXT'17 §5) over ICMP ping or raw
//!   sockets with a TOS per probe and kernel receive timestamps.
//!
//! The packet formats come from webrtc-rs's sans-IO crates `rtc-rtp` and `rtc-rtcp` (0.21):
//! between them they implement every format wisp needs except APP — RFC 8285 one- and two-byte
//! header extensions with abs-send-time and transport-wide sequence number elements, SR/RR/SDES/
//! BYE, REMB, transport-cc and RFC 8888 feedback — and they are the maintained generation of
//! webrtc-rs. GStreamer's `rtp-types`/`rtcp-types` are zero-copy and have APP, but no RFC 8285
//! element parsing, REMB or RFC 8888, which wisp would have had to write by hand. APP packets
//! are built from `rtc-rtcp`'s header plus the 8 bytes RFC 3550 §6.7 defines.
//!
//! Linux only (network namespaces, TUN, `epoll_pwait2`: kernel 5.11 or later).

pub mod browser;
pub mod emulator;
pub mod icmp;
pub mod mmlog;
pub mod pingpair;
pub mod report;
pub mod rtcp;
pub mod rtp;
pub mod saturator;
pub mod session;
pub mod timer;
pub mod twcc;
pub mod twcc_recv;
pub mod wbest;
pub mod wbest_wire;

use wisp_core::{Duration, Instant};

/// The host's monotonic clock (`CLOCK_MONOTONIC`) as `wisp_core::Instant` nanoseconds.
///
/// The epoch is the clock's own (boot), not the creation of the `Clock`: every process on one
/// host, in any network namespace, reads the same instants, so a timestamp stamped by a sender
/// compares directly with its receiver's clock when both run on one host (the "synchronised
/// timestamps" case of one-way delay).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// A std instant and the monotonic nanoseconds it corresponds to.
    std_ref: std::time::Instant,
    ns_ref: u64,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// `CLOCK_MONOTONIC` in nanoseconds.
fn monotonic_ns() -> u64 {
    use nix::time::{ClockId, clock_gettime};
    // CLOCK_MONOTONIC cannot fail on Linux; zero is a safe fallback that never happens.
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, |t| {
        (t.tv_sec() as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(t.tv_nsec() as u64)
    })
}

impl Clock {
    pub fn new() -> Self {
        let std_ref = std::time::Instant::now();
        Clock {
            std_ref,
            ns_ref: monotonic_ns(),
        }
    }

    /// Now, as a core instant (monotonic nanoseconds since boot).
    pub fn now(&self) -> Instant {
        Instant::from_nanos(monotonic_ns())
    }

    /// Converts an OS instant (e.g. a receive timestamp) to a core instant.
    pub fn to_core(&self, t: std::time::Instant) -> Instant {
        match t.checked_duration_since(self.std_ref) {
            Some(d) => Instant::from_nanos(
                self.ns_ref
                    .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
            ),
            None => {
                let d = self.std_ref.duration_since(t);
                Instant::from_nanos(
                    self.ns_ref
                        .saturating_sub(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
                )
            }
        }
    }

    /// Converts a core instant back to an OS instant (for sleeping until it). Instants the std
    /// clock cannot represent map to the reference instant.
    pub fn to_std(&self, t: Instant) -> std::time::Instant {
        let ns = t.as_nanos();
        if ns >= self.ns_ref {
            self.std_ref + std::time::Duration::from_nanos(ns - self.ns_ref)
        } else {
            self.std_ref
                .checked_sub(std::time::Duration::from_nanos(self.ns_ref - ns))
                .unwrap_or(self.std_ref)
        }
    }

    /// A core duration as a std duration.
    pub fn std_duration(d: Duration) -> std::time::Duration {
        std::time::Duration::from_nanos(d.as_nanos())
    }
}

/// An identifier of this boot of this host (`/proc/sys/kernel/random/boot_id`), if readable.
/// Two processes with the same boot id share [`Clock`] instants.
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// IPv4 (20) and UDP (8) header bytes: the simulator's `IP_UDP_OVERHEAD`.
pub const IPV4_UDP_HEADER: u32 = wisp_core::packet::IP_UDP_OVERHEAD.bytes() as u32;
/// IPv6 (40) and UDP (8) header bytes.
pub const IPV6_UDP_HEADER: u32 = 48;

/// IP and UDP header bytes of a datagram to `peer`: what a UDP payload adds on the wire.
pub fn ip_udp_header(peer: &std::net::SocketAddr) -> u32 {
    match peer.ip() {
        std::net::IpAddr::V4(_) => IPV4_UDP_HEADER,
        // An IPv4 peer of a dual-stack socket travels as IPv4.
        std::net::IpAddr::V6(a) if a.to_ipv4_mapped().is_some() => IPV4_UDP_HEADER,
        std::net::IpAddr::V6(_) => IPV6_UDP_HEADER,
    }
}

/// Sets don't-fragment (path MTU discovery "do", `IP_PMTUDISC_DO`) on a UDP socket: a
/// datagram larger than the path MTU is refused by the kernel (`EMSGSIZE`) instead of leaving
/// in fragments.
pub fn set_dont_fragment(udp: &std::net::UdpSocket, v6: bool) -> std::io::Result<()> {
    use rustix::net::sockopt;
    if v6 {
        // IPv4 peers of a dual-stack socket follow the IPv4 option (refused on a v6-only one).
        let _ = sockopt::set_ip_mtu_discover(udp, sockopt::Ipv4PathMtuDiscovery::DO);
        sockopt::set_ipv6_mtu_discover(udp, sockopt::Ipv6PathMtuDiscovery::DO)?;
    } else {
        sockopt::set_ip_mtu_discover(udp, sockopt::Ipv4PathMtuDiscovery::DO)?;
    }
    Ok(())
}

/// The kernel's MTU of the path from `local`'s address to `peer` (the route's, or a smaller
/// one learned from ICMP), read from a connected socket of its own.
pub fn path_mtu(local: std::net::IpAddr, peer: std::net::SocketAddr) -> std::io::Result<u32> {
    let s = std::net::UdpSocket::bind(std::net::SocketAddr::new(local, 0))?;
    s.connect(peer)?;
    let mtu = if peer.is_ipv4() {
        rustix::net::sockopt::ip_mtu(&s)
    } else {
        rustix::net::sockopt::ipv6_mtu(&s)
    };
    Ok(mtu?)
}

/// `IP:PORT` (`10.0.0.1:9000`, `[::1]:9000`) or `HOST:PORT` (`localhost:9000`), a name
/// resolved with the system's resolver (`std::net::ToSocketAddrs`). A name with IPv4 and IPv6
/// addresses gives its first IPv4 one (wisp's servers listen on `0.0.0.0` by default), else
/// its first address. The error is one line naming the text.
pub fn resolve_host_port(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    let example = "HOST:PORT or IP:PORT, e.g. localhost:9000, 10.0.0.1:9000 or [::1]:9000";
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err(format!("`{s}` has no port: give {example}"));
    };
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(format!("`{s}` is not {example}"));
    }
    let addrs: Vec<_> = s
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve `{host}`: {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("`{host}` resolves to no address"))
}

/// An IPv4 address (`192.168.1.1`) or a host name with one (`localhost`), resolved with the
/// system's resolver: for tools that reach a host, not a port (ICMP). The error is one line
/// naming the text.
pub fn resolve_ipv4_host(s: &str) -> Result<std::net::Ipv4Addr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    let not = format!("`{s}` is not an IPv4 address or a host name with one");
    if s.is_empty() || s.contains(':') {
        return Err(not);
    }
    (s, 0)
        .to_socket_addrs()
        .map_err(|e| format!("{not}: {e}"))?
        .find_map(|a| match a.ip() {
            std::net::IpAddr::V4(v4) => Some(v4),
            std::net::IpAddr::V6(_) => None,
        })
        .ok_or_else(|| format!("{not} (it resolves to IPv6 only)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_host_takes_addresses_and_names() {
        assert_eq!(resolve_ipv4_host("10.0.0.1"), Ok([10, 0, 0, 1].into()));
        assert!(resolve_ipv4_host("localhost").unwrap().is_loopback());
        for bad in ["", "::1", "10.0.0.1:9", "no-such-host.invalid"] {
            let e = resolve_ipv4_host(bad).unwrap_err();
            assert!(e.contains("is not an IPv4 address"), "{bad}: {e}");
        }
    }

    #[test]
    fn host_port_takes_addresses_and_names() {
        assert_eq!(
            resolve_host_port("10.0.0.1:9000"),
            Ok("10.0.0.1:9000".parse().unwrap())
        );
        assert_eq!(
            resolve_host_port("[::1]:9000"),
            Ok("[::1]:9000".parse().unwrap())
        );
        // localhost: the system's resolver (/etc/hosts); its IPv4 address where it has one.
        let l = resolve_host_port("localhost:9000").unwrap();
        assert!(l.ip().is_loopback() && l.port() == 9000, "{l}");
        for bad in [
            "localhost",
            "localhost:x",
            ":9000",
            "localhost:70000",
            "no-such-host.invalid:9000",
        ] {
            let e = resolve_host_port(bad).unwrap_err();
            assert!(e.contains('`') && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn clock_is_monotonic_and_round_trips() {
        let c = Clock::new();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        let t = c.now() + Duration::from_millis(5);
        let back = c.to_core(c.to_std(t));
        assert!(
            back.as_nanos().abs_diff(t.as_nanos()) < 1_000,
            "{back:?} vs {t:?}"
        );
        // std::time::Instant is CLOCK_MONOTONIC on Linux: the two readings agree closely.
        let s = c.to_core(std::time::Instant::now());
        assert!(s.as_nanos().abs_diff(c.now().as_nanos()) < 5_000_000);
    }

    #[test]
    fn two_clocks_share_instants() {
        let a = Clock::new();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = Clock::new();
        assert!(b.now().as_nanos().abs_diff(a.now().as_nanos()) < 1_000_000);
    }
}
