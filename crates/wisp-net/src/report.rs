//! What `wisp send` and `wisp recv` report: one line of progress per second and a summary with
//! the metrics of `wisp run` where they apply.
//!
//! The receiver is the authority on delivery (throughput, one-way delay, Sprout's end-to-end
//! delay, loss); the sender on what it sent, the round-trip time (RFC 3550 LSR/DLSR) and its
//! pacing accuracy. One-way delays need the two clocks to agree: they do when sender and
//! receiver run on one host (the same `CLOCK_MONOTONIC`, see [`crate::Clock`]), which the
//! receiver recognises from the boot id in the sender's CNAME; otherwise the one-way fields are
//! `null` and the sender's RTT is the delay measure. The definitions are those of
//! `wisp_sim::metrics` (the same functions compute them).

use serde::Serialize;
use wisp_core::stats::quantiles;
use wisp_core::{Duration, Instant};
use wisp_sim::link::LinkModel;
use wisp_sim::metrics::{MetricsContext, e2e_delay_p95_ms, ideal_e2e_delay_p95_ms};

/// The receiver's metrics of one flow (field names as in `wisp run --json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReceiverMetrics {
    pub flow: usize,
    pub scheme: String,
    /// `synchronised` (one host: one-way delays are exact) or `unsynchronised`.
    pub clock: &'static str,
    pub window_start_s: f64,
    pub window_end_s: f64,
    pub throughput_kbps: f64,
    /// Only with a known link (`--link`).
    pub capacity_kbps: Option<f64>,
    pub utilization: Option<f64>,
    pub delay_p50_ms: Option<f64>,
    pub delay_p95_ms: Option<f64>,
    pub e2e_delay_p95_ms: Option<f64>,
    pub ideal_e2e_delay_p95_ms: Option<f64>,
    pub self_inflicted_delay_ms: Option<f64>,
    /// With a known link: how far into its trace the flow started, ms (`wisp run
    /// --trace-offset-ms` replays the same start).
    pub link_offset_ms: Option<f64>,
    pub loss_rate: f64,
    /// RFC 3550 interarrival jitter at the end, in ms.
    pub jitter_ms: f64,
    pub packets_delivered: u64,
    pub packets_lost: u64,
    pub packets_duplicate: u64,
    pub packets_reordered: u64,
    /// Datagrams that were not a valid RTP/RTCP packet of this session (counted and dropped).
    pub malformed_packets: u64,
    /// Valid packets of another SSRC or from another address (ignored).
    pub foreign_packets: u64,
    /// Media packets that arrived CE-marked (ECN): a marking queue on the path.
    pub packets_ce: u64,
    pub feedback_packets: u64,
    pub feedback_bytes: u64,
    /// How long after the kernel stamped a datagram (`SO_TIMESTAMPNS`) the receiver read it, µs:
    /// arrival instants are the kernel's, so this wake-up lag does not enter the delays.
    pub read_lag_p50_us: Option<f64>,
    pub read_lag_p99_us: Option<f64>,
}

/// The sender's metrics of one flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SenderMetrics {
    pub flow: usize,
    pub scheme: String,
    pub duration_s: f64,
    pub send_rate_kbps: f64,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Round-trip time from receiver reports (RFC 3550 §6.4.1: A − LSR − DLSR).
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    /// Loss the receiver reported in its last report (cumulative lost / expected).
    pub loss_rate: Option<f64>,
    /// How late packets left after the instant the flow asked for, in µs.
    pub pacing_late_p50_us: Option<f64>,
    pub pacing_late_p99_us: Option<f64>,
    pub pacing_late_max_us: Option<f64>,
    /// Probe and padding packets the scheme sent outside its allowance (probe clusters).
    pub probe_packets: u64,
    /// How late those left after the instant the scheme's timer asked for, µs.
    pub probe_late_p50_us: Option<f64>,
    pub probe_late_p99_us: Option<f64>,
    pub probe_late_max_us: Option<f64>,
    pub feedback_messages: u64,
    pub malformed_packets: u64,
    pub foreign_packets: u64,
}

/// `wisp recv --json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReceiverReport {
    pub role: &'static str,
    pub scheme: String,
    pub listen: String,
    pub peer: Option<String>,
    pub trace: Option<String>,
    pub flows: Vec<ReceiverMetrics>,
    /// Ping-Pair alongside the flow (`wisp recv --pingpair-target`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pingpair: Option<PingPairStats>,
    /// The frames an `alfalfa` receiver decoded (for `wisp recv --out`'s video.csv).
    #[serde(skip)]
    pub video: Option<wisp_core::video::log::VideoLog>,
}

/// What `wisp recv --pingpair-target` measured (CoNEXT'17 §5.3, §6).
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct PingPairStats {
    pub target: String,
    pub socket: String,
    /// Pairs resolved, and of them valid (the high-priority reply first).
    pub pairs: u64,
    pub valid: u64,
    /// The median T_q of the valid pairs, ms.
    pub t_q_p50_ms: Option<f64>,
    /// The median number of the flow's own packets sandwiched between a valid pair's replies.
    pub n_a_p50: Option<f64>,
    /// The smoothed T_c Kwikr's eq. (3) used last, ms.
    pub t_c_last_ms: f64,
    /// The largest smoothed T_c, ms.
    pub t_c_max_ms: f64,
    /// The WMM check (reversals of 5), if it completed.
    pub wmm_reversals: Option<usize>,
    pub wmm_enabled: Option<bool>,
    pub malformed: u64,
    pub foreign: u64,
}

/// `wisp send --json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SenderReport {
    pub role: &'static str,
    pub scheme: String,
    pub to: String,
    pub flows: Vec<SenderMetrics>,
    /// The scheme's figures every 100 ms (`wisp send --out`'s controller.csv); not in the JSON.
    #[serde(skip)]
    pub samples: Vec<wisp_core::controller::SenderSample>,
}

/// A link the receiver knows the path to be (for capacity and the ideal sender's delay).
#[derive(Clone, Debug)]
pub struct KnownLink {
    pub link: LinkModel,
    /// One-way propagation delay in front of the bottleneck.
    pub delay: Duration,
    /// The instant (on [`crate::Clock`]) at which the link's trace starts.
    pub epoch: Instant,
}

pub use wisp_core::session::Delivery;

/// Inputs of [`receiver_metrics`] besides the deliveries.
#[derive(Debug)]
pub struct WindowSpec<'a> {
    pub from: Instant,
    pub to: Instant,
    pub synchronised: bool,
    pub link: Option<&'a KnownLink>,
    pub mtu: wisp_core::DataSize,
}

/// Throughput, delays and (with a known link) capacity and self-inflicted delay over the window
/// `[from, to)`, with the definitions of `wisp_sim::metrics`. The fields about loss and counters
/// are left at zero for the caller.
pub fn receiver_metrics(
    deliveries: &[Delivery],
    w: &WindowSpec<'_>,
    scheme: String,
) -> ReceiverMetrics {
    let (from, to) = (w.from, w.to.max(w.from));
    let secs = (to - from).as_secs_f64();
    let mut bytes = 0u64;
    let mut owd = Vec::new();
    let mut pairs = Vec::new();
    let mut delivered = 0u64;
    for d in deliveries {
        pairs.push((d.arrived, d.sent));
        if d.arrived >= from && d.arrived < to {
            delivered += 1;
            bytes += d.bytes;
            owd.push((d.arrived - d.sent).as_millis_f64());
        }
    }
    pairs.sort_unstable();
    let throughput_kbps = if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e3
    } else {
        0.0
    };
    let (mut p50, mut p95, mut e2e) = (None, None, None);
    if w.synchronised {
        let q = quantiles(&mut owd, &[0.5, 0.95]);
        p50 = q[0];
        p95 = q[1];
        e2e = e2e_delay_p95_ms(pairs.iter().copied(), from, to);
    }
    let (mut capacity, mut ideal, mut offset) = (None, None, None);
    if let Some(k) = w.link {
        offset = Some(from.saturating_duration_since(k.epoch).as_millis_f64());
        // The link's own time axis starts at its epoch.
        let lf = Instant::ZERO + (from - k.epoch);
        let lt = Instant::ZERO + (to - k.epoch);
        if lt > lf {
            let b: f64 = k.link.capacity_bins(lf, lt, lt - lf).iter().sum();
            capacity = Some(b * 8.0 / secs / 1e3);
            let ctx = MetricsContext {
                link: &k.link,
                delay: k.delay,
                mtu: w.mtu,
                end: lt,
                warmup: Duration::ZERO,
            };
            ideal = ideal_e2e_delay_p95_ms(&ctx, lf, lt);
        }
    }
    let self_inflicted = if w.synchronised {
        e2e.zip(ideal).map(|(a, b)| a - b)
    } else {
        None
    };
    ReceiverMetrics {
        flow: 0,
        scheme,
        clock: if w.synchronised {
            "synchronised"
        } else {
            "unsynchronised"
        },
        window_start_s: 0.0,
        window_end_s: secs,
        throughput_kbps,
        capacity_kbps: capacity,
        utilization: capacity.filter(|&c| c > 0.0).map(|c| throughput_kbps / c),
        delay_p50_ms: p50,
        delay_p95_ms: p95,
        e2e_delay_p95_ms: e2e,
        ideal_e2e_delay_p95_ms: ideal,
        self_inflicted_delay_ms: self_inflicted,
        link_offset_ms: offset,
        loss_rate: 0.0,
        jitter_ms: 0.0,
        packets_delivered: delivered,
        packets_lost: 0,
        packets_duplicate: 0,
        packets_reordered: 0,
        malformed_packets: 0,
        foreign_packets: 0,
        packets_ce: 0,
        feedback_packets: 0,
        feedback_bytes: 0,
        read_lag_p50_us: None,
        read_lag_p99_us: None,
    }
}

/// Percentiles of samples in µs or ms: `(p50, p95 or p99, max)` as asked.
pub fn percentiles(samples: &mut [f64], qs: &[f64]) -> Vec<Option<f64>> {
    quantiles(samples, qs)
}

/// A progress line: seconds elapsed, the direction (`send`, `recv`) and its rate, then `rest`.
pub fn progress_line(direction: &str, elapsed_s: f64, kbps: f64, rest: &str) -> String {
    format!("{elapsed_s:6.1} s  {direction} {kbps:8.1} kbit/s  {rest}")
}

/// A number for a progress line: one decimal, or `-`.
pub fn fmt_opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.1} {unit}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_core::DataSize;

    #[test]
    fn metrics_of_a_synchronised_flow() {
        // 1500 B every 10 ms for 1 s, 25 ms one-way delay.
        let d: Vec<Delivery> = (0..100u64)
            .map(|i| Delivery {
                seq: i,
                sent: Instant::from_millis(10 * i),
                arrived: Instant::from_millis(10 * i + 25),
                bytes: 1500,
            })
            .collect();
        let w = WindowSpec {
            from: Instant::ZERO,
            to: Instant::from_secs(1),
            synchronised: true,
            link: None,
            mtu: DataSize::from_bytes(1500),
        };
        let m = receiver_metrics(&d, &w, "cbr".into());
        // 98 packets arrive before 1 s (the last two at 1005 and 1015 ms).
        assert_eq!(m.packets_delivered, 98);
        assert!((m.throughput_kbps - 98.0 * 12.0).abs() < 1e-9);
        assert_eq!(m.delay_p50_ms, Some(25.0));
        // Age grows from 25 to 34 ms between deliveries.
        assert_eq!(m.e2e_delay_p95_ms, Some(34.0));
        let u = receiver_metrics(
            &d,
            &WindowSpec {
                synchronised: false,
                ..w
            },
            "cbr".into(),
        );
        assert_eq!(u.delay_p50_ms, None);
        assert_eq!(u.e2e_delay_p95_ms, None);
    }

    #[test]
    fn a_known_link_gives_capacity_and_self_inflicted_delay() {
        let link = "const:12mbps"
            .parse::<wisp_sim::link::LinkSpec>()
            .unwrap()
            .load()
            .unwrap();
        let k = KnownLink {
            link,
            delay: Duration::from_millis(20),
            epoch: Instant::from_secs(100),
        };
        let d: Vec<Delivery> = (0..1000u64)
            .map(|i| Delivery {
                seq: i,
                sent: Instant::from_secs(100) + Duration::from_millis(i),
                arrived: Instant::from_secs(100) + Duration::from_millis(i + 21),
                bytes: 1500,
            })
            .collect();
        let w = WindowSpec {
            from: Instant::from_secs(100),
            to: Instant::from_secs(101),
            synchronised: true,
            link: Some(&k),
            mtu: DataSize::from_bytes(1500),
        };
        let m = receiver_metrics(&d, &w, "x".into());
        assert!((m.capacity_kbps.unwrap() - 12_000.0).abs() < 1e-6);
        // The ideal sender on a 12 Mbit/s serialiser: 20 ms + 1 ms per packet.
        assert_eq!(m.ideal_e2e_delay_p95_ms, Some(21.0));
        assert_eq!(m.self_inflicted_delay_ms, Some(0.0));
    }
}
