//! `wisp trace`: inspect link traces.

use crate::args::non_negative_ms;
use crate::error::CliError;
use crate::output;
use clap::Subcommand;
use std::path::PathBuf;
use wisp_core::Duration;
use wisp_sim::link::BYTES_PER_LINE;
use wisp_sim::trace::{MAX_STATS_PERIOD, Trace, TraceUnit};

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
    /// How closely trace A follows trace B (e.g. a `wisp saturate` recording against the trace
    /// `wisp link` replayed): A's rate error relative to B, in %, and the correlation of their
    /// line counts per 100 ms, over one window (default: where both traces have lines).
    Compare {
        /// The trace under test (Mahimahi millisecond format).
        #[arg(value_name = "A")]
        a: PathBuf,
        /// The reference trace.
        #[arg(value_name = "B")]
        b: PathBuf,
        /// Start of the window, ms on both traces' axis (default: the later first line).
        #[arg(long, value_name = "MS", value_parser = non_negative_ms)]
        from_ms: Option<Duration>,
        /// End of the window, ms (default: just after the earlier last line).
        #[arg(long, value_name = "MS", value_parser = non_negative_ms)]
        to_ms: Option<Duration>,
        /// Bin of the correlation, ms.
        #[arg(long, value_name = "MS", default_value = "100", value_parser = non_negative_ms)]
        bin_ms: Duration,
        /// Print one JSON object instead of a line.
        #[arg(long)]
        json: bool,
    },
}

pub fn trace(cmd: TraceCommand) -> Result<(), CliError> {
    match cmd {
        TraceCommand::Compare {
            a,
            b,
            from_ms,
            to_ms,
            bin_ms,
            json,
        } => {
            let ta = Trace::load(&a, TraceUnit::Millis)?;
            let tb = Trace::load(&b, TraceUnit::Millis)?;
            let c =
                wisp_sim::trace_compare::compare(&ta, &tb, from_ms, to_ms, bin_ms, BYTES_PER_LINE)
                    .map_err(CliError::Input)?;
            if json {
                return output::print_json(&c);
            }
            let o = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |x| format!("{x:.d$}"));
            println!(
                "{} vs {}, {:.0}-{:.0} ms: {:.3} vs {:.3} Mbit/s ({} vs {} lines), rate error {}%, correlation per {} ms {} ({} bins)",
                c.a,
                c.b,
                c.from_ms,
                c.to_ms,
                c.a_mbps,
                c.b_mbps,
                c.a_lines,
                c.b_lines,
                o(c.rate_error_pct, 2),
                c.bin_ms,
                o(c.correlation, 4),
                c.bins
            );
            Ok(())
        }
        TraceCommand::Stats { files, ns, json } => {
            let mut stats = vec![];
            for f in &files {
                let unit = if ns {
                    TraceUnit::Nanos
                } else {
                    TraceUnit::for_path(f)
                };
                let t = Trace::load(f, unit)?;
                // One counter per second of the period (a 2-line trace ending at 1e12 ms asked
                // for 8 GB and aborted).
                if t.period() > MAX_STATS_PERIOD {
                    return Err(CliError::Input(format!(
                        "{}: lasts {} s; `wisp trace stats` counts every second and takes at \
                         most {} s (is a timestamp wrong?)",
                        f.display(),
                        t.period().as_secs_f64(),
                        MAX_STATS_PERIOD.as_secs_f64()
                    )));
                }
                stats.push(t.stats(BYTES_PER_LINE));
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
