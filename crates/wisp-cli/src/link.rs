//! `wisp link` (the trace-driven link emulator) and `wisp analyze` (its logs).

use crate::args::non_negative_ms;
use crate::error::CliError;
use crate::output;
use clap::Args;
use std::ffi::OsString;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use wisp_core::Duration;
use wisp_net::emulator::wmm::WmmMap;
use wisp_net::emulator::{DirectionSpec, LinkError, LinkOptions, SharedWifi, WifiHop};
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::loss::LossSpec;
use wisp_sim::queue::QueueSpec;
use wisp_sim::wifi::link::{AP, STATION, WifiLink, WifiSpec};

#[derive(Args, Debug)]
pub struct LinkArgs {
    // The help lists the link kinds of wisp_sim's registry.
    #[arg(long, value_name = "TRACE", help = crate::args::link_help(DOWNLINK_HELP))]
    pub downlink: String,

    /// The link from the command to the host: a trace file or a link spec. Optional with
    /// --downlink wifi:…: then the uplink crosses the same medium (station → AP); a wifi:
    /// uplink must name the same spec as the downlink.
    #[arg(long, value_name = "TRACE")]
    pub uplink: Option<String>,

    /// One-way propagation delay in each direction, ms, applied before the bottleneck queue
    /// (after the medium on a wifi: direction).
    #[arg(allow_hyphen_values = true, long, value_name = "MS", default_value = "20", value_parser = non_negative_ms)]
    pub delay_ms: Duration,

    /// Downlink queue: infinite, droptail:packets=N[,bytes=B], drophead:…, codel[:…], pie[:…],
    /// step[:threshold=1ms] (an L4S step marker), dualpi2[:…] (RFC 9332's coupled AQM); a
    /// marking queue sets CE in the IP header of ECT packets (see docs/usage.md).
    #[arg(long, value_name = "SPEC", default_value = "infinite")]
    pub downlink_queue: QueueSpec,

    /// Uplink queue (same forms as --downlink-queue).
    #[arg(long, value_name = "SPEC", default_value = "infinite")]
    pub uplink_queue: QueueSpec,

    /// Random loss at the entrance of both directions: a probability in [0, 1), or
    /// ge:p=P,r=R[,good=G,bad=B].
    #[arg(
        allow_hyphen_values = true,
        long,
        value_name = "P",
        default_value = "0"
    )]
    pub loss: LossSpec,

    /// Random loss of the downlink only (overrides --loss).
    #[arg(allow_hyphen_values = true, long, value_name = "P")]
    pub downlink_loss: Option<LossSpec>,

    /// Random loss of the uplink only (overrides --loss).
    #[arg(allow_hyphen_values = true, long, value_name = "P")]
    pub uplink_loss: Option<LossSpec>,

    /// Write Mahimahi-format logs DIR/uplink.log and DIR/downlink.log (read them with `wisp
    /// analyze`), and DIR/summary.json.
    #[arg(long, value_name = "DIR")]
    pub log: Option<PathBuf>,

    /// Four queues per direction served in strict priority by DSCP (WMM access categories
    /// VO > VI > BE > BK, RFC 8325 mapping).
    #[arg(long)]
    pub wmm: bool,

    /// Overrides of the DSCP → access category mapping, e.g. 46=vo,0=be (implies --wmm).
    #[arg(long, value_name = "DSCP=AC,…")]
    pub wmm_map: Option<WmmMap>,

    /// Seed of the loss and AQM random streams (default: $WISP_SEED, else 1).
    #[arg(allow_hyphen_values = true, long, value_name = "N")]
    pub seed: Option<u64>,

    /// Busy-wait this many µs before each departure instead of sleeping (more precise
    /// departures, more CPU).
    #[arg(allow_hyphen_values = true, long, value_name = "US", default_value = "50", value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub spin_us: u32,

    /// The command to run behind the link, after `--`. Inside, $WISP_LINK_PEER is the host
    /// side's address.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// `--downlink`'s help, around the registry's kinds: what `wisp link` does with the Wi-Fi
/// medium.
const DOWNLINK_HELP: [&str; 2] = [
    "The link from the host to the command (the namespace): a Mahimahi trace file, or a link \
     spec: ",
    ". With wifi:… (e.g. wifi:std=11g,rate=54mbps,stations=4,load=saturated), the command is \
     the measured station, the host side is behind the AP.",
];

/// `wisp analyze --help`: the columns and an example.
pub const ANALYZE_HELP: &str = "\
Output: a table, one row per log: dur s (first to last event), cap kbit/s (what the delivery
opportunities offered), thr kbit/s (what departed), util (thr / cap), p50 ms and p95 ms (each
packet's wait from reaching the queue to departure), sig95 ms (Mahimahi's 95th-percentile signal
delay, as mm-delay-graph), backlog s (time the queue held a packet), offered bl (kbit/s the
opportunities offered while the queue was backlogged: what a sender that kept it busy could get).
With --json, one object: logs[], each with file, duration_s, capacity_kbps, throughput_kbps,
ingress_kbps, utilization, packets_arrived/departed/dropped, delay_mean/p50/p95/p99_ms,
signal_delay_p95_ms, backlogged_s, offered_while_backlogged_kbps,
delivered_while_backlogged_kbps. A line it cannot read is named (FILE:LINE) with exit code 2.

Example:
  sudo wisp link --downlink traces/cellular/Verizon-LTE-short.down \\
       --uplink traces/cellular/Verizon-LTE-short.up --log logs -- \\
       sh -c 'ping -c 10 $WISP_LINK_PEER'
  wisp analyze logs/downlink.log logs/uplink.log";

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// Logs of `wisp link --log` (or Mahimahi's `mm-link --uplink-log/--downlink-log`).
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,

    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// A link argument: an existing file is a trace; otherwise a link spec (the Wi-Fi medium is
/// returned as its spec: it is not a [`LinkModel`]).
fn link_arg(option: &str, s: &str) -> Result<(Result<LinkModel, WifiSpec>, String), CliError> {
    let spec = if Path::new(s).is_file() {
        LinkSpec::trace_file(s)
    } else {
        s.parse::<LinkSpec>().map_err(|e| {
            if !s.contains(':') {
                CliError::Input(format!("{option}: no such trace file `{s}`"))
            } else {
                CliError::Input(format!("{option}: {e}"))
            }
        })?
    };
    if let Some(w) = spec.medium() {
        return Ok((Err(w.clone()), format!("wifi:{w}")));
    }
    let model = spec.load()?;
    Ok((Ok(model), s.to_string()))
}

/// The two directions of a link as given on a command line (`wisp link`, `wisp browser-call`).
#[derive(Debug)]
pub struct Ways<'a> {
    /// The option that names the downlink, for messages.
    pub downlink_option: &'static str,
    pub downlink: &'a str,
    pub uplink: Option<&'a str>,
    pub delay: Duration,
    pub downlink_queue: QueueSpec,
    pub uplink_queue: QueueSpec,
    pub downlink_loss: LossSpec,
    pub uplink_loss: LossSpec,
    pub wmm: Option<WmmMap>,
}

/// The emulator's options for `ways`, with the seed of `--seed` (else $WISP_SEED, else 1),
/// writing its logs into `log_dir`, running `command`.
pub fn options(
    ways: Ways<'_>,
    seed: Option<u64>,
    log_dir: Option<PathBuf>,
    command: Vec<OsString>,
) -> Result<LinkOptions, CliError> {
    let (down, down_name) = link_arg(ways.downlink_option, ways.downlink)?;
    let (up, up_name) = match ways.uplink {
        Some(u) => link_arg("--uplink", u)?,
        None => match &down {
            Err(w) => (Err(w.clone()), down_name.clone()),
            Ok(_) => {
                return Err(CliError::Input(
                    "--uplink is required (unless --downlink is wifi:…)".into(),
                ));
            }
        },
    };
    let seed = crate::args::seed(seed)?;
    let (down_hop, up_hop) = wifi_hops(&down, &up, seed)?;
    let up = up.unwrap_or(LinkModel::Unlimited);
    let down = down.unwrap_or(LinkModel::Unlimited);
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    Ok(LinkOptions {
        uplink: DirectionSpec {
            link: up,
            delay: ways.delay,
            queue: ways.uplink_queue,
            loss: ways.uplink_loss,
            wmm: ways.wmm.clone(),
            wifi: up_hop,
        },
        downlink: DirectionSpec {
            link: down,
            delay: ways.delay,
            queue: ways.downlink_queue,
            loss: ways.downlink_loss,
            wmm: ways.wmm,
            wifi: down_hop,
        },
        uplink_name: up_name,
        downlink_name: down_name,
        log_dir,
        seed,
        spin: Duration::from_micros(50),
        command,
        command_line,
    })
}

/// The emulator's error as the command's: a command that cannot run, or no permission to
/// build the link, is bad input (exit code 2), as `wisp pingpair` without ICMP permission.
pub fn link_error(e: LinkError) -> CliError {
    match e {
        LinkError::Setup(
            wisp_net::emulator::netns::SetupError::Spawn { .. }
            | wisp_net::emulator::netns::SetupError::NotPermitted(_),
        ) => CliError::Input(e.to_string()),
        e => CliError::Io(e.to_string()),
    }
}

pub fn link(a: LinkArgs) -> Result<u8, CliError> {
    // Before the namespace and the command: a --log that cannot be a directory is bad input.
    if let Some(dir) = &a.log {
        output::check_out_dir("--log", dir)?;
    }
    let wmm = match (&a.wmm_map, a.wmm) {
        (Some(m), _) => Some(m.clone()),
        (None, true) => Some(WmmMap::default()),
        (None, false) => None,
    };
    let ways = Ways {
        downlink_option: "--downlink",
        downlink: &a.downlink,
        uplink: a.uplink.as_deref(),
        delay: a.delay_ms,
        downlink_queue: a.downlink_queue,
        uplink_queue: a.uplink_queue,
        downlink_loss: a.downlink_loss.unwrap_or(a.loss),
        uplink_loss: a.uplink_loss.unwrap_or(a.loss),
        wmm,
    };
    let mut opts = options(ways, a.seed, a.log.clone(), a.command)?;
    opts.spin = Duration::from_micros(u64::from(a.spin_us));
    // Ctrl-C and SIGTERM end the command (it gets them too when it shares the terminal); the
    // link keeps running until it has exited, then cleans up.
    let stop = crate::net::stop_flag()?;
    let summary = wisp_net::emulator::run(opts, Arc::clone(&stop), &mut |addrs| {
        say!(
            "wisp link: namespace {} <-> host {} (WISP_LINK_PEER)",
            addrs.ns,
            addrs.host
        );
    })
    .map_err(link_error)?;
    let _: &AtomicBool = &stop;
    report(&summary);
    if let Some(dir) = &a.log {
        let json = serde_json::to_vec_pretty(&summary)
            .map_err(|e| CliError::Io(format!("cannot serialise the summary: {e}")))?;
        let mut out = output::OutputDir::default();
        out.add("summary.json", json);
        out.commit(dir)?;
    }
    Ok(summary.exit_code.clamp(0, 255) as u8)
}

/// The Wi-Fi hops of the two directions (`Err(spec)`: a `wifi:` direction), which share one
/// medium: the downlink is AP → station 1, the uplink station 1 → AP. `(downlink, uplink)`.
#[allow(clippy::type_complexity)]
fn wifi_hops(
    down: &Result<LinkModel, WifiSpec>,
    up: &Result<LinkModel, WifiSpec>,
    seed: u64,
) -> Result<(Option<WifiHop>, Option<WifiHop>), CliError> {
    let wifi_spec = match (down, up) {
        (Err(d), Err(u)) if d != u => {
            return Err(CliError::Input(format!(
                "--uplink: the uplink crosses the same medium as the downlink, so its wifi spec must be the same (`wifi:{d}`), not `wifi:{u}`"
            )));
        }
        (Err(w), _) | (_, Err(w)) => Some(w.clone()),
        _ => None,
    };
    let shared = wifi_spec.map(|w| {
        Arc::new(std::sync::Mutex::new(SharedWifi::new(WifiLink::new(
            &w, seed,
        ))))
    });
    let hop = |down: bool| {
        shared.as_ref().map(|s| WifiHop {
            shared: Arc::clone(s),
            from: if down { AP } else { STATION },
            to: if down { STATION } else { AP },
            way: usize::from(down),
        })
    };
    let up_hop = up.is_err().then(|| hop(false)).flatten();
    let down_hop = down.is_err().then(|| hop(true)).flatten();
    Ok((down_hop, up_hop))
}

/// The closing lines on stderr: the command's exit, each direction's packets, the engine's
/// lateness and CPU, and the packets it refused.
pub fn report(summary: &wisp_net::emulator::LinkSummary) {
    say!(
        "wisp link: command exited with {}; uplink {} packets ({} dropped), downlink {} packets ({} dropped); writes late p50 {} p99 {}; cpu {:.2} s ({} per packet)",
        summary.exit_code,
        summary.uplink.stats.departed,
        summary.uplink.dropped(),
        summary.downlink.stats.departed,
        summary.downlink.dropped(),
        wisp_net::report::fmt_opt(summary.write_late_p50_us, "us"),
        wisp_net::report::fmt_opt(summary.write_late_p99_us, "us"),
        summary.engine_cpu_s,
        summary
            .engine_cpu_per_packet_us
            .map_or_else(|| "-".to_string(), |v| format!("{v:.2} us")),
    );
    let marked = summary.uplink.stats.marked_ce + summary.downlink.stats.marked_ce;
    if marked > 0 {
        say!(
            "wisp link: marked CE (ECN) uplink {}, downlink {} packets",
            summary.uplink.stats.marked_ce,
            summary.downlink.stats.marked_ce
        );
    }
    if summary.filtered_packets > 0 {
        say!(
            "wisp link: dropped {} packets not between {} and {} (the link reaches the host side only)",
            summary.filtered_packets,
            summary.namespace_address,
            summary.host_address
        );
    }
}

pub fn analyze(a: AnalyzeArgs) -> Result<(), CliError> {
    let mut results = Vec::new();
    for p in &a.logs {
        let f = std::fs::File::open(p)
            .map_err(|e| CliError::Input(format!("cannot read {}: {e}", p.display())))?;
        let f = wisp_sim::limits::Capped::new(f, wisp_sim::limits::MAX_LOG_BYTES, "log");
        let r = wisp_net::mmlog::analyze(BufReader::new(f), &p.display().to_string())
            .map_err(CliError::input)?;
        results.push(r);
    }
    if a.json {
        return output::print_json(&serde_json::json!({ "logs": results }));
    }
    let o = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.1}"));
    println!(
        "{:<28} {:>8} {:>11} {:>11} {:>6} {:>8} {:>8} {:>8} {:>10} {:>11}",
        "log",
        "dur s",
        "cap kbit/s",
        "thr kbit/s",
        "util",
        "p50 ms",
        "p95 ms",
        "sig95 ms",
        "backlog s",
        "offered bl"
    );
    for r in &results {
        let name = Path::new(&r.file)
            .file_name()
            .map_or_else(|| r.file.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "{:<28} {:>8.1} {:>11.1} {:>11.1} {:>6.3} {:>8} {:>8} {:>8} {:>10.1} {:>11}",
            name,
            r.duration_s,
            r.capacity_kbps,
            r.throughput_kbps,
            r.utilization,
            o(r.delay_p50_ms),
            o(r.delay_p95_ms),
            o(r.signal_delay_p95_ms),
            r.backlogged_s,
            o(r.offered_while_backlogged_kbps)
        );
    }
    Ok(())
}
