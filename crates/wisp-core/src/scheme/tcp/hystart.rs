//! HyStart++: Modified Slow Start for TCP — RFC 9406.
//!
//! Slow start that leaves early when the round trip time starts to rise (§4.2):
//!
//! ```text
//! each round:  lastRoundMinRTT = currentRoundMinRTT; currentRoundMinRTT = ∞; rttSampleCount = 0
//! each ACK:    currentRoundMinRTT = min(currentRoundMinRTT, RTT); rttSampleCount += 1
//! slow start:  cwnd += min(N, L·SMSS)
//!              once rttSampleCount ≥ N_RTT_SAMPLE and both minima are known:
//!                RttThresh = clamp(lastRoundMinRTT / MIN_RTT_DIVISOR, MIN_RTT_THRESH, MAX_RTT_THRESH)
//!                currentRoundMinRTT ≥ lastRoundMinRTT + RttThresh
//!                  → cssBaselineMinRtt = currentRoundMinRTT; enter Conservative Slow Start (CSS)
//! CSS:         cwnd += min(N, L·SMSS) / CSS_GROWTH_DIVISOR
//!              once rttSampleCount ≥ N_RTT_SAMPLE: currentRoundMinRTT < cssBaselineMinRtt
//!                  → back to slow start
//!              after CSS_ROUNDS rounds: ssthresh = cwnd (congestion avoidance)
//! MIN_RTT_THRESH = 4 ms, MAX_RTT_THRESH = 16 ms, MIN_RTT_DIVISOR = 8, N_RTT_SAMPLE = 8,
//! CSS_GROWTH_DIVISOR = 4, CSS_ROUNDS = 5, L = 8 (no pacing)
//! ```
//!
//! Rounds are the sender's (a round ends when the first packet sent after the previous round's
//! end is acknowledged, §4.2's `windowEnd`). As the RFC recommends, only the initial slow start
//! uses it: a congestion event or a timeout turns it off ([`HyStartPlusPlus::stop`]).
//!
//! Deviations: none within the algorithm. (Linux's CUBIC of 2012 used the earlier HyStart of Ha &
//! Rhee, which also watched ACK trains; HyStart++ is its standardised successor.)

use super::{AckSample, Window};
use crate::time::Duration;

const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: f64 = 4.0;
const CSS_ROUNDS: u32 = 5;
/// L for a sender without pacing.
const L: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    Css { baseline: Duration, rounds: u32 },
    Off,
}

/// The HyStart++ state of the initial slow start.
#[derive(Clone, Debug)]
pub struct HyStartPlusPlus {
    phase: Phase,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
}

impl Default for HyStartPlusPlus {
    fn default() -> Self {
        HyStartPlusPlus {
            phase: Phase::SlowStart,
            last_round_min_rtt: None,
            current_round_min_rtt: None,
            rtt_sample_count: 0,
        }
    }
}

impl HyStartPlusPlus {
    pub fn new() -> Self {
        HyStartPlusPlus::default()
    }

    /// Still governing the initial slow start.
    pub fn is_active(&self) -> bool {
        self.phase != Phase::Off
    }

    /// In Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        matches!(self.phase, Phase::Css { .. })
    }

    /// A congestion event or a timeout: the initial slow start is over.
    pub fn stop(&mut self) {
        self.phase = Phase::Off;
    }

    /// Slow start (or CSS) for one ACK. Sets `ssthresh = cwnd` when CSS ends.
    pub fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if self.phase == Phase::Off {
            return;
        }
        if ack.round.is_some() {
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = None;
            self.rtt_sample_count = 0;
            if let Phase::Css { baseline, rounds } = self.phase {
                if rounds + 1 >= CSS_ROUNDS {
                    w.set_ssthresh(w.cwnd());
                    self.phase = Phase::Off;
                    return;
                }
                self.phase = Phase::Css {
                    baseline,
                    rounds: rounds + 1,
                };
            }
        }
        self.current_round_min_rtt = Some(
            self.current_round_min_rtt
                .map_or(ack.rtt, |m| m.min(ack.rtt)),
        );
        self.rtt_sample_count += 1;
        let inc = ack.acked.min(L * w.mss()) as f64;
        let enough = self.rtt_sample_count >= N_RTT_SAMPLE;
        match self.phase {
            Phase::SlowStart => {
                w.add(inc);
                if let (true, Some(last), Some(current)) =
                    (enough, self.last_round_min_rtt, self.current_round_min_rtt)
                {
                    let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if current >= last + thresh {
                        self.phase = Phase::Css {
                            baseline: current,
                            rounds: 0,
                        };
                    }
                }
            }
            Phase::Css { baseline, .. } => {
                w.add(inc / CSS_GROWTH_DIVISOR);
                if enough && self.current_round_min_rtt.is_some_and(|c| c < baseline) {
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Off => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::RoundSample;
    use super::super::harness::MSS;
    use super::*;
    use crate::time::ms;

    fn ack(rtt: Duration, round_end: bool) -> AckSample {
        AckSample {
            acked: MSS,
            prior_in_flight: 0,
            rtt,
            srtt: rtt,
            min_rtt: rtt,
            owd_ns: 0,
            round: round_end.then_some(RoundSample {
                rtt,
                sent: 0,
                min_rtt: rtt,
                samples: 0,
            }),
            in_recovery: false,
        }
    }

    /// One round of `n` ACKs at `rtt` (the first ends the previous round).
    fn round(h: &mut HyStartPlusPlus, w: &mut Window, n: usize, rtt: Duration) {
        for i in 0..n {
            h.on_ack(w, &ack(rtt, i == 0));
        }
    }

    #[test]
    fn grows_like_slow_start_while_the_rtt_is_flat() {
        let mut h = HyStartPlusPlus::new();
        let mut w = Window::new(MSS, 10 * MSS);
        round(&mut h, &mut w, 10, ms(100));
        round(&mut h, &mut w, 20, ms(100));
        round(&mut h, &mut w, 40, ms(104));
        assert_eq!(w.cwnd(), 80 * MSS);
        assert!(!h.in_css(), "+4 ms is below RttThresh = 100/8 = 12.5 ms");
    }

    #[test]
    fn delay_increase_enters_css_then_congestion_avoidance() {
        let mut h = HyStartPlusPlus::new();
        let mut w = Window::new(MSS, 10 * MSS);
        round(&mut h, &mut w, 10, ms(100));
        // +12.5 ms = RttThresh: after N_RTT_SAMPLE = 8 samples, CSS.
        for i in 0..20 {
            h.on_ack(&mut w, &ack(Duration::from_micros(112_500), i == 0));
            assert_eq!(h.in_css(), i >= 7, "ACK {i}");
        }
        // Round 1 doubled the window to 20; round 2: 8 ACKs at +1 segment, 12 at +1/4.
        assert_eq!(w.cwnd(), 20 * MSS + 8 * MSS + 3 * MSS);
        // CSS_ROUNDS = 5 round ends later, congestion avoidance at the current window.
        for r in 0..5 {
            assert!(h.is_active(), "round {r}");
            round(&mut h, &mut w, 4, ms(115));
        }
        assert!(!h.is_active());
        assert_eq!(w.ssthresh(), w.cwnd());
        assert!(!w.in_slow_start());
    }

    #[test]
    fn css_returns_to_slow_start_when_the_rtt_falls_back() {
        let mut h = HyStartPlusPlus::new();
        let mut w = Window::new(MSS, 10 * MSS);
        round(&mut h, &mut w, 10, ms(40));
        // RttThresh = max(40/8, 4) = 5 ms.
        round(&mut h, &mut w, 8, ms(45));
        assert!(h.in_css());
        round(&mut h, &mut w, 8, ms(44));
        assert!(!h.in_css(), "below the CSS baseline of 45 ms");
        h.stop();
        let before = w.cwnd();
        round(&mut h, &mut w, 8, ms(44));
        assert_eq!(
            w.cwnd(),
            before,
            "stopped: the caller's slow start takes over"
        );
    }

    #[test]
    fn rtt_threshold_is_clamped() {
        // 10 ms of base RTT: 10/8 < 4 ms, so +4 ms triggers.
        let mut h = HyStartPlusPlus::new();
        let mut w = Window::new(MSS, 10 * MSS);
        round(&mut h, &mut w, 10, ms(10));
        round(&mut h, &mut w, 8, ms(14));
        assert!(h.in_css());
        // 400 ms: 400/8 > 16 ms, so +16 ms triggers and +15 ms does not.
        let mut h = HyStartPlusPlus::new();
        round(&mut h, &mut w, 10, ms(400));
        round(&mut h, &mut w, 8, ms(415));
        assert!(!h.in_css());
        round(&mut h, &mut w, 8, ms(431));
        assert!(h.in_css());
    }
}
