//! `docs/adding-a-link.md`, followed: a link model added from outside wisp-sim in one module
//! (`square`, below) and one registry line (`link::register(&square::SQUARE)`), then parsed,
//! listed and run in the simulator and in a scenario file like any built-in model.
//!
//! The toy is a square wave: the link serialises at `high` for the first half of each `period`
//! and at `low` for the second, so its mean rate is (high + low) / 2. Its server integrates the
//! rate across the changes, as the built-in rate links do.

mod square {
    use std::fmt::Write;
    use wisp_core::units::parse_duration;
    use wisp_core::{Bitrate, Duration, Instant};
    use wisp_sim::link::{
        LinkKind, LinkModel, LinkName, LinkProcess, LinkSpec, LoadLink, Serve, Service,
    };
    use wisp_sim::trace::TraceError;

    /// The kind: its name, its help, its parser.
    #[derive(Clone, Copy, Debug)]
    pub struct SquareKind;

    /// What is registered.
    pub static SQUARE: SquareKind = SquareKind;

    impl LinkKind for SquareKind {
        fn names(&self) -> &'static [LinkName] {
            &[LinkName {
                name: "square",
                usage: "square:high=RATE,low=RATE,period=T",
                help: "a square-wave rate: high for the first half of each period, low after",
            }]
        }

        fn parse(&self, _name: &str, args: Option<&str>) -> Result<LinkSpec, String> {
            let mut s = SquareSpec {
                high: Bitrate::ZERO,
                low: Bitrate::ZERO,
                period: Duration::ZERO,
            };
            for item in args.unwrap_or_default().split(',') {
                let (k, v) = item
                    .split_once('=')
                    .ok_or_else(|| format!("`{item}` is not KEY=VALUE"))?;
                let rate = |v: &str| v.parse::<Bitrate>().map_err(|e| e.0);
                match k {
                    "high" => s.high = rate(v)?,
                    "low" => s.low = rate(v)?,
                    "period" => s.period = parse_duration(v).map_err(|e| e.0)?,
                    other => return Err(format!("unknown parameter `{other}`")),
                }
            }
            if s.low == Bitrate::ZERO || s.high < s.low || s.period.is_zero() {
                return Err("needs 0 < low <= high and a positive period".into());
            }
            Ok(LinkSpec::plugged(s))
        }
    }

    /// The spec (it reads no file).
    #[derive(Clone, Debug, PartialEq)]
    pub struct SquareSpec {
        pub high: Bitrate,
        pub low: Bitrate,
        pub period: Duration,
    }

    impl LoadLink for SquareSpec {
        fn load(&self) -> Result<LinkModel, TraceError> {
            Ok(LinkModel::plugged(SquareLink(self.clone())))
        }
    }

    /// The loaded link.
    #[derive(Clone, Debug, PartialEq)]
    pub struct SquareLink(SquareSpec);

    impl SquareLink {
        /// The rate at `t` and when it next changes.
        fn phase(&self, t: Instant) -> (Bitrate, Instant) {
            let half = self.0.period.as_nanos() / 2;
            let k = t.as_nanos() / half;
            let rate = if k % 2 == 0 { self.0.high } else { self.0.low };
            (rate, Instant::from_nanos((k + 1) * half))
        }
    }

    impl LinkProcess for SquareLink {
        type Server = SquareServer;

        fn name(&self) -> String {
            let mut s = String::new();
            let p = self.0.period.as_secs_f64();
            write!(
                s,
                "square:high={},low={},period={p}s",
                self.0.high, self.0.low
            )
            .unwrap();
            s
        }

        fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
            let (mut t, mut bits) = (from, 0.0);
            while t < to {
                let (rate, change) = self.phase(t);
                let end = change.min(to);
                bits += rate.bps() as f64 * (end - t).as_secs_f64();
                t = end;
            }
            bits / 8.0
        }

        fn server(&self, _seed: u64) -> SquareServer {
            SquareServer(self.clone())
        }
    }

    /// The server: a serialiser at the square wave's rate.
    #[derive(Clone, Debug)]
    pub struct SquareServer(SquareLink);

    impl Serve for SquareServer {
        fn next_start(&mut self, t: Instant) -> Option<Instant> {
            Some(t)
        }

        fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
            let mut bits = size as u128 * 8;
            let mut now = t;
            loop {
                let (rate, change) = self.0.phase(now);
                let rate = u128::from(rate.bps());
                let need = (bits * 1_000_000_000).div_ceil(rate);
                let left = u128::from((change - now).as_nanos());
                if need <= left {
                    let done = now + Duration::from_nanos(need as u64);
                    return Service {
                        done,
                        delivered: Some(done),
                    };
                }
                bits -= left * rate / 1_000_000_000;
                now = change;
            }
        }
    }
}

use wisp_core::{Bitrate, Duration};
use wisp_sim::link::{self, LinkModel, LinkSpec};
use wisp_sim::run::run;
use wisp_sim::scenario_file;
use wisp_sim::sim::Scenario;

/// The one registry line (every test calls it: registering twice does nothing).
fn register() {
    link::register(&square::SQUARE).unwrap();
}

const SPEC: &str = "square:high=4mbps,low=1mbps,period=2s";

#[test]
fn the_toy_link_is_listed_and_parsed_like_a_built_in_one() {
    register();
    assert!(link::names().iter().any(|n| n.name == "square"));
    assert!(
        link::names().iter().any(|n| n.name == "trace"),
        "the built-ins stay"
    );
    assert!(link::help().contains("square:high=RATE,low=RATE,period=T (a square-wave rate"));
    let spec: LinkSpec = SPEC.parse().unwrap();
    assert!(matches!(spec, LinkSpec::Plugged(_)), "{spec:?}");
    assert_eq!(spec, SPEC.parse().unwrap());
    assert_ne!(
        spec,
        "square:high=4mbps,low=2mbps,period=2s".parse().unwrap()
    );
    assert_eq!(
        spec.load().unwrap().name(),
        "square:high=4mbps,low=1mbps,period=2s"
    );
    // Its errors come with the spec, as every kind's.
    let e = "square:high=1mbps,low=4mbps,period=2s"
        .parse::<LinkSpec>()
        .unwrap_err();
    assert!(e.to_string().starts_with("invalid link `square:"), "{e}");
    // The parser's list of kinds names it.
    let e = "nope:1".parse::<LinkSpec>().unwrap_err();
    assert!(e.message.contains(", square"), "{e}");
    // A spec that nests specs finds it too.
    let h = "handover:const:1mbps+square:high=4mbps,low=1mbps,period=2s@10s";
    assert!(h.parse::<LinkSpec>().is_ok());
    // A kind that takes a name another kind has is refused.
    #[derive(Debug)]
    struct Const;
    impl link::LinkKind for Const {
        fn names(&self) -> &'static [link::LinkName] {
            &[link::LinkName {
                name: "const",
                usage: "const:RATE",
                help: "",
            }]
        }
        fn parse(&self, _: &str, _: Option<&str>) -> Result<LinkSpec, String> {
            Err("never".into())
        }
    }
    assert!(link::register(&Const).is_err());
}

/// Delivered kbit/s of flow 0 in `[from, to)` seconds, from the run's time series.
fn kbps(series: &wisp_sim::metrics::TimeSeries, from: f64, to: f64) -> f64 {
    let bins: Vec<f64> = series
        .t_s
        .iter()
        .zip(&series.flows[0].throughput_kbps)
        .filter(|(t, _)| **t >= from && **t < to)
        .map(|(_, k)| *k)
        .collect();
    bins.iter().sum::<f64>() / bins.len() as f64
}

#[test]
fn the_toy_link_runs_in_the_simulator_at_its_mean_rate() {
    register();
    let link: LinkModel = SPEC.parse::<LinkSpec>().unwrap().load().unwrap();
    // A sender faster than the link keeps its queue busy: what is delivered is its capacity.
    let mut s = Scenario::new(link, "cbr:rate-kbps=8000".parse().unwrap());
    s.run.duration = Duration::from_secs(20);
    let r = run(&s, None).unwrap();
    let f = &r.report.flows[0];
    let mean = (Bitrate::from_mbps(4).kbps_f64() + Bitrate::from_mbps(1).kbps_f64()) / 2.0;
    assert!((f.capacity_kbps - mean).abs() < 0.01 * mean, "{f:?}");
    assert!((f.throughput_kbps - mean).abs() < 0.03 * mean, "{f:?}");
    // The square wave itself: 4 Mbit/s in the first second of each period, 1 in the second
    // (the first 100 ms of each phase left out: packets started in the other one).
    let (high, low) = (kbps(&r.series, 4.1, 5.0), kbps(&r.series, 5.1, 6.0));
    assert!((high - 4000.0).abs() < 200.0, "{high}");
    assert!((low - 1000.0).abs() < 100.0, "{low}");
}

#[test]
fn scenario_files_name_the_toy_link() {
    register();
    let text = format!(
        "duration = \"6s\"\n\
         [nodes]\na = \"host\"\nb = \"host\"\n\
         [[links]]\nfrom = \"a\"\nto = \"b\"\nspec = \"{SPEC}\"\nreverse = \"pipe\"\n\
         [[flows]]\nscheme = \"cbr:rate-kbps=8000\"\nfrom = \"a\"\nto = \"b\"\n"
    );
    let file = scenario_file::parse("toy.toml", &text, std::path::Path::new(".")).unwrap();
    let r = file.run(None).unwrap();
    assert_eq!(r.report.links[0].spec, SPEC);
    let f = &r.report.flows[0].metrics;
    assert!((f.throughput_kbps - 2500.0).abs() < 100.0, "{f:?}");
}
