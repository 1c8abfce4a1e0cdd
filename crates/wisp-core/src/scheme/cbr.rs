//! `cbr` — constant bit rate, no feedback.
//!
//! A reference scheme: full-size packets paced at a fixed rate whatever happens to them. It
//! shows what an open-loop sender does to a variable link (a standing queue as soon as the rate
//! exceeds the capacity).
//!
//! Deviations: none (there is no paper to deviate from).

use crate::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
use crate::packet::DataHeader;
use crate::time::Instant;
use crate::units::{Bitrate, DataSize};
use crate::wire::NoFeedback;

use super::ParamError;

/// Configuration of [`CbrSender`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CbrConfig {
    /// Sending rate (default 1000 kbit/s).
    pub rate: Bitrate,
    /// Packet size on the wire (default: the MTU).
    pub packet_size: Option<DataSize>,
}

impl Default for CbrConfig {
    fn default() -> Self {
        CbrConfig {
            rate: Bitrate::from_kbps(1000),
            packet_size: None,
        }
    }
}

impl CbrConfig {
    pub fn rate(mut self, rate: Bitrate) -> Self {
        self.rate = rate;
        self
    }

    pub(super) fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        match key {
            "rate-kbps" | "rate_kbps" => {
                let kbps: f64 = value
                    .parse()
                    .map_err(|_| ParamError::value(key, value, "a number of kbit/s"))?;
                if !(kbps.is_finite() && kbps > 0.0) {
                    return Err(ParamError::value(key, value, "a positive number of kbit/s"));
                }
                self.rate = Bitrate::from_kbps_f64(kbps);
            }
            "rate" => {
                self.rate = value
                    .parse()
                    .map_err(|_| ParamError::value(key, value, "a rate such as 2mbps"))?
            }
            "packet-bytes" | "packet_bytes" => {
                let expected = "a packet size in bytes, 40 to 65535";
                let b: u64 = value
                    .parse()
                    .map_err(|_| ParamError::value(key, value, expected))?;
                if !(40..=65535).contains(&b) {
                    return Err(ParamError::value(key, value, expected));
                }
                self.packet_size = Some(DataSize::from_bytes(b));
            }
            _ => return Err(ParamError::unknown(key, "rate-kbps, rate, packet-bytes")),
        }
        Ok(())
    }

    pub(super) fn params(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![("rate-kbps", format!("{}", self.rate.kbps_f64()))];
        if let Some(s) = self.packet_size {
            v.push(("packet-bytes", s.bytes().to_string()));
        }
        v
    }
}

/// Sends at a constant rate.
#[derive(Clone, Debug)]
pub struct CbrSender {
    rate: Bitrate,
}

impl CbrSender {
    pub fn new(config: &CbrConfig) -> Self {
        CbrSender { rate: config.rate }
    }
}

impl Sender for CbrSender {
    type Feedback = NoFeedback;
    type Fields = ();
    fn on_packet_sent(&mut self, _now: Instant, _packet: &DataHeader, _ctx: &SendContext) {}
    fn on_feedback(&mut self, _now: Instant, feedback: &NoFeedback) {
        match *feedback {}
    }
    fn allowance(&self, _now: Instant) -> Allowance {
        Allowance::Rate {
            target: self.rate,
            pacing: self.rate,
        }
    }
    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.rate),
            window: None,
        }
    }
}

/// A receiver that sends no feedback.
#[derive(Clone, Debug, Default)]
pub struct SilentReceiver;

impl Receiver for SilentReceiver {
    type Feedback = NoFeedback;
    type Fields = ();
    fn on_packet_received(&mut self, _now: Instant, _packet: &DataHeader, _fields: &()) {}
}
