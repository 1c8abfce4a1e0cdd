//! A leaky-bucket pacer: spaces packets at a rate, with an optional burst allowance.

use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};

/// Spaces packets so that, over any interval, at most `rate × interval + burst` leaves.
///
/// With a zero burst, packet *k+1* leaves exactly `size_k / rate` after packet *k* while the
/// source is backlogged (no drift: the schedule advances from the previous slot, not from the
/// time the caller happened to poll).
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    next: Instant,
    burst: Duration,
}

impl Pacer {
    pub fn new(burst: Duration) -> Self {
        Pacer {
            next: Instant::ZERO,
            burst,
        }
    }

    /// The earliest time the next packet may leave.
    pub fn next_send_time(&self) -> Instant {
        self.next
    }

    pub fn can_send(&self, now: Instant) -> bool {
        self.next <= now
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
}
