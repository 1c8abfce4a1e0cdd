//! WMM priority classes for the emulated bottleneck: DSCP → user priority (RFC 8325) → access
//! category (IEEE 802.11 / WMM), served in strict priority VO > VI > BE > BK.
//!
//! RFC 8325 §4 recommends, per DSCP: CS7 and CS6 → UP 7; EF (46) and VOICE-ADMIT (44) → UP 6;
//! CS5 → UP 5; AF4x, CS4, AF3x, CS3 → UP 4; AF2x → UP 3; CS2, AF1x and DF → UP 0; CS1 and LE
//! (RFC 8622) → UP 1. Any other DSCP takes its three most significant bits (DSCP >> 3), as the
//! RFC's default. UP → AC: 1, 2 → BK; 0, 3 → BE; 4, 5 → VI; 6, 7 → VO.
//!
//! Deviations: a real WMM access point contends per access category with EDCA parameters; the
//! emulator has one server and serves the four queues in strict priority, which is what
//! Ping-Pair's measurement relies on (the high-priority packet overtakes the queue). CS7/CS6 →
//! UP 7 follows RFC 8325's table for network control; an operator that does not treat them as
//! network control overrides the mapping (`--wmm-map`).

use std::str::FromStr;

/// A WMM access category, in priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessCategory {
    Voice = 0,
    Video = 1,
    BestEffort = 2,
    Background = 3,
}

impl AccessCategory {
    pub const ALL: [AccessCategory; 4] = [
        AccessCategory::Voice,
        AccessCategory::Video,
        AccessCategory::BestEffort,
        AccessCategory::Background,
    ];

    /// IEEE 802.1D user priority → access category.
    pub fn from_up(up: u8) -> Self {
        match up & 7 {
            1 | 2 => AccessCategory::Background,
            0 | 3 => AccessCategory::BestEffort,
            4 | 5 => AccessCategory::Video,
            _ => AccessCategory::Voice,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AccessCategory::Voice => "vo",
            AccessCategory::Video => "vi",
            AccessCategory::BestEffort => "be",
            AccessCategory::Background => "bk",
        }
    }
}

impl FromStr for AccessCategory {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "vo" | "voice" => Ok(AccessCategory::Voice),
            "vi" | "video" => Ok(AccessCategory::Video),
            "be" | "best-effort" => Ok(AccessCategory::BestEffort),
            "bk" | "background" => Ok(AccessCategory::Background),
            _ => Err(format!("unknown access category `{s}` (vo, vi, be, bk)")),
        }
    }
}

/// RFC 8325's recommended user priority for a DSCP.
pub fn rfc8325_up(dscp: u8) -> u8 {
    match dscp & 63 {
        56 | 48 => 7,
        46 | 44 => 6,
        40 => 5,
        34 | 36 | 38 | 32 | 26 | 28 | 30 | 24 => 4,
        18 | 20 | 22 => 3,
        16 | 10 | 12 | 14 | 0 => 0,
        8 | 1 => 1,
        d => d >> 3,
    }
}

/// DSCP → access category, RFC 8325 unless overridden.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WmmMap {
    table: [AccessCategory; 64],
}

impl Default for WmmMap {
    fn default() -> Self {
        let mut table = [AccessCategory::BestEffort; 64];
        for (d, slot) in table.iter_mut().enumerate() {
            *slot = AccessCategory::from_up(rfc8325_up(d as u8));
        }
        WmmMap { table }
    }
}

impl WmmMap {
    pub fn class(&self, dscp: u8) -> AccessCategory {
        self.table[usize::from(dscp & 63)]
    }

    /// The class of an IP packet (IPv4 or IPv6) by its DSCP; best effort if unreadable.
    pub fn classify(&self, ip: &[u8]) -> AccessCategory {
        let dscp = match ip.first().map(|b| b >> 4) {
            Some(4) if ip.len() >= 2 => ip[1] >> 2,
            Some(6) if ip.len() >= 2 => (((ip[0] & 0x0f) << 4) | (ip[1] >> 4)) >> 2,
            _ => return AccessCategory::BestEffort,
        };
        self.class(dscp)
    }
}

/// `--wmm-map DSCP=AC,…` overrides on top of RFC 8325, e.g. `46=vo,0=be`.
impl FromStr for WmmMap {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut m = WmmMap::default();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (d, ac) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}` is not DSCP=AC"))?;
            let d: u8 = d
                .trim()
                .parse()
                .ok()
                .filter(|&d| d < 64)
                .ok_or_else(|| format!("`{d}` is not a DSCP (0–63)"))?;
            m.table[usize::from(d)] = ac.trim().parse()?;
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc8325_classes() {
        let m = WmmMap::default();
        assert_eq!(m.class(46), AccessCategory::Voice); // EF
        assert_eq!(m.class(48), AccessCategory::Voice); // CS6
        assert_eq!(m.class(34), AccessCategory::Video); // AF41
        assert_eq!(m.class(40), AccessCategory::Video); // CS5 → UP 5
        assert_eq!(m.class(0), AccessCategory::BestEffort);
        assert_eq!(m.class(18), AccessCategory::BestEffort); // AF21 → UP 3
        assert_eq!(m.class(10), AccessCategory::BestEffort); // AF11 → UP 0
        assert_eq!(m.class(8), AccessCategory::Background); // CS1
        assert_eq!(m.class(1), AccessCategory::Background); // LE
        assert_eq!(m.class(2), AccessCategory::BestEffort); // unlisted: 2 >> 3 = 0
    }

    #[test]
    fn classifies_ip_headers_and_overrides() {
        let m: WmmMap = "0=bk, 46=vi".parse().unwrap();
        // IPv4 TOS 0xb8 = DSCP 46.
        assert_eq!(m.classify(&[0x45, 0xb8, 0, 0]), AccessCategory::Video);
        assert_eq!(m.classify(&[0x45, 0x00]), AccessCategory::Background);
        // IPv6 traffic class 0xb8.
        assert_eq!(m.classify(&[0x6b, 0x80, 0, 0]), AccessCategory::Video);
        assert_eq!(m.classify(&[]), AccessCategory::BestEffort);
        assert!("64=vo".parse::<WmmMap>().is_err());
        assert!("3=xx".parse::<WmmMap>().is_err());
        assert!("3".parse::<WmmMap>().is_err());
    }
}
