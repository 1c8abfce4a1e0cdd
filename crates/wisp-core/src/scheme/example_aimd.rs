//! Example AIMD on delay: the Rust twin of the Python example `wisp.examples.aimd` (crate
//! wisp-py, `python/wisp/examples/aimd.py`), line for line. wisp-py's test
//! `tests/test_controller.py` runs both and compares their reports bit for bit, which checks
//! that the Python seam adds nothing of its own to a controller's behaviour.
//!
//! The receiver reports every `interval_s` (from the first arrival) the largest one-way delay it
//! saw and the packets it counted since the last report, as 12 bytes (`<dI` in Python's `struct`
//! notation: a little-endian `f64` then a `u32`), in an [`OpaqueMessage`]; the sender adds
//! `step_kbps` per report while that delay stays within `target_s` of the smallest reported, and
//! multiplies its rate by `beta` otherwise. Times are seconds as `f64`, converted with the
//! seam's functions ([`secs`], [`instant_of`], [`rate_of`]) so that the two run the same
//! arithmetic.
//!
//! An example, not a scheme of any paper: it is not in the built-in list (`wisp schemes` does
//! not show it); a program registers it at run time as
//! `SchemeConfig::Custom(CustomScheme::new(AimdConfig::named("example-aimd")?))`, which is what
//! `wisp.Controller.rust_example_aimd(...)` does.
//!
//! Deviations (from the Python example, none in behaviour): a report that is not 12 bytes is
//! ignored (Python's `struct.unpack` would raise); a rate the seam refuses (not finite, or out of
//! 0 to 1e8 kbit/s) gives an empty window (the Python seam stops the controller with an error).

use super::opaque::{OpaqueFields, OpaqueMessage, instant_of, rate_of, secs};
use super::params::Parameters;
use super::{Built, Halves, ParamError, Scheme, SchemeContext, listed_as};
use crate::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
use crate::pacer::Pacer;
use crate::packet::DataHeader;
use crate::source::Source;
use crate::{DataSize, Instant};

/// The example's configuration (the Python example's constructor arguments); `named` gives its
/// defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct AimdConfig {
    /// The first rate, kbit/s (300).
    pub start_kbps: f64,
    /// How far above the smallest reported delay a report's largest delay may be before the rate
    /// is cut, s (0.040).
    pub target_s: f64,
    /// The multiplicative decrease (0.85).
    pub beta: f64,
    /// The additive increase per report, kbit/s (50).
    pub step_kbps: f64,
    /// The receiver's report interval, s (0.050).
    pub interval_s: f64,
}

impl Parameters for AimdConfig {
    fn param_list(&self) -> Vec<(&'static str, String)> {
        vec![]
    }
    fn param_docs(&self) -> Vec<(String, String)> {
        vec![]
    }
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        super::params::no_params("example-aimd", given, "(none)")
    }
}

impl Scheme for AimdConfig {
    type Sender = AimdSender;
    type Receiver = AimdReceiver;
    listed_as! {
        "example-aimd",
        "the Rust twin of the Python example examples/aimd.py",
        AimdConfig {
            start_kbps: 300.0,
            target_s: 0.040,
            beta: 0.85,
            step_kbps: 50.0,
            interval_s: 0.050,
        },
    }

    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let mtu = ctx.mtu();
        Ok(Halves {
            sender: AimdSender {
                rate_kbps: self.start_kbps,
                target_s: self.target_s,
                beta: self.beta,
                step_kbps: self.step_kbps,
                min_delay: None,
            },
            receiver: AimdReceiver {
                interval_s: self.interval_s,
                max_delay: 0.0,
                packets: 0,
                next: None,
                due: false,
            },
            source: Source::bulk(mtu),
            pacer: Pacer::default(),
            mtu,
        })
    }
}

/// The sending half: AIMD on the reports' largest delay.
#[derive(Debug)]
pub struct AimdSender {
    rate_kbps: f64,
    target_s: f64,
    beta: f64,
    step_kbps: f64,
    min_delay: Option<f64>,
}

impl Sender for AimdSender {
    type Feedback = OpaqueMessage;
    type Fields = OpaqueFields;

    fn on_packet_sent(&mut self, _: Instant, _: &DataHeader, _: &SendContext) -> OpaqueFields {
        OpaqueFields::default()
    }

    fn on_feedback(&mut self, _now: Instant, m: &OpaqueMessage) {
        let Some((max_delay, packets)) = unpack(&m.0) else {
            return;
        };
        if packets == 0 {
            return;
        }
        let min = match self.min_delay {
            Some(m) if max_delay >= m => m,
            _ => max_delay,
        };
        self.min_delay = Some(min);
        if max_delay > min + self.target_s {
            self.rate_kbps *= self.beta;
        } else {
            self.rate_kbps += self.step_kbps;
        }
    }

    fn allowance(&self, _now: Instant) -> Allowance {
        match rate_of(self.rate_kbps) {
            Some(r) => Allowance::Rate {
                target: r,
                pacing: r,
            },
            None => Allowance::Window {
                bytes: DataSize::ZERO,
                pacing: None,
            },
        }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: rate_of(self.rate_kbps),
            window: None,
        }
    }
}

/// `struct.unpack("<dI", body)`.
fn unpack(body: &[u8]) -> Option<(f64, u32)> {
    let d: [u8; 8] = body.get(..8)?.try_into().ok()?;
    let n: [u8; 4] = body.get(8..12)?.try_into().ok()?;
    (body.len() == 12).then(|| (f64::from_le_bytes(d), u32::from_le_bytes(n)))
}

/// The receiving half: a report every `interval_s`.
#[derive(Debug)]
pub struct AimdReceiver {
    interval_s: f64,
    max_delay: f64,
    packets: u32,
    next: Option<f64>,
    due: bool,
}

impl Receiver for AimdReceiver {
    type Feedback = OpaqueMessage;
    type Fields = OpaqueFields;

    fn on_packet_received(&mut self, now: Instant, p: &DataHeader, _: &OpaqueFields) {
        let now = secs(now);
        let d = now - secs(p.send_time);
        if d > self.max_delay {
            self.max_delay = d;
        }
        self.packets += 1;
        if self.next.is_none() {
            self.next = Some(now + self.interval_s);
        }
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<OpaqueMessage> {
        if !self.due {
            return None;
        }
        self.due = false;
        let mut body = self.max_delay.to_le_bytes().to_vec();
        body.extend_from_slice(&self.packets.to_le_bytes());
        self.max_delay = 0.0;
        self.packets = 0;
        Some(OpaqueMessage(body))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next.and_then(instant_of)
    }

    fn on_timeout(&mut self, now: Instant) {
        let now = secs(now);
        if self.next.is_some_and(|n| n <= now) {
            self.due = true;
            self.next = Some(now + self.interval_s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Content, Ecn, SchemeFields};
    use crate::scheme::{CustomScheme, SchemeConfig};
    use crate::wire::Message;

    fn halves() -> Halves<AimdSender, AimdReceiver> {
        AimdConfig::named("example-aimd")
            .unwrap()
            .build(SchemeContext::new())
            .unwrap()
    }

    fn report(max_delay: f64, packets: u32) -> OpaqueMessage {
        let mut body = max_delay.to_le_bytes().to_vec();
        body.extend_from_slice(&packets.to_le_bytes());
        OpaqueMessage(body)
    }

    fn header(seq: u64, sent_ms: u64) -> DataHeader {
        DataHeader {
            seq,
            byte_seq: seq * 1200,
            send_time: Instant::from_millis(sent_ms),
            size: DataSize::from_bytes(1200),
            content: Content::Bulk,
            ecn: Ecn::NotEct,
            fields: SchemeFields::EMPTY,
        }
    }

    fn kbps(s: &AimdSender) -> f64 {
        match s.allowance(Instant::ZERO) {
            Allowance::Rate { target, pacing } => {
                assert_eq!(target, pacing);
                target.kbps_f64()
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_sender_adds_a_step_within_the_target_and_cuts_by_beta_beyond_it() {
        let mut s = halves().sender;
        let t = Instant::ZERO;
        assert_eq!(kbps(&s), 300.0);
        // The first report sets the smallest delay: within the target, +50.
        s.on_feedback(t, &report(0.100, 5));
        assert_eq!(kbps(&s), 350.0);
        // 40 ms above the smallest is still within it.
        s.on_feedback(t, &report(0.140, 5));
        assert_eq!(kbps(&s), 400.0);
        // Beyond it: × 0.85.
        s.on_feedback(t, &report(0.141, 5));
        assert_eq!(kbps(&s), 340.0);
        // A smaller delay lowers the floor: 0.08 + 0.04 < 0.13, so the next 0.13 is a cut.
        s.on_feedback(t, &report(0.080, 5));
        assert_eq!(kbps(&s), 390.0);
        s.on_feedback(t, &report(0.130, 5));
        assert_eq!(kbps(&s), 390.0 * 0.85);
    }

    #[test]
    fn an_empty_or_malformed_report_changes_nothing() {
        let mut s = halves().sender;
        s.on_feedback(Instant::ZERO, &report(9.0, 0));
        s.on_feedback(Instant::ZERO, &OpaqueMessage(vec![1, 2, 3]));
        let mut long = report(0.1, 3);
        long.0.push(0);
        s.on_feedback(Instant::ZERO, &long);
        assert_eq!(kbps(&s), 300.0);
        assert_eq!(s.min_delay, None);
    }

    #[test]
    fn the_receiver_reports_every_interval_from_the_first_arrival() {
        let mut r = halves().receiver;
        assert_eq!(r.poll_timeout(), None);
        // Arrivals at 30 and 40 ms of packets sent at 0 and 5 ms: delays 30 and 35 ms.
        r.on_packet_received(
            Instant::from_millis(30),
            &header(0, 0),
            &OpaqueFields::default(),
        );
        r.on_packet_received(
            Instant::from_millis(40),
            &header(1, 5),
            &OpaqueFields::default(),
        );
        assert_eq!(r.poll_timeout(), Some(Instant::from_millis(80)));
        assert_eq!(r.poll_feedback(Instant::from_millis(50)), None);
        r.on_timeout(Instant::from_millis(80));
        let m = r.poll_feedback(Instant::from_millis(80)).unwrap();
        assert_eq!(unpack(&m.0), Some((0.035, 2)));
        // Its wire form: the 12 bytes in a frame of kind 200.
        let mut out = vec![];
        m.emit(&mut out);
        assert_eq!(out[..3], [200, 0, 12]);
        // Reset after the report; the next is one interval later.
        assert_eq!(r.poll_feedback(Instant::from_millis(80)), None);
        assert_eq!(r.poll_timeout(), Some(Instant::from_millis(130)));
        r.on_timeout(Instant::from_millis(130));
        let m = r.poll_feedback(Instant::from_millis(130)).unwrap();
        assert_eq!(unpack(&m.0), Some((0.0, 0)));
    }

    #[test]
    fn it_is_reachable_as_a_custom_scheme_and_not_as_a_built_in_one() {
        let c = SchemeConfig::Custom(CustomScheme::new(
            AimdConfig::named("example-aimd").unwrap(),
        ));
        assert_eq!(c.name(), "example-aimd");
        assert!("example-aimd".parse::<SchemeConfig>().is_err());
        assert!(AimdConfig::named("aimd").is_none());
    }
}
