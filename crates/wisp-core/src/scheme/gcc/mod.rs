//! `gcc-remb`, `gcc-grouping`, `gcc-trendline` — Google Congestion Control as the ANRW'16 paper
//! ran it (receiver-side estimation, REMB), and the packet-grouping pre-filter. (`gcc` is
//! libwebrtc's current send-side controller, [`crate::scheme::goog_cc`], built on this module's
//! pieces.)
//!
//! Carlucci, De Cicco, Holmer, Mascolo, "Making Google Congestion Control robust over Wi-Fi
//! networks using packet grouping", ANRW 2016 (GCC as its §3 describes it, after Carlucci et
//! al., MMSys 2016), and the pre-filter of its §5.
//!
//! **Sender** ([`sender`]): the loss-based controller of eq. (1) on the receiver reports, at
//! libwebrtc's cadence (an increase at most once a second, a decrease at most once per
//! 300 ms + RTT),
//! A = min(A_s, A_r); a media source (30 frames/s, 50–2500 kbit/s, [`crate::source::MediaSource`])
//! encodes at A, and a pacer releases groups every ΔT = 5 ms ([`crate::pacer::Pacer::periodic`]).
//!
//! **Receiver** ([`receiver`]): groups of packets ([`grouping`]); the one-way delay variation
//! between groups,
//!
//! ```text
//! d_m(t_i) = (t_r(i) − t_r(i−1)) − (t_s(i) − t_s(i−1))                          (2)
//! d(t_i)   = m(t_i) + n(t_i)                                                    (3)
//! ```
//!
//! the arrival-time filter estimating m ([`arrival`], on [`kalman`] or [`trendline`]), the over-use detector
//! with the adaptive threshold γ ([`overuse`]), the remote rate controller's
//! increase/decrease/hold machine with η, α, the 1.5·R cap and R measured over 500 ms
//! ([`rate_control`]), and REMB feedback of A_r with receiver reports.
//!
//! **Pre-filter** ([`grouping::Prefilter`]): Algorithm 1 of §5.1 (`gcc-grouping`), or libwebrtc's
//! production form (`prefilter=libwebrtc`: 5 ms burst threshold, 100 ms maximum burst).
//!
//! *Caution.* Algorithm 1 as written bounds neither the length nor the duration of a merged
//! group. Packets of a standing queue arrive less than ΔT apart and faster than they were sent,
//! so each is merged into the current group; a queue that stood across the gaps between video
//! frames would make one group that never closes, leaving the arrival-time filter without
//! samples. While audio packets (sent between the frames) were delay samples, they bridged the
//! gaps, and on a constant 2 Mbit/s link GCC went blind with seconds of delay; with the
//! estimator on video alone, as libwebrtc's, the queue drains between frames and Algorithm 1
//! keeps the delay as low as the other forms (wisp-sim's test
//! `algorithm_1_keeps_working_on_a_link_gcc_can_fill`). libwebrtc's 100-ms cap on a merged burst
//! removes the hazard altogether; prefer `prefilter=libwebrtc` outside reproductions.
//!
//! Modules, in the order a packet meets them (each pure arithmetic on the values the caller
//! passes in, with explicit times; no allocation after construction):
//!
//! * [`grouping`]: packets → groups → [`GroupDelta`]s (and the pre-filter);
//! * [`arrival`]: the arrival-time filters turning deltas into m — libwebrtc's two-state
//!   over-use estimator and the draft's scalar filter, both on the small linear Kalman filter of
//!   [`kalman`], and libwebrtc's [`trendline`] estimator;
//! * [`overuse`]: the adaptive threshold γ and the over-use detector;
//! * [`rate`]: the windowed counter of the receiving rate R; [`rate_control`]: A_r;
//! * [`receiver`], [`sender`]: the two halves;
//! * [`twcc`]: `gcc-twcc`, the 2016 send-side form (the same grouping, trendline filter, detector
//!   and rate controller at the sender, on transport-wide feedback), and what it shares with
//!   `gcc`: the feedback [`adapter`] and the [`delay`] detector.
//!
//! Schemes and parameters (`NAME[:KEY=VALUE,…]`):
//!
//! | name | default |
//! |---|---|
//! | `gcc-remb` | Kalman filter, no pre-filter |
//! | `gcc-grouping` | Kalman filter, Algorithm 1 |
//! | `gcc-trendline` | libwebrtc's trendline estimator, no pre-filter |
//!
//! | key | values (default) |
//! |---|---|
//! | `prefilter` | `off`, `paper`, `libwebrtc` |
//! | `filter` | `kalman` (libwebrtc's two-state filter), `scalar` (eq. 3 as written, the draft's), `trendline` |
//! | `threshold` | `libwebrtc` (k_u 0.0087, k_d 0.039, γ against min(n, 60)·m), `draft` (k_u 0.01, k_d 0.00018, γ against m, as draft-ietf-rmcat-gcc-02 §5.4) |
//! | `interval-ms` | ΔT, the pacer and grouping interval (5) |
//! | `rate-window-ms` | the window of R (500) |
//! | `start-kbps`, `min-kbps`, `max-kbps` | A at the start, and the range of A and of the encoder (300, 50, 2500; `min-kbps` ≤ `start-kbps` ≤ `max-kbps`, as the Mehrotra family's) |
//! | `pace-factor` | pacing rate / A (2.5) |
//! | `audio-kbps` | the audio stream (32; 0 for none) |
//!
//! Deviations:
//! * Eq. (2) is printed with the opposite sign (departure spacing minus arrival spacing); wisp
//!   uses arrival minus departure, the convention of the paper's §4.1, Fig. 6 and Algorithm 1
//!   (see [`grouping::GroupDelta`]). Each group is represented by its last
//!   packet's send time (Algorithm 1 updates the filter with (t_r_old, t_s_old)); eq. (2)'s "first
//!   packet" is the same instant for a pacer group, whose packets leave together.
//! * The default arrival-time filter is libwebrtc's two-state Kalman filter (eq. 3 plus the size
//!   term the paper calls negligible), with libwebrtc's threshold gains: the paper's experiments
//!   ran Chrome's implementation, and the libwebrtc unit tests the filter is checked against were
//!   written for it. `filter=scalar,threshold=draft` is eq. (3) with the draft's constants.
//! * η and α are libwebrtc's 1.08/s and 0.85 (in the paper's ranges); the remote rate controller
//!   runs at most every feedback interval — libwebrtc's: 80-byte RTCP at 5 % of A_r, within
//!   [200 ms, 1 s], so 200 ms above 64 kbit/s (aiortc's port: a fixed 500 ms, `update_interval`)
//!   — except during over-use (then again once the last change is 200 ms old, or at once if R
//!   has halved: libwebrtc's `TimeToReduceFurther`); the 1.5·R cap has
//!   libwebrtc's 10 kbit/s slack ([`rate_control`]).
//! * A_s is capped by A_r and by the encoder range, and starts at 300 kbit/s (libwebrtc); the
//!   paper gives no start value. Receiver reports go out every second and with every REMB.
//! * The pacing rate is 2.5·A (libwebrtc); the paper only says groups leave every ΔT.

pub mod adapter;
pub mod arrival;
pub mod delay;
pub mod grouping;
pub mod kalman;
pub mod loss_v2;
pub mod overuse;
pub mod rate;
pub mod rate_control;
pub mod receiver;
pub mod sender;
pub mod trendline;
pub mod twcc;
pub mod wire;

pub use arrival::{ArrivalFilter, FilterKind};
pub use grouping::{GroupDelta, Grouper, Prefilter};
pub use overuse::{BandwidthUsage, OveruseDetector, Threshold, ThresholdConfig};
pub use rate_control::{AimdConfig, AimdRateControl, RateControlState};
pub use receiver::{GccReceiver, RemoteEstimator};
pub use sender::GccSender;
pub use wire::GccFeedback;
// Where the GCC forms' rate keys were first declared; they are shared now.
pub use super::call::CallRates;

use super::params::{Checked, Given, Validate, scheme_config};
use super::registry::{Scheme, SchemeInfo};
use super::{Built, SchemeContext};
use crate::time::Duration;
use crate::units::serde_as::ms;

scheme_config! {
    /// Configuration of GCC. `Default` is `gcc-remb`; see [`GccConfig::grouping`] and
    /// [`GccConfig::trendline`] for the other two names (the names differ only in their
    /// defaults).
    #[derive(Clone, Debug, PartialEq)]
    pub struct GccConfig {
        /// The burst pre-filter: `off`, `paper` (ANRW'16 Algorithm 1) or `libwebrtc` (bursts capped
        /// at 100 ms).
        pub prefilter: Prefilter,
        /// The arrival-time filter: `kalman` (libwebrtc's two-state filter), `scalar` (eq. 3 as
        /// written) or `trendline`.
        pub filter: FilterKind,
        /// The over-use threshold's gains: `libwebrtc` (k_u 0.0087, k_d 0.039) or `draft` (k_u 0.01,
        /// k_d 0.00018).
        pub threshold: Threshold,
        /// ΔT, the pacer and grouping interval, ms.
        // The pacer's interval and the grouping interval.
        #[serde(rename = "interval-ms", with = "ms")]
        pub interval: Duration,
        /// The window of the received rate R, ms.
        #[serde(rename = "rate-window-ms", with = "whole_ms")]
        pub rate_window: Duration,
        #[group]
        pub call: CallRates,
        /// The remote rate controller runs, and a REMB goes out, at most this often (except to
        /// decrease during over-use); `None`: libwebrtc's feedback interval, the time 80-byte RTCP
        /// packets take at 5 % of A_r, within [200 ms, 1 s] ([`AimdRateControl::feedback_interval`];
        /// 200 ms at any A_r above 64 kbit/s). aiortc's port uses a fixed 500 ms.
        #[serde(skip)]
        pub update_interval: Option<Duration>,
        /// The receiver-report interval.
        #[serde(skip)]
        pub report_interval: Duration,
        #[serde(skip)]
        pub aimd: AimdConfig,
    }
}

impl Default for GccConfig {
    fn default() -> Self {
        GccConfig {
            prefilter: Prefilter::Off,
            filter: FilterKind::Kalman,
            threshold: Threshold::Libwebrtc,
            interval: Duration::from_millis(5),
            rate_window: Duration::from_millis(500),
            call: CallRates::default(),
            update_interval: None,
            report_interval: Duration::from_secs(1),
            aimd: AimdConfig::default(),
        }
    }
}

impl GccConfig {
    /// `gcc-grouping`: GCC with Algorithm 1.
    pub fn grouping() -> Self {
        GccConfig {
            prefilter: Prefilter::Paper,
            ..GccConfig::default()
        }
    }

    /// `gcc-trendline`: GCC with libwebrtc's trendline estimator.
    pub fn trendline() -> Self {
        GccConfig {
            filter: FilterKind::Trendline,
            ..GccConfig::default()
        }
    }

    /// The registry name this configuration is closest to.
    pub fn name(&self) -> &'static str {
        if self.filter == FilterKind::Trendline {
            "gcc-trendline"
        } else if self.prefilter != Prefilter::Off {
            "gcc-grouping"
        } else {
            "gcc-remb"
        }
    }
}

impl Validate for GccConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        given.time_ms(
            "interval-ms",
            self.interval,
            0.1,
            100.0,
            "a time in ms, 0.1 to 100",
        )?;
        given.time_ms(
            "rate-window-ms",
            self.rate_window,
            10.0,
            10_000.0,
            "a whole number of ms, 10 to 10000",
        )?;
        self.call.check(given)
    }
}

/// `rate-window-ms`: a [`Duration`] written in ms, read rounded to whole ms.
mod whole_ms {
    use crate::time::Duration;
    pub use crate::units::serde_as::ms::serialize;
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        f64::deserialize(d).map(|ms| Duration::from_millis_f64(ms.round()))
    }
}

impl Scheme for GccConfig {
    type Sender = GccSender;
    type Receiver = Box<GccReceiver>;
    const NAMES: &'static [SchemeInfo] = &[
        SchemeInfo {
            name: "gcc-remb",
            summary: "Google Congestion Control as the ANRW'16 paper ran it (§3): Kalman delay-based receiver with REMB + loss-based sender, video call",
        },
        SchemeInfo {
            name: "gcc-grouping",
            summary: "GCC with the packet-grouping pre-filter for Wi-Fi bursts (ANRW'16 Algorithm 1 exactly, which bounds no merged group; prefilter=libwebrtc caps bursts at 100 ms)",
        },
        SchemeInfo {
            name: "gcc-trendline",
            summary: "GCC with libwebrtc's trendline estimator instead of the Kalman filter",
        },
    ];

    fn named(name: &str) -> Option<Self> {
        match name {
            "gcc-remb" => Some(GccConfig::default()),
            "gcc-grouping" => Some(GccConfig::grouping()),
            "gcc-trendline" => Some(GccConfig::trendline()),
            _ => None,
        }
    }

    fn name(&self) -> &'static str {
        GccConfig::name(self)
    }

    /// A video call (frames at the target rate, plus audio) through the pacer's ΔT ticks.
    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let sender = GccSender::new(self);
        let receiver = Box::new(GccReceiver::new(self));
        Ok(ctx.media_halves(sender, receiver, self.call.media(), self.interval))
    }
}
