//! The feedback messages that travel in wisp's RTCP APP packets: the framing
//! (`wisp_core::wire::Feedback::from_bytes`) and every scheme's message type never panic, and
//! what a scheme's type parses re-encodes to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wisp_core::scheme::gcc::GccFeedback;
use wisp_core::scheme::sprout::wire::SproutForecast;
use wisp_core::scheme::tcp::ack::TcpAck;
use wisp_core::scheme::ukf::UkfFeedback;
use wisp_core::wire::{Feedback, Message};

fn round_trips<M: Message + PartialEq>(data: &[u8]) {
    if let Ok(m) = M::parse(data) {
        assert_eq!(Feedback::encode(&m).as_bytes(), data);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(fb) = Feedback::from_bytes(data) {
        assert_eq!(fb.as_bytes(), data);
    }
    round_trips::<GccFeedback>(data);
    round_trips::<SproutForecast>(data);
    round_trips::<TcpAck>(data);
    round_trips::<UkfFeedback>(data);
});
