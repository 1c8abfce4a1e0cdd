//! Figures, tables and page of `wisp reproduce sprout` (NSDI'13 §1 table, §6.3–6.4 charts, §6.5
//! loss table).

use crate::output::{OutputDir, OutputError};
use crate::reproduce::{Request, RunError, 
    Done, Inputs, Outcome, Paper, report_folder, write_checks,
};
use std::fmt::Write as _;
use crate::{Csv, ScatterPoint, color, inline_svg, page, scatter_svg, swatch};
use maud::{Markup, html};
use wisp_sim::reproduce::sprout::{
    Check, Direction, LOSS_NETWORK, LOSS_RATES, PAPER_LOSS, Reproduction, SummaryRow, TraceRuns,
    Options, entry_index, fmt_delay, run_or_cancel,
};

/// The throughput/self-inflicted-delay chart of one trace (the paper's Figure on page 10): one
/// point per scheme, the delay axis logarithmic and reversed, the link's capacity (the ideal
/// sender's throughput; its self-inflicted delay is zero by definition) dashed. Schemes with the
/// same figures share a point and a label.
pub fn scatter(t: &TraceRuns) -> String {
    let mut points: Vec<ScatterPoint> = vec![];
    for r in t.real() {
        let Some(d) = r.metrics().self_inflicted_delay_ms else {
            continue;
        };
        let tput = r.throughput_kbps();
        match points
            .iter_mut()
            .find(|p| p.delay_ms == d && p.throughput_kbps == tput)
        {
            Some(p) => {
                p.label.push_str(" = ");
                p.label.push_str(r.entry);
            }
            None => points.push(ScatterPoint {
                label: r.entry.to_string(),
                throughput_kbps: tput,
                delay_ms: d,
                color: entry_index(r.entry),
            }),
        }
    }
    scatter_svg(&chart_title(t), &points, Some(t.capacity_kbps))
}

fn chart_title(t: &TraceRuns) -> String {
    format!(
        "{} — {} {}",
        t.trace,
        t.network
            .title
            .split(" (")
            .next()
            .unwrap_or(t.network.title),
        t.direction.word()
    )
}

/// The SVG figures: `(file name, svg)`, one scatter per trace.
pub fn figures(r: &Reproduction) -> Vec<(String, String)> {
    r.traces
        .iter()
        .map(|t| (format!("scatter-{}.svg", t.trace), scatter(t)))
        .collect()
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(String::new, |x| format!("{x:.digits$}"))
}

/// Every run as CSV, one row per run (the loss runs with their loss probability):
/// `network,direction,trace,reverse,entry,scheme,queue,loss,throughput_kbps,…`.
pub fn results_csv(r: &Reproduction) -> String {
    let mut out = Csv::new(&[
        "network",
        "direction",
        "trace",
        "reverse",
        "entry",
        "scheme",
        "queue",
        "loss",
        "throughput_kbps",
        "capacity_kbps",
        "utilization",
        "self_inflicted_delay_ms",
        "e2e_delay_p95_ms",
        "ideal_e2e_delay_p95_ms",
        "delay_p50_ms",
        "delay_p95_ms",
        "loss_rate",
        "packets_sent",
        "packets_delivered",
    ]);
    let rows = r
        .traces
        .iter()
        .flat_map(|t| {
            t.runs
                .iter()
                .map(move |run| (t.network.name, t.direction, run.entry, 0.0, &run.report))
        })
        .chain(
            r.loss
                .iter()
                .map(|l| (LOSS_NETWORK, l.direction, "sprout", l.loss, &l.report)),
        );
    for (network, dir, entry, loss, rep) in rows {
        let f = &rep.flows[0];
        out.row(&[
            &network,
            &dir.word(),
            &rep.trace,
            &rep.reverse,
            &entry,
            &rep.scheme,
            &rep.queue,
            &loss,
            &format!("{:.1}", f.throughput_kbps),
            &format!("{:.1}", f.capacity_kbps),
            &format!("{:.4}", f.utilization),
            &opt(f.self_inflicted_delay_ms, 1),
            &opt(f.e2e_delay_p95_ms, 1),
            &opt(f.ideal_e2e_delay_p95_ms, 1),
            &opt(f.delay_p50_ms, 1),
            &opt(f.delay_p95_ms, 1),
            &format!("{:.5}", f.loss_rate),
            &f.packets_sent,
            &f.packets_delivered,
        ]);
    }
    out.finish()
}

/// The §1 table as CSV: `scheme,traces,speedup,delay_reduction,mean_delay_ms,sprout_mean_delay_ms,
/// paper_speedup,paper_delay_reduction,paper_mean_delay_s`.
pub fn summary_csv(r: &Reproduction) -> String {
    let mut out = Csv::new(&[
        "scheme",
        "traces",
        "speedup",
        "delay_reduction",
        "mean_delay_ms",
        "sprout_mean_delay_ms",
        "paper_speedup",
        "paper_delay_reduction",
        "paper_mean_delay_s",
    ]);
    for s in r.summary() {
        let p = s.paper;
        out.row(&[
            &s.entry,
            &s.traces,
            &format!("{:.3}", s.speedup),
            &format!("{:.3}", s.delay_reduction),
            &format!("{:.1}", s.mean_delay_ms),
            &format!("{:.1}", s.sprout_mean_delay_ms),
            &opt(p.map(|p| p.speedup), 1),
            &opt(p.map(|p| p.delay_reduction), 1),
            &opt(p.map(|p| p.mean_delay_s), 2),
        ]);
    }
    out.finish()
}

fn paper_loss(dir: Direction, loss: f64) -> Option<(f64, f64)> {
    PAPER_LOSS
        .iter()
        .find(|p| p.direction == dir && p.loss == loss)
        .map(|p| (p.kbps, p.delay_ms))
}

/// The §6.5 table as CSV: `direction,loss,throughput_kbps,utilization,self_inflicted_delay_ms,
/// loss_rate,paper_kbps,paper_delay_ms`.
pub fn loss_csv(r: &Reproduction) -> String {
    let mut out = Csv::new(&[
        "direction",
        "loss",
        "throughput_kbps",
        "utilization",
        "self_inflicted_delay_ms",
        "loss_rate",
        "paper_kbps",
        "paper_delay_ms",
    ]);
    for dir in Direction::BOTH {
        for p in LOSS_RATES {
            let Some(f) = r.loss_metrics(dir, p) else {
                continue;
            };
            let paper = paper_loss(dir, p);
            out.row(&[
                &dir.word(),
                &p,
                &format!("{:.1}", f.throughput_kbps),
                &format!("{:.4}", f.utilization),
                &opt(f.self_inflicted_delay_ms, 1),
                &format!("{:.5}", f.loss_rate),
                &opt(paper.map(|p| p.0), 0),
                &opt(paper.map(|p| p.1), 0),
            ]);
        }
    }
    out.finish()
}

fn times(x: f64) -> String {
    if !x.is_finite() {
        "–".into()
    } else if x >= 10.0 {
        format!("{x:.0}×")
    } else {
        format!("{x:.2}×")
    }
}

fn sw(entry: &str) -> Markup {
    swatch(color(entry_index(entry)))
}

fn claims(checks: &[Check]) -> Markup {
    let t = wisp_sim::reproduce::Tally::of(checks);
    html! {
        p {
            (t.met) " of " (t.applicable) " checks met" (t.na_note()) ". Each claim is checked \
             on every trace on its own; the paper's wording is quoted with its section."
        }
        (crate::claims_table(checks))
    }
}

fn summary_table(rows: &[SummaryRow]) -> Markup {
    html! {
        table {
            tr {
                th { "scheme" } th { "traces" } th { "avg. speedup" }
                th { "delay reduction (scheme's avg. delay)" }
                th { "paper: speedup" } th { "paper: delay reduction" }
            }
            @for s in rows {
                @let (ps, pd) = match s.paper {
                    Some(p) => (
                        if p.speedup == 1.0 {
                            "Same".to_string()
                        } else {
                            format!("{:.1}×", p.speedup)
                        },
                        format!("{}× ({} s)", p.delay_reduction, p.mean_delay_s),
                    ),
                    None => ("–".into(), "–".into()),
                };
                tr {
                    td { (sw(s.entry)) (s.entry) }
                    td { (s.traces) }
                    td { (times(s.speedup)) }
                    td { (times(s.delay_reduction)) " (" (fmt_delay(s.mean_delay_ms)) ")" }
                    td { (ps) }
                    td { (pd) }
                }
            }
        }
        @if let Some(s) = rows.first() {
            p.meta {
                "Sprout's mean self-inflicted delay over the same traces: "
                (fmt_delay(s.sprout_mean_delay_ms)) ". (The paper's: about 0.32 s.)"
            }
        }
    }
}

fn loss_table(r: &Reproduction) -> Markup {
    html! {
        table {
            tr {
                th { "direction, loss" } th { "throughput kbit/s" } th { "utilization" }
                th { "self-inflicted ms" } th { "measured loss" } th { "paper kbit/s" }
                th { "paper ms" }
            }
            @for dir in Direction::BOTH {
                @for p in LOSS_RATES {
                    @if let Some(f) = r.loss_metrics(dir, p) {
                        @let paper = paper_loss(dir, p);
                        tr {
                            td { (dir.word()) " " (format!("{:.0}", 100.0 * p)) " %" }
                            td { (format!("{:.0}", f.throughput_kbps)) }
                            td { (format!("{:.3}", f.utilization)) }
                            td { (opt(f.self_inflicted_delay_ms, 0)) }
                            td { (format!("{:.2}", 100.0 * f.loss_rate)) " %" }
                            td { (opt(paper.map(|p| p.0), 0)) }
                            td { (opt(paper.map(|p| p.1), 0)) }
                        }
                    }
                }
            }
        }
    }
}

fn trace_table(t: &TraceRuns) -> Markup {
    html! {
        table {
            tr {
                th { "scheme" } th { "throughput kbit/s" } th { "utilization" }
                th { "self-inflicted ms" } th { "95% e2e ms" } th { "delay p50 ms" }
                th { "delay p95 ms" } th { "loss" }
            }
            @for run in &t.runs {
                @let f = run.metrics();
                tr {
                    td { (sw(run.entry)) (run.entry) }
                    td { (format!("{:.0}", f.throughput_kbps)) }
                    td { (format!("{:.3}", f.utilization)) }
                    td { (opt(f.self_inflicted_delay_ms, 0)) }
                    td { (opt(f.e2e_delay_p95_ms, 0)) }
                    td { (opt(f.delay_p50_ms, 0)) }
                    td { (opt(f.delay_p95_ms, 0)) }
                    td { (format!("{:.4}", f.loss_rate)) }
                }
            }
        }
    }
}

/// The page: setup, the claims checked, the §1 summary, the §6.5 loss table, then per trace the
/// scatter (inlined) and a table.
pub fn html(r: &Reproduction) -> String {
    let title = "Sprout over cellular links (NSDI'13)";
    let traces: Vec<&str> = r.traces.iter().map(|t| t.trace.as_str()).collect();
    let summary = r.summary();
    let n = summary.first().map_or(0, |s| s.traces);
    let body = html! {
        p.meta {
            "Winstein, Sivaraman, Balakrishnan, “Stochastic Forecasts Achieve High Throughput and \
             Low Delay over Cellular Networks”, NSDI 2013 (the Alfalfa/Sprout paper). Each scheme \
             alone over each trace for one period of it, with the paired trace carrying the \
             feedback (" code { ".down" } " data with " code { ".up" } " feedback and back); "
            (format!("{:.0}", r.delay_ms))
            " ms one-way propagation delay each way before the bottleneck; infinite queues (CoDel \
             with RFC 8289's 5 ms / 100 ms on the data path for " code { "cubic-codel" } "); no \
             loss; seed " (r.seed)
            @if r.quick { "; --quick: the two 140-s LTE pairs only" }
            ". Traces: " (traces.join(", ")) "."
        }
        h2 { "The paper's claims, measured" }
        (claims(&r.checks()))
        h2 { "Summary (§1 table)" }
        p {
            "Sprout against each scheme over the " (n) " traces of the paper's networks (both \
             directions; TMobile-LTE-short is not one of them). " b { "Avg. speedup" } " = the \
             mean over the traces of Sprout's throughput ÷ the scheme's (above 1: Sprout is \
             faster). " b { "Delay reduction" } " = the scheme's mean self-inflicted delay ÷ \
             Sprout's mean (a ratio of means, as the paper's table implies: each of its rows gives \
             the scheme's mean delay, and delay ÷ reduction is the same 0.32 s in every row)."
        }
        (summary_table(&summary))
        h2 { "Loss resilience (§6.5 table)" }
        p {
            "Sprout on " (LOSS_NETWORK) " with Bernoulli loss on both the data and the feedback \
             path. The paper's figures are from its 17-minute Verizon LTE traces."
        }
        (loss_table(r))
        @for t in &r.traces {
            h2 id=(t.trace) { (chart_title(t)) }
            p.meta {
                (t.network.title) "; feedback over " (t.reverse) "; capacity "
                (format!("{:.0}", t.capacity_kbps)) " kbit/s over "
                (format!("{:.0}", t.duration_s)) " s."
            }
            figure.scatter { (inline_svg(&scatter(t))) }
            (trace_table(t))
        }
        h2 { "Notes" }
        ul {
            li {
                "The self-inflicted delay is the 95th percentile over every millisecond of the age \
                 of the most recently sent packet delivered so far, minus the same for the ideal \
                 sender (§6.2). The ideal sender is not drawn: its throughput is the dashed \
                 capacity line, its self-inflicted delay zero."
            }
            li {
                "Skype, Hangout and Facetime, on the paper's charts, are applications and are not \
                 simulated."
            }
            li {
                "On an infinite queue no packet is ever lost, so the loss-based TCPs grow their \
                 windows for the whole run and the queue with them: CUBIC's delay grows with the \
                 trace's length (the paper reports over 25 s on its 17-minute traces). No receive \
                 window bounds them here (the TCP schemes' " code { "rwnd-kb" } " parameter, off \
                 by default); a real host's would."
            }
            li {
                "Verizon-LTE-short is a 140-s excerpt; the paper's Verizon LTE drives are not \
                 public. The other paper networks are the published 13–18-minute drives."
            }
            @if coincide(r, "newreno", "compound") {
                li {
                    "NewReno and Compound TCP give the same figures on every trace: without a loss \
                     neither leaves slow start, and Compound's delay window acts only in \
                     congestion avoidance."
                }
            }
        }
    };
    page(title, body)
}

/// Whether entries `a` and `b` have the same metrics on every trace.
fn coincide(r: &Reproduction, a: &str, b: &str) -> bool {
    !r.traces.is_empty()
        && r.traces.iter().all(|t| match (t.run(a), t.run(b)) {
            (Some(x), Some(y)) => {
                let (mut fx, mut fy) = (x.metrics().clone(), y.metrics().clone());
                fx.scheme.clear();
                fy.scheme.clear();
                fx == fy
            }
            _ => false,
        })
}


/// The folder of the cellular trace pairs shipped with wisp (sprout's and alfalfa's default).
pub const TRACES: &str = "traces/cellular";

/// The paper in the registry ([`crate::PAPERS`]).
pub const PAPER: Paper = Paper {
    name: "sprout",
    summary: "Winstein et al., NSDI 2013: Sprout, Sprout-EWMA and the TCP baselines over the \
              cellular traces (the §1 summary table, the §6.3–6.4 throughput/delay charts, the \
              §6.5 loss table)",
    inputs: Inputs::TraceFolder(TRACES),
    runs: |r, on_done, cancel| Done::boxed(run_or_cancel(&options(r)?, on_done, cancel)?, r.quick),
};

/// The options of a run over the cellular trace pairs (Sprout's and Alfalfa's).
pub(crate) fn options(r: &Request) -> Result<Options, RunError> {
    let pairs = r.load_pairs(TRACES)?;
    let (quick, seed, jobs) = (r.quick, r.seed, r.jobs);
    Ok(Options { pairs, quick, seed, jobs })
}

impl Outcome for Done<Reproduction> {
    fn claims(&self) -> Vec<Check> {
        self.result.checks()
    }

    fn files(&self) -> Result<OutputDir, OutputError> {
        let r = &self.result;
        let tables = [
            ("results.csv", results_csv(r)),
            ("summary.csv", summary_csv(r)),
            ("loss.csv", loss_csv(r)),
        ];
        report_folder((html(r), figures(r)), tables, ("results.json", &r.results()))
    }

    /// The per-trace tables, the summary, the loss table and the claims.
    fn stdout(&self) -> String {
        let (r, results) = (&self.result, &self.result.results());
        let mut out = String::new();
        let delay = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |d| format!("{d:.0}"));
        let _ = writeln!(
            out,
            "{:27} {:12} {:>10} {:>6} {:>9}",
            "trace", "scheme", "kbit/s", "util", "self ms"
        );
        for t in &r.traces {
            for run in &t.runs {
                let f = run.metrics();
                let _ = writeln!(
                    out,
                    "{:27} {:12} {:>10.0} {:>6.3} {:>9}",
                    t.trace,
                    run.entry,
                    f.throughput_kbps,
                    f.utilization,
                    delay(f.self_inflicted_delay_ms)
                );
            }
        }
        let n = results.summary.first().map_or(0, |s| s.traces);
        let _ = writeln!(
            out,
            "\nSprout against each scheme over the {n} traces of the paper's networks (§1):"
        );
        let _ = writeln!(
            out,
            "{:12} {:>13} {:>16} {:>14}",
            "scheme", "avg. speedup", "delay reduction", "its avg. delay"
        );
        for s in &results.summary {
            let _ = writeln!(
                out,
                "{:12} {:>12.2}× {:>15.2}× {:>14}",
                s.entry,
                s.speedup,
                s.delay_reduction,
                fmt_delay(s.mean_delay_ms)
            );
        }
        let _ = writeln!(
            out,
            "\nSprout on {LOSS_NETWORK} with loss in both directions (§6.5):"
        );
        for dir in Direction::BOTH {
            for p in LOSS_RATES {
                if let Some(f) = r.loss_metrics(dir, p) {
                    let _ = writeln!(
                        out,
                        "{:8} {:>3.0} %  {:>6.0} kbit/s  {:>5} ms",
                        dir.word(),
                        100.0 * p,
                        f.throughput_kbps,
                        delay(f.self_inflicted_delay_ms)
                    );
                }
            }
        }
        out.push('\n');
        write_checks(&mut out, &results.checks);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_sim::metrics::FlowMetrics;
    use wisp_sim::reproduce::sprout::{LossRun, NETWORKS, SchemeRun};
    use wisp_sim::run::RunReport;

    fn report(trace: &str, throughput_kbps: f64, delay_ms: f64) -> RunReport {
        RunReport {
            scheme: String::new(),
            trace: trace.into(),
            seed: 1,
            reverse: String::new(),
            delay_ms: 20.0,
            queue: "infinite".into(),
            loss: "0".into(),
            reverse_loss: "0".into(),
            duration_s: 10.0,
            warmup_s: 0.0,
            flows: vec![FlowMetrics {
                flow: 0,
                scheme: String::new(),
                window_start_s: 0.0,
                window_end_s: 10.0,
                throughput_kbps,
                capacity_kbps: 5000.0,
                utilization: throughput_kbps / 5000.0,
                delay_p50_ms: Some(30.0),
                delay_p95_ms: Some(40.0),
                queue_delay_p95_ms: None,
                e2e_delay_p95_ms: Some(delay_ms + 50.0),
                ideal_e2e_delay_p95_ms: Some(50.0),
                self_inflicted_delay_ms: Some(delay_ms),
                loss_rate: 0.0,
                packets_sent: 1,
                packets_delivered: 1,
                packets_lost: 0,
            }],
        }
    }

    /// The Verizon LTE downlink with NewReno and Compound coinciding, and the loss runs.
    fn repro() -> Reproduction {
        let trace = "Verizon-LTE-short.down";
        let runs = [
            ("ideal", 5000.0, 0.0),
            ("sprout", 4000.0, 70.0),
            ("sprout-ewma", 4500.0, 150.0),
            ("cubic", 4990.0, 30_000.0),
            ("cubic-codel", 3500.0, 100.0),
            ("compound", 4990.0, 50_000.0),
            ("newreno", 4990.0, 50_000.0),
        ];
        Reproduction {
            quick: true,
            seed: 1,
            delay_ms: 20.0,
            traces: vec![TraceRuns {
                network: NETWORKS[0],
                direction: Direction::Down,
                trace: trace.into(),
                reverse: "Verizon-LTE-short.up".into(),
                capacity_kbps: 5000.0,
                duration_s: 10.0,
                runs: runs
                    .iter()
                    .map(|&(entry, t, d)| SchemeRun {
                        entry,
                        report: report(trace, t, d),
                    })
                    .collect(),
            }],
            loss: [(0.05, 3000.0), (0.10, 2000.0)]
                .iter()
                .map(|&(loss, t)| LossRun {
                    direction: Direction::Down,
                    loss,
                    report: report(trace, t, 60.0),
                })
                .collect(),
        }
    }

    #[test]
    fn the_chart_leaves_out_the_ideal_sender_and_merges_coinciding_schemes() {
        let svg = scatter(&repro().traces[0]);
        // sprout, sprout-ewma, cubic, cubic-codel, compound = newreno.
        assert_eq!(svg.matches("<circle").count(), 5, "{svg}");
        assert!(svg.contains("compound = newreno"));
        assert!(!svg.contains("\nideal"));
        assert!(svg.contains("capacity 5000 kbit/s"));
    }

    #[test]
    fn tables_and_page() {
        let r = repro();
        let loss = loss_csv(&r);
        assert_eq!(
            loss.lines().nth(1).unwrap(),
            "downlink,0,4000.0,0.8000,70.0,0.00000,4533,73"
        );
        assert_eq!(loss.lines().count(), 1 + 3);
        // Seven runs and two loss runs.
        assert_eq!(results_csv(&r).lines().count(), 1 + 7 + 2);
        let summary = summary_csv(&r);
        let cubic = summary.lines().find(|l| l.starts_with("cubic,")).unwrap();
        assert_eq!(cubic, "cubic,1,0.802,428.571,30000.0,70.0,1.1,79.0,25.00");
        let page = html(&r);
        assert!(page.contains("NewReno and Compound TCP give the same figures"));
        assert!(page.contains("<td>79× (25 s)</td>"));
        let met = r.checks().iter().filter(|c| c.met).count();
        assert!(page.contains(&format!("{met} of {} checks met", r.checks().len())));
    }
}
