//! `nada` — Network-Assisted Dynamic Adaptation, RFC 8698 (Zhu, Pan, Ramalho, Mena;
//! Experimental, February 2020), as a video call. Written from the RFC's equations; its
//! default parameters are the RFC's Table 2 (the reference implementation, cisco/ns3-rmcat, was
//! read for its constants only, no code taken).
//!
//! **Receiver** ([`receiver`], RFC 8698 §4.2), per packet: the one-way delay
//! d_fwd = t_curr − t_sent, its baseline d_base (the minimum seen, so the clocks need not
//! agree) and the queueing delay d_queue = d_fwd − d_base through a 15-tap minimum filter
//! (its delay is what DFILT, 120 ms, bounds); losses by sequence gaps; ECN-CE marks (`ecn`).
//! Every DELTA (100 ms) while packets come it reports ([`feedback`], kind 70):
//!
//! * p_loss and p_mark: the ratios over the observation window LOGWIN (500 ms), smoothed with
//!   ALPHA (0.1) at each report;
//! * eq. (1), the non-linear warping when the last loss is recent (within loss_exp =
//!   MULTILOSS·loss_int packets, loss_int the average loss interval): d_tilde = d_queue below
//!   QTH (50 ms), else QTH·exp(−LAMBDA·(d_queue − QTH)/QTH), LAMBDA 0.5;
//! * eq. (2), x_curr = d_tilde + DMARK·(p_mark/PMRREF)² + DLOSS·(p_loss/PLRREF)² (DMARK 2 ms,
//!   DLOSS 10 ms, PMRREF = PLRREF = 0.01);
//! * r_recv, the bytes received over LOGWIN;
//! * rmode: 0 (accelerated ramp-up) if the window holds no loss, no mark and no filtered
//!   d_queue of QEPS (10 ms) or more, else 1 (gradual update);
//! * the echo of the newest packet's send time and how long it was held, for the RTT.
//!
//! **Sender** ([`sender`], RFC 8698 §4.3), on each report, with the RTT from the echo and δ the
//! interval since the previous report:
//!
//! * accelerated ramp-up, eqs. (3), (4): gamma = min(GAMMA_MAX, QBOUND/(rtt + DELTA + DFILT)),
//!   r_ref = max(r_ref, (1 + gamma)·r_recv) (GAMMA_MAX 0.5, QBOUND 50 ms);
//! * gradual update, eqs. (5)–(7): x_offset = x_curr − PRIO·XREF·RMAX/r_ref,
//!   x_diff = x_curr − x_prev, r_ref ← r_ref − KAPPA·(δ/TAU)·(x_offset/TAU)·r_ref −
//!   KAPPA·ETA·(x_diff/TAU)·r_ref (PRIO 1, XREF 10 ms, KAPPA 0.5, ETA 2, TAU 500 ms);
//! * r_ref clipped to [RMIN, RMAX]; x_curr taken at most XMAX (500 ms, see the deviations);
//! * the rate shaping buffer, eqs. (8), (9): the source's backlog after each packet is
//!   buffer_len; the encoder's target r_vin = max(RMIN, r_ref − BETA_V·8·buffer_len·FPS) and
//!   the pacing rate r_send = min(RMAX, r_ref + BETA_S·8·buffer_len·FPS) (BETA_V = BETA_S =
//!   0.1, FPS the call's 30 frames/s).
//!
//! The media source is the call of `gcc` (30 frames/s within [RMIN, RMAX], audio 32 kbit/s),
//! its packets released on 5-ms pacer ticks at r_send. The sender reports r_ref as its target.
//!
//! | key | default |
//! |---|---|
//! | `start-kbps`, `min-kbps`, `max-kbps` | 150, 150, 2500: r_ref's start, RMIN, RMAX (the call's keys, [`CallRates`]) |
//! | `pace-factor`, `audio-kbps` | 1.0 (packets leave at r_send), 32 |
//! | `prio`, `xref-ms`, `kappa`, `eta`, `tau-ms` | 1.0, 10, 0.5, 2.0, 500 |
//! | `delta-ms`, `logwin-ms`, `qeps-ms`, `dfilt-ms` | 100, 500, 10, 120 |
//! | `gamma-max`, `qbound-ms` | 0.5, 50 |
//! | `multiloss`, `qth-ms`, `lambda` | 7.0, 50, 0.5 |
//! | `plrref`, `pmrref`, `dloss-ms`, `dmark-ms`, `alpha` | 0.01, 0.01, 10, 2, 0.1 |
//! | `xmax-ms` | 500 (cisco/ns3-rmcat's XMAX) |
//! | `beta-s`, `beta-v` | 0.1, 0.1 |
//! | `ecn` | `false` |
//!
//! Measured against RFC 8867's expected behaviour (`crates/wisp-sim/tests/nada.rs`,
//! `docs/nada.md`): on 2 Mbit/s it converges (80 % in 6.9 s, then 0.99 of the link, queueing
//! p95 70 ms); on §5.1's capacity steps it fills every phase (≥ 0.985 of each phase's second
//! half) but does **not** keep the queueing p95 under 250 ms in the 0.6 Mbit/s phase (405 ms:
//! the drop overflows the queue and it takes about 2 s to drain); §5.4's three flows share
//! 3.5 Mbit/s with Jain's index 1.000.
//!
//! Deviations:
//! * RMAX is 2.5 Mbit/s, not the RFC's 1.5 Mbit/s: it is the ceiling of wisp's call encoder
//!   (`gcc`'s `max-kbps`, [`MediaConfig`](crate::source::MediaConfig)'s range), and the RFC 8867 §5.1 test has a
//!   2.5 Mbit/s phase that a 1.5 Mbit/s ceiling could not fill. RMIN is the RFC's 150 kbit/s.
//! * XMAX: the sender takes x_curr at most 500 ms (the bound cisco/ns3-rmcat has; RFC 8698's
//!   equations have none). Without it, after a capacity drop that overflows the queue, the loss
//!   term DLOSS·(p_loss/PLRREF)² reaches seconds (15 s measured on RFC 8867 §5.1's drop to
//!   0.6 Mbit/s) and, as the smoothed p_loss decays, the x_diff term of eq. (7) raises r_ref
//!   several-fold per report while x_curr is still seconds: r_ref swung between RMIN and RMAX
//!   every 2 s for the rest of the run (queueing p95 510 ms at 0.6 Mbit/s, 1302 + 857 drops).
//!   `xmax-ms=100000` gives the RFC's equations unbounded.
//! * The start: r_ref starts at `start-kbps`, by default RMIN (wisp's choice; the RFC leaves the
//!   initial rate to the application).
//! * ECN (`ecn=true`): the sender sends ECT(0), classic ECN (RFC 3168), not ECT(1). RFC 8698
//!   takes a CE mark as a congestion signal of the loss kind, penalised through
//!   DMARK·(p_mark/PMRREF)² against a 1 % reference marking ratio, which is not the scalable
//!   response RFC 9331 §4.3 asks of an ECT(1) (L4S) sender (respond to the extent of marking
//!   each RTT, tolerate the L queue's ~1-ms marking); so on a DualPI2 queue NADA's packets go
//!   to the Classic queue and see p_C = p'². The receiver counts a packet that arrives CE
//!   ([`DataHeader::ecn`](crate::packet::DataHeader::ecn)) as marked. With `ecn=false` (the
//!   default) packets are Not-ECT, marks are not counted and the DMARK term is zero.
//! * loss_int is smoothed with ALPHA over successive loss intervals (the RFC names it "the
//!   measured average loss interval" without fixing the average). A packet that arrives after
//!   its gap was counted lost stays counted lost.
//! * r_recv over the first LOGWIN is the bytes over the time since the first packet.
//! * The feedback is NADA's own message ([`NadaFeedback`]) carrying the values the receiver
//!   computes (§4.2's feedback of x_curr, rmode, r_recv), not RFC 8888 feedback with the
//!   computation at the sender (§5.1.3's alternative).
//! * No FEC or other protection of the media; the encoder's rate-shaping interplay is wisp's
//!   encoder model (frames at r_vin), not a real codec.

pub mod feedback;
pub mod receiver;
pub mod sender;

pub use feedback::{Mode, NadaFeedback};
pub use receiver::NadaReceiver;
pub use sender::NadaSender;

use super::call::CallRates;
use super::params::{Checked, Given, Validate, range, scheme_config};
use super::registry::Scheme;
use super::{Built, SchemeContext, listed_as};
use crate::time::Duration;
use crate::units::Bitrate;
use crate::units::serde_as::ms;

scheme_config! {
    /// Configuration of `nada` (RFC 8698 Table 2's names, in kebab case).
    #[derive(Clone, Debug, PartialEq)]
    pub struct NadaConfig {
        /// r_ref's start (`start-kbps`), RMIN (`min-kbps`), RMAX (`max-kbps`), the audio and the
        /// pacer's rate as a multiple of r_send (`pace-factor`, 1: r_send itself).
        #[group]
        pub call: CallRates,
        /// PRIO, the weight of the flow's priority.
        pub prio: f64,
        /// XREF, the reference congestion level, ms.
        #[serde(rename = "xref-ms", with = "ms")]
        pub xref: Duration,
        /// KAPPA, the gradual update's scaling of its offset and change terms.
        pub kappa: f64,
        /// ETA, the gradual update's scaling of the change term.
        pub eta: f64,
        /// TAU, the upper bound of the RTT in the gradual update, ms.
        #[serde(rename = "tau-ms", with = "ms")]
        pub tau: Duration,
        /// DELTA, the receiver's feedback interval, ms.
        #[serde(rename = "delta-ms", with = "ms")]
        pub delta: Duration,
        /// LOGWIN, the receiver's observation window, ms.
        #[serde(rename = "logwin-ms", with = "ms")]
        pub logwin: Duration,
        /// QEPS, the queueing delay that ends the accelerated ramp-up, ms.
        #[serde(rename = "qeps-ms", with = "ms")]
        pub qeps: Duration,
        /// DFILT, the bound on the delay filter's delay, ms.
        #[serde(rename = "dfilt-ms", with = "ms")]
        pub dfilt: Duration,
        /// GAMMA_MAX, the largest rate increase ratio of a ramp-up step.
        pub gamma_max: f64,
        /// QBOUND, the self-inflicted queueing delay a ramp-up step may add, ms.
        #[serde(rename = "qbound-ms", with = "ms")]
        pub qbound: Duration,
        /// MULTILOSS, loss_exp in average loss intervals.
        pub multiloss: f64,
        /// QTH, the queueing delay above which it is warped after losses, ms.
        #[serde(rename = "qth-ms", with = "ms")]
        pub qth: Duration,
        /// LAMBDA, the warping's exponent scale.
        pub lambda: f64,
        /// PLRREF, the reference loss ratio.
        pub plrref: f64,
        /// PMRREF, the reference marking ratio.
        pub pmrref: f64,
        /// DLOSS, the delay penalty of a loss ratio of PLRREF, ms.
        #[serde(rename = "dloss-ms", with = "ms")]
        pub dloss: Duration,
        /// DMARK, the delay penalty of a marking ratio of PMRREF, ms.
        #[serde(rename = "dmark-ms", with = "ms")]
        pub dmark: Duration,
        /// XMAX, the largest congestion signal the sender takes (cisco/ns3-rmcat's), ms.
        #[serde(rename = "xmax-ms", with = "ms")]
        pub xmax: Duration,
        /// ALPHA, the smoothing of the loss and marking ratios.
        pub alpha: f64,
        /// BETA_S, the shaping buffer's push on the sending rate.
        pub beta_s: f64,
        /// BETA_V, the shaping buffer's pull on the encoder's target.
        pub beta_v: f64,
        /// Send ECT(0) and count ECN-CE marks (the DMARK term).
        pub ecn: bool,
        /// The pacer's tick (5 ms, as `gcc`'s call).
        #[serde(skip)]
        pub interval: Duration,
    }
}

impl Default for NadaConfig {
    /// RFC 8698 Table 2, but RMAX (see the module's deviations).
    fn default() -> Self {
        let ms = Duration::from_millis;
        NadaConfig {
            call: CallRates {
                start: Bitrate::from_kbps(150),
                min: Bitrate::from_kbps(150),
                max: Bitrate::from_kbps(2500),
                pace_factor: 1.0,
                ..CallRates::default()
            },
            prio: 1.0,
            xref: ms(10),
            kappa: 0.5,
            eta: 2.0,
            tau: ms(500),
            delta: ms(100),
            logwin: ms(500),
            qeps: ms(10),
            dfilt: ms(120),
            gamma_max: 0.5,
            qbound: ms(50),
            multiloss: 7.0,
            qth: ms(50),
            lambda: 0.5,
            plrref: 0.01,
            pmrref: 0.01,
            dloss: ms(10),
            dmark: ms(2),
            xmax: ms(500),
            alpha: 0.1,
            beta_s: 0.1,
            beta_v: 0.1,
            ecn: false,
            interval: ms(5),
        }
    }
}

impl Validate for NadaConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        self.call.check(given)?;
        let numbers = [
            ("prio", self.prio, 0.01, 100.0),
            ("kappa", self.kappa, 0.001, 10.0),
            ("eta", self.eta, 0.0, 100.0),
            ("gamma-max", self.gamma_max, 0.001, 10.0),
            ("multiloss", self.multiloss, 0.0, 1000.0),
            ("lambda", self.lambda, 0.0, 100.0),
            ("plrref", self.plrref, 1e-6, 1.0),
            ("pmrref", self.pmrref, 1e-6, 1.0),
            ("alpha", self.alpha, 0.001, 1.0),
            ("beta-s", self.beta_s, 0.0, 10.0),
            ("beta-v", self.beta_v, 0.0, 10.0),
        ];
        for (key, v, lo, hi) in numbers {
            range(key, v, lo, hi, &format!("a number, {lo} to {hi}"))?;
        }
        let times = [
            ("xref-ms", self.xref, 0.0, 1000.0),
            ("tau-ms", self.tau, 1.0, 10_000.0),
            ("delta-ms", self.delta, 1.0, 1000.0),
            ("logwin-ms", self.logwin, 1.0, 10_000.0),
            ("qeps-ms", self.qeps, 0.0, 1000.0),
            ("dfilt-ms", self.dfilt, 0.0, 1000.0),
            ("qbound-ms", self.qbound, 1.0, 1000.0),
            ("qth-ms", self.qth, 1.0, 1000.0),
            ("dloss-ms", self.dloss, 0.0, 1000.0),
            ("dmark-ms", self.dmark, 0.0, 1000.0),
            ("xmax-ms", self.xmax, 1.0, 100_000.0),
        ];
        for (key, d, lo, hi) in times {
            given.time_ms(key, d, lo, hi, &format!("a time in ms, {lo} to {hi}"))?;
        }
        Ok(())
    }
}

impl Scheme for NadaConfig {
    type Sender = Box<NadaSender>;
    type Receiver = Box<NadaReceiver>;
    listed_as! {
        "nada",
        "NADA (RFC 8698): receiver-side aggregate congestion signal (queueing delay, loss, ECN marks), sender's accelerated ramp-up and gradual rate update, rate shaping buffer, video call",
        NadaConfig::default(),
    }

    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let media = self.call.media();
        let sender = Box::new(NadaSender::new(self, media.fps));
        let receiver = Box::new(NadaReceiver::new(self));
        Ok(ctx.media_halves(sender, receiver, media, self.interval))
    }
}

#[cfg(test)]
mod tests {
    use crate::scheme::SchemeConfig;

    #[test]
    fn parameters_parse_check_and_print() {
        let c: SchemeConfig = "nada:xref-ms=20,kappa=0.25,ecn=true,max-kbps=1500"
            .parse()
            .unwrap();
        assert_eq!(
            c.to_string(),
            "nada:max-kbps=1500,xref-ms=20,kappa=0.25,ecn=true"
        );
        assert_eq!(
            "nada:prio=1,delta-ms=100"
                .parse::<SchemeConfig>()
                .unwrap()
                .to_string(),
            "nada"
        );
        for bad in [
            "nada:kappa=0",
            "nada:delta-ms=0",
            "nada:alpha=2",
            "nada:min-kbps=3000",
            "nada:start-kbps=100",
            "nada:plrref=0",
            "nada:xref-ms=0.0000001",
            "nada:gamma=1",
        ] {
            assert!(bad.parse::<SchemeConfig>().is_err(), "{bad}");
        }
    }
}
