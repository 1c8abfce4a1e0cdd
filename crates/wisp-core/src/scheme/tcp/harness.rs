//! A role harness for the TCP sender, like quiche's `TestSender`: [`Harness::send`],
//! [`Harness::ack`], [`Harness::lose`], [`Harness::advance`], with explicit times.

use super::{
    AckSample, TcpParams, TcpReceiver, TcpSender, Window, WindowAdjustment, reno_ssthresh,
};
use crate::controller::{Allowance, Receiver, SendContext, Sender};
use crate::packet::DataHeader;
use crate::time::{Duration, Instant};
use crate::units::DataSize;
use std::collections::{BTreeMap, BTreeSet};

/// Segment size used by the harness.
pub(crate) const MSS: u64 = 1500;

/// A sender and a real receiver joined by an ideal path: an ACK reaches the sender at the
/// instant [`Harness::ack`] is called.
#[derive(Debug)]
pub(crate) struct Harness<W> {
    pub sender: TcpSender<W>,
    pub receiver: TcpReceiver,
    pub now: Instant,
    /// One-way delay stamped on deliveries (receive time = send time + this).
    pub one_way: Duration,
    headers: BTreeMap<u64, DataHeader>,
    lost: BTreeSet<u64>,
    next_seq: u64,
}

impl<W: WindowAdjustment> Harness<W> {
    pub fn new(law: W) -> Self {
        Self::with_params(&TcpParams::default(), law)
    }

    pub fn with_params(params: &TcpParams, law: W) -> Self {
        Harness {
            sender: TcpSender::new(params, DataSize::from_bytes(MSS), law),
            receiver: TcpReceiver::new(),
            now: Instant::ZERO,
            one_way: Duration::ZERO,
            headers: BTreeMap::new(),
            lost: BTreeSet::new(),
            next_seq: 0,
        }
    }

    pub fn law(&self) -> &W {
        self.sender.adjustment()
    }

    pub fn window(&self) -> &Window {
        self.sender.window()
    }

    /// Sends `n` full-size packets now, whatever the window; returns their sequence numbers.
    pub fn send(&mut self, n: usize) -> Vec<u64> {
        (0..n).map(|_| self.send_one()).collect()
    }

    fn send_one(&mut self) -> u64 {
        let h = DataHeader {
            seq: self.next_seq,
            byte_seq: self.next_seq * MSS,
            send_time: self.now,
            size: DataSize::from_bytes(MSS),
            ..DataHeader::default()
        };
        self.next_seq += 1;
        self.sender
            .on_packet_sent(self.now, &h, &SendContext::default());
        self.headers.insert(h.seq, h);
        h.seq
    }

    /// Sends as many full-size packets as the window allows now.
    pub fn send_all(&mut self) -> Vec<u64> {
        let mut out = vec![];
        loop {
            let Allowance::Window { bytes, pacing } = self.sender.allowance(self.now) else {
                panic!("a TCP sender grants a window");
            };
            assert_eq!(pacing, None);
            if bytes.bytes() < MSS {
                return out;
            }
            out.push(self.send_one());
        }
    }

    /// Packet `seq` reaches the receiver (at its send time + `one_way`) and its ACK reaches the
    /// sender now.
    pub fn ack(&mut self, seq: u64) {
        assert!(!self.lost.contains(&seq), "packet {seq} was lost");
        let h = self.headers[&seq];
        self.receiver
            .on_packet_received(h.send_time + self.one_way, &h, &());
        while let Some(fb) = self.receiver.poll_feedback(self.now) {
            self.sender.on_feedback(self.now, &fb);
        }
    }

    /// Acknowledges every packet in `seqs`.
    pub fn ack_all(&mut self, seqs: &[u64]) {
        for &s in seqs {
            self.ack(s);
        }
    }

    /// Packet `seq` never arrives.
    pub fn lose(&mut self, seq: u64) {
        self.lost.insert(seq);
    }

    pub fn advance(&mut self, d: Duration) {
        self.advance_to(self.now + d);
    }

    /// Moves time to `t`, firing the sender's timers on the way.
    pub fn advance_to(&mut self, t: Instant) {
        while let Some(x) = self.sender.poll_timeout() {
            if x > t {
                break;
            }
            self.now = self.now.max(x);
            self.sender.on_timeout(self.now);
        }
        self.now = t;
    }
}

/// A Reno-like law that records what the sender told it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Law {
    pub rounds: u32,
    pub congestion_events: u32,
    pub recovery_exits: u32,
    pub timeouts: u32,
    pub last: Option<AckSample>,
}

impl WindowAdjustment for Law {
    fn on_ack(&mut self, _now: Instant, w: &mut Window, ack: &AckSample) {
        self.rounds += u32::from(ack.round.is_some());
        self.last = Some(*ack);
        if !ack.in_recovery {
            w.slow_start(ack.acked);
        }
    }

    fn on_congestion_event(&mut self, _now: Instant, w: &mut Window, flight_size: u64) {
        self.congestion_events += 1;
        w.set_ssthresh(reno_ssthresh(flight_size, w.mss()));
        w.set_cwnd(w.ssthresh());
    }

    fn on_recovery_exit(&mut self, _now: Instant, _w: &mut Window, _flight_size: u64) {
        self.recovery_exits += 1;
    }

    fn on_rto(&mut self, _now: Instant, w: &mut Window, flight_size: u64, first: bool) {
        self.timeouts += 1;
        if first {
            w.set_ssthresh(reno_ssthresh(flight_size, w.mss()));
        }
        w.set_cwnd(w.mss());
    }
}
