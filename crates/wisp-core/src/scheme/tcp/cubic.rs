//! `cubic` — CUBIC for Fast and Long-Distance Networks, RFC 9438.
//!
//! Windows in segments, time in seconds, C = 0.4, β_cubic = 0.7:
//!
//! ```text
//! W_cubic(t) = C·(t − K)³ + W_max                                  (Figure 1, §4.2)
//! K = ∛((W_max − cwnd_epoch) / C)                                  (Figure 2)
//! target = clamp(W_cubic(t + RTT), cwnd, 1.5·cwnd),  RTT = SRTT    (§4.2)
//! α_cubic = 3·(1 − β_cubic) / (1 + β_cubic)                         (Figure 3)
//! W_est += α_cubic · segments_acked / cwnd; α_cubic = 1 once W_est ≥ cwnd_prior   (Figure 4, §4.3)
//! Reno-friendly region, W_cubic(t) < W_est:   cwnd = W_est          (§4.3)
//! concave/convex regions:  cwnd += (target − cwnd) / cwnd per ACK  (§4.4, §4.5)
//! congestion event:  W_max = cwnd·(1 + β)/2 if cwnd < W_max (fast convergence, §4.7) else cwnd
//!                    cwnd_prior = cwnd; ssthresh = max(flight_size·β, 2); cwnd = ssthresh   (§4.6)
//! timeout:  ssthresh as §4.6 (first expiry), cwnd = 1; next CA stage K = 0,
//!           W_max = W_est = cwnd at its start                        (§4.8)
//! ```
//!
//! `t` runs from the start of the current congestion-avoidance stage (the first ACK after slow
//! start or recovery); `cwnd_epoch` and `W_est` are set to the window then. A timeout found
//! spurious is undone by restoring the whole state (§4.9).
//!
//! Slow start (§4.10): the initial one uses HyStart++ (RFC 9406, [`super::hystart`]), which
//! leaves it when the RTT rises, without a loss; then "CUBIC sets cwnd_prior = cwnd" and the
//! first stage has K = 0 and W_max = cwnd. Linux's CUBIC, the paper's, left slow start on delay
//! too (HyStart, on by default since 2.6.29). Later slow starts (after a timeout) are RFC 5681's.
//! `hystart=false` gives RFC 5681 slow start throughout.
//!
//! Deviations:
//! * The increments of §4.3–4.5 are applied per acknowledged segment (an ACK of k segments counts
//!   k times), so a lost ACK does not slow the growth.

use super::hystart::HyStartPlusPlus;
use super::{AckSample, TcpParams, Window, WindowAdjustment};
use crate::scheme::params::{Checked, Given, Validate, check, range, scheme_config};
use crate::time::Instant;

scheme_config! {
    /// Configuration of [`Cubic`] (`cubic:c=0.4,beta=0.7,fast-convergence=true,hystart=true`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CubicConfig {
        /// C, segments/s³.
        // 0.4.
        pub c: f64,
        /// β_cubic, the window's multiplicative decrease.
        // §4.6: 0.7.
        pub beta: f64,
        /// Fast convergence (§4.7).
        // SHOULD.
        pub fast_convergence: bool,
        /// HyStart++ in the initial slow start (RFC 9406).
        // §4.10.
        pub hystart: bool,
        #[group]
        pub tcp: TcpParams,
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            hystart: true,
            tcp: TcpParams::default(),
        }
    }
}

impl Validate for CubicConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        range("c", self.c, 1e-6, 1e3, "a positive number, at most 1000")?;
        check(
            "beta",
            self.beta > 0.0 && self.beta < 1.0,
            "a number between 0 and 1",
        )?;
        self.tcp.check(given)
    }
}

/// The current congestion-avoidance stage.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    start: Instant,
    /// K, seconds.
    k: f64,
    /// W_max for this stage, segments.
    w_max: f64,
    /// W_est, segments.
    w_est: f64,
}

/// CUBIC's window law.
#[derive(Clone, Debug)]
pub struct Cubic {
    c: f64,
    beta: f64,
    fast_convergence: bool,
    /// W_max, segments (0 before the first congestion event).
    w_max: f64,
    /// cwnd when ssthresh was last set, segments.
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// The next congestion-avoidance stage is the first after a timeout (§4.8).
    after_timeout: bool,
    /// HyStart++ for the initial slow start.
    hystart: Option<HyStartPlusPlus>,
}

impl Cubic {
    pub fn new(config: &CubicConfig) -> Self {
        Cubic {
            c: config.c,
            beta: config.beta,
            fast_convergence: config.fast_convergence,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            after_timeout: false,
            hystart: config.hystart.then(HyStartPlusPlus::new),
        }
    }

    /// HyStart++'s state, if it governs the initial slow start.
    pub fn hystart(&self) -> Option<&HyStartPlusPlus> {
        self.hystart.as_ref()
    }

    /// Figure 1: the window `t` seconds into a stage with `k` and `w_max`.
    pub fn w_cubic(&self, t: f64, k: f64, w_max: f64) -> f64 {
        self.c * (t - k).powi(3) + w_max
    }

    /// Figure 2: the time to grow from `cwnd_epoch` back to `w_max`.
    pub fn k(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        ((w_max - cwnd_epoch) / self.c).cbrt()
    }

    /// Figure 3: α_cubic.
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }

    /// W_max, segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current stage, seconds.
    pub fn current_k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// W_est of the current stage, segments.
    pub fn w_est(&self) -> Option<f64> {
        self.epoch.map(|e| e.w_est)
    }

    fn start_epoch(&mut self, now: Instant, cwnd: f64) -> Epoch {
        let (k, w_max) = if self.after_timeout || self.w_max <= 0.0 {
            // §4.8, and §4.10 when slow start ended without a loss: K = 0, W_max = cwnd at the
            // stage's start.
            if self.w_max <= 0.0 {
                self.cwnd_prior = cwnd;
            }
            self.w_max = cwnd;
            (0.0, cwnd)
        } else {
            (self.k(self.w_max, cwnd), self.w_max)
        };
        self.after_timeout = false;
        Epoch {
            start: now,
            k,
            w_max,
            w_est: cwnd,
        }
    }
}

impl WindowAdjustment for Cubic {
    fn on_ack(&mut self, now: Instant, w: &mut Window, ack: &AckSample) {
        if ack.in_recovery || ack.acked == 0 {
            return;
        }
        let mut acked = ack.acked;
        if w.in_slow_start() {
            match self.hystart.as_mut().filter(|h| h.is_active()) {
                Some(h) => {
                    h.on_ack(w, ack);
                    return;
                }
                None => acked = w.slow_start(acked),
            }
            if acked == 0 {
                return;
            }
        }
        let mss = w.mss() as f64;
        let cwnd = w.cwnd_segments();
        let segments_acked = acked as f64 / mss;
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(now, cwnd),
        };
        let t = (now - e.start).as_secs_f64();
        // §4.3: the Reno-friendly estimate.
        let alpha = if e.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.alpha_cubic()
        };
        e.w_est += alpha * segments_acked / cwnd;
        if self.w_cubic(t, e.k, e.w_max) < e.w_est {
            w.set_cwnd_segments(e.w_est);
        } else {
            // §4.4–4.5, with §4.2's bounds on the target.
            let rtt = ack.srtt.as_secs_f64();
            let target = self.w_cubic(t + rtt, e.k, e.w_max).clamp(cwnd, 1.5 * cwnd);
            w.add((target - cwnd) / cwnd * segments_acked * mss);
        }
        self.epoch = Some(e);
    }

    fn on_congestion_event(&mut self, _now: Instant, w: &mut Window, flight_size: u64) {
        let cwnd = w.cwnd_segments();
        // §4.7.
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + self.beta) / 2.0
        } else {
            cwnd
        };
        // §4.6.
        self.cwnd_prior = cwnd;
        let ssthresh = (flight_size as f64 * self.beta)
            .round()
            .max(2.0 * w.mss() as f64);
        w.set_ssthresh(ssthresh as u64);
        w.set_cwnd(ssthresh as u64);
        self.epoch = None;
        self.after_timeout = false;
        if let Some(h) = self.hystart.as_mut() {
            h.stop();
        }
    }

    fn on_rto(&mut self, _now: Instant, w: &mut Window, flight_size: u64, first: bool) {
        if first {
            self.cwnd_prior = w.cwnd_segments();
            let ssthresh = (flight_size as f64 * self.beta)
                .round()
                .max(2.0 * w.mss() as f64);
            w.set_ssthresh(ssthresh as u64);
        }
        w.set_cwnd(w.mss());
        self.epoch = None;
        self.after_timeout = true;
        if let Some(h) = self.hystart.as_mut() {
            h.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, MSS};
    use super::*;
    use crate::scheme::ParamError;
    use crate::scheme::params::{Parameters, changed};
    use crate::time::{Duration, ms};

    fn ack(acked_segments: u64, srtt: Duration) -> AckSample {
        AckSample {
            acked: acked_segments * MSS,
            prior_in_flight: 0,
            rtt: srtt,
            srtt,
            min_rtt: srtt,
            owd_ns: 0,
            round: None,
            in_recovery: false,
        }
    }

    /// A law and window just after a congestion event at 100 segments.
    fn after_loss_at_100() -> (Cubic, Window) {
        let mut c = Cubic::new(&CubicConfig::default());
        let mut w = Window::new(MSS, 100 * MSS);
        c.on_congestion_event(Instant::ZERO, &mut w, 100 * MSS);
        (c, w)
    }

    #[test]
    fn multiplicative_decrease_and_k() {
        let (c, w) = after_loss_at_100();
        // §4.6: ssthresh = cwnd = 0.7 · 100 segments.
        assert_eq!(w.ssthresh(), 70 * MSS);
        assert_eq!(w.cwnd(), 70 * MSS);
        assert_eq!(c.w_max(), 100.0);
        // Figure 2: K = ∛((100 − 70) / 0.4) = ∛75 = 4.2172 s.
        let k = c.k(100.0, 70.0);
        assert!((k - 75f64.cbrt()).abs() < 1e-12);
        assert!((k - 4.217163).abs() < 1e-6);
        // Figure 1 at t = 0 and t = K.
        assert!((c.w_cubic(0.0, k, 100.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(k, k, 100.0) - 100.0).abs() < 1e-12);
        assert!((c.w_cubic(k + 2.0, k, 100.0) - 103.2).abs() < 1e-9);
        assert!((c.alpha_cubic() - 0.9 / 1.7).abs() < 1e-12);
    }

    #[test]
    fn window_tracks_w_cubic_of_t_plus_rtt() {
        let (mut c, mut w) = after_loss_at_100();
        let t0 = Instant::from_secs(10);
        let srtt = ms(100);
        // The stage starts with the first ACK at t0.
        c.on_ack(t0, &mut w, &ack(1, srtt));
        let k = c.current_k().unwrap();
        assert!((k - 75f64.cbrt()).abs() < 1e-12);
        // At explicit times, enough ACKs bring cwnd to W_cubic(t + RTT) and never past it.
        for t in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] {
            let now = t0 + Duration::from_secs_f64(t);
            let expected = c.w_cubic(t + 0.1, k, 100.0);
            // 500 ACKs: enough to converge (each closes 1/cwnd of the gap), few enough that
            // W_est (growing α_cubic/cwnd per ACK) stays below W_cubic.
            for _ in 0..500 {
                c.on_ack(now, &mut w, &ack(1, srtt));
                assert!(w.cwnd_segments() <= expected + 1e-9);
            }
            assert!(
                (w.cwnd_segments() - expected).abs() < 0.05,
                "t = {t}: cwnd {} vs W_cubic(t + RTT) {expected}",
                w.cwnd_segments()
            );
        }
        // Concave below W_max before K, convex above it after K.
        assert!(c.w_cubic(4.1, k, 100.0) < 100.0);
        assert!(w.cwnd_segments() > 100.0);
    }

    #[test]
    fn one_ack_moves_by_target_minus_cwnd_over_cwnd() {
        let (mut c, mut w) = after_loss_at_100();
        let t0 = Instant::from_secs(1);
        c.on_ack(t0, &mut w, &ack(1, ms(100)));
        let before = w.cwnd_segments();
        let now = t0 + ms(500);
        let k = c.current_k().unwrap();
        let target = c.w_cubic(0.6, k, 100.0).clamp(before, 1.5 * before);
        c.on_ack(now, &mut w, &ack(1, ms(100)));
        let expected = before + (target - before) / before;
        assert!((w.cwnd_segments() - expected).abs() < 1e-9);
        // The target is capped at 1.5·cwnd.
        let far = t0 + Duration::from_secs(100);
        let before = w.cwnd_segments();
        c.on_ack(far, &mut w, &ack(1, ms(100)));
        assert!((w.cwnd_segments() - (before + 0.5)).abs() < 1e-9);
    }

    #[test]
    fn reno_friendly_region_uses_w_est() {
        let (mut c, mut w) = after_loss_at_100();
        // Every ACK at the stage's first instant: W_cubic(0) = 70 never exceeds W_est, so
        // cwnd = W_est, growing by α_cubic/cwnd per ACK (Figure 4).
        let t0 = Instant::from_secs(1);
        let alpha = c.alpha_cubic();
        let mut w_est = 70.0;
        for _ in 0..70 {
            w_est += alpha / w_est;
            c.on_ack(t0, &mut w, &ack(1, ms(100)));
            assert!((c.w_est().unwrap() - w_est).abs() < 1e-9);
            assert!((w.cwnd_segments() - w_est).abs() < 1e-9);
        }
        // About α_cubic = 0.53 segments per window of ACKs.
        assert!((w.cwnd_segments() - 70.53).abs() < 0.01);
        // Once W_est reaches cwnd_prior (100), α_cubic = 1.
        while c.w_est().unwrap() < 100.0 {
            c.on_ack(t0, &mut w, &ack(1, ms(100)));
        }
        let before = c.w_est().unwrap();
        c.on_ack(t0, &mut w, &ack(1, ms(100)));
        assert!((c.w_est().unwrap() - (before + 1.0 / before)).abs() < 1e-9);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let (mut c, mut w) = after_loss_at_100();
        // A second loss below W_max = 100, at 80 segments.
        w.set_cwnd(80 * MSS);
        c.on_congestion_event(Instant::ZERO, &mut w, 80 * MSS);
        assert!((c.w_max() - 80.0 * 1.7 / 2.0).abs() < 1e-9);
        assert_eq!(w.cwnd(), 56 * MSS);
        // Without fast convergence W_max is the window at the loss.
        let mut c = Cubic::new(&CubicConfig {
            fast_convergence: false,
            ..CubicConfig::default()
        });
        let mut w = Window::new(MSS, 100 * MSS);
        c.on_congestion_event(Instant::ZERO, &mut w, 100 * MSS);
        w.set_cwnd(80 * MSS);
        c.on_congestion_event(Instant::ZERO, &mut w, 80 * MSS);
        assert_eq!(c.w_max(), 80.0);
    }

    #[test]
    fn timeout_then_slow_start_then_k_zero() {
        let (mut c, mut w) = after_loss_at_100();
        c.on_rto(Instant::ZERO, &mut w, 60 * MSS, true);
        assert_eq!(w.cwnd(), MSS);
        assert_eq!(w.ssthresh(), 42 * MSS, "0.7 · 60 segments");
        // Slow start up to ssthresh, then the first stage after a timeout has K = 0 and
        // W_max = cwnd at its start (§4.8).
        let t = Instant::from_secs(5);
        for _ in 0..41 {
            c.on_ack(t, &mut w, &ack(1, ms(100)));
        }
        assert_eq!(w.cwnd(), 42 * MSS);
        assert_eq!(c.current_k(), None);
        c.on_ack(t, &mut w, &ack(1, ms(100)));
        assert_eq!(c.current_k(), Some(0.0));
        assert_eq!(c.w_max(), 42.0);
    }

    #[test]
    fn through_the_sender_a_loss_sets_ssthresh_to_beta_flight() {
        let mut h = Harness::new(Cubic::new(&CubicConfig::default()));
        let first = h.send_all();
        h.advance(ms(40));
        h.ack_all(&first);
        let flight = h.send_all();
        assert_eq!(flight.len(), 20);
        h.advance(ms(40));
        h.lose(flight[0]);
        h.ack_all(&flight[1..4]);
        // FlightSize before the third ACK: 18 segments.
        assert_eq!(h.window().ssthresh(), 18_900);
        assert_eq!(h.sender.counters().congestion_events, 1);
        assert_eq!(
            h.law().w_max(),
            22.0,
            "cwnd grew by two during the first ACKs"
        );
    }

    #[test]
    fn hystart_ends_the_initial_slow_start_without_a_loss() {
        let mut h = Harness::new(Cubic::new(&CubicConfig::default()));
        // Flat 40 ms RTTs: ordinary slow start.
        for _ in 0..2 {
            let sent = h.send_all();
            h.advance(ms(40));
            h.ack_all(&sent);
        }
        assert_eq!(h.window().cwnd(), 40 * MSS);
        // A queue builds: the next round's RTTs are 10 ms longer (RttThresh = 5 ms).
        let sent = h.send_all();
        h.advance(ms(50));
        h.ack_all(&sent);
        assert!(h.law().hystart().unwrap().in_css());
        assert!(h.window().in_slow_start());
        // Five more rounds of CSS, then congestion avoidance at cwnd, with no loss.
        for _ in 0..5 {
            let sent = h.send_all();
            h.advance(ms(50));
            h.ack_all(&sent);
        }
        assert!(!h.law().hystart().unwrap().is_active());
        assert!(!h.window().in_slow_start());
        assert_eq!(h.sender.counters().packets_lost, 0);
        // §4.10: the first stage starts with K = 0 and W_max = cwnd.
        let sent = h.send_all();
        h.advance(ms(50));
        h.ack(sent[0]);
        assert_eq!(h.law().current_k(), Some(0.0));
        assert!(h.law().w_max() > 40.0);
    }

    #[test]
    fn config() {
        let mut c = CubicConfig::default();
        assert!(changed(&c).is_empty());
        c.set_params(&[("beta", "0.5"), ("fast-convergence", "off")])
            .unwrap();
        c.set_params(&[("hystart", "false"), ("iw", "4")]).unwrap();
        assert_eq!(
            changed(&c),
            vec![
                ("beta", "0.5".to_string()),
                ("fast-convergence", "false".to_string()),
                ("hystart", "false".to_string()),
                ("iw", "4".to_string())
            ]
        );
        assert!(c.set_params(&[("beta", "1")]).is_err());
        assert!(c.set_params(&[("c", "-1")]).is_err());
        assert!(matches!(
            c.set_params(&[("gamma", "1")]),
            Err(ParamError::UnknownParam { .. })
        ));
    }
}
