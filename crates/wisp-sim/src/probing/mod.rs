//! Bandwidth probing tools on the simulated 802.11 medium: WBest's testbed (Li, Claypool,
//! Kinicki, LCN 2008, §III, Table I) and the tools driven through it.
//!
//! The testbed is one [`WifiLink`]: node 0 the AP, node 1 client A (the measured station,
//! the probes go AP → A, downstream as in the paper), nodes 2 and 3 clients B and C. The AP's
//! queue is one FIFO (`ap-queue=fifo`), as the paper's Cisco AP1121G. The background traffic
//! of a [`Case`] is driven here, packet by packet through [`WifiLink::push`]:
//!
//! * crossing UDP at rate r to a client: AP → client, constant bit rate, 1500-byte packets
//!   (random phase);
//! * contending UDP at rate r from a client: client → AP, likewise;
//! * crossing TCP to a client: a bulk transfer (iperf in the paper) from a wired server
//!   ([`WIRED_ONE_WAY`] from the AP) to the client: CUBIC (the simulator's
//!   [`wisp_core::scheme::tcp`] sender, 1500-byte segments) and its receiver at the client,
//!   which Acks every second segment or after 40 ms (52-byte Acks over the medium);
//! * contending TCP from a client: the same with the roles swapped (the client sends into its
//!   own 100-frame queue, a full queue drops the segment; the server's Acks come back through
//!   the AP's FIFO).
//!
//! Client A receives one 1500-byte packet from the AP every [`WARMUP_INTERVAL`] (1.2 Mbit/s)
//! during the warm-up and none after: a client that has been associated and exchanging
//! traffic, as the paper's A (its tools and the ground-truth flow ran back to back, Fig. 6),
//! so the AP's rate control has a history for A when a tool starts. It is a setting of the
//! testbed, the same for every case, every tool and the ground truth; it matters only with
//! rate adaptation (case 13).
//!
//! A probe run starts [`Testbed::warmup`] (2 s) after the background traffic (the paper: 5 s).
//! The ground truth ([`ground_truth`]) is the paper's (§III, §IV-A): 0 in the cases with TCP
//! ("a TCP bulk transfer" takes what is available), else the downstream throughput of a
//! saturating 1500-byte UDP flow AP → A in the same setting ([`saturating_throughput`]: the
//! AP always has a packet for A, never empty, never overflowing), measured over 5 s after the
//! warm-up.
//!
//! The tools: [`wbest`], [`igi_ptr`], [`pathchirp`], [`pathload`], [`spruce`]; figures per case
//! in `docs/wbest.md` and `wisp reproduce wbest`.
//!
//! Deviations (see also `docs/wbest.md`):
//! - TCP is CUBIC (RFC 9438) where the paper's Linux 2.6.11 ran BIC; initial window 3, a
//!   200-ms minimum RTO and a window of 131,070 B (that kernel's defaults,
//!   [`LINUX_2_6_11_WINDOW`]; [`Case::tcp_window`]), SACK-based loss detection
//!   (the shared sender's); the wired LAN is a constant delay (no 100 Mbit/s serialisation,
//!   no switch queue), and the probes enter the AP's queue directly.
//! - The saturating flow keeps the AP's queue for A non-empty instead of overflowing it with a
//!   CBR above the capacity; beside TCP in a FIFO it gets little (it is not the ground truth
//!   there, only reported).
//! - 802.11g at 54 Mbit/s for every node, legacy DCF (`wmm=off`), AP queue 100 frames (the
//!   paper's AP: a Cisco AP1121G; queue sizes of 40–300 in the paper's reference 25).
//!   Case 13's rate adaptation is Minstrel at an SNR of 15 dB for every node (the paper: an
//!   RSSI of −70 to −74 dBm, rates 1–48 Mbit/s).
//! - Probe packets carry 1500 bytes as IP packets (WBest's default is 1460 bytes of UDP
//!   payload, 1488 as IP).

pub mod igi_ptr;
pub mod pathchirp;
pub mod pathload;
pub mod spruce;
pub mod wbest;

use crate::wifi::link::{AP, NodeId, STATION, TCP_ACK_BYTES, WifiLink, WifiOutput, WifiSpec};
use rand::RngExt;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use wisp_core::controller::{Allowance, Receiver, SendContext, Sender};
use wisp_core::packet::DataHeader;
use wisp_core::scheme::tcp::ack::TcpAck;
use wisp_core::scheme::tcp::cubic::{Cubic, CubicConfig};
use wisp_core::scheme::tcp::{TcpParams, TcpReceiver, TcpSender};
use wisp_core::units::DataSize;
use wisp_core::{Bitrate, Duration, Instant};

/// Client B and C's node ids.
pub const CLIENT_B: NodeId = 2;
pub const CLIENT_C: NodeId = 3;

/// One background flow's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    Udp(Bitrate),
    Tcp,
}

/// One background flow: `crossing` = AP → client (shares the AP's downlink with the probes),
/// else client → AP (contends for the channel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub client: NodeId,
    pub crossing: bool,
    pub traffic: Traffic,
}

/// A row of Table I.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub id: u32,
    pub flows: Vec<Flow>,
    /// Case 13: Minstrel rate adaptation at a low SNR.
    pub rate_adaptation: bool,
    /// Every node runs ARF ([`crate::wifi::rate_control`]) at the default, high SNR: failed
    /// attempts, collisions among them, step the rate down, as the paper's App. D saw its
    /// clients and AP do under contention (Figs. 27–29). Off in Table I's cases.
    pub collision_fallback: bool,
    /// The TCP flows' window limit, bytes ([`LINUX_2_6_11_WINDOW`]; `None`: no limit).
    pub tcp_window: Option<u64>,
}

/// The TCP window of the paper's hosts (Linux 2.6.11's defaults): the receive buffer grows to
/// at most `tcp_rmem[2]` = 174,760 B (2 × 87,380), of which `tcp_adv_win_scale` = 2 advertises
/// three quarters, 131,070 B (and the send buffer's `tcp_wmem[2]` = 131,072 B bounds what is
/// unacknowledged alike): about 128 KB, 87 segments of 1500 bytes, against the AP's queue of
/// 100 frames. With no limit a CUBIC flow fills the AP's queue and its tail drops.
pub const LINUX_2_6_11_WINDOW: u64 = 131_070;

const UDP_46: Traffic = Traffic::Udp(Bitrate::from_kbps(4600));
const UDP_23: Traffic = Traffic::Udp(Bitrate::from_kbps(2300));

impl Case {
    /// Table I's case `id` (0–13).
    pub fn table1(id: u32) -> Option<Case> {
        let x = |client, traffic| Flow {
            client,
            crossing: true,
            traffic,
        };
        let c = |client, traffic| Flow {
            client,
            crossing: false,
            traffic,
        };
        let (b, cc) = (CLIENT_B, CLIENT_C);
        let flows = match id {
            0 | 13 => vec![],
            1 => vec![x(b, UDP_46)],
            2 => vec![c(b, UDP_46)],
            3 => vec![x(b, Traffic::Tcp)],
            4 => vec![c(b, Traffic::Tcp)],
            5 => vec![x(b, UDP_23), x(cc, UDP_23)],
            6 => vec![c(b, UDP_23), c(cc, UDP_23)],
            7 => vec![x(b, Traffic::Tcp), x(cc, Traffic::Tcp)],
            8 => vec![c(b, Traffic::Tcp), c(cc, Traffic::Tcp)],
            9 => vec![x(b, UDP_23), c(cc, UDP_23)],
            10 => vec![x(b, Traffic::Tcp), c(cc, Traffic::Tcp)],
            11 => vec![x(b, UDP_23), c(cc, Traffic::Tcp)],
            12 => vec![x(b, Traffic::Tcp), c(cc, UDP_23)],
            _ => return None,
        };
        Some(Case {
            id,
            flows,
            rate_adaptation: id == 13,
            collision_fallback: false,
            tcp_window: Some(LINUX_2_6_11_WINDOW),
        })
    }

    /// Every case of Table I.
    pub fn all() -> Vec<Case> {
        (0..=13).filter_map(Case::table1).collect()
    }

    /// A case with TCP traffic (the paper's ground truth is 0).
    pub fn has_tcp(&self) -> bool {
        self.flows.iter().any(|f| f.traffic == Traffic::Tcp)
    }

    /// Table II's ground truth in Mbit/s (`None`: case 6, "unknown").
    pub fn paper_ground_truth(&self) -> Option<f64> {
        Some(match self.id {
            0 => 28.94,
            1 => 24.39,
            2 => 20.52,
            5 => 24.50,
            6 => return None,
            9 => 16.26,
            13 => 15.26,
            _ => 0.0,
        })
    }

    /// Table II's median WBest estimate in Mbit/s.
    pub fn paper_wbest(&self) -> f64 {
        [
            28.47, 23.24, 15.76, 1.01, 0.00, 22.87, 14.56, 0.00, 0.00, 13.26, 0.00, 0.00, 0.00,
            13.99,
        ][self.id as usize]
    }

    /// The medium of this case.
    pub fn spec(&self) -> WifiSpec {
        let ra = if self.rate_adaptation {
            ",snr=15,ra=minstrel"
        } else if self.collision_fallback {
            ",ra=arf"
        } else {
            ""
        };
        format!("std=11g,rate=54mbps,stations=2,load=none,wmm=off,queue=100,ap-queue=fifo{ra}")
            .parse()
            .expect("a valid spec")
    }
}

/// Tags of the testbed's packets: the top byte says whose; a TCP flow's packets carry the
/// flow's index in the next byte and a sequence number (data) or an Ack id below.
pub const TAG_PROBE: u64 = 1 << 56;
const TAG_ACK: u64 = 2 << 56;
const TAG_FLOW: u64 = 3 << 56;
const TAG_MASK: u64 = 0xff << 56;
const FLOW_SHIFT: u32 = 48;
const ID_MASK: u64 = (1 << FLOW_SHIFT) - 1;

/// One-way delay of the wired LAN between the servers and the AP (the paper: 100 Mbit/s
/// Ethernet; a 1500-byte packet takes 0.12 ms to serialise).
pub const WIRED_ONE_WAY: Duration = Duration::from_micros(500);

/// Linux's delayed-Ack timeout (`TCP_DELACK_MIN`, 40 ms).
const DELAYED_ACK: Duration = Duration::from_millis(40);

/// Client A's traffic before a tool starts: one 1500-byte packet from the AP every this long
/// (1.2 Mbit/s) during the warm-up, so the AP's rate control has a history for A.
pub const WARMUP_INTERVAL: Duration = Duration::from_millis(10);

/// A TCP bulk transfer (iperf in the paper) between a wired server and a client: CUBIC
/// (RFC 9438, the simulator's [`Cubic`]) over the shared [`TcpSender`], the shared
/// [`TcpReceiver`] with delayed Acks (every second segment, or 40 ms).
#[derive(Debug)]
struct TcpFlow {
    sender: TcpSender<Cubic>,
    receiver: TcpReceiver,
    next_seq: u64,
    /// Data segments on their way: sequence number → send time.
    in_transit: BTreeMap<u64, Instant>,
    /// Acks on their way, by id.
    acks: BTreeMap<u64, TcpAck>,
    next_ack: u64,
    /// The receiver's Ack held back (delayed Acks) and when it must leave.
    held: Option<(TcpAck, Instant)>,
}

impl TcpFlow {
    fn new(window: Option<u64>) -> Self {
        let config = CubicConfig {
            tcp: TcpParams {
                // Linux 2.6.11 (the paper's kernel): RFC 3390's initial window of 3 segments
                // of 1460 bytes, a 200-ms minimum retransmission timeout, and its buffers'
                // window ([`LINUX_2_6_11_WINDOW`]).
                initial_window: 3,
                rto_min: Duration::from_millis(200),
                rwnd: window,
                ..TcpParams::default()
            },
            ..CubicConfig::default()
        };
        TcpFlow {
            sender: TcpSender::new(
                &config.tcp,
                DataSize::from_bytes(u64::from(PACKET_BYTES)),
                Cubic::new(&config),
            ),
            receiver: TcpReceiver::new(),
            next_seq: 0,
            in_transit: BTreeMap::new(),
            acks: BTreeMap::new(),
            next_ack: 0,
            held: None,
        }
    }

    fn next_timer(&self) -> Option<Instant> {
        [self.sender.poll_timeout(), self.held.map(|h| h.1)]
            .into_iter()
            .flatten()
            .min()
    }
}

#[derive(Debug)]
enum SourceState {
    Cbr {
        next: Instant,
        interval: Duration,
        /// No packet at or after this instant.
        until: Option<Instant>,
    },
    Tcp(Box<TcpFlow>),
}

/// A background flow: `from` → `to` on the medium (a crossing TCP flow's sender is a wired
/// server behind the AP, a contending one's receiver too).
#[derive(Debug)]
struct Source {
    from: NodeId,
    to: NodeId,
    state: SourceState,
}

/// What reaches the end of the wired LAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wired {
    /// A crossing flow's segment reaches the AP.
    DataToAp { flow: usize, seq: u64 },
    /// A contending flow's segment reaches its server.
    DataToServer { flow: usize, seq: u64 },
    /// A crossing flow's Ack reaches its server.
    AckToServer { flow: usize, id: u64 },
    /// A contending flow's Ack (from its server) reaches the AP.
    AckToAp { flow: usize, id: u64 },
}

/// The medium with a case's background traffic running; a tool pushes its own packets with
/// tags in [`TAG_PROBE`]'s range and gets their outputs back from [`Testbed::advance`].
#[derive(Debug)]
pub struct Testbed {
    pub link: WifiLink,
    sources: Vec<Source>,
    /// Packets on the wired LAN: (arrival, order, what).
    wired: BinaryHeap<Reverse<(Instant, u64, Wired)>>,
    wired_count: u64,
    /// The tool's outputs not yet handed out.
    tool_out: Vec<WifiOutput>,
    buf: Vec<WifiOutput>,
    /// Time of the last push/advance (never goes back).
    now: Instant,
    /// Bytes of background data delivered per source (over the medium).
    pub delivered: Vec<u64>,
}

/// 1500-byte packets throughout.
pub const PACKET_BYTES: u32 = 1500;

impl Testbed {
    /// How long the background runs before a tool starts.
    pub fn warmup() -> Duration {
        Duration::from_secs(2)
    }

    /// The setting of `case`, random draws from `seed`.
    pub fn new(case: &Case, seed: u64) -> Self {
        let link = WifiLink::new(&case.spec(), seed);
        let mut rng = crate::seed::stream(seed, "probing/phase");
        let mut sources = vec![];
        for f in &case.flows {
            let (from, to) = if f.crossing {
                (AP, f.client)
            } else {
                (f.client, AP)
            };
            let state = match f.traffic {
                Traffic::Udp(r) => {
                    let interval = Duration::from_secs_f64(
                        8.0 * f64::from(PACKET_BYTES) / (r.bps().max(1) as f64),
                    );
                    SourceState::Cbr {
                        next: Instant::ZERO + interval.mul_f64(rng.random::<f64>()),
                        interval,
                        until: None,
                    }
                }
                Traffic::Tcp => SourceState::Tcp(Box::new(TcpFlow::new(case.tcp_window))),
            };
            sources.push(Source { from, to, state });
        }
        // Client A's own traffic during the warm-up (every case, every tool alike).
        sources.push(Source {
            from: AP,
            to: STATION,
            state: SourceState::Cbr {
                next: Instant::ZERO + WARMUP_INTERVAL.mul_f64(rng.random::<f64>()),
                interval: WARMUP_INTERVAL,
                until: Some(Instant::ZERO + Self::warmup()),
            },
        });
        let n = sources.len();
        let mut tb = Testbed {
            link,
            sources,
            wired: BinaryHeap::new(),
            wired_count: 0,
            tool_out: vec![],
            buf: vec![],
            now: Instant::ZERO,
            delivered: vec![0; n],
        };
        for i in 0..n {
            tb.tcp_send(i, Instant::ZERO);
        }
        tb
    }

    /// The earliest instant something may happen (background or the medium).
    pub fn next_event(&mut self) -> Option<Instant> {
        let bg = self.next_background();
        [bg, self.link.next_event()].into_iter().flatten().min()
    }

    fn next_background(&self) -> Option<Instant> {
        let sources = self.sources.iter().filter_map(|s| match &s.state {
            SourceState::Cbr { next, until, .. } => {
                Some(*next).filter(|n| until.is_none_or(|u| *n < u))
            }
            SourceState::Tcp(t) => t.next_timer(),
        });
        let wired = self.wired.peek().map(|w| w.0.0);
        sources.chain(wired).min()
    }

    /// A tool's packet (tag below 2^56) from `from` to `to` at `now`.
    pub fn push(&mut self, now: Instant, from: NodeId, to: NodeId, tag: u64, bytes: u32) -> bool {
        self.run_before(now);
        self.fire(now);
        self.link
            .push(now, from, to, 0, TAG_PROBE | (tag & !TAG_MASK), bytes)
    }

    /// Runs to `now`; the tool's outputs (tag with [`TAG_PROBE`] removed) go to `out`.
    pub fn advance(&mut self, now: Instant, out: &mut Vec<WifiOutput>) {
        self.run_before(now);
        self.step(now);
        out.append(&mut self.tool_out);
    }

    /// Every event strictly before `now`.
    fn run_before(&mut self, now: Instant) {
        while let Some(t) = self.next_event().filter(|&t| t < now) {
            self.step(t);
        }
    }

    /// The background's events due at `t` (at or before), then the medium up to `t`.
    fn step(&mut self, t: Instant) {
        self.fire(t);
        let mut buf = std::mem::take(&mut self.buf);
        self.link.advance(t, &mut buf);
        for o in buf.drain(..) {
            self.on_output(o);
        }
        self.buf = buf;
    }

    /// Background arrivals, wired deliveries and TCP timers due at or before `t`.
    fn fire(&mut self, t: Instant) {
        self.now = self.now.max(t);
        // Bounded: each pass consumes at least one due event and adds none due before `t`
        // that are not consumed by a later pass; 1e6 passes is far beyond any instant's load.
        for _ in 0..1_000_000 {
            let Some(due) = self.next_background().filter(|&d| d <= t) else {
                return;
            };
            let mut fired = false;
            for i in 0..self.sources.len() {
                let (from, to) = (self.sources[i].from, self.sources[i].to);
                match &mut self.sources[i].state {
                    SourceState::Cbr {
                        next,
                        interval,
                        until,
                    } if *next == due && until.is_none_or(|u| *next < u) => {
                        let at = *next;
                        *next += *interval;
                        let tag = TAG_FLOW | (i as u64) << FLOW_SHIFT;
                        self.link.push(at, from, to, 0, tag, PACKET_BYTES);
                        fired = true;
                    }
                    SourceState::Tcp(f) if f.next_timer() == Some(due) => {
                        if f.sender.poll_timeout() == Some(due) {
                            f.sender.on_timeout(due);
                        }
                        if let Some((_, at)) = f.held
                            && at == due
                        {
                            self.send_ack(i, due);
                        }
                        self.tcp_send(i, due);
                        fired = true;
                    }
                    _ => {}
                }
            }
            while let Some(&Reverse((at, _, w))) = self.wired.peek() {
                if at != due {
                    break;
                }
                self.wired.pop();
                self.on_wired(at, w);
                fired = true;
            }
            if !fired {
                return;
            }
        }
    }

    fn wire(&mut self, at: Instant, w: Wired) {
        self.wired_count += 1;
        self.wired
            .push(Reverse((at + WIRED_ONE_WAY, self.wired_count, w)));
    }

    fn tcp(&mut self, i: usize) -> Option<&mut TcpFlow> {
        match &mut self.sources.get_mut(i)?.state {
            SourceState::Tcp(f) => Some(f),
            SourceState::Cbr { .. } => None,
        }
    }

    /// Flow `i` sends what its window allows at `now`: a crossing flow onto the wired LAN, a
    /// contending one into its client's queue (a full queue drops the segment).
    fn tcp_send(&mut self, i: usize, now: Instant) {
        let (from, to) = (self.sources[i].from, self.sources[i].to);
        let mss = u64::from(PACKET_BYTES);
        // Bounded by the window: each segment sent shrinks the allowance by one MSS.
        for _ in 0..100_000 {
            let Some(f) = self.tcp(i) else { return };
            f.sender.on_time(now);
            let Allowance::Window { bytes, .. } = f.sender.allowance(now) else {
                return;
            };
            if bytes.bytes() < mss {
                return;
            }
            let h = DataHeader {
                seq: f.next_seq,
                byte_seq: f.next_seq * mss,
                send_time: now,
                size: DataSize::from_bytes(mss),
                ..DataHeader::default()
            };
            f.next_seq += 1;
            f.sender.on_packet_sent(now, &h, &SendContext::default());
            f.in_transit.insert(h.seq, now);
            let tag = TAG_FLOW | (i as u64) << FLOW_SHIFT | h.seq;
            if from == AP {
                self.wire(
                    now,
                    Wired::DataToAp {
                        flow: i,
                        seq: h.seq,
                    },
                );
            } else if !self.link.push(now, from, to, 0, tag, PACKET_BYTES)
                && let Some(f) = self.tcp(i)
            {
                f.in_transit.remove(&h.seq);
            }
        }
    }

    /// Flow `i`'s receiver got segment `seq` at `at`: its Ack leaves now (every second
    /// segment) or is held for up to 40 ms.
    fn tcp_receive(&mut self, i: usize, seq: u64, at: Instant) {
        let Some(f) = self.tcp(i) else { return };
        let Some(sent) = f.in_transit.remove(&seq) else {
            return;
        };
        let h = DataHeader {
            seq,
            send_time: sent,
            size: DataSize::from_bytes(u64::from(PACKET_BYTES)),
            ..DataHeader::default()
        };
        f.receiver.on_packet_received(at, &h, &());
        let mut ack = None;
        while let Some(a) = f.receiver.poll_feedback(at) {
            ack = Some(a);
        }
        let Some(ack) = ack else { return };
        match f.held {
            Some(_) => {
                f.held = Some((ack, at));
                self.send_ack(i, at);
            }
            None => f.held = Some((ack, at + DELAYED_ACK)),
        }
    }

    /// The held Ack of flow `i` leaves its receiver at `at`.
    fn send_ack(&mut self, i: usize, at: Instant) {
        let (from, to) = (self.sources[i].from, self.sources[i].to);
        let Some(f) = self.tcp(i) else { return };
        let Some((ack, _)) = f.held.take() else {
            return;
        };
        let id = f.next_ack;
        f.next_ack += 1;
        f.acks.insert(id, ack);
        if from == AP {
            // Crossing: the client Acks over the medium.
            let tag = TAG_ACK | (i as u64) << FLOW_SHIFT | id;
            if !self.link.push(at, to, AP, 0, tag, TCP_ACK_BYTES)
                && let Some(f) = self.tcp(i)
            {
                f.acks.remove(&id);
            }
        } else {
            self.wire(at, Wired::AckToAp { flow: i, id });
        }
    }

    fn on_wired(&mut self, at: Instant, w: Wired) {
        match w {
            Wired::DataToAp { flow, seq } => {
                let to = self.sources[flow].to;
                let tag = TAG_FLOW | (flow as u64) << FLOW_SHIFT | seq;
                if !self.link.push(at, AP, to, 0, tag, PACKET_BYTES)
                    && let Some(f) = self.tcp(flow)
                {
                    f.in_transit.remove(&seq);
                }
            }
            Wired::DataToServer { flow, seq } => self.tcp_receive(flow, seq, at),
            Wired::AckToServer { flow, id } => self.tcp_ack(flow, id, at),
            Wired::AckToAp { flow, id } => {
                let to = self.sources[flow].from;
                let tag = TAG_ACK | (flow as u64) << FLOW_SHIFT | id;
                if !self.link.push(at, AP, to, 0, tag, TCP_ACK_BYTES)
                    && let Some(f) = self.tcp(flow)
                {
                    f.acks.remove(&id);
                }
            }
        }
    }

    /// Ack `id` of flow `i` reaches its sender at `at`.
    fn tcp_ack(&mut self, i: usize, id: u64, at: Instant) {
        let Some(f) = self.tcp(i) else { return };
        if let Some(ack) = f.acks.remove(&id) {
            f.sender.on_feedback(at, &ack);
            self.tcp_send(i, at);
        }
    }

    fn on_output(&mut self, o: WifiOutput) {
        let kind = o.tag & TAG_MASK;
        if kind == TAG_PROBE {
            self.tool_out.push(WifiOutput {
                tag: o.tag & !TAG_MASK,
                ..o
            });
            return;
        }
        let i = ((o.tag & !TAG_MASK) >> FLOW_SHIFT) as usize;
        let id = o.tag & ID_MASK;
        if i >= self.sources.len() {
            return;
        }
        let from = self.sources[i].from;
        match kind {
            TAG_FLOW => {
                if o.delivered {
                    self.delivered[i] += u64::from(o.record.msdu_bytes);
                }
                if self.tcp(i).is_none() {
                    return;
                }
                if !o.delivered {
                    if let Some(f) = self.tcp(i) {
                        f.in_transit.remove(&id);
                    }
                } else if from == AP {
                    self.tcp_receive(i, id, o.at);
                } else {
                    self.wire(o.at, Wired::DataToServer { flow: i, seq: id });
                }
            }
            TAG_ACK => {
                if !o.delivered {
                    if let Some(f) = self.tcp(i) {
                        f.acks.remove(&id);
                    }
                } else if from == AP {
                    self.wire(o.at, Wired::AckToServer { flow: i, id });
                } else {
                    self.tcp_ack(i, id, o.at);
                }
            }
            _ => {}
        }
    }

    /// Sends a train AP → A: packet k of `bytes` at `start + offsets[k]`; runs until every
    /// packet's fate is decided (or 1 s after the last send). Returns the arrival instants
    /// (`None`: dropped) and the instant the last fate was known. `tag_base` keeps trains apart.
    pub fn probe_train(
        &mut self,
        start: Instant,
        offsets: &[Duration],
        bytes: u32,
        tag_base: u64,
    ) -> (Vec<Option<Instant>>, Instant) {
        let n = offsets.len();
        let mut arrivals = vec![None; n];
        let mut decided = 0;
        let mut sent = 0;
        let mut now = start;
        let mut last = start;
        let mut out = vec![];
        let deadline =
            start + offsets.last().copied().unwrap_or(Duration::ZERO) + Duration::from_secs(1);
        while decided < n && now <= deadline {
            while sent < n && start + offsets[sent] <= now {
                if !self.push(now, AP, STATION, tag_base + sent as u64, bytes) {
                    decided += 1; // dropped at the AP's queue
                }
                sent += 1;
            }
            self.advance(now, &mut out);
            for o in out.drain(..) {
                let k = o.tag.wrapping_sub(tag_base) as usize;
                if k < n {
                    decided += 1;
                    last = last.max(o.at);
                    if o.delivered {
                        arrivals[k] = Some(o.at);
                    }
                }
            }
            let next_send = (sent < n).then(|| start + offsets[sent]);
            match [next_send, self.next_event()].into_iter().flatten().min() {
                Some(t) => now = t.max(now),
                None => break,
            }
        }
        (arrivals, last.max(now.min(deadline)))
    }

    /// Runs the background alone until `until`.
    pub fn run_until(&mut self, until: Instant, out: &mut Vec<WifiOutput>) {
        self.advance(until, out);
    }
}

/// The ground truth of `case` in Mbit/s, as the paper defines it (§III, §IV-A): 0 where a TCP
/// bulk transfer runs (it takes whatever is available), else [`saturating_throughput`].
pub fn ground_truth(case: &Case, seed: u64) -> f64 {
    if case.has_tcp() {
        0.0
    } else {
        saturating_throughput(case, seed)
    }
}

/// The throughput (Mbit/s) of a saturating 1500-byte UDP flow AP → A in `case`'s setting,
/// over 5 s after the warm-up (the paper's ground-truth measurement).
pub fn saturating_throughput(case: &Case, seed: u64) -> f64 {
    let mut tb = Testbed::new(case, seed);
    let mut out = vec![];
    let start = Instant::ZERO + Testbed::warmup();
    let end = start + Duration::from_secs(5);
    tb.run_until(start, &mut out);
    out.clear();
    let mut seq = 0u64;
    for _ in 0..2 {
        tb.push(start, AP, STATION, seq, PACKET_BYTES);
        seq += 1;
    }
    let mut bytes = 0u64;
    while let Some(t) = tb.next_event().filter(|&t| t <= end) {
        tb.advance(t, &mut out);
        for o in out.drain(..) {
            if o.delivered && o.at <= end {
                bytes += u64::from(o.record.msdu_bytes);
            }
            tb.push(o.at, AP, STATION, seq, PACKET_BYTES);
            seq += 1;
        }
    }
    bytes as f64 * 8.0 / 5.0 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::bianchi::bianchi_difs_mbps;

    #[test]
    fn idle_ground_truth_is_one_saturated_station() {
        // One saturated sender on an idle 11g channel: Bianchi's model with n = 1 (no
        // collisions) is the independent figure.
        let case = Case::table1(0).unwrap();
        let gt = ground_truth(&case, 1);
        let phy = crate::wifi::phy::Phy::new(crate::wifi::phy::Standard::G);
        let model = bianchi_difs_mbps(&phy, case.spec().rate, 1, PACKET_BYTES);
        assert!(
            (gt - model).abs() / model < 0.03,
            "{gt} vs Bianchi n=1 {model}"
        );
    }

    #[test]
    fn udp_crossing_takes_its_rate_off_the_ground_truth() {
        let idle = ground_truth(&Case::table1(0).unwrap(), 1);
        let crossing = ground_truth(&Case::table1(1).unwrap(), 1);
        // 4.6 Mbit/s of 1500-byte frames at the same PHY rate costs ~4.6 Mbit/s of the AP's
        // throughput (same frame size, same airtime per bit).
        assert!(
            ((idle - crossing) - 4.6).abs() < 0.8,
            "idle {idle} crossing {crossing}"
        );
    }

    /// Delivery instant of one packet AP → A pushed behind 50 packets AP → B, all at 0.
    fn behind_a_backlog(spec: &str) -> Instant {
        let mut link = WifiLink::new(&spec.parse().unwrap(), 1);
        for k in 0..50 {
            assert!(link.push(Instant::ZERO, AP, CLIENT_B, 0, k, PACKET_BYTES));
        }
        assert!(link.push(Instant::ZERO, AP, STATION, 0, 99, PACKET_BYTES));
        let mut out = vec![];
        while let Some(t) = link.next_event() {
            link.advance(t, &mut out);
            if let Some(o) = out.iter().find(|o| o.tag == 99) {
                assert!(o.delivered);
                return o.at;
            }
        }
        panic!("never delivered");
    }

    #[test]
    fn a_fifo_ap_makes_a_packet_wait_behind_another_station_s_backlog() {
        let base = "std=11g,rate=54mbps,stations=2,load=none,wmm=off,queue=100";
        let fifo = behind_a_backlog(&format!("{base},ap-queue=fifo"));
        let per_station = behind_a_backlog(base);
        // FIFO: after all 50 frames to B, each at least DIFS + DATA + SIFS + Ack long.
        let phy = crate::wifi::phy::Phy::new(crate::wifi::phy::Standard::G);
        let rate = crate::wifi::phy::PhyRate::from_mbps(54.0).unwrap();
        let exchange = phy.difs()
            + phy.ppdu_duration(PACKET_BYTES, rate)
            + phy.sifs
            + phy.ppdu_duration(crate::wifi::phy::ACK_BYTES, phy.ack_rate(rate));
        assert!(
            fifo - Instant::ZERO >= exchange * 51,
            "fifo {fifo:?} vs 51 exchanges {:?}",
            exchange * 51
        );
        // Per station: A's packet goes second (the destinations take turns).
        assert!(
            per_station - Instant::ZERO < exchange * 3,
            "per-station {per_station:?}"
        );
    }

    #[test]
    fn a_crossing_tcp_flow_takes_the_link_and_fills_the_fifo() {
        // Case 3: CUBIC from the wired server to B, no other traffic after the warm-up's
        // light flow to A. TCP takes most of what one saturated sender gets (Bianchi, n = 1;
        // B's delayed Acks take their own airtime) and keeps a standing queue in the AP's
        // 100-frame FIFO. With Linux 2.6.11's window (87 segments) it stays within the FIFO,
        // without a loss; with no window limit it overflows it (losses).
        for (window, losses) in [(Some(LINUX_2_6_11_WINDOW), false), (None, true)] {
            let case = Case {
                tcp_window: window,
                ..Case::table1(3).unwrap()
            };
            let mut tb = Testbed::new(&case, 1);
            tb.run_until(Instant::ZERO + Duration::from_secs(2), &mut vec![]);
            let phy = crate::wifi::phy::Phy::new(crate::wifi::phy::Standard::G);
            let model = bianchi_difs_mbps(&phy, case.spec().rate, 1, PACKET_BYTES);
            let tcp_mbps = tb.delivered[0] as f64 * 8.0 / 2.0 / 1e6;
            assert!(
                tcp_mbps > 0.7 * model && tcp_mbps < model,
                "{window:?}: {tcp_mbps} vs {model}"
            );
            let SourceState::Tcp(f) = &tb.sources[0].state else {
                panic!("case 3's flow is TCP");
            };
            assert_eq!(
                f.sender.counters().congestion_events > 0,
                losses,
                "{window:?}"
            );
            let queued = tb.link.medium().stations()[AP as usize]
                .queued(crate::wifi::edca::AccessCategory::Be);
            assert!(queued > 20, "{window:?}: AP queue {queued}");
        }
    }

    #[test]
    fn tcp_cases_have_the_paper_s_ground_truth_of_zero() {
        for case in Case::all() {
            let gt = ground_truth(&case, 1);
            if case.has_tcp() {
                assert_eq!(gt, 0.0, "case {}", case.id);
            } else {
                assert!(gt > 10.0, "case {}: {gt}", case.id);
            }
        }
    }
}
