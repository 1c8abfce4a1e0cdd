//! The basic frame exchange (IEEE 802.11-2016 10.3.2.3, 10.22.2): `DATA, SIFS, ACK` after a
//! lone transmitter's success, with the TXOP's next exchange SIFS after the Ack; after a
//! collision or a frame error, nobody is acknowledged and everyone waits (the transmitters their
//! Ack timeout; the others EIFS after a frame error, AIFS after a collision); an internal
//! collision's loser behaves as after a collision, without airtime. (An RTS/CTS exchange would
//! be a module of its own beside this one.)
//!
//! EIFS (10.3.2.3.7) follows a frame whose start the PHY indicated and that was not received
//! with a correct FCS. A lone frame lost to an error is such a frame for the other stations.
//! Frames of a collision start in the same slot and reach every station at the same power (one
//! collision domain, no capture: the AP decodes none of them); at that SINR (about 0 dB) no
//! station's PHY gets a PHY header, so none indicates a frame start: the medium is only busy
//! (CCA), and the others count their AIFS from its end. ns-3 decides the same per receiver from
//! the SINR (its preamble detection needs 4 dB): with every node at one power it defers EIFS
//! after no collision (`scripts/compare-ns3.py`).

use super::{Medium, Outcome, Txop};
use crate::wifi::edca::AfterFailure;
use crate::wifi::phy::Phy;
use crate::wifi::station::Station;
use rand::RngExt;
use wisp_core::{Duration, Instant};

impl Medium {
    /// Whether the lone frame of `(i, ac)` sent at `t` is lost to a frame error: the error
    /// model's probability for its rate, length and the station's SNR, else the medium's
    /// constant frame error rate (one draw).
    pub(super) fn frame_errored(&mut self, i: usize, ac: usize, t: Instant) -> bool {
        let s = &mut self.stations[i];
        let bytes = Phy::mpdu_bytes(s.head(ac).map_or(0, |f| f.bytes));
        let rate = s.cur_rate[ac];
        match s.frame_error_rate(rate, bytes, t) {
            Some(p) => s.rng.random::<f64>() < p,
            None => self.frame_error_rate > 0.0 && s.rng.random::<f64>() < self.frame_error_rate,
        }
    }

    /// The lone frame of `(i, ac)`, on the air from `t` to `end`, is acknowledged: everyone's
    /// idle count starts at the end of the Ack, and the TXOP (begun at `txop`, else now)
    /// continues while the next exchange ends within its limit.
    pub(super) fn basic_acked(
        &mut self,
        i: usize,
        ac: usize,
        t: Instant,
        end: Instant,
        txop: Option<Instant>,
    ) {
        let phy = self.phy;
        let rate = self.stations[i].cur_rate[ac];
        let ack_end = end + phy.sifs + phy.ack_duration(rate);
        self.channel.on_busy(t, ack_end, 1, true);
        for s in &mut self.stations {
            s.idle_from = ack_end;
        }
        self.record(i, ac, t, end - t, Outcome::Acked, false);
        let s = &mut self.stations[i];
        let bytes = s.head(ac).map_or(0, |f| f.bytes);
        s.stats.delivered_packets += 1;
        s.stats.delivered_bytes += u64::from(bytes);
        s.stats.attempts += 1;
        s.report(ac, ack_end, true);
        let Station { edcaf, rng, .. } = s;
        edcaf[ac].on_success(rng);
        s.pop(ac, ack_end);
        // Continue the TXOP while the next exchange ends within the limit.
        let limit = s.config.edca[ac].txop_limit;
        if !limit.is_zero() {
            let start = txop.unwrap_or(t);
            if let Some(next) = s.head(ac) {
                let at = ack_end + phy.sifs;
                let exchange = phy.ppdu_duration(Phy::mpdu_bytes(next.bytes), rate)
                    + phy.sifs
                    + phy.ack_duration(rate);
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
    }

    /// The frames `on_air` from `t` (ending at `ends`, the medium busy until `busy_end`) were
    /// not acknowledged (`outcome`: a collision, or a lone frame's error): the transmitters wait
    /// their Ack timeout, everyone else EIFS after an error and AIFS after a collision (no PHY
    /// header to decode, see the module doc), and each frame (or A-MPDU) is retried or dropped.
    pub(super) fn basic_failed(
        &mut self,
        on_air: &[(usize, usize)],
        ends: &[Instant],
        busy_end: Instant,
        t: Instant,
        outcome: Outcome,
    ) {
        let phy = self.phy;
        self.channel.on_busy(t, busy_end, on_air.len(), false);
        let eifs_ext = if outcome == Outcome::Errored {
            phy.eifs_minus_aifs()
        } else {
            Duration::ZERO
        };
        for s in &mut self.stations {
            s.idle_from = busy_end + eifs_ext;
        }
        for (k, &(i, ac)) in on_air.iter().enumerate() {
            let resume = (ends[k] + phy.ack_timeout()).max(busy_end);
            self.stations[i].idle_from = resume;
            if self.agg[k] > 0 {
                let n = self.agg[k];
                self.acked.clear();
                self.acked.resize(n, false);
                self.settle_ampdu(i, ac, t, ends[k] - t, n, false, outcome, resume);
            } else {
                self.fail(i, ac, t, ends[k] - t, outcome, resume);
            }
        }
    }

    pub(super) fn internal_collision(&mut self, i: usize, ac: usize, t: Instant) {
        self.fail(i, ac, t, Duration::ZERO, Outcome::InternalCollision, t);
    }

    /// The attempt of `(i, ac)` at `t` failed; the frame is retried from `resume` or dropped.
    pub(super) fn fail(
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
            s.report(ac, t + airtime, false);
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
}
