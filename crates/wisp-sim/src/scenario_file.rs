//! Scenario files: mixed traffic over a topology of nodes and links, in TOML (`wisp sim`).
//!
//! ```toml
//! name = "two hosts share a link"
//! duration = "30s"          # required
//! warmup = "5s"             # metrics ignore the time before it (default 0)
//! seed = 7                  # default: wisp's (the command line's --seed wins)
//! timer-jitter = "50us"     # each sender wakes late by up to this (as --timer-jitter-us; default 0)
//!
//! [nodes]                   # name = "host" | "ap" | "station"
//! server = "host"
//! gw = "host"
//! client = "host"
//!
//! [[links]]                 # one way, from -> to; `reverse` adds the way back
//! from = "server"
//! to = "gw"
//! spec = "pipe"             # a delay only; else any `--link` spec: const:RATE, trace:FILE, …
//! delay = "10ms"            # before the queue (default 0)
//! reverse = "pipe"
//!
//! [[links]]
//! from = "gw"
//! to = "client"
//! spec = "trace:../traces/cellular/Verizon-LTE-short.down"   # relative to this file
//! reverse = "trace:../traces/cellular/Verizon-LTE-short.up"
//! delay = "10ms"
//! queue = "codel"           # as --queue (default infinite)
//! loss = "0.01"             # as --loss, at the entrance (default 0)
//!
//! [[flows]]
//! name = "call"             # default: flow<index>
//! scheme = "gcc"            # any `wisp schemes` name, NAME:KEY=VALUE,… works too
//! params = { max-kbps = 3000 }
//! from = "server"
//! to = "client"
//! dscp = 34                 # 0..63 (default 0)
//! start = "1s"              # default 0
//! stop = "25s"              # default: the end
//! pingpair = "interval=200ms,tos-high=0xb8"   # Ping-Pair from the receiving station to its AP
//!                           # ("on", "off", or keys of `wisp_sim::pingpair`; default: on at
//!                           # 500 ms for `kwikr` flows whose data ends on a Wi-Fi hop, else off)
//! ```
//!
//! Each flow's data goes along the shortest path (fewest hops; among equals, the links first
//! declared) from `from` to `to`, its feedback along the shortest path back. Flows whose paths
//! cross a link share its queue. A flow's metrics refer to the first link of its data path that
//! has a server (its capacity, its ideal sender); a path whose only bottleneck is a Wi-Fi medium
//! has capacity 0. A data path of pipes alone is an error: it has no capacity, and a TCP
//! flow's window would grow without bound.
//!
//! Every error names `FILE:LINE:COLUMN` (the TOML parser's span, or the span of the value that
//! is wrong: an unknown node, a bad link spec, a trace that cannot be read, …).

use crate::limits::{MAX_FLOWS, MAX_LINKS, MAX_NODES};
use crate::link::{LinkModel, LinkSpec, LinkSpecError};
use crate::loss::{LossSpec, LossSpecError};
use crate::metrics::FlowMetrics;
use crate::queue::{QueueSpec, QueueSpecError};
use crate::run::{RunReport, RunResult, run_network, scheme_names};
use crate::seed;
use crate::sim::{
    FlowSpec, Hop, Network, Progress, RoutedFlow, RunSettings, SimError, WifiMedium, WiredLink,
};
use crate::wifi::link::{AP, NodeId, STATION, WifiLink, WifiSpec, WifiSpecError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;
use wisp_core::Duration;
use wisp_core::scheme::SchemeConfig;
use wisp_core::units::parse_duration;

pub use crate::options::{MAX_DELAY, MAX_DURATION};

/// A bad scenario file: where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line and column (in characters), if the error has a place.
    pub at: Option<(usize, usize)>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Some((l, c)) => write!(f, "{}:{l}:{c}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// What kind of node a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// A wired host.
    Host,
    /// A Wi-Fi access point.
    Ap,
    /// A Wi-Fi station.
    Station,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDe {
    name: Option<String>,
    duration: Spanned<String>,
    warmup: Option<Spanned<String>>,
    seed: Option<u64>,
    #[serde(rename = "timer-jitter")]
    timer_jitter: Option<Spanned<String>>,
    nodes: BTreeMap<String, NodeKind>,
    #[serde(default)]
    links: Vec<LinkDe>,
    #[serde(default)]
    wifi: Vec<WifiDe>,
    flows: Spanned<Vec<FlowDe>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WifiDe {
    name: Option<Spanned<String>>,
    ap: Spanned<String>,
    stations: Vec<Spanned<String>>,
    spec: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkDe {
    name: Option<Spanned<String>>,
    from: Spanned<String>,
    to: Spanned<String>,
    spec: Spanned<String>,
    reverse: Option<Spanned<String>>,
    delay: Option<Spanned<String>>,
    queue: Option<Spanned<String>>,
    loss: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ParamValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Bool(v) => write!(f, "{v}"),
            ParamValue::Str(v) => f.write_str(v),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowDe {
    name: Option<Spanned<String>>,
    scheme: Spanned<String>,
    params: Option<Spanned<BTreeMap<String, ParamValue>>>,
    from: Spanned<String>,
    to: Spanned<String>,
    dscp: Option<Spanned<i64>>,
    start: Option<Spanned<String>>,
    stop: Option<Spanned<String>>,
    pingpair: Option<Spanned<String>>,
}

/// A flow as the file names it, beside its place in the [`Network`].
#[derive(Clone, Debug, PartialEq)]
pub struct FlowInfo {
    pub name: String,
    pub from: String,
    pub to: String,
    pub dscp: u8,
    /// The nodes its data crosses, `from` first.
    pub path: Vec<String>,
    /// The nodes its feedback crosses, `to` first.
    pub feedback_path: Vec<String>,
}

/// A loaded scenario file.
#[derive(Clone, Debug)]
pub struct ScenarioFile {
    pub name: String,
    /// The links' labels, in the order of [`Network::links`].
    pub links: Vec<String>,
    pub flows: Vec<FlowInfo>,
    /// What runs (its seed is the file's, or wisp's default).
    pub network: Network,
    /// The file named a seed.
    pub seeded: bool,
}

/// Reads and checks the scenario in `path`; traces are resolved relative to its folder.
pub fn load(path: &Path) -> Result<ScenarioFile, ScenarioError> {
    let file = path.display().to_string();
    let text = crate::limits::read_text_capped(path, crate::limits::MAX_SCENARIO_BYTES, "scenario")
        .map_err(|message| ScenarioError {
            file: file.clone(),
            at: None,
            message,
        })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse(&file, &text, &base)
}

/// Parses and checks a scenario from `text` (named `file` in errors); relative trace paths are
/// taken from `base`. Never panics, whatever the text.
pub fn parse(file: &str, text: &str, base: &Path) -> Result<ScenarioFile, ScenarioError> {
    let p = Parser {
        file,
        text,
        base,
        read_files: true,
    };
    let de: FileDe = toml::from_str(text).map_err(|e| p.error(e.span(), e.message()))?;
    p.build(de)
}

/// As [`parse`], but reads no file: a link that names a trace is checked as a spec and becomes
/// a pipe. For the fuzz target and property tests, which must not open what the text names
/// (`trace:/dev/zero`).
pub fn parse_without_files(file: &str, text: &str) -> Result<ScenarioFile, ScenarioError> {
    let p = Parser {
        file,
        text,
        base: Path::new(""),
        read_files: false,
    };
    let de: FileDe = toml::from_str(text).map_err(|e| p.error(e.span(), e.message()))?;
    p.build(de)
}

struct Parser<'a> {
    file: &'a str,
    text: &'a str,
    base: &'a Path,
    read_files: bool,
}

/// One edge of the routing graph.
#[derive(Clone, Copy, Debug)]
struct Edge {
    to: usize,
    hop: Hop,
}

impl Parser<'_> {
    fn error(&self, span: Option<Range<usize>>, message: impl fmt::Display) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            at: span.map(|s| line_column(self.text, s.start)),
            message: message.to_string(),
        }
    }

    fn at<T>(&self, v: &Spanned<T>, message: impl fmt::Display) -> ScenarioError {
        self.error(Some(v.span()), message)
    }

    fn duration(
        &self,
        v: &Spanned<String>,
        what: &str,
        max: Duration,
    ) -> Result<Duration, ScenarioError> {
        let d = parse_duration(v.get_ref()).map_err(|e| self.at(v, format!("{what}: {}", e.0)))?;
        if d > max {
            return Err(self.at(v, format!("{what} must be at most {} s", max.as_secs_f64())));
        }
        Ok(d)
    }

    fn node(
        &self,
        nodes: &[(String, NodeKind)],
        v: &Spanned<String>,
    ) -> Result<usize, ScenarioError> {
        // `nodes` is sorted by name (it comes from a `BTreeMap`).
        nodes
            .binary_search_by(|(n, _)| n.as_str().cmp(v.get_ref()))
            .ok()
            .ok_or_else(|| {
                let known: Vec<&str> = nodes.iter().map(|(n, _)| n.as_str()).collect();
                self.at(
                    v,
                    format!(
                        "unknown node `{}` (nodes: {})",
                        v.get_ref(),
                        known.join(", ")
                    ),
                )
            })
    }

    fn link_model(&self, v: &Spanned<String>) -> Result<Option<LinkModel>, ScenarioError> {
        let s = v.get_ref().trim();
        if s == "pipe" {
            return Ok(None);
        }
        let spec: LinkSpec = s.parse().map_err(|e: LinkSpecError| {
            self.at(v, format!("bad link spec `{s}`: {}", e.message))
        })?;
        if !self.read_files && spec.reads_files() {
            return Ok(None);
        }
        let spec = spec.rebased(self.base);
        spec.load()
            .map(Some)
            .map_err(|e| self.at(v, format!("link `{s}`: {e}")))
    }

    fn build(&self, de: FileDe) -> Result<ScenarioFile, ScenarioError> {
        let (duration, warmup, timer_jitter) = self.times(&de)?;
        let nodes = self.nodes(&de)?;
        let mut graph: Vec<Vec<Edge>> = vec![Vec::new(); nodes.len()];
        let (links, labels) = self.links(&de.links, &nodes, &mut graph)?;
        let media = self.media(&de.wifi, &nodes, &mut graph)?;
        let (flows, infos) = self.flows(&de.flows, &nodes, &graph, &links, duration)?;
        let network = Network {
            links,
            media,
            flows,
            run: RunSettings {
                warmup,
                seed: de.seed.unwrap_or(seed::DEFAULT_SEED),
                timer_jitter,
                ..RunSettings::new(duration)
            },
        };
        Ok(ScenarioFile {
            name: de.name.unwrap_or_else(|| {
                Path::new(self.file)
                    .file_stem()
                    .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned())
            }),
            links: labels,
            flows: infos,
            network,
            seeded: de.seed.is_some(),
        })
    }

    /// The run's duration, warm-up and timer jitter.
    fn times(&self, de: &FileDe) -> Result<(Duration, Duration, Duration), ScenarioError> {
        let duration = self.duration(&de.duration, "duration", MAX_DURATION)?;
        if duration.is_zero() {
            return Err(self.at(&de.duration, "the duration must be positive"));
        }
        let warmup = match &de.warmup {
            Some(w) => {
                let d = self.duration(w, "warmup", MAX_DURATION)?;
                if d >= duration {
                    return Err(self.at(w, "the warm-up must be shorter than the duration"));
                }
                d
            }
            None => Duration::ZERO,
        };
        let timer_jitter = match &de.timer_jitter {
            Some(j) => self.duration(j, "timer-jitter", Duration::from_secs(1))?,
            None => Duration::ZERO,
        };
        Ok((duration, warmup, timer_jitter))
    }

    /// The nodes, sorted by name, once the file's nodes, links and flows are counted (before
    /// anything is built from them: a route is searched per flow).
    fn nodes(&self, de: &FileDe) -> Result<Vec<(String, NodeKind)>, ScenarioError> {
        let nodes: Vec<(String, NodeKind)> =
            de.nodes.iter().map(|(n, k)| (n.clone(), *k)).collect();
        if nodes.is_empty() {
            return Err(self.error(None, "`nodes` names no node"));
        }
        if nodes.len() > MAX_NODES {
            return Err(self.error(
                None,
                format!("{} nodes, more than the limit of {MAX_NODES}", nodes.len()),
            ));
        }
        let directions = de.links.len() + de.links.iter().filter(|l| l.reverse.is_some()).count();
        if directions > MAX_LINKS {
            return Err(self.error(
                None,
                format!(
                    "{directions} links (each direction counted), more than the limit of \
                     {MAX_LINKS}"
                ),
            ));
        }
        if de.flows.get_ref().len() > MAX_FLOWS {
            return Err(self.at(
                &de.flows,
                format!(
                    "{} flows, more than the limit of {MAX_FLOWS}",
                    de.flows.get_ref().len()
                ),
            ));
        }
        Ok(nodes)
    }

    /// The wired links, each direction one [`WiredLink`] and one edge of `graph`, and their
    /// labels.
    fn links(
        &self,
        declared: &[LinkDe],
        nodes: &[(String, NodeKind)],
        graph: &mut [Vec<Edge>],
    ) -> Result<(Vec<WiredLink>, Vec<String>), ScenarioError> {
        let mut links: Vec<WiredLink> = Vec::new();
        let mut labels: Vec<String> = Vec::new();
        let mut label_set: HashSet<String> = HashSet::new();
        for l in declared {
            let from = self.node(nodes, &l.from)?;
            let to = self.node(nodes, &l.to)?;
            if from == to {
                return Err(self.at(&l.to, "a link needs two different nodes"));
            }
            let (delay, queue, loss) = self.link_options(l)?;
            let base_label = match &l.name {
                Some(n) => n.get_ref().clone(),
                None => format!("{}>{}", nodes[from].0, nodes[to].0),
            };
            let mut dirs = vec![(from, to, &l.spec, base_label.clone())];
            if let Some(r) = &l.reverse {
                let label = match &l.name {
                    Some(n) => format!("{}/reverse", n.get_ref()),
                    None => format!("{}>{}", nodes[to].0, nodes[from].0),
                };
                dirs.push((to, from, r, label));
            }
            for (a, b, spec, label) in dirs {
                if !label_set.insert(label.clone()) {
                    let span = l.name.as_ref().map_or(l.from.span(), Spanned::span);
                    return Err(self.error(
                        Some(span),
                        format!("two links are named `{label}` (give one a `name`)"),
                    ));
                }
                let model = self.link_model(spec)?;
                let i = links.len();
                if i >= u16::MAX as usize {
                    return Err(self.at(&l.from, "too many links"));
                }
                links.push(WiredLink {
                    label: label.clone(),
                    model,
                    queue,
                    delay,
                    loss,
                });
                labels.push(label);
                graph[a].push(Edge {
                    to: b,
                    hop: Hop::Link(i as u16),
                });
            }
        }
        Ok((links, labels))
    }

    /// A link's delay, queue and loss (both its directions have them).
    fn link_options(&self, l: &LinkDe) -> Result<(Duration, QueueSpec, LossSpec), ScenarioError> {
        let delay = match &l.delay {
            Some(d) => self.duration(d, "delay", MAX_DELAY)?,
            None => Duration::ZERO,
        };
        let queue = match &l.queue {
            Some(q) => q
                .get_ref()
                .parse::<QueueSpec>()
                .map_err(|e: QueueSpecError| self.at(q, format!("bad queue: {}", e.message)))?,
            None => QueueSpec::Infinite,
        };
        let loss = match &l.loss {
            Some(q) => q
                .get_ref()
                .parse::<LossSpec>()
                .map_err(|e: LossSpecError| self.at(q, format!("bad loss: {}", e.message)))?,
            None => LossSpec::None,
        };
        Ok((delay, queue, loss))
    }

    /// The Wi-Fi media, each station's two hops an edge of `graph` each way.
    fn media(
        &self,
        declared: &[WifiDe],
        nodes: &[(String, NodeKind)],
        graph: &mut [Vec<Edge>],
    ) -> Result<Vec<WifiMedium>, ScenarioError> {
        let mut media: Vec<WifiMedium> = Vec::new();
        let mut on_medium = vec![false; nodes.len()];
        for (mi, w) in declared.iter().enumerate() {
            let ap = self.node(nodes, &w.ap)?;
            if nodes[ap].1 != NodeKind::Ap {
                return Err(self.at(&w.ap, format!("`{}` is not an `ap` node", nodes[ap].0)));
            }
            if std::mem::replace(&mut on_medium[ap], true) {
                return Err(self.at(&w.ap, format!("`{}` is on two media", nodes[ap].0)));
            }
            let spec: WifiSpec = match &w.spec {
                Some(s) => s
                    .get_ref()
                    .trim()
                    .trim_start_matches("wifi:")
                    .parse()
                    .map_err(|e: WifiSpecError| self.at(s, format!("bad Wi-Fi spec: {e}")))?,
                None => WifiSpec::default(),
            };
            let label = match &w.name {
                Some(n) => n.get_ref().clone(),
                None => format!("wifi{mi}"),
            };
            if w.stations.is_empty() {
                return Err(self.at(&w.ap, "a Wi-Fi medium needs at least one station"));
            }
            if mi >= u16::MAX as usize || w.stations.len() > 1000 {
                return Err(self.at(&w.ap, "too many media or stations"));
            }
            let first_extra = WifiLink::new(&spec, 0).nodes();
            for (k, st) in w.stations.iter().enumerate() {
                let n = self.node(nodes, st)?;
                if nodes[n].1 != NodeKind::Station {
                    return Err(self.at(st, format!("`{}` is not a `station` node", nodes[n].0)));
                }
                if std::mem::replace(&mut on_medium[n], true) {
                    return Err(self.at(st, format!("`{}` is on a medium already", nodes[n].0)));
                }
                // The first station is the medium's station 1, the others join after the
                // nodes the spec makes (its contenders, a co-channel AP and its stations).
                let id: NodeId = if k == 0 {
                    STATION
                } else {
                    first_extra + k as u32 - 1
                };
                for (a, b, from, to) in [(ap, n, AP, id), (n, ap, id, AP)] {
                    graph[a].push(Edge {
                        to: b,
                        hop: Hop::Wifi {
                            medium: mi as u16,
                            from,
                            to,
                        },
                    });
                }
            }
            media.push(WifiMedium {
                label,
                spec,
                extra_stations: w.stations.len() as u32 - 1,
            });
        }
        Ok(media)
    }

    /// The flows, routed over `graph`, and what the file says of them.
    fn flows(
        &self,
        declared: &Spanned<Vec<FlowDe>>,
        nodes: &[(String, NodeKind)],
        graph: &[Vec<Edge>],
        links: &[WiredLink],
        duration: Duration,
    ) -> Result<(Vec<RoutedFlow>, Vec<FlowInfo>), ScenarioError> {
        if declared.get_ref().is_empty() {
            return Err(self.at(declared, "a scenario needs at least one flow"));
        }
        let mut router = Router {
            graph,
            nodes,
            routes: HashMap::new(),
        };
        let mut flows = Vec::new();
        let mut infos = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        for (i, f) in declared.get_ref().iter().enumerate() {
            let (flow, info) = self.flow(i, f, &mut router, links, duration)?;
            // The table, run.json and the report tell flows apart by name.
            if !names.insert(info.name.clone()) {
                let span = f.name.as_ref().map_or(f.scheme.span(), Spanned::span);
                return Err(self.error(
                    Some(span),
                    format!(
                        "two flows are named `{}` (give each its own `name`)",
                        info.name
                    ),
                ));
            }
            flows.push(self.with_pingpair(f, flow, &info)?);
            infos.push(info);
        }
        Ok((flows, infos))
    }

    /// Flow `i`: its scheme, ends, DSCP, times and paths (its Ping-Pair comes after, in
    /// [`Parser::with_pingpair`]).
    fn flow(
        &self,
        i: usize,
        f: &FlowDe,
        router: &mut Router<'_>,
        links: &[WiredLink],
        duration: Duration,
    ) -> Result<(RoutedFlow, FlowInfo), ScenarioError> {
        let nodes = router.nodes;
        let scheme = self.scheme(f)?;
        let from = self.node(nodes, &f.from)?;
        let to = self.node(nodes, &f.to)?;
        if from == to {
            return Err(self.at(&f.to, "a flow needs two different nodes"));
        }
        let dscp = match &f.dscp {
            Some(d) => u8::try_from(*d.get_ref())
                .ok()
                .filter(|&v| v < 64)
                .ok_or_else(|| self.at(d, "dscp must be 0 to 63"))?,
            None => 0,
        };
        let (start, stop) = self.flow_times(f, duration)?;
        let (data, data_nodes) = router
            .route(from, to)
            .ok_or_else(|| self.no_route(f, true))?;
        let (feedback, fb_nodes) = router
            .route(to, from)
            .ok_or_else(|| self.no_route(f, false))?;
        // Pipes alone have no capacity: a window-based flow would grow without bound.
        let bounded = data.iter().any(|h| match *h {
            Hop::Link(l) => links[l as usize].model.is_some(),
            Hop::Wifi { .. } => true,
        });
        if !bounded {
            return Err(self.at(
                &f.to,
                format!(
                    "the path from `{}` to `{}` is pipes alone, with no capacity: give one \
                     of its links a server (e.g. spec = \"const:100mbps\")",
                    nodes[from].0, nodes[to].0
                ),
            ));
        }
        if data.len() > u8::MAX as usize || feedback.len() > u8::MAX as usize {
            return Err(self.at(&f.to, "a path may have at most 255 hops"));
        }
        let reference = data.iter().find_map(|h| match *h {
            Hop::Link(l) if links[l as usize].model.is_some() => Some(l),
            _ => None,
        });
        let name = f
            .name
            .as_ref()
            .map_or_else(|| format!("flow{i}"), |n| n.get_ref().clone());
        let info = FlowInfo {
            name,
            from: nodes[from].0.clone(),
            to: nodes[to].0.clone(),
            dscp,
            path: data_nodes.iter().map(|&n| nodes[n].0.clone()).collect(),
            feedback_path: fb_nodes.iter().map(|&n| nodes[n].0.clone()).collect(),
        };
        let flow = RoutedFlow {
            spec: FlowSpec {
                scheme,
                start,
                stop,
                bytes: None,
                pauses: vec![],
            },
            dscp,
            data,
            feedback,
            reference,
            pingpair: None,
        };
        Ok((flow, info))
    }

    /// A flow's scheme, its `params` applied.
    fn scheme(&self, f: &FlowDe) -> Result<SchemeConfig, ScenarioError> {
        let mut scheme: SchemeConfig = f
            .scheme
            .get_ref()
            .parse()
            .map_err(|e| self.at(&f.scheme, e))?;
        if let Some(p) = &f.params {
            let given: Vec<(String, String)> = p
                .get_ref()
                .iter()
                .map(|(k, v)| (k.clone(), v.to_string()))
                .collect();
            let given: Vec<(&str, &str)> = given
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            scheme.set_params(&given).map_err(|e| self.at(p, e))?;
        }
        Ok(scheme)
    }

    /// A flow's start and stop within a run of `duration`.
    fn flow_times(
        &self,
        f: &FlowDe,
        duration: Duration,
    ) -> Result<(Duration, Option<Duration>), ScenarioError> {
        let start = match &f.start {
            Some(s) => {
                let t = self.duration(s, "start", MAX_DURATION)?;
                if t >= duration {
                    return Err(self.at(s, "the flow starts after the run ends"));
                }
                t
            }
            None => Duration::ZERO,
        };
        let stop = match &f.stop {
            Some(s) => {
                let t = self.duration(s, "stop", MAX_DURATION)?;
                if t <= start {
                    return Err(self.at(s, "the flow stops before it starts"));
                }
                Some(t)
            }
            None => None,
        };
        Ok((start, stop))
    }

    /// No route for flow `f`: for its data (`data`) or its feedback.
    fn no_route(&self, f: &FlowDe, data: bool) -> ScenarioError {
        let (a, b, span) = if data {
            (&f.from, &f.to, &f.to)
        } else {
            (&f.to, &f.from, &f.from)
        };
        self.at(
            span,
            format!("no route from `{}` to `{}`", a.get_ref(), b.get_ref()),
        )
    }

    /// `flow` with the Ping-Pair its file asks for (by default, [`crate::pingpair::default_for`]).
    fn with_pingpair(
        &self,
        f: &FlowDe,
        mut flow: RoutedFlow,
        info: &FlowInfo,
    ) -> Result<RoutedFlow, ScenarioError> {
        flow.pingpair = match &f.pingpair {
            None => crate::pingpair::default_for(&flow.spec.scheme, &flow.data),
            Some(v) => {
                let pp = crate::pingpair::PingPairSpec::parse_option(v.get_ref())
                    .map_err(|e| self.at(v, format!("bad pingpair: {e}")))?;
                let ends_on_ap_hop = flow.data.iter().rev().find_map(|h| match *h {
                    Hop::Wifi { from, .. } => Some(from == AP),
                    Hop::Link(_) => None,
                });
                if pp.is_some() && ends_on_ap_hop != Some(true) {
                    return Err(self.at(
                        v,
                        format!(
                            "pingpair: the data path from `{}` to `{}` must end with a Wi-Fi \
                             hop from an AP to its station (the station pings its AP)",
                            info.from, info.to
                        ),
                    ));
                }
                pp
            }
        };
        Ok(flow)
    }
}

/// Routes between nodes, each pair searched once (flows often share their ends).
struct Router<'a> {
    graph: &'a [Vec<Edge>],
    nodes: &'a [(String, NodeKind)],
    routes: HashMap<(usize, usize), Option<Route>>,
}

impl Router<'_> {
    /// The shortest path from `a` to `b`, if there is one.
    fn route(&mut self, a: usize, b: usize) -> Option<Route> {
        let graph = self.graph;
        self.routes
            .entry((a, b))
            .or_insert_with(|| shortest_path(graph, a, b))
            .clone()
    }
}

/// A path: its hops, and the nodes it crosses (its ends included).
type Route = (Vec<Hop>, Vec<usize>);

/// The fewest-hop path from `a` to `b` (breadth first, edges in declaration order): its hops
/// and the nodes it visits.
fn shortest_path(graph: &[Vec<Edge>], a: usize, b: usize) -> Option<Route> {
    let mut prev: Vec<Option<(usize, Hop)>> = vec![None; graph.len()];
    let mut seen = vec![false; graph.len()];
    seen[a] = true;
    let mut queue = VecDeque::from([a]);
    while let Some(n) = queue.pop_front() {
        if n == b {
            break;
        }
        for e in &graph[n] {
            if !seen[e.to] {
                seen[e.to] = true;
                prev[e.to] = Some((n, e.hop));
                queue.push_back(e.to);
            }
        }
    }
    if !seen[b] {
        return None;
    }
    let (mut hops, mut visited) = (vec![], vec![b]);
    let mut n = b;
    while let Some((p, hop)) = prev[n] {
        hops.push(hop);
        visited.push(p);
        n = p;
    }
    hops.reverse();
    visited.reverse();
    Some((hops, visited))
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// One link of a [`ScenarioReport`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkReport {
    pub name: String,
    /// The server (`pipe`: the delay only).
    pub spec: String,
    pub delay_ms: f64,
    pub queue: String,
    pub loss: String,
}

/// One flow of a [`ScenarioReport`]: who, where, and its metrics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowReport {
    pub name: String,
    pub from: String,
    pub to: String,
    pub dscp: u8,
    /// The data path's nodes, `from > … > to`.
    pub path: String,
    pub start_s: f64,
    pub stop_s: Option<f64>,
    #[serde(flatten)]
    pub metrics: FlowMetrics,
    /// The flow's Ping-Pair ([`crate::pingpair`]), when its station probed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pingpair: Option<crate::pingpair::PingSummary>,
}

/// What `wisp sim --json` prints and writes as `run.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScenarioReport {
    pub scenario: String,
    pub seed: u64,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub links: Vec<LinkReport>,
    pub media: Vec<MediumReport>,
    pub flows: Vec<FlowReport>,
}

/// One Wi-Fi medium of a [`ScenarioReport`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MediumReport {
    pub name: String,
    /// The canonical `wifi:` spec.
    pub spec: String,
}

/// Everything a scenario run produced: its report, and the same run in `wisp run`'s form (for
/// its CSV and HTML writers).
#[derive(Clone, Debug)]
pub struct ScenarioResult {
    pub report: ScenarioReport,
    pub run: RunResult,
}

impl ScenarioFile {
    /// Simulates the scenario with its seed (set [`RunSettings::seed`] first to override it).
    pub fn run(&self, progress: Option<Progress<'_>>) -> Result<ScenarioResult, SimError> {
        let net = &self.network;
        let r = run_network(net, progress)?;
        let links = net
            .links
            .iter()
            .map(|l| LinkReport {
                name: l.label.clone(),
                spec: l
                    .model
                    .as_ref()
                    .map_or_else(|| "pipe".into(), LinkModel::name),
                delay_ms: l.delay.as_millis_f64(),
                queue: if l.model.is_some() {
                    l.queue.to_string()
                } else {
                    "none".into()
                },
                loss: l.loss.to_string(),
            })
            .collect();
        let flows = self
            .flows
            .iter()
            .zip(&net.flows)
            .zip(&r.flows)
            .enumerate()
            .map(|(i, ((info, f), m))| FlowReport {
                pingpair: f
                    .pingpair
                    .as_ref()
                    .map(|_| crate::pingpair::summary(&r.log.pings, i as u16)),
                name: info.name.clone(),
                from: info.from.clone(),
                to: info.to.clone(),
                dscp: info.dscp,
                path: info.path.join(" > "),
                start_s: f.spec.start.as_secs_f64(),
                stop_s: f.spec.stop.map(|d| d.as_secs_f64()),
                metrics: m.clone(),
            })
            .collect();
        let report = ScenarioReport {
            scenario: self.name.clone(),
            seed: net.run.seed,
            duration_s: net.run.duration.as_secs_f64(),
            warmup_s: net.run.warmup.as_secs_f64(),
            links,
            media: net
                .media
                .iter()
                .map(|m| MediumReport {
                    name: m.label.clone(),
                    spec: format!("wifi:{}", m.spec),
                })
                .collect(),
            flows,
        };
        let run = RunResult {
            report: RunReport {
                scheme: scheme_names(net.flows.iter().map(|f| &f.spec)),
                trace: format!("scenario {}", self.name),
                seed: net.run.seed,
                reverse: "per flow".into(),
                delay_ms: 0.0,
                queue: "per link".into(),
                loss: "per link".into(),
                reverse_loss: "per link".into(),
                duration_s: net.run.duration.as_secs_f64(),
                warmup_s: net.run.warmup.as_secs_f64(),
                flows: r.flows,
            },
            series: r.series,
            log: r.log,
        };
        Ok(ScenarioResult { report, run })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A scenario of `nodes` hosts in a chain and `flows` cbr flows from the first to the last.
    fn sized(nodes: usize, flows: usize) -> String {
        let mut t = String::from("duration = \"1s\"\n[nodes]\n");
        for i in 0..nodes {
            t += &format!("n{i} = \"host\"\n");
        }
        for i in 1..nodes.min(3) {
            t += &format!(
                "[[links]]\nfrom = \"n{}\"\nto = \"n{i}\"\nspec = \"const:1mbps\"\n\
                 reverse = \"pipe\"\n",
                i - 1
            );
        }
        let to = nodes.min(3) - 1;
        t += &format!("[[flows]]\nscheme = \"cbr\"\nfrom = \"n0\"\nto = \"n{to}\"\n").repeat(flows);
        t
    }

    fn message(text: &str) -> String {
        parse_without_files("s.toml", text).unwrap_err().message
    }

    #[test]
    fn counts_over_their_limits_are_refused_before_anything_is_built() {
        assert_eq!(
            message(&sized(2, crate::limits::MAX_FLOWS + 1)),
            "65536 flows, more than the limit of 65535"
        );
        // (Refused from the count, not after building the flows: 70000 took 15.5 s; the CLI
        // test `a_scenario_with_too_many_flows_is_refused_from_the_count` times it.)
        assert_eq!(
            message(&sized(crate::limits::MAX_NODES + 1, 1)),
            "1025 nodes, more than the limit of 1024"
        );
        let mut links = sized(3, 1);
        links += &"[[links]]\nfrom = \"n0\"\nto = \"n2\"\nspec = \"pipe\"\nreverse = \"pipe\"\n"
            .repeat(2048);
        assert_eq!(
            message(&links),
            "4100 links (each direction counted), more than the limit of 4096"
        );
        // At the limits, accepted.
        assert!(parse_without_files("s.toml", &sized(crate::limits::MAX_NODES, 1)).is_ok());
        let many = parse_without_files("s.toml", &sized(3, 5000)).unwrap();
        assert_eq!(many.flows.len(), 5000);
    }

    #[test]
    fn a_scenario_over_the_size_limit_is_refused_unread() {
        let e = load(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: the scenario is larger than the limit of 8 MiB (8388608 bytes)"
        );
    }

    const WIRED: &str = r#"
duration = "10s"
timer-jitter = "20us"
[nodes]
a = "host"
b = "host"
c = "host"
[[links]]
from = "a"
to = "b"
spec = "pipe"
delay = "5ms"
reverse = "pipe"
[[links]]
from = "b"
to = "c"
spec = "const:10mbps"
delay = "5ms"
reverse = "const:1mbps"
[[flows]]
scheme = "cbr"
params = { rate-kbps = 2000 }
from = "a"
to = "c"
dscp = 46
[[flows]]
scheme = "cubic"
from = "c"
to = "a"
start = "2s"
stop = "8s"
"#;

    fn parse_str(text: &str) -> Result<ScenarioFile, ScenarioError> {
        parse("t.toml", text, Path::new("."))
    }

    /// The error's `line:column` and message.
    fn error_at(text: &str) -> ((usize, usize), String) {
        let e = parse_str(text).unwrap_err();
        (e.at.unwrap_or_else(|| panic!("no place: {e}")), e.message)
    }

    /// The 1-based line and column where `needle` first occurs in `text`.
    fn place_of(text: &str, needle: &str) -> (usize, usize) {
        line_column(text, text.find(needle).unwrap())
    }

    #[test]
    fn flows_take_the_shortest_paths_both_ways() {
        let s = parse_str(WIRED).unwrap();
        assert_eq!(s.links, ["a>b", "b>a", "b>c", "c>b"]);
        assert_eq!(s.flows[0].path, ["a", "b", "c"]);
        assert_eq!(s.flows[0].feedback_path, ["c", "b", "a"]);
        assert_eq!(s.network.flows[0].data, [Hop::Link(0), Hop::Link(2)]);
        assert_eq!(s.network.flows[0].feedback, [Hop::Link(3), Hop::Link(1)]);
        assert_eq!(s.network.flows[1].data, [Hop::Link(3), Hop::Link(1)]);
        // The first link with a server is the metrics' reference.
        assert_eq!(s.network.flows[0].reference, Some(2));
        assert_eq!(s.network.flows[1].reference, Some(3));
        assert_eq!(s.network.flows[0].dscp, 46);
        assert_eq!(
            s.network.flows[0].spec.scheme.to_string(),
            "cbr:rate-kbps=2000"
        );
        assert_eq!(s.network.flows[1].spec.start, Duration::from_secs(2));
        assert_eq!(s.network.flows[1].spec.stop, Some(Duration::from_secs(8)));
        assert!(!s.seeded);
        assert_eq!(s.network.run.timer_jitter, Duration::from_micros(20));
    }

    #[test]
    fn a_run_reports_every_flow_against_its_link() {
        let s = parse_str(WIRED).unwrap();
        let r = s.run(None).unwrap().report;
        assert_eq!(r.flows.len(), 2);
        // 2 Mbit/s over 10 Mbit/s: all of it, 10 ms of pipes + 5 ms + 1.2 ms of serialisation.
        let cbr = &r.flows[0].metrics;
        assert!((cbr.throughput_kbps - 2000.0).abs() < 50.0, "{cbr:?}");
        assert_eq!(cbr.capacity_kbps, 10_000.0);
        assert!((cbr.delay_p50_ms.unwrap() - 11.2).abs() < 0.01, "{cbr:?}");
        // CUBIC fills the 1 Mbit/s way back while it runs.
        let tcp = &r.flows[1].metrics;
        assert!(tcp.utilization > 0.9 && tcp.utilization <= 1.0, "{tcp:?}");
    }

    #[test]
    fn errors_name_line_and_column() {
        // An unknown key: the TOML parser's span.
        let t = WIRED.replace("dscp = 46", "dscp = 46\ncolour = 1");
        let (at, m) = error_at(&t);
        assert_eq!(at, place_of(&t, "colour"), "{m}");
        assert!(m.contains("colour"), "{m}");
        // An unknown node: the span of the name.
        let t = WIRED.replace("to = \"c\"\ndscp", "to = \"d\"\ndscp");
        let (at, m) = error_at(&t);
        assert_eq!(at, place_of(&t, "\"d\""), "{m}");
        assert!(m.contains("unknown node `d`"), "{m}");
        // A bad link spec.
        let t = WIRED.replace("const:10mbps", "const:fast");
        let (at, m) = error_at(&t);
        assert_eq!(at, place_of(&t, "\"const:fast\""), "{m}");
        // A missing trace.
        let t = WIRED.replace("const:1mbps", "trace:no/such.trace");
        let (at, m) = error_at(&t);
        assert_eq!(at, place_of(&t, "\"trace:no/such.trace\""), "{m}");
        assert!(m.contains("no/such.trace"), "{m}");
        // A bad scheme parameter, a bad DSCP, a syntax error, a node of no kind.
        let t = WIRED.replace("rate-kbps = 2000", "rate-kbps = -3");
        assert_eq!(error_at(&t).0, place_of(&t, "{ rate-kbps"));
        let t = WIRED.replace("dscp = 46", "dscp = 64");
        assert_eq!(error_at(&t).0, place_of(&t, "64"));
        let t = WIRED.replace("spec = \"pipe\"\ndelay", "spec = pipe\ndelay");
        assert_eq!(error_at(&t).0.0, place_of(&t, "spec = pipe").0);
        let t = WIRED.replace("c = \"host\"", "c = \"router\"");
        assert_eq!(error_at(&t).0, place_of(&t, "\"router\""));
        // A data path of pipes alone.
        let t = WIRED.replace("const:10mbps", "pipe");
        let (at, m) = error_at(&t);
        assert!(m.contains("pipes alone"), "{m}");
        assert_eq!(at.0, place_of(&t, "to = \"c\"\ndscp").0, "{m}");
        // No route.
        let t = WIRED.replace("reverse = \"const:1mbps\"\n", "");
        let (at, m) = error_at(&t);
        // At the flow's `from` value (column 8 of `from = "a"`), where the way back must go.
        let line = place_of(&t, "from = \"a\"\nto = \"c\"").0;
        assert_eq!(at, (line, 8), "{m}");
        assert!(m.contains("no route from `c` to `a`"), "{m}");
        // Two flows of one name (the results tell flows apart by name), also against the name
        // an unnamed flow gets.
        let t = format!(
            "{WIRED}\n[[flows]]\nname = \"video\"\nscheme = \"cbr\"\nfrom = \"a\"\nto = \"c\"\n"
        );
        let t = t.replacen("[[flows]]", "[[flows]]\nname = \"video\"", 1);
        let (at, m) = error_at(&t);
        assert!(m.contains("two flows are named `video`"), "{m}");
        assert_eq!(at.0, t.lines().count() - 3, "{m}");
    }

    const WIFI: &str = r#"
duration = "5s"
[nodes]
srv = "host"
ap = "ap"
s1 = "station"
s2 = "station"
[[links]]
from = "srv"
to = "ap"
spec = "pipe"
delay = "5ms"
reverse = "pipe"
[[wifi]]
ap = "ap"
stations = ["s1", "s2"]
spec = "std=11a,rate=24mbps,stations=3,load=udp"
[[flows]]
scheme = "cbr"
from = "s2"
to = "s1"
"#;

    #[test]
    fn stations_reach_each_other_through_the_ap() {
        let s = parse_str(WIFI).unwrap();
        assert_eq!(s.flows[0].path, ["s2", "ap", "s1"]);
        // s1 is the medium's station 1; s2 joins after the 3 contenders (ids 2..=4).
        let hop = |medium, from, to| Hop::Wifi { medium, from, to };
        assert_eq!(
            s.network.flows[0].data,
            [hop(0, 5, AP), hop(0, AP, STATION)]
        );
        assert_eq!(
            s.network.flows[0].feedback,
            [hop(0, STATION, AP), hop(0, AP, 5)]
        );
        assert_eq!(s.network.media[0].extra_stations, 1);
        assert_eq!(s.network.flows[0].reference, None);
        let r = s.run(None).unwrap().report;
        let m = &r.flows[0].metrics;
        assert!((m.throughput_kbps - 1000.0).abs() < 20.0, "{m:?}");
        assert_eq!(m.capacity_kbps, 0.0);
        // With a co-channel AP and its 2 stations (nodes 5, 6 and 7), s2 joins as node 8.
        let t = WIFI.replace("load=udp", "load=udp,cochannel=2");
        let s = parse_str(&t).unwrap();
        assert_eq!(
            s.network.flows[0].data,
            [hop(0, 8, AP), hop(0, AP, STATION)]
        );
        let r = s.run(None).unwrap().report;
        let m = &r.flows[0].metrics;
        assert!((m.throughput_kbps - 1000.0).abs() < 20.0, "{m:?}");
        // A bad spec, a host on the medium.
        let t = WIFI.replace("load=udp", "load=smoke");
        let (at, msg) = error_at(&t);
        assert_eq!(at, place_of(&t, "\"std=11a"), "{msg}");
        assert!(msg.contains("load"), "{msg}");
        let t = WIFI.replace("[\"s1\", \"s2\"]", "[\"s1\", \"srv\"]");
        let (at, msg) = error_at(&t);
        assert_eq!(at, place_of(&t, "\"srv\"]"), "{msg}");
        assert!(msg.contains("not a `station`"), "{msg}");
    }

    #[test]
    fn line_columns_count_characters() {
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_column("x", 0), (1, 1));
        assert_eq!(line_column("é", 1), (1, 1));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Any text, and any one-byte change or cut of a valid file, gives a scenario or an
        /// error: never a panic.
        #[test]
        fn garbage_never_panics(text in "\\PC{0,200}", at in 0usize..2000, byte in any::<u8>(), cut in 0usize..2000) {
            let _ = parse_without_files("t.toml", &text);
            let mut b = WIRED.as_bytes().to_vec();
            let i = at % b.len();
            b[i] = byte;
            let _ = parse_without_files("t.toml", &String::from_utf8_lossy(&b));
            let _ = parse_without_files("t.toml", &WIRED[..cut.min(WIRED.len())]);
        }
    }
}
