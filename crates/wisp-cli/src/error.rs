//! The command's errors: bad input (exit code 2) or a failure to write output (exit code 1).

use std::fmt;

#[derive(Debug)]
pub enum CliError {
    /// Bad input: a file, an option, a value. Exit code 2.
    Input(String),
    /// Writing output failed. Exit code 1.
    Io(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Input(_) => 2,
            CliError::Io(_) => 1,
        }
    }
    pub fn input(e: impl fmt::Display) -> Self {
        CliError::Input(e.to_string())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(m) | CliError::Io(m) => f.write_str(m),
        }
    }
}

impl From<wisp_sim::trace::TraceError> for CliError {
    fn from(e: wisp_sim::trace::TraceError) -> Self {
        CliError::Input(e.to_string())
    }
}

impl From<wisp_sim::sim::SimError> for CliError {
    fn from(e: wisp_sim::sim::SimError) -> Self {
        CliError::Input(e.to_string())
    }
}

impl From<wisp_report::output::OutputError> for CliError {
    fn from(e: wisp_report::output::OutputError) -> Self {
        match e {
            wisp_report::output::OutputError::Input(m) => CliError::Input(m),
            wisp_report::output::OutputError::Io(m) => CliError::Io(m),
        }
    }
}
