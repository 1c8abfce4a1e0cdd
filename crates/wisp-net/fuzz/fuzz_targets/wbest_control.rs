//! WBest's control messages and probe header (`wisp_net::wbest_wire`): parsing never panics,
//! and what parses re-encodes to the same bytes. The session filter (`ProbeFilter`, version 4)
//! takes a datagram only with the run's nonce and only from the client's address; it never
//! takes a probe before the announcement, and counts everything it refuses.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_net::wbest_wire::{ANNOUNCE_INDEX, Control, PROBE_HEADER, ProbeFilter, ProbeHeader};

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
    let client: std::net::SocketAddr = "127.0.0.1:4000".parse().unwrap();
    // Another host: refused whatever it sends. (A datagram from the client's own address with
    // the run's nonce is the announcement, whatever its port: the nonce, sent over the control
    // connection, is what a stranger cannot produce; the fuzzer finds this one's fixed value.)
    let stranger: std::net::SocketAddr = "127.0.0.2:4001".parse().unwrap();
    let mut f = ProbeFilter::awaiting(client.ip(), 0x5eed);
    assert_eq!(f.accept(stranger, data), None);
    assert_eq!((f.peer(), f.foreign), (None, 1));
    // The client's host with another nonce: refused.
    let mut g = ProbeFilter::awaiting(client.ip(), 0x5eed ^ 1);
    if let Some(h) = g.accept(client, data) {
        assert_eq!(h.nonce, 0x5eed ^ 1);
    }
    match f.accept(client, data) {
        Some(h) => {
            assert_eq!((h.nonce, h.index), (0x5eed, ANNOUNCE_INDEX));
            assert_eq!(f.peer(), Some(client));
        }
        None => assert_eq!((f.peer(), f.foreign), (None, 2)),
    }
});
