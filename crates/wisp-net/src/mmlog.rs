//! Per-direction link logs in Mahimahi's `mm-link` format, and `wisp analyze`.
//!
//! Format (one event per line, after `#` header lines; timestamps are whole milliseconds since
//! the link's trace started, as in `mm-link --uplink-log`):
//!
//! ```text
//! # wisp link (downlink) [traces/cellular/Verizon-LTE-short.down] > DIR/downlink.log
//! # command line: …
//! # queue: infinite
//! # delay: 20 ms
//! # init timestamp: <ms since the Unix epoch when the link started>
//! # base timestamp: 0
//! <t> + <bytes>              a packet reaches the bottleneck queue (logged even if then dropped)
//! <t> # <bytes>              a delivery opportunity, used or not
//! <t> - <bytes> <delay>      a departure; delay = departure − reaching the queue, in ms (µs precision)
//! <t> d <npkts> <nbytes>     a drop (queue limit, AQM, random loss)
//! ```
//!
//! Differences from `mm-link`, all so the numbers mean what wisp's simulator means:
//! sizes are IP bytes and an opportunity is 1500 bytes (Mahimahi counts the 4-byte TUN header,
//! 1504); the delay field has microsecond precision (departures happen at exact instants, not
//! on a 1-ms timer); CoDel's dequeue drops and `--loss` drops are logged (`mm-link` logs
//! neither); on a rate link (`const:`, `steps:`, `wifi-outage`) one `#` line per millisecond
//! carries the bytes the rate offers in it; a per-packet trace (`trace-packets:`) writes each
//! line with the bytes it credits. Mahimahi's own logs parse too (their base timestamp is
//! subtracted). Both write events as time goes, so [`analyze`] refuses a time that goes back
//! from the line before, or one before the base timestamp, naming the line.
//!
//! [`analyze`] computes, from one log: throughput, capacity and utilisation as
//! `mm-throughput-graph` does (over the span of all events), per-packet queueing-delay
//! percentiles (nearest rank, as everywhere in wisp), Mahimahi's 95th-percentile *signal delay*
//! with `mm-delay-graph`'s definition and index rule, and what the trace offered while the
//! queue was backlogged (the rate a saturating sender can get).

use serde::Serialize;
use std::io::{self, BufRead, Write};
use wisp_core::stats::quantiles;
use wisp_core::{Duration, Instant};
use wisp_sim::link::LinkModel;
use wisp_sim::trace::TraceCursor;

/// The opportunities of a link, in order (for `#` lines).
#[derive(Debug)]
enum Opportunities {
    /// A trace: its cursor and the bytes of one line.
    Trace(TraceCursor, u64),
    /// Any other link: one line per millisecond, with what it offers in it; `next` is the next
    /// millisecond to write.
    Rate {
        link: LinkModel,
        next: Instant,
    },
    None,
}

/// Writes one direction's log, in time order: an event learnt of after a later one was written
/// (across the emulated 802.11 medium an arrival is written when the packet reaches the AP,
/// while a frame the medium gave up on, or a departure, is known only when the medium is next
/// advanced) is written at the millisecond of the latest line instead, so `wisp analyze` and
/// Mahimahi's tools read the log.
#[derive(Debug)]
pub struct LogWriter<W: Write> {
    out: W,
    opportunities: Opportunities,
    /// The millisecond of the latest line written.
    last_ms: u64,
    /// Opportunities are written up to (excluding) this instant.
    written_to: Instant,
}

fn ms(t: Instant) -> u64 {
    t.as_millis()
}

/// The millisecond to write an event at `t` at: `t`'s, or the latest line's if that is later.
fn in_order(last_ms: &mut u64, t: Instant) -> u64 {
    *last_ms = ms(t).max(*last_ms);
    *last_ms
}

impl<W: Write> LogWriter<W> {
    /// Writes the header. `header` lines are written after `# ` prefixes.
    pub fn new(mut out: W, link: &LinkModel, header: &[String]) -> io::Result<Self> {
        for h in header {
            writeln!(out, "# {h}")?;
        }
        let opportunities = match link.trace_lines() {
            Some((t, per_line)) => Opportunities::Trace(t.cursor_at(Instant::ZERO), per_line),
            None if link.is_unlimited() => Opportunities::None,
            None => Opportunities::Rate {
                link: link.clone(),
                next: Instant::ZERO,
            },
        };
        Ok(LogWriter {
            out,
            opportunities,
            written_to: Instant::ZERO,
            last_ms: 0,
        })
    }

    /// Writes every opportunity before `t` not yet written.
    pub fn opportunities_until(&mut self, t: Instant) -> io::Result<()> {
        if t <= self.written_to {
            return Ok(());
        }
        match &mut self.opportunities {
            Opportunities::Trace(c, per_line) => loop {
                let (at, n) = c.peek();
                if at >= t {
                    break;
                }
                let at = in_order(&mut self.last_ms, at);
                for _ in 0..n {
                    writeln!(self.out, "{at} # {per_line}")?;
                }
                c.advance();
            },
            Opportunities::Rate { link, next } => {
                while *next + Duration::from_millis(1) <= t {
                    let b = link.capacity_bins(
                        *next,
                        *next + Duration::from_millis(1),
                        Duration::from_millis(1),
                    );
                    let bytes = b.first().copied().unwrap_or(0.0).round() as u64;
                    if bytes > 0 {
                        let at = in_order(&mut self.last_ms, *next);
                        writeln!(self.out, "{at} # {bytes}")?;
                    }
                    *next += Duration::from_millis(1);
                }
            }
            Opportunities::None => {}
        }
        self.written_to = t;
        Ok(())
    }

    pub fn arrival(&mut self, t: Instant, bytes: usize) -> io::Result<()> {
        self.opportunities_until(t + Duration::from_nanos(1))?;
        let at = in_order(&mut self.last_ms, t);
        writeln!(self.out, "{at} + {bytes}")
    }

    pub fn departure(&mut self, t: Instant, bytes: usize, delay: Duration) -> io::Result<()> {
        self.opportunities_until(t + Duration::from_nanos(1))?;
        let us = delay.as_micros();
        let at = in_order(&mut self.last_ms, t);
        writeln!(self.out, "{at} - {bytes} {}.{:03}", us / 1000, us % 1000)
    }

    pub fn drop_packets(&mut self, t: Instant, packets: usize, bytes: usize) -> io::Result<()> {
        self.opportunities_until(t + Duration::from_nanos(1))?;
        let at = in_order(&mut self.last_ms, t);
        writeln!(self.out, "{at} d {packets} {bytes}")
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Writes the opportunities up to `end` and flushes.
    pub fn finish(&mut self, end: Instant) -> io::Result<()> {
        self.opportunities_until(end)?;
        self.out.flush()
    }
}

/// What `wisp analyze` reports for one log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogAnalysis {
    pub file: String,
    /// From the first to the last event, as Mahimahi's scripts count it.
    pub duration_s: f64,
    pub capacity_kbps: f64,
    pub throughput_kbps: f64,
    pub ingress_kbps: f64,
    pub utilization: f64,
    pub packets_arrived: u64,
    pub packets_departed: u64,
    pub packets_dropped: u64,
    /// Per-packet delay from reaching the queue to departure (nearest-rank percentiles).
    pub delay_mean_ms: Option<f64>,
    pub delay_p50_ms: Option<f64>,
    pub delay_p95_ms: Option<f64>,
    pub delay_p99_ms: Option<f64>,
    /// Mahimahi's 95th-percentile signal delay (`mm-delay-graph`).
    pub signal_delay_p95_ms: Option<f64>,
    /// Time the queue held at least one packet.
    pub backlogged_s: f64,
    /// Bytes of the opportunities that fell while the queue was backlogged, per backlogged
    /// second: what the trace offered a sender that kept the queue busy.
    pub offered_while_backlogged_kbps: Option<f64>,
    /// Bytes that departed while the queue was backlogged, per backlogged second.
    pub delivered_while_backlogged_kbps: Option<f64>,
}

/// A parse error with its line (0: the whole file, e.g. one with no events).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            // Not "FILE:0:": no line is at fault.
            0 => write!(f, "{}: {}", self.file, self.message),
            n => write!(f, "{}:{n}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for LogError {}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Event {
    Arrival(u64),
    Opportunity(u64),
    Departure(u64, f64),
    Drop(u64, u64),
}

/// The lines of a log whose events fall between `from` and `to` (ms since the Unix epoch; the
/// log's times count from its `init timestamp` header), with its header lines: for
/// [`analyze`] over part of a run (`wisp browser-call`: the call, without the browsers'
/// start-up).
pub fn window(text: &str, from: f64, to: f64) -> String {
    let init = text
        .lines()
        .find_map(|l| l.strip_prefix("# init timestamp:"))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    let (from, to) = (from - init, to - init);
    let mut out = String::with_capacity(text.len());
    for l in text.lines() {
        let t = l
            .split_ascii_whitespace()
            .next()
            .and_then(|t| t.parse::<f64>().ok());
        if l.starts_with('#') || t.is_some_and(|t| t >= from && t <= to) {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// Reads a log (wisp's or Mahimahi's) and computes [`LogAnalysis`].
pub fn analyze(reader: impl BufRead, file: &str) -> Result<LogAnalysis, LogError> {
    let events = read_events(reader, file)?;
    Ok(summarize(&events, file))
}

/// The events of a log, each at its time from the log's base timestamp (ms), in time order.
fn read_events(reader: impl BufRead, file: &str) -> Result<Vec<(f64, Event)>, LogError> {
    let err = |line: usize, message: String| LogError {
        file: file.to_string(),
        line,
        message,
    };
    let mut base: f64 = 0.0;
    let mut events: Vec<(f64, Event)> = Vec::new();
    // The previous event's time and line: a log is written as time goes, so time never goes
    // back (events of one millisecond share its whole-ms stamp).
    let mut prev: Option<(f64, usize)> = None;
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| err(i + 1, format!("cannot read: {e}")))?;
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(h) = l.strip_prefix('#') {
            if let Some(v) = h.trim().strip_prefix("base timestamp:") {
                base = v
                    .trim()
                    .parse()
                    .map_err(|_| err(i + 1, format!("bad base timestamp `{}`", v.trim())))?;
            }
            continue;
        }
        let f: Vec<&str> = l.split_ascii_whitespace().collect();
        let num = |k: usize| -> Result<f64, LogError> {
            let s = f
                .get(k)
                .ok_or_else(|| err(i + 1, format!("expected more fields in `{l}`")))?;
            let v: f64 = s
                .parse()
                .map_err(|_| err(i + 1, format!("`{s}` is not a number")))?;
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(err(i + 1, format!("`{s}` is not a non-negative number")))
            }
        };
        let stamp = num(0)?;
        let t = stamp - base;
        if t < 0.0 {
            return Err(err(
                i + 1,
                format!("time {stamp} ms is before the log's base timestamp {base} ms"),
            ));
        }
        if let Some((pt, pl)) = prev
            && t < pt
        {
            return Err(err(
                i + 1,
                format!(
                    "time {stamp} ms goes back from line {pl}'s {} ms (a log's events are in time order)",
                    pt + base
                ),
            ));
        }
        prev = Some((t, i + 1));
        let ev = match f.get(1).copied() {
            Some("+") => Event::Arrival(num(2)? as u64),
            Some("#") => Event::Opportunity(num(2)? as u64),
            Some("-") => Event::Departure(num(2)? as u64, num(3)?),
            Some("d") => Event::Drop(num(2)? as u64, num(3)? as u64),
            _ => return Err(err(i + 1, format!("unknown event in `{l}`"))),
        };
        events.push((t, ev));
    }
    if events.is_empty() {
        return Err(err(
            0,
            "no events (not a log of `wisp link --log` or mm-link, or an empty one)".into(),
        ));
    }
    Ok(events)
}

/// [`LogAnalysis`] of a log's events (at least one).
fn summarize(events: &[(f64, Event)], file: &str) -> LogAnalysis {
    // In time order (checked above); events of one millisecond in the order written.
    let first = events[0].0;
    let last = events[events.len() - 1].0;
    let dur_s = (last - first) / 1e3;
    let Totals {
        cap,
        out,
        inb,
        arrived,
        departed,
        dropped,
        mut delays,
        departures,
        backlogged_ms,
        offered_bl,
        delivered_bl,
    } = Totals::of(events, last);
    let kbps = |bytes: u64| {
        if dur_s > 0.0 {
            bytes as f64 * 8.0 / dur_s / 1e3
        } else {
            0.0
        }
    };
    let mean = (!delays.is_empty()).then(|| delays.iter().sum::<f64>() / delays.len() as f64);
    let q = quantiles(&mut delays, &[0.5, 0.95, 0.99]);
    let bl_s = backlogged_ms / 1e3;
    LogAnalysis {
        file: file.to_string(),
        duration_s: dur_s,
        capacity_kbps: kbps(cap),
        throughput_kbps: kbps(out),
        ingress_kbps: kbps(inb),
        utilization: if cap > 0 {
            out as f64 / cap as f64
        } else {
            0.0
        },
        packets_arrived: arrived,
        packets_departed: departed,
        packets_dropped: dropped,
        delay_mean_ms: mean,
        delay_p50_ms: q[0],
        delay_p95_ms: q[1],
        delay_p99_ms: q[2],
        signal_delay_p95_ms: signal_delay_p95(&departures),
        backlogged_s: bl_s,
        offered_while_backlogged_kbps: (bl_s > 0.0).then(|| offered_bl as f64 * 8.0 / bl_s / 1e3),
        delivered_while_backlogged_kbps: (bl_s > 0.0)
            .then(|| delivered_bl as f64 * 8.0 / bl_s / 1e3),
    }
}

/// What a log's events add up to: bytes of capacity, out and in, packets, each departure's
/// delay, and the time the queue held packets with what was offered and delivered meanwhile.
struct Totals {
    cap: u64,
    out: u64,
    inb: u64,
    arrived: u64,
    departed: u64,
    dropped: u64,
    delays: Vec<f64>,
    departures: Vec<(f64, f64)>,
    backlogged_ms: f64,
    offered_bl: u64,
    delivered_bl: u64,
}

impl Totals {
    /// The totals of `events`, the last at `last` ms.
    fn of(events: &[(f64, Event)], last: f64) -> Totals {
        let (mut cap, mut out, mut inb) = (0u64, 0u64, 0u64);
        let (mut arrived, mut departed, mut dropped) = (0u64, 0u64, 0u64);
        let mut delays = Vec::new();
        let mut departures: Vec<(f64, f64)> = Vec::new();
        // Queue occupancy (packets) from the event stream. Sums saturate: a hostile log cannot
        // overflow them.
        let mut queued: i64 = 0;
        let mut backlog_since: Option<f64> = None;
        let mut backlogged_ms = 0.0;
        let (mut offered_bl, mut delivered_bl) = (0u64, 0u64);
        for &(t, ev) in events {
            match ev {
                Event::Arrival(b) => {
                    arrived += 1;
                    inb = inb.saturating_add(b);
                    queued = queued.saturating_add(1);
                }
                Event::Opportunity(b) => {
                    cap = cap.saturating_add(b);
                    if queued > 0 {
                        offered_bl = offered_bl.saturating_add(b);
                    }
                }
                Event::Departure(b, d) => {
                    departed += 1;
                    out = out.saturating_add(b);
                    delays.push(d);
                    departures.push((t, d));
                    if queued > 0 {
                        delivered_bl = delivered_bl.saturating_add(b);
                    }
                    queued = queued.saturating_sub(1);
                }
                Event::Drop(n, _) => {
                    dropped = dropped.saturating_add(n);
                    queued = queued.saturating_sub(i64::try_from(n).unwrap_or(i64::MAX));
                }
            }
            match (queued > 0, backlog_since) {
                (true, None) => backlog_since = Some(t),
                (false, Some(s)) => {
                    backlogged_ms += t - s;
                    backlog_since = None;
                }
                _ => {}
            }
        }
        if let Some(s) = backlog_since {
            backlogged_ms += last - s;
        }
        Totals {
            cap,
            out,
            inb,
            arrived,
            departed,
            dropped,
            delays,
            departures,
            backlogged_ms,
            offered_bl,
            delivered_bl,
        }
    }
}

/// `mm-delay-graph`'s signal delay: for every millisecond `ts` from the first to the last send
/// time, the least delay of a packet that entered the queue at `ts`, or (if none did) the next
/// millisecond's value plus one; the element at index ⌊0.95·M⌋ of the sorted values.
///
/// The values of a gap of `k` milliseconds before a send time with value `v` are `v + 1, …,
/// v + k`, so the M values are kept as points and runs (memory proportional to the packets, not
/// to the log's span) and the order statistic is found by bisection on the count of values at or
/// below a bound.
fn signal_delay_p95(departures: &[(f64, f64)]) -> Option<f64> {
    let mut by_send: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
    for &(t, d) in departures {
        let ts = (t - d).floor() as i64;
        let e = by_send.entry(ts).or_insert(d);
        if d < *e {
            *e = d;
        }
    }
    // Points (the send times' own values) and runs (v, k): the k values v + 1, …, v + k of the
    // milliseconds before a send time, back to the previous one.
    let mut points = Vec::with_capacity(by_send.len());
    let mut runs: Vec<(f64, u64)> = Vec::new();
    let mut prev: Option<i64> = None;
    for (&ts, &v) in &by_send {
        points.push(v);
        if let Some(p) = prev {
            let k = u64::try_from(ts.saturating_sub(p).saturating_sub(1)).unwrap_or(0);
            if k > 0 {
                runs.push((v, k));
            }
        }
        prev = Some(ts);
    }
    let m = points.len() as u64 + runs.iter().map(|r| r.1).fold(0u64, u64::saturating_add);
    let target = ((0.95 * m as f64) as u64).min(m.saturating_sub(1)) + 1;
    let count = |y: f64| -> u64 {
        let p = points.iter().filter(|&&v| v <= y).count() as u64;
        let r = runs
            .iter()
            .map(|&(v, k)| {
                let j = (y - v).floor();
                if j < 1.0 { 0 } else { (j as u64).min(k) }
            })
            .fold(0u64, u64::saturating_add);
        p.saturating_add(r)
    };
    let lo0 = points.iter().copied().fold(f64::INFINITY, f64::min);
    let hi0 = points
        .iter()
        .copied()
        .chain(runs.iter().map(|&(v, k)| v + k as f64))
        .fold(f64::NEG_INFINITY, f64::max);
    if !(lo0.is_finite() && hi0.is_finite()) {
        return None;
    }
    let (mut lo, mut hi) = (lo0, hi0);
    for _ in 0..200 {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if count(mid) >= target {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    if count(lo) >= target {
        hi = lo;
    }
    // The answer is the smallest value at or above the bound found.
    let eps = 1e-9 * hi.abs().max(1.0);
    let from_points = points.iter().copied().filter(|&v| v >= hi - eps);
    let from_runs = runs.iter().filter_map(|&(v, k)| {
        let j = (hi - eps - v).ceil().max(1.0);
        (j <= k as f64).then_some(v + j)
    });
    from_points
        .chain(from_runs)
        .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.min(v))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use wisp_sim::trace::{Trace, TraceUnit};

    #[test]
    fn a_window_keeps_the_header_and_the_events_in_it() {
        let log = "# init timestamp: 1000\n# base timestamp: 0\n0 # 250\n5 + 100\n9 - 100 4.0\n12 # 250\n";
        assert_eq!(
            window(log, 1005.0, 1010.0),
            "# init timestamp: 1000\n# base timestamp: 0\n5 + 100\n9 - 100 4.0\n"
        );
    }

    #[test]
    fn writes_the_mahimahi_format() {
        let link = LinkModel::from_trace(Arc::new(
            Trace::parse("1\n1\n3\n", "t", TraceUnit::Millis).unwrap(),
        ));
        let mut w = LogWriter::new(Vec::new(), &link, &["queue: infinite".into()]).unwrap();
        w.arrival(Instant::from_micros(500), 1500).unwrap();
        w.departure(Instant::from_millis(1), 1500, Duration::from_micros(500))
            .unwrap();
        w.drop_packets(Instant::from_millis(2), 1, 100).unwrap();
        w.finish(Instant::from_millis(7)).unwrap();
        let s = String::from_utf8(w.out).unwrap();
        assert_eq!(
            s,
            "# queue: infinite\n0 + 1500\n1 # 1500\n1 # 1500\n1 - 1500 0.500\n2 d 1 100\n3 # 1500\n4 # 1500\n4 # 1500\n6 # 1500\n"
        );
    }

    /// An event learnt of late (the 802.11 medium's drop at 9.5 ms, after an arrival at 10.2 ms
    /// was written) goes at the latest line's millisecond: the log stays in time order and
    /// reads back.
    #[test]
    fn an_event_learnt_late_keeps_the_log_in_order() {
        let link = LinkModel::Unlimited;
        let mut w = LogWriter::new(Vec::new(), &link, &[]).unwrap();
        w.arrival(Instant::from_micros(9_000), 100).unwrap();
        w.arrival(Instant::from_micros(10_200), 200).unwrap();
        w.drop_packets(Instant::from_micros(9_500), 1, 100).unwrap();
        w.departure(
            Instant::from_micros(11_000),
            200,
            Duration::from_micros(800),
        )
        .unwrap();
        w.finish(Instant::from_millis(12)).unwrap();
        let s = String::from_utf8(w.out).unwrap();
        assert_eq!(s, "9 + 100\n10 + 200\n10 d 1 100\n11 - 200 0.800\n");
        let a = analyze(s.as_bytes(), "log").unwrap();
        assert_eq!(a.packets_dropped, 1);
    }

    #[test]
    fn analysis_of_a_small_log() {
        // Two packets queue at 0; opportunities at 1, 2, 3 (3 unused); one more packet at 10,
        // served at 12 (opportunity at 12).
        let log = "# base timestamp: 100\n\
                   100 + 1500\n100 + 1500\n101 # 1500\n101 - 1500 1\n102 # 1500\n102 - 1500 2\n\
                   103 # 1500\n110 + 1500\n112 # 1500\n112 - 1500 2\n";
        let a = analyze(log.as_bytes(), "x").unwrap();
        assert_eq!(a.duration_s, 0.012);
        assert_eq!((a.packets_arrived, a.packets_departed), (3, 3));
        assert!((a.capacity_kbps - 4.0 * 12.0 / 0.012).abs() < 1e-6);
        assert!((a.utilization - 0.75).abs() < 1e-12);
        // Backlogged 0–2 ms and 10–12 ms; three opportunities fell in it, all used.
        assert!((a.backlogged_s - 0.004).abs() < 1e-12);
        assert!((a.offered_while_backlogged_kbps.unwrap() - 3.0 * 12.0 / 0.004).abs() < 1e-6);
        assert_eq!(a.delay_p50_ms, Some(2.0));
        // Signal delay: send times 100→1, 100→2 (min 1), 110→2; 101..109 take 110's value + k.
        // Values: ts 100: 1; 101..=109: 11, 10, …, 3; 110: 2. Sorted, index ⌊0.95·11⌋ = 10 → 11.
        assert_eq!(a.signal_delay_p95_ms, Some(11.0));
    }

    #[test]
    fn huge_numbers_do_not_overflow() {
        // Found by the fuzz target `mmlog_analyze` (there out of time order, which is now an
        // error of its own).
        let log =
            "3 # 55555555555555555555\n4 d 99999999999999999999 1\n6 # 55555555555555555555555\n";
        let a = analyze(log.as_bytes(), "x").unwrap();
        assert!(a.capacity_kbps.is_finite());
        let log = "0 - 10 1e300\n1e300 - 10 0\n";
        let _ = analyze(log.as_bytes(), "x").unwrap();
        // A span of 10^12 ms costs nothing.
        let log = "0 - 10 0\n1000000000000 - 10 0\n";
        let a = analyze(log.as_bytes(), "x").unwrap();
        assert!(a.signal_delay_p95_ms.unwrap() > 1e9);
    }

    proptest::proptest! {
        #[test]
        fn analyze_never_panics(text in "([0-9]{1,25}(\\.[0-9]{1,3})? [-+#d] [0-9]{1,22}( [0-9.e]{1,8})?\n){0,30}") {
            let _ = analyze(text.as_bytes(), "p");
        }

        #[test]
        fn analyze_never_panics_on_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            let _ = analyze(&bytes[..], "p");
        }
    }

    #[test]
    fn signal_delay_matches_the_expanded_definition() {
        // Expand every millisecond explicitly and compare, on irregular departures.
        let deps: Vec<(f64, f64)> = (0..200u32)
            .map(|i| {
                let t = f64::from(i * 7 + (i % 5) * 13);
                (
                    t + 20.0 + f64::from(i % 9),
                    20.0 + f64::from(i % 9) + 0.25 * f64::from(i % 4),
                )
            })
            .collect();
        let mut by: std::collections::BTreeMap<i64, f64> = Default::default();
        for &(t, d) in &deps {
            let ts = (t - d).floor() as i64;
            let e = by.entry(ts).or_insert(d);
            *e = e.min(d);
        }
        let (&lo, _) = by.first_key_value().unwrap();
        let (&hi, &last) = by.last_key_value().unwrap();
        let mut vals = vec![];
        let mut next = last;
        for ts in (lo..=hi).rev() {
            let v = by.get(&ts).copied().unwrap_or(next + 1.0);
            vals.push(v);
            next = v;
        }
        vals.sort_by(f64::total_cmp);
        let want = vals[(0.95 * vals.len() as f64) as usize];
        assert_eq!(signal_delay_p95(&deps), Some(want));
    }

    #[test]
    fn bad_logs_name_the_line() {
        let e = analyze("1 + 10\n2 ? 3\n".as_bytes(), "f.log").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("f.log:2:"));
        assert!(analyze("1 - 10\n".as_bytes(), "f").is_err());
        assert!(analyze("".as_bytes(), "f").is_err());
        assert!(analyze("-5 + 10\n".as_bytes(), "f").is_err());
        // Time going back is refused at its line; equal stamps (one millisecond) are fine.
        let e = analyze(
            "1 + 10\n3 # 1500\n3 - 10 2.0\n2 # 1500\n".as_bytes(),
            "f.log",
        )
        .unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.to_string().starts_with("f.log:4:"), "{e}");
        assert!(e.message.contains("line 3"), "{e}");
        // So is an event before the base timestamp.
        let e = analyze("# base timestamp: 100\n99 + 10\n".as_bytes(), "f.log").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        // Mahimahi's absolute stamps above their base are in order.
        assert!(
            analyze(
                "# base timestamp: 100\n100 + 10\n101 - 10 1\n".as_bytes(),
                "f"
            )
            .is_ok()
        );
    }
}
