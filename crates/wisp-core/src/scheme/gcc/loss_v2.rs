//! Loss-based bandwidth estimation v2 — libwebrtc's `LossBasedBweV2`
//! (`modules/congestion_controller/goog_cc/loss_based_bwe_v2.cc`, read at the ajune-wang/webrtc
//! mirror, commit 03d2f569, where the estimator is enabled by default).
//!
//! A maximum-likelihood fit of a two-parameter loss model to the recent loss reports. The
//! channel is a loss-limited bandwidth B and an inherent (random) loss ι; a packet sent at rate
//! S is lost with probability
//!
//! ```text
//! p(ι, B, S) = clamp(ι + (1 − ι)·max(0, (S − B)/S), 1e-6, 1 − 1e-6)                 (1)
//! ```
//!
//! **Observations.** The packets of transport feedback accumulate in a partial observation
//! until their send times span at least 250 ms (`observation_duration_lower_bound`); it then
//! becomes an observation i: packets n_i, lost l_i, received r_i = n_i − l_i, and sending rate
//! S_i = (bytes sent)/(span of send times since the previous observation). The last 20
//! (`observation_window_size`) are kept; observation i, k observations old, weighs w_k = 0.9^k.
//!
//! **Objective.** For channel parameters c = (ι, B),
//!
//! ```text
//! L(c) = Σ_i w_k·[ l_i·ln p(ι,B,S_i) + r_i·ln(1 − p(ι,B,S_i)) ] + Σ_i w_k·n_i·β(B)     (2)
//! β(B) = a(λ, 0.0002)·B_kbps + a(λ, 0.02)·ln(1 + B_kbps)                              (3)
//! a(λ, f) = f·(0.15 − λ)/(0.002 + |0.15 − λ|)                                         (4)
//! ```
//!
//! where λ is the average reported loss ratio over the window, weighed by 0.9^k
//! (`instant_upper_bound_temporal_weight_factor`): the bias (3) favours a higher B while λ is
//! below 15 % and a lower one above.
//!
//! **Candidates.** From the current estimate B̂: B̂·{1.02, 1.0, 0.95}, the acknowledged bitrate
//! (not in ALR), and the delay-based estimate when above B̂; each is capped at
//! max(B̂, U) with U the maximum bitrate, or while loss-limited the bound of the current
//! increase window, and starts from the current ι clamped to its feasible range
//! [0.001, min(1, 0.05 + 75 kbit/s / B)]. One Newton step on ι (step 0.75),
//!
//! ```text
//! ι ← ι − 0.75·(∂L/∂ι)/(∂²L/∂ι²), clamped to the feasible range                      (5)
//! ```
//!
//! with the derivatives of the likelihood part of (2), then the candidate with the highest (2)
//! wins.
//!
//! **Bounds**, in this order:
//! * an increase is refused while λ exceeds the winner's ι;
//! * while loss-limited: an increase is capped by B̂·1.3 (`max_increase_factor`) fixed once per
//!   300 ms (`delayed_increase_window`) of send time, and by the acknowledged bitrate times
//!   `bandwidth_rampup_upper_bound_factor` (10⁶ by default: no cap);
//! * the instant upper bound 75 kbit/s / (λ − 0.05) when λ > 5 % (else the maximum bitrate),
//!   the delay-based estimate, and the instant lower bound (the minimum bitrate);
//! * after a decrease, a hold: the estimate stays at most at the rate of the decrease until a
//!   hold duration (300 ms, multiplied by `hold_duration_factor` at each new hold, at most
//!   60 s) has passed in send time — libwebrtc's default factor is 0, which turns holds off.
//!
//! **States** ([`LossBasedState`]): `DelayBasedEstimate` while the estimate is not below the
//! delay-based estimate (or the maximum); else `Increasing` (or `IncreaseUsingPadding` with a
//! padding duration) when it rises while loss-limited, `Decreasing` otherwise. Until the
//! estimator has an estimate and 3 observations (`min_num_observations`), [`result`] is the
//! delay-based estimate.
//!
//! *What follows from the model* (worked by hand in the tests): one sending rate cannot tell
//! inherent from congestion loss, and while λ < 15 % the bias prefers the higher B, so a loss
//! ratio λ is read as inherent at every B up to 75 kbit/s / (λ − 0.05) — exactly the instant
//! upper bound. Sustained 10 % loss at one rate (below 1500 kbit/s, the delay-based estimate
//! above) thus brings the estimate to 1500 kbit/s; a sender at the estimate over a link of capacity C that drops the excess
//! hovers about (C + 75 kbit/s)/0.95, not at C; loss below 5 % that does not vary with the
//! sending rate does not lower the estimate.
//!
//! Deviations from libwebrtc (and choices where it leaves a value open):
//! * [`PacketResult`] has no sequence number: a lost packet counts as lost in the observation
//!   its report falls in. libwebrtc keys the lost packets of a partial observation by sequence
//!   number, so a packet reported lost and then received before the observation closes counts
//!   as received there.
//! * `UseByteLossRate` (off by default) and its `MedianSendingRateFactor` are not implemented:
//!   losses are always counted in packets, libwebrtc's default.
//! * Rates are whole bits per second ([`Bitrate`]); products with a factor round to the nearest
//!   bit per second (libwebrtc's `DataRate` is whole bits per second too). libwebrtc's +∞ is
//!   [`UNBOUNDED`]: a delay-based estimate or a maximum bitrate of `UNBOUNDED` is "none".
//!   Before the first update [`result`] reports `UNBOUNDED` (libwebrtc: +∞).
//! * A configuration [`LossV2Config::validate`] rejects, or `enabled: false`, gives an estimator
//!   that always reports the delay-based estimate, as libwebrtc's disabled one does.
//! * `now` is not read: like libwebrtc, the estimator's clock is the send times of the packets
//!   it is told about. Nothing is logged.
//!
//! [`result`]: LossBasedBweV2::result

use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};

/// libwebrtc's +∞ for a rate: "no delay-based estimate", "no maximum".
pub const UNBOUNDED: Bitrate = Bitrate::from_bps(u64::MAX);

/// `kCongestionControllerMinBitrate` (`bwe_defines.h`): the floor of the increase-window bound.
const CONGESTION_CONTROLLER_MIN_BITRATE: Bitrate = Bitrate::from_bps(5_000);
/// `kInitHoldDuration`.
const INIT_HOLD_DURATION: Duration = Duration::from_millis(300);
/// `kMaxHoldDuration`.
const MAX_HOLD_DURATION: Duration = Duration::from_secs(60);
/// The bounds of a loss probability in (1).
const MIN_LOSS_PROBABILITY: f64 = 1.0e-6;

/// The packets one transport feedback reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketResult {
    pub size: DataSize,
    pub send_time: Instant,
    /// When it arrived; `None`: reported lost.
    pub received: Option<Instant>,
}

/// What the estimate is doing, for the caller (goog_cc probes while `Increasing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossBasedState {
    Increasing,
    /// Increasing, and the caller should pad to test the new rate (only with a padding duration).
    IncreaseUsingPadding,
    Decreasing,
    /// The estimate is the delay-based estimate (or the maximum): loss is not limiting.
    DelayBasedEstimate,
}

/// The estimate and its state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossBasedResult {
    pub bandwidth: Bitrate,
    pub state: LossBasedState,
}

/// The parameters of `WebRTC-Bwe-LossBasedBweV2`. `Default` is libwebrtc's defaults (the field
/// trial's key names are given for each).
#[derive(Clone, Debug, PartialEq)]
pub struct LossV2Config {
    /// `Enabled` (true).
    pub enabled: bool,
    /// `BwRampupUpperBoundFactor` (10⁶): while loss-limited an increase is capped at this times
    /// the acknowledged bitrate.
    pub bandwidth_rampup_upper_bound_factor: f64,
    /// `BwRampupUpperBoundInHoldFactor` (10⁶): the same while the acknowledged bitrate is below
    /// `bandwidth_rampup_hold_threshold` times the rate of the last hold.
    pub bandwidth_rampup_upper_bound_factor_in_hold: f64,
    /// `BwRampupUpperBoundHoldThreshold` (1.3).
    pub bandwidth_rampup_hold_threshold: f64,
    /// `BwRampupAccelMaxFactor` (0): the candidates' cap grows by up to this times the
    /// acknowledged bitrate with the time since the estimate last fell.
    pub rampup_acceleration_max_factor: f64,
    /// `BwRampupAccelMaxoutTime` (60 s).
    pub rampup_acceleration_maxout_time: Duration,
    /// `CandidateFactors` ({1.02, 1.0, 0.95}).
    pub candidate_factors: Vec<f64>,
    /// `HigherBwBiasFactor` (0.0002).
    pub higher_bandwidth_bias_factor: f64,
    /// `HigherLogBwBiasFactor` (0.02).
    pub higher_log_bandwidth_bias_factor: f64,
    /// `InherentLossLowerBound` (0.001).
    pub inherent_loss_lower_bound: f64,
    /// `LossThresholdOfHighBandwidthPreference` (0.15).
    pub loss_threshold_of_high_bandwidth_preference: f64,
    /// `BandwidthPreferenceSmoothingFactor` (0.002).
    pub bandwidth_preference_smoothing_factor: f64,
    /// `InherentLossUpperBoundBwBalance` (75 kbit/s).
    pub inherent_loss_upper_bound_bandwidth_balance: Bitrate,
    /// `InherentLossUpperBoundOffset` (0.05).
    pub inherent_loss_upper_bound_offset: f64,
    /// `InitialInherentLossEstimate` (0.01).
    pub initial_inherent_loss_estimate: f64,
    /// `NewtonIterations` (1).
    pub newton_iterations: u32,
    /// `NewtonStepSize` (0.75).
    pub newton_step_size: f64,
    /// `AckedRateCandidate` (true).
    pub append_acknowledged_rate_candidate: bool,
    /// `DelayBasedCandidate` (true).
    pub append_delay_based_estimate_candidate: bool,
    /// `UpperBoundCandidateInAlr` (false).
    pub append_upper_bound_candidate_in_alr: bool,
    /// `ObservationDurationLowerBound` (250 ms).
    pub observation_duration_lower_bound: Duration,
    /// `ObservationWindowSize` (20).
    pub observation_window_size: usize,
    /// `SendingRateSmoothingFactor` (0).
    pub sending_rate_smoothing_factor: f64,
    /// `InstantUpperBoundTemporalWeightFactor` (0.9).
    pub instant_upper_bound_temporal_weight_factor: f64,
    /// `InstantUpperBoundBwBalance` (75 kbit/s).
    pub instant_upper_bound_bandwidth_balance: Bitrate,
    /// `InstantUpperBoundLossOffset` (0.05).
    pub instant_upper_bound_loss_offset: f64,
    /// `TemporalWeightFactor` (0.9).
    pub temporal_weight_factor: f64,
    /// `BwBackoffLowerBoundFactor` (1.0): the acknowledged-bitrate candidate's factor.
    pub bandwidth_backoff_lower_bound_factor: f64,
    /// `MaxIncreaseFactor` (1.3).
    pub max_increase_factor: f64,
    /// `DelayedIncreaseWindow` (300 ms).
    pub delayed_increase_window: Duration,
    /// `NotIncreaseIfInherentLossLessThanAverageLoss` (true).
    pub not_increase_if_inherent_loss_less_than_average_loss: bool,
    /// `NotUseAckedRateInAlr` (true).
    pub not_use_acked_rate_in_alr: bool,
    /// `UseInStartPhase` (false).
    pub use_in_start_phase: bool,
    /// `MinNumObservations` (3).
    pub min_num_observations: u64,
    /// `LowerBoundByAckedRateFactor` (0): the instant lower bound is at least this times the
    /// acknowledged bitrate.
    pub lower_bound_by_acked_rate_factor: f64,
    /// `HoldDurationFactor` (0: no hold).
    pub hold_duration_factor: f64,
    /// `PaddingDuration` (0: `Increasing`, never `IncreaseUsingPadding`).
    pub padding_duration: Duration,
    /// `BoundBestCandidate` (false).
    pub bound_best_candidate: bool,
    /// `PaceAtLossBasedEstimate` (false).
    pub pace_at_loss_based_estimate: bool,
}

impl Default for LossV2Config {
    fn default() -> Self {
        LossV2Config {
            enabled: true,
            bandwidth_rampup_upper_bound_factor: 1_000_000.0,
            bandwidth_rampup_upper_bound_factor_in_hold: 1_000_000.0,
            bandwidth_rampup_hold_threshold: 1.3,
            rampup_acceleration_max_factor: 0.0,
            rampup_acceleration_maxout_time: Duration::from_secs(60),
            candidate_factors: vec![1.02, 1.0, 0.95],
            higher_bandwidth_bias_factor: 0.0002,
            higher_log_bandwidth_bias_factor: 0.02,
            inherent_loss_lower_bound: 1.0e-3,
            loss_threshold_of_high_bandwidth_preference: 0.15,
            bandwidth_preference_smoothing_factor: 0.002,
            inherent_loss_upper_bound_bandwidth_balance: Bitrate::from_kbps(75),
            inherent_loss_upper_bound_offset: 0.05,
            initial_inherent_loss_estimate: 0.01,
            newton_iterations: 1,
            newton_step_size: 0.75,
            append_acknowledged_rate_candidate: true,
            append_delay_based_estimate_candidate: true,
            append_upper_bound_candidate_in_alr: false,
            observation_duration_lower_bound: Duration::from_millis(250),
            observation_window_size: 20,
            sending_rate_smoothing_factor: 0.0,
            instant_upper_bound_temporal_weight_factor: 0.9,
            instant_upper_bound_bandwidth_balance: Bitrate::from_kbps(75),
            instant_upper_bound_loss_offset: 0.05,
            temporal_weight_factor: 0.9,
            bandwidth_backoff_lower_bound_factor: 1.0,
            max_increase_factor: 1.3,
            delayed_increase_window: Duration::from_millis(300),
            not_increase_if_inherent_loss_less_than_average_loss: true,
            not_use_acked_rate_in_alr: true,
            use_in_start_phase: false,
            min_num_observations: 3,
            lower_bound_by_acked_rate_factor: 0.0,
            hold_duration_factor: 0.0,
            padding_duration: Duration::ZERO,
            bound_best_candidate: false,
            pace_at_loss_based_estimate: false,
        }
    }
}

/// Whether `x` lies in [0, 1).
fn unit(x: f64) -> bool {
    (0.0..1.0).contains(&x)
}

/// Whether `x` lies in (0, 1].
fn weight(x: f64) -> bool {
    x > 0.0 && x <= 1.0
}

impl LossV2Config {
    /// libwebrtc's `IsConfigValid`: the first rule this configuration breaks.
    pub fn validate(&self) -> Result<(), &'static str> {
        let factors = &self.candidate_factors;
        let rules = [
            (
                self.bandwidth_rampup_upper_bound_factor > 1.0
                    && self.bandwidth_rampup_upper_bound_factor_in_hold > 1.0,
                "the rampup upper bound factors must be above 1",
            ),
            (
                self.bandwidth_rampup_hold_threshold >= 0.0
                    && self.rampup_acceleration_max_factor >= 0.0
                    && !self.rampup_acceleration_maxout_time.is_zero(),
                "the rampup hold threshold, acceleration factor and maxout time must not be \
                 negative (the time not zero)",
            ),
            (
                factors.iter().all(|&f| f > 0.0),
                "the candidate factors must be positive",
            ),
            (
                self.append_acknowledged_rate_candidate
                    || self.append_delay_based_estimate_candidate
                    || factors.iter().any(|&f| f != 1.0),
                "the configuration generates no candidate besides the current estimate",
            ),
            (
                unit(self.inherent_loss_lower_bound)
                    && unit(self.loss_threshold_of_high_bandwidth_preference)
                    && unit(self.initial_inherent_loss_estimate)
                    && unit(self.sending_rate_smoothing_factor)
                    && unit(self.instant_upper_bound_loss_offset),
                "a loss bound, threshold, initial estimate or smoothing factor is outside [0, 1)",
            ),
            (
                weight(self.bandwidth_preference_smoothing_factor)
                    && weight(self.instant_upper_bound_temporal_weight_factor)
                    && weight(self.temporal_weight_factor),
                "a preference smoothing or temporal weight factor is outside (0, 1]",
            ),
            (
                self.inherent_loss_upper_bound_offset >= self.inherent_loss_lower_bound
                    && self.inherent_loss_upper_bound_offset < 1.0,
                "the inherent loss upper bound offset must lie in [lower bound, 1)",
            ),
            (
                self.higher_bandwidth_bias_factor >= 0.0
                    && self.lower_bound_by_acked_rate_factor >= 0.0
                    && self.inherent_loss_upper_bound_bandwidth_balance > Bitrate::ZERO
                    && self.instant_upper_bound_bandwidth_balance > Bitrate::ZERO,
                "a bias or lower-bound factor is negative, or a bandwidth balance zero",
            ),
            (
                self.newton_iterations > 0
                    && self.newton_step_size > 0.0
                    && self.max_increase_factor > 0.0
                    && self.bandwidth_backoff_lower_bound_factor <= 1.0,
                "the Newton iterations, step or increase factor is not positive, or the \
                 backoff lower bound factor above 1",
            ),
            (
                !self.observation_duration_lower_bound.is_zero()
                    && self.observation_window_size >= 2
                    && !self.delayed_increase_window.is_zero()
                    && self.min_num_observations > 0,
                "the observation duration, delayed increase window or minimum number of \
                 observations is zero, or the window below 2",
            ),
        ];
        match rules.iter().find(|(ok, _)| !ok) {
            Some(&(_, broken)) => Err(broken),
            None => Ok(()),
        }
    }
}

/// A candidate (ι, B).
#[derive(Clone, Copy, Debug, PartialEq)]
struct ChannelParameters {
    inherent_loss: f64,
    bandwidth: Bitrate,
}

/// One closed observation (or an empty slot of the window, `id == None`).
#[derive(Clone, Copy, Debug, Default)]
struct Observation {
    num_packets: u64,
    num_lost_packets: u64,
    num_received_packets: u64,
    sending_rate: Bitrate,
    id: Option<u64>,
}

/// The feedback gathered since the last observation closed.
#[derive(Clone, Copy, Debug, Default)]
struct PartialObservation {
    num_packets: u64,
    num_lost_packets: u64,
    size: DataSize,
}

/// The current hold: until `until` (None: none), the estimate stays at most at `rate` (None: +∞).
#[derive(Clone, Copy, Debug)]
struct HoldInfo {
    until: Option<Instant>,
    duration: Duration,
    rate: Option<Bitrate>,
}

impl HoldInfo {
    const RESET: HoldInfo = HoldInfo {
        until: None,
        duration: INIT_HOLD_DURATION,
        rate: None,
    };
}

/// The current padding period (None: none).
#[derive(Clone, Copy, Debug, Default)]
struct PaddingInfo {
    rate: Option<Bitrate>,
    since: Option<Instant>,
}

/// libwebrtc's `LossBasedBweV2`: see the module documentation.
#[derive(Clone, Debug)]
pub struct LossBasedBweV2 {
    config: LossV2Config,
    enabled: bool,
    acknowledged_bitrate: Option<Bitrate>,
    /// The current best (ι, B); B is meaningful once `have_estimate`.
    current: ChannelParameters,
    have_estimate: bool,
    num_observations: u64,
    /// The window, a ring indexed by `id % window`.
    observations: Vec<Observation>,
    partial: PartialObservation,
    last_send_time_most_recent_observation: Option<Instant>,
    last_time_estimate_reduced: Option<Instant>,
    cached_instant_upper_bound: Option<Bitrate>,
    cached_instant_lower_bound: Option<Bitrate>,
    instant_upper_bound_temporal_weights: Vec<f64>,
    temporal_weights: Vec<f64>,
    recovering_after_loss_timestamp: Option<Instant>,
    /// None: +∞.
    bandwidth_limit_in_current_window: Option<Bitrate>,
    min_bitrate: Bitrate,
    max_bitrate: Bitrate,
    /// None: +∞ (none yet).
    delay_based_estimate: Option<Bitrate>,
    loss_based_result: LossBasedResult,
    last_hold_info: HoldInfo,
    last_padding_info: PaddingInfo,
    average_reported_loss_ratio: f64,
    /// The candidates of the current update (kept to avoid allocating per update).
    candidates: Vec<ChannelParameters>,
}

impl LossBasedBweV2 {
    /// An estimator with `config`; disabled (always the delay-based estimate) if the
    /// configuration is invalid or not enabled.
    pub fn new(config: LossV2Config) -> Self {
        let enabled = config.enabled && config.validate().is_ok();
        let window = if enabled {
            config.observation_window_size
        } else {
            0
        };
        let weights = |factor: f64| -> Vec<f64> {
            (0..window)
                .scan(1.0, |w, _| {
                    let here = *w;
                    *w *= factor;
                    Some(here)
                })
                .collect()
        };
        LossBasedBweV2 {
            temporal_weights: weights(config.temporal_weight_factor),
            instant_upper_bound_temporal_weights: weights(
                config.instant_upper_bound_temporal_weight_factor,
            ),
            candidates: Vec::with_capacity(config.candidate_factors.len() + 3),
            current: ChannelParameters {
                inherent_loss: config.initial_inherent_loss_estimate,
                bandwidth: Bitrate::ZERO,
            },
            config,
            enabled,
            acknowledged_bitrate: None,
            have_estimate: false,
            num_observations: 0,
            observations: vec![Observation::default(); window],
            partial: PartialObservation::default(),
            last_send_time_most_recent_observation: None,
            last_time_estimate_reduced: None,
            cached_instant_upper_bound: None,
            cached_instant_lower_bound: None,
            recovering_after_loss_timestamp: None,
            bandwidth_limit_in_current_window: None,
            min_bitrate: Bitrate::from_kbps(1),
            max_bitrate: UNBOUNDED,
            delay_based_estimate: None,
            loss_based_result: LossBasedResult {
                bandwidth: Bitrate::ZERO,
                state: LossBasedState::DelayBasedEstimate,
            },
            last_hold_info: HoldInfo::RESET,
            last_padding_info: PaddingInfo::default(),
            average_reported_loss_ratio: 0.0,
        }
    }

    /// Whether the configuration was valid and enabled.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// Whether [`result`](Self::result) is the estimator's own: it has an estimate and at least
    /// `min_num_observations` observations.
    pub fn is_ready(&self) -> bool {
        self.enabled
            && self.have_estimate
            && self.num_observations >= self.config.min_num_observations
    }

    /// Ready, and configured to be used in the start phase (`UseInStartPhase`).
    pub fn ready_to_use_in_start_phase(&self) -> bool {
        self.is_ready() && self.config.use_in_start_phase
    }

    /// Whether the pacer should pace at the loss-based estimate (`PaceAtLossBasedEstimate`,
    /// while loss-limited).
    pub fn pace_at_loss_based_estimate(&self) -> bool {
        self.config.pace_at_loss_based_estimate && self.is_loss_limited()
    }

    /// The estimate; the delay-based estimate (and `DelayBasedEstimate`) until ready.
    pub fn result(&self) -> LossBasedResult {
        if !self.is_ready() {
            return LossBasedResult {
                bandwidth: self.delay_based_estimate.unwrap_or(UNBOUNDED),
                state: LossBasedState::DelayBasedEstimate,
            };
        }
        self.loss_based_result
    }

    /// The acknowledged (received) bitrate, the source of a candidate and of the bounds.
    pub fn set_acknowledged_bitrate(&mut self, rate: Bitrate) {
        self.acknowledged_bitrate = Some(rate);
        self.calculate_instant_lower_bound();
    }

    /// The range of the estimate ([`UNBOUNDED`] for no maximum).
    pub fn set_min_max(&mut self, min: Bitrate, max: Bitrate) {
        self.min_bitrate = min;
        self.calculate_instant_lower_bound();
        self.max_bitrate = max;
    }

    /// Sets the current estimate (libwebrtc's `SetBandwidthEstimate`, there for its unit tests;
    /// otherwise the first update starts from the delay-based estimate).
    pub fn set_bandwidth_estimate(&mut self, rate: Bitrate) {
        self.current.bandwidth = rate;
        self.have_estimate = true;
        self.loss_based_result = LossBasedResult {
            bandwidth: rate,
            state: LossBasedState::DelayBasedEstimate,
        };
    }

    /// One transport feedback: the packets it reports (received or lost), the delay-based
    /// estimate ([`UNBOUNDED`]: none) and whether the sender is application-limited.
    /// `UpdateBandwidthEstimate`.
    pub fn update(
        &mut self,
        _now: Instant,
        packets: &[PacketResult],
        delay_based: Bitrate,
        in_alr: bool,
    ) {
        self.delay_based_estimate = (delay_based != UNBOUNDED).then_some(delay_based);
        if !self.enabled || !self.push_back_observation(packets) {
            return;
        }
        if !self.have_estimate {
            let Some(delay_based) = self.delay_based_estimate else {
                return;
            };
            self.set_bandwidth_estimate(delay_based);
        }
        let best = self.best_candidate(in_alr);
        let best = self.bound_increase(best);
        let bounded = self.bounded_estimate(best.bandwidth);
        if self.config.bound_best_candidate && bounded < best.bandwidth {
            self.current = ChannelParameters {
                inherent_loss: 0.0,
                bandwidth: bounded,
            };
        } else {
            self.current = best;
            if self.config.lower_bound_by_acked_rate_factor > 0.0 {
                self.current.bandwidth = self.current.bandwidth.max(self.instant_lower_bound());
            }
        }
        if !self.hold(bounded) {
            self.update_state(bounded);
        }
        self.open_increase_window();
    }

    /// The candidate with the highest objective after its Newton step, without an increase
    /// while the average loss exceeds its inherent loss.
    fn best_candidate(&mut self, in_alr: bool) -> ChannelParameters {
        self.fill_candidates(in_alr);
        let mut best = self.current;
        let mut objective_max = f64::MIN;
        for i in 0..self.candidates.len() {
            let mut candidate = self.candidates[i];
            self.newtons_method_update(&mut candidate);
            let objective = self.objective(&candidate);
            if objective > objective_max {
                objective_max = objective;
                best = candidate;
            }
        }
        if best.bandwidth < self.current.bandwidth {
            self.last_time_estimate_reduced = self.last_send_time_most_recent_observation;
        }
        if self.average_reported_loss_ratio > best.inherent_loss
            && self
                .config
                .not_increase_if_inherent_loss_less_than_average_loss
            && self.current.bandwidth < best.bandwidth
        {
            best.bandwidth = self.current.bandwidth;
        }
        best
    }

    /// While loss-limited: the increase-window bound and the acknowledged-bitrate bound.
    fn bound_increase(&self, mut best: ChannelParameters) -> ChannelParameters {
        if !self.is_loss_limited() {
            return best;
        }
        if let (Some(since), Some(limit)) = (
            self.recovering_after_loss_timestamp,
            self.bandwidth_limit_in_current_window,
        ) && self.within(since, self.config.delayed_increase_window)
            && best.bandwidth > limit
        {
            best.bandwidth = limit;
        }
        let increasing =
            self.is_increasing_when_loss_limited(self.current.bandwidth, best.bandwidth);
        if let (true, Some(acked)) = (increasing, self.acknowledged_bitrate) {
            let in_hold = self.last_hold_info.rate.is_some_and(|rate| {
                acked < rate.mul_f64(self.config.bandwidth_rampup_hold_threshold)
            });
            let factor = if in_hold {
                self.config.bandwidth_rampup_upper_bound_factor_in_hold
            } else {
                self.config.bandwidth_rampup_upper_bound_factor
            };
            best.bandwidth = self
                .current
                .bandwidth
                .max(best.bandwidth.min(acked.mul_f64(factor)));
            // At least 1 bit/s more, so that the state becomes `Increasing` (and pads).
            if self.loss_based_result.state == LossBasedState::Decreasing
                && best.bandwidth == self.current.bandwidth
            {
                best.bandwidth = saturating_add(self.current.bandwidth, Bitrate::from_bps(1));
            }
        }
        best
    }

    /// The best candidate within the instant bounds and the delay-based estimate.
    fn bounded_estimate(&self, bandwidth: Bitrate) -> Bitrate {
        let mut upper = bandwidth.min(self.instant_upper_bound());
        if let Some(delay_based) = self.delay_based_estimate {
            upper = upper.min(delay_based);
        }
        self.instant_lower_bound().max(upper)
    }

    /// During a hold after a decrease the estimate stays at most at the hold's rate; `true` if
    /// held (the state is left as it is).
    fn hold(&mut self, bounded: Bitrate) -> bool {
        let holding = self.loss_based_result.state == LossBasedState::Decreasing
            && self
                .last_hold_info
                .until
                .zip(self.last_send_time_most_recent_observation)
                .is_some_and(|(until, last)| until > last)
            && self.below_delay_based(bounded);
        if !holding {
            return false;
        }
        if self.config.lower_bound_by_acked_rate_factor > 0.0 {
            let lower = self.instant_lower_bound();
            self.last_hold_info.rate = self.last_hold_info.rate.map(|rate| rate.max(lower));
        }
        self.loss_based_result.bandwidth = match self.last_hold_info.rate {
            Some(rate) => rate.min(bounded),
            None => bounded,
        };
        true
    }

    /// The state machine: increasing, decreasing (and starting a hold), or delay-based.
    fn update_state(&mut self, bounded: Bitrate) {
        let last_send = self.last_send_time_most_recent_observation;
        let limited = self.below_delay_based(bounded) && bounded < self.max_bitrate;
        let padding = !self.config.padding_duration.is_zero();
        if limited
            && self.is_increasing_when_loss_limited(self.loss_based_result.bandwidth, bounded)
            && self.can_keep_increasing(bounded)
        {
            if padding
                && self
                    .last_padding_info
                    .rate
                    .is_none_or(|rate| bounded > rate)
            {
                self.last_padding_info = PaddingInfo {
                    rate: Some(bounded),
                    since: last_send,
                };
            }
            self.loss_based_result.state = if padding {
                LossBasedState::IncreaseUsingPadding
            } else {
                LossBasedState::Increasing
            };
        } else if limited {
            if self.loss_based_result.state != LossBasedState::Decreasing
                && self.config.hold_duration_factor > 0.0
            {
                let duration = self.last_hold_info.duration;
                self.last_hold_info = HoldInfo {
                    until: last_send.map(|t| t + duration),
                    duration: duration
                        .mul_f64(self.config.hold_duration_factor)
                        .min(MAX_HOLD_DURATION),
                    rate: Some(bounded),
                };
            }
            self.last_padding_info = PaddingInfo::default();
            self.loss_based_result.state = LossBasedState::Decreasing;
        } else {
            // The delay-based estimate works: forget the hold, not to stay stuck low.
            self.last_hold_info = HoldInfo::RESET;
            self.last_padding_info = PaddingInfo::default();
            self.loss_based_result.state = LossBasedState::DelayBasedEstimate;
        }
        self.loss_based_result.bandwidth = bounded;
    }

    /// While loss-limited, once per delayed-increase window: the next increase is capped at
    /// `max_increase_factor` times the current estimate.
    fn open_increase_window(&mut self) {
        let expired = match self.recovering_after_loss_timestamp {
            None => true,
            Some(since) => self
                .last_send_time_most_recent_observation
                .is_some_and(|last| since + self.config.delayed_increase_window < last),
        };
        if self.is_loss_limited() && expired {
            self.bandwidth_limit_in_current_window = Some(
                CONGESTION_CONTROLLER_MIN_BITRATE.max(
                    self.current
                        .bandwidth
                        .mul_f64(self.config.max_increase_factor),
                ),
            );
            self.recovering_after_loss_timestamp = self.last_send_time_most_recent_observation;
        }
    }

    /// Whether `since + window` is later than the send time of the latest observation.
    fn within(&self, since: Instant, window: Duration) -> bool {
        self.last_send_time_most_recent_observation
            .is_none_or(|last| since + window > last)
    }

    fn below_delay_based(&self, rate: Bitrate) -> bool {
        self.delay_based_estimate.is_none_or(|d| rate < d)
    }

    fn is_loss_limited(&self) -> bool {
        self.loss_based_result.state != LossBasedState::DelayBasedEstimate
    }

    fn is_increasing_when_loss_limited(&self, old: Bitrate, new: Bitrate) -> bool {
        let increasing_state = matches!(
            self.loss_based_result.state,
            LossBasedState::Increasing | LossBasedState::IncreaseUsingPadding
        );
        (old < new || (old == new && increasing_state)) && self.is_loss_limited()
    }

    /// Stay in `IncreaseUsingPadding` while the padding period lasts or the estimate rises.
    fn can_keep_increasing(&self, estimate: Bitrate) -> bool {
        if self.config.padding_duration.is_zero()
            || self.loss_based_result.state != LossBasedState::IncreaseUsingPadding
        {
            return true;
        }
        self.padding_active() || self.last_padding_info.rate.is_none_or(|r| r < estimate)
    }

    /// Whether the padding period started within `padding_duration` of the latest observation.
    fn padding_active(&self) -> bool {
        match (
            self.last_padding_info.since,
            self.last_send_time_most_recent_observation,
        ) {
            (Some(since), Some(last)) => since + self.config.padding_duration >= last,
            _ => false,
        }
    }

    /// The candidates' bandwidths, capped, each with its feasible inherent loss.
    fn fill_candidates(&mut self, in_alr: bool) {
        let best = self.current;
        let mut bandwidths = [Bitrate::ZERO; 3];
        let mut extra = 0;
        if let Some(acked) = self.acknowledged_bitrate
            && self.config.append_acknowledged_rate_candidate
            && (!(self.config.not_use_acked_rate_in_alr && in_alr)
                || (!self.config.padding_duration.is_zero() && self.padding_active()))
        {
            bandwidths[extra] = acked.mul_f64(self.config.bandwidth_backoff_lower_bound_factor);
            extra += 1;
        }
        if let Some(delay_based) = self.delay_based_estimate
            && self.config.append_delay_based_estimate_candidate
            && delay_based > best.bandwidth
        {
            bandwidths[extra] = delay_based;
            extra += 1;
        }
        let instant_upper = self.instant_upper_bound();
        if in_alr
            && self.config.append_upper_bound_candidate_in_alr
            && best.bandwidth > instant_upper
        {
            bandwidths[extra] = instant_upper;
            extra += 1;
        }
        let cap = best.bandwidth.max(self.candidate_bandwidth_upper_bound());
        let factors = self.config.candidate_factors.iter();
        let all = factors
            .map(|&f| best.bandwidth.mul_f64(f))
            .chain(bandwidths[..extra].iter().copied());
        let mut candidates = std::mem::take(&mut self.candidates);
        candidates.clear();
        for bandwidth in all {
            let mut candidate = best;
            candidate.bandwidth = bandwidth.min(cap);
            candidate.inherent_loss = self.feasible_inherent_loss(&candidate);
            candidates.push(candidate);
        }
        self.candidates = candidates;
    }

    /// The maximum bitrate, or while loss-limited the increase-window bound; plus the rampup
    /// acceleration.
    fn candidate_bandwidth_upper_bound(&self) -> Bitrate {
        let mut upper = self.max_bitrate;
        if self.is_loss_limited()
            && let Some(limit) = self.bandwidth_limit_in_current_window
        {
            upper = limit;
        }
        let Some(acked) = self.acknowledged_bitrate else {
            return upper;
        };
        if self.config.rampup_acceleration_max_factor > 0.0 {
            let maxout = self.config.rampup_acceleration_maxout_time;
            let since_reduced = match (
                self.last_send_time_most_recent_observation,
                self.last_time_estimate_reduced,
            ) {
                (Some(last), Some(reduced)) => last - reduced,
                _ => maxout,
            };
            let acceleration = self.config.rampup_acceleration_max_factor
                * since_reduced.min(maxout).as_secs_f64()
                / maxout.as_secs_f64();
            upper = saturating_add(upper, acked.mul_f64(acceleration));
        }
        upper
    }

    fn feasible_inherent_loss(&self, c: &ChannelParameters) -> f64 {
        c.inherent_loss
            .max(self.config.inherent_loss_lower_bound)
            .min(self.inherent_loss_upper_bound(c.bandwidth))
    }

    /// min(1, 0.05 + 75 kbit/s / B).
    fn inherent_loss_upper_bound(&self, bandwidth: Bitrate) -> f64 {
        if bandwidth == Bitrate::ZERO {
            return 1.0;
        }
        let balance = self.config.inherent_loss_upper_bound_bandwidth_balance;
        let bound = self.config.inherent_loss_upper_bound_offset
            + balance.bps() as f64 / bandwidth.bps() as f64;
        bound.min(1.0)
    }

    /// a(λ, f) of (4).
    fn adjust_bias_factor(&self, loss_rate: f64, bias_factor: f64) -> f64 {
        let threshold = self.config.loss_threshold_of_high_bandwidth_preference;
        bias_factor * (threshold - loss_rate)
            / (self.config.bandwidth_preference_smoothing_factor + (threshold - loss_rate).abs())
    }

    /// β(B) of (3).
    fn high_bandwidth_bias(&self, bandwidth: Bitrate) -> f64 {
        if bandwidth == UNBOUNDED {
            return 0.0;
        }
        let loss = self.average_reported_loss_ratio;
        let kbps = bandwidth.kbps_f64();
        self.adjust_bias_factor(loss, self.config.higher_bandwidth_bias_factor) * kbps
            + self.adjust_bias_factor(loss, self.config.higher_log_bandwidth_bias_factor)
                * (1.0 + kbps).ln()
    }

    /// The observations of the window with their temporal weights.
    fn weighted(&self, weights: &[f64]) -> impl Iterator<Item = (f64, &Observation)> {
        let newest = self.num_observations.saturating_sub(1);
        self.observations.iter().filter_map(move |o| {
            let age = newest - o.id?;
            Some((weights.get(age as usize).copied().unwrap_or(0.0), o))
        })
    }

    /// L(c) of (2).
    fn objective(&self, c: &ChannelParameters) -> f64 {
        let bias = self.high_bandwidth_bias(c.bandwidth);
        self.weighted(&self.temporal_weights)
            .map(|(w, o)| {
                let p = loss_probability(c.inherent_loss, c.bandwidth, o.sending_rate);
                w * (o.num_lost_packets as f64 * p.ln()
                    + o.num_received_packets as f64 * (1.0 - p).ln())
                    + w * bias * o.num_packets as f64
            })
            .sum()
    }

    /// ∂L/∂ι and ∂²L/∂ι² of the likelihood part of (2); the second is kept negative.
    fn derivatives(&self, c: &ChannelParameters) -> (f64, f64) {
        let (mut first, mut second) = (0.0, 0.0);
        for (w, o) in self.weighted(&self.temporal_weights) {
            let p = loss_probability(c.inherent_loss, c.bandwidth, o.sending_rate);
            let (lost, received) = (o.num_lost_packets as f64, o.num_received_packets as f64);
            first += w * (lost / p - received / (1.0 - p));
            second -= w * (lost / (p * p) + received / ((1.0 - p) * (1.0 - p)));
        }
        if second >= 0.0 {
            second = -1.0e-6;
        }
        (first, second)
    }

    /// (5), `newton_iterations` times.
    fn newtons_method_update(&self, c: &mut ChannelParameters) {
        if self.num_observations == 0 {
            return;
        }
        for _ in 0..self.config.newton_iterations {
            let (first, second) = self.derivatives(c);
            c.inherent_loss -= self.config.newton_step_size * first / second;
            c.inherent_loss = self.feasible_inherent_loss(c);
        }
    }

    fn instant_upper_bound(&self) -> Bitrate {
        self.cached_instant_upper_bound.unwrap_or(self.max_bitrate)
    }

    /// 75 kbit/s / (λ − 0.05) while λ > 0.05, else the maximum bitrate.
    fn calculate_instant_upper_bound(&mut self) {
        let offset = self.config.instant_upper_bound_loss_offset;
        let mut limit = self.max_bitrate;
        if self.average_reported_loss_ratio > offset {
            let balance = self.config.instant_upper_bound_bandwidth_balance.bps() as f64;
            limit = Bitrate::from_bps_f64(balance / (self.average_reported_loss_ratio - offset));
        }
        self.cached_instant_upper_bound = Some(limit);
    }

    fn instant_lower_bound(&self) -> Bitrate {
        self.cached_instant_lower_bound.unwrap_or(Bitrate::ZERO)
    }

    /// The minimum bitrate, or `lower_bound_by_acked_rate_factor` × the acknowledged bitrate.
    fn calculate_instant_lower_bound(&mut self) {
        let mut lower = Bitrate::ZERO;
        if let Some(acked) = self.acknowledged_bitrate
            && self.config.lower_bound_by_acked_rate_factor > 0.0
        {
            lower = acked.mul_f64(self.config.lower_bound_by_acked_rate_factor);
        }
        self.cached_instant_lower_bound = Some(lower.max(self.min_bitrate));
    }

    /// λ: lost over sent packets of the window, weighed by the instant-upper-bound weights.
    fn average_reported_packet_loss_ratio(&self) -> f64 {
        if self.num_observations == 0 {
            return 0.0;
        }
        let (mut packets, mut lost) = (0.0, 0.0);
        for (w, o) in self.weighted(&self.instant_upper_bound_temporal_weights) {
            packets += w * o.num_packets as f64;
            lost += w * o.num_lost_packets as f64;
        }
        lost / packets
    }

    /// The sending rate of a new observation, smoothed with the previous one's.
    fn sending_rate(&self, instantaneous: Bitrate) -> Bitrate {
        let Some(newest) = self.num_observations.checked_sub(1) else {
            return instantaneous;
        };
        let previous = self.observations[(newest % self.observations.len() as u64) as usize];
        let k = self.config.sending_rate_smoothing_factor;
        Bitrate::from_bps_f64(
            k * previous.sending_rate.bps() as f64 + (1.0 - k) * instantaneous.bps() as f64,
        )
    }

    /// Adds the packets to the partial observation and closes it once its send times span the
    /// observation duration; `true` if an observation closed.
    fn push_back_observation(&mut self, packets: &[PacketResult]) -> bool {
        let (Some(first), Some(last)) = (
            packets.iter().map(|p| p.send_time).min(),
            packets.iter().map(|p| p.send_time).max(),
        ) else {
            return false;
        };
        self.partial.num_packets += packets.len() as u64;
        for packet in packets {
            if packet.received.is_none() {
                self.partial.num_lost_packets += 1;
            }
            self.partial.size += packet.size;
        }
        let previous = *self
            .last_send_time_most_recent_observation
            .get_or_insert(first);
        let duration = last - previous;
        if duration.is_zero() || duration < self.config.observation_duration_lower_bound {
            return false;
        }
        self.last_send_time_most_recent_observation = Some(last);
        let id = self.num_observations;
        let observation = Observation {
            num_packets: self.partial.num_packets,
            num_lost_packets: self.partial.num_lost_packets,
            num_received_packets: self.partial.num_packets - self.partial.num_lost_packets,
            sending_rate: self
                .sending_rate(Bitrate::from_size_and_duration(self.partial.size, duration)),
            id: Some(id),
        };
        let slot = (id % self.observations.len() as u64) as usize;
        self.observations[slot] = observation;
        self.num_observations += 1;
        self.partial = PartialObservation::default();
        self.average_reported_loss_ratio = self.average_reported_packet_loss_ratio();
        self.calculate_instant_upper_bound();
        true
    }
}

/// p(ι, B, S) of (1).
fn loss_probability(inherent_loss: f64, bandwidth: Bitrate, sending_rate: Bitrate) -> f64 {
    let inherent_loss = inherent_loss.clamp(0.0, 1.0);
    let mut p = inherent_loss;
    if sending_rate > bandwidth {
        let (s, b) = (sending_rate.bps() as f64, bandwidth.bps() as f64);
        p += (1.0 - inherent_loss) * (s - b) / s;
    }
    p.clamp(MIN_LOSS_PROBABILITY, 1.0 - MIN_LOSS_PROBABILITY)
}

fn saturating_add(a: Bitrate, b: Bitrate) -> Bitrate {
    Bitrate::from_bps(a.bps().saturating_add(b.bps()))
}

#[cfg(test)]
mod tests {
    //! Where an expectation is libwebrtc's, the test names the test of
    //! `loss_based_bwe_v2_test.cc` it ports (ajune-wang/webrtc mirror, commit e357a16f; same
    //! inputs: 15 000-byte packets, 250 ms observations, and its `ShortObservationConfig`);
    //! the others work the model's maths by hand in their comments.

    use super::*;
    use crate::time::ms;

    /// `kObservationDurationLowerBound` of libwebrtc's tests (the default, 250 ms).
    const OBSERVATION: Duration = ms(250);
    /// `kPacketSize` of libwebrtc's tests.
    const PACKET: DataSize = DataSize::from_bytes(15_000);

    fn kbps(k: u64) -> Bitrate {
        Bitrate::from_kbps(k)
    }

    fn at(n: u64) -> Instant {
        Instant::ZERO + OBSERVATION * n
    }

    /// `n` packets sent `OBSERVATION` apart from `first`, the last `lost` of them lost
    /// (libwebrtc's `CreatePacketResultsWith…` helpers).
    fn feedback(first: Instant, n: u64, lost: u64) -> Vec<PacketResult> {
        (0..n)
            .map(|i| PacketResult {
                size: PACKET,
                send_time: first + OBSERVATION * i,
                received: (i < n - lost).then(|| first + OBSERVATION * (i + 1)),
            })
            .collect()
    }

    fn received(first: Instant) -> Vec<PacketResult> {
        feedback(first, 2, 0)
    }
    fn loss_10p(first: Instant) -> Vec<PacketResult> {
        feedback(first, 10, 1)
    }
    fn loss_50p(first: Instant) -> Vec<PacketResult> {
        feedback(first, 2, 1)
    }
    fn loss_100p(first: Instant) -> Vec<PacketResult> {
        feedback(first, 2, 2)
    }

    /// libwebrtc's `ShortObservationConfig`: one observation is enough, a window of two.
    fn short() -> LossV2Config {
        LossV2Config {
            min_num_observations: 1,
            observation_window_size: 2,
            ..LossV2Config::default()
        }
    }

    fn outcome(bandwidth: Bitrate, state: LossBasedState) -> LossBasedResult {
        LossBasedResult { bandwidth, state }
    }

    /// Started at 2500 kbit/s with `hold_duration_factor`, after one observation of 50 %
    /// loss (`Decreasing`); and the estimate it fell to.
    fn backed_off(hold_duration_factor: f64) -> (LossBasedBweV2, Bitrate) {
        let config = LossV2Config {
            hold_duration_factor,
            ..short()
        };
        let mut bwe = estimator(config, kbps(2500));
        bwe.update(at(2), &loss_50p(at(0)), UNBOUNDED, false);
        assert_eq!(bwe.result().state, LossBasedState::Decreasing);
        let estimate = bwe.result().bandwidth;
        (bwe, estimate)
    }

    fn estimator(config: LossV2Config, start: Bitrate) -> LossBasedBweV2 {
        let mut bwe = LossBasedBweV2::new(config);
        bwe.set_bandwidth_estimate(start);
        bwe
    }

    /// Feedback every 250 ms (one observation each) from a sender at a steady rate: 20
    /// packets sent 12.5 ms apart, sized so that they carry `rate`; every `lost_every`-th
    /// lost (0: none), and with a `capacity`, the fraction (rate − capacity)/rate of them
    /// as well, spread evenly (a link that drops what exceeds it, with no queue for the
    /// delay-based estimate to see). The first observation closes with the second feedback
    /// (the first spans 237.5 ms of send time).
    struct Steady {
        feedbacks: u64,
        sent: u64,
        lost_every: u64,
        capacity: Option<Bitrate>,
        /// Of the excess loss, in bit/s: a packet is lost each time it reaches the rate.
        credit: u64,
        packets: Vec<PacketResult>,
    }

    impl Steady {
        fn new(lost_every: u64) -> Self {
            Steady {
                feedbacks: 0,
                sent: 0,
                lost_every,
                capacity: None,
                credit: 0,
                packets: Vec::new(),
            }
        }

        fn over(capacity: Bitrate, lost_every: u64) -> Self {
            Steady {
                capacity: Some(capacity),
                ..Steady::new(lost_every)
            }
        }

        /// The next feedback, the sender at `rate`, given to `bwe`; its result.
        fn step(
            &mut self,
            bwe: &mut LossBasedBweV2,
            rate: Bitrate,
            delay_based: Bitrate,
        ) -> LossBasedResult {
            let spacing = OBSERVATION / 20;
            let size = DataSize::from_bytes(rate.bps() * spacing.as_nanos() / 8_000_000_000);
            let start = at(self.feedbacks);
            self.feedbacks += 1;
            self.packets.clear();
            let excess = self
                .capacity
                .map_or(0, |c| rate.bps().saturating_sub(c.bps()));
            for j in 1..=20 {
                self.sent += 1;
                self.credit += excess;
                let mut lost = self.lost_every > 0 && self.sent % self.lost_every == 0;
                if excess > 0 && self.credit >= rate.bps() {
                    self.credit -= rate.bps();
                    lost = true;
                }
                let send_time = start + spacing * j;
                self.packets.push(PacketResult {
                    size,
                    send_time,
                    received: (!lost).then_some(send_time + ms(30)),
                });
            }
            bwe.update(at(self.feedbacks), &self.packets, delay_based, false);
            bwe.result()
        }
    }

    #[test]
    fn the_defaults_are_libwebrtcs_and_valid() {
        let c = LossV2Config::default();
        assert_eq!(c.candidate_factors, [1.02, 1.0, 0.95]);
        assert_eq!(c.observation_window_size, 20);
        assert_eq!(c.observation_duration_lower_bound, ms(250));
        assert_eq!(c.min_num_observations, 3);
        assert_eq!(c.instant_upper_bound_bandwidth_balance, kbps(75));
        assert_eq!(c.inherent_loss_upper_bound_offset, 0.05);
        assert_eq!(c.max_increase_factor, 1.3);
        assert_eq!(c.delayed_increase_window, ms(300));
        assert_eq!(c.newton_step_size, 0.75);
        assert_eq!(c.validate(), Ok(()));
        assert!(LossBasedBweV2::new(c).is_enabled());
    }

    /// `DisabledWhenGivenNonPositiveCandidateFactor`,
    /// `DisabledWhenGivenConfigurationThatDoesNotAllowGeneratingCandidates`,
    /// `ReturnsDelayBasedEstimateWhenDisabled`.
    #[test]
    fn an_invalid_or_disabled_configuration_reports_the_delay_based_estimate() {
        for factors in [vec![-1.3, 1.1], vec![0.0, 1.1]] {
            let c = LossV2Config {
                candidate_factors: factors,
                ..LossV2Config::default()
            };
            assert!(c.validate().is_err());
            assert!(!LossBasedBweV2::new(c).is_enabled());
        }
        let no_candidates = LossV2Config {
            candidate_factors: vec![1.0],
            append_acknowledged_rate_candidate: false,
            append_delay_based_estimate_candidate: false,
            ..LossV2Config::default()
        };
        assert!(no_candidates.validate().is_err());
        let disabled = LossV2Config {
            enabled: false,
            ..LossV2Config::default()
        };
        let mut bwe = LossBasedBweV2::new(disabled);
        bwe.update(at(0), &[], kbps(100), false);
        assert_eq!(bwe.result().bandwidth, kbps(100));
        assert_eq!(bwe.result().state, LossBasedState::DelayBasedEstimate);
    }

    /// `NoBandwidthEstimateGivenNotEnoughFeedback`, `NoBandwidthEstimateGivenNoInitialization`
    /// (libwebrtc's +∞ is `UNBOUNDED`).
    #[test]
    fn no_estimate_before_an_observation_spans_the_lower_bound() {
        let mut bwe = estimator(short(), kbps(600));
        let half = [
            PacketResult {
                size: PACKET,
                send_time: at(0),
                received: Some(at(0) + ms(125)),
            },
            PacketResult {
                size: PACKET,
                send_time: at(0) + ms(125),
                received: Some(at(1)),
            },
        ];
        bwe.update(at(1), &half, UNBOUNDED, false);
        assert!(!bwe.is_ready());
        assert_eq!(bwe.result().bandwidth, UNBOUNDED);

        let mut uninitialised = LossBasedBweV2::new(short());
        uninitialised.update(at(2), &received(at(0)), UNBOUNDED, false);
        assert!(!uninitialised.is_ready());
        assert_eq!(uninitialised.result().bandwidth, UNBOUNDED);
    }

    /// `NoBweChangeIfObservationDurationUnchanged`: the same feedback again closes no
    /// observation (its send times span nothing new).
    #[test]
    fn the_same_feedback_twice_changes_nothing() {
        let mut bwe = estimator(short(), kbps(600));
        bwe.set_acknowledged_bitrate(kbps(300));
        bwe.update(at(2), &received(at(0)), UNBOUNDED, false);
        let first = bwe.result();
        bwe.update(at(2), &received(at(0)), UNBOUNDED, false);
        assert_eq!(bwe.result(), first);
    }

    /// `HasDecreaseStateBecauseOfUpperBound`: 10 % loss gives the instant upper bound
    /// 10 kbit/s / (0.10 − 0.05) = 200 kbit/s, below the 500 kbit/s candidate.
    #[test]
    fn the_instant_upper_bound_cuts_at_high_loss() {
        let mut bwe = estimator(
            LossV2Config {
                candidate_factors: vec![1.0],
                instant_upper_bound_bandwidth_balance: kbps(10),
                ..short()
            },
            kbps(500),
        );
        bwe.set_min_max(kbps(10), kbps(1_000_000));
        bwe.set_acknowledged_bitrate(kbps(500));
        bwe.update(at(10), &loss_10p(at(0)), UNBOUNDED, false);
        assert_eq!(bwe.result().bandwidth, kbps(200));
        assert_eq!(bwe.result().state, LossBasedState::Decreasing);
    }

    /// `BackOffToAckedRateIfNotInAlr` and `NotBackOffToAckedRateInAlr`: at 100 % loss the
    /// acknowledged rate (100 kbit/s) is the best candidate, under the instant upper bound
    /// 100/(1 − 0.05) = 105 kbit/s; in ALR it is no candidate, and the estimate falls less.
    #[test]
    fn at_total_loss_the_estimate_backs_off_to_the_acknowledged_rate_unless_in_alr() {
        for in_alr in [false, true] {
            let mut bwe = estimator(
                LossV2Config {
                    instant_upper_bound_bandwidth_balance: kbps(100),
                    ..short()
                },
                kbps(600),
            );
            bwe.set_min_max(kbps(10), kbps(1_000_000));
            bwe.set_acknowledged_bitrate(kbps(100));
            bwe.update(at(2), &loss_100p(at(0)), kbps(5000), in_alr);
            let estimate = bwe.result().bandwidth;
            if in_alr {
                assert!(estimate > kbps(100) && estimate < kbps(600), "{estimate}");
            } else {
                assert_eq!(estimate, kbps(100));
            }
        }
    }

    /// `HasDelayBasedStateIfLossBasedBweIsMax`: capped by the maximum (1000 kbit/s) the state
    /// is `DelayBasedEstimate`; after 50 % loss it decreases, and within three loss-free
    /// observations it is back at the maximum, delay-based.
    #[test]
    fn back_to_the_maximum_and_delay_based_after_the_loss_stops() {
        let mut bwe = LossBasedBweV2::new(short());
        bwe.set_min_max(kbps(10), kbps(1000));
        bwe.update(at(2), &received(at(0)), kbps(2000), false);
        assert_eq!(
            bwe.result(),
            outcome(kbps(1000), LossBasedState::DelayBasedEstimate)
        );
        bwe.update(at(3), &loss_50p(at(1)), kbps(2000), false);
        let result = bwe.result();
        assert_eq!(result.state, LossBasedState::Decreasing);
        assert!(result.bandwidth < kbps(1000));
        let mut n = 2;
        while n < 5 && bwe.result().state != LossBasedState::DelayBasedEstimate {
            bwe.update(at(n + 2), &received(at(n)), kbps(2000), false);
            n += 1;
        }
        assert_eq!(
            bwe.result(),
            outcome(kbps(1000), LossBasedState::DelayBasedEstimate)
        );
    }

    /// `IncreaseByMaxIncreaseFactorAfterLossBasedBweBacksOff`: after a back-off the first
    /// increase is capped at `max_increase_factor` (1.5 here) times the backed-off estimate.
    #[test]
    fn the_first_increase_after_a_back_off_is_capped_by_the_max_increase_factor() {
        let mut bwe = estimator(
            LossV2Config {
                candidate_factors: vec![1.2, 1.0, 0.5],
                instant_upper_bound_bandwidth_balance: kbps(10_000),
                max_increase_factor: 1.5,
                not_increase_if_inherent_loss_less_than_average_loss: false,
                ..short()
            },
            kbps(600),
        );
        bwe.set_acknowledged_bitrate(kbps(300));
        bwe.update(at(2), &loss_100p(at(0)), kbps(5000), false);
        let at_loss = bwe.result().bandwidth;
        bwe.set_acknowledged_bitrate(kbps(600));
        bwe.update(at(3), &received(at(1)), kbps(5000), false);
        assert_eq!(bwe.result().bandwidth, at_loss.mul_f64(1.5));
    }

    /// `IncreaseEstimateIfNotHold`: with libwebrtc's default `hold_duration_factor` (0) the
    /// estimate rises at the first loss-free observation after a decrease.
    #[test]
    fn without_hold_the_estimate_rises_at_once_after_the_loss_stops() {
        let (mut bwe, estimate) = backed_off(0.0);
        bwe.update(at(3), &received(at(1)), UNBOUNDED, false);
        assert_eq!(bwe.result().state, LossBasedState::Increasing);
        assert!(bwe.result().bandwidth > estimate);
    }

    /// `IncreaseEstimateAfterHoldDuration` (`HoldDurationFactor:3`). The first decrease holds
    /// for 300 ms of send time: the loss observation ends at 250 ms, so the hold lasts until
    /// 550 ms — the observation ending at 500 ms is held, the one ending at 750 ms is not. The
    /// next decrease (observation ending at 1000 ms) holds 3·300 = 900 ms, until 1900 ms: the
    /// observations ending at 1250, 1500 and 1750 ms are held, the one at 2000 ms is not.
    #[test]
    fn recovery_waits_for_the_hold_and_the_hold_grows() {
        let (mut bwe, estimate) = backed_off(3.0);
        bwe.update(at(3), &received(at(1)), UNBOUNDED, false);
        assert_eq!(bwe.result(), outcome(estimate, LossBasedState::Decreasing));
        bwe.update(at(4), &received(at(2)), UNBOUNDED, false);
        assert_eq!(bwe.result().state, LossBasedState::Increasing);
        assert!(bwe.result().bandwidth >= estimate);

        bwe.update(at(5), &loss_50p(at(3)), UNBOUNDED, false);
        assert_eq!(bwe.result().state, LossBasedState::Decreasing);
        let estimate = bwe.result().bandwidth;
        for i in 4..=6 {
            bwe.update(at(i + 2), &received(at(i)), UNBOUNDED, false);
            assert_eq!(
                bwe.result(),
                outcome(estimate, LossBasedState::Decreasing),
                "observation {i}"
            );
        }
        bwe.update(at(9), &received(at(7)), UNBOUNDED, false);
        assert_eq!(bwe.result().state, LossBasedState::Increasing);
        assert!(bwe.result().bandwidth >= estimate);
    }

    /// `EndHoldDurationIfDelayBasedEstimateWorks`: a delay-based estimate just above the held
    /// estimate ends the hold at once.
    #[test]
    fn a_working_delay_based_estimate_ends_the_hold() {
        let (mut bwe, estimate) = backed_off(3.0);
        let delay_based = saturating_add(estimate, kbps(10));
        bwe.update(at(3), &received(at(1)), delay_based, false);
        assert_eq!(
            bwe.result(),
            outcome(delay_based, LossBasedState::DelayBasedEstimate)
        );
    }

    /// No loss: the estimate is the delay-based estimate, and follows it up and down at once.
    /// By hand: with no loss the likelihood of (2) is n·ln(1 − ι) for every B ≥ S (p = ι),
    /// and lower for B < S; with λ = 0 the bias (3) grows with B (a(0, f) = f·0.15/0.152 > 0),
    /// so the highest candidate wins — the delay-based estimate when above B̂ (or 1.02·B̂),
    /// capped by the delay-based estimate: B = delay-based, state `DelayBasedEstimate`
    /// (B is not below it). Not loss-limited, nothing caps the rise (no 1.3× window).
    #[test]
    fn without_loss_the_estimate_follows_the_delay_based_estimate() {
        let mut bwe = LossBasedBweV2::new(LossV2Config::default());
        let mut sender = Steady::new(0);
        let delay_based = |i: u64| match i {
            0..10 => kbps(1000),
            10..20 => kbps(3000),
            _ => kbps(800),
        };
        for i in 0..30 {
            let result = sender.step(&mut bwe, kbps(900), delay_based(i));
            assert_eq!(
                result,
                outcome(delay_based(i), LossBasedState::DelayBasedEstimate),
                "feedback {i}"
            );
        }
        assert!(bwe.is_ready());
    }

    /// Sustained 10 % loss at S = 1152 kbit/s, the delay-based estimate blind at
    /// 2000 kbit/s, the acknowledged rate 0.9·S. By hand: λ = 0.10 > 0.05, so the instant
    /// upper bound is 75 kbit/s / (0.10 − 0.05) = 1500 kbit/s — which is also the highest B
    /// at which 10 % loss can be inherent (0.05 + 75/B ≥ 0.10 ⟺ B ≤ 1500): one sending rate
    /// cannot tell inherent from congestion loss, so ι absorbs the loss for every B ≥ S and
    /// the bias (λ < 0.15) prefers the highest B. Hence the estimate falls from 2000 to
    /// 1500 kbit/s (±1 bit/s of rounding), `Decreasing` (below the delay-based estimate).
    #[test]
    fn sustained_loss_at_one_rate_falls_to_where_it_is_just_inherent() {
        let mut bwe = LossBasedBweV2::new(LossV2Config::default());
        bwe.set_acknowledged_bitrate(kbps(1037));
        let mut sender = Steady::new(10);
        for i in 0..40 {
            let result = sender.step(&mut bwe, kbps(1152), kbps(2000));
            if !bwe.is_ready() {
                assert_eq!(result.bandwidth, kbps(2000), "feedback {i}");
                continue;
            }
            let error = result.bandwidth.bps().abs_diff(1_500_000);
            assert!(error <= 1, "feedback {i}: {result:?}");
            assert_eq!(result.state, LossBasedState::Decreasing);
        }
    }

    /// Inherent random loss, 2 % whatever the rate: the estimate is not cut. By hand:
    /// λ = 0.02 is below the 0.05 offset (no instant upper bound) and below 0.15 (the bias
    /// favours a higher B); ι ≤ 0.05 + 75/B covers 2 % at any B, so every B ≥ S fits as well
    /// as any other and the highest candidate wins: the estimate stays at the delay-based
    /// estimate, `DelayBasedEstimate`, at every feedback.
    #[test]
    fn inherent_loss_does_not_cut_the_estimate() {
        let mut bwe = LossBasedBweV2::new(LossV2Config::default());
        let mut sender = Steady::new(50);
        for i in 0..60 {
            bwe.set_acknowledged_bitrate(kbps(980));
            let result = sender.step(&mut bwe, kbps(1000), kbps(1500));
            assert_eq!(
                result,
                outcome(kbps(1500), LossBasedState::DelayBasedEstimate),
                "feedback {i}"
            );
        }
        assert!(bwe.average_reported_loss_ratio > 0.015);
    }

    /// After a loss episode the estimate recovers, by at most 1.3× (`max_increase_factor`) per
    /// 300 ms window of send time — one 250 ms observation at most 1.3× the previous
    /// estimate, plus the 1 bit/s that turns `Decreasing` into `Increasing` — until it is the
    /// delay-based estimate again. By hand: from the backed-off B₀ it takes at least
    /// ⌈ln(2000/B₀)/ln 1.3⌉ observations.
    #[test]
    fn recovery_after_loss_is_bounded_by_the_increase_factor() {
        let mut bwe = LossBasedBweV2::new(LossV2Config::default());
        let mut lossy = Steady::new(2);
        for _ in 0..6 {
            bwe.set_acknowledged_bitrate(kbps(500));
            lossy.step(&mut bwe, kbps(1000), kbps(2000));
        }
        let backed_off = bwe.result();
        assert_eq!(backed_off.state, LossBasedState::Decreasing);
        assert!(backed_off.bandwidth <= kbps(500), "{backed_off:?}");
        let mut clean = Steady::new(0);
        clean.feedbacks = lossy.feedbacks;
        let mut previous = backed_off.bandwidth;
        let mut steps = 0;
        while bwe.result().state != LossBasedState::DelayBasedEstimate {
            bwe.set_acknowledged_bitrate(previous);
            let result = clean.step(&mut bwe, previous, kbps(2000));
            let cap = previous.mul_f64(1.3).bps() + 1;
            assert!(
                result.bandwidth.bps() <= cap,
                "{result:?} after {previous:?}"
            );
            previous = result.bandwidth;
            steps += 1;
            assert!(steps < 100, "no recovery");
        }
        assert_eq!(bwe.result().bandwidth, kbps(2000));
        let least = (2000.0 / backed_off.bandwidth.kbps_f64()).ln() / 1.3f64.ln();
        assert!(steps as f64 >= least.ceil(), "{steps} observations");
    }

    /// The sender at the estimate over a 1000 kbit/s link that drops what exceeds it (the
    /// delay-based estimate blind at 2000), the acknowledged rate min(S, C). By hand: with
    /// S = B the loss is ℓ = 1 − C/B, and the instant upper bound 75/(ℓ − 0.05) stays above B
    /// only while 0.95·B − C ≤ 75 kbit/s, i.e. B ≤ (C + 75)/0.95 = 1131.6 kbit/s; below it
    /// the loss is read as inherent (ι ≤ 0.05 + 75/B) and the bias pushes B up. So the
    /// estimate falls from 2000 and hovers about 1131.6 kbit/s: its mean over the last 10 s
    /// within 5 % of it, and no estimate above 1.3× it (the increase factor).
    #[test]
    fn over_a_dropping_link_the_estimate_settles_where_the_instant_bound_meets_the_rate() {
        let mut bwe = LossBasedBweV2::new(LossV2Config::default());
        let mut link = Steady::over(kbps(1000), 0);
        let mut rate = kbps(2000);
        let ceiling = 1075.0 / 0.95;
        let mut last_10_s = Vec::new();
        for i in 0..240 {
            bwe.set_acknowledged_bitrate(rate.min(kbps(1000)));
            rate = link.step(&mut bwe, rate, kbps(2000)).bandwidth;
            if i >= 200 {
                last_10_s.push(rate.kbps_f64());
            }
        }
        let mean = last_10_s.iter().sum::<f64>() / last_10_s.len() as f64;
        assert!((mean / ceiling - 1.0).abs() < 0.05, "mean {mean} kbit/s");
        let highest = last_10_s.iter().copied().fold(0.0, f64::max);
        assert!(highest <= 1.3 * ceiling, "{highest} kbit/s");
    }

    /// The same inputs give the same estimates: the loop above with 1 % inherent loss too.
    #[test]
    fn deterministic() {
        let trace = || {
            let mut bwe = LossBasedBweV2::new(LossV2Config::default());
            let mut link = Steady::over(kbps(1000), 100);
            let mut rate = kbps(1500);
            (0..200)
                .map(|_| {
                    bwe.set_acknowledged_bitrate(rate.min(kbps(1000)));
                    let result = link.step(&mut bwe, rate, kbps(3000));
                    rate = result.bandwidth;
                    result
                })
                .collect::<Vec<_>>()
        };
        let first = trace();
        assert_eq!(first, trace());
        assert!(first.iter().any(|r| r.state == LossBasedState::Decreasing));
        assert!(first.iter().any(|r| r.state == LossBasedState::Increasing));
    }
}
