//! A station's MAC — IEEE 802.11-2016 10.22.2 (EDCA), 10.3.2.11–12 (sequence numbers, retry
//! flag).
//!
//! A transmitter (a station or an AP): its PHY rate, one queue and one EDCAF per access
//! category, its 12-bit sequence counter, and when its idle-medium count may start. The
//! [`Medium`](super::medium::Medium) wires stations to the shared channel.
//!
//! Deviations:
//! - One sequence counter per transmitter (the standard keeps one per receiver and TID).
//! - The PHY rate of each attempt comes from the station's [`RateControl`] (fixed by
//!   default; scripted or Minstrel-like); its rate set is the configured rate's: the MCSs at
//!   its width and guard interval, or the PHY's non-HT rates.

use super::ampdu::AmpduConfig;
use super::edca::{AccessCategory, EdcaParams, Edcaf};
use super::fer::{Snr, bit_error_rate, data_success_from_ber, header_success_rate};
use super::phy::{Phy, PhyRate};
use super::rate_control::{RateControl, RateControlConfig};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use wisp_core::Instant;

/// How a station is set up.
#[derive(Clone, Debug)]
pub struct StationConfig {
    pub rate: PhyRate,
    /// EDCA parameters per access category (indexed by [`AccessCategory::index`]).
    pub edca: [EdcaParams; 4],
    /// Frames each AC queue holds (the head included); more are dropped.
    pub queue_limit: usize,
    /// Always backlogged: a new MSDU of this many bytes joins this AC's queue whenever it is
    /// empty.
    pub saturated: Option<(AccessCategory, u32)>,
    /// The SNR its frames arrive with; `None`: the medium's constant frame error rate applies.
    pub snr: Option<Snr>,
    /// How it picks the rate of each attempt; `None`: always `rate`.
    pub rate_control: Option<RateControlConfig>,
    /// A-MPDU aggregation with block Ack for HT/VHT rates; `None`: one MPDU per exchange.
    pub ampdu: Option<AmpduConfig>,
}

impl StationConfig {
    /// A QoS station with the default EDCA parameter set.
    pub fn edca(phy: &Phy, rate: PhyRate) -> Self {
        StationConfig {
            rate,
            edca: AccessCategory::ALL.map(|ac| EdcaParams::default_for(ac, phy)),
            queue_limit: 1000,
            saturated: None,
            snr: None,
            rate_control: None,
            ampdu: None,
        }
    }

    /// A non-QoS (DCF) station: every AC uses the DCF parameters; traffic goes to AC_BE.
    pub fn dcf(phy: &Phy, rate: PhyRate) -> Self {
        StationConfig {
            rate,
            edca: [EdcaParams::dcf(phy); 4],
            queue_limit: 1000,
            saturated: None,
            snr: None,
            rate_control: None,
            ampdu: None,
        }
    }
}

/// An MSDU waiting in a queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub bytes: u32,
    pub enqueued: Instant,
    /// When it reached the head of its queue.
    pub head_at: Instant,
    /// When its current attempt became eligible (head_at, or when the last attempt failed).
    pub eligible: Instant,
    /// Its sequence number, once it has been sent.
    pub seq: Option<u16>,
    /// Failed attempts inside A-MPDUs (each MPDU's own retry count).
    pub retries: u32,
}

/// What a station delivered and lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StationStats {
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    /// Transmission attempts (first tries and retries).
    pub attempts: u64,
    /// MSDUs dropped at the retry limit.
    pub retry_drops: u64,
    /// MSDUs dropped because the queue was full.
    pub queue_drops: u64,
}

/// One transmitter on the channel.
#[derive(Debug)]
pub struct Station {
    pub config: StationConfig,
    pub(crate) queues: [VecDeque<Frame>; 4],
    pub(crate) edcaf: [Edcaf; 4],
    /// When the medium was last seen idle (before any AIFS): the end of the last busy period,
    /// plus the EIFS extension after an errored reception or the Ack timeout after a failed
    /// transmission.
    pub(crate) idle_from: Instant,
    next_seq: u16,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) stats: StationStats,
    pub(crate) rc: Box<RateControl>,
    /// Minstrel's sampling draws (a stream of their own, so a fixed-rate station's backoff
    /// draws do not depend on whether rate control is on).
    rc_rng: Box<ChaCha8Rng>,
    /// The rate of each AC's attempt in flight.
    pub(crate) cur_rate: [PhyRate; 4],
    /// The last link qualities computed, newest first: (rate, SNR bits, bit error rate,
    /// header success).
    ber_cache: [Option<(PhyRate, u64, f64, f64)>; 4],
}

impl Station {
    pub(crate) fn new(
        config: StationConfig,
        phy: &Phy,
        mut rng: ChaCha8Rng,
        rc_rng: ChaCha8Rng,
    ) -> Self {
        let edcaf = config.edca.map(|p| Edcaf::new(p, &mut rng));
        let rates = match config.rate.mcs() {
            Some(m) => phy.mcs_rates(m.width_mhz, m.short_gi),
            None => phy.data_rates(20, false),
        };
        let rc = RateControl::new(
            config
                .rate_control
                .clone()
                .unwrap_or(RateControlConfig::Fixed(config.rate)),
            phy,
            &rates,
        );
        let cur_rate = [config.rate; 4];
        Station {
            rc: Box::new(rc),
            rc_rng: Box::new(rc_rng),
            cur_rate,
            ber_cache: [None; 4],
            config,
            queues: Default::default(),
            edcaf,
            idle_from: Instant::ZERO,
            next_seq: 0,
            rng,
            stats: StationStats::default(),
        }
    }

    pub fn stats(&self) -> StationStats {
        self.stats
    }

    /// The station's rate control (Minstrel's statistics, for instance).
    pub fn rate_control(&self) -> &RateControl {
        &self.rc
    }

    /// Picks the rate of `ac`'s next attempt at `now` (the head frame's attempt number is its
    /// EDCAF's failure count).
    pub(crate) fn choose_rate(&mut self, ac: usize, now: Instant) -> PhyRate {
        let attempt = self.edcaf[ac].failures();
        let r = self.rc.rate(now, attempt, &mut *self.rc_rng);
        self.cur_rate[ac] = r;
        r
    }

    /// Tells the rate control how `ac`'s attempt ended at `now`.
    pub(crate) fn report(&mut self, ac: usize, now: Instant, success: bool) {
        self.rc.report(now, self.cur_rate[ac], success);
    }

    /// The decoded bit error probability and the PHY header's success probability at `rate`
    /// and `now`, from the station's SNR (cached: both change only with the rate or the SNR).
    fn link_quality(&mut self, rate: PhyRate, now: Instant) -> Option<(f64, f64)> {
        let db = self.config.snr.as_ref()?.at(now);
        let bits = db.to_bits();
        if let Some(&(_, _, ber, header)) = self
            .ber_cache
            .iter()
            .flatten()
            .find(|c| c.0 == rate && c.1 == bits)
        {
            return Some((ber, header));
        }
        let q = if db.is_finite() {
            (bit_error_rate(rate, db), header_success_rate(rate, db))
        } else if db > 0.0 {
            (0.0, 1.0)
        } else {
            (0.5, 0.0)
        };
        self.ber_cache.rotate_right(1);
        self.ber_cache[0] = Some((rate, bits, q.0, q.1));
        Some(q)
    }

    /// The probability that an MPDU of `bytes` sent at `rate` at `now` is lost to noise, from
    /// the station's SNR; `None` without one.
    pub(crate) fn frame_error_rate(
        &mut self,
        rate: PhyRate,
        bytes: u32,
        now: Instant,
    ) -> Option<f64> {
        let (ber, header) = self.link_quality(rate, now)?;
        Some(1.0 - header * data_success_from_ber(ber, bytes))
    }

    /// For an A-MPDU at `rate` at `now`: the probability that its PHY header is lost, and the
    /// probability that one MPDU of `bytes` is lost given the header; `None` without an SNR.
    pub(crate) fn ampdu_error_rates(
        &mut self,
        rate: PhyRate,
        bytes: u32,
        now: Instant,
    ) -> Option<(f64, f64)> {
        let (ber, header) = self.link_quality(rate, now)?;
        Some((1.0 - header, 1.0 - data_success_from_ber(ber, bytes)))
    }

    /// Frames in `ac`'s queue.
    pub fn queued(&self, ac: AccessCategory) -> usize {
        self.queues[ac.index()].len()
    }

    /// When `ac`'s counter starts to run: `idle_from + AIFS[ac]`.
    pub(crate) fn ready(&self, ac: usize, phy: &Phy) -> Instant {
        self.idle_from + phy.aifs(self.config.edca[ac].aifsn)
    }

    /// Queues an MSDU at `now`; `false` if the queue is full.
    pub(crate) fn enqueue(&mut self, ac: AccessCategory, bytes: u32, now: Instant) -> bool {
        let q = &mut self.queues[ac.index()];
        if q.len() >= self.config.queue_limit {
            self.stats.queue_drops += 1;
            return false;
        }
        q.push_back(Frame {
            bytes,
            enqueued: now,
            head_at: now,
            eligible: now,
            seq: None,
            retries: 0,
        });
        true
    }

    /// Removes `ac`'s head frame at `now`; the next frame becomes the head (a saturated
    /// station queues a new one).
    pub(crate) fn pop(&mut self, ac: usize, now: Instant) {
        self.queues[ac].pop_front();
        if let Some((sat_ac, bytes)) = self.config.saturated
            && sat_ac.index() == ac
            && self.queues[ac].is_empty()
        {
            self.enqueue(sat_ac, bytes, now);
        }
        if let Some(f) = self.queues[ac].front_mut() {
            f.head_at = f.head_at.max(now);
            f.eligible = f.head_at;
        }
    }

    /// The sequence number of `ac`'s head frame, assigned on its first attempt, and whether
    /// this attempt is a retry.
    pub(crate) fn sequence(&mut self, ac: usize) -> (u16, bool) {
        self.sequence_at(ac, 0)
    }

    /// The sequence number of `ac`'s `k`-th frame (assigned on its first attempt) and whether
    /// this attempt is a retry.
    pub(crate) fn sequence_at(&mut self, ac: usize, k: usize) -> (u16, bool) {
        let next = &mut self.next_seq;
        let f = self.queues[ac].get_mut(k).expect("a queued frame");
        match f.seq {
            Some(s) => (s, true),
            None => {
                let s = *next;
                *next = (*next + 1) % 4096;
                f.seq = Some(s);
                (s, false)
            }
        }
    }

    /// `ac`'s queued MSDU sizes, head first.
    pub(crate) fn queued_bytes(&self, ac: usize) -> impl Iterator<Item = u32> + '_ {
        self.queues[ac].iter().map(|f| f.bytes)
    }

    /// `ac`'s `k`-th frame.
    pub(crate) fn frame_mut(&mut self, ac: usize, k: usize) -> Option<&mut Frame> {
        self.queues[ac].get_mut(k)
    }

    pub(crate) fn frame(&self, ac: usize, k: usize) -> Option<&Frame> {
        self.queues[ac].get(k)
    }

    /// After an A-MPDU exchange ending at `now`: removes the first `n` frames that `keep`
    /// rejects (acknowledged or dropped); the kept ones stay at the head, eligible from `now`;
    /// a saturated station refills its queue.
    pub(crate) fn settle_aggregate(&mut self, ac: usize, n: usize, keep: &[bool], now: Instant) {
        let q = &mut self.queues[ac];
        for k in (0..n).rev() {
            if !keep[k] {
                q.remove(k);
            }
        }
        let kept = keep[..n].iter().filter(|&&k| k).count();
        for f in q.iter_mut().take(kept) {
            f.eligible = now;
        }
        self.refill(ac, now);
        if kept == 0
            && let Some(f) = self.queues[ac].front_mut()
        {
            f.head_at = f.head_at.max(now);
            f.eligible = f.head_at;
        }
    }

    /// A saturated station keeps `ac`'s queue filled: one MSDU, or an A-MPDU's worth.
    pub(crate) fn refill(&mut self, ac: usize, now: Instant) {
        if let Some((sat_ac, bytes)) = self.config.saturated
            && sat_ac.index() == ac
        {
            let want = self.config.ampdu.map_or(1, |a| a.max_mpdus.clamp(1, 64)) as usize;
            while self.queues[ac].len() < want {
                if !self.enqueue(sat_ac, bytes, now) {
                    break;
                }
            }
        }
    }

    /// How long the head of `ac` has waited since it became eligible (for the record).
    pub(crate) fn head(&self, ac: usize) -> Option<&Frame> {
        self.queues[ac].front()
    }

    pub(crate) fn head_mut(&mut self, ac: usize) -> Option<&mut Frame> {
        self.queues[ac].front_mut()
    }
}
