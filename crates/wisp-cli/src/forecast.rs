//! `wisp forecast`: what Sprout believes about a trace, tick by tick, as CSV.

use crate::error::CliError;
use clap::Args;
use std::path::PathBuf;
use wisp_core::Duration;
use wisp_core::packet::DEFAULT_MTU;
use wisp_core::scheme::{SchemeConfig, SproutConfig};
use wisp_sim::trace::{Trace, TraceUnit};

const AFTER_HELP: &str = "\
Output (stdout), one row per 20-ms tick from the first delivery:
  t_ms              end of the tick, ms from the start of the trace
  received_or_lost  packets received by the end of the tick (all of them: nothing is lost)
  counts0..countsN  Sprout's forecast at the end of the tick: packets the link will deliver,
                    at the 5th percentile, by the end of each of the next ticks (cumulative)
All counts are in MTU-sized (1500-byte) packets; each trace line delivers one.

Examples:
  wisp forecast --trace traces/cellular/Verizon-LTE-short.down --duration-s 10 > forecast.csv
  wisp forecast --trace traces/cellular/Verizon-LTE-short.down --scheme sprout-ewma";

/// Feed a trace to a Sprout receiver as a saturated link and print its forecasts.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ForecastArgs {
    /// The link trace (Mahimahi format; `.rx` files are nanoseconds).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,

    /// Seconds of the trace to feed (default: one period of the trace).
    #[arg(long, value_name = "S", value_parser = crate::args::sim_secs, allow_hyphen_values = true)]
    pub duration_s: Option<Duration>,

    /// The receiver: sprout or sprout-ewma, with parameters (e.g. sprout:sigma=100); default:
    /// Sprout with the paper's parameters.
    #[arg(long, value_name = "SCHEME")]
    pub scheme: Option<SchemeConfig>,
}

pub fn forecast(a: ForecastArgs) -> Result<(), CliError> {
    let scheme = a.scheme.unwrap_or_else(|| SproutConfig::default().into());
    let Some(config) = SproutConfig::of(&scheme) else {
        return Err(CliError::Input(format!(
            "--scheme: `{scheme}` is not a Sprout variant (sprout, sprout-ewma)"
        )));
    };
    let trace = Trace::load(&a.trace, TraceUnit::for_path(&a.trace))?;
    let max = wisp_sim::scenario_file::MAX_DURATION;
    if a.duration_s.is_none() && trace.period() > max {
        return Err(CliError::Input(format!(
            "{} lasts {} s, longer than --duration-s may be ({} s): give --duration-s",
            a.trace.display(),
            trace.period().as_secs_f64(),
            max.as_secs_f64()
        )));
    }
    let duration = a.duration_s.unwrap_or_else(|| trace.period());
    let ticks = wisp_sim::forecast::saturated(&trace, duration, config, DEFAULT_MTU);
    let err = |e: csv::Error| CliError::Io(format!("cannot write to stdout: {e}"));
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(std::io::stdout().lock()));
    let mut header = vec!["t_ms".to_string(), "received_or_lost".to_string()];
    header.extend((0..config.model.ticks).map(|i| format!("counts{i}")));
    w.write_record(&header).map_err(err)?;
    let mtu = DEFAULT_MTU.bytes();
    for t in &ticks {
        let mut row = vec![
            t.end.as_millis_f64().to_string(),
            (t.received_or_lost / mtu).to_string(),
        ];
        row.extend(t.forecast.cumulative().iter().map(|c| c.to_string()));
        w.write_record(&row).map_err(err)?;
    }
    w.flush()
        .map_err(|e| CliError::Io(format!("cannot write to stdout: {e}")))
}
