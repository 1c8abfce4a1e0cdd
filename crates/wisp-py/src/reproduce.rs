//! `wisp.reproduce(paper, quick=…, out=…)`: the claims of `wisp reproduce PAPER`, as rows — the
//! same runs (wisp-sim's `reproduce` modules, called as `crates/wisp-cli/src/reproduce.rs` calls
//! them) and the same checks the command line prints; with `out`, the same output folder,
//! written by the same code (`wisp_report::reproduce::Reproduced::write_outputs`). Every paper
//! of the command line: sprout, gcc-wifi, mehrotra, wbest, kwikr, alfalfa.
//!
//! The reproduction runs on a thread of its own while the main thread checks for Ctrl-C
//! ([`crate::interruptible`]): a signal's exception sets the cancel flag its runs poll at the
//! engine's cancel point, and comes back at once.

use crate::{interruptible, resolve_seed, value_error};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use wisp_report::output::{OutputError, check_out_dir};
use wisp_report::reproduce::Reproduced;
use wisp_sim::reproduce::{
    alfalfa, gcc_wifi, kwikr, kwikr_calls, mehrotra, shipped, sprout, wbest,
};

/// One row: `(kind, scope, claim, measured, expected, met)`; kind is `claim` or `calibration`
/// (mehrotra's checks of its calibration, which are not the paper's claims); scope is the trace
/// (or loss-table direction) a sprout check was measured on, empty for the other papers.
type Row = (String, String, String, String, String, bool);

/// The papers, as the command line names them.
pub const PAPERS: [&str; 6] = [
    "sprout", "gcc-wifi", "mehrotra", "wbest", "kwikr", "alfalfa",
];

/// What a paper runs on, checked before anything runs.
enum Plan {
    Sprout(sprout::Options),
    GccWifi(gcc_wifi::Options),
    Mehrotra(mehrotra::Options),
    Wbest,
    Kwikr,
    Alfalfa(Vec<sprout::TracePair>),
}

/// Runs a paper's reproduction (see `wisp.reproduce`).
#[pyfunction]
#[pyo3(signature = (paper, quick=false, seed=None, jobs=None, trace=None, traces=None, out=None))]
#[allow(clippy::too_many_arguments)]
pub fn reproduce(
    py: Python<'_>,
    paper: &str,
    quick: bool,
    seed: Option<u64>,
    jobs: Option<usize>,
    trace: Option<PathBuf>,
    traces: Option<PathBuf>,
    out: Option<PathBuf>,
) -> PyResult<Vec<Row>> {
    let seed = resolve_seed(seed)?;
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        return Err(value_error("jobs: must be at least 1"));
    }
    let misplaced = |opt: &str, takes: &str| {
        Err(value_error(format!(
            "{opt} does not apply to {paper} ({takes})"
        )))
    };
    let plan = match paper {
        "sprout" | "alfalfa" => {
            if trace.is_some() {
                return misplaced("trace", "it takes traces=DIR");
            }
            let dir = traces.unwrap_or_else(|| shipped("traces/cellular"));
            let pairs = sprout::load_traces(&dir, quick).map_err(value_error)?;
            if paper == "alfalfa" {
                Plan::Alfalfa(pairs)
            } else {
                Plan::Sprout(sprout::Options {
                    pairs,
                    quick,
                    seed,
                    jobs,
                })
            }
        }
        "gcc-wifi" => {
            if traces.is_some() {
                return misplaced("traces", "it takes trace=FILE");
            }
            let path = trace.unwrap_or_else(|| shipped("traces/wifi/google-wifi-3mbps.rx"));
            let trace = gcc_wifi::load_trace(&path).map_err(value_error)?;
            Plan::GccWifi(gcc_wifi::Options {
                trace,
                quick,
                seed,
                jobs,
            })
        }
        "mehrotra" | "wbest" | "kwikr" => {
            if trace.is_some() || traces.is_some() {
                let takes = match paper {
                    "mehrotra" => "it runs on the mobile-broadband profiles",
                    "wbest" => "it runs on the simulated 802.11g testbed",
                    _ => "it runs its scenarios on the simulated 802.11 medium",
                };
                return misplaced(if trace.is_some() { "trace" } else { "traces" }, takes);
            }
            match paper {
                "mehrotra" => Plan::Mehrotra(mehrotra::Options { quick, seed, jobs }),
                "wbest" => Plan::Wbest,
                _ => Plan::Kwikr,
            }
        }
        p => {
            return Err(value_error(format!(
                "unknown paper `{p}` (known: {})",
                PAPERS.join(", ")
            )));
        }
    };
    // A folder that cannot be one is refused before anything runs, as `--out` is.
    if let Some(dir) = &out {
        check_out_dir("out", dir).map_err(value_error)?;
    }
    let none = |_: usize, _: usize| {};
    let r = interruptible(py, |cancel: &AtomicBool| {
        let r: Result<Reproduced, String> = match &plan {
            Plan::Sprout(o) => sprout::run_or_cancel(o, &none, cancel)
                .map(Reproduced::Sprout)
                .map_err(|e| e.to_string()),
            Plan::GccWifi(o) => gcc_wifi::run_or_cancel(o, &none, cancel)
                .map(Reproduced::GccWifi)
                .map_err(|e| e.to_string()),
            Plan::Mehrotra(o) => mehrotra::run_or_cancel(o, &none, cancel)
                .map(Reproduced::Mehrotra)
                .map_err(|e| e.to_string()),
            // Its cases run one after another (the command line's --jobs does not apply).
            Plan::Wbest => wbest::run_or_cancel(quick, seed, &none, cancel)
                .map(Reproduced::Wbest)
                .map_err(|e| e.to_string()),
            // Ping-Pair's validation (Table 1, Fig. 5), then the calls (Figs. 8, 9, Table 2).
            Plan::Kwikr => (|| {
                let pairs =
                    kwikr::run_or_cancel(&kwikr::Options { quick, seed, jobs }, &none, cancel)
                        .map_err(|e| e.to_string())?;
                let calls = kwikr_calls::run_or_cancel(
                    &kwikr_calls::Options { quick, seed, jobs },
                    &none,
                    cancel,
                )
                .map_err(|e| e.to_string())?;
                Ok(Reproduced::Kwikr(pairs, calls))
            })(),
            Plan::Alfalfa(pairs) => alfalfa::run_or_cancel(pairs, quick, seed, jobs, &none, cancel)
                .map(Reproduced::Alfalfa)
                .map_err(|e| e.to_string()),
        };
        Some(r)
    })?
    .map_err(value_error)?;
    if let Some(dir) = &out {
        py.allow_threads(|| r.write_outputs(quick, dir))
            .map_err(|e| match e {
                OutputError::Input(m) => value_error(m),
                OutputError::Io(m) => PyOSError::new_err(m),
            })?;
    }
    Ok(r.checks()
        .into_iter()
        .map(|(kind, c)| {
            (
                kind.word().to_string(),
                c.scope.unwrap_or_default(),
                c.claim,
                c.measured,
                c.expected,
                c.met,
            )
        })
        .collect())
}
