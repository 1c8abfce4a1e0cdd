//! `alfalfa` — Alfalfa's video layer on Sprout (Winstein, Sivaraman, Balakrishnan, NSDI 2013,
//! §4), in the simulator, with the model codec ([`crate::video::model`]).
//!
//! Every 1/`fps` s the sender captures a picture and codes it (see [`crate::video::sync`]) within
//! Sprout's window (eq. 6) as the budget, from the newest state sent if Sprout's forecast drains
//! everything sent within the lookahead ([`SproutSender::drains_within_lookahead`]: "the forecast
//! says it arrives in time"), else from the newest acknowledged state. The frame's packets leave
//! at once, outside the flow's allowance (they are the window); a picture the window cannot hold
//! even at the coarsest quantiser is skipped. The receiver runs Sprout's receiver and the
//! state-sync receiver, and sends Sprout's forecasts and its slot reports. Each coded frame is
//! logged ([`VideoLog`]): capture time, display time (if shown), bytes, SSIM.
//!
//! Deviations (beyond those of `sprout` and `video`):
//! - **Simulation only.** The diffs' bytes travel out of band: the two halves share a store
//!   keyed by packet sequence number (the packets carry their sizes, the store their contents),
//!   since Sprout's header fields fill the 16 bytes a scheme has. Over real sockets the diff
//!   would be the RTP payload (not built yet).
//! - No audio (the paper's opaque 20-Hz audio packets are not sent).
//! - Sprout's parameters are its defaults; `fps`, `anchor-timeout-ms` and `frame-share` (the
//!   share of the window one frame may take; 1, all of it, as §4 reads) are this scheme's.

use super::params::{Checked, Configurable, Validate, range, scheme_params};
use super::registry::{Halves, Scheme, SchemeInfo};
use super::sprout::wire::{SproutFields, SproutForecast};
use super::sprout::{SproutConfig, SproutReceiver, SproutSender};
use super::{BuildError, SchemeContext};
use crate::controller::{Allowance, ExtraPacket, Receiver, SendContext, Sender, SenderStats};
use crate::pacer::Pacer;
use crate::packet::{Content, DataHeader};
use crate::source::{MediaConfig, Source};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use crate::video::StateId;
use crate::video::model::{ModelCodec, ModelDecoder};
use crate::video::sync::{Delivery, SlotReport, SyncConfig, SyncReceiver, SyncSender, VideoPacket};
use crate::wire::{Message, WireError};
use std::collections::{HashMap, VecDeque};
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
}

/// The frames of a run, shared by the halves and whoever asked for them.
#[derive(Clone, Debug, Default)]
pub struct VideoLog(Arc<Mutex<VideoLogInner>>);

#[derive(Debug, Default)]
struct VideoLogInner {
    frames: Vec<FrameRecord>,
    captured: u64,
    skipped_closed: u64,
}

impl VideoLog {
    /// The frames coded so far, in coding order.
    pub fn frames(&self) -> Vec<FrameRecord> {
        self.0.lock().map(|l| l.frames.clone()).unwrap_or_default()
    }

    /// Pictures captured (coded or skipped).
    pub fn captured(&self) -> u64 {
        self.0.lock().map(|l| l.captured).unwrap_or_default()
    }

    /// Pictures skipped because Sprout's window was closed (0 bytes); the other skipped ones
    /// had a window too small for the coarsest diff.
    pub fn skipped_closed(&self) -> u64 {
        self.0.lock().map(|l| l.skipped_closed).unwrap_or_default()
    }
}

impl PartialEq for VideoLog {
    /// Logs never make two configurations differ.
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// The out-of-band store: each video packet's piece of its diff, by packet sequence number.
type Store = Arc<Mutex<HashMap<u64, (VideoPacket, Vec<u8>)>>>;

/// Configuration of `alfalfa`.
#[derive(Clone, Debug, PartialEq)]
pub struct AlfalfaConfig {
    pub sprout: SproutConfig,
    /// Pictures per second (the shipped clip's 25).
    pub fps: u32,
    pub anchor_timeout: Duration,
    /// The share of Sprout's window one frame may take (1: all of it, as §4 reads).
    pub frame_share: f64,
    /// Where the run's frames are logged (a fresh log if none is given).
    pub log: Option<VideoLog>,
}

impl Default for AlfalfaConfig {
    fn default() -> Self {
        AlfalfaConfig {
            sprout: SproutConfig::default(),
            fps: 25,
            anchor_timeout: SyncConfig::default().anchor_timeout,
            frame_share: 1.0,
            log: None,
        }
    }
}

scheme_params! {
    /// `alfalfa`'s parameters.
    pub struct AlfalfaParams {
        /// Pictures captured per second.
        pub fps: u32,
        /// A candidate anchor not acknowledged within this long is presumed lost, ms.
        pub anchor_timeout_ms: f64,
        /// The share of Sprout's window one frame may take (1: all of it).
        pub frame_share: f64,
    }
}

impl Validate for AlfalfaParams {
    fn validate(&self) -> Checked {
        range(
            "fps",
            f64::from(self.fps),
            1.0,
            120.0,
            "1 to 120 pictures/s",
        )?;
        range(
            "anchor-timeout-ms",
            self.anchor_timeout_ms,
            1.0,
            60_000.0,
            "1 to 60000 ms",
        )?;
        range(
            "frame-share",
            self.frame_share,
            0.01,
            1.0,
            "a share of the window, 0.01 to 1",
        )
    }
}

impl Configurable for AlfalfaConfig {
    type Params = AlfalfaParams;
    fn to_params(&self) -> AlfalfaParams {
        AlfalfaParams {
            fps: self.fps,
            anchor_timeout_ms: self.anchor_timeout.as_millis_f64(),
            frame_share: self.frame_share,
        }
    }
    fn apply(&mut self, p: AlfalfaParams) {
        self.fps = p.fps;
        self.anchor_timeout = Duration::from_millis_f64(p.anchor_timeout_ms);
        self.frame_share = p.frame_share;
    }
}

/// `alfalfa`'s feedback: Sprout's forecast or the video receiver's slot report.
#[derive(Clone, Debug, PartialEq)]
pub enum AlfalfaFeedback {
    Forecast(SproutForecast),
    Report(SlotReport),
}

impl Message for AlfalfaFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        match self {
            AlfalfaFeedback::Forecast(f) => f.emit(out),
            AlfalfaFeedback::Report(r) => r.emit(out),
        }
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match buf.first() {
            Some(&SlotReport::KIND) => SlotReport::parse(buf).map(AlfalfaFeedback::Report),
            _ => SproutForecast::parse(buf).map(AlfalfaFeedback::Forecast),
        }
    }
}

/// The sending half: Sprout's sender and the state-sync sender.
#[derive(Debug)]
pub struct AlfalfaSender {
    sprout: SproutSender,
    video: SyncSender<ModelCodec>,
    interval: Duration,
    next_frame: Option<Instant>,
    picture: u32,
    queue: VecDeque<(VideoPacket, Vec<u8>)>,
    queued_bytes: u64,
    frame_share: f64,
    popped: Option<(VideoPacket, Vec<u8>)>,
    store: Store,
    log: VideoLog,
}

/// Header bytes of a video packet on the wire (RTP + IP/UDP).
const OVERHEAD: u64 = 40;

impl AlfalfaSender {
    fn capture(&mut self, now: Instant) {
        self.sprout.on_time(now);
        let open = self.sprout.window(now).saturating_sub(self.queued_bytes);
        let window = (open as f64 * self.frame_share) as usize;
        let in_time = self.sprout.drains_within_lookahead(now);
        let source = self.picture;
        self.picture += 1;
        if let Ok(mut l) = self.log.0.lock() {
            l.captured += 1;
        }
        let Some(f) = self.video.on_frame(now, source, window, in_time) else {
            if open == 0
                && let Ok(mut l) = self.log.0.lock()
            {
                l.skipped_closed += 1;
            }
            return;
        };
        if let Ok(mut l) = self.log.0.lock() {
            l.frames.push(FrameRecord {
                state: f.diff.header.target,
                source,
                capture: now,
                display: None,
                bytes: f.diff.bytes.len(),
                ssim_db: f.diff.ssim_db,
            });
        }
        for p in f.packets {
            let bytes = f.diff.bytes[p.offset..p.offset + p.len].to_vec();
            self.queued_bytes += p.len as u64 + OVERHEAD;
            self.queue.push_back((p, bytes));
        }
    }
}

impl Sender for AlfalfaSender {
    type Feedback = AlfalfaFeedback;
    type Fields = SproutFields;

    fn on_packet_sent(
        &mut self,
        now: Instant,
        packet: &DataHeader,
        ctx: &SendContext,
    ) -> SproutFields {
        if let Some(piece) = self.popped.take()
            && let Ok(mut s) = self.store.lock()
        {
            s.insert(packet.seq, piece);
        }
        // The flight goes on while video packets are queued.
        let ctx = SendContext {
            backlog_after: Some(
                ctx.backlog_after.unwrap_or(DataSize::ZERO)
                    + DataSize::from_bytes(self.queued_bytes),
            ),
        };
        self.sprout.on_packet_sent(now, packet, &ctx)
    }

    fn on_feedback(&mut self, now: Instant, feedback: &AlfalfaFeedback) {
        match feedback {
            AlfalfaFeedback::Forecast(f) => self.sprout.on_feedback(now, f),
            AlfalfaFeedback::Report(r) => self.video.on_report(r),
        }
    }

    fn on_time(&mut self, now: Instant) {
        self.sprout.on_time(now);
    }

    fn allowance(&self, now: Instant) -> Allowance {
        self.sprout.allowance(now)
    }

    fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket> {
        if let Some(x) = self.sprout.poll_extra(now) {
            return Some(x);
        }
        let (p, bytes) = self.queue.pop_front()?;
        let size = p.len as u64 + OVERHEAD;
        self.queued_bytes -= size;
        let content = Content::Video {
            frame: p.state.0,
            last: p.index + 1 == p.count,
            key: false,
        };
        self.popped = Some((p, bytes));
        Some(ExtraPacket {
            size: DataSize::from_bytes(size),
            content,
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let frame = Some(self.next_frame.unwrap_or(Instant::ZERO));
        [self.sprout.poll_timeout(), frame]
            .into_iter()
            .flatten()
            .min()
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.sprout.poll_timeout().is_some_and(|t| t <= now) {
            self.sprout.on_timeout(now);
        }
        let due = *self.next_frame.get_or_insert(now);
        if due <= now {
            self.capture(now);
            self.next_frame = Some(due + self.interval);
        }
    }

    fn stats(&self) -> SenderStats {
        self.sprout.stats()
    }
}

/// The receiving half: Sprout's receiver and the state-sync receiver.
#[derive(Debug)]
pub struct AlfalfaReceiver {
    sprout: Box<SproutReceiver>,
    video: SyncReceiver<ModelDecoder>,
    store: Store,
    log: VideoLog,
    reports: VecDeque<SlotReport>,
}

impl Receiver for AlfalfaReceiver {
    type Feedback = AlfalfaFeedback;
    type Fields = SproutFields;

    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, fields: &SproutFields) {
        self.sprout.on_packet_received(now, packet, fields);
        let Some((p, bytes)) = self
            .store
            .lock()
            .ok()
            .and_then(|mut s| s.remove(&packet.seq))
        else {
            return;
        };
        match self.video.on_packet(p.state, p.index, p.count, &bytes) {
            Some(Delivery::Shown { state, .. }) => {
                if let Ok(mut l) = self.log.0.lock() {
                    // Frames are logged in state order: a binary search finds the row.
                    if let Ok(r) = l.frames.binary_search_by_key(&state, |f| f.state) {
                        l.frames[r].display = Some(now);
                    }
                }
                self.reports.push_back(self.video.report());
            }
            Some(Delivery::Refused { .. }) => self.reports.push_back(self.video.report()),
            None => {}
        }
    }

    fn poll_feedback(&mut self, now: Instant) -> Option<AlfalfaFeedback> {
        if let Some(f) = self.sprout.poll_feedback(now) {
            return Some(AlfalfaFeedback::Forecast(f));
        }
        self.reports.pop_front().map(AlfalfaFeedback::Report)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.sprout.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant) {
        self.sprout.on_timeout(now);
    }
}

impl Scheme for AlfalfaConfig {
    type Sender = Box<AlfalfaSender>;
    type Receiver = Box<AlfalfaReceiver>;
    const NAMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "alfalfa",
        summary: "Alfalfa's explicit-state video on Sprout (model codec; simulator only)",
    }];

    fn named(name: &str) -> Option<Self> {
        (name == "alfalfa").then(AlfalfaConfig::default)
    }

    fn name(&self) -> &'static str {
        "alfalfa"
    }

    fn build(
        &self,
        ctx: SchemeContext,
    ) -> Result<Halves<Box<AlfalfaSender>, Box<AlfalfaReceiver>>, BuildError> {
        let mtu = ctx.mtu();
        let store = Store::default();
        let log = self.log.clone().unwrap_or_default();
        let sync = SyncConfig {
            max_payload: (mtu.bytes().saturating_sub(OVERHEAD) as usize).clamp(1, 1200),
            packet_overhead: OVERHEAD as usize,
            anchor_timeout: self.anchor_timeout,
        };
        let sender = AlfalfaSender {
            sprout: SproutSender::new(&self.sprout, mtu),
            video: SyncSender::new(ModelCodec::default(), sync),
            interval: Duration::from_nanos(1_000_000_000 / u64::from(self.fps.max(1))),
            next_frame: None,
            picture: 0,
            queue: VecDeque::new(),
            queued_bytes: 0,
            frame_share: self.frame_share,
            popped: None,
            store: store.clone(),
            log: log.clone(),
        };
        let receiver = AlfalfaReceiver {
            sprout: Box::new(SproutReceiver::new(&self.sprout, mtu, &ctx.tables)),
            video: SyncReceiver::new(ModelDecoder),
            store,
            log,
            reports: VecDeque::new(),
        };
        // No traffic of its own: the frames leave as the sender's extra packets.
        let silent = MediaConfig {
            fps: 0,
            audio_rate: Bitrate::ZERO,
            ..MediaConfig::default()
        };
        Ok(Halves {
            sender: Box::new(sender),
            receiver: Box::new(receiver),
            source: Source::media(silent, None, mtu),
            pacer: Pacer::default(),
            mtu,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feedback_round_trips_both_kinds() {
        for m in [
            AlfalfaFeedback::Forecast(SproutForecast {
                received_or_lost: 7,
                cumulative_bytes: vec![1500, 3000],
            }),
            AlfalfaFeedback::Report(SlotReport::default()),
        ] {
            let mut b = vec![];
            m.emit(&mut b);
            assert_eq!(AlfalfaFeedback::parse(&b).unwrap(), m);
        }
        assert!(AlfalfaFeedback::parse(&[99, 0, 0]).is_err());
        assert!(AlfalfaFeedback::parse(&[]).is_err());
    }
}
