//! A-MPDU aggregation with block acknowledgement — IEEE 802.11-2016 9.7 (A-MPDU format),
//! 10.12 (A-MPDU operation), 10.24 (block ack, immediate, compressed BlockAck).
//!
//! An HT/VHT transmitter that wins the medium sends up to `max_mpdus` of its queue's head
//! MPDUs in one PPDU; the receiver answers SIFS later with a compressed BlockAck (32 bytes, at
//! the basic rate [`Phy::block_ack_duration`]) naming the MPDUs it received; the transmitter
//! keeps the others at the head of its queue and retransmits them, each with its own retry
//! count, in its next A-MPDU.
//!
//! - Each subframe is a 4-byte delimiter and an MPDU (QoS data: MSDU + LLC/SNAP 8 + QoS header
//!   26 + FCS 4), padded to a multiple of 4 bytes except the last (9.7.1).
//! - Limits: `max_mpdus` (the 64-frame BlockAck window), the A-MPDU length (65,535 bytes HT;
//!   1,048,575 bytes VHT, 9.4.2.56.3 / 9.4.2.158.2), the PPDU time (aPPDUMaxTime 5.484 ms for
//!   HT-mixed/VHT) and, for an AC with a TXOP limit, PPDU + SIFS + BlockAck within it.
//! - Per-MPDU loss: the PHY header is received or not once per PPDU (then nothing is, and no
//!   BlockAck comes); each MPDU is then lost independently with the error model's data-part
//!   probability for its length (or the medium's constant frame error rate).
//! - A BlockAck naming at least one MPDU is a successful exchange (CW resets, 10.22.2.7 with
//!   10.24.7); no BlockAck (every MPDU lost, a header error or a collision) is a failure (CW
//!   doubles; the transmitter waits its BlockAck timeout, `SIFS + slot + preamble`, as for an
//!   Ack).
//!
//! Deviations:
//! - The BlockAck agreement exists from the start (no ADDBA exchange); implicit BlockAckReq
//!   (normal ack policy in the A-MPDU), no explicit BlockAckReq frames; BlockAcks are never
//!   lost.
//! - The window is the first `max_mpdus` frames of the queue (the queue keeps the failed ones
//!   at its head, so the window never holds a gap wider than that).
//! - No A-MSDU; no TXOP continuation after an A-MPDU (the aggregate fills the TXOP instead).
//! - An MPDU at its retry limit is dropped after the exchange; the EDCAF's own retry counter
//!   only drives CW.

use super::phy::{FCS_BYTES, LLC_SNAP_BYTES, Phy, PhyRate, QOS_MAC_HEADER_BYTES};
use wisp_core::Duration;

/// The A-MPDU delimiter.
pub const DELIMITER_BYTES: u32 = 4;
/// aPPDUMaxTime for HT-mixed and VHT PPDUs.
pub const PPDU_MAX_TIME: Duration = Duration::from_micros(5484);
/// Largest HT A-MPDU (maximum A-MPDU length exponent 3: 2^16 − 1).
pub const HT_MAX_AMPDU_BYTES: u32 = 65_535;
/// Largest VHT A-MPDU (exponent 7: 2^20 − 1).
pub const VHT_MAX_AMPDU_BYTES: u32 = 1_048_575;

/// A transmitter's aggregation limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AmpduConfig {
    /// MPDUs per A-MPDU (the BlockAck window; 64 at most).
    pub max_mpdus: u32,
    /// A-MPDU length limit (bytes); the HT or VHT maximum by default, whichever applies.
    pub max_bytes: Option<u32>,
    /// PPDU time limit.
    pub max_time: Duration,
}

impl Default for AmpduConfig {
    fn default() -> Self {
        AmpduConfig {
            max_mpdus: 64,
            max_bytes: None,
            max_time: PPDU_MAX_TIME,
        }
    }
}

/// The QoS data MPDU that carries an MSDU of `msdu_bytes`.
pub fn qos_mpdu_bytes(msdu_bytes: u32) -> u32 {
    msdu_bytes + LLC_SNAP_BYTES + QOS_MAC_HEADER_BYTES + FCS_BYTES
}

/// How many of `msdus` (the queue's head MSDU sizes, in order) one A-MPDU at `rate` carries,
/// and its PSDU length. At least one MPDU always goes (a lone MPDU bigger than a limit is
/// sent alone). `txop_limit`: the AC's TXOP limit (zero: none).
pub fn plan(
    phy: &Phy,
    rate: PhyRate,
    config: &AmpduConfig,
    txop_limit: Duration,
    msdus: impl Iterator<Item = u32>,
) -> (usize, u32) {
    let vht = rate.mcs().is_some_and(|m| m.vht);
    let max_bytes = config.max_bytes.unwrap_or(if vht {
        VHT_MAX_AMPDU_BYTES
    } else {
        HT_MAX_AMPDU_BYTES
    });
    let mut time = config.max_time.min(PPDU_MAX_TIME);
    if !txop_limit.is_zero() {
        let overhead = phy.sifs + phy.block_ack_duration(rate);
        time = time.min(txop_limit.saturating_sub(overhead));
    }
    let max = config.max_mpdus.clamp(1, 64) as usize;
    let mut n = 0;
    let mut psdu = 0u32;
    for msdu in msdus.take(max) {
        // The previous subframe is padded to 4 bytes once another follows.
        let padded = psdu.div_ceil(4) * 4;
        let next = padded + DELIMITER_BYTES + qos_mpdu_bytes(msdu);
        if n > 0 && (next > max_bytes || phy.ppdu_duration(next, rate) > time) {
            break;
        }
        psdu = next;
        n += 1;
    }
    (n, psdu)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::Standard;

    #[test]
    fn subframes_are_delimited_and_padded() {
        let phy = Phy::new(Standard::N5);
        let r = PhyRate::ht(7, 20, false).unwrap();
        let c = AmpduConfig::default();
        // 1500-byte MSDU → 1538-byte QoS MPDU; subframes 4 + 1538 = 1542, padded to 1544
        // when another follows: two make 1544 + 1542 = 3086 bytes.
        assert_eq!(qos_mpdu_bytes(1500), 1538);
        assert_eq!(
            plan(&phy, r, &c, Duration::ZERO, [1500].into_iter()),
            (1, 1542)
        );
        assert_eq!(
            plan(&phy, r, &c, Duration::ZERO, [1500, 1500].into_iter()),
            (2, 3086)
        );
    }

    #[test]
    fn the_limits_bind() {
        let phy = Phy::new(Standard::Ac);
        let c = AmpduConfig::default();
        let many = || std::iter::repeat(1500);
        // VHT80 MCS 9 short GI: 64 MPDUs of 1542(4) bytes = 98,814 bytes take
        // 40 + 4·⌈0.9·⌈(16 + 8·98814 + 6)/1560⌉⌉ = 40 + 4·456 µs = 1.864 ms: the window binds.
        let fast = PhyRate::vht(9, 80, true).unwrap();
        let (n, psdu) = plan(&phy, fast, &c, Duration::ZERO, many());
        assert_eq!((n, psdu), (64, 63 * 1544 + 1542));
        assert!(phy.ppdu_duration(psdu, fast) < PPDU_MAX_TIME);
        // HT40 MCS 7 short GI (150 Mbit/s): the 65,535-byte length limit binds first: 42
        // subframes (42·1544 − 2 = 64,846 bytes; 43 would be 66,390).
        let n_phy = Phy::new(Standard::N5);
        let ht40 = PhyRate::ht(7, 40, true).unwrap();
        let (n, psdu) = plan(&n_phy, ht40, &c, Duration::ZERO, many());
        assert_eq!((n, psdu), (42, 64_846));
        // HT20 MCS 7 (65 Mbit/s): the PPDU time binds: 5.484 ms holds ⌊(5484 − 36)/4⌋ = 1362
        // symbols of 260 bits; 28 subframes (43,230 bytes) need ⌈(22 + 345,840)/260⌉ = 1331, 29
        // (44,774 bytes) need 1378.
        let ht = PhyRate::ht(7, 20, false).unwrap();
        let (n, psdu) = plan(&n_phy, ht, &c, Duration::ZERO, many());
        assert_eq!((n, psdu), (28, 43_230));
        // HT20 MCS 0 (6.5 Mbit/s): 5.484 ms holds ⌊(5484 − 36)/4⌋ = 1362 symbols of 26 bits:
        // 2 subframes (3,086 bytes) need ⌈(22 + 24,688)/26⌉ = 951 symbols, 3 (4,630 bytes) need
        // 1426: too many.
        let slow = PhyRate::ht(0, 20, false).unwrap();
        let (n, psdu) = plan(&n_phy, slow, &c, Duration::ZERO, many());
        assert_eq!(n, 2, "{psdu}");
        assert!(n_phy.ppdu_duration(psdu, slow) <= PPDU_MAX_TIME);
        // A TXOP limit (AC_VI's 3.008 ms) leaves room for the BlockAck.
        let (n, psdu) = plan(&n_phy, ht, &c, Duration::from_micros(3008), many());
        let exchange = n_phy.ppdu_duration(psdu, ht) + n_phy.sifs + n_phy.block_ack_duration(ht);
        assert!(exchange <= Duration::from_micros(3008) && n >= 10, "{n}");
        // And the configured count.
        let small = AmpduConfig { max_mpdus: 8, ..c };
        assert_eq!(plan(&phy, fast, &small, Duration::ZERO, many()).0, 8);
    }
}
