//! The target rate from the delay-based estimate and a loss-based controller (libwebrtc
//! `modules/congestion_controller/goog_cc/send_side_bandwidth_estimation.cc`).
//!
//! `SendSideBandwidthEstimation` keeps the target: at most the delay-based limit, bounded by the
//! configured minimum and maximum, and lowered by the loss-based controller. Which loss-based
//! controller runs is a parameter ([`LossKind`]); each is one arm of [`LossController`]:
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
use crate::units::Bitrate;
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
    pub received: bool,
}

/// The loss-based controller in use.
#[derive(Clone, Debug)]
pub enum LossController {
    V1 {
        rule: Box<GccSender>,
        expected: u64,
        lost: u64,
    },
}

impl LossController {
    fn new(kind: LossKind, start: Bitrate, min: Bitrate, max: Bitrate) -> Self {
        match kind {
            LossKind::V1 => {
                let mut c = GccConfig::default();
                c.call.start = start;
                c.call.min = min;
                c.call.max = max;
                LossController::V1 {
                    rule: Box::new(GccSender::new(&c)),
                    expected: 0,
                    lost: 0,
                }
            }
        }
    }
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

/// libwebrtc's `SendSideBandwidthEstimation`.
#[derive(Clone, Debug)]
pub struct SendSideBwe {
    loss: LossController,
    delay_based: Option<Bitrate>,
    min: Bitrate,
    max: Bitrate,
}

impl SendSideBwe {
    pub fn new(kind: LossKind, start: Bitrate, min: Bitrate, max: Bitrate) -> Self {
        SendSideBwe {
            loss: LossController::new(kind, start, min, max),
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
        match &self.loss {
            LossController::V1 { rule, .. } => rule.loss_based_rate(),
        }
    }

    /// A new delay-based estimate (`UpdateDelayBasedEstimate`).
    pub fn set_delay_based(&mut self, rate: Bitrate) {
        self.delay_based = Some(rate);
        match &mut self.loss {
            LossController::V1 { rule, .. } => rule.set_delay_based_rate(rate),
        }
    }

    /// A probe's result: the target jumps there (`SetSendBitrate`).
    pub fn set_send_bitrate(&mut self, rate: Bitrate) {
        match &mut self.loss {
            LossController::V1 { rule, .. } => rule.set_loss_based_rate(rate),
        }
    }

    /// What one feedback reported.
    pub fn on_feedback(&mut self, now: Instant, input: LossInput<'_>) {
        match &mut self.loss {
            LossController::V1 {
                rule,
                expected,
                lost,
            } => {
                rule.set_rtt(input.rtt);
                *expected += input.packets.len() as u64;
                *lost += input.packets.iter().filter(|p| !p.received).count() as u64;
                if *expected >= LOSS_MIN_PACKETS {
                    rule.on_fraction_lost(now, *lost as f64 / *expected as f64);
                    (*expected, *lost) = (0, 0);
                }
            }
        }
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
        let lost: Vec<LossSample> = (0..40)
            .map(|k| LossSample {
                received: k % 2 == 0,
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
