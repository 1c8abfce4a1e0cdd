//! Alfalfa's state-synchronisation protocol: which state each diff starts from, which states the
//! receiver has, and frames cut into packets (§4, §5).
//!
//! **Sender** ([`SyncSender`]). For each captured picture it is told the bytes the rate control
//! allows now (Sprout's window, eq. 6) and whether the newest state it sent is forecast to reach
//! the receiver in time. It picks the base by §4's rule: *the newest state it sent if the
//! forecast says it arrives in time, else the newest state the receiver acknowledged* (and, in
//! either case, one the encoder still holds in a slot), codes the picture as a diff from it in
//! at most the window (re-encoding at a coarser quantiser while over), and cuts it into packets.
//! A picture that does not fit the window even at the coarsest quantiser is skipped: nothing is
//! queued behind the window, so no frame waits past its deadline at the sender.
//!
//! **Slots** (the codec reaches three states, not any). Every diff is written to slot 0 (VP8's
//! last frame), so the newest sent state is always reachable. Slots 1 and 2 (golden, alt-ref)
//! are anchors: the slot holding the newest acknowledged anchor is never overwritten, so some
//! acknowledged state is always reachable and no intra frame is ever needed; the other anchor
//! slot is a candidate, rewritten with the current diff when it is free — when it holds an
//! acknowledged state older than the other anchor, the same state as the other anchor, or a state
//! not acknowledged within `anchor_timeout` (presumed lost) or reported lost. So the anchors
//! advance about once per round trip.
//!
//! **Receiver** ([`SyncReceiver`]). It reassembles each diff from its packets (each carries the
//! state, its index and the packet count), applies it when complete, and reports
//! ([`SlotReport`]) the states its slots hold, the newest it applied, and the newest it knows it
//! will never apply (incomplete when a newer diff's packet arrived — the path is first in,
//! first out — or refused for a missing base). The sender takes every state in a report as
//! acknowledged; a report is complete, so a lost report costs nothing but time.
//!
//! **Loss-aware base rule** ([`BasePolicy::LossAware`], wisp's, not the paper's). §4's rule bets
//! on the newest sent state whenever the forecast says it arrives in time; under random loss
//! every frame sent on a lost state is undecodable until the loss is reported, a round trip
//! later. The loss-aware rule takes the newest sent state only if, in addition, the chain from
//! the newest acknowledged state to it is intact with probability at least
//! [`SyncConfig::min_intact`] (0.9, the video layer's service objective): the product over the
//! chain's unacknowledged states of [`frame_survives`] at the measured packet loss rate. The
//! rate is the maximum-likelihood one given the outcomes of the last 256 diffs whose base the
//! receiver held (rebuilt or not, with their packet counts); with no failure it is 0 and the
//! rule is §4's.
//!
//! **Parity** ([`Parity`], an extension not in the paper): a diff's data packets can be followed
//! by one XOR parity packet (the diff's length, then the XOR of the pieces), so the receiver
//! rebuilds the diff with any one packet lost; its bytes count against the window
//! ([`diff_budget_with_parity`]). `auto` adds it when the diff's packets, unprotected, would all
//! arrive with probability below `min_intact` at the measured loss rate. A protected packet
//! has [`PARITY_FLAG`] set in its `count`.
//!
//! Deviations: the paper's SSP acknowledges states and retransmits nothing, as here, but does
//! not say how the slots of a real codec are managed (its MPEG-2 coder keeps the last two
//! frames); the slot policy above is ours.

use super::{
    Codec, CodecDecoder, DecodeError, Diff, DiffHeader, EncodeError, SLOTS, SlotTable,
    StateDecoder, StateEncoder, StateId,
};
use crate::time::{Duration, Instant};
use crate::wire::{self, Message, WireError, Writer};
use std::collections::BTreeMap;

/// Parameters of the sender's side of the protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncConfig {
    /// Largest diff bytes in one packet.
    pub max_payload: usize,
    /// Header bytes each packet adds on the wire (RTP + IP/UDP), counted against the window.
    pub packet_overhead: usize,
    /// A candidate anchor not acknowledged within this long is presumed lost.
    pub anchor_timeout: Duration,
    /// How the base of each diff is chosen.
    pub policy: BasePolicy,
    /// Under [`BasePolicy::LossAware`]: the least probability that the chain from the newest
    /// acknowledged state to the newest sent one is intact for a diff to be based on the
    /// newest sent.
    pub min_intact: f64,
    /// One XOR parity packet after a diff's data packets (an extension, not in the paper):
    /// any one lost packet of the diff is recovered, at the cost of the parity packet's bytes
    /// in the window. See [`Parity`].
    pub parity: Parity,
}

/// When a diff gets a parity packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Parity {
    /// Never.
    #[default]
    Off,
    /// Every diff.
    On,
    /// When the diff's packets, unprotected, would all arrive with probability below
    /// [`SyncConfig::min_intact`] at the measured packet loss rate
    /// ([`SyncSender::loss_estimate`]; never while no loss has been measured).
    Auto,
}

/// How the sender chooses each diff's base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BasePolicy {
    /// §4's rule with the anchor slots ([`SyncSender::choose_base`]).
    #[default]
    Explicit,
    /// §4's rule, and the newest sent state only if the chain from the newest acknowledged one
    /// to it is intact with probability at least [`SyncConfig::min_intact`], from the packet
    /// loss rate measured on the frames' outcomes ([`SyncSender::loss_estimate`]) and the
    /// packets of the unacknowledged states on the chain ([`SyncSender::chain_intact`]).
    LossAware,
    /// A conventional codec: every diff from the previous one (slot 0 only; the anchor slots
    /// keep the black initial state). When the receiver reports that the chain is broken (a
    /// state on it lost or refused — RTCP's PLI), the next diff is an intra frame: coded from
    /// the black state 0, which both sides always hold, at the cost of a first frame.
    Conventional,
}

impl Default for SyncConfig {
    fn default() -> Self {
        SyncConfig {
            max_payload: 1200,
            packet_overhead: 40,
            anchor_timeout: Duration::from_millis(500),
            policy: BasePolicy::Explicit,
            min_intact: DEFAULT_MIN_INTACT,
            parity: Parity::Off,
        }
    }
}

/// [`SyncConfig::min_intact`]'s default: the video layer's service objective under loss (≥ 90% of the
/// frames shown). A frame based on a state that arrives with probability below it cannot meet
/// the objective even if its own packets all arrive, so the sender bets on an unacknowledged
/// chain only when the chain is at least this likely intact. Chosen from the objective before
/// any run, not fitted to a trace.
pub const DEFAULT_MIN_INTACT: f64 = 0.9;

/// The flag in a packet's `count` that says the diff is protected: its last packet (index
/// `count − 1`, with the flag cleared) is the XOR parity of the data packets, and carries the
/// diff's length in its first 4 bytes.
pub const PARITY_FLAG: u16 = 0x8000;

/// The probability that a diff of `n` data packets can be rebuilt when each packet is lost
/// independently with probability `p`: all `n` arrive, or with a parity packet at most one of
/// the `n + 1` is lost.
pub fn frame_survives(n: u16, p: f64, parity: bool) -> f64 {
    let n = i32::from(n.max(1));
    let q = 1.0 - p;
    if parity {
        q.powi(n + 1) + f64::from(n + 1) * p * q.powi(n)
    } else {
        q.powi(n)
    }
}

/// One packet of a diff: which state, which piece, and the byte range of the diff it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VideoPacket {
    pub state: StateId,
    pub index: u16,
    pub count: u16,
    /// Offset and length in the diff's bytes.
    pub offset: usize,
    pub len: usize,
}

impl VideoPacket {
    /// The packets of its frame, the parity packet included ([`PARITY_FLAG`] cleared).
    pub fn total(&self) -> u16 {
        self.count & !PARITY_FLAG
    }

    /// Whether this is the last packet of its frame.
    pub fn is_last(&self) -> bool {
        self.index + 1 == self.total()
    }

    /// Whether this is its frame's parity packet (the last of a protected frame).
    pub fn is_parity(&self) -> bool {
        self.count & PARITY_FLAG != 0 && self.is_last()
    }
}

/// Cuts `len` diff bytes into ⌈len/P⌉ packets of (nearly) equal size, P = `max_payload`.
pub fn packetise(state: StateId, len: usize, max_payload: usize) -> Vec<VideoPacket> {
    packetise_into(state, len, len.div_ceil(max_payload.max(1)))
}

/// Cuts `len` diff bytes into `n` packets (at least one, at most `len`) of (nearly) equal size.
pub fn packetise_into(state: StateId, len: usize, n: usize) -> Vec<VideoPacket> {
    let n = n.min(len).max(1);
    let mut offset = 0;
    (0..n)
        .map(|i| {
            let share = len / n + usize::from(i < len % n);
            let p = VideoPacket {
                state,
                index: i as u16,
                count: n as u16,
                offset,
                len: share,
            };
            offset += share;
            p
        })
        .collect()
}

/// [`diff_budget`] when each diff is followed by its parity packet: the largest diff whose data
/// packets and parity packet, headers included, fit `window` wire bytes.
pub fn diff_budget_with_parity(window: usize, max_payload: usize, overhead: usize) -> usize {
    let p = max_payload.max(1);
    let mut best = 0;
    // n data packets: d ≤ n·P, and d + n·overhead + ⌈d/n⌉ + 4 + overhead ≤ window.
    for n in 1..=window / (overhead + 1) + 1 {
        let fixed = (n + 1) * overhead + 4;
        let Some(room) = window.checked_sub(fixed) else {
            break;
        };
        // d + ⌈d/n⌉ ≤ room: the largest such d.
        let mut d = (room * n / (n + 1)).min(n * p);
        while d > 0 && d + d.div_ceil(n) > room {
            d -= 1;
        }
        best = best.max(d);
    }
    best
}

/// The wire bytes of a diff of `len` bytes in `n` data packets and its parity packet.
pub fn parity_wire(len: usize, n: usize, overhead: usize) -> usize {
    let n = n.max(1);
    len + (n + 1) * overhead + len.div_ceil(n) + 4
}

/// How many data packets a protected diff of `len` bytes is cut into within `window` wire
/// bytes: the fewest that hold it (⌈len/P⌉) and fit the window with the parity packet. (Fewer
/// packets make a larger parity packet, so a diff below its budget may need more packets than
/// its length alone says.) ⌈len/P⌉ if none fits.
pub fn parity_packets(len: usize, window: usize, max_payload: usize, overhead: usize) -> usize {
    let least = len.div_ceil(max_payload.max(1)).max(1);
    (least..=least.max(len))
        .take(64)
        .find(|&n| parity_wire(len, n, overhead) <= window)
        .unwrap_or(least)
}

/// The largest diff whose packets, headers included, fit `window` wire bytes.
pub fn diff_budget(window: usize, max_payload: usize, overhead: usize) -> usize {
    let full = max_payload + overhead;
    let n = window.div_ceil(full).max(1);
    let d = window.saturating_sub(n * overhead);
    // With n packets the diff is at most n·P; one packet fewer if the remainder left no room.
    d.min(n * max_payload)
}

/// The receiver's report: the states it holds, the newest it applied (with which of the 32
/// before it it applied), and the newest it knows it will never apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SlotReport {
    pub slots: SlotTable,
    pub newest: StateId,
    /// Bit *i*: state `newest − 1 − i` was applied.
    pub applied: u32,
    /// The newest state it knows it will never apply (`StateId(0)`: none).
    pub lost: StateId,
}

impl SlotReport {
    /// The states the report says were applied (or held).
    pub fn applied_states(&self) -> impl Iterator<Item = StateId> + '_ {
        let n = self.newest.0;
        (0..32u32)
            .filter(move |i| self.applied & (1 << i) != 0 && n > *i)
            .map(move |i| StateId(n - 1 - i))
            .chain(self.slots)
            .chain([self.newest])
    }
}

impl SlotReport {
    /// Message kind (Sprout's family, 10–19).
    pub const KIND: u8 = 15;
}

impl Message for SlotReport {
    fn emit(&self, out: &mut Vec<u8>) {
        wire::frame(out, Self::KIND, |p| {
            for s in self.slots {
                p.put_u32(s.0);
            }
            p.put_u32(self.newest.0);
            p.put_u32(self.applied);
            p.put_u32(self.lost.0);
        });
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut r) = wire::unframe(buf)?;
        if kind != Self::KIND {
            return Err(WireError::UnknownKind(kind));
        }
        let mut slots = [StateId(0); SLOTS];
        for s in &mut slots {
            *s = StateId(r.u32()?);
        }
        let m = SlotReport {
            slots,
            newest: StateId(r.u32()?),
            applied: r.u32()?,
            lost: StateId(r.u32()?),
        };
        r.finish()?;
        Ok(m)
    }
}

/// Which rule picked a diff's base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseRule {
    /// The newest state sent, forecast to arrive in time.
    NewestSent,
    /// The newest state the receiver acknowledged.
    NewestAcked,
}

/// Counters of a [`SyncSender`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncStats {
    pub frames: u64,
    /// Calls to [`SyncSender::on_frame`] that coded nothing (a picture retried while held
    /// counts once per attempt).
    pub skipped: u64,
    pub on_newest_sent: u64,
    pub on_acked: u64,
    /// Frames whose diff exceeded its budget (never, unless a codec's trial misjudges its size).
    pub over_budget: u64,
    pub diff_bytes: u64,
    /// Diffs coded from the black state 0 after the receiver acknowledged a later one (intra
    /// frames after the first).
    pub intra: u64,
    /// Frames the loss-aware rule based on an acknowledged state although §4's rule would
    /// have taken the newest sent (the chain was too likely broken).
    pub chain_risk: u64,
}

/// A coded frame ready to send.
#[derive(Clone, Debug, PartialEq)]
pub struct SentFrame {
    pub diff: Diff,
    pub rule: BaseRule,
    pub packets: Vec<VideoPacket>,
}

impl SentFrame {
    /// The bytes packet `p` carries: its range of the diff, or for the parity packet the diff's
    /// length (4 bytes, big-endian) and the XOR of the data pieces, each padded to the largest.
    pub fn payload(&self, p: &VideoPacket) -> Vec<u8> {
        if !p.is_parity() {
            return self.diff.bytes[p.offset..p.offset + p.len].to_vec();
        }
        let mut out = (self.diff.bytes.len() as u32).to_be_bytes().to_vec();
        out.resize(p.len, 0);
        for d in &self.packets {
            if d.index == p.index {
                continue;
            }
            for (o, b) in out[4..]
                .iter_mut()
                .zip(&self.diff.bytes[d.offset..d.offset + d.len])
            {
                *o ^= b;
            }
        }
        out
    }
}

/// Outcomes kept for the loss estimate (about 10 s at 25 frames/s).
const OUTCOMES: usize = 256;

/// The sending side of the protocol.
#[derive(Debug)]
pub struct SyncSender<C> {
    config: SyncConfig,
    encoder: StateEncoder<C>,
    /// The newest state the receiver acknowledged, and the recent states it acknowledged.
    newest_acked: StateId,
    acked: std::collections::BTreeSet<StateId>,
    /// Every state up to this one that the receiver has not acknowledged will never be applied
    /// (the receiver applies states in order: this is the newer of its newest and its lost).
    dead: StateId,
    /// The base of each state sent after `dead`.
    bases: BTreeMap<StateId, StateId>,
    /// The data packets of each state sent after `dead`, and whether it had a parity packet.
    packets: BTreeMap<StateId, (u16, bool)>,
    /// The outcomes of recent diffs whose base the receiver held: (data packets, parity,
    /// rebuilt).
    outcomes: std::collections::VecDeque<(u16, bool, bool)>,
    /// The packet loss rate estimated from `outcomes`.
    loss: f64,
    written_at: [Option<Instant>; SLOTS],
    stats: SyncStats,
    /// The last picture that did not fit: (source, base, its smallest diff in bytes), so that
    /// retrying it from the same base within a budget still too small costs no trial encode.
    too_large: Option<(u32, StateId, usize)>,
}

impl<C: Codec> SyncSender<C> {
    pub fn new(codec: C, config: SyncConfig) -> Self {
        SyncSender {
            config,
            encoder: StateEncoder::new(codec),
            newest_acked: StateId::INITIAL,
            acked: [StateId::INITIAL].into(),
            dead: StateId::INITIAL,
            bases: BTreeMap::new(),
            packets: BTreeMap::new(),
            outcomes: std::collections::VecDeque::new(),
            loss: 0.0,
            written_at: [None; SLOTS],
            stats: SyncStats::default(),
            too_large: None,
        }
    }

    pub fn encoder(&self) -> &StateEncoder<C> {
        &self.encoder
    }

    pub fn encoder_mut(&mut self) -> &mut StateEncoder<C> {
        &mut self.encoder
    }

    pub fn stats(&self) -> SyncStats {
        self.stats
    }

    pub fn config(&self) -> &SyncConfig {
        &self.config
    }

    pub fn newest_acked(&self) -> StateId {
        self.newest_acked
    }

    /// The newest state sent (`StateId(0)` before any).
    pub fn newest_sent(&self) -> StateId {
        StateId(self.encoder.next_state().0 - 1)
    }

    fn is_acked(&self, s: StateId) -> bool {
        self.acked.contains(&s)
    }

    /// A report from the receiver arrived.
    pub fn on_report(&mut self, report: &SlotReport) {
        let newest_sent = self.newest_sent();
        for s in report.applied_states() {
            if s <= newest_sent {
                self.acked.insert(s);
                self.newest_acked = self.newest_acked.max(s);
            }
        }
        let dead = report.lost.max(report.newest);
        if dead <= self.newest_sent() {
            self.dead = self.dead.max(dead);
        }
        // The states now settled: applied, or never to be. One whose base the receiver held
        // was rebuilt or not on its own packets alone: an outcome for the loss estimate.
        let keep = self.bases.split_off(&StateId(self.dead.0 + 1));
        let settled = std::mem::replace(&mut self.bases, keep);
        let keep = self.packets.split_off(&StateId(self.dead.0 + 1));
        let packets = std::mem::replace(&mut self.packets, keep);
        let mut changed = false;
        for (s, b) in settled {
            let Some(&(n, parity)) = packets.get(&s) else {
                continue;
            };
            if self.is_acked(s) {
                self.outcomes.push_back((n, parity, true));
            } else if self.is_acked(b) {
                self.outcomes.push_back((n, parity, false));
            } else {
                continue;
            }
            changed = true;
            if self.outcomes.len() > OUTCOMES {
                self.outcomes.pop_front();
            }
        }
        if changed {
            self.loss = estimate_loss(&self.outcomes);
        }
        // Forget acknowledged states older than any chain or slot can reach.
        let floor = self.encoder.slots().into_iter().min().unwrap_or_default();
        let floor = StateId(floor.0.min(self.dead.0.saturating_sub(64)));
        let keep = self.acked.split_off(&floor);
        self.acked = keep;
    }

    /// Whether `state` can no longer be applied by the receiver: it, or a state its diff chain
    /// depends on back to an acknowledged one, was reported lost or skipped.
    pub fn is_doomed(&self, state: StateId) -> bool {
        let mut s = state;
        loop {
            if self.is_acked(s) {
                return false;
            }
            if s <= self.dead {
                return true;
            }
            match self.bases.get(&s) {
                Some(&b) => s = b,
                None => return true,
            }
        }
    }

    /// The packet loss rate measured so far: the maximum-likelihood rate given the recent
    /// diffs whose base the receiver held (each rebuilt or not, with its packet count).
    pub fn loss_estimate(&self) -> f64 {
        self.loss
    }

    /// The probability that `state` will be applied, given the packet loss estimate: the
    /// product of [`frame_survives`] over the unacknowledged states of its chain, back to an
    /// acknowledged one (0 if the chain is known broken).
    pub fn chain_intact(&self, state: StateId) -> f64 {
        if self.is_doomed(state) {
            return 0.0;
        }
        let mut p = 1.0;
        let mut s = state;
        while !self.is_acked(s) {
            let (n, parity) = self.packets.get(&s).copied().unwrap_or((1, false));
            p *= frame_survives(n, self.loss, parity);
            match self.bases.get(&s) {
                Some(&b) => s = b,
                None => return 0.0,
            }
        }
        p
    }

    /// §4's rule: the newest state sent if it is forecast to arrive in time (and not known
    /// lost), else the newest acknowledged state the encoder still holds. Under
    /// [`BasePolicy::LossAware`], the newest sent also needs its chain intact with probability
    /// at least [`SyncConfig::min_intact`].
    pub fn choose_base(&self, newest_in_time: bool) -> (StateId, BaseRule) {
        let newest = self.newest_sent();
        if self.config.policy == BasePolicy::Conventional {
            // No base choice: the previous frame, or an intra frame once the chain is broken.
            return if self.is_doomed(newest) {
                (StateId::INITIAL, BaseRule::NewestAcked)
            } else {
                (newest, BaseRule::NewestSent)
            };
        }
        let acked = self
            .encoder
            .slots()
            .into_iter()
            .filter(|&s| self.is_acked(s))
            .max()
            // The slot policy keeps an acknowledged anchor; state 0 is acknowledged by definition.
            .unwrap_or(StateId::INITIAL);
        if newest_in_time && !self.is_doomed(newest) && self.encoder.slot_of(newest).is_some() {
            // The loss-aware rule declines a risky chain, unless the only acknowledged state
            // held is the black state 0 after a later one was acknowledged: basing on it would
            // be an intra frame, which explicit state never needs.
            let risky = self.config.policy == BasePolicy::LossAware
                && self.chain_intact(newest) < self.config.min_intact;
            let intra = acked == StateId::INITIAL && self.newest_acked > StateId::INITIAL;
            if !risky || intra {
                return (newest, BaseRule::NewestSent);
            }
        }
        (acked, BaseRule::NewestAcked)
    }

    /// The slots the next diff is written to: slot 0, and a free anchor slot if there is one.
    pub fn refresh_mask(&self, now: Instant) -> u8 {
        if self.config.policy == BasePolicy::Conventional {
            return 1;
        }
        let slots = self.encoder.slots();
        let anchors = 1..SLOTS;
        let best = anchors
            .clone()
            .filter(|&i| self.is_acked(slots[i]))
            .max_by_key(|&i| (slots[i], i));
        let free = anchors.into_iter().find(|&i| {
            if Some(i) == best {
                return false;
            }
            let s = slots[i];
            let dup = best.is_some_and(|b| slots[b] == s);
            let stale = self.is_acked(s) && best.is_some_and(|b| slots[b] > s);
            let presumed_lost = !self.is_acked(s)
                && (self.is_doomed(s)
                    || self.written_at[i].is_none_or(|t| {
                        now.saturating_duration_since(t) >= self.config.anchor_timeout
                    }));
            dup || stale || presumed_lost
        });
        1 | free.map_or(0, |i| 1 << i)
    }

    /// The packets of a coded `diff` within `window` wire bytes (with a parity packet when
    /// `parity`), remembered for the receiver's reports.
    fn packetise(&mut self, diff: &Diff, window: usize, parity: bool) -> Vec<VideoPacket> {
        let (max_payload, overhead) = (self.config.max_payload, self.config.packet_overhead);
        let len = diff.bytes.len();
        let n = if parity {
            parity_packets(len, window, max_payload, overhead)
        } else {
            len.div_ceil(max_payload.max(1))
        };
        let mut packets = packetise_into(diff.header.target, len, n);
        self.packets
            .insert(diff.header.target, (packets.len() as u16, parity));
        if parity {
            let n = packets.len();
            let count = (n as u16 + 1) | PARITY_FLAG;
            for p in &mut packets {
                p.count = count;
            }
            packets.push(VideoPacket {
                state: diff.header.target,
                index: n as u16,
                count,
                offset: 0,
                len: 4 + diff.bytes.len().div_ceil(n),
            });
        }
        packets
    }

    /// A picture was captured at `now`: code it within `window` wire bytes, or skip it.
    pub fn on_frame(
        &mut self,
        now: Instant,
        source: u32,
        window: usize,
        newest_in_time: bool,
    ) -> Option<SentFrame> {
        let (base, rule) = self.choose_base(newest_in_time);
        let chain_risk = rule == BaseRule::NewestAcked
            && self.config.policy == BasePolicy::LossAware
            && newest_in_time
            && !self.is_doomed(self.newest_sent())
            && self.encoder.slot_of(self.newest_sent()).is_some();
        let refresh = self.refresh_mask(now);
        let (max_payload, overhead) = (self.config.max_payload, self.config.packet_overhead);
        let plain = diff_budget(window, max_payload, overhead);
        let parity = match self.config.parity {
            Parity::Off => false,
            Parity::On => true,
            Parity::Auto => {
                let n = plain.div_ceil(max_payload.max(1)).max(1) as u16;
                frame_survives(n, self.loss, false) < self.config.min_intact
            }
        };
        let budget = if parity {
            diff_budget_with_parity(window, max_payload, overhead)
        } else {
            plain
        };
        // The same picture from the same base needs what it needed (no diff was coded since:
        // the slots are unchanged).
        if let Some((s, b, min)) = self.too_large
            && s == source
            && b == base
            && budget < min
        {
            self.stats.skipped += 1;
            return None;
        }
        match self.encoder.encode(source, base, budget, refresh) {
            Ok(diff) => {
                self.too_large = None;
                self.bases.insert(diff.header.target, base);
                self.stats.chain_risk += u64::from(chain_risk);
                for i in 0..SLOTS {
                    if refresh & (1 << i) != 0 {
                        self.written_at[i] = Some(now);
                    }
                }
                self.stats.frames += 1;
                self.stats.diff_bytes += diff.bytes.len() as u64;
                if base == StateId::INITIAL && self.newest_acked > StateId::INITIAL {
                    self.stats.intra += 1;
                }
                match rule {
                    BaseRule::NewestSent => self.stats.on_newest_sent += 1,
                    BaseRule::NewestAcked => self.stats.on_acked += 1,
                }
                if diff.overshoot > 0 {
                    self.stats.over_budget += 1;
                }
                let packets = self.packetise(&diff, window, parity);
                Some(SentFrame {
                    diff,
                    rule,
                    packets,
                })
            }
            Err(EncodeError::OverBudget { min, .. }) => {
                self.too_large = Some((source, base, min));
                self.stats.skipped += 1;
                None
            }
            Err(EncodeError::BaseNotHeld(_) | EncodeError::Codec(_)) => {
                self.stats.skipped += 1;
                None
            }
        }
    }
}

/// The maximum-likelihood packet loss rate given diffs' outcomes (data packets, rebuilt), on a
/// grid of 0.25% steps up to 50%; 0 without a failure.
fn estimate_loss(outcomes: &std::collections::VecDeque<(u16, bool, bool)>) -> f64 {
    if outcomes.iter().all(|o| o.2) {
        return 0.0;
    }
    // Counts per (packets, parity, rebuilt).
    let mut counts: BTreeMap<(u16, bool, bool), f64> = BTreeMap::new();
    for &o in outcomes {
        *counts.entry(o).or_default() += 1.0;
    }
    let log_likelihood = |p: f64| -> f64 {
        counts
            .iter()
            .map(|(&(n, parity, ok), &c)| {
                let s = frame_survives(n, p, parity);
                c * if ok {
                    s.ln()
                } else {
                    (1.0 - s).max(1e-300).ln()
                }
            })
            .sum()
    };
    let mut best = (f64::NEG_INFINITY, 0.0);
    for i in 1..=200 {
        let p = f64::from(i) * 0.0025;
        let l = log_likelihood(p);
        if l > best.0 {
            best = (l, p);
        }
    }
    best.1
}

/// What the receiver did with a complete diff.
#[derive(Debug)]
pub enum Delivery<T> {
    /// Applied: the state, its source picture, the decoder's output, the diff's header and its
    /// length (header and payload: the diff as coded, whatever parity packet carried it).
    Shown {
        state: StateId,
        source: u32,
        output: T,
        header: DiffHeader,
        bytes: usize,
    },
    /// Complete but refused (missing base, corrupt, stale): the diff's header if it parses,
    /// and its length.
    Refused {
        state: StateId,
        error: DecodeError,
        header: Option<DiffHeader>,
        bytes: usize,
    },
}

/// Counters of a [`SyncReceiver`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    pub packets: u64,
    /// Packets that did not fit their frame (bad index or count, a byte range that disagrees).
    pub malformed: u64,
    /// Diffs abandoned incomplete.
    pub incomplete: u64,
    /// Diffs rebuilt from their parity packet (one data packet lost).
    pub recovered: u64,
}

#[derive(Debug, Default)]
struct Partial {
    /// Packets, the parity packet included if `protected`.
    count: u16,
    protected: bool,
    pieces: BTreeMap<u16, Vec<u8>>,
}

/// The diff from `data − 1` of its `data` pieces and the parity piece (index `data`): the
/// missing piece is the XOR of the parity and the others, its length what the parity's length
/// field leaves. `None` if the pieces disagree with the length.
fn rebuild(pieces: &BTreeMap<u16, Vec<u8>>, data: u16) -> Option<Vec<u8>> {
    let parity = pieces.get(&data)?;
    let len = u32::from_be_bytes(parity.get(..4)?.try_into().ok()?) as usize;
    let xor = &parity[4..];
    let missing = (0..data).find(|i| !pieces.contains_key(i))?;
    let others: usize = (0..data).filter_map(|i| pieces.get(&i)).map(Vec::len).sum();
    let size = len.checked_sub(others)?;
    if size > xor.len() {
        return None;
    }
    let mut piece = xor[..size].to_vec();
    for (i, b) in pieces.range(..data) {
        debug_assert!(*i != missing);
        for (o, x) in piece.iter_mut().zip(b) {
            *o ^= x;
        }
    }
    let mut diff = Vec::with_capacity(len);
    for i in 0..data {
        match pieces.get(&i) {
            Some(b) => diff.extend_from_slice(b),
            None => diff.extend_from_slice(&piece),
        }
    }
    Some(diff)
}

/// The receiving side of the protocol.
#[derive(Debug)]
pub struct SyncReceiver<D> {
    decoder: StateDecoder<D>,
    partial: BTreeMap<StateId, Partial>,
    lost: StateId,
    /// Bit *i*: state `newest − 1 − i` was applied.
    applied: u32,
    stats: ReceiverStats,
}

impl<D: CodecDecoder> SyncReceiver<D> {
    pub fn new(decoder: D) -> Self {
        SyncReceiver {
            decoder: StateDecoder::new(decoder),
            partial: BTreeMap::new(),
            lost: StateId::INITIAL,
            applied: 0,
            stats: ReceiverStats::default(),
        }
    }

    pub fn decoder(&self) -> &StateDecoder<D> {
        &self.decoder
    }

    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// The report to send now.
    pub fn report(&self) -> SlotReport {
        SlotReport {
            slots: self.decoder.slots(),
            newest: self.decoder.newest(),
            applied: self.applied,
            lost: self.lost,
        }
    }

    /// A packet of state `state` (piece `index` of `count`) with its share of the diff arrived.
    pub fn on_packet(
        &mut self,
        state: StateId,
        index: u16,
        count: u16,
        bytes: &[u8],
    ) -> Option<Delivery<D::Output>> {
        self.stats.packets += 1;
        let protected = count & PARITY_FLAG != 0;
        let count = count & !PARITY_FLAG;
        // A protected diff has at least one data packet and the parity packet.
        let bad = count == 0 || index >= count || (protected && count < 2);
        if bad || state <= self.decoder.newest() || state <= self.lost {
            self.stats.malformed += u64::from(bad);
            return None;
        }
        // First in, first out: a packet of a newer state means every older partial diff is lost.
        let older: Vec<StateId> = self.partial.range(..state).map(|(&s, _)| s).collect();
        for s in older {
            self.partial.remove(&s);
            self.stats.incomplete += 1;
            self.lost = self.lost.max(s);
        }
        let p = self.partial.entry(state).or_default();
        if p.pieces.is_empty() {
            p.count = count;
            p.protected = protected;
        } else if p.count != count || p.protected != protected {
            self.stats.malformed += 1;
            return None;
        }
        p.pieces.insert(index, bytes.to_vec());
        let data = if p.protected { count - 1 } else { count };
        let held = p.pieces.range(..data).count();
        let diff = if held == usize::from(data) {
            let p = self.partial.remove(&state)?;
            p.pieces
                .into_values()
                .take(usize::from(data))
                .flatten()
                .collect()
        } else if p.protected && held + 1 == usize::from(data) && p.pieces.contains_key(&data) {
            let p = self.partial.remove(&state)?;
            match rebuild(&p.pieces, data) {
                Some(d) => {
                    self.stats.recovered += 1;
                    d
                }
                None => {
                    self.stats.malformed += 1;
                    self.lost = self.lost.max(state);
                    return None;
                }
            }
        } else {
            return None;
        };
        let before = self.decoder.newest();
        match self.decoder.apply(&diff) {
            Ok(applied) => {
                // Shift the applied-bitmap to the new newest; the previous newest is applied.
                let shift = applied.header.target.0 - before.0;
                self.applied = if shift >= 32 {
                    0
                } else {
                    self.applied.checked_shl(shift).unwrap_or(0)
                };
                if shift <= 32 && before != StateId::INITIAL {
                    self.applied |= 1 << (shift - 1);
                }
                Some(Delivery::Shown {
                    state: applied.header.target,
                    source: applied.header.source,
                    output: applied.output,
                    header: applied.header,
                    bytes: diff.len(),
                })
            }
            Err(error) => {
                self.lost = self.lost.max(state);
                Some(Delivery::Refused {
                    state,
                    error,
                    header: DiffHeader::parse(&diff).ok().map(|(h, _)| h),
                    bytes: diff.len(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{ModelCodec, ModelDecoder};
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    #[test]
    fn packets_split_evenly_and_budgets_count_headers() {
        let p = packetise(StateId(4), 2500, 1200);
        assert_eq!(
            p.iter().map(|p| p.len).collect::<Vec<_>>(),
            vec![834, 833, 833]
        );
        assert_eq!(p[2].offset, 1667);
        assert!(p.iter().all(|p| p.count == 3 && p.state == StateId(4)));
        // A window of 1240 wire bytes holds one full packet: 1200 diff bytes.
        assert_eq!(diff_budget(1240, 1200, 40), 1200);
        assert_eq!(diff_budget(1241, 1200, 40), 1161);
        assert_eq!(diff_budget(100, 1200, 40), 60);
        assert_eq!(diff_budget(30, 1200, 40), 0);
        for w in 0..5000 {
            let d = diff_budget(w, 1200, 40);
            let wire = d + d.div_ceil(1200).max(1) * 40;
            assert!(d == 0 || wire <= w, "{w}: {d}");
        }
    }

    #[test]
    fn report_round_trip_and_fixed_bytes() {
        let r = SlotReport {
            slots: [StateId(3), StateId(1), StateId(2)],
            newest: StateId(3),
            applied: 0b11,
            lost: StateId(0),
        };
        let mut b = vec![];
        r.emit(&mut b);
        assert_eq!(
            b,
            vec![
                15, 0, 24, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0
            ]
        );
        let mut applied: Vec<StateId> = r.applied_states().collect();
        applied.sort();
        applied.dedup();
        assert_eq!(applied, vec![StateId(1), StateId(2), StateId(3)]);
        assert_eq!(SlotReport::parse(&b).unwrap(), r);
        assert!(SlotReport::parse(&b[..10]).is_err());
        b[0] = 16;
        assert_eq!(SlotReport::parse(&b), Err(WireError::UnknownKind(16)));
    }

    #[test]
    fn the_base_is_the_newest_sent_if_in_time_else_the_newest_acknowledged() {
        let mut s = SyncSender::new(ModelCodec::default(), SyncConfig::default());
        let t = Instant::from_millis(0);
        // First frame: from the implicit black state 0, written to slot 0 and anchor slot 1.
        let f1 = s.on_frame(t, 0, 50_000, true).unwrap();
        assert_eq!(f1.diff.header.base, StateId(0));
        assert_eq!(f1.diff.header.refresh, 0b011);
        let f2 = s
            .on_frame(t + Duration::from_millis(40), 1, 50_000, true)
            .unwrap();
        assert_eq!(
            (f2.diff.header.base, f2.rule),
            (StateId(1), BaseRule::NewestSent)
        );
        // Slot 1's candidate (state 1) is recent and not yet acknowledged: kept.
        assert_eq!(f2.diff.header.refresh, 0b001);
        // Not in time: the newest acknowledged state, still 0 (in slot 2).
        let f3 = s
            .on_frame(t + Duration::from_millis(80), 2, 50_000, false)
            .unwrap();
        assert_eq!(
            (f3.diff.header.base, f3.rule),
            (StateId(0), BaseRule::NewestAcked)
        );
        assert_eq!(f3.diff.header.base_slot, 2);
        // State 1 acknowledged: it is the anchor; slot 2's older state 0 is free.
        s.on_report(&SlotReport {
            slots: [StateId(1), StateId(1), StateId(0)],
            newest: StateId(1),
            applied: 0,
            lost: StateId(0),
        });
        assert_eq!(s.newest_acked(), StateId(1));
        let f4 = s
            .on_frame(t + Duration::from_millis(120), 3, 50_000, false)
            .unwrap();
        assert_eq!(f4.diff.header.base, StateId(1));
        assert_eq!(f4.diff.header.refresh, 0b101);
        // A window too small for anything: skipped, nothing changes.
        assert!(
            s.on_frame(t + Duration::from_millis(160), 4, 30, true)
                .is_none()
        );
        assert_eq!(s.stats().skipped, 1);
        assert_eq!(s.newest_sent(), StateId(4));
        // Reported lost: the newest sent is not used even if "in time".
        s.on_report(&SlotReport {
            slots: [StateId(1), StateId(1), StateId(0)],
            newest: StateId(1),
            applied: 0,
            lost: StateId(4),
        });
        let (base, rule) = s.choose_base(true);
        assert_eq!((base, rule), (StateId(1), BaseRule::NewestAcked));
    }

    #[test]
    fn frame_survival_and_the_parity_budget() {
        // Closed forms: 0.95⁴, and 0.95⁵ + 5·0.05·0.95⁴ with a parity packet.
        assert!((frame_survives(4, 0.05, false) - 0.814_506_25).abs() < 1e-9);
        assert!((frame_survives(4, 0.05, true) - 0.977_407_5).abs() < 1e-6);
        assert_eq!(frame_survives(3, 0.0, false), 1.0);
        // Every budget's data packets and parity packet fit the window, and the budget is the
        // largest that does (one byte more does not).
        for w in (0..12_000).step_by(7) {
            let d = diff_budget_with_parity(w, 1200, 40);
            let wire = |len: usize| parity_wire(len, parity_packets(len, w, 1200, 40), 40);
            // Every diff up to the budget fits (a smaller one may need more packets).
            for len in [d, d / 2, d.saturating_sub(1), 20.min(d)] {
                assert!(len == 0 || wire(len) <= w, "{w}: {len} takes {}", wire(len));
            }
            assert!(wire(d + 1) > w, "{w}: {} would fit", d + 1);
        }
    }

    /// A protected diff, every single packet lost in turn: the receiver rebuilds the same
    /// bytes. Two lost: nothing shown.
    #[test]
    fn a_parity_packet_recovers_any_one_lost_packet() {
        let config = SyncConfig {
            parity: Parity::On,
            ..SyncConfig::default()
        };
        let mut tx = SyncSender::new(ModelCodec::default(), config);
        let f = tx.on_frame(Instant::ZERO, 0, 4000, true).unwrap();
        let n = f.packets.len();
        assert!(n >= 3, "{n} packets");
        assert!(f.packets.iter().all(|p| p.count == n as u16 | PARITY_FLAG));
        let wire: usize = f.packets.iter().map(|p| p.len + 40).sum();
        assert!(wire <= 4000, "{wire}");
        for lost in 0..n {
            let mut rx = SyncReceiver::new(ModelDecoder);
            let mut shown = None;
            for p in f.packets.iter().filter(|p| usize::from(p.index) != lost) {
                if let Some(d) = rx.on_packet(p.state, p.index, p.count, &f.payload(p)) {
                    shown = Some(d);
                }
            }
            // The delivery carries the diff as coded: its length and header, not the bytes of
            // the packets (the parity packet's included) that carried it.
            match shown {
                Some(Delivery::Shown {
                    state: StateId(1),
                    bytes,
                    header,
                    ..
                }) => {
                    assert_eq!(bytes, f.diff.bytes.len(), "{lost}");
                    assert_eq!(header, f.diff.header, "{lost}");
                }
                other => panic!("{lost}: {other:?}"),
            }
            assert_eq!(rx.stats().recovered, u64::from(lost + 1 < n));
        }
        let mut rx = SyncReceiver::new(ModelDecoder);
        for p in &f.packets[2..] {
            assert!(
                rx.on_packet(p.state, p.index, p.count, &f.payload(p))
                    .is_none()
            );
        }
        // A parity packet whose length field disagrees with the pieces: counted, no panic.
        let mut rx = SyncReceiver::new(ModelDecoder);
        let mut bad = f.payload(&f.packets[n - 1]);
        bad[0] = 0xff;
        for p in &f.packets[..n - 2] {
            assert!(
                rx.on_packet(p.state, p.index, p.count, &f.payload(p))
                    .is_none()
            );
        }
        let last = &f.packets[n - 1];
        assert!(
            rx.on_packet(last.state, last.index, last.count, &bad)
                .is_none()
        );
        assert_eq!(rx.stats().malformed, 1);
    }

    /// The loss-aware rule: with no loss measured it is §4's rule; after failed frames whose
    /// base was acknowledged it bases on the acknowledged state when the chain is long.
    #[test]
    fn the_loss_aware_rule_bases_on_the_acknowledged_state_when_the_chain_is_risky() {
        let config = SyncConfig {
            policy: BasePolicy::LossAware,
            ..SyncConfig::default()
        };
        let mut s = SyncSender::new(ModelCodec::default(), config);
        let ms = |m: u64| Instant::ZERO + Duration::from_millis(m);
        let f1 = s.on_frame(ms(0), 0, 6000, true).unwrap();
        assert_eq!(s.loss_estimate(), 0.0);
        let f2 = s.on_frame(ms(40), 1, 6000, true).unwrap();
        assert_eq!(f2.diff.header.base, f1.diff.header.target);
        assert!((s.chain_intact(StateId(2)) - 1.0).abs() < 1e-12);
        // State 1 applied, state 2 (based on the applied 1) lost: a failure of its own packets.
        s.on_report(&SlotReport {
            slots: [StateId(1), StateId(1), StateId(0)],
            newest: StateId(1),
            applied: 0,
            lost: StateId(2),
        });
        let p = s.loss_estimate();
        // One success of n₁ packets and one failure of n₂: the estimate is well above 5%.
        assert!(p > 0.1 && p <= 0.5, "{p}");
        // State 2 is doomed; a new frame goes on the acknowledged state 1.
        let f3 = s.on_frame(ms(80), 2, 6000, true).unwrap();
        assert_eq!(
            (f3.diff.header.base, f3.rule),
            (StateId(1), BaseRule::NewestAcked)
        );
        // State 3 is unacknowledged with ≥ 2 packets at p > 10%: P(intact) < 0.9, so the next
        // frame goes on the acknowledged state too, where §4's rule would take 3.
        assert!(s.chain_intact(StateId(3)) < DEFAULT_MIN_INTACT);
        let f4 = s.on_frame(ms(120), 3, 6000, true).unwrap();
        assert_eq!(f4.diff.header.base, StateId(1));
        assert_eq!(s.stats().chain_risk, 1);
        let paper = SyncSender::new(ModelCodec::default(), SyncConfig::default());
        assert_eq!(paper.config.policy, BasePolicy::Explicit);
    }

    /// What a run returns: the sender, the receiver, the states shown, the missing-base
    /// refusals of diffs based on an acknowledged state, and how many frames based on an
    /// acknowledged state had every packet get through the lossy path.
    type Run = (
        SyncSender<ModelCodec>,
        SyncReceiver<ModelDecoder>,
        Vec<StateId>,
        u64,
        u64,
    );

    /// One run of the protocol over a lossy first-in-first-out path with the model codec.
    fn run(seed: u64, loss: f64, frames: u32, windows: &[usize]) -> Run {
        run_with(SyncConfig::default(), seed, loss, frames, windows)
    }

    /// [`run`] with any sender configuration.
    fn run_with(config: SyncConfig, seed: u64, loss: f64, frames: u32, windows: &[usize]) -> Run {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut tx = SyncSender::new(ModelCodec::default(), config);
        let mut rx = SyncReceiver::new(ModelDecoder);
        let delay = Duration::from_millis(60);
        let frame = Duration::from_millis(40);
        // (arrival, state, index, count, bytes)
        let mut fwd: VecDeque<(Instant, StateId, u16, u16, Vec<u8>)> = VecDeque::new();
        let mut back: VecDeque<(Instant, SlotReport)> = VecDeque::new();
        let mut shown = vec![];
        let mut acked_base_refused = 0;
        let mut whole_on_acked = 0;
        let mut rules: BTreeMap<StateId, BaseRule> = BTreeMap::new();
        let mut last_sent: Option<(StateId, Instant)> = None;
        for k in 0..frames {
            let now = Instant::ZERO + frame * u64::from(k);
            while back.front().is_some_and(|b| b.0 <= now) {
                let (_, r) = back.pop_front().unwrap();
                tx.on_report(&r);
            }
            while fwd.front().is_some_and(|p| p.0 <= now) {
                let (_, st, i, n, b) = fwd.pop_front().unwrap();
                match rx.on_packet(st, i, n, &b) {
                    Some(Delivery::Shown { state, .. }) => shown.push(state),
                    Some(Delivery::Refused {
                        state,
                        error: DecodeError::MissingBase(_),
                        ..
                    }) if rules[&state] == BaseRule::NewestAcked => acked_base_refused += 1,
                    _ => {}
                }
                if !rng.random_bool(loss) {
                    back.push_back((now + delay, rx.report()));
                }
            }
            // "In time": the newest sent has not been outstanding longer than a round trip
            // (a stand-in for Sprout's forecast in this test).
            let in_time =
                last_sent.is_none_or(|(s, t)| s <= tx.newest_acked() || now - t <= delay * 2);
            let window = windows[k as usize % windows.len()];
            // Once an anchor slot holds an acknowledged state past the black state 0, the
            // slot policy keeps one, so no diff is coded from state 0 again.
            let anchored = tx.encoder.slots()[1..]
                .iter()
                .any(|&s| s > StateId::INITIAL && tx.is_acked(s));
            if let Some(f) = tx.on_frame(now, k % 75, window, in_time) {
                assert!(
                    !(anchored && f.diff.header.base == StateId::INITIAL),
                    "state {:?} coded from state 0 with an acknowledged anchor held",
                    f.diff.header.target
                );
                rules.insert(f.diff.header.target, f.rule);
                last_sent = Some((f.diff.header.target, now));
                let mut whole = true;
                for p in &f.packets {
                    if !rng.random_bool(loss) {
                        fwd.push_back((now + delay, p.state, p.index, p.count, f.payload(p)));
                    } else {
                        whole = false;
                    }
                }
                whole_on_acked += u64::from(whole && f.rule == BaseRule::NewestAcked);
            }
        }
        (tx, rx, shown, acked_base_refused, whole_on_acked)
    }

    /// The loss estimate on a long run at 10% packet loss each way, with parity on every frame
    /// and without: near 10% (the estimator sees only frames whose base was held).
    #[test]
    fn the_loss_estimate_finds_the_packet_loss_rate() {
        for parity in [Parity::Off, Parity::On] {
            let config = SyncConfig {
                policy: BasePolicy::LossAware,
                parity,
                ..SyncConfig::default()
            };
            let (tx, ..) = run_with(config, 7, 0.1, 3000, &[5000]);
            let p = tx.loss_estimate();
            assert!((0.06..=0.15).contains(&p), "{parity:?}: {p}");
        }
        let (tx, ..) = run_with(SyncConfig::default(), 7, 0.0, 500, &[5000]);
        assert_eq!(tx.loss_estimate(), 0.0);
    }

    #[test]
    fn without_loss_every_frame_is_shown_on_the_newest_sent() {
        let (tx, rx, shown, ..) = run(1, 0.0, 200, &[20_000]);
        let st = tx.stats();
        assert_eq!(st.frames, 200);
        // (The first from state 0, which counts as the newest sent.)
        assert_eq!(st.on_newest_sent, 200);
        // Every frame but the last two still in flight was shown, in order.
        assert_eq!(shown.len(), 198);
        assert!(shown.windows(2).all(|w| w[1] == StateId(w[0].0 + 1)));
        assert_eq!(rx.decoder().stats().missing_base, 0);
        assert_eq!(st.over_budget, 0);
    }

    /// The input on which the property below once failed in CI (2 Dec 2026) when it asked for
    /// a frame shown whatever the loss: 300 frames coded at 29% loss, none shown.
    #[test]
    fn a_run_where_no_frame_got_through_whole_on_an_acknowledged_base() {
        let (tx, _rx, shown, refused, whole) =
            run(3112720954029707402, 0.2890082163278886, 300, &[10872]);
        assert_eq!(refused, 0);
        assert!(whole == 0 || !shown.is_empty(), "{whole} whole, none shown");
        assert_eq!(tx.stats().frames + tx.stats().skipped, 300);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Under loss: no diff based on an acknowledged state is ever refused for its base; the
        /// receiver keeps showing frames (no intra frame is ever sent: every diff names a base);
        /// what is shown is in order; after the loss stops the stream recovers.
        #[test]
        fn state_sync_survives_loss_without_intra_frames(
            seed in any::<u64>(),
            loss in 0.0f64..0.3,
            windows in proptest::collection::vec(0usize..12_000, 1..20),
        ) {
            let (tx, rx, shown, refused, whole) = run(seed, loss, 300, &windows);
            prop_assert_eq!(refused, 0);
            let st = tx.stats();
            // Once a frame based on an acknowledged state gets through whole, something is
            // shown. (Whether one does is chance: at 29% loss a frame of eight packets arrives
            // whole 6.5% of the time, and the optimistic base rule sends most frames on states
            // not yet acknowledged; seed 3112720954029707402, loss 0.289, windows [10872]
            // coded 300 frames and none got through whole on an acknowledged base. Windows too
            // small for any diff code nothing and show nothing.)
            prop_assert!(whole == 0 || !shown.is_empty(), "{} coded, {whole} whole on an acknowledged base, none shown", st.frames);
            prop_assert!(shown.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(st.over_budget, 0);
            prop_assert_eq!(st.frames + st.skipped, 300);
            // Every state the decoder holds is one the encoder made.
            prop_assert!(rx.decoder().slots().iter().all(|&s| s <= tx.newest_sent()));
            let _ = rx.stats();
        }

        /// The same under the loss-aware rule with parity when loss is measured.
        #[test]
        fn the_loss_aware_rule_with_parity_survives_loss_without_intra_frames(
            seed in any::<u64>(),
            loss in prop_oneof![0.0f64..0.1, 0.1f64..0.3],
            windows in proptest::collection::vec(0usize..12_000, 1..20),
        ) {
            let config = SyncConfig {
                policy: BasePolicy::LossAware,
                parity: Parity::Auto,
                ..SyncConfig::default()
            };
            let (tx, _rx, shown, refused, whole) = run_with(config, seed, loss, 300, &windows);
            prop_assert_eq!(refused, 0);
            let st = tx.stats();
            // As above.
            prop_assert!(whole == 0 || !shown.is_empty(), "{} coded, {whole} whole on an acknowledged base, none shown", st.frames);
            prop_assert!(shown.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(st.over_budget, 0);
            prop_assert_eq!(st.frames + st.skipped, 300);
            // Not asserted: no diff from the black state 0 at all. Until the first anchor past
            // state 0 is acknowledged, state 0 is the only acknowledged state the sender can be
            // sure to hold, and at 10% loss and more the first anchors can be lost several
            // times in a row (200 runs each at 5, 7, 10, 20, 30% loss: 0, 0, 8, 77 and 290 such
            // frames of about 58,000, every one before the first anchor was acknowledged);
            // `run_with` asserts that none comes after it. On the traces at 5% loss there are
            // none (`wisp reproduce alfalfa`'s check).
            prop_assert!(tx.loss_estimate() <= 0.5);
        }

        #[test]
        fn recovery_after_the_loss_stops(seed in any::<u64>(), loss in 0.05f64..0.5) {
            // 150 lossy frames, then 50 clean ones: the stream is shown up to date again.
            let (tx, shown) = run_then_clean(seed, loss);
            let newest = tx.newest_sent();
            prop_assert!(shown.last().is_some_and(|&s| s.0 + 3 >= newest.0),
                "last shown {:?} of {:?}", shown.last(), newest);
        }

        #[test]
        fn arbitrary_packets_never_panic_the_receiver(
            pkts in proptest::collection::vec(
                (0u32..6, 0u16..4, 0u16..4, proptest::collection::vec(any::<u8>(), 0..40)),
                0..20)
        ) {
            let mut rx = SyncReceiver::new(ModelDecoder);
            for (s, i, n, b) in pkts {
                let _ = rx.on_packet(StateId(s), i, n, &b);
            }
            let _ = rx.report();
        }
    }

    /// `run` with loss for 150 frames, then 50 frames without loss.
    fn run_then_clean(seed: u64, loss: f64) -> (SyncSender<ModelCodec>, Vec<StateId>) {
        let (mut tx, mut rx, mut shown, ..) = run(seed, loss, 150, &[8_000]);
        // Continue cleanly: deliver everything with a fixed delay.
        let delay = Duration::from_millis(60);
        let mut fwd: VecDeque<(Instant, StateId, u16, u16, Vec<u8>)> = VecDeque::new();
        let mut back: VecDeque<(Instant, SlotReport)> = VecDeque::new();
        let mut last_sent: Option<(StateId, Instant)> = None;
        for k in 150..200u32 {
            let now = Instant::ZERO + Duration::from_millis(40) * u64::from(k);
            while back.front().is_some_and(|b| b.0 <= now) {
                tx.on_report(&back.pop_front().unwrap().1);
            }
            while fwd.front().is_some_and(|p| p.0 <= now) {
                let (_, st, i, n, b) = fwd.pop_front().unwrap();
                if let Some(Delivery::Shown { state, .. }) = rx.on_packet(st, i, n, &b) {
                    shown.push(state);
                }
                back.push_back((now + delay, rx.report()));
            }
            let in_time =
                last_sent.is_none_or(|(s, t)| s <= tx.newest_acked() || now - t <= delay * 2);
            if let Some(f) = tx.on_frame(now, k % 75, 8_000, in_time) {
                last_sent = Some((f.diff.header.target, now));
                for p in &f.packets {
                    let bytes = f.diff.bytes[p.offset..p.offset + p.len].to_vec();
                    fwd.push_back((now + delay, p.state, p.index, p.count, bytes));
                }
            }
        }
        (tx, shown)
    }
}
