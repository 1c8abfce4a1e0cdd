//! A model codec for fast sweeps: frame sizes and quality from a rate–quality table, no pixels.
//!
//! For quantiser *q* the table gives the mean payload of a frame predicted from the previous
//! picture, *S(q)* bytes, its mean SSIM, *Q(q)* dB, and the payload of a frame predicted from the
//! black initial state, *B(q)* (sizes interpolate geometrically between rows, SSIM linearly). A
//! frame predicted from a base *d* pictures back costs *S(q)·(1 + a·log2 d)* (older references
//! predict worse). The size of picture *i* is scaled by a fixed per-picture complexity factor if
//! one is given (the measured sizes of the clip relative to their mean), so the same clip gives
//! the same sizes every run: the model is deterministic. Quality does not depend on the base
//! (measured chains only).
//!
//! [`RateQuality::bbb_qcif_vp8`] is the table measured with VP8 (libvpx, `wisp-vpx`) on the
//! shipped clip (`media/bigbuckbunny-qcif-3s.y4m`) by
//! `cargo run -p wisp-vpx --release --example rq_curve`: per quantiser a chain of the 75 pictures,
//! each from the previous one's state; the distance cost fitted to frames coded from the golden
//! slot 1–8 pictures back at q = 32 (1.22× at d = 2, 1.55× at 4, 2.21× at 8); the complexity
//! factors are the sizes at q = 32 over their mean.

use super::{Codec, CodecDecoder, Coded, Decoded, DynCodec, DynDecoder, SLOTS, VideoCodecs};

/// One row of a rate–quality table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RqPoint {
    pub quantiser: u8,
    /// Mean payload bytes of a frame predicted from the previous picture.
    pub bytes: f64,
    /// Mean SSIM of such a frame, dB.
    pub ssim_db: f64,
    /// Payload of a frame predicted from the black initial state.
    pub from_black: f64,
}

/// A rate–quality curve and the cost of older and black references.
#[derive(Clone, Debug, PartialEq)]
pub struct RateQuality {
    /// Rows by increasing quantiser.
    pub points: Vec<RqPoint>,
    /// Extra cost per doubling of the reference distance.
    pub distance_cost: f64,
    /// Per-picture size factors (mean 1), cycled over; empty for none.
    pub complexity: Vec<f64>,
}

impl RateQuality {
    /// VP8 on the shipped 176×144 clip (measured; see the module doc).
    pub fn bbb_qcif_vp8() -> Self {
        let p = |quantiser, bytes, ssim_db, from_black| RqPoint {
            quantiser,
            bytes,
            ssim_db,
            from_black,
        };
        RateQuality {
            points: vec![
                p(0, 8429.0, 25.48, 18641.0),
                p(8, 3122.0, 17.51, 10173.0),
                p(16, 1776.0, 14.39, 6976.0),
                p(24, 1207.0, 12.50, 5340.0),
                p(32, 762.0, 10.69, 3839.0),
                p(40, 504.0, 8.94, 2569.0),
                p(48, 301.0, 7.01, 1361.0),
                p(56, 202.0, 5.93, 724.0),
                p(63, 146.0, 4.89, 437.0),
            ],
            distance_cost: 0.32,
            complexity: vec![
                1.00, 0.96, 0.77, 0.67, 0.60, 0.77, 0.86, 0.19, 0.81, 0.88, 0.84, 0.94, 0.95, 1.03,
                1.04, 1.01, 1.02, 1.02, 1.07, 1.13, 1.10, 1.28, 1.26, 1.26, 1.21, 1.07, 1.02, 1.11,
                1.17, 1.18, 1.18, 1.23, 0.19, 1.16, 1.20, 1.34, 1.48, 1.58, 1.64, 1.71, 1.62, 1.68,
                1.58, 1.53, 1.48, 1.50, 1.41, 1.38, 1.37, 1.19, 1.06, 0.99, 0.97, 0.97, 0.97, 0.90,
                0.90, 0.16, 0.81, 0.87, 0.76, 0.80, 0.81, 0.66, 0.67, 0.66, 0.63, 0.62, 0.63, 0.64,
                0.57, 0.63, 0.56, 0.53, 0.55,
            ],
        }
    }

    /// (bytes from the previous picture, SSIM dB, bytes from black) at `q`.
    fn interpolate(&self, q: u8) -> (f64, f64, f64) {
        let pts = &self.points;
        let Some(first) = pts.first() else {
            return (0.0, 0.0, 0.0);
        };
        if q <= first.quantiser {
            return (first.bytes, first.ssim_db, first.from_black);
        }
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            if q <= b.quantiser {
                let t = f64::from(q - a.quantiser) / f64::from(b.quantiser - a.quantiser).max(1.0);
                // Sizes interpolate geometrically (they fall exponentially with q).
                let geo = |x: f64, y: f64| x * (y / x).powf(t);
                return (
                    geo(a.bytes, b.bytes),
                    a.ssim_db + t * (b.ssim_db - a.ssim_db),
                    geo(a.from_black, b.from_black),
                );
            }
        }
        let last = pts[pts.len() - 1];
        (last.bytes, last.ssim_db, last.from_black)
    }

    /// The SSIM of a frame coded at `q`, dB (what a decoder reports of a frame it decoded).
    pub fn ssim_db(&self, q: u8) -> f64 {
        self.interpolate(q).1
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
        let (bytes, ssim, black) = t.interpolate(q);
        let bytes = match self.slots[base_slot] {
            None => black,
            Some(b) => {
                let d = f64::from(source.abs_diff(b).max(1));
                bytes * (1.0 + t.distance_cost * d.log2())
            }
        };
        let c = if t.complexity.is_empty() {
            1.0
        } else {
            t.complexity[source as usize % t.complexity.len()]
        };
        // At least the model's own 5-byte payload header.
        (((bytes * c).round() as usize).max(5), ssim)
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

/// The model codec as a [`VideoCodecs`] (`alfalfa`'s `codec=model`): [`ModelCodec`] over a
/// table, and a decoder whose quality is the table's SSIM at the decoded quantiser (the same
/// value the sender's encoder reported).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelCodecs {
    pub table: RateQuality,
}

impl Default for ModelCodecs {
    fn default() -> Self {
        ModelCodecs {
            table: RateQuality::bbb_qcif_vp8(),
        }
    }
}

/// [`ModelDecoder`] with a [`Decoded`] output.
#[derive(Clone, Copy, Debug, Default)]
struct QuantiserDecoder;

impl CodecDecoder for QuantiserDecoder {
    type Output = Decoded;
    fn decode(&mut self, payload: &[u8], base_slot: usize, refresh: u8) -> Result<Decoded, String> {
        ModelDecoder
            .decode(payload, base_slot, refresh)
            .map(Decoded::Quantiser)
    }
}

impl VideoCodecs for ModelCodecs {
    fn name(&self) -> &'static str {
        "model"
    }
    fn encoder(&self) -> Result<Box<dyn DynCodec>, String> {
        Ok(Box::new(ModelCodec::new(self.table.clone())))
    }
    fn decoder(&self) -> Result<Box<dyn DynDecoder>, String> {
        Ok(Box::new(QuantiserDecoder))
    }
    fn ssim_db(&self, decoded: &Decoded, _source: u32) -> f64 {
        match decoded {
            Decoded::Quantiser(q) => self.table.ssim_db(*q),
            Decoded::Picture { .. } => f64::NAN,
        }
    }
}

/// Pictures in the shipped clip ([`source_ssim_db`]'s table).
pub const SOURCE_PICTURES: u64 = super::bbb_qcif_source_ssim::PICTURES as u64;

/// SSIM (dB) between source pictures `a` and `b` of the shipped clip
/// (`media/bigbuckbunny-qcif-3s.y4m`), each index taken modulo the clip's 75 pictures (the
/// clip loops): the same SSIM as VP8's quality (luma, 8×8 windows, capped at 100 dB for a
/// picture against itself), measured once by `cargo run -p wisp-vpx --release --example
/// source_ssim`. The model codec's displayed-quality approximation
/// ([`super::display::model_quality`]) reads it.
pub fn source_ssim_db(a: u64, b: u64) -> f64 {
    use super::bbb_qcif_source_ssim::{PICTURES, SSIM_DB};
    let n = PICTURES as u64;
    let (a, b) = ((a % n) as usize, (b % n) as usize);
    f64::from(SSIM_DB[a * PICTURES + b])
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
