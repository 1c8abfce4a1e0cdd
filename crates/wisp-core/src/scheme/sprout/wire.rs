//! Sprout's messages: the receiver's forecast (kind 10) and the sender's per-packet header
//! fields (time-to-next and the throwaway number, §3.2 and §3.4).

use crate::packet::{HeaderFields, SchemeFields};
use crate::time::Duration;
use crate::wire::{Message, Reader, WireError, Writer, frame, unframe};

/// The kind byte of a [`SproutForecast`].
pub const FORECAST: u8 = 10;

/// Sprout's delivery forecast (Winstein et al., NSDI 2013, §3.4), sent by the receiver once
/// per tick.
///
/// Encoding: `received_or_lost: u64`, `n: u8`, then `n` × `u32` cumulative byte counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SproutForecast {
    /// Bytes of the flow the receiver has received or written off as lost (the throwaway
    /// rule), from the start of the flow.
    pub received_or_lost: u64,
    /// Bytes expected (at the forecast's cautious quantile) to be delivered through the end of
    /// each of the next ticks, cumulative; at most 255 ticks.
    pub cumulative_bytes: Vec<u32>,
}

impl Message for SproutForecast {
    /// `received_or_lost: u64`, `n: u8`, then `n` × `u32` cumulative byte counts.
    fn emit(&self, out: &mut Vec<u8>) {
        debug_assert!(self.cumulative_bytes.len() <= u8::MAX as usize);
        let n = self.cumulative_bytes.len().min(u8::MAX as usize);
        frame(out, FORECAST, |out| {
            out.put_u64(self.received_or_lost);
            out.put_u8(n as u8);
            for &c in &self.cumulative_bytes[..n] {
                out.put_u32(c);
            }
        });
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut p) = unframe(buf)?;
        if kind != FORECAST {
            return Err(WireError::UnknownKind(kind));
        }
        let received_or_lost = p.u64()?;
        let n = p.u8()? as usize;
        if p.remaining() < 4 * n {
            return Err(WireError::Truncated {
                needed: 4 * n - p.remaining(),
            });
        }
        let cumulative_bytes = (0..n).map(|_| p.u32()).collect::<Result<_, _>>()?;
        p.finish()?;
        Ok(SproutForecast {
            received_or_lost,
            cumulative_bytes,
        })
    }
}

/// The header fields a Sprout sender stamps on every packet.
///
/// Encoding: none when both are absent; otherwise `time_to_next` in ns (u64) and `throwaway`
/// (u64), `u64::MAX` meaning absent (16 bytes: one RTP header extension element).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SproutFields {
    /// The sender's promise of how long until its next packet (§3.2); `None` = no promise.
    pub time_to_next: Option<Duration>,
    /// Bytes before the packet's byte sequence number that the receiver may declare
    /// received-or-lost (§3.4).
    pub throwaway: Option<u64>,
}

impl SproutFields {
    /// The fields of a packet inside an endless flight (a saturated sender): no gap promised,
    /// nothing thrown away.
    pub const SATURATED: SproutFields = SproutFields {
        time_to_next: Some(Duration::ZERO),
        throwaway: Some(0),
    };
}

impl HeaderFields for SproutFields {
    fn emit(&self) -> SchemeFields {
        if self.time_to_next.is_none() && self.throwaway.is_none() {
            return SchemeFields::EMPTY;
        }
        let mut b = [0u8; 16];
        let ttn = self
            .time_to_next
            .map_or(u64::MAX, |d| d.as_nanos().min(u64::MAX - 1));
        b[..8].copy_from_slice(&ttn.to_be_bytes());
        let throwaway = self.throwaway.map_or(u64::MAX, |t| t.min(u64::MAX - 1));
        b[8..].copy_from_slice(&throwaway.to_be_bytes());
        SchemeFields::new(&b).expect("16 bytes fit")
    }

    fn parse(fields: &SchemeFields) -> Result<Self, WireError> {
        if fields.is_empty() {
            return Ok(SproutFields::default());
        }
        let mut r = Reader::new(fields.as_slice());
        let ttn = r.u64()?;
        let throwaway = r.u64()?;
        r.finish()?;
        Ok(SproutFields {
            time_to_next: (ttn != u64::MAX).then(|| Duration::from_nanos(ttn)),
            throwaway: (throwaway != u64::MAX).then_some(throwaway),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Feedback;
    use proptest::prelude::*;

    #[test]
    fn sprout_forecast_fixed_bytes() {
        let b = Feedback::encode(&SproutForecast {
            received_or_lost: 0x0102,
            cumulative_bytes: vec![0x0304, 0x05060708],
        })
        .as_bytes()
        .to_vec();
        assert_eq!(
            b,
            [
                10, 0, 17, // kind, length
                0, 0, 0, 0, 0, 0, 1, 2, // received_or_lost
                2, // ticks
                0, 0, 3, 4, 5, 6, 7, 8, // cumulative bytes
            ]
        );
        // A tick count that promises more than the payload holds.
        let mut bad = b.clone();
        bad[11] = 3;
        assert_eq!(
            SproutForecast::parse(&bad),
            Err(WireError::Truncated { needed: 4 })
        );
        // Fewer ticks than the payload holds.
        bad[11] = 1;
        assert_eq!(SproutForecast::parse(&bad), Err(WireError::Trailing(4)));
    }

    #[test]
    fn fields_round_trip_and_reject_bad_lengths() {
        for f in [
            SproutFields::default(),
            SproutFields {
                time_to_next: Some(Duration::ZERO),
                throwaway: None,
            },
            SproutFields {
                time_to_next: Some(Duration::from_millis(20)),
                throwaway: Some(4500),
            },
        ] {
            assert_eq!(SproutFields::parse(&f.emit()), Ok(f));
        }
        assert!(SproutFields::default().emit().is_empty());
        assert!(SproutFields::parse(&SchemeFields::new(&[1; 8]).unwrap()).is_err());
        assert!(SproutFields::parse(&SchemeFields::new(&[1; 15]).unwrap()).is_err());
    }

    proptest! {
        #[test]
        fn sprout_forecast_round_trips(
            received_or_lost in any::<u64>(),
            cumulative_bytes in proptest::collection::vec(any::<u32>(), 0..20),
        ) {
            let m = SproutForecast { received_or_lost, cumulative_bytes };
            let fb = Feedback::encode(&m);
            prop_assert_eq!(fb.len(), 12 + 4 * m.cumulative_bytes.len());
            prop_assert_eq!(fb.decode::<SproutForecast>(), Ok(m));
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = SproutForecast::parse(&bytes);
            if let Some(f) = SchemeFields::new(&bytes[..bytes.len().min(16)]) {
                let _ = SproutFields::parse(&f);
            }
        }
    }
}
