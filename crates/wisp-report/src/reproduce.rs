//! The output folder of a paper's reproduction: every file `wisp reproduce PAPER --out DIR`
//! writes (summary.json with the checks, the tables as CSV, report.html, figures/*.svg), built
//! in one place for the command line and for the Python package's `wisp.reproduce(…, out=…)`,
//! so that both write the same bytes.

use crate::output::{OutputDir, OutputError};
use std::path::Path;
use wisp_sim::reproduce::{Check, alfalfa, gcc_wifi, kwikr, kwikr_calls, mehrotra, sprout, wbest};

/// A paper's reproduction, as its `run` in `wisp_sim::reproduce` returned it.
// One per reproduction, moved a couple of times: boxing its largest variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Reproduced {
    Sprout(sprout::Reproduction),
    GccWifi(gcc_wifi::GccWifi),
    Mehrotra(mehrotra::Mehrotra),
    Wbest(wbest::Reproduction),
    /// Ping-Pair's validation (Table 1, Fig. 5), then the calls (Figs. 8, 9, Table 2).
    Kwikr(kwikr::Reproduction, kwikr_calls::KwikrCalls),
    Alfalfa(alfalfa::Reproduction),
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
}

impl Reproduced {
    /// The paper, as the command line names it.
    pub fn paper(&self) -> &'static str {
        match self {
            Reproduced::Sprout(_) => "sprout",
            Reproduced::GccWifi(_) => "gcc-wifi",
            Reproduced::Mehrotra(_) => "mehrotra",
            Reproduced::Wbest(_) => "wbest",
            Reproduced::Kwikr(..) => "kwikr",
            Reproduced::Alfalfa(_) => "alfalfa",
        }
    }

    /// Every check, in the order `wisp reproduce` prints them (mehrotra's calibration checks
    /// first).
    pub fn checks(&self) -> Vec<(CheckKind, Check)> {
        let claims = |v: Vec<Check>| v.into_iter().map(|c| (CheckKind::Claim, c));
        match self {
            Reproduced::Sprout(r) => claims(r.checks()).collect(),
            Reproduced::GccWifi(r) => claims(r.checks()).collect(),
            Reproduced::Mehrotra(r) => r
                .calibration_checks()
                .into_iter()
                .map(|c| (CheckKind::Calibration, c))
                .chain(claims(r.checks()))
                .collect(),
            Reproduced::Wbest(r) => claims(r.checks()).collect(),
            Reproduced::Kwikr(r, calls) => claims(r.checks(calls.summary().checks)).collect(),
            Reproduced::Alfalfa(r) => claims(r.checks()).collect(),
        }
    }

    /// The files of the output folder (`quick`: whether the run was `--quick`, which the
    /// summary.json of some papers records).
    pub fn files(&self, quick: bool) -> Result<OutputDir, OutputError> {
        let figures = |files: &mut OutputDir, figs: Vec<(String, String)>| {
            for (name, svg) in figs {
                files.add(Path::new("figures").join(name), svg);
            }
        };
        let files = match self {
            Reproduced::Wbest(result) => {
                let checks = result.checks();
                let mut files = with_summary("wbest", Some(quick), result, &checks, [])?;
                files.add("table.csv", result.csv());
                files.add("report.html", crate::wbest::html(result));
                figures(&mut files, crate::wbest::figures(result));
                files
            }
            Reproduced::GccWifi(result) => {
                let mut files = OutputDir::default();
                files.add("report.html", crate::gcc_wifi::html(result));
                figures(&mut files, crate::gcc_wifi::figures(result));
                files.add("dm_pdf.csv", crate::gcc_wifi::dm_pdf_csv(result));
                files.add("timeseries.csv", crate::gcc_wifi::timeseries_csv(result));
                files.add("summary.csv", crate::gcc_wifi::summary_csv(result));
                files.add("summary.json", to_json(&result.summary(quick))?);
                files
            }
            Reproduced::Mehrotra(result) => {
                let checks = result.checks();
                let calibration = result.calibration_checks();
                // Its summary.json has no `quick`.
                let mut files = with_summary(
                    "mehrotra",
                    None,
                    result,
                    &checks,
                    [("calibration", serde_json::json!(&calibration))],
                )?;
                files.add("report.html", crate::mehrotra::html(result));
                figures(&mut files, crate::mehrotra::figures(result));
                for s in &result.sweeps {
                    files.add(format!("sweep-{}.csv", s.link), crate::sweep::csv(s));
                }
                files.add("tables.csv", crate::mehrotra::table_csv(result));
                files.add(
                    "delta_hat_sweep.csv",
                    crate::mehrotra::delta_sweep_csv(result),
                );
                files.add("sensitivity.csv", crate::mehrotra::sensitivity_csv(result));
                files.add("timeseries.csv", crate::mehrotra::timeseries_csv(result));
                files
            }
            Reproduced::Kwikr(result, calls) => {
                let calls_summary = calls.summary();
                let checks = result.checks(calls_summary.checks.clone());
                let mut files = with_summary(
                    "kwikr",
                    Some(quick),
                    result,
                    &checks,
                    [("calls", serde_json::json!(&calls_summary))],
                )?;
                files.add("pairs.csv", result.pairs_csv());
                for (name, text) in calls.files() {
                    files.add(name, text);
                }
                files.add("report.html", result.html(&checks));
                if let Some(f) = &result.fig5 {
                    files.add(Path::new("figures").join("fig5.svg"), kwikr::fig5_svg(f));
                }
                files
            }
            Reproduced::Alfalfa(result) => {
                let checks = result.checks();
                let mut files = with_summary("alfalfa", Some(quick), result, &checks, [])?;
                files.add("table.csv", result.csv());
                files.add("report.html", crate::alfalfa::html(result));
                figures(&mut files, crate::alfalfa::figures(result));
                files
            }
            Reproduced::Sprout(result) => {
                let mut files = OutputDir::default();
                files.add("report.html", crate::sprout::html(result));
                figures(&mut files, crate::sprout::figures(result));
                files.add("results.csv", crate::sprout::results_csv(result));
                files.add("summary.csv", crate::sprout::summary_csv(result));
                files.add("loss.csv", crate::sprout::loss_csv(result));
                files.add("results.json", to_json(&result.results())?);
                files
            }
        };
        Ok(files)
    }

    /// Writes [`Reproduced::files`] into `dir`, all of them or none ([`OutputDir::commit`]).
    pub fn write_outputs(&self, quick: bool, dir: &Path) -> Result<(), OutputError> {
        self.files(quick)?.commit(dir)
    }
}

fn to_json(value: &impl serde::Serialize) -> Result<Vec<u8>, OutputError> {
    serde_json::to_vec_pretty(value)
        .map_err(|e| OutputError::Io(format!("cannot serialise results: {e}")))
}

/// The output folder of a reproduction, holding `summary.json`: the paper, `--quick` (where
/// given), the result, its checks and the `extra` fields.
fn with_summary<const N: usize>(
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
