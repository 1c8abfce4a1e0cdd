//! VP8's cost per frame at the shipped clip's size (176×144): one frame coded from the previous
//! state within a byte budget (the quantiser search's trials plus the real coding and the
//! mirror decode that gives its SSIM) and decoded at the receiver. The 30-frame/s budget is
//! 33 ms per frame on one core.

use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;
use wisp_core::video::{StateDecoder, StateEncoder, StateId, y4m};
use wisp_vpx::{Vp8Codec, Vp8Decoder, Vp8Options};

fn clip() -> Arc<y4m::Clip> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../media/bigbuckbunny-qcif-3s.y4m"
    );
    Arc::new(y4m::parse(&std::fs::read(path).unwrap()).unwrap())
}

fn encode_decode(c: &mut Criterion) {
    let clip = clip();
    let n = clip.frames.len() as u32;
    let codec = Vp8Codec::new(clip, Vp8Options::default()).unwrap();
    let mut dec = StateDecoder::new(Vp8Decoder::new(codec.state0()).unwrap());
    let mut enc = StateEncoder::new(codec);
    let mut source = 0u32;
    let mut g = c.benchmark_group("vp8/qcif");
    g.sample_size(30);
    // 1,500 bytes a frame: 360 kbit/s at 30 frames/s.
    g.bench_function("encode_within_budget+decode", |b| {
        b.iter(|| {
            let base = StateId(enc.next_state().0 - 1);
            let d = enc.encode(source % n, base, 1500, 0b001).unwrap();
            dec.apply(&d.bytes).unwrap();
            source += 1;
        })
    });
    g.finish();
}

criterion_group!(benches, encode_decode);
criterion_main!(benches);
