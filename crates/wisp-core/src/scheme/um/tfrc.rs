//! `tfrc` — TCP-Friendly Rate Control, RFC 5348 (Mehrotra et al. §IV-D).
//!
//! The allowed rate follows TCP's throughput equation (§3.1):
//!
//! ```text
//! X_Bps = s / (R·√(2·b·p/3) + t_RTO·(3·√(3·b·p/8))·p·(1 + 32·p²)),   b = 1, t_RTO = 4·R
//! ```
//!
//! with s the mean packet size, R the RTT (§4.3: R = 0.9·R + 0.1·R_sample) and p the loss event
//! rate (§5): losses less than one RTT after the first loss of a loss event belong to it (§5.2);
//! a loss interval is the number of packets from the start of one loss event to the start of the
//! next (§5.3); the average loss interval weighs the last eight with 1, 1, 1, 1, 0.8, 0.6, 0.4,
//! 0.2, and includes the open interval when that makes it larger (§5.4); p = 1/I_mean. The first
//! loss event seeds the history with the interval that would give the rate received in the round
//! before it (§6.3.1). Once per round trip (the RFC's feedback period; at once on a new loss
//! event, §6.2) the sender updates (§4.3):
//!
//! ```text
//! p > 0:  X = max(min(X_Bps, 2·X_recv), s/t_mbi),              t_mbi = 64 s
//! p = 0:  X = max(min(2·X, 2·X_recv), W_init/R) once per R,   W_init = min(4·s, max(2·s, 4380))
//! ```
//!
//! X_recv is the rate acknowledged over the last round trip.
//!
//! Deviations: the sender computes p from its per-packet ACKs (RFC 5348 lets the receiver do it
//! and send p); losses are grouped into events by their send times, which differ from the
//! receiver's interpolated arrival times by the constant path delay; `recv_limit` is 2·X_recv
//! (the RFC keeps a set of recent X_recv values to be lenient with application-limited
//! senders); the rate before the first RTT sample is `start-kbps` (the RFC's is one packet per
//! second, below the encoder's minimum).

use super::RateParams;
use super::sender::{AckInfo, LossInfo, RateLaw};
use crate::scheme::params::{Checked, Given, Validate, scheme_config};
use crate::stats::Ewma;
use crate::time::{Duration, Instant};

scheme_config! {
    /// Configuration of [`Tfrc`] (only the shared parameters).
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct TfrcConfig {
        #[group]
        pub rate: RateParams,
    }
}

impl Validate for TfrcConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        self.rate.check(given)
    }
}

/// §5.4's weights.
const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// t_mbi (§4.3).
const T_MBI: f64 = 64.0;

/// TCP's throughput equation (§3.1), bytes/s, for packets of `s` bytes, RTT `r` seconds, loss
/// event rate `p`.
pub fn throughput(s: f64, r: f64, p: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let t_rto = 4.0 * r;
    s / (r * (2.0 * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p))
}

/// The loss event rate at which [`throughput`] equals `x` (bisection on log p).
pub fn loss_rate_for(s: f64, r: f64, x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-10f64.ln(), 0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if throughput(s, r, mid.exp()) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// The TFRC law.
#[derive(Clone, Debug)]
pub struct Tfrc {
    s: Ewma,
    r: Ewma,
    /// Closed loss intervals, most recent first (at most 8), packets.
    intervals: Vec<f64>,
    /// The current loss event's first lost packet and its send time.
    event: Option<(u64, Instant)>,
    /// The highest sequence number acknowledged or lost.
    highest: u64,
    x_recv: Option<f64>,
    round_start: Option<Instant>,
    round_bytes: u64,
    /// When X was last doubled (slow start).
    tld: Option<Instant>,
    pending_event: bool,
}

impl Tfrc {
    pub fn new(_c: &TfrcConfig) -> Self {
        Tfrc {
            s: Ewma::new(1.0 / 16.0),
            r: Ewma::new(0.1),
            intervals: vec![],
            event: None,
            highest: 0,
            x_recv: None,
            round_start: None,
            round_bytes: 0,
            tld: None,
            pending_event: false,
        }
    }

    /// The mean packet size, bytes.
    pub fn packet_size(&self) -> f64 {
        self.s.value().unwrap_or(1000.0)
    }

    /// The loss event rate p (0 before any loss).
    pub fn loss_event_rate(&self) -> f64 {
        let Some((start, _)) = self.event else {
            return 0.0;
        };
        let open = (self.highest + 1).saturating_sub(start) as f64;
        let n = self.intervals.len().min(WEIGHTS.len());
        if n == 0 {
            return 0.0;
        }
        // I_0 = open, I_1.. = closed.
        let all: Vec<f64> = std::iter::once(open)
            .chain(self.intervals.iter().copied())
            .collect();
        let tot0: f64 = (0..n).map(|i| all[i] * WEIGHTS[i]).sum();
        let tot1: f64 = (1..=n).map(|i| all[i] * WEIGHTS[i - 1]).sum();
        let w: f64 = WEIGHTS[..n].iter().sum();
        let mean = tot0.max(tot1) / w;
        if mean > 0.0 { 1.0 / mean } else { 1.0 }
    }

    fn rtt(&self) -> Option<f64> {
        self.r.value()
    }

    /// §4.3: a feedback period's update.
    fn update(&mut self, now: Instant, x: &mut f64) {
        let (Some(r), Some(x_recv)) = (self.rtt(), self.x_recv) else {
            return;
        };
        let s = self.packet_size();
        let p = self.loss_event_rate();
        if p > 0.0 {
            *x = throughput(s, r, p).min(2.0 * x_recv).max(s / T_MBI);
        } else if self
            .tld
            .is_none_or(|t| now.saturating_duration_since(t).as_secs_f64() >= r)
        {
            let w_init = (4.0 * s).min((2.0 * s).max(4380.0));
            *x = (2.0 * *x).min(2.0 * x_recv).max(w_init / r);
            self.tld = Some(now);
        }
    }
}

impl RateLaw for Tfrc {
    fn on_packet_sent(&mut self, _now: Instant, _seq: u64, size: u64) {
        self.s.update(size as f64);
    }

    fn on_ack(&mut self, now: Instant, ack: &AckInfo, x: &mut f64) {
        self.highest = self.highest.max(ack.seq);
        self.round_bytes += ack.acked_bytes;
        let start = *self.round_start.get_or_insert(ack.send_time);
        if ack.round.is_some() || self.pending_event {
            self.r.update(ack.rtt.as_secs_f64());
            let span = now.saturating_duration_since(start).as_secs_f64();
            if span > 0.0 && ack.round.is_some() {
                self.x_recv = Some(self.round_bytes as f64 / span);
                self.round_bytes = 0;
                self.round_start = Some(now);
            }
            self.pending_event = false;
            self.update(now, x);
        }
    }

    fn on_loss(&mut self, _now: Instant, loss: &LossInfo, x: &mut f64) {
        self.highest = self.highest.max(loss.seq);
        let r = Duration::from_secs_f64(self.rtt().unwrap_or(0.1));
        match self.event {
            Some((_, t)) if loss.send_time <= t + r => return,
            Some((start, _)) => {
                self.intervals.insert(0, (loss.seq - start) as f64);
                self.intervals.truncate(WEIGHTS.len());
            }
            None => {
                // §6.3.1: the interval that would give the rate received before the loss.
                let s = self.packet_size();
                let rate = self.x_recv.unwrap_or(*x).max(s / T_MBI);
                let p = loss_rate_for(s, self.rtt().unwrap_or(0.1), rate);
                self.intervals.push(1.0 / p);
            }
        }
        self.event = Some((loss.seq, loss.send_time));
        // §6.2: feedback at once on a new loss event.
        self.pending_event = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn equation_matches_rfc_5348_section_3_1() {
        // s = 1000 B, R = 100 ms, p = 1 %: 1000 / (0.1·√(0.02/3) + 0.4·3·√(0.00375)·0.01·1.0032).
        let x = throughput(1000.0, 0.1, 0.01);
        let expected = 1000.0
            / (0.1 * (0.02f64 / 3.0).sqrt()
                + 0.4 * 3.0 * (0.00375f64).sqrt() * 0.01 * (1.0 + 32.0 * 1e-4));
        assert!((x - expected).abs() < 1e-9);
        // ≈ 110 kB/s, close to the simple √(3/2p)·s/R = 122 kB/s at low loss.
        assert!((100_000.0..125_000.0).contains(&x), "{x}");
        assert!(throughput(1000.0, 0.1, 0.1) < throughput(1000.0, 0.1, 0.01));
        let p = loss_rate_for(1000.0, 0.1, x);
        assert!((p - 0.01).abs() < 1e-6, "{p}");
    }

    fn ack(seq: u64, sent: Instant, round: bool) -> AckInfo {
        AckInfo {
            seq,
            size: 1000,
            acked_bytes: 1000,
            send_time: sent,
            rtt: ms(100),
            srtt: ms(100),
            min_rtt: ms(100),
            delta: Duration::ZERO,
            round: round.then_some(crate::scheme::tcp::RoundSample {
                rtt: ms(100),
                sent: 0,
                min_rtt: ms(100),
                samples: 1,
            }),
            segment: 1000,
        }
    }

    fn loss(seq: u64, sent: Instant) -> LossInfo {
        LossInfo {
            seq,
            size: 1000,
            send_time: sent,
        }
    }

    #[test]
    fn loss_events_and_the_weighted_average() {
        let mut t = Tfrc::new(&TfrcConfig::default());
        for seq in 0..1000 {
            t.on_packet_sent(Instant::ZERO, seq, 1000);
        }
        let mut x = 100_000.0;
        t.on_ack(
            Instant::from_millis(100),
            &ack(0, Instant::ZERO, true),
            &mut x,
        );
        assert_eq!(t.loss_event_rate(), 0.0);
        // First event at packet 100, with a second loss 10 ms later (same event).
        let t0 = Instant::from_secs(1);
        t.on_loss(t0, &loss(100, t0), &mut x);
        t.on_loss(t0, &loss(101, t0 + ms(10)), &mut x);
        assert_eq!(t.intervals.len(), 1);
        // Next events at 200 and 400 (more than an RTT apart).
        t.on_loss(t0, &loss(200, t0 + ms(500)), &mut x);
        t.on_loss(t0, &loss(400, t0 + ms(1000)), &mut x);
        assert_eq!(t.intervals[..2], [200.0, 100.0]);
        // Open interval at 449: 50 packets; I_tot0 = 50 + 200 + 100 + synthetic,
        // I_tot1 = 200 + 100 + synthetic + 0: with three closed intervals, weights 1, 1, 1.
        t.highest = 449;
        let synthetic = t.intervals[2];
        let mean = (200.0 + 100.0 + synthetic).max(50.0 + 200.0 + 100.0) / 3.0;
        assert!((t.loss_event_rate() - 1.0 / mean).abs() < 1e-12);
    }

    #[test]
    fn slow_start_doubles_until_the_first_loss_then_follows_the_equation() {
        let mut t = Tfrc::new(&TfrcConfig::default());
        for seq in 0..10_000 {
            t.on_packet_sent(Instant::ZERO, seq, 1000);
        }
        let mut x: f64 = 12_500.0;
        // Rounds of 100 ms in which everything sent arrives: X doubles (X_recv keeps up).
        let mut now = Instant::ZERO;
        let mut seq = 0;
        for _ in 0..4 {
            let before = x;
            let n = (x * 0.1 / 1000.0).ceil() as u64;
            for _ in 0..n {
                t.on_ack(now, &ack(seq, now, false), &mut x);
                seq += 1;
            }
            now += ms(100);
            t.on_ack(now, &ack(seq, now - ms(100), true), &mut x);
            seq += 1;
            assert!(x >= 1.8 * before, "{before} → {x}");
        }
        // A loss event: X drops to the equation at the synthetic p (the rate received).
        t.on_loss(now, &loss(seq - 5, now - ms(50)), &mut x);
        now += ms(10);
        t.on_ack(now, &ack(seq, now - ms(100), false), &mut x);
        let p = t.loss_event_rate();
        assert!(p > 0.0);
        let eq = throughput(t.packet_size(), t.rtt().unwrap(), p);
        assert!(
            (x - eq.min(2.0 * t.x_recv.unwrap())).abs() < 1.0,
            "{x} vs {eq}"
        );
    }
}
