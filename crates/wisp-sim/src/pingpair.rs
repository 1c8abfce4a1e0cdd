//! Ping-Pair in the simulator (Das et al., CoNEXT 2017, §5): a flow's receiving
//! station pings its access point, the AP answers, and the pairs' results go to the flow's
//! `kwikr` receiver (§5.3 T_c → eq. (3)).
//!
//! A flow with a [`PingPairSpec`] ([`crate::sim::RoutedFlow::pingpair`]; the scenario file's
//! flow key `pingpair`; on by default for `kwikr` flows whose data path ends with a Wi-Fi hop)
//! runs a [`Prober`](wisp_core::pingpair::Prober) at the station that receives its data over
//! the last Wi-Fi hop of its data path:
//!
//! * every `interval` (500 ms for Kwikr, §6; 200 ms for the validation, §8.1) the station sends
//!   a normal-priority echo request (TOS `tos-normal`, 0x00) and at once a high-priority one
//!   (`tos-high`, 0xb8): each enters the station's uplink queue of the access category its TOS
//!   maps to (the medium's [`WmmMap`](crate::wifi::wmm::WmmMap), DSCP = TOS >> 2);
//! * the AP answers each request the instant it has it: the reply (same size, same TOS, as a
//!   Linux host answers) enters the AP's downlink queue of that access category for the
//!   station;
//! * the replies' arrivals go to the prober; a finished pair is logged ([`PingRecord`]) and,
//!   when the flow's receiver is `skype-ukf`/`kwikr`, handed to
//!   `UkfReceiver::on_ping_pair` with the MAC rate R of the normal reply's frame (the
//!   instantaneous rate the paper's Android implementation read from the OS, §7.3): the
//!   receiver counts its own packets sandwiched between the replies, T_a = n_a (s_a/R + t),
//!   T_c = T_q − T_a, smoothed into eq. (3).
//!
//! Ground truth, per pair: the time the normal reply waited in the AP's queue (enqueue to the
//! head), its whole AP delay (enqueue to delivery), and the frames ahead of it in its access
//! category's queue (every destination) when it was enqueued. With `sample=DURATION` the
//! engine also samples the AP's queue of the normal ping's access category every `sample`
//! ([`QueueSample`]; §8.1's "number of frames in the downlink queue", logged continuously).
//!
//! Keys of the spec string (`wisp_sim::pingpair::PingPairSpec::from_str`), `KEY=VALUE` joined
//! by `,`, or `on` (the defaults) or `off`:
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `interval` | `500ms` | time between pairs (Kwikr: 500 ms; the paper's validation: 200 ms) |
//! | `tos-high` | `0xb8` | TOS of the high-priority ping (EF: AC_VO under RFC 8325) |
//! | `tos-normal` | `0x00` | TOS of the normal-priority ping (AC_BE) |
//! | `sample` | none | sample the AP queue's occupancy this often (ground truth) |
//! | `start` | the flow's start | when the first pair goes |
//!
//! Deviations: the AP answers at once (no processing time); the WMM check's triplets (§5.5)
//! are not run in the simulator (the medium's WMM setting is known); single, not dual, pairs;
//! the channel-access delay t is the receiver's fixed 0.125 ms (§7.3), as on Android; a lost
//! request or reply makes the pair invalid after the prober's 10-s timeout; probes stop when
//! the flow stops.

pub use crate::log::{PingRecord, QueueSample};
use crate::wifi::edca::AccessCategory;
use std::fmt;
use std::str::FromStr;
use wisp_core::Duration;
use wisp_core::spec::{ItemError, key_values};
use wisp_core::units::parse_duration;

/// Bytes of an echo request or reply on the medium: IPv4 20 + ICMP 8 + 56 bytes of payload
/// (`ping`'s default).
pub const PROBE_BYTES: u32 = 84;

/// How a flow's station runs Ping-Pair.
#[derive(Clone, Debug, PartialEq)]
pub struct PingPairSpec {
    /// Time between pairs.
    pub interval: Duration,
    pub tos_normal: u8,
    pub tos_high: u8,
    /// Sample the AP queue's occupancy this often (`None`: no samples).
    pub sample: Option<Duration>,
    /// When the first pair goes (`None`: when the flow starts).
    pub start: Option<Duration>,
}

impl Default for PingPairSpec {
    /// Kwikr's: a pair every 500 ms (§6), TOS 0x00 and 0xb8.
    fn default() -> Self {
        PingPairSpec {
            interval: Duration::from_millis(500),
            tos_normal: wisp_core::pingpair::TOS_NORMAL,
            tos_high: wisp_core::pingpair::TOS_HIGH,
            sample: None,
            start: None,
        }
    }
}

impl PingPairSpec {
    /// Kwikr's probing: every 500 ms (§6).
    pub fn kwikr() -> Self {
        Self::default()
    }

    /// The validation's probing (§8.1): every 200 ms, the AP queue sampled every millisecond.
    pub fn validation() -> Self {
        PingPairSpec {
            interval: Duration::from_millis(200),
            sample: Some(Duration::from_millis(1)),
            ..Self::default()
        }
    }
}

fn parse_tos(v: &str) -> Result<u8, String> {
    let v = v.trim();
    let r = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u8::from_str_radix(h, 16),
        None => v.parse::<u8>(),
    };
    r.map_err(|_| format!("`{v}` is not a TOS byte (0 to 255, or 0x00 to 0xff)"))
}

/// `on`, or `KEY=VALUE,…` (keys: interval, tos-high, tos-normal, sample, start). `off` is not a
/// spec: callers take it as "no Ping-Pair" ([`PingPairSpec::parse_option`]).
impl FromStr for PingPairSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut spec = PingPairSpec::default();
        let s = s.trim();
        if s == "on" || s.is_empty() {
            return Ok(spec);
        }
        let items = key_values(s).map_err(|e| match e {
            ItemError::NotKeyValue(item) => format!(
                "`{item}` is not KEY=VALUE (keys: interval, tos-high, tos-normal, sample, start)"
            ),
            ItemError::GivenTwice(k) => format!("`{k}` given twice"),
        })?;
        for (k, v) in items {
            let dur = |what: &str| -> Result<Duration, String> {
                let d = parse_duration(v).map_err(|e| format!("`{what}`: {}", e.0))?;
                if d > Duration::from_secs(86_400) {
                    return Err(format!("`{what}` must be at most one day"));
                }
                Ok(d)
            };
            match k {
                "interval" => {
                    let d = dur(k)?;
                    if d < Duration::from_millis(1) {
                        return Err("`interval` must be at least 1 ms".into());
                    }
                    spec.interval = d;
                }
                "sample" => {
                    let d = dur(k)?;
                    if d < Duration::from_micros(100) {
                        return Err("`sample` must be at least 100 us".into());
                    }
                    spec.sample = Some(d);
                }
                "start" => spec.start = Some(dur(k)?),
                "tos-high" => spec.tos_high = parse_tos(v).map_err(|e| format!("`{k}`: {e}"))?,
                "tos-normal" => {
                    spec.tos_normal = parse_tos(v).map_err(|e| format!("`{k}`: {e}"))?
                }
                _ => {
                    return Err(format!(
                        "unknown key `{k}` (keys: interval, tos-high, tos-normal, sample, start)"
                    ));
                }
            }
        }
        Ok(spec)
    }
}

impl PingPairSpec {
    /// `off` → `None`; anything else as [`FromStr`].
    pub fn parse_option(s: &str) -> Result<Option<Self>, String> {
        if s.trim() == "off" {
            Ok(None)
        } else {
            s.parse().map(Some)
        }
    }
}

/// A duration in the largest unit that states it exactly.
fn exact(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// The canonical spec string (parses back to an equal spec).
impl fmt::Display for PingPairSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "interval={},tos-high={:#04x},tos-normal={:#04x}",
            exact(self.interval),
            self.tos_high,
            self.tos_normal
        )?;
        if let Some(s) = self.sample {
            write!(f, ",sample={}", exact(s))?;
        }
        if let Some(s) = self.start {
            write!(f, ",start={}", exact(s))?;
        }
        Ok(())
    }
}

/// The access category a TOS byte reaches on a medium (DSCP = TOS >> 2).
pub fn tos_dscp(tos: u8) -> u8 {
    tos >> 2
}

/// Summary of a flow's pairs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PingSummary {
    pub pairs: u64,
    pub valid: u64,
    /// Pairs the receiver attributed (kwikr/skype-ukf).
    pub attributed: u64,
    pub t_q_p50_ms: Option<f64>,
    pub t_c_mean_ms: Option<f64>,
    pub n_a_mean: Option<f64>,
}

/// The pairs of `flow` in `pings`, summarised.
pub fn summary(pings: &[PingRecord], flow: u16) -> PingSummary {
    let mine: Vec<&PingRecord> = pings.iter().filter(|p| p.flow == flow).collect();
    let mut t_q: Vec<f64> = mine
        .iter()
        .filter_map(|p| p.t_q.map(|d| d.as_millis_f64()))
        .collect();
    t_q.sort_by(f64::total_cmp);
    let t_c: Vec<f64> = mine
        .iter()
        .filter_map(|p| p.t_c.map(|d| d.as_millis_f64()))
        .collect();
    let n_a: Vec<f64> = mine
        .iter()
        .filter_map(|p| p.n_a.map(|n| n as f64))
        .collect();
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    PingSummary {
        pairs: mine.len() as u64,
        valid: t_q.len() as u64,
        attributed: t_c.len() as u64,
        t_q_p50_ms: wisp_core::stats::median_upper(&t_q),
        t_c_mean_ms: mean(&t_c),
        n_a_mean: mean(&n_a),
    }
}

/// The default for a flow of `scheme` along `data`: Kwikr's probing ([`PingPairSpec::kwikr`])
/// for a flow whose scheme asks for Ping-Pair ([`Needs::ping_pair`](wisp_core::scheme::Needs))
/// and whose data path's last Wi-Fi hop goes from an AP (node 0 of its medium) to a station;
/// otherwise none.
pub fn default_for(
    scheme: &wisp_core::scheme::SchemeConfig,
    data: &[crate::path::Hop],
) -> Option<PingPairSpec> {
    if !scheme.needs().ping_pair {
        return None;
    }
    let last = data.iter().rev().find_map(|h| match *h {
        crate::path::Hop::Wifi { from, .. } => Some(from),
        crate::path::Hop::Link(_) => None,
    })?;
    (last == crate::wifi::link::AP).then(PingPairSpec::kwikr)
}

/// The access category used for queue samples: the normal ping's.
pub(crate) fn sample_ac(map: &crate::wifi::wmm::WmmMap, wmm: bool, tos: u8) -> AccessCategory {
    if wmm {
        map.class(tos_dscp(tos))
    } else {
        AccessCategory::Be
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_display_and_refuse_by_key() {
        assert_eq!("on".parse::<PingPairSpec>().unwrap(), PingPairSpec::kwikr());
        assert_eq!(PingPairSpec::parse_option("off").unwrap(), None);
        let s: PingPairSpec = "interval=200ms,tos-high=0xc0,sample=1ms,start=2s"
            .parse()
            .unwrap();
        assert_eq!(s.interval, Duration::from_millis(200));
        assert_eq!(s.tos_high, 0xc0);
        assert_eq!(s.sample, Some(Duration::from_millis(1)));
        assert_eq!(s.start, Some(Duration::from_secs(2)));
        assert_eq!(s.to_string().parse::<PingPairSpec>().unwrap(), s);
        assert_eq!(
            PingPairSpec::validation()
                .to_string()
                .parse::<PingPairSpec>()
                .unwrap(),
            PingPairSpec::validation()
        );
        for (bad, key) in [
            ("interval=0ms", "interval"),
            ("interval=soon", "interval"),
            ("tos-high=300", "tos-high"),
            ("tos-high=0xzz", "tos-high"),
            ("colour=red", "colour"),
            ("interval", "interval"),
            ("sample=1us", "sample"),
            ("interval=1s,interval=2s", "interval"),
        ] {
            let e = bad.parse::<PingPairSpec>().unwrap_err();
            assert!(e.contains(key), "{bad}: {e}");
        }
    }

    #[test]
    fn tos_maps_to_access_categories() {
        let map = crate::wifi::wmm::WmmMap::default();
        assert_eq!(sample_ac(&map, true, 0x00), AccessCategory::Be);
        assert_eq!(sample_ac(&map, true, 0xb8), AccessCategory::Vo);
        assert_eq!(sample_ac(&map, false, 0xb8), AccessCategory::Be);
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text: a spec or an error, never a panic; a spec displays to one that parses back
        /// to itself.
        #[test]
        fn any_text_parses_or_fails_cleanly(s in "\\PC{0,60}") {
            if let Ok(spec) = s.parse::<PingPairSpec>() {
                prop_assert_eq!(spec.to_string().parse::<PingPairSpec>().unwrap(), spec);
            }
        }

        #[test]
        fn key_value_texts_parse_or_fail_cleanly(
            k in prop::sample::select(vec!["interval", "tos-high", "tos-normal", "sample", "start", "x"]),
            v in "[0-9a-fx.]{0,8}(ms|us|ns|s)?",
        ) {
            if let Ok(spec) = format!("{k}={v}").parse::<PingPairSpec>() {
                prop_assert_eq!(spec.to_string().parse::<PingPairSpec>().unwrap(), spec);
            }
        }
    }
}
