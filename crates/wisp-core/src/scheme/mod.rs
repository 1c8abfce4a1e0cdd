//! The scheme registry: name → config → the two halves.
//!
//! A scheme is named by a spec string `NAME[:KEY=VALUE,...]` (`cbr`, `cbr:rate-kbps=2000`),
//! parsed into a [`SchemeConfig`] whose defaults match the scheme's paper. [`SchemeConfig::build`]
//! makes a [`FlowSender`] (the scheme's [`Sender`](crate::controller::Sender) with its traffic source and pacer) and the
//! matching receiver. On hot paths the halves are enums ([`AnySender`], [`AnyReceiver`]) so that
//! calls are static dispatch.
//!
//! Adding a scheme: a module with its config (`Default` = the paper's values, `set` for
//! parameters), sender and receiver; a variant in [`SchemeConfig`], [`AnySender`] and
//! [`AnyReceiver`]; an entry in [`SCHEMES`].

pub mod cbr;
pub mod gcc;
pub mod ideal;
pub mod sprout;
pub mod tcp;
pub mod um;

use crate::controller::{
    Allowance, ExtraPacket, SendContext, SenderStats, WireReceiver, WireSender,
};
use crate::flow::FlowSender;
use crate::pacer::Pacer;
use crate::packet::{DEFAULT_MTU, DataHeader};
use crate::source::{Source, SourceRng};
use crate::tables::Tables;
use crate::time::{Duration, Instant};
use crate::units::DataSize;
use crate::wire::{Feedback, WireError};
use core::fmt;
use core::str::FromStr;

pub use cbr::{CbrConfig, CbrSender, SilentReceiver};
pub use gcc::{GccConfig, GccReceiver, GccSender};
pub use ideal::{IdealConfig, IdealSchedule, IdealSender};
pub use sprout::{SproutConfig, SproutReceiver, SproutSender};
pub use tcp::compound::{Compound, CompoundConfig};
pub use tcp::cubic::{Cubic, CubicConfig};
pub use tcp::ledbat::{Ledbat, LedbatConfig};
pub use tcp::newreno::{NewReno, NewRenoConfig};
pub use tcp::vegas::{Vegas, VegasConfig};
pub use tcp::{TcpReceiver, TcpSender};
pub use um::{UmFamilyConfig, UmSender};

/// One line of `wisp schemes`.
#[derive(Clone, Copy, Debug)]
pub struct SchemeInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Parameters it accepts, `key=default` separated by commas.
    pub params: &'static str,
}

/// Every scheme wisp knows, in the order `wisp schemes` lists them.
pub const SCHEMES: &[SchemeInfo] = &[
    SchemeInfo {
        name: "ideal",
        summary: "oracle sender of the Sprout paper: uses every delivery opportunity, never queues (simulation only)",
        params: "",
    },
    SchemeInfo {
        name: "cbr",
        summary: "constant bit rate, no feedback",
        params: "rate-kbps=1000",
    },
    SchemeInfo {
        name: "sprout",
        summary: "Sprout (NSDI'13): Bayesian forecast of a cellular link's delivery rate, window = 5th-percentile deliveries in 100 ms minus the queue",
        params: sprout::PARAMS,
    },
    SchemeInfo {
        name: "sprout-ewma",
        summary: "Sprout-EWMA (NSDI'13 §6.4): Sprout's protocol with an EWMA of the per-tick count instead of the cautious forecast",
        params: sprout::EWMA_PARAMS,
    },
    SchemeInfo {
        name: "gcc",
        summary: "Google Congestion Control (ANRW'16 §3): Kalman delay-based receiver + loss-based sender, video call",
        params: "prefilter=off,filter=kalman,threshold=libwebrtc,interval-ms=5,rate-window-ms=500,start-kbps=300,min-kbps=50,max-kbps=2500,pace-factor=2.5,audio-kbps=32",
    },
    SchemeInfo {
        name: "gcc-grouping",
        summary: "GCC with the packet-grouping pre-filter for Wi-Fi bursts (ANRW'16 Algorithm 1 exactly, which bounds no merged group; prefilter=libwebrtc caps bursts at 100 ms)",
        params: "prefilter=paper,filter=kalman,threshold=libwebrtc,interval-ms=5,rate-window-ms=500,start-kbps=300,min-kbps=50,max-kbps=2500,pace-factor=2.5,audio-kbps=32",
    },
    SchemeInfo {
        name: "gcc-trendline",
        summary: "GCC with libwebrtc's trendline estimator instead of the Kalman filter",
        params: "prefilter=off,filter=trendline,threshold=libwebrtc,interval-ms=5,rate-window-ms=500,start-kbps=300,min-kbps=50,max-kbps=2500,pace-factor=2.5,audio-kbps=32",
    },
    SchemeInfo {
        name: "cubic",
        summary: "TCP CUBIC bulk transfer (RFC 9438), ACK-clocked; `--queue codel` for CUBIC over CoDel",
        params: "c=0.4,beta=0.7,fast-convergence=true,hystart=true,iw=10,rto-min-ms=1000,rwnd-kb=none",
    },
    SchemeInfo {
        name: "newreno",
        summary: "TCP NewReno bulk transfer (RFC 5681 + RFC 6582 recovery)",
        params: "iw=10,rto-min-ms=1000,rwnd-kb=none",
    },
    SchemeInfo {
        name: "vegas",
        summary: "TCP Vegas bulk transfer (Brakmo & Peterson 1995): keeps alpha..beta segments queued",
        params: "alpha=2,beta=4,gamma=1,iw=10,rto-min-ms=1000,rwnd-kb=none",
    },
    SchemeInfo {
        name: "compound",
        summary: "Compound TCP bulk transfer (Tan et al. 2006): Reno window + delay window",
        params: "alpha=0.125,beta=0.5,k=0.75,gamma=30,zeta=1,iw=10,rto-min-ms=1000,rwnd-kb=none",
    },
    SchemeInfo {
        name: "ledbat",
        summary: "LEDBAT bulk transfer (RFC 6817): targets 100 ms of one-way queueing delay",
        params: "target-ms=100,gain=1,base-history=10,current-filter=4,min-cwnd=2,allowed-increase=1,iw=2,rto-min-ms=1000,rwnd-kb=none",
    },
    SchemeInfo {
        name: "newreno-like",
        summary: "NewReno-like rate control for media (Mehrotra et al. §IV-A): +M²/(R·SRTT²) per ACK, −R/2 per NACK",
        params: UM_SHARED,
    },
    SchemeInfo {
        name: "vegas-like",
        summary: "Vegas-like rate control (Mehrotra et al. §IV-B): ±M²/(R·SRTT²) per ACK by queueing delay against κ, ζ (2 and 4 segments queued)",
        params: "alpha=2,beta=4,start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,base-window-s=600",
    },
    SchemeInfo {
        name: "ctcp-like",
        summary: "Compound-TCP-like rate control (Mehrotra et al. §IV-C): CTCP's loss and delay windows over W = R·SRTT, once per loss event",
        params: "alpha=0.125,beta=0.5,k=0.75,gamma=30,zeta=1,start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,base-window-s=600",
    },
    SchemeInfo {
        name: "tfrc",
        summary: "TCP-Friendly Rate Control (RFC 5348) for a media call, per-packet ACKs",
        params: UM_SHARED,
    },
    SchemeInfo {
        name: "um",
        summary: "primal-dual utility maximisation (Mehrotra et al. eq. 1): ΔR = k2(k0 − δR)ΔT per ACK, fixed k0, k2",
        params: "k0=25000,k2=1.6,start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,base-window-s=600",
    },
    SchemeInfo {
        name: "adaptive-um",
        summary: "adaptive utility maximisation (Mehrotra et al. §V, eqs. 2–4) with the congestion threshold δ̂ learned online from calibration windows",
        params: "alpha-max=25000,alpha-min=1250,beta-min=0.1,beta-max=1,delta-max=2,delta-hat-ms=auto,probe-every-s=30,probe-first-s=5,depth=0.4,window-ms=1000,window-samples=50,settle-ms=300,quantile=0.99,margin=0.25,memory-s=180,samples=200,floor-ms=10,start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,base-window-s=600",
    },
];

/// The parameters every scheme of the Mehrotra et al. family takes.
const UM_SHARED: &str =
    "start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,base-window-s=600";

/// An error in a scheme spec or its parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown scheme `{name}` (known: {known})")]
    UnknownScheme { name: String, known: String },
    #[error("scheme `{scheme}`: unknown parameter `{key}` (accepted: {accepted})")]
    UnknownParam {
        scheme: String,
        key: String,
        accepted: &'static str,
    },
    #[error("scheme `{scheme}`: invalid value `{value}` for `{key}`: expected {expected}")]
    BadValue {
        scheme: String,
        key: String,
        value: String,
        expected: &'static str,
    },
    #[error("scheme `{scheme}`: parameter `{item}` is not of the form KEY=VALUE")]
    Malformed { scheme: String, item: String },
}

impl ParamError {
    fn unknown(key: &str, accepted: &'static str) -> Self {
        ParamError::UnknownParam {
            scheme: String::new(),
            key: key.to_string(),
            accepted,
        }
    }
    fn value(key: &str, value: &str, expected: &'static str) -> Self {
        ParamError::BadValue {
            scheme: String::new(),
            key: key.to_string(),
            value: value.to_string(),
            expected,
        }
    }
    fn in_scheme(self, name: &str) -> Self {
        match self {
            ParamError::UnknownParam { key, accepted, .. } => ParamError::UnknownParam {
                scheme: name.to_string(),
                key,
                accepted,
            },
            ParamError::BadValue {
                key,
                value,
                expected,
                ..
            } => ParamError::BadValue {
                scheme: name.to_string(),
                key,
                value,
                expected,
            },
            e => e,
        }
    }
}

/// Why a scheme could not be built in this context.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error(
        "scheme `{0}` needs to know the link's delivery schedule; it runs only in simulation on a known link"
    )]
    NeedsOracle(&'static str),
}

/// What a scheme may know about where it runs.
#[derive(Default)]
pub struct SchemeContext {
    /// Largest packet on the wire.
    pub mtu: DataSize,
    /// The link's delivery schedule as the ideal sender needs it (simulation only).
    pub ideal_schedule: Option<IdealSchedule>,
    /// A random stream for the flow's traffic model (the simulator derives it from the run's
    /// master seed, label `flow/N/media`). Without it, models that would draw from it are
    /// deterministic.
    pub rng: Option<SourceRng>,
    /// Where schemes keep the tables they precompute from their parameters (Sprout's model),
    /// shared by every flow given the same store. The caller chooses how widely to share it.
    pub tables: Tables,
}

impl fmt::Debug for SchemeContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemeContext")
            .field("mtu", &self.mtu)
            .field("ideal_schedule", &self.ideal_schedule.is_some())
            .field("rng", &self.rng.is_some())
            .field("tables", &self.tables)
            .finish()
    }
}

impl SchemeContext {
    pub fn new() -> Self {
        SchemeContext {
            mtu: DEFAULT_MTU,
            ideal_schedule: None,
            rng: None,
            tables: Tables::new(),
        }
    }
}

/// A scheme with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemeConfig {
    Ideal(IdealConfig),
    Cbr(CbrConfig),
    /// `sprout` and `sprout-ewma` (by [`SproutConfig::variant`]); boxed to keep the enum small.
    Sprout(Box<SproutConfig>),
    /// `gcc`, `gcc-grouping`, `gcc-trendline`.
    Gcc(Box<GccConfig>),
    Cubic(CubicConfig),
    NewReno(NewRenoConfig),
    Vegas(VegasConfig),
    Compound(CompoundConfig),
    Ledbat(LedbatConfig),
    /// `newreno-like`, `vegas-like`, `ctcp-like`, `tfrc`, `um`, `adaptive-um`.
    Um(Box<UmFamilyConfig>),
}

impl SchemeConfig {
    /// The scheme's registry name.
    pub fn name(&self) -> &'static str {
        match self {
            SchemeConfig::Ideal(_) => "ideal",
            SchemeConfig::Cbr(_) => "cbr",
            SchemeConfig::Sprout(c) => c.name(),
            SchemeConfig::Gcc(c) => c.name(),
            SchemeConfig::Cubic(_) => "cubic",
            SchemeConfig::NewReno(_) => "newreno",
            SchemeConfig::Vegas(_) => "vegas",
            SchemeConfig::Compound(_) => "compound",
            SchemeConfig::Ledbat(_) => "ledbat",
            SchemeConfig::Um(c) => c.name(),
        }
    }

    /// The default configuration of the scheme called `name`.
    pub fn from_name(name: &str) -> Result<Self, ParamError> {
        Ok(match name {
            "ideal" => SchemeConfig::Ideal(IdealConfig),
            "cbr" => SchemeConfig::Cbr(CbrConfig::default()),
            "sprout" => SchemeConfig::Sprout(Box::new(SproutConfig::new(sprout::Variant::Sprout))),
            "sprout-ewma" => {
                SchemeConfig::Sprout(Box::new(SproutConfig::new(sprout::Variant::Ewma)))
            }
            _ if gcc::config_for(name).is_some() => {
                SchemeConfig::Gcc(Box::new(gcc::config_for(name).expect("checked")))
            }
            "cubic" => SchemeConfig::Cubic(CubicConfig::default()),
            "newreno" => SchemeConfig::NewReno(NewRenoConfig::default()),
            "vegas" => SchemeConfig::Vegas(VegasConfig::default()),
            "compound" => SchemeConfig::Compound(CompoundConfig::default()),
            "ledbat" => SchemeConfig::Ledbat(LedbatConfig::default()),
            _ if um::config_for(name).is_some() => {
                SchemeConfig::Um(Box::new(um::config_for(name).expect("checked")))
            }
            _ => {
                return Err(ParamError::UnknownScheme {
                    name: name.to_string(),
                    known: SCHEMES
                        .iter()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        })
    }

    /// Sets one parameter (`KEY=VALUE` of the spec string).
    pub fn set_param(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        let name = self.name();
        let r = match self {
            SchemeConfig::Ideal(_) => Err(ParamError::unknown(key, "(none)")),
            SchemeConfig::Cbr(c) => c.set(key, value),
            SchemeConfig::Sprout(c) => c.set(key, value),
            SchemeConfig::Gcc(c) => c.set(key, value),
            SchemeConfig::Cubic(c) => c.set(key, value),
            SchemeConfig::NewReno(c) => c.set(key, value),
            SchemeConfig::Vegas(c) => c.set(key, value),
            SchemeConfig::Compound(c) => c.set(key, value),
            SchemeConfig::Ledbat(c) => c.set(key, value),
            SchemeConfig::Um(c) => c.set(key, value),
        };
        r.map_err(|e| e.in_scheme(name))
    }

    /// The parameters that differ from none: `(key, value)` for the canonical spec string.
    fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            SchemeConfig::Ideal(_) => vec![],
            SchemeConfig::Cbr(c) => c.params(),
            SchemeConfig::Sprout(c) => c.params(),
            SchemeConfig::Gcc(c) => c.params(),
            SchemeConfig::Cubic(c) => c.params(),
            SchemeConfig::NewReno(c) => c.params(),
            SchemeConfig::Vegas(c) => c.params(),
            SchemeConfig::Compound(c) => c.params(),
            SchemeConfig::Ledbat(c) => c.params(),
            SchemeConfig::Um(c) => c.params(),
        }
    }

    /// Builds the flow driver and receiver.
    pub fn build(&self, ctx: SchemeContext) -> Result<(FlowSender, AnyReceiver), BuildError> {
        let mtu = if ctx.mtu == DataSize::ZERO {
            DEFAULT_MTU
        } else {
            ctx.mtu
        };
        Ok(match self {
            SchemeConfig::Ideal(_) => {
                let schedule = ctx.ideal_schedule.ok_or(BuildError::NeedsOracle("ideal"))?;
                (
                    FlowSender::new(
                        AnySender::Ideal(IdealSender::new(schedule)),
                        Source::bulk(mtu),
                        Pacer::default(),
                        mtu,
                    ),
                    AnyReceiver::Silent(SilentReceiver),
                )
            }
            SchemeConfig::Cbr(c) => {
                let size = c.packet_size.unwrap_or(mtu);
                (
                    FlowSender::new(
                        AnySender::Cbr(CbrSender::new(c)),
                        Source::bulk(size),
                        Pacer::new(Duration::ZERO),
                        size,
                    ),
                    AnyReceiver::Silent(SilentReceiver),
                )
            }
            SchemeConfig::Sprout(c) => (
                FlowSender::new(
                    AnySender::Sprout(SproutSender::new(c, mtu)),
                    Source::bulk(mtu),
                    Pacer::default(),
                    mtu,
                ),
                AnyReceiver::Sprout(Box::new(SproutReceiver::new(c, mtu, &ctx.tables))),
            ),
            SchemeConfig::Gcc(c) => (
                FlowSender::new(
                    AnySender::Gcc(GccSender::new(c)),
                    Source::media(c.media.clone(), ctx.rng, mtu),
                    Pacer::periodic(c.interval),
                    mtu,
                ),
                AnyReceiver::Gcc(Box::new(GccReceiver::new(c))),
            ),
            SchemeConfig::Cubic(c) => tcp_flow(
                AnySender::Cubic(TcpSender::new(&c.tcp, mtu, Cubic::new(c))),
                mtu,
            ),
            SchemeConfig::NewReno(c) => tcp_flow(
                AnySender::NewReno(TcpSender::new(&c.tcp, mtu, NewReno::new(c))),
                mtu,
            ),
            SchemeConfig::Vegas(c) => tcp_flow(
                AnySender::Vegas(TcpSender::new(&c.tcp, mtu, Vegas::new(c))),
                mtu,
            ),
            SchemeConfig::Compound(c) => tcp_flow(
                AnySender::Compound(TcpSender::new(&c.tcp, mtu, Compound::new(c))),
                mtu,
            ),
            SchemeConfig::Ledbat(c) => tcp_flow(
                AnySender::Ledbat(TcpSender::new(&c.tcp, mtu, Ledbat::new(c))),
                mtu,
            ),
            // A media call, per-packet ACKs, GCC's 5-ms pacer.
            SchemeConfig::Um(c) => (
                FlowSender::new(
                    AnySender::Um(Box::new(c.sender())),
                    Source::media(c.rate_params().media.clone(), ctx.rng, mtu),
                    Pacer::periodic(Duration::from_millis(5)),
                    mtu,
                ),
                AnyReceiver::Tcp(TcpReceiver::new()),
            ),
        })
    }
}

/// A TCP scheme's halves: an ACK-clocked bulk sender (full-size packets, no pacing) and the
/// shared per-packet-ACK receiver.
fn tcp_flow(sender: AnySender, mtu: DataSize) -> (FlowSender, AnyReceiver) {
    (
        FlowSender::new(sender, Source::bulk(mtu), Pacer::default(), mtu),
        AnyReceiver::Tcp(TcpReceiver::new()),
    )
}

/// `NAME[:KEY=VALUE,...]`.
impl FromStr for SchemeConfig {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        let s = s.trim();
        let (name, params) = s.split_once(':').unwrap_or((s, ""));
        let mut config = SchemeConfig::from_name(name)?;
        for item in params.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| ParamError::Malformed {
                scheme: name.to_string(),
                item: item.to_string(),
            })?;
            config.set_param(k.trim(), v.trim())?;
        }
        Ok(config)
    }
}

/// The canonical spec string (parses back to an equal config).
impl fmt::Display for SchemeConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        let params = self.params();
        for (i, (k, v)) in params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

/// Generates an enum over sender types that implements [`WireSender`] by static dispatch.
macro_rules! any_sender {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        /// Every scheme's sender half, at the wire level (feedback as bytes).
        #[derive(Debug)]
        pub enum AnySender {
            $($variant($ty),)*
            /// A scheme registered at run time (a test's, or one written in Python).
            Custom(Box<dyn WireSender + Send>),
        }

        impl WireSender for AnySender {
            fn on_packet_sent(&mut self, now: Instant, packet: &mut DataHeader, ctx: &SendContext) {
                match self {
                    $(AnySender::$variant(s) => WireSender::on_packet_sent(s, now, packet, ctx),)*
                    AnySender::Custom(s) => s.on_packet_sent(now, packet, ctx),
                }
            }
            fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), WireError> {
                match self {
                    $(AnySender::$variant(s) => WireSender::on_feedback(s, now, feedback),)*
                    AnySender::Custom(s) => s.on_feedback(now, feedback),
                }
            }
            fn on_time(&mut self, now: Instant) {
                match self {
                    $(AnySender::$variant(s) => WireSender::on_time(s, now),)*
                    AnySender::Custom(s) => s.on_time(now),
                }
            }
            fn allowance(&self, now: Instant) -> Allowance {
                match self {
                    $(AnySender::$variant(s) => WireSender::allowance(s, now),)*
                    AnySender::Custom(s) => s.allowance(now),
                }
            }
            fn poll_extra(&mut self, now: Instant) -> Option<ExtraPacket> {
                match self {
                    $(AnySender::$variant(s) => WireSender::poll_extra(s, now),)*
                    AnySender::Custom(s) => s.poll_extra(now),
                }
            }
            fn poll_timeout(&self) -> Option<Instant> {
                match self {
                    $(AnySender::$variant(s) => WireSender::poll_timeout(s),)*
                    AnySender::Custom(s) => s.poll_timeout(),
                }
            }
            fn on_timeout(&mut self, now: Instant) {
                match self {
                    $(AnySender::$variant(s) => WireSender::on_timeout(s, now),)*
                    AnySender::Custom(s) => s.on_timeout(now),
                }
            }
            fn stats(&self) -> SenderStats {
                match self {
                    $(AnySender::$variant(s) => WireSender::stats(s),)*
                    AnySender::Custom(s) => s.stats(),
                }
            }
            fn delay_target(&self) -> Option<Duration> {
                match self {
                    $(AnySender::$variant(s) => WireSender::delay_target(s),)*
                    AnySender::Custom(s) => s.delay_target(),
                }
            }
        }
    };
}

/// Generates an enum over receiver types that implements [`WireReceiver`] by static dispatch.
macro_rules! any_receiver {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        /// Every scheme's receiver half, at the wire level (feedback as bytes).
        #[derive(Debug)]
        pub enum AnyReceiver {
            $($variant($ty),)*
            /// A scheme registered at run time.
            Custom(Box<dyn WireReceiver + Send>),
        }

        impl WireReceiver for AnyReceiver {
            fn on_packet_received(&mut self, now: Instant, packet: &DataHeader) -> Result<(), WireError> {
                match self {
                    $(AnyReceiver::$variant(r) => WireReceiver::on_packet_received(r, now, packet),)*
                    AnyReceiver::Custom(r) => r.on_packet_received(now, packet),
                }
            }
            fn poll_feedback(&mut self, now: Instant) -> Option<Feedback> {
                match self {
                    $(AnyReceiver::$variant(r) => WireReceiver::poll_feedback(r, now),)*
                    AnyReceiver::Custom(r) => r.poll_feedback(now),
                }
            }
            fn poll_timeout(&self) -> Option<Instant> {
                match self {
                    $(AnyReceiver::$variant(r) => WireReceiver::poll_timeout(r),)*
                    AnyReceiver::Custom(r) => r.poll_timeout(),
                }
            }
            fn on_timeout(&mut self, now: Instant) {
                match self {
                    $(AnyReceiver::$variant(r) => WireReceiver::on_timeout(r, now),)*
                    AnyReceiver::Custom(r) => r.on_timeout(now),
                }
            }
        }
    };
}

any_sender! {
    Ideal(IdealSender),
    Cbr(CbrSender),
    Sprout(SproutSender),
    Gcc(GccSender),
    Cubic(TcpSender<Cubic>),
    NewReno(TcpSender<NewReno>),
    Vegas(TcpSender<Vegas>),
    Compound(TcpSender<Compound>),
    Ledbat(TcpSender<Ledbat>),
    Um(Box<UmSender>),
}

any_receiver! {
    Silent(SilentReceiver),
    Sprout(Box<SproutReceiver>),
    Gcc(Box<GccReceiver>),
    Tcp(TcpReceiver),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_scheme_parses_and_round_trips() {
        for info in SCHEMES {
            let c: SchemeConfig = info.name.parse().unwrap();
            assert_eq!(c.name(), info.name);
            assert_eq!(c.to_string().parse::<SchemeConfig>().unwrap(), c);
        }
    }

    #[test]
    fn listed_parameters_are_the_defaults() {
        for info in SCHEMES {
            let listed: SchemeConfig = format!("{}:{}", info.name, info.params).parse().unwrap();
            assert_eq!(
                listed,
                SchemeConfig::from_name(info.name).unwrap(),
                "{}",
                info.name
            );
        }
    }

    #[test]
    fn tcp_schemes_build_ack_clocked_flows() {
        for name in ["cubic", "newreno", "vegas", "compound", "ledbat"] {
            let c: SchemeConfig = name.parse().unwrap();
            let (mut flow, mut rx) = c.build(SchemeContext::new()).unwrap();
            let now = Instant::ZERO;
            let mut sent = vec![];
            while let Some(h) = flow.poll_transmit(now) {
                sent.push(h);
            }
            // The initial window (LEDBAT's INIT_CWND is 2), full-size packets, no pacing.
            let iw = if name == "ledbat" { 2 } else { 10 };
            assert_eq!(sent.len(), iw, "{name}");
            assert!(sent.iter().all(|h| h.size == DEFAULT_MTU));
            assert!(
                flow.poll_timeout().is_some(),
                "{name}: the retransmission timer"
            );
            // One ACK per packet opens the window further.
            let later = Instant::from_millis(40);
            rx.on_packet_received(later, &sent[0]).unwrap();
            let fb = rx.poll_feedback(later).unwrap();
            assert_eq!(fb.kind(), tcp::ack::KIND);
            assert!(rx.poll_feedback(later).is_none());
            flow.on_feedback(later, &fb).unwrap();
            assert!(flow.poll_transmit(later).is_some(), "{name}");
        }
    }

    #[test]
    fn params() {
        let c: SchemeConfig = "cbr:rate-kbps=2000".parse().unwrap();
        assert_eq!(
            c,
            SchemeConfig::Cbr(CbrConfig::default().rate(crate::units::Bitrate::from_kbps(2000)))
        );
        assert_eq!(c.to_string(), "cbr:rate-kbps=2000");
        assert!(matches!(
            "nope".parse::<SchemeConfig>(),
            Err(ParamError::UnknownScheme { .. })
        ));
        assert!(matches!(
            "cbr:speed=3".parse::<SchemeConfig>(),
            Err(ParamError::UnknownParam { .. })
        ));
        assert!(matches!(
            "cbr:rate-kbps=-3".parse::<SchemeConfig>(),
            Err(ParamError::BadValue { .. })
        ));
        assert!(matches!(
            "cbr:rate-kbps".parse::<SchemeConfig>(),
            Err(ParamError::Malformed { .. })
        ));
        let e = "cbr:speed=3"
            .parse::<SchemeConfig>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("`cbr`") && e.contains("speed"), "{e}");
    }

    #[test]
    fn ideal_needs_an_oracle() {
        let c: SchemeConfig = "ideal".parse().unwrap();
        assert_eq!(
            c.build(SchemeContext::new()).unwrap_err(),
            BuildError::NeedsOracle("ideal")
        );
    }

    /// What a (timer-driven) flow sends in its first 100 ms.
    fn first_100_ms(c: &SchemeConfig) -> Vec<crate::packet::DataHeader> {
        let (mut flow, _) = c.build(SchemeContext::new()).unwrap();
        let mut now = Instant::ZERO;
        let mut sent = vec![];
        while now < Instant::from_millis(100) {
            while let Some(h) = flow.poll_transmit(now) {
                sent.push(h);
            }
            now = flow.poll_timeout().unwrap();
        }
        sent
    }

    #[test]
    fn cbr_flow_paces_full_packets() {
        let c: SchemeConfig = "cbr:rate-kbps=1200".parse().unwrap();
        let sent = first_100_ms(&c);
        // 1200 kbit/s of 1500-byte packets = one every 10 ms.
        assert_eq!(sent.len(), 10);
        assert!(sent.iter().enumerate().all(|(i, h)| h.seq == i as u64
            && h.send_time == Instant::from_millis(10 * i as u64)
            && h.size == DEFAULT_MTU
            && h.byte_seq == 1500 * i as u64));
    }

    #[test]
    fn cbr_packet_size_sets_the_size_and_keeps_the_rate() {
        let c: SchemeConfig = "cbr:rate-kbps=1200,packet-bytes=300".parse().unwrap();
        let sent = first_100_ms(&c);
        // 1200 kbit/s of 300-byte packets = one every 2 ms.
        assert_eq!(sent.len(), 50);
        assert!(sent.iter().all(|h| h.size == DataSize::from_bytes(300)));
        assert_eq!(sent[1].send_time, Instant::from_millis(2));
    }
}
