//! The displayed metric: what the viewer sees at each capture instant (Salsify's way of
//! scoring a video call: a skipped or lost picture leaves a stale one on screen, and that costs).
//!
//! Computed after a run from its frame log ([`FrameRecord`]s). At each capture instant
//! t_k = t_0 + k/fps (k = 0 … captured − 1, picture k of the source; t_0 the capture instant of
//! picture 0, [`origin`]), the picture **on screen** is that of the newest-state frame displayed
//! at or before t_k; before the first display nothing is on screen (a *blank* instant: counted
//! apart, given no value). Then:
//!
//! - **displayed delay** at t_k = t_k − the capture instant of the picture on screen (a freeze
//!   makes it grow by 1/fps an instant);
//! - **displayed quality** at t_k = SSIM (dB) of the picture on screen against source picture k
//!   (the current one; the clip loops, so picture k is the clip's k mod its length, as the
//!   schemes code it). With a real codec (VP8) it is measured on the decoded picture
//!   ([`crate::video::log::VideoLog::keep_pictures`]). The model codec has no pixels:
//!   [`model_quality`] is an approximation (below).
//!
//! [`summarize`] gives the delay's p50/p95, the share of instants whose picture is older than a
//! threshold (*frozen*, [`FROZEN`]: 200 ms), and the quality's mean and p5, over the instants
//! with a picture on screen.
//!
//! **The model codec's approximation** ([`model_quality`]): the picture on screen is a coded
//! version of source picture s at SSIM q (the frame's coded quality, dB); against source
//! picture k ≠ s its distortion 1 − SSIM is taken as the sum of the coding's and the two source
//! pictures' (1 − SSIM(s, k), from a table of the shipped clip measured once with the codec's
//! SSIM, [`super::model::source_ssim_db`]): in dB −10·log10(10^(−q/10) + 10^(−T/10)), T the
//! table's SSIM(s, k) in dB; for k = s (modulo the clip) it is q. Two independent distortions
//! adding up, as errors' variances do; not a measurement. Checked against VP8, whose decoded
//! pictures are measured: `wisp run --video … codec=vp8` writes both values per instant
//! (`display.csv`), and docs/alfalfa.md reports how far apart they are (the first candidate,
//! the lower of q and T, was 0.7 dB optimistic on average; this one is within 0.11 dB on average
//! on the LTE traces, 0.32 dB on the slowest, Verizon-EVDO-driving.down).

use super::model::source_ssim_db;
use crate::stats::quantile_sorted;
use crate::time::{Duration, Instant};
use crate::video::log::FrameRecord;

/// The default threshold of a frozen picture: nothing newer than 200 ms on screen.
pub const FROZEN: Duration = Duration::from_millis(200);

/// The screen at one capture instant.
#[derive(Clone, Debug, PartialEq)]
pub struct ScreenSample {
    /// Picture index k of the instant (its source picture).
    pub picture: u64,
    /// The capture instant t_k.
    pub at: Instant,
    /// The frame on screen (an index into the frames given), `None` before the first display.
    pub frame: Option<usize>,
    /// t_k − the capture instant of the picture on screen.
    pub delay: Option<Duration>,
    /// SSIM (dB) of the picture on screen against source picture k, if known.
    pub ssim_db: Option<f64>,
}

/// The capture instant of picture 0: the earliest over the frames of a frame's capture instant
/// less its picture index × `interval` (the source captures one picture per interval; a frame
/// logged later than its picture's instant does not move it), at least [`Instant::ZERO`].
/// `None` without frames.
pub fn origin(frames: &[FrameRecord], interval: Duration) -> Option<Instant> {
    frames
        .iter()
        .map(|f| {
            let back = interval.as_nanos().saturating_mul(u64::from(f.source));
            Instant::from_nanos(f.capture.as_nanos().saturating_sub(back))
        })
        .min()
}

/// The screen at each of the `captured` capture instants `origin + k·interval`.
/// `quality(frame, k)` gives the SSIM (dB) of that frame's picture against source picture k
/// (`None`: unknown; a NaN counts as unknown).
pub fn screen(
    frames: &[FrameRecord],
    captured: u64,
    origin: Instant,
    interval: Duration,
    quality: &mut dyn FnMut(&FrameRecord, u64) -> Option<f64>,
) -> Vec<ScreenSample> {
    // The displayed frames by display instant (then state); the newest state so far is on
    // screen.
    let mut shown: Vec<(Instant, usize)> = frames
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.display.map(|d| (d, i)))
        .collect();
    shown.sort_by_key(|&(d, i)| (d, frames[i].state));
    let mut next = 0;
    let mut on: Option<usize> = None;
    let mut out = Vec::with_capacity(usize::try_from(captured).unwrap_or(0));
    for k in 0..captured {
        let at = Instant::from_nanos(
            origin
                .as_nanos()
                .saturating_add(interval.as_nanos().saturating_mul(k)),
        );
        while next < shown.len() && shown[next].0 <= at {
            let i = shown[next].1;
            if on.is_none_or(|o| frames[i].state > frames[o].state) {
                on = Some(i);
            }
            next += 1;
        }
        let (delay, ssim_db) = match on {
            Some(i) => {
                let f = &frames[i];
                (
                    Some(at.saturating_duration_since(f.capture)),
                    quality(f, k).filter(|q| !q.is_nan()),
                )
            }
            None => (None, None),
        };
        out.push(ScreenSample {
            picture: k,
            at,
            frame: on,
            delay,
            ssim_db,
        });
    }
    out
}

/// The model codec's displayed quality (an approximation; see the module doc): the frame's
/// coded SSIM q (dB) if `k` is its source picture (modulo the clip), else the two distortions
/// added, −10·log10(10^(−q/10) + 10^(−T/10)), T the SSIM between its source picture and source
/// picture `k` in the shipped clip.
pub fn model_quality(frame: &FrameRecord, k: u64) -> Option<f64> {
    let q = frame.ssim_db;
    if q.is_nan() {
        return None;
    }
    let n = super::model::SOURCE_PICTURES;
    if u64::from(frame.source) % n == k % n {
        return Some(q);
    }
    let t = source_ssim_db(u64::from(frame.source), k);
    Some(-10.0 * (10f64.powf(-q / 10.0) + 10f64.powf(-t / 10.0)).log10())
}

/// The displayed metric over a run's instants.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Displayed {
    /// Capture instants.
    pub instants: u64,
    /// Of them, before the first display (nothing on screen).
    pub blank: u64,
    /// Displayed delay over the other instants, ms (NaN if none).
    pub delay_p50_ms: f64,
    pub delay_p95_ms: f64,
    /// Share of the instants with a picture on screen whose picture is older than the
    /// threshold (0 if none).
    pub frozen_share: f64,
    /// The threshold, ms.
    pub frozen_ms: f64,
    /// Instants whose displayed quality is known.
    pub rated: u64,
    /// Mean and 5th percentile of the displayed quality, dB (NaN if none is known).
    pub ssim_mean_db: f64,
    pub ssim_p5_db: f64,
}

/// Summarises [`screen`]'s samples; `frozen` is the threshold of a frozen picture.
pub fn summarize(samples: &[ScreenSample], frozen: Duration) -> Displayed {
    let mut delay: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.delay.map(|d| d.as_millis_f64()))
        .collect();
    let mut ssim: Vec<f64> = samples.iter().filter_map(|s| s.ssim_db).collect();
    let frozen_n = samples
        .iter()
        .filter(|s| s.delay.is_some_and(|d| d > frozen))
        .count();
    delay.sort_unstable_by(f64::total_cmp);
    ssim.sort_unstable_by(f64::total_cmp);
    Displayed {
        instants: samples.len() as u64,
        blank: samples.iter().filter(|s| s.frame.is_none()).count() as u64,
        delay_p50_ms: quantile_sorted(&delay, 0.5).unwrap_or(f64::NAN),
        delay_p95_ms: quantile_sorted(&delay, 0.95).unwrap_or(f64::NAN),
        frozen_share: if delay.is_empty() {
            0.0
        } else {
            frozen_n as f64 / delay.len() as f64
        },
        frozen_ms: frozen.as_millis_f64(),
        rated: ssim.len() as u64,
        ssim_mean_db: if ssim.is_empty() {
            f64::NAN
        } else {
            ssim.iter().sum::<f64>() / ssim.len() as f64
        },
        ssim_p5_db: quantile_sorted(&ssim, 0.05).unwrap_or(f64::NAN),
    }
}

/// Freezes as libwebrtc counts them (`video/video_quality_observer2.cc`, and W3C
/// webrtc-stats' `freezeCount` / `totalFreezesDuration`, which Chrome reports from it).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Freezes {
    /// Inter-frame gaps that were freezes.
    pub count: u64,
    /// Their total, s.
    pub total_s: f64,
}

/// Gaps averaged before a freeze can be detected (`kMinFrameSamplesToDetectFreeze`).
const FREEZE_MIN_SAMPLES: usize = 5;
/// The average's window, frames (`kAvgInterframeDelaysWindowSizeFrames`).
const FREEZE_WINDOW: usize = 30;
/// A freeze is at least this much over the average gap (`kMinIncreaseForFreezeMs`).
const FREEZE_MIN_INCREASE: Duration = Duration::from_millis(150);

/// The freezes of a run, from its frame log: the frames *rendered* are those displayed while
/// newer than the picture on screen (in display order); each gap between two rendered frames is
/// a freeze when it is at least max(3 × avg, avg + 150 ms), avg the mean of the previous gaps
/// (the last 30, once there are 5), and then counts in the total. Deviation: libwebrtc leaves
/// out periods the stream was paused; a wisp run never pauses.
pub fn freezes(frames: &[FrameRecord]) -> Freezes {
    let mut shown: Vec<(Instant, crate::video::StateId)> = frames
        .iter()
        .filter_map(|f| f.display.map(|d| (d, f.state)))
        .collect();
    shown.sort_unstable();
    let mut out = Freezes::default();
    let mut on_screen = None;
    let mut last = None;
    let mut gaps: std::collections::VecDeque<Duration> = Default::default();
    for (at, state) in shown {
        if on_screen.is_some_and(|s| state <= s) {
            continue;
        }
        on_screen = Some(state);
        if let Some(prev) = last.replace(at) {
            let gap = at.saturating_duration_since(prev);
            if gaps.len() >= FREEZE_MIN_SAMPLES {
                let sum: u64 = gaps.iter().map(|g| g.as_nanos()).sum();
                let avg = Duration::from_nanos(sum / gaps.len() as u64);
                if gap >= (avg * 3).max(avg + FREEZE_MIN_INCREASE) {
                    out.count += 1;
                    out.total_s += gap.as_secs_f64();
                }
            }
            gaps.push_back(gap);
            if gaps.len() > FREEZE_WINDOW {
                gaps.pop_front();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video::StateId;

    /// 40-ms frames; a 200-ms gap after six of them is a freeze (≥ 40 + 150); a 170-ms gap
    /// after the third is not counted (fewer than 5 gaps averaged); a stale frame displayed late
    /// renders nothing.
    #[test]
    fn freezes_are_counted_as_libwebrtc_counts_them() {
        let at = |ms: &[u64]| -> Vec<FrameRecord> {
            ms.iter()
                .enumerate()
                .map(|(i, &d)| frame(i as u32 + 1, i as u32, 0, Some(d), 10.0))
                .collect()
        };
        let mut f = at(&[0, 40, 80, 120, 160, 200, 400, 440]);
        assert_eq!(freezes(&f).count, 1);
        assert!((freezes(&f).total_s - 0.2).abs() < 1e-9);
        // Below the bar: 189 ms after 40-ms gaps (3 × 40 = 120, 40 + 150 = 190).
        f[6].display = Some(Instant::from_nanos(389 * MS));
        f[7].display = Some(Instant::from_nanos(429 * MS));
        assert_eq!(freezes(&f).count, 0);
        assert_eq!(freezes(&at(&[0, 40, 80, 250, 290])).count, 0);
        // An older state displayed after a newer one is not rendered.
        let mut g = at(&[0, 40, 80, 120, 160, 200, 240]);
        g.push(frame(2, 1, 0, Some(600), 10.0));
        assert_eq!(freezes(&g).count, 0);
        assert_eq!(freezes(&[]), Freezes::default());
    }

    const MS: u64 = 1_000_000;

    fn frame(
        state: u32,
        source: u32,
        capture_ms: u64,
        display_ms: Option<u64>,
        q: f64,
    ) -> FrameRecord {
        FrameRecord {
            state: StateId(state),
            source,
            capture: Instant::from_nanos(capture_ms * MS),
            display: display_ms.map(|d| Instant::from_nanos(d * MS)),
            bytes: 100,
            ssim_db: q,
            base: StateId(state.saturating_sub(1)),
            intra: false,
            missing_base: false,
        }
    }

    fn ms(s: &ScreenSample) -> Option<u64> {
        s.delay.map(|d| d.as_nanos() / MS)
    }

    /// Pictures every 40 ms; picture 0 displayed at 60, picture 1 at 100 (at t_2 and before
    /// t_3), picture 2 never (a freeze), picture 3 at 200. By the definition:
    /// t_0 = 0, t_1 = 40: blank (first display at 60); t_2 = 80: picture 0, 80 ms old;
    /// t_3 = 120: picture 1 (captured 40), 80 ms; t_4 = 160: still picture 1, 120 ms;
    /// t_5 = 200: picture 3 (displayed at exactly 200: at or before), captured 120, 80 ms;
    /// t_6 = 240: 120 ms.
    #[test]
    fn a_gap_before_the_first_display_and_a_freeze() {
        let frames = vec![
            frame(1, 0, 0, Some(60), 20.0),
            frame(2, 1, 40, Some(100), 21.0),
            frame(3, 2, 80, None, 22.0),
            frame(4, 3, 120, Some(200), 23.0),
        ];
        let interval = Duration::from_millis(40);
        let o = origin(&frames, interval).unwrap();
        assert_eq!(o, Instant::ZERO);
        let s = screen(&frames, 7, o, interval, &mut |f, _| Some(f.ssim_db));
        let delays: Vec<_> = s.iter().map(ms).collect();
        assert_eq!(
            delays,
            [
                None,
                None,
                Some(80),
                Some(80),
                Some(120),
                Some(80),
                Some(120)
            ]
        );
        let on: Vec<_> = s.iter().map(|x| x.frame).collect();
        assert_eq!(
            on,
            [None, None, Some(0), Some(1), Some(1), Some(3), Some(3)]
        );
        let d = summarize(&s, Duration::from_millis(100));
        assert_eq!((d.instants, d.blank, d.rated), (7, 2, 5));
        // Delays sorted: 80 80 80 120 120; over 100 ms: 2 of 5.
        assert!((d.frozen_share - 0.4).abs() < 1e-12);
        assert_eq!(d.delay_p50_ms, 80.0);
        // Quality: 20, 21, 21, 23, 23 → mean 21.6.
        assert!((d.ssim_mean_db - 21.6).abs() < 1e-9, "{}", d.ssim_mean_db);
    }

    /// A frame displayed after a newer one (never by the protocol, which applies in order)
    /// does not replace it: the newest state stays on screen. t_0 = 0, t_1 = 40: nothing yet
    /// (first display at 50); t_2 = 80: state 2 (captured 40), 40 ms old.
    #[test]
    fn the_newest_state_stays_on_screen() {
        let frames = vec![
            frame(2, 1, 40, Some(50), 1.0),
            frame(1, 0, 0, Some(70), 1.0),
        ];
        let s = screen(
            &frames,
            3,
            Instant::ZERO,
            Duration::from_millis(40),
            &mut |_, _| None,
        );
        let on: Vec<_> = s.iter().map(|x| x.frame).collect();
        assert_eq!(on, [None, None, Some(0)]);
        assert_eq!(s[2].delay, Some(Duration::from_millis(40)));
        assert_eq!(s[2].ssim_db, None);
        let d = summarize(&s, FROZEN);
        assert_eq!((d.rated, d.blank), (0, 2));
        assert!(d.ssim_mean_db.is_nan());
    }

    /// The clip loops: at instant k the source is picture k mod the clip's length. The model's
    /// approximation reads the table at (the shown picture's, k mod 75): picture 74 on screen at
    /// instant 75 is compared with picture 0, and picture 75 (= clip picture 0) at instant 76
    /// with picture 1: the table's (0, 1). Each value by the definition: distortions
    /// 1 − SSIM add, 10^(−dB/10) each.
    #[test]
    fn the_model_approximation_loops_with_the_clip() {
        use crate::video::model::source_ssim_db;
        let n = 75u64;
        let iv = 40u64;
        // Picture 74 shown 10 ms after its capture (so nothing is on screen at its own instant),
        // picture 75 30 ms after its capture.
        let frames = vec![
            frame(1, 74, 74 * iv, Some(74 * iv + 10), 30.0),
            frame(2, 75, 75 * iv, Some(75 * iv + 30), 30.0),
        ];
        let s = screen(
            &frames,
            78,
            Instant::ZERO,
            Duration::from_millis(iv),
            &mut model_quality,
        );
        assert_eq!(s[74].frame, None);
        // A picture against itself (also a loop later): the frame's own SSIM.
        assert_eq!(model_quality(&frames[0], 74), Some(30.0));
        assert_eq!(model_quality(&frames[0], 74 + n), Some(30.0));
        assert_eq!(model_quality(&frames[1], 0), Some(30.0));
        let added = |t: f64| -10.0 * (0.001 + 10f64.powf(-t / 10.0)).log10();
        assert_eq!(s[75].frame, Some(0));
        let got = s[75].ssim_db.unwrap();
        assert!((got - added(source_ssim_db(74, 0))).abs() < 1e-9, "{got}");
        assert_eq!(s[76].frame, Some(1));
        let got = s[76].ssim_db.unwrap();
        assert!((got - added(source_ssim_db(0, 1))).abs() < 1e-9, "{got}");
        // Below both the coding's 30 dB and the pictures' own similarity.
        assert!(got < source_ssim_db(0, 1) && got < 30.0);
        assert_eq!(source_ssim_db(75, 76), source_ssim_db(0, 1));
        assert_eq!(source_ssim_db(n + 3, 2 * n + 5), source_ssim_db(3, 5));
        // A hand check of the formula: 20 dB and 20 dB (1% each) add to 2%: 16.99 dB.
        let f = frame(1, 0, 0, Some(1), 20.0);
        let t = source_ssim_db(0, 1);
        let want = -10.0 * (0.01 + 10f64.powf(-t / 10.0)).log10();
        assert!((model_quality(&f, 1).unwrap() - want).abs() < 1e-9);
        assert!((-10.0 * (0.01f64 + 0.01).log10() - 16.9897).abs() < 1e-4);
        // Different pictures of the clip are far less alike than 30 dB.
        assert!(source_ssim_db(0, 1) < 30.0);
        assert_eq!(s[77].delay, Some(Duration::from_millis(2 * iv)));
    }

    #[test]
    fn no_frames_no_values() {
        assert_eq!(origin(&[], Duration::from_millis(40)), None);
        let s = screen(
            &[],
            4,
            Instant::ZERO,
            Duration::from_millis(40),
            &mut |_, _| Some(1.0),
        );
        let d = summarize(&s, FROZEN);
        assert_eq!((d.instants, d.blank, d.rated), (4, 4, 0));
        assert!(d.delay_p95_ms.is_nan() && d.ssim_mean_db.is_nan());
        assert_eq!(d.frozen_share, 0.0);
        let d = summarize(&[], FROZEN);
        assert_eq!(d.instants, 0);
    }

    #[test]
    fn the_origin_is_picture_0s_capture() {
        // The first coded frame is picture 3 (0–2 skipped), captured at 1000 + 3·40 ms.
        let mut frames = vec![frame(1, 3, 1120, Some(1150), 1.0)];
        assert_eq!(
            origin(&frames, Duration::from_millis(40)),
            Some(Instant::from_nanos(1000 * MS))
        );
        // A frame logged after its picture's instant (picture 4 at 1190, not 1160) moves nothing;
        // order does not matter.
        frames.insert(0, frame(2, 4, 1190, Some(1230), 1.0));
        assert_eq!(
            origin(&frames, Duration::from_millis(40)),
            Some(Instant::from_nanos(1000 * MS))
        );
    }
}
