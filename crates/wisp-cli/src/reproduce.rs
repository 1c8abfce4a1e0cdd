//! `wisp reproduce PAPER`: re-run a paper's experiments and write its figures.

use crate::error::CliError;
use crate::output::{self, OutputDir};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use wisp_sim::reproduce::{gcc_wifi, mehrotra};

/// The papers wisp reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Paper {
    /// Carlucci et al., ANRW 2016: GCC over a loaded Wi-Fi link with and without the
    /// packet-grouping pre-filter (Figs. 6, 8, 9, 10).
    GccWifi,
    /// Mehrotra et al.: mobile-broadband characterisation (Figs. 2–5, 19), rate controllers with
    /// fixed and learned congestion thresholds (Tables I–II, Figs. 9–23), a handover.
    Mehrotra,
}

impl Paper {
    fn name(self) -> &'static str {
        match self {
            Paper::GccWifi => "gcc-wifi",
            Paper::Mehrotra => "mehrotra",
        }
    }
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// The paper.
    #[arg(value_enum, value_name = "PAPER")]
    pub paper: Paper,

    /// Output folder (default: reproduce/PAPER).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// A shorter run of the main cases only (well under a minute).
    #[arg(long)]
    pub quick: bool,

    /// The Wi-Fi trace of gcc-wifi (default: traces/wifi/google-wifi-3mbps.rx of the wisp
    /// repository); not used by the other papers.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// Master seed (default: $WISP_SEED, else 1).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Runs in parallel (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

const WIFI_TRACE: &str = "traces/wifi/google-wifi-3mbps.rx";

/// The shipped trace: relative to the current folder, else to the source tree the binary was
/// built from.
fn default_trace() -> PathBuf {
    let here = PathBuf::from(WIFI_TRACE);
    if here.exists() {
        return here;
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(WIFI_TRACE);
    if built.exists() { built } else { here }
}

pub fn reproduce(a: ReproduceArgs) -> Result<(), CliError> {
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reproduce").join(a.paper.name()));
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    match a.paper {
        Paper::GccWifi => {
            let path = a.trace.clone().unwrap_or_else(default_trace);
            let trace = gcc_wifi::load_trace(&path).map_err(|e| {
                if e.line.is_none() && a.trace.is_none() {
                    CliError::Input(format!(
                        "{e} (run from the wisp repository or pass --trace FILE)"
                    ))
                } else {
                    CliError::Input(e.to_string())
                }
            })?;
            let seed = crate::args::seed(a.seed)?;
            let options = gcc_wifi::Options {
                trace,
                quick: a.quick,
                seed,
                jobs,
            };
            let pb = output::progress_bar(0, "simulating");
            let result = gcc_wifi::run(&options, &|done, total| {
                pb.set_length(total as u64);
                pb.set_position(done as u64);
            })?;
            pb.finish_and_clear();
            let mut files = OutputDir::default();
            files.add("report.html", wisp_report::gcc_wifi::html(&result));
            for (name, svg) in wisp_report::gcc_wifi::figures(&result) {
                files.add(Path::new("figures").join(name), svg);
            }
            files.add("dm_pdf.csv", wisp_report::gcc_wifi::dm_pdf_csv(&result));
            files.add(
                "timeseries.csv",
                wisp_report::gcc_wifi::timeseries_csv(&result),
            );
            files.add("summary.csv", wisp_report::gcc_wifi::summary_csv(&result));
            let summary = result.summary(a.quick);
            let json = serde_json::to_vec_pretty(&summary)
                .map_err(|e| CliError::Io(format!("cannot serialise results: {e}")))?;
            files.add("summary.json", json);
            files.commit(&out)?;
            for c in result.checks() {
                println!(
                    "{:3}  {}: {} (expected {})",
                    if c.met { "ok" } else { "NO" },
                    c.claim,
                    c.measured,
                    c.expected
                );
            }
            eprintln!("wisp: wrote {}", out.join("report.html").display());
        }
        Paper::Mehrotra => {
            if a.trace.is_some() {
                return Err(CliError::Input(
                    "--trace applies to gcc-wifi only (mehrotra uses the mobile profiles)".into(),
                ));
            }
            let seed = crate::args::seed(a.seed)?;
            let options = mehrotra::Options {
                quick: a.quick,
                seed,
                jobs,
            };
            let pb = output::progress_bar(0, "simulating");
            let result = mehrotra::run(&options, &|done, total| {
                pb.set_length(total as u64);
                pb.set_position(done as u64);
            })?;
            pb.finish_and_clear();
            let mut files = OutputDir::default();
            files.add("report.html", wisp_report::mehrotra::html(&result));
            for (name, svg) in wisp_report::mehrotra::figures(&result) {
                files.add(Path::new("figures").join(name), svg);
            }
            for s in &result.sweeps {
                files.add(format!("sweep-{}.csv", s.link), wisp_report::sweep::csv(s));
            }
            files.add("tables.csv", wisp_report::mehrotra::table_csv(&result));
            files.add(
                "delta_hat_sweep.csv",
                wisp_report::mehrotra::delta_sweep_csv(&result),
            );
            files.add(
                "sensitivity.csv",
                wisp_report::mehrotra::sensitivity_csv(&result),
            );
            files.add(
                "timeseries.csv",
                wisp_report::mehrotra::timeseries_csv(&result),
            );
            let checks = result.checks();
            let json = serde_json::to_vec_pretty(&serde_json::json!({
                "paper": "mehrotra",
                "result": &result,
                "checks": &checks,
            }))
            .map_err(|e| CliError::Io(format!("cannot serialise results: {e}")))?;
            files.add("summary.json", json);
            files.commit(&out)?;
            for c in checks {
                println!(
                    "{:3}  {}: {} (expected {})",
                    if c.met { "ok" } else { "NO" },
                    c.claim,
                    c.measured,
                    c.expected
                );
            }
            eprintln!("wisp: wrote {}", out.join("report.html").display());
        }
    }
    Ok(())
}
