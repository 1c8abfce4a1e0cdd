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

/// Files to write into an output folder. Nothing touches the disk until [`OutputDir::commit`],
/// which writes each file under a temporary name and renames it into place, so a failed command
/// leaves no partial files.
#[derive(Debug, Default)]
pub struct OutputDir {
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl OutputDir {
    pub fn add(&mut self, name: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) {
        self.files.push((name.into(), bytes.into()));
    }

    pub fn commit(self, dir: &Path) -> Result<(), CliError> {
        let io = |what: &str, p: &Path, e: std::io::Error| {
            CliError::Io(format!("cannot {what} {}: {e}", p.display()))
        };
        std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
        let mut written = vec![];
        let result = (|| {
            for (name, bytes) in &self.files {
                let path = dir.join(name);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| io("create", parent, e))?;
                }
                let tmp = path.with_file_name(format!(
                    ".{}.tmp{}",
                    path.file_name()
                        .map(|n| n.to_string_lossy())
                        .unwrap_or_default(),
                    std::process::id()
                ));
                std::fs::write(&tmp, bytes).map_err(|e| io("write", &tmp, e))?;
                written.push((tmp, path));
            }
            Ok(())
        })();
        if let Err(e) = result {
            for (tmp, _) in &written {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(e);
        }
        for (tmp, path) in written {
            std::fs::rename(&tmp, &path).map_err(|e| io("rename into", &path, e))?;
        }
        Ok(())
    }
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
