//! Mobile-broadband link model — Mehrotra, Chen, Jain, Li, Li, Chen, "Bandwidth Management for
//! Mobile Media Delivery" (§III), and the profiles `3g-up`, `wimax-down`, `cable-up`.
//!
//! The paper measured 3G (EV-DO) and WiMAX links that lose packets and delay them by tens to
//! hundreds of milliseconds *whatever the sending rate*, and traced the noise to short-term
//! capacity fluctuations that the link layer hides with retransmissions, each adding a
//! transmission time (§III-B). The model has two stages:
//!
//! 1. **The bottleneck** (the simulator's queue and this link's server): a serialiser at the
//!    capacity C(t). C(t) is piecewise constant over 100-ms steps; ln C follows a stationary
//!    AR(1) process with standard deviation `sigma` and correlation time `coherence`, scaled so
//!    that the mean of C is `rate`. This is the only stage that depends on the load: sending
//!    faster than C(t) builds a queue. The link's buffer is a discard timer: a packet that has
//!    waited longer than `buffer` in the queue is discarded when it reaches the head (cellular
//!    RLC/PDCP buffers discard stale packets by age); `buffer=none` keeps everything.
//! 2. **The radio** (per packet, after the bottleneck), all of it independent of the load:
//!    * *fades*: the channel is unusable during fades, which start as a Poisson process (mean
//!      `fade-every` between starts) and last an exponential time (mean `fade-len`);
//!    * *link-layer retransmissions*: every transmission attempt takes one `tti` (one link-layer
//!      frame); an attempt fails during a fade, and with probability `per` outside one; each
//!      failure adds a retransmission (one `tti`), up to `retx` of them, after which the packet
//!      is lost. A packet that meets a fade therefore waits until the fade ends, or is lost if
//!      the fade outlasts `retx` frames;
//!    * *residual loss*: a packet is lost with probability `loss` even so;
//!    * *jitter*: a delay J(t) that varies in time (linear between knots; knot values are
//!      exponential with mean `jitter`, knots max(20 ms, 4 × `jitter`) apart, so that it rarely
//!      falls faster than time passes);
//!    * *latency*: a fixed one-way delay of the access network.
//!
//!    Packets keep their order: a packet leaves the radio no earlier than its predecessor plus
//!    its own airtime at the `radio` (peak) rate, and is delivered no earlier than its
//!    predecessor.
//!
//! Every radio effect is a function of the time a packet reaches the radio (fades, jitter) or an
//! independent draw per packet (retransmissions outside fades, residual loss), so the delay and
//! loss a packet sees do not depend on how fast the flow sends — the paper's observation — until
//! the bottleneck congests. Fades, the capacity process and the jitter knots come from the link's
//! own `seed` (every run over the same spec sees the same channel, as the paper compared its
//! controllers on the same collected traces); the per-packet draws come from the run's seed. The
//! schedules cover one hour ([`HORIZON`]); after it the capacity is `rate` and there are no
//! fades.
//!
//! **Capacity** (`capacity_bins`, `capacity_kbps`, utilisation) is stage 1's: the bytes C(t)
//! can carry. The radio's inherent losses are on top, so even a perfect sender's utilisation is
//! 1 − (its loss rate), a few per cent below 1 on the noisy profiles. The ideal sender (and so
//! `ideal_e2e_delay_p95_ms`) sees the radio's delays and losses, which no sender can avoid.
//!
//! ## Profiles (`--link 3g-up[:KEY=VALUE,…]`)
//!
//! | key | `3g-up` | `wimax-down` | `cable-up` |
//! |---|---|---|---|
//! | `rate` | 420kbps | 5mbps | 2mbps |
//! | `sigma` | 0.2 | 0 | 0 |
//! | `coherence` | 3s | 3s | 3s |
//! | `buffer` | 500ms | 150ms | 500ms |
//! | `tti` | 10ms | 5ms | 2ms |
//! | `per` | 0.1 | 0.1 | 0 |
//! | `retx` | 30 | 8 | 0 |
//! | `fade-every` | 2s | 500ms | 0 (none) |
//! | `fade-len` | 150ms | 10ms | 0 |
//! | `loss` | 0.02 | 0.03 | 0 |
//! | `jitter` | 30ms | 5ms | 0.5ms |
//! | `latency` | 40ms | 15ms | 5ms |
//! | `radio` | 1.8mbps | 20mbps | 20mbps |
//! | `seed` | 1 | 1 | 1 |
//!
//! How each figure was chosen (the paper gives plots and a few numbers, not parameters):
//!
//! * **`3g-up`** (EV-DO uplink, Figs. 2, 7, 19(a–b), Table I). §V: congestion-free below about
//!   250 kbit/s, congested above about 640 kbit/s; the capacity's mean (420 kbit/s) sits between
//!   the two, and its spread (σ = 0.2 over seconds: 10th–90th percentile ≈ 320–540 kbit/s) makes
//!   the transition gradual, as the 3G sweeps are (the night sweep of Fig. 7 has a higher
//!   capacity). §III: "2–3 % packet loss even in the congestion-free case, along with 50–100 ms
//!   queuing delays": residual loss 2 % plus what fades longer than 30 retransmissions × 10 ms
//!   lose (1 %); jitter with a 30-ms mean and fades of 150 ms every 2 s (7 % of the time) put
//!   the median delay near 35 ms and the 90th percentile near 90 ms (`wisp sweep` over 10
//!   minutes: 3.0 % loss, p50 33–38 ms, p90 85–90 ms at 100 and 250 kbit/s alike). §V: "for the
//!   3G network, any delay above 300 ms can be considered congestion": 30 retransmissions cap
//!   a fade's delay at 300 ms, so the congestion-free delay has a tail to about 300 ms plus
//!   jitter. (§III-B's example retransmits up to 50 times.) The 500-ms buffer is near the
//!   largest delay Table I reports (UM, 0.45 s). EV-DO Rev. A's reverse link peaks at
//!   1.8 Mbit/s (`radio`, which only spaces the packets a fade releases).
//! * **`wimax-down`** (802.16e downlink, Figs. 3–4, 19(c–d), Table II, Fig. 22). "About
//!   5 Mbit/s"; uncongested below 4.9 and congested above 5.1 Mbit/s, so sharp a threshold that
//!   the capacity must be constant (an operator's 5 Mbit/s service-flow limit in front of a
//!   faster air interface): σ = 0, and the radio's noise does not consume capacity. 802.16e's
//!   5-ms frames are the TTI. "Even a 5 % loss rate is fairly common in the non-congested set"
//!   (of 32-packet windows): residual loss 3 % (a 32-packet window then holds two or more
//!   losses a quarter of the time). §V: "any delay above 50 ms can be considered congestion",
//!   and Fig. 22 operates near 20 ms: jitter with a 5-ms mean and short fades (10 ms every
//!   0.5 s, retried for at most 8 frames, 40 ms) give a median near 5 ms, a 90th percentile
//!   near 12 ms and a tail to about 55 ms. The fades are short and frequent rather than long
//!   and rare so that a learner sampling a few seconds a minute sees them. The 150-ms buffer
//!   is above Table II's largest delay (CTCP-like, 85 ms).
//! * **`cable-up`** (Fig. 5): the clean contrast — constant 2 Mbit/s, no fades, no loss,
//!   sub-millisecond jitter: "any queuing delay above a small amount (such as 50 ms) can be
//!   considered congestion and any loss can be considered congestion as well".
//!
//! `wisp sweep --link PROFILE` measures a profile the way §III measured the networks; its output
//! for each profile is in the reproduction's report.

use super::LinkSpec;
use super::contract::{LinkKind, LinkName, LinkProcess, Serve, Service};
use super::rate::{rate_integral_bits, rate_next_start, rate_serve};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use wisp_core::spec::{ItemError, key_values};
use wisp_core::stats::{standard_exponential, standard_normal};
use wisp_core::units::parse_duration;
use wisp_core::{Bitrate, DataSize, Duration, Instant};

/// How far ahead the channel's schedules are generated.
pub const HORIZON: Duration = Duration::from_secs(3600);

/// The step of the capacity process.
pub const CAPACITY_STEP: Duration = Duration::from_millis(100);

/// The parameters of a mobile-broadband link (see the [module doc](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct MobileSpec {
    /// The profile these parameters started from.
    pub profile: Profile,
    pub rate: Bitrate,
    pub sigma: f64,
    pub coherence: Duration,
    pub buffer: Option<Duration>,
    pub tti: Duration,
    pub per: f64,
    pub retx: u32,
    /// Mean time between fade starts; zero: no fades.
    pub fade_every: Duration,
    pub fade_len: Duration,
    pub loss: f64,
    pub jitter: Duration,
    pub latency: Duration,
    pub radio: Bitrate,
    pub seed: u64,
}

/// The named profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    ThreeGUp,
    WimaxDown,
    CableUp,
}

impl Profile {
    pub const ALL: [Profile; 3] = [Profile::ThreeGUp, Profile::WimaxDown, Profile::CableUp];

    pub fn name(self) -> &'static str {
        match self {
            Profile::ThreeGUp => "3g-up",
            Profile::WimaxDown => "wimax-down",
            Profile::CableUp => "cable-up",
        }
    }

    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The profile's parameters.
    pub fn spec(self) -> MobileSpec {
        let ms = Duration::from_millis;
        match self {
            Profile::ThreeGUp => MobileSpec {
                profile: self,
                rate: Bitrate::from_kbps(420),
                sigma: 0.2,
                coherence: Duration::from_secs(3),
                buffer: Some(ms(500)),
                tti: ms(10),
                per: 0.1,
                retx: 30,
                fade_every: Duration::from_secs(2),
                fade_len: ms(150),
                loss: 0.02,
                jitter: ms(30),
                latency: ms(40),
                radio: Bitrate::from_kbps(1800),
                seed: 1,
            },
            Profile::WimaxDown => MobileSpec {
                profile: self,
                rate: Bitrate::from_mbps(5),
                sigma: 0.0,
                coherence: Duration::from_secs(3),
                buffer: Some(ms(150)),
                tti: ms(5),
                per: 0.1,
                retx: 8,
                fade_every: ms(500),
                fade_len: ms(10),
                loss: 0.03,
                jitter: ms(5),
                latency: ms(15),
                radio: Bitrate::from_mbps(20),
                seed: 1,
            },
            Profile::CableUp => MobileSpec {
                profile: self,
                rate: Bitrate::from_mbps(2),
                sigma: 0.0,
                coherence: Duration::from_secs(3),
                buffer: Some(ms(500)),
                tti: ms(2),
                per: 0.0,
                retx: 0,
                fade_every: Duration::ZERO,
                fade_len: Duration::ZERO,
                loss: 0.0,
                jitter: Duration::from_micros(500),
                latency: ms(5),
                radio: Bitrate::from_mbps(20),
                seed: 1,
            },
        }
    }
}

/// The keys a profile accepts.
pub const KEYS: &str = "rate, sigma, coherence, buffer, tti, per, retx, fade-every, fade-len, loss, jitter, latency, radio, seed";

fn fmt_d(d: Duration) -> String {
    let ms = d.as_millis_f64();
    if ms >= 1000.0 && ms % 1000.0 == 0.0 {
        format!("{}s", ms / 1000.0)
    } else {
        format!("{ms}ms")
    }
}

impl MobileSpec {
    /// Parses `PROFILE[:KEY=VALUE,…]`; `None` if `name` is not a profile.
    pub fn parse(name: &str, args: Option<&str>) -> Option<Result<MobileSpec, String>> {
        let profile = Profile::from_name(name)?;
        let mut s = profile.spec();
        let items = key_values(args.unwrap_or("")).map_err(|e| match e {
            ItemError::NotKeyValue(item) => format!("`{item}` is not KEY=VALUE"),
            ItemError::GivenTwice(k) => format!("`{k}` given twice"),
        });
        let set = items.and_then(|items| items.into_iter().try_for_each(|(k, v)| s.set(k, v)));
        Some(set.and_then(|()| s.check()).map(|()| s))
    }

    fn set(&mut self, k: &str, v: &str) -> Result<(), String> {
        let dur = |v: &str| parse_duration(v).map_err(|e| format!("`{k}`: {}", e.0));
        let prob = |v: &str| -> Result<f64, String> {
            match v.parse::<f64>() {
                Ok(p) if (0.0..1.0).contains(&p) => Ok(p),
                _ => Err(format!("`{k}` must be a probability in [0, 1), not `{v}`")),
            }
        };
        match k {
            "rate" | "radio" => {
                let r: Bitrate = v
                    .parse()
                    .map_err(|e: wisp_core::units::ParseUnitError| e.0)?;
                if r == Bitrate::ZERO {
                    return Err(format!("`{k}` must be a positive rate"));
                }
                let r = crate::limits::check_link_rate(r).map_err(|e| format!("`{k}`: {e}"))?;
                if k == "rate" {
                    self.rate = r;
                } else {
                    self.radio = r;
                }
            }
            "sigma" => {
                self.sigma = match v.parse::<f64>() {
                    Ok(x) if (0.0..=2.0).contains(&x) => x,
                    _ => return Err(format!("`sigma` must be a number in [0, 2], not `{v}`")),
                }
            }
            "coherence" => self.coherence = dur(v)?,
            "buffer" => {
                self.buffer = if v.eq_ignore_ascii_case("none") {
                    None
                } else {
                    Some(dur(v)?)
                }
            }
            "tti" => self.tti = dur(v)?,
            "per" => self.per = prob(v)?,
            "retx" => {
                self.retx = v
                    .parse()
                    .ok()
                    .filter(|&n: &u32| n <= 10_000)
                    .ok_or_else(|| {
                        format!("`retx` must be a whole number, 0 to 10000, not `{v}`")
                    })?
            }
            "fade-every" | "fade_every" => self.fade_every = dur(v)?,
            "fade-len" | "fade_len" => self.fade_len = dur(v)?,
            "loss" => self.loss = prob(v)?,
            "jitter" => self.jitter = dur(v)?,
            "latency" => self.latency = dur(v)?,
            "seed" => {
                self.seed = v
                    .parse()
                    .map_err(|_| format!("`seed` must be a non-negative integer, not `{v}`"))?
            }
            other => return Err(format!("unknown parameter `{other}` (accepted: {KEYS})")),
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        if self.tti.is_zero() {
            return Err("`tti` must be positive".into());
        }
        if self.sigma > 0.0 && self.coherence.is_zero() {
            return Err("`coherence` must be positive when `sigma` is".into());
        }
        if self.buffer.is_some_and(|b| b.is_zero()) {
            return Err("`buffer` must be positive (or none)".into());
        }
        if self.fade_every.is_zero() != self.fade_len.is_zero() {
            return Err("`fade-every` and `fade-len` must both be positive, or both 0".into());
        }
        // The fades are drawn up to HORIZON at once: one every nanosecond asked for terabytes.
        if !self.fade_every.is_zero() && self.fade_every < Duration::from_millis(1) {
            return Err("`fade-every` must be at least 1 ms (or 0 for no fades)".into());
        }
        Ok(())
    }

    /// The canonical spec string: the profile and the parameters that differ from it.
    pub fn name(&self) -> String {
        let d = self.profile.spec();
        let mut v: Vec<String> = vec![];
        let mut push = |k: &str, a: String, b: String| {
            if a != b {
                v.push(format!("{k}={a}"));
            }
        };
        push("rate", self.rate.to_string(), d.rate.to_string());
        push("sigma", self.sigma.to_string(), d.sigma.to_string());
        push("coherence", fmt_d(self.coherence), fmt_d(d.coherence));
        let buf = |b: Option<Duration>| b.map_or_else(|| "none".to_string(), fmt_d);
        push("buffer", buf(self.buffer), buf(d.buffer));
        push("tti", fmt_d(self.tti), fmt_d(d.tti));
        push("per", self.per.to_string(), d.per.to_string());
        push("retx", self.retx.to_string(), d.retx.to_string());
        push("fade-every", fmt_d(self.fade_every), fmt_d(d.fade_every));
        push("fade-len", fmt_d(self.fade_len), fmt_d(d.fade_len));
        push("loss", self.loss.to_string(), d.loss.to_string());
        push("jitter", fmt_d(self.jitter), fmt_d(d.jitter));
        push("latency", fmt_d(self.latency), fmt_d(d.latency));
        push("radio", self.radio.to_string(), d.radio.to_string());
        push("seed", self.seed.to_string(), d.seed.to_string());
        if v.is_empty() {
            self.profile.name().to_string()
        } else {
            format!("{}:{}", self.profile.name(), v.join(","))
        }
    }

    /// Generates the channel: the capacity steps, the fades and the jitter knots' seed.
    pub fn load(&self) -> MobileLink {
        MobileLink {
            spec: self.clone(),
            steps: Arc::new(self.capacity_steps()),
            fades: Arc::new(self.fades()),
            jitter_step: Duration::from_millis(20).max(self.jitter * 4),
        }
    }

    /// `(start, C)`: the capacity every [`CAPACITY_STEP`] up to [`HORIZON`], then `rate`.
    pub fn capacity_steps(&self) -> Vec<(Instant, Bitrate)> {
        if self.sigma == 0.0 {
            return vec![(Instant::ZERO, self.rate)];
        }
        let mut rng = crate::seed::stream(self.seed, "link/mobile/capacity");
        let rho = (-CAPACITY_STEP.as_secs_f64() / self.coherence.as_secs_f64()).exp();
        let s = self.sigma;
        // Stationary start; E[e^X] = e^(σ²/2), so the mean capacity is `rate`.
        let mut x = s * standard_normal(&mut rng);
        let n = (HORIZON.as_nanos() / CAPACITY_STEP.as_nanos()) as usize;
        let mut steps = Vec::with_capacity(n + 1);
        for k in 0..n {
            let c = self.rate.bps() as f64 * (x - s * s / 2.0).exp();
            steps.push((
                Instant::ZERO + CAPACITY_STEP * k as u64,
                Bitrate::from_bps_f64(c.max(1.0)),
            ));
            x = rho * x + (1.0 - rho * rho).sqrt() * s * standard_normal(&mut rng);
        }
        steps.push((Instant::ZERO + HORIZON, self.rate));
        steps
    }

    /// The fades up to [`HORIZON`], `(start, end)`, sorted and disjoint.
    pub fn fades(&self) -> Vec<(Instant, Instant)> {
        let mut out = vec![];
        if self.fade_every.is_zero() {
            return out;
        }
        let mut rng = crate::seed::stream(self.seed, "link/mobile/fades");
        let end = Instant::ZERO + HORIZON;
        let mut t = Instant::ZERO;
        loop {
            let gap = self.fade_every.mul_f64(standard_exponential(&mut rng));
            let len = self.fade_len.mul_f64(standard_exponential(&mut rng));
            let start = (t + gap).max(out.last().map_or(Instant::ZERO, |f: &(_, Instant)| f.1));
            let stop = start + len;
            if stop >= end {
                break;
            }
            if !len.is_zero() {
                out.push((start, stop));
            }
            t = start;
        }
        out
    }
}

/// A uniform value in [0, 1) for `(seed, k)`, without state (random access to the jitter knots).
fn hash_unit(seed: u64, k: u64) -> f64 {
    let z = crate::seed::splitmix64(seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// A loaded [`MobileSpec`]: its channel.
#[derive(Clone, Debug, PartialEq)]
pub struct MobileLink {
    pub spec: MobileSpec,
    /// The capacity C(t), `(start, rate)`.
    pub steps: Arc<Vec<(Instant, Bitrate)>>,
    /// Fades `(start, end)`.
    pub fades: Arc<Vec<(Instant, Instant)>>,
    jitter_step: Duration,
}

impl MobileLink {
    /// The end of the fade `t` falls in, if any.
    pub fn fade_end(&self, t: Instant) -> Option<Instant> {
        let i = self.fades.partition_point(|f| f.0 <= t);
        let (_, end) = *self.fades.get(i.checked_sub(1)?)?;
        (t < end).then_some(end)
    }

    /// The jitter J(t).
    pub fn jitter_at(&self, t: Instant) -> Duration {
        if self.spec.jitter.is_zero() {
            return Duration::ZERO;
        }
        let step = self.jitter_step.as_nanos();
        let k = t.as_nanos() / step;
        let frac = (t.as_nanos() % step) as f64 / step as f64;
        let seed = self.spec.seed ^ 0x6a09_e667_f3bc_c908;
        let knot = |k: u64| -(1.0 - hash_unit(seed, k)).ln();
        let j = knot(k) * (1.0 - frac) + knot(k + 1) * frac;
        self.spec.jitter.mul_f64(j)
    }
}

impl LinkProcess for MobileLink {
    type Server = MobileServer;

    fn name(&self) -> String {
        self.spec.name()
    }

    /// Bytes C(t) carries in `[from, to)`.
    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
        rate_integral_bits(&self.steps, from, to) / 8.0
    }

    /// A server for a run whose per-packet draws come from `seed`.
    fn server(&self, seed: u64) -> MobileServer {
        MobileServer {
            link: self.clone(),
            rng: crate::seed::stream(seed, "link/mobile/packets"),
            last_exit: Instant::ZERO,
            last_delivery: Instant::ZERO,
        }
    }
}

/// The server of a [`MobileLink`]: the bottleneck at C(t), then the radio.
#[derive(Clone, Debug)]
pub struct MobileServer {
    link: MobileLink,
    rng: ChaCha8Rng,
    last_exit: Instant,
    last_delivery: Instant,
}

impl MobileServer {
    pub fn link(&self) -> &MobileLink {
        &self.link
    }
}

impl Serve for MobileServer {
    fn next_start(&mut self, t: Instant) -> Option<Instant> {
        rate_next_start(&self.link.steps, t)
    }

    /// Serves `size` bytes from `t` (which [`Serve::next_start`] returned): the bottleneck,
    /// then the radio.
    fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        let done = rate_serve(&self.link.steps, t, size);
        if done == Instant::MAX {
            return Service {
                done,
                delivered: None,
            };
        }
        let s = &self.link.spec;
        // Retransmissions: every attempt during a fade fails; outside, each fails with `per`.
        let mut retransmissions: u64 = 0;
        if let Some(end) = self.link.fade_end(done) {
            retransmissions = (end - done).as_nanos().div_ceil(s.tti.as_nanos());
        }
        while retransmissions <= u64::from(s.retx)
            && s.per > 0.0
            && self.rng.random::<f64>() < s.per
        {
            retransmissions += 1;
        }
        let residual = s.loss > 0.0 && self.rng.random::<f64>() < s.loss;
        if retransmissions > u64::from(s.retx) || residual {
            return Service {
                done,
                delivered: None,
            };
        }
        let airtime = DataSize::from_bytes(size).transmit_time(s.radio);
        let exit = (done + s.tti * retransmissions).max(self.last_exit + airtime);
        self.last_exit = exit;
        let delivered = (exit + self.link.jitter_at(exit) + s.latency).max(self.last_delivery);
        self.last_delivery = delivered;
        Service {
            done,
            delivered: Some(delivered),
        }
    }

    /// The buffer's discard timer.
    fn discard_after(&self, _now: Instant) -> Option<Duration> {
        self.link.spec.buffer
    }
}

/// `3g-up`, `wimax-down`, `cable-up`, each `[:KEY=VALUE,…]`.
#[derive(Clone, Copy, Debug)]
pub struct MobileKind;

/// What the help says of every profile.
const PROFILE_HELP: &str = "a mobile-broadband profile after Mehrotra et al., whose delay and \
    loss noise does not depend on the sending rate; override any parameter, e.g. \
    3g-up:loss=0.02,rate=500kbps,buffer=none — keys rate, sigma, coherence, buffer, tti, per, \
    retx, fade-every, fade-len, loss, jitter, latency, radio, seed";

/// A profile's name (each is one of [`Profile::ALL`]).
const fn profile(name: &'static str, usage: &'static str) -> LinkName {
    LinkName {
        name,
        usage,
        help: PROFILE_HELP,
    }
}

/// The profiles' names.
const NAMES: &[LinkName] = &[
    profile("3g-up", "3g-up[:…]"),
    profile("wimax-down", "wimax-down[:…]"),
    profile("cable-up", "cable-up[:…]"),
];

impl LinkKind for MobileKind {
    fn names(&self) -> &'static [LinkName] {
        NAMES
    }

    fn parse(&self, name: &str, args: Option<&str>) -> Result<LinkSpec, String> {
        let spec = MobileSpec::parse(name, args)
            .unwrap_or_else(|| Err(format!("`{name}` is not a mobile-broadband profile")));
        spec.map(LinkSpec::Mobile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_core::stats::quantile_sorted;
    use wisp_core::time::ms;

    fn spec(s: &str) -> MobileSpec {
        let (n, a) = s.split_once(':').map_or((s, None), |(n, a)| (n, Some(a)));
        MobileSpec::parse(n, a).unwrap().unwrap()
    }

    #[test]
    fn the_kind_names_every_profile() {
        let names: Vec<&str> = MobileKind.names().iter().map(|n| n.name).collect();
        assert_eq!(names, Profile::ALL.map(Profile::name));
    }

    #[test]
    fn profiles_parse_override_and_print() {
        for p in Profile::ALL {
            assert_eq!(spec(p.name()), p.spec());
            assert_eq!(p.spec().name(), p.name());
        }
        let s = spec("3g-up:loss=0.05,rate=300kbps,buffer=none");
        assert_eq!(s.loss, 0.05);
        assert_eq!(s.rate, Bitrate::from_kbps(300));
        assert_eq!(s.buffer, None);
        assert_eq!(s.name(), "3g-up:rate=300kbps,buffer=none,loss=0.05");
        assert_eq!(spec(&s.name()), s);
        assert!(MobileSpec::parse("4g", None).is_none());
        for bad in [
            "loss=1",
            "loss=x",
            "rate=0",
            "tti=0",
            "color=red",
            "sigma=3",
            "fade-len=0",
            "retx=-1",
            "buffer=0",
            "jitter",
            "loss=0.1,loss=0.2",
            "fade-every=1ns,fade-len=1ns",
        ] {
            assert!(
                MobileSpec::parse("3g-up", Some(bad)).unwrap().is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn capacity_process_has_the_configured_mean_and_spread() {
        let s = Profile::ThreeGUp.spec();
        let steps = s.capacity_steps();
        let logs: Vec<f64> = steps[..steps.len() - 1]
            .iter()
            .map(|&(_, r)| (r.bps() as f64).ln())
            .collect();
        let n = logs.len() as f64;
        let mean_rate = steps[..steps.len() - 1]
            .iter()
            .map(|s| s.1.bps() as f64)
            .sum::<f64>()
            / n;
        assert!((mean_rate / 420e3 - 1.0).abs() < 0.03, "{mean_rate}");
        let m = logs.iter().sum::<f64>() / n;
        let sd = (logs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n).sqrt();
        assert!((sd - 0.2).abs() < 0.02, "{sd}");
        // Correlated over seconds: neighbouring steps are close.
        let lag1 = logs
            .windows(2)
            .map(|w| (w[0] - m) * (w[1] - m))
            .sum::<f64>()
            / n
            / (sd * sd);
        assert!(lag1 > 0.9, "{lag1}");
        assert_eq!(Profile::WimaxDown.spec().capacity_steps().len(), 1);
    }

    #[test]
    fn fades_have_the_configured_rate_and_length() {
        let s = Profile::ThreeGUp.spec();
        let f = s.fades();
        let n = f.len() as f64;
        // 3600 s / (2 s + 0.15 s) ≈ 1674 fades.
        assert!((1550.0..1800.0).contains(&n), "{n}");
        let mean = f
            .iter()
            .map(|(a, b)| (*b - *a).as_millis_f64())
            .sum::<f64>()
            / n;
        assert!((mean - 150.0).abs() < 12.0, "{mean}");
        assert!(f.windows(2).all(|w| w[0].1 <= w[1].0));
        let link = s.load();
        let (a, b) = f[10];
        assert_eq!(link.fade_end(a), Some(b));
        assert_eq!(link.fade_end(b), None);
        assert_eq!(link.fade_end(a - ms(1)), None);
        assert!(Profile::CableUp.spec().fades().is_empty());
    }

    #[test]
    fn jitter_is_continuous_with_the_configured_mean() {
        let link = Arc::new(Profile::ThreeGUp.spec().load());
        let samples: Vec<f64> = (0..200_000)
            .map(|i| link.jitter_at(Instant::from_millis(i * 7)).as_millis_f64())
            .collect();
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        // Linear interpolation keeps the mean (30 ms).
        assert!((mean - 30.0).abs() < 1.5, "{mean}");
        // Knots 120 ms apart: within 1 ms the jitter moves by well under 1 ms.
        for i in 0..1000 {
            let t = Instant::from_millis(i * 13);
            let d = link.jitter_at(t + ms(1)).as_millis_f64() - link.jitter_at(t).as_millis_f64();
            assert!(d.abs() < 1.0, "{d}");
        }
    }

    /// The radio's delay and loss per packet, at two sending rates far below the capacity.
    fn radio_stats(spec: &MobileSpec, gap: Duration, size: u64) -> (f64, [f64; 3]) {
        let link = Arc::new(spec.load());
        let mut srv = link.server(7);
        let mut t = Instant::ZERO;
        let (mut sent, mut lost) = (0u32, 0u32);
        let mut delays = vec![];
        while t < Instant::from_secs(600) {
            let start = srv.next_start(t).unwrap().max(t);
            let s = srv.serve_packet(start, size);
            sent += 1;
            match s.delivered {
                None => lost += 1,
                Some(d) => delays.push((d - s.done).as_millis_f64()),
            }
            t += gap;
        }
        delays.sort_by(f64::total_cmp);
        let q = |p| quantile_sorted(&delays, p).unwrap() - spec.latency.as_millis_f64();
        (f64::from(lost) / f64::from(sent), [q(0.5), q(0.9), q(0.99)])
    }

    #[test]
    fn radio_noise_does_not_depend_on_the_rate() {
        let s = Profile::ThreeGUp.spec();
        // 12 and 120 kbit/s of 1000-byte packets.
        let (l1, d1) = radio_stats(&s, ms(667), 1000);
        let (l2, d2) = radio_stats(&s, Duration::from_micros(66_700), 1000);
        println!("{l1} {d1:?} / {l2} {d2:?}");
        assert!((l1 - l2).abs() < 0.01, "{l1} vs {l2}");
        for i in 0..3 {
            assert!(
                (d1[i] - d2[i]).abs() < 0.2 * d1[i].max(10.0),
                "{d1:?} vs {d2:?}"
            );
        }
        // The paper's 3G levels: 2–3 % loss, 50–100 ms delays, a tail near 300 ms.
        assert!((0.02..0.035).contains(&l2), "{l2}");
        assert!(d2[0] > 15.0 && d2[0] < 60.0, "{d2:?}");
        assert!(d2[1] > 50.0 && d2[1] < 150.0, "{d2:?}");
        assert!(d2[2] > 150.0 && d2[2] < 450.0, "{d2:?}");
    }

    #[test]
    fn a_packet_in_a_fade_waits_for_its_end_or_is_lost() {
        let mut s = Profile::CableUp.spec();
        s.fade_every = Duration::from_secs(1);
        s.fade_len = ms(100);
        s.retx = 20;
        s.tti = ms(2);
        s.jitter = Duration::ZERO;
        s.latency = Duration::ZERO;
        let link = Arc::new(s.load());
        let (a, b) = link
            .fades
            .iter()
            .copied()
            .find(|(a, b)| *b - *a > ms(50))
            .unwrap();
        let mut srv = link.server(1);
        // Served 1 ms into the fade (1000 B at 2 Mbit/s takes 4 ms): it waits for the end if
        // the end is within 20 retransmissions (40 ms), else it is lost.
        let t = b - ms(30) - ms(4);
        let r = srv.serve_packet(t, 1000);
        assert_eq!(r.done, b - ms(30));
        let exit = r.delivered.unwrap();
        assert!(exit >= b && exit <= b + ms(2), "{exit:?} vs {b:?}");
        let r = srv.serve_packet(a, 1000);
        assert_eq!(r.delivered, None);
    }
}
