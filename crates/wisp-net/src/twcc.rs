//! Transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01,
//! RTCP RTPFB, PT 205, FMT 15): what a receiver sends back to a send-side estimator such as
//! libwebrtc's goog_cc or pion's `gcc` about every packet that carried a transport-wide sequence
//! number (RTP header extension `http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`).
//!
//! * [`TwccRecorder`] (receiver side): records each packet's 16-bit transport-wide sequence
//!   number and arrival instant, and turns what arrived since the previous call into feedback
//!   packets ([`TwccRecorder::take_feedback`]).
//! * [`decode`] (sender side, e.g. a future send-side scheme): a feedback packet's sequence
//!   numbers and arrival times.
//!
//! The wire format itself (chunks, deltas, padding) is `rtc-rtcp`'s [`TransportLayerCc`]; this
//! module decides what goes in it, as libwebrtc's `TransportFeedback` does:
//!
//! * the reference time is the first reported arrival rounded down to a multiple of 64 ms
//!   (24 bits, wraps after 12.4 days), and each receive delta is the difference of two arrival
//!   instants both rounded down to the 250 µs grid, so rounding never accumulates over a packet;
//! * a delta in [0, 63.75] ms is "small" (1 byte), otherwise "large" (2 bytes, signed, ±8.19 s);
//!   a packet whose delta does not fit even that starts a new feedback packet;
//! * statuses are run-length chunks where seven or more equal symbols follow, two-bit status
//!   vectors (seven symbols, the last one padded with "not received") otherwise;
//! * one feedback packet covers at most [`MAX_STATUSES`] sequence numbers: a gap that would cross
//!   that starts a new packet at the next received one, so the number of feedback packets never
//!   exceeds the number of received packets, whatever sequence numbers a peer sends.
//!
//! Sequence numbers are unwrapped to 64 bits (a step of at most ±2^15 from the highest so far).
//! A packet older than what the previous feedback already covered is not reported again (libwebrtc
//! re-reports within a window; pion's estimator ignores duplicates anyway) and is counted as late.
//!
//! [`decode`] never panics: any input is a [`TwccFeedback`] or a [`TwccError`].

use bytes::Bytes;
use rtc_shared::marshal::{Marshal, Unmarshal};
use rtcp::transport_feedbacks::transport_layer_cc::{
    PacketStatusChunk, RecvDelta, RunLengthChunk, StatusChunkTypeTcc, StatusVectorChunk,
    SymbolSizeTypeTcc, SymbolTypeTcc, TransportLayerCc,
};
use std::collections::BTreeMap;
use wisp_core::{Duration, Instant};

/// The feedback cadence of `wisp recv --twcc`. libwebrtc's `RemoteEstimatorProxy` sends every
/// 50–250 ms, spending about 5% of the received rate on feedback; at the rates wisp's interop
/// tests use (0.6–2 Mbit/s) that rule gives its 50 ms floor.
pub const FEEDBACK_INTERVAL: Duration = Duration::from_millis(50);

/// The most sequence numbers one feedback packet covers (its size stays below ~1.2 kB).
pub const MAX_STATUSES: i64 = 500;

/// Receive-delta resolution: 250 µs.
const TICK_NS: u64 = 250_000;
/// Reference-time resolution: 64 ms = 256 ticks.
const REF_TICKS: u64 = 256;

/// Why bytes are not a transport-wide feedback packet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TwccError {
    #[error("malformed transport-wide feedback: {0}")]
    Malformed(String),
    #[error("transport-wide feedback: {0}")]
    Inconsistent(&'static str),
}

/// One decoded feedback packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TwccFeedback {
    pub sender_ssrc: u32,
    pub media_ssrc: u32,
    /// The feedback packet counter (wraps at 256).
    pub fb_count: u8,
    /// The reference time in µs (the 24-bit field × 64 ms; not unwrapped).
    pub reference_us: i64,
    /// Every sequence number covered, from the base on, with its arrival time in µs on the
    /// reference clock (reference + cumulative deltas), or `None` when not received.
    pub packets: Vec<(u16, Option<i64>)>,
}

/// The receiving side's record of transport-wide sequence numbers and arrivals.
#[derive(Debug, Clone)]
pub struct TwccRecorder {
    sender_ssrc: u32,
    media_ssrc: u32,
    /// Unwrapped sequence number → arrival, not yet reported.
    arrivals: BTreeMap<i64, Instant>,
    highest: Option<i64>,
    /// The first sequence number the next feedback may report.
    next_base: Option<i64>,
    fb_count: u8,
    /// Packets that came after feedback had covered their sequence number, or twice.
    pub late_or_duplicate: u64,
}

impl TwccRecorder {
    /// A recorder whose feedback packets carry our SSRC `sender_ssrc`.
    pub fn new(sender_ssrc: u32) -> Self {
        TwccRecorder {
            sender_ssrc,
            media_ssrc: 0,
            arrivals: BTreeMap::new(),
            highest: None,
            next_base: None,
            fb_count: 0,
            late_or_duplicate: 0,
        }
    }

    /// Records a packet of media SSRC `media_ssrc` with transport-wide sequence number `seq`
    /// that arrived at `arrival`.
    pub fn on_packet(&mut self, seq: u16, media_ssrc: u32, arrival: Instant) {
        let unwrapped = match self.highest {
            None => i64::from(seq),
            Some(h) => h + i64::from(seq.wrapping_sub(h as u16) as i16),
        };
        self.media_ssrc = media_ssrc;
        if self.next_base.is_some_and(|b| unwrapped < b)
            || self.arrivals.insert(unwrapped, arrival).is_some()
        {
            self.late_or_duplicate += 1;
            return;
        }
        self.highest = Some(self.highest.map_or(unwrapped, |h| h.max(unwrapped)));
    }

    /// Whether packets wait to be reported.
    pub fn has_pending(&self) -> bool {
        !self.arrivals.is_empty()
    }

    /// Feedback on everything recorded since the previous call, as RTCP packets (usually one).
    pub fn take_feedback(&mut self) -> Vec<TransportLayerCc> {
        let arrivals = std::mem::take(&mut self.arrivals);
        let mut out = vec![];
        let mut cur: Option<Builder> = None;
        for (&seq, &at) in &arrivals {
            let fits = cur.as_mut().is_some_and(|b| b.try_add(seq, at));
            if !fits {
                if let Some(b) = cur.take() {
                    out.push(self.finish(b));
                }
                // A new packet starts at the first sequence number not yet covered, unless the
                // gap to this one is too long: then it starts here.
                let base = self
                    .next_base
                    .filter(|&b| b <= seq && seq - b < MAX_STATUSES)
                    .unwrap_or(seq);
                let mut b = Builder::new(base, at);
                let added = b.try_add(seq, at);
                debug_assert!(added);
                cur = Some(b);
            }
            self.next_base = Some(seq + 1);
        }
        if let Some(b) = cur {
            out.push(self.finish(b));
        }
        out
    }

    fn finish(&mut self, b: Builder) -> TransportLayerCc {
        let fb = b.build(self.sender_ssrc, self.media_ssrc, self.fb_count);
        self.fb_count = self.fb_count.wrapping_add(1);
        fb
    }
}

/// One feedback packet being filled.
struct Builder {
    base: i64,
    /// The reference time in ticks (a multiple of 256).
    ref_ticks: u64,
    /// The tick of the previous received packet.
    last_tick: u64,
    symbols: Vec<SymbolTypeTcc>,
    deltas: Vec<RecvDelta>,
}

fn ticks(t: Instant) -> u64 {
    t.as_nanos() / TICK_NS
}

impl Builder {
    fn new(base: i64, first_arrival: Instant) -> Self {
        let ref_ticks = ticks(first_arrival) / REF_TICKS * REF_TICKS;
        Builder {
            base,
            ref_ticks,
            last_tick: ref_ticks,
            symbols: vec![],
            deltas: vec![],
        }
    }

    /// Adds a received packet (sequence numbers ascending); false if it does not fit.
    fn try_add(&mut self, seq: i64, at: Instant) -> bool {
        let index = seq - self.base;
        if !(self.symbols.len() as i64..MAX_STATUSES).contains(&index) {
            return false;
        }
        let tick = ticks(at);
        let delta = tick as i128 - self.last_tick as i128;
        let symbol = if (0..=255).contains(&delta) {
            SymbolTypeTcc::PacketReceivedSmallDelta
        } else if (i128::from(i16::MIN)..=i128::from(i16::MAX)).contains(&delta) {
            SymbolTypeTcc::PacketReceivedLargeDelta
        } else {
            return false;
        };
        self.symbols
            .resize(index as usize, SymbolTypeTcc::PacketNotReceived);
        self.symbols.push(symbol);
        self.deltas.push(RecvDelta {
            type_tcc_packet: symbol,
            delta: delta as i64 * (TICK_NS / 1000) as i64,
        });
        self.last_tick = tick;
        true
    }

    fn build(self, sender_ssrc: u32, media_ssrc: u32, fb_count: u8) -> TransportLayerCc {
        TransportLayerCc {
            sender_ssrc,
            media_ssrc,
            base_sequence_number: self.base as u16,
            packet_status_count: self.symbols.len() as u16,
            reference_time: ((self.ref_ticks / REF_TICKS) & 0x00ff_ffff) as u32,
            fb_pkt_count: fb_count,
            packet_chunks: chunks(&self.symbols),
            recv_deltas: self.deltas,
        }
    }
}

/// Status chunks for `symbols`: run-length where seven or more equal symbols follow (or the
/// rest is one run), two-bit vectors of seven otherwise.
fn chunks(symbols: &[SymbolTypeTcc]) -> Vec<PacketStatusChunk> {
    const VECTOR: usize = 7;
    const MAX_RUN: usize = 0x1fff;
    let mut out = vec![];
    let mut i = 0;
    while i < symbols.len() {
        let s = symbols[i];
        let run = symbols[i..]
            .iter()
            .take(MAX_RUN)
            .take_while(|&&x| x == s)
            .count();
        if run >= VECTOR || i + run == symbols.len() {
            out.push(PacketStatusChunk::RunLengthChunk(RunLengthChunk {
                type_tcc: StatusChunkTypeTcc::RunLengthChunk,
                packet_status_symbol: s,
                run_length: run as u16,
            }));
            i += run;
        } else {
            let take = VECTOR.min(symbols.len() - i);
            let mut list = symbols[i..i + take].to_vec();
            list.resize(VECTOR, SymbolTypeTcc::PacketNotReceived);
            out.push(PacketStatusChunk::StatusVectorChunk(StatusVectorChunk {
                type_tcc: StatusChunkTypeTcc::StatusVectorChunk,
                symbol_size: SymbolSizeTypeTcc::TwoBit,
                symbol_list: list,
            }));
            i += take;
        }
    }
    out
}

/// Appends the wire bytes of `fb` to `out`.
pub fn encode(fb: &TransportLayerCc, out: &mut Vec<u8>) -> Result<(), TwccError> {
    let bytes = fb
        .marshal()
        .map_err(|e| TwccError::Malformed(e.to_string()))?;
    out.extend_from_slice(&bytes);
    Ok(())
}

/// Whether `buf` starts with a transport-wide feedback packet (RTPFB, FMT 15).
pub fn is_twcc(buf: &[u8]) -> bool {
    buf.len() >= 2 && buf[1] == 205 && buf[0] & 0x1f == 15
}

/// Decodes one transport-wide feedback packet. Never panics.
pub fn decode(buf: &[u8]) -> Result<TwccFeedback, TwccError> {
    let mut b = Bytes::copy_from_slice(buf);
    let fb =
        TransportLayerCc::unmarshal(&mut b).map_err(|e| TwccError::Malformed(e.to_string()))?;
    interpret(&fb)
}

/// The sequence numbers and arrival times a parsed packet states.
pub fn interpret(fb: &TransportLayerCc) -> Result<TwccFeedback, TwccError> {
    let count = usize::from(fb.packet_status_count);
    let mut symbols = Vec::with_capacity(count);
    for c in &fb.packet_chunks {
        match c {
            PacketStatusChunk::RunLengthChunk(r) => {
                let n = usize::from(r.run_length).min(count - symbols.len());
                symbols.extend(std::iter::repeat_n(r.packet_status_symbol, n));
            }
            PacketStatusChunk::StatusVectorChunk(v) => {
                let n = v.symbol_list.len().min(count - symbols.len());
                symbols.extend_from_slice(&v.symbol_list[..n]);
            }
        }
    }
    if symbols.len() < count {
        return Err(TwccError::Inconsistent(
            "fewer statuses than the status count",
        ));
    }
    let reference_us = i64::from(fb.reference_time) * 64_000;
    let mut t = reference_us;
    let mut deltas = fb.recv_deltas.iter();
    let mut packets = Vec::with_capacity(count);
    for (k, s) in symbols.iter().enumerate() {
        let seq = fb.base_sequence_number.wrapping_add(k as u16);
        let arrival = match s {
            SymbolTypeTcc::PacketNotReceived => None,
            SymbolTypeTcc::PacketReceivedSmallDelta | SymbolTypeTcc::PacketReceivedLargeDelta => {
                let d = deltas.next().ok_or(TwccError::Inconsistent(
                    "fewer deltas than received packets",
                ))?;
                t += d.delta;
                Some(t)
            }
            SymbolTypeTcc::PacketReceivedWithoutDelta => {
                return Err(TwccError::Inconsistent("reserved status symbol"));
            }
        };
        packets.push((seq, arrival));
    }
    Ok(TwccFeedback {
        sender_ssrc: fb.sender_ssrc,
        media_ssrc: fb.media_ssrc,
        fb_count: fb.fb_pkt_count,
        reference_us,
        packets,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn us(t: Instant) -> i64 {
        (t.as_nanos() / TICK_NS * 250) as i64
    }

    fn wire(fbs: &[TransportLayerCc]) -> Vec<TwccFeedback> {
        fbs.iter()
            .map(|f| {
                let mut buf = vec![];
                encode(f, &mut buf).unwrap();
                assert!(is_twcc(&buf));
                assert_eq!(buf.len() % 4, 0);
                decode(&buf).unwrap()
            })
            .collect()
    }

    #[test]
    fn round_trip_with_losses_reordering_and_a_long_delta() {
        let mut r = TwccRecorder::new(7);
        let t0 = Instant::from_millis(1000) + Duration::from_micros(1234);
        // 0..20 every 2 ms, 5 and 6 lost, 9 after 10, then a 100 ms pause before 20.
        let mut sent = vec![];
        for s in 0u16..20 {
            if s == 5 || s == 6 {
                continue;
            }
            let at = t0 + Duration::from_millis(2 * u64::from(s));
            sent.push((s, at));
        }
        sent.swap(7, 8); // 9 before 10... (indices after removing 5, 6: 7 = seq 9, 8 = seq 10)
        sent.push((20, t0 + Duration::from_millis(140)));
        for &(s, at) in &sent {
            r.on_packet(s, 99, at);
        }
        let fbs = r.take_feedback();
        assert_eq!(fbs.len(), 1);
        let d = &wire(&fbs)[0];
        assert_eq!((d.sender_ssrc, d.media_ssrc, d.fb_count), (7, 99, 0));
        assert_eq!(d.packets.len(), 21);
        assert_eq!(d.reference_us, 960_000);
        for &(s, at) in &sent {
            assert_eq!(d.packets[usize::from(s)], (s, Some(us(at))), "seq {s}");
        }
        assert_eq!(d.packets[5], (5, None));
        assert_eq!(d.packets[6], (6, None));
        // The next feedback continues where this one ended; the counter advances.
        r.on_packet(22, 99, t0 + Duration::from_millis(150));
        let d = &wire(&r.take_feedback())[0];
        assert_eq!(d.fb_count, 1);
        assert_eq!(d.packets, vec![(21, None), (22, Some(us(t0) + 150_000))]);
        // A packet the last feedback covered is late, not reported again.
        r.on_packet(21, 99, t0 + Duration::from_millis(151));
        assert_eq!(r.late_or_duplicate, 1);
        assert!(r.take_feedback().is_empty());
    }

    #[test]
    fn sequence_numbers_wrap_and_long_gaps_split() {
        let mut r = TwccRecorder::new(1);
        let t0 = Instant::from_secs(5);
        r.on_packet(65_534, 2, t0);
        r.on_packet(65_535, 2, t0 + Duration::from_millis(1));
        r.on_packet(1, 2, t0 + Duration::from_millis(2));
        // Far beyond MAX_STATUSES: a second packet; 10 s later: a third (delta beyond ±8.19 s).
        r.on_packet(2000, 2, t0 + Duration::from_millis(3));
        r.on_packet(2001, 2, t0 + Duration::from_secs(10));
        let d = wire(&r.take_feedback());
        assert_eq!(d.len(), 3);
        assert_eq!(
            d[0].packets.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![65_534, 65_535, 0, 1]
        );
        assert_eq!(d[0].packets[2].1, None);
        assert_eq!(d[1].packets, vec![(2000, Some(us(t0) + 3000))]);
        assert_eq!(d[2].packets, vec![(2001, Some(us(t0) + 10_000_000))]);
        assert_eq!(
            d.iter().map(|f| f.fb_count).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn fixed_bytes() {
        // Base 0x0102, packets 0x0102 at 64 ms + 1 ms, 0x0103 lost, 0x0104 100 ms later.
        let mut r = TwccRecorder::new(0x0a0b_0c0d);
        r.on_packet(0x0102, 0x1122_3344, Instant::from_millis(65));
        r.on_packet(0x0104, 0x1122_3344, Instant::from_millis(165));
        let mut buf = vec![];
        for f in r.take_feedback() {
            encode(&f, &mut buf).unwrap();
        }
        assert_eq!(
            buf,
            vec![
                0xaf,
                205,
                0x00,
                0x06, // V=2, P=1, FMT=15, RTPFB, length 6 words
                0x0a,
                0x0b,
                0x0c,
                0x0d, // sender SSRC
                0x11,
                0x22,
                0x33,
                0x44, // media SSRC
                0x01,
                0x02,
                0x00,
                0x03, // base 0x0102, 3 statuses
                0x00,
                0x00,
                0x01,
                0x00, // reference 1 (× 64 ms), fb count 0
                // two-bit vector: small, not received, large, then padding
                0b1101_0010,
                0x00, // chunk
                0x04, // small delta 4 × 250 µs = 1 ms
                0x01,
                0x90, // large delta 400 × 250 µs = 100 ms
                0x00,
                0x00,
                0x03, // padding to 32 bits, its length last (RFC 3550)
            ]
        );
    }

    #[test]
    fn long_runs_use_run_length_chunks() {
        let mut r = TwccRecorder::new(1);
        for s in 0..100u16 {
            r.on_packet(s, 2, Instant::from_millis(u64::from(s)));
        }
        let fbs = r.take_feedback();
        assert_eq!(fbs[0].packet_chunks.len(), 1);
        let d = &wire(&fbs)[0];
        assert!(d.packets.iter().all(|p| p.1.is_some()));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(decode(&[]).is_err());
        assert!(decode(&[0x8f, 205, 0, 1, 0, 0, 0, 0]).is_err());
        // A status count with no chunks behind it.
        let bad = [
            0x8f, 205, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 9, 0, 0, 0, 0,
        ];
        assert!(decode(&bad).is_err());
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn decode_never_panics_with_a_valid_header(
            len in 0u16..40, count in any::<u16>(),
            rest in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let mut b = vec![0x8f, 205];
            b.extend_from_slice(&len.to_be_bytes());
            b.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 2, 0, 5]);
            b.extend_from_slice(&count.to_be_bytes());
            b.extend_from_slice(&[0, 0, 1, 0]);
            b.extend_from_slice(&rest);
            let _ = decode(&b);
        }

        #[test]
        fn any_sequence_numbers_in_any_order_give_decodable_feedback(
            packets in proptest::collection::vec((any::<u16>(), 0u64..20_000_000_000), 1..200),
            rounds in 1usize..4,
        ) {
            let mut r = TwccRecorder::new(1);
            let mut received = 0usize;
            let mut fbs = 0usize;
            for chunk in packets.chunks(packets.len().div_ceil(rounds)) {
                for &(seq, at) in chunk {
                    r.on_packet(seq, 2, Instant::from_nanos(at));
                }
                received += chunk.len();
                for f in wire(&r.take_feedback()) {
                    fbs += 1;
                    prop_assert!(f.packets.len() as i64 <= MAX_STATUSES);
                    prop_assert!(f.packets.iter().any(|p| p.1.is_some()));
                }
            }
            // Never more feedback packets than packets received.
            prop_assert!(fbs <= received);
        }

        #[test]
        fn any_arrivals_round_trip(
            start_ms in 0u64..1_000_000_000,
            first in any::<u16>(),
            steps in proptest::collection::vec((1u16..40, 0u64..300_000, any::<bool>()), 1..300),
        ) {
            // Ascending sequence numbers (gaps = losses), arrivals that mostly advance but may
            // jump back (reordering) by up to 30 ms.
            let mut r = TwccRecorder::new(3);
            let mut seq = first;
            let mut t = start_ms * 1_000_000 + 40_000_000;
            let mut expect = BTreeMap::new();
            for (gap, dt_ns, back) in steps {
                let at = if back { t.saturating_sub(dt_ns / 10) } else { t + dt_ns * 10 };
                t = t.max(at);
                r.on_packet(seq, 4, Instant::from_nanos(at));
                expect.insert(seq, us(Instant::from_nanos(at)));
                seq = seq.wrapping_add(gap);
            }
            let got = wire(&r.take_feedback());
            let mut seen = BTreeMap::new();
            for f in &got {
                prop_assert!(f.packets.len() as i64 <= MAX_STATUSES);
                for &(s, a) in &f.packets {
                    if let Some(a) = a {
                        prop_assert!(seen.insert(s, a).is_none());
                    }
                }
            }
            // Sequence numbers here never wrap back onto themselves (≤ 300 × 39 < 65536).
            prop_assert_eq!(seen.len(), expect.len());
            for (s, a) in &expect {
                // The decoded time is on the 24-bit reference clock: compare modulo 2^24 × 64 ms.
                let m = (1i64 << 24) * 64_000;
                prop_assert_eq!(seen[s].rem_euclid(m), a.rem_euclid(m), "seq {}", s);
            }
        }
    }
}
