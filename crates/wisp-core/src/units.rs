//! Data sizes and bit rates as newtypes, with the conversions between them and time.

use crate::time::Duration;
use core::fmt;
use core::ops::{Add, AddAssign, Mul, Sub, SubAssign};
use core::str::FromStr;

/// An amount of data in bytes.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DataSize(u64);

/// A bit rate in bits per second.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bitrate(u64);

impl DataSize {
    pub const ZERO: DataSize = DataSize(0);
    pub const fn from_bytes(b: u64) -> Self {
        DataSize(b)
    }
    pub const fn bytes(self) -> u64 {
        self.0
    }
    pub const fn bits(self) -> u64 {
        self.0 * 8
    }
    pub const fn saturating_sub(self, o: DataSize) -> DataSize {
        DataSize(self.0.saturating_sub(o.0))
    }
    pub fn min(self, o: DataSize) -> DataSize {
        DataSize(self.0.min(o.0))
    }
    /// Time to serialise this much data at `rate` (rounded up to a nanosecond); `MAX` at rate zero.
    pub fn transmit_time(self, rate: Bitrate) -> Duration {
        if rate.0 == 0 {
            return Duration::MAX;
        }
        let ns = (self.0 as u128 * 8 * 1_000_000_000).div_ceil(rate.0 as u128);
        Duration::from_nanos(ns.min(u64::MAX as u128) as u64)
    }
}

impl Bitrate {
    pub const ZERO: Bitrate = Bitrate(0);
    pub const fn from_bps(bps: u64) -> Self {
        Bitrate(bps)
    }
    pub const fn from_kbps(kbps: u64) -> Self {
        Bitrate(kbps * 1_000)
    }
    pub const fn from_mbps(mbps: u64) -> Self {
        Bitrate(mbps * 1_000_000)
    }
    /// From a fractional bits-per-second value; negative or NaN gives zero.
    pub fn from_bps_f64(bps: f64) -> Self {
        if bps.is_nan() || bps <= 0.0 {
            Bitrate(0)
        } else {
            Bitrate(bps.round().min(u64::MAX as f64) as u64)
        }
    }
    pub fn from_kbps_f64(kbps: f64) -> Self {
        Self::from_bps_f64(kbps * 1e3)
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn kbps_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    pub fn mbps_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn mul_f64(self, k: f64) -> Bitrate {
        Bitrate::from_bps_f64(self.0 as f64 * k)
    }
    /// The rate at which `size` is delivered in `d`; zero for a zero duration.
    pub fn from_size_and_duration(size: DataSize, d: Duration) -> Bitrate {
        if d.is_zero() {
            return Bitrate(0);
        }
        Bitrate(
            (size.0 as u128 * 8 * 1_000_000_000 / d.as_nanos() as u128).min(u64::MAX as u128)
                as u64,
        )
    }
}

/// Bytes that `rate` delivers in `d` (rounded down).
impl Mul<Duration> for Bitrate {
    type Output = DataSize;
    fn mul(self, d: Duration) -> DataSize {
        DataSize((self.0 as u128 * d.as_nanos() as u128 / 8_000_000_000) as u64)
    }
}

impl Add for DataSize {
    type Output = DataSize;
    fn add(self, o: DataSize) -> DataSize {
        DataSize(self.0 + o.0)
    }
}
impl AddAssign for DataSize {
    fn add_assign(&mut self, o: DataSize) {
        self.0 += o.0;
    }
}
impl Sub for DataSize {
    type Output = DataSize;
    fn sub(self, o: DataSize) -> DataSize {
        DataSize(self.0 - o.0)
    }
}
impl SubAssign for DataSize {
    fn sub_assign(&mut self, o: DataSize) {
        self.0 -= o.0;
    }
}
impl Add for Bitrate {
    type Output = Bitrate;
    fn add(self, o: Bitrate) -> Bitrate {
        Bitrate(self.0 + o.0)
    }
}

impl fmt::Debug for DataSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}
impl fmt::Display for DataSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
impl fmt::Debug for Bitrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1_000_000 {
            write!(f, "{}mbps", self.0 as f64 / 1e6)
        } else if self.0 >= 1_000 {
            write!(f, "{}kbps", self.0 as f64 / 1e3)
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}
impl fmt::Display for Bitrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// An error parsing a rate, size or duration from text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseUnitError(pub String);

/// Parses `12mbps`, `2.5Mbit/s`, `500kbps`, `64000bps`, `1gbps` (case-insensitive). A bare
/// number is bits per second.
impl FromStr for Bitrate {
    type Err = ParseUnitError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let (num, mult) = split_suffix(
            &t,
            &[
                ("gbit/s", 1e9),
                ("mbit/s", 1e6),
                ("kbit/s", 1e3),
                ("bit/s", 1.0),
                ("gbps", 1e9),
                ("mbps", 1e6),
                ("kbps", 1e3),
                ("gbit", 1e9),
                ("mbit", 1e6),
                ("kbit", 1e3),
                ("bps", 1.0),
                ("g", 1e9),
                ("m", 1e6),
                ("k", 1e3),
            ],
        );
        let v: f64 = num.trim().parse().map_err(|_| {
            ParseUnitError(format!(
                "invalid rate `{s}` (expected e.g. `12mbps`, `500kbps`)"
            ))
        })?;
        if !v.is_finite() || v < 0.0 {
            return Err(ParseUnitError(format!(
                "invalid rate `{s}`: must be a non-negative number"
            )));
        }
        // Beyond what a `Bitrate` holds the value would silently saturate.
        if v * mult >= u64::MAX as f64 {
            return Err(ParseUnitError(format!(
                "invalid rate `{s}`: too large (at most {:e} bit/s)",
                u64::MAX as f64
            )));
        }
        Ok(Bitrate::from_bps_f64(v * mult))
    }
}

/// Parses `20ms`, `1.5s`, `250us`, `100ns`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, ParseUnitError> {
    let t = s.trim().to_ascii_lowercase();
    let (num, mult) = split_suffix(&t, &[("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9), ("s", 1.0)]);
    let v: f64 = num.trim().parse().map_err(|_| {
        ParseUnitError(format!(
            "invalid duration `{s}` (expected e.g. `20ms`, `2.5s`)"
        ))
    })?;
    if !v.is_finite() || v < 0.0 {
        return Err(ParseUnitError(format!(
            "invalid duration `{s}`: must be a non-negative number"
        )));
    }
    // Beyond what a `Duration` holds (about 584 years) the value would silently saturate.
    if v * mult * 1e9 >= u64::MAX as f64 {
        return Err(ParseUnitError(format!(
            "invalid duration `{s}`: too large (at most {:e} s)",
            u64::MAX as f64 / 1e9
        )));
    }
    Ok(Duration::from_secs_f64(v * mult))
}

fn split_suffix<'a>(t: &'a str, suffixes: &[(&str, f64)]) -> (&'a str, f64) {
    for (suf, mult) in suffixes {
        if let Some(num) = t.strip_suffix(suf) {
            return (num, *mult);
        }
    }
    (t, 1.0)
}

/// Serde adapters that write a typed value in the unit a parameter's key names
/// (`#[serde(rename = "start-kbps", with = "kbps")]`): a scheme's configuration keeps its
/// [`Bitrate`]s and [`Duration`]s, and its `KEY=VALUE` pairs read and print kbit/s, ms, s and
/// bytes ([`crate::scheme::params`]).
pub mod serde_as {
    use super::{Bitrate, DataSize};
    use crate::time::Duration;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

    /// An adapter module per unit: `serialize` writes the typed value as `$raw`, `deserialize`
    /// reads it back.
    macro_rules! adapters {
        ($($(#[$doc:meta])* $name:ident: $t:ty as $raw:ty, $to:path, $from:path;)*) => {$(
            $(#[$doc])*
            pub mod $name {
                use super::*;
                pub fn serialize<S: Serializer>(v: &$t, s: S) -> Result<S::Ok, S::Error> {
                    $to(*v).serialize(s)
                }
                pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                    <$raw>::deserialize(d).map($from)
                }
            }
        )*};
    }

    adapters! {
        /// A [`Bitrate`] in kbit/s (`f64`).
        kbps: Bitrate as f64, Bitrate::kbps_f64, Bitrate::from_kbps_f64;
        /// A [`Duration`] in ms (`f64`).
        ms: Duration as f64, Duration::as_millis_f64, Duration::from_millis_f64;
        /// A [`Duration`] in seconds (`f64`).
        s: Duration as f64, Duration::as_secs_f64, Duration::from_secs_f64;
        /// A [`DataSize`] in bytes (`u64`).
        bytes: DataSize as u64, DataSize::bytes, DataSize::from_bytes;
    }

    /// An optional [`DataSize`] in bytes (`none` when absent).
    pub mod opt_bytes {
        use super::*;
        pub fn serialize<S: Serializer>(v: &Option<DataSize>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                None => s.serialize_none(),
                Some(b) => s.serialize_some(&b.bytes()),
            }
        }
        pub fn deserialize<'de, D>(d: D) -> Result<Option<DataSize>, D::Error>
        where
            D: Deserializer<'de>,
        {
            Option::<u64>::deserialize(d).map(|b| b.map(DataSize::from_bytes))
        }
    }

    /// An optional [`Duration`] in ms, `auto` when absent (`delta-hat-ms=auto`).
    pub mod ms_or_auto {
        use super::*;
        pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                None => s.serialize_str("auto"),
                Some(d) => s.serialize_f64(d.as_millis_f64()),
            }
        }
        pub fn deserialize<'de, D>(d: D) -> Result<Option<Duration>, D::Error>
        where
            D: Deserializer<'de>,
        {
            let s = String::deserialize(d)?;
            if s.trim().eq_ignore_ascii_case("auto") {
                return Ok(None);
            }
            match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Some(Duration::from_millis_f64(x))),
                _ => Err(de::Error::invalid_value(
                    de::Unexpected::Str(&s),
                    &"a number or auto",
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn conversions() {
        let r = Bitrate::from_mbps(12);
        assert_eq!(DataSize::from_bytes(1500).transmit_time(r), ms(1));
        assert_eq!(r * ms(1), DataSize::from_bytes(1500));
        assert_eq!(
            Bitrate::from_size_and_duration(DataSize::from_bytes(1500), ms(1)),
            r
        );
        assert_eq!(
            DataSize::from_bytes(1).transmit_time(Bitrate::ZERO),
            Duration::MAX
        );
    }

    #[test]
    fn parsing() {
        assert_eq!("12mbps".parse::<Bitrate>().unwrap(), Bitrate::from_mbps(12));
        assert_eq!(
            "2.5Mbit/s".parse::<Bitrate>().unwrap(),
            Bitrate::from_kbps(2500)
        );
        assert_eq!(
            "600kbps".parse::<Bitrate>().unwrap(),
            Bitrate::from_kbps(600)
        );
        assert!("fast".parse::<Bitrate>().is_err());
        assert!("-1mbps".parse::<Bitrate>().is_err());
        assert_eq!(parse_duration("25s").unwrap(), Duration::from_secs(25));
        assert_eq!(parse_duration("20ms").unwrap(), ms(20));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert!(parse_duration("soon").is_err());
        // Values a `Bitrate` or `Duration` cannot hold are refused, not saturated.
        assert!("1e30mbps".parse::<Bitrate>().is_err());
        assert!("2e19".parse::<Bitrate>().is_err());
        assert!("1e18bps".parse::<Bitrate>().is_ok());
        assert!(parse_duration("1e30s").is_err());
        assert!(parse_duration("2e10").is_err());
        assert!(parse_duration("1e9s").is_ok());
    }
}
