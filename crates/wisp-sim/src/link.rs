//! Link models: what `--link SPEC` names, and the bottleneck server that drains a queue.
//!
//! | spec | model |
//! |---|---|
//! | `trace:FILE` | Mahimahi trace replay (milliseconds; `.rx` files are nanoseconds) |
//! | `trace-ns:FILE` | a trace with nanosecond timestamps |
//! | `trace-packets:FILE` | a trace replayed with libwebrtc's semantics: one packet per line, whatever its size |
//! | `const:RATE` | a constant-rate serialiser, e.g. `const:12mbps` |
//! | `steps:RATE@T,RATE@T,…` | a piecewise-constant rate, e.g. `steps:1mbps@0,2.5mbps@25s,0.6mbps@50s` |
//! | `wifi-outage[:KEY=VALUE,…]` | a constant rate with Wi-Fi-like outages whose held packets leave as a burst ([`OutageSpec`]) |
//! | `3g-up`, `wimax-down`, `cable-up` `[:KEY=VALUE,…]` | mobile-broadband profiles with noise that does not depend on the sending rate ([`crate::mobile`]) |
//! | `handover:SPEC+SPEC@T[+SPEC@T…]` | one link, then another from time T on ([`HandoverLink`]) |
//! | `wifi[:KEY=VALUE,…]` | the 802.11 EDCA medium with contending stations ([`crate::wifi::link`]); run by the emulator and the engine's Wi-Fi hop, not by a [`Server`] |
//!
//! **Trace semantics** (Mahimahi `mm-link`, Cellsim): each opportunity credits `bytes_per_line`
//! (1500) bytes at its instant. The head of the queue is dequeued when its first byte is credited;
//! a packet larger than the credit left collects bytes over several opportunities; several small
//! packets may share one; credit left when the queue runs empty is wasted. A packet that reaches
//! the queue at the instant of an opportunity may use it (so the ideal sender never queues; this
//! is the one difference from `mm-link`, whose 1-ms timer makes the minimum delay 1 ms). The
//! departure is recorded at the instant of the opportunity that completes the packet.
//!
//! **Per-packet trace semantics** (`trace-packets`; libwebrtc's `TraceBasedDeliveryFilter`, used
//! by its `GoogleWifiTrace3Mbps` simulations): each line releases exactly one queued packet,
//! whatever its size; an unused line is wasted. Capacity figures credit
//! [`PACKET_TRACE_BYTES_PER_LINE`] per line (libwebrtc's rate counter credits 1240 bytes).
//!
//! **Rate semantics** (`const`, `steps`, `wifi-outage`): a serialiser at the current rate; a
//! packet of *s* bytes takes *8s/rate*, integrated across rate changes; a rate of 0 holds the
//! packet.

use crate::mobile::{MobileLink, MobileServer, MobileSpec, Service};
use crate::rate::{rate_integral_bits, rate_next_start, rate_serve};
use crate::trace::{Trace, TraceCursor, TraceError, TraceUnit};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use wisp_core::spec::{ItemError, key_values};
use wisp_core::units::parse_duration;
use wisp_core::{Bitrate, DataSize, Duration, Instant};

pub use crate::limits::{MAX_LINK_RATE, check_link_rate};

/// A link named on the command line, before any file is read.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkSpec {
    Trace {
        path: PathBuf,
        unit: TraceUnit,
    },
    /// A trace replayed one packet per line (libwebrtc's semantics).
    PacketTrace {
        path: PathBuf,
        unit: TraceUnit,
    },
    Const(Bitrate),
    /// `(start, rate)`, strictly increasing starts, the first at 0.
    Steps(Vec<(Duration, Bitrate)>),
    WifiOutage(OutageSpec),
    /// A mobile-broadband profile.
    Mobile(MobileSpec),
    /// `(start, link)`: strictly increasing starts, the first at 0.
    Handover(Vec<(Duration, LinkSpec)>),
    /// The 802.11 medium (`wifi:KEY=VALUE,…`), driven as a [`crate::wifi::link::WifiLink`].
    Wifi(crate::wifi::link::WifiSpec),
}

/// The synthetic Wi-Fi outage link (`wifi-outage[:KEY=VALUE,…]`): a constant `rate` interrupted
/// by outages. Outages start as a Poisson process with mean interval `every` between starts;
/// each lasts a length drawn uniformly from [0.5, 1.5]·`length`. During an outage the link
/// serves nothing (a packet in service is held too); when it ends, the link serves at `burst`
/// rate until it has made up the capacity the outage took (`rate` × its length, on top of the
/// base rate), so what the queue held leaves as a burst — as a Wi-Fi access point delivers its
/// backlog after a channel outage (ANRW'16 §4.1). The average capacity is `rate` whatever the
/// outages. `length=0` gives the same link without
/// outages (`const:RATE`). The outage times come from `seed` (not the run's seed), so two runs
/// over the same spec see the same outages.
///
/// Defaults, set from the gaps of `traces/wifi/google-wifi-3mbps.rx` (about one gap of 80 ms or
/// more per second, mean 109 ms; in the 20–50 ms after such a gap the trace delivers 1200-byte
/// packets at a median 5.2–5.3 Mbit/s, 10th–90th percentile 2.9–9.1, against its mean of
/// 3.0 Mbit/s): `rate=3mbps,every=1s,length=100ms,burst=5mbps,seed=1`. (The burst was
/// 12 Mbit/s before it was measured on the trace.)
#[derive(Clone, Debug, PartialEq)]
pub struct OutageSpec {
    pub rate: Bitrate,
    pub every: Duration,
    pub length: Duration,
    pub burst: Bitrate,
    pub seed: u64,
}

impl Default for OutageSpec {
    fn default() -> Self {
        OutageSpec {
            rate: Bitrate::from_mbps(3),
            every: Duration::from_secs(1),
            length: Duration::from_millis(100),
            burst: Bitrate::from_mbps(5),
            seed: 1,
        }
    }
}

/// How far ahead the outage link's schedule is generated; after it the link is constant.
pub const OUTAGE_HORIZON: Duration = Duration::from_secs(3600);

impl OutageSpec {
    fn parse(args: &str) -> Result<OutageSpec, String> {
        let mut o = OutageSpec::default();
        let items = key_values(args).map_err(|e| match e {
            ItemError::NotKeyValue(item) => format!("`{item}` is not KEY=VALUE"),
            ItemError::GivenTwice(k) => format!("`{k}` given twice"),
        })?;
        for (k, v) in items {
            let rate = |v: &str| -> Result<Bitrate, String> {
                let r: Bitrate = v
                    .parse()
                    .map_err(|e: wisp_core::units::ParseUnitError| e.0)?;
                if r == Bitrate::ZERO {
                    return Err(format!("`{k}` must be a positive rate"));
                }
                check_link_rate(r)
            };
            match k.trim() {
                "rate" => o.rate = rate(v)?,
                "burst" => o.burst = rate(v)?,
                "every" => {
                    o.every = parse_duration(v).map_err(|e| e.0)?;
                    if o.every.is_zero() {
                        return Err("`every` must be positive (use length=0 for no outages)".into());
                    }
                }
                "length" => o.length = parse_duration(v).map_err(|e| e.0)?,
                "seed" => {
                    o.seed = v
                        .trim()
                        .parse()
                        .map_err(|_| format!("`seed` must be a non-negative integer, not `{v}`"))?
                }
                other => {
                    return Err(format!(
                        "unknown parameter `{other}` (accepted: rate, every, length, burst, seed)"
                    ));
                }
            }
        }
        if o.burst <= o.rate {
            return Err("`burst` must be higher than `rate`".into());
        }
        Ok(o)
    }

    /// The canonical spec string.
    pub fn name(&self) -> String {
        format!(
            "wifi-outage:rate={},every={}s,length={}ms,burst={},seed={}",
            self.rate,
            self.every.as_secs_f64(),
            self.length.as_millis_f64(),
            self.burst,
            self.seed
        )
    }

    /// The rate schedule up to [`OUTAGE_HORIZON`]: `(start, rate)`, the first at 0.
    pub fn steps(&self) -> Vec<(Instant, Bitrate)> {
        use rand::RngExt;
        let mut steps = vec![(Instant::ZERO, self.rate)];
        if self.length.is_zero() {
            return steps;
        }
        let mut rng = crate::seed::stream(self.seed, "link/wifi-outage");
        let end = Instant::ZERO + OUTAGE_HORIZON;
        let mut t = Instant::ZERO;
        loop {
            // Exponential gap between outage starts; an outage never starts before the previous
            // burst has ended.
            let u: f64 = 1.0 - rng.random::<f64>();
            let start = (t + self.every.mul_f64(-u.ln())).max(steps.last().map_or(t, |s| s.0));
            let len = self.length.mul_f64(0.5 + rng.random::<f64>());
            if start + len >= end || len.is_zero() {
                break;
            }
            // The burst serves, on top of the base rate, what the outage withheld:
            // (burst − rate)·b = rate·len.
            let extra = (self.burst.bps() - self.rate.bps()) as f64;
            let burst_len = len.mul_f64(self.rate.bps() as f64 / extra);
            let stop = start + len;
            let resume = stop + burst_len.max(Duration::from_nanos(1));
            if let Some(last) = steps.last_mut() {
                if last.0 == start {
                    last.1 = Bitrate::ZERO;
                } else {
                    steps.push((start, Bitrate::ZERO));
                }
            }
            steps.push((stop, self.burst));
            steps.push((resume, self.rate));
            t = start;
        }
        steps
    }
}

/// A bad `--link` spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid link `{spec}`: {message}")]
pub struct LinkSpecError {
    pub spec: String,
    pub message: String,
}

impl FromStr for LinkSpec {
    type Err = LinkSpecError;
    fn from_str(s: &str) -> Result<Self, LinkSpecError> {
        let err = |m: String| LinkSpecError {
            spec: s.to_string(),
            message: m,
        };
        if s == "wifi-outage" {
            return Ok(LinkSpec::WifiOutage(OutageSpec::default()));
        }
        if s == "wifi" {
            return Ok(LinkSpec::Wifi(Default::default()));
        }
        let (name, args) = s.split_once(':').map_or((s, None), |(k, a)| (k, Some(a)));
        if let Some(m) = MobileSpec::parse(name, args) {
            return m.map(LinkSpec::Mobile).map_err(err);
        }
        let (kind, arg) = s.split_once(':').ok_or_else(|| {
            err(
                "expected KIND:ARGS, one of trace:FILE, trace-ns:FILE, trace-packets:FILE, const:RATE, steps:RATE@T,…, wifi-outage[:…], wifi[:…], 3g-up[:…], wimax-down[:…], cable-up[:…], handover:SPEC+SPEC@T"
                    .into(),
            )
        })?;
        match kind {
            "wifi" => arg
                .parse()
                .map(LinkSpec::Wifi)
                .map_err(|e: crate::wifi::link::WifiSpecError| err(e.to_string())),
            "handover" => parse_handover(arg).map_err(err),
            "trace-packets" => {
                let path = PathBuf::from(arg);
                let unit = TraceUnit::for_path(&path);
                Ok(LinkSpec::PacketTrace { path, unit })
            }
            "wifi-outage" => OutageSpec::parse(arg)
                .map(LinkSpec::WifiOutage)
                .map_err(err),
            "trace" => {
                let path = PathBuf::from(arg);
                let unit = TraceUnit::for_path(&path);
                Ok(LinkSpec::Trace { path, unit })
            }
            "trace-ns" => Ok(LinkSpec::Trace {
                path: PathBuf::from(arg),
                unit: TraceUnit::Nanos,
            }),
            "const" => {
                let r: Bitrate = arg
                    .parse()
                    .map_err(|e: wisp_core::units::ParseUnitError| err(e.0))?;
                if r == Bitrate::ZERO {
                    return Err(err("the rate must be positive".into()));
                }
                check_link_rate(r).map(LinkSpec::Const).map_err(err)
            }
            "steps" => {
                let mut steps = Vec::new();
                for item in arg.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                    let (r, t) = item
                        .split_once('@')
                        .ok_or_else(|| err(format!("step `{item}` is not RATE@TIME")))?;
                    let r: Bitrate = r
                        .parse()
                        .map_err(|e: wisp_core::units::ParseUnitError| err(e.0))?;
                    let r = check_link_rate(r).map_err(err)?;
                    let t = parse_duration(t).map_err(|e| err(e.0))?;
                    if let Some(&(prev, _)) = steps.last() {
                        if t <= prev {
                            return Err(err(format!("step times must increase (`{item}`)")));
                        }
                    } else if t != Duration::ZERO {
                        return Err(err("the first step must start at 0".into()));
                    }
                    steps.push((t, r));
                }
                if steps.is_empty() {
                    return Err(err("no steps".into()));
                }
                Ok(LinkSpec::Steps(steps))
            }
            other => Err(err(format!(
                "unknown link kind `{other}` (known: trace, trace-ns, trace-packets, const, steps, wifi-outage, wifi, 3g-up, wimax-down, cable-up, handover)"
            ))),
        }
    }
}

/// `SPEC+SPEC@T+…`: the first segment starts at 0, each later one at the time after its last `@`.
fn parse_handover(arg: &str) -> Result<LinkSpec, String> {
    let mut segments: Vec<(Duration, LinkSpec)> = vec![];
    for (i, part) in arg.split('+').enumerate() {
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
        if matches!(link, LinkSpec::Wifi(_)) {
            return Err("a handover segment cannot be the wifi medium".into());
        }
        segments.push((at, link));
    }
    if segments.len() < 2 {
        return Err("a handover needs at least two links, SPEC+SPEC@TIME".into());
    }
    Ok(LinkSpec::Handover(segments))
}

impl LinkSpec {
    /// Reads any file the spec names. The Wi-Fi medium is not a [`LinkModel`] (it has no
    /// [`Server`]): it is an error here, for a caller that has no Wi-Fi hop to run it on.
    pub fn load(&self) -> Result<LinkModel, TraceError> {
        Ok(match self {
            LinkSpec::Wifi(w) => {
                return Err(TraceError {
                    file: format!("wifi:{w}"),
                    line: None,
                    message: "the wifi medium is not supported here yet (it runs in `wisp link` and on the engine's Wi-Fi hop, not as a single-bottleneck link)".into(),
                });
            }
            LinkSpec::Mobile(m) => LinkModel::Mobile(Arc::new(m.load())),
            LinkSpec::Handover(segs) => {
                let mut out = Vec::with_capacity(segs.len());
                for (at, spec) in segs {
                    out.push((Instant::ZERO + *at, spec.load()?));
                }
                LinkModel::Handover(Arc::new(HandoverLink { segments: out }))
            }
            LinkSpec::Trace { path, unit } => {
                LinkModel::Trace(check_trace_rate(Trace::load(path, *unit)?, 1500)?)
            }
            LinkSpec::PacketTrace { path, unit } => LinkModel::PacketTrace(check_trace_rate(
                Trace::load(path, *unit)?,
                PACKET_TRACE_BYTES_PER_LINE,
            )?),
            LinkSpec::WifiOutage(o) => LinkModel::Outage(Arc::new(OutageLink {
                spec: o.clone(),
                steps: Arc::new(o.steps()),
            })),
            LinkSpec::Const(r) => LinkModel::Rate(Arc::new(vec![(Instant::ZERO, *r)])),
            LinkSpec::Steps(s) => LinkModel::Rate(Arc::new(
                s.iter().map(|&(t, r)| (Instant::ZERO + t, r)).collect(),
            )),
        })
    }
}

/// Refuses a trace whose average rate (`bytes_per_line` per line over one period) is above
/// [`MAX_LINK_RATE`].
fn check_trace_rate(t: Arc<Trace>, bytes_per_line: u64) -> Result<Arc<Trace>, TraceError> {
    let bits = t.lines() as f64 * bytes_per_line as f64 * 8.0;
    let rate = bits / t.period().as_secs_f64();
    if rate > MAX_LINK_RATE.bps() as f64 {
        return Err(TraceError {
            file: t
                .path()
                .map_or_else(|| t.name().to_string(), |p| p.display().to_string()),
            line: None,
            message: format!(
                "an average rate of {:.0} Mbit/s, above the limit of 10gbps (10 Gbit/s)",
                rate / 1e6
            ),
        });
    }
    Ok(t)
}

/// A loaded link model.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkModel {
    /// Trace replay.
    Trace(Arc<Trace>),
    /// Trace replay, one packet per line.
    PacketTrace(Arc<Trace>),
    /// The synthetic Wi-Fi outage link.
    Outage(Arc<OutageLink>),
    /// Piecewise-constant rate: `(start, rate)`, the first at 0.
    Rate(Arc<Vec<(Instant, Bitrate)>>),
    /// A mobile-broadband profile.
    Mobile(Arc<MobileLink>),
    /// One link after another.
    Handover(Arc<HandoverLink>),
    /// No bottleneck: packets pass at once (a reverse path that is only a delay).
    Unlimited,
}

/// Bytes a trace line credits (Mahimahi semantics).
pub const BYTES_PER_LINE: u64 = 1500;

/// Bytes a line counts for in capacity figures under per-packet semantics (libwebrtc's
/// `TraceBasedDeliveryFilter` rate counter).
pub const PACKET_TRACE_BYTES_PER_LINE: u64 = 1240;

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
    /// The index of the segment active at `t`.
    pub fn active(&self, t: Instant) -> usize {
        self.segments
            .partition_point(|s| s.0 <= t)
            .saturating_sub(1)
    }

    /// The end of segment `i`.
    fn end(&self, i: usize) -> Instant {
        self.segments.get(i + 1).map_or(Instant::MAX, |s| s.0)
    }
}

/// A loaded [`OutageSpec`]: its rate schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct OutageLink {
    pub spec: OutageSpec,
    pub steps: Arc<Vec<(Instant, Bitrate)>>,
}

impl LinkModel {
    /// The same trace link, started `by` into its trace ([`Trace::shifted`]); `None` for a link
    /// that is not a trace.
    pub fn trace_shifted(&self, by: Duration) -> Option<LinkModel> {
        match self {
            LinkModel::Trace(t) => Some(LinkModel::Trace(Arc::new(t.shifted(by)))),
            LinkModel::PacketTrace(t) => Some(LinkModel::PacketTrace(Arc::new(t.shifted(by)))),
            _ => None,
        }
    }

    /// A short name for reports: the trace's file name, or the spec.
    pub fn name(&self) -> String {
        let from = |t: &Trace| {
            if t.shift().is_zero() {
                String::new()
            } else {
                format!(" from {:.3} s", t.shift().as_secs_f64())
            }
        };
        match self {
            LinkModel::Trace(t) => format!("{}{}", t.name(), from(t)),
            LinkModel::PacketTrace(t) => format!("{}{} (per packet)", t.name(), from(t)),
            LinkModel::Outage(o) => o.spec.name(),
            LinkModel::Rate(steps) if steps.len() == 1 => format!("const:{}", steps[0].1),
            LinkModel::Rate(steps) => {
                let s: Vec<String> = steps
                    .iter()
                    .map(|(t, r)| format!("{r}@{}s", t.as_secs_f64()))
                    .collect();
                format!("steps:{}", s.join(","))
            }
            LinkModel::Mobile(m) => m.spec.name(),
            LinkModel::Handover(h) => {
                let s: Vec<String> = h
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
            LinkModel::Unlimited => "unlimited".into(),
        }
    }

    /// The natural length of a run: one period of a trace; for rate links, the last step's start
    /// plus the length of the step before it (or 60 s for a constant link).
    pub fn default_duration(&self) -> Duration {
        match self {
            LinkModel::Trace(t) | LinkModel::PacketTrace(t) => t.period(),
            LinkModel::Rate(steps) if steps.len() >= 2 => {
                let n = steps.len();
                let last = steps[n - 1].0 - Instant::ZERO;
                last + (steps[n - 1].0 - steps[n - 2].0)
            }
            LinkModel::Handover(h) => {
                let n = h.segments.len();
                let last = h.segments[n - 1].0;
                (last - Instant::ZERO) + (last - h.segments[n - 2].0)
            }
            _ => Duration::from_secs(60),
        }
    }

    /// A fresh server at time zero. A link with per-packet randomness (the mobile profiles)
    /// draws it from a fixed stream; the simulator uses [`LinkModel::server_seeded`].
    pub fn server(&self) -> Server {
        self.server_seeded(0)
    }

    /// A fresh server at time zero whose per-packet random draws come from `seed` (the run's).
    pub fn server_seeded(&self, seed: u64) -> Server {
        match self {
            LinkModel::Mobile(m) => Server::Mobile(Box::new(m.server(seed))),
            LinkModel::Handover(h) => Server::Handover(Box::new(HandoverServer {
                link: Arc::clone(h),
                servers: h
                    .segments
                    .iter()
                    .enumerate()
                    .map(|(i, (_, l))| {
                        l.server_seeded(crate::seed::mix(seed, &format!("handover/{i}")))
                    })
                    .collect(),
            })),
            LinkModel::Trace(t) => Server::Trace {
                cursor: t.cursor_at(Instant::ZERO),
                credit_time: Instant::ZERO,
                credit_left: 0,
            },
            LinkModel::PacketTrace(t) => Server::PacketTrace {
                cursor: t.cursor_at(Instant::ZERO),
                credit_time: Instant::ZERO,
                credit_left: 0,
            },
            LinkModel::Outage(o) => Server::Rate {
                steps: Arc::clone(&o.steps),
            },
            LinkModel::Rate(steps) => Server::Rate {
                steps: Arc::clone(steps),
            },
            LinkModel::Unlimited => Server::Unlimited,
        }
    }

    /// Bytes the link offers in `[from, to)`, in bins of `bin` from `from` (the last bin may be
    /// partial). For a trace: opportunities × 1500 B; for a rate link: the integral of the rate.
    pub fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        let nbins = ((to - from).as_nanos().div_ceil(bin.as_nanos().max(1))) as usize;
        let mut out = vec![0.0; nbins];
        match self {
            LinkModel::Trace(t) | LinkModel::PacketTrace(t) => {
                let per_line = if matches!(self, LinkModel::Trace(_)) {
                    BYTES_PER_LINE
                } else {
                    PACKET_TRACE_BYTES_PER_LINE
                };
                let mut c = t.cursor_at(from);
                loop {
                    let (at, n) = c.peek();
                    if at >= to {
                        break;
                    }
                    let b = ((at - from).as_nanos() / bin.as_nanos()) as usize;
                    out[b] += (u64::from(n) * per_line) as f64;
                    c.advance();
                }
            }
            LinkModel::Outage(o) => {
                for (b, slot) in out.iter_mut().enumerate() {
                    let lo = from + bin * b as u64;
                    let hi = (lo + bin).min(to);
                    *slot = rate_integral_bits(&o.steps, lo, hi) / 8.0;
                }
            }
            LinkModel::Rate(steps) => {
                for (b, slot) in out.iter_mut().enumerate() {
                    let lo = from + bin * b as u64;
                    let hi = (lo + bin).min(to);
                    *slot = rate_integral_bits(steps, lo, hi) / 8.0;
                }
            }
            LinkModel::Mobile(m) => {
                for (b, slot) in out.iter_mut().enumerate() {
                    let lo = from + bin * b as u64;
                    let hi = (lo + bin).min(to);
                    *slot = m.capacity_bytes(lo, hi);
                }
            }
            LinkModel::Handover(h) => {
                for (i, (start, link)) in h.segments.iter().enumerate() {
                    let (a, b) = (from.max(*start), to.min(h.end(i)));
                    if a >= b {
                        continue;
                    }
                    // The segment's own bins, on its clock, aligned with ours.
                    let first = ((a - from).as_nanos() / bin.as_nanos()) as usize;
                    let local = |t: Instant| Instant::ZERO + (t - *start);
                    let mut lo = a;
                    for slot in out.iter_mut().skip(first) {
                        let hi =
                            (from + bin * ((lo - from).as_nanos() / bin.as_nanos() + 1)).min(b);
                        *slot += link
                            .capacity_bins(local(lo), local(hi), hi - lo)
                            .iter()
                            .sum::<f64>();
                        lo = hi;
                        if lo >= b {
                            break;
                        }
                    }
                }
            }
            LinkModel::Unlimited => {}
        }
        out
    }

    /// The ideal sender's packets over this link with one-way delay `delay` in front of it:
    /// `(delivery, send, bytes)` for `mtu`-size packets that each reach the queue exactly when
    /// the link can start on them. Infinite for trace and rate links.
    pub fn ideal_deliveries(&self, delay: Duration, mtu: DataSize) -> IdealDeliveries {
        let mut server = self.server();
        let next_arrival = server.next_start(Instant::ZERO + delay);
        IdealDeliveries {
            server,
            next_arrival,
            delay,
            mtu,
        }
    }
}

/// See [`LinkModel::ideal_deliveries`].
#[derive(Debug, Clone)]
pub struct IdealDeliveries {
    server: Server,
    next_arrival: Option<Instant>,
    delay: Duration,
    mtu: DataSize,
}

/// One packet of the ideal sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdealPacket {
    pub delivered: Instant,
    pub sent: Instant,
    pub size: DataSize,
}

impl Iterator for IdealDeliveries {
    type Item = IdealPacket;
    fn next(&mut self) -> Option<IdealPacket> {
        loop {
            let arrival = self.next_arrival?;
            let s = self.server.serve_packet(arrival, self.mtu.bytes());
            if s.done == Instant::MAX {
                self.next_arrival = None;
                return None;
            }
            self.next_arrival = self.server.next_start(s.done);
            // A packet the link loses (its radio, on a mobile profile) is not delivered.
            if let Some(delivered) = s.delivered {
                return Some(IdealPacket {
                    delivered,
                    sent: arrival - self.delay,
                    size: self.mtu,
                });
            }
        }
    }
}

/// The bottleneck's service process.
#[derive(Debug, Clone)]
pub enum Server {
    /// Trace replay; `credit_left` bytes remain at `credit_time` (the current opportunity).
    Trace {
        cursor: TraceCursor,
        credit_time: Instant,
        credit_left: u64,
    },
    /// Trace replay with per-packet semantics; `credit_left` packets remain at `credit_time`.
    PacketTrace {
        cursor: TraceCursor,
        credit_time: Instant,
        credit_left: u64,
    },
    Rate {
        steps: Arc<Vec<(Instant, Bitrate)>>,
    },
    /// A mobile-broadband profile: the bottleneck, then the radio.
    Mobile(Box<MobileServer>),
    /// One server per segment of a handover link.
    Handover(Box<HandoverServer>),
    Unlimited,
}

/// The server of a [`HandoverLink`]: each segment's own server on the segment's clock.
#[derive(Debug, Clone)]
pub struct HandoverServer {
    link: Arc<HandoverLink>,
    servers: Vec<Server>,
}

impl HandoverServer {
    fn local(&self, i: usize, t: Instant) -> Instant {
        Instant::ZERO + (t - self.link.segments[i].0)
    }
    fn global(&self, i: usize, t: Instant) -> Instant {
        if t == Instant::MAX {
            return t;
        }
        self.link.segments[i].0 + (t - Instant::ZERO)
    }

    fn next_start(&mut self, mut t: Instant) -> Option<Instant> {
        loop {
            let i = self.link.active(t);
            let end = self.link.end(i);
            let local = self.local(i, t);
            match self.servers[i].next_start(local).map(|l| self.global(i, l)) {
                Some(g) if g < end => return Some(g),
                _ if end == Instant::MAX => return None,
                _ => t = end,
            }
        }
    }

    fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        let i = self.link.active(t);
        let local = self.local(i, t);
        let s = self.servers[i].serve_packet(local, size);
        Service {
            done: self.global(i, s.done),
            delivered: s.delivered.map(|d| self.global(i, d)),
        }
    }
}

impl Server {
    /// The earliest instant at or after `t` at which a packet can start service; `None` if the
    /// link never serves again. Opportunities before `t` are wasted.
    pub fn next_start(&mut self, t: Instant) -> Option<Instant> {
        // What an opportunity credits: bytes (Mahimahi) or one packet.
        let per_line = match self {
            Server::PacketTrace { .. } => 1,
            _ => BYTES_PER_LINE,
        };
        match self {
            Server::Trace {
                cursor,
                credit_time,
                credit_left,
            }
            | Server::PacketTrace {
                cursor,
                credit_time,
                credit_left,
            } => {
                if *credit_left > 0 && *credit_time == t {
                    return Some(t);
                }
                cursor.seek(t);
                let (at, n) = cursor.peek();
                cursor.advance();
                *credit_time = at;
                *credit_left = u64::from(n) * per_line;
                Some(at)
            }
            Server::Rate { steps } => rate_next_start(steps, t),
            Server::Mobile(m) => m.next_start(t),
            Server::Handover(h) => h.next_start(t),
            Server::Unlimited => Some(t),
        }
    }

    /// Serves a packet of `size` bytes from `t` (which [`Server::next_start`] returned): when
    /// the server is free again, and when (if) the receiver gets the packet. Only the mobile
    /// profiles deliver later than `done` (their radio) or lose packets.
    pub fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        match self {
            Server::Mobile(m) => m.serve(t, size),
            Server::Handover(h) => h.serve_packet(t, size),
            _ => {
                let done = self.serve(t, size);
                Service {
                    done,
                    delivered: Some(done),
                }
            }
        }
    }

    /// The buffer's discard timer at `now`, if the link has one: a packet that has waited longer
    /// in the queue is discarded when it reaches the head.
    pub fn discard_after(&self, now: Instant) -> Option<Duration> {
        match self {
            Server::Mobile(m) => m.discard_after(),
            Server::Handover(h) => h.servers[h.link.active(now)].discard_after(now),
            _ => None,
        }
    }

    /// Serves a packet of `size` bytes starting at `t`, which [`Server::next_start`] returned;
    /// returns the instant its last byte is delivered (`Instant::MAX` if never). For a mobile
    /// profile, when the bottleneck is done with it (see [`Server::serve_packet`]).
    pub fn serve(&mut self, t: Instant, size: u64) -> Instant {
        match self {
            Server::Trace {
                cursor,
                credit_time,
                credit_left,
            } => {
                debug_assert_eq!(*credit_time, t);
                let mut remaining = size;
                loop {
                    let take = remaining.min(*credit_left);
                    remaining -= take;
                    *credit_left -= take;
                    if remaining == 0 {
                        return *credit_time;
                    }
                    let (at, n) = cursor.peek();
                    cursor.advance();
                    *credit_time = at;
                    *credit_left = u64::from(n) * BYTES_PER_LINE;
                }
            }
            Server::PacketTrace {
                credit_time,
                credit_left,
                ..
            } => {
                // One packet per opportunity, whatever its size.
                debug_assert_eq!(*credit_time, t);
                debug_assert!(*credit_left > 0);
                *credit_left -= 1;
                *credit_time
            }
            Server::Rate { steps } => rate_serve(steps, t, size),
            Server::Mobile(m) => m.serve(t, size).done,
            Server::Handover(h) => h.serve_packet(t, size).done,
            Server::Unlimited => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wisp_core::time::ms;

    /// The fastest rate any link spec may name, wherever it names one.
    fn fastest(spec: &LinkSpec) -> Bitrate {
        match spec {
            LinkSpec::Const(r) => *r,
            LinkSpec::Steps(s) => s.iter().map(|s| s.1).max().unwrap_or(Bitrate::ZERO),
            LinkSpec::WifiOutage(o) => o.rate.max(o.burst),
            LinkSpec::Mobile(m) => m.rate.max(m.radio),
            LinkSpec::Handover(segs) => segs.iter().map(|s| fastest(&s.1)).max().unwrap(),
            _ => Bitrate::ZERO,
        }
    }

    #[test]
    fn rates_above_the_limit_are_refused_with_it_named() {
        for spec in [
            "const:1e12mbps",
            "const:10000.001mbps",
            "steps:1mbps@0,20gbps@1s",
            "wifi-outage:rate=1mbps,burst=11gbps",
            "wifi-outage:rate=10001mbps,burst=20gbps",
            "3g-up:rate=1e6mbps",
            "cable-up:radio=1000gbps",
            "handover:const:1mbps+const:1e9mbps@1s",
        ] {
            let e = spec.parse::<LinkSpec>().unwrap_err();
            assert!(e.message.contains("limit of 10gbps"), "{spec}: {e}");
        }
        assert_eq!(
            "const:10gbps".parse::<LinkSpec>().unwrap(),
            LinkSpec::Const(MAX_LINK_RATE)
        );
    }

    #[test]
    fn a_trace_faster_than_the_limit_is_refused() {
        let dir = std::env::temp_dir().join(format!("wisp-fast-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // 1000 opportunities of 1500 bytes per ms: 12 Gbit/s; 800 per ms is 9.6 Gbit/s.
        for (n, ok) in [(1000, false), (800, true)] {
            let p = dir.join(format!("t{n}"));
            std::fs::write(&p, "1\n".repeat(n)).unwrap();
            let r = LinkSpec::Trace {
                path: p.clone(),
                unit: TraceUnit::Millis,
            }
            .load();
            assert_eq!(r.is_ok(), ok, "{n}: {r:?}");
            if let Err(e) = r {
                assert!(e.message.contains("limit of 10gbps"), "{e}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    proptest::proptest! {
        /// Whatever the number and unit, a rate is kept within the limit or refused.
        #[test]
        fn no_spec_names_a_rate_above_the_limit(
            mantissa in 0.0f64..10.0,
            exp in -3i32..16,
            unit in proptest::sample::select(vec!["", "bps", "kbps", "mbps", "gbps"]),
            kind in 0u8..5,
        ) {
            let r = format!("{mantissa}e{exp}{unit}");
            let spec = match kind {
                0 => format!("const:{r}"),
                1 => format!("steps:1mbps@0,{r}@1s"),
                2 => format!("wifi-outage:rate=1kbps,burst={r}"),
                3 => format!("3g-up:rate={r}"),
                _ => format!("handover:const:1mbps+const:{r}@2s"),
            };
            if let Ok(s) = spec.parse::<LinkSpec>() {
                proptest::prop_assert!(fastest(&s) <= MAX_LINK_RATE, "{spec}");
            }
        }
    }

    fn trace(s: &str) -> LinkModel {
        LinkModel::Trace(Arc::new(Trace::parse(s, "t", TraceUnit::Millis).unwrap()))
    }

    #[test]
    fn specs() {
        assert_eq!(
            "const:12mbps".parse::<LinkSpec>().unwrap(),
            LinkSpec::Const(Bitrate::from_mbps(12))
        );
        assert_eq!(
            "steps:1mbps@0,2.5mbps@25s".parse::<LinkSpec>().unwrap(),
            LinkSpec::Steps(vec![
                (Duration::ZERO, Bitrate::from_mbps(1)),
                (Duration::from_secs(25), Bitrate::from_kbps(2500))
            ])
        );
        assert!(matches!(
            "trace:a.rx".parse::<LinkSpec>().unwrap(),
            LinkSpec::Trace {
                unit: TraceUnit::Nanos,
                ..
            }
        ));
        assert!(matches!(
            "trace-ns:a.txt".parse::<LinkSpec>().unwrap(),
            LinkSpec::Trace {
                unit: TraceUnit::Nanos,
                ..
            }
        ));
        assert!(matches!(
            "trace:a.down".parse::<LinkSpec>().unwrap(),
            LinkSpec::Trace {
                unit: TraceUnit::Millis,
                ..
            }
        ));
        assert_eq!(
            "wifi-outage".parse::<LinkSpec>().unwrap(),
            LinkSpec::WifiOutage(OutageSpec::default())
        );
        assert_eq!(
            "wifi-outage:rate=2mbps,every=500ms,length=50ms,burst=20mbps,seed=7"
                .parse::<LinkSpec>()
                .unwrap(),
            LinkSpec::WifiOutage(OutageSpec {
                rate: Bitrate::from_mbps(2),
                every: ms(500),
                length: ms(50),
                burst: Bitrate::from_mbps(20),
                seed: 7,
            })
        );
        assert!(matches!(
            "trace-packets:a.rx".parse::<LinkSpec>().unwrap(),
            LinkSpec::PacketTrace {
                unit: TraceUnit::Nanos,
                ..
            }
        ));
        for bad in [
            "wifi-outage:rate=0",
            "wifi-outage:every=0",
            "wifi-outage:burst=1mbps",
            "wifi-outage:color=red",
            "wifi-outage:length",
            "wifi-outage:rate=1mbps,rate=2mbps",
            "3g-up:loss=0.1,loss=0.2",
            "const:0",
            "const:fast",
            "steps:1mbps@5s",
            "steps:1mbps@0,2mbps@0",
            "wifi:rate=7mbps",
            "wifi:stations=x",
            "handover:const:1mbps+wifi@5s",
            "x:1",
            "steps:",
        ] {
            assert!(bad.parse::<LinkSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn wifi_specs_parse_and_are_not_a_server() {
        let s: LinkSpec = "wifi:std=11g,rate=54mbps,stations=4,load=tcp"
            .parse()
            .unwrap();
        let LinkSpec::Wifi(w) = &s else {
            panic!("{s:?}")
        };
        assert_eq!(w.stations, 4);
        assert_eq!(
            "wifi".parse::<LinkSpec>().unwrap(),
            LinkSpec::Wifi(Default::default())
        );
        let e = "wifi:load=bulk".parse::<LinkSpec>().unwrap_err();
        assert!(e.message.starts_with("`load`"), "{e}");
        let e = s.load().unwrap_err();
        assert!(e.message.contains("not supported here"), "{e}");
    }

    #[test]
    fn trace_server_byte_accounting() {
        let link = trace("1\n2\n2\n4\n");
        let mut s = link.server();
        // A packet arriving at 0 starts at the opportunity at 1 ms.
        assert_eq!(s.next_start(Instant::ZERO), Some(Instant::from_millis(1)));
        // 2000 bytes need the opportunity at 1 ms and part of the two at 2 ms.
        assert_eq!(
            s.serve(Instant::from_millis(1), 2000),
            Instant::from_millis(2)
        );
        // 2500 bytes are left at 2 ms; two 1000-byte packets share them.
        assert_eq!(
            s.next_start(Instant::from_millis(2)),
            Some(Instant::from_millis(2))
        );
        assert_eq!(
            s.serve(Instant::from_millis(2), 1000),
            Instant::from_millis(2)
        );
        assert_eq!(
            s.serve(Instant::from_millis(2), 1000),
            Instant::from_millis(2)
        );
        // The 500 bytes left at 2 ms are wasted if the next packet comes at 3 ms.
        assert_eq!(
            s.next_start(Instant::from_millis(3)),
            Some(Instant::from_millis(4))
        );
        assert_eq!(
            s.serve(Instant::from_millis(4), 1500),
            Instant::from_millis(4)
        );
        // Looping: period 4 ms, so the next opportunities are at 5, 6, 6, 8.
        assert_eq!(
            s.next_start(Instant::from_millis(4)),
            Some(Instant::from_millis(5))
        );
    }

    #[test]
    fn rate_server_integrates_across_steps() {
        let link = "steps:12mbps@0,0mbps@10ms,6mbps@20ms"
            .parse::<LinkSpec>()
            .unwrap()
            .load()
            .unwrap();
        let mut s = link.server();
        assert_eq!(s.next_start(Instant::ZERO), Some(Instant::ZERO));
        assert_eq!(s.serve(Instant::ZERO, 1500), Instant::from_millis(1));
        // 1500 B started at 9.5 ms: 750 B before the outage, the rest at 6 Mbit/s from 20 ms.
        assert_eq!(
            s.serve(Instant::from_micros(9500), 1500),
            Instant::from_millis(21)
        );
        assert_eq!(
            s.next_start(Instant::from_millis(12)),
            Some(Instant::from_millis(20))
        );
        let c = link.capacity_bins(Instant::ZERO, Instant::from_millis(30), ms(10));
        assert_eq!(c, vec![15000.0, 0.0, 7500.0]);
    }

    #[test]
    fn packet_trace_releases_one_packet_per_line() {
        let link = LinkModel::PacketTrace(Arc::new(
            Trace::parse("1\n2\n2\n4\n", "t", TraceUnit::Millis).unwrap(),
        ));
        let mut s = link.server();
        // A 100-byte and a 1500-byte packet each take a whole line.
        assert_eq!(s.next_start(Instant::ZERO), Some(Instant::from_millis(1)));
        assert_eq!(
            s.serve(Instant::from_millis(1), 100),
            Instant::from_millis(1)
        );
        assert_eq!(
            s.next_start(Instant::from_millis(1)),
            Some(Instant::from_millis(2))
        );
        assert_eq!(
            s.serve(Instant::from_millis(2), 1500),
            Instant::from_millis(2)
        );
        // The second line at 2 ms is still there for a packet arriving at 2 ms.
        assert_eq!(
            s.next_start(Instant::from_millis(2)),
            Some(Instant::from_millis(2))
        );
        assert_eq!(
            s.serve(Instant::from_millis(2), 40),
            Instant::from_millis(2)
        );
        assert_eq!(
            s.next_start(Instant::from_millis(2)),
            Some(Instant::from_millis(4))
        );
        let c = link.capacity_bins(Instant::ZERO, Instant::from_millis(5), ms(5));
        assert_eq!(c, vec![4.0 * PACKET_TRACE_BYTES_PER_LINE as f64]);
    }

    #[test]
    fn outage_link_holds_then_bursts_and_keeps_its_mean_rate() {
        let spec = OutageSpec::default();
        let steps = spec.steps();
        let outages: Vec<_> = steps
            .windows(2)
            .filter(|w| w[0].1 == Bitrate::ZERO)
            .map(|w| w[1].0 - w[0].0)
            .collect();
        // About one outage per second over the hour, 50–150 ms long, mean near 100 ms.
        let n = outages.len() as f64;
        assert!((3000.0..4200.0).contains(&n), "{n}");
        assert!(outages.iter().all(|&l| l >= ms(50) && l <= ms(150)));
        let mean = outages.iter().map(|l| l.as_millis_f64()).sum::<f64>() / n;
        assert!((mean - 100.0).abs() < 3.0, "{mean}");
        // Every outage is followed by a burst at 5 Mbit/s, then the base rate (or at once the
        // next outage).
        for w in steps.windows(3).filter(|w| w[0].1 == Bitrate::ZERO) {
            assert_eq!(w[1].1, spec.burst);
            assert!(w[2].1 == spec.rate || w[2].1 == Bitrate::ZERO, "{w:?}");
        }
        // The burst gives back exactly what the outage took: the mean rate stays 3 Mbit/s.
        let link = "wifi-outage".parse::<LinkSpec>().unwrap().load().unwrap();
        let bytes: f64 = link
            .capacity_bins(
                Instant::ZERO,
                Instant::from_secs(600),
                Duration::from_secs(600),
            )
            .iter()
            .sum();
        assert!(
            (bytes * 8.0 / 600.0 / 3e6 - 1.0).abs() < 0.001,
            "{}",
            bytes * 8.0 / 600.0
        );
        // A packet waiting at an outage's start leaves at its end, at the burst rate.
        let (start, stop) = (steps[1].0, steps[2].0);
        let mut s = link.server();
        assert_eq!(s.next_start(start), Some(stop));
        assert_eq!(
            s.serve(stop, 1500),
            stop + DataSize::from_bytes(1500).transmit_time(spec.burst)
        );
        // Without outages it is the constant link.
        let calm = "wifi-outage:length=0"
            .parse::<LinkSpec>()
            .unwrap()
            .load()
            .unwrap();
        let LinkModel::Outage(o) = calm else {
            panic!("{calm:?}")
        };
        assert_eq!(*o.steps, vec![(Instant::ZERO, Bitrate::from_mbps(3))]);
    }

    #[test]
    fn handover_specs_parse_and_print() {
        let h = "handover:3g-up+wimax-down:loss=0.01@120s"
            .parse::<LinkSpec>()
            .unwrap();
        let LinkSpec::Handover(segs) = &h else {
            panic!("{h:?}")
        };
        assert_eq!(segs.len(), 2);
        assert_eq!(segs[0].0, Duration::ZERO);
        assert_eq!(segs[1].0, Duration::from_secs(120));
        assert!(matches!(&segs[1].1, LinkSpec::Mobile(m) if m.loss == 0.01));
        let m = h.load().unwrap();
        assert_eq!(m.name(), "handover:3g-up+wimax-down:loss=0.01@120s");
        assert_eq!(m.name().parse::<LinkSpec>().unwrap(), h);
        assert_eq!(m.default_duration(), Duration::from_secs(240));
        // A segment whose own spec has `@`: the switch time is after the last one.
        let s = "handover:const:1mbps+steps:1mbps@0,2mbps@10s@60s"
            .parse::<LinkSpec>()
            .unwrap();
        let LinkSpec::Handover(segs) = s else {
            panic!()
        };
        assert_eq!(segs[1].0, Duration::from_secs(60));
        assert!(matches!(&segs[1].1, LinkSpec::Steps(v) if v.len() == 2));
        for bad in [
            "handover:3g-up",
            "handover:3g-up+wimax-down",
            "handover:3g-up+wimax-down@0",
            "handover:3g-up+wimax-down@10s+cable-up@5s",
            "handover:3g-up+nope@5s",
            "handover:3g-up+handover:3g-up+cable-up@1s@2s",
            "3g-up:loss=2",
            "wimax-down:colour=red",
        ] {
            assert!(bad.parse::<LinkSpec>().is_err(), "{bad}");
        }
    }

    /// A key given twice in a spec's KEY=VALUE list is refused with the key named, whatever the
    /// link; so is one in a scheme's parameters.
    #[test]
    fn a_key_given_twice_is_refused() {
        for (spec, key) in [
            ("wifi-outage:rate=1mbps,burst=20mbps,rate=2mbps", "rate"),
            ("3g-up:loss=0.01, loss =0.02", "loss"),
            ("wifi:std=11g,rate=54mbps,rate=24mbps", "rate"),
        ] {
            let e = spec.parse::<LinkSpec>().unwrap_err().to_string();
            assert!(
                e.contains(&format!("`{key}`")) && e.contains("given twice"),
                "{spec}: {e}"
            );
        }
        let e = "cbr:rate-kbps=1000,rate_kbps=2000"
            .parse::<wisp_core::scheme::SchemeConfig>()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "scheme `cbr`: parameter `rate_kbps` given twice"
        );
    }

    #[test]
    fn handover_switches_links_on_their_own_clocks() {
        let link = "handover:const:1mbps+const:2mbps@1s"
            .parse::<LinkSpec>()
            .unwrap()
            .load()
            .unwrap();
        let mut s = link.server();
        // 1500 B: 12 ms at 1 Mbit/s, 6 ms at 2 Mbit/s.
        assert_eq!(s.next_start(Instant::ZERO), Some(Instant::ZERO));
        assert_eq!(s.serve(Instant::ZERO, 1500), Instant::from_millis(12));
        // A packet in service when the handover comes completes on the old link.
        let t = Instant::from_millis(995);
        assert_eq!(s.serve(t, 1500), t + ms(12));
        let t = Instant::from_secs(1) + ms(7);
        assert_eq!(s.next_start(t), Some(t));
        assert_eq!(s.serve(t, 1500), t + ms(6));
        let c = link.capacity_bins(Instant::ZERO, Instant::from_secs(2), ms(500));
        assert_eq!(c, vec![62_500.0, 62_500.0, 125_000.0, 125_000.0]);
        // A trace segment starts from its beginning at the handover.
        let h = LinkModel::Handover(Arc::new(HandoverLink {
            segments: vec![
                (
                    Instant::ZERO,
                    "const:1mbps".parse::<LinkSpec>().unwrap().load().unwrap(),
                ),
                (Instant::from_secs(1), trace("5\n10\n")),
            ],
        }));
        let mut s = h.server();
        assert_eq!(
            s.next_start(Instant::from_secs(1)),
            Some(Instant::from_secs(1) + ms(5))
        );
        let c = h.capacity_bins(
            Instant::from_secs(1),
            Instant::from_secs(1) + ms(10),
            ms(10),
        );
        // One opportunity at 5 ms in the window (the one at 10 ms is at its end).
        assert_eq!(c, vec![1500.0]);
    }

    #[test]
    fn ideal_uses_every_opportunity() {
        let link = trace("0\n3\n3\n10\n");
        let ideal: Vec<_> = link
            .ideal_deliveries(ms(2), DataSize::from_bytes(1500))
            .take(5)
            .collect();
        let d: Vec<_> = ideal
            .iter()
            .map(|p| (p.delivered.as_millis(), p.sent.as_millis()))
            .collect();
        // The opportunity at 0 is unreachable with 2 ms of delay.
        assert_eq!(d, [(3, 1), (3, 1), (10, 8), (10, 8), (13, 11)]);
        let c = link.capacity_bins(Instant::ZERO, Instant::from_millis(20), ms(10));
        assert_eq!(c, vec![4500.0, 6000.0]);
    }
}
