//! Reproductions of the papers' experiments (`wisp reproduce PAPER`): the scenarios, the runs
//! and the numbers behind each paper's figures and checks. Every file of an output folder (the
//! pages, figures and CSV tables) is written by `wisp-report`, whose registry
//! (`wisp_report::PAPERS`) is how the command line, the Python package and the tests find a
//! paper.
//!
//! Each module has the same shape: an `Options` struct (what to run), `run(&Options, on_done)`
//! and `run_or_cancel(&Options, on_done, cancel)`, which stops with the engine's `Cancelled`
//! (`kwikr_calls`: inside its own `Error`) once `cancel` is set; and a result with its
//! `checks()`.
//!
//! * [`gcc_wifi`]: Carlucci et al., ANRW 2016 — GCC over a loaded Wi-Fi link with and without
//!   the packet-grouping pre-filter (Figs. 6, 8, 9, 10).
//! * [`kwikr_calls`]: Das et al., CoNEXT 2017 — the Kwikr call experiments (Figs. 8, 9,
//!   Table 2): `skype-ukf` against `kwikr` on the simulated Wi-Fi network.
//! * [`sprout`]: Winstein et al., NSDI 2013 — Sprout, Sprout-EWMA and the TCP baselines over the
//!   cellular traces (the §1 summary table, the §6.3–6.4 charts, the §6.5 loss table);
//! * [`mehrotra`]: Mehrotra et al. — mobile-broadband characterisation, rate controllers with
//!   fixed and learned congestion thresholds (Tables I–II, Figs. 2–23).
//! * [`wbest`]: Li, Claypool, Kinicki, LCN 2008 — WBest and the probing baselines on the
//!   802.11g testbed of Table I (Tables II–III as figures, with their checks).
//! * [`alfalfa`]: Alfalfa's explicit-state video against the same model encoder
//!   under Sprout without base choice, GCC and CBR, over the cellular traces.
//! * [`kwikr`]: Das et al., CoNEXT 2017 — Ping-Pair's validation on the simulated 802.11
//!   medium (Table 1's confusion matrices, Fig. 5's co-channel interference).

pub mod alfalfa;
pub mod gcc_wifi;
pub mod kwikr;
pub mod kwikr_calls;
pub mod mehrotra;
pub mod rmcat;
pub mod sprout;
pub mod wbest;

use serde::Serialize;
use std::path::{Path, PathBuf};
use wisp_core::stats::quantile_sorted;

/// A file or folder shipped with wisp (a trace, the cellular traces' folder), named relative to
/// the repository: relative to the current folder, else to the source tree wisp was built from
/// (the default inputs of `wisp reproduce` and `wisp.reproduce`).
pub fn shipped(path: &str) -> PathBuf {
    let here = PathBuf::from(path);
    if here.exists() {
        return here;
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    if built.exists() { built } else { here }
}

/// One of a paper's claims (or an issue's acceptance claims), as measured.
///
/// A claim checked once over the whole run leaves `id` and `scope` out (`..Check::default()`);
/// one checked on every trace (sprout) names itself and where it was measured, and
/// `summary.json` (or `results.json`) then holds both keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Check {
    /// A stable name of the claim (the same in every scope).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'static str>,
    /// What it was measured on: a trace, a loss-table direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    pub claim: String,
    pub expected: String,
    pub measured: String,
    pub met: bool,
    /// Why the check cannot fail on its data, if it cannot (the runs compared are identical, the
    /// set it ranges over is empty, it holds by construction): it is then reported "not
    /// applicable" and counted neither met nor not met (`met` is false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
}

impl Check {
    /// The check as one that cannot fail on its data, for `why`.
    pub fn not_applicable(mut self, why: impl Into<String>) -> Self {
        self.met = false;
        self.not_applicable = Some(why.into());
        self
    }

    /// `why` makes the check unable to fail, if it is given.
    pub fn unless(self, why: Option<String>) -> Self {
        match why {
            Some(w) => self.not_applicable(w),
            None => self,
        }
    }

    /// It can fail on its data.
    pub fn applies(&self) -> bool {
        self.not_applicable.is_none()
    }

    /// `ok`, `NO` or `n/a`.
    pub fn status(&self) -> &'static str {
        match (self.applies(), self.met) {
            (false, _) => "n/a",
            (true, true) => "ok",
            (true, false) => "NO",
        }
    }
}

/// How many checks are met of those that apply, and how many do not apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub met: usize,
    pub applicable: usize,
    pub not_applicable: usize,
}

impl Tally {
    pub fn of<'a>(checks: impl IntoIterator<Item = &'a Check>) -> Tally {
        let mut t = Tally::default();
        for c in checks {
            if c.applies() {
                t.applicable += 1;
                t.met += usize::from(c.met);
            } else {
                t.not_applicable += 1;
            }
        }
        t
    }

    /// `" (N not applicable)"`, or nothing when every check applies.
    pub fn na_note(&self) -> String {
        if self.not_applicable == 0 {
            String::new()
        } else {
            format!(" ({} not applicable)", self.not_applicable)
        }
    }
}

/// Mean and (population) standard deviation; `(0, 0)` for no values.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// The 5th, 25th, 50th, 75th and 95th percentiles (nearest rank) of `values`.
pub fn five_percentiles(values: &mut [f64]) -> [f64; 5] {
    values.sort_unstable_by(f64::total_cmp);
    [0.05, 0.25, 0.5, 0.75, 0.95].map(|q| quantile_sorted(values, q).unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_that_cannot_fail_is_counted_apart() {
        let met = Check {
            met: true,
            ..Default::default()
        };
        let not = Check::default();
        let na = met.clone().not_applicable("the two runs are identical");
        assert_eq!(
            (met.status(), not.status(), na.status()),
            ("ok", "NO", "n/a")
        );
        assert!(!na.met && !na.applies());
        let t = Tally::of([&met, &not, &na]);
        assert_eq!((t.met, t.applicable, t.not_applicable), (1, 2, 1));
        assert_eq!(t.na_note(), " (1 not applicable)");
        assert_eq!(Tally::of([&met]).na_note(), "");
        assert_eq!(met.clone().unless(None), met);
        let json = serde_json::to_string(&na).unwrap();
        assert!(
            json.contains(r#""not_applicable":"the two runs are identical""#),
            "{json}"
        );
        assert!(
            !serde_json::to_string(&met)
                .unwrap()
                .contains("not_applicable")
        );
    }

    #[test]
    fn summary_statistics() {
        assert_eq!(mean_std(&[1.0, 3.0]), (2.0, 1.0));
        assert_eq!(mean_std(&[]), (0.0, 0.0));
        let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(five_percentiles(&mut v), [5.0, 25.0, 50.0, 75.0, 95.0]);
    }
}
