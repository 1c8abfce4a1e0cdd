//! The figures of one video run, from its frame log: what was on screen at each capture
//! instant ([`screen_of`], the displayed metric of [`wisp_core::video::display`]) and the run's
//! summary ([`VideoRun`]). Used by `wisp run --video`, `wisp recv --video` and the Alfalfa
//! reproduction alike.

use serde::Serialize;
use wisp_core::Duration;
use wisp_core::stats::quantile_sorted;
use wisp_core::video::display::{self, Displayed, Freezes, ScreenSample};
use wisp_core::video::log::VideoLog;

/// Pictures per second (the shipped clip's), where a run does not say.
pub const FPS: u32 = 25;

/// One scheme's video over one trace direction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VideoRun {
    pub scheme: &'static str,
    pub captured: u64,
    pub coded: u64,
    pub shown: u64,
    pub shown_share: f64,
    pub ssim_mean_db: f64,
    pub ssim_p5_db: f64,
    pub delay_p50_ms: f64,
    pub delay_p95_ms: f64,
    pub bitrate_kbps: f64,
    /// Intra frames after the first.
    pub intra: u64,
    /// Frames that arrived whole but were refused for a missing base.
    pub missing_base: u64,
    /// Freezes by libwebrtc's rule (Chrome's `freezeCount` / `totalFreezesDuration`).
    pub freezes: Freezes,
    /// The displayed metric: what is on screen at each capture instant.
    pub displayed: Displayed,
    /// How its SSIM was had: `measured` (decoded pictures), `model-approx` (the model codec's
    /// approximation) or `none` (delay only).
    pub displayed_quality: &'static str,
    /// (delay ms, SSIM dB) of every shown frame, for the quality-against-delay plot.
    #[serde(skip)]
    pub points: Vec<(f64, f64)>,
}

/// The screen at each capture instant of a run, and how its quality was had.
#[derive(Clone, Debug, PartialEq)]
pub struct Screen {
    pub samples: Vec<ScreenSample>,
    /// `measured`, `model-approx` or `none` (see [`VideoRun::displayed_quality`]).
    pub quality: &'static str,
    /// With measured quality: the model codec's approximation at each instant too (to see how
    /// far apart they are); empty otherwise.
    pub approx: Vec<Option<f64>>,
    /// The capture instant of picture 0.
    pub origin: wisp_core::Instant,
}

/// The screen at each of a run's capture instants (`fps` pictures/s): its quality measured on
/// the decoded pictures when the log kept them ([`VideoLog::keep_pictures`], VP8), the model's
/// approximation when the codec is the model, else none.
pub fn screen_of(log: &VideoLog, fps: u32) -> Screen {
    let frames = log.frames();
    let interval = Duration::from_nanos(1_000_000_000 / u64::from(fps.max(1)));
    let origin = display::origin(&frames, interval).unwrap_or_default();
    let quality = if log.codec_name().is_none_or(|c| c == "model") {
        "model-approx"
    } else if log.keeps_pictures() {
        "measured"
    } else {
        "none"
    };
    let samples =
        display::screen(
            &frames,
            log.captured(),
            origin,
            interval,
            &mut |f, k| match quality {
                "model-approx" => display::model_quality(f, k),
                "measured" => log.screen_ssim_db(f.state, k),
                _ => None,
            },
        );
    // Measured: the model's approximation beside it, to see how far apart they are.
    let approx = if quality == "measured" {
        samples
            .iter()
            .map(|s| {
                s.frame
                    .and_then(|i| display::model_quality(&frames[i], s.picture))
            })
            .collect()
    } else {
        vec![]
    };
    Screen {
        samples,
        quality,
        approx,
        origin,
    }
}

impl VideoRun {
    /// The figures of one run's frames (also `wisp recv`'s, from the frames it decoded), at the
    /// reproduction's [`FPS`].
    pub fn from_log(scheme: &'static str, log: &VideoLog) -> Self {
        Self::from_log_and_screen(scheme, log, FPS, &screen_of(log, FPS))
    }

    /// The same with the screen already computed ([`screen_of`]).
    pub fn from_log_and_screen(
        scheme: &'static str,
        log: &VideoLog,
        fps: u32,
        screen: &Screen,
    ) -> Self {
        let frames = log.frames();
        let shown: Vec<_> = frames.iter().filter(|f| f.display.is_some()).collect();
        let mut delay: Vec<f64> = shown
            .iter()
            .filter_map(|f| f.display.map(|d| d.saturating_duration_since(f.capture)))
            .map(|d| d.as_millis_f64())
            .collect();
        let points = shown
            .iter()
            .zip(&delay)
            .map(|(f, &d)| (d, f.ssim_db))
            .collect();
        let mut ssim: Vec<f64> = shown.iter().map(|f| f.ssim_db).collect();
        delay.sort_unstable_by(f64::total_cmp);
        ssim.sort_unstable_by(f64::total_cmp);
        let captured = log.captured();
        let bytes: usize = frames.iter().map(|f| f.bytes).sum();
        let secs = captured as f64 / f64::from(fps.max(1));
        VideoRun {
            scheme,
            captured,
            coded: frames.len() as u64,
            shown: shown.len() as u64,
            shown_share: shown.len() as f64 / captured.max(1) as f64,
            ssim_mean_db: if ssim.is_empty() {
                f64::NAN
            } else {
                ssim.iter().sum::<f64>() / ssim.len() as f64
            },
            ssim_p5_db: quantile_sorted(&ssim, 0.05).unwrap_or(f64::NAN),
            delay_p50_ms: quantile_sorted(&delay, 0.5).unwrap_or(f64::NAN),
            delay_p95_ms: quantile_sorted(&delay, 0.95).unwrap_or(f64::NAN),
            bitrate_kbps: if secs > 0.0 {
                bytes as f64 * 8.0 / secs / 1000.0
            } else {
                0.0
            },
            intra: frames.iter().filter(|f| f.intra).count() as u64,
            missing_base: log.missing_base(),
            freezes: display::freezes(&frames),
            displayed: display::summarize(&screen.samples, display::FROZEN),
            displayed_quality: screen.quality,
            points,
        }
    }
}
