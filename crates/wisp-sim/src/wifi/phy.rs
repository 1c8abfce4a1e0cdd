//! PHY timing — IEEE 802.11-2016 Clause 16 (DSSS), 17 (HR/DSSS, CCK), 17/18 (OFDM), 18 (ERP).
//!
//! The interframe spaces and the airtime of a PPDU for 802.11b (DSSS/CCK, 2.4 GHz),
//! 802.11a (OFDM, 5 GHz) and 802.11g (ERP-OFDM, 2.4 GHz, short slot). Constants are the
//! PHY characteristics tables (IEEE 802.11-2016 Table 15-5, 16-5, 17-21, 18-5; collected in
//! `notes/wbest-pingpair-wifi.md` §5.2):
//!
//! | PHY | slot | SIFS | preamble + PLCP header | aCWmin/aCWmax |
//! |---|---|---|---|---|
//! | 11b | 20 µs | 10 µs | 192 µs long (96 µs short) | 31/1023 |
//! | 11a | 9 µs | 16 µs | 20 µs | 15/1023 |
//! | 11g | 9 µs | 10 µs + 6 µs signal extension | 20 µs | 15/1023 |
//!
//! Equations:
//! - `DIFS = SIFS + 2·slot`; `AIFS[AC] = SIFS + AIFSN[AC]·slot` (10.3.2.3.6).
//! - DSSS/CCK PPDU: `T = T_preamble+header + ⌈8·L / R⌉` µs (the LENGTH field is whole µs).
//! - OFDM PPDU: `T = 20 µs + 4 µs·⌈(16 + 8·L + 6) / N_DBPS⌉` (17.4.3, 16 SERVICE and 6 tail
//!   bits), `N_DBPS = 4·R` with R in Mbit/s; ERP-OFDM adds a 6-µs signal extension (18.3.2.4).
//! - An Ack is 14 bytes, sent at the highest basic rate not above the data rate
//!   (10.6.6.5; basic rate sets 11b {1, 2}, 11a/g {6, 12, 24} Mbit/s).
//! - `EIFS = SIFS + AckTxTime(lowest mandatory rate) + DIFS` (10.3.2.3.7); with EDCA the
//!   DIFS is the AC's AIFS.
//! - Ack timeout = `SIFS + slot + aRxPHYStartDelay` (10.3.2.9), aRxPHYStartDelay taken as the
//!   preamble + PLCP header duration.
//! - MPDU bytes = MSDU + LLC/SNAP 8 + MAC header 24 (non-QoS data; 26 with QoS) + FCS 4.
//!
//! Deviations:
//! - 802.11g is a pure ERP BSS (short slot, no protection, no DSSS stations).
//! - No propagation delay (δ = 0), no aRxTxTurnaroundTime.
//! - 802.11n/ac timing (HT/VHT preambles, one spatial stream) is not here yet; [`Standard`]
//!   is the place to add it.

use wisp_core::Duration;

/// Bytes of an Ack frame (frame control, duration, RA, FCS).
pub const ACK_BYTES: u32 = 14;
/// MAC header of a non-QoS data frame.
pub const MAC_HEADER_BYTES: u32 = 24;
/// MAC header of a QoS data frame (adds the 2-byte QoS control field).
pub const QOS_MAC_HEADER_BYTES: u32 = 26;
/// Frame check sequence.
pub const FCS_BYTES: u32 = 4;
/// LLC/SNAP encapsulation of an IP packet.
pub const LLC_SNAP_BYTES: u32 = 8;
/// The largest MSDU (IEEE 802.11-2016 9.2.4.7: 2304 bytes).
pub const MAX_MSDU_BYTES: u32 = 2304;

/// Which PHY.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Standard {
    /// 802.11b: DSSS (1, 2 Mbit/s) and CCK (5.5, 11 Mbit/s), 2.4 GHz.
    B,
    /// 802.11a: OFDM, 5 GHz.
    A,
    /// 802.11g: ERP-OFDM, 2.4 GHz, short slot.
    G,
}

impl Standard {
    pub fn name(self) -> &'static str {
        match self {
            Standard::B => "11b",
            Standard::A => "11a",
            Standard::G => "11g",
        }
    }
}

impl std::str::FromStr for Standard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "11b" | "b" => Ok(Standard::B),
            "11a" | "a" => Ok(Standard::A),
            "11g" | "g" => Ok(Standard::G),
            _ => Err(format!("`{s}` is not an 802.11 standard (11b, 11a, 11g)")),
        }
    }
}

/// A PHY rate, in units of 100 kbit/s (5.5 Mbit/s is 55).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhyRate(u16);

impl PhyRate {
    pub const fn from_100kbps(r: u16) -> Self {
        PhyRate(r)
    }
    /// The rate nearest `mbps` in 100-kbit/s steps; `None` when out of range.
    pub fn from_mbps(mbps: f64) -> Option<Self> {
        let r = (mbps * 10.0).round();
        (mbps.is_finite() && (1.0..=65535.0).contains(&r)).then_some(PhyRate(r as u16))
    }
    pub fn mbps(self) -> f64 {
        f64::from(self.0) / 10.0
    }
    pub const fn as_100kbps(self) -> u16 {
        self.0
    }
}

impl std::fmt::Display for PhyRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.mbps())
    }
}

const DSSS_RATES: [u16; 4] = [10, 20, 55, 110];
const DSSS_BASIC: [u16; 2] = [10, 20];
const OFDM_RATES: [u16; 8] = [60, 90, 120, 180, 240, 360, 480, 540];
const OFDM_BASIC: [u16; 3] = [60, 120, 240];

/// The timing of one PHY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phy {
    pub standard: Standard,
    pub slot: Duration,
    pub sifs: Duration,
    /// Preamble and PLCP header (PHY header) duration.
    pub preamble: Duration,
    /// Idle time after each PPDU that belongs to it (ERP-OFDM signal extension).
    pub signal_extension: Duration,
    /// aCWmin and aCWmax.
    pub cw_min: u16,
    pub cw_max: u16,
}

impl Phy {
    pub fn new(standard: Standard) -> Self {
        let us = Duration::from_micros;
        match standard {
            Standard::B => Phy {
                standard,
                slot: us(20),
                sifs: us(10),
                preamble: us(192),
                signal_extension: Duration::ZERO,
                cw_min: 31,
                cw_max: 1023,
            },
            Standard::A => Phy {
                standard,
                slot: us(9),
                sifs: us(16),
                preamble: us(20),
                signal_extension: Duration::ZERO,
                cw_min: 15,
                cw_max: 1023,
            },
            Standard::G => Phy {
                standard,
                slot: us(9),
                sifs: us(10),
                preamble: us(20),
                signal_extension: us(6),
                cw_min: 15,
                cw_max: 1023,
            },
        }
    }

    /// 802.11b with the short (96-µs) preamble.
    pub fn with_short_preamble(mut self) -> Self {
        if self.standard == Standard::B {
            self.preamble = Duration::from_micros(96);
        }
        self
    }

    fn is_ofdm(&self) -> bool {
        self.standard != Standard::B
    }

    /// The PHY's data rates, in 100 kbit/s.
    pub fn rates(&self) -> &'static [u16] {
        if self.is_ofdm() {
            &OFDM_RATES
        } else {
            &DSSS_RATES
        }
    }

    /// Whether `rate` is one of this PHY's rates.
    pub fn supports(&self, rate: PhyRate) -> bool {
        self.rates().contains(&rate.0)
    }

    /// The rates as text, for error messages: `6, 9, 12, …`.
    pub fn rates_text(&self) -> String {
        self.rates()
            .iter()
            .map(|&r| PhyRate(r).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `DIFS = SIFS + 2·slot`.
    pub fn difs(&self) -> Duration {
        self.aifs(2)
    }

    /// `AIFS = SIFS + AIFSN·slot`.
    pub fn aifs(&self, aifsn: u8) -> Duration {
        self.sifs + self.slot * u64::from(aifsn)
    }

    /// Airtime of a PPDU carrying `bytes` (the whole MPDU, FCS included) at `rate`, including
    /// the preamble and any signal extension.
    pub fn ppdu_duration(&self, bytes: u32, rate: PhyRate) -> Duration {
        let bits = 8 * u64::from(bytes);
        let r = u64::from(rate.0);
        if self.is_ofdm() {
            // N_DBPS = 4 µs · R = 4·R bits per symbol, R in Mbit/s = r/10.
            let ndbps = 4 * r / 10;
            let symbols = (16 + bits + 6).div_ceil(ndbps.max(1));
            self.preamble + Duration::from_micros(4 * symbols) + self.signal_extension
        } else {
            // ⌈8·L / R⌉ µs with R = r/10 Mbit/s.
            self.preamble + Duration::from_micros((bits * 10).div_ceil(r.max(1)))
        }
    }

    /// The rate of the Ack that answers a frame sent at `data`: the highest basic rate not
    /// above it (the lowest basic rate if none is).
    pub fn ack_rate(&self, data: PhyRate) -> PhyRate {
        let basic: &[u16] = if self.is_ofdm() {
            &OFDM_BASIC
        } else {
            &DSSS_BASIC
        };
        PhyRate(
            basic
                .iter()
                .copied()
                .filter(|&b| b <= data.0)
                .max()
                .unwrap_or(basic[0]),
        )
    }

    /// Airtime of the Ack that answers a frame sent at `data`.
    pub fn ack_duration(&self, data: PhyRate) -> Duration {
        self.ppdu_duration(ACK_BYTES, self.ack_rate(data))
    }

    /// The lowest mandatory rate (1 or 6 Mbit/s).
    pub fn lowest_rate(&self) -> PhyRate {
        PhyRate(self.rates()[0])
    }

    /// `SIFS + AckTxTime(lowest mandatory rate)`: what EIFS adds to the AIFS.
    pub fn eifs_minus_aifs(&self) -> Duration {
        self.sifs + self.ppdu_duration(ACK_BYTES, self.lowest_rate())
    }

    /// `EIFS = SIFS + AckTxTime(lowest rate) + DIFS`.
    pub fn eifs(&self) -> Duration {
        self.eifs_minus_aifs() + self.difs()
    }

    /// How long a transmitter waits for an Ack: `SIFS + slot + aRxPHYStartDelay`.
    pub fn ack_timeout(&self) -> Duration {
        self.sifs + self.slot + self.preamble
    }

    /// The MPDU that carries an MSDU of `msdu_bytes` (an IP packet) in a non-QoS data frame.
    pub fn mpdu_bytes(msdu_bytes: u32) -> u32 {
        msdu_bytes + LLC_SNAP_BYTES + MAC_HEADER_BYTES + FCS_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }
    fn rate(mbps: f64) -> PhyRate {
        PhyRate::from_mbps(mbps).unwrap()
    }

    #[test]
    fn interframe_spaces() {
        let b = Phy::new(Standard::B);
        assert_eq!((b.slot, b.sifs, b.difs()), (us(20), us(10), us(50)));
        let a = Phy::new(Standard::A);
        assert_eq!((a.slot, a.sifs, a.difs()), (us(9), us(16), us(34)));
        let g = Phy::new(Standard::G);
        assert_eq!((g.slot, g.sifs, g.difs()), (us(9), us(10), us(28)));
        // AC_BE's AIFS (AIFSN 3) on 11a: 16 + 27 = 43 µs.
        assert_eq!(a.aifs(3), us(43));
    }

    #[test]
    fn ack_airtime_matches_the_notes() {
        // notes §5.2: Ack 14 B → 44 µs at 6 Mbit/s, 28 µs at 24 Mbit/s.
        let a = Phy::new(Standard::A);
        assert_eq!(a.ppdu_duration(ACK_BYTES, rate(6.0)), us(44));
        assert_eq!(a.ppdu_duration(ACK_BYTES, rate(24.0)), us(28));
        assert_eq!(a.ack_rate(rate(54.0)), rate(24.0));
        assert_eq!(a.ack_rate(rate(9.0)), rate(6.0));
        assert_eq!(a.ack_rate(rate(18.0)), rate(12.0));
        // 11b: 192 + 112 bits at 1 Mbit/s = 304 µs; at 2 Mbit/s 192 + 56 = 248 µs.
        let b = Phy::new(Standard::B);
        assert_eq!(b.ack_duration(rate(1.0)), us(304));
        assert_eq!(b.ack_duration(rate(11.0)), us(248));
        // 11g: the signal extension follows every ERP-OFDM PPDU.
        let g = Phy::new(Standard::G);
        assert_eq!(g.ack_duration(rate(54.0)), us(34));
    }

    #[test]
    fn data_airtime_by_hand() {
        // 1500-byte IP packet → 1536-byte MPDU = 12288 bits.
        let mpdu = Phy::mpdu_bytes(1500);
        assert_eq!(mpdu, 1536);
        let a = Phy::new(Standard::A);
        // 54 Mbit/s: N_DBPS 216, ⌈12310/216⌉ = 57 symbols → 20 + 228 = 248 µs.
        assert_eq!(a.ppdu_duration(mpdu, rate(54.0)), us(248));
        // 6 Mbit/s: N_DBPS 24, ⌈12310/24⌉ = 513 → 20 + 2052 = 2072 µs.
        assert_eq!(a.ppdu_duration(mpdu, rate(6.0)), us(2072));
        let b = Phy::new(Standard::B);
        // 1 Mbit/s: 192 + 12288 µs; 11 Mbit/s: 192 + ⌈12288/11⌉ = 192 + 1118.
        assert_eq!(b.ppdu_duration(mpdu, rate(1.0)), us(192 + 12288));
        assert_eq!(b.ppdu_duration(mpdu, rate(11.0)), us(192 + 1118));
        assert_eq!(b.ppdu_duration(mpdu, rate(5.5)), us(192 + 2235));
        assert_eq!(
            b.with_short_preamble().ppdu_duration(mpdu, rate(2.0)),
            us(96 + 6144)
        );
    }

    #[test]
    fn eifs_and_ack_timeout() {
        // 11b: 10 + 304 + 50 = 364 µs; 11a: 16 + 44 + 34 = 94 µs; 11g: 10 + 50 + 28 = 88 µs.
        assert_eq!(Phy::new(Standard::B).eifs(), us(364));
        assert_eq!(Phy::new(Standard::A).eifs(), us(94));
        assert_eq!(Phy::new(Standard::G).eifs(), us(88));
        assert_eq!(Phy::new(Standard::A).ack_timeout(), us(45));
    }

    #[test]
    fn rates_are_checked() {
        let a = Phy::new(Standard::A);
        assert!(a.supports(rate(54.0)));
        assert!(!a.supports(rate(11.0)));
        assert!(Phy::new(Standard::B).supports(rate(5.5)));
        assert_eq!(a.rates_text(), "6, 9, 12, 18, 24, 36, 48, 54");
        assert!(PhyRate::from_mbps(f64::NAN).is_none());
        assert!(PhyRate::from_mbps(0.0).is_none());
    }
}
