//! The packets the sender adds to the encoder's: probe clusters and padding (libwebrtc
//! `modules/pacing/bitrate_prober.cc` and the padding of `modules/pacing/pacing_controller.cc`).
//!
//! The encoder's packets leave through the flow's pacer at 2.5 × the estimate (libwebrtc's
//! pacing factor). This prober adds what the scheme seam calls *extra* packets
//! ([`crate::controller::Sender::poll_extra`]): while a cluster is active, every packet that
//! leaves (the encoder's too) counts towards it and is tagged with it, and a probe packet goes out
//! whenever the cluster has sent less than its rate × the time since it began, in bursts: each
//! time one is due, packets leave back to back until 2 × rate × the cluster's `min_delta` bytes
//! have (`RecommendedMinProbeSize`), each at most the MTU and at least 200 bytes
//! (`kMinProbePacketSize`). The cluster completes once it has sent its bytes (rate × duration)
//! and its packets. Clusters wait for the first media packet and go one after another.
//!
//! Padding (libwebrtc's padding rate, zero unless the application asks for some) works the same
//! way with no end: while the encoder sends less than the padding rate, padding packets fill the
//! gap.
//!
//! Deviations: libwebrtc pads with RTX copies of recent media when it can; wisp's padding and
//! probes are padding-only packets ([`crate::packet::Content::Probe`]). A cluster not done within
//! 5 s is dropped (`kProbeClusterTimeout`) only when the next one is due.

use super::probe_controller::ProbeRequest;
use super::probe_estimator::ClusterGoal;
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use std::collections::VecDeque;

/// `kMinProbePacketSize`.
const MIN_PROBE_PACKET: DataSize = DataSize::from_bytes(200);
/// `kProbeClusterTimeout`.
const CLUSTER_TIMEOUT: Duration = Duration::from_secs(5);

/// Keeps a packet schedule at `rate` from `start`: how far behind it the sent bytes are.
#[derive(Clone, Copy, Debug)]
struct Fill {
    start: Instant,
    rate: Bitrate,
    sent: DataSize,
}

impl Fill {
    /// When the schedule next wants a packet.
    fn due(&self) -> Instant {
        self.start + self.sent.transmit_time(self.rate)
    }
}

#[derive(Clone, Copy, Debug)]
struct Cluster {
    goal: ClusterGoal,
    rate: Bitrate,
    created: Instant,
    fill: Option<Fill>,
    probes: u32,
    /// The burst: bytes each due time sends back to back (2 × rate × `min_delta`).
    burst: DataSize,
    /// What is left of the current burst.
    burst_left: DataSize,
}

impl Cluster {
    fn done(&self) -> bool {
        self.fill
            .is_some_and(|f| self.probes >= self.goal.min_probes && f.sent >= self.goal.min_bytes)
    }
}

/// The prober and the padding.
#[derive(Clone, Debug)]
pub struct Prober {
    mtu: DataSize,
    clusters: VecDeque<Cluster>,
    /// The goals of recent clusters, for the feedback on their packets.
    history: VecDeque<ClusterGoal>,
    next_id: u32,
    padding: Option<Fill>,
    padding_rate: Bitrate,
    media_seen: bool,
}

impl Prober {
    pub fn new(mtu: DataSize, padding_rate: Bitrate) -> Self {
        Prober {
            mtu,
            clusters: VecDeque::new(),
            history: VecDeque::new(),
            next_id: 0,
            padding: None,
            padding_rate,
            media_seen: false,
        }
    }

    /// Queues a cluster.
    pub fn add(&mut self, now: Instant, request: ProbeRequest) {
        let goal = ClusterGoal {
            id: self.next_id,
            min_probes: request.min_probes,
            min_bytes: request.rate * request.duration,
        };
        self.next_id += 1;
        self.clusters.push_back(Cluster {
            goal,
            rate: request.rate,
            created: now,
            fill: None,
            probes: 0,
            burst: request.rate * (request.min_delta * 2),
            burst_left: DataSize::ZERO,
        });
        self.history.push_back(goal);
        while self.history.len() > 64 {
            self.history.pop_front();
        }
    }

    /// Drops the clusters and waits for media again (a new path), keeping the cluster ids
    /// unique.
    pub fn restart(&mut self) {
        self.clusters.clear();
        self.padding = None;
        self.media_seen = false;
    }

    /// The goal of cluster `id`, if recent.
    pub fn goal(&self, id: u32) -> Option<ClusterGoal> {
        self.history.iter().find(|g| g.id == id).copied()
    }

    /// Whether a cluster is being sent or waits.
    pub fn probing(&self) -> bool {
        !self.clusters.is_empty()
    }

    /// The padding rate the encoder's packets are topped up to (capped by the caller).
    pub fn set_padding_rate(&mut self, rate: Bitrate) {
        self.padding_rate = rate;
    }

    /// The padding rate.
    pub fn padding_rate(&self) -> Bitrate {
        self.padding_rate
    }

    /// Drops timed-out clusters; starts the first one's schedule at `now`.
    fn active(&mut self, now: Instant) -> Option<&mut Cluster> {
        while self.clusters.front().is_some_and(|c| {
            c.fill.is_none() && now.saturating_duration_since(c.created) > CLUSTER_TIMEOUT
        }) {
            self.clusters.pop_front();
        }
        if !self.media_seen {
            return None;
        }
        let c = self.clusters.front_mut()?;
        c.fill.get_or_insert(Fill {
            start: now,
            rate: c.rate,
            sent: DataSize::ZERO,
        });
        Some(c)
    }

    /// A packet of `size` left now (media when `media`); the cluster it counts towards.
    pub fn on_sent(&mut self, now: Instant, size: DataSize, media: bool) -> Option<u32> {
        self.media_seen |= media;
        if let Some(p) = self.padding.as_mut() {
            p.sent += size;
        }
        let c = self.active(now)?;
        let fill = c.fill.as_mut()?;
        if fill.due() <= now && c.burst_left == DataSize::ZERO {
            // This packet opens a burst.
            c.burst_left = c.burst;
        }
        fill.sent += size;
        c.burst_left = c.burst_left.saturating_sub(size);
        c.probes += 1;
        let id = c.goal.id;
        if c.done() {
            self.clusters.pop_front();
        }
        Some(id)
    }

    /// The size of a probe or padding packet due now, if one is.
    pub fn poll(&mut self, now: Instant) -> Option<DataSize> {
        let mtu = self.mtu;
        if let Some(c) = self.active(now) {
            let fill = c.fill?;
            let left = if c.burst_left > DataSize::ZERO {
                c.burst_left
            } else if fill.due() <= now {
                c.burst
            } else {
                return None;
            };
            return Some(left.min(mtu).max(MIN_PROBE_PACKET.min(mtu)));
        }
        let pad = self.padding_fill(now)?;
        (pad.due() <= now).then_some(mtu)
    }

    /// The padding schedule, restarted when it fell more than 100 ms behind or its rate changed.
    fn padding_fill(&mut self, now: Instant) -> Option<Fill> {
        if self.padding_rate == Bitrate::ZERO || !self.media_seen {
            self.padding = None;
            return None;
        }
        let fresh = Fill {
            start: now,
            rate: self.padding_rate,
            sent: DataSize::ZERO,
        };
        let p = self.padding.get_or_insert(fresh);
        if p.rate != self.padding_rate
            || now.saturating_duration_since(p.due()) > Duration::from_millis(100)
            || p.due() > now + Duration::from_millis(500)
        {
            *p = fresh;
        }
        Some(*p)
    }

    /// When the next probe or padding packet is due, if any is scheduled.
    pub fn next_due(&self) -> Option<Instant> {
        if !self.media_seen {
            return None;
        }
        match self.clusters.front() {
            Some(c) if c.burst_left > DataSize::ZERO => c.fill.map(|f| f.start),
            Some(c) => Some(c.fill.map_or(c.created, |f| f.due())),
            None => self.padding.map(|p| p.due()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(kbps: u64) -> ProbeRequest {
        ProbeRequest {
            rate: Bitrate::from_kbps(kbps),
            duration: Duration::from_millis(15),
            min_probes: 5,
            min_delta: Duration::from_millis(2),
        }
    }

    #[test]
    fn a_cluster_sends_its_bytes_at_its_rate() {
        let mut p = Prober::new(DataSize::from_bytes(1200), Bitrate::ZERO);
        p.add(Instant::ZERO, request(2000));
        // Nothing before the first media packet.
        assert_eq!(p.poll(Instant::ZERO), None);
        let t0 = Instant::from_millis(10);
        assert_eq!(p.on_sent(t0, DataSize::from_bytes(1000), true), Some(0));
        let mut t = t0;
        let mut sent = vec![];
        while p.probing() {
            t = p.next_due().unwrap().max(t);
            let size = p.poll(t).expect("due");
            // 2 Mbit/s × 4 ms = 1000 bytes.
            assert_eq!(size, DataSize::from_bytes(1000));
            p.on_sent(t, size, false);
            sent.push(t);
        }
        // 2 Mbit/s × 15 ms = 3750 bytes and 5 packets: the first plus four, 4 ms apart.
        assert_eq!(sent.len(), 4);
        assert_eq!(*sent.last().unwrap(), t0 + Duration::from_millis(16));
        assert_eq!(p.goal(0).unwrap().min_bytes, DataSize::from_bytes(3750));
    }

    #[test]
    fn padding_fills_up_to_its_rate() {
        let mut p = Prober::new(DataSize::from_bytes(1000), Bitrate::from_kbps(800));
        p.on_sent(Instant::ZERO, DataSize::from_bytes(1000), true);
        let mut t = Instant::ZERO;
        let mut bytes = 0;
        while t < Instant::from_secs(1) {
            if let Some(s) = p.poll(t) {
                p.on_sent(t, s, false);
                bytes += s.bytes();
            } else {
                t = p.next_due().unwrap().max(t + Duration::from_micros(1));
            }
        }
        // 800 kbit/s over a second, less the first media packet.
        assert!((98_000..=101_000).contains(&bytes), "{bytes}");
    }
}
