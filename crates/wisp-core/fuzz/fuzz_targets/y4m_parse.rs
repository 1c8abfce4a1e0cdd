//! The Y4M reader on arbitrary bytes: a clip whose planes have the sizes its header states, or an
//! error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_core::video::{Picture, y4m};

fuzz_target!(|data: &[u8]| {
    if let Ok(clip) = y4m::parse(data) {
        let (cw, ch) = Picture::chroma_size(clip.width, clip.height);
        for p in &clip.frames {
            assert_eq!(p.y.len(), clip.width * clip.height);
            assert_eq!(p.u.len(), cw * ch);
            assert_eq!(p.v.len(), cw * ch);
        }
    }
});
