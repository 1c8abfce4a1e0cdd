//! `wisp browser-call`: a real WebRTC call between two headless Chromiums, the receiver
//! behind `wisp link`'s emulated link, measured from the link's log and from the browsers'
//! getStats.
//!
//! The sender runs on the host and loads its page from the signalling server on loopback; the
//! receiver runs inside the link's namespace and loads its page from the server on the link's
//! host address (it waits for that server with a small shell loop over a file the command
//! writes once the server listens). Each page keeps only its UDP host candidate on its link
//! address, so the only path between the two is the link; after the call the command checks it
//! (the selected candidate pair, and the link's downlink log carrying at least the bytes the
//! receiver got).

mod chrome;
mod clip;
mod conduct;
mod signal;
mod stats;

use crate::args::non_negative_ms;
use crate::error::CliError;
use crate::output;
use clap::Args;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wisp_core::Duration;
use wisp_net::browser::BrowserFigures;
use wisp_net::emulator::netns::Addresses;
use wisp_net::mmlog::LogAnalysis;
use wisp_sim::link::LinkSpec;
use wisp_sim::queue::QueueSpec;

pub const LONG_ABOUT: &str = "\
A real WebRTC call between two headless Chromiums through an emulated link; needs root and \
Chromium (Debian's `chromium`).

The receiver runs inside `wisp link` (a network namespace behind the link given by --link: a \
trace file or any link spec, e.g. const:2mbps, steps:…, wifi:…); the sender runs on the host \
and sends the clip as its camera (video; --audio adds the fake microphone). Signalling runs \
over loopback and the link's host address only, and each browser offers only its UDP host \
candidate on the link, so the media crosses the link (checked after the call: the call fails \
if the link's log did not carry it). The call runs for --duration-s from when it connected; \
both browsers, their temporary profiles and the namespace are removed at the end, also on \
error or Ctrl-C.

The clip: --clip FILE.y4m (4:2:0 Y4M, looped), or by default a synthetic 640x480 30 fps clip \
that the command writes into its temporary folder: textured value noise panning 4 pixels a \
frame with a moving square, so the encoder has detail and motion to spend its target on (640x480 \
is where Chrome's encoder caps near 1.7 Mbit/s).

Output: what `wisp run` reports, from the link's downlink log (the media's direction): \
throughput, capacity, utilisation, queueing delay p50/p95, loss; and the browsers' figures from \
getStats every 200 ms: the sender's bandwidth estimate (availableOutgoingBitrate) 0.2 s and \
2 s after connecting, the time until it first reached 80% of the link's rate (const links), its \
median from 10 s to the end, the encoder's target, bytes sent, resolution and \
quality-limitation reason; the receiver's frames decoded, freezes (count, duration), \
jitter-buffer delay. --json prints them as one object. With --out DIR: DIR/summary.json, \
DIR/stats.csv (every snapshot of both pages), DIR/uplink.log and DIR/downlink.log (the link's \
logs, for `wisp analyze`). Progress goes to stderr.

Exit codes: 0 the call ran, 1 it failed (did not connect, a browser died, the media bypassed the \
link), 2 bad input (also: not root, no chromium).

Examples:
  sudo wisp browser-call --link const:2mbps --duration-s 60
  sudo wisp browser-call --link traces/cellular/Verizon-LTE-short.down \\
       --uplink traces/cellular/Verizon-LTE-short.up --out /tmp/call --json
  sudo wisp browser-call --link wifi:std=11g,rate=54mbps,stations=4,load=saturated \\
       --clip media/bigbuckbunny-qcif-3s.y4m";

#[derive(Args, Debug)]
pub struct BrowserCallArgs {
    /// The link from the sender to the receiver (the media's direction): a Mahimahi trace file
    /// or a link spec (as `wisp link --downlink`).
    #[arg(long, value_name = "SPEC")]
    pub link: String,

    /// The link back (RTCP, the receiver's feedback): default the same as --link (with a
    /// wifi: link, the same medium).
    #[arg(long, value_name = "SPEC")]
    pub uplink: Option<String>,

    /// One-way propagation delay in each direction, ms.
    #[arg(allow_hyphen_values = true, long, value_name = "MS", default_value = "20", value_parser = non_negative_ms)]
    pub delay_ms: Duration,

    /// The bottleneck queue of --link (as `wisp link --downlink-queue`).
    #[arg(long, value_name = "SPEC", default_value = "infinite")]
    pub queue: QueueSpec,

    /// How long the call runs once connected, s.
    #[arg(long, value_name = "S", default_value = "20", value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub duration_s: u32,

    /// The camera: a 4:2:0 Y4M file (default: a synthetic 640x480 clip, see above).
    #[arg(long, value_name = "FILE.y4m")]
    pub clip: Option<PathBuf>,

    /// Send audio too (Chromium's fake microphone).
    #[arg(long)]
    pub audio: bool,

    /// The Chromium binary (default: chromium on the PATH).
    #[arg(long, value_name = "PATH")]
    pub chromium: Option<PathBuf>,

    /// Seed of the link's random streams (default: $WISP_SEED, else 1).
    #[arg(allow_hyphen_values = true, long, value_name = "N")]
    pub seed: Option<u64>,

    /// Write summary.json, stats.csv, uplink.log and downlink.log into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// What a call measured.
#[derive(Debug, serde::Serialize)]
struct Summary {
    link: String,
    uplink: String,
    delay_ms: f64,
    duration_s: u32,
    clip: String,
    host_address: String,
    namespace_address: String,
    /// The link's rate when it is constant.
    link_kbps: Option<f64>,
    /// The downlink's figures over the call (from when it connected to its end).
    downlink: LogAnalysis,
    downlink_loss: f64,
    /// Bytes the downlink carried over its whole log (signalling included).
    downlink_carried_bytes: f64,
    /// The uplink's figures over the call.
    uplink_log: LogAnalysis,
    browser: BrowserFigures,
}

/// Everything checked before anything runs: bad input is exit code 2 and leaves nothing.
fn preflight(a: &BrowserCallArgs) -> Result<PathBuf, CliError> {
    if let Some(dir) = &a.out {
        output::check_out_dir("--out", dir)?;
    }
    if let Some(c) = &a.clip {
        clip::check(c)?;
    }
    let chromium = chrome::find(a.chromium.as_deref())?;
    if !nix::unistd::geteuid().is_root() {
        return Err(CliError::Input(
            "wisp browser-call needs root (it builds the link's network namespace and TUN devices, as wisp link does)".into(),
        ));
    }
    Ok(chromium)
}

/// The command `wisp link` runs in the namespace: a shell that waits (at most 30 s) for the
/// server's origin and the receiver's URL in `ready` (a line each), then becomes the
/// receiver's Chromium, its output into `log`. The origin (the link's host address, not
/// loopback) is made a secure context, where a page may use getUserMedia.
fn receiver_command(
    chromium: &Path,
    flags: Vec<OsString>,
    ready: &Path,
    log: &Path,
) -> Vec<OsString> {
    let script = "r=$1; log=$2; shift 2; i=0; \
        while [ ! -s \"$r\" ]; do i=$((i+1)); [ $i -gt 600 ] && exit 3; sleep 0.05; done; \
        { read -r origin; read -r url; } <\"$r\"; \
        exec \"$@\" --unsafely-treat-insecure-origin-as-secure=\"$origin\" \"$url\" >\"$log\" 2>&1";
    let mut c: Vec<OsString> = vec![
        "sh".into(),
        "-c".into(),
        script.into(),
        "wisp-browser-receiver".into(),
        ready.into(),
        log.into(),
        chromium.into(),
    ];
    c.extend(flags);
    c
}

pub fn browser_call(a: BrowserCallArgs) -> Result<(), CliError> {
    let chromium = preflight(&a)?;
    let io = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| CliError::Io(format!("{what}: {e}"))
    };
    let tmp = tempfile::Builder::new()
        .prefix("wisp-browser-call-")
        .tempdir()
        .map_err(io("cannot create a temporary folder"))?;
    let dir = tmp.path();
    let clip_path = match &a.clip {
        Some(c) => c.canonicalize().map_err(io("--clip"))?,
        None => dir.join("clip.y4m"),
    };
    let ways = crate::link::Ways {
        downlink_option: "--link",
        downlink: &a.link,
        // The same spec both ways by default (a wifi: spec: the same medium).
        uplink: Some(a.uplink.as_deref().unwrap_or(&a.link)),
        delay: a.delay_ms,
        downlink_queue: a.queue,
        uplink_queue: QueueSpec::default(),
        downlink_loss: Default::default(),
        uplink_loss: Default::default(),
        wmm: None,
    };
    let logs = dir.join("link");
    let ready = dir.join("ready");
    let rflags = chrome::flags(&dir.join("receiver-profile"), &clip_path);
    let receiver_log = dir.join("receiver.log");
    let command = receiver_command(&chromium, rflags, &ready, &receiver_log);
    let opts = crate::link::options(ways, a.seed, Some(logs.clone()), command)?;
    if a.clip.is_none() {
        say!("browser-call: writing the synthetic 640x480 clip");
        clip::write_synthetic(&clip_path)?;
    }
    let board = Arc::new(Mutex::new(signal::Board::default()));
    let call = conduct::Call {
        chromium,
        flags: chrome::flags(&dir.join("sender-profile"), &clip_path),
        sender_log: dir.join("sender.log"),
        receiver_log,
        audio: a.audio,
        duration: std::time::Duration::from_secs(u64::from(a.duration_s)),
        board: Arc::clone(&board),
    };
    let stop = crate::net::stop_flag()?;
    let (result, addrs) = conduct::run(call, opts, &ready, stop)?;
    let outcome = result?;
    if !outcome.completed {
        return Err(CliError::Io("interrupted before the call's end".into()));
    }
    let b = board.lock().unwrap_or_else(|e| e.into_inner());
    let summary = summarize(&a, &clip_path, addrs, &logs, &outcome, &b)?;
    check_path(&summary, &b, addrs)?;
    report(&a, &summary)?;
    if let Some(out) = &a.out {
        write_out(out, &summary, &b, &logs)?;
    }
    Ok(())
}

/// The link's rate when `spec` is `const:RATE`, kbit/s.
fn const_rate(spec: &str) -> Option<f64> {
    match spec.parse::<LinkSpec>().ok()? {
        LinkSpec::Const(r) => Some(r.kbps_f64()),
        _ => None,
    }
}

/// `wisp analyze`'s figures of the link log `name` in `logs`, over `window` if given.
fn analyze(logs: &Path, name: &str, window: Option<(f64, f64)>) -> Result<LogAnalysis, CliError> {
    let path = logs.join(name);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| CliError::Io(format!("cannot read the link's {name}: {e}")))?;
    let text = match window {
        Some((from, to)) => wisp_net::mmlog::window(&text, from, to),
        None => text,
    };
    wisp_net::mmlog::analyze(text.as_bytes(), name).map_err(|e| CliError::Io(e.to_string()))
}

fn summarize(
    a: &BrowserCallArgs,
    clip: &Path,
    addrs: Addresses,
    logs: &Path,
    outcome: &conduct::Outcome,
    b: &signal::Board,
) -> Result<Summary, CliError> {
    let window = outcome.window_unix_ms;
    let downlink = analyze(logs, "downlink.log", window)?;
    let uplink_log = analyze(logs, "uplink.log", window)?;
    let whole_downlink = analyze(logs, "downlink.log", None)?;
    let link_kbps = const_rate(&a.link);
    let downlink_loss = if downlink.packets_arrived > 0 {
        downlink.packets_dropped as f64 / downlink.packets_arrived as f64
    } else {
        0.0
    };
    Ok(Summary {
        link: a.link.clone(),
        uplink: a.uplink.clone().unwrap_or_else(|| a.link.clone()),
        delay_ms: a.delay_ms.as_millis_f64(),
        duration_s: a.duration_s,
        clip: a.clip.as_ref().map_or_else(
            || "synthetic 640x480 30 fps".to_string(),
            |_| clip.display().to_string(),
        ),
        host_address: addrs.host.to_string(),
        namespace_address: addrs.ns.to_string(),
        link_kbps,
        downlink,
        downlink_loss,
        downlink_carried_bytes: whole_downlink.throughput_kbps * whole_downlink.duration_s * 1e3
            / 8.0,
        uplink_log,
        browser: wisp_net::browser::figures(&b.sender, &b.receiver, link_kbps),
    })
}

/// Fails loudly if the media did not cross the link: the sender's selected candidate pair must
/// join the two link addresses, and the downlink must have carried at least the bytes the
/// receiver got (the log counts IP bytes, the receiver RTP bytes: more, never less).
fn check_path(s: &Summary, b: &signal::Board, addrs: Addresses) -> Result<(), CliError> {
    let pair = b
        .sender
        .iter()
        .rev()
        .find_map(|x| Some((x.local_addr.clone()?, x.remote_addr.clone()?)));
    let want = (addrs.host.to_string(), addrs.ns.to_string());
    if pair.as_ref() != Some(&want) {
        return Err(CliError::Io(format!(
            "the call did not use the link: its candidate pair is {pair:?}, not {} -> {}",
            want.0, want.1
        )));
    }
    let carried = s.downlink_carried_bytes;
    let received = s.browser.bytes_received.unwrap_or(0.0);
    if received <= 0.0 || carried < received {
        return Err(CliError::Io(format!(
            "the media did not cross the link: the receiver got {received:.0} bytes, the link's downlink carried {carried:.0}"
        )));
    }
    Ok(())
}

fn kbps(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.0} kbit/s"))
}

fn report(a: &BrowserCallArgs, s: &Summary) -> Result<(), CliError> {
    if a.json {
        return output::print_json(s);
    }
    let d = &s.downlink;
    let f = &s.browser;
    let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |x| format!("{x:.1} ms"));
    println!(
        "link {} ({} ms each way), {} s call, clip {}",
        s.link, s.delay_ms, s.duration_s, s.clip
    );
    // A wifi: link logs no delivery opportunities: no capacity to compare with.
    let capacity = if d.capacity_kbps > 0.0 {
        format!(
            " of {:.0} (utilisation {:.3})",
            d.capacity_kbps, d.utilization
        )
    } else {
        String::new()
    };
    println!(
        "link (downlink log): throughput {:.0} kbit/s{capacity}, queueing delay p50 {} p95 {}, loss {:.4}",
        d.throughput_kbps,
        ms(d.delay_p50_ms),
        ms(d.delay_p95_ms),
        s.downlink_loss
    );
    println!(
        "estimate (availableOutgoingBitrate): {} at 0.2 s, {} at 2 s, median {} from 10 s; 80% of the link after {}",
        kbps(f.estimate_at_0_2s_kbps),
        kbps(f.estimate_at_2s_kbps),
        kbps(f.estimate_median_10s_kbps),
        f.time_to_80pct_s
            .map_or_else(|| "-".into(), |t| format!("{t:.1} s"))
    );
    println!(
        "sender: {} sent ({} in the first 2 s, {} from 1 s to 2 s, median {} from 10 s), encoder target median {}, {} ({}), rtt median {}",
        kbps(f.send_kbps),
        kbps(f.send_first_2s_kbps),
        kbps(f.send_1s_to_2s_kbps),
        kbps(f.send_median_10s_kbps),
        kbps(f.target_median_10s_kbps),
        f.sent_resolution.as_deref().unwrap_or("-"),
        f.quality_limitation.as_deref().unwrap_or("-"),
        ms(f.rtt_median_ms)
    );
    println!(
        "receiver: {} received, {} frames decoded at {}, {} freezes ({:.1} s), jitter buffer {}, {} packets lost",
        kbps(f.receive_kbps),
        f.frames_decoded.unwrap_or(0.0),
        f.received_resolution.as_deref().unwrap_or("-"),
        f.freeze_count.unwrap_or(0.0),
        f.freezes_s.unwrap_or(0.0),
        ms(f.jitter_buffer_ms),
        f.packets_lost.unwrap_or(0.0)
    );
    Ok(())
}

fn write_out(out: &Path, s: &Summary, b: &signal::Board, logs: &Path) -> Result<(), CliError> {
    let mut dir = output::OutputDir::default();
    let json = serde_json::to_vec_pretty(s)
        .map_err(|e| CliError::Io(format!("cannot serialise the summary: {e}")))?;
    dir.add("summary.json", json);
    let csv = stats::csv(&b.sender, &b.receiver)
        .map_err(|e| CliError::Io(format!("cannot write stats.csv: {e}")))?;
    dir.add("stats.csv", csv);
    for name in ["uplink.log", "downlink.log"] {
        let bytes = std::fs::read(logs.join(name))
            .map_err(|e| CliError::Io(format!("cannot read the link's {name}: {e}")))?;
        dir.add(name, bytes);
    }
    dir.commit(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_links_have_a_rate() {
        assert_eq!(const_rate("const:2mbps"), Some(2000.0));
        assert_eq!(const_rate("steps:1mbps@0s"), None);
    }
}
