//! The frame log of a video run: what each coded frame was and when (if ever) it was shown,
//! with the counters of what went wrong, shared by the two halves of a video scheme
//! ([`crate::scheme::alfalfa`]) and whoever asked for it (the simulator's and the real tools'
//! figures, [`crate::video::display`]). A scheme that codes video hands its log out through the
//! contract's [`video_log`](crate::controller::Receiver::video_log) hook.

use crate::time::{Duration, Instant};
use crate::video::{Decoded, StateId, VideoCodecs};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One coded frame as the run saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRecord {
    pub state: StateId,
    /// Index of the source picture.
    pub source: u32,
    pub capture: Instant,
    /// When the receiver applied it (`None`: never).
    pub display: Option<Instant>,
    /// Diff bytes (header included).
    pub bytes: usize,
    /// SSIM of the coded picture against its source, dB.
    pub ssim_db: f64,
    /// The state it was coded from.
    pub base: StateId,
    /// An intra frame after the first: coded from the black state 0 after the receiver had
    /// acknowledged a later state.
    pub intra: bool,
    /// Arrived complete but refused for a missing base (a frame lost to a missing reference).
    pub missing_base: bool,
}

impl FrameRecord {
    /// A frame as coded: not displayed yet, not refused. `(state, base)` are its state and the
    /// state it was coded from, `(source, capture)` its picture's index and capture time.
    pub fn coded(
        (state, base): (StateId, StateId),
        (source, capture): (u32, Instant),
        bytes: usize,
        ssim_db: f64,
        intra: bool,
    ) -> Self {
        FrameRecord {
            state,
            source,
            capture,
            display: None,
            bytes,
            ssim_db,
            base,
            intra,
            missing_base: false,
        }
    }
}

/// The frames of a run, shared by the halves and whoever asked for them.
#[derive(Clone, Debug, Default)]
pub struct VideoLog(pub(crate) Arc<Mutex<VideoLogInner>>);

#[derive(Debug, Default)]
pub(crate) struct VideoLogInner {
    pub(crate) frames: Vec<FrameRecord>,
    pub(crate) captured: u64,
    pub(crate) skipped_closed: u64,
    pub(crate) held_sent: u64,
    pub(crate) missing_base: u64,
    pub(crate) bad_pieces: u64,
    pub(crate) key_frames: u64,
    pub(crate) ssim_mismatch: u64,
    pub(crate) over_budget: u64,
    pub(crate) overshoot_bytes: u64,
    /// The wall clock that times each coding call (a real sender's log only: wisp-core reads
    /// no clock of its own, and the simulator gives none).
    pub(crate) clock: Option<WallClock>,
    /// Frames whose coding call was timed, and the time in all, ns.
    pub(crate) coding_frames: u64,
    pub(crate) coding_ns: u64,
    /// The decoded picture of each frame shown, by state, when asked to keep them
    /// ([`VideoLog::keep_pictures`]; `None`: not kept).
    pub(crate) pictures: Option<BTreeMap<StateId, Decoded>>,
    /// The receiving half's codec (set at its first delivery).
    pub(crate) codecs: Option<Arc<dyn VideoCodecs>>,
}

/// A wall clock given from outside wisp-core (`wisp send`'s): the time since any fixed epoch.
#[derive(Clone)]
pub struct WallClock(pub Arc<dyn Fn() -> Duration + Send + Sync>);

impl std::fmt::Debug for WallClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WallClock")
    }
}

impl VideoLog {
    /// A log whose sending half also measures the wall-clock time of each frame's coding call
    /// (its trials, commit, mirror decode and SSIM): `wisp send` reports the mean, which
    /// `encode-ms` can charge in the simulator. Nothing else changes.
    pub fn measuring_coding_time(clock: WallClock) -> Self {
        let log = VideoLog::default();
        if let Ok(mut l) = log.0.lock() {
            l.clock = Some(clock);
        }
        log
    }

    /// The mean wall-clock time of a coded frame's coding call and the frames timed (a log made
    /// by [`VideoLog::measuring_coding_time`]; `None` before any frame is coded).
    pub fn coding_time(&self) -> Option<(Duration, u64)> {
        let l = self.0.lock().ok()?;
        (l.coding_frames > 0).then(|| {
            (
                Duration::from_nanos(l.coding_ns / l.coding_frames),
                l.coding_frames,
            )
        })
    }

    /// The frames coded so far, in coding order.
    pub fn frames(&self) -> Vec<FrameRecord> {
        self.0.lock().map(|l| l.frames.clone()).unwrap_or_default()
    }

    /// Pictures captured (coded or skipped).
    pub fn captured(&self) -> u64 {
        self.0.lock().map(|l| l.captured).unwrap_or_default()
    }

    /// Pictures skipped because Sprout's window was closed (0 bytes) at their capture instant;
    /// the other skipped ones had a window too small for the coarsest diff. (With `hold=on` a
    /// picture is skipped when the next capture supersedes it uncoded.)
    pub fn skipped_closed(&self) -> u64 {
        self.0.lock().map(|l| l.skipped_closed).unwrap_or_default()
    }

    /// Pictures held (`hold=on`: the window could not hold them at their capture instant) and
    /// coded later, before the next capture; their frame delay counts the wait.
    pub fn held_sent(&self) -> u64 {
        self.0.lock().map(|l| l.held_sent).unwrap_or_default()
    }

    /// Frames that arrived complete but could not be decoded: their base was missing.
    pub fn missing_base(&self) -> u64 {
        self.0.lock().map(|l| l.missing_base).unwrap_or_default()
    }

    /// Packets whose payload was not a well-formed piece (truncated, corrupt): dropped.
    pub fn bad_pieces(&self) -> u64 {
        self.0.lock().map(|l| l.bad_pieces).unwrap_or_default()
    }

    /// Frames the receiver decoded that were intra (key) frames, as the codec's bitstream says
    /// (a real codec's; the model has none). State 0 is a key frame never sent, so any is
    /// unexpected.
    pub fn key_frames(&self) -> u64 {
        self.0.lock().map(|l| l.key_frames).unwrap_or_default()
    }

    /// Frames shown whose quality as the receiver measured it (on its decoded picture) differs
    /// from the sender's (on its mirror decoder's, a receiver that lost nothing): in the
    /// simulator, where both halves log into one row, a decoded picture that is not bit-exact
    /// the sender's shows here. (Over real sockets the receiver's row is its own: 0.)
    pub fn ssim_mismatch(&self) -> u64 {
        self.0.lock().map(|l| l.ssim_mismatch).unwrap_or_default()
    }

    /// Keep the decoded picture of every frame shown (a real codec's; the model has none), so
    /// that the picture on screen can be measured against later source pictures
    /// ([`VideoLog::screen_ssim_db`], the displayed metric of [`crate::video::display`]). Costs
    /// a picture's memory per frame shown (38 kB at 176×144): call it before the run.
    pub fn keep_pictures(&self) {
        if let Ok(mut l) = self.0.lock() {
            l.pictures.get_or_insert_default();
        }
    }

    /// Whether decoded pictures are kept ([`VideoLog::keep_pictures`]).
    pub fn keeps_pictures(&self) -> bool {
        self.0.lock().is_ok_and(|l| l.pictures.is_some())
    }

    /// The decoded picture of `state` (a real codec's, kept by [`VideoLog::keep_pictures`];
    /// `None` if not kept, not shown, or the codec has no pixels).
    pub fn picture(&self, state: StateId) -> Option<crate::video::Picture> {
        let l = self.0.lock().ok()?;
        match l.pictures.as_ref()?.get(&state)? {
            Decoded::Picture { picture, .. } => Some(picture.clone()),
            Decoded::Quantiser(_) => None,
        }
    }

    /// The name of the codec the receiving half decoded with (`None` before its first
    /// delivery).
    pub fn codec_name(&self) -> Option<&'static str> {
        self.0.lock().ok()?.codecs.as_ref().map(|c| c.name())
    }

    /// SSIM (dB) of the decoded picture of `state` against source picture `source`, measured
    /// with the codec's quality function; `None` if the picture was not kept (not shown, pictures
    /// not kept, or a codec without pixels).
    pub fn screen_ssim_db(&self, state: StateId, source: u64) -> Option<f64> {
        let l = self.0.lock().ok()?;
        let picture = l.pictures.as_ref()?.get(&state)?;
        let source = u32::try_from(source).ok()?;
        Some(l.codecs.as_ref()?.ssim_db(picture, source))
    }

    /// Frames the sender coded over their budget, and the bytes over it in all (a real codec
    /// can code a frame a little larger than its trial at the same quantiser; the model never).
    pub fn overshoot(&self) -> (u64, u64) {
        self.0
            .lock()
            .map(|l| (l.over_budget, l.overshoot_bytes))
            .unwrap_or_default()
    }
}
