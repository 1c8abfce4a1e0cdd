//! `compound` — Compound TCP: K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach
//! for High-Speed and Long Distance Networks", IEEE INFOCOM 2006; M. Sridharan, K. Tan, D.
//! Bansal, D. Thaler, draft-sridharan-tcpm-ctcp-02 (2008).
//!
//! Two windows, in segments: the loss-based `cwnd` (Reno) and the delay-based `dwnd`.
//!
//! ```text
//! win = cwnd + dwnd                                                    (paper eq. 1, no awnd)
//! per ACK, congestion avoidance:  cwnd += 1 / win                      (eq. 2)
//! on loss:                        cwnd = cwnd / 2                      (eq. 3)
//! once per round:  Expected = win / baseRTT,  Actual = win / RTT
//!                  diff = (Expected − Actual) · baseRTT                (eq. 4)
//!   dwnd(t+1) = dwnd(t) + max(α·win(t)^k − 1, 0)     if diff < γ
//!             = max(dwnd(t) − ζ·diff, 0)             if diff ≥ γ
//!             = max(win(t)·(1 − β) − cwnd/2, 0)      on a loss       (eq. 5)
//! α = 1/8, β = 1/2, k = 0.75, ζ = 1, γ = 30 segments
//! ```
//!
//! Slow start is Reno's (RFC 5681) with `dwnd = 0`; the delay window only acts in congestion
//! avoidance. After a loss `ssthresh` is the halved loss window, so the sender stays in congestion
//! avoidance; a timeout sets `cwnd` to one segment and `dwnd` to 0. `baseRTT` is the smallest RTT
//! of the connection; the round's `RTT` is the smallest sample of the round (as the Linux port by
//! Castellani, Hemminger and Andrew, to ignore ACK noise).
//!
//! Deviations:
//! * No receive-window term (`awnd` in eq. 1; the receiver is infinitely fast).
//! * γ is fixed (the draft's and the paper's 30 segments; the TUBE auto-tuning of γ in later
//!   Windows versions is not modelled).
//! * No minimum window below which the delay component is off (Windows reportedly enables it
//!   only for larger windows; the paper's equations have no such threshold).

use super::{AckSample, TcpParams, Window, WindowAdjustment, reno_ssthresh};
use crate::scheme::params::{Checked, Given, Validate, range, scheme_config};
use crate::time::{Duration, Instant};

scheme_config! {
    /// Compound TCP's constants (`alpha=0.125,beta=0.5,k=0.75,gamma=30,zeta=1`), shared with
    /// `ctcp-like`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CompoundConstants {
        /// α, the delay window's growth.
        pub alpha: f64,
        /// β, the delay window's multiplicative decrease on a loss.
        pub beta: f64,
        /// k, the exponent of the delay window's growth.
        pub k: f64,
        /// γ, the queued segments at which the delay window backs off.
        // In segments.
        pub gamma: f64,
        /// ζ, the delay window's decrease per queued segment beyond γ.
        pub zeta: f64,
    }
}

impl Default for CompoundConstants {
    fn default() -> Self {
        CompoundConstants {
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            gamma: 30.0,
            zeta: 1.0,
        }
    }
}

impl CompoundConstants {
    /// The constants' ranges.
    pub(crate) fn check(&self) -> Checked {
        range("alpha", self.alpha, 0.0, 100.0, "a number, 0 to 100")?;
        range("beta", self.beta, 0.0, 1.0, "a number, 0 to 1")?;
        range("k", self.k, 0.0, 2.0, "a number, 0 to 2")?;
        range("gamma", self.gamma, 0.0, 100_000.0, "segments, 0 to 100000")?;
        range("zeta", self.zeta, 0.0, 100.0, "a number, 0 to 100")
    }
}

scheme_config! {
    /// Configuration of [`Compound`] (`compound:alpha=0.125,beta=0.5,k=0.75,gamma=30,zeta=1`).
    #[derive(Clone, Debug, PartialEq, Default)]
    pub struct CompoundConfig {
        #[group]
        pub constants: CompoundConstants,
        #[group]
        pub tcp: TcpParams,
    }
}

impl Validate for CompoundConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        self.constants.check()?;
        self.tcp.check(given)
    }
}

/// Compound TCP's window law: Reno's `cwnd` plus the delay window `dwnd`.
#[derive(Clone, Debug)]
pub struct Compound {
    alpha: f64,
    beta: f64,
    k: f64,
    gamma: f64,
    zeta: f64,
    /// dwnd, segments.
    dwnd: f64,
    last_diff: Option<f64>,
}

impl Compound {
    pub fn new(config: &CompoundConfig) -> Self {
        Compound::with(&config.constants)
    }

    /// The law with `constants` (`ctcp-like`'s, which has no TCP parameters).
    pub fn with(constants: &CompoundConstants) -> Self {
        let c = constants;
        Compound {
            alpha: c.alpha,
            beta: c.beta,
            k: c.k,
            gamma: c.gamma,
            zeta: c.zeta,
            dwnd: 0.0,
            last_diff: None,
        }
    }

    /// The delay window, segments.
    pub fn dwnd(&self) -> f64 {
        self.dwnd
    }

    /// The last round's `diff`, segments.
    pub fn last_diff(&self) -> Option<f64> {
        self.last_diff
    }

    /// Eq. 4 for a window of `win` segments.
    pub fn diff(win: f64, base_rtt: Duration, rtt: Duration) -> f64 {
        let (base, rtt) = (base_rtt.as_secs_f64(), rtt.as_secs_f64());
        if rtt <= 0.0 {
            return 0.0;
        }
        (win / base.max(f64::MIN_POSITIVE) - win / rtt) * base
    }

    /// Eq. 5's first two cases.
    fn on_round(&mut self, win: f64, base_rtt: Duration, rtt: Duration) {
        let diff = Self::diff(win, base_rtt, rtt);
        self.last_diff = Some(diff);
        self.dwnd = if diff < self.gamma {
            self.dwnd + (self.alpha * win.powf(self.k) - 1.0).max(0.0)
        } else {
            (self.dwnd - self.zeta * diff).max(0.0)
        };
    }
}

impl WindowAdjustment for Compound {
    fn on_ack(&mut self, _now: Instant, w: &mut Window, ack: &AckSample) {
        if ack.in_recovery || ack.acked == 0 {
            return;
        }
        let mut acked = ack.acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        // Eq. 2, per acknowledged segment: (acked / MSS) · (1 / win) segments.
        let win = w.cwnd_segments() + self.dwnd;
        w.add(acked as f64 / win);
        if let Some(round) = &ack.round {
            let win = w.cwnd_segments() + self.dwnd;
            self.on_round(win, ack.min_rtt, round.min_rtt.max(ack.min_rtt));
        }
    }

    fn on_congestion_event(&mut self, _now: Instant, w: &mut Window, _flight_size: u64) {
        let win = w.cwnd_segments() + self.dwnd;
        // Eq. 3 (at least two segments, as RFC 5681 eq. 4).
        let half = (w.cwnd() / 2).max(2 * w.mss());
        w.set_ssthresh(half);
        w.set_cwnd(half);
        // Eq. 5, loss case: the total window shrinks by β.
        self.dwnd = (win * (1.0 - self.beta) - w.cwnd_segments()).max(0.0);
    }

    fn on_rto(&mut self, _now: Instant, w: &mut Window, flight_size: u64, first: bool) {
        if first {
            w.set_ssthresh(reno_ssthresh(flight_size, w.mss()));
        }
        w.set_cwnd(w.mss());
        self.dwnd = 0.0;
    }

    fn send_window(&self, w: &Window) -> u64 {
        w.cwnd() + (self.dwnd * w.mss() as f64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::super::RoundSample;
    use super::super::harness::{Harness, MSS};
    use super::*;
    use crate::scheme::params::{Parameters, changed};
    use crate::time::ms;

    const BASE: Duration = ms(100);

    fn ack(round_rtt: Option<Duration>) -> AckSample {
        AckSample {
            acked: MSS,
            prior_in_flight: 0,
            rtt: BASE,
            srtt: BASE,
            min_rtt: BASE,
            owd_ns: 0,
            round: round_rtt.map(|rtt| RoundSample {
                rtt,
                sent: 0,
                min_rtt: rtt,
                samples: 1,
            }),
            in_recovery: false,
        }
    }

    /// A law with `dwnd` segments over a loss window of `cwnd` segments, in avoidance.
    fn with(cwnd: u64, dwnd: f64) -> (Compound, Window) {
        let mut c = Compound::new(&CompoundConfig::default());
        c.dwnd = dwnd;
        let mut w = Window::new(MSS, cwnd * MSS);
        w.set_ssthresh(cwnd * MSS);
        (c, w)
    }

    /// The round RTT that makes eq. 4's diff equal `diff` for a window of `win` segments.
    fn rtt_for(win: f64, diff: f64) -> Duration {
        Duration::from_secs_f64(BASE.as_secs_f64() * win / (win - diff))
    }

    #[test]
    fn eq_2_loss_window_grows_by_one_over_win_per_ack() {
        let (mut c, mut w) = with(60, 40.0);
        c.on_ack(Instant::ZERO, &mut w, &ack(None));
        assert!((w.cwnd_segments() - (60.0 + 1.0 / 100.0)).abs() < 1e-9);
        assert_eq!(c.send_window(&w), 60 * MSS + 15 + 40 * MSS);
    }

    #[test]
    fn eq_5_dwnd_grows_by_alpha_win_to_the_k_below_gamma() {
        let (mut c, mut w) = with(100, 0.0);
        c.on_ack(Instant::ZERO, &mut w, &ack(Some(BASE)));
        let win = 100.01; // after this ACK's eq. 2 step
        let expected = 0.125 * f64::powf(win, 0.75) - 1.0;
        assert!((c.dwnd() - expected).abs() < 1e-9, "{}", c.dwnd());
        assert!((c.dwnd() - 2.953).abs() < 0.001);
        assert_eq!(c.last_diff(), Some(0.0));
        // A small window: α·win^k < 1, no growth.
        let (mut c, mut w) = with(10, 0.0);
        c.on_ack(Instant::ZERO, &mut w, &ack(Some(BASE)));
        assert_eq!(c.dwnd(), 0.0);
        // diff just under γ still grows.
        let (mut c, mut w) = with(100, 0.0);
        c.on_ack(Instant::ZERO, &mut w, &ack(Some(rtt_for(100.01, 29.9))));
        assert!((c.last_diff().unwrap() - 29.9).abs() < 1e-6);
        assert!(c.dwnd() > 2.9);
    }

    #[test]
    fn eq_5_dwnd_shrinks_by_zeta_diff_at_or_above_gamma() {
        let (mut c, mut w) = with(100, 50.0);
        let win = 150.0 + 1.0 / 150.0;
        c.on_ack(Instant::ZERO, &mut w, &ack(Some(rtt_for(win, 40.0))));
        assert!((c.dwnd() - 10.0).abs() < 1e-6, "{}", c.dwnd());
        let (mut c, mut w) = with(100, 50.0);
        c.on_ack(Instant::ZERO, &mut w, &ack(Some(rtt_for(win, 60.0))));
        assert_eq!(c.dwnd(), 0.0);
    }

    #[test]
    fn loss_halves_cwnd_and_the_total_window() {
        let (mut c, mut w) = with(100, 50.0);
        c.on_congestion_event(Instant::ZERO, &mut w, 150 * MSS);
        assert_eq!(w.cwnd(), 50 * MSS);
        assert_eq!(w.ssthresh(), 50 * MSS);
        // dwnd = 150·(1 − 1/2) − 50 = 25: win goes from 150 to 75.
        assert!((c.dwnd() - 25.0).abs() < 1e-9);
        assert_eq!(c.send_window(&w), 75 * MSS);
        // With no delay window, win halves through cwnd alone.
        let (mut c, mut w) = with(100, 0.0);
        c.on_congestion_event(Instant::ZERO, &mut w, 100 * MSS);
        assert_eq!(c.dwnd(), 0.0);
        assert_eq!(c.send_window(&w), 50 * MSS);
        c.dwnd = 10.0;
        c.on_rto(Instant::ZERO, &mut w, 60 * MSS, true);
        assert_eq!((w.cwnd(), w.ssthresh(), c.dwnd()), (MSS, 30 * MSS, 0.0));
    }

    #[test]
    fn slow_start_leaves_dwnd_alone() {
        let mut h = Harness::new(Compound::new(&CompoundConfig::default()));
        for _ in 0..3 {
            let sent = h.send_all();
            h.advance(ms(100));
            h.ack_all(&sent);
        }
        assert_eq!(h.window().cwnd(), 80 * MSS);
        assert_eq!(h.law().dwnd(), 0.0);
        assert_eq!(h.sender.send_window(), 80 * MSS);
    }

    #[test]
    fn config() {
        let mut c = CompoundConfig::default();
        assert!(changed(&c).is_empty());
        c.set_params(&[("gamma", "10")]).unwrap();
        assert_eq!(changed(&c), vec![("gamma", "10".to_string())]);
        assert!(c.set_params(&[("beta", "2")]).is_err());
        assert!(c.set_params(&[("eta", "1")]).is_err());
    }
}
