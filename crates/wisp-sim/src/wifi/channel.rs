//! The shared channel — IEEE 802.11-2016 10.3.2 (CS/CCA, slot boundaries), 10.22.2.4.
//!
//! One channel that every transmitter hears: who transmits next, whether two or more transmit
//! in the same slot (a collision), and how long the medium stays busy. Idle slots are never
//! ticked one by one: each EDCAF's counter runs from the end of its AIFS (or EIFS), so the
//! next transmission is simply the earliest
//!
//! `t_access = max(ready + counter·slot, head)`
//!
//! over the contenders, where `ready` is when the EDCAF's AIFS (or EIFS) ends and `head` is
//! when its frame became eligible. Every contender with that same time transmits; together
//! they collide. When the medium turns busy at `t`, every other EDCAF has counted
//! `⌊(t − ready)/slot⌋` idle slots (none if `t ≤ ready`) and freezes there.
//!
//! Deviations:
//! - A frame that arrives at an EDCAF whose counter is already zero and whose AIFS has passed
//!   goes at once, not at the next slot boundary. (If the medium is busy or has been idle for
//!   less than AIFS when it arrives, the EDCAF draws a backoff first: the medium does that.)
//! - One collision domain: every station hears every other (no hidden terminals, no capture).

use wisp_core::{Duration, Instant};

/// An EDCAF as the channel sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contender {
    /// When its AIFS (or EIFS) ends and its counter starts to run.
    pub ready: Instant,
    /// Backoff slots left.
    pub counter: u32,
    /// When its head frame became eligible to go (arrival, or the end of the last attempt).
    pub head: Instant,
}

/// What the channel has carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelStats {
    /// Frame exchanges that were acknowledged.
    pub successes: u64,
    /// Busy periods with two or more transmitters.
    pub collisions: u64,
    /// Single transmissions lost to a frame error.
    pub errors: u64,
    /// Time the medium was busy (transmissions, SIFS, Acks).
    pub busy: Duration,
}

/// The shared channel: slot timing and what it carried.
#[derive(Clone, Debug)]
pub struct Channel {
    slot: Duration,
    stats: ChannelStats,
}

impl Channel {
    pub fn new(slot: Duration) -> Self {
        Channel {
            slot,
            stats: ChannelStats::default(),
        }
    }

    pub fn stats(&self) -> ChannelStats {
        self.stats
    }

    /// When `c` transmits if the medium stays idle.
    pub fn access_time(&self, c: &Contender) -> Instant {
        (c.ready + self.slot * u64::from(c.counter)).max(c.head)
    }

    /// The idle slots an EDCAF whose counter started at `ready` has counted when the medium
    /// turns busy at `t`.
    pub fn idle_slots(&self, ready: Instant, t: Instant) -> u32 {
        match t.checked_duration_since(ready) {
            Some(d) => (d.as_nanos() / self.slot.as_nanos().max(1)).min(u64::from(u32::MAX)) as u32,
            None => 0,
        }
    }

    /// The next transmission among `contenders`: its time, and in `winners` the indices of
    /// every contender that transmits then (two or more collide). `None` when nobody contends.
    pub fn next_access(
        &self,
        contenders: impl IntoIterator<Item = Contender>,
        winners: &mut Vec<usize>,
    ) -> Option<Instant> {
        winners.clear();
        let mut best: Option<Instant> = None;
        for (i, c) in contenders.into_iter().enumerate() {
            let t = self.access_time(&c);
            match best {
                Some(b) if t > b => {}
                Some(b) if t == b => winners.push(i),
                _ => {
                    best = Some(t);
                    winners.clear();
                    winners.push(i);
                }
            }
        }
        best
    }

    /// Records a busy period from `start` to `end` carrying `transmitters` frames, acknowledged
    /// when `acked`.
    pub fn on_busy(&mut self, start: Instant, end: Instant, transmitters: usize, acked: bool) {
        self.stats.busy += end.saturating_duration_since(start);
        if transmitters > 1 {
            self.stats.collisions += 1;
        } else if acked {
            self.stats.successes += 1;
        } else {
            self.stats.errors += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Instant {
        Instant::from_micros(us)
    }

    #[test]
    fn earliest_counter_wins_and_ties_collide() {
        let ch = Channel::new(Duration::from_micros(9));
        let c = |ready, counter| Contender {
            ready: at(ready),
            counter,
            head: at(0),
        };
        let mut w = vec![];
        // 34 + 3·9 = 61 µs beats 34 + 5·9 = 79 µs.
        let t = ch.next_access([c(34, 5), c(34, 3), c(34, 7)], &mut w);
        assert_eq!((t, w.clone()), (Some(at(61)), vec![1]));
        // Two counters expire in the same slot: both go.
        let t = ch.next_access([c(34, 2), c(34, 4), c(34, 2)], &mut w);
        assert_eq!((t, w.clone()), (Some(at(52)), vec![0, 2]));
        // A later AIFS (EIFS) shifts the count: 94 + 0 = 94 µs against 34 + 6·9 = 88 µs.
        let t = ch.next_access([c(94, 0), c(34, 6)], &mut w);
        assert_eq!((t, w.clone()), (Some(at(88)), vec![1]));
        assert_eq!(ch.next_access([], &mut w), None);
        assert!(w.is_empty());
    }

    #[test]
    fn counters_freeze_at_the_busy_slot() {
        let ch = Channel::new(Duration::from_micros(9));
        // Busy at 61 µs: an EDCAF ready at 34 µs has counted 3 slots; one ready at 94 µs none.
        assert_eq!(ch.idle_slots(at(34), at(61)), 3);
        assert_eq!(ch.idle_slots(at(34), at(69)), 3);
        assert_eq!(ch.idle_slots(at(94), at(61)), 0);
        assert_eq!(ch.idle_slots(at(61), at(61)), 0);
    }

    #[test]
    fn a_frame_arriving_late_goes_when_it_arrives() {
        let ch = Channel::new(Duration::from_micros(20));
        let c = Contender {
            ready: at(50),
            counter: 1,
            head: at(1000),
        };
        assert_eq!(ch.access_time(&c), at(1000));
    }
}
