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

use super::params::{
    self, Checked, Configurable, Validate, check, range, rate_kbps, scheme_params,
};
use super::registry::{Halves, Scheme, SchemeInfo};
use super::{BuildError, ParamError, SchemeContext};
use crate::pacer::Pacer;
use crate::source::Source;
use crate::time::Duration;

/// The highest sending rate `cbr` takes, kbit/s (1 Gbit/s, as GCC's and the video layer's
/// ceilings): above, the packets' spacing rounds to nothing and a run's queue outgrows memory.
pub const MAX_KBPS: f64 = 1e6;

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
}

scheme_params! {
    /// `cbr`'s parameters.
    pub struct CbrParams {
        /// Sending rate, kbit/s (at most 1000000).
        pub rate_kbps: f64,
        /// Sending rate with a unit (`2mbps`); of `rate` and `rate-kbps`, the one given last counts.
        #[serde(skip_serializing, default, deserialize_with = "rate_text::deserialize")]
        pub rate: Option<Bitrate>,
        /// Packet size on the wire, bytes (default: the MTU).
        #[serde(skip_serializing_if = "Option::is_none", default)]
        pub packet_bytes: Option<u64>,
    }
}

impl Validate for CbrParams {
    fn validate(&self) -> Checked {
        let rate = self.rate.map_or(self.rate_kbps, Bitrate::kbps_f64);
        let key = if self.rate.is_some() {
            "rate"
        } else {
            "rate-kbps"
        };
        check(key, rate > 0.0, "a positive number of kbit/s")?;
        rate_kbps(
            key,
            rate,
            0.0,
            MAX_KBPS,
            "a positive number of kbit/s, at most 1000000 (1 Gbit/s)",
        )?;
        if let Some(b) = self.packet_bytes {
            range(
                "packet-bytes",
                b as f64,
                40.0,
                65535.0,
                "a packet size in bytes, 40 to 65535",
            )?;
        }
        Ok(())
    }
}

impl Configurable for CbrConfig {
    type Params = CbrParams;
    fn to_params(&self) -> CbrParams {
        CbrParams {
            rate_kbps: self.rate.kbps_f64(),
            rate: None,
            packet_bytes: self.packet_size.map(DataSize::bytes),
        }
    }
    fn apply(&mut self, p: CbrParams) {
        self.rate = p.rate.unwrap_or(Bitrate::from_kbps_f64(p.rate_kbps));
        self.packet_size = p.packet_bytes.map(DataSize::from_bytes);
    }

    /// As every scheme's, except that of `rate` and `rate-kbps` the one given last counts.
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        let last = |key: &str| given.iter().rposition(|(k, _)| params::normalise(k) == key);
        let given: Vec<(&str, &str)> = match (last("rate"), last("rate-kbps")) {
            (Some(r), Some(k)) if k > r => given
                .iter()
                .copied()
                .filter(|(k, _)| params::normalise(k) != "rate")
                .collect(),
            _ => given.to_vec(),
        };
        let p = params::overlay(&self.to_params(), &given)?;
        self.apply(p);
        Ok(())
    }
}

/// `rate=2mbps`: a [`Bitrate`] as text.
mod rate_text {
    use crate::units::Bitrate;
    use serde::{Deserialize, Deserializer, de};

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Bitrate>, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map(Some)
            .map_err(|_| de::Error::invalid_value(de::Unexpected::Str(&s), &"a rate such as 2mbps"))
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
impl Scheme for CbrConfig {
    type Sender = CbrSender;
    type Receiver = SilentReceiver;
    const NAMES: &'static [SchemeInfo] = &[SchemeInfo {
        name: "cbr",
        summary: "constant bit rate, no feedback",
    }];
    const ALWAYS_NAMED: &'static [&'static str] = &["rate-kbps"];

    fn named(name: &str) -> Option<Self> {
        (name == "cbr").then(CbrConfig::default)
    }

    fn name(&self) -> &'static str {
        "cbr"
    }

    /// Packets of `packet-bytes` (default: the MTU) from a bulk source, paced at the rate.
    fn build(&self, ctx: SchemeContext) -> Result<Halves<CbrSender, SilentReceiver>, BuildError> {
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
