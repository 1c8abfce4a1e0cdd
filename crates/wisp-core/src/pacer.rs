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

/// A [`Pacer`] polled by a clock that wakes a little after the instant it asked for (a real
/// clock never wakes exactly on it): the flow driver's pacer, and the video layer's.
///
/// The pacer is asked about the instant the caller asked to be woken at, once it has come: a
/// packet due then is due now (it still leaves at `now`). Otherwise a periodic pacer, which
/// releases packets only on its ticks, would never send, and any pacer would lose the lateness
/// of every wake-up from its rate. In the simulator the caller is polled exactly at its
/// wake-ups, so the instant asked about is always `now`.
#[derive(Clone, Debug, Default)]
pub struct WokenPacer {
    pacer: Pacer,
    wake: Option<Instant>,
}

impl WokenPacer {
    pub fn new(pacer: Pacer) -> Self {
        WokenPacer { pacer, wake: None }
    }

    /// When the caller wants to be polled again for a packet the pacer held back, if one was.
    pub fn wake(&self) -> Option<Instant> {
        self.wake
    }

    /// May a packet of `size` leave at `now`, paced at `rate` (`None`: unpaced)? If so it is
    /// counted as sent; if not, [`WokenPacer::wake`] says when to ask again.
    pub fn admit(&mut self, now: Instant, size: DataSize, rate: Option<Bitrate>) -> bool {
        let at = self.wake.filter(|&w| w <= now).unwrap_or(now);
        if let Some(rate) = rate {
            if !self.pacer.can_send(at) {
                self.wake = Some(self.pacer.next_send_time_after(now));
                return false;
            }
            self.pacer.on_sent(at, size, rate);
        }
        // Serving a past wake-up: it is kept, so the rest of its packets (a periodic pacer's
        // group) leave too.
        if at == now {
            self.wake = None;
        }
        true
    }

    /// Nothing is ready to send: a wake-up that has come is not asked for again (it would be a
    /// busy loop).
    pub fn idle(&mut self, now: Instant) {
        if self.wake.is_some_and(|w| w <= now) {
            self.wake = None;
        }
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
