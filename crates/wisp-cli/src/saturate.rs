//! `wisp saturate server|client`: the Saturator over real sockets (`wisp_net::saturator`).

use crate::error::CliError;
use crate::output;
use clap::{Args, Subcommand, ValueEnum};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use wisp_core::saturator::{RecordingSettings, WindowConfig, trace_lines};
use wisp_core::{Duration, Instant};
use wisp_net::saturator::{ClientConfig, ClientReport, FeedbackAddr, SaturateError, ServerConfig};

pub const LONG_ABOUT: &str = "\
Record a link as a Mahimahi trace, the way the Sprout paper's Saturator recorded its cellular
traces (NSDI 2013, §5.1.1): keep the link backlogged with MTU-sized UDP packets, in one direction
or both at once, and write down when each packet arrives. Each line of the trace is one arrival,
in whole ms: one opportunity to deliver a 1500-byte packet, as Mahimahi and `wisp link` read it.

The sender keeps a window of packets in flight and adapts it to keep the round-trip time between
750 ms (the link never starves) and 3 s (a cellular network may start dropping): +1 packet per
acknowledged packet below 750 ms, −20 above 3 s, between 20 and 1500 packets. Acknowledgements
go over a second path when the client names one (--feedback), as the paper's second phone
carried them; otherwise they share the link under test.

Example: run the server where the network is good and the client behind the link; inside
`wisp link`, the server runs on the host:

  wisp saturate server --listen 0.0.0.0:9500 --feedback-listen unix:/tmp/sat.sock
  sudo wisp link --downlink traces/cellular/Verizon-LTE-short.down \\
       --uplink traces/cellular/Verizon-LTE-short.up -- sh -c \\
       'wisp saturate client --server $WISP_LINK_PEER:9500 --feedback unix:/tmp/sat.sock \\
          --duration-s 30 --epoch-ns $WISP_LINK_EPOCH_NS --out rec/verizon'
  wisp trace compare rec/verizon.down traces/cellular/Verizon-LTE-short.down \\
       --from-ms FROM --to-ms TO     # the window the client printed

A Unix socket path (unix:PATH) reaches across network namespaces on one host; between hosts,
--feedback HOST:PORT names the server's --feedback-listen address over another interface.
Progress goes to stderr once a second; the summary to stdout (--json: one object).";

const CLIENT_HELP: &str = "\
Output: TRACE (or TRACE.up and TRACE.down), one line per packet that arrived in the recording
window, its whole ms since the epoch; on stdout the window (from_ms, to_ms: compare over it with
`wisp trace compare`), per direction the packets, Mbit/s (1500 bytes per line), packets sent
and the uplink's RTT. `wisp saturate --help` explains the method and shows a run through
`wisp link`.

Example:
  wisp saturate client --server 10.0.0.1:9500 --feedback 192.168.1.1:9501 --duration-s 60 \\
       --out rec/mylink";

const SERVER_HELP: &str = "\
The server answers a client's handshake, saturates the downlink when asked, records the uplink's
arrivals and hands them to the client at the end. A client that falls silent for 120 s ends its
session; another client is told the server is busy meanwhile. Progress and each session's summary
go to stderr. `wisp saturate --help` explains the method.

Examples:
  wisp saturate server --listen 0.0.0.0:9500
  wisp saturate server --listen 0.0.0.0:9500 --feedback-listen unix:/tmp/sat.sock --sessions 1";

#[derive(Subcommand, Debug)]
pub enum SaturateCommand {
    /// Serve saturator clients (one session at a time): send the downlink, record the uplink.
    #[command(after_long_help = SERVER_HELP)]
    Server(ServerArgs),
    /// Saturate the link to a server for a while and write what arrived as Mahimahi traces.
    #[command(after_long_help = CLIENT_HELP)]
    Client(ClientArgs),
}

#[derive(Args, Debug)]
pub struct WindowArgs {
    /// Smallest window, packets.
    #[arg(
        allow_hyphen_values = true,
        long,
        default_value_t = 20,
        value_name = "N"
    )]
    pub min_window: u32,
    /// Largest window, packets.
    #[arg(
        allow_hyphen_values = true,
        long,
        default_value_t = 1500,
        value_name = "N"
    )]
    pub max_window: u32,
}

impl WindowArgs {
    fn config(&self) -> Result<WindowConfig, CliError> {
        let cfg = WindowConfig {
            min: self.min_window,
            max: self.max_window,
            initial: self.min_window,
            ..WindowConfig::default()
        };
        cfg.validate()
            .map_err(|e| CliError::Input(format!("--min-window/--max-window: {e}")))?;
        Ok(cfg)
    }
}

#[derive(Args, Debug)]
pub struct ServerArgs {
    /// UDP address for the data path.
    #[arg(long, default_value = "0.0.0.0:9500", value_name = "ADDR")]
    pub listen: SocketAddr,
    /// A second socket for the feedback path: HOST:PORT (UDP) or unix:PATH.
    #[arg(long, value_name = "ADDR")]
    pub feedback_listen: Option<FeedbackAddr>,
    /// Exit after this many sessions (default: serve until interrupted).
    #[arg(allow_hyphen_values = true, long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub sessions: Option<u64>,
    #[command(flatten)]
    pub window: WindowArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DirectionArg {
    /// Client → server.
    Up,
    /// Server → client.
    Down,
    /// Both at once (writes TRACE.up and TRACE.down).
    Both,
}

#[derive(Args, Debug)]
pub struct ClientArgs {
    // As `help`, not a doc comment: rustdoc would read `[::1]` as a link.
    #[arg(
        long,
        value_name = "HOST:PORT",
        value_parser = crate::net::host_port,
        help = "The server's UDP address, HOST:PORT: e.g. $WISP_LINK_PEER:9500, localhost:9500, [::1]:9500."
    )]
    pub server: SocketAddr,
    /// Seconds to record (after the warm-up).
    #[arg(allow_hyphen_values = true, long, default_value = "30", value_name = "S", value_parser = crate::args::positive_secs)]
    pub duration_s: Duration,
    /// Seconds of saturation before the recording starts (the queue builds up).
    #[arg(allow_hyphen_values = true, long, default_value = "2", value_name = "S", value_parser = crate::args::non_negative_secs)]
    pub warmup_s: Duration,
    /// Which way to saturate.
    #[arg(long, value_enum, default_value = "both")]
    pub direction: DirectionArg,
    /// Send feedback over a second path: HOST:PORT (the server's --feedback-listen, reached
    /// over another interface) or unix:PATH (a Unix datagram socket, across network namespaces
    /// on one host).
    #[arg(long, value_name = "ADDR")]
    pub feedback: Option<FeedbackAddr>,
    /// Write the trace here (TRACE.up and TRACE.down with --direction both).
    #[arg(long, value_name = "TRACE")]
    pub out: Option<PathBuf>,
    /// Timestamps count from this CLOCK_MONOTONIC instant, ns (default: the recording's start).
    /// Inside `wisp link`, $WISP_LINK_EPOCH_NS puts the recording on the replayed trace's axis.
    #[arg(allow_hyphen_values = true, long, value_name = "NS")]
    pub epoch_ns: Option<u64>,
    /// Each packet's size on the wire, bytes: the IP packet, headers included (1500: one trace
    /// line). The UDP payload is 28 bytes less over IPv4, 48 over IPv6; packets are sent with
    /// don't-fragment, so one over the path MTU fails the run instead of being fragmented.
    #[arg(
        allow_hyphen_values = true,
        long,
        default_value_t = 1500,
        value_name = "BYTES"
    )]
    pub packet_bytes: usize,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Print the summary as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn saturate_error(e: SaturateError) -> CliError {
    match e {
        SaturateError::Input(m) => CliError::Input(m),
        e => CliError::Io(e.to_string()),
    }
}

fn with_ext(p: &Path, ext: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// A temporary name beside `f`, in the same folder (so a rename moves it into place).
fn temporary(f: &Path) -> PathBuf {
    let name = f
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    f.with_file_name(format!(".{name}.wisp-{}.tmp", std::process::id()))
}

/// Writes every `(file, contents)` or none: each goes to a temporary name in its folder first,
/// and the temporaries are renamed into place only when all are complete. On a failure the
/// temporaries are removed, and so are the files already renamed (the recording's outputs are
/// a set: `TRACE.up` without its `TRACE.down` is not one).
fn write_all_or_none(files: &[(PathBuf, String)]) -> Result<(), CliError> {
    let temps: Vec<PathBuf> = files.iter().map(|(f, _)| temporary(f)).collect();
    let cleanup = |renamed: &[PathBuf]| {
        for t in temps.iter().chain(renamed) {
            let _ = std::fs::remove_file(t);
        }
    };
    for ((f, text), t) in files.iter().zip(&temps) {
        if let Err(e) = std::fs::write(t, text) {
            cleanup(&[]);
            return Err(CliError::Io(format!(
                "cannot write {} (as {}): {e}",
                f.display(),
                t.display()
            )));
        }
    }
    let mut renamed = vec![];
    for ((f, _), t) in files.iter().zip(&temps) {
        if let Err(e) = std::fs::rename(t, f) {
            cleanup(&renamed);
            return Err(CliError::Io(format!("cannot write {}: {e}", f.display())));
        }
        renamed.push(f.clone());
    }
    Ok(())
}

pub fn saturate(cmd: SaturateCommand) -> Result<(), CliError> {
    let stop = crate::net::stop_flag()?;
    match cmd {
        SaturateCommand::Server(a) => server(a, &stop),
        SaturateCommand::Client(a) => client(a, &stop),
    }
}

/// `wisp saturate server`.
fn server(a: ServerArgs, stop: &AtomicBool) -> Result<(), CliError> {
    crate::net::check_listen("--listen", a.listen, false)?;
    match &a.feedback_listen {
        Some(FeedbackAddr::Udp(f)) => {
            // The two sockets cannot share one port (each address alone binds).
            let same_port = f.port() == a.listen.port() && f.port() != 0;
            if same_port
                && (f.ip() == a.listen.ip()
                    || f.ip().is_unspecified()
                    || a.listen.ip().is_unspecified())
            {
                return Err(CliError::Input(format!(
                    "--feedback-listen {f}: the port of --listen {}; give the feedback path a port of its own",
                    a.listen
                )));
            }
            crate::net::check_listen("--feedback-listen", *f, false)?
        }
        Some(FeedbackAddr::Unix(p)) => {
            let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
            if dir.is_some_and(|d| !d.is_dir()) {
                return Err(CliError::Input(format!(
                    "--feedback-listen unix:{}: no such directory",
                    p.display()
                )));
            }
            // The server replaces a socket left by an earlier run, nothing else.
            if std::fs::symlink_metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                !m.file_type().is_socket()
            }) {
                return Err(CliError::Input(format!(
                    "--feedback-listen unix:{}: a file that is not a socket is in the way",
                    p.display()
                )));
            }
        }
        None => {}
    }
    let cfg = ServerConfig {
        listen: a.listen,
        feedback_listen: a.feedback_listen,
        window: a.window.config()?,
        sessions: a.sessions,
        idle: Duration::from_secs(120),
    };
    wisp_net::saturator::server(&cfg, stop, &mut |l| say!("{l}")).map_err(saturate_error)
}

/// `wisp saturate client`.
fn client(a: ClientArgs, stop: &AtomicBool) -> Result<(), CliError> {
    crate::net::check_port("--server", a.server)?;
    if let Some(ns) = a.epoch_ns {
        crate::net::check_epoch("--epoch-ns", ns)?;
    }
    match &a.feedback {
        Some(FeedbackAddr::Udp(f)) => crate::net::check_port("--feedback", *f)?,
        // The server's socket file must be there already (it failed after 5 s).
        Some(FeedbackAddr::Unix(p)) if !p.exists() => {
            return Err(CliError::Input(format!(
                "--feedback unix:{}: no such socket (start `wisp saturate server \
                 --feedback-listen unix:{}` first)",
                p.display(),
                p.display()
            )));
        }
        _ => {}
    }
    // The IP packet; the saturator's own check is on the UDP payload behind it.
    let header = wisp_net::ip_udp_header(&a.server) as usize;
    let payload = a.packet_bytes.saturating_sub(header);
    if a.packet_bytes > 65535 || wisp_net::saturator::check_packet_bytes(payload).is_err() {
        return Err(CliError::Input(format!(
            "--packet-bytes: must be {} to 65535 bytes (the IP packet, {header} bytes of IP and UDP header included), not {}",
            header + wisp_net::saturator::MIN_PACKET_BYTES,
            a.packet_bytes
        )));
    }
    let (up, down) = match a.direction {
        DirectionArg::Up => (true, false),
        DirectionArg::Down => (false, true),
        DirectionArg::Both => (true, true),
    };
    let files: Vec<(bool, PathBuf)> = match &a.out {
        None => vec![],
        Some(p) if up && down => {
            vec![(true, with_ext(p, "up")), (false, with_ext(p, "down"))]
        }
        Some(p) => vec![(up, p.clone())],
    };
    check_out_files(&files)?;
    let cfg = ClientConfig {
        server: a.server,
        feedback: a.feedback,
        recording: RecordingSettings {
            up,
            down,
            duration: a.duration_s,
            warmup: a.warmup_s,
            packet_bytes: payload,
            window: a.window.config()?,
            epoch: a.epoch_ns.map(Instant::from_nanos),
        },
    };
    let r =
        wisp_net::saturator::client(&cfg, stop, &mut |l| say!("{l}")).map_err(saturate_error)?;
    let mut traces = vec![];
    for (is_up, f) in &files {
        let rec = if *is_up { &r.up } else { &r.down };
        let Some(rec) = rec else { continue };
        if rec.packets == 0 {
            say!(
                "wisp saturate: warning: nothing arrived {}; {} is empty (not a valid trace)",
                if *is_up { "up" } else { "down" },
                f.display()
            );
        }
        traces.push((f.clone(), trace_lines(&rec.counts)));
    }
    write_all_or_none(&traces)?;
    let written: Vec<String> = traces
        .iter()
        .map(|(f, _)| f.display().to_string())
        .collect();
    if a.json {
        let mut v = serde_json::to_value(&r)
            .map_err(|e| CliError::Io(format!("cannot serialise the summary: {e}")))?;
        v["files"] = serde_json::json!(written);
        return output::print_json(&v);
    }
    print_client(&r, &written);
    Ok(())
}

/// `--out`'s files can be written (checked before a 30-s run, not after it).
fn check_out_files(files: &[(bool, PathBuf)]) -> Result<(), CliError> {
    // Fail before a 30-s run, not after it.
    for (_, f) in files {
        if f.is_dir() {
            return Err(CliError::Input(format!(
                "--out: {} is a directory (give a file name: TRACE, or TRACE.up and TRACE.down with --direction both)",
                f.display()
            )));
        }
        let dir = f.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) {
            return Err(CliError::Input(format!(
                "--out: no such directory {}",
                dir.map(|d| d.display().to_string()).unwrap_or_default()
            )));
        }
    }
    Ok(())
}

/// The client's figures on stdout.
fn print_client(r: &ClientReport, written: &[String]) {
    println!(
        "window {:.0}-{:.0} ms ({}); clock offset {:.3} ms (handshake RTT {:.2} ms)",
        r.from_ms,
        r.to_ms,
        if r.same_clock {
            "one clock"
        } else {
            "two clocks"
        },
        r.clock_offset_ns as f64 / 1e6,
        r.handshake_rtt_ms
    );
    for (name, rec) in [("up", &r.up), ("down", &r.down)] {
        let Some(rec) = rec else { continue };
        let o = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
        println!(
            "{name:<4} {:>8} packets {:>8.3} Mbit/s   sent {:>8}   rtt p50 {} ms p95 {} ms",
            rec.packets,
            rec.mean_mbps,
            rec.sent,
            o(rec.rtt_p50_ms),
            o(rec.rtt_p95_ms)
        );
    }
    for f in written {
        println!("wrote {f}");
    }
    if r.errors.malformed > 0 {
        println!("{} malformed packets ignored", r.errors.malformed);
    }
}
