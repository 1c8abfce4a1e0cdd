//! The vocabulary of schemes whose halves are written outside Rust (wisp-py's Python
//! controllers) and of their Rust twins: feedback and header fields as opaque bytes, times as
//! `f64` seconds since the start of the run, rates as `f64` kbit/s.
//!
//! A foreign scheme's feedback message is the bytes its receiver returned, carried in one framed
//! message of kind [`KIND`] (so it costs the reverse path its length plus the 3-byte frame
//! header); its per-packet header fields are at most 16 bytes (one RTP header extension
//! element, as for every scheme). The conversions at the seam are [`secs`], [`instant_of`] and
//! [`rate_of`]: a Rust scheme that uses them (e.g. [`super::example_aimd`]) runs the same
//! arithmetic as a controller on the other side of the seam, to the last bit.

use crate::packet::{HeaderFields, SchemeFields};
use crate::time::Instant;
use crate::units::Bitrate;
use crate::wire::{Message, WireError, frame, unframe};

/// The frame kind of a foreign scheme's feedback (schemes outside the tree use 200–254).
pub const KIND: u8 = 200;
/// The largest feedback message a foreign receiver may return, bytes.
pub const MAX_FEEDBACK: usize = 1200;
/// The largest rate a foreign controller may ask for, kbit/s (100 Gbit/s).
pub const MAX_KBPS: f64 = 1e8;

/// A time as a foreign half sees it: seconds since the start of the run.
pub fn secs(t: Instant) -> f64 {
    t.as_nanos() as f64 / 1e9
}

/// A time a foreign half returned (seconds), rounded to the nanosecond; `None` if it is not a
/// finite, non-negative number.
pub fn instant_of(s: f64) -> Option<Instant> {
    let ns = (s * 1e9).round();
    (ns.is_finite() && ns >= 0.0 && ns < u64::MAX as f64).then(|| Instant::from_nanos(ns as u64))
}

/// A rate a foreign half returned (kbit/s); `None` if it is not finite or out of 0 to
/// [`MAX_KBPS`].
pub fn rate_of(kbps: f64) -> Option<Bitrate> {
    (kbps.is_finite() && (0.0..=MAX_KBPS).contains(&kbps)).then(|| Bitrate::from_kbps_f64(kbps))
}

/// A foreign scheme's feedback message: the bytes its receiver returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpaqueMessage(pub Vec<u8>);

impl Message for OpaqueMessage {
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, KIND, |out| out.extend_from_slice(&self.0));
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut p) = unframe(buf)?;
        if kind != KIND {
            return Err(WireError::UnknownKind(kind));
        }
        let body = p.bytes(p.remaining())?.to_vec();
        p.finish()?;
        Ok(OpaqueMessage(body))
    }
}

/// A foreign scheme's per-packet header fields: the bytes its sender returned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpaqueFields(pub SchemeFields);

impl HeaderFields for OpaqueFields {
    fn emit(&self) -> SchemeFields {
        self.0
    }
    fn parse(fields: &SchemeFields) -> Result<Self, WireError> {
        Ok(OpaqueFields(*fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_feedback_message_is_its_bytes_in_a_frame_of_kind_200() {
        let mut out = vec![];
        OpaqueMessage(vec![1, 2, 3]).emit(&mut out);
        assert_eq!(out, [200, 0, 3, 1, 2, 3]);
        assert_eq!(OpaqueMessage::parse(&out), Ok(OpaqueMessage(vec![1, 2, 3])));
        assert_eq!(
            OpaqueMessage::parse(&[201, 0, 0]),
            Err(WireError::UnknownKind(201))
        );
    }

    #[test]
    fn times_and_rates_from_the_other_side_are_checked() {
        assert_eq!(instant_of(0.25), Some(Instant::from_millis(250)));
        assert_eq!(instant_of(1e-9), Some(Instant::from_nanos(1)));
        for bad in [-1e-3, f64::NAN, f64::INFINITY, 1e12] {
            assert_eq!(instant_of(bad), None, "{bad}");
        }
        assert_eq!(rate_of(1500.0), Some(Bitrate::from_kbps(1500)));
        assert_eq!(rate_of(0.0), Some(Bitrate::ZERO));
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1.5e8] {
            assert_eq!(rate_of(bad), None, "{bad}");
        }
    }

    proptest! {
        #[test]
        fn feedback_round_trips(body in proptest::collection::vec(any::<u8>(), 0..MAX_FEEDBACK)) {
            let m = OpaqueMessage(body);
            let mut out = vec![];
            m.emit(&mut out);
            prop_assert_eq!(OpaqueMessage::parse(&out), Ok(m));
        }

        #[test]
        fn parsing_feedback_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = OpaqueMessage::parse(&buf);
        }

        #[test]
        fn header_fields_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..=16)) {
            let f = OpaqueFields(SchemeFields::new(&bytes).unwrap());
            prop_assert_eq!(OpaqueFields::parse(&f.emit()), Ok(f));
            let emitted = f.emit();
            prop_assert_eq!(emitted.as_slice(), &bytes[..]);
        }

        #[test]
        fn a_time_survives_the_round_trip_through_seconds(ns in 0u64..1_000_000_000_000_000) {
            let t = Instant::from_nanos(ns);
            prop_assert_eq!(instant_of(secs(t)), Some(t));
        }
    }
}
