//! When to probe and at what rate (libwebrtc
//! `modules/congestion_controller/goog_cc/probe_controller.cc`).
//!
//! * **Initial probing** ([`ProbeController::start`]): two clusters at 3× and 6× the start rate,
//!   of 100 ms each; then the controller waits for their result.
//! * **Further probing**: while waiting (at most 1 s after the last probe), an estimate above
//!   0.7 × the last probe's rate is probed again at 2× that estimate.
//! * **ALR probing**: in an application-limited region, a probe at 2× the estimate every 5 s.
//! * **After a large drop** ([`ProbeController::request_probe`], called when the delay-based
//!   estimator recovers from over-use or backs off in ALR): if the estimate fell below 0.66 of
//!   what it was within the last 5 s, and the sender is, or was less than 3 s ago, in ALR, and no
//!   such probe went out in the last 5 s: one probe at 0.85 × the rate before the drop, if that
//!   is more than 5 % above the estimate.
//! * **Caps**: no probe above the largest probing rate (5 Mbit/s by default,
//!   `kDefaultMaxProbingBitrate`); a probe capped there stops further probing.
//!
//! The initial clusters' bursts go 20 ms apart (`initial_min_probe_delta`); other clusters last
//! 15 ms and at least 5 packets, in bursts 2 ms apart (`min_probe_duration`,
//! `min_probe_packets_sent`, `min_probe_delta`).
//!
//! Deviations: no allocation probes (wisp's call has one stream whose allocation never
//! changes), no network-state-estimate probing and no loss-limited probe scale (loss-based v1
//! has no loss-limited state), no periodic repeated initial probing (off by default).

use crate::time::{Duration, Instant};
use crate::units::Bitrate;

/// Parameters, libwebrtc's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeControllerConfig {
    pub first_scale: f64,
    pub second_scale: f64,
    pub further_scale: f64,
    pub further_threshold: f64,
    pub alr_interval: Duration,
    pub alr_scale: f64,
    pub initial_duration: Duration,
    pub duration: Duration,
    /// The spacing of the initial probes' bursts (`initial_min_probe_delta`).
    pub initial_min_delta: Duration,
    /// The spacing of other probes' bursts (`min_probe_delta`).
    pub min_delta: Duration,
    pub min_probes: u32,
    /// The largest probing rate.
    pub max_probe: Bitrate,
}

impl Default for ProbeControllerConfig {
    fn default() -> Self {
        ProbeControllerConfig {
            first_scale: 3.0,
            second_scale: 6.0,
            further_scale: 2.0,
            further_threshold: 0.7,
            alr_interval: Duration::from_secs(5),
            alr_scale: 2.0,
            initial_duration: Duration::from_millis(100),
            duration: Duration::from_millis(15),
            initial_min_delta: Duration::from_millis(20),
            min_delta: Duration::from_millis(2),
            min_probes: 5,
            max_probe: Bitrate::from_kbps(5000),
        }
    }
}

/// `kMaxWaitingTimeForProbingResult`.
const MAX_WAIT_FOR_RESULT: Duration = Duration::from_secs(1);
/// `kBitrateDropThreshold`, `kBitrateDropTimeout`, `kProbeFractionAfterDrop`,
/// `kProbeUncertainty`, `kAlrEndedTimeout`, `kMinTimeBetweenAlrProbes`.
const DROP_THRESHOLD: f64 = 0.66;
const DROP_TIMEOUT: Duration = Duration::from_secs(5);
const PROBE_FRACTION_AFTER_DROP: f64 = 0.85;
const PROBE_UNCERTAINTY: f64 = 0.05;
const ALR_ENDED_TIMEOUT: Duration = Duration::from_secs(3);
const MIN_TIME_BETWEEN_DROP_PROBES: Duration = Duration::from_secs(5);

/// A probe to send: `rate` for at least `duration` and `min_probes` packets, in bursts
/// `min_delta` apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeRequest {
    pub rate: Bitrate,
    pub duration: Duration,
    pub min_probes: u32,
    pub min_delta: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Init,
    Waiting,
    Complete,
}

/// libwebrtc's `ProbeController`.
#[derive(Clone, Debug)]
pub struct ProbeController {
    config: ProbeControllerConfig,
    state: State,
    further_above: Option<Bitrate>,
    last_probing: Option<Instant>,
    estimate: Bitrate,
    alr_start: Option<Instant>,
    alr_ended: Option<Instant>,
    large_drop: Option<Instant>,
    before_drop: Bitrate,
    last_drop_probe: Option<Instant>,
    requests: Vec<ProbeRequest>,
}

impl ProbeController {
    pub fn new(config: ProbeControllerConfig) -> Self {
        ProbeController {
            config,
            state: State::Init,
            further_above: None,
            last_probing: None,
            estimate: Bitrate::ZERO,
            alr_start: None,
            alr_ended: None,
            large_drop: None,
            before_drop: Bitrate::ZERO,
            last_drop_probe: None,
            requests: vec![],
        }
    }

    /// The call starts at `start`: the initial exponential probes.
    pub fn start(&mut self, now: Instant, start: Bitrate) {
        if self.state != State::Init {
            return;
        }
        self.estimate = start;
        let c = self.config;
        let rates = [start.mul_f64(c.first_scale), start.mul_f64(c.second_scale)];
        self.initiate(now, &rates, (c.initial_duration, c.initial_min_delta), true);
    }

    /// The sender's ALR state: when the current region started, and when the last one ended.
    pub fn set_alr(&mut self, start: Option<Instant>, ended: Option<Instant>) {
        self.alr_start = start;
        self.alr_ended = ended;
    }

    /// A new estimate.
    pub fn set_estimate(&mut self, now: Instant, estimate: Bitrate) {
        if self.state == State::Waiting
            && self
                .further_above
                .is_some_and(|above| estimate > above && !self.wait_expired(now))
        {
            let rate = estimate.mul_f64(self.config.further_scale);
            self.initiate(now, &[rate], self.spacing(), true);
        }
        if (estimate.bps() as f64) < DROP_THRESHOLD * self.estimate.bps() as f64 {
            self.large_drop = Some(now);
            self.before_drop = self.estimate;
        }
        self.estimate = estimate;
    }

    fn wait_expired(&self, now: Instant) -> bool {
        self.last_probing
            .is_some_and(|t| now.saturating_duration_since(t) > MAX_WAIT_FOR_RESULT)
    }

    /// Periodic work: end the wait for a result, ALR probing.
    pub fn process(&mut self, now: Instant) {
        if self.state == State::Waiting && self.wait_expired(now) {
            self.state = State::Complete;
            self.further_above = None;
        }
        if self.state != State::Complete || self.estimate == Bitrate::ZERO {
            return;
        }
        let Some(alr_start) = self.alr_start else {
            return;
        };
        let last = self.last_probing.map_or(alr_start, |t| t.max(alr_start));
        if now.saturating_duration_since(last) >= self.config.alr_interval {
            let rate = self.estimate.mul_f64(self.config.alr_scale);
            self.initiate(now, &[rate], self.spacing(), true);
        }
    }

    /// The duration and burst spacing of probes other than the initial ones.
    fn spacing(&self) -> (Duration, Duration) {
        (self.config.duration, self.config.min_delta)
    }

    /// A probe after a large drop, if one is due (libwebrtc `RequestProbe`).
    pub fn request_probe(&mut self, now: Instant) {
        let in_or_after_alr = self.alr_start.is_some()
            || self
                .alr_ended
                .is_some_and(|t| now.saturating_duration_since(t) < ALR_ENDED_TIMEOUT);
        let recent_drop = self
            .large_drop
            .is_some_and(|t| now.saturating_duration_since(t) < DROP_TIMEOUT);
        let spaced = self
            .last_drop_probe
            .is_none_or(|t| now.saturating_duration_since(t) >= MIN_TIME_BETWEEN_DROP_PROBES);
        if self.state != State::Complete || !in_or_after_alr || !recent_drop || !spaced {
            return;
        }
        let rate = self.before_drop.mul_f64(PROBE_FRACTION_AFTER_DROP);
        if rate.bps() as f64 * (1.0 - PROBE_UNCERTAINTY) > self.estimate.bps() as f64 {
            self.last_drop_probe = Some(now);
            self.initiate(now, &[rate], self.spacing(), false);
        }
    }

    fn initiate(
        &mut self,
        now: Instant,
        rates: &[Bitrate],
        (duration, min_delta): (Duration, Duration),
        further: bool,
    ) {
        let mut further = further;
        for &r in rates {
            let mut rate = r;
            if rate >= self.config.max_probe {
                rate = self.config.max_probe;
                further = false;
            }
            self.requests.push(ProbeRequest {
                rate,
                duration,
                min_probes: self.config.min_probes,
                min_delta,
            });
        }
        self.last_probing = Some(now);
        if further {
            self.state = State::Waiting;
            let last = rates.last().map_or(Bitrate::ZERO, |r| *r);
            self.further_above = Some(last.mul_f64(self.config.further_threshold));
        } else {
            self.state = State::Complete;
            self.further_above = None;
        }
    }

    /// The probes requested since the last call.
    pub fn take_requests(&mut self) -> impl Iterator<Item = ProbeRequest> + '_ {
        self.requests.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kbps(k: u64) -> Bitrate {
        Bitrate::from_kbps(k)
    }

    fn rates(p: &mut ProbeController) -> Vec<u64> {
        p.take_requests().map(|r| r.rate.bps() / 1000).collect()
    }

    #[test]
    fn initial_probes_then_further_while_results_keep_up() {
        let mut p = ProbeController::new(ProbeControllerConfig::default());
        p.start(Instant::ZERO, kbps(300));
        assert_eq!(rates(&mut p), vec![900, 1800]);
        // 0.7 × 1800 = 1260: an estimate above it probes on at 2×.
        p.set_estimate(Instant::from_millis(300), kbps(1200));
        assert!(rates(&mut p).is_empty());
        p.set_estimate(Instant::from_millis(400), kbps(1500));
        assert_eq!(rates(&mut p), vec![3000]);
        // Capped at 5 Mbit/s, which ends further probing.
        p.set_estimate(Instant::from_millis(600), kbps(2900));
        assert_eq!(rates(&mut p), vec![5000]);
        p.set_estimate(Instant::from_millis(700), kbps(4900));
        assert!(rates(&mut p).is_empty());
    }

    #[test]
    fn no_further_probe_after_the_wait_and_alr_probes_every_5_s() {
        let mut p = ProbeController::new(ProbeControllerConfig::default());
        p.start(Instant::ZERO, kbps(300));
        rates(&mut p);
        p.process(Instant::from_millis(1100));
        p.set_estimate(Instant::from_millis(1200), kbps(2000));
        assert!(rates(&mut p).is_empty());
        p.set_alr(Some(Instant::from_secs(2)), None);
        p.process(Instant::from_secs(6));
        assert!(rates(&mut p).is_empty());
        p.process(Instant::from_secs(7));
        assert_eq!(rates(&mut p), vec![4000]);
    }

    #[test]
    fn probes_after_a_large_drop_in_alr() {
        let mut p = ProbeController::new(ProbeControllerConfig::default());
        p.start(Instant::ZERO, kbps(300));
        rates(&mut p);
        p.process(Instant::from_secs(2));
        p.set_estimate(Instant::from_secs(2), kbps(2000));
        p.set_alr(Some(Instant::from_secs(3)), None);
        p.set_estimate(Instant::from_secs(4), kbps(1000));
        p.request_probe(Instant::from_secs(4));
        assert_eq!(rates(&mut p), vec![1700]);
        // Not again within 5 s.
        p.request_probe(Instant::from_secs(5));
        assert!(rates(&mut p).is_empty());
    }
}
