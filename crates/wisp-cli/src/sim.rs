//! `wisp sim`: a scenario file (nodes, links, flows), every flow's metrics, optionally its files.

use crate::error::CliError;
use crate::output;
use clap::Args;
use std::path::PathBuf;
use wisp_sim::scenario_file::{self, ScenarioReport};

pub const LONG_ABOUT: &str = "\
Simulate a scenario file: a TOML file naming nodes (hosts, access points, stations), links \
between them (any --link spec: traces, const:RATE, steps:…, mobile profiles, `pipe` for a delay \
only; each with a delay, a queue and entrance loss; and Wi-Fi media shared by an AP and its \
stations) and flows of any scheme (see `wisp schemes`), each with its endpoints, DSCP, start and \
stop. Each flow's data takes the shortest path from its `from` node to its `to` node, its \
feedback the shortest path back; flows that cross a link share its queue. docs/wifi.md \
describes the format; scenarios/ holds examples.

Errors name FILE:LINE:COLUMN and exit with code 2, writing nothing.";

#[derive(Args, Debug)]
pub struct SimArgs {
    /// The scenario file (TOML).
    #[arg(value_name = "SCENARIO.toml")]
    pub file: PathBuf,

    /// Master seed (default: the file's `seed`, else $WISP_SEED, else 1). Logged on stderr.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also write run.json, timeseries.csv, packets.csv, controller.csv (each flow's target
    /// rate, window and delay target every 100 ms) and report.html into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

pub fn sim(a: SimArgs) -> Result<(), CliError> {
    if let Some(dir) = &a.out {
        output::check_out_dir("--out", dir)?;
    }
    let mut sc = scenario_file::load(&a.file).map_err(CliError::input)?;
    // The file's seed unless the command line (or $WISP_SEED) names one.
    let given = a.seed.is_some() || std::env::var_os(wisp_sim::seed::SEED_ENV).is_some();
    sc.network.run.seed = if given || !sc.seeded {
        crate::args::seed(a.seed)?
    } else {
        say!(
            "wisp: seed {} (from {})",
            sc.network.run.seed,
            a.file.display()
        );
        sc.network.run.seed
    };
    let pb = output::progress_bar(1000, "simulating");
    let mut progress = |f: f64| pb.set_position((f * 1000.0) as u64);
    let result = sc.run(Some(&mut progress))?;
    pb.finish_and_clear();
    if let Some(dir) = &a.out {
        crate::run::write_run_files(&result.run, &result.report)?.commit(dir)?;
    }
    if a.json {
        output::print_json(&result.report)
    } else {
        print_table(&result.report);
        Ok(())
    }
}

fn print_table(r: &ScenarioReport) {
    println!(
        "{} ({:.1} s, warm-up {:.1} s; seed {})",
        r.scenario, r.duration_s, r.warmup_s, r.seed
    );
    let o = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}"));
    println!(
        "{:<12} {:<20} {:<24} {:>5} {:>11} {:>8} {:>8} {:>9} {:>7}",
        "flow", "scheme", "path", "dscp", "thr kbit/s", "p50 ms", "p95 ms", "e2e95 ms", "loss"
    );
    for f in &r.flows {
        println!(
            "{:<12} {:<20} {:<24} {:>5} {:>11.1} {:>8} {:>8} {:>9} {:>7.4}",
            f.name,
            f.metrics.scheme,
            f.path,
            f.dscp,
            f.metrics.throughput_kbps,
            o(f.metrics.delay_p50_ms),
            o(f.metrics.delay_p95_ms),
            o(f.metrics.e2e_delay_p95_ms),
            f.metrics.loss_rate
        );
    }
}
