//! Figures, tables and page of `wisp reproduce mehrotra` (Mehrotra et al. Tables I–II and
//! Figs. 2–5, 9–23).

use crate::output::{OutputDir, OutputError};
use crate::reproduce::{
    CheckKind, Done, Inputs, Outcome, Paper, add_report, with_summary, write_each,
};
use std::fmt::Write as _;
use wisp_sim::reproduce::Check;
use crate::sweep::{density, figure_svg, svg, tick, zones_pdf_svg};
use crate::{Csv, claims_table, color, inline_svg, page, swatch};
use maud::{Markup, html};
use plotters::prelude::*;
use wisp_sim::reproduce::mehrotra::{
    CONTROLLERS, ControllerRun, Mehrotra, NETWORKS, PAPER_TABLE_I, PAPER_TABLE_II,
    Options, run_or_cancel,
};

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Res = Result<(), Box<dyn std::error::Error>>;
/// A labelled line: (label, points, colour).
type Line<'a> = (&'a str, &'a [(f64, f64)], RGBColor);

const GREY: RGBColor = RGBColor(150, 150, 150);
const LIGHT: RGBColor = RGBColor(245, 245, 245);

fn ymax(values: impl Iterator<Item = f64>, floor: f64) -> f64 {
    values.fold(floor, f64::max) * 1.08
}

fn line_panel(
    area: &Area<'_>,
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Line<'_>],
    x_range: (f64, f64),
    y_max: f64,
) -> Res {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 12))
        .margin(6)
        .x_label_area_size(28)
        .y_label_area_size(52)
        .build_cartesian_2d(x_range.0..x_range.1, 0f64..y_max)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&|v| tick(*v, x_range.1))
        .y_label_formatter(&|v| tick(*v, y_max))
        .light_line_style(LIGHT)
        .draw()?;
    let labelled = series.iter().any(|s| !s.0.is_empty()) && series.len() > 1;
    for (label, pts, c) in series {
        let c = *c;
        let s = chart.draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(1)))?;
        if labelled {
            s.label(*label).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 14, y)], c.stroke_width(2))
            });
        }
    }
    if labelled {
        chart
            .configure_series_labels()
            .border_style(RGBColor(200, 200, 200))
            .background_style(WHITE.mix(0.9))
            .position(SeriesLabelPosition::UpperRight)
            .label_font(("sans-serif", 11))
            .draw()?;
    }
    Ok(())
}

/// Figs. 9–18, 20, 21 for one network: per controller, (a) the sending rate, (b) the density of
/// the queueing delay, (c) the density of the loss rate over 32 packets.
pub fn controllers_svg(r: &Mehrotra, link: &str) -> String {
    let runs: Vec<&ControllerRun> = CONTROLLERS
        .iter()
        .filter_map(|c| r.run_of(link, c))
        .collect();
    let n = runs.len().max(1);
    let t_end = r.table_duration_s;
    let rmax = ymax(runs.iter().flat_map(|x| x.rate.iter().map(|p| p.1)), 10.0);
    let dhi = runs
        .iter()
        .flat_map(|x| x.delays_ms.iter().copied())
        .fold(10.0, f64::max)
        * 1.02;
    svg((1200, 220 * n as u32 + 30), |root| {
        let root = root.titled(
            &format!("{link}: (a) sending rate, (b) density of one-way queueing delay, (c) density of loss rate over 32 packets"),
            ("sans-serif", 15),
        )?;
        let rows = root.split_evenly((n, 3));
        for (i, run) in runs.iter().enumerate() {
            let c = color(i);
            line_panel(
                &rows[3 * i],
                &format!("{} (a)", run.scheme),
                "time (s)",
                "kbit/s",
                &[("", &run.rate, c)],
                (0.0, t_end),
                rmax,
            )?;
            let d = density(&run.delays_ms, dhi, 80);
            let dmax = ymax(d.iter().map(|p| p.1), 1e-6);
            line_panel(
                &rows[3 * i + 1],
                &format!("{} (b): mean {:.0} ms", run.scheme, run.delay_mean_s * 1e3),
                "queueing delay (ms)",
                "density",
                &[("", &d, c)],
                (0.0, dhi),
                dmax,
            )?;
            let l = density(&run.losses, 1.0, 32);
            let lmax = ymax(l.iter().map(|p| p.1), 1e-6);
            line_panel(
                &rows[3 * i + 2],
                &format!("{} (c): loss {:.1} %", run.scheme, 100.0 * run.loss_rate),
                "loss rate (32 packets)",
                "density",
                &[("", &l, c)],
                (0.0, 1.0),
                lmax,
            )?;
        }
        Ok(())
    })
}

/// Fig. 22: two `adaptive-um` flows on the WiMAX link.
pub fn fairness_svg(r: &Mehrotra) -> String {
    let f = &r.fairness;
    let rmax = ymax(f.rate.iter().flatten().map(|p| p.1), f.capacity_kbps);
    let dmax = ymax(f.delay.iter().map(|p| p.1), 10.0);
    let cap = vec![(0.0, f.capacity_kbps), (f.end_s, f.capacity_kbps)];
    svg((1200, 380), |root| {
        let root = root.titled(
            &format!(
                "Fig. 22: two adaptive-um flows on {} (flow 2 from {:.0} to {:.0} s)",
                f.link, f.start2_s, f.stop2_s
            ),
            ("sans-serif", 15),
        )?;
        let p = root.split_evenly((1, 3));
        line_panel(
            &p[0],
            "(a) throughput per second",
            "time (s)",
            "kbit/s",
            &[
                ("flow 1", &f.rate[0], color(0)),
                ("flow 2", &f.rate[1], color(1)),
                ("capacity", &cap, GREY),
            ],
            (0.0, f.end_s),
            rmax,
        )?;
        line_panel(
            &p[1],
            "(b) mean queueing delay per second",
            "time (s)",
            "ms",
            &[("", &f.delay, color(2))],
            (0.0, f.end_s),
            dmax,
        )?;
        let hi = f.delays_ms.iter().copied().fold(10.0, f64::max);
        let d = density(&f.delays_ms, hi, 60);
        line_panel(
            &p[2],
            &format!(
                "(c) queueing delay during the overlap: mean {:.0} ms",
                f.delay_overlap_ms
            ),
            "ms",
            "density",
            &[("", &d, color(2))],
            (0.0, hi),
            ymax(d.iter().map(|p| p.1), 1e-6),
        )?;
        Ok(())
    })
}

/// The δ̂ `adaptive-um` learned on `link` (median over the measurement window), ms.
pub fn learned_delta_hat(r: &Mehrotra, link: &str) -> Option<f64> {
    let run = r.run_of(link, "adaptive-um")?;
    let mut v: Vec<f64> = run
        .delta_hat
        .iter()
        .filter(|x| x.0 >= r.warmup_s)
        .map(|x| x.1)
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Fig. 23: throughput and queueing delay against a fixed δ̂, per network, with the δ̂
/// `adaptive-um` learned (solid) and the sweep's δ_T (dashed).
pub fn delta_sweep_svg(r: &Mehrotra) -> String {
    let links: Vec<&str> = {
        let mut v: Vec<&str> = vec![];
        for p in &r.delta_sweep {
            if !v.contains(&p.link.as_str()) {
                v.push(&p.link);
            }
        }
        v
    };
    let n = links.len().max(1);
    svg((400 * n as u32, 560), |root| {
        let root = root.titled(
            "Fig. 23: rate and operating queueing delay against a fixed δ̂ (eq. 2)",
            ("sans-serif", 15),
        )?;
        let cols = root.split_evenly((2, n));
        for (j, l) in links.iter().enumerate() {
            let pts: Vec<_> = r.delta_sweep.iter().filter(|p| &p.link == l).collect();
            let lo = pts.iter().map(|p| p.delta_hat_ms).fold(f64::MAX, f64::min) * 0.8;
            let hi = pts.iter().map(|p| p.delta_hat_ms).fold(1.0, f64::max) * 1.25;
            let thr: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.delta_hat_ms, p.throughput_kbps))
                .collect();
            let del: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.delta_hat_ms, p.delay_mean_ms))
                .collect();
            let marks: Vec<(f64, RGBColor, bool)> = [
                learned_delta_hat(r, l).map(|v| (v, color(3), false)),
                r.sweep_of(l)
                    .and_then(|s| s.delay_threshold_ms)
                    .map(|t| (t.value, GREY, true)),
            ]
            .into_iter()
            .flatten()
            .collect();
            for (row, (series, desc)) in
                [(&thr, "throughput (kbit/s)"), (&del, "queueing delay (ms)")]
                    .into_iter()
                    .enumerate()
            {
                let ymaxv = ymax(series.iter().map(|p| p.1), 1.0);
                let mut chart = ChartBuilder::on(&cols[row * n + j])
                    .caption(
                        if row == 0 {
                            l.to_string()
                        } else {
                            String::new()
                        },
                        ("sans-serif", 13),
                    )
                    .margin(8)
                    .x_label_area_size(30)
                    .y_label_area_size(52)
                    .build_cartesian_2d((lo.max(0.1)..hi).log_scale(), 0f64..ymaxv)?;
                chart
                    .configure_mesh()
                    .x_desc("δ̂ (ms)")
                    .y_desc(desc)
                    .x_label_formatter(&|v| format!("{v:.0}"))
                    .y_label_formatter(&|v| format!("{v:.0}"))
                    .light_line_style(LIGHT)
                    .draw()?;
                chart.draw_series(LineSeries::new(
                    series.iter().copied(),
                    color(0).stroke_width(2),
                ))?;
                chart.draw_series(series.iter().map(|&p| Circle::new(p, 3, color(0).filled())))?;
                for &(x, c, dashed) in &marks {
                    if dashed {
                        chart.draw_series(DashedLineSeries::new(
                            vec![(x, 0.0), (x, ymaxv)],
                            4,
                            4,
                            c.stroke_width(1),
                        ))?;
                    } else {
                        chart.draw_series(LineSeries::new(
                            vec![(x, 0.0), (x, ymaxv)],
                            c.stroke_width(1),
                        ))?;
                    }
                }
            }
        }
        Ok(())
    })
}

/// The handover: throughput against capacity, and δ̂, over time.
pub fn handover_svg(r: &Mehrotra) -> String {
    let h = &r.handover;
    let rmax = ymax(h.rate.iter().chain(&h.capacity).map(|p| p.1), 10.0);
    let dmax = ymax(h.delta_hat.iter().map(|p| p.1), 10.0);
    let dh: Vec<(f64, f64)> = {
        // Steps: hold each value until the next.
        let mut v = vec![];
        for (i, &(t, d)) in h.delta_hat.iter().enumerate() {
            if i > 0 {
                v.push((t, h.delta_hat[i - 1].1));
            }
            v.push((t, d));
        }
        if let Some(&(_, d)) = h.delta_hat.last() {
            v.push((h.end_s, d));
        }
        v
    };
    let band_lo = vec![(h.switch_s, h.new_level_ms.0), (h.end_s, h.new_level_ms.0)];
    let band_hi = vec![(h.switch_s, h.new_level_ms.1), (h.end_s, h.new_level_ms.1)];
    let sw = vec![(h.switch_s, 0.0), (h.switch_s, rmax.max(dmax))];
    svg((1100, 520), |root| {
        let root = root.titled(
            &format!("adaptive-um across a handover: {}", h.link),
            ("sans-serif", 15),
        )?;
        let (top, bottom) = root.split_vertically(250);
        line_panel(
            &top,
            "throughput per second and the link's capacity",
            "time (s)",
            "kbit/s",
            &[
                ("throughput", &h.rate, color(0)),
                ("capacity", &h.capacity, GREY),
                ("handover", &sw, color(3)),
            ],
            (0.0, h.end_s),
            rmax,
        )?;
        line_panel(
            &bottom,
            "learned δ̂ (grey: the new network's level, within 2× of its δ̂ alone)",
            "time (s)",
            "δ̂ (ms)",
            &[
                ("δ̂", &dh, color(1)),
                ("wimax-down range", &band_lo, GREY),
                ("", &band_hi, GREY),
                ("handover", &sw, color(3)),
            ],
            (0.0, h.end_s),
            dmax,
        )?;
        Ok(())
    })
}

/// The SVG figures: `(file name, svg)`.
pub fn figures(r: &Mehrotra) -> Vec<(String, String)> {
    let mut out = vec![];
    for s in &r.sweeps {
        out.push((format!("sweep-{}.svg", s.link), figure_svg(s)));
        out.push((format!("fig19-zones-{}.svg", s.link), zones_pdf_svg(s)));
    }
    for l in ["3g-up", "wimax-down"] {
        out.push((format!("controllers-{l}.svg"), controllers_svg(r, l)));
    }
    out.push(("fig22-fairness.svg".into(), fairness_svg(r)));
    out.push(("fig23-delta-hat.svg".into(), delta_sweep_svg(r)));
    out.push(("handover.svg".into(), handover_svg(r)));
    out
}

/// Tables I and II with the paper's rows: `link,scheme,throughput_kbps,utilization,delay_s,…`.
pub fn table_csv(r: &Mehrotra) -> String {
    let mut out = Csv::new(&[
        "link",
        "scheme",
        "throughput_kbps",
        "capacity_kbps",
        "utilization",
        "delay_mean_s",
        "delay_p50_s",
        "delay_p95_s",
        "loss_rate",
        "paper_throughput_kbps",
        "paper_delay_s",
        "paper_loss",
    ]);
    for x in &r.table {
        let paper = paper_row(&x.link, &x.scheme);
        let f4 = |v: f64| format!("{v:.4}");
        out.row(&[
            &x.link,
            &x.scheme,
            &format!("{:.1}", x.throughput_kbps),
            &format!("{:.1}", x.capacity_kbps),
            &f4(x.utilization),
            &f4(x.delay_mean_s),
            &f4(x.delay_p50_s),
            &f4(x.delay_p95_s),
            &format!("{:.5}", x.loss_rate),
            &paper.map_or(String::new(), |p| format!("{}", p.1)),
            &paper.map_or(String::new(), |p| format!("{}", p.2)),
            &paper.map_or(String::new(), |p| format!("{}", p.3)),
        ]);
    }
    out.finish()
}

fn paper_row(link: &str, scheme: &str) -> Option<(&'static str, f64, f64, f64)> {
    let t: &[(&str, f64, f64, f64)] = match link {
        "3g-up" => &PAPER_TABLE_I,
        "wimax-down" => &PAPER_TABLE_II,
        _ => return None,
    };
    t.iter().find(|r| r.0 == scheme).copied()
}

pub fn delta_sweep_csv(r: &Mehrotra) -> String {
    let mut out = Csv::new(&[
        "link",
        "delta_hat_ms",
        "throughput_kbps",
        "utilization",
        "delay_mean_ms",
        "loss_rate",
    ]);
    for p in &r.delta_sweep {
        out.row(&[
            &p.link,
            &p.delta_hat_ms,
            &format!("{:.1}", p.throughput_kbps),
            &format!("{:.4}", p.utilization),
            &format!("{:.2}", p.delay_mean_ms),
            &format!("{:.5}", p.loss_rate),
        ]);
    }
    out.finish()
}

pub fn sensitivity_csv(r: &Mehrotra) -> String {
    let mut out = Csv::new(&[
        "variant",
        "link",
        "throughput_kbps",
        "utilization",
        "delay_mean_ms",
        "loss_rate",
    ]);
    for s in &r.sensitivity {
        out.row(&[
            &s.variant,
            &s.link,
            &format!("{:.1}", s.throughput_kbps),
            &format!("{:.4}", s.utilization),
            &format!("{:.2}", s.delay_mean_ms),
            &format!("{:.5}", s.loss_rate),
        ]);
    }
    out.finish()
}

/// The time series: `figure,series,t_s,value` (controllers' rates and δ̂, fairness, handover).
pub fn timeseries_csv(r: &Mehrotra) -> String {
    let mut out = Csv::new(&["figure", "series", "t_s", "value"]);
    let mut put = |fig: &str, series: &str, pts: &[(f64, f64)]| {
        for (t, v) in pts {
            out.row(&[&fig, &series, &format!("{t:.1}"), &format!("{v:.3}")]);
        }
    };
    for x in &r.table {
        put(&format!("{}/{}", x.link, x.scheme), "send_kbps", &x.rate);
        put(
            &format!("{}/{}", x.link, x.scheme),
            "delta_hat_ms",
            &x.delta_hat,
        );
    }
    let f = &r.fairness;
    put("fairness", "flow1_kbps", &f.rate[0]);
    put("fairness", "flow2_kbps", &f.rate[1]);
    put("fairness", "queue_delay_ms", &f.delay);
    let h = &r.handover;
    put("handover", "throughput_kbps", &h.rate);
    put("handover", "capacity_kbps", &h.capacity);
    put("handover", "delta_hat_ms", &h.delta_hat);
    out.finish()
}

fn table_html(r: &Mehrotra, link: &str, title: &str) -> Markup {
    html! {
        h3 { (title) }
        table {
            tr {
                th { "controller" } th { "throughput kbit/s" } th { "utilisation" }
                th { "delay s (mean)" } th { "delay p95 s" } th { "loss" }
                th { "paper: throughput" } th { "delay" } th { "loss" }
            }
            @for (i, c) in CONTROLLERS.iter().enumerate() {
                @if let Some(x) = r.run_of(link, c) {
                    @let p = paper_row(link, c);
                    tr {
                        td { (swatch(color(i))) (c) }
                        td { (format!("{:.0}", x.throughput_kbps)) }
                        td { (format!("{:.2}", x.utilization)) }
                        td { (format!("{:.3}", x.delay_mean_s)) }
                        td { (format!("{:.3}", x.delay_p95_s)) }
                        td { (format!("{:.3}", x.loss_rate)) }
                        td { (p.map_or("-".into(), |p| format!("{:.0}", p.1))) }
                        td { (p.map_or("-".into(), |p| format!("{:.3}", p.2))) }
                        td { (p.map_or("-".into(), |p| format!("{:.3}", p.3))) }
                    }
                }
            }
        }
    }
}

/// A table of checks, one row per check.
fn checks_table(checks: &[wisp_sim::reproduce::Check]) -> Markup {
    claims_table(checks)
}

/// The page: the claims checked, then every figure and table.
pub fn html(r: &Mehrotra) -> String {
    let title = "Bandwidth management for mobile media delivery (Mehrotra et al.)";
    let checks = r.checks();
    let f = &r.fairness;
    let h = &r.handover;
    let body = html! {
        p.meta {
            "S. Mehrotra, H. Chen, S. Jain, J. Li, B. Li, M. Chen, “Bandwidth Management for \
             Mobile Media Delivery”. Simulated on wisp's mobile-broadband profiles ("
            code { "3g-up" } ", " code { "wimax-down" } ", " code { "cable-up" }
            "), calibrated to the paper's §III measurements; a 30-frames/s video call with audio \
             per controller, per-packet ACKs, 20 ms of propagation delay each way; table runs "
            (format!("{:.0}", r.table_duration_s)) " s, measured after a "
            (format!("{:.0}", r.warmup_s)) "-s warm-up; seed " (r.seed)
            @if r.quick { " (--quick: shorter runs, fewer cases)" }
            "."
        }
        h2 { "The claims, measured" }
        @let t = wisp_sim::reproduce::Tally::of(&checks);
        p { (t.met) " of " (t.applicable) " claims met" (t.na_note()) "." }
        (checks_table(&checks))
        h2 { "Calibration of the profiles" }
        p {
            "Not reproduced claims and not counted above: the " code { "3g-up" } " and "
            code { "wimax-down" } " profiles were tuned to produce these sweep zones, so meeting \
             them shows only that the profiles still match the paper's §III measurements."
        }
        (checks_table(&r.calibration_checks()))
        h2 { "§III: the networks (Figs. 2–5, 19)" }
        @for s in &r.sweeps {
            @let title = NETWORKS
                .iter()
                .find(|n| n.link == s.link)
                .map_or(s.link.as_str(), |n| n.title);
            h3 { (title) }
            pre { (crate::sweep::table(s)) }
            figure { (inline_svg(&figure_svg(s))) }
            figure { (inline_svg(&zones_pdf_svg(s))) }
        }
        h2 { "§IV–V: the controllers (Tables I, II; Figs. 9–18, 20, 21)" }
        (table_html(r, "3g-up", "Table I: 3G uplink"))
        (table_html(r, "wimax-down", "Table II: WiMAX downlink"))
        @for l in ["3g-up", "wimax-down"] {
            figure { (inline_svg(&controllers_svg(r, l))) }
        }
        h2 { "Fig. 22: fairness" }
        p {
            (format!(
                "Measured over {:.0}–{:.0} s (the overlap after {:.0} s of convergence): flow 1 \
                 {:.0} kbit/s, flow 2 {:.0} kbit/s of {:.0}; Jain's index {:.3}; queueing delay \
                 {:.1} ms with two flows, {:.1} ms with one; loss {:.1} %.",
                f.start2_s + f.settle_s,
                f.stop2_s,
                f.settle_s,
                f.overlap_kbps[0],
                f.overlap_kbps[1],
                f.capacity_kbps,
                f.jain,
                f.delay_overlap_ms,
                f.delay_single_ms,
                100.0 * f.loss_rate,
            ))
        }
        figure { (inline_svg(&fairness_svg(r))) }
        h2 { "Fig. 23: a fixed δ̂" }
        p {
            "eq. (2) with δ̂ fixed (" code { "adaptive-um:delta-hat-ms=N" } "); the solid line is \
             the δ̂ " code { "adaptive-um" } " learned on the network (median), the dashed one \
             the sweep's δ_T."
        }
        figure { (inline_svg(&delta_sweep_svg(r))) }
        h2 { "Handover" }
        p {
            (format!(
                "δ̂ {:.0} ms before the switch at {:.0} s; the new network's range {:.0}–{:.0} ms; \
                 reached after {}; utilisation from 30 s after the switch {:.1} %.",
                h.delta_hat_before_ms,
                h.switch_s,
                h.new_level_ms.0,
                h.new_level_ms.1,
                h.settle_s.map_or("never".into(), |s| format!("{s:.1} s")),
                100.0 * h.utilization_after,
            ))
        }
        figure { (inline_svg(&handover_svg(r))) }
        (sensitivity_html(r))
        (notes())
    };
    page(title, body)
}

/// The variants of adaptive-um on Tables I and II's links (not at `--quick`: none).
fn sensitivity_html(r: &Mehrotra) -> Markup {
    html! {
        @if !r.sensitivity.is_empty() {
            h2 { "Sensitivity of adaptive-um (same defaults on every network)" }
            table {
                tr {
                    th { "variant" } th { "network" } th { "throughput kbit/s" }
                    th { "utilisation" } th { "delay ms (mean)" } th { "loss" }
                }
                @for s in &r.sensitivity {
                    tr {
                        td { code { (s.variant) } }
                        td { (s.link) }
                        td { (format!("{:.0}", s.throughput_kbps)) }
                        td { (format!("{:.2}", s.utilization)) }
                        td { (format!("{:.1}", s.delay_mean_ms)) }
                        td { (format!("{:.3}", s.loss_rate)) }
                    }
                }
            }
        }
    }
}

fn notes() -> Markup {
    html! {
        h2 { "Notes" }
        ul {
            li {
                "The paper simulated its controllers on the collected traces; this reproduction \
                 runs them on queue-based profiles whose noise (fades retried by the link layer, \
                 residual loss, jitter) does not depend on the sending rate. Every profile has an \
                 inherent loss of 2–3 % that no controller can avoid, which bounds how far apart \
                 the controllers' loss rates can be."
            }
            li {
                "The paper's CTCP-like and UM rows show 10–75 % loss; here CTCP-like's delay \
                 window never grows at 3G window sizes (Compound TCP's dwnd needs about 16 \
                 segments) and its loss-based part is held down by the random loss, and UM's \
                 operating point k₀/R (40 ms at 5 Mbit/s) fits the WiMAX buffer, so both lose \
                 little beyond the inherent loss."
            }
            li {
                "Delay is the one-way queueing delay: each packet's one-way delay less the \
                 smallest of the run."
            }
            li {
                "Two adaptive-um flows share the link fairly once the newcomer's early calibration \
                 windows, taken while the incumbent's queue moves, have aged out of its \
                 congestion-free set: that takes one to two minutes here, longer than the 20–30 s \
                 the paper reports, so the overlap is measured from 60 s after the second flow \
                 starts."
            }
            li {
                "TFRC's packet size s is the mean size of the call's packets (RFC 5348 §4.1), \
                 audio included, which lowers its rate against a video-only stream."
            }
        }
    }
}


/// The paper in the registry ([`crate::PAPERS`]).
pub const PAPER: Paper = Paper {
    name: "mehrotra",
    summary: "Mehrotra et al.: mobile-broadband characterisation (Figs. 2–5, 19), rate \
              controllers with fixed and learned congestion thresholds (Tables I–II, Figs. 9–23), \
              a handover",
    inputs: Inputs::None("it runs on the mobile-broadband profiles"),
    runs: |r, on_done, cancel| {
        let (quick, seed, jobs) = (r.quick, r.seed, r.jobs);
        Done::boxed(run_or_cancel(&Options { quick, seed, jobs }, on_done, cancel)?, quick)
    },
};

impl Outcome for Done<Mehrotra> {
    fn claims(&self) -> Vec<Check> {
        self.result.checks()
    }

    /// The calibration checks first.
    fn checks(&self) -> Vec<(CheckKind, Check)> {
        let r = &self.result;
        r.calibration_checks()
            .into_iter()
            .map(|c| (CheckKind::Calibration, c))
            .chain(CheckKind::claims(r.checks()))
            .collect()
    }

    fn files(&self) -> Result<OutputDir, OutputError> {
        let r = &self.result;
        let (checks, calibration) = (r.checks(), r.calibration_checks());
        // Its summary.json has no `quick`.
        let mut files = with_summary(
            "mehrotra",
            None,
            r,
            &checks,
            [("calibration", serde_json::json!(&calibration))],
        )?;
        add_report(&mut files, html(r), figures(r));
        for s in &r.sweeps {
            files.add(format!("sweep-{}.csv", s.link), crate::sweep::csv(s));
        }
        files.add("tables.csv", table_csv(r));
        files.add("delta_hat_sweep.csv", delta_sweep_csv(r));
        files.add("sensitivity.csv", sensitivity_csv(r));
        files.add("timeseries.csv", timeseries_csv(r));
        Ok(files)
    }

    /// The calibration checks, the claims, and how many of each are met.
    fn stdout(&self) -> String {
        let r = &self.result;
        let (checks, calibration) = (r.checks(), r.calibration_checks());
        let mut out = String::new();
        let calibrated = write_each(&mut out, "calibration (not a claim): ", &calibration);
        write_each(&mut out, "", &checks);
        let t = wisp_sim::reproduce::Tally::of(&checks);
        let _ = writeln!(
            out,
            "{} of {} claims met{} (calibration checks apart: {calibrated} of {} met)",
            t.met,
            t.applicable,
            t.na_note(),
            calibration.len()
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_sim::reproduce::mehrotra::{Options, run};

    #[test]
    fn every_figure_is_an_svg_and_the_page_names_every_table() {
        let r = run(
            &Options {
                quick: true,
                seed: 1,
                jobs: 2,
            },
            &|_, _| {},
        )
        .unwrap();
        let figs = figures(&r);
        assert_eq!(figs.len(), 2 * r.sweeps.len() + 5);
        assert!(
            figs.iter()
                .all(|(n, s)| n.ends_with(".svg") && s.starts_with("<svg"))
        );
        let page = html(&r);
        assert!(page.contains("Table I") && page.contains("Table II") && page.contains("Fig. 23"));
        assert_eq!(table_csv(&r).lines().count(), 1 + 12);
    }
}
