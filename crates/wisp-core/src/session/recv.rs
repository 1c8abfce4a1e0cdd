//! The receiving side of a session: the scheme's receiver half runs on every media packet of
//! the peer and its feedback goes back; receiver reports go every RTCP interval; the sender's
//! announcement starts the scheme, its SR gives LSR and (on one host) the flow's end, its BYE
//! ends the session.
//!
//! The first valid media packet chooses the peer and the media SSRC ([`RecvSession::on_media`]),
//! which a stray or random datagram cannot do; RTCP before that is held, bounded, and read when
//! its source becomes the peer ([`RecvSession::on_rtcp`]); everything else is foreign.

use super::stats::ReceptionStats;
use super::{MediaPacket, ReportBlock, RtcpItem, from_ntp};
use crate::controller::WireReceiver;
use crate::packet::{Content, DataHeader};
use crate::scheme::{AnyReceiver, BuildError, SchemeConfig, SchemeContext};
use crate::stats::quantiles;
use crate::tables::Tables;
use crate::time::{Duration, Instant};
use crate::units::DataSize;
use crate::video::InjectedCodecs;
use crate::video::log::VideoLog;
use crate::wire::Feedback;
use std::collections::VecDeque;
use std::net::SocketAddr;

/// Media packets kept while the scheme is not known yet (replayed when it is).
pub const MAX_PENDING: usize = 100_000;
/// RTCP datagrams kept from sources that are not the peer before it is known: at most this
/// many sources' worth…
pub const MAX_UNBOUND_SOURCES: usize = 16;
/// …of at most this many datagrams each…
pub const MAX_UNBOUND_PER_SOURCE: usize = 4;
/// …of at most this many bytes (a sender's compound is a few hundred).
pub const MAX_UNBOUND_BYTES: usize = 2048;

/// How a [`RecvSession`] runs.
#[derive(Clone, Debug)]
pub struct RecvConfig {
    /// Our SSRC (the reporter's, in receiver reports and feedback).
    pub ssrc: u32,
    /// The SDES CNAME of our reports.
    pub cname: String,
    /// This host's boot id: a sender whose CNAME ends in `@` and it runs on our clock.
    pub boot_id: Option<String>,
    /// The scheme to run; `None`: the one the sender announces.
    pub scheme: Option<SchemeConfig>,
    pub mtu: DataSize,
    /// End this long after the first packet.
    pub duration: Option<Duration>,
    /// End when no packet came for this long after the flow started.
    pub idle_timeout: Duration,
    pub rtcp_interval: Duration,
    /// Given to an `alfalfa` scheme that has no codec implementation (e.g. VP8 over a clip).
    pub video_codecs: Option<InjectedCodecs>,
    /// The fingerprint of this receiver's clip: a sender announcing another one is refused,
    /// one announcing none is run with a note.
    pub clip_fingerprint: Option<u64>,
}

/// What a [`RecvSession`] sends, always to the peer.
#[derive(Clone, Debug, PartialEq)]
pub enum RecvTransmit {
    /// One of the scheme's feedback messages (report its wire size with
    /// [`RecvSession::on_feedback_sent`]).
    Feedback {
        to: SocketAddr,
        ssrc: u32,
        media_ssrc: u32,
        feedback: Feedback,
    },
    /// A receiver report (RR + SDES CNAME) with one block about the media SSRC.
    Report {
        to: SocketAddr,
        ssrc: u32,
        block: ReportBlock,
        cname: String,
    },
}

/// Why a [`RecvSession`] ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecvEnd {
    /// The peer's BYE.
    Bye,
    /// The sender's flow is refused (its clip is not ours): the session ends with this error.
    Refused(String),
    /// The configured duration after the first packet.
    Duration,
    /// No packet within the idle timeout (a note says so).
    Idle,
}

/// A progress line's figures (once a second after the first packet).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecvProgress {
    /// Seconds since the first packet.
    pub elapsed_s: f64,
    /// Bytes delivered in the last second, as kbit/s.
    pub rate_kbps: f64,
    /// One-way delay of the last second's packets, ms (`None` unless synchronised).
    pub delay_p50_ms: Option<f64>,
    pub delay_p95_ms: Option<f64>,
    /// Lost of expected so far, percent.
    pub loss_percent: f64,
}

/// What the session measured, for the summary.
#[derive(Debug)]
pub struct RecvSummary<'a> {
    /// The scheme run (`unknown` if none).
    pub scheme: String,
    pub peer: Option<SocketAddr>,
    /// Whether the sender runs on our clock (one-way delays are exact).
    pub synchronised: bool,
    /// The flow's window: from its start to its end, on the sender's clock when it is ours.
    pub from: Instant,
    pub to: Instant,
    pub stats: &'a ReceptionStats,
    pub malformed: u64,
    /// Foreign datagrams, with the RTCP still held from sources that never became the peer.
    pub foreign: u64,
    /// Media packets that arrived CE-marked (ECN, RFC 3168).
    pub ce: u64,
    pub feedback_packets: u64,
    pub feedback_bytes: u64,
    pub video: Option<&'a VideoLog>,
}

/// The receiving side of one flow.
#[derive(Debug)]
pub struct RecvSession {
    config: RecvConfig,
    receiver: Option<AnyReceiver>,
    scheme: Option<String>,
    /// Packets that arrived before the scheme was known (replayed when it is), with their
    /// payload when it is not all zeros.
    pending: Vec<(Instant, DataHeader, Option<Vec<u8>>)>,
    /// RTCP datagrams that arrived before the peer was chosen: (source, arrival, items).
    unbound: VecDeque<(SocketAddr, Instant, Vec<RtcpItem>)>,
    media_ssrc: Option<u32>,
    peer: Option<SocketAddr>,
    synchronised: bool,
    last_sr: Option<(u32, Instant)>,
    sender_end: Option<Instant>,
    bye: Option<Instant>,
    first_arrival: Option<Instant>,
    last_arrival: Option<Instant>,
    stats: ReceptionStats,
    malformed: u64,
    foreign: u64,
    ce: u64,
    feedback_packets: u64,
    feedback_bytes: u64,
    notes: Vec<String>,
    notes_shown: usize,
    /// Why the sender's flow was refused: the session ends with it.
    refused: Option<String>,
    /// The latest instant handed to the receiver half: an arrival earlier than it (a datagram
    /// stamped while the driver ran timers) is raised to it, so time never runs backwards for
    /// the scheme.
    floor: Instant,
    next_report: Option<Instant>,
    /// Whether the receiver half had no more feedback this round ([`RecvSession::on_read_done`]
    /// opens a round).
    feedback_drained: bool,
    next_progress: Option<Instant>,
    /// Deliveries already in a progress line.
    progress_mark: usize,
}

impl RecvSession {
    /// A session that has seen nothing yet, running `config.scheme` if it gives one.
    pub fn new(config: RecvConfig) -> Result<Self, BuildError> {
        let scheme = config.scheme.clone();
        let mut s = RecvSession {
            config,
            receiver: None,
            scheme: None,
            pending: vec![],
            unbound: VecDeque::new(),
            media_ssrc: None,
            peer: None,
            synchronised: false,
            last_sr: None,
            sender_end: None,
            bye: None,
            first_arrival: None,
            last_arrival: None,
            stats: ReceptionStats::default(),
            malformed: 0,
            foreign: 0,
            ce: 0,
            feedback_packets: 0,
            feedback_bytes: 0,
            notes: vec![],
            notes_shown: 0,
            refused: None,
            floor: Instant::ZERO,
            next_report: None,
            feedback_drained: false,
            next_progress: None,
            progress_mark: 0,
        };
        if let Some(spec) = &scheme {
            s.start_scheme(spec)?;
        }
        Ok(s)
    }

    fn start_scheme(&mut self, spec: &SchemeConfig) -> Result<(), BuildError> {
        let codecs = self.config.video_codecs.clone();
        let (_, r) = spec.build(SchemeContext {
            mtu: self.config.mtu,
            ideal_schedule: None,
            rng: None,
            tables: Tables::new(),
            // Only the sending half fills packets; this one's sizes come with them.
            ip_udp_header: DataSize::ZERO,
            // The injected codec, for a sender that codes with one wisp-core does not link.
            codecs: codecs.clone(),
        })?;
        // A real codec's decoded pictures are kept, so that the displayed metric can measure
        // the picture on screen against later source pictures (as `wisp run` does).
        if let (Some(log), Some(_)) = (r.video_log(), &codecs) {
            log.keep_pictures();
        }
        self.receiver = Some(r);
        self.scheme = Some(spec.to_string());
        Ok(())
    }

    /// The peer, once the first valid media packet chose it.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// The scheme run, once known.
    pub fn scheme(&self) -> Option<&str> {
        self.scheme.as_deref()
    }

    /// The scheme's receiver half, once known (e.g. for Ping-Pair results).
    pub fn receiver_mut(&mut self) -> Option<&mut AnyReceiver> {
        self.receiver.as_mut()
    }

    pub fn stats(&self) -> &ReceptionStats {
        &self.stats
    }

    /// Datagrams counted as malformed and as foreign so far.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    pub fn foreign(&self) -> u64 {
        self.foreign
    }

    /// RTCP datagrams held from sources that are not the peer (yet).
    pub fn held(&self) -> usize {
        self.unbound.len()
    }

    /// Whether the peer's BYE came.
    pub fn has_ended(&self) -> bool {
        self.bye.is_some()
    }

    /// A datagram that is not a valid packet (malformed, truncated, wrong version, hostile
    /// lengths).
    pub fn on_malformed(&mut self) {
        self.malformed += 1;
    }

    /// A note for the user (each said once, in order: [`RecvSession::poll_note`]).
    pub fn note(&mut self, n: String) {
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// The next note not handed out yet.
    pub fn poll_note(&mut self) -> Option<String> {
        let n = self.notes.get(self.notes_shown)?.clone();
        self.notes_shown += 1;
        Some(n)
    }

    /// An RTCP datagram of `len` bytes from `from`, arrived at `at`. Before the peer is known it
    /// is only held (the latest few per source, [`MAX_UNBOUND_SOURCES`]); the first valid media
    /// packet chooses the peer, and that source's held datagrams are then read as if they came
    /// now. After that, RTCP from any other address is foreign, and items about another SSRC
    /// are ignored.
    pub fn on_rtcp(&mut self, at: Instant, from: SocketAddr, items: Vec<RtcpItem>, len: usize) {
        let now = at.max(self.floor);
        let Some(peer) = self.peer else {
            self.hold(len, items, now, from);
            return;
        };
        if peer != from {
            self.foreign += 1;
            return;
        }
        self.on_rtcp_items(items, now);
    }

    /// Holds an RTCP datagram from a source that is not (yet) the peer: a stranger's stray
    /// datagram, or the sender's announcement that came before its first media packet.
    fn hold(&mut self, len: usize, items: Vec<RtcpItem>, now: Instant, from: SocketAddr) {
        if len > MAX_UNBOUND_BYTES {
            self.foreign += 1;
            return;
        }
        let kept = self.unbound.iter().filter(|u| u.0 == from).count();
        if kept >= MAX_UNBOUND_PER_SOURCE {
            // The oldest of this source's goes: the announcement is repeated every interval.
            if let Some(i) = self.unbound.iter().position(|u| u.0 == from) {
                self.unbound.remove(i);
                self.foreign += 1;
            }
        } else if self.unbound.len() >= MAX_UNBOUND_SOURCES * MAX_UNBOUND_PER_SOURCE {
            self.unbound.pop_front();
            self.foreign += 1;
        }
        self.unbound.push_back((from, now, items));
    }

    /// Binds the session to `peer` and its media SSRC `ssrc`: what that source sent before is
    /// read now, what every other source sent is foreign.
    fn bind(&mut self, peer: SocketAddr, ssrc: u32) {
        self.peer = Some(peer);
        self.media_ssrc = Some(ssrc);
        for (from, at, items) in std::mem::take(&mut self.unbound) {
            if from != peer {
                self.foreign += 1;
                continue;
            }
            self.on_rtcp_items(items, at);
        }
    }

    fn on_rtcp_items(&mut self, items: Vec<RtcpItem>, now: Instant) {
        for item in items {
            match item {
                RtcpItem::SenderReport { ssrc, ntp, .. } if self.media_ssrc == Some(ssrc) => {
                    self.last_sr = Some(((ntp >> 16) as u32, now));
                    // On one host the SR's timestamp is on our clock: the flow's latest instant
                    // so far (the final SR marks its end).
                    self.sender_end = Some(from_ntp(ntp));
                }
                RtcpItem::Cname { ssrc, cname } if self.media_ssrc == Some(ssrc) => {
                    self.synchronised = self.same_host(&cname);
                }
                RtcpItem::Scheme { ssrc, spec, clip } if self.media_ssrc == Some(ssrc) => {
                    self.on_scheme(spec, clip);
                }
                RtcpItem::Bye { sources }
                    if self.media_ssrc.is_some_and(|m| sources.contains(&m)) =>
                {
                    self.bye = Some(now);
                }
                _ => {}
            }
        }
    }

    fn same_host(&self, cname: &str) -> bool {
        match (cname.split_once('@'), &self.config.boot_id) {
            (Some((_, b)), Some(ours)) => b == ours,
            _ => false,
        }
    }

    /// The sender's announcement: starts its scheme unless one runs (or its clip is not ours).
    fn on_scheme(&mut self, spec: String, clip: Option<u64>) {
        if self.receiver.is_some() {
            if self.scheme.as_deref() != Some(spec.as_str()) {
                self.note(format!(
                    "the sender runs `{spec}`, this receiver `{}`",
                    self.scheme.as_deref().unwrap_or("?")
                ));
            }
            return;
        }
        match (clip, self.config.clip_fingerprint) {
            (Some(theirs), Some(ours)) if theirs != ours => {
                self.refused = Some(format!(
                    "the sender codes another clip than --video's (fingerprint {theirs:016x}, --video's {ours:016x}): refusing its flow"
                ));
                return;
            }
            (None, Some(_)) => self.note(
                "the sender announced no clip fingerprint: its clip is not checked against --video's".into(),
            ),
            _ => {}
        }
        match spec.parse::<SchemeConfig>() {
            Ok(c) => match self.start_scheme(&c) {
                Ok(()) => {}
                Err(e) => self.note(format!("cannot run scheme `{spec}`: {e}")),
            },
            Err(e) => self.note(format!("sender announced a bad scheme: {e}")),
        }
    }

    /// A media packet of wisp's form from `from`, arrived at `at`. The first one chooses the
    /// peer and the media SSRC; any other source or SSRC is then foreign.
    pub fn on_media(&mut self, at: Instant, from: SocketAddr, p: MediaPacket<'_>) {
        let now = at.max(self.floor);
        if self.peer.is_some_and(|a| a != from) || self.media_ssrc.is_some_and(|s| s != p.ssrc) {
            self.foreign += 1;
            return;
        }
        if self.peer.is_none() {
            self.bind(from, p.ssrc);
        }
        self.first_arrival.get_or_insert(now);
        self.last_arrival = Some(now);
        if !self.stats.on_packet(&p.header, now) {
            return;
        }
        self.ce += u64::from(p.header.ecn.is_ce());
        match &mut self.receiver {
            // Fields the scheme cannot decode make the packet malformed.
            Some(r) => {
                deliver_payload(r, &p.header, p.payload);
                self.malformed += u64::from(r.on_packet_received(now, &p.header).is_err());
            }
            None if self.pending.len() < MAX_PENDING => {
                let kept = p
                    .payload
                    .iter()
                    .any(|&b| b != 0)
                    .then(|| p.payload.to_vec());
                self.pending.push((now, p.header, kept));
            }
            None => {}
        }
    }

    /// Every datagram that arrived before `now` has been handed over: later arrivals are not
    /// put before `now`, and packets that came before the scheme was known go to it once it is.
    /// Opens a round of timers and sends ([`RecvSession::poll_transmit`]).
    pub fn on_read_done(&mut self, now: Instant) {
        self.floor = now;
        self.feedback_drained = false;
        if let Some(rcv) = &mut self.receiver {
            for (t, h, payload) in self.pending.drain(..) {
                deliver_payload(rcv, &h, payload.as_deref().unwrap_or_default());
                if rcv.on_packet_received(t, &h).is_err() {
                    self.malformed += 1;
                }
            }
        }
    }

    /// Fires the receiver half's timer if it is due.
    pub fn on_timeout(&mut self, now: Instant) {
        if let Some(rcv) = &mut self.receiver {
            if rcv.poll_timeout().is_some_and(|t| t <= now) {
                rcv.on_timeout(now);
            }
        }
    }

    /// What to send now: the scheme's feedback until it has no more this round, then the
    /// receiver report when it is due (at once when the peer is chosen, then every RTCP
    /// interval). Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<RecvTransmit> {
        let (peer, media) = (self.peer?, self.media_ssrc?);
        if !self.feedback_drained {
            match self.receiver.as_mut().and_then(|r| r.poll_feedback(now)) {
                Some(feedback) => {
                    return Some(RecvTransmit::Feedback {
                        to: peer,
                        ssrc: self.config.ssrc,
                        media_ssrc: media,
                        feedback,
                    });
                }
                None => self.feedback_drained = true,
            }
        }
        let due = *self.next_report.get_or_insert(now);
        if now < due {
            return None;
        }
        self.next_report = Some(now + self.config.rtcp_interval);
        Some(RecvTransmit::Report {
            to: peer,
            ssrc: self.config.ssrc,
            block: self.stats.block(media, self.last_sr, now),
            cname: self.config.cname.clone(),
        })
    }

    /// A feedback message of `wire_bytes` (with the IP and UDP headers) went out.
    pub fn on_feedback_sent(&mut self, wire_bytes: u64) {
        self.feedback_packets += 1;
        self.feedback_bytes += wire_bytes;
    }

    /// The figures of a progress line, once a second after the first packet.
    pub fn poll_progress(&mut self, now: Instant) -> Option<RecvProgress> {
        let first = self.first_arrival?;
        let due = *self
            .next_progress
            .get_or_insert(first + Duration::from_secs(1));
        if now < due {
            return None;
        }
        let new = &self.stats.deliveries()[self.progress_mark..];
        let bytes: u64 = new.iter().map(|d| d.bytes).sum();
        let mut owd: Vec<f64> = new
            .iter()
            .map(|d| (d.arrived - d.sent).as_millis_f64())
            .collect();
        let q = quantiles(&mut owd, &[0.5, 0.95]);
        let expected = self.stats.expected();
        let p = RecvProgress {
            elapsed_s: (now - first).as_secs_f64(),
            rate_kbps: bytes as f64 * 8.0 / 1e3,
            delay_p50_ms: q[0].filter(|_| self.synchronised),
            delay_p95_ms: q[1].filter(|_| self.synchronised),
            loss_percent: if expected > 0 {
                self.stats.lost() as f64 / expected as f64 * 100.0
            } else {
                0.0
            },
        };
        self.progress_mark = self.stats.deliveries().len();
        self.next_progress = Some(due + Duration::from_secs(1));
        Some(p)
    }

    /// Whether packets wait for the scheme to be known (the driver then polls every 100 ms).
    pub fn awaits_scheme(&self) -> bool {
        self.receiver.is_none() && !self.pending.is_empty()
    }

    /// When to wake next if no datagram arrives first.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [
            self.receiver.as_ref().and_then(WireReceiver::poll_timeout),
            self.next_report,
            self.next_progress,
            self.last_arrival.map(|l| l + self.config.idle_timeout),
            self.first_arrival
                .zip(self.config.duration)
                .map(|(f, d)| f + d),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Whether the session is over at `now`, and why: the peer's BYE, a refused flow, the
    /// duration after the first packet, or the idle timeout (which leaves a note).
    pub fn poll_end(&mut self, now: Instant) -> Option<RecvEnd> {
        if self.bye.is_some() {
            return Some(RecvEnd::Bye);
        }
        if let Some(why) = self.refused.take() {
            return Some(RecvEnd::Refused(why));
        }
        let (duration, idle) = (self.config.duration, self.config.idle_timeout);
        let end = flow_timeout(now, self.first_arrival, self.last_arrival, duration, idle);
        if end == Some(RecvEnd::Idle) {
            self.note(idle_note(self.peer, idle));
        }
        end
    }

    /// What the session measured, with the flow's window ending at `stopped` at the latest.
    pub fn summary(&self, stopped: Instant) -> RecvSummary<'_> {
        let first_sent = self.stats.deliveries().iter().map(|d| d.sent).min();
        let (from, mut to) = if self.synchronised {
            (
                first_sent.unwrap_or(stopped),
                self.sender_end
                    .filter(|_| self.bye.is_some())
                    .unwrap_or(stopped),
            )
        } else {
            (
                self.first_arrival.unwrap_or(stopped),
                self.bye.or(self.last_arrival).unwrap_or(stopped),
            )
        };
        if let Some(d) = self.config.duration {
            to = to.min(self.first_arrival.unwrap_or(from) + d);
        }
        RecvSummary {
            scheme: self.scheme.clone().unwrap_or_else(|| "unknown".into()),
            peer: self.peer,
            synchronised: self.synchronised,
            from,
            to,
            stats: &self.stats,
            malformed: self.malformed,
            foreign: self.foreign + self.unbound.len() as u64,
            ce: self.ce,
            feedback_packets: self.feedback_packets,
            feedback_bytes: self.feedback_bytes,
            video: self.receiver.as_ref().and_then(|r| r.video_log()),
        }
    }
}

/// Whether a flow whose first and last packets arrived at `first` and `last` is over at `now`:
/// `duration` after the first ([`RecvEnd::Duration`]), or `idle_timeout` after the last
/// ([`RecvEnd::Idle`]). Before the first packet it never is.
pub fn flow_timeout(
    now: Instant,
    first: Option<Instant>,
    last: Option<Instant>,
    duration: Option<Duration>,
    idle_timeout: Duration,
) -> Option<RecvEnd> {
    if first.zip(duration).is_some_and(|(f, d)| now >= f + d) {
        return Some(RecvEnd::Duration);
    }
    if last.is_some_and(|l| now >= l + idle_timeout) {
        return Some(RecvEnd::Idle);
    }
    None
}

/// What a receiver says when the idle timeout ends it.
pub fn idle_note(peer: Option<SocketAddr>, idle_timeout: Duration) -> String {
    let from = peer.map_or_else(|| "the sender".into(), |p| p.to_string());
    format!(
        "no packet from {from} within the idle timeout of {} s; ending",
        idle_timeout.as_secs_f64()
    )
}

/// Hands a scheme that reads its video packets' payloads the one that arrived.
fn deliver_payload(r: &mut AnyReceiver, h: &DataHeader, payload: &[u8]) {
    if let Content::Video { .. } = h.content {
        r.on_payload(h.seq, payload);
    }
}
