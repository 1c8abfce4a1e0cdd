//! The rate a probe cluster measured, from the feedback on its packets (libwebrtc
//! `modules/congestion_controller/goog_cc/probe_bitrate_estimator.cc`).
//!
//! Per cluster: the first and last send and arrival, the bytes, the packets. Once at least 80 %
//! of the cluster's packets and bytes are reported received, with send and receive intervals in
//! (0, 1 s], the send rate counts every byte but the last packet's and the receive rate every
//! byte but the first packet's; a receive rate more than twice the send rate is not believed.
//! The result is the smaller of the two, or, when the receive rate is under 90 % of the send rate
//! (the probe saturated the path), 95 % of the receive rate. Clusters whose last arrival is more
//! than a second old are forgotten.
//!
//! Deviations: none known in the arithmetic; the cluster's minimum packets and bytes come from
//! the sender's record of the cluster rather than from each packet's pacing info.

use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use std::collections::BTreeMap;

const MIN_RECEIVED_PROBES_RATIO: f64 = 0.80;
const MIN_RECEIVED_BYTES_RATIO: f64 = 0.80;
const MAX_VALID_RATIO: f64 = 2.0;
const MIN_RATIO_FOR_UNSATURATED_LINK: f64 = 0.9;
const TARGET_UTILIZATION_FRACTION: f64 = 0.95;
const MAX_CLUSTER_HISTORY: Duration = Duration::from_secs(1);
const MAX_PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// What a cluster must deliver to count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterGoal {
    pub id: u32,
    pub min_probes: u32,
    pub min_bytes: DataSize,
}

#[derive(Clone, Copy, Debug)]
struct Aggregate {
    first_send: Instant,
    last_send: Instant,
    last_send_size: u64,
    first_arrival: Instant,
    last_arrival: Instant,
    first_arrival_size: u64,
    bytes: u64,
    probes: u32,
}

/// libwebrtc's `ProbeBitrateEstimator`.
#[derive(Clone, Debug, Default)]
pub struct ProbeBitrateEstimator {
    clusters: BTreeMap<u32, Aggregate>,
    last: Option<Bitrate>,
}

impl ProbeBitrateEstimator {
    /// A probe packet of cluster `goal` sent at `send` arrived at `arrival`; the cluster's
    /// rate, if it now has one.
    pub fn on_probe_packet(
        &mut self,
        goal: ClusterGoal,
        send: Instant,
        arrival: Instant,
        size: DataSize,
    ) -> Option<Bitrate> {
        self.clusters.retain(|_, c| {
            arrival.saturating_duration_since(c.last_arrival) <= MAX_CLUSTER_HISTORY
        });
        let b = size.bytes();
        let c = self.clusters.entry(goal.id).or_insert(Aggregate {
            first_send: send,
            last_send: send,
            last_send_size: b,
            first_arrival: arrival,
            last_arrival: arrival,
            first_arrival_size: b,
            bytes: 0,
            probes: 0,
        });
        if send < c.first_send {
            c.first_send = send;
        }
        if send >= c.last_send {
            c.last_send = send;
            c.last_send_size = b;
        }
        if arrival < c.first_arrival {
            c.first_arrival = arrival;
            c.first_arrival_size = b;
        }
        c.last_arrival = c.last_arrival.max(arrival);
        c.bytes += b;
        c.probes += 1;
        let c = *c;
        let rate = estimate(goal, &c)?;
        self.last = Some(rate);
        Some(rate)
    }

    /// The last result, taken (`FetchAndResetLastEstimatedBitrate`).
    pub fn take_last(&mut self) -> Option<Bitrate> {
        self.last.take()
    }
}

fn estimate(goal: ClusterGoal, c: &Aggregate) -> Option<Bitrate> {
    if f64::from(c.probes) < MIN_RECEIVED_PROBES_RATIO * f64::from(goal.min_probes)
        || (c.bytes as f64) < MIN_RECEIVED_BYTES_RATIO * goal.min_bytes.bytes() as f64
    {
        return None;
    }
    let send = c.last_send.saturating_duration_since(c.first_send);
    let receive = c.last_arrival.saturating_duration_since(c.first_arrival);
    let valid = |d: Duration| !d.is_zero() && d <= MAX_PROBE_INTERVAL;
    if !valid(send) || !valid(receive) {
        return None;
    }
    let send_rate = (c.bytes - c.last_send_size) as f64 * 8.0 / send.as_secs_f64();
    let receive_rate = (c.bytes - c.first_arrival_size) as f64 * 8.0 / receive.as_secs_f64();
    if receive_rate > MAX_VALID_RATIO * send_rate {
        return None;
    }
    let mut rate = send_rate.min(receive_rate);
    if receive_rate < MIN_RATIO_FOR_UNSATURATED_LINK * send_rate {
        rate = TARGET_UTILIZATION_FRACTION * receive_rate;
    }
    Some(Bitrate::from_bps_f64(rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOAL: ClusterGoal = ClusterGoal {
        id: 1,
        min_probes: 5,
        min_bytes: DataSize::from_bytes(5000),
    };

    /// Six 1000-byte probes sent 4 ms apart (2 Mbit/s), arriving `arrival_gap_us` apart.
    fn run(arrival_gap_us: u64) -> Option<Bitrate> {
        let mut e = ProbeBitrateEstimator::default();
        let mut out = None;
        for k in 0..6 {
            let send = Instant::from_millis(4 * k);
            let arrival = Instant::from_micros(50_000 + arrival_gap_us * k);
            out = e.on_probe_packet(GOAL, send, arrival, DataSize::from_bytes(1000));
        }
        out
    }

    #[test]
    fn unsaturated_probe_gives_the_send_rate() {
        assert_eq!(run(4000), Some(Bitrate::from_kbps(2000)));
        // Received a little slower (> 90 %): the smaller rate.
        assert_eq!(run(4200).unwrap().kbps_f64().round(), 1905.0);
    }

    #[test]
    fn saturated_probe_gives_95_percent_of_the_receive_rate() {
        // Received at 1 Mbit/s: 0.95 × 1000.
        assert_eq!(run(8000), Some(Bitrate::from_kbps(950)));
    }

    #[test]
    fn too_few_packets_or_too_fast_arrivals_give_nothing() {
        let mut e = ProbeBitrateEstimator::default();
        for k in 0..3 {
            let t = Instant::from_millis(4 * k);
            assert!(
                e.on_probe_packet(GOAL, t, t, DataSize::from_bytes(1000))
                    .is_none()
            );
        }
        // Received more than twice as fast as sent: not believed.
        assert_eq!(run(1000), None);
    }
}
