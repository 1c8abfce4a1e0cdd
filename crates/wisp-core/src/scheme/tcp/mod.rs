//! TCP congestion-control baselines — one ACK-clocked sender, five window laws.
//!
//! The Sprout paper (Winstein et al., NSDI 2013, §6.3–6.4) compares against bulk TCP transfers:
//! CUBIC (with and without CoDel), TCP Vegas, Compound TCP and LEDBAT; the Mehrotra et al. paper
//! adds NewReno. They differ only in how the congestion window reacts to ACKs, losses and
//! timeouts, so, as neqo's `ClassicCongestionController<WindowAdjustment>`, one machinery does
//! everything else and each scheme supplies a [`WindowAdjustment`]:
//!
//! | scheme | module | spec |
//! |---|---|---|
//! | `newreno` | [`newreno`] | RFC 5681 §3.1 + RFC 6582 §3.2 |
//! | `cubic` | [`cubic`] | RFC 9438 |
//! | `vegas` | [`vegas`] | Brakmo & Peterson, IEEE JSAC 13(8), 1995 (SIGCOMM 1994) |
//! | `compound` | [`compound`] | Tan, Song, Zhang, Sridharan, INFOCOM 2006; draft-sridharan-tcpm-ctcp-02 |
//! | `ledbat` | [`ledbat`] | RFC 6817 |
//!
//! The shared machinery ([`TcpSender`], [`TcpReceiver`]):
//!
//! * **ACKs**: the receiver acknowledges every packet with a [`TcpAck`](crate::scheme::tcp::ack::TcpAck)
//!   (kind 30): the packet's sequence number and echoed send time (RFC 7323 timestamps), its
//!   arrival time, and up to three SACK-like ranges of received sequence numbers (RFC 2018).
//! * **Sequence space**: every transmission gets a new sequence number, as in QUIC (RFC 9000
//!   §12.3), so ACKs are never ambiguous and every ACK yields an RTT sample (no Karn problem).
//! * **Loss detection** (SACK-based, RFC 6675 with RACK, RFC 8985): an outstanding packet is lost
//!   when a packet sent at least `DupThresh` = 3 packets later has been acknowledged (RFC 6675
//!   §4's `IsLost` in RFC 9002 §6.1.1's packet-number form), or when a later-sent packet has been
//!   acknowledged and the packet was sent more than `RACK.rtt + RACK.reo_wnd` ago, with
//!   `reo_wnd = min_rtt/4` (RFC 8985 §6.2); a timer fires for the second rule (§6.3).
//! * **Recovery** (RFC 6675 §5, RFC 6582 §3.2): the first loss starts recovery with
//!   `RecoveryPoint` (RFC 6582's `recover`) = the highest sequence number sent; the window law
//!   reacts once ([`WindowAdjustment::on_congestion_event`]); further losses of packets up to the
//!   recovery point are part of the same event. An ACK that leaves packets up to the recovery
//!   point outstanding is a *partial* ACK; recovery ends at the *full* ACK: every packet up to the
//!   recovery point is acknowledged or lost, and a later one is acknowledged. While recovering,
//!   the sender may send `cwnd − pipe` (RFC 6675 §5's pipe: bytes neither acknowledged nor lost).
//! * **Retransmission timeout** (RFC 6298, [`rtt`]): started when a packet leaves and none is
//!   timed, restarted by each ACK of new data, stopped when nothing is outstanding; on expiry
//!   every outstanding packet is lost, the window law reacts ([`WindowAdjustment::on_rto`], by
//!   default RFC 5681 §3.1: `ssthresh = max(FlightSize/2, 2·SMSS)` on the first expiry, `cwnd = 1
//!   SMSS`), and the timeout doubles.
//! * **Spurious timeouts** (Eifel detection, RFC 3522): if the first ACK after a timeout
//!   acknowledges a packet sent before it, the timeout was spurious (a delay spike or an outage of
//!   the link, not a loss): the window law's state before the timeout is restored and the packets
//!   it declared lost are in flight again (Linux's undo; RFC 4015's response is more cautious).
//! * **Slow start** (RFC 5681 §3.1 eq. 2): `cwnd += min(N, SMSS)` per ACK of N new bytes while
//!   `cwnd < ssthresh`; initial window 10 segments (RFC 6928, Linux since 2.6.39), `ssthresh`
//!   initially unlimited.
//! * **Sending**: `Allowance::Window { bytes: min(window, rwnd) − pipe, pacing: None }`, where
//!   `rwnd` is the receiver's advertised window (RFC 9293's flow control), unlimited unless
//!   `rwnd-kb` is given. No pacing: the
//!   Linux kernels of the paper's era (2012) sent ACK-clocked bursts (the `fq` pacer arrived in
//!   3.12, 2013); a bulk source sends only full-size packets.
//!
//! Deviations (shared by every scheme):
//! * A retransmission is modelled as a new bulk packet: the application is a bulk transfer, and
//!   the window dynamics depend only on how many bytes are in flight, not on which bytes. The
//!   receiver therefore never fills a hole, and "cumulative ACK" is replaced by the ranges.
//!   Throughput counts every delivered packet (a spuriously retransmitted segment would count
//!   once in TCP's goodput; here spurious losses are rare and counted in [`TcpCounters`]).
//! * No tail loss probe (RFC 8985 §7), no F-RTO (RFC 5682; Eifel detection is used instead), no
//!   DSACK-based undo of spurious fast retransmits, no Proportional Rate Reduction (RFC 6937;
//!   RFC 6675's pipe rule instead), no limited transmit (RFC 3042), no delayed ACKs (per-packet
//!   ACKs, as the issue asks).
//! * No receive-window limit by default: the receiver is infinitely fast and its buffer
//!   unbounded, so over an infinite queue a loss-based sender's window grows for the whole run.
//!   Real stacks cap it (Linux's receive-buffer autotuning at a few megabytes); `rwnd-kb=N`
//!   models that.
//! * RACK's reordering window is always `min_rtt/4` (RFC 8985 §6.2 lowers it to 0 in some
//!   recovery states and adapts it to DSACKs).
//! * The recovery point is a packet number, so a loss of a packet sent after recovery began is a
//!   new congestion event (as QUIC, RFC 9002 §7.3.2).

mod sender;

pub mod ack;
pub mod compound;
pub mod cubic;
pub mod hystart;
pub mod ledbat;
pub mod newreno;
pub mod receiver;
pub mod rtt;
pub mod vegas;

pub use receiver::TcpReceiver;
pub(crate) use sender::Rounds;
pub use sender::{TcpCounters, TcpSender};

use super::registry::{Halves, Scheme};
use super::{Built, SchemeContext, listed_as};
use crate::pacer::Pacer;
use crate::source::Source;
use compound::{Compound, CompoundConfig};
use cubic::{Cubic, CubicConfig};
use ledbat::{Ledbat, LedbatConfig};
use newreno::{NewReno, NewRenoConfig};
use vegas::{Vegas, VegasConfig};

use crate::time::{Duration, Instant};
use core::fmt;

use super::params::{Checked, Given, check, range, scheme_config};
use crate::units::serde_as::ms;

/// RFC 6675's DupThresh: a packet is lost when one sent this many packets later is acknowledged.
pub const DUP_THRESH: u64 = 3;

/// The congestion window and slow-start threshold, in bytes, with the segment size.
///
/// Laws that grow the window by fractions of a byte per ACK ([`Window::add`]) keep the fraction
/// here, so nothing is lost to rounding. The window never falls below one segment.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    cwnd: u64,
    ssthresh: u64,
    mss: u64,
    frac: f64,
}

impl Window {
    /// A window of `cwnd` bytes with segments of `mss` bytes and an unlimited `ssthresh`.
    pub fn new(mss: u64, cwnd: u64) -> Self {
        let mss = mss.max(1);
        Window {
            cwnd: cwnd.max(mss),
            ssthresh: u64::MAX,
            mss,
            frac: 0.0,
        }
    }

    /// The congestion window in bytes.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// The congestion window in segments (with the fraction carried by [`Window::add`]).
    pub fn cwnd_segments(&self) -> f64 {
        (self.cwnd as f64 + self.frac) / self.mss as f64
    }

    /// The slow-start threshold in bytes (`u64::MAX`: unlimited).
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// The sender's maximum segment size in bytes.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Sets the window to `bytes` (at least one segment).
    pub fn set_cwnd(&mut self, bytes: u64) {
        self.cwnd = bytes.max(self.mss);
        self.frac = 0.0;
    }

    /// Sets the window to `segments` segments (at least one).
    pub fn set_cwnd_segments(&mut self, segments: f64) {
        let bytes = (segments * self.mss as f64).max(self.mss as f64);
        self.cwnd = bytes.floor() as u64;
        self.frac = bytes - self.cwnd as f64;
    }

    pub fn set_ssthresh(&mut self, bytes: u64) {
        self.ssthresh = bytes;
    }

    /// Grows (or, negative, shrinks) the window by a fractional number of bytes.
    pub fn add(&mut self, bytes: f64) {
        if !bytes.is_finite() {
            return;
        }
        let total = (self.cwnd as f64 + self.frac + bytes).max(self.mss as f64);
        self.cwnd = total.floor() as u64;
        self.frac = total - self.cwnd as f64;
    }

    /// `cwnd < ssthresh` (RFC 5681 §3.1 uses slow start below the threshold).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Slow start for an ACK of `acked` new bytes: `cwnd += min(N, SMSS)` (RFC 5681 §3.1 eq. 2),
    /// not beyond `ssthresh`. Returns the acknowledged bytes left for congestion avoidance (those
    /// that arrived once the window reached `ssthresh`).
    pub fn slow_start(&mut self, acked: u64) -> u64 {
        if !self.in_slow_start() {
            return acked;
        }
        let room = self.ssthresh - self.cwnd;
        let inc = acked.min(self.mss);
        if inc <= room {
            self.cwnd += inc;
            0
        } else {
            self.cwnd = self.ssthresh;
            acked - room
        }
    }
}

/// RFC 5681 §3.1 eq. (4): `ssthresh = max(FlightSize / 2, 2·SMSS)`.
pub fn reno_ssthresh(flight_size: u64, mss: u64) -> u64 {
    (flight_size / 2).max(2 * mss)
}

/// What one ACK told the sender (passed to [`WindowAdjustment::on_ack`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    /// Bytes this ACK newly acknowledged among the packets in flight.
    pub acked: u64,
    /// Bytes in flight before this ACK (RFC 6817's `flightsize`).
    pub prior_in_flight: u64,
    /// RTT of the most recently sent packet this ACK acknowledged.
    pub rtt: Duration,
    /// Smoothed RTT (RFC 6298) after this ACK.
    pub srtt: Duration,
    /// The smallest RTT of the connection (Vegas's and Compound's `baseRTT`).
    pub min_rtt: Duration,
    /// One-way delay of the packet that triggered this ACK plus the unknown offset between the
    /// receiver's and the sender's clocks, in nanoseconds: only differences are meaningful
    /// (LEDBAT, RFC 6817 §3.1).
    pub owd_ns: i64,
    /// Set when this ACK completed a round: one RTT's worth of packets.
    pub round: Option<RoundSample>,
    /// The sender is in fast recovery (RFC 6675 §5): laws do not grow the window.
    pub in_recovery: bool,
}

/// One round trip of the connection, as Vegas measures it (Brakmo & Peterson 1995, §3.2): the
/// first packet sent after the previous round ended (the "distinguished segment") is timed, and
/// the round ends when it is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundSample {
    /// RTT of the distinguished segment.
    pub rtt: Duration,
    /// Bytes sent between the distinguished segment's departure and its ACK.
    pub sent: u64,
    /// The smallest RTT sample of the ACKs during the round.
    pub min_rtt: Duration,
    /// RTT samples (ACKs) during the round.
    pub samples: u32,
}

/// A congestion-window law: how the window reacts to ACKs, losses and timeouts. The rest (loss
/// detection, RTT, timers, recovery, in-flight accounting) is [`TcpSender`]'s.
pub trait WindowAdjustment: Clone + fmt::Debug {
    /// Sets the initial window, once, before anything is sent. The default keeps the configured
    /// initial window and an unlimited `ssthresh`.
    fn on_init(&mut self, _w: &mut Window) {}

    /// An ACK newly acknowledged data (also during recovery: see [`AckSample::in_recovery`]).
    fn on_ack(&mut self, now: Instant, w: &mut Window, ack: &AckSample);

    /// A loss started a congestion event (entering fast recovery). `flight_size` is the bytes in
    /// flight before the ACK that revealed it.
    fn on_congestion_event(&mut self, now: Instant, w: &mut Window, flight_size: u64);

    /// Recovery ended with a full ACK; `flight_size` is the bytes in flight now.
    fn on_recovery_exit(&mut self, _now: Instant, _w: &mut Window, _flight_size: u64) {}

    /// The retransmission timer expired; `first` for the first expiry of a series (RFC 5681 §3.1:
    /// `ssthresh` is not lowered again on repeated timeouts of the same data).
    fn on_rto(&mut self, _now: Instant, w: &mut Window, flight_size: u64, first: bool) {
        if first {
            w.set_ssthresh(reno_ssthresh(flight_size, w.mss()));
        }
        w.set_cwnd(w.mss());
    }

    /// The window the sender fills, in bytes (Compound TCP adds its delay window).
    fn send_window(&self, w: &Window) -> u64 {
        w.cwnd()
    }
}

scheme_config! {
    /// Parameters every TCP scheme shares (`iw=10,rto-min-ms=1000,rwnd-kb=N`).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct TcpParams {
        /// Initial window, segments.
        // RFC 6928: 10.
        #[serde(rename = "iw")]
        pub initial_window: u32,
        /// Lower bound of the retransmission timeout, ms.
        // RFC 6298 §2.4: 1 s.
        #[serde(rename = "rto-min-ms", with = "ms")]
        pub rto_min: Duration,
        /// The receiver's advertised window, kB (1000 bytes); `none`: unlimited.
        // In bytes.
        #[serde(rename = "rwnd-kb", with = "kb")]
        pub rwnd: Option<u64>,
        /// Upper bound of the retransmission timeout (RFC 6298 §2.5: at least 60 s).
        #[serde(skip)]
        pub rto_max: Duration,
    }
}

impl Default for TcpParams {
    fn default() -> Self {
        TcpParams {
            initial_window: 10,
            rto_min: Duration::from_secs(1),
            rwnd: None,
            rto_max: Duration::from_secs(60),
        }
    }
}

impl TcpParams {
    /// The shared keys' ranges.
    pub(crate) fn check(&self, given: &Given<'_>) -> Checked {
        range(
            "iw",
            f64::from(self.initial_window),
            1.0,
            1000.0,
            "a whole number of segments, 1 to 1000",
        )?;
        given.time_ms(
            "rto-min-ms",
            self.rto_min,
            1.0,
            60_000.0,
            "milliseconds, 1 to 60000",
        )?;
        if let Some(bytes) = self.rwnd {
            let kb = given.number("rwnd-kb", bytes as f64 / 1000.0);
            range(
                "rwnd-kb",
                kb,
                1.5,
                1e9,
                "kilobytes (1000 B), 1.5 to 1e9, or none",
            )?;
            check(
                "rwnd-kb",
                (kb * 1000.0).round() / 1000.0 == kb,
                "kilobytes (1000 B), 1.5 to 1e9, in whole bytes, or none",
            )?;
        }
        Ok(())
    }
}

/// `rwnd-kb`: a window in bytes written in kB (1000 bytes), `none` for no limit.
mod kb {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_none(),
            Some(b) => s.serialize_some(&(*b as f64 / 1000.0)),
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        let kb = Option::<f64>::deserialize(d)?;
        Ok(kb.map(|kb| (kb * 1000.0).round() as u64))
    }
}

/// A TCP scheme: an ACK-clocked bulk sender (full-size packets, no pacing) with window
/// adjustment `$w`, and the per-packet-ACK receiver.
macro_rules! tcp_scheme {
    ($config:ty, $w:ty, $name:literal, $summary:literal) => {
        impl Scheme for $config {
            type Sender = TcpSender<$w>;
            type Receiver = TcpReceiver;
            listed_as! {
                $name,
                $summary,
                <$config>::default(),
            }

            fn build(&self, ctx: SchemeContext) -> Built<Self> {
                let mtu = ctx.mtu();
                Ok(Halves {
                    sender: TcpSender::new(&self.tcp, mtu, <$w>::new(self)),
                    receiver: TcpReceiver::new(),
                    source: Source::bulk(mtu),
                    pacer: Pacer::default(),
                    mtu,
                })
            }
        }
    };
}

tcp_scheme!(
    CubicConfig,
    Cubic,
    "cubic",
    "TCP CUBIC bulk transfer (RFC 9438), ACK-clocked; `--queue codel` for CUBIC over CoDel"
);
tcp_scheme!(
    NewRenoConfig,
    NewReno,
    "newreno",
    "TCP NewReno bulk transfer (RFC 5681 + RFC 6582 recovery)"
);
tcp_scheme!(
    VegasConfig,
    Vegas,
    "vegas",
    "TCP Vegas bulk transfer (Brakmo & Peterson 1995): keeps alpha..beta segments queued"
);
tcp_scheme!(
    CompoundConfig,
    Compound,
    "compound",
    "Compound TCP bulk transfer (Tan et al. 2006): Reno window + delay window"
);
tcp_scheme!(
    LedbatConfig,
    Ledbat,
    "ledbat",
    "LEDBAT bulk transfer (RFC 6817): targets 100 ms of one-way queueing delay"
);

#[cfg(test)]
pub(crate) mod harness;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::ParamError;
    use crate::scheme::params::{Parameters, changed};

    #[test]
    fn slow_start_follows_eq_2_and_stops_at_ssthresh() {
        let mut w = Window::new(1000, 10_000);
        assert!(w.in_slow_start());
        // An ACK of two segments still grows the window by one SMSS (min(N, SMSS)).
        assert_eq!(w.slow_start(2000), 0);
        assert_eq!(w.cwnd(), 11_000);
        w.set_ssthresh(11_500);
        // 500 bytes of room: the rest of the ACK is left for congestion avoidance.
        assert_eq!(w.slow_start(1000), 500);
        assert_eq!(w.cwnd(), 11_500);
        assert!(!w.in_slow_start());
        assert_eq!(w.slow_start(1000), 1000);
    }

    #[test]
    fn fractional_growth_is_kept_and_the_window_has_a_floor() {
        let mut w = Window::new(1000, 1000);
        for _ in 0..10 {
            w.add(0.25);
        }
        assert_eq!(w.cwnd(), 1002);
        assert!((w.cwnd_segments() - 1.0025).abs() < 1e-12);
        w.add(-1e9);
        assert_eq!(w.cwnd(), 1000);
        w.set_cwnd(0);
        assert_eq!(w.cwnd(), 1000);
        w.set_cwnd_segments(2.5);
        assert_eq!(w.cwnd(), 2500);
        w.add(f64::NAN);
        assert_eq!(w.cwnd(), 2500);
    }

    #[test]
    fn reno_ssthresh_is_half_the_flight_but_two_segments_at_least() {
        assert_eq!(reno_ssthresh(30_000, 1500), 15_000);
        assert_eq!(reno_ssthresh(1500, 1500), 3000);
    }

    #[test]
    fn shared_params_parse_and_print() {
        let mut c = newreno::NewRenoConfig::default();
        assert!(changed(&c).is_empty());
        c.set_params(&[("iw", "4"), ("rto-min-ms", "200"), ("rwnd-kb", "4500")])
            .unwrap();
        assert_eq!(c.tcp.rwnd, Some(4_500_000));
        assert_eq!(c.tcp.rto_min, Duration::from_millis(200));
        for (k, v) in [
            ("rwnd-kb", "1"),
            ("iw", "0"),
            ("iw", "2.5"),
            ("rto-min-ms", "x"),
        ] {
            assert!(
                matches!(c.set_params(&[(k, v)]), Err(ParamError::BadValue { .. })),
                "{k}={v}"
            );
        }
        assert!(matches!(
            c.set_params(&[("beta", "0.5")]),
            Err(ParamError::UnknownParam { .. })
        ));
        assert_eq!(
            changed(&c),
            vec![
                ("iw", "4".to_string()),
                ("rto-min-ms", "200".to_string()),
                ("rwnd-kb", "4500".to_string())
            ]
        );
        c.set_params(&[("rwnd_kb", "none")]).unwrap();
        assert_eq!(c.tcp.rwnd, None);
    }
}
