//! The synthetic Wi-Fi outage link, `wifi-outage[:KEY=VALUE,…]`: a rate link ([`super::rate`])
//! whose schedule holds outages and the bursts after them.

use super::contract::{LinkKind, LinkName, LinkProcess};
use super::rate::{RateServer, rate_integral_bits};
use super::{LinkSpec, check_link_rate};
use std::sync::Arc;
use wisp_core::spec::{ItemError, key_values};
use wisp_core::units::parse_duration;
use wisp_core::{Bitrate, Duration, Instant};

/// `wifi-outage[:KEY=VALUE,…]`.
#[derive(Clone, Copy, Debug)]
pub struct OutageKind;

impl LinkKind for OutageKind {
    fn names(&self) -> &'static [LinkName] {
        &[LinkName {
            name: "wifi-outage",
            usage: "wifi-outage[:…]",
            help: "a constant rate with Wi-Fi-like outages whose held packets leave as a burst; \
                   keys and defaults rate=3mbps,every=1s,length=100ms,burst=5mbps,seed=1, \
                   length=0 for none",
        }]
    }

    fn parse(&self, _name: &str, args: Option<&str>) -> Result<LinkSpec, String> {
        match args {
            None => Ok(LinkSpec::WifiOutage(OutageSpec::default())),
            Some(a) => OutageSpec::parse(a).map(LinkSpec::WifiOutage),
        }
    }
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

/// A loaded [`OutageSpec`]: its rate schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct OutageLink {
    pub spec: OutageSpec,
    pub steps: Arc<Vec<(Instant, Bitrate)>>,
}

impl OutageLink {
    pub(super) fn new(spec: &OutageSpec) -> Self {
        OutageLink {
            spec: spec.clone(),
            steps: Arc::new(spec.steps()),
        }
    }
}

impl LinkProcess for OutageLink {
    type Server = RateServer;
    fn name(&self) -> String {
        self.spec.name()
    }
    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
        rate_integral_bits(&self.steps, from, to) / 8.0
    }
    fn server(&self, _seed: u64) -> RateServer {
        RateServer::new(&self.steps)
    }
}
