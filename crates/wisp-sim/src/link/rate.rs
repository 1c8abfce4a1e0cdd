//! Rate links: `const:RATE` and `steps:RATE@T,…`, and the piecewise-constant rate schedules
//! they are — `(start, rate)` steps, each rate holding until the next step's start — with how
//! such a schedule serves bytes, which the outage link ([`super::outage`]) and the mobile
//! profiles' bottleneck ([`super::mobile`]) share.
//!
//! **Rate semantics**: a serialiser at the current rate; a packet of *s* bytes takes
//! *8s/rate*, integrated across rate changes; a rate of 0 holds the packet.

use super::contract::{LinkKind, LinkName, LinkProcess, Serve, Service};
use super::{LinkSpec, check_link_rate};
use std::sync::Arc;
use wisp_core::units::{ParseUnitError, parse_duration};
use wisp_core::{Bitrate, Duration, Instant};

/// ∫ rate dt over [lo, hi) in bits.
pub(super) fn rate_integral_bits(steps: &[(Instant, Bitrate)], lo: Instant, hi: Instant) -> f64 {
    let mut bits = 0.0;
    for (i, &(start, rate)) in steps.iter().enumerate() {
        let end = steps.get(i + 1).map_or(Instant::MAX, |s| s.0);
        let a = start.max(lo);
        let b = end.min(hi);
        if b > a {
            bits += rate.bps() as f64 * (b - a).as_secs_f64();
        }
    }
    bits
}

/// The earliest instant at or after `t` a piecewise-constant rate serves.
pub(super) fn rate_next_start(steps: &[(Instant, Bitrate)], t: Instant) -> Option<Instant> {
    let i = steps.partition_point(|s| s.0 <= t).saturating_sub(1);
    if steps[i].1 > Bitrate::ZERO && steps[i].0 <= t {
        return Some(t);
    }
    steps[i..]
        .iter()
        .find(|s| s.0 > t && s.1 > Bitrate::ZERO)
        .map(|s| s.0)
}

/// When `size` bytes started at `t` finish at a piecewise-constant rate (`Instant::MAX`: never).
pub(super) fn rate_serve(steps: &[(Instant, Bitrate)], t: Instant, size: u64) -> Instant {
    let mut bits = size as u128 * 8;
    let mut now = t;
    let mut i = steps.partition_point(|s| s.0 <= now).saturating_sub(1);
    loop {
        let rate = steps[i].1.bps() as u128;
        let end = steps.get(i + 1).map_or(Instant::MAX, |s| s.0);
        if rate > 0 {
            let need_ns = (bits * 1_000_000_000).div_ceil(rate);
            let avail_ns = (end - now).as_nanos() as u128;
            if need_ns <= avail_ns {
                return now + Duration::from_nanos(need_ns as u64);
            }
            bits -= avail_ns * rate / 1_000_000_000;
        }
        if end == Instant::MAX {
            return Instant::MAX;
        }
        now = end;
        i += 1;
    }
}

/// `const:RATE`, `steps:RATE@T,…`.
#[derive(Clone, Copy, Debug)]
pub struct RateKind;

impl LinkKind for RateKind {
    fn names(&self) -> &'static [LinkName] {
        &[
            LinkName {
                name: "const",
                usage: "const:RATE",
                help: "a constant-rate serialiser, e.g. const:12mbps",
            },
            LinkName {
                name: "steps",
                usage: "steps:RATE@T,…",
                help: "a piecewise-constant rate, e.g. steps:1mbps@0,2.5mbps@25s,0.6mbps@50s",
            },
        ]
    }

    fn parse(&self, name: &str, args: Option<&str>) -> Result<LinkSpec, String> {
        let arg = args.unwrap_or_default();
        if name == "const" {
            let r: Bitrate = arg.parse().map_err(|e: ParseUnitError| e.0)?;
            if r == Bitrate::ZERO {
                return Err("the rate must be positive".into());
            }
            return check_link_rate(r).map(LinkSpec::Const);
        }
        let mut steps = Vec::new();
        for item in arg.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (r, t) = item
                .split_once('@')
                .ok_or_else(|| format!("step `{item}` is not RATE@TIME"))?;
            let r: Bitrate = r.parse().map_err(|e: ParseUnitError| e.0)?;
            let r = check_link_rate(r)?;
            let t = parse_duration(t).map_err(|e| e.0)?;
            if let Some(&(prev, _)) = steps.last() {
                if t <= prev {
                    return Err(format!("step times must increase (`{item}`)"));
                }
            } else if t != Duration::ZERO {
                return Err("the first step must start at 0".into());
            }
            steps.push((t, r));
        }
        if steps.is_empty() {
            return Err("no steps".into());
        }
        Ok(LinkSpec::Steps(steps))
    }
}

/// A piecewise-constant rate: `const:` (one step) or `steps:`.
#[derive(Clone, Debug, PartialEq)]
pub struct RateLink {
    /// `(start, rate)`, the first at 0.
    pub steps: Arc<Vec<(Instant, Bitrate)>>,
}

impl RateLink {
    /// `rate` from time 0 on.
    pub fn constant(rate: Bitrate) -> Self {
        RateLink {
            steps: Arc::new(vec![(Instant::ZERO, rate)]),
        }
    }

    /// `steps:`'s steps, `(start, rate)` from 0.
    pub fn from_steps(steps: &[(Duration, Bitrate)]) -> Self {
        RateLink {
            steps: Arc::new(steps.iter().map(|&(t, r)| (Instant::ZERO + t, r)).collect()),
        }
    }
}

impl LinkProcess for RateLink {
    type Server = RateServer;
    fn name(&self) -> String {
        let steps = &self.steps;
        if steps.len() == 1 {
            return format!("const:{}", steps[0].1);
        }
        let s: Vec<String> = steps
            .iter()
            .map(|(t, r)| format!("{r}@{}s", t.as_secs_f64()))
            .collect();
        format!("steps:{}", s.join(","))
    }
    /// The last step's start plus the length of the step before it (60 s for a constant link).
    fn default_duration(&self) -> Duration {
        let steps = &self.steps;
        let n = steps.len();
        if n < 2 {
            return Duration::from_secs(60);
        }
        let last = steps[n - 1].0 - Instant::ZERO;
        last + (steps[n - 1].0 - steps[n - 2].0)
    }
    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
        rate_integral_bits(&self.steps, from, to) / 8.0
    }
    fn server(&self, _seed: u64) -> RateServer {
        RateServer::new(&self.steps)
    }
}

/// A serialiser at a piecewise-constant rate.
#[derive(Debug, Clone)]
pub struct RateServer {
    steps: Arc<Vec<(Instant, Bitrate)>>,
}

impl RateServer {
    pub(super) fn new(steps: &Arc<Vec<(Instant, Bitrate)>>) -> Self {
        RateServer {
            steps: Arc::clone(steps),
        }
    }
}

impl Serve for RateServer {
    fn next_start(&mut self, t: Instant) -> Option<Instant> {
        rate_next_start(&self.steps, t)
    }
    fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        Service::at(rate_serve(&self.steps, t, size))
    }
}
