//! Any datagram an ICMP socket delivers, with or without the IPv4 header: an echo reply of ours
//! or an error (counted and dropped by `wisp pingpair`), never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_net::icmp::parse_reply;

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    // The first byte picks the framing and whether an identifier is expected.
    let with_ip = data[0] & 1 == 1;
    let ident = (data[0] & 2 == 2).then_some(0x1234);
    let _ = parse_reply(&data[1..], with_ip, ident, 0x0102_0304_0506_0708);
});
