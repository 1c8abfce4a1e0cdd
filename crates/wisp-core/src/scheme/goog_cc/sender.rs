//! The sender of `gcc`: libwebrtc's `GoogCcNetworkController`
//! (`modules/congestion_controller/goog_cc/goog_cc_network_control.cc`) wiring the pieces of
//! this module together.
//!
//! On each packet sent: the feedback adapter remembers it (with its probe cluster), the ALR
//! detector spends its budget, the prober counts it. On each transport-wide feedback, in
//! arrival order (transport-wide or RFC 8888 feedback, matched by the same adapter: [`super::feedback`]): the acknowledged-bitrate estimator, the probe-result estimator for probe
//! packets, and the delay-based estimator (grouping, trendline, over-use detector) take each
//! received packet; then `DelayBasedBwe::MaybeUpdateEstimate`:
//!
//! * over-use: decrease on the acknowledged rate when `TimeToReduceFurther` allows, or, before
//!   any acknowledged rate, halve the estimate at most every 200 ms;
//! * otherwise a probe result sets the estimate; otherwise AIMD updates it;
//!
//! the loss-based controller takes the feedback ([`super::loss`]), the target is updated, the
//! ALR detector and the probe controller learn it, and a probe is requested after a recovery
//! from over-use or a back-off in ALR; then the congestion window is updated
//! ([`super::cwnd`]). On time: the probe controller's periodic work (the end of the wait for a
//! result, ALR probes), probe clusters move to the prober, and every 25 ms
//! (`OnProcessInterval`) the congestion window is updated.
//!
//! The round-trip times are libwebrtc's: AIMD's is the mean of the last 32 feedbacks' largest
//! feedback RTTs (`OnRttUpdate`), the loss controller's the feedback's smallest RTT less each
//! packet's wait at the receiver (`UpdateRtt`).
//!
//! The encoder is given the target after the congestion window's pushback and frame dropping
//! ([`super::cwnd::encoder_rate`]); the pacer paces at 2.5 × the target before it. The
//! pushback is recomputed where libwebrtc's `MaybeTriggerOnNetworkChanged` runs: on every
//! packet sent, every process interval and every feedback that updated the estimate.

use super::GoogCcConfig;
use super::acked::AckedBitrate;
use super::alr::AlrDetector;
use super::cwnd::{CongestionWindow, FeedbackRtts};
use super::feedback::GoogCcFeedback;
use super::loss::{LossInput, LossSample, SendSideBwe};
use super::pacer::Prober;
use super::probe_controller::{ProbeController, ProbeControllerConfig};
use super::probe_estimator::ProbeBitrateEstimator;
use crate::ccfb::CongestionControlFeedback;
use crate::controller::{Allowance, ExtraPacket, SendContext, Sender, SenderStats};
use crate::packet::{Content, DataHeader};
use crate::scheme::gcc::adapter::{FeedbackAdapter, PacketFeedback, SentPacket};
use crate::scheme::gcc::delay::DelayDetector;
use crate::scheme::gcc::{AimdRateControl, BandwidthUsage, ThresholdConfig};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use crate::wire::TransportFeedback;

/// Before an acknowledged rate exists, over-use halves the estimate at most this often
/// (`InitialTimeToReduceFurther`).
const INITIAL_REDUCE_INTERVAL: Duration = Duration::from_millis(200);
/// The controller's process interval (`GoogCcNetworkControllerFactory::GetProcessInterval`).
const PROCESS_INTERVAL: Duration = Duration::from_millis(25);

/// What one feedback did to the delay-based estimate.
#[derive(Clone, Copy, Debug, Default)]
struct DelayResult {
    updated: Option<Bitrate>,
    probe: bool,
    recovered_from_overuse: bool,
}

/// `gcc`'s sender.
#[derive(Clone, Debug)]
pub struct GoogCcSender {
    config: GoogCcConfig,
    mtu: DataSize,
    start: Bitrate,
    pace_factor: f64,
    adapter: FeedbackAdapter,
    reported: Vec<PacketFeedback>,
    delay: DelayDetector,
    aimd: AimdRateControl,
    acked: AckedBitrate,
    probe_results: ProbeBitrateEstimator,
    probes: ProbeController,
    prober: Prober,
    alr: AlrDetector,
    alr_ended_seen: Option<Instant>,
    bwe: SendSideBwe,
    probing: bool,
    no_increase_in_alr: bool,
    started: bool,
    rtt: Option<Duration>,
    feedbacks: u64,
    probe_packets: u64,
    last_probe_result: Option<Bitrate>,
    last_initial_halving: Option<Instant>,
    /// The largest RTTs of recent feedbacks.
    rtts: FeedbackRtts,
    /// The congestion window (`None`: `cwnd-queue-ms=0`).
    cwnd: Option<CongestionWindow>,
    next_process: Option<Instant>,
}

impl GoogCcSender {
    pub fn new(config: &GoogCcConfig, mtu: DataSize) -> Self {
        let probe_config = ProbeControllerConfig {
            max_probe: config.max_probe,
            ..ProbeControllerConfig::default()
        };
        let bwe = SendSideBwe::new(
            config.loss,
            config.call.start,
            config.call.min,
            config.max_estimate,
        );
        let mut alr = AlrDetector::default();
        alr.set_estimate(config.call.start);
        GoogCcSender {
            config: config.clone(),
            mtu,
            start: config.call.start,
            pace_factor: config.call.pace_factor,
            adapter: FeedbackAdapter::new(),
            reported: Vec::new(),
            delay: DelayDetector::new(config.interval, ThresholdConfig::LIBWEBRTC),
            aimd: AimdRateControl::new(config.aimd),
            acked: AckedBitrate::default(),
            probe_results: ProbeBitrateEstimator::default(),
            probes: ProbeController::new(probe_config),
            prober: Prober::new(mtu, config.padding),
            alr,
            alr_ended_seen: None,
            bwe,
            probing: config.probing,
            no_increase_in_alr: config.no_increase_in_alr,
            started: false,
            rtt: None,
            feedbacks: 0,
            probe_packets: 0,
            last_probe_result: None,
            last_initial_halving: None,
            rtts: FeedbackRtts::default(),
            cwnd: (!config.cwnd_queue.is_zero()).then(|| CongestionWindow::new(config.cwnd_queue)),
            next_process: None,
        }
    }

    /// The rate the encoder is asked for: the target after the congestion window's pushback
    /// (the target itself before the first pushback and without the window).
    pub fn encoder_target(&self) -> Bitrate {
        self.cwnd
            .as_ref()
            .and_then(CongestionWindow::encoder)
            .unwrap_or_else(|| self.target())
    }

    /// The congestion window, once there is one.
    pub fn congestion_window(&self) -> Option<DataSize> {
        self.cwnd.as_ref().and_then(CongestionWindow::window)
    }

    /// `MaybeTriggerOnNetworkChanged`'s pushback: the encoder's rate for the current target.
    fn update_pushback(&mut self) {
        let target = self.target();
        if let Some(c) = self.cwnd.as_mut() {
            c.push_back(target, self.adapter.in_flight(), self.config.call.min);
        }
    }

    /// `UpdateCongestionWindowSize` with the current target; nothing before the first RTT.
    fn update_window(&mut self) {
        let target = self.target();
        if let (Some(c), Some(min_rtt)) = (self.cwnd.as_mut(), self.rtts.min()) {
            c.update_window(target, min_rtt);
        }
    }

    /// The target rate (the estimate the encoder and the pacer follow).
    pub fn target(&self) -> Bitrate {
        self.bwe.target()
    }

    /// The delay-based estimate, once there is one.
    pub fn delay_based(&self) -> Option<Bitrate> {
        self.aimd.estimate()
    }

    /// The loss-based controller's rate.
    pub fn loss_based(&self) -> Bitrate {
        self.bwe.loss_based()
    }

    /// The acknowledged bitrate.
    pub fn acked_bitrate(&self) -> Option<Bitrate> {
        self.acked.bitrate()
    }

    /// The last probe result.
    pub fn last_probe_result(&self) -> Option<Bitrate> {
        self.last_probe_result
    }

    /// Probe and padding packets sent.
    pub fn probe_packets(&self) -> u64 {
        self.probe_packets
    }

    /// Whether the sender is in an application-limited region.
    pub fn in_alr(&self) -> bool {
        self.alr.start().is_some()
    }

    /// The path changed (libwebrtc `OnNetworkRouteChange` with its safe reset, which Chrome
    /// runs): every estimator starts over from the smaller of the configured start and the
    /// acknowledged rate (the target if there is none yet), and probes again from there. What
    /// is in flight stays in the feedback adapter. The simulator has no route changes; a
    /// transport that sees one calls this.
    pub fn on_route_change(&mut self) {
        let rate = self.acked.bitrate().unwrap_or_else(|| self.target());
        let mut config = self.config.clone();
        config.call.start = rate.min(self.config.call.start);
        let mut fresh = GoogCcSender::new(&config, self.mtu);
        fresh.config = self.config.clone();
        fresh.adapter = std::mem::take(&mut self.adapter);
        fresh.prober = self.prober.clone();
        fresh.prober.restart();
        fresh.probe_packets = self.probe_packets;
        fresh.feedbacks = self.feedbacks;
        *self = fresh;
    }

    /// Moves what the probe controller requested to the prober.
    fn queue_probes(&mut self, now: Instant) {
        for r in self.probes.take_requests() {
            if self.probing {
                self.prober.add(now, r);
            }
        }
    }

    /// Tells the ALR detector, the probe controller and the acknowledged-rate estimator of the
    /// current target and ALR state.
    fn share_state(&mut self, now: Instant) {
        let target = self.target();
        self.alr.set_estimate(target);
        if let Some(ended) = self.alr.ended().filter(|&e| Some(e) != self.alr_ended_seen) {
            self.alr_ended_seen = Some(ended);
            self.acked.set_alr_ended(ended);
        }
        self.probes.set_alr(self.alr.start(), self.alr.ended());
        self.probes.set_estimate(now, target);
    }

    fn on_transport_feedback(&mut self, now: Instant, fb: &TransportFeedback) {
        let mut reported = std::mem::take(&mut self.reported);
        self.adapter.adapt(fb, &mut reported);
        if !reported.is_empty() {
            self.feedbacks += 1;
            self.on_reported(now, &mut reported);
        }
        self.reported = reported;
    }

    /// RFC 8888 feedback: the same per-packet results through the same adapter.
    fn on_ccfb(&mut self, now: Instant, fb: &CongestionControlFeedback) {
        let mut reported = std::mem::take(&mut self.reported);
        self.adapter.adapt_ccfb(fb, &mut reported);
        if !reported.is_empty() {
            self.feedbacks += 1;
            self.on_reported(now, &mut reported);
        }
        self.reported = reported;
    }

    /// The feedback's RTTs (`OnTransportPacketsFeedback`): the largest feedback RTT to the
    /// window's record and its mean to AIMD; the smallest less each packet's wait at the
    /// receiver to the loss controller.
    fn on_feedback_rtts(&mut self, now: Instant, reported: &[PacketFeedback]) {
        let received = reported
            .iter()
            .filter_map(|p| Some((p.sent.send, p.arrival?)));
        let Some(last_arrival) = received.clone().map(|(_, at)| at).max() else {
            return;
        };
        let (mut max_rtt, mut min_rtt) = (Duration::ZERO, Duration::MAX);
        for (send, at) in received {
            let rtt = now.saturating_duration_since(send);
            max_rtt = max_rtt.max(rtt);
            min_rtt = min_rtt.min(rtt.saturating_sub(last_arrival.saturating_duration_since(at)));
        }
        self.rtt = Some(min_rtt);
        self.rtts.push(max_rtt);
        if let Some(mean) = self.rtts.mean() {
            self.aimd.set_rtt(mean);
        }
    }

    fn on_reported(&mut self, now: Instant, reported: &mut [PacketFeedback]) {
        self.on_feedback_rtts(now, reported);
        let previous = self.delay.state();
        let samples: Vec<LossSample> = reported
            .iter()
            .map(|p| LossSample {
                size: p.sent.size,
                send_time: p.sent.send,
                received: p.arrival.filter(|_| p.received),
            })
            .collect();
        reported.sort_by_key(|p| (p.arrival, p.sent.send));
        for p in reported.iter() {
            if let Some(at) = p.arrival {
                self.on_received(p.sent, at);
            }
        }
        let probe = self.probe_results.take_last();
        let before = self.delay_based();
        let result = self.delay_based_update(now, probe, previous);
        if let Some(rate) = result.updated {
            self.bwe.set_delay_based(rate);
            if result.probe {
                self.bwe.set_send_bitrate(rate);
            }
        }
        let input = LossInput {
            packets: &samples,
            delay_based: self.delay_based(),
            acked: self.acked.bitrate(),
            in_alr: self.in_alr(),
            rtt: self.rtt.unwrap_or(Duration::ZERO),
        };
        self.bwe.on_feedback(now, input);
        self.share_state(now);
        let backoff_in_alr = self.in_alr()
            && result
                .updated
                .is_some_and(|r| before.is_some_and(|b| r < b));
        if result.updated.is_some() {
            self.update_pushback();
        }
        if result.recovered_from_overuse || backoff_in_alr {
            self.probes.request_probe(now);
        }
        self.queue_probes(now);
        self.update_window();
    }

    /// One received packet through the estimators.
    fn on_received(&mut self, sent: SentPacket, at: Instant) {
        self.acked.on_packet(sent.send, at, sent.size);
        if let Some(goal) = sent.probe.and_then(|id| self.prober.goal(id)) {
            if let Some(r) = self
                .probe_results
                .on_probe_packet(goal, sent.send, at, sent.size)
            {
                self.last_probe_result = Some(r);
            }
        }
        if !sent.audio {
            self.delay.on_packet(sent.send, at, sent.size);
        }
    }

    /// `DelayBasedBwe::MaybeUpdateEstimate`.
    fn delay_based_update(
        &mut self,
        now: Instant,
        probe: Option<Bitrate>,
        previous: BandwidthUsage,
    ) -> DelayResult {
        let state = self.delay.state();
        let acked = self.acked.bitrate();
        let mut result = DelayResult::default();
        self.aimd
            .set_hold_increase(self.no_increase_in_alr && self.in_alr());
        if state == BandwidthUsage::Overusing {
            match acked {
                Some(r) if self.aimd.time_to_reduce_further(now, r) => {
                    result.updated = self.aimd.update(state, Some(r), now);
                }
                None if self.last_initial_halving.is_none_or(|t| {
                    now.saturating_duration_since(t) >= INITIAL_REDUCE_INTERVAL
                }) =>
                {
                    let half = self.aimd.estimate().map(|e| e.mul_f64(0.5));
                    if let Some(half) = half {
                        self.aimd.set_estimate(half, now);
                        self.last_initial_halving = Some(now);
                        result.updated = Some(half);
                    }
                }
                _ => {}
            }
        } else if let Some(p) = probe {
            self.aimd.set_estimate(p, now);
            result.updated = self.aimd.estimate();
            result.probe = true;
        } else {
            result.updated = self.aimd.update(state, acked, now);
            result.recovered_from_overuse =
                previous == BandwidthUsage::Underusing && state == BandwidthUsage::Normal;
        }
        result
    }
}

impl Sender for GoogCcSender {
    type Feedback = GoogCcFeedback;
    type Fields = ();

    fn on_packet_sent(&mut self, now: Instant, packet: &DataHeader, _ctx: &SendContext) {
        let media = packet.content != Content::Probe;
        if !media {
            self.probe_packets += 1;
        }
        let probe = self.prober.on_sent(now, packet.size, media);
        self.adapter
            .on_sent(packet.seq, SentPacket::of(packet, probe));
        self.alr.on_sent(now, packet.size);
        self.update_pushback();
    }

    fn on_feedback(&mut self, now: Instant, feedback: &GoogCcFeedback) {
        match feedback {
            GoogCcFeedback::Twcc(fb) => self.on_transport_feedback(now, fb),
            GoogCcFeedback::Rfc8888(fb) => self.on_ccfb(now, fb),
        }
    }

    fn on_time(&mut self, now: Instant) {
        if !self.started {
            self.started = true;
            // libwebrtc `DelayBasedBwe::SetStartBitrate`, then the initial probes.
            self.aimd.set_estimate(self.start, now);
            self.probes.start(now, self.start);
        }
        self.probes.set_alr(self.alr.start(), self.alr.ended());
        self.probes.process(now);
        self.queue_probes(now);
        let next = *self.next_process.get_or_insert(now);
        if now >= next {
            self.next_process =
                Some(next.max(now.saturating_sub(PROCESS_INTERVAL)) + PROCESS_INTERVAL);
            self.update_window();
            self.update_pushback();
        }
    }

    fn allowance(&self, _now: Instant) -> Allowance {
        Allowance::Rate {
            target: self.encoder_target(),
            pacing: self.target().mul_f64(self.pace_factor),
        }
    }

    fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket> {
        self.prober.poll(now).map(|size| ExtraPacket {
            size,
            content: Content::Probe,
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.prober.next_due()
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.target()),
            window: self.congestion_window(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// 300 ms of a call from `from`, the first packet numbered `seq`: one media packet, then
    /// the probe clusters through `poll_extra`; every packet crosses a bottleneck of `kbps` 20 ms
    /// away. `(header, arrival)`.
    pub(super) fn probe_phase(
        s: &mut GoogCcSender,
        from: Instant,
        seq: u64,
        kbps: u64,
    ) -> Vec<(DataHeader, Instant)> {
        let mut out: Vec<(DataHeader, Instant)> = vec![];
        let mut link_free = from;
        let mut send = |s: &mut GoogCcSender, t: Instant, size: DataSize, content| {
            let h = DataHeader {
                seq: seq + out.len() as u64,
                send_time: t,
                size,
                content,
                ..Default::default()
            };
            s.on_packet_sent(t, &h, &SendContext::default());
            link_free = link_free.max(t + Duration::from_millis(20))
                + size.transmit_time(Bitrate::from_kbps(kbps));
            out.push((h, link_free));
        };
        s.on_time(from);
        let video = Content::Video {
            frame: 0,
            last: true,
            key: true,
        };
        send(s, from, DataSize::from_bytes(1000), video);
        let (mut t, end) = (from, from + Duration::from_millis(300));
        while t < end {
            s.on_time(t);
            while let Some(x) = s.poll_extra(t) {
                send(s, t, x.size, x.content);
            }
            let next = t + Duration::from_micros(1);
            t = s.poll_timeout().map_or(end, |d| d.max(next));
        }
        out
    }

    /// The feedback on `packets`, arrivals in 250-µs ticks from the reference time 0.
    pub(super) fn feedback(packets: &[(DataHeader, Instant)]) -> GoogCcFeedback {
        let mut prev = 0i64;
        let deltas = packets
            .iter()
            .map(|(_, at)| {
                let tick = (at.as_nanos() / 250_000) as i64;
                let d = tick - prev;
                prev = tick;
                Some(d as i16)
            })
            .collect();
        GoogCcFeedback::Twcc(TransportFeedback {
            base_seq: packets[0].0.seq as u16,
            reference: 0,
            fb_count: 0,
            deltas,
        })
    }

    #[test]
    fn initial_probes_leave_as_extra_packets_and_their_result_sets_the_target() {
        let mut s = GoogCcSender::new(&GoogCcConfig::default(), DataSize::from_bytes(1200));
        let packets = probe_phase(&mut s, Instant::ZERO, 0, 1000);
        // Two 100-ms clusters at 900 and 1800 kbit/s: ~11 and ~22 kB of probes.
        let probe_bytes: u64 = packets
            .iter()
            .filter(|(h, _)| h.content == Content::Probe)
            .map(|(h, _)| h.size.bytes())
            .sum();
        assert!((32_000..36_000).contains(&probe_bytes), "{probe_bytes}");
        assert_eq!(s.probe_packets() as usize, packets.len() - 1);
        assert_eq!(s.target(), Bitrate::from_kbps(300));
        s.on_feedback(Instant::from_millis(400), &feedback(&packets));
        // The 1800-kbit/s cluster saturates the link: 0.95 × ~1 Mbit/s.
        let result = s.last_probe_result().unwrap().kbps_f64();
        assert!((900.0..1000.0).contains(&result), "{result}");
        assert_eq!(s.target(), s.delay_based().unwrap());
        assert!(s.target().kbps_f64() > 850.0, "{}", s.target());
    }
}

/// libwebrtc `goog_cc_network_control_unittest.cc`, `DetectsHighRateInSafeResetTrial`: on a
/// 200 kbit/s path the estimate comes down to 200 ± 50; the route changes to an 800 kbit/s path
/// and, within a second, probing finds more than 500 kbit/s.
#[cfg(test)]
mod route_change {
    use super::tests::{feedback, probe_phase};
    use super::*;

    #[test]
    fn a_new_path_is_probed_from_the_safe_start() {
        let mut s = GoogCcSender::new(&GoogCcConfig::default(), DataSize::from_bytes(1200));
        let first = probe_phase(&mut s, Instant::ZERO, 0, 200);
        s.on_feedback(Instant::from_millis(900), &feedback(&first));
        let low = s.target().kbps_f64();
        assert!((low - 200.0).abs() <= 50.0, "{low}");
        let t = Instant::from_secs(1);
        s.on_route_change();
        // The safe reset: from min(start, acknowledged rate), not from the 300 kbit/s start.
        let reset = s.target().kbps_f64();
        assert!((reset - 200.0).abs() <= 50.0, "{reset}");
        let second = probe_phase(&mut s, t, first.len() as u64, 800);
        s.on_feedback(t + Duration::from_millis(500), &feedback(&second));
        let high = s.target().kbps_f64();
        println!("200 kbit/s path: {low:.0}; reset to {reset:.0}; 800 kbit/s path: {high:.0}");
        assert!(high > 500.0, "{low} → {high}");
    }
}
