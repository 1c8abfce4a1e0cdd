//! The medium — stations on one channel, with one PHY (IEEE 802.11-2016 10.3.2, 10.22.2).
//!
//! Wires [`Station`]s (queues, EDCAFs, sequence numbers), the [`Channel`] (who transmits,
//! collisions) and the [`Phy`] (airtime, interframe spaces) into a discrete-event loop that
//! jumps from one transmission to the next. One frame exchange, basic access (no RTS/CTS):
//!
//! - success: `DATA, SIFS, ACK`; everyone's idle count starts at the end of the Ack;
//! - collision (two or more transmitters in the same slot) or frame error (probability
//!   `frame_error_rate`, drawn per attempt): the medium is busy until the longest frame ends;
//!   the transmitters wait their Ack timeout (`SIFS + slot + preamble`), the others EIFS
//!   (`SIFS + Ack at the lowest rate + AIFS`), before counting again (10.3.2.3.7);
//! - an internal collision (two ACs of one station in the same slot) goes to the higher AC;
//!   the lower one behaves as after a collision, without airtime (10.22.2.4);
//! - within a TXOP (limit > 0), the winner sends its next frame SIFS after the Ack while the
//!   exchange still ends inside the limit (10.22.2.8).
//!
//! Every attempt is written to [`FrameRecord`]s (ground truth: sequence number, retry flag,
//! PHY rate, queueing and channel-access time, outcome).
//!
//! Deviations:
//! - No RTS/CTS, fragmentation, NAV, beacons or management frames.
//! - Acks are never lost; the frame error rate is one constant for every rate and station.

use super::channel::{Channel, ChannelStats, Contender};
use super::edca::{AccessCategory, AfterFailure};
use super::phy::{Phy, PhyRate};
use super::station::{Station, StationConfig, StationStats};
use rand::RngExt;
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
        let saturated = config.saturated;
        let mut s = Station::new(config, rng);
        s.idle_from = self.now;
        if let Some((ac, bytes)) = saturated {
            s.enqueue(ac, bytes, self.now);
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
        self.stations[i].enqueue(ac, bytes, now)
    }

    /// The attempts recorded so far.
    pub fn records(&self) -> &[FrameRecord] {
        &self.records
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
        // Keep only the winners in `who`.
        let winners: Vec<(usize, usize)> = self.winners.iter().map(|&k| self.who[k]).collect();
        self.who.clear();
        self.who.extend(winners);
        self.transmit(t, None);
        Some(t)
    }

    /// The EDCAFs in `self.who` start transmitting at `t` (`txop`: the start of the TXOP this
    /// frame continues).
    fn transmit(&mut self, t: Instant, txop: Option<Instant>) {
        let phy = self.phy;
        // Every EDCAF counts the idle slots up to `t`, then freezes.
        for s in &mut self.stations {
            for ac in 0..4 {
                let ready = s.ready(ac, &phy);
                let n = self.channel.idle_slots(ready, t);
                s.edcaf[ac].count_down(n);
            }
        }
        // Internal collisions: per station, the highest AC goes.
        self.who.sort_unstable();
        let mut on_air: Vec<(usize, usize)> = Vec::with_capacity(self.who.len());
        for k in 0..self.who.len() {
            let (i, ac) = self.who[k];
            let higher = self.who[k + 1..].iter().any(|&(j, _)| j == i);
            if higher {
                self.internal_collision(i, ac, t);
            } else {
                on_air.push((i, ac));
            }
        }
        // Airtime of each frame.
        let mut busy_end = t;
        let mut ends = Vec::with_capacity(on_air.len());
        for &(i, ac) in &on_air {
            let s = &self.stations[i];
            let bytes = s.head(ac).map_or(0, |f| f.bytes);
            let end = t + phy.ppdu_duration(Phy::mpdu_bytes(bytes), s.config.rate);
            busy_end = busy_end.max(end);
            ends.push(end);
        }
        let lone = on_air.len() == 1;
        let errored = lone
            && self.frame_error_rate > 0.0
            && self.stations[on_air[0].0].rng.random::<f64>() < self.frame_error_rate;
        if lone && !errored {
            let (i, ac) = on_air[0];
            let rate = self.stations[i].config.rate;
            let ack_end = ends[0] + phy.sifs + phy.ack_duration(rate);
            self.channel.on_busy(t, ack_end, 1, true);
            for s in &mut self.stations {
                s.idle_from = ack_end;
            }
            self.record(i, ac, t, ends[0] - t, Outcome::Acked, false);
            let s = &mut self.stations[i];
            let bytes = s.head(ac).map_or(0, |f| f.bytes);
            s.stats.delivered_packets += 1;
            s.stats.delivered_bytes += u64::from(bytes);
            s.stats.attempts += 1;
            let Station { edcaf, rng, .. } = s;
            edcaf[ac].on_success(rng);
            s.pop(ac, ack_end);
            // Continue the TXOP while the next exchange ends within the limit.
            let limit = s.config.edca[ac].txop_limit;
            if !limit.is_zero() {
                let start = txop.unwrap_or(t);
                if let Some(next) = s.head(ac) {
                    let at = ack_end + phy.sifs;
                    let exchange = phy.ppdu_duration(Phy::mpdu_bytes(next.bytes), s.config.rate)
                        + phy.sifs
                        + phy.ack_duration(s.config.rate);
                    if (at + exchange).saturating_duration_since(start) <= limit {
                        self.txop = Some(Txop {
                            station: i,
                            ac,
                            at,
                            start,
                        });
                    }
                }
            }
            return;
        }
        // Collision or frame error: nobody is acknowledged.
        let outcome = if lone {
            Outcome::Errored
        } else {
            Outcome::Collision
        };
        self.channel.on_busy(t, busy_end, on_air.len(), false);
        let eifs_ext = phy.eifs_minus_aifs();
        for s in &mut self.stations {
            s.idle_from = busy_end + eifs_ext;
        }
        for (k, &(i, ac)) in on_air.iter().enumerate() {
            let resume = (ends[k] + phy.ack_timeout()).max(busy_end);
            self.stations[i].idle_from = resume;
            self.fail(i, ac, t, ends[k] - t, outcome, resume);
        }
    }

    fn internal_collision(&mut self, i: usize, ac: usize, t: Instant) {
        self.fail(i, ac, t, Duration::ZERO, Outcome::InternalCollision, t);
    }

    /// The attempt of `(i, ac)` at `t` failed; the frame is retried from `resume` or dropped.
    fn fail(
        &mut self,
        i: usize,
        ac: usize,
        t: Instant,
        airtime: Duration,
        outcome: Outcome,
        resume: Instant,
    ) {
        let s = &mut self.stations[i];
        if outcome != Outcome::InternalCollision {
            s.stats.attempts += 1;
        }
        let Station { edcaf, rng, .. } = s;
        let verdict = edcaf[ac].on_failure(rng);
        let dropped = verdict == AfterFailure::Drop;
        self.record(i, ac, t, airtime, outcome, dropped);
        let s = &mut self.stations[i];
        if dropped {
            s.stats.retry_drops += 1;
            s.pop(ac, resume);
        } else if let Some(f) = s.head_mut(ac) {
            f.eligible = resume;
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
        self.records.push(FrameRecord {
            station: i as u32,
            ac: AccessCategory::ALL[ac],
            seq,
            retry,
            rate: s.config.rate,
            msdu_bytes: f.bytes,
            enqueued: f.enqueued,
            tx_start: t,
            airtime,
            queueing: f.head_at.saturating_duration_since(f.enqueued),
            access: t.saturating_duration_since(f.eligible),
            outcome,
            dropped,
        });
    }
}
