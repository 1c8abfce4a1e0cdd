//! DualPI2 — the Dual-Queue Coupled AQM of RFC 9332 (De Schepper, Briscoe, White; Experimental,
//! January 2023) with a PI2 Classic AQM, after its Appendix A. Written from the RFC's
//! description and equations; no code taken.
//!
//! Two queues share one buffer and one link ([`DualPi2`]):
//!
//! * **classification** at enqueue (RFC 9332 §2.5.1.1, RFC 9331 §5.1): ECT(1) and CE packets go
//!   to the L queue, Not-ECT and ECT(0) packets to the Classic (C) queue; an arrival that would
//!   exceed the shared `packets`/`bytes` limits is dropped (tail drop);
//! * **the base AQM, PI2**, every Tupdate on the C queue's queueing delay q (the sojourn time
//!   of its head packet, 0 when empty):
//!   p' ← p' + alpha·(q − target) + beta·(q − q_prev), p' clamped to [0, 1];
//! * **coupling**: the coupled L probability p_CL = k·p' (clamped to 1) and the Classic
//!   probability p_C = p'² (the squaring that makes Classic flows' 1/√p rate match scalable
//!   flows' 1/p one);
//! * **the L queue's native AQM**: a ramp on the dequeued packet's sojourn time s,
//!   p'_L = 0 below minTh, (s − minTh)/range within the ramp, 1 from minTh + range (a step at
//!   minTh if `range` is 0); not applied while the L queue holds at most Th_len = 1 packet;
//! * **at dequeue**, an L packet is marked CE with probability p_L = max(p'_L, p_CL) by the
//!   RFC's `recur` function (a deterministic accumulator: count += p_L, mark and subtract 1 when
//!   it reaches 1);
//!   a C packet is, with probability p_C drawn from the simulator's seeded AQM stream, marked CE
//!   if it is ECT(0) and dropped if it is Not-ECT (a dropped packet is followed by the next);
//! * **the scheduler**, time-shifted FIFO: the L queue is served unless the C queue's head has
//!   waited more than `tshift` longer than the L queue's head (or the L queue is empty), so the
//!   L queue has priority without starving the C queue.
//!
//! Defaults (Appendix A, Figure 2's `dualpi2_params_init`): target = 15 ms and RTT_max = 100 ms
//! give Tupdate = min(target, RTT_max/3) = 15 ms, alpha = 0.1·Tupdate/RTT_max² = 0.15 Hz and
//! beta = 0.3/RTT_max = 3 Hz; k = 2; minTh = 800 µs, range = 400 µs (so the ramp spans
//! 0.8–1.2 ms, "about 1 ms"), Th_len = 1 packet. Linux's `sch_dualpi2` uses Tupdate 16 ms,
//! alpha 0.16 and beta 3.2 instead (`dualpi2:tupdate=16ms,alpha=0.16,beta=3.2` gives them).
//!
//! Deviations from RFC 9332:
//! * PI2's periodic update runs lazily, at the next enqueue or dequeue, once for every Tupdate
//!   elapsed (as this crate's PIE), each on the queueing delay at that instant.
//! * The scheduler is a time-shifted FIFO with `tshift` = 50 ms by default: the RFC allows it
//!   or a weighted round robin and fixes no value in Appendix A; 50 ms is wisp's choice.
//! * No overload handling (the RFC's switch to dropping in the L queue once p_C reaches
//!   p_Cmax = min(1/k², 1), and the Classic queue's protection): p_CL saturates at 1 and the L
//!   queue keeps marking every packet; only the tail-drop limits drop L packets.
//! * The shared buffer is unlimited unless `packets`/`bytes` are given (the RFC sizes it as
//!   250 ms at the maximum link rate, which a trace link does not have).
//! * Th_len is fixed at one packet (not a key), counted as the L queue's length just before the
//!   dequeue; the native ramp applies only when it held more.
//! * CE packets count as L4S traffic (as the RFC says) and are left CE by either marker; a
//!   Classic CE packet cannot occur (CE goes to the L queue).

use super::{Limits, Queued};
use rand::{Rng, RngExt};
use std::collections::VecDeque;
use wisp_core::{Duration, Instant};

/// A positive, finite coefficient of a queue spec (a gain in Hz, a coupling factor): an `f64`
/// that is never NaN, so specs compare with `Eq`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Gain(f64);

impl Eq for Gain {}

impl Gain {
    /// `x`, if it is finite and positive.
    pub fn new(x: f64) -> Option<Gain> {
        (x.is_finite() && x > 0.0).then_some(Gain(x))
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

/// DualPI2's parameters (RFC 9332 Appendix A defaults, see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DualPi2Params {
    /// PI2's queueing-delay target for the Classic queue.
    pub target: Duration,
    /// PI2's update interval, Tupdate.
    pub t_update: Duration,
    /// PI2's integral gain, Hz.
    pub alpha: Gain,
    /// PI2's proportional gain, Hz.
    pub beta: Gain,
    /// The coupling factor: p_CL = k·p'.
    pub k: Gain,
    /// The L queue's ramp starts at this sojourn time (minTh).
    pub min_th: Duration,
    /// The ramp's width (0: a step at `min_th`).
    pub range: Duration,
    /// The time-shifted FIFO scheduler's shift in favour of the L queue.
    pub t_shift: Duration,
    /// Tail-drop limits of the shared buffer (both queues together).
    pub limits: Limits,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        let target = Duration::from_millis(15);
        let rtt_max = RTT_MAX;
        // Appendix A, Figure 2: Tupdate = min(target, RTT_max/3) = 15 ms;
        // alpha = 0.1·Tupdate/RTT_max² = 0.15 Hz; beta = 0.3/RTT_max = 3 Hz (as decimals: the
        // products print as 0.14999…; a test checks them against the formulas).
        DualPi2Params {
            target,
            t_update: target.min(rtt_max / 3),
            alpha: Gain(0.15),
            beta: Gain(3.0),
            k: Gain(2.0),
            min_th: Duration::from_micros(800),
            range: Duration::from_micros(400),
            t_shift: Duration::from_millis(50),
            limits: Limits::default(),
        }
    }
}

/// RTT_max, the worst-case RTT the defaults are derived for (Appendix A: 100 ms).
pub const RTT_MAX: Duration = Duration::from_millis(100);

/// Th_len: the L queue's native AQM marks only while it holds more packets than this.
pub const TH_LEN: usize = 1;

/// What a DualPI2 queue has done, for tests and logs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DualPi2Counts {
    /// Packets the L queue and the C queue sent.
    pub l_sent: u64,
    pub c_sent: u64,
    /// Of those, the ones they marked CE.
    pub l_marked: u64,
    pub c_marked: u64,
    /// Classic packets the AQM dropped (at dequeue), and arrivals the limits dropped.
    pub c_dropped: u64,
    pub tail_dropped: u64,
}

/// A FIFO of packets and its bytes: each of DualPI2's two queues, and the one of every other
/// discipline ([`Queue`](super::Queue)).
#[derive(Clone, Debug, Default)]
pub(super) struct Fifo {
    pub(super) items: VecDeque<Queued>,
    pub(super) bytes: u64,
}

impl Fifo {
    pub(super) fn push(&mut self, p: Queued) {
        self.bytes += u64::from(p.size);
        self.items.push_back(p);
    }

    pub(super) fn pop(&mut self) -> Option<Queued> {
        let p = self.items.pop_front()?;
        self.bytes -= u64::from(p.size);
        Some(p)
    }

    /// The head packet's sojourn time at `now` (0 when empty).
    fn delay(&self, now: Instant) -> Duration {
        self.items.front().map_or(Duration::ZERO, |h| {
            now.saturating_duration_since(h.enqueued)
        })
    }
}

/// A DualPI2 queue: its L and Classic queues and the PI2 controller's state.
#[derive(Clone, Debug)]
pub struct DualPi2 {
    params: DualPi2Params,
    l: Fifo,
    c: Fifo,
    /// p', the base probability.
    base: f64,
    /// The Classic queueing delay at the previous update.
    prev_q: Duration,
    next_update: Instant,
    /// `recur`'s accumulator for the L queue's marks.
    l_count: f64,
    counts: DualPi2Counts,
}

impl DualPi2 {
    pub fn new(params: DualPi2Params) -> Self {
        DualPi2 {
            params,
            l: Fifo::default(),
            c: Fifo::default(),
            base: 0.0,
            prev_q: Duration::ZERO,
            next_update: Instant::ZERO + params.t_update,
            l_count: 0.0,
            counts: DualPi2Counts::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.l.items.len() + self.c.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bytes(&self) -> u64 {
        self.l.bytes + self.c.bytes
    }

    /// Packets waiting in the L queue and in the Classic queue.
    pub fn lengths(&self) -> (usize, usize) {
        (self.l.items.len(), self.c.items.len())
    }

    /// p', the base probability PI2 controls.
    pub fn base_prob(&self) -> f64 {
        self.base
    }

    /// The coupled L marking probability p_CL = k·p' (at most 1).
    pub fn coupled_prob(&self) -> f64 {
        (self.params.k.get() * self.base).min(1.0)
    }

    /// The Classic drop/mark probability p_C = p'².
    pub fn classic_prob(&self) -> f64 {
        self.base * self.base
    }

    pub fn counts(&self) -> DualPi2Counts {
        self.counts
    }

    /// Classifies and queues an arrival, or drops it (its id to `dropped`) if the shared
    /// buffer's limits would be exceeded.
    pub fn enqueue(&mut self, now: Instant, p: Queued, dropped: &mut Vec<u32>) {
        self.update(now);
        let packets = self.len() as u64 + 1;
        if (self.params.limits).exceeded(packets, self.bytes() + u64::from(p.size)) {
            self.counts.tail_dropped += 1;
            dropped.push(p.id);
            return;
        }
        if p.ecn.is_l4s() {
            self.l.push(p);
        } else {
            self.c.push(p);
        }
    }

    /// The next packet to send at `now`, marked or not; Classic packets dropped on the way
    /// go to `dropped`.
    pub fn dequeue(
        &mut self,
        now: Instant,
        rng: &mut impl Rng,
        dropped: &mut Vec<u32>,
    ) -> Option<Queued> {
        self.update(now);
        loop {
            if self.serve_l(now) {
                return Some(self.dequeue_l(now));
            }
            let mut p = self.c.pop()?;
            let p_c = self.classic_prob();
            if p_c > 0.0 && rng.random::<f64>() < p_c {
                if !p.ecn.is_ect() && !p.ecn.is_ce() {
                    self.counts.c_dropped += 1;
                    dropped.push(p.id);
                    continue;
                }
                p.ecn = p.ecn.marked();
                self.counts.c_marked += 1;
            }
            self.counts.c_sent += 1;
            return Some(p);
        }
    }

    /// The time-shifted FIFO's choice: the L queue, unless it is empty or the Classic head has
    /// waited more than `tshift` longer.
    fn serve_l(&self, now: Instant) -> bool {
        !self.l.items.is_empty()
            && (self.c.items.is_empty()
                || self.l.delay(now) + self.params.t_shift >= self.c.delay(now))
    }

    fn dequeue_l(&mut self, now: Instant) -> Queued {
        let held = self.l.items.len();
        let mut p = self.l.pop().expect("a packet in the L queue");
        let native = if held > TH_LEN {
            self.ramp(now.saturating_duration_since(p.enqueued))
        } else {
            0.0
        };
        let p_l = native.max(self.coupled_prob());
        if self.recur(p_l) {
            p.ecn = p.ecn.marked();
            self.counts.l_marked += 1;
        }
        self.counts.l_sent += 1;
        p
    }

    /// The L queue's native AQM on a sojourn time: the ramp from minTh over `range`.
    pub fn ramp(&self, sojourn: Duration) -> f64 {
        let (min, range) = (self.params.min_th, self.params.range);
        if sojourn < min {
            0.0
        } else if sojourn >= min + range {
            1.0
        } else {
            (sojourn - min).as_secs_f64() / range.as_secs_f64()
        }
    }

    /// RFC 9332's `recur`: true with likelihood `p` over successive calls, deterministically
    /// (the count reaching 1 marks, so that p = 1 marks every packet from the first).
    fn recur(&mut self, p: f64) -> bool {
        self.l_count += p;
        if self.l_count >= 1.0 {
            self.l_count -= 1.0;
            true
        } else {
            false
        }
    }

    /// PI2's update (Appendix A, `dualpi2_update`), once for every Tupdate elapsed.
    fn update(&mut self, now: Instant) {
        let pr = self.params;
        let mut rounds = 0;
        while now >= self.next_update {
            let q = self.c.delay(now);
            let integral = pr.alpha.get() * (q.as_secs_f64() - pr.target.as_secs_f64());
            let proportional = pr.beta.get() * (q.as_secs_f64() - self.prev_q.as_secs_f64());
            self.base = (self.base + integral + proportional).clamp(0.0, 1.0);
            self.prev_q = q;
            self.next_update += pr.t_update;
            rounds += 1;
            if rounds > 64 && self.is_empty() {
                // Idle for long: p' has decayed to 0 and stays there; skip ahead.
                let periods = (now - self.next_update).as_nanos() / pr.t_update.as_nanos() + 1;
                self.next_update += pr.t_update * periods;
                self.base = 0.0;
            }
        }
    }

    /// Sets p' and the previous queueing delay (tests hold the controller at a fixed point).
    #[cfg(test)]
    fn hold(&mut self, base: f64, prev_q: Duration) {
        self.base = base;
        self.prev_q = prev_q;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use wisp_core::packet::Ecn;

    fn pkt(id: u32, at: Instant, ecn: Ecn) -> Queued {
        Queued {
            id,
            size: 1500,
            enqueued: at,
            ecn,
        }
    }

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    #[test]
    fn the_defaults_are_appendix_a_figure_2s() {
        let d = DualPi2Params::default();
        assert_eq!(d.target, Duration::from_millis(15));
        assert_eq!(d.t_update, Duration::from_millis(15));
        let (t, r) = (d.t_update.as_secs_f64(), RTT_MAX.as_secs_f64());
        assert_eq!(d.t_update, d.target.min(RTT_MAX / 3));
        assert!(
            (d.alpha.get() - 0.1 * t / (r * r)).abs() < 1e-12,
            "{:?}",
            d.alpha
        );
        assert!((d.beta.get() - 0.3 / r).abs() < 1e-12, "{:?}", d.beta);
        assert_eq!((d.alpha.get(), d.beta.get()), (0.15, 3.0));
        assert_eq!(d.k.get(), 2.0);
        assert_eq!(d.min_th + d.range, Duration::from_micros(1200));
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_the_rest_to_the_classic_one() {
        let mut q = DualPi2::new(DualPi2Params::default());
        let mut dropped = vec![];
        for (i, e) in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce]
            .into_iter()
            .enumerate()
        {
            q.enqueue(ms(0), pkt(i as u32, ms(0), e), &mut dropped);
        }
        assert_eq!(q.lengths(), (2, 2));
        // The L queue first (priority), then the Classic one, each in FIFO order.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let order: Vec<u32> =
            std::iter::from_fn(|| q.dequeue(ms(0), &mut rng, &mut dropped).map(|p| p.id)).collect();
        assert_eq!(order, [2, 3, 0, 1]);
        assert!(dropped.is_empty());
    }

    /// With p' held at 0.2 (the Classic queue held exactly at the 15-ms target, so PI2 leaves it
    /// there), k = 2: the L queue marks p_CL = 0.4 of its packets (exactly, by `recur`; their
    /// sojourn is 0, under the ramp) and the Classic queue p'² = 0.04 of its ECT(0) packets
    /// (drawn: 800 expected of 20 000, standard deviation 28; bound ±120).
    #[test]
    fn coupling_marks_l_at_k_p_and_classic_at_p_squared_in_steady_state() {
        let run = |seed: u64| {
            let mut q = DualPi2::new(DualPi2Params::default());
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let mut dropped = vec![];
            let mut marks = vec![];
            for t in 0..15 {
                q.enqueue(ms(t), pkt(0, ms(t), Ecn::Ect0), &mut dropped);
            }
            q.hold(0.2, Duration::from_millis(15));
            for t in 15..20_015 {
                q.enqueue(ms(t), pkt(1, ms(t), Ecn::Ect1), &mut dropped);
                let l = q.dequeue(ms(t), &mut rng, &mut dropped).unwrap();
                let c = q.dequeue(ms(t), &mut rng, &mut dropped).unwrap();
                assert_eq!((l.id, now_sojourn(c, t)), (1, 15));
                marks.push((l.ecn, c.ecn));
                q.enqueue(ms(t), pkt(0, ms(t), Ecn::Ect0), &mut dropped);
            }
            assert!(dropped.is_empty());
            assert!(
                (q.base_prob() - 0.2).abs() < 1e-12,
                "p' moved: {}",
                q.base_prob()
            );
            assert!((q.coupled_prob() - 0.4).abs() < 1e-12);
            assert!((q.classic_prob() - 0.04).abs() < 1e-12);
            (q.counts(), marks)
        };
        let (c, marks) = run(7);
        assert_eq!((c.l_sent, c.c_sent), (20_000, 20_000));
        assert!(c.l_marked.abs_diff(8000) <= 1, "L marks {}", c.l_marked);
        assert!(
            c.c_marked.abs_diff(800) <= 120,
            "Classic marks {}",
            c.c_marked
        );
        // Deterministic for a seed; another seed draws other Classic marks (the L marks are
        // the same: `recur` draws nothing).
        let (c2, marks2) = run(7);
        assert_eq!((c2, &marks2), (c, &marks));
        let (c3, marks3) = run(8);
        assert_eq!(c3.l_marked, c.l_marked);
        assert_ne!(marks3, marks);
    }

    fn now_sojourn(p: Queued, t: u64) -> u64 {
        (ms(t) - p.enqueued).as_millis_f64() as u64
    }

    /// Not-ECT Classic packets are dropped where ECT(0) ones would be marked: with p' = 1,
    /// p_C = 1, every one.
    #[test]
    fn classic_not_ect_is_dropped_not_marked() {
        let mut q = DualPi2::new(DualPi2Params::default());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut dropped = vec![];
        q.enqueue(ms(0), pkt(0, ms(0), Ecn::NotEct), &mut dropped);
        q.enqueue(ms(0), pkt(1, ms(0), Ecn::Ect0), &mut dropped);
        q.hold(1.0, Duration::ZERO);
        let p = q.dequeue(ms(0), &mut rng, &mut dropped).unwrap();
        assert_eq!((p.id, p.ecn), (1, Ecn::Ce));
        assert_eq!(dropped, [0]);
    }

    /// The native ramp with p' = 0: 0 below 0.8 ms, (s − 0.8)/0.4 within, 1 from 1.2 ms; and
    /// nothing while the L queue holds a single packet.
    #[test]
    fn the_l_ramp_marks_from_min_th_and_not_a_lone_packet() {
        let q = DualPi2::new(DualPi2Params::default());
        let us = Duration::from_micros;
        assert_eq!(q.ramp(us(799)), 0.0);
        assert_eq!(q.ramp(us(800)), 0.0);
        assert!((q.ramp(us(1000)) - 0.5).abs() < 1e-12);
        assert_eq!(q.ramp(us(1200)), 1.0);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut dropped = vec![];
        // Two packets 2 ms old: the first (queue of 2) marked, the second (alone) not.
        let mut q = DualPi2::new(DualPi2Params::default());
        q.enqueue(ms(0), pkt(0, ms(0), Ecn::Ect1), &mut dropped);
        q.enqueue(ms(0), pkt(1, ms(0), Ecn::Ect1), &mut dropped);
        let a = q.dequeue(ms(2), &mut rng, &mut dropped).unwrap();
        let b = q.dequeue(ms(2), &mut rng, &mut dropped).unwrap();
        assert_eq!((a.ecn, b.ecn), (Ecn::Ce, Ecn::Ect1));
    }

    /// PI2 under a Classic (Not-ECT) overload — two arrivals per ms, one departure — raises p'
    /// and drops, holding the queue near the 15-ms target (15 packets here), not at thousands.
    #[test]
    fn pi2_controls_a_classic_overload() {
        let mut q = DualPi2::new(DualPi2Params::default());
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut dropped = vec![];
        let mut id = 0;
        let mut lengths = vec![];
        for t in 0..20_000 {
            for _ in 0..2 {
                q.enqueue(ms(t), pkt(id, ms(t), Ecn::NotEct), &mut dropped);
                id += 1;
            }
            q.dequeue(ms(t), &mut rng, &mut dropped);
            if t >= 10_000 {
                lengths.push(q.len());
            }
        }
        lengths.sort_unstable();
        let median = lengths[lengths.len() / 2];
        assert!((5..=40).contains(&median), "median queue {median}");
        assert!(q.base_prob() > 0.3, "p' {}", q.base_prob());
        assert!(dropped.len() > 9000, "dropped {}", dropped.len());
    }
}
