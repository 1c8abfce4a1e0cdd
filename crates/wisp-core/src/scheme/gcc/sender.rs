//! The sender half of GCC: the loss-based controller and the target (ANRW'16 §3, "The
//! sender-side congestion control").
//!
//! On receiver report k, with f the fraction lost it carries:
//!
//! ```text
//!            ⎧ A_s(t_{k−1}) · (1 − 0.5·f)   f > 0.1
//! A_s(t_k) = ⎨ 1.05 · A_s(t_{k−1})          f < 0.02                              (1)
//!            ⎩ A_s(t_{k−1})                 otherwise
//! A = min(A_s, A_r)
//! ```
//!
//! where A_r is the last rate a REMB carried. As libwebrtc's `SendSideBandwidthEstimation`
//! (`kBweIncreaseInterval` 1 s, `kBweDecreaseInterval` 300 ms), A_s increases at most once per
//! second and decreases at most once per 300 ms + RTT; a report that comes sooner (one goes out
//! with every REMB, up to five a second) leaves A_s as it is. Before this, every report applied
//! eq. (1), so A_s grew by 5 % per REMB, up to 28 % a second. The RTT is the last one a receiver
//! report's echo gave (RFC 3550's LSR/DLSR on the newest data packet: now − its send time − how
//! long the receiver held it), zero before the first (libwebrtc's value before its first
//! measurement).
//!
//! The target A drives the encoder and the pacer,
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
use crate::time::{Duration, Instant};
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
    last_increase: Option<Instant>,
    last_decrease: Option<Instant>,
    rtt: Duration,
}

/// A_s increases at most this often (libwebrtc `kBweIncreaseInterval`).
pub const INCREASE_INTERVAL: Duration = Duration::from_secs(1);
/// A_s decreases at most this often, plus the RTT (libwebrtc `kBweDecreaseInterval`).
pub const DECREASE_INTERVAL: Duration = Duration::from_millis(300);

impl GccSender {
    pub fn new(config: &GccConfig) -> Self {
        let call = &config.call;
        let min = call.min.bps() as f64;
        let max = (call.max.bps() as f64).max(min);
        GccSender {
            min,
            max,
            pace_factor: call.pace_factor,
            a_s: (call.start.bps() as f64).clamp(min, max),
            a_r: None,
            reports: 0,
            last_fraction_lost: 0.0,
            last_increase: None,
            last_decrease: None,
            rtt: Duration::ZERO,
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

    /// The round-trip time the decrease interval adds to 300 ms (the last measured).
    pub fn rtt(&self) -> Duration {
        self.rtt
    }

    /// Sets the round-trip time, for a sender that measures it another way (`gcc-twcc` from its
    /// transport-wide feedback).
    pub fn set_rtt(&mut self, rtt: Duration) {
        self.rtt = rtt;
    }

    /// A delay-based estimate (A_r) from wherever it was computed: a REMB here, the send-side
    /// estimator of `gcc-twcc`. It caps A and A_s.
    pub fn set_delay_based_rate(&mut self, rate: Bitrate) {
        self.a_r = Some(rate.bps() as f64);
        self.cap();
    }

    /// Sets A_s (the send side's probe result, libwebrtc `SetSendBitrate`), within its caps.
    pub fn set_loss_based_rate(&mut self, rate: Bitrate) {
        self.a_s = rate.bps() as f64;
        self.cap();
    }

    /// Eq. (1) for a report carrying fraction lost `f` that arrived at `now`, at libwebrtc's
    /// cadence.
    pub fn on_fraction_lost(&mut self, now: Instant, f: f64) {
        self.reports += 1;
        self.last_fraction_lost = f;
        let since = |t: Option<Instant>| t.map(|t| now.saturating_duration_since(t));
        if f > 0.1 {
            if since(self.last_decrease).is_none_or(|d| d >= DECREASE_INTERVAL + self.rtt) {
                self.a_s *= 1.0 - 0.5 * f;
                self.last_decrease = Some(now);
            }
        } else if f < 0.02 && since(self.last_increase).is_none_or(|d| d >= INCREASE_INTERVAL) {
            self.a_s *= 1.05;
            self.last_increase = Some(now);
        }
        self.cap();
    }
}

impl Sender for GccSender {
    type Feedback = GccFeedback;
    type Fields = ();

    fn on_packet_sent(&mut self, _now: Instant, _packet: &DataHeader, _ctx: &SendContext) {}

    fn on_feedback(&mut self, now: Instant, feedback: &GccFeedback) {
        match feedback {
            GccFeedback::Report(rr) => {
                if let Some(e) = rr.echo {
                    self.rtt = now.saturating_duration_since(e.sent).saturating_sub(e.held);
                }
                self.on_fraction_lost(now, f64::from(rr.fraction_lost) / 256.0);
            }
            GccFeedback::Remb(remb) => self.set_delay_based_rate(remb.bitrate()),
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
    use crate::wire::{ReceiverReport, Remb, RttEcho};

    fn rr(fraction_lost: u8) -> GccFeedback {
        GccFeedback::Report(ReceiverReport {
            highest_seq: 0,
            received: 0,
            cumulative_lost: 0,
            fraction_lost,
            echo: None,
        })
    }

    /// Eq. (1), one report a second (each far enough from the last to act).
    #[test]
    fn equation_1() {
        let mut s = GccSender::new(&GccConfig::default());
        let mut secs = 0;
        let mut tick = || {
            secs += 1;
            Instant::ZERO + Duration::from_secs(secs)
        };
        assert_eq!(s.target(), Bitrate::from_kbps(300));
        s.on_feedback(tick(), &rr(0));
        assert_eq!(s.target(), Bitrate::from_kbps(315));
        // 5/256 ≈ 2 %: hold.
        s.on_feedback(tick(), &rr(6));
        assert_eq!(s.target(), Bitrate::from_kbps(315));
        // 64/256 = 25 %: × (1 − 0.125).
        s.on_feedback(tick(), &rr(64));
        assert_eq!(s.target(), Bitrate::from_bps(275_625));
        // A REMB below A_s caps both A and A_s.
        s.on_feedback(
            tick(),
            &GccFeedback::Remb(Remb::new(Bitrate::from_kbps(200))),
        );
        assert_eq!(s.target(), Bitrate::from_kbps(200));
        s.on_feedback(tick(), &rr(0));
        assert_eq!(s.target(), Bitrate::from_kbps(200));
        assert_eq!(s.loss_based_rate(), Bitrate::from_kbps(200));
        // A larger REMB lets A_s grow again, 5 % per report.
        s.on_feedback(
            tick(),
            &GccFeedback::Remb(Remb::new(Bitrate::from_kbps(1000))),
        );
        s.on_feedback(tick(), &rr(0));
        assert_eq!(s.target(), Bitrate::from_kbps(210));
        match s.allowance(Instant::ZERO) {
            Allowance::Rate { target, pacing } => {
                assert_eq!(target, Bitrate::from_kbps(210));
                assert_eq!(pacing, Bitrate::from_kbps(525));
            }
            a => panic!("{a:?}"),
        }
        // Never below the encoder's minimum.
        for _ in 0..100 {
            s.on_feedback(tick(), &rr(255));
        }
        assert_eq!(s.target(), Bitrate::from_kbps(50));
        // Not even when a REMB carries less.
        s.on_feedback(
            tick(),
            &GccFeedback::Remb(Remb::new(Bitrate::from_kbps(10))),
        );
        assert_eq!(s.remote_rate(), Some(Bitrate::from_kbps(10)));
        assert_eq!(s.target(), Bitrate::from_kbps(50));
    }

    /// libwebrtc's cadence: with a report every 200 ms (one with every REMB), A_s increases once
    /// a second, not five times; it decreases at most once per 300 ms + RTT.
    #[test]
    fn eq_1_runs_at_libwebrtc_s_cadence() {
        let mut s = GccSender::new(&GccConfig::default());
        let at = |ms: u64| Instant::ZERO + Duration::from_millis(ms);
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-12;
        // No loss, reports at 0, 200, …, 2000 ms: increases at 0, 1000 and 2000 ms.
        for k in 0..=10 {
            s.on_feedback(at(200 * k), &rr(0));
        }
        assert!(close(s.a_s, 300_000.0 * 1.05_f64.powi(3)), "{}", s.a_s);
        // 25 % loss, reports every 100 ms from 2100 to 2900 ms: decreases at 2100, 2400, 2700.
        let before = s.a_s;
        for k in 0..9 {
            s.on_feedback(at(2100 + 100 * k), &rr(64));
        }
        assert!(close(s.a_s, before * 0.875_f64.powi(3)), "{}", s.a_s);
        // With a 200-ms RTT (a report echoing a packet sent at 2750 ms and held 50 ms), 500 ms
        // apart: at 3000 ms (300 after the last) nothing, at 3200 one.
        let before = s.a_s;
        let GccFeedback::Report(echoed) = rr(64) else {
            unreachable!()
        };
        let echoed = GccFeedback::Report(ReceiverReport {
            echo: Some(RttEcho {
                sent: at(2750),
                held: Duration::from_millis(50),
            }),
            ..echoed
        });
        s.on_feedback(at(3000), &echoed);
        assert_eq!(s.rtt(), Duration::from_millis(200));
        assert_eq!(s.a_s, before);
        s.on_feedback(at(3200), &rr(64));
        assert!(close(s.a_s, before * 0.875), "{}", s.a_s);
    }
}
