//! `alfalfa` — Alfalfa's video layer on Sprout (Winstein, Sivaraman, Balakrishnan, NSDI 2013,
//! §4), in the simulator and over real sockets, with the model codec ([`crate::video::model`],
//! `codec=model`, the default) or a real one (`codec=vp8`: libvpx through `wisp-vpx`, which the
//! CLI injects as [`InjectedCodecs`] since wisp-core links no codec library; every half builds
//! its encoder and decoder from [`VideoCodecs`]). With VP8 the receiver decodes each diff into a
//! picture and measures its SSIM against its source picture in the clip.
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
//! **The same video layer under other rate controls** (Alfalfa's comparison), so that the value of
//! the explicit-state interface is measured: the configuration's `rate` chooses who sets each
//! frame's budget and `base` how its base is chosen ([`BasePolicy`]).
//! - `sprout-conventional`: Sprout's window as the budget, but a conventional codec: every diff
//!   from the previous one, whatever the forecast, and after a reported break in the chain an
//!   intra frame (from the black state 0, which both sides hold; RTCP's PLI → key frame).
//! - `gcc-video`: `gcc`'s encoder target (libwebrtc's goog_cc, [`super::goog_cc`], with its
//!   congestion-window pushback) × the frame interval as the budget (a conventional encoder's
//!   per-frame rate control), conventional base. The frame's packets are paced as `gcc`'s own
//!   call paces them, at its pacing rate (2.5 × the target) on 5-ms ticks, and `gcc`'s probe
//!   clusters leave between them, through the same extra packets. `rate=gcc-remb` puts the same
//!   video under `gcc-remb` (the 2016 receiver-side form, the comparison before goog_cc came).
//! - `cbr-video`: a constant rate × the frame interval, conventional base.
//!
//! `wisp run --scheme gcc|gcc-remb|cbr|sprout --video CLIP` runs these (the CLI maps the scheme
//! onto its video variant). Under `gcc-remb` and `cbr` a frame's packets leave at its capture,
//! unpaced, as under Sprout (frames here are one to three packets); under `gcc` they are paced.
//!
//! **The diff's bytes are each packet's payload** ([`Piece`]: the state, the piece's index and
//! count, the picture's age when the packet left, the length, then the piece of the diff). The
//! controller contract carries headers, not payloads, so the payload goes from the sending half
//! to the transport by packet sequence number: over real sockets (`wisp send`/`wisp recv`) the
//! transport takes it ([`Sender::take_payload`]), puts it after the RTP header, and hands
//! the receiving half the bytes that arrived ([`Receiver::on_payload`]); in the
//! simulator, whose packets are headers, the two halves share the map (the packet's payload,
//! keyed by its sequence number: a lost packet's is never read). Either way the receiver parses
//! the same bytes: a corrupt or truncated piece is a counted error ([`VideoLog::bad_pieces`]).
//! Each packet's size counts the payload and [`WIRE_OVERHEAD`] (IP/UDP — IPv4's 28 in the
//! simulator, 48 over IPv6 with `wisp send` ([`wire_overhead`]) —, the RTP header with
//! wisp's extensions, the piece header), so a packet in the simulator is as large as on the wire.
//! The receiving half logs what it decoded: over real sockets, where the sender's log is in
//! another process, it adds the frames it received (capture instant from the piece's age; bytes,
//! base and source picture from the assembled diff, whichever packets carried it; SSIM as the
//! codec's decoder measures it: the model's from the decoded quantiser, VP8's on the decoded
//! picture against its source picture).
//!
//! Deviations (beyond those of `sprout` and `video`):
//! - No audio (the paper's opaque 20-Hz audio packets are not sent).
//! - Sprout's parameters are its defaults; `fps`, `anchor-timeout-ms` and `frame-share` (the
//!   share of the window one frame may take; 1, all of it, as §4 reads) are this scheme's.
//! - `alfalfa`'s base rule is `base=loss-aware` with `parity=auto` (see
//!   [`crate::video::sync`]): §4's rule unless the chain to the newest sent state is too likely
//!   broken at the measured loss rate, and a parity packet per frame when that rate calls for
//!   one. Without measured loss both are §4's rule exactly. `base=paper,parity=off` is the
//!   paper's rule as stated. The conventional presets send no parity unless asked.
//! - `hold=on` (wisp's option, default off; `alfalfa` and `sprout-conventional`): a picture the
//!   window cannot hold even at the coarsest quantiser is held instead of skipped, and coding it
//!   is retried whenever the window may have changed — after feedback (a forecast changes the
//!   window, a slot report the base) and at the sender's timeouts, which include each tick of
//!   Sprout's forecast — until the next capture supersedes it (then it is skipped). Coded late,
//!   it keeps its capture instant (its pieces' age counts the wait, so a receiver over sockets
//!   dates it the same way) and its base and parity are chosen at the coding instant. Counted
//!   in [`VideoLog::held_sent`]. Refused under `gcc`/`cbr`, whose budget only changes at
//!   captures. Not the default: see docs/alfalfa.md, *Holding a picture*.
//! - A frame is coded in zero simulated time unless `encode-ms` charges a fixed time: its
//!   packets leave that long after its coding instant. Over sockets the encoder takes its real
//!   time (`wisp send` refuses `encode-ms` and reports the measured mean, timed with a
//!   [`WallClock`] it gives the log: wisp-core reads no clock).

use super::cbr::CbrConfig;
use super::gcc::GccConfig;
use super::goog_cc::GoogCcConfig;
use super::params::{Checked, Given, Validate, check, range, scheme_config};
use super::registry::{Halves, Scheme, SchemeInfo};
use super::sprout::{SproutConfig, SproutReceiver, SproutSender};
use super::{BuildError, Built, SchemeContext};
use crate::controller::{
    Allowance, ExtraPacket, Receiver, SendContext, Sender, SenderStats, WireReceiver, WireSender,
};
use crate::pacer::{Pacer, WokenPacer};
use crate::packet::{Content, DataHeader, HeaderFields, SchemeFields};
use crate::source::{MediaConfig, Source};
use crate::time::{Duration, Instant};
use crate::units::serde_as::{kbps, ms};
use crate::units::{Bitrate, DataSize};
pub use crate::video::log::{FrameRecord, VideoLog, WallClock};
use crate::video::model::ModelCodecs;
use crate::video::sync::{
    BasePolicy, Delivery, Parity, SlotReport, SyncConfig, SyncReceiver, SyncSender, VideoPacket,
};
use crate::video::{DecodeError, Decoded, DiffHeader, DynCodec, DynDecoder, StateId, VideoCodecs};
pub use crate::video::{InjectedCodecs, VideoCodec};
use crate::wire::{Feedback, Message, Reader, WireError, Writer};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

impl PartialEq for VideoLog {
    /// Logs never make two configurations differ.
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// Each video packet's payload (a [`Piece`]), by packet sequence number, until the transport
/// (or, in the simulator, the receiving half) takes it.
type Store = Arc<Mutex<HashMap<u64, Vec<u8>>>>;

/// Bytes of a video packet on the wire besides its piece of the diff: IP/UDP (28), the RTP
/// header with wisp's extensions at their largest (80: 12 fixed, 4 of extension header, 61 of
/// elements with 16 bytes of scheme fields, padded to 64; `wisp_net::rtp`) and the piece header
/// ([`Piece::HEADER`]).
pub const WIRE_OVERHEAD: u64 = wire_overhead(crate::packet::IP_UDP_OVERHEAD.bytes());

/// [`WIRE_OVERHEAD`] on a path whose IP and UDP headers take `ip_udp_header` bytes (48 over
/// IPv6; [`SchemeContext::ip_udp_header`]).
pub const fn wire_overhead(ip_udp_header: u64) -> u64 {
    ip_udp_header + 80 + Piece::HEADER as u64
}

// A full piece (1200 bytes, the most `build` gives a packet) fits a 1500-byte MTU, over IPv6 too.
const _: () = assert!(1200 + wire_overhead(48) <= 1500);

/// One packet's share of a diff, as the packet's payload.
///
/// `state: u32`, `index: u16`, `count: u16` (piece `index` of `count` of the diff of `state`),
/// `age_us: u32` (how long before the packet left its picture was captured, µs), `len: u16`,
/// then `len` bytes of the diff; anything after them is padding. Big-endian.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece<'a> {
    pub state: StateId,
    pub index: u16,
    pub count: u16,
    pub age: Duration,
    pub bytes: &'a [u8],
}

impl<'a> Piece<'a> {
    /// Bytes ahead of the piece.
    pub const HEADER: usize = 14;

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u32(self.state.0);
        out.put_u16(self.index);
        out.put_u16(self.count);
        out.put_u32((self.age.as_nanos() / 1000).min(u64::from(u32::MAX)) as u32);
        let n = self.bytes.len().min(usize::from(u16::MAX));
        out.put_u16(n as u16);
        out.extend_from_slice(&self.bytes[..n]);
    }

    /// Parses a payload; never panics. A piece shorter than its length, an index outside its
    /// count or a count of 0 is an error.
    pub fn parse(buf: &'a [u8]) -> Result<Piece<'a>, WireError> {
        let mut r = Reader::new(buf);
        let state = StateId(r.u32()?);
        let index = r.u16()?;
        let count = r.u16()?;
        let age = Duration::from_micros(u64::from(r.u32()?));
        let len = r.u16()?;
        if count == 0 || index >= count {
            return Err(WireError::Invalid("piece index outside its count"));
        }
        let bytes = r.bytes(usize::from(len))?;
        Ok(Piece {
            state,
            index,
            count,
            age,
            bytes,
        })
    }
}

/// Who sets each frame's budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VideoRate {
    /// Sprout's window (eq. 6).
    #[default]
    Sprout,
    /// `gcc`'s (goog_cc's) encoder target × the frame interval; the packets paced as `gcc`'s.
    Gcc,
    /// `gcc-remb`'s (the 2016 receiver-side GCC's) target × the frame interval.
    GccRemb,
    /// `cbr`'s rate × the frame interval.
    Cbr,
}

/// How each frame's base is chosen: `paper` (§4's rule), `loss-aware` (§4's rule unless the
/// chain to the newest sent is too likely broken) or `conventional` (see [`BasePolicy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VideoBase {
    #[serde(alias = "explicit")]
    Paper,
    #[default]
    LossAware,
    Conventional,
}

impl VideoBase {
    fn policy(self) -> BasePolicy {
        match self {
            VideoBase::Paper => BasePolicy::Explicit,
            VideoBase::LossAware => BasePolicy::LossAware,
            VideoBase::Conventional => BasePolicy::Conventional,
        }
    }
}

/// What happens to a picture the window cannot hold even at the coarsest quantiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hold {
    /// Skipped at once (§4 as the issue reads it: "a frame that cannot make its deadline is
    /// skipped, not queued").
    #[default]
    #[serde(alias = "false")]
    Off,
    /// Held at the sender and retried whenever Sprout's window may have changed (a forecast
    /// or report arrives, a forecast tick passes) until the next capture supersedes it; coded
    /// late, it keeps its capture instant (the wait counts in its frame delay).
    #[serde(alias = "true")]
    On,
}

scheme_config! {
    /// Configuration of `alfalfa` and of the video layer under the other rate controls.
    #[derive(Clone, Debug, PartialEq)]
    pub struct AlfalfaConfig {
        /// Pictures captured per second.
        // The shipped clip's 25.
        pub fps: u32,
        /// A candidate anchor not acknowledged within this long is presumed lost, ms.
        #[serde(rename = "anchor-timeout-ms", with = "ms")]
        pub anchor_timeout: Duration,
        /// The share of Sprout's window one frame may take (1: all of it).
        // 1 by default, as §4 reads.
        pub frame_share: f64,
        /// Who sets the budget: `sprout` (its window), `gcc`, `gcc-remb` or `cbr` (rate ×
        /// frame interval).
        pub rate: VideoRate,
        /// `paper` (§4's base choice), `loss-aware` (§4's unless the chain is likely broken)
        /// or `conventional` (previous frame, intra on a break).
        pub base: VideoBase,
        /// `cbr`'s rate when `rate=cbr`, kbit/s.
        #[serde(rename = "cbr-kbps", with = "kbps")]
        pub cbr_rate: Bitrate,
        /// `loss-aware`: the least probability that the chain to the newest sent is intact.
        pub min_intact: f64,
        /// A frame the window cannot hold goes at the coarsest quantiser if the forecast
        /// drains it within this many ticks (0: skipped; at most the forecast's 8).
        // When the window cannot hold the coarsest diff, send it anyway if Sprout's forecast
        // drains it and the queue within this many ticks (0: skip the frame, as §4 reads).
        pub closed_ticks: u32,
        /// `on`: a picture the window cannot hold is held and retried whenever the window may
        /// have changed, until the next capture (its wait counts in its frame delay); `off`:
        /// skipped at once. `rate=sprout` only.
        // Under `gcc` and `cbr` the budget changes only at captures.
        pub hold: Hold,
        /// A frame's packets leave this long after its coding instant (the encoder's time; the
        /// simulator codes in zero time), ms. 0 over real sockets, where coding takes real time
        /// (`wisp send` reports its mean).
        #[serde(rename = "encode-ms", with = "ms")]
        pub encode_delay: Duration,
        /// An XOR parity packet per frame (recovers one lost packet): `off`, `on`, or `auto`
        /// (when the measured loss rate makes an unprotected frame too likely lost).
        // [`SyncConfig::parity`].
        pub parity: Parity,
        /// The codec: `model` (sizes and SSIM from a rate–quality table) or `vp8` (libvpx;
        /// needs --video CLIP).
        pub codec: VideoCodec,
        /// Sprout's configuration under `rate=sprout`.
        #[serde(skip)]
        pub sprout: SproutConfig,
        /// `gcc`'s configuration under `rate=gcc`.
        #[serde(skip)]
        pub gcc: GoogCcConfig,
        /// `gcc-remb`'s configuration under `rate=gcc-remb`.
        #[serde(skip)]
        pub gcc_remb: GccConfig,
        /// The implementation of `codec` when it is not the model (whose is built in): its
        /// [`VideoCodecs::name`] must be the codec's.
        #[serde(skip)]
        pub codecs: Option<InjectedCodecs>,
        /// Where the run's frames are logged (a fresh log if none is given).
        #[serde(skip)]
        pub log: Option<VideoLog>,
    }
}

impl Default for AlfalfaConfig {
    fn default() -> Self {
        AlfalfaConfig {
            fps: 25,
            anchor_timeout: SyncConfig::default().anchor_timeout,
            frame_share: 1.0,
            rate: VideoRate::Sprout,
            base: VideoBase::default(),
            cbr_rate: CbrConfig::default().rate,
            min_intact: SyncConfig::default().min_intact,
            closed_ticks: 0,
            hold: Hold::Off,
            encode_delay: Duration::ZERO,
            parity: Parity::Auto,
            codec: VideoCodec::Model,
            sprout: SproutConfig::default(),
            gcc: GoogCcConfig::default(),
            gcc_remb: GccConfig::default(),
            codecs: None,
            log: None,
        }
    }
}

impl Validate for AlfalfaConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        range(
            "fps",
            f64::from(self.fps),
            1.0,
            120.0,
            "1 to 120 pictures/s",
        )?;
        given.time_ms(
            "anchor-timeout-ms",
            self.anchor_timeout,
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
        )?;
        given.rate_kbps(
            "cbr-kbps",
            self.cbr_rate,
            1.0,
            1_000_000.0,
            "1 to 1000000 kbit/s",
        )?;
        range(
            "min-intact",
            self.min_intact,
            0.0,
            1.0,
            "a probability, 0 to 1",
        )?;
        range(
            "closed-ticks",
            f64::from(self.closed_ticks),
            0.0,
            8.0,
            "0 to 8 ticks",
        )?;
        given.time_ms("encode-ms", self.encode_delay, 0.0, 1000.0, "0 to 1000 ms")?;
        check(
            "hold",
            self.hold == Hold::Off || self.rate == VideoRate::Sprout,
            "off unless rate=sprout (under gcc and cbr a frame's budget changes only at \
             captures, so a held picture could never fit before the next one)",
        )
    }
}

/// The video layer driven by `scheme`'s rate control, for `--video`: `alfalfa` and its variants
/// as they are; `sprout` → `sprout-conventional` (with its Sprout parameters); `gcc` →
/// `gcc-video`, `gcc-remb` (any of its presets) → `gcc-video:rate=gcc-remb` (with their
/// parameters); `cbr` → `cbr-video` (with its rate). `None` for any other scheme.
pub fn video_variant(scheme: &super::SchemeConfig) -> Option<AlfalfaConfig> {
    use super::SchemeConfig as S;
    let base = AlfalfaConfig::default();
    Some(match scheme {
        S::Alfalfa(c) => (**c).clone(),
        S::Sprout(c) => AlfalfaConfig {
            sprout: (**c).clone(),
            base: VideoBase::Conventional,
            parity: Parity::Off,
            ..base
        },
        S::GoogCc(c) => AlfalfaConfig {
            gcc: (**c).clone(),
            rate: VideoRate::Gcc,
            base: VideoBase::Conventional,
            parity: Parity::Off,
            hold: Hold::Off,
            ..base
        },
        S::Gcc(c) => AlfalfaConfig {
            gcc_remb: (**c).clone(),
            rate: VideoRate::GccRemb,
            base: VideoBase::Conventional,
            parity: Parity::Off,
            hold: Hold::Off,
            ..base
        },
        S::Cbr(c) => AlfalfaConfig {
            cbr_rate: c.rate,
            rate: VideoRate::Cbr,
            base: VideoBase::Conventional,
            parity: Parity::Off,
            hold: Hold::Off,
            ..base
        },
        _ => return None,
    })
}

/// A scheme in its video form, as the tools see a scheme that codes a clip (`wisp run --video`,
/// `wisp send --video`) without naming it: the video layer under that scheme's rate control.
/// `alfalfa` and its variants are their own video form; `sprout`, `gcc`, `gcc-remb` and `cbr`
/// become `sprout-conventional`, `gcc-video` (`rate=gcc-remb` for `gcc-remb`) and `cbr-video`
/// with their parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct VideoForm(AlfalfaConfig);

impl VideoForm {
    /// The schemes that have a video form, for messages.
    pub const SCHEMES: &'static str =
        "alfalfa, sprout-conventional, gcc-video, cbr-video, sprout, gcc, gcc-remb or cbr";

    /// The video form of `scheme`, if it has one.
    pub fn of(scheme: &super::SchemeConfig) -> Option<VideoForm> {
        video_variant(scheme).map(VideoForm)
    }

    /// `scheme`'s configuration if it codes video as it is (alfalfa and its variants; not a
    /// scheme that only has a video form).
    pub fn already(scheme: &super::SchemeConfig) -> Option<VideoForm> {
        match scheme {
            super::SchemeConfig::Alfalfa(c) => Some(VideoForm((**c).clone())),
            _ => None,
        }
    }

    /// The video scheme's name (`alfalfa`, `gcc-video`, …).
    pub fn name(&self) -> &'static str {
        Scheme::name(&self.0)
    }

    /// The codec it asks for.
    pub fn codec(&self) -> VideoCodec {
        self.0.codec
    }

    /// Its capture rate, frames/s.
    pub fn fps(&self) -> u32 {
        self.0.fps
    }

    /// The simulated encoder time it charges per frame (`encode-ms`).
    pub fn encode_delay(&self) -> Duration {
        self.0.encode_delay
    }

    /// The scheme coding a clip at `fps` frames/s, with `codecs` for a codec wisp-core does not
    /// link (VP8), its frames logged into `log`.
    pub fn coding(
        mut self,
        fps: u32,
        codecs: Option<InjectedCodecs>,
        log: VideoLog,
    ) -> super::SchemeConfig {
        self.0.fps = fps;
        self.0.codecs = codecs;
        self.0.log = Some(log);
        super::SchemeConfig::Alfalfa(Box::new(self.0))
    }
}

/// `alfalfa`'s feedback: the rate control's own message (Sprout's forecast, GCC's reports) or
/// the video receiver's slot report.
#[derive(Clone, Debug, PartialEq)]
pub enum AlfalfaFeedback {
    Control(Feedback),
    Report(SlotReport),
}

impl Message for AlfalfaFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        match self {
            AlfalfaFeedback::Control(f) => out.extend_from_slice(f.as_bytes()),
            AlfalfaFeedback::Report(r) => r.emit(out),
        }
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match buf.first() {
            Some(&SlotReport::KIND) => SlotReport::parse(buf).map(AlfalfaFeedback::Report),
            _ => Feedback::from_bytes(buf).map(AlfalfaFeedback::Control),
        }
    }
}

/// The rate control's header fields, as bytes (whichever control it is).
#[derive(Clone, Copy, Debug, Default)]
pub struct ControlFields(SchemeFields);

impl HeaderFields for ControlFields {
    fn emit(&self) -> SchemeFields {
        self.0
    }
    fn parse(fields: &SchemeFields) -> Result<Self, WireError> {
        Ok(ControlFields(*fields))
    }
}

/// The rate control behind the video layer.
#[derive(Debug)]
enum Control {
    /// Sprout, typed: its window and forecast are the budget and "in time".
    Sprout(Box<SproutSender>),
    /// GCC or CBR: the budget is the target rate × the frame interval.
    Rate(Box<dyn WireSender + Send>),
}

impl Control {
    fn wire(&mut self) -> &mut dyn WireSender {
        match self {
            Control::Sprout(s) => s.as_mut(),
            Control::Rate(r) => r.as_mut(),
        }
    }
    fn wire_ref(&self) -> &dyn WireSender {
        match self {
            Control::Sprout(s) => s.as_ref(),
            Control::Rate(r) => r.as_ref(),
        }
    }
}

/// The sending half: the rate control and the state-sync sender.
#[derive(Debug)]
pub struct AlfalfaSender {
    control: Control,
    video: SyncSender<Box<dyn DynCodec>>,
    interval: Duration,
    next_frame: Option<Instant>,
    picture: u32,
    /// Packets to send: the piece, its bytes, its picture's capture instant and the instant it
    /// may leave (`encode-ms` after its coding).
    queue: VecDeque<(VideoPacket, Vec<u8>, Instant, Instant)>,
    queued_bytes: u64,
    frame_share: f64,
    closed_ticks: usize,
    /// `hold=on` (with Sprout's window).
    hold: bool,
    /// `encode-ms`.
    encode_delay: Duration,
    /// The picture the window could not hold, waiting for it to open (`hold=on`).
    held: Option<Picture>,
    /// Bytes a rate-controlled encoder may still spend (its buffer; unused with Sprout).
    credit: f64,
    popped: Option<(VideoPacket, Vec<u8>, Instant)>,
    store: Store,
    log: VideoLog,
    /// Each packet's bytes besides its piece of the diff ([`wire_overhead`] of the path's
    /// IP/UDP headers).
    overhead: u64,
    /// The pacer of the frames' packets under `rate=gcc` (at the control's pacing rate, on
    /// `gcc`'s 5-ms ticks), as the flow's own pacer paces a media source.
    pacing: Option<WokenPacer>,
}

/// A captured picture to code.
#[derive(Clone, Copy, Debug)]
struct Picture {
    source: u32,
    capture: Instant,
    /// The window was closed (0 bytes) at its capture instant.
    closed: bool,
}

/// The rate-control buffer of an encoder driven by a target bitrate (`gcc-video`, `cbr-video`).
const RATE_BUFFER: Duration = Duration::from_millis(1000);

impl AlfalfaSender {
    /// The bytes the rate control allows this frame, and whether the newest state sent is
    /// forecast to arrive in time.
    fn budget(&mut self, now: Instant) -> (u64, bool) {
        // (A rate-controlled encoder's credit accrues per capture: `capture` codes each
        // picture once, `hold` is refused without Sprout.)
        match &mut self.control {
            Control::Sprout(s) => {
                Sender::on_time(&mut **s, now);
                let open = s.window(now).saturating_sub(self.queued_bytes);
                (open, s.drains_within_lookahead(now))
            }
            Control::Rate(r) => {
                r.on_time(now);
                let target = match r.allowance(now) {
                    Allowance::Rate { target, .. } => target,
                    _ => Bitrate::ZERO,
                };
                // A rate-controlled encoder's buffer (libvpx's `rc_buf_sz`, 1000 ms as WebRTC
                // configures VP8): each picture adds target × interval, a coded frame takes its
                // wire bytes, and what a skipped or small frame leaves stays for the next ones,
                // up to one buffer. (Without it, a target below the coarsest frame's size would
                // skip every picture, and a control that needs traffic to raise its target, as
                // GCC does, would never send again.)
                let rate = target.bps() as f64 / 8.0;
                let per_frame = rate * self.interval.as_secs_f64();
                let buffer = (rate * RATE_BUFFER.as_secs_f64()).max(per_frame);
                self.credit = (self.credit + per_frame).min(buffer);
                ((self.credit as u64).saturating_sub(self.queued_bytes), true)
            }
        }
    }

    /// A picture is captured at `now`: a held one it supersedes is skipped; the new one is
    /// coded, or held (`hold=on`), or skipped.
    fn capture(&mut self, now: Instant) {
        if let Some(old) = self.held.take() {
            self.skip(old);
        }
        let picture = Picture {
            source: self.picture,
            capture: now,
            closed: false,
        };
        self.picture += 1;
        if let Ok(mut l) = self.log.0.lock() {
            l.captured += 1;
        }
        if let Err(open) = self.code(now, picture) {
            let picture = Picture {
                closed: open == 0,
                ..picture
            };
            if self.hold {
                self.held = Some(picture);
            } else {
                self.skip(picture);
            }
        }
    }

    /// A picture is not coded.
    fn skip(&mut self, picture: Picture) {
        if picture.closed
            && let Ok(mut l) = self.log.0.lock()
        {
            l.skipped_closed += 1;
        }
    }

    /// `hold=on`: the window may have changed; code the held picture if it now fits.
    fn retry_held(&mut self, now: Instant) {
        if let Some(picture) = self.held
            && self.code(now, picture).is_ok()
        {
            self.held = None;
            if let Ok(mut l) = self.log.0.lock() {
                l.held_sent += 1;
            }
        }
    }

    /// Codes `picture` at `now` within the window and queues its packets, or returns the
    /// window (bytes open) that could not hold it.
    fn code(&mut self, now: Instant, picture: Picture) -> Result<(), u64> {
        let (open, in_time) = self.budget(now);
        let mut window = (open as f64 * self.frame_share) as usize;
        let source = picture.source;
        // `closed-ticks`: a window too small for the coarsest diff, but the forecast drains it
        // (with the queue) within that many ticks: the coarsest diff goes (its wire bytes
        // without a parity packet: with one, the frame is still skipped).
        if self.closed_ticks > 0
            && let Control::Sprout(s) = &self.control
        {
            let (base, _) = self.video.choose_base(in_time);
            let payload = self.video.config().max_payload.max(1);
            let min = self
                .video
                .encoder_mut()
                .min_size(source, base)
                .map(|d| d + d.div_ceil(payload) * self.overhead as usize);
            if let Some(min) = min
                && window < min
            {
                let longer = s
                    .window_within(now, self.closed_ticks)
                    .saturating_sub(self.queued_bytes);
                if longer as usize >= min {
                    window = min;
                }
            }
        }
        let intra_before = self.video.stats().intra;
        let clock = self.log.0.lock().ok().and_then(|l| l.clock.clone());
        let started = clock.as_ref().map(|c| (c.0)());
        let Some(f) = self.video.on_frame(now, source, window, in_time) else {
            return Err(open);
        };
        if let (Some(c), Some(t)) = (&clock, started)
            && let Ok(mut l) = self.log.0.lock()
        {
            l.coding_frames += 1;
            l.coding_ns += (c.0)().saturating_sub(t).as_nanos();
        }
        if let Ok(mut l) = self.log.0.lock() {
            let h = &f.diff.header;
            l.frames.push(FrameRecord::coded(
                (h.target, h.base),
                (source, picture.capture),
                f.diff.bytes.len(),
                f.diff.ssim_db,
                self.video.stats().intra > intra_before,
            ));
            if f.diff.overshoot > 0 {
                l.over_budget += 1;
                l.overshoot_bytes += f.diff.overshoot as u64;
            }
        }
        let mut wire = 0;
        let ready = now.saturating_add(self.encode_delay);
        for &p in &f.packets {
            let bytes = f.payload(&p);
            wire += p.len as u64 + self.overhead;
            self.queue.push_back((p, bytes, picture.capture, ready));
        }
        self.queued_bytes += wire;
        if let Control::Rate(_) = self.control {
            self.credit = (self.credit - wire as f64).max(0.0);
        }
        Ok(())
    }
}

impl AlfalfaSender {
    /// The frames this half coded.
    pub fn log(&self) -> &VideoLog {
        &self.log
    }
}

impl Sender for AlfalfaSender {
    type Feedback = AlfalfaFeedback;
    type Fields = ControlFields;

    /// The payload of the packet numbered `seq` (its [`Piece`]), for the transport to send;
    /// `None` for a packet that carries none (the control's own). Taken once.
    fn take_payload(&mut self, seq: u64) -> Option<Vec<u8>> {
        self.store.lock().ok()?.remove(&seq)
    }

    fn on_packet_sent(
        &mut self,
        now: Instant,
        packet: &DataHeader,
        ctx: &SendContext,
    ) -> ControlFields {
        if let Some((p, bytes, capture)) = self.popped.take()
            && let Ok(mut s) = self.store.lock()
        {
            let mut payload = Vec::with_capacity(Piece::HEADER + bytes.len());
            Piece {
                state: p.state,
                index: p.index,
                count: p.count,
                age: now.saturating_duration_since(capture),
                bytes: &bytes,
            }
            .emit(&mut payload);
            s.insert(packet.seq, payload);
        }
        // The flight goes on while video packets are queued.
        let ctx = SendContext {
            backlog_after: Some(
                ctx.backlog_after.unwrap_or(DataSize::ZERO)
                    + DataSize::from_bytes(self.queued_bytes),
            ),
            ..*ctx
        };
        let mut p = *packet;
        self.control.wire().on_packet_sent(now, &mut p, &ctx);
        ControlFields(p.fields)
    }

    fn on_feedback(&mut self, now: Instant, feedback: &AlfalfaFeedback) {
        match feedback {
            // A control message that does not decode changes nothing (as below the scheme).
            AlfalfaFeedback::Control(f) => {
                let _ = self.control.wire().on_feedback(now, f);
            }
            AlfalfaFeedback::Report(r) => self.video.on_report(r),
        }
        // A forecast changes the window, a report the base (and so the coarsest diff).
        self.retry_held(now);
    }

    fn on_time(&mut self, now: Instant) {
        self.control.wire().on_time(now);
    }

    fn allowance(&self, now: Instant) -> Allowance {
        self.control.wire_ref().allowance(now)
    }

    fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket> {
        if let Some(x) = self.control.wire().poll_extra(now) {
            return Some(x);
        }
        let Some(front) = self.queue.front().filter(|q| q.3 <= now) else {
            if let Some(pacing) = &mut self.pacing {
                pacing.idle(now);
            }
            return None;
        };
        let size = front.0.len as u64 + self.overhead;
        if let Some(pacing) = &mut self.pacing {
            let rate = self.control.wire_ref().allowance(now).pacing();
            if !pacing.admit(now, DataSize::from_bytes(size), rate) {
                return None;
            }
        }
        let (p, bytes, capture, _) = self.queue.pop_front()?;
        self.queued_bytes -= size;
        let content = Content::Video {
            frame: p.state.0,
            last: p.is_last(),
            key: false,
        };
        self.popped = Some((p, bytes, capture));
        Some(ExtraPacket {
            size: DataSize::from_bytes(size),
            content,
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let frame = Some(self.next_frame.unwrap_or(Instant::ZERO));
        // The next coded frame's packets, once its coding time has passed (and the pacer lets
        // the next one go).
        let wake = self.pacing.as_ref().and_then(WokenPacer::wake);
        let ready = self.queue.front().map(|q| wake.map_or(q.3, |w| w.max(q.3)));
        [self.control.wire_ref().poll_timeout(), frame, ready]
            .into_iter()
            .flatten()
            .min()
    }

    fn on_timeout(&mut self, now: Instant) {
        if self
            .control
            .wire_ref()
            .poll_timeout()
            .is_some_and(|t| t <= now)
        {
            self.control.wire().on_timeout(now);
        }
        let due = *self.next_frame.get_or_insert(now);
        if due <= now {
            self.capture(now);
            self.next_frame = Some(due + self.interval);
        } else {
            // Sprout's window changes at its forecast's ticks, which are among the control's
            // timeouts (so no deadline of its own is needed).
            self.retry_held(now);
        }
    }

    fn stats(&self) -> SenderStats {
        self.control.wire_ref().stats()
    }
}

/// The receiving half: the rate control's receiver and the state-sync receiver.
#[derive(Debug)]
pub struct AlfalfaReceiver {
    control: Box<dyn WireReceiver + Send>,
    video: SyncReceiver<Box<dyn DynDecoder>>,
    store: Store,
    log: VideoLog,
    reports: VecDeque<SlotReport>,
    /// The capture instant of each diff being reassembled (from its pieces' age).
    arriving: BTreeMap<StateId, Instant>,
    /// The codec: the quality of a decoded frame against its source.
    codecs: Arc<dyn VideoCodecs>,
    /// A state was shown (so a later diff on state 0 is an intra frame).
    shown_any: bool,
}

/// Diffs being reassembled that the receiver keeps track of, at most.
const MAX_ARRIVING: usize = 256;

impl AlfalfaReceiver {
    /// The frames this half decoded (and, in the simulator, the sender's).
    pub fn log(&self) -> &VideoLog {
        &self.log
    }

    /// Logs a complete diff (`header`, `bytes` long; `ssim_db` as this receiver measured it,
    /// NaN if not shown): sets its display instant, or (when the sender's log is elsewhere)
    /// adds its row.
    fn record(
        &mut self,
        state: StateId,
        display: Option<Instant>,
        ssim_db: f64,
        header: Option<DiffHeader>,
        bytes: usize,
    ) {
        let capture = self.arriving.remove(&state).unwrap_or_default();
        // Older diffs are abandoned (the receiver takes them in order).
        self.arriving = self.arriving.split_off(&state);
        let Ok(mut l) = self.log.0.lock() else {
            return;
        };
        // Frames are logged in state order: a binary search finds the row.
        let r = match l.frames.binary_search_by_key(&state, |f| f.state) {
            Ok(r) => {
                // The sender's row (the simulator): its quality is the mirror decoder's.
                if display.is_some() && l.frames[r].ssim_db.to_bits() != ssim_db.to_bits() {
                    l.ssim_mismatch += 1;
                }
                r
            }
            Err(r) => {
                let base = header.map_or(StateId::INITIAL, |h| h.base);
                let source = header.map_or(0, |h| h.source);
                l.captured = l.captured.max(u64::from(source) + 1);
                let intra = base == StateId::INITIAL && self.shown_any;
                let coded =
                    FrameRecord::coded((state, base), (source, capture), bytes, ssim_db, intra);
                l.frames.insert(r, coded);
                r
            }
        };
        match display {
            Some(t) => l.frames[r].display = Some(t),
            None => l.frames[r].missing_base = true,
        }
    }
}

impl Receiver for AlfalfaReceiver {
    type Feedback = AlfalfaFeedback;
    type Fields = ControlFields;

    /// The payload that arrived in the packet numbered `seq`, before it is delivered.
    fn on_payload(&mut self, seq: u64, payload: &[u8]) {
        if let Ok(mut s) = self.store.lock() {
            s.insert(seq, payload.to_vec());
        }
    }

    fn video_log(&self) -> Option<&VideoLog> {
        Some(&self.log)
    }

    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, _fields: &ControlFields) {
        // The fields are the control's own bytes, still in `packet.fields`; a packet whose
        // fields the control cannot decode is not delivered to it (as below the scheme).
        let _ = self.control.on_packet_received(now, packet);
        let Some(payload) = self
            .store
            .lock()
            .ok()
            .and_then(|mut s| s.remove(&packet.seq))
        else {
            return;
        };
        let Ok(piece) = Piece::parse(&payload) else {
            if let Ok(mut l) = self.log.0.lock() {
                l.bad_pieces += 1;
            }
            return;
        };
        if self.arriving.len() < MAX_ARRIVING || self.arriving.contains_key(&piece.state) {
            self.arriving.insert(
                piece.state,
                Instant::from_nanos(
                    packet
                        .send_time
                        .as_nanos()
                        .saturating_sub(piece.age.as_nanos()),
                ),
            );
        }
        match self
            .video
            .on_packet(piece.state, piece.index, piece.count, piece.bytes)
        {
            Some(Delivery::Shown {
                state,
                source,
                output,
                header,
                bytes,
            }) => {
                let ssim_db = self.codecs.ssim_db(&output, source);
                if let Ok(mut l) = self.log.0.lock() {
                    if let Decoded::Picture { key_frame, .. } = output {
                        l.key_frames += u64::from(key_frame);
                        if let Some(p) = l.pictures.as_mut() {
                            p.insert(state, output);
                        }
                    }
                    l.codecs.get_or_insert_with(|| self.codecs.clone());
                }
                self.record(state, Some(now), ssim_db, Some(header), bytes);
                self.shown_any = true;
                self.reports.push_back(self.video.report());
            }
            Some(Delivery::Refused {
                state,
                error,
                header,
                bytes,
            }) => {
                if matches!(error, DecodeError::MissingBase(_)) {
                    if let Ok(mut l) = self.log.0.lock() {
                        l.missing_base += 1;
                    }
                    self.record(state, None, f64::NAN, header, bytes);
                }
                self.reports.push_back(self.video.report());
            }
            None => {}
        }
    }

    fn poll_feedback(&mut self, now: Instant) -> Option<AlfalfaFeedback> {
        if let Some(f) = self.control.poll_feedback(now) {
            return Some(AlfalfaFeedback::Control(f));
        }
        self.reports.pop_front().map(AlfalfaFeedback::Report)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.control.poll_timeout()
    }

    fn on_timeout(&mut self, now: Instant) {
        self.control.on_timeout(now);
    }
}

impl Scheme for AlfalfaConfig {
    type Sender = Box<AlfalfaSender>;
    type Receiver = Box<AlfalfaReceiver>;
    const NAMES: &'static [SchemeInfo] = &[
        SchemeInfo {
            name: "alfalfa",
            summary: "Alfalfa's explicit-state video on Sprout (model codec, or VP8 with codec=vp8)",
        },
        SchemeInfo {
            name: "sprout-conventional",
            summary: "the same video on Sprout's window with a conventional codec (no base choice)",
        },
        SchemeInfo {
            name: "gcc-video",
            summary: "the same video at gcc's encoder target, paced as gcc's (rate=gcc-remb: gcc-remb's target), conventional codec",
        },
        SchemeInfo {
            name: "cbr-video",
            summary: "the same video at a constant rate, conventional codec",
        },
    ];

    fn named(name: &str) -> Option<Self> {
        let (rate, base) = match name {
            "alfalfa" => (VideoRate::Sprout, VideoBase::default()),
            "sprout-conventional" => (VideoRate::Sprout, VideoBase::Conventional),
            "gcc-video" => (VideoRate::Gcc, VideoBase::Conventional),
            "cbr-video" => (VideoRate::Cbr, VideoBase::Conventional),
            _ => return None,
        };
        // The conventional codecs send no parity (as before the extension); `alfalfa` measures
        // the loss rate and protects its frames when it is high (`parity=auto`).
        let parity = if base == VideoBase::Conventional {
            Parity::Off
        } else {
            Parity::Auto
        };
        // `hold` needs a budget that changes between captures: Sprout's window.
        let hold = if rate == VideoRate::Sprout {
            AlfalfaConfig::default().hold
        } else {
            Hold::Off
        };
        Some(AlfalfaConfig {
            rate,
            base,
            parity,
            hold,
            ..AlfalfaConfig::default()
        })
    }

    fn name(&self) -> &'static str {
        match (self.rate, self.base) {
            (VideoRate::Sprout, VideoBase::Paper | VideoBase::LossAware) => "alfalfa",
            (VideoRate::Sprout, VideoBase::Conventional) => "sprout-conventional",
            (VideoRate::Gcc | VideoRate::GccRemb, _) => "gcc-video",
            (VideoRate::Cbr, _) => "cbr-video",
        }
    }

    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let mtu = ctx.mtu();
        let ip_udp_header = ctx.ip_udp_header();
        // The configuration's own codec implementation, else the one the context offers (a
        // receiving tool's, for whatever sender arrives).
        let given = self.codecs.as_ref().or(ctx.codecs.as_ref());
        let codecs: Arc<dyn VideoCodecs> = match (self.codec, given) {
            (VideoCodec::Model, _) => Arc::new(ModelCodecs::default()),
            (c, Some(InjectedCodecs(given))) if given.name() == c.name() => given.clone(),
            (c, _) => {
                return Err(BuildError::Unavailable(format!(
                    "codec={} needs the clip to code: give --video CLIP (and `wisp recv` the \
                     same clip with --video)",
                    c.name()
                )));
            }
        };
        let encoder = codecs.encoder().map_err(BuildError::Unavailable)?;
        let decoder = codecs.decoder().map_err(BuildError::Unavailable)?;
        let store = Store::default();
        let log = self.log.clone().unwrap_or_default();
        let overhead = wire_overhead(ip_udp_header.bytes());
        let sync = SyncConfig {
            max_payload: (mtu.bytes().saturating_sub(overhead) as usize).clamp(1, 1200),
            packet_overhead: overhead as usize,
            anchor_timeout: self.anchor_timeout,
            policy: self.base.policy(),
            min_intact: self.min_intact,
            parity: self.parity,
        };
        let (control, control_rx): (Control, Box<dyn WireReceiver + Send>) = match self.rate {
            VideoRate::Sprout => (
                Control::Sprout(Box::new(SproutSender::new(&self.sprout, mtu))),
                Box::new(SproutReceiver::new(&self.sprout, mtu, &ctx.tables)),
            ),
            VideoRate::Gcc => {
                let h = self.gcc.build(ctx)?;
                (Control::Rate(Box::new(h.sender)), Box::new(h.receiver))
            }
            VideoRate::GccRemb => {
                let h = self.gcc_remb.build(ctx)?;
                (Control::Rate(Box::new(h.sender)), Box::new(h.receiver))
            }
            VideoRate::Cbr => {
                let h = CbrConfig::default().rate(self.cbr_rate).build(ctx)?;
                (Control::Rate(Box::new(h.sender)), Box::new(h.receiver))
            }
        };
        let sender = AlfalfaSender {
            control,
            video: SyncSender::new(encoder, sync),
            interval: Duration::from_nanos(1_000_000_000 / u64::from(self.fps.max(1))),
            next_frame: None,
            picture: 0,
            queue: VecDeque::new(),
            queued_bytes: 0,
            frame_share: self.frame_share,
            closed_ticks: self.closed_ticks as usize,
            hold: self.hold == Hold::On && self.rate == VideoRate::Sprout,
            held: None,
            encode_delay: self.encode_delay,
            credit: 0.0,
            popped: None,
            store: store.clone(),
            log: log.clone(),
            overhead,
            pacing: (self.rate == VideoRate::Gcc)
                .then(|| WokenPacer::new(Pacer::periodic(self.gcc.interval))),
        };
        let receiver = AlfalfaReceiver {
            control: control_rx,
            video: SyncReceiver::new(decoder),
            store,
            log,
            reports: VecDeque::new(),
            arriving: BTreeMap::new(),
            codecs,
            shown_any: false,
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
            source: Source::media(silent, None, mtu, ip_udp_header),
            pacer: Pacer::default(),
            mtu,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::SchemeConfig;
    use proptest::prelude::*;

    #[test]
    fn pieces_round_trip_and_bad_ones_are_errors() {
        let bytes: Vec<u8> = (0..300u16).map(|i| i as u8).collect();
        let p = Piece {
            state: StateId(77),
            index: 2,
            count: 3,
            age: Duration::from_micros(1234),
            bytes: &bytes,
        };
        let mut b = vec![];
        p.emit(&mut b);
        assert_eq!(b.len(), Piece::HEADER + 300);
        assert_eq!(Piece::parse(&b).unwrap(), p);
        // Padding after the piece (a packet larger than its piece) is ignored.
        let mut padded = b.clone();
        padded.resize(b.len() + 50, 0);
        assert_eq!(Piece::parse(&padded).unwrap(), p);
        // Every truncation is an error.
        for n in 0..b.len() {
            assert!(Piece::parse(&b[..n]).is_err(), "{n} bytes");
        }
        // An index outside its count, a count of 0.
        for (i, c) in [(3u16, 3u16), (0, 0)] {
            let mut bad = b.clone();
            bad[4..6].copy_from_slice(&i.to_be_bytes());
            bad[6..8].copy_from_slice(&c.to_be_bytes());
            assert!(Piece::parse(&bad).is_err(), "{i} of {c}");
        }
        // All zeros (a packet with no piece) is not a piece.
        assert!(Piece::parse(&[0; 40]).is_err());
    }

    proptest! {
        /// Any payloads, in any packets: the receiving half counts what is not a piece and
        /// never panics.
        #[test]
        fn hostile_payloads_are_counted_never_a_panic(
            payloads in proptest::collection::vec(
                proptest::collection::vec(any::<u8>(), 0..80), 0..40),
            seeds in proptest::collection::vec(any::<u64>(), 40),
        ) {
            // Sprout's forecast table, made once for every case.
            static TABLES: std::sync::OnceLock<crate::tables::Tables> = std::sync::OnceLock::new();
            let ctx = SchemeContext {
                tables: TABLES.get_or_init(crate::tables::Tables::new).clone(),
                ..SchemeContext::new()
            };
            let h = AlfalfaConfig::default().build(ctx).unwrap();
            let mut rx = h.receiver;
            for (i, p) in payloads.iter().enumerate() {
                let header = DataHeader {
                    seq: i as u64,
                    send_time: Instant::from_nanos(seeds[i] % 1_000_000_000),
                    content: Content::Video { frame: 1, last: false, key: false },
                    ..Default::default()
                };
                WireReceiver::on_payload(&mut rx, header.seq, p);
                Receiver::on_packet_received(
                    &mut *rx,
                    Instant::from_millis(i as u64),
                    &header,
                    &ControlFields::default(),
                );
                let _ = Receiver::poll_feedback(&mut *rx, Instant::from_millis(i as u64));
            }
            let bad = payloads.iter().filter(|p| Piece::parse(p).is_err()).count();
            prop_assert_eq!(rx.log().bad_pieces(), bad as u64);
        }
    }

    /// The real path's two halves (two builds, two logs, the payloads handed across as over
    /// UDP), every frame protected by a parity packet and its first packet lost: the receiver
    /// rebuilds each diff, and its row has the sender's bytes (the diff as coded, not the
    /// bytes of the packets that carried it, parity included), source, base and quality.
    #[test]
    fn the_receivers_row_is_the_diff_as_coded_when_parity_rebuilt_it() {
        let mut config = AlfalfaConfig::named("cbr-video").unwrap();
        config.parity = Parity::On;
        let (tx_log, rx_log) = (VideoLog::default(), VideoLog::default());
        let half = |log: &VideoLog| {
            AlfalfaConfig {
                log: Some(log.clone()),
                ..config.clone()
            }
            .build(SchemeContext::new())
            .unwrap()
        };
        let mut tx = half(&tx_log).sender;
        let mut rx = half(&rx_log).receiver;
        let mut seq = 0;
        let mut dropped = 0;
        for k in 0..25u64 {
            let now = Instant::from_millis(40 * k);
            Sender::on_timeout(&mut *tx, now);
            while let Some(x) = Sender::poll_extra(&mut *tx, now) {
                let h = DataHeader {
                    seq,
                    send_time: now,
                    size: x.size,
                    content: x.content,
                    ..Default::default()
                };
                seq += 1;
                Sender::on_packet_sent(&mut *tx, now, &h, &SendContext::default());
                let payload = WireSender::take_payload(&mut tx, h.seq).unwrap();
                if Piece::parse(&payload).unwrap().index == 0 {
                    dropped += 1;
                    continue;
                }
                let at = now + Duration::from_millis(10);
                WireReceiver::on_payload(&mut rx, h.seq, &payload);
                Receiver::on_packet_received(&mut *rx, at, &h, &ControlFields::default());
            }
        }
        let (sent, got) = (tx_log.frames(), rx_log.frames());
        assert!(
            got.len() >= 20 && dropped >= got.len(),
            "{} {dropped}",
            got.len()
        );
        for g in &got {
            let s = sent.iter().find(|s| s.state == g.state).unwrap();
            assert!(g.display.is_some(), "{g:?}");
            assert_eq!(
                (g.bytes, g.source, g.base, g.ssim_db),
                (s.bytes, s.source, s.base, s.ssim_db)
            );
        }
    }

    #[test]
    fn feedback_round_trips_both_kinds() {
        for m in [
            AlfalfaFeedback::Control(Feedback::encode(
                &super::super::sprout::wire::SproutForecast {
                    received_or_lost: 7,
                    cumulative_bytes: vec![1500, 3000],
                },
            )),
            AlfalfaFeedback::Report(SlotReport::default()),
        ] {
            let mut b = vec![];
            m.emit(&mut b);
            assert_eq!(AlfalfaFeedback::parse(&b).unwrap(), m);
        }
        assert!(AlfalfaFeedback::parse(&[15, 0, 0]).is_err());
        assert!(AlfalfaFeedback::parse(&[]).is_err());
    }

    /// Drives a sending half by hand as the flow driver does (a transport's loop: feedback,
    /// then everything `poll_extra` releases); returns the video pieces sent now as (state, age).
    struct Drive {
        tx: Box<AlfalfaSender>,
        seq: u64,
        bytes: u64,
    }

    impl Drive {
        fn new(hold: Hold, log: &VideoLog) -> Self {
            Self::with(hold, Duration::ZERO, log)
        }
        fn with(hold: Hold, encode_delay: Duration, log: &VideoLog) -> Self {
            let config = AlfalfaConfig {
                hold,
                encode_delay,
                log: Some(log.clone()),
                ..AlfalfaConfig::named("alfalfa").unwrap()
            };
            Drive {
                tx: config.build(SchemeContext::new()).unwrap().sender,
                seq: 0,
                bytes: 0,
            }
        }
        fn send(&mut self, now: Instant) -> Vec<(StateId, Duration)> {
            if Sender::poll_timeout(&*self.tx).is_some_and(|t| t <= now) {
                Sender::on_timeout(&mut *self.tx, now);
            }
            let mut out = vec![];
            while let Some(x) = Sender::poll_extra(&mut *self.tx, now) {
                let h = DataHeader {
                    seq: self.seq,
                    byte_seq: self.bytes,
                    send_time: now,
                    size: x.size,
                    content: x.content,
                    ..Default::default()
                };
                self.seq += 1;
                self.bytes += x.size.bytes();
                Sender::on_packet_sent(&mut *self.tx, now, &h, &SendContext::default());
                if let Some(p) = WireSender::take_payload(&mut self.tx, h.seq) {
                    let piece = Piece::parse(&p).unwrap();
                    out.push((piece.state, piece.age));
                }
            }
            out
        }
        /// A forecast that everything sent has arrived and `per_tick` bytes drain each tick.
        fn forecast(&mut self, now: Instant, per_tick: u32) {
            let f = super::super::sprout::wire::SproutForecast {
                received_or_lost: self.bytes,
                cumulative_bytes: (1..=8).map(|k| k * per_tick).collect(),
            };
            Sender::on_feedback(
                &mut *self.tx,
                now,
                &AlfalfaFeedback::Control(Feedback::encode(&f)),
            );
        }
    }

    /// `hold=on`: a picture captured on a closed window is coded when a forecast opens it,
    /// before the next capture, and keeps its capture instant (the piece's age, from which a
    /// receiver over sockets dates the capture, counts the wait); `hold=off` skips it. A held
    /// picture the next capture finds uncoded is skipped.
    #[test]
    fn a_held_picture_is_coded_when_the_window_opens_and_keeps_its_capture_instant() {
        let ms = Instant::from_millis;
        for hold in [Hold::Off, Hold::On] {
            let log = VideoLog::default();
            let mut d = Drive::new(hold, &log);
            // No forecast yet: the window is closed at the first capture.
            assert!(d.send(ms(0)).is_empty());
            assert_eq!(log.captured(), 1);
            assert!(log.frames().is_empty());
            d.forecast(ms(15), 4000);
            let sent = d.send(ms(15));
            match hold {
                Hold::Off => {
                    assert!(sent.is_empty(), "{sent:?}");
                    assert_eq!((log.skipped_closed(), log.held_sent()), (1, 0));
                }
                Hold::On => {
                    assert!(!sent.is_empty());
                    assert!(
                        sent.iter()
                            .all(|&(_, age)| age == Duration::from_millis(15))
                    );
                    let f = log.frames();
                    assert_eq!((f.len(), f[0].source, f[0].capture), (1, 0, ms(0)));
                    assert_eq!((log.skipped_closed(), log.held_sent()), (0, 1));
                }
            }
        }
        // Superseded: the window stays closed (a forecast of nothing) until the next capture.
        let log = VideoLog::default();
        let mut d = Drive::new(Hold::On, &log);
        d.send(ms(0));
        d.forecast(ms(15), 0);
        assert!(d.send(ms(15)).is_empty());
        d.forecast(ms(39), 0);
        assert!(d.send(ms(40)).is_empty());
        assert_eq!(
            (log.captured(), log.skipped_closed(), log.held_sent()),
            (2, 1, 0)
        );
        // The second picture is held; a forecast opens the window for it.
        d.forecast(ms(50), 4000);
        let sent = d.send(ms(50));
        assert!(!sent.is_empty());
        assert!(
            sent.iter()
                .all(|&(_, age)| age == Duration::from_millis(10))
        );
        let f = log.frames();
        assert_eq!((f.len(), f[0].source, f[0].capture), (1, 1, ms(40)));
        assert_eq!(log.held_sent(), 1);
    }

    #[test]
    fn hold_is_refused_without_sprouts_window() {
        assert!("alfalfa:hold=on".parse::<SchemeConfig>().is_ok());
        assert!(
            "sprout-conventional:hold=on"
                .parse::<SchemeConfig>()
                .is_ok()
        );
        for s in [
            "gcc-video:hold=on",
            "cbr-video:hold=on",
            "alfalfa:rate=cbr,hold=on",
        ] {
            let e = s.parse::<SchemeConfig>().unwrap_err().to_string();
            assert!(e.contains("hold"), "{s}: {e}");
        }
        assert!("gcc-video:hold=off".parse::<SchemeConfig>().is_ok());
    }

    /// `encode-ms`: a coded frame's packets leave that long after its coding instant (the
    /// sender asks to be woken then), and their age counts it.
    #[test]
    fn encode_ms_delays_a_frames_packets_after_its_coding() {
        let ms = Instant::from_millis;
        for delay in [0, 5] {
            let log = VideoLog::default();
            let mut d = Drive::with(Hold::Off, Duration::from_millis(delay), &log);
            d.send(ms(0));
            d.forecast(ms(10), 4000);
            d.send(ms(10));
            // The next capture is coded at once; its packets wait for the encoder.
            let now = ms(40);
            let sent = d.send(now);
            assert_eq!(log.frames().len(), 1);
            if delay == 0 {
                assert!(!sent.is_empty() && sent.iter().all(|&(_, a)| a.is_zero()));
                continue;
            }
            assert!(sent.is_empty(), "{sent:?}");
            let ready = ms(40 + delay);
            assert_eq!(Sender::poll_timeout(&*d.tx), Some(ready));
            let sent = d.send(ready);
            assert!(!sent.is_empty());
            assert!(sent.iter().all(|&(_, a)| a == Duration::from_millis(delay)));
        }
        assert!("alfalfa:encode-ms=1001".parse::<SchemeConfig>().is_err());
    }

    /// A log made to measure coding time times each coded frame's coding call; a plain one
    /// (the simulator's) reads no wall clock.
    #[test]
    fn only_a_measuring_log_times_the_coding_calls() {
        let ms = Instant::from_millis;
        for (log, measured) in [
            (VideoLog::default(), false),
            (
                VideoLog::measuring_coding_time(WallClock(Arc::new(|| Duration::from_millis(3)))),
                true,
            ),
        ] {
            let mut d = Drive::new(Hold::Off, &log);
            d.send(ms(0));
            d.forecast(ms(10), 4000);
            d.send(ms(40));
            assert_eq!(log.frames().len(), 1);
            assert_eq!(log.coding_time().map(|(_, n)| n), measured.then_some(1));
        }
    }

    /// The packets `scheme` sends in its first second with no feedback, polled at its wake-ups
    /// (`late` after each, as a real clock).
    fn first_second(scheme: &str, late: Duration) -> Vec<DataHeader> {
        let c: SchemeConfig = scheme.parse().unwrap();
        let (mut flow, _rx) = c.build(crate::scheme::SchemeContext::new()).unwrap();
        let (mut now, end) = (Instant::ZERO, Instant::from_secs(1));
        let mut sent = vec![];
        while now < end {
            while let Some(h) = flow.poll_transmit(now) {
                sent.push(h);
            }
            let wake = flow.poll_timeout().unwrap();
            now = wake.max(now + Duration::from_nanos(1)) + late;
        }
        sent
    }

    /// `gcc-video` is `gcc`'s video form: its initial probe clusters leave among the frames,
    /// and each frame's packets are paced on 5-ms ticks at 2.5 × the target (300 kbit/s before
    /// any feedback), where under `gcc-remb` a frame leaves at once.
    #[test]
    fn gcc_video_probes_and_paces_its_frames_as_gcc_does() {
        let video = |h: &&DataHeader| matches!(h.content, Content::Video { .. });
        // Each frame's spread: from its first packet's departure to its last's, ms.
        let spreads = |sent: &[DataHeader]| {
            let mut frames: BTreeMap<u32, (Instant, Instant)> = BTreeMap::new();
            for h in sent.iter().filter(video) {
                let Content::Video { frame, .. } = h.content else {
                    continue;
                };
                let e = frames.entry(frame).or_insert((h.send_time, h.send_time));
                e.1 = h.send_time;
            }
            frames
                .values()
                .map(|(a, b)| (*b - *a).as_secs_f64() * 1e3)
                .collect::<Vec<f64>>()
        };
        let sent = first_second("gcc-video", Duration::ZERO);
        let probes = sent.iter().filter(|h| h.content == Content::Probe).count();
        let frames = spreads(&sent);
        assert!(probes >= 10, "{probes} probe packets");
        assert!(frames.len() >= 24, "{} frames", frames.len());
        assert!(
            sent.iter()
                .filter(video)
                .all(|h| h.send_time.as_nanos() % 5_000_000 == 0)
        );
        // No 100 ms carries more video than 750 kbit/s allows, with a tick's burst and a packet.
        let bytes: Vec<(Instant, u64)> = sent
            .iter()
            .filter(video)
            .map(|h| (h.send_time, h.size.bytes()))
            .collect();
        for (i, &(t, _)) in bytes.iter().enumerate() {
            let window: u64 = bytes[i..]
                .iter()
                .take_while(|(u, _)| *u < t + Duration::from_millis(100))
                .map(|(_, b)| b)
                .sum();
            assert!(
                window <= 9375 + 469 + 1300,
                "{window} B in 100 ms from {t:?}"
            );
        }
        // Every frame of several packets takes a tick or more (1 of 25 here is one packet).
        let several: Vec<f64> = frames.iter().copied().filter(|&s| s > 0.0).collect();
        assert!(several.len() >= 20, "{frames:?}");
        assert!(several.iter().all(|&s| s >= 5.0), "{frames:?}");
        // The 2016 form: no probes, each frame's packets at once.
        let remb = first_second("gcc-video:rate=gcc-remb", Duration::ZERO);
        assert!(remb.iter().all(|h| h.content != Content::Probe));
        assert!(remb.iter().filter(video).count() >= 40);
        assert!(spreads(&remb).iter().all(|&s| s == 0.0));
        // A real clock's late wake-ups neither stall the paced frames nor lose them.
        let late = first_second("gcc-video", Duration::from_micros(37));
        let n = |s: &[DataHeader]| s.iter().filter(video).count();
        assert!(
            n(&late).abs_diff(n(&sent)) <= n(&sent) / 20,
            "{} vs {}",
            n(&late),
            n(&sent)
        );
    }
}
