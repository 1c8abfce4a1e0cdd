//! One flow of a scheme as an RTP/RTCP session (RFC 3550), sans-IO: the sending side
//! ([`SendSession`], `wisp send`) and the receiving side ([`RecvSession`], `wisp recv`).
//!
//! The machines speak typed packets: a media packet is a [`DataHeader`] with the sender's SSRC
//! and the scheme's payload ([`MediaPacket`]), RTCP is a list of [`RtcpItem`]s. Turning them
//! into bytes and back (RTP header extensions, compound RTCP) is the wire layer's (wisp-net's
//! `rtp` and `rtcp` modules), and so are the sockets and the clock: each machine is driven with
//! the instant of every event and hands out what to send and when to wake it.
//!
//! ```text
//! sender:   until s.is_over(now):
//!               each datagram read → s.on_rtcp(now, items) | s.on_malformed() | s.on_foreign()
//!               while let Some(t) = s.poll_transmit(now) { send t }   (report, then media)
//!               s.poll_progress(now); sleep until s.poll_timeout() or a datagram
//!           s.close(now) → the final SR + BYE;  s.stats()
//! receiver: until r.poll_end(now):
//!               each datagram read → r.on_media(at, from, p) | r.on_rtcp(at, from, items, len)
//!                                    | r.on_malformed()
//!               r.on_read_done(now); r.on_timeout(now)
//!               while let Some(t) = r.poll_transmit(now) { send t }   (feedback, then RR)
//!               r.poll_progress(now); r.poll_note(); sleep until r.poll_timeout(now)
//!           r.summary(stopped)
//! ```
//!
//! Who the receiver listens to ([`RecvSession`], docs/real-network.md): the source (address and
//! port) of the first valid media packet becomes the peer and its SSRC the flow's; RTCP that
//! came before that is held, a bounded few datagrams per source ([`MAX_UNBOUND_SOURCES`] sources,
//! [`MAX_UNBOUND_PER_SOURCE`] datagrams each, of at most [`MAX_UNBOUND_BYTES`] bytes), and read
//! when its source becomes the peer. Any other address or SSRC is then counted as foreign and
//! ignored: a stranger's BYE ends nothing.
//!
//! The NTP timestamps of SR and LSR/DLSR are on the sender's own clock (monotonic seconds in
//! 32.32 fixed point, [`ntp`]): RFC 3550 only needs them consistent for A − LSR − DLSR, which
//! is computed on the clock that stamped them.

mod recv;
mod send;
mod stats;

pub use recv::{
    MAX_PENDING, MAX_UNBOUND_BYTES, MAX_UNBOUND_PER_SOURCE, MAX_UNBOUND_SOURCES, RecvConfig,
    RecvEnd, RecvProgress, RecvSession, RecvSummary, RecvTransmit, flow_timeout, idle_note,
};
pub use send::{SendConfig, SendProgress, SendSession, SendStats, SendTransmit, SenderCompound};
pub use stats::{Delivery, ReceptionStats};

use crate::packet::DataHeader;
use crate::time::{Duration, Instant};
use crate::wire::Feedback;

/// The RTP timestamp clock rate (video), in which RFC 3550's interarrival jitter is counted.
pub const CLOCK_RATE_HZ: u64 = 90_000;

/// A media packet of the session as the wire layer decoded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaPacket<'a> {
    /// The sender's SSRC.
    pub ssrc: u32,
    pub header: DataHeader,
    /// The RTP payload: zeros, or the scheme's payload followed by zeros.
    pub payload: &'a [u8],
}

/// A session report block (RFC 3550 §6.4.1), the part of an RR wisp uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ReportBlock {
    /// The media source reported on.
    pub ssrc: u32,
    pub fraction_lost: u8,
    /// Cumulative packets lost (24-bit signed on the wire).
    pub total_lost: i32,
    /// Extended highest sequence number received.
    pub highest_seq: u32,
    /// Interarrival jitter in RTP timestamp units.
    pub jitter: u32,
    /// Middle 32 bits of the NTP timestamp of the last SR received.
    pub last_sr: u32,
    /// Delay since that SR, in 1/65536 s.
    pub delay_since_last_sr: u32,
}

/// Arrival feedback for a run of sequence numbers (RFC 8888, one media source).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrivals {
    pub media_ssrc: u32,
    /// The 16-bit sequence number of `packets[0]`.
    pub begin_seq: u16,
    /// When the report was made, on the reporter's clock.
    pub report_time: Instant,
    /// Arrival time of each packet, `None` if not received. Times are quantised to 1/1024 s
    /// before `report_time` and must lie within 8191/1024 s of it.
    pub packets: Vec<Option<Instant>>,
}

/// One item of a decoded RTCP datagram.
#[derive(Clone, Debug, PartialEq)]
pub enum RtcpItem {
    SenderReport {
        ssrc: u32,
        ntp: u64,
        rtp_time: u32,
        packets: u32,
        octets: u32,
    },
    ReceiverReport {
        /// The reporter.
        ssrc: u32,
        blocks: Vec<ReportBlock>,
    },
    Cname {
        ssrc: u32,
        cname: String,
    },
    Bye {
        sources: Vec<u32>,
    },
    /// A scheme's feedback message (from REMB or APP).
    Feedback(Feedback),
    /// The sender's scheme spec, and the fingerprint of the clip it codes (a video sender given
    /// one); `ssrc` is the APP packet's source (the sender's media SSRC).
    Scheme {
        ssrc: u32,
        spec: String,
        clip: Option<u64>,
    },
    Arrivals(Arrivals),
    /// A packet type wisp does not use (ignored).
    Other(u8),
}

/// `t` as NTP-style 32.32 fixed-point seconds.
pub fn ntp(t: Instant) -> u64 {
    let ns = u128::from(t.as_nanos());
    let secs = ns / 1_000_000_000;
    let frac = ((ns % 1_000_000_000) << 32) / 1_000_000_000;
    ((secs as u64) << 32) | frac as u64
}

/// The middle 32 bits of [`ntp`] (1/65536 s units), as LSR and RFC 8888 use.
pub fn ntp_middle(t: Instant) -> u32 {
    (ntp(t) >> 16) as u32
}

/// A duration in 1/65536 s, saturating.
pub fn to_q16(d: Duration) -> u32 {
    ((u128::from(d.as_nanos()) << 16) / 1_000_000_000).min(u128::from(u32::MAX)) as u32
}

/// A duration from 1/65536 s.
pub fn from_q16(v: u32) -> Duration {
    Duration::from_nanos(((u128::from(v) * 1_000_000_000) >> 16) as u64)
}

/// The instant an NTP-style timestamp ([`ntp`]) stands for, saturating.
fn from_ntp(ntp: u64) -> Instant {
    let ns = ((u128::from(ntp >> 32) * 1_000_000_000)
        + ((u128::from(ntp & 0xffff_ffff) * 1_000_000_000) >> 32))
        .min(u128::from(u64::MAX)) as u64;
    Instant::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    //! A send session and a receive session against each other over an in-memory path with a
    //! one-way delay: no socket, simulated time. The "wire" here turns each typed packet into
    //! what the receiving side's decoder would hand over.

    use super::*;
    use crate::packet::DataHeader;
    use crate::scheme::{SchemeConfig, SchemeContext};
    use crate::units::DataSize;
    use std::collections::VecDeque;
    use std::net::SocketAddr;

    const SENDER: &str = "10.0.0.1:5000";
    const STRANGER: &str = "10.0.0.9:5000";

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// When the sender starts (not at zero, which an SR's timestamp would make no SR at all).
    fn at(v: u64) -> Instant {
        Instant::from_secs(1) + ms(v)
    }

    /// A datagram on its way to the receiver.
    enum ToReceiver {
        Media(u32, DataHeader, Vec<u8>),
        Rtcp(Vec<RtcpItem>),
    }

    /// The sender's compound report as the receiver's decoder reads it.
    fn compound_items(c: &SenderCompound) -> Vec<RtcpItem> {
        let mut items = vec![
            RtcpItem::SenderReport {
                ssrc: c.ssrc,
                ntp: ntp(c.at),
                rtp_time: 0,
                packets: c.packets,
                octets: c.octets,
            },
            RtcpItem::Cname {
                ssrc: c.ssrc,
                cname: c.cname.clone(),
            },
            RtcpItem::Scheme {
                ssrc: c.ssrc,
                spec: c.scheme.clone(),
                clip: c.clip_fingerprint,
            },
        ];
        if c.bye {
            items.push(RtcpItem::Bye {
                sources: vec![c.ssrc],
            });
        }
        items
    }

    /// Both sides and the path between them, driven as `wisp send`/`wisp recv` drive them.
    struct Harness {
        now: Instant,
        delay: Duration,
        sender: SendSession,
        receiver: RecvSession,
        to_receiver: VecDeque<(Instant, SocketAddr, ToReceiver)>,
        to_sender: VecDeque<(Instant, Vec<RtcpItem>)>,
        sender_wake: Option<Instant>,
        receiver_wake: Option<Instant>,
        closed_at: Option<Instant>,
        end: Option<RecvEnd>,
    }

    impl Harness {
        fn new(scheme: &str, duration: Duration, delay: Duration) -> Self {
            let spec: SchemeConfig = scheme.parse().unwrap();
            let (flow, _) = spec.build(SchemeContext::new()).unwrap();
            let sender = SendSession::new(
                flow,
                SendConfig {
                    ssrc: 42,
                    cname: "1@boot".into(),
                    scheme: spec.to_string(),
                    clip_fingerprint: None,
                    duration,
                    rtcp_interval: Duration::from_secs(1),
                },
                at(0),
            );
            let receiver = RecvSession::new(RecvConfig {
                ssrc: 7,
                cname: "2@boot".into(),
                boot_id: Some("boot".into()),
                scheme: None,
                mtu: DataSize::from_bytes(1500),
                duration: None,
                idle_timeout: Duration::from_secs(10),
                rtcp_interval: Duration::from_secs(1),
                video_codecs: None,
                clip_fingerprint: None,
            })
            .unwrap();
            Harness {
                now: at(0),
                delay,
                sender,
                receiver,
                to_receiver: VecDeque::new(),
                to_sender: VecDeque::new(),
                sender_wake: Some(at(0)),
                receiver_wake: None,
                closed_at: None,
                end: None,
            }
        }

        /// A datagram from `from` that reaches the receiver at `at`.
        fn inject(&mut self, at: Instant, from: &str, d: ToReceiver) {
            let i = self.to_receiver.partition_point(|(t, ..)| *t <= at);
            self.to_receiver.insert(i, (at, addr(from), d));
        }

        fn sender_round(&mut self) {
            let now = self.now;
            if self.closed_at.is_some() {
                // Nobody reads what still comes.
                self.to_sender.clear();
                return;
            }
            if self.sender.is_over(now) {
                let c = self.sender.close(now);
                self.inject(
                    now + self.delay,
                    SENDER,
                    ToReceiver::Rtcp(compound_items(&c)),
                );
                self.closed_at = Some(now);
                self.sender_wake = None;
                return;
            }
            while self.to_sender.front().is_some_and(|(t, _)| *t <= now) {
                let (_, items) = self.to_sender.pop_front().unwrap();
                self.sender.on_rtcp(now, items);
            }
            while let Some(t) = self.sender.poll_transmit(now) {
                let d = match t {
                    SendTransmit::Compound(c) => ToReceiver::Rtcp(compound_items(&c)),
                    SendTransmit::Media {
                        ssrc,
                        header,
                        payload,
                    } => ToReceiver::Media(ssrc, header, payload.unwrap_or_default()),
                };
                self.inject(now + self.delay, SENDER, d);
            }
            self.sender.poll_progress(now);
            self.sender_wake = self.sender.poll_timeout();
        }

        fn receiver_round(&mut self) {
            let now = self.now;
            if self.end.is_some() {
                self.to_receiver.clear();
                return;
            }
            if let Some(e) = self.receiver.poll_end(now) {
                self.end = Some(e);
                self.receiver_wake = None;
                return;
            }
            while self.to_receiver.front().is_some_and(|(t, ..)| *t <= now) {
                let (at, from, d) = self.to_receiver.pop_front().unwrap();
                match d {
                    ToReceiver::Media(ssrc, header, payload) => {
                        let p = MediaPacket {
                            ssrc,
                            header,
                            payload: &payload,
                        };
                        self.receiver.on_media(at, from, p);
                    }
                    ToReceiver::Rtcp(items) => self.receiver.on_rtcp(at, from, items, 200),
                }
            }
            self.receiver.on_read_done(now);
            self.receiver.on_timeout(now);
            while let Some(t) = self.receiver.poll_transmit(now) {
                let items = match t {
                    RecvTransmit::Feedback { to, feedback, .. } => {
                        assert_eq!(to, addr(SENDER));
                        self.receiver.on_feedback_sent(100);
                        vec![RtcpItem::Feedback(feedback)]
                    }
                    RecvTransmit::Report {
                        to,
                        ssrc,
                        block,
                        cname,
                    } => {
                        assert_eq!(to, addr(SENDER));
                        vec![
                            RtcpItem::ReceiverReport {
                                ssrc,
                                blocks: vec![block],
                            },
                            RtcpItem::Cname { ssrc, cname },
                        ]
                    }
                };
                self.to_sender.push_back((now + self.delay, items));
            }
            self.receiver.poll_progress(now);
            while self.receiver.poll_note().is_some() {}
            self.receiver_wake = if self.receiver.awaits_scheme() {
                Some(now + ms(100))
            } else {
                self.receiver.poll_timeout()
            };
        }

        /// Runs both sides until `until` (or until nothing is left to do).
        fn run_until(&mut self, until: Instant) {
            for _ in 0..1_000_000 {
                self.sender_round();
                self.receiver_round();
                let next = [
                    self.sender_wake,
                    self.receiver_wake,
                    self.to_receiver.front().map(|d| d.0),
                    self.to_sender.front().map(|d| d.0),
                ]
                .into_iter()
                .flatten()
                .min();
                match next {
                    Some(t) if t <= until => self.now = t.max(self.now),
                    _ => return,
                }
            }
            panic!("no end in sight at {:?}", self.now);
        }
    }

    #[test]
    fn packets_feedback_and_bye_cross_a_delayed_path() {
        let mut h = Harness::new("gcc-remb", Duration::from_secs(5), ms(20));
        h.run_until(at(10_000));
        let sent = h.sender.stats().clone();
        let r = &h.receiver;
        // The announcement came before the first packet: the scheme is the sender's.
        assert_eq!(r.scheme(), Some("gcc-remb"));
        assert_eq!(r.peer(), Some(addr(SENDER)));
        assert!(sent.packets > 300, "{sent:?}");
        assert_eq!(r.stats().deliveries().len() as u64, sent.packets);
        assert_eq!((r.stats().lost(), r.malformed(), r.foreign()), (0, 0, 0));
        assert!(
            r.stats()
                .deliveries()
                .iter()
                .all(|d| d.arrived - d.sent == ms(20))
        );
        // The receiver's feedback drove the sender, and its reports gave it the RTT (2 × 20 ms)
        // and the loss.
        assert!(sent.feedback >= 10, "{sent:?}");
        assert_eq!(sent.malformed, 0);
        assert_eq!(sent.rtt_ms.len(), 5, "{sent:?}");
        assert!(
            sent.rtt_ms.iter().all(|r| (r - 40.0).abs() < 0.05),
            "{:?}",
            sent.rtt_ms
        );
        assert_eq!(sent.loss, Some(0.0));
        // BYE ended both: the receiver at its next wake-up after the BYE, and on one host its
        // window closes at the sender's last SR.
        let closed = h.closed_at.expect("the sender closed");
        assert_eq!(closed, at(5000));
        assert_eq!(h.end, Some(RecvEnd::Bye));
        let s = h.receiver.summary(h.now);
        assert!(s.synchronised);
        assert_eq!(s.from, at(0));
        assert!(
            s.to.as_nanos().abs_diff(closed.as_nanos()) <= 1,
            "{:?}",
            s.to
        );
        // Only what was still on its way at the end did not reach the sender.
        let in_flight = s.feedback_packets - sent.feedback;
        assert!(in_flight <= 2, "{in_flight}");
    }

    /// A scheme's probe packets are counted with how late they left: `gcc`'s initial probe
    /// clusters, polled at the very instants its timer asks for, are never late; a scheme
    /// without probes sends none.
    #[test]
    fn probes_are_counted_with_their_lateness() {
        let mut h = Harness::new("gcc", Duration::from_secs(2), ms(20));
        h.run_until(at(3000));
        let probes = &h.sender.stats().probe_late_us;
        assert!(probes.len() >= 10, "{probes:?}");
        assert!(probes.iter().all(|&l| l == 0.0), "{probes:?}");
        let mut h = Harness::new("gcc-remb", Duration::from_secs(2), ms(20));
        h.run_until(at(3000));
        assert!(h.sender.stats().probe_late_us.is_empty());
        assert!(h.sender.stats().packets > 100);
    }

    /// The controller is sampled every 100 ms from the session's start (`wisp send --out`'s
    /// controller.csv): `gcc`'s target starts at its 300 kbit/s and its initial probes over a
    /// lossless, unlimited path raise it within the first second.
    #[test]
    fn the_controller_is_sampled_every_100_ms() {
        let mut h = Harness::new("gcc", Duration::from_secs(3), ms(20));
        h.run_until(at(4000));
        let s = &h.sender.stats().samples;
        assert!((29..=31).contains(&s.len()), "{}", s.len());
        assert_eq!(s[0].at, Instant::ZERO);
        for w in s.windows(2) {
            let gap = w[1].at - w[0].at;
            assert!(gap >= ms(100) && gap < ms(110), "{gap:?}");
        }
        let kbps = |i: usize| s[i].target_rate.unwrap().kbps_f64();
        assert_eq!(kbps(0), 300.0);
        let at_1s = s
            .iter()
            .position(|x| x.at >= Instant::ZERO + ms(1000))
            .unwrap();
        assert!(kbps(at_1s) > 600.0, "{}", kbps(at_1s));
    }

    #[test]
    fn a_foreign_datagram_is_counted_and_ignored() {
        let mut h = Harness::new("cbr:rate-kbps=1200", Duration::from_secs(2), ms(10));
        // Before the sender: a stranger's announcement of another scheme is held, not taken.
        let stranger_sr = SenderCompound {
            ssrc: 99,
            at: at(0),
            last_send_time: at(0),
            packets: 0,
            octets: 0,
            cname: "3@elsewhere".into(),
            scheme: "tcp".into(),
            clip_fingerprint: None,
            bye: false,
        };
        h.inject(
            at(0),
            STRANGER,
            ToReceiver::Rtcp(compound_items(&stranger_sr)),
        );
        h.run_until(at(500));
        assert_eq!(h.receiver.scheme(), Some("cbr:rate-kbps=1200"));
        assert_eq!(h.receiver.held(), 0);
        // Held until the peer was chosen, then foreign.
        assert_eq!(h.receiver.foreign(), 1);
        let before = h.receiver.stats().deliveries().len();
        // During the flow: a packet of the sender's own SSRC from elsewhere, and its BYE.
        let header = DataHeader {
            seq: 1_000_000,
            size: DataSize::from_bytes(1200),
            send_time: at(500),
            ..Default::default()
        };
        h.inject(at(600), STRANGER, ToReceiver::Media(42, header, vec![]));
        h.inject(
            at(600),
            STRANGER,
            ToReceiver::Rtcp(vec![RtcpItem::Bye { sources: vec![42] }]),
        );
        // Another SSRC from the peer's own address is foreign too.
        h.inject(at(600), SENDER, ToReceiver::Media(43, header, vec![]));
        h.run_until(at(1500));
        assert_eq!(h.receiver.foreign(), 4);
        assert!(!h.receiver.has_ended(), "a stranger's BYE ends nothing");
        assert!(h.end.is_none());
        let r = h.receiver.stats();
        assert!(r.deliveries().len() > before);
        assert!(r.deliveries().iter().all(|d| d.seq < 1_000_000));
        assert_eq!(r.lost(), 0);
        // The sender's own BYE does.
        h.run_until(at(5000));
        assert_eq!(h.end, Some(RecvEnd::Bye));
        assert_eq!(h.receiver.summary(h.now).foreign, 4);
    }

    #[test]
    fn an_idle_sender_ends_the_session_with_a_note() {
        let mut h = Harness::new("cbr:rate-kbps=100", Duration::from_secs(1), ms(5));
        // The sender vanishes: its BYE is lost on the way.
        h.run_until(at(900));
        h.closed_at = Some(h.now);
        h.sender_wake = None;
        h.run_until(at(30_000));
        assert_eq!(h.end, Some(RecvEnd::Idle));
        // The idle timeout counts from the last packet.
        let last = h.receiver.stats().deliveries().last().unwrap().arrived;
        assert_eq!(h.now, last + Duration::from_secs(10));
        assert_eq!(
            h.receiver.poll_note().as_deref(),
            Some("no packet from 10.0.0.1:5000 within the idle timeout of 10 s; ending")
        );
    }

    #[test]
    fn ntp_conversions() {
        assert_eq!(ntp(Instant::from_secs(3)), 3 << 32);
        assert_eq!(ntp(Instant::from_millis(500)), 1 << 31);
        assert_eq!(ntp_middle(Instant::from_secs(1)), 1 << 16);
        assert_eq!(to_q16(Duration::from_millis(500)), 1 << 15);
        assert_eq!(from_q16(1 << 15), Duration::from_millis(500));
        let t = Instant::from_nanos(1_234_567_891);
        assert!(from_ntp(ntp(t)).as_nanos().abs_diff(t.as_nanos()) <= 1);
    }
}
