//! `ctcp-like` — Compound-TCP-like rate control, Mehrotra et al. §IV-C.
//!
//! The paper gives no equations beyond "inspired by Compound TCP [Tan et al. 2006]", which uses
//! both delay and loss. This is Compound TCP's window law ([`Compound`], shared with the
//! `compound` TCP scheme) on the window W = R·SRTT, translated to a rate as §IV-A translates
//! NewReno's:
//!
//! ```text
//! win = cwnd + dwnd,  R = win / SRTT
//! per ACK:   cwnd += M · (bytes acked) / win                            (CTCP eq. 2)
//! per round: diff = (win/baseRTT − win/RTT) · baseRTT                   (eq. 4)
//!            dwnd += max(α·win^k − 1, 0)        if diff < γ
//!            dwnd  = max(dwnd − ζ·diff, 0)      if diff ≥ γ              (eq. 5)
//! per loss event:  cwnd = cwnd/2;  dwnd = max(win·(1 − β) − cwnd/2, 0)
//! α = 1/8, β = 1/2, k = 0.75, γ = 30 segments, ζ = 1
//! ```
//!
//! With γ = 30 segments queued, its operating delay is 30·S/R — over a second at 3G rates,
//! 60 ms at 5 Mbit/s — so it fills the 3G link's buffer (Table I: 48 % loss).
//!
//! Parameters: `alpha=0.125,beta=0.5,k=0.75,gamma=30,zeta=1`.
//!
//! A loss event is Compound TCP's (its NewReno fast recovery, RFC 6582): a NACK of a packet sent
//! after the previous event began starts a new one; NACKs of packets sent before are part of it.
//!
//! Deviations: no slow start; the segment size is the largest packet sent; if R was changed
//! outside the law (the no-feedback timer, the rate bounds), the windows are rescaled to the new
//! R before the next update.

use super::RateParams;
use super::sender::{AckInfo, LossInfo, RateLaw};
use crate::scheme::params::{Checked, Given, Validate, scheme_config};
use crate::scheme::tcp::compound::{Compound, CompoundConstants};
use crate::scheme::tcp::{AckSample, Window, WindowAdjustment};
use crate::time::{Duration, Instant};

scheme_config! {
    /// Configuration of [`CtcpLike`].
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct CtcpLikeConfig {
        /// α, β, k, γ, ζ.
        #[group]
        pub compound: CompoundConstants,
        #[group]
        pub rate: RateParams,
    }
}

impl Validate for CtcpLikeConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        self.compound.check()?;
        self.rate.check(given)
    }
}

/// The CTCP-like law: Compound TCP's windows, read as a rate.
#[derive(Clone, Debug)]
pub struct CtcpLike {
    compound: Compound,
    window: Option<Window>,
    /// The rate the law last set, bytes/s.
    last: f64,
    /// The SRTT of the last ACK.
    srtt: Duration,
    /// The highest sequence number sent so far, and when the current loss event began (RFC
    /// 6582's `recover`: losses of packets up to it belong to the event).
    highest_sent: u64,
    recover: Option<u64>,
}

impl CtcpLike {
    pub fn new(c: &CtcpLikeConfig) -> Self {
        CtcpLike {
            compound: Compound::with(&c.compound),
            window: None,
            last: 0.0,
            srtt: Duration::from_millis(100),
            highest_sent: 0,
            recover: None,
        }
    }

    /// The total window (cwnd + dwnd), bytes, once there is one.
    pub fn window_bytes(&self) -> Option<u64> {
        self.window.as_ref().map(|w| self.compound.send_window(w))
    }

    pub fn dwnd_segments(&self) -> f64 {
        self.compound.dwnd()
    }

    /// The window for rate `r` and RTT `srtt`, created or rescaled to match `r`.
    fn sync(&mut self, r: f64, srtt: Duration, segment: u64) -> &mut Window {
        let s = srtt.as_secs_f64().max(1e-3);
        let compound = &self.compound;
        let last = self.last;
        let w = self.window.get_or_insert_with(|| {
            let mut w = Window::new(segment.max(1), (r * s) as u64);
            // No slow start: congestion avoidance from the first ACK.
            w.set_ssthresh(0);
            w
        });
        if last > 0.0 && (r - last).abs() > 1e-6 * last {
            // Rescale the total; the delay window keeps its size.
            let win = compound.send_window(w) as f64;
            let dwnd = win - w.cwnd() as f64;
            w.set_cwnd((win * r / last - dwnd).max(0.0) as u64);
        }
        w
    }

    fn output(&mut self, srtt: Duration, r: &mut f64) {
        if let Some(w) = &self.window {
            *r = self.compound.send_window(w) as f64 / srtt.as_secs_f64().max(1e-3);
            self.last = *r;
        }
    }
}

impl RateLaw for CtcpLike {
    fn on_packet_sent(&mut self, _now: Instant, seq: u64, _size: u64) {
        self.highest_sent = self.highest_sent.max(seq);
    }

    fn on_ack(&mut self, now: Instant, ack: &AckInfo, r: &mut f64) {
        self.srtt = ack.srtt;
        let segment = ack.segment.max(ack.size);
        let w = self.sync(*r, ack.srtt, segment);
        let mut w = w.clone();
        let sample = AckSample {
            acked: ack.acked_bytes,
            prior_in_flight: (*r * ack.srtt.as_secs_f64()) as u64,
            rtt: ack.rtt,
            srtt: ack.srtt,
            min_rtt: ack.min_rtt,
            owd_ns: 0,
            round: ack.round,
            in_recovery: false,
        };
        self.compound.on_ack(now, &mut w, &sample);
        self.window = Some(w);
        self.output(ack.srtt, r);
    }

    fn on_loss(&mut self, now: Instant, loss: &LossInfo, r: &mut f64) {
        if self.recover.is_some_and(|p| loss.seq <= p) {
            return;
        }
        self.recover = Some(self.highest_sent);
        let Some(w) = self.window.as_ref() else {
            *r /= 2.0;
            return;
        };
        let srtt = self.srtt;
        let segment = w.mss();
        let mut w = self.sync(*r, srtt, segment).clone();
        let flight = (*r * srtt.as_secs_f64()) as u64;
        self.compound.on_congestion_event(now, &mut w, flight);
        self.window = Some(w);
        self.output(srtt, r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::tcp::RoundSample;
    use crate::time::ms;

    fn ack(rtt: Duration, min_rtt: Duration, round: bool) -> AckInfo {
        AckInfo {
            seq: 0,
            size: 1000,
            acked_bytes: 1000,
            send_time: Instant::ZERO,
            rtt,
            srtt: ms(100),
            min_rtt,
            delta: rtt - min_rtt,
            round: round.then_some(RoundSample {
                rtt,
                sent: 0,
                min_rtt: rtt,
                samples: 1,
            }),
            segment: 1000,
        }
    }

    #[test]
    fn rate_is_the_compound_window_over_srtt() {
        let mut l = CtcpLike::new(&CtcpLikeConfig::default());
        // R = 200 kB/s, SRTT = 100 ms: W = 20 kB = 20 segments.
        let mut r = 200_000.0;
        l.on_ack(Instant::ZERO, &ack(ms(100), ms(100), false), &mut r);
        // Eq. 2: cwnd += 1000·1000/20000 = 50 B → R += 500 B/s.
        assert!((r - 200_500.0).abs() < 1.0, "{r}");
        // A round with no queueing (diff = 0 < γ): dwnd += α·win^0.75 − 1 ≈ 0.125·20^0.75 − 1.
        l.on_ack(Instant::ZERO, &ack(ms(100), ms(100), true), &mut r);
        let dwnd = 0.125 * 20.05f64.powf(0.75) - 1.0;
        assert!(
            (l.dwnd_segments() - dwnd).abs() < 0.01,
            "{}",
            l.dwnd_segments()
        );
        // A loss event: cwnd halves and the total shrinks by β = 1/2.
        for seq in 0..10 {
            l.on_packet_sent(Instant::ZERO, seq, 1000);
        }
        let before = r;
        let loss = |seq| LossInfo {
            seq,
            size: 1000,
            send_time: Instant::ZERO,
        };
        l.on_loss(Instant::ZERO, &loss(3), &mut r);
        assert!((r / before - 0.5).abs() < 0.02, "{r} / {before}");
        // Another loss of a packet sent before the event began is part of it…
        let after = r;
        l.on_loss(Instant::ZERO, &loss(7), &mut r);
        assert_eq!(r, after);
        // …one sent after it is a new event.
        l.on_packet_sent(Instant::ZERO, 10, 1000);
        l.on_loss(Instant::ZERO, &loss(10), &mut r);
        assert!(r < 0.6 * after, "{r} vs {after}");
    }

    #[test]
    fn a_queue_above_gamma_shrinks_the_delay_window() {
        let mut l = CtcpLike::new(&CtcpLikeConfig::default());
        let mut r = 1_000_000.0;
        // Grow dwnd over a few rounds without queueing.
        for _ in 0..5 {
            l.on_ack(Instant::ZERO, &ack(ms(100), ms(100), true), &mut r);
        }
        let grown = l.dwnd_segments();
        assert!(grown > 10.0, "{grown}");
        // RTT 200 ms over a base of 100 ms: diff = win/2 ≫ γ = 30.
        l.on_ack(Instant::ZERO, &ack(ms(200), ms(100), true), &mut r);
        assert!(l.dwnd_segments() < grown);
    }
}
