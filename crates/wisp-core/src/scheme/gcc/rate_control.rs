//! The remote rate controller of GCC (ANRW'16 §3, Fig. 3): a finite-state machine driven by the
//! over-use detector's signal *s* that sets the receiver's rate A_r.
//!
//! ```text
//! state transitions   s = overuse → Decrease;  s = underuse → Hold;
//!                     s = normal  → Increase (from Hold or Increase; Decrease → Hold after acting)
//! Increase            A_r(t_i) = η · A_r(t_{i−1})
//! Decrease            A_r(t_i) = α · R(t_i)
//! Hold                A_r(t_i) = A_r(t_{i−1})
//! always              A_r(t_i) ≤ 1.5 · R(t_i)
//! ```
//!
//! with η ∈ [1.005, 1.3], α ∈ [0.8, 0.95] and R the receiving rate (§3). Constants and details
//! follow libwebrtc's `AimdRateControl` of the Kalman-filter era (as aiortc's port, whose tests
//! are ported in this crate's `tests/libwebrtc_ported.rs`):
//!
//! * η is 1.08 per second: A_r ← A_r + max(A_r·(1.08^min(Δt, 1 s) − 1), 1 kbit/s);
//! * α = 0.85; after a decrease the controller holds; a decrease never raises A_r (when α·R
//!   exceeds it, A_r falls back to α times the rate seen at past decreases, and at most stays);
//! * near the largest rate seen at recent decreases (an EWMA of R at decreases, α = 0.05, with a
//!   normalised variance clamped to [0.4, 2.5] kbit/s), the increase is additive instead: one
//!   average packet per response time (RTT + 100 ms, RTT taken as 200 ms), at least 4 kbit/s
//!   per second; R beyond 3σ of that average forgets it;
//! * the cap is A_r ≤ max(1.5·R + 10 kbit/s, A_r(t_{i−1})): an increase never exceeds
//!   1.5·R + 10 kbit/s, and the cap never lowers A_r by itself;
//! * A_r is unknown until R has been measured for more than 3 s (it is then initialised to R) or
//!   until the first over-use (the decrease then gives the first A_r).
//!
//! Deviations from the paper's figure: η is applied per second of elapsed time rather than per
//! update, the near-maximum additive increase and the 10 kbit/s slack in the cap are
//! libwebrtc's; both keep the figure's states and transitions.

use super::overuse::BandwidthUsage;
use crate::time::{Duration, Instant};
use crate::units::Bitrate;

/// The controller's state (Fig. 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RateControlState {
    #[default]
    Hold,
    Increase,
    Decrease,
}

/// Parameters of [`AimdRateControl`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimdConfig {
    /// α: A_r = α·R on over-use.
    pub beta: f64,
    /// η per second of multiplicative increase.
    pub eta_per_second: f64,
    /// The 1.5 of the cap A_r ≤ 1.5·R.
    pub cap_factor: f64,
    /// Slack added to the cap.
    pub cap_slack: Bitrate,
    /// The round-trip time assumed by the additive increase.
    pub rtt: Duration,
    /// A_r is initialised to R after R has been measured for longer than this.
    pub init_time: Duration,
    /// Subtracted from α·R on a decrease (when α·R exceeds it): libwebrtc's
    /// `WebRTC-Bwe-SubtractAdditionalBackoffTerm`, 5 kbit/s on the send side today; zero here.
    pub backoff_term: Bitrate,
    /// The response time of the additive increase is (RTT + 100 ms) times this: 1 in the
    /// Kalman-filter era, 2 in libwebrtc today.
    pub response_factor: f64,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            beta: 0.85,
            eta_per_second: 1.08,
            cap_factor: 1.5,
            cap_slack: Bitrate::from_kbps(10),
            rtt: Duration::from_millis(200),
            init_time: Duration::from_secs(3),
            backoff_term: Bitrate::ZERO,
            response_factor: 1.0,
        }
    }
}

/// The placeholder A_r before initialisation (libwebrtc's 30 Mbit/s).
const INITIAL_BITRATE: u64 = 30_000_000;

/// The remote rate controller.
#[derive(Clone, Debug, PartialEq)]
pub struct AimdRateControl {
    config: AimdConfig,
    current: u64,
    initialized: bool,
    first_throughput: Option<Instant>,
    last_change: Option<Instant>,
    near_max: bool,
    avg_max_kbps: Option<f64>,
    var_max_kbps: f64,
    latest_throughput: u64,
    state: RateControlState,
    /// No increase while set (the send side in an application-limited region).
    hold_increase: bool,
}

impl AimdRateControl {
    pub fn new(config: AimdConfig) -> Self {
        AimdRateControl {
            config,
            current: INITIAL_BITRATE,
            initialized: false,
            first_throughput: None,
            last_change: None,
            near_max: false,
            avg_max_kbps: None,
            var_max_kbps: 0.4,
            latest_throughput: INITIAL_BITRATE,
            state: RateControlState::Hold,
            hold_increase: false,
        }
    }

    pub fn state(&self) -> RateControlState {
        self.state
    }

    /// A_r, once known.
    pub fn estimate(&self) -> Option<Bitrate> {
        self.initialized.then_some(Bitrate::from_bps(self.current))
    }

    /// Whether the increase is additive (close to the largest rate seen at decreases).
    pub fn near_max(&self) -> bool {
        self.near_max
    }

    /// The EWMA of the receiving rate at decreases, kbit/s, and its normalised variance.
    pub fn max_rate_estimate(&self) -> (Option<f64>, f64) {
        (self.avg_max_kbps, self.var_max_kbps)
    }

    /// How often the estimate is updated and fed back (libwebrtc `GetFeedbackInterval`): the
    /// time an 80-byte RTCP packet takes at 5 % of A_r (of its 30-Mbit/s placeholder before the
    /// first estimate), clamped to [200 ms, 1 s].
    pub fn feedback_interval(&self) -> Duration {
        const RTCP_BITS: f64 = 80.0 * 8.0;
        let secs = RTCP_BITS / (0.05 * self.current.max(1) as f64);
        Duration::from_secs_f64(secs.clamp(0.2, 1.0))
    }

    /// Whether a further decrease is due while the detector keeps signalling over-use
    /// (libwebrtc `AimdRateControl::TimeToReduceFurther`): once the last change of A_r is at
    /// least one RTT old (clamped to [10, 200] ms), or at once if R has fallen below half of A_r.
    pub fn time_to_reduce_further(&self, now: Instant, throughput: Bitrate) -> bool {
        let interval = self
            .config
            .rtt
            .clamp(Duration::from_millis(10), Duration::from_millis(200));
        if self.last_change.is_none_or(|last| now - last >= interval) {
            return true;
        }
        self.initialized && (throughput.bps() as f64) < 0.5 * self.current as f64
    }

    /// The round-trip time the additive increase and [`Self::time_to_reduce_further`] use
    /// (libwebrtc `AimdRateControl::SetRtt`; the configured one until set).
    pub fn set_rtt(&mut self, rtt: Duration) {
        self.config.rtt = rtt;
    }

    /// While `on`, A_r does not increase (libwebrtc's send side in an application-limited
    /// region, `SetInApplicationLimitedRegion`: feedback cannot confirm a higher rate).
    pub fn set_hold_increase(&mut self, on: bool) {
        self.hold_increase = on;
    }

    /// The link-capacity estimate: the average rate at past decreases, once there is one
    /// (libwebrtc `LinkCapacityEstimator::estimate`).
    pub fn link_capacity(&self) -> Option<Bitrate> {
        self.avg_max_kbps.map(|k| Bitrate::from_bps_f64(k * 1000.0))
    }

    /// Sets A_r directly (a known starting point, e.g. in tests).
    pub fn set_estimate(&mut self, rate: Bitrate, now: Instant) {
        self.current = self.clamp(rate.bps(), rate.bps());
        self.initialized = true;
        self.last_change = Some(now);
    }

    /// One step of the state machine with signal `usage` and receiving rate `throughput`;
    /// returns the new A_r, or `None` while it is not yet known.
    pub fn update(
        &mut self,
        usage: BandwidthUsage,
        throughput: Option<Bitrate>,
        now: Instant,
    ) -> Option<Bitrate> {
        if !self.initialized {
            match self.first_throughput {
                None => {
                    if throughput.is_some() {
                        self.first_throughput = Some(now);
                    }
                }
                Some(first) => {
                    if now - first > self.config.init_time {
                        if let Some(r) = throughput {
                            self.current = r.bps();
                            self.initialized = true;
                        }
                    }
                }
            }
        }
        if !self.initialized && usage != BandwidthUsage::Overusing {
            return None;
        }
        // Transitions (Fig. 3).
        match usage {
            BandwidthUsage::Normal if self.state == RateControlState::Hold => {
                self.last_change = Some(now);
                self.state = RateControlState::Increase;
            }
            BandwidthUsage::Overusing => self.state = RateControlState::Decrease,
            BandwidthUsage::Underusing => self.state = RateControlState::Hold,
            BandwidthUsage::Normal => {}
        }
        let throughput = match throughput {
            Some(r) => {
                self.latest_throughput = r.bps();
                r.bps()
            }
            None => self.latest_throughput,
        };
        let throughput_kbps = throughput as f64 / 1000.0;
        let mut new = self.current;
        match self.state {
            RateControlState::Hold => {}
            RateControlState::Increase => {
                if let Some(avg) = self.avg_max_kbps {
                    let sigma = (self.var_max_kbps * avg).sqrt();
                    if throughput_kbps >= avg + 3.0 * sigma {
                        // Far above the rate seen at past decreases: the link has grown.
                        self.near_max = false;
                        self.avg_max_kbps = None;
                    }
                }
                let last = self.last_change.unwrap_or(now);
                new += if self.near_max {
                    self.additive_increase(last, now)
                } else {
                    self.multiplicative_increase(new, self.last_change, now)
                };
                self.last_change = Some(now);
            }
            RateControlState::Decrease => {
                new = (self.config.beta * throughput as f64).round_ties_even() as u64;
                let term = self.config.backoff_term.bps();
                if term > 0 && new > term {
                    new -= term;
                }
                if new > self.current {
                    // Never raise A_r on over-use (libwebrtc: "avoid increasing the rate when
                    // over-using"): fall back to α times the rate seen at past decreases, if
                    // known, and at most the current A_r.
                    if let Some(avg) = self.avg_max_kbps.filter(|_| self.near_max) {
                        new = (self.config.beta * avg * 1000.0).round_ties_even() as u64;
                    }
                    new = new.min(self.current);
                }
                if let Some(avg) = self.avg_max_kbps {
                    let sigma = (self.var_max_kbps * avg).sqrt();
                    if throughput_kbps < avg - 3.0 * sigma {
                        self.avg_max_kbps = None;
                    }
                }
                self.update_max_rate(throughput_kbps);
                self.near_max = true;
                // Acting on an over-use gives a valid estimate (libwebrtc).
                self.initialized = true;
                self.last_change = Some(now);
                self.state = RateControlState::Hold;
            }
        }
        self.current = self.clamp(new, throughput);
        Some(Bitrate::from_bps(self.current))
    }

    fn clamp(&self, new: u64, throughput: u64) -> u64 {
        if self.hold_increase {
            return new.min(self.current);
        }
        let cap = (self.config.cap_factor * throughput as f64) as u64 + self.config.cap_slack.bps();
        new.min(cap.max(self.current))
    }

    fn multiplicative_increase(&self, rate: u64, last: Option<Instant>, now: Instant) -> u64 {
        let mut eta = self.config.eta_per_second;
        if let Some(last) = last {
            let elapsed_ms = (now - last).as_millis_f64().min(1000.0);
            eta = eta.powf(elapsed_ms / 1000.0);
        }
        ((eta - 1.0) * rate as f64).max(1000.0) as u64
    }

    fn additive_increase(&self, last: Instant, now: Instant) -> u64 {
        ((now - last).as_millis_f64() * self.near_max_increase_per_second() / 1000.0) as u64
    }

    /// One average packet per response time, bits per second.
    fn near_max_increase_per_second(&self) -> f64 {
        let bits_per_frame = self.current as f64 / 30.0;
        let packets_per_frame = (bits_per_frame / (8.0 * 1200.0)).ceil();
        let avg_packet_bits = bits_per_frame / packets_per_frame;
        let response_ms = (self.config.rtt.as_millis_f64() + 100.0) * self.config.response_factor;
        ((avg_packet_bits * 1000.0 / response_ms) as u64).max(4000) as f64
    }

    fn update_max_rate(&mut self, throughput_kbps: f64) {
        let alpha = 0.05;
        let avg = match self.avg_max_kbps {
            None => throughput_kbps,
            Some(a) => (1.0 - alpha) * a + alpha * throughput_kbps,
        };
        self.avg_max_kbps = Some(avg);
        let norm = avg.max(1.0);
        self.var_max_kbps = (1.0 - alpha) * self.var_max_kbps
            + alpha * (avg - throughput_kbps) * (avg - throughput_kbps) / norm;
        self.var_max_kbps = self.var_max_kbps.clamp(0.4, 2.5);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }
    fn bps(b: u64) -> Bitrate {
        Bitrate::from_bps(b)
    }

    #[test]
    fn waits_for_three_seconds_of_throughput() {
        let mut c = AimdRateControl::new(AimdConfig::default());
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(500_000)), at(0)),
            None
        );
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(500_000)), at(3000)),
            None
        );
        // Initialised to R, then one increase step of 1 kbit/s (Δt = 0 since Hold → Increase).
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(500_000)), at(3001)),
            Some(bps(501_000))
        );
        assert_eq!(c.state(), RateControlState::Increase);
        // One second later: ×1.08, within the cap 1.5·R + 10k = 760k.
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(500_000)), at(4001)),
            Some(bps(541_080))
        );
    }

    /// libwebrtc `GetFeedbackInterval`: 80-byte RTCP at 5 % of the estimate, within [0.2, 1] s.
    #[test]
    fn feedback_interval_follows_the_estimate() {
        let mut c = AimdRateControl::new(AimdConfig::default());
        // The 30-Mbit/s placeholder: 0.43 ms, clamped to 200 ms.
        assert_eq!(c.feedback_interval(), Duration::from_millis(200));
        c.set_estimate(bps(64_000), at(0));
        assert_eq!(c.feedback_interval(), Duration::from_millis(200));
        c.set_estimate(bps(40_000), at(0));
        assert_eq!(c.feedback_interval(), Duration::from_millis(320));
        c.set_estimate(bps(10_000), at(0));
        assert_eq!(c.feedback_interval(), Duration::from_secs(1));
    }

    #[test]
    fn reduces_further_after_an_rtt_or_when_r_halves() {
        let mut c = AimdRateControl::new(AimdConfig::default());
        assert!(c.time_to_reduce_further(at(0), bps(100_000)));
        c.set_estimate(bps(1_000_000), at(1000));
        c.update(BandwidthUsage::Overusing, Some(bps(1_000_000)), at(1000));
        // 850 kbit/s since 1000 ms: not before 200 ms (RTT 200 ms) unless R < 425 kbit/s.
        assert!(!c.time_to_reduce_further(at(1199), bps(500_000)));
        assert!(c.time_to_reduce_further(at(1199), bps(420_000)));
        assert!(c.time_to_reduce_further(at(1200), bps(900_000)));
    }

    /// libwebrtc `AimdRateControl::ChangeBitrate`: "An over-use should always trigger us to
    /// reduce the bitrate, even though we have not yet established our first estimate. By acting
    /// on the over-use, we will end up with a valid estimate." The controller then increases
    /// from there, rather than waiting to be re-initialised to R after 3 s.
    #[test]
    fn overuse_before_initialisation_decreases_and_initialises() {
        let mut c = AimdRateControl::new(AimdConfig::default());
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(1_000_000)), at(0)),
            None
        );
        assert_eq!(
            c.update(BandwidthUsage::Overusing, Some(bps(1_000_000)), at(100)),
            Some(bps(850_000))
        );
        assert_eq!(c.state(), RateControlState::Hold);
        assert_eq!(c.estimate(), Some(bps(850_000)));
        // Normal: Hold → Increase, then the near-maximum additive increase from 850 kbit/s (one
        // packet per 300 ms: 9444 bits, then 7346 at 881 kbit/s), not a re-initialisation to R
        // after 3 s.
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(1_000_000)), at(600)),
            Some(bps(850_000))
        );
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(1_000_000)), at(1600)),
            Some(bps(881_481))
        );
        assert_eq!(
            c.update(BandwidthUsage::Normal, Some(bps(1_000_000)), at(3200)),
            Some(bps(920_657))
        );
    }

    /// libwebrtc: "Avoid increasing the rate when over-using." When α·R exceeds A_r (R has
    /// grown since the last decrease, e.g. while a burst drains), A_r falls back to α times the
    /// rate seen at past decreases, and never rises.
    #[test]
    fn overuse_never_raises_the_rate() {
        let mut c = AimdRateControl::new(AimdConfig::default());
        c.set_estimate(bps(300_000), at(0));
        // First decrease: α·R = 255 kbit/s; the rate at decreases is now 300 kbit/s.
        assert_eq!(
            c.update(BandwidthUsage::Overusing, Some(bps(300_000)), at(0)),
            Some(bps(255_000))
        );
        // R has grown to 400 kbit/s: α·R = 340 > 255, so α·300 = 255 and at most 255.
        assert_eq!(
            c.update(BandwidthUsage::Overusing, Some(bps(400_000)), at(100)),
            Some(bps(255_000))
        );
        // Without a rate at past decreases (first over-use after a reset), at most A_r.
        let mut c = AimdRateControl::new(AimdConfig::default());
        c.set_estimate(bps(200_000), at(0));
        assert_eq!(
            c.update(BandwidthUsage::Overusing, Some(bps(400_000)), at(0)),
            Some(bps(200_000))
        );
        // A lower R still decreases to α·R.
        assert_eq!(
            c.update(BandwidthUsage::Overusing, Some(bps(100_000)), at(100)),
            Some(bps(85_000))
        );
    }
}
