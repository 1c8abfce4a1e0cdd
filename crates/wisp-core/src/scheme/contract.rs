//! The contract a scheme fulfils, apart from the list of schemes ([`crate::scheme`]'s
//! `schemes!`) and the name lookup ([`super::registry`]): the [`Scheme`] trait (names, typed
//! parameters, the factory of the two halves), what a scheme may know of where it runs
//! ([`SchemeContext`]), what it needs from the engine beyond packets and feedback ([`Needs`]),
//! and the errors of configuring and building one. The halves' own contract, the hooks the
//! engine calls, is [`crate::controller`].

use super::IdealSchedule;
use super::params::Parameters;
use crate::controller::{Receiver, Sender};
use crate::pacer::Pacer;
use crate::packet::DEFAULT_MTU;
use crate::source::{MediaConfig, Source, SourceRng};
use crate::tables::Tables;
use crate::time::{Duration, Instant};
use crate::units::DataSize;
use core::fmt;

/// One line of `wisp schemes`: a name a scheme is listed under, with its summary (its
/// parameters: [`SchemeInfo::param_list`], from the registry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeInfo {
    pub name: &'static str,
    pub summary: &'static str,
}

/// What a flow of a scheme needs from the engine that runs it beyond packets and feedback
/// (the simulator and `wisp-net` read it; neither names a scheme). Nothing by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Wake the sender at exactly the instants it asks for (no timer granularity or jitter):
    /// the ideal sender, whose schedule is the link's own.
    pub exact_timers: bool,
    /// Probe the flow's Wi-Fi downlink with Ping-Pair (Das et al., CoNEXT 2017: Kwikr) where
    /// its path ends in one, and hand each pair to the receiver
    /// ([`Receiver::on_ping_pair`]).
    pub ping_pair: bool,
}

/// An error in a scheme spec or its parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    #[error("unknown scheme `{name}` (known: {known})")]
    UnknownScheme { name: String, known: String },
    #[error("scheme `{scheme}`: unknown parameter `{key}` (accepted: {accepted})")]
    UnknownParam {
        scheme: String,
        key: String,
        /// The accepted keys, separated by `, ` (`(none)` for a scheme without parameters).
        accepted: String,
    },
    #[error("scheme `{scheme}`: invalid value `{value}` for `{key}`: expected {expected}")]
    BadValue {
        scheme: String,
        key: String,
        value: String,
        expected: String,
    },
    #[error("scheme `{scheme}`: parameter `{item}` is not of the form KEY=VALUE")]
    Malformed { scheme: String, item: String },
    /// A key given twice in one list (keys compared with `_` read as `-`): one of the values
    /// would be dropped without a word.
    #[error("scheme `{scheme}`: parameter `{key}` given twice")]
    GivenTwice { scheme: String, key: String },
}

impl ParamError {
    pub(super) fn in_scheme(self, name: &str) -> Self {
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
            ParamError::GivenTwice { key, .. } => ParamError::GivenTwice {
                scheme: name.to_string(),
                key,
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
    /// A configuration that cannot run as given (e.g. `alfalfa:codec=vp8` without the codec,
    /// which the CLI provides with `--video`).
    #[error("{0}")]
    Unavailable(String),
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
    /// IP and UDP header bytes of each packet on the flow's path: what a scheme that fills
    /// packets with payload (`alfalfa`) leaves for them. IPv4's 28 in the simulator (zero means
    /// that); `wisp send` gives its path's family's (48 over IPv6).
    pub ip_udp_header: DataSize,
    /// A video codec implementation for a scheme that codes video with a codec wisp-core does
    /// not link (VP8) and was configured without one: `wisp recv --video` offers it to whatever
    /// sender arrives.
    pub codecs: Option<crate::video::InjectedCodecs>,
}

impl fmt::Debug for SchemeContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemeContext")
            .field("mtu", &self.mtu)
            .field("ideal_schedule", &self.ideal_schedule.is_some())
            .field("rng", &self.rng.is_some())
            .field("tables", &self.tables)
            .field("ip_udp_header", &self.ip_udp_header)
            .field("codecs", &self.codecs.as_ref().map(|c| c.0.name()))
            .finish()
    }
}

impl SchemeContext {
    /// The MTU, or the default one if none was set.
    pub fn mtu(&self) -> DataSize {
        if self.mtu == DataSize::ZERO {
            DEFAULT_MTU
        } else {
            self.mtu
        }
    }

    /// The IP and UDP header bytes, or IPv4's if none were set.
    pub fn ip_udp_header(&self) -> DataSize {
        if self.ip_udp_header == DataSize::ZERO {
            crate::packet::IP_UDP_OVERHEAD
        } else {
            self.ip_udp_header
        }
    }

    /// The flow's media source (see [`MediaSource`](crate::source::MediaSource)): packets of
    /// at most [`mtu`](Self::mtu) with this path's [`ip_udp_header`](Self::ip_udp_header),
    /// drawing from the context's random stream (taken: one source per context).
    pub fn media_source(&mut self, config: MediaConfig) -> Source {
        Source::media(config, self.rng.take(), self.mtu(), self.ip_udp_header())
    }

    /// The halves of a flow that sends `media` ([`media_source`](Self::media_source)) through a
    /// pacer ticking every `interval`, in packets of at most the [`mtu`](Self::mtu): how the
    /// schemes of a call (`gcc`, `gcc-remb`, `gcc-twcc`, `skype-ukf`, the Mehrotra family) are
    /// built.
    pub fn media_halves<S, R>(
        mut self,
        sender: S,
        receiver: R,
        media: MediaConfig,
        interval: Duration,
    ) -> Halves<S, R> {
        Halves {
            sender,
            receiver,
            source: self.media_source(media),
            pacer: Pacer::periodic(interval),
            mtu: self.mtu(),
        }
    }

    pub fn new() -> Self {
        SchemeContext {
            mtu: DEFAULT_MTU,
            ideal_schedule: None,
            rng: None,
            tables: Tables::new(),
            ip_udp_header: crate::packet::IP_UDP_OVERHEAD,
            codecs: None,
        }
    }
}

/// What a scheme's configuration builds: its two halves, and the traffic source and pacer the
/// flow driver feeds the sender's allowance to.
#[derive(Debug)]
pub struct Halves<S, R> {
    pub sender: S,
    pub receiver: R,
    pub source: Source,
    pub pacer: Pacer,
    /// The largest packet the flow sends.
    pub mtu: DataSize,
}

/// What [`Scheme::build`] returns: the halves of scheme `S`, or why they cannot be built.
pub type Built<S> = Result<Halves<<S as Scheme>::Sender, <S as Scheme>::Receiver>, BuildError>;

/// [`Scheme::NAMES`] and [`Scheme::named`] of a configuration listed under one name, written
/// inside its `impl Scheme`: `listed_as! { "cbr", "constant bit rate, no feedback",
/// CbrConfig::default() }` lists it as `cbr` with that summary, and `named("cbr")` gives the
/// default (any other name, none). A configuration with presets writes the two itself.
#[doc(hidden)]
#[macro_export]
macro_rules! __listed_as {
    ($name:expr, $summary:expr, $default:expr $(,)?) => {
        const NAMES: &'static [$crate::scheme::SchemeInfo] = &[$crate::scheme::SchemeInfo {
            name: $name,
            summary: $summary,
        }];

        fn named(name: &str) -> Option<Self> {
            (name == $name).then(|| $default)
        }
    };
}
pub use crate::__listed_as as listed_as;

/// A scheme, as its configuration: the factory of its halves.
///
/// Default values come from [`Scheme::named`], which must give the paper's values; the
/// parameters are the configuration's own fields ([`Parameters`], which a configuration declared
/// with [`scheme_config!`](super::params::scheme_config) has). The sender and receiver must agree on
/// the message types (the bounds say so), so that the simulator and `wisp-net` can carry their
/// bytes without knowing them.
pub trait Scheme: Parameters + Clone + PartialEq + fmt::Debug + Send + Sync + 'static {
    type Sender: Sender + fmt::Debug + Send + 'static;
    type Receiver: Receiver<
            Feedback = <Self::Sender as Sender>::Feedback,
            Fields = <Self::Sender as Sender>::Fields,
        > + fmt::Debug
        + Send
        + 'static;

    /// The names it is listed under, with their one-line summaries, in listing order. Several
    /// names are presets of one configuration type (`gcc`, `gcc-grouping`).
    const NAMES: &'static [SchemeInfo];

    /// Parameters the canonical spec names even at their default (`cbr`'s rate).
    const ALWAYS_NAMED: &'static [&'static str] = &[];

    /// The default configuration of `name`, one of [`Scheme::NAMES`].
    fn named(name: &str) -> Option<Self>;

    /// The name this configuration is listed under. By default the first of [`Scheme::NAMES`],
    /// which is right for a configuration listed under one name; a type with presets overrides
    /// it.
    fn name(&self) -> &'static str {
        Self::NAMES[0].name
    }

    /// Builds the two halves for a flow in `ctx`.
    fn build(&self, ctx: SchemeContext) -> Built<Self>;

    /// What a flow of this configuration needs from the engine ([`Needs`]); nothing by default.
    fn needs(&self) -> Needs {
        Needs::default()
    }

    /// Its receiver as a [`Forecaster`] of a link (`wisp forecast`), if it makes forecasts;
    /// packets of `mtu` bytes. None by default.
    fn forecaster(&self, mtu: DataSize) -> Option<Box<dyn Forecaster>> {
        let _ = mtu;
        None
    }
}

/// A receiver that forecasts its link, fed the deliveries of a link that a sender keeps
/// saturated (`wisp forecast`): each delivery is one packet of the MTU, and the sender
/// promises no gap.
pub trait Forecaster {
    /// The forecast's horizon: how many cumulative counts each tick gives.
    fn horizon(&self) -> usize;
    /// A packet delivered at `at` (in order, no earlier than the last).
    fn on_delivery(&mut self, at: Instant);
    /// Adds the ticks that end at or before `until`, since the last call, to `out`.
    fn ticks_until(&mut self, until: Instant, out: &mut Vec<ForecastTick>);
}

/// One tick of a [`Forecaster`].
#[derive(Clone, Debug, PartialEq)]
pub struct ForecastTick {
    /// The end of the tick.
    pub end: Instant,
    /// Packets received, or written off as lost, by the end of the tick.
    pub received_or_lost: u64,
    /// The forecast at the end of the tick: packets the link will deliver by the end of each
    /// of the next [`Forecaster::horizon`] ticks (cumulative).
    pub cumulative: Vec<f64>,
}
