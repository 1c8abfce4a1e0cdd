//! A client and a server connected by an in-memory link, on synthetic time: the data path has a
//! fixed delay each way and a rate (packets per second, one packet per delivery opportunity, as
//! Mahimahi's traces count them); the feedback path has the delay only. Every datagram crosses
//! as bytes (the wire format included).

use super::wire::{Message, Packet, Path};
use super::*;
use crate::time::ms;

/// Which end a datagram goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Client,
    Server,
}

#[derive(Debug)]
struct InFlight {
    at: Instant,
    to: End,
    /// The client's socket it comes from or goes to (the server's address of the client).
    path: Path,
    bytes: Vec<u8>,
}

/// The link, the two ends and what crossed.
struct Run {
    now: Instant,
    delay: Duration,
    /// One data-path packet per this long, each way.
    gap: Duration,
    /// When the up and down data paths are next free.
    free: [Instant; 2],
    /// The server's clock less the client's.
    offset: Duration,
    client: ClientSession,
    server: Server<Path>,
    flight: Vec<InFlight>,
    /// Drops a packet on its way (`true`: lost).
    drop: Box<dyn FnMut(&Packet) -> bool>,
    /// Data arrivals on each end's clock: the client's downlink, the server's uplink.
    down_arrivals: Vec<Instant>,
    up_arrivals: Vec<Instant>,
    client_events: Vec<ClientEvent>,
    server_events: Vec<ServerEvent<Path>>,
    sent: Vec<Packet>,
}

fn settings(up: bool, down: bool) -> ClientSettings {
    ClientSettings {
        session: 0x1234_5679,
        boot: 7,
        recording: RecordingSettings {
            up,
            down,
            duration: Duration::from_secs(4),
            warmup: Duration::from_secs(2),
            packet_bytes: 1472,
            window: WindowConfig::default(),
            epoch: None,
        },
        feedback: Some("unix:/fb".into()),
    }
}

impl Run {
    /// A link of `rate` packets per second each way and 20 ms each way.
    fn new(client: ClientSettings, window: WindowConfig, rate: u64) -> Self {
        let server = Server::new(ServerSettings {
            window,
            sessions: Some(1),
            idle: Duration::from_secs(120),
            boot: 7,
        });
        Run {
            now: Instant::ZERO + ms(1000),
            delay: ms(20),
            gap: Duration::from_nanos(1_000_000_000 / rate),
            free: [Instant::ZERO; 2],
            offset: Duration::ZERO,
            client: ClientSession::new(client, Instant::ZERO + ms(1000)),
            server,
            flight: vec![],
            drop: Box::new(|_| false),
            down_arrivals: vec![],
            up_arrivals: vec![],
            client_events: vec![],
            server_events: vec![],
            sent: vec![],
        }
    }

    /// Puts a datagram on the link: over the data path after the packets ahead of it, one
    /// `gap` each, then the delay; over the feedback path after the delay.
    fn send(&mut self, to: End, path: Path, packet: Packet) {
        self.sent.push(packet.clone());
        if (self.drop)(&packet) {
            return;
        }
        let at = match path {
            Path::Data => {
                let free = &mut self.free[usize::from(to == End::Client)];
                *free = (*free).max(self.now) + self.gap;
                *free + self.delay
            }
            Path::Feedback => self.now + self.delay,
        };
        let bytes = packet.emit().unwrap();
        self.flight.push(InFlight {
            at,
            to,
            path,
            bytes,
        });
    }

    /// Both ends' turns at `now`: timers, then everything they have to send.
    fn turn(&mut self) {
        self.client.on_timeout(self.now);
        while let Some(t) = self.client.poll_transmit(self.now) {
            self.send(End::Server, t.path, t.packet);
        }
        self.client_events
            .extend(std::iter::from_fn(|| self.client.poll_event()));
        let server_now = self.now + self.offset;
        self.server.on_timeout(server_now);
        while let Some(t) = self.server.poll_transmit(server_now) {
            assert_eq!(
                t.path, t.to,
                "the server answers over the path it was reached by"
            );
            self.send(End::Client, t.to, t.packet);
        }
        self.server_events
            .extend(std::iter::from_fn(|| self.server.poll_event()));
    }

    /// Hands every datagram due by `now` to its end.
    fn deliver(&mut self) {
        self.flight.sort_by_key(|f| f.at);
        let due = self.flight.iter().take_while(|f| f.at <= self.now).count();
        for f in self.flight.drain(..due).collect::<Vec<_>>() {
            let data = matches!(
                Packet::parse(&f.bytes).unwrap().message,
                Message::Data { .. }
            );
            match f.to {
                End::Client => {
                    if data {
                        self.down_arrivals.push(f.at);
                    }
                    self.client.on_datagram(self.now, f.at, &f.bytes);
                }
                End::Server => {
                    let at = f.at + self.offset;
                    if data {
                        self.up_arrivals.push(at);
                    }
                    let d = Datagram {
                        path: f.path,
                        from: f.path,
                        at,
                        bytes: &f.bytes,
                    };
                    self.server.on_datagram(self.now + self.offset, d);
                }
            }
        }
    }

    /// Runs until the client has its outcome, then until the server has ended the session.
    fn run(&mut self) -> Result<ClientReport, ClientFailure> {
        let mut outcome = None;
        for _ in 0..10_000_000 {
            self.turn();
            if outcome.is_none() {
                outcome = self.client.result();
            }
            if let Some(r) = &outcome
                && (self.server.is_finished() || self.flight.is_empty())
            {
                return r.clone();
            }
            let server_next = self.server.poll_timeout().map(|t| t - self.offset);
            let next = [
                self.flight.iter().map(|f| f.at).min(),
                self.client.poll_timeout().filter(|_| outcome.is_none()),
                server_next,
            ]
            .into_iter()
            .flatten()
            .min()
            .expect("something to wait for");
            self.now = next.max(self.now);
            self.deliver();
        }
        panic!("the session did not end");
    }

    /// The uplink's progress events.
    fn up_progress(&self) -> Vec<UpProgress> {
        let progress = self.client_events.iter().filter_map(|e| match e {
            ClientEvent::Progress(p) => p.up.clone(),
            _ => None,
        });
        progress.collect()
    }
}

/// 500 packets a second each way, 20 ms each way: both directions stay backlogged through the
/// recording, so each 4-s trace has one line per 2-ms delivery opportunity, 2,000; the lines
/// are the packets that arrived in the window, on each end's own clock.
#[test]
fn a_recording_over_a_backlogged_link_has_a_line_per_delivery_opportunity() {
    let mut run = Run::new(settings(true, true), WindowConfig::default(), 500);
    let r = run.run().unwrap();
    assert!(r.same_clock);
    assert_eq!((r.from_ms, r.to_ms), (0.0, 4000.0));
    assert_eq!(r.handshake_rtt_ms, 2.0 * (20.0 + 2.0));
    let (up, down) = (r.up.unwrap(), r.down.unwrap());
    assert_eq!((up.packets, down.packets), (2000, 2000));
    assert!((up.mean_mbps - 6.0).abs() < 1e-9, "{up:?}");
    let epoch = Instant::from_nanos(r.epoch_ns);
    let window = (epoch, epoch + Duration::from_secs(4));
    assert_eq!(
        down.counts,
        ms_counts(&run.down_arrivals, epoch, window.0, window.1)
    );
    assert_eq!(
        up.counts,
        ms_counts(&run.up_arrivals, epoch, window.0, window.1)
    );
    // The window grows until the RTT passes 750 ms (a queue of 375 packets at 500/s), within
    // its bounds all along.
    let cfg = WindowConfig::default();
    let progress = run.up_progress();
    assert_eq!(progress.len(), 5);
    assert!(
        progress
            .iter()
            .all(|p| (cfg.min..=cfg.max).contains(&p.window))
    );
    assert!((350..=cfg.max).contains(&up.window_end), "{up:?}");
    assert!(up.rtt_p50_ms.unwrap() >= 700.0, "{up:?}");
    assert_eq!(up.send_failed, 0);
    assert_eq!(r.errors, PacketErrors::default());
    // The server's session ended on the client's goodbye, its window in bounds too.
    let Some(ServerEvent::Ended(end)) = run.server_events.last() else {
        panic!("{:?}", run.server_events)
    };
    assert!((cfg.min..=cfg.max).contains(&end.window), "{end:?}");
    assert_eq!(end.received, run.up_arrivals.len() as u64);
    assert_eq!(
        run.sent
            .iter()
            .filter(|p| p.message == Message::Bye)
            .count(),
        3
    );
}

/// A small ceiling binds: the window ends at it, and the link is still backlogged (60 packets
/// in flight over a path that holds 20 at 500/s).
#[test]
fn the_window_stays_under_its_ceiling() {
    let window = WindowConfig {
        max: 60,
        ..WindowConfig::default()
    };
    let mut s = settings(true, true);
    s.recording.window = window;
    let mut run = Run::new(s, window, 500);
    let r = run.run().unwrap();
    let up = r.up.unwrap();
    assert_eq!(up.window_end, 60);
    assert!(run.up_progress().iter().all(|p| p.window <= 60));
    assert_eq!((up.packets, r.down.unwrap().packets), (2000, 2000));
    let Some(ServerEvent::Ended(end)) = run.server_events.last() else {
        panic!()
    };
    assert_eq!(end.window, 60);
}

/// Two clocks (the server's 1000 s ahead, another boot): the offset is estimated from the
/// least-RTT handshake (exact here: the delays are symmetric), the `Fetch` asks for the window
/// on the server's clock and the uplink's trace is the same.
#[test]
fn two_clocks_are_bridged_by_the_handshake_offset() {
    let mut s = settings(true, false);
    s.boot = 8;
    let mut run = Run::new(s, WindowConfig::default(), 500);
    run.offset = Duration::from_secs(1000);
    let r = run.run().unwrap();
    assert!(!r.same_clock);
    assert_eq!(r.clock_offset_ns, 1_000_000_000_000);
    assert!(r.down.is_none());
    assert_eq!(r.up.unwrap().packets, 2000);
    let fetch = run.sent.iter().find_map(|p| match p.message {
        Message::Fetch { from_ns, .. } => Some(from_ns),
        _ => None,
    });
    assert_eq!(fetch, Some(r.epoch_ns + 1_000_000_000_000));
}

/// The first `Report` is lost: the client asks again 250 ms later and the recording completes.
#[test]
fn a_lost_report_is_fetched_again() {
    let mut run = Run::new(settings(true, false), WindowConfig::default(), 500);
    let mut lost = 0;
    run.drop = Box::new(move |p| {
        let report = matches!(p.message, Message::Report { .. });
        lost += u32::from(report);
        report && lost == 1
    });
    let r = run.run().unwrap();
    assert_eq!(r.up.unwrap().packets, 2000);
    let fetches = run
        .sent
        .iter()
        .filter(|p| matches!(p.message, Message::Fetch { index: 0, .. }));
    assert_eq!(fetches.count(), 2);
}

/// A server that never answers the end: the client gives up 30 s after the recording.
#[test]
fn a_silent_server_after_the_recording_fails_the_session() {
    let mut run = Run::new(settings(false, true), WindowConfig::default(), 500);
    run.drop = Box::new(|p| p.message == Message::StopAck);
    let started = run.now;
    assert_eq!(run.run(), Err(ClientFailure::NoReport));
    let stops = run
        .sent
        .iter()
        .filter(|p| p.message == Message::Stop)
        .count();
    // Every 250 ms for 30 s after the 6-s recording.
    assert_eq!(stops, 121);
    assert!(
        run.now - started >= Duration::from_secs(36),
        "{:?}",
        run.now
    );
}

/// A second client is turned away while a session is on.
#[test]
fn a_busy_server_turns_a_second_client_away() {
    let mut run = Run::new(settings(false, true), WindowConfig::default(), 500);
    run.turn();
    run.now += ms(100);
    run.deliver();
    run.turn();
    let mut second = settings(false, true);
    second.session = 0x1111_1111;
    run.client = ClientSession::new(second, run.now);
    run.server_events.clear();
    assert_eq!(
        run.run(),
        Err(ClientFailure::Server(
            "the server is busy with another client".into()
        ))
    );
}
