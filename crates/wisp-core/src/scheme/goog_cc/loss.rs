//! The target rate from the delay-based estimate and a loss-based controller (libwebrtc
//! `modules/congestion_controller/goog_cc/send_side_bandwidth_estimation.cc`).
//!
//! `SendSideBandwidthEstimation` keeps the target: at most the delay-based limit, bounded by the
//! configured minimum and maximum, and lowered by the loss-based controller. Which loss-based
//! controller runs is a parameter ([`LossKind`]); each implements [`LossBased`] and is one arm
//! of `loss_controller`'s match (libwebrtc's `LossBasedBweV2` plugs in as `loss=v2` so):
//!
//! * `v1`: the loss rule `gcc-twcc` uses, eq. (1) of the ANRW'16 paper at libwebrtc's cadence
//!   (×1.05 at most once a second under 2 % loss, ×(1 − 0.5·f) at most once per 300 ms + RTT
//!   over 10 %), on the loss fraction of at least 20 reported packets
//!   ([`crate::scheme::gcc::GccSender`]).
//!
//! A probe result sets the target directly (`SetSendBitrate`).
//!
//! Deviations: libwebrtc's v1 increases by 8 % over the minimum of the last second's rates plus
//! 1 kbit/s; wisp's v1 is `gcc-twcc`'s eq. (1) form. No RTT-based back-off and no receiver
//! estimate (REMB) limit: the send side has no REMB.

use crate::scheme::gcc::{GccConfig, GccSender};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use core::fmt;
use serde::{Deserialize, Serialize};

/// The loss-based controller's name, as the `loss` parameter gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossKind {
    /// Eq. (1) at libwebrtc's cadence.
    #[default]
    V1,
}

/// `kLimitNumPackets`: the loss fraction is computed over at least this many reported packets.
const LOSS_MIN_PACKETS: u64 = 20;

/// One packet a feedback reported on, as the loss-based controllers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossSample {
    pub size: DataSize,
    pub send: Instant,
    /// When it arrived (receiver clock), or `None` if reported lost.
    pub received: Option<Instant>,
}

/// The inputs of one feedback.
#[derive(Clone, Copy, Debug)]
pub struct LossInput<'a> {
    pub packets: &'a [LossSample],
    pub delay_based: Option<Bitrate>,
    pub acked: Option<Bitrate>,
    pub in_alr: bool,
    pub rtt: Duration,
}

/// What `SendSideBandwidthEstimation` asks of a loss-based controller.
pub trait LossBased: fmt::Debug + Send {
    /// Its rate.
    fn rate(&self) -> Bitrate;
    /// A new delay-based estimate.
    fn set_delay_based(&mut self, rate: Bitrate);
    /// A probe's result: the controller continues from `rate`.
    fn set_send_bitrate(&mut self, rate: Bitrate);
    /// What one feedback reported.
    fn on_feedback(&mut self, now: Instant, input: LossInput<'_>);
    fn clone_box(&self) -> Box<dyn LossBased>;
}

impl Clone for Box<dyn LossBased> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The loss-based controller `kind`, starting at `start`, within [min, max]: one arm per kind.
fn loss_controller(
    kind: LossKind,
    start: Bitrate,
    min: Bitrate,
    max: Bitrate,
) -> Box<dyn LossBased> {
    match kind {
        LossKind::V1 => Box::new(LossV1::new(start, min, max)),
    }
}

/// `loss=v1`: eq. (1) at libwebrtc's cadence on the loss of at least 20 reported packets.
#[derive(Clone, Debug)]
struct LossV1 {
    rule: GccSender,
    expected: u64,
    lost: u64,
}

impl LossV1 {
    fn new(start: Bitrate, min: Bitrate, max: Bitrate) -> Self {
        let mut c = GccConfig::default();
        c.call.start = start;
        c.call.min = min;
        c.call.max = max;
        LossV1 {
            rule: GccSender::new(&c),
            expected: 0,
            lost: 0,
        }
    }
}

impl LossBased for LossV1 {
    fn rate(&self) -> Bitrate {
        self.rule.loss_based_rate()
    }

    fn set_delay_based(&mut self, rate: Bitrate) {
        self.rule.set_delay_based_rate(rate);
    }

    fn set_send_bitrate(&mut self, rate: Bitrate) {
        self.rule.set_loss_based_rate(rate);
    }

    fn on_feedback(&mut self, now: Instant, input: LossInput<'_>) {
        self.rule.set_rtt(input.rtt);
        self.expected += input.packets.len() as u64;
        self.lost += input
            .packets
            .iter()
            .filter(|p| p.received.is_none())
            .count() as u64;
        if self.expected >= LOSS_MIN_PACKETS {
            let f = self.lost as f64 / self.expected as f64;
            self.rule.on_fraction_lost(now, f);
            (self.expected, self.lost) = (0, 0);
        }
    }

    fn clone_box(&self) -> Box<dyn LossBased> {
        Box::new(self.clone())
    }
}

/// libwebrtc's `SendSideBandwidthEstimation`.
#[derive(Clone, Debug)]
pub struct SendSideBwe {
    loss: Box<dyn LossBased>,
    delay_based: Option<Bitrate>,
    min: Bitrate,
    max: Bitrate,
}

impl SendSideBwe {
    pub fn new(kind: LossKind, start: Bitrate, min: Bitrate, max: Bitrate) -> Self {
        SendSideBwe {
            loss: loss_controller(kind, start, min, max),
            delay_based: None,
            min,
            max,
        }
    }

    /// The target: the loss-based rate (which the delay-based limit caps), within [min, max].
    pub fn target(&self) -> Bitrate {
        let loss = self.loss_based();
        let limit = self.delay_based.map_or(loss, |d| d.min(loss));
        limit.clamp(self.min, self.max)
    }

    /// The loss-based controller's own rate.
    pub fn loss_based(&self) -> Bitrate {
        self.loss.rate()
    }

    /// A new delay-based estimate (`UpdateDelayBasedEstimate`).
    pub fn set_delay_based(&mut self, rate: Bitrate) {
        self.delay_based = Some(rate);
        self.loss.set_delay_based(rate);
    }

    /// A probe's result: the target jumps there (`SetSendBitrate`).
    pub fn set_send_bitrate(&mut self, rate: Bitrate) {
        self.loss.set_send_bitrate(rate);
    }

    /// What one feedback reported.
    pub fn on_feedback(&mut self, now: Instant, input: LossInput<'_>) {
        self.loss.on_feedback(now, input);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_is_the_smaller_of_loss_and_delay_based() {
        let kbps = Bitrate::from_kbps;
        let mut b = SendSideBwe::new(LossKind::V1, kbps(300), kbps(50), kbps(10_000));
        assert_eq!(b.target(), kbps(300));
        b.set_send_bitrate(kbps(900));
        assert_eq!(b.target(), kbps(900));
        b.set_delay_based(kbps(700));
        assert_eq!(b.target(), kbps(700));
        // Half of 40 packets lost: ×0.75 of the loss-based rate (capped at 700 by the delay-based).
        let lost: Vec<LossSample> = (0..40u64)
            .map(|k| LossSample {
                size: DataSize::from_bytes(1200),
                send: Instant::from_millis(k),
                received: (k % 2 == 0).then(|| Instant::from_millis(k + 20)),
            })
            .collect();
        let input = LossInput {
            packets: &lost,
            delay_based: Some(kbps(700)),
            acked: None,
            in_alr: false,
            rtt: Duration::from_millis(50),
        };
        b.on_feedback(Instant::from_secs(1), input);
        assert_eq!(b.target(), kbps(525));
    }
}
