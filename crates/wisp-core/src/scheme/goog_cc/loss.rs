//! The target rate from the delay-based estimate and a loss-based controller (libwebrtc
//! `modules/congestion_controller/goog_cc/send_side_bandwidth_estimation.cc`).
//!
//! `SendSideBandwidthEstimation` keeps the target: at most the delay-based limit, bounded by the
//! configured minimum and maximum, and lowered by the loss-based controller. Which loss-based
//! controller runs is a parameter ([`LossKind`]); each implements [`LossBased`] and is one arm
//! of `loss_controller`'s match:
//!
//! * `v2` (the default, as libwebrtc's `WebRTC-Bwe-LossBasedBweV2` is enabled by default):
//!   [`LossBasedBweV2`] once it is ready (`LossBasedBandwidthEstimatorV2ReadyForUse`: it has
//!   an estimate from enough observations), and until then the `v1` rule below, as
//!   `SendSideBandwidthEstimation::UpdateEstimate` falls back to its classic loss rule. It is
//!   told the acknowledged rate (`SetAcknowledgedRate`), each feedback's packets with the
//!   delay-based limit and the ALR state (`UpdateLossBasedEstimator`); a probe's result reaches
//!   it as the delay-based estimate;
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

use crate::scheme::gcc::loss_v2::{LossBasedBweV2, LossV2Config, PacketResult, UNBOUNDED};
use crate::scheme::gcc::{GccConfig, GccSender};
use crate::time::{Duration, Instant};
use crate::units::Bitrate;
use core::fmt;
use serde::{Deserialize, Serialize};

/// The loss-based controller's name, as the `loss` parameter gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossKind {
    /// libwebrtc's loss-based BWE v2 (with `v1` until it is ready).
    #[default]
    V2,
    /// Eq. (1) at libwebrtc's cadence.
    V1,
}

/// `kLimitNumPackets`: the loss fraction is computed over at least this many reported packets.
const LOSS_MIN_PACKETS: u64 = 20;

/// One packet a feedback reported on, as the loss-based controllers see it: its size, send
/// time and arrival (receiver clock; `None` if reported lost).
pub type LossSample = PacketResult;

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
        LossKind::V2 => Box::new(LossV2::new(start, min, max)),
    }
}

/// `loss=v2`: libwebrtc's [`LossBasedBweV2`], with the `v1` rule until it is ready.
#[derive(Clone, Debug)]
struct LossV2 {
    v2: LossBasedBweV2,
    classic: LossV1,
    delay_based: Option<Bitrate>,
}

impl LossV2 {
    fn new(start: Bitrate, min: Bitrate, max: Bitrate) -> Self {
        let mut v2 = LossBasedBweV2::new(LossV2Config::default());
        v2.set_min_max(min, max);
        LossV2 {
            v2,
            classic: LossV1::new(start, min, max),
            delay_based: None,
        }
    }
}

impl LossBased for LossV2 {
    fn rate(&self) -> Bitrate {
        if self.v2.is_ready() {
            self.v2.result().bandwidth
        } else {
            self.classic.rate()
        }
    }

    fn set_delay_based(&mut self, rate: Bitrate) {
        self.delay_based = Some(rate);
        self.classic.set_delay_based(rate);
    }

    /// v2 is not told: a probe's result reaches it as the delay-based estimate it caps its
    /// candidates with (libwebrtc's `SetSendBitrate` leaves v2 alone; its `SetBandwidthEstimate`
    /// is for unit tests).
    fn set_send_bitrate(&mut self, rate: Bitrate) {
        self.classic.set_send_bitrate(rate);
    }

    fn on_feedback(&mut self, now: Instant, input: LossInput<'_>) {
        self.classic.on_feedback(now, input);
        if let Some(acked) = input.acked {
            self.v2.set_acknowledged_bitrate(acked);
        }
        let limit = self.delay_based.unwrap_or(UNBOUNDED);
        self.v2.update(now, input.packets, limit, input.in_alr);
    }

    fn clone_box(&self) -> Box<dyn LossBased> {
        Box::new(self.clone())
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
    use crate::units::DataSize;

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
                send_time: Instant::from_millis(k),
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

    /// Feeds `secs` of feedback every 50 ms (100 packets of 1200 bytes a second, one in
    /// `lose_every` reported lost) with a delay-based estimate of 1 Mbit/s; returns the target.
    fn target_after(kind: LossKind, lose_every: u64, secs: u64) -> Bitrate {
        let kbps = Bitrate::from_kbps;
        let mut b = SendSideBwe::new(kind, kbps(300), kbps(50), kbps(10_000));
        let mut k = 0u64;
        for f in 1..=secs * 20 {
            b.set_delay_based(kbps(1000));
            let packets: Vec<LossSample> = (0..5)
                .map(|_| {
                    k += 1;
                    LossSample {
                        size: DataSize::from_bytes(1200),
                        send_time: Instant::from_millis(k * 10),
                        received: (k % lose_every != 0).then(|| Instant::from_millis(k * 10 + 30)),
                    }
                })
                .collect();
            let input = LossInput {
                packets: &packets,
                delay_based: Some(kbps(1000)),
                acked: Some(kbps(960)),
                in_alr: false,
                rtt: Duration::from_millis(60),
            };
            b.on_feedback(Instant::from_millis(f * 50), input);
        }
        b.target()
    }

    /// 5 % of packets lost at every rate (one in every 20, so each 20-packet window of v1 sees
    /// exactly 5 %) is loss the sending rate does not cause: v2 takes it
    /// as inherent and follows the delay-based estimate, where v1's eq. (1) holds its rate
    /// (between 2 % and 10 % it neither increases nor decreases).
    #[test]
    fn v2_is_not_held_back_by_random_loss() {
        let v2 = target_after(LossKind::V2, 20, 10);
        let v1 = target_after(LossKind::V1, 20, 10);
        assert_eq!(v2, Bitrate::from_kbps(1000), "v2 {v2:?}");
        assert_eq!(v1, Bitrate::from_kbps(300), "v1 {v1:?}");
        // Without loss both follow the delay-based estimate (v1 by ×1.05 a second).
        assert_eq!(
            target_after(LossKind::V2, u64::MAX, 10),
            Bitrate::from_kbps(1000)
        );
    }
}
