//! Saturation throughput — Bianchi's setting simulated on the [`Medium`]
//! (G. Bianchi, JSAC 2000, §IV; ns-3 `examples/wireless/wifi-bianchi.cc`).
//!
//! N DCF stations, each always backlogged with MSDUs of one size (an IP packet of `bytes`,
//! UDP-like, no RTS/CTS), at one PHY rate; the aggregate throughput of acknowledged MSDU bytes
//! over the run, beside Bianchi's model with DIFS and with EIFS after a collision.
//!
//! `simulated_mbps = 8 · Σ acknowledged MSDU bytes / duration`;
//! `goodput_udp_mbps` counts only the UDP payload (`bytes − 28`: IPv4 20 + UDP 8).
//!
//! Deviations:
//! - Retransmissions are unlimited, as Bianchi's model assumes and ns-3's validation sets
//!   (`MaxSsrc` = ∞); the medium's default retry limit is 7.
//! - The run starts with every station's first counter drawn at t = 0; no warm-up is cut.

use super::ampdu::AmpduConfig;
use super::bianchi::{bianchi_difs_mbps, bianchi_eifs_mbps};
use super::edca::AccessCategory;
use super::medium::Medium;
use super::phy::{MAX_MSDU_BYTES, Phy, PhyRate, Standard};
use super::station::StationConfig;
use wisp_core::{Duration, Instant};

/// IPv4 and UDP headers.
pub const IP_UDP_HEADER_BYTES: u32 = 28;

/// A saturation experiment.
#[derive(Clone, Debug)]
pub struct SaturationConfig {
    pub standard: Standard,
    pub rate: PhyRate,
    pub stations: u32,
    /// MSDU (IP packet) bytes.
    pub bytes: u32,
    pub duration: Duration,
    pub seed: u64,
    /// Probability that a lone transmission is lost.
    pub frame_error_rate: f64,
    /// `true`: QoS stations (EDCA's counting rule, 10.22.2.4: a counter also decrements at the
    /// slot boundary where another transmission starts — the rule Bianchi's chain assumes);
    /// `false`: non-QoS stations (DCF, 10.3.4.3). Either way one access category, AC_BE with
    /// the DCF parameters (AIFSN 2, CWmin, CWmax of the PHY), so only the counting rule differs.
    pub qos: bool,
    /// A-MPDU with block Ack ([`AmpduConfig::default`]: up to 64 MPDUs within the length and
    /// PPDU time limits) for an HT/VHT rate; Bianchi's model (one MPDU per access) then does
    /// not apply.
    pub ampdu: bool,
}

/// Why an experiment cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SaturationError {
    #[error("--rate-mbps: {rate} Mbit/s is not an 802.{std} rate ({rates})")]
    Rate {
        rate: String,
        std: &'static str,
        rates: String,
    },
    #[error("--stations: must be 1 to 1000, not {0}")]
    Stations(u32),
    #[error("--bytes: must be {min} to {max} (an IP packet with its UDP header), not {0}", min = IP_UDP_HEADER_BYTES + 1, max = MAX_MSDU_BYTES)]
    Bytes(u32),
    #[error("--duration-s: must be positive and at most 100000 s")]
    Duration,
    #[error("frame error rate must be in [0, 1), not {0}")]
    FrameErrorRate(String),
    #[error("--ampdu: A-MPDU needs an HT or VHT rate (11n, 11ac), not 802.{0}")]
    Ampdu(&'static str),
}

/// What an experiment measured, beside the model.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SaturationResult {
    pub simulated_mbps: f64,
    pub goodput_udp_mbps: f64,
    pub bianchi_difs_mbps: f64,
    pub bianchi_eifs_mbps: f64,
    /// Acknowledged MSDUs.
    pub delivered: u64,
    /// Busy periods with two or more transmitters.
    pub collisions: u64,
    /// Attempts (first tries and retries).
    pub attempts: u64,
    /// Simulated seconds.
    pub duration_s: f64,
}

impl SaturationResult {
    /// The relative gap to the nearer of the two model values.
    pub fn nearer_error(&self) -> f64 {
        let d = (self.simulated_mbps - self.bianchi_difs_mbps).abs() / self.bianchi_difs_mbps;
        let e = (self.simulated_mbps - self.bianchi_eifs_mbps).abs() / self.bianchi_eifs_mbps;
        d.min(e)
    }
}

impl SaturationConfig {
    /// Checks the inputs and builds the PHY.
    pub fn check(&self) -> Result<Phy, SaturationError> {
        let phy = Phy::new(self.standard);
        if !phy.supports(self.rate) {
            return Err(SaturationError::Rate {
                rate: self.rate.to_string(),
                std: self.standard.name(),
                rates: phy.rates_text(),
            });
        }
        if !(1..=1000).contains(&self.stations) {
            return Err(SaturationError::Stations(self.stations));
        }
        if !(IP_UDP_HEADER_BYTES + 1..=MAX_MSDU_BYTES).contains(&self.bytes) {
            return Err(SaturationError::Bytes(self.bytes));
        }
        if self.duration.is_zero() || self.duration > Duration::from_secs(100_000) {
            return Err(SaturationError::Duration);
        }
        if !(0.0..1.0).contains(&self.frame_error_rate) {
            return Err(SaturationError::FrameErrorRate(
                self.frame_error_rate.to_string(),
            ));
        }
        if self.ampdu && self.rate.mcs().is_none() {
            return Err(SaturationError::Ampdu(self.standard.name()));
        }
        Ok(phy)
    }

    /// The medium with its saturated stations, ready to run.
    pub fn medium(&self) -> Result<Medium, SaturationError> {
        let phy = self.check()?;
        let mut medium = Medium::new(phy, self.seed);
        medium.set_frame_error_rate(self.frame_error_rate);
        for _ in 0..self.stations {
            let mut c = StationConfig::dcf(&phy, self.rate);
            c.qos = self.qos;
            if self.ampdu {
                c.ampdu = Some(AmpduConfig::default());
            }
            for p in &mut c.edca {
                p.retry_limit = u32::MAX;
            }
            c.saturated = Some((AccessCategory::Be, self.bytes));
            medium.add_station(c);
        }
        Ok(medium)
    }
}

/// Runs the experiment.
pub fn run(config: &SaturationConfig) -> Result<SaturationResult, SaturationError> {
    let mut medium = config.medium()?;
    medium.set_recording(false);
    medium.run_until(Instant::ZERO + config.duration);
    let phy = *medium.phy();
    let totals = medium.totals();
    let secs = config.duration.as_secs_f64();
    let mbps = |bytes: f64| bytes * 8.0 / secs / 1e6;
    Ok(SaturationResult {
        simulated_mbps: mbps(totals.delivered_bytes as f64),
        goodput_udp_mbps: mbps(
            (totals.delivered_packets * u64::from(config.bytes - IP_UDP_HEADER_BYTES)) as f64,
        ),
        bianchi_difs_mbps: bianchi_difs_mbps(&phy, config.rate, config.stations, config.bytes),
        bianchi_eifs_mbps: bianchi_eifs_mbps(&phy, config.rate, config.stations, config.bytes),
        delivered: totals.delivered_packets,
        collisions: medium.channel_stats().collisions,
        attempts: totals.attempts,
        duration_s: secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(standard: Standard, mbps: f64, stations: u32, secs: u64) -> SaturationConfig {
        SaturationConfig {
            standard,
            rate: PhyRate::from_mbps(mbps).unwrap(),
            stations,
            bytes: 1500,
            duration: Duration::from_secs(secs),
            seed: 1,
            frame_error_rate: 0.0,
            qos: false,
            ampdu: false,
        }
    }

    /// The cases of the 802.11 medium's acceptance that miss 3% (by 3.1–3.5%): 6 Mbit/s with 50
    /// stations and W = 16, where the simulation has fewer collisions than the model. The
    /// stations here are non-QoS (DCF), whose counters do not count the slot in which the
    /// medium turns busy (10.3.4.3); Bianchi's chain decrements every counter in every virtual
    /// slot, a busy one included — the rule of a QoS station's EDCAF, which acts at the slot
    /// boundary where another transmission starts (10.22.2.4). Run with the EDCA rule (`qos =
    /// true`), all 32 cases fall within 1.1% of the DIFS form, so the gap is the model's form
    /// against DCF, not an error in the medium; the DCF rule stays for DCF stations. (Since the
    /// other stations defer AIFS, not EIFS, after a collision — no PHY header to decode, see
    /// `medium::basic` — every case is nearer the DIFS form; 11g 54 Mbit/s n=50 missed by 3.40%
    /// when they deferred EIFS, and is 0.63% from the DIFS form now.) A miss that starts
    /// passing fails this test too (then the list is updated, with the reason in the commit).
    const KNOWN_MISSES: &[&str] = &["11a 6 n=50", "11g 6 n=50"];

    /// The acceptance of the 802.11 medium: within 3% of the nearer of the DIFS and EIFS forms, for 11b at 1
    /// and 11 Mbit/s and 11a/g at 6, 24 and 54 Mbit/s, 5 to 50 stations.
    #[test]
    fn wifi_saturation_matches_bianchi() {
        let mut misses = vec![];
        let mut report = String::new();
        // 100 simulated seconds each, as `wisp wifi bianchi` runs by default.
        for (std, mbps) in [
            (Standard::B, 1.0),
            (Standard::B, 11.0),
            (Standard::A, 6.0),
            (Standard::A, 24.0),
            (Standard::A, 54.0),
            (Standard::G, 6.0),
            (Standard::G, 24.0),
            (Standard::G, 54.0),
        ] {
            for n in [5, 10, 20, 50] {
                let r = run(&config(std, mbps, n, 100)).unwrap();
                let name = format!("{} {mbps} n={n}", std.name());
                let err = r.nearer_error();
                report += &format!(
                    "{name}: simulated {:.3} difs {:.3} eifs {:.3} ({:.2}%)\n",
                    r.simulated_mbps,
                    r.bianchi_difs_mbps,
                    r.bianchi_eifs_mbps,
                    100.0 * err
                );
                // Every case, a known miss too, stays within 5%.
                assert!(err < 0.05, "{report}");
                if err > 0.03 {
                    misses.push(name);
                }
            }
        }
        eprint!("{report}");
        assert_eq!(misses, KNOWN_MISSES, "{report}");
    }

    /// The same 32 cases with QoS stations (`--access edca`): the counting rule Bianchi's
    /// chain assumes (every counter decrements in every virtual slot, a busy one included), the
    /// DCF parameters otherwise. Every case within 3% of the nearer form (1.1% of the DIFS form
    /// at most, seed 1).
    #[test]
    fn wifi_saturation_with_edca_counting_matches_bianchi() {
        let mut report = String::new();
        let mut worst: f64 = 0.0;
        let mut cases = 0;
        for (std, mbps) in [
            (Standard::B, 1.0),
            (Standard::B, 11.0),
            (Standard::A, 6.0),
            (Standard::A, 24.0),
            (Standard::A, 54.0),
            (Standard::G, 6.0),
            (Standard::G, 24.0),
            (Standard::G, 54.0),
        ] {
            for n in [5, 10, 20, 50] {
                let mut c = config(std, mbps, n, 100);
                c.qos = true;
                let r = run(&c).unwrap();
                let err = r.nearer_error();
                report += &format!(
                    "{} {mbps} n={n}: simulated {:.3} difs {:.3} eifs {:.3} ({:.2}%)\n",
                    std.name(),
                    r.simulated_mbps,
                    r.bianchi_difs_mbps,
                    r.bianchi_eifs_mbps,
                    100.0 * err
                );
                worst = worst.max(err);
                cases += 1;
            }
        }
        eprint!("{report}");
        assert_eq!(cases, 32);
        assert!(worst < 0.03, "{report}");
    }

    /// One 11g station at 54 Mbit/s, 1500-byte packets: the WBest paper measured 28.94 Mbit/s
    /// of UDP throughput on an idle channel (Table II, case 0); the issue asks 28–31.
    #[test]
    fn wifi_one_station_at_54_mbps() {
        let r = run(&config(Standard::G, 54.0, 1, 10)).unwrap();
        assert!((28.0..=31.0).contains(&r.goodput_udp_mbps), "{r:?}");
        // By hand: DIFS 28 + 7.5·9 + 254 + 10 + 34 = 393.5 µs per MSDU, 1472 UDP bytes each.
        let by_hand = 1472.0 * 8.0 / 393.5;
        assert!(
            (r.goodput_udp_mbps - by_hand).abs() / by_hand < 0.01,
            "{r:?}"
        );
        assert_eq!(r.collisions, 0);
    }

    #[test]
    fn wifi_saturation_is_deterministic_by_seed() {
        let a = run(&config(Standard::A, 24.0, 10, 2)).unwrap();
        let b = run(&config(Standard::A, 24.0, 10, 2)).unwrap();
        assert_eq!(a, b);
        let mut c = config(Standard::A, 24.0, 10, 2);
        c.seed = 2;
        assert_ne!(run(&c).unwrap().delivered, a.delivered);
    }

    #[test]
    fn wifi_bad_inputs_are_errors() {
        let bad = |f: &dyn Fn(&mut SaturationConfig)| {
            let mut c = config(Standard::A, 54.0, 5, 1);
            f(&mut c);
            run(&c).unwrap_err().to_string()
        };
        assert!(bad(&|c| c.rate = PhyRate::from_mbps(11.0).unwrap()).contains("6, 9, 12"));
        assert!(bad(&|c| c.stations = 0).contains("--stations"));
        assert!(bad(&|c| c.bytes = 9000).contains("--bytes"));
        assert!(bad(&|c| c.duration = Duration::ZERO).contains("--duration-s"));
        assert!(bad(&|c| c.frame_error_rate = 1.0).contains("frame error"));
    }

    #[test]
    fn wifi_frame_errors_cost_throughput() {
        let clean = run(&config(Standard::A, 54.0, 1, 5)).unwrap();
        let mut c = config(Standard::A, 54.0, 1, 5);
        c.frame_error_rate = 0.2;
        let lossy = run(&c).unwrap();
        // A lost attempt costs its airtime, the Ack timeout, and a doubled window.
        assert!(
            lossy.simulated_mbps < 0.85 * clean.simulated_mbps,
            "{lossy:?}"
        );
        let retry_share = 1.0 - lossy.delivered as f64 / lossy.attempts as f64;
        assert!((retry_share - 0.2).abs() < 0.01, "{retry_share}");
    }

    /// 11n and 11ac without aggregation: the same model applies (one MPDU per access, a normal
    /// Ack at a basic rate), so the simulation stays between its two forms, 3% allowed on
    /// either side: above the EIFS form, as the other stations defer AIFS after a collision
    /// (`medium::basic`), and below the DIFS form, whose T_c has the transmitters resume DIFS
    /// after a collision too, where they first wait their Ack timeout — which weighs more as
    /// the frames shorten (VHT80 MCS 9: a 1536-byte PPDU is 68 µs, the Ack timeout 45 µs;
    /// 3.3% under the DIFS form, 5.2% over the EIFS one).
    #[test]
    fn wifi_saturation_matches_bianchi_for_ht_and_vht() {
        let mut report = String::new();
        for (std, rate, n) in [
            (Standard::N24, PhyRate::ht(7, 20, false), 10),
            (Standard::N5, PhyRate::ht(7, 40, true), 5),
            (Standard::N5, PhyRate::ht(0, 20, false), 20),
            (Standard::Ac, PhyRate::vht(9, 80, true), 10),
        ] {
            let mut c = config(std, 6.0, n, 50);
            c.rate = rate.unwrap();
            let r = run(&c).unwrap();
            report += &format!("{} {} n={n}: {r:?}\n", std.name(), c.rate);
            let (low, high) = (0.97 * r.bianchi_eifs_mbps, 1.03 * r.bianchi_difs_mbps);
            assert!((low..=high).contains(&r.simulated_mbps), "{report}");
        }
        // One 11n-5 station at HT20 MCS 7 (long GI), 1500 B, by hand: AIFS 34 + 7.5·9 + PPDU
        // 228 + SIFS 16 + Ack 28 (at 24 Mbit/s) = 373.5 µs per packet.
        let mut c = config(Standard::N5, 6.0, 1, 10);
        c.rate = PhyRate::ht(7, 20, false).unwrap();
        let r = run(&c).unwrap();
        let by_hand = 1500.0 * 8.0 / 373.5;
        assert!((r.simulated_mbps - by_hand).abs() / by_hand < 0.01, "{r:?}");
    }
}
