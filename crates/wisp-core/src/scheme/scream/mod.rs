//! `scream` — Self-Clocked Rate Adaptation for Multimedia version 2, SCReAMv2
//! (draft-ietf-ccwg-rfc8298bis-screamv2-00, Johansson, Westerlund, Kühlewind, 18 May 2026;
//! Experimental, obsoletes RFC 8298), as a video call. Written from the draft's pseudocode,
//! its constants the draft's RECOMMENDED values (the public implementation,
//! EricssonResearch/scream, was read for facts only, no code taken).
//!
//! **Receiver** ([`receiver`], §5): RFC 8888 feedback ([`crate::ccfb`]) on the data units
//! received since the previous report, sent on a frame's last data unit, after N = 16 data
//! units, and at the latest 40 ms after the previous report.
//!
//! **Sender** ([`sender`]), per feedback:
//!
//! * §4.1: bytes_in_flight (the bytes after the highest acknowledged data unit), its maxima per
//!   RTT (max_bytes_in_flight, max_bytes_in_flight_prev), bytes_newly_acked (lost data units
//!   included) and bytes_newly_acked_ce (the metric blocks' ECN bits = CE);
//! * qdelay as RFC 6817 (LEDBAT) computes it: the one-way delay less its minimum over ten
//!   one-minute buckets; s_rtt as RFC 6298 smooths (gain 1/8);
//! * §4.2.1.3, l4s_alpha: the marked fraction of the data units delivered since the last
//!   update, at least every min(10 ms, s_rtt), fast attack (L4S_AVG_G_UP 1/8), slow decay
//!   (L4S_AVG_G_DOWN 1/128);
//! * §4.2.1.4, qdelay_avg: slow attack (QDELAY_AVG_G 1/4), fast decay, every
//!   min(VIRTUAL_RTT, s_rtt); with `reduce-jitter`, qdelay_dev_norm (QDELAY_DEV_AVG_G 1/64,
//!   QDELAY_DEV_NORM 25 ms, QDELAY_DEV_NORM_TH 1);
//! * §4.2.1.4.1, the qdelay target between QDELAY_TARGET_LO (60 ms) and QDELAY_TARGET_HI
//!   (400 ms), raised when competing loss-based flows are detected (the mean plus standard
//!   deviation of qdelay/QDELAY_TARGET_LO over its history; ×1.5 when loss_event_rate > 0.002);
//! * §4.2.2.1, the reduction, at most once per min(VIRTUAL_RTT, s_rtt): on loss ref_wnd ×=
//!   BETA_LOSS (0.7); on CE in classic mode ×= BETA_ECN (0.8), in L4S mode ×= 1 − backoff with
//!   backoff = l4s_alpha/2 / max(1, s_rtt/VIRTUAL_RTT), scaled by max(0.25, scl_t) when
//!   qdelay < qdelay_target/4 (scl_t = clamp((8·(ref_wnd − ref_wnd_i)/ref_wnd_i)², 0.1, 1)),
//!   and ref_wnd first taken down to max_bytes_in_flight_prev after 100 RTTs without
//!   congestion; on queueing delay (a virtual mark) ×= 1 − l4s_alpha_v/2 / max(1,
//!   s_rtt/VIRTUAL_RTT) with l4s_alpha_v rising from 0 at qdelay_avg = qdelay_target/2 to 1 at
//!   qdelay_target; ref_wnd ≥ MIN_REF_WND (3000 B); the inflection point ref_wnd_i taken at
//!   most every 10 s_rtt;
//! * §4.2.2.2, the increase on every feedback: (bytes_newly_acked − bytes_newly_acked_ce)·
//!   min(1, MSS/ref_wnd)·min(1, s_rtt/VIRTUAL_RTT)·max(0.25, scl_t), times the multiplicative
//!   factor 1 + MUL_INCREASE_FACTOR (0.02)·ref_wnd/MSS, held back to
//!   1 + (factor − 1)·post_congestion_scale·scl_t, post_congestion_scale rising from 0 to 1
//!   over POST_CONGESTION_DELAY_RTT (100) RTTs after congestion — SCReAMv2's multiplicative
//!   increase, which replaces RFC 8298's fast increase mode (§1.1); applied only while
//!   ref_wnd + increment ≤ MSS + BYTES_IN_FLIGHT_HEAD_ROOM (1.5)·max(max_bytes_in_flight,
//!   max_bytes_in_flight_prev) and target_bitrate < TARGET_BITRATE_MAX;
//! * §4.3.1, send_wnd = ref_wnd·ref_wnd_overhead − bytes_in_flight, ref_wnd_overhead from
//!   REF_WND_OVERHEAD_MAX (3) down to REF_WND_OVERHEAD_MIN (1.5) with qdelay_dev_norm;
//! * §4.3.2, pace_bitrate = max(RATE_PACE_MIN, target_bitrate)·PACKET_PACING_HEADROOM (1.5),
//!   relaxed up to MAX_RELAXED_PACING_FACTOR (4) as target_bitrate nears TARGET_BITRATE_MAX
//!   (from RELAXED_PACING_LIMIT_LOW, 0.8, of it);
//! * §4.4, target_bitrate = 8·ref_wnd/s_rtt · (1 − min(0.2, max(0, ref_wnd_ratio − 0.1))) ·
//!   MSS/(MSS + PACKET_OVERHEAD) / (1.2 + rate_adjust_factor + frame_size_dev), within
//!   [TARGET_BITRATE_MIN, TARGET_BITRATE_MAX]; rate_adjust_factor an I controller (gain 1/16)
//!   on the data unit queue's delay against frame_period/4, frame_size_dev the EWMA (1/64) of
//!   the frames' excess over the nominal size.
//!
//! The sender answers [`Allowance::WindowedRate`](crate::controller::Allowance): the encoder's
//! target, the send window and the pacing rate; the call's source (`gcc`'s: 30 frames/s, audio
//! 32 kbit/s) discards video that waited longer than `discard-ms` (§3.3's discard of the data
//! unit queue, and asks for a key frame).
//!
//! | key | default | draft |
//! |---|---|---|
//! | `start-kbps`, `min-kbps`, `max-kbps` | 300, 50, 2500 | the target before the first RTT; TARGET_BITRATE_MIN, TARGET_BITRATE_MAX (§4.4: no values given; the call's encoder range) |
//! | `pace-factor`, `audio-kbps` | 1.0 (pace_bitrate itself), 32 | |
//! | `ecn` | `off` (`classic`: ECT(0), BETA_ECN; `l4s`: ECT(1), IS_L4S) | §4.2.1.2, §4.2.1.3 |
//! | `qdelay-target-lo-ms`, `qdelay-target-hi-ms` | 60, 400 | §4.2.2 |
//! | `competing-flows` | `true` | §4.2.1.4.1 (MAY be turned off) |
//! | `min-ref-wnd-bytes`, `mss-bytes` | 3000, 1000 | §4.2.2 |
//! | `bytes-in-flight-head-room`, `beta-loss`, `beta-ecn` | 1.5, 0.7, 0.8 | §4.2.2 |
//! | `post-congestion-delay-rtts`, `mul-increase-factor` | 100, 0.02 | §4.2.2 |
//! | `virtual-rtt-ms` | 25 | §4.2.2 |
//! | `l4s-avg-g-up`, `l4s-avg-g-down` | 0.125, 0.0078125 | §4.2.1.3 |
//! | `qdelay-avg-g` | 0.25 | §4.2.1.4 |
//! | `reduce-jitter`, `qdelay-dev-avg-g`, `qdelay-dev-norm-ms`, `qdelay-dev-norm-th` | `false`, 0.015625, 25, 1.0 | §4.2.1.4 |
//! | `min-queue-delay-dev-scale` | 0.1 | §4.2.2 |
//! | `ref-wnd-overhead-min`, `ref-wnd-overhead-max` | 1.5, 3.0 | §4.3.1 |
//! | `rate-pace-min-kbps`, `packet-pacing-headroom`, `max-relaxed-pacing-factor`, `relaxed-pacing-limit-low` | 50, 1.5, 4.0, 0.8 | §4.3.2 |
//! | `packet-overhead-bytes`, `rate-adjust-gain`, `frame-size-dev-alpha` | 20, 0.0625, 0.015625 | §4.4 |
//! | `feedback-packets`, `feedback-interval-ms` | 16, 40 | §5 |
//! | `discard-ms` | 1000 (`none`: never) | §3.3 (a MAY; the threshold is wisp's) |
//!
//! Deviations:
//! * No reordering window (§4.2.1.1, SHOULD): a data unit RFC 8888 reports not received is
//!   lost at once. wisp's RFC 8888 receiver does not report a packet again once covered
//!   ([`crate::ccfb`]), so a late one could not be taken back; wisp's links do not reorder.
//! * The clock drift compensation (§4.5) is not implemented: the simulator's clocks do not
//!   drift.
//! * "Limit ref_wnd when the target_bitrate has reached TARGET_BITRATE_MAX" (§4.2.2.2) is left
//!   to the C++ implementation by the draft and is not implemented; the other mechanism (the
//!   restore to max_bytes_in_flight_prev on L4S congestion after 100 RTTs) is.
//! * How often §4.2.1.4.1's history is fed and over what loss_event_rate is estimated are not
//!   given: one sample per qdelay_avg update (every min(VIRTUAL_RTT, s_rtt)), the last 200 for
//!   the variance and the last 50 for the average; loss_event_rate an EWMA (1/16) per RTT of
//!   whether the RTT held a loss.
//! * §4.4's inputs: frame_period is the call's (1/30 s), not estimated; a frame's size and its
//!   queue delay media_qdelay are taken when its last packet leaves (its size on the wire, and
//!   how long that packet waited since the frame was queued).
//! * The target before the first RTT sample is `start-kbps` (the draft's target_bitrate
//!   starts at 0 and s_rtt at 0; 8·ref_wnd/s_rtt is undefined until an RTT is measured).
//! * A feedback timeout (wisp's, the draft has none): with bytes in flight and no feedback
//!   for 1 s, what is in flight is forgotten and ref_wnd falls to MIN_REF_WND, so that a
//!   window closed by lost packets reopens.
//! * MSS is the draft's 1000 bytes although the call's packets are up to 1240 bytes on the
//!   wire (MSS is a scaling constant of the increase and of the target; `mss-bytes=1240`
//!   gives the data unit size).
//! * ECN: the sender's packets carry ECT(1) with `ecn=l4s`, ECT(0) with `ecn=classic`
//!   ([`ScreamSender::ecn_codepoint`]); the receiver reports each packet's arrival codepoint in
//!   RFC 8888's ECN bits. In the simulator a `step` or `dualpi2` queue (or `codel`/`pie` with
//!   `ecn=on`) marks them.
//! * The RTT sample is the feedback's arrival less the newest received data unit's send time
//!   and its hold at the receiver (RFC 8888's ATO), on 1/1024-s ATO units.
//! * Multiple streams, their priorities and the coupled congestion control (§3) are not
//!   implemented: one call is one stream.

pub mod rate;
pub mod receiver;
pub mod sender;
pub mod window;

pub use receiver::ScreamReceiver;
pub use sender::ScreamSender;

use super::call::CallRates;
use super::params::{Checked, Given, Validate, check, range, scheme_config};
use super::registry::Scheme;
use super::{Built, Halves, SchemeContext, listed_as};
use crate::pacer::Pacer;
use crate::time::Duration;
use crate::units::serde_as::{bytes, kbps, ms};
use crate::units::{Bitrate, DataSize};
use serde::{Deserialize, Serialize};

/// How the sender uses ECN (§4.2.1.2, §4.2.1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnMode {
    /// Not-ECT.
    #[default]
    Off,
    /// ECT(0), CE scales ref_wnd by BETA_ECN.
    Classic,
    /// ECT(1), IS_L4S: CE scales ref_wnd by 1 − l4s_alpha/2.
    L4s,
}

scheme_config! {
    /// Configuration of `scream` (the draft's constant names, in kebab case).
    #[derive(Clone, Debug, PartialEq)]
    pub struct ScreamConfig {
        /// The target before the first RTT (`start-kbps`), TARGET_BITRATE_MIN (`min-kbps`),
        /// TARGET_BITRATE_MAX (`max-kbps`), the audio and the pacer's rate as a multiple of
        /// pace_bitrate (`pace-factor`, 1: pace_bitrate itself).
        #[group]
        pub call: CallRates,
        /// ECN: off, classic (ECT(0), BETA_ECN) or l4s (ECT(1), IS_L4S).
        pub ecn: EcnMode,
        /// QDELAY_TARGET_LO, the lowest (and the initial) qdelay target, ms.
        #[serde(rename = "qdelay-target-lo-ms", with = "ms")]
        pub qdelay_target_lo: Duration,
        /// QDELAY_TARGET_HI, the highest qdelay target, ms.
        #[serde(rename = "qdelay-target-hi-ms", with = "ms")]
        pub qdelay_target_hi: Duration,
        /// Raise the qdelay target when competing loss-based flows are detected (§4.2.1.4.1).
        pub competing_flows: bool,
        /// MIN_REF_WND, the smallest reference window, bytes.
        #[serde(rename = "min-ref-wnd-bytes", with = "bytes")]
        pub min_ref_wnd: DataSize,
        /// MSS, the maximum segment size, bytes.
        #[serde(rename = "mss-bytes", with = "bytes")]
        pub mss: DataSize,
        /// BYTES_IN_FLIGHT_HEAD_ROOM, how far ref_wnd may grow beyond the bytes in flight.
        pub bytes_in_flight_head_room: f64,
        /// BETA_LOSS, ref_wnd's scale on a loss event.
        pub beta_loss: f64,
        /// BETA_ECN, ref_wnd's scale on a classic ECN event.
        pub beta_ecn: f64,
        /// POST_CONGESTION_DELAY_RTT, the RTTs after congestion the multiplicative increase is
        /// held back over.
        pub post_congestion_delay_rtts: f64,
        /// MUL_INCREASE_FACTOR, the multiplicative increase per RTT as a fraction of ref_wnd.
        pub mul_increase_factor: f64,
        /// VIRTUAL_RTT, ms.
        #[serde(rename = "virtual-rtt-ms", with = "ms")]
        pub virtual_rtt: Duration,
        /// L4S_AVG_G_UP, l4s_alpha's gain when the marked fraction rises.
        pub l4s_avg_g_up: f64,
        /// L4S_AVG_G_DOWN, l4s_alpha's decay.
        pub l4s_avg_g_down: f64,
        /// QDELAY_AVG_G, qdelay_avg's gain.
        pub qdelay_avg_g: f64,
        /// REDUCE_JITTER, the optional jitter filtering (qdelay_dev_norm).
        pub reduce_jitter: bool,
        /// QDELAY_DEV_AVG_G, qdelay_dev_norm's gain.
        pub qdelay_dev_avg_g: f64,
        /// QDELAY_DEV_NORM, qdelay_dev_norm's normalisation, ms.
        #[serde(rename = "qdelay-dev-norm-ms", with = "ms")]
        pub qdelay_dev_norm: Duration,
        /// QDELAY_DEV_NORM_TH, the threshold of the jitter's restriction.
        pub qdelay_dev_norm_th: f64,
        /// MIN_QUEUE_DELAY_DEV_SCALE, the least the jitter scales the backoff and increase.
        pub min_queue_delay_dev_scale: f64,
        /// REF_WND_OVERHEAD_MIN, the least bytes in flight may exceed ref_wnd by (a factor).
        pub ref_wnd_overhead_min: f64,
        /// REF_WND_OVERHEAD_MAX, the most bytes in flight may exceed ref_wnd by (a factor).
        pub ref_wnd_overhead_max: f64,
        /// RATE_PACE_MIN, the lowest pacing rate, kbit/s.
        #[serde(rename = "rate-pace-min-kbps", with = "kbps")]
        pub rate_pace_min: Bitrate,
        /// PACKET_PACING_HEADROOM, the pacing rate over the target.
        pub packet_pacing_headroom: f64,
        /// MAX_RELAXED_PACING_FACTOR, the most the pacing is relaxed at the maximum target.
        pub max_relaxed_pacing_factor: f64,
        /// RELAXED_PACING_LIMIT_LOW, the fraction of TARGET_BITRATE_MAX the relaxation starts at.
        pub relaxed_pacing_limit_low: f64,
        /// PACKET_OVERHEAD, the packetisation overhead, bytes.
        #[serde(rename = "packet-overhead-bytes", with = "bytes")]
        pub packet_overhead: DataSize,
        /// RATE_ADJUST_GAIN, the gain of the data unit queue's compensation.
        pub rate_adjust_gain: f64,
        /// FRAME_SIZE_DEV_ALPHA, the gain of the frame sizes' compensation.
        pub frame_size_dev_alpha: f64,
        /// N, the data units after which the receiver reports.
        pub feedback_packets: u32,
        /// The longest interval between reports while data units wait, ms.
        #[serde(rename = "feedback-interval-ms", with = "ms")]
        pub feedback_interval: Duration,
        /// Video waiting longer than this in the sender is discarded, ms (`none`: never).
        #[serde(rename = "discard-ms", with = "opt_ms")]
        pub discard: Option<Duration>,
    }
}

/// An optional duration in ms (`none` when absent).
mod opt_ms {
    use crate::time::Duration;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        v.map(|d| d.as_millis_f64()).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.map(Duration::from_millis_f64))
    }
}

impl Default for ScreamConfig {
    /// The draft's RECOMMENDED values (§4.2–§4.4, §5); the rates are the call's.
    fn default() -> Self {
        let ms = Duration::from_millis;
        ScreamConfig {
            call: CallRates {
                pace_factor: 1.0,
                ..CallRates::default()
            },
            ecn: EcnMode::Off,
            qdelay_target_lo: ms(60),
            qdelay_target_hi: ms(400),
            competing_flows: true,
            min_ref_wnd: DataSize::from_bytes(3000),
            mss: DataSize::from_bytes(1000),
            bytes_in_flight_head_room: 1.5,
            beta_loss: 0.7,
            beta_ecn: 0.8,
            post_congestion_delay_rtts: 100.0,
            mul_increase_factor: 0.02,
            virtual_rtt: ms(25),
            l4s_avg_g_up: 1.0 / 8.0,
            l4s_avg_g_down: 1.0 / 128.0,
            qdelay_avg_g: 0.25,
            reduce_jitter: false,
            qdelay_dev_avg_g: 1.0 / 64.0,
            qdelay_dev_norm: ms(25),
            qdelay_dev_norm_th: 1.0,
            min_queue_delay_dev_scale: 0.1,
            ref_wnd_overhead_min: 1.5,
            ref_wnd_overhead_max: 3.0,
            rate_pace_min: Bitrate::from_kbps(50),
            packet_pacing_headroom: 1.5,
            max_relaxed_pacing_factor: 4.0,
            relaxed_pacing_limit_low: 0.8,
            packet_overhead: DataSize::from_bytes(20),
            rate_adjust_gain: 1.0 / 16.0,
            frame_size_dev_alpha: 1.0 / 64.0,
            feedback_packets: 16,
            feedback_interval: ms(40),
            discard: Some(ms(1000)),
        }
    }
}

impl ScreamConfig {
    /// The plain numbers and their ranges, `(key, value, lo, hi)`.
    fn numbers(&self) -> [(&'static str, f64, f64, f64); 18] {
        [
            (
                "bytes-in-flight-head-room",
                self.bytes_in_flight_head_room,
                1.0,
                100.0,
            ),
            ("beta-loss", self.beta_loss, 0.01, 1.0),
            ("beta-ecn", self.beta_ecn, 0.01, 1.0),
            (
                "post-congestion-delay-rtts",
                self.post_congestion_delay_rtts,
                0.001,
                1e6,
            ),
            ("mul-increase-factor", self.mul_increase_factor, 0.0, 10.0),
            ("l4s-avg-g-up", self.l4s_avg_g_up, 1e-6, 1.0),
            ("l4s-avg-g-down", self.l4s_avg_g_down, 1e-6, 1.0),
            ("qdelay-avg-g", self.qdelay_avg_g, 1e-6, 1.0),
            ("qdelay-dev-avg-g", self.qdelay_dev_avg_g, 1e-6, 1.0),
            ("qdelay-dev-norm-th", self.qdelay_dev_norm_th, 1e-3, 100.0),
            (
                "min-queue-delay-dev-scale",
                self.min_queue_delay_dev_scale,
                0.0,
                1.0,
            ),
            (
                "ref-wnd-overhead-min",
                self.ref_wnd_overhead_min,
                1.0,
                100.0,
            ),
            (
                "ref-wnd-overhead-max",
                self.ref_wnd_overhead_max,
                1.0,
                100.0,
            ),
            (
                "packet-pacing-headroom",
                self.packet_pacing_headroom,
                1.0,
                100.0,
            ),
            (
                "max-relaxed-pacing-factor",
                self.max_relaxed_pacing_factor,
                1.0,
                100.0,
            ),
            (
                "relaxed-pacing-limit-low",
                self.relaxed_pacing_limit_low,
                0.0,
                0.999,
            ),
            ("rate-adjust-gain", self.rate_adjust_gain, 0.0, 10.0),
            ("frame-size-dev-alpha", self.frame_size_dev_alpha, 0.0, 1.0),
        ]
    }
}

impl Validate for ScreamConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        self.call.check(given)?;
        for (key, v, lo, hi) in self.numbers() {
            range(key, v, lo, hi, &format!("a number, {lo} to {hi}"))?;
        }
        let times = [
            ("qdelay-target-lo-ms", self.qdelay_target_lo, 1.0, 10_000.0),
            ("qdelay-target-hi-ms", self.qdelay_target_hi, 1.0, 10_000.0),
            ("virtual-rtt-ms", self.virtual_rtt, 1.0, 1000.0),
            ("qdelay-dev-norm-ms", self.qdelay_dev_norm, 0.1, 1000.0),
            ("feedback-interval-ms", self.feedback_interval, 1.0, 1000.0),
        ];
        for (key, d, lo, hi) in times {
            given.time_ms(key, d, lo, hi, &format!("a time in ms, {lo} to {hi}"))?;
        }
        if let Some(d) = self.discard {
            given.time_ms(
                "discard-ms",
                d,
                1.0,
                100_000.0,
                "a time in ms, 1 to 100000, or none",
            )?;
        }
        given.rate_kbps(
            "rate-pace-min-kbps",
            self.rate_pace_min,
            1.0,
            1e7,
            "a rate in kbit/s, 1 to 1e7",
        )?;
        let sizes = [
            (
                "min-ref-wnd-bytes",
                self.min_ref_wnd.bytes(),
                100,
                100_000_000,
            ),
            ("mss-bytes", self.mss.bytes(), 100, 65_535),
            (
                "packet-overhead-bytes",
                self.packet_overhead.bytes(),
                0,
                1000,
            ),
        ];
        for (key, v, lo, hi) in sizes {
            check(key, (lo..=hi).contains(&v), &format!("bytes, {lo} to {hi}"))?;
        }
        check(
            "feedback-packets",
            (1..=1000).contains(&self.feedback_packets),
            "a number of packets, 1 to 1000",
        )?;
        check(
            "qdelay-target-hi-ms",
            self.qdelay_target_hi >= self.qdelay_target_lo,
            "at least qdelay-target-lo-ms",
        )?;
        check(
            "ref-wnd-overhead-max",
            self.ref_wnd_overhead_max >= self.ref_wnd_overhead_min,
            "at least ref-wnd-overhead-min",
        )
    }
}

impl Scheme for ScreamConfig {
    type Sender = Box<ScreamSender>;
    type Receiver = Box<ScreamReceiver>;
    listed_as! {
        "scream",
        "SCReAMv2 (draft-ietf-ccwg-rfc8298bis-screamv2): reference window on loss, ECN-CE (classic or L4S) and queueing delay, paced send window, target bitrate from ref_wnd/RTT, RFC 8888 feedback, video call",
        ScreamConfig::default(),
    }

    fn build(&self, mut ctx: SchemeContext) -> Built<Self> {
        let media = self.call.media();
        let sender = Box::new(ScreamSender::new(self, media.fps));
        let receiver = Box::new(ScreamReceiver::new(self));
        let mtu = ctx.mtu();
        Ok(Halves {
            sender,
            receiver,
            source: ctx.media_source(media),
            // §4.3.2: t_pace = data_unit_size·8/pace_bitrate between data units.
            pacer: Pacer::new(Duration::ZERO),
            mtu,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::scheme::SchemeConfig;

    #[test]
    fn parameters_parse_check_and_print() {
        let c: SchemeConfig = "scream:ecn=l4s,beta-loss=0.6,qdelay-target-lo-ms=40,discard-ms=none"
            .parse()
            .unwrap();
        assert_eq!(
            c.to_string(),
            "scream:ecn=l4s,qdelay-target-lo-ms=40,beta-loss=0.6,discard-ms=none"
        );
        assert_eq!(
            "scream:mss-bytes=1000,virtual-rtt-ms=25"
                .parse::<SchemeConfig>()
                .unwrap()
                .to_string(),
            "scream"
        );
        for bad in [
            "scream:beta-loss=0",
            "scream:beta-loss=1.5",
            "scream:ecn=prague",
            "scream:qdelay-target-hi-ms=30",
            "scream:mss-bytes=10",
            "scream:feedback-packets=0",
            "scream:ref-wnd-overhead-max=1.2",
            "scream:min-kbps=3000",
            "scream:fast-increase=true",
        ] {
            assert!(bad.parse::<SchemeConfig>().is_err(), "{bad}");
        }
    }
}
