//! The discrete-event engine.
//!
//! Events sit in one heap ordered by `(time, seq)`, where `seq` is the order in which they were
//! scheduled: two events at the same instant run in the order they were created, so a run is a
//! pure function of the [`Scenario`] (including its seed).
//!
//! The path of a data packet: the flow driver emits it → loss at the link entrance → the
//! one-way propagation delay → the bottleneck queue → the link's server → the receiver (at the
//! instant of delivery). A link may discard a packet that waited too long in the queue, and may
//! deliver a packet after its server is done with it, or lose it (the mobile profiles' radio,
//! [`crate::mobile`]). Feedback goes back the same way over the reverse path: the reverse link
//! (a paired trace) after the same delay, or the delay alone.

use crate::link::{LinkModel, Server};
use crate::log::{DropReason, PacketRecord, RunLog, SENDER_SAMPLE_INTERVAL, SenderSample};
use crate::loss::{LossModel, LossSpec};
use crate::queue::{Queue, QueueSpec, Queued};
use crate::seed;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use wisp_core::controller::{WireReceiver, WireSender};
use wisp_core::flow::FlowSender;
use wisp_core::packet::{DEFAULT_MTU, IP_UDP_OVERHEAD};
use wisp_core::scheme::{AnyReceiver, AnySender, BuildError, SchemeConfig, SchemeContext};
use wisp_core::tables::Tables;
use wisp_core::wire::Feedback;
use wisp_core::{DataSize, Duration, Instant};

/// One flow of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub scheme: SchemeConfig,
    /// When it starts sending.
    pub start: Duration,
    /// When it stops sending (`None`: at the end of the run).
    pub stop: Option<Duration>,
}

impl FlowSpec {
    pub fn new(scheme: SchemeConfig) -> Self {
        FlowSpec {
            scheme,
            start: Duration::ZERO,
            stop: None,
        }
    }
}

/// Everything that determines a run.
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
    /// Where the flows' schemes keep their precomputed tables (Sprout's model). A new scenario
    /// has a store of its own; give several scenarios one store (a clone) to compute once.
    pub tables: Tables,
}

impl Scenario {
    /// One flow of `scheme` over `forward` with the defaults: 20 ms each way (as Cellsim),
    /// infinite queues, no loss, one period of the link, no warm-up, the default seed.
    pub fn new(forward: LinkModel, scheme: SchemeConfig) -> Self {
        let duration = forward.default_duration();
        Scenario {
            forward,
            reverse: None,
            delay: Duration::from_millis(20),
            queue: QueueSpec::Infinite,
            reverse_queue: QueueSpec::Infinite,
            loss: LossSpec::None,
            reverse_loss: LossSpec::None,
            flows: vec![FlowSpec::new(scheme)],
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Fwd,
    Rev,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    FlowStart(u16),
    SenderWake(u16),
    ReceiverWake(u16),
    /// A packet (data: record index; feedback: slab index) reaches a bottleneck queue.
    Arrive(Dir, u32),
    /// The server may start on the head of the queue.
    Start(Dir),
    /// The server finished a packet.
    Complete(Dir, u32),
    /// A packet the server finished earlier reaches its receiver (a link whose delivery lags its
    /// server).
    Deliver(Dir, u32),
    /// A feedback message reaches its sender over a delay-only reverse path.
    FeedbackDeliver(u32),
}

#[derive(Debug)]
struct Scheduled {
    at: Instant,
    seq: u64,
    ev: Ev,
}
impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Debug)]
struct Link {
    queue: Queue,
    server: Server,
    /// A `Start` or `Complete` event is pending.
    busy: bool,
    /// When the packet in service reaches its receiver (`None`: the link loses it).
    in_service: Option<Instant>,
}

impl Link {
    fn new(model: &LinkModel, queue: QueueSpec, seed: u64) -> Self {
        Link {
            queue: Queue::new(queue),
            server: model.server_seeded(seed),
            busy: false,
            in_service: None,
        }
    }
}

#[derive(Debug)]
struct Flow {
    sender: FlowSender<AnySender>,
    receiver: AnyReceiver,
    active: bool,
    stop: Instant,
    sender_wake: Option<Instant>,
    receiver_wake: Option<Instant>,
    /// The oracle (`ideal`) sends at the link's own instants: no timer jitter.
    exact_timers: bool,
    /// When the sender is next sampled.
    next_sample: Instant,
}

/// Progress reports: called with the fraction of simulated time done.
pub type Progress<'a> = &'a mut dyn FnMut(f64);

/// A running simulation.
#[derive(Debug)]
pub struct Simulation {
    heap: BinaryHeap<Scheduled>,
    seq: u64,
    now: Instant,
    end: Instant,
    delay: Duration,
    fwd: Link,
    rev: Option<Link>,
    loss: LossModel,
    loss_rng: ChaCha8Rng,
    reverse_loss: LossModel,
    reverse_loss_rng: ChaCha8Rng,
    aqm_rng: ChaCha8Rng,
    timer_jitter: Duration,
    timer_rng: ChaCha8Rng,
    flows: Vec<Flow>,
    log: RunLog,
    /// In-flight feedback messages (slab with a free list).
    feedback: Vec<Option<(u16, Feedback)>>,
    free_feedback: Vec<u32>,
    drops: Vec<u32>,
}

impl Simulation {
    /// Builds the flows and links of `scenario`.
    pub fn new(scenario: &Scenario) -> Result<Self, SimError> {
        if scenario.duration.is_zero() {
            return Err(SimError::ZeroDuration);
        }
        if scenario.warmup >= scenario.duration {
            return Err(SimError::WarmupTooLong {
                warmup: scenario.warmup,
                duration: scenario.duration,
            });
        }
        if scenario.flows.is_empty() {
            return Err(SimError::NoFlows);
        }
        if scenario.flows.len() > u16::MAX as usize {
            return Err(SimError::TooManyFlows);
        }
        let end = scenario.end();
        let mut flows = Vec::with_capacity(scenario.flows.len());
        for (i, spec) in scenario.flows.iter().enumerate() {
            let start = Instant::ZERO + spec.start;
            let ideal = scenario
                .forward
                .ideal_deliveries(scenario.delay, scenario.mtu)
                .map(|p| (p.sent, p.size))
                .skip_while(move |&(t, _)| t < start);
            let ctx = SchemeContext {
                mtu: scenario.mtu,
                ideal_schedule: Some(Box::new(ideal)),
                rng: Some(seed::stream(scenario.seed, &format!("flow/{i}/media"))),
                tables: scenario.tables.clone(),
            };
            let (sender, receiver) = spec.scheme.build(ctx).map_err(|e| SimError::Build(i, e))?;
            flows.push(Flow {
                sender,
                receiver,
                active: false,
                stop: spec.stop.map_or(Instant::MAX, |d| Instant::ZERO + d),
                sender_wake: None,
                receiver_wake: None,
                exact_timers: matches!(spec.scheme, SchemeConfig::Ideal(_)),
                next_sample: Instant::ZERO,
            });
        }
        let mut sim = Simulation {
            heap: BinaryHeap::new(),
            seq: 0,
            now: Instant::ZERO,
            end,
            delay: scenario.delay,
            fwd: Link::new(
                &scenario.forward,
                scenario.queue,
                seed::mix(scenario.seed, "link/forward"),
            ),
            rev: scenario.reverse.as_ref().map(|m| {
                Link::new(
                    m,
                    scenario.reverse_queue,
                    seed::mix(scenario.seed, "link/reverse"),
                )
            }),
            loss: LossModel::new(scenario.loss),
            loss_rng: seed::stream(scenario.seed, "loss/forward"),
            reverse_loss: LossModel::new(scenario.reverse_loss),
            reverse_loss_rng: seed::stream(scenario.seed, "loss/reverse"),
            aqm_rng: seed::stream(scenario.seed, "aqm"),
            timer_jitter: scenario.timer_jitter,
            timer_rng: seed::stream(scenario.seed, "timers"),
            flows,
            log: RunLog::default(),
            feedback: Vec::new(),
            free_feedback: Vec::new(),
            drops: Vec::new(),
        };
        for (i, spec) in scenario.flows.iter().enumerate() {
            sim.schedule(Instant::ZERO + spec.start, Ev::FlowStart(i as u16));
        }
        Ok(sim)
    }

    fn schedule(&mut self, at: Instant, ev: Ev) {
        self.heap.push(Scheduled {
            at,
            seq: self.seq,
            ev,
        });
        self.seq += 1;
    }

    /// Runs to the end and returns the log.
    pub fn run(mut self, progress: Option<Progress<'_>>) -> RunLog {
        let mut progress = progress;
        let mut events: u64 = 0;
        while let Some(top) = self.heap.peek() {
            if top.at >= self.end {
                break;
            }
            let Scheduled { at, ev, .. } = self.heap.pop().expect("peeked");
            debug_assert!(at >= self.now, "time went backwards");
            self.now = at;
            self.handle(ev);
            events += 1;
            if events & 0xFFFF == 0 {
                if let Some(p) = progress.as_mut() {
                    p(self.now.as_secs_f64() / self.end.as_secs_f64());
                }
            }
        }
        self.log.events = events;
        self.log
    }

    fn handle(&mut self, ev: Ev) {
        let now = self.now;
        match ev {
            Ev::FlowStart(f) => {
                self.flows[f as usize].active = true;
                self.run_sender(f);
            }
            Ev::SenderWake(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.sender_wake == Some(now) {
                    flow.sender_wake = None;
                    self.run_sender(f);
                }
            }
            Ev::ReceiverWake(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.receiver_wake == Some(now) {
                    flow.receiver_wake = None;
                    flow.receiver.on_timeout(now);
                    self.run_receiver(f);
                }
            }
            Ev::Arrive(dir, id) => self.arrive(dir, id),
            Ev::Start(dir) => self.start(dir),
            Ev::Complete(dir, id) => self.complete(dir, id),
            Ev::Deliver(dir, id) => self.deliver(dir, id),
            Ev::FeedbackDeliver(id) => self.deliver_feedback(id),
        }
    }

    /// Lets flow `f` send what it may now, then schedules its next wake-up.
    fn run_sender(&mut self, f: u16) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if !flow.active {
            return;
        }
        if now >= flow.stop {
            flow.active = false;
            return;
        }
        while let Some(header) = self.flows[f as usize].sender.poll_transmit(now) {
            let id = self.log.packets.len() as u32;
            self.log.packets.push(PacketRecord::new(f, header));
            if self.loss.lose(&mut self.loss_rng) {
                self.log.packets[id as usize].drop(now, DropReason::Loss);
            } else {
                self.schedule(now + self.delay, Ev::Arrive(Dir::Fwd, id));
            }
        }
        let flow = &mut self.flows[f as usize];
        if now >= flow.next_sample {
            flow.next_sample = now + SENDER_SAMPLE_INTERVAL;
            let sender = flow.sender.sender();
            let stats = sender.stats();
            self.log.sender_samples.push(SenderSample {
                flow: f,
                at: now,
                target_rate: stats.target_rate,
                window: stats.window,
                delay_target: sender.delay_target(),
            });
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
    fn run_receiver(&mut self, f: u16) {
        let now = self.now;
        while let Some(fb) = self.flows[f as usize].receiver.poll_feedback(now) {
            let size = (fb.len() as u32) + IP_UDP_OVERHEAD.bytes() as u32;
            self.log.feedback_packets += 1;
            self.log.feedback_bytes += u64::from(size);
            if self.reverse_loss.lose(&mut self.reverse_loss_rng) {
                self.log.feedback_dropped += 1;
                continue;
            }
            let id = match self.free_feedback.pop() {
                Some(id) => {
                    self.feedback[id as usize] = Some((f, fb));
                    id
                }
                None => {
                    self.feedback.push(Some((f, fb)));
                    (self.feedback.len() - 1) as u32
                }
            };
            let at = now + self.delay;
            if self.rev.is_some() {
                self.schedule(at, Ev::Arrive(Dir::Rev, id));
            } else {
                self.schedule(at, Ev::FeedbackDeliver(id));
            }
        }
        let flow = &mut self.flows[f as usize];
        if let Some(t) = flow.receiver.poll_timeout() {
            let t = t.max(now + Duration::from_nanos(1));
            if flow.receiver_wake.is_none_or(|w| t < w) {
                flow.receiver_wake = Some(t);
                self.schedule(t, Ev::ReceiverWake(f));
            }
        }
    }

    fn link(&mut self, dir: Dir) -> &mut Link {
        match dir {
            Dir::Fwd => &mut self.fwd,
            Dir::Rev => self.rev.as_mut().expect("a reverse link"),
        }
    }

    fn size_of(&self, dir: Dir, id: u32) -> u32 {
        match dir {
            Dir::Fwd => self.log.packets[id as usize].header.size.bytes() as u32,
            Dir::Rev => {
                let (_, fb) = self.feedback[id as usize].as_ref().expect("live feedback");
                fb.len() as u32 + IP_UDP_OVERHEAD.bytes() as u32
            }
        }
    }

    fn arrive(&mut self, dir: Dir, id: u32) {
        let now = self.now;
        let size = self.size_of(dir, id);
        if dir == Dir::Fwd {
            self.log.packets[id as usize].enqueued = Some(now);
        }
        let mut drops = std::mem::take(&mut self.drops);
        let rng = &mut self.aqm_rng;
        let link = match dir {
            Dir::Fwd => &mut self.fwd,
            Dir::Rev => self.rev.as_mut().expect("a reverse link"),
        };
        link.queue.enqueue(
            now,
            Queued {
                id,
                size,
                enqueued: now,
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
        self.record_drops(dir, &mut drops, DropReason::Queue);
        self.drops = drops;
        if let Some(t) = start {
            self.schedule(t, Ev::Start(dir));
        }
    }

    fn start(&mut self, dir: Dir) {
        let now = self.now;
        let mut drops = std::mem::take(&mut self.drops);
        let mut discarded = vec![];
        let link = self.link(dir);
        let limit = link.server.discard_after(now);
        let head = loop {
            match link.queue.dequeue(now, &mut drops) {
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
                Some((q.id, s.done))
            }
        };
        self.record_drops(dir, &mut drops, DropReason::Aqm);
        self.record_drops(dir, &mut discarded, DropReason::Discard);
        self.drops = drops;
        if let Some((id, at)) = done {
            if at != Instant::MAX {
                self.schedule(at, Ev::Complete(dir, id));
            }
        }
    }

    fn complete(&mut self, dir: Dir, id: u32) {
        let now = self.now;
        match self.link(dir).in_service.take() {
            Some(at) if at <= now => self.deliver(dir, id),
            Some(at) => self.schedule(at, Ev::Deliver(dir, id)),
            None => self.record_drops(dir, &mut vec![id], DropReason::Link),
        }
        let link = self.link(dir);
        if link.queue.is_empty() {
            link.busy = false;
            return;
        }
        match link.server.next_start(now) {
            Some(t) if t == now => self.start(dir),
            Some(t) => self.schedule(t, Ev::Start(dir)),
            None => {}
        }
    }

    /// Packet `id` reaches its receiver now.
    fn deliver(&mut self, dir: Dir, id: u32) {
        let now = self.now;
        match dir {
            Dir::Fwd => {
                let rec = &mut self.log.packets[id as usize];
                rec.delivered = Some(now);
                let f = rec.flow;
                let header = rec.header;
                // Both halves are the same scheme: its fields always decode here.
                let decoded = self.flows[f as usize]
                    .receiver
                    .on_packet_received(now, &header);
                debug_assert!(decoded.is_ok(), "{decoded:?}");
                self.run_receiver(f);
            }
            Dir::Rev => self.deliver_feedback(id),
        }
    }

    fn deliver_feedback(&mut self, id: u32) {
        let (f, fb) = self.feedback[id as usize].take().expect("live feedback");
        self.free_feedback.push(id);
        let now = self.now;
        let decoded = self.flows[f as usize].sender.on_feedback(now, &fb);
        debug_assert!(decoded.is_ok(), "{decoded:?}");
        self.run_sender(f);
    }

    fn record_drops(&mut self, dir: Dir, drops: &mut Vec<u32>, reason: DropReason) {
        for id in drops.drain(..) {
            match dir {
                Dir::Fwd => self.log.packets[id as usize].drop(self.now, reason),
                Dir::Rev => {
                    self.feedback[id as usize] = None;
                    self.free_feedback.push(id);
                    self.log.feedback_dropped += 1;
                }
            }
        }
    }
}

/// Runs `scenario` to the end.
pub fn simulate(scenario: &Scenario, progress: Option<Progress<'_>>) -> Result<RunLog, SimError> {
    Ok(Simulation::new(scenario)?.run(progress))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::LinkSpec;
    use crate::log::DropReason;

    fn scenario(link: &str, scheme: &str, secs: u64) -> Scenario {
        let l = link.parse::<LinkSpec>().unwrap().load().unwrap();
        let mut s = Scenario::new(l, scheme.parse().unwrap());
        s.duration = Duration::from_secs(secs);
        s
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
        s.seed = 2;
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
        s.timer_jitter = Duration::from_micros(100);
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
        s.seed = 2;
        assert_ne!(simulate(&s, None).unwrap().packets, late.packets);
        // The oracle is never late.
        let mut o = scenario("const:12mbps", "ideal", 2);
        let exact = simulate(&o, None).unwrap();
        o.timer_jitter = Duration::from_micros(100);
        assert_eq!(simulate(&o, None).unwrap().packets, exact.packets);
    }
}
