//! The per-ACK machinery every rate law of the family shares (see the [module doc](super)).

use super::RateParams;
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::packet::DataHeader;
use crate::scheme::tcp::ack::TcpAck;
use crate::scheme::tcp::rtt::RttEstimator;
use crate::scheme::tcp::{DUP_THRESH, RoundSample, Rounds};
use crate::stats::WindowedMin;
use crate::time::{Duration, Instant};
use crate::units::Bitrate;
use core::fmt;
use std::collections::VecDeque;

/// What one ACK tells a rate law.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckInfo {
    /// The acknowledged packet (the one that triggered the ACK).
    pub seq: u64,
    /// Its wire size, bytes (the paper's M).
    pub size: u64,
    /// Bytes this ACK newly acknowledged (more than `size` if earlier ACKs were lost).
    pub acked_bytes: u64,
    pub send_time: Instant,
    pub rtt: Duration,
    /// RFC 6298's smoothed RTT after this sample.
    pub srtt: Duration,
    pub min_rtt: Duration,
    /// One-way queueing delay δ: one-way delay minus its windowed minimum.
    pub delta: Duration,
    /// Set when this ACK completed a round (one RTT's worth of packets).
    pub round: Option<RoundSample>,
    /// The sender's largest packet so far, bytes (a segment).
    pub segment: u64,
}

#[cfg(test)]
impl AckInfo {
    /// A 1000-byte packet's ACK with 100 ms of RTT and queueing delay `delta` (for the rate
    /// laws' unit tests).
    pub(crate) fn with_delta(delta: Duration) -> Self {
        AckInfo {
            seq: 0,
            size: 1000,
            acked_bytes: 1000,
            send_time: Instant::ZERO,
            rtt: Duration::from_millis(100),
            srtt: Duration::from_millis(100),
            min_rtt: Duration::from_millis(100),
            delta,
            round: None,
            segment: 1000,
        }
    }
}

/// A packet declared lost (a NACK).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossInfo {
    pub seq: u64,
    pub size: u64,
    pub send_time: Instant,
}

/// A rate law: how R (bytes/s) reacts to ACKs and NACKs. The rest is [`RateSender`]'s.
pub trait RateLaw: Clone + fmt::Debug {
    /// A packet is leaving now.
    fn on_packet_sent(&mut self, _now: Instant, _seq: u64, _size: u64) {}

    /// A new ACK; `r` is R in bytes/s.
    fn on_ack(&mut self, now: Instant, ack: &AckInfo, r: &mut f64);

    /// A NACK.
    fn on_loss(&mut self, now: Instant, loss: &LossInfo, r: &mut f64);

    /// Time has reached `now` (R is `r`): open and close what depends on time alone (the
    /// learner's calibration windows). Called before each [`RateLaw::sending_rate`] query.
    fn on_time(&mut self, _now: Instant, _r: f64) {}

    /// The rate to send at now, given R (a law may send below R for a while: the learner's
    /// calibration windows).
    fn sending_rate(&self, _now: Instant, r: f64) -> f64 {
        r
    }

    /// The queueing delay the law aims at, if it has one.
    fn delay_target(&self) -> Option<Duration> {
        None
    }

    /// The base one-way delay dropped by more than 10 ms: the packets take a new path.
    fn on_path_change(&mut self, _now: Instant) {}
}

/// A drop of the base one-way delay this large is taken for a new path.
pub(crate) const PATH_CHANGE: Duration = Duration::from_millis(10);

/// What a rate sender has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateCounters {
    pub packets_sent: u64,
    pub packets_acked: u64,
    /// NACKs.
    pub packets_lost: u64,
    /// No-feedback timer expiries.
    pub no_feedback: u64,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    send_time: Instant,
    size: u64,
    acked: bool,
    lost: bool,
}

/// A per-ACK rate-based sender with rate law `L`.
#[derive(Clone, Debug)]
pub struct RateSender<L> {
    law: L,
    /// R, bytes/s.
    rate: f64,
    min: f64,
    max: f64,
    pace_factor: f64,
    rtt: RttEstimator,
    base: WindowedMin,
    sent: VecDeque<Sent>,
    first_seq: u64,
    next_seq: u64,
    largest_acked: Option<u64>,
    rounds: Rounds,
    segment: u64,
    no_feedback_at: Option<Instant>,
    counters: RateCounters,
}

/// The smallest no-feedback interval.
const MIN_NO_FEEDBACK: Duration = Duration::from_millis(500);

fn bytes_per_s(r: Bitrate) -> f64 {
    r.bps() as f64 / 8.0
}

impl<L: RateLaw> RateSender<L> {
    pub fn new(params: &RateParams, law: L) -> Self {
        let min = bytes_per_s(params.call.min);
        let max = bytes_per_s(params.call.max).max(min);
        RateSender {
            law,
            rate: bytes_per_s(params.call.start).clamp(min, max),
            min,
            max,
            pace_factor: params.call.pace_factor,
            // The RTO bounds are unused (the no-feedback timer uses SRTT).
            rtt: RttEstimator::new(Duration::ZERO, Duration::from_secs(60)),
            base: WindowedMin::new(params.base_window / 10, 10),
            sent: VecDeque::new(),
            first_seq: 0,
            next_seq: 0,
            largest_acked: None,
            rounds: Rounds::default(),
            segment: 0,
            no_feedback_at: None,
            counters: RateCounters::default(),
        }
    }

    pub fn law(&self) -> &L {
        &self.law
    }

    /// R, bytes/s.
    pub fn rate_bytes_per_s(&self) -> f64 {
        self.rate
    }

    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    pub fn counters(&self) -> RateCounters {
        self.counters
    }

    fn no_feedback_interval(&self) -> Duration {
        self.rtt
            .srtt()
            .map_or(RttEstimator::INITIAL_RTO, |s| s * 4)
            .max(MIN_NO_FEEDBACK)
    }

    fn packet_mut(&mut self, seq: u64) -> Option<&mut Sent> {
        let i = seq.checked_sub(self.first_seq)?;
        self.sent.get_mut(usize::try_from(i).ok()?)
    }

    fn clamp(&mut self) {
        if !self.rate.is_finite() {
            self.rate = self.min;
        }
        self.rate = self.rate.clamp(self.min, self.max);
    }

    fn on_ack(&mut self, now: Instant, ack: &TcpAck) {
        let mut acked_bytes = 0;
        let mut trigger: Option<(u64, Instant)> = None;
        for r in ack.ranges() {
            let lo = r.start.max(self.first_seq);
            let hi = r.end.min(self.next_seq);
            for seq in lo..hi {
                let Some(p) = self.packet_mut(seq) else { break };
                if p.acked {
                    continue;
                }
                p.acked = true;
                let (size, send_time) = (p.size, p.send_time);
                acked_bytes += size;
                self.counters.packets_acked += 1;
                if seq == ack.seq {
                    trigger = Some((size, send_time));
                }
                self.largest_acked = Some(self.largest_acked.map_or(seq, |l| l.max(seq)));
            }
        }
        self.no_feedback_at = Some(now + self.no_feedback_interval());
        // NACKs (RFC 6675's DupThresh in packet numbers).
        if let Some(largest) = self.largest_acked {
            let mut lost = vec![];
            for (i, p) in self.sent.iter_mut().enumerate() {
                let seq = self.first_seq + i as u64;
                if seq + DUP_THRESH > largest {
                    break;
                }
                if !p.acked && !p.lost {
                    p.lost = true;
                    lost.push(LossInfo {
                        seq,
                        size: p.size,
                        send_time: p.send_time,
                    });
                }
            }
            for l in &lost {
                self.counters.packets_lost += 1;
                self.law.on_loss(now, l, &mut self.rate);
                self.clamp();
            }
        }
        if let Some((size, send_time)) = trigger {
            let rtt = now.saturating_duration_since(send_time);
            self.rtt.on_sample(rtt);
            let owd = i128::from(ack.recv_time.as_nanos()) - i128::from(send_time.as_nanos());
            let owd = owd.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            let before = self.base.min();
            self.base.update(now, owd);
            let base = self.base.min().unwrap_or(owd);
            if before.is_some_and(|b| b - base > PATH_CHANGE.as_nanos() as i64) {
                self.law.on_path_change(now);
            }
            let delta = Duration::from_nanos(owd.saturating_sub(base).max(0) as u64);
            let round = self.rounds.on_ack(now, ack.seq, rtt, self.next_seq);
            let info = AckInfo {
                seq: ack.seq,
                size,
                acked_bytes,
                send_time,
                rtt,
                srtt: self.rtt.srtt().unwrap_or(rtt),
                min_rtt: self.rtt.min_rtt().unwrap_or(rtt),
                delta,
                round,
                segment: self.segment,
            };
            self.law.on_ack(now, &info, &mut self.rate);
            self.clamp();
        }
        while self.sent.front().is_some_and(|p| p.acked || p.lost) {
            self.sent.pop_front();
            self.first_seq += 1;
        }
    }
}

impl<L: RateLaw> Sender for RateSender<L> {
    type Feedback = TcpAck;
    type Fields = ();

    fn on_packet_sent(&mut self, now: Instant, packet: &DataHeader, _ctx: &SendContext) {
        debug_assert_eq!(packet.seq, self.next_seq, "sequence numbers are contiguous");
        let size = packet.size.bytes();
        self.sent.push_back(Sent {
            send_time: now,
            size,
            acked: false,
            lost: false,
        });
        self.next_seq = packet.seq + 1;
        self.segment = self.segment.max(size);
        self.rounds.on_sent(packet.seq, now, size);
        self.law.on_packet_sent(now, packet.seq, size);
        self.counters.packets_sent += 1;
        if self.no_feedback_at.is_none() {
            self.no_feedback_at = Some(now + self.no_feedback_interval());
        }
    }

    fn on_feedback(&mut self, now: Instant, ack: &TcpAck) {
        self.on_ack(now, ack);
    }

    fn on_time(&mut self, now: Instant) {
        self.law.on_time(now, self.rate);
    }

    fn allowance(&self, now: Instant) -> Allowance {
        let r = self
            .law
            .sending_rate(now, self.rate)
            .clamp(self.min, self.max);
        let target = Bitrate::from_bps_f64(r * 8.0);
        Allowance::Rate {
            target,
            pacing: target.mul_f64(self.pace_factor),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.no_feedback_at
    }

    /// RFC 5348 §4.4's no-feedback timer: halve R.
    fn on_timeout(&mut self, now: Instant) {
        if self.no_feedback_at.is_some_and(|t| t <= now) {
            self.counters.no_feedback += 1;
            self.rate /= 2.0;
            self.clamp();
            self.no_feedback_at = Some(now + self.no_feedback_interval());
        }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(Bitrate::from_bps_f64(self.rate * 8.0)),
            window: None,
        }
    }

    fn delay_target(&self) -> Option<Duration> {
        self.law.delay_target()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::tcp::ack::SeqRange;
    use crate::time::ms;
    use crate::units::DataSize;

    /// Records what the law saw.
    #[derive(Clone, Debug, Default)]
    struct Probe {
        acks: Vec<AckInfo>,
        losses: Vec<u64>,
    }

    impl RateLaw for Probe {
        fn on_ack(&mut self, _now: Instant, ack: &AckInfo, _r: &mut f64) {
            self.acks.push(*ack);
        }
        fn on_loss(&mut self, _now: Instant, loss: &LossInfo, r: &mut f64) {
            self.losses.push(loss.seq);
            *r /= 2.0;
        }
    }

    fn send(s: &mut RateSender<Probe>, seq: u64, at: Instant, size: u64) {
        let h = DataHeader {
            seq,
            send_time: at,
            size: DataSize::from_bytes(size),
            ..DataHeader::default()
        };
        s.on_packet_sent(at, &h, &SendContext::default());
    }

    fn ack(seq: u64, sent: Instant, recv: Instant, ranges: &[(u64, u64)]) -> TcpAck {
        let r: Vec<SeqRange> = ranges
            .iter()
            .map(|&(start, end)| SeqRange { start, end })
            .collect();
        TcpAck::new(seq, sent, recv, &r)
    }

    #[test]
    fn delta_rtt_and_nacks_per_ack() {
        let mut s = RateSender::new(&RateParams::default(), Probe::default());
        let t = |m| Instant::ZERO + ms(m);
        for i in 0..6 {
            send(&mut s, i, t(10 * i), 1000);
        }
        // Packet 0: one-way 30 ms (the base), RTT 50 ms.
        s.on_feedback(t(50), &ack(0, t(0), t(30), &[(0, 1)]));
        // Packet 1: one-way 50 ms: δ = 20 ms.
        s.on_feedback(t(80), &ack(1, t(10), t(60), &[(0, 2)]));
        // 2 is lost; 3, 4, 5 arrive: the ACK of 5 (three after 2) NACKs it.
        s.on_feedback(t(100), &ack(3, t(30), t(60), &[(3, 4), (0, 2)]));
        s.on_feedback(t(110), &ack(4, t(40), t(70), &[(3, 5), (0, 2)]));
        assert!(s.law().losses.is_empty());
        s.on_feedback(t(120), &ack(5, t(50), t(80), &[(3, 6), (0, 2)]));
        assert_eq!(s.law().losses, vec![2]);
        let a = &s.law().acks;
        assert_eq!(a.len(), 5);
        assert_eq!((a[0].delta, a[0].rtt), (Duration::ZERO, ms(50)));
        assert_eq!(a[1].delta, ms(20));
        assert_eq!(a[1].rtt, ms(70));
        assert_eq!(a[0].size, 1000);
        // The NACK halved R (100 kbit/s = 12500 B/s).
        assert_eq!(s.rate_bytes_per_s(), 6250.0);
        assert_eq!(s.counters().packets_lost, 1);
        // Everything resolved: nothing is kept.
        assert!(s.sent.is_empty());
    }

    #[test]
    fn a_lost_ack_is_covered_by_the_next_ranges() {
        let mut s = RateSender::new(&RateParams::default(), Probe::default());
        let t = |m| Instant::ZERO + ms(m);
        for i in 0..3 {
            send(&mut s, i, t(i), 500);
        }
        // The ACKs of 0 and 1 are lost; the ACK of 2 covers them.
        s.on_feedback(t(60), &ack(2, t(2), t(40), &[(0, 3)]));
        let a = s.law().acks[0];
        assert_eq!((a.seq, a.size, a.acked_bytes), (2, 500, 1500));
        assert!(s.law().losses.is_empty());
    }

    #[test]
    fn no_feedback_halves_the_rate() {
        let mut p = RateParams::default();
        p.call.start = Bitrate::from_kbps(1000);
        let mut s = RateSender::new(&p, Probe::default());
        send(&mut s, 0, Instant::ZERO, 1000);
        // Before any RTT sample the interval is 1 s.
        assert_eq!(s.poll_timeout(), Some(Instant::from_secs(1)));
        s.on_timeout(Instant::from_secs(1));
        assert_eq!(s.rate_bytes_per_s(), 62_500.0);
        assert_eq!(s.counters().no_feedback, 1);
        // The floor is min-kbps.
        for k in 2..20 {
            s.on_timeout(Instant::from_secs(k));
        }
        assert_eq!(s.rate_bytes_per_s(), 6250.0);
        let Allowance::Rate { target, pacing } = s.allowance(Instant::from_secs(20)) else {
            panic!()
        };
        assert_eq!(target, Bitrate::from_kbps(50));
        assert_eq!(pacing, Bitrate::from_kbps(125));
    }
}
