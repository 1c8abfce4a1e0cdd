//! The ACK-clocked sender every TCP scheme shares (see the [module doc](super) for the specs).

use super::ack::TcpAck;
use super::rtt::RttEstimator;
use super::{AckSample, DUP_THRESH, RoundSample, TcpParams, Window, WindowAdjustment};
use crate::controller::{Allowance, SendContext, Sender, SenderStats};
use crate::packet::DataHeader;
use crate::time::{Duration, Instant};
use crate::units::DataSize;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Sent, neither acknowledged nor declared lost: part of RFC 6675's pipe.
    Outstanding,
    Acked,
    /// Declared lost; `by_rto` if by a retransmission timeout (undone if it was spurious).
    Lost {
        by_rto: bool,
    },
}

#[derive(Clone, Copy, Debug)]
struct SentPacket {
    send_time: Instant,
    size: u64,
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecoveryKind {
    /// Fast recovery after a loss detected by ACKs (RFC 6675 §5).
    Fast,
    /// After a retransmission timeout: the window grows from the loss window, but losses of
    /// packets sent before the timeout are not new congestion events.
    Timeout,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Recovery {
    /// RFC 6675's RecoveryPoint (RFC 6582's `recover`): the highest sequence number sent when
    /// recovery began.
    point: u64,
    kind: RecoveryKind,
}

/// The state to restore if a timeout turns out to be spurious (RFC 3522).
#[derive(Clone, Debug)]
struct Undo<W> {
    window: Window,
    adjustment: W,
    recovery: Option<Recovery>,
    /// The highest sequence number sent before the first timeout of the series.
    highest: u64,
}

/// Tracks rounds: the first packet sent after a round ends is timed; its ACK ends the round.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rounds {
    marker: u64,
    marker_sent: Option<Instant>,
    sent: u64,
    min_rtt: Option<Duration>,
    samples: u32,
}

impl Rounds {
    pub(crate) fn on_sent(&mut self, seq: u64, now: Instant, size: u64) {
        if self.marker_sent.is_none() && seq >= self.marker {
            self.marker = seq;
            self.marker_sent = Some(now);
            self.sent = 0;
        }
        if self.marker_sent.is_some() {
            self.sent += size;
        }
    }

    pub(crate) fn on_ack(
        &mut self,
        now: Instant,
        newest: u64,
        rtt: Duration,
        next_seq: u64,
    ) -> Option<RoundSample> {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.samples += 1;
        let sent_at = self.marker_sent?;
        if newest < self.marker {
            return None;
        }
        let sample = RoundSample {
            rtt: now - sent_at,
            sent: self.sent,
            min_rtt: self.min_rtt.unwrap_or(rtt),
            samples: self.samples,
        };
        self.restart(next_seq);
        Some(sample)
    }

    /// Discards the current round; the next starts with the next packet sent.
    pub(crate) fn restart(&mut self, next_seq: u64) {
        *self = Rounds {
            marker: next_seq,
            ..Rounds::default()
        };
    }
}

/// What happened to a connection, for tests and reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpCounters {
    pub packets_sent: u64,
    pub packets_acked: u64,
    /// Packets declared lost (by ACKs or by timeouts).
    pub packets_lost: u64,
    /// Packets declared lost and then acknowledged.
    pub spurious_losses: u64,
    /// Congestion events (entries into fast recovery).
    pub congestion_events: u64,
    pub timeouts: u64,
    /// Timeouts found spurious and undone.
    pub spurious_timeouts: u64,
}

/// An ACK-clocked TCP sender with window law `W`.
#[derive(Clone, Debug)]
pub struct TcpSender<W> {
    adjustment: W,
    /// The receiver's advertised window, bytes.
    rwnd: Option<u64>,
    window: Window,
    rtt: RttEstimator,
    /// Packets from `first_seq` to `next_seq − 1`; acknowledged and lost ones leave from the front.
    sent: VecDeque<SentPacket>,
    first_seq: u64,
    next_seq: u64,
    /// Bytes outstanding (RFC 6675's pipe).
    in_flight: u64,
    largest_acked: Option<u64>,
    /// RACK.xmit_ts and RACK.rtt (RFC 8985 §6.2): the most recently sent packet delivered.
    rack: Option<(Instant, Duration)>,
    recovery: Option<Recovery>,
    rto_at: Option<Instant>,
    loss_at: Option<Instant>,
    undo: Option<Undo<W>>,
    rounds: Rounds,
    counters: TcpCounters,
}

impl<W: WindowAdjustment> TcpSender<W> {
    /// A sender of `mss`-byte segments.
    pub fn new(params: &TcpParams, mss: DataSize, mut adjustment: W) -> Self {
        let mss = mss.bytes().max(1);
        let mut window = Window::new(mss, u64::from(params.initial_window) * mss);
        adjustment.on_init(&mut window);
        TcpSender {
            adjustment,
            rwnd: params.rwnd,
            window,
            rtt: RttEstimator::new(params.rto_min, params.rto_max),
            sent: VecDeque::new(),
            first_seq: 0,
            next_seq: 0,
            in_flight: 0,
            largest_acked: None,
            rack: None,
            recovery: None,
            rto_at: None,
            loss_at: None,
            undo: None,
            rounds: Rounds::default(),
            counters: TcpCounters::default(),
        }
    }

    pub fn window(&self) -> &Window {
        &self.window
    }

    pub fn adjustment(&self) -> &W {
        &self.adjustment
    }

    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    /// Bytes in flight (RFC 6675's pipe).
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// The window the sender fills: the law's [`WindowAdjustment::send_window`], at most the
    /// receiver's window.
    pub fn send_window(&self) -> u64 {
        let w = self.adjustment.send_window(&self.window);
        self.rwnd.map_or(w, |r| w.min(r))
    }

    /// In fast recovery (not after a timeout).
    pub fn in_fast_recovery(&self) -> bool {
        self.recovery.is_some_and(|r| r.kind == RecoveryKind::Fast)
    }

    pub fn counters(&self) -> TcpCounters {
        self.counters
    }

    fn packet_mut(&mut self, seq: u64) -> Option<&mut SentPacket> {
        let i = seq.checked_sub(self.first_seq)?;
        self.sent.get_mut(usize::try_from(i).ok()?)
    }

    fn on_ack(&mut self, now: Instant, ack: &TcpAck) {
        let prior_in_flight = self.in_flight;
        let mut acked = 0;
        // The most recently sent packet this ACK newly acknowledges, and its send time.
        let mut newest: Option<(u64, Instant)> = None;
        let mut acked_before_timeout = false;
        let undo_highest = self.undo.as_ref().map(|u| u.highest);
        for r in ack.ranges() {
            let lo = r.start.max(self.first_seq);
            let hi = r.end.min(self.next_seq);
            for seq in lo..hi {
                let Some(p) = self.packet_mut(seq) else { break };
                let (size, send_time, state) = (p.size, p.send_time, p.state);
                if state == State::Acked {
                    continue;
                }
                p.state = State::Acked;
                match state {
                    State::Outstanding => {
                        self.in_flight -= size;
                        acked += size;
                    }
                    State::Lost { .. } => self.counters.spurious_losses += 1,
                    State::Acked => {}
                }
                self.counters.packets_acked += 1;
                if newest.is_none_or(|(s, _)| seq > s) {
                    newest = Some((seq, send_time));
                }
                acked_before_timeout |= undo_highest.is_some_and(|h| seq <= h);
            }
        }
        let Some((newest_seq, newest_sent)) = newest else {
            return;
        };

        // RTT (RFC 6298 §2–3): every packet number is sent once, so every sample is valid.
        let rtt = now - newest_sent;
        self.rtt.on_sample(rtt);
        // RACK (RFC 8985 §6.2 step 2).
        if self.rack.is_none_or(|(x, _)| newest_sent >= x) {
            self.rack = Some((newest_sent, rtt));
        }
        self.largest_acked = Some(self.largest_acked.map_or(newest_seq, |l| l.max(newest_seq)));

        // Eifel detection (RFC 3522 §3): the first ACK after a timeout decides.
        if let Some(undo) = self.undo.take() {
            if acked_before_timeout {
                self.undo_timeout(undo);
            }
        }

        // RFC 6298 §5.2–5.3.
        self.rto_at = (self.in_flight > 0).then(|| now + self.rtt.rto());

        let was_in_fast_recovery = self.in_fast_recovery();
        let round = self.rounds.on_ack(now, newest_seq, rtt, self.next_seq);
        if let Some(lost) = self.detect_losses(now) {
            self.on_loss(now, lost, prior_in_flight);
        }
        self.prune();
        self.maybe_exit_recovery(now);

        let sample = AckSample {
            acked,
            prior_in_flight,
            rtt,
            srtt: self.rtt.srtt().unwrap_or(rtt),
            min_rtt: self.rtt.min_rtt().unwrap_or(rtt),
            owd_ns: owd_ns(ack),
            round,
            in_recovery: was_in_fast_recovery || self.in_fast_recovery(),
        };
        self.adjustment.on_ack(now, &mut self.window, &sample);
    }

    /// RFC 6675 §4 `IsLost` (DupThresh, in packet numbers) and RACK's time rule (RFC 8985
    /// §6.2 step 5); re-arms the RACK reordering timer (§6.3). Returns the highest newly lost
    /// sequence number.
    fn detect_losses(&mut self, now: Instant) -> Option<u64> {
        self.loss_at = None;
        let largest = self.largest_acked?;
        let (_, rack_rtt) = self.rack?;
        let min_rtt = self.rtt.min_rtt().unwrap_or(rack_rtt);
        let reo_wnd = (min_rtt / 4).min(self.rtt.srtt().unwrap_or(min_rtt));
        let mut lost = None;
        let mut next_deadline: Option<Instant> = None;
        for (i, p) in self.sent.iter_mut().enumerate() {
            let seq = self.first_seq + i as u64;
            if seq >= largest {
                break;
            }
            if p.state != State::Outstanding {
                continue;
            }
            let deadline = p.send_time + rack_rtt + reo_wnd;
            if largest - seq >= DUP_THRESH || now >= deadline {
                p.state = State::Lost { by_rto: false };
                self.in_flight -= p.size;
                self.counters.packets_lost += 1;
                lost = Some(seq);
            } else {
                next_deadline = Some(next_deadline.map_or(deadline, |d| d.min(deadline)));
            }
        }
        self.loss_at = next_deadline;
        lost
    }

    /// Packets up to `lost` were declared lost: a new congestion event unless they belong to the
    /// current one (RFC 6582 §3.2's `recover`, RFC 6675 §5).
    fn on_loss(&mut self, now: Instant, lost: u64, flight_size: u64) {
        if self.recovery.is_some_and(|r| lost <= r.point) {
            return;
        }
        self.recovery = Some(Recovery {
            point: self.next_seq.saturating_sub(1),
            kind: RecoveryKind::Fast,
        });
        self.counters.congestion_events += 1;
        self.adjustment
            .on_congestion_event(now, &mut self.window, flight_size);
        self.rounds.restart(self.next_seq);
    }

    /// A full ACK ends recovery: every packet up to the recovery point is acknowledged or lost,
    /// and a later one is acknowledged (RFC 6582 §3.2 step 3; RFC 6675 §5).
    fn maybe_exit_recovery(&mut self, now: Instant) {
        let Some(r) = self.recovery else { return };
        if self.largest_acked.is_none_or(|l| l <= r.point) {
            return;
        }
        let up_to_point = (r.point + 1).saturating_sub(self.first_seq);
        let outstanding_below = self
            .sent
            .iter()
            .take(usize::try_from(up_to_point).unwrap_or(usize::MAX))
            .any(|p| p.state == State::Outstanding);
        if outstanding_below {
            return;
        }
        self.recovery = None;
        if r.kind == RecoveryKind::Fast {
            self.adjustment
                .on_recovery_exit(now, &mut self.window, self.in_flight);
            self.rounds.restart(self.next_seq);
        }
    }

    /// RFC 6298 §5.4–5.7 with RFC 5681 §3.1's response.
    fn on_timeout_expired(&mut self, now: Instant) {
        if self.in_flight == 0 {
            self.rto_at = None;
            return;
        }
        self.counters.timeouts += 1;
        let first = self.rtt.backoff() == 0 && self.undo.is_none();
        if first {
            self.undo = Some(Undo {
                window: self.window.clone(),
                adjustment: self.adjustment.clone(),
                recovery: self.recovery,
                highest: self.next_seq.saturating_sub(1),
            });
        }
        let flight_size = self.in_flight;
        for p in self.sent.iter_mut() {
            if p.state == State::Outstanding {
                p.state = State::Lost { by_rto: true };
                self.counters.packets_lost += 1;
            }
        }
        self.in_flight = 0;
        self.adjustment
            .on_rto(now, &mut self.window, flight_size, first);
        self.recovery = Some(Recovery {
            point: self.next_seq.saturating_sub(1),
            kind: RecoveryKind::Timeout,
        });
        self.rtt.on_expiry();
        // The retransmission leaves now (the loss window allows one segment): time it.
        self.rto_at = Some(now + self.rtt.rto());
        self.loss_at = None;
        self.rounds.restart(self.next_seq);
    }

    /// The timeout was spurious: restore the window law and put its "lost" packets back in
    /// flight (RFC 4015 §1's undo, as Linux does).
    fn undo_timeout(&mut self, undo: Undo<W>) {
        self.counters.spurious_timeouts += 1;
        self.window = undo.window;
        self.adjustment = undo.adjustment;
        self.recovery = undo.recovery;
        for p in self.sent.iter_mut() {
            if p.state == (State::Lost { by_rto: true }) {
                p.state = State::Outstanding;
                self.in_flight += p.size;
                self.counters.packets_lost -= 1;
            }
        }
        self.rounds.restart(self.next_seq);
    }

    /// Drops resolved packets from the front (lost ones stay while a timeout may be undone).
    fn prune(&mut self) {
        let keep_lost = self.undo.is_some();
        while let Some(p) = self.sent.front() {
            let done = match p.state {
                State::Acked => true,
                State::Lost { .. } => !keep_lost,
                State::Outstanding => false,
            };
            if !done {
                break;
            }
            self.sent.pop_front();
            self.first_seq += 1;
        }
    }
}

/// The ACK's one-way delay plus clock offset, in nanoseconds, saturated to `i64`.
fn owd_ns(ack: &TcpAck) -> i64 {
    let d = i128::from(ack.recv_time.as_nanos()) - i128::from(ack.send_time.as_nanos());
    d.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

impl<W: WindowAdjustment> Sender for TcpSender<W> {
    type Feedback = TcpAck;
    type Fields = ();

    fn on_packet_sent(&mut self, now: Instant, packet: &DataHeader, _ctx: &SendContext) {
        let seq = packet.seq;
        if seq < self.next_seq {
            debug_assert!(false, "sequence numbers must increase");
            return;
        }
        if self.sent.is_empty() {
            self.first_seq = seq;
            self.next_seq = seq;
        }
        // Packets the sender was not told about are treated as acknowledged.
        while self.next_seq < seq {
            self.sent.push_back(SentPacket {
                send_time: now,
                size: 0,
                state: State::Acked,
            });
            self.next_seq += 1;
        }
        let size = packet.size.bytes();
        self.sent.push_back(SentPacket {
            send_time: now,
            size,
            state: State::Outstanding,
        });
        self.next_seq = seq + 1;
        self.in_flight += size;
        self.counters.packets_sent += 1;
        self.rounds.on_sent(seq, now, size);
        // RFC 6298 §5.1.
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    fn on_feedback(&mut self, now: Instant, ack: &TcpAck) {
        self.on_ack(now, ack);
    }

    fn allowance(&self, _now: Instant) -> Allowance {
        Allowance::Window {
            bytes: DataSize::from_bytes(self.send_window().saturating_sub(self.in_flight)),
            pacing: None,
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match (self.rto_at, self.loss_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.loss_at.is_some_and(|t| t <= now) {
            let flight_size = self.in_flight;
            if let Some(lost) = self.detect_losses(now) {
                self.on_loss(now, lost, flight_size);
                self.prune();
                self.maybe_exit_recovery(now);
            }
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.on_timeout_expired(now);
        }
    }

    fn stats(&self) -> SenderStats {
        SenderStats {
            target_rate: None,
            window: Some(DataSize::from_bytes(self.send_window())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::TcpParams;
    use super::super::harness::{Harness, Law};
    use super::*;
    use crate::time::ms;

    const MSS: u64 = 1500;

    #[test]
    fn slow_start_doubles_per_round_and_ack_clocks_the_window() {
        let mut h = Harness::new(Law::default());
        let sent = h.send_all();
        assert_eq!(sent.len(), 10, "initial window of 10 segments (RFC 6928)");
        assert_eq!(
            h.sender.poll_timeout(),
            Some(h.now + Duration::from_secs(1))
        );
        h.advance(ms(40));
        for s in sent {
            h.ack(s);
            // Each ACK frees one segment and grows the window by one: two leave.
            assert_eq!(h.send_all().len(), 2);
        }
        assert_eq!(h.sender.window().cwnd(), 20 * MSS);
        assert_eq!(h.sender.in_flight(), 20 * MSS);
        assert_eq!(h.sender.rtt().srtt(), Some(ms(40)));
        assert_eq!(
            h.law().rounds,
            1,
            "the first round ended with its first packet's ACK"
        );
    }

    #[test]
    fn dupthresh_declares_a_hole_lost_and_starts_one_recovery() {
        let mut h = Harness::new(Law::default());
        let sent = h.send_all();
        h.advance(ms(40));
        h.lose(sent[2]);
        for &s in &sent[..2] {
            h.ack(s);
        }
        h.ack(sent[3]);
        h.ack(sent[4]);
        assert_eq!(
            h.sender.counters().packets_lost,
            0,
            "two later ACKs are not enough"
        );
        assert!(!h.sender.in_fast_recovery());
        h.ack(sent[5]);
        assert_eq!(
            h.sender.counters().packets_lost,
            1,
            "three later ACKs (DupThresh)"
        );
        assert!(h.sender.in_fast_recovery());
        assert_eq!(h.law().congestion_events, 1);
        // A second hole in the same window is part of the same event.
        h.lose(sent[6]);
        for &s in &sent[7..] {
            h.ack(s);
        }
        assert_eq!(h.sender.counters().packets_lost, 2);
        assert_eq!(h.law().congestion_events, 1);
    }

    #[test]
    fn rack_time_rule_finds_a_lost_packet_with_few_later_acks() {
        let mut h = Harness::new(Law::default());
        let a = h.send(1)[0];
        h.advance(ms(1));
        let b = h.send(1)[0];
        h.lose(a);
        h.advance(ms(40));
        h.ack(b);
        // One later packet is acknowledged: not DupThresh, but RACK arms its timer for
        // a.send_time + RACK.rtt (40 ms) + min_rtt/4 (10 ms).
        assert_eq!(h.sender.counters().packets_lost, 0);
        let t = h.sender.poll_timeout().unwrap();
        assert_eq!(t, Instant::ZERO + ms(50));
        h.advance_to(t);
        assert_eq!(h.sender.counters().packets_lost, 1);
        assert!(h.sender.in_fast_recovery());
        assert_eq!(h.sender.in_flight(), 0);
    }

    #[test]
    fn full_ack_ends_recovery() {
        let mut h = Harness::new(Law::default());
        let first = h.send_all();
        h.advance(ms(40));
        h.lose(first[0]);
        h.ack_all(&first[1..4]);
        assert!(h.sender.in_fast_recovery());
        // Partial ACKs: the rest of the first flight, up to the recovery point.
        for &s in &first[4..] {
            h.ack(s);
            assert!(h.sender.in_fast_recovery());
        }
        let after = h.send_all();
        assert!(!after.is_empty());
        h.advance(ms(40));
        h.ack(after[0]);
        assert!(
            !h.sender.in_fast_recovery(),
            "a packet sent after the recovery point"
        );
        assert_eq!(h.law().recovery_exits, 1);
    }

    #[test]
    fn timeout_marks_everything_lost_and_backs_off() {
        let mut h = Harness::new(Law::default());
        let sent = h.send_all();
        for &s in &sent {
            h.lose(s);
        }
        let rto = h.sender.poll_timeout().unwrap();
        assert_eq!(rto, Instant::ZERO + Duration::from_secs(1));
        h.advance_to(rto);
        assert_eq!(h.sender.counters().timeouts, 1);
        assert_eq!(h.sender.counters().packets_lost, 10);
        assert_eq!(h.sender.window().cwnd(), MSS, "RFC 5681 loss window");
        assert_eq!(h.sender.window().ssthresh(), 7500, "half of the flight");
        let retx = h.send_all();
        assert_eq!(retx.len(), 1);
        // Backoff: the next timeout is 2 s later.
        assert_eq!(h.sender.poll_timeout(), Some(rto + Duration::from_secs(2)));
        h.lose(retx[0]);
        h.advance_to(rto + Duration::from_secs(2));
        assert_eq!(h.sender.counters().timeouts, 2);
        assert_eq!(
            h.sender.window().ssthresh(),
            7500,
            "not lowered again (RFC 5681 §3.1)"
        );
        let retx = h.send_all();
        h.advance(ms(40));
        h.ack(retx[0]);
        assert_eq!(
            h.sender.counters().spurious_timeouts,
            0,
            "a genuine timeout"
        );
        assert_eq!(
            h.sender.window().cwnd(),
            2 * MSS,
            "slow start from the loss window"
        );
        assert_eq!(h.sender.poll_timeout(), None, "nothing outstanding");
    }

    #[test]
    fn spurious_timeout_is_undone() {
        let mut h = Harness::new(Law::default());
        let sent = h.send_all();
        h.advance(ms(40));
        h.ack(sent[0]);
        let cwnd = h.sender.window().cwnd();
        let more = h.send_all();
        // A 2-second outage: nothing arrives, the timer fires.
        h.advance(Duration::from_secs(2));
        assert_eq!(h.sender.counters().timeouts, 1);
        assert_eq!(h.sender.window().cwnd(), MSS);
        let retx = h.send_all();
        assert_eq!(retx.len(), 1);
        // Then the originals arrive: the timeout was spurious.
        h.ack(sent[1]);
        assert_eq!(h.sender.counters().spurious_timeouts, 1);
        assert_eq!(h.sender.window().cwnd(), cwnd);
        assert_eq!(
            h.law().timeouts,
            0,
            "the law is back in its state before the timeout"
        );
        // Everything still unacknowledged is in flight again, the retransmission included.
        let expected = (sent.len() - 2 + more.len() + 1) as u64 * MSS;
        assert_eq!(h.sender.in_flight(), expected);
        let c = h.sender.counters();
        assert_eq!(
            (c.packets_lost, c.spurious_losses),
            (1, 1),
            "only the acknowledged one"
        );
    }

    #[test]
    fn the_receive_window_caps_what_is_in_flight() {
        let params = TcpParams {
            rwnd: Some(15 * MSS + 700),
            ..TcpParams::default()
        };
        let mut h = Harness::with_params(&params, Law::default());
        let sent = h.send_all();
        h.advance(ms(40));
        h.ack_all(&sent);
        assert_eq!(h.sender.window().cwnd(), 20 * MSS);
        assert_eq!(h.send_all().len(), 15);
        assert_eq!(h.sender.send_window(), 15 * MSS + 700);
    }

    #[test]
    fn acks_for_unknown_or_old_packets_are_ignored() {
        let mut h = Harness::new(Law::default());
        let sent = h.send_all();
        h.advance(ms(40));
        h.ack(sent[0]);
        let before = h.sender.counters();
        h.ack(sent[0]);
        h.sender.on_feedback(
            h.now,
            &TcpAck::new(
                999,
                h.now,
                h.now,
                &[super::super::ack::SeqRange {
                    start: 500,
                    end: 1000,
                }],
            ),
        );
        assert_eq!(h.sender.counters(), before);
    }
}
