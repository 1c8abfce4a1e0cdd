//! `wisp wifi bianchi`: saturated stations on the simulated 802.11 medium beside Bianchi's
//! model.

use crate::error::CliError;
use clap::{Args, Subcommand, ValueEnum};
use wisp_core::Duration;
use wisp_sim::wifi::phy::{Phy, PhyRate, Standard};
use wisp_sim::wifi::saturation::{SaturationConfig, run};

const BIANCHI_HELP: &str = "\
N stations, always backlogged with packets of --bytes (an IP packet: UDP-like, no RTS/CTS),
contend with the DCF at one PHY rate; retransmissions are unlimited, as in Bianchi's model.

Output:
  simulated_mbps     acknowledged packet bytes × 8 / duration, all stations together
  goodput_udp_mbps   the same counting only UDP payload (bytes − 28)
  bianchi_difs_mbps  Bianchi's model (JSAC 2000), DIFS after a collision
  bianchi_eifs_mbps  the same with EIFS after a collision

The model applies to 11n and 11ac as to 11a/g: one MPDU per access with a normal Ack (no
A-MPDU), the HT/VHT preamble and symbol timing, the Ack at a basic rate. With --ampdu (11n/ac)
each access sends an A-MPDU answered by a BlockAck, and the model columns are null.

Examples:
  wisp wifi bianchi --std 11a --rate-mbps 54 --stations 10 --json
  wisp wifi bianchi --std 11n-5 --rate-mbps 72.2 --gi short --stations 10
  wisp wifi bianchi --std 11ac --rate-mbps 433.3 --bw 80 --gi short --stations 5
  wisp wifi bianchi --std 11n-5 --rate-mbps 65 --stations 10 --access edca --ampdu";

#[derive(Subcommand, Debug)]
pub enum WifiCommand {
    /// Saturation throughput of N stations, simulated and from Bianchi's model.
    #[command(after_help = BIANCHI_HELP)]
    Bianchi(BianchiArgs),
}

/// The PHY.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum StdArg {
    #[value(name = "11b")]
    B,
    #[value(name = "11a")]
    A,
    #[value(name = "11g")]
    G,
    /// 802.11n (HT) at 2.4 GHz.
    #[value(name = "11n-2.4", alias = "11n")]
    N24,
    /// 802.11n (HT) at 5 GHz.
    #[value(name = "11n-5")]
    N5,
    /// 802.11ac (VHT), 5 GHz.
    #[value(name = "11ac")]
    Ac,
}

/// The guard interval of HT/VHT rates.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum GiArg {
    /// 0.8 µs.
    Long,
    /// 0.4 µs.
    Short,
}

#[derive(Args, Debug)]
pub struct BianchiArgs {
    /// The PHY: 11b (DSSS/CCK), 11a (OFDM), 11g (ERP-OFDM, short slot), 11n-2.4 / 11n-5 (HT,
    /// one stream; 11n is 11n-2.4), 11ac (VHT, one stream).
    #[arg(long = "std", value_name = "STD")]
    pub standard: StdArg,

    /// The PHY rate of data frames in Mbit/s (11b: 1, 2, 5.5, 11; 11a/g: 6, 9, …, 54; 11n/ac:
    /// an MCS's rate at --bw and --gi, e.g. 6.5 … 65 at 20 MHz long GI, 433.3 for VHT80 MCS 9
    /// short GI).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub rate_mbps: String,

    /// Channel width in MHz for 11n (20, 40) and 11ac (20, 40, 80).
    #[arg(
        long,
        value_name = "MHZ",
        default_value = "20",
        allow_hyphen_values = true
    )]
    pub bw: String,

    /// Guard interval of 11n/ac rates.
    #[arg(long, value_name = "GI", default_value = "long")]
    pub gi: GiArg,

    /// Number of saturated stations (1 to 1000).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub stations: String,

    /// Packet (MSDU) size in bytes.
    #[arg(
        long,
        value_name = "B",
        default_value = "1500",
        allow_hyphen_values = true
    )]
    pub bytes: String,

    /// Simulated seconds.
    #[arg(long, value_name = "S", default_value = "100", value_parser = crate::args::bianchi_secs, allow_hyphen_values = true)]
    pub duration_s: Duration,

    /// Master seed (default: $WISP_SEED, else 1).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// How the stations count their backoff: `dcf` (non-QoS stations, 10.3.4.3: the slot in
    /// which the medium turns busy is not counted) or `edca` (QoS stations, 10.22.2.4: a
    /// counter also decrements at the boundary where another transmission starts — the rule
    /// Bianchi's chain assumes). The DCF parameters (AIFSN 2, the PHY's CWmin/CWmax) either way.
    #[arg(long, value_name = "RULE", default_value = "dcf")]
    pub access: AccessArg,

    /// Aggregate: each access sends an A-MPDU (up to 64 MPDUs, 65,535 B for HT, 5.484 ms)
    /// answered by a BlockAck. HT/VHT rates only; Bianchi's model does not apply.
    #[arg(long)]
    pub ampdu: bool,

    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// The backoff counting rule of `wisp wifi bianchi`'s stations.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum AccessArg {
    Dcf,
    Edca,
}

pub fn wifi(command: WifiCommand) -> Result<(), CliError> {
    match command {
        WifiCommand::Bianchi(a) => bianchi(a),
    }
}

fn integer(option: &str, s: &str) -> Result<u32, CliError> {
    s.trim()
        .parse()
        .map_err(|_| CliError::Input(format!("{option}: `{s}` is not a non-negative integer")))
}

/// `--rate-mbps`, `--bw` and `--gi` as a PHY rate of `standard`: `(rate, bw MHz, short GI)`.
fn phy_rate(a: &BianchiArgs, standard: Standard) -> Result<(PhyRate, u32, bool), CliError> {
    let mbps = a
        .rate_mbps
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r > 0.0)
        .ok_or_else(|| {
            CliError::Input(format!(
                "--rate-mbps: `{}` is not a positive rate in Mbit/s",
                a.rate_mbps
            ))
        })?;
    let bw = integer("--bw", &a.bw)?;
    let short_gi = matches!(a.gi, GiArg::Short);
    let rate = if standard.is_ht() {
        let max = u32::from(standard.max_width_mhz());
        if ![20, 40, 80].contains(&bw) || bw > max {
            return Err(CliError::Input(format!(
                "--bw: {bw} MHz is not a channel width of 802.{} (20{})",
                standard.name(),
                if max >= 80 { ", 40, 80" } else { ", 40" }
            )));
        }
        let phy = Phy::new(standard);
        phy.find_rate(mbps, bw as u16, short_gi).ok_or_else(|| {
            CliError::Input(format!(
                "--rate-mbps: {mbps} Mbit/s is not an 802.{} rate at {bw} MHz, {} GI ({})",
                standard.name(),
                if short_gi { "short" } else { "long" },
                phy.data_rates(bw as u16, short_gi)
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?
    } else {
        if bw != 20 || short_gi {
            return Err(CliError::Input(format!(
                "--bw/--gi: 802.{} has 20-MHz channels and the long guard interval only",
                standard.name()
            )));
        }
        PhyRate::from_mbps(mbps).ok_or_else(|| {
            CliError::Input(format!(
                "--rate-mbps: `{}` is not a positive rate in Mbit/s",
                a.rate_mbps
            ))
        })?
    };
    Ok((rate, bw, short_gi))
}

fn bianchi(a: BianchiArgs) -> Result<(), CliError> {
    let standard = match a.standard {
        StdArg::B => Standard::B,
        StdArg::A => Standard::A,
        StdArg::G => Standard::G,
        StdArg::N24 => Standard::N24,
        StdArg::N5 => Standard::N5,
        StdArg::Ac => Standard::Ac,
    };
    let (rate, bw, short_gi) = phy_rate(&a, standard)?;
    let stations = integer("--stations", &a.stations)?;
    let bytes = integer("--bytes", &a.bytes)?;
    let config = SaturationConfig {
        standard,
        rate,
        stations,
        bytes,
        duration: a.duration_s,
        seed: 0,
        frame_error_rate: 0.0,
        qos: matches!(a.access, AccessArg::Edca),
        ampdu: a.ampdu,
    };
    config.check().map_err(CliError::input)?;
    let seed = crate::args::seed(a.seed)?;
    let r = run(&SaturationConfig { seed, ..config }).map_err(CliError::input)?;
    // One MPDU per access in the model: no figure for A-MPDUs.
    let model = |mbps: f64| Some(mbps).filter(|_| !a.ampdu);
    if a.json {
        crate::output::print_json(&serde_json::json!({
            "std": standard.name(),
            "rate_mbps": rate.mbps(),
            "mcs": rate.mcs().map(|m| m.index),
            "bw_mhz": bw,
            "gi": if short_gi { "short" } else { "long" },
            "stations": stations,
            "bytes": bytes,
            "duration_s": r.duration_s,
            "seed": seed,
            "simulated_mbps": r.simulated_mbps,
            "goodput_udp_mbps": r.goodput_udp_mbps,
            "bianchi_difs_mbps": model(r.bianchi_difs_mbps),
            "bianchi_eifs_mbps": model(r.bianchi_eifs_mbps),
            "delivered": r.delivered,
            "attempts": r.attempts,
            "collisions": r.collisions,
        }))
    } else {
        println!(
            "802.{} at {} Mbit/s, {stations} station{}, {bytes}-byte packets, {} s simulated",
            standard.name(),
            rate,
            if stations == 1 { "" } else { "s" },
            r.duration_s
        );
        println!("simulated_mbps     {:.3}", r.simulated_mbps);
        println!("goodput_udp_mbps   {:.3}", r.goodput_udp_mbps);
        let show = |mbps: f64| model(mbps).map_or("n/a (A-MPDU)".into(), |m| format!("{m:.3}"));
        println!("bianchi_difs_mbps  {}", show(r.bianchi_difs_mbps));
        println!("bianchi_eifs_mbps  {}", show(r.bianchi_eifs_mbps));
        println!(
            "delivered {} of {} attempts, {} collisions",
            r.delivered, r.attempts, r.collisions
        );
        Ok(())
    }
}
