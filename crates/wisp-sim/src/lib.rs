//! # wisp-sim
//!
//! A deterministic discrete-event simulator for wisp's schemes: trace-driven and rate links
//! ([`link`]), mobile-broadband profiles ([`link::mobile`]), queues ([`queue`]), random loss ([`loss`]), a `(time, seq)` event engine
//! ([`sim`]), a run's options ([`options`]), the per-packet log ([`log`]), the metrics ([`metrics`]), the matrix runner
//! ([`bench`](mod@bench)), a rate-control environment stepped one monitor interval at a time ([`interval`]), path characterisation ([`sweep`]), the papers' reproductions
//! ([`reproduce`]), Sprout's view of a saturated link ([`forecast`]), trace comparison
//! ([`trace_compare`]) and an 802.11 EDCA medium
//! ([`wifi`]; Ping-Pair probing of its AP, [`pingpair`]) with the bandwidth-probing tools run on it ([`probing`]: WBest, IGI/PTR, pathChirp,
//! pathload, Spruce). One master seed
//! ([`seed`]) drives a run: the same scenario and seed give the same bytes of output.
//!
//! ```no_run
//! use wisp_sim::{link::LinkSpec, sim::Scenario};
//! let link = "trace:traces/cellular/Verizon-LTE-short.down".parse::<LinkSpec>()?.load()?;
//! let scenario = Scenario::new(link, "cbr:rate-kbps=2000".parse()?);
//! let result = wisp_sim::run::run(&scenario, None)?;
//! println!("{}", serde_json::to_string(&result.report)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bench;
pub mod forecast;
pub mod interval;
pub mod limits;
pub mod link;
pub mod log;
pub mod loss;
pub mod metrics;
pub mod options;
pub mod path;
pub mod pingpair;
pub mod probing;
pub mod queue;
pub mod reproduce;
pub mod run;
pub mod scenario_file;
pub mod seed;
pub mod sim;
pub mod sweep;
pub mod trace;
pub mod trace_compare;
pub mod video;
pub mod wifi;
