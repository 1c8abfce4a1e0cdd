//! RFC 8888 — RTP Control Protocol (RTCP) Feedback for Congestion Control ("CCFB"): the
//! message ([`CongestionControlFeedback`], wire kind 5) and the receiver's record that builds it
//! ([`CcfbRecorder`]).
//!
//! This is the information model of the RTCP packet (RTPFB, PT 205, FMT 11, RFC 8888 §3.1) and
//! nothing more, as [`TransportFeedback`](crate::wire::TransportFeedback) is that of
//! TransportLayerCC, so the simulator's sender reads what a real one reads; `wisp-net` marshals
//! it to and from the RTCP packet. What §3.1 lays out, per report block:
//!
//! * `begin_seq` (16 bits): the first RTP sequence number the block reports on, and
//!   `num_reports` (16 bits): how many consecutive sequence numbers it covers (at most 16384);
//! * per packet a 16-bit metric block: R (1 bit, received), ECN (2 bits, the packet's ECN
//!   codepoint), and the Arrival Time Offset (ATO, 13 bits): the arrival as an offset *before*
//!   the Report Timestamp in units of 1/1024 s. A value above 8189/1024 s is reported as
//!   `0x1FFE` (over-range); an unavailable measurement, or an arrival after the report
//!   timestamp, as `0x1FFF`. With R = 0 the other 15 bits are zero and are ignored;
//! * after the blocks, the Report Timestamp (RTS, 32 bits): when the report was made, as the
//!   middle 32 bits of an NTP timestamp (1/65536 s; the unit is chosen so that an ATO is an
//!   exact number of RTS units, 64 of them).
//!
//! RFC 8888 reports RTP sequence numbers per SSRC, not transport-wide ones: a report block
//! names its media SSRC. In wisp a scheme's media flow is one SSRC, so the message holds exactly
//! one report block, the packet's own sequence number (16 bits of the flow's packet number)
//! serves, and the SSRCs are the wire layer's (`wisp-net` fills the sender's and the media
//! SSRC in, as it does for TransportLayerCC). An RTCP packet with several report blocks decodes
//! to one message per block.
//!
//! The receiver ([`CcfbRecorder`]) reports every packet that arrived since the previous report:
//! one block from the first sequence number not yet covered to the highest received, the gaps
//! as R = 0 (§3.1: a packet not yet received is reported as such). The report timestamp is the
//! instant the report is made, rounded *up* to 1/65536 s so that no arrival falls after it; each
//! ATO is the offset rounded *down* to 1/1024 s, so the arrival a sender reads back (RTS − ATO)
//! is never earlier than the true one and at most 1/1024 s later.
//!
//! Interval: RFC 8888 leaves it to the congestion controller (§3.1 expects a report about once
//! per frame or per RTT; RFC 9392 works out the overhead); wisp's receivers send every
//! `feedback-interval-ms` (50 ms by default) while packets come, as their transport-wide
//! feedback does.
//!
//! Deviations:
//! * The ATO is on a 1/1024 s grid (≈ 977 µs), four times coarser than transport-wide
//!   feedback's 250 µs receive deltas; nothing is done to compensate.
//! * A packet that arrives after a report has covered its sequence number is not reported again
//!   (RFC 8888 lets later reports overlap earlier ones); it is counted as late, as with
//!   transport-wide feedback. A duplicate keeps the first arrival (§3.1).
//! * One message covers at most [`CcfbRecorder::MAX_REPORTS`] sequence numbers (the RTCP packet
//!   stays near 1 kB; RFC 8888 allows 16384); a gap that would cross that starts a new message
//!   at the next received packet, as [`TransportFeedbackRecorder`](crate::wire::TransportFeedbackRecorder)
//!   does.
//! * libwebrtc's `CongestionControlFeedbackGenerator` sends at most every 25 ms and at least
//!   every 250 ms, early on a frame's last packet, spending up to 5 % of the rate; wisp sends on
//!   its fixed interval.

use crate::packet::Ecn;
use crate::time::{Duration, Instant};
use crate::wire::{Message, Reader, WireError, Writer, frame, kind, unframe};
use std::collections::BTreeMap;

/// One packet's 16-bit metric block (RFC 8888 §3.1): R, ECN, ATO, most significant bit first.
///
/// A block with R = 0 is always all zeros (the other bits "MUST be ignored", so they are
/// cleared when read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MetricBlock(u16);

impl MetricBlock {
    /// The R bit.
    const RECEIVED: u16 = 0x8000;
    /// The ATO field.
    const ATO_MASK: u16 = 0x1FFF;
    /// ATO: the packet arrived more than 8189/1024 s before the report timestamp.
    pub const ATO_OVER_RANGE: u16 = 0x1FFE;
    /// ATO: the arrival time is unavailable, or after the report timestamp.
    pub const ATO_UNAVAILABLE: u16 = 0x1FFF;
    /// The largest ATO that is a measurement (8189/1024 s).
    pub const MAX_ATO: u16 = 0x1FFD;
    /// ATO units per second.
    pub const ATO_PER_SECOND: u64 = 1024;

    /// A packet not received.
    pub const LOST: MetricBlock = MetricBlock(0);

    /// A received packet with ECN codepoint `ecn` (2 bits) and ATO `ato` (13 bits); the higher
    /// bits of each are dropped.
    pub fn received(ecn: u8, ato: u16) -> Self {
        MetricBlock(Self::RECEIVED | (u16::from(ecn & 0b11) << 13) | (ato & Self::ATO_MASK))
    }

    /// A received packet that arrived `offset` before the report timestamp, ECN Not-ECT: the
    /// offset rounded down to 1/1024 s, `0x1FFE` above 8189/1024 s.
    pub fn at_offset(offset: Duration) -> Self {
        // In units of 1/1024 ns, so that "greater than 8189/1024 s" is decided before rounding.
        let scaled = u128::from(offset.as_nanos()) * u128::from(Self::ATO_PER_SECOND);
        let ato = if scaled > u128::from(Self::MAX_ATO) * 1_000_000_000 {
            Self::ATO_OVER_RANGE
        } else {
            (scaled / 1_000_000_000) as u16
        };
        MetricBlock::received(0, ato)
    }

    /// The same block with the ECN codepoint `ecn` (a lost block stays lost).
    pub fn with_ecn(self, ecn: Ecn) -> Self {
        match self.ato() {
            Some(ato) => MetricBlock::received(ecn.bits(), ato),
            None => self,
        }
    }

    /// The block as it is on the wire; R = 0 clears the other bits.
    pub fn from_bits(bits: u16) -> Self {
        if bits & Self::RECEIVED == 0 {
            MetricBlock::LOST
        } else {
            MetricBlock(bits)
        }
    }

    /// The 16 bits on the wire.
    pub fn bits(self) -> u16 {
        self.0
    }

    /// The R bit.
    pub fn is_received(self) -> bool {
        self.0 & Self::RECEIVED != 0
    }

    /// The two ECN bits (0 when not received).
    pub fn ecn(self) -> u8 {
        ((self.0 >> 13) & 0b11) as u8
    }

    /// The 13-bit ATO field, if received.
    pub fn ato(self) -> Option<u16> {
        self.is_received().then_some(self.0 & Self::ATO_MASK)
    }

    /// The arrival's offset before the report timestamp, if received and measured (not
    /// `0x1FFE` or `0x1FFF`).
    pub fn offset(self) -> Option<Duration> {
        self.ato()
            .filter(|&a| a <= Self::MAX_ATO)
            .map(|a| Duration::from_nanos(u64::from(a) * 1_000_000_000 / Self::ATO_PER_SECOND))
    }
}

/// RFC 8888 congestion control feedback on one media source (one report block), kind 5.
///
/// Payload: `begin_seq` (u16), `num_reports` (u16), the metric blocks (u16 each), the report
/// timestamp (u32), as the RTCP packet orders them (without its SSRCs and alignment padding).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CongestionControlFeedback {
    /// The RTP sequence number of `reports[0]`.
    pub begin_seq: u16,
    /// One metric block per sequence number from `begin_seq` on.
    pub reports: Vec<MetricBlock>,
    /// The report timestamp: the middle 32 bits of the NTP timestamp of when the report was
    /// made, on the receiver's clock (1/65536 s; wraps every 65536 s ≈ 18.2 h).
    pub report_timestamp: u32,
}

impl CongestionControlFeedback {
    /// The most metric blocks a report block may hold (RFC 8888 §3.1).
    pub const MAX_REPORTS: usize = 16384;
    /// Report timestamp units per ATO unit (65536 / 1024).
    pub const RTS_PER_ATO: u32 = 64;

    /// Packets reported received.
    pub fn received(&self) -> usize {
        self.reports.iter().filter(|m| m.is_received()).count()
    }
}

impl Message for CongestionControlFeedback {
    fn emit(&self, out: &mut Vec<u8>) {
        debug_assert!(self.reports.len() <= Self::MAX_REPORTS);
        frame(out, kind::CONGESTION_CONTROL_FEEDBACK, |out| {
            out.put_u16(self.begin_seq);
            out.put_u16(self.reports.len() as u16);
            for m in &self.reports {
                out.put_u16(m.bits());
            }
            out.put_u32(self.report_timestamp);
        });
    }

    fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match unframe(buf)? {
            (kind::CONGESTION_CONTROL_FEEDBACK, mut p) => {
                let m = parse_payload(&mut p)?;
                p.finish()?;
                Ok(m)
            }
            (k, _) => Err(WireError::UnknownKind(k)),
        }
    }
}

fn parse_payload(p: &mut Reader<'_>) -> Result<CongestionControlFeedback, WireError> {
    let begin_seq = p.u16()?;
    let n = usize::from(p.u16()?);
    if n > CongestionControlFeedback::MAX_REPORTS {
        return Err(WireError::Invalid("more than 16384 RFC 8888 reports"));
    }
    let mut reports = Vec::with_capacity(n.min(p.remaining() / 2));
    for _ in 0..n {
        let bits = p.u16()?;
        if bits & MetricBlock::RECEIVED == 0 && bits != 0 {
            return Err(WireError::Invalid("RFC 8888 lost packet with bits set"));
        }
        reports.push(MetricBlock::from_bits(bits));
    }
    Ok(CongestionControlFeedback {
        begin_seq,
        reports,
        report_timestamp: p.u32()?,
    })
}

/// `t` in report-timestamp units (1/65536 s), rounded up, on the full 64-bit clock.
fn rts_units_ceil(t: Instant) -> u128 {
    (u128::from(t.as_nanos()) << 16).div_ceil(1_000_000_000)
}

/// The instant of `units` of 1/65536 s.
fn rts_instant(units: u128) -> Instant {
    Instant::from_nanos(((units * 1_000_000_000) >> 16).min(u128::from(u64::MAX)) as u64)
}

/// The receiver's record of arrivals and the RFC 8888 reports built from it.
///
/// Sequence numbers are unwrapped (a step of at most ±2^15 from the highest so far). A packet
/// older than what the previous report covered is not reported again and is counted as late; a
/// duplicate keeps its first arrival.
#[derive(Debug, Clone, Default)]
pub struct CcfbRecorder {
    /// Unwrapped sequence number → first arrival and the ECN codepoint it arrived with, not
    /// yet reported.
    arrivals: BTreeMap<i64, (Instant, Ecn)>,
    highest: Option<i64>,
    /// The first sequence number the next report may cover.
    next_base: Option<i64>,
    /// Packets that came after a report had covered their sequence number, or twice.
    pub late_or_duplicate: u64,
}

impl CcfbRecorder {
    /// The most sequence numbers one message covers (2 bytes each: the RTCP packet stays near
    /// 1 kB).
    pub const MAX_REPORTS: i64 = 500;

    pub fn new() -> Self {
        CcfbRecorder::default()
    }

    /// Records a Not-ECT packet with RTP sequence number `seq` that arrived at `arrival`.
    pub fn on_packet(&mut self, seq: u16, arrival: Instant) {
        self.on_packet_ecn(seq, arrival, Ecn::NotEct);
    }

    /// Records a packet with RTP sequence number `seq` that arrived at `arrival` with the ECN
    /// codepoint `ecn` (RFC 8888 §3.1 reports it in the packet's metric block).
    pub fn on_packet_ecn(&mut self, seq: u16, arrival: Instant, ecn: Ecn) {
        let unwrapped = match self.highest {
            None => i64::from(seq),
            Some(h) => h + i64::from(seq.wrapping_sub(h as u16) as i16),
        };
        if self.next_base.is_some_and(|b| unwrapped < b) || self.arrivals.contains_key(&unwrapped) {
            self.late_or_duplicate += 1;
            return;
        }
        self.arrivals.insert(unwrapped, (arrival, ecn));
        self.highest = Some(self.highest.map_or(unwrapped, |h| h.max(unwrapped)));
    }

    /// Whether packets wait to be reported.
    pub fn has_pending(&self) -> bool {
        !self.arrivals.is_empty()
    }

    /// The reports, made at `now`, on everything recorded since the previous call: usually one
    /// message, none if nothing arrived. `now` must not be before any arrival recorded.
    pub fn take_feedback(&mut self, now: Instant) -> Vec<CongestionControlFeedback> {
        let arrivals = core::mem::take(&mut self.arrivals);
        let rts_units = rts_units_ceil(now);
        let rts = rts_instant(rts_units);
        let report_timestamp = rts_units as u32;
        let mut out: Vec<CongestionControlFeedback> = vec![];
        let mut base = 0i64;
        for (&seq, &(at, ecn)) in &arrivals {
            if out.is_empty() || seq - base >= Self::MAX_REPORTS {
                // A new message starts at the first sequence number not yet covered, unless
                // the gap to this one is too long: then it starts here.
                base = self
                    .next_base
                    .filter(|&b| b <= seq && seq - b < Self::MAX_REPORTS)
                    .unwrap_or(seq);
                out.push(CongestionControlFeedback {
                    begin_seq: base as u16,
                    reports: vec![],
                    report_timestamp,
                });
            }
            let m = out.last_mut().expect("a message");
            m.reports.resize((seq - base) as usize, MetricBlock::LOST);
            m.reports.push(match rts.checked_duration_since(at) {
                Some(offset) => MetricBlock::at_offset(offset).with_ecn(ecn),
                // After the report timestamp (RFC 8888 §3.1); cannot happen when `now` is not
                // before the arrival, as the timestamp is rounded up.
                None => MetricBlock::received(ecn.bits(), MetricBlock::ATO_UNAVAILABLE),
            });
            self.next_base = Some(seq + 1);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Feedback;
    use proptest::prelude::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// RFC 8888 §3.1's metric block, bit by bit as the RFC draws it: bit 0 (the most
    /// significant of the 16) is R, bits 1–2 are ECN, bits 3–15 the ATO.
    #[test]
    fn metric_block_bits_as_the_rfc_draws_them() {
        // R = 1, ECN = 0b10 (ECT(0), RFC 3168 §5), ATO = 512 (half a second, the RFC's own
        // example: "an ATO value of 512 indicates that the corresponding RTP packet arrived
        // exactly half a second before" the RTS).
        let m = MetricBlock::received(0b10, 512);
        // 1 | 10 | 0 0010 0000 0000
        assert_eq!(m.bits(), 0b1100_0010_0000_0000);
        assert_eq!(m.bits().to_be_bytes(), [0xC2, 0x00]);
        assert_eq!(m.offset(), Some(Duration::from_millis(500)));
        assert_eq!(
            MetricBlock::at_offset(Duration::from_millis(500)).bits(),
            0x8200
        );
        // R = 0: all other bits zero, and ignored when read.
        assert_eq!(MetricBlock::LOST.bits(), 0);
        assert_eq!(MetricBlock::from_bits(0x7FFF), MetricBlock::LOST);
        assert_eq!(MetricBlock::from_bits(0x7FFF).ato(), None);
        // "greater than 8189/1024 seconds (the value that would be coded as 0x1FFD), the
        // value 0x1FFE MUST be reported".
        // 8189/1024 s is 7,997,070,312.5 ns: just below it rounds down to 8188, just above
        // it is over-range (rounding down would still give 8189).
        let below = Duration::from_nanos(7_997_070_312);
        assert_eq!(MetricBlock::at_offset(below).ato(), Some(0x1FFC));
        let above = Duration::from_nanos(7_997_070_313);
        assert_eq!(MetricBlock::at_offset(above).ato(), Some(0x1FFE));
        assert_eq!(MetricBlock::received(0, 0x1FFD).offset(), Some(below));
        assert_eq!(
            MetricBlock::at_offset(Duration::from_secs(60)).bits(),
            0x9FFE
        );
        // 0x1FFE and 0x1FFF are received, without a measurement.
        for ato in [0x1FFE, 0x1FFF] {
            let m = MetricBlock::received(0, ato);
            assert!(m.is_received());
            assert_eq!(m.offset(), None);
        }
        assert_eq!(MetricBlock::received(0b11, 0x1FFF).bits(), 0xFFFF);
    }

    /// The message's payload is the RFC's report block in its order: begin_seq, num_reports,
    /// the metric blocks, the report timestamp.
    #[test]
    fn fixed_bytes_and_round_trip() {
        let m = CongestionControlFeedback {
            begin_seq: 0xFFFE,
            reports: vec![
                MetricBlock::received(0, 3),
                MetricBlock::LOST,
                MetricBlock::received(0, 0x1FFF),
            ],
            report_timestamp: 0x0102_0304,
        };
        let fb = Feedback::encode(&m);
        assert_eq!(fb.kind(), kind::CONGESTION_CONTROL_FEEDBACK);
        assert_eq!(
            fb.as_bytes(),
            [
                5, 0, 14, // kind 5, 14 bytes
                0xFF, 0xFE, // begin_seq
                0, 3, // num_reports
                0x80, 3, // R, ATO 3
                0, 0, // lost
                0x9F, 0xFF, // R, ATO unavailable
                1, 2, 3, 4, // RTS
            ]
        );
        assert_eq!(fb.decode::<CongestionControlFeedback>(), Ok(m));
        assert_eq!(
            CongestionControlFeedback::parse(&[5, 0, 10, 0, 0, 0, 1, 0x40, 0, 0, 0, 0, 0]),
            Err(WireError::Invalid("RFC 8888 lost packet with bits set"))
        );
        assert_eq!(
            CongestionControlFeedback::parse(&[5, 0, 10, 0, 0, 0, 2, 0x80, 0, 0, 0, 0, 0]),
            Err(WireError::Truncated { needed: 2 })
        );
        assert_eq!(
            CongestionControlFeedback::parse(&[5, 0, 10, 0, 0, 0x40, 1, 0x80, 0, 0, 0, 0, 0]),
            Err(WireError::Invalid("more than 16384 RFC 8888 reports"))
        );
    }

    #[test]
    fn recorder_quantises_to_1024ths_before_the_rounded_up_timestamp() {
        let mut r = CcfbRecorder::new();
        let t0 = Instant::from_secs(10) + Duration::from_micros(1234);
        for s in 0u16..20 {
            r.on_packet(100 + s, t0 + Duration::from_micros(1100 * u64::from(s)));
        }
        let now = t0 + ms(50);
        let fbs = r.take_feedback(now);
        assert_eq!(fbs.len(), 1);
        let m = &fbs[0];
        assert_eq!((m.begin_seq, m.reports.len()), (100, 20));
        // RTS = ⌈now · 65536⌉ in 1/65536 s (the middle 32 bits of the NTP time).
        let rts_ns = u128::from(now.as_nanos()) << 16;
        let rts = rts_ns.div_ceil(1_000_000_000);
        assert_eq!(u128::from(m.report_timestamp), rts);
        let rts_at = (rts * 1_000_000_000) >> 16;
        for (k, b) in m.reports.iter().enumerate() {
            let at = t0 + Duration::from_micros(1100 * k as u64);
            let offset = rts_at - u128::from(at.as_nanos());
            assert_eq!(
                u128::from(b.ato().unwrap()),
                offset * 1024 / 1_000_000_000,
                "seq {k}"
            );
            // Read back: never earlier than the arrival, at most 1/1024 s later.
            let back = rts_at - u128::from(b.offset().unwrap().as_nanos());
            let late = back as i128 - i128::from(at.as_nanos());
            assert!((0..=976_563).contains(&late), "{late}");
        }
    }

    /// Each packet's block carries the codepoint it arrived with (RFC 8888 §3.1), the ATO
    /// unchanged by it; a lost packet's block stays all zeros.
    #[test]
    fn recorder_reports_each_packets_ecn_codepoint() {
        let mut r = CcfbRecorder::new();
        let t = Instant::from_secs(1);
        r.on_packet_ecn(1, t, Ecn::Ect1);
        r.on_packet_ecn(2, t, Ecn::Ce);
        r.on_packet(4, t);
        r.on_packet_ecn(5, t + ms(1), Ecn::Ect0);
        let m = &r.take_feedback(t + ms(10))[0];
        let ecn: Vec<u8> = m.reports.iter().map(|b| b.ecn()).collect();
        assert_eq!(ecn, [0b01, 0b11, 0b00, 0b00, 0b10]);
        assert!(!m.reports[2].is_received());
        assert_eq!(m.reports[1].ato(), m.reports[3].ato());
        assert_eq!(m.reports[4].ato(), Some(9)); // ⌊9 · 1.024⌋
        // And through the wire.
        let back: CongestionControlFeedback = Feedback::encode(m).decode().unwrap();
        assert_eq!(&back, m);
    }

    #[test]
    fn recorder_reports_losses_continues_and_skips_late_packets() {
        let mut r = CcfbRecorder::new();
        let t = Instant::from_secs(1);
        r.on_packet(5, t);
        r.on_packet(8, t + ms(2));
        r.on_packet(8, t + ms(3)); // a duplicate keeps the first arrival
        let m = &r.take_feedback(t + ms(10))[0];
        assert_eq!(m.begin_seq, 5);
        let received: Vec<bool> = m.reports.iter().map(|b| b.is_received()).collect();
        assert_eq!(received, [true, false, false, true]);
        assert_eq!(m.reports[3].ato(), Some(8)); // 8 ms before: ⌊8.0 · 1.024⌋
        assert_eq!(r.late_or_duplicate, 1);
        // An empty interval: no report.
        assert!(r.take_feedback(t + ms(60)).is_empty());
        // The next report starts after the last covered, the loss of 9 included; 6, late,
        // is not reported again.
        r.on_packet(10, t + ms(100));
        r.on_packet(6, t + ms(101));
        assert_eq!(r.late_or_duplicate, 2);
        let m = &r.take_feedback(t + ms(110))[0];
        assert_eq!((m.begin_seq, m.reports.len()), (9, 2));
        assert_eq!(m.reports[0], MetricBlock::LOST);
        // Over 8189/1024 s before the report: over-range.
        r.on_packet(11, t + ms(200));
        let m = &r.take_feedback(t + Duration::from_secs(9))[0];
        assert_eq!(m.reports[0].ato(), Some(MetricBlock::ATO_OVER_RANGE));
    }

    #[test]
    fn recorder_unwraps_sequence_numbers_and_splits_long_gaps() {
        let mut r = CcfbRecorder::new();
        let t = Instant::from_secs(5);
        r.on_packet(65_534, t);
        r.on_packet(1, t + ms(2));
        r.on_packet(2000, t + ms(3));
        let fbs = r.take_feedback(t + ms(5));
        assert_eq!(fbs.len(), 2);
        assert_eq!((fbs[0].begin_seq, fbs[0].reports.len()), (65_534, 4));
        assert_eq!(fbs[0].received(), 2);
        assert_eq!((fbs[1].begin_seq, fbs[1].reports.len()), (2000, 1));
        assert_eq!(fbs[0].report_timestamp, fbs[1].report_timestamp);
    }

    proptest! {
        #[test]
        fn round_trips(
            begin in any::<u16>(), rts in any::<u32>(),
            bits in proptest::collection::vec(any::<u16>(), 0..300),
        ) {
            let reports = bits.into_iter().map(MetricBlock::from_bits).collect();
            let m = CongestionControlFeedback { begin_seq: begin, reports, report_timestamp: rts };
            prop_assert_eq!(Feedback::encode(&m).decode::<CongestionControlFeedback>(), Ok(m));
        }

        #[test]
        fn recorder_reports_every_packet_once_within_a_tick(
            packets in proptest::collection::vec((any::<u16>(), 0u64..5_000_000_000), 1..200),
        ) {
            let mut r = CcfbRecorder::new();
            let mut latest = Instant::ZERO;
            for &(seq, at) in &packets {
                r.on_packet(seq, Instant::from_nanos(at));
                latest = latest.max(Instant::from_nanos(at));
            }
            let fbs = r.take_feedback(latest);
            prop_assert!(fbs.len() <= packets.len());
            let received: usize = fbs.iter().map(|f| f.received()).sum();
            prop_assert_eq!(received as u64 + r.late_or_duplicate, packets.len() as u64);
            for f in &fbs {
                prop_assert!(f.reports.len() as i64 <= CcfbRecorder::MAX_REPORTS);
                prop_assert!(f.reports.last().is_some_and(|b| b.is_received()));
                for b in &f.reports {
                    prop_assert!(b.ato() != Some(MetricBlock::ATO_UNAVAILABLE));
                }
                prop_assert_eq!(Feedback::encode(f).decode::<CongestionControlFeedback>(), Ok(f.clone()));
            }
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = CongestionControlFeedback::parse(&bytes);
        }
    }
}
