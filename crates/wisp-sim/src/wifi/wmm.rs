//! WMM classification — DSCP → user priority (RFC 8325 §4) → access category (IEEE
//! 802.11-2016 Table 10-1), as an access point (or a station) picks the EDCA queue of an IP
//! packet.
//!
//! RFC 8325 §4 recommends, per DSCP: CS7 and CS6 → UP 7; EF (46) and VOICE-ADMIT (44) → UP 6;
//! CS5 → UP 5; AF4x, CS4, AF3x, CS3 → UP 4; AF2x → UP 3; CS2, AF1x and DF → UP 0; CS1 and LE
//! (RFC 8622) → UP 1. Any other DSCP takes its three most significant bits (DSCP >> 3), as the
//! RFC's default. UP → AC: 1, 2 → BK; 0, 3 → BE; 4, 5 → VI; 6, 7 → VO.
//!
//! Deviation: CS7/CS6 → UP 7 follows RFC 8325's table for network control; an operator that
//! does not treat them as network control overrides the mapping (`DSCP=AC` overrides, e.g.
//! `48=be`).

use super::edca::AccessCategory;
use std::str::FromStr;

impl AccessCategory {
    /// IEEE 802.1D user priority → access category.
    pub fn from_up(up: u8) -> Self {
        match up & 7 {
            1 | 2 => AccessCategory::Bk,
            0 | 3 => AccessCategory::Be,
            4 | 5 => AccessCategory::Vi,
            _ => AccessCategory::Vo,
        }
    }

    /// The short name used in mappings and reports: `vo`, `vi`, `be`, `bk`.
    pub fn short_name(self) -> &'static str {
        match self {
            AccessCategory::Vo => "vo",
            AccessCategory::Vi => "vi",
            AccessCategory::Be => "be",
            AccessCategory::Bk => "bk",
        }
    }
}

impl FromStr for AccessCategory {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "vo" | "voice" | "ac_vo" => Ok(AccessCategory::Vo),
            "vi" | "video" | "ac_vi" => Ok(AccessCategory::Vi),
            "be" | "best-effort" | "ac_be" => Ok(AccessCategory::Be),
            "bk" | "background" | "ac_bk" => Ok(AccessCategory::Bk),
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
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WmmMap {
    table: [AccessCategory; 64],
}

impl Default for WmmMap {
    fn default() -> Self {
        let mut table = [AccessCategory::Be; 64];
        for (d, slot) in table.iter_mut().enumerate() {
            *slot = AccessCategory::from_up(rfc8325_up(d as u8));
        }
        WmmMap { table }
    }
}

impl WmmMap {
    /// The access category of a DSCP (its low six bits).
    pub fn class(&self, dscp: u8) -> AccessCategory {
        self.table[usize::from(dscp & 63)]
    }

    /// The DSCP of an IP packet (IPv4 or IPv6); `None` if unreadable.
    pub fn dscp(ip: &[u8]) -> Option<u8> {
        match ip.first().map(|b| b >> 4) {
            Some(4) if ip.len() >= 2 => Some(ip[1] >> 2),
            Some(6) if ip.len() >= 2 => Some((((ip[0] & 0x0f) << 4) | (ip[1] >> 4)) >> 2),
            _ => None,
        }
    }

    /// The class of an IP packet by its DSCP; best effort if unreadable.
    pub fn classify(&self, ip: &[u8]) -> AccessCategory {
        Self::dscp(ip).map_or(AccessCategory::Be, |d| self.class(d))
    }

    /// The overrides on top of RFC 8325, as `DSCP=AC` items in DSCP order (empty: RFC 8325).
    pub fn overrides(&self) -> Vec<(u8, AccessCategory)> {
        let rfc = WmmMap::default();
        (0..64u8)
            .filter(|&d| self.class(d) != rfc.class(d))
            .map(|d| (d, self.class(d)))
            .collect()
    }
}

/// `DSCP=AC,…` overrides on top of RFC 8325, e.g. `46=vo,0=be` (also `DSCP=AC;…`).
impl FromStr for WmmMap {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut m = WmmMap::default();
        for item in s.split([',', ';']).map(str::trim).filter(|i| !i.is_empty()) {
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

/// The overrides, `DSCP=AC` joined by `;` (empty for RFC 8325 as it stands).
impl std::fmt::Display for WmmMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let items: Vec<String> = self
            .overrides()
            .iter()
            .map(|(d, ac)| format!("{d}={}", ac.short_name()))
            .collect();
        write!(f, "{}", items.join(";"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc8325_classes() {
        // RFC 8325 §4 (Figure 1) and Table 10-1's UP → AC.
        let m = WmmMap::default();
        assert_eq!(m.class(46), AccessCategory::Vo); // EF
        assert_eq!(m.class(48), AccessCategory::Vo); // CS6
        assert_eq!(m.class(34), AccessCategory::Vi); // AF41
        assert_eq!(m.class(40), AccessCategory::Vi); // CS5 → UP 5
        assert_eq!(m.class(0), AccessCategory::Be);
        assert_eq!(m.class(18), AccessCategory::Be); // AF21 → UP 3
        assert_eq!(m.class(10), AccessCategory::Be); // AF11 → UP 0
        assert_eq!(m.class(8), AccessCategory::Bk); // CS1
        assert_eq!(m.class(1), AccessCategory::Bk); // LE
        assert_eq!(m.class(2), AccessCategory::Be); // unlisted: 2 >> 3 = 0
        assert!(m.overrides().is_empty());
        assert_eq!(m.to_string(), "");
    }

    #[test]
    fn classifies_ip_headers_and_overrides() {
        let m: WmmMap = "0=bk, 46=vi".parse().unwrap();
        // IPv4 TOS 0xb8 = DSCP 46.
        assert_eq!(m.classify(&[0x45, 0xb8, 0, 0]), AccessCategory::Vi);
        assert_eq!(m.classify(&[0x45, 0x00]), AccessCategory::Bk);
        // IPv6 traffic class 0xb8.
        assert_eq!(m.classify(&[0x6b, 0x80, 0, 0]), AccessCategory::Vi);
        assert_eq!(m.classify(&[]), AccessCategory::Be);
        assert_eq!(m.to_string(), "0=bk;46=vi");
        assert_eq!(m.to_string().parse::<WmmMap>().unwrap(), m);
        assert!("64=vo".parse::<WmmMap>().is_err());
        assert!("3=xx".parse::<WmmMap>().is_err());
        assert!("3".parse::<WmmMap>().is_err());
    }
}
