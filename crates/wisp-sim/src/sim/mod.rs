//! The discrete-event engine: a network of links, and flows routed over it.
//!
//! Events sit in one heap ordered by `(time, seq)`, where `seq` is the order in which they were
//! scheduled: two events at the same instant run in the order they were created, so a run is a
//! pure function of the [`Network`] (including its seed).
//!
//! **Topology.** A [`Network`] holds links and flows. A link is a one-way [`WiredLink`]: random
//! loss at its entrance, then a propagation delay, then (unless it is only a delay, a *pipe*)
//! a queue drained by a server (a trace, a constant or stepped rate, a mobile profile… — any
//! [`LinkModel`]). Each flow names two paths, a sequence of hops: its data path (sender →
//! receiver) and its feedback path (receiver → sender). Flows whose paths name the same link
//! share its queue and server, whatever their direction, so flows can cross, share and
//! contend. A packet moves to the next hop of its path at the instant the link delivers it; at
//! the end of the path it reaches the flow's receiver (data) or sender (feedback).
//!
//! A hop may also cross a Wi-Fi medium ([`WifiMedium`], one [`WifiLink`] per medium: an AP, its
//! stations, the spec's contenders and their load) from one of its nodes to another. The packet
//! joins the sending node's queue for its access category (the flow's DSCP; the medium drops it
//! if that queue is full), the engine wakes the medium at its `next_event()` and takes what
//! `advance()` decided: a delivered packet moves on at the end of its PPDU, one dropped at the
//! retry limit is lost on the link ([`DropReason::Link`]). Every flow crossing a medium, in
//! either direction, contends on its one channel. A medium's random draws come from
//! `wifi/LABEL`.
//!
//! **Agents** (`sim/agent.rs`) run at a medium's nodes beside a flow with frames and timers of
//! their own; the engine schedules their timers and hands them their frames, and knows nothing
//! else of them. A flow with a Ping-Pair spec ([`RoutedFlow::pingpair`]) has one: its receiving
//! station pings the AP of its data path's last Wi-Fi hop, and the AP answers each echo request
//! into its downlink queue of the request's access category (`sim/pingpair.rs`,
//! [`crate::pingpair`]).
//!
//! A [`Scenario`] (one bottleneck per direction, as `wisp run` builds it) is the two-node network
//! [`Scenario::network`]: link 0 (`forward`: `--loss`, the delay, the forward queue and link),
//! link 1 (`reverse`: `--reverse-loss`, the delay, the reverse trace or nothing), every flow's
//! data over link 0 and feedback over link 1. Its random streams keep their names
//! (`loss/forward`, `link/reverse`, …), so a scenario gives the same bytes of output as before
//! the engine knew topologies.
//!
//! The path of a data packet over one wired link: the flow driver emits it → loss at the link
//! entrance → the one-way propagation delay → the link's queue → its server → the next hop (at
//! the instant of delivery). A link may discard a packet that waited too long in the queue, and
//! may deliver a packet after its server is done with it, or lose it (the mobile profiles'
//! radio, [`crate::link::mobile`]).

use crate::link::{LinkModel, Server};
use crate::log::{DropReason, PacketRecord, RunLog, SENDER_SAMPLE_INTERVAL, SenderSample};
use crate::loss::{LossModel, LossSpec};
pub use crate::path::Hop;
use crate::pingpair::PingPairSpec;
use crate::queue::{Queue, QueueSpec, Queued};
use crate::seed;
use crate::wifi::link::{NodeId, WifiLink, WifiOutput, WifiSpec};
use agent::{Agent, AgentCx, Frame};
use events::{AgentId, Ev, Events, FlowId, LinkId, MediumId, Packet, PacketId};
use pingpair::PingPairAgent;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use wisp_core::controller::WireReceiver;
use wisp_core::flow::FlowSender;
use wisp_core::packet::{DEFAULT_MTU, Ecn, IP_UDP_OVERHEAD};
use wisp_core::scheme::{AnyReceiver, AnySender, BuildError, SchemeConfig, SchemeContext};
use wisp_core::tables::Tables;
use wisp_core::wire::Feedback;
use wisp_core::{DataSize, Duration, Instant};

mod agent;
mod events;
mod pingpair;

/// One flow of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub scheme: SchemeConfig,
    /// When it starts sending.
    pub start: Duration,
    /// When it stops sending (`None`: at the end of the run).
    pub stop: Option<Duration>,
    /// A finite transfer: a bulk flow (TCP) sends this many bytes, again those lost, and stops
    /// once its receiver has them all (`None`: always backlogged; a media flow ignores it).
    /// Short TCP downloads (RFC 8868 §6.1, RFC 8867 §5.7) are flows with a size.
    pub bytes: Option<u64>,
    /// Windows `[from, to)` (from the run's start) in which the flow's source offers nothing:
    /// a call captures no frame and no audio, a bulk flow has nothing to send. The sender
    /// goes on (its controller, timers and feedback): it only has no data. RFC 8867 §5.8's
    /// media pause and resume is a flow with one window.
    pub pauses: Vec<(Duration, Duration)>,
}

impl FlowSpec {
    pub fn new(scheme: SchemeConfig) -> Self {
        FlowSpec {
            scheme,
            start: Duration::ZERO,
            stop: None,
            bytes: None,
            pauses: vec![],
        }
    }
}

/// What every run has, whatever its links and flows: its length, its warm-up, its seed, its
/// packet size, the width of its time-series bins, its timer jitter and its tables. A
/// [`Scenario`] and a [`Network`] each hold one.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// The run ends here.
    pub duration: Duration,
    /// Metrics ignore the time before this.
    pub warmup: Duration,
    pub seed: u64,
    pub mtu: DataSize,
    /// Width of the time-series bins.
    pub bin: Duration,
    /// Each sender wake-up happens late by a uniform random time in `[0, timer_jitter)` (zero:
    /// exactly on time). A real host's timers fire some microseconds late; an exact simulator
    /// instead keeps a pacer's 5-ms grid and a trace's 1-ms delivery opportunities in exact
    /// step, which some schemes' outcomes depend on (GCC on the cellular traces: see the
    /// README's sim/real agreement). The `ideal` oracle is never late.
    pub timer_jitter: Duration,
    /// Where the flows' schemes keep their precomputed tables (Sprout's model). New settings
    /// have a store of their own; give several runs one store (a clone) to compute once.
    pub tables: Tables,
}

impl RunSettings {
    /// A run of `duration` with the defaults: no warm-up, the default seed, the default MTU,
    /// 100-ms bins, no timer jitter, a store of tables of its own.
    pub fn new(duration: Duration) -> Self {
        RunSettings {
            duration,
            warmup: Duration::ZERO,
            seed: seed::DEFAULT_SEED,
            mtu: DEFAULT_MTU,
            bin: Duration::from_millis(100),
            timer_jitter: Duration::ZERO,
            tables: Tables::new(),
        }
    }

    /// The end of the run.
    pub fn end(&self) -> Instant {
        Instant::ZERO + self.duration
    }
}

/// Everything that determines a run over one bottleneck per direction.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The data direction's bottleneck.
    pub forward: LinkModel,
    /// The feedback direction's bottleneck; `None` = the propagation delay only.
    pub reverse: Option<LinkModel>,
    /// One-way propagation delay in each direction, applied before the bottleneck queue.
    pub delay: Duration,
    pub queue: QueueSpec,
    pub reverse_queue: QueueSpec,
    /// Random loss at the forward link's entrance.
    pub loss: LossSpec,
    /// Random loss of feedback messages on the reverse path (Cellsim drops in both
    /// directions; the Sprout paper's §6.5 loss runs use it).
    pub reverse_loss: LossSpec,
    pub flows: Vec<FlowSpec>,
    pub run: RunSettings,
}

impl Scenario {
    /// One flow of `scheme` over `forward` with the defaults: 20 ms each way (as Cellsim),
    /// infinite queues, no loss, one period of the link, and [`RunSettings::new`]'s defaults.
    pub fn new(forward: LinkModel, scheme: SchemeConfig) -> Self {
        let run = RunSettings::new(forward.default_duration());
        Scenario {
            forward,
            reverse: None,
            delay: Duration::from_millis(20),
            queue: QueueSpec::Infinite,
            reverse_queue: QueueSpec::Infinite,
            loss: LossSpec::None,
            reverse_loss: LossSpec::None,
            flows: vec![FlowSpec::new(scheme)],
            run,
        }
    }

    /// The same run as a two-node [`Network`]: link 0 `forward` carries every flow's data, link
    /// 1 `reverse` its feedback.
    pub fn network(&self) -> Network {
        let forward = WiredLink {
            label: "forward".into(),
            model: Some(self.forward.clone()),
            queue: self.queue,
            delay: self.delay,
            loss: self.loss,
        };
        let reverse = WiredLink {
            label: "reverse".into(),
            model: self.reverse.clone(),
            queue: self.reverse_queue,
            delay: self.delay,
            loss: self.reverse_loss,
        };
        Network {
            links: vec![forward, reverse],
            media: vec![],
            flows: self
                .flows
                .iter()
                .map(|f| RoutedFlow {
                    spec: f.clone(),
                    dscp: 0,
                    data: vec![Hop::Link(0)],
                    feedback: vec![Hop::Link(1)],
                    reference: Some(0),
                    pingpair: None,
                })
                .collect(),
            run: self.run.clone(),
        }
    }
}

/// A one-way link of a [`Network`].
#[derive(Clone, Debug)]
pub struct WiredLink {
    /// Names the link's random streams (`link/LABEL` for its server, `loss/LABEL` for its
    /// entrance loss) and its reports.
    pub label: String,
    /// The server draining the queue; `None`: a pipe, the delay only (no queue).
    pub model: Option<LinkModel>,
    pub queue: QueueSpec,
    /// One-way propagation delay, applied before the queue.
    pub delay: Duration,
    /// Random loss at the entrance, before the delay.
    pub loss: LossSpec,
}

/// A Wi-Fi medium of a [`Network`]: one channel shared by an AP and its stations
/// ([`WifiLink`]).
#[derive(Clone, Debug)]
pub struct WifiMedium {
    /// Names its random stream (`wifi/LABEL`) and its reports.
    pub label: String,
    /// The AP, station 1, the spec's contenders and their load.
    pub spec: WifiSpec,
    /// Stations added after the nodes the spec makes ([`WifiLink::add_station`]), for the
    /// flows of a scenario.
    pub extra_stations: u32,
}

/// A flow of a [`Network`] and its paths.
#[derive(Clone, Debug)]
pub struct RoutedFlow {
    pub spec: FlowSpec,
    /// The DSCP its packets carry (Wi-Fi hops map it to an access category).
    pub dscp: u8,
    /// The data path, sender to receiver (at least one hop).
    pub data: Vec<Hop>,
    /// The feedback path, receiver to sender (at least one hop).
    pub feedback: Vec<Hop>,
    /// The link (of [`Network::links`], with a model) whose capacity and ideal sender the flow's
    /// metrics (and its `ideal` scheme) refer to; `None`: capacity 0, no ideal delay.
    pub reference: Option<u16>,
    /// Ping-Pair from the station at the end of the data path's last Wi-Fi hop to its AP
    /// ([`crate::pingpair`]); `None`: no probing.
    pub pingpair: Option<PingPairSpec>,
}

/// Everything that determines a run: links, flows and their paths, timing, seed.
#[derive(Clone, Debug)]
pub struct Network {
    pub links: Vec<WiredLink>,
    pub media: Vec<WifiMedium>,
    pub flows: Vec<RoutedFlow>,
    pub run: RunSettings,
}

impl Network {
    /// The reference link of flow `f` and the delay in front of it, if it has one.
    pub fn reference(&self, f: usize) -> Option<(&LinkModel, Duration)> {
        let r = self.flows[f].reference?;
        let l = self.links.get(r as usize)?;
        Some((l.model.as_ref()?, l.delay))
    }
}

/// Why a scenario cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error("the duration must be positive")]
    ZeroDuration,
    #[error("the warm-up ({warmup:?}) must be shorter than the duration ({duration:?})")]
    WarmupTooLong {
        warmup: Duration,
        duration: Duration,
    },
    #[error("a scenario needs at least one flow")]
    NoFlows,
    #[error("at most 65535 flows")]
    TooManyFlows,
    #[error("flow {0}: {1}")]
    Build(usize, BuildError),
    #[error("flow {0}: {1}")]
    Path(usize, String),
    /// The run's cancel point ([`Cancel`]) asked it to stop.
    #[error("the run was cancelled")]
    Cancelled,
}

/// A queue and its server.
#[derive(Debug)]
struct Bottleneck {
    queue: Queue,
    server: Server,
    /// A `Start` or `Complete` event is pending.
    busy: bool,
    /// When the packet in service reaches its receiver (`None`: the link loses it).
    in_service: Option<Instant>,
}

#[derive(Debug)]
struct Link {
    delay: Duration,
    loss: LossModel,
    loss_rng: ChaCha8Rng,
    /// `None`: a pipe.
    bottleneck: Option<Bottleneck>,
}

impl Link {
    fn new(spec: &WiredLink, seed: u64) -> Self {
        Link {
            delay: spec.delay,
            loss: LossModel::new(spec.loss),
            loss_rng: seed::stream(seed, &format!("loss/{}", spec.label)),
            bottleneck: spec.model.as_ref().map(|m| Bottleneck {
                queue: Queue::new(spec.queue),
                server: m.server_seeded(seed::mix(seed, &format!("link/{}", spec.label))),
                busy: false,
                in_service: None,
            }),
        }
    }
}

/// A Wi-Fi medium and its pending wake-up.
#[derive(Debug)]
struct Medium {
    link: WifiLink,
    wake: Option<Instant>,
}

impl Medium {
    /// Schedules medium `m`'s (this one's) next wake-up, at `earliest` or later, if it is
    /// earlier than the one pending.
    fn wake(&mut self, m: MediumId, earliest: Instant, events: &mut Events) {
        if let Some(t) = self.link.next_event() {
            let t = t.max(earliest);
            if self.wake.is_none_or(|w| t < w) {
                self.wake = Some(t);
                events.schedule(t, Ev::WifiWake(m));
            }
        }
    }
}

/// An agent and the flow it runs beside.
#[derive(Debug)]
struct AgentSlot {
    agent: Box<dyn Agent>,
    flow: FlowId,
}

#[derive(Debug)]
struct Flow {
    sender: FlowSender<AnySender>,
    receiver: AnyReceiver,
    active: bool,
    stop: Instant,
    /// A finite transfer ([`FlowSpec::bytes`]): its size and the bytes sent, lost and
    /// delivered so far.
    transfer: Option<Transfer>,
    sender_wake: Option<Instant>,
    receiver_wake: Option<Instant>,
    /// The oracle (`ideal`) sends at the link's own instants: no timer jitter.
    exact_timers: bool,
    /// When the sender is next sampled.
    next_sample: Instant,
    data: Box<[Hop]>,
    feedback: Box<[Hop]>,
    dscp: u8,
}

/// A finite transfer's progress. Its bulk source has the size to send ([`Source::limit`]);
/// each lost packet's bytes are given back to it, so they are sent again (as new bytes, as the
/// TCP model counts them) and nothing past the size is: the receiver gets the size and at
/// most a packet more, and the sender stops once it has.
///
/// [`Source::limit`]: wisp_core::source::Source::limit
#[derive(Clone, Copy, Debug)]
struct Transfer {
    size: u64,
    delivered: u64,
}

impl Transfer {
    fn of(size: u64) -> Self {
        Transfer { size, delivered: 0 }
    }
}

/// An in-flight feedback message.
#[derive(Debug)]
struct InFlight {
    flow: FlowId,
    /// Its hop on the flow's feedback path.
    hop: u8,
    fb: Feedback,
}

/// Progress reports: called with the fraction of simulated time done.
pub type Progress<'a> = &'a mut dyn FnMut(f64);

/// A cancel point: a running simulation calls it every [`CANCEL_POLL_EVENTS`] events, and stops
/// with [`SimError::Cancelled`] when it returns `true` (the Python package checks for Ctrl-C
/// there). It sees nothing of the simulation's state, so a run it lets finish gives the same
/// log, to the last byte, as a run without one.
pub type Cancel<'a> = &'a dyn Fn() -> bool;

/// How many events a simulation handles between two calls of its [`Cancel`] point: a few
/// milliseconds of wall time at the engine's speed (about a million packets a second, a few
/// events each), and a cost per event of one bit test.
pub const CANCEL_POLL_EVENTS: u64 = 4096;

/// A running simulation.
#[derive(Debug)]
pub struct Simulation {
    events: Events,
    now: Instant,
    end: Instant,
    links: Vec<Link>,
    media: Vec<Medium>,
    wifi_out: Vec<WifiOutput>,
    aqm_rng: ChaCha8Rng,
    timer_jitter: Duration,
    timer_rng: ChaCha8Rng,
    flows: Vec<Flow>,
    log: RunLog,
    /// Each data packet's hop on its flow's data path (parallel to `log.packets`).
    data_hop: Vec<u8>,
    /// In-flight feedback messages (slab with a free list).
    feedback: Vec<Option<InFlight>>,
    free_feedback: Vec<u32>,
    /// The agents at the media's nodes, in the order of their flows.
    agents: Vec<AgentSlot>,
    drops: Vec<u32>,
}

impl Simulation {
    /// Builds the flows and links of `scenario`.
    pub fn new(scenario: &Scenario) -> Result<Self, SimError> {
        Self::of_network(&scenario.network())
    }

    /// Builds the flows and links of `net`.
    pub fn of_network(net: &Network) -> Result<Self, SimError> {
        check_network(net)?;
        let end = net.run.end();
        let media: Vec<Medium> = net
            .media
            .iter()
            .map(|m| {
                let mut link = WifiLink::new(
                    &m.spec,
                    seed::mix(net.run.seed, &format!("wifi/{}", m.label)),
                );
                for _ in 0..m.extra_stations {
                    link.add_station();
                }
                Medium { link, wake: None }
            })
            .collect();
        let media_nodes: Vec<NodeId> = media.iter().map(|m| m.link.nodes()).collect();
        let links: Vec<&WifiLink> = media.iter().map(|m| &m.link).collect();
        let mut flows = Vec::with_capacity(net.flows.len());
        let mut agents = Vec::new();
        for (i, rf) in net.flows.iter().enumerate() {
            for (what, path) in [("data", &rf.data), ("feedback", &rf.feedback)] {
                check_path(i, what, path, net.links.len(), &media_nodes)?;
            }
            let flow = Flow::build(net, i, rf)?;
            if let Some(pp) = &rf.pingpair {
                let life = (rf.spec.start, flow.stop);
                let agent = PingPairAgent::build(i, &rf.data, life, pp, &links)?;
                agents.push(AgentSlot {
                    agent: Box::new(agent),
                    flow: FlowId(i as u16),
                });
            }
            flows.push(flow);
        }
        let mut sim = Simulation {
            events: Events::default(),
            now: Instant::ZERO,
            end,
            links: net
                .links
                .iter()
                .map(|l| Link::new(l, net.run.seed))
                .collect(),
            media,
            wifi_out: Vec::new(),
            aqm_rng: seed::stream(net.run.seed, "aqm"),
            timer_jitter: net.run.timer_jitter,
            timer_rng: seed::stream(net.run.seed, "timers"),
            flows,
            log: RunLog::default(),
            data_hop: Vec::new(),
            feedback: Vec::new(),
            free_feedback: Vec::new(),
            agents,
            drops: Vec::new(),
        };
        let mut next_agent = 0;
        for (i, f) in net.flows.iter().enumerate() {
            sim.schedule(
                Instant::ZERO + f.spec.start,
                Ev::FlowStart(FlowId(i as u16)),
            );
            // Its agents ask for their first timers right after it.
            while sim
                .agents
                .get(next_agent)
                .is_some_and(|a| a.flow.index() == i)
            {
                sim.with_agent(AgentId(next_agent as u16), true, |a, cx| a.start(cx));
                next_agent += 1;
            }
        }
        for m in 0..sim.media.len() {
            // The background load starts at once.
            sim.wifi_wake(MediumId(m as u16));
        }
        Ok(sim)
    }

    fn schedule(&mut self, at: Instant, ev: Ev) {
        self.events.schedule(at, ev);
    }

    /// Runs to the end and returns the log.
    pub fn run(self, progress: Option<Progress<'_>>) -> RunLog {
        self.run_or_cancel(progress, None)
            .expect("a run without a cancel point is never cancelled")
    }

    /// Runs to the end and returns the log, calling `cancel` (when given) every
    /// [`CANCEL_POLL_EVENTS`] events: [`SimError::Cancelled`] once it returns `true`.
    pub fn run_or_cancel(
        mut self,
        progress: Option<Progress<'_>>,
        cancel: Option<Cancel<'_>>,
    ) -> Result<RunLog, SimError> {
        const PROGRESS_EVENTS: u64 = 0x10000;
        const _: () = assert!(PROGRESS_EVENTS % CANCEL_POLL_EVENTS == 0);
        let mut progress = progress;
        let mut events: u64 = 0;
        while let Some((at, ev)) = self.events.pop_before(self.end) {
            debug_assert!(at >= self.now, "time went backwards");
            self.now = at;
            self.handle(ev);
            events += 1;
            if events % CANCEL_POLL_EVENTS == 0 {
                if cancel.is_some_and(|c| c()) {
                    return Err(SimError::Cancelled);
                }
                if events % PROGRESS_EVENTS == 0 {
                    if let Some(p) = progress.as_mut() {
                        p(self.now.as_secs_f64() / self.end.as_secs_f64());
                    }
                }
            }
        }
        // Once more at the end: a run whose cancel was asked for after its last poll (a Python
        // hook that failed, after which nothing more happens) must not go on to its metrics,
        // which over a long run take seconds.
        if cancel.is_some_and(|c| c()) {
            return Err(SimError::Cancelled);
        }
        self.log.events = events;
        Ok(self.log)
    }

    fn handle(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::FlowStart(f) => {
                self.flows[f.index()].active = true;
                self.run_sender(f);
            }
            Ev::SenderWake(f) => {
                let flow = &mut self.flows[f.index()];
                if flow.sender_wake == Some(now) {
                    flow.sender_wake = None;
                    self.run_sender(f);
                }
            }
            Ev::ReceiverWake(f) => {
                let flow = &mut self.flows[f.index()];
                if flow.receiver_wake == Some(now) {
                    flow.receiver_wake = None;
                    flow.receiver.on_timeout(now);
                    self.run_receiver(f);
                }
            }
            Ev::Arrive(l, id) => self.arrive(l, id),
            Ev::Start(l) => self.start(l),
            Ev::Complete(l, id) => self.complete(l, id),
            Ev::Deliver(_, id) => self.next_hop(id),
            Ev::WifiWake(m) => {
                if self.media[m.index()].wake == Some(now) {
                    self.media[m.index()].wake = None;
                    self.wifi_advance(m);
                }
            }
            Ev::Agent(a, timer) => {
                let agent = &self.agents[a.index()].agent;
                let m = agent.medium();
                if agent.needs_medium(now, timer) {
                    self.wifi_advance(m);
                }
                self.with_agent(a, true, |agent, cx| agent.on_timer(timer, cx));
            }
        }
    }

    /// Calls agent `a` with its context; frames it pushes wake the medium if `wake_on_push`.
    fn with_agent(
        &mut self,
        a: AgentId,
        wake_on_push: bool,
        call: impl FnOnce(&mut dyn Agent, &mut AgentCx<'_>),
    ) {
        let Simulation {
            agents,
            media,
            events,
            flows,
            log,
            now,
            ..
        } = self;
        let slot = &mut agents[a.index()];
        let m = slot.agent.medium();
        let mut cx = AgentCx {
            now: *now,
            receiver: &mut flows[slot.flow.index()].receiver,
            log,
            id: a,
            medium_id: m,
            medium: &mut media[m.index()],
            events,
            wake_on_push,
        };
        call(&mut *slot.agent, &mut cx);
    }

    /// Schedules medium `m`'s next wake-up if it is earlier than the one pending.
    fn wifi_wake(&mut self, m: MediumId) {
        self.media[m.index()].wake(m, self.now, &mut self.events);
    }

    /// Runs medium `m` to now and moves on what it delivered.
    fn wifi_advance(&mut self, m: MediumId) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.wifi_out);
        self.media[m.index()].link.advance(now, &mut out);
        for o in out.drain(..) {
            match Frame::of_tag(o.tag) {
                Frame::Agent(a, number) => {
                    self.with_agent(a, false, |agent, cx| agent.on_frame(number, &o, cx));
                }
                Frame::Packet(p) if o.delivered => self.next_hop(p),
                Frame::Packet(p) => self.record_drops(&mut vec![p.raw()], DropReason::Link),
            }
        }
        self.wifi_out = out;
        // Everything up to now is done: the next wake-up is later (never a loop at one instant).
        let earliest = now + Duration::from_nanos(1);
        self.media[m.index()].wake(m, earliest, &mut self.events);
    }

    /// Lets flow `f` send what it may now, then schedules its next wake-up.
    fn run_sender(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f.index()];
        if !flow.active {
            return;
        }
        if now >= flow.stop {
            flow.active = false;
            return;
        }
        while let Some(header) = self.flows[f.index()].sender.poll_transmit(now) {
            let p = PacketId::data(self.log.packets.len());
            self.log.packets.push(PacketRecord::new(f.0, header));
            self.data_hop.push(0);
            let hop = self.flows[f.index()].data[0];
            self.enter(hop, p);
        }
        let flow = &mut self.flows[f.index()];
        if now >= flow.next_sample {
            flow.next_sample = now + SENDER_SAMPLE_INTERVAL;
            let sample = SenderSample::of(f.0, now, flow.sender.sender());
            self.log.sender_samples.push(sample);
        }
        if let Some(t) = flow.sender.poll_timeout() {
            // A wake-up that is not in the future would never let time advance.
            let mut t = t.max(now + Duration::from_nanos(1));
            if !self.timer_jitter.is_zero()
                && !flow.exact_timers
                && flow.sender_wake.is_none_or(|w| t < w)
            {
                let late = self.timer_rng.random_range(0..self.timer_jitter.as_nanos());
                t += Duration::from_nanos(late);
            }
            if flow.sender_wake.is_none_or(|w| t < w) {
                flow.sender_wake = Some(t);
                self.schedule(t, Ev::SenderWake(f));
            }
        }
    }

    /// Sends the feedback receiver `f` has, then schedules its next wake-up.
    fn run_receiver(&mut self, f: FlowId) {
        let now = self.now;
        while let Some(fb) = self.flows[f.index()].receiver.poll_feedback(now) {
            let size = (fb.len() as u32) + IP_UDP_OVERHEAD.bytes() as u32;
            self.log.feedback_packets += 1;
            self.log.feedback_bytes += u64::from(size);
            let msg = InFlight {
                flow: f,
                hop: 0,
                fb,
            };
            let slot = match self.free_feedback.pop() {
                Some(slot) => {
                    self.feedback[slot as usize] = Some(msg);
                    slot as usize
                }
                None => {
                    self.feedback.push(Some(msg));
                    self.feedback.len() - 1
                }
            };
            let hop = self.flows[f.index()].feedback[0];
            self.enter(hop, PacketId::feedback(slot));
        }
        let flow = &mut self.flows[f.index()];
        if let Some(t) = flow.receiver.poll_timeout() {
            let t = t.max(now + Duration::from_nanos(1));
            if flow.receiver_wake.is_none_or(|w| t < w) {
                flow.receiver_wake = Some(t);
                self.schedule(t, Ev::ReceiverWake(f));
            }
        }
    }

    /// Packet `p` enters `hop` now.
    fn enter(&mut self, hop: Hop, p: PacketId) {
        let l = match hop {
            Hop::Link(l) => LinkId(l),
            Hop::Wifi { medium, from, to } => {
                return self.enter_wifi(p, MediumId(medium), from, to);
            }
        };
        let link = &mut self.links[l.index()];
        if link.loss.lose(&mut link.loss_rng) {
            let mut lost = std::mem::take(&mut self.drops);
            lost.push(p.raw());
            self.record_drops(&mut lost, DropReason::Loss);
            self.drops = lost;
        } else {
            let at = self.now + link.delay;
            self.schedule(at, Ev::Arrive(l, p));
        }
    }

    /// Packet `p` joins `from`'s queue on medium `m` for `to`.
    fn enter_wifi(&mut self, p: PacketId, m: MediumId, from: NodeId, to: NodeId) {
        let now = self.now;
        let flow = match p.get() {
            Packet::Data(i) => {
                let rec = &mut self.log.packets[i];
                if rec.enqueued.is_none() {
                    rec.enqueued = Some(now);
                }
                FlowId(rec.flow)
            }
            Packet::Feedback(slot) => self.in_flight(slot).flow,
        };
        let dscp = self.flows[flow.index()].dscp;
        let size = self.size_of(p);
        let link = &mut self.media[m.index()].link;
        if link.push(now, from, to, dscp, u64::from(p.raw()), size) {
            self.wifi_wake(m);
        } else {
            self.record_drops(&mut vec![p.raw()], DropReason::Queue);
        }
    }

    /// The feedback message in flight in `slot`.
    fn in_flight(&self, slot: usize) -> &InFlight {
        self.feedback[slot].as_ref().expect("live feedback")
    }

    /// Packet `p` has crossed its current hop: on to the next one, or to its endpoint.
    fn next_hop(&mut self, p: PacketId) {
        match p.get() {
            Packet::Data(i) => {
                let f = self.log.packets[i].flow as usize;
                let h = self.data_hop[i] as usize + 1;
                match self.flows[f].data.get(h).copied() {
                    Some(hop) => {
                        self.data_hop[i] = h as u8;
                        self.enter(hop, p);
                    }
                    None => self.deliver_data(i),
                }
            }
            Packet::Feedback(slot) => {
                let msg = self.feedback[slot].as_mut().expect("live feedback");
                let h = msg.hop as usize + 1;
                match self.flows[msg.flow.index()].feedback.get(h).copied() {
                    Some(hop) => {
                        msg.hop = h as u8;
                        self.enter(hop, p);
                    }
                    None => self.deliver_feedback(slot),
                }
            }
        }
    }

    fn size_of(&self, p: PacketId) -> u32 {
        match p.get() {
            Packet::Data(i) => self.log.packets[i].header.size.bytes() as u32,
            Packet::Feedback(slot) => {
                self.in_flight(slot).fb.len() as u32 + IP_UDP_OVERHEAD.bytes() as u32
            }
        }
    }

    fn arrive(&mut self, l: LinkId, p: PacketId) {
        let now = self.now;
        if self.links[l.index()].bottleneck.is_none() {
            return self.next_hop(p);
        }
        let size = self.size_of(p);
        let ecn = match p.get() {
            Packet::Data(i) => {
                let rec = &mut self.log.packets[i];
                if rec.enqueued.is_none() {
                    rec.enqueued = Some(now);
                }
                rec.header.ecn
            }
            // Feedback travels Not-ECT.
            Packet::Feedback(_) => Ecn::NotEct,
        };
        let mut drops = std::mem::take(&mut self.drops);
        let rng = &mut self.aqm_rng;
        let link = self.links[l.index()]
            .bottleneck
            .as_mut()
            .expect("a bottleneck");
        link.queue.enqueue(
            now,
            Queued {
                id: p.raw(),
                size,
                enqueued: now,
                ecn,
            },
            rng,
            &mut drops,
        );
        let start = if link.busy {
            None
        } else {
            link.busy = true;
            link.server.next_start(now)
        };
        self.record_drops(&mut drops, DropReason::Queue);
        self.drops = drops;
        if let Some(t) = start {
            self.schedule(t, Ev::Start(l));
        }
    }

    fn bottleneck(&mut self, l: LinkId) -> &mut Bottleneck {
        self.links[l.index()]
            .bottleneck
            .as_mut()
            .expect("a bottleneck")
    }

    fn start(&mut self, l: LinkId) {
        let now = self.now;
        let mut drops = std::mem::take(&mut self.drops);
        let mut discarded = vec![];
        let rng = &mut self.aqm_rng;
        let link = self.links[l.index()]
            .bottleneck
            .as_mut()
            .expect("a bottleneck");
        let limit = link.server.discard_after(now);
        let head = loop {
            match link.queue.dequeue(now, rng, &mut drops) {
                Some(q) if limit.is_some_and(|l| now - q.enqueued > l) => discarded.push(q.id),
                other => break other,
            }
        };
        let done = match head {
            None => {
                link.busy = false;
                None
            }
            Some(q) => {
                let s = link.server.serve_packet(now, u64::from(q.size));
                link.in_service = s.delivered;
                Some((PacketId::from_raw(q.id), s.done, q.ecn))
            }
        };
        // The codepoint the packet leaves with (CE if the queue marked it) is the one it
        // carries on, and the one the log records.
        if let Some((p, _, ecn)) = done {
            if let Packet::Data(i) = p.get() {
                self.log.packets[i].header.ecn = ecn;
            }
        }
        self.record_drops(&mut drops, DropReason::Aqm);
        self.record_drops(&mut discarded, DropReason::Discard);
        self.drops = drops;
        if let Some((p, at, _)) = done {
            if at != Instant::MAX {
                self.schedule(at, Ev::Complete(l, p));
            }
        }
    }

    fn complete(&mut self, l: LinkId, p: PacketId) {
        let now = self.now;
        match self.bottleneck(l).in_service.take() {
            Some(at) if at <= now => self.next_hop(p),
            Some(at) => self.schedule(at, Ev::Deliver(l, p)),
            None => self.record_drops(&mut vec![p.raw()], DropReason::Link),
        }
        let link = self.bottleneck(l);
        if link.queue.is_empty() {
            link.busy = false;
            return;
        }
        match link.server.next_start(now) {
            Some(t) if t == now => self.start(l),
            Some(t) => self.schedule(t, Ev::Start(l)),
            None => {}
        }
    }

    /// Data packet `i` (of the log) reaches its receiver now.
    fn deliver_data(&mut self, i: usize) {
        let now = self.now;
        let rec = &mut self.log.packets[i];
        rec.delivered = Some(now);
        let f = FlowId(rec.flow);
        let header = rec.header;
        let flow = &mut self.flows[f.index()];
        if let Some(t) = flow.transfer.as_mut() {
            t.delivered += header.size.bytes();
            if t.delivered >= t.size {
                flow.stop = flow.stop.min(now);
            }
        }
        // Both halves are the same scheme: its fields always decode here.
        let decoded = self.flows[f.index()]
            .receiver
            .on_packet_received(now, &header);
        debug_assert!(decoded.is_ok(), "{decoded:?}");
        self.run_receiver(f);
    }

    /// The feedback message in `slot` reaches its sender now.
    fn deliver_feedback(&mut self, slot: usize) {
        let msg = self.feedback[slot].take().expect("live feedback");
        self.free_feedback.push(slot as u32);
        let now = self.now;
        let decoded = self.flows[msg.flow.index()]
            .sender
            .on_feedback(now, &msg.fb);
        debug_assert!(decoded.is_ok(), "{decoded:?}");
        self.run_sender(msg.flow);
    }

    /// Records the packets of `drops` (their raw handles, as queues give them) as dropped.
    fn record_drops(&mut self, drops: &mut Vec<u32>, reason: DropReason) {
        for raw in drops.drain(..) {
            match PacketId::from_raw(raw).get() {
                Packet::Data(i) => {
                    let p = &mut self.log.packets[i];
                    p.drop(self.now, reason);
                    let flow = &mut self.flows[p.flow as usize];
                    if flow.transfer.is_some() {
                        flow.sender.source_mut().limit(p.header.size.bytes());
                    }
                }
                Packet::Feedback(slot) => {
                    self.feedback[slot] = None;
                    self.free_feedback.push(slot as u32);
                    self.log.feedback_dropped += 1;
                }
            }
        }
    }
}

/// Runs `scenario` to the end.
pub fn simulate(scenario: &Scenario, progress: Option<Progress<'_>>) -> Result<RunLog, SimError> {
    simulate_or_cancel(scenario, progress, None)
}

/// Runs `scenario` to the end, or until `cancel` says stop ([`Simulation::run_or_cancel`]).
pub fn simulate_or_cancel(
    scenario: &Scenario,
    progress: Option<Progress<'_>>,
    cancel: Option<Cancel<'_>>,
) -> Result<RunLog, SimError> {
    Simulation::new(scenario)?.run_or_cancel(progress, cancel)
}

/// Runs `net` to the end.
pub fn simulate_network(net: &Network, progress: Option<Progress<'_>>) -> Result<RunLog, SimError> {
    simulate_network_or_cancel(net, progress, None)
}

/// Runs `net` to the end, or until `cancel` says stop ([`Simulation::run_or_cancel`]).
pub fn simulate_network_or_cancel(
    net: &Network,
    progress: Option<Progress<'_>>,
    cancel: Option<Cancel<'_>>,
) -> Result<RunLog, SimError> {
    Simulation::of_network(net)?.run_or_cancel(progress, cancel)
}

/// The run-wide checks of `net`, before anything is built.
fn check_network(net: &Network) -> Result<(), SimError> {
    if net.run.duration.is_zero() {
        return Err(SimError::ZeroDuration);
    }
    if net.run.warmup >= net.run.duration {
        return Err(SimError::WarmupTooLong {
            warmup: net.run.warmup,
            duration: net.run.duration,
        });
    }
    if net.flows.is_empty() {
        return Err(SimError::NoFlows);
    }
    if net.flows.len() > u16::MAX as usize {
        return Err(SimError::TooManyFlows);
    }
    Ok(())
}

/// Flow `i`'s `what` path: 1 to 255 hops over links of `links` and media of `media_nodes` nodes.
fn check_path(
    i: usize,
    what: &str,
    path: &[Hop],
    links: usize,
    media_nodes: &[NodeId],
) -> Result<(), SimError> {
    if path.is_empty() || path.len() > u8::MAX as usize {
        return Err(SimError::Path(
            i,
            format!("the {what} path needs 1 to 255 hops"),
        ));
    }
    for h in path {
        match *h {
            Hop::Link(l) if l as usize >= links => {
                return Err(SimError::Path(i, format!("no link {l}")));
            }
            Hop::Wifi { medium, from, to } => {
                let Some(&nodes) = media_nodes.get(medium as usize) else {
                    return Err(SimError::Path(i, format!("no Wi-Fi medium {medium}")));
                };
                if from >= nodes || to >= nodes || from == to {
                    return Err(SimError::Path(
                        i,
                        format!("no hop {from} -> {to} on Wi-Fi medium {medium}"),
                    ));
                }
            }
            Hop::Link(_) => {}
        }
    }
    Ok(())
}

impl Flow {
    /// Flow `i` of `net` (`rf`): its scheme's halves, built in the flow's context.
    fn build(net: &Network, i: usize, rf: &RoutedFlow) -> Result<Flow, SimError> {
        let spec = &rf.spec;
        let start = Instant::ZERO + spec.start;
        let ideal = net.reference(i).map(|(link, delay)| {
            let it: Box<dyn Iterator<Item = (Instant, DataSize)> + Send> = Box::new(
                link.ideal_deliveries(delay, net.run.mtu)
                    .map(|p| (p.sent, p.size))
                    .skip_while(move |&(t, _)| t < start),
            );
            it
        });
        let ctx = SchemeContext {
            mtu: net.run.mtu,
            ideal_schedule: ideal,
            rng: Some(seed::stream(net.run.seed, &format!("flow/{i}/media"))),
            tables: net.run.tables.clone(),
            // The simulator's packets have no address family: IPv4's headers.
            ip_udp_header: IP_UDP_OVERHEAD,
            codecs: None,
        };
        let (mut sender, receiver) = spec.scheme.build(ctx).map_err(|e| SimError::Build(i, e))?;
        if let Some(bytes) = spec.bytes {
            sender.source_mut().limit(bytes);
        }
        for &(from, to) in &spec.pauses {
            (sender.source_mut()).pause(Instant::ZERO + from, Instant::ZERO + to);
        }
        Ok(Flow {
            sender,
            receiver,
            active: false,
            stop: spec.stop.map_or(Instant::MAX, |d| Instant::ZERO + d),
            transfer: spec.bytes.map(Transfer::of),
            sender_wake: None,
            receiver_wake: None,
            exact_timers: spec.scheme.needs().exact_timers,
            next_sample: Instant::ZERO,
            data: rf.data.clone().into_boxed_slice(),
            feedback: rf.feedback.clone().into_boxed_slice(),
            dscp: rf.dscp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::LinkSpec;
    use crate::log::DropReason;

    fn scenario(link: &str, scheme: &str, secs: u64) -> Scenario {
        let l = link.parse::<LinkSpec>().unwrap().load().unwrap();
        let mut s = Scenario::new(l, scheme.parse().unwrap());
        s.run.duration = Duration::from_secs(secs);
        s
    }

    #[test]
    fn a_cancel_point_stops_a_run_and_leaves_a_finished_one_unchanged() {
        use std::cell::Cell;
        let s = scenario("const:12mbps", "cubic", 20);
        let plain = simulate(&s, None).unwrap();
        // Polled every CANCEL_POLL_EVENTS events and at the end, answered `false`: the same log,
        // byte for byte.
        let calls = Cell::new(0u64);
        let never = || {
            calls.set(calls.get() + 1);
            false
        };
        let polled = simulate_or_cancel(&s, None, Some(&never)).unwrap();
        assert_eq!(calls.get(), plain.events / CANCEL_POLL_EVENTS + 1);
        assert!(calls.get() > 10, "{} polls", calls.get());
        assert_eq!(format!("{plain:?}"), format!("{polled:?}"));
        // Stop at the third poll: the run ends there, with the error.
        calls.set(0);
        let third = || {
            calls.set(calls.get() + 1);
            calls.get() == 3
        };
        let r = simulate_or_cancel(&s, None, Some(&third));
        assert!(matches!(r, Err(SimError::Cancelled)), "{r:?}");
        assert_eq!(calls.get(), 3);
        assert_eq!(
            SimError::Cancelled.to_string(),
            "the run was cancelled",
            "the message wisp-py passes on"
        );
    }

    #[test]
    fn a_discard_timer_bounds_the_queue() {
        // 3 Mbit/s into the 2 Mbit/s cable profile with its 500-ms buffer.
        let log = simulate(&scenario("cable-up", "cbr:rate-kbps=3000", 20), None).unwrap();
        let discarded = log
            .packets
            .iter()
            .filter(|p| p.reason == DropReason::Discard)
            .count();
        let sent = log.packets.len();
        // A third of what is sent finds no room once the queue is 500 ms long.
        let f = discarded as f64 / sent as f64;
        assert!(f > 0.25 && f < 0.34, "{f}");
        // No delivered packet waited more than the buffer plus its service and the radio.
        let worst = log
            .packets
            .iter()
            .filter_map(|p| Some(p.delivered? - p.enqueued?))
            .max()
            .unwrap();
        assert!(worst < Duration::from_millis(530), "{worst:?}");
    }

    #[test]
    fn a_mobile_radio_loses_and_delays_but_keeps_order() {
        let log = simulate(&scenario("3g-up", "cbr:rate-kbps=100", 60), None).unwrap();
        let lost = log
            .packets
            .iter()
            .filter(|p| p.reason == DropReason::Link)
            .count() as f64;
        let f = lost / log.packets.len() as f64;
        assert!(f > 0.01 && f < 0.06, "{f}");
        assert!(log.packets.iter().all(|p| p.reason != DropReason::Discard));
        // Delivered in send order.
        let d: Vec<Instant> = log.packets.iter().filter_map(|p| p.delivered).collect();
        assert!(d.windows(2).all(|w| w[0] <= w[1]));
        // The radio adds its latency (40 ms) to the 20-ms propagation delay.
        let min = log
            .packets
            .iter()
            .filter_map(|p| Some(p.delivered? - p.sent()))
            .min()
            .unwrap();
        assert!(min >= Duration::from_millis(60), "{min:?}");
    }

    #[test]
    fn mobile_runs_are_deterministic_and_depend_on_the_seed() {
        let a = simulate(&scenario("wimax-down", "adaptive-um", 20), None).unwrap();
        let b = simulate(&scenario("wimax-down", "adaptive-um", 20), None).unwrap();
        assert_eq!(a.packets, b.packets);
        assert_eq!(a.sender_samples, b.sender_samples);
        let mut s = scenario("wimax-down", "adaptive-um", 20);
        s.run.seed = 2;
        let c = simulate(&s, None).unwrap();
        assert_ne!(a.packets, c.packets);
        // The controller is sampled about every 100 ms.
        let n = a.sender_samples.len();
        assert!((190..=201).contains(&n), "{n}");
        assert!(a.sender_samples.iter().any(|x| x.delay_target.is_some()));
    }

    #[test]
    fn timer_jitter_makes_senders_late_by_less_than_it_and_is_seeded() {
        // CBR at 1.2 Mbit/s on a fast link: 1500-byte packets every 10 ms exactly.
        let exact = simulate(&scenario("const:100mbps", "cbr:rate-kbps=1200", 5), None).unwrap();
        let mut s = scenario("const:100mbps", "cbr:rate-kbps=1200", 5);
        s.run.timer_jitter = Duration::from_micros(100);
        let late = simulate(&s, None).unwrap();
        assert_eq!(late.packets.len(), exact.packets.len());
        let lateness: Vec<Duration> = exact
            .packets
            .iter()
            .zip(&late.packets)
            .map(|(a, b)| b.sent() - a.sent())
            .collect();
        assert!(lateness.iter().all(|&d| d < Duration::from_micros(100)));
        // Uniform on [0, 100 µs): the mean is near 50 µs and hardly any wake is on time.
        let mean = lateness.iter().map(|d| d.as_secs_f64()).sum::<f64>() / lateness.len() as f64;
        assert!((40e-6..60e-6).contains(&mean), "{mean}");
        assert!(lateness.iter().filter(|d| d.is_zero()).count() <= 1);
        // The same seed gives the same run; another seed another one.
        assert_eq!(simulate(&s, None).unwrap().packets, late.packets);
        s.run.seed = 2;
        assert_ne!(simulate(&s, None).unwrap().packets, late.packets);
        // The oracle is never late.
        let mut o = scenario("const:12mbps", "ideal", 2);
        let exact = simulate(&o, None).unwrap();
        o.run.timer_jitter = Duration::from_micros(100);
        assert_eq!(simulate(&o, None).unwrap().packets, exact.packets);
    }
}

#[cfg(test)]
mod topology_tests {
    use super::*;
    use crate::link::LinkSpec;

    fn wired(label: &str, model: Option<&str>, delay_ms: u64) -> WiredLink {
        WiredLink {
            label: label.into(),
            model: model.map(|m| m.parse::<LinkSpec>().unwrap().load().unwrap()),
            queue: QueueSpec::Infinite,
            delay: Duration::from_millis(delay_ms),
            loss: LossSpec::None,
        }
    }

    fn flow(scheme: &str, data: &[u16], feedback: &[u16]) -> RoutedFlow {
        RoutedFlow {
            spec: FlowSpec::new(scheme.parse().unwrap()),
            dscp: 0,
            data: data.iter().map(|&l| Hop::Link(l)).collect(),
            feedback: feedback.iter().map(|&l| Hop::Link(l)).collect(),
            reference: None,
            pingpair: None,
        }
    }

    fn network(links: Vec<WiredLink>, flows: Vec<RoutedFlow>, secs: u64) -> Network {
        Network {
            links,
            media: vec![],
            flows,
            run: RunSettings {
                seed: 1,
                ..RunSettings::new(Duration::from_secs(secs))
            },
        }
    }

    fn delivered_kbps(log: &RunLog, f: u16, secs: u64) -> f64 {
        let bytes: u64 = log
            .packets
            .iter()
            .filter(|p| p.flow == f && p.delivered.is_some())
            .map(|p| p.header.size.bytes())
            .sum();
        bytes as f64 * 8.0 / secs as f64 / 1e3
    }

    /// A flow with a size stops once its receiver has that many bytes: a 40-kB NewReno download
    /// on 2 Mbit/s is done within a second and sends nothing after its last window.
    #[test]
    fn a_flow_with_a_size_stops_once_it_is_delivered() {
        let links = vec![
            wired("link", Some("const:2mbps"), 20),
            wired("back", None, 20),
        ];
        let mut f = flow("newreno", &[0], &[1]);
        f.spec.bytes = Some(40_000);
        let log = simulate_network(&network(links, vec![f], 10), None).unwrap();
        let delivered: u64 = (log.packets.iter())
            .filter(|p| p.delivered.is_some())
            .map(|p| p.header.size.bytes())
            .sum();
        let last_sent = log.packets.iter().map(|p| p.sent()).max().unwrap();
        assert!((40_000..41_500).contains(&delivered), "{delivered}");
        assert!(
            last_sent < Instant::ZERO + Duration::from_secs(1),
            "{last_sent:?}"
        );
    }

    /// A paused flow sends nothing in its pause and resumes after it: a 1 Mbit/s cbr flow
    /// paused over 2–4 s of 6 s sends its rate before and after, no packet in between, and
    /// its first packet after the pause leaves at the resume.
    #[test]
    fn a_paused_cbr_flow_sends_nothing_in_its_pause_and_resumes_after() {
        let links = vec![
            wired("link", Some("const:4mbps"), 20),
            wired("back", None, 20),
        ];
        let mut f = flow("cbr:rate-kbps=1000", &[0], &[1]);
        f.spec.pauses = vec![(Duration::from_secs(2), Duration::from_secs(4))];
        let log = simulate_network(&network(links, vec![f], 6), None).unwrap();
        let s = |t: f64| Instant::ZERO + Duration::from_secs_f64(t);
        let sent_in = |a: f64, b: f64| {
            (log.packets.iter())
                .filter(|p| p.sent() >= s(a) && p.sent() < s(b))
                .map(|p| p.header.size.bytes())
                .sum::<u64>() as f64
                * 8.0
                / (b - a)
                / 1e3
        };
        assert_eq!(sent_in(2.0, 4.0), 0.0);
        for (a, b) in [(0.0, 2.0), (4.0, 6.0)] {
            let kbps = sent_in(a, b);
            assert!((950.0..1050.0).contains(&kbps), "{a}–{b} s: {kbps} kbit/s");
        }
        let resumed = (log.packets.iter().map(|p| p.sent()))
            .filter(|&t| t >= s(2.0))
            .min()
            .unwrap();
        assert!(resumed < s(4.02), "{resumed:?}");
    }

    #[test]
    fn delays_add_up_along_a_path() {
        // 10 ms pipe, then a 12 Mbit/s link behind 5 ms: 1500 bytes take 1 ms to serialise.
        let links = vec![
            wired("a", None, 10),
            wired("b", Some("const:12mbps"), 5),
            wired("back", None, 7),
        ];
        let log = simulate_network(
            &network(links, vec![flow("cbr:rate-kbps=1200", &[0, 1], &[2])], 2),
            None,
        )
        .unwrap();
        let owd: Vec<Duration> = log
            .packets
            .iter()
            .filter_map(|p| Some(p.delivered? - p.sent()))
            .collect();
        assert!(!owd.is_empty());
        for d in owd {
            assert_eq!(d, Duration::from_millis(16), "{d:?}");
        }
        // Enqueued at the first queue: after both delays.
        let p = &log.packets[0];
        assert_eq!(p.enqueued.unwrap() - p.sent(), Duration::from_millis(15));
    }

    #[test]
    fn flows_crossing_one_link_share_its_capacity() {
        // Two 8 Mbit/s CBR flows from two hosts through one 10 Mbit/s link: together they get the
        // link's rate, each about half.
        let links = vec![
            wired("h1", None, 5),
            wired("h2", None, 5),
            wired("core", Some("const:10mbps"), 5),
            wired("back", None, 10),
        ];
        let flows = vec![
            flow("cbr:rate-kbps=8000", &[0, 2], &[3]),
            flow("cbr:rate-kbps=8000", &[1, 2], &[3]),
        ];
        let log = simulate_network(&network(links, flows, 10), None).unwrap();
        let (a, b) = (delivered_kbps(&log, 0, 10), delivered_kbps(&log, 1, 10));
        assert!((a + b - 10_000.0).abs() < 200.0, "{a} + {b}");
        assert!((a - b).abs() < 200.0, "{a} vs {b}");
    }

    #[test]
    fn feedback_shares_a_link_with_another_flows_data() {
        // Flow 1's feedback crosses the link flow 0 saturates: a CBR at 12 Mbit/s on 10 Mbit/s
        // queues without bound, so flow 1 (cubic) sees its ACKs delayed by that queue and gets
        // far less than over a free reverse path.
        let run = |shared: bool| {
            let links = vec![
                wired("ab", Some("const:10mbps"), 5),
                wired("ba", Some("const:10mbps"), 5),
                wired("ba2", Some("const:10mbps"), 5),
            ];
            let fb = if shared { 0 } else { 2 };
            let flows = vec![
                flow("cbr:rate-kbps=12000", &[0], &[1]),
                flow("cubic", &[1], &[fb]),
            ];
            let log = simulate_network(&network(links, flows, 10), None).unwrap();
            delivered_kbps(&log, 1, 10)
        };
        let (free, shared) = (run(false), run(true));
        assert!(free > 8_000.0, "{free}");
        assert!(shared < free / 2.0, "{shared} vs {free}");
    }

    #[test]
    fn a_path_naming_a_missing_link_is_an_error() {
        let links = vec![wired("a", None, 1)];
        let e = Simulation::of_network(&network(links, vec![flow("cbr", &[0], &[3])], 1));
        assert!(matches!(e, Err(SimError::Path(0, _))), "{e:?}");
    }
}

#[cfg(test)]
mod wifi_tests {
    use super::*;
    use crate::wifi::link::{AP, STATION};

    /// CBR at `kbps` from the AP to station 1 of `spec` (feedback back over the medium), `secs`
    /// long: the log.
    fn over_wifi(spec: &str, scheme: &str, secs: u64, seed: u64) -> RunLog {
        let net = Network {
            links: vec![WiredLink {
                label: "wan".into(),
                model: None,
                queue: QueueSpec::Infinite,
                delay: Duration::from_millis(5),
                loss: LossSpec::None,
            }],
            media: vec![WifiMedium {
                label: "wlan".into(),
                spec: spec.parse().unwrap(),
                extra_stations: 0,
            }],
            flows: vec![RoutedFlow {
                spec: FlowSpec::new(scheme.parse().unwrap()),
                dscp: 0,
                data: vec![
                    Hop::Link(0),
                    Hop::Wifi {
                        medium: 0,
                        from: AP,
                        to: STATION,
                    },
                ],
                feedback: vec![
                    Hop::Wifi {
                        medium: 0,
                        from: STATION,
                        to: AP,
                    },
                    Hop::Link(0),
                ],
                reference: None,
                pingpair: None,
            }],
            run: RunSettings {
                seed,
                ..RunSettings::new(Duration::from_secs(secs))
            },
        };
        simulate_network(&net, None).unwrap()
    }

    fn mbps(log: &RunLog, secs: u64) -> f64 {
        let b: u64 = log
            .packets
            .iter()
            .filter(|p| p.delivered.is_some())
            .map(|p| p.header.size.bytes())
            .sum();
        b as f64 * 8.0 / secs as f64 / 1e6
    }

    #[test]
    fn an_idle_medium_carries_a_cbr_flow_with_its_airtime() {
        let log = over_wifi("std=11g,rate=54mbps", "cbr:rate-kbps=4000", 5, 1);
        let r = mbps(&log, 5);
        assert!((r - 4.0).abs() < 0.05, "{r}");
        // 5 ms of wire, then DIFS + backoff + a 1500-byte PPDU at 54 Mbit/s (~250 µs) at least.
        for p in log.packets.iter().filter(|p| p.delivered.is_some()) {
            let d = p.delivered.unwrap() - p.sent();
            assert!(d > Duration::from_micros(5_250), "{d:?}");
            assert!(d < Duration::from_millis(7), "{d:?}");
        }
    }

    #[test]
    fn saturation_is_the_media_and_contenders_take_a_share() {
        // CUBIC alone gets most of 11g's ~30 Mbit/s; with 4 saturated contenders about a fifth.
        let alone = mbps(&over_wifi("std=11g,rate=54mbps", "cubic", 10, 1), 10);
        let shared = mbps(
            &over_wifi(
                "std=11g,rate=54mbps,stations=4,load=saturated",
                "cubic",
                10,
                1,
            ),
            10,
        );
        assert!(alone > 20.0 && alone < 31.0, "{alone}");
        assert!(shared < alone / 2.5, "{shared} vs {alone}");
    }

    #[test]
    fn wifi_runs_are_deterministic_by_seed() {
        let spec = "std=11g,rate=54mbps,stations=4,load=tcp";
        let a = over_wifi(spec, "gcc-remb", 10, 1);
        let b = over_wifi(spec, "gcc-remb", 10, 1);
        let c = over_wifi(spec, "gcc-remb", 10, 2);
        assert_eq!(a.packets, b.packets);
        assert_ne!(a.packets, c.packets);
    }
}

#[cfg(test)]
mod network_properties {
    use super::*;
    use crate::link::LinkSpec;
    use crate::wifi::link::{AP, STATION};
    use proptest::prelude::*;

    /// A random network: `links` wired links (pipes or constant rates, delays, drop-tail or
    /// infinite queues), one Wi-Fi medium with two stations, and CBR or CUBIC flows with random
    /// paths of 1 to 3 hops each way (a data path of pipes alone gets a Wi-Fi hop).
    fn arb_network() -> impl Strategy<Value = Network> {
        let link = (0u8..3, 1u64..30, 0u64..20, any::<bool>());
        let hop = (0u16..5, any::<bool>());
        let flow = (
            any::<bool>(),
            100u64..6000,
            proptest::collection::vec(hop.clone(), 1..4),
            proptest::collection::vec(hop, 1..4),
            0u8..64,
            0u64..3,
        );
        (
            proptest::collection::vec(link, 1..5),
            proptest::collection::vec(flow, 1..4),
            any::<u64>(),
        )
            .prop_map(|(links, flows, seed)| {
                let n = links.len() as u16;
                let links: Vec<WiredLink> = links
                    .into_iter()
                    .enumerate()
                    .map(|(i, (kind, mbps, delay, tail))| WiredLink {
                        label: format!("l{i}"),
                        model: (kind > 0).then(|| {
                            format!("const:{mbps}mbps")
                                .parse::<LinkSpec>()
                                .unwrap()
                                .load()
                                .unwrap()
                        }),
                        queue: if tail {
                            "droptail:packets=50".parse().unwrap()
                        } else {
                            QueueSpec::Infinite
                        },
                        delay: Duration::from_millis(delay),
                        loss: LossSpec::None,
                    })
                    .collect();
                // Hop k < n is wired link k; the others cross the medium (AP <-> a station).
                let to_hop = |(k, up): (u16, bool), i: usize| {
                    if k < n {
                        Hop::Link(k)
                    } else {
                        let st = if i % 2 == 0 { STATION } else { 2 };
                        let (from, to) = if up { (st, AP) } else { (AP, st) };
                        Hop::Wifi {
                            medium: 0,
                            from,
                            to,
                        }
                    }
                };
                let bottleneck = |h: &Hop| match *h {
                    Hop::Link(l) => links[l as usize].model.is_some(),
                    Hop::Wifi { .. } => true,
                };
                let flows = flows
                    .into_iter()
                    .map(|(tcp, kbps, data, fb, dscp, start)| {
                        let mut data: Vec<Hop> = data
                            .into_iter()
                            .enumerate()
                            .map(|(i, h)| to_hop(h, i))
                            .collect();
                        // A path of pipes alone has no capacity: TCP's window would grow
                        // without bound (scenario files reject such a path).
                        if !data.iter().any(bottleneck) {
                            data.push(to_hop((n, false), 0));
                        }
                        (tcp, kbps, data, fb, dscp, start)
                    })
                    .map(|(tcp, kbps, data, fb, dscp, start)| RoutedFlow {
                        spec: FlowSpec {
                            scheme: if tcp {
                                "cubic".parse().unwrap()
                            } else {
                                format!("cbr:rate-kbps={kbps}").parse().unwrap()
                            },
                            start: Duration::from_secs(start),
                            stop: None,
                            bytes: None,
                            pauses: vec![],
                        },
                        dscp,
                        data,
                        feedback: fb
                            .into_iter()
                            .enumerate()
                            .map(|(i, h)| to_hop(h, i))
                            .collect(),
                        reference: None,
                        pingpair: None,
                    })
                    .collect();
                Network {
                    links,
                    media: vec![WifiMedium {
                        label: "w".into(),
                        spec: "std=11a,rate=24mbps,stations=1,load=udp:2mbps"
                            .parse()
                            .unwrap(),
                        extra_stations: 0,
                    }],
                    flows,
                    run: RunSettings {
                        seed,
                        ..RunSettings::new(Duration::from_secs(3))
                    },
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Any network whose data paths have a bottleneck runs to its end, deterministically; every delivered packet took at
        /// least the sum of its path's delays, left after it was sent and before the end, and
        /// was neither also dropped nor delivered without reaching a queue or the medium.
        #[test]
        fn networks_run_deterministically_and_respect_their_paths(net in arb_network()) {
            let a = simulate_network(&net, None).unwrap();
            let b = simulate_network(&net, None).unwrap();
            prop_assert_eq!(&a.packets, &b.packets);
            prop_assert_eq!(a.feedback_dropped, b.feedback_dropped);
            for p in &a.packets {
                let f = &net.flows[p.flow as usize];
                let floor: Duration = f
                    .data
                    .iter()
                    .map(|h| match *h {
                        Hop::Link(l) => net.links[l as usize].delay,
                        Hop::Wifi { .. } => Duration::ZERO,
                    })
                    .fold(Duration::ZERO, |a, b| a + b);
                if let Some(d) = p.delivered {
                    prop_assert!(p.dropped.is_none());
                    prop_assert!(d - p.sent() >= floor, "{:?} < {:?}", d - p.sent(), floor);
                    prop_assert!(d < net.run.end());
                    prop_assert!(p.enqueued.is_some() || f.data.iter().all(|h| matches!(h, Hop::Link(l) if net.links[*l as usize].model.is_none())));
                }
            }
        }
    }
}
