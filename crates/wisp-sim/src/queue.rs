//! Bottleneck queues: infinite, drop-tail, drop-head, CoDel (RFC 8289), PIE (RFC 8033), an
//! L4S step marker, and DualPI2 (RFC 9332's coupled dual-queue AQM, [`dualpi2`]).
//!
//! `--queue SPEC`:
//!
//! | spec | behaviour |
//! |---|---|
//! | `infinite` (default) | unbounded FIFO (the Sprout paper's setting) |
//! | `droptail:packets=N[,bytes=B]` | reject an arrival that would exceed either limit |
//! | `drophead:packets=N[,bytes=B]` | accept, then drop from the head until within the limits |
//! | `codel[:target=5ms,interval=100ms,ecn=on,packets=N,bytes=B]` | RFC 8289 CoDel (drops the head at dequeue); with `ecn=on` it marks ECT packets CE instead of dropping them (§5: "mark instead of drop"); optional tail-drop limits |
//! | `pie[:target=15ms,tupdate=15ms,burst=150ms,ecn=on,packets=N,bytes=B]` | RFC 8033 PIE (early drop at enqueue); with `ecn=on` an ECT packet is marked CE instead while the drop probability is at most 10 % (§5.1), dropped above |
//! | `step:threshold=1ms[,packets=N,bytes=B]` | L4S-style step marker: an ECT packet whose sojourn time at dequeue is at least `threshold` leaves CE; Not-ECT packets pass unmarked (only the tail-drop limits drop) |
//! | `dualpi2[:target=15ms,tupdate=15ms,alpha=0.15,beta=3,k=2,minth=0.8ms,range=0.4ms,tshift=50ms,packets=N,bytes=B]` | RFC 9332 DualPI2: an L queue (ECT(1), CE) with a ramp marker, a Classic queue with a PI2 controller, coupled (see [`dualpi2`]) |
//!
//! Times accept units (`5ms`, `0.1s`); a bare number is milliseconds, as in Mahimahi's queue
//! arguments. Limits count the packets waiting, not the one being transmitted. `ecn` takes
//! `on`/`off` (also `true`/`false`, `1`/`0`); off by default, so that the queues drop as they
//! always did. A queue marks only ECT(0) and ECT(1) packets ([`Ecn::marked`]): Not-ECT packets
//! are dropped where a mark would be due, CE packets stay CE.
//!
//! Deviations: PIE measures the queueing delay from the head packet's timestamp (RFC 8033 §5.2
//! permits this instead of the departure-rate estimate) and does not de-randomise drops (§5.1's
//! optional refinement); its periodic update runs lazily at the next enqueue or dequeue. PIE's
//! ECN threshold is fixed at 10 % (RFC 8033 §5.1's suggested value; not a key). The step
//! marker has no drop of its own beyond the tail-drop limits (an overload that ECN does not
//! curb fills the queue to its limit). DualPI2's deviations are listed in [`dualpi2`].

pub mod dualpi2;

pub use dualpi2::{DualPi2Params, Gain};

use rand::{Rng, RngExt};
use std::str::FromStr;
use wisp_core::packet::Ecn;
use wisp_core::spec::{ItemError, key_values};
use wisp_core::units::parse_duration;
use wisp_core::{Duration, Instant};

/// Packet and byte limits; `None` = unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Limits {
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
}

impl Limits {
    fn exceeded(&self, packets: u64, bytes: u64) -> bool {
        self.packets.is_some_and(|p| packets > p) || self.bytes.is_some_and(|b| bytes > b)
    }
}

/// CoDel parameters (RFC 8289 §4.2–4.3 defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    pub target: Duration,
    pub interval: Duration,
    /// Mark ECT packets CE instead of dropping them (RFC 8289 §5); off by default.
    pub ecn: bool,
    pub limits: Limits,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
            limits: Limits::default(),
        }
    }
}

/// PIE parameters (RFC 8033 §4 defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieParams {
    pub target: Duration,
    pub t_update: Duration,
    pub max_burst: Duration,
    /// Mark ECT packets CE instead of dropping them while the drop probability is at most
    /// [`PIE_ECN_THRESHOLD`] (RFC 8033 §5.1); off by default.
    pub ecn: bool,
    pub limits: Limits,
}

/// The drop probability up to which PIE with `ecn` marks instead of dropping (RFC 8033 §5.1's
/// suggested 10 %).
pub const PIE_ECN_THRESHOLD: f64 = 0.1;

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            max_burst: Duration::from_millis(150),
            ecn: false,
            limits: Limits::default(),
        }
    }
}

/// The L4S step marker's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepParams {
    /// The sojourn time at dequeue from which an ECT packet is marked CE.
    pub threshold: Duration,
    pub limits: Limits,
}

impl Default for StepParams {
    /// A 1-ms step, as L4S's native AQMs use (RFC 9332's L queue marks from about 1 ms).
    fn default() -> Self {
        StepParams {
            threshold: Duration::from_millis(1),
            limits: Limits::default(),
        }
    }
}

/// A queue discipline as named by `--queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum QueueSpec {
    #[default]
    Infinite,
    DropTail(Limits),
    DropHead(Limits),
    Codel(CodelParams),
    Pie(PieParams),
    Step(StepParams),
    DualPi2(DualPi2Params),
}

/// A bad `--queue` spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid queue `{spec}`: {message}")]
pub struct QueueSpecError {
    pub spec: String,
    pub message: String,
}

/// The `KEY=VALUE` arguments of one spec, read with its error messages.
struct Args<'a> {
    spec: &'a str,
    kv: Vec<(&'a str, &'a str)>,
}

impl<'a> Args<'a> {
    fn err(&self, message: String) -> QueueSpecError {
        QueueSpecError {
            spec: self.spec.to_string(),
            message,
        }
    }

    fn get(&self, k: &str) -> Option<&'a str> {
        self.kv.iter().find(|&&(key, _)| key == k).map(|&(_, v)| v)
    }

    fn count(&self, k: &str) -> Result<Option<u64>, QueueSpecError> {
        self.get(k)
            .map(|v| match v.parse::<u64>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(self.err(format!("`{k}` must be a positive integer, not `{v}`"))),
            })
            .transpose()
    }

    fn limits(&self) -> Result<Limits, QueueSpecError> {
        Ok(Limits {
            packets: self.count("packets")?,
            bytes: self.count("bytes")?,
        })
    }

    /// A time, `default` if not given; zero only if `zero_ok`.
    fn time_or_zero(
        &self,
        k: &str,
        default: Duration,
        zero_ok: bool,
    ) -> Result<Duration, QueueSpecError> {
        let Some(v) = self.get(k) else {
            return Ok(default);
        };
        let d = if v.chars().all(|c| c.is_ascii_digit() || c == '.') {
            parse_duration(&format!("{v}ms"))
        } else {
            parse_duration(v)
        }
        .map_err(|e| self.err(e.0))?;
        if d.is_zero() && !zero_ok {
            return Err(self.err(format!("`{k}` must be positive")));
        }
        Ok(d)
    }

    fn time(&self, k: &str, default: Duration) -> Result<Duration, QueueSpecError> {
        self.time_or_zero(k, default, false)
    }

    /// A positive finite number.
    fn gain(&self, k: &str, default: Gain) -> Result<Gain, QueueSpecError> {
        match self.get(k) {
            None => Ok(default),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .and_then(Gain::new)
                .ok_or_else(|| self.err(format!("`{k}` must be a positive number, not `{v}`"))),
        }
    }

    fn flag(&self, k: &str) -> Result<bool, QueueSpecError> {
        match self.get(k) {
            None | Some("off" | "false" | "0") => Ok(false),
            Some("on" | "true" | "1") => Ok(true),
            Some(v) => Err(self.err(format!("`{k}` must be on or off, not `{v}`"))),
        }
    }
}

/// The keys each kind of queue takes.
fn allowed_keys(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "infinite" => &[],
        "droptail" | "drophead" => &["packets", "bytes"],
        "codel" => &["target", "interval", "ecn", "packets", "bytes"],
        "pie" => &["target", "tupdate", "burst", "ecn", "packets", "bytes"],
        "step" => &["threshold", "packets", "bytes"],
        "dualpi2" => &[
            "target", "tupdate", "alpha", "beta", "k", "minth", "range", "tshift", "packets",
            "bytes",
        ],
        _ => return None,
    })
}

impl FromStr for QueueSpec {
    type Err = QueueSpecError;
    fn from_str(s: &str) -> Result<Self, QueueSpecError> {
        let (kind, list) = s.trim().split_once(':').unwrap_or((s.trim(), ""));
        let mut a = Args {
            spec: s,
            kv: vec![],
        };
        a.kv = key_values(list).map_err(|e| match e {
            ItemError::NotKeyValue(item) => a.err(format!("`{item}` is not KEY=VALUE")),
            ItemError::GivenTwice(k) => a.err(format!("`{k}` given twice")),
        })?;
        let Some(allowed) = allowed_keys(kind) else {
            return Err(a.err(format!(
                "unknown queue `{kind}` (known: infinite, droptail, drophead, codel, pie, step, dualpi2)"
            )));
        };
        for (k, _) in &a.kv {
            if !allowed.contains(k) {
                let list = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                };
                return Err(a.err(format!(
                    "`{kind}` takes no parameter `{k}` (accepted: {list})"
                )));
            }
        }
        let limits = a.limits()?;
        Ok(match kind {
            "infinite" => QueueSpec::Infinite,
            "droptail" | "drophead" => {
                if limits == Limits::default() {
                    return Err(a.err(format!("`{kind}` needs `packets=N` and/or `bytes=B`")));
                }
                if kind == "droptail" {
                    QueueSpec::DropTail(limits)
                } else {
                    QueueSpec::DropHead(limits)
                }
            }
            "codel" => {
                let d = CodelParams::default();
                QueueSpec::Codel(CodelParams {
                    target: a.time("target", d.target)?,
                    interval: a.time("interval", d.interval)?,
                    ecn: a.flag("ecn")?,
                    limits,
                })
            }
            "pie" => {
                let d = PieParams::default();
                QueueSpec::Pie(PieParams {
                    target: a.time("target", d.target)?,
                    t_update: a.time("tupdate", d.t_update)?,
                    max_burst: a.time("burst", d.max_burst)?,
                    ecn: a.flag("ecn")?,
                    limits,
                })
            }
            "step" => QueueSpec::Step(StepParams {
                threshold: a.time("threshold", StepParams::default().threshold)?,
                limits,
            }),
            _ => {
                let d = DualPi2Params::default();
                QueueSpec::DualPi2(DualPi2Params {
                    target: a.time("target", d.target)?,
                    t_update: a.time("tupdate", d.t_update)?,
                    alpha: a.gain("alpha", d.alpha)?,
                    beta: a.gain("beta", d.beta)?,
                    k: a.gain("k", d.k)?,
                    min_th: a.time("minth", d.min_th)?,
                    range: a.time_or_zero("range", d.range, true)?,
                    t_shift: a.time_or_zero("tshift", d.t_shift, true)?,
                    limits,
                })
            }
        })
    }
}

impl std::fmt::Display for QueueSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lim = |l: &Limits| {
            let mut v = vec![];
            if let Some(p) = l.packets {
                v.push(format!("packets={p}"));
            }
            if let Some(b) = l.bytes {
                v.push(format!("bytes={b}"));
            }
            v
        };
        let ms = |d: Duration| format!("{}ms", d.as_millis_f64());
        let ecn = |on: bool| on.then(|| "ecn=on".to_string());
        let (kind, args) = match self {
            QueueSpec::Infinite => ("infinite", vec![]),
            QueueSpec::DropTail(l) => ("droptail", lim(l)),
            QueueSpec::DropHead(l) => ("drophead", lim(l)),
            QueueSpec::Codel(c) => {
                let mut v = vec![
                    format!("target={}", ms(c.target)),
                    format!("interval={}", ms(c.interval)),
                ];
                v.extend(ecn(c.ecn));
                v.extend(lim(&c.limits));
                ("codel", v)
            }
            QueueSpec::Pie(p) => {
                let mut v = vec![
                    format!("target={}", ms(p.target)),
                    format!("tupdate={}", ms(p.t_update)),
                    format!("burst={}", ms(p.max_burst)),
                ];
                v.extend(ecn(p.ecn));
                v.extend(lim(&p.limits));
                ("pie", v)
            }
            QueueSpec::Step(p) => {
                let mut v = vec![format!("threshold={}", ms(p.threshold))];
                v.extend(lim(&p.limits));
                ("step", v)
            }
            QueueSpec::DualPi2(p) => {
                let mut v = vec![
                    format!("target={}", ms(p.target)),
                    format!("tupdate={}", ms(p.t_update)),
                    format!("alpha={}", p.alpha.get()),
                    format!("beta={}", p.beta.get()),
                    format!("k={}", p.k.get()),
                    format!("minth={}", ms(p.min_th)),
                    format!("range={}", ms(p.range)),
                    format!("tshift={}", ms(p.t_shift)),
                ];
                v.extend(lim(&p.limits));
                ("dualpi2", v)
            }
        };
        if args.is_empty() {
            f.write_str(kind)
        } else {
            write!(f, "{kind}:{}", args.join(","))
        }
    }
}

/// A packet waiting in a queue: an id the caller understands, its size, arrival time and IP
/// ECN codepoint. A marking discipline sets `ecn` to CE on the way through; the caller reads it
/// from the packet [`Queue::dequeue`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub id: u32,
    pub size: u32,
    pub enqueued: Instant,
    pub ecn: Ecn,
}

#[derive(Clone, Debug, Default)]
struct CodelState {
    first_above_time: Option<Instant>,
    drop_next: Instant,
    count: u32,
    last_count: u32,
    dropping: bool,
}

#[derive(Clone, Debug, Default)]
struct PieState {
    drop_prob: f64,
    qdelay_old: Duration,
    burst_allowance: Duration,
    next_update: Instant,
}

/// A queue with its discipline's state.
#[derive(Clone, Debug)]
pub struct Queue {
    spec: QueueSpec,
    /// The packets (not DualPI2's: its two queues hold them).
    fifo: dualpi2::Fifo,
    codel: CodelState,
    pie: PieState,
    /// DualPI2's two queues and controller (its packets are there, not in `fifo`).
    dual: Option<Box<dualpi2::DualPi2>>,
    mtu: u64,
}

impl Queue {
    pub fn new(spec: QueueSpec) -> Self {
        let pie = match spec {
            QueueSpec::Pie(p) => PieState {
                burst_allowance: p.max_burst,
                next_update: Instant::ZERO + p.t_update,
                ..Default::default()
            },
            _ => PieState::default(),
        };
        Queue {
            spec,
            fifo: dualpi2::Fifo::default(),
            codel: CodelState::default(),
            pie,
            dual: match spec {
                QueueSpec::DualPi2(p) => Some(Box::new(dualpi2::DualPi2::new(p))),
                _ => None,
            },
            mtu: 1500,
        }
    }

    /// Packets waiting (in both of DualPI2's queues).
    pub fn len(&self) -> usize {
        self.fifo.items.len() + self.dual.as_ref().map_or(0, |d| d.len())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes waiting (in both of DualPI2's queues).
    pub fn bytes(&self) -> u64 {
        self.fifo.bytes + self.dual.as_ref().map_or(0, |d| d.bytes())
    }

    /// DualPI2's controller state, for a queue of that kind.
    pub fn dualpi2(&self) -> Option<&dualpi2::DualPi2> {
        self.dual.as_deref()
    }

    /// Offers a packet; ids of packets dropped (the arrival itself, or others for drop-head) are
    /// pushed to `dropped`.
    pub fn enqueue(
        &mut self,
        now: Instant,
        mut p: Queued,
        rng: &mut impl Rng,
        dropped: &mut Vec<u32>,
    ) {
        let size = u64::from(p.size);
        match self.spec {
            QueueSpec::Infinite => {}
            QueueSpec::DualPi2(_) => {
                let dual = self.dual.as_mut().expect("DualPI2 state");
                return dual.enqueue(now, p, dropped);
            }
            QueueSpec::DropTail(l)
            | QueueSpec::Codel(CodelParams { limits: l, .. })
            | QueueSpec::Step(StepParams { limits: l, .. }) => {
                if l.exceeded(self.fifo.items.len() as u64 + 1, self.fifo.bytes + size) {
                    dropped.push(p.id);
                    return;
                }
            }
            QueueSpec::DropHead(l) => {
                self.fifo.push(p);
                while l.exceeded(self.fifo.items.len() as u64, self.fifo.bytes) {
                    match self.fifo.pop() {
                        Some(h) => dropped.push(h.id),
                        None => break,
                    }
                }
                return;
            }
            QueueSpec::Pie(params) => {
                if params
                    .limits
                    .exceeded(self.fifo.items.len() as u64 + 1, self.fifo.bytes + size)
                {
                    dropped.push(p.id);
                    return;
                }
                self.pie_update(now, params);
                if self.pie_drop_early(params, rng) {
                    // RFC 8033 §5.1: with ECN, mark an ECT packet instead while the drop
                    // probability is at most the threshold.
                    if params.ecn && p.ecn.is_ect() && self.pie.drop_prob <= PIE_ECN_THRESHOLD {
                        p.ecn = p.ecn.marked();
                    } else {
                        dropped.push(p.id);
                        return;
                    }
                }
            }
        }
        self.fifo.push(p);
    }

    /// Takes the head packet for transmission at `now` (with its ECN codepoint as it leaves:
    /// CE if the discipline marked it); ids the discipline drops on the way are pushed to
    /// `dropped`. Only DualPI2 draws from `rng` here (its Classic drop or mark).
    pub fn dequeue(
        &mut self,
        now: Instant,
        rng: &mut impl Rng,
        dropped: &mut Vec<u32>,
    ) -> Option<Queued> {
        match self.spec {
            QueueSpec::Codel(c) => self.codel_dequeue(now, c, dropped),
            QueueSpec::Pie(params) => {
                self.pie_update(now, params);
                self.fifo.pop()
            }
            QueueSpec::Step(params) => {
                let mut p = self.fifo.pop()?;
                if now - p.enqueued >= params.threshold {
                    p.ecn = p.ecn.marked();
                }
                Some(p)
            }
            QueueSpec::DualPi2(_) => {
                let dual = self.dual.as_mut().expect("DualPI2 state");
                dual.dequeue(now, rng, dropped)
            }
            _ => self.fifo.pop(),
        }
    }

    /// RFC 8289 §5.5 `dodequeue`: the head packet and whether CoDel may drop it.
    fn codel_dodequeue(&mut self, now: Instant, c: CodelParams) -> (Option<Queued>, bool) {
        let Some(p) = self.fifo.pop() else {
            self.codel.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - p.enqueued;
        let mut ok_to_drop = false;
        if sojourn < c.target || self.fifo.bytes <= self.mtu {
            self.codel.first_above_time = None;
        } else {
            match self.codel.first_above_time {
                None => self.codel.first_above_time = Some(now + c.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(p), ok_to_drop)
    }

    fn control_law(t: Instant, interval: Duration, count: u32) -> Instant {
        t + Duration::from_secs_f64(interval.as_secs_f64() / f64::from(count.max(1)).sqrt())
    }

    /// RFC 8289 §5.6 `dequeue`.
    fn codel_dequeue(
        &mut self,
        now: Instant,
        c: CodelParams,
        dropped: &mut Vec<u32>,
    ) -> Option<Queued> {
        let (mut p, mut ok) = self.codel_dodequeue(now, c);
        if p.is_none() {
            self.codel.dropping = false;
            return None;
        }
        // RFC 8289 §5: with ECN, a packet CoDel would drop is marked and sent instead, if it
        // is ECT; the control law runs on as if it had been dropped.
        let markable = |p: &Option<Queued>| c.ecn && p.is_some_and(|p| p.ecn.is_ect());
        if self.codel.dropping {
            if !ok {
                self.codel.dropping = false;
            }
            while self.codel.dropping && now >= self.codel.drop_next {
                self.codel.count += 1;
                if markable(&p) {
                    p = p.map(|p| Queued {
                        ecn: p.ecn.marked(),
                        ..p
                    });
                    self.codel.drop_next =
                        Self::control_law(self.codel.drop_next, c.interval, self.codel.count);
                    break;
                }
                dropped.push(p.expect("a packet while dropping").id);
                (p, ok) = self.codel_dodequeue(now, c);
                if !ok {
                    self.codel.dropping = false;
                } else {
                    self.codel.drop_next =
                        Self::control_law(self.codel.drop_next, c.interval, self.codel.count);
                }
            }
        } else if ok {
            if markable(&p) {
                p = p.map(|p| Queued {
                    ecn: p.ecn.marked(),
                    ..p
                });
            } else {
                dropped.push(p.expect("a packet to drop").id);
                (p, _) = self.codel_dodequeue(now, c);
            }
            self.codel.dropping = true;
            let delta = self.codel.count.saturating_sub(self.codel.last_count);
            self.codel.count = 1;
            if delta > 1 && now.saturating_duration_since(self.codel.drop_next) < c.interval * 16 {
                self.codel.count = delta;
            }
            self.codel.drop_next = Self::control_law(now, c.interval, self.codel.count);
            self.codel.last_count = self.codel.count;
        }
        p
    }

    fn pie_qdelay(&self, now: Instant) -> Duration {
        self.fifo
            .items
            .front()
            .map_or(Duration::ZERO, |h| now - h.enqueued)
    }

    /// RFC 8033 §4.2 `calculate_drop_prob`, run for every `t_update` period elapsed.
    fn pie_update(&mut self, now: Instant, params: PieParams) {
        let mut rounds = 0;
        while now >= self.pie.next_update {
            let qdelay = self.pie_qdelay(now);
            let s = &mut self.pie;
            let cur = qdelay.as_secs_f64();
            let old = s.qdelay_old.as_secs_f64();
            let target = params.target.as_secs_f64();
            let mut p = 0.125 * (cur - target) + 1.25 * (cur - old);
            let scale = match s.drop_prob {
                x if x < 0.000_001 => 1.0 / 2048.0,
                x if x < 0.000_01 => 1.0 / 512.0,
                x if x < 0.000_1 => 1.0 / 128.0,
                x if x < 0.001 => 1.0 / 32.0,
                x if x < 0.01 => 1.0 / 8.0,
                x if x < 0.1 => 1.0 / 2.0,
                _ => 1.0,
            };
            p *= scale;
            if s.drop_prob >= 0.1 && p > 0.02 {
                p = 0.02;
            }
            s.drop_prob = (s.drop_prob + p).clamp(0.0, 1.0);
            if qdelay.is_zero() && s.qdelay_old.is_zero() {
                s.drop_prob *= 0.98;
            }
            s.burst_allowance = s.burst_allowance.saturating_sub(params.t_update);
            if s.drop_prob == 0.0 && cur < target / 2.0 && old < target / 2.0 {
                s.burst_allowance = params.max_burst;
            }
            s.qdelay_old = qdelay;
            s.next_update += params.t_update;
            rounds += 1;
            if rounds > 64 {
                // Idle for long: the state has converged; skip ahead.
                let periods = (now - s.next_update).as_nanos() / params.t_update.as_nanos() + 1;
                s.next_update += params.t_update * periods;
            }
        }
    }

    /// RFC 8033 §4.1 `drop_early`.
    fn pie_drop_early(&self, params: PieParams, rng: &mut impl Rng) -> bool {
        let s = &self.pie;
        if !s.burst_allowance.is_zero() {
            return false;
        }
        if s.qdelay_old < params.target / 2 && s.drop_prob < 0.2 {
            return false;
        }
        if self.fifo.bytes <= 2 * self.mtu {
            return false;
        }
        rng.random::<f64>() < s.drop_prob
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use wisp_core::time::ms;

    fn q(id: u32, t: Instant) -> Queued {
        Queued {
            id,
            size: 1500,
            enqueued: t,
            ecn: Ecn::NotEct,
        }
    }

    #[test]
    fn spec_parsing_and_display() {
        assert_eq!(
            "infinite".parse::<QueueSpec>().unwrap(),
            QueueSpec::Infinite
        );
        let c: QueueSpec = "codel".parse().unwrap();
        assert_eq!(c, QueueSpec::Codel(CodelParams::default()));
        assert_eq!(c.to_string(), "codel:target=5ms,interval=100ms");
        let c: QueueSpec = "codel:target=10,interval=0.2s,packets=100".parse().unwrap();
        assert_eq!(
            c.to_string(),
            "codel:target=10ms,interval=200ms,packets=100"
        );
        assert_eq!(c.to_string().parse::<QueueSpec>().unwrap(), c);
        let d: QueueSpec = "droptail:packets=10,bytes=9000".parse().unwrap();
        assert_eq!(
            d,
            QueueSpec::DropTail(Limits {
                packets: Some(10),
                bytes: Some(9000)
            })
        );
        for bad in [
            "fifo",
            "droptail",
            "droptail:packets=0",
            "droptail:size=3",
            "codel:target=x",
            "infinite:packets=3",
            "pie:burst=0",
            "codel:target=5ms,target=6ms",
            "droptail:packets=10,packets=20",
        ] {
            assert!(bad.parse::<QueueSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn droptail_and_drophead() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut dropped = vec![];
        let mut t = Queue::new("droptail:packets=2".parse().unwrap());
        let mut h = Queue::new("drophead:packets=2".parse().unwrap());
        for i in 0..4 {
            t.enqueue(Instant::ZERO, q(i, Instant::ZERO), &mut rng, &mut dropped);
        }
        assert_eq!(dropped, [2, 3]);
        dropped.clear();
        for i in 0..4 {
            h.enqueue(Instant::ZERO, q(i, Instant::ZERO), &mut rng, &mut dropped);
        }
        assert_eq!(dropped, [0, 1]);
        assert_eq!(
            h.dequeue(Instant::ZERO, &mut rng, &mut dropped).unwrap().id,
            2
        );
    }

    #[test]
    fn codel_drops_a_standing_queue_and_not_a_short_one() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut queue = Queue::new(QueueSpec::Codel(CodelParams::default()));
        let mut dropped = vec![];
        // Arrivals at 2 packets/ms, departures at 1/ms: the queue (and sojourn) grows.
        let mut id = 0;
        for now_ms in 0..300u64 {
            let now = Instant::from_millis(now_ms);
            for _ in 0..2 {
                queue.enqueue(now, q(id, now), &mut rng, &mut dropped);
                id += 1;
            }
            queue.dequeue(now, &mut rng, &mut dropped);
        }
        assert!(!dropped.is_empty(), "CoDel never dropped a growing queue");
        // The first drop comes one interval after the sojourn first exceeded the target.
        let mut short = Queue::new(QueueSpec::Codel(CodelParams::default()));
        let mut none = vec![];
        for now_ms in 0..300u64 {
            let now = Instant::from_millis(now_ms);
            short.enqueue(now, q(now_ms as u32, now), &mut rng, &mut none);
            short.dequeue(now + ms(3), &mut rng, &mut none);
        }
        assert!(none.is_empty());
    }

    #[test]
    fn pie_drops_under_sustained_overload() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut queue = Queue::new(QueueSpec::Pie(PieParams::default()));
        let mut dropped = vec![];
        let mut id = 0;
        for now_ms in 0..3000u64 {
            let now = Instant::from_millis(now_ms);
            for _ in 0..2 {
                queue.enqueue(now, q(id, now), &mut rng, &mut dropped);
                id += 1;
            }
            queue.dequeue(now, &mut rng, &mut dropped);
        }
        assert!(dropped.len() > 500, "PIE dropped only {}", dropped.len());
        // The queue is held near the target (15 ms at 1 packet/ms), not at 3000 packets.
        assert!(queue.len() < 200, "queue {}", queue.len());
    }

    fn qe(id: u32, t: Instant, ecn: Ecn) -> Queued {
        Queued { ecn, ..q(id, t) }
    }

    #[test]
    fn marking_specs_parse_and_print() {
        let s: QueueSpec = "step".parse().unwrap();
        assert_eq!(s, QueueSpec::Step(StepParams::default()));
        assert_eq!(s.to_string(), "step:threshold=1ms");
        let s: QueueSpec = "step:threshold=2.5,packets=50".parse().unwrap();
        assert_eq!(s.to_string(), "step:threshold=2.5ms,packets=50");
        let c: QueueSpec = "codel:ecn=on".parse().unwrap();
        assert_eq!(c.to_string(), "codel:target=5ms,interval=100ms,ecn=on");
        assert_eq!(
            "codel:ecn=off".parse::<QueueSpec>().unwrap(),
            "codel".parse().unwrap()
        );
        let p: QueueSpec = "pie:ecn=true".parse().unwrap();
        assert_eq!(
            p.to_string(),
            "pie:target=15ms,tupdate=15ms,burst=150ms,ecn=on"
        );
        let d: QueueSpec = "dualpi2".parse().unwrap();
        assert_eq!(d, QueueSpec::DualPi2(DualPi2Params::default()));
        assert_eq!(
            d.to_string(),
            "dualpi2:target=15ms,tupdate=15ms,alpha=0.15,beta=3,k=2,minth=0.8ms,range=0.4ms,tshift=50ms"
        );
        let linux: QueueSpec = "dualpi2:tupdate=16ms,alpha=0.16,beta=3.2,range=0,bytes=90000"
            .parse()
            .unwrap();
        for spec in [s, c, p, d, linux] {
            assert_eq!(spec.to_string().parse::<QueueSpec>().unwrap(), spec);
        }
        for bad in [
            "step:threshold=0",
            "step:ecn=on",
            "codel:ecn=maybe",
            "droptail:packets=5,ecn=on",
            "dualpi2:alpha=0",
            "dualpi2:k=-1",
            "dualpi2:beta=nan",
            "dualpi2:minth=0",
        ] {
            assert!(bad.parse::<QueueSpec>().is_err(), "{bad}");
        }
    }

    /// The step marker marks an ECT packet whose sojourn is at least the threshold (1 ms: at
    /// 1 ms exactly, not at 1 ms − 1 ns), leaves Not-ECT and CE as they are, and drops nothing.
    #[test]
    fn step_marks_only_ect_from_the_threshold() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut dropped = vec![];
        let mut queue = Queue::new("step:threshold=1ms".parse().unwrap());
        let t1 = Instant::ZERO + ms(1);
        let cases = [
            (Ecn::Ect0, t1, Ecn::Ce),
            (Ecn::Ect1, t1, Ecn::Ce),
            (Ecn::NotEct, t1, Ecn::NotEct),
            (Ecn::Ce, t1, Ecn::Ce),
            (Ecn::Ect0, t1 - Duration::from_nanos(1), Ecn::Ect0),
            (Ecn::Ect1, Instant::ZERO, Ecn::Ect1),
        ];
        for (i, &(ecn, at, want)) in cases.iter().enumerate() {
            queue.enqueue(
                Instant::ZERO,
                qe(i as u32, Instant::ZERO, ecn),
                &mut rng,
                &mut dropped,
            );
            let p = queue.dequeue(at, &mut rng, &mut dropped).unwrap();
            assert_eq!(p.ecn, want, "case {i}: {ecn:?} after {at:?}");
        }
        assert!(dropped.is_empty());
        // Its tail-drop limit still applies.
        let mut small = Queue::new("step:threshold=1ms,packets=1".parse().unwrap());
        for i in 0..3 {
            small.enqueue(
                Instant::ZERO,
                qe(i, Instant::ZERO, Ecn::Ect1),
                &mut rng,
                &mut dropped,
            );
        }
        assert_eq!(dropped, [1, 2]);
    }

    /// CoDel's growing queue (2 arrivals per ms, 1 departure) with `ecn=on`: ECT packets are
    /// marked where they would have been dropped — none dropped, as many marked as the
    /// dropping run dropped packets, at least — while Not-ECT ones are dropped exactly as
    /// without `ecn`.
    #[test]
    fn codel_with_ecn_marks_ect_instead_of_dropping() {
        let run = |spec: &str, ecn: Ecn| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
            let mut queue = Queue::new(spec.parse().unwrap());
            let (mut dropped, mut marked, mut id) = (vec![], 0, 0);
            for now_ms in 0..300u64 {
                let now = Instant::from_millis(now_ms);
                for _ in 0..2 {
                    queue.enqueue(now, qe(id, now, ecn), &mut rng, &mut dropped);
                    id += 1;
                }
                if let Some(p) = queue.dequeue(now, &mut rng, &mut dropped) {
                    marked += u32::from(p.ecn == Ecn::Ce && ecn != Ecn::Ce);
                }
            }
            (dropped, marked)
        };
        let (plain, _) = run("codel", Ecn::Ect0);
        assert!(!plain.is_empty());
        let (dropped, marked) = run("codel:ecn=on", Ecn::Ect0);
        assert!(dropped.is_empty(), "{dropped:?}");
        assert!(
            marked as usize >= plain.len(),
            "{marked} marks, {} drops",
            plain.len()
        );
        assert_eq!(run("codel:ecn=on", Ecn::NotEct), (plain.clone(), 0));
        assert_eq!(run("codel", Ecn::Ect1), (plain, 0));
    }

    /// PIE with `ecn=on` marks an ECT arrival it would drop while its drop probability is at
    /// most 10 %, and drops it above (§5.1). Under an unresponsive overload (11 arrivals per 10
    /// departures) marks do not shed load, so the probability climbs past 10 % and drops
    /// resume: each early drop and mark is checked against the probability it was decided at.
    #[test]
    fn pie_with_ecn_marks_below_the_threshold_and_drops_above() {
        let run = |spec: &str, ecn: Ecn| {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
            let mut queue = Queue::new(spec.parse().unwrap());
            // (marks, drops) at a probability of at most 10 %, drops above.
            let (mut low, mut high_drops, mut id) = ((0, 0), 0, 0);
            let mut dropped = vec![];
            for now_ms in 0..20_000u64 {
                let now = Instant::from_millis(now_ms);
                let n = if now_ms % 10 == 0 { 2 } else { 1 };
                for _ in 0..n {
                    queue.enqueue(now, qe(id, now, ecn), &mut rng, &mut dropped);
                    let p = queue.pie.drop_prob;
                    let was_dropped = dropped.last() == Some(&id);
                    let was_marked = queue
                        .fifo
                        .items
                        .back()
                        .is_some_and(|b| b.id == id && b.ecn == Ecn::Ce);
                    if p <= PIE_ECN_THRESHOLD {
                        low.0 += u32::from(was_marked);
                        low.1 += u32::from(was_dropped);
                    } else {
                        assert!(!was_marked, "marked at p = {p}");
                        high_drops += u32::from(was_dropped);
                    }
                    id += 1;
                }
                queue.dequeue(now, &mut rng, &mut dropped);
            }
            (low, high_drops)
        };
        let ((marks, low_drops), _) = run("pie", Ecn::Ect0);
        assert_eq!(marks, 0);
        assert!(low_drops > 100, "{low_drops} drops at p ≤ 10 % without ECN");
        let ((marks, low_drops), high_drops) = run("pie:ecn=on", Ecn::Ect0);
        assert!(marks > 100, "{marks} marks");
        assert_eq!(low_drops, 0, "ECT dropped at p ≤ 10 %");
        assert!(high_drops > 100, "{high_drops} drops above 10 %");
        assert_eq!(run("pie:ecn=on", Ecn::NotEct), run("pie", Ecn::NotEct));
    }
}
