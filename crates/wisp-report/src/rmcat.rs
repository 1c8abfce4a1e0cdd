//! Page and tables of `wisp reproduce rmcat`: the RFC 8867 wired cases and the RFC 8869 Wi-Fi
//! and cellular cases for every media scheme. The page opens on the case × scheme matrix (checks met
//! of those asked), then per case a table of RFC 8868's metrics and, per scheme, the RFC's
//! standard plot (each flow's rate against the capacity over time, the queueing delay below),
//! linked as SVG files so the page stays small.

use crate::output::{OutputDir, OutputError};
use crate::reproduce::{Done, Inputs, Outcome, Paper, one_table, write_checks};
use crate::{Csv, claims_table, page, timeseries_svg};
use maud::{Markup, html};
use std::fmt::Write as _;
use wisp_sim::reproduce::Check;
use wisp_sim::reproduce::rmcat::{
    CASES, CaseRun, ECN_LOSS_MAX, ECN_QUEUE_SLACK, JAIN_MIN, Options, QUEUE_P95_MAX_MS, REFERENCE,
    Rmcat, SHARE_MIN, UTIL_MIN, run_or_cancel,
};

/// The paper in the registry ([`crate::PAPERS`]).
pub const PAPER: Paper = Paper {
    name: "rmcat",
    summary: "the IETF RMCAT evaluation: RFC 8867's wired test cases (§5.1–5.8; §6's ECN usage, priority and \
              multiple bottlenecks), RFC 8869's Wi-Fi cases (§4.1, §4.2) on the 802.11 medium and its \
              cellular case on the shipped LTE traces, for gcc, gcc-twcc (the 2016 form), nada, \
              scream, sprout, kwikr, um, adaptive-um and cbr; RFC 8868's metrics (rate against \
              capacity, queueing delay, loss, Jain's index, convergence); summary.json, \
              table.csv",
    inputs: Inputs::None("it runs on RFC 8867's synthetic links and the shipped cellular traces"),
    runs: |r, on_done, cancel| {
        let o = Options::new(r.quick, r.seed, r.jobs);
        let result = run_or_cancel(&o, on_done, cancel).map_err(|e| match e {
            wisp_sim::reproduce::rmcat::Error::Sim(e) => crate::reproduce::RunError::from(e),
            e => crate::reproduce::RunError::Failed(e.to_string()),
        })?;
        Done::boxed(result, r.quick)
    },
};

impl Outcome for Done<Rmcat> {
    fn claims(&self) -> Vec<Check> {
        self.result.checks()
    }

    fn files(&self) -> Result<OutputDir, OutputError> {
        let r = &self.result;
        let mut files = one_table("rmcat", self, &r.checks(), csv(r), (html(r), figures(r)))?;
        files.add("checks.html", checks_page(r));
        Ok(files)
    }

    /// The case × scheme matrix, then the checks.
    fn stdout(&self) -> String {
        let r = &self.result;
        let mut out = String::new();
        let schemes = r.schemes();
        let _ = write!(out, "{:<14}", "case");
        for s in &schemes {
            let _ = write!(out, " {s:>11}");
        }
        out.push('\n');
        for case in &CASES {
            let _ = write!(out, "{:<14}", case.id);
            for s in &schemes {
                let cell = r.get(case.id, s).map_or("–".into(), cell);
                let _ = write!(out, " {cell:>11}");
            }
            out.push('\n');
        }
        out.push('\n');
        write_checks(&mut out, &r.checks());
        out
    }
}

/// `met/asked` of a run, or `reported` when nothing is asked of it.
fn cell(run: &CaseRun) -> String {
    let checks = run.checks();
    if checks.is_empty() {
        "reported".into()
    } else {
        format!("{}/{}", checks.iter().filter(|c| c.met).count(), checks.len())
    }
}

/// One row per run, window and flow: the RFC 8868 metrics.
pub fn csv(r: &Rmcat) -> String {
    let mut out = Csv::new(&[
        "case",
        "scheme",
        "window",
        "from_s",
        "settle_s",
        "to_s",
        "capacity_kbps",
        "flow",
        "flow_kbps",
        "tcp_kbps",
        "tcp_active",
        "utilization",
        "queue_p95_ms",
        "loss",
        "jain",
        "spec",
        "ce_marks",
        "aqm_drops",
        "queue_drops",
    ]);
    for run in &r.runs {
        for w in &run.windows {
            for (f, kbps) in w.window.flows.iter().zip(&w.flow_kbps) {
                out.row(&[
                    &run.case,
                    &run.scheme,
                    &w.window.label,
                    &format!("{:.1}", w.window.from),
                    &format!("{:.1}", w.window.settle),
                    &format!("{:.1}", w.window.to),
                    &format!("{:.1}", w.capacity_kbps),
                    f,
                    &format!("{kbps:.1}"),
                    &format!("{:.1}", w.tcp_kbps),
                    &format!("{:.2}", w.tcp_active),
                    &format!("{:.4}", w.utilization),
                    &w.queue_p95_ms.map_or(String::new(), |q| format!("{q:.1}")),
                    &format!("{:.5}", w.loss),
                    &format!("{:.4}", w.jain),
                    &run.spec,
                    &w.ce_marks,
                    &w.aqm_drops,
                    &w.queue_drops,
                ]);
            }
        }
    }
    out.finish()
}

fn figure_name(run: &CaseRun) -> String {
    format!("{}-{}.svg", run.case, run.scheme.replace([':', ',', '='], "_"))
}

/// Per run: its flows' rates against the capacity, and their queueing delay, over time.
pub fn figures(r: &Rmcat) -> Vec<(String, String)> {
    (r.runs.iter())
        .map(|run| {
            let mut labels: Vec<String> = (run.media.iter())
                .map(|f| format!("{} flow {f}", run.scheme))
                .collect();
            if run.series.flows.len() > run.media.len() {
                let cbr = (CASES.iter()).any(|c| c.id == run.case && c.title.contains("CBR"));
                labels.push(if cbr { "CBR (all flows)" } else { "TCP (all flows)" }.into());
            }
            let title = format!("RMCAT {} — {}", run.case, run.scheme);
            (figure_name(run), timeseries_svg(&title, &run.series, &labels, 200))
        })
        .collect()
}

fn matrix(r: &Rmcat) -> Markup {
    let schemes = r.schemes();
    // Nine schemes and the cases' titles are wider than the page: the titles wrap, and the
    // table scrolls on its own if it is still too wide.
    html! {
        div style="overflow-x:auto" { table.matrix {
            tr { th { "case" } @for s in &schemes { th { code { (s) } } } }
            @for case in &CASES {
                tr {
                    td { a href={ "#case-" (case.id) } { (case.id) } " " (case.title) }
                    @for s in &schemes {
                        td {
                            @if let Some(run) = r.get(case.id, s) {
                                @let checks = run.checks();
                                @let met = checks.iter().filter(|c| c.met).count();
                                @if checks.is_empty() { "reported" }
                                @else if met == checks.len() { (met) "/" (checks.len()) }
                                @else { b { (met) "/" (checks.len()) } }
                            } @else { "–" }
                        }
                    }
                }
            }
        } }
        p.meta { "Checks met of those asked; in bold where some are not met. “reported”: a run with no checks (the reference " code { "cbr" } ", the Not-ECT reference, the cellular traces). “–”: not run (" code { "6-ecn" } " runs the schemes that have an ECN mode, " code { "6-priority" } " those that take a priority)." }
    }
}

fn case_table(r: &Rmcat, id: &str) -> Markup {
    html! {
        table {
            tr {
                th { "scheme" } th { "window" } th { "capacity kbit/s" } th { "media kbit/s" }
                th { "TCP/CBR kbit/s" } th { "utilisation" } th { "queueing p95 ms" } th { "loss" }
                th { "Jain" } th { "CE marks" }
            }
            @for run in r.runs.iter().filter(|run| run.case == id) {
                @for w in &run.windows {
                    tr {
                        td { code { (run.spec) } } td { (w.window.label) }
                        td { (format!("{:.0}", w.capacity_kbps)) }
                        td { (w.flow_kbps.iter().map(|x| format!("{x:.0}")).collect::<Vec<_>>().join(" / ")) }
                        td { (format!("{:.0}", w.tcp_kbps)) }
                        td { (format!("{:.3}", w.utilization)) }
                        td { (w.queue_p95_ms.map_or("–".into(), |q| format!("{q:.0}"))) }
                        td { (format!("{:.2}%", 100.0 * w.loss)) }
                        td { (format!("{:.3}", w.jain)) }
                        td { (w.ce_marks) }
                    }
                }
                @if !run.convergence_s.is_empty() {
                    tr {
                        td { code { (run.scheme) } }
                        td colspan="9" {
                            "convergence (from each later flow's start, or its resume, to its 1-s rate at 80 % of its fair share): "
                            (run.convergence_s.iter().map(|(f, t)| format!("flow {f} {}", t.map_or("never".into(), |t| format!("{t:.1} s")))).collect::<Vec<_>>().join(", "))
                        }
                    }
                }
            }
        }
    }
}

/// The page: the matrix, then per case its table and its figures (linked).
pub fn html(r: &Rmcat) -> String {
    let title = "The RMCAT evaluation (RFC 8867, RFC 8868, RFC 8869)";
    let body = html! {
        p.meta {
            "Every media scheme on RFC 8867's wired test cases (parameters as cisco/ns3-rmcat sets \
             them: 50 ms one-way, a 300-ms drop-tail queue), RFC 8869's Wi-Fi cases on the 802.11 \
             medium (as ns3-rmcat's Wi-Fi suite sets them) and its cellular case on the shipped \
             LTE traces; seed " (r.seed) (if r.quick { ", --quick (every case at half its length)" } else { "" })
            ". RFC 8867 states its expected behaviour in words; the checks read it as: \
             utilisation ≥ " (UTIL_MIN) " over each phase's second half, queueing delay p95 < "
            (QUEUE_P95_MAX_MS) " ms over each phase, Jain's index ≥ " (JAIN_MIN)
            " among competing media flows, and, against TCP, each side at least " (SHARE_MIN)
            " of an even split; an ECN-capable flow behind a marking queue sees CE marks, AQM drops ≤ "
            (100.0 * ECN_LOSS_MAX) " % of its packets and a queueing delay p95 ≤ " (ECN_QUEUE_SLACK)
            " × its Not-ECT run's. " code { (REFERENCE) } " (1 Mbit/s) is a reference, not checked. \
             §6's priority case runs NADA only (the one scheme with a priority); on the Wi-Fi \
             cases where the medium is the bottleneck (§4.2) the utilisation is reported, not \
             checked (docs/rmcat.md says why)."
        }
        h2 { "Checks met, by case and scheme" }
        (matrix(r))
        @for case in &CASES {
            h2 id={ "case-" (case.id) } { (case.id) " " (case.title) " (" (case.section) ")" }
            (case_table(r, case.id))
            p {
                @for run in r.runs.iter().filter(|run| run.case == case.id) {
                    a href={ "figures/" (figure_name(run)) } {
                        img src={ "figures/" (figure_name(run)) } width="450" loading="lazy"
                            alt={ (case.id) " " (run.scheme) };
                    }
                }
            }
        }
        h2 { "Every check" }
        p { a href="checks.html" { "checks.html" } ": all " (r.checks().len())
            " checks, one per row, with what each expects and measured (also in summary.json)." }
    };
    page(title, body)
}

/// Every check, on a page of its own (over a thousand rows: the report links it).
pub fn checks_page(r: &Rmcat) -> String {
    let checks = r.checks();
    let met = checks.iter().filter(|c| c.met).count();
    let body = html! {
        p.meta { (met) " of " (checks.len()) " met; seed " (r.seed)
            (if r.quick { ", --quick" } else { "" }) ". " a href="report.html" { "The report" } "." }
        (claims_table(&checks))
    };
    page("The RMCAT evaluation: every check", body)
}
