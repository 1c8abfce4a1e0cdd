//! `wisp_net::rtp::decode` on arbitrary datagrams: never panics; what decodes re-encodes to a
//! packet that decodes to the same header.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = wisp_net::rtp::decode(data) {
        let mut buf = Vec::new();
        wisp_net::rtp::encode(&p.header, p.ssrc, &mut buf).expect("a decoded header encodes");
        let q = wisp_net::rtp::decode(&buf).expect("an encoded header decodes");
        assert_eq!(q.header, p.header);
    }
});
