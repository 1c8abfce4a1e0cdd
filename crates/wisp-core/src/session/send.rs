//! The sending side of a session: the scheme's [`FlowSender`] releases media packets, the
//! session reports (SR + SDES CNAME + the scheme announcement) go every RTCP interval, the
//! receiver's feedback and reports come back (RFC 3550 §6.4.1 for the RTT), and BYE ends it.

use super::{ReportBlock, RtcpItem, from_q16, ntp_middle};
use crate::controller::{SENDER_SAMPLE_INTERVAL, SenderSample, WireSender};
use crate::flow::FlowSender;
use crate::packet::{Content, DataHeader};
use crate::scheme::AnySender;
use crate::time::{Duration, Instant};

/// What a [`SendSession`] announces and how long it runs.
#[derive(Clone, Debug)]
pub struct SendConfig {
    /// Our SSRC (32 random bits drawn for each session).
    pub ssrc: u32,
    /// The SDES CNAME of our reports.
    pub cname: String,
    /// The scheme spec announced to the receiver.
    pub scheme: String,
    /// The fingerprint of the clip a video sender codes, announced with the scheme.
    pub clip_fingerprint: Option<u64>,
    pub duration: Duration,
    pub rtcp_interval: Duration,
}

/// The sender's compound RTCP report: SR, SDES CNAME and the scheme announcement (APP), and
/// BYE in the last one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SenderCompound {
    pub ssrc: u32,
    /// The SR's NTP timestamp.
    pub at: Instant,
    /// The send time of the last media packet (the SR's RTP timestamp), zero before any.
    pub last_send_time: Instant,
    /// The sender's packet and octet counts (RFC 3550: modulo 2^32).
    pub packets: u32,
    pub octets: u32,
    pub cname: String,
    pub scheme: String,
    pub clip_fingerprint: Option<u64>,
    pub bye: bool,
}

/// What a [`SendSession`] sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendTransmit {
    Compound(SenderCompound),
    /// A media packet: the header the flow released, with the scheme's payload if it has one.
    Media {
        ssrc: u32,
        header: DataHeader,
        payload: Option<Vec<u8>>,
    },
}

/// A progress line's figures (once a second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SendProgress {
    /// Seconds since the session started.
    pub elapsed_s: f64,
    /// Sending rate since the previous line, kbit/s.
    pub rate_kbps: f64,
    /// The scheme's target rate, kbit/s.
    pub target_kbps: Option<f64>,
    /// The latest RTT, ms.
    pub rtt_ms: Option<f64>,
    /// The loss rate of the latest receiver report (0–1).
    pub loss: Option<f64>,
}

/// What the sender counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SendStats {
    pub packets: u64,
    pub bytes: u64,
    /// Round-trip times from receiver reports, ms.
    pub rtt_ms: Vec<f64>,
    /// Cumulative lost / expected of the latest receiver report about us.
    pub loss: Option<f64>,
    /// How late each round of packets left after the instant the flow asked for, µs.
    pub late_us: Vec<f64>,
    /// How late each probe or padding packet the scheme sent outside its allowance left (a
    /// probe cluster's packets, each at the instant the scheme's timer asked for), µs: the
    /// lateness of the round it left in.
    pub probe_late_us: Vec<f64>,
    /// Feedback messages the scheme took.
    pub feedback: u64,
    /// RTCP that does not parse, or feedback the scheme cannot decode.
    pub malformed: u64,
    /// Datagrams that are not RTCP.
    pub foreign: u64,
    /// The scheme's figures every [`SENDER_SAMPLE_INTERVAL`], timed from the session's start
    /// (`wisp send --out`'s controller.csv).
    pub samples: Vec<SenderSample>,
}

/// The sending side of one flow, from its start until [`SendSession::close`].
#[derive(Debug)]
pub struct SendSession {
    flow: FlowSender<AnySender>,
    config: SendConfig,
    start: Instant,
    next_report: Instant,
    next_progress: Instant,
    next_sample: Instant,
    /// The flow's wake-up instant when the driver last asked ([`SendSession::poll_timeout`]):
    /// the first packet sent after it tells how late the wake-up came.
    wanted_wake: Option<Instant>,
    /// How late the current round of packets is, µs (see [`SendStats::probe_late_us`]).
    round_late_us: f64,
    last_send_time: Instant,
    last_progress: (Instant, u64),
    stats: SendStats,
}

impl SendSession {
    /// A session that starts at `now` (its first report is due at once).
    pub fn new(flow: FlowSender<AnySender>, config: SendConfig, now: Instant) -> Self {
        SendSession {
            flow,
            config,
            start: now,
            next_report: now,
            next_progress: now + Duration::from_secs(1),
            next_sample: now,
            wanted_wake: None,
            round_late_us: 0.0,
            last_send_time: Instant::ZERO,
            last_progress: (now, 0),
            stats: SendStats::default(),
        }
    }

    pub fn flow(&self) -> &FlowSender<AnySender> {
        &self.flow
    }

    /// When the session started.
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Whether the configured duration is over at `now`.
    pub fn is_over(&self, now: Instant) -> bool {
        now >= self.start + self.config.duration
    }

    pub fn stats(&self) -> &SendStats {
        &self.stats
    }

    /// An RTCP datagram arrived at `now`: the scheme's feedback messages (one it cannot decode is
    /// malformed) and receiver reports about our SSRC.
    pub fn on_rtcp(&mut self, now: Instant, items: Vec<RtcpItem>) {
        for item in items {
            match item {
                RtcpItem::Feedback(fb) => match self.flow.on_feedback(now, &fb) {
                    Ok(()) => self.stats.feedback += 1,
                    Err(_) => self.stats.malformed += 1,
                },
                RtcpItem::ReceiverReport { blocks, .. } => {
                    let ours = self.config.ssrc;
                    for b in blocks.iter().filter(|b| b.ssrc == ours) {
                        self.on_report_block(b, now);
                    }
                }
                _ => {}
            }
        }
    }

    /// A datagram that looked like RTCP and does not parse.
    pub fn on_malformed(&mut self) {
        self.stats.malformed += 1;
    }

    /// A datagram that is not RTCP.
    pub fn on_foreign(&mut self) {
        self.stats.foreign += 1;
    }

    /// RFC 3550 §6.4.1: RTT = A − LSR − DLSR, in 1/65536 s.
    fn on_report_block(&mut self, b: &ReportBlock, now: Instant) {
        if b.last_sr != 0 {
            let rtt = ntp_middle(now)
                .wrapping_sub(b.last_sr)
                .wrapping_sub(b.delay_since_last_sr);
            if rtt < 1 << 31 {
                self.stats.rtt_ms.push(from_q16(rtt).as_millis_f64());
            }
        }
        let expected = u64::from(b.highest_seq) + 1;
        self.stats.loss = Some((f64::from(b.total_lost.max(0)) / expected as f64).min(1.0));
    }

    fn compound(&self, now: Instant, bye: bool) -> SenderCompound {
        SenderCompound {
            ssrc: self.config.ssrc,
            at: now,
            last_send_time: self.last_send_time,
            packets: self.stats.packets as u32,
            octets: self.stats.bytes as u32,
            cname: self.config.cname.clone(),
            scheme: self.config.scheme.clone(),
            clip_fingerprint: self.config.clip_fingerprint,
            bye,
        }
    }

    /// What to send now: the session report when it is due, then every packet the flow
    /// releases. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<SendTransmit> {
        if now >= self.next_report {
            self.next_report = now + self.config.rtcp_interval;
            return Some(SendTransmit::Compound(self.compound(now, false)));
        }
        let Some(header) = self.flow.poll_transmit(now) else {
            self.sample(now);
            return None;
        };
        // A scheme with a payload of its own (coded video's pieces of diffs) puts it first.
        let payload = self.flow.sender_mut().take_payload(header.seq);
        if let Some(w) = self.wanted_wake.take().filter(|&w| w <= now) {
            self.round_late_us = (now - w).as_nanos() as f64 / 1e3;
            self.stats.late_us.push(self.round_late_us);
        }
        if header.content == Content::Probe {
            self.stats.probe_late_us.push(self.round_late_us);
        }
        self.stats.packets += 1;
        self.stats.bytes += header.size.bytes();
        self.last_send_time = header.send_time;
        Some(SendTransmit::Media {
            ssrc: self.config.ssrc,
            header,
            payload,
        })
    }

    /// The scheme's figures, when a sample is due (after a round of packets, as the simulator
    /// samples a flow after its activity).
    fn sample(&mut self, now: Instant) {
        if now >= self.next_sample {
            self.next_sample = now + SENDER_SAMPLE_INTERVAL;
            let at = Instant::ZERO + (now - self.start);
            let sample = SenderSample::of(0, at, self.flow.sender());
            self.stats.samples.push(sample);
        }
    }

    /// The figures of a progress line, once a second.
    pub fn poll_progress(&mut self, now: Instant) -> Option<SendProgress> {
        if now < self.next_progress {
            return None;
        }
        let secs = (now - self.last_progress.0).as_secs_f64();
        let p = SendProgress {
            elapsed_s: (now - self.start).as_secs_f64(),
            rate_kbps: (self.stats.bytes - self.last_progress.1) as f64 * 8.0 / secs / 1e3,
            target_kbps: WireSender::stats(self.flow.sender())
                .target_rate
                .map(|r| r.kbps_f64()),
            rtt_ms: self.stats.rtt_ms.last().copied(),
            loss: self.stats.loss,
        };
        self.last_progress = (now, self.stats.bytes);
        self.next_progress += Duration::from_secs(1);
        Some(p)
    }

    /// When to wake next if no datagram arrives first: the flow's next packet, the next report
    /// or progress line, or the end. Remembers the flow's wake-up, which the pacing lateness is
    /// measured from.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.wanted_wake = self.flow.poll_timeout();
        [
            self.wanted_wake,
            Some(self.next_report),
            Some(self.next_progress),
            Some(self.next_sample),
            Some(self.start + self.config.duration),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The end of the flow at `now`: the final report (its timestamp marks the end) with BYE.
    pub fn close(&self, now: Instant) -> SenderCompound {
        self.compound(now, true)
    }
}
