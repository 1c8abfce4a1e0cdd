//! `wisp.reproduce(paper, quick=…)`: the claims of `wisp reproduce PAPER`, as rows — the same
//! runs (wisp-sim's `reproduce` modules, called as `crates/wisp-cli/src/reproduce.rs` calls
//! them) and the same checks the command line prints, without its output folder. Every paper
//! of the command line: sprout, gcc-wifi, mehrotra, wbest, kwikr, alfalfa.

use crate::{resolve_seed, value_error};
use pyo3::prelude::*;
use std::path::PathBuf;
use wisp_sim::reproduce::{
    Check, alfalfa, gcc_wifi, kwikr, kwikr_calls, mehrotra, shipped, sprout, wbest,
};

/// One row: `(kind, scope, claim, measured, expected, met)`; kind is `claim` or `calibration`
/// (mehrotra's checks of its calibration, which are not the paper's claims); scope is the trace
/// (or loss-table direction) a sprout check was measured on, empty for the other papers.
type Row = (String, String, String, String, String, bool);

fn rows(kind: &str, checks: Vec<Check>) -> Vec<Row> {
    checks
        .into_iter()
        .map(|c| {
            (
                kind.to_string(),
                c.scope.unwrap_or_default(),
                c.claim,
                c.measured,
                c.expected,
                c.met,
            )
        })
        .collect()
}

/// The papers, as the command line names them.
pub const PAPERS: [&str; 6] = [
    "sprout", "gcc-wifi", "mehrotra", "wbest", "kwikr", "alfalfa",
];

/// Runs a paper's reproduction (see `wisp.reproduce`).
#[pyfunction]
#[pyo3(signature = (paper, quick=false, seed=None, jobs=None, trace=None, traces=None))]
pub fn reproduce(
    py: Python<'_>,
    paper: &str,
    quick: bool,
    seed: Option<u64>,
    jobs: Option<usize>,
    trace: Option<PathBuf>,
    traces: Option<PathBuf>,
) -> PyResult<Vec<Row>> {
    let seed = resolve_seed(seed)?;
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 {
        return Err(value_error("jobs: must be at least 1"));
    }
    let none = |_: usize, _: usize| {};
    let misplaced = |opt: &str, takes: &str| {
        Err(value_error(format!(
            "{opt} does not apply to {paper} ({takes})"
        )))
    };
    match paper {
        "sprout" => {
            if trace.is_some() {
                return misplaced("trace", "it takes traces=DIR");
            }
            let dir = traces.unwrap_or_else(|| shipped("traces/cellular"));
            let pairs = sprout::load_traces(&dir, quick).map_err(value_error)?;
            let options = sprout::Options {
                pairs,
                quick,
                seed,
                jobs,
            };
            let r = py
                .allow_threads(|| sprout::run(&options, &none))
                .map_err(value_error)?;
            Ok(rows("claim", r.checks()))
        }
        "gcc-wifi" => {
            if traces.is_some() {
                return misplaced("traces", "it takes trace=FILE");
            }
            let path = trace.unwrap_or_else(|| shipped("traces/wifi/google-wifi-3mbps.rx"));
            let trace = gcc_wifi::load_trace(&path).map_err(value_error)?;
            let options = gcc_wifi::Options {
                trace,
                quick,
                seed,
                jobs,
            };
            let r = py
                .allow_threads(|| gcc_wifi::run(&options, &none))
                .map_err(value_error)?;
            Ok(rows("claim", r.checks()))
        }
        "mehrotra" => {
            if trace.is_some() || traces.is_some() {
                return misplaced(
                    if trace.is_some() { "trace" } else { "traces" },
                    "it runs on the mobile-broadband profiles",
                );
            }
            let options = mehrotra::Options { quick, seed, jobs };
            let r = py
                .allow_threads(|| mehrotra::run(&options, &none))
                .map_err(value_error)?;
            let mut out = rows("calibration", r.calibration_checks());
            out.extend(rows("claim", r.checks()));
            Ok(out)
        }
        "wbest" => {
            if trace.is_some() || traces.is_some() {
                return misplaced(
                    if trace.is_some() { "trace" } else { "traces" },
                    "it runs on the simulated 802.11g testbed",
                );
            }
            // Its cases run one after another (the command line's --jobs does not apply).
            let r = py.allow_threads(|| wbest::run(quick, seed, &none));
            Ok(rows("claim", r.checks()))
        }
        "kwikr" => {
            if trace.is_some() || traces.is_some() {
                return misplaced(
                    if trace.is_some() { "trace" } else { "traces" },
                    "it runs its scenarios on the simulated 802.11 medium",
                );
            }
            let checks = py.allow_threads(|| {
                // Ping-Pair's validation (Table 1, Fig. 5), then the calls (Figs. 8, 9, Table 2).
                let pairs = kwikr::run(&kwikr::Options { quick, seed, jobs }, &none)
                    .map_err(|e| e.to_string())?;
                let calls = kwikr_calls::run(&kwikr_calls::Options { quick, seed, jobs }, &none)
                    .map_err(|e| e.to_string())?;
                Ok::<_, String>(pairs.checks(calls.summary().checks))
            });
            Ok(rows("claim", checks.map_err(value_error)?))
        }
        "alfalfa" => {
            if trace.is_some() {
                return misplaced("trace", "it takes traces=DIR");
            }
            let dir = traces.unwrap_or_else(|| shipped("traces/cellular"));
            let pairs = sprout::load_traces(&dir, quick).map_err(value_error)?;
            let r = py
                .allow_threads(|| alfalfa::run(&pairs, quick, seed, jobs, &none))
                .map_err(value_error)?;
            Ok(rows("claim", r.checks()))
        }
        p => Err(value_error(format!(
            "unknown paper `{p}` (known: {})",
            PAPERS.join(", ")
        ))),
    }
}
