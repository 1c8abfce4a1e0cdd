//! A station's MAC — IEEE 802.11-2016 10.22.2 (EDCA), 10.3.2.11–12 (sequence numbers, retry
//! flag).
//!
//! A transmitter (a station or an AP): its PHY rate, one queue and one EDCAF per access
//! category, its 12-bit sequence counter, and when its idle-medium count may start. The
//! [`Medium`](super::medium::Medium) wires stations to the shared channel.
//!
//! Each AC's queue holds one FIFO per destination; the destinations take turns, one MSDU each
//! (as Linux mac80211's per-station TXQs are scheduled), so a backlog for one receiver does not
//! block another. The queue limit counts every destination's frames together.
//! [`StationConfig::fifo`] makes each AC's queue one FIFO over every destination instead (an
//! AP of the 2000s, a driver's single transmit queue): frames leave in arrival order, and an
//! A-MPDU carries only the run of frames to the head's destination at the head of the queue.
//!
//! Deviations:
//! - One sequence counter per transmitter (the standard keeps one per receiver and TID).
//! - The PHY rate of each attempt comes from the station's [`RateControl`] (fixed by
//!   default; scripted or Minstrel-like); its rate set is the configured rate's: the MCSs at
//!   its width and guard interval, or the PHY's non-HT rates.

use super::ampdu::AmpduConfig;
use super::edca::{AccessCategory, EdcaParams, Edcaf};
use super::fer::{Snr, bit_error_rate, data_success_from_ber, header_success_rate};
use super::phy::{Phy, PhyRate};
use super::rate_control::{RateControl, RateControlConfig};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use wisp_core::Instant;

/// How a station is set up.
#[derive(Clone, Debug)]
pub struct StationConfig {
    pub rate: PhyRate,
    /// EDCA parameters per access category (indexed by [`AccessCategory::index`]).
    pub edca: [EdcaParams; 4],
    /// Frames each AC queue holds (the head included); more are dropped.
    pub queue_limit: usize,
    /// Always backlogged: a new MSDU of this many bytes (to destination 0) joins this AC's
    /// queue whenever it is empty. [`Medium::backlog`](super::medium::Medium::backlog) does the same for any destination.
    pub saturated: Option<(AccessCategory, u32)>,
    /// The SNR its frames arrive with; `None`: the medium's constant frame error rate applies.
    pub snr: Option<Snr>,
    /// How it picks the rate of each attempt; `None`: always `rate`.
    pub rate_control: Option<RateControlConfig>,
    /// A-MPDU aggregation with block Ack for HT/VHT rates; `None`: one MPDU per exchange.
    pub ampdu: Option<AmpduConfig>,
    /// A QoS station (EDCA, 10.22.2.4: its counters also decrement at the slot boundary where
    /// another transmission starts); `false`: a non-QoS station (DCF, 10.3.4.3: the slot in
    /// which the medium turns busy is not counted).
    pub qos: bool,
    /// Each AC's queue is one FIFO over all destinations (`false`: a FIFO per destination,
    /// the destinations served in turn).
    pub fifo: bool,
    /// The MSDU lifetime: a frame that has waited longer than this since it was queued is
    /// dropped before its first attempt (802.11's dot11MaxTransmitMSDULifetime, ns-3's
    /// `WifiMacQueue::MaxDelay`); `None`: no lifetime.
    pub lifetime: Option<wisp_core::Duration>,
}

impl StationConfig {
    /// A QoS station with the default EDCA parameter set.
    pub fn edca(phy: &Phy, rate: PhyRate) -> Self {
        StationConfig {
            rate,
            edca: AccessCategory::ALL.map(|ac| EdcaParams::default_for(ac, phy)),
            queue_limit: 1000,
            saturated: None,
            snr: None,
            rate_control: None,
            ampdu: None,
            qos: true,
            fifo: false,
            lifetime: None,
        }
    }

    /// A non-QoS (DCF) station: every AC uses the DCF parameters; traffic goes to AC_BE.
    pub fn dcf(phy: &Phy, rate: PhyRate) -> Self {
        StationConfig {
            rate,
            edca: [EdcaParams::dcf(phy); 4],
            queue_limit: 1000,
            saturated: None,
            snr: None,
            rate_control: None,
            ampdu: None,
            qos: false,
            fifo: false,
            lifetime: None,
        }
    }
}

/// An MSDU waiting in a queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub bytes: u32,
    pub enqueued: Instant,
    /// When it reached the head of its queue.
    pub head_at: Instant,
    /// When its current attempt became eligible (head_at, or when the last attempt failed).
    pub eligible: Instant,
    /// Its sequence number, once it has been sent.
    pub seq: Option<u16>,
    /// Failed attempts inside A-MPDUs (each MPDU's own retry count).
    pub retries: u32,
    /// The caller's tag (`None`: background traffic the medium made itself).
    pub tag: Option<u64>,
    /// The receiver.
    pub dest: u32,
}

/// The size of the next frame that keeps `dest`'s queue of AC `ac` backlogged: a backlog's
/// (`backlogs`: destination, AC, bytes), else a saturated station's (`saturated`, destination 0
/// only); `None`: nothing keeps that queue backlogged.
fn refill_bytes(
    backlogs: &[(u32, usize, u32)],
    saturated: Option<(AccessCategory, u32)>,
    dest: u32,
    ac: usize,
) -> Option<u32> {
    backlogs
        .iter()
        .find(|b| b.0 == dest && b.1 == ac)
        .map(|b| b.2)
        .or_else(|| {
            saturated
                .filter(|s| dest == 0 && s.0.index() == ac)
                .map(|s| s.1)
        })
}

impl Frame {
    /// A frame of `bytes` to `dest` queued at `now`, not yet sent.
    fn new(bytes: u32, dest: u32, tag: Option<u64>, now: Instant) -> Self {
        Frame {
            bytes,
            enqueued: now,
            head_at: now,
            eligible: now,
            seq: None,
            retries: 0,
            tag,
            dest,
        }
    }
}

/// One AC's queue: a FIFO per destination, served in turn, one MSDU each; or (`fifo`) one
/// FIFO over all destinations, kept as runs of consecutive frames to one destination.
#[derive(Clone, Debug, Default)]
pub(crate) struct AcQueue {
    /// Destinations with frames, the one being served first (`fifo`: runs in arrival order,
    /// a destination may have several).
    flows: VecDeque<(u32, VecDeque<Frame>)>,
    len: usize,
    fifo: bool,
}

impl AcQueue {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn front(&self) -> Option<&Frame> {
        self.flows.front().and_then(|f| f.1.front())
    }

    fn front_mut(&mut self) -> Option<&mut Frame> {
        self.flows.front_mut().and_then(|f| f.1.front_mut())
    }

    fn new(fifo: bool) -> Self {
        AcQueue {
            fifo,
            ..AcQueue::default()
        }
    }

    fn push(&mut self, f: Frame) {
        self.len += 1;
        let run = if self.fifo {
            self.flows.back_mut().filter(|q| q.0 == f.dest)
        } else {
            self.flows.iter_mut().find(|q| q.0 == f.dest)
        };
        match run {
            Some(q) => q.1.push_back(f),
            None => self.flows.push_back((f.dest, VecDeque::from([f]))),
        }
    }

    /// After the head run was served: drops it if empty, else (per destination) the next
    /// destination takes its turn; a FIFO keeps its order.
    fn next_turn(&mut self) {
        if self.flows.front().is_some_and(|q| q.1.is_empty()) {
            self.flows.pop_front();
        } else if !self.fifo && self.flows.len() > 1 {
            self.flows.rotate_left(1);
        }
    }

    /// The frames of the destination being served, head first (what an A-MPDU may carry).
    pub fn head_flow(&self) -> impl Iterator<Item = &Frame> + '_ {
        self.flows.front().into_iter().flat_map(|f| f.1.iter())
    }

    /// The `k`-th frame of the destination being served.
    pub fn get(&self, k: usize) -> Option<&Frame> {
        self.flows.front()?.1.get(k)
    }

    fn get_mut(&mut self, k: usize) -> Option<&mut Frame> {
        self.flows.front_mut()?.1.get_mut(k)
    }

    /// After an A-MPDU to the destination being served: removes those of its first `n` frames
    /// that `keep` rejects (acknowledged or dropped) and returns them in order; `top_up(dest,
    /// left)` gives frames to append to that destination's FIFO (a backlog's). Then the next
    /// destination takes its turn; the kept frames stay at the head of their FIFO.
    fn settle_front(
        &mut self,
        n: usize,
        keep: &[bool],
        top_up: impl FnOnce(u32, usize) -> Vec<Frame>,
    ) {
        let Some(q) = self.flows.front_mut() else {
            return;
        };
        let mut removed = 0;
        for k in (0..n.min(q.1.len())).rev() {
            if !keep[k] {
                q.1.remove(k);
                removed += 1;
            }
        }
        self.len -= removed;
        let dest = q.0;
        if self.fifo {
            // A backlog's new frames join the tail of the one FIFO.
            let extra = top_up(dest, self.queued_for(dest));
            self.next_turn();
            for f in extra {
                self.push(f);
            }
            return;
        }
        let extra = top_up(dest, q.1.len());
        self.len += extra.len();
        q.1.extend(extra);
        self.next_turn();
    }

    /// Frames queued for `dest`.
    fn queued_for(&self, dest: u32) -> usize {
        self.flows
            .iter()
            .filter(|q| q.0 == dest)
            .map(|q| q.1.len())
            .sum()
    }

    /// Removes the head frame; `refill` (a backlogged destination's next MSDU) joins its
    /// destination's FIFO if that FIFO ran empty (`fifo`: the tail of the one FIFO, if no
    /// frame for that destination is left). The next destination takes its turn.
    fn pop(&mut self, refill: impl FnOnce(u32) -> Option<Frame>) -> Option<Frame> {
        let q = self.flows.front_mut()?;
        let f = q.1.pop_front()?;
        self.len -= 1;
        if self.fifo {
            self.next_turn();
            if self.queued_for(f.dest) == 0
                && let Some(n) = refill(f.dest)
            {
                self.push(n);
            }
            return Some(f);
        }
        if q.1.is_empty()
            && let Some(n) = refill(q.0)
        {
            q.1.push_back(n);
            self.len += 1;
        }
        self.next_turn();
        Some(f)
    }
}

/// What a station delivered and lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationStats {
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Transmission attempts (first tries and retries).
    pub attempts: u64,
    /// MSDUs dropped at the retry limit.
    pub retry_drops: u64,
    /// MSDUs dropped because the queue was full.
    pub queue_drops: u64,
    /// MSDUs dropped unsent, older than the MSDU lifetime ([`StationConfig::lifetime`]).
    pub expired: u64,
}

/// One transmitter on the channel.
#[derive(Debug)]
pub struct Station {
    pub config: StationConfig,
    pub(crate) queues: [AcQueue; 4],
    /// `(destination, AC, bytes)`: kept backlogged, one MSDU at a time.
    backlogs: Vec<(u32, usize, u32)>,
    pub(crate) edcaf: [Edcaf; 4],
    /// When the medium was last seen idle (before any AIFS): the end of the last busy period,
    /// plus the EIFS extension after an errored reception or the Ack timeout after a failed
    /// transmission.
    pub(crate) idle_from: Instant,
    next_seq: u16,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) stats: StationStats,
    pub(crate) rc: Box<RateControl>,
    /// Minstrel's sampling draws (a stream of their own, so a fixed-rate station's backoff
    /// draws do not depend on whether rate control is on).
    rc_rng: Box<ChaCha8Rng>,
    /// The rate of each AC's attempt in flight.
    pub(crate) cur_rate: [PhyRate; 4],
    /// The last link qualities computed, newest first: (rate, SNR bits, bit error rate,
    /// header success).
    ber_cache: [Option<(PhyRate, u64, f64, f64)>; 4],
}

impl Station {
    pub(crate) fn new(
        config: StationConfig,
        phy: &Phy,
        mut rng: ChaCha8Rng,
        rc_rng: ChaCha8Rng,
    ) -> Self {
        let edcaf = config.edca.map(|p| Edcaf::new(p, &mut rng));
        let rates = match config.rate.mcs() {
            Some(m) => phy.mcs_rates(m.width_mhz, m.short_gi),
            None => phy.data_rates(20, false),
        };
        let rc = RateControl::new(
            config
                .rate_control
                .clone()
                .unwrap_or(RateControlConfig::Fixed(config.rate)),
            phy,
            &rates,
        );
        let cur_rate = [config.rate; 4];
        let fifo = config.fifo;
        Station {
            rc: Box::new(rc),
            rc_rng: Box::new(rc_rng),
            cur_rate,
            ber_cache: [None; 4],
            config,
            queues: std::array::from_fn(|_| AcQueue::new(fifo)),
            backlogs: vec![],
            edcaf,
            idle_from: Instant::ZERO,
            next_seq: 0,
            rng,
            stats: StationStats::default(),
        }
    }

    pub fn stats(&self) -> StationStats {
        self.stats
    }

    /// The station's rate control (Minstrel's statistics, for instance).
    pub fn rate_control(&self) -> &RateControl {
        &self.rc
    }

    /// Picks the rate of `ac`'s next attempt at `now` (the head frame's attempt number is its
    /// EDCAF's failure count).
    pub(crate) fn choose_rate(&mut self, ac: usize, now: Instant) -> PhyRate {
        let attempt = self.edcaf[ac].failures();
        let r = self.rc.rate(now, attempt, &mut *self.rc_rng);
        self.cur_rate[ac] = r;
        r
    }

    /// Tells the rate control how `ac`'s attempt ended at `now`.
    pub(crate) fn report(&mut self, ac: usize, now: Instant, success: bool) {
        self.rc.report(now, self.cur_rate[ac], success);
    }

    /// The decoded bit error probability and the PHY header's success probability at `rate`
    /// and `now`, from the station's SNR (cached: both change only with the rate or the SNR).
    fn link_quality(&mut self, rate: PhyRate, now: Instant) -> Option<(f64, f64)> {
        let db = self.config.snr.as_ref()?.at(now);
        let bits = db.to_bits();
        if let Some(&(_, _, ber, header)) = self
            .ber_cache
            .iter()
            .flatten()
            .find(|c| c.0 == rate && c.1 == bits)
        {
            return Some((ber, header));
        }
        let q = if db.is_finite() {
            (bit_error_rate(rate, db), header_success_rate(rate, db))
        } else if db > 0.0 {
            (0.0, 1.0)
        } else {
            (0.5, 0.0)
        };
        self.ber_cache.rotate_right(1);
        self.ber_cache[0] = Some((rate, bits, q.0, q.1));
        Some(q)
    }

    /// The probability that an MPDU of `bytes` sent at `rate` at `now` is lost to noise, from
    /// the station's SNR; `None` without one.
    pub(crate) fn frame_error_rate(
        &mut self,
        rate: PhyRate,
        bytes: u32,
        now: Instant,
    ) -> Option<f64> {
        let (ber, header) = self.link_quality(rate, now)?;
        Some(1.0 - header * data_success_from_ber(ber, bytes))
    }

    /// For an A-MPDU at `rate` at `now`: the probability that its PHY header is lost, and the
    /// probability that one MPDU of `bytes` is lost given the header; `None` without an SNR.
    pub(crate) fn ampdu_error_rates(
        &mut self,
        rate: PhyRate,
        bytes: u32,
        now: Instant,
    ) -> Option<(f64, f64)> {
        let (ber, header) = self.link_quality(rate, now)?;
        Some((1.0 - header, 1.0 - data_success_from_ber(ber, bytes)))
    }

    /// Frames in `ac`'s queue.
    pub fn queued(&self, ac: AccessCategory) -> usize {
        self.queues[ac.index()].len()
    }

    /// When `ac`'s counter starts to run: `idle_from + AIFS[ac]`.
    pub(crate) fn ready(&self, ac: usize, phy: &Phy) -> Instant {
        self.idle_from + phy.aifs(self.config.edca[ac].aifsn)
    }

    /// Frames in `ac`'s queue for `dest`.
    pub fn queued_for(&self, ac: AccessCategory, dest: u32) -> usize {
        self.queues[ac.index()].queued_for(dest)
    }

    /// Queues an MSDU to destination 0 at `now`; `false` if the queue is full.
    pub(crate) fn enqueue(&mut self, ac: AccessCategory, bytes: u32, now: Instant) -> bool {
        self.enqueue_to(ac, 0, None, bytes, now)
    }

    /// Queues an MSDU for `dest` at `now` with the caller's `tag`; `false` if the queue is
    /// full.
    pub(crate) fn enqueue_to(
        &mut self,
        ac: AccessCategory,
        dest: u32,
        tag: Option<u64>,
        bytes: u32,
        now: Instant,
    ) -> bool {
        let q = &mut self.queues[ac.index()];
        if q.len() >= self.config.queue_limit {
            self.stats.queue_drops += 1;
            return false;
        }
        q.push(Frame::new(bytes, dest, tag, now));
        true
    }

    /// Keeps `ac`'s queue for `dest` backlogged with MSDUs of `bytes` from `now` on (background
    /// traffic, untagged).
    pub(crate) fn backlog(&mut self, dest: u32, ac: AccessCategory, bytes: u32, now: Instant) {
        self.backlogs.push((dest, ac.index(), bytes));
        if self.queues[ac.index()].queued_for(dest) == 0 {
            self.queues[ac.index()].push(Frame::new(bytes, dest, None, now));
        }
    }

    /// Removes `ac`'s head frame at `now`; the next frame becomes the head (a backlogged
    /// destination queues a new one).
    pub(crate) fn pop(&mut self, ac: usize, now: Instant) {
        let backlogs = &self.backlogs;
        let saturated = self.config.saturated;
        self.queues[ac].pop(|dest| {
            let bytes = refill_bytes(backlogs, saturated, dest, ac)?;
            Some(Frame::new(bytes, dest, None, now))
        });
        if let Some(f) = self.queues[ac].front_mut() {
            f.head_at = f.head_at.max(now);
            f.eligible = f.head_at;
        }
    }

    /// The sequence number of `ac`'s head frame, assigned on its first attempt, and whether
    /// this attempt is a retry.
    pub(crate) fn sequence(&mut self, ac: usize) -> (u16, bool) {
        self.sequence_at(ac, 0)
    }

    /// The sequence number of `ac`'s `k`-th frame (assigned on its first attempt) and whether
    /// this attempt is a retry.
    pub(crate) fn sequence_at(&mut self, ac: usize, k: usize) -> (u16, bool) {
        let next = &mut self.next_seq;
        let f = self.queues[ac].get_mut(k).expect("a queued frame");
        match f.seq {
            Some(s) => (s, true),
            None => {
                let s = *next;
                *next = (*next + 1) % 4096;
                f.seq = Some(s);
                (s, false)
            }
        }
    }

    /// The MSDU sizes an A-MPDU from `ac` may carry: the served destination's, head first.
    pub(crate) fn queued_bytes(&self, ac: usize) -> impl Iterator<Item = u32> + '_ {
        self.queues[ac].head_flow().map(|f| f.bytes)
    }

    /// `ac`'s `k`-th frame to the served destination.
    pub(crate) fn frame_mut(&mut self, ac: usize, k: usize) -> Option<&mut Frame> {
        self.queues[ac].get_mut(k)
    }

    pub(crate) fn frame(&self, ac: usize, k: usize) -> Option<&Frame> {
        self.queues[ac].get(k)
    }

    /// After an A-MPDU exchange ending at `now`: removes the first `n` frames that `keep`
    /// rejects (acknowledged or dropped); the kept ones stay at the head of their
    /// destination's FIFO, eligible from `now`; a backlogged destination (or a saturated
    /// station) is topped up to an A-MPDU's worth; the next destination takes its turn.
    pub(crate) fn settle_aggregate(&mut self, ac: usize, n: usize, keep: &[bool], now: Instant) {
        for (k, &kept) in keep.iter().enumerate().take(n) {
            if kept && let Some(f) = self.queues[ac].get_mut(k) {
                f.eligible = now;
            }
        }
        let want = self.config.ampdu.map_or(1, |a| a.max_mpdus.clamp(1, 64)) as usize;
        let backlogs = &self.backlogs;
        let saturated = self.config.saturated;
        self.queues[ac].settle_front(n, keep, |dest, left| {
            let bytes = refill_bytes(backlogs, saturated, dest, ac);
            match bytes {
                Some(bytes) => (left..want)
                    .map(|_| Frame::new(bytes, dest, None, now))
                    .collect(),
                None => vec![],
            }
        });
        if let Some(f) = self.queues[ac].front_mut() {
            if f.seq.is_none() {
                f.head_at = f.head_at.max(now);
                f.eligible = f.head_at;
            } else {
                f.eligible = f.eligible.max(now);
            }
        }
    }

    /// A saturated station keeps `ac`'s queue filled: one MSDU, or an A-MPDU's worth.
    pub(crate) fn refill(&mut self, ac: usize, now: Instant) {
        if let Some((sat_ac, bytes)) = self.config.saturated
            && sat_ac.index() == ac
        {
            let want = self.config.ampdu.map_or(1, |a| a.max_mpdus.clamp(1, 64)) as usize;
            while self.queues[ac].len() < want {
                if !self.enqueue(sat_ac, bytes, now) {
                    break;
                }
            }
        }
    }

    /// How long the head of `ac` has waited since it became eligible (for the record).
    pub(crate) fn head(&self, ac: usize) -> Option<&Frame> {
        self.queues[ac].front()
    }

    /// Whether `ac`'s head frame has outlived the MSDU lifetime at `now` before its first
    /// attempt (a frame already on the air runs to its retry limit).
    pub(crate) fn head_expired(&self, ac: usize, now: Instant) -> bool {
        match (self.config.lifetime, self.head(ac)) {
            (Some(life), Some(f)) => {
                f.seq.is_none() && now.saturating_duration_since(f.enqueued) > life
            }
            _ => false,
        }
    }

    pub(crate) fn head_mut(&mut self, ac: usize) -> Option<&mut Frame> {
        self.queues[ac].front_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(dest: u32, tag: u64) -> Frame {
        Frame::new(1500, dest, Some(tag), Instant::ZERO)
    }

    /// Pushes (dest, tag) in order, pops everything; returns the tags in service order.
    fn service_order(fifo: bool, arrivals: &[(u32, u64)]) -> Vec<u64> {
        let mut q = AcQueue::new(fifo);
        for &(d, t) in arrivals {
            q.push(frame(d, t));
        }
        assert_eq!(q.len(), arrivals.len());
        let mut out = vec![];
        while let Some(f) = q.pop(|_| None) {
            out.push(f.tag.unwrap());
        }
        assert_eq!(q.len(), 0);
        out
    }

    #[test]
    fn a_fifo_serves_in_arrival_order_whatever_the_destination() {
        // Three frames for 2, then one for 1, then one more for 2.
        let arrivals = [(2, 0), (2, 1), (2, 2), (1, 3), (2, 4)];
        assert_eq!(service_order(true, &arrivals), vec![0, 1, 2, 3, 4]);
        // Per destination: 1's frame goes second, after one frame of 2's.
        assert_eq!(service_order(false, &arrivals), vec![0, 3, 1, 2, 4]);
    }

    #[test]
    fn a_fifo_counts_and_aggregates_by_runs() {
        let mut q = AcQueue::new(true);
        for (d, t) in [(2, 0), (2, 1), (1, 2), (2, 3)] {
            q.push(frame(d, t));
        }
        assert_eq!(q.queued_for(2), 3);
        assert_eq!(q.queued_for(1), 1);
        // An A-MPDU may carry only the head run: frames 0 and 1.
        let run: Vec<u64> = q.head_flow().map(|f| f.tag.unwrap()).collect();
        assert_eq!(run, vec![0, 1]);
        // Both delivered; the backlog tops destination 2 up at the tail, behind frame 3.
        q.settle_front(2, &[false, false], |d, left| {
            assert_eq!((d, left), (2, 1));
            vec![frame(2, 9)]
        });
        let mut out = vec![];
        while let Some(f) = q.pop(|_| None) {
            out.push(f.tag.unwrap());
        }
        assert_eq!(out, vec![2, 3, 9]);
    }

    #[test]
    fn a_fifo_refills_a_backlog_at_the_tail_once_it_has_no_frame_left() {
        let mut q = AcQueue::new(true);
        q.push(frame(2, 0));
        q.push(frame(1, 1));
        // Popping 2's only frame: its backlog refills behind 1's frame.
        let f = q.pop(|d| Some(frame(d, 7))).unwrap();
        assert_eq!(f.tag, Some(0));
        let rest: Vec<u64> = std::iter::from_fn(|| q.pop(|_| None))
            .map(|f| f.tag.unwrap())
            .collect();
        assert_eq!(rest, vec![1, 7]);
    }
}
