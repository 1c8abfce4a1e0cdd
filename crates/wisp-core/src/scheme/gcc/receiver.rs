//! The receiver half of GCC: the delay-based controller (ANRW'16 §3, "The receiver-side
//! controller") and the RTCP-like feedback.
//!
//! Per arriving packet: the receiving rate R is measured over the last 500 ms; for video packets,
//! the grouping ([`super::grouping`], with or without the pre-filter) emits a delta when a group
//! completes;
//! the arrival-time filter turns it into m; the over-use detector compares m with γ; and the
//! remote rate controller ([`super::rate_control`]) updates A_r — as libwebrtc's
//! `RemoteBitrateEstimatorAbsSendTime` of the Kalman era does, at most every feedback interval
//! (`GetFeedbackInterval`: 200 ms at the rates of a call, [`AimdRateControl::feedback_interval`];
//! aiortc's port: 500 ms), and while the detector signals over-use whenever `TimeToReduceFurther`
//! allows a further decrease (the last change of A_r at least an RTT, 200 ms, old, or R below
//! half of A_r). aiortc's port updates at
//! every packet during over-use instead, so A_r followed R down packet by packet.
//!
//! **Audio packets count towards R but are not delay samples.** The Kalman-era estimator
//! (`RemoteBitrateEstimatorAbsSendTime`) was fed by the packets that carry abs-send-time, the
//! video streams', and aiortc creates an estimator for video receivers only; the paper's call is
//! video alone (§4.2). Fed into the grouping, each 80-byte audio packet the pacer sends between
//! video bursts is a group of its own, and the filter's size term reads the small group after a
//! large one as a rise in queueing delay: on the synthetic outage link
//! (`wifi-outage:burst=12mbps`, 3 Mbit/s, 300 s) that alone held GCC at 1.50 Mbit/s, against
//! 2.36 Mbit/s (the encoder's ceiling) with the audio left out of the filter; on the Wi-Fi
//! trace, 0.49 against 0.77 Mbit/s. The rate controller runs on the delay samples, so on the
//! video packets only, as libwebrtc's did. Deviation: R counts the audio too, since A_r is the
//! target of the whole call here (the media source gives the video what audio leaves), where
//! libwebrtc's REMB covered the video and audio came on top.
//!
//! Feedback: A_r goes back as a REMB message (`wire::Remb`) in an RTCP compound with a receiver
//! report (`wire::ReceiverReport`: highest sequence, received, cumulative lost, fraction lost
//! since the previous report per RFC 3550 §6.4.1/A.3), since RFC 3550 §6.1 starts every compound
//! packet with a report. A REMB is sent when A_r is updated and either a feedback interval has
//! passed since the last one or A_r fell below 97 % of it (libwebrtc `vie_remb.cc`, whose
//! interval is 200 ms); a report alone goes out
//! every second otherwise (libwebrtc's video RTCP interval).

use super::GccConfig;
use super::GccFeedback;
use super::arrival::ArrivalFilter;
use super::grouping::GroupDelta;
use super::grouping::Grouper;
use super::overuse::{BandwidthUsage, OveruseDetector};
use super::rate::RateCounter;
use super::rate_control::AimdRateControl;
use crate::controller::Receiver;
use crate::packet::{Content, DataHeader};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use crate::wire::{ReceiverReport, Remb, RttEcho};

/// The delay-based estimator: grouping → arrival-time filter → over-use detector → remote rate
/// controller, with the receiving-rate counter.
#[derive(Clone, Debug)]
pub struct RemoteEstimator {
    grouper: Grouper,
    filter: ArrivalFilter,
    detector: OveruseDetector,
    rate_control: AimdRateControl,
    incoming: RateCounter,
    incoming_known: bool,
    update_interval: Option<Duration>,
    last_update: Option<Instant>,
    last_delta: Option<GroupDelta>,
}

impl RemoteEstimator {
    pub fn new(config: &GccConfig) -> Self {
        RemoteEstimator {
            grouper: Grouper::new(config.prefilter, config.interval),
            filter: ArrivalFilter::new(config.filter),
            detector: OveruseDetector::new(config.threshold.into()),
            rate_control: AimdRateControl::new(config.aimd),
            incoming: RateCounter::new(config.rate_window.as_millis().max(1)),
            incoming_known: true,
            update_interval: config.update_interval,
            last_update: None,
            last_delta: None,
        }
    }

    /// A packet sent at `send` of `size` arrived at `now`: it counts towards R and is a delay
    /// sample. Returns A_r when the rate controller was updated and produced a rate.
    pub fn on_packet(&mut self, now: Instant, send: Instant, size: DataSize) -> Option<Bitrate> {
        self.on_rate_only(now, size);
        if let Some(delta) = self.grouper.on_packet(send, now, size) {
            let m = self.filter.update(&delta, self.detector.state());
            self.detector
                .detect(m, delta.send_delta_ms, self.filter.num_deltas(), now);
            self.last_delta = Some(delta);
        }
        self.update(now)
    }

    /// A packet that counts towards R but is no delay sample (audio) arrived at `now`. The rate
    /// controller runs on delay samples only, as libwebrtc's did on the video packets.
    pub fn on_rate_only(&mut self, now: Instant, size: DataSize) {
        // The rate counter restarts after a silence longer than its window.
        if self.incoming.has_rate(now) {
            self.incoming_known = true;
        } else if self.incoming_known {
            self.incoming.reset();
            self.incoming_known = false;
        }
        self.incoming.add(size, now);
    }

    /// The remote rate controller, when due (or to decrease further during over-use).
    fn update(&mut self, now: Instant) -> Option<Bitrate> {
        let due = self
            .last_update
            .is_none_or(|last| now - last > self.update_interval());
        if !due && self.detector.state() != BandwidthUsage::Overusing {
            return None;
        }
        let r = self.incoming.rate(now);
        // During over-use, a further decrease only when the rate controller allows it.
        if !due && !r.is_some_and(|r| self.rate_control.time_to_reduce_further(now, r)) {
            return None;
        }
        let a_r = self.rate_control.update(self.detector.state(), r, now)?;
        self.last_update = Some(now);
        Some(a_r)
    }

    /// The remote rate controller's cadence ([`GccConfig::update_interval`]).
    pub fn update_interval(&self) -> Duration {
        self.update_interval
            .unwrap_or_else(|| self.rate_control.feedback_interval())
    }

    pub fn grouper(&self) -> &Grouper {
        &self.grouper
    }
    pub fn filter(&self) -> &ArrivalFilter {
        &self.filter
    }
    pub fn detector(&self) -> &OveruseDetector {
        &self.detector
    }
    pub fn rate_control(&self) -> &AimdRateControl {
        &self.rate_control
    }
    /// The delta of the last completed group.
    pub fn last_delta(&self) -> Option<GroupDelta> {
        self.last_delta
    }
}

/// RFC 3550 §6.4.1 / A.3 loss accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LossStats {
    highest: Option<u64>,
    received: u64,
    expected_prior: u64,
    received_prior: u64,
}

impl LossStats {
    fn on_packet(&mut self, seq: u64) {
        self.received += 1;
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
    }

    /// A report, and the interval counters reset.
    fn report(&mut self, echo: Option<RttEcho>) -> ReceiverReport {
        // The flow numbers its packets from 0.
        let expected = self.highest.map_or(0, |h| h + 1);
        let expected_interval = expected - self.expected_prior;
        let received_interval = self.received - self.received_prior;
        self.expected_prior = expected;
        self.received_prior = self.received;
        let lost_interval = expected_interval.saturating_sub(received_interval);
        let fraction_lost = if expected_interval == 0 || lost_interval == 0 {
            0
        } else {
            ((lost_interval << 8) / expected_interval).min(255) as u8
        };
        ReceiverReport {
            highest_seq: self.highest.unwrap_or(0),
            received: self.received,
            cumulative_lost: expected.saturating_sub(self.received),
            fraction_lost,
            echo,
        }
    }
}

/// GCC's receiver half.
#[derive(Clone, Debug)]
pub struct GccReceiver {
    estimator: RemoteEstimator,
    loss: LossStats,
    report_interval: Duration,
    next_report: Option<Instant>,
    last_remb: Option<(Instant, Bitrate)>,
    /// The newest packet received (highest sequence number): its send time and arrival, for the
    /// report's RTT echo.
    newest: Option<(u64, Instant, Instant)>,
    /// At most a compound of two messages is pending.
    pending: [Option<GccFeedback>; 2],
}

/// A REMB is sent at once when A_r falls below this fraction of the last one sent.
const REMB_DECREASE_FRACTION: f64 = 0.97;

impl GccReceiver {
    pub fn new(config: &GccConfig) -> Self {
        GccReceiver {
            estimator: RemoteEstimator::new(config),
            loss: LossStats::default(),
            report_interval: config.report_interval,
            next_report: None,
            last_remb: None,
            newest: None,
            pending: [None, None],
        }
    }

    pub fn estimator(&self) -> &RemoteEstimator {
        &self.estimator
    }

    fn queue_report(&mut self, now: Instant) {
        let echo = self.newest.map(|(_, sent, arrived)| RttEcho {
            sent,
            held: now.saturating_duration_since(arrived),
        });
        let rr = self.loss.report(echo);
        self.pending[0] = Some(GccFeedback::Report(rr));
        self.next_report = Some(now + self.report_interval);
    }
}

impl Receiver for GccReceiver {
    type Feedback = GccFeedback;
    type Fields = ();

    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, _fields: &()) {
        self.loss.on_packet(packet.seq);
        if self.newest.is_none_or(|(seq, _, _)| packet.seq > seq) {
            self.newest = Some((packet.seq, packet.send_time, now));
        }
        if self.next_report.is_none() {
            self.next_report = Some(now + self.report_interval);
        }
        if packet.content == Content::Audio {
            self.estimator.on_rate_only(now, packet.size);
            return;
        }
        let Some(a_r) = self.estimator.on_packet(now, packet.send_time, packet.size) else {
            return;
        };
        let send = match self.last_remb {
            None => true,
            Some((t, last)) => {
                now - t >= self.estimator.update_interval()
                    || (a_r.bps() as f64) < REMB_DECREASE_FRACTION * last.bps() as f64
            }
        };
        if send {
            self.last_remb = Some((now, a_r));
            self.queue_report(now);
            // REMB carries A_r in an 18-bit mantissa: the sender gets it rounded down, in the
            // simulator as on the wire.
            self.pending[1] = Some(GccFeedback::Remb(Remb::new(a_r)));
        }
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<GccFeedback> {
        self.pending[0].take().or_else(|| self.pending[1].take())
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next_report
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.next_report.is_some_and(|t| t <= now) {
            self.queue_report(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Content, Ecn};
    use crate::wire::Feedback;

    /// A 1 Mbit/s stream (one 1250-byte packet every 10 ms) over an uncongested path.
    fn packet(seq: u64) -> (Instant, DataHeader) {
        let send = Instant::from_millis(10 * seq);
        (
            send + Duration::from_millis(30),
            DataHeader {
                seq,
                byte_seq: 1250 * seq,
                send_time: send,
                size: DataSize::from_bytes(1250),
                content: Content::Bulk,
                ecn: Ecn::NotEct,
                fields: Default::default(),
            },
        )
    }

    /// Audio packets raise R but never reach the grouping and the filter: a receiver that also
    /// gets an audio packet, with a wildly varying delay, between every two video packets sees
    /// the same delay samples and detector state as one that gets the video alone.
    #[test]
    fn audio_counts_towards_r_but_is_no_delay_sample() {
        let mut with = GccReceiver::new(&GccConfig::default());
        let mut without = GccReceiver::new(&GccConfig::default());
        for k in 0..500u64 {
            let (at, mut video) = packet(k);
            video.seq = 2 * k;
            with.on_packet_received(at, &video, &());
            without.on_packet_received(at, &video, &());
            let audio = DataHeader {
                seq: 2 * k + 1,
                byte_seq: 0,
                send_time: video.send_time + Duration::from_millis(5),
                size: DataSize::from_bytes(120),
                content: Content::Audio,
                ecn: Ecn::NotEct,
                fields: Default::default(),
            };
            let delay = Duration::from_millis(30 + 20 * (k % 3));
            with.on_packet_received(audio.send_time + delay, &audio, &());
            let (a, b) = (&with.estimator, &without.estimator);
            assert_eq!(a.filter().num_deltas(), b.filter().num_deltas());
            assert_eq!(a.detector().state(), b.detector().state());
            assert_eq!(a.last_delta(), b.last_delta());
        }
        assert!(without.estimator.filter().num_deltas() > 100);
        let now = Instant::from_millis(5000);
        let (ra, rb) = (
            with.estimator.incoming.rate(now).unwrap().bps(),
            without.estimator.incoming.rate(now).unwrap().bps(),
        );
        // 1 Mbit/s of video; 100 audio packets of 120 bytes a second add about 96 kbit/s (the
        // 500-ms window holds a few more or fewer, their delays differing).
        assert!(ra > rb + 80_000 && ra < rb + 130_000, "{ra} vs {rb}");
    }

    #[test]
    fn reports_every_second_and_a_remb_compound_once_the_rate_is_known() {
        let mut r = GccReceiver::new(&GccConfig::default());
        let mut out: Vec<(Instant, GccFeedback)> = vec![];
        for seq in 0..1000 {
            let (at, h) = packet(seq);
            if seq % 7 == 3 {
                continue; // lost
            }
            if let Some(t) = r.poll_timeout().filter(|&t| t <= at) {
                r.on_timeout(t);
                while let Some(f) = r.poll_feedback(t) {
                    out.push((t, f));
                }
            }
            r.on_packet_received(at, &h, &());
            while let Some(f) = r.poll_feedback(at) {
                out.push((at, f));
            }
        }
        // Every message survives its wire encoding.
        for (_, f) in &out {
            assert_eq!(Feedback::encode(f).decode().as_ref(), Ok(f));
        }
        // The first REMB comes once R has been measured for more than 3 s, right after a report,
        // and carries about R (1 Mbit/s on the wire less the lost seventh).
        let (i, (t, remb)) = out
            .iter()
            .enumerate()
            .find(|(_, (_, f))| matches!(f, GccFeedback::Remb(_)))
            .unwrap();
        assert!(*t > Instant::from_millis(3030), "{t:?}");
        assert!(matches!(out[i - 1].1, GccFeedback::Report(_)));
        let GccFeedback::Remb(remb) = remb else {
            unreachable!()
        };
        let bitrate = remb.bitrate();
        assert!((bitrate.kbps_f64() - 857.0).abs() < 30.0, "{bitrate:?}");
        // Reports at least every second; over the longer intervals, fraction lost ≈ 1/7.
        let reports: Vec<(Instant, &ReceiverReport)> = out
            .iter()
            .filter_map(|(t, f)| match f {
                GccFeedback::Report(rr) => Some((*t, rr)),
                _ => None,
            })
            .collect();
        assert!(
            reports
                .windows(2)
                .all(|w| w[1].0 - w[0].0 <= Duration::from_secs(1))
        );
        assert!(
            reports
                .windows(2)
                .filter(|w| w[1].0 - w[0].0 >= Duration::from_millis(500))
                .all(|w| (i32::from(w[1].1.fraction_lost) - 256 / 7).abs() <= 6),
            "{reports:?}"
        );
        let last = reports.last().unwrap().1;
        let lost = (0..=last.highest_seq).filter(|s| s % 7 == 3).count() as u64;
        assert_eq!(last.cumulative_lost, lost);
    }

    /// libwebrtc `RemoteBitrateEstimatorAbsSendTime`: while the detector signals over-use, A_r
    /// is updated again only when `TimeToReduceFurther` allows it (the last change at least
    /// 200 ms old, or R below half of A_r), not at every packet.
    #[test]
    fn over_use_reduces_at_most_every_200_ms() {
        let mut e = RemoteEstimator::new(&GccConfig::default());
        let mut updates = vec![];
        let mut over_use = 0;
        for seq in 0..1000u64 {
            let send = Instant::from_millis(10 * seq);
            // 1 Mbit/s; from 6 s on, the queue grows by 2 ms per packet.
            let queue = if seq >= 600 { 2 * (seq - 600) } else { 0 };
            let arrival = send + Duration::from_millis(30 + queue);
            if let Some(a_r) = e.on_packet(arrival, send, DataSize::from_bytes(1250)) {
                updates.push((arrival, a_r));
            }
            if e.detector().state() == BandwidthUsage::Overusing {
                over_use += 1;
            }
        }
        assert!(over_use > 10, "{over_use}");
        // A_r decreased more than once, and no two updates are less than 200 ms apart.
        let decreases = updates.windows(2).filter(|w| w[1].1 < w[0].1).count();
        assert!(decreases >= 2, "{updates:?}");
        assert!(
            updates
                .windows(2)
                .all(|w| w[1].0 - w[0].0 >= Duration::from_millis(200)),
            "{updates:?}"
        );
    }

    #[test]
    fn fraction_lost_per_rfc_3550() {
        let mut l = LossStats::default();
        for seq in [0, 1, 2, 4, 5, 7] {
            l.on_packet(seq);
        }
        let r = l.report(None);
        // Expected 8, received 6: 2/8 = 64/256.
        assert_eq!(
            r,
            ReceiverReport {
                highest_seq: 7,
                received: 6,
                cumulative_lost: 2,
                fraction_lost: 64,
                echo: None,
            }
        );
        for seq in 8..12 {
            l.on_packet(seq);
        }
        assert_eq!(l.report(None).fraction_lost, 0);
        // A late (reordered) packet does not make the fraction negative.
        l.on_packet(3);
        let r = l.report(None);
        assert_eq!((r.fraction_lost, r.cumulative_lost), (0, 1));
    }
}
