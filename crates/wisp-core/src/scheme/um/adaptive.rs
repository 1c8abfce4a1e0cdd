//! `adaptive-um` — utility maximisation with a variable, learned definition of congestion,
//! Mehrotra et al. §V (the rate law of their ref. \[19\]).
//!
//! Per ACK, with δ the ACK's queueing delay, δ̂ the operating congestion point and ΔT the time
//! since the previous adjustment (as in eq. (1)):
//!
//! ```text
//! ΔR = α_δ · ΔT       if δ ≤ δ̂
//!      −β_δ · R · ΔT  if δ > δ̂                                                    (2)
//! α_δ = α_max + (α_min − α_max) · δ/δ̂                                               (3)
//! β_δ = min(β_max, β_min + (β_max − β_min) · (δ − δ̂)/(δ_max − δ̂))                   (4)
//! ```
//!
//! **δ̂ is learned** (§V-A: "δ̂ just slightly larger than δ_T", with δ_T chosen "to minimize
//! the misclassification of elements in the congestion-free set as being congested"; "the
//! congestion-free set of delay measurements consists of delay values obtained when
//! transmitting at rates which are known to be not congested, for example very low rates").
//! The paper leaves the learner open; this one:
//!
//! 1. **Calibration windows** give the congestion-free set. The flow opens with one: it holds
//!    its start rate (100 kbit/s) for 2 s. Afterwards — `probe-first` (5 s) later, then at
//!    intervals growing by half up to `probe-every` (30 s), so a young estimate sees the
//!    network's rarer noise (fades) soon — it sends at
//!    `depth` × R (40 %) for a settling time — `settle` (300 ms) plus twice the current δ̂, at
//!    most 2 s, for the queue it built to drain — then samples for at least `window` (1 s) and
//!    until at least `window-samples` (50) packets have left (at most 3 s), and returns to R. A
//!    flow at 40 % of the rate that filled the bottleneck is known not to congest it: the
//!    queueing delays δ of the packets sent while sampling, each less the smallest δ of the
//!    packets sent in the 500 ms before it, are congestion-free samples. (Less that floor: a
//!    queue that other flows keep, or move slowly, through the window is common to neighbouring
//!    samples and cancels, so flows that share a bottleneck learn the same δ̂ — otherwise a
//!    newcomer would count the incumbent's queue as noise, learn a larger δ̂ and take the link;
//!    the fades and jitter of the link, which come and go within a few hundred milliseconds,
//!    stand out of it.) Audio packets (50 per second) are sampled too, so a window on the 3G
//!    profile yields ~60.
//! 2. **The set** is the samples of the windows of the last `memory-s` (180 s), and older ones
//!    until it holds at least `samples` (200). The opening window only stands in until the
//!    regular windows have supplied `samples` (a newcomer's opening window, taken while other
//!    flows' queue moves, overstates the noise).
//! 3. **δ_T** is the `quantile` (0.99) of the set — nearly all congestion-free samples lie
//!    below it — and **δ̂ = (1 + `margin`) · δ_T** (margin 0.25), at least `floor` (10 ms),
//!    recomputed at the end of each window, once the ACK of a packet sent after it shows that
//!    every sample has arrived.
//! 4. **Network changes.** A window whose median differs from the median of the earlier windows'
//!    medians by more than a factor of two (and 5 ms) is a suspected change: another window
//!    follows 3 s later, and if it deviates the same way the set restarts from the two (a
//!    handover) and the windows come often again (from `probe-first`); otherwise both join the
//!    set. A change is also suspected, and a window
//!    scheduled 1 s later, when the rate delivered over the last 2 s has doubled since the last
//!    window (a faster network lets R grow while δ̂ still reflects the old one), or when the
//!    base one-way delay drops by more than 10 ms (a new path; [`RateLaw::on_path_change`]).
//!
//! During a window R is not updated (ACKs of packets sent in it carry the drained queue's low
//! delays, which eq. (2) would read as an invitation to speed up); eq. (2) runs on every other
//! ACK. The cost is the rate given up in the windows: (1 − 0.4) × (1.5–3 s)/30 s, 3–6 % of the
//! throughput once the windows are 30 s apart. With `delta-hat-ms=N`, δ̂ is fixed (eqs. 2–4 as the paper ran them in §V-B and
//! Fig. 23) and there are no windows.
//!
//! Parameters (defaults): `alpha-max=25000,alpha-min=1250,beta-min=0.1,beta-max=1`,
//! `delta-max=2` (δ_max = 2·δ̂), `delta-hat-ms=auto`, `probe-every-s=30,probe-first-s=5,depth=0.4,
//! window-ms=1000,window-samples=50,settle-ms=300,quantile=0.99,margin=0.25,memory-s=180,
//! samples=200,floor-ms=10`.
//!
//! Deviations:
//! * **Steps per unit time.** The paper writes eq. (2) per adjustment without a time factor;
//!   here each ACK's step is weighted by ΔT, the time since the previous ACK (at most 100 ms, so
//!   one ACK after a silence does not stand for all of it), as eq. (1), of which eq. (2) is "a
//!   slightly modified version", weights its step. So α is an additive increase in bytes/s per
//!   second and β a multiplicative decrease per second — the AIMD the paper names — and the
//!   law's strength does not depend on how many ACKs a network's rate brings, nor on how the
//!   media source packetises. (An earlier form weighted each step by the bytes acknowledged.
//!   Its decrease per second then grew with R, since every queued packet's ACK cut R once: on
//!   `wimax-down` with δ̂ = 100 ms one excursion above δ̂ took R from 5–6 to 1.4–1.9 Mbit/s,
//!   and throughput *fell* as a fixed δ̂ rose from 30 to 100 ms (80 → 73 % of the link),
//!   against the paper's Fig. 23. With ΔT weighting it does not: 80, 91, 92, 90 % at δ̂ = 30,
//!   50, 75, 100 ms, 97 % at 150 ms.)
//! * The paper gives no values for α_max, α_min, β_min, β_max, δ_max (nor does its ref. \[19\]).
//!   α_max = 25,000 B/s per second (200 kbit/s per second) at zero delay, so 100 kbit/s reaches
//!   5 Mbit/s in about 25 s (the paper: "convergence currently takes about 20–30 seconds");
//!   α_min = α_max/20 at δ = δ̂, so R creeps up near the operating point. β rises from β_min =
//!   0.1/s just above δ̂ to β_max = 1/s at δ_max, so the decrease is proportional to the
//!   overshoot: a noise sample slightly above δ̂ costs little, a queue held at δ_max cuts R by
//!   63 % a second. δ_max is 2·δ̂ so the shape of eq. (4) does not depend on the network.
//! * The learner above (the paper only says δ̂ should be learnt).

use super::RateParams;
use super::sender::{AckInfo, LossInfo, RateLaw};
use crate::scheme::params::{Checked, Given, Validate, ordered, range, scheme_config};
use crate::stats::quantile_sorted;
use crate::time::{Duration, Instant};
use crate::units::serde_as::{ms, ms_or_auto, s};
use std::collections::VecDeque;

scheme_config! {
    /// How δ̂ is learned.
    #[derive(Clone, Debug, PartialEq)]
    pub struct LearnerConfig {
        /// Time between calibration windows once the estimate has settled, s.
        #[serde(rename = "probe-every-s", with = "s")]
        pub probe_every: Duration,
        /// The first interval between windows, s.
        // After the opening window (and after a change of network), growing by half each time.
        #[serde(rename = "probe-first-s", with = "s")]
        pub probe_first: Duration,
        /// The rate in a window, as a fraction of R.
        pub depth: f64,
        /// The shortest sampling time of a window, ms.
        #[serde(rename = "window-ms", with = "ms")]
        pub window: Duration,
        /// Packets a window samples at least.
        // Within 3 s.
        pub window_samples: u32,
        /// The settling time of a window, ms.
        // Before twice δ̂ is added.
        #[serde(rename = "settle-ms", with = "ms")]
        pub settle: Duration,
        /// The quantile of the congestion-free set taken as δ_T.
        pub quantile: f64,
        /// δ̂ = (1 + margin)·δ_T.
        pub margin: f64,
        /// Windows are pooled for this long, s…
        #[serde(rename = "memory-s", with = "s")]
        pub memory: Duration,
        /// …and beyond it until at least this many samples are pooled.
        pub samples: usize,
        /// The smallest δ̂, ms.
        #[serde(rename = "floor-ms", with = "ms")]
        pub floor: Duration,
    }
}

impl Default for LearnerConfig {
    fn default() -> Self {
        LearnerConfig {
            probe_every: Duration::from_secs(30),
            probe_first: Duration::from_secs(5),
            depth: 0.4,
            window: Duration::from_secs(1),
            window_samples: 50,
            settle: Duration::from_millis(300),
            quantile: 0.99,
            margin: 0.25,
            memory: Duration::from_secs(180),
            samples: 200,
            floor: Duration::from_millis(10),
        }
    }
}

impl LearnerConfig {
    /// The learner's ranges.
    fn check(&self, given: &Given<'_>) -> Checked {
        let secs = "seconds, 1 to 3600";
        given.time_s("probe-every-s", self.probe_every, 1.0, 3600.0, secs)?;
        given.time_s("probe-first-s", self.probe_first, 1.0, 3600.0, secs)?;
        range("depth", self.depth, 0.0, 1.0, "a fraction, 0 to 1")?;
        given.time_ms(
            "window-ms",
            self.window,
            10.0,
            3000.0,
            "milliseconds, 10 to 3000",
        )?;
        let count = "a count, 1 to 100000";
        range(
            "window-samples",
            f64::from(self.window_samples),
            1.0,
            1e5,
            count,
        )?;
        given.time_ms(
            "settle-ms",
            self.settle,
            0.0,
            60_000.0,
            "milliseconds, 0 to 60000",
        )?;
        range("quantile", self.quantile, 0.5, 1.0, "a quantile, 0.5 to 1")?;
        range("margin", self.margin, 0.0, 10.0, "a fraction, 0 to 10")?;
        given.time_s(
            "memory-s",
            self.memory,
            0.0,
            86_400.0,
            "seconds, 0 to 86400",
        )?;
        range("samples", self.samples as f64, 1.0, 1e5, count)?;
        given.time_ms(
            "floor-ms",
            self.floor,
            0.0,
            10_000.0,
            "milliseconds, 0 to 10000",
        )
    }
}

scheme_config! {
    /// Configuration of [`AdaptiveUm`].
    #[derive(Clone, Debug, PartialEq)]
    pub struct AdaptiveConfig {
        /// α_max, bytes/s per second.
        pub alpha_max: f64,
        /// α_min, bytes/s per second.
        pub alpha_min: f64,
        /// β_min, fraction of R per second.
        // Applied as 1 − e^(−β·ΔT).
        pub beta_min: f64,
        /// β_max, fraction of R per second.
        pub beta_max: f64,
        /// δ_max / δ̂.
        pub delta_max: f64,
        /// A fixed δ̂, ms (no learning), or `auto`.
        #[serde(rename = "delta-hat-ms", with = "ms_or_auto")]
        pub delta_hat: Option<Duration>,
        #[group]
        pub learner: LearnerConfig,
        #[group]
        pub rate: RateParams,
    }
}

impl Default for AdaptiveConfig {
    fn default() -> Self {
        AdaptiveConfig {
            alpha_max: 25_000.0,
            alpha_min: 1_250.0,
            beta_min: 0.1,
            beta_max: 1.0,
            delta_max: 2.0,
            delta_hat: None,
            learner: LearnerConfig::default(),
            rate: RateParams::default(),
        }
    }
}

impl Validate for AdaptiveConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        let alpha = "bytes/s per second, 0 to 1e8";
        range("alpha-max", self.alpha_max, 0.0, 1e8, alpha)?;
        range("alpha-min", self.alpha_min, 0.0, 1e8, alpha)?;
        ordered(&[("alpha-min", self.alpha_min), ("alpha-max", self.alpha_max)])?;
        range(
            "beta-min",
            self.beta_min,
            0.0,
            100.0,
            "per second, 0 to 100",
        )?;
        range(
            "beta-max",
            self.beta_max,
            0.0,
            100.0,
            "per second, 0 to 100",
        )?;
        ordered(&[("beta-min", self.beta_min), ("beta-max", self.beta_max)])?;
        range(
            "delta-max",
            self.delta_max,
            1.01,
            100.0,
            "a factor, 1.01 to 100",
        )?;
        if let Some(d) = self.delta_hat {
            given.time_ms(
                "delta-hat-ms",
                d,
                0.1,
                60_000.0,
                "milliseconds (0.1 to 60000) or auto",
            )?;
        }
        self.learner.check(given)?;
        self.rate.check(given)
    }
}

/// The length of the opening calibration window.
const STARTUP_WINDOW: Duration = Duration::from_secs(2);
/// A window samples at most this long.
const MAX_SAMPLING: Duration = Duration::from_secs(3);
/// A window finalises at the latest this long after its sampling ends (if no later ACK came).
const WINDOW_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest settling time.
const MAX_SETTLE: Duration = Duration::from_secs(2);
/// A window's samples count from the lowest of the preceding this long.
const SPREAD_FLOOR: Duration = Duration::from_millis(500);
/// A suspected change is confirmed by a window this soon after.
const CONFIRM_AFTER: Duration = Duration::from_secs(3);
/// A window follows a rate or path trigger this soon.
const TRIGGER_AFTER: Duration = Duration::from_secs(1);
/// The delivered rate is measured over this long.
const RATE_SPAN: Duration = Duration::from_secs(2);

/// A calibration window.
#[derive(Clone, Debug)]
struct Window {
    /// When it samples (from; until, once known).
    sample_from: Instant,
    sample_until: Option<Instant>,
    /// R when it started (the rate is R again at its end); `None` for the opening window.
    r_pre: Option<f64>,
    /// It confirms a suspected change.
    confirms: bool,
    /// Sequence numbers sent during the whole window and during its sampling time.
    seqs: Option<(u64, u64)>,
    sampled: Option<(u64, u64)>,
    /// `(send time, δ ms)` of the sampled packets acknowledged so far.
    samples: Vec<(Instant, f64)>,
}

fn contains(range: Option<(u64, u64)>, seq: u64) -> bool {
    range.is_some_and(|(a, b)| a <= seq && seq <= b)
}

fn extend(range: &mut Option<(u64, u64)>, seq: u64) {
    *range = Some(range.map_or((seq, seq), |(a, _)| (a, seq)));
}

/// One learning step, for plots and tests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Learned {
    /// When the window was finalised.
    pub at: Instant,
    /// Samples in the window and in the congestion-free set.
    pub window_samples: usize,
    pub pool_samples: usize,
    /// δ_T and δ̂.
    pub delta_t: Duration,
    pub delta_hat: Duration,
    /// The set restarted (a confirmed change of network).
    pub reset: bool,
}

/// A pooled window: when it was finalised, its samples (ms) and their median.
#[derive(Clone, Debug)]
struct Pooled {
    at: Instant,
    samples: Vec<f64>,
    median: f64,
    /// The opening window, dropped once the regular ones supply enough samples.
    provisional: bool,
}

/// The adaptive utility-maximisation law with its learner.
#[derive(Clone, Debug)]
pub struct AdaptiveUm {
    c: AdaptiveConfig,
    delta_hat: Option<Duration>,
    fixed: bool,
    /// The window under way.
    window: Option<Window>,
    /// Windows over, whose ACKs are still in flight.
    pending: VecDeque<Window>,
    next_probe: Option<Instant>,
    /// The congestion-free set, oldest first.
    pool: VecDeque<Pooled>,
    /// A window that suggested a change, awaiting confirmation.
    suspect: Option<Pooled>,
    /// `(arrival, bytes)` of the ACKs of the last [`RATE_SPAN`], and their sum.
    acked: VecDeque<(Instant, u64)>,
    acked_sum: u64,
    /// The delivered rate before the last window, bytes/s.
    rate_ref: Option<f64>,
    /// The time to the next regular window.
    period: Duration,
    history: Vec<Learned>,
    /// When eq. (2) last adjusted R.
    last_step: Option<Instant>,
}

/// The longest ΔT one ACK's step stands for.
const MAX_STEP: Duration = Duration::from_millis(100);

impl AdaptiveUm {
    pub fn new(c: &AdaptiveConfig) -> Self {
        AdaptiveUm {
            c: c.clone(),
            delta_hat: c.delta_hat,
            fixed: c.delta_hat.is_some(),
            window: None,
            pending: VecDeque::new(),
            next_probe: None,
            pool: VecDeque::new(),
            suspect: None,
            acked: VecDeque::new(),
            acked_sum: 0,
            rate_ref: None,
            period: c.learner.probe_first,
            history: vec![],
            last_step: None,
        }
    }

    /// The time to the next regular window, growing by half up to `probe-every`.
    fn next_period(&mut self) -> Duration {
        let p = self.period;
        self.period = (p.mul_f64(1.5)).min(self.c.learner.probe_every);
        p
    }

    /// δ̂, once known.
    pub fn delta_hat(&self) -> Option<Duration> {
        self.delta_hat
    }

    /// Every learning step so far.
    pub fn history(&self) -> &[Learned] {
        &self.history
    }

    /// Whether a calibration window is under way.
    pub fn in_window(&self) -> bool {
        self.window.is_some()
    }

    /// Eqs. (2)–(4): ΔR for an ACK at delay `delta` (seconds), rate `r`, `dt` (seconds) after
    /// the previous adjustment.
    pub fn delta_r(&self, delta: f64, r: f64, dt: f64) -> f64 {
        let Some(hat) = self.delta_hat.map(|d| d.as_secs_f64()) else {
            return 0.0;
        };
        let c = &self.c;
        if delta <= hat {
            let a = if hat > 0.0 {
                c.alpha_max + (c.alpha_min - c.alpha_max) * delta / hat
            } else {
                c.alpha_min
            };
            a * dt
        } else {
            let dmax = hat * c.delta_max;
            let b = if dmax > hat {
                (c.beta_min + (c.beta_max - c.beta_min) * (delta - hat) / (dmax - hat))
                    .min(c.beta_max)
            } else {
                c.beta_max
            };
            -r * (1.0 - (-b * dt).exp())
        }
    }

    fn trigger(&mut self, now: Instant) {
        if self.fixed || self.delta_hat.is_none() || self.window.is_some() {
            return;
        }
        let soon = now + TRIGGER_AFTER;
        if self.next_probe.is_none_or(|t| t > soon) {
            self.next_probe = Some(soon);
        }
    }

    fn in_any_window(&self, seq: u64) -> bool {
        self.window
            .as_ref()
            .is_some_and(|w| w.seqs.is_some_and(|(a, _)| seq >= a))
            || self.pending.iter().any(|w| contains(w.seqs, seq))
    }

    fn median(v: &[f64]) -> f64 {
        crate::stats::quantile_of(v, 0.5).unwrap_or(0.0)
    }

    /// Recomputes δ_T and δ̂ from the set.
    fn relearn(&mut self, now: Instant, window_samples: usize, reset: bool) {
        let l = &self.c.learner;
        let mut all: Vec<f64> = self.pool.iter().flat_map(|p| &p.samples).copied().collect();
        all.sort_unstable_by(f64::total_cmp);
        let Some(delta_t) = quantile_sorted(&all, l.quantile) else {
            return;
        };
        let hat = Duration::from_millis_f64(delta_t * (1.0 + l.margin)).max(l.floor);
        self.delta_hat = Some(hat);
        self.history.push(Learned {
            at: now,
            window_samples,
            pool_samples: all.len(),
            delta_t: Duration::from_millis_f64(delta_t),
            delta_hat: hat,
            reset,
        });
    }

    /// Adds a window to the set and forgets the windows it no longer needs.
    fn pool_push(&mut self, p: Pooled) {
        let now = p.at;
        self.pool.push_back(p);
        let l = &self.c.learner;
        let regular: usize = self
            .pool
            .iter()
            .filter(|p| !p.provisional)
            .map(|p| p.samples.len())
            .sum();
        if regular >= l.samples {
            self.pool.retain(|p| !p.provisional);
        }
        let mut total: usize = self.pool.iter().map(|p| p.samples.len()).sum();
        while let Some(front) = self.pool.front() {
            let old = now.saturating_duration_since(front.at) > l.memory;
            if !old || total - front.samples.len() < l.samples {
                break;
            }
            total -= front.samples.len();
            self.pool.pop_front();
        }
    }

    /// Learns from a finished window (item 4 of the module doc for changes).
    fn finalise(&mut self, now: Instant, w: Window) {
        if w.samples.len() < 5 {
            return;
        }
        // The spread above the window's floor: a queue other flows keep through the window is
        // common to every sample and cancels.
        // The spread above a trailing floor: a queue other flows keep, or move slowly, through
        // the window is common to neighbouring samples and cancels.
        let mut samples = Vec::with_capacity(w.samples.len());
        let mut floor: VecDeque<(Instant, f64)> = VecDeque::new();
        for &(t, d) in &w.samples {
            while floor.back().is_some_and(|&(_, v)| v >= d) {
                floor.pop_back();
            }
            floor.push_back((t, d));
            while floor
                .front()
                .is_some_and(|&(u, _)| t.saturating_duration_since(u) > SPREAD_FLOOR)
            {
                floor.pop_front();
            }
            samples.push(d - floor.front().map_or(d, |f| f.1));
        }
        let p = Pooled {
            at: now,
            median: Self::median(&samples),
            samples,
            provisional: w.r_pre.is_none(),
        };
        let n = p.samples.len();
        let medians: Vec<f64> = self.pool.iter().map(|p| p.median).collect();
        let deviates = |m: f64| -> Option<bool> {
            if medians.is_empty() {
                return None;
            }
            let old = Self::median(&medians);
            let (a, b) = (m.max(1e-3), old.max(1e-3));
            ((a / b > 2.0 || b / a > 2.0) && (m - old).abs() > 5.0).then_some(m > old)
        };
        match (deviates(p.median), self.suspect.take()) {
            (Some(up), Some(s)) if w.confirms && deviates(s.median) == Some(up) => {
                // Confirmed: a new network; calibrate often again.
                self.pool.clear();
                self.pool_push(s);
                self.pool_push(p);
                self.relearn(now, n, true);
                self.period = self.c.learner.probe_first;
            }
            (Some(_), prior) if !w.confirms => {
                // Suspected: confirm soon; the window waits outside the set.
                if let Some(s) = prior {
                    self.pool_push(s);
                }
                self.suspect = Some(p);
                self.next_probe = Some(now + CONFIRM_AFTER);
            }
            (_, prior) => {
                if let Some(s) = prior {
                    self.pool_push(s);
                }
                self.pool_push(p);
                self.relearn(now, n, false);
            }
        }
    }

    /// Finalises the pending windows whose samples have all arrived: an ACK of `seq`, sent after
    /// the window, has come (the path keeps order), or the window timed out.
    fn finalise_done(&mut self, now: Instant, acked: Option<u64>) {
        while let Some(w) = self.pending.front() {
            let done_by_ack = acked.is_some_and(|s| w.seqs.is_none_or(|(_, last)| s > last));
            let done_by_time = w.sample_until.is_some_and(|u| now >= u + WINDOW_TIMEOUT);
            if !(done_by_ack || done_by_time) {
                break;
            }
            let w = self.pending.pop_front().expect("front exists");
            self.finalise(now, w);
        }
    }

    /// The rate delivered over the last [`RATE_SPAN`], bytes/s.
    fn delivered(&self) -> f64 {
        self.acked_sum as f64 / RATE_SPAN.as_secs_f64()
    }

    fn start_window(&mut self, now: Instant, r: f64, confirms: bool) {
        let l = &self.c.learner;
        let settle = (l.settle + self.delta_hat.unwrap_or(Duration::ZERO) * 2).min(MAX_SETTLE);
        self.rate_ref = Some(self.delivered());
        self.window = Some(Window {
            sample_from: now + settle,
            sample_until: None,
            r_pre: Some(r),
            confirms,
            seqs: None,
            sampled: None,
            samples: vec![],
        });
        self.next_probe = None;
    }
}

impl RateLaw for AdaptiveUm {
    fn on_packet_sent(&mut self, now: Instant, seq: u64, _size: u64) {
        if let Some(w) = self.window.as_mut() {
            extend(&mut w.seqs, seq);
            if now >= w.sample_from {
                extend(&mut w.sampled, seq);
            }
        }
    }

    fn on_ack(&mut self, now: Instant, ack: &AckInfo, r: &mut f64) {
        let d_ms = ack.delta.as_millis_f64();
        if let Some(w) = self.window.as_mut() {
            if contains(w.sampled, ack.seq) {
                w.samples.push((ack.send_time, d_ms));
            }
        }
        for w in self.pending.iter_mut() {
            if contains(w.sampled, ack.seq) {
                w.samples.push((ack.send_time, d_ms));
            }
        }
        self.finalise_done(now, Some(ack.seq));
        // The delivered rate, and its trigger.
        self.acked.push_back((now, ack.acked_bytes));
        self.acked_sum += ack.acked_bytes;
        while let Some(&(t, b)) = self.acked.front() {
            if now.saturating_duration_since(t) <= RATE_SPAN {
                break;
            }
            self.acked.pop_front();
            self.acked_sum -= b;
        }
        if self.in_any_window(ack.seq) {
            self.last_step = None;
            return;
        }
        if self
            .rate_ref
            .is_some_and(|r0| r0 > 0.0 && self.delivered() > 2.0 * r0)
        {
            self.rate_ref = None;
            self.trigger(now);
        }
        let dt = self.last_step.map_or(Duration::ZERO, |t| {
            now.saturating_duration_since(t).min(MAX_STEP)
        });
        self.last_step = Some(now);
        let dr = self.delta_r(ack.delta.as_secs_f64(), *r, dt.as_secs_f64());
        *r += dr;
    }

    /// Eq. (2) ignores losses (those the buffer causes show as delay first).
    fn on_loss(&mut self, _now: Instant, _loss: &LossInfo, _r: &mut f64) {}

    /// A new path: calibrate soon.
    fn on_path_change(&mut self, now: Instant) {
        self.trigger(now);
    }

    fn on_time(&mut self, now: Instant, r: f64) {
        if self.fixed {
            return;
        }
        self.finalise_done(now, None);
        let l = self.c.learner.clone();
        // The opening window: the start rate for 1 s.
        if self.delta_hat.is_none() && self.window.is_none() && self.next_probe.is_none() {
            self.window = Some(Window {
                sample_from: now,
                sample_until: Some(now + STARTUP_WINDOW),
                r_pre: None,
                confirms: false,
                seqs: None,
                sampled: None,
                samples: vec![],
            });
            self.next_probe = Some(now + STARTUP_WINDOW + self.next_period());
        }
        // End of sampling: enough time and enough packets, or the longest sampling time.
        if let Some(w) = self.window.as_mut() {
            if w.sample_until.is_none() && now >= w.sample_from {
                let sent = w.sampled.map_or(0, |(a, b)| b - a + 1);
                if (now >= w.sample_from + l.window && sent >= u64::from(l.window_samples))
                    || now >= w.sample_from + MAX_SAMPLING
                {
                    w.sample_until = Some(now);
                }
            }
            if w.sample_until.is_some_and(|u| now >= u) {
                let w = self.window.take().expect("checked");
                if self.next_probe.is_none() {
                    self.next_probe = Some(now + self.next_period());
                }
                self.pending.push_back(w);
            }
        }
        if self.window.is_none() && self.next_probe.is_some_and(|t| now >= t) {
            let confirms = self.suspect.is_some();
            self.start_window(now, r, confirms);
        }
    }

    fn sending_rate(&self, _now: Instant, r: f64) -> f64 {
        if self.fixed {
            return r;
        }
        match &self.window {
            Some(w) if w.r_pre.is_some() => r * self.c.learner.depth,
            _ => r,
        }
    }

    fn delay_target(&self) -> Option<Duration> {
        self.delta_hat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn ack_at(seq: u64, send_time: Instant, delta: Duration, bytes: u64) -> AckInfo {
        AckInfo {
            seq,
            size: bytes,
            acked_bytes: bytes,
            send_time,
            rtt: ms(100),
            srtt: ms(100),
            min_rtt: ms(100),
            delta,
            round: None,
            segment: 1000,
        }
    }

    #[test]
    fn eqs_2_to_4() {
        let c = AdaptiveConfig {
            alpha_max: 200.0,
            alpha_min: 20.0,
            beta_min: 0.5,
            beta_max: 5.0,
            delta_hat: Some(ms(100)),
            ..AdaptiveConfig::default()
        };
        let l = AdaptiveUm::new(&c);
        let r = 100_000.0;
        // δ = 0: α_max per second; δ = δ̂: α_min; halfway: the mean.
        assert!((l.delta_r(0.0, r, 1.0) - 200.0).abs() < 1e-9);
        assert!((l.delta_r(0.1, r, 1.0) - 20.0).abs() < 1e-9);
        assert!((l.delta_r(0.05, r, 1.0) - 110.0).abs() < 1e-9);
        // Half the time: half the step.
        assert!((l.delta_r(0.0, r, 0.5) - 100.0).abs() < 1e-9);
        // Just above δ̂: β_min; at δ_max = 200 ms and beyond: β_max (per second, compounded
        // over ΔT: 1 − e^(−β·ΔT) of R).
        let cut = |b: f64, dt: f64| -r * (1.0 - (-b * dt).exp());
        assert!((l.delta_r(0.1 + 1e-9, r, 0.01) - cut(0.5, 0.01)).abs() < 1e-3);
        assert!((l.delta_r(0.15, r, 0.01) - cut(2.75, 0.01)).abs() < 1e-6);
        assert!((l.delta_r(0.2, r, 0.01) - cut(5.0, 0.01)).abs() < 1e-6);
        assert!((l.delta_r(1.0, r, 0.01) - cut(5.0, 0.01)).abs() < 1e-6);
        // Two steps of 5 ms decrease as much as one of 10 ms, whatever the ACK rate.
        let half = l.delta_r(1.0, r, 0.005);
        let two = half + l.delta_r(1.0, r + half, 0.005);
        assert!((two - l.delta_r(1.0, r, 0.01)).abs() < 1e-6);
        // No time, no step.
        assert_eq!(l.delta_r(1.0, r, 0.0), 0.0);
    }

    #[test]
    fn the_step_does_not_depend_on_how_many_acks_arrive() {
        // The same second at a delay above δ̂, acknowledged by 10 or by 100 ACKs, costs R the
        // same fraction; below δ̂ it gains the same bytes/s.
        let run = |acks: u64, delay: Duration| -> f64 {
            let c = AdaptiveConfig {
                delta_hat: Some(ms(50)),
                ..AdaptiveConfig::default()
            };
            let mut l = AdaptiveUm::new(&c);
            let mut r = 500_000.0;
            let gap = Duration::from_secs(1) / acks;
            for i in 0..=acks {
                let now = Instant::ZERO + gap * i;
                l.on_ack(now, &ack_at(i, now, delay, 1000), &mut r);
            }
            r
        };
        let (few, many) = (run(10, ms(200)), run(100, ms(200)));
        assert!((few - many).abs() < 1e-6 * many, "{few} vs {many}");
        assert!((many - 500_000.0 * (-1.0f64).exp()).abs() < 1.0, "{many}");
        let (few, many) = (run(10, ms(0)), run(100, ms(0)));
        assert!((few - many).abs() < 1e-6, "{few} vs {many}");
        assert!((many - 525_000.0).abs() < 1e-6, "{many}");
    }

    /// Drives the learner: packets every 10 ms at rate `r`, each acknowledged 50 ms later with
    /// queueing delay `delay(t)`. Returns R over time.
    fn drive(
        l: &mut AdaptiveUm,
        r0: f64,
        secs: u64,
        delay: impl Fn(Instant, u64) -> Duration,
    ) -> Vec<(Instant, f64)> {
        let mut r = r0;
        let mut out = vec![];
        let mut inflight: VecDeque<(u64, Instant)> = VecDeque::new();
        let step = ms(10);
        let mut t = Instant::ZERO;
        let mut seq = 0;
        while t < Instant::from_secs(secs) {
            l.on_time(t, r);
            l.on_packet_sent(t, seq, 1000);
            inflight.push_back((seq, t));
            seq += 1;
            while inflight.front().is_some_and(|&(_, s)| s + ms(50) <= t) {
                let (s, sent) = inflight.pop_front().unwrap();
                l.on_ack(t, &ack_at(s, sent, delay(sent, s), 1000), &mut r);
            }
            out.push((t, r));
            t += step;
        }
        out
    }

    #[test]
    fn learns_delta_hat_from_the_opening_window() {
        let mut l = AdaptiveUm::new(&AdaptiveConfig::default());
        // A standing 30 ms, and every tenth packet a spike of 0, 10, …, 190 ms above it.
        drive(&mut l, 100_000.0, 4, |_, s| {
            ms(30 + if s % 10 == 0 { (s / 10 % 20) * 10 } else { 0 })
        });
        let first = l.history()[0];
        // 200 samples of the opening 2 s, each less its trailing floor (30 ms): 181 zeros and
        // the spikes of 10 … 190 ms. δ_T = the 99th percentile (nearest rank: the 198th value,
        // 170 ms); δ̂ = 1.25·δ_T.
        assert_eq!(first.window_samples, 200);
        assert_eq!(first.delta_t, ms(170));
        assert_eq!(first.delta_hat, Duration::from_micros(212_500));
        assert!(!first.reset);
    }

    #[test]
    fn a_slowly_moving_queue_cancels_in_the_spread() {
        let mut l = AdaptiveUm::new(&AdaptiveConfig::default());
        // A queue rising 20 ms per second (another flow's), with 5-ms spikes every tenth packet.
        drive(&mut l, 100_000.0, 4, |t, s| {
            Duration::from_secs_f64(0.02 * t.as_secs_f64()) + ms(if s % 10 == 0 { 5 } else { 0 })
        });
        let first = l.history()[0];
        // Over 500 ms the queue rises 10 ms: the spread is at most 10 + 5 ms, not the 40 ms the
        // queue moved over the window.
        assert!(first.delta_t <= ms(16), "{first:?}");
    }

    #[test]
    fn windows_reduce_the_rate_then_come_less_often() {
        let mut l = AdaptiveUm::new(&AdaptiveConfig::default());
        let r = 200_000.0;
        let mut t = Instant::ZERO;
        let mut seq = 0;
        let mut starts = vec![];
        let mut in_window = false;
        // Every 10 ms a packet; its ACK 50 ms later at 5 ms of delay.
        let mut acks: VecDeque<(u64, Instant)> = VecDeque::new();
        let mut rr = r;
        while t < Instant::from_secs(120) {
            l.on_time(t, rr);
            let x = l.sending_rate(t, rr);
            if x < rr && !in_window {
                starts.push(t);
            }
            in_window = x < rr;
            // The opening window holds R; later windows send at 40 %.
            assert!(x == rr || (x - 0.4 * rr).abs() < 1e-9);
            l.on_packet_sent(t, seq, 1000);
            acks.push_back((seq, t));
            seq += 1;
            while acks.front().is_some_and(|&(_, s)| s + ms(50) <= t) {
                let (s, sent) = acks.pop_front().unwrap();
                let before = rr;
                l.on_ack(t, &ack_at(s, sent, ms(5), 1000), &mut rr);
                // R is not updated by the ACKs of packets sent in a window.
                if l.in_any_window(s) {
                    assert_eq!(rr, before);
                }
            }
            t += ms(10);
        }
        // 5 s after the opening window, then intervals growing by half up to 30 s.
        let gaps: Vec<f64> = starts
            .windows(2)
            .map(|w| (w[1] - w[0]).as_secs_f64())
            .collect();
        assert!((starts[0].as_secs_f64() - 7.0).abs() < 0.05, "{starts:?}");
        assert!(gaps.windows(2).all(|g| g[1] >= g[0] - 0.05), "{gaps:?}");
        assert!(gaps.iter().all(|&g| g <= 30.0 + 3.5), "{gaps:?}");
        // δ̂ learned from 5-ms delays: the floor of 10 ms.
        assert_eq!(l.delta_hat(), Some(ms(10)));
    }

    #[test]
    fn a_confirmed_change_of_network_replaces_the_set() {
        let mut l = AdaptiveUm::new(&AdaptiveConfig::default());
        // 300 ms of noise spread for 100 s, then 30 ms.
        let switch = Instant::from_secs(100);
        drive(&mut l, 50_000.0, 160, |t, s| {
            if t < switch {
                ms(s * 7 % 300)
            } else {
                ms(s * 7 % 30)
            }
        });
        let h = l.history();
        let before = h.iter().rev().find(|x| x.at < switch).unwrap();
        assert!(before.delta_hat > ms(300), "{before:?}");
        let after = h.iter().find(|x| x.at > switch).unwrap();
        assert!(after.reset, "{h:?}");
        assert!(after.delta_hat < ms(40), "{after:?}");
        // Within one window interval (30 s) and a confirmation (about 3 s plus the windows).
        assert!(after.at < switch + Duration::from_secs(40), "{after:?}");
    }

    #[test]
    fn a_single_odd_window_does_not_reset_the_set() {
        let mut l = AdaptiveUm::new(&AdaptiveConfig::default());
        // 100 ms of noise spread, except 20 s of 5 ms around one window.
        let (a, b) = (Instant::from_secs(60), Instant::from_secs(62));
        drive(&mut l, 50_000.0, 150, |t, s| {
            if t >= a && t < b {
                ms(5)
            } else {
                ms(s * 7 % 100)
            }
        });
        assert!(l.history().iter().all(|x| !x.reset), "{:?}", l.history());
        assert!(l.delta_hat().unwrap() > ms(100));
    }

    #[test]
    fn a_fixed_delta_hat_needs_no_windows() {
        let c = AdaptiveConfig {
            delta_hat: Some(ms(50)),
            ..AdaptiveConfig::default()
        };
        let mut l = AdaptiveUm::new(&c);
        let out = drive(&mut l, 50_000.0, 30, |_, _| ms(10));
        assert!(l.history().is_empty());
        // Always below δ̂: R grows every ACK.
        assert!(out.windows(2).all(|w| w[1].1 >= w[0].1));
        assert_eq!(l.delay_target(), Some(ms(50)));
    }

    #[test]
    fn params() {
        use crate::scheme::ParamError;
        use crate::scheme::params::{Parameters, changed};
        let mut c = AdaptiveConfig::default();
        c.set_params(&[("delta-hat-ms", "400")]).unwrap();
        assert_eq!(c.delta_hat, Some(ms(400)));
        c.set_params(&[("quantile", "0.95")]).unwrap();
        assert_eq!(
            changed(&c),
            vec![
                ("delta-hat-ms", "400".to_string()),
                ("quantile", "0.95".to_string())
            ]
        );
        c.set_params(&[("delta-hat-ms", "auto")]).unwrap();
        assert_eq!(c.delta_hat, None);
        assert!(c.set_params(&[("depth", "2")]).is_err());
        assert!(c.set_params(&[("alpha-min", "30000")]).is_err());
        assert!(matches!(
            c.set_params(&[("k0", "1")]),
            Err(ParamError::UnknownParam { .. })
        ));
    }
}
