//! The IETF RMCAT evaluation: RFC 8867's wired test cases, and RFC 8869's cellular case on the
//! shipped traces, for every media scheme (`wisp reproduce rmcat`).
//!
//! RFC 8867 (Sarker, Singh, Zhu, Ramalho, 2021) fixes each case's topology, capacities, delays
//! and flows; its "expected behavior" is in words ("detect the path capacity constraint and
//! converge to the bottleneck link's capacity", flows "converge to their fair share"). RFC 8868
//! names the metrics: throughput against capacity, queueing delay, loss, fairness, convergence.
//! Each check below states the number it reads those words as:
//!
//! | threshold | reading | why this number |
//! |---|---|---|
//! | utilisation ≥ [`UTIL_MIN`] over each phase's second half | "converge to the bottleneck link's capacity" | the first half of a phase is left for convergence; 80 % is the share the NADA and GCC scenario tests of this repository hold a flow to |
//! | queueing delay p95 < [`QUEUE_P95_MAX_MS`] over each phase | the flow does not live on a full queue | below the cases' 300-ms queue, the bound the GCC and NADA tests hold their capacity steps to |
//! | Jain's index ≥ [`JAIN_MIN`] over the settled window | "converge to their fair share" (§5.2, §5.4, §5.5) | 0.8 is what a 2:1 split of two flows scores (0.9): a loose reading, as RFC 8867 gives none |
//! | each side ≥ [`SHARE_MIN`] of an even split | neither the media flow nor TCP starves (§5.6, §5.7) | 40 % of an even split: the media flow may yield to TCP, but not to nothing |
//! | CE marks > 0 and AQM drops ≤ [`ECN_LOSS_MAX`] of its packets | an ECN-capable flow is told of congestion by marks, not drops (§6, ECN) | RFC 3168: a marking queue marks an ECT packet where it would drop it; 0.1 % for the AQM's overload drops (PIE's above 10 %). Drops at the queue's byte limit are reported, not checked: a full queue drops whatever the codepoint |
//! | queueing delay p95 ≤ [`ECN_QUEUE_SLACK`] × the Not-ECT run's | ECN costs no delay | the same scheme, link and queue without ECN; 10 % for one seed's noise |
//! | the PRIO-1 flow's rate over the other's within [`PRIORITY_RATIO_TOLERANCE`] of 1 / [`PRIORITY_LOW`] | flows with priorities share by them (§6, media flows with priority) | NADA's gradual update settles where x_curr = PRIO·XREF·RMAX/r_ref (RFC 8698 eqs. 5–7), so on one queue the rates are in the ratio of the PRIOs; ± 25 % for the filters' and the encoder's noise |
//!
//! The cases, with the parameters of RFC 8867 as cisco/ns3-rmcat's wired suite sets them
//! (4 Mbit/s unless the case says, 50 ms one-way propagation, a 300-ms drop-tail queue):
//!
//! | case | RFC 8867 | what runs | checked |
//! |---|---|---|---|
//! | `5.1` | §5.1 variable capacity, one flow | 1 → 2.5 (40 s) → 0.6 (60 s) → 1 Mbit/s (80 s), 100 s | utilisation, queue per phase |
//! | `5.2` | §5.2 variable capacity, two flows | 4 → 2 (25 s) → 3.5 (50 s) → 1 (75 s) → 2 Mbit/s (100 s), 125 s | utilisation, queue, Jain per phase |
//! | `5.3` | §5.3 congested feedback link, one flow each way | forward 2 → 1 (20 s) → 0.5 (40 s) → 2 (60 s), backward 2 → 0.8 (35 s) → 2 (70 s), 100 s | utilisation, queue per phase and direction |
//! | `5.4` | §5.4 three flows of the same scheme | 3.5 Mbit/s, from 0/20/40 s, 120 s | utilisation, queue, Jain over 80–120 s; convergence reported |
//! | `5.5` | §5.5 round-trip-time fairness | 4 Mbit/s, five flows at 10/25/50/100/150 ms one-way from 0/10/20/30/40 s, 300 s | utilisation, queue, Jain over 100–300 s |
//! | `5.6` | §5.6 a long TCP flow | 2 Mbit/s, NewReno from 0 s, the media flow 5–119 s, 120 s | shares over 30–119 s; queue reported |
//! | `5.7` | §5.7 short TCP flows | 2 Mbit/s, two media flows 5–299 s, ten NewReno download slots, 300 s | shares over 30–299 s; queue reported |
//! | `5.8` | §5.8 media pause and resume | 3.5 Mbit/s, three flows from 0 s, flow 1 pauses its media over 40–60 s, 120 s | utilisation, queue, Jain over each phase's second half: before (20–40 s, three flows), paused (50–60 s, the two others), resumed (90–120 s, three); flow 1's convergence from the resume reported |
//! | `6-ecn` | §6 ECN usage | §5.1's capacity steps and length behind a marking queue: `nada:ecn=true` (ECT(0)) over `codel:ecn=on`, `scream:ecn=l4s` (ECT(1)) over `dualpi2`; only the schemes with an ECN mode | CE marks, loss, queue p95 against `6-not-ect` |
//! | `6-priority` | §6 media flows with priority | 3 Mbit/s, two flows of the scheme from 0 s, the first at PRIO 1, the second at [`PRIORITY_LOW`] (`nada:prio=0.5`); only the schemes that take a priority (NADA); 120 s | rate ratio, utilisation, queue over 60–120 s |
//! | `6-bottlenecks` | §6 multiple bottlenecks | a parking lot: two 2-Mbit/s bottlenecks in series (A→B, then B→C, 300-ms queues, 50 ms one-way for every flow); flow 0 crosses both, flow 1 only A→B, flow 2 only B→C; all from 0 s, 120 s | utilisation, queue, Jain per bottleneck over 60–120 s |
//! | `6-not-ect` | §6 ECN usage, the reference | the same link and queue (`dualpi2` for scream, `codel:ecn=on` for the others), every scheme Not-ECT: the queue drops where it would mark | reported |
//! | `wifi-4.1.*`, `wifi-4.2.*` | RFC 8869 §4 (Wi-Fi) | the 802.11 medium behind a wire, one station per flow, as [`wifi`] describes: §4.1 the wire the bottleneck (1 Mbit/s), one media flow down, up or each way, with CBR or TCP cross traffic over 40–80 s; §4.2 the medium the bottleneck, 16–32 media flows, with CBR or TCP uplink cross traffic | §4.1: utilisation, queue (and shares against TCP) per phase and direction; §4.2: queue, Jain (and shares) per phase and direction |
//! | `cell-*` | RFC 8869 §3 (cellular) | the shipped Verizon and T-Mobile LTE traces, feedback over the uplink trace, 20 ms each way | reported |
//!
//! `--quick` runs every case at half its length (phases halved; 5.5 and 5.7 at 150 s).
//!
//! Deviations and choices:
//! * Mbit/s are 10⁶ bit/s (ns3-rmcat's are 2²⁰).
//! * The 300-ms queue is a byte limit at the case's first capacity (300 ms at 1 Mbit/s in
//!   §5.1, 37.5 kB), as ns3-rmcat sizes it once.
//! * §5.5's per-flow propagation delay is on the flow's own feedback path: the data of every
//!   flow crosses the shared bottleneck with its 10 ms, the feedback returns over a pipe of
//!   2·d − 10 ms, so each flow's round trip is the RFC's 2·d and the queueing delay is measured
//!   at the one shared queue.
//! * §5.7's short TCP flows follow RFC 8868 §6.1 as ns3-rmcat does: each of ten slots is a
//!   sequence of downloads of 30–50 kB (uniform) separated by idle times drawn from an
//!   exponential of mean 10 s; two slots start on, eight after an idle time. A download is a
//!   NewReno flow with a size ([`FlowSpec::bytes`]); its idle time counts from its start (the
//!   download takes well under a second at 2 Mbit/s).
//! * §5.8's pause is the flow's source offering nothing ([`FlowSpec::pauses`]): no frame and no
//!   audio is captured over 40–60 s, while the sender's controller, timers and feedback go on.
//!   All three flows start at 0 s (ns3-rmcat's case).
//! * §6's ECN case runs one flow (the RFC's §6 is in words; the reading is wisp's): each scheme
//!   with an ECN mode in it, over a queue that marks its codepoint, against the same scheme
//!   Not-ECT over the same queue (`6-not-ect`). The queue holds 300 ms at 1 Mbit/s (37.5 kB)
//!   as §5.1's. §6's priority case runs the schemes that take a priority: NADA's PRIO (RFC
//!   8698); SCReAM's priorities weigh the streams of one sender, and the others have none. The
//!   RFC's words for it were not re-read here: the case is wisp's reading (two flows, one at
//!   half the priority, on one bottleneck). So is §6's multiple-bottleneck case: the classic
//!   parking lot, each bottleneck shared by the flow that crosses both and one that crosses it
//!   alone. Max-min fairness would give every flow 1 Mbit/s; a controller that sums the two
//!   queues' delays (NADA's x_curr, GCC's gradient) settles nearer proportional fairness, 2/3
//!   against 4/3 Mbit/s (Jain 0.9 on each bottleneck), and the check (Jain ≥ 0.8 per
//!   bottleneck) passes both and fails a starved long flow (below about 0.6 Mbit/s). The long
//!   flow's queueing delay is the sum of its two queues' (B→C has no propagation delay of its
//!   own, so delivery less first enqueue is that sum).
//! * RFC 8869's cellular cases are an LTE simulator's scenarios (mobility, cell load); wisp runs
//!   the recorded traces instead, and reports them without checks.
//! * `cbr` (1 Mbit/s) runs as a reference: its rows are reported, not checked.

use crate::link::{LinkModel, LinkSpec};
use crate::log::DropReason;
use crate::loss::LossSpec;
use crate::path::Hop;
use crate::queue::{Limits, QueueSpec};
use crate::reproduce::{Check, shipped};
use crate::run::{NetworkResult, run_network_or_cancel};
use crate::sim::{FlowSpec, Network, RoutedFlow, RunSettings, SimError, WiredLink};
use rand::RngExt;
use serde::Serialize;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use wisp_core::stats::quantiles;
use wisp_core::tables::Tables;
use wisp_core::{Duration, Instant};

pub mod wifi;

/// The media schemes evaluated, in the report's order; the last, [`REFERENCE`], unchecked.
pub const SCHEMES: [&str; 9] = [
    "gcc",
    "gcc-twcc",
    "nada",
    "scream",
    "sprout",
    "kwikr",
    "um",
    "adaptive-um",
    REFERENCE,
];

/// The constant-rate reference, reported but not checked.
pub const REFERENCE: &str = "cbr";

/// The least utilisation over a phase's second half.
pub const UTIL_MIN: f64 = 0.8;
/// The queueing delay's p95 over a phase stays under this.
pub const QUEUE_P95_MAX_MS: f64 = 250.0;
/// The least Jain's index among the media flows over the settled window.
pub const JAIN_MIN: f64 = 0.8;
/// The least share of an even split for each side of a media/TCP mix.
pub const SHARE_MIN: f64 = 0.4;
/// The most AQM drops (of its packets) an ECN-capable flow sees behind a marking queue.
pub const ECN_LOSS_MAX: f64 = 0.001;
/// An ECN-capable flow's queueing delay p95 is at most this times its Not-ECT run's.
pub const ECN_QUEUE_SLACK: f64 = 1.1;

/// §6's priorities: the second flow's PRIO against the first's (1.0).
pub const PRIORITY_LOW: f64 = 0.5;
/// The rate ratio of the two flows is within this fraction of the priorities' ratio.
pub const PRIORITY_RATIO_TOLERANCE: f64 = 0.25;

/// The cellular traces of the RFC 8869 rows (downlink, uplink), under `traces/cellular/`.
pub const CELLULAR: [(&str, &str, &str); 2] = [
    (
        "cell-verizon",
        "Verizon-LTE-short.down",
        "Verizon-LTE-short.up",
    ),
    (
        "cell-tmobile",
        "TMobile-LTE-short.down",
        "TMobile-LTE-short.up",
    ),
];

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub quick: bool,
    pub seed: u64,
    pub jobs: usize,
    /// The schemes (specs), by default [`SCHEMES`].
    pub schemes: Vec<String>,
}

impl Options {
    pub fn new(quick: bool, seed: u64, jobs: usize) -> Self {
        Options {
            quick,
            seed,
            jobs,
            schemes: SCHEMES.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// Why the evaluation could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// A case of the evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CaseInfo {
    pub id: &'static str,
    pub section: &'static str,
    pub title: &'static str,
}

/// Every case, in the report's order.
pub const CASES: [CaseInfo; 32] = [
    CaseInfo {
        id: "5.1",
        section: "RFC 8867 §5.1",
        title: "Variable available capacity with a single flow",
    },
    CaseInfo {
        id: "5.2",
        section: "RFC 8867 §5.2",
        title: "Variable available capacity with multiple flows",
    },
    CaseInfo {
        id: "5.3",
        section: "RFC 8867 §5.3",
        title: "Congested feedback link with bi-directional media flows",
    },
    CaseInfo {
        id: "5.4",
        section: "RFC 8867 §5.4",
        title: "Competing media flows with the same congestion control algorithm",
    },
    CaseInfo {
        id: "5.5",
        section: "RFC 8867 §5.5",
        title: "Round trip time fairness",
    },
    CaseInfo {
        id: "5.6",
        section: "RFC 8867 §5.6",
        title: "Media flow competing with a long TCP flow",
    },
    CaseInfo {
        id: "5.7",
        section: "RFC 8867 §5.7",
        title: "Media flow competing with short TCP flows",
    },
    CaseInfo {
        id: "5.8",
        section: "RFC 8867 §5.8",
        title: "Media pause and resume",
    },
    CaseInfo {
        id: "6-ecn",
        section: "RFC 8867 §6",
        title: "ECN usage: the scheme's ECN mode behind a marking queue",
    },
    CaseInfo {
        id: "6-not-ect",
        section: "RFC 8867 §6",
        title: "ECN usage, the reference: Not-ECT behind the same queue",
    },
    CaseInfo {
        id: "6-priority",
        section: "RFC 8867 §6",
        title: "Media flows with priority: two flows of the scheme, the second at half the priority",
    },
    CaseInfo {
        id: "6-bottlenecks",
        section: "RFC 8867 §6",
        title: "Multiple bottlenecks: one flow across two bottlenecks, each shared with another flow of the scheme",
    },
    CaseInfo {
        id: "wifi-4.1.a",
        section: "RFC 8869 §4.1",
        title: "Wi-Fi, wired bottleneck: one downlink media flow",
    },
    CaseInfo {
        id: "wifi-4.1.b",
        section: "RFC 8869 §4.1",
        title: "Wi-Fi, wired bottleneck: one uplink media flow",
    },
    CaseInfo {
        id: "wifi-4.1.c",
        section: "RFC 8869 §4.1",
        title: "Wi-Fi, wired bottleneck: one media flow each way",
    },
    CaseInfo {
        id: "wifi-4.1.d",
        section: "RFC 8869 §4.1",
        title: "Wi-Fi, wired bottleneck: one media flow each way and a downlink CBR flow (40–80 s)",
    },
    CaseInfo {
        id: "wifi-4.1.e",
        section: "RFC 8869 §4.1",
        title: "Wi-Fi, wired bottleneck: one media flow each way and an uplink CBR flow (40–80 s)",
    },
    CaseInfo {
        id: "wifi-4.1.f",
        section: "RFC 8869 §4.1",
        title: "Wi-Fi, wired bottleneck: one media flow each way and a downlink TCP flow (40–80 s)",
    },
    CaseInfo {
        id: "wifi-4.1.g",
        section: "RFC 8869 §4.1",
        title: "Wi-Fi, wired bottleneck: one media flow each way and an uplink TCP flow (40–80 s)",
    },
    CaseInfo {
        id: "wifi-4.2.a-16",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 16 downlink media flows",
    },
    CaseInfo {
        id: "wifi-4.2.b-16",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 16 uplink media flows",
    },
    CaseInfo {
        id: "wifi-4.2.c-16",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 8 media flows each way",
    },
    CaseInfo {
        id: "wifi-4.2.a-24",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 24 downlink media flows",
    },
    CaseInfo {
        id: "wifi-4.2.b-24",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 24 uplink media flows",
    },
    CaseInfo {
        id: "wifi-4.2.c-24",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 12 media flows each way",
    },
    CaseInfo {
        id: "wifi-4.2.a-32",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 32 downlink media flows",
    },
    CaseInfo {
        id: "wifi-4.2.b-32",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 32 uplink media flows",
    },
    CaseInfo {
        id: "wifi-4.2.c-32",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 16 media flows each way",
    },
    CaseInfo {
        id: "wifi-4.2.d-24",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 12 media flows each way and 4 uplink CBR flows (40–80 s)",
    },
    CaseInfo {
        id: "wifi-4.2.e-24",
        section: "RFC 8869 §4.2",
        title: "Wi-Fi bottleneck: 12 media flows each way and 4 uplink TCP flows (40–80 s)",
    },
    CaseInfo {
        id: "cell-verizon",
        section: "RFC 8869 §3",
        title: "Cellular: the Verizon LTE trace",
    },
    CaseInfo {
        id: "cell-tmobile",
        section: "RFC 8869 §3",
        title: "Cellular: the T-Mobile LTE trace",
    },
];

/// What a window's checks are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Asks {
    pub util: bool,
    pub queue: bool,
    pub jain: bool,
    /// Media against TCP: each side's share of an even split.
    pub shares: bool,
    /// An ECN-capable flow behind a marking queue: CE marks, no loss, no more queueing delay
    /// than Not-ECT.
    pub ecn: bool,
    /// Two flows of different priorities: their rates in the ratio of their priorities.
    pub priority: bool,
}

/// A time window of a case, on one bottleneck link, over some media flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Window {
    pub label: String,
    /// The window, s; rates are measured from `settle` on, the queue over all of it.
    pub from: f64,
    pub settle: f64,
    pub to: f64,
    /// The index of the bottleneck link (of the case's network).
    pub link: u16,
    /// The media flows measured on it.
    pub flows: Vec<usize>,
    pub asks: Asks,
}

/// The network of a case for one scheme, and what to measure in it.
struct Setup {
    net: Network,
    /// The scheme spec the media flows run (`nada:ecn=true` for `nada` in `6-ecn`).
    spec: String,
    /// The media flows (the scheme under test), by index.
    media: Vec<usize>,
    /// The cross traffic: TCP flows, and the CBR flows of RFC 8869's Wi-Fi cases.
    tcp: Vec<usize>,
    windows: Vec<Window>,
    /// Media flows whose convergence is measured: (flow, from when in s, the fair share then
    /// in kbit/s).
    converging: Vec<(usize, f64, f64)>,
}

/// One window, measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WindowResult {
    pub window: Window,
    /// The link's mean capacity over `settle..to`, kbit/s.
    pub capacity_kbps: f64,
    /// Each measured media flow's delivered rate over `settle..to`, kbit/s.
    pub flow_kbps: Vec<f64>,
    /// The delivered rate of the cross traffic (TCP, or CBR in the Wi-Fi cases) whose data
    /// crosses the window's link, over `settle..to`, kbit/s, together.
    pub tcp_kbps: f64,
    /// The mean number of TCP flows active over `settle..to`.
    pub tcp_active: f64,
    /// (media + TCP) / capacity over `settle..to`.
    pub utilization: f64,
    /// The p95 of the queueing delay of the measured flows' packets delivered in `from..to`.
    pub queue_p95_ms: Option<f64>,
    /// The measured flows' packets lost of those sent in `from..to`.
    pub loss: f64,
    pub jain: f64,
    /// The measured flows' packets delivered in `from..to` that arrived CE-marked.
    pub ce_marks: u64,
    /// Of the lost packets: those the AQM dropped at dequeue (CoDel), and those the queue
    /// rejected at enqueue (its limit, PIE's early drop).
    pub aqm_drops: u64,
    pub queue_drops: u64,
    /// The measured flows' packets sent in `from..to`.
    pub sent: u64,
}

/// One scheme on one case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseRun {
    pub case: &'static str,
    pub scheme: String,
    /// The spec the media flows ran (the scheme's ECN mode in `6-ecn`, else the scheme).
    pub spec: String,
    pub windows: Vec<WindowResult>,
    /// (flow, seconds from its start, or from its resume in §5.8, until its 1-s rate first
    /// reached 80 % of its fair share).
    pub convergence_s: Vec<(usize, Option<f64>)>,
    /// In `6-ecn`: the queueing delay p95 of the same scheme's `6-not-ect` run.
    pub not_ect_queue_p95_ms: Option<f64>,
    /// Per 1-s bin: the capacity of flow 0's bottleneck and each flow's rate (kbit/s) and mean
    /// queueing delay (ms), for the figures.
    #[serde(skip)]
    pub series: crate::metrics::TimeSeries,
    /// Which flows of the series are media flows (the rest TCP).
    #[serde(skip)]
    pub media: Vec<usize>,
}

/// The evaluation's result.
#[derive(Clone, Debug, Serialize)]
pub struct Rmcat {
    pub quick: bool,
    pub seed: u64,
    pub runs: Vec<CaseRun>,
}

/// Runs every case for every scheme; `on_done(done, total)` after each run.
pub fn run(o: &Options, on_done: &(dyn Fn(usize, usize) + Sync)) -> Result<Rmcat, Error> {
    run_or_cancel(o, on_done, &AtomicBool::new(false))
}

/// [`run`] that stops with [`SimError::Cancelled`] once `cancel` is set.
pub fn run_or_cancel(
    o: &Options,
    on_done: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<Rmcat, Error> {
    let tables = Tables::new();
    let mut jobs = vec![];
    for case in &CASES {
        for scheme in &o.schemes {
            if (case.id == "6-ecn" && ecn_spec(scheme).is_none())
                || (case.id == "6-priority" && priority_spec(scheme, 1.0).is_none())
            {
                continue;
            }
            let mut setup = setup(case.id, scheme, o)?;
            setup.net.run.tables = tables.clone();
            jobs.push((case.id, scheme.clone(), setup));
        }
    }
    let stop = || cancel.load(Ordering::Relaxed);
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    type Slot = Option<Result<CaseRun, SimError>>;
    let results: Mutex<Vec<Slot>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..o.jobs.clamp(1, jobs.len().max(1)) {
            s.spawn(|| {
                while !stop() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((case, scheme, setup)) = jobs.get(i) else {
                        break;
                    };
                    let r = run_network_or_cancel(&setup.net, None, Some(&stop))
                        .map(|r| measure(case, scheme, setup, &r));
                    results.lock().expect("results lock")[i] = Some(r);
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    on_done(d, jobs.len());
                }
            });
        }
    });
    let mut runs = vec![];
    for r in results.into_inner().expect("results lock") {
        runs.push(r.unwrap_or(Err(SimError::Cancelled))?);
    }
    let not_ect: Vec<(String, Option<f64>)> = (runs.iter())
        .filter(|r| r.case == "6-not-ect")
        .map(|r| (r.scheme.clone(), r.windows[0].queue_p95_ms))
        .collect();
    for r in runs.iter_mut().filter(|r| r.case == "6-ecn") {
        r.not_ect_queue_p95_ms = (not_ect.iter())
            .find(|(s, _)| *s == r.scheme)
            .and_then(|&(_, q)| q);
    }
    Ok(Rmcat {
        quick: o.quick,
        seed: o.seed,
        runs,
    })
}

fn model(spec: &str) -> Result<LinkModel, Error> {
    (spec.parse::<LinkSpec>())
        .map_err(|e| Error::Setup(format!("link `{spec}`: {e}")))?
        .load()
        .map_err(|e| Error::Setup(format!("link `{spec}`: {e}")))
}

/// A drop-tail queue of 300 ms at `mbps`.
fn queue_300ms(mbps: f64) -> QueueSpec {
    QueueSpec::DropTail(Limits {
        packets: None,
        bytes: Some((mbps * 1e6 * 0.3 / 8.0).round() as u64),
    })
}

fn wired(label: &str, model: Option<LinkModel>, queue: QueueSpec, delay_ms: u64) -> WiredLink {
    WiredLink {
        label: label.into(),
        model,
        queue,
        delay: Duration::from_millis(delay_ms),
        loss: LossSpec::None,
    }
}

fn flow(scheme: &str, start: f64, stop: Option<f64>, data: u16, feedback: u16) -> RoutedFlow {
    RoutedFlow {
        spec: FlowSpec {
            start: Duration::from_secs_f64(start),
            stop: stop.map(Duration::from_secs_f64),
            ..FlowSpec::new(scheme.parse().expect("checked scheme"))
        },
        dscp: 0,
        data: vec![Hop::Link(data)],
        feedback: vec![Hop::Link(feedback)],
        reference: Some(data),
        pingpair: None,
    }
}

/// `steps:` spec of (Mbit/s, from s) pairs, times scaled by `k`.
fn steps(points: &[(f64, f64)], k: f64) -> String {
    let items: Vec<String> = (points.iter())
        .map(|&(mbps, at)| {
            format!(
                "{}kbps@{}ms",
                (mbps * 1000.0).round(),
                (at * k * 1000.0).round()
            )
        })
        .collect();
    format!("steps:{}", items.join(","))
}

/// Windows over the phases `bounds` (s, scaled) of link `link` for `flows`.
fn phases(bounds: &[f64], link: u16, flows: &[usize], asks: Asks, tag: &str) -> Vec<Window> {
    (bounds.windows(2))
        .map(|w| Window {
            label: format!("{tag}{:.0}–{:.0} s", w[0], w[1]),
            from: w[0],
            settle: (w[0] + w[1]) / 2.0,
            to: w[1],
            link,
            flows: flows.to_vec(),
            asks,
        })
        .collect()
}

fn settled(label: &str, (from, to): (f64, f64), flows: &[usize], asks: Asks) -> Window {
    Window {
        label: label.into(),
        from,
        settle: from,
        to,
        link: 0,
        flows: flows.to_vec(),
        asks,
    }
}

fn check_scheme(scheme: &str) -> Result<(), Error> {
    (scheme.parse::<wisp_core::scheme::SchemeConfig>())
        .map(|_| ())
        .map_err(|e| Error::Setup(format!("scheme `{scheme}`: {e}")))
}

const UTIL_QUEUE: Asks = Asks {
    util: true,
    queue: true,
    jain: false,
    shares: false,
    ecn: false,
    priority: false,
};
const FAIR: Asks = Asks {
    jain: true,
    ..UTIL_QUEUE
};
const SHARES: Asks = Asks {
    util: false,
    queue: false,
    jain: false,
    shares: true,
    ecn: false,
    priority: false,
};
const ECN: Asks = Asks {
    util: false,
    queue: false,
    jain: false,
    shares: false,
    ecn: true,
    priority: false,
};
const PRIORITY: Asks = Asks {
    priority: true,
    ..UTIL_QUEUE
};

fn pipe(label: &str, ms: u64) -> WiredLink {
    wired(label, None, QueueSpec::Infinite, ms)
}

/// A case's links, flows, windows and length (s).
type Parts = (Vec<WiredLink>, Vec<RoutedFlow>, Vec<Window>, f64);

/// The flows of a case by role: media (the scheme under test), TCP, and the media flows whose
/// convergence is measured with their fair share (kbit/s).
#[derive(Default)]
struct Roles {
    media: Vec<usize>,
    tcp: Vec<usize>,
    converging: Vec<(usize, f64, f64)>,
    /// The media flows' spec, if not the scheme (`6-ecn`).
    spec: Option<String>,
}

/// The network and windows of case `id` for `scheme`.
fn setup(id: &str, scheme: &str, o: &Options) -> Result<Setup, Error> {
    check_scheme(scheme)?;
    let mut roles = Roles::default();
    let mut media = vec![];
    let (links, flows, windows, secs) = match id {
        "5.1" | "5.2" | "5.3" | "5.4" => capacity_cases(id, scheme, o, &mut roles)?,
        "5.8" | "6-ecn" | "6-not-ect" => pause_ecn_cases(id, scheme, o, &mut roles)?,
        "6-priority" => priority_case(scheme, o, &mut roles)?,
        "6-bottlenecks" => bottlenecks_case(scheme, o, &mut roles)?,
        _ if wifi::is_wifi(id) => {
            let (parts, medium) = wifi::case(id, scheme, o.quick, &mut roles)?;
            media.push(medium);
            parts
        }
        _ => sharing_cases(id, scheme, o, &mut roles)?,
    };
    let mut run = RunSettings::new(Duration::from_secs_f64(secs));
    run.seed = o.seed;
    run.bin = Duration::from_secs(1);
    let net = Network {
        links,
        media,
        flows,
        run,
    };
    Ok(Setup {
        net,
        spec: roles.spec.unwrap_or_else(|| scheme.to_string()),
        media: roles.media,
        tcp: roles.tcp,
        windows,
        converging: roles.converging,
    })
}

/// RFC 8867 §5.1–5.4: capacity steps and flows of the same scheme.
fn capacity_cases(id: &str, scheme: &str, o: &Options, roles: &mut Roles) -> Result<Parts, Error> {
    let k = if o.quick { 0.5 } else { 1.0 };
    let phase = |b: &[f64]| b.iter().map(|t| t * k).collect::<Vec<_>>();
    let (media, converging) = (&mut roles.media, &mut roles.converging);
    Ok(match id {
        "5.1" => {
            let m = model(&steps(
                &[(1.0, 0.0), (2.5, 40.0), (0.6, 60.0), (1.0, 80.0)],
                k,
            ))?;
            let links = vec![
                wired("bottleneck", Some(m), queue_300ms(1.0), 50),
                pipe("back", 50),
            ];
            media.push(0);
            let w = phases(
                &phase(&[0.0, 40.0, 60.0, 80.0, 100.0]),
                0,
                &[0],
                UTIL_QUEUE,
                "",
            );
            (links, vec![flow(scheme, 0.0, None, 0, 1)], w, 100.0 * k)
        }
        "5.2" => {
            let pts = [
                (4.0, 0.0),
                (2.0, 25.0),
                (3.5, 50.0),
                (1.0, 75.0),
                (2.0, 100.0),
            ];
            let m = model(&steps(&pts, k))?;
            let links = vec![
                wired("bottleneck", Some(m), queue_300ms(4.0), 50),
                pipe("back", 50),
            ];
            media.extend([0, 1]);
            let b = phase(&[0.0, 25.0, 50.0, 75.0, 100.0, 125.0]);
            let flows = vec![flow(scheme, 0.0, None, 0, 1), flow(scheme, 0.0, None, 0, 1)];
            (links, flows, phases(&b, 0, &[0, 1], FAIR, ""), 125.0 * k)
        }
        "5.3" => {
            let f = model(&steps(
                &[(2.0, 0.0), (1.0, 20.0), (0.5, 40.0), (2.0, 60.0)],
                k,
            ))?;
            let b = model(&steps(&[(2.0, 0.0), (0.8, 35.0), (2.0, 70.0)], k))?;
            let links = vec![
                wired("forward", Some(f), queue_300ms(2.0), 50),
                wired("backward", Some(b), queue_300ms(2.0), 50),
            ];
            media.extend([0, 1]);
            let mut w = phases(
                &phase(&[0.0, 20.0, 40.0, 60.0, 100.0]),
                0,
                &[0],
                UTIL_QUEUE,
                "forward ",
            );
            w.extend(phases(
                &phase(&[0.0, 35.0, 70.0, 100.0]),
                1,
                &[1],
                UTIL_QUEUE,
                "backward ",
            ));
            let flows = vec![flow(scheme, 0.0, None, 0, 1), flow(scheme, 0.0, None, 1, 0)];
            (links, flows, w, 100.0 * k)
        }
        "5.4" => {
            let m = model("const:3.5mbps")?;
            let links = vec![
                wired("bottleneck", Some(m), queue_300ms(3.5), 50),
                pipe("back", 50),
            ];
            let starts = [0.0, 20.0 * k, 40.0 * k];
            media.extend([0, 1, 2]);
            converging.extend([(1, starts[1], 3500.0 / 2.0), (2, starts[2], 3500.0 / 3.0)]);
            let flows = starts
                .iter()
                .map(|&t| flow(scheme, t, None, 0, 1))
                .collect();
            let label = format!("{:.0}–{:.0} s", 80.0 * k, 120.0 * k);
            let w = vec![settled(&label, (80.0 * k, 120.0 * k), &[0, 1, 2], FAIR)];
            (links, flows, w, 120.0 * k)
        }
        _ => unreachable!("a capacity case"),
    })
}

/// RFC 8867 §5.5–5.7 (round trips, TCP) and RFC 8869's cellular case.
fn sharing_cases(id: &str, scheme: &str, o: &Options, roles: &mut Roles) -> Result<Parts, Error> {
    let k = if o.quick { 0.5 } else { 1.0 };
    let (media, tcp, converging) = (&mut roles.media, &mut roles.tcp, &mut roles.converging);
    Ok(match id {
        "5.5" => {
            let m = model("const:4mbps")?;
            let mut links = vec![wired("bottleneck", Some(m), queue_300ms(4.0), 10)];
            let mut flows = vec![];
            for (i, d) in [10u64, 25, 50, 100, 150].into_iter().enumerate() {
                links.push(pipe(&format!("back-{d}ms"), 2 * d - 10));
                flows.push(flow(scheme, 10.0 * i as f64 * k, None, 0, i as u16 + 1));
                media.push(i);
            }
            for i in 1..5 {
                converging.push((i, 10.0 * i as f64 * k, 4000.0 / (i + 1) as f64));
            }
            let secs = if o.quick { 150.0 } else { 300.0 };
            let window = (secs / 3.0, secs);
            let label = format!("{:.0}–{:.0} s", window.0, window.1);
            let w = vec![settled(&label, window, media, FAIR)];
            (links, flows, w, secs)
        }
        "5.6" => {
            let m = model("const:2mbps")?;
            let links = vec![
                wired("bottleneck", Some(m), queue_300ms(2.0), 50),
                pipe("back", 50),
            ];
            let end = 119.0 * k;
            let flows = vec![
                flow(scheme, 5.0 * k, Some(end), 0, 1),
                flow("newreno", 0.0, None, 0, 1),
            ];
            media.push(0);
            tcp.push(1);
            let label = format!("{:.0}–{end:.1} s", 30.0 * k);
            let w = vec![settled(&label, (30.0 * k, end), &[0], SHARES)];
            (links, flows, w, 120.0 * k)
        }
        "5.7" => {
            let m = model("const:2mbps")?;
            let links = vec![
                wired("bottleneck", Some(m), queue_300ms(2.0), 50),
                pipe("back", 50),
            ];
            let secs = if o.quick { 150.0 } else { 300.0 };
            let mut flows = vec![
                flow(scheme, 5.0, Some(secs - 1.0), 0, 1),
                flow(scheme, 5.0, Some(secs - 1.0), 0, 1),
            ];
            media.extend([0, 1]);
            for (start, bytes) in short_downloads(o.seed, secs) {
                tcp.push(flows.len());
                let mut f = flow("newreno", start, None, 0, 1);
                f.spec.bytes = Some(bytes);
                flows.push(f);
            }
            let label = format!("30–{:.0} s", secs - 1.0);
            let w = vec![settled(&label, (30.0, secs - 1.0), &[0, 1], SHARES)];
            (links, flows, w, secs)
        }
        _ => {
            let Some(&(_, down, up)) = CELLULAR.iter().find(|c| c.0 == id) else {
                return Err(Error::Setup(format!("no case `{id}`")));
            };
            let dir = shipped("traces/cellular");
            let trace = |t: &str| model(&format!("trace:{}", dir.join(t).display()));
            let links = vec![
                wired("downlink", Some(trace(down)?), QueueSpec::Infinite, 20),
                wired("uplink", Some(trace(up)?), QueueSpec::Infinite, 20),
            ];
            let secs = if o.quick { 30.0 } else { 60.0 };
            media.push(0);
            let w = vec![settled(
                &format!("0–{secs:.0} s"),
                (0.0, secs),
                &[0],
                Asks::default(),
            )];
            (links, vec![flow(scheme, 0.0, None, 0, 1)], w, secs)
        }
    })
}

/// `scheme` in its ECN mode, if it has one: NADA's ECT(0) (`ecn=true`), SCReAM's L4S
/// (`ecn=l4s`, ECT(1)).
pub fn ecn_spec(scheme: &str) -> Option<String> {
    let ecn = match scheme_name(scheme) {
        "nada" => "ecn=true",
        "scream" => "ecn=l4s",
        _ => return None,
    };
    Some(with_param(scheme, ecn))
}

/// The scheme's name: its spec up to the parameters.
fn scheme_name(spec: &str) -> &str {
    spec.split_once(':').map_or(spec, |(name, _)| name)
}

/// `spec` with `param` (`key=value`) added to its parameters.
fn with_param(spec: &str, param: &str) -> String {
    match spec.split_once(':') {
        Some((name, params)) if !params.is_empty() => format!("{name}:{params},{param}"),
        _ => format!("{}:{param}", scheme_name(spec)),
    }
}

/// The marking queue of the §6 ECN cases for `scheme`, 300 ms at 1 Mbit/s: DualPI2 for
/// SCReAM (its L4S mode's queue), CoDel marking ECT(0) for the others.
fn ecn_queue(scheme: &str) -> Result<QueueSpec, Error> {
    let bytes = (1e6 * 0.3 / 8.0) as u64;
    let spec = if scheme.split(':').next() == Some("scream") {
        format!("dualpi2:bytes={bytes}")
    } else {
        format!("codel:ecn=on,bytes={bytes}")
    };
    (spec.parse::<QueueSpec>()).map_err(|e| Error::Setup(format!("queue `{spec}`: {e}")))
}

/// `scheme` with its priority set to `prio`, for the schemes that take one (NADA's PRIO,
/// RFC 8698 §4.3 eq. 5–7); `None` for the others.
pub fn priority_spec(scheme: &str, prio: f64) -> Option<String> {
    (scheme_name(scheme) == "nada").then(|| with_param(scheme, &format!("prio={prio}")))
}

/// RFC 8867 §6, media flows with priority: two flows of the scheme from 0 s on 3 Mbit/s (50 ms,
/// the 300-ms queue), the first at PRIO 1, the second at [`PRIORITY_LOW`]; 120 s; measured over
/// the second half.
fn priority_case(scheme: &str, o: &Options, roles: &mut Roles) -> Result<Parts, Error> {
    let k = if o.quick { 0.5 } else { 1.0 };
    let (high, low) = match (
        priority_spec(scheme, 1.0),
        priority_spec(scheme, PRIORITY_LOW),
    ) {
        (Some(h), Some(l)) => (h, l),
        _ => return Err(Error::Setup(format!("`{scheme}` takes no priority"))),
    };
    check_scheme(&high)?;
    check_scheme(&low)?;
    let links = vec![
        wired(
            "bottleneck",
            Some(model("const:3mbps")?),
            queue_300ms(3.0),
            50,
        ),
        pipe("back", 50),
    ];
    let flows = vec![flow(&high, 0.0, None, 0, 1), flow(&low, 0.0, None, 0, 1)];
    roles.media.extend([0, 1]);
    roles.spec = Some(format!("{high} + {low}"));
    let end = 120.0 * k;
    let w = vec![settled(
        &format!("{:.0}–{end:.0} s", end / 2.0),
        (end / 2.0, end),
        &[0, 1],
        PRIORITY,
    )];
    Ok((links, flows, w, end))
}

/// RFC 8867 §6, multiple bottlenecks, as a parking lot: flow 0 crosses two bottlenecks of
/// 2 Mbit/s in series (A→B behind the 50-ms propagation, then B→C), flow 1 shares A→B only,
/// flow 2 (behind a 50-ms pipe of its own) B→C only; all three from 0 s, 120 s, every flow's
/// feedback back over one 50-ms pipe. Each bottleneck is measured over the run's second half
/// for the two flows that cross it.
fn bottlenecks_case(scheme: &str, o: &Options, roles: &mut Roles) -> Result<Parts, Error> {
    let k = if o.quick { 0.5 } else { 1.0 };
    let links = vec![
        wired("A→B", Some(model("const:2mbps")?), queue_300ms(2.0), 50),
        wired("B→C", Some(model("const:2mbps")?), queue_300ms(2.0), 0),
        pipe("back", 50),
        pipe("to B", 50),
    ];
    let routed = |data: Vec<Hop>, reference: u16| RoutedFlow {
        data,
        reference: Some(reference),
        ..flow(scheme, 0.0, None, 0, 2)
    };
    let flows = vec![
        routed(vec![Hop::Link(0), Hop::Link(1)], 0),
        routed(vec![Hop::Link(0)], 0),
        routed(vec![Hop::Link(3), Hop::Link(1)], 1),
    ];
    roles.media.extend([0, 1, 2]);
    let end = 120.0 * k;
    let window = |name: &str, link: u16, flows: &[usize]| Window {
        link,
        ..settled(
            &format!("{name} {:.0}–{end:.0} s", end / 2.0),
            (end / 2.0, end),
            flows,
            FAIR,
        )
    };
    let w = vec![window("A→B", 0, &[0, 1]), window("B→C", 1, &[0, 2])];
    Ok((links, flows, w, end))
}

/// RFC 8867 §5.8 (pause and resume) and §6's ECN usage.
fn pause_ecn_cases(id: &str, scheme: &str, o: &Options, roles: &mut Roles) -> Result<Parts, Error> {
    let k = if o.quick { 0.5 } else { 1.0 };
    Ok(match id {
        "5.8" => {
            let m = model("const:3.5mbps")?;
            let links = vec![
                wired("bottleneck", Some(m), queue_300ms(3.5), 50),
                pipe("back", 50),
            ];
            let (pause, resume, end) = (40.0 * k, 60.0 * k, 120.0 * k);
            let mut flows: Vec<RoutedFlow> =
                (0..3).map(|_| flow(scheme, 0.0, None, 0, 1)).collect();
            flows[1].spec.pauses = vec![(
                Duration::from_secs_f64(pause),
                Duration::from_secs_f64(resume),
            )];
            roles.media.extend([0, 1, 2]);
            roles.converging.push((1, resume, 3500.0 / 3.0));
            let mut w = phases(&[0.0, pause], 0, &[0, 1, 2], FAIR, "before ");
            w.extend(phases(&[pause, resume], 0, &[0, 2], FAIR, "paused "));
            w.extend(phases(&[resume, end], 0, &[0, 1, 2], FAIR, "resumed "));
            (links, flows, w, end)
        }
        _ => {
            let m = model(&steps(
                &[(1.0, 0.0), (2.5, 40.0), (0.6, 60.0), (1.0, 80.0)],
                k,
            ))?;
            let links = vec![
                wired("bottleneck", Some(m), ecn_queue(scheme)?, 50),
                pipe("back", 50),
            ];
            let ecn = id == "6-ecn";
            let spec = if ecn {
                ecn_spec(scheme)
                    .ok_or_else(|| Error::Setup(format!("`{scheme}` has no ECN mode")))?
            } else {
                scheme.to_string()
            };
            check_scheme(&spec)?;
            roles.media.push(0);
            let secs = 100.0 * k;
            let asks = if ecn { ECN } else { Asks::default() };
            let w = vec![settled(&format!("0–{secs:.0} s"), (0.0, secs), &[0], asks)];
            let flows = vec![flow(&spec, 0.0, None, 0, 1)];
            roles.spec = Some(spec);
            (links, flows, w, secs)
        }
    })
}

/// RFC 8868 §6.1's short TCP flows over `secs`: (start s, bytes) of every download of ten
/// slots, two on at 5 s and eight after an idle time, idle times exponential (mean 10 s),
/// sizes uniform in 30–50 kB; from the run's seed.
pub fn short_downloads(seed: u64, secs: f64) -> Vec<(f64, u64)> {
    let mut rng = crate::seed::stream(seed, "rmcat/short-tcp");
    let mut idle = || -10.0 * (1.0 - rng.random::<f64>()).ln();
    let mut starts = vec![];
    for slot in 0..10 {
        let mut t = if slot < 2 { 5.0 } else { 5.0 + idle() };
        while t < secs - 5.0 {
            starts.push(t);
            t += idle();
        }
    }
    let mut rng = crate::seed::stream(seed, "rmcat/short-tcp-size");
    (starts.into_iter())
        .map(|t| (t, rng.random_range(30_000..=50_000)))
        .collect()
}

fn at(s: f64) -> Instant {
    Instant::ZERO + Duration::from_secs_f64(s.max(0.0))
}

/// Flow `f`'s delivered kbit/s over [from, to).
fn kbps(r: &NetworkResult, f: usize, from: f64, to: f64) -> f64 {
    kbps_by_flow(r, f + 1, from, to)[f]
}

/// Every flow's delivered kbit/s over [from, to) (flows `0..n`), in one pass over the log.
fn kbps_by_flow(r: &NetworkResult, n: usize, from: f64, to: f64) -> Vec<f64> {
    let (a, b) = (at(from), at(to));
    let mut bytes = vec![0u64; n];
    for p in r.log.packets.iter() {
        if let Some(x) = bytes.get_mut(p.flow as usize)
            && p.delivered.is_some_and(|d| d >= a && d < b)
        {
            *x += p.header.size.bytes();
        }
    }
    (bytes.into_iter())
        .map(|x| x as f64 * 8.0 / 1000.0 / (to - from))
        .collect()
}

/// Jain's fairness index: (Σx)² / (n·Σx²); 1 for one flow or none.
pub fn jain(rates: &[f64]) -> f64 {
    let sum: f64 = rates.iter().sum();
    let squares: f64 = rates.iter().map(|x| x * x).sum();
    if squares == 0.0 {
        1.0
    } else {
        sum * sum / (rates.len() as f64 * squares)
    }
}

fn measure_window(s: &Setup, w: &Window, r: &NetworkResult) -> WindowResult {
    let model = s.net.links[w.link as usize]
        .model
        .as_ref()
        .expect("a bottleneck");
    let offered: f64 = model
        .capacity_bins(at(w.settle), at(w.to), at(w.to) - at(w.settle))
        .iter()
        .sum();
    let capacity_kbps = offered * 8.0 / 1000.0 / (w.to - w.settle);
    let rates = kbps_by_flow(r, s.net.flows.len(), w.settle, w.to);
    let flow_kbps: Vec<f64> = w.flows.iter().map(|&f| rates[f]).collect();
    let cross = crossing(s, w);
    let tcp_kbps = (cross.iter()).fold(0.0, |sum, &f| sum + rates[f]);
    let tcp_active = active_tcp(&cross, r, w);
    let (a, b) = (at(w.from), at(w.to));
    let mine = |p: &&crate::log::PacketRecord| w.flows.contains(&(p.flow as usize));
    let mut q: Vec<f64> = (r.log.packets.iter().filter(mine))
        .filter_map(|p| Some((p.delivered?, p.enqueued?)))
        .filter(|&(d, _)| d >= a && d < b)
        .map(|(d, e)| (d - e).as_millis_f64())
        .collect();
    let queue_p95_ms = quantiles(&mut q, &[0.95])[0];
    let sent: Vec<_> = (r.log.packets.iter().filter(mine))
        .filter(|p| p.sent() >= a && p.sent() < b)
        .collect();
    let lost = sent.iter().filter(|p| p.dropped.is_some()).count();
    let ce_marks = (r.log.packets.iter().filter(mine))
        .filter(|p| p.delivered.is_some_and(|d| d >= a && d < b))
        .filter(|p| p.header.ecn == wisp_core::packet::Ecn::Ce)
        .count() as u64;
    let dropped = |why| sent.iter().filter(|p| p.reason == why).count() as u64;
    WindowResult {
        ce_marks,
        aqm_drops: dropped(DropReason::Aqm),
        queue_drops: dropped(DropReason::Queue),
        sent: sent.len() as u64,
        window: w.clone(),
        capacity_kbps,
        utilization: (flow_kbps.iter().sum::<f64>() + tcp_kbps) / capacity_kbps,
        jain: jain(&flow_kbps),
        flow_kbps,
        tcp_kbps,
        tcp_active,
        queue_p95_ms,
        loss: lost as f64 / sent.len().max(1) as f64,
    }
}

/// The cross-traffic flows (TCP or CBR) whose data crosses the window's link.
fn crossing(s: &Setup, w: &Window) -> Vec<usize> {
    (s.tcp.iter().copied())
        .filter(|&f| s.net.flows[f].data.contains(&Hop::Link(w.link)))
        .collect()
}

/// The mean number of the cross-traffic flows `cross` with a packet in flight over the window's
/// settled part, by 100-ms steps (a download is active from its first packet sent to its last delivered).
fn active_tcp(cross: &[usize], r: &NetworkResult, w: &Window) -> f64 {
    let spans: Vec<(Instant, Instant)> = (cross.iter())
        .filter_map(|&f| {
            let mine = r.log.packets.iter().filter(|p| p.flow as usize == f);
            let first = mine.clone().map(|p| p.sent()).min()?;
            let last = mine.filter_map(|p| p.delivered.or(p.dropped)).max()?;
            Some((first, last))
        })
        .collect();
    let steps = ((w.to - w.settle) * 10.0).round().max(1.0) as usize;
    let total: usize = (0..steps)
        .map(|i| {
            let t = at(w.settle + i as f64 / 10.0);
            spans.iter().filter(|&&(a, b)| a <= t && t < b).count()
        })
        .sum();
    total as f64 / steps as f64
}

fn measure(case: &'static str, scheme: &str, s: &Setup, r: &NetworkResult) -> CaseRun {
    let windows = s.windows.iter().map(|w| measure_window(s, w, r)).collect();
    let end = s.net.run.duration.as_secs_f64();
    let convergence_s = (s.converging.iter())
        .map(|&(f, start, share)| {
            let t = (0..((end - start - 1.0) * 10.0).max(0.0) as usize)
                .map(|i| start + i as f64 / 10.0)
                .find(|&t| kbps(r, f, t, t + 1.0) >= 0.8 * share)
                .map(|t| t + 1.0 - start);
            (f, t)
        })
        .collect();
    CaseRun {
        case,
        scheme: scheme.to_string(),
        spec: s.spec.clone(),
        windows,
        convergence_s,
        not_ect_queue_p95_ms: None,
        series: media_and_tcp(&r.series, &s.media, &s.tcp),
        media: s.media.clone(),
    }
}

/// `series` with the media flows as they are and the TCP flows summed into one (their
/// queueing delay left out: they cross the same queue).
fn media_and_tcp(
    series: &crate::metrics::TimeSeries,
    media: &[usize],
    tcp: &[usize],
) -> crate::metrics::TimeSeries {
    let mut out = series.clone();
    out.flows = media.iter().map(|&f| series.flows[f].clone()).collect();
    if !tcp.is_empty() {
        let n = series.t_s.len();
        let mut sum = crate::metrics::FlowSeries {
            send_kbps: vec![0.0; n],
            throughput_kbps: vec![0.0; n],
            delay_ms: vec![None; n],
            queue_delay_ms: vec![None; n],
            queue_delay_max_ms: vec![None; n],
        };
        for &f in tcp {
            for i in 0..n {
                sum.send_kbps[i] += series.flows[f].send_kbps[i];
                sum.throughput_kbps[i] += series.flows[f].throughput_kbps[i];
            }
        }
        out.flows.push(sum);
    }
    out
}

fn fmt_ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.0} ms"))
}

impl CaseRun {
    /// This run's checks (none for the reference scheme or a reported case).
    pub fn checks(&self) -> Vec<Check> {
        if self.scheme == REFERENCE {
            return vec![];
        }
        let mut out = vec![];
        let scope = |w: &WindowResult| format!("{} {} {}", self.case, self.scheme, w.window.label);
        for w in &self.windows {
            let a = w.window.asks;
            if a.ecn {
                out.extend(self.ecn_checks(w));
            }
            if a.priority {
                out.push(self.priority_check(w));
            }
            if a.util {
                out.push(Check {
                    id: Some("utilization"),
                    scope: Some(scope(w)),
                    claim: format!("{}: {}", scope(w), "converges to the bottleneck capacity: utilisation over the phase's second half"),
                    expected: format!("≥ {UTIL_MIN}"),
                    measured: format!("{:.3} of {:.0} kbit/s", w.utilization, w.capacity_kbps),
                    met: w.utilization >= UTIL_MIN,
                    not_applicable: None,
                });
            }
            if a.queue {
                out.push(Check {
                    id: Some("queue"),
                    scope: Some(scope(w)),
                    claim: format!(
                        "{}: {}",
                        scope(w),
                        "does not live on a full queue: queueing delay p95 over the phase"
                    ),
                    expected: format!("< {QUEUE_P95_MAX_MS:.0} ms"),
                    measured: fmt_ms(w.queue_p95_ms),
                    met: w.queue_p95_ms.is_some_and(|q| q < QUEUE_P95_MAX_MS),
                    not_applicable: None,
                });
            }
            if a.jain {
                out.push(Check {
                    id: Some("fairness"),
                    scope: Some(scope(w)),
                    claim: format!(
                        "{}: {}",
                        scope(w),
                        "the flows converge to their fair share: Jain's index"
                    ),
                    expected: format!("≥ {JAIN_MIN}"),
                    measured: format!("{:.3} ({})", w.jain, rates(&w.flow_kbps)),
                    met: w.jain >= JAIN_MIN,
                    not_applicable: None,
                });
            }
            if a.shares {
                let even = w.capacity_kbps / (w.flow_kbps.len() as f64 + w.tcp_active.max(1.0));
                let media_min = w.flow_kbps.iter().copied().fold(f64::INFINITY, f64::min);
                let tcp_each = w.tcp_kbps / w.tcp_active.max(1.0);
                out.push(Check {
                    id: Some("media-share"),
                    scope: Some(scope(w)),
                    claim: format!(
                        "{}: {}",
                        scope(w),
                        "the media flow is not starved by TCP: its rate against an even split"
                    ),
                    expected: format!("≥ {SHARE_MIN} × {even:.0} kbit/s"),
                    measured: format!("{media_min:.0} kbit/s"),
                    met: media_min >= SHARE_MIN * even,
                    not_applicable: None,
                });
                out.push(Check {
                    id: Some("tcp-share"),
                    scope: Some(scope(w)),
                    claim: format!("{}: {}", scope(w), "TCP is not starved by the media flow: its rate per active flow against an even split"),
                    expected: format!("≥ {SHARE_MIN} × {even:.0} kbit/s"),
                    measured: format!("{tcp_each:.0} kbit/s ({:.2} flows active)", w.tcp_active),
                    met: tcp_each >= SHARE_MIN * even,
                    not_applicable: None,
                });
            }
        }
        out
    }
}

impl CaseRun {
    /// The check of two flows of different priorities (window `w`, flows 0 at PRIO 1 and 1 at
    /// [`PRIORITY_LOW`]).
    fn priority_check(&self, w: &WindowResult) -> Check {
        let scope = format!("{} {} {}", self.case, self.scheme, w.window.label);
        let want = 1.0 / PRIORITY_LOW;
        let ratio = match w.flow_kbps.as_slice() {
            [hi, lo, ..] if *lo > 0.0 => Some(hi / lo),
            _ => None,
        };
        Check {
            id: Some("priority"),
            scope: Some(scope.clone()),
            claim: format!(
                "{scope}: the flows share in the ratio of their priorities (1 : {PRIORITY_LOW}): \
                 the PRIO-1 flow's rate over the other's"
            ),
            expected: format!(
                "{:.2}–{:.2} ({want:.0} ± {:.0} %)",
                want * (1.0 - PRIORITY_RATIO_TOLERANCE),
                want * (1.0 + PRIORITY_RATIO_TOLERANCE),
                100.0 * PRIORITY_RATIO_TOLERANCE
            ),
            measured: ratio.map_or("–".into(), |r| {
                format!("{r:.2} ({})", rates(&w.flow_kbps))
            }),
            met: ratio.is_some_and(|r| (r / want - 1.0).abs() <= PRIORITY_RATIO_TOLERANCE),
            not_applicable: None,
        }
    }

    /// The checks of an ECN-capable flow behind a marking queue (window `w`).
    fn ecn_checks(&self, w: &WindowResult) -> Vec<Check> {
        let scope = format!("{} {} {}", self.case, self.scheme, w.window.label);
        let q = w.queue_p95_ms;
        let reference = self.not_ect_queue_p95_ms;
        vec![
            Check {
                id: Some("ecn-marks"),
                scope: Some(scope.clone()),
                claim: format!("{scope}: {} is told of congestion by CE marks", self.spec),
                expected: "> 0 CE marks".into(),
                measured: format!("{} CE marks", w.ce_marks),
                met: w.ce_marks > 0,
                not_applicable: None,
            },
            Check {
                id: Some("ecn-loss"),
                scope: Some(scope.clone()),
                claim: format!(
                    "{scope}: {} sees next to no AQM drops: the queue marks it instead",
                    self.spec
                ),
                expected: format!("AQM drops ≤ {:.1} % of packets", 100.0 * ECN_LOSS_MAX),
                measured: format!(
                    "{} AQM drops of {} packets; loss {:.3} % ({} at enqueue: the queue's limit)",
                    w.aqm_drops,
                    w.sent,
                    100.0 * w.loss,
                    w.queue_drops
                ),
                met: (w.aqm_drops as f64) <= ECN_LOSS_MAX * w.sent as f64,
                not_applicable: None,
            },
            Check {
                id: Some("ecn-queue"),
                scope: Some(scope.clone()),
                claim: format!(
                    "{scope}: {} queues no longer than Not-ECT: queueing delay p95 against 6-not-ect",
                    self.spec
                ),
                expected: format!("≤ {ECN_QUEUE_SLACK} × {}", fmt_ms(reference)),
                measured: fmt_ms(q),
                met: q
                    .zip(reference)
                    .is_some_and(|(q, r)| q <= ECN_QUEUE_SLACK * r),
                not_applicable: None,
            },
        ]
    }
}

fn rates(v: &[f64]) -> String {
    let r: Vec<String> = v.iter().map(|x| format!("{x:.0}")).collect();
    format!("{} kbit/s", r.join(" / "))
}

impl Rmcat {
    /// Every check, case by case, scheme by scheme.
    pub fn checks(&self) -> Vec<Check> {
        self.runs.iter().flat_map(CaseRun::checks).collect()
    }

    /// The run of `scheme` on `case`.
    pub fn get(&self, case: &str, scheme: &str) -> Option<&CaseRun> {
        self.runs
            .iter()
            .find(|r| r.case == case && r.scheme == scheme)
    }

    /// The schemes run, in order.
    pub fn schemes(&self) -> Vec<&str> {
        let mut out: Vec<&str> = vec![];
        for r in &self.runs {
            if !out.contains(&r.scheme.as_str()) {
                out.push(&r.scheme);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_is_one_when_equal_and_one_over_n_when_one_takes_all() {
        assert!((jain(&[2.0, 2.0, 2.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[3.0, 0.0, 0.0]) - 1.0 / 3.0).abs() < 1e-12);
        assert!((jain(&[2.0, 1.0]) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn short_downloads_follow_rfc8868_and_are_deterministic() {
        let d = short_downloads(1, 300.0);
        assert_eq!(d, short_downloads(1, 300.0));
        assert_ne!(d, short_downloads(2, 300.0));
        assert!(
            d.iter()
                .all(|&(t, b)| (5.0..295.0).contains(&t) && (30_000..=50_000).contains(&b))
        );
        // Ten slots, a download every ~10 s each over ~290 s: about 290 in all.
        assert!((200..400).contains(&d.len()), "{}", d.len());
        assert_eq!(d.iter().filter(|&&(t, _)| t == 5.0).count(), 2);
    }

    /// Same seed, same results: every case of one scheme (kwikr: Ping-Pair on the Wi-Fi cases,
    /// the medium, TCP and CBR cross traffic), `--quick`, twice.
    #[test]
    fn quick_runs_are_deterministic() {
        let mut o = Options::new(true, 1, 2);
        o.schemes = vec!["kwikr".into()];
        let none = |_: usize, _: usize| {};
        let (a, b) = (run(&o, &none).unwrap(), run(&o, &none).unwrap());
        assert_eq!(
            a.runs.len(),
            CASES.len() - 2,
            "all but 6-ecn and 6-priority"
        );
        assert_eq!(a.runs, b.runs);
        assert_eq!(a.checks(), b.checks());
    }

    #[test]
    fn a_case_network_has_the_rfc_parameters() {
        let o = Options::new(false, 1, 1);
        let s = setup("5.5", "nada", &o).unwrap();
        assert_eq!(s.net.flows.len(), 5);
        // Round trips 2·d: 10 ms forward plus 2·d − 10 back.
        let rtt: Vec<u64> = (s.net.flows.iter())
            .map(|f| {
                let Hop::Link(b) = f.feedback[0] else {
                    panic!()
                };
                (s.net.links[0].delay + s.net.links[b as usize].delay).as_millis()
            })
            .collect();
        assert_eq!(rtt, [20, 50, 100, 200, 300]);
        let s = setup("5.1", "gcc", &o).unwrap();
        assert_eq!(
            s.net.links[0].queue,
            QueueSpec::DropTail(Limits {
                packets: None,
                bytes: Some(37_500)
            })
        );
        // §5.8: flow 1 pauses over 40–60 s, the others never.
        let s = setup("5.8", "gcc", &o).unwrap();
        let pauses: Vec<_> = s.net.flows.iter().map(|f| f.spec.pauses.clone()).collect();
        let w = (Duration::from_secs(40), Duration::from_secs(60));
        assert_eq!(pauses, [vec![], vec![w], vec![]]);
        // §6: the scheme's ECN mode behind its marking queue; none for a scheme without one.
        let s = setup("6-ecn", "scream", &o).unwrap();
        assert_eq!(s.spec, "scream:ecn=l4s");
        assert!(matches!(s.net.links[0].queue, QueueSpec::DualPi2(_)));
        assert_eq!(setup("6-not-ect", "nada", &o).unwrap().spec, "nada");
        assert!(setup("6-ecn", "gcc", &o).is_err());
        assert_eq!(
            ecn_spec("nada:xref-ms=10").as_deref(),
            Some("nada:xref-ms=10,ecn=true")
        );
        // §6, multiple bottlenecks: flow 0 over both, flows 1 and 2 over one each, every one
        // 50 ms one-way.
        let s = setup("6-bottlenecks", "gcc", &o).unwrap();
        let routes: Vec<Vec<Hop>> = s.net.flows.iter().map(|f| f.data.clone()).collect();
        assert_eq!(
            routes,
            [
                vec![Hop::Link(0), Hop::Link(1)],
                vec![Hop::Link(0)],
                vec![Hop::Link(3), Hop::Link(1)]
            ]
        );
        let one_way: Vec<u64> = (routes.iter())
            .map(|r| {
                (r.iter())
                    .map(|h| match h {
                        Hop::Link(l) => s.net.links[*l as usize].delay.as_millis(),
                        _ => unreachable!(),
                    })
                    .sum()
            })
            .collect();
        assert_eq!(one_way, [50, 50, 50]);
        let crossing: Vec<(u16, Vec<usize>)> = (s.windows.iter())
            .map(|w| (w.link, w.flows.clone()))
            .collect();
        assert_eq!(crossing, [(0, vec![0, 1]), (1, vec![0, 2])]);
        assert!(setup("5.9", "gcc", &o).is_err());
        assert!(setup("5.1", "no-such-scheme", &o).is_err());
    }
}
