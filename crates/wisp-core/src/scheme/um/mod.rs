//! Rate control for mobile media — Mehrotra, Chen, Jain, Li, Li, Chen, "Bandwidth Management
//! for Mobile Media Delivery" (§IV–V): the paper's five baselines and its adaptive
//! utility-maximisation controller with a learned congestion threshold.
//!
//! Every controller is **rate-based** and updates its rate R (bytes/s) **per ACK** from one
//! machinery ([`RateSender`]): a media source ([`crate::source::MediaSource`], 30 frames/s)
//! encodes at R, a pacer spaces its packets at 2.5·R, and the receiver acknowledges every packet
//! ([`TcpReceiver`](super::tcp::TcpReceiver), [`TcpAck`] — the packet's
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
//! base one-way delay, RFC 6817's ten minutes).
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
use super::tcp::{fmt_f64, parse_f64};
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::packet::DataHeader;
use crate::scheme::tcp::ack::TcpAck;
use crate::source::MediaConfig;
use crate::time::{Duration, Instant};
use crate::units::Bitrate;

/// Parameters every scheme of the family shares.
#[derive(Clone, Debug, PartialEq)]
pub struct RateParams {
    /// R before any feedback.
    pub start: Bitrate,
    pub min: Bitrate,
    pub max: Bitrate,
    /// Pacing rate / R.
    pub pace_factor: f64,
    /// The window of the base one-way delay.
    pub base_window: Duration,
    /// The media source (its rate range follows `min` and `max`).
    pub media: MediaConfig,
}

impl Default for RateParams {
    fn default() -> Self {
        RateParams {
            start: Bitrate::from_kbps(100),
            min: Bitrate::from_kbps(50),
            max: Bitrate::from_kbps(10_000),
            pace_factor: 2.5,
            base_window: Duration::from_secs(600),
            media: MediaConfig {
                min_rate: Bitrate::from_kbps(50),
                max_rate: Bitrate::from_kbps(10_000),
                ..MediaConfig::default()
            },
        }
    }
}

impl RateParams {
    pub const KEYS: &'static str =
        "start-kbps, min-kbps, max-kbps, pace-factor, audio-kbps, base-window-s";

    /// Sets a shared parameter; `Ok(false)` if `key` is not one.
    pub(crate) fn set(&mut self, key: &str, value: &str) -> Result<bool, ParamError> {
        let kbps = |v: &str| -> Result<Bitrate, ParamError> {
            Ok(Bitrate::from_kbps_f64(parse_f64(
                key,
                v,
                1.0,
                1e7,
                "kbit/s, 1 to 10000000",
            )?))
        };
        match key {
            "start-kbps" | "start_kbps" => self.start = kbps(value)?,
            "min-kbps" | "min_kbps" => {
                self.min = kbps(value)?;
                self.media.min_rate = self.min;
            }
            "max-kbps" | "max_kbps" => {
                self.max = kbps(value)?;
                self.media.max_rate = self.max;
            }
            "pace-factor" | "pace_factor" => {
                self.pace_factor = parse_f64(key, value, 1.0, 100.0, "a number, 1 to 100")?
            }
            "audio-kbps" | "audio_kbps" => {
                self.media.audio_rate =
                    Bitrate::from_kbps_f64(parse_f64(key, value, 0.0, 1000.0, "kbit/s, 0 to 1000")?)
            }
            "base-window-s" | "base_window_s" => {
                self.base_window = Duration::from_secs_f64(parse_f64(
                    key,
                    value,
                    1.0,
                    86_400.0,
                    "seconds, 1 to 86400",
                )?)
            }
            _ => return Ok(false),
        }
        if self.min > self.max {
            return Err(ParamError::value(
                key,
                value,
                "min-kbps must not exceed max-kbps",
            ));
        }
        Ok(true)
    }

    /// The shared parameters that differ from the defaults.
    pub(crate) fn params(&self) -> Vec<(&'static str, String)> {
        let d = RateParams::default();
        let mut v = vec![];
        if self.start != d.start {
            v.push(("start-kbps", fmt_f64(self.start.kbps_f64())));
        }
        if self.min != d.min {
            v.push(("min-kbps", fmt_f64(self.min.kbps_f64())));
        }
        if self.max != d.max {
            v.push(("max-kbps", fmt_f64(self.max.kbps_f64())));
        }
        if self.pace_factor != d.pace_factor {
            v.push(("pace-factor", fmt_f64(self.pace_factor)));
        }
        if self.media.audio_rate != d.media.audio_rate {
            v.push(("audio-kbps", fmt_f64(self.media.audio_rate.kbps_f64())));
        }
        if self.base_window != d.base_window {
            v.push(("base-window-s", fmt_f64(self.base_window.as_secs_f64())));
        }
        v
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

/// The default configuration of `name`, if it names a scheme of the family.
pub fn config_for(name: &str) -> Option<UmFamilyConfig> {
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

    pub(crate) fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        let (rate, own): (&mut RateParams, Option<&'static str>) = match self {
            UmFamilyConfig::NewRenoLike(p) => (p, None),
            UmFamilyConfig::VegasLike(c) => {
                if c.set(key, value)? {
                    return Ok(());
                }
                (&mut c.rate, Some(VegasLikeConfig::KEYS))
            }
            UmFamilyConfig::CtcpLike(c) => {
                if c.set(key, value)? {
                    return Ok(());
                }
                (&mut c.rate, Some(CtcpLikeConfig::KEYS))
            }
            UmFamilyConfig::Tfrc(c) => (&mut c.rate, None),
            UmFamilyConfig::Um(c) => {
                if c.set(key, value)? {
                    return Ok(());
                }
                (&mut c.rate, Some(UmConfig::KEYS))
            }
            UmFamilyConfig::AdaptiveUm(c) => {
                if c.set(key, value)? {
                    return Ok(());
                }
                (&mut c.rate, Some(AdaptiveConfig::KEYS))
            }
        };
        if rate.set(key, value)? {
            return Ok(());
        }
        Err(ParamError::unknown(
            key,
            match own {
                None => RateParams::KEYS,
                Some(k) => k,
            },
        ))
    }

    pub(crate) fn params(&self) -> Vec<(&'static str, String)> {
        let mut v = match self {
            UmFamilyConfig::NewRenoLike(_) | UmFamilyConfig::Tfrc(_) => vec![],
            UmFamilyConfig::VegasLike(c) => c.params(),
            UmFamilyConfig::CtcpLike(c) => c.params(),
            UmFamilyConfig::Um(c) => c.params(),
            UmFamilyConfig::AdaptiveUm(c) => c.params(),
        };
        v.extend(self.rate_params().params());
        v
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_params_parse_and_print() {
        let mut c = config_for("um").unwrap();
        c.set("start-kbps", "300").unwrap();
        c.set("max-kbps", "6000").unwrap();
        c.set("k0", "30000").unwrap();
        assert_eq!(c.rate_params().start, Bitrate::from_kbps(300));
        assert_eq!(c.rate_params().media.max_rate, Bitrate::from_kbps(6000));
        let p = c.params();
        assert!(p.contains(&("start-kbps", "300".to_string())), "{p:?}");
        assert!(p.contains(&("k0", "30000".to_string())), "{p:?}");
        assert!(c.set("min-kbps", "7000").is_err());
        assert!(matches!(
            c.set("nope", "1"),
            Err(ParamError::UnknownParam { .. })
        ));
        for n in NAMES {
            assert_eq!(config_for(n).unwrap().name(), n);
        }
        assert!(config_for("vegas").is_none());
    }
}
