//! `ledbat` — Low Extra Delay Background Transport, RFC 6817.
//!
//! On every ACK (§2.4.2, with the delay of the packet it acknowledges, §3.1):
//!
//! ```text
//! update_base_delay(delay); update_current_delay(delay)
//! queuing_delay = FILTER(current_delays) − MIN(base_delays)
//! off_target = (TARGET − queuing_delay) / TARGET
//! cwnd += GAIN · off_target · bytes_newly_acked · MSS / cwnd
//! cwnd = min(cwnd, flightsize + ALLOWED_INCREASE·MSS);  cwnd = max(cwnd, MIN_CWND·MSS)
//! on data loss (once per RTT):  cwnd = min(cwnd, max(cwnd/2, MIN_CWND·MSS))
//! no ACK for a CTO:             cwnd = 1·MSS
//! ```
//!
//! `base_delays` holds the minimum delay of each of the last BASE_HISTORY minutes: when a sample
//! falls in a new minute (`round_to_minute(now) ≠ round_to_minute(last_rollover)`), the oldest
//! minute is dropped and a new one opened; otherwise the current minute's minimum is updated.
//! `current_delays` holds the last CURRENT_FILTER samples and FILTER is their minimum (the RFC
//! leaves FILTER to the implementation and discusses a minimum over a few samples). The one-way
//! delay is the ACK's
//! receive time minus the echoed send time: it includes the offset between the two clocks, which
//! cancels in `queuing_delay`.
//!
//! Parameters (§2.5): TARGET = 100 ms (the issue's choice; the RFC's maximum), GAIN = 1 (its
//! maximum), BASE_HISTORY = 10, CURRENT_FILTER = 4, INIT_CWND = MIN_CWND = 2, ALLOWED_INCREASE
//! = 1.
//!
//! Deviations:
//! * The congestion timeout (CTO) is the shared RFC 6298 retransmission timer (the RFC asks for a
//!   CTO with backoff; this is one).
//! * No slow start: the RFC's controller runs from the first ACK with INIT_CWND (the pseudocode
//!   has no slow start; `iw` sets INIT_CWND).
//! * During fast recovery the delay filters are updated but the window is not (RFC 6675 keeps
//!   the window during recovery, as for every scheme here).

use super::{AckSample, TcpParams, Window, WindowAdjustment};
use crate::scheme::params::{Checked, Given, Validate, check, range, scheme_config};
use crate::stats::WindowedMin;
use crate::time::{Duration, Instant};
use crate::units::serde_as::ms;
use std::collections::VecDeque;

scheme_config! {
    /// Configuration of [`Ledbat`] (`ledbat:target-ms=100,gain=1`; `iw` is INIT_CWND).
    #[derive(Clone, Debug, PartialEq)]
    pub struct LedbatConfig {
        /// TARGET, ms.
        // §2.5: 100 ms or less.
        #[serde(rename = "target-ms", with = "ms")]
        pub target: Duration,
        /// GAIN.
        // §2.5: 1 or less.
        pub gain: f64,
        /// BASE_HISTORY, minutes.
        // §2.5: 10.
        pub base_history: u32,
        /// CURRENT_FILTER, samples.
        pub current_filter: u32,
        /// MIN_CWND, segments.
        // 2.
        pub min_cwnd: u32,
        /// ALLOWED_INCREASE, segments.
        // 1.
        pub allowed_increase: f64,
        /// Shared parameters; `iw` is INIT_CWND (2).
        #[group]
        pub tcp: TcpParams,
    }
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            target: Duration::from_millis(100),
            gain: 1.0,
            base_history: 10,
            current_filter: 4,
            min_cwnd: 2,
            allowed_increase: 1.0,
            tcp: TcpParams {
                initial_window: 2,
                ..TcpParams::default()
            },
        }
    }
}

impl Validate for LedbatConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        given.time_ms(
            "target-ms",
            self.target,
            0.001,
            100.0,
            "milliseconds, above 0 and ≤ 100",
        )?;
        check(
            "gain",
            self.gain > 0.0 && self.gain <= 1.0,
            "a number above 0 and ≤ 1",
        )?;
        range(
            "base-history",
            f64::from(self.base_history),
            1.0,
            1000.0,
            "minutes, 1 to 1000",
        )?;
        range(
            "current-filter",
            f64::from(self.current_filter),
            1.0,
            1000.0,
            "samples, 1 to 1000",
        )?;
        range(
            "min-cwnd",
            f64::from(self.min_cwnd),
            1.0,
            1000.0,
            "segments, 1 to 1000",
        )?;
        check(
            "allowed-increase",
            self.allowed_increase > 0.0 && self.allowed_increase <= 1000.0,
            "segments, above 0, at most 1000",
        )?;
        self.tcp.check(given)
    }
}

/// LEDBAT's window law.
#[derive(Clone, Debug)]
pub struct Ledbat {
    target_ns: f64,
    gain: f64,
    current_filter: usize,
    min_cwnd: u64,
    allowed_increase: f64,
    /// Per-minute minima (nanoseconds, with the clock offset).
    base_delays: WindowedMin,
    current_delays: VecDeque<i64>,
}

impl Ledbat {
    pub fn new(config: &LedbatConfig) -> Self {
        Ledbat {
            target_ns: config.target.as_nanos() as f64,
            gain: config.gain,
            current_filter: config.current_filter.max(1) as usize,
            min_cwnd: u64::from(config.min_cwnd.max(1)),
            allowed_increase: config.allowed_increase,
            base_delays: WindowedMin::new(
                Duration::from_secs(60),
                config.base_history.max(1) as usize,
            ),
            current_delays: VecDeque::new(),
        }
    }

    fn update_base_delay(&mut self, now: Instant, delay: i64) {
        self.base_delays.update(now, delay);
    }

    fn update_current_delay(&mut self, delay: i64) {
        if self.current_delays.len() == self.current_filter {
            self.current_delays.pop_front();
        }
        self.current_delays.push_back(delay);
    }

    /// FILTER(current_delays) − MIN(base_delays), once there is a sample.
    pub fn queuing_delay(&self) -> Option<Duration> {
        let current = self.current_delays.iter().min()?;
        let base = self.base_delays.min()?;
        let q = (i128::from(*current) - i128::from(base)).max(0);
        Some(Duration::from_nanos(q.min(i128::from(u64::MAX)) as u64))
    }

    /// MIN(base_delays), nanoseconds with the clock offset.
    pub fn base_delay_ns(&self) -> Option<i64> {
        self.base_delays.min()
    }
}

impl WindowAdjustment for Ledbat {
    fn on_init(&mut self, w: &mut Window) {
        // No slow start.
        w.set_ssthresh(0);
    }

    fn on_ack(&mut self, now: Instant, w: &mut Window, ack: &AckSample) {
        self.update_base_delay(now, ack.owd_ns);
        self.update_current_delay(ack.owd_ns);
        if ack.in_recovery {
            return;
        }
        let Some(queuing_delay) = self.queuing_delay() else {
            return;
        };
        let mss = w.mss() as f64;
        let off_target = (self.target_ns - queuing_delay.as_nanos() as f64) / self.target_ns;
        let cwnd = w.cwnd_segments() * mss;
        let max_allowed = ack.prior_in_flight as f64 + self.allowed_increase * mss;
        let next = (cwnd + self.gain * off_target * ack.acked as f64 * mss / cwnd)
            .min(max_allowed)
            .max((self.min_cwnd * w.mss()) as f64);
        w.set_cwnd_segments(next / mss);
    }

    fn on_congestion_event(&mut self, _now: Instant, w: &mut Window, _flight_size: u64) {
        let floor = self.min_cwnd * w.mss();
        w.set_cwnd(w.cwnd().min((w.cwnd() / 2).max(floor)));
    }

    fn on_rto(&mut self, _now: Instant, w: &mut Window, _flight_size: u64, _first: bool) {
        w.set_cwnd(w.mss());
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, MSS};
    use super::*;
    use crate::scheme::params::{Parameters, changed};
    use crate::time::ms;

    fn ack(owd: Duration, acked: u64, prior_in_flight: u64) -> AckSample {
        AckSample {
            acked,
            prior_in_flight,
            rtt: ms(40),
            srtt: ms(40),
            min_rtt: ms(40),
            owd_ns: owd.as_nanos() as i64,
            round: None,
            in_recovery: false,
        }
    }

    fn ledbat() -> (Ledbat, Window) {
        let mut l = Ledbat::new(&LedbatConfig::default());
        let mut w = Window::new(MSS, 20 * MSS);
        l.on_init(&mut w);
        (l, w)
    }

    /// The window after one ACK of one segment at queuing delay `q` (base 20 ms), from 20 segments.
    fn after_one_ack(q: Duration) -> f64 {
        let (mut l, mut w) = ledbat();
        let t = Instant::from_secs(1);
        // Base delay: 20 ms. Then four samples at 20 ms + q fill the filter.
        l.on_ack(t, &mut w, &ack(ms(20), 0, 40 * MSS));
        w.set_cwnd(20 * MSS);
        for _ in 0..4 {
            l.on_ack(t, &mut w, &ack(ms(20) + q, 0, 40 * MSS));
        }
        w.set_cwnd(20 * MSS);
        l.on_ack(t, &mut w, &ack(ms(20) + q, MSS, 40 * MSS));
        assert_eq!(l.queuing_delay(), Some(q));
        w.cwnd_segments()
    }

    #[test]
    fn off_target_gain_scales_the_increase() {
        // cwnd += GAIN · off_target · MSS · MSS / cwnd = off_target / 20 segments.
        for (q, off_target) in [(0, 1.0), (50, 0.5), (100, 0.0), (150, -0.5), (300, -2.0)] {
            let cwnd = after_one_ack(ms(q));
            let expected = 20.0 + off_target / 20.0;
            assert!(
                (cwnd - expected).abs() < 1e-9,
                "queuing delay {q} ms: {cwnd} vs {expected}"
            );
        }
    }

    #[test]
    fn one_window_of_acks_at_zero_delay_adds_about_one_segment() {
        let (mut l, mut w) = ledbat();
        let t = Instant::from_secs(1);
        for _ in 0..20 {
            let f = w.cwnd();
            l.on_ack(t, &mut w, &ack(ms(20), MSS, f));
        }
        assert!((w.cwnd_segments() - 21.0).abs() < 0.05);
    }

    #[test]
    fn window_is_capped_by_flightsize_and_floored_at_min_cwnd() {
        let (mut l, mut w) = ledbat();
        let t = Instant::from_secs(1);
        // Only 5 segments in flight: cwnd ≤ 5 + ALLOWED_INCREASE = 6 segments.
        l.on_ack(t, &mut w, &ack(ms(20), MSS, 5 * MSS));
        assert_eq!(w.cwnd(), 6 * MSS);
        // Far above target: the decrease stops at MIN_CWND.
        for _ in 0..10 {
            l.on_ack(t, &mut w, &ack(Duration::from_secs(5), MSS, 6 * MSS));
        }
        assert_eq!(w.cwnd(), 2 * MSS);
    }

    #[test]
    fn filter_takes_the_minimum_of_the_last_four() {
        let (mut l, mut w) = ledbat();
        let t = Instant::from_secs(1);
        for d in [20, 60, 30, 90, 50] {
            l.on_ack(t, &mut w, &ack(ms(d), 0, 0));
        }
        // Last four: 60, 30, 90, 50 → 30; base 20.
        assert_eq!(l.queuing_delay(), Some(ms(10)));
        l.on_ack(t, &mut w, &ack(ms(70), 0, 0));
        // 30, 90, 50, 70 → 30.
        assert_eq!(l.queuing_delay(), Some(ms(10)));
        l.on_ack(t, &mut w, &ack(ms(70), 0, 0));
        // 90, 50, 70, 70 → 50.
        assert_eq!(l.queuing_delay(), Some(ms(30)));
    }

    #[test]
    fn base_delay_is_the_minimum_of_the_last_ten_minutes() {
        let (mut l, mut w) = ledbat();
        let minute = Duration::from_secs(60);
        let t0 = Instant::from_secs(5);
        l.on_ack(t0, &mut w, &ack(ms(20), 0, 0));
        // Same minute: the minute's minimum.
        l.on_ack(t0 + ms(10), &mut w, &ack(ms(15), 0, 0));
        assert_eq!(l.base_delay_ns(), Some(ms(15).as_nanos() as i64));
        // Nine more minutes at 40 ms: the first minute still counts.
        for m in 1..10 {
            l.on_ack(t0 + minute * m, &mut w, &ack(ms(40), 0, 0));
        }
        assert_eq!(l.base_delay_ns(), Some(ms(15).as_nanos() as i64));
        // The eleventh minute pushes the first out.
        l.on_ack(t0 + minute * 10, &mut w, &ack(ms(40), 0, 0));
        assert_eq!(l.base_delay_ns(), Some(ms(40).as_nanos() as i64));
        assert_eq!(l.base_delays.len(), 10);
    }

    #[test]
    fn clock_offsets_cancel() {
        let (mut l, mut w) = ledbat();
        let t = Instant::from_secs(1);
        // The receiver's clock is 10 s behind: negative one-way delays.
        let offset = -10_000_000_000i64;
        for d in [20, 30, 35, 40, 45] {
            let mut a = ack(ms(d), 0, 0);
            a.owd_ns += offset;
            l.on_ack(t, &mut w, &a);
        }
        assert_eq!(l.queuing_delay(), Some(ms(10)));
    }

    #[test]
    fn loss_halves_and_timeout_drops_to_one_segment() {
        let (mut l, mut w) = ledbat();
        l.on_congestion_event(Instant::ZERO, &mut w, 20 * MSS);
        assert_eq!(w.cwnd(), 10 * MSS);
        let mut small = Window::new(MSS, 3 * MSS);
        l.on_congestion_event(Instant::ZERO, &mut small, 3 * MSS);
        assert_eq!(small.cwnd(), 2 * MSS);
        l.on_rto(Instant::ZERO, &mut w, 10 * MSS, true);
        assert_eq!(w.cwnd(), MSS);
    }

    #[test]
    fn through_the_sender_init_cwnd_is_two_and_delay_comes_from_the_ack() {
        let mut h = Harness::with_params(
            &LedbatConfig::default().tcp,
            Ledbat::new(&LedbatConfig::default()),
        );
        assert!(!h.window().in_slow_start());
        let sent = h.send_all();
        assert_eq!(sent.len(), 2);
        h.one_way = ms(25);
        h.advance(ms(50));
        h.ack(sent[0]);
        assert_eq!(h.law().base_delay_ns(), Some(ms(25).as_nanos() as i64));
        assert_eq!(h.law().queuing_delay(), Some(Duration::ZERO));
        // At zero queuing delay: +1/2 segment.
        assert!((h.window().cwnd_segments() - 2.5).abs() < 1e-9);
        assert_eq!(h.send_all().len(), 1);
        h.ack(sent[1]);
        // +1/2.5 segment; flightsize was 2 segments, so the cap (3) does not bind.
        assert!((h.window().cwnd_segments() - 2.9).abs() < 1e-9);
    }

    #[test]
    fn config() {
        let mut c = LedbatConfig::default();
        assert!(changed(&c).is_empty());
        c.set_params(&[("target-ms", "60")]).unwrap();
        c.set_params(&[("iw", "4")]).unwrap();
        assert_eq!(
            changed(&c),
            vec![("target-ms", "60".to_string()), ("iw", "4".to_string())]
        );
        assert!(
            c.set_params(&[("target-ms", "150")]).is_err(),
            "TARGET must be ≤ 100 ms"
        );
        assert!(c.set_params(&[("gain", "2")]).is_err(), "GAIN must be ≤ 1");
        assert!(c.set_params(&[("gain", "0")]).is_err());
    }
}
