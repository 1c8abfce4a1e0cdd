//! The Saturator (Winstein, Sivaraman, Balakrishnan, NSDI 2013, §5.1.1), sans-IO: the window
//! control, the trace recording, the packet format ([`wire`]) and the two ends of a session
//! ([`ClientSession`], [`Server`]). `wisp saturate` (crate `wisp-net`) drives them with real
//! sockets and a real clock; the tests below drive them over an in-memory link.
//!
//! The Saturator keeps one direction of a link *backlogged*: it keeps a window of N MTU-sized
//! packets in flight and adapts N so that the observed round-trip time stays above 750 ms (the
//! link is then "not starving for offered load") but below 3000 ms (past which a cellular
//! network may throttle or drop). Every packet that crosses the link is one delivery
//! opportunity, so the receiver's arrival instants, in whole milliseconds, are a Mahimahi trace
//! ([`trace_lines`]).
//!
//! [`Window`] follows the constants of the original tool (keithw/multisend `saturatr`, as the
//! project's reference notes on Sprout, Cellsim and Mahimahi record them): +1 packet per acknowledged packet whose
//! RTT is below 750 ms, −20 per acknowledged packet whose RTT is above 3000 ms, N between 20 and
//! 1500.
//!
//! A session, as the two state machines run it: the client says `Hello` over the data path
//! (five answered samples: the clocks' offset, [`clock_offset`]) and over the feedback path if
//! it has one; then for the warm-up and the recording it sends the uplink's `Data` under its
//! window and acknowledges the downlink's, and sends `Start` (every 200 ms until the downlink
//! flows, then every second over the feedback path: the keepalive); the server sends the
//! downlink under its own window once started and acknowledges the uplink. Each receiver
//! acknowledges a read batch at a time (the driver's turn: the acknowledgement leaves at the
//! next [`ClientSession::poll_transmit`] / [`Server::poll_transmit`]). At the end the client asks
//! `Stop` and `Fetch`es the server's uplink arrivals in `Report` chunks, every 250 ms until
//! answered (30 s at most), then says `Bye` three times. The server serves one session at a
//! time, ends one after its `Bye` or after `idle` without a packet from its client, and tells
//! other clients it is busy.
//!
//! Deviations: "in flight" counts the packets sent after the highest sequence number the
//! receiver has acknowledged (the links are FIFO), so a packet the link lost stops counting as
//! soon as a later one arrives instead of holding the window forever; the RTT of an
//! acknowledgement excludes the time the receiver held it before answering (it batches the
//! packets of one read).

mod client;
mod server;
#[cfg(test)]
mod session_tests;
pub mod wire;

pub use client::{
    ClientEvent, ClientFailure, ClientReport, ClientSession, ClientSettings, DirectionRecord,
    Progress, RecordingSettings, UpProgress,
};
pub use server::{Datagram, Server, ServerEvent, ServerSettings, SessionEnd};

use crate::{Duration, Instant};
use wire::{Dir, Message, Packet, Path};

/// How long a sender holds its data back after the socket refused a packet (a full buffer).
const BLOCKED_RETRY: Duration = Duration::from_millis(1);

/// A packet to send over one of the two paths. The server's go to an address of the driver's
/// (`to`: where the packet being answered came from, or the session's client); the client's to
/// the server's address of the path (`to` is `()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit<A = ()> {
    /// The socket: the data path's or the feedback path's.
    pub path: Path,
    pub to: A,
    pub packet: Packet,
    /// An answer to whoever asked (the server's replies): a failure to send it is not the
    /// session's and is ignored. Otherwise a refused send (a full buffer) is reported back with
    /// `on_send_refused`, and any other failure ends the run.
    pub best_effort: bool,
}

/// Counts of what went wrong with received packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PacketErrors {
    /// Datagrams that are not saturator packets (wrong magic, version, length, values).
    pub malformed: u64,
    /// Packets of another session.
    pub foreign: u64,
}

/// The next `Data` packet of a sender in direction `dir`, stamped `now`; takes its sequence
/// number from the window.
fn data_message(window: &mut Window, dir: Dir, now: Instant, padding: usize) -> Message {
    Message::Data {
        dir,
        seq: window.on_send(),
        sent_ns: now.as_nanos(),
        padding,
    }
}

/// Feeds an acknowledgement's fields to the window; the RTT (ms) when it counted.
fn on_ack_fields(
    window: &mut Window,
    now: Instant,
    highest_seq: u64,
    echo_ns: u64,
    held_us: u32,
) -> Option<f64> {
    let counted = window.on_ack(
        now,
        highest_seq,
        Instant::from_nanos(echo_ns),
        Duration::from_micros(u64::from(held_us)),
    );
    window
        .rtt()
        .filter(|_| counted)
        .map(Duration::as_millis_f64)
}

/// Whether a packet is a data packet (the only kind whose refusal holds the sender back).
fn is_data(p: &Packet) -> bool {
    matches!(p.message, Message::Data { .. })
}

/// The window's bounds and thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowConfig {
    /// Packets in flight at the start.
    pub initial: u32,
    /// Smallest and largest window, packets.
    pub min: u32,
    pub max: u32,
    /// Below this RTT the window grows by `increase` per acknowledged packet.
    pub low_rtt: Duration,
    /// Above this RTT the window shrinks by `decrease` per acknowledged packet.
    pub high_rtt: Duration,
    pub increase: u32,
    pub decrease: u32,
}

impl Default for WindowConfig {
    fn default() -> Self {
        WindowConfig {
            initial: 20,
            min: 20,
            max: 1500,
            low_rtt: Duration::from_millis(750),
            high_rtt: Duration::from_millis(3000),
            increase: 1,
            decrease: 20,
        }
    }
}

impl WindowConfig {
    /// Checks the bounds; the message names the offending value.
    pub fn validate(&self) -> Result<(), String> {
        if self.min == 0 {
            return Err("the smallest window must be at least 1 packet".into());
        }
        if self.max < self.min {
            return Err(format!(
                "the largest window ({}) is smaller than the smallest ({})",
                self.max, self.min
            ));
        }
        if !(self.min..=self.max).contains(&self.initial) {
            return Err(format!(
                "the initial window ({}) is not between {} and {}",
                self.initial, self.min, self.max
            ));
        }
        if self.high_rtt <= self.low_rtt {
            return Err("the high RTT threshold must be above the low one".into());
        }
        Ok(())
    }
}

/// The sending side of one saturated direction: sequence numbers, the window and the RTT.
#[derive(Clone, Debug)]
pub struct Window {
    cfg: WindowConfig,
    n: u32,
    next_seq: u64,
    /// Packets below this sequence number are acknowledged or known lost.
    acked_below: u64,
    last_rtt: Option<Duration>,
    /// Acknowledged packets by what they did to the window: grew, shrank, neither.
    pub grew: u64,
    pub shrank: u64,
    pub held: u64,
}

impl Window {
    pub fn new(cfg: WindowConfig) -> Self {
        Window {
            cfg,
            n: cfg.initial,
            next_seq: 0,
            acked_below: 0,
            last_rtt: None,
            grew: 0,
            shrank: 0,
            held: 0,
        }
    }

    /// The window, packets.
    pub fn size(&self) -> u32 {
        self.n
    }

    /// Packets sent and neither acknowledged nor overtaken by an acknowledged one.
    pub fn in_flight(&self) -> u64 {
        self.next_seq - self.acked_below
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.next_seq
    }

    /// The RTT of the latest acknowledgement.
    pub fn rtt(&self) -> Option<Duration> {
        self.last_rtt
    }

    /// Whether the window lets one more packet go.
    pub fn can_send(&self) -> bool {
        self.in_flight() < u64::from(self.n)
    }

    /// Takes the next sequence number for a packet about to be sent.
    pub fn on_send(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq += 1;
        s
    }

    /// The packet [`Window::on_send`] numbered last did not leave (the socket refused it): its
    /// sequence number is the next one again.
    pub fn on_send_refused(&mut self) {
        if self.next_seq > self.acked_below {
            self.next_seq -= 1;
        }
    }

    /// An acknowledgement at `now`: the highest sequence number received, the send instant it
    /// echoes (on this side's clock) and how long the receiver held it. Stale or impossible
    /// acknowledgements (a sequence number not sent yet) are ignored; returns whether it counted.
    pub fn on_ack(
        &mut self,
        now: Instant,
        highest_seq: u64,
        echo: Instant,
        held: Duration,
    ) -> bool {
        if highest_seq >= self.next_seq || highest_seq < self.acked_below {
            return false;
        }
        let newly = highest_seq + 1 - self.acked_below;
        self.acked_below = highest_seq + 1;
        let rtt = now.saturating_duration_since(echo).saturating_sub(held);
        self.last_rtt = Some(rtt);
        if rtt < self.cfg.low_rtt {
            let grow = newly.saturating_mul(u64::from(self.cfg.increase));
            self.n = (u64::from(self.n) + grow).min(u64::from(self.cfg.max)) as u32;
            self.grew += newly;
        } else if rtt > self.cfg.high_rtt {
            let shrink = newly.saturating_mul(u64::from(self.cfg.decrease));
            self.n = u64::from(self.n)
                .saturating_sub(shrink)
                .max(u64::from(self.cfg.min)) as u32;
            self.shrank += newly;
        } else {
            self.held += newly;
        }
        true
    }
}

/// The receiving side of one saturated direction: what to acknowledge, and the arrivals.
#[derive(Clone, Debug, Default)]
pub struct Arrivals {
    /// Arrival instants of the data packets, in the order read (receiver's clock).
    pub times: Vec<Instant>,
    /// The highest sequence number received, with its send instant (sender's clock) and arrival.
    pub highest: Option<(u64, u64, Instant)>,
    /// Packets that arrived with a sequence number below the highest (reordered or duplicated).
    pub out_of_order: u64,
}

impl Arrivals {
    /// A data packet arrived at `at`.
    pub fn on_data(&mut self, at: Instant, seq: u64, sent_ns: u64) {
        self.times.push(at);
        match self.highest {
            Some((h, _, _)) if seq <= h => self.out_of_order += 1,
            _ => self.highest = Some((seq, sent_ns, at)),
        }
    }

    /// The acknowledgement of direction `dir` sent at `now`: the packets received, the highest
    /// sequence number with the send time it echoes, and how long it was held (`None` before
    /// any packet).
    pub fn ack(&self, dir: Dir, now: Instant) -> Option<Message> {
        let (seq, sent_ns, at) = self.highest?;
        Some(Message::Ack {
            dir,
            received: self.times.len() as u64,
            highest_seq: seq,
            echo_ns: sent_ns,
            held_us: u32::try_from((now - at.min(now)).as_micros()).unwrap_or(u32::MAX),
        })
    }
}

/// The offset of a peer's clock from ours (`peer − ours`, ns) from handshakes `(sent, peer's
/// time, received)`: the NTP estimate `peer − (sent + received)/2` of the one with the smallest
/// RTT, and that RTT. Its error is half the difference between the two one-way delays.
pub fn clock_offset(samples: &[(u64, u64, u64)]) -> Option<(i64, Duration)> {
    let &(sent, peer, received) = samples
        .iter()
        .filter(|s| s.2 >= s.0)
        .min_by_key(|s| s.2 - s.0)?;
    let mid = (i128::from(sent) + i128::from(received)) / 2;
    let offset = (i128::from(peer) - mid).clamp(i128::from(i64::MIN), i128::from(i64::MAX));
    Some((offset as i64, Duration::from_nanos(received - sent)))
}

/// Whole milliseconds since `epoch` of the arrivals in `[from, to)`, as `(ms, packets)` in
/// increasing order of ms: a Mahimahi trace in run-length form. Arrivals need not be sorted.
pub fn ms_counts(times: &[Instant], epoch: Instant, from: Instant, to: Instant) -> Vec<(u64, u32)> {
    let mut ms: Vec<u64> = times
        .iter()
        .filter(|&&t| t >= from && t < to && t >= epoch)
        .map(|&t| (t - epoch).as_millis())
        .collect();
    ms.sort_unstable();
    let mut out: Vec<(u64, u32)> = vec![];
    for m in ms {
        match out.last_mut() {
            Some((t, n)) if *t == m => *n += 1,
            _ => out.push((m, 1)),
        }
    }
    out
}

/// A Mahimahi trace's text: one line per packet, its millisecond repeated.
pub fn trace_lines(counts: &[(u64, u32)]) -> String {
    let mut s = String::new();
    for &(ms, n) in counts {
        for _ in 0..n {
            s.push_str(&ms.to_string());
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn at(m: u64) -> Instant {
        Instant::ZERO + ms(m)
    }

    #[test]
    fn the_window_grows_below_750_ms_and_shrinks_above_3_s() {
        let mut w = Window::new(WindowConfig::default());
        assert_eq!(w.size(), 20);
        let mut sent = vec![];
        while w.can_send() {
            sent.push(w.on_send());
        }
        assert_eq!(sent.len(), 20);
        assert!(!w.can_send());
        // Five packets acknowledged at once with a 100-ms RTT: +5.
        assert!(w.on_ack(at(100), 4, at(0), Duration::ZERO));
        assert_eq!(w.size(), 25);
        assert_eq!(w.in_flight(), 15);
        // 1 s: between the thresholds, unchanged.
        assert!(w.on_ack(at(1000), 5, at(0), Duration::ZERO));
        assert_eq!(w.size(), 25);
        // 3.5 s: −20 per packet, floored at the minimum.
        assert!(w.on_ack(at(3500), 6, at(0), Duration::ZERO));
        assert_eq!(w.size(), 20);
        // The receiver's hold time is not RTT: 3.5 s less 3 s held is 0.5 s, so it grows.
        assert!(w.on_ack(at(3500), 7, at(0), ms(3000)));
        assert_eq!(w.size(), 21);
        // Stale and impossible acknowledgements are ignored.
        assert!(!w.on_ack(at(3600), 3, at(0), Duration::ZERO));
        assert!(!w.on_ack(at(3600), 20, at(0), Duration::ZERO));
        assert_eq!((w.grew, w.held, w.shrank), (6, 1, 1));
    }

    #[test]
    fn the_window_never_passes_its_bounds() {
        let cfg = WindowConfig {
            max: 30,
            ..WindowConfig::default()
        };
        let mut w = Window::new(cfg);
        for _ in 0..1000 {
            while w.can_send() {
                w.on_send();
            }
            let s = w.sent() - 1;
            w.on_ack(at(10), s, at(0), Duration::ZERO);
            assert!(w.size() <= 30);
        }
        assert_eq!(w.size(), 30);
    }

    #[test]
    fn a_lost_packet_stops_counting_when_a_later_one_is_acknowledged() {
        let mut w = Window::new(WindowConfig::default());
        for _ in 0..20 {
            w.on_send();
        }
        // Packets 0-9 lost, 10 arrives: everything up to 10 is out of flight.
        w.on_ack(at(1000), 10, at(0), Duration::ZERO);
        assert_eq!(w.in_flight(), 9);
    }

    #[test]
    fn configurations_are_checked() {
        assert!(WindowConfig::default().validate().is_ok());
        for bad in [
            WindowConfig {
                min: 0,
                initial: 0,
                ..WindowConfig::default()
            },
            WindowConfig {
                max: 10,
                ..WindowConfig::default()
            },
            WindowConfig {
                initial: 5000,
                ..WindowConfig::default()
            },
            WindowConfig {
                high_rtt: ms(100),
                ..WindowConfig::default()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn arrivals_become_trace_lines_within_the_window() {
        let times = [at(5), at(3), at(3), at(10), at(12), at(20)];
        let c = ms_counts(&times, at(2), at(3), at(20));
        assert_eq!(c, vec![(1, 2), (3, 1), (8, 1), (10, 1)]);
        assert_eq!(trace_lines(&c), "1\n1\n3\n8\n10\n");
        assert!(ms_counts(&[], at(0), at(0), at(10)).is_empty());
    }

    #[test]
    fn clock_offset_from_the_least_rtt_handshake() {
        let ms = |m: u64| m * 1_000_000;
        // The peer's clock is 1000 s ahead; 20 ms each way, then a slow 45/45 sample.
        let peer = |t: u64| t + ms(1_000_000);
        let s = [
            (ms(100), peer(ms(145)), ms(190)),
            (ms(200), peer(ms(220)), ms(240)),
        ];
        let (off, rtt) = clock_offset(&s).unwrap();
        assert_eq!(off, ms(1_000_000) as i64);
        assert_eq!(rtt, Duration::from_millis(40));
        // 10 ms out, 30 ms back: off by half the asymmetry (−10 ms); a peer behind us.
        let (off, _) = clock_offset(&[(ms(5_000), ms(10), ms(5_040))]).unwrap();
        assert_eq!(off, ms(10) as i64 - ms(5_020) as i64);
        assert_eq!(clock_offset(&[]), None);
        // A sample received before it was sent is ignored.
        assert_eq!(clock_offset(&[(ms(2), 0, ms(1))]), None);
    }

    #[test]
    fn arrivals_track_the_highest_sequence_number() {
        let mut a = Arrivals::default();
        a.on_data(at(1), 0, 7);
        a.on_data(at(2), 2, 9);
        a.on_data(at(3), 1, 8);
        assert_eq!(a.highest, Some((2, 9, at(2))));
        assert_eq!(a.out_of_order, 1);
        assert_eq!(a.times.len(), 3);
    }
}
