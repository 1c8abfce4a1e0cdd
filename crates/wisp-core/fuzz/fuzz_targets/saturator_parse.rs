//! The saturator's packets (`wisp_core::saturator::wire`): parsing never panics, and what parses
//! re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_core::saturator::wire::Packet;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::parse(data) {
        assert_eq!(p.emit().unwrap(), data);
    }
});
