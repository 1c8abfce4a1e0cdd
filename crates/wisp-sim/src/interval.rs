//! A rate-control environment stepped one monitor interval (MI) at a time, as the reinforcement
//! learning work on congestion control frames it (Aurora: Jay et al., "A Deep Reinforcement
//! Learning Perspective on Internet Congestion Control", ICML 2019): each step sets the sending
//! rate for one MI and observes, at its end, what a sender can know; the reward is Aurora's.
//! Python's `wisp.gym.RateControlEnv` is this [`Env`] behind Gymnasium's interface.
//!
//! ```no_run
//! use wisp_sim::interval::{Env, EnvConfig};
//! let link = "const:2mbps".parse::<wisp_sim::link::LinkSpec>()?.load()?;
//! let mut env = Env::new(EnvConfig::new(vec![link]))?;
//! let first = env.reset(7)?;
//! let step = env.step(first.rate_kbps * 1.5)?;
//! println!("{:?} reward {} done {}", step.observation, step.reward, step.done);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **The scheme** (named `mi-rate`, registered at run time, not a built-in of the command line)
//! is a rate-based sender of MTU-sized bulk packets paced at the MI's rate, and a receiver that
//! acknowledges every packet at once ([`Ack`]: its sequence number and arrival time, 16 bytes in
//! a frame of kind 201), as Aurora's simulator does. The sender knows what a real sender can:
//! what it sent, and the acknowledgements that came back. Per MI, over the acknowledgements
//! that arrived in it ([`Observation`], computed by [`IntervalStats`]):
//!
//! | field | meaning |
//! |---|---|
//! | `send_kbps` | bytes sent in the MI × 8 / MI |
//! | `recv_kbps` | bytes acknowledged in the MI × 8 / MI |
//! | `rtt_ms` | mean round-trip time of the packets acknowledged in the MI (the previous MI's if none) |
//! | `rtt_ratio` | `rtt_ms` / the smallest round-trip time seen so far in the episode (1 before any) |
//! | `delay_gradient` | least-squares slope of the round-trip time against the packet's send time, s/s (0 with fewer than two): (r − c)/c for a rate r into a queue served at c |
//! | `loss_rate` | packets found lost in the MI / (those + the acknowledged); a packet is lost when a later one is acknowledged first (the path does not reorder) |
//! | `rate_kbps` | the rate the sender was told to use in the MI |
//!
//! **The reward** is Aurora's, `a·throughput − b·latency − c·loss` with the throughput in
//! 1500-byte packets per second (`recv_kbps`), the latency in seconds (`rtt_ms`) and the loss
//! rate; the weights ([`RewardWeights`]) default to Aurora's (10, 1000, 2000). **The action**
//! ([`ActionMode`]) is the rate in kbit/s, or Aurora's multiplier a ∈ [−10, 10]: the rate is
//! multiplied by 1 + 0.025·a for a ≥ 0 and divided by 1 − 0.025·a otherwise; either way it is
//! then kept within `[min_kbps, max_kbps]`.
//!
//! **An episode** is one simulation of `steps + 1` MIs (plus one MI of slack, so that the last
//! MI's end is inside the run) on one of the configured links, with one seed: [`Env::reset`]
//! returns the first MI's observation (sent at `start_kbps`), and each of the `steps` calls of
//! [`Env::step`] runs one more MI; the last one says `done`. Same links, options, seed and
//! actions: the same observations and rewards, to the bit.
//!
//! Deviations and design notes:
//! - The engine ([`crate::sim::Simulation`]) runs a scenario to its end in one call and has no
//!   way to stop at a given time, so an episode runs on a thread of its own: the sender stops at
//!   the end of every MI (its timer), hands the MI's statistics over and waits for the next rate
//!   (a mutex and a condition variable). The hand-off is deterministic: the simulation never
//!   runs while the caller decides. A `run_until(t)` on the engine would remove the thread.
//! - Closing or dropping an episode tells the sender to stop: it sends nothing more, and the
//!   simulation runs out its remaining time with no new packets and ends. [`Env::close`] and
//!   [`Env::reset`] wait for that thread; dropping the environment does not.
//! - Aurora's episodes have a random length and links drawn from ranges; here the length is
//!   fixed (`steps`) and the link is one of a list (a trace, a constant rate, …).

use crate::link::LinkModel;
use crate::options::RunOptions;
use crate::sim::FlowSpec;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use wisp_core::controller::{Allowance, Receiver, SendContext, Sender, SenderStats};
use wisp_core::pacer::Pacer;
use wisp_core::packet::DataHeader;
use wisp_core::scheme::opaque::{MAX_KBPS, secs};
use wisp_core::scheme::params::Parameters;
use wisp_core::scheme::{
    Built, CustomScheme, Halves, ParamError, Scheme, SchemeConfig, SchemeContext, listed_as,
};
use wisp_core::source::Source;
use wisp_core::wire::{Message, Reader, WireError, Writer, frame, unframe};
use wisp_core::{Bitrate, DataSize, Duration, Instant};

/// The names of an observation's fields, in the order of [`Observation::to_array`].
pub const FIELDS: [&str; 7] = [
    "send_kbps",
    "recv_kbps",
    "rtt_ms",
    "rtt_ratio",
    "delay_gradient",
    "loss_rate",
    "rate_kbps",
];

/// Aurora's multiplier step.
pub const MULTIPLIER_STEP: f64 = 0.025;

/// What the sender knows at the end of one MI (see the module's table).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observation {
    pub send_kbps: f64,
    pub recv_kbps: f64,
    pub rtt_ms: f64,
    pub rtt_ratio: f64,
    pub delay_gradient: f64,
    pub loss_rate: f64,
    pub rate_kbps: f64,
}

impl Observation {
    /// The fields in the order of [`FIELDS`].
    pub fn to_array(&self) -> [f64; 7] {
        [
            self.send_kbps,
            self.recv_kbps,
            self.rtt_ms,
            self.rtt_ratio,
            self.delay_gradient,
            self.loss_rate,
            self.rate_kbps,
        ]
    }
}

/// The acknowledgement of one packet, kind 201.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ack {
    pub seq: u64,
    pub arrival: Instant,
}

impl Message for Ack {
    fn emit(&self, out: &mut Vec<u8>) {
        frame(out, 201, |out| {
            out.put_u64(self.seq);
            out.put_instant(self.arrival);
        });
    }
    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        let (kind, mut p): (u8, Reader<'_>) = unframe(buf)?;
        if kind != 201 {
            return Err(WireError::UnknownKind(kind));
        }
        let a = Ack {
            seq: p.u64()?,
            arrival: p.instant()?,
        };
        p.finish()?;
        Ok(a)
    }
}

/// Sums over one MI's acknowledgements.
#[derive(Clone, Debug, Default)]
struct MiSums {
    sent: u64,
    acked_bytes: u64,
    acked: u64,
    lost: u64,
    /// Sums for the mean and the least-squares slope of (send time s, rtt s).
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
}

/// A sender's per-MI statistics: fed with what it sends and the acknowledgements that come
/// back, closed at the end of each MI into an [`Observation`].
#[derive(Clone, Debug, Default)]
pub struct IntervalStats {
    /// Packets sent and not yet acknowledged or found lost: `(seq, sent, bytes)`.
    outstanding: VecDeque<(u64, Instant, u64)>,
    min_rtt: Option<f64>,
    last_rtt: f64,
    mi: MiSums,
}

impl IntervalStats {
    /// A packet of `bytes` left at `now`.
    pub fn on_sent(&mut self, now: Instant, seq: u64, bytes: u64) {
        self.mi.sent += bytes;
        self.outstanding.push_back((seq, now, bytes));
    }

    /// Packet `seq` was acknowledged at `now`; the outstanding ones sent before it are lost.
    pub fn on_ack(&mut self, now: Instant, seq: u64) {
        while let Some(&(s, sent, size)) = self.outstanding.front() {
            if s > seq {
                break;
            }
            self.outstanding.pop_front();
            if s < seq {
                self.mi.lost += 1;
                continue;
            }
            let rtt = (now - sent).as_secs_f64();
            let x = secs(sent);
            let m = &mut self.mi;
            m.acked += 1;
            m.acked_bytes += size;
            m.sx += x;
            m.sy += rtt;
            m.sxx += x * x;
            m.sxy += x * rtt;
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |r| r.min(rtt)));
        }
    }

    /// Ends an MI of length `mi` sent at `rate`: its observation; the next MI starts afresh
    /// (but for the smallest and the last round-trip time).
    pub fn close(&mut self, mi: Duration, rate: Bitrate) -> Observation {
        let m = std::mem::take(&mut self.mi);
        let mi = mi.as_secs_f64();
        let n = m.acked as f64;
        let rtt = if m.acked > 0 { m.sy / n } else { self.last_rtt };
        self.last_rtt = rtt;
        let gradient = if m.acked >= 2 {
            let den = n * m.sxx - m.sx * m.sx;
            if den > 0.0 {
                (n * m.sxy - m.sx * m.sy) / den
            } else {
                0.0
            }
        } else {
            0.0
        };
        let seen = m.acked + m.lost;
        Observation {
            send_kbps: m.sent as f64 * 8.0 / mi / 1e3,
            recv_kbps: m.acked_bytes as f64 * 8.0 / mi / 1e3,
            rtt_ms: rtt * 1e3,
            rtt_ratio: self
                .min_rtt
                .map_or(1.0, |min| if min > 0.0 { rtt / min } else { 1.0 }),
            delay_gradient: gradient,
            loss_rate: if seen == 0 {
                0.0
            } else {
                m.lost as f64 / seen as f64
            },
            rate_kbps: rate.kbps_f64(),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    obs: Option<Observation>,
    rate: Option<Bitrate>,
    /// The caller has left: the sender stops.
    closed: bool,
    /// The simulation has ended (with an error message if it could not run).
    finished: Option<Option<String>>,
}

/// The hand-off between an episode's simulation thread and its caller.
#[derive(Debug, Default)]
struct Mailbox {
    state: Mutex<State>,
    cv: Condvar,
}

impl Mailbox {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The simulation's side: posts an observation, waits for the next rate (`None`: closed).
    fn exchange(&self, obs: Observation) -> Option<Bitrate> {
        let mut s = self.lock();
        s.obs = Some(obs);
        self.cv.notify_all();
        loop {
            if s.closed {
                return None;
            }
            if let Some(r) = s.rate.take() {
                return Some(r);
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn finish(&self, error: Option<String>) {
        let mut s = self.lock();
        s.finished = Some(error);
        self.cv.notify_all();
    }

    fn close(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }

    /// The caller's side: posts a rate (if any), waits for the next observation (`Err`: the
    /// simulation ended first, with its error if any).
    fn wait_obs(&self, rate: Option<Bitrate>) -> Result<Observation, Option<String>> {
        let mut s = self.lock();
        if rate.is_some() {
            s.rate = rate;
            self.cv.notify_all();
        }
        loop {
            if let Some(o) = s.obs.take() {
                return Ok(o);
            }
            if let Some(f) = &s.finished {
                return Err(f.clone());
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The configuration of an episode's scheme: its first rate, the MI, and the hand-off.
#[derive(Clone, Debug)]
struct MiRateConfig {
    start: Bitrate,
    mi: Duration,
    mailbox: Arc<Mailbox>,
}

impl PartialEq for MiRateConfig {
    fn eq(&self, other: &Self) -> bool {
        self.start == other.start
            && self.mi == other.mi
            && Arc::ptr_eq(&self.mailbox, &other.mailbox)
    }
}

impl Parameters for MiRateConfig {
    fn param_list(&self) -> Vec<(&'static str, String)> {
        vec![]
    }
    fn param_docs(&self) -> Vec<(String, String)> {
        vec![]
    }
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        wisp_core::scheme::params::no_params("mi-rate", given, "(none)")
    }
}

impl Scheme for MiRateConfig {
    type Sender = MiRateSender;
    type Receiver = AckReceiver;
    listed_as! {
        "mi-rate",
        "the sender of wisp_sim::interval::Env (its rate set every monitor interval)",
        MiRateConfig {
            start: Bitrate::from_kbps(1000),
            mi: Duration::from_millis(50),
            mailbox: Arc::default(),
        },
    }

    fn build(&self, ctx: SchemeContext) -> Built<Self> {
        let mtu = ctx.mtu();
        Ok(Halves {
            sender: MiRateSender {
                rate: self.start,
                mi: self.mi,
                next_mi: Instant::ZERO + self.mi,
                mailbox: self.mailbox.clone(),
                stopped: false,
                stats: IntervalStats::default(),
            },
            receiver: AckReceiver::default(),
            source: Source::bulk(mtu),
            pacer: Pacer::default(),
            mtu,
        })
    }
}

/// The sending half: a rate per MI, stopped at each MI's end to hand its observation over.
#[derive(Debug)]
pub struct MiRateSender {
    rate: Bitrate,
    mi: Duration,
    next_mi: Instant,
    mailbox: Arc<Mailbox>,
    stopped: bool,
    stats: IntervalStats,
}

impl Sender for MiRateSender {
    type Feedback = Ack;
    type Fields = ();

    fn on_packet_sent(&mut self, now: Instant, p: &DataHeader, _: &SendContext) {
        self.stats.on_sent(now, p.seq, p.size.bytes());
    }

    fn on_feedback(&mut self, now: Instant, ack: &Ack) {
        self.stats.on_ack(now, ack.seq);
    }

    fn allowance(&self, _now: Instant) -> Allowance {
        if self.stopped {
            return Allowance::Window {
                bytes: DataSize::ZERO,
                pacing: None,
            };
        }
        Allowance::Rate {
            target: self.rate,
            pacing: self.rate,
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        (!self.stopped).then_some(self.next_mi)
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.stopped || now < self.next_mi {
            return;
        }
        let obs = self.stats.close(self.mi, self.rate);
        match self.mailbox.exchange(obs) {
            Some(rate) => {
                self.rate = rate;
                self.next_mi += self.mi;
            }
            None => self.stopped = true,
        }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: Some(self.rate),
            window: None,
        }
    }
}

/// The receiving half: acknowledges every packet at once.
#[derive(Debug, Default)]
pub struct AckReceiver {
    pending: VecDeque<Ack>,
}

impl Receiver for AckReceiver {
    type Feedback = Ack;
    type Fields = ();

    fn on_packet_received(&mut self, now: Instant, p: &DataHeader, _: &()) {
        self.pending.push_back(Ack {
            seq: p.seq,
            arrival: now,
        });
    }

    fn poll_feedback(&mut self, _now: Instant) -> Option<Ack> {
        self.pending.pop_front()
    }
}

/// A bad configuration, or a call the episode's state does not allow.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EnvError {
    #[error("link: names no link")]
    NoLinks,
    #[error("monitor_interval_ms: must be at least 1")]
    Interval,
    #[error("episode_s: shorter than one monitor interval")]
    NoSteps,
    #[error("need 0 < min_kbps <= start_kbps <= max_kbps <= 1e8 (got {min}, {start}, {max})")]
    Rates { min: f64, start: f64, max: f64 },
    #[error("reward: the weights must be finite (got {0:?})")]
    Reward([f64; 3]),
    #[error("action: `{0}` is neither `rate` nor `multiplier`")]
    ActionMode(String),
    #[error("action: `{0}` gives no finite rate")]
    Action(f64),
    #[error("link: no link {index} (there are {count})")]
    LinkIndex { index: usize, count: usize },
    #[error("step() before reset()")]
    NotReset,
    #[error("the episode has ended")]
    Ended,
    /// The simulation could not run (its message).
    #[error("{0}")]
    Sim(String),
}

impl EnvError {
    /// Whether the error is a call out of order (`step` before `reset`, or past the episode's
    /// end) rather than a bad value.
    pub fn is_state(&self) -> bool {
        matches!(self, EnvError::NotReset | EnvError::Ended)
    }
}

/// What an action means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ActionMode {
    /// The rate, kbit/s.
    #[default]
    Rate,
    /// Aurora's multiplier a: ×(1 + 0.025·a) for a ≥ 0, ÷(1 − 0.025·a) otherwise.
    Multiplier,
}

impl std::str::FromStr for ActionMode {
    type Err = EnvError;
    fn from_str(s: &str) -> Result<Self, EnvError> {
        match s {
            "rate" => Ok(ActionMode::Rate),
            "multiplier" => Ok(ActionMode::Multiplier),
            _ => Err(EnvError::ActionMode(s.to_string())),
        }
    }
}

/// The reward's weights: `throughput·recv_pps − latency·rtt_s − loss·loss_rate`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RewardWeights {
    pub throughput: f64,
    pub latency: f64,
    pub loss: f64,
}

impl Default for RewardWeights {
    /// Aurora's: 10, 1000, 2000.
    fn default() -> Self {
        RewardWeights {
            throughput: 10.0,
            latency: 1000.0,
            loss: 2000.0,
        }
    }
}

impl RewardWeights {
    /// Aurora's reward of one MI: throughput in 1500-byte packets per second, latency in
    /// seconds, the loss rate.
    pub fn reward(&self, o: &Observation) -> f64 {
        self.throughput * o.recv_kbps * 1000.0 / 8.0 / 1500.0
            - self.latency * o.rtt_ms / 1000.0
            - self.loss * o.loss_rate
    }
}

/// An environment's configuration. [`EnvConfig::new`] gives the defaults of
/// `wisp.gym.RateControlEnv`.
#[derive(Clone, Debug)]
pub struct EnvConfig {
    /// The links an episode is run on (one per episode).
    pub links: Vec<LinkModel>,
    /// Delay, queue and loss (the duration is the episode's; the warm-up is ignored).
    pub options: RunOptions,
    /// The monitor interval (at least 1 ms).
    pub interval: Duration,
    /// Steps per episode (after the first observation).
    pub steps: u32,
    pub start_kbps: f64,
    pub min_kbps: f64,
    pub max_kbps: f64,
    pub action: ActionMode,
    pub reward: RewardWeights,
}

impl EnvConfig {
    /// `links` with the defaults: 50-ms MIs, 10-s episodes (200 steps), 1000 kbit/s at first,
    /// rates within 50 to 20,000 kbit/s, the rate as the action, Aurora's reward, the command
    /// line's delay (20 ms each way), an infinite queue and no loss.
    pub fn new(links: Vec<LinkModel>) -> Self {
        EnvConfig {
            links,
            options: RunOptions::default(),
            interval: Duration::from_millis(50),
            steps: 200,
            start_kbps: 1000.0,
            min_kbps: 50.0,
            max_kbps: 20000.0,
            action: ActionMode::Rate,
            reward: RewardWeights::default(),
        }
    }

    /// Sets `steps` to the episode length `episode_s` in MIs (rounded half to even).
    pub fn episode_s(mut self, episode_s: f64) -> Result<Self, EnvError> {
        let steps = (episode_s * 1000.0 / self.interval.as_millis_f64()).round_ties_even();
        if steps.is_nan() || steps < 1.0 {
            return Err(EnvError::NoSteps);
        }
        self.steps = steps.min(f64::from(u32::MAX)) as u32;
        Ok(self)
    }

    fn check(&self) -> Result<(), EnvError> {
        if self.links.is_empty() {
            return Err(EnvError::NoLinks);
        }
        if self.interval < Duration::from_millis(1) {
            return Err(EnvError::Interval);
        }
        if self.steps == 0 {
            return Err(EnvError::NoSteps);
        }
        let (min, start, max) = (self.min_kbps, self.start_kbps, self.max_kbps);
        if !(0.0 < min && min <= start && start <= max && max <= MAX_KBPS) {
            return Err(EnvError::Rates { min, start, max });
        }
        let w = self.reward;
        let weights = [w.throughput, w.latency, w.loss];
        if !weights.iter().all(|x| x.is_finite()) {
            return Err(EnvError::Reward(weights));
        }
        Ok(())
    }
}

/// The result of one step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub observation: Observation,
    pub reward: f64,
    /// The episode's last step (it is truncated: it never ends otherwise).
    pub done: bool,
}

/// One episode: a simulation on its own thread, stopped at the end of every MI.
#[derive(Debug)]
struct Episode {
    mailbox: Arc<Mailbox>,
    thread: Option<JoinHandle<()>>,
}

impl Episode {
    fn start(config: &EnvConfig, link: LinkModel, seed: u64) -> Result<Self, EnvError> {
        let mi = config.interval;
        let mut options = config.options.clone();
        options.warmup = Duration::ZERO;
        // The first observation, `steps` more, and one MI of slack: the last MI's end is inside
        // the run.
        options.duration = Some(Duration::from_nanos(
            mi.as_nanos() * (u64::from(config.steps) + 2),
        ));
        let mailbox = Arc::new(Mailbox::default());
        let scheme = SchemeConfig::Custom(CustomScheme::new(MiRateConfig {
            start: Bitrate::from_kbps_f64(config.start_kbps),
            mi,
            mailbox: mailbox.clone(),
        }));
        let scenario = options.scenario(link, None, vec![FlowSpec::new(scheme)], seed);
        let m = mailbox.clone();
        let thread = std::thread::Builder::new()
            .name("wisp-interval".into())
            .spawn(move || {
                let r = crate::sim::simulate(&scenario, None);
                m.finish(r.err().map(|e| e.to_string()));
            })
            .map_err(|e| EnvError::Sim(format!("cannot start the episode's thread: {e}")))?;
        Ok(Episode {
            mailbox,
            thread: Some(thread),
        })
    }

    /// Sets the next MI's rate (`None` for the first observation) and waits for its end.
    fn next(&self, rate: Option<Bitrate>) -> Result<Observation, EnvError> {
        self.mailbox.wait_obs(rate).map_err(|e| match e {
            Some(msg) => EnvError::Sim(msg),
            None => EnvError::Ended,
        })
    }

    /// Stops the sender and waits for the simulation to end.
    fn close(mut self) {
        self.mailbox.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Episode {
    fn drop(&mut self) {
        self.mailbox.close();
    }
}

/// The environment: [`reset`](Env::reset) starts an episode, [`step`](Env::step) runs one MI.
#[derive(Debug)]
pub struct Env {
    config: EnvConfig,
    episode: Option<Episode>,
    link: usize,
    t: u32,
    rate_kbps: f64,
}

impl Env {
    /// Checks `config`.
    pub fn new(config: EnvConfig) -> Result<Self, EnvError> {
        config.check()?;
        let rate_kbps = config.start_kbps;
        Ok(Env {
            config,
            episode: None,
            link: 0,
            t: 0,
            rate_kbps,
        })
    }

    pub fn config(&self) -> &EnvConfig {
        &self.config
    }

    /// Starts an episode with simulation seed `seed`, on the link drawn from the seed
    /// (`seed::stream(seed, "interval/link")`; the only one if there is one), and returns the
    /// first MI's observation.
    pub fn reset(&mut self, seed: u64) -> Result<Observation, EnvError> {
        use rand::RngExt;
        let n = self.config.links.len();
        let link = if n == 1 {
            0
        } else {
            crate::seed::stream(seed, "interval/link").random_range(0..n)
        };
        self.reset_on(link, seed)
    }

    /// Starts an episode on link number `link` of the configuration with simulation seed
    /// `seed` (the caller draws both: Gymnasium's environments draw them from their own
    /// generator), and returns the first MI's observation.
    pub fn reset_on(&mut self, link: usize, seed: u64) -> Result<Observation, EnvError> {
        let count = self.config.links.len();
        if link >= count {
            return Err(EnvError::LinkIndex { index: link, count });
        }
        self.close();
        let episode = Episode::start(&self.config, self.config.links[link].clone(), seed)?;
        let first = episode.next(None)?;
        self.episode = Some(episode);
        self.link = link;
        self.t = 0;
        self.rate_kbps = self.config.start_kbps;
        Ok(first)
    }

    /// The rate an action asks for, kept within the bounds (the current rate is the
    /// multiplier's base).
    pub fn rate_of_action(&self, action: f64) -> Result<f64, EnvError> {
        let rate = match self.config.action {
            ActionMode::Rate => action,
            ActionMode::Multiplier if action >= 0.0 => {
                self.rate_kbps * (1.0 + MULTIPLIER_STEP * action)
            }
            ActionMode::Multiplier => self.rate_kbps / (1.0 - MULTIPLIER_STEP * action),
        };
        if !rate.is_finite() {
            return Err(EnvError::Action(action));
        }
        Ok(rate.max(self.config.min_kbps).min(self.config.max_kbps))
    }

    /// Runs one MI at the rate `action` asks for.
    pub fn step(&mut self, action: f64) -> Result<Step, EnvError> {
        let episode = self.episode.as_ref().ok_or(EnvError::NotReset)?;
        if self.t >= self.config.steps {
            return Err(EnvError::Ended);
        }
        let rate = self.rate_of_action(action)?;
        self.rate_kbps = rate;
        let observation = episode.next(Some(Bitrate::from_kbps_f64(rate)))?;
        self.t += 1;
        Ok(Step {
            observation,
            reward: self.config.reward.reward(&observation),
            done: self.t >= self.config.steps,
        })
    }

    /// The current episode's link (the index into the configuration's links).
    pub fn link(&self) -> Option<usize> {
        self.episode.as_ref().map(|_| self.link)
    }

    /// Steps taken in the current episode.
    pub fn steps_taken(&self) -> u32 {
        self.t
    }

    /// The rate of the current MI, kbit/s.
    pub fn rate_kbps(&self) -> f64 {
        self.rate_kbps
    }

    /// Ends the current episode, if any, and waits for its simulation to end.
    pub fn close(&mut self) {
        if let Some(e) = self.episode.take() {
            e.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::LinkSpec;
    use proptest::prelude::*;
    use wisp_core::packet::{Content, Ecn, SchemeFields};

    fn header(seq: u64, ms: u64) -> DataHeader {
        DataHeader {
            seq,
            byte_seq: seq * 1500,
            send_time: Instant::from_millis(ms),
            size: DataSize::from_bytes(1500),
            content: Content::Bulk,
            ecn: Ecn::NotEct,
            fields: SchemeFields::EMPTY,
        }
    }

    fn link(spec: &str) -> LinkModel {
        spec.parse::<LinkSpec>().unwrap().load().unwrap()
    }

    #[test]
    fn an_ack_is_16_bytes_in_a_frame_of_kind_201() {
        let a = Ack {
            seq: 7,
            arrival: Instant::from_nanos(0x0102),
        };
        let mut out = vec![];
        a.emit(&mut out);
        assert_eq!(
            out,
            [201, 0, 16, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 1, 2]
        );
        assert_eq!(Ack::parse(&out), Ok(a));
    }

    /// Ten packets 5 ms apart (2.4 Mbit/s over the 50-ms MI), acknowledged 40 ms after they
    /// left plus a queueing delay growing 2 ms per packet (0.4 s per s of sending), but for
    /// packet 3, lost. Through the sender, as the simulator drives it.
    #[test]
    fn a_monitor_intervals_statistics() {
        let config = MiRateConfig {
            start: Bitrate::from_kbps(2400),
            mi: Duration::from_millis(50),
            mailbox: Arc::default(),
        };
        let mut s = config.build(SchemeContext::new()).unwrap().sender;
        let ctx = SendContext::default();
        for i in 0..10 {
            Sender::on_packet_sent(&mut s, Instant::from_millis(5 * i), &header(i, 5 * i), &ctx);
        }
        for i in (0..10).filter(|&i| i != 3) {
            let at = Instant::from_millis(5 * i + 40 + 2 * i);
            let ack = Ack {
                seq: i,
                arrival: at,
            };
            Sender::on_feedback(&mut s, at, &ack);
        }
        let o = s.stats.close(s.mi, s.rate);
        assert!((o.send_kbps - 2400.0).abs() < 1e-9, "{o:?}");
        assert!(
            (o.recv_kbps - 9.0 * 1500.0 * 8.0 / 0.05 / 1e3).abs() < 1e-9,
            "{o:?}"
        );
        // mean of 40 + 2i over i ≠ 3: 40 + 2·(45 − 3)/9
        let mean = 40.0 + 2.0 * 42.0 / 9.0;
        assert!((o.rtt_ms - mean).abs() < 1e-9, "{o:?}");
        assert!((o.rtt_ratio - mean / 40.0).abs() < 1e-9, "{o:?}");
        assert!((o.delay_gradient - 0.4).abs() < 1e-9, "{o:?}");
        assert!((o.loss_rate - 0.1).abs() < 1e-12, "{o:?}");
        assert_eq!(o.rate_kbps, 2400.0);
        // The next MI starts afresh: nothing sent or acknowledged, the last RTT kept.
        let p = s.stats.close(s.mi, s.rate);
        assert_eq!(
            (p.send_kbps, p.recv_kbps, p.delay_gradient, p.loss_rate),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert_eq!(p.rtt_ms, o.rtt_ms);
    }

    #[test]
    fn the_reward_is_aurora_s() {
        // 1.2 Mbit/s = 100 packets/s of 1500 B; 50 ms; 10 % loss.
        let o = Observation {
            recv_kbps: 1200.0,
            rtt_ms: 50.0,
            loss_rate: 0.1,
            ..Observation::default()
        };
        let r = RewardWeights::default().reward(&o);
        assert!(
            (r - (10.0 * 100.0 - 1000.0 * 0.05 - 2000.0 * 0.1)).abs() < 1e-9,
            "{r}"
        );
    }

    #[test]
    fn a_multiplier_scales_the_rate_within_the_bounds() {
        let mut c = EnvConfig::new(vec![link("const:2mbps")]);
        c.action = ActionMode::Multiplier;
        let env = Env::new(c).unwrap();
        let r = |a: f64| env.rate_of_action(a).unwrap();
        assert!((r(4.0) - 1100.0).abs() < 1e-9);
        assert!((r(-4.0) - 1000.0 / 1.1).abs() < 1e-9);
        assert_eq!(r(0.0), 1000.0);
        assert!(matches!(
            env.rate_of_action(f64::NAN),
            Err(EnvError::Action(_))
        ));
        let mut c = EnvConfig::new(vec![link("const:2mbps")]);
        c.max_kbps = 5000.0;
        let env = Env::new(c).unwrap();
        assert_eq!(env.rate_of_action(1e9).unwrap(), 5000.0);
        assert_eq!(env.rate_of_action(-3.0).unwrap(), 50.0);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let ok = || EnvConfig::new(vec![link("const:2mbps")]);
        assert_eq!(
            Env::new(EnvConfig::new(vec![])).err(),
            Some(EnvError::NoLinks)
        );
        let mut c = ok();
        c.min_kbps = 2000.0;
        assert!(matches!(Env::new(c), Err(EnvError::Rates { .. })));
        let mut c = ok();
        c.max_kbps = 2e8;
        assert!(matches!(Env::new(c), Err(EnvError::Rates { .. })));
        let mut c = ok();
        c.interval = Duration::from_micros(500);
        assert_eq!(Env::new(c).err(), Some(EnvError::Interval));
        assert_eq!(ok().episode_s(0.01).err(), Some(EnvError::NoSteps));
        assert_eq!(ok().episode_s(f64::NAN).err(), Some(EnvError::NoSteps));
        assert_eq!(ok().episode_s(1.0).unwrap().steps, 20);
        assert_eq!(
            "faster".parse::<ActionMode>(),
            Err(EnvError::ActionMode("faster".into()))
        );
        let mut env = Env::new(ok()).unwrap();
        assert_eq!(env.step(1000.0), Err(EnvError::NotReset));
        assert!(matches!(
            env.reset_on(1, 0),
            Err(EnvError::LinkIndex { .. })
        ));
    }

    /// 2 Mbit/s, 20 ms each way, 1500-byte packets. Below capacity what is sent arrives and the
    /// round trip is 40 ms + one packet's serialisation (6 ms); at twice the capacity into an
    /// infinite queue half arrives and the round trip grows by (r − c)/c = 1 s per second.
    #[test]
    fn observations_match_a_fluid_model_of_the_bottleneck() {
        let c = EnvConfig::new(vec![link("const:2mbps")])
            .episode_s(3.0)
            .unwrap();
        let mut env = Env::new(c).unwrap();
        env.reset(1).unwrap();
        let mut mean_of = |rate: f64, steps: usize| {
            let obs: Vec<[f64; 7]> = (0..steps)
                .map(|_| env.step(rate).unwrap().observation.to_array())
                .collect();
            let tail = &obs[steps / 2..];
            let mut m = [0.0; 7];
            for o in tail {
                for (a, b) in m.iter_mut().zip(o) {
                    *a += b / tail.len() as f64;
                }
            }
            m
        };
        let [send, recv, rtt, ratio, gradient, loss, _] = mean_of(1000.0, 20);
        assert!((send / 1000.0 - 1.0).abs() < 0.03, "{send}");
        assert!((recv / 1000.0 - 1.0).abs() < 0.03, "{recv}");
        assert!((rtt - 46.0).abs() < 0.5, "{rtt}");
        assert!((ratio - 1.0).abs() < 0.01, "{ratio}");
        assert!(loss == 0.0 && gradient.abs() < 0.01, "{loss} {gradient}");
        let [send, recv, _, ratio, gradient, _, _] = mean_of(4000.0, 30);
        assert!((send / 4000.0 - 1.0).abs() < 0.03, "{send}");
        assert!((recv / 2000.0 - 1.0).abs() < 0.03, "{recv}");
        assert!((gradient - 1.0).abs() < 0.05, "{gradient}");
        assert!(ratio > 2.0, "{ratio}");
        env.close();
    }

    fn trajectory(env: &mut Env, seed: u64, actions: &[f64]) -> (Vec<Step>, Option<usize>) {
        let first = env.reset(seed).unwrap();
        let mut out = vec![Step {
            observation: first,
            reward: 0.0,
            done: false,
        }];
        out.extend(actions.iter().map(|&a| env.step(a).unwrap()));
        (out, env.link())
    }

    #[test]
    fn an_episode_replays_by_seed_and_is_truncated_after_its_steps() {
        let mut c = EnvConfig::new(vec![
            link("const:3mbps"),
            link("trace:../../traces/cellular/Verizon-LTE-short.down"),
        ])
        .episode_s(1.0)
        .unwrap();
        c.options.loss = "0.05".parse().unwrap();
        let actions: Vec<f64> = (0..20).map(|i| 500.0 + 400.0 * f64::from(i % 9)).collect();
        let mut a = Env::new(c.clone()).unwrap();
        let mut b = Env::new(c).unwrap();
        let mut lossy = 0;
        let mut links = std::collections::HashSet::new();
        for seed in 1..=6 {
            let (ta, la) = trajectory(&mut a, seed, &actions);
            let (tb, lb) = trajectory(&mut b, seed, &actions);
            assert_eq!((ta.clone(), la), (tb, lb), "seed {seed}");
            links.insert(la);
            lossy += ta.iter().filter(|s| s.observation.loss_rate > 0.0).count();
            let done: Vec<bool> = ta[1..].iter().map(|s| s.done).collect();
            assert_eq!(done, [vec![false; 19], vec![true]].concat());
            assert_eq!(a.step(1000.0), Err(EnvError::Ended));
        }
        // The seeds drew losses, and both links.
        assert!(lossy > 0);
        assert_eq!(links.len(), 2);
        // Another seed: other losses.
        let (t1, _) = trajectory(&mut a, 1, &actions);
        let (t7, _) = trajectory(&mut a, 7, &actions);
        assert_ne!(t1, t7);
    }

    proptest! {
        #[test]
        fn acks_round_trip(seq in any::<u64>(), ns in any::<u64>()) {
            let a = Ack { seq, arrival: Instant::from_nanos(ns) };
            let mut out = vec![];
            a.emit(&mut out);
            prop_assert_eq!(Ack::parse(&out), Ok(a));
        }

        #[test]
        fn parsing_an_ack_never_panics(buf in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = Ack::parse(&buf);
        }
    }
}
