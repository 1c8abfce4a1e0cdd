//! Bottleneck queues: infinite, drop-tail, drop-head, CoDel (RFC 8289) and PIE (RFC 8033).
//!
//! `--queue SPEC`:
//!
//! | spec | behaviour |
//! |---|---|
//! | `infinite` (default) | unbounded FIFO (the Sprout paper's setting) |
//! | `droptail:packets=N[,bytes=B]` | reject an arrival that would exceed either limit |
//! | `drophead:packets=N[,bytes=B]` | accept, then drop from the head until within the limits |
//! | `codel[:target=5ms,interval=100ms,packets=N,bytes=B]` | RFC 8289 CoDel (drops the head at dequeue); optional tail-drop limits |
//! | `pie[:target=15ms,tupdate=15ms,burst=150ms,packets=N,bytes=B]` | RFC 8033 PIE (early drop at enqueue) |
//!
//! Times accept units (`5ms`, `0.1s`); a bare number is milliseconds, as in Mahimahi's queue
//! arguments. Limits count the packets waiting, not the one being transmitted.
//!
//! Deviations: PIE measures the queueing delay from the head packet's timestamp (RFC 8033 §5.2
//! permits this instead of the departure-rate estimate) and does not de-randomise drops (§5.1's
//! optional refinement); its periodic update runs lazily at the next enqueue or dequeue.

use rand::{Rng, RngExt};
use std::collections::VecDeque;
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
    pub limits: Limits,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
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
    pub limits: Limits,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            max_burst: Duration::from_millis(150),
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
}

/// A bad `--queue` spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid queue `{spec}`: {message}")]
pub struct QueueSpecError {
    pub spec: String,
    pub message: String,
}

impl FromStr for QueueSpec {
    type Err = QueueSpecError;
    fn from_str(s: &str) -> Result<Self, QueueSpecError> {
        let err = |m: String| QueueSpecError {
            spec: s.to_string(),
            message: m,
        };
        let (kind, args) = s.trim().split_once(':').unwrap_or((s.trim(), ""));
        let kv = key_values(args).map_err(|e| match e {
            ItemError::NotKeyValue(item) => err(format!("`{item}` is not KEY=VALUE")),
            ItemError::GivenTwice(k) => err(format!("`{k}` given twice")),
        })?;
        let allowed: &[&str] = match kind {
            "infinite" => &[],
            "droptail" | "drophead" => &["packets", "bytes"],
            "codel" => &["target", "interval", "packets", "bytes"],
            "pie" => &["target", "tupdate", "burst", "packets", "bytes"],
            _ => {
                return Err(err(format!(
                    "unknown queue `{kind}` (known: infinite, droptail, drophead, codel, pie)"
                )));
            }
        };
        for (k, _) in &kv {
            if !allowed.contains(k) {
                let list = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    allowed.join(", ")
                };
                return Err(err(format!(
                    "`{kind}` takes no parameter `{k}` (accepted: {list})"
                )));
            }
        }
        let get = |k: &str| kv.iter().find(|&&(key, _)| key == k).map(|&(_, v)| v);
        let count = |k: &str| -> Result<Option<u64>, QueueSpecError> {
            get(k)
                .map(|v| match v.parse::<u64>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(err(format!("`{k}` must be a positive integer, not `{v}`"))),
                })
                .transpose()
        };
        let time = |k: &str, default: Duration| -> Result<Duration, QueueSpecError> {
            match get(k) {
                None => Ok(default),
                Some(v) => {
                    let d = if v.chars().all(|c| c.is_ascii_digit() || c == '.') {
                        parse_duration(&format!("{v}ms"))
                    } else {
                        parse_duration(v)
                    }
                    .map_err(|e| err(e.0))?;
                    if d.is_zero() {
                        return Err(err(format!("`{k}` must be positive")));
                    }
                    Ok(d)
                }
            }
        };
        let limits = Limits {
            packets: count("packets")?,
            bytes: count("bytes")?,
        };
        Ok(match kind {
            "infinite" => QueueSpec::Infinite,
            "droptail" | "drophead" => {
                if limits == Limits::default() {
                    return Err(err(format!("`{kind}` needs `packets=N` and/or `bytes=B`")));
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
                    target: time("target", d.target)?,
                    interval: time("interval", d.interval)?,
                    limits,
                })
            }
            _ => {
                let d = PieParams::default();
                QueueSpec::Pie(PieParams {
                    target: time("target", d.target)?,
                    t_update: time("tupdate", d.t_update)?,
                    max_burst: time("burst", d.max_burst)?,
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
        let (kind, args) = match self {
            QueueSpec::Infinite => ("infinite", vec![]),
            QueueSpec::DropTail(l) => ("droptail", lim(l)),
            QueueSpec::DropHead(l) => ("drophead", lim(l)),
            QueueSpec::Codel(c) => {
                let mut v = vec![
                    format!("target={}", ms(c.target)),
                    format!("interval={}", ms(c.interval)),
                ];
                v.extend(lim(&c.limits));
                ("codel", v)
            }
            QueueSpec::Pie(p) => {
                let mut v = vec![
                    format!("target={}", ms(p.target)),
                    format!("tupdate={}", ms(p.t_update)),
                    format!("burst={}", ms(p.max_burst)),
                ];
                v.extend(lim(&p.limits));
                ("pie", v)
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
    items: VecDeque<Queued>,
    bytes: u64,
    codel: CodelState,
    pie: PieState,
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
            items: VecDeque::new(),
            bytes: 0,
            codel: CodelState::default(),
            pie,
            mtu: 1500,
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Offers a packet; ids of packets dropped (the arrival itself, or others for drop-head) are
    /// pushed to `dropped`.
    pub fn enqueue(&mut self, now: Instant, p: Queued, rng: &mut impl Rng, dropped: &mut Vec<u32>) {
        let size = u64::from(p.size);
        match self.spec {
            QueueSpec::Infinite => {}
            QueueSpec::DropTail(l) | QueueSpec::Codel(CodelParams { limits: l, .. }) => {
                if l.exceeded(self.items.len() as u64 + 1, self.bytes + size) {
                    dropped.push(p.id);
                    return;
                }
            }
            QueueSpec::DropHead(l) => {
                self.push(p);
                while l.exceeded(self.items.len() as u64, self.bytes) {
                    match self.pop() {
                        Some(h) => dropped.push(h.id),
                        None => break,
                    }
                }
                return;
            }
            QueueSpec::Pie(params) => {
                if params
                    .limits
                    .exceeded(self.items.len() as u64 + 1, self.bytes + size)
                {
                    dropped.push(p.id);
                    return;
                }
                self.pie_update(now, params);
                if self.pie_drop_early(params, rng) {
                    dropped.push(p.id);
                    return;
                }
            }
        }
        self.push(p);
    }

    /// Takes the head packet for transmission at `now`; ids the discipline drops on the way are
    /// pushed to `dropped`.
    pub fn dequeue(&mut self, now: Instant, dropped: &mut Vec<u32>) -> Option<Queued> {
        match self.spec {
            QueueSpec::Codel(c) => self.codel_dequeue(now, c, dropped),
            QueueSpec::Pie(params) => {
                self.pie_update(now, params);
                self.pop()
            }
            _ => self.pop(),
        }
    }

    fn push(&mut self, p: Queued) {
        self.bytes += u64::from(p.size);
        self.items.push_back(p);
    }

    fn pop(&mut self) -> Option<Queued> {
        let p = self.items.pop_front()?;
        self.bytes -= u64::from(p.size);
        Some(p)
    }

    /// RFC 8289 §5.5 `dodequeue`: the head packet and whether CoDel may drop it.
    fn codel_dodequeue(&mut self, now: Instant, c: CodelParams) -> (Option<Queued>, bool) {
        let Some(p) = self.pop() else {
            self.codel.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - p.enqueued;
        let mut ok_to_drop = false;
        if sojourn < c.target || self.bytes <= self.mtu {
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
        if self.codel.dropping {
            if !ok {
                self.codel.dropping = false;
            }
            while self.codel.dropping && now >= self.codel.drop_next {
                dropped.push(p.expect("a packet while dropping").id);
                self.codel.count += 1;
                (p, ok) = self.codel_dodequeue(now, c);
                if !ok {
                    self.codel.dropping = false;
                } else {
                    self.codel.drop_next =
                        Self::control_law(self.codel.drop_next, c.interval, self.codel.count);
                }
            }
        } else if ok {
            dropped.push(p.expect("a packet to drop").id);
            (p, _) = self.codel_dodequeue(now, c);
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
        self.items
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
        if self.bytes <= 2 * self.mtu {
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
        assert_eq!(h.dequeue(Instant::ZERO, &mut dropped).unwrap().id, 2);
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
            queue.dequeue(now, &mut dropped);
        }
        assert!(!dropped.is_empty(), "CoDel never dropped a growing queue");
        // The first drop comes one interval after the sojourn first exceeded the target.
        let mut short = Queue::new(QueueSpec::Codel(CodelParams::default()));
        let mut none = vec![];
        for now_ms in 0..300u64 {
            let now = Instant::from_millis(now_ms);
            short.enqueue(now, q(now_ms as u32, now), &mut rng, &mut none);
            short.dequeue(now + ms(3), &mut none);
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
            queue.dequeue(now, &mut dropped);
        }
        assert!(dropped.len() > 500, "PIE dropped only {}", dropped.len());
        // The queue is held near the target (15 ms at 1 packet/ms), not at 3000 packets.
        assert!(queue.len() < 200, "queue {}", queue.len());
    }
}
