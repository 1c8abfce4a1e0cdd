//! The sender's side of transport-wide feedback (libwebrtc
//! `modules/congestion_controller/rtp/transport_feedback_adapter.cc`): what was sent, by
//! transport-wide sequence number, until a [`TransportFeedback`] reports it received or lost.
//!
//! Shared by `gcc-twcc` ([`super::twcc`]) and the current `gcc` ([`crate::scheme::goog_cc`]).
//!
//! RFC 8888 feedback ([`CongestionControlFeedback`], `gcc:feedback=rfc8888`) is matched to the
//! same record and yields the same packet results ([`FeedbackAdapter::adapt_ccfb`], as
//! libwebrtc's adapter does for `CongestionControlFeedback`): the report block's RTP sequence
//! numbers are the flow's (one SSRC), and a received packet's arrival on the receiver's clock is
//! the report timestamp (unwrapped against the previous one) less its arrival time offset
//! (RFC 8888 §3.1). A packet received with the ATO `0x1FFE` (over-range) or `0x1FFF`
//! (unavailable) is reported received without an arrival.
//!
//! Deviations: the 16-bit sequence numbers are unwrapped against the highest sent (libwebrtc
//! unwraps against the previous feedback's); a packet reported once is forgotten, so a packet
//! reported lost that a later feedback reports received stays lost.

use crate::ccfb::{CongestionControlFeedback, MetricBlock};
use crate::packet::{Content, DataHeader};
use crate::time::Instant;
use crate::units::DataSize;
use crate::wire::TransportFeedback;
use std::collections::BTreeMap;

/// What the sender remembers of a packet until feedback covers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentPacket {
    pub send: Instant,
    pub size: DataSize,
    pub audio: bool,
    /// The probe cluster it was sent in, if any (libwebrtc `PacedPacketInfo::probe_cluster_id`).
    pub probe: Option<u32>,
}

impl SentPacket {
    /// What the adapter keeps of a packet the flow sent, in probe cluster `probe` if any.
    pub fn of(packet: &DataHeader, probe: Option<u32>) -> Self {
        SentPacket {
            send: packet.send_time,
            size: packet.size,
            audio: packet.content == Content::Audio,
            probe,
        }
    }
}

/// One packet a feedback reports on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketFeedback {
    pub seq: u64,
    pub sent: SentPacket,
    /// Reported received (with `arrival`, unless its arrival falls before the receiver clock's
    /// origin) or lost.
    pub received: bool,
    /// The arrival on the receiver's clock.
    pub arrival: Option<Instant>,
}

/// How many packets the adapter remembers at most (beyond, the oldest are forgotten).
const HISTORY: usize = 1 << 14;

/// Sent packets by sequence number, matched with the feedback that reports them.
#[derive(Clone, Debug, Default)]
pub struct FeedbackAdapter {
    sent: BTreeMap<u64, SentPacket>,
    highest_sent: Option<u64>,
    /// The unwrapped reference time of the previous feedback (units of 64 ms).
    reference: Option<i64>,
    /// The unwrapped report timestamp of the previous RFC 8888 feedback (1/65536 s).
    report_timestamp: Option<i64>,
    /// Bytes of the packets in `sent` (libwebrtc's data in flight).
    in_flight: DataSize,
}

impl FeedbackAdapter {
    pub fn new() -> Self {
        FeedbackAdapter::default()
    }

    /// Packet `seq` left.
    pub fn on_sent(&mut self, seq: u64, packet: SentPacket) {
        self.in_flight += packet.size;
        if let Some(old) = self.sent.insert(seq, packet) {
            self.in_flight -= old.size;
        }
        self.highest_sent = Some(self.highest_sent.map_or(seq, |h| h.max(seq)));
        while self.sent.len() > HISTORY {
            if let Some((_, old)) = self.sent.pop_first() {
                self.in_flight -= old.size;
            }
        }
    }

    /// Bytes sent that no feedback has reported yet (libwebrtc's data in flight).
    pub fn in_flight(&self) -> DataSize {
        self.in_flight
    }

    /// Takes packet `seq` out of the record, if it is there.
    fn take(&mut self, seq: u64) -> Option<SentPacket> {
        let p = self.sent.remove(&seq)?;
        self.in_flight -= p.size;
        Some(p)
    }

    /// Forgets every packet before `end`.
    fn forget_before(&mut self, end: u64) {
        let kept = self.sent.split_off(&end);
        for p in self.sent.values() {
            self.in_flight -= p.size;
        }
        self.sent = kept;
    }

    /// The packets sent and not yet reported (sequence numbers).
    pub fn outstanding(&self) -> impl Iterator<Item = u64> + '_ {
        self.sent.keys().copied()
    }

    /// The sequence number `seq` (16 bits) stands for: the one nearest the highest sent.
    pub fn unwrap_seq(&self, seq: u16) -> Option<u64> {
        let highest = self.highest_sent?;
        let back = i64::from((highest as u16).wrapping_sub(seq) as i16);
        u64::try_from(highest as i64 - back).ok()
    }

    /// The reference time (24 bits of 64 ms) unwrapped against the previous one.
    pub fn unwrap_reference(&mut self, reference: u32) -> i64 {
        const MOD: i64 = 1 << 24;
        let r = i64::from(reference);
        let unwrapped = match self.reference {
            None => r,
            Some(prev) => {
                let mut d = (r - prev).rem_euclid(MOD);
                if d >= MOD / 2 {
                    d -= MOD;
                }
                prev + d
            }
        };
        self.reference = Some(unwrapped);
        unwrapped
    }

    /// The RFC 8888 report timestamp (32 bits of 1/65536 s) unwrapped against the previous one.
    pub fn unwrap_report_timestamp(&mut self, ts: u32) -> i64 {
        let unwrapped = match self.report_timestamp {
            None => i64::from(ts),
            Some(prev) => prev + i64::from(ts.wrapping_sub(prev as u32) as i32),
        };
        self.report_timestamp = Some(unwrapped);
        unwrapped
    }

    /// Matches RFC 8888 feedback with the packets sent, as [`FeedbackAdapter::adapt`] does
    /// transport-wide feedback: appends what it reports of packets this sender sent and has not
    /// seen reported, in sequence order, to `out` (cleared first), and forgets them and every
    /// older packet.
    pub fn adapt_ccfb(&mut self, fb: &CongestionControlFeedback, out: &mut Vec<PacketFeedback>) {
        out.clear();
        let Some(base) = self.unwrap_seq(fb.begin_seq) else {
            return;
        };
        let rts = self.unwrap_report_timestamp(fb.report_timestamp);
        let per_ato = i64::from(CongestionControlFeedback::RTS_PER_ATO);
        for (k, m) in fb.reports.iter().enumerate() {
            let seq = base + k as u64;
            let Some(sent) = self.take(seq) else {
                continue;
            };
            // Arrival = RTS − ATO, in 1/65536 s on the receiver's clock (§3.1).
            let arrival = m
                .ato()
                .filter(|&a| a <= MetricBlock::MAX_ATO)
                .and_then(|a| u64::try_from(rts - i64::from(a) * per_ato).ok())
                .map(|units| {
                    Instant::from_nanos(((u128::from(units) * 1_000_000_000) >> 16) as u64)
                });
            out.push(PacketFeedback {
                seq,
                sent,
                received: m.is_received(),
                arrival,
            });
        }
        self.forget_before(base + fb.reports.len() as u64);
    }

    /// Matches a feedback with the packets sent: appends what it reports of packets this sender
    /// sent and has not seen reported, in sequence order, to `out` (cleared first), and forgets
    /// them and every older packet.
    pub fn adapt(&mut self, fb: &TransportFeedback, out: &mut Vec<PacketFeedback>) {
        out.clear();
        let Some(base) = self.unwrap_seq(fb.base_seq) else {
            return;
        };
        let reference = self.unwrap_reference(fb.reference);
        // Arrivals on the receiver's clock, ns from its (unwrapped) reference origin.
        let mut t_ns = reference * 64_000_000;
        for (k, d) in fb.deltas.iter().enumerate() {
            if let Some(d) = d {
                t_ns += i64::from(*d) * 250_000;
            }
            let seq = base + k as u64;
            // Not sent by us, or already reported: nothing to learn.
            let Some(sent) = self.take(seq) else {
                continue;
            };
            let arrival = d
                .and_then(|_| u64::try_from(t_ns).ok())
                .map(Instant::from_nanos);
            out.push(PacketFeedback {
                seq,
                sent,
                received: d.is_some(),
                arrival,
            });
        }
        // Forget what this feedback covered and anything older.
        self.forget_before(base + fb.deltas.len() as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(ms: u64) -> SentPacket {
        SentPacket {
            send: Instant::from_millis(ms),
            size: DataSize::from_bytes(1200),
            audio: false,
            probe: None,
        }
    }

    #[test]
    fn sequence_numbers_and_reference_times_unwrap() {
        let mut a = FeedbackAdapter::new();
        for seq in 65_530..65_560u64 {
            a.on_sent(seq, packet(seq - 65_000));
        }
        assert_eq!(a.unwrap_seq(65_535), Some(65_535));
        assert_eq!(a.unwrap_seq(3), Some(65_539));
        assert_eq!(a.unwrap_reference((1 << 24) - 1), (1 << 24) - 1);
        assert_eq!(a.unwrap_reference(1), (1 << 24) + 1);
        let fb = TransportFeedback {
            base_seq: 65_534,
            reference: 2,
            fb_count: 0,
            deltas: vec![Some(1), None, Some(4)],
        };
        let mut out = vec![];
        a.adapt(&fb, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].seq, 65_534);
        assert!(!out[1].received && out[1].arrival.is_none());
        // 2 × 64 ms past the origin (2^24 units after the wrap) + 5 × 250 µs.
        let origin = ((1i64 << 24) + 2) * 64_000_000;
        assert_eq!(
            out[2].arrival,
            Some(Instant::from_nanos((origin + 1_250_000) as u64))
        );
        assert!(a.outstanding().all(|s| s >= 65_537));
        // 30 sent, 7 reported or older: 23 packets of 1200 B in flight.
        assert_eq!(a.in_flight(), DataSize::from_bytes(23 * 1200));
        // Reported once: the same feedback again adds nothing.
        a.adapt(&fb, &mut out);
        assert!(out.is_empty());
        assert_eq!(a.in_flight(), DataSize::from_bytes(23 * 1200));
    }

    /// RFC 8888 feedback: arrival = RTS − ATO (1/1024 s = 64 RTS units), losses, the
    /// sequence-number wrap, the 0x1FFE/0x1FFF rule and the report timestamp's wrap.
    #[test]
    fn rfc8888_feedback_maps_to_the_same_packet_results() {
        let mut a = FeedbackAdapter::new();
        for seq in 65_530..65_560u64 {
            a.on_sent(seq, packet(seq - 65_000));
        }
        // Just below the 32-bit wrap of the report timestamp.
        let rts = u32::MAX - 99;
        let fb = CongestionControlFeedback {
            begin_seq: 65_534,
            reports: vec![
                MetricBlock::received(0, 512),
                MetricBlock::LOST,
                MetricBlock::received(0, 0),
                MetricBlock::received(0, MetricBlock::ATO_OVER_RANGE),
                MetricBlock::received(0, MetricBlock::ATO_UNAVAILABLE),
            ],
            report_timestamp: rts,
        };
        let mut out = vec![];
        a.adapt_ccfb(&fb, &mut out);
        let seqs: Vec<u64> = out.iter().map(|p| p.seq).collect();
        assert_eq!(seqs, [65_534, 65_535, 65_536, 65_537, 65_538]);
        let at = |units: i64| {
            Some(Instant::from_nanos(
                ((units as u128 * 1_000_000_000) >> 16) as u64,
            ))
        };
        let rts = i64::from(rts);
        assert_eq!(out[0].arrival, at(rts - 512 * 64));
        assert!(out[0].received);
        assert!(!out[1].received && out[1].arrival.is_none());
        assert_eq!(out[2].arrival, at(rts));
        for p in &out[3..] {
            assert!(p.received && p.arrival.is_none(), "{p:?}");
        }
        assert_eq!(out[0].sent, packet(534));
        assert!(a.outstanding().all(|s| s >= 65_539));
        assert_eq!(a.in_flight(), DataSize::from_bytes(21 * 1200));
        // The report timestamp wrapped: 200 units later, not 2^32 − 99 units earlier.
        let next = CongestionControlFeedback {
            begin_seq: 3, // 65_539
            reports: vec![MetricBlock::received(0, 1)],
            report_timestamp: 100,
        };
        a.adapt_ccfb(&next, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].arrival, at(rts + 200 - 64));
        // Reported once: again adds nothing; an empty report adds nothing.
        a.adapt_ccfb(&next, &mut out);
        assert!(out.is_empty());
        let empty = CongestionControlFeedback {
            begin_seq: 10,
            reports: vec![],
            report_timestamp: 300,
        };
        a.adapt_ccfb(&empty, &mut out);
        assert!(out.is_empty());
    }
}
