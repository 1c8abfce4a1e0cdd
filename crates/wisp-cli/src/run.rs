//! `wisp run`: one scenario, its metrics, and optionally its files.

use crate::args::{self, SimOptions};
use crate::error::CliError;
use crate::output::{self, OutputDir};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use wisp_core::Duration;
use wisp_core::scheme::VideoForm;
use wisp_core::scheme::{ParamError, SchemeConfig};
use wisp_core::video::log::VideoLog;
use wisp_core::video::{InjectedCodecs, VideoCodec};
use wisp_sim::link::{LinkModel, LinkSpec};
use wisp_sim::queue::QueueSpec;
use wisp_sim::run::{RunReport, RunResult};
use wisp_sim::sim::{FlowSpec, Scenario};
use wisp_sim::wifi::link::WifiSpec;

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("link_choice").required(true).args(["trace", "link"]))]
pub struct RunArgs {
    /// The scheme: NAME[:KEY=VALUE,…] (see `wisp schemes`).
    #[arg(long, value_name = "SCHEME")]
    pub scheme: SchemeConfig,

    /// The data direction's link trace (Mahimahi format; `.rx` files are nanoseconds). Same as
    /// --link trace:FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    // The help lists the link kinds of wisp_sim's registry.
    #[arg(long, value_name = "SPEC", help = args::link_help(LINK_HELP))]
    pub link: Option<LinkSpec>,

    /// Trace of the feedback direction (e.g. the `.up` of a `.down` data trace). Without it the
    /// reverse path is the propagation delay only.
    #[arg(long, value_name = "FILE")]
    pub reverse_trace: Option<PathBuf>,

    /// Start this many ms into the traces (both directions), as when `wisp send` starts after
    /// `wisp link` began replaying them (its receiver reports the offset as `link_offset_ms`).
    #[arg(long, value_name = "MS", default_value = "0", value_parser = crate::args::sim_offset_ms, allow_hyphen_values = true)]
    pub trace_offset_ms: Duration,

    /// Sending rate of `cbr`, kbit/s (same as --scheme cbr:rate-kbps=N).
    #[arg(long, value_name = "KBPS", allow_hyphen_values = true)]
    pub rate_kbps: Option<String>,

    /// A scheme parameter, KEY=VALUE; repeatable.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,

    /// Number of flows of the scheme sharing the bottleneck, all from time 0.
    #[arg(long, value_name = "N", default_value = "1", value_parser = clap::value_parser!(u16).range(1..))]
    pub flows: u16,

    #[command(flatten)]
    pub sim: SimOptions,

    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also write run.json, timeseries.csv, packets.csv, controller.csv (each flow's target
    /// rate, window and delay target every 100 ms) and report.html into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// The clip to send (Y4M; its frame rate is the capture rate), for `alfalfa` and its
    /// variants. With `codec=model` (the default) sizes and quality come from the model codec,
    /// measured with VP8 on the shipped clip media/bigbuckbunny-qcif-3s.y4m; with `codec=vp8`
    /// (e.g. --scheme alfalfa:codec=vp8) libvpx codes the clip's pictures and the receiver
    /// decodes them, SSIM measured on the decoded pictures; `sprout`, `gcc` and `cbr` drive the
    /// same video layer with a conventional codec (docs/alfalfa.md). Prints one summary line
    /// (frames shown, SSIM, frame delay, and the displayed metric: what is on screen at each
    /// capture instant). With --out DIR also writes video.csv (per coded frame its state,
    /// source picture, capture and display time in ms, empty if never shown, bytes, SSIM in dB,
    /// base state, whether it was an intra frame after the first, and whether it arrived but
    /// was refused for a missing base, 0/1), display.csv (per capture instant) and video.json.
    #[arg(long, value_name = "CLIP")]
    pub video: Option<PathBuf>,

    /// Write the Y4M a viewer would have seen into FILE (with --video and a real codec,
    /// `codec=vp8`): one picture per capture instant at the clip's frame rate and size, the
    /// decoded picture on screen at that instant (the last one repeated while frozen; black
    /// before the first display). The model codec has no pixels: refused.
    #[arg(long, value_name = "FILE", requires = "video")]
    pub decoded: Option<PathBuf>,
}

/// Applies `--rate-kbps` and `--param` to the scheme.
pub fn apply_params(
    scheme: &mut SchemeConfig,
    rate_kbps: Option<&str>,
    params: &[String],
) -> Result<(), CliError> {
    if let Some(r) = rate_kbps {
        scheme.set_param("rate-kbps", r).map_err(|e| match e {
            ParamError::UnknownParam { scheme, .. } => {
                CliError::Input(format!("--rate-kbps does not apply to scheme `{scheme}`"))
            }
            e => CliError::Input(format!("--rate-kbps: {e}")),
        })?;
    }
    // All at once, so that cross checks (`min-kbps` ≤ `max-kbps`) see every value given.
    let mut given = vec![];
    for p in params {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| CliError::Input(format!("--param `{p}` is not KEY=VALUE")))?;
        given.push((k.trim(), v.trim()));
    }
    scheme
        .set_params(&given)
        .map_err(|e| CliError::Input(format!("--param: {e}")))?;
    Ok(())
}

/// Reads `clip` for `--video`, turns the scheme into its video form (`alfalfa` as it is;
/// `sprout`, `gcc`, `cbr` drive the same video layer with a conventional codec) and gives it a
/// log of its frames.
pub(crate) fn attach_video(
    scheme: &mut SchemeConfig,
    clip: &std::path::Path,
    flows: u16,
    log: VideoLog,
) -> Result<Arc<wisp_core::video::Clip>, CliError> {
    let Some(form) = VideoForm::of(scheme) else {
        return Err(CliError::Input(format!(
            "--video applies to schemes {}, not `{}`",
            VideoForm::SCHEMES,
            scheme.name()
        )));
    };
    if flows != 1 {
        return Err(CliError::Input("--video needs --flows 1".into()));
    }
    let parsed = Arc::new(read_clip(clip)?);
    let fps = clip_fps(&parsed, clip)?;
    let codecs = video_codecs(form.codec(), parsed.clone(), clip)?;
    *scheme = form.coding(fps, codecs, log);
    Ok(parsed)
}

/// The implementation of `codec` over `clip` (none for the model, which is built in): VP8's
/// encoders code the clip's pictures and its decoders measure SSIM against them. VP8 is bad input
/// in a build without the `vp8` feature ([`NO_VP8`]).
pub(crate) fn video_codecs(
    codec: VideoCodec,
    clip: Arc<wisp_core::video::Clip>,
    path: &std::path::Path,
) -> Result<Option<InjectedCodecs>, CliError> {
    match codec {
        VideoCodec::Model => Ok(None),
        VideoCodec::Vp8 => vp8_codecs(clip, path).map(Some),
    }
}

#[cfg(feature = "vp8")]
fn vp8_codecs(
    clip: Arc<wisp_core::video::Clip>,
    path: &std::path::Path,
) -> Result<InjectedCodecs, CliError> {
    let c = wisp_vpx::Vp8Codecs::new(clip, wisp_vpx::Vp8Options::default())
        .map_err(|e| CliError::Input(format!("--video {}: {e}", path.display())))?;
    Ok(InjectedCodecs(Arc::new(c)))
}

/// What a build without VP8 says when asked for it.
#[cfg_attr(feature = "vp8", allow(dead_code))]
pub(crate) const NO_VP8: &str = "VP8 (codec=vp8, wisp recv --video) needs libvpx, and this wisp \
     was built without it: install Debian's libvpx-dev and pkg-config, then build with \
     `cargo build --release -p wisp-cli --features vp8`";

#[cfg(not(feature = "vp8"))]
fn vp8_codecs(
    _clip: Arc<wisp_core::video::Clip>,
    _path: &std::path::Path,
) -> Result<InjectedCodecs, CliError> {
    Err(CliError::Input(NO_VP8.into()))
}

/// The frame rate of `clip` (read from `path`), rounded: the video layer's range is 1 to 120
/// frames/s.
pub(crate) fn clip_fps(
    clip: &wisp_core::video::Clip,
    path: &std::path::Path,
) -> Result<u32, CliError> {
    let fps = clip.fps().round();
    if !(1.0..=120.0).contains(&fps) {
        return Err(CliError::Input(format!(
            "--video {}: {fps} frames/s, expected 1 to 120",
            path.display()
        )));
    }
    Ok(fps as u32)
}

/// Reads a Y4M clip for `--video` (a truncated or unsupported clip is bad input).
pub(crate) fn read_clip(clip: &std::path::Path) -> Result<wisp_core::video::Clip, CliError> {
    let bytes = wisp_sim::limits::read_capped(clip, wisp_sim::limits::MAX_CLIP_BYTES, "clip")
        .map_err(|e| CliError::Input(format!("--video {}: {e}", clip.display())))?;
    wisp_core::video::y4m::parse(&bytes)
        .map_err(|e| CliError::Input(format!("--video {}: {e}", clip.display())))
}

/// One line of a video run's figures (`wisp run --video`, `wisp recv`): `v`, the run's figures
/// from `log`, and the log's counters. (`sender`: the log has the sender's frames, so
/// overshoot is known.)
pub(crate) fn video_summary(log: &VideoLog, v: &wisp_sim::video::VideoRun, sender: bool) -> String {
    let (over, over_bytes) = log.overshoot();
    let overshoot = if sender {
        format!(
            ", {over} frames over budget ({over_bytes} bytes), {} held then sent, {} skipped \
             on a closed window",
            log.held_sent(),
            log.skipped_closed()
        )
    } else {
        String::new()
    };
    let d = &v.displayed;
    let quality = match v.displayed_quality {
        "none" => "not measured (decoded pictures not kept)".to_string(),
        q => format!(
            "SSIM mean {:.2} dB (p5 {:.2}; {})",
            d.ssim_mean_db,
            d.ssim_p5_db,
            if q == "measured" {
                "measured on the decoded pictures"
            } else {
                "the model codec's approximation"
            }
        ),
    };
    format!(
        "{} of {} pictures shown ({} coded), mean SSIM {:.2} dB (p5 {:.2}), frame delay p50 {:.1} ms p95 {:.1} ms, {:.0} kbit/s; {} intra frames after the first, {} key frames decoded, {} refused for a missing base, {} bad pieces{overshoot}; displayed at each capture instant: delay p50 {:.1} ms p95 {:.1} ms, {:.1}% of instants frozen > {:.0} ms, {quality}, {} instants before the first display",
        v.shown,
        v.captured,
        v.coded,
        v.ssim_mean_db,
        v.ssim_p5_db,
        v.delay_p50_ms,
        v.delay_p95_ms,
        v.bitrate_kbps,
        v.intra,
        log.key_frames(),
        v.missing_base,
        log.bad_pieces(),
        d.delay_p50_ms,
        d.delay_p95_ms,
        100.0 * d.frozen_share,
        d.frozen_ms,
        d.blank,
    )
}

/// The Y4M a viewer would have seen (`--decoded`): the header of `clip` (its size and frame
/// rate) and, per capture instant of `screen`, the decoded picture on screen then; before the
/// first display the black picture (Y 16, U and V 128) the codec's state 0 codes. Errors if a
/// frame on screen has no decoded picture (pictures not kept, or the model codec).
pub(crate) fn decoded_y4m(
    log: &VideoLog,
    screen: &wisp_sim::video::Screen,
    clip: &wisp_core::video::Clip,
) -> Result<Vec<u8>, CliError> {
    use wisp_core::video::{Picture, y4m};
    let frames = log.frames();
    let black = Picture::filled(clip.width, clip.height, 16, 128, 128);
    let mut out = y4m::header(clip.width, clip.height, clip.fps_num, clip.fps_den);
    out.reserve(screen.samples.len() * (Picture::frame_bytes(clip.width, clip.height) + 6));
    let mut cache: Option<(wisp_core::video::StateId, Picture)> = None;
    for s in &screen.samples {
        let Some(f) = s.frame.and_then(|i| frames.get(i)) else {
            y4m::push_frame(&mut out, &black);
            continue;
        };
        if cache.as_ref().is_none_or(|(st, _)| *st != f.state) {
            let p = log.picture(f.state).ok_or_else(|| {
                CliError::Input(format!(
                    "--decoded: no decoded picture of state {} (the codec has no pixels: give a real codec, codec=vp8)",
                    f.state.0
                ))
            })?;
            if (p.width, p.height) != (clip.width, clip.height) {
                return Err(CliError::Input(format!(
                    "--decoded: state {} decoded at {}x{}, the clip is {}x{}",
                    f.state.0, p.width, p.height, clip.width, clip.height
                )));
            }
            cache = Some((f.state, p));
        }
        if let Some((_, p)) = &cache {
            y4m::push_frame(&mut out, p);
        }
    }
    Ok(out)
}

/// Writes `bytes` to `path` atomically (a temporary name renamed into place, as
/// [`OutputDir::commit`] does).
pub(crate) fn write_file(path: &std::path::Path, bytes: Vec<u8>) -> Result<(), CliError> {
    let name = path
        .file_name()
        .ok_or_else(|| CliError::Input(format!("`{}` is not a file name", path.display())))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let mut files = OutputDir::default();
    files.add(name, bytes);
    files.commit(dir)
}

/// display.csv: the screen at each capture instant (times in ms after `origin`): the picture
/// index of the instant, the frame on screen (state, its source picture; empty before the first
/// display), the displayed delay and SSIM against the current source (empty if unknown), and
/// with measured SSIM the model codec's approximation beside it.
pub(crate) fn display_csv(
    screen: &wisp_sim::video::Screen,
    frames: &[wisp_core::video::log::FrameRecord],
    origin: wisp_core::Instant,
) -> Result<Vec<u8>, CliError> {
    let err = |e: csv::Error| CliError::Io(format!("cannot write display.csv: {e}"));
    let mut w = csv::Writer::from_writer(vec![]);
    let approx = !screen.approx.is_empty();
    let mut header = vec!["picture", "t_ms", "state", "source", "delay_ms", "ssim_db"];
    if approx {
        header.push("model_approx_ssim_db");
    }
    w.write_record(&header).map_err(err)?;
    let opt = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.3}"));
    for (i, s) in screen.samples.iter().enumerate() {
        let f = s.frame.and_then(|i| frames.get(i));
        let mut row = vec![
            s.picture.to_string(),
            format!(
                "{:.3}",
                s.at.saturating_duration_since(origin).as_millis_f64()
            ),
            f.map_or(String::new(), |f| f.state.0.to_string()),
            f.map_or(String::new(), |f| f.source.to_string()),
            opt(s.delay.map(|d| d.as_millis_f64())),
            opt(s.ssim_db),
        ];
        if approx {
            row.push(opt(screen.approx.get(i).copied().flatten()));
        }
        w.write_record(&row).map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| CliError::Io(format!("cannot write display.csv: {e}")))
}

/// video.csv: one row per coded frame, times in ms after `origin`.
pub(crate) fn video_csv(log: &VideoLog, origin: wisp_core::Instant) -> Result<Vec<u8>, CliError> {
    let err = |e: csv::Error| CliError::Io(format!("cannot write video.csv: {e}"));
    let mut w = csv::Writer::from_writer(vec![]);
    w.write_record([
        "state",
        "source",
        "capture_ms",
        "display_ms",
        "bytes",
        "ssim_db",
        "base",
        "intra",
        "missing_base",
    ])
    .map_err(err)?;
    for f in log.frames() {
        w.write_record([
            f.state.0.to_string(),
            f.source.to_string(),
            format!("{:.3}", (f.capture - origin).as_millis_f64()),
            f.display.map_or(String::new(), |d| {
                format!("{:.3}", (d - origin).as_millis_f64())
            }),
            f.bytes.to_string(),
            format!("{:.3}", f.ssim_db),
            f.base.0.to_string(),
            u8::from(f.intra).to_string(),
            u8::from(f.missing_base).to_string(),
        ])
        .map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| CliError::Io(format!("cannot write video.csv: {e}")))
}

/// Builds a scenario from the shared options.
pub fn scenario(
    forward: LinkModel,
    reverse: Option<LinkModel>,
    flows: Vec<FlowSpec>,
    sim: &SimOptions,
    seed: u64,
) -> Scenario {
    sim.run_options().scenario(forward, reverse, flows, seed)
}

/// video.csv, display.csv and video.json of a video run.
fn add_video_files(
    files: &mut OutputDir,
    log: &VideoLog,
    screen: &wisp_sim::video::Screen,
    v: &wisp_sim::video::VideoRun,
) -> Result<(), CliError> {
    files.add("video.csv", video_csv(log, wisp_core::Instant::ZERO)?);
    files.add(
        "display.csv",
        display_csv(screen, &log.frames(), wisp_core::Instant::ZERO)?,
    );
    let json = serde_json::to_vec_pretty(v)
        .map_err(|e| CliError::Io(format!("cannot write video.json: {e}")))?;
    files.add("video.json", json);
    Ok(())
}

/// `--video` and `--decoded`: the scheme turned into its video form coding the clip, its frame
/// log, the clip `--decoded` compares against (refused before the run for a codec without
/// pixels) and the capture rate.
#[allow(clippy::type_complexity)]
fn video_setup(
    a: &RunArgs,
    scheme: &mut SchemeConfig,
) -> Result<(Option<VideoLog>, Option<Arc<wisp_core::video::Clip>>, u32), CliError> {
    let (video, clip) = match &a.video {
        Some(path) => {
            let log = VideoLog::default();
            let clip = attach_video(scheme, path, a.flows, log.clone())?;
            (Some(log), Some(clip))
        }
        None => (None, None),
    };
    let form = VideoForm::already(scheme);
    // --decoded writes pixels: refused before the run for a codec without them.
    let decoded_clip = match (&a.decoded, clip, &form) {
        (Some(_), Some(clip), Some(f)) if f.codec() != VideoCodec::Model => Some(clip),
        (Some(_), _, Some(f)) => {
            return Err(CliError::Input(format!(
                "--decoded needs a real codec: codec={} has no pixels (give --scheme {}:codec=vp8)",
                f.codec().name(),
                scheme.name()
            )));
        }
        (Some(_), _, None) => {
            return Err(CliError::Input("--decoded needs --video CLIP".into()));
        }
        (None, ..) => None,
    };
    // The displayed metric measures the picture on screen against later source pictures: a
    // real codec's decoded pictures are kept for it.
    let fps = match &form {
        Some(f) => {
            if let Some(log) = &video
                && f.codec() != VideoCodec::Model
            {
                log.keep_pictures();
            }
            f.fps()
        }
        None => wisp_sim::video::FPS,
    };
    Ok((video, decoded_clip, fps))
}

/// `--link`'s help, around the registry's kinds: what `wisp run` does with the Wi-Fi medium.
const LINK_HELP: [&str; 2] = [
    "The data direction's link model: ",
    ". With wifi:…, the flows' data goes from the AP to station 1 among the spec's contenders \
     and their feedback back over the medium; --queue, --reverse-trace and --trace-offset-ms \
     do not apply; 60 s unless --duration-s.",
];

pub fn run(a: RunArgs) -> Result<(), CliError> {
    if let Some(dir) = &a.out {
        output::check_out_dir("--out", dir)?;
    }
    if let Some(path) = &a.decoded {
        output::check_out_file("--decoded", path)?;
    }
    let mut scheme = a.scheme.clone();
    apply_params(&mut scheme, a.rate_kbps.as_deref(), &a.params)?;
    if let Some(form) = VideoForm::already(&scheme)
        && form.codec() != VideoCodec::Model
        && a.video.is_none()
    {
        return Err(CliError::Input(format!(
            "--scheme {scheme}: codec={} codes a clip: give --video CLIP",
            form.codec().name()
        )));
    }
    let spec = args::chosen_link(a.trace.as_deref(), a.link.as_ref())
        .unwrap_or_else(|| unreachable!("clap requires --trace or --link"));
    if let Some(w) = spec.medium() {
        return run_wifi(&a, w, scheme);
    }
    let mut forward = spec.load()?;
    let mut reverse = match &a.reverse_trace {
        Some(p) => Some(args::trace_link(p).load()?),
        None => None,
    };
    if !a.trace_offset_ms.is_zero() {
        forward = forward.trace_shifted(a.trace_offset_ms).ok_or_else(|| {
            CliError::Input(format!(
                "--trace-offset-ms needs a trace link, not `{}`",
                forward.name()
            ))
        })?;
        reverse = reverse.and_then(|r| r.trace_shifted(a.trace_offset_ms));
    }
    a.sim.check_window(&forward)?;
    let (video, decoded_clip, fps) = video_setup(&a, &mut scheme)?;
    let seed = args::seed(a.sim.seed)?;
    let flows = (0..a.flows)
        .map(|_| FlowSpec::new(scheme.clone()))
        .collect();
    let scenario = scenario(forward, reverse, flows, &a.sim, seed);
    let pb = output::progress_bar(1000, "simulating");
    let mut progress = |f: f64| pb.set_position((f * 1000.0) as u64);
    let result = wisp_sim::run::run(&scenario, Some(&mut progress))?;
    pb.finish_and_clear();
    let screen = video
        .as_ref()
        .map(|log| wisp_sim::video::screen_of(log, fps));
    let figures = match (&video, &screen) {
        (Some(log), Some(screen)) => {
            let v = wisp_sim::video::VideoRun::from_log_and_screen(scheme.name(), log, fps, screen);
            say!("wisp run: video: {}", video_summary(log, &v, true));
            Some(v)
        }
        _ => None,
    };
    // Made before anything is written, so that an error leaves no file.
    let decoded = match (&decoded_clip, &video, &screen) {
        (Some(clip), Some(log), Some(screen)) => Some(decoded_y4m(log, screen, clip)?),
        _ => None,
    };
    if let Some(dir) = &a.out {
        let mut files = write_run_files(&result, &result.report)?;
        if let (Some(log), Some(screen), Some(v)) = (&video, &screen, &figures) {
            add_video_files(&mut files, log, screen, v)?;
        }
        files.commit(dir)?;
    }
    if let (Some(path), Some(bytes)) = (&a.decoded, decoded) {
        write_file(path, bytes)?;
    }
    if a.json {
        output::print_json(&result.report)
    } else {
        print_table(&result.report)
    }
}

/// `wisp run --link wifi:SPEC`: the measured flows from the AP to station 1 of the medium.
fn run_wifi(a: &RunArgs, spec: &WifiSpec, scheme: SchemeConfig) -> Result<(), CliError> {
    if a.video.is_some() {
        return Err(CliError::Input(
            "--video does not apply to a wifi link (yet)".into(),
        ));
    }
    if a.reverse_trace.is_some() {
        return Err(CliError::Input(
            "--reverse-trace does not apply to a wifi link (the feedback crosses the medium)"
                .into(),
        ));
    }
    if !a.trace_offset_ms.is_zero() {
        return Err(CliError::Input(
            "--trace-offset-ms needs a trace link, not a wifi link".into(),
        ));
    }
    if a.sim.queue != QueueSpec::Infinite {
        return Err(CliError::Input(
            "--queue does not apply to a wifi link (give the medium's queue=N in the spec)".into(),
        ));
    }
    let options = a.sim.run_options();
    let duration = options.duration.unwrap_or(Duration::from_secs(60));
    if options.warmup >= duration {
        return Err(CliError::Input(format!(
            "--warmup-s ({} s) must be shorter than the run ({} s)",
            options.warmup.as_secs_f64(),
            duration.as_secs_f64()
        )));
    }
    let seed = args::seed(a.sim.seed)?;
    let flows = (0..a.flows)
        .map(|_| FlowSpec::new(scheme.clone()))
        .collect();
    let pb = output::progress_bar(1000, "simulating");
    let mut progress = |f: f64| pb.set_position((f * 1000.0) as u64);
    let result = wisp_sim::run::run_wifi(spec, &options, flows, seed, Some(&mut progress))?;
    pb.finish_and_clear();
    if let Some(dir) = &a.out {
        write_run_files(&result, &result.report)?.commit(dir)?;
    }
    if a.json {
        output::print_json(&result.report)
    } else {
        print_table(&result.report)
    }
}

/// The files of `wisp run --out` (and `wisp sim --out`): `report` as run.json, then the series,
/// the packets, the controllers' samples and the HTML report of `r`.
pub fn write_run_files(
    r: &RunResult,
    report: &impl serde::Serialize,
) -> Result<OutputDir, CliError> {
    let mut out = OutputDir::default();
    let json = serde_json::to_vec_pretty(report).map_err(|e| CliError::Io(e.to_string()))?;
    out.add("run.json", json);
    out.add("timeseries.csv", timeseries_csv(r)?);
    let mut packets = Vec::new();
    r.log
        .write_csv(&mut packets)
        .map_err(|e| CliError::Io(e.to_string()))?;
    out.add("packets.csv", packets);
    out.add(
        "controller.csv",
        wisp_report::controller_csv(&r.log.sender_samples),
    );
    out.add("report.html", wisp_report::run_html(r));
    Ok(out)
}

fn timeseries_csv(r: &RunResult) -> Result<Vec<u8>, CliError> {
    let err = |e: csv::Error| CliError::Io(format!("cannot write timeseries.csv: {e}"));
    let s = &r.series;
    let mut w = csv::Writer::from_writer(vec![]);
    let mut header = vec!["t_s".to_string(), "capacity_kbps".to_string()];
    for i in 0..s.flows.len() {
        for col in [
            "send_kbps",
            "throughput_kbps",
            "delay_ms",
            "queue_delay_ms",
            "queue_delay_max_ms",
        ] {
            header.push(format!("f{i}_{col}"));
        }
    }
    w.write_record(&header).map_err(err)?;
    let f3 = |x: f64| format!("{x:.3}");
    let opt = |v: Option<f64>| v.map(f3).unwrap_or_default();
    for (b, t) in s.t_s.iter().enumerate() {
        let mut row = vec![f3(*t), f3(s.capacity_kbps[b])];
        for f in &s.flows {
            row.extend([
                f3(f.send_kbps[b]),
                f3(f.throughput_kbps[b]),
                opt(f.delay_ms[b]),
                opt(f.queue_delay_ms[b]),
                opt(f.queue_delay_max_ms[b]),
            ]);
        }
        w.write_record(&row).map_err(err)?;
    }
    w.into_inner()
        .map_err(|e| CliError::Io(format!("cannot write timeseries.csv: {e}")))
}

pub fn print_table(r: &RunReport) -> Result<(), CliError> {
    println!(
        "{} on {} (reverse: {}; {} ms each way; queue {}; loss {}, reverse {}; {:.1} s, warm-up {:.1} s; seed {})",
        r.scheme,
        r.trace,
        r.reverse,
        r.delay_ms,
        r.queue,
        r.loss,
        r.reverse_loss,
        r.duration_s,
        r.warmup_s,
        r.seed
    );
    let o = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"));
    println!(
        "{:>4} {:>12} {:>12} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "flow",
        "thr kbit/s",
        "cap kbit/s",
        "util",
        "p50 ms",
        "p95 ms",
        "e2e95 ms",
        "ideal ms",
        "self ms",
        "loss"
    );
    for f in &r.flows {
        println!(
            "{:>4} {:>12.1} {:>12.1} {:>6.3} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7.4}",
            f.flow,
            f.throughput_kbps,
            f.capacity_kbps,
            f.utilization,
            o(f.delay_p50_ms),
            o(f.delay_p95_ms),
            o(f.e2e_delay_p95_ms),
            o(f.ideal_e2e_delay_p95_ms),
            o(f.self_inflicted_delay_ms),
            f.loss_rate
        );
    }
    Ok(())
}
