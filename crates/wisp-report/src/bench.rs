//! The report of `wisp bench` (the main job: every scheme over every trace).
//!
//! [`bench_report`] gives every file of it. The page, report.html, opens on a summary: each
//! scheme's median utilization and median self-inflicted delay over all its runs (one per
//! trace), the metrics of results.json, as a table and a Pantheon-style plot (self-inflicted
//! delay across, logarithmic and reversed so that better is right; utilization up; a large
//! marker at each scheme's medians, a small one per trace), also written as summary.svg. Then
//! per trace a throughput/self-inflicted-delay scatter (also plots/TRACE.svg) and a table, and
//! per run its time series, folded: an image of figures/TRACE/SCHEME.svg, which the browser
//! loads only when it is unfolded. The page holds no series, so its size grows with the number
//! of runs, not with the traces' lengths (a main job's is about 0.3 MB).

use crate::{
    DELAY_FLOOR_MS, DelayChart, Dot, ScatterPoint, color, delay_axis, delay_chart,
    draw_labelled_dots, fmt_opt, inline_svg, metrics_table, page, scatter_svg, swatch,
    timeseries_svg,
};
use maud::{Markup, html};
use plotters::prelude::*;
use wisp_core::stats::median_midpoint;
use wisp_sim::metrics::FlowMetrics;
use wisp_sim::run::{RunReport, RunResult};

/// The most buckets a run's time series is drawn in (a line through each bucket's mean, shaded
/// from its lowest to its highest bin): about one every 3 px of the plot.
pub const SERIES_BUCKETS: usize = 300;

/// A scheme's line of the summary: over its runs (one per trace, in trace order), the first
/// flow's metrics as results.json has them.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeSummary {
    pub scheme: String,
    /// Palette index.
    pub color: usize,
    /// Each run's utilization (throughput / the link's capacity), in trace order.
    pub utilization: Vec<f64>,
    /// Each run's self-inflicted delay (95% end-to-end delay minus the ideal sender's), in trace
    /// order; `None` for a run that delivered nothing.
    pub self_inflicted_delay_ms: Vec<Option<f64>>,
}

impl SchemeSummary {
    /// The median utilization ([`median_midpoint`]: the mean of the middle two for an even
    /// count).
    pub fn median_utilization(&self) -> Option<f64> {
        median_midpoint(&mut self.utilization.clone())
    }

    /// The median self-inflicted delay over the runs that have one.
    pub fn median_delay_ms(&self) -> Option<f64> {
        let mut d: Vec<f64> = self
            .self_inflicted_delay_ms
            .iter()
            .flatten()
            .copied()
            .collect();
        median_midpoint(&mut d)
    }
}

/// One [`SchemeSummary`] per scheme of `schemes` that has runs in `reports`, in that order (a
/// scheme's colour is its position there).
pub fn summary(reports: &[&RunReport], schemes: &[String]) -> Vec<SchemeSummary> {
    schemes
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let flows: Vec<&FlowMetrics> = reports
                .iter()
                .filter(|r| &r.scheme == s)
                .filter_map(|r| r.flows.first())
                .collect();
            (!flows.is_empty()).then(|| SchemeSummary {
                scheme: s.clone(),
                color: i,
                utilization: flows.iter().map(|f| f.utilization).collect(),
                self_inflicted_delay_ms: flows.iter().map(|f| f.self_inflicted_delay_ms).collect(),
            })
        })
        .collect()
}

/// The summary table: a row per scheme with its runs and medians.
pub fn summary_table(rows: &[SchemeSummary]) -> Markup {
    html! {
        table.summary {
            tr {
                th { "scheme" } th { "traces" } th { "utilization (median)" }
                th { "self-inflicted delay ms (median)" }
            }
            @for r in rows {
                @let with_delay = r.self_inflicted_delay_ms.iter().flatten().count();
                tr {
                    td { (swatch(color(r.color))) (r.scheme) }
                    td { (r.utilization.len()) }
                    td { (fmt_opt(r.median_utilization(), 3)) }
                    td {
                        (fmt_opt(r.median_delay_ms(), 0))
                        @if with_delay < r.utilization.len() { " (of " (with_delay) ")" }
                    }
                }
            }
        }
    }
}

/// The summary plot: utilization against self-inflicted delay (logarithmic, reversed: better
/// is up and to the right), a large labelled marker at each scheme's medians and a small one at
/// each of its runs. Delays below 1 ms are drawn at 1 ms.
pub fn summary_svg(rows: &[SchemeSummary], traces: usize) -> String {
    crate::sweep::svg((760, 480), |root| draw_summary(root, rows, traces))
}

fn draw_summary(
    root: &crate::Area<'_>,
    rows: &[SchemeSummary],
    traces: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let runs: Vec<(f64, f64, RGBColor)> = rows
        .iter()
        .flat_map(|r| {
            r.utilization
                .iter()
                .zip(&r.self_inflicted_delay_ms)
                .filter_map(move |(&u, d)| {
                    Some((d.as_ref()?.max(DELAY_FLOOR_MS), u, color(r.color)))
                })
        })
        .collect();
    let dots: Vec<Dot> = rows
        .iter()
        .filter_map(|r| {
            let d = r.median_delay_ms()?;
            Some(Dot {
                at: (d.max(DELAY_FLOOR_MS), r.median_utilization()?),
                label: r.scheme.clone(),
                floored: d < DELAY_FLOOR_MS,
                color: color(r.color),
            })
        })
        .collect();
    let delays: Vec<f64> = runs.iter().map(|p| p.0).collect();
    let umax = runs.iter().map(|p| p.1).fold(1.0, f64::max);
    let title = format!("Every scheme over {traces} traces: median (large) and each trace (small)");
    let mut chart: DelayChart<'_, '_> = delay_chart(
        root,
        &title,
        delay_axis(&delays),
        (umax * 1.1, "utilization (throughput / link capacity)"),
        &|v| format!("{v:.1}"),
    )?;
    chart.draw_series(
        runs.iter()
            .map(|&(d, u, c)| Circle::new((d, u), 3, c.mix(0.45).filled())),
    )?;
    draw_labelled_dots(root, &mut chart, &dots, vec![])
}

/// The traces of `reports`, in first-seen order.
pub fn traces_of<'a>(reports: impl IntoIterator<Item = &'a RunReport>) -> Vec<String> {
    let mut traces: Vec<String> = vec![];
    for r in reports {
        if !traces.contains(&r.trace) {
            traces.push(r.trace.clone());
        }
    }
    traces
}

/// The throughput/self-inflicted-delay scatter of the runs on `trace`: one point per run (its
/// first flow), coloured by the scheme's position in `schemes`, with the link's capacity.
pub fn trace_scatter_svg(trace: &str, reports: &[&RunReport], schemes: &[String]) -> String {
    let color_of = |scheme: &str| schemes.iter().position(|s| s == scheme).unwrap_or(0);
    let here: Vec<&&RunReport> = reports.iter().filter(|r| r.trace == trace).collect();
    let points: Vec<ScatterPoint> = here
        .iter()
        .filter_map(|r| {
            let f = r.flows.first()?;
            Some(ScatterPoint {
                label: r.scheme.clone(),
                throughput_kbps: f.throughput_kbps,
                delay_ms: f.self_inflicted_delay_ms?,
                color: color_of(&r.scheme),
            })
        })
        .collect();
    let capacity = here
        .first()
        .and_then(|r| r.flows.first())
        .map(|f| f.capacity_kbps);
    scatter_svg(trace, &points, capacity)
}

/// Every file of the report of a benchmark matrix, `(path in the output folder, contents)`:
/// report.html ([`bench_html`]), summary.svg ([`summary_svg`]), plots/TRACE.svg
/// ([`trace_scatter_svg`]) and each run's time series at its [`figure_paths`] place.
/// `subtitle` describes the setup; `schemes` gives the colour order.
pub fn bench_report(
    title: &str,
    subtitle: &str,
    runs: &[&RunResult],
    schemes: &[String],
) -> Vec<(String, String)> {
    let reports: Vec<&RunReport> = runs.iter().map(|r| &r.report).collect();
    let traces = traces_of(reports.iter().copied());
    let mut files = vec![
        (
            "report.html".to_string(),
            bench_html(title, subtitle, runs, schemes),
        ),
        (
            "summary.svg".to_string(),
            summary_svg(&summary(&reports, schemes), traces.len()),
        ),
    ];
    for t in &traces {
        files.push((
            format!("plots/{t}.svg"),
            trace_scatter_svg(t, &reports, schemes),
        ));
    }
    for (r, path) in runs.iter().zip(figure_paths(&reports)) {
        files.push((path, run_figure(r)));
    }
    files
}

/// Where each run's time series goes: figures/TRACE/SCHEME.svg, both names with every
/// character but ASCII letters, digits, `.`, `-` and `_` made `_` (a scheme's `:`, `=`, `/`),
/// and `-2`, `-3`… after a name an earlier run already has.
pub fn figure_paths(reports: &[&RunReport]) -> Vec<String> {
    let slug = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut taken = std::collections::HashSet::new();
    reports
        .iter()
        .map(|r| {
            let base = format!("figures/{}/{}", slug(&r.trace), slug(&r.scheme));
            let mut path = format!("{base}.svg");
            for n in 2.. {
                if taken.insert(path.clone()) {
                    break;
                }
                path = format!("{base}-{n}.svg");
            }
            path
        })
        .collect()
}

/// A run's time series figure.
fn run_figure(r: &RunResult) -> String {
    let labels: Vec<String> = r.report.flows.iter().map(|f| f.scheme.clone()).collect();
    timeseries_svg(&run_title(&r.report), &r.series, &labels, SERIES_BUCKETS)
}

fn run_title(r: &RunReport) -> String {
    format!("{} on {}", r.scheme, r.trace)
}

/// The page of a benchmark matrix: the summary (a table and a plot of each scheme's medians
/// over the traces), then per trace a throughput/self-inflicted-delay scatter with one point per
/// scheme and a table, and per run its time series (folded; an image of its file in
/// figures/). `schemes` gives the colour order.
pub fn bench_html(title: &str, subtitle: &str, runs: &[&RunResult], schemes: &[String]) -> String {
    let reports: Vec<&RunReport> = runs.iter().map(|r| &r.report).collect();
    let traces = traces_of(reports.iter().copied());
    let rows = summary(&reports, schemes);
    let paths = figure_paths(&reports);
    let body = html! {
        p.meta { (subtitle) }
        h2 id="summary" { "Summary: every scheme over " (traces.len()) " traces" }
        p {
            "Each scheme's median over the traces of its utilization (throughput / the link's "
            "capacity) and of its self-inflicted delay (its 95% end-to-end delay minus the "
            "ideal sender's on the same trace), the figures of results.json. In the plot, a "
            "large marker is at a scheme's two medians, a small one at each of its traces; up "
            "and to the right is better."
        }
        (summary_table(&rows))
        figure.summary { (inline_svg(&summary_svg(&rows, traces.len()))) }
        p {
            "Traces: "
            @for (i, t) in traces.iter().enumerate() {
                @if i > 0 { " · " }
                a href={ "#" (t) } { (t) }
            }
        }
        @for trace in &traces {
            @let here: Vec<(&RunReport, &str)> = reports
                .iter()
                .copied()
                .zip(paths.iter().map(String::as_str))
                .filter(|(r, _)| &r.trace == trace)
                .collect();
            (trace_section(trace, &here, &reports, schemes))
        }
    };
    page(title, body)
}

/// A trace's part of the bench page: its scatter, its table, and each run's time series (its
/// figure's path beside it in `here`).
fn trace_section(
    trace: &str,
    here: &[(&RunReport, &str)],
    reports: &[&RunReport],
    schemes: &[String],
) -> Markup {
    let color_of = |scheme: &str| schemes.iter().position(|s| s == scheme).unwrap_or(0);
    let rows: Vec<(usize, &RunReport)> = here
        .iter()
        .map(|&(r, _)| (color_of(&r.scheme), r))
        .collect();
    html! {
        h2 id=(trace) { (trace) }
        figure.scatter { (inline_svg(&trace_scatter_svg(trace, reports, schemes))) }
        (metrics_table(&rows))
        @for &(r, path) in here {
            details {
                summary { (r.scheme) " on " (trace) ": time series" }
                figure.timeseries {
                    a href=(path) {
                        img src=(path) loading="lazy" width="900" height="460"
                            style="max-width:100%;height:auto"
                            alt={ (run_title(r)) ": throughput and queueing delay over time" };
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_sim::log::RunLog;
    use wisp_sim::metrics::{FlowSeries, TimeSeries};

    /// A run of `scheme` on `trace` with the given first-flow metrics and a noisy time series
    /// of `bins` 100-ms bins (every fifth bin without a delivery).
    fn run(scheme: &str, trace: &str, util: f64, delay: Option<f64>, bins: usize) -> RunResult {
        let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (bins as u64) ^ ((scheme.len() as u64) << 32);
        let mut noise = move |scale: f64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            scale * (x % 10_000) as f64 / 10_000.0
        };
        let capacity: Vec<f64> = (0..bins).map(|_| noise(20_000.0)).collect();
        let throughput: Vec<f64> = capacity.iter().map(|c| c * util).collect();
        let queue: Vec<Option<f64>> = (0..bins)
            .map(|i| (i % 5 != 0).then(|| noise(3_000.0)))
            .collect();
        let flow = FlowMetrics {
            flow: 0,
            scheme: scheme.into(),
            window_start_s: 0.0,
            window_end_s: bins as f64 / 10.0,
            throughput_kbps: 5_000.0 * util,
            capacity_kbps: 5_000.0,
            utilization: util,
            delay_p50_ms: Some(40.0),
            delay_p95_ms: Some(80.0),
            queue_delay_p95_ms: Some(60.0),
            e2e_delay_p95_ms: delay.map(|d| d + 50.0),
            ideal_e2e_delay_p95_ms: delay.map(|_| 50.0),
            self_inflicted_delay_ms: delay,
            loss_rate: 0.0,
            packets_sent: 1_000,
            packets_delivered: 1_000,
            packets_lost: 0,
        };
        RunResult {
            report: RunReport {
                scheme: scheme.into(),
                trace: trace.into(),
                seed: 1,
                reverse: "delay-only".into(),
                delay_ms: 20.0,
                queue: "infinite".into(),
                loss: "none".into(),
                reverse_loss: "none".into(),
                duration_s: bins as f64 / 10.0,
                warmup_s: 0.0,
                flows: vec![flow],
            },
            series: TimeSeries {
                bin_s: 0.1,
                t_s: (0..bins).map(|i| i as f64 / 10.0).collect(),
                capacity_kbps: capacity,
                flows: vec![FlowSeries {
                    send_kbps: throughput.clone(),
                    throughput_kbps: throughput,
                    delay_ms: queue.clone(),
                    queue_delay_ms: queue.clone(),
                    queue_delay_max_ms: queue,
                }],
            },
            log: RunLog::default(),
        }
    }

    /// The text of each cell of each row (but the header) of the table at `html[at..]`.
    fn table_rows(html: &str, at: usize) -> Vec<Vec<String>> {
        let table = &html[at..at + html[at..].find("</table>").unwrap()];
        table
            .split("<tr>")
            .skip(1)
            .map(|row| {
                row.split("<td>")
                    .skip(1)
                    .map(|cell| {
                        let mut text = String::new();
                        let mut in_tag = false;
                        for c in cell.chars() {
                            match c {
                                '<' => in_tag = true,
                                '>' => in_tag = false,
                                c if !in_tag => text.push(c),
                                _ => {}
                            }
                        }
                        text
                    })
                    .collect::<Vec<String>>()
            })
            .filter(|cells| !cells.is_empty())
            .collect()
    }

    /// The median as usually defined, written out here apart from the crate's.
    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }

    /// A figure's file name keeps letters, digits, `.`, `-` and `_`; two runs never share one.
    #[test]
    fn each_run_has_a_figure_of_its_own() {
        let results: Vec<RunResult> = [
            ("sprout", "a b.down"),
            ("sprout:sigmas=50/100", "a b.down"),
            ("sprout_sigmas_50_100", "a b.down"),
            ("sprout", "a_b.down"),
        ]
        .iter()
        .map(|&(s, t)| run(s, t, 0.5, Some(10.0), 3))
        .collect();
        let reports: Vec<&RunReport> = results.iter().map(|r| &r.report).collect();
        assert_eq!(
            figure_paths(&reports),
            [
                "figures/a_b.down/sprout.svg",
                "figures/a_b.down/sprout_sigmas_50_100.svg",
                "figures/a_b.down/sprout_sigmas_50_100-2.svg",
                "figures/a_b.down/sprout-2.svg",
            ]
        );
    }

    #[test]
    fn the_summary_comes_first_with_each_schemes_medians_over_the_traces() {
        let schemes: Vec<String> = ["ideal", "sprout", "cubic"].map(String::from).to_vec();
        let traces = ["a.down", "a.up", "b.down", "b.up"];
        let figures = [
            [(0.99, Some(0.0)), (0.5, Some(70.0)), (1.0, Some(30_000.0))],
            [(0.98, Some(0.5)), (0.9, Some(120.0)), (0.97, None)],
            [(1.0, Some(0.0)), (0.7, Some(95.0)), (0.93, Some(250_000.0))],
            [
                (0.97, Some(0.2)),
                (0.81, Some(40.0)),
                (0.99, Some(41_000.0)),
            ],
        ];
        let results: Vec<RunResult> = traces
            .iter()
            .zip(&figures)
            .flat_map(|(t, row)| {
                schemes
                    .iter()
                    .zip(row)
                    .map(|(s, &(u, d))| run(s, t, u, d, 50))
            })
            .collect();
        let refs: Vec<&RunResult> = results.iter().collect();
        let html = bench_html("wisp bench", "test", &refs, &schemes);

        // First: the summary's heading, table and plot, before any trace's.
        let table = html.find("<table class=\"summary\">").unwrap();
        assert_eq!(html.find("<h2"), html.find("<h2 id=\"summary\">"));
        assert_eq!(html.find("<table"), Some(table));
        assert!(
            html.find("<figure class=\"summary\">").unwrap()
                < html.find("<h2 id=\"a.down\"").unwrap()
        );
        assert!(table < html.find("<figure class=\"scatter\">").unwrap());

        // A row per scheme, at the medians of results.json's figures.
        let json =
            serde_json::to_value(results.iter().map(|r| &r.report).collect::<Vec<_>>()).unwrap();
        let rows = table_rows(&html, table);
        assert_eq!(rows.len(), schemes.len());
        for (row, s) in rows.iter().zip(&schemes) {
            let flows: Vec<&serde_json::Value> = json
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["scheme"] == s.as_str())
                .map(|r| &r["flows"][0])
                .collect();
            let util = median(
                flows
                    .iter()
                    .map(|f| f["utilization"].as_f64().unwrap())
                    .collect(),
            );
            let delays: Vec<f64> = flows
                .iter()
                .filter_map(|f| f["self_inflicted_delay_ms"].as_f64())
                .collect();
            let with_delay = delays.len();
            let delay = format!("{:.0}", median(delays));
            let delay = if with_delay < flows.len() {
                format!("{delay} (of {with_delay})")
            } else {
                delay
            };
            let expected = [
                s.clone(),
                flows.len().to_string(),
                format!("{util:.3}"),
                delay,
            ];
            assert_eq!(row[..], expected[..], "{s}");
        }
        // The medians themselves: sprout's utilization is (0.7 + 0.81) / 2, cubic's delay the
        // median of its three delays.
        assert_eq!(rows[1][2], "0.755");
        assert_eq!(rows[2][3], "41000 (of 3)");
        // The plot: a large marker per scheme and a small one per run with a delay.
        let svg = &html[html.find("<figure class=\"summary\">").unwrap()..];
        let svg = &svg[..svg.find("</svg>").unwrap()];
        assert_eq!(svg.matches("r=\"6\"").count(), 3);
        assert_eq!(svg.matches("r=\"3\"").count(), 11);
        assert!(svg.contains("\nideal (≤1 ms)\n"), "{svg}");
    }

    /// The page of a main job (11 schemes × the ten shipped traces, as many 100-ms bins as each
    /// trace has, noisy) stays under 2 MB.
    #[test]
    fn a_main_job_sized_report_stays_under_two_megabytes() {
        let schemes: Vec<String> = [
            "ideal",
            "sprout",
            "sprout-ewma",
            "gcc-remb",
            "gcc-grouping:prefilter=libwebrtc",
            "cubic",
            "newreno",
            "vegas",
            "compound",
            "ledbat",
            "cbr",
        ]
        .map(String::from)
        .to_vec();
        // The shipped traces' lengths, in 100-ms bins.
        let bins = [
            7_862, 10_125, 1_400, 1_400, 9_285, 9_313, 10_621, 10_648, 1_400, 1_400,
        ];
        let results: Vec<RunResult> = bins
            .iter()
            .enumerate()
            .flat_map(|(t, &n)| {
                let schemes = &schemes;
                (0..schemes.len()).map(move |i| {
                    let util = 0.2 + 0.07 * i as f64;
                    run(
                        &schemes[i],
                        &format!("trace-{t}.down"),
                        util,
                        Some(10.0 * (i + 1) as f64),
                        n,
                    )
                })
            })
            .collect();
        let refs: Vec<&RunResult> = results.iter().collect();
        let files = bench_report("wisp bench", "test", &refs, &schemes);
        let (name, html) = &files[0];
        assert_eq!(name, "report.html");
        assert!(html.len() < 2_000_000, "{} bytes", html.len());
        // Each run's series is a file of its own, which the page shows folded.
        assert_eq!(html.matches("<figure class=\"timeseries\">").count(), 110);
        let figures: Vec<&(String, String)> = files
            .iter()
            .filter(|(p, _)| p.starts_with("figures/"))
            .collect();
        assert_eq!(figures.len(), 110);
        for (path, svg) in figures {
            assert!(
                svg.starts_with("<svg") && svg.contains("queueing delay"),
                "{path}"
            );
            assert!(
                html.contains(&format!("<img src=\"{path}\" loading=\"lazy\"")),
                "{path}"
            );
        }
    }
}
