//! SCReAMv2's sender transmission control (draft-ietf-ccwg-rfc8298bis-screamv2-00 §4.3: the
//! send window and the pacing rate) and media rate control (§4.4: the encoder's target
//! bitrate from ref_wnd and s_rtt, with the data unit queue's and the frame sizes'
//! compensation). Bytes, seconds and bit/s as `f64`.

use super::ScreamConfig;

/// §4.3.1: ref_wnd_overhead = REF_WND_OVERHEAD_MIN + (MAX − MIN)·max(0, (TH −
/// qdelay_dev_norm)/TH).
pub fn ref_wnd_overhead(c: &ScreamConfig, qdelay_dev_norm: f64) -> f64 {
    let th = c.qdelay_dev_norm_th;
    c.ref_wnd_overhead_min
        + (c.ref_wnd_overhead_max - c.ref_wnd_overhead_min) * ((th - qdelay_dev_norm) / th).max(0.0)
}

/// §4.3.1: send_wnd = ref_wnd·ref_wnd_overhead − bytes_in_flight (no less than 0).
pub fn send_window(ref_wnd: f64, overhead: f64, bytes_in_flight: f64) -> f64 {
    (ref_wnd * overhead - bytes_in_flight).max(0.0)
}

/// §4.3.2: pace_bitrate = max(RATE_PACE_MIN, target_bitrate)·PACKET_PACING_HEADROOM, relaxed
/// (divided by up to MAX_RELAXED_PACING_FACTOR) as target_bitrate goes from
/// RELAXED_PACING_LIMIT_LOW·TARGET_BITRATE_MAX to TARGET_BITRATE_MAX.
pub fn pace_bitrate(c: &ScreamConfig, target_bitrate: f64) -> f64 {
    let pace = target_bitrate.max(c.rate_pace_min.bps() as f64) * c.packet_pacing_headroom;
    let nominal = target_bitrate / c.call.max.bps() as f64;
    let low = c.relaxed_pacing_limit_low;
    let scale = ((nominal - low) / (1.0 - low)).min(1.0);
    let scale = (1.0 - scale).clamp(1.0 / c.max_relaxed_pacing_factor, 1.0);
    pace / scale
}

/// §4.4's state: the compensation of the data unit queue and of the frame sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MediaRate {
    pub rate_adjust_factor: f64,
    pub frame_size_dev: f64,
}

impl MediaRate {
    /// §4.4, for each new media frame: the I controller rate_adjust_factor on the data unit
    /// queue's delay media_qdelay (s), in [0, 0.5], and frame_size_dev on the frame's size
    /// (bytes) against the nominal target_bitrate·frame_period/8, in [0, 0.2].
    pub fn on_frame(
        &mut self,
        c: &ScreamConfig,
        media_qdelay: f64,
        frame_size: f64,
        target_bitrate: f64,
        frame_period: f64,
    ) {
        let error = (media_qdelay - frame_period / 4.0) / frame_period;
        self.rate_adjust_factor =
            (self.rate_adjust_factor + error * c.rate_adjust_gain).clamp(0.0, 0.5);
        let nominal = target_bitrate * frame_period / 8.0;
        let deviation = ((frame_size - nominal) / nominal).max(0.0);
        let a = c.frame_size_dev_alpha;
        self.frame_size_dev = ((1.0 - a) * self.frame_size_dev + a * deviation).min(0.2);
    }

    /// §4.4: target_bitrate = tmp·8·ref_wnd/s_rtt within [TARGET_BITRATE_MIN,
    /// TARGET_BITRATE_MAX], tmp = (1 − min(0.2, max(0, ref_wnd_ratio − 0.1)))·MSS/(MSS +
    /// PACKET_OVERHEAD)/(1.2 + rate_adjust_factor + frame_size_dev).
    pub fn target_bitrate(&self, c: &ScreamConfig, ref_wnd: f64, s_rtt: f64) -> f64 {
        let mss = c.mss.bytes() as f64;
        let ratio = (mss / ref_wnd).min(1.0);
        let mut tmp = 1.0 - (ratio - 0.1).clamp(0.0, 0.2);
        tmp *= mss / (mss + c.packet_overhead.bytes() as f64);
        tmp /= 1.2 + self.rate_adjust_factor + self.frame_size_dev;
        let t = tmp * 8.0 * ref_wnd / s_rtt;
        t.clamp(c.call.min.bps() as f64, c.call.max.bps() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c() -> ScreamConfig {
        ScreamConfig::default()
    }

    /// ref_wnd_overhead: 3.0 with no jitter, 1.5 at qdelay_dev_norm = TH; send_wnd 10 000·3 −
    /// 25 000 = 5000, never negative.
    #[test]
    fn send_window_by_hand() {
        assert_eq!(ref_wnd_overhead(&c(), 0.0), 3.0);
        assert_eq!(ref_wnd_overhead(&c(), 1.0), 1.5);
        assert_eq!(ref_wnd_overhead(&c(), 1.5), 1.5);
        assert_eq!(send_window(10_000.0, 3.0, 25_000.0), 5000.0);
        assert_eq!(send_window(10_000.0, 3.0, 35_000.0), 0.0);
    }

    /// pace_bitrate with TARGET_BITRATE_MAX 2.5 Mbit/s: 1 Mbit/s → 1.5 Mbit/s (nominal 0.4,
    /// no relaxation); 2.25 Mbit/s (nominal 0.9: scale 0.5) → 3.375/0.5 = 6.75 Mbit/s; at the
    /// maximum ×4 (2.5·1.5·4 = 15 Mbit/s); 10 kbit/s → RATE_PACE_MIN 50 kbit/s·1.5.
    #[test]
    fn pacing_by_hand() {
        assert!((pace_bitrate(&c(), 1e6) - 1.5e6).abs() < 1e-6);
        assert!((pace_bitrate(&c(), 2.25e6) - 6.75e6).abs() < 1e-3);
        assert!((pace_bitrate(&c(), 2.5e6) - 15e6).abs() < 1e-3);
        assert!((pace_bitrate(&c(), 10e3) - 75e3).abs() < 1e-6);
    }

    /// target_bitrate: ref_wnd 30 000 B, s_rtt 100 ms, MSS 1000 (ratio 1/30 < 0.1: no scale
    /// down), overhead 20 B: 8·30 000/0.1·(1000/1020)/1.2 = 1 960 784 bit/s; with ref_wnd 4000
    /// (ratio 0.25 → ·0.85) and s_rtt 50 ms: 8·4000/0.05·0.85·(1000/1020)/1.2 = 444 444 bit/s.
    #[test]
    fn target_bitrate_by_hand() {
        let m = MediaRate::default();
        let t = m.target_bitrate(&c(), 30_000.0, 0.1);
        assert!((t - 2.4e6 * (1000.0 / 1020.0) / 1.2).abs() < 1e-3, "{t}");
        assert!((t - 1_960_784.3).abs() < 0.1);
        let t = m.target_bitrate(&c(), 4000.0, 0.05);
        assert!(
            (t - 640_000.0 * 0.85 * 1000.0 / 1020.0 / 1.2).abs() < 1e-3,
            "{t}"
        );
        // Clipped to TARGET_BITRATE_MAX and MIN.
        assert_eq!(m.target_bitrate(&c(), 1e7, 0.01), 2.5e6);
        assert_eq!(
            m.target_bitrate(&c(), 3000.0, 10.0),
            c().call.min.bps() as f64
        );
    }

    /// §4.4's compensation: frame period 1/30 s, a frame that waited 1/30 s: error (1/30 −
    /// 1/120)·30 = 0.75, rate_adjust_factor 0.75/16 = 0.046875; a frame of 1.5× the nominal
    /// (1 Mbit/s: 4166.7 B) → deviation 0.5, frame_size_dev 0.5/64.
    #[test]
    fn compensation_by_hand() {
        let mut m = MediaRate::default();
        let fp = 1.0 / 30.0;
        let nominal = 1e6 * fp / 8.0;
        m.on_frame(&c(), fp, 1.5 * nominal, 1e6, fp);
        assert!((m.rate_adjust_factor - 0.046_875).abs() < 1e-12);
        assert!((m.frame_size_dev - 0.5 / 64.0).abs() < 1e-12);
        // An empty queue pulls the factor down to 0, not below.
        for _ in 0..100 {
            m.on_frame(&c(), 0.0, nominal, 1e6, fp);
        }
        assert_eq!(m.rate_adjust_factor, 0.0);
        let t = m.target_bitrate(&c(), 30_000.0, 0.1);
        let expected = 2.4e6 * (1000.0 / 1020.0) / (1.2 + m.frame_size_dev);
        assert!((t - expected).abs() < 1e-3);
    }
}
