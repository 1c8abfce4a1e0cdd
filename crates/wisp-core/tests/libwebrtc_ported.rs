//! libwebrtc's unit tests of the Kalman-era GCC receiver, as ported to Python in aiortc's
//! `tests/test_rate.py` (aiortc/aiortc), ported again here: same inputs, same expected outputs,
//! same (exact) tolerances. Test names follow the Python ones.
//!
//! * `AimdRateControlTest` (libwebrtc `aimd_rate_control_unittest.cc`): all eight tests.
//! * `InterArrivalTest` (libwebrtc `inter_arrival_unittest.cc`): all tests except the four
//!   timestamp-wrap tests — wisp's send times are 64-bit nanoseconds and never wrap.
//! * `OveruseDetectorTest` (libwebrtc `overuse_detector_unittest.cc`): all eight tests, including
//!   the Gaussian-noise ones, whose noise comes from NumPy's legacy generator seeded with 21 (the
//!   Mersenne Twister and the polar Gaussian are re-implemented below for that).
//! * `RemoteBitrateEstimatorTest.test_capacity_drop` (libwebrtc
//!   `remote_bitrate_estimator_abs_send_time_unittest.cc` `TestCapacityDrop`).
//!
//! Times: the Python tests use integer milliseconds for arrivals and 90 kHz RTP or 6.18
//! fixed-point abs-send-time ticks for departures; they are converted to wisp's nanoseconds
//! exactly (RTP: multiples of 1 ms here) or to the nearest nanosecond (abs-send-time).

use wisp_core::scheme::gcc::arrival::{KalmanConfig, KalmanEstimator};
use wisp_core::scheme::gcc::{
    AimdConfig, AimdRateControl, BandwidthUsage, GccConfig, GroupDelta, Grouper, OveruseDetector,
    Prefilter, RateControlState, RemoteEstimator, ThresholdConfig,
};
use wisp_core::time::ms;
use wisp_core::{Bitrate, DataSize, Duration, Instant};

fn at_ms(t: i64) -> Instant {
    Instant::from_millis(t as u64)
}

// ---------------------------------------------------------------------------------------------
// AimdRateControlTest

fn aimd() -> AimdRateControl {
    AimdRateControl::new(AimdConfig::default())
}

fn bps(b: u64) -> Option<Bitrate> {
    Some(Bitrate::from_bps(b))
}

#[test]
fn aimd_test_update_normal() {
    let mut rc = aimd();
    rc.set_estimate(Bitrate::from_bps(300_000), at_ms(0));
    let e = rc.update(BandwidthUsage::Normal, bps(300_000), at_ms(0));
    assert_eq!(e, bps(301_000));
    assert_eq!(rc.state(), RateControlState::Increase);
    assert_eq!(rc.max_rate_estimate(), (None, 0.4));
}

#[test]
fn aimd_test_update_normal_no_estimated_throughput() {
    let mut rc = aimd();
    rc.set_estimate(Bitrate::from_bps(300_000), at_ms(0));
    assert_eq!(
        rc.update(BandwidthUsage::Normal, None, at_ms(0)),
        bps(301_000)
    );
}

#[test]
fn aimd_test_update_overuse() {
    let mut rc = aimd();
    rc.set_estimate(Bitrate::from_bps(300_000), at_ms(0));
    let e = rc.update(BandwidthUsage::Overusing, bps(300_000), at_ms(0));
    assert_eq!(e, bps(255_000));
    assert_eq!(rc.state(), RateControlState::Hold);
    assert_eq!(rc.max_rate_estimate(), (Some(300.0), 0.4));
}

#[test]
fn aimd_test_update_underuse() {
    let mut rc = aimd();
    rc.set_estimate(Bitrate::from_bps(300_000), at_ms(0));
    let e = rc.update(BandwidthUsage::Underusing, bps(300_000), at_ms(0));
    assert_eq!(e, bps(300_000));
    assert_eq!(rc.state(), RateControlState::Hold);
    assert_eq!(rc.max_rate_estimate(), (None, 0.4));
}

#[test]
fn aimd_test_additive_rate_increase() {
    let mut rc = aimd();
    let acked = bps(100_000);
    rc.set_estimate(Bitrate::from_bps(100_000), at_ms(0));
    let mut e = None;
    let mut now = 0;
    for t in (0..20_000).step_by(100) {
        now = t;
        e = rc.update(BandwidthUsage::Normal, acked, at_ms(t));
    }
    assert_eq!(e, bps(160_000));
    assert!(!rc.near_max());
    // Over-use → hold.
    assert_eq!(
        rc.update(BandwidthUsage::Overusing, acked, at_ms(now)),
        bps(85_000)
    );
    assert!(rc.near_max());
    now += 1000;
    // Back to normal → increase from now.
    assert_eq!(
        rc.update(BandwidthUsage::Normal, acked, at_ms(now)),
        bps(85_000)
    );
    assert!(rc.near_max());
    now += 1000;
    // Still normal → additive increase.
    assert_eq!(
        rc.update(BandwidthUsage::Normal, acked, at_ms(now)),
        bps(94_444)
    );
    assert!(rc.near_max());
    now += 1000;
    assert_eq!(
        rc.update(BandwidthUsage::Overusing, acked, at_ms(now)),
        bps(85_000)
    );
    assert!(rc.near_max());
}

#[test]
fn aimd_test_clear_max_throughput() {
    let mut rc = aimd();
    let normal = bps(100_000);
    let high = bps(150_000);
    let mut now = 0;
    rc.set_estimate(Bitrate::from_bps(100_000), at_ms(now));
    rc.update(BandwidthUsage::Normal, normal, at_ms(now));
    now += 1000;
    rc.update(BandwidthUsage::Overusing, normal, at_ms(now));
    assert_eq!(rc.max_rate_estimate().0, Some(100.0));
    now += 1000;
    rc.update(BandwidthUsage::Normal, normal, at_ms(now));
    assert_eq!(rc.max_rate_estimate().0, Some(100.0));
    now += 1000;
    // A large increase in throughput clears the estimate.
    rc.update(BandwidthUsage::Normal, high, at_ms(now));
    assert_eq!(rc.max_rate_estimate().0, None);
    now += 1000;
    rc.update(BandwidthUsage::Overusing, high, at_ms(now));
    assert_eq!(rc.max_rate_estimate().0, Some(150.0));
    now += 1000;
    // Over-use with a large decrease in throughput.
    rc.update(BandwidthUsage::Overusing, normal, at_ms(now));
    assert_eq!(rc.max_rate_estimate().0, Some(100.0));
}

#[test]
fn aimd_test_bwe_limited_by_acked_bitrate() {
    let mut rc = aimd();
    rc.set_estimate(Bitrate::from_bps(10_000), at_ms(0));
    let mut e = None;
    for t in (0..20_000).step_by(100) {
        e = rc.update(BandwidthUsage::Normal, bps(10_000), at_ms(t));
    }
    assert_eq!(e, bps(25_000));
}

#[test]
fn aimd_test_bwe_not_limited_by_decreasing_acked_bitrate() {
    let mut rc = aimd();
    rc.set_estimate(Bitrate::from_bps(100_000), at_ms(0));
    let mut e = None;
    let mut now = 0;
    for t in (0..20_000).step_by(100) {
        now = t;
        e = rc.update(BandwidthUsage::Normal, bps(100_000), at_ms(t));
    }
    assert_eq!(e, bps(160_000));
    assert_eq!(
        rc.update(BandwidthUsage::Normal, bps(50_000), at_ms(now)),
        bps(160_000)
    );
}

// ---------------------------------------------------------------------------------------------
// InterArrivalTest (abs-send-time variant; microsecond send times, millisecond arrivals)

const TIMESTAMP_GROUP_LENGTH_US: i64 = 5000;
const MIN_STEP_US: i64 = 20;
const TRIGGER_NEW_GROUP_US: i64 = TIMESTAMP_GROUP_LENGTH_US + MIN_STEP_US;
const BURST_THRESHOLD_MS: i64 = 5;

struct InterArrival(Grouper);

impl InterArrival {
    fn new() -> Self {
        InterArrival(Grouper::new(
            Prefilter::Libwebrtc,
            Duration::from_micros(TIMESTAMP_GROUP_LENGTH_US as u64),
        ))
    }
    fn feed(&mut self, ts_us: i64, arrival_ms: i64, size: u64) -> Option<GroupDelta> {
        self.0.on_packet(
            Instant::from_micros(ts_us as u64),
            at_ms(arrival_ms),
            DataSize::from_bytes(size),
        )
    }
    fn computed(&mut self, ts_us: i64, arrival_ms: i64, size: u64, want: (i64, i64, i64)) {
        let d = self
            .feed(ts_us, arrival_ms, size)
            .unwrap_or_else(|| panic!("deltas expected at ts {ts_us} µs"));
        assert_eq!(
            (
                (d.send_delta_ms * 1000.0).round() as i64,
                d.arrival_delta_ms.round() as i64,
                d.size_delta
            ),
            want
        );
        assert_eq!(d.arrival_delta_ms.fract(), 0.0);
    }
    fn not_computed(&mut self, ts_us: i64, arrival_ms: i64, size: u64) {
        assert_eq!(self.feed(ts_us, arrival_ms, size), None, "at ts {ts_us} µs");
    }
}

#[test]
fn inter_arrival_test_first_packet() {
    InterArrival::new().not_computed(0, 17, 1);
}

#[test]
fn inter_arrival_test_first_group() {
    let mut ia = InterArrival::new();
    let (mut ts, mut arr) = (0, 17);
    ia.not_computed(ts, arr, 1);
    let g1 = arr;
    ts += TRIGGER_NEW_GROUP_US;
    arr += BURST_THRESHOLD_MS + 1;
    ia.not_computed(ts, arr, 2);
    let g2 = arr;
    ts += TRIGGER_NEW_GROUP_US;
    arr += BURST_THRESHOLD_MS + 1;
    ia.computed(ts, arr, 1, (TRIGGER_NEW_GROUP_US, g2 - g1, 1));
}

#[test]
fn inter_arrival_test_second_group() {
    let mut ia = InterArrival::new();
    let (mut ts, mut arr) = (0, 17);
    ia.not_computed(ts, arr, 1);
    let g1 = arr;
    ts += TRIGGER_NEW_GROUP_US;
    arr += BURST_THRESHOLD_MS + 1;
    ia.not_computed(ts, arr, 2);
    let g2 = arr;
    ts += TRIGGER_NEW_GROUP_US;
    arr += BURST_THRESHOLD_MS + 1;
    ia.computed(ts, arr, 1, (TRIGGER_NEW_GROUP_US, g2 - g1, 1));
    let g3 = arr;
    ts += TRIGGER_NEW_GROUP_US;
    arr += BURST_THRESHOLD_MS + 1;
    ia.computed(ts, arr, 2, (TRIGGER_NEW_GROUP_US, g3 - g2, -1));
}

#[test]
fn inter_arrival_test_accumulated_group() {
    let mut ia = InterArrival::new();
    let (mut ts, mut arr) = (0, 17);
    ia.not_computed(ts, arr, 1);
    let (g1_ts, g1_arr) = (ts, arr);
    ts += TRIGGER_NEW_GROUP_US;
    arr += BURST_THRESHOLD_MS + 1;
    ia.not_computed(ts, 28, 2);
    for _ in 0..10 {
        ts += MIN_STEP_US;
        arr += BURST_THRESHOLD_MS + 1;
        ia.not_computed(ts, arr, 1);
    }
    let (g2_ts, g2_arr) = (ts, arr);
    ia.computed(
        2 * TRIGGER_NEW_GROUP_US,
        500,
        100,
        (g2_ts - g1_ts, g2_arr - g1_arr, 11),
    );
}

#[test]
fn inter_arrival_test_out_of_order_packet() {
    let mut ia = InterArrival::new();
    let (mut ts, mut arr) = (0, 17);
    ia.not_computed(ts, arr, 1);
    let (g1_ts, g1_arr) = (ts, arr);
    ts += TRIGGER_NEW_GROUP_US;
    arr += 11;
    ia.not_computed(ts, 28, 2);
    for _ in 0..10 {
        ts += MIN_STEP_US;
        arr += BURST_THRESHOLD_MS + 1;
        ia.not_computed(ts, arr, 1);
    }
    let (g2_ts, g2_arr) = (ts, arr);
    // An out-of-order packet.
    ia.not_computed(g1_ts, 281, 1);
    ia.computed(
        2 * TRIGGER_NEW_GROUP_US,
        500,
        100,
        (g2_ts - g1_ts, g2_arr - g1_arr, 11),
    );
}

#[test]
fn inter_arrival_test_out_of_order_within_group() {
    let mut ia = InterArrival::new();
    let (mut ts, mut arr) = (0, 17);
    ia.not_computed(ts, arr, 1);
    let (g1_ts, g1_arr) = (ts, arr);
    ts += TRIGGER_NEW_GROUP_US;
    arr += 11;
    ia.not_computed(ts, 28, 2);
    ts += 10 * MIN_STEP_US;
    let g2_ts = ts;
    for _ in 0..10 {
        arr += BURST_THRESHOLD_MS + 1;
        ia.not_computed(ts, arr, 1);
        ts -= MIN_STEP_US;
    }
    let g2_arr = arr;
    ia.not_computed(g1_ts, 281, 1);
    ia.computed(
        2 * TRIGGER_NEW_GROUP_US,
        500,
        100,
        (g2_ts - g1_ts, g2_arr - g1_arr, 11),
    );
}

#[test]
fn inter_arrival_test_two_bursts() {
    let mut ia = InterArrival::new();
    let (mut ts, mut arr) = (0, 17);
    ia.not_computed(ts, arr, 1);
    let (g1_ts, g1_arr) = (ts, arr);
    ts += TRIGGER_NEW_GROUP_US;
    arr = 100;
    for _ in 0..10 {
        ts += 30_000;
        arr += BURST_THRESHOLD_MS;
        ia.not_computed(ts, arr, 1);
    }
    let (g2_ts, g2_arr) = (ts, arr);
    ts += 30_000;
    arr += BURST_THRESHOLD_MS + 1;
    ia.computed(ts, arr, 100, (g2_ts - g1_ts, g2_arr - g1_arr, 9));
}

#[test]
fn inter_arrival_test_no_bursts() {
    let mut ia = InterArrival::new();
    let (mut ts, mut arr) = (0, 17);
    ia.not_computed(ts, arr, 1);
    let (g1_ts, g1_arr) = (ts, arr);
    ts += TRIGGER_NEW_GROUP_US;
    arr = 28;
    ia.not_computed(ts, arr, 2);
    let (g2_ts, g2_arr) = (ts, arr);
    ts += 30_000;
    arr += BURST_THRESHOLD_MS + 1;
    ia.computed(ts, arr, 100, (g2_ts - g1_ts, g2_arr - g1_arr, 1));
}

// ---------------------------------------------------------------------------------------------
// OveruseDetectorTest

/// NumPy's legacy `RandomState` (MT19937 seeded by `init_genrand`, 53-bit doubles, the polar
/// Gaussian with its cached second value), enough to replay `random.seed(21)`,
/// `random.normal(0, σ)` and `random.randint(0, 1)`.
struct NumpyLegacy {
    mt: [u32; 624],
    idx: usize,
    gauss: Option<f64>,
}

impl NumpyLegacy {
    fn seed(seed: u32) -> Self {
        let mut mt = [0u32; 624];
        mt[0] = seed;
        for i in 1..624 {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        NumpyLegacy {
            mt,
            idx: 624,
            gauss: None,
        }
    }

    fn next_u32(&mut self) -> u32 {
        if self.idx >= 624 {
            for i in 0..624 {
                let y = (self.mt[i] & 0x8000_0000) | (self.mt[(i + 1) % 624] & 0x7fff_ffff);
                let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
                self.mt[i] = self.mt[(i + 397) % 624] ^ (y >> 1) ^ mag;
            }
            self.idx = 0;
        }
        let mut y = self.mt[self.idx];
        self.idx += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    fn double(&mut self) -> f64 {
        let a = f64::from(self.next_u32() >> 5);
        let b = f64::from(self.next_u32() >> 6);
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }

    fn gauss(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        loop {
            let x1 = 2.0 * self.double() - 1.0;
            let x2 = 2.0 * self.double() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                let f = (-2.0 * r2.ln() / r2).sqrt();
                self.gauss = Some(f * x1);
                return f * x2;
            }
        }
    }

    fn normal(&mut self, sd: f64) -> f64 {
        sd * self.gauss()
    }
}

struct DetectorTest {
    grouper: Grouper,
    estimator: KalmanEstimator,
    detector: OveruseDetector,
    rng: NumpyLegacy,
    now_ms: i64,
    receive_time_ms: i64,
    /// 90 kHz ticks.
    rtp_timestamp: i64,
}

const PACKET_SIZE: u64 = 1200;

impl DetectorTest {
    fn new() -> Self {
        DetectorTest {
            grouper: Grouper::new(Prefilter::Libwebrtc, ms(5)),
            estimator: KalmanEstimator::new(KalmanConfig::default()),
            detector: OveruseDetector::new(ThresholdConfig::LIBWEBRTC),
            rng: NumpyLegacy::seed(21),
            now_ms: 0,
            receive_time_ms: 0,
            rtp_timestamp: 900,
        }
    }

    fn state(&self) -> BandwidthUsage {
        self.detector.state()
    }

    fn update_detector(&mut self, rtp_timestamp: i64, receive_ms: i64) {
        // 90 kHz ticks → ns (the tests only use whole milliseconds).
        let send = Instant::from_nanos((rtp_timestamp as u64) * 100_000 / 9);
        let now = at_ms(receive_ms);
        if let Some(d) = self
            .grouper
            .on_packet(send, now, DataSize::from_bytes(PACKET_SIZE))
        {
            let m = self.estimator.update(&d, self.detector.state());
            self.detector
                .detect(m, d.send_delta_ms, self.estimator.num_deltas(), now);
        }
    }

    fn advance_receive_time(&mut self, sd: f64) {
        let noisy = (self.now_ms as f64 + self.rng.normal(sd) + 0.5).trunc() as i64;
        self.receive_time_ms = self.receive_time_ms.max(noisy);
    }

    fn run_100000_samples(&mut self, packets_per_frame: usize, mean_ms: i64, sd: f64) -> u32 {
        let mut unique_overuse = 0;
        let mut last_overuse = -1i64;
        for i in 0..100_000i64 {
            for _ in 0..packets_per_frame {
                self.update_detector(self.rtp_timestamp, self.receive_time_ms);
            }
            self.rtp_timestamp += mean_ms * 90;
            self.now_ms += mean_ms;
            self.advance_receive_time(sd);
            if self.state() == BandwidthUsage::Overusing {
                if last_overuse + 1 != i {
                    unique_overuse += 1;
                }
                last_overuse = i;
            }
        }
        unique_overuse
    }

    fn run_until_overuse(
        &mut self,
        packets_per_frame: usize,
        mean_ms: i64,
        sd: f64,
        drift_per_frame_ms: i64,
    ) -> i64 {
        for i in 0..100_000 {
            for _ in 0..packets_per_frame {
                self.update_detector(self.rtp_timestamp, self.receive_time_ms);
            }
            self.rtp_timestamp += mean_ms * 90;
            self.now_ms += mean_ms + drift_per_frame_ms;
            self.advance_receive_time(sd);
            if self.state() == BandwidthUsage::Overusing {
                return i + 1;
            }
        }
        -1
    }
}

#[test]
fn overuse_detector_test_simple_non_overuse_30fps() {
    let mut t = DetectorTest::new();
    for _ in 0..1000 {
        t.update_detector(t.rtp_timestamp, t.now_ms);
        t.now_ms += 33;
        t.rtp_timestamp += 33 * 90;
    }
    assert_eq!(t.state(), BandwidthUsage::Normal);
}

#[test]
fn overuse_detector_test_simple_non_overuse_with_receive_variance() {
    let mut t = DetectorTest::new();
    for i in 0..1000 {
        t.update_detector(t.rtp_timestamp, t.now_ms);
        t.rtp_timestamp += 10 * 90;
        t.now_ms += if i % 2 == 1 { 10 - 5 } else { 10 + 5 };
        assert_eq!(t.state(), BandwidthUsage::Normal);
    }
}

#[test]
fn overuse_detector_test_simple_non_overuse_with_rtp_timestamp_variance() {
    let mut t = DetectorTest::new();
    for i in 0..1000 {
        t.update_detector(t.rtp_timestamp, t.now_ms);
        t.now_ms += 10;
        t.rtp_timestamp += if i % 2 == 1 {
            (10 - 5) * 90
        } else {
            (10 + 5) * 90
        };
        assert_eq!(t.state(), BandwidthUsage::Normal);
    }
}

#[test]
fn overuse_detector_test_simple_overuse_2000kbit_30fps() {
    let mut t = DetectorTest::new();
    assert_eq!(t.run_100000_samples(6, 33, 0.0), 0);
    assert_eq!(t.run_until_overuse(6, 33, 0.0, 1), 7);
}

#[test]
fn overuse_detector_test_simple_overuse_100kbit_10fps() {
    let mut t = DetectorTest::new();
    assert_eq!(t.run_100000_samples(1, 100, 0.0), 0);
    assert_eq!(t.run_until_overuse(1, 100, 0.0, 1), 7);
}

#[test]
fn overuse_detector_test_overuse_with_low_variance_2000kbit_30fps() {
    let mut t = DetectorTest::new();
    let frame_duration_ms = 33;
    let drift_per_frame_ms = 1;
    t.rtp_timestamp = frame_duration_ms * 90;
    // `random.randint(0, 1)` is always 0 (the upper bound is exclusive) and draws nothing.
    let offset = 0;
    for i in 0..1000 {
        for _ in 0..6 {
            t.update_detector(t.rtp_timestamp, t.now_ms);
        }
        t.rtp_timestamp += frame_duration_ms * 90;
        t.now_ms += if i % 2 == 1 {
            frame_duration_ms - offset
        } else {
            frame_duration_ms + offset
        };
        assert_eq!(t.state(), BandwidthUsage::Normal);
    }
    // A higher send pace, too high.
    for _ in 0..3 {
        for _ in 0..6 {
            t.update_detector(t.rtp_timestamp, t.now_ms);
        }
        t.now_ms += frame_duration_ms + drift_per_frame_ms * 6;
        t.rtp_timestamp += frame_duration_ms * 90;
        assert_eq!(t.state(), BandwidthUsage::Normal);
    }
    t.update_detector(t.rtp_timestamp, t.now_ms);
    assert_eq!(t.state(), BandwidthUsage::Overusing);
}

#[test]
fn overuse_detector_test_low_gaussian_variance_fast_drift_30kbit_3fps() {
    let mut t = DetectorTest::new();
    assert_eq!(t.run_100000_samples(1, 333, 3.0), 0);
    assert_eq!(t.run_until_overuse(1, 333, 3.0, 100), 4);
}

#[test]
fn overuse_detector_test_high_haussian_variance_30kbit_3fps() {
    let mut t = DetectorTest::new();
    assert_eq!(t.run_100000_samples(1, 333, 10.0), 0);
    assert_eq!(t.run_until_overuse(1, 333, 10.0, 1), 44);
}

// ---------------------------------------------------------------------------------------------
// RemoteBitrateEstimatorTest.test_capacity_drop

/// aiortc's `Stream`: 1500-byte frames at 30 fps through a link of `capacity`.
struct Stream {
    capacity: u64,
    send_time_us: u64,
    arrival_time_us: u64,
}

impl Stream {
    /// (send instant from the 6.18 abs-send-time ticks, arrival ms, size).
    fn next_frame(&mut self) -> (Instant, i64, u64) {
        let payload = 1500u64;
        let ticks = self.send_time_us * (1 << 18) / 1_000_000;
        let send =
            Instant::from_nanos(((ticks as u128 * 1_000_000_000 + (1 << 17)) / (1 << 18)) as u64);
        // Python's round(): exact here (the quotients are integers).
        let transmit = (payload * 8_000_000 + self.capacity / 2) / self.capacity;
        self.arrival_time_us = self.arrival_time_us.max(self.send_time_us) + transmit;
        self.send_time_us += 1_000_000 / 30;
        (send, (self.arrival_time_us / 1000) as i64, payload)
    }
}

#[test]
fn remote_bitrate_estimator_test_capacity_drop() {
    // aiortc's port: a 1-s rate window and a fixed 500-ms update interval.
    let config = GccConfig {
        prefilter: Prefilter::Libwebrtc,
        rate_window: Duration::from_millis(1000),
        update_interval: Some(Duration::from_millis(500)),
        ..GccConfig::default()
    };
    let mut estimator = RemoteEstimator::new(&config);
    let mut stream = Stream {
        capacity: 500_000,
        send_time_us: 0,
        arrival_time_us: 0,
    };
    let mut target = None;
    for _ in 0..1000 {
        let (send, arrival, size) = stream.next_frame();
        if let Some(r) = estimator.on_packet(at_ms(arrival), send, DataSize::from_bytes(size)) {
            target = Some(r);
        }
    }
    assert_eq!(target, bps(550_000));
    stream.capacity = 250_000;
    for _ in 0..1000 {
        let (send, arrival, size) = stream.next_frame();
        if let Some(r) = estimator.on_packet(at_ms(arrival), send, DataSize::from_bytes(size)) {
            target = Some(r);
        }
    }
    assert_eq!(target, bps(214_200));
}
