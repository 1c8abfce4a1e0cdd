//! The plumbing of `wisp link`: a network namespace, two TUN devices, and the command.
//!
//! ```text
//!   host network namespace                         the link's namespace
//!   ┌────────────────────────────┐                ┌───────────────────────────────┐
//!   │ wisp-recv, iperf3 -s, …    │                │ COMMAND (ping $WISP_LINK_PEER) │
//!   │ 100.64.a.1 ── wisp<pid> TUN│◄──── wisp ────►│ wisp0 TUN ── 100.64.a.2       │
//!   └────────────────────────────┘  link (queues) └───────────────────────────────┘
//! ```
//!
//! Each side has a point-to-point TUN device whose peer is the other side's address, so the
//! kernel routes the traffic between the two addresses into the devices and `wisp link` moves
//! each packet from one device to the other through the emulated link. No veth, bridge, NAT or
//! firewall rule is involved, and nothing needs cleaning up by hand: the devices are
//! non-persistent (the kernel deletes them, and their routes, when `wisp link`'s file
//! descriptors close, also on SIGKILL), and the namespace is anonymous (it lives while a process
//! is in it or a descriptor refers to it; `wisp link` kills whatever the command left running in
//! it before it exits, and the command has a parent-death signal for when `wisp link` is killed
//! with SIGKILL and cannot).
//!
//! Addresses come from 100.64.0.0/10 (RFC 6598 shared address space, as Mahimahi uses), one /30
//! per instance, chosen so that concurrent instances do not collide.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::unix::fs::MetadataExt;
use std::process::{Child, Command};
use tun_rs::{DeviceBuilder, SyncDevice};

/// The two ends of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addresses {
    /// The host side (`WISP_LINK_PEER` inside the namespace).
    pub host: Ipv4Addr,
    /// The namespace side.
    pub ns: Ipv4Addr,
}

/// Why the plumbing could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(
        "wisp link needs root (CAP_NET_ADMIN) to create a network namespace and TUN devices: {0}"
    )]
    NotPermitted(io::Error),
    #[error("{what}: {err}")]
    Io { what: &'static str, err: io::Error },
    #[error("cannot run `{cmd}`: {err}")]
    Spawn { cmd: String, err: io::Error },
}

fn classify(what: &'static str) -> impl FnOnce(io::Error) -> SetupError {
    move |err| match err.raw_os_error() {
        Some(libc_eperm)
            if libc_eperm == nix::errno::Errno::EPERM as i32
                || libc_eperm == nix::errno::Errno::EACCES as i32 =>
        {
            SetupError::NotPermitted(err)
        }
        _ => SetupError::Io { what, err },
    }
}

fn nix_io(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// A free /30 of 100.64.0.0/10, starting from one derived from the process id.
pub fn pick_addresses() -> Addresses {
    let used: Vec<Ipv4Addr> = nix::ifaddrs::getifaddrs()
        .map(|it| {
            it.filter_map(|a| a.address.and_then(|s| s.as_sockaddr_in().map(|s| s.ip())))
                .collect()
        })
        .unwrap_or_default();
    // 2^20 blocks of 4 addresses in 100.64.0.0/10.
    let blocks = 1u32 << 20;
    let start = std::process::id() % blocks;
    for k in 0..blocks {
        let b = (start + k) % blocks;
        let base = u32::from(Ipv4Addr::new(100, 64, 0, 0)) + b * 4;
        let host = Ipv4Addr::from(base + 1);
        let ns = Ipv4Addr::from(base + 2);
        if !used.contains(&host) && !used.contains(&ns) {
            return Addresses { host, ns };
        }
    }
    // Every block taken: impossible in practice; share the first.
    Addresses {
        host: Ipv4Addr::new(100, 64, 0, 1),
        ns: Ipv4Addr::new(100, 64, 0, 2),
    }
}

/// Packets a TUN device holds for `wisp link` to read ([`deepen_queue`]).
const TUN_QUEUE_PACKETS: u32 = 10_000;

/// Raises `name`'s transmit queue from the TUN driver's 500 packets to [`TUN_QUEUE_PACKETS`]:
/// the packets a sender's kernel hands the device while `wisp link`'s thread is not reading
/// (descheduled for a few ms) wait there instead of being dropped (500 packets are 5.6 ms at
/// 1 Gbit/s of 1400-byte datagrams). It adds no delay while the link keeps up. Best effort: a
/// failure leaves the driver's default.
fn deepen_queue(name: &str) {
    let _ = Command::new("ip")
        .args(["link", "set", "dev", name, "txqueuelen"])
        .arg(TUN_QUEUE_PACKETS.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

fn tun(name: &str, addr: Ipv4Addr, peer: Ipv4Addr) -> io::Result<SyncDevice> {
    let dev = DeviceBuilder::new()
        .name(name)
        .ipv4(addr, 30, Some(peer))
        .mtu(1500)
        .packet_information(false)
        .build_sync()?;
    dev.set_nonblocking(true)?;
    Ok(dev)
}

/// The host-side device, in the calling thread's (the host's) namespace.
pub fn host_device(addrs: Addresses) -> Result<(SyncDevice, String), SetupError> {
    let name = format!("wisp{}", std::process::id());
    let dev =
        tun(&name, addrs.host, addrs.ns).map_err(classify("cannot create the host TUN device"))?;
    disable_ipv6(&name);
    deepen_queue(&name);
    Ok((dev, name))
}

/// The link's namespace with its device; the `File` refers to the namespace (it keeps it alive
/// and lets other threads enter it).
pub fn namespace(addrs: Addresses) -> Result<(SyncDevice, File), SetupError> {
    std::thread::spawn(move || {
        // Namespaces are per thread: only this thread moves.
        nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| classify("cannot create a network namespace")(nix_io(e)))?;
        let dev = tun("wisp0", addrs.ns, addrs.host)
            .map_err(classify("cannot create the TUN device in the namespace"))?;
        disable_ipv6("wisp0");
        deepen_queue("wisp0");
        // The namespace's loopback starts down; bring it up for commands that use localhost.
        let _ = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status();
        let ns = File::open("/proc/thread-self/ns/net").map_err(|err| SetupError::Io {
            what: "cannot open the namespace",
            err,
        })?;
        Ok((dev, ns))
    })
    .join()
    .unwrap_or_else(|_| {
        Err(SetupError::Io {
            what: "namespace thread",
            err: io::Error::other("panicked"),
        })
    })
}

/// No IPv6 on the link: the devices would otherwise send router solicitations and MLD
/// reports, which the link does not carry. Best effort (IPv6 may be disabled altogether).
fn disable_ipv6(dev: &str) {
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{dev}/disable_ipv6"), "1");
}

/// Runs `command` inside the namespace `ns` with `env` added to the environment.
///
/// The command gets SIGKILL as its parent-death signal, so that it ends with `wisp link` even
/// when `wisp link` itself is killed with SIGKILL and cannot end it (the kernel then removes the
/// devices; without the signal the command would live on in the orphaned namespace). The signal
/// is the kernel's `PR_SET_PDEATHSIG`, which fires when the *thread* that forked the command
/// ends: call this from the thread that waits for the command (the emulator's main thread).
/// It covers the command itself, not processes the command starts in the background.
#[allow(unsafe_code)] // `pre_exec`, the only way to run code between fork and exec
pub fn spawn_in(
    ns: &File,
    command: &[OsString],
    env: &[(String, String)],
) -> Result<Child, SetupError> {
    use std::os::unix::process::CommandExt;
    let (prog, args) = command.split_first().ok_or(SetupError::Spawn {
        cmd: String::new(),
        err: io::Error::other("no command"),
    })?;
    let ns = ns.try_clone().map_err(|err| SetupError::Io {
        what: "namespace",
        err,
    })?;
    let parent = nix::unistd::getpid();
    let mut cmd = Command::new(prog);
    cmd.args(args).envs(env.iter().cloned());
    // SAFETY: between fork and exec the closure makes only system calls (setns, prctl,
    // getppid), which are async-signal-safe, and allocates nothing (its errors are raw OS
    // errors).
    unsafe {
        cmd.pre_exec(move || {
            nix::sched::setns(&ns, nix::sched::CloneFlags::CLONE_NEWNET).map_err(nix_io)?;
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).map_err(nix_io)?;
            // The parent may have died between fork and prctl: then no signal will come.
            if nix::unistd::getppid() != parent {
                return Err(nix_io(nix::errno::Errno::ESRCH));
            }
            Ok(())
        });
    }
    cmd.spawn().map_err(|err| SetupError::Spawn {
        cmd: prog.to_string_lossy().into_owned(),
        err,
    })
}

/// Processes (other than this one) in the namespace with inode `ino`. Zombies have left their
/// namespaces and are not listed.
fn processes_in(ino: u64) -> Vec<i32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()))
        .filter(|&pid| pid as u32 != me)
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/ns/net")).is_ok_and(|m| m.ino() == ino)
        })
        .collect()
}

/// Kills (SIGKILL) every process still in the namespace `ns` and waits (up to two seconds)
/// until they have left it; returns how many there were.
pub fn kill_all_in(ns: &File) -> usize {
    use nix::sys::signal::{Signal, kill};
    let Ok(ino) = ns.metadata().map(|m| m.ino()) else {
        return 0;
    };
    let mut seen = std::collections::HashSet::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let left = processes_in(ino);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return seen.len();
        }
        for pid in left {
            seen.insert(pid);
            let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The inode of a namespace file (`net:[INODE]` in `/proc/PID/ns/net`).
pub fn namespace_inode(ns: &File) -> Option<u64> {
    ns.metadata().ok().map(|m| m.ino())
}
