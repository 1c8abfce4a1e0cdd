//! `newreno` — NewReno: RFC 5681 §3.1 congestion control with RFC 6582 §3.2 recovery.
//!
//! ```text
//! slow start, cwnd < ssthresh:      cwnd += min(N, SMSS) per ACK of N new bytes      (5681 eq. 2)
//! congestion avoidance:             cwnd += SMSS·SMSS / cwnd per ACK                 (5681 eq. 3)
//! loss (entering recovery):         ssthresh = max(FlightSize / 2, 2·SMSS)           (5681 eq. 4)
//!                                   cwnd = ssthresh                                  (6675 §5 step 4.2)
//! partial ACK (in recovery):        no window change; the next hole is retransmitted
//! full ACK (leaving recovery):      cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS)  (6582 §3.2, option 1)
//! timeout:                          ssthresh as eq. 4 (first expiry), cwnd = LW = 1·SMSS
//! ```
//!
//! Recovery is the shared machinery's ([`super`]): the recovery point is RFC 6582's `recover`,
//! one reduction per window of data, partial ACKs keep the sender in recovery, the full ACK ends
//! it.
//!
//! Deviations:
//! * With SACK-like ACKs, RFC 6582's window inflation (+SMSS per duplicate ACK) and deflation on
//!   partial ACKs are replaced by RFC 6675's pipe, which they approximate: the sender may send
//!   `cwnd − pipe` where pipe excludes packets acknowledged or lost.
//! * The partial-ACK rule "retransmit the first unacknowledged segment" needs no code of its own:
//!   the ranges reveal every hole a partial ACK would, and DupThresh/RACK declare it lost.

use super::{AckSample, TcpParams, Window, WindowAdjustment, reno_ssthresh};
use crate::scheme::params::{Checked, Given, Validate, scheme_config};
use crate::time::Instant;

scheme_config! {
    /// Configuration of [`NewReno`] (`newreno:iw=10,rto-min-ms=1000`: the shared parameters only).
    #[derive(Clone, Debug, PartialEq, Default)]
    pub struct NewRenoConfig {
        #[group]
        pub tcp: TcpParams,
    }
}

impl Validate for NewRenoConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        self.tcp.check(given)
    }
}

/// NewReno's window law.
#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl NewReno {
    pub fn new(_config: &NewRenoConfig) -> Self {
        NewReno
    }
}

impl WindowAdjustment for NewReno {
    fn on_ack(&mut self, _now: Instant, w: &mut Window, ack: &AckSample) {
        if ack.in_recovery || ack.acked == 0 {
            return;
        }
        if w.in_slow_start() && w.slow_start(ack.acked) == 0 {
            return;
        }
        // RFC 5681 eq. (3); "if the formula yields 0, the result SHOULD be rounded up to 1 byte".
        let mss = w.mss();
        let inc = (mss * mss / w.cwnd()).max(1);
        w.set_cwnd(w.cwnd() + inc);
    }

    fn on_congestion_event(&mut self, _now: Instant, w: &mut Window, flight_size: u64) {
        w.set_ssthresh(reno_ssthresh(flight_size, w.mss()));
        w.set_cwnd(w.ssthresh());
    }

    fn on_recovery_exit(&mut self, _now: Instant, w: &mut Window, flight_size: u64) {
        let mss = w.mss();
        w.set_cwnd(w.ssthresh().min(flight_size.max(mss) + mss));
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, MSS};
    use super::*;
    use crate::scheme::params::{Parameters, changed};
    use crate::time::ms;

    fn harness() -> Harness<NewReno> {
        Harness::new(NewReno)
    }

    #[test]
    fn slow_start_then_eq_3_congestion_avoidance() {
        let mut h = harness();
        let sent = h.send_all();
        h.advance(ms(40));
        h.ack_all(&sent);
        assert_eq!(h.window().cwnd(), 20 * MSS);
        let mut w = Window::new(MSS, 20 * MSS);
        w.set_ssthresh(20 * MSS);
        let mut law = NewReno;
        let ack = |acked| AckSample {
            acked,
            prior_in_flight: 20 * MSS,
            rtt: ms(40),
            srtt: ms(40),
            min_rtt: ms(40),
            owd_ns: 0,
            round: None,
            in_recovery: false,
        };
        law.on_ack(Instant::ZERO, &mut w, &ack(MSS));
        // 1500·1500 / 30000 = 75 bytes.
        assert_eq!(w.cwnd(), 20 * MSS + 75);
        // One window of ACKs adds about one segment.
        let mut w = Window::new(MSS, 20 * MSS);
        w.set_ssthresh(20 * MSS);
        for _ in 0..20 {
            law.on_ack(Instant::ZERO, &mut w, &ack(MSS));
        }
        assert!(
            (w.cwnd_segments() - 21.0).abs() < 0.05,
            "{}",
            w.cwnd_segments()
        );
        // No growth in recovery.
        let before = w.cwnd();
        law.on_ack(
            Instant::ZERO,
            &mut w,
            &AckSample {
                in_recovery: true,
                ..ack(MSS)
            },
        );
        assert_eq!(w.cwnd(), before);
    }

    #[test]
    fn loss_halves_once_per_window_and_partial_acks_keep_recovery() {
        let mut h = harness();
        // Grow to 20 segments in flight.
        let first = h.send_all();
        h.advance(ms(40));
        h.ack_all(&first);
        let flight = h.send_all();
        assert_eq!(flight.len(), 20);
        assert_eq!(h.sender.in_flight(), 20 * MSS);
        h.advance(ms(40));
        // Two holes in this window: 5 and 12.
        h.lose(flight[5]);
        h.lose(flight[12]);
        h.ack_all(&flight[..5]);
        let cwnd_before = h.window().cwnd();
        assert_eq!(cwnd_before, 25 * MSS);
        h.ack_all(&flight[6..9]);
        // DupThresh: the 3rd later ACK declares 5 lost. FlightSize before that ACK: 20 − 5 − 2
        // acknowledged = 13 segments → ssthresh = 6.5 segments.
        assert!(h.sender.in_fast_recovery());
        assert_eq!(h.window().ssthresh(), 13 * MSS / 2);
        assert_eq!(h.window().cwnd(), 13 * MSS / 2);
        // Partial ACKs (packets up to the recovery point), including the second hole's
        // detection: no second reduction, no growth.
        h.ack_all(&flight[9..12]);
        h.ack_all(&flight[13..]);
        assert!(h.sender.in_fast_recovery());
        assert_eq!(h.sender.counters().packets_lost, 2);
        assert_eq!(h.sender.counters().congestion_events, 1);
        assert_eq!(h.window().cwnd(), 13 * MSS / 2);
        // The pipe is empty: cwnd − pipe allows a full window of retransmissions/new data.
        let retx = h.send_all();
        assert_eq!(
            retx.len(),
            6,
            "6.5 segments of window, full-size packets only"
        );
        // The full ACK: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
        h.advance(ms(40));
        h.ack(retx[0]);
        assert!(!h.sender.in_fast_recovery());
        // FlightSize after the full ACK: the 5 other packets.
        assert_eq!(h.window().cwnd(), (5 * MSS + MSS).min(13 * MSS / 2));
    }

    #[test]
    fn a_loss_after_the_recovery_point_is_a_new_event() {
        let mut h = harness();
        let first = h.send_all();
        h.advance(ms(40));
        h.lose(first[0]);
        h.ack_all(&first[1..]);
        assert_eq!(h.sender.counters().congestion_events, 1);
        let ssthresh = h.window().ssthresh();
        let next = h.send_all();
        h.advance(ms(40));
        h.lose(next[0]);
        h.ack_all(&next[1..4]);
        assert_eq!(h.sender.counters().congestion_events, 2);
        assert!(h.window().ssthresh() < ssthresh);
    }

    #[test]
    fn config_parses_shared_keys_only() {
        let mut c = NewRenoConfig::default();
        c.set_params(&[("iw", "4")]).unwrap();
        assert_eq!(changed(&c), vec![("iw", "4".to_string())]);
        assert!(c.set_params(&[("beta", "0.5")]).is_err());
    }
}
