//! Link traces: delivery-opportunity timestamps, Mahimahi's format and the nanosecond variant.
//!
//! A Mahimahi trace has one integer per line, a millisecond timestamp from the start of the trace;
//! each line is one opportunity to deliver one MTU (1500 bytes); repeated timestamps are several
//! opportunities in the same millisecond. The trace repeats with period = its last timestamp,
//! exactly as `mm-link` replays it (the last line of one pass and the first line of the next may
//! fall on the same instant). The nanosecond format (libwebrtc's `.rx` files) is the same with
//! nanosecond timestamps.
//!
//! Parsing rejects, with the file and line: a line that is not a non-negative integer, a
//! timestamp smaller than the one before, an empty trace, and a trace whose last timestamp is 0
//! (it would have no period). Blank lines are ignored.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use wisp_core::{Duration, Instant};

/// The unit of a trace's timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceUnit {
    /// Mahimahi: milliseconds.
    Millis,
    /// libwebrtc `.rx`: nanoseconds.
    Nanos,
}

impl TraceUnit {
    /// The unit a file's name implies: `.rx` is nanoseconds, anything else milliseconds.
    pub fn for_path(path: &Path) -> TraceUnit {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("rx"))
        {
            TraceUnit::Nanos
        } else {
            TraceUnit::Millis
        }
    }
    fn nanos(self) -> u64 {
        match self {
            TraceUnit::Millis => 1_000_000,
            TraceUnit::Nanos => 1,
        }
    }
}

/// Why a trace could not be loaded. Displays as `FILE:LINE: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct TraceError {
    pub file: String,
    pub line: Option<usize>,
    pub message: String,
}

/// The longest trace whose [`Trace::stats`] callers take (about 115 days): the statistics keep
/// one counter per second of the period (a 2-line trace ending at 1e12 ms asked for 8 GB).
pub const MAX_STATS_PERIOD: Duration = Duration::from_secs(10_000_000);

/// A loaded trace: opportunity instants grouped by time, and the period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    name: String,
    path: Option<PathBuf>,
    unit: TraceUnit,
    /// `(time in ns from the start of one pass, opportunities at that time)`, strictly increasing.
    slots: Vec<(u64, u32)>,
    lines: usize,
    period_ns: u64,
    /// How far into the trace time 0 lies (see [`Trace::shifted`]), less than the period.
    shift_ns: u64,
}

impl Trace {
    /// Loads a trace file.
    pub fn load(path: &Path, unit: TraceUnit) -> Result<Arc<Trace>, TraceError> {
        let file = path.display().to_string();
        let text = crate::limits::read_text_capped(path, crate::limits::MAX_TRACE_BYTES, "trace")
            .map_err(|message| TraceError {
            file: file.clone(),
            line: None,
            message,
        })?;
        let mut t = Trace::parse(&text, &file, unit)?;
        t.path = Some(path.to_path_buf());
        t.name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(file);
        Ok(Arc::new(t))
    }

    /// Parses trace text; `file` names it in errors.
    pub fn parse(text: &str, file: &str, unit: TraceUnit) -> Result<Trace, TraceError> {
        let err = |line: usize, message: String| TraceError {
            file: file.to_string(),
            line: Some(line),
            message,
        };
        // Counted before anything is parsed or kept (a newline per line, the last may lack it).
        let newlines = text.bytes().filter(|&b| b == b'\n').count();
        let raw_lines = newlines + usize::from(!text.is_empty() && !text.ends_with('\n'));
        if raw_lines > crate::limits::MAX_TRACE_LINES {
            return Err(TraceError {
                file: file.to_string(),
                line: None,
                message: format!(
                    "the trace has more than the limit of {} lines",
                    crate::limits::MAX_TRACE_LINES
                ),
            });
        }
        let scale = unit.nanos();
        let mut slots: Vec<(u64, u32)> = Vec::with_capacity(text.len() / 6);
        let mut lines = 0usize;
        let mut last_raw: Option<u64> = None;
        for (i, raw) in text.lines().enumerate() {
            let v: u64 = match plain_digits(raw) {
                Some(v) => v,
                None => {
                    let s = raw.trim();
                    if s.is_empty() {
                        continue;
                    }
                    s.parse().map_err(|_| {
                        err(
                            i + 1,
                            format!(
                                "expected a non-negative integer timestamp, found `{}`",
                                truncate(s, 40)
                            ),
                        )
                    })?
                }
            };
            if let Some(prev) = last_raw {
                if v < prev {
                    return Err(err(
                        i + 1,
                        format!("timestamp {v} is smaller than the previous one ({prev})"),
                    ));
                }
            }
            last_raw = Some(v);
            let ns = v
                .checked_mul(scale)
                .ok_or_else(|| err(i + 1, format!("timestamp {v} is too large")))?;
            match slots.last_mut() {
                Some((t, n)) if *t == ns => *n += 1,
                _ => slots.push((ns, 1)),
            }
            lines += 1;
        }
        let Some(&(last, _)) = slots.last() else {
            return Err(TraceError {
                file: file.to_string(),
                line: None,
                message: "trace has no timestamps".into(),
            });
        };
        if last == 0 {
            return Err(TraceError {
                file: file.to_string(),
                line: None,
                message:
                    "the last timestamp is 0, so the trace has no period (it must end after time 0)"
                        .into(),
            });
        }
        Ok(Trace {
            name: file.to_string(),
            path: None,
            unit,
            slots,
            lines,
            period_ns: last,
            shift_ns: 0,
        })
    }

    /// The same trace started `by` into it: its opportunity at time `by` (modulo the period) is
    /// at time 0 of the copy, as when a flow starts some time after the link began replaying the
    /// trace (`wisp link` starts before `wisp send`).
    pub fn shifted(&self, by: Duration) -> Trace {
        Trace {
            shift_ns: (self.shift_ns + by.as_nanos() % self.period_ns) % self.period_ns,
            ..self.clone()
        }
    }

    /// How far into the trace time 0 lies.
    pub fn shift(&self) -> Duration {
        Duration::from_nanos(self.shift_ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
    pub fn unit(&self) -> TraceUnit {
        self.unit
    }
    /// Number of opportunities (lines) in one pass.
    pub fn lines(&self) -> usize {
        self.lines
    }
    /// The period: the last timestamp.
    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period_ns)
    }
    /// Opportunities in one pass grouped by time: `(offset from the pass start, count)`.
    pub fn slots(&self) -> &[(u64, u32)] {
        &self.slots
    }

    /// A cursor at the first opportunity at or after `t`.
    pub fn cursor_at(self: &Arc<Self>, t: Instant) -> TraceCursor {
        let mut c = TraceCursor {
            trace: Arc::clone(self),
            idx: 0,
            pass: 0,
        };
        c.seek(t);
        c
    }

    /// Statistics of one pass, crediting `bytes_per_line` to each opportunity. They count per
    /// second of the period: callers refuse a trace longer than [`MAX_STATS_PERIOD`].
    pub fn stats(&self, bytes_per_line: u64) -> TraceStats {
        let secs = self.period_ns as f64 / 1e9;
        let bins = (self.period_ns.div_ceil(1_000_000_000)).max(1) as usize;
        let mut per_sec = vec![0u64; bins];
        let mut max_gap = 0u64;
        let mut gaps_100ms = 0usize;
        let mut prev: Option<u64> = None;
        for &(t, n) in &self.slots {
            let b = ((t / 1_000_000_000) as usize).min(bins - 1);
            per_sec[b] += u64::from(n);
            if let Some(p) = prev {
                let g = t - p;
                max_gap = max_gap.max(g);
                if g >= 100_000_000 {
                    gaps_100ms += 1;
                }
            }
            prev = Some(t);
        }
        let mut mbps: Vec<f64> = per_sec
            .iter()
            .map(|&n| (n * bytes_per_line * 8) as f64 / 1e6)
            .collect();
        let zero_seconds = per_sec.iter().filter(|&&n| n == 0).count();
        let q = wisp_core::stats::quantiles(&mut mbps, &[0.05, 0.5, 0.95, 1.0]);
        TraceStats {
            name: self.name.clone(),
            unit: self.unit,
            lines: self.lines,
            duration_s: secs,
            mean_mbps: (self.lines as u64 * bytes_per_line * 8) as f64 / secs / 1e6,
            opportunities_per_s: self.lines as f64 / secs,
            p5_1s_mbps: q[0].unwrap_or(0.0),
            median_1s_mbps: q[1].unwrap_or(0.0),
            p95_1s_mbps: q[2].unwrap_or(0.0),
            max_1s_mbps: q[3].unwrap_or(0.0),
            zero_capacity_seconds: zero_seconds,
            max_gap_ms: max_gap as f64 / 1e6,
            gaps_over_100ms: gaps_100ms,
            bytes_per_line,
        }
    }
}

/// The value of a line that is nothing but 1 to 19 ASCII digits (every trace line in practice;
/// 19 digits always fit a `u64`), without `str::trim` and `str::parse`; `None` sends anything
/// else (spaces, a sign, a longer number, junk) to the general path, which gives the same value
/// or the error.
fn plain_digits(line: &str) -> Option<u64> {
    let b = line.as_bytes();
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    b.iter().try_fold(0u64, |v, &c| {
        c.is_ascii_digit().then(|| v * 10 + u64::from(c - b'0'))
    })
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Statistics of one pass of a trace (`wisp trace stats`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TraceStats {
    pub name: String,
    pub unit: TraceUnit,
    pub lines: usize,
    /// The period (last timestamp), seconds.
    pub duration_s: f64,
    /// lines × bytes_per_line × 8 / duration.
    pub mean_mbps: f64,
    pub opportunities_per_s: f64,
    /// Percentiles of the rate over 1-second bins from 0 to the last timestamp.
    pub p5_1s_mbps: f64,
    pub median_1s_mbps: f64,
    pub p95_1s_mbps: f64,
    pub max_1s_mbps: f64,
    /// 1-second bins with no opportunity.
    pub zero_capacity_seconds: usize,
    /// The longest time between consecutive opportunities.
    pub max_gap_ms: f64,
    /// Gaps of at least 100 ms between consecutive opportunities (outages).
    pub gaps_over_100ms: usize,
    pub bytes_per_line: u64,
}

/// Walks a trace's opportunities forever, pass after pass.
#[derive(Debug, Clone)]
pub struct TraceCursor {
    trace: Arc<Trace>,
    idx: usize,
    pass: u64,
}

impl TraceCursor {
    /// The current opportunity group: its instant and count.
    pub fn peek(&self) -> (Instant, u32) {
        let (raw, n) = self.raw();
        (Instant::from_nanos(raw - self.trace.shift_ns), n)
    }

    /// The current group's time on the unshifted trace.
    fn raw(&self) -> (u64, u32) {
        let (t, n) = self.trace.slots[self.idx];
        (self.pass * self.trace.period_ns + t, n)
    }

    /// Moves to the next opportunity group.
    pub fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.trace.slots.len() {
            self.idx = 0;
            self.pass += 1;
        }
    }

    /// Moves forward to the first group at or after `t` (never backwards).
    pub fn seek(&mut self, t: Instant) {
        let t = t.as_nanos() + self.trace.shift_ns;
        if self.raw().0 >= t {
            return;
        }
        let p = self.trace.period_ns;
        // Jump whole passes, then binary-search within the pass.
        let mut pass = t / p;
        let off = t - pass * p;
        let mut idx = self.trace.slots.partition_point(|&(s, _)| s < off);
        if idx == self.trace.slots.len() {
            idx = 0;
            pass += 1;
        }
        // At a pass boundary the previous pass's last group (at offset = period) comes first.
        if idx == 0 && pass > 0 && pass * p == t {
            pass -= 1;
            idx = self.trace.slots.len() - 1;
        }
        if (pass, idx) > (self.pass, self.idx) {
            self.pass = pass;
            self.idx = idx;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path reads what `str::parse` reads, and leaves everything else to it.
    #[test]
    fn plain_digits_agree_with_parse() {
        for line in [
            "0",
            "7",
            "0012",
            "9999999999999999999",
            "18446744073709551615",
        ] {
            if let Some(v) = plain_digits(line) {
                assert_eq!(Ok(v), line.parse::<u64>(), "{line}");
            }
        }
        assert_eq!(
            plain_digits("9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        for line in [
            "",
            " 1",
            "1 ",
            "+1",
            "-1",
            "1a",
            "18446744073709551616",
            "１",
        ] {
            assert_eq!(plain_digits(line), None, "{line:?}");
        }
        let t = Trace::parse("1\n 2\n\n+3\r\n3\n", "t", TraceUnit::Millis).unwrap();
        assert_eq!(t.lines(), 4);
    }

    #[test]
    fn a_trace_over_the_line_limit_is_refused_before_parsing() {
        let max = crate::limits::MAX_TRACE_LINES;
        let at_limit = "1\n".repeat(max);
        assert_eq!(
            Trace::parse(&at_limit, "t", TraceUnit::Millis)
                .unwrap()
                .lines(),
            max
        );
        let over = format!("{at_limit}x");
        let e = Trace::parse(&over, "t", TraceUnit::Millis).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t: the trace has more than the limit of 8000000 lines"
        );
        let e = Trace::load(Path::new("/dev/zero"), TraceUnit::Millis).unwrap_err();
        assert!(e.message.contains("limit of 64 MiB"), "{e}");
    }

    fn parse(s: &str) -> Result<Trace, TraceError> {
        Trace::parse(s, "t.trace", TraceUnit::Millis)
    }

    #[test]
    fn groups_and_period() {
        let t = parse("0\n5\n5\n10\n").unwrap();
        assert_eq!(t.lines(), 4);
        assert_eq!(t.period(), Duration::from_millis(10));
        assert_eq!(t.slots(), &[(0, 1), (5_000_000, 2), (10_000_000, 1)]);
    }

    #[test]
    fn a_shifted_trace_starts_later_in_the_same_opportunities() {
        let t = parse("1\n2\n5\n").unwrap();
        let times = |t: &Arc<Trace>, from: u64, n: usize| {
            let mut c = t.cursor_at(Instant::from_millis(from));
            (0..n)
                .map(|_| {
                    let at = c.peek().0.as_millis();
                    c.advance();
                    at
                })
                .collect::<Vec<_>>()
        };
        let s = Arc::new(t.shifted(Duration::from_millis(2)));
        assert_eq!(s.shift(), Duration::from_millis(2));
        // Unshifted 1, 2, 5, 6, 7, 10, 11, 12, … less 2.
        assert_eq!(times(&s, 0, 7), [0, 3, 4, 5, 8, 9, 10]);
        assert_eq!(times(&s, 4, 3), [4, 5, 8]);
        assert_eq!(times(&s, 11, 2), [13, 14]);
        // Shifts add up, modulo the period; a whole period is no shift.
        let s2 = Arc::new(s.shifted(Duration::from_millis(6)));
        assert_eq!(s2.shift(), Duration::from_millis(3));
        assert_eq!(times(&s2, 0, 4), [2, 3, 4, 7]);
        assert_eq!(t.shifted(Duration::from_millis(10)), t);
    }

    #[test]
    fn cursor_loops_like_mahimahi() {
        let t = Arc::new(parse("0\n5\n5\n10\n").unwrap());
        let mut c = t.cursor_at(Instant::ZERO);
        let mut seen = vec![];
        for _ in 0..6 {
            seen.push((c.peek().0.as_millis(), c.peek().1));
            c.advance();
        }
        assert_eq!(seen, [(0, 1), (5, 2), (10, 1), (10, 1), (15, 2), (20, 1)]);
        let c = t.cursor_at(Instant::from_millis(16));
        assert_eq!(c.peek(), (Instant::from_millis(20), 1));
        let c = t.cursor_at(Instant::from_millis(20));
        assert_eq!(c.peek(), (Instant::from_millis(20), 1));
        let mut c = t.cursor_at(Instant::from_millis(20));
        c.advance();
        assert_eq!(c.peek(), (Instant::from_millis(20), 1));
        let c = t.cursor_at(Instant::from_micros(20_001));
        assert_eq!(c.peek(), (Instant::from_millis(25), 2));
    }

    #[test]
    fn errors_name_file_and_line() {
        assert_eq!(
            parse("1\n2\nx3\n").unwrap_err().to_string(),
            "t.trace:3: expected a non-negative integer timestamp, found `x3`"
        );
        assert_eq!(
            parse("1\n5\n4\n").unwrap_err().to_string(),
            "t.trace:3: timestamp 4 is smaller than the previous one (5)"
        );
        assert_eq!(
            parse("\n\n").unwrap_err().to_string(),
            "t.trace: trace has no timestamps"
        );
        assert!(
            parse("0\n0\n")
                .unwrap_err()
                .to_string()
                .contains("no period")
        );
        assert!(
            parse("-1\n")
                .unwrap_err()
                .to_string()
                .starts_with("t.trace:1:")
        );
        assert!(parse("1.5\n").is_err());
        let e = Trace::load(Path::new("/nonexistent/x.trace"), TraceUnit::Millis).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/x.trace: cannot read the trace"),
            "{e}"
        );
    }

    #[test]
    fn nanosecond_traces() {
        let t = Trace::parse("0\n1000000\n2000000\n", "w.rx", TraceUnit::Nanos).unwrap();
        assert_eq!(t.period(), Duration::from_millis(2));
        assert_eq!(
            TraceUnit::for_path(Path::new("a/google-wifi-3mbps.rx")),
            TraceUnit::Nanos
        );
        assert_eq!(
            TraceUnit::for_path(Path::new("a/x.down")),
            TraceUnit::Millis
        );
    }
}
