//! `wisp trace`: inspect link traces.

use crate::error::CliError;
use crate::output;
use clap::Subcommand;
use std::path::PathBuf;
use wisp_sim::link::BYTES_PER_LINE;
use wisp_sim::trace::{Trace, TraceUnit};

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Duration, mean and percentile rates (1-second bins), outages. Rates credit 1500 bytes per
    /// line, as the simulator does.
    Stats {
        /// Trace files (Mahimahi millisecond format; `.rx` files are nanoseconds).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Read every file as nanosecond timestamps.
        #[arg(long)]
        ns: bool,
        /// Print one JSON object ({"traces": [...]}) instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub fn trace(cmd: TraceCommand) -> Result<(), CliError> {
    match cmd {
        TraceCommand::Stats { files, ns, json } => {
            let mut stats = vec![];
            for f in &files {
                let unit = if ns {
                    TraceUnit::Nanos
                } else {
                    TraceUnit::for_path(f)
                };
                stats.push(Trace::load(f, unit)?.stats(BYTES_PER_LINE));
            }
            if json {
                return output::print_json(&serde_json::json!({ "traces": stats }));
            }
            println!(
                "{:<28} {:>8} {:>10} {:>9} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>6}",
                "trace",
                "lines",
                "duration s",
                "mean Mb/s",
                "p5",
                "median",
                "p95",
                "max",
                "0-cap s",
                "max gap",
                ">100ms"
            );
            for s in &stats {
                println!(
                    "{:<28} {:>8} {:>10.1} {:>9.3} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>6} {:>6.0}ms {:>6}",
                    s.name,
                    s.lines,
                    s.duration_s,
                    s.mean_mbps,
                    s.p5_1s_mbps,
                    s.median_1s_mbps,
                    s.p95_1s_mbps,
                    s.max_1s_mbps,
                    s.zero_capacity_seconds,
                    s.max_gap_ms,
                    s.gaps_over_100ms
                );
            }
            Ok(())
        }
    }
}
