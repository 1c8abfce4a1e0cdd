//! `gcc` — Google Congestion Control as libwebrtc's `goog_cc` runs it today: send-side
//! estimation on transport-wide feedback, with probing, the application-limited region and the
//! acknowledged bitrate (libwebrtc `modules/congestion_controller/goog_cc/`, `modules/pacing/`,
//! `modules/remote_bitrate_estimator/aimd_rate_control.cc`; read for behaviour and constants,
//! no code taken).
//!
//! The receiver ([`feedback`]) estimates nothing: by default it is `gcc-twcc`'s
//! ([`GccTwccReceiver`](crate::scheme::gcc::twcc::GccTwccReceiver), libwebrtc's
//! `RemoteEstimatorProxy`), transport-wide feedback every 50 ms; with `feedback=rfc8888` it sends
//! RFC 8888 congestion control feedback instead ([`crate::ccfb`], libwebrtc's
//! `CongestionControlFeedbackGenerator`), which the sender's adapter turns into the same
//! per-packet results. The sender ([`sender`]) is `GoogCcNetworkController` with:
//!
//! * the feedback adapter shared with `gcc-twcc` ([`crate::scheme::gcc::adapter`]);
//! * the delay-based estimator: libwebrtc's burst grouping (`InterArrivalDelta`), the trendline
//!   filter (window 20, smoothing 0.9, gain 4) and the over-use detector with the adaptive
//!   threshold (12.5 ms in [6, 600], k_up 0.0087, k_down 0.039, 10 ms) — [`crate::scheme::gcc`]'s
//!   modules;
//! * AIMD ([`crate::scheme::gcc::AimdRateControl`]): ×1.08/s, additive increase near the
//!   link-capacity estimate (one average packet per 2 × (RTT + 100 ms), at least 4 kbit/s per
//!   second), back-off to 0.85 × the acknowledged rate less 5 kbit/s, increases capped at
//!   1.5 × acknowledged + 10 kbit/s, the RTT measured from the feedback (libwebrtc's increase
//!   hold in ALR is a field trial, off by default, and off here);
//! * the acknowledged bitrate ([`acked`]: `BitrateEstimator`, Bayesian, 150-ms windows);
//! * the probe controller ([`probe_controller`]), the probe-result estimator
//!   ([`probe_estimator`]), the prober and padding ([`pacer`]), the ALR detector ([`alr`]);
//! * the target from the delay-based estimate and the loss-based controller ([`loss`],
//!   `SendSideBandwidthEstimation`; `loss=v2`, libwebrtc's loss-based BWE v2, by default);
//! * the congestion window and its pushback on the encoder, with frame dropping ([`cwnd`]:
//!   Chrome's default `WebRTC-CongestionWindow`, `QueueSize:350,MinBitrate:30000,DropFrame:true`).
//!
//! The media source is `gcc-remb`'s (a video call at the target within the encoder's range,
//! 50–2500 kbit/s by default, audio 32 kbit/s), its packets paced every 5 ms at 2.5 × the target
//! (`kDefaultPaceMultiplier`); probes and padding leave through the scheme seam's extra packets.
//!
//! | key | default |
//! |---|---|
//! | `start-kbps`, `min-kbps`, `max-kbps` | 300 (libwebrtc's start), 50, 2500: the start, and the encoder's range (the estimate is not capped by `max-kbps`) |
//! | `pace-factor`, `audio-kbps` | 2.5, 32 |
//! | `loss` | `v2` (libwebrtc's `LossBasedBweV2`, with the `v1` rule until it is ready), `v1` (eq. (1) at libwebrtc's cadence) |
//! | `max-probe-kbps` | 5000 (`kDefaultMaxProbingBitrate`) |
//! | `padding-kbps` | 0 (libwebrtc pads only when the application asks) |
//! | `probing` | `true` (`false`: no probe clusters, for comparisons) |
//! | `feedback-interval-ms` | 50 |
//! | `feedback` | `twcc` (transport-wide feedback, TransportLayerCC), `rfc8888` (RFC 8888 CCFB) |
//! | `cwnd-queue-ms` | 350 (the congestion window's `QueueSize`; 0: no window, no pushback) |
//!
//! Deviations (each module lists its own):
//! * The estimate's range is [`min-kbps`, 1 Gbit/s] (libwebrtc: [5 kbit/s, 1 Gbit/s] unless the
//!   application sets bounds; wisp's call uses the encoder's minimum).
//! * Audio packets are acknowledged-rate samples but not delay samples (as `gcc-twcc`).
//! * No network-state estimator.
//! * RFC 8888 feedback (`feedback=rfc8888`): ECN always Not-ECT, the arrivals on its 1/1024-s
//!   grid (transport-wide feedback's is 250 µs), sent on the fixed interval rather than
//!   libwebrtc's generator's rule; [`crate::ccfb`] lists the rest.

pub mod acked;
pub mod alr;
pub mod cwnd;
pub mod feedback;
pub mod loss;
pub mod pacer;
pub mod probe_controller;
pub mod probe_estimator;
pub mod sender;

pub use feedback::{FeedbackKind, GoogCcFeedback, GoogCcReceiver};
pub use loss::LossKind;
pub use sender::GoogCcSender;

use super::gcc::{AimdConfig, CallRates};
use super::params::{Checked, Given, Validate, scheme_config};
use super::registry::Scheme;
use super::{Built, SchemeContext, listed_as};
use crate::time::Duration;
use crate::units::Bitrate;
use crate::units::serde_as::{kbps, ms};

scheme_config! {
    /// Configuration of `gcc`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct GoogCcConfig {
        #[group]
        pub call: CallRates,
        /// The loss-based controller: `v2` (libwebrtc's loss-based BWE v2) or `v1` (eq. (1)).
        pub loss: LossKind,
        /// The largest probing rate, kbit/s.
        #[serde(rename = "max-probe-kbps", with = "kbps")]
        pub max_probe: Bitrate,
        /// The padding rate the encoder's packets are topped up to, kbit/s (0: none).
        #[serde(rename = "padding-kbps", with = "kbps")]
        pub padding: Bitrate,
        /// Probe clusters on or off.
        pub probing: bool,
        /// The receiver's feedback interval, ms.
        #[serde(rename = "feedback-interval-ms", with = "ms")]
        pub feedback_interval: Duration,
        /// The receiver's feedback: `twcc` (transport-wide, TransportLayerCC) or `rfc8888`
        /// (RFC 8888 congestion control feedback).
        pub feedback: FeedbackKind,
        /// The congestion window's time beyond the RTT, ms (`WebRTC-CongestionWindow`'s
        /// `QueueSize`; 0: no congestion window and no pushback).
        #[serde(rename = "cwnd-queue-ms", with = "ms")]
        pub cwnd_queue: Duration,
        /// The pacer's interval and the grouping interval (5 ms).
        #[serde(skip)]
        pub interval: Duration,
        /// The largest estimate (libwebrtc's 1 Gbit/s).
        #[serde(skip)]
        pub max_estimate: Bitrate,
        #[serde(skip)]
        pub aimd: AimdConfig,
        /// Hold the delay-based estimate in ALR (`WebRTC-DontIncreaseDelayBasedBweInAlr`, off
        /// by default).
        #[serde(skip)]
        pub no_increase_in_alr: bool,
    }
}

impl Default for GoogCcConfig {
    fn default() -> Self {
        GoogCcConfig {
            call: CallRates::default(),
            loss: LossKind::V2,
            max_probe: Bitrate::from_kbps(5000),
            padding: Bitrate::ZERO,
            probing: true,
            feedback_interval: Duration::from_millis(50),
            feedback: FeedbackKind::Twcc,
            cwnd_queue: Duration::from_millis(350),
            interval: Duration::from_millis(5),
            max_estimate: Bitrate::from_mbps(1000),
            aimd: AimdConfig {
                backoff_term: Bitrate::from_kbps(5),
                response_factor: 2.0,
                ..AimdConfig::default()
            },
            no_increase_in_alr: false,
        }
    }
}

impl Validate for GoogCcConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        given.time_ms(
            "cwnd-queue-ms",
            self.cwnd_queue,
            0.0,
            10_000.0,
            "a time in ms, 0 (off) to 10000",
        )?;
        let rate = "a rate in kbit/s, 0 to 1e6";
        given.rate_kbps("max-probe-kbps", self.max_probe, 0.0, 1e6, rate)?;
        given.rate_kbps("padding-kbps", self.padding, 0.0, 1e6, rate)?;
        super::gcc::twcc::check_feedback_and_call(given, self.feedback_interval, &self.call)
    }
}

impl Scheme for GoogCcConfig {
    type Sender = Box<GoogCcSender>;
    type Receiver = GoogCcReceiver;
    listed_as! {
        "gcc",
        "Google Congestion Control as libwebrtc's goog_cc runs it today: send-side trendline + AIMD on transport-wide feedback, probing, ALR, acknowledged bitrate, loss-based controller, video call",
        GoogCcConfig::default(),
    }

    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let sender = Box::new(GoogCcSender::new(self, ctx.mtu()));
        let receiver = GoogCcReceiver::new(self.feedback, self.feedback_interval);
        Ok(ctx.media_halves(sender, receiver, self.call.media(), self.interval))
    }
}

#[cfg(test)]
mod tests {
    use crate::scheme::SchemeConfig;

    #[test]
    fn parameters_parse_check_and_print() {
        let c: SchemeConfig = "gcc:max-probe-kbps=3000,padding-kbps=200,probing=false"
            .parse()
            .unwrap();
        assert_eq!(
            c.to_string(),
            "gcc:max-probe-kbps=3000,padding-kbps=200,probing=false"
        );
        assert_eq!(
            "gcc:loss=v2".parse::<SchemeConfig>().unwrap().to_string(),
            "gcc"
        );
        assert_eq!(
            "gcc:loss=v1".parse::<SchemeConfig>().unwrap().to_string(),
            "gcc:loss=v1"
        );
        assert_eq!(
            "gcc:feedback=twcc"
                .parse::<SchemeConfig>()
                .unwrap()
                .to_string(),
            "gcc"
        );
        assert_eq!(
            "gcc:feedback=rfc8888,feedback-interval-ms=100"
                .parse::<SchemeConfig>()
                .unwrap()
                .to_string(),
            "gcc:feedback-interval-ms=100,feedback=rfc8888"
        );
        for bad in [
            "gcc:feedback=ccfb",
            "gcc:loss=v9",
            "gcc:feedback-interval-ms=0",
            "gcc:padding-kbps=-1",
        ] {
            assert!(bad.parse::<SchemeConfig>().is_err(), "{bad}");
        }
    }
}
