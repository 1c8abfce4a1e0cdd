//! `gcc`, `gcc-grouping`, `gcc-trendline` — Google Congestion Control and the packet-grouping
//! pre-filter.
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
//! * [`receiver`], [`sender`]: the two halves.
//!
//! Schemes and parameters (`NAME[:KEY=VALUE,…]`):
//!
//! | name | default |
//! |---|---|
//! | `gcc` | Kalman filter, no pre-filter |
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
//! | `start-kbps`, `min-kbps`, `max-kbps` | A at the start, and the range of A and of the encoder (300, 50, 2500) |
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

pub mod arrival;
pub mod grouping;
pub mod kalman;
pub mod overuse;
pub mod rate;
pub mod rate_control;
pub mod receiver;
pub mod sender;
pub mod trendline;
pub mod wire;

pub use arrival::{ArrivalFilter, FilterKind};
pub use grouping::{GroupDelta, Grouper, Prefilter};
pub use overuse::{BandwidthUsage, OveruseDetector, ThresholdConfig};
pub use rate_control::{AimdConfig, AimdRateControl, RateControlState};
pub use receiver::{GccReceiver, RemoteEstimator};
pub use sender::GccSender;
pub use wire::GccFeedback;

use super::ParamError;
use crate::source::MediaConfig;
use crate::time::Duration;
use crate::units::Bitrate;

/// Configuration of GCC. `Default` is `gcc`; see [`GccConfig::grouping`] and
/// [`GccConfig::trendline`] for the other two names.
#[derive(Clone, Debug, PartialEq)]
pub struct GccConfig {
    pub prefilter: Prefilter,
    pub filter: FilterKind,
    pub threshold: ThresholdConfig,
    /// ΔT: the pacer's interval and the grouping interval.
    pub interval: Duration,
    /// The window over which R is measured.
    pub rate_window: Duration,
    /// The remote rate controller runs, and a REMB goes out, at most this often (except to
    /// decrease during over-use); `None`: libwebrtc's feedback interval, the time 80-byte RTCP
    /// packets take at 5 % of A_r, within [200 ms, 1 s] ([`AimdRateControl::feedback_interval`];
    /// 200 ms at any A_r above 64 kbit/s). aiortc's port uses a fixed 500 ms.
    pub update_interval: Option<Duration>,
    /// The receiver-report interval.
    pub report_interval: Duration,
    pub aimd: AimdConfig,
    pub start_rate: Bitrate,
    pub min_rate: Bitrate,
    pub max_rate: Bitrate,
    pub pace_factor: f64,
    pub media: MediaConfig,
}

impl Default for GccConfig {
    fn default() -> Self {
        let media = MediaConfig::default();
        GccConfig {
            prefilter: Prefilter::Off,
            filter: FilterKind::Kalman,
            threshold: ThresholdConfig::LIBWEBRTC,
            interval: Duration::from_millis(5),
            rate_window: Duration::from_millis(500),
            update_interval: None,
            report_interval: Duration::from_secs(1),
            aimd: AimdConfig::default(),
            start_rate: Bitrate::from_kbps(300),
            min_rate: media.min_rate,
            max_rate: media.max_rate,
            pace_factor: 2.5,
            media,
        }
    }
}

const ACCEPTED: &str = "prefilter, filter, threshold, interval-ms, rate-window-ms, start-kbps, min-kbps, max-kbps, pace-factor, audio-kbps";

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
            "gcc"
        }
    }

    fn for_name(name: &str) -> Self {
        match name {
            "gcc-grouping" => GccConfig::grouping(),
            "gcc-trendline" => GccConfig::trendline(),
            _ => GccConfig::default(),
        }
    }

    pub(crate) fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        let number = |expected: &'static str, lo: f64, hi: f64| {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= lo && *v <= hi)
                .ok_or_else(|| ParamError::value(key, value, expected))
        };
        match key {
            "prefilter" => {
                self.prefilter = match value {
                    "off" | "none" => Prefilter::Off,
                    "paper" | "algorithm1" => Prefilter::Paper,
                    "libwebrtc" => Prefilter::Libwebrtc,
                    _ => return Err(ParamError::value(key, value, "off, paper or libwebrtc")),
                }
            }
            "filter" => {
                self.filter = match value {
                    "kalman" => FilterKind::Kalman,
                    "scalar" => FilterKind::Scalar,
                    "trendline" => FilterKind::Trendline,
                    _ => return Err(ParamError::value(key, value, "kalman, scalar or trendline")),
                }
            }
            "threshold" => {
                self.threshold = match value {
                    "libwebrtc" => ThresholdConfig::LIBWEBRTC,
                    "draft" => ThresholdConfig::DRAFT,
                    _ => return Err(ParamError::value(key, value, "libwebrtc or draft")),
                }
            }
            "interval-ms" => {
                self.interval =
                    Duration::from_millis_f64(number("a time in ms, 0.1 to 100", 0.1, 100.0)?)
            }
            "rate-window-ms" => {
                self.rate_window = Duration::from_millis(
                    number("a whole number of ms, 10 to 10000", 10.0, 10_000.0)?.round() as u64,
                )
            }
            "start-kbps" => {
                self.start_rate =
                    Bitrate::from_kbps_f64(number("a rate in kbit/s, 1 to 1e6", 1.0, 1e6)?)
            }
            "min-kbps" => {
                self.min_rate =
                    Bitrate::from_kbps_f64(number("a rate in kbit/s, 1 to 1e6", 1.0, 1e6)?);
                self.media.min_rate = self.min_rate;
            }
            "max-kbps" => {
                self.max_rate =
                    Bitrate::from_kbps_f64(number("a rate in kbit/s, 1 to 1e6", 1.0, 1e6)?);
                self.media.max_rate = self.max_rate;
            }
            "pace-factor" => self.pace_factor = number("a factor, 1 to 100", 1.0, 100.0)?,
            "audio-kbps" => {
                self.media.audio_rate =
                    Bitrate::from_kbps_f64(number("a rate in kbit/s, 0 to 1000", 0.0, 1000.0)?)
            }
            _ => return Err(ParamError::unknown(key, ACCEPTED)),
        }
        Ok(())
    }

    /// The parameters that differ from the defaults of [`GccConfig::name`].
    pub(crate) fn params(&self) -> Vec<(&'static str, String)> {
        let base = GccConfig::for_name(self.name());
        let mut v = vec![];
        if self.prefilter != base.prefilter {
            v.push(("prefilter", self.prefilter.as_str().to_string()));
        }
        if self.filter != base.filter {
            v.push(("filter", self.filter.as_str().to_string()));
        }
        if self.threshold != base.threshold {
            let t = if self.threshold == ThresholdConfig::DRAFT {
                "draft"
            } else {
                "libwebrtc"
            };
            v.push(("threshold", t.to_string()));
        }
        if self.interval != base.interval {
            v.push(("interval-ms", format!("{}", self.interval.as_millis_f64())));
        }
        if self.rate_window != base.rate_window {
            v.push(("rate-window-ms", self.rate_window.as_millis().to_string()));
        }
        for (key, mine, theirs) in [
            ("start-kbps", self.start_rate, base.start_rate),
            ("min-kbps", self.min_rate, base.min_rate),
            ("max-kbps", self.max_rate, base.max_rate),
            ("audio-kbps", self.media.audio_rate, base.media.audio_rate),
        ] {
            if mine != theirs {
                v.push((key, format!("{}", mine.kbps_f64())));
            }
        }
        if self.pace_factor != base.pace_factor {
            v.push(("pace-factor", format!("{}", self.pace_factor)));
        }
        v
    }
}

/// The registry's entry point: the default configuration of `name` (`gcc`, `gcc-grouping`,
/// `gcc-trendline`).
pub fn config_for(name: &str) -> Option<GccConfig> {
    matches!(name, "gcc" | "gcc-grouping" | "gcc-trendline").then(|| GccConfig::for_name(name))
}
