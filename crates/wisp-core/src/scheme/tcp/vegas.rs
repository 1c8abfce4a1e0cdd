//! `vegas` — TCP Vegas: L. S. Brakmo and L. L. Peterson, "TCP Vegas: End to End Congestion
//! Avoidance on a Global Internet", IEEE JSAC 13(8), 1995 (first: Brakmo, O'Malley, Peterson,
//! SIGCOMM 1994).
//!
//! Once per round trip, when the distinguished segment's ACK returns (§3.2):
//!
//! ```text
//! BaseRTT  = the smallest RTT measured
//! Expected = WindowSize / BaseRTT
//! Actual   = bytes sent during the distinguished segment's RTT / that RTT
//! Diff     = (Expected − Actual) · BaseRTT / MSS        (extra segments queued in the network)
//! congestion avoidance:  Diff < α → cwnd grows by one segment over the next RTT
//!                        Diff > β → cwnd −= one segment
//!                        otherwise cwnd is unchanged                                (α = 2, β = 4)
//! slow start (§3.3):     the window doubles only every other RTT (held in between so Expected
//!                        and Actual can be compared); Diff > γ → cwnd −= cwnd/8 and congestion
//!                        avoidance begins                                           (γ = 1)
//! loss:                  cwnd = 3/4 · cwnd (at least 2 segments), once per window of data
//! timeout:               ssthresh = max(FlightSize/2, 2·SMSS), cwnd = 2 segments
//! ```
//!
//! α = 2 and β = 4 segments are the issue's choice and Linux's defaults (the papers also evaluate
//! 1 and 3); γ = 1 as Linux's. The details the papers leave to the implementation — give back an
//! eighth when leaving slow start, 3/4 of the window after a loss (2 segments for a window of 3 or
//! less), 2 segments after a timeout — follow the Arizona x-kernel code through its NetBSD and ns-2
//! ports.
//!
//! Deviations:
//! * Vegas's fine-grained retransmission check on duplicate ACKs (§3.1) is replaced by the shared
//!   RACK/DupThresh loss detection, which serves the same purpose (detect a loss before the
//!   coarse timeout).
//! * `WindowSize` is the congestion window (the paper assumes it equals the bytes in transit,
//!   which holds for a bulk sender).

use super::{AckSample, RoundSample, TcpParams, Window, WindowAdjustment, reno_ssthresh};
use crate::scheme::params::{Checked, Given, Validate, ordered, range, scheme_config};
use crate::time::{Duration, Instant};

scheme_config! {
    /// Configuration of [`Vegas`] (`vegas:alpha=2,beta=4,gamma=1`), thresholds in segments.
    #[derive(Clone, Debug, PartialEq)]
    pub struct VegasConfig {
        /// α: fewer segments queued than this, the window grows.
        pub alpha: f64,
        /// β: more segments queued than this, the window shrinks.
        pub beta: f64,
        /// γ: slow start ends with more segments queued than this.
        pub gamma: f64,
        #[group]
        pub tcp: TcpParams,
    }
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
            tcp: TcpParams::default(),
        }
    }
}

impl Validate for VegasConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        let expected = "a number of segments, 0 to 1000";
        range("alpha", self.alpha, 0.0, 1000.0, expected)?;
        range("beta", self.beta, 0.0, 1000.0, expected)?;
        range("gamma", self.gamma, 0.0, 1000.0, expected)?;
        ordered(&[("alpha", self.alpha), ("beta", self.beta)])?;
        self.tcp.check(given)
    }
}

/// Vegas's window law.
#[derive(Clone, Debug)]
pub struct Vegas {
    alpha: f64,
    beta: f64,
    gamma: f64,
    /// Slow start: the window grows during the current round (every other round).
    ss_grow: bool,
    /// Congestion avoidance: the window grows by one segment over the current round.
    ca_grow: bool,
    last_diff: Option<f64>,
}

impl Vegas {
    pub fn new(config: &VegasConfig) -> Self {
        Vegas {
            alpha: config.alpha,
            beta: config.beta,
            gamma: config.gamma,
            // Toggled at the first round's end, so the first flight's ACKs grow the window.
            ss_grow: false,
            ca_grow: false,
            last_diff: None,
        }
    }

    /// `Diff` in segments for a window of `cwnd` bytes, the round's measurements and `BaseRTT`.
    pub fn diff(cwnd: u64, mss: u64, round: &RoundSample, base_rtt: Duration) -> Option<f64> {
        let base = base_rtt.as_secs_f64();
        let rtt = round.rtt.as_secs_f64();
        if base <= 0.0 || rtt <= 0.0 {
            return None;
        }
        let expected = cwnd as f64 / base;
        let actual = round.sent as f64 / rtt;
        Some((expected - actual) * base / mss as f64)
    }

    /// The last round's `Diff`, segments.
    pub fn last_diff(&self) -> Option<f64> {
        self.last_diff
    }

    fn on_round(&mut self, w: &mut Window, round: &RoundSample, base_rtt: Duration) {
        let Some(diff) = Self::diff(w.cwnd(), w.mss(), round, base_rtt) else {
            return;
        };
        self.last_diff = Some(diff);
        let mss = w.mss();
        if w.in_slow_start() {
            if diff > self.gamma {
                // §3.3: leave slow start, giving back an eighth of the window.
                w.set_cwnd((w.cwnd() - w.cwnd() / 8).max(2 * mss));
                w.set_ssthresh(w.cwnd());
                self.ca_grow = false;
            } else {
                self.ss_grow = !self.ss_grow;
            }
        } else if diff < self.alpha {
            self.ca_grow = true;
        } else if diff > self.beta {
            self.ca_grow = false;
            w.set_cwnd(w.cwnd().saturating_sub(mss).max(2 * mss));
        } else {
            self.ca_grow = false;
        }
    }
}

impl WindowAdjustment for Vegas {
    fn on_ack(&mut self, _now: Instant, w: &mut Window, ack: &AckSample) {
        if ack.in_recovery {
            return;
        }
        if let Some(round) = &ack.round {
            self.on_round(w, round, ack.min_rtt);
        }
        if w.in_slow_start() {
            if self.ss_grow {
                w.slow_start(ack.acked);
            }
        } else if self.ca_grow {
            // One segment over a window of ACKs.
            w.add(w.mss() as f64 * ack.acked as f64 / w.cwnd() as f64);
        }
    }

    fn on_congestion_event(&mut self, _now: Instant, w: &mut Window, _flight_size: u64) {
        let mss = w.mss();
        let cwnd = if w.cwnd() <= 3 * mss {
            2 * mss
        } else {
            w.cwnd() - w.cwnd() / 4
        };
        w.set_cwnd(cwnd);
        w.set_ssthresh(w.cwnd());
        self.ca_grow = false;
    }

    fn on_rto(&mut self, _now: Instant, w: &mut Window, flight_size: u64, first: bool) {
        if first {
            w.set_ssthresh(reno_ssthresh(flight_size, w.mss()));
        }
        w.set_cwnd(2 * w.mss());
        self.ss_grow = false;
        self.ca_grow = false;
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, MSS};
    use super::*;
    use crate::scheme::params::{Parameters, changed};
    use crate::time::ms;

    const BASE: Duration = ms(100);

    /// A round of a window of `cwnd` segments whose distinguished segment saw `rtt`.
    fn round_with(cwnd: u64, rtt: Duration) -> RoundSample {
        RoundSample {
            rtt,
            sent: cwnd * MSS,
            min_rtt: rtt,
            samples: cwnd as u32,
        }
    }

    /// An RTT that puts `queued` extra segments of a `cwnd`-segment window in the network:
    /// Diff = cwnd·(1 − BaseRTT/RTT) = queued.
    fn rtt_for(cwnd: f64, queued: f64) -> Duration {
        Duration::from_secs_f64(BASE.as_secs_f64() * cwnd / (cwnd - queued))
    }

    fn ack(round: Option<RoundSample>) -> AckSample {
        AckSample {
            acked: MSS,
            prior_in_flight: 0,
            rtt: BASE,
            srtt: BASE,
            min_rtt: BASE,
            owd_ns: 0,
            round,
            in_recovery: false,
        }
    }

    fn in_avoidance(cwnd: u64) -> (Vegas, Window) {
        let mut w = Window::new(MSS, cwnd * MSS);
        w.set_ssthresh(cwnd * MSS);
        (Vegas::new(&VegasConfig::default()), w)
    }

    #[test]
    fn diff_is_the_number_of_queued_segments() {
        let d = Vegas::diff(20 * MSS, MSS, &round_with(20, rtt_for(20.0, 3.0)), BASE).unwrap();
        assert!((d - 3.0).abs() < 1e-6);
        let d = Vegas::diff(20 * MSS, MSS, &round_with(20, BASE), BASE).unwrap();
        assert!(d.abs() < 1e-12);
        assert_eq!(
            Vegas::diff(MSS, MSS, &round_with(1, BASE), Duration::ZERO),
            None
        );
    }

    #[test]
    fn below_alpha_grows_one_segment_per_rtt() {
        let (mut v, mut w) = in_avoidance(20);
        v.on_ack(
            Instant::ZERO,
            &mut w,
            &ack(Some(round_with(20, rtt_for(20.0, 1.0)))),
        );
        assert!((v.last_diff().unwrap() - 1.0).abs() < 1e-6);
        for _ in 1..20 {
            v.on_ack(Instant::ZERO, &mut w, &ack(None));
        }
        assert!(
            (w.cwnd_segments() - 21.0).abs() < 0.05,
            "{}",
            w.cwnd_segments()
        );
    }

    #[test]
    fn between_alpha_and_beta_holds_the_window() {
        let (mut v, mut w) = in_avoidance(20);
        v.on_ack(
            Instant::ZERO,
            &mut w,
            &ack(Some(round_with(20, rtt_for(20.0, 3.0)))),
        );
        for _ in 1..40 {
            v.on_ack(Instant::ZERO, &mut w, &ack(None));
        }
        assert_eq!(w.cwnd(), 20 * MSS);
        // Exactly α or β: still inside the band.
        for q in [2.0, 4.0] {
            let (mut v, mut w) = in_avoidance(20);
            let mut round = round_with(20, BASE);
            round.sent = ((20.0 - q) * MSS as f64).round() as u64;
            v.on_ack(Instant::ZERO, &mut w, &ack(Some(round)));
            assert!((v.last_diff().unwrap() - q).abs() < 1e-9);
            v.on_ack(Instant::ZERO, &mut w, &ack(None));
            assert_eq!(w.cwnd(), 20 * MSS, "Diff = {q}");
        }
    }

    #[test]
    fn above_beta_shrinks_one_segment() {
        let (mut v, mut w) = in_avoidance(20);
        v.on_ack(
            Instant::ZERO,
            &mut w,
            &ack(Some(round_with(20, rtt_for(20.0, 5.0)))),
        );
        assert_eq!(w.cwnd(), 19 * MSS);
        for _ in 1..20 {
            v.on_ack(Instant::ZERO, &mut w, &ack(None));
        }
        assert_eq!(w.cwnd(), 19 * MSS);
    }

    #[test]
    fn slow_start_grows_every_other_round_until_gamma() {
        let mut v = Vegas::new(&VegasConfig::default());
        let mut w = Window::new(MSS, 10 * MSS);
        // The first flight's first ACK ends the first round (no queue): the flight's ACKs grow
        // the window, 10 → 20 segments.
        v.on_ack(Instant::ZERO, &mut w, &ack(Some(round_with(10, BASE))));
        for _ in 1..10 {
            v.on_ack(Instant::ZERO, &mut w, &ack(None));
        }
        assert_eq!(w.cwnd(), 20 * MSS);
        // The next flight's first ACK ends the next round: that flight's ACKs hold.
        v.on_ack(Instant::ZERO, &mut w, &ack(Some(round_with(20, BASE))));
        for _ in 0..19 {
            v.on_ack(Instant::ZERO, &mut w, &ack(None));
        }
        assert_eq!(w.cwnd(), 20 * MSS);
        // The next round grows again.
        v.on_ack(Instant::ZERO, &mut w, &ack(Some(round_with(20, BASE))));
        assert_eq!(w.cwnd(), 21 * MSS);
        for _ in 0..19 {
            v.on_ack(Instant::ZERO, &mut w, &ack(None));
        }
        assert_eq!(w.cwnd(), 40 * MSS);
        // Diff = 1.5 > γ: an eighth goes, congestion avoidance begins.
        v.on_ack(
            Instant::ZERO,
            &mut w,
            &ack(Some(round_with(40, rtt_for(40.0, 1.5)))),
        );
        assert_eq!(w.cwnd(), 35 * MSS);
        assert!(!w.in_slow_start());
    }

    #[test]
    fn loss_takes_a_quarter_and_timeout_restarts_at_two() {
        let (mut v, mut w) = in_avoidance(20);
        v.on_congestion_event(Instant::ZERO, &mut w, 20 * MSS);
        assert_eq!(w.cwnd(), 15 * MSS);
        assert!(!w.in_slow_start());
        let mut w3 = Window::new(MSS, 3 * MSS);
        v.on_congestion_event(Instant::ZERO, &mut w3, 3 * MSS);
        assert_eq!(w3.cwnd(), 2 * MSS);
        v.on_rto(Instant::ZERO, &mut w, 15 * MSS, true);
        assert_eq!(w.cwnd(), 2 * MSS);
        assert_eq!(w.ssthresh(), 15 * MSS / 2);
    }

    #[test]
    fn through_the_sender_rounds_drive_the_law() {
        let mut h = Harness::new(Vegas::new(&VegasConfig::default()));
        // No queue: every RTT is 100 ms. Slow start doubles every other round.
        let mut windows = vec![];
        for _ in 0..6 {
            let sent = h.send_all();
            h.advance(ms(100));
            h.ack_all(&sent);
            windows.push(h.window().cwnd() / MSS);
        }
        assert_eq!(windows, vec![20, 20, 40, 40, 80, 80]);
        assert_eq!(h.law().last_diff(), Some(0.0));
    }

    #[test]
    fn config() {
        let mut c = VegasConfig::default();
        assert!(changed(&c).is_empty());
        c.set_params(&[("alpha", "1")]).unwrap();
        c.set_params(&[("beta", "3")]).unwrap();
        assert_eq!(
            changed(&c),
            vec![("alpha", "1".to_string()), ("beta", "3".to_string())]
        );
        assert!(c.set_params(&[("alpha", "5")]).is_err(), "alpha above beta");
        assert!(c.set_params(&[("delta", "1")]).is_err());
    }
}
