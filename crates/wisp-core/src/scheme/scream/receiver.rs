//! SCReAMv2's receiver (draft-ietf-ccwg-rfc8298bis-screamv2-00 §5): RFC 8888 feedback
//! ([`CcfbRecorder`]) on every packet that arrived since the previous report, sent when
//! `feedback-packets` (N = 16) data units have arrived since it, when the last data unit of a
//! media frame arrives, and at the latest `feedback-interval-ms` (40 ms) after it while data
//! units wait to be reported.

use super::ScreamConfig;
use crate::ccfb::{CcfbRecorder, CongestionControlFeedback};
use crate::controller::Receiver;
use crate::packet::{Content, DataHeader};
use crate::time::{Duration, Instant};
use std::collections::VecDeque;

/// SCReAMv2's receiver.
#[derive(Clone, Debug)]
pub struct ScreamReceiver {
    recorder: CcfbRecorder,
    packets: u32,
    interval: Duration,
    /// Data units received since the last report.
    since: u32,
    last_sent: Option<Instant>,
    /// The latest instant of the next report, while data units wait.
    due: Option<Instant>,
    pending: VecDeque<CongestionControlFeedback>,
}

impl ScreamReceiver {
    pub fn new(c: &ScreamConfig) -> Self {
        ScreamReceiver {
            recorder: CcfbRecorder::new(),
            packets: c.feedback_packets,
            interval: c.feedback_interval,
            since: 0,
            last_sent: None,
            due: None,
            pending: VecDeque::new(),
        }
    }

    /// A packet arrived (§5); its report carries the ECN codepoint it arrived with.
    pub fn on_packet(&mut self, now: Instant, packet: &DataHeader) {
        self.recorder
            .on_packet_ecn(packet.seq as u16, now, packet.ecn);
        self.since += 1;
        let frame_end = matches!(packet.content, Content::Video { last: true, .. });
        if frame_end || self.since >= self.packets {
            self.report(now);
        } else if self.due.is_none() {
            // At most `interval` after the previous report (at once if that is past).
            let from = self
                .last_sent
                .map_or(now, |t| t.max(now.saturating_sub(self.interval)));
            self.due = Some(from + self.interval);
        }
    }

    fn report(&mut self, now: Instant) {
        self.pending.extend(self.recorder.take_feedback(now));
        self.since = 0;
        self.due = None;
        self.last_sent = Some(now);
    }
}

impl Receiver for ScreamReceiver {
    type Feedback = CongestionControlFeedback;
    type Fields = ();

    fn on_packet_received(&mut self, now: Instant, packet: &DataHeader, _fields: &()) {
        self.on_packet(now, packet);
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<CongestionControlFeedback> {
        self.pending.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.due
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.due.is_some_and(|t| t <= now) {
            self.report(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::DataSize;

    fn packet(seq: u64, content: Content) -> DataHeader {
        DataHeader {
            seq,
            size: DataSize::from_bytes(1200),
            content,
            ..Default::default()
        }
    }

    fn video(frame: u32, last: bool) -> Content {
        Content::Video {
            frame,
            last,
            key: false,
        }
    }

    /// §5's three triggers: a frame's last data unit, the 16th data unit, and 40 ms.
    #[test]
    fn feedback_on_frame_end_every_16_units_and_every_40_ms() {
        let mut r = ScreamReceiver::new(&ScreamConfig::default());
        let t = Instant::from_secs(1);
        let ms = Duration::from_millis;
        r.on_packet_received(t, &packet(0, video(0, false)), &());
        assert!(r.poll_feedback(t).is_none());
        assert_eq!(r.poll_timeout(), Some(t + ms(40)));
        r.on_packet_received(t + ms(1), &packet(1, video(0, true)), &());
        let m = r.poll_feedback(t).expect("a report at the frame's end");
        assert_eq!((m.begin_seq, m.reports.len()), (0, 2));
        assert_eq!(r.poll_timeout(), None);
        // 16 data units of one long frame: a report at the 16th.
        for k in 0..16 {
            r.on_packet_received(t + ms(2 + k), &packet(2 + k, video(1, false)), &());
        }
        let m = r.poll_feedback(t).expect("a report at the 16th");
        assert_eq!((m.begin_seq, m.reports.len()), (2, 16));
        // One more, then 40 ms after the last report (at 17 ms): a report at 57 ms.
        r.on_packet_received(t + ms(30), &packet(18, Content::Audio), &());
        assert_eq!(r.poll_timeout(), Some(t + ms(57)));
        r.on_timeout(t + ms(57));
        let m = r.poll_feedback(t).expect("a report at the interval");
        assert_eq!((m.begin_seq, m.reports.len()), (18, 1));
        assert!(r.poll_feedback(t).is_none());
        assert_eq!(r.poll_timeout(), None);
    }
}
