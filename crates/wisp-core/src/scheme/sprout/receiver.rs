//! Sprout's receiver (§3.2, §3.4): counts each tick's arrivals, runs the estimator, and sends
//! the forecast with the received-or-lost count once per tick.

use super::SproutConfig;
use super::filter::Estimator;
use super::model::{Forecast, Observation};
use super::wire::{SproutFields, SproutForecast};
use crate::controller::Receiver;
use crate::packet::DataHeader;
use crate::tables::Tables;
use crate::time::{Duration, Instant};
use crate::units::DataSize;
use std::collections::BTreeMap;

/// What the receiver did at the end of one tick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TickRecord {
    /// The end of the tick.
    pub end: Instant,
    /// Packets counted in the tick (bytes / MTU, rounded; at least 1 if anything arrived).
    pub count: u32,
    /// What the count was taken to say (§3.2): exact, a lower bound, or nothing.
    pub observation: Option<Observation>,
    /// Bytes received or written off as lost by the end of the tick (§3.4).
    pub received_or_lost: u64,
    /// The forecast made at the end of the tick, in packets.
    pub forecast: Forecast,
}

/// The receiving half of Sprout and Sprout-EWMA.
#[derive(Clone, Debug)]
pub struct SproutReceiver {
    estimator: Estimator,
    tick: Duration,
    packet_bytes: u64,
    /// The end of the current tick; ticks start with the first packet.
    tick_end: Option<Instant>,
    bytes_this_tick: u64,
    /// The sender's latest time-to-next promise expires here (§3.2).
    promise_expires: Instant,
    /// Every byte before this is received or lost (§3.4).
    throwaway_before: u64,
    /// Packets received at or after `throwaway_before`: byte sequence number → size.
    recent: BTreeMap<u64, u64>,
    recent_bytes: u64,
    pending: Option<SproutForecast>,
    last: Option<TickRecord>,
}

impl SproutReceiver {
    /// A receiver whose packet unit is `mtu` (one "MTU-sized packet" of §3.1).
    /// A receiver whose forecast model comes from `tables`.
    pub fn new(config: &SproutConfig, mtu: DataSize, tables: &Tables) -> Self {
        SproutReceiver {
            estimator: config.estimator(tables),
            tick: config.model.tick,
            packet_bytes: mtu.bytes().max(1),
            tick_end: None,
            bytes_this_tick: 0,
            promise_expires: Instant::ZERO,
            throwaway_before: 0,
            recent: BTreeMap::new(),
            recent_bytes: 0,
            pending: None,
            last: None,
        }
    }

    pub fn estimator(&self) -> &Estimator {
        &self.estimator
    }

    /// The last tick's record.
    pub fn last_tick(&self) -> Option<&TickRecord> {
        self.last.as_ref()
    }

    /// Bytes received, plus bytes written off as lost (§3.4).
    pub fn received_or_lost(&self) -> u64 {
        self.throwaway_before + self.recent_bytes
    }

    /// Runs every tick that ended at or before `now`.
    fn advance_to(&mut self, now: Instant) {
        while let Some(end) = self.tick_end.filter(|&e| e <= now) {
            self.end_tick(end);
            self.tick_end = Some(end + self.tick);
        }
    }

    /// §3.2: evolve; observe what the count says, given the sender's promise; forecast.
    fn end_tick(&mut self, end: Instant) {
        let start = end.saturating_sub(self.tick);
        let bytes = std::mem::take(&mut self.bytes_this_tick);
        // A tick's count in MTU-sized packets; a few small packets (heartbeats) still show the
        // link is not in an outage, so anything at all counts as at least one.
        let count = if bytes == 0 {
            0
        } else {
            ((bytes + self.packet_bytes / 2) / self.packet_bytes).clamp(1, u64::from(u32::MAX))
                as u32
        };
        // §3.2: while the latest packet's time-to-next promise runs, the sender's queue may be
        // empty. A silent tick says nothing then (an idle sender is not an outage); a tick with
        // arrivals whose promise runs to its end shows the link delivered at least that many
        // (the queue ran dry, so it might have delivered more).
        let observation = if count == 0 {
            (start >= self.promise_expires).then_some(Observation::Exact(0))
        } else if self.promise_expires >= end {
            Some(Observation::AtLeast(count))
        } else {
            Some(Observation::Exact(count))
        };
        self.estimator.on_tick(observation);
        let forecast = self.estimator.forecast();
        let received_or_lost = self.received_or_lost();
        let pb = self.packet_bytes as f64;
        self.pending = Some(SproutForecast {
            received_or_lost,
            cumulative_bytes: forecast
                .cumulative()
                .iter()
                .map(|&c| (c * pb).floor().clamp(0.0, f64::from(u32::MAX)) as u32)
                .collect(),
        });
        self.last = Some(TickRecord {
            end,
            count,
            observation,
            received_or_lost,
            forecast,
        });
    }
}

impl Receiver for SproutReceiver {
    type Feedback = SproutForecast;
    type Fields = SproutFields;

    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, fields: &SproutFields) {
        match self.tick_end {
            None => self.tick_end = Some(now + self.tick),
            Some(_) => self.advance_to(now),
        }
        let size = packet.size.bytes();
        self.bytes_this_tick += size;
        // §3.2: the most recent packet's time-to-next (no promise = none pending).
        self.promise_expires = now + fields.time_to_next.unwrap_or(Duration::ZERO);
        // §3.4: bytes sent more than the reorder limit before this packet are received or lost.
        if let Some(tw) = fields.throwaway {
            let before = packet.byte_seq.saturating_sub(tw);
            if before > self.throwaway_before {
                self.throwaway_before = before;
                let keep = self.recent.split_off(&before);
                self.recent_bytes -= self.recent.values().sum::<u64>();
                self.recent = keep;
            }
        }
        if packet.byte_seq >= self.throwaway_before && !self.recent.contains_key(&packet.byte_seq) {
            self.recent.insert(packet.byte_seq, size);
            self.recent_bytes += size;
        }
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<SproutForecast> {
        self.pending.take()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.tick_end
    }

    fn on_timeout(&mut self, now: Instant) {
        self.advance_to(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Content;
    use crate::packet::HeaderFields;
    use crate::time::ms;

    fn receiver() -> SproutReceiver {
        SproutReceiver::new(
            &SproutConfig::default(),
            DataSize::from_bytes(1500),
            &Tables::new(),
        )
    }

    fn packet(byte_seq: u64, size: u64, ttn_ms: u64, throwaway: u64) -> DataHeader {
        DataHeader {
            byte_seq,
            size: DataSize::from_bytes(size),
            content: Content::Bulk,
            fields: SproutFields {
                time_to_next: Some(ms(ttn_ms)),
                throwaway: Some(throwaway),
            }
            .emit(),
            ..Default::default()
        }
    }

    fn at(t: u64) -> Instant {
        Instant::ZERO + ms(t)
    }

    #[test]
    fn ticks_start_with_the_first_packet_and_send_one_forecast_each() {
        let mut r = receiver();
        assert_eq!(r.poll_timeout(), None);
        crate::controller::WireReceiver::on_packet_received(&mut r, at(5), &packet(0, 1500, 0, 0))
            .unwrap();
        assert_eq!(r.poll_timeout(), Some(at(25)));
        assert_eq!(r.poll_feedback(at(5)), None);
        r.on_timeout(at(25));
        let Some(f) = r.poll_feedback(at(25)) else {
            panic!("a forecast per tick")
        };
        assert_eq!(f.received_or_lost, 1500);
        assert_eq!(f.cumulative_bytes.len(), 8);
        assert!(f.cumulative_bytes.windows(2).all(|w| w[0] <= w[1]));
        assert!(f.cumulative_bytes.iter().all(|b| b % 1500 == 0));
        assert_eq!(r.poll_feedback(at(25)), None);
        assert_eq!(r.poll_timeout(), Some(at(45)));
        // A late wake-up runs every missed tick; the newest forecast is sent.
        r.on_timeout(at(105));
        assert_eq!(r.last_tick().unwrap().end, at(105));
        assert!(r.poll_feedback(at(105)).is_some());
        assert_eq!(r.poll_feedback(at(105)), None);
    }

    #[test]
    fn a_time_to_next_promise_turns_counts_into_lower_bounds_and_silence_into_nothing() {
        let obs = |r: &SproutReceiver| r.last_tick().unwrap().observation;
        let mut r = receiver();
        // A packet promising 50 ms of silence: the tick it ends is a lower bound; ticks
        // [20, 40) and [40, 60) say nothing; the one starting at 60 is evidence of silence.
        crate::controller::WireReceiver::on_packet_received(&mut r, at(0), &packet(0, 1500, 50, 0))
            .unwrap();
        r.on_timeout(at(20));
        assert_eq!(obs(&r), Some(Observation::AtLeast(1)));
        r.on_timeout(at(40));
        assert_eq!(obs(&r), None);
        r.on_timeout(at(60));
        assert_eq!(
            obs(&r),
            None,
            "the promise expires at 50, after the tick began"
        );
        r.on_timeout(at(80));
        assert_eq!(obs(&r), Some(Observation::Exact(0)));
        // Packets mid-flight (time-to-next 0) are exact counts, and a newer packet's promise
        // replaces an older one: silence after a mid-flight packet is evidence.
        let mut r = receiver();
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(0),
            &packet(0, 1500, 500, 0),
        )
        .unwrap();
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(10),
            &packet(1500, 1500, 0, 0),
        )
        .unwrap();
        r.on_timeout(at(20));
        assert_eq!(obs(&r), Some(Observation::Exact(2)));
        r.on_timeout(at(40));
        assert_eq!(obs(&r), Some(Observation::Exact(0)));
        // A promise that expires inside a tick with arrivals: exact.
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(41),
            &packet(3000, 1500, 5, 0),
        )
        .unwrap();
        r.on_timeout(at(60));
        assert_eq!(obs(&r), Some(Observation::Exact(1)));
        // One that expires exactly at the tick's end: the link idled to the end, a lower bound
        // (a heartbeat every tick on a jitter-free link lands like this).
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(60),
            &packet(4500, 64, 20, 0),
        )
        .unwrap();
        r.on_timeout(at(80));
        assert_eq!(obs(&r), Some(Observation::AtLeast(1)));
    }

    #[test]
    fn counts_are_in_mtu_packets_and_a_heartbeat_counts_as_one() {
        let mut r = receiver();
        crate::controller::WireReceiver::on_packet_received(&mut r, at(0), &packet(0, 64, 20, 0))
            .unwrap();
        r.on_timeout(at(20));
        assert_eq!(r.last_tick().unwrap().count, 1);
        for i in 0..5 {
            crate::controller::WireReceiver::on_packet_received(
                &mut r,
                at(21 + i),
                &packet(64 + 1500 * i, 1500, 0, 0),
            )
            .unwrap();
        }
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(30),
            &packet(64 + 7500, 700, 20, 0),
        )
        .unwrap();
        r.on_timeout(at(40));
        // 8200 bytes = 5.47 packets → 5.
        assert_eq!(r.last_tick().unwrap().count, 5);
    }

    #[test]
    fn throwaway_writes_off_losses() {
        let mut r = receiver();
        crate::controller::WireReceiver::on_packet_received(&mut r, at(0), &packet(0, 1500, 0, 0))
            .unwrap();
        // 1500..3000 is lost; 3000 arrives, sent within 10 ms of 1500, so nothing is written off.
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(2),
            &packet(3000, 1500, 0, 1500),
        )
        .unwrap();
        assert_eq!(r.received_or_lost(), 3000);
        // 4500 arrives, sent more than 10 ms after the lost packet: its throwaway (1500) says
        // everything before 3000 is received or lost.
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(15),
            &packet(4500, 1500, 0, 1500),
        )
        .unwrap();
        assert_eq!(r.received_or_lost(), 6000);
        // Duplicates and packets before the throwaway point do not count twice.
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(16),
            &packet(4500, 1500, 0, 0),
        )
        .unwrap();
        crate::controller::WireReceiver::on_packet_received(&mut r, at(17), &packet(0, 1500, 0, 0))
            .unwrap();
        assert_eq!(r.received_or_lost(), 6000);
        // A late packet inside the window still counts.
        crate::controller::WireReceiver::on_packet_received(
            &mut r,
            at(18),
            &packet(6000, 1500, 0, 1500),
        )
        .unwrap();
        assert_eq!(r.received_or_lost(), 7500);
    }
}
