//! Feedback and session reports on the wire: RTCP (RFC 3550, RFC 4585, RFC 5506, RFC 8888).
//!
//! What travels, and in which RTCP packet:
//!
//! | what | RTCP packet | direction |
//! |---|---|---|
//! | session report of the sender (for RTT) | SR (PT 200) + SDES CNAME (PT 202), compound | sender → receiver, every RTCP interval |
//! | session report of the receiver (loss, jitter, LSR/DLSR) | RR (PT 201) + SDES CNAME, compound | receiver → sender, every RTCP interval |
//! | the sender's scheme (so `wisp recv` needs no `--scheme`) | APP (PT 204), name `WISP`, subtype 1, data = the scheme spec, a zero byte, and with `wisp send --video` the clip's fingerprint (version 1, length 8, u64 big-endian; [`APP_SUBTYPE_SCHEME`]), zero-padded, in the sender's compound | sender → receiver |
//! | end of the flow | BYE (PT 203) | sender → receiver |
//! | a scheme's REMB ([`Remb`], kind 3) | PSFB REMB (PT 206, FMT 15), reduced-size | receiver → sender |
//! | a scheme's transport-wide feedback ([`TransportFeedback`], kind 4) | RTPFB TransportLayerCC (PT 205, FMT 15, draft-holmer-rmcat-transport-wide-cc-extensions-01), reduced-size ([`crate::twcc`]) | receiver → sender |
//! | a scheme's RFC 8888 feedback ([`CongestionControlFeedback`], kind 5) | RTPFB CCFB (PT 205, FMT 11, RFC 8888 §3.1), one report block for the media SSRC, reduced-size | receiver → sender |
//! | every other scheme [`Feedback`] message | APP (PT 204), name `WISP`, subtype 0, data = the message's bytes ([`Feedback::as_bytes`]) padded with zeros to 32 bits, reduced-size | receiver → sender |
//! | per-packet arrival feedback ([`Arrivals`], [`encode_arrivals`]) | RTPFB CCFB (PT 205, FMT 11, RFC 8888); it decodes as RFC 8888 feedback (kind 5) | receiver → sender |
//!
//! A REMB always goes as the standard packet: the core already holds A_r as REMB's 18-bit
//! mantissa and exponent, so the sender half receives exactly what the receiver half emitted, as
//! in the simulator. So does transport-wide feedback: the core's message is already on the
//! packet's 64-ms and 250-µs grids, and any TransportLayerCC a foreign receiver sends (pion's,
//! libwebrtc's) decodes to the same message. So does RFC 8888 feedback: the core's message is
//! the packet's report block with its 16-bit metric blocks and 32-bit report timestamp as they
//! are on the wire, so it survives encode → decode exactly; a foreign CCFB decodes to one
//! message per report block. Every other message is opaque here: a new scheme's messages need no change
//! in this module; they travel as APP.
//!
//! The NTP timestamps of SR and the report timestamp of RFC 8888 are read from the sender's own
//! [`Clock`](crate::Clock) (monotonic seconds in 32.32 fixed point), not the wall clock: RFC 3550
//! only needs them to be consistent for the RTT computation (A − LSR − DLSR), which happens on
//! the clock that stamped them.
//!
//! The typed items ([`RtcpItem`], [`ReportBlock`], [`Arrivals`]) and the NTP conversions are
//! those of [`wisp_core::session`], whose state machines speak them; this module turns them into
//! bytes and back. Parsing uses the `rtc-rtcp` crate; [`decode`] never panics.

use bytes::Bytes;
use rtc_shared::marshal::Marshal;
use rtcp::goodbye::Goodbye;
use rtcp::header::{Header, PacketType};
use rtcp::payload_feedbacks::receiver_estimated_maximum_bitrate::ReceiverEstimatedMaximumBitrate;
use rtcp::raw_packet::RawPacket;
use rtcp::receiver_report::ReceiverReport;
use rtcp::reception_report::ReceptionReport;
use rtcp::sender_report::SenderReport;
use rtcp::source_description::{
    SdesType, SourceDescription, SourceDescriptionChunk, SourceDescriptionItem,
};
use rtcp::transport_feedbacks::cc_feedback_report::{
    CcFeedbackMetricBlock, CcFeedbackReport, CcFeedbackReportBlock, Ecn,
};
use rtcp::transport_feedbacks::transport_layer_cc::TransportLayerCc;
use wisp_core::ccfb::{CongestionControlFeedback, MetricBlock};
pub use wisp_core::session::{Arrivals, ReportBlock, RtcpItem, from_q16, ntp, ntp_middle, to_q16};
use wisp_core::wire::{Feedback, Remb, TransportFeedback, kind as wire_kind};
use wisp_core::{Bitrate, Instant};

/// The APP packet name wisp uses.
pub const APP_NAME: [u8; 4] = *b"WISP";
/// APP subtype: the data is one [`Feedback`] message.
pub const APP_SUBTYPE_FEEDBACK: u8 = 0;
/// APP subtype: the sender's scheme spec (UTF-8, zero-terminated), so the receiver can run the
/// matching receiver half; optionally followed by the fingerprint of the clip a video sender
/// codes ([`CLIP_FINGERPRINT_VERSION`] u8, length u8 = 8, the fingerprint u64 big-endian), then
/// zero padding. A decoder that reads up to the first zero (an older one) sees the spec alone.
pub const APP_SUBTYPE_SCHEME: u8 = 1;
/// The version of the clip fingerprint after the scheme spec (`wisp_core::video::y4m::fingerprint`'s).
pub const CLIP_FINGERPRINT_VERSION: u8 = 1;

/// Why bytes are not RTCP wisp understands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtcpError {
    #[error("malformed RTCP: {0}")]
    Malformed(String),
    #[error("malformed APP packet: {0}")]
    App(&'static str),
    #[error("APP feedback: {0}")]
    Feedback(#[from] wisp_core::wire::WireError),
}

fn marshal(p: &impl Marshal, out: &mut Vec<u8>) -> Result<(), RtcpError> {
    let start = out.len();
    out.resize(start + p.marshal_size(), 0);
    let n = p
        .marshal_to(&mut out[start..])
        .map_err(|e| RtcpError::Malformed(e.to_string()))?;
    out.truncate(start + n);
    Ok(())
}

fn sdes(ssrc: u32, cname: &str) -> SourceDescription {
    SourceDescription {
        chunks: vec![SourceDescriptionChunk {
            source: ssrc,
            items: vec![SourceDescriptionItem {
                sdes_type: SdesType::SdesCname,
                text: Bytes::copy_from_slice(&cname.as_bytes()[..cname.len().min(255)]),
            }],
        }],
    }
}

/// SR + SDES CNAME (a compound packet) appended to `out`.
pub fn encode_sender_report(
    ssrc: u32,
    now: Instant,
    rtp_time: u32,
    packets: u32,
    octets: u32,
    cname: &str,
    out: &mut Vec<u8>,
) -> Result<(), RtcpError> {
    let sr = SenderReport {
        ssrc,
        ntp_time: ntp(now),
        rtp_time,
        packet_count: packets,
        octet_count: octets,
        reports: vec![],
        profile_extensions: Bytes::new(),
    };
    marshal(&sr, out)?;
    marshal(&sdes(ssrc, cname), out)
}

/// RR + SDES CNAME (a compound packet) appended to `out`.
pub fn encode_receiver_report(
    ssrc: u32,
    block: Option<ReportBlock>,
    cname: &str,
    out: &mut Vec<u8>,
) -> Result<(), RtcpError> {
    let rr = ReceiverReport {
        ssrc,
        reports: block
            .into_iter()
            .map(|b| ReceptionReport {
                ssrc: b.ssrc,
                fraction_lost: b.fraction_lost,
                total_lost: (b.total_lost.clamp(-0x80_0000, 0x7f_ffff) as u32) & 0x00ff_ffff,
                last_sequence_number: b.highest_seq,
                jitter: b.jitter,
                last_sender_report: b.last_sr,
                delay: b.delay_since_last_sr,
            })
            .collect(),
        profile_extensions: Bytes::new(),
    };
    marshal(&rr, out)?;
    marshal(&sdes(ssrc, cname), out)
}

/// BYE appended to `out`.
///
/// The reason is three bytes so that the packet needs no padding: `rtc-rtcp` 0.21 aligns a BYE
/// with the RTCP padding bit instead of padding the reason with zeros, which RFC 3550 §6.6 (and
/// Wireshark) reject inside a compound packet.
pub fn encode_bye(ssrc: u32, out: &mut Vec<u8>) -> Result<(), RtcpError> {
    marshal(
        &Goodbye {
            sources: vec![ssrc],
            reason: Bytes::from_static(b"end"),
        },
        out,
    )
}

/// The REMB packet (draft-alvestrand-rmcat-remb-03 §2.2) for `remb`. Its 18-bit mantissa and
/// exponent carry every [`Remb`] exactly (the core rounds A_r to what REMB can carry).
fn remb_packet(sender_ssrc: u32, media_ssrc: u32, remb: Remb) -> ReceiverEstimatedMaximumBitrate {
    // mantissa · 2^exp with an 18-bit mantissa is exact in an f32 (24-bit significand).
    let (exp, mantissa) = remb.parts();
    ReceiverEstimatedMaximumBitrate {
        sender_ssrc,
        bitrate: mantissa as f32 * (exp as f32).exp2(),
        ssrcs: vec![media_ssrc],
    }
}

/// One scheme feedback message as a reduced-size RTCP packet, appended to `out`: the standard
/// REMB packet for a REMB, the standard TransportLayerCC for transport-wide feedback, an APP
/// packet carrying the message's bytes for anything else.
pub fn encode_feedback(
    fb: &Feedback,
    sender_ssrc: u32,
    media_ssrc: u32,
    out: &mut Vec<u8>,
) -> Result<(), RtcpError> {
    if fb.kind() == wire_kind::REMB {
        let remb = fb.decode::<Remb>()?;
        return marshal(&remb_packet(sender_ssrc, media_ssrc, remb), out);
    }
    if fb.kind() == wire_kind::TRANSPORT_FEEDBACK {
        let tf = fb.decode::<TransportFeedback>()?;
        return marshal(&crate::twcc::to_rtcp(&tf, sender_ssrc, media_ssrc), out);
    }
    if fb.kind() == wire_kind::CONGESTION_CONTROL_FEEDBACK {
        let cc = fb.decode::<CongestionControlFeedback>()?;
        return marshal(&ccfb_packet(&cc, sender_ssrc, media_ssrc), out);
    }
    let mut data = fb.as_bytes().to_vec();
    data.resize(data.len().next_multiple_of(4), 0);
    encode_app(sender_ssrc, APP_SUBTYPE_FEEDBACK, APP_NAME, &data, out)
}

/// The RFC 8888 packet for `cc`: one report block on `media_ssrc`, the metric blocks' bits and
/// the report timestamp as the core holds them.
fn ccfb_packet(
    cc: &CongestionControlFeedback,
    sender_ssrc: u32,
    media_ssrc: u32,
) -> CcFeedbackReport {
    let metric_blocks = cc
        .reports
        .iter()
        .map(|m| match m.ato() {
            None => CcFeedbackMetricBlock::default(),
            Some(ato) => CcFeedbackMetricBlock {
                received: true,
                ecn: match m.ecn() {
                    0 => Ecn::NotEct,
                    1 => Ecn::Ect1,
                    2 => Ecn::Ect0,
                    _ => Ecn::Ce,
                },
                arrival_time_offset: ato,
            },
        })
        .collect();
    CcFeedbackReport {
        sender_ssrc,
        report_blocks: vec![CcFeedbackReportBlock {
            media_ssrc,
            begin_sequence: cc.begin_seq,
            metric_blocks,
        }],
        report_timestamp: cc.report_timestamp,
    }
}

/// The core's RFC 8888 messages for a CCFB packet: one per report block, each with the packet's
/// report timestamp.
fn ccfb_messages(p: &CcFeedbackReport) -> Result<Vec<RtcpItem>, RtcpError> {
    p.report_blocks
        .iter()
        .map(|b| {
            if b.metric_blocks.len() > CongestionControlFeedback::MAX_REPORTS {
                return Err(RtcpError::Malformed("CCFB: more than 16384 reports".into()));
            }
            let cc = CongestionControlFeedback {
                begin_seq: b.begin_sequence,
                reports: b
                    .metric_blocks
                    .iter()
                    .map(|m| {
                        if m.received {
                            MetricBlock::received(m.ecn as u8, m.arrival_time_offset)
                        } else {
                            MetricBlock::LOST
                        }
                    })
                    .collect(),
                report_timestamp: p.report_timestamp,
            };
            Ok(RtcpItem::Feedback(Feedback::encode(&cc)))
        })
        .collect()
}

/// An APP packet (RFC 3550 §6.7); `data` must be a multiple of 4 bytes.
pub fn encode_app(
    ssrc: u32,
    subtype: u8,
    name: [u8; 4],
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), RtcpError> {
    if data.len() % 4 != 0 || subtype > 31 {
        return Err(RtcpError::App(
            "data must be 32-bit aligned and subtype < 32",
        ));
    }
    let words = (12 + data.len()) / 4 - 1;
    let length = u16::try_from(words).map_err(|_| RtcpError::App("APP data too long"))?;
    let h = Header {
        padding: false,
        count: subtype,
        packet_type: PacketType::ApplicationDefined,
        length,
    };
    marshal(&h, out)?;
    out.extend_from_slice(&ssrc.to_be_bytes());
    out.extend_from_slice(&name);
    out.extend_from_slice(data);
    Ok(())
}

/// The scheme announcement (APP subtype 1), with the clip's fingerprint if given, appended to
/// `out`.
pub fn encode_scheme(
    ssrc: u32,
    spec: &str,
    clip: Option<u64>,
    out: &mut Vec<u8>,
) -> Result<(), RtcpError> {
    if spec.as_bytes().contains(&0) {
        return Err(RtcpError::App("scheme contains a zero byte"));
    }
    let mut data = spec.as_bytes().to_vec();
    data.push(0);
    if let Some(f) = clip {
        data.extend_from_slice(&[CLIP_FINGERPRINT_VERSION, 8]);
        data.extend_from_slice(&f.to_be_bytes());
    }
    data.resize(data.len().next_multiple_of(4), 0);
    encode_app(ssrc, APP_SUBTYPE_SCHEME, APP_NAME, &data, out)
}

/// RFC 8888 feedback appended to `out`.
pub fn encode_arrivals(sender_ssrc: u32, a: &Arrivals, out: &mut Vec<u8>) -> Result<(), RtcpError> {
    let report = ntp_middle(a.report_time);
    let metric_blocks = a
        .packets
        .iter()
        .map(|p| match p {
            None => CcFeedbackMetricBlock::default(),
            Some(t) => CcFeedbackMetricBlock {
                received: true,
                ecn: Ecn::NotEct,
                // 1/1024 s before the report; 0x1FFF means "too far back" (RFC 8888 §3.1).
                arrival_time_offset: (u128::from((a.report_time - *t).as_nanos()) * 1024
                    / 1_000_000_000)
                    .min(0x1FFF) as u16,
            },
        })
        .collect();
    let p = CcFeedbackReport {
        sender_ssrc,
        report_blocks: vec![CcFeedbackReportBlock {
            media_ssrc: a.media_ssrc,
            begin_sequence: a.begin_seq,
            metric_blocks,
        }],
        report_timestamp: report,
    };
    marshal(&p, out)
}

fn decode_app(raw: &[u8]) -> Result<RtcpItem, RtcpError> {
    // The raw packet includes its 4-byte header: V/P/subtype, PT, length.
    if raw.len() < 12 {
        return Err(RtcpError::App("shorter than 12 bytes"));
    }
    let padding = raw[0] & 0x20 != 0;
    let subtype = raw[0] & 0x1f;
    let name = [raw[8], raw[9], raw[10], raw[11]];
    let mut data = &raw[12..];
    if padding {
        let pad = *data.last().ok_or(RtcpError::App("padding without data"))? as usize;
        if pad == 0 || pad > data.len() {
            return Err(RtcpError::App("bad padding"));
        }
        data = &data[..data.len() - pad];
    }
    if name != APP_NAME {
        return Ok(RtcpItem::Other(204));
    }
    if subtype == APP_SUBTYPE_SCHEME {
        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
        let spec =
            std::str::from_utf8(&data[..end]).map_err(|_| RtcpError::App("scheme is not UTF-8"))?;
        let rest = data.get(end + 1..).unwrap_or_default();
        let clip = if rest.iter().all(|&b| b == 0) {
            None
        } else {
            match rest {
                [CLIP_FINGERPRINT_VERSION, 8, f @ ..] if f.len() >= 8 => {
                    if f[8..].iter().any(|&b| b != 0) {
                        return Err(RtcpError::App("trailing bytes after the clip fingerprint"));
                    }
                    let mut b = [0u8; 8];
                    b.copy_from_slice(&f[..8]);
                    Some(u64::from_be_bytes(b))
                }
                [CLIP_FINGERPRINT_VERSION, ..] => {
                    return Err(RtcpError::App("clip fingerprint of a bad length"));
                }
                _ => return Err(RtcpError::App("unknown clip fingerprint version")),
            }
        };
        return Ok(RtcpItem::Scheme {
            ssrc: u32::from_be_bytes([raw[4], raw[5], raw[6], raw[7]]),
            spec: spec.to_string(),
            clip,
        });
    }
    if subtype != APP_SUBTYPE_FEEDBACK {
        return Ok(RtcpItem::Other(204));
    }
    if data.len() < 3 {
        return Err(RtcpError::App("no feedback message"));
    }
    let len = 3 + usize::from(u16::from_be_bytes([data[1], data[2]]));
    if len > data.len() {
        return Err(RtcpError::App("feedback longer than the packet"));
    }
    let (msg, rest) = data.split_at(len);
    if rest.len() >= 4 || rest.iter().any(|&b| b != 0) {
        return Err(RtcpError::App("trailing bytes after the feedback"));
    }
    Ok(RtcpItem::Feedback(Feedback::from_bytes(msg)?))
}

/// Decodes one RTCP datagram (compound or reduced-size). Never panics.
pub fn decode(buf: &[u8]) -> Result<Vec<RtcpItem>, RtcpError> {
    let packets =
        rtcp::packet::unmarshal(&mut &buf[..]).map_err(|e| RtcpError::Malformed(e.to_string()))?;
    let mut items = Vec::with_capacity(packets.len());
    for p in &packets {
        let any = p.as_any();
        if let Some(sr) = any.downcast_ref::<SenderReport>() {
            items.push(RtcpItem::SenderReport {
                ssrc: sr.ssrc,
                ntp: sr.ntp_time,
                rtp_time: sr.rtp_time,
                packets: sr.packet_count,
                octets: sr.octet_count,
            });
        } else if let Some(rr) = any.downcast_ref::<ReceiverReport>() {
            items.push(RtcpItem::ReceiverReport {
                ssrc: rr.ssrc,
                blocks: rr
                    .reports
                    .iter()
                    .map(|r| ReportBlock {
                        ssrc: r.ssrc,
                        fraction_lost: r.fraction_lost,
                        // Sign-extend the 24-bit field.
                        total_lost: ((r.total_lost << 8) as i32) >> 8,
                        highest_seq: r.last_sequence_number,
                        jitter: r.jitter,
                        last_sr: r.last_sender_report,
                        delay_since_last_sr: r.delay,
                    })
                    .collect(),
            });
        } else if let Some(sd) = any.downcast_ref::<SourceDescription>() {
            for c in &sd.chunks {
                for i in &c.items {
                    if i.sdes_type == SdesType::SdesCname {
                        items.push(RtcpItem::Cname {
                            ssrc: c.source,
                            cname: String::from_utf8_lossy(&i.text).into_owned(),
                        });
                    }
                }
            }
        } else if let Some(bye) = any.downcast_ref::<Goodbye>() {
            items.push(RtcpItem::Bye {
                sources: bye.sources.clone(),
            });
        } else if let Some(remb) = any.downcast_ref::<ReceiverEstimatedMaximumBitrate>() {
            let b = remb.bitrate;
            if !(b.is_finite() && b >= 0.0) {
                return Err(RtcpError::Malformed("REMB bitrate".into()));
            }
            let remb = Remb::new(Bitrate::from_bps(b as u64));
            items.push(RtcpItem::Feedback(Feedback::encode(&remb)));
        } else if let Some(tcc) = any.downcast_ref::<TransportLayerCc>() {
            let tf =
                crate::twcc::from_rtcp(tcc).map_err(|e| RtcpError::Malformed(e.to_string()))?;
            items.push(RtcpItem::Feedback(Feedback::encode(&tf)));
        } else if let Some(cc) = any.downcast_ref::<CcFeedbackReport>() {
            items.extend(ccfb_messages(cc)?);
        } else if let Some(raw) = any.downcast_ref::<RawPacket>() {
            let pt = raw.0.get(1).copied().unwrap_or(0);
            if pt == PacketType::ApplicationDefined as u8 {
                items.push(decode_app(&raw.0)?);
            } else {
                items.push(RtcpItem::Other(pt));
            }
        } else {
            items.push(RtcpItem::Other(p.header().packet_type as u8));
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use wisp_core::Duration;
    use wisp_core::wire::ReceiverReport as Rr;

    fn feedback_samples() -> Vec<Feedback> {
        vec![
            Feedback::encode(&Remb::new(Bitrate::from_kbps(1234))),
            // Rounded to the 18-bit mantissa by the core: still a standard REMB.
            Feedback::encode(&Remb::new(Bitrate::from_bps(123_456_789))),
            Feedback::encode(&wisp_core::scheme::tcp::ack::TcpAck::new(
                7,
                Instant::from_millis(100),
                Instant::from_millis(140),
                &[wisp_core::scheme::tcp::ack::SeqRange { start: 5, end: 8 }],
            )),
            Feedback::encode(&Rr {
                highest_seq: 99,
                received: 95,
                cumulative_lost: 4,
                fraction_lost: 10,
                echo: None,
            }),
            Feedback::encode(&TransportFeedback {
                base_seq: 65_530,
                reference: 0x00ab_cdef,
                fb_count: 9,
                deltas: vec![
                    Some(4),
                    None,
                    None,
                    Some(300),
                    Some(-2),
                    Some(0),
                    None,
                    Some(255),
                ],
            }),
        ]
    }

    #[test]
    fn every_feedback_round_trips() {
        for fb in feedback_samples() {
            let mut out = Vec::new();
            encode_feedback(&fb, 1, 2, &mut out).unwrap();
            assert_eq!(out.len() % 4, 0);
            assert_eq!(decode(&out).unwrap(), vec![RtcpItem::Feedback(fb.clone())]);
        }
    }

    #[test]
    fn remb_is_always_standard_and_other_messages_app() {
        for fb in &feedback_samples()[..2] {
            let mut out = Vec::new();
            encode_feedback(fb, 1, 2, &mut out).unwrap();
            // PSFB, FMT 15, "REMB".
            assert_eq!(out[0] & 0x1f, 15);
            assert_eq!(out[1], 206);
            assert_eq!(&out[12..16], b"REMB");
        }
        let mut out = Vec::new();
        encode_feedback(&feedback_samples()[2], 1, 2, &mut out).unwrap();
        assert_eq!(out[1], 204);
        assert_eq!(&out[8..12], b"WISP");
        // Transport-wide feedback: RTPFB, FMT 15, the bytes twcc's codec writes.
        let mut out = Vec::new();
        encode_feedback(&feedback_samples()[4], 1, 2, &mut out).unwrap();
        assert_eq!((out[0] & 0x1f, out[1]), (15, 205));
        assert!(crate::twcc::is_twcc(&out));
        let d = crate::twcc::decode(&out).unwrap();
        assert_eq!((d.sender_ssrc, d.media_ssrc, d.fb_count), (1, 2, 9));
        assert_eq!(d.packets.len(), 8);
        assert_eq!(
            d.packets[7],
            (65_537u32 as u16, Some(0xab_cdef * 64_000 + 557 * 250))
        );
    }

    #[test]
    fn remb_fixed_bytes() {
        // 1,234,567 bit/s rounds to mantissa 154,320 × 2^3 (draft-alvestrand-rmcat-remb §2.2:
        // 6-bit exponent, 18-bit mantissa).
        let mut out = Vec::new();
        let fb = Feedback::encode(&Remb::new(Bitrate::from_bps(1_234_567)));
        encode_feedback(&fb, 0x0102_0304, 0x0a0b_0c0d, &mut out).unwrap();
        let m: u32 = 154_320;
        assert_eq!(
            out,
            [
                0x8f,
                206,
                0,
                5,
                1,
                2,
                3,
                4,
                0,
                0,
                0,
                0,
                b'R',
                b'E',
                b'M',
                b'B',
                1,
                (3 << 2) | (m >> 16) as u8,
                (m >> 8) as u8,
                m as u8,
                0x0a,
                0x0b,
                0x0c,
                0x0d
            ]
        );
    }

    #[test]
    fn app_fixed_bytes() {
        let mut out = Vec::new();
        let fb = Feedback::from_bytes(&[40, 0, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
            .unwrap();
        encode_feedback(&fb, 0x0102_0304, 0, &mut out).unwrap();
        // 11 bytes of feedback padded to 12: 12 + 12 = 24 bytes = 6 words, length field 5.
        assert_eq!(
            out,
            [
                0x80, 204, 0, 5, 1, 2, 3, 4, b'W', b'I', b'S', b'P', 40, 0, 8, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff, 0xff, 0
            ]
        );
    }

    /// The scheme announcement with a clip fingerprint: the bytes as the module doc lays them
    /// out, a round trip, and a bad version, length or trailing byte refused.
    #[test]
    fn scheme_with_a_clip_fingerprint() {
        let mut out = Vec::new();
        encode_scheme(9, "alfalfa", Some(0x0102_0304_0506_0708), &mut out).unwrap();
        // Header (4), SSRC (4), name (4), then "alfalfa\0", version 1, length 8, 8 bytes, padding.
        let data = &out[12..];
        assert_eq!(&data[..8], b"alfalfa\0");
        assert_eq!(&data[8..18], &[1, 8, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(data.len(), 20);
        assert_eq!(
            decode(&out).unwrap(),
            vec![RtcpItem::Scheme {
                ssrc: 9,
                spec: "alfalfa".into(),
                clip: Some(0x0102_0304_0506_0708)
            }]
        );
        // Without one: the older bytes exactly (the spec, then zeros to a multiple of 4).
        let mut plain = Vec::new();
        encode_scheme(9, "alfalfa", None, &mut plain).unwrap();
        assert_eq!(&plain[12..], b"alfalfa\0");
        for (at, byte, why) in [
            (20, 2, "unknown clip fingerprint version"),
            (21, 7, "clip fingerprint of a bad length"),
            (31, 1, "trailing bytes after the clip fingerprint"),
        ] {
            let mut bad = out.clone();
            bad[at] = byte;
            assert_eq!(decode(&bad), Err(RtcpError::App(why)), "byte {at}");
        }
    }

    #[test]
    fn reports_round_trip() {
        let mut out = Vec::new();
        let t = Instant::from_nanos(12_345_678_901_234);
        encode_sender_report(9, t, 77, 1000, 1_500_000, "1@boot", &mut out).unwrap();
        let block = ReportBlock {
            ssrc: 9,
            fraction_lost: 3,
            total_lost: -2,
            highest_seq: 70_000,
            jitter: 45,
            last_sr: ntp_middle(t),
            delay_since_last_sr: to_q16(Duration::from_millis(5)),
        };
        encode_receiver_report(8, Some(block), "2@boot", &mut out).unwrap();
        let bye_at = out.len();
        encode_bye(9, &mut out).unwrap();
        // V=2, no padding, SC=1, PT=203, length 2; SSRC; reason "end" (3 bytes, no padding).
        assert_eq!(
            out[bye_at..],
            [0x81, 203, 0, 2, 0, 0, 0, 9, 3, b'e', b'n', b'd']
        );
        encode_scheme(9, "cbr:rate-kbps=1000", None, &mut out).unwrap();
        let items = decode(&out).unwrap();
        assert_eq!(
            items,
            vec![
                RtcpItem::SenderReport {
                    ssrc: 9,
                    ntp: ntp(t),
                    rtp_time: 77,
                    packets: 1000,
                    octets: 1_500_000
                },
                RtcpItem::Cname {
                    ssrc: 9,
                    cname: "1@boot".into()
                },
                RtcpItem::ReceiverReport {
                    ssrc: 8,
                    blocks: vec![block]
                },
                RtcpItem::Cname {
                    ssrc: 8,
                    cname: "2@boot".into()
                },
                RtcpItem::Bye { sources: vec![9] },
                RtcpItem::Scheme {
                    ssrc: 9,
                    spec: "cbr:rate-kbps=1000".into(),
                    clip: None
                },
            ]
        );
    }

    /// `encode_arrivals`' CCFB packets decode as the core's RFC 8888 message: the report
    /// timestamp is the middle 32 bits of the NTP time, each ATO the offset in 1/1024 s.
    #[test]
    fn rfc8888_arrivals_decode_as_the_core_message() {
        let report_time = Instant::from_secs(10);
        let a = Arrivals {
            media_ssrc: 5,
            begin_seq: 65534,
            report_time,
            packets: vec![
                Some(report_time - Duration::from_millis(500)),
                None,
                Some(report_time),
            ],
        };
        let mut out = Vec::new();
        encode_arrivals(1, &a, &mut out).unwrap();
        assert_eq!(out[1], 205);
        assert_eq!(out[0] & 0x1f, 11);
        let items = decode(&out).unwrap();
        let [RtcpItem::Feedback(fb)] = &items[..] else {
            panic!("{items:?}")
        };
        let cc = fb.decode::<CongestionControlFeedback>().unwrap();
        assert_eq!(cc.begin_seq, 65534);
        assert_eq!(cc.report_timestamp, ntp_middle(report_time));
        assert_eq!(from_q16(cc.report_timestamp), Duration::from_secs(10));
        let atos: Vec<Option<u16>> = cc.reports.iter().map(|m| m.ato()).collect();
        assert_eq!(atos, [Some(512), None, Some(0)]);
    }

    fn ccfb_sample() -> CongestionControlFeedback {
        CongestionControlFeedback {
            begin_seq: 0xFFFE,
            reports: vec![
                MetricBlock::received(0, 512),
                MetricBlock::LOST,
                MetricBlock::received(0b11, 0x1FFF),
            ],
            report_timestamp: 0x1234_5678,
        }
    }

    /// The CCFB packet as RFC 8888 §3.1 draws it: V=2, P=0, FMT=11, PT=205, length in 32-bit
    /// words minus one; the sender's SSRC; per media source its SSRC, begin_seq and
    /// num_reports, one 16-bit R|ECN|ATO block per packet (R the most significant bit, then
    /// the two ECN bits, then the 13-bit ATO), zero-padded to 32 bits when num_reports is odd;
    /// then the 32-bit report timestamp.
    #[test]
    fn rfc8888_fixed_bytes_as_the_rfc_lays_them_out() {
        let mut out = Vec::new();
        encode_feedback(
            &Feedback::encode(&ccfb_sample()),
            0x0102_0304,
            0x0a0b_0c0d,
            &mut out,
        )
        .unwrap();
        assert_eq!(
            out,
            [
                0x8B, // 0b10_0_01011: V=2, P=0, FMT=11
                205,  // PT: RTPFB
                0, 6, // 7 words of 32 bits, minus one
                1, 2, 3, 4, // SSRC of the RTCP packet sender
                0x0a, 0x0b, 0x0c, 0x0d, // SSRC of the RTP stream
                0xFF, 0xFE, // begin_seq
                0, 3,    // num_reports
                0x82, // 0b1_00_00010: R=1, ECN=00, the top of ATO=512
                0,    // R=1, ECN=00, ATO=512
                0, 0, // R=0: not received, the other bits zero
                0xFF, 0xFF, // R=1, ECN=11 (CE), ATO=0x1FFF (unavailable)
                0, 0, // padding to 32 bits (num_reports is odd)
                0x12, 0x34, 0x56, 0x78, // report timestamp
            ]
        );
    }

    #[test]
    fn rfc8888_feedback_round_trips_exactly() {
        let cc = ccfb_sample();
        let fb = Feedback::encode(&cc);
        let mut out = Vec::new();
        encode_feedback(&fb, 1, 2, &mut out).unwrap();
        assert_eq!(decode(&out).unwrap(), vec![RtcpItem::Feedback(fb)]);
        // Even: no padding; empty: a block with no reports.
        for n in [0usize, 2, 500] {
            let cc = CongestionControlFeedback {
                reports: (0..n).map(|k| MetricBlock::received(0, k as u16)).collect(),
                ..ccfb_sample()
            };
            let fb = Feedback::encode(&cc);
            let mut out = Vec::new();
            encode_feedback(&fb, 1, 2, &mut out).unwrap();
            assert_eq!(out.len(), 20 + 2 * n);
            assert_eq!(decode(&out).unwrap(), vec![RtcpItem::Feedback(fb)]);
        }
    }

    #[test]
    fn rejects_hostile_app_packets() {
        let mut out = Vec::new();
        // A feedback frame claiming more bytes than the packet has.
        encode_app(1, 0, APP_NAME, &[3, 0xff, 0xff, 0], &mut out).unwrap();
        assert!(decode(&out).is_err());
        out.clear();
        // Trailing non-zero bytes.
        encode_app(1, 0, APP_NAME, &[3, 0, 0, 1], &mut out).unwrap();
        assert!(decode(&out).is_err());
        out.clear();
        // Another application's APP packet is ignored, not an error.
        encode_app(1, 0, *b"XYZW", &[1, 2, 3, 4], &mut out).unwrap();
        assert_eq!(decode(&out).unwrap(), vec![RtcpItem::Other(204)]);
        // Wrong version, huge length, truncation.
        let mut v = out.clone();
        v[0] = 0x40;
        assert!(decode(&v).is_err());
        let mut v = out.clone();
        v[2] = 0xff;
        assert!(decode(&v).is_err());
        assert!(decode(&out[..7]).is_err());
        assert!(decode(&[]).is_err());
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn decode_never_panics_on_rtcp_like_input(
            pt in prop::sample::select(vec![200u8, 201, 202, 203, 204, 205, 206, 207]),
            count in 0u8..32, padding in any::<bool>(), words in 0u16..40,
            body in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let mut v = vec![0x80 | (u8::from(padding) << 5) | count, pt];
            v.extend_from_slice(&words.to_be_bytes());
            v.extend_from_slice(&body);
            let _ = decode(&v);
        }

        #[test]
        fn decode_never_panics_on_mutated_reports(flips in proptest::collection::vec((0usize..80, any::<u8>()), 1..5), cut in 0usize..80) {
            let mut out = Vec::new();
            encode_sender_report(9, Instant::from_secs(5), 1, 2, 3, "x@y", &mut out).unwrap();
            encode_feedback(&feedback_samples()[2], 1, 2, &mut out).unwrap();
            encode_arrivals(1, &Arrivals { media_ssrc: 1, begin_seq: 0, report_time: Instant::from_secs(1), packets: vec![None, Some(Instant::from_millis(900))] }, &mut out).unwrap();
            for (i, b) in flips { if i < out.len() { out[i] ^= b; } }
            out.truncate(cut);
            let _ = decode(&out);
        }

        #[test]
        fn rfc8888_round_trips(
            begin in any::<u16>(), rts in any::<u32>(),
            bits in proptest::collection::vec(any::<u16>(), 0..200),
        ) {
            let cc = CongestionControlFeedback {
                begin_seq: begin,
                reports: bits.into_iter().map(MetricBlock::from_bits).collect(),
                report_timestamp: rts,
            };
            let fb = Feedback::encode(&cc);
            let mut out = Vec::new();
            encode_feedback(&fb, 1, 2, &mut out).unwrap();
            prop_assert_eq!(decode(&out).unwrap(), vec![RtcpItem::Feedback(fb)]);
        }

        #[test]
        fn remb_is_always_exact(bps in any::<u64>()) {
            let fb = Feedback::encode(&Remb::new(Bitrate::from_bps(bps)));
            let mut out = Vec::new();
            encode_feedback(&fb, 1, 2, &mut out).unwrap();
            prop_assert_eq!(decode(&out).unwrap(), vec![RtcpItem::Feedback(fb)]);
        }
    }
}
