//! The A-MPDU exchange with Block Ack (IEEE 802.11-2016 10.24, 10.12): a lone HT station's
//! aggregate of MPDUs goes in one PPDU; each MPDU is lost or not on its own (after the PHY
//! header's own draw); a BlockAck SIFS after it acknowledges those that arrived, or, when none
//! did, the BlockAck timeout passes. Each MPDU keeps its own retry count.

use super::{FrameRecord, Medium, Outcome};
use crate::wifi::ampdu;
use crate::wifi::station::Station;
use rand::RngExt;
use wisp_core::{Duration, Instant};

impl Medium {
    /// A lone A-MPDU of `n` MPDUs from `(i, ac)` on the air from `t` to `end`: per-MPDU
    /// losses, then the BlockAck (if any MPDU arrived) or the BlockAck timeout.
    pub(super) fn transmit_ampdu(
        &mut self,
        i: usize,
        ac: usize,
        t: Instant,
        end: Instant,
        n: usize,
    ) {
        let phy = self.phy;
        let constant = self.frame_error_rate;
        let s = &mut self.stations[i];
        let rate = s.cur_rate[ac];
        // The frames behind the head join its attempt: same eligibility, and they reach the
        // window when the head does.
        let (head_at, eligible) = s.head(ac).map(|f| (f.head_at, f.eligible)).expect("head");
        for k in 1..n {
            let f = s.frame_mut(ac, k).expect("an aggregated frame");
            f.head_at = f.head_at.max(head_at);
            f.eligible = eligible;
        }
        self.acked.clear();
        let header_ok = match s.ampdu_error_rates(rate, 0, t) {
            Some((p_header, _)) => s.rng.random::<f64>() >= p_header,
            None => true,
        };
        for k in 0..n {
            let bytes = ampdu::qos_mpdu_bytes(s.frame(ac, k).map_or(0, |f| f.bytes));
            let p = match s.ampdu_error_rates(rate, bytes, t) {
                Some((_, p)) => p,
                None => constant,
            };
            let ok = header_ok && (p <= 0.0 || s.rng.random::<f64>() >= p);
            self.acked.push(ok);
        }
        let any = self.acked.iter().any(|&a| a);
        if any {
            let ba_end = end + phy.sifs + phy.block_ack_duration(rate);
            self.channel.on_busy(t, ba_end, 1, true);
            for s in &mut self.stations {
                s.idle_from = ba_end;
            }
            self.settle_ampdu(i, ac, t, end - t, n, true, Outcome::Errored, ba_end);
        } else {
            self.channel.on_busy(t, end, 1, false);
            let eifs_ext = phy.eifs_minus_aifs();
            for s in &mut self.stations {
                s.idle_from = end + eifs_ext;
            }
            let resume = end + phy.ack_timeout();
            self.stations[i].idle_from = resume;
            self.settle_ampdu(i, ac, t, end - t, n, false, Outcome::Errored, resume);
        }
    }

    /// The outcome of an A-MPDU of `n` MPDUs: `self.acked` says which arrived; `block_ack`
    /// whether a BlockAck came; `lost` is the outcome recorded for the others. Acknowledged
    /// MPDUs leave the queue; the others stay at its head, eligible from `resume`, or are
    /// dropped at their retry limit.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn settle_ampdu(
        &mut self,
        i: usize,
        ac: usize,
        t: Instant,
        airtime: Duration,
        n: usize,
        block_ack: bool,
        lost: Outcome,
        resume: Instant,
    ) {
        let acked = std::mem::take(&mut self.acked);
        let mut keep = vec![false; n];
        let limit = self.stations[i].config.edca[ac].retry_limit;
        for k in 0..n {
            let s = &mut self.stations[i];
            let (seq, retry) = s.sequence_at(ac, k);
            let f = s.frame_mut(ac, k).expect("an aggregated frame");
            let ok = acked[k];
            if !ok {
                f.retries += 1;
            }
            let dropped = !ok && f.retries >= limit;
            keep[k] = !ok && !dropped;
            let f = *f;
            s.stats.attempts += 1;
            if ok {
                s.stats.delivered_packets += 1;
                s.stats.delivered_bytes += u64::from(f.bytes);
            }
            if dropped {
                s.stats.retry_drops += 1;
            }
            s.rc.report(resume, s.cur_rate[ac], ok);
            if self.recording {
                let outcome = if ok { Outcome::Acked } else { lost };
                let sent = (seq, retry, s.cur_rate[ac]);
                let r = FrameRecord::of(&f, (i, ac), sent, (t, airtime), (outcome, dropped));
                self.records.push(r);
            }
        }
        let s = &mut self.stations[i];
        let Station { edcaf, rng, .. } = s;
        if block_ack {
            edcaf[ac].on_success(rng);
        } else {
            // CW doubles; each MPDU's own retry count decides its drop.
            let _ = edcaf[ac].on_failure(rng);
        }
        s.settle_aggregate(ac, n, &keep, resume);
        self.acked = acked;
    }
}
