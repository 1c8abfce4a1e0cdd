//! A link that changes mid-run, `handover:SPEC+SPEC@T[+SPEC@T…]`: one link, then another from
//! time T on, each on its own clock.

use super::contract::{LinkKind, LinkName, LinkProcess, Serve, Service, empty_bins};
use super::{LinkModel, LinkSpec, LinkSpecError, Server};
use crate::trace::TraceError;
use wisp_core::units::parse_duration;
use wisp_core::{Duration, Instant};

/// `handover:SPEC+SPEC@T[+SPEC@T…]`.
#[derive(Clone, Copy, Debug)]
pub struct HandoverKind;

impl LinkKind for HandoverKind {
    fn names(&self) -> &'static [LinkName] {
        &[LinkName {
            name: "handover",
            usage: "handover:SPEC+SPEC@T",
            help: "one link, then another from time T on its own clock, e.g. \
                   handover:3g-up+wimax-down@120s",
        }]
    }

    /// `SPEC+SPEC@T+…`: the first segment starts at 0, each later one at the time after its
    /// last `@`.
    fn parse(&self, _name: &str, args: Option<&str>) -> Result<LinkSpec, String> {
        let mut segments: Vec<(Duration, LinkSpec)> = vec![];
        for (i, part) in args.unwrap_or_default().split('+').enumerate() {
            let part = part.trim();
            let (spec, at) = if i == 0 {
                (part, Duration::ZERO)
            } else {
                let (spec, t) = part
                    .rsplit_once('@')
                    .ok_or_else(|| format!("segment `{part}` needs a start time, SPEC@TIME"))?;
                (spec, parse_duration(t).map_err(|e| e.0)?)
            };
            if let Some(&(prev, _)) = segments.last() {
                if at <= prev {
                    return Err(format!("segment start times must increase (`{part}`)"));
                }
            }
            let link: LinkSpec = spec.parse().map_err(|e: LinkSpecError| e.message)?;
            if matches!(link, LinkSpec::Handover(_)) {
                return Err("a handover segment cannot itself be a handover".into());
            }
            if link.medium().is_some() {
                return Err("a handover segment cannot be the wifi medium".into());
            }
            segments.push((at, link));
        }
        if segments.len() < 2 {
            return Err("a handover needs at least two links, SPEC+SPEC@TIME".into());
        }
        Ok(LinkSpec::Handover(segments))
    }
}

/// Loads each segment of a handover spec.
pub(super) fn load(segments: &[(Duration, LinkSpec)]) -> Result<HandoverLink, TraceError> {
    let mut out = Vec::with_capacity(segments.len());
    for (at, spec) in segments {
        out.push((Instant::ZERO + *at, spec.load()?));
    }
    Ok(HandoverLink { segments: out })
}

/// A link that changes mid-run (`handover:SPEC+SPEC@T`): segment *i* serves from its start
/// until the next segment's start, on its own clock (its time 0 is its start, so a trace starts
/// from its beginning at the handover). The queue is kept across a handover (the old network
/// forwards what it holds); a packet in service when the handover comes completes on the old
/// link.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoverLink {
    /// `(start, link)`, the first at 0.
    pub segments: Vec<(Instant, LinkModel)>,
}

impl HandoverLink {
    /// The starts of the segments.
    fn starts(&self) -> Starts {
        Starts(self.segments.iter().map(|s| s.0).collect())
    }
}

/// The starts of a handover's segments, the first at 0.
#[derive(Clone, Debug)]
struct Starts(Vec<Instant>);

impl Starts {
    /// The index of the segment active at `t`.
    fn active(&self, t: Instant) -> usize {
        self.0.partition_point(|&s| s <= t).saturating_sub(1)
    }

    /// The end of segment `i`.
    fn end(&self, i: usize) -> Instant {
        self.0.get(i + 1).copied().unwrap_or(Instant::MAX)
    }

    /// `t` on segment `i`'s clock.
    fn local(&self, i: usize, t: Instant) -> Instant {
        Instant::ZERO + (t - self.0[i])
    }

    /// Segment `i`'s `t` on the run's clock.
    fn global(&self, i: usize, t: Instant) -> Instant {
        if t == Instant::MAX {
            return t;
        }
        self.0[i] + (t - Instant::ZERO)
    }
}

impl LinkProcess for HandoverLink {
    type Server = HandoverServer;

    fn name(&self) -> String {
        let s: Vec<String> = self
            .segments
            .iter()
            .enumerate()
            .map(|(i, (t, l))| {
                if i == 0 {
                    l.name()
                } else {
                    format!("{}@{}s", l.name(), t.as_secs_f64())
                }
            })
            .collect();
        format!("handover:{}", s.join("+"))
    }

    /// The last segment's start plus the length of the segment before it.
    fn default_duration(&self) -> Duration {
        let n = self.segments.len();
        let last = self.segments[n - 1].0;
        (last - Instant::ZERO) + (last - self.segments[n - 2].0)
    }

    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
        self.capacity_bins(from, to, to - from).iter().sum()
    }

    /// Each segment's own bins, on its clock, aligned with the run's.
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        let mut out = empty_bins(from, to, bin);
        let starts = self.starts();
        for (i, (start, link)) in self.segments.iter().enumerate() {
            let (a, b) = (from.max(*start), to.min(starts.end(i)));
            if a >= b {
                continue;
            }
            let first = ((a - from).as_nanos() / bin.as_nanos()) as usize;
            let mut lo = a;
            for slot in out.iter_mut().skip(first) {
                let hi = (from + bin * ((lo - from).as_nanos() / bin.as_nanos() + 1)).min(b);
                *slot += link
                    .capacity_bins(starts.local(i, lo), starts.local(i, hi), hi - lo)
                    .iter()
                    .sum::<f64>();
                lo = hi;
                if lo >= b {
                    break;
                }
            }
        }
        out
    }

    fn server(&self, seed: u64) -> HandoverServer {
        HandoverServer {
            starts: self.starts(),
            servers: self
                .segments
                .iter()
                .enumerate()
                .map(|(i, (_, l))| {
                    l.server_seeded(crate::seed::mix(seed, &format!("handover/{i}")))
                })
                .collect(),
        }
    }
}

/// The server of a [`HandoverLink`]: each segment's own server on the segment's clock.
#[derive(Debug, Clone)]
pub struct HandoverServer {
    starts: Starts,
    servers: Vec<Server>,
}

impl Serve for HandoverServer {
    fn next_start(&mut self, mut t: Instant) -> Option<Instant> {
        loop {
            let i = self.starts.active(t);
            let end = self.starts.end(i);
            let local = self.starts.local(i, t);
            match self.servers[i]
                .next_start(local)
                .map(|l| self.starts.global(i, l))
            {
                Some(g) if g < end => return Some(g),
                _ if end == Instant::MAX => return None,
                _ => t = end,
            }
        }
    }

    fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        let i = self.starts.active(t);
        let local = self.starts.local(i, t);
        let s = self.servers[i].serve_packet(local, size);
        Service {
            done: self.starts.global(i, s.done),
            delivered: s.delivered.map(|d| self.starts.global(i, d)),
        }
    }

    fn discard_after(&self, now: Instant) -> Option<Duration> {
        self.servers[self.starts.active(now)].discard_after(now)
    }
}
