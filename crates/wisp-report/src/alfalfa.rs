//! Page of `wisp reproduce alfalfa` (Sprout paper §4): the checks, the per-run table and, per trace
//! direction, the quality-against-delay plot in Salsify's style (mean SSIM of the shown frames
//! up, p95 frame delay on a reversed logarithmic axis: better is up and right), and beside it the
//! same plot with the displayed metric (what is on screen at each capture instant: mean
//! displayed SSIM against the current source picture, p95 displayed delay; see
//! `wisp_core::video::display`).

use crate::output::{OutputDir, OutputError};
use crate::reproduce::{
    Done, Inputs, Outcome, Paper, one_table, write_checks,
};
use wisp_sim::reproduce::Check;
use crate::{Csv, ReversedLog, claims_table, color, inline_svg, page, swatch};
use maud::html;
use plotters::prelude::*;
use crate::sprout::TRACES;
use wisp_sim::reproduce::alfalfa::{Reproduction, SCHEMES, TraceVideo, run_or_cancel};

fn scheme_color(scheme: &str) -> RGBColor {
    color(SCHEMES.iter().position(|s| s.0 == scheme).unwrap_or(0))
}

/// Which figures a plot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Metric {
    /// Each shown frame against its own source; frame delay capture → display.
    PerFrame,
    /// The picture on screen at each capture instant against the current source.
    Displayed,
}

/// Mean SSIM (dB) against p95 frame delay, one labelled point per scheme.
pub fn quality_delay_svg(t: &TraceVideo) -> String {
    svg(t, Metric::PerFrame)
}

/// Mean displayed SSIM (dB) against p95 displayed delay, one labelled point per scheme.
pub fn displayed_quality_delay_svg(t: &TraceVideo) -> String {
    svg(t, Metric::Displayed)
}

fn svg(t: &TraceVideo, m: Metric) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (640, 400)).into_drawing_area();
        let _ = draw(&root, t, m);
        let _ = root.present();
    }
    out
}

fn draw(
    root: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
    t: &TraceVideo,
    m: Metric,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let pts: Vec<(&str, f64, f64)> = t
        .runs
        .iter()
        .map(|r| match m {
            Metric::PerFrame => (r.scheme, r.delay_p95_ms, r.ssim_mean_db),
            Metric::Displayed => (r.scheme, r.displayed.delay_p95_ms, r.displayed.ssim_mean_db),
        })
        .filter(|p| p.1.is_finite() && p.2.is_finite())
        .map(|(s, d, q)| (s, d.max(1.0), q))
        .collect();
    let dmin = pts.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let dmax = pts.iter().map(|p| p.1).fold(1.0, f64::max);
    let lo = if dmin.is_finite() {
        10f64.powf((dmin / 1.5).log10().floor())
    } else {
        1.0
    };
    let hi = 10f64.powf((dmax.max(lo * 10.0) * 1.5).log10().ceil());
    let ymax = pts.iter().map(|p| p.2).fold(0.0, f64::max).max(1.0) * 1.15;
    // A displayed SSIM can be below 0 dB (pictures less alike than unrelated ones).
    let ymin = pts.iter().map(|p| p.2).fold(0.0, f64::min).min(0.0).floor();
    let loss = if t.loss > 0.0 {
        format!(", {:.0}% loss", 100.0 * t.loss)
    } else {
        String::new()
    };
    let (what, x_desc, y_desc) = match m {
        Metric::PerFrame => (
            "",
            "frame delay p95, capture → display (log; lower is right)",
            "mean SSIM of shown frames (dB)",
        ),
        Metric::Displayed => (
            " — displayed",
            "displayed delay p95, on screen at each capture instant (log; lower is right)",
            "mean displayed SSIM vs current source (dB)",
        ),
    };
    let mut chart = ChartBuilder::on(root)
        .caption(format!("{}{loss}{what}", t.trace), ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(ReversedLog { lo, hi }, ymin..ymax)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(RGBColor(245, 245, 245))
        .draw()?;
    // Labels stacked by scheme, so that coinciding points (alfalfa and sprout-conventional
    // without loss) stay readable.
    for (i, (scheme, d, q)) in pts.into_iter().enumerate() {
        let c = scheme_color(scheme);
        chart.draw_series([Circle::new((d, q), 5, c.filled())])?;
        chart.draw_series([Text::new(
            scheme.to_string(),
            (d, q + ymax * (0.03 + 0.05 * i as f64)),
            ("sans-serif", 12).into_font().color(&c),
        )])?;
    }
    Ok(())
}

/// The SVG figures: `(file name, svg)`, one per trace direction and loss rate.
pub fn figures(r: &Reproduction) -> Vec<(String, String)> {
    r.traces
        .iter()
        .chain(&r.loss)
        .flat_map(|t| {
            let name = if t.loss > 0.0 {
                format!("{}-loss{:.0}.svg", t.trace, 100.0 * t.loss)
            } else {
                format!("{}.svg", t.trace)
            };
            [
                (format!("quality-delay-{name}"), quality_delay_svg(t)),
                (
                    format!("displayed-quality-delay-{name}"),
                    displayed_quality_delay_svg(t),
                ),
            ]
        })
        .collect()
}

/// A direction's header row: the trace and, when there is loss, the loss each way.
fn direction_label(t: &TraceVideo) -> String {
    if t.loss > 0.0 {
        format!("{}, {:.0}% loss each way", t.trace, 100.0 * t.loss)
    } else {
        format!("{}, no loss", t.trace)
    }
}

/// The page.
pub fn html(r: &Reproduction) -> String {
    let title =
        "Alfalfa's explicit-state video against conventional rate controls (Sprout paper §4)";
    let checks = r.checks();
    let body = html! {
        p.meta {
            "Winstein, Sivaraman, Balakrishnan, NSDI 2013, §4 (the paper did not measure video \
             quality). The model codec (VP8's rate–quality on the shipped clip), " (r.fps)
            " pictures/s, every shipped cellular trace direction with its pair as the feedback \
             path, 20 ms each way; 5% loss each way on Verizon-LTE-short. Seed " (r.seed)
            @if r.quick { ", --quick (the two LTE pairs)" } ". See docs/alfalfa.md."
        }
        h2 { "The checks" }
        (claims_table(&checks))
        @let (over_gcc, over_cbr, both, n) = r.displayed_wins();
        p {
            "Informational, not one of the checks: by the displayed metric (below), alfalfa has a \
             higher mean displayed SSIM at equal or lower displayed delay p95 than gcc-video on "
            (over_gcc) ", than cbr-video on " (over_cbr) ", than both on " (both.len()) " of the "
            (n) " directions"
            @if !both.is_empty() { " (" (both.join(", ")) ")" } "."
        }
        // Two tables, one row per scheme under a header row per direction: the fifteen
        // columns of one table ran off a 1400-px page.
        h2 { "Runs: each frame shown" }
        p.meta {
            "Reported, not checked (§4: the authors \u{201c}have not quantitatively evaluated \
             Alfalfa\u{2019}s end-to-end video performance\u{201d}): frames shown, SSIM, and \
             freezes by libwebrtc\u{2019}s rule (Chrome\u{2019}s freezeCount: a gap between \
             rendered frames of at least max(3 \u{d7} the mean of the last 30, mean + 150 ms))."
        }
        table.runs {
            tr {
                th { "scheme" } th { "shown" } th { "SSIM mean dB" } th { "SSIM p5 dB" }
                th { "delay p50 ms" } th { "delay p95 ms" } th { "kbit/s" } th { "intra" }
                th { "missing base" } th { "freezes (s)" }
            }
            @for t in r.traces.iter().chain(&r.loss) {
                tr.group { th colspan="10" { (direction_label(t)) } }
                @for v in &t.runs {
                    tr {
                        td { (swatch(scheme_color(v.scheme))) (v.scheme) }
                        td { (format!("{:.1}% ({} of {})", 100.0 * v.shown_share, v.shown, v.captured)) }
                        td { (format!("{:.1}", v.ssim_mean_db)) }
                        td { (format!("{:.1}", v.ssim_p5_db)) }
                        td { (format!("{:.0}", v.delay_p50_ms)) }
                        td { (format!("{:.0}", v.delay_p95_ms)) }
                        td { (format!("{:.0}", v.bitrate_kbps)) }
                        td { (v.intra) } td { (v.missing_base) }
                        td { (format!("{} ({:.1})", v.freezes.count, v.freezes.total_s)) }
                    }
                }
            }
        }
        h2 { "Runs: what the screen shows at each capture instant" }
        table.runs {
            tr {
                th { "scheme" } th { "displayed delay p50 / p95 ms" } th { "frozen > 200 ms" }
                th { "displayed SSIM mean / p5 dB" } th { "blank instants" }
            }
            @for t in r.traces.iter().chain(&r.loss) {
                tr.group { th colspan="5" { (direction_label(t)) } }
                @for v in &t.runs {
                    tr {
                        td { (swatch(scheme_color(v.scheme))) (v.scheme) }
                        td { (format!("{:.0} / {:.0}", v.displayed.delay_p50_ms, v.displayed.delay_p95_ms)) }
                        td { (format!("{:.1}%", 100.0 * v.displayed.frozen_share)) }
                        td { (format!("{:.1} / {:.1}", v.displayed.ssim_mean_db, v.displayed.ssim_p5_db))
                             @if v.displayed_quality == "model-approx" { "*" } }
                        td { (v.displayed.blank) }
                    }
                }
            }
        }
        p.meta {
            "Displayed: the picture on screen at each capture instant (the newest frame displayed \
             at or before it; none before the first display: a blank instant). Its delay is the \
             instant less that picture's capture; its SSIM is against the current source picture. \
             * With the model codec (no pixels) the displayed SSIM is an approximation: the \
             frame's coding distortion (1 − SSIM) and that between its source picture and the \
             current one in the shipped clip, added (within 0.1–0.3 dB of VP8's measured value \
             on average; docs/alfalfa.md)."
        }
        h2 { "Quality against delay, per trace direction (per frame | displayed)" }
        @for t in r.traces.iter().chain(&r.loss) {
            figure {
                (inline_svg(&quality_delay_svg(t)))
                (inline_svg(&displayed_quality_delay_svg(t)))
            }
        }
    };
    page(title, body)
}

/// The paper in the registry ([`crate::PAPERS`]). Its traces are Sprout's.
pub const PAPER: Paper = Paper {
    name: "alfalfa",
    summary: "Alfalfa's explicit-state video against the same model encoder under Sprout \
              without base choice, GCC and CBR, over the cellular traces (--traces DIR), with 5% \
              loss on Verizon-LTE-short; summary.json, table.csv, report.html (quality against \
              delay)",
    inputs: Inputs::TraceFolder(TRACES),
    runs: |r, on_done, cancel| {
        let o = crate::sprout::options(r)?;
        Done::boxed(run_or_cancel(&o, on_done, cancel)?, r.quick)
    },
};

impl Outcome for Done<Reproduction> {
    fn claims(&self) -> Vec<Check> {
        self.result.checks()
    }

    fn files(&self) -> Result<OutputDir, OutputError> {
        let r = &self.result;
        one_table("alfalfa", self, &r.checks(), csv(r), (html(r), figures(r)))
    }

    /// table.csv, then the checks.
    fn stdout(&self) -> String {
        let mut out = csv(&self.result);
        out.push('\n');
        write_checks(&mut out, &self.result.checks());
        out
    }

    fn main_file(&self) -> &'static str {
        "summary.json"
    }
}

/// `table.csv`: one row per run, `trace,reverse,loss,scheme,…`.
pub fn csv(r: &Reproduction) -> String {
    let mut out = Csv::new(&[
        "trace",
        "reverse",
        "loss",
        "scheme",
        "captured",
        "coded",
        "shown",
        "shown_share",
        "ssim_mean_db",
        "ssim_p5_db",
        "delay_p50_ms",
        "delay_p95_ms",
        "bitrate_kbps",
        "intra",
        "missing_base",
        "freezes",
        "freezes_s",
        "displayed_quality",
        "blank_instants",
        "disp_delay_p50_ms",
        "disp_delay_p95_ms",
        "frozen_share",
        "disp_ssim_mean_db",
        "disp_ssim_p5_db",
    ]);
    for t in r.traces.iter().chain(&r.loss) {
        for v in &t.runs {
            let d = &v.displayed;
            out.row(&[
                &t.trace,
                &t.reverse,
                &t.loss,
                &v.scheme,
                &v.captured,
                &v.coded,
                &v.shown,
                &format!("{:.4}", v.shown_share),
                &format!("{:.3}", v.ssim_mean_db),
                &format!("{:.3}", v.ssim_p5_db),
                &format!("{:.1}", v.delay_p50_ms),
                &format!("{:.1}", v.delay_p95_ms),
                &format!("{:.1}", v.bitrate_kbps),
                &v.intra,
                &v.missing_base,
                &v.freezes.count,
                &format!("{:.2}", v.freezes.total_s),
                &v.displayed_quality,
                &d.blank,
                &format!("{:.1}", d.delay_p50_ms),
                &format!("{:.1}", d.delay_p95_ms),
                &format!("{:.4}", d.frozen_share),
                &format!("{:.3}", d.ssim_mean_db),
                &format!("{:.3}", d.ssim_p5_db),
            ]);
        }
    }
    out.finish()
}
