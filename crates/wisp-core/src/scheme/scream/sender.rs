//! SCReAMv2's sender (draft-ietf-ccwg-rfc8298bis-screamv2-00 §4): the record of what was sent
//! (§4.1.1) matched with RFC 8888 feedback (§4.1.2), the RTT and queueing-delay samples, the
//! reference window ([`RefWindow`], §4.2), the send window and pacing (§4.3) and the target
//! bitrate (§4.4).

use super::rate::{MediaRate, pace_bitrate, ref_wnd_overhead, send_window};
use super::window::{Acked, RefWindow};
use super::{EcnMode, ScreamConfig};
use crate::ccfb::CongestionControlFeedback;
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::packet::{Content, DataHeader, Ecn};
use crate::scheme::gcc::adapter::{FeedbackAdapter, PacketFeedback, SentPacket};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use std::collections::VecDeque;

/// The ECN-CE codepoint in an RFC 8888 metric block (RFC 3168 §5).
pub const CE: u8 = 0b11;

/// How long the one-way delay's base is kept (RFC 6817 §2.4.1's BASE_HISTORY: ten one-minute
/// minima).
const BASE_BUCKET: Duration = Duration::from_secs(60);
const BASE_BUCKETS: usize = 10;

/// With bytes in flight and no feedback for this long, what is in flight is taken as lost
/// (wisp's; the draft has no feedback timeout, see the module's deviations).
const FEEDBACK_TIMEOUT: Duration = Duration::from_secs(1);

/// The minimum one-way delay over the last ten minutes (RFC 6817 §2.4.1), on the receiver's
/// clock less the sender's: the clocks need not agree.
#[derive(Clone, Debug, Default)]
struct BaseDelay {
    /// (bucket start, minimum) per minute, newest last.
    buckets: VecDeque<(Instant, f64)>,
}

impl BaseDelay {
    fn update(&mut self, now: Instant, owd: f64) {
        match self.buckets.back_mut() {
            Some((start, min)) if now.saturating_duration_since(*start) < BASE_BUCKET => {
                *min = min.min(owd);
            }
            _ => {
                self.buckets.push_back((now, owd));
                if self.buckets.len() > BASE_BUCKETS {
                    self.buckets.pop_front();
                }
            }
        }
    }

    fn base(&self) -> Option<f64> {
        self.buckets.iter().map(|&(_, m)| m).reduce(f64::min)
    }
}

/// SCReAMv2's sender.
#[derive(Clone, Debug)]
pub struct ScreamSender {
    c: ScreamConfig,
    /// The media's frame period, s (§4.4's frame_period: the call's, known).
    frame_period: f64,
    adapter: FeedbackAdapter,
    window: RefWindow,
    media: MediaRate,
    /// s_rtt (RFC 6298's smoothing), s.
    s_rtt: Option<f64>,
    base: BaseDelay,
    /// The last queueing-delay sample, s.
    qdelay: f64,
    bytes_in_flight: f64,
    max_bytes_in_flight: f64,
    max_bytes_in_flight_prev: f64,
    rtt_started: Option<Instant>,
    /// target_bitrate, bit/s.
    target: f64,
    /// The frame being sent: its number and bytes so far.
    frame: Option<(u32, f64)>,
    /// Since when the bytes in flight wait for feedback (the last feedback, or the first
    /// packet sent after one that left nothing in flight).
    waiting_since: Option<Instant>,
    scratch: Vec<PacketFeedback>,
    feedbacks: u64,
    /// Packets the feedback reported lost.
    pub lost: u64,
    /// Packets the feedback reported ECN-CE-marked.
    pub marked: u64,
}

impl ScreamSender {
    pub fn new(config: &ScreamConfig, fps: u32) -> Self {
        ScreamSender {
            c: config.clone(),
            frame_period: 1.0 / f64::from(fps.max(1)),
            adapter: FeedbackAdapter::new(),
            window: RefWindow::new(config),
            media: MediaRate::default(),
            s_rtt: None,
            base: BaseDelay::default(),
            qdelay: 0.0,
            bytes_in_flight: 0.0,
            max_bytes_in_flight: 0.0,
            max_bytes_in_flight_prev: 0.0,
            rtt_started: None,
            target: config.call.start.bps() as f64,
            frame: None,
            waiting_since: None,
            scratch: Vec::new(),
            feedbacks: 0,
            lost: 0,
            marked: 0,
        }
    }

    /// The ECN codepoint the sender's packets carry (RFC 3168 §5: ECT(0) for classic ECN,
    /// ECT(1) for L4S, RFC 9331; Not-ECT without ECN).
    pub fn ecn_codepoint(&self) -> Ecn {
        match self.c.ecn {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::L4s => Ecn::Ect1,
        }
    }

    /// ref_wnd, bytes.
    pub fn ref_wnd(&self) -> DataSize {
        DataSize::from_bytes(self.window.ref_wnd.round() as u64)
    }

    /// The network congestion control's state (§4.2).
    pub fn window(&self) -> &RefWindow {
        &self.window
    }

    /// The media rate control's compensation (§4.4).
    pub fn media_rate(&self) -> MediaRate {
        self.media
    }

    /// target_bitrate.
    pub fn target_bitrate(&self) -> Bitrate {
        Bitrate::from_bps_f64(self.target)
    }

    pub fn s_rtt(&self) -> Option<Duration> {
        self.s_rtt.map(Duration::from_secs_f64)
    }

    /// The last queueing-delay sample.
    pub fn qdelay(&self) -> Duration {
        Duration::from_secs_f64(self.qdelay)
    }

    pub fn bytes_in_flight(&self) -> DataSize {
        DataSize::from_bytes(self.bytes_in_flight as u64)
    }

    pub fn feedbacks(&self) -> u64 {
        self.feedbacks
    }

    /// pace_bitrate (§4.3.2), times `pace-factor`.
    pub fn pacing(&self) -> Bitrate {
        Bitrate::from_bps_f64(pace_bitrate(&self.c, self.target) * self.c.call.pace_factor)
    }

    /// send_wnd (§4.3.1).
    pub fn send_window(&self) -> DataSize {
        let overhead = ref_wnd_overhead(&self.c, self.window.qdelay_dev_norm);
        let w = send_window(self.window.ref_wnd, overhead, self.bytes_in_flight);
        DataSize::from_bytes(w as u64)
    }

    /// The samples one feedback message gives: the bytes and units acknowledged (§4.1.2), and
    /// from the newest packet received, the RTT and the one-way delay.
    fn acked(
        &mut self,
        now: Instant,
        fb: &CongestionControlFeedback,
    ) -> (Acked, Option<(f64, f64)>) {
        let base = self.adapter.unwrap_seq(fb.begin_seq);
        self.adapter.adapt_ccfb(fb, &mut self.scratch);
        let mut a = Acked::default();
        let mut newest = None;
        for p in &self.scratch {
            let size = p.sent.size.bytes() as f64;
            a.bytes += size;
            if !p.received {
                a.lost = true;
                self.lost += 1;
                continue;
            }
            a.units += 1;
            let block = base.and_then(|b| fb.reports.get(usize::try_from(p.seq - b).ok()?));
            if block.is_some_and(|m| m.ecn() == CE) {
                a.units_ce += 1;
                a.bytes_ce += size;
                self.marked += 1;
            }
            if let (Some(arrival), Some(hold)) = (p.arrival, block.and_then(|m| m.offset())) {
                newest = Some((p.sent.send, arrival, hold));
            }
        }
        let samples = newest.map(|(sent, arrival, hold)| {
            let rtt = now.saturating_duration_since(sent).saturating_sub(hold);
            let owd = (arrival.as_nanos() as f64 - sent.as_nanos() as f64) / 1e9;
            (rtt.as_secs_f64(), owd)
        });
        (a, samples)
    }

    /// Rolls the per-RTT maxima of the bytes in flight (§4.1.1) and the loss-event rate.
    fn roll_rtt(&mut self, now: Instant, s_rtt: f64) {
        let start = *self.rtt_started.get_or_insert(now);
        if now.saturating_duration_since(start).as_secs_f64() >= s_rtt {
            self.max_bytes_in_flight_prev = self.max_bytes_in_flight;
            self.max_bytes_in_flight = self.bytes_in_flight;
            self.window.on_rtt();
            self.rtt_started = Some(now);
        }
    }

    fn on_ccfb(&mut self, now: Instant, fb: &CongestionControlFeedback) {
        let (acked, samples) = self.acked(now, fb);
        self.bytes_in_flight = self.adapter.in_flight().bytes() as f64;
        self.waiting_since = (self.bytes_in_flight > 0.0).then_some(now);
        self.feedbacks += 1;
        let qdelay = samples.map(|(rtt, owd)| {
            self.s_rtt = Some(self.s_rtt.map_or(rtt, |s| 0.875 * s + 0.125 * rtt));
            self.base.update(now, owd);
            (owd - self.base.base().unwrap_or(owd)).max(0.0)
        });
        if let Some(q) = qdelay {
            self.qdelay = q;
        }
        let Some(s_rtt) = self.s_rtt else {
            return;
        };
        self.roll_rtt(now, s_rtt);
        let flight = (
            self.max_bytes_in_flight.max(self.max_bytes_in_flight_prev),
            self.max_bytes_in_flight_prev,
        );
        let at_max = self.target >= self.c.call.max.bps() as f64;
        let t = now.as_nanos() as f64 / 1e9;
        self.window
            .on_feedback(t, &acked, qdelay, s_rtt, flight, at_max);
        self.target = self
            .media
            .target_bitrate(&self.c, self.window.ref_wnd, s_rtt);
    }
}

impl Sender for ScreamSender {
    type Feedback = CongestionControlFeedback;
    type Fields = ();

    /// §4.2.1: ECT(1) in the L4S mode, ECT(0) in the classic one, else Not-ECT.
    fn ecn(&self) -> Ecn {
        self.ecn_codepoint()
    }

    /// §4.1.1: the packet joins the record of what is in flight; its frame's size and wait
    /// feed §4.4's compensation when the frame's last packet leaves.
    fn on_packet_sent(&mut self, now: Instant, packet: &DataHeader, ctx: &SendContext) {
        self.adapter
            .on_sent(packet.seq, SentPacket::of(packet, None));
        self.bytes_in_flight = self.adapter.in_flight().bytes() as f64;
        self.max_bytes_in_flight = self.max_bytes_in_flight.max(self.bytes_in_flight);
        self.waiting_since.get_or_insert(now);
        if let Content::Video { frame, last, .. } = packet.content {
            let size = packet.size.bytes() as f64;
            let bytes = match self.frame {
                Some((f, b)) if f == frame => b + size,
                _ => size,
            };
            self.frame = Some((frame, bytes));
            if last {
                let waited = ctx.waited.unwrap_or(Duration::ZERO).as_secs_f64();
                let (c, fp, t) = (&self.c, self.frame_period, self.target);
                self.media.on_frame(c, waited, bytes, t, fp);
            }
        }
    }

    fn on_feedback(&mut self, now: Instant, fb: &CongestionControlFeedback) {
        self.on_ccfb(now, fb);
    }

    fn allowance(&self, _now: Instant) -> Allowance {
        Allowance::WindowedRate {
            target: self.target_bitrate(),
            bytes: self.send_window(),
            pacing: self.pacing(),
            discard_after: self.c.discard,
        }
    }

    /// The feedback timeout: bytes in flight and no feedback for `FEEDBACK_TIMEOUT` (1 s).
    fn poll_timeout(&self) -> Option<Instant> {
        self.waiting_since.map(|t| t + FEEDBACK_TIMEOUT)
    }

    /// What is in flight is taken as lost: the record is cleared, ref_wnd falls to
    /// MIN_REF_WND (the clock stopped: RFC 5681 §3.1's loss window after a timeout).
    fn on_timeout(&mut self, now: Instant) {
        if self.poll_timeout().is_none_or(|t| t > now) {
            return;
        }
        self.adapter = FeedbackAdapter::new();
        self.bytes_in_flight = 0.0;
        self.waiting_since = None;
        self.window.ref_wnd = self.c.min_ref_wnd.bytes() as f64;
        if let Some(s) = self.s_rtt {
            self.target = self.media.target_bitrate(&self.c, self.window.ref_wnd, s);
        }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.target_bitrate()),
            window: Some(self.ref_wnd()),
        }
    }

    fn delay_target(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(self.window.qdelay_target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccfb::MetricBlock;

    fn cfg(ecn: EcnMode) -> ScreamConfig {
        ScreamConfig {
            ecn,
            ..ScreamConfig::default()
        }
    }

    /// Sends `n` 1000-byte audio packets from `seq` at `at` ms, 1 ms apart.
    fn send(s: &mut ScreamSender, seq: u64, n: u64, at: u64) {
        for k in 0..n {
            let p = DataHeader {
                seq: seq + k,
                send_time: Instant::from_millis(at + k),
                size: DataSize::from_bytes(1000),
                content: Content::Audio,
                ..Default::default()
            };
            s.on_packet_sent(p.send_time, &p, &SendContext::default());
        }
    }

    /// RFC 8888 feedback on `seqs` from `first`, each received `owd_ms` after it was sent
    /// (1 ms apart from `sent_ms`), the ECN bits `ecn(k)`, reported at `rts_ms`.
    fn feedback(
        first: u16,
        n: u16,
        sent_ms: u64,
        owd_ms: u64,
        rts_ms: u64,
        ecn: impl Fn(u16) -> u8,
    ) -> CongestionControlFeedback {
        let rts = Instant::from_millis(rts_ms);
        let reports = (0..n)
            .map(|k| {
                let arrival = Instant::from_millis(sent_ms + u64::from(k) + owd_ms);
                let ato = MetricBlock::at_offset(rts.saturating_duration_since(arrival));
                MetricBlock::received(ecn(k), ato.ato().unwrap())
            })
            .collect();
        CongestionControlFeedback {
            begin_seq: first,
            reports,
            // 1/65536 s units: ms · 65536/1000, exact for multiples of 125 ms.
            report_timestamp: (rts_ms * 65_536 / 1000) as u32,
        }
    }

    /// The first feedback: 10 packets sent at 0–9 ms, received 50 ms later, reported at
    /// 1000 ms and back at 1050 ms; the newest (sent at 9 ms, in at 59 ms) was held 941 ms:
    /// RTT = 1050 − 9 − 941 = 100 ms (to the ATO's 1/1024 s). Nothing in flight after it, the
    /// increase of §4.2.2.2 applied from MIN_REF_WND, the target from ref_wnd/s_rtt (§4.4).
    #[test]
    fn feedback_gives_rtt_flight_and_target() {
        let mut s = ScreamSender::new(&cfg(EcnMode::Off), 30);
        send(&mut s, 0, 10, 0);
        assert_eq!(s.bytes_in_flight(), DataSize::from_bytes(10_000));
        assert_eq!(s.send_window(), DataSize::ZERO, "3·3000 − 10 000 < 0");
        s.on_feedback(
            Instant::from_millis(1050),
            &feedback(0, 10, 0, 50, 1000, |_| 0),
        );
        let rtt = s.s_rtt().unwrap().as_secs_f64();
        assert!((rtt - 0.1).abs() < 0.001, "{rtt}");
        assert_eq!(s.bytes_in_flight(), DataSize::ZERO);
        assert_eq!(s.qdelay(), Duration::ZERO);
        // 10 000 B acked at ratio 1/3, ×1.06: 3533 B more, within MSS + 1.5·10 000.
        let w = s.window().ref_wnd;
        assert!((w - (3000.0 + 10_000.0 / 3.0 * 1.06)).abs() < 1e-6, "{w}");
        let expected = s.media_rate().target_bitrate(&s.c, w, rtt);
        assert_eq!(s.target_bitrate(), Bitrate::from_bps_f64(expected));
        // §4.3.2: the target (~200 kbit/s) ×1.5, no relaxation.
        assert_eq!(
            s.pacing(),
            Bitrate::from_bps_f64(pace_bitrate(&s.c, expected))
        );
    }

    /// L4S (synthetic marks: wisp's packets carry no ECN field yet): half of 20 packets CE
    /// (ECN bits 11) in a feedback: l4s_alpha = 1/8·0.5; ref_wnd, first restored to
    /// max_bytes_in_flight_prev (§4.2.2.1: no congestion for over 100 RTTs), ×(1 −
    /// l4s_alpha/2 / max(1, s_rtt/VIRTUAL_RTT)). Classic ECN: ×0.8. Without ECN
    /// the same marks still count as CE (the draft reacts to what the feedback says).
    #[test]
    fn l4s_marks_from_rfc8888_feedback_reduce_ref_wnd() {
        let mut s = ScreamSender::new(&cfg(EcnMode::L4s), 30);
        assert_eq!(s.ecn_codepoint(), Ecn::Ect1);
        send(&mut s, 0, 10, 0);
        s.on_feedback(
            Instant::from_millis(1050),
            &feedback(0, 10, 0, 50, 1000, |_| 0),
        );
        let rtt = s.s_rtt().unwrap().as_secs_f64();
        // A larger window, so that MIN_REF_WND does not bound the reduction.
        s.window.ref_wnd = 40_000.0;
        send(&mut s, 10, 20, 1100);
        let fb = feedback(
            10,
            20,
            1100,
            50,
            1250,
            |k| if k % 2 == 0 { CE } else { 0b01 },
        );
        s.on_feedback(Instant::from_millis(1300), &fb);
        assert_eq!(s.marked, 10);
        assert!((s.window().l4s_alpha - 0.0625).abs() < 1e-12);
        let rtt2 = 0.875 * rtt + 0.125 * s.rtt_sample_for_test(1300, 1119, 1250, 1169);
        let backoff = 0.0625 / 2.0 / (rtt2 / 0.025).max(1.0);
        // The first CE in more than 100 RTTs: ref_wnd first comes down to
        // max_bytes_in_flight_prev (the 20 packets of the RTT just rolled, 20 000 B).
        let reduced = 20_000.0 * (1.0 - backoff);
        // The increase after it: (20 000 − 10 000 marked)·MSS/ref_wnd, additive only
        // (post_congestion_scale 0 at the congestion).
        let w = s.window().ref_wnd;
        let expected = reduced + 10_000.0 * 1000.0 / reduced;
        assert!((w - expected).abs() < 1e-6, "{w} vs {expected}");
        assert_eq!(s.window().reactions, 1);

        let mut c = ScreamSender::new(&cfg(EcnMode::Classic), 30);
        assert_eq!(c.ecn_codepoint(), Ecn::Ect0);
        send(&mut c, 0, 10, 0);
        c.on_feedback(
            Instant::from_millis(1050),
            &feedback(0, 10, 0, 50, 1000, |_| 0),
        );
        c.window.ref_wnd = 40_000.0;
        send(&mut c, 10, 20, 1100);
        c.on_feedback(Instant::from_millis(1300), &fb);
        // ×0.8; no increase: above MSS + 1.5·max_bytes_in_flight_prev (31 000 B).
        assert_eq!(c.window().ref_wnd, 32_000.0);
    }

    /// A loss (R = 0 in the feedback) reduces by BETA_LOSS; queueing delay (the one-way delay
    /// 40 ms above its base) becomes qdelay.
    #[test]
    fn loss_and_queueing_delay_from_feedback() {
        let mut s = ScreamSender::new(&cfg(EcnMode::Off), 30);
        send(&mut s, 0, 10, 0);
        s.on_feedback(
            Instant::from_millis(1050),
            &feedback(0, 10, 0, 50, 1000, |_| 0),
        );
        s.window.ref_wnd = 40_000.0;
        send(&mut s, 10, 10, 1100);
        let mut fb = feedback(10, 10, 1100, 90, 1250, |_| 0);
        fb.reports[3] = MetricBlock::LOST;
        s.on_feedback(Instant::from_millis(1300), &fb);
        assert_eq!(s.lost, 1);
        assert!((s.qdelay().as_secs_f64() - 0.040).abs() < 0.001);
        // ×0.7; no increase: above MSS + 1.5·max_bytes_in_flight_prev (16 000 B).
        assert_eq!(s.window().ref_wnd, 28_000.0);
    }

    /// The feedback timeout: packets in flight and no feedback for 1 s: the record is cleared
    /// and ref_wnd falls to MIN_REF_WND, so the send window opens again.
    #[test]
    fn a_silent_path_reopens_the_window_after_the_timeout() {
        let mut s = ScreamSender::new(&cfg(EcnMode::Off), 30);
        send(&mut s, 0, 10, 0);
        assert_eq!(s.poll_timeout(), Some(Instant::from_millis(1000)));
        s.on_timeout(Instant::from_millis(999));
        assert_eq!(s.bytes_in_flight(), DataSize::from_bytes(10_000));
        s.on_timeout(Instant::from_millis(1000));
        assert_eq!(s.bytes_in_flight(), DataSize::ZERO);
        assert_eq!(s.send_window(), DataSize::from_bytes(9000));
        assert_eq!(s.poll_timeout(), None);
    }

    impl ScreamSender {
        /// The RTT sample of a packet sent at `sent`, in at `arrival`, reported at `rts`,
        /// back at `now` (ms), with the ATO's rounding.
        fn rtt_sample_for_test(&self, now: u64, sent: u64, rts: u64, arrival: u64) -> f64 {
            let hold = MetricBlock::at_offset(Duration::from_millis(rts - arrival))
                .offset()
                .unwrap();
            (Duration::from_millis(now - sent).saturating_sub(hold)).as_secs_f64()
        }
    }
}
