//! `wisp send` and `wisp recv`: one flow of a scheme over real UDP.

use crate::args::{non_negative_ms, positive_secs};
use crate::error::CliError;
use crate::output;
use crate::run::apply_params;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use wisp_core::scheme::{SchemeConfig, VideoForm};
use wisp_core::video::log::{VideoLog, WallClock};
use wisp_core::{Duration, Instant};
use wisp_net::report::KnownLink;
use wisp_net::session::{NetError, RecvOptions, SendOptions};
use wisp_sim::link::LinkSpec;

/// `wisp send --help`: output and examples.
pub const SEND_HELP: &str = "\
Runs the scheme's sender half for --duration-s (or until Ctrl-C/SIGTERM), then sends an RTCP BYE
so that `wisp recv` ends too. The receiver's feedback drives the scheme; a receiver that never
answers only leaves the feedback figures empty.

Output: one progress line a second on stderr (elapsed, sending rate, the scheme's target, RTT,
loss), then a summary line. With --json, one object on stdout: role, scheme, to, and flows[0]
with send_rate_kbps, packets_sent, bytes_sent, rtt_p50_ms, rtt_p95_ms, loss_rate,
pacing_late_p50_us/p99/max (how late the sender's timer woke), probe_packets and
probe_late_p50_us/p99/max (the probe and padding packets a scheme such as gcc sends outside its
rate, and how late they left after the instant its timer asked for), feedback_messages,
malformed_packets, foreign_packets; video schemes add video_coding_ms_mean and
video_frames_coded.

Examples:
  wisp recv --listen 0.0.0.0:9000 --json                    # on the receiving host, then:
  wisp send --scheme cbr --rate-kbps 2000 --to HOST:9000 --duration-s 30
  wisp send --scheme sprout --to HOST:9000 --duration-s 60 --json
  wisp send --scheme alfalfa:codec=vp8 --video media/bigbuckbunny-qcif-3s.y4m --to HOST:9000";

/// `wisp recv --help`: output and examples.
pub const RECV_HELP: &str = "\
Waits for a sender (it says where it listens), runs the receiver half of the scheme the sender
announces and answers with its feedback. It ends at the sender's BYE, --duration-s after the first
packet, --idle-timeout-s after the last one, or on Ctrl-C/SIGTERM (the summary is still printed);
before the first packet it waits until interrupted. Malformed datagrams are counted and dropped.
The peer is the source of the first valid wisp media packet; datagrams from any other address or
SSRC are then counted as foreign and dropped (a stray datagram cannot take the session over; RTP
here is unauthenticated, as plain RTP: see docs/real-network.md).

Output: one progress line a second on stderr (elapsed, rate, one-way delay, loss), then a summary
line. With --json, one object on stdout: role, scheme, listen, peer, and flows[0] with
throughput_kbps, delay_p50_ms, delay_p95_ms, e2e_delay_p95_ms, loss_rate, jitter_ms,
packets_delivered, packets_lost, malformed_packets, foreign_packets, feedback_packets; with a known link (--link,
--trace) also capacity_kbps, utilization, ideal_e2e_delay_p95_ms and self_inflicted_delay_ms.
One-way delays need the two clocks synchronised (the same host, or `wisp link`): flows[0].clock
says which.

Examples:
  wisp recv --listen 0.0.0.0:9000 --json
  sudo wisp link --downlink traces/cellular/Verizon-LTE-short.down \\
       --uplink traces/cellular/Verizon-LTE-short.up -- \\
       wisp recv --listen 0.0.0.0:9000 --trace traces/cellular/Verizon-LTE-short.down --json
  wisp recv --listen 0.0.0.0:9000 --video media/bigbuckbunny-qcif-3s.y4m --out run \\
       --decoded run/shown.y4m           # with `wisp send --scheme alfalfa:codec=vp8 --video …`";

#[derive(Args, Debug)]
pub struct SendArgs {
    /// The scheme: NAME[:KEY=VALUE,…] (see `wisp schemes`).
    #[arg(long, value_name = "SCHEME")]
    pub scheme: SchemeConfig,

    /// Where `wisp recv` listens.
    #[arg(long, value_name = "HOST:PORT")]
    pub to: String,

    /// Sending rate of `cbr`, kbit/s (same as --scheme cbr:rate-kbps=N).
    #[arg(allow_hyphen_values = true, long, value_name = "KBPS")]
    pub rate_kbps: Option<String>,

    /// A scheme parameter, KEY=VALUE; repeatable.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,

    /// How long to send.
    #[arg(allow_hyphen_values = true, long, value_name = "S", default_value = "30", value_parser = positive_secs)]
    pub duration_s: Duration,

    /// Interval of the RTCP sender reports.
    #[arg(allow_hyphen_values = true, long, value_name = "MS", default_value = "1000", value_parser = positive_ms)]
    pub rtcp_interval_ms: Duration,

    /// Busy-wait this many µs before each send instead of sleeping (more precise pacing, more
    /// CPU).
    #[arg(allow_hyphen_values = true, long, value_name = "US", default_value = "50", value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub spin_us: u32,

    /// Mark data packets with this DSCP (0–63), e.g. 46 (EF) for the voice class of `wisp link
    /// --wmm`.
    #[arg(allow_hyphen_values = true, long, value_name = "DSCP", value_parser = clap::value_parser!(u8).range(0..=63))]
    pub dscp: Option<u8>,

    /// Seed of the flow's random streams, e.g. a media source's frame sizes (default:
    /// $WISP_SEED, else 1): the same seed as `wisp run` gives the same traffic.
    #[arg(allow_hyphen_values = true, long, value_name = "N")]
    pub seed: Option<u64>,

    /// The clip to send with `alfalfa` (or `sprout`, `gcc`, `cbr`: the same video layer with a
    /// conventional codec), as `wisp run --video`: its frame rate is the capture rate; sizes and
    /// quality come from the model codec, or with `codec=vp8` (e.g. --scheme alfalfa:codec=vp8)
    /// from libvpx coding the clip (then give `wisp recv` the same clip with --video); each
    /// packet carries its piece of the diff.
    #[arg(long, value_name = "CLIP")]
    pub video: Option<PathBuf>,

    /// Print one JSON summary on stdout at the end.
    #[arg(long)]
    pub json: bool,

    /// Write controller.csv into DIR at the end: the scheme's target rate, window and delay
    /// target every 100 ms, columns as `wisp run --out`'s, `t_s` counted from the session's
    /// start (for `gcc`, its bandwidth estimate as a browser's `availableOutgoingBitrate`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RecvArgs {
    /// Address to listen on, e.g. 0.0.0.0:9000.
    #[arg(long, value_name = "ADDR")]
    pub listen: String,

    /// The scheme whose receiver half to run (default: the one the sender announces).
    #[arg(long, value_name = "SCHEME")]
    pub scheme: Option<SchemeConfig>,

    /// Stop this many seconds after the first packet (default: at the sender's BYE).
    #[arg(allow_hyphen_values = true, long, value_name = "S", value_parser = positive_secs)]
    pub duration_s: Option<Duration>,

    /// Stop when no packet arrived for this long (counted from the last packet: before the first
    /// one, recv waits until interrupted).
    #[arg(allow_hyphen_values = true, long, value_name = "S", default_value = "10", value_parser = positive_secs)]
    pub idle_timeout_s: Duration,

    /// Interval of the RTCP receiver reports.
    #[arg(allow_hyphen_values = true, long, value_name = "MS", default_value = "1000", value_parser = positive_ms)]
    pub rtcp_interval_ms: Duration,

    /// The data direction's link, if known (e.g. the --downlink of `wisp link`): adds capacity,
    /// utilisation, and the ideal sender's and self-inflicted delay to the summary.
    #[arg(long, value_name = "SPEC")]
    pub link: Option<LinkSpec>,

    /// Same as --link trace:FILE.
    #[arg(long, value_name = "FILE", conflicts_with = "link")]
    pub trace: Option<PathBuf>,

    /// One-way propagation delay of the known link, ms.
    #[arg(allow_hyphen_values = true, long, value_name = "MS", default_value = "20", value_parser = non_negative_ms)]
    pub delay_ms: Duration,

    /// When the known link's trace started, in CLOCK_MONOTONIC ns (default: $WISP_LINK_EPOCH_NS,
    /// which `wisp link` sets for its command). --link and --trace need one of the two.
    #[arg(allow_hyphen_values = true, long, value_name = "NS")]
    pub link_epoch_ns: Option<u64>,

    /// Receive a foreign RTP stream (a WebRTC sender with send-side bandwidth estimation, e.g.
    /// pion or libwebrtc) instead of a wisp flow: read only the transport-wide sequence number
    /// (RTP header extension with this one-byte id, default 2; URI
    /// `http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`) and answer
    /// with transport-wide congestion control feedback (RTCP RTPFB FMT 15) every 50 ms. No
    /// scheme runs; --scheme, --link and --trace do not apply.
    #[arg(long, value_name = "EXT_ID", num_args = 0..=1, default_missing_value = "2",
          value_parser = clap::value_parser!(u8).range(1..=14),
          conflicts_with_all = ["scheme", "link", "trace"])]
    pub twcc: Option<u8>,

    /// Run Ping-Pair (CoNEXT'17 §5) against this gateway (IPv4) during the flow; with
    /// `--scheme kwikr` each valid pair's cross-traffic delay, after the receiver's own
    /// sandwiched packets are taken out, feeds eq. (3). Needs ping sockets or CAP_NET_RAW.
    #[arg(long, value_name = "ADDR", conflicts_with = "twcc")]
    pub pingpair_target: Option<String>,

    /// Time between Ping-Pairs, ms (Kwikr: 500).
    #[arg(allow_hyphen_values = true, long, value_name = "MS", default_value = "500", value_parser = positive_ms,
          requires = "pingpair_target")]
    pub pingpair_interval_ms: Duration,

    /// The Wi-Fi MAC rate R of the downlink, Mbit/s, for T_a = n_a (s_a / R + t).
    #[arg(
        allow_hyphen_values = true,
        long,
        value_name = "MBPS",
        default_value_t = 54.0,
        requires = "pingpair_target"
    )]
    pub pingpair_mac_mbps: f64,

    /// Write video.csv and display.csv into DIR (a video flow: the frames decoded and the screen
    /// at each capture instant, columns as `wisp run --video`'s, times in ms after the first
    /// frame's capture).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// The clip the sender sends (Y4M), needed when it runs `codec=vp8`: the receiver's VP8
    /// decoder starts from the black state 0 coded at the clip's size, and the SSIM of each
    /// decoded picture is measured against its source picture in this clip. (The model codec
    /// needs none: its quality comes from the decoded quantiser.) A sender announcing the
    /// fingerprint of another clip is refused (exit 2).
    #[arg(long, value_name = "CLIP", conflicts_with = "twcc")]
    pub video: Option<PathBuf>,

    /// Write the Y4M a viewer would have seen into FILE (needs --video and a sender running a
    /// real codec, `codec=vp8`): one picture per capture instant at the clip's frame rate and
    /// size, the decoded picture on screen then (the last one repeated while frozen; black
    /// before the first display), as `wisp run --decoded`. If the sender's codec turns out to
    /// have no pixels (the model) nothing is written and the command exits 2.
    #[arg(long, value_name = "FILE", requires = "video")]
    pub decoded: Option<PathBuf>,

    /// Print one JSON summary on stdout at the end.
    #[arg(long)]
    pub json: bool,
}

fn positive_ms(s: &str) -> Result<Duration, String> {
    let d = non_negative_ms(s)?;
    if d.is_zero() {
        return Err("must be positive".into());
    }
    Ok(d)
}

/// Stops on SIGINT/SIGTERM (the summary is still printed).
pub fn stop_flag() -> Result<Arc<AtomicBool>, CliError> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| CliError::Io(format!("cannot install a signal handler: {e}")))?;
    }
    Ok(stop)
}

fn net_error(e: NetError) -> CliError {
    match e {
        NetError::Io { .. } => CliError::Io(e.to_string()),
        NetError::Build(_) | NetError::Input(_) => CliError::Input(e.to_string()),
    }
}

fn resolve(what: &str, s: &str) -> Result<SocketAddr, CliError> {
    wisp_net::resolve_host_port(s).map_err(|e| CliError::Input(format!("{what}: {e}")))
}

/// Clap's parser for a `HOST:PORT` option (`--server`): an address, or a name resolved now
/// ([`wisp_net::resolve_host_port`]); what does not resolve is bad input naming the option.
pub fn host_port(s: &str) -> Result<SocketAddr, String> {
    wisp_net::resolve_host_port(s)
}

/// Binds `addr` (UDP, and TCP with `tcp`) and lets go at once, so that a port in use, an
/// address this host does not have or a port it may not bind is bad input naming `flag` (exit
/// code 2), before anything runs.
pub fn check_listen(flag: &str, addr: SocketAddr, tcp: bool) -> Result<(), CliError> {
    let bad =
        |e: std::io::Error| CliError::Input(format!("{flag} {addr}: cannot listen there: {e}"));
    if tcp {
        // The TCP socket first: its port, if `addr` gives none, is the one to try in UDP.
        let l = std::net::TcpListener::bind(addr).map_err(bad)?;
        let port = l.local_addr().map_err(bad)?;
        std::net::UdpSocket::bind(port).map_err(bad)?;
    } else {
        std::net::UdpSocket::bind(addr).map_err(bad)?;
    }
    Ok(())
}

/// An epoch (CLOCK_MONOTONIC ns) must not lie in the future: every arrival would come before it
/// (a recording of nothing, a known link whose trace has not started). `what` names where it
/// came from.
pub fn check_epoch(what: &str, ns: u64) -> Result<(), CliError> {
    let now = wisp_net::Clock::new().now().as_nanos();
    if ns > now {
        return Err(CliError::Input(format!(
            "{what} {ns}: later than now on CLOCK_MONOTONIC ({now}); give the instant the trace \
             started (inside `wisp link`: $WISP_LINK_EPOCH_NS)"
        )));
    }
    Ok(())
}

/// A destination's port 0 reaches nobody: refused naming `flag`.
pub fn check_port(flag: &str, addr: SocketAddr) -> Result<(), CliError> {
    if addr.port() == 0 {
        return Err(CliError::Input(format!(
            "{flag} {addr}: port 0 is not a destination (give the port the server listens on)"
        )));
    }
    Ok(())
}

/// `wisp send`'s video layer: over sockets the encoder takes real time (no `encode-ms`),
/// measured around each frame's coding call so that `wisp run` can be given it. Attaches
/// `--video`'s clip (or the model codec's pictures) to `scheme`; returns the clip's fingerprint
/// and the log of the coding.
fn send_video(
    a: &SendArgs,
    scheme: &mut SchemeConfig,
) -> Result<(Option<u64>, Option<VideoLog>), CliError> {
    if let Some(form) = VideoForm::of(scheme)
        && (a.video.is_some() || VideoForm::already(scheme).is_some())
        && !form.encode_delay().is_zero()
    {
        return Err(CliError::Input(format!(
            "--scheme {}: encode-ms is the simulator's stand-in for the encoder's time; \
             over sockets the encoder takes its real time (give encode-ms=0)",
            form.name()
        )));
    }
    let clock = wisp_net::Clock::new();
    let coding_log = || {
        VideoLog::measuring_coding_time(WallClock(Arc::new(move || {
            clock
                .now()
                .saturating_duration_since(wisp_core::Instant::ZERO)
        })))
    };
    if let Some(clip) = &a.video {
        let log = coding_log();
        let parsed = crate::run::attach_video(scheme, clip, 1, log.clone())?;
        // Announced with the scheme: a receiver given another clip refuses the flow.
        return Ok((Some(wisp_core::video::y4m::fingerprint(&parsed)), Some(log)));
    }
    if let Some(form) = VideoForm::already(scheme) {
        // The model codec needs no clip: the scheme codes its model pictures, logged all the same.
        let log = coding_log();
        let fps = form.fps();
        *scheme = form.coding(fps, None, log.clone());
        return Ok((None, Some(log)));
    }
    Ok((None, None))
}

pub fn send(a: SendArgs) -> Result<(), CliError> {
    let mut scheme = a.scheme.clone();
    apply_params(&mut scheme, a.rate_kbps.as_deref(), &a.params)?;
    let (clip_fingerprint, video_log) = send_video(&a, &mut scheme)?;
    let to = resolve("--to", &a.to)?;
    check_port("--to", to)?;
    // Written after the flow: a folder that cannot take it is refused now.
    if let Some(dir) = &a.out {
        output::check_out_dir("--out", dir)?;
    }
    let mut o = SendOptions::new(scheme, to);
    o.duration = a.duration_s;
    o.rtcp_interval = a.rtcp_interval_ms;
    o.spin = Duration::from_micros(u64::from(a.spin_us));
    o.dscp = a.dscp;
    o.clip_fingerprint = clip_fingerprint;
    // Refuse a scheme that cannot run here before saying anything else.
    o.scheme
        .build(wisp_core::scheme::SchemeContext::new())
        .map_err(CliError::input)?;
    o.seed = crate::args::seed(a.seed)?;
    let stop = stop_flag()?;
    say!(
        "wisp send: {} to {} for {} s",
        o.scheme,
        to,
        o.duration.as_secs_f64()
    );
    let report =
        wisp_net::session::send(&o, &stop, &mut |l| say!("wisp send: {l}")).map_err(net_error)?;
    let f = &report.flows[0];
    say!(
        "wisp send: sent {} packets ({:.1} kbit/s); rtt p50 {} p95 {}; pacing late p50 {} p99 {}",
        f.packets_sent,
        f.send_rate_kbps,
        wisp_net::report::fmt_opt(f.rtt_p50_ms, "ms"),
        wisp_net::report::fmt_opt(f.rtt_p95_ms, "ms"),
        wisp_net::report::fmt_opt(f.pacing_late_p50_us, "us"),
        wisp_net::report::fmt_opt(f.pacing_late_p99_us, "us"),
    );
    if f.probe_packets > 0 {
        say!(
            "wisp send: {} probe and padding packets, late p50 {} p99 {} max {}",
            f.probe_packets,
            wisp_net::report::fmt_opt(f.probe_late_p50_us, "us"),
            wisp_net::report::fmt_opt(f.probe_late_p99_us, "us"),
            wisp_net::report::fmt_opt(f.probe_late_max_us, "us"),
        );
    }
    if let Some(dir) = &a.out {
        let mut files = output::OutputDir::default();
        files.add(
            "controller.csv",
            wisp_report::controller_csv(&report.samples),
        );
        files.commit(dir)?;
    }
    let coding = video_log.as_ref().and_then(|l| l.coding_time());
    if let (Some((mean, frames)), Some(log)) = (coding, &video_log) {
        say!(
            "wisp send: video: {frames} frames coded of {} pictures captured ({} held then sent, \
             {} skipped on a closed window), mean coding time {:.3} ms a frame (wall clock \
             around the coding call; `wisp run --scheme …:encode-ms={:.1}` charges it in the \
             simulator)",
            log.captured(),
            log.held_sent(),
            log.skipped_closed(),
            mean.as_secs_f64() * 1e3,
            mean.as_secs_f64() * 1e3
        );
    }
    if a.json {
        /// `wisp send --json`: the session's report and the video layer's coding time.
        #[derive(serde::Serialize)]
        struct SendJson<'a> {
            #[serde(flatten)]
            report: &'a wisp_net::report::SenderReport,
            /// Mean wall-clock time of a coded frame's coding call, ms (video schemes).
            video_coding_ms_mean: Option<f64>,
            video_frames_coded: Option<u64>,
        }
        output::print_json(&SendJson {
            report: &report,
            video_coding_ms_mean: coding.map(|(m, _)| m.as_secs_f64() * 1e3),
            video_frames_coded: coding.map(|(_, n)| n),
        })?;
    }
    Ok(())
}

/// `wisp recv --pingpair-target` and its settings.
fn pingpair_of(a: &RecvArgs) -> Result<Option<wisp_net::session::PingPairRecv>, CliError> {
    let Some(t) = &a.pingpair_target else {
        return Ok(None);
    };
    let target = wisp_net::resolve_ipv4_host(t)
        .map_err(|e| CliError::Input(format!("--pingpair-target: {e}")))?;
    if !(a.pingpair_mac_mbps > 0.0 && a.pingpair_mac_mbps <= 1e5) {
        return Err(CliError::Input(format!(
            "--pingpair-mac-mbps: {} is out of range (above 0, at most 100000)",
            a.pingpair_mac_mbps
        )));
    }
    Ok(Some(wisp_net::session::PingPairRecv {
        target,
        interval: a.pingpair_interval_ms,
        tos_high: wisp_core::pingpair::TOS_HIGH,
        mac_rate: wisp_core::Bitrate::from_bps_f64(a.pingpair_mac_mbps * 1e6),
    }))
}

/// `wisp recv --link`/`--trace`: the link and the instant its trace started (`--link-epoch-ns`,
/// else `$WISP_LINK_EPOCH_NS`).
fn known_link(a: &RecvArgs) -> Result<Option<KnownLink>, CliError> {
    let Some(spec) = crate::args::chosen_link(a.trace.as_deref(), a.link.as_ref()) else {
        return Ok(None);
    };
    let link = spec.load()?;
    let epoch = match a.link_epoch_ns {
        Some(ns) => {
            check_epoch("--link-epoch-ns", ns)?;
            Some(ns)
        }
        None => match std::env::var("WISP_LINK_EPOCH_NS") {
            Ok(v) => {
                let ns = v.trim().parse().map_err(|_| {
                    CliError::Input(format!("WISP_LINK_EPOCH_NS `{v}` is not a number"))
                })?;
                check_epoch("WISP_LINK_EPOCH_NS", ns)?;
                Some(ns)
            }
            Err(_) => None,
        },
    };
    let epoch = epoch.ok_or_else(|| {
        CliError::Input(
            "--link needs the instant its trace started: --link-epoch-ns, or run inside `wisp link` (which sets $WISP_LINK_EPOCH_NS)"
                .into(),
        )
    })?;
    Ok(Some(KnownLink {
        link,
        delay: a.delay_ms,
        epoch: Instant::from_nanos(epoch),
    }))
}

pub fn recv(a: RecvArgs) -> Result<(), CliError> {
    let listen = resolve("--listen", &a.listen)?;
    check_listen("--listen", listen, false)?;
    // The outputs are written after the flow: a path that cannot take them is refused now,
    // not after a whole session (and not with --out written and --decoded failing).
    if let Some(dir) = &a.out {
        output::check_out_dir("--out", dir)?;
    }
    if let Some(f) = &a.decoded {
        output::check_out_file("--decoded", f)?;
    }
    if let Some(ext_id) = a.twcc {
        return recv_twcc(&a, listen, ext_id);
    }
    let mut o = RecvOptions::new(listen);
    o.scheme = a.scheme.clone();
    o.duration = a.duration_s;
    o.idle_timeout = a.idle_timeout_s;
    o.rtcp_interval = a.rtcp_interval_ms;
    let mut clip_read = None;
    let mut clip_rate = None;
    if let Some(clip) = &a.video {
        let parsed = Arc::new(crate::run::read_clip(clip)?);
        // The range `wisp send --video` takes: a clip it refuses cannot be the sender's.
        clip_rate = Some(crate::run::clip_fps(&parsed, clip)?);
        o.clip_fingerprint = Some(wisp_core::video::y4m::fingerprint(&parsed));
        o.video_codecs =
            crate::run::video_codecs(wisp_core::video::VideoCodec::Vp8, parsed.clone(), clip)?;
        clip_read = Some(parsed);
    }
    o.pingpair = pingpair_of(&a)?;
    o.link = known_link(&a)?;
    let stop = stop_flag()?;
    let report =
        wisp_net::session::recv(&o, &stop, &mut |l| say!("wisp recv: {l}")).map_err(net_error)?;
    let f = &report.flows[0];
    say!(
        "wisp recv: {} from {}: {} packets, {:.1} kbit/s, delay p50 {} p95 {}, e2e p95 {}, self-inflicted {}, loss {:.2}%{}",
        report.scheme,
        report.peer.as_deref().unwrap_or("-"),
        f.packets_delivered,
        f.throughput_kbps,
        wisp_net::report::fmt_opt(f.delay_p50_ms, "ms"),
        wisp_net::report::fmt_opt(f.delay_p95_ms, "ms"),
        wisp_net::report::fmt_opt(f.e2e_delay_p95_ms, "ms"),
        wisp_net::report::fmt_opt(f.self_inflicted_delay_ms, "ms"),
        f.loss_rate * 100.0,
        if f.malformed_packets > 0 {
            format!(", {} malformed datagrams dropped", f.malformed_packets)
        } else {
            String::new()
        }
    );
    recv_video(&a, &report, clip_read.as_deref(), clip_rate)?;
    if a.json {
        output::print_json(&report)?;
    }
    Ok(())
}

/// `wisp recv`'s video outputs of a flow that carried video: its summary line, `--out`'s
/// video.csv and display.csv, `--decoded`'s Y4M (against `clip`, `--video`'s, captured at
/// `clip_rate`).
fn recv_video(
    a: &RecvArgs,
    report: &wisp_net::report::ReceiverReport,
    clip: Option<&wisp_core::video::Clip>,
    clip_rate: Option<u32>,
) -> Result<(), CliError> {
    use wisp_sim::video::{FPS, screen_of};
    // The capture rate: the clip's (as the sender's), else the reproduction's.
    let fps = clip_rate.unwrap_or(FPS);
    let screen = report.video.as_ref().map(|log| screen_of(log, fps));
    if let (Some(log), Some(screen)) = (&report.video, &screen) {
        // Labelled with the scheme the sender announced.
        let scheme = report
            .scheme
            .parse::<SchemeConfig>()
            .map_or("video", |s| s.name());
        let v = wisp_sim::video::VideoRun::from_log_and_screen(scheme, log, fps, screen);
        say!(
            "wisp recv: video: {}",
            crate::run::video_summary(log, &v, false)
        );
    }
    // Made before anything is written, so that an error leaves no file.
    let decoded = match (&a.decoded, clip) {
        (Some(_), Some(clip)) => {
            let (Some(log), Some(screen)) = (&report.video, &screen) else {
                return Err(CliError::Input(format!(
                    "--decoded: the flow (`{}`) carried no video",
                    report.scheme
                )));
            };
            if log.codec_name().is_some_and(|c| c == "model") {
                return Err(CliError::Input(
                    "--decoded needs a real codec: the sender ran codec=model, which has no pixels"
                        .into(),
                ));
            }
            Some(crate::run::decoded_y4m(log, screen, clip)?)
        }
        _ => None,
    };
    if let Some(dir) = &a.out {
        let (Some(log), Some(screen)) = (&report.video, &screen) else {
            return Err(CliError::Input(format!(
                "--out: the flow (`{}`) carried no video (video.csv is written for alfalfa and its variants)",
                report.scheme
            )));
        };
        let origin = log
            .frames()
            .iter()
            .map(|f| f.capture)
            .min()
            .unwrap_or(Instant::ZERO);
        let mut files = output::OutputDir::default();
        files.add("video.csv", crate::run::video_csv(log, origin)?);
        files.add(
            "display.csv",
            crate::run::display_csv(screen, &log.frames(), origin)?,
        );
        files.commit(dir)?;
    }
    if let (Some(path), Some(bytes)) = (&a.decoded, decoded) {
        crate::run::write_file(path, bytes)?;
    }
    Ok(())
}

/// `wisp recv --twcc`: a foreign stream answered with transport-wide feedback.
fn recv_twcc(a: &RecvArgs, listen: SocketAddr, ext_id: u8) -> Result<(), CliError> {
    let mut o = wisp_net::twcc_recv::TwccRecvOptions::new(listen);
    o.ext_id = ext_id;
    o.duration = a.duration_s;
    o.idle_timeout = a.idle_timeout_s;
    let stop = stop_flag()?;
    say!("wisp recv: transport-wide feedback mode (extension id {ext_id})");
    let r =
        wisp_net::twcc_recv::recv(&o, &stop, &mut |l| say!("wisp recv: {l}")).map_err(net_error)?;
    say!(
        "wisp recv: {} packets from {} ({:.1} kbit/s), {} lost, {} feedback packets{}",
        r.packets_received,
        r.peer.as_deref().unwrap_or("-"),
        r.throughput_kbps,
        r.packets_lost,
        r.feedback_packets,
        if r.malformed_packets > 0 {
            format!(", {} malformed datagrams dropped", r.malformed_packets)
        } else {
            String::new()
        }
    );
    if a.json {
        output::print_json(&r)?;
    }
    Ok(())
}
