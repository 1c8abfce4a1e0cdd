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

use super::params::{Checked, Given, Validate, check, range, rate_kbps, scheme_config};
use super::registry::{Halves, Scheme};
use super::{Built, SchemeContext, listed_as};
use crate::pacer::Pacer;
use crate::source::Source;
use crate::time::Duration;
use crate::units::serde_as::{kbps, opt_bytes};

/// The highest sending rate `cbr` takes, kbit/s (1 Gbit/s, as GCC's and the video layer's
/// ceilings): above, the packets' spacing rounds to nothing and a run's queue outgrows memory.
pub const MAX_KBPS: f64 = 1e6;

scheme_config! {
    /// Configuration of [`CbrSender`] (`cbr:rate-kbps=1000`).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct CbrConfig {
        /// Sending rate, kbit/s (at most 1000000).
        // 1000 kbit/s by default.
        #[serde(rename = "rate-kbps", with = "kbps")]
        pub rate: Bitrate,
        /// Sending rate with a unit (`2mbps`); of `rate` and `rate-kbps`, the one given last counts.
        // Read, never listed: once read and checked it becomes `rate` ([`Validate::settle`]).
        #[serde(rename = "rate", skip_serializing, default, deserialize_with = "rate_text")]
        rate_with_unit: Option<Bitrate>,
        /// Packet size on the wire, bytes (default: the MTU).
        #[serde(rename = "packet-bytes", skip_serializing_if = "Option::is_none", default, with = "opt_bytes")]
        pub packet_size: Option<DataSize>,
    }
}

impl Default for CbrConfig {
    fn default() -> Self {
        CbrConfig {
            rate: Bitrate::from_kbps(1000),
            rate_with_unit: None,
            packet_size: None,
        }
    }
}

impl CbrConfig {
    pub fn rate(mut self, rate: Bitrate) -> Self {
        self.rate = rate;
        self
    }
}

impl Validate for CbrConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        let (key, rate) = match self.rate_with_unit {
            Some(r) => ("rate", r.kbps_f64()),
            None => ("rate-kbps", given.number("rate-kbps", self.rate.kbps_f64())),
        };
        check(key, rate > 0.0, "a positive number of kbit/s")?;
        rate_kbps(
            key,
            rate,
            0.0,
            MAX_KBPS,
            "a positive number of kbit/s, at most 1000000 (1 Gbit/s)",
        )?;
        if let Some(b) = self.packet_size {
            range(
                "packet-bytes",
                b.bytes() as f64,
                40.0,
                65535.0,
                "a packet size in bytes, 40 to 65535",
            )?;
        }
        Ok(())
    }

    const FORMS: &'static [(&'static str, &'static str)] = &[("rate", "rate-kbps")];

    fn settle(&mut self) {
        if let Some(rate) = self.rate_with_unit.take() {
            self.rate = rate;
        }
    }
}

/// `rate=2mbps`: a [`Bitrate`] as text.
fn rate_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Bitrate>, D::Error> {
    use serde::Deserialize;
    let s = String::deserialize(d)?;
    s.parse().map(Some).map_err(|_| {
        serde::de::Error::invalid_value(serde::de::Unexpected::Str(&s), &"a rate such as 2mbps")
    })
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
impl Scheme for CbrConfig {
    type Sender = CbrSender;
    type Receiver = SilentReceiver;
    listed_as! {
        "cbr",
        "constant bit rate, no feedback",
        CbrConfig::default(),
    }
    const ALWAYS_NAMED: &'static [&'static str] = &["rate-kbps"];

    /// Packets of `packet-bytes` (default: the MTU) from a bulk source, paced at the rate.
    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let size = self.packet_size.unwrap_or(ctx.mtu());
        Ok(Halves {
            sender: CbrSender::new(self),
            receiver: SilentReceiver,
            source: Source::bulk(size),
            pacer: Pacer::new(Duration::ZERO),
            mtu: size,
        })
    }
}
