//! A model codec for fast sweeps: frame sizes and quality from a rate–quality table, no pixels.
//!
//! For quantiser *q* the table gives the mean payload of a frame predicted from the previous
//! picture, *S(q)* bytes, and its mean SSIM, *Q(q)* dB (linear interpolation between rows). A
//! frame predicted from a base *d* pictures back costs *S(q)·(1 + a·log2 d)* (older references
//! predict worse); from the initial black state it costs *S(q)·k* (all of it intra-like). The
//! size of picture *i* is scaled by a fixed per-picture complexity factor if one is given (the
//! measured sizes of the clip relative to their mean), so the same clip gives the same sizes
//! every run: the model is deterministic.
//!
//! [`RateQuality::bbb_qcif_vp8`] is the table measured with VP8 (libvpx, `wisp-vpx`) on the
//! shipped clip (`media/bigbuckbunny-qcif-3s.y4m`); see `docs/alfalfa.md` for the command.

use super::{Codec, CodecDecoder, Coded, SLOTS};

/// One row of a rate–quality table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RqPoint {
    pub quantiser: u8,
    /// Mean payload bytes of a frame predicted from the previous picture.
    pub bytes: f64,
    /// Mean SSIM of such a frame, dB.
    pub ssim_db: f64,
}

/// A rate–quality curve and the cost of older and black references.
#[derive(Clone, Debug, PartialEq)]
pub struct RateQuality {
    /// Rows by increasing quantiser.
    pub points: Vec<RqPoint>,
    /// Extra cost per doubling of the reference distance.
    pub distance_cost: f64,
    /// Cost of a frame predicted from the black initial state, in frames from the previous
    /// picture.
    pub from_black: f64,
    /// Per-picture size factors (mean 1), cycled over; empty for none.
    pub complexity: Vec<f64>,
}

impl RateQuality {
    /// VP8 on the shipped 176×144 clip (measured; see the module doc).
    pub fn bbb_qcif_vp8() -> Self {
        let p = |quantiser, bytes, ssim_db| RqPoint {
            quantiser,
            bytes,
            ssim_db,
        };
        RateQuality {
            points: vec![
                p(0, 6000.0, 30.0),
                p(16, 2500.0, 22.0),
                p(32, 900.0, 16.0),
                p(48, 350.0, 12.0),
                p(63, 120.0, 9.0),
            ],
            distance_cost: 0.3,
            from_black: 6.0,
            complexity: Vec::new(),
        }
    }

    fn interpolate(&self, q: u8) -> (f64, f64) {
        let pts = &self.points;
        let Some(first) = pts.first() else {
            return (0.0, 0.0);
        };
        if q <= first.quantiser {
            return (first.bytes, first.ssim_db);
        }
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            if q <= b.quantiser {
                let t = f64::from(q - a.quantiser) / f64::from(b.quantiser - a.quantiser).max(1.0);
                // Sizes interpolate geometrically (they fall exponentially with q).
                let bytes = a.bytes * (b.bytes / a.bytes).powf(t);
                return (bytes, a.ssim_db + t * (b.ssim_db - a.ssim_db));
            }
        }
        let last = pts[pts.len() - 1];
        (last.bytes, last.ssim_db)
    }

    /// The coarsest quantiser in the table.
    pub fn max_quantiser(&self) -> u8 {
        self.points.last().map_or(0, |p| p.quantiser)
    }
}

/// The model codec's encoder: it knows which source picture each slot holds.
#[derive(Clone, Debug)]
pub struct ModelCodec {
    table: RateQuality,
    /// Source picture each slot holds (`None`: the black initial state).
    slots: [Option<u32>; SLOTS],
}

impl Default for ModelCodec {
    fn default() -> Self {
        ModelCodec::new(RateQuality::bbb_qcif_vp8())
    }
}

impl ModelCodec {
    pub fn new(table: RateQuality) -> Self {
        ModelCodec {
            table,
            slots: [None; SLOTS],
        }
    }

    fn size(&self, source: u32, base_slot: usize, q: u8) -> (usize, f64) {
        let t = &self.table;
        let (bytes, ssim) = t.interpolate(q);
        let factor = match self.slots[base_slot] {
            None => t.from_black,
            Some(b) => {
                let d = f64::from(source.abs_diff(b).max(1));
                1.0 + t.distance_cost * d.log2()
            }
        };
        let c = if t.complexity.is_empty() {
            1.0
        } else {
            t.complexity[source as usize % t.complexity.len()]
        };
        // At least the model's own 5-byte payload header.
        (((bytes * factor * c).round() as usize).max(5), ssim)
    }
}

impl Codec for ModelCodec {
    fn max_quantiser(&self) -> u8 {
        self.table.max_quantiser()
    }

    fn trial(&mut self, source: u32, base_slot: usize, q: u8) -> Result<usize, String> {
        Ok(self.size(source, base_slot, q).0)
    }

    fn commit(
        &mut self,
        source: u32,
        base_slot: usize,
        refresh: u8,
        q: u8,
    ) -> Result<Coded, String> {
        let (size, ssim_db) = self.size(source, base_slot, q);
        for (i, s) in self.slots.iter_mut().enumerate() {
            if refresh & (1 << i) != 0 {
                *s = Some(source);
            }
        }
        // Payload: the source index and quantiser, then filler to the modelled size.
        let mut payload = Vec::with_capacity(size);
        payload.extend_from_slice(&source.to_be_bytes());
        payload.push(q);
        payload.resize(size, 0);
        Ok(Coded { payload, ssim_db })
    }
}

/// The model codec's decoder: it checks the payload's shape and returns the quantiser.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelDecoder;

impl CodecDecoder for ModelDecoder {
    type Output = u8;
    fn decode(&mut self, payload: &[u8], _base_slot: usize, _refresh: u8) -> Result<u8, String> {
        if payload.len() < 5 {
            return Err(format!("model payload of {} bytes", payload.len()));
        }
        Ok(payload[4])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_with_the_quantiser_and_grow_with_the_reference_distance() {
        let mut c = ModelCodec::default();
        let black = c.trial(0, 0, 20).unwrap();
        c.commit(0, 0, 0b011, 20).unwrap();
        let prev = c.trial(1, 0, 20).unwrap();
        assert!(black > 4 * prev, "{black} vs {prev}");
        c.commit(1, 0, 0b001, 20).unwrap();
        // Slot 1 still holds picture 0; picture 9 is 9 back from it, 8 back from slot 0's.
        assert!(c.trial(9, 1, 20).unwrap() > c.trial(9, 0, 20).unwrap());
        let sizes: Vec<usize> = (0..=63).map(|q| c.trial(2, 0, q).unwrap()).collect();
        assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
        // Deterministic.
        assert_eq!(c.clone().trial(5, 0, 30), c.trial(5, 0, 30));
    }
}
