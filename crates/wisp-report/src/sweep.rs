//! Figures, tables and page of `wisp sweep` (Mehrotra et al. Figs. 2–7 and 19).

use crate::Csv;
use maud::html;
use plotters::prelude::*;
use std::fmt::Write as _;
use wisp_core::stats::quantile_sorted;
use wisp_sim::sweep::{RatePoint, Summary, Sweep, Zone};

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Res = Result<(), Box<dyn std::error::Error>>;

const GREY: RGBColor = RGBColor(90, 90, 90);
const FREE: RGBColor = RGBColor(44, 160, 44);
const CONGESTED: RGBColor = RGBColor(214, 39, 40);
const TRANSITION: RGBColor = RGBColor(255, 127, 14);

fn zone_color(z: Zone) -> RGBColor {
    match z {
        Zone::CongestionFree => FREE,
        Zone::Transition => TRANSITION,
        Zone::Congested => CONGESTED,
    }
}

/// A tick label with as many decimals as an axis reaching `max` needs.
pub(crate) fn tick(v: f64, max: f64) -> String {
    let d = if max <= 0.1 {
        // Enough to tell ticks a tenth of `max` apart (an axis to 0.001 showed 0.000 on all).
        (-(max / 10.0).log10()).ceil().clamp(3.0, 9.0) as usize
    } else if max <= 2.0 {
        2
    } else if max <= 20.0 {
        1
    } else {
        0
    };
    format!("{v:.d$}")
}

pub(crate) fn svg(size: (u32, u32), draw: impl FnOnce(&Area<'_>) -> Res) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        let _ = root.fill(&WHITE);
        let _ = draw(&root);
        let _ = root.present();
    }
    out
}

/// One panel of statistics against rate: for each rate a vertical line from the minimum to the
/// maximum, the 10th percentile (circle), median (diamond), 90th percentile (cross) and mean
/// (star), coloured by zone — the paper's Fig. 2 style. `scale` converts the values for display.
fn stats_panel(
    area: &Area<'_>,
    title: &str,
    y_desc: &str,
    points: &[(&RatePoint, Summary)],
    scale: f64,
) -> Res {
    let xmax = points.iter().map(|p| p.0.rate_kbps).fold(1.0, f64::max) * 1.05;
    // At least 1 ms or a loss rate of 0.001: a panel of zeros gets a readable axis.
    let ymax = points.iter().map(|p| p.1.max * scale).fold(1e-3, f64::max) * 1.08;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 13))
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..xmax, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("rate (kbit/s)")
        .y_desc(y_desc)
        .x_label_formatter(&|v| format!("{v:.0}"))
        .y_label_formatter(&|v| tick(*v, ymax))
        .light_line_style(RGBColor(245, 245, 245))
        .draw()?;
    for (p, s) in points {
        let x = p.rate_kbps;
        let c = zone_color(p.zone);
        let y = |v: f64| v * scale;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, y(s.min)), (x, y(s.max))],
            c.mix(0.6).stroke_width(1),
        )))?;
        chart.draw_series(std::iter::once(Circle::new(
            (x, y(s.p10)),
            4,
            c.stroke_width(1),
        )))?;
        chart.draw_series(std::iter::once(Cross::new(
            (x, y(s.p90)),
            4,
            c.stroke_width(1),
        )))?;
        // Diamond (median) and star (mean) drawn as paths in pixel offsets.
        chart.draw_series(std::iter::once(
            EmptyElement::at((x, y(s.p50)))
                + Polygon::new(vec![(0, -5), (5, 0), (0, 5), (-5, 0)], c.filled()),
        ))?;
        let star = EmptyElement::at((x, y(s.mean)))
            + PathElement::new(vec![(-5, 0), (5, 0)], BLACK.stroke_width(1))
            + PathElement::new(vec![(0, -5), (0, 5)], BLACK.stroke_width(1))
            + PathElement::new(vec![(-4, -4), (4, 4)], BLACK.stroke_width(1))
            + PathElement::new(vec![(-4, 4), (4, -4)], BLACK.stroke_width(1));
        chart.draw_series(std::iter::once(star))?;
    }
    Ok(())
}

/// The paper's Fig. 2 layout: (a) queueing delay and (b) 32-packet loss rate against rate; (c)
/// and (d) the same for the congestion-free zone only.
pub fn figure_svg(sw: &Sweep) -> String {
    let delay: Vec<(&RatePoint, Summary)> = sw
        .points
        .iter()
        .filter_map(|p| Some((p, p.delay_ms?)))
        .collect();
    let loss: Vec<(&RatePoint, Summary)> = sw
        .points
        .iter()
        .filter_map(|p| Some((p, p.loss_window?)))
        .collect();
    fn free<'a>(v: &[(&'a RatePoint, Summary)]) -> Vec<(&'a RatePoint, Summary)> {
        v.iter()
            .filter(|p| p.0.zone == Zone::CongestionFree)
            .copied()
            .collect()
    }
    svg((1100, 760), |root| {
        let root = root.titled(
            &format!(
                "{}: one-way queueing delay and loss rate against sending rate ({} B packets, {} s per rate)",
                sw.link, sw.packet_bytes, sw.duration_s
            ),
            ("sans-serif", 15),
        )?;
        let p = root.split_evenly((2, 2));
        stats_panel(
            &p[0],
            "(a) one-way queueing delay",
            "delay (s)",
            &delay,
            1e-3,
        )?;
        stats_panel(
            &p[1],
            "(b) loss rate over 32 packets",
            "loss rate",
            &loss,
            1.0,
        )?;
        stats_panel(
            &p[2],
            "(c) delay, congestion-free zone",
            "delay (s)",
            &free(&delay),
            1e-3,
        )?;
        stats_panel(
            &p[3],
            "(d) loss, congestion-free zone",
            "loss rate",
            &free(&loss),
            1.0,
        )?;
        Ok(())
    })
}

/// A density of `values` over `bins` equal bins of `[0, hi)`; values at or above `hi` go to the
/// last bin.
pub fn density(values: &[f64], hi: f64, bins: usize) -> Vec<(f64, f64)> {
    let w = hi / bins as f64;
    let mut c = vec![0usize; bins];
    for &v in values {
        let b = ((v / w).floor().max(0.0) as usize).min(bins - 1);
        c[b] += 1;
    }
    let n = values.len().max(1) as f64;
    c.iter()
        .enumerate()
        .map(|(i, &k)| ((i as f64 + 0.5) * w, k as f64 / n / w))
        .collect()
}

fn pdf_panel(
    area: &Area<'_>,
    title: &str,
    x_desc: &str,
    sets: &[(&str, &[f64], RGBColor)],
    hi: f64,
    threshold: Option<f64>,
) -> Res {
    let dens: Vec<Vec<(f64, f64)>> = sets.iter().map(|s| density(s.1, hi, 60)).collect();
    let ymax = dens.iter().flatten().map(|p| p.1).fold(1e-9, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 13))
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..hi, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("density")
        .x_label_formatter(&|v| tick(*v, hi))
        .y_label_formatter(&|v| tick(*v, ymax))
        .light_line_style(RGBColor(245, 245, 245))
        .draw()?;
    for ((label, values, c), d) in sets.iter().zip(&dens) {
        if values.is_empty() {
            continue;
        }
        chart
            .draw_series(LineSeries::new(d.iter().copied(), c.stroke_width(2)))?
            .label(format!("{label} ({} samples)", values.len()))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
    }
    if let Some(t) = threshold {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(t, 0.0), (t, ymax)],
                5,
                4,
                GREY.stroke_width(1),
            ))?
            .label("threshold")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], GREY.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .border_style(RGBColor(200, 200, 200))
        .background_style(WHITE.mix(0.9))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

/// Fig. 19: the densities of queueing delay and 32-packet loss in the congestion-free and
/// congested zones, with δ_T and ε_T.
pub fn zones_pdf_svg(sw: &Sweep) -> String {
    let s = &sw.samples;
    let p99 = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        quantile_sorted(&v, 0.99).unwrap_or(0.0)
    };
    let dhi = p99(&s.free_delay_ms)
        .max(p99(&s.congested_delay_ms))
        .max(10.0)
        * 1.1;
    let lhi = p99(&s.free_loss).max(p99(&s.congested_loss)).max(0.1) * 1.1;
    svg((1100, 420), |root| {
        let root = root.titled(
            &format!(
                "{}: congestion-free zone (≤ {}) vs congested zone (≥ {})",
                sw.link,
                sw.free_max_kbps
                    .map_or("-".into(), |v| format!("{v:.0} kbit/s")),
                sw.congested_min_kbps
                    .map_or("-".into(), |v| format!("{v:.0} kbit/s"))
            ),
            ("sans-serif", 15),
        )?;
        let (l, r) = root.split_horizontally(550);
        pdf_panel(
            &l,
            "queueing delay",
            "delay (ms)",
            &[
                ("congestion-free", &s.free_delay_ms, FREE),
                ("congested", &s.congested_delay_ms, CONGESTED),
            ],
            dhi,
            sw.delay_threshold_ms.map(|t| t.value),
        )?;
        pdf_panel(
            &r,
            "loss rate over 32 packets",
            "loss rate",
            &[
                ("congestion-free", &s.free_loss, FREE),
                ("congested", &s.congested_loss, CONGESTED),
            ],
            lhi,
            sw.loss_threshold.map(|t| t.value),
        )?;
        Ok(())
    })
}

fn opt(s: Option<Summary>, f: impl Fn(&Summary) -> f64, digits: usize) -> String {
    s.map_or_else(String::new, |s| format!("{:.*}", digits, f(&s)))
}

/// One row per rate.
pub fn csv(sw: &Sweep) -> String {
    let mut out = Csv::new(&[
        "rate_kbps",
        "zone",
        "packets",
        "delivered",
        "throughput_kbps",
        "delay_min_ms",
        "delay_p10_ms",
        "delay_p50_ms",
        "delay_p90_ms",
        "delay_mean_ms",
        "delay_max_ms",
        "loss_rate",
        "loss32_min",
        "loss32_p10",
        "loss32_p50",
        "loss32_p90",
        "loss32_mean",
        "loss32_max",
    ]);
    for p in &sw.points {
        let d = p.delay_ms;
        let l = p.loss_window;
        out.row(&[
            &format!("{:.1}", p.rate_kbps),
            &p.zone.as_str(),
            &p.packets,
            &p.delivered,
            &format!("{:.1}", p.throughput_kbps),
            &opt(d, |s| s.min, 2),
            &opt(d, |s| s.p10, 2),
            &opt(d, |s| s.p50, 2),
            &opt(d, |s| s.p90, 2),
            &opt(d, |s| s.mean, 2),
            &opt(d, |s| s.max, 2),
            &format!("{:.5}", p.loss_rate),
            &opt(l, |s| s.min, 5),
            &opt(l, |s| s.p10, 5),
            &opt(l, |s| s.p50, 5),
            &opt(l, |s| s.p90, 5),
            &opt(l, |s| s.mean, 5),
            &opt(l, |s| s.max, 5),
        ]);
    }
    out.finish()
}

/// Fig. 19's densities: `zone,metric,x,density`.
pub fn zones_pdf_csv(sw: &Sweep) -> String {
    let s = &sw.samples;
    let mut out = Csv::new(&["zone", "metric", "x", "density"]);
    let dhi = s
        .free_delay_ms
        .iter()
        .chain(&s.congested_delay_ms)
        .fold(10.0, |a: f64, &b| a.max(b));
    for (zone, metric, v, hi) in [
        ("free", "delay_ms", &s.free_delay_ms, dhi),
        ("congested", "delay_ms", &s.congested_delay_ms, dhi),
        ("free", "loss32", &s.free_loss, 1.0),
        ("congested", "loss32", &s.congested_loss, 1.0),
    ] {
        if v.is_empty() {
            continue;
        }
        for (x, d) in density(v, hi, 100) {
            out.row(&[&zone, &metric, &format!("{x:.4}"), &format!("{d:.6}")]);
        }
    }
    out.finish()
}

/// The table `wisp sweep` prints.
pub fn table(sw: &Sweep) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — {} B packets, {} s per rate; d: one-way queueing delay (ms) relative to the smallest one-way delay ({:.1} ms); l32: loss rate over sliding windows of 32 packets",
        sw.link, sw.packet_bytes, sw.duration_s, sw.base_owd_ms
    );
    let _ = writeln!(
        out,
        "{:>9} {:>10} {:>9} | {:>7} {:>7} {:>7} {:>7} {:>7} | {:>7} {:>7} {:>7} {:>7} {:>7}",
        "rate kbps",
        "zone",
        "thr kbps",
        "d p10",
        "d p50",
        "d p90",
        "d mean",
        "d max",
        "loss",
        "l32 p10",
        "l32 p50",
        "l32 p90",
        "l32 max",
    );
    for p in &sw.points {
        let d = p.delay_ms;
        let l = p.loss_window;
        let _ = writeln!(
            out,
            "{:>9.0} {:>10} {:>9.0} | {:>7} {:>7} {:>7} {:>7} {:>7} | {:>7.4} {:>7} {:>7} {:>7} {:>7}",
            p.rate_kbps,
            p.zone.as_str(),
            p.throughput_kbps,
            opt(d, |s| s.p10, 0),
            opt(d, |s| s.p50, 0),
            opt(d, |s| s.p90, 0),
            opt(d, |s| s.mean, 0),
            opt(d, |s| s.max, 0),
            p.loss_rate,
            opt(l, |s| s.p10, 3),
            opt(l, |s| s.p50, 3),
            opt(l, |s| s.p90, 3),
            opt(l, |s| s.max, 3),
        );
    }
    let _ = writeln!(
        out,
        "congestion-free up to {}; congested from {}",
        sw.free_max_kbps
            .map_or("(none)".into(), |v| format!("{v:.0} kbit/s")),
        sw.congested_min_kbps
            .map_or("(none)".into(), |v| format!("{v:.0} kbit/s"))
    );
    if let Some(t) = sw.delay_threshold_ms {
        let _ = writeln!(
            out,
            "delay threshold δ_T = {:.0} ms ({:.1} % of congestion-free samples above{})",
            t.value,
            100.0 * t.free_above,
            t.congested_below.map_or(String::new(), |c| format!(
                ", {:.1} % of congested samples at or below",
                100.0 * c
            ))
        );
    }
    if let Some(t) = sw.loss_threshold {
        let _ = writeln!(
            out,
            "loss threshold ε_T = {:.3} ({:.1} % of congestion-free windows above{})",
            t.value,
            100.0 * t.free_above,
            t.congested_below.map_or(String::new(), |c| format!(
                ", {:.1} % of congested windows at or below",
                100.0 * c
            ))
        );
    }
    out
}

/// A page with the table and both figures.
pub fn html(sw: &Sweep) -> String {
    let title = format!("wisp sweep: {}", sw.link);
    let body = html! {
        pre { (table(sw)) }
        figure {
            (crate::inline_svg(&figure_svg(sw)))
            figcaption {
                "Per rate: minimum to maximum (line), 10th percentile (circle), median (diamond), \
                 90th percentile (cross), mean (star); green congestion-free, orange transition, \
                 red congested (Mehrotra et al. Fig. 2)."
            }
        }
        figure {
            (crate::inline_svg(&zones_pdf_svg(sw)))
            figcaption {
                "Densities of the congestion-free and congested samples with the separating \
                 thresholds (Fig. 19)."
            }
        }
    };
    crate::page(&title, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ticks of an axis (tenths of its top) read as different numbers, also on a panel
    /// whose values are all zero (its axis reaches 0.00108).
    #[test]
    fn tick_labels_tell_the_ticks_apart() {
        for max in [0.00108, 0.005, 0.03, 0.1, 0.3, 1.5, 12.0, 300.0] {
            let labels: Vec<String> = (0..=10).map(|i| tick(max * i as f64 / 10.0, max)).collect();
            let mut distinct = labels.clone();
            distinct.dedup();
            assert_eq!(distinct.len(), labels.len(), "{max}: {labels:?}");
        }
    }

    #[test]
    fn density_integrates_to_one() {
        let v = [0.5, 1.5, 1.6, 9.9, 50.0];
        let d = density(&v, 10.0, 10);
        let mass: f64 = d.iter().map(|p| p.1 * 1.0).sum();
        assert!((mass - 1.0).abs() < 1e-12);
        // 50 is clamped into the last bin with 9.9.
        assert_eq!(d[9].1, 0.4);
        assert_eq!(d[1].1, 0.4);
    }
}
