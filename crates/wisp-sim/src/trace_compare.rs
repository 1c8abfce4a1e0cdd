//! `wisp trace compare A B`: how closely trace A (e.g. one recorded by `wisp saturate`)
//! follows trace B (the one the link replayed) over one time window: the rate error of A
//! relative to B, and the Pearson correlation of their opportunity counts in fixed bins
//! (100 ms by default).
//!
//! Both traces are read on their own time axes (one pass each, no wrap-around). The window is
//! `[from, to)`; by default from the later of the two first timestamps to just after the earlier
//! of the two last ones, so a recording that starts late or ends early is compared only where
//! it exists. Only the bins that lie wholly inside the window enter the correlation; every line
//! in the window enters the rates.

use crate::trace::Trace;
use wisp_core::Duration;

/// The comparison of two traces over one window.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub from_ms: f64,
    pub to_ms: f64,
    pub bin_ms: f64,
    /// Lines of each trace in the window.
    pub a_lines: u64,
    pub b_lines: u64,
    /// Their rates over the window, crediting `bytes_per_line` to each line.
    pub a_mbps: f64,
    pub b_mbps: f64,
    /// `100 (a − b) / b`; `None` when B has no line in the window.
    pub rate_error_pct: Option<f64>,
    /// Pearson correlation of the per-bin counts; `None` with fewer than two whole bins or
    /// when either trace's counts do not vary.
    pub correlation: Option<f64>,
    pub bins: usize,
}

/// Lines per bin of `[from, to)` (ns), and the lines in the window.
fn binned(t: &Trace, from: u64, to: u64, bin: u64) -> (Vec<f64>, u64) {
    let n = ((to - from) / bin) as usize;
    let mut bins = vec![0.0; n];
    let mut total = 0;
    for &(at, k) in t.slots() {
        if at < from || at >= to {
            continue;
        }
        total += u64::from(k);
        let i = ((at - from) / bin) as usize;
        if i < n {
            bins[i] += f64::from(k);
        }
    }
    (bins, total)
}

/// Pearson's correlation coefficient; `None` without variance or with fewer than two points.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (dx, dy) = (x[i] - mx, y[i] - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

/// The most bins a comparison makes.
pub const MAX_BINS: u64 = 10_000_000;

/// Compares `a` with `b` over `[from, to)` (default: where both exist) in bins of `bin`.
pub fn compare(
    a: &Trace,
    b: &Trace,
    from: Option<Duration>,
    to: Option<Duration>,
    bin: Duration,
    bytes_per_line: u64,
) -> Result<Comparison, String> {
    if bin.is_zero() {
        return Err("--bin-ms: the bin must be longer than 0 ms".into());
    }
    let first = |t: &Trace| t.slots().first().map_or(0, |s| s.0);
    let last = |t: &Trace| t.slots().last().map_or(0, |s| s.0);
    let from = from.map_or_else(|| first(a).max(first(b)), Duration::as_nanos);
    // Just after the last line's millisecond (ms traces) or instant.
    let unit_ns = match a.unit() {
        crate::trace::TraceUnit::Millis => 1_000_000,
        crate::trace::TraceUnit::Nanos => 1,
    };
    let to = to.map_or_else(|| last(a).min(last(b)) + unit_ns, Duration::as_nanos);
    if to <= from {
        return Err(format!(
            "the window is empty: from {} ms to {} ms (do the traces overlap in time?)",
            from as f64 / 1e6,
            to as f64 / 1e6
        ));
    }
    let bin_ns = bin.as_nanos();
    // Two series of this many bins are held at once (a 1-ns bin over a 140-s trace asked for
    // a terabyte and aborted).
    let bins = (to - from) / bin_ns;
    if bins > MAX_BINS {
        return Err(format!(
            "--bin-ms: {bins} bins of {} ms in the {} ms window; at most {MAX_BINS} (give a longer bin)",
            bin.as_millis_f64(),
            (to - from) as f64 / 1e6
        ));
    }
    let (xa, a_lines) = binned(a, from, to, bin_ns);
    let (xb, b_lines) = binned(b, from, to, bin_ns);
    let secs = (to - from) as f64 / 1e9;
    let mbps = |lines: u64| (lines * bytes_per_line * 8) as f64 / secs / 1e6;
    let (a_mbps, b_mbps) = (mbps(a_lines), mbps(b_lines));
    Ok(Comparison {
        a: a.name().to_string(),
        b: b.name().to_string(),
        from_ms: from as f64 / 1e6,
        to_ms: to as f64 / 1e6,
        bin_ms: bin.as_millis_f64(),
        a_lines,
        b_lines,
        a_mbps,
        b_mbps,
        rate_error_pct: (b_lines > 0)
            .then(|| 100.0 * (a_lines as f64 - b_lines as f64) / b_lines as f64),
        correlation: pearson(&xa, &xb),
        bins: xa.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceUnit;
    use wisp_core::time::ms;

    fn t(s: &str) -> Trace {
        Trace::parse(s, "t", TraceUnit::Millis).unwrap()
    }

    #[test]
    fn a_trace_against_itself_is_exact() {
        let a = t("0\n0\n50\n120\n130\n130\n250\n399\n");
        let c = compare(&a, &a, None, None, ms(100), 1500).unwrap();
        assert_eq!(c.rate_error_pct, Some(0.0));
        assert!((c.correlation.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!((c.from_ms, c.to_ms), (0.0, 400.0));
        assert_eq!(c.a_lines, 8);
        assert_eq!(c.bins, 4);
        // 8 lines × 1500 B × 8 bit in 0.4 s.
        assert!((c.a_mbps - 0.24).abs() < 1e-12);
    }

    #[test]
    fn rate_error_and_correlation_by_hand() {
        // Bins of 100 ms: B has 2, 1, 3 lines; A has 2, 2, 2 (one line moved to another bin).
        let b = t("10\n20\n150\n210\n220\n230\n");
        let a = t("10\n20\n150\n160\n210\n220\n");
        let c = compare(&a, &b, Some(ms(0)), Some(ms(300)), ms(100), 1500).unwrap();
        assert_eq!((c.a_lines, c.b_lines), (6, 6));
        assert_eq!(c.rate_error_pct, Some(0.0));
        // A's counts do not vary: no correlation.
        assert_eq!(c.correlation, None);
        // A: 3, 1, 4 against B: 2, 1, 3: 8 lines against 6, +33.3%.
        let a = t("10\n20\n30\n150\n210\n220\n230\n240\n");
        let c = compare(&a, &b, Some(ms(0)), Some(ms(300)), ms(100), 1500).unwrap();
        assert!((c.rate_error_pct.unwrap() - 100.0 * 2.0 / 6.0).abs() < 1e-9);
        // x = (3,1,4), mean 8/3; y = (2,1,3), mean 2. Σdxdy = (1/3)(0)+(−5/3)(−1)+(4/3)(1) = 3;
        // Σdx² = 1/9+25/9+16/9 = 42/9; Σdy² = 2. r = 3 / sqrt(84/9) = 0.98198…
        assert!((c.correlation.unwrap() - 3.0 / (84.0f64 / 9.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn the_default_window_is_where_both_exist() {
        let b = t("0\n100\n200\n300\n400\n500\n");
        let a = t("210\n250\n380\n");
        let c = compare(&a, &b, None, None, ms(50), 1500).unwrap();
        assert_eq!((c.from_ms, c.to_ms), (210.0, 381.0));
        assert_eq!((c.a_lines, c.b_lines), (3, 1));
    }

    #[test]
    fn empty_windows_and_bins_are_errors() {
        let a = t("10\n20\n");
        let b = t("100\n200\n");
        assert!(compare(&a, &b, None, None, ms(100), 1500).is_err());
        assert!(compare(&a, &a, None, None, Duration::ZERO, 1500).is_err());
        assert!(compare(&a, &a, Some(ms(30)), Some(ms(30)), ms(10), 1500).is_err());
        // A bin so short the window holds more than MAX_BINS: refused, not allocated.
        let e = compare(
            &a,
            &a,
            None,
            Some(ms(100_000)),
            Duration::from_nanos(1),
            1500,
        );
        assert!(e.unwrap_err().contains("--bin-ms"));
        assert!(
            compare(
                &a,
                &a,
                None,
                Some(ms(10_000)),
                Duration::from_micros(1),
                1500
            )
            .is_ok()
        );
    }
}
