//! The server's end of the Saturator (Sprout paper §5.1.1), sans-IO: one session at a time —
//! the handshake's answers, the downlink's sender and the uplink's receiver, the idle timeout,
//! the `Stop`/`Fetch`/`Report` hand-over of the uplink's arrivals, the goodbye. [`Server`] takes
//! datagrams (with the driver's address of their sender, `A`) and the time; it hands out packets
//! to send, the next deadline and events.

use super::wire::{
    Dir, Message, Packet, Path, WireError, check_packet_bytes, padding, report_chunks,
};
use super::{
    Arrivals, BLOCKED_RETRY, PacketErrors, Transmit, Window, WindowConfig, data_message, is_data,
    ms_counts, on_ack_fields,
};
use crate::stats::quantiles;
use crate::{Duration, Instant};
use std::collections::VecDeque;

/// The server's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSettings {
    /// The downlink sender's window.
    pub window: WindowConfig,
    /// Finish after this many sessions (`None`: serve forever).
    pub sessions: Option<u64>,
    /// A session whose client is silent this long ends.
    pub idle: Duration,
    /// This host's boot id hash, told to clients (equal hashes: one clock).
    pub boot: u64,
}

/// A datagram as the driver read it.
#[derive(Clone, Copy, Debug)]
pub struct Datagram<'a, A> {
    /// The socket it came in on.
    pub path: Path,
    /// Its sender.
    pub from: A,
    /// Its arrival (the kernel's stamp where there is one).
    pub at: Instant,
    pub bytes: &'a [u8],
}

/// What the [`Server`] reports.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerEvent<A> {
    /// A client's first `Hello` opened a session.
    Started {
        session: u32,
        from: A,
        up: bool,
        down: bool,
    },
    /// The session's client was silent for the idle time: the session ended.
    Silent { session: u32, idle: Duration },
    /// The client said goodbye: the session ended.
    Ended(SessionEnd),
    /// A datagram that is not a saturator packet (the first three only; all are counted).
    Malformed { from: A, error: WireError },
}

/// A session's figures at its end.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionEnd {
    pub session: u32,
    /// From its first `Hello`.
    pub elapsed: Duration,
    /// Uplink packets received, downlink packets sent and sends the socket refused.
    pub received: u64,
    pub sent: u64,
    pub send_failed: u64,
    /// The downlink's window at the end and its RTT's median and 95th percentile, ms.
    pub window: u32,
    pub rtt_p50_ms: Option<f64>,
    pub rtt_p95_ms: Option<f64>,
}

/// The uplink's report for one `Fetch` window: the window (epoch, from, to, ns on this side's
/// clock), its chunks and the packets in them.
type CachedReport = ((u64, u64, u64), Vec<Vec<(u32, u16)>>, u64);

/// Saturator sessions, one at a time. The caller (a driver) loops:
/// [`Server::on_timeout`], sends every [`Server::poll_transmit`] (reporting a refused one with
/// [`Server::on_send_refused`]), takes the events, stops when [`Server::is_finished`], else
/// waits for a datagram ([`Server::on_datagram`]) or [`Server::poll_timeout`].
#[derive(Clone, Debug)]
pub struct Server<A> {
    settings: ServerSettings,
    session: Option<Session<A>>,
    /// Replies, in order, before the acknowledgement and the data.
    queue: VecDeque<Transmit<A>>,
    events: VecDeque<ServerEvent<A>>,
    errors: PacketErrors,
    /// Sessions ended.
    ended: u64,
}

#[derive(Clone, Debug)]
struct Session<A> {
    id: u32,
    /// The client's data path, and its feedback path (the socket and address) once known.
    data: A,
    feedback: Option<(Path, A)>,
    down: bool,
    packet_bytes: usize,
    /// Whether the client asked for the downlink (and has not stopped it).
    sending: bool,
    window: Window,
    arrivals: Arrivals,
    ack_due: bool,
    heard: Instant,
    started: Instant,
    send_failed: u64,
    /// Data held back after a refused send.
    blocked_until: Option<Instant>,
    /// The downlink's RTT samples, ms.
    rtts: Vec<f64>,
    /// The last Fetch's window and its chunks.
    report: Option<CachedReport>,
    /// The client said goodbye (the session ends at the next turn, after its last
    /// acknowledgement).
    bye: bool,
}

impl<A: Clone> Session<A> {
    /// A session opened at `now` by a `Hello` from `data`.
    fn new(
        id: u32,
        data: A,
        down: bool,
        packet_bytes: u16,
        window: WindowConfig,
        now: Instant,
    ) -> Self {
        Session {
            id,
            data,
            feedback: None,
            down,
            packet_bytes: usize::from(packet_bytes),
            sending: false,
            window: Window::new(window),
            arrivals: Arrivals::default(),
            ack_due: false,
            heard: now,
            started: now,
            send_failed: 0,
            blocked_until: None,
            rtts: vec![],
            report: None,
            bye: false,
        }
    }

    /// Where replies and acknowledgements go: the feedback path if the client has one.
    fn reply_to(&self) -> (Path, A) {
        self.feedback
            .clone()
            .unwrap_or((Path::Data, self.data.clone()))
    }

    fn transmit(&self, message: Message, best_effort: bool) -> Transmit<A> {
        let (path, to) = self.reply_to();
        Transmit {
            path,
            to,
            packet: Packet {
                session: self.id,
                message,
            },
            best_effort,
        }
    }

    /// The `Report` (or `Error`) answering `Fetch` chunk `index` of a window.
    fn on_fetch(&mut self, index: u32, window: (u64, u64, u64)) -> Message {
        if self.report.as_ref().is_none_or(|r| r.0 != window) {
            let (epoch, from, to) = window;
            let counts = ms_counts(
                &self.arrivals.times,
                Instant::from_nanos(epoch),
                Instant::from_nanos(from),
                Instant::from_nanos(to),
            );
            let packets = counts.iter().map(|&(_, n)| u64::from(n)).sum();
            self.report = Some((window, report_chunks(&counts), packets));
        }
        let Some((_, chunks, packets)) = &self.report else {
            unreachable!("the report was just made")
        };
        match chunks.get(index as usize) {
            Some(c) => Message::Report {
                index,
                chunks: chunks.len() as u32,
                packets: *packets,
                entries: c.clone(),
            },
            None => Message::Error(format!("no chunk {index} (there are {})", chunks.len())),
        }
    }

    /// A packet of this session (not a `Hello`) at `now`, arrived at `at`: the reply to queue.
    fn on_message(&mut self, now: Instant, at: Instant, m: Message) -> Option<Transmit<A>> {
        self.heard = now;
        match m {
            Message::Start => self.sending = true,
            Message::Data {
                dir: Dir::Up,
                seq,
                sent_ns,
                ..
            } => {
                self.arrivals.on_data(at, seq, sent_ns);
                self.ack_due = true;
            }
            Message::Ack {
                dir: Dir::Down,
                highest_seq,
                echo_ns,
                held_us,
                ..
            } => {
                if let Some(rtt) =
                    on_ack_fields(&mut self.window, now, highest_seq, echo_ns, held_us)
                {
                    self.rtts.push(rtt);
                }
            }
            Message::Stop => {
                self.sending = false;
                return Some(self.transmit(Message::StopAck, true));
            }
            Message::Fetch {
                index,
                epoch_ns,
                from_ns,
                to_ns,
            } => {
                let m = self.on_fetch(index, (epoch_ns, from_ns, to_ns));
                return Some(self.transmit(m, true));
            }
            Message::Bye => self.bye = true,
            _ => {}
        }
        None
    }

    fn end(mut self, now: Instant) -> SessionEnd {
        let q = quantiles(&mut self.rtts, &[0.5, 0.95]);
        SessionEnd {
            session: self.id,
            elapsed: now - self.started,
            received: self.arrivals.times.len() as u64,
            sent: self.window.sent(),
            send_failed: self.send_failed,
            window: self.window.size(),
            rtt_p50_ms: q[0],
            rtt_p95_ms: q[1],
        }
    }
}

impl<A: Clone> Server<A> {
    pub fn new(settings: ServerSettings) -> Self {
        Server {
            settings,
            session: None,
            queue: VecDeque::new(),
            events: VecDeque::new(),
            errors: PacketErrors::default(),
            ended: 0,
        }
    }

    /// Whether the sessions asked for have all ended.
    pub fn is_finished(&self) -> bool {
        self.settings.sessions.is_some_and(|n| self.ended >= n)
    }

    /// Datagrams that were not packets, or not of the current session, so far.
    pub fn errors(&self) -> PacketErrors {
        self.errors
    }

    /// The time has come (a deadline of [`Server::poll_timeout`], or any turn of the driver): a
    /// session whose client said goodbye ends (after its last acknowledgement), so does one
    /// whose client has been silent for the idle time. Data held back by a refused send may go
    /// again.
    pub fn on_timeout(&mut self, now: Instant) {
        let Some(s) = self.session.as_mut() else {
            return;
        };
        s.blocked_until = None;
        if s.bye {
            if let Some(ack) = self.poll_ack(now) {
                self.queue.push_back(ack);
            }
            if let Some(s) = self.session.take() {
                self.events.push_back(ServerEvent::Ended(s.end(now)));
            }
            self.ended += 1;
        } else if now - s.heard.min(now) > self.settings.idle {
            self.events.push_back(ServerEvent::Silent {
                session: s.id,
                idle: self.settings.idle,
            });
            self.session = None;
            self.ended += 1;
        }
    }

    /// A datagram read at `now`.
    pub fn on_datagram(&mut self, now: Instant, d: Datagram<'_, A>) {
        let p = match Packet::parse(d.bytes) {
            Ok(p) => p,
            Err(error) => {
                self.errors.malformed += 1;
                if self.errors.malformed <= 3 {
                    self.events.push_back(ServerEvent::Malformed {
                        from: d.from,
                        error,
                    });
                }
                return;
            }
        };
        if let Message::Hello { .. } = p.message {
            return self.on_hello(now, d, p);
        }
        let Some(s) = self.session.as_mut().filter(|s| s.id == p.session) else {
            self.errors.foreign += 1;
            return;
        };
        if let Some(reply) = s.on_message(now, d.at, p.message) {
            self.queue.push_back(reply);
        }
    }

    /// A `Hello`: refused if another session is on or its size is bad; else it opens the
    /// session (or is one more of it), names the path it came over and is answered.
    fn on_hello(&mut self, now: Instant, d: Datagram<'_, A>, p: Packet) {
        let Message::Hello {
            path,
            up,
            down,
            packet_bytes,
            client_ns,
            ..
        } = p.message
        else {
            return;
        };
        let answer = |message| Transmit {
            path: d.path,
            to: d.from.clone(),
            packet: Packet {
                session: p.session,
                message,
            },
            best_effort: true,
        };
        if self.session.as_ref().is_some_and(|s| s.id != p.session) {
            let busy = Message::Error("the server is busy with another client".into());
            return self.queue.push_back(answer(busy));
        }
        if check_packet_bytes(usize::from(packet_bytes)).is_err() {
            let bad = Message::Error(format!("bad packet size {packet_bytes}"));
            return self.queue.push_back(answer(bad));
        }
        let window = self.settings.window;
        let s = self.session.get_or_insert_with(|| {
            self.events.push_back(ServerEvent::Started {
                session: p.session,
                from: d.from.clone(),
                up,
                down,
            });
            Session::new(p.session, d.from.clone(), down, packet_bytes, window, now)
        });
        match path {
            Path::Data => s.data = d.from.clone(),
            Path::Feedback => s.feedback = Some((d.path, d.from.clone())),
        }
        s.heard = now;
        self.queue.push_back(answer(Message::HelloAck {
            path,
            echo_ns: client_ns,
            // Stamped as it leaves.
            server_ns: 0,
            boot: self.settings.boot,
        }));
    }

    /// The uplink's acknowledgement, if one is due.
    fn poll_ack(&mut self, now: Instant) -> Option<Transmit<A>> {
        let s = self.session.as_mut().filter(|s| s.ack_due)?;
        s.ack_due = false;
        let ack = s.arrivals.ack(Dir::Up, now)?;
        Some(s.transmit(ack, false))
    }

    /// The next packet to send now: the replies, then the uplink's acknowledgement, then
    /// downlink data while the client wants it and the window allows.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit<A>> {
        if let Some(mut t) = self.queue.pop_front() {
            if let Message::HelloAck { server_ns, .. } = &mut t.packet.message {
                *server_ns = now.as_nanos();
            }
            return Some(t);
        }
        if let Some(ack) = self.poll_ack(now) {
            return Some(ack);
        }
        let s = self.session.as_mut()?;
        if !(s.sending && s.down) || s.blocked_until.is_some() || !s.window.can_send() {
            return None;
        }
        let data = data_message(&mut s.window, Dir::Down, now, padding(s.packet_bytes));
        Some(Transmit {
            path: Path::Data,
            to: s.data.clone(),
            packet: Packet {
                session: s.id,
                message: data,
            },
            best_effort: false,
        })
    }

    /// The socket refused `t` (a full buffer): a data packet is counted and sent again after
    /// the next turn (at most 1 ms).
    pub fn on_send_refused(&mut self, now: Instant, t: &Transmit<A>) {
        if let Some(s) = self.session.as_mut().filter(|_| is_data(&t.packet)) {
            s.window.on_send_refused();
            s.send_failed += 1;
            s.blocked_until = Some(now + BLOCKED_RETRY);
        }
    }

    pub fn poll_event(&mut self) -> Option<ServerEvent<A>> {
        self.events.pop_front()
    }

    /// When the server next needs [`Server::on_timeout`]: the session's idle limit, or the end
    /// of a hold-back (`None` without a session).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let s = self.session.as_ref()?;
        let idle = s.heard + self.settings.idle + Duration::from_nanos(1);
        Some(s.blocked_until.map_or(idle, |b| b.min(idle)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    const ID: u32 = 0x0bad_cafe;

    fn at(m: u64) -> Instant {
        Instant::ZERO + ms(m)
    }

    fn server() -> Server<u8> {
        Server::new(ServerSettings {
            window: WindowConfig::default(),
            sessions: Some(1),
            idle: Duration::from_secs(120),
            boot: 3,
        })
    }

    /// Hands `message` of session `ID` to the server at `now`, from client address 1.
    fn receive(s: &mut Server<u8>, now: Instant, message: Message) {
        let bytes = Packet {
            session: ID,
            message,
        }
        .emit()
        .unwrap();
        let d = Datagram {
            path: Path::Data,
            from: 1,
            at: now,
            bytes: &bytes,
        };
        s.on_datagram(now, d);
    }

    fn hello(down: bool) -> Message {
        Message::Hello {
            path: Path::Data,
            up: true,
            down,
            packet_bytes: 1472,
            client_ns: 5,
            boot: 3,
        }
    }

    fn messages(s: &mut Server<u8>, now: Instant) -> Vec<Message> {
        std::iter::from_fn(|| s.poll_transmit(now))
            .map(|t| t.packet.message)
            .collect()
    }

    #[test]
    fn a_silent_client_loses_its_session_after_the_idle_time() {
        let mut s = server();
        receive(&mut s, at(0), hello(false));
        let answer = messages(&mut s, at(1));
        assert_eq!(
            answer,
            vec![Message::HelloAck {
                path: Path::Data,
                echo_ns: 5,
                server_ns: at(1).as_nanos(),
                boot: 3
            }]
        );
        // Any packet of the session puts the deadline back.
        receive(&mut s, at(60_000), Message::Start);
        let deadline = at(180_000) + Duration::from_nanos(1);
        assert_eq!(s.poll_timeout(), Some(deadline));
        s.on_timeout(at(180_000));
        assert!(!s.is_finished());
        s.on_timeout(deadline);
        assert!(s.is_finished());
        let silent = ServerEvent::Silent {
            session: ID,
            idle: Duration::from_secs(120),
        };
        assert!(matches!(
            s.poll_event(),
            Some(ServerEvent::Started { from: 1, .. })
        ));
        assert_eq!(s.poll_event(), Some(silent));
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn bad_datagrams_are_counted_and_a_bad_hello_is_refused() {
        let mut s = server();
        for junk in [
            &b"hello"[..],
            b"WS",
            &[0xff; 40],
            b"WS\x01\x09\0\0\0\x01\0\x01x",
        ] {
            let d = Datagram {
                path: Path::Data,
                from: 9,
                at: at(0),
                bytes: junk,
            };
            s.on_datagram(at(0), d);
        }
        // A packet of no session; a hello with an impossible size is refused.
        receive(&mut s, at(0), Message::Start);
        let mut bad = hello(true);
        if let Message::Hello { packet_bytes, .. } = &mut bad {
            *packet_bytes = 10;
        }
        receive(&mut s, at(0), bad);
        assert_eq!(
            s.errors(),
            PacketErrors {
                malformed: 4,
                foreign: 1
            }
        );
        let events: Vec<_> = std::iter::from_fn(|| s.poll_event()).collect();
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(matches!(events[0], ServerEvent::Malformed { from: 9, .. }));
        assert_eq!(
            messages(&mut s, at(0)),
            vec![Message::Error("bad packet size 10".into())]
        );
    }

    /// The downlink under a full socket buffer: a refused packet keeps its sequence number and
    /// the data waits for the next turn; a goodbye ends the session after the acknowledgement
    /// of the uplink data read with it.
    #[test]
    fn refused_sends_and_the_goodbye() {
        let mut s = server();
        receive(&mut s, at(0), hello(true));
        receive(&mut s, at(0), Message::Start);
        // The answer, then the initial window of 20 data packets.
        assert_eq!(messages(&mut s, at(0)).len(), 21);
        receive(
            &mut s,
            at(10),
            Message::Ack {
                dir: Dir::Down,
                received: 1,
                highest_seq: 0,
                echo_ns: 0,
                held_us: 0,
            },
        );
        let t = s.poll_transmit(at(10)).unwrap();
        assert!(matches!(t.packet.message, Message::Data { seq: 20, .. }));
        s.on_send_refused(at(10), &t);
        assert_eq!(s.poll_transmit(at(10)), None);
        assert_eq!(s.poll_timeout(), Some(at(11)));
        s.on_timeout(at(11));
        let t = s.poll_transmit(at(11)).unwrap();
        assert!(matches!(t.packet.message, Message::Data { seq: 20, .. }));
        // Uplink data and the goodbye in one read batch.
        let data = Message::Data {
            dir: Dir::Up,
            seq: 0,
            sent_ns: 0,
            padding: 0,
        };
        receive(&mut s, at(20), data);
        receive(&mut s, at(20), Message::Bye);
        s.on_timeout(at(21));
        assert!(s.is_finished());
        let ack = s.poll_transmit(at(21)).map(|t| t.packet.message);
        assert!(matches!(
            ack,
            Some(Message::Ack {
                dir: Dir::Up,
                received: 1,
                ..
            })
        ));
        let end = std::iter::from_fn(|| s.poll_event()).last();
        let Some(ServerEvent::Ended(end)) = end else {
            panic!("{end:?}")
        };
        assert_eq!((end.received, end.sent, end.send_failed), (1, 21, 1));
        assert_eq!(end.window, 21);
    }
}
