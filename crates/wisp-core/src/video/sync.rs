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
//! Deviations: the paper's SSP acknowledges states and retransmits nothing, as here, but does
//! not say how the slots of a real codec are managed (its MPEG-2 coder keeps the last two
//! frames); the slot policy above is ours.

use super::{
    Codec, CodecDecoder, DecodeError, Diff, EncodeError, SLOTS, SlotTable, StateDecoder,
    StateEncoder, StateId,
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
}

/// How the sender chooses each diff's base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BasePolicy {
    /// §4's rule with the anchor slots ([`SyncSender::choose_base`]).
    #[default]
    Explicit,
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
        }
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

/// Cuts `len` diff bytes into ⌈len/P⌉ packets of (nearly) equal size, P = `max_payload`.
pub fn packetise(state: StateId, len: usize, max_payload: usize) -> Vec<VideoPacket> {
    let n = len.div_ceil(max_payload.max(1)).max(1);
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
    pub skipped: u64,
    pub on_newest_sent: u64,
    pub on_acked: u64,
    /// Frames whose diff exceeded its budget (never, unless a codec's trial misjudges its size).
    pub over_budget: u64,
    pub diff_bytes: u64,
    /// Diffs coded from the black state 0 after the receiver acknowledged a later one (intra
    /// frames after the first).
    pub intra: u64,
}

/// A coded frame ready to send.
#[derive(Clone, Debug, PartialEq)]
pub struct SentFrame {
    pub diff: Diff,
    pub rule: BaseRule,
    pub packets: Vec<VideoPacket>,
}

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
    written_at: [Option<Instant>; SLOTS],
    stats: SyncStats,
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
            written_at: [None; SLOTS],
            stats: SyncStats::default(),
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
        let keep = self.bases.split_off(&StateId(self.dead.0 + 1));
        self.bases = keep;
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

    /// §4's rule: the newest state sent if it is forecast to arrive in time (and not known
    /// lost), else the newest acknowledged state the encoder still holds.
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
        if newest_in_time && !self.is_doomed(newest) && self.encoder.slot_of(newest).is_some() {
            return (newest, BaseRule::NewestSent);
        }
        let acked = self
            .encoder
            .slots()
            .into_iter()
            .filter(|&s| self.is_acked(s))
            .max()
            // The slot policy keeps an acknowledged anchor; state 0 is acknowledged by definition.
            .unwrap_or(StateId::INITIAL);
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

    /// A picture was captured at `now`: code it within `window` wire bytes, or skip it.
    pub fn on_frame(
        &mut self,
        now: Instant,
        source: u32,
        window: usize,
        newest_in_time: bool,
    ) -> Option<SentFrame> {
        let (base, rule) = self.choose_base(newest_in_time);
        let refresh = self.refresh_mask(now);
        let budget = diff_budget(window, self.config.max_payload, self.config.packet_overhead);
        match self.encoder.encode(source, base, budget, refresh) {
            Ok(diff) => {
                self.bases.insert(diff.header.target, base);
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
                let packets = packetise(
                    diff.header.target,
                    diff.bytes.len(),
                    self.config.max_payload,
                );
                Some(SentFrame {
                    diff,
                    rule,
                    packets,
                })
            }
            Err(
                EncodeError::OverBudget { .. }
                | EncodeError::BaseNotHeld(_)
                | EncodeError::Codec(_),
            ) => {
                self.stats.skipped += 1;
                None
            }
        }
    }
}

/// What the receiver did with a complete diff.
#[derive(Debug)]
pub enum Delivery<T> {
    /// Applied: the state, its source picture, and the decoder's output.
    Shown {
        state: StateId,
        source: u32,
        output: T,
    },
    /// Complete but refused (missing base, corrupt, stale).
    Refused { state: StateId, error: DecodeError },
}

/// Counters of a [`SyncReceiver`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    pub packets: u64,
    /// Packets that did not fit their frame (bad index or count, a byte range that disagrees).
    pub malformed: u64,
    /// Diffs abandoned incomplete.
    pub incomplete: u64,
}

#[derive(Debug, Default)]
struct Partial {
    count: u16,
    pieces: BTreeMap<u16, Vec<u8>>,
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
        if count == 0 || index >= count || state <= self.decoder.newest() || state <= self.lost {
            self.stats.malformed += u64::from(count == 0 || index >= count);
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
        } else if p.count != count {
            self.stats.malformed += 1;
            return None;
        }
        p.pieces.insert(index, bytes.to_vec());
        if p.pieces.len() < usize::from(p.count) {
            return None;
        }
        let p = self.partial.remove(&state)?;
        let diff: Vec<u8> = p.pieces.into_values().flatten().collect();
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
                })
            }
            Err(error) => {
                self.lost = self.lost.max(state);
                Some(Delivery::Refused { state, error })
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

    /// One run of the protocol over a lossy first-in-first-out path with the model codec.
    /// Returns (sender, receiver, shown states, missing-base refusals of diffs based on an
    /// acknowledged state).
    fn run(
        seed: u64,
        loss: f64,
        frames: u32,
        windows: &[usize],
    ) -> (
        SyncSender<ModelCodec>,
        SyncReceiver<ModelDecoder>,
        Vec<StateId>,
        u64,
    ) {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut tx = SyncSender::new(ModelCodec::default(), SyncConfig::default());
        let mut rx = SyncReceiver::new(ModelDecoder);
        let delay = Duration::from_millis(60);
        let frame = Duration::from_millis(40);
        // (arrival, state, index, count, bytes)
        let mut fwd: VecDeque<(Instant, StateId, u16, u16, Vec<u8>)> = VecDeque::new();
        let mut back: VecDeque<(Instant, SlotReport)> = VecDeque::new();
        let mut shown = vec![];
        let mut acked_base_refused = 0;
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
            if let Some(f) = tx.on_frame(now, k % 75, window, in_time) {
                rules.insert(f.diff.header.target, f.rule);
                last_sent = Some((f.diff.header.target, now));
                for p in &f.packets {
                    if !rng.random_bool(loss) {
                        let bytes = f.diff.bytes[p.offset..p.offset + p.len].to_vec();
                        fwd.push_back((now + delay, p.state, p.index, p.count, bytes));
                    }
                }
            }
        }
        (tx, rx, shown, acked_base_refused)
    }

    #[test]
    fn without_loss_every_frame_is_shown_on_the_newest_sent() {
        let (tx, rx, shown, _) = run(1, 0.0, 200, &[20_000]);
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
            let (tx, rx, shown, refused) = run(seed, loss, 300, &windows);
            prop_assert_eq!(refused, 0);
            let st = tx.stats();
            // Windows too small for any diff (e.g. all 0) code nothing, and show nothing; once
            // frames are coded, some are shown.
            prop_assert!(st.frames < 20 || !shown.is_empty(), "{} coded, none shown", st.frames);
            prop_assert!(shown.windows(2).all(|w| w[0] < w[1]));
            prop_assert_eq!(st.over_budget, 0);
            prop_assert_eq!(st.frames + st.skipped, 300);
            // Every state the decoder holds is one the encoder made.
            prop_assert!(rx.decoder().slots().iter().all(|&s| s <= tx.newest_sent()));
            let _ = rx.stats();
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
        let (mut tx, mut rx, mut shown, _) = run(seed, loss, 150, &[8_000]);
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
