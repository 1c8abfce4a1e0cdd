//! `wisp sweep`: characterise a path with constant-bit-rate traffic at a list of rates.

use crate::args::{self, sim_delay_ms, sim_secs};
use crate::error::CliError;
use crate::output::{self, OutputDir};
use clap::Args;
use std::path::PathBuf;
use wisp_core::{Bitrate, DataSize, Duration};
use wisp_sim::link::LinkSpec;
use wisp_sim::queue::QueueSpec;
use wisp_sim::sweep::{self, LOSS_WINDOW, SimSweep};

pub const LONG_ABOUT: &str = "\
Sends constant-bit-rate traffic at each of a list of rates (20 s each by default) and reports, per \
rate, the 10th/50th/90th percentiles, mean and extremes of the one-way queueing delay (relative to \
the smallest one-way delay of the sweep) and of the loss rate over a sliding window of 32 packets \
— the characterisation plots of Mehrotra et al. (Figs. 2–7) — with the congestion-free and \
congested zones and the delay threshold δ_T that best separates them (Fig. 19). Use it to \
characterise a network before choosing a congestion threshold.

The path is a simulated link (--link or --trace); each rate runs on a fresh copy of the link from \
time 0, so every rate meets the same channel. Only simulated paths can be swept.

Examples:
  wisp sweep --link 3g-up --rates 50,100,150,200,250,300,400,500,640,800
  wisp sweep --link wimax-down --rates 1mbps,3mbps,4.9mbps,5.1mbps,6mbps --json
  wisp sweep --link cable-up --out /tmp/cable";

#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("path").required(true).args(["trace", "link"]))]
pub struct SweepArgs {
    /// The simulated link: any `wisp run --link` spec (3g-up, wimax-down, cable-up with
    /// :KEY=VALUE overrides, const:RATE, trace:FILE, handover:SPEC+SPEC@T, …; see `wisp run
    /// --help`).
    #[arg(long, value_name = "SPEC")]
    pub link: Option<LinkSpec>,

    /// A link trace (same as --link trace:FILE).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// The rates, comma-separated: a rate with its unit (250kbps, 4.9mbps) or a number of
    /// kbit/s. Default: 0.1 to 1.5 times the link's mean capacity, denser near it.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = rate)]
    pub rates: Option<Vec<Bitrate>>,

    /// Seconds at each rate (at most 86400).
    #[arg(long, value_name = "S", default_value = "20", value_parser = sim_secs)]
    pub duration_s: Duration,

    /// Wire size of every packet, bytes (the paper's figures: 1000).
    #[arg(long, value_name = "B", default_value = "1000", value_parser = clap::value_parser!(u16).range(40..=9000))]
    pub packet_bytes: u16,

    /// One-way propagation delay in front of the link, ms (at most 60000).
    #[arg(long, value_name = "MS", default_value = "20", value_parser = sim_delay_ms)]
    pub delay_ms: Duration,

    /// Bottleneck queue (the mobile profiles also have their own discard timer).
    #[arg(long, value_name = "SPEC", default_value = "infinite")]
    pub queue: QueueSpec,

    /// Master seed (default: $WISP_SEED, else 1).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Rates simulated in parallel (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Print one JSON object on stdout instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Also write sweep.json, sweep.csv, zones_pdf.csv, sweep.svg (Fig. 2), zones.svg (Fig. 19)
    /// and report.html into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

fn rate(s: &str) -> Result<Bitrate, String> {
    let t = s.trim();
    let r = match t.parse::<f64>() {
        Ok(kbps) if kbps.is_finite() && kbps > 0.0 => Bitrate::from_kbps_f64(kbps),
        Ok(_) => return Err(format!("`{s}` is not a positive rate")),
        Err(_) => t.parse::<Bitrate>().map_err(|e| e.0)?,
    };
    if r < Bitrate::from_kbps(1) {
        return Err(format!("`{s}`: rates below 1 kbit/s are not supported"));
    }
    if r.kbps_f64() > sweep::MAX_RATE_KBPS {
        return Err(format!(
            "`{s}`: rates above {} kbit/s (1 Gbit/s) are not supported",
            sweep::MAX_RATE_KBPS
        ));
    }
    Ok(r)
}

pub fn sweep(a: SweepArgs) -> Result<(), CliError> {
    if let Some(dir) = &a.out {
        output::check_out_dir("--out", dir)?;
    }
    let spec = args::chosen_link(a.trace.as_deref(), a.link.as_ref())
        .unwrap_or_else(|| unreachable!("clap requires --trace or --link"));
    let link = spec.load()?;
    let mut rates = a
        .rates
        .clone()
        .unwrap_or_else(|| sweep::default_rates(&link, a.duration_s));
    rates.sort();
    rates.dedup();
    if let Some(top) = rates.last()
        && top.kbps_f64() > sweep::MAX_RATE_KBPS
    {
        return Err(CliError::Input(format!(
            "--link {}: its capacity puts the default rates above 1 Gbit/s; give --rates",
            link.name()
        )));
    }
    let seed = args::seed(a.seed)?;
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let name = link.name();
    let s = SimSweep {
        link,
        rates,
        duration: a.duration_s,
        packet_size: DataSize::from_bytes(u64::from(a.packet_bytes)),
        delay: a.delay_ms,
        queue: a.queue,
        seed,
        jobs,
    };
    let pb = output::progress_bar(s.rates.len() as u64, "sweeping");
    let records = sweep::simulate(&s, &|done, _| pb.set_position(done as u64))?;
    pb.finish_and_clear();
    let result = sweep::analyse(&name, u64::from(a.packet_bytes), records, LOSS_WINDOW);
    if let Some(dir) = &a.out {
        let mut files = OutputDir::default();
        let json = serde_json::to_vec_pretty(&result)
            .map_err(|e| CliError::Io(format!("cannot serialise results: {e}")))?;
        files.add("sweep.json", json);
        files.add("sweep.csv", wisp_report::sweep::csv(&result));
        files.add("zones_pdf.csv", wisp_report::sweep::zones_pdf_csv(&result));
        files.add("sweep.svg", wisp_report::sweep::figure_svg(&result));
        files.add("zones.svg", wisp_report::sweep::zones_pdf_svg(&result));
        files.add("report.html", wisp_report::sweep::html(&result));
        files.commit(dir)?;
    }
    if a.json {
        output::print_json(&serde_json::json!({
            "link": result.link,
            "seed": seed,
            "sweep": result,
        }))
    } else {
        print!("{}", wisp_report::sweep::table(&result));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_or_without_units() {
        assert_eq!(rate("250"), Ok(Bitrate::from_kbps(250)));
        assert_eq!(rate("4.9mbps"), Ok(Bitrate::from_kbps(4900)));
        assert!(rate("0").is_err());
        assert!(rate("fast").is_err());
        assert!(rate("0.5").is_err());
        // Above `cbr`'s ceiling (the sender would spin forever), and beyond a `Bitrate`.
        assert!(rate("1000000").is_ok());
        assert!(rate("1000001").unwrap_err().contains("1 Gbit/s"));
        assert!(rate("1e30").is_err());
        assert!(rate("1e30mbps").is_err());
    }
}
