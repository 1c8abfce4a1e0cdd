//! One direction of the emulated link: random loss at the entrance, the one-way propagation
//! delay, the bottleneck queue(s) and the link's server — the simulator's own [`LossModel`],
//! [`Queue`] and [`Server`], composed exactly as `wisp_sim::sim` composes them, but driven by
//! the caller's clock instead of an event heap.
//!
//! The caller hands each packet in at the instant it was read ([`Direction::on_arrival`]) and
//! calls [`Direction::advance`] at (or just after) [`Direction::next_event`]; every event is
//! processed at its *nominal* instant (a packet reaches the queue exactly `delay` after it
//! arrived; it departs at the instant of the opportunity that completes it), so being woken a
//! few microseconds late delays the write, never the model. Times are on the link's own axis
//! (zero = the trace's start).
//!
//! A direction can instead cross the emulated 802.11 medium ([`WifiHop`]): the simulator's
//! [`WifiLink`], shared by the two directions (the downlink is AP → measured station, the
//! uplink station → AP, contending on one channel with the spec's other stations). A packet is
//! pushed into the medium the instant it arrives (after the entrance loss), with its DSCP; the
//! direction sleeps until the medium's next event, advances it, and each delivered packet
//! leaves `delay` after the end of the PPDU that carried it (the propagation delay follows the
//! medium: the wired side is behind the AP). Packets the medium drops at the retry limit count
//! as `dropped_retry`; a full AP/station queue (the spec's `queue=`) as `dropped_queue`. The
//! direction's own queue spec and `--wmm` do not apply (the medium has its own WMM queues).

use super::wmm::{AccessCategory, PRIORITY_ORDER, WmmMap, priority_index};
use crate::mmlog::LogWriter;
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::io::Write;
use wisp_core::packet::Ecn;
use wisp_core::{Duration, Instant};
use wisp_sim::link::{LinkModel, Server};
use wisp_sim::loss::{LossModel, LossSpec};
use wisp_sim::queue::{Queue, QueueSpec, Queued};
use wisp_sim::wifi::link::{NodeId, WifiLink, WifiOutput};

/// The emulated 802.11 medium both directions share: the link and, per direction, the outputs
/// the medium decided that the direction has not taken yet.
#[derive(Debug)]
pub struct SharedWifi {
    link: WifiLink,
    ready: [VecDeque<WifiOutput>; 2],
    scratch: Vec<WifiOutput>,
}

impl SharedWifi {
    pub fn new(link: WifiLink) -> Self {
        SharedWifi {
            link,
            ready: Default::default(),
            scratch: vec![],
        }
    }

    pub fn link(&self) -> &WifiLink {
        &self.link
    }

    /// Runs the medium to `now` and sorts what it decided by direction (the tag's high bits).
    fn advance(&mut self, now: Instant) {
        self.link.advance(now, &mut self.scratch);
        for o in self.scratch.drain(..) {
            let way = (o.tag >> 32) as usize & 1;
            self.ready[way].push_back(o);
        }
    }
}

/// A direction's place on the shared medium: from which node to which, and which of the two
/// directions it is (0 or 1).
#[derive(Clone, Debug)]
pub struct WifiHop {
    pub shared: std::sync::Arc<std::sync::Mutex<SharedWifi>>,
    pub from: NodeId,
    pub to: NodeId,
    pub way: usize,
}

impl WifiHop {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedWifi> {
        // A panic while the lock was held cannot leave the medium half-updated in a way that
        // matters here (one thread drives it); take it anyway.
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The most packets a direction holds (delay line and queues); beyond it arrivals are dropped
/// (an "infinite" queue is bounded by memory).
pub const MAX_PACKETS: usize = 500_000;

/// Largest packet a slot holds (the TUN devices' MTU is 1500).
pub const SLOT_BYTES: usize = 2048;

/// Counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DirectionStats {
    pub arrived: u64,
    pub departed: u64,
    pub bytes_departed: u64,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub dropped_aqm: u64,
    pub dropped_memory: u64,
    /// Dropped by the Wi-Fi medium at the retry limit.
    pub dropped_retry: u64,
    /// ECT packets a marking queue set to CE (RFC 3168 §5) instead of dropping them.
    pub marked_ce: u64,
}

/// The ECN codepoint of the IP packet `p`: IPv4's TOS or IPv6's traffic class, two low bits
/// (RFC 3168 §5); Not-ECT for anything else.
pub fn ip_ecn(p: &[u8]) -> Ecn {
    match p.first().map(|b| b >> 4) {
        Some(4) if p.len() >= 20 => Ecn::from_bits(p[1]),
        Some(6) if p.len() >= 40 => Ecn::from_bits(p[1] >> 4),
        _ => Ecn::NotEct,
    }
}

/// Marks the IP packet `p` CE (RFC 3168 §5), IPv4's header checksum recomputed; returns
/// whether it changed (false if it was CE already or is not IPv4 or IPv6).
pub fn set_ce(p: &mut [u8]) -> bool {
    if ip_ecn(p) == Ecn::Ce {
        return false;
    }
    match p[0] >> 4 {
        4 => {
            let ihl = usize::from(p[0] & 0x0f) * 4;
            if ihl < 20 || ihl > p.len() {
                return false;
            }
            p[1] |= 0b11;
            p[10..12].fill(0);
            let sum = p[..ihl]
                .chunks(2)
                .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
                .sum::<u32>();
            let folded = (sum & 0xffff) + (sum >> 16);
            let folded = (folded & 0xffff) + (folded >> 16);
            p[10..12].copy_from_slice(&(!(folded as u16)).to_be_bytes());
            true
        }
        6 => {
            p[1] |= 0b0011_0000;
            true
        }
        _ => false,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    /// The server may start on the head of the queue at this instant.
    StartAt(Instant),
    /// Serving `slot`, which departs at `done`.
    Busy {
        slot: u32,
        done: Instant,
    },
    /// The link never serves again (a rate link that ends at 0).
    Never,
}

#[derive(Debug)]
struct Slot {
    buf: Box<[u8]>,
    len: usize,
    enqueued: Instant,
}

/// What configures a direction.
#[derive(Clone, Debug)]
pub struct DirectionSpec {
    pub link: LinkModel,
    pub delay: Duration,
    pub queue: QueueSpec,
    pub loss: LossSpec,
    /// Four strict-priority queues by DSCP instead of one.
    pub wmm: Option<WmmMap>,
    /// Cross the emulated 802.11 medium instead of `link`, `queue` and `wmm`.
    pub wifi: Option<WifiHop>,
}

/// One direction of the link.
#[derive(Debug)]
pub struct Direction<W: Write> {
    delay: Duration,
    loss: LossModel,
    loss_rng: ChaCha8Rng,
    aqm_rng: ChaCha8Rng,
    /// `(reaches the queue, slot)`, in order.
    line: VecDeque<(Instant, u32)>,
    /// One queue, or four in WMM priority order.
    queues: Vec<Queue>,
    wmm: Option<WmmMap>,
    server: Server,
    state: State,
    slots: Vec<Slot>,
    free: Vec<u32>,
    drops: Vec<u32>,
    stats: DirectionStats,
    log: Option<LogWriter<W>>,
    log_error: Option<std::io::Error>,
    wifi: Option<WifiHop>,
    /// Delivered by the medium: `(leaves, slot)`, in order.
    after: VecDeque<(Instant, u32)>,
}

impl<W: Write> Direction<W> {
    pub fn new(
        spec: &DirectionSpec,
        loss_rng: ChaCha8Rng,
        aqm_rng: ChaCha8Rng,
        log: Option<LogWriter<W>>,
    ) -> Self {
        let n = if spec.wmm.is_some() { 4 } else { 1 };
        Direction {
            delay: spec.delay,
            loss: LossModel::new(spec.loss),
            loss_rng,
            aqm_rng,
            line: VecDeque::new(),
            queues: (0..n).map(|_| Queue::new(spec.queue)).collect(),
            wmm: spec.wmm.clone(),
            server: spec.link.server(),
            state: State::Idle,
            slots: Vec::new(),
            free: Vec::new(),
            drops: Vec::new(),
            stats: DirectionStats::default(),
            log,
            log_error: None,
            wifi: spec.wifi.clone(),
            after: VecDeque::new(),
        }
    }

    pub fn stats(&self) -> DirectionStats {
        self.stats
    }

    /// Packets held (delay line, queues, in service).
    pub fn held(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// A packet arrived at `now` (it is copied into the direction's own buffers).
    pub fn on_arrival(&mut self, now: Instant, packet: &[u8]) {
        self.stats.arrived += 1;
        let len = packet.len().min(SLOT_BYTES);
        let slot = match self.free.pop() {
            Some(id) => id,
            None if self.slots.len() < MAX_PACKETS => {
                self.slots.push(Slot {
                    buf: vec![0u8; SLOT_BYTES].into_boxed_slice(),
                    len: 0,
                    enqueued: Instant::ZERO,
                });
                (self.slots.len() - 1) as u32
            }
            None => {
                self.stats.dropped_memory += 1;
                self.log_with(|l| {
                    l.arrival(now, len)?;
                    l.drop_packets(now, 1, len)
                });
                return;
            }
        };
        let s = &mut self.slots[slot as usize];
        s.buf[..len].copy_from_slice(&packet[..len]);
        s.len = len;
        if self.loss.lose(&mut self.loss_rng) {
            self.stats.dropped_loss += 1;
            self.log_with(|l| {
                l.arrival(now, len)?;
                l.drop_packets(now, 1, len)
            });
            self.free.push(slot);
            return;
        }
        if let Some(hop) = &self.wifi {
            let s = &mut self.slots[slot as usize];
            s.enqueued = now;
            let dscp = WmmMap::dscp(&s.buf[..len]).unwrap_or(0);
            let tag = ((hop.way as u64) << 32) | u64::from(slot);
            let ok = hop
                .lock()
                .link
                .push(now, hop.from, hop.to, dscp, tag, len as u32);
            self.log_with(|l| l.arrival(now, len));
            if !ok {
                self.stats.dropped_queue += 1;
                self.log_with(|l| l.drop_packets(now, 1, len));
                self.free.push(slot);
            }
            return;
        }
        self.line.push_back((now + self.delay, slot));
    }

    /// The next instant at which something happens, if anything is pending.
    pub fn next_event(&self) -> Option<Instant> {
        if let Some(hop) = &self.wifi {
            let mut w = hop.lock();
            let ready = w.ready[hop.way].front().map(|o| o.at + self.delay);
            return [w.link.next_event(), ready, self.after.front().map(|a| a.0)]
                .into_iter()
                .flatten()
                .min();
        }
        let line = self.line.front().map(|&(t, _)| t);
        let server = match self.state {
            State::StartAt(t) => Some(t),
            State::Busy { done, .. } if done != Instant::MAX => Some(done),
            _ => None,
        };
        line.into_iter().chain(server).min()
    }

    /// Processes every event up to `now` in order, handing each departing packet to `emit` with
    /// its nominal departure instant.
    pub fn advance(&mut self, now: Instant, emit: &mut impl FnMut(&[u8], Instant)) {
        if self.wifi.is_some() {
            self.advance_wifi(now, emit);
            return;
        }
        loop {
            let line = self.line.front().map(|&(t, _)| t);
            let server = match self.state {
                State::StartAt(t) => Some(t),
                State::Busy { done, .. } if done != Instant::MAX => Some(done),
                _ => None,
            };
            // On a tie the server goes first; the outcome is the same either way (a packet
            // reaching an idle server at an opportunity's instant may use it).
            match (server, line) {
                (Some(s), l) if s <= now && l.is_none_or(|l| s <= l) => match self.state {
                    State::StartAt(t) => self.start(t),
                    State::Busy { slot, done } => self.complete(slot, done, emit),
                    _ => unreachable!("a server event implies StartAt or Busy"),
                },
                (_, Some(l)) if l <= now => {
                    let (t, slot) = self.line.pop_front().expect("peeked");
                    self.enqueue(t, slot);
                }
                _ => break,
            }
        }
        if let Some(l) = &mut self.log {
            if let Err(e) = l.opportunities_until(now) {
                self.log_error.get_or_insert(e);
            }
        }
    }

    /// [`Direction::advance`] across the medium.
    fn advance_wifi(&mut self, now: Instant, emit: &mut impl FnMut(&[u8], Instant)) {
        let Some(hop) = self.wifi.clone() else { return };
        {
            let mut w = hop.lock();
            w.advance(now);
            while let Some(o) = w.ready[hop.way].pop_front() {
                let slot = (o.tag & 0xffff_ffff) as u32;
                if o.delivered {
                    self.after.push_back((o.at + self.delay, slot));
                } else {
                    self.stats.dropped_retry += 1;
                    let len = self.slots[slot as usize].len;
                    if let Some(l) = &mut self.log {
                        if let Err(e) = l.drop_packets(o.at, 1, len) {
                            self.log_error.get_or_insert(e);
                        }
                    }
                    self.free.push(slot);
                }
            }
        }
        while let Some(&(t, slot)) = self.after.front() {
            if t > now {
                break;
            }
            self.after.pop_front();
            self.complete(slot, t, emit);
        }
    }

    fn class(&self, slot: u32) -> usize {
        match &self.wmm {
            None => 0,
            Some(m) => {
                let s = &self.slots[slot as usize];
                priority_index(m.classify(&s.buf[..s.len]))
            }
        }
    }

    /// The packet in `slot` reaches the queue at `t` (sim: `arrive`).
    fn enqueue(&mut self, t: Instant, slot: u32) {
        let len = self.slots[slot as usize].len;
        self.slots[slot as usize].enqueued = t;
        self.log_with(|l| l.arrival(t, len));
        let class = self.class(slot);
        let mut drops = std::mem::take(&mut self.drops);
        self.queues[class].enqueue(
            t,
            Queued {
                id: slot,
                size: len as u32,
                enqueued: t,
                // The IP header's ECN bits: a marking queue marks ECT packets (rewritten to CE
                // as they leave the queue) and drops Not-ECT ones.
                ecn: ip_ecn(&self.slots[slot as usize].buf[..len]),
            },
            &mut self.aqm_rng,
            &mut drops,
        );
        self.stats.dropped_queue += drops.len() as u64;
        self.release(t, &mut drops);
        self.drops = drops;
        if self.state == State::Idle {
            self.state = match self.server.next_start(t) {
                Some(s) => State::StartAt(s),
                None => State::Never,
            };
        }
    }

    /// The server may start at `t` (sim: `start`): the head of the highest-priority queue.
    fn start(&mut self, t: Instant) {
        let mut drops = std::mem::take(&mut self.drops);
        let mut head = None;
        for q in &mut self.queues {
            if !q.is_empty() {
                head = q.dequeue(t, &mut self.aqm_rng, &mut drops);
                if head.is_some() {
                    break;
                }
            }
        }
        self.stats.dropped_aqm += drops.len() as u64;
        self.release(t, &mut drops);
        self.drops = drops;
        if let Some(q) = &head {
            let s = &mut self.slots[q.id as usize];
            if q.ecn.is_ce() && set_ce(&mut s.buf[..s.len]) {
                self.stats.marked_ce += 1;
            }
        }
        self.state = match head {
            None => State::Idle,
            Some(q) => State::Busy {
                slot: q.id,
                done: self.server.serve(t, u64::from(q.size)),
            },
        };
    }

    /// `slot` departs at `done` (sim: `complete`).
    fn complete(&mut self, slot: u32, done: Instant, emit: &mut impl FnMut(&[u8], Instant)) {
        let s = &self.slots[slot as usize];
        let (len, enqueued) = (s.len, s.enqueued);
        emit(&s.buf[..len], done);
        self.stats.departed += 1;
        self.stats.bytes_departed += len as u64;
        self.log_with(|l| l.departure(done, len, done - enqueued));
        self.free.push(slot);
        self.state = if self.queues.iter().all(Queue::is_empty) {
            State::Idle
        } else {
            match self.server.next_start(done) {
                Some(s) => State::StartAt(s),
                None => State::Never,
            }
        };
    }

    fn release(&mut self, t: Instant, drops: &mut Vec<u32>) {
        for id in drops.drain(..) {
            let len = self.slots[id as usize].len;
            if let Some(l) = &mut self.log {
                if let Err(e) = l.drop_packets(t, 1, len) {
                    self.log_error.get_or_insert(e);
                }
            }
            self.free.push(id);
        }
    }

    fn log_with(&mut self, f: impl FnOnce(&mut LogWriter<W>) -> std::io::Result<()>) {
        if let Some(l) = &mut self.log {
            if let Err(e) = f(l) {
                self.log_error.get_or_insert(e);
            }
        }
    }

    /// Ends the log at `end` (writes the remaining opportunities) and reports the first write
    /// error, if any.
    pub fn finish_log(&mut self, end: Instant) -> std::io::Result<()> {
        if let Some(e) = self.log_error.take() {
            return Err(e);
        }
        match &mut self.log {
            Some(l) => l.finish(end),
            None => Ok(()),
        }
    }

    /// Packets waiting per access category (WMM) or in the one queue.
    pub fn queue_lengths(&self) -> Vec<(Option<AccessCategory>, usize)> {
        match self.wmm {
            None => vec![(None, self.queues[0].len())],
            Some(_) => PRIORITY_ORDER
                .iter()
                .zip(&self.queues)
                .map(|(&c, q)| (Some(c), q.len()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::sync::Arc;
    use wisp_sim::sim::Scenario;
    use wisp_sim::trace::{Trace, TraceUnit};

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(1)
    }

    fn trace(s: &str) -> LinkModel {
        LinkModel::from_trace(Arc::new(Trace::parse(s, "t", TraceUnit::Millis).unwrap()))
    }

    fn spec(link: LinkModel, delay_ms: u64) -> DirectionSpec {
        DirectionSpec {
            link,
            delay: Duration::from_millis(delay_ms),
            queue: QueueSpec::Infinite,
            loss: LossSpec::None,
            wmm: None,
            wifi: None,
        }
    }

    /// Feeds packets `(arrival, len, first byte)`; returns `(departure, first byte)`.
    fn run(
        d: &mut Direction<Vec<u8>>,
        packets: &[(Instant, usize, u8)],
        end: Instant,
    ) -> Vec<(Instant, u8)> {
        let mut out = vec![];
        for &(t, len, tag) in packets {
            d.advance(t, &mut |b, at| out.push((at, b[0])));
            let mut buf = vec![0u8; len];
            buf[0] = tag;
            d.on_arrival(t, &buf);
        }
        while let Some(t) = d.next_event().filter(|&t| t <= end) {
            d.advance(t, &mut |b, at| out.push((at, b[0])));
        }
        out
    }

    /// An IPv4 header (20 bytes, TOS `tos`) with its checksum, then `body` bytes of zeros.
    fn ipv4(tos: u8, body: usize) -> Vec<u8> {
        let mut p = vec![
            0x45, tos, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        p[2..4].copy_from_slice(&((20 + body) as u16).to_be_bytes());
        let sum: u32 = p
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        let sum = (sum & 0xffff) + (sum >> 16);
        p[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        p.resize(20 + body, 0);
        p
    }

    /// An IPv4 header's checksum holds when its 16-bit words sum to 0xffff (RFC 1071).
    fn checksum_holds(p: &[u8]) -> bool {
        let sum: u32 = p[..20]
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        let sum = (sum & 0xffff) + (sum >> 16);
        (sum + (sum >> 16)) & 0xffff == 0xffff
    }

    /// The codepoint is read from IPv4's TOS and IPv6's traffic class; CE is set with the
    /// DSCP kept and IPv4's checksum still valid (its value as a fresh header with TOS 0xbb
    /// has); a CE packet or a non-IP one is left alone.
    #[test]
    fn ecn_is_read_and_marked_in_ip_headers() {
        let mut p = ipv4(0xb8 | 0b01, 8); // DSCP 46 (EF), ECT(1)
        assert_eq!(ip_ecn(&p), Ecn::Ect1);
        assert!(checksum_holds(&p));
        assert!(set_ce(&mut p));
        assert_eq!(p[1], 0xbb);
        assert_eq!(ip_ecn(&p), Ecn::Ce);
        assert!(checksum_holds(&p));
        assert_eq!(p, ipv4(0xbb, 8));
        assert!(!set_ce(&mut p));
        // IPv6: traffic class 0x02 (ECT(0)) across the first two bytes.
        let mut v6 = vec![0u8; 48];
        v6[0] = 0x60;
        v6[1] = 0x20;
        assert_eq!(ip_ecn(&v6), Ecn::Ect0);
        assert!(set_ce(&mut v6));
        assert_eq!((v6[0], v6[1]), (0x60, 0x30));
        assert_eq!(ip_ecn(&[0u8; 40]), Ecn::NotEct);
        assert!(!set_ce(&mut [0u8; 40]));
    }

    /// Through a step marker (1 ms) on 1 Mbit/s: a burst of ECT(1) packets leaves CE once it
    /// has waited 1 ms or more, Not-ECT packets are never rewritten, and the direction counts
    /// the marks.
    #[test]
    fn a_marking_queue_sets_ce_on_ect_packets_on_the_wire() {
        for (tos, marks) in [(0b01u8, true), (0b00, false)] {
            let mut s = spec(
                "const:1mbps"
                    .parse::<wisp_sim::link::LinkSpec>()
                    .unwrap()
                    .load()
                    .unwrap(),
                0,
            );
            s.queue = "step:threshold=1ms".parse().unwrap();
            let mut d = Direction::<Vec<u8>>::new(&s, rng(), rng(), None);
            let mut out = vec![];
            for _ in 0..10 {
                d.on_arrival(Instant::ZERO, &ipv4(tos, 980));
            }
            while let Some(t) = d.next_event().filter(|&t| t <= Instant::from_secs(1)) {
                d.advance(t, &mut |b, _| out.push(b.to_vec()));
            }
            assert_eq!(out.len(), 10);
            assert!(out.iter().all(|p| checksum_holds(p)));
            let ce = out.iter().filter(|p| ip_ecn(p) == Ecn::Ce).count();
            // 1000 bytes take 8 ms at 1 Mbit/s: every packet after the first waited ≥ 8 ms.
            assert_eq!(ce, if marks { 9 } else { 0 }, "tos {tos:#04x}");
            assert_eq!(d.stats().marked_ce, ce as u64);
        }
    }

    #[test]
    fn delay_then_trace_opportunities_with_byte_accounting() {
        let mut d = Direction::<Vec<u8>>::new(&spec(trace("1\n2\n2\n4\n"), 10), rng(), rng(), None);
        let t = |us: u64| Instant::from_micros(us);
        // Reach the queue at 10.5, 10.6, 10.7 ms; opportunities (period 4) at 9, 10, 10, 12, 13,
        // 14, 14, 16 … The first waits for 12; the 2000 bytes start at 13 and finish with part
        // of the two at 14, whose rest carries the 500 bytes.
        let out = run(
            &mut d,
            &[(t(500), 1500, 1), (t(600), 2000, 2), (t(700), 500, 3)],
            Instant::from_millis(100),
        );
        assert_eq!(
            out,
            vec![
                (Instant::from_millis(12), 1),
                (Instant::from_millis(14), 2),
                (Instant::from_millis(14), 3)
            ]
        );
        assert_eq!(d.held(), 0);
    }

    #[test]
    fn matches_the_simulator_packet_for_packet() {
        // The simulator's cbr flow over a real trace, above capacity so that the queue builds,
        // replayed through a Direction: every departure at the same nanosecond.
        let link = "trace:../../traces/cellular/Verizon-LTE-short.down"
            .parse::<wisp_sim::link::LinkSpec>()
            .unwrap()
            .load()
            .unwrap();
        let mut sc = Scenario::new(link.clone(), "cbr:rate-kbps=7000".parse().unwrap());
        sc.run.duration = Duration::from_secs(8);
        let log = wisp_sim::sim::simulate(&sc, None).unwrap();
        let mut d = Direction::<Vec<u8>>::new(&spec(link, 20), rng(), rng(), None);
        let mut got = vec![];
        for p in &log.packets {
            let t = p.sent();
            d.advance(t, &mut |_, at| got.push(at));
            d.on_arrival(t, &vec![0u8; p.header.size.bytes() as usize]);
        }
        while let Some(t) = d.next_event().filter(|&t| t < sc.run.end()) {
            d.advance(t, &mut |_, at| got.push(at));
        }
        let want: Vec<Instant> = log.packets.iter().filter_map(|p| p.delivered).collect();
        assert!(want.len() > 1000);
        assert_eq!(got, want);
    }

    #[test]
    fn droptail_and_loss_drop_and_log() {
        let mut s = spec(trace("10\n"), 0);
        s.queue = "droptail:packets=2".parse().unwrap();
        let mut d = Direction::new(
            &s,
            rng(),
            rng(),
            Some(LogWriter::new(Vec::new(), &s.link, &[]).unwrap()),
        );
        let t0 = Instant::from_micros(100);
        // The server starts at the opportunity at 10 ms: until then all three wait in the
        // queue, which holds two.
        let out = run(
            &mut d,
            &[(t0, 100, 1), (t0, 100, 2), (t0, 100, 3)],
            Instant::from_millis(25),
        );
        assert_eq!(out.iter().map(|p| p.1).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(d.stats().dropped_queue, 1);
        d.finish_log(Instant::from_millis(25)).unwrap();
        let text = String::from_utf8(d.log.take().unwrap().into_inner()).unwrap();
        assert!(text.contains("0 d 1 100\n"), "{text}");
        // Two 100-byte packets share the 1500 bytes of the opportunity at 10 ms.
        assert!(
            text.ends_with("0 d 1 100\n10 # 1500\n10 - 100 9.900\n10 - 100 9.900\n20 # 1500\n"),
            "{text}"
        );
        let mut lossy = spec(trace("1\n"), 0);
        lossy.loss = "0.5".parse().unwrap();
        let mut d = Direction::<Vec<u8>>::new(&lossy, rng(), rng(), None);
        let pk: Vec<_> = (0..1000)
            .map(|i| (Instant::from_millis(i), 100, 0))
            .collect();
        let out = run(&mut d, &pk, Instant::from_secs(2));
        assert!((400..600).contains(&out.len()), "{}", out.len());
        assert_eq!(out.len() as u64 + d.stats().dropped_loss, 1000);
    }

    #[test]
    fn wmm_serves_voice_before_best_effort() {
        let mut s = spec(trace("10\n"), 0);
        s.wmm = Some(WmmMap::default());
        let mut d = Direction::<Vec<u8>>::new(&s, rng(), rng(), None);
        let t0 = Instant::from_micros(100);
        let mut feed = |t: Instant, tos: u8, tag: u8| {
            let mut buf = vec![0u8; 1500];
            buf[0] = 0x45;
            buf[1] = tos;
            buf[2] = tag;
            d.on_arrival(t, &buf);
        };
        // One 1500-byte packet per opportunity (every 10 ms). Three best-effort packets wait for
        // the opportunity at 10 ms; an EF (TOS 0xb8) packet that arrives after them leaves
        // first. Another EF packet arriving at 15 ms overtakes the three as well.
        feed(t0, 0, 1);
        feed(t0, 0, 2);
        feed(t0, 0, 3);
        feed(t0, 0xb8, 4);
        let mut out = vec![];
        let mut run_to = |d: &mut Direction<Vec<u8>>, end: Instant| {
            while let Some(t) = d.next_event().filter(|&t| t < end) {
                d.advance(t, &mut |b, _| out.push(b[2]));
            }
        };
        run_to(&mut d, Instant::from_millis(15));
        let mut buf = vec![0u8; 1500];
        buf[0] = 0x45;
        buf[1] = 0xb8;
        buf[2] = 5;
        d.on_arrival(Instant::from_millis(15), &buf);
        run_to(&mut d, Instant::from_millis(100));
        assert_eq!(out, [4, 5, 1, 2, 3]);
    }
}
