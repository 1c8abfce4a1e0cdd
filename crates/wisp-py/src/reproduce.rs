//! `wisp.reproduce(paper, quick=…, out=…)`: the claims of `wisp reproduce PAPER`, as rows — the
//! same runs and the same checks the command line prints, of every paper of wisp-report's
//! registry ([`wisp_report::PAPERS`]); with `out`, the same output folder, written by the same
//! code ([`wisp_report::reproduce::Outcome::write_outputs`]).
//!
//! The reproduction runs on a thread of its own while the main thread checks for Ctrl-C
//! ([`crate::interruptible`]): a signal's exception sets the cancel flag its runs poll at the
//! engine's cancel point, and comes back at once.

use crate::{interruptible, resolve_seed, value_error};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use wisp_report::PAPERS;
use wisp_report::output::{OutputError, check_out_dir};
use wisp_report::reproduce::{InputOption, Request, find, names};

/// One row: `(kind, scope, claim, measured, expected, met, not_applicable)`; kind is `claim` or
/// `calibration` (mehrotra's checks of its calibration, which are not the paper's claims); scope
/// is the trace (or loss-table direction) a sprout check was measured on, empty for the other
/// papers; `not_applicable` is why a check cannot fail on its data (then `met` is false), empty
/// for one that can.
type Row = (String, String, String, String, String, bool, String);

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
    let Some(p) = find(PAPERS, paper) else {
        return Err(value_error(format!(
            "unknown paper `{paper}` (known: {})",
            names(PAPERS).join(", ")
        )));
    };
    let inputs = p.inputs;
    if let Some(opt) = inputs.misplaced(trace.is_some(), traces.is_some()) {
        let keyword = opt.python().split('=').next().unwrap_or_default();
        return Err(value_error(format!(
            "{keyword} does not apply to {paper} ({})",
            inputs.takes(InputOption::python)
        )));
    }
    // A folder that cannot be one is refused before anything runs, as `--out` is.
    if let Some(dir) = &out {
        check_out_dir("out", dir).map_err(value_error)?;
    }
    let request = Request {
        quick,
        seed,
        jobs,
        trace,
        traces,
    };
    let none = |_: usize, _: usize| {};
    let outcome = interruptible(py, |cancel: &AtomicBool| {
        Some(p.run(&request, &none, cancel))
    })?
    .map_err(value_error)?;
    if let Some(dir) = &out {
        py.allow_threads(|| outcome.write_outputs(dir))
            .map_err(|e| match e {
                OutputError::Input(m) => value_error(m),
                OutputError::Io(m) => PyOSError::new_err(m),
            })?;
    }
    Ok(outcome
        .checks()
        .into_iter()
        .map(|(kind, c)| {
            (
                kind.word().to_string(),
                c.scope.unwrap_or_default(),
                c.claim,
                c.measured,
                c.expected,
                c.met,
                c.not_applicable.unwrap_or_default(),
            )
        })
        .collect())
}
