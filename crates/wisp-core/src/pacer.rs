//! A leaky-bucket pacer: spaces packets at a rate, with an optional burst allowance, and
//! optionally releases them only at the ticks of a fixed interval.

use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};

/// Spaces packets so that, over any interval, at most `rate × interval + burst` leaves.
///
/// With a zero burst, packet *k+1* leaves exactly `size_k / rate` after packet *k* while the
/// source is backlogged (no drift: the schedule advances from the previous slot, not from the
/// time the caller happened to poll).
///
/// A *periodic* pacer ([`Pacer::periodic`]) sends only at multiples of its interval ΔT, each
/// time as many packets as `rate × ΔT` allows (one packet of debt carried over), so packets
/// leave in groups ΔT apart — the pacer of GCC (ANRW'16 §3: "the Pacer divides the video frame
/// into groups of packets and sends them to the network every ΔT", ΔT = 5 ms).
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    next: Instant,
    burst: Duration,
    interval: Option<Duration>,
}

impl Pacer {
    pub fn new(burst: Duration) -> Self {
        Pacer {
            next: Instant::ZERO,
            burst,
            interval: None,
        }
    }

    /// A pacer that releases packets only at multiples of `interval` (a zero interval is the
    /// same as [`Pacer::new`] with no burst).
    pub fn periodic(interval: Duration) -> Self {
        Pacer {
            next: Instant::ZERO,
            burst: interval,
            interval: (!interval.is_zero()).then_some(interval),
        }
    }

    /// The earliest time the next packet may leave (for a periodic pacer, ignoring its ticks;
    /// see [`Pacer::next_send_time_after`]).
    pub fn next_send_time(&self) -> Instant {
        self.next
    }

    /// The earliest time at or after `now` the next packet may leave.
    pub fn next_send_time_after(&self, now: Instant) -> Instant {
        let t = self.next.max(now);
        match self.interval {
            None => t,
            Some(i) => {
                let i = i.as_nanos();
                Instant::from_nanos(t.as_nanos().div_ceil(i).saturating_mul(i))
            }
        }
    }

    pub fn can_send(&self, now: Instant) -> bool {
        self.next <= now
            && self
                .interval
                .is_none_or(|i| now.as_nanos() % i.as_nanos() == 0)
    }

    /// Records a packet of `size` leaving at `now` at pacing rate `rate`.
    pub fn on_sent(&mut self, now: Instant, size: DataSize, rate: Bitrate) {
        let base = self.next.max(now.saturating_sub(self.burst));
        self.next = base.saturating_add(size.transmit_time(rate));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn spaces_packets_without_drift() {
        let mut p = Pacer::new(Duration::ZERO);
        let rate = Bitrate::from_mbps(12);
        let mtu = DataSize::from_bytes(1500);
        let mut t = Instant::ZERO + ms(3);
        for _ in 0..1000 {
            assert!(p.can_send(t));
            p.on_sent(t, mtu, rate);
            t = p.next_send_time();
        }
        assert_eq!(t, Instant::ZERO + ms(1003));
    }

    #[test]
    fn burst_allows_catch_up_after_idle() {
        let mut p = Pacer::new(ms(5));
        let rate = Bitrate::from_mbps(12);
        let mtu = DataSize::from_bytes(1500);
        let now = Instant::ZERO + ms(100);
        let mut sent = 0;
        while p.can_send(now) {
            p.on_sent(now, mtu, rate);
            sent += 1;
        }
        // The packet due now plus 5 ms of catch-up at 1 ms per packet.
        assert_eq!(sent, 6);
    }

    #[test]
    fn periodic_pacer_sends_groups_on_ticks() {
        let mut p = Pacer::periodic(ms(5));
        let rate = Bitrate::from_mbps(12); // 1500 B per ms: 5 per tick
        let mtu = DataSize::from_bytes(1500);
        // Off the grid nothing leaves; the next tick is the wake-up.
        let now = Instant::ZERO + Duration::from_micros(33_333);
        assert!(!p.can_send(now));
        assert_eq!(p.next_send_time_after(now), Instant::ZERO + ms(35));
        // A backlogged source: per tick, 5 ms of rate (plus one packet of debt the first time).
        let mut t = Instant::ZERO + ms(35);
        let mut per_tick = vec![];
        for _ in 0..4 {
            let mut n = 0;
            while p.can_send(t) {
                p.on_sent(t, mtu, rate);
                n += 1;
            }
            per_tick.push(n);
            t = p.next_send_time_after(t + Duration::from_nanos(1));
        }
        assert_eq!(per_tick, vec![6, 5, 5, 5]);
        assert_eq!(t, Instant::ZERO + ms(55));
    }
}
