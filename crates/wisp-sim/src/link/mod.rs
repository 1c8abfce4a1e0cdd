//! Link models: what `--link SPEC` names, and the bottleneck server that drains a queue.
//!
//! A link model is one module behind the traits of [`contract`] — its kind (names, help,
//! parser), its spec, its loaded link and its server — and one line in the `BUILTIN` list
//! below; the simulator, the emulator (`wisp link`), the command line's help and the scenario
//! files find it there. A model from outside the crate is added at run time with [`register`].
//!
//! | spec | model |
//! |---|---|
//! | `trace:FILE`, `trace-ns:FILE`, `trace-packets:FILE` | trace replay, Mahimahi's or libwebrtc's semantics ([`trace`]) |
//! | `const:RATE`, `steps:RATE@T,RATE@T,…` | a constant or piecewise-constant rate ([`rate`]) |
//! | `wifi-outage[:KEY=VALUE,…]` | a constant rate with Wi-Fi-like outages whose held packets leave as a burst ([`outage`]) |
//! | `wifi[:KEY=VALUE,…]` | the 802.11 EDCA medium with contending stations ([`crate::wifi::link`]); run by the emulator and the engine's Wi-Fi hop, not by a [`Server`] ([`medium`]) |
//! | `3g-up`, `wimax-down`, `cable-up` `[:KEY=VALUE,…]` | mobile-broadband profiles with noise that does not depend on the sending rate ([`mobile`]) |
//! | `handover:SPEC+SPEC@T[+SPEC@T…]` | one link, then another from time T on ([`handover`]) |

pub mod contract;
pub mod handover;
pub mod medium;
pub mod mobile;
pub mod outage;
mod plugged;
pub mod rate;
mod registry;
pub mod trace;

pub use crate::limits::{MAX_LINK_RATE, check_link_rate};
pub use contract::{LinkKind, LinkName, LinkProcess, LoadLink, Serve, Service};
pub use handover::{HandoverLink, HandoverServer};
pub use mobile::{MobileLink, MobileServer, MobileSpec};
pub use outage::{OUTAGE_HORIZON, OutageLink, OutageSpec};
pub use plugged::{Plugged, PluggedLink, PluggedServer, PluggedSpec};
pub use rate::{RateLink, RateServer};
pub use registry::{help, kinds, names, register};
pub use trace::{
    BYTES_PER_LINE, PACKET_TRACE_BYTES_PER_LINE, PacketTraceLink, PacketTraceServer, Replay,
    ReplayServer, TraceLink, TraceServer,
};

use crate::trace::{Trace, TraceError, TraceUnit};
use crate::wifi::link::WifiSpec;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use wisp_core::{Bitrate, DataSize, Duration, Instant};

/// The built-in kinds, in the order of the help texts and the parser's errors. A new link
/// model: its module above, and one line here.
static BUILTIN: &[&dyn LinkKind] = &[
    &trace::TraceKind,
    &rate::RateKind,
    &outage::OutageKind,
    &medium::WifiKind,
    &mobile::MobileKind,
    &handover::HandoverKind,
];

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
    Wifi(WifiSpec),
    /// A model plugged in through [`contract`] ([`LinkSpec::plugged`]).
    Plugged(PluggedSpec),
}

/// A bad `--link` spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid link `{spec}`: {message}")]
pub struct LinkSpecError {
    pub spec: String,
    pub message: String,
}

/// Parses `NAME[:ARGS]` with the kind of that name ([`kinds`]).
impl FromStr for LinkSpec {
    type Err = LinkSpecError;
    fn from_str(s: &str) -> Result<Self, LinkSpecError> {
        registry::parse(s)
    }
}

impl LinkSpec {
    /// The spec of a plugged model.
    pub fn plugged<T: LoadLink>(spec: T) -> Self {
        LinkSpec::Plugged(Plugged(Box::new(spec)))
    }

    /// `trace:FILE`: a Mahimahi trace, in the unit its file name implies.
    pub fn trace_file(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let unit = TraceUnit::for_path(&path);
        LinkSpec::Trace { path, unit }
    }

    /// Reads any file the spec names. The Wi-Fi medium is not a [`LinkModel`] (it has no
    /// [`Server`]): it is an error here, for a caller that has no Wi-Fi hop to run it on.
    pub fn load(&self) -> Result<LinkModel, TraceError> {
        Ok(match self {
            LinkSpec::Wifi(w) => return Err(medium::not_a_server(w)),
            LinkSpec::Mobile(m) => LinkModel::Mobile(Arc::new(m.load())),
            LinkSpec::Handover(segs) => LinkModel::Handover(Arc::new(handover::load(segs)?)),
            LinkSpec::Trace { path, unit } => trace::load(path, *unit)?,
            LinkSpec::PacketTrace { path, unit } => trace::load_packets(path, *unit)?,
            LinkSpec::WifiOutage(o) => LinkModel::Outage(Arc::new(OutageLink::new(o))),
            LinkSpec::Const(r) => LinkModel::Rate(RateLink::constant(*r)),
            LinkSpec::Steps(s) => LinkModel::Rate(RateLink::from_steps(s)),
            LinkSpec::Plugged(p) => p.load()?,
        })
    }

    /// The 802.11 medium's spec, if it is one: a hop to run, not a [`LinkModel`].
    pub fn medium(&self) -> Option<&WifiSpec> {
        match self {
            LinkSpec::Wifi(w) => Some(w),
            _ => None,
        }
    }

    /// The spec names a file.
    pub fn reads_files(&self) -> bool {
        match self {
            LinkSpec::Trace { .. } | LinkSpec::PacketTrace { .. } => true,
            LinkSpec::Handover(segs) => segs.iter().any(|(_, s)| s.reads_files()),
            LinkSpec::Plugged(p) => p.reads_files(),
            _ => false,
        }
    }

    /// The same spec with its relative paths taken from `base` (a scenario file's folder).
    pub fn rebased(self, base: &Path) -> LinkSpec {
        let join = |p: PathBuf| if p.is_relative() { base.join(p) } else { p };
        match self {
            LinkSpec::Trace { path, unit } => LinkSpec::Trace {
                path: join(path),
                unit,
            },
            LinkSpec::PacketTrace { path, unit } => LinkSpec::PacketTrace {
                path: join(path),
                unit,
            },
            LinkSpec::Handover(segs) => LinkSpec::Handover(
                segs.into_iter()
                    .map(|(t, s)| (t, s.rebased(base)))
                    .collect(),
            ),
            LinkSpec::Plugged(mut p) => {
                p.rebase(base);
                LinkSpec::Plugged(p)
            }
            other => other,
        }
    }
}

/// A loaded link model.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkModel {
    /// Trace replay.
    Trace(TraceLink),
    /// Trace replay, one packet per line.
    PacketTrace(PacketTraceLink),
    /// The synthetic Wi-Fi outage link.
    Outage(Arc<OutageLink>),
    /// Piecewise-constant rate.
    Rate(RateLink),
    /// A mobile-broadband profile.
    Mobile(Arc<MobileLink>),
    /// One link after another.
    Handover(Arc<HandoverLink>),
    /// No bottleneck: packets pass at once (a reverse path that is only a delay).
    Unlimited,
    /// A model plugged in through [`contract`] ([`LinkModel::plugged`]).
    Plugged(PluggedLink),
}

/// `$body` for each variant of `$enum` but `Unlimited`, with `$x` bound to its payload (a
/// [`LinkProcess`] or a [`Serve`]), and `$unlimited` for `Unlimited`.
macro_rules! each {
    ($enum:ident [$($v:ident),*] $self:expr, $x:ident => $body:expr, $unlimited:expr) => {
        match $self {
            $($enum::$v($x) => $body,)*
            $enum::Unlimited => $unlimited,
        }
    };
}

/// [`each!`] over the variants of [`LinkModel`].
macro_rules! each_model {
    ($self:expr, $m:ident => $body:expr, unlimited => $unlimited:expr) => {
        each!(LinkModel [Trace, PacketTrace, Outage, Rate, Mobile, Handover, Plugged]
            $self, $m => $body, $unlimited)
    };
}

impl LinkModel {
    /// A plugged model's link.
    pub fn plugged<T: LinkProcess>(link: T) -> Self {
        LinkModel::Plugged(Plugged(Box::new(link)))
    }

    /// `trace` replayed with Mahimahi's semantics (`trace:FILE`).
    pub fn from_trace(trace: Arc<Trace>) -> Self {
        LinkModel::Trace(TraceLink { trace })
    }

    /// `trace` replayed one packet per line (`trace-packets:FILE`).
    pub fn from_packet_trace(trace: Arc<Trace>) -> Self {
        LinkModel::PacketTrace(PacketTraceLink { trace })
    }

    /// `rate` from time 0 on (`const:RATE`).
    pub fn constant(rate: Bitrate) -> Self {
        LinkModel::Rate(RateLink::constant(rate))
    }

    /// The trace a trace link replays, and the bytes a line counts for in capacity figures;
    /// `None` for any other link.
    pub fn trace_lines(&self) -> Option<(&Arc<Trace>, u64)> {
        match self {
            LinkModel::Trace(t) => Some((&t.trace, BYTES_PER_LINE)),
            LinkModel::PacketTrace(t) => Some((&t.trace, PACKET_TRACE_BYTES_PER_LINE)),
            _ => None,
        }
    }

    /// No bottleneck ([`LinkModel::Unlimited`]).
    pub fn is_unlimited(&self) -> bool {
        matches!(self, LinkModel::Unlimited)
    }

    /// The same trace link, started `by` into its trace ([`Trace::shifted`]); `None` for a link
    /// that is not a trace.
    pub fn trace_shifted(&self, by: Duration) -> Option<LinkModel> {
        match self {
            LinkModel::Trace(t) => Some(LinkModel::from_trace(Arc::new(t.trace.shifted(by)))),
            LinkModel::PacketTrace(t) => {
                Some(LinkModel::from_packet_trace(Arc::new(t.trace.shifted(by))))
            }
            _ => None,
        }
    }

    /// A short name for reports: the trace's file name, or the spec.
    pub fn name(&self) -> String {
        each_model!(self, m => m.name(), unlimited => "unlimited".into())
    }

    /// The natural length of a run: one period of a trace; for rate links, the last step's start
    /// plus the length of the step before it (or 60 s for a constant link).
    pub fn default_duration(&self) -> Duration {
        each_model!(self, m => m.default_duration(), unlimited => Duration::from_secs(60))
    }

    /// A fresh server at time zero. A link with per-packet randomness (the mobile profiles)
    /// draws it from a fixed stream; the simulator uses [`LinkModel::server_seeded`].
    pub fn server(&self) -> Server {
        self.server_seeded(0)
    }

    /// A fresh server at time zero whose per-packet random draws come from `seed` (the run's).
    pub fn server_seeded(&self, seed: u64) -> Server {
        each_model!(self, m => Server::from(m.server(seed)), unlimited => Server::Unlimited)
    }

    /// Bytes the link offers in `[from, to)`, in bins of `bin` from `from` (the last bin may be
    /// partial). For a trace: opportunities × 1500 B; for a rate link: the integral of the rate.
    pub fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        each_model!(
            self,
            m => m.capacity_bins(from, to, bin),
            unlimited => contract::empty_bins(from, to, bin)
        )
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

/// The bottleneck's service process: a built-in model's server (static dispatch), or a plugged
/// one's.
#[derive(Debug, Clone)]
pub enum Server {
    Trace(TraceServer),
    PacketTrace(PacketTraceServer),
    /// A rate link's, or the outage link's.
    Rate(RateServer),
    /// A mobile-broadband profile: the bottleneck, then the radio.
    Mobile(Box<MobileServer>),
    /// One server per segment of a handover link.
    Handover(Box<HandoverServer>),
    Unlimited,
    Plugged(PluggedServer),
}

/// [`each!`] over the variants of [`Server`].
macro_rules! each_server {
    ($self:expr, $s:ident => $body:expr, unlimited => $unlimited:expr) => {
        each!(Server [Trace, PacketTrace, Rate, Mobile, Handover, Plugged]
            $self, $s => $body, $unlimited)
    };
}

/// Each server as its variant of [`Server`] (what [`LinkModel::server_seeded`] returns).
macro_rules! server_from {
    ($($server:ty => |$s:ident| $variant:expr;)*) => {$(
        impl From<$server> for Server {
            fn from($s: $server) -> Server {
                $variant
            }
        }
    )*};
}

server_from! {
    TraceServer => |s| Server::Trace(s);
    PacketTraceServer => |s| Server::PacketTrace(s);
    RateServer => |s| Server::Rate(s);
    MobileServer => |s| Server::Mobile(Box::new(s));
    HandoverServer => |s| Server::Handover(Box::new(s));
    PluggedServer => |s| Server::Plugged(s);
}

impl Server {
    /// The earliest instant at or after `t` at which a packet can start service; `None` if the
    /// link never serves again. Opportunities before `t` are wasted.
    pub fn next_start(&mut self, t: Instant) -> Option<Instant> {
        each_server!(self, s => s.next_start(t), unlimited => Some(t))
    }

    /// Serves a packet of `size` bytes from `t` (which [`Server::next_start`] returned): when
    /// the server is free again, and when (if) the receiver gets the packet. Only the mobile
    /// profiles deliver later than `done` (their radio) or lose packets.
    pub fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        each_server!(self, s => s.serve_packet(t, size), unlimited => Service::at(t))
    }

    /// The buffer's discard timer at `now`, if the link has one: a packet that has waited longer
    /// in the queue is discarded when it reaches the head.
    pub fn discard_after(&self, now: Instant) -> Option<Duration> {
        each_server!(self, s => s.discard_after(now), unlimited => None)
    }

    /// Serves a packet of `size` bytes starting at `t`, which [`Server::next_start`] returned;
    /// returns the instant its last byte is delivered (`Instant::MAX` if never). For a mobile
    /// profile, when the bottleneck is done with it (see [`Server::serve_packet`]).
    pub fn serve(&mut self, t: Instant, size: u64) -> Instant {
        self.serve_packet(t, size).done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        LinkModel::from_trace(Arc::new(Trace::parse(s, "t", TraceUnit::Millis).unwrap()))
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

    /// One step of a server script: ask when a packet arriving at `at` ms starts service
    /// (`Start`), or serve `bytes` starting at `at` ms (`Serve`); either way, the instant
    /// expected back, ms.
    enum Step {
        Start { at: u64, want: u64 },
        Serve { at: u64, bytes: u64, want: u64 },
    }

    fn play(s: &mut Server, script: &[Step]) {
        for (i, step) in script.iter().enumerate() {
            match *step {
                Step::Start { at, want } => assert_eq!(
                    s.next_start(Instant::from_millis(at)),
                    Some(Instant::from_millis(want)),
                    "step {i}"
                ),
                Step::Serve { at, bytes, want } => assert_eq!(
                    s.serve(Instant::from_millis(at), bytes),
                    Instant::from_millis(want),
                    "step {i}"
                ),
            }
        }
    }

    #[test]
    fn trace_server_byte_accounting() {
        use Step::{Serve, Start};
        let link = trace("1\n2\n2\n4\n");
        play(
            &mut link.server(),
            &[
                // A packet arriving at 0 starts at the opportunity at 1 ms.
                Start { at: 0, want: 1 },
                // 2000 bytes need the opportunity at 1 ms and part of the two at 2 ms.
                Serve {
                    at: 1,
                    bytes: 2000,
                    want: 2,
                },
                // 2500 bytes are left at 2 ms; two 1000-byte packets share them.
                Start { at: 2, want: 2 },
                Serve {
                    at: 2,
                    bytes: 1000,
                    want: 2,
                },
                Serve {
                    at: 2,
                    bytes: 1000,
                    want: 2,
                },
                // The 500 bytes left at 2 ms are wasted if the next packet comes at 3 ms.
                Start { at: 3, want: 4 },
                Serve {
                    at: 4,
                    bytes: 1500,
                    want: 4,
                },
                // Looping: period 4 ms, so the next opportunities are at 5, 6, 6, 8.
                Start { at: 4, want: 5 },
            ],
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
        use Step::{Serve, Start};
        let link = LinkModel::from_packet_trace(Arc::new(
            Trace::parse("1\n2\n2\n4\n", "t", TraceUnit::Millis).unwrap(),
        ));
        play(
            &mut link.server(),
            &[
                // A 100-byte and a 1500-byte packet each take a whole line.
                Start { at: 0, want: 1 },
                Serve {
                    at: 1,
                    bytes: 100,
                    want: 1,
                },
                Start { at: 1, want: 2 },
                Serve {
                    at: 2,
                    bytes: 1500,
                    want: 2,
                },
                // The second line at 2 ms is still there for a packet arriving at 2 ms.
                Start { at: 2, want: 2 },
                Serve {
                    at: 2,
                    bytes: 40,
                    want: 2,
                },
                Start { at: 2, want: 4 },
            ],
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
