//! Writing results: JSON on stdout, files into an output folder all at once, progress bars.

use crate::error::CliError;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Prints `value` as one line of JSON on stdout.
pub fn print_json(value: &impl Serialize) -> Result<(), CliError> {
    let s = serde_json::to_string(value)
        .map_err(|e| CliError::Io(format!("cannot serialise results: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{s}").map_err(|e| CliError::Io(format!("cannot write to stdout: {e}")))
}

/// Files to write into an output folder, all at once ([`wisp_report::output::OutputDir`]).
#[derive(Debug, Default)]
pub struct OutputDir(wisp_report::output::OutputDir);

impl OutputDir {
    pub fn add(&mut self, name: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) {
        self.0.add(name, bytes);
    }

    /// Writes every file, or none ([`wisp_report::output::OutputDir::commit`]).
    pub fn commit(self, dir: &Path) -> Result<(), CliError> {
        self.0.commit(dir).map_err(CliError::from)
    }
}

/// Refuses, before anything runs, an output folder `dir` (given as `flag`) that cannot be one
/// ([`wisp_report::output::check_out_dir`]): bad input, exit code 2, and nothing written.
pub fn check_out_dir(flag: &str, dir: &Path) -> Result<(), CliError> {
    wisp_report::output::check_out_dir(flag, dir).map_err(CliError::from)
}

/// Refuses, before anything runs, an output file `path` (given as `flag`) that cannot be one
/// ([`wisp_report::output::check_out_file`]).
pub fn check_out_file(flag: &str, path: &Path) -> Result<(), CliError> {
    wisp_report::output::check_out_file(flag, path).map_err(CliError::from)
}

/// A progress bar on stderr when stderr is a terminal; hidden otherwise.
pub fn progress_bar(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{prefix} [{bar:40}] {pos}/{len} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}
