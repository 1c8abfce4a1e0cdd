//! NADA's feedback message (RFC 8698 §4.2, §5.1.3): what the receiver reports every DELTA —
//! the aggregate congestion signal x_curr, the rate update mode rmode and the receiving rate
//! r_recv — and the echo of its newest packet's send time, from which the sender measures the
//! RTT (as RTCP's LSR/DLSR, [`RttEcho`]).
//!
//! Encoding (kind [`KIND`], 70: NADA's family of ten), all big-endian: `x_curr: u64` (ns),
//! `rmode: u8` (0 accelerated ramp-up, 1 gradual update), `r_recv: u64` (bit/s), `sent: u64`
//! (ns, the sender's clock), `held: u64` (ns). 36 bytes framed. Parsing never panics: a
//! truncated or longer payload, another kind or an rmode other than 0 or 1 is an error.

use crate::time::{Duration, Instant};
use crate::units::Bitrate;
use crate::wire::{Message, Reader, RttEcho, WireError, Writer, frame, unframe};

/// The message kind of [`NadaFeedback`] (70–79: NADA).
pub const KIND: u8 = 70;

/// The sender's rate update mode as the receiver decides it (RFC 8698 §4.2, "rmode").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// rmode = 0: no loss, no marking and no queue build-up over the observation window, the
    /// bottleneck is deemed under-used (§4.3, "accelerated ramp-up").
    RampUp,
    /// rmode = 1: react to x_curr and its change (§4.3, "gradual rate update").
    Gradual,
}

/// One feedback report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NadaFeedback {
    /// x_curr, the aggregate congestion signal (§4.2 eq. (2)), as a delay.
    pub x_curr: Duration,
    pub rmode: Mode,
    /// r_recv, the rate received over the observation window LOGWIN.
    pub r_recv: Bitrate,
    /// The newest packet's send time and how long the receiver held it before this report.
    pub echo: RttEcho,
}

impl Message for NadaFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, KIND, |out| {
            out.put_u64(self.x_curr.as_nanos());
            out.put_u8(match self.rmode {
                Mode::RampUp => 0,
                Mode::Gradual => 1,
            });
            out.put_u64(self.r_recv.bps());
            out.put_instant(self.echo.sent);
            out.put_u64(self.echo.held.as_nanos());
        });
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut p) = unframe(buf)?;
        if kind != KIND {
            return Err(WireError::UnknownKind(kind));
        }
        let m = parse_payload(&mut p)?;
        p.finish()?;
        Ok(m)
    }
}

fn parse_payload(p: &mut Reader<'_>) -> Result<NadaFeedback, WireError> {
    let x_curr = Duration::from_nanos(p.u64()?);
    let rmode = match p.u8()? {
        0 => Mode::RampUp,
        1 => Mode::Gradual,
        _ => return Err(WireError::Invalid("NADA rmode")),
    };
    Ok(NadaFeedback {
        x_curr,
        rmode,
        r_recv: Bitrate::from_bps(p.u64()?),
        echo: RttEcho {
            sent: Instant::from_nanos(p.u64()?),
            held: Duration::from_nanos(p.u64()?),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Feedback;
    use proptest::prelude::*;

    fn report() -> NadaFeedback {
        NadaFeedback {
            x_curr: Duration::from_micros(12_500),
            rmode: Mode::Gradual,
            r_recv: Bitrate::from_kbps(1_800),
            echo: RttEcho {
                sent: Instant::from_millis(2_000),
                held: Duration::from_millis(3),
            },
        }
    }

    #[test]
    fn round_trips_with_fixed_bytes() {
        let m = report();
        let fb = Feedback::encode(&m);
        #[rustfmt::skip]
        let expected: [u8; 36] = [
            70, 0, 33,
            0, 0, 0, 0, 0, 0xbe, 0xbc, 0x20, // 12.5 ms in ns
            1,
            0, 0, 0, 0, 0, 0x1b, 0x77, 0x40, // 1.8 Mbit/s
            0, 0, 0, 0, 0x77, 0x35, 0x94, 0x00, // 2 s in ns
            0, 0, 0, 0, 0, 0x2d, 0xc6, 0xc0, // 3 ms in ns
        ];
        assert_eq!(fb.as_bytes(), &expected);
        assert_eq!(fb.decode::<NadaFeedback>(), Ok(m));
        let ramp = NadaFeedback {
            rmode: Mode::RampUp,
            ..m
        };
        assert_eq!(Feedback::encode(&ramp).decode::<NadaFeedback>(), Ok(ramp));
    }

    #[test]
    fn malformed_feedback_is_refused() {
        let mut bytes = Feedback::encode(&report()).as_bytes().to_vec();
        // An rmode other than 0 or 1.
        bytes[11] = 2;
        assert_eq!(
            NadaFeedback::parse(&bytes),
            Err(WireError::Invalid("NADA rmode"))
        );
        // Another scheme's kind.
        bytes[11] = 1;
        bytes[0] = 4;
        assert_eq!(NadaFeedback::parse(&bytes), Err(WireError::UnknownKind(4)));
        // A payload one byte short (the length says so) and one byte long.
        let short = [&[KIND, 0, 32][..], &bytes[3..35]].concat();
        assert_eq!(
            NadaFeedback::parse(&short),
            Err(WireError::Truncated { needed: 1 })
        );
        let long = [&[KIND, 0, 34][..], &bytes[3..], &[0]].concat();
        assert_eq!(NadaFeedback::parse(&long), Err(WireError::Trailing(1)));
        assert!(NadaFeedback::parse(&[]).is_err());
    }

    proptest! {
        #[test]
        fn parsing_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = NadaFeedback::parse(&bytes);
        }

        #[test]
        fn any_report_round_trips(x in any::<u64>(), ramp in any::<bool>(), r in any::<u64>(),
                                  sent in any::<u64>(), held in any::<u64>()) {
            let m = NadaFeedback {
                x_curr: Duration::from_nanos(x),
                rmode: if ramp { Mode::RampUp } else { Mode::Gradual },
                r_recv: Bitrate::from_bps(r),
                echo: RttEcho { sent: Instant::from_nanos(sent), held: Duration::from_nanos(held) },
            };
            prop_assert_eq!(Feedback::encode(&m).decode::<NadaFeedback>(), Ok(m));
        }
    }
}
