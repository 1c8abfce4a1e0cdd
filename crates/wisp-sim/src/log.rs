//! The per-packet event log of a run: every data packet's send, enqueue, drop and delivery.
//!
//! Metrics and plots are computed from this log and nothing else, so what a run reports is
//! exactly what happened to its packets.

use std::io::{self, Write};
use wisp_core::packet::DataHeader;
use wisp_core::{Bitrate, Duration, Instant};

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
    /// The header as sent, but for `header.ecn`: the codepoint the packet last left a queue
    /// with (CE once a queue marked it), which is the one its receiver got if it arrived.
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

pub use wisp_core::controller::{SENDER_SAMPLE_INTERVAL, SenderSample};

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
    pub pings: Vec<PingRecord>,
    /// The AP queue's occupancy, sampled for the flows whose Ping-Pair spec asks for it.
    pub ap_queue: Vec<QueueSample>,
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

/// One Ping-Pair of a run: what the station measured and what the AP's queue held.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PingRecord {
    /// The flow whose station probed.
    pub flow: u16,
    /// The pair's index (0-based) among the flow's pairs.
    pub index: u64,
    /// When the requests were sent.
    pub sent: Instant,
    pub high_reply: Option<Instant>,
    pub normal_reply: Option<Instant>,
    /// T_q of a valid pair (the high-priority reply first, §5.2).
    pub t_q: Option<Duration>,
    /// The normal reply's frame's PHY rate (R of §5.3).
    pub mac_rate: Option<Bitrate>,
    /// n_a and T_c as the flow's `skype-ukf`/`kwikr` receiver attributed the pair (§5.3).
    pub n_a: Option<u64>,
    pub t_c: Option<Duration>,
    /// The receiver's smoothed T_c after the pair (what eq. (3) uses; zero for `skype-ukf`).
    pub t_c_smoothed: Option<Duration>,
    /// Ground truth: the normal reply's wait in the AP's queue (enqueue to the head).
    pub truth_queueing: Option<Duration>,
    /// Ground truth: the normal reply's whole AP delay (enqueue to delivery).
    pub truth_delay: Option<Duration>,
    /// Ground truth: the high reply's whole AP delay.
    pub truth_high_delay: Option<Duration>,
    /// Ground truth: frames ahead of the normal reply in the AP's queue of its access category
    /// (every destination) when it was enqueued.
    pub truth_backlog: Option<u32>,
    /// When the AP had each request (the uplink's part of T_q: the normal request reaches the
    /// AP after the high one when VO wins the uplink first).
    pub normal_request_at_ap: Option<Instant>,
    pub high_request_at_ap: Option<Instant>,
}

/// The AP queue's occupancy at one instant (the normal ping's access category, every
/// destination).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSample {
    pub flow: u16,
    pub at: Instant,
    pub frames: u32,
}
