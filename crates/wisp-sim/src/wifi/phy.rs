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
//! HT (802.11n, Clause 19) and VHT (802.11ac, Clause 21), one spatial stream, BCC:
//!
//! | | 11n-2.4 | 11n-5 | 11ac |
//! |---|---|---|---|
//! | band | 2.4 GHz | 5 GHz | 5 GHz |
//! | slot / SIFS | 9 / 10 µs (+6 µs signal extension) | 9 / 16 µs | 9 / 16 µs |
//! | widths | 20, 40 MHz | 20, 40 MHz | 20, 40, 80 MHz |
//! | MCS | HT 0–7 | HT 0–7 | VHT 0–9 (not 9 at 20 MHz) |
//!
//! - Preamble: HT-mixed `L-STF 8 + L-LTF 8 + L-SIG 4 + HT-SIG 8 + HT-STF 4 + HT-LTF 4 = 36 µs`
//!   (19.4.3, one LTF for one stream); VHT `L-STF 8 + L-LTF 8 + L-SIG 4 + VHT-SIG-A 8 +
//!   VHT-STF 4 + VHT-LTF 4 + VHT-SIG-B 4 = 40 µs` (21.4.3).
//! - `N_DBPS = N_SD · N_BPSCS · R`, with `N_SD` = 52, 108, 234 data subcarriers at 20, 40,
//!   80 MHz; `N_SYM = ⌈(16 + 8·L + 6·N_ES) / N_DBPS⌉` with `N_ES = 1` (one encoder covers every
//!   one-stream rate here).
//! - `TXTIME = T_preamble + 4 µs·N_SYM` with the long GI (0.8 µs); with the short GI (0.4 µs,
//!   3.6-µs symbols) `TXTIME = T_preamble + 4 µs·⌈3.6·N_SYM / 4⌉` (Eq. 19-88, 21-105: the
//!   receiver's L-SIG length counts whole 4-µs symbols); 2.4 GHz adds the signal extension.
//! - Data rate `N_DBPS / T_SYM` (6.5…65 Mbit/s HT20 long GI, 7.2…72.2 short GI, VHT80 MCS 9
//!   433.3 Mbit/s).
//! - Acks and BlockAcks answer at the highest basic rate (6, 12, 24 Mbit/s, non-HT) not above
//!   the data rate's non-HT reference rate (10.6.6.5.2; MCS 0 → 6, 1 → 12, 2 → 18, 3 → 24, 4 →
//!   36, 5 → 48, 6 and up → 54 Mbit/s).
//!
//! Deviations:
//! - 802.11g and 11n at 2.4 GHz are pure networks (short slot, no protection, no DSSS
//!   stations); no HT greenfield, STBC, LDPC or multiple streams.
//! - No propagation delay (δ = 0), no aRxTxTurnaroundTime.
//! - The Ack timeout and EIFS use the non-HT preamble (20 µs) and rates, as the responses are
//!   non-HT PPDUs; aRxPHYStartDelay is taken as that preamble.
//! - A VHT PPDU is always an A-MPDU (21.10.2): a lone MPDU's 4-byte delimiter is not added by
//!   [`Phy::ppdu_duration`] (the caller passes the PSDU it means).
//! - ns-3 (3.4x `tx-duration-test`) computes short-GI durations without the 4-µs rounding and
//!   VHT without VHT-SIG-B (36 µs); the tests compare with its figures under both differences.

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
    /// 802.11n (HT) at 2.4 GHz: 11g's timing, HT-mixed PPDUs, 20/40 MHz.
    N24,
    /// 802.11n (HT) at 5 GHz: 11a's timing, HT-mixed PPDUs, 20/40 MHz.
    N5,
    /// 802.11ac (VHT), 5 GHz, 20/40/80 MHz.
    Ac,
}

impl Standard {
    pub fn name(self) -> &'static str {
        match self {
            Standard::B => "11b",
            Standard::A => "11a",
            Standard::G => "11g",
            Standard::N24 => "11n-2.4",
            Standard::N5 => "11n-5",
            Standard::Ac => "11ac",
        }
    }

    /// Whether the PHY sends HT (or VHT) PPDUs.
    pub fn is_ht(self) -> bool {
        matches!(self, Standard::N24 | Standard::N5 | Standard::Ac)
    }

    /// Whether the PHY is in the 2.4-GHz band.
    pub fn is_2_4_ghz(self) -> bool {
        matches!(self, Standard::B | Standard::G | Standard::N24)
    }

    /// The widest channel (MHz) the PHY allows.
    pub fn max_width_mhz(self) -> u16 {
        match self {
            Standard::Ac => 80,
            Standard::N24 | Standard::N5 => 40,
            _ => 20,
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
            "11n" | "n" | "11n-2.4" => Ok(Standard::N24),
            "11n-5" => Ok(Standard::N5),
            "11ac" | "ac" => Ok(Standard::Ac),
            _ => Err(format!(
                "`{s}` is not an 802.11 standard (11b, 11a, 11g, 11n-2.4, 11n-5, 11ac)"
            )),
        }
    }
}

/// An HT or VHT modulation and coding scheme, one spatial stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Mcs {
    /// VHT (802.11ac) rather than HT (802.11n).
    pub vht: bool,
    /// 0–7 (HT) or 0–9 (VHT).
    pub index: u8,
    /// Channel width, MHz: 20, 40 or 80 (VHT only).
    pub width_mhz: u16,
    /// The 0.4-µs guard interval.
    pub short_gi: bool,
}

/// Bits per subcarrier and code rate `(N_BPSCS, numerator, denominator)` of HT/VHT MCS 0–9
/// (Tables 19-27, 21-30): BPSK ½, QPSK ½, QPSK ¾, 16-QAM ½, 16-QAM ¾, 64-QAM ⅔, 64-QAM ¾,
/// 64-QAM ⅚, 256-QAM ¾, 256-QAM ⅚.
const MCS_CODING: [(u32, u32, u32); 10] = [
    (1, 1, 2),
    (2, 1, 2),
    (2, 3, 4),
    (4, 1, 2),
    (4, 3, 4),
    (6, 2, 3),
    (6, 3, 4),
    (6, 5, 6),
    (8, 3, 4),
    (8, 5, 6),
];

/// The non-HT OFDM rates (Mbit/s) and their coding (Table 17-4).
const OFDM_CODING: [(u16, (u32, u32, u32)); 8] = [
    (60, (1, 1, 2)),
    (90, (1, 3, 4)),
    (120, (2, 1, 2)),
    (180, (2, 3, 4)),
    (240, (4, 1, 2)),
    (360, (4, 3, 4)),
    (480, (6, 2, 3)),
    (540, (6, 3, 4)),
];

impl Mcs {
    /// Data subcarriers at this width (52, 108, 234).
    fn data_subcarriers(self) -> u32 {
        match self.width_mhz {
            20 => 52,
            40 => 108,
            _ => 234,
        }
    }

    /// `N_BPSCS` and the code rate.
    pub fn coding(self) -> (u32, u32, u32) {
        MCS_CODING[usize::from(self.index)]
    }

    /// Data bits per OFDM symbol, `N_SD · N_BPSCS · R`.
    pub fn ndbps(self) -> u32 {
        let (bpscs, num, den) = self.coding();
        self.data_subcarriers() * bpscs * num / den
    }

    /// Whether the combination exists (HT: MCS 0–7 at 20/40 MHz; VHT: MCS 0–9 at 20/40/80 MHz,
    /// not MCS 9 at 20 MHz, whose `N_DBPS` is not an integer).
    pub fn is_valid(self) -> bool {
        if self.vht {
            matches!(self.width_mhz, 20 | 40 | 80)
                && self.index <= 9
                && !(self.width_mhz == 20 && self.index == 9)
        } else {
            matches!(self.width_mhz, 20 | 40) && self.index <= 7
        }
    }

    /// The data rate in Mbit/s: `N_DBPS / 4 µs` (long GI) or `/ 3.6 µs` (short GI).
    pub fn mbps(self) -> f64 {
        f64::from(self.ndbps()) / if self.short_gi { 3.6 } else { 4.0 }
    }

    /// The non-HT reference rate (100 kbit/s) used to pick the control response rate
    /// (10.6.6.5.2, by modulation and code rate).
    fn non_ht_reference(self) -> u16 {
        [60, 120, 180, 240, 360, 480, 540, 540, 540, 540][usize::from(self.index)]
    }
}

/// A PHY rate: a non-HT rate (in units of 100 kbit/s: 5.5 Mbit/s is 55) or an HT/VHT MCS.
/// Ordered by data rate first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhyRate {
    /// The data rate in 100 kbit/s (rounded for an MCS).
    r: u16,
    mcs: Option<Mcs>,
}

impl PhyRate {
    pub const fn from_100kbps(r: u16) -> Self {
        PhyRate { r, mcs: None }
    }
    /// The non-HT rate nearest `mbps` in 100-kbit/s steps; `None` when out of range.
    pub fn from_mbps(mbps: f64) -> Option<Self> {
        let r = (mbps * 10.0).round();
        (mbps.is_finite() && (1.0..=65535.0).contains(&r))
            .then_some(PhyRate::from_100kbps(r as u16))
    }
    /// An HT or VHT MCS; `None` if the combination does not exist.
    pub fn from_mcs(mcs: Mcs) -> Option<Self> {
        mcs.is_valid().then(|| PhyRate {
            r: (mcs.mbps() * 10.0).round() as u16,
            mcs: Some(mcs),
        })
    }
    /// HT MCS `index` (0–7) at `width_mhz` (20, 40).
    pub fn ht(index: u8, width_mhz: u16, short_gi: bool) -> Option<Self> {
        Self::from_mcs(Mcs {
            vht: false,
            index,
            width_mhz,
            short_gi,
        })
    }
    /// VHT MCS `index` (0–9) at `width_mhz` (20, 40, 80).
    pub fn vht(index: u8, width_mhz: u16, short_gi: bool) -> Option<Self> {
        Self::from_mcs(Mcs {
            vht: true,
            index,
            width_mhz,
            short_gi,
        })
    }
    /// The data rate, Mbit/s (exact for an MCS: 72.2… for HT20 MCS 7 short GI).
    pub fn mbps(self) -> f64 {
        match self.mcs {
            Some(m) => m.mbps(),
            None => f64::from(self.r) / 10.0,
        }
    }
    /// The data rate in 100 kbit/s (rounded for an MCS).
    pub const fn as_100kbps(self) -> u16 {
        self.r
    }
    /// The MCS, for an HT/VHT rate.
    pub fn mcs(self) -> Option<Mcs> {
        self.mcs
    }
    /// Modulation and coding `(N_BPSCS, numerator, denominator)` of an OFDM-family rate;
    /// `None` for DSSS/CCK.
    pub fn coding(self) -> Option<(u32, u32, u32)> {
        match self.mcs {
            Some(m) => Some(m.coding()),
            None => OFDM_CODING
                .iter()
                .find(|(r, _)| *r == self.r)
                .map(|&(_, c)| c),
        }
    }
    /// Whether this is a DSSS/CCK (802.11b) rate.
    pub fn is_dsss(self) -> bool {
        self.mcs.is_none() && DSSS_RATES.contains(&self.r)
    }
}

impl std::fmt::Display for PhyRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.mcs {
            // One decimal, as the standard's rate tables print them (72.2, 433.3).
            Some(m) => write!(f, "{}", (m.mbps() * 10.0).round() / 10.0),
            None => write!(f, "{}", self.mbps()),
        }
    }
}

const DSSS_RATES: [u16; 4] = [10, 20, 55, 110];
const DSSS_BASIC: [u16; 2] = [10, 20];
const OFDM_RATES: [u16; 8] = [60, 90, 120, 180, 240, 360, 480, 540];
const OFDM_BASIC: [u16; 3] = [60, 120, 240];

/// HT-mixed preamble and headers, one spatial stream (µs).
pub const HT_PREAMBLE_US: u64 = 36;
/// VHT preamble and headers, one spatial stream (µs).
pub const VHT_PREAMBLE_US: u64 = 40;
/// Bytes of a compressed BlockAck frame (9.3.1.9).
pub const BLOCK_ACK_BYTES: u32 = 32;

/// The timing of one PHY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phy {
    pub standard: Standard,
    pub slot: Duration,
    pub sifs: Duration,
    /// Non-HT preamble and PLCP header (PHY header) duration.
    pub preamble: Duration,
    /// Idle time after each OFDM PPDU that belongs to it (signal extension at 2.4 GHz).
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
            Standard::A | Standard::N5 | Standard::Ac => Phy {
                standard,
                slot: us(9),
                sifs: us(16),
                preamble: us(20),
                signal_extension: Duration::ZERO,
                cw_min: 15,
                cw_max: 1023,
            },
            Standard::G | Standard::N24 => Phy {
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

    /// The PHY's non-HT data rates, in 100 kbit/s (for HT/VHT PHYs, the OFDM rates they also
    /// send; their MCSs are [`Phy::mcs_rates`]).
    pub fn rates(&self) -> &'static [u16] {
        if self.is_ofdm() {
            &OFDM_RATES
        } else {
            &DSSS_RATES
        }
    }

    /// The HT/VHT rates at one width and guard interval, slowest first (empty for a non-HT
    /// PHY or a width it does not have).
    pub fn mcs_rates(&self, width_mhz: u16, short_gi: bool) -> Vec<PhyRate> {
        let (vht, top) = match self.standard {
            Standard::Ac => (true, 9),
            Standard::N24 | Standard::N5 => (false, 7),
            _ => return vec![],
        };
        if width_mhz > self.standard.max_width_mhz() {
            return vec![];
        }
        (0..=top)
            .filter_map(|index| {
                PhyRate::from_mcs(Mcs {
                    vht,
                    index,
                    width_mhz,
                    short_gi,
                })
            })
            .collect()
    }

    /// The rates a station uses at one width and guard interval, slowest first: the MCSs of
    /// an HT/VHT PHY, the non-HT rates otherwise.
    pub fn data_rates(&self, width_mhz: u16, short_gi: bool) -> Vec<PhyRate> {
        if self.standard.is_ht() {
            self.mcs_rates(width_mhz, short_gi)
        } else {
            self.rates()
                .iter()
                .map(|&r| PhyRate::from_100kbps(r))
                .collect()
        }
    }

    /// The data rate within 0.05 Mbit/s of `mbps` at this width and guard interval (an MCS on
    /// an HT/VHT PHY, else a non-HT rate).
    pub fn find_rate(&self, mbps: f64, width_mhz: u16, short_gi: bool) -> Option<PhyRate> {
        self.data_rates(width_mhz, short_gi)
            .into_iter()
            .find(|r| (r.mbps() - mbps).abs() < 0.051)
    }

    /// Whether `rate` is one of this PHY's rates.
    pub fn supports(&self, rate: PhyRate) -> bool {
        match rate.mcs {
            None => self.rates().contains(&rate.r),
            Some(m) => {
                m.is_valid()
                    && self.standard.is_ht()
                    && (!m.vht || self.standard == Standard::Ac)
                    && m.width_mhz <= self.standard.max_width_mhz()
            }
        }
    }

    /// The rates as text, for error messages: `6, 9, 12, …` (the MCS rates at 20 MHz, long
    /// GI, for an HT/VHT PHY).
    pub fn rates_text(&self) -> String {
        self.data_rates(20, false)
            .iter()
            .map(|r| r.to_string())
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

    /// Airtime of a PPDU carrying `bytes` (the whole PSDU, FCS included) at `rate`, including
    /// the preamble and any signal extension.
    pub fn ppdu_duration(&self, bytes: u32, rate: PhyRate) -> Duration {
        let bits = 8 * u64::from(bytes);
        let r = u64::from(rate.r);
        if let Some(m) = rate.mcs {
            let symbols = (16 + bits + 6).div_ceil(u64::from(m.ndbps()));
            // Short GI: 3.6-µs symbols, the total rounded up to whole 4-µs symbols.
            let data_us = if m.short_gi {
                4 * (9 * symbols).div_ceil(10)
            } else {
                4 * symbols
            };
            let pre = if m.vht {
                VHT_PREAMBLE_US
            } else {
                HT_PREAMBLE_US
            };
            Duration::from_micros(pre + data_us) + self.signal_extension
        } else if self.is_ofdm() {
            // N_DBPS = 4 µs · R = 4·R bits per symbol, R in Mbit/s = r/10.
            let ndbps = 4 * r / 10;
            let symbols = (16 + bits + 6).div_ceil(ndbps.max(1));
            self.preamble + Duration::from_micros(4 * symbols) + self.signal_extension
        } else {
            // ⌈8·L / R⌉ µs with R = r/10 Mbit/s.
            self.preamble + Duration::from_micros((bits * 10).div_ceil(r.max(1)))
        }
    }

    /// The rate of the Ack (or BlockAck) that answers a frame sent at `data`: the highest
    /// basic rate not above it, or above its non-HT reference rate for an MCS (the lowest
    /// basic rate if none is).
    pub fn ack_rate(&self, data: PhyRate) -> PhyRate {
        let basic: &[u16] = if self.is_ofdm() {
            &OFDM_BASIC
        } else {
            &DSSS_BASIC
        };
        let reference = data.mcs.map_or(data.r, Mcs::non_ht_reference);
        PhyRate::from_100kbps(
            basic
                .iter()
                .copied()
                .filter(|&b| b <= reference)
                .max()
                .unwrap_or(basic[0]),
        )
    }

    /// Airtime of the Ack that answers a frame sent at `data`.
    pub fn ack_duration(&self, data: PhyRate) -> Duration {
        self.ppdu_duration(ACK_BYTES, self.ack_rate(data))
    }

    /// Airtime of the compressed BlockAck that answers an A-MPDU sent at `data`.
    pub fn block_ack_duration(&self, data: PhyRate) -> Duration {
        self.ppdu_duration(BLOCK_ACK_BYTES, self.ack_rate(data))
    }

    /// The lowest mandatory rate (1 or 6 Mbit/s).
    pub fn lowest_rate(&self) -> PhyRate {
        PhyRate::from_100kbps(self.rates()[0])
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

/// Short names the 802.11 tests share.
#[cfg(test)]
pub(crate) mod test_util {
    use super::PhyRate;
    use wisp_core::Duration;

    pub fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }
    pub fn rate(mbps: f64) -> PhyRate {
        PhyRate::from_mbps(mbps).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::{rate, us};
    use super::*;

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

    fn rounded(rates: &[PhyRate]) -> Vec<f64> {
        rates
            .iter()
            .map(|r| (r.mbps() * 10.0).round() / 10.0)
            .collect()
    }

    #[test]
    fn ht_and_vht_data_rates_match_the_standard_tables() {
        // IEEE 802.11-2016 Tables 19-27 (HT20) and 19-28 (HT40), one stream; 802.11ac Tables
        // 21-30 (VHT20), 21-38 (VHT80), one stream — as printed, one decimal.
        let n = Phy::new(Standard::N5);
        assert_eq!(
            rounded(&n.mcs_rates(20, false)),
            [6.5, 13.0, 19.5, 26.0, 39.0, 52.0, 58.5, 65.0]
        );
        assert_eq!(
            rounded(&n.mcs_rates(20, true)),
            [7.2, 14.4, 21.7, 28.9, 43.3, 57.8, 65.0, 72.2]
        );
        assert_eq!(
            rounded(&n.mcs_rates(40, false)),
            [13.5, 27.0, 40.5, 54.0, 81.0, 108.0, 121.5, 135.0]
        );
        assert_eq!(
            rounded(&n.mcs_rates(40, true)),
            [15.0, 30.0, 45.0, 60.0, 90.0, 120.0, 135.0, 150.0]
        );
        assert!(n.mcs_rates(80, false).is_empty());
        let ac = Phy::new(Standard::Ac);
        // VHT20: MCS 9 does not exist with one stream.
        assert_eq!(
            rounded(&ac.mcs_rates(20, false)),
            [6.5, 13.0, 19.5, 26.0, 39.0, 52.0, 58.5, 65.0, 78.0]
        );
        assert_eq!(
            rounded(&ac.mcs_rates(80, false)),
            [
                29.3, 58.5, 87.8, 117.0, 175.5, 234.0, 263.3, 292.5, 351.0, 390.0
            ]
        );
        assert_eq!(
            rounded(&ac.mcs_rates(80, true)),
            [
                32.5, 65.0, 97.5, 130.0, 195.0, 260.0, 292.5, 325.0, 390.0, 433.3
            ]
        );
        assert_eq!(rounded(&ac.mcs_rates(40, true))[9], 200.0);
        assert!(PhyRate::vht(9, 20, false).is_none());
        assert!(PhyRate::ht(8, 20, false).is_none());
        // Parsing a rate: 72.2 finds HT20 MCS 7 short GI, 433.3 VHT80 MCS 9 short GI.
        assert_eq!(n.find_rate(72.2, 20, true), PhyRate::ht(7, 20, true));
        assert_eq!(ac.find_rate(433.3, 80, true), PhyRate::vht(9, 80, true));
        assert_eq!(n.find_rate(54.0, 20, false), None);
        assert!(n.supports(PhyRate::ht(7, 40, true).unwrap()));
        assert!(!n.supports(PhyRate::vht(7, 40, true).unwrap()));
        assert!(!Phy::new(Standard::G).supports(PhyRate::ht(0, 20, false).unwrap()));
        assert_eq!(PhyRate::vht(9, 80, true).unwrap().to_string(), "433.3");
    }

    #[test]
    fn ht_and_vht_airtime_against_ns3() {
        // ns-3's tx-duration-test (5 GHz, long GI) gives 1536 B at HT20 MCS 7: 228 µs, 76 B:
        // 48, 14 B: 40; HT40 MCS 7: 128, 44, 40. By the formula: ⌈12310/260⌉ = 48 symbols,
        // 36 + 192 = 228.
        let n = Phy::new(Standard::N5);
        let ht = |i, w, sgi| PhyRate::ht(i, w, sgi).unwrap();
        let vht = |i, w, sgi| PhyRate::vht(i, w, sgi).unwrap();
        for (bytes, r, expect) in [
            (1536, ht(7, 20, false), 228),
            (76, ht(7, 20, false), 48),
            (14, ht(7, 20, false), 40),
            (1536, ht(7, 40, false), 128),
            (76, ht(7, 40, false), 44),
            (14, ht(7, 40, false), 40),
        ] {
            assert_eq!(n.ppdu_duration(bytes, r), us(expect), "{bytes} B {r:?}");
        }
        // ns-3 leaves out VHT-SIG-B (its VHT preamble is 36 µs): ours is 4 µs longer. Its VHT
        // figures: VHT20 MCS 8 1536 B 196, 76 B 48; VHT40 MCS 9 1536 B 108; VHT80 MCS 0 1536 B
        // 460, 76 B 60, 14 B 44; VHT80 MCS 9 1536 B 68.
        let ac = Phy::new(Standard::Ac);
        for (bytes, r, ns3) in [
            (1536, vht(8, 20, false), 196),
            (76, vht(8, 20, false), 48),
            (1536, vht(9, 40, false), 108),
            (1536, vht(0, 80, false), 460),
            (76, vht(0, 80, false), 60),
            (14, vht(0, 80, false), 44),
            (1536, vht(9, 80, false), 68),
        ] {
            assert_eq!(ac.ppdu_duration(bytes, r), us(ns3 + 4), "{bytes} B {r:?}");
        }
        // Short GI: ns-3 counts 3.6-µs symbols without rounding (HT20 MCS 0 1536 B: 1742.4 µs;
        // HT40 MCS 7: 118.8; HT20 MCS 6: 226.8). The standard rounds the data part up to whole
        // 4-µs symbols: ours is ns-3's rounded up so.
        for (bytes, r, ns3_ns) in [
            (1536, ht(0, 20, true), 1_742_400u64),
            (1536, ht(7, 40, true), 118_800),
            (1536, ht(6, 20, true), 226_800),
            (76, ht(0, 20, true), 126_000),
        ] {
            let ours = n.ppdu_duration(bytes, r).as_nanos();
            let data_ns3 = ns3_ns - 36_000;
            assert_eq!(
                ours - 36_000,
                data_ns3.div_ceil(4000) * 4000,
                "{bytes} B {r:?}"
            );
        }
        // 2.4 GHz adds the 6-µs signal extension.
        let n24 = Phy::new(Standard::N24);
        assert_eq!(n24.ppdu_duration(1536, ht(7, 20, false)), us(234));
        assert_eq!((n24.sifs, n24.slot), (us(10), us(9)));
        assert_eq!((n.sifs, n.slot), (us(16), us(9)));
    }

    #[test]
    fn control_responses_go_at_a_basic_rate() {
        let n = Phy::new(Standard::N5);
        let ht = |i| PhyRate::ht(i, 20, false).unwrap();
        // MCS 0 → 6, MCS 1, 2 → 12, MCS 3 and up → 24 Mbit/s (the basic rate set 6, 12, 24).
        assert_eq!(n.ack_rate(ht(0)), rate(6.0));
        assert_eq!(n.ack_rate(ht(2)), rate(12.0));
        assert_eq!(n.ack_rate(ht(3)), rate(24.0));
        assert_eq!(n.ack_rate(PhyRate::vht(9, 80, true).unwrap()), rate(24.0));
        // BlockAck (32 B) at 6 Mbit/s: 20 + 4·⌈(16 + 256 + 6)/24⌉ = 68 µs; at 24 Mbit/s 32 µs
        // (notes §5.2, ns-3's m_blockAckTxTime).
        assert_eq!(n.block_ack_duration(ht(0)), us(68));
        assert_eq!(n.block_ack_duration(ht(7)), us(32));
        assert_eq!(n.ack_duration(ht(7)), us(28));
        // At 2.4 GHz the response carries the signal extension too.
        assert_eq!(Phy::new(Standard::N24).ack_duration(ht(7)), us(34));
    }
}
