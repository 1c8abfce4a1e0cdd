//! Round-trip time estimation and the retransmission timeout — RFC 6298.
//!
//! ```text
//! first sample R:      SRTT = R, RTTVAR = R/2                                  (§2.2)
//! later samples R':    RTTVAR = (1 − β)·RTTVAR + β·|SRTT − R'|,  β = 1/4
//!                      SRTT   = (1 − α)·SRTT + α·R',             α = 1/8       (§2.3)
//! RTO = SRTT + max(G, K·RTTVAR),  K = 4;  1 s before any sample (§2.1);
//! RTO ≥ rto_min (1 s, §2.4), RTO ≤ rto_max (60 s, §2.5); doubled on each expiry (§5.5)
//! ```
//!
//! Every transmission has its own sequence number, so every ACK gives a valid sample (Karn's
//! ambiguity, §3, cannot arise) and a new sample ends the backoff (the §5.7 note: "the RTO is
//! recomputed from SRTT/RTTVAR once a valid sample is taken").
//!
//! Deviations: the clock granularity `G` is 1 ms (the simulator's clock is exact to the
//! nanosecond; 1 ms is a typical kernel timer granularity).

use crate::time::Duration;

/// The clock granularity `G` of RFC 6298 §2.
const GRANULARITY: Duration = Duration::from_millis(1);

/// SRTT, RTTVAR, the minimum RTT and the retransmission timeout with its backoff.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    min_rtt: Option<Duration>,
    latest: Option<Duration>,
    rto_min: Duration,
    rto_max: Duration,
    /// Expiries since the last RTT sample (§5.5 doubles the RTO each time).
    backoff: u32,
}

impl RttEstimator {
    /// RFC 6298's initial RTO (§2.1), also its recommended minimum (§2.4).
    pub const INITIAL_RTO: Duration = Duration::from_secs(1);

    pub fn new(rto_min: Duration, rto_max: Duration) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: None,
            latest: None,
            rto_min,
            rto_max: rto_max.max(rto_min),
            backoff: 0,
        }
    }

    /// Takes one RTT measurement (§2.2, §2.3) and ends any backoff.
    pub fn on_sample(&mut self, r: Duration) {
        self.latest = Some(r);
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let err = if srtt > r { srtt - r } else { r - srtt };
                self.rttvar = (self.rttvar * 3 + err) / 4;
                self.srtt = Some((srtt * 7 + r) / 8);
            }
        }
        self.backoff = 0;
    }

    /// The retransmission timer expired (§5.5): back off.
    pub fn on_expiry(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// The current RTO, backoff included.
    pub fn rto(&self) -> Duration {
        let base = match self.srtt {
            None => Self::INITIAL_RTO,
            Some(srtt) => srtt + GRANULARITY.max(self.rttvar * 4),
        };
        let mut rto = base.max(self.rto_min);
        for _ in 0..self.backoff {
            if rto >= self.rto_max {
                break;
            }
            rto = rto * 2;
        }
        rto.min(self.rto_max)
    }

    /// The smoothed RTT; `None` before any sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }

    /// The smallest sample ever taken.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }

    /// Expiries since the last sample.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn est() -> RttEstimator {
        RttEstimator::new(ms(200), Duration::from_secs(60))
    }

    #[test]
    fn initial_rto_is_one_second() {
        let e = RttEstimator::new(Duration::ZERO, Duration::from_secs(60));
        assert_eq!(e.rto(), Duration::from_secs(1));
        assert_eq!(e.srtt(), None);
    }

    #[test]
    fn first_and_later_samples_follow_section_2() {
        let mut e = est();
        e.on_sample(ms(100));
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4·50 = 300 ms.
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300));
        e.on_sample(ms(200));
        // RTTVAR = 3/4·50 + 1/4·100 = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5.
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
        assert_eq!(e.min_rtt(), Some(ms(100)));
        assert_eq!(e.latest(), Some(ms(200)));
    }

    #[test]
    fn rto_is_clamped_and_backs_off() {
        let mut e = est();
        for _ in 0..50 {
            e.on_sample(ms(10));
        }
        // SRTT ≈ 10 ms, RTTVAR → 0: the minimum applies.
        assert_eq!(e.rto(), ms(200));
        e.on_expiry();
        assert_eq!(e.rto(), ms(400));
        e.on_expiry();
        assert_eq!(e.rto(), ms(800));
        for _ in 0..20 {
            e.on_expiry();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        // A new sample ends the backoff (§5.7).
        e.on_sample(ms(10));
        assert_eq!(e.rto(), ms(200));
    }
}
