//! `wisp reproduce PAPER`: re-run a paper's experiments and write its figures. The papers are
//! wisp-report's registry ([`wisp_report::PAPERS`]): the PAPER argument, its `--help` and the
//! options each paper takes come from there.

use crate::error::CliError;
use crate::output;
use clap::Args;
use clap::builder::{PossibleValue, PossibleValuesParser};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use wisp_report::PAPERS;
use wisp_report::reproduce::{InputOption, Paper, Request, RunError, find};

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// The paper.
    #[arg(value_name = "PAPER", value_parser = papers())]
    pub paper: String,

    /// Output folder (default: reproduce/PAPER).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// A shorter run that still checks every claim it can: gcc-wifi, a 60-s call over the main
    /// cases; sprout and alfalfa, the two 140-s LTE trace pairs only; mehrotra, the main cases
    /// with shorter runs (each under a minute); wbest, 5 runs per case instead of 30; kwikr,
    /// Fig. 5 shortened to 35 s (its calls are the paper's 20 per figure and 10 per pairing
    /// either way: seconds).
    #[arg(long)]
    pub quick: bool,

    /// The Wi-Fi trace of gcc-wifi (default: traces/wifi/google-wifi-3mbps.rx of the wisp
    /// repository); not used by the other papers.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,

    /// The folder of sprout's cellular trace pairs, NAME.down and NAME.up for each of
    /// Verizon-LTE-short, Verizon-EVDO-driving, ATT-LTE-driving, TMobile-UMTS-driving and
    /// TMobile-LTE-short (default: traces/cellular of the wisp repository).
    #[arg(long, value_name = "DIR")]
    pub traces: Option<PathBuf>,

    /// Master seed (default: $WISP_SEED, else 1).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Runs in parallel (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

/// The PAPER argument: a name of the registry, each listed with its summary in `--help`.
fn papers() -> PossibleValuesParser {
    PossibleValuesParser::new(
        PAPERS
            .iter()
            .map(|p| PossibleValue::new(p.name).help(p.summary)),
    )
}

pub fn reproduce(a: ReproduceArgs) -> Result<(), CliError> {
    let paper = find(PAPERS, &a.paper)
        .ok_or_else(|| CliError::Input(format!("unknown paper `{}`", a.paper)))?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reproduce").join(paper.name));
    output::check_out_dir("--out", &out)?;
    let jobs = a.jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let inputs = paper.inputs;
    if let Some(opt) = inputs.misplaced(a.trace.is_some(), a.traces.is_some()) {
        let flag = opt.cli().split(' ').next().unwrap_or_default();
        return Err(CliError::Input(format!(
            "{flag} does not apply to {} ({})",
            paper.name,
            inputs.takes(InputOption::cli)
        )));
    }
    let request = Request {
        quick: a.quick,
        seed: crate::args::seed(a.seed)?,
        jobs,
        trace: a.trace,
        traces: a.traces,
    };
    let outcome = with_progress(|on_done| {
        paper
            .run(&request, on_done, &AtomicBool::new(false))
            .map_err(|e| run_error(e, paper))
    })?;
    outcome.write_outputs(&out)?;
    print!("{}", outcome.stdout());
    say!("wisp: wrote {}", out.join(outcome.main_file()).display());
    Ok(())
}

/// A run that failed. A shipped input that could not be read, when the user gave none and the
/// file is simply not there, says how to point at one.
fn run_error(e: RunError, paper: &Paper) -> CliError {
    match (&e, paper.inputs.option()) {
        (RunError::Trace { error, defaulted }, Some(opt)) if error.line.is_none() && *defaulted => {
            CliError::Input(format!(
                "{error} (run from the wisp repository or pass {})",
                opt.cli()
            ))
        }
        _ => CliError::Input(e.to_string()),
    }
}

/// Runs a reproduction behind a progress bar fed by its `on_done(done, total)` callback.
fn with_progress<R>(
    run: impl FnOnce(&(dyn Fn(usize, usize) + Sync)) -> Result<R, CliError>,
) -> Result<R, CliError> {
    let pb = output::progress_bar(0, "simulating");
    let result = run(&|done, total| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    })?;
    pb.finish_and_clear();
    Ok(result)
}
