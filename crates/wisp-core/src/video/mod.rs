//! Alfalfa's explicit-state video layer (Winstein, Sivaraman, Balakrishnan, NSDI 2013, §4),
//! sans-IO.
//!
//! §4 asks a codec for a "video state" object with a *diff* and a *patch*: the application asks
//! for "a diff between any two states, of a requested length", and gets "a bit string that
//! conveys a decoder from one state to another at the quality permitted by the requested length";
//! the receiver "patches" the state it has; a "quality" method gives the fidelity of the result.
//! Here:
//!
//! * [`StateEncoder::encode`]: the next frame as a diff from a base state, in at most `budget`
//!   bytes → a [`Diff`] (its bytes, the target state, its quality in SSIM dB, the overshoot if
//!   even the coarsest quantiser does not fit). It re-encodes at a coarser quantiser while the
//!   frame is over the budget (a search over the codec's quantisers, [`Codec::trial`]).
//! * [`StateDecoder::apply`]: a diff applied to a state the decoder has, or
//!   [`DecodeError::MissingBase`] if it lacks it.
//! * [`sync`]: the state-synchronisation protocol (§5's SSP, made lossy): the sender keeps the
//!   states the receiver acknowledged and picks each frame's base by §4's rule.
//! * [`model`]: a deterministic model codec (frame sizes and quality from a rate–quality table)
//!   for fast sweeps; `wisp-vpx` puts VP8 (libvpx) behind the same [`Codec`] trait.
//! * [`display`]: the displayed metric (what is on screen at each capture instant).
//! * [`y4m`]: the clips.
//!
//! **States and reference slots.** A real codec cannot patch *any* past state: VP8 keeps three
//! reference frames (last, golden, alt-ref), and a frame can be predicted from what is in them.
//! So a state lives in one or more of [`SLOTS`] slots on both sides; a diff names its base state
//! and the slot it is read from, and the slots its target is written to. The decoder checks
//! that the named slot holds the named state, so a diff on a base it lacks is refused, never
//! decoded into garbage. Which states the sender can reach is therefore what its slots hold
//! (see [`sync::SyncSender`] for the slot policy that keeps an acknowledged state reachable).
//!
//! **State 0.** As in §4 (footnote 11: "both sides have an implicit frame 0 that is an all-black
//! frame"), both sides start with state 0, a black picture, in every slot, without sending it: so
//! no intra-coded frame is ever sent. (For VP8 both sides make state 0 by coding a black key
//! frame locally with the same encoder settings.)
//!
//! Deviations: states are identified by a sender-assigned sequence number (1, 2, … per coded
//! frame) and carry the index of the source picture they reconstruct, so that a clip can loop;
//! the base is at most one state (VP8 could mix slots per macroblock; the interface restricts a
//! diff to one base so that "the receiver has the base" is one check).

mod bbb_qcif_source_ssim;
pub mod display;
pub mod log;
pub mod model;
pub mod sync;
pub mod y4m;

use crate::wire::{Reader, WireError, Writer};
use core::fmt;
pub use y4m::{Clip, Picture};

/// Reference slots a state can live in (VP8: last, golden, alt-ref).
pub const SLOTS: usize = 3;

/// A decoder state: the reconstruction of one coded frame. `StateId(0)` is the implicit initial
/// black picture both sides hold from the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StateId(pub u32);

impl StateId {
    /// The implicit initial state (§4 footnote 11).
    pub const INITIAL: StateId = StateId(0);
}

/// The slots of the codec and which state each holds.
pub type SlotTable = [StateId; SLOTS];

/// The generic header of every diff on the wire: 15 bytes ahead of the codec's payload.
///
/// `version: u8 (1)`, `target: u32`, `base: u32`, `source: u32` (the index of the source picture
/// the target reconstructs), `base_slot: u8`, `refresh: u8` (bit *i*: the target is written to
/// slot *i*), then the codec payload. Big-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffHeader {
    pub target: StateId,
    pub base: StateId,
    pub source: u32,
    pub base_slot: u8,
    pub refresh: u8,
}

impl DiffHeader {
    pub const LEN: usize = 15;
    const VERSION: u8 = 1;

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.put_u8(Self::VERSION);
        out.put_u32(self.target.0);
        out.put_u32(self.base.0);
        out.put_u32(self.source);
        out.put_u8(self.base_slot);
        out.put_u8(self.refresh);
    }

    /// Parses the header; returns it and the payload. Never panics.
    pub fn parse(bytes: &[u8]) -> Result<(DiffHeader, &[u8]), WireError> {
        let mut r = Reader::new(bytes);
        if r.u8()? != Self::VERSION {
            return Err(WireError::Invalid("diff version"));
        }
        let h = DiffHeader {
            target: StateId(r.u32()?),
            base: StateId(r.u32()?),
            source: r.u32()?,
            base_slot: r.u8()?,
            refresh: r.u8()?,
        };
        if usize::from(h.base_slot) >= SLOTS {
            return Err(WireError::Invalid("base slot"));
        }
        if h.refresh == 0 || h.refresh >> SLOTS != 0 {
            return Err(WireError::Invalid("refresh mask"));
        }
        if h.target <= h.base {
            return Err(WireError::Invalid("target not after base"));
        }
        let payload = r.bytes(r.remaining())?;
        Ok((h, payload))
    }
}

/// What a codec reports for one coded frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Coded {
    /// The codec payload.
    pub payload: Vec<u8>,
    /// The target's fidelity to the source picture, SSIM in dB (−10·log10(1 − SSIM)).
    pub ssim_db: f64,
}

/// A codec with reference slots, driven by [`StateEncoder`] and [`StateDecoder`].
///
/// Quantisers run from 0 (finest) to [`Codec::max_quantiser`] (coarsest). `trial` must not
/// change any state the decoder depends on (the slots and entropy contexts stay as they were);
/// `commit` codes the frame for real and writes its reconstruction into the slots in `refresh`.
/// An error is the codec library failing (not bad input); the frame is then not sent.
pub trait Codec {
    fn max_quantiser(&self) -> u8;
    /// The payload size of `source` coded from `base_slot` alone at quantiser `q`.
    fn trial(&mut self, source: u32, base_slot: usize, q: u8) -> Result<usize, String>;
    /// Codes `source` from `base_slot` alone at `q` and writes the result into the `refresh`
    /// slots.
    fn commit(
        &mut self,
        source: u32,
        base_slot: usize,
        refresh: u8,
        q: u8,
    ) -> Result<Coded, String>;
}

/// The decoding half of a codec.
pub trait CodecDecoder {
    /// The decoded picture type (`()` for a model that has none).
    type Output;
    /// Decodes a payload predicted from `base_slot` and writes it into the `refresh` slots. An
    /// error leaves the slots as they were.
    fn decode(
        &mut self,
        payload: &[u8],
        base_slot: usize,
        refresh: u8,
    ) -> Result<Self::Output, String>;
}

impl<C: Codec + ?Sized> Codec for Box<C> {
    fn max_quantiser(&self) -> u8 {
        (**self).max_quantiser()
    }
    fn trial(&mut self, source: u32, base_slot: usize, q: u8) -> Result<usize, String> {
        (**self).trial(source, base_slot, q)
    }
    fn commit(
        &mut self,
        source: u32,
        base_slot: usize,
        refresh: u8,
        q: u8,
    ) -> Result<Coded, String> {
        (**self).commit(source, base_slot, refresh, q)
    }
}

impl<D: CodecDecoder + ?Sized> CodecDecoder for Box<D> {
    type Output = D::Output;
    fn decode(
        &mut self,
        payload: &[u8],
        base_slot: usize,
        refresh: u8,
    ) -> Result<Self::Output, String> {
        (**self).decode(payload, base_slot, refresh)
    }
}

/// What a codec chosen at run time ([`VideoCodecs`]) decoded, for the receiver to measure.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// The model codec: no pixels, the quantiser the frame was coded at.
    Quantiser(u8),
    /// A real codec's picture, and whether the frame was an intra (key) frame.
    Picture { picture: Picture, key_frame: bool },
}

/// An encoder chosen at run time.
pub trait DynCodec: Codec + Send + fmt::Debug {}
impl<C: Codec + Send + fmt::Debug> DynCodec for C {}

/// A decoder chosen at run time.
pub trait DynDecoder: CodecDecoder<Output = Decoded> + Send + fmt::Debug {}
impl<D: CodecDecoder<Output = Decoded> + Send + fmt::Debug> DynDecoder for D {}

/// A codec pair made at run time: how a scheme that chooses its codec by name (`alfalfa`'s
/// `codec=model|vp8`) gets one without wisp-core depending on the codec library. The model
/// codec's is [`model::ModelCodecs`]; VP8's is `wisp_vpx::Vp8Codecs`, which the CLI injects
/// (wisp-core is sans-IO and links no codec library).
pub trait VideoCodecs: Send + Sync + fmt::Debug {
    /// The codec's name as the scheme parameter gives it (`model`, `vp8`).
    fn name(&self) -> &'static str;
    /// A fresh encoder whose slots hold state 0.
    fn encoder(&self) -> Result<Box<dyn DynCodec>, String>;
    /// A fresh decoder whose slots hold state 0.
    fn decoder(&self) -> Result<Box<dyn DynDecoder>, String>;
    /// The quality of a decoded frame against source picture `source`, SSIM dB (NaN if it
    /// cannot be measured, e.g. a picture whose size is not the clip's).
    fn ssim_db(&self, decoded: &Decoded, source: u32) -> f64;
}

/// A coded frame: the diff's bytes (header and payload) and what the sender knows of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    pub header: DiffHeader,
    /// The whole diff as sent (header + payload).
    pub bytes: Vec<u8>,
    /// SSIM of the target against the source, dB.
    pub ssim_db: f64,
    /// The quantiser used.
    pub quantiser: u8,
    /// Bytes over the budget (0 if it fits).
    pub overshoot: usize,
    /// How many codings it took (trials + the commit).
    pub attempts: u32,
}

/// Why a frame was not coded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("the base state {0:?} is in no slot")]
    BaseNotHeld(StateId),
    #[error("even the coarsest quantiser needs {min} bytes, over the budget of {budget}")]
    OverBudget { min: usize, budget: usize },
    #[error("the codec failed: {0}")]
    Codec(String),
}

/// The encoding half of the explicit-state interface: a codec and the states its slots hold.
#[derive(Debug)]
pub struct StateEncoder<C> {
    codec: C,
    slots: SlotTable,
    next: u32,
    last_q: Option<u8>,
}

impl<C: Codec> StateEncoder<C> {
    /// An encoder whose slots all hold [`StateId::INITIAL`].
    pub fn new(codec: C) -> Self {
        StateEncoder {
            codec,
            slots: [StateId::INITIAL; SLOTS],
            next: 1,
            last_q: None,
        }
    }

    pub fn codec(&self) -> &C {
        &self.codec
    }

    pub fn codec_mut(&mut self) -> &mut C {
        &mut self.codec
    }

    /// Which state each slot holds.
    pub fn slots(&self) -> SlotTable {
        self.slots
    }

    /// The state the next diff will create.
    pub fn next_state(&self) -> StateId {
        StateId(self.next)
    }

    /// The slot holding `state`, if any (the lowest-numbered one).
    pub fn slot_of(&self, state: StateId) -> Option<usize> {
        self.slots.iter().position(|&s| s == state)
    }

    /// The smallest payload `source` takes from `base` (at the coarsest quantiser), if the base
    /// is held. Changes nothing.
    pub fn min_size(&mut self, source: u32, base: StateId) -> Option<usize> {
        let slot = self.slot_of(base)?;
        let q = self.codec.max_quantiser();
        Some(DiffHeader::LEN + self.codec.trial(source, slot, q).ok()?)
    }

    /// Codes source picture `source` as a diff from `base`, in at most `budget` bytes (header
    /// included), writing the target into the `refresh` slots.
    ///
    /// The quantiser is the finest that fits: a bisection over the codec's quantisers, started
    /// at the previous frame's (each step a [`Codec::trial`], which changes nothing), then one
    /// [`Codec::commit`]. If even the coarsest does not fit, nothing is coded and the error says
    /// how much it would need (the caller skips the frame).
    pub fn encode(
        &mut self,
        source: u32,
        base: StateId,
        budget: usize,
        refresh: u8,
    ) -> Result<Diff, EncodeError> {
        debug_assert!(refresh != 0 && refresh >> SLOTS == 0);
        let slot = self.slot_of(base).ok_or(EncodeError::BaseNotHeld(base))?;
        let payload_budget = budget.saturating_sub(DiffHeader::LEN);
        let qmax = self.codec.max_quantiser();
        let mut attempts = 0;
        let mut fits = |q: u8, codec: &mut C| -> Result<bool, EncodeError> {
            attempts += 1;
            let size = codec.trial(source, slot, q).map_err(EncodeError::Codec)?;
            Ok(size <= payload_budget)
        };
        // Invariant: `hi` fits (once known), every q < `lo` does not.
        let start = self.last_q.unwrap_or(qmax / 2).min(qmax);
        let (mut lo, mut hi) = if fits(start, &mut self.codec)? {
            (0, start)
        } else if start < qmax && fits(qmax, &mut self.codec)? {
            (start + 1, qmax)
        } else {
            let min = self
                .codec
                .trial(source, slot, qmax)
                .map_err(EncodeError::Codec)?;
            return Err(EncodeError::OverBudget {
                min: DiffHeader::LEN + min,
                budget,
            });
        };
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if fits(mid, &mut self.codec)? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let q = hi;
        let coded = self
            .codec
            .commit(source, slot, refresh, q)
            .map_err(EncodeError::Codec)?;
        let header = DiffHeader {
            target: StateId(self.next),
            base,
            source,
            base_slot: slot as u8,
            refresh,
        };
        let mut bytes = Vec::with_capacity(DiffHeader::LEN + coded.payload.len());
        header.emit(&mut bytes);
        bytes.extend_from_slice(&coded.payload);
        for (i, s) in self.slots.iter_mut().enumerate() {
            if refresh & (1 << i) != 0 {
                *s = header.target;
            }
        }
        self.next += 1;
        self.last_q = Some(q);
        Ok(Diff {
            header,
            overshoot: bytes.len().saturating_sub(budget),
            bytes,
            ssim_db: coded.ssim_db,
            quantiser: q,
            attempts: attempts + 1,
        })
    }
}

/// Why a diff was not applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("malformed diff header: {0}")]
    Header(#[from] WireError),
    #[error("the base state {0:?} is not held (slot holds another state)")]
    MissingBase(StateId),
    #[error("state {0:?} is not newer than the newest applied")]
    Stale(StateId),
    #[error("the codec rejected the payload: {0}")]
    Corrupt(String),
}

/// Counters of a [`StateDecoder`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecoderStats {
    pub applied: u64,
    pub missing_base: u64,
    pub corrupt: u64,
    pub stale: u64,
}

/// The decoding half: a codec decoder and the states its slots hold.
#[derive(Debug)]
pub struct StateDecoder<D> {
    codec: D,
    slots: SlotTable,
    newest: StateId,
    stats: DecoderStats,
}

/// A diff that was applied.
#[derive(Debug)]
pub struct Applied<T> {
    pub header: DiffHeader,
    pub output: T,
}

impl<D: CodecDecoder> StateDecoder<D> {
    /// A decoder whose slots all hold [`StateId::INITIAL`].
    pub fn new(codec: D) -> Self {
        StateDecoder {
            codec,
            slots: [StateId::INITIAL; SLOTS],
            newest: StateId::INITIAL,
            stats: DecoderStats::default(),
        }
    }

    pub fn slots(&self) -> SlotTable {
        self.slots
    }

    /// The newest state applied (displayed).
    pub fn newest(&self) -> StateId {
        self.newest
    }

    pub fn stats(&self) -> DecoderStats {
        self.stats
    }

    pub fn holds(&self, state: StateId) -> bool {
        self.slots.contains(&state)
    }

    /// Applies a diff (header and payload). Every refusal is counted in [`StateDecoder::stats`]
    /// and leaves the decoder as it was.
    pub fn apply(&mut self, bytes: &[u8]) -> Result<Applied<D::Output>, DecodeError> {
        let r = self.try_apply(bytes);
        match &r {
            Ok(_) => self.stats.applied += 1,
            Err(DecodeError::MissingBase(_)) => self.stats.missing_base += 1,
            Err(DecodeError::Stale(_)) => self.stats.stale += 1,
            Err(_) => self.stats.corrupt += 1,
        }
        r
    }

    fn try_apply(&mut self, bytes: &[u8]) -> Result<Applied<D::Output>, DecodeError> {
        let (header, payload) = DiffHeader::parse(bytes)?;
        if header.target <= self.newest {
            return Err(DecodeError::Stale(header.target));
        }
        if self.slots[usize::from(header.base_slot)] != header.base {
            return Err(DecodeError::MissingBase(header.base));
        }
        let output = self
            .codec
            .decode(payload, usize::from(header.base_slot), header.refresh)
            .map_err(DecodeError::Corrupt)?;
        for (i, s) in self.slots.iter_mut().enumerate() {
            if header.refresh & (1 << i) != 0 {
                *s = header.target;
            }
        }
        self.newest = header.target;
        Ok(Applied { header, output })
    }
}

#[cfg(test)]
mod tests {
    use super::model::{ModelCodec, ModelDecoder};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn header_round_trip_and_fixed_bytes() {
        let h = DiffHeader {
            target: StateId(7),
            base: StateId(5),
            source: 3,
            base_slot: 1,
            refresh: 0b101,
        };
        let mut b = vec![];
        h.emit(&mut b);
        b.extend_from_slice(&[9, 9]);
        assert_eq!(
            b,
            [1, 0, 0, 0, 7, 0, 0, 0, 5, 0, 0, 0, 3, 1, 0b101, 9, 9].to_vec()
        );
        assert_eq!(DiffHeader::parse(&b).unwrap(), (h, &[9u8, 9][..]));
        // Bad slot, empty refresh, target not after base, truncation.
        let mut bad = b.clone();
        bad[13] = 3;
        assert!(DiffHeader::parse(&bad).is_err());
        let mut bad = b.clone();
        bad[14] = 0;
        assert!(DiffHeader::parse(&bad).is_err());
        let mut bad = b.clone();
        bad[4] = 5;
        assert!(DiffHeader::parse(&bad).is_err());
        assert!(DiffHeader::parse(&b[..10]).is_err());
    }

    #[test]
    fn the_finest_quantiser_that_fits_is_chosen() {
        let mut enc = StateEncoder::new(ModelCodec::default());
        // A generous budget: the finest quantiser; a tight one: coarser, still within it.
        let big = enc.encode(0, StateId::INITIAL, 1_000_000, 0b011).unwrap();
        assert_eq!(big.quantiser, 0);
        assert_eq!(big.header.target, StateId(1));
        assert_eq!(enc.slots(), [StateId(1), StateId(1), StateId(0)]);
        let small = enc.encode(1, StateId(1), 400, 0b001).unwrap();
        assert!(small.bytes.len() <= 400, "{}", small.bytes.len());
        assert!(small.quantiser > 0);
        assert_eq!(small.overshoot, 0);
        // One quantiser finer would not have fitted.
        let finer = DiffHeader::LEN
            + enc
                .codec_mut()
                .trial(1, 0, small.quantiser.saturating_sub(1))
                .unwrap();
        assert!(finer > 400, "{finer}");
        assert!(small.ssim_db < big.ssim_db);
        // Too small for anything: nothing is coded, the state does not advance.
        let err = enc.encode(2, StateId(2), 20, 0b001).unwrap_err();
        assert!(matches!(err, EncodeError::OverBudget { budget: 20, .. }));
        assert_eq!(enc.next_state(), StateId(3));
        // A base that is in no slot.
        assert_eq!(
            enc.encode(2, StateId(9), 10_000, 1),
            Err(EncodeError::BaseNotHeld(StateId(9)))
        );
    }

    #[test]
    fn the_decoder_refuses_a_missing_base_and_garbage_and_counts_them() {
        let mut enc = StateEncoder::new(ModelCodec::default());
        let mut dec = StateDecoder::new(ModelDecoder);
        let d1 = enc.encode(0, StateId(0), 5000, 0b001).unwrap();
        let d2 = enc.encode(1, StateId(1), 5000, 0b001).unwrap();
        // d1 lost: d2's base (state 1 in slot 0) is missing.
        assert_eq!(
            dec.apply(&d2.bytes).unwrap_err(),
            DecodeError::MissingBase(StateId(1))
        );
        assert!(matches!(dec.apply(&[1, 2, 3]), Err(DecodeError::Header(_))));
        dec.apply(&d1.bytes).unwrap();
        dec.apply(&d2.bytes).unwrap();
        assert_eq!(dec.newest(), StateId(2));
        // A replayed diff is stale.
        assert_eq!(
            dec.apply(&d1.bytes).unwrap_err(),
            DecodeError::Stale(StateId(1))
        );
        assert_eq!(
            dec.stats(),
            DecoderStats {
                applied: 2,
                missing_base: 1,
                corrupt: 1,
                stale: 1
            }
        );
    }

    proptest! {
        #[test]
        fn arbitrary_diffs_never_panic_the_decoder(
            bytes in proptest::collection::vec(any::<u8>(), 0..64)
        ) {
            let mut dec = StateDecoder::new(ModelDecoder);
            let _ = dec.apply(&bytes);
            let mut with_header = vec![1u8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
            with_header.extend_from_slice(&bytes);
            let _ = dec.apply(&with_header);
        }
    }
}

/// A codec implementation given from outside wisp-core (VP8 from `wisp-vpx`, which the CLI
/// injects), to a video scheme's configuration or through the
/// [`SchemeContext`](crate::scheme::SchemeContext). It never makes two configurations differ:
/// the `codec` parameter does.
#[derive(Clone, Debug)]
pub struct InjectedCodecs(pub std::sync::Arc<dyn VideoCodecs>);

impl PartialEq for InjectedCodecs {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// Which codec the video layer runs: `model` (sizes and SSIM from a rate–quality table,
/// [`crate::video::model`]) or `vp8` (libvpx, through `wisp-vpx`; the CLI provides it with
/// `--video CLIP`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VideoCodec {
    #[default]
    Model,
    Vp8,
}

impl VideoCodec {
    /// The parameter's value (`model`, `vp8`).
    pub fn name(self) -> &'static str {
        match self {
            VideoCodec::Model => "model",
            VideoCodec::Vp8 => "vp8",
        }
    }
}
