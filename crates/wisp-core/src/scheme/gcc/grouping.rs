//! Grouping packets into groups and the burst-merging pre-filter (ANRW'16 §5.1, Algorithm 1).
//!
//! The delay-based controller works on *groups* of packets: the pacer releases a group every
//! ΔT = 5 ms (ANRW'16 §3), and the receiver recognises a group by its departure times. Each time
//! a group is complete the grouping emits a [`GroupDelta`] between it and the group before
//! (eq. 2): the difference of their last arrival times and of their last departure times.
//!
//! Three forms, chosen by [`Prefilter`]:
//!
//! * [`Prefilter::Off`] — GCC as in §3, no pre-filter: a packet starts a new group when it was
//!   sent ΔT after the group's *first* packet (libwebrtc `InterArrival` without burst grouping),
//!   less a tolerance of ΔT/10 ([`SEND_TOLERANCE_DIVISOR`]), so each pacer release is one group
//!   (see *Groups and timer lateness* below). A packet sent before the current group's first
//!   packet is ignored (reordered).
//! * [`Prefilter::Paper`] — Algorithm 1 exactly. For each packet (t_r, t_s), with
//!   (t_r_old, t_s_old) the previous packet's:
//!
//!   ```text
//!   if (t_r − t_r_old) < ΔT and d_m(t_r) < 0:  merge the packet into the current group  (burst)
//!   elif (t_s − t_s_old) ≥ ΔT:                 a new group starts; update the ATF with (t_r_old, t_s_old)
//!   else:                                      merge the packet into the current group
//!   t_r_old ← t_r;  t_s_old ← t_s
//!   ```
//!
//!   with d_m(t_r) = (t_r − t_r_old) − (t_s − t_s_old) (the sign convention of §4.1; see
//!   [`GroupDelta`]). A burst — packets arriving faster than they were sent, less than ΔT apart,
//!   as a Wi-Fi AP releases what it held during an outage — is merged into one group, so its
//!   first packet's delay spike and the negative delay variations of the rest are not seen.
//! * [`Prefilter::Libwebrtc`] — the production form of the same idea (libwebrtc
//!   `inter_arrival.cc`/`inter_arrival_delta.cc` with burst grouping; aiortc's `InterArrival`):
//!   a packet belongs to the current group if it was sent at the same instant as the group's
//!   latest packet, or if it arrives at most 5 ms after the group's last arrival, faster than it
//!   was sent (propagation delta < 0), and less than 100 ms after the group's first arrival;
//!   otherwise it starts a new group when it was sent more than ΔT after the group's *first*
//!   packet. A packet sent before the current group's first packet is ignored (reordered).
//!
//! *Groups and timer lateness.* The pacer releases its groups exactly ΔT apart in the simulator;
//! a real sender's wake-ups are late by some µs, so there consecutive releases are ΔT ± that
//! lateness apart. Compared with the previous packet (as wisp did before), a release that left
//! a little earlier after its predecessor than ΔT merged into the group before: on the Wi-Fi
//! trace (300 s) plain GCC formed 64.9 groups/s with exact timers and 46.4 with wake-ups late by
//! up to 50 µs. libwebrtc's test, sent more than ΔT after the group's first packet, sits on the
//! same edge from the other side: two releases ΔT apart make one group with an exact clock and
//! one or two with a real one (42.4 against 49.3 groups/s). With the tolerance each release is
//! its own group either way (64.9 against 65.0; since the loss-based controller runs at
//! libwebrtc's cadence, 60.9 against 61.5; wisp-sim's test
//! `gcc_groups_do_not_depend_on_timer_jitter`), and with exact timers the groups are the ones
//! the previous-packet test made (the simulator's results did not change). Deviation: libwebrtc has no tolerance (its pacer is not
//! periodic). Algorithm 1 is kept as written (previous packet, `≥ ΔT`), and is sensitive to the
//! lateness (28.2 against 24.1 groups/s), as is its burst test by design; libwebrtc's burst
//! grouping merges consecutive releases anyway (24.2 against 24.5; now 24.5 against 25.1).
//!
//! The two forms differ: Algorithm 1 compares with the previous packet and uses strict `< ΔT`;
//! libwebrtc compares the departure with the group's first packet (`> ΔT`), accepts arrival gaps
//! of exactly 5 ms, and caps a merged burst at 100 ms of arrivals (without the cap, a stream whose
//! packets keep arriving less than 5 ms apart would never close its group).
//!
//! Deviations: libwebrtc's reset after three reordered groups and its 3-s arrival-clock-jump reset
//! are not implemented (the simulator's path never reorders; a group whose arrival delta is
//! negative emits no delta).

use crate::time::{Duration, Instant};
use crate::units::DataSize;

/// The deltas between two consecutive groups of packets (ANRW'16 eq. 2).
///
/// The paper prints eq. (2) as departure spacing minus arrival spacing, but its own §4.1, the
/// modes of its Fig. 6 (+100 ms right after an outage) and the test `d_m < 0` of its Algorithm 1
/// all use arrival spacing minus departure spacing, as libwebrtc does; so does wisp:
/// [`GroupDelta::delay_variation_ms`] is positive when the queue grows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupDelta {
    /// t_s(i) − t_s(i−1), ms.
    pub send_delta_ms: f64,
    /// t_r(i) − t_r(i−1), ms.
    pub arrival_delta_ms: f64,
    /// Size of group *i* minus size of group *i − 1*, bytes.
    pub size_delta: i64,
    /// t_r(i): when group *i* completed.
    pub arrival: Instant,
}

impl GroupDelta {
    /// d_m = arrival spacing − departure spacing, ms.
    pub fn delay_variation_ms(&self) -> f64 {
        self.arrival_delta_ms - self.send_delta_ms
    }
}

/// Which grouping the receiver uses (`prefilter=off|paper|libwebrtc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Prefilter {
    /// No burst merging (GCC as in ANRW'16 §3).
    #[default]
    #[serde(alias = "none")]
    Off,
    /// ANRW'16 Algorithm 1.
    #[serde(alias = "algorithm1")]
    Paper,
    /// libwebrtc's burst grouping (5 ms burst threshold, 100 ms maximum burst).
    Libwebrtc,
}

impl Prefilter {
    pub fn as_str(self) -> &'static str {
        match self {
            Prefilter::Off => "off",
            Prefilter::Paper => "paper",
            Prefilter::Libwebrtc => "libwebrtc",
        }
    }
}

/// libwebrtc's `kBurstDeltaThreshold`.
pub const BURST_DELTA_THRESHOLD: Duration = Duration::from_millis(5);
/// libwebrtc's `kMaxBurstDuration`.
pub const MAX_BURST_DURATION: Duration = Duration::from_millis(100);

/// Without the pre-filter a packet starts a new group when it was sent at least ΔT less
/// ΔT / this after the group's first packet: the pacer releases a group every ΔT, and a real
/// sender's wake-ups are late by some µs, so consecutive releases are ΔT ± that lateness apart.
pub const SEND_TOLERANCE_DIVISOR: i64 = 10;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Group {
    first_send: Instant,
    /// The send time that represents the group: its last packet's (Algorithm 1) or its latest
    /// (libwebrtc).
    send: Instant,
    first_arrival: Instant,
    /// Its last packet's arrival.
    arrival: Instant,
    size: u64,
}

impl Group {
    fn new(send: Instant, arrival: Instant, size: DataSize) -> Self {
        Group {
            first_send: send,
            send,
            first_arrival: arrival,
            arrival,
            size: size.bytes(),
        }
    }
}

/// Signed `a − b` in nanoseconds.
fn diff(a: Instant, b: Instant) -> i64 {
    a.as_nanos() as i64 - b.as_nanos() as i64
}

fn ns_to_ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Groups arriving packets and emits the deltas between consecutive groups.
#[derive(Clone, Debug, PartialEq)]
pub struct Grouper {
    prefilter: Prefilter,
    interval: i64,
    current: Option<Group>,
    prev: Option<Group>,
    /// The previous packet's (arrival, send) (Algorithm 1's t_r_old, t_s_old).
    last: Option<(Instant, Instant)>,
    groups: u64,
}

impl Grouper {
    /// Groups with interval ΔT = `interval` (5 ms in the paper).
    pub fn new(prefilter: Prefilter, interval: Duration) -> Self {
        Grouper {
            prefilter,
            interval: interval.as_nanos() as i64,
            current: None,
            prev: None,
            last: None,
            groups: 0,
        }
    }

    pub fn prefilter(&self) -> Prefilter {
        self.prefilter
    }

    /// Groups completed so far.
    pub fn groups(&self) -> u64 {
        self.groups
    }

    /// A packet sent at `send` arrived at `arrival`. Returns the delta between the two latest
    /// complete groups when this packet completes a group.
    pub fn on_packet(
        &mut self,
        send: Instant,
        arrival: Instant,
        size: DataSize,
    ) -> Option<GroupDelta> {
        match self.prefilter {
            Prefilter::Paper => self.algorithm_1(send, arrival, size),
            Prefilter::Off | Prefilter::Libwebrtc => self.libwebrtc(send, arrival, size),
        }
    }

    /// ANRW'16 Algorithm 1.
    fn algorithm_1(
        &mut self,
        send: Instant,
        arrival: Instant,
        size: DataSize,
    ) -> Option<GroupDelta> {
        let Some((r_old, s_old)) = self.last.replace((arrival, send)) else {
            self.current = Some(Group::new(send, arrival, size));
            return None;
        };
        let cur = self
            .current
            .as_mut()
            .expect("a current group after the first packet");
        let dr = diff(arrival, r_old);
        let ds = diff(send, s_old);
        let burst = dr < self.interval && dr - ds < 0;
        if !burst && ds >= self.interval {
            // A new group is arriving: the ATF is updated with the previous group, whose last
            // packet was (t_r_old, t_s_old).
            debug_assert_eq!((cur.arrival, cur.send), (r_old, s_old));
            return self.close(Group::new(send, arrival, size));
        }
        cur.send = send;
        cur.arrival = arrival;
        cur.size += size.bytes();
        None
    }

    /// libwebrtc `InterArrival::ComputeDeltas`, with burst grouping for
    /// [`Prefilter::Libwebrtc`] and without it for [`Prefilter::Off`].
    fn libwebrtc(&mut self, send: Instant, arrival: Instant, size: DataSize) -> Option<GroupDelta> {
        let Some(cur) = self.current.as_mut() else {
            self.current = Some(Group::new(send, arrival, size));
            return None;
        };
        if send < cur.first_send {
            return None;
        }
        let belongs_to_burst = self.prefilter == Prefilter::Libwebrtc && {
            let arrival_delta = diff(arrival, cur.arrival);
            let send_delta = diff(send, cur.send);
            send_delta == 0
                || (arrival_delta - send_delta < 0
                    && arrival_delta <= BURST_DELTA_THRESHOLD.as_nanos() as i64
                    && diff(arrival, cur.first_arrival) < MAX_BURST_DURATION.as_nanos() as i64)
        };
        let since_first = diff(send, cur.first_send);
        let new_group = match self.prefilter {
            // One group per pacer release, whatever the sender's timer lateness.
            Prefilter::Off => since_first >= self.interval - self.interval / SEND_TOLERANCE_DIVISOR,
            _ => since_first > self.interval,
        };
        if !belongs_to_burst && new_group {
            return self.close(Group::new(send, arrival, size));
        }
        cur.send = cur.send.max(send);
        cur.arrival = arrival;
        cur.size += size.bytes();
        None
    }

    /// Closes the current group, opens `next`, and returns the delta to the group before.
    fn close(&mut self, next: Group) -> Option<GroupDelta> {
        let done = self.current.replace(next).expect("a current group");
        self.groups += 1;
        let prev = self.prev.replace(done)?;
        let arrival_delta = diff(done.arrival, prev.arrival);
        if arrival_delta < 0 {
            return None;
        }
        Some(GroupDelta {
            send_delta_ms: ns_to_ms(diff(done.send, prev.send)),
            arrival_delta_ms: ns_to_ms(arrival_delta),
            size_delta: done.size as i64 - prev.size as i64,
            arrival: done.arrival,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    const B: DataSize = DataSize::from_bytes(1200);

    fn at(ms_: f64) -> Instant {
        Instant::ZERO + Duration::from_millis_f64(ms_)
    }

    /// Feeds (send ms, arrival ms) packets; returns the d_m of each delta.
    fn run(p: Prefilter, packets: &[(f64, f64)]) -> Vec<f64> {
        let mut g = Grouper::new(p, ms(5));
        packets
            .iter()
            .filter_map(|&(s, r)| g.on_packet(at(s), at(r), B))
            .map(|d| (d.delay_variation_ms() * 1e3).round() / 1e3)
            .collect()
    }

    /// ANRW'16 Fig. 4 and 7: groups 1 and 2 arrive normally, an outage holds groups 3–5, which
    /// then arrive as a burst. Without the pre-filter there are four samples — ≈0, a large
    /// positive spike and two negative values; with it, groups 3–5 are merged and only two
    /// samples remain, the second measured between groups 2 and 5.
    #[test]
    fn figure_4_and_7() {
        let packets = [
            (0.0, 50.0),
            (5.0, 55.0),
            (10.0, 160.0), // held by the outage
            (15.0, 160.5),
            (20.0, 161.0),
            (25.0, 75.0 + 100.0), // after the burst, back to normal spacing
            (30.0, 180.0),
        ];
        let off = run(Prefilter::Off, &packets);
        assert_eq!(off, vec![0.0, 100.0, -4.5, -4.5, 9.0]);
        let paper = run(Prefilter::Paper, &packets);
        // Groups 3–5 merge (each arrives < 5 ms after the previous, faster than sent); their
        // delta to group 2 is (161 − 55) − (20 − 5) = 91. Group 6 arrives 14 ms after 5 while
        // sent 5 ms later: a new group.
        assert_eq!(paper, vec![0.0, 91.0, 9.0]);
    }

    #[test]
    fn pacer_groups_split_on_the_departure_gap() {
        // Two packets per pacer tick, ticks 5 ms apart, 2 ms serialisation, constant delay.
        let mut packets = vec![];
        for k in 0..6 {
            let s = 5.0 * k as f64;
            packets.push((s, s + 40.0));
            packets.push((s, s + 42.0));
        }
        assert_eq!(run(Prefilter::Off, &packets), vec![0.0; 4]);
        // Algorithm 1 merges the next tick's first packet (3 ms after the previous arrival,
        // sent 5 ms later) into the current group: on an uncongested link every tick merges.
        assert_eq!(run(Prefilter::Paper, &packets), Vec::<f64>::new());
        // libwebrtc's cap closes a merged group after 100 ms of arrivals.
        let mut long = vec![];
        for k in 0..60 {
            let s = 5.0 * k as f64;
            long.push((s, s + 40.0));
            long.push((s, s + 42.0));
        }
        let deltas = run(Prefilter::Libwebrtc, &long);
        assert!(!deltas.is_empty());
        assert!(deltas.iter().all(|d| d.abs() < 1e-9), "{deltas:?}");
    }

    /// Without the pre-filter a group ends ΔT after its *first* packet was sent, not after the
    /// previous packet: packets sent every 3 ms make groups of two (the previous-packet test
    /// never closed a group), and pacer releases ΔT apart stay one group each when the sender's
    /// wake-ups are late by a few µs (the previous-packet test merged a release that left
    /// 4.97 ms after the one before).
    #[test]
    fn off_groups_by_first_departure_whatever_the_timer_lateness() {
        let every_3_ms: Vec<(f64, f64)> = (0..9)
            .map(|k| (3.0 * k as f64, 3.0 * k as f64 + 40.0))
            .collect();
        // Groups {0, 3}, {6, 9}, {12, 15}, {18, 21}, {24}: three deltas, 6 ms apart both ways.
        assert_eq!(run(Prefilter::Off, &every_3_ms), vec![0.0; 3]);
        let mut g = Grouper::new(Prefilter::Off, ms(5));
        // Releases at 5k ms, each late by 0–50 µs; two packets each, 1 ms apart on arrival.
        let late_us = [30.0, 0.0, 45.0, 10.0, 20.0, 0.0, 50.0, 5.0];
        let mut deltas = vec![];
        for (k, late) in late_us.iter().enumerate() {
            let s = 5.0 * k as f64 + late / 1e3;
            for i in 0..2 {
                deltas.extend(g.on_packet(at(s), at(s + 40.0 + i as f64), B));
            }
        }
        assert_eq!(g.groups(), late_us.len() as u64 - 1);
        assert_eq!(deltas.len(), late_us.len() - 2);
        for d in deltas {
            assert!(d.delay_variation_ms().abs() < 1e-9, "{d:?}");
            assert!((d.send_delta_ms - 5.0).abs() <= 0.05, "{d:?}");
        }
    }

    #[test]
    fn libwebrtc_groups_by_first_departure() {
        let mut g = Grouper::new(Prefilter::Libwebrtc, ms(5));
        // Sent 0, 5 (not > 5 ms after the first: same group), 10 (> 5: new group).
        assert!(g.on_packet(at(0.0), at(20.0), B).is_none());
        assert!(g.on_packet(at(5.0), at(26.0), B).is_none());
        assert!(g.on_packet(at(10.0), at(32.0), B).is_none());
        assert_eq!(g.groups(), 1);
        // A reordered packet (sent before the current group's first) is ignored.
        assert!(g.on_packet(at(4.0), at(33.0), B).is_none());
        let d = g.on_packet(at(20.0), at(45.0), B).unwrap();
        assert_eq!(d.send_delta_ms, 5.0);
        assert_eq!(d.arrival_delta_ms, 6.0);
        assert_eq!(d.size_delta, -1200);
    }
}
