//! Trace replay: `trace:FILE` and `trace-ns:FILE` (Mahimahi's semantics), `trace-packets:FILE`
//! (libwebrtc's). The file format is [`crate::trace`]'s.
//!
//! **Trace semantics** (Mahimahi `mm-link`, Cellsim): each opportunity credits `bytes_per_line`
//! (1500) bytes at its instant. The head of the queue is dequeued when its first byte is credited;
//! a packet larger than the credit left collects bytes over several opportunities; several small
//! packets may share one; credit left when the queue runs empty is wasted. A packet that reaches
//! the queue at the instant of an opportunity may use it (so the ideal sender never queues; this
//! is the one difference from `mm-link`, whose 1-ms timer makes the minimum delay 1 ms). The
//! departure is recorded at the instant of the opportunity that completes the packet.
//!
//! **Per-packet trace semantics** (`trace-packets`; libwebrtc's `TraceBasedDeliveryFilter`, used
//! by its `GoogleWifiTrace3Mbps` simulations): each line releases exactly one queued packet,
//! whatever its size; an unused line is wasted. Capacity figures credit
//! [`PACKET_TRACE_BYTES_PER_LINE`] per line (libwebrtc's rate counter credits 1240 bytes).

use super::contract::{LinkKind, LinkName, LinkProcess, Serve, Service, empty_bins};
use super::{LinkModel, LinkSpec, MAX_LINK_RATE};
use crate::trace::{Trace, TraceCursor, TraceError, TraceUnit};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wisp_core::{Duration, Instant};

/// Bytes a trace line credits (Mahimahi semantics).
pub const BYTES_PER_LINE: u64 = 1500;

/// Bytes a line counts for in capacity figures under per-packet semantics (libwebrtc's
/// `TraceBasedDeliveryFilter` rate counter).
pub const PACKET_TRACE_BYTES_PER_LINE: u64 = 1240;

/// `trace:FILE`, `trace-ns:FILE`, `trace-packets:FILE`.
#[derive(Clone, Copy, Debug)]
pub struct TraceKind;

impl LinkKind for TraceKind {
    fn names(&self) -> &'static [LinkName] {
        &[
            LinkName {
                name: "trace",
                usage: "trace:FILE",
                help: "Mahimahi trace replay, each line an opportunity to deliver 1500 bytes; \
                       milliseconds, `.rx` files nanoseconds",
            },
            LinkName {
                name: "trace-ns",
                usage: "trace-ns:FILE",
                help: "a trace with nanosecond timestamps",
            },
            LinkName {
                name: "trace-packets",
                usage: "trace-packets:FILE",
                help: "a trace replayed with libwebrtc's semantics: one packet per line, \
                       whatever its size",
            },
        ]
    }

    fn parse(&self, name: &str, args: Option<&str>) -> Result<LinkSpec, String> {
        let path = PathBuf::from(args.unwrap_or_default());
        Ok(match name {
            "trace-packets" => {
                let unit = TraceUnit::for_path(&path);
                LinkSpec::PacketTrace { path, unit }
            }
            "trace-ns" => LinkSpec::Trace {
                path,
                unit: TraceUnit::Nanos,
            },
            _ => LinkSpec::trace_file(path),
        })
    }
}

/// Reads the trace of `trace:FILE` (or `trace-ns:FILE`).
pub(super) fn load(path: &Path, unit: TraceUnit) -> Result<LinkModel, TraceError> {
    let trace = check_trace_rate(Trace::load(path, unit)?, BYTES_PER_LINE)?;
    Ok(LinkModel::Trace(TraceLink { trace }))
}

/// Reads the trace of `trace-packets:FILE`.
pub(super) fn load_packets(path: &Path, unit: TraceUnit) -> Result<LinkModel, TraceError> {
    let trace = check_trace_rate(Trace::load(path, unit)?, PACKET_TRACE_BYTES_PER_LINE)?;
    Ok(LinkModel::PacketTrace(PacketTraceLink { trace }))
}

/// Refuses a trace whose average rate (`bytes_per_line` per line over one period) is above
/// [`MAX_LINK_RATE`].
fn check_trace_rate(t: Arc<Trace>, bytes_per_line: u64) -> Result<Arc<Trace>, TraceError> {
    let bits = t.lines() as f64 * bytes_per_line as f64 * 8.0;
    let rate = bits / t.period().as_secs_f64();
    if rate > MAX_LINK_RATE.bps() as f64 {
        return Err(TraceError {
            file: t
                .path()
                .map_or_else(|| t.name().to_string(), |p| p.display().to_string()),
            line: None,
            message: format!(
                "an average rate of {:.0} Mbit/s, above the limit of 10gbps (10 Gbit/s)",
                rate / 1e6
            ),
        });
    }
    Ok(t)
}

/// A trace replayed: with Mahimahi's semantics ([`TraceLink`], `PER_PACKET` false: a line
/// credits [`BYTES_PER_LINE`] bytes) or libwebrtc's ([`PacketTraceLink`]: a line releases one
/// packet, and counts [`PACKET_TRACE_BYTES_PER_LINE`] bytes in capacity figures).
#[derive(Clone, Debug, PartialEq)]
pub struct Replay<const PER_PACKET: bool> {
    pub trace: Arc<Trace>,
}

/// A trace replayed with Mahimahi's semantics.
pub type TraceLink = Replay<false>;

/// A trace replayed one packet per line.
pub type PacketTraceLink = Replay<true>;

impl<const PER_PACKET: bool> Replay<PER_PACKET> {
    /// The bytes a line counts for in capacity figures.
    pub const BYTES_PER_LINE: u64 = if PER_PACKET {
        PACKET_TRACE_BYTES_PER_LINE
    } else {
        BYTES_PER_LINE
    };
}

impl<const PER_PACKET: bool> LinkProcess for Replay<PER_PACKET> {
    type Server = ReplayServer<PER_PACKET>;

    /// The trace's file name (and where it starts, when not at its beginning).
    fn name(&self) -> String {
        let t = &self.trace;
        let from = if t.shift().is_zero() {
            String::new()
        } else {
            format!(" from {:.3} s", t.shift().as_secs_f64())
        };
        let per_packet = if PER_PACKET { " (per packet)" } else { "" };
        format!("{}{from}{per_packet}", t.name())
    }

    /// One period of the trace.
    fn default_duration(&self) -> Duration {
        self.trace.period()
    }

    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
        self.capacity_bins(from, to, to - from).iter().sum()
    }

    /// Opportunities × the bytes of a line.
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        let mut out = empty_bins(from, to, bin);
        let mut c = self.trace.cursor_at(from);
        loop {
            let (at, n) = c.peek();
            if at >= to {
                break;
            }
            let b = ((at - from).as_nanos() / bin.as_nanos()) as usize;
            out[b] += (u64::from(n) * Self::BYTES_PER_LINE) as f64;
            c.advance();
        }
        out
    }

    fn server(&self, _seed: u64) -> ReplayServer<PER_PACKET> {
        ReplayServer {
            cursor: self.trace.cursor_at(Instant::ZERO),
            time: Instant::ZERO,
            left: 0,
        }
    }
}

/// The server of a [`Replay`]: what the current opportunity has left, `left` bytes (or
/// packets) at `time`.
#[derive(Debug, Clone)]
pub struct ReplayServer<const PER_PACKET: bool> {
    cursor: TraceCursor,
    time: Instant,
    left: u64,
}

/// The server of a [`TraceLink`]: bytes credited line by line.
pub type TraceServer = ReplayServer<false>;

/// The server of a [`PacketTraceLink`]: one packet per line.
pub type PacketTraceServer = ReplayServer<true>;

impl<const PER_PACKET: bool> ReplayServer<PER_PACKET> {
    /// What a line credits: bytes, or one packet.
    const CREDIT_PER_LINE: u64 = if PER_PACKET { 1 } else { BYTES_PER_LINE };

    /// Moves to the next opportunity.
    fn advance(&mut self) {
        let (at, n) = self.cursor.peek();
        self.cursor.advance();
        self.time = at;
        self.left = u64::from(n) * Self::CREDIT_PER_LINE;
    }
}

impl<const PER_PACKET: bool> Serve for ReplayServer<PER_PACKET> {
    fn next_start(&mut self, t: Instant) -> Option<Instant> {
        if self.left > 0 && self.time == t {
            return Some(t);
        }
        self.cursor.seek(t);
        self.advance();
        Some(self.time)
    }

    fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        debug_assert_eq!(self.time, t);
        if PER_PACKET {
            // One packet per opportunity, whatever its size.
            debug_assert!(self.left > 0);
            self.left -= 1;
            return Service::at(self.time);
        }
        let mut remaining = size;
        loop {
            let take = remaining.min(self.left);
            remaining -= take;
            self.left -= take;
            if remaining == 0 {
                return Service::at(self.time);
            }
            self.advance();
        }
    }
}
