//! # wisp-report
//!
//! Plots (SVG, drawn with `plotters`) and self-contained HTML reports of wisp runs:
//!
//! * [`scatter_svg`]: throughput against self-inflicted delay, one point per scheme, with the
//!   delay axis logarithmic and reversed so that "better" is up and to the right, as in the
//!   Sprout paper's figures;
//! * [`timeseries_svg`]: a run's throughput against the link's capacity, and its queueing delay
//!   (a long run in buckets of bins: a line through their means, shaded from each one's lowest
//!   to its highest bin);
//! * [`bench`](mod@bench): the report of `wisp bench` (the main job): the page
//!   ([`bench_html`]) opens on each scheme's median utilization and self-inflicted delay over
//!   the traces (a table and a plot), then a scatter and a table per trace; each run's time
//!   series is a file of its own that the page shows folded ([`bench::bench_report`] gives
//!   every file);
//! * [`run_html`]: the page of one run, its SVGs inlined (no external files, no scripts);
//! * [`gcc_wifi`]: the figures and page of `wisp reproduce gcc-wifi`;
//! * [`sprout`]: the charts, tables and page of `wisp reproduce sprout`;
//! * [`sweep`]: the table, figures and page of `wisp sweep`;
//! * [`mehrotra`]: the figures and page of `wisp reproduce mehrotra`;
//! * [`wbest`]: the tables, box plots and page of `wisp reproduce wbest`;
//! * [`kwikr`]: the tables, Fig. 5 and page of `wisp reproduce kwikr`;
//! * [`alfalfa`]: the table, figures and page of `wisp reproduce alfalfa`;
//! * [`reproduce`]: the seam of the papers ([`reproduce::Paper`], [`reproduce::Outcome`]) and
//!   [`PAPERS`], their registry: every file `wisp reproduce PAPER --out DIR` (and
//!   `wisp.reproduce(…, out=…)`) writes, of each paper, goes through [`output::OutputDir`] (all
//!   files or none).
//!
//! The pages are `maud` templates (checked at compile time, every spliced value HTML-escaped;
//! only the SVGs drawn here and the shared style sheet go in unescaped), and the CSV files are
//! written through the `csv` crate.

pub mod bench;
pub mod output;
#[macro_use]
pub mod reproduce;
pub mod sweep;

pub use bench::{bench_html, trace_scatter_svg, traces_of};

// The papers of `wisp reproduce` (and `wisp.reproduce`): each a renderer module here (its
// `Paper` and `Outcome`) over its run module in `wisp_sim::reproduce`, in the order
// `wisp reproduce --help` lists them.
papers! {
    gcc_wifi,
    sprout,
    mehrotra,
    wbest,
    kwikr,
    alfalfa,
    rmcat,
}

use maud::{DOCTYPE, Markup, PreEscaped, html};
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use std::ops::Range;
use wisp_sim::metrics::TimeSeries;
use wisp_sim::run::{RunReport, RunResult};

/// Tableau-10 colours, then ten more: scheme *i* of a report is always colour *i*.
const PALETTE: [RGBColor; 20] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(57, 59, 121),
    RGBColor(173, 73, 74),
    RGBColor(99, 121, 57),
    RGBColor(140, 109, 49),
    RGBColor(123, 65, 115),
    RGBColor(82, 84, 163),
    RGBColor(181, 207, 107),
    RGBColor(231, 150, 156),
    RGBColor(107, 110, 207),
    RGBColor(222, 158, 214),
];

/// The colour of the `i`-th scheme.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

pub(crate) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// A logarithmic axis drawn high-to-low (left-to-right), for delays where less is better.
#[derive(Clone, Debug)]
struct ReversedLog {
    lo: f64,
    hi: f64,
}

impl Ranged for ReversedLog {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let v = v.clamp(self.lo, self.hi);
        let frac = (self.hi.ln() - v.ln()) / (self.hi.ln() - self.lo.ln());
        limit.0 + (frac * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        let max = hint.max_num_points().max(2);
        for mults in [&[1.0, 2.0, 5.0][..], &[1.0, 3.0][..], &[1.0][..]] {
            let mut pts = vec![];
            let mut decade = 10f64.powf(self.lo.log10().floor());
            while decade <= self.hi {
                for m in mults {
                    let v = decade * m;
                    if v >= self.lo * 0.999 && v <= self.hi * 1.001 {
                        pts.push(v);
                    }
                }
                decade *= 10.0;
            }
            if pts.len() <= max {
                return pts;
            }
        }
        vec![self.lo, self.hi]
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for ReversedLog {
    fn format(v: &f64) -> String {
        if *v >= 1000.0 {
            format!("{}s", trim(*v / 1000.0))
        } else {
            format!("{}ms", trim(*v))
        }
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One point of a throughput/delay scatter.
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterPoint {
    pub label: String,
    pub throughput_kbps: f64,
    /// Self-inflicted delay; values below 1 ms are drawn at 1 ms.
    pub delay_ms: f64,
    /// Palette index.
    pub color: usize,
}

/// Delays below this are drawn at this value on the logarithmic axis.
pub const DELAY_FLOOR_MS: f64 = 1.0;

/// Throughput (up) against self-inflicted delay (logarithmic, reversed: right is lower), one
/// labelled point per scheme. `capacity_kbps`, if given, is drawn as a dashed line.
pub fn scatter_svg(title: &str, points: &[ScatterPoint], capacity_kbps: Option<f64>) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (760, 480)).into_drawing_area();
        let _ = draw_scatter(&root, title, points, capacity_kbps);
        let _ = root.present();
    }
    out
}

/// The drawing area of a figure.
pub(crate) type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;

/// A chart with the reversed logarithmic delay axis across and a linear axis up.
pub(crate) type DelayChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<ReversedLog, plotters::coord::types::RangedCoordf64>,
>;

/// The delay axis of a scatter of `delays` (each already at least [`DELAY_FLOOR_MS`]): from a
/// power of ten below the least delay / 1.5 to one above 1.5 × the greatest, at least a decade.
pub(crate) fn delay_axis(delays: &[f64]) -> ReversedLog {
    let dmin = delays.iter().copied().fold(f64::INFINITY, f64::min);
    let dmax = delays.iter().copied().fold(0.0, f64::max);
    let lo = if dmin.is_finite() {
        10f64.powf((dmin / 1.5).log10().floor())
    } else {
        1.0
    };
    let hi = 10f64.powf((dmax.max(lo * 10.0) * 1.5).log10().ceil());
    ReversedLog { lo, hi }
}

/// A titled 760 × 480 chart over `x` (self-inflicted delay, reversed) and `0..ymax`, its mesh
/// drawn, the vertical axis described by `y_desc` and labelled by `y_label`.
pub(crate) fn delay_chart<'a, 'b>(
    root: &'a Area<'b>,
    title: &str,
    x: ReversedLog,
    (ymax, y_desc): (f64, &str),
    y_label: &dyn Fn(&f64) -> String,
) -> Result<DelayChart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x, 0f64..ymax)?;
    chart
        .configure_mesh()
        .x_desc("self-inflicted delay (95% end-to-end, log scale; lower is right)")
        .y_desc(y_desc)
        .y_label_formatter(y_label)
        .light_line_style(RGBColor(245, 245, 245))
        .draw()?;
    Ok(chart)
}

fn draw_scatter(
    root: &Area<'_>,
    title: &str,
    points: &[ScatterPoint],
    capacity_kbps: Option<f64>,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let delays: Vec<f64> = points
        .iter()
        .map(|p| p.delay_ms.max(DELAY_FLOOR_MS))
        .collect();
    let axis = delay_axis(&delays);
    let (lo, hi) = (axis.lo, axis.hi);
    let tmax = points
        .iter()
        .map(|p| p.throughput_kbps)
        .chain(capacity_kbps)
        .fold(0.0, f64::max);
    let ymax = if tmax > 0.0 { tmax * 1.15 } else { 1.0 };
    let mut chart = delay_chart(root, title, axis, (ymax, "throughput (kbit/s)"), &|v| {
        format!("{v:.0}")
    })?;
    // Labels are placed in pixels, each at the first place around its point (right, then left;
    // nearest lines first) where it stays on the canvas and overlaps no point, no label placed before
    // it and not the capacity caption.
    let mut placed: Vec<Rect> = vec![];
    let grey = RGBColor(90, 90, 90);
    if let Some(c) = capacity_kbps {
        chart.draw_series(DashedLineSeries::new(
            vec![(hi, c), (lo, c)],
            6,
            4,
            RGBColor(120, 120, 120).stroke_width(1),
        ))?;
        let text = format!("capacity {c:.0} kbit/s");
        let (x, y) = chart.backend_coord(&(hi, c));
        let r = Rect::label(x + 4, y + 2, &text, 12);
        root.draw(&Text::new(
            text,
            (r.x0, r.y0),
            ("sans-serif", 12).into_font().color(&grey),
        ))?;
        placed.push(r);
    }
    let dots: Vec<Dot> = points
        .iter()
        .zip(&delays)
        .map(|(p, &d)| Dot {
            at: (d, p.throughput_kbps),
            label: p.label.clone(),
            floored: p.delay_ms < DELAY_FLOOR_MS,
            color: color(p.color),
        })
        .collect();
    draw_labelled_dots(root, &mut chart, &dots, placed)
}

/// A labelled point of a [`DelayChart`].
pub(crate) struct Dot {
    /// (delay, value), the delay already floored.
    pub(crate) at: (f64, f64),
    pub(crate) label: String,
    /// The delay was below [`DELAY_FLOOR_MS`] (the label says so).
    pub(crate) floored: bool,
    pub(crate) color: RGBColor,
}

/// Draws `dots` (filled, 6 px), then each one's label in its colour where it overlaps no dot
/// and nothing `placed` before it, then the "better ↗" sign.
pub(crate) fn draw_labelled_dots(
    root: &Area<'_>,
    chart: &mut DelayChart<'_, '_>,
    dots: &[Dot],
    mut placed: Vec<Rect>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut at = vec![];
    for d in dots {
        chart.draw_series(std::iter::once(Circle::new(d.at, 6, d.color.filled())))?;
        at.push(chart.backend_coord(&d.at));
    }
    placed.extend(at.iter().map(|&(x, y)| Rect {
        x0: x - 6,
        y0: y - 6,
        x1: x + 6,
        y1: y + 6,
    }));
    for (d, &(x, y)) in dots.iter().zip(&at) {
        let label = if d.floored {
            format!("{} (≤1 ms)", d.label)
        } else {
            d.label.clone()
        };
        let r = label_place(&label, (x, y), root.dim_in_pixel(), &placed);
        root.draw(&Text::new(
            label,
            (r.x0, r.y0),
            ("sans-serif", 13).into_font().color(&d.color),
        ))?;
        placed.push(r);
    }
    root.draw(&Text::new(
        "better ↗",
        (560, 34),
        ("sans-serif", 13).into_font().color(&RGBColor(90, 90, 90)),
    ))?;
    Ok(())
}

/// Where a point's label goes: the first place around the point at `(x, y)` (right, then left;
/// nearest lines first) that stays on a canvas of `width × height` pixels and overlaps nothing
/// `placed`; else the first on the canvas; else the first.
fn label_place(
    label: &str,
    (x, y): (i32, i32),
    (width, height): (u32, u32),
    placed: &[Rect],
) -> Rect {
    let w = Rect::label(0, 0, label, 13).x1;
    let candidates: Vec<Rect> = [(-21, 7), (-35, 21), (-49, 35)]
        .iter()
        .flat_map(|&(up, down)| {
            [
                (x + 4, up),
                (x + 4, down),
                (x - 4 - w, up),
                (x - 4 - w, down),
            ]
        })
        .map(|(x0, dy)| Rect::label(x0, y + dy, label, 13))
        .collect();
    let inside = |r: &Rect| r.x0 >= 0 && r.y0 >= 0 && r.x1 <= width as i32 && r.y1 <= height as i32;
    *candidates
        .iter()
        .find(|r| inside(r) && !placed.iter().any(|q| q.overlaps(r)))
        .or_else(|| candidates.iter().find(|r| inside(r)))
        .unwrap_or(&candidates[0])
}

/// A label's box in pixels. plotters draws a `size`-point font about 0.8 × `size` pixels high;
/// the width is estimated at 0.5 × `size` pixels per character, the height at `size` + 2.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rect {
    x0: i32,
    y0: i32,
    x1: i32,
    y1: i32,
}

impl Rect {
    fn label(x: i32, y: i32, text: &str, size: i32) -> Rect {
        let w = (text.chars().count() as f64 * 0.5 * f64::from(size)).ceil() as i32;
        Rect {
            x0: x,
            y0: y,
            x1: x + w,
            y1: y + size + 2,
        }
    }
    fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
}

/// Consecutive bins of a series taken together ([`buckets`]): the first bin's time, and the
/// mean, the lowest and the highest of the bins' values.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bucket {
    t: f64,
    mean: f64,
    lo: f64,
    hi: f64,
}

/// How many bins a bucket takes so that `bins` bins make at most `n` buckets.
fn bucket_bins(bins: usize, n: usize) -> usize {
    bins.div_ceil(n.max(1)).max(1)
}

/// Down-samples a series in buckets of `k` consecutive bins, each keeping the mean, the lowest
/// and the highest of its bins' values, so that no peak and no trough is lost; `None` for a
/// bucket of bins without a value. With `k` = 1 the series comes back bin for bin.
fn buckets(t: &[f64], v: &[Option<f64>], k: usize) -> Vec<Option<Bucket>> {
    t.chunks(k)
        .zip(v.chunks(k))
        .map(|(tc, vc)| {
            let vals: Vec<f64> = vc.iter().flatten().copied().collect();
            (!vals.is_empty()).then(|| Bucket {
                t: tc[0],
                mean: vals.iter().sum::<f64>() / vals.len() as f64,
                lo: vals.iter().copied().fold(f64::INFINITY, f64::min),
                hi: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            })
        })
        .collect()
}

/// The buckets' means, as a line (drawn over gaps, as the bins' line was).
fn means(b: &[Option<Bucket>]) -> Vec<(f64, f64)> {
    b.iter().flatten().map(|b| (b.t, b.mean)).collect()
}

/// Each stretch of buckets without a gap as a closed band: its highs forward, its lows back.
fn bands(b: &[Option<Bucket>]) -> Vec<Vec<(f64, f64)>> {
    b.split(Option::is_none)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let s: Vec<&Bucket> = s.iter().flatten().collect();
            s.iter()
                .map(|b| (b.t, b.hi))
                .chain(s.iter().rev().map(|b| (b.t, b.lo)))
                .collect()
        })
        .collect()
}

/// A time-axis label: whole seconds as integers, else the shortest decimal to the ms (a 5-s
/// run's half-second ticks read 0.5, 1, 1.5…, not 0, 1, 2, 2).
fn seconds(v: f64) -> String {
    let r = (v * 1000.0).round() / 1000.0;
    if r == 0.0 { "0".into() } else { format!("{r}") }
}

/// A run's time series: throughput of each flow against the link's capacity (top), and each
/// flow's mean queueing delay per bin (bottom). A run of more than `buckets` bins is drawn in
/// buckets of consecutive bins: a line through their means, and shaded from each bucket's
/// lowest to its highest bin, so that the peaks stay.
pub fn timeseries_svg(
    title: &str,
    series: &TimeSeries,
    labels: &[String],
    buckets: usize,
) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 460)).into_drawing_area();
        let _ = draw_timeseries(&root, title, series, labels, buckets);
        let _ = root.present();
    }
    out
}

/// A chart of a time series' top or bottom half: time across, linear up.
type TimeChart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_timeseries(
    root: &Area<'_>,
    title: &str,
    s: &TimeSeries,
    labels: &[String],
    buckets: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 16))?;
    let (top, bottom) = root.split_vertically(250);
    let k = bucket_bins(s.t_s.len(), buckets);
    draw_rates(&top, s, labels, k)?;
    draw_queueing(&bottom, s, k)
}

/// A half of a time series figure: time across to `tmax`, `0..ymax` up, its mesh drawn (the
/// time axis described, and given room for it, when `x_desc` is given).
fn time_chart<'a, 'b>(
    area: &'a Area<'b>,
    (tmax, ymax): (f64, f64),
    x_desc: Option<&str>,
    y_desc: &str,
) -> Result<TimeChart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(if x_desc.is_some() { 34 } else { 24 })
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..tmax, 0f64..ymax)?;
    let mut mesh = chart.configure_mesh();
    if let Some(d) = x_desc {
        mesh.x_desc(d);
    }
    mesh.y_desc(y_desc)
        .x_label_formatter(&|v| seconds(*v))
        .y_label_formatter(&|v| crate::sweep::tick(*v, ymax))
        .max_light_lines(0)
        .draw()?;
    Ok(chart)
}

/// The time axis of a series' charts: to the end of its last bin.
fn time_end(s: &TimeSeries) -> f64 {
    s.t_s.last().copied().unwrap_or(0.0) + s.bin_s
}

/// The top half: the capacity and each flow's throughput, in buckets of `k` bins.
fn draw_rates(
    area: &Area<'_>,
    s: &TimeSeries,
    labels: &[String],
    k: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let cap: Vec<Option<f64>> = s.capacity_kbps.iter().map(|&c| Some(c)).collect();
    let cap = buckets(&s.t_s, &cap, k);
    let thr: Vec<Vec<Option<Bucket>>> = s
        .flows
        .iter()
        .map(|f| {
            let v: Vec<Option<f64>> = f.throughput_kbps.iter().map(|&x| Some(x)).collect();
            buckets(&s.t_s, &v, k)
        })
        .collect();
    let ymax = cap
        .iter()
        .chain(thr.iter().flatten())
        .flatten()
        .map(|b| b.hi)
        .fold(1.0, f64::max)
        * 1.05;
    let mut chart = time_chart(area, (time_end(s), ymax), None, "kbit/s")?;
    let grey = RGBColor(200, 200, 200);
    let spread = grey.mix(0.3);
    if k > 1 {
        // Shaded lighter up to each bucket's highest bin, darker up to its lowest.
        chart.draw_series(AreaSeries::new(
            cap.iter().flatten().map(|b| (b.t, b.hi)),
            0.0,
            spread,
        ))?;
    }
    chart
        .draw_series(AreaSeries::new(means(&cap), 0.0, grey.mix(0.6)))?
        .label("link capacity")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], grey.filled()));
    if k > 1 {
        let lows = cap.iter().flatten().map(|b| (b.t, b.lo));
        chart
            .draw_series(AreaSeries::new(lows, 0.0, spread))?
            .label(format!(
                "shaded: lowest to highest {} s bin of each {} s",
                seconds(s.bin_s),
                seconds(s.bin_s * k as f64)
            ))
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], spread.filled()));
    }
    for (i, b) in thr.iter().enumerate() {
        let c = color(i);
        draw_spread(&mut chart, b, c, k)?;
        chart
            .draw_series(LineSeries::new(means(b), c.stroke_width(1)))?
            .label(format!(
                "throughput {}",
                labels.get(i).map_or("", String::as_str)
            ))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(RGBColor(180, 180, 180))
        .draw()?;
    Ok(())
}

/// A flow's bands from each bucket's lowest to its highest bin, in its colour, when buckets
/// take more than one bin.
fn draw_spread(
    chart: &mut TimeChart<'_, '_>,
    b: &[Option<Bucket>],
    c: RGBColor,
    k: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    if k > 1 {
        chart.draw_series(
            bands(b)
                .into_iter()
                .map(|band| Polygon::new(band, c.mix(0.25).filled())),
        )?;
    }
    Ok(())
}

/// The bottom half: each flow's mean queueing delay per bin, in buckets of `k` bins.
fn draw_queueing(
    area: &Area<'_>,
    s: &TimeSeries,
    k: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let delays: Vec<Vec<Option<Bucket>>> = s
        .flows
        .iter()
        .map(|f| buckets(&s.t_s, &f.queue_delay_ms, k))
        .collect();
    let dmax = delays
        .iter()
        .flatten()
        .flatten()
        .map(|b| b.hi)
        .fold(1.0, f64::max)
        * 1.05;
    let mut chart = time_chart(
        area,
        (time_end(s), dmax),
        Some("time (s)"),
        "queueing delay (ms)",
    )?;
    for (i, b) in delays.iter().enumerate() {
        draw_spread(&mut chart, b, color(i), k)?;
        chart.draw_series(LineSeries::new(means(b), color(i).stroke_width(1)))?;
    }
    Ok(())
}

/// The table of a reproduction's claims: one row per check (claim, expected, measured, met:
/// yes, no, or "n/a" with the reason it cannot fail on its data).
pub(crate) fn claims_table<'a>(
    checks: impl IntoIterator<Item = &'a wisp_sim::reproduce::Check>,
) -> Markup {
    html! {
        // The claims wrap (other tables keep their first column on one line): unwrapped, they
        // pushed `measured` and `met` off the page's width.
        table.claims {
            tr { th { "claim" } th { "expected" } th { "measured" } th { "met" } }
            @for c in checks {
                tr {
                    td { (c.claim) } td { (c.expected) } td { (c.measured) }
                    td {
                        @if let Some(why) = &c.not_applicable {
                            "n/a: " (why)
                        } @else if c.met { "yes" } @else { b { "no" } }
                    }
                }
            }
        }
    }
}

/// A whole page: the doctype, the shared style, `title` as the title and the first heading,
/// then `body`.
pub(crate) fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (title) }
                (body)
            }
        }
    }
    .into_string()
}

/// The colour swatch in front of a scheme's name.
pub(crate) fn swatch(c: RGBColor) -> Markup {
    html! { span.sw style={ "background:" (hex(c)) } {} }
}

/// An inlined SVG drawn by this crate.
pub(crate) fn inline_svg(s: &str) -> PreEscaped<&str> {
    PreEscaped(s)
}

/// A CSV file built in memory through the `csv` crate: a header, then one record per row. The
/// fields come formatted by the caller, so each number keeps its fixed digits; the crate quotes
/// a field only when it must (a comma, a quote or a line break in it).
pub(crate) struct Csv(csv::Writer<Vec<u8>>);

/// Why writing a [`Csv`] cannot fail: it writes to memory, and every row of a table has the
/// header's number of fields (the writer rejects a row that does not — a bug in the caller).
const CSV_IN_MEMORY: &str = "a CSV row of the header's length written to memory";

impl Csv {
    pub(crate) fn new(header: &[&str]) -> Self {
        let mut w = csv::Writer::from_writer(vec![]);
        w.write_record(header).expect(CSV_IN_MEMORY);
        Csv(w)
    }

    /// One record; each field as `Display` prints it.
    pub(crate) fn row(&mut self, fields: &[&dyn std::fmt::Display]) {
        self.0
            .write_record(fields.iter().map(|f| f.to_string()))
            .expect(CSV_IN_MEMORY);
    }

    pub(crate) fn finish(self) -> String {
        let bytes = self.0.into_inner().expect(CSV_IN_MEMORY);
        String::from_utf8(bytes).expect("CSV of UTF-8 fields")
    }
}

pub(crate) fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "–".to_string(), |x| format!("{x:.digits$}"))
}

pub(crate) const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1000px;color:#222}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}\
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left;white-space:nowrap}table.claims td:first-child{white-space:normal}table.matrix td:first-child{white-space:normal;min-width:11em}table.matrix td,table.matrix th{padding:3px 6px}.sw{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:5px}\
details{margin:0.3em 0}summary{cursor:pointer;color:#245}h2{border-bottom:2px solid #ccc;padding-bottom:4px;margin-top:2em}\
.meta{color:#666;font-size:90%}tr.group th{background:#e8eef4}table.runs td{white-space:nowrap}svg{max-width:100%;height:auto}pre{overflow-x:auto}";

pub(crate) fn metrics_table(rows: &[(usize, &RunReport)]) -> Markup {
    html! {
        table {
            tr {
                th { "scheme" } th { "throughput kbit/s" } th { "utilization" }
                th { "self-inflicted ms" } th { "95% e2e ms" } th { "delay p50 ms" }
                th { "delay p95 ms" } th { "loss" }
            }
            @for &(ci, r) in rows {
                // The colour of the flow's lines in the time series (flow i of a run: color(i)).
                @for (fi, f) in r.flows.iter().enumerate() {
                    tr {
                        td { (swatch(color(ci + fi))) (f.scheme) }
                        td { (format!("{:.0}", f.throughput_kbps)) }
                        td { (format!("{:.3}", f.utilization)) }
                        td { (fmt_opt(f.self_inflicted_delay_ms, 0)) }
                        td { (fmt_opt(f.e2e_delay_p95_ms, 0)) }
                        td { (fmt_opt(f.delay_p50_ms, 0)) }
                        td { (fmt_opt(f.delay_p95_ms, 0)) }
                        td { (format!("{:.4}", f.loss_rate)) }
                    }
                }
            }
        }
    }
}

/// `controller.csv` of `wisp run --out` and `wisp send --out`: each flow's controller as it was
/// sampled (every 100 ms of its activity, [`wisp_core::controller::SENDER_SAMPLE_INTERVAL`]):
/// the target rate, the window and the delay target it aims at, each empty where the scheme has
/// none. `gcc`'s target is its bandwidth estimate, the figure a browser reports as
/// `availableOutgoingBitrate`.
pub fn controller_csv(samples: &[wisp_core::controller::SenderSample]) -> String {
    let mut out = Csv::new(&[
        "flow",
        "t_s",
        "target_kbps",
        "window_bytes",
        "delay_target_ms",
    ]);
    let opt = |v: Option<String>| v.unwrap_or_default();
    for s in samples {
        out.row(&[
            &s.flow,
            &format!("{:.3}", s.at.as_secs_f64()),
            &opt(s.target_rate.map(|r| format!("{:.3}", r.kbps_f64()))),
            &opt(s.window.map(|w| w.bytes().to_string())),
            &opt(s.delay_target.map(|d| format!("{:.3}", d.as_millis_f64()))),
        ]);
    }
    out.finish()
}

/// The report of one run: its metrics and time series.
pub fn run_html(result: &RunResult) -> String {
    let r = &result.report;
    let title = format!("{} on {}", r.scheme, r.trace);
    let labels: Vec<String> = r.flows.iter().map(|f| f.scheme.clone()).collect();
    let body = html! {
        p.meta {
            // A scenario file's delays are its links' (its report's delay_ms is 0).
            "reverse path " (r.reverse) "; "
            @if r.queue == "per link" { "delay per link" } @else { (r.delay_ms) " ms one-way delay" }
            "; queue " (r.queue)
            "; loss " (r.loss) "; " (r.duration_s) " s (warm-up " (r.warmup_s) " s); seed " (r.seed)
        }
        (metrics_table(&[(0, r)]))
        (inline_svg(&timeseries_svg(&title, &result.series, &labels, 1200)))
    };
    page(&title, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_log_axis_puts_low_delay_on_the_right() {
        let a = ReversedLog {
            lo: 1.0,
            hi: 1000.0,
        };
        assert_eq!(a.map(&1000.0, (0, 300)), 0);
        assert_eq!(a.map(&1.0, (0, 300)), 300);
        assert_eq!(a.map(&10.0, (0, 300)), 200);
        assert_eq!(ReversedLog::format(&20.0), "20ms");
        assert_eq!(ReversedLog::format(&2500.0), "2.5s");
    }

    #[test]
    fn coincident_points_get_separate_labels() {
        let at = |label: &str| ScatterPoint {
            label: label.into(),
            throughput_kbps: 1000.0,
            delay_ms: 100.0,
            color: 0,
        };
        let svg = scatter_svg("t", &[at("first"), at("second"), at("third")], None);
        // Each label's (x, y), read back from the SVG.
        let pos = |label: &str| {
            let i = svg.find(&format!(">\n{label}\n")).unwrap();
            let tag = &svg[svg[..i].rfind("<text").unwrap()..i];
            let attr = |a: &str| {
                let s = &tag[tag.find(&format!(" {a}=\"")).unwrap() + a.len() + 3..];
                s[..s.find('"').unwrap()].parse::<i32>().unwrap()
            };
            (attr("x"), attr("y"))
        };
        let (a, b, c) = (pos("first"), pos("second"), pos("third"));
        assert!(a != b && b != c && a != c, "{a:?} {b:?} {c:?}");
        let r = |p: (i32, i32), t: &str| Rect::label(p.0, p.1, t, 13);
        assert!(!r(a, "first").overlaps(&r(b, "second")));
        assert!(!r(b, "second").overlaps(&r(c, "third")));
    }

    /// A bucket keeps its bins' mean, lowest and highest value, so a one-bin spike or gap
    /// survives; buckets of one bin give the series back.
    #[test]
    fn down_sampling_keeps_peaks_and_troughs() {
        let t: Vec<f64> = (0..1000).map(|i| f64::from(i) / 10.0).collect();
        let mut v: Vec<Option<f64>> = (0..1000).map(|i| Some(100.0 + f64::from(i % 7))).collect();
        v[503] = Some(9_000.0);
        v[777] = Some(0.0);
        v[40..60].fill(None);
        assert_eq!(bucket_bins(1000, 50), 20);
        let b = buckets(&t, &v, 20);
        assert_eq!(b.len(), 50);
        let spike = b[25].unwrap();
        assert_eq!((spike.t, spike.hi, spike.lo), (50.0, 9_000.0, 100.0));
        assert_eq!(b[38].unwrap().lo, 0.0);
        assert_eq!(b[2], None);
        let plain = b[3].unwrap();
        let mean = (60..80).map(|i| 100.0 + f64::from(i % 7)).sum::<f64>() / 20.0;
        assert_eq!((plain.lo, plain.hi, plain.mean), (100.0, 106.0, mean));
        // The line goes over the gap; the bands stop at it.
        assert_eq!(means(&b).len(), 49);
        let bands = bands(&b);
        assert_eq!(bands.iter().map(Vec::len).collect::<Vec<_>>(), [4, 94]);
        assert!(bands[1].contains(&(50.0, 9_000.0)) && bands[1].contains(&(76.0, 0.0)));
        // Buckets of one bin: the series itself.
        let whole = buckets(&t[..5], &v[..5], bucket_bins(5, 1200));
        assert_eq!(
            means(&whole),
            [
                (0.0, 100.0),
                (0.1, 101.0),
                (0.2, 102.0),
                (0.3, 103.0),
                (0.4, 104.0)
            ]
        );
    }

    #[test]
    fn time_ticks_and_flow_swatches_are_distinct() {
        let ticks: Vec<String> = (0..=10).map(|i| seconds(i as f64 * 0.5)).collect();
        assert_eq!(ticks[..4], ["0", "0.5", "1", "1.5"]);
        assert_eq!(seconds(60.0), "60");
        assert_eq!(seconds(-0.0), "0");
        // Three flows of one run: three colours in the table, as in the plot.
        let link = "const:3mbps"
            .parse::<wisp_sim::link::LinkSpec>()
            .unwrap()
            .load()
            .unwrap();
        let cbr: wisp_core::scheme::SchemeConfig = "cbr".parse().unwrap();
        let mut sc = wisp_sim::sim::Scenario::new(link, cbr.clone());
        sc.flows = vec![wisp_sim::sim::FlowSpec::new(cbr); 3];
        sc.run.duration = wisp_core::Duration::from_secs(1);
        let result = wisp_sim::run::run(&sc, None).unwrap();
        let html = run_html(&result);
        for i in 0..3 {
            assert!(html.contains(&swatch(color(i)).into_string()), "{i}");
        }
    }

    /// A long claim wraps, so that `measured` and `met` stay within the page's width (the
    /// first column of every other table stays on one line).
    #[test]
    fn claims_wrap_so_their_verdicts_stay_on_the_page() {
        let claim = "explicit state: alfalfa loses fewer frames to missing references than \
                     sprout-conventional on Verizon-LTE-short.down, 5% loss";
        let c = wisp_sim::reproduce::Check {
            claim: claim.into(),
            expected: "< 1".into(),
            measured: "0".into(),
            met: true,
            ..Default::default()
        };
        let na = c.clone().not_applicable("the runs are identical");
        let html = page("t", claims_table([&c, &na]));
        assert!(html.contains("<table class=\"claims\">"), "{html}");
        assert!(html.contains("<td>yes</td>"), "{html}");
        assert!(
            html.contains("<td>n/a: the runs are identical</td>"),
            "{html}"
        );
        assert!(STYLE.contains("table.claims td:first-child{white-space:normal}table.matrix td:first-child{white-space:normal;min-width:11em}table.matrix td,table.matrix th{padding:3px 6px}"));
        // The rule comes after the general one, which it overrides.
        let general = STYLE.find("td:first-child,th:first-child{").unwrap();
        assert!(STYLE.find("table.claims td:first-child").unwrap() > general);
    }

    #[test]
    fn scatter_labels_every_point() {
        let pts = vec![
            ScatterPoint {
                label: "ideal".into(),
                throughput_kbps: 5000.0,
                delay_ms: 0.0,
                color: 0,
            },
            ScatterPoint {
                label: "cbr".into(),
                throughput_kbps: 1000.0,
                delay_ms: 150.0,
                color: 1,
            },
        ];
        let svg = scatter_svg("t", &pts, Some(5027.0));
        assert!(svg.starts_with("<svg"));
        assert!(
            svg.contains("ideal (≤1 ms)") && svg.contains("\ncbr\n"),
            "{svg}"
        );
        assert_eq!(svg.matches("<circle").count(), 2);
    }
}
