//! The medium — stations on one channel, with one PHY (IEEE 802.11-2016 10.3.2, 10.22.2).
//!
//! Wires [`Station`]s (queues, EDCAFs, sequence numbers), the [`Channel`] (who transmits,
//! collisions) and the [`Phy`] (airtime, interframe spaces) into a discrete-event loop that
//! jumps from one transmission to the next. One frame exchange, basic access (no RTS/CTS):
//!
//! - success: `DATA, SIFS, ACK`; everyone's idle count starts at the end of the Ack;
//! - collision (two or more transmitters in the same slot) or frame error (probability
//!   `frame_error_rate`, drawn per attempt): the medium is busy until the longest frame ends;
//!   the transmitters wait their Ack timeout (`SIFS + slot + preamble`), then AIFS; the
//!   others wait EIFS (`SIFS + Ack at the lowest rate + AIFS`, 10.3.2.3.7) after a frame error
//!   and AIFS after a collision, whose frames, at equal power, leave no PHY header to decode
//!   (see `basic`);
//! - an internal collision (two ACs of one station in the same slot) goes to the higher AC;
//!   the lower one behaves as after a collision, without airtime (10.22.2.4);
//! - backoff counters freeze while the medium is busy: a non-QoS (DCF) station counts the
//!   slots that ended idle (10.3.4.3); a QoS station's EDCAF acts at each slot boundary from the
//!   end of its AIFS, so it also decrements at the boundary where another transmission starts
//!   (10.22.2.4) — the rule Bianchi's chain follows (a busy period counts as one slot);
//! - a frame that reaches an empty queue with the EDCAF's counter at zero goes at once if the
//!   medium has been idle for AIFS, else the EDCAF draws a backoff first (10.3.4.3);
//! - within a TXOP (limit > 0), the winner sends its next frame SIFS after the Ack while the
//!   exchange still ends inside the limit (10.22.2.8).
//!
//! The frame exchanges live in modules of their own: `basic` (DATA/ACK, the TXOP's next
//! exchange, the wait after a collision or an error) and `block_ack` (A-MPDU with Block Ack);
//! `Medium::transmit`'s part is the contention (who transmits at a slot, the counters that
//! freeze) and the airtime of each frame. An RTS/CTS exchange would be a third module.
//!
//! Every attempt is written to [`FrameRecord`]s (ground truth: sequence number, retry flag,
//! PHY rate, queueing and channel-access time, outcome).
//!
//! Deviations:
//! - No RTS/CTS, fragmentation, NAV, beacons or management frames.
//! - Acks are never lost. A frame is lost with the probability the error model
//!   ([`super::fer`]) gives for its rate, length and the sending station's SNR (when the
//!   station has one), else with the medium's constant frame error rate.
//! - Each attempt's rate comes from the station's rate control ([`super::rate_control`]),
//!   which hears every attempt's outcome (collisions count as failures, as a real sender
//!   cannot tell them apart).

mod basic;
mod block_ack;

use super::ampdu;
use super::channel::{Channel, ChannelStats, Contender};
use super::edca::AccessCategory;
use super::phy::{Phy, PhyRate};
use super::station::{Frame, Station, StationConfig, StationStats};

use wisp_core::{Duration, Instant};

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Acknowledged.
    Acked,
    /// Another station transmitted in the same slot.
    Collision,
    /// Lost to the frame error rate.
    Errored,
    /// Lost an internal collision to a higher AC of the same station (no airtime).
    InternalCollision,
    /// Not sent: dropped before its first attempt, older than the station's MSDU lifetime
    /// (no airtime, no sequence number: the record's is 0).
    Expired,
}

/// Ground truth for one transmission attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRecord {
    pub station: u32,
    pub ac: AccessCategory,
    /// 802.11 sequence number (12 bits).
    pub seq: u16,
    /// The retry flag: not the frame's first attempt.
    pub retry: bool,
    pub rate: PhyRate,
    /// MSDU bytes (the IP packet).
    pub msdu_bytes: u32,
    pub enqueued: Instant,
    pub tx_start: Instant,
    /// PPDU airtime (zero for an internal collision).
    pub airtime: Duration,
    /// From enqueue to the head of the queue.
    pub queueing: Duration,
    /// From when this attempt became eligible (head of the queue, or the end of the previous
    /// attempt) to its start: AIFS/EIFS, backoff and frozen periods.
    pub access: Duration,
    pub outcome: Outcome,
    /// The MSDU was dropped after this attempt (retry limit).
    pub dropped: bool,
    /// The receiver (a station index; 0 for a station's frames to the AP in [`saturation`]).
    ///
    /// [`saturation`]: super::saturation
    pub dest: u32,
    /// The caller's tag; `None` for background traffic (a backlogged queue's frames).
    pub tag: Option<u64>,
}

impl FrameRecord {
    /// The record of one attempt of frame `f` of station `i`'s access category `ac`: its
    /// sequence number, retry flag and rate, when it started and its airtime, its outcome and
    /// whether the frame was dropped after it.
    fn of(
        f: &Frame,
        (i, ac): (usize, usize),
        (seq, retry, rate): (u16, bool, PhyRate),
        (t, airtime): (Instant, Duration),
        (outcome, dropped): (Outcome, bool),
    ) -> Self {
        FrameRecord {
            station: i as u32,
            ac: AccessCategory::ALL[ac],
            seq,
            retry,
            rate,
            msdu_bytes: f.bytes,
            enqueued: f.enqueued,
            tx_start: t,
            airtime,
            queueing: f.head_at.saturating_duration_since(f.enqueued),
            access: t.saturating_duration_since(f.eligible),
            outcome,
            dropped,
            dest: f.dest,
            tag: f.tag,
        }
    }
}

/// A TXOP in progress: the holder sends its next frame without contending.
#[derive(Clone, Copy, Debug)]
struct Txop {
    station: usize,
    ac: usize,
    at: Instant,
    start: Instant,
}

/// Stations sharing one channel.
#[derive(Debug)]
pub struct Medium {
    phy: Phy,
    channel: Channel,
    stations: Vec<Station>,
    frame_error_rate: f64,
    seed: u64,
    now: Instant,
    txop: Option<Txop>,
    records: Vec<FrameRecord>,
    recording: bool,
    // Scratch space, reused between transmissions.
    who: Vec<(usize, usize)>,
    contenders: Vec<Contender>,
    winners: Vec<usize>,
    on_air: Vec<(usize, usize)>,
    ends: Vec<Instant>,
    /// MPDUs in each on-air A-MPDU (0: a single MPDU with a normal Ack).
    agg: Vec<usize>,
    acked: Vec<bool>,
    /// Some station has an MSDU lifetime ([`StationConfig::lifetime`]).
    lifetimes: bool,
}

impl Medium {
    /// An empty medium on `phy`; `seed` is the run's master seed (each station draws from its
    /// own stream, `wifi/station/<i>`).
    pub fn new(phy: Phy, seed: u64) -> Self {
        Medium {
            phy,
            channel: Channel::new(phy.slot),
            stations: vec![],
            frame_error_rate: 0.0,
            seed,
            now: Instant::ZERO,
            txop: None,
            records: vec![],
            recording: true,
            who: vec![],
            contenders: vec![],
            winners: vec![],
            on_air: vec![],
            ends: vec![],
            agg: vec![],
            acked: vec![],
            lifetimes: false,
        }
    }

    /// Probability that a lone transmission is lost (0 by default).
    pub fn set_frame_error_rate(&mut self, p: f64) {
        self.frame_error_rate = if p.is_finite() {
            p.clamp(0.0, 1.0)
        } else {
            0.0
        };
    }

    /// Whether attempts are recorded (on by default).
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
    }

    pub fn phy(&self) -> &Phy {
        &self.phy
    }

    pub fn now(&self) -> Instant {
        self.now
    }

    /// Adds a station; returns its index.
    pub fn add_station(&mut self, config: StationConfig) -> usize {
        let i = self.stations.len();
        let rng = crate::seed::stream(self.seed, &format!("wifi/station/{i}"));
        let rc_rng = crate::seed::stream(self.seed, &format!("wifi/station/{i}/rate"));
        let saturated = config.saturated;
        self.lifetimes |= config.lifetime.is_some();
        let phy = self.phy;
        let mut s = Station::new(config, &phy, rng, rc_rng);
        s.idle_from = self.now;
        if let Some((ac, _)) = saturated {
            s.refill(ac.index(), self.now);
        }
        self.stations.push(s);
        i
    }

    pub fn station(&self, i: usize) -> &Station {
        &self.stations[i]
    }

    pub fn stations(&self) -> &[Station] {
        &self.stations
    }

    pub fn channel_stats(&self) -> ChannelStats {
        self.channel.stats()
    }

    /// Queues an MSDU of `bytes` at station `i` now; `false` if its queue is full.
    pub fn enqueue(&mut self, i: usize, ac: AccessCategory, bytes: u32) -> bool {
        let now = self.now;
        self.arrival_backoff(i, ac, now);
        self.stations[i].enqueue(ac, bytes, now)
    }

    /// A frame reaching an empty queue whose counter is zero goes at once only if the medium
    /// has been idle for AIFS; otherwise (busy, or idle for less) the EDCAF draws a backoff
    /// (IEEE 802.11-2016 10.3.4.3, 10.22.2.3).
    fn arrival_backoff(&mut self, i: usize, ac: AccessCategory, at: Instant) {
        let phy = self.phy;
        let s = &mut self.stations[i];
        let k = ac.index();
        if s.queued(ac) == 0 && s.edcaf[k].counter() == 0 && at < s.ready(k, &phy) {
            let Station { edcaf, rng, .. } = s;
            edcaf[k].backoff(rng);
        }
    }

    /// Queues an MSDU of `bytes` from station `i` to station `dest` with the caller's `tag` at
    /// `at` (not before the medium's clock: a frame handed over while a transmission is on the
    /// air, e.g. a reply to it, may be queued at its end); `false` if the queue is full.
    pub fn enqueue_to(
        &mut self,
        i: usize,
        ac: AccessCategory,
        dest: u32,
        tag: Option<u64>,
        bytes: u32,
        at: Instant,
    ) -> bool {
        let at = at.max(self.now);
        self.arrival_backoff(i, ac, at);
        self.stations[i].enqueue_to(ac, dest, tag, bytes, at)
    }

    /// Keeps station `i`'s `ac` queue for `dest` backlogged with untagged MSDUs of `bytes`
    /// from now on.
    pub fn backlog(&mut self, i: usize, dest: u32, ac: AccessCategory, bytes: u32) {
        let now = self.now;
        self.stations[i].backlog(dest, ac, bytes, now);
    }

    /// When the next transmission starts if nothing is queued meanwhile (`None`: every queue
    /// is empty). Changes nothing.
    pub fn next_transmission(&self) -> Option<Instant> {
        if let Some(x) = self.txop {
            return Some(x.at);
        }
        let mut best: Option<Instant> = None;
        for s in &self.stations {
            for ac in 0..4 {
                if let Some(f) = s.head(ac) {
                    let t = self.channel.access_time(&Contender {
                        ready: s.ready(ac, &self.phy),
                        counter: s.edcaf[ac].counter(),
                        head: f.eligible,
                    });
                    best = Some(best.map_or(t, |b: Instant| b.min(t)));
                }
            }
        }
        best
    }

    /// Carries out the next transmission if it starts before `end`, and returns its start
    /// (the clock moves there); `None` (nothing changed) otherwise.
    pub fn step_before(&mut self, end: Instant) -> Option<Instant> {
        let t = self.step(end)?;
        self.now = t;
        Some(t)
    }

    /// Moves the clock to `t` (never back) without transmitting: call it only when
    /// [`Medium::next_transmission`] is not before `t`.
    pub fn set_now(&mut self, t: Instant) {
        self.now = self.now.max(t);
    }

    /// The attempts recorded so far.
    pub fn records(&self) -> &[FrameRecord] {
        &self.records
    }

    /// Swaps the attempts recorded so far with `buf` (an empty buffer keeps its capacity).
    pub fn swap_records(&mut self, buf: &mut Vec<FrameRecord>) {
        std::mem::swap(&mut self.records, buf);
    }

    /// Takes the attempts recorded so far.
    pub fn take_records(&mut self) -> Vec<FrameRecord> {
        std::mem::take(&mut self.records)
    }

    /// Sum of the stations' statistics.
    pub fn totals(&self) -> StationStats {
        let mut t = StationStats::default();
        for s in &self.stations {
            let x = s.stats();
            t.delivered_packets += x.delivered_packets;
            t.delivered_bytes += x.delivered_bytes;
            t.attempts += x.attempts;
            t.retry_drops += x.retry_drops;
            t.queue_drops += x.queue_drops;
        }
        t
    }

    /// Runs every transmission that starts before `end`, then sets the clock to `end`.
    pub fn run_until(&mut self, end: Instant) {
        while let Some(t) = self.step(end) {
            self.now = t;
        }
        self.now = self.now.max(end);
    }

    /// Carries out the next transmission if it starts before `end`; returns its start.
    fn step(&mut self, end: Instant) -> Option<Instant> {
        self.who.clear();
        let t = if let Some(x) = self.txop.take() {
            if x.at >= end {
                self.txop = Some(x);
                return None;
            }
            self.who.push((x.station, x.ac));
            self.transmit(x.at, Some(x.start));
            return Some(x.at);
        } else {
            self.expire();
            self.contenders.clear();
            for (i, s) in self.stations.iter().enumerate() {
                for ac in 0..4 {
                    if let Some(f) = s.head(ac) {
                        self.who.push((i, ac));
                        self.contenders.push(Contender {
                            ready: s.ready(ac, &self.phy),
                            counter: s.edcaf[ac].counter(),
                            head: f.eligible,
                        });
                    }
                }
            }
            let t = self
                .channel
                .next_access(self.contenders.iter().copied(), &mut self.winners)?;
            if t >= end {
                return None;
            }
            t
        };
        // Keep only the winners in `who` (their indices increase).
        for (j, &k) in self.winners.iter().enumerate() {
            self.who[j] = self.who[k];
        }
        self.who.truncate(self.winners.len());
        self.transmit(t, None);
        Some(t)
    }

    /// The EDCAFs in `self.who` start transmitting at `t` (`txop`: the start of the TXOP this
    /// frame continues).
    fn transmit(&mut self, t: Instant, txop: Option<Instant>) {
        let phy = self.phy;
        // Every EDCAF counts the idle slots up to `t`, then freezes. A DCF station counts the
        // slots that ended idle before `t` (10.3.4.3); an EDCAF acts at every slot boundary from
        // the end of its AIFS, the boundary at `t` included, where it decrements while another
        // starts to transmit (10.22.2.4). The transmitters' counters are zero either way.
        for s in &mut self.stations {
            let qos = s.config.qos;
            for ac in 0..4 {
                // A counter at zero stays there (most of a saturated station's ACs): skip the
                // division.
                if s.edcaf[ac].counter() == 0 {
                    continue;
                }
                let ready = s.ready(ac, &phy);
                let mut n = self.channel.idle_slots(ready, t);
                if qos && t >= ready {
                    n = n.saturating_add(1);
                }
                s.edcaf[ac].count_down(n);
            }
        }
        // Internal collisions: per station, the highest AC goes.
        self.who.sort_unstable();
        let mut on_air = std::mem::take(&mut self.on_air);
        let mut ends = std::mem::take(&mut self.ends);
        on_air.clear();
        ends.clear();
        for k in 0..self.who.len() {
            let (i, ac) = self.who[k];
            let higher = self.who[k + 1..].iter().any(|&(j, _)| j == i);
            if higher {
                self.internal_collision(i, ac, t);
            } else {
                on_air.push((i, ac));
            }
        }
        // Rate and airtime of each frame (or A-MPDU).
        let mut busy_end = t;
        self.agg.clear();
        for &(i, ac) in &on_air {
            let s = &mut self.stations[i];
            let bytes = s.head(ac).map_or(0, |f| f.bytes);
            let rate = s.choose_rate(ac, t);
            let psdu = match s.config.ampdu {
                Some(cfg) if rate.mcs().is_some() => {
                    let limit = s.config.edca[ac].txop_limit;
                    let (n, psdu) = ampdu::plan(&phy, rate, &cfg, limit, s.queued_bytes(ac));
                    self.agg.push(n);
                    psdu
                }
                _ => {
                    self.agg.push(0);
                    Phy::mpdu_bytes(bytes)
                }
            };
            let end = t + phy.ppdu_duration(psdu, rate);
            busy_end = busy_end.max(end);
            ends.push(end);
        }
        let lone = on_air.len() == 1;
        if lone && self.agg[0] > 0 {
            let (i, ac) = on_air[0];
            let n = self.agg[0];
            self.transmit_ampdu(i, ac, t, ends[0], n);
            self.on_air = on_air;
            self.ends = ends;
            return;
        }
        if lone {
            let (i, ac) = on_air[0];
            if self.frame_errored(i, ac, t) {
                self.basic_failed(&on_air, &ends, busy_end, t, Outcome::Errored);
            } else {
                self.basic_acked(i, ac, t, ends[0], txop);
            }
        } else {
            self.basic_failed(&on_air, &ends, busy_end, t, Outcome::Collision);
        }
        self.on_air = on_air;
        self.ends = ends;
    }

    /// Drops every head frame that has outlived its station's MSDU lifetime by now (checked
    /// as the medium picks its next transmission, so a frame may outlive it by up to one
    /// exchange).
    fn expire(&mut self) {
        if !self.lifetimes {
            return;
        }
        let now = self.now;
        for i in 0..self.stations.len() {
            if self.stations[i].config.lifetime.is_none() {
                continue;
            }
            for ac in 0..4 {
                while self.stations[i].head_expired(ac, now) {
                    let s = &mut self.stations[i];
                    if self.recording
                        && let Some(f) = s.head(ac)
                    {
                        let sent = (0, false, s.cur_rate[ac]);
                        let outcome = (Outcome::Expired, true);
                        let r = FrameRecord::of(f, (i, ac), sent, (now, Duration::ZERO), outcome);
                        self.records.push(r);
                    }
                    s.stats.expired += 1;
                    s.pop(ac, now);
                }
            }
        }
    }

    fn record(
        &mut self,
        i: usize,
        ac: usize,
        t: Instant,
        airtime: Duration,
        outcome: Outcome,
        dropped: bool,
    ) {
        let s = &mut self.stations[i];
        let (seq, retry) = s.sequence(ac);
        if !self.recording {
            return;
        }
        let Some(f) = s.head(ac) else { return };
        let (i_ac, sent) = ((i, ac), (seq, retry, s.cur_rate[ac]));
        let r = FrameRecord::of(f, i_ac, sent, (t, airtime), (outcome, dropped));
        self.records.push(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::phy::Standard;
    use crate::wifi::phy::test_util::{rate, us};

    #[test]
    fn a_lone_frame_on_an_idle_medium_goes_at_once() {
        // 11a, DCF: the medium has been idle since 0; a frame queued at 1 ms with the
        // station's counter already run down goes at 1 ms and is acknowledged.
        let phy = Phy::new(Standard::A);
        let mut m = Medium::new(phy, 1);
        let s = m.add_station(StationConfig::dcf(&phy, rate(54.0)));
        m.run_until(Instant::from_millis(1));
        assert!(m.enqueue(s, AccessCategory::Be, 1500));
        m.run_until(Instant::from_millis(2));
        let r = m.records();
        assert_eq!(r.len(), 1);
        let f = r[0];
        assert_eq!(f.outcome, Outcome::Acked);
        assert_eq!((f.seq, f.retry), (0, false));
        assert_eq!(f.airtime, us(248));
        assert_eq!(f.queueing, Duration::ZERO);
        // DIFS + counter·slot ≤ 34 + 15·9 = 169 µs < 1 ms: it goes when it arrives.
        assert_eq!(f.tx_start, Instant::from_millis(1));
        assert_eq!(f.access, Duration::ZERO);
        assert_eq!(m.station(s).stats().delivered_bytes, 1500);
    }

    #[test]
    fn a_queue_records_queueing_access_and_sequence_numbers() {
        let phy = Phy::new(Standard::A);
        let mut m = Medium::new(phy, 7);
        let s = m.add_station(StationConfig::dcf(&phy, rate(24.0)));
        for _ in 0..3 {
            assert!(m.enqueue(s, AccessCategory::Be, 1000));
        }
        m.run_until(Instant::from_millis(10));
        let r = m.records();
        assert_eq!(r.len(), 3);
        assert_eq!(r.iter().map(|f| f.seq).collect::<Vec<_>>(), [0, 1, 2]);
        // Each frame after the first waits for the one ahead: its queueing time is the
        // previous exchange plus its access; its access is DIFS + backoff (≤ 34 + 15·9 µs).
        for w in r.windows(2) {
            let exchange = w[0].airtime + phy.sifs + phy.ack_duration(rate(24.0));
            assert_eq!(w[1].queueing, w[0].queueing + w[0].access + exchange);
            assert!(w[1].access >= us(34) && w[1].access <= us(34 + 15 * 9));
            assert_eq!(
                w[1].tx_start,
                w[0].tx_start + exchange + w[1].access,
                "{w:?}"
            );
        }
    }

    /// A station with a 20-ms MSDU lifetime and 200 frames queued at once at 6 Mbit/s (2 ms
    /// each): the first ten or so go, the rest expire unsent; none is sent after waiting more
    /// than the lifetime and one exchange, and every frame is accounted for.
    #[test]
    fn frames_older_than_the_lifetime_are_dropped_unsent() {
        let phy = Phy::new(Standard::A);
        let mut m = Medium::new(phy, 3);
        let mut c = StationConfig::dcf(&phy, rate(6.0));
        c.lifetime = Some(Duration::from_millis(20));
        let s = m.add_station(c);
        for _ in 0..200 {
            assert!(m.enqueue(s, AccessCategory::Be, 1500));
        }
        m.run_until(Instant::from_millis(500));
        let st = m.station(s).stats();
        assert_eq!(st.delivered_packets + st.retry_drops + st.expired, 200);
        assert!((5..=15).contains(&st.delivered_packets), "{st:?}");
        let r = m.records();
        let expired: Vec<_> = r.iter().filter(|f| f.outcome == Outcome::Expired).collect();
        assert_eq!(expired.len() as u64, st.expired);
        assert!(
            expired
                .iter()
                .all(|f| f.dropped && f.airtime == Duration::ZERO)
        );
        let exchange = phy.ppdu_duration(Phy::mpdu_bytes(1500), rate(6.0)) + us(500);
        for f in r.iter().filter(|f| f.outcome == Outcome::Acked) {
            assert!(
                f.tx_start - f.enqueued <= Duration::from_millis(20) + exchange,
                "{f:?}"
            );
        }
        // Without a lifetime every frame goes.
        let mut m = Medium::new(phy, 3);
        let s = m.add_station(StationConfig::dcf(&phy, rate(6.0)));
        for _ in 0..200 {
            assert!(m.enqueue(s, AccessCategory::Be, 1500));
        }
        m.run_until(Instant::from_millis(1000));
        assert_eq!(m.station(s).stats().delivered_packets, 200);
    }

    #[test]
    fn frame_errors_retry_with_the_retry_flag_up_to_the_limit() {
        let phy = Phy::new(Standard::B);
        let mut m = Medium::new(phy, 5);
        m.set_frame_error_rate(0.999_999);
        let s = m.add_station(StationConfig::dcf(&phy, rate(11.0)));
        m.enqueue(s, AccessCategory::Be, 500);
        m.run_until(Instant::from_secs(1));
        let r = m.records();
        // dot11ShortRetryLimit = 7 attempts, all the same sequence number, then a drop.
        assert_eq!(r.len(), 7, "{r:?}");
        assert!(
            r.iter()
                .all(|f| f.seq == 0 && f.outcome == Outcome::Errored)
        );
        assert!(!r[0].retry && r[1..].iter().all(|f| f.retry));
        assert!(r[6].dropped && !r[5].dropped);
        // After an error a transmitter waits its Ack timeout, then DIFS, then its backoff.
        for w in r.windows(2) {
            let gap = w[1].tx_start - (w[0].tx_start + w[0].airtime);
            assert!(gap >= phy.ack_timeout() + phy.difs(), "{gap:?}");
            assert_eq!(w[1].access, gap - phy.ack_timeout());
        }
        let st = m.station(s).stats();
        assert_eq!(
            (st.retry_drops, st.attempts, st.delivered_packets),
            (1, 7, 0)
        );
    }

    #[test]
    fn two_stations_collide_when_their_counters_match() {
        // Saturated stations: some slots have two counters at zero; every collision is
        // recorded for both, and the channel counts it once.
        let phy = Phy::new(Standard::A);
        let mut m = Medium::new(phy, 11);
        for _ in 0..2 {
            let mut c = StationConfig::dcf(&phy, rate(54.0));
            c.saturated = Some((AccessCategory::Be, 1500));
            m.add_station(c);
        }
        m.run_until(Instant::from_secs(1));
        let r = m.records();
        let collided: Vec<_> = r
            .iter()
            .filter(|f| f.outcome == Outcome::Collision)
            .collect();
        let stats = m.channel_stats();
        assert!(stats.collisions > 0);
        assert_eq!(collided.len() as u64, 2 * stats.collisions);
        for pair in collided.chunks(2) {
            assert_eq!(pair[0].tx_start, pair[1].tx_start);
            assert_ne!(pair[0].station, pair[1].station);
        }
        // A frame's next attempt after a collision carries the retry flag.
        let next = r
            .iter()
            .find(|f| f.station == collided[0].station && f.tx_start > collided[0].tx_start)
            .unwrap();
        assert!(next.retry && next.seq == collided[0].seq);
        assert_eq!(stats.successes, m.totals().delivered_packets);
    }

    #[test]
    fn a_txop_sends_a_burst_and_the_higher_ac_wins_inside_a_station() {
        // AC_VO on 11a: a 500-byte MSDU is a 536-byte MPDU, 20 + 4·⌈(16+8·536+6)/216⌉ = 100 µs
        // at 54 Mbit/s; an exchange is 100 + SIFS 16 + Ack 28 = 144 µs, the next one SIFS
        // later. The 1.504-ms TXOP holds k exchanges while 144 + 160·(k−1) ≤ 1504: k = 9.
        let phy = Phy::new(Standard::A);
        let mut m = Medium::new(phy, 3);
        let s = m.add_station(StationConfig::edca(&phy, rate(54.0)));
        for _ in 0..12 {
            m.enqueue(s, AccessCategory::Vo, 500);
        }
        m.run_until(Instant::from_millis(20));
        let r = m.records();
        assert_eq!(r.len(), 12);
        let sifs_apart = r
            .windows(2)
            .filter(|w| w[1].tx_start == w[0].tx_start + w[0].airtime + us(16 + 28 + 16))
            .count();
        // Twelve frames: a TXOP of 9 and one of 3, so 8 + 2 frames follow SIFS after an Ack.
        assert_eq!(sifs_apart, 10, "{r:?}");

        // Two ACs of one station whose counters expire together: VO goes, BE backs off.
        let mut m = Medium::new(phy, 3);
        let mut c = StationConfig::edca(&phy, rate(54.0));
        c.edca[AccessCategory::Be.index()] = c.edca[AccessCategory::Vo.index()];
        let s = m.add_station(c);
        let mut internal = 0;
        for k in 0..200 {
            m.run_until(Instant::from_millis(10 * k));
            m.enqueue(s, AccessCategory::Be, 200);
            m.enqueue(s, AccessCategory::Vo, 200);
            m.run_until(Instant::from_millis(10 * k + 5));
            for f in m.take_records() {
                if f.outcome == Outcome::InternalCollision {
                    internal += 1;
                    assert_eq!(f.ac, AccessCategory::Be);
                    assert_eq!(f.airtime, Duration::ZERO);
                }
                assert_ne!(f.outcome, Outcome::Collision);
            }
        }
        assert!(internal > 0);
    }

    #[test]
    fn a_qos_station_also_decrements_at_the_busy_boundary() {
        // Two stations with frames from t = 0: the one with the smaller counter c_w transmits
        // at AIFS + c_w·slot. The other's counter c_l then stands at c_l − c_w under DCF
        // (10.3.4.3: the slot in which the medium turns busy does not count) and at
        // c_l − c_w − 1 under EDCA (10.22.2.4: it decrements at that slot boundary too).
        let phy = Phy::new(Standard::A);
        let mut checked = [0; 2];
        for seed in 0..200 {
            for (k, qos) in [false, true].into_iter().enumerate() {
                let mut m = Medium::new(phy, seed);
                for _ in 0..2 {
                    let mut c = StationConfig::dcf(&phy, rate(54.0));
                    c.qos = qos;
                    m.add_station(c);
                }
                let be = AccessCategory::Be.index();
                let c: Vec<u32> = (0..2).map(|i| m.station(i).edcaf[be].counter()).collect();
                if c[0] == c[1] || c[0].min(c[1]) == 0 {
                    continue;
                }
                for i in 0..2 {
                    assert!(m.enqueue(i, AccessCategory::Be, 1500));
                }
                let (w, l) = if c[0] < c[1] { (0, 1) } else { (1, 0) };
                let t = m.step_before(Instant::from_secs(1)).unwrap();
                assert_eq!(t, Instant::ZERO + phy.difs() + phy.slot * u64::from(c[w]));
                let after = m.station(l).edcaf[be].counter();
                let want = c[l] - c[w] - u32::from(qos);
                assert_eq!(after, want, "qos {qos}: {c:?}");
                checked[k] += 1;
            }
        }
        assert!(checked.iter().all(|&n| n > 0));
    }

    #[test]
    fn the_same_seed_gives_the_same_frames() {
        let phy = Phy::new(Standard::G);
        let run = |seed| {
            let mut m = Medium::new(phy, seed);
            for _ in 0..5 {
                let mut c = StationConfig::dcf(&phy, rate(24.0));
                c.saturated = Some((AccessCategory::Be, 1200));
                m.add_station(c);
            }
            m.run_until(Instant::from_millis(200));
            m.take_records()
        };
        assert_eq!(run(4), run(4));
        assert_ne!(run(4), run(5));
    }

    #[test]
    fn a_stations_snr_sets_its_loss_rate() {
        // 11a at 36 Mbit/s, 1500-byte packets, one saturated station at 16 dB: the share of
        // attempts lost matches the error model's FER for the 1536-byte MPDU.
        use crate::wifi::fer::{Snr, frame_error_rate};
        let phy = Phy::new(Standard::A);
        let mut m = Medium::new(phy, 2);
        let mut c = StationConfig::dcf(&phy, rate(36.0));
        c.saturated = Some((AccessCategory::Be, 1500));
        c.snr = Some(Snr::Constant(16.0));
        let s = m.add_station(c);
        m.run_until(Instant::from_secs(5));
        let fer = frame_error_rate(rate(36.0), 16.0, Phy::mpdu_bytes(1500));
        assert!((0.05..0.6).contains(&fer), "{fer}");
        let st = m.station(s).stats();
        let lost = 1.0 - st.delivered_packets as f64 / st.attempts as f64;
        assert!((lost - fer).abs() < 0.02, "lost {lost}, model {fer}");
        assert!(m.records().iter().all(|f| f.outcome != Outcome::Collision));
    }

    #[test]
    fn scripted_and_minstrel_rates_reach_the_records() {
        use crate::wifi::fer::Snr;
        use crate::wifi::rate_control::{MinstrelParams, RateControlConfig};
        let phy = Phy::new(Standard::A);
        // A script: 54 Mbit/s, then 12 from 1 s.
        let mut m = Medium::new(phy, 4);
        let mut c = StationConfig::dcf(&phy, rate(6.0));
        c.saturated = Some((AccessCategory::Be, 1000));
        c.rate_control = Some(
            RateControlConfig::parse("script:0s:54,1s:12", rate(6.0), &phy.data_rates(20, false))
                .unwrap(),
        );
        m.add_station(c);
        m.run_until(Instant::from_secs(2));
        for f in m.records() {
            let want = if f.tx_start < Instant::from_secs(1) {
                54.0
            } else {
                12.0
            };
            assert_eq!(f.rate, rate(want), "{f:?}");
            assert_eq!(f.airtime, phy.ppdu_duration(Phy::mpdu_bytes(1000), f.rate));
        }
        // Minstrel with the SNR stepping from 35 dB to 12 dB at 2 s: most frames go at 54
        // Mbit/s in the second before the step and at 24 Mbit/s or less in the last second
        // (at 12 dB, 36 Mbit/s loses nearly every 1536-byte frame by the error model).
        assert!(crate::wifi::fer::frame_error_rate(rate(36.0), 12.0, 1536) > 0.9);
        let mut m = Medium::new(phy, 4);
        let mut c = StationConfig::dcf(&phy, rate(6.0));
        c.saturated = Some((AccessCategory::Be, 1500));
        c.snr = Some(Snr::parse("0s:35,2s:12").unwrap());
        c.rate_control = Some(RateControlConfig::Minstrel(MinstrelParams::default()));
        let s = m.add_station(c);
        m.run_until(Instant::from_secs(4));
        let share = |from: u64, to: u64, ok: &dyn Fn(PhyRate) -> bool| {
            let w: Vec<_> = m
                .records()
                .iter()
                .filter(|f| {
                    f.tx_start >= Instant::from_secs(from) && f.tx_start < Instant::from_secs(to)
                })
                .filter(|f| f.outcome == Outcome::Acked)
                .collect();
            assert!(!w.is_empty());
            w.iter().filter(|f| ok(f.rate)).count() as f64 / w.len() as f64
        };
        assert!(share(1, 2, &|r| r == rate(54.0)) > 0.85);
        assert!(share(3, 4, &|r| r <= rate(24.0)) > 0.9);
        assert!(m.station(s).rate_control().best_rate().unwrap() <= rate(24.0));
    }

    #[test]
    fn ampdu_multiplies_one_ht_stations_goodput() {
        // One saturated 11n (5 GHz) DCF station, HT20 MCS 7 (65 Mbit/s), 1500-byte MSDUs.
        use crate::wifi::ampdu::AmpduConfig;
        let phy = Phy::new(Standard::N5);
        let r = PhyRate::ht(7, 20, false).unwrap();
        let run = |ampdu: Option<AmpduConfig>| {
            let mut m = Medium::new(phy, 6);
            let mut c = StationConfig::dcf(&phy, r);
            c.saturated = Some((AccessCategory::Be, 1500));
            c.ampdu = ampdu;
            let s = m.add_station(c);
            m.run_until(Instant::from_secs(5));
            let st = m.station(s).stats();
            (st.delivered_bytes as f64 * 8.0 / 5e6, m)
        };
        let (off, _) = run(None);
        let (on, m) = run(Some(AmpduConfig::default()));
        // By hand: without aggregation, DIFS 34 + 7.5·9 + 228 + SIFS 16 + Ack 28 = 373.5 µs
        // per 1500 B (32.1 Mbit/s). With it, the 5.484-ms PPDU limit holds 28 subframes
        // (crate::wifi::ampdu's test): 43,230 bytes in 36 + 4·1331 = 5360 µs; plus DIFS 34,
        // 7.5·9, SIFS 16 and the BlockAck (32 B at 24 Mbit/s: 32 µs) = 5509.5 µs per 28 MSDUs.
        let off_by_hand = 1500.0 * 8.0 / 373.5;
        let on_by_hand = 28.0 * 1500.0 * 8.0 / 5509.5;
        assert!((off - off_by_hand).abs() / off_by_hand < 0.01, "{off}");
        assert!((on - on_by_hand).abs() / on_by_hand < 0.01, "{on}");
        assert!(on > 1.8 * off && on < 65.0, "on {on}, off {off}");
        // Every attempt of an A-MPDU shares its start and airtime; 28 per PPDU.
        let r0 = &m.records()[..28];
        assert!(
            r0.iter()
                .all(|f| f.tx_start == r0[0].tx_start && f.airtime == us(5360))
        );
        assert_eq!(
            r0.iter().map(|f| f.seq).collect::<Vec<_>>(),
            (0..28).collect::<Vec<u16>>()
        );
        assert_ne!(m.records()[28].tx_start, r0[0].tx_start);
    }

    #[test]
    fn ampdu_losses_are_retransmitted_per_mpdu() {
        // At an SNR where an MPDU is lost ~20% of the time, every lost MPDU comes back in a
        // later A-MPDU with the retry flag and its sequence number, until acknowledged or
        // dropped at its own retry limit; the acknowledged share matches the model.
        use crate::wifi::ampdu::{AmpduConfig, qos_mpdu_bytes};
        use crate::wifi::fer::{Snr, data_success_rate, header_success_rate};
        let phy = Phy::new(Standard::N5);
        let r = PhyRate::ht(5, 20, false).unwrap();
        let db = (0..400)
            .map(|i| 10.0 + f64::from(i) * 0.05)
            .find(|&db| data_success_rate(r, db, qos_mpdu_bytes(1500)) > 0.8)
            .unwrap();
        let p_ok = data_success_rate(r, db, qos_mpdu_bytes(1500)) * header_success_rate(r, db);
        let mut m = Medium::new(phy, 8);
        let mut c = StationConfig::edca(&phy, r);
        c.saturated = Some((AccessCategory::Be, 1500));
        c.snr = Some(Snr::Constant(db));
        c.ampdu = Some(AmpduConfig::default());
        let s = m.add_station(c);
        // One second: fewer than 4096 MSDUs, so sequence numbers do not wrap.
        m.run_until(Instant::from_secs(1));
        let recs = m.records();
        let st = m.station(s).stats();
        assert!(st.delivered_packets + st.retry_drops < 4000, "{st:?}");
        let share = st.delivered_packets as f64 / st.attempts as f64;
        assert!((share - p_ok).abs() < 0.02, "{share} vs {p_ok}");
        let mut seen = std::collections::HashMap::new();
        for f in recs {
            let tries = seen.entry(f.seq).or_insert(0u32);
            // A retry carries the flag; first attempts do not.
            assert_eq!(f.retry, *tries > 0, "{f:?}");
            *tries += 1;
            assert!(*tries <= 7, "{f:?}");
        }
        let retried = recs.iter().filter(|f| f.retry).count();
        assert!(retried > 100, "{retried}");
    }

    use proptest::prelude::*;

    /// Queues `arrivals` (station modulo `stations`, AC index, time in µs, bytes) in time order,
    /// runs the medium to `end`; the MSDUs queued and every attempt but internal collisions.
    fn drive(
        m: &mut Medium,
        stations: usize,
        mut arrivals: Vec<(usize, usize, u64, u32)>,
        end: Instant,
    ) -> (u64, Vec<FrameRecord>) {
        arrivals.sort_by_key(|a| a.2);
        let mut queued = 0u64;
        for (sta, ac, at_us, bytes) in arrivals {
            m.run_until(Instant::from_micros(at_us));
            if m.enqueue(sta % stations, AccessCategory::ALL[ac], bytes) {
                queued += 1;
            }
        }
        m.run_until(end);
        let recs = m
            .records()
            .iter()
            .filter(|f| f.outcome != Outcome::InternalCollision)
            .copied()
            .collect();
        (queued, recs)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever arrives when: the medium carries one exchange at a time (acknowledged
        /// frames never overlap, nor overlap a collision), attempts come in time order, every
        /// queued MSDU is delivered or dropped, and the sequence numbers of one station's
        /// acknowledged frames increase within each AC (the ACs share one counter).
        #[test]
        fn wifi_medium_invariants(
            seed in 0u64..1000,
            std in 0usize..3,
            stations in 1usize..8,
            arrivals in proptest::collection::vec((0usize..8, 0usize..4, 0u64..50_000, 40u32..2000), 1..200),
            fer in 0.0f64..0.3,
        ) {
            let standard = [Standard::B, Standard::A, Standard::G][std];
            let phy = Phy::new(standard);
            let r = PhyRate::from_100kbps(phy.rates()[(seed as usize) % phy.rates().len()]);
            let mut m = Medium::new(phy, seed);
            m.set_frame_error_rate(fer);
            for _ in 0..stations {
                m.add_station(StationConfig::edca(&phy, r));
            }
            let (queued, recs) = drive(&mut m, stations, arrivals, Instant::from_secs(5));
            let mut busy_until = Instant::ZERO;
            let mut last: Option<FrameRecord> = None;
            for f in &recs {
                match last {
                    // Transmissions in the same slot are a collision, all of them.
                    Some(l) if f.tx_start == l.tx_start => {
                        prop_assert!(f.outcome == Outcome::Collision && l.outcome == Outcome::Collision,
                            "{l:?} and {f:?} share a start");
                    }
                    // A new transmission starts once the last busy period is over.
                    _ => prop_assert!(f.tx_start >= busy_until, "{f:?} starts before {busy_until:?}"),
                }
                let end = f.tx_start + f.airtime
                    + if f.outcome == Outcome::Acked { phy.sifs + phy.ack_duration(f.rate) } else { Duration::ZERO };
                busy_until = busy_until.max(end);
                last = Some(*f);
            }
            let totals = m.totals();
            prop_assert!(totals.delivered_packets + totals.retry_drops <= queued);
            // With 5 s to drain, every queued frame was delivered or dropped.
            prop_assert_eq!(totals.delivered_packets + totals.retry_drops, queued);
            for (i, ac) in (0..stations).flat_map(|i| AccessCategory::ALL.map(|ac| (i, ac))) {
                let seqs: Vec<u16> = recs
                    .iter()
                    .filter(|f| f.station == i as u32 && f.ac == ac && f.outcome == Outcome::Acked)
                    .map(|f| f.seq)
                    .collect();
                for w in seqs.windows(2) {
                    prop_assert!(w[1] > w[0], "{seqs:?}");
                }
            }
        }

        /// HT/VHT stations with A-MPDU on or off, an SNR or a constant FER, fixed rates or
        /// Minstrel: one busy period at a time (an A-MPDU's MPDUs share a start; two
        /// stations' frames in one slot are a collision), every queued MSDU delivered or
        /// dropped, none acknowledged twice, the retry flag set exactly on repeated attempts.
        #[test]
        fn wifi_medium_invariants_ht_ampdu(
            seed in 0u64..1000,
            ac_std in proptest::bool::ANY,
            stations in 1usize..6,
            arrivals in proptest::collection::vec((0usize..6, 0usize..4, 0u64..50_000, 40u32..2000), 1..300),
            mcs in 0u8..8,
            width in 0usize..2,
            sgi in proptest::bool::ANY,
            ampdu in proptest::bool::ANY,
            snr in proptest::option::of(0.0f64..35.0),
            minstrel in proptest::bool::ANY,
            fer in 0.0f64..0.3,
        ) {
            use crate::wifi::ampdu::AmpduConfig;
            use crate::wifi::fer::Snr;
            use crate::wifi::rate_control::{MinstrelParams, RateControlConfig};
            let standard = if ac_std { Standard::Ac } else { Standard::N5 };
            let phy = Phy::new(standard);
            let w = [20, 40][width];
            let r = if ac_std { PhyRate::vht(mcs, w, sgi) } else { PhyRate::ht(mcs, w, sgi) }.unwrap();
            let mut m = Medium::new(phy, seed);
            m.set_frame_error_rate(fer);
            for _ in 0..stations {
                let mut c = StationConfig::edca(&phy, r);
                c.snr = snr.map(Snr::Constant);
                c.ampdu = ampdu.then(AmpduConfig::default);
                if minstrel {
                    c.rate_control = Some(RateControlConfig::Minstrel(MinstrelParams::default()));
                }
                m.add_station(c);
            }
            let (queued, recs) = drive(&mut m, stations, arrivals, Instant::from_secs(10));
            let mut busy_until = Instant::ZERO;
            let mut last: Option<FrameRecord> = None;
            for f in &recs {
                match last {
                    Some(l) if f.tx_start == l.tx_start => {
                        if f.station != l.station {
                            prop_assert!(f.outcome == Outcome::Collision && l.outcome == Outcome::Collision,
                                "{l:?} and {f:?} share a start");
                        } else {
                            // One A-MPDU: same airtime.
                            prop_assert!(ampdu && f.airtime == l.airtime, "{l:?} and {f:?}");
                        }
                    }
                    _ => prop_assert!(f.tx_start >= busy_until, "{f:?} starts before {busy_until:?}"),
                }
                let end = f.tx_start + f.airtime;
                busy_until = busy_until.max(end);
                last = Some(*f);
            }
            let totals = m.totals();
            prop_assert_eq!(totals.delivered_packets + totals.retry_drops, queued);
            // Fewer than 4096 MSDUs per station: sequence numbers do not wrap. (An internal
            // collision is an attempt too.)
            let mut tries = std::collections::HashMap::new();
            for f in m.records() {
                let e = tries.entry((f.station, f.seq)).or_insert((0u32, false));
                prop_assert_eq!(f.retry, e.0 > 0, "{:?}", f);
                prop_assert!(!e.1, "acknowledged twice: {:?}", f);
                e.0 += 1;
                e.1 = f.outcome == Outcome::Acked;
            }
        }
    }
}
