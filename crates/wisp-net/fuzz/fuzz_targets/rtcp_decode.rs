//! `wisp_net::rtcp::decode` on arbitrary datagrams: never panics; a decoded scheme feedback
//! message re-encodes to one that decodes to the same message.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_net::rtcp::RtcpItem;

fuzz_target!(|data: &[u8]| {
    if let Ok(items) = wisp_net::rtcp::decode(data) {
        for item in items {
            if let RtcpItem::Feedback(fb) = item {
                let mut out = Vec::new();
                wisp_net::rtcp::encode_feedback(&fb, 1, 2, &mut out).expect("feedback encodes");
                let back = wisp_net::rtcp::decode(&out).expect("encoded feedback decodes");
                assert_eq!(back, vec![RtcpItem::Feedback(fb)]);
            }
        }
    }
});
