//! The congestion window and its pushback on the encoder: libwebrtc's
//! `GoogCcNetworkController::UpdateCongestionWindowSize`, `CongestionWindowPushbackController`
//! (`modules/congestion_controller/goog_cc/congestion_window_pushback_controller.cc`) and the
//! encoder's side of it (`VideoStreamEncoder::UpdateTargetBitrate`'s frame dropping), with the
//! settings Chrome runs: `WebRTC-CongestionWindow` is unset there, so `RateControlSettings` takes
//! its default `QueueSize:350,MinBitrate:30000,DropFrame:true`.
//!
//! **The window.** Each transport feedback gives its largest feedback RTT (the feedback's arrival
//! less the send time of each packet it reports received, the largest of them); the last 32
//! are kept. Each time the window is updated (on a feedback, and on the controller's 25-ms
//! process interval) it becomes
//!
//! ```text
//! w = target × (min of the 32 RTTs + 350 ms),   window = max(3000 B, (w + window) / 2)
//! ```
//!
//! (the first: max(3000 B, w)). The mean of the same 32 RTTs is the RTT the delay-based
//! estimator's AIMD uses.
//!
//! **The pushback.** Data in flight is what was sent and no feedback has reported (set on each
//! packet sent and each feedback). Each time the controller recomputes its target (on every
//! packet sent, every process interval and every feedback that updated the estimate) the
//! encoding ratio moves with the fill `f` = in flight / window:
//!
//! | fill | ratio |
//! |---|---|
//! | f > 1.5 | × 0.9 |
//! | 1 < f ≤ 1.5 | × 0.95 |
//! | f < 0.1 | 1 |
//! | otherwise | × 1.05, at most 1 |
//!
//! and the pushback rate is target × ratio, but not below 30 kbit/s (`MinBitrate`) unless the
//! target is, nor below the controller's minimum. The pacer keeps pacing at the target
//! (libwebrtc paces at the rate before pushback, so as not to queue in the pacer).
//!
//! **Frame dropping (`DropFrame:true`).** The encoder is told the target and the reduce ratio
//! `(target − pushback) / target`. Above 1% (and with the target above the codec's 30-kbit/s
//! minimum) it drops one frame in `N = max(2, ⌊target / reduce⌋)`, `reduce = min(target × ratio,
//! target − 30 kbit/s)`, and encodes at `target − target / N`: at most half the frames go.
//!
//! Deviations: wisp's encoder model drops no frames; it is given the rate the dropping leaves
//! (`target − target / N`), which it follows with its 100-ms lag rather than from the next frame.

use crate::time::Duration;
use crate::units::{Bitrate, DataSize};
use std::collections::VecDeque;

/// `kMaxFeedbackRttWindow`.
const RTT_WINDOW: usize = 32;
/// `kMinCwnd`: two full packets.
const MIN_WINDOW: DataSize = DataSize::from_bytes(2 * 1500);
/// The pushback's floor (`MinBitrate`, `kDefaultMinPushbackTargetBitrateBps`).
const MIN_PUSHBACK: Bitrate = Bitrate::from_kbps(30);
/// The video codec's minimum rate the encoder's frame dropping respects
/// (`kDefaultMinVideoBitrateBps`).
const CODEC_MIN: Bitrate = Bitrate::from_kbps(30);

/// The largest feedback RTT of each of the last 32 feedbacks (`feedback_max_rtts_`), in whole
/// milliseconds as libwebrtc keeps them. libwebrtc records them whether or not the congestion
/// window is on; AIMD takes their mean.
#[derive(Clone, Debug, Default)]
pub struct FeedbackRtts(VecDeque<Duration>);

impl FeedbackRtts {
    /// A feedback's largest RTT.
    pub fn push(&mut self, max_rtt: Duration) {
        self.0.push_back(Duration::from_millis(max_rtt.as_millis()));
        if self.0.len() > RTT_WINDOW {
            self.0.pop_front();
        }
    }

    /// Their mean (whole milliseconds), once there is one.
    pub fn mean(&self) -> Option<Duration> {
        let n = self.0.len() as u64;
        (n > 0).then(|| {
            let sum: u64 = self.0.iter().map(|r| r.as_millis()).sum();
            Duration::from_millis(sum / n)
        })
    }

    /// The smallest, once there is one.
    pub fn min(&self) -> Option<Duration> {
        self.0.iter().min().copied()
    }
}

/// The congestion window, the pushback controller and the encoder rate they leave.
#[derive(Clone, Debug)]
pub struct CongestionWindow {
    /// `QueueSize`: the time beyond the RTT the window holds.
    queue: Duration,
    window: Option<DataSize>,
    ratio: f64,
    /// The encoder's rate from the last pushback.
    encoder: Option<Bitrate>,
}

impl CongestionWindow {
    pub fn new(queue: Duration) -> Self {
        CongestionWindow {
            queue,
            window: None,
            ratio: 1.0,
            encoder: None,
        }
    }

    /// `UpdateCongestionWindowSize` with the current target and the smallest recent feedback
    /// RTT.
    pub fn update_window(&mut self, target: Bitrate, min_rtt: Duration) {
        let w = target * (min_rtt + self.queue);
        let w = match self.window {
            Some(old) => DataSize::from_bytes((w.bytes() + old.bytes()) / 2),
            None => w,
        };
        self.window = Some(w.max(MIN_WINDOW));
    }

    pub fn window(&self) -> Option<DataSize> {
        self.window
    }

    /// `MaybeTriggerOnNetworkChanged`'s pushback with `in_flight` bytes outstanding: the
    /// encoder's rate for `target` from now on ([`CongestionWindow::encoder`]).
    pub fn push_back(&mut self, target: Bitrate, in_flight: DataSize, min: Bitrate) {
        self.encoder = Some(encoder_rate(target, self.pushback(target, in_flight, min)));
    }

    /// The encoder's rate from the last [`CongestionWindow::push_back`], if any.
    pub fn encoder(&self) -> Option<Bitrate> {
        self.encoder
    }

    /// `UpdateTargetBitrate`, then the controller's floor `min`: the pushback rate for `target`.
    /// Moves the encoding ratio, so call it where libwebrtc recomputes its target.
    fn pushback(&mut self, target: Bitrate, in_flight: DataSize, min: Bitrate) -> Bitrate {
        let Some(window) = self.window.filter(|w| *w > DataSize::ZERO) else {
            return target;
        };
        let fill = in_flight.bytes() as f64 / window.bytes() as f64;
        self.ratio = if fill > 1.5 {
            self.ratio * 0.9
        } else if fill > 1.0 {
            self.ratio * 0.95
        } else if fill < 0.1 {
            1.0
        } else {
            (self.ratio * 1.05).min(1.0)
        };
        let adjusted = Bitrate::from_bps((target.bps() as f64 * self.ratio) as u64);
        let pushed = if adjusted < MIN_PUSHBACK {
            target.min(MIN_PUSHBACK)
        } else {
            adjusted
        };
        pushed.max(min)
    }
}

/// The rate the encoder codes at when told `target` and the pushback rate `pushback` with
/// `DropFrame:true` (`VideoStreamEncoder::UpdateTargetBitrate`).
pub fn encoder_rate(target: Bitrate, pushback: Bitrate) -> Bitrate {
    let t = target.bps();
    if t == 0 {
        return target;
    }
    let reduce_ratio = t.saturating_sub(pushback.bps()) as f64 / t as f64;
    if reduce_ratio > 0.01 && target > CODEC_MIN {
        let reduce = ((t as f64 * reduce_ratio) as u64).min(t - CODEC_MIN.bps());
        if let Some(n) = t.checked_div(reduce) {
            let n = n.max(2);
            return Bitrate::from_bps(t - t / n);
        }
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn the_window_is_the_target_over_the_rtt_and_the_queue_averaged() {
        let mut rtts = FeedbackRtts::default();
        assert_eq!((rtts.mean(), rtts.min()), (None, None), "no RTT yet");
        for rtt in [80, 50, 120] {
            rtts.push(MS(rtt));
        }
        assert_eq!(rtts.mean(), Some(MS(83)));
        assert_eq!(rtts.min(), Some(MS(50)));
        let mut c = CongestionWindow::new(MS(350));
        assert_eq!(c.window(), None);
        // 1 Mbit/s × (50 + 350) ms = 50,000 B.
        c.update_window(Bitrate::from_kbps(1000), MS(50));
        assert_eq!(c.window(), Some(DataSize::from_bytes(50_000)));
        // Halfway to 0.5 Mbit/s × 0.4 s.
        c.update_window(Bitrate::from_kbps(500), MS(50));
        assert_eq!(c.window(), Some(DataSize::from_bytes(37_500)));
        // Never below two packets.
        for _ in 0..20 {
            c.update_window(Bitrate::from_kbps(10), MS(50));
        }
        assert_eq!(c.window(), Some(MIN_WINDOW));
        // Only the last 32 RTTs count.
        for _ in 0..32 {
            rtts.push(MS(200));
        }
        assert_eq!(rtts.mean(), Some(MS(200)));
        assert_eq!(rtts.min(), Some(MS(200)));
    }

    #[test]
    fn the_pushback_follows_the_fill_of_the_window() {
        let target = Bitrate::from_kbps(1000);
        let min = Bitrate::from_kbps(5);
        let bytes = DataSize::from_bytes;
        let mut c = CongestionWindow::new(MS(350));
        assert_eq!(
            c.pushback(target, bytes(80_000), min),
            target,
            "no window yet"
        );
        c.update_window(target, MS(50));
        // Half full: the ratio stays at 1.
        assert_eq!(c.pushback(target, bytes(25_000), min), target);
        // Overfull by more than half: × 0.9 each time, then × 0.95 once less full.
        assert_eq!(
            c.pushback(target, bytes(80_000), min),
            Bitrate::from_kbps(900)
        );
        assert_eq!(
            c.pushback(target, bytes(80_000), min),
            Bitrate::from_kbps(810)
        );
        assert_eq!(
            c.pushback(target, bytes(60_000), min),
            Bitrate::from_bps(769_500)
        );
        // Back within the window: × 1.05.
        assert_eq!(
            c.pushback(target, bytes(40_000), min),
            Bitrate::from_bps(807_975)
        );
        // Nearly empty: back to the target at once.
        assert_eq!(c.pushback(target, bytes(1_000), min), target);
        // Never below 30 kbit/s unless the target is.
        for _ in 0..100 {
            c.pushback(target, bytes(1_000_000), min);
        }
        assert_eq!(c.pushback(target, bytes(1_000_000), min), MIN_PUSHBACK);
        assert_eq!(
            c.pushback(Bitrate::from_kbps(20), bytes(1_000_000), min),
            Bitrate::from_kbps(20)
        );
        // What the encoder is given: the pushback through the frame dropping.
        assert_eq!(c.encoder(), None);
        c.push_back(target, bytes(1_000_000), min);
        assert_eq!(c.encoder(), Some(Bitrate::from_kbps(500)));
    }

    #[test]
    fn the_encoder_drops_at_most_every_other_frame() {
        let t = Bitrate::from_kbps(1000);
        assert_eq!(encoder_rate(t, t), t);
        // 0.5% reduction: below the 1% threshold.
        assert_eq!(encoder_rate(t, Bitrate::from_kbps(995)), t);
        // 10%: one frame in 10.
        assert_eq!(
            encoder_rate(t, Bitrate::from_kbps(900)),
            Bitrate::from_kbps(900)
        );
        // 30%: one in 3.
        assert_eq!(
            encoder_rate(t, Bitrate::from_kbps(700)),
            Bitrate::from_bps(666_667)
        );
        // 97%: every other frame, no more.
        assert_eq!(
            encoder_rate(t, Bitrate::from_kbps(30)),
            Bitrate::from_kbps(500)
        );
        // At the codec's minimum nothing is dropped.
        assert_eq!(encoder_rate(CODEC_MIN, Bitrate::from_kbps(10)), CODEC_MIN);
    }
}
