//! Sprout's sender (§3.4–3.5): the queue estimate, the window, time-to-next, the throwaway
//! number and heartbeats.

use super::SproutConfig;
use super::wire::{SproutFields, SproutForecast};
use crate::controller::{Allowance, ExtraPacket, SendContext, Sender, SenderStats};
use crate::packet::{Content, DataHeader};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use std::collections::VecDeque;

/// Heartbeats sent at the base interval before the back-off starts (see
/// [`SproutSender::heartbeat_interval`]).
pub const HEARTBEATS_BEFORE_BACKOFF: u32 = 3;

/// The latest forecast, as the sender holds it.
#[derive(Clone, Debug)]
struct Held {
    /// When it arrived (§3.5: "upon receipt of the forecast, it timestamps it").
    at: Instant,
    /// `[0, C_1, …, C_n]` in bytes.
    cumulative: Vec<u64>,
    /// Ticks of the forecast already elapsed and taken off the queue estimate.
    elapsed: usize,
    received_or_lost: u64,
}

/// The sending half of Sprout (and of Sprout-EWMA and the σ mixture, which differ only at the
/// receiver).
#[derive(Clone, Debug)]
pub struct SproutSender {
    tick: Duration,
    lookahead: usize,
    reorder_limit: Duration,
    heartbeat_interval: Duration,
    heartbeat_size: DataSize,
    heartbeat_max: Duration,
    /// Heartbeats sent since the forecasts last showed received-or-lost advancing.
    unacked_heartbeats: u32,
    mtu: DataSize,
    /// The byte sequence number after the last packet sent (bytes sent so far).
    sent: u64,
    forecast: Option<Held>,
    /// The estimate of bytes in the network queue (§3.5).
    queue: u64,
    last_send: Option<Instant>,
    /// `(send time, byte sequence number)` of the packets sent within the reorder limit.
    recent: VecDeque<(Instant, u64)>,
    /// The window at the last query, for stats.
    window: u64,
}

impl SproutSender {
    pub fn new(config: &SproutConfig, mtu: DataSize) -> Self {
        SproutSender {
            tick: config.model.tick,
            lookahead: config.lookahead,
            reorder_limit: config.reorder_limit,
            heartbeat_interval: config.heartbeat_interval,
            heartbeat_size: config.heartbeat_size,
            heartbeat_max: config.heartbeat_max.max(config.heartbeat_interval),
            unacked_heartbeats: 0,
            mtu,
            sent: 0,
            forecast: None,
            queue: 0,
            last_send: None,
            recent: VecDeque::new(),
            window: 0,
        }
    }

    /// The sender's estimate of the bytes queued in the network.
    pub fn queue_estimate(&self) -> u64 {
        self.queue
    }

    /// The forecast's elapsed ticks and the queue estimate at `now`.
    ///
    /// §3.5: "every time it advances into a new tick of the 8-tick forecast, it decrements the
    /// estimate by the amount of the forecast — unless this would cause an underflow".
    fn at(&self, now: Instant) -> (usize, u64) {
        let Some(f) = self.forecast.as_ref() else {
            return (0, self.queue);
        };
        let n = f.cumulative.len() - 1;
        let ticks = ((now - f.at).as_nanos() / self.tick.as_nanos().max(1)) as usize;
        let ticks = ticks.min(n);
        let (mut elapsed, mut queue) = (f.elapsed, self.queue);
        while elapsed < ticks {
            elapsed += 1;
            let drained = f.cumulative[elapsed] - f.cumulative[elapsed - 1];
            queue = queue.saturating_sub(drained);
        }
        (elapsed, queue)
    }

    /// Takes the ticks elapsed by `now` off the queue estimate.
    fn advance(&mut self, now: Instant) {
        let (elapsed, queue) = self.at(now);
        if let Some(f) = self.forecast.as_mut() {
            f.elapsed = elapsed;
        }
        self.queue = queue;
    }

    /// §3.5: the bytes the forecast expects to drain in the next `lookahead` ticks, minus the
    /// queue estimate, at `now`: C_{k+5} − C_k − Q after k elapsed ticks, so the lookahead
    /// starts at the tick the queue estimate has reached (the original starts one tick later:
    /// deviation 13 of the module doc).
    pub fn window(&self, now: Instant) -> u64 {
        self.window_within(now, self.lookahead)
    }

    /// [`Self::window`] with a lookahead of `ticks` instead of the configured one (at most the
    /// forecast's length).
    pub fn window_within(&self, now: Instant, ticks: usize) -> u64 {
        match &self.forecast {
            None => 0,
            Some(f) => {
                let (k, queue) = self.at(now);
                let n = f.cumulative.len() - 1;
                let ahead = f.cumulative[(k + ticks).min(n)] - f.cumulative[k];
                ahead.saturating_sub(queue)
            }
        }
    }

    /// Whether the forecast expects everything sent so far — the queue estimate, which holds
    /// the newest packets — to drain within the lookahead (eq. 6 before its clamp at 0:
    /// Q ≤ C_{k+5} − C_k). Alfalfa's video layer (§4) bases the next frame on the newest frame
    /// sent only if this says that frame arrives in time. False without a forecast.
    pub fn drains_within_lookahead(&self, now: Instant) -> bool {
        match &self.forecast {
            None => false,
            Some(f) => {
                let (k, queue) = self.at(now);
                let n = f.cumulative.len() - 1;
                queue <= f.cumulative[(k + self.lookahead).min(n)] - f.cumulative[k]
            }
        }
    }

    /// The heartbeat interval now. Heartbeats back off while none is acknowledged: the first
    /// [`HEARTBEATS_BEFORE_BACKOFF`] since received-or-lost last advanced go at the base
    /// interval (they cover the round trip in a working network), and each later one doubles
    /// it, up to the maximum. Heartbeats still queued in the network give the receiver its
    /// arrivals as soon as the link delivers again; sending more during a long outage only
    /// queues them ahead of the next data (after 78 s of outage, 20-ms heartbeats are 250 kB,
    /// seconds of a slow link).
    pub fn heartbeat_interval(&self) -> Duration {
        let doublings = self
            .unacked_heartbeats
            .saturating_sub(HEARTBEATS_BEFORE_BACKOFF)
            .min(20);
        (self.heartbeat_interval * (1u64 << doublings)).min(self.heartbeat_max)
    }

    fn heartbeat_due(&self) -> Instant {
        self.last_send.map_or(Instant::ZERO, |t| {
            t.saturating_add(self.heartbeat_interval())
        })
    }
}

impl Sender for SproutSender {
    type Feedback = SproutForecast;
    type Fields = SproutFields;

    fn on_packet_sent(
        &mut self,
        now: Instant,
        packet: &DataHeader,
        ctx: &SendContext,
    ) -> SproutFields {
        self.advance(now);
        let size = packet.size.bytes();
        self.sent = packet.byte_end();
        self.queue += size;
        self.last_send = Some(now);
        if packet.content == Content::Heartbeat {
            self.unacked_heartbeats = self.unacked_heartbeats.saturating_add(1);
        }
        // §3.4: the throwaway number is the offset back to the oldest packet sent within the
        // reorder limit; every byte before it was sent more than 10 ms ago.
        self.recent.push_back((now, packet.byte_seq));
        while let Some(&(t, _)) = self.recent.front() {
            if t.saturating_add(self.reorder_limit) < now {
                self.recent.pop_front();
            } else {
                break;
            }
        }
        let oldest = self.recent.front().map_or(packet.byte_seq, |&(_, s)| s);
        let throwaway = Some(packet.byte_seq - oldest);
        // §3.2: time-to-next is zero inside a flight. After the last packet of a flight the
        // sender promises only what it can keep: it sends again (at least a heartbeat) within
        // one heartbeat interval.
        let next = ctx.backlog_after.map_or(self.mtu, |b| b.min(self.mtu));
        self.window = self.window(now);
        let more = packet.content != Content::Heartbeat
            && next > DataSize::ZERO
            && self.window >= next.bytes();
        let time_to_next = Some(if more {
            Duration::ZERO
        } else {
            self.heartbeat_interval()
        });
        SproutFields {
            time_to_next,
            throwaway,
        }
    }

    fn on_feedback(&mut self, now: Instant, feedback: &SproutForecast) {
        let SproutForecast {
            received_or_lost,
            cumulative_bytes,
        } = feedback;
        // A forecast that knows of fewer bytes than the one held is older (reordered): ignore.
        if self
            .forecast
            .as_ref()
            .is_some_and(|f| *received_or_lost < f.received_or_lost)
        {
            return;
        }
        if self
            .forecast
            .as_ref()
            .is_none_or(|f| *received_or_lost > f.received_or_lost)
        {
            self.unacked_heartbeats = 0;
        }
        let mut cumulative = Vec::with_capacity(cumulative_bytes.len() + 1);
        cumulative.push(0);
        let mut prev = 0u64;
        for &c in cumulative_bytes {
            // Cumulative counts never decrease; clamp a malformed forecast.
            prev = prev.max(u64::from(c));
            cumulative.push(prev);
        }
        self.forecast = Some(Held {
            at: now,
            cumulative,
            elapsed: 0,
            received_or_lost: *received_or_lost,
        });
        // §3.5: "estimates the current queue occupancy, based on the difference between the
        // number of bytes it has sent so far and the received-or-lost sequence number".
        self.queue = self.sent.saturating_sub(*received_or_lost);
    }

    fn on_time(&mut self, now: Instant) {
        self.advance(now);
        self.window = self.window(now);
    }

    fn allowance(&self, now: Instant) -> Allowance {
        Allowance::Window {
            bytes: DataSize::from_bytes(self.window(now)),
            pacing: None,
        }
    }

    fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket> {
        // §3.2: "the sender sends regular small packets … to help the receiver learn that it is
        // not in an outage".
        (now >= self.heartbeat_due()).then_some(ExtraPacket {
            size: self.heartbeat_size,
            content: Content::Heartbeat,
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let next_tick = self.forecast.as_ref().and_then(|f| {
            (f.elapsed + 1 < f.cumulative.len())
                .then(|| f.at.saturating_add(self.tick * (f.elapsed as u64 + 1)))
        });
        Some(next_tick.map_or(self.heartbeat_due(), |t| t.min(self.heartbeat_due())))
    }

    fn on_timeout(&mut self, now: Instant) {
        self.advance(now);
    }

    fn stats(&self) -> SenderStats {
        let target_rate = self.forecast.as_ref().map(|f| {
            let n = f.cumulative.len() - 1;
            let ticks = self.lookahead.min(n).max(1);
            let bytes = f.cumulative[ticks];
            Bitrate::from_size_and_duration(DataSize::from_bytes(bytes), self.tick * ticks as u64)
        });
        SenderStats {
            target_rate,
            window: Some(DataSize::from_bytes(self.window)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::params::Parameters;
    use crate::time::ms;

    const MTU: u64 = 1500;

    /// A harness in the style of quiche's `TestSender`: the flow driver's bookkeeping (byte
    /// sequence numbers) around a [`SproutSender`].
    struct Harness {
        s: SproutSender,
        now: Instant,
        next_seq: u64,
        byte_seq: u64,
        sent: Vec<Sent>,
    }

    /// A packet the harness sent, with the Sprout fields the sender stamped.
    #[derive(Clone, Copy, Debug)]
    struct Sent {
        header: DataHeader,
        time_to_next: Option<Duration>,
        throwaway: Option<u64>,
    }

    impl core::ops::Deref for Sent {
        type Target = DataHeader;
        fn deref(&self) -> &DataHeader {
            &self.header
        }
    }

    impl Harness {
        fn new() -> Self {
            Harness {
                s: SproutSender::new(&SproutConfig::default(), DataSize::from_bytes(MTU)),
                now: Instant::ZERO,
                next_seq: 0,
                byte_seq: 0,
                sent: vec![],
            }
        }
        fn advance(&mut self, d: Duration) {
            self.now += d;
            if self.s.poll_timeout().is_some_and(|t| t <= self.now) {
                self.s.on_timeout(self.now);
            }
        }
        fn emit(&mut self, size: u64, content: Content, backlog: Option<u64>) -> Sent {
            let h = DataHeader {
                seq: self.next_seq,
                byte_seq: self.byte_seq,
                send_time: self.now,
                size: DataSize::from_bytes(size),
                content,
                ..Default::default()
            };
            self.next_seq += 1;
            self.byte_seq += size;
            let ctx = SendContext {
                backlog_after: backlog.map(DataSize::from_bytes),
                ..Default::default()
            };
            let f = self.s.on_packet_sent(self.now, &h, &ctx);
            let sent = Sent {
                header: h,
                time_to_next: f.time_to_next,
                throwaway: f.throwaway,
            };
            self.sent.push(sent);
            sent
        }
        /// Sends what the flow driver would send now from a bulk source: heartbeats first,
        /// then full packets while the window allows.
        fn send(&mut self) -> Vec<Sent> {
            let mut out = vec![];
            if let Some(x) = self.s.poll_extra(self.now) {
                out.push(self.emit(x.size.bytes(), x.content, None));
            }
            self.s.on_time(self.now);
            while let Allowance::Window { bytes, .. } = self.s.allowance(self.now) {
                if bytes.bytes() < MTU {
                    break;
                }
                out.push(self.emit(MTU, Content::Bulk, None));
            }
            out
        }
        fn feedback(&mut self, received_or_lost: u64, packets: &[u32]) {
            let cumulative_bytes = packets.iter().map(|p| p * MTU as u32).collect();
            self.s.on_feedback(
                self.now,
                &SproutForecast {
                    received_or_lost,
                    cumulative_bytes,
                },
            );
        }
    }

    const FORECAST: [u32; 8] = [2, 4, 6, 8, 10, 12, 14, 16];

    #[test]
    fn window_is_five_ticks_of_forecast_minus_the_queue() {
        let mut h = Harness::new();
        // Before any forecast only a heartbeat goes out.
        let first = h.send();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].content, Content::Heartbeat);
        assert_eq!(h.s.window(h.now), 0);
        // Nothing of the heartbeat has arrived yet: it is in the queue estimate.
        h.advance(ms(10));
        h.feedback(0, &FORECAST);
        assert_eq!(h.s.queue_estimate(), 64);
        assert_eq!(h.s.window(h.now), 10 * MTU - 64);
        let flight = h.send();
        // 9 full packets fit in 15000 − 64 bytes.
        assert_eq!(flight.len(), 9);
        assert_eq!(h.s.queue_estimate(), 64 + 9 * MTU);
        assert_eq!(h.s.window(h.now), MTU - 64);
    }

    #[test]
    fn what_was_sent_arrives_in_time_while_the_forecast_drains_it_within_the_lookahead() {
        let mut h = Harness::new();
        assert!(!h.s.drains_within_lookahead(h.now));
        h.send();
        h.feedback(64, &FORECAST);
        // The lookahead drains 10 packets: 10 queued are in time, 11 are not.
        h.send();
        assert_eq!(h.s.queue_estimate(), 10 * MTU);
        assert!(h.s.drains_within_lookahead(h.now));
        h.emit(MTU, Content::Bulk, None);
        assert!(!h.s.drains_within_lookahead(h.now));
        // A tick later the lookahead (ticks 2..6: 10 packets) drains the 9 still queued.
        h.advance(ms(20));
        assert_eq!(h.s.queue_estimate(), 9 * MTU);
        assert!(h.s.drains_within_lookahead(h.now));
    }

    #[test]
    fn the_queue_estimate_drains_by_each_ticks_forecast() {
        let mut h = Harness::new();
        h.send();
        h.feedback(64, &FORECAST);
        let flight = h.send();
        assert_eq!(flight.len(), 10);
        assert_eq!(h.s.queue_estimate(), 10 * MTU);
        // One tick later the forecast's first tick (2 packets) has drained, and the window
        // looks ahead over ticks 2..=6: 12 − 2 = 10 packets, minus the 8 still queued.
        h.advance(ms(20));
        assert_eq!(h.s.queue_estimate(), 8 * MTU);
        assert_eq!(h.s.window(h.now), 2 * MTU);
        // Per-tick drain, not cumulative (the original's quirk would subtract 4 here).
        h.advance(ms(20));
        assert_eq!(h.s.queue_estimate(), 6 * MTU);
        // Never below zero.
        h.advance(ms(100));
        assert_eq!(h.s.queue_estimate(), 0);
        // The horizon ends after 8 ticks: a stale forecast allows nothing.
        h.advance(ms(40));
        assert_eq!(h.s.window(h.now), 0);
        // A new forecast resets the estimate from the received-or-lost count.
        h.feedback(64 + 7 * MTU, &FORECAST);
        assert_eq!(h.s.queue_estimate(), 3 * MTU);
        assert_eq!(h.s.window(h.now), 7 * MTU);
        // An older forecast (fewer bytes received) is ignored.
        h.feedback(64, &FORECAST);
        assert_eq!(h.s.queue_estimate(), 3 * MTU);
    }

    /// Eq. 6 and deviation 13: after k elapsed ticks the window counts the forecast's ticks
    /// k+1..k+5, from where the queue estimate stands (the original counts k+2..k+6). A
    /// forecast whose ticks differ tells the two apart.
    #[test]
    fn the_window_looks_ahead_from_the_queue_estimates_tick() {
        let mut h = Harness::new();
        h.send();
        // Per tick 1, 2, …, 8 packets: C = 1, 3, 6, 10, 15, 21, 28, 36.
        let rising = [1, 3, 6, 10, 15, 21, 28, 36];
        h.feedback(64, &rising);
        assert_eq!(h.s.queue_estimate(), 0);
        // Fresh: C_5 − C_0 = 15 packets (the original: C_6 − C_1 = 20).
        assert_eq!(h.s.window(h.now), 15 * MTU);
        // For each elapsed k, the window is C_{min(k+5, 8)} − C_k with the queue drained to 0.
        let c = |i: usize| {
            if i == 0 {
                0
            } else {
                rising[i.min(8) - 1] as u64
            }
        };
        for k in 1..=8 {
            h.advance(ms(20));
            assert_eq!(h.s.queue_estimate(), 0);
            assert_eq!(h.s.window(h.now), (c(k + 5) - c(k)) * MTU, "k = {k}");
        }
        // 7 ticks old the window still holds the last tick (the original's is closed); 8
        // ticks old it is closed.
        assert_eq!(c(8) - c(7), 8);
        assert_eq!(h.s.window(h.now), 0);
    }

    #[test]
    fn wakes_at_each_forecast_tick_and_heartbeat() {
        let mut h = Harness::new();
        h.send();
        h.feedback(64, &FORECAST);
        assert_eq!(h.send().len(), 10);
        // Ten milliseconds later nothing has arrived: the queue fills the whole window.
        h.advance(ms(10));
        h.feedback(64, &FORECAST);
        assert_eq!(h.s.queue_estimate(), 10 * MTU);
        assert_eq!(h.s.window(h.now), 0);
        // The heartbeat (20 ms after the flight) is due before the forecast's first tick (30).
        assert_eq!(h.s.poll_timeout(), Some(Instant::ZERO + ms(20)));
        h.advance(ms(10));
        assert_eq!(h.send()[0].content, Content::Heartbeat);
        // Then the tick at 30 comes before the next heartbeat (40).
        assert_eq!(h.s.poll_timeout(), Some(Instant::ZERO + ms(30)));
        h.advance(ms(10));
        assert_eq!(h.s.queue_estimate(), 10 * MTU + 64 - 2 * MTU);
    }

    #[test]
    fn time_to_next_is_zero_inside_a_flight_and_a_promise_at_its_end() {
        let mut h = Harness::new();
        let hb = h.send();
        assert_eq!(hb[0].time_to_next, Some(ms(20)));
        h.feedback(64, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let flight = h.send();
        assert_eq!(flight.len(), 5);
        assert!(flight[..4].iter().all(|p| p.time_to_next == Some(ms(0))));
        assert_eq!(flight[4].time_to_next, Some(ms(20)));
        // A source that runs dry ends the flight too, whatever the window.
        let mut h = Harness::new();
        h.send();
        h.feedback(64, &FORECAST);
        let p = h.emit(MTU, Content::Bulk, Some(0));
        assert_eq!(p.time_to_next, Some(ms(20)));
        let p = h.emit(MTU, Content::Bulk, Some(400));
        assert_eq!(p.time_to_next, Some(ms(0)));
    }

    #[test]
    fn heartbeats_only_after_a_silent_interval() {
        let mut h = Harness::new();
        assert_eq!(h.send().len(), 1);
        h.advance(ms(10));
        assert!(h.send().is_empty());
        assert_eq!(h.s.poll_timeout(), Some(Instant::ZERO + ms(20)));
        h.advance(ms(10));
        let hb = h.send();
        assert_eq!(hb.len(), 1);
        assert_eq!(hb[0].content, Content::Heartbeat);
        assert_eq!(hb[0].size, DataSize::from_bytes(64));
        // Data resets the heartbeat clock.
        h.feedback(128, &FORECAST);
        h.advance(ms(1));
        assert_eq!(h.send().len(), 10);
        h.advance(ms(19));
        assert!(h.s.poll_extra(h.now).is_none());
        h.advance(ms(1));
        assert!(h.s.poll_extra(h.now).is_some());
    }

    #[test]
    fn throwaway_points_at_the_oldest_packet_within_the_reorder_limit() {
        let mut h = Harness::new();
        let a = h.emit(MTU, Content::Bulk, None);
        assert_eq!(a.throwaway, Some(0));
        h.advance(ms(4));
        let b = h.emit(MTU, Content::Bulk, None);
        assert_eq!(b.throwaway, Some(MTU));
        h.advance(ms(6));
        // Exactly 10 ms after the first: not yet *more* than 10 ms.
        let c = h.emit(MTU, Content::Bulk, None);
        assert_eq!(c.throwaway, Some(2 * MTU));
        h.advance(ms(1));
        // 11 ms after the first, 7 after the second: bytes before the second are thrown away.
        let d = h.emit(500, Content::Bulk, None);
        assert_eq!(d.byte_seq, 3 * MTU);
        assert_eq!(d.throwaway, Some(2 * MTU));
        h.advance(ms(20));
        let e = h.emit(MTU, Content::Bulk, None);
        assert_eq!(e.throwaway, Some(0));
    }

    #[test]
    fn heartbeats_back_off_while_none_arrives_and_reset_when_one_does() {
        let mut h = Harness::new();
        // No forecast ever arrives (an outage): the times between heartbeats.
        let mut times = vec![];
        for _ in 0..2000 {
            h.advance(ms(1));
            for p in h.send() {
                times.push((p.send_time - Instant::ZERO).as_millis());
                assert_eq!(p.content, Content::Heartbeat);
            }
        }
        let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        // Three at the base interval, then doubling, capped at the 100-ms maximum.
        assert_eq!(&gaps[..6], &[20, 20, 20, 40, 80, 100]);
        assert!(gaps[6..].iter().all(|&g| g == 100), "{gaps:?}");
        // Each heartbeat promises the interval to the next one.
        assert_eq!(h.sent.last().unwrap().time_to_next, Some(ms(100)));
        // A forecast showing bytes received resets the back-off.
        h.feedback(64, &[0; 8]);
        assert_eq!(h.s.heartbeat_interval(), ms(20));
        // A forecast that shows nothing new does not.
        for _ in 0..100 {
            h.advance(ms(1));
            h.send();
        }
        let before = h.s.heartbeat_interval();
        assert!(before > ms(20), "{before:?}");
        h.feedback(64, &[0; 8]);
        assert_eq!(h.s.heartbeat_interval(), before);
        // heartbeat-max-ms equal to heartbeat-ms turns the back-off off.
        let mut c = SproutConfig::default();
        c.set_params(&[("heartbeat-max-ms", "20")]).unwrap();
        let mut s = SproutSender::new(&c, DataSize::from_bytes(MTU));
        s.unacked_heartbeats = 50;
        assert_eq!(s.heartbeat_interval(), ms(20));
    }
}
