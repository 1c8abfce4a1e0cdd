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
//!
//! Deviations:
//! - One sequence counter per transmitter (the standard keeps one per receiver and TID).
//! - A fixed PHY rate per station (rate adaptation comes later).

use super::edca::{AccessCategory, EdcaParams, Edcaf};
use super::phy::{Phy, PhyRate};
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
    /// A QoS station (EDCA, 10.22.2.4: its counters also decrement at the slot boundary where
    /// another transmission starts); `false`: a non-QoS station (DCF, 10.3.4.3: the slot in
    /// which the medium turns busy is not counted).
    pub qos: bool,
}

impl StationConfig {
    /// A QoS station with the default EDCA parameter set.
    pub fn edca(phy: &Phy, rate: PhyRate) -> Self {
        StationConfig {
            rate,
            edca: AccessCategory::ALL.map(|ac| EdcaParams::default_for(ac, phy)),
            queue_limit: 1000,
            saturated: None,
            qos: true,
        }
    }

    /// A non-QoS (DCF) station: every AC uses the DCF parameters; traffic goes to AC_BE.
    pub fn dcf(phy: &Phy, rate: PhyRate) -> Self {
        StationConfig {
            rate,
            edca: [EdcaParams::dcf(phy); 4],
            queue_limit: 1000,
            saturated: None,
            qos: false,
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
    /// The caller's tag (`None`: background traffic the medium made itself).
    pub tag: Option<u64>,
    /// The receiver.
    pub dest: u32,
}

/// One AC's queue: a FIFO per destination, served in turn, one MSDU each.
#[derive(Clone, Debug, Default)]
pub(crate) struct AcQueue {
    /// Destinations with frames, the one being served first.
    flows: VecDeque<(u32, VecDeque<Frame>)>,
    len: usize,
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

    fn push(&mut self, f: Frame) {
        self.len += 1;
        match self.flows.iter_mut().find(|q| q.0 == f.dest) {
            Some(q) => q.1.push_back(f),
            None => self.flows.push_back((f.dest, VecDeque::from([f]))),
        }
    }

    /// Frames queued for `dest`.
    fn queued_for(&self, dest: u32) -> usize {
        self.flows
            .iter()
            .find(|q| q.0 == dest)
            .map_or(0, |q| q.1.len())
    }

    /// Removes the head frame; `refill` (a backlogged destination's next MSDU) joins its
    /// destination's FIFO if that FIFO ran empty. The next destination takes its turn.
    fn pop(&mut self, refill: impl FnOnce(u32) -> Option<Frame>) -> Option<Frame> {
        let q = self.flows.front_mut()?;
        let f = q.1.pop_front()?;
        self.len -= 1;
        if q.1.is_empty()
            && let Some(n) = refill(q.0)
        {
            q.1.push_back(n);
            self.len += 1;
        }
        if q.1.is_empty() {
            self.flows.pop_front();
        } else if self.flows.len() > 1 {
            self.flows.rotate_left(1);
        }
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
}

impl Station {
    pub(crate) fn new(config: StationConfig, mut rng: ChaCha8Rng) -> Self {
        let edcaf = config.edca.map(|p| Edcaf::new(p, &mut rng));
        Station {
            config,
            queues: Default::default(),
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
        q.push(Frame {
            bytes,
            enqueued: now,
            head_at: now,
            eligible: now,
            seq: None,
            tag,
            dest,
        });
        true
    }

    /// Keeps `ac`'s queue for `dest` backlogged with MSDUs of `bytes` from `now` on (background
    /// traffic, untagged).
    pub(crate) fn backlog(&mut self, dest: u32, ac: AccessCategory, bytes: u32, now: Instant) {
        self.backlogs.push((dest, ac.index(), bytes));
        if self.queues[ac.index()].queued_for(dest) == 0 {
            self.queues[ac.index()].push(Frame {
                bytes,
                enqueued: now,
                head_at: now,
                eligible: now,
                seq: None,
                tag: None,
                dest,
            });
        }
    }

    /// Removes `ac`'s head frame at `now`; the next frame becomes the head (a backlogged
    /// destination queues a new one).
    pub(crate) fn pop(&mut self, ac: usize, now: Instant) {
        let backlogs = &self.backlogs;
        let saturated = self.config.saturated;
        self.queues[ac].pop(|dest| {
            let bytes = backlogs
                .iter()
                .find(|b| b.0 == dest && b.1 == ac)
                .map(|b| b.2)
                .or_else(|| {
                    saturated
                        .filter(|s| dest == 0 && s.0.index() == ac)
                        .map(|s| s.1)
                })?;
            Some(Frame {
                bytes,
                enqueued: now,
                head_at: now,
                eligible: now,
                seq: None,
                tag: None,
                dest,
            })
        });
        if let Some(f) = self.queues[ac].front_mut() {
            f.head_at = f.head_at.max(now);
            f.eligible = f.head_at;
        }
    }

    /// The sequence number of `ac`'s head frame, assigned on its first attempt, and whether
    /// this attempt is a retry.
    pub(crate) fn sequence(&mut self, ac: usize) -> (u16, bool) {
        let next = &mut self.next_seq;
        let f = self.queues[ac].front_mut().expect("a head frame");
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

    /// How long the head of `ac` has waited since it became eligible (for the record).
    pub(crate) fn head(&self, ac: usize) -> Option<&Frame> {
        self.queues[ac].front()
    }

    pub(crate) fn head_mut(&mut self, ac: usize) -> Option<&mut Frame> {
        self.queues[ac].front_mut()
    }
}
