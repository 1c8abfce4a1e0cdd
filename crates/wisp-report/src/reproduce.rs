//! The seam of the papers wisp reproduces (`wisp reproduce PAPER`, `wisp.reproduce(paper, …)`).
//!
//! A paper is its run module in `wisp_sim::reproduce`, its renderer in this crate (a module
//! that implements [`Paper`] and the [`Outcome`] of its result) and one line of the registry,
//! [`crate::PAPERS`]. The command line (the PAPER argument, `--help`, `--trace`/`--traces`),
//! the Python package and the tests find the papers there; none of them names one.
//!
//! An [`Outcome`] builds the output folder (summary.json with the checks, the tables as CSV,
//! report.html, figures/*.svg) in one place for the command line and for the Python package's
//! `wisp.reproduce(…, out=…)`, so that both write the same bytes.

use crate::output::{OutputDir, OutputError};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use wisp_sim::reproduce::sprout::{self, TracePair};
use wisp_sim::reproduce::{Check, gcc_wifi, shipped};
use wisp_sim::sim::SimError;
use wisp_sim::trace::{Trace, TraceError};

/// Progress: `on_done(done, total)`, from the runs' threads.
pub type OnDone<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// A paper wisp reproduces: what the front ends need to name it, describe it, check its
/// inputs and run it. Each renderer module declares one, `pub const PAPER: Paper`.
#[derive(Clone, Copy, Debug)]
pub struct Paper {
    /// Its name on the command line and in Python (`gcc-wifi`).
    pub name: &'static str,
    /// What it reproduces, one paragraph (`wisp reproduce --help`).
    pub summary: &'static str,
    /// What it runs on.
    pub inputs: Inputs,
    /// Loads its inputs and runs its experiments ([`Paper::run`]).
    pub runs: RunFn,
}

/// A paper's run: see [`Paper::run`].
pub type RunFn = fn(&Request, OnDone<'_>, &AtomicBool) -> Result<Box<dyn Outcome>, RunError>;

impl Paper {
    /// Loads its inputs and runs its experiments; stops with [`RunError::Cancelled`] once
    /// `cancel` is set (the runs under way at the engine's next cancel point).
    pub fn run(
        &self,
        request: &Request,
        on_done: OnDone<'_>,
        cancel: &AtomicBool,
    ) -> Result<Box<dyn Outcome>, RunError> {
        (self.runs)(request, on_done, cancel)
    }
}

/// A reproduction's result, as its front ends use it.
pub trait Outcome: Send + Sync {
    /// The paper's claims, checked.
    fn claims(&self) -> Vec<Check>;
    /// Every check, in the order `wisp reproduce` prints them: by default the claims.
    fn checks(&self) -> Vec<(CheckKind, Check)> {
        CheckKind::claims(self.claims())
    }
    /// The files of the output folder.
    fn files(&self) -> Result<OutputDir, OutputError>;
    /// What `wisp reproduce` prints on stdout: the tables and the checks.
    fn stdout(&self) -> String;
    /// The file `wisp reproduce` names once the folder is written.
    fn main_file(&self) -> &'static str {
        "report.html"
    }
    /// Writes [`Outcome::files`] into `dir`, all of them or none ([`OutputDir::commit`]).
    fn write_outputs(&self, dir: &Path) -> Result<(), OutputError> {
        self.files()?.commit(dir)
    }
}

/// A result of `wisp_sim::reproduce`, and whether the run was `--quick` (which the
/// summary.json of some papers records): the [`Outcome`] each renderer implements.
#[derive(Debug)]
pub struct Done<R> {
    pub result: R,
    pub quick: bool,
}

impl<R> Done<R> {
    pub fn new(result: R, quick: bool) -> Self {
        Done { result, quick }
    }
}

impl<R> Done<R>
where
    Done<R>: Outcome + 'static,
{
    /// The boxed [`Outcome`] a [`RunFn`] returns.
    pub fn boxed(result: R, quick: bool) -> Result<Box<dyn Outcome>, RunError> {
        Ok(Box::new(Done { result, quick }))
    }
}

/// What a paper runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// Nothing the user gives; the sentence says what instead ("it runs on …").
    None(&'static str),
    /// One trace file (`--trace FILE`, `trace=FILE`), by default this one shipped with wisp.
    TraceFile(&'static str),
    /// A folder of trace pairs (`--traces DIR`, `traces=DIR`), by default this one.
    TraceFolder(&'static str),
}

/// An input option, as each front end spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputOption {
    Trace,
    Traces,
}

impl InputOption {
    /// The command line's option and its value: `--trace FILE`.
    pub fn cli(self) -> &'static str {
        match self {
            InputOption::Trace => "--trace FILE",
            InputOption::Traces => "--traces DIR",
        }
    }

    /// The Python keyword and its value: `trace=FILE`.
    pub fn python(self) -> &'static str {
        match self {
            InputOption::Trace => "trace=FILE",
            InputOption::Traces => "traces=DIR",
        }
    }
}

impl Inputs {
    /// The option a paper takes, if any.
    pub fn option(self) -> Option<InputOption> {
        match self {
            Inputs::None(_) => None,
            Inputs::TraceFile(_) => Some(InputOption::Trace),
            Inputs::TraceFolder(_) => Some(InputOption::Traces),
        }
    }

    /// The first of the options given (`--trace`, then `--traces`) that the paper does not
    /// take.
    pub fn misplaced(self, trace: bool, traces: bool) -> Option<InputOption> {
        [(InputOption::Trace, trace), (InputOption::Traces, traces)]
            .into_iter()
            .find(|&(o, given)| given && self.option() != Some(o))
            .map(|(o, _)| o)
    }

    /// What the paper takes instead, for a refusal: "it takes --trace FILE" (with the option
    /// spelt by `spell`) or what it runs on.
    pub fn takes(self, spell: fn(InputOption) -> &'static str) -> String {
        match self {
            Inputs::None(what) => what.to_string(),
            Inputs::TraceFile(_) => format!("it takes {}", spell(InputOption::Trace)),
            Inputs::TraceFolder(_) => format!("it takes {}", spell(InputOption::Traces)),
        }
    }
}

/// What a front end asks to run.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub quick: bool,
    pub seed: u64,
    /// Runs in parallel (at least 1).
    pub jobs: usize,
    /// The trace file given, if any.
    pub trace: Option<PathBuf>,
    /// The folder of traces given, if any.
    pub traces: Option<PathBuf>,
}

impl Request {
    /// The trace file to load: the one given, else `default` (shipped with wisp); and
    /// whether it was the default.
    pub fn trace_or(&self, default: &str) -> (PathBuf, bool) {
        given_or(&self.trace, default)
    }

    /// The folder of traces to load: the one given, else `default`; and whether it was the
    /// default.
    pub fn traces_or(&self, default: &str) -> (PathBuf, bool) {
        given_or(&self.traces, default)
    }

    /// The Wi-Fi trace given, else `default`, loaded.
    pub fn load_trace(&self, default: &str) -> Result<Arc<Trace>, RunError> {
        let (path, defaulted) = self.trace_or(default);
        gcc_wifi::load_trace(&path).map_err(|e| RunError::trace((e, defaulted)))
    }

    /// The trace pairs of the folder given, else of `default`, loaded (the `--quick` subset
    /// when the request is quick).
    pub fn load_pairs(&self, default: &str) -> Result<Vec<TracePair>, RunError> {
        let (dir, defaulted) = self.traces_or(default);
        sprout::load_traces(&dir, self.quick).map_err(|e| RunError::trace((e, defaulted)))
    }
}

fn given_or(given: &Option<PathBuf>, default: &str) -> (PathBuf, bool) {
    match given {
        Some(p) => (p.clone(), false),
        None => (shipped(default), true),
    }
}

/// Why a reproduction did not run to its end.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// An input could not be read; `defaulted`: the user gave none (the shipped default was
    /// tried).
    Trace { error: TraceError, defaulted: bool },
    /// The cancel flag was set.
    Cancelled,
    /// Anything else, said in a line.
    Failed(String),
}

impl RunError {
    /// A trace that could not be loaded (see [`Request::trace_or`]).
    pub fn trace((error, defaulted): (TraceError, bool)) -> Self {
        RunError::Trace { error, defaulted }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Trace { error, .. } => error.fmt(f),
            RunError::Cancelled => SimError::Cancelled.fmt(f),
            RunError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for RunError {}

impl From<SimError> for RunError {
    fn from(e: SimError) -> Self {
        match e {
            SimError::Cancelled => RunError::Cancelled,
            e => RunError::Failed(e.to_string()),
        }
    }
}

/// The paper of `registry` named `name`.
pub fn find<'a>(registry: &[&'a Paper], name: &str) -> Option<&'a Paper> {
    registry.iter().copied().find(|p| p.name == name)
}

/// The names of `registry`'s papers, in its order.
pub fn names(registry: &[&Paper]) -> Vec<&'static str> {
    registry.iter().map(|p| p.name).collect()
}

/// Declares the renderers' modules and the registry of the papers, [`crate::PAPERS`]: one line
/// per paper, its module (which declares `PAPER`), in the order `wisp reproduce --help` lists
/// them.
macro_rules! papers {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// The papers wisp reproduces, in the order `wisp reproduce --help` lists them.
        pub static PAPERS: &[&$crate::reproduce::Paper] = &[$(&$module::PAPER),*];
    };
}

/// Whether a check is one of the paper's claims or (mehrotra's) a check of the calibration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    Claim,
    Calibration,
}

impl CheckKind {
    /// `claim` or `calibration`.
    pub fn word(self) -> &'static str {
        match self {
            CheckKind::Claim => "claim",
            CheckKind::Calibration => "calibration",
        }
    }

    /// Each of `checks`, as a claim.
    pub fn claims(checks: Vec<Check>) -> Vec<(CheckKind, Check)> {
        checks.into_iter().map(|c| (CheckKind::Claim, c)).collect()
    }
}

/// Every check, then how many are met of those that apply (`wisp reproduce`'s last lines).
pub fn write_checks(out: &mut String, checks: &[Check]) {
    write_each(out, "", checks);
    let t = wisp_sim::reproduce::Tally::of(checks);
    let _ = writeln!(
        out,
        "{} of {} checks met{}",
        t.met,
        t.applicable,
        t.na_note()
    );
}

/// Every check, a line each: `ok`/`NO`/`n/a`, the claim after `prefix`, the figure, the
/// expectation (and, for one that cannot fail on its data, why). Returns how many are met.
pub fn write_each(out: &mut String, prefix: &str, checks: &[Check]) -> usize {
    for c in checks {
        let why = c
            .not_applicable
            .as_ref()
            .map_or(String::new(), |w| format!(" — not applicable: {w}"));
        let _ = writeln!(
            out,
            "{:3}  {prefix}{}: {} (expected {}){why}",
            c.status(),
            c.claim,
            c.measured,
            c.expected
        );
    }
    checks.iter().filter(|c| c.met).count()
}

/// Adds the page `report.html` and each figure `(name, svg)` under `figures/`.
pub fn add_report(files: &mut OutputDir, html: String, figures: Vec<(String, String)>) {
    files.add("report.html", html);
    for (name, svg) in figures {
        files.add(Path::new("figures").join(name), svg);
    }
}

/// Pretty JSON, as every summary.json is written.
pub fn to_json(value: &impl serde::Serialize) -> Result<Vec<u8>, OutputError> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| OutputError::Io(format!("cannot serialise results: {e}")))
}

/// The folder of a paper drawn as a page with figures ([`add_report`]), then its tables
/// `(name, csv)` in order, then one JSON file `(name, value)` ([`to_json`]).
pub fn report_folder<const N: usize>(
    (html, figures): (String, Vec<(String, String)>),
    tables: [(&str, String); N],
    (json_name, json): (&str, &impl serde::Serialize),
) -> Result<OutputDir, OutputError> {
    let mut files = OutputDir::default();
    add_report(&mut files, html, figures);
    for (name, csv) in tables {
        files.add(name, csv);
    }
    files.add(json_name, to_json(json)?);
    Ok(files)
}

/// The output folder of a reproduction, holding `summary.json`: the paper, `--quick` (where
/// given), the result, its checks and the `extra` fields.
pub fn with_summary<const N: usize>(
    paper: &str,
    quick: Option<bool>,
    result: &impl serde::Serialize,
    checks: &[Check],
    extra: [(&str, serde_json::Value); N],
) -> Result<OutputDir, OutputError> {
    let mut summary = serde_json::Map::new();
    summary.insert("paper".into(), paper.into());
    if let Some(quick) = quick {
        summary.insert("quick".into(), quick.into());
    }
    summary.insert("result".into(), serde_json::json!(result));
    summary.insert("checks".into(), serde_json::json!(checks));
    for (key, value) in extra {
        summary.insert(key.into(), value);
    }
    let mut files = OutputDir::default();
    files.add("summary.json", to_json(&summary)?);
    Ok(files)
}

/// The folder of a paper whose result is one table: summary.json ([`with_summary`], with
/// `--quick`), `table.csv`, the page and its figures ([`add_report`]).
pub fn one_table<R: serde::Serialize>(
    paper: &str,
    done: &Done<R>,
    checks: &[Check],
    table: String,
    (html, figures): (String, Vec<(String, String)>),
) -> Result<OutputDir, OutputError> {
    let mut files = with_summary(paper, Some(done.quick), &done.result, checks, [])?;
    files.add("table.csv", table);
    add_report(&mut files, html, figures);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PAPERS;

    /// Every paper of the registry under a cancel flag already set: no run goes on, and the
    /// error is `Cancelled` (these full runs take minutes otherwise).
    #[test]
    fn a_set_cancel_flag_stops_every_paper() {
        let set = AtomicBool::new(true);
        let none = |_: usize, _: usize| {};
        let request = Request {
            seed: 1,
            jobs: 2,
            ..Request::default()
        };
        for p in PAPERS {
            let r = p.run(&request, &none, &set).map(|_| ());
            assert_eq!(r, Err(RunError::Cancelled), "{}", p.name);
        }
    }

    #[test]
    fn names_are_unique_and_each_has_a_summary() {
        let names = names(PAPERS);
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} twice");
            assert!(find(PAPERS, n).is_some_and(|p| !p.summary.is_empty()));
        }
        assert!(find(PAPERS, "nosuch").is_none());
    }

    #[test]
    fn a_misplaced_input_is_named_with_what_the_paper_takes() {
        let file = Inputs::TraceFile("a.rx");
        assert_eq!(file.misplaced(true, false), None);
        assert_eq!(file.misplaced(true, true), Some(InputOption::Traces));
        assert_eq!(file.takes(InputOption::cli), "it takes --trace FILE");
        let folder = Inputs::TraceFolder("traces");
        assert_eq!(folder.misplaced(true, true), Some(InputOption::Trace));
        assert_eq!(folder.takes(InputOption::python), "it takes traces=DIR");
        let none = Inputs::None("it runs on air");
        assert_eq!(none.misplaced(false, false), None);
        assert_eq!(none.misplaced(false, true), Some(InputOption::Traces));
        assert_eq!(none.takes(InputOption::cli), "it runs on air");
    }
}
