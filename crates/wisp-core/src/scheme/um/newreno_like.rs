//! `newreno-like` — TCP-NewReno-like rate control, Mehrotra et al. §IV-A.
//!
//! TCP grows its window by M²/W per ACK and halves it per NACK; with W = R·SRTT the rate law is
//!
//! ```text
//! per ACK:   ΔR = + M² / (R · SRTT²)
//! per NACK:  ΔR = − R / 2
//! ```
//!
//! (R in bytes/s, M the acknowledged packet's size in bytes, SRTT in seconds.) Over a path with
//! random loss p this settles at R ≈ (M/SRTT)·√(2/p), TCP's throughput: the law cannot tell the
//! inherent loss of a mobile link from congestion (Table I/II: 50 % and 12 % link utilisation).
//!
//! Deviations: an ACK that also covers packets whose own ACKs were lost grows R by M·(bytes
//! newly acknowledged)/(R·SRTT²), i.e. once per packet; no slow start (the paper gives none).

use super::sender::{AckInfo, LossInfo, RateLaw};
use crate::time::Instant;

/// The NewReno-like law (no parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewRenoLike;

/// One TCP-like increase: M²/(R·SRTT²) per acknowledged packet of M bytes.
pub(crate) fn tcp_increase(ack: &AckInfo, r: f64) -> f64 {
    let srtt = ack.srtt.as_secs_f64().max(1e-3);
    let m = ack.size as f64;
    m * ack.acked_bytes as f64 / (r * srtt * srtt)
}

impl RateLaw for NewRenoLike {
    fn on_ack(&mut self, _now: Instant, ack: &AckInfo, r: &mut f64) {
        *r += tcp_increase(ack, *r);
    }

    fn on_loss(&mut self, _now: Instant, _loss: &LossInfo, r: &mut f64) {
        *r /= 2.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Duration, ms};

    pub(crate) fn ack(size: u64, srtt: Duration, delta: Duration) -> AckInfo {
        AckInfo {
            seq: 0,
            size,
            acked_bytes: size,
            send_time: Instant::ZERO,
            rtt: srtt,
            srtt,
            min_rtt: srtt,
            delta,
            round: None,
            segment: 1240,
        }
    }

    #[test]
    fn grows_by_m_squared_over_r_srtt_squared_and_halves_per_nack() {
        let mut l = NewRenoLike;
        let mut r = 100_000.0;
        // M = 1000 B, SRTT = 100 ms: 1e6 / (1e5 · 0.01) = 1000 B/s.
        l.on_ack(Instant::ZERO, &ack(1000, ms(100), Duration::ZERO), &mut r);
        assert!((r - 101_000.0).abs() < 1e-6, "{r}");
        let loss = LossInfo {
            seq: 1,
            size: 1000,
            send_time: Instant::ZERO,
        };
        l.on_loss(Instant::ZERO, &loss, &mut r);
        l.on_loss(Instant::ZERO, &loss, &mut r);
        assert!((r - 25_250.0).abs() < 1e-6, "{r}");
    }

    #[test]
    fn one_rtt_of_acks_adds_one_packet_per_rtt() {
        // At R = 125 kB/s and SRTT = 80 ms, one RTT carries 10 kB = 10 packets of 1000 B; their
        // ACKs add about M/SRTT = 12.5 kB/s (one packet per RTT, as TCP's window).
        let mut l = NewRenoLike;
        let mut r = 125_000.0;
        for _ in 0..10 {
            l.on_ack(Instant::ZERO, &ack(1000, ms(80), Duration::ZERO), &mut r);
        }
        assert!((r - 137_500.0).abs() < 600.0, "{r}");
    }
}
