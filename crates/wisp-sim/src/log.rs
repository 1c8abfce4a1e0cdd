//! The per-packet event log of a run: every data packet's send, enqueue, drop and delivery.
//!
//! Metrics and plots are computed from this log and nothing else, so what a run reports is
//! exactly what happened to its packets.

use std::io::{self, Write};
use wisp_core::packet::DataHeader;
use wisp_core::{Bitrate, DataSize, Duration, Instant};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DropReason {
    #[default]
    None,
    /// Random loss at the link entrance (`--loss`).
    Loss,
    /// Rejected or pushed out at enqueue (drop-tail, drop-head, PIE's early drop, limits).
    Queue,
    /// Dropped by the AQM at dequeue (CoDel).
    Aqm,
    /// Waited longer than the link's discard timer (a mobile profile's buffer).
    Discard,
    /// Lost on the link itself (a mobile profile's radio: retransmissions exhausted, or its
    /// residual loss).
    Link,
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::None => "",
            DropReason::Loss => "loss",
            DropReason::Queue => "queue",
            DropReason::Aqm => "aqm",
            DropReason::Discard => "discard",
            DropReason::Link => "link",
        }
    }
}

/// What happened to one data packet. The send time is `header.send_time`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketRecord {
    pub flow: u16,
    pub header: DataHeader,
    /// When it reached the bottleneck queue (after the propagation delay).
    pub enqueued: Option<Instant>,
    /// When the receiver got it.
    pub delivered: Option<Instant>,
    pub dropped: Option<Instant>,
    pub reason: DropReason,
}

impl PacketRecord {
    pub fn new(flow: u16, header: DataHeader) -> Self {
        PacketRecord {
            flow,
            header,
            enqueued: None,
            delivered: None,
            dropped: None,
            reason: DropReason::None,
        }
    }
    pub(crate) fn drop(&mut self, at: Instant, reason: DropReason) {
        self.dropped = Some(at);
        self.reason = reason;
    }
    pub fn sent(&self) -> Instant {
        self.header.send_time
    }
}

/// What a flow's controller reported at one instant (sampled every
/// [`SENDER_SAMPLE_INTERVAL`] of its activity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderSample {
    pub flow: u16,
    pub at: Instant,
    /// The rate the controller targets, if it has one.
    pub target_rate: Option<Bitrate>,
    /// The controller's window, if it has one.
    pub window: Option<DataSize>,
    /// The queueing delay the controller aims at, if it has one.
    pub delay_target: Option<Duration>,
}

/// How often a flow's controller is sampled (at its first activity after each interval).
pub const SENDER_SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// The log of a run.
#[derive(Clone, Debug, Default)]
pub struct RunLog {
    /// Every data packet, in send order.
    pub packets: Vec<PacketRecord>,
    /// The controllers' state over time.
    pub sender_samples: Vec<SenderSample>,
    pub feedback_packets: u64,
    pub feedback_bytes: u64,
    pub feedback_dropped: u64,
    /// Events the engine processed.
    pub events: u64,
    /// Every Ping-Pair of the flows that probe ([`crate::pingpair`]), in the order they
    /// finished.
    pub pings: Vec<crate::pingpair::PingRecord>,
    /// The AP queue's occupancy, sampled for the flows whose Ping-Pair spec asks for it.
    pub ap_queue: Vec<crate::pingpair::QueueSample>,
}

impl RunLog {
    /// Writes the log as CSV: `flow,seq,size,sent_ms,enqueued_ms,delivered_ms,dropped_ms,drop_reason`
    /// (empty fields for what did not happen).
    pub fn write_csv(&self, w: impl Write) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(w);
        w.write_record([
            "flow",
            "seq",
            "size",
            "sent_ms",
            "enqueued_ms",
            "delivered_ms",
            "dropped_ms",
            "drop_reason",
        ])?;
        let ms = |t: Option<Instant>| {
            t.map(|t| format!("{:.6}", t.as_millis_f64()))
                .unwrap_or_default()
        };
        for p in &self.packets {
            w.write_record([
                p.flow.to_string(),
                p.header.seq.to_string(),
                p.header.size.bytes().to_string(),
                format!("{:.6}", p.sent().as_millis_f64()),
                ms(p.enqueued),
                ms(p.delivered),
                ms(p.dropped),
                p.reason.as_str().to_string(),
            ])?;
        }
        w.flush()
    }
}
