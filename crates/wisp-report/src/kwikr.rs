//! The files of `wisp reproduce kwikr`: Ping-Pair's validation (Table 1's confusion matrices,
//! Fig. 5) and the call experiments (Figs. 8, 9, Table 2) of Das et al., CoNEXT 2017 — the
//! tables as CSV, the page, and Fig. 5 as an SVG line chart.
//!
//! Fig. 5 keeps the plain SVG it was first drawn as (two polylines over a shaded span), so that
//! its bytes, and those of the page that inlines it, stay what earlier versions wrote.

use crate::reproduce::{Done, Inputs, Outcome, Paper, RunError, add_report};
use crate::{Csv, output::OutputDir, output::OutputError};
use maud::{PreEscaped, html};
use std::fmt::Write as _;
use wisp_sim::reproduce::kwikr::{self, Fig5, MAX_FLOWS, Pair, Reproduction, median, ms_opt};
use wisp_sim::reproduce::kwikr_calls::{self, BASELINE, KWIKR, KwikrCalls};
use wisp_sim::reproduce::{Check, kwikr_calls::Error as CallsError};

/// The paper in the registry ([`crate::PAPERS`]): Ping-Pair's validation (Table 1, Fig. 5),
/// then the calls (Figs. 8, 9, Table 2).
pub const PAPER: Paper = Paper {
    name: "kwikr",
    summary: "Das et al., CoNEXT 2017: Ping-Pair's validation on the simulated 802.11 medium \
              (Table 1's confusion matrices, 802.11n 2.4 GHz and 802.11ac 5 GHz; Fig. 5's \
              co-channel interference); summary.json, report.html, pairs.csv",
    inputs: Inputs::None("it runs its scenarios on the simulated 802.11 medium"),
    runs: |r, on_done, cancel| {
        let (quick, seed, jobs) = (r.quick, r.seed, r.jobs);
        let pairs = kwikr::run_or_cancel(&kwikr::Options { quick, seed, jobs }, on_done, cancel)?;
        let o = kwikr_calls::Options { quick, seed, jobs };
        let calls = kwikr_calls::run_or_cancel(&o, on_done, cancel).map_err(|e| match e {
            CallsError::Sim(e) => RunError::from(e),
            e => RunError::Failed(e.to_string()),
        })?;
        Done::boxed((pairs, calls), quick)
    },
};

impl Outcome for Done<(Reproduction, KwikrCalls)> {
    fn claims(&self) -> Vec<Check> {
        let (r, calls) = &self.result;
        r.checks(calls.summary().checks)
    }

    fn files(&self) -> Result<OutputDir, OutputError> {
        let (result, calls) = &self.result;
        let calls_summary = calls.summary();
        let checks = result.checks(calls_summary.checks.clone());
        let mut files = crate::reproduce::with_summary(
            "kwikr",
            Some(self.quick),
            result,
            &checks,
            [("calls", serde_json::json!(&calls_summary))],
        )?;
        files.add("pairs.csv", pairs_csv(result));
        files.add("calls.csv", calls_csv(calls));
        files.add("series.csv", series_csv(calls));
        let fig5 = result.fig5.as_ref().map(|f| ("fig5.svg".to_string(), fig5_svg(f)));
        add_report(&mut files, html(result, &checks), fig5.into_iter().collect());
        Ok(files)
    }

    fn stdout(&self) -> String {
        let (result, calls) = &self.result;
        let mut out = String::new();
        for s in result.settings.iter().chain(&result.sensitivity) {
            let c = &s.confusion;
            let _ = writeln!(
                out,
                "{}: truth non-persistent {} (classified {} / {}), persistent {} ({} / {}), {} not classified",
                s.name,
                c.nn + c.np,
                c.nn,
                c.np,
                c.pn + c.pp,
                c.pn,
                c.pp,
                c.unclassified
            );
        }
        crate::reproduce::write_checks(&mut out, &result.checks(calls.summary().checks));
        out
    }
}

/// `pairs.csv`: one line per pair gathered for Table 1 (the sensitivity run's too): `in_steps`,
/// among its step's first 30 (§8.1's, T_q's); `in_table1`, in the sample at the paper's class
/// sizes (the confusion matrix's).
pub fn pairs_csv(r: &Reproduction) -> String {
    let mut out = Csv::new(&[
        "setting",
        "flows",
        "sent_s",
        "t_q_ms",
        "valid",
        "truth_queueing_ms",
        "nonempty",
        "samples",
        "truth_persistent",
        "measured_persistent",
        "in_steps",
        "in_table1",
    ]);
    let o = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.3}"));
    for st in r.settings.iter().chain(&r.sensitivity) {
        for p in &st.pairs {
            out.row(&[
                &st.name,
                &p.flows,
                &format!("{:.3}", p.sent_s),
                &o(p.t_q_ms),
                &p.valid,
                &o(p.truth_queueing_ms),
                &format!("{:.3}", p.nonempty),
                &p.samples,
                &p.truth_persistent,
                &p.measured_persistent
                    .map_or(String::new(), |b| b.to_string()),
                &p.in_steps,
                &p.in_table1,
            ]);
        }
    }
    out.finish()
}

/// `calls.csv`: one line per call of Figs. 8, 9 and Table 2.
pub fn calls_csv(calls: &KwikrCalls) -> String {
    let mut out = Csv::new(&[
        "experiment",
        "scheme",
        "neighbour",
        "flow",
        "seed",
        "window_from_s",
        "window_to_s",
        "send_kbps",
        "throughput_kbps",
        "loss_rate",
        "owd_p50_ms",
        "owd_p95_ms",
        "whole_send_kbps",
        "whole_loss_rate",
    ]);
    for c in &calls.calls {
        let w = &c.window;
        out.row(&[
            &c.experiment,
            &c.scheme,
            &c.neighbour.as_deref().unwrap_or(""),
            &c.flow,
            &c.seed,
            &w.from_s,
            &w.to_s,
            &format!("{:.1}", w.send_kbps),
            &format!("{:.1}", w.throughput_kbps),
            &format!("{:.5}", w.loss_rate),
            &format!("{:.2}", w.owd_ms[2]),
            &format!("{:.2}", w.owd_ms[4]),
            &format!("{:.1}", c.whole.send_kbps),
            &format!("{:.5}", c.whole.loss_rate),
        ]);
    }
    out.finish()
}

/// `series.csv`: the mean sending rate per second of each scheme in Figs. 8 and 9, and the
/// first run's (the paper's "representative execution"); a field is empty past a series' end.
pub fn series_csv(calls: &KwikrCalls) -> String {
    let mut cols = vec![];
    let mut head = vec!["t_s".to_string()];
    for e in ["fig8", "fig9"] {
        for s in [BASELINE, KWIKR] {
            head.push(format!("{e}_{s}_mean_kbps"));
            cols.push(calls.mean_series(e, s));
            head.push(format!("{e}_{s}_first_kbps"));
            cols.push(
                calls
                    .calls_of(e, s, None)
                    .next()
                    .map(|c| c.rate_series.clone())
                    .unwrap_or_default(),
            );
        }
    }
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut out = Csv::new(&head);
    let n = cols.iter().map(Vec::len).max().unwrap_or(0);
    for i in 0..n {
        let fields: Vec<String> = std::iter::once(i.to_string())
            .chain(
                cols.iter()
                    .map(|c| c.get(i).map_or(String::new(), |v| format!("{v:.1}"))),
            )
            .collect();
        let fields: Vec<&dyn std::fmt::Display> =
            fields.iter().map(|f| f as &dyn std::fmt::Display).collect();
        out.row(&fields);
    }
    out.finish()
}

const STYLE: &str = "body{font-family:sans-serif;max-width:60em;margin:2em auto}table{border-collapse:collapse}\
td,th{border:1px solid #999;padding:0.2em 0.6em;text-align:right}.no{color:#b00}.ok{color:#070}";

/// The HTML report: Table 1's confusion matrices, Fig. 5 as an SVG, the checks.
pub fn html(r: &Reproduction, checks: &[Check]) -> String {
    let page = html! {
        (PreEscaped("<!doctype html>"))
        html {
            head {
                meta charset="utf-8";
                title { "wisp reproduce kwikr" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { "Ping-Pair and Kwikr (CoNEXT 2017): the validation on the simulated medium" }
                p {
                    "seed " (r.seed) @if r.quick { ", --quick" }
                    "; the scenarios are " code { "scenarios/kwikr-*.toml" } "."
                }
                h2 { "Table 1: congestion detection" }
                @for (k, s) in r.settings.iter().chain(&r.sensitivity).enumerate() {
                    @if k == r.settings.len() {
                        h2 { "Sensitivity (not a claim): each TCP server limited to 12 Mbit/s" }
                    }
                    (setting_html(s))
                }
                @if let Some(f) = &r.fig5 {
                    h2 { "Fig. 5: co-channel interference" }
                    (PreEscaped(fig5_svg(f)))
                    p {
                        "Per-second means: the UDP flow's one-way delay (minus its minimum, blue) \
                         and Ping-Pair's T_q (red); the shaded span is the neighbouring AP's \
                         congestion."
                    }
                }
                h2 { "Checks" }
                table {
                    tr { th { "claim" } th { "expected" } th { "measured" } th {} }
                    @for c in checks {
                        tr {
                            td style="text-align:left" { (c.claim) }
                            td { (c.expected) }
                            td { (c.measured) }
                            td class=(if c.met { "ok" } else { "no" }) {
                                @if let Some(why) = &c.not_applicable {
                                    "not applicable: " (why)
                                } @else {
                                    (if c.met { "met" } else { "not met" })
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    page.into_string() + "\n"
}

/// One setting of Table 1: its confusion matrix, then its pairs by the number of TCP flows.
fn setting_html(s: &kwikr::Setting) -> maud::Markup {
    let c = &s.confusion;
    let row = |a: u32, b: u32| {
        let n = a + b;
        let p = |x: u32| {
            if n == 0 {
                "–".to_string()
            } else {
                format!("{x} ({:.1}%)", 100.0 * f64::from(x) / f64::from(n))
            }
        };
        html! { td { (n) } td { (p(a)) } td { (p(b)) } }
    };
    html! {
        h3 { (s.name) }
        p { code { (s.spec) } }
        table {
            tr { th { "ground truth" } th { "pairs" } th { "non-persistent" } th { "persistent" } }
            tr { th { "non-persistent" } (row(c.nn, c.np)) }
            tr { th { "persistent" } (row(c.pn, c.pp)) }
        }
        p {
            "The sample at Table 1's class sizes (the idle step's first non-persistent pairs, \
             ⌈persistent/7⌉ persistent ones from each loaded step); "
            (c.unclassified) " of its pairs not classified (a reply lost). Over §8.1's 30 pairs \
             per step: median T_q "
            (ms_opt(s.t_q_median_ms)) ", median ground truth " (ms_opt(s.truth_median_ms))
            ", median |error| " (ms_opt(s.abs_error_median_ms)) " over " (s.valid_pairs)
            " valid pairs."
        }
        table {
            tr {
                th { "TCP flows" } th { "pairs (in the sample)" } th { "truth persistent" }
                th { "Ping-Pair persistent" } th { "median T_q" }
            }
            @for n in 0..=MAX_FLOWS {
                @let ps: Vec<&Pair> = s.pairs.iter().filter(|p| p.flows == n && p.in_table1).collect();
                tr {
                    td { (n) }
                    td { (ps.len()) }
                    td { (ps.iter().filter(|p| p.truth_persistent).count()) }
                    td { (ps.iter().filter(|p| p.measured_persistent == Some(true)).count()) }
                    td { (ms_opt(median(ps.iter().filter_map(|p| p.t_q_ms).collect()))) }
                }
            }
        }
    }
}

/// Fig. 5 as an SVG line chart: the flow's one-way delay and Ping-Pair's T_q per second, the
/// neighbour's congestion shaded.
pub fn fig5_svg(f: &Fig5) -> String {
    let (w, hgt, pad) = (720.0, 300.0, 40.0);
    let t_max = f
        .one_way_delay
        .iter()
        .chain(&f.pingpair)
        .map(|p| p.0 + 1.0)
        .fold(1.0, f64::max);
    let y_max = f
        .one_way_delay
        .iter()
        .chain(&f.pingpair)
        .map(|p| p.1)
        .fold(1.0, f64::max)
        * 1.1;
    let x = |t: f64| pad + (w - 2.0 * pad) * t / t_max;
    let y = |v: f64| hgt - pad - (hgt - 2.0 * pad) * v / y_max;
    let line = |v: &[(f64, f64)], colour: &str| {
        let pts: Vec<String> = v
            .iter()
            .map(|&(t, d)| format!("{:.1},{:.1}", x(t + 0.5), y(d)))
            .collect();
        format!(
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>",
            pts.join(" ")
        )
    };
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{hgt}\" viewBox=\"0 0 {w} {hgt}\">"
    );
    s += &format!(
        "<rect x=\"{:.1}\" y=\"{pad}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#ddd\"/>",
        x(f.congested_s.0),
        x(f.congested_s.1) - x(f.congested_s.0),
        hgt - 2.0 * pad
    );
    s += &format!(
        "<line x1=\"{pad}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"black\"/><line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{0}\" stroke=\"black\"/>",
        hgt - pad,
        w - pad
    );
    s += &format!(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">time (s), 0–{t_max:.0}</text>",
        w / 2.0,
        hgt - 8.0
    );
    s += &format!(
        "<text x=\"8\" y=\"{}\" font-size=\"12\">ms (0–{y_max:.1})</text>",
        pad - 10.0
    );
    s += &line(&f.one_way_delay, "#1f77b4");
    s += &line(&f.pingpair, "#d62728");
    s += "</svg>";
    s
}
