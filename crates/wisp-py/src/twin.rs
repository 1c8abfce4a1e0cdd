//! The Rust twin of the Python example `examples/aimd.py` (AIMD on delay), line for line: the
//! test `tests/test_controller.py` runs both and compares their reports bit for bit, which checks
//! that the Python seam ([`crate::controller`]) adds nothing of its own to a controller's
//! behaviour.
//!
//! The receiver reports every `interval_s` (from the first arrival) the largest one-way delay it
//! saw and the packets it counted since the last report, as 12 bytes (`<dI`, Python's `struct`
//! format); the sender adds `step_kbps` per report while that delay stays within `target_s` of
//! the smallest reported, and multiplies its rate by `beta` otherwise. Times are seconds as
//! `f64`, converted at the seam with the same functions as a Python controller's
//! ([`secs`], [`instant_of`], [`rate_of`]).
//!
//! Reachable from Python as `wisp.Controller.rust_example_aimd(...)` only: it is not a built-in
//! scheme of the command line.

use crate::controller::{PyFields, PyMessage, instant_of, rate_of, secs};
use wisp_core::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
use wisp_core::pacer::Pacer;
use wisp_core::packet::DataHeader;
use wisp_core::scheme::params::Parameters;
use wisp_core::scheme::{BuildError, Halves, ParamError, Scheme, SchemeContext, SchemeInfo};
use wisp_core::source::Source;
use wisp_core::{DataSize, Instant};

/// The twin's configuration (the Python example's constructor arguments).
#[derive(Clone, Debug, PartialEq)]
pub struct AimdConfig {
    pub start_kbps: f64,
    pub target_s: f64,
    pub beta: f64,
    pub step_kbps: f64,
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
        match given.first() {
            None => Ok(()),
            Some((k, _)) => Err(ParamError::UnknownParam {
                scheme: "example-aimd".to_string(),
                key: k.to_string(),
                accepted: "(none)".to_string(),
            }),
        }
    }
}

impl Scheme for AimdConfig {
    type Sender = AimdSender;
    type Receiver = AimdReceiver;
    const NAMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "example-aimd",
        summary: "the Rust twin of the Python example examples/aimd.py",
    }];

    fn named(name: &str) -> Option<Self> {
        (name == "example-aimd").then_some(AimdConfig {
            start_kbps: 300.0,
            target_s: 0.040,
            beta: 0.85,
            step_kbps: 50.0,
            interval_s: 0.050,
        })
    }

    fn name(&self) -> &'static str {
        "example-aimd"
    }

    fn build(&self, ctx: SchemeContext) -> Result<Halves<AimdSender, AimdReceiver>, BuildError> {
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

#[derive(Debug)]
pub struct AimdSender {
    rate_kbps: f64,
    target_s: f64,
    beta: f64,
    step_kbps: f64,
    min_delay: Option<f64>,
}

impl Sender for AimdSender {
    type Feedback = PyMessage;
    type Fields = PyFields;

    fn on_packet_sent(&mut self, _: Instant, _: &DataHeader, _: &SendContext) -> PyFields {
        PyFields::default()
    }

    fn on_feedback(&mut self, _now: Instant, m: &PyMessage) {
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

#[derive(Debug)]
pub struct AimdReceiver {
    interval_s: f64,
    max_delay: f64,
    packets: u32,
    next: Option<f64>,
    due: bool,
}

impl Receiver for AimdReceiver {
    type Feedback = PyMessage;
    type Fields = PyFields;

    fn on_packet_received(&mut self, now: Instant, p: &DataHeader, _: &PyFields) {
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

    fn poll_feedback(&mut self, _now: Instant) -> Option<PyMessage> {
        if !self.due {
            return None;
        }
        self.due = false;
        let mut body = self.max_delay.to_le_bytes().to_vec();
        body.extend_from_slice(&self.packets.to_le_bytes());
        self.max_delay = 0.0;
        self.packets = 0;
        Some(PyMessage(body))
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
