//! The feedback of `skype-ukf` and `kwikr`: the receiver's bandwidth estimate (kind 50, the
//! Ping-Pair/Kwikr family's).

use crate::units::Bitrate;
use crate::wire::{Message, WireError, Writer, frame, unframe};

/// The kind byte of a [`UkfFeedback`].
pub const ESTIMATE: u8 = 50;

/// The receiver's estimate B̂ of the path's bandwidth, which the sender sends at (§4: "the
/// bandwidth estimation happens at the receiver, which then conveys its estimate to the sender").
///
/// Encoding: `rate_bps: u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UkfFeedback {
    pub rate: Bitrate,
}

impl Message for UkfFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, ESTIMATE, |out| out.put_u64(self.rate.bps()));
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut p) = unframe(buf)?;
        if kind != ESTIMATE {
            return Err(WireError::UnknownKind(kind));
        }
        let rate = Bitrate::from_bps(p.u64()?);
        p.finish()?;
        Ok(UkfFeedback { rate })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Feedback;
    use proptest::prelude::*;

    #[test]
    fn fixed_bytes_and_round_trip() {
        let m = UkfFeedback {
            rate: Bitrate::from_kbps(1500),
        };
        let f = Feedback::encode(&m);
        // kind 50, length 8, 1 500 000 = 0x16E360.
        assert_eq!(f.as_bytes(), [50, 0, 8, 0, 0, 0, 0, 0, 0x16, 0xe3, 0x60]);
        assert_eq!(f.decode::<UkfFeedback>(), Ok(m));
        assert_eq!(
            UkfFeedback::parse(&[3, 0, 0]),
            Err(WireError::UnknownKind(3))
        );
        assert!(UkfFeedback::parse(&[50, 0, 7, 0, 0, 0, 0, 0, 0, 0]).is_err());
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..32)) {
            let _ = UkfFeedback::parse(&bytes);
        }

        #[test]
        fn round_trips(bps in any::<u64>()) {
            let m = UkfFeedback { rate: Bitrate::from_bps(bps) };
            prop_assert_eq!(Feedback::encode(&m).decode::<UkfFeedback>(), Ok(m));
        }
    }
}
