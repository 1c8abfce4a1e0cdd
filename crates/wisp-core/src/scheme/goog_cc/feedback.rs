//! `gcc`'s feedback: transport-wide feedback (`feedback=twcc`, the default, libwebrtc's
//! `RemoteEstimatorProxy` and TransportLayerCC) or RFC 8888 congestion control feedback
//! (`feedback=rfc8888`, libwebrtc's `CongestionControlFeedbackGenerator` and
//! `rtcp::CongestionControlFeedback`).
//!
//! Either way the sender's feedback adapter ([`crate::scheme::gcc::adapter`]) turns a message
//! into the same per-packet results (send time, size, arrival on the receiver's clock or lost),
//! as libwebrtc's `TransportFeedbackAdapter` does for both, so the estimators run unchanged.
//! What differs is the wire: RFC 8888 reports RTP sequence numbers per SSRC (wisp's flow is one
//! SSRC, so its packet numbers serve) and arrivals as offsets of 1/1024 s before a report
//! timestamp, where transport-wide feedback has 250-µs deltas; see [`crate::ccfb`] for the
//! message, the receiver's rules and their deviations.
//!
//! The receivers send every `feedback-interval-ms` while packets come; an idle receiver sends
//! nothing.

use crate::ccfb::{CcfbRecorder, CongestionControlFeedback};
use crate::controller::Receiver;
use crate::packet::DataHeader;
use crate::scheme::gcc::twcc::{GccTwccConfig, GccTwccReceiver};
use crate::time::{Duration, Instant};
use crate::wire::{Message, TransportFeedback, WireError, kind, unframe};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which feedback the receiver sends, as the `feedback` parameter gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackKind {
    /// Transport-wide congestion control feedback (TransportLayerCC).
    #[default]
    Twcc,
    /// RFC 8888 congestion control feedback (CCFB).
    Rfc8888,
}

/// A message from `gcc`'s receiver: one of the two standard feedback messages. Each is encoded
/// as itself (kinds 4 and 5), so `wisp-net` sends it as its standard RTCP packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoogCcFeedback {
    Twcc(TransportFeedback),
    Rfc8888(CongestionControlFeedback),
}

impl From<TransportFeedback> for GoogCcFeedback {
    fn from(fb: TransportFeedback) -> Self {
        GoogCcFeedback::Twcc(fb)
    }
}

impl From<CongestionControlFeedback> for GoogCcFeedback {
    fn from(fb: CongestionControlFeedback) -> Self {
        GoogCcFeedback::Rfc8888(fb)
    }
}

impl Message for GoogCcFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        match self {
            GoogCcFeedback::Twcc(fb) => fb.emit(out),
            GoogCcFeedback::Rfc8888(fb) => fb.emit(out),
        }
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match unframe(buf)?.0 {
            kind::TRANSPORT_FEEDBACK => TransportFeedback::parse(buf).map(GoogCcFeedback::Twcc),
            kind::CONGESTION_CONTROL_FEEDBACK => {
                CongestionControlFeedback::parse(buf).map(GoogCcFeedback::Rfc8888)
            }
            k => Err(WireError::UnknownKind(k)),
        }
    }
}

/// `gcc`'s receiver: `gcc-twcc`'s for transport-wide feedback, or the RFC 8888 one.
#[derive(Clone, Debug)]
pub enum GoogCcReceiver {
    Twcc(GccTwccReceiver),
    Rfc8888(CcfbReceiver),
}

impl GoogCcReceiver {
    /// The receiver of `kind`, reporting every `interval`.
    pub fn new(kind: FeedbackKind, interval: Duration) -> Self {
        match kind {
            FeedbackKind::Twcc => GoogCcReceiver::Twcc(GccTwccReceiver::new(&GccTwccConfig {
                feedback_interval: interval,
                ..GccTwccConfig::default()
            })),
            FeedbackKind::Rfc8888 => GoogCcReceiver::Rfc8888(CcfbReceiver::new(interval)),
        }
    }
}

impl Receiver for GoogCcReceiver {
    type Feedback = GoogCcFeedback;
    type Fields = ();

    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, fields: &()) {
        match self {
            GoogCcReceiver::Twcc(r) => r.on_packet_received(now, packet, fields),
            GoogCcReceiver::Rfc8888(r) => r.on_packet_received(now, packet),
        }
    }

    fn poll_feedback(&mut self, now: Instant) -> Option<GoogCcFeedback> {
        match self {
            GoogCcReceiver::Twcc(r) => r.poll_feedback(now).map(GoogCcFeedback::Twcc),
            GoogCcReceiver::Rfc8888(r) => r.pending.pop_front().map(GoogCcFeedback::Rfc8888),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self {
            GoogCcReceiver::Twcc(r) => r.poll_timeout(),
            GoogCcReceiver::Rfc8888(r) => r.next,
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        match self {
            GoogCcReceiver::Twcc(r) => r.on_timeout(now),
            GoogCcReceiver::Rfc8888(r) => r.on_timeout(now),
        }
    }
}

/// The RFC 8888 receiver: the packets since the last report, every interval while packets
/// come ([`CcfbRecorder`]).
#[derive(Clone, Debug)]
pub struct CcfbReceiver {
    recorder: CcfbRecorder,
    interval: Duration,
    next: Option<Instant>,
    /// When the last report went out.
    last_sent: Option<Instant>,
    pending: VecDeque<CongestionControlFeedback>,
}

impl CcfbReceiver {
    pub fn new(interval: Duration) -> Self {
        CcfbReceiver {
            recorder: CcfbRecorder::new(),
            interval,
            next: None,
            last_sent: None,
            pending: VecDeque::new(),
        }
    }

    /// The RTP sequence number is 16 bits of the flow's packet number (one SSRC).
    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader) {
        self.recorder
            .on_packet_ecn(packet.seq as u16, now, packet.ecn);
        if self.next.is_none() {
            // The first report an interval after the first packet, then every interval.
            self.next = Some(
                self.last_sent
                    .map_or(now + self.interval, |t| (t + self.interval).max(now)),
            );
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.next.is_some_and(|t| t <= now) {
            self.pending.extend(self.recorder.take_feedback(now));
            self.next = None;
            self.last_sent = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccfb::MetricBlock;
    use crate::units::DataSize;
    use crate::wire::Feedback;

    fn packet(seq: u64) -> DataHeader {
        DataHeader {
            seq,
            size: DataSize::from_bytes(1200),
            ..Default::default()
        }
    }

    #[test]
    fn rfc8888_receiver_reports_every_interval_while_packets_come() {
        let mut r = GoogCcReceiver::new(FeedbackKind::Rfc8888, Duration::from_millis(50));
        let t = Instant::from_secs(1);
        assert_eq!(r.poll_timeout(), None);
        r.on_packet_received(t, &packet(65_535), &());
        r.on_packet_received(t + Duration::from_millis(10), &packet(65_537), &());
        assert_eq!(r.poll_timeout(), Some(t + Duration::from_millis(50)));
        r.on_timeout(t + Duration::from_millis(50));
        let Some(GoogCcFeedback::Rfc8888(m)) = r.poll_feedback(t) else {
            panic!("an RFC 8888 report");
        };
        assert_eq!(m.begin_seq, 65_535);
        assert_eq!(m.reports.len(), 3);
        assert_eq!(m.reports[1], MetricBlock::LOST);
        // 50 ms and 40 ms before the report, rounded down to 1/1024 s.
        assert_eq!(m.reports[0].ato(), Some(51));
        assert_eq!(m.reports[2].ato(), Some(40));
        assert!(r.poll_feedback(t).is_none());
        // Idle: no wake-up, no report.
        assert_eq!(r.poll_timeout(), None);
        // Both kinds decode as `gcc`'s message; other kinds do not.
        let fb = Feedback::encode(&GoogCcFeedback::Rfc8888(m.clone()));
        assert_eq!(fb.decode(), Ok(GoogCcFeedback::Rfc8888(m)));
        let tf = TransportFeedback {
            base_seq: 1,
            reference: 0,
            fb_count: 0,
            deltas: vec![Some(1)],
        };
        // The default's bytes are transport-wide feedback's own.
        let plain = Feedback::encode(&tf);
        let wrapped = Feedback::encode(&GoogCcFeedback::Twcc(tf.clone()));
        assert_eq!(plain, wrapped);
        assert_eq!(wrapped.decode(), Ok(GoogCcFeedback::Twcc(tf)));
        assert_eq!(
            GoogCcFeedback::parse(&[3, 0, 0]),
            Err(WireError::UnknownKind(3))
        );
    }
}
