//! The saturator's packets (`wisp_net::saturator_wire`): parsing never panics, and what parses
//! re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_net::saturator_wire::Packet;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Packet::parse(data) {
        assert_eq!(p.emit().unwrap(), data);
    }
});
