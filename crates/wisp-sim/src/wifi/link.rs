//! The Wi-Fi hop as a link (`wifi:KEY=VALUE,…`): a [`Medium`] with an AP, the measured
//! station, contending stations and the background load the spec names, driven packet by
//! packet by the simulator's engine or the real-time emulator.
//!
//! Nodes: 0 is the AP, 1 the measured station, `2..=stations+1` the contenders; with
//! `cochannel=M`, node `stations+2` is a second AP and the next M nodes its stations; more
//! stations can join ([`WifiLink::add_station`]). Every node is a transmitter on the one channel, with
//! one queue per access category; each queue keeps a FIFO per destination and serves the
//! destinations in turn ([`super::station`]). A caller hands packets in with
//! [`WifiLink::push`], asks when something may next happen ([`WifiLink::next_event`]) and
//! collects what the medium delivered or dropped with [`WifiLink::advance`].
//!
//! Spec keys ([`WifiSpec`] displays the canonical form):
//!
//! | key | meaning |
//! |---|---|
//! | `std` | `11b`, `11a`, `11g`, `11n` (= `11n-2.4`), `11n-5`, `11ac` (default: `11g`) |
//! | `rate` | PHY rate of every transmitter, e.g. `54mbps` or `5.5` (Mbit/s); for 11n/ac an MCS's rate at `bw` and `gi`, e.g. `65`, `72.2`, `433.3` (default: the PHY's highest there) |
//! | `stations` | contenders besides the measured station, 0–200 (default: 0) |
//! | `load` | what the contenders do: `none`, `udp[:RATE]` (constant bit rate uplink, 1 Mbit/s if no rate), `tcp` (a bulk download each), `saturated` (always a frame for the AP) (default: `saturated`) |
//! | `queue` | frames each AC queue of a transmitter holds, every destination together (default: 1000) |
//! | `ap-queue` | how an AP's AC queue serves its destinations: `per-station` (a FIFO per destination, served in turn, as mac80211) or `fifo` (one FIFO, arrival order, as a 2000s AP) (default: `per-station`) |
//! | `lifetime` | every transmitter's MSDU lifetime in ms, e.g. `300` or `300ms`: a frame queued longer is dropped before its first attempt (802.11's dot11MaxTransmitMSDULifetime, ns-3's `WifiMacQueue::MaxDelay`); checked as the medium picks its next transmission (default: none) |
//! | `wmm` | `on`: EDCA per AC (Table 9-137 defaults), DSCP → UP → AC; `off`: legacy DCF, one queue (AC_BE) (default: `on`) |
//! | `bytes` | MSDU (IP packet) size of the background frames (default: 1500) |
//! | `bw` | channel width for 11n (20, 40) and 11ac (20, 40, 80) MHz (default: 20) |
//! | `gi` | guard interval of 11n/ac rates, `long` or `short` (default: `long`) |
//! | `snr` | every transmitter's SNR in dB, or a schedule `0s:30;10s:12` (`;` between points): frames are lost with the error model's probability ([`super::fer`]) (default: none: no noise losses) |
//! | `ra` | rate adaptation: `fixed` (always `rate`), `minstrel` (Minstrel-like over the rates at `bw`/`gi`), `arf` (Auto Rate Fallback: two failed attempts step down, ten acknowledged ones or fifteen attempts step up, collisions counting as failures), `script:0s:54;5s:24` (rate vs time) (default: `fixed`) |
//! | `ampdu` | `on`: A-MPDU with block Ack for 11n/ac rates ([`super::ampdu`]) (default: `off`) |
//! | `map` | DSCP → AC overrides on top of RFC 8325, `DSCP=AC` joined by `;`, e.g. `map=46=vi;0=bk` (default: none) |
//! | `cochannel` | a second AP on the same channel with this many stations of its own, each running `load` with it, 0–200 (default: 0: none) |
//!
//! The run's seed (not the spec) drives the random draws, so one spec names one setting.
//!
//! Semantics: an output is emitted once its time has come — `at` is the end of the PPDU that
//! delivered it (the receiver has it), or the end of the attempt after which it was dropped
//! (retry limit). [`WifiLink::advance`]`(now)` carries out every transmission that starts at or
//! before `now` and emits every output with `at ≤ now`; [`WifiLink::push`]`(now, …)` first
//! carries out the transmissions that start strictly before `now`, so packets pushed at one
//! instant all join their queues before a transmission at that instant is decided.
//!
//! WMM (`wmm=on`): every transmitter (the AP and each station) has the four EDCA queues with
//! the default parameter set of Table 9-137 (the AP uses the stations' set; the standard's AP
//! set differs in AC_BE/AC_BK AIFSN and CWmax — not modelled); a packet's DSCP picks its queue
//! through [`WmmMap`] (RFC 8325 plus the `map` overrides). `wmm=off` is a legacy (non-QoS)
//! BSS: DCF timing and one queue, as Bianchi's model and `wisp wifi bianchi`.
//!
//! Deviations:
//! - The second AP (`cochannel`) shares the one collision domain: every node hears every other
//!   (no hidden terminals, no capture, no partial overlap); it is a second BSS only in that
//!   its stations' traffic goes to and from it.
//! - `load=tcp` is not a TCP: each contender's download is modelled as an AP queue for it that
//!   is never empty (1 MSDU of `bytes` refilled as soon as one is delivered or dropped), and
//!   the contender sends a 52-byte TCP Ack (IPv4 20 + TCP 20 + timestamps 12) uplink for every
//!   second data frame it receives (delayed Acks). No congestion control, no losses seen by TCP.
//! - `load=udp` is a constant bit rate per contender with a random phase, uplink only.
//! - The AP serves its destinations in turn per AC (mac80211's per-station queues) unless
//!   `ap-queue=fifo`, where a backlog for one station delays another's packets.
//! - A frame is removed from its queue when its exchange is decided (at its start); a packet
//!   pushed during that exchange sees the queue without it.

use super::edca::AccessCategory;
use super::medium::{FrameRecord, Medium, Outcome};
use super::phy::{MAX_MSDU_BYTES, Phy, PhyRate, Standard};
use super::phy_options::PhyOptions;
use super::station::StationConfig;
use super::wmm::WmmMap;
use rand::RngExt;
use std::fmt;
use std::str::FromStr;
use wisp_core::spec::{ItemError, key_values};
use wisp_core::{Bitrate, Duration, Instant};

/// A node on the medium: 0 = the AP, 1 = the measured station, 2.. = contenders.
pub type NodeId = u32;

/// The AP.
pub const AP: NodeId = 0;
/// The measured station.
pub const STATION: NodeId = 1;

/// Bytes of a TCP Ack (IPv4 20 + TCP 20 + timestamp option 12).
pub const TCP_ACK_BYTES: u32 = 52;

/// Most contenders a spec may name.
pub const MAX_STATIONS: u32 = 200;

/// What the contending stations do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// Associated but silent.
    None,
    /// Constant bit rate uplink (contender → AP) at this rate each.
    Udp(Bitrate),
    /// A bulk download each (AP → contender, backlogged) with delayed TCP Acks uplink.
    Tcp,
    /// Always a frame for the AP (Bianchi's saturation).
    Saturated,
}

/// The rate of `load=udp` with no rate given.
pub const DEFAULT_UDP_RATE: Bitrate = Bitrate::from_mbps(1);

impl fmt::Display for Load {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Load::None => write!(f, "none"),
            Load::Udp(r) => write!(f, "udp:{r}"),
            Load::Tcp => write!(f, "tcp"),
            Load::Saturated => write!(f, "saturated"),
        }
    }
}

/// The part of a link spec after `wifi:`, e.g. `std=11g,rate=54mbps,stations=4,load=tcp`.
#[derive(Clone, Debug, PartialEq)]
pub struct WifiSpec {
    pub standard: Standard,
    pub rate: PhyRate,
    /// Contenders besides the measured station.
    pub stations: u32,
    pub load: Load,
    /// Frames each AC queue of a transmitter holds (all destinations together).
    pub queue: usize,
    /// EDCA with DSCP → AC (on) or legacy DCF with one queue (off).
    pub wmm: bool,
    /// MSDU bytes of the background load's frames.
    pub bytes: u32,
    /// The PHY-side keys (`bw`, `gi`, `snr`, `ra`, `ampdu`), applied to every transmitter.
    pub phy: PhyOptions,
    /// DSCP → access category (RFC 8325 with overrides).
    pub map: WmmMap,
    /// Stations of a second, co-channel AP (0: no second AP).
    pub cochannel: u32,
    /// The APs' AC queues are one FIFO over all destinations (`ap-queue=fifo`).
    pub ap_fifo: bool,
    /// Every transmitter's MSDU lifetime (`lifetime=MS`): a frame queued longer is dropped
    /// before its first attempt; `None`: none.
    pub lifetime: Option<Duration>,
}

impl Default for WifiSpec {
    fn default() -> Self {
        let phy = Phy::new(Standard::G);
        WifiSpec {
            standard: Standard::G,
            rate: highest_rate(&phy),
            stations: 0,
            load: Load::Saturated,
            queue: 1000,
            wmm: true,
            bytes: 1500,
            phy: PhyOptions::default(),
            map: WmmMap::default(),
            cochannel: 0,
            ap_fifo: false,
            lifetime: None,
        }
    }
}

fn highest_rate(phy: &Phy) -> PhyRate {
    PhyRate::from_100kbps(*phy.rates().last().expect("a PHY has rates"))
}

/// A bad `wifi:` spec: the offending key and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}`: {message}")]
pub struct WifiSpecError {
    pub key: String,
    pub message: String,
}

const KEYS: &str = "std, rate, stations, load, queue, ap-queue, lifetime, wmm, bytes, map, cochannel, bw, gi, snr, ra, ampdu";

impl FromStr for WifiSpec {
    type Err = WifiSpecError;
    fn from_str(s: &str) -> Result<Self, WifiSpecError> {
        let err = |key: &str, message: String| WifiSpecError {
            key: key.to_string(),
            message,
        };
        let mut spec = WifiSpec::default();
        let mut rate: Option<(String, f64)> = None;
        let items = key_values(s).map_err(|e| match e {
            ItemError::NotKeyValue(item) => err(item, format!("is not KEY=VALUE (keys: {KEYS})")),
            ItemError::GivenTwice(k) => err(k, "given twice".into()),
        })?;
        for (k, v) in items {
            match k {
                "std" | "standard" => spec.standard = v.parse().map_err(|e: String| err(k, e))?,
                "rate" => rate = Some((v.to_string(), parse_mbps(v).map_err(|e| err(k, e))?)),
                "stations" => {
                    spec.stations = number_in(v, 0..=MAX_STATIONS, "").map_err(|e| err(k, e))?
                }
                "load" => spec.load = parse_load(v).map_err(|e| err(k, e))?,
                "queue" => {
                    spec.queue = number_in(v, 1..=100_000, " frames").map_err(|e| err(k, e))?
                }
                "ap-queue" => {
                    spec.ap_fifo = match v {
                        "fifo" => true,
                        "per-station" => false,
                        _ => return Err(err(k, format!("must be fifo or per-station, not `{v}`"))),
                    }
                }
                "lifetime" => {
                    let ms: u64 = number_in(v.trim_end_matches("ms"), 1..=60_000, " ms")
                        .map_err(|e| err(k, e))?;
                    spec.lifetime = Some(Duration::from_millis(ms));
                }
                "wmm" => {
                    spec.wmm = match v {
                        "on" | "true" | "1" => true,
                        "off" | "false" | "0" => false,
                        _ => return Err(err(k, format!("must be on or off, not `{v}`"))),
                    }
                }
                "bytes" => {
                    spec.bytes =
                        number_in(v, TCP_ACK_BYTES..=MAX_MSDU_BYTES, "").map_err(|e| err(k, e))?
                }
                "map" => spec.map = v.parse().map_err(|e: String| err(k, e))?,
                "cochannel" => {
                    spec.cochannel =
                        number_in(v, 0..=MAX_STATIONS, " stations").map_err(|e| err(k, e))?
                }
                _ => {
                    if !spec.phy.set(k, v).map_err(|e| err(k, e))? {
                        return Err(err(k, format!("unknown key (keys: {KEYS})")));
                    }
                }
            }
        }
        let phy = Phy::new(spec.standard);
        spec.rate = spec
            .phy
            .rate(&phy, rate.as_ref().map(|(t, m)| (t.as_str(), *m)))
            .map_err(|(k, e)| err(k, e))?;
        // The rate control's script is checked against the rate set here, once.
        spec.phy
            .apply(&mut StationConfig::dcf(&phy, spec.rate), &phy, spec.rate)
            .map_err(|(k, e)| err(k, e))?;
        Ok(spec)
    }
}

/// `v` as a number in `range`, else `must be LO to HI{unit}, not `v``.
fn number_in<T>(v: &str, range: std::ops::RangeInclusive<T>, unit: &str) -> Result<T, String>
where
    T: FromStr + PartialOrd + std::fmt::Display,
{
    v.parse().ok().filter(|n| range.contains(n)).ok_or_else(|| {
        format!(
            "must be {} to {}{unit}, not `{v}`",
            range.start(),
            range.end()
        )
    })
}

/// `rate=`'s value in Mbit/s: a bare number, or a rate with its unit.
fn parse_mbps(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) => Ok(x),
        Err(_) => {
            let b: Bitrate = v
                .parse()
                .map_err(|e: wisp_core::units::ParseUnitError| e.0)?;
            Ok(b.bps() as f64 / 1e6)
        }
    }
}

/// `load=`'s value: none, udp[:RATE], tcp or saturated.
fn parse_load(v: &str) -> Result<Load, String> {
    Ok(match v.split_once(':') {
        None if v == "none" => Load::None,
        None if v == "tcp" => Load::Tcp,
        None if v == "saturated" => Load::Saturated,
        None if v == "udp" => Load::Udp(DEFAULT_UDP_RATE),
        Some(("udp", r)) => {
            let r: Bitrate = r
                .parse()
                .map_err(|e: wisp_core::units::ParseUnitError| e.0)?;
            if r == Bitrate::ZERO {
                return Err("the udp rate must be positive".into());
            }
            // Faster, the packets' spacing rounds to nothing and the source never yields
            // (udp:1e12mbps hung).
            if r > Bitrate::from_mbps(10_000) {
                return Err("the udp rate must be at most 10gbps".into());
            }
            Load::Udp(r)
        }
        _ => return Err(format!("`{v}` is not none, udp[:RATE], tcp or saturated")),
    })
}

/// The canonical spec (every key; `map`, `cochannel` and `ap-queue` only when set), which parses back to
/// the same spec.
impl fmt::Display for WifiSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "std={},rate={}mbps,stations={},load={},queue={},wmm={},bytes={}",
            self.standard.name(),
            self.rate,
            self.stations,
            self.load,
            self.queue,
            if self.wmm { "on" } else { "off" },
            self.bytes
        )?;
        let map = self.map.to_string();
        if !map.is_empty() {
            write!(f, ",map={map}")?;
        }
        if self.cochannel > 0 {
            write!(f, ",cochannel={}", self.cochannel)?;
        }
        if self.ap_fifo {
            write!(f, ",ap-queue=fifo")?;
        }
        if let Some(l) = self.lifetime {
            write!(f, ",lifetime={}ms", l.as_millis())?;
        }
        // The PHY-side keys only when given, so a spec without them reads as before.
        write!(f, "{}", self.phy.to_spec())
    }
}

/// A packet whose fate the medium has decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WifiOutput {
    /// The caller's tag from [`WifiLink::push`].
    pub tag: u64,
    /// When the receiver has it (the end of the successful PPDU), or the end of the attempt
    /// after which it was dropped.
    pub at: Instant,
    /// `false`: dropped at the retry limit.
    pub delivered: bool,
    /// The last attempt's ground truth (sequence number, retry flag, rate, queueing, access).
    pub record: FrameRecord,
}

/// A constant bit rate source at a contender.
#[derive(Clone, Copy, Debug)]
struct Cbr {
    node: NodeId,
    ap: NodeId,
    next: Instant,
    interval: Duration,
}

/// The Wi-Fi medium as a link: the AP, the measured station, the contenders and their load.
#[derive(Debug)]
pub struct WifiLink {
    spec: WifiSpec,
    medium: Medium,
    /// Per node: its AP (an AP's own entry is itself).
    ap_of: Vec<NodeId>,
    second_ap: Option<NodeId>,
    cbr: Vec<Cbr>,
    /// Per node: background data frames received (TCP load's delayed Acks).
    received: Vec<u32>,
    /// Per node: a contender with the spec's load.
    contender: Vec<bool>,
    /// Decided, not yet emitted, in `at` order (ties in decision order).
    pending: std::collections::VecDeque<WifiOutput>,
    records: Vec<FrameRecord>,
}

impl WifiLink {
    /// The medium of `spec`, its random draws from `seed` (the run's master seed).
    pub fn new(spec: &WifiSpec, seed: u64) -> Self {
        let phy = Phy::new(spec.standard);
        let mut link = WifiLink {
            spec: spec.clone(),
            medium: Medium::new(phy, seed),
            ap_of: vec![],
            second_ap: None,
            cbr: vec![],
            received: vec![],
            contender: vec![],
            pending: Default::default(),
            records: vec![],
        };
        link.add_node(false, AP); // the AP
        link.add_node(false, AP); // the measured station
        let mut rng = crate::seed::stream(seed, "wifi/load");
        let mut contenders: Vec<(NodeId, NodeId)> = (0..spec.stations)
            .map(|_| (link.add_node(true, AP), AP))
            .collect();
        if spec.cochannel > 0 {
            let ap2 = link.medium.stations().len() as NodeId;
            link.add_node(false, ap2);
            link.second_ap = Some(ap2);
            for _ in 0..spec.cochannel {
                contenders.push((link.add_node(true, ap2), ap2));
            }
        }
        for (id, ap) in contenders {
            match spec.load {
                Load::None => {}
                Load::Saturated => {
                    link.medium
                        .backlog(id as usize, ap, AccessCategory::Be, spec.bytes)
                }
                Load::Tcp => link
                    .medium
                    .backlog(ap as usize, id, AccessCategory::Be, spec.bytes),
                Load::Udp(rate) => {
                    let interval = Duration::from_nanos(
                        (u128::from(spec.bytes) * 8 * 1_000_000_000 / u128::from(rate.bps().max(1)))
                            .clamp(1, u128::from(u64::MAX)) as u64,
                    );
                    let phase = interval.mul_f64(rng.random::<f64>());
                    link.cbr.push(Cbr {
                        node: id,
                        ap,
                        next: Instant::ZERO + phase,
                        interval,
                    });
                }
            }
        }
        link
    }

    fn add_node(&mut self, contender: bool, ap: NodeId) -> NodeId {
        let phy = *self.medium.phy();
        let mut c = if self.spec.wmm {
            StationConfig::edca(&phy, self.spec.rate)
        } else {
            StationConfig::dcf(&phy, self.spec.rate)
        };
        c.queue_limit = self.spec.queue;
        c.fifo = self.spec.ap_fifo && self.medium.stations().len() as NodeId == ap;
        c.lifetime = self.spec.lifetime;
        // Checked when the spec was parsed; a spec built by hand with a bad script keeps the
        // fixed rate.
        let _ = self.spec.phy.apply(&mut c, &phy, self.spec.rate);
        let id = self.medium.add_station(c) as NodeId;
        self.received.push(0);
        self.contender.push(contender);
        self.ap_of.push(ap);
        id
    }

    /// Adds one more station of the first AP (for scenario topologies), silent until packets
    /// are pushed from it; returns its id.
    pub fn add_station(&mut self) -> NodeId {
        self.add_node(false, AP)
    }

    /// The co-channel AP (`cochannel=M`), if any; its stations are the M nodes after it.
    pub fn second_ap(&self) -> Option<NodeId> {
        self.second_ap
    }

    /// The AP `node` belongs to (an AP: itself).
    pub fn ap_of(&self, node: NodeId) -> Option<NodeId> {
        self.ap_of.get(node as usize).copied()
    }

    /// The DSCP → access category map in use.
    pub fn map(&self) -> &WmmMap {
        &self.spec.map
    }

    pub fn spec(&self) -> &WifiSpec {
        &self.spec
    }

    /// Nodes on the medium (the AP included).
    pub fn nodes(&self) -> u32 {
        self.medium.stations().len() as u32
    }

    /// The medium itself (statistics, stations, channel).
    pub fn medium(&self) -> &Medium {
        &self.medium
    }

    /// The access category a DSCP maps to on this link (AC_BE when WMM is off).
    pub fn access_category(&self, dscp: u8) -> AccessCategory {
        if self.spec.wmm {
            self.spec.map.class(dscp)
        } else {
            AccessCategory::Be
        }
    }

    /// A packet from the wired side enters `from`'s queue at `now` (`to` = the AP for an
    /// uplink, a station for a downlink); `dscp` picks the access category. `false`: dropped
    /// because that queue was full (or `from`/`to` is not a node, or they are the same). `now`
    /// never goes backwards across calls.
    pub fn push(
        &mut self,
        now: Instant,
        from: NodeId,
        to: NodeId,
        dscp: u8,
        tag: u64,
        bytes: u32,
    ) -> bool {
        let n = self.nodes();
        if from >= n || to >= n || from == to {
            return false;
        }
        self.run(now, false);
        let ac = self.access_category(dscp);
        self.medium
            .enqueue_to(from as usize, ac, to, Some(tag), bytes, now)
    }

    /// The earliest instant at which [`WifiLink::advance`] may have something to do (`None`:
    /// nothing ever again unless something is pushed). After a push it may move earlier.
    pub fn next_event(&mut self) -> Option<Instant> {
        [
            self.medium.next_transmission(),
            self.next_arrival(),
            self.pending.front().map(|o| o.at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs the medium up to `now` (every transmission that starts at or before `now`) and
    /// appends every pushed packet whose fate is decided by then (`at ≤ now`), in `at` order.
    /// At an instant where nothing happens it does nothing.
    pub fn advance(&mut self, now: Instant, out: &mut Vec<WifiOutput>) {
        self.run(now, true);
        while let Some(o) = self.pending.front() {
            if o.at > now {
                break;
            }
            out.extend(self.pending.pop_front());
        }
    }

    fn next_arrival(&self) -> Option<Instant> {
        self.cbr.iter().map(|c| c.next).min()
    }

    /// Carries out background arrivals and transmissions before `now` (`inclusive`: at `now`
    /// too). An arrival goes before a transmission at the same instant (it may join that slot).
    fn run(&mut self, now: Instant, inclusive: bool) {
        let end = if inclusive {
            now.saturating_add(Duration::from_nanos(1))
        } else {
            now
        };
        loop {
            let arrival = self.next_arrival().filter(|&a| a < end);
            let limit = arrival.unwrap_or(end);
            if self.medium.step_before(limit).is_some() {
                self.collect();
                continue;
            }
            let Some(a) = arrival else { break };
            self.medium.set_now(a);
            let bytes = self.spec.bytes;
            for c in &mut self.cbr {
                if c.next == a {
                    self.medium.enqueue_to(
                        c.node as usize,
                        AccessCategory::Be,
                        c.ap,
                        None,
                        bytes,
                        a,
                    );
                    c.next = a + c.interval;
                }
            }
        }
        self.medium.set_now(now);
    }

    /// Turns the attempts just made into outputs and reactions.
    fn collect(&mut self) {
        self.medium.swap_records(&mut self.records);
        for k in 0..self.records.len() {
            let r = self.records[k];
            let done = r.outcome == Outcome::Acked || r.dropped;
            if !done {
                continue;
            }
            let end = r.tx_start + r.airtime;
            match r.tag {
                Some(tag) => {
                    let o = WifiOutput {
                        tag,
                        at: end,
                        delivered: r.outcome == Outcome::Acked,
                        record: r,
                    };
                    let i = self.pending.partition_point(|p| p.at <= end);
                    self.pending.insert(i, o);
                }
                None => {
                    // TCP load: the contender acknowledges every second data frame.
                    let to = r.dest as usize;
                    if self.spec.load == Load::Tcp
                        && r.outcome == Outcome::Acked
                        && self.contender.get(to).copied().unwrap_or(false)
                        && self.ap_of[to] == r.station
                    {
                        self.received[to] += 1;
                        if self.received[to] % 2 == 0 {
                            self.medium.enqueue_to(
                                to,
                                AccessCategory::Be,
                                r.station,
                                None,
                                TCP_ACK_BYTES,
                                end,
                            );
                        }
                    }
                }
            }
        }
        self.records.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::bianchi::{bianchi_difs_mbps, bianchi_eifs_mbps};

    /// Bianchi's per-station share for `n` saturated 11g 54-Mbit/s stations, DIFS and EIFS
    /// forms, and the relative gap of `got` to the nearer (as `wisp wifi bianchi` is judged).
    fn share_gap(got: f64, n: u32) -> (f64, f64, f64) {
        let phy = Phy::new(Standard::G);
        let rate = PhyRate::from_mbps(54.0).unwrap();
        let d = bianchi_difs_mbps(&phy, rate, n, 1500) / f64::from(n);
        let e = bianchi_eifs_mbps(&phy, rate, n, 1500) / f64::from(n);
        (((got - d).abs() / d).min((got - e).abs() / e), d, e)
    }

    fn spec(s: &str) -> WifiSpec {
        s.parse().unwrap()
    }

    #[test]
    fn specs_parse_with_defaults_and_display_canonically() {
        let s = spec("");
        assert_eq!(s, WifiSpec::default());
        assert_eq!(
            s.to_string(),
            "std=11g,rate=54mbps,stations=0,load=saturated,queue=1000,wmm=on,bytes=1500"
        );
        let s = spec("std=11b, stations=4, load=udp:2mbps, wmm=off, queue=50");
        assert_eq!(s.rate, PhyRate::from_mbps(11.0).unwrap());
        assert_eq!(s.load, Load::Udp(Bitrate::from_mbps(2)));
        assert_eq!(s.to_string().parse::<WifiSpec>().unwrap(), s);
        let s = spec("std=11a,lifetime=300ms");
        assert_eq!(s.lifetime, Some(Duration::from_millis(300)));
        assert!(s.to_string().ends_with(",lifetime=300ms"), "{s}");
        assert_eq!(s.to_string().parse::<WifiSpec>().unwrap(), s);
        let s = spec("std=11b,rate=5.5");
        assert_eq!(
            s.to_string(),
            s.to_string().parse::<WifiSpec>().unwrap().to_string()
        );
        assert_eq!(
            spec("rate=24mbps,load=udp").load,
            Load::Udp(DEFAULT_UDP_RATE)
        );
        for (bad, key) in [
            ("rate=7mbps", "rate"),
            ("std=11b,rate=54", "rate"),
            ("std=11x", "std"),
            ("stations=-1", "stations"),
            ("stations=1000", "stations"),
            ("load=bulk", "load"),
            ("load=udp:0", "load"),
            ("load=udp:fast", "load"),
            ("load=udp:1e12mbps", "load"),
            ("queue=0", "queue"),
            ("wmm=maybe", "wmm"),
            ("ap-queue=lifo", "ap-queue"),
            ("lifetime=0", "lifetime"),
            ("lifetime=soon", "lifetime"),
            ("bytes=10", "bytes"),
            ("colour=red", "colour"),
            ("stations", "stations"),
            ("rate=6,rate=9", "rate"),
        ] {
            let e = bad.parse::<WifiSpec>().unwrap_err();
            assert_eq!(e.key, key, "{bad}: {e}");
            assert!(e.to_string().starts_with(&format!("`{key}`")), "{e}");
        }
    }

    #[test]
    fn phy_keys_parse_display_and_fail_by_key() {
        let s = spec("std=11n-5,rate=72.2,gi=short,bw=20,snr=0s:30;10s:12,ra=minstrel,ampdu=on");
        assert_eq!(s.rate, PhyRate::ht(7, 20, true).unwrap());
        assert_eq!(s.to_string().parse::<WifiSpec>().unwrap(), s);
        assert!(
            s.to_string()
                .ends_with(",bw=20,gi=short,snr=0s:30;10s:12,ra=minstrel,ampdu=on"),
            "{s}"
        );
        // 11ac's default rate is its fastest at the width and GI: VHT80 MCS 9 short GI.
        assert_eq!(
            spec("std=11ac,bw=80,gi=short").rate,
            PhyRate::vht(9, 80, true).unwrap()
        );
        for (bad, key) in [
            ("std=11n-5,rate=54", "rate"),
            ("std=11g,bw=40", "bw"),
            ("std=11n,bw=80", "bw"),
            ("bw=33", "bw"),
            ("gi=wide", "gi"),
            ("std=11a,gi=short", "gi"),
            ("snr=loud", "snr"),
            ("snr=10s:20;5s:30", "snr"),
            ("ra=aarf", "ra"),
            ("ra=script:0s:54;1s:11", "ra"),
            ("ampdu=yes", "ampdu"),
            ("std=11g,ampdu=on", "ampdu"),
            ("snr=20,snr=30", "snr"),
        ] {
            let e = bad.parse::<WifiSpec>().unwrap_err();
            assert_eq!(e.key, key, "{bad}: {e}");
            assert!(e.to_string().starts_with(&format!("`{key}`")), "{e}");
        }
    }

    #[test]
    fn ampdu_and_minstrel_through_the_spec() {
        // The measured station saturating the AP at HT20 MCS 7: A-MPDU on carries far more.
        let run = |s: &str| {
            let mut link = WifiLink::new(&spec(s), 1);
            mbps(&saturate(&mut link, STATION, AP, 2), 2)
        };
        let off = run("std=11n-5,rate=65,stations=0");
        let on = run("std=11n-5,rate=65,stations=0,ampdu=on");
        assert!(off > 25.0 && off < 33.0, "{off}");
        assert!(on > 1.5 * off && on < 65.0, "on {on}, off {off}");
        // Minstrel with the SNR stepping from 35 to 12 dB: the delivered frames of the last
        // second went at 24 Mbit/s or less.
        let mut link = WifiLink::new(&spec("std=11a,stations=0,snr=0s:35;2s:12,ra=minstrel"), 1);
        let outs = saturate(&mut link, STATION, AP, 4);
        let late: Vec<_> = outs
            .iter()
            .filter(|o| o.at >= Instant::from_secs(3))
            .collect();
        assert!(late.len() > 100);
        let slow = late
            .iter()
            .filter(|o| o.record.rate <= PhyRate::from_mbps(24.0).unwrap())
            .count();
        assert!(
            slow as f64 > 0.9 * late.len() as f64,
            "{slow} of {}",
            late.len()
        );
    }

    /// Keeps `n` packets queued from `from` to `to` for `secs`; returns the delivered outputs.
    fn saturate(link: &mut WifiLink, from: NodeId, to: NodeId, secs: u64) -> Vec<WifiOutput> {
        let mut tag = 0;
        let mut delivered = vec![];
        for _ in 0..50 {
            assert!(link.push(Instant::ZERO, from, to, 0, tag, 1500));
            tag += 1;
        }
        let end = Instant::from_secs(secs);
        let mut out = vec![];
        while let Some(t) = link.next_event().filter(|&t| t <= end) {
            link.advance(t, &mut out);
            for o in out.drain(..) {
                assert!(link.push(t, from, to, 0, tag, 1500));
                tag += 1;
                if o.delivered {
                    delivered.push(o);
                }
            }
        }
        delivered
    }

    fn mbps(outs: &[WifiOutput], secs: u64) -> f64 {
        outs.iter()
            .map(|o| f64::from(o.record.msdu_bytes))
            .sum::<f64>()
            * 8.0
            / secs as f64
            / 1e6
    }

    #[test]
    fn a_lone_station_gets_bianchis_saturation_throughput() {
        // N = 1: no collisions; Bianchi's model (DIFS form) is exact in expectation.
        let phy = Phy::new(Standard::G);
        let rate = PhyRate::from_mbps(54.0).unwrap();
        let model = bianchi_difs_mbps(&phy, rate, 1, 1500);
        let mut link = WifiLink::new(&spec("std=11g,rate=54,stations=0,wmm=off"), 1);
        let up = mbps(&saturate(&mut link, STATION, AP, 20), 20);
        assert!((up / model - 1.0).abs() < 0.03, "{up} vs {model}");
        // The same downlink, from the AP.
        let mut link = WifiLink::new(&spec("std=11g,rate=54,stations=0,wmm=off"), 1);
        let down = mbps(&saturate(&mut link, AP, STATION, 20), 20);
        eprintln!("lone station: up {up:.3}, down {down:.3}, Bianchi N=1 {model:.3} Mbit/s");
        assert!((down / model - 1.0).abs() < 0.03, "{down} vs {model}");
    }

    #[test]
    fn contenders_take_their_share() {
        // Five saturated DCF stations: each gets a fifth of Bianchi's aggregate for N = 5 (the
        // nearer of its DIFS and EIFS forms).
        let mut link = WifiLink::new(
            &spec("std=11g,rate=54,stations=4,load=saturated,wmm=off"),
            2,
        );
        let got = mbps(&saturate(&mut link, STATION, AP, 20), 20);
        let (gap, d, e) = share_gap(got, 5);
        eprintln!("1 of 5 saturated: {got:.3} Mbit/s; Bianchi / 5: DIFS {d:.3}, EIFS {e:.3}");
        assert!(gap < 0.05, "{got} vs {d} / {e}");
        // A bulk download to each of 4 contenders: the AP serves 5 destinations in turn, and
        // the measured downlink gets a fifth of the AP's frames.
        let mut link = WifiLink::new(&spec("std=11g,rate=54,stations=4,load=tcp"), 3);
        let outs = saturate(&mut link, AP, STATION, 10);
        let ap = link.medium().station(AP as usize).stats().delivered_packets;
        let frac = outs.len() as f64 / ap as f64;
        eprintln!("load=tcp: the measured station has {frac:.4} of the AP's frames");
        assert!((frac - 0.2).abs() < 0.01, "{frac}");
        // The contenders' TCP Acks went uplink: one per two data frames each.
        let acks: u64 = (2..6)
            .map(|i| link.medium().station(i).stats().delivered_packets)
            .sum();
        let data = ap - outs.len() as u64;
        assert!(
            (acks as f64 / (data as f64 / 2.0) - 1.0).abs() < 0.02,
            "{acks} {data}"
        );
    }

    fn run_with_wakeups(seed: u64, extra: &[u64]) -> Vec<WifiOutput> {
        let mut link = WifiLink::new(&spec("std=11a,rate=24,stations=3,load=udp:4mbps"), seed);
        let mut out = vec![];
        let mut wake = extra.to_vec();
        let mut prev = Instant::ZERO;
        for k in 0..200u64 {
            let t = Instant::from_micros(k * 500);
            while let Some(e) = link.next_event().filter(|&e| e <= t) {
                link.advance(e, &mut out);
            }
            // Spurious wake-ups before `t`.
            wake.retain(|&w| {
                let w = Instant::from_micros(w);
                if w <= t {
                    link.advance(w.max(prev), &mut out);
                    false
                } else {
                    true
                }
            });
            link.push(t, AP, STATION, (k % 64) as u8, k, 1200);
            link.push(t, STATION, AP, 46, 1000 + k, 200);
            prev = t;
        }
        // The contenders' load never ends: drain for one more simulated second.
        let end = Instant::from_secs(2);
        while let Some(e) = link.next_event().filter(|&e| e <= end) {
            link.advance(e, &mut out);
        }
        out
    }

    #[test]
    fn deterministic_by_seed_and_idle_wakeups_change_nothing() {
        let a = run_with_wakeups(7, &[]);
        assert_eq!(a.len(), 400);
        assert_eq!(a, run_with_wakeups(7, &[]));
        assert_ne!(a, run_with_wakeups(8, &[]));
        // Waking at instants where nothing is due emits nothing and changes no outcome.
        let mut link = WifiLink::new(&spec("stations=2,load=saturated"), 1);
        let mut out = vec![];
        let next = link.next_event().unwrap();
        link.advance(next.saturating_sub(Duration::from_nanos(1)), &mut out);
        assert!(out.is_empty());
        assert_eq!(link.next_event(), Some(next));
        let wakeups: Vec<u64> = (0..400).map(|k| k * 271 + 13).collect();
        assert_eq!(a, run_with_wakeups(7, &wakeups));
    }

    #[test]
    fn wmm_queues_follow_rfc_8325_and_the_map() {
        let link = WifiLink::new(&spec(""), 1);
        assert_eq!(link.access_category(46), AccessCategory::Vo); // EF → UP 6
        assert_eq!(link.access_category(34), AccessCategory::Vi); // AF41 → UP 4
        assert_eq!(link.access_category(8), AccessCategory::Bk); // CS1 → UP 1
        assert_eq!(link.access_category(0), AccessCategory::Be);
        let s = spec("map=46=vi;0=bk");
        assert_eq!(s.to_string().parse::<WifiSpec>().unwrap(), s);
        assert!(s.to_string().ends_with(",map=0=bk;46=vi"), "{s}");
        let link = WifiLink::new(&s, 1);
        assert_eq!(link.access_category(46), AccessCategory::Vi);
        assert_eq!(link.access_category(0), AccessCategory::Bk);
        let link = WifiLink::new(&spec("wmm=off"), 1);
        assert_eq!(link.access_category(46), AccessCategory::Be);
        assert_eq!("map=46=xx".parse::<WifiSpec>().unwrap_err().key, "map");

        // Voice overtakes a best-effort backlog at the AP: an EF packet pushed behind 20
        // best-effort ones is delivered before most of them (AC_VO contends with AIFSN 2 and
        // CW 3..7 against AC_BE's AIFSN 3 and CW 15; the AC_BE head may win a round or two).
        let mut link = WifiLink::new(&spec("std=11a,rate=6,stations=0"), 5);
        for tag in 0..20 {
            assert!(link.push(Instant::ZERO, AP, STATION, 0, tag, 1500));
        }
        assert!(link.push(Instant::from_micros(1), AP, STATION, 46, 99, 1500));
        let mut out = vec![];
        while let Some(t) = link.next_event() {
            link.advance(t, &mut out);
        }
        let pos = out.iter().position(|o| o.tag == 99).unwrap();
        assert!(pos <= 3, "{pos}");
        assert_eq!(out[pos].record.ac, AccessCategory::Vo);
    }

    #[test]
    fn a_second_ap_on_the_channel_takes_airtime() {
        // Saturated stations of a co-channel AP contend in the same collision domain: the
        // measured station's share with 2 contenders plus 2 stations of the other AP equals
        // its share with 4 contenders in its own BSS (Bianchi, N = 5).
        let s = spec("stations=2,cochannel=2,load=saturated,wmm=off");
        assert_eq!(s.to_string().parse::<WifiSpec>().unwrap(), s);
        let mut link = WifiLink::new(&s, 6);
        assert_eq!(link.second_ap(), Some(4));
        assert_eq!(
            (link.ap_of(5), link.ap_of(6), link.ap_of(3)),
            (Some(4), Some(4), Some(AP))
        );
        let got = mbps(&saturate(&mut link, STATION, AP, 20), 20);
        let (gap, d, e) = share_gap(got, 5);
        eprintln!("co-channel: {got:.3} Mbit/s; Bianchi / 5: DIFS {d:.3}, EIFS {e:.3}");
        assert!(gap < 0.05, "{got} vs {d} / {e}");
        // The other AP's stations sent to it, not to ours.
        let to_ap2 = link.medium().station(5).stats().delivered_packets;
        assert!(to_ap2 > 1000, "{to_ap2}");
        // A tcp load in the second BSS: its AP sends, its stations return Acks to it.
        let mut link = WifiLink::new(&spec("stations=0,cochannel=2,load=tcp"), 6);
        let mut out = vec![];
        while let Some(t) = link.next_event().filter(|&t| t < Instant::from_secs(1)) {
            link.advance(t, &mut out);
        }
        let m = link.medium();
        assert!(m.station(2).stats().delivered_packets > 1000);
        assert!(m.station(3).stats().delivered_packets > 200);
        assert_eq!(m.station(AP as usize).stats().attempts, 0);
    }

    #[test]
    fn a_full_queue_drops() {
        let mut link = WifiLink::new(&spec("queue=5,stations=0"), 1);
        let accepted: Vec<bool> = (0..8)
            .map(|k| link.push(Instant::ZERO, AP, STATION, 0, k, 1500))
            .collect();
        assert_eq!(
            accepted,
            [true, true, true, true, true, false, false, false]
        );
        // Another AC has its own queue; a bad node is refused.
        assert!(link.push(Instant::ZERO, AP, STATION, 46, 100, 100));
        assert!(!link.push(Instant::ZERO, AP, 9, 0, 101, 100));
        assert!(!link.push(Instant::ZERO, AP, AP, 0, 102, 100));
        let mut out = vec![];
        while let Some(t) = link.next_event() {
            link.advance(t, &mut out);
        }
        let mut tags: Vec<u64> = out.iter().map(|o| o.tag).collect();
        tags.sort_unstable();
        assert_eq!(tags, [0, 1, 2, 3, 4, 100]);
    }

    #[test]
    fn outputs_are_fifo_per_queue_and_in_time_order() {
        let mut link = WifiLink::new(&spec("std=11g,stations=3,load=saturated"), 4);
        let mut rng = crate::seed::stream(4, "test");
        let mut out = vec![];
        let mut pushed = vec![];
        let mut t = Instant::ZERO;
        for tag in 0..3000u64 {
            t += Duration::from_micros(rng.random_range(0..400));
            while let Some(e) = link.next_event().filter(|&e| e < t) {
                link.advance(e, &mut out);
            }
            let (from, to) = match rng.random_range(0..4) {
                0 => (AP, 1),
                1 => (AP, 2),
                2 => (AP, 3),
                _ => (1, AP),
            };
            let dscp = [0u8, 46, 34, 8][rng.random_range(0..4)];
            if link.push(t, from, to, dscp, tag, rng.random_range(100..1500)) {
                pushed.push((tag, from, to, link.access_category(dscp)));
            }
        }
        let end = t + Duration::from_secs(5);
        while let Some(e) = link.next_event().filter(|&e| e <= end) {
            link.advance(e, &mut out);
        }
        assert_eq!(out.len(), pushed.len());
        for w in out.windows(2) {
            assert!(w[0].at <= w[1].at);
        }
        for q in [(AP, 1), (AP, 2), (AP, 3), (1, AP)] {
            for ac in AccessCategory::ALL {
                let want: Vec<u64> = pushed
                    .iter()
                    .filter(|p| (p.1, p.2) == q && p.3 == ac)
                    .map(|p| p.0)
                    .collect();
                let got: Vec<u64> = out
                    .iter()
                    .filter(|o| (o.record.station, o.record.dest) == q && o.record.ac == ac)
                    .map(|o| o.tag)
                    .collect();
                assert!(!want.is_empty());
                assert_eq!(got, want, "{q:?} {ac:?}");
            }
        }
    }
}
