//! Transport-wide congestion control feedback (draft-holmer-rmcat-transport-wide-cc-extensions-01,
//! RTCP RTPFB, PT 205, FMT 15): what a receiver sends back to a send-side estimator such as
//! libwebrtc's goog_cc or pion's `gcc` about every packet that carried a transport-wide sequence
//! number (RTP header extension `http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01`).
//!
//! * [`TwccRecorder`] (receiver side, `wisp recv --twcc`): records each packet's 16-bit
//!   transport-wide sequence number and arrival instant, and turns what arrived since the
//!   previous call into feedback packets ([`TwccRecorder::take_feedback`]);
//! * [`to_rtcp`] / [`from_rtcp`]: the core's [`TransportFeedback`] (kind 4, what `gcc-twcc`'s
//!   halves exchange, in the simulator too) to and from the RTCP packet;
//! * [`decode`]: a feedback packet's sequence numbers and arrival times (for tests and tools).
//!
//! The wire format itself (chunks, deltas, padding) is `rtc-rtcp`'s [`TransportLayerCc`]. What
//! goes in it — the 64-ms reference time, the receive deltas on the 250-µs grid (each the
//! difference of two rounded arrivals, so rounding never accumulates), which sequence numbers a
//! packet covers (at most [`MAX_STATUSES`]; a gap that would cross that starts a new packet, so
//! there are never more feedback packets than received packets), late packets not reported
//! again — is decided in the core by [`TransportFeedbackRecorder`], as libwebrtc's
//! `TransportFeedback` does; this module adds the SSRCs and chooses the status chunks: run-length
//! where seven or more equal symbols follow, two-bit status vectors (seven symbols, the last one
//! padded with "not received") otherwise. A delta in [0, 63.75] ms is "small" (1 byte),
//! otherwise "large" (2 bytes, signed, ±8.19 s).
//!
//! [`decode`] never panics: any input is a [`TwccFeedback`] or a [`TwccError`].

use bytes::Bytes;
use rtc_shared::marshal::{Marshal, Unmarshal};
use rtcp::transport_feedbacks::transport_layer_cc::{
    PacketStatusChunk, RecvDelta, RunLengthChunk, StatusChunkTypeTcc, StatusVectorChunk,
    SymbolSizeTypeTcc, SymbolTypeTcc, TransportLayerCc,
};
use wisp_core::wire::{TransportFeedback, TransportFeedbackRecorder};
use wisp_core::{Duration, Instant};

/// The feedback cadence of `wisp recv --twcc`. libwebrtc's `RemoteEstimatorProxy` sends every
/// 50–250 ms, spending about 5% of the received rate on feedback; at the rates wisp's interop
/// tests use (0.6–2 Mbit/s) that rule gives its 50 ms floor.
pub const FEEDBACK_INTERVAL: Duration = Duration::from_millis(50);

/// The most sequence numbers one feedback packet covers (its size stays below ~1.2 kB).
pub const MAX_STATUSES: i64 = TransportFeedbackRecorder::MAX_STATUSES;

/// Receive-delta resolution: 250 µs.
const TICK_NS: u64 = 250_000;

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

/// The receiving side's record of transport-wide sequence numbers and arrivals: the core's
/// [`TransportFeedbackRecorder`] (which decides what each feedback covers and rounds the
/// arrivals), with the SSRCs the RTCP packets carry.
#[derive(Debug, Clone)]
pub struct TwccRecorder {
    sender_ssrc: u32,
    media_ssrc: u32,
    inner: TransportFeedbackRecorder,
}

impl TwccRecorder {
    /// A recorder whose feedback packets carry our SSRC `sender_ssrc`.
    pub fn new(sender_ssrc: u32) -> Self {
        TwccRecorder {
            sender_ssrc,
            media_ssrc: 0,
            inner: TransportFeedbackRecorder::new(),
        }
    }

    /// Packets that came after feedback had covered their sequence number, or twice.
    pub fn late_or_duplicate(&self) -> u64 {
        self.inner.late_or_duplicate
    }

    /// Records a packet of media SSRC `media_ssrc` with transport-wide sequence number `seq`
    /// that arrived at `arrival`.
    pub fn on_packet(&mut self, seq: u16, media_ssrc: u32, arrival: Instant) {
        self.media_ssrc = media_ssrc;
        self.inner.on_packet(seq, arrival);
    }

    /// Whether packets wait to be reported.
    pub fn has_pending(&self) -> bool {
        self.inner.has_pending()
    }

    /// Feedback on everything recorded since the previous call, as RTCP packets (usually one).
    pub fn take_feedback(&mut self) -> Vec<TransportLayerCc> {
        self.inner
            .take_feedback()
            .iter()
            .map(|f| to_rtcp(f, self.sender_ssrc, self.media_ssrc))
            .collect()
    }
}

/// The RTCP packet for a core [`TransportFeedback`].
pub fn to_rtcp(fb: &TransportFeedback, sender_ssrc: u32, media_ssrc: u32) -> TransportLayerCc {
    let symbols: Vec<SymbolTypeTcc> = fb
        .deltas
        .iter()
        .map(|d| match d {
            None => SymbolTypeTcc::PacketNotReceived,
            Some(d) if (0..=255).contains(d) => SymbolTypeTcc::PacketReceivedSmallDelta,
            Some(_) => SymbolTypeTcc::PacketReceivedLargeDelta,
        })
        .collect();
    let recv_deltas: Vec<RecvDelta> = fb
        .deltas
        .iter()
        .zip(&symbols)
        .filter_map(|(d, &s)| {
            d.map(|d| RecvDelta {
                type_tcc_packet: s,
                delta: i64::from(d) * (TICK_NS / 1000) as i64,
            })
        })
        .collect();
    let mut packet_chunks = chunks(&symbols);
    if recv_deltas.is_empty() && packet_chunks.len() % 2 == 0 {
        split_a_run(&mut packet_chunks);
    }
    TransportLayerCc {
        sender_ssrc,
        media_ssrc,
        base_sequence_number: fb.base_seq,
        packet_status_count: fb.deltas.len() as u16,
        reference_time: fb.reference & TransportFeedback::MAX_REFERENCE,
        fb_pkt_count: fb.fb_count,
        packet_chunks,
        recv_deltas,
    }
}

/// Splits one run-length chunk of two or more statuses into two. A packet with no receive
/// deltas whose status chunks end exactly at its end (an even number of them: no padding)
/// is refused as too short by pion's parser and by `rtc-rtcp`'s (both stop when the next chunk
/// would *reach* the packet's end); an odd number is followed by two bytes of padding, which
/// both read. Only a report of 8192 or more lost packets and none received needs it.
fn split_a_run(chunks: &mut Vec<PacketStatusChunk>) {
    let at = chunks
        .iter()
        .position(|c| matches!(c, PacketStatusChunk::RunLengthChunk(r) if r.run_length >= 2));
    if let Some(i) = at
        && let PacketStatusChunk::RunLengthChunk(r) = &mut chunks[i]
    {
        let first = r.run_length / 2;
        let rest = RunLengthChunk {
            run_length: r.run_length - first,
            ..r.clone()
        };
        r.run_length = first;
        chunks.insert(i + 1, PacketStatusChunk::RunLengthChunk(rest));
    }
}

/// The core [`TransportFeedback`] a parsed RTCP packet states.
pub fn from_rtcp(fb: &TransportLayerCc) -> Result<TransportFeedback, TwccError> {
    let symbols = symbols(fb)?;
    let mut deltas = fb.recv_deltas.iter();
    let mut out = Vec::with_capacity(symbols.len());
    for s in &symbols {
        out.push(match s {
            SymbolTypeTcc::PacketNotReceived => None,
            SymbolTypeTcc::PacketReceivedSmallDelta | SymbolTypeTcc::PacketReceivedLargeDelta => {
                let d = deltas.next().ok_or(TwccError::Inconsistent(
                    "fewer deltas than received packets",
                ))?;
                let ticks = i16::try_from(d.delta.div_euclid((TICK_NS / 1000) as i64))
                    .map_err(|_| TwccError::Inconsistent("receive delta beyond 16 bits"))?;
                Some(ticks)
            }
            SymbolTypeTcc::PacketReceivedWithoutDelta => {
                return Err(TwccError::Inconsistent("reserved status symbol"));
            }
        });
    }
    Ok(TransportFeedback {
        base_seq: fb.base_sequence_number,
        reference: fb.reference_time & TransportFeedback::MAX_REFERENCE,
        fb_count: fb.fb_pkt_count,
        deltas: out,
    })
}

/// The status symbols of a parsed packet, as many as its status count.
fn symbols(fb: &TransportLayerCc) -> Result<Vec<SymbolTypeTcc>, TwccError> {
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
    Ok(symbols)
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
    let symbols = symbols(fb)?;
    let count = symbols.len();
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
    use std::collections::BTreeMap;

    /// 10240 lost packets, none received: two runs (8191 + 2049) would fill the packet to its
    /// last byte, which pion's and rtc-rtcp's parsers refuse; three runs leave two bytes of
    /// padding and read back (found by the `rtcp_decode` fuzz target).
    #[test]
    fn a_report_of_only_losses_reads_back() {
        for n in [1usize, 8191, 8192, 10240, 16382, 20000] {
            let fb = TransportFeedback {
                base_seq: 9,
                reference: 0,
                fb_count: 0,
                deltas: vec![None; n],
            };
            let p = to_rtcp(&fb, 1, 2);
            assert_eq!(p.packet_chunks.len() % 2, 1, "{n}");
            let mut out = vec![];
            encode(&p, &mut out).unwrap();
            let back = decode(&out).unwrap_or_else(|e| panic!("{n}: {e}"));
            assert_eq!(back.packets.len(), n);
            assert!(back.packets.iter().all(|p| p.1.is_none()));
            assert_eq!(from_rtcp(&p).unwrap(), fb);
        }
    }

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
        assert_eq!(r.late_or_duplicate(), 1);
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
        fn core_messages_round_trip_through_rtcp(
            base in any::<u16>(), reference in 0u32..(1 << 24), count in any::<u8>(),
            deltas in proptest::collection::vec(proptest::option::of(any::<i16>()), 1..300),
        ) {
            let m = TransportFeedback { base_seq: base, reference, fb_count: count, deltas };
            let mut buf = vec![];
            encode(&to_rtcp(&m, 1, 2), &mut buf).unwrap();
            let parsed = TransportLayerCc::unmarshal(&mut Bytes::from(buf)).unwrap();
            prop_assert_eq!(from_rtcp(&parsed).unwrap(), m);
        }

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
