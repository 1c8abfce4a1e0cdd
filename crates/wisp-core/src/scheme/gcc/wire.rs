//! GCC's feedback: a standard RTCP receiver report (for the loss-based controller, eq. (1)) and
//! a standard REMB carrying A_r (§3), so that on the wire both go as the RTCP packets a WebRTC
//! peer reads.

use crate::wire::{Message, ReceiverReport, Remb, WireError, kind, unframe};

/// A message from a GCC receiver to its sender.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GccFeedback {
    Report(ReceiverReport),
    Remb(Remb),
}

impl Message for GccFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        match self {
            GccFeedback::Report(rr) => rr.emit(out),
            GccFeedback::Remb(remb) => remb.emit(out),
        }
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match unframe(buf)?.0 {
            kind::RECEIVER_REPORT => ReceiverReport::parse(buf).map(GccFeedback::Report),
            kind::REMB => Remb::parse(buf).map(GccFeedback::Remb),
            k => Err(WireError::UnknownKind(k)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bitrate;
    use crate::wire::Feedback;

    #[test]
    fn both_kinds_round_trip_and_others_are_refused() {
        let rr = GccFeedback::Report(ReceiverReport {
            highest_seq: 9,
            received: 8,
            cumulative_lost: 1,
            fraction_lost: 28,
            echo: Some(crate::wire::RttEcho {
                sent: crate::time::Instant::from_millis(3),
                held: crate::time::Duration::from_millis(1),
            }),
        });
        let remb = GccFeedback::Remb(Remb::new(Bitrate::from_kbps(850)));
        for m in [rr, remb] {
            assert_eq!(Feedback::encode(&m).decode::<GccFeedback>(), Ok(m));
        }
        assert_eq!(
            GccFeedback::parse(&[10, 0, 0]),
            Err(WireError::UnknownKind(10))
        );
    }
}
