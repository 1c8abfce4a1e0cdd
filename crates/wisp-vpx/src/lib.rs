//! VP8 (libvpx) behind wisp's explicit-state video interface (Alfalfa, NSDI 2013, §4), and SSIM.
//!
//! [`Vp8Codec`] implements [`wisp_core::video::Codec`] and [`Vp8Decoder`]
//! [`wisp_core::video::CodecDecoder`], so [`wisp_core::video::StateEncoder`] and
//! [`wisp_core::video::sync`] drive VP8 exactly as they drive the model codec.
//!
//! **Which states VP8 can reach.** VP8 predicts from three reference frames: last, golden and
//! alt-ref — wisp's slots 0, 1 and 2. A frame may be predicted from any state one of these holds,
//! not from any past frame. Each frame is coded with libvpx's per-frame flags:
//! `VP8_EFLAG_NO_REF_*` for every slot but the base's (so the frame depends on the base state
//! alone), `VP8_EFLAG_NO_UPD_*` for every slot the target is not written to and
//! `VP8_EFLAG_FORCE_GF`/`_ARF` for those it is, and `VP8_EFLAG_NO_UPD_ENTROPY` always, so the
//! entropy contexts stay those of the initial key frame and a lost frame leaves nothing but the
//! slots it would have written out of date.
//!
//! libvpx runs in error-resilient mode (`g_error_resilient`): without it VP8's encoder keeps
//! state outside the three slots (measured: a receiver that had missed frames showed a picture
//! different from a loss-free receiver's for the same state, `tests/state_sync.rs`); with it
//! every state a receiver shows is bit-exact the sender's.
//!
//! **State 0.** Both sides start from a black key frame coded by this encoder
//! ([`Vp8Codec::state0`]) and never sent: the first frame on the wire is already predicted (from
//! black), so the stream carries no intra frame at all (libvpx's automatic key frames are off,
//! and [`Vp8Stats::key_frames`] counts any that appear).
//!
//! **Meeting a budget.** The quantiser (libvpx's 0–63 scale) is fixed per frame by setting the
//! rate control's minimum and maximum to it; [`wisp_core::video::StateEncoder`] searches for the
//! finest that fits with trial encodes that write no slot and no entropy update, then codes the
//! frame once more for real. A trial still moves libvpx's internal counters (its frame count, its
//! motion-search history), which change its choices but never what a decoder needs; the real
//! coding can therefore differ from its trial by a few bytes, reported as overshoot.
//!
//! **Determinism.** One thread (`g_threads = 1`) and a fixed speed ([`Vp8Options::cpu_used`]
//! negative, −8 by default): in realtime mode a positive value lets VP8 choose its speed from
//! the wall-clock time past frames took, and the same run then codes different bytes on a loaded
//! machine. With both, the same frames and budgets give the same bytes.
//!
//! **Quality.** A mirror decoder on the sending side decodes every coded frame, which gives the
//! target's reconstruction; [`ssim`] compares its luma plane with the source's: SSIM over 8×8
//! windows (Wang et al. 2004; `image-compare`'s `MSSIMSimple`), reported in dB as
//! −10·log10(1 − SSIM).
//!
//! Deviations from the paper: VP8, not MPEG-2 (§5); the black initial state is a key frame both
//! sides code, not a convention inside the codec (§4 footnote 11).

//!
//! **Optional.** Everything here is behind the `libvpx` feature (off by default; `wisp-cli`'s
//! `vp8` feature turns it on): without it the crate is empty and builds on a machine with no
//! libvpx, and `wisp` refuses `codec=vp8` with one line that says how to get it.

// Without libvpx there is nothing to build (and the links of the text above lead nowhere).
#![cfg_attr(not(feature = "libvpx"), allow(rustdoc::broken_intra_doc_links))]
#![cfg(feature = "libvpx")]
// The libvpx calls are FFI; each unsafe block states what it relies on.
#![allow(unsafe_code)]

use image::GrayImage;
use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_long, c_uint, c_ulong};
use std::sync::Arc;
use vpx_sys as sys;
use wisp_core::video::{
    Clip, Codec, CodecDecoder, Coded, Decoded, DynCodec, DynDecoder, Picture, SLOTS, VideoCodecs,
};

/// An error from libvpx.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("libvpx {call}: {message}")]
pub struct VpxError {
    pub call: &'static str,
    pub message: String,
}

fn check(
    ctx: *mut sys::vpx_codec_ctx_t,
    call: &'static str,
    err: sys::vpx_codec_err_t,
) -> Result<(), VpxError> {
    if err == sys::vpx_codec_err_t::VPX_CODEC_OK {
        return Ok(());
    }
    // SAFETY: vpx_codec_err_to_string returns a static string; vpx_codec_error_detail returns
    // NULL or a string owned by the context, copied before any other call.
    let message = unsafe {
        let mut m = CStr::from_ptr(sys::vpx_codec_err_to_string(err))
            .to_string_lossy()
            .into_owned();
        if !ctx.is_null() {
            let d = sys::vpx_codec_error_detail(ctx);
            if !d.is_null() {
                m.push_str(": ");
                m.push_str(&CStr::from_ptr(d).to_string_lossy());
            }
        }
        m
    };
    Err(VpxError { call, message })
}

const NO_REF: [u32; SLOTS] = [
    sys::VP8_EFLAG_NO_REF_LAST,
    sys::VP8_EFLAG_NO_REF_GF,
    sys::VP8_EFLAG_NO_REF_ARF,
];
const NO_UPD: [u32; SLOTS] = [
    sys::VP8_EFLAG_NO_UPD_LAST,
    sys::VP8_EFLAG_NO_UPD_GF,
    sys::VP8_EFLAG_NO_UPD_ARF,
];
/// Forcing the update of a slot (last is updated unless told not to).
const FORCE_UPD: [u32; SLOTS] = [0, sys::VP8_EFLAG_FORCE_GF, sys::VP8_EFLAG_FORCE_ARF];

/// libvpx's flags for a frame predicted from `base_slot` alone and written into `refresh`
/// (`None`: a trial, written nowhere).
pub fn frame_flags(base_slot: usize, refresh: Option<u8>) -> u32 {
    let mut f = sys::VP8_EFLAG_NO_UPD_ENTROPY;
    for i in 0..SLOTS {
        if i != base_slot {
            f |= NO_REF[i];
        }
        match refresh {
            Some(r) if r & (1 << i) != 0 => f |= FORCE_UPD[i],
            _ => f |= NO_UPD[i],
        }
    }
    f
}

/// A VP8 encoder at a fixed quantiser per frame.
struct Encoder {
    ctx: Box<sys::vpx_codec_ctx_t>,
    cfg: sys::vpx_codec_enc_cfg_t,
    img: *mut sys::vpx_image_t,
    width: usize,
    height: usize,
    pts: i64,
    q: Option<u8>,
}

impl std::fmt::Debug for Encoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Encoder({}×{}, q {:?})", self.width, self.height, self.q)
    }
}

impl Encoder {
    fn new(width: usize, height: usize, cpu_used: i32) -> Result<Self, VpxError> {
        // SAFETY: the config is filled by libvpx before use; the context is zeroed and
        // initialised by vpx_codec_enc_init_ver, boxed so that its address is stable; the image
        // is allocated by libvpx and freed in Drop.
        unsafe {
            let iface = sys::vpx_codec_vp8_cx();
            let mut cfg = MaybeUninit::<sys::vpx_codec_enc_cfg_t>::zeroed();
            check(
                std::ptr::null_mut(),
                "enc_config_default",
                sys::vpx_codec_enc_config_default(iface, cfg.as_mut_ptr(), 0),
            )?;
            let mut cfg = cfg.assume_init();
            cfg.g_w = width as c_uint;
            cfg.g_h = height as c_uint;
            cfg.g_threads = 1;
            cfg.g_timebase = sys::vpx_rational { num: 1, den: 30 };
            cfg.g_lag_in_frames = 0;
            cfg.g_error_resilient = 1;
            cfg.rc_end_usage = sys::vpx_rc_mode::VPX_CBR;
            cfg.rc_target_bitrate = 10_000;
            cfg.rc_dropframe_thresh = 0;
            cfg.rc_resize_allowed = 0;
            cfg.rc_min_quantizer = 32;
            cfg.rc_max_quantizer = 32;
            cfg.kf_mode = sys::vpx_kf_mode::VPX_KF_DISABLED;
            cfg.kf_min_dist = 0;
            cfg.kf_max_dist = u32::MAX >> 1;
            let mut ctx: Box<sys::vpx_codec_ctx_t> = Box::new(MaybeUninit::zeroed().assume_init());
            check(
                std::ptr::null_mut(),
                "enc_init",
                sys::vpx_codec_enc_init_ver(
                    &mut *ctx,
                    iface,
                    &cfg,
                    0,
                    sys::VPX_ENCODER_ABI_VERSION as c_int,
                ),
            )?;
            let mut enc = Encoder {
                ctx,
                cfg,
                img: std::ptr::null_mut(),
                width,
                height,
                pts: 0,
                q: Some(32),
            };
            check(
                &mut *enc.ctx,
                "control(CPUUSED)",
                sys::vpx_codec_control_(
                    &mut *enc.ctx,
                    sys::vp8e_enc_control_id::VP8E_SET_CPUUSED as c_int,
                    cpu_used as c_int,
                ),
            )?;
            enc.img = sys::vpx_img_alloc(
                std::ptr::null_mut(),
                sys::vpx_img_fmt::VPX_IMG_FMT_I420,
                width as c_uint,
                height as c_uint,
                16,
            );
            if enc.img.is_null() {
                return Err(VpxError {
                    call: "img_alloc",
                    message: "out of memory".into(),
                });
            }
            Ok(enc)
        }
    }

    fn set_q(&mut self, q: u8) -> Result<(), VpxError> {
        if self.q == Some(q) {
            return Ok(());
        }
        self.cfg.rc_min_quantizer = c_uint::from(q);
        self.cfg.rc_max_quantizer = c_uint::from(q);
        // SAFETY: the context was initialised in `new`; the config outlives the call.
        let err = unsafe { sys::vpx_codec_enc_config_set(&mut *self.ctx, &self.cfg) };
        check(&mut *self.ctx, "enc_config_set", err)?;
        self.q = Some(q);
        Ok(())
    }

    /// Codes `picture` with libvpx's frame `flags`; returns the frame and whether it is a key
    /// frame.
    fn encode(
        &mut self,
        picture: &Picture,
        flags: u32,
        q: u8,
    ) -> Result<(Vec<u8>, bool), VpxError> {
        self.set_q(q)?;
        let (cw, ch) = Picture::chroma_size(self.width, self.height);
        // SAFETY: the image was allocated in `new` for this size in I420: plane p has
        // `stride[p]` bytes per row and at least `rows` rows; the copies stay inside both.
        unsafe {
            let img = &mut *self.img;
            for (p, (src, w, rows)) in [
                (&picture.y, self.width, self.height),
                (&picture.u, cw, ch),
                (&picture.v, cw, ch),
            ]
            .into_iter()
            .enumerate()
            {
                let stride = img.stride[p] as usize;
                for r in 0..rows {
                    std::ptr::copy_nonoverlapping(
                        src.as_ptr().add(r * w),
                        img.planes[p].add(r * stride),
                        w,
                    );
                }
            }
            let err = sys::vpx_codec_encode(
                &mut *self.ctx,
                self.img,
                self.pts,
                1,
                flags as sys::vpx_enc_frame_flags_t,
                sys::VPX_DL_REALTIME as c_ulong,
            );
            check(&mut *self.ctx, "encode", err)?;
            self.pts += 1;
            let mut out = Vec::new();
            let mut key = false;
            let mut iter: sys::vpx_codec_iter_t = std::ptr::null();
            loop {
                let pkt = sys::vpx_codec_get_cx_data(&mut *self.ctx, &mut iter);
                if pkt.is_null() {
                    break;
                }
                if (*pkt).kind == sys::vpx_codec_cx_pkt_kind::VPX_CODEC_CX_FRAME_PKT {
                    let f = (*pkt).data.frame;
                    out.extend_from_slice(std::slice::from_raw_parts(
                        f.buf as *const u8,
                        f.sz as usize,
                    ));
                    key |= f.flags & sys::VPX_FRAME_IS_KEY != 0;
                }
            }
            Ok((out, key))
        }
    }
}

// SAFETY: a libvpx context and its image are plain heap state owned by this value, with no
// thread affinity (no thread-local storage, no callbacks); moving them to another thread is
// sound as long as one thread uses them at a time, which `&mut self` ensures.
unsafe impl Send for Encoder {}

impl Drop for Encoder {
    fn drop(&mut self) {
        // SAFETY: both were created in `new` and are released once.
        unsafe {
            if !self.img.is_null() {
                sys::vpx_img_free(self.img);
            }
            sys::vpx_codec_destroy(&mut *self.ctx);
        }
    }
}

/// A VP8 decoder.
struct Decoder {
    ctx: Box<sys::vpx_codec_ctx_t>,
}

impl std::fmt::Debug for Decoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Decoder")
    }
}

impl Decoder {
    fn new() -> Result<Self, VpxError> {
        // SAFETY: the context is zeroed, boxed for a stable address, initialised by libvpx.
        unsafe {
            let mut ctx: Box<sys::vpx_codec_ctx_t> = Box::new(MaybeUninit::zeroed().assume_init());
            let cfg = sys::vpx_codec_dec_cfg_t {
                threads: 1,
                w: 0,
                h: 0,
            };
            check(
                std::ptr::null_mut(),
                "dec_init",
                sys::vpx_codec_dec_init_ver(
                    &mut *ctx,
                    sys::vpx_codec_vp8_dx(),
                    &cfg,
                    0,
                    sys::VPX_DECODER_ABI_VERSION as c_int,
                ),
            )?;
            Ok(Decoder { ctx })
        }
    }

    fn decode(&mut self, data: &[u8]) -> Result<Picture, VpxError> {
        if data.is_empty() {
            // libvpx treats an empty buffer as "flush", not as a frame.
            return Err(VpxError {
                call: "decode",
                message: "empty frame".into(),
            });
        }
        // SAFETY: `data` is valid for its length during the call; the returned image belongs to
        // the decoder and is copied (within its d_w × d_h and strides) before the next call.
        unsafe {
            let err = sys::vpx_codec_decode(
                &mut *self.ctx,
                data.as_ptr(),
                data.len() as c_uint,
                std::ptr::null_mut(),
                0 as c_long,
            );
            check(&mut *self.ctx, "decode", err)?;
            let mut iter: sys::vpx_codec_iter_t = std::ptr::null();
            let img = sys::vpx_codec_get_frame(&mut *self.ctx, &mut iter);
            if img.is_null() {
                return Err(VpxError {
                    call: "get_frame",
                    message: "no picture".into(),
                });
            }
            let img = &*img;
            if img.fmt != sys::vpx_img_fmt::VPX_IMG_FMT_I420 {
                return Err(VpxError {
                    call: "get_frame",
                    message: format!("unexpected format {:?}", img.fmt),
                });
            }
            let (w, h) = (img.d_w as usize, img.d_h as usize);
            let (cw, ch) = Picture::chroma_size(w, h);
            let plane = |p: usize, pw: usize, ph: usize| {
                let stride = img.stride[p] as usize;
                let mut v = Vec::with_capacity(pw * ph);
                for r in 0..ph {
                    v.extend_from_slice(std::slice::from_raw_parts(
                        img.planes[p].add(r * stride),
                        pw,
                    ));
                }
                v
            };
            Ok(Picture {
                width: w,
                height: h,
                y: plane(0, w, h),
                u: plane(1, cw, ch),
                v: plane(2, cw, ch),
            })
        }
    }
}

// SAFETY: as for `Encoder`: the context is owned heap state without thread affinity.
unsafe impl Send for Decoder {}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: created in `new`, released once.
        unsafe {
            sys::vpx_codec_destroy(&mut *self.ctx);
        }
    }
}

/// SSIM of two pictures' luma planes (8×8 windows; 1 for identical pictures).
pub fn ssim(a: &Picture, b: &Picture) -> f64 {
    let img = |p: &Picture| GrayImage::from_raw(p.width as u32, p.height as u32, p.y.clone());
    match (img(a), img(b)) {
        (Some(x), Some(y)) => {
            image_compare::gray_similarity_structure(&image_compare::Algorithm::MSSIMSimple, &x, &y)
                .map_or(0.0, |s| s.score)
        }
        _ => 0.0,
    }
}

/// SSIM in dB: −10·log10(1 − SSIM), capped at 100 dB for identical pictures.
pub fn ssim_db(ssim: f64) -> f64 {
    (-10.0 * (1.0 - ssim).max(1e-10).log10()).min(100.0)
}

/// Settings of [`Vp8Codec`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vp8Options {
    /// libvpx's speed/quality trade-off, −16..16. Negative: a fixed speed of −`cpu_used`
    /// (higher: faster). Positive: in realtime mode (which wisp codes in) VP8 picks its speed
    /// from the measured encode time of past frames (`vp8_auto_select_speed`), so the bytes it
    /// codes depend on the machine's load — not deterministic; measured: two identical
    /// simulator runs side by side differed.
    pub cpu_used: i32,
    /// The quantiser of the black initial key frame.
    pub state0_q: u8,
}

impl Default for Vp8Options {
    fn default() -> Self {
        Vp8Options {
            cpu_used: -8,
            state0_q: 32,
        }
    }
}

/// Counters of [`Vp8Codec`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vp8Stats {
    pub trials: u64,
    pub commits: u64,
    /// Key frames libvpx produced after state 0 (none expected).
    pub key_frames: u64,
}

/// VP8 as an explicit-state [`Codec`] over a clip.
#[derive(Debug)]
pub struct Vp8Codec {
    encoder: Encoder,
    mirror: Decoder,
    clip: Arc<Clip>,
    state0: Vec<u8>,
    stats: Vp8Stats,
}

impl Vp8Codec {
    /// An encoder for `clip` whose slots hold the black state 0.
    pub fn new(clip: Arc<Clip>, options: Vp8Options) -> Result<Self, VpxError> {
        let (w, h) = (clip.width, clip.height);
        let mut encoder = Encoder::new(w, h, options.cpu_used)?;
        let black = Picture::filled(w, h, 16, 128, 128);
        let (state0, key) = encoder.encode(&black, sys::VPX_EFLAG_FORCE_KF, options.state0_q)?;
        debug_assert!(key);
        let mut mirror = Decoder::new()?;
        mirror.decode(&state0)?;
        Ok(Vp8Codec {
            encoder,
            mirror,
            clip,
            state0,
            stats: Vp8Stats::default(),
        })
    }

    /// The black key frame both sides start from (never sent; the receiver's decoder is built
    /// from it, [`Vp8Decoder::new`]).
    pub fn state0(&self) -> &[u8] {
        &self.state0
    }

    pub fn stats(&self) -> Vp8Stats {
        self.stats
    }

    pub fn clip(&self) -> &Arc<Clip> {
        &self.clip
    }

    fn picture(&self, source: u32) -> &Picture {
        &self.clip.frames[source as usize % self.clip.frames.len()]
    }
}

impl Codec for Vp8Codec {
    fn max_quantiser(&self) -> u8 {
        63
    }

    fn trial(&mut self, source: u32, base_slot: usize, q: u8) -> Result<usize, String> {
        self.stats.trials += 1;
        let pic = self.picture(source).clone();
        let (bytes, key) = self
            .encoder
            .encode(&pic, frame_flags(base_slot, None), q)
            .map_err(|e| e.to_string())?;
        self.stats.key_frames += u64::from(key);
        Ok(bytes.len())
    }

    fn commit(
        &mut self,
        source: u32,
        base_slot: usize,
        refresh: u8,
        q: u8,
    ) -> Result<Coded, String> {
        self.stats.commits += 1;
        let pic = self.picture(source).clone();
        let (payload, key) = self
            .encoder
            .encode(&pic, frame_flags(base_slot, Some(refresh)), q)
            .map_err(|e| e.to_string())?;
        self.stats.key_frames += u64::from(key);
        let recon = self.mirror.decode(&payload).map_err(|e| e.to_string())?;
        Ok(Coded {
            payload,
            ssim_db: ssim_db(ssim(&recon, &pic)),
        })
    }
}

/// The receiving side: a VP8 decoder started from state 0.
#[derive(Debug)]
pub struct Vp8Decoder {
    decoder: Decoder,
}

impl Vp8Decoder {
    /// A decoder holding state 0 (`state0`: [`Vp8Codec::state0`]).
    pub fn new(state0: &[u8]) -> Result<Self, VpxError> {
        let mut decoder = Decoder::new()?;
        decoder.decode(state0)?;
        Ok(Vp8Decoder { decoder })
    }
}

impl CodecDecoder for Vp8Decoder {
    type Output = Picture;
    fn decode(
        &mut self,
        payload: &[u8],
        _base_slot: usize,
        _refresh: u8,
    ) -> Result<Picture, String> {
        self.decoder.decode(payload).map_err(|e| e.to_string())
    }
}

/// VP8 as a [`VideoCodecs`]: what `alfalfa:codec=vp8` runs (the CLI injects it, since
/// wisp-core links no codec library). Encoders code `clip`; decoders start from the same black
/// state 0 and report each picture they decode ([`Decoded::Picture`], a key frame if the VP8
/// frame tag says so); quality is [`ssim`] of the decoded picture against its source picture in
/// `clip` (the index the diff header carries, modulo the clip's length, as the encoder reads it).
#[derive(Debug)]
pub struct Vp8Codecs {
    clip: Arc<Clip>,
    options: Vp8Options,
    state0: Vec<u8>,
}

impl Vp8Codecs {
    pub fn new(clip: Arc<Clip>, options: Vp8Options) -> Result<Self, VpxError> {
        if clip.frames.is_empty() {
            return Err(VpxError {
                call: "clip",
                message: "the clip has no picture".into(),
            });
        }
        let state0 = Vp8Codec::new(clip.clone(), options)?.state0;
        Ok(Vp8Codecs {
            clip,
            options,
            state0,
        })
    }

    /// The black key frame every encoder and decoder made here starts from.
    pub fn state0(&self) -> &[u8] {
        &self.state0
    }
}

/// [`Vp8Decoder`] with a [`Decoded`] output.
#[derive(Debug)]
struct PictureDecoder(Vp8Decoder);

impl CodecDecoder for PictureDecoder {
    type Output = Decoded;
    fn decode(&mut self, payload: &[u8], base_slot: usize, refresh: u8) -> Result<Decoded, String> {
        let picture = self.0.decode(payload, base_slot, refresh)?;
        // VP8's frame tag (RFC 6386 §9.1): bit 0 of the first byte is 0 for a key frame.
        let key_frame = payload.first().is_some_and(|b| b & 1 == 0);
        Ok(Decoded::Picture { picture, key_frame })
    }
}

impl VideoCodecs for Vp8Codecs {
    fn name(&self) -> &'static str {
        "vp8"
    }
    fn encoder(&self) -> Result<Box<dyn DynCodec>, String> {
        Ok(Box::new(
            Vp8Codec::new(self.clip.clone(), self.options).map_err(|e| e.to_string())?,
        ))
    }
    fn decoder(&self) -> Result<Box<dyn DynDecoder>, String> {
        Ok(Box::new(PictureDecoder(
            Vp8Decoder::new(&self.state0).map_err(|e| e.to_string())?,
        )))
    }
    fn ssim_db(&self, decoded: &Decoded, source: u32) -> f64 {
        let Decoded::Picture { picture, .. } = decoded else {
            return f64::NAN;
        };
        let src = &self.clip.frames[source as usize % self.clip.frames.len()];
        if (picture.width, picture.height) != (src.width, src.height) {
            return f64::NAN;
        }
        ssim_db(ssim(picture, src))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_reference_the_base_alone_and_write_the_refresh_slots() {
        let f = frame_flags(1, Some(0b101));
        assert_eq!(f & sys::VP8_EFLAG_NO_REF_GF, 0);
        assert_ne!(f & sys::VP8_EFLAG_NO_REF_LAST, 0);
        assert_ne!(f & sys::VP8_EFLAG_NO_REF_ARF, 0);
        assert_eq!(f & sys::VP8_EFLAG_NO_UPD_LAST, 0);
        assert_ne!(f & sys::VP8_EFLAG_NO_UPD_GF, 0);
        assert_ne!(f & sys::VP8_EFLAG_FORCE_ARF, 0);
        assert_ne!(f & sys::VP8_EFLAG_NO_UPD_ENTROPY, 0);
        let t = frame_flags(0, None);
        let all = sys::VP8_EFLAG_NO_UPD_LAST | sys::VP8_EFLAG_NO_UPD_GF | sys::VP8_EFLAG_NO_UPD_ARF;
        assert_eq!(t & all, all);
    }

    #[test]
    fn ssim_is_one_for_equal_pictures_and_falls_with_noise() {
        let a = Picture::filled(32, 32, 100, 128, 128);
        let mut b = a.clone();
        assert!((ssim(&a, &b) - 1.0).abs() < 1e-12);
        for (i, y) in b.y.iter_mut().enumerate() {
            *y = y.wrapping_add((i * 37 % 23) as u8);
        }
        let s = ssim(&a, &b);
        assert!(s < 0.9, "{s}");
        assert!((ssim_db(0.9) - 10.0).abs() < 1e-9);
        assert_eq!(ssim_db(1.0), 100.0);
    }
}
