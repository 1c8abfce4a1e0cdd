//! WBest's control messages and probe header (`wisp_net::wbest_wire`): parsing never panics,
//! and what parses re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_net::wbest_wire::{Control, PROBE_HEADER, ProbeHeader};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Control::parse(data) {
        assert_eq!(m.emit(), data);
    }
    let _ = Control::body_len(data);
    if let Ok(h) = ProbeHeader::parse(data) {
        let mut out = [0u8; PROBE_HEADER];
        h.emit(&mut out).unwrap();
        assert_eq!(&out[..], &data[..PROBE_HEADER]);
    }
});
