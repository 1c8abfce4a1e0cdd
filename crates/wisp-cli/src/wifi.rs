//! `wisp wifi bianchi`: saturated stations on the simulated 802.11 medium beside Bianchi's
//! model.

use crate::error::CliError;
use clap::{Args, Subcommand, ValueEnum};
use wisp_core::Duration;
use wisp_sim::wifi::phy::{PhyRate, Standard};
use wisp_sim::wifi::saturation::{SaturationConfig, run};

const BIANCHI_HELP: &str = "\
N stations, always backlogged with packets of --bytes (an IP packet: UDP-like, no RTS/CTS),
contend with the DCF at one PHY rate; retransmissions are unlimited, as in Bianchi's model.

Output:
  simulated_mbps     acknowledged packet bytes × 8 / duration, all stations together
  goodput_udp_mbps   the same counting only UDP payload (bytes − 28)
  bianchi_difs_mbps  Bianchi's model (JSAC 2000), DIFS after a collision
  bianchi_eifs_mbps  the same with EIFS after a collision

Example:
  wisp wifi bianchi --std 11a --rate-mbps 54 --stations 10 --json";

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
}

#[derive(Args, Debug)]
pub struct BianchiArgs {
    /// The PHY: 11b (DSSS/CCK), 11a (OFDM), 11g (ERP-OFDM, short slot).
    #[arg(long = "std", value_name = "STD")]
    pub standard: StdArg,

    /// The PHY rate of data frames in Mbit/s (11b: 1, 2, 5.5, 11; 11a/g: 6, 9, …, 54).
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub rate_mbps: String,

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
    #[arg(long, value_name = "S", default_value = "100", value_parser = crate::args::positive_secs, allow_hyphen_values = true)]
    pub duration_s: Duration,

    /// Master seed (default: $WISP_SEED, else 1).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
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

fn bianchi(a: BianchiArgs) -> Result<(), CliError> {
    let standard = match a.standard {
        StdArg::B => Standard::B,
        StdArg::A => Standard::A,
        StdArg::G => Standard::G,
    };
    let rate = a
        .rate_mbps
        .trim()
        .parse::<f64>()
        .ok()
        .and_then(PhyRate::from_mbps)
        .ok_or_else(|| {
            CliError::Input(format!(
                "--rate-mbps: `{}` is not a positive rate in Mbit/s",
                a.rate_mbps
            ))
        })?;
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
    };
    config.check().map_err(CliError::input)?;
    let seed = crate::args::seed(a.seed)?;
    let r = run(&SaturationConfig { seed, ..config }).map_err(CliError::input)?;
    if a.json {
        crate::output::print_json(&serde_json::json!({
            "std": standard.name(),
            "rate_mbps": rate.mbps(),
            "stations": stations,
            "bytes": bytes,
            "duration_s": r.duration_s,
            "seed": seed,
            "simulated_mbps": r.simulated_mbps,
            "goodput_udp_mbps": r.goodput_udp_mbps,
            "bianchi_difs_mbps": r.bianchi_difs_mbps,
            "bianchi_eifs_mbps": r.bianchi_eifs_mbps,
            "delivered": r.delivered,
            "attempts": r.attempts,
            "collisions": r.collisions,
        }))
    } else {
        println!(
            "802.{} at {} Mbit/s, {stations} stations, {bytes}-byte packets, {} s simulated",
            standard.name(),
            rate,
            r.duration_s
        );
        println!("simulated_mbps     {:.3}", r.simulated_mbps);
        println!("goodput_udp_mbps   {:.3}", r.goodput_udp_mbps);
        println!("bianchi_difs_mbps  {:.3}", r.bianchi_difs_mbps);
        println!("bianchi_eifs_mbps  {:.3}", r.bianchi_eifs_mbps);
        println!(
            "delivered {} of {} attempts, {} collisions",
            r.delivered, r.attempts, r.collisions
        );
        Ok(())
    }
}
