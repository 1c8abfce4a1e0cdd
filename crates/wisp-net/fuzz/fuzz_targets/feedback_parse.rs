//! `wisp_core::wire::Feedback::parse` (the payload of wisp's RTCP APP packets): never panics;
//! what parses round-trips byte for byte.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(fb) = wisp_core::wire::Feedback::parse(data) {
        assert_eq!(fb.to_bytes(), data);
    }
});
