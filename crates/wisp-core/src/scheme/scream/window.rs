//! SCReAMv2's network congestion control (draft-ietf-ccwg-rfc8298bis-screamv2-00 §4.2): the
//! reference window ref_wnd, reduced on loss, ECN-CE (classic or L4S) and queueing delay
//! (§4.2.1, §4.2.2.1) and increased on every feedback (§4.2.2.2), with the averages it reads:
//! l4s_alpha (§4.2.1.3), qdelay_avg and qdelay_dev_norm (§4.2.1.4) and the adaptive
//! qdelay_target (§4.2.1.4.1).
//!
//! All quantities are `f64`: bytes, seconds, bit/s, as the draft's pseudocode writes them.

use super::{EcnMode, ScreamConfig};
use std::collections::VecDeque;

/// What one feedback message brought (§4.1.2): the bytes and data units it newly acknowledged
/// (lost ones included in the bytes, as the draft counts them), those ECN-CE-marked, and
/// whether it reported a loss.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Acked {
    /// bytes_newly_acked: the sizes of every data unit up to the highest acknowledged, lost
    /// ones included.
    pub bytes: f64,
    /// bytes_newly_acked_ce.
    pub bytes_ce: f64,
    /// data_units_acked: data units reported received.
    pub units: u64,
    /// data_units_acked_ce.
    pub units_ce: u64,
    /// A data unit was reported lost.
    pub lost: bool,
}

/// §4.2.2.1: scl_t = clamp(((ref_wnd − ref_wnd_i)/ref_wnd_i · 8)², 0.1, 1), the scaling of
/// the reduction and the increase near the last known maximum ref_wnd_i.
pub fn scl(ref_wnd: f64, ref_wnd_i: f64) -> f64 {
    let s = (ref_wnd - ref_wnd_i) / ref_wnd_i * 8.0;
    (s * s).clamp(0.1, 1.0)
}

/// §4.2.1.3, one step of the fast-attack, slow-decay EWMA of the marked fraction:
/// l4s_alpha ← G_UP·f + (1 − G_UP)·l4s_alpha when f ≥ l4s_alpha, else (1 − G_DOWN)·l4s_alpha.
pub fn l4s_alpha_step(alpha: f64, fraction: f64, g_up: f64, g_down: f64) -> f64 {
    if fraction >= alpha {
        g_up * fraction + (1.0 - g_up) * alpha
    } else {
        (1.0 - g_down) * alpha
    }
}

/// §4.2.1.4, one step of the slow-attack, fast-decay EWMA of the queueing delay: a lower
/// sample is taken at once, a higher one with gain QDELAY_AVG_G.
pub fn qdelay_avg_step(avg: f64, qdelay: f64, g: f64) -> f64 {
    if qdelay < avg {
        qdelay
    } else {
        g * qdelay + (1.0 - g) * avg
    }
}

/// §4.2.1.4, calculate_qdelay_norm: the sample (qdelay − NORM/4)/NORM clipped to
/// [0, 1.5·TH], smoothed with QDELAY_DEV_AVG_G.
pub fn qdelay_dev_norm_step(dev: f64, qdelay: f64, c: &ScreamConfig) -> f64 {
    let norm = c.qdelay_dev_norm.as_secs_f64();
    let t = ((qdelay - norm / 4.0) / norm).clamp(0.0, c.qdelay_dev_norm_th * 1.5);
    (1.0 - c.qdelay_dev_avg_g) * dev + c.qdelay_dev_avg_g * t
}

/// §4.2.2.1: the virtual marking fraction l4s_alpha_v_t, 0 at qdelay_target/2 rising to 1 at
/// qdelay_target.
pub fn virtual_alpha(qdelay_avg: f64, qdelay_target: f64) -> f64 {
    ((qdelay_avg - qdelay_target / 2.0) / (qdelay_target / 2.0)).clamp(0.0, 1.0)
}

/// §4.2.2.1 and §4.2.2.2, the restriction by the jitter: max(MIN_QUEUE_DELAY_DEV_SCALE,
/// (TH − qdelay_dev_norm)/TH) (1 when REDUCE_JITTER is off: qdelay_dev_norm is then 0).
pub fn dev_scale(c: &ScreamConfig, dev: f64) -> f64 {
    let th = c.qdelay_dev_norm_th;
    c.min_queue_delay_dev_scale.max((th - dev) / th)
}

/// The reference window and the state of §4.2.
#[derive(Clone, Debug)]
pub struct RefWindow {
    c: ScreamConfig,
    /// ref_wnd, bytes.
    pub ref_wnd: f64,
    /// ref_wnd_i, the inflection point, bytes.
    pub ref_wnd_i: f64,
    pub qdelay_target: f64,
    pub qdelay_avg: f64,
    pub qdelay_dev_norm: f64,
    pub l4s_alpha: f64,
    /// The §4.2.1.4.1 history of qdelay/QDELAY_TARGET_LO (newest last, at most 200).
    history: VecDeque<f64>,
    /// loss_event_rate: the fraction of RTTs with a loss (EWMA per RTT).
    pub loss_event_rate: f64,
    loss_this_rtt: bool,
    units_this_rtt: u64,
    marked_this_rtt: u64,
    /// Loss or marks seen since the last reaction to congestion.
    loss_detected: bool,
    marked: bool,
    last_congestion_detected: f64,
    last_reaction: f64,
    last_ref_wnd_i_update: f64,
    last_l4s_alpha_update: f64,
    last_qdelay_avg_update: f64,
    /// Reactions to congestion so far (for tests and logs).
    pub reactions: u64,
}

/// The number of qdelay_norm samples of the variance and the average (§4.2.1.4.1).
const VARIANCE_SAMPLES: usize = 200;
const AVERAGE_SAMPLES: usize = 50;
/// The EWMA gain of loss_event_rate per RTT (the draft names the rate, not its estimator).
const LOSS_EVENT_RATE_G: f64 = 1.0 / 16.0;

impl RefWindow {
    pub fn new(c: &ScreamConfig) -> Self {
        RefWindow {
            c: c.clone(),
            ref_wnd: c.min_ref_wnd.bytes() as f64,
            ref_wnd_i: 1.0,
            qdelay_target: c.qdelay_target_lo.as_secs_f64(),
            qdelay_avg: 0.0,
            qdelay_dev_norm: 0.0,
            l4s_alpha: 0.0,
            history: VecDeque::with_capacity(VARIANCE_SAMPLES + 1),
            loss_event_rate: 0.0,
            loss_this_rtt: false,
            units_this_rtt: 0,
            marked_this_rtt: 0,
            loss_detected: false,
            marked: false,
            last_congestion_detected: f64::NEG_INFINITY,
            last_reaction: f64::NEG_INFINITY,
            last_ref_wnd_i_update: f64::NEG_INFINITY,
            last_l4s_alpha_update: f64::NEG_INFINITY,
            last_qdelay_avg_update: f64::NEG_INFINITY,
            reactions: 0,
        }
    }

    fn mss(&self) -> f64 {
        self.c.mss.bytes() as f64
    }

    fn virtual_rtt(&self) -> f64 {
        self.c.virtual_rtt.as_secs_f64()
    }

    /// ref_wnd_ratio (§4.1.1): min(1, MSS/ref_wnd).
    pub fn ratio(&self) -> f64 {
        (self.mss() / self.ref_wnd).min(1.0)
    }

    /// An RTT has passed: loss_event_rate takes whether it held a loss.
    pub fn on_rtt(&mut self) {
        let x = if self.loss_this_rtt { 1.0 } else { 0.0 };
        self.loss_event_rate += LOSS_EVENT_RATE_G * (x - self.loss_event_rate);
        self.loss_this_rtt = false;
    }

    /// One feedback message at `now` (s): the averages, then the reduction and the increase of
    /// ref_wnd. `qdelay` is this feedback's queueing-delay sample, `s_rtt` the smoothed RTT,
    /// `max_bif` max(max_bytes_in_flight, max_bytes_in_flight_prev), `max_bif_prev`
    /// max_bytes_in_flight_prev, `at_max` whether target_bitrate has reached
    /// TARGET_BITRATE_MAX.
    pub fn on_feedback(
        &mut self,
        now: f64,
        a: &Acked,
        qdelay: Option<f64>,
        s_rtt: f64,
        flight: (f64, f64),
        at_max: bool,
    ) {
        self.loss_detected |= a.lost;
        self.loss_this_rtt |= a.lost;
        self.marked |= a.units_ce > 0;
        self.update_l4s_alpha(now, a, s_rtt);
        if let Some(q) = qdelay {
            self.update_qdelay_avg(now, q, s_rtt);
        }
        let q = qdelay.unwrap_or(self.qdelay_avg);
        self.reduce(now, q, s_rtt, flight.1);
        self.increase(now, a, s_rtt, flight.0, at_max);
    }

    /// §4.2.1.3: l4s_alpha, at least every min(10 ms, s_rtt).
    fn update_l4s_alpha(&mut self, now: f64, a: &Acked, s_rtt: f64) {
        self.units_this_rtt += a.units;
        self.marked_this_rtt += a.units_ce;
        if now - self.last_l4s_alpha_update >= s_rtt.min(0.01) && self.units_this_rtt > 0 {
            let f = self.marked_this_rtt as f64 / self.units_this_rtt as f64;
            self.l4s_alpha = l4s_alpha_step(
                self.l4s_alpha,
                f,
                self.c.l4s_avg_g_up,
                self.c.l4s_avg_g_down,
            );
            self.last_l4s_alpha_update = now;
            self.units_this_rtt = 0;
            self.marked_this_rtt = 0;
        }
    }

    /// §4.2.1.4: qdelay_avg (and qdelay_dev_norm with REDUCE_JITTER), at least every
    /// min(VIRTUAL_RTT, s_rtt); the §4.2.1.4.1 target with them.
    fn update_qdelay_avg(&mut self, now: f64, qdelay: f64, s_rtt: f64) {
        if now - self.last_qdelay_avg_update < self.virtual_rtt().min(s_rtt) {
            return;
        }
        self.qdelay_avg = qdelay_avg_step(self.qdelay_avg, qdelay, self.c.qdelay_avg_g);
        if self.c.reduce_jitter {
            self.qdelay_dev_norm = qdelay_dev_norm_step(self.qdelay_dev_norm, qdelay, &self.c);
        }
        if self.c.competing_flows {
            self.adjust_qdelay_target(qdelay);
        }
        self.last_qdelay_avg_update = now;
    }

    /// §4.2.1.4.1, adjust_qdelay_target.
    fn adjust_qdelay_target(&mut self, qdelay: f64) {
        let lo = self.c.qdelay_target_lo.as_secs_f64();
        let hi = self.c.qdelay_target_hi.as_secs_f64();
        self.history.push_back(qdelay / lo);
        if self.history.len() > VARIANCE_SAMPLES {
            self.history.pop_front();
        }
        let (var, avg) = norm_statistics(&self.history);
        let new_target = (avg + var.sqrt()) * lo;
        let target = if self.loss_event_rate > 0.002 {
            1.5 * new_target
        } else if var < 0.2 {
            new_target
        } else if new_target < lo {
            (self.qdelay_target * 0.5).max(new_target)
        } else {
            self.qdelay_target * 0.9
        };
        self.qdelay_target = target.clamp(lo, hi);
    }

    /// §4.2.2.1, the reduction: at most once per min(VIRTUAL_RTT, s_rtt), by BETA_LOSS on a
    /// loss, by the L4S backoff or BETA_ECN on CE, by the virtual backoff on queueing delay.
    fn reduce(&mut self, now: f64, qdelay: f64, s_rtt: f64, max_bif_prev: f64) {
        let vrtt = self.virtual_rtt();
        let scl_t = scl(self.ref_wnd, self.ref_wnd_i);
        if self.loss_detected || self.marked {
            self.last_congestion_detected = now;
        }
        if now - self.last_reaction < vrtt.min(s_rtt) {
            return;
        }
        let (is_loss, is_ce) = (self.loss_detected, !self.loss_detected && self.marked);
        let alpha_v = (!is_loss && !is_ce && self.qdelay_avg > self.qdelay_target / 2.0)
            .then(|| virtual_alpha(self.qdelay_avg, self.qdelay_target));
        if !(is_loss || is_ce || alpha_v.is_some()) {
            return;
        }
        if now - self.last_ref_wnd_i_update > 10.0 * s_rtt {
            self.last_ref_wnd_i_update = now;
            self.ref_wnd_i = self.ref_wnd;
        }
        let rtt_scale = (s_rtt / vrtt).max(1.0);
        if is_loss {
            self.ref_wnd *= self.c.beta_loss;
        }
        if is_ce {
            if self.c.ecn == EcnMode::L4s {
                let mut backoff = self.l4s_alpha / 2.0 / rtt_scale;
                if qdelay < self.qdelay_target * 0.25 {
                    backoff *= scl_t.max(0.25);
                    backoff *= dev_scale(&self.c, self.qdelay_dev_norm);
                }
                if now - self.last_reaction > 100.0 * vrtt.max(s_rtt) {
                    self.ref_wnd = self.ref_wnd.min(max_bif_prev);
                }
                self.ref_wnd *= 1.0 - backoff;
            } else {
                self.ref_wnd *= self.c.beta_ecn;
            }
        }
        if let Some(av) = alpha_v {
            self.ref_wnd *= 1.0 - av / 2.0 / rtt_scale;
        }
        self.ref_wnd = self.ref_wnd.max(self.c.min_ref_wnd.bytes() as f64);
        self.last_reaction = now;
        self.loss_detected = false;
        self.marked = false;
        self.reactions += 1;
    }

    /// §4.2.2.2, the increase on every feedback: (bytes_newly_acked − bytes_newly_acked_ce)·
    /// ref_wnd_ratio, scaled for small RTTs, near ref_wnd_i and by the jitter, times the
    /// multiplicative factor 1 + MUL_INCREASE_FACTOR·ref_wnd/MSS held back after congestion;
    /// applied only within MSS + max_bytes_in_flight·BYTES_IN_FLIGHT_HEAD_ROOM and below
    /// TARGET_BITRATE_MAX.
    fn increase(&mut self, now: f64, a: &Acked, s_rtt: f64, max_bif: f64, at_max: bool) {
        let vrtt = self.virtual_rtt();
        let scl_t = scl(self.ref_wnd, self.ref_wnd_i);
        let post = ((now - self.last_congestion_detected)
            / (self.c.post_congestion_delay_rtts * vrtt.max(s_rtt)))
        .clamp(0.0, 1.0);
        let mut factor = 1.0 + self.c.mul_increase_factor * self.ref_wnd / self.mss();
        if factor > 1.0 {
            factor = 1.0 + (factor - 1.0) * post * scl_t;
        }
        let increment = (a.bytes - a.bytes_ce)
            * self.ratio()
            * (s_rtt / vrtt).min(1.0)
            * scl_t.max(0.25)
            * dev_scale(&self.c, self.qdelay_dev_norm)
            * factor;
        let max_allowed = self.mss() + max_bif * self.c.bytes_in_flight_head_room;
        let next = self.ref_wnd + increment;
        if next <= max_allowed && !at_max {
            self.ref_wnd = next;
        }
    }
}

/// The variance of the last [`VARIANCE_SAMPLES`] and the average of the last
/// [`AVERAGE_SAMPLES`] of `h` (population variance).
fn norm_statistics(h: &VecDeque<f64>) -> (f64, f64) {
    let n = h.len() as f64;
    let mean = h.iter().sum::<f64>() / n;
    let var = h.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let recent = h.len().min(AVERAGE_SAMPLES);
    let avg = h.iter().rev().take(recent).sum::<f64>() / recent as f64;
    (var, avg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c() -> ScreamConfig {
        ScreamConfig::default()
    }

    /// scl_t: ref_wnd at ref_wnd_i → 0 → 0.1; 10 % above → (0.8)² = 0.64; 20 % above →
    /// 1.6² = 2.56 → 1.
    #[test]
    fn scl_by_hand() {
        assert_eq!(scl(10_000.0, 10_000.0), 0.1);
        assert!((scl(11_000.0, 10_000.0) - 0.64).abs() < 1e-12);
        assert_eq!(scl(12_000.0, 10_000.0), 1.0);
        assert_eq!(scl(3000.0, 1.0), 1.0);
    }

    /// l4s_alpha: from 0, a fraction of 0.5 → 0.5/8 = 0.0625; then 0 → 0.0625·127/128.
    #[test]
    fn l4s_alpha_by_hand() {
        let a = l4s_alpha_step(0.0, 0.5, 1.0 / 8.0, 1.0 / 128.0);
        assert!((a - 0.0625).abs() < 1e-12);
        let b = l4s_alpha_step(a, 0.0, 1.0 / 8.0, 1.0 / 128.0);
        assert!((b - 0.0625 * 127.0 / 128.0).abs() < 1e-12);
    }

    /// qdelay_avg: 40 ms on 0 → 10 ms (G 1/4); then 5 ms is taken at once.
    #[test]
    fn qdelay_avg_by_hand() {
        let a = qdelay_avg_step(0.0, 0.040, 0.25);
        assert!((a - 0.010).abs() < 1e-12);
        assert_eq!(qdelay_avg_step(a, 0.005, 0.25), 0.005);
    }

    /// l4s_alpha_v_t with qdelay_target 60 ms: 30 ms → 0, 45 ms → 0.5, 60 ms and above → 1.
    #[test]
    fn virtual_alpha_by_hand() {
        assert_eq!(virtual_alpha(0.030, 0.060), 0.0);
        assert!((virtual_alpha(0.045, 0.060) - 0.5).abs() < 1e-12);
        assert_eq!(virtual_alpha(0.090, 0.060), 1.0);
    }

    /// qdelay_dev_norm: a 50-ms sample, NORM 25 ms: (50 − 6.25)/25 = 1.75 → capped at 1.5,
    /// times 1/64 from 0.
    #[test]
    fn qdelay_dev_norm_by_hand() {
        let d = qdelay_dev_norm_step(0.0, 0.050, &c());
        assert!((d - 1.5 / 64.0).abs() < 1e-12, "{d}");
        assert_eq!(qdelay_dev_norm_step(0.0, 0.001, &c()), 0.0);
    }

    fn acked(bytes: f64) -> Acked {
        Acked {
            bytes,
            units: (bytes / 1000.0) as u64,
            ..Acked::default()
        }
    }

    /// The increase at the start: ref_wnd 3000 B (MIN_REF_WND), MSS 1000, 3000 B acked, s_rtt
    /// 100 ms (≥ VIRTUAL_RTT), no congestion yet (post 1), scl 1: ratio 1/3, factor 1 + 0.02·3
    /// = 1.06, increment 3000·(1/3)·1.06 = 1060 B. Not above MSS + 1.5·max_bif.
    #[test]
    fn increase_by_hand() {
        let mut w = RefWindow::new(&c());
        w.on_feedback(1.0, &acked(3000.0), Some(0.0), 0.1, (3000.0, 3000.0), false);
        assert!((w.ref_wnd - 4060.0).abs() < 1e-9, "{}", w.ref_wnd);
        // Capped: with max_bif 1000 the next (5000+) exceeds 1000 + 1500; held.
        w.on_feedback(1.1, &acked(3000.0), Some(0.0), 0.1, (1000.0, 1000.0), false);
        assert!((w.ref_wnd - 4060.0).abs() < 1e-9);
        // At TARGET_BITRATE_MAX: held.
        w.on_feedback(1.2, &acked(3000.0), Some(0.0), 0.1, (1e6, 1e6), true);
        assert!((w.ref_wnd - 4060.0).abs() < 1e-9);
    }

    /// A loss: ref_wnd ·0.7, once per min(VIRTUAL_RTT, s_rtt) (25 ms); the increase after it
    /// is additive only (post_congestion_scale 0 right after).
    #[test]
    fn loss_reduces_by_beta_loss_once_per_virtual_rtt() {
        let mut w = RefWindow::new(&c());
        w.ref_wnd = 20_000.0;
        let lost = Acked {
            lost: true,
            ..Acked::default()
        };
        w.on_feedback(1.0, &lost, Some(0.0), 0.1, (0.0, 0.0), false);
        assert!((w.ref_wnd - 14_000.0).abs() < 1e-9, "{}", w.ref_wnd);
        assert_eq!(w.ref_wnd_i, 20_000.0);
        w.on_feedback(1.01, &lost, Some(0.0), 0.1, (0.0, 0.0), false);
        assert!((w.ref_wnd - 14_000.0).abs() < 1e-9);
        // 25 ms later the held loss is reacted to: 14 000·0.7 = 9800.
        w.on_feedback(1.03, &Acked::default(), Some(0.0), 0.1, (0.0, 0.0), false);
        assert!((w.ref_wnd - 9800.0).abs() < 1e-9, "{}", w.ref_wnd);
        // Right after congestion (detected at 1.03 s): 1000 B acked at ratio 1000/9800,
        // scl((9800 − 20000)/20000·8 = −4.08)² → 1, the multiplicative part 0.02·9.8 held to
        // post_congestion_scale = 0.01 s/(100·0.1 s) = 0.001 of itself.
        let before = w.ref_wnd;
        w.on_feedback(1.04, &acked(1000.0), Some(0.0), 0.1, (1e6, 1e6), false);
        let inc = 1000.0 * 1000.0 / before * (1.0 + 0.02 * before / 1000.0 * 0.001);
        assert!((w.ref_wnd - before - inc).abs() < 1e-9);
    }

    /// Classic ECN: ·BETA_ECN 0.8. L4S: ·(1 − l4s_alpha/2) with the RTT scaling: l4s_alpha
    /// 0.0625 after one update on half marked, s_rtt 50 ms = 2·VIRTUAL_RTT, qdelay 0 (< target/4),
    /// scl 1: backoff 0.0625/2/2 = 0.015625.
    #[test]
    fn ce_reduction_classic_and_l4s() {
        let marks = Acked {
            bytes: 2000.0,
            bytes_ce: 1000.0,
            units: 2,
            units_ce: 1,
            lost: false,
        };
        let mut w = RefWindow::new(&ScreamConfig {
            ecn: EcnMode::Classic,
            ..c()
        });
        w.ref_wnd = 20_000.0;
        w.on_feedback(1.0, &marks, Some(0.0), 0.05, (0.0, 0.0), false);
        assert!((w.ref_wnd - 16_000.0).abs() < 1e-9, "{}", w.ref_wnd);
        let mut w = RefWindow::new(&ScreamConfig {
            ecn: EcnMode::L4s,
            ..c()
        });
        w.ref_wnd = 20_000.0;
        // max_bytes_in_flight 0 holds the increase; max_bytes_in_flight_prev 1e9 leaves the
        // first-CE restore (min(ref_wnd, max_bytes_in_flight_prev)) without effect.
        w.on_feedback(1.0, &marks, Some(0.0), 0.05, (0.0, 1e9), false);
        assert!((w.l4s_alpha - 0.0625).abs() < 1e-12);
        assert!(
            (w.ref_wnd - 20_000.0 * (1.0 - 0.015625)).abs() < 1e-9,
            "{}",
            w.ref_wnd
        );
    }

    /// Queueing delay: qdelay_avg 45 ms against the 60-ms target gives l4s_alpha_v 0.5, the
    /// backoff 0.25/max(1, 0.1/0.025) = 0.0625.
    #[test]
    fn queueing_delay_reduces_as_a_virtual_mark() {
        let cfg = ScreamConfig {
            competing_flows: false,
            ..c()
        };
        let mut w = RefWindow::new(&cfg);
        w.ref_wnd = 20_000.0;
        w.qdelay_avg = 0.045;
        // A sample equal to the average keeps it: 0.25·45 + 0.75·45.
        w.on_feedback(1.0, &Acked::default(), Some(0.045), 0.1, (0.0, 0.0), false);
        assert!((w.qdelay_avg - 0.045).abs() < 1e-12);
        assert!(
            (w.ref_wnd - 20_000.0 * 0.9375).abs() < 1e-9,
            "{}",
            w.ref_wnd
        );
        assert_eq!(w.reactions, 1);
    }

    /// §4.2.1.4.1: a steady 30-ms queue (qdelay_norm 0.5, variance 0) sets the target to 30 ms,
    /// held at QDELAY_TARGET_LO (60 ms); with loss events, 1.5 × a steady 90-ms norm (1.5) =
    /// 135 ms.
    #[test]
    fn qdelay_target_adapts_to_competing_flows() {
        let mut w = RefWindow::new(&c());
        for _ in 0..10 {
            w.adjust_qdelay_target(0.030);
        }
        assert!((w.qdelay_target - 0.060).abs() < 1e-12);
        w.loss_event_rate = 0.01;
        let mut w2 = w.clone();
        w2.history.clear();
        for _ in 0..10 {
            w2.adjust_qdelay_target(0.090);
        }
        assert!(
            (w2.qdelay_target - 0.135).abs() < 1e-9,
            "{}",
            w2.qdelay_target
        );
    }
}
