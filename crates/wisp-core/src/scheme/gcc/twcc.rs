//! `gcc-twcc` — send-side GCC on transport-wide feedback: the delay-based estimator with
//! libwebrtc's trendline filter, run at the sender on what the receiver reports of every packet.
//!
//! This is the send-side GCC of 2016 (libwebrtc after Carlucci et al., MMSys 2016, moved the
//! receiver-side estimator to the sender), before probing, ALR detection and the Bayesian
//! acknowledged bitrate; `gcc` ([`crate::scheme::goog_cc`]) is the controller libwebrtc runs
//! today. It is built from the same pieces as `gcc-remb`:
//!
//! **Receiver** ([`GccTwccReceiver`]), libwebrtc's `RemoteEstimatorProxy`: records each packet's
//! transport-wide sequence number (16 bits on the wire, RTP header extension
//! `draft-holmer-rmcat-transport-wide-cc-extensions-01`) and arrival, and every
//! `feedback-interval-ms` (50 ms: `RemoteEstimatorProxy` sends every 50–250 ms, spending 5 % of the
//! received rate on feedback, which at the rates of a call is its 50-ms floor) sends a
//! [`TransportFeedback`]: for every sequence number since the last one, received or not and its
//! arrival on the 250-µs grid ([`TransportFeedbackRecorder`]). It estimates nothing.
//!
//! **Sender** ([`GccTwccSender`]): keeps each packet's send time and size by its sequence number
//! (libwebrtc `TransportFeedbackAdapter`), and on each feedback:
//!
//! * maps the reported arrivals to the sends (16-bit sequence numbers unwrapped against the
//!   highest sent; the 24-bit reference time unwrapped against the previous feedback's);
//! * in arrival order (`DelayBasedBwe` sorts by receive time), runs the packets through the
//!   send side's [`DelayDetector`]: groups by send time with libwebrtc's rule
//!   (`InterArrivalDelta` with burst grouping, [`Prefilter::Libwebrtc`](super::Prefilter), ΔT =
//!   5 ms), the trendline filter (`TrendlineEstimator`, 20 groups, smoothing 0.9, gain 4) and
//!   the over-use detector with the adaptive threshold (libwebrtc's gains);
//! * updates the delay-based rate with [`AimdRateControl`] fed with the acknowledged bitrate —
//!   the bytes the feedback acknowledges over the last 500 ms of arrivals ([`RateCounter`]) — at
//!   every feedback, except during over-use, where it decreases again only when
//!   `TimeToReduceFurther` allows (`DelayBasedBwe::MaybeUpdateEstimate`);
//! * runs the loss-based controller of eq. (1) on the fraction of packets the feedbacks report
//!   lost, over at least 20 packets (`SendSideBandwidthEstimation`'s `kLimitNumPackets`), at
//!   libwebrtc's cadence (increase at most once a second, decrease at most once per
//!   300 ms + RTT: `gcc-remb`'s [`GccSender`], which this sender drives);
//! * target A = min(loss-based, delay-based), at least `min-kbps`.
//!
//! The RTT is measured on each feedback as its arrival minus the send time of the newest packet
//! it acknowledges, and nothing is subtracted: it includes the time the receiver held that
//! packet's report (up to one feedback interval, 50 ms). pion's `SendSideBWE` subtracts that
//! holding time, estimated from the arrival times (now − departure − (feedback sent − arrival),
//! the minimum over the acknowledged packets); libwebrtc likewise separates a propagation RTT
//! from the feedback RTT. Here it serves the loss-based decrease interval (300 ms + RTT) only:
//! an RTT too long by up to 50 ms delays a loss-based decrease by as much. (The rate
//! controller's `TimeToReduceFurther` keeps its configured 200 ms, as in `gcc-remb`.)
//!
//! The media source and the pacer are `gcc-remb`'s: a video call (30 frames/s, 50–2500 kbit/s, audio
//! 32 kbit/s) encoded at A, released every ΔT = 5 ms at 2.5·A.
//!
//! Deviations:
//! * No probing (`ProbeController`), no ALR detection, no congestion-window pushback, loss-based
//!   v1 rather than LossBasedBweV2; the start is a plain 300 kbit/s, which the rate controller
//!   takes as its first estimate (`SetStartBitrate`) and from which both controllers ramp (so it
//!   takes ~40 s to reach 2 Mbit/s, where libwebrtc's initial probes at 3× and 6× the start
//!   rate get there in a second or two).
//! * The acknowledged bitrate is a 500-ms windowed rate over arrivals, not libwebrtc's Bayesian
//!   `BitrateEstimator` (150-ms windows with uncertainty).
//! * Audio packets count towards the acknowledged rate but are not delay samples, as in `gcc-remb`'s
//!   receiver (see [`super::receiver`] for why); libwebrtc's default feeds audio into the same
//!   inter-arrival unless `WebRTC-Bwe-SeparateAudioPackets` is on.
//! * Loss is counted on what the feedback reports: a packet reported lost that arrives later is
//!   not re-reported by wisp's receiver and stays lost.

use super::adapter::{FeedbackAdapter, PacketFeedback, SentPacket};
use super::delay::DelayDetector;
use super::overuse::{BandwidthUsage, ThresholdConfig};
use super::rate::RateCounter;
use super::rate_control::{AimdConfig, AimdRateControl};
use super::{CallRates, GccConfig, GccSender};
use crate::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
use crate::packet::DataHeader;
use crate::scheme::params::{Checked, Given, Validate, scheme_config};
use crate::scheme::registry::Scheme;
use crate::scheme::{Built, SchemeContext, listed_as};
use crate::time::{Duration, Instant};
use crate::units::Bitrate;
use crate::units::serde_as::ms;
use crate::wire::{TransportFeedback, TransportFeedbackRecorder};
use std::collections::VecDeque;

scheme_config! {
    /// Configuration of `gcc-twcc`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct GccTwccConfig {
        #[group]
        pub call: CallRates,
        /// The receiver's feedback interval, ms.
        // 50 ms.
        #[serde(rename = "feedback-interval-ms", with = "ms")]
        pub feedback_interval: Duration,
        /// ΔT: the pacer's interval and the grouping interval (5 ms).
        #[serde(skip)]
        pub interval: Duration,
        /// The window of the acknowledged bitrate (500 ms).
        #[serde(skip)]
        pub rate_window: Duration,
        #[serde(skip)]
        pub threshold: ThresholdConfig,
        #[serde(skip)]
        pub aimd: AimdConfig,
    }
}

impl Default for GccTwccConfig {
    fn default() -> Self {
        let g = GccConfig::trendline();
        GccTwccConfig {
            call: g.call,
            feedback_interval: Duration::from_millis(50),
            interval: g.interval,
            rate_window: g.rate_window,
            threshold: ThresholdConfig::LIBWEBRTC,
            aimd: g.aimd,
        }
    }
}

impl GccTwccConfig {
    /// The `gcc-remb` configuration whose loss-based controller this sender drives.
    fn loss_config(&self) -> GccConfig {
        GccConfig {
            call: self.call.clone(),
            ..GccConfig::trendline()
        }
    }
}

impl Validate for GccTwccConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        check_feedback_and_call(given, self.feedback_interval, &self.call)
    }
}

/// The checks every send-side GCC shares: its receiver's `feedback-interval-ms` (1 to 1000),
/// then the call's rates.
pub(crate) fn check_feedback_and_call(
    given: &Given<'_>,
    feedback_interval: Duration,
    call: &CallRates,
) -> Checked {
    given.time_ms(
        "feedback-interval-ms",
        feedback_interval,
        1.0,
        1000.0,
        "a time in ms, 1 to 1000",
    )?;
    call.check(given)
}

impl Scheme for GccTwccConfig {
    type Sender = Box<GccTwccSender>;
    type Receiver = GccTwccReceiver;
    listed_as! {
        "gcc-twcc",
        "send-side GCC of 2016 (no probing, no ALR): transport-wide feedback, trendline estimator and AIMD on the acknowledged rate at the sender, loss-based eq. (1), video call",
        GccTwccConfig::default(),
    }

    /// A video call (frames at the target rate, plus audio) through the pacer's ΔT ticks, as
    /// `gcc-remb`'s.
    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let sender = Box::new(GccTwccSender::new(self));
        let receiver = GccTwccReceiver::new(self);
        Ok(ctx.media_halves(sender, receiver, self.call.media(), self.interval))
    }
}

/// `gcc-twcc`'s receiver: transport-wide feedback every feedback interval, nothing else.
#[derive(Clone, Debug)]
pub struct GccTwccReceiver {
    recorder: TransportFeedbackRecorder,
    interval: Duration,
    next: Option<Instant>,
    /// When the last feedback went out.
    last_sent: Option<Instant>,
    pending: VecDeque<TransportFeedback>,
}

impl GccTwccReceiver {
    pub fn new(config: &GccTwccConfig) -> Self {
        GccTwccReceiver {
            recorder: TransportFeedbackRecorder::new(),
            interval: config.feedback_interval,
            next: None,
            last_sent: None,
            pending: VecDeque::new(),
        }
    }
}

impl Receiver for GccTwccReceiver {
    type Feedback = TransportFeedback;
    type Fields = ();

    /// The transport-wide sequence number is the flow's packet number, 16 bits of it as on the
    /// wire.
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, _fields: &()) {
        self.recorder.on_packet(packet.seq as u16, now);
        if self.next.is_none() {
            // Every interval while packets come (libwebrtc's periodic task); the first an
            // interval after the first packet.
            self.next = Some(
                self.last_sent
                    .map_or(now + self.interval, |t| (t + self.interval).max(now)),
            );
        }
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<TransportFeedback> {
        self.pending.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.next.is_some_and(|t| t <= now) {
            self.pending.extend(self.recorder.take_feedback());
            // An idle receiver sends nothing: the next report is scheduled by the next packet.
            self.next = None;
            self.last_sent = Some(now);
        }
    }
}

/// `SendSideBandwidthEstimation`'s `kLimitNumPackets`: the loss fraction is computed over at
/// least this many reported packets.
const LOSS_MIN_PACKETS: u64 = 20;

/// `gcc-twcc`'s sender: the delay-based estimator on transport-wide feedback and the loss-based
/// controller.
#[derive(Clone, Debug)]
pub struct GccTwccSender {
    loss: GccSender,
    start_rate: Bitrate,
    adapter: FeedbackAdapter,
    /// What the last feedback reported (kept for its allocation).
    reported: Vec<PacketFeedback>,
    delay: DelayDetector,
    rate_control: AimdRateControl,
    acked: RateCounter,
    /// The latest arrival added to `acked` (receiver clock).
    acked_until: Option<Instant>,
    delay_based: Option<Bitrate>,
    loss_expected: u64,
    loss_lost: u64,
    rtt: Option<Duration>,
    feedbacks: u64,
}

impl GccTwccSender {
    pub fn new(config: &GccTwccConfig) -> Self {
        GccTwccSender {
            loss: GccSender::new(&config.loss_config()),
            start_rate: config.call.start,
            adapter: FeedbackAdapter::new(),
            reported: Vec::new(),
            delay: DelayDetector::new(config.interval, config.threshold),
            rate_control: AimdRateControl::new(config.aimd),
            acked: RateCounter::new(config.rate_window.as_millis().max(1)),
            acked_until: None,
            delay_based: None,
            loss_expected: 0,
            loss_lost: 0,
            rtt: None,
            feedbacks: 0,
        }
    }

    /// A = min(loss-based, delay-based), at least the minimum.
    pub fn target(&self) -> Bitrate {
        self.loss.target()
    }

    /// The delay-based estimate, once feedback has produced one.
    pub fn delay_based_rate(&self) -> Option<Bitrate> {
        self.delay_based
    }

    /// The loss-based rate A_s.
    pub fn loss_based_rate(&self) -> Bitrate {
        self.loss.loss_based_rate()
    }

    /// The over-use detector's state.
    pub fn usage(&self) -> BandwidthUsage {
        self.delay.state()
    }

    /// The last RTT measured (feedback arrival − send time of the newest packet it acknowledges).
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt
    }

    /// Feedback messages taken into account.
    pub fn feedbacks(&self) -> u64 {
        self.feedbacks
    }

    fn on_transport_feedback(&mut self, now: Instant, fb: &TransportFeedback) {
        let mut reported = std::mem::take(&mut self.reported);
        self.adapter.adapt(fb, &mut reported);
        let mut acked: Vec<(Instant, SentPacket)> = reported
            .iter()
            .filter_map(|p| Some((p.arrival?, p.sent)))
            .collect();
        let expected = reported.len() as u64;
        let lost = reported.iter().filter(|p| !p.received).count() as u64;
        let newest = reported.iter().rev().find(|p| p.arrival.is_some());
        let newest = newest.map(|p| p.sent.send);
        self.reported = reported;
        if expected == 0 {
            return;
        }
        self.feedbacks += 1;
        if let Some(send) = newest {
            let rtt = now.saturating_duration_since(send);
            self.rtt = Some(rtt);
            self.loss.set_rtt(rtt);
        }
        if self.feedbacks == 1 {
            // libwebrtc `DelayBasedBwe::SetStartBitrate`.
            self.rate_control.set_estimate(self.start_rate, now);
        }
        self.delay_based_update(now, &mut acked);
        self.loss_update(now, expected, lost);
    }

    /// The delay-based estimator on the acknowledged packets.
    fn delay_based_update(&mut self, now: Instant, acked: &mut [(Instant, SentPacket)]) {
        acked.sort_by_key(|&(at, p)| (at, p.send));
        for &(at, p) in acked.iter() {
            // Arrivals are added in non-decreasing order (a late one counts at the latest).
            let at_rate = self.acked_until.map_or(at, |u| u.max(at));
            self.acked.add(p.size, at_rate);
            self.acked_until = Some(at_rate);
            if !p.audio {
                self.delay.on_packet(p.send, at, p.size);
            }
        }
        let acked_rate = self.acked_until.and_then(|u| self.acked.rate(u));
        let update = if self.delay.state() == BandwidthUsage::Overusing {
            acked_rate.is_some_and(|r| self.rate_control.time_to_reduce_further(now, r))
        } else {
            true
        };
        if update {
            if let Some(r) = self
                .rate_control
                .update(self.delay.state(), acked_rate, now)
            {
                self.delay_based = Some(r);
                self.loss.set_delay_based_rate(r);
            }
        }
    }

    /// Eq. (1) on the fraction lost over at least [`LOSS_MIN_PACKETS`] reported packets.
    fn loss_update(&mut self, now: Instant, expected: u64, lost: u64) {
        self.loss_expected += expected;
        self.loss_lost += lost;
        if self.loss_expected >= LOSS_MIN_PACKETS {
            let f = self.loss_lost as f64 / self.loss_expected as f64;
            self.loss.on_fraction_lost(now, f);
            self.loss_expected = 0;
            self.loss_lost = 0;
        }
    }
}

impl Sender for GccTwccSender {
    type Feedback = TransportFeedback;
    type Fields = ();

    fn on_packet_sent(&mut self, _now: Instant, packet: &DataHeader, _ctx: &SendContext) {
        self.adapter
            .on_sent(packet.seq, SentPacket::of(packet, None));
    }

    fn on_feedback(&mut self, now: Instant, feedback: &TransportFeedback) {
        self.on_transport_feedback(now, feedback);
    }

    fn allowance(&self, now: Instant) -> Allowance {
        Sender::allowance(&self.loss, now)
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.target()),
            window: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Content, Ecn};
    use crate::units::DataSize;
    use crate::wire::{Feedback, Message};

    /// A sender and receiver over a synthetic path: packets of 1200 bytes at the target rate,
    /// through a bottleneck whose capacity `capacity(t)` gives, 20 ms each way.
    struct Path {
        sender: GccTwccSender,
        receiver: GccTwccReceiver,
        seq: u64,
        credit: f64,
        /// When the bottleneck is free again.
        busy_until: Instant,
        in_flight: VecDeque<(Instant, DataHeader)>,
        feedback: VecDeque<(Instant, Feedback)>,
        /// Deliver feedback to the sender?
        deliver: bool,
        max_delay: Duration,
    }

    const ONE_WAY: Duration = Duration::from_millis(20);

    impl Path {
        fn new(deliver: bool) -> Self {
            let c = GccTwccConfig::default();
            Path {
                sender: GccTwccSender::new(&c),
                receiver: GccTwccReceiver::new(&c),
                seq: 0,
                credit: 0.0,
                busy_until: Instant::ZERO,
                in_flight: VecDeque::new(),
                feedback: VecDeque::new(),
                deliver,
                max_delay: Duration::ZERO,
            }
        }

        /// Runs 1-ms steps from `from` to `to` with the bottleneck at `capacity`.
        fn run(&mut self, from: Duration, to: Duration, capacity: Bitrate) {
            let mut t = Instant::ZERO + from;
            while t < Instant::ZERO + to {
                self.credit += self.sender.target().bps() as f64 / 8.0 / 1000.0;
                while self.credit >= 1200.0 {
                    self.credit -= 1200.0;
                    let h = DataHeader {
                        seq: self.seq,
                        byte_seq: 1200 * self.seq,
                        send_time: t,
                        size: DataSize::from_bytes(1200),
                        content: Content::Video {
                            frame: 0,
                            last: false,
                            key: false,
                        },
                        ecn: Ecn::NotEct,
                        fields: Default::default(),
                    };
                    self.seq += 1;
                    self.sender.on_packet_sent(t, &h, &SendContext::default());
                    let start = self.busy_until.max(t);
                    let done = start + Duration::from_secs_f64(9600.0 / capacity.bps() as f64);
                    self.busy_until = done;
                    self.max_delay = self.max_delay.max(done - t);
                    self.in_flight.push_back((done + ONE_WAY, h));
                }
                while self.in_flight.front().is_some_and(|(at, _)| *at <= t) {
                    let (at, h) = self.in_flight.pop_front().unwrap();
                    self.receiver.on_packet_received(at, &h, &());
                }
                if self.receiver.poll_timeout().is_some_and(|d| d <= t) {
                    self.receiver.on_timeout(t);
                }
                while let Some(m) = self.receiver.poll_feedback(t) {
                    self.feedback.push_back((t + ONE_WAY, Feedback::encode(&m)));
                }
                while self.feedback.front().is_some_and(|(at, _)| *at <= t) {
                    let (_, fb) = self.feedback.pop_front().unwrap();
                    if self.deliver {
                        let m = TransportFeedback::parse(fb.as_bytes()).unwrap();
                        self.sender.on_feedback(t, &m);
                    }
                }
                t += Duration::from_millis(1);
            }
        }
    }

    fn s(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    #[test]
    fn ramps_on_an_uncongested_path() {
        let mut p = Path::new(true);
        p.run(s(0), s(45), Bitrate::from_kbps(20_000));
        let target = p.sender.target();
        // Both controllers ramp from 300 kbit/s (eq. 1: 5 %/s; AIMD: 8 %/s) to the encoder's
        // 2.5 Mbit/s ceiling without over-use.
        assert!(target >= Bitrate::from_kbps(1800), "{target}");
        assert!(p.sender.delay_based_rate().unwrap() >= target);
        assert_ne!(p.sender.usage(), BandwidthUsage::Overusing);
        // The RTT is the two one-way delays plus at most a feedback interval and a step.
        let rtt = p.sender.rtt().unwrap();
        assert!(
            rtt >= Duration::from_millis(40) && rtt <= Duration::from_millis(92),
            "{rtt:?}"
        );
        // 50-ms feedback: about 20 a second.
        assert!(
            (850..=910).contains(&p.sender.feedbacks()),
            "{}",
            p.sender.feedbacks()
        );
    }

    #[test]
    fn backs_off_on_a_delay_ramp() {
        let mut p = Path::new(true);
        p.run(s(0), s(45), Bitrate::from_kbps(20_000));
        let before = p.sender.target();
        assert!(before >= Bitrate::from_kbps(1800), "{before}");
        // The capacity falls to 800 kbit/s: the queue grows, the trendline sees the delay ramp,
        // and the delay-based rate drops below the capacity within 2 s; no loss is involved.
        p.max_delay = Duration::ZERO;
        p.run(s(45), s(47), Bitrate::from_kbps(800));
        let after = p.sender.target();
        assert!(after <= Bitrate::from_kbps(800), "{before} → {after}");
        assert_eq!(
            p.sender.loss_based_rate(),
            after.max(p.sender.loss_based_rate())
        );
        // Then it keeps the queue short: over the next 20 s, the target stays near the
        // capacity and the delay drains.
        p.run(s(47), s(67), Bitrate::from_kbps(800));
        let t = p.sender.target();
        assert!(
            t >= Bitrate::from_kbps(400) && t <= Bitrate::from_kbps(900),
            "{t}"
        );
        p.max_delay = Duration::ZERO;
        p.run(s(67), s(77), Bitrate::from_kbps(800));
        assert!(
            p.max_delay < Duration::from_millis(400),
            "{:?}",
            p.max_delay
        );
    }

    /// Without the feedback the sender stays at its start rate: the test fails if feedback is
    /// ignored.
    #[test]
    fn feedback_moves_the_target() {
        let mut with = Path::new(true);
        let mut without = Path::new(false);
        with.run(s(0), s(15), Bitrate::from_kbps(20_000));
        without.run(s(0), s(15), Bitrate::from_kbps(20_000));
        assert_eq!(without.sender.target(), Bitrate::from_kbps(300));
        assert!(without.sender.delay_based_rate().is_none());
        assert!(with.sender.target() > Bitrate::from_kbps(450));
        assert!(with.sender.delay_based_rate().is_some());
    }

    #[test]
    fn losses_in_the_feedback_decrease_the_loss_based_rate() {
        let c = GccTwccConfig::default();
        let mut sender = GccTwccSender::new(&c);
        for seq in 0..40u64 {
            let h = DataHeader {
                seq,
                send_time: Instant::from_millis(seq),
                size: DataSize::from_bytes(1200),
                ..Default::default()
            };
            sender.on_packet_sent(h.send_time, &h, &SendContext::default());
        }
        // Every other packet lost: f = 0.5 → A_s × 0.75.
        let fb = TransportFeedback {
            base_seq: 0,
            reference: 0,
            fb_count: 0,
            deltas: (0..40).map(|k| (k % 2 == 0).then_some(8)).collect(),
        };
        sender.on_feedback(Instant::from_millis(100), &fb);
        assert_eq!(sender.loss_based_rate(), Bitrate::from_kbps(225));
        assert_eq!(sender.target(), Bitrate::from_kbps(225));
        // The same feedback again covers nothing unsent or unreported: ignored.
        sender.on_feedback(Instant::from_millis(1500), &fb);
        assert_eq!(sender.feedbacks(), 1);
    }

    #[test]
    fn parameters_are_cross_checked() {
        use crate::scheme::SchemeConfig;
        let e = "gcc-twcc:min-kbps=3000"
            .parse::<SchemeConfig>()
            .unwrap_err();
        assert!(e.to_string().contains("min-kbps"), "{e}");
        let c: SchemeConfig = "gcc-twcc:max-kbps=4000,feedback-interval-ms=100"
            .parse()
            .unwrap();
        assert_eq!(
            c.to_string(),
            "gcc-twcc:max-kbps=4000,feedback-interval-ms=100"
        );
        assert!(
            "gcc-twcc:feedback-interval-ms=0"
                .parse::<SchemeConfig>()
                .is_err()
        );
    }

    #[test]
    fn sequence_numbers_and_reference_times_unwrap() {
        let c = GccTwccConfig::default();
        let mut sender = GccTwccSender::new(&c);
        for seq in 65_530..65_560u64 {
            let h = DataHeader {
                seq,
                send_time: Instant::from_millis(seq - 65_000),
                size: DataSize::from_bytes(1200),
                ..Default::default()
            };
            sender.on_packet_sent(h.send_time, &h, &SendContext::default());
        }
        assert_eq!(sender.adapter.unwrap_seq(65_535), Some(65_535));
        assert_eq!(sender.adapter.unwrap_seq(3), Some(65_539));
        assert_eq!(
            sender.adapter.unwrap_reference((1 << 24) - 1),
            (1 << 24) - 1
        );
        assert_eq!(sender.adapter.unwrap_reference(1), (1 << 24) + 1);
        // A feedback whose base wrapped acknowledges the packets past 2^16.
        let fb = TransportFeedback {
            base_seq: 65_534,
            reference: 2,
            fb_count: 0,
            deltas: vec![Some(1); 10],
        };
        sender.on_feedback(Instant::from_millis(700), &fb);
        assert_eq!(sender.feedbacks(), 1);
        assert!(sender.adapter.outstanding().all(|s| s >= 65_544));
    }
}
