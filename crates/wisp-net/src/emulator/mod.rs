//! `wisp link` — a user-space, trace-driven link emulator in the manner of Mahimahi's `mm-link`.
//!
//! A command runs in a network namespace of its own ([`netns`]); its traffic to the host side
//! and back crosses two TUN devices, and `wisp link` carries every packet through one
//! [`Direction`] per way: random loss at the entrance, the one-way propagation delay, the
//! bottleneck queue and the trace-driven server. These are the simulator's own `LossModel`,
//! `Queue` and `Server` ([`path`]), so a scheme sees the same link in `wisp run` and through
//! `wisp link` (the test `matches_the_simulator_packet_for_packet` checks it to the nanosecond).
//!
//! Timing: one thread waits on both devices and a `timerfd` armed at the next departure's
//! exact instant (see [`crate::timer`]), instead of `mm-link`'s 1-ms timer, and writes each
//! packet at its nominal instant; the summary reports how late the writes were.
//!
//! Only traffic between the two link addresses is carried; anything else that enters a device
//! (other destinations, IPv6) is dropped and counted: the namespace reaches the host side, not
//! the rest of the network (Mahimahi NATs to the Internet; wisp deliberately does not).
//!
//! Optional priority classes (`--wmm`): four queues per direction served in strict priority by
//! DSCP ([`wmm`]).
//!
//! The emulated 802.11 medium (`--downlink wifi:…`): both directions cross one simulated
//! channel ([`WifiHop`], the simulator's `WifiLink`) on the monotonic clock, so the command
//! sees contention, EDCA access delay and the AP's WMM queues in real time.

pub mod netns;
pub mod path;
pub mod wmm;

use crate::Clock;
use crate::mmlog::LogWriter;
use crate::timer::Waiter;
use nix::sys::eventfd::{EfdFlags, EventFd};
pub use path::{Direction, DirectionSpec, DirectionStats, SharedWifi, WifiHop};
use serde::Serialize;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tun_rs::SyncDevice;
use wisp_core::{Duration, Instant};

/// Everything `wisp link` needs.
#[derive(Debug)]
pub struct LinkOptions {
    /// From the namespace to the host.
    pub uplink: DirectionSpec,
    /// From the host to the namespace.
    pub downlink: DirectionSpec,
    /// Names for the log headers (the trace files or link specs).
    pub uplink_name: String,
    pub downlink_name: String,
    /// Write `uplink.log` and `downlink.log` here.
    pub log_dir: Option<PathBuf>,
    pub seed: u64,
    /// Spin margin of the departure timer.
    pub spin: Duration,
    pub command: Vec<OsString>,
    /// The command line, for the log headers.
    pub command_line: String,
}

/// How the command ended and what the link did.
#[derive(Clone, Debug, Serialize)]
pub struct LinkSummary {
    /// The command's exit code (128 + signal if it was killed).
    pub exit_code: i32,
    pub host_address: String,
    pub namespace_address: String,
    pub duration_s: f64,
    pub uplink: DirectionReport,
    pub downlink: DirectionReport,
    /// Packets that entered a device but were not between the link's two addresses.
    pub filtered_packets: u64,
    /// How late packets were written after their nominal departure instant, µs.
    pub write_late_p50_us: Option<f64>,
    pub write_late_p99_us: Option<f64>,
    pub write_late_max_us: Option<f64>,
    /// Processes the command left in the namespace, killed at the end.
    pub leftover_processes_killed: usize,
    /// CPU time (user + system) of the thread that moves the packets, and per packet it
    /// forwarded (both directions).
    pub engine_cpu_s: f64,
    pub engine_cpu_per_packet_us: Option<f64>,
}

/// One direction's counters at the end, and the packets it still held.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct DirectionReport {
    #[serde(flatten)]
    pub stats: DirectionStats,
    pub still_held: u64,
}

impl DirectionReport {
    /// Packets dropped for any reason.
    pub fn dropped(&self) -> u64 {
        let s = &self.stats;
        s.dropped_loss + s.dropped_queue + s.dropped_aqm + s.dropped_memory + s.dropped_retry
    }
}

/// Why the link could not run.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error(transparent)]
    Setup(#[from] netns::SetupError),
    #[error("{what}: {err}")]
    Io { what: String, err: io::Error },
}

fn io_ctx(what: impl Into<String>) -> impl FnOnce(io::Error) -> LinkError {
    let what = what.into();
    move |err| LinkError::Io { what, err }
}

/// A histogram of lateness in µs (1-µs bins up to 100 ms).
#[derive(Debug)]
struct Lateness {
    bins: Vec<u64>,
    max: u64,
    n: u64,
}

impl Lateness {
    fn new() -> Self {
        Lateness {
            bins: vec![0; 100_001],
            max: 0,
            n: 0,
        }
    }
    fn add(&mut self, late: Duration) {
        let us = late.as_micros();
        self.bins[us.min(100_000) as usize] += 1;
        self.max = self.max.max(us);
        self.n += 1;
    }
    fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).max(1);
        let mut acc = 0;
        for (us, &c) in self.bins.iter().enumerate() {
            acc += c;
            if acc >= rank {
                return Some(us as f64);
            }
        }
        Some(self.max as f64)
    }
}

/// Whether an IPv4 packet goes from `src` to `dst`.
fn between(p: &[u8], src: Ipv4Addr, dst: Ipv4Addr) -> bool {
    p.len() >= 20 && p[0] >> 4 == 4 && p[12..16] == src.octets() && p[16..20] == dst.octets()
}

type Log = BufWriter<File>;

struct Engine {
    up: Direction<Log>,
    down: Direction<Log>,
    host: SyncDevice,
    ns: SyncDevice,
    addrs: netns::Addresses,
    epoch: Instant,
    spin: Duration,
    stop: Arc<AtomicBool>,
    wake: Arc<EventFd>,
}

struct EngineResult {
    up: DirectionStats,
    down: DirectionStats,
    up_held: usize,
    down_held: usize,
    filtered: u64,
    late: Lateness,
    end: Instant,
    log_error: Option<io::Error>,
    cpu_s: f64,
}

const HOST: u64 = 1;
const NS: u64 = 2;
const WAKE: u64 = 3;
/// Packets read from one device before the other gets a turn.
const BATCH: usize = 64;

impl Engine {
    /// Hands every packet due by now to the kernel, in both directions.
    fn forward(&mut self, clock: &Clock, late: &mut Lateness) {
        let epoch = self.epoch;
        let link_now = |c: &Clock| Instant::ZERO + (c.now() - epoch);
        let now = link_now(clock);
        let (host, ns) = (&self.host, &self.ns);
        // Lateness is measured as the packet is handed to the kernel.
        self.up.advance(now, &mut |p, at| {
            late.add(link_now(clock) - at);
            let _ = host.send(p);
        });
        self.down.advance(now, &mut |p, at| {
            late.add(link_now(clock) - at);
            let _ = ns.send(p);
        });
    }

    fn run(mut self) -> io::Result<EngineResult> {
        let cpu0 = thread_cpu_s();
        let clock = Clock::new();
        let mut waiter = Waiter::new(self.spin)?;
        waiter.add(&*self.host, HOST)?;
        waiter.add(&*self.ns, NS)?;
        waiter.add(&*self.wake, WAKE)?;
        let mut late = Lateness::new();
        let mut filtered = 0u64;
        let mut buf = vec![0u8; 65536];
        let mut ready = Vec::new();
        let epoch = self.epoch;
        let link_now = |c: &Clock| Instant::ZERO + (c.now() - epoch);
        // Devices to read: those epoll reported, and those a batch did not drain.
        let mut readable = [false; 2];
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            self.forward(&clock, &mut late);
            // Arrivals: namespace → host is the uplink.
            let mut any = false;
            for (i, (dev, dir, src, dst)) in [
                (&self.ns, &mut self.up, self.addrs.ns, self.addrs.host),
                (&self.host, &mut self.down, self.addrs.host, self.addrs.ns),
            ]
            .into_iter()
            .enumerate()
            {
                if !readable[i] {
                    continue;
                }
                readable[i] = false;
                for k in 0..BATCH {
                    match dev.recv(&mut buf) {
                        Ok(n) => {
                            let p = &buf[..n];
                            if between(p, src, dst) {
                                dir.on_arrival(link_now(&clock), p);
                                any = true;
                            } else {
                                filtered += 1;
                            }
                            // A full batch: come back to this device before sleeping.
                            readable[i] = k + 1 == BATCH;
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            if any {
                // Zero delay and an idle link: a packet may leave at once.
                self.forward(&clock, &mut late);
            }
            let next = if readable.iter().any(|&r| r) {
                Some(epoch)
            } else {
                [self.up.next_event(), self.down.next_event()]
                    .into_iter()
                    .flatten()
                    .min()
                    .map(|t| epoch + (t - Instant::ZERO))
            };
            waiter.wait(next, &mut ready)?;
            for &r in &ready {
                match r {
                    NS => readable[0] = true,
                    HOST => readable[1] = true,
                    _ => {
                        let _ = self.wake.read();
                    }
                }
            }
        }
        let end = link_now(&clock);
        let log_error = self
            .up
            .finish_log(end)
            .err()
            .or_else(|| self.down.finish_log(end).err());
        Ok(EngineResult {
            up: self.up.stats(),
            down: self.down.stats(),
            up_held: self.up.held(),
            down_held: self.down.held(),
            filtered,
            late,
            end,
            log_error,
            cpu_s: thread_cpu_s() - cpu0,
        })
    }
}

/// CPU time (user + system) of the calling thread, in seconds.
fn thread_cpu_s() -> f64 {
    use nix::sys::resource::{UsageWho, getrusage};
    getrusage(UsageWho::RUSAGE_THREAD).map_or(0.0, |u| {
        let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
        t(u.user_time()) + t(u.system_time())
    })
}

fn report(s: DirectionStats, held: usize) -> DirectionReport {
    DirectionReport {
        stats: s,
        still_held: held as u64,
    }
}

fn open_log(
    dir: &Option<PathBuf>,
    file: &str,
    spec: &DirectionSpec,
    name: &str,
    which: &str,
    opts: &LinkOptions,
    init_ms: u128,
) -> Result<Option<LogWriter<Log>>, LinkError> {
    let Some(dir) = dir else { return Ok(None) };
    let path = dir.join(file);
    let f = File::create(&path).map_err(io_ctx(format!("cannot create {}", path.display())))?;
    let header = vec![
        format!("wisp link ({which}) [{name}] > {}", path.display()),
        format!("command line: {}", opts.command_line),
        format!(
            "queue: {}{}",
            spec.queue,
            if spec.wmm.is_some() {
                " (wmm: 4 queues)"
            } else {
                ""
            }
        ),
        format!("delay: {} ms", spec.delay.as_millis_f64()),
        format!("loss: {}", spec.loss),
        format!("init timestamp: {init_ms}"),
        "base timestamp: 0".to_string(),
    ];
    Ok(Some(
        LogWriter::new(BufWriter::with_capacity(1 << 20, f), &spec.link, &header)
            .map_err(io_ctx(format!("cannot write {}", path.display())))?,
    ))
}

/// Runs the command behind the emulated link until it exits (or `stop` is set: then the
/// command is sent SIGTERM, and SIGKILL two seconds later). `on_start` is called with the two
/// addresses once the link carries traffic.
pub fn run(
    opts: LinkOptions,
    stop: Arc<AtomicBool>,
    on_start: &mut dyn FnMut(&netns::Addresses),
) -> Result<LinkSummary, LinkError> {
    use wisp_sim::seed::stream;
    let addrs = netns::pick_addresses();
    let (host, _host_name) = netns::host_device(addrs)?;
    let (ns_dev, ns) = netns::namespace(addrs)?;
    // After the devices: without root, nothing (not even an empty log folder) is left behind.
    if let Some(d) = &opts.log_dir {
        std::fs::create_dir_all(d).map_err(io_ctx(format!("cannot create {}", d.display())))?;
    }
    let clock = Clock::new();
    let epoch = clock.now();
    let init_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let up_log = open_log(
        &opts.log_dir,
        "uplink.log",
        &opts.uplink,
        &opts.uplink_name,
        "uplink",
        &opts,
        init_ms,
    )?;
    let down_log = open_log(
        &opts.log_dir,
        "downlink.log",
        &opts.downlink,
        &opts.downlink_name,
        "downlink",
        &opts,
        init_ms,
    )?;
    let engine_stop = Arc::new(AtomicBool::new(false));
    let wake = Arc::new(
        EventFd::from_value_and_flags(0, EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC)
            .map_err(|e| io_ctx("eventfd")(io::Error::from_raw_os_error(e as i32)))?,
    );
    let engine = Engine {
        up: Direction::new(
            &opts.uplink,
            stream(opts.seed, "link/uplink/loss"),
            stream(opts.seed, "link/uplink/aqm"),
            up_log,
        ),
        down: Direction::new(
            &opts.downlink,
            stream(opts.seed, "link/downlink/loss"),
            stream(opts.seed, "link/downlink/aqm"),
            down_log,
        ),
        host,
        ns: ns_dev,
        addrs,
        epoch,
        spin: opts.spin,
        stop: Arc::clone(&engine_stop),
        wake: Arc::clone(&wake),
    };
    let engine = std::thread::Builder::new()
        .name("wisp-link".into())
        .spawn(move || engine.run())
        .map_err(io_ctx("cannot start the link thread"))?;
    let env = command_env(&opts, addrs, epoch);
    let stop_engine = |engine_stop: &AtomicBool| {
        engine_stop.store(true, Ordering::Relaxed);
        let _ = wake.write(1);
    };
    let mut child = match netns::spawn_in(&ns, &opts.command, &env) {
        Ok(c) => c,
        Err(e) => {
            stop_engine(&engine_stop);
            let _ = engine.join();
            return Err(e.into());
        }
    };
    on_start(&addrs);
    let status = wait_child(&mut child, &stop);
    let killed = netns::kill_all_in(&ns);
    stop_engine(&engine_stop);
    let result = engine
        .join()
        .map_err(|_| io_ctx("link thread")(io::Error::other("panicked")))?
        .map_err(io_ctx("link thread"))?;
    drop(ns);
    if let Some(e) = result.log_error {
        return Err(io_ctx("cannot write the link log")(e));
    }
    let status = status.map_err(io_ctx("waiting for the command"))?;
    Ok(summary(&status, addrs, &result, killed))
}

/// The variables the command finds its link by (and Mahimahi's, for scripts written for it).
fn command_env(
    opts: &LinkOptions,
    addrs: netns::Addresses,
    epoch: Instant,
) -> Vec<(String, String)> {
    vec![
        ("WISP_LINK_PEER".to_string(), addrs.host.to_string()),
        ("WISP_LINK_ADDR".to_string(), addrs.ns.to_string()),
        (
            "WISP_LINK_EPOCH_NS".to_string(),
            epoch.as_nanos().to_string(),
        ),
        (
            "WISP_LINK_DELAY_MS".to_string(),
            opts.downlink.delay.as_millis_f64().to_string(),
        ),
        ("WISP_LINK_UPLINK".to_string(), opts.uplink_name.clone()),
        ("WISP_LINK_DOWNLINK".to_string(), opts.downlink_name.clone()),
        // Mahimahi's name for the outside address, for scripts written for it.
        ("MAHIMAHI_BASE".to_string(), addrs.host.to_string()),
    ]
}

/// What the command and the link did, for the closing lines and `summary.json`.
fn summary(
    status: &std::process::ExitStatus,
    addrs: netns::Addresses,
    result: &EngineResult,
    killed: usize,
) -> LinkSummary {
    LinkSummary {
        exit_code: exit_code(status),
        host_address: addrs.host.to_string(),
        namespace_address: addrs.ns.to_string(),
        duration_s: (result.end - Instant::ZERO).as_secs_f64(),
        uplink: report(result.up, result.up_held),
        downlink: report(result.down, result.down_held),
        filtered_packets: result.filtered,
        write_late_p50_us: result.late.quantile(0.5),
        write_late_p99_us: result.late.quantile(0.99),
        write_late_max_us: (result.late.n > 0).then_some(result.late.max as f64),
        leftover_processes_killed: killed,
        engine_cpu_s: result.cpu_s,
        engine_cpu_per_packet_us: {
            let n = result.up.departed + result.down.departed;
            (n > 0).then(|| result.cpu_s * 1e6 / n as f64)
        },
    }
}

fn exit_code(s: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

/// Waits for the command; on `stop` sends it SIGTERM, then SIGKILL after two seconds.
fn wait_child(
    child: &mut std::process::Child,
    stop: &AtomicBool,
) -> io::Result<std::process::ExitStatus> {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    let pid = Pid::from_raw(child.id() as i32);
    let mut term_sent: Option<std::time::Instant> = None;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(s);
        }
        if stop.load(Ordering::Relaxed) {
            match term_sent {
                None => {
                    let _ = kill(pid, Signal::SIGTERM);
                    term_sent = Some(std::time::Instant::now());
                }
                Some(t) if t.elapsed() > std::time::Duration::from_secs(2) => {
                    let _ = kill(pid, Signal::SIGKILL);
                }
                Some(_) => {}
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles() {
        let mut l = Lateness::new();
        for us in [1u64, 2, 3, 4, 100] {
            l.add(Duration::from_micros(us));
        }
        assert_eq!(l.quantile(0.5), Some(3.0));
        assert_eq!(l.quantile(1.0), Some(100.0));
        assert_eq!(Lateness::new().quantile(0.5), None);
    }

    #[test]
    fn only_traffic_between_the_link_addresses_passes() {
        let a = Ipv4Addr::new(100, 64, 0, 1);
        let b = Ipv4Addr::new(100, 64, 0, 2);
        let mut p = vec![0u8; 28];
        p[0] = 0x45;
        p[12..16].copy_from_slice(&b.octets());
        p[16..20].copy_from_slice(&a.octets());
        assert!(between(&p, b, a));
        assert!(!between(&p, a, b));
        p[0] = 0x60;
        assert!(!between(&p, b, a));
        assert!(!between(&p[..10], b, a));
    }
}
