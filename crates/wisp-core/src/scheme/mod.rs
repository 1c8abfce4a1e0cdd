//! The scheme registry: name → config → the two halves.
//!
//! A scheme is named by a spec string `NAME[:KEY=VALUE,...]` (`cbr`, `cbr:rate-kbps=2000`),
//! parsed into a [`SchemeConfig`] whose defaults match the scheme's paper. [`SchemeConfig::build`]
//! makes a [`FlowSender`] (the scheme's [`Sender`](crate::controller::Sender) with its traffic
//! source and pacer) and the matching receiver. On hot paths the halves are enums
//! ([`AnySender`], [`AnyReceiver`]) so that calls are static dispatch.
//!
//! Adding a scheme is one module and one line: the module's configuration type implements
//! [`Scheme`] (its names, typed parameters and the factory of its halves, whose messages are the
//! module's own types), and the line names it in the `schemes!` list below, which generates the
//! enums. A scheme from outside the crate is added at run time instead ([`Registry::with`]).
//! See `docs/adding-a-scheme.md`.

pub mod alfalfa;
pub mod call;
pub mod cbr;
pub mod contract;
pub mod example_aimd;
pub mod gcc;
pub mod goog_cc;
pub mod ideal;
pub mod nada;
pub mod opaque;
pub mod params;
pub mod registry;
pub mod scream;
pub mod sprout;
pub mod tcp;
pub mod ukf;
pub mod um;

use crate::controller::{
    Allowance, ExtraPacket, SendContext, SenderStats, WireReceiver, WireSender,
};
use crate::flow::FlowSender;
use crate::packet::DataHeader;
use crate::pingpair::{PairReplies, PingPairUse};
use crate::time::{Duration, Instant};
use crate::units::{Bitrate, DataSize};
use crate::video::log::VideoLog;
use crate::wire::{Feedback, WireError};
use core::fmt;
use core::str::FromStr;
use params::Parameters;

pub use alfalfa::VideoForm;
pub use cbr::{CbrConfig, CbrSender, SilentReceiver};
pub use contract::{
    BuildError, Built, ForecastTick, Forecaster, Halves, Needs, ParamError, Scheme, SchemeContext,
    listed_as,
};
pub use gcc::{GccConfig, GccReceiver, GccSender};
pub use ideal::{IdealConfig, IdealSchedule, IdealSender};
pub use registry::{CustomScheme, DynScheme, Registry, SchemeInfo};
pub use sprout::{SproutConfig, SproutReceiver, SproutSender};
pub use tcp::compound::{Compound, CompoundConfig};
pub use tcp::cubic::{Cubic, CubicConfig};
pub use tcp::ledbat::{Ledbat, LedbatConfig};
pub use tcp::newreno::{NewReno, NewRenoConfig};
pub use tcp::vegas::{Vegas, VegasConfig};
pub use tcp::{TcpReceiver, TcpSender};
pub use um::{UmFamilyConfig, UmSender};

/// Generates, from the list of built-in schemes, the enums the layers below dispatch on:
/// [`SchemeConfig`] (a scheme with its parameters), [`AnySender`] and [`AnyReceiver`] (its halves
/// at the wire level), each with a `Custom` variant for schemes registered at run time.
macro_rules! schemes {
    ($($variant:ident($config:ty)),* $(,)?) => {
        /// A scheme with its parameters.
        #[derive(Clone, Debug, PartialEq)]
        pub enum SchemeConfig {
            $($variant(Box<$config>),)*
            /// A scheme registered at run time ([`Registry::with`]).
            Custom(CustomScheme),
        }

        $(impl From<$config> for SchemeConfig {
            fn from(c: $config) -> Self {
                SchemeConfig::$variant(Box::new(c))
            }
        })*

        impl SchemeConfig {
            /// The built-in schemes' names, each with the factory of its default configuration.
            fn builtin_entries() -> Vec<(SchemeInfo, fn(&str) -> Option<SchemeConfig>)> {
                let mut v: Vec<(SchemeInfo, fn(&str) -> Option<SchemeConfig>)> = vec![];
                $(for info in <$config as Scheme>::NAMES {
                    v.push((*info, |name| <$config as Scheme>::named(name).map(SchemeConfig::from)));
                })*
                v
            }

            /// The scheme's registry name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(SchemeConfig::$variant(c) => Scheme::name(&**c),)*
                    SchemeConfig::Custom(c) => c.name(),
                }
            }

            /// Sets parameters (`KEY=VALUE` pairs of the spec string), all or none: the values
            /// are read into the scheme's configuration and validated together.
            pub fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
                let name = self.name();
                let r = match self {
                    $(SchemeConfig::$variant(c) => Parameters::set_params(&mut **c, given),)*
                    SchemeConfig::Custom(c) => c.set_params(given),
                };
                r.map_err(|e| e.in_scheme(name))
            }

            /// Every parameter with its value (`wisp schemes` lists them for the defaults).
            pub fn param_list(&self) -> Vec<(&'static str, String)> {
                match self {
                    $(SchemeConfig::$variant(c) => Parameters::param_list(&**c),)*
                    SchemeConfig::Custom(c) => c.param_list(),
                }
            }

            /// Every key the scheme accepts with its help text (its configuration field's doc
            /// comment).
            pub fn param_docs(&self) -> Vec<(String, String)> {
                match self {
                    $(SchemeConfig::$variant(c) => Parameters::param_docs(&**c),)*
                    SchemeConfig::Custom(c) => c.param_docs(),
                }
            }

            /// The parameters of the default configuration of this one's name.
            fn default_param_list(&self) -> Vec<(&'static str, String)> {
                match self {
                    $(SchemeConfig::$variant(c) => {
                        let d = <$config as Scheme>::named(Scheme::name(&**c))
                            .expect("a scheme's name is one of its own");
                        Parameters::param_list(&d)
                    })*
                    SchemeConfig::Custom(c) => c.default_param_list(),
                }
            }

            /// What a flow of it needs from the engine beyond packets and feedback.
            pub fn needs(&self) -> Needs {
                match self {
                    $(SchemeConfig::$variant(c) => Scheme::needs(&**c),)*
                    SchemeConfig::Custom(c) => c.needs(),
                }
            }

            /// Its receiver as a forecaster of a saturated link, if it makes forecasts
            /// ([`Scheme::forecaster`]).
            pub fn forecaster(&self, mtu: DataSize) -> Option<Box<dyn Forecaster>> {
                match self {
                    $(SchemeConfig::$variant(c) => Scheme::forecaster(&**c, mtu),)*
                    SchemeConfig::Custom(c) => c.forecaster(mtu),
                }
            }

            fn always_named(&self) -> &'static [&'static str] {
                match self {
                    $(SchemeConfig::$variant(_) => <$config as Scheme>::ALWAYS_NAMED,)*
                    SchemeConfig::Custom(c) => c.always_named(),
                }
            }

            /// Builds the flow driver and receiver.
            pub fn build(
                &self,
                ctx: SchemeContext,
            ) -> Result<(FlowSender<AnySender>, AnyReceiver), BuildError> {
                match self {
                    $(SchemeConfig::$variant(c) => {
                        let h = Scheme::build(&**c, ctx)?;
                        Ok((
                            FlowSender::new(AnySender::$variant(h.sender), h.source, h.pacer, h.mtu),
                            AnyReceiver::$variant(h.receiver),
                        ))
                    })*
                    SchemeConfig::Custom(c) => c.build(ctx),
                }
            }
        }

        /// Every scheme's sender half, at the wire level (feedback as bytes).
        #[derive(Debug)]
        pub enum AnySender {
            $($variant(<$config as Scheme>::Sender),)*
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
            fn take_payload(&mut self, seq: u64) -> Option<Vec<u8>> {
                match self {
                    $(AnySender::$variant(s) => WireSender::take_payload(s, seq),)*
                    AnySender::Custom(s) => s.take_payload(seq),
                }
            }
        }

        /// Every scheme's receiver half, at the wire level (feedback as bytes).
        #[derive(Debug)]
        pub enum AnyReceiver {
            $($variant(<$config as Scheme>::Receiver),)*
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
            fn on_payload(&mut self, seq: u64, payload: &[u8]) {
                match self {
                    $(AnyReceiver::$variant(r) => WireReceiver::on_payload(r, seq, payload),)*
                    AnyReceiver::Custom(r) => r.on_payload(seq, payload),
                }
            }
            fn on_ping_pair(&mut self, replies: PairReplies, mac_rate: Bitrate) -> Option<PingPairUse> {
                match self {
                    $(AnyReceiver::$variant(r) => WireReceiver::on_ping_pair(r, replies, mac_rate),)*
                    AnyReceiver::Custom(r) => r.on_ping_pair(replies, mac_rate),
                }
            }
            fn video_log(&self) -> Option<&VideoLog> {
                match self {
                    $(AnyReceiver::$variant(r) => WireReceiver::video_log(r),)*
                    AnyReceiver::Custom(r) => r.video_log(),
                }
            }
        }
    };
}

// The built-in schemes, in the order `wisp schemes` lists them: one line each.
schemes! {
    Ideal(IdealConfig),
    Cbr(CbrConfig),
    Sprout(SproutConfig),
    Alfalfa(alfalfa::AlfalfaConfig),
    GoogCc(goog_cc::GoogCcConfig),
    Gcc(GccConfig),
    GccTwcc(gcc::twcc::GccTwccConfig),
    Nada(nada::NadaConfig),
    Scream(scream::ScreamConfig),
    Cubic(CubicConfig),
    NewReno(NewRenoConfig),
    Vegas(VegasConfig),
    Compound(CompoundConfig),
    Ledbat(LedbatConfig),
    Um(UmFamilyConfig),
    Ukf(ukf::UkfConfig),
}

/// Every built-in scheme, in listing order.
pub fn schemes() -> Vec<SchemeInfo> {
    Registry::builtin().schemes().collect()
}

impl SchemeConfig {
    /// The default configuration of the built-in scheme called `name`.
    pub fn from_name(name: &str) -> Result<Self, ParamError> {
        Registry::builtin().named(name)
    }

    /// Sets one parameter (`KEY=VALUE` of the spec string).
    pub fn set_param(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        self.set_params(&[(key, value)])
    }

    /// The parameters for the canonical spec string: those that differ from the defaults of
    /// the scheme's name (and those it always names, like `cbr`'s rate).
    fn params(&self) -> Vec<(&'static str, String)> {
        params::diff(
            self.param_list(),
            &self.default_param_list(),
            self.always_named(),
        )
    }
}

/// `NAME[:KEY=VALUE,...]`, a built-in scheme ([`Registry::builtin`]).
impl FromStr for SchemeConfig {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        Registry::builtin().parse(s)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::DEFAULT_MTU;
    use crate::units::DataSize;

    #[test]
    fn every_registered_scheme_parses_and_round_trips() {
        for info in schemes() {
            let c: SchemeConfig = info.name.parse().unwrap();
            assert_eq!(c.name(), info.name);
            assert_eq!(c.to_string().parse::<SchemeConfig>().unwrap(), c);
        }
    }

    /// The parameter lists `wisp schemes` showed when they were written by hand (before the
    /// lists were generated from the configurations): for each scheme listed here, the
    /// generated list must be the same keys, in the same order, with the same defaults. A
    /// scheme added since needs no line here (its module's tests cover its defaults).
    const HAND_WRITTEN: &[(&str, &str)] = &[
        ("ideal", ""),
        ("cbr", "rate-kbps=1000"),
        (
            "sprout",
            "sigma=200,outage-escape=1,outage-entry=0.05,bins=256,max-rate=1000,tick-ms=20,\
             ticks=8,quantile=0.05,forecast=paper,lookahead=5,reorder-ms=10,heartbeat-ms=20,\
             heartbeat-bytes=64,heartbeat-max-ms=100,sigmas=none,share=0.002",
        ),
        (
            "sprout-ewma",
            "alpha=0.125,tick-ms=20,ticks=8,lookahead=5,reorder-ms=10,heartbeat-ms=20,\
             heartbeat-bytes=64,heartbeat-max-ms=100",
        ),
        (
            "alfalfa",
            "fps=25,anchor-timeout-ms=500,frame-share=1,rate=sprout,base=loss-aware,cbr-kbps=1000,\
             min-intact=0.9,closed-ticks=0,hold=off,encode-ms=0,parity=auto,codec=model",
        ),
        (
            "sprout-conventional",
            "fps=25,anchor-timeout-ms=500,frame-share=1,rate=sprout,base=conventional,\
             cbr-kbps=1000,min-intact=0.9,closed-ticks=0,hold=off,encode-ms=0,parity=off,codec=model",
        ),
        (
            "gcc-video",
            "fps=25,anchor-timeout-ms=500,frame-share=1,rate=gcc,base=conventional,cbr-kbps=1000,\
             min-intact=0.9,closed-ticks=0,hold=off,encode-ms=0,parity=off,codec=model",
        ),
        (
            "cbr-video",
            "fps=25,anchor-timeout-ms=500,frame-share=1,rate=cbr,base=conventional,cbr-kbps=1000,\
             min-intact=0.9,closed-ticks=0,hold=off,encode-ms=0,parity=off,codec=model",
        ),
        (
            "gcc-remb",
            "prefilter=off,filter=kalman,threshold=libwebrtc,interval-ms=5,rate-window-ms=500,\
             start-kbps=300,min-kbps=50,max-kbps=2500,pace-factor=2.5,audio-kbps=32",
        ),
        (
            "gcc-grouping",
            "prefilter=paper,filter=kalman,threshold=libwebrtc,interval-ms=5,rate-window-ms=500,\
             start-kbps=300,min-kbps=50,max-kbps=2500,pace-factor=2.5,audio-kbps=32",
        ),
        (
            "gcc-trendline",
            "prefilter=off,filter=trendline,threshold=libwebrtc,interval-ms=5,rate-window-ms=500,\
             start-kbps=300,min-kbps=50,max-kbps=2500,pace-factor=2.5,audio-kbps=32",
        ),
        (
            "gcc-twcc",
            "start-kbps=300,min-kbps=50,max-kbps=2500,pace-factor=2.5,audio-kbps=32,\
             feedback-interval-ms=50",
        ),
        (
            "cubic",
            "c=0.4,beta=0.7,fast-convergence=true,hystart=true,iw=10,rto-min-ms=1000,rwnd-kb=none",
        ),
        ("newreno", "iw=10,rto-min-ms=1000,rwnd-kb=none"),
        (
            "vegas",
            "alpha=2,beta=4,gamma=1,iw=10,rto-min-ms=1000,rwnd-kb=none",
        ),
        (
            "compound",
            "alpha=0.125,beta=0.5,k=0.75,gamma=30,zeta=1,iw=10,rto-min-ms=1000,rwnd-kb=none",
        ),
        (
            "ledbat",
            "target-ms=100,gain=1,base-history=10,current-filter=4,min-cwnd=2,allowed-increase=1,\
             iw=2,rto-min-ms=1000,rwnd-kb=none",
        ),
        (
            "newreno-like",
            "start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,\
             base-window-s=600",
        ),
        (
            "vegas-like",
            "alpha=2,beta=4,start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,\
             audio-kbps=32,base-window-s=600",
        ),
        (
            "ctcp-like",
            "alpha=0.125,beta=0.5,k=0.75,gamma=30,zeta=1,start-kbps=100,min-kbps=50,\
             max-kbps=10000,pace-factor=2.5,audio-kbps=32,base-window-s=600",
        ),
        (
            "tfrc",
            "start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,\
             base-window-s=600",
        ),
        (
            "um",
            "k0=25000,k2=1.6,start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,\
             audio-kbps=32,base-window-s=600",
        ),
        (
            "adaptive-um",
            "alpha-max=25000,alpha-min=1250,beta-min=0.1,beta-max=1,delta-max=2,\
             delta-hat-ms=auto,probe-every-s=30,probe-first-s=5,depth=0.4,window-ms=1000,\
             window-samples=50,settle-ms=300,quantile=0.99,margin=0.25,memory-s=180,samples=200,\
             floor-ms=10,start-kbps=100,min-kbps=50,max-kbps=10000,pace-factor=2.5,audio-kbps=32,\
             base-window-s=600",
        ),
        (
            "skype-ukf",
            "noise-scaling=0,sigma-e-ms=2,sigma-rate=0.5,alpha=0.001,ewma=0.25,\
             channel-access-ms=0.125,feedback-ms=100,share=0.9,start-kbps=300,min-kbps=50,max-kbps=2500,\
             pace-factor=2.5,audio-kbps=32",
        ),
        (
            "kwikr",
            "noise-scaling=4,sigma-e-ms=2,sigma-rate=0.5,alpha=0.001,ewma=0.25,\
             channel-access-ms=0.125,feedback-ms=100,share=0.9,start-kbps=300,min-kbps=50,max-kbps=2500,\
             pace-factor=2.5,audio-kbps=32",
        ),
    ];

    #[test]
    fn generated_parameter_lists_are_the_hand_written_ones() {
        let all = schemes();
        for (name, expected) in HAND_WRITTEN {
            let info = all
                .iter()
                .find(|s| s.name == *name)
                .unwrap_or_else(|| panic!("{name} is no longer registered"));
            assert_eq!(info.params(), *expected, "{name}");
        }
    }

    /// Every scheme reports bad parameters the same way: an unknown key lists the accepted
    /// ones, a value that does not parse or is out of range names the key and what was
    /// expected, always with the scheme's name.
    #[test]
    fn every_scheme_reports_bad_parameters_the_same_way() {
        for info in schemes() {
            let e = format!("{}:speed=3", info.name)
                .parse::<SchemeConfig>()
                .unwrap_err();
            let ParamError::UnknownParam {
                scheme,
                key,
                accepted,
            } = &e
            else {
                panic!("{}: {e:?}", info.name)
            };
            assert_eq!((scheme.as_str(), key.as_str()), (info.name, "speed"));
            for (k, _) in info.param_list() {
                assert!(
                    accepted.split(", ").any(|a| a == k),
                    "{}: {k} in {accepted}",
                    info.name
                );
            }
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("`{}`", info.name)) && msg.contains("`speed`"),
                "{msg}"
            );
            // Each listed key: a value of the wrong kind, then (for numbers) a negative one.
            for (k, default) in info.param_list() {
                for bad in ["x", "-1e12"] {
                    if bad != "x" && default.parse::<f64>().is_err() && default != "none" {
                        continue;
                    }
                    let spec = format!("{}:{k}={bad}", info.name);
                    match spec.parse::<SchemeConfig>() {
                        Err(ParamError::BadValue {
                            scheme, key, value, ..
                        }) => {
                            assert_eq!(
                                (scheme.as_str(), key.as_str(), value.as_str()),
                                (info.name, k, bad),
                                "{spec}"
                            );
                        }
                        r => panic!("{spec}: {r:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn every_listed_parameter_has_help_text() {
        for info in schemes() {
            let docs = info.param_docs();
            for (k, _) in info.param_list() {
                assert!(
                    docs.iter().any(|(d, text)| d == k && !text.is_empty()),
                    "{}: {k}",
                    info.name
                );
            }
        }
    }

    #[test]
    fn snake_case_keys_are_read_as_kebab_case() {
        let a: SchemeConfig = "gcc-remb:start_kbps=400,pace_factor=2".parse().unwrap();
        let b: SchemeConfig = "gcc-remb:start-kbps=400,pace-factor=2".parse().unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "gcc-remb:start-kbps=400,pace-factor=2");
    }

    #[test]
    fn gcc_rates_are_cross_checked_like_the_um_familys() {
        for name in [
            "gcc",
            "gcc-remb",
            "gcc-grouping",
            "gcc-trendline",
            "um",
            "tfrc",
            "adaptive-um",
        ] {
            for (given, blamed) in [
                ("min-kbps=3000", "min-kbps"),
                ("max-kbps=40", "max-kbps"),
                ("start-kbps=20", "start-kbps"),
                ("start-kbps=20000", "start-kbps"),
                ("max-kbps=500,min-kbps=600", "min-kbps"),
            ] {
                let spec = format!("{name}:{given}");
                match spec.parse::<SchemeConfig>() {
                    Err(ParamError::BadValue {
                        scheme,
                        key,
                        expected,
                        ..
                    }) => {
                        assert_eq!((scheme.as_str(), key.as_str()), (name, blamed), "{spec}");
                        assert!(
                            expected.starts_with("min-kbps ≤ start-kbps ≤ max-kbps"),
                            "{expected}"
                        );
                    }
                    r => panic!("{spec}: {r:?}"),
                }
            }
            // Consistent together, though not one key at a time from the defaults.
            let c: SchemeConfig = format!("{name}:min-kbps=3000,max-kbps=4000,start-kbps=3500")
                .parse()
                .unwrap();
            assert_eq!(
                c.to_string(),
                format!("{name}:start-kbps=3500,min-kbps=3000,max-kbps=4000")
            );
        }
        let mut c: SchemeConfig = "gcc-remb".parse().unwrap();
        assert!(c.set_param("min-kbps", "3000").is_err());
        assert_eq!(
            c,
            "gcc-remb".parse().unwrap(),
            "a rejected value changes nothing"
        );
    }

    #[test]
    fn canonical_strings_are_unchanged() {
        for (spec, canonical) in [
            ("cbr", "cbr:rate-kbps=1000"),
            ("cbr:rate=2mbps", "cbr:rate-kbps=2000"),
            // Of `rate` and `rate-kbps`, the one given last counts.
            ("cbr:rate=2mbps,rate-kbps=300", "cbr:rate-kbps=300"),
            ("cbr:rate-kbps=300,rate=2mbps", "cbr:rate-kbps=2000"),
            (
                "cbr:rate_kbps=1200,packet-bytes=300",
                "cbr:rate-kbps=1200,packet-bytes=300",
            ),
            (
                "gcc-grouping:prefilter=libwebrtc",
                "gcc-grouping:prefilter=libwebrtc",
            ),
            ("gcc-remb:prefilter=algorithm1", "gcc-grouping"),
            ("gcc-grouping:prefilter=none", "gcc-remb"),
            ("gcc-remb:filter=trendline", "gcc-trendline"),
            (
                "gcc-remb:threshold=draft,filter=scalar",
                "gcc-remb:filter=scalar,threshold=draft",
            ),
            (
                "sprout:sigmas=50/100/200/400/800",
                "sprout:sigmas=50/100/200/400/800",
            ),
            ("sprout:sigmas=none", "sprout"),
            (
                "sprout-ewma:alpha=0.25,tick-ms=10",
                "sprout-ewma:alpha=0.25,tick-ms=10",
            ),
            (
                "cubic:hystart=off,rwnd-kb=4500",
                "cubic:hystart=false,rwnd-kb=4500",
            ),
            ("ledbat:iw=2", "ledbat"),
            ("adaptive-um:delta-hat-ms=40", "adaptive-um:delta-hat-ms=40"),
            ("adaptive-um:delta-hat-ms=auto", "adaptive-um"),
            ("ideal", "ideal"),
        ] {
            let c: SchemeConfig = spec.parse().unwrap();
            assert_eq!(c.to_string(), canonical, "{spec}");
            assert_eq!(canonical.parse::<SchemeConfig>().unwrap(), c, "{spec}");
        }
    }

    #[test]
    fn listed_parameters_are_the_defaults() {
        for info in schemes() {
            let listed: SchemeConfig = format!("{}:{}", info.name, info.params()).parse().unwrap();
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
            SchemeConfig::from(CbrConfig::default().rate(crate::units::Bitrate::from_kbps(2000)))
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

    /// A key given twice in one list is refused, in a spec string or among the pairs given at
    /// once (keys compared with `_` read as `-`); lists set one after the other layer.
    #[test]
    fn a_key_given_twice_is_refused() {
        for (spec, key) in [
            ("cbr:rate-kbps=1000,rate-kbps=2000", "rate-kbps"),
            ("cbr:rate-kbps=1000,rate_kbps=2000", "rate_kbps"),
            ("cbr:rate=1mbps, rate =2mbps", "rate"),
            (
                "gcc-remb:min-kbps=100,max-kbps=900,min_kbps=200",
                "min_kbps",
            ),
            ("sprout-ewma:alpha=0.5,alpha=x", "alpha"),
        ] {
            let e = spec.parse::<SchemeConfig>().unwrap_err();
            let name = spec.split(':').next().unwrap();
            assert_eq!(
                e,
                ParamError::GivenTwice {
                    scheme: name.to_string(),
                    key: key.to_string()
                },
                "{spec}"
            );
            assert_eq!(
                e.to_string(),
                format!("scheme `{name}`: parameter `{key}` given twice")
            );
        }
        let mut c: SchemeConfig = "cbr:rate-kbps=1000".parse().unwrap();
        assert!(matches!(
            c.set_params(&[("packet-bytes", "300"), ("packet_bytes", "400")]),
            Err(ParamError::GivenTwice { .. })
        ));
        c.set_param("rate-kbps", "2000").unwrap();
        c.set_params(&[("rate-kbps", "3000"), ("packet-bytes", "300")])
            .unwrap();
        assert_eq!(c.to_string(), "cbr:rate-kbps=3000,packet-bytes=300");
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
