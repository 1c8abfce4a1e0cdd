//! The sender half of GCC: the loss-based controller and the target (ANRW'16 §3, "The
//! sender-side congestion control").
//!
//! On each receiver report k, with f the fraction lost it carries:
//!
//! ```text
//!            ⎧ A_s(t_{k−1}) · (1 − 0.5·f)   f > 0.1
//! A_s(t_k) = ⎨ 1.05 · A_s(t_{k−1})          f < 0.02                              (1)
//!            ⎩ A_s(t_{k−1})                 otherwise
//! A = min(A_s, A_r)
//! ```
//!
//! where A_r is the last rate a REMB carried. The target A drives the encoder and the pacer,
//! which releases groups every ΔT = 5 ms at 2.5·A (libwebrtc's `kDefaultPaceMultiplier`) so the
//! encoder's frames leave promptly.
//!
//! As libwebrtc's `SendSideBandwidthEstimation`, A_s itself is capped by A_r ("to avoid that A_s
//! exceeds the last received value of A_r", §3) and by the configured [min, max] (the encoder's
//! range, 50–2500 kbit/s), and starts at 300 kbit/s (libwebrtc's default start rate). Before the
//! first REMB, A = A_s.

use super::GccConfig;
use super::GccFeedback;
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::packet::DataHeader;
use crate::time::Instant;
use crate::units::Bitrate;

/// GCC's sender half.
#[derive(Clone, Debug)]
pub struct GccSender {
    min: f64,
    max: f64,
    pace_factor: f64,
    /// A_s, bit/s.
    a_s: f64,
    /// The last A_r received, bit/s.
    a_r: Option<f64>,
    reports: u64,
    last_fraction_lost: f64,
}

impl GccSender {
    pub fn new(config: &GccConfig) -> Self {
        let min = config.min_rate.bps() as f64;
        let max = (config.max_rate.bps() as f64).max(min);
        GccSender {
            min,
            max,
            pace_factor: config.pace_factor,
            a_s: (config.start_rate.bps() as f64).clamp(min, max),
            a_r: None,
            reports: 0,
            last_fraction_lost: 0.0,
        }
    }

    /// A_s.
    pub fn loss_based_rate(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.a_s)
    }

    /// The last A_r received.
    pub fn remote_rate(&self) -> Option<Bitrate> {
        self.a_r.map(Bitrate::from_bps_f64)
    }

    /// A = min(A_s, A_r), at least the configured minimum (libwebrtc's
    /// `SendSideBandwidthEstimation::CapBitrateToThresholds` caps by the REMB first and then
    /// raises to the minimum: a REMB below the encoder's range does not starve the call).
    pub fn target(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.a_r.map_or(self.a_s, |r| self.a_s.min(r)).max(self.min))
    }

    fn cap(&mut self) {
        if let Some(r) = self.a_r {
            self.a_s = self.a_s.min(r);
        }
        self.a_s = self.a_s.clamp(self.min, self.max);
    }

    /// Eq. (1) for a report carrying fraction lost `f`.
    fn on_fraction_lost(&mut self, f: f64) {
        self.reports += 1;
        self.last_fraction_lost = f;
        if f > 0.1 {
            self.a_s *= 1.0 - 0.5 * f;
        } else if f < 0.02 {
            self.a_s *= 1.05;
        }
        self.cap();
    }
}

impl Sender for GccSender {
    type Feedback = GccFeedback;
    type Fields = ();

    fn on_packet_sent(&mut self, _now: Instant, _packet: &DataHeader, _ctx: &SendContext) {}

    fn on_feedback(&mut self, _now: Instant, feedback: &GccFeedback) {
        match feedback {
            GccFeedback::Report(rr) => {
                self.on_fraction_lost(f64::from(rr.fraction_lost) / 256.0);
            }
            GccFeedback::Remb(remb) => {
                self.a_r = Some(remb.bitrate().bps() as f64);
                self.cap();
            }
        }
    }

    fn allowance(&self, _now: Instant) -> Allowance {
        let target = self.target();
        Allowance::Rate {
            target,
            pacing: target.mul_f64(self.pace_factor),
        }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.target()),
            window: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ReceiverReport, Remb};

    fn rr(fraction_lost: u8) -> GccFeedback {
        GccFeedback::Report(ReceiverReport {
            highest_seq: 0,
            received: 0,
            cumulative_lost: 0,
            fraction_lost,
        })
    }

    #[test]
    fn equation_1() {
        let mut s = GccSender::new(&GccConfig::default());
        let now = Instant::ZERO;
        assert_eq!(s.target(), Bitrate::from_kbps(300));
        s.on_feedback(now, &rr(0));
        assert_eq!(s.target(), Bitrate::from_kbps(315));
        // 5/256 ≈ 2 %: hold.
        s.on_feedback(now, &rr(6));
        assert_eq!(s.target(), Bitrate::from_kbps(315));
        // 64/256 = 25 %: × (1 − 0.125).
        s.on_feedback(now, &rr(64));
        assert_eq!(s.target(), Bitrate::from_bps(275_625));
        // A REMB below A_s caps both A and A_s.
        s.on_feedback(now, &GccFeedback::Remb(Remb::new(Bitrate::from_kbps(200))));
        assert_eq!(s.target(), Bitrate::from_kbps(200));
        s.on_feedback(now, &rr(0));
        assert_eq!(s.target(), Bitrate::from_kbps(200));
        assert_eq!(s.loss_based_rate(), Bitrate::from_kbps(200));
        // A larger REMB lets A_s grow again, 5 % per report.
        s.on_feedback(now, &GccFeedback::Remb(Remb::new(Bitrate::from_kbps(1000))));
        s.on_feedback(now, &rr(0));
        assert_eq!(s.target(), Bitrate::from_kbps(210));
        match s.allowance(now) {
            Allowance::Rate { target, pacing } => {
                assert_eq!(target, Bitrate::from_kbps(210));
                assert_eq!(pacing, Bitrate::from_kbps(525));
            }
            a => panic!("{a:?}"),
        }
        // Never below the encoder's minimum.
        for _ in 0..100 {
            s.on_feedback(now, &rr(255));
        }
        assert_eq!(s.target(), Bitrate::from_kbps(50));
        // Not even when a REMB carries less.
        s.on_feedback(now, &GccFeedback::Remb(Remb::new(Bitrate::from_kbps(10))));
        assert_eq!(s.remote_rate(), Some(Bitrate::from_kbps(10)));
        assert_eq!(s.target(), Bitrate::from_kbps(50));
    }
}
