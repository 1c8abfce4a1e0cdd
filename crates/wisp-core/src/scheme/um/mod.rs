//! Rate control for mobile media — Mehrotra, Chen, Jain, Li, Li, Chen, "Bandwidth Management
//! for Mobile Media Delivery" (§IV–V): the paper's five baselines and its adaptive
//! utility-maximisation controller with a learned congestion threshold.
//!
//! Every controller is **rate-based** and updates its rate R (bytes/s) **per ACK** from one
//! machinery ([`RateSender`]): a media source ([`crate::source::MediaSource`], 30 frames/s)
//! encodes at R, a pacer spaces its packets at 2.5·R, and the receiver acknowledges every packet
//! ([`TcpReceiver`], [`TcpAck`] — the packet's
//! echoed send time, its arrival time and SACK-like ranges). From each ACK the sender takes the
//! RTT (RFC 6298's SRTT, [`RttEstimator`](super::tcp::rtt::RttEstimator)), the one-way queueing
//! delay δ = one-way delay − the smallest one-way delay of the last 10 minutes
//! ([`WindowedMin`](crate::stats::WindowedMin)), and NACKs: a packet is lost when one sent
//! three packets later has been acknowledged (RFC 6675's DupThresh).
//!
//! | scheme | module | law (per ACK unless stated) |
//! |---|---|---|
//! | `newreno-like` | [`newreno_like`] | §IV-A: ΔR = +M²/(R·SRTT²) per ACK, −R/2 per NACK |
//! | `vegas-like` | [`vegas_like`] | §IV-B: +M²/(R·SRTT²) if δ < κ, 0 if κ ≤ δ < ζ, −M²/(R·SRTT²) if δ ≥ ζ; −R/2 per NACK |
//! | `ctcp-like` | [`ctcp_like`] | §IV-C: Compound TCP's window law on W = R·SRTT |
//! | `tfrc` | [`tfrc`] | §IV-D: RFC 5348's throughput equation and loss-event rate |
//! | `um` | [`um`] | §IV-E eq. (1): ΔR = k₂(k₀ − δR)ΔT, k₀ = 25000 B, k₂ = 1.6 |
//! | `adaptive-um` | [`adaptive`] | §V eqs. (2)–(4) with δ̂ learned online |
//!
//! M is the acknowledged packet's size (bytes), SRTT the smoothed RTT (s), δ in seconds.
//!
//! Parameters every scheme of the family takes (`NAME:KEY=VALUE,…`): `start-kbps` (100: the
//! rate before feedback), `min-kbps` (50) and `max-kbps` (10000) bounding R and the encoder,
//! `pace-factor` (2.5, as GCC's), `audio-kbps` (32), `base-window-s` (600: the window of the
//! base one-way delay, RFC 6817's ten minutes); `min-kbps` ≤ `start-kbps` ≤ `max-kbps`.
//!
//! Deviations shared by the family:
//! * δ is the one-way delay of the acknowledged packet (its echoed send time to its arrival)
//!   minus its windowed minimum; the paper estimates it as half the RTT minus its minimum and
//!   notes that true one-way delays can be used (§III).
//! * The encoder range is 50 kbit/s–10 Mbit/s (the GCC paper's encoder stops at 2.5 Mbit/s,
//!   below the WiMAX link), and R is kept in it.
//! * If no ACK arrives for max(4·SRTT, 500 ms), R is halved (RFC 5348 §4.4's no-feedback timer,
//!   for every law: the paper's laws react only to ACKs and NACKs, which a blackout withholds).
//! * A packet counts as lost (NACK) once a packet sent three later has been acknowledged; the
//!   paper does not say how NACKs are detected.

pub mod adaptive;
pub mod ctcp_like;
pub mod newreno_like;
mod sender;
pub mod tfrc;
#[allow(clippy::module_inception)]
pub mod um;
pub mod vegas_like;

pub use adaptive::{AdaptiveConfig, AdaptiveUm, LearnerConfig};
pub use ctcp_like::{CtcpLike, CtcpLikeConfig};
pub use newreno_like::NewRenoLike;
pub use sender::{AckInfo, LossInfo, RateCounters, RateLaw, RateSender};
pub use tfrc::{Tfrc, TfrcConfig};
pub use um::{Um, UmConfig};
pub use vegas_like::{VegasLike, VegasLikeConfig};

use super::ParamError;
use super::call::CallRates;
use super::params::{Checked, Given, Parameters, Validate, scheme_config};
use super::registry::{Scheme, SchemeInfo};
use super::tcp::TcpReceiver;
use super::{Built, SchemeContext};
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::packet::DataHeader;
use crate::scheme::tcp::ack::TcpAck;
use crate::source::MediaConfig;
use crate::time::{Duration, Instant};
use crate::units::Bitrate;
use crate::units::serde_as::s;

scheme_config! {
    /// Parameters every scheme of the family shares (and all of `newreno-like`'s).
    #[derive(Clone, Debug, PartialEq)]
    pub struct RateParams {
        #[group]
        pub call: CallRates,
        /// The window of the base one-way delay, s.
        #[serde(rename = "base-window-s", with = "s")]
        pub base_window: Duration,
    }
}

impl Default for RateParams {
    fn default() -> Self {
        RateParams {
            call: CallRates {
                start: Bitrate::from_kbps(100),
                min: Bitrate::from_kbps(50),
                max: Bitrate::from_kbps(10_000),
                ..CallRates::default()
            },
            base_window: Duration::from_secs(600),
        }
    }
}

impl RateParams {
    /// The shared keys' ranges, and `min-kbps ≤ start-kbps ≤ max-kbps`.
    pub(crate) fn check(&self, given: &Given<'_>) -> Checked {
        self.call.check(given)?;
        given.time_s(
            "base-window-s",
            self.base_window,
            1.0,
            86_400.0,
            "seconds, 1 to 86400",
        )
    }

    /// The media source: the encoder's range is R's, with the audio stream.
    pub fn media(&self) -> MediaConfig {
        self.call.media()
    }
}

/// `newreno-like`.
impl Validate for RateParams {
    fn validate(&self, given: &Given<'_>) -> Checked {
        self.check(given)
    }
}

/// A scheme of the family with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum UmFamilyConfig {
    NewRenoLike(RateParams),
    VegasLike(VegasLikeConfig),
    CtcpLike(CtcpLikeConfig),
    Tfrc(TfrcConfig),
    Um(UmConfig),
    AdaptiveUm(AdaptiveConfig),
}

/// The family's registry names.
pub const NAMES: [&str; 6] = [
    "newreno-like",
    "vegas-like",
    "ctcp-like",
    "tfrc",
    "um",
    "adaptive-um",
];

impl UmFamilyConfig {
    pub fn name(&self) -> &'static str {
        match self {
            UmFamilyConfig::NewRenoLike(_) => NAMES[0],
            UmFamilyConfig::VegasLike(_) => NAMES[1],
            UmFamilyConfig::CtcpLike(_) => NAMES[2],
            UmFamilyConfig::Tfrc(_) => NAMES[3],
            UmFamilyConfig::Um(_) => NAMES[4],
            UmFamilyConfig::AdaptiveUm(_) => NAMES[5],
        }
    }

    /// The shared parameters.
    pub fn rate_params(&self) -> &RateParams {
        match self {
            UmFamilyConfig::NewRenoLike(p) => p,
            UmFamilyConfig::VegasLike(c) => &c.rate,
            UmFamilyConfig::CtcpLike(c) => &c.rate,
            UmFamilyConfig::Tfrc(c) => &c.rate,
            UmFamilyConfig::Um(c) => &c.rate,
            UmFamilyConfig::AdaptiveUm(c) => &c.rate,
        }
    }

    /// The sender half.
    pub fn sender(&self) -> UmSender {
        match self {
            UmFamilyConfig::NewRenoLike(p) => {
                UmSender::NewRenoLike(RateSender::new(p, NewRenoLike))
            }
            UmFamilyConfig::VegasLike(c) => {
                UmSender::VegasLike(RateSender::new(&c.rate, VegasLike::new(c)))
            }
            UmFamilyConfig::CtcpLike(c) => {
                UmSender::CtcpLike(RateSender::new(&c.rate, CtcpLike::new(c)))
            }
            UmFamilyConfig::Tfrc(c) => UmSender::Tfrc(RateSender::new(&c.rate, Tfrc::new(c))),
            UmFamilyConfig::Um(c) => UmSender::Um(RateSender::new(&c.rate, Um::new(c))),
            UmFamilyConfig::AdaptiveUm(c) => {
                UmSender::AdaptiveUm(Box::new(RateSender::new(&c.rate, AdaptiveUm::new(c))))
            }
        }
    }
}

impl Parameters for UmFamilyConfig {
    /// Every parameter of the scheme with its value.
    fn param_list(&self) -> Vec<(&'static str, String)> {
        match self {
            UmFamilyConfig::NewRenoLike(c) => c.param_list(),
            UmFamilyConfig::VegasLike(c) => c.param_list(),
            UmFamilyConfig::CtcpLike(c) => c.param_list(),
            UmFamilyConfig::Tfrc(c) => c.param_list(),
            UmFamilyConfig::Um(c) => c.param_list(),
            UmFamilyConfig::AdaptiveUm(c) => c.param_list(),
        }
    }

    /// Every key of the scheme with its help text.
    fn param_docs(&self) -> Vec<(String, String)> {
        match self {
            UmFamilyConfig::NewRenoLike(c) => c.param_docs(),
            UmFamilyConfig::VegasLike(c) => c.param_docs(),
            UmFamilyConfig::CtcpLike(c) => c.param_docs(),
            UmFamilyConfig::Tfrc(c) => c.param_docs(),
            UmFamilyConfig::Um(c) => c.param_docs(),
            UmFamilyConfig::AdaptiveUm(c) => c.param_docs(),
        }
    }

    /// Sets parameters of the scheme, all or none.
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        match self {
            UmFamilyConfig::NewRenoLike(c) => c.set_params(given),
            UmFamilyConfig::VegasLike(c) => c.set_params(given),
            UmFamilyConfig::CtcpLike(c) => c.set_params(given),
            UmFamilyConfig::Tfrc(c) => c.set_params(given),
            UmFamilyConfig::Um(c) => c.set_params(given),
            UmFamilyConfig::AdaptiveUm(c) => c.set_params(given),
        }
    }
}

/// The sender of any scheme of the family (static dispatch).
#[derive(Debug)]
pub enum UmSender {
    NewRenoLike(RateSender<NewRenoLike>),
    VegasLike(RateSender<VegasLike>),
    CtcpLike(RateSender<CtcpLike>),
    Tfrc(RateSender<Tfrc>),
    Um(RateSender<Um>),
    /// Boxed: its learner is several times the size of the other laws.
    AdaptiveUm(Box<RateSender<AdaptiveUm>>),
}

macro_rules! each {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            UmSender::NewRenoLike($s) => $e,
            UmSender::VegasLike($s) => $e,
            UmSender::CtcpLike($s) => $e,
            UmSender::Tfrc($s) => $e,
            UmSender::Um($s) => $e,
            UmSender::AdaptiveUm($s) => $e,
        }
    };
}

impl UmSender {
    /// R, bytes per second.
    pub fn rate_bytes_per_s(&self) -> f64 {
        each!(self, s => s.rate_bytes_per_s())
    }

    pub fn counters(&self) -> RateCounters {
        each!(self, s => s.counters())
    }
}

impl Sender for UmSender {
    type Feedback = TcpAck;
    type Fields = ();

    fn on_packet_sent(&mut self, now: Instant, packet: &DataHeader, ctx: &SendContext) {
        each!(self, s => s.on_packet_sent(now, packet, ctx))
    }
    fn on_feedback(&mut self, now: Instant, ack: &TcpAck) {
        each!(self, s => s.on_feedback(now, ack))
    }
    fn on_time(&mut self, now: Instant) {
        each!(self, s => s.on_time(now))
    }
    fn allowance(&self, now: Instant) -> Allowance {
        each!(self, s => s.allowance(now))
    }
    fn poll_timeout(&self) -> Option<Instant> {
        each!(self, s => s.poll_timeout())
    }
    fn on_timeout(&mut self, now: Instant) {
        each!(self, s => s.on_timeout(now))
    }
    fn stats(&self) -> SenderStats {
        each!(self, s => s.stats())
    }
    fn delay_target(&self) -> Option<Duration> {
        each!(self, s => s.delay_target())
    }
}

impl Scheme for UmFamilyConfig {
    type Sender = Box<UmSender>;
    type Receiver = TcpReceiver;
    const NAMES: &'static [SchemeInfo] = &[
        SchemeInfo {
            name: "newreno-like",
            summary: "NewReno-like rate control for media (Mehrotra et al. §IV-A): +M²/(R·SRTT²) per ACK, −R/2 per NACK",
        },
        SchemeInfo {
            name: "vegas-like",
            summary: "Vegas-like rate control (Mehrotra et al. §IV-B): ±M²/(R·SRTT²) per ACK by queueing delay against κ, ζ (2 and 4 segments queued)",
        },
        SchemeInfo {
            name: "ctcp-like",
            summary: "Compound-TCP-like rate control (Mehrotra et al. §IV-C): CTCP's loss and delay windows over W = R·SRTT, once per loss event",
        },
        SchemeInfo {
            name: "tfrc",
            summary: "TCP-Friendly Rate Control (RFC 5348) for a media call, per-packet ACKs",
        },
        SchemeInfo {
            name: "um",
            summary: "primal-dual utility maximisation (Mehrotra et al. eq. 1): ΔR = k2(k0 − δR)ΔT per ACK, fixed k0, k2",
        },
        SchemeInfo {
            name: "adaptive-um",
            summary: "adaptive utility maximisation (Mehrotra et al. §V, eqs. 2–4) with the congestion threshold δ̂ learned online from calibration windows",
        },
    ];

    fn named(name: &str) -> Option<Self> {
        Some(match name {
            "newreno-like" => UmFamilyConfig::NewRenoLike(RateParams::default()),
            "vegas-like" => UmFamilyConfig::VegasLike(VegasLikeConfig::default()),
            "ctcp-like" => UmFamilyConfig::CtcpLike(CtcpLikeConfig::default()),
            "tfrc" => UmFamilyConfig::Tfrc(TfrcConfig::default()),
            "um" => UmFamilyConfig::Um(UmConfig::default()),
            "adaptive-um" => UmFamilyConfig::AdaptiveUm(AdaptiveConfig::default()),
            _ => return None,
        })
    }

    fn name(&self) -> &'static str {
        UmFamilyConfig::name(self)
    }

    /// A media call with per-packet ACKs, through GCC's 5-ms pacer.
    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let sender = Box::new(self.sender());
        let receiver = TcpReceiver::new();
        let media = self.rate_params().media();
        Ok(ctx.media_halves(sender, receiver, media, Duration::from_millis(5)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_params_parse_and_print() {
        let mut c = <UmFamilyConfig as Scheme>::named("um").unwrap();
        c.set_params(&[("start-kbps", "300"), ("max-kbps", "6000"), ("k0", "30000")])
            .unwrap();
        assert_eq!(c.rate_params().call.start, Bitrate::from_kbps(300));
        assert_eq!(c.rate_params().media().max_rate, Bitrate::from_kbps(6000));
        let p = c.param_list();
        assert!(p.contains(&("start-kbps", "300".to_string())), "{p:?}");
        assert!(p.contains(&("k0", "30000".to_string())), "{p:?}");
        // min ≤ start ≤ max, checked on the whole set.
        assert!(c.set_params(&[("min-kbps", "7000")]).is_err());
        assert!(c.set_params(&[("start-kbps", "7000")]).is_err());
        c.set_params(&[
            ("min-kbps", "7000"),
            ("max-kbps", "9000"),
            ("start-kbps", "8000"),
        ])
        .unwrap();
        assert_eq!(c.rate_params().media().min_rate, Bitrate::from_kbps(7000));
        assert!(matches!(
            c.set_params(&[("nope", "1")]),
            Err(ParamError::UnknownParam { .. })
        ));
        for n in NAMES {
            assert_eq!(<UmFamilyConfig as Scheme>::named(n).unwrap().name(), n);
        }
        assert!(<UmFamilyConfig as Scheme>::named("vegas").is_none());
    }
}
