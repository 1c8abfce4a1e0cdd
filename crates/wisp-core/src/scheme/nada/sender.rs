//! NADA's sender (RFC 8698 §4.3): the reference rate r_ref from each feedback report
//! (accelerated ramp-up or gradual update), and from it, with the rate shaping buffer, the
//! encoder's target r_vin and the sending rate r_send.

use super::NadaConfig;
use super::feedback::{Mode, NadaFeedback};
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::packet::{DataHeader, Ecn};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};

/// §4.3 eq. (3): gamma = min(GAMMA_MAX, QBOUND/(rtt + DELTA + DFILT)), the ramp-up's rate
/// increase ratio, so that one ramp-up step adds at most QBOUND of queue. Times in seconds.
pub fn gamma(c: &NadaConfig, rtt: f64) -> f64 {
    let bound = c.qbound.as_secs_f64() / (rtt + c.delta.as_secs_f64() + c.dfilt.as_secs_f64());
    bound.min(c.gamma_max)
}

/// §4.3 eq. (4), accelerated ramp-up: r_ref = max(r_ref, (1 + gamma)·r_recv). Rates in bit/s.
pub fn ramp_up(r_ref: f64, r_recv: f64, gamma: f64) -> f64 {
    r_ref.max((1.0 + gamma) * r_recv)
}

/// §4.3 eqs. (5)–(7), the gradual update, one step: x_offset = x_curr − PRIO·XREF·RMAX/r_ref,
/// x_diff = x_curr − x_prev,
/// r_ref ← r_ref − KAPPA·(δ/TAU)·(x_offset/TAU)·r_ref − KAPPA·ETA·(x_diff/TAU)·r_ref,
/// with δ the interval since the previous report. Times in seconds, rates in bit/s.
pub fn gradual(c: &NadaConfig, r_ref: f64, x_curr: f64, x_prev: f64, delta: f64) -> f64 {
    let tau = c.tau.as_secs_f64();
    let x_offset = x_curr - c.prio * c.xref.as_secs_f64() * c.call.max.bps() as f64 / r_ref;
    let x_diff = x_curr - x_prev;
    r_ref
        - c.kappa * (delta / tau) * (x_offset / tau) * r_ref
        - c.kappa * c.eta * (x_diff / tau) * r_ref
}

/// §4.3 eqs. (8), (9), the rate shaping buffer: with buffer_len bytes waiting,
/// r_vin = max(RMIN, r_ref − BETA_V·8·buffer_len·FPS) for the encoder and
/// r_send = min(RMAX, r_ref + BETA_S·8·buffer_len·FPS) out of the buffer. Bit/s.
pub fn shaped(c: &NadaConfig, r_ref: f64, buffer: DataSize, fps: f64) -> (f64, f64) {
    let drain = 8.0 * buffer.bytes() as f64 * fps;
    let r_vin = (r_ref - c.beta_v * drain).max(c.call.min.bps() as f64);
    let r_send = (r_ref + c.beta_s * drain).min(c.call.max.bps() as f64);
    (r_vin, r_send)
}

/// NADA's sender.
#[derive(Clone, Debug)]
pub struct NadaSender {
    c: NadaConfig,
    /// FPS of eqs. (8), (9): the call's frame rate.
    fps: f64,
    /// r_ref, bit/s.
    r_ref: f64,
    /// x_curr of the previous report, s.
    x_prev: Option<f64>,
    /// When the previous report arrived.
    t_last: Option<Instant>,
    rtt: Option<Duration>,
    /// buffer_len: what the source held after the last packet left.
    buffer: DataSize,
    feedbacks: u64,
}

impl NadaSender {
    pub fn new(config: &NadaConfig, fps: u32) -> Self {
        NadaSender {
            c: config.clone(),
            fps: f64::from(fps),
            r_ref: config.call.start.bps() as f64,
            x_prev: None,
            t_last: None,
            rtt: None,
            buffer: DataSize::ZERO,
            feedbacks: 0,
        }
    }

    /// r_ref.
    pub fn reference_rate(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.r_ref)
    }

    /// The last RTT measured (report arrival − the echoed send time − the receiver's hold).
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }

    /// Feedback reports taken into account.
    pub fn feedbacks(&self) -> u64 {
        self.feedbacks
    }

    /// (r_vin, r_send) now.
    pub fn rates(&self) -> (Bitrate, Bitrate) {
        let (v, s) = shaped(&self.c, self.r_ref, self.buffer, self.fps);
        (Bitrate::from_bps_f64(v), Bitrate::from_bps_f64(s))
    }
}

impl Sender for NadaSender {
    type Feedback = NadaFeedback;
    type Fields = ();

    /// ECT(0) with `ecn` (RFC 8698 takes marks as classic RFC 3168 congestion signals, see the
    /// module doc), else Not-ECT.
    fn ecn(&self) -> Ecn {
        if self.c.ecn { Ecn::Ect0 } else { Ecn::NotEct }
    }

    fn on_packet_sent(&mut self, _now: Instant, _packet: &DataHeader, ctx: &SendContext) {
        self.buffer = ctx.backlog_after.unwrap_or(DataSize::ZERO);
    }

    /// §4.3: the RTT from the echo, then r_ref by the mode the receiver chose, clipped to
    /// [RMIN, RMAX].
    fn on_feedback(&mut self, now: Instant, fb: &NadaFeedback) {
        let rtt = now
            .saturating_duration_since(fb.echo.sent)
            .saturating_sub(fb.echo.held);
        self.rtt = Some(rtt);
        // XMAX (cisco/ns3-rmcat's bound, not in RFC 8698): a loss term of several seconds
        // would otherwise swing the x_diff term of eq. (7) by more than r_ref itself.
        let x_curr = fb.x_curr.min(self.c.xmax).as_secs_f64();
        let delta = self
            .t_last
            .map_or(self.c.delta, |t| now.saturating_duration_since(t));
        let r = match fb.rmode {
            Mode::RampUp => ramp_up(
                self.r_ref,
                fb.r_recv.bps() as f64,
                gamma(&self.c, rtt.as_secs_f64()),
            ),
            Mode::Gradual => gradual(
                &self.c,
                self.r_ref,
                x_curr,
                self.x_prev.unwrap_or(x_curr),
                delta.as_secs_f64(),
            ),
        };
        self.r_ref = r.clamp(self.c.call.min.bps() as f64, self.c.call.max.bps() as f64);
        self.x_prev = Some(x_curr);
        self.t_last = Some(now);
        self.feedbacks += 1;
    }

    /// The encoder's target r_vin; packets leave at r_send (§4.3, the rate shaping buffer),
    /// times `pace-factor` (1 by default).
    fn allowance(&self, _now: Instant) -> Allowance {
        let (target, send) = self.rates();
        let pacing = send.mul_f64(self.c.call.pace_factor);
        Allowance::Rate { target, pacing }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.reference_rate()),
            window: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::RttEcho;

    fn c() -> NadaConfig {
        NadaConfig::default()
    }

    /// Eq. (3) with QBOUND 50 ms, DELTA 100 ms, DFILT 120 ms: rtt 100 ms → 50/320 = 0.15625;
    /// rtt 0 → 50/220 = 0.22727; with QBOUND 200 ms, 200/320 = 0.625, capped at GAMMA_MAX 0.5.
    #[test]
    fn gamma_by_hand() {
        assert!((gamma(&c(), 0.1) - 0.15625).abs() < 1e-12);
        assert!((gamma(&c(), 0.0) - 50.0 / 220.0).abs() < 1e-12);
        let wide = NadaConfig {
            qbound: Duration::from_millis(200),
            ..c()
        };
        assert_eq!(gamma(&wide, 0.1), 0.5);
    }

    /// Eq. (4): r_ref 500 kbit/s, r_recv 600 kbit/s, gamma 0.15625 → 1.15625·600 = 693.75
    /// kbit/s; a lower r_recv keeps r_ref.
    #[test]
    fn ramp_up_by_hand() {
        assert!((ramp_up(500e3, 600e3, 0.15625) - 693_750.0).abs() < 1e-6);
        assert_eq!(ramp_up(500e3, 300e3, 0.15625), 500e3);
    }

    /// Eqs. (5)–(7), one step: r_ref 1 Mbit/s, RMAX 2.5 Mbit/s, PRIO 1, XREF 10 ms → the
    /// reference term 25 ms; x_curr 35 ms, x_prev 30 ms, δ 100 ms, TAU 500 ms, KAPPA 0.5,
    /// ETA 2: x_offset 10 ms, x_diff 5 ms; 0.5·0.2·0.02·1e6 = 2000 and 0.5·2·0.01·1e6 = 10 000,
    /// so r_ref = 988 000 bit/s. At x_curr = 25 ms with no change it holds.
    #[test]
    fn one_gradual_step_by_hand() {
        let r = gradual(&c(), 1e6, 0.035, 0.030, 0.1);
        assert!((r - 988_000.0).abs() < 1e-6, "{r}");
        let r = gradual(&c(), 1e6, 0.025, 0.025, 0.1);
        assert!((r - 1e6).abs() < 1e-6, "{r}");
    }

    /// Eqs. (8), (9): r_ref 1 Mbit/s, 1000 bytes waiting, FPS 30, BETA 0.1: 0.1·8·1000·30 =
    /// 24 kbit/s off the encoder's target and onto the sending rate; clipped to RMIN and RMAX.
    #[test]
    fn shaping_buffer_by_hand() {
        let (v, s) = shaped(&c(), 1e6, DataSize::from_bytes(1000), 30.0);
        assert!(
            (v - 976e3).abs() < 1e-6 && (s - 1_024e3).abs() < 1e-6,
            "{v} {s}"
        );
        let (v, s) = shaped(&c(), 160e3, DataSize::from_bytes(1000), 30.0);
        assert_eq!(v, 150e3);
        assert!((s - 184e3).abs() < 1e-6);
        let (_, s) = shaped(&c(), 2.49e6, DataSize::from_bytes(1000), 30.0);
        assert_eq!(s, 2.5e6);
    }

    fn report(rmode: Mode, x_ms: u64, r_recv_kbps: u64, sent_ms: u64) -> NadaFeedback {
        NadaFeedback {
            x_curr: Duration::from_millis(x_ms),
            rmode,
            r_recv: Bitrate::from_kbps(r_recv_kbps),
            echo: RttEcho {
                sent: Instant::from_millis(sent_ms),
                held: Duration::from_millis(10),
            },
        }
    }

    /// The sender on reports: RTT from the echo; a ramp-up step; r_ref clipped to RMAX on a
    /// ramp-up and to RMIN on a large congestion signal.
    #[test]
    fn feedback_updates_and_clips_the_reference_rate() {
        let mut s = NadaSender::new(&c(), 30);
        assert_eq!(s.reference_rate(), Bitrate::from_kbps(150));
        // Sent at 1000 ms, held 10 ms, back at 1110 ms: rtt 100 ms, gamma 0.15625.
        s.on_feedback(
            Instant::from_millis(1_110),
            &report(Mode::RampUp, 0, 400, 1_000),
        );
        assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
        assert_eq!(s.reference_rate(), Bitrate::from_bps(462_500));
        s.on_feedback(
            Instant::from_millis(1_210),
            &report(Mode::RampUp, 0, 3_000, 1_100),
        );
        assert_eq!(s.reference_rate(), Bitrate::from_kbps(2_500));
        // 2 s of queueing: far below RMIN in one step, clipped to it.
        s.on_feedback(
            Instant::from_millis(1_310),
            &report(Mode::Gradual, 2_000, 0, 1_200),
        );
        assert_eq!(s.reference_rate(), Bitrate::from_kbps(150));
        assert_eq!(s.feedbacks(), 3);
        // The shaping buffer moves the allowance: nothing waiting, r_vin = r_send = r_ref.
        assert_eq!(
            s.allowance(Instant::from_millis(1_310)),
            Allowance::Rate {
                target: Bitrate::from_kbps(150),
                pacing: Bitrate::from_kbps(150),
            }
        );
    }

    /// XMAX: a report of 2 s is taken as 500 ms. From r_ref 1 Mbit/s with no change
    /// (x_prev = x_curr on the first report): x_offset = 500 − 10·2.5/1 = 475 ms, r_ref =
    /// 1e6 − 0.5·0.2·0.95·1e6 = 905 000 bit/s (605 000 without the bound).
    #[test]
    fn the_congestion_signal_is_bounded_by_xmax() {
        let c = NadaConfig {
            call: crate::scheme::call::CallRates {
                start: Bitrate::from_kbps(1000),
                ..c().call
            },
            ..c()
        };
        let mut s = NadaSender::new(&c, 30);
        s.on_feedback(
            Instant::from_millis(1_110),
            &report(Mode::Gradual, 2_000, 0, 1_000),
        );
        assert_eq!(s.reference_rate(), Bitrate::from_bps(905_000));
    }
}
