//! `wisp forecast`: what a forecasting scheme's receiver (Sprout's) believes about a trace, tick
//! by tick, as CSV.

use crate::error::CliError;
use clap::Args;
use std::path::PathBuf;
use wisp_core::Duration;
use wisp_core::packet::DEFAULT_MTU;
use wisp_core::scheme::{Registry, SchemeConfig};
use wisp_sim::trace::{Trace, TraceUnit};

const AFTER_HELP: &str = "\
Output (stdout), one row per 20-ms tick from the first delivery:
  t_ms              end of the tick, ms from the start of the trace
  received_or_lost  packets received by the end of the tick (all of them: nothing is lost)
  counts0..countsN  the forecast at the end of the tick (Sprout's: the 5th percentile): packets the link will deliver,
                    at the 5th percentile, by the end of each of the next ticks (cumulative)
All counts are in MTU-sized (1500-byte) packets; each trace line delivers one.

Examples:
  wisp forecast --trace traces/cellular/Verizon-LTE-short.down --duration-s 10 > forecast.csv
  wisp forecast --trace traces/cellular/Verizon-LTE-short.down --scheme sprout-ewma";

/// Feed a trace to a forecasting receiver (Sprout's) as a saturated link and print its forecasts.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ForecastArgs {
    /// The link trace (Mahimahi format; `.rx` files are nanoseconds).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,

    /// Seconds of the trace to feed (default: one period of the trace).
    #[arg(long, value_name = "S", value_parser = crate::args::sim_secs, allow_hyphen_values = true)]
    pub duration_s: Option<Duration>,

    /// The receiver: a scheme that forecasts (sprout or sprout-ewma), with parameters (e.g.
    /// sprout:sigma=100); default: the first that does, Sprout with the paper's parameters.
    #[arg(long, value_name = "SCHEME")]
    pub scheme: Option<SchemeConfig>,
}

/// The built-in schemes, by default configuration, whose receivers forecast.
fn forecasting() -> Vec<SchemeConfig> {
    let registry = Registry::builtin();
    registry
        .schemes()
        .filter_map(|info| registry.named(info.name).ok())
        .filter(|s| s.forecaster(DEFAULT_MTU).is_some())
        .collect()
}

pub fn forecast(a: ForecastArgs) -> Result<(), CliError> {
    let scheme = match a.scheme {
        Some(s) => s,
        None => forecasting()
            .into_iter()
            .next()
            .expect("a built-in scheme forecasts"),
    };
    let Some(mut forecaster) = scheme.forecaster(DEFAULT_MTU) else {
        let names: Vec<&str> = forecasting().iter().map(SchemeConfig::name).collect();
        return Err(CliError::Input(format!(
            "--scheme: `{scheme}` makes no forecast (schemes that do: {})",
            names.join(", ")
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
    let ticks = wisp_sim::forecast::saturated(&trace, duration, &mut *forecaster);
    let err = |e: csv::Error| CliError::Io(format!("cannot write to stdout: {e}"));
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(std::io::stdout().lock()));
    let mut header = vec!["t_ms".to_string(), "received_or_lost".to_string()];
    header.extend((0..forecaster.horizon()).map(|i| format!("counts{i}")));
    w.write_record(&header).map_err(err)?;
    for t in &ticks {
        let mut row = vec![
            t.end.as_millis_f64().to_string(),
            t.received_or_lost.to_string(),
        ];
        row.extend(t.cumulative.iter().map(|c| c.to_string()));
        w.write_record(&row).map_err(err)?;
    }
    w.flush()
        .map_err(|e| CliError::Io(format!("cannot write to stdout: {e}")))
}
