//! `wisp_net::mmlog::analyze` on arbitrary text: never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = wisp_net::mmlog::analyze(data, "fuzz");
});
