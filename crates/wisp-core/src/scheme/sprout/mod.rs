//! `sprout` — Sprout, the rate control of Alfalfa (Winstein, Sivaraman, Balakrishnan,
//! "Alfalfa: A Videoconferencing Protocol for Cellular Wireless Networks", NSDI 2013, §3 and
//! §6.4), with Sprout-EWMA (`sprout-ewma`).
//!
//! The receiver models the bottleneck as a doubly stochastic process: packets are delivered by a
//! Poisson process whose rate λ moves in Brownian motion, with a sticky outage state at λ = 0.
//! It keeps a belief over λ, updates it every tick from the count of packets that arrived, and
//! sends the sender a cautious forecast of how many bytes the link will deliver over the next
//! ticks. The sender keeps at most as much in the network queue as the forecast expects to drain
//! within 100 ms.
//!
//! The paper numbers no equations; the numbers below are ours, with the paper's section.
//!
//! * Eq. 1 (§3.1–3.2, evolve): λ(t + τ) ~ N(λ(t), σ²τ) for λ > 0; an outage lasts Exp(λz):
//!   P(stay) = e^(−λz·τ). σ = 200 packets/s per √s, λz = 1/s, τ = 20 ms; λ ∈ {0} ∪ 256 bins on
//!   [0, 1000] MTU-sized packets/s, uniform at start. (See [`model`] for the discretisation.)
//! * Eq. 2 (§3.2, observe and normalise): P(λ = x) ← P(λ = x)·x^k e^(−x)/k! / Z, where k is the
//!   tick's packet count and x = λτ. Skipped for a silent tick while the sender's latest
//!   time-to-next promise has not expired (and a lower bound otherwise; deviation 7).
//! * Eq. 3 (§3.3, forecast): the 5th percentile of the cumulative deliveries C_n over the next
//!   n = 1..8 ticks. The law of C_n is linear in the belief, P(C_n ≤ c) = Σ_x P(λ = x)·F_n(c | x),
//!   and the F_n are precomputed (in about 65 ms, not the original's 32 s), so the work per tick
//!   is a weighted sum over the bins (footnote 6).
//! * Eq. 4 (§3.4, received-or-lost): every packet carries its byte sequence number s and a
//!   throwaway number w (the offset back to the oldest packet sent within the last 10 ms); the
//!   receiver declares every byte before s − w received or lost, and reports
//!   R = (s − w)_max + Σ bytes received at or after it.
//! * Eq. 5 (§3.5, queue estimate): Q ← sent − R when a forecast arrives; Q ← Q + size for each
//!   packet sent; Q ← max(0, Q − (C_k − C_{k−1})) as the forecast's tick k elapses.
//! * Eq. 6 (§3.5, window): W = max(0, C_{k+5} − C_k − Q), k the forecast's elapsed ticks
//!   (C beyond the horizon is C_8, so a forecast 8 ticks old allows nothing). The five ticks
//!   start where eq. 5's queue estimate stands; the original starts one tick later (deviation 13).
//!
//! `sprout-ewma` (§6.4; the original's `ewma-noforecast` branch) replaces eqs. 1–3 by
//! r ← r + (k − r)/8 per observed tick (from r = 0) and C_n = n·r. The sender is the same.
//!
//! Beyond the paper (experimental, not a registered scheme): `sprout:sigmas=50/100/200/400/800`
//! infers σ online, after §3.1's "a more sophisticated system would allow σ … to vary". It runs
//! one Sprout filter per σ and forecasts from their mixture, each weighted by its posterior
//! probability given the counts so far, with fixed-share switching (`share`, ε = 0.002 per tick);
//! see [`filter::AdaptiveFilter`]. On the ten shipped cellular traces (each with its pair as the
//! feedback path, 20 ms, infinite queue; `wisp bench --schemes
//! sprout,sprout:sigmas=50/100/200/400/800`) it beat Sprout's throughput at equal or lower
//! self-inflicted delay on one (Verizon-EVDO-driving.up: 483 vs 433 kbit/s at 200 vs 259 ms),
//! came close on two more uplinks where it settles on small σ (ATT-LTE-driving.up 549 vs 464
//! kbit/s at 577 vs 574 ms; TMobile-UMTS-driving.up 711 vs 605 at 245 vs 232 ms), and otherwise
//! moved along the throughput/delay trade-off, so it is not offered as a scheme of its own.
//!
//! Deviations (from the paper, and from the original code where it departs from the paper; facts
//! about the code from `notes/sprout-cellsim-mahimahi.md` §3). [`SproutConfig::default()`] is the
//! paper's Sprout with the deviations below. Every value the paper gives is the paper's (§3.1: σ,
//! λz, 256 values on [0, 1000] packets/s, the 20-ms tick; §3.3: 8 ticks, the 5th percentile, the
//! forecast as described, `forecast=paper`; §3.4: 10 ms; §3.5: 5 ticks), and the experimental σ
//! inference is off (`sigmas=none`: §3.1's fixed σ). Where the paper gives no value the default is
//! the original's or ours and says so (heartbeats, deviation 8; Sprout-EWMA's α = 1/8, the
//! original's). Two defaults add behaviour that is in neither the paper nor the original: the jump
//! into the outage, `outage-entry=0.05` (deviation 3; 0 is the paper's model), and the heartbeat
//! back-off, `heartbeat-max-ms=100` (deviation 8; 20, the heartbeat interval, is none).
//! `sprout:outage-entry=0,heartbeat-max-ms=20` turns both off; they are kept because
//! `wisp reproduce sprout` meets one claim more with them (42 of 55, against 41: without them Sprout's
//! self-inflicted delay on ATT-LTE-driving.up is 1385 ms, 4th of 8, not 574 ms, 2nd).
//!
//! 1. **Units.** One "MTU-sized packet" is the flow's MTU (1500 bytes) at both ends, and the
//!    forecast travels in bytes. (The original counts 1400-byte packets at the receiver and turns
//!    counts into 1440-byte packets at the sender, over-sending by 2.9%.)
//! 2. **Queue estimate.** Each elapsed tick subtracts that tick's forecast deliveries
//!    C_k − C_{k−1}, as §3.5 says. (The original subtracts the cumulative C_k, over-draining
//!    from the second tick on, and adds 50 bytes per packet.)
//! 3. **Outage state.** The transition conserves probability: rates that diffuse below 0 enter the
//!    outage, which keeps its mass with probability e^(−λz·τ) and otherwise escapes to a Brownian
//!    step from 0. (The original's bin 0 loses about 45% of its mass per tick before
//!    renormalisation, so its outages are far less sticky than λz = 1/s.) **Entering** an outage:
//!    besides diffusing below 0, a link at any rate drops into it at `outage-entry` = 0.05 per
//!    second (probability 0.001 per tick). In the paper's model the only way into the outage is to
//!    diffuse there, a few σ√τ ≈ 28 packets/s per tick, so after the link goes silent at 800
//!    packets/s the 5th-percentile forecast stays above zero for 6 ticks (120 ms, while the sender
//!    fills the dead link) and at 400 for 4; with the jump it is zero after 1 (and after 1–2 ticks
//!    from 50–200 packets/s, as before). Real links do fall silent from full speed: the ten shipped
//!    traces have 0.007–0.14 gaps of 500 ms or more per second (median 0.05, hence the value). The
//!    cost is small because a tick with any arrival rules the outage out again: over the ten traces
//!    (`wisp bench --schemes sprout:outage-entry=0,sprout`; re-measured at 159f535, unchanged)
//!    throughput changed by +0.2% to −1.6% and self-inflicted delay by −29 to +3 ms (339 → 310 ms
//!    on TMobile-UMTS-driving.down, 130 → 123 on TMobile-LTE-short.down, 285 → 259 on
//!    Verizon-EVDO-driving.up, 75 → 72 on Verizon-LTE-short.down; +3 on ATT-LTE-driving.down, +2 on
//!    Verizon-LTE-short.up). `outage-entry=0` is the paper's model.
//! 4. **Forecast timing.** The forecast's first tick is the *next* tick, so the belief is
//!    evolved once before it (§3.3 "evolving … forward to each of the eight ticks"); the original
//!    forecasts the first tick from the unevolved posterior.
//! 5. **No count truncation.** Per-tick counts are not cut at 29 packets (the original drops the
//!    ≥ 30 tail from its forecast tables); the tables go up to max-rate × horizon.
//! 6. **Gaussian.** Bin-to-bin probabilities use an exact normal CDF (erfc), cut at ±6σ√τ and
//!    renormalised, instead of a 32768-sample table cut at ±5σ√τ.
//! 7. **Time-to-next and underfull ticks.** The receiver follows the paper's rule, the *most
//!    recent* packet's promise (the original keeps the latest-expiring one). A silent tick is
//!    evidence (k = 0) only if it began after the promise expired, as in the original. A tick
//!    with arrivals whose promise runs to its end (or beyond) shows only that the link delivered
//!    *at least* k packets — the sender's queue ran dry — and is observed as the censored
//!    likelihood P(N ≥ k | λ); any other tick is an exact count. (The paper skips observation
//!    while the promise runs; the original observes every nonzero count as exact. Both stall:
//!    read as exact, a heartbeat or a small flight pins the belief at the sender's own rate and
//!    the cautious forecast never allows more; skipped, the belief drifts into the sticky
//!    outage. A lower bound keeps the information and neither bias.) The sender stamps 0
//!    inside a flight, and at a flight's end the heartbeat interval — the time by which it will
//!    certainly send again (the original uses a fixed 50 ms).
//! 8. **Heartbeats.** A 64-byte heartbeat after 20 ms without sending (one tick; the paper gives
//!    no value, the original's bulk sender uses 50 ms, its `sendonly` server 20 ms). A tick with
//!    any arrival counts at least one packet (as the original), so a heartbeat rules out an
//!    outage. **Back-off** (neither the paper nor the original): once three heartbeats have
//!    gone out since the forecasts last showed received-or-lost advancing, each further one
//!    doubles the interval, up to `heartbeat-max-ms` (100 ms, the window's 5-tick lookahead);
//!    a forecast that shows bytes received resets it. Heartbeats still queued in the network
//!    tell the receiver the link works as soon as it delivers again; more of them only queue
//!    ahead of the next data (a 78-s outage of ATT-LTE-driving.up collected 3,900 heartbeats,
//!    250 kB, 2.4 s of that 834-kbit/s link). Over the ten shipped traces (`wisp bench
//!    --schemes sprout:heartbeat-max-ms=20,sprout`, re-measured at 159f535 with deviation 3's
//!    jump), the back-off (`heartbeat-max-ms=20`, none → 100) changed throughput by +0.2% to
//!    −1.0% on eight traces and −2.8% and −4.0% on Verizon-EVDO-driving (247 → 240 and 451 → 433
//!    kbit/s), and
//!    self-inflicted delay from 1385 to 574 ms on ATT-LTE-driving.up, 604 → 310 and 361 → 232 on
//!    TMobile-UMTS-driving, 1142 → 838 and 432 → 259 on Verizon-EVDO-driving, 159 → 150 on
//!    ATT-LTE-driving.down, and by at most 4 ms on the four short LTE traces (54 → 58 on
//!    TMobile-LTE-short.up). The alternatives below were measured before deviation 3's jump.
//!    Longer caps (320 ms, 1 s) cut the long outages further but cost up to the cap at the end of
//!    every outage, when the newest delivered packet is a heartbeat sent that long ago (153 → 329
//!    ms on ATT-LTE-driving.down at 1 s). A budget tried on top (at most 1500 bytes of
//!    unacknowledged heartbeats, then one a second) brought ATT-LTE-driving.up from 574 to 314
//!    ms — its 95th percentile lies inside a 78-s outage, and what it measures there is the
//!    ~0.6 s the queued heartbeats take to drain — but raised TMobile-UMTS-driving.down from 310
//!    to 483 ms and ATT-LTE-driving.down from 150 to 207 for the same staleness reason, so it
//!    is not used.
//! 9. **Feedback.** One forecast message per tick on the reverse path (the original piggybacks
//!    forecasts on data, at most once per flight and tick). Its age is measured from its arrival
//!    at the sender, as in the original.
//! 10. **States.** 256 rate bins plus a separate outage state (257 states, as the original; the
//!     paper's "256 values from 0 to 1000" includes 0). Beliefs below 10⁻³⁰ are set to 0 (no
//!     effect on any forecast; it keeps the per-tick work to the states that matter). If a
//!     count has zero likelihood under the whole belief, the belief restarts from the prior.
//! 11. **Sprout-EWMA counts** are the same rounded per-tick packet counts as Sprout's (the
//!     original's EWMA branch averages fractional bytes/1400); a lower bound above the average
//!     is averaged in, one below it is ignored.
//! 12. **Sending.** The application is a bulk source: each time the window allows, the sender
//!     sends it whole as back-to-back MTU packets (as the original's `sproutbt2`), with no
//!     video codec behind it (§4's video layer is the `alfalfa` scheme, [`super::alfalfa`]).
//! 13. **Window alignment.** After k elapsed ticks the queue estimate has been drained by the
//!     forecast's ticks 1..k, and the window counts the next five, k+1..k+5 (eq. 6), as §3.5 reads:
//!     Q and the lookahead start at the same tick. The original computes
//!     `counts[min(k+5, 7)] − counts[k]` with `counts[i]` = C_{i+1} and k at most 7, that is
//!     C_{min(k+6, 8)} − C_{k+1}: ticks k+2..k+6, one tick later than its own queue estimate, so
//!     its window closes after 7 ticks (140 ms) without a new forecast, ours after 8. In both, C_1
//!     is the tick that follows the last one the receiver observed (deviation 4), so the
//!     difference is the sender's alone.
//!     Measured with the original's alignment (the window taken from C_{k+1}, a one-line change in
//!     [`SproutSender::window`]; `wisp bench --schemes sprout,sprout-ewma --traces traces/cellular`
//!     at 159f535): Sprout's throughput +1.4% to +6.4% on nine of the ten traces (4192 → 4322
//!     kbit/s on Verizon-LTE-short.down) and −5.9% on Verizon-EVDO-driving.up (433 → 407);
//!     self-inflicted delay +1 to +43 ms on eight (72 → 78 on Verizon-LTE-short.down, 123 → 137 on
//!     TMobile-LTE-short.down, 232 → 275 on TMobile-UMTS-driving.up) and −15 and −174 ms on
//!     Verizon-EVDO-driving (up 259 → 244, down 838 → 664); Sprout-EWMA within 0.5% and 11 ms
//!     except on Verizon-EVDO-driving (down −0.8% at −91 ms, up −3.9% at −4 ms).
//!     `wisp reproduce sprout` meets 40 of 55 with it instead of 42 (Sprout-EWMA no longer has
//!     more delay than Sprout on ATT-LTE-driving.up, 577 ms both, nor on TMobile-UMTS-driving.up,
//!     259 against 275 ms). Kept: the paper's reading, and the reproduction's claims.
//!
//! Parameters (`sprout:KEY=VALUE,…`): `sigma`, `outage-escape`, `outage-entry`, `bins`, `max-rate`
//! (packets/s), `tick-ms`, `ticks`, `quantile`, `forecast` (`paper` | `joint`: the exact law of
//! eq. 3 with the ticks' counts correlated through the shared rate path), `lookahead` (ticks),
//! `reorder-ms`, `heartbeat-ms`, `heartbeat-bytes`, `heartbeat-max-ms`, `alpha` (Sprout-EWMA),
//! `sigmas` (the experimental σ grid, `/`-separated, or `none`), `share` (its switching probability
//! per tick).

use super::registry::{Halves, Scheme, SchemeInfo};
use super::{Built, SchemeContext};
use crate::pacer::Pacer;
use crate::source::Source;
use crate::tables::Tables;

pub mod filter;
pub mod forecast;
pub mod model;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use filter::{AdaptiveFilter, BayesFilter, Estimator, EwmaForecaster};
pub use model::{Forecast, ForecastMethod, ModelParams, Observation, SproutModel};
pub use receiver::{SproutReceiver, TickRecord};
pub use sender::SproutSender;

use super::params::{Checked, Given, Validate, check, range, scheme_config};
use crate::time::Duration;
use crate::units::DataSize;
use crate::units::serde_as::{bytes, ms};

/// Which estimator the receiver runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Variant {
    /// Sprout's Bayesian filter and cautious forecast (§3).
    #[default]
    Sprout,
    /// Sprout-EWMA (§6.4).
    Ewma,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Sprout => "sprout",
            Variant::Ewma => "sprout-ewma",
        }
    }
}

scheme_config! {
    /// Configuration of Sprout and its variants. `Default` is the paper's Sprout with the
    /// deviations listed in the module doc. Two defaults add behaviour the paper does not have:
    /// `model.outage_entry` (0.05 per second, deviation 3; the paper's model is 0) and
    /// `heartbeat_max` (100 ms, deviation 8; no back-off, as the paper, is `heartbeat_max` =
    /// `heartbeat_interval`). The heartbeat's interval and size, Sprout-EWMA's α and the σ
    /// mixture's `share` are values the paper does not give (each field says whose they are).
    ///
    /// The variants take different keys: `sprout` the model's, `lookahead` and the heartbeat's,
    /// `sigmas` and `share`; `sprout-ewma` its `alpha`, the tick, the horizon, `lookahead` and the
    /// heartbeat's.
    #[derive(Clone, Debug, PartialEq)]
    pub struct SproutConfig {
        /// The EWMA's weight per tick.
        // Sprout-EWMA's (1/8, the original's; the paper gives no value).
        #[serde(rename = "alpha")]
        pub ewma_alpha: f64,
        /// The link model and forecast (§3.1, §3.3).
        #[group]
        pub model: ModelParams,
        /// Ticks of forecast the window looks ahead.
        // 5 = 100 ms, §3.5.
        pub lookahead: usize,
        /// Packets sent further apart than this are not reordered, ms.
        // 10 ms, §3.4.
        #[serde(rename = "reorder-ms", with = "ms")]
        pub reorder_limit: Duration,
        /// A heartbeat after this long without sending, ms.
        // The sender's (20 ms; the paper gives no value, deviation 8).
        #[serde(rename = "heartbeat-ms", with = "ms")]
        pub heartbeat_interval: Duration,
        /// A heartbeat's size on the wire, bytes.
        // 64 bytes; the paper says "small", deviation 8.
        #[serde(rename = "heartbeat-bytes", with = "bytes")]
        pub heartbeat_size: DataSize,
        /// The longest heartbeat interval the back-off reaches, ms.
        // 100 ms, not in the paper: deviation 8; at most `heartbeat_interval` for no back-off,
        // as the paper.
        #[serde(rename = "heartbeat-max-ms", with = "ms")]
        pub heartbeat_max: Duration,
        /// Experimental: infer σ from this grid (`/`-separated, two or more; `none`: fixed σ).
        // Instead of using `model.sigma`; empty (the paper's fixed σ) by default.
        pub sigmas: Vec<f64>,
        /// The σ mixture's switching probability per tick.
        // 0.002, ours; used only with `sigmas`.
        pub share: f64,
        /// The estimator, as the scheme's name chose it.
        #[serde(skip)]
        pub variant: Variant,
    }
}

impl Default for SproutConfig {
    fn default() -> Self {
        SproutConfig {
            ewma_alpha: 1.0 / 8.0,
            model: ModelParams::default(),
            lookahead: 5,
            reorder_limit: Duration::from_millis(10),
            heartbeat_interval: Duration::from_millis(20),
            heartbeat_size: DataSize::from_bytes(64),
            heartbeat_max: Duration::from_millis(100),
            sigmas: vec![],
            share: 0.002,
            variant: Variant::Sprout,
        }
    }
}

impl SproutConfig {
    /// The Sprout configuration a scheme is (`sprout`, `sprout-ewma`), if it is one: what a
    /// tool of Sprout's own (`wisp forecast`) runs.
    pub fn of(scheme: &super::SchemeConfig) -> Option<&SproutConfig> {
        match scheme {
            super::SchemeConfig::Sprout(c) => Some(c),
            _ => None,
        }
    }

    /// The default configuration of a variant.
    pub fn new(variant: Variant) -> Self {
        SproutConfig {
            variant,
            ..SproutConfig::default()
        }
    }

    /// The receiver's estimator, its model tables from `tables`.
    pub fn estimator(&self, tables: &Tables) -> Estimator {
        match self.variant {
            Variant::Sprout if !self.sigmas.is_empty() => Estimator::Adaptive(AdaptiveFilter::new(
                tables,
                self.model,
                &self.sigmas,
                self.share,
            )),
            Variant::Sprout => {
                Estimator::Bayes(BayesFilter::new(SproutModel::shared(tables, self.model)))
            }
            Variant::Ewma => {
                Estimator::Ewma(EwmaForecaster::new(self.ewma_alpha, self.model.ticks))
            }
        }
    }

    /// The protocol's checks, shared by both variants.
    fn check_protocol(&self, given: &Given<'_>) -> Checked {
        let tick = "a tick in ms, in (0, 1000]";
        let tick_ms = given.number("tick-ms", self.model.tick.as_millis_f64());
        check("tick-ms", tick_ms > 0.0, tick)?;
        given.time_ms("tick-ms", self.model.tick, 0.0, 1000.0, tick)?;
        range(
            "ticks",
            self.model.ticks as f64,
            1.0,
            model::MAX_TICKS as f64,
            "a horizon of 1 to 16 ticks",
        )?;
        check(
            "lookahead",
            self.lookahead >= 1,
            "a number of ticks, 1 or more",
        )?;
        given.time_ms(
            "reorder-ms",
            self.reorder_limit,
            0.0,
            10_000.0,
            "a time in ms, 0 to 10000",
        )?;
        let heartbeat = "a time in ms, in (0, 60000]";
        let heartbeat_ms = given.number("heartbeat-ms", self.heartbeat_interval.as_millis_f64());
        check("heartbeat-ms", heartbeat_ms > 0.0, heartbeat)?;
        given.time_ms(
            "heartbeat-ms",
            self.heartbeat_interval,
            0.0,
            60_000.0,
            heartbeat,
        )?;
        range(
            "heartbeat-bytes",
            self.heartbeat_size.bytes() as f64,
            1.0,
            1500.0,
            "1 to 1500 bytes",
        )?;
        given.time_ms(
            "heartbeat-max-ms",
            self.heartbeat_max,
            0.0,
            600_000.0,
            "a time in ms, 0 to 600000",
        )
    }

    /// The checks of Sprout's own keys (the model, `sigmas`, `share`).
    fn check_sprout(&self, given: &Given<'_>) -> Checked {
        let m = &self.model;
        check("sigma", m.sigma > 0.0, "a positive σ in packets/s per √s")?;
        check(
            "outage-escape",
            m.outage_escape >= 0.0,
            "a non-negative rate per second",
        )?;
        check(
            "outage-entry",
            (0.0..100.0).contains(&m.outage_entry),
            "a rate per second in [0, 100)",
        )?;
        range(
            "bins",
            m.bins as f64,
            2.0,
            4096.0,
            "a number of bins, 2 to 4096",
        )?;
        check(
            "max-rate",
            m.max_rate > 0.0 && m.max_rate <= 1e5,
            "a positive rate in packets/s, at most 100000",
        )?;
        check(
            "quantile",
            m.quantile > 0.0 && m.quantile < 1.0,
            "a probability in (0, 1)",
        )?;
        self.check_protocol(given)?;
        let count = m.max_rate * m.tick.as_secs_f64() * m.ticks as f64;
        if count.ceil() + 1.0 > 20_000.0 {
            return Err(super::params::Invalid {
                keys: vec!["max-rate", "tick-ms", "ticks"],
                expected: "max-rate × tick × ticks of at most 20000 packets".to_string(),
            });
        }
        check(
            "sigmas",
            self.sigmas.is_empty()
                || ((2..=16).contains(&self.sigmas.len()) && self.sigmas.iter().all(|s| *s > 0.0)),
            "2 to 16 positive σ values separated by `/`",
        )?;
        check(
            "share",
            (0.0..1.0).contains(&self.share),
            "a probability in [0, 1)",
        )
    }
}

/// The keys of `sprout-ewma`.
const EWMA_KEYS: [&str; 8] = [
    "alpha",
    "tick-ms",
    "ticks",
    "lookahead",
    "reorder-ms",
    "heartbeat-ms",
    "heartbeat-bytes",
    "heartbeat-max-ms",
];

impl Validate for SproutConfig {
    fn validate(&self, given: &Given<'_>) -> Checked {
        match self.variant {
            Variant::Sprout => self.check_sprout(given),
            Variant::Ewma => {
                check(
                    "alpha",
                    self.ewma_alpha > 0.0 && self.ewma_alpha <= 1.0,
                    "a weight in (0, 1]",
                )?;
                self.check_protocol(given)
            }
        }
    }

    /// `sprout` takes all but `alpha`; `sprout-ewma` its own few.
    fn takes(&self, key: &str) -> bool {
        match self.variant {
            Variant::Sprout => key != "alpha",
            Variant::Ewma => EWMA_KEYS.contains(&key),
        }
    }

    /// Sprout-EWMA's tick is no inference tick.
    fn help(&self, key: &str) -> Option<&'static str> {
        (self.variant == Variant::Ewma && key == "tick-ms").then_some("The tick, ms.")
    }
}

impl Scheme for SproutConfig {
    type Sender = SproutSender;
    type Receiver = Box<SproutReceiver>;
    const NAMES: &'static [SchemeInfo] = &[
        SchemeInfo {
            name: "sprout",
            summary: "Sprout (NSDI'13): Bayesian forecast of a cellular link's delivery rate, window = 5th-percentile deliveries in 100 ms minus the queue",
        },
        SchemeInfo {
            name: "sprout-ewma",
            summary: "Sprout-EWMA (NSDI'13 §6.4): Sprout's protocol with an EWMA of the per-tick count instead of the cautious forecast",
        },
    ];

    fn named(name: &str) -> Option<Self> {
        match name {
            "sprout" => Some(SproutConfig::new(Variant::Sprout)),
            "sprout-ewma" => Some(SproutConfig::new(Variant::Ewma)),
            _ => None,
        }
    }

    fn name(&self) -> &'static str {
        self.variant.name()
    }

    /// A bulk source, unpaced (the window is the pacing); the receiver's model tables come from
    /// `ctx.tables`.
    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let mtu = ctx.mtu();
        Ok(Halves {
            sender: SproutSender::new(self, mtu),
            receiver: Box::new(SproutReceiver::new(self, mtu, &ctx.tables)),
            source: Source::bulk(mtu),
            pacer: Pacer::default(),
            mtu,
        })
    }

    /// The receiver fed a saturated link ([`forecast::SaturatedSprout`]).
    fn forecaster(&self, mtu: DataSize) -> Option<Box<dyn super::Forecaster>> {
        Some(Box::new(forecast::SaturatedSprout::new(self, mtu)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme::ParamError;
    use crate::scheme::params::{self, Parameters};

    /// The parameters that differ from the variant's defaults.
    fn changed(c: &SproutConfig) -> Vec<(&'static str, String)> {
        params::diff(
            c.param_list(),
            &SproutConfig::new(c.variant).param_list(),
            &[],
        )
    }

    /// Every field of the default configuration, against the paper's value where it gives one
    /// (NSDI 2013 §3) and otherwise against the deviation that sets it (module doc; facts on the
    /// original from `notes/sprout-cellsim-mahimahi.md` §3). The destructuring names every
    /// field, so a new field does not compile until it is checked here.
    #[test]
    fn defaults_are_the_papers() {
        let SproutConfig {
            variant,
            model:
                ModelParams {
                    bins,
                    max_rate,
                    sigma,
                    outage_escape,
                    outage_entry,
                    tick,
                    ticks,
                    quantile,
                    method,
                },
            lookahead,
            reorder_limit,
            heartbeat_interval,
            heartbeat_size,
            heartbeat_max,
            ewma_alpha,
            sigmas,
            share,
        } = SproutConfig::default();
        // Sprout's Bayesian filter, not the EWMA of §6.4.
        assert_eq!(variant, Variant::Sprout);
        // §3.1: "λ is one of 256 discrete values sampled uniformly from 0 to 1000 MTU-sized
        // packets per second" (256 rate bins plus the outage state: deviation 10; the
        // original's NUM_BINS = 256, MAX_ARRIVAL_RATE = 1000, notes §3.1).
        assert_eq!(bins, 256);
        assert_eq!(max_rate, 1000.0);
        // §3.1: "σ = 200 MTU-sized packets per second per root-second, and λz = 1".
        assert_eq!(sigma, 200.0);
        assert_eq!(outage_escape, 1.0);
        // Not in the paper (deviation 3): a jump into the outage at 0.05 per second; 0 would
        // be the paper's model.
        assert_eq!(outage_entry, 0.05);
        // §3.1: "An inference update procedure will run every 20 ms, known as a 'tick'".
        assert_eq!(tick, Duration::from_millis(20));
        // §3.3: "how many bytes will arrive at its receiver during the next eight ticks, or
        // 160 ms", "a cautious estimate, at the 5th percentile".
        assert_eq!(ticks, 8);
        assert_eq!(quantile, 0.05);
        // §3.3: evolve the distribution to each tick and sum over λ (the original's
        // ProcessForecastInterval, notes §3.3).
        assert_eq!(method, ForecastMethod::Paper);
        // §3.5: "Sprout looks ahead five ticks (100 ms) into the forecast's future".
        assert_eq!(lookahead, 5);
        // §3.4: "the most recent sent packet that was sent more than 10 ms prior".
        assert_eq!(reorder_limit, Duration::from_millis(10));
        // §3.2 asks for "regular small packets" without a value (deviation 8): one tick, as
        // the original's `sendonly` server (notes §3.5), of 64 bytes.
        assert_eq!(heartbeat_interval, Duration::from_millis(20));
        assert_eq!(heartbeat_size, DataSize::from_bytes(64));
        // Not in the paper (deviation 8): the back-off up to 100 ms; the paper's sender
        // would have heartbeat_max = heartbeat_interval.
        assert_eq!(heartbeat_max, Duration::from_millis(100));
        // §6.4 gives no weight; the original's `ewma-noforecast` branch uses 1/8 per tick
        // (notes §3.7).
        assert_eq!(ewma_alpha, 0.125);
        // §3.1: σ is fixed; the experimental σ inference is off, and its switching
        // probability (0.002 per tick) applies only when it is on.
        assert!(sigmas.is_empty());
        assert_eq!(share, 0.002);
        // The canonical spec of the default names no parameter.
        assert!(changed(&SproutConfig::default()).is_empty());
        assert!(changed(&SproutConfig::new(Variant::Ewma)).is_empty());
    }

    #[test]
    fn parameters_are_validated_and_round_trip() {
        let mut c = SproutConfig::default();
        c.set_params(&[("sigma", "150")]).unwrap();
        c.set_params(&[("tick-ms", "10")]).unwrap();
        c.set_params(&[("forecast", "joint")]).unwrap();
        c.set_params(&[("sigmas", "100/300")]).unwrap();
        assert_eq!(c.model.sigma, 150.0);
        assert_eq!(c.model.tick, Duration::from_millis(10));
        assert_eq!(c.sigmas, vec![100.0, 300.0]);
        let mut back = SproutConfig::default();
        for (k, v) in changed(&c) {
            back.set_params(&[(k, v.as_str())]).unwrap();
        }
        assert_eq!(back, c);
        for (k, v) in [
            ("sigma", "0"),
            ("sigma", "x"),
            ("ticks", "17"),
            ("quantile", "1"),
            ("bins", "1"),
            ("forecast", "magic"),
            ("sigmas", "1/x"),
            ("sigmas", "100"),
            ("lookahead", "0"),
            ("max-rate", "1e9"),
        ] {
            let before = c.clone();
            assert!(
                matches!(c.set_params(&[(k, v)]), Err(ParamError::BadValue { .. })),
                "{k}={v}"
            );
            assert_eq!(c, before, "a rejected value leaves the config unchanged");
        }
        assert!(matches!(
            c.set_params(&[("speed", "1")]),
            Err(ParamError::UnknownParam { .. })
        ));
        assert!(matches!(
            c.estimator(&Tables::new()),
            Estimator::Adaptive(_)
        ));
        assert!(matches!(
            SproutConfig::default().estimator(&Tables::new()),
            Estimator::Bayes(_)
        ));
        // Each variant takes only the parameters that apply to it.
        let mut e = SproutConfig::new(Variant::Ewma);
        e.set_params(&[("alpha", "0.25")]).unwrap();
        e.set_params(&[("lookahead", "4")]).unwrap();
        for k in ["sigma", "sigmas", "quantile", "forecast"] {
            assert!(
                matches!(
                    e.set_params(&[(k, "1")]),
                    Err(ParamError::UnknownParam { .. })
                ),
                "{k}"
            );
        }
        assert!(matches!(
            SproutConfig::default().set_params(&[("alpha", "0.5")]),
            Err(ParamError::UnknownParam { .. })
        ));
    }
}
