//! The client's end of a Saturator session (Sprout paper §5.1.1), sans-IO: the handshake and
//! the clocks' offset, the uplink's sender and the downlink's receiver, the warm-up and the
//! recording window, the keepalive, and the end (`Stop`, the `Fetch` of the uplink's arrivals,
//! `Bye`). [`ClientSession`] takes datagrams and the time; it hands out packets to send, the
//! next deadline, progress events and, at the end, the [`ClientReport`].

use super::wire::{Dir, Message, Packet, Path, check_packet_bytes, padding};
use super::{
    Arrivals, BLOCKED_RETRY, PacketErrors, Transmit, Window, WindowConfig, clock_offset,
    data_message, is_data, ms_counts, on_ack_fields,
};
use crate::stats::quantiles;
use crate::{Duration, Instant};
use std::collections::{BTreeMap, VecDeque};

/// Answered data-path `Hello`s the clocks' offset is estimated from.
const HANDSHAKE_SAMPLES: usize = 5;
/// How long the handshake may take.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(5);
/// `Hello` rounds: until the first answer, then while sampling.
const HELLO_FIRST: Duration = Duration::from_millis(100);
const HELLO_NEXT: Duration = Duration::from_millis(20);
/// `Start`: until the downlink flows, then as the keepalive.
const START_UNTIL_FLOWING: Duration = Duration::from_millis(200);
const KEEPALIVE: Duration = Duration::from_secs(1);
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// `Stop` and `Fetch` are repeated until answered, for this long at most.
const END_RETRY: Duration = Duration::from_millis(250);
const END_LIMIT: Duration = Duration::from_secs(30);
/// Goodbyes at the end (datagrams may be lost).
const BYES: usize = 3;
/// Each trace line stands for a full 1500-byte packet (Mahimahi's credit).
const LINE_BYTES: f64 = 1500.0;

/// What is recorded: the directions, the window and the packets. `wisp saturate client`'s
/// options carry it as given; a [`ClientSettings`] adds the session's identity.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordingSettings {
    pub up: bool,
    pub down: bool,
    /// How long the recording lasts, after the warm-up.
    pub duration: Duration,
    pub warmup: Duration,
    /// UDP payload bytes of each packet (the IP packet less its IP and UDP headers).
    pub packet_bytes: usize,
    pub window: WindowConfig,
    /// Trace timestamps count from this instant (default: the recording's start).
    pub epoch: Option<Instant>,
}

impl RecordingSettings {
    /// Checks the window, the packet size and that there is a direction to saturate.
    pub fn validate(&self) -> Result<(), String> {
        self.window.validate()?;
        check_packet_bytes(self.packet_bytes).map_err(|e| format!("packet size: {e}"))?;
        if !self.up && !self.down {
            return Err("no direction to saturate".into());
        }
        Ok(())
    }
}

/// One recording's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientSettings {
    /// The session's id (chosen at random by the caller).
    pub session: u32,
    /// This host's boot id hash (0 if unknown: then the clocks are never assumed shared).
    pub boot: u64,
    pub recording: RecordingSettings,
    /// The feedback path as given (`HOST:PORT` or `unix:PATH`), if there is one: then
    /// acknowledgements, the keepalive and the end's messages go over it, else over the data
    /// path.
    pub feedback: Option<String>,
}

/// What a [`ClientSession`] reports as it goes.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    /// The handshake is done; saturation starts. The offset is `server − client` (0 when the
    /// two ends share a clock).
    Connected {
        handshake_rtt: Duration,
        same_clock: bool,
        clock_offset_ns: i64,
    },
    /// Once a second while saturating.
    Progress(Progress),
}

/// A second of saturation.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Since saturation started.
    pub elapsed: Duration,
    /// Since the previous progress (the span of the counts below).
    pub interval: Duration,
    /// Before the recording window.
    pub warming_up: bool,
    pub up: Option<UpProgress>,
    /// Downlink packets received over the interval (when the downlink is recorded).
    pub down_received: Option<u64>,
}

/// The uplink sender's state.
#[derive(Clone, Debug, PartialEq)]
pub struct UpProgress {
    pub window: u32,
    pub in_flight: u64,
    pub rtt: Option<Duration>,
    /// Packets sent over the interval.
    pub sent: u64,
}

/// Why a session failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClientFailure {
    #[error("no answer from the server within 5 s")]
    NoAnswer,
    #[error("no answer over the feedback path within 5 s")]
    NoFeedbackAnswer,
    #[error("the server: {0}")]
    Server(String),
    #[error("no usable handshake")]
    NoUsableHandshake,
    #[error("the server did not answer within 30 s after the recording")]
    NoReport,
    #[error("the uplink report is incomplete: {recorded} of {announced} packets")]
    IncompleteReport { recorded: u64, announced: u64 },
}

/// One recorded direction.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DirectionRecord {
    /// `(ms since the epoch, packets)` in increasing ms.
    #[serde(skip)]
    pub counts: Vec<(u64, u32)>,
    /// Packets recorded (trace lines).
    pub packets: u64,
    /// Their rate, crediting 1500 bytes per line, over the recording window.
    pub mean_mbps: f64,
    /// Packets the sender sent, over the whole session.
    pub sent: u64,
    /// The sender's window at the end, and its median and 95th-percentile RTT over the
    /// recording, ms.
    pub window_end: u32,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
    /// Share of the recording's acknowledgements whose RTT was below the low threshold.
    pub rtt_below_low: Option<f64>,
    /// Sends the socket refused (full buffer).
    pub send_failed: u64,
}

/// What a client run measured.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ClientReport {
    /// The trace's time zero (the client's clock, ns), and the recording's window in ms since
    /// it.
    pub epoch_ns: u64,
    pub from_ms: f64,
    pub to_ms: f64,
    /// Whether both ends share one clock (same boot id); else the estimated offset
    /// (server − client) and the RTT of the handshake it came from.
    pub same_clock: bool,
    pub clock_offset_ns: i64,
    pub handshake_rtt_ms: f64,
    pub feedback: Option<String>,
    pub up: Option<DirectionRecord>,
    pub down: Option<DirectionRecord>,
    pub errors: PacketErrors,
}

/// The client of one recording. The caller (a driver) loops: [`ClientSession::on_timeout`],
/// sends every [`ClientSession::poll_transmit`] (reporting a refused one with
/// [`ClientSession::on_send_refused`]), takes the events, stops when
/// [`ClientSession::result`] has one, else waits for a datagram
/// ([`ClientSession::on_datagram`]) or [`ClientSession::poll_timeout`].
#[derive(Clone, Debug)]
pub struct ClientSession {
    settings: ClientSettings,
    phase: Phase,
    /// Packets to send, in order, before any acknowledgement or data.
    queue: VecDeque<(Path, Message)>,
    events: VecDeque<ClientEvent>,
    outcome: Option<Result<ClientReport, ClientFailure>>,
    errors: PacketErrors,
    /// Sends the socket refused, of every kind.
    refused: u64,
}

#[derive(Clone, Debug)]
enum Phase {
    Handshake(Handshake),
    Recording(Box<Recording>),
    /// The outcome is ready (or taken).
    Over,
}

#[derive(Clone, Debug)]
struct Handshake {
    started: Instant,
    /// `(sent, server's time, received, server's boot id hash)` of the data path's answers.
    samples: Vec<(u64, u64, u64, u64)>,
    feedback_ok: bool,
    next_hello: Instant,
}

/// The recording's instants on the client's clock, and how the server's relate to them.
#[derive(Clone, Copy, Debug)]
struct Timeline {
    start: Instant,
    from: Instant,
    to: Instant,
    epoch: Instant,
    same_clock: bool,
    /// `server − client`, ns.
    offset: i64,
    handshake_rtt: Duration,
}

impl Timeline {
    /// An instant of ours on the server's clock.
    fn on_server(&self, t: Instant) -> u64 {
        (i128::from(t.as_nanos()) + i128::from(self.offset)).clamp(0, i128::from(u64::MAX)) as u64
    }

    /// Ms from the epoch to `t` (negative before it).
    fn ms_since_epoch(&self, t: Instant) -> f64 {
        (i128::from(t.as_nanos()) - i128::from(self.epoch.as_nanos())) as f64 / 1e6
    }
}

#[derive(Clone, Debug)]
struct Recording {
    time: Timeline,
    up: Option<Window>,
    down: Arrivals,
    /// Whether downlink data has arrived (or none is asked for).
    down_flowing: bool,
    ack_due: bool,
    next_start: Instant,
    /// The uplink's RTTs over the recording window, ms.
    rtts: Vec<f64>,
    next_progress: Instant,
    /// At the last progress: the instant, uplink packets sent, downlink packets received.
    last: (Instant, u64, usize),
    /// Data held back after a refused send.
    blocked_until: Option<Instant>,
    stage: Stage,
    /// The uplink's report: the chunks in, and the chunks and packets it announced.
    chunks: BTreeMap<u32, Vec<(u32, u16)>>,
    announced: Option<(u32, u64)>,
}

#[derive(Clone, Debug)]
enum Stage {
    Saturating,
    Ending(Ending),
    /// The goodbyes are queued; the report follows once they have left.
    Closing,
}

#[derive(Clone, Debug)]
struct Ending {
    started: Instant,
    next_try: Instant,
    /// Whether the server has stopped the downlink.
    stopped: bool,
}

impl ClientSession {
    /// A session whose handshake starts at `now` (the settings as
    /// [`RecordingSettings::validate`] accepts them).
    pub fn new(settings: ClientSettings, now: Instant) -> Self {
        ClientSession {
            phase: Phase::Handshake(Handshake {
                started: now,
                samples: vec![],
                feedback_ok: settings.feedback.is_none(),
                next_hello: now,
            }),
            settings,
            queue: VecDeque::new(),
            events: VecDeque::new(),
            outcome: None,
            errors: PacketErrors::default(),
            refused: 0,
        }
    }

    /// The path of acknowledgements and control messages: the feedback path if there is one.
    fn feedback_path(&self) -> Path {
        if self.settings.feedback.is_some() {
            Path::Feedback
        } else {
            Path::Data
        }
    }

    fn fail(&mut self, f: ClientFailure) {
        self.phase = Phase::Over;
        self.queue.clear();
        self.outcome = Some(Err(f));
    }

    /// The time has come (a deadline of [`ClientSession::poll_timeout`], or any turn of the
    /// driver): the handshake's rounds and limit, the end of the recording, `Start`, progress,
    /// `Stop` and `Fetch`. Data held back by a refused send may go again.
    pub fn on_timeout(&mut self, now: Instant) {
        if matches!(self.phase, Phase::Handshake(_)) && !self.handshake_turn(now) {
            return;
        }
        let fb = self.feedback_path();
        let Phase::Recording(r) = &mut self.phase else {
            return;
        };
        if let Stage::Saturating = r.stage {
            if now < r.time.to {
                r.blocked_until = None;
                r.saturating_turn(now, &self.settings, fb, &mut self.queue, &mut self.events);
                return;
            }
            r.stage = Stage::Ending(Ending {
                started: now,
                next_try: now,
                stopped: !self.settings.recording.down,
            });
        }
        self.ending_turn(now);
    }

    /// A turn of the handshake: its limit and its next round of `Hello`s. Whether it is
    /// complete (and the recording has begun).
    fn handshake_turn(&mut self, now: Instant) -> bool {
        let Phase::Handshake(h) = &mut self.phase else {
            return false;
        };
        if h.samples.len() >= HANDSHAKE_SAMPLES && h.feedback_ok {
            self.connect(now);
            return true;
        }
        if now - h.started > HANDSHAKE_LIMIT {
            let f = if h.samples.is_empty() {
                ClientFailure::NoAnswer
            } else {
                ClientFailure::NoFeedbackAnswer
            };
            self.fail(f);
        } else if now >= h.next_hello {
            h.next_hello = now
                + if h.samples.is_empty() {
                    HELLO_FIRST
                } else {
                    HELLO_NEXT
                };
            self.queue_hellos();
        }
        false
    }

    /// A turn after the recording: `Stop`, then `Fetch` for each chunk of the uplink's report,
    /// every 250 ms until answered; then the goodbyes.
    fn ending_turn(&mut self, now: Instant) {
        let fb = self.feedback_path();
        let Phase::Recording(r) = &mut self.phase else {
            return;
        };
        let want = r.want(self.settings.recording.up);
        let Stage::Ending(e) = &mut r.stage else {
            return;
        };
        let Some(want) = want else {
            r.stage = Stage::Closing;
            self.queue.extend((0..BYES).map(|_| (fb, Message::Bye)));
            return;
        };
        if now - e.started > END_LIMIT {
            self.fail(ClientFailure::NoReport);
        } else if now >= e.next_try {
            self.queue.push_back((fb, want));
            e.next_try = now + END_RETRY;
        }
    }

    /// A round of `Hello`s: the data path's, and the feedback path's until it is answered.
    fn queue_hellos(&mut self) {
        let Phase::Handshake(h) = &self.phase else {
            return;
        };
        let mut paths = vec![Path::Data];
        if !h.feedback_ok {
            paths.push(Path::Feedback);
        }
        for path in paths {
            let hello = Message::Hello {
                path,
                up: self.settings.recording.up,
                down: self.settings.recording.down,
                packet_bytes: self.settings.recording.packet_bytes as u16,
                // Stamped as it leaves.
                client_ns: 0,
                boot: self.settings.boot,
            };
            self.queue.push_back((path, hello));
        }
    }

    /// The handshake is complete at `now`: the clocks' offset, and saturation starts.
    fn connect(&mut self, now: Instant) {
        let Phase::Handshake(h) = &self.phase else {
            return;
        };
        let boot = self.settings.boot;
        let same_clock = boot != 0 && h.samples.iter().all(|s| s.3 == boot);
        let samples: Vec<(u64, u64, u64)> = h.samples.iter().map(|s| (s.0, s.1, s.2)).collect();
        let Some((estimate, handshake_rtt)) = clock_offset(&samples) else {
            self.fail(ClientFailure::NoUsableHandshake);
            return;
        };
        let offset = if same_clock { 0 } else { estimate };
        self.events.push_back(ClientEvent::Connected {
            handshake_rtt,
            same_clock,
            clock_offset_ns: offset,
        });
        let from = now + self.settings.recording.warmup;
        let time = Timeline {
            start: now,
            from,
            to: from + self.settings.recording.duration,
            epoch: self.settings.recording.epoch.unwrap_or(from),
            same_clock,
            offset,
            handshake_rtt,
        };
        self.phase = Phase::Recording(Box::new(Recording {
            time,
            up: self
                .settings
                .recording
                .up
                .then(|| Window::new(self.settings.recording.window)),
            down: Arrivals::default(),
            down_flowing: !self.settings.recording.down,
            ack_due: false,
            next_start: now,
            rtts: vec![],
            next_progress: now + PROGRESS_EVERY,
            last: (now, 0, 0),
            blocked_until: None,
            stage: Stage::Saturating,
            chunks: BTreeMap::new(),
            announced: None,
        }));
    }

    /// A datagram arrived at `at` (the kernel's stamp); `now` is the clock as it is handled.
    pub fn on_datagram(&mut self, now: Instant, at: Instant, bytes: &[u8]) {
        let p = match Packet::parse(bytes) {
            Ok(p) if p.session == self.settings.session => p,
            Ok(_) => return self.errors.foreign += 1,
            Err(_) => return self.errors.malformed += 1,
        };
        match (&mut self.phase, p.message) {
            (Phase::Over, _) => {}
            (_, Message::Error(e)) => self.fail(ClientFailure::Server(e)),
            (
                Phase::Handshake(h),
                Message::HelloAck {
                    path,
                    echo_ns,
                    server_ns,
                    boot,
                },
            ) => match path {
                Path::Data => h.samples.push((echo_ns, server_ns, at.as_nanos(), boot)),
                Path::Feedback => h.feedback_ok = true,
            },
            (Phase::Handshake(_), _) => {}
            (Phase::Recording(r), m) => r.on_message(now, at, m),
        }
    }

    /// The next packet to send now: the pending acknowledgement, then what is queued
    /// (`Hello`, `Start`, `Stop`, `Fetch`, `Bye`), then uplink data while the window allows.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        let fb = self.feedback_path();
        let session = self.settings.session;
        let transmit = |path, message| Transmit {
            path,
            to: (),
            packet: Packet { session, message },
            best_effort: false,
        };
        if let Phase::Recording(r) = &mut self.phase
            && std::mem::take(&mut r.ack_due)
            && let Some(ack) = r.down.ack(Dir::Down, now)
        {
            return Some(transmit(fb, ack));
        }
        if let Some((path, mut m)) = self.queue.pop_front() {
            if let Message::Hello { client_ns, .. } = &mut m {
                *client_ns = now.as_nanos();
            }
            return Some(transmit(path, m));
        }
        let Phase::Recording(r) = &mut self.phase else {
            return None;
        };
        if !matches!(r.stage, Stage::Saturating) || r.blocked_until.is_some() {
            return None;
        }
        let w = r.up.as_mut().filter(|w| w.can_send())?;
        let data = data_message(
            w,
            Dir::Up,
            now,
            padding(self.settings.recording.packet_bytes),
        );
        Some(transmit(Path::Data, data))
    }

    /// The socket refused `t` (a full buffer, or a peer not up yet): counted; a data packet is
    /// sent again, after the next turn (at most 1 ms).
    pub fn on_send_refused(&mut self, now: Instant, t: &Transmit) {
        self.refused += 1;
        if let Phase::Recording(r) = &mut self.phase
            && is_data(&t.packet)
            && let Some(w) = r.up.as_mut()
        {
            w.on_send_refused();
            r.blocked_until = Some(now + BLOCKED_RETRY);
        }
    }

    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// When the session next needs [`ClientSession::on_timeout`] (`None`: when it is over).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Handshake(h) => Some(h.next_hello),
            Phase::Recording(r) => match &r.stage {
                Stage::Saturating => {
                    let next = r.next_progress.min(r.time.to).min(r.next_start);
                    Some(r.blocked_until.map_or(next, |b| b.min(next)))
                }
                Stage::Ending(e) => Some(e.next_try),
                Stage::Closing => None,
            },
            Phase::Over => None,
        }
    }

    /// Datagrams that were not this session's packets, so far.
    pub fn errors(&self) -> PacketErrors {
        self.errors
    }

    /// The outcome, once (after the goodbyes have been handed out, or at a failure).
    pub fn result(&mut self) -> Option<Result<ClientReport, ClientFailure>> {
        if let Phase::Recording(r) = &mut self.phase
            && matches!(r.stage, Stage::Closing)
            && self.queue.is_empty()
        {
            let report = report_of(&self.settings, r, self.errors, self.refused);
            self.phase = Phase::Over;
            self.outcome = Some(report);
        }
        self.outcome.take()
    }
}

impl Recording {
    /// A turn while saturating, before the end: `Start` when due, progress once a second.
    fn saturating_turn(
        &mut self,
        now: Instant,
        settings: &ClientSettings,
        fb: Path,
        queue: &mut VecDeque<(Path, Message)>,
        events: &mut VecDeque<ClientEvent>,
    ) {
        // `Start` asks for the downlink (every 200 ms until it flows) and is the session's
        // keepalive (every second, over the feedback path: it reaches the server through an
        // outage of the link under test).
        if now >= self.next_start {
            let path = if self.down_flowing { fb } else { Path::Data };
            queue.push_back((path, Message::Start));
            self.next_start = now
                + if self.down_flowing {
                    KEEPALIVE
                } else {
                    START_UNTIL_FLOWING
                };
        }
        if now >= self.next_progress {
            let (at, sent, received) = self.last;
            events.push_back(ClientEvent::Progress(Progress {
                elapsed: now - self.time.start,
                interval: now - at,
                warming_up: now < self.time.from,
                up: self.up.as_ref().map(|w| UpProgress {
                    window: w.size(),
                    in_flight: w.in_flight(),
                    rtt: w.rtt(),
                    sent: w.sent() - sent,
                }),
                down_received: settings
                    .recording
                    .down
                    .then(|| (self.down.times.len() - received) as u64),
            }));
            self.last = (
                now,
                self.up.as_ref().map_or(0, Window::sent),
                self.down.times.len(),
            );
            self.next_progress = now + PROGRESS_EVERY;
        }
    }

    fn on_message(&mut self, now: Instant, at: Instant, m: Message) {
        match (&mut self.stage, m) {
            (
                Stage::Saturating,
                Message::Data {
                    dir: Dir::Down,
                    seq,
                    sent_ns,
                    ..
                },
            ) => {
                self.down.on_data(at, seq, sent_ns);
                self.down_flowing = true;
                self.ack_due = true;
            }
            (
                Stage::Saturating,
                Message::Ack {
                    dir: Dir::Up,
                    highest_seq,
                    echo_ns,
                    held_us,
                    ..
                },
            ) => {
                if let Some(w) = self.up.as_mut()
                    && let Some(rtt) = on_ack_fields(w, now, highest_seq, echo_ns, held_us)
                    && now >= self.time.from
                {
                    self.rtts.push(rtt);
                }
            }
            (Stage::Ending(e), Message::StopAck) => {
                e.stopped = true;
                e.next_try = now;
            }
            (
                Stage::Ending(e),
                Message::Report {
                    index,
                    chunks,
                    packets,
                    entries,
                },
            ) => {
                self.announced.get_or_insert((chunks.max(1), packets));
                self.chunks.entry(index).or_insert(entries);
                e.next_try = now;
            }
            _ => {}
        }
    }
}

impl Recording {
    /// What to ask at the end: `Stop` until acknowledged, then the first missing chunk of the
    /// uplink's report; `None` when everything is in.
    fn want(&self, up: bool) -> Option<Message> {
        let Stage::Ending(e) = &self.stage else {
            return None;
        };
        if !e.stopped {
            return Some(Message::Stop);
        }
        if !up {
            return None;
        }
        let chunks = self.announced.map_or(1, |t| t.0);
        let index = (0..chunks).find(|i| !self.chunks.contains_key(i))?;
        let t = &self.time;
        Some(Message::Fetch {
            index,
            epoch_ns: t.on_server(t.epoch),
            from_ns: t.on_server(t.from),
            to_ns: t.on_server(t.to),
        })
    }
}

impl DirectionRecord {
    /// The packets of `counts` and their rate over a recording of `window`; no sender figures.
    fn of(counts: Vec<(u64, u32)>, window: Duration) -> Self {
        let packets: u64 = counts.iter().map(|&(_, n)| u64::from(n)).sum();
        let window_ms = window.as_millis_f64();
        DirectionRecord {
            counts,
            packets,
            mean_mbps: packets as f64 * LINE_BYTES * 8.0 / (window_ms / 1e3) / 1e6,
            sent: 0,
            window_end: 0,
            rtt_p50_ms: None,
            rtt_p95_ms: None,
            rtt_below_low: None,
            send_failed: 0,
        }
    }

    /// The RTT figures of `rtts` (ms; sorted in place) against the low threshold `low` (ms).
    fn with_rtts(mut self, rtts: &mut [f64], low: f64) -> Self {
        self.rtt_below_low = (!rtts.is_empty())
            .then(|| rtts.iter().filter(|&&r| r < low).count() as f64 / rtts.len() as f64);
        let q = quantiles(rtts, &[0.5, 0.95]);
        (self.rtt_p50_ms, self.rtt_p95_ms) = (q[0], q[1]);
        self
    }
}

/// The session's figures once the uplink's report is in.
fn report_of(
    settings: &ClientSettings,
    r: &mut Recording,
    errors: PacketErrors,
    refused: u64,
) -> Result<ClientReport, ClientFailure> {
    let t = r.time;
    let up = r.up.as_ref().map(|w| {
        let mut counts: Vec<(u64, u32)> = vec![];
        for &(ms, n) in r.chunks.values().flatten() {
            match counts.last_mut() {
                Some((t, k)) if *t == u64::from(ms) => *k += u32::from(n),
                _ => counts.push((u64::from(ms), u32::from(n))),
            }
        }
        DirectionRecord {
            sent: w.sent(),
            window_end: w.size(),
            send_failed: refused,
            ..DirectionRecord::of(counts, settings.recording.duration)
        }
    });
    let low = settings.recording.window.low_rtt.as_millis_f64();
    let up = up.map(|u| u.with_rtts(&mut r.rtts, low));
    let down = settings.recording.down.then(|| DirectionRecord {
        sent: r.down.highest.map_or(0, |h| h.0 + 1),
        ..DirectionRecord::of(
            ms_counts(&r.down.times, t.epoch, t.from, t.to),
            settings.recording.duration,
        )
    });
    if let (Some(u), Some((_, announced))) = (&up, r.announced)
        && u.packets != announced
    {
        return Err(ClientFailure::IncompleteReport {
            recorded: u.packets,
            announced,
        });
    }
    Ok(ClientReport {
        epoch_ns: t.epoch.as_nanos(),
        from_ms: t.ms_since_epoch(t.from),
        to_ms: t.ms_since_epoch(t.to),
        same_clock: t.same_clock,
        clock_offset_ns: t.offset,
        handshake_rtt_ms: t.handshake_rtt.as_millis_f64(),
        feedback: settings.feedback.clone(),
        up,
        down,
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn settings(feedback: bool) -> ClientSettings {
        ClientSettings {
            session: 0x55,
            boot: 1,
            recording: RecordingSettings {
                up: true,
                down: false,
                duration: Duration::from_secs(1),
                warmup: Duration::ZERO,
                packet_bytes: 100,
                window: WindowConfig::default(),
                epoch: None,
            },
            feedback: feedback.then(|| "unix:/fb".to_string()),
        }
    }

    /// Answers a data-path `Hello` that left at `client_ns`, 10 ms later.
    fn answer(c: &mut ClientSession, client_ns: u64) {
        let ack = Packet {
            session: 0x55,
            message: Message::HelloAck {
                path: Path::Data,
                echo_ns: client_ns,
                server_ns: client_ns + 5_000_000,
                boot: 1,
            },
        };
        let at = Instant::from_nanos(client_ns) + ms(10);
        c.on_datagram(at, at, &ack.emit().unwrap());
    }

    /// Runs the handshake's turns on its own deadlines, answering each data-path `Hello` when
    /// `answer` says so, until the outcome or the recording; the `Hello`s sent.
    fn handshake(c: &mut ClientSession, answering: bool) -> (Option<ClientFailure>, u32, Instant) {
        let mut now = Instant::ZERO;
        let mut hellos = 0;
        loop {
            c.on_timeout(now);
            if let Some(r) = c.result() {
                return (r.err(), hellos, now);
            }
            let Phase::Handshake(_) = c.phase else {
                return (None, hellos, now);
            };
            while let Some(t) = c.poll_transmit(now) {
                let Message::Hello {
                    path, client_ns, ..
                } = t.packet.message
                else {
                    panic!("{t:?}")
                };
                hellos += 1;
                if answering && path == Path::Data {
                    answer(c, client_ns);
                }
            }
            now = c.poll_timeout().unwrap();
        }
    }

    #[test]
    fn the_handshake_gives_up_after_5_s() {
        let mut c = ClientSession::new(settings(false), Instant::ZERO);
        let (f, hellos, now) = handshake(&mut c, false);
        assert_eq!(f, Some(ClientFailure::NoAnswer));
        // Every 100 ms from 0 to 5 s.
        assert_eq!(hellos, 51);
        assert_eq!(now, Instant::ZERO + ms(5100));
        // Answered on the data path only: the feedback path is the one missing.
        let mut c = ClientSession::new(settings(true), Instant::ZERO);
        let (f, hellos, _) = handshake(&mut c, true);
        assert_eq!(f, Some(ClientFailure::NoFeedbackAnswer));
        assert!(hellos > 2 * 51, "{hellos}");
    }

    #[test]
    fn settings_are_checked() {
        assert!(settings(false).recording.validate().is_ok());
        let mut s = settings(false).recording;
        s.up = false;
        assert_eq!(s.validate(), Err("no direction to saturate".into()));
        s.packet_bytes = 10;
        assert!(
            s.validate()
                .unwrap_err()
                .starts_with("packet size: must be 27 to")
        );
    }

    /// After the handshake, uplink data under the window; a refused packet keeps its sequence
    /// number and waits for the next turn; the refusal is counted in the report.
    #[test]
    fn a_refused_data_packet_is_sent_again() {
        let mut c = ClientSession::new(settings(false), Instant::ZERO);
        // Five rounds: at 0, then every 20 ms once answered.
        let (f, hellos, now) = handshake(&mut c, true);
        assert_eq!((f, hellos), (None, 5));
        assert_eq!(now, Instant::ZERO + ms(180));
        assert!(matches!(
            c.poll_event(),
            Some(ClientEvent::Connected {
                same_clock: true,
                ..
            })
        ));
        let start = c.poll_transmit(now).unwrap();
        assert_eq!(start.packet.message, Message::Start);
        let first = c.poll_transmit(now).unwrap();
        assert!(matches!(
            first.packet.message,
            Message::Data {
                seq: 0,
                padding: 73,
                ..
            }
        ));
        c.on_send_refused(now, &first);
        assert_eq!(c.poll_transmit(now), None);
        assert_eq!(c.poll_timeout(), Some(now + ms(1)));
        c.on_timeout(now + ms(1));
        let again: Vec<_> = std::iter::from_fn(|| c.poll_transmit(now + ms(1))).collect();
        assert_eq!(again.len(), 20);
        assert!(matches!(
            again[0].packet.message,
            Message::Data { seq: 0, .. }
        ));
        assert!(again.iter().all(|t| t.path == Path::Data));
    }
}
