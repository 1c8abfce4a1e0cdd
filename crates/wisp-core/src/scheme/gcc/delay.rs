//! The send side's delay-based detector: libwebrtc's burst grouping (`InterArrivalDelta`), the
//! trendline filter and the over-use detector, fed one acknowledged packet at a time in arrival
//! order (libwebrtc `DelayBasedBwe::IncomingPacketFeedback`). Shared by `gcc-twcc` and `gcc`.

use super::arrival::{ArrivalFilter, FilterKind};
use super::grouping::{Grouper, Prefilter};
use super::overuse::{BandwidthUsage, OveruseDetector, ThresholdConfig};
use crate::time::{Duration, Instant};
use crate::units::DataSize;

/// Grouping → trendline → over-use detector.
#[derive(Clone, Debug)]
pub struct DelayDetector {
    grouper: Grouper,
    filter: ArrivalFilter,
    detector: OveruseDetector,
}

impl DelayDetector {
    /// Groups of `interval` (5 ms), the given threshold's gains.
    pub fn new(interval: Duration, threshold: ThresholdConfig) -> Self {
        DelayDetector {
            grouper: Grouper::new(Prefilter::Libwebrtc, interval),
            filter: ArrivalFilter::new(FilterKind::Trendline),
            detector: OveruseDetector::new(threshold),
        }
    }

    /// A packet sent at `send` of `size` arrived at `at`.
    pub fn on_packet(&mut self, send: Instant, at: Instant, size: DataSize) {
        if let Some(delta) = self.grouper.on_packet(send, at, size) {
            let m = self.filter.update(&delta, self.detector.state());
            self.detector
                .detect(m, delta.send_delta_ms, self.filter.num_deltas(), at);
        }
    }

    pub fn state(&self) -> BandwidthUsage {
        self.detector.state()
    }
}
