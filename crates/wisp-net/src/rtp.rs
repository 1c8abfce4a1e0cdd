//! Data packets on the wire: RTP (RFC 3550) with RFC 8285 one-byte header extensions.
//!
//! A [`DataHeader`] becomes one RTP packet of exactly `header.size − H` bytes of UDP payload,
//! where H is the IP and UDP header bytes of the path's address family (28 over IPv4, 48 over
//! IPv6: [`crate::ip_udp_header`]); the size is IP bytes, as in the simulator, so a 1500-byte
//! packet is 1500 bytes of IP on the wire over either family and fills one Mahimahi delivery
//! opportunity. [`encode`] and [`decode`] take IPv4's 28; [`encode_over`] and [`decode_over`]
//! take the family's. The wire format is the same for both families: the declared size
//! (extension 3) is IP bytes, so a sender and a receiver that disagree on H (an IPv6 peer
//! sizing for IPv4) fail [`decode_over`]'s size check and the packet is counted malformed. Payload type 96 (dynamic), a 90 kHz media clock for the RTP timestamp,
//! the marker bit on the last packet of a video frame. The payload is zeros, or the scheme's
//! payload (e.g. `alfalfa`'s piece of a diff) followed by zeros ([`encode_with_payload`]).
//!
//! Header extension elements (ids fixed here; a session description would negotiate them with
//! `a=extmap`):
//!
//! | id | URI | bytes | carries |
//! |---|---|---|---|
//! | 1 | `http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time` | 3 | send time, 6.18 fixed-point seconds |
//! | 2 | `http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01` | 2 | transport-wide sequence number |
//! | 3 | [`URI_WISP_TIME`] | 12 | send time in ns (u64), declared packet size in bytes (u32) |
//! | 4 | [`URI_WISP_SEQ`] | 16 | sequence number (u64), byte sequence number (u64) |
//! | 5 | [`URI_SCHEME_FIELDS`] | 1–16 | the scheme's own header fields ([`SchemeFields`], opaque here: e.g. Sprout's time-to-next and throwaway). Only when the scheme stamps any |
//! | 6 | [`URI_CONTENT`] | 1 or 6 | content kind (u8); for video also frame (u32) and flags (u8: 1 last, 2 key). Only when not bulk |
//!
//! The standard elements (1, 2) are what third-party tools and receivers read. The wisp elements
//! carry the exact values of the controller contract, which the standard ones only approximate
//! (abs-send-time has 3.8 µs resolution and wraps every 64 s; sequence numbers are 16 bits), so
//! a scheme's receiver half sees exactly the header its sender half produced, as in the
//! simulator. The decoder checks that both agree.
//!
//! [`decode`] never panics: any input is either a packet or a [`RtpError`].

use bytes::Bytes;
use rtc_shared::marshal::{Marshal, MarshalSize, Unmarshal};
use wisp_core::packet::{Content, DataHeader, Ecn, IP_UDP_OVERHEAD, SchemeFields};
use wisp_core::{DataSize, Instant};

/// The dynamic payload type wisp uses.
pub const PAYLOAD_TYPE: u8 = 96;
/// The RTP timestamp clock rate (video).
pub use wisp_core::session::CLOCK_RATE_HZ;

/// Extension element ids.
pub mod ext {
    pub const ABS_SEND_TIME: u8 = 1;
    pub const TRANSPORT_CC: u8 = 2;
    pub const WISP_TIME: u8 = 3;
    pub const WISP_SEQ: u8 = 4;
    pub const SCHEME_FIELDS: u8 = 5;
    pub const CONTENT: u8 = 6;
}

pub const URI_ABS_SEND_TIME: &str = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time";
pub const URI_TRANSPORT_CC: &str =
    "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01";
pub const URI_WISP_TIME: &str = "urn:wisp:rtp-hdrext:send-time-ns";
pub const URI_WISP_SEQ: &str = "urn:wisp:rtp-hdrext:sequence";
pub const URI_SCHEME_FIELDS: &str = "urn:wisp:rtp-hdrext:scheme-fields";
pub const URI_CONTENT: &str = "urn:wisp:rtp-hdrext:content";

/// Why bytes are not a wisp data packet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtpError {
    #[error("malformed RTP: {0}")]
    Malformed(String),
    #[error("RTP version {0}, expected 2")]
    Version(u8),
    #[error("payload type {0}, expected {PAYLOAD_TYPE}")]
    PayloadType(u8),
    #[error("no one-byte header extension block")]
    NoExtensions,
    #[error("extension {0} is missing")]
    Missing(u8),
    #[error("extension {id} has {len} bytes")]
    BadLength { id: u8, len: usize },
    #[error("inconsistent packet: {0}")]
    Inconsistent(&'static str),
}

/// A value that cannot be put on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("packet field cannot be encoded: {0}")]
    Unrepresentable(&'static str),
    #[error("RTP encoding failed: {0}")]
    Rtp(String),
}

/// A decoded data packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataPacket {
    pub ssrc: u32,
    pub header: DataHeader,
    /// Bytes on the wire (UDP payload + IP/UDP headers).
    pub wire_size: DataSize,
    /// Where the RTP payload starts in the decoded datagram (it runs to the end).
    pub payload_at: usize,
}

/// abs-send-time: seconds in 6.18 fixed point, the low 24 bits.
pub fn abs_send_time(t: Instant) -> u32 {
    ((u128::from(t.as_nanos()) << 18) / 1_000_000_000) as u32 & 0x00FF_FFFF
}

/// The RTP timestamp of `t` on the 90 kHz clock.
pub fn rtp_timestamp(t: Instant) -> u32 {
    (u128::from(t.as_nanos()) * u128::from(CLOCK_RATE_HZ) / 1_000_000_000) as u32
}

static ZEROS: [u8; 65536] = [0; 65536];

fn content_bytes(c: Content) -> Option<Vec<u8>> {
    match c {
        Content::Bulk => None,
        Content::Video { frame, last, key } => {
            let mut v = vec![1];
            v.extend_from_slice(&frame.to_be_bytes());
            v.push(u8::from(last) | (u8::from(key) << 1));
            Some(v)
        }
        Content::Audio => Some(vec![2]),
        Content::Heartbeat => Some(vec![3]),
        Content::Probe => Some(vec![4]),
    }
}

fn parse_content(b: &[u8]) -> Result<Content, RtpError> {
    let bad = RtpError::BadLength {
        id: ext::CONTENT,
        len: b.len(),
    };
    match b {
        [1, f0, f1, f2, f3, flags] => {
            if flags & !3 != 0 {
                return Err(RtpError::Inconsistent("unknown video flags"));
            }
            Ok(Content::Video {
                frame: u32::from_be_bytes([*f0, *f1, *f2, *f3]),
                last: flags & 1 != 0,
                key: flags & 2 != 0,
            })
        }
        [1, ..] => Err(bad),
        [2] => Ok(Content::Audio),
        [3] => Ok(Content::Heartbeat),
        [4] => Ok(Content::Probe),
        [_] => Err(RtpError::Inconsistent("unknown content kind")),
        _ => Err(bad),
    }
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_be_bytes(a)
}

/// Encodes `h` as an RTP packet of SSRC `ssrc` into `out` (cleared first), for IPv4. The
/// packet is `h.size − 28` bytes long, or the bare headers if `h.size` is smaller than them.
pub fn encode(h: &DataHeader, ssrc: u32, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    encode_with_payload(h, ssrc, &[], out)
}

/// [`encode`] with `payload` as the first bytes of the RTP payload (zeros after it up to the
/// declared size), for IPv4. A payload that does not fit the declared size with the headers is
/// an error: the declared size is the wire size.
pub fn encode_with_payload(
    h: &DataHeader,
    ssrc: u32,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    encode_over(h, ssrc, payload, IP_UDP_OVERHEAD.bytes() as u32, out)
}

/// [`encode_with_payload`] for a path whose IP and UDP headers take `ip_udp_header` bytes
/// ([`crate::ip_udp_header`] of the peer): the datagram is `h.size − ip_udp_header` bytes, so
/// the packet is `h.size` bytes of IP on the wire.
pub fn encode_over(
    h: &DataHeader,
    ssrc: u32,
    payload: &[u8],
    ip_udp_header: u32,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let size = u32::try_from(h.size.bytes())
        .map_err(|_| EncodeError::Unrepresentable("packet size above 4 GB"))?;
    let mut header = rtp::header::Header {
        version: 2,
        marker: matches!(h.content, Content::Video { last: true, .. }),
        payload_type: PAYLOAD_TYPE,
        sequence_number: h.seq as u16,
        timestamp: rtp_timestamp(h.send_time),
        ssrc,
        extension: true,
        extension_profile: rtp::header::EXTENSION_PROFILE_ONE_BYTE,
        ..Default::default()
    };
    let mut set = |id: u8, bytes: Vec<u8>| {
        header
            .set_extension(id, Bytes::from(bytes))
            .map_err(|e| EncodeError::Rtp(e.to_string()))
    };
    set(
        ext::ABS_SEND_TIME,
        abs_send_time(h.send_time).to_be_bytes()[1..].to_vec(),
    )?;
    set(ext::TRANSPORT_CC, (h.seq as u16).to_be_bytes().to_vec())?;
    let mut t = h.send_time.as_nanos().to_be_bytes().to_vec();
    t.extend_from_slice(&size.to_be_bytes());
    set(ext::WISP_TIME, t)?;
    let mut s = h.seq.to_be_bytes().to_vec();
    s.extend_from_slice(&h.byte_seq.to_be_bytes());
    set(ext::WISP_SEQ, s)?;
    if !h.fields.is_empty() {
        set(ext::SCHEME_FIELDS, h.fields.as_slice().to_vec())?;
    }
    if let Some(c) = content_bytes(h.content) {
        set(ext::CONTENT, c)?;
    }
    let head = header.marshal_size();
    let want = (size as usize).saturating_sub(ip_udp_header as usize);
    let payload_len = want.saturating_sub(head).min(ZEROS.len());
    if payload.len() > payload_len {
        return Err(EncodeError::Unrepresentable(
            "payload larger than the declared packet size allows",
        ));
    }
    let body = if payload.is_empty() {
        Bytes::from_static(&ZEROS[..payload_len])
    } else {
        let mut b = Vec::with_capacity(payload_len);
        b.extend_from_slice(payload);
        b.resize(payload_len, 0);
        Bytes::from(b)
    };
    let packet = rtp::packet::Packet {
        header,
        payload: body,
    };
    out.clear();
    out.resize(packet.marshal_size(), 0);
    let n = packet
        .marshal_to(&mut out[..])
        .map_err(|e| EncodeError::Rtp(e.to_string()))?;
    out.truncate(n);
    Ok(())
}

/// Decodes a wisp data packet that came over IPv4. Never panics.
pub fn decode(buf: &[u8]) -> Result<DataPacket, RtpError> {
    decode_over(buf, IP_UDP_OVERHEAD.bytes() as u32)
}

/// Decodes a wisp data packet that came over a path whose IP and UDP headers take
/// `ip_udp_header` bytes ([`crate::ip_udp_header`] of the sender): its wire size is the
/// datagram's length plus them, and must be its declared size. Never panics.
pub fn decode_over(buf: &[u8], ip_udp_header: u32) -> Result<DataPacket, RtpError> {
    let mut b = buf;
    let header =
        rtp::header::Header::unmarshal(&mut b).map_err(|e| RtpError::Malformed(e.to_string()))?;
    let payload_len = b.len();
    if header.version != 2 {
        return Err(RtpError::Version(header.version));
    }
    if header.payload_type != PAYLOAD_TYPE {
        return Err(RtpError::PayloadType(header.payload_type));
    }
    if !header.extension || header.extension_profile != rtp::header::EXTENSION_PROFILE_ONE_BYTE {
        return Err(RtpError::NoExtensions);
    }
    let get = |id: u8, lens: &[usize]| -> Result<Option<Bytes>, RtpError> {
        match header.get_extension(id) {
            None => Ok(None),
            Some(v) if lens.contains(&v.len()) => Ok(Some(v)),
            Some(v) => Err(RtpError::BadLength { id, len: v.len() }),
        }
    };
    let time = get(ext::WISP_TIME, &[12])?.ok_or(RtpError::Missing(ext::WISP_TIME))?;
    let seqs = get(ext::WISP_SEQ, &[16])?.ok_or(RtpError::Missing(ext::WISP_SEQ))?;
    let abs = get(ext::ABS_SEND_TIME, &[3])?.ok_or(RtpError::Missing(ext::ABS_SEND_TIME))?;
    let twcc = get(ext::TRANSPORT_CC, &[2])?.ok_or(RtpError::Missing(ext::TRANSPORT_CC))?;
    let send_time = Instant::from_nanos(u64_at(&time, 0));
    let size = u32::from_be_bytes([time[8], time[9], time[10], time[11]]);
    let seq = u64_at(&seqs, 0);
    let byte_seq = u64_at(&seqs, 8);
    if u32::from_be_bytes([0, abs[0], abs[1], abs[2]]) != abs_send_time(send_time) {
        return Err(RtpError::Inconsistent(
            "abs-send-time disagrees with the send time",
        ));
    }
    if u16::from_be_bytes([twcc[0], twcc[1]]) != seq as u16 || header.sequence_number != seq as u16
    {
        return Err(RtpError::Inconsistent("16-bit sequence numbers disagree"));
    }
    // One-byte header elements carry 1–16 bytes, which is what SchemeFields holds.
    let fields = match header.get_extension(ext::SCHEME_FIELDS) {
        None => SchemeFields::EMPTY,
        Some(v) => SchemeFields::new(&v).ok_or(RtpError::BadLength {
            id: ext::SCHEME_FIELDS,
            len: v.len(),
        })?,
    };
    let content = match get(ext::CONTENT, &[1, 6])? {
        None => Content::Bulk,
        Some(v) => parse_content(&v)?,
    };
    if header.marker != matches!(content, Content::Video { last: true, .. }) {
        return Err(RtpError::Inconsistent(
            "marker bit disagrees with the content",
        ));
    }
    let wire = buf.len() as u64 + u64::from(ip_udp_header);
    // The declared size is the wire size, except for a packet smaller than its own headers,
    // which travels as the bare headers.
    if u64::from(size) != wire && !(u64::from(size) < wire && payload_len == 0) {
        return Err(RtpError::Inconsistent(
            "declared size disagrees with the datagram",
        ));
    }
    Ok(DataPacket {
        ssrc: header.ssrc,
        header: DataHeader {
            seq,
            byte_seq,
            send_time,
            size: DataSize::from_bytes(u64::from(size)),
            content,
            // RTP does not carry the IP header's ECN field, and the socket does not read it
            // yet: Not-ECT.
            ecn: Ecn::NotEct,
            fields,
        },
        wire_size: DataSize::from_bytes(wire),
        payload_at: buf.len() - payload_len,
    })
}

/// RFC 5761 §4 demultiplexing: an RTCP packet type (192–223) in the second byte.
pub fn is_rtcp(buf: &[u8]) -> bool {
    buf.len() >= 2 && (192..=223).contains(&buf[1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> DataHeader {
        DataHeader {
            seq: 70_000,
            byte_seq: 105_000_000,
            send_time: Instant::from_nanos(123_456_789_012),
            size: DataSize::from_bytes(1500),
            content: Content::Bulk,
            ecn: Ecn::NotEct,
            fields: SchemeFields::EMPTY,
        }
    }

    /// `alfalfa`'s largest video packet (a 1200-byte piece of a diff, 16 bytes of Sprout's
    /// fields) is exactly its declared size on the wire: the payload fits the overhead the
    /// scheme counts, and comes back as sent. One byte more does not fit: an error.
    #[test]
    fn a_payload_travels_within_the_declared_size() {
        use wisp_core::scheme::alfalfa::{Piece, WIRE_OVERHEAD};
        let diff: Vec<u8> = (0..1200u32).map(|i| (i * 7) as u8).collect();
        let mut payload = vec![];
        Piece {
            state: wisp_core::video::StateId(9),
            index: 1,
            count: 2,
            age: wisp_core::Duration::from_micros(40),
            bytes: &diff,
        }
        .emit(&mut payload);
        let h = DataHeader {
            size: DataSize::from_bytes(1200 + WIRE_OVERHEAD),
            content: Content::Video {
                frame: u32::MAX,
                last: true,
                key: false,
            },
            fields: fields16(3),
            ..sample()
        };
        let mut out = vec![];
        encode_with_payload(&h, 5, &payload, &mut out).unwrap();
        assert_eq!(out.len() as u64 + 28, h.size.bytes());
        let p = decode(&out).unwrap();
        assert_eq!(p.header, h);
        assert_eq!(Piece::parse(&out[p.payload_at..]).unwrap().bytes, &diff[..]);
        payload.push(0);
        assert!(encode_with_payload(&h, 5, &payload, &mut out).is_err());
        // Without a payload the packet is zeros after the headers, as before.
        encode(&h, 5, &mut out).unwrap();
        let p = decode(&out).unwrap();
        assert!(out[p.payload_at..].iter().all(|&b| b == 0));
        // Over IPv6 the headers take 20 bytes more: a packet sized for IPv4's cannot carry the
        // full piece, one sized with the family's overhead can, and is its size on the wire.
        payload.pop();
        assert!(encode_over(&h, 5, &payload, crate::IPV6_UDP_HEADER, &mut out).is_err());
        let v6 = DataHeader {
            size: DataSize::from_bytes(
                1200 + wisp_core::scheme::alfalfa::wire_overhead(crate::IPV6_UDP_HEADER.into()),
            ),
            ..h
        };
        encode_over(&v6, 5, &payload, crate::IPV6_UDP_HEADER, &mut out).unwrap();
        assert_eq!(out.len() as u64 + 48, v6.size.bytes());
        let p = decode_over(&out, crate::IPV6_UDP_HEADER).unwrap();
        assert_eq!(p.header, v6);
        assert_eq!(Piece::parse(&out[p.payload_at..]).unwrap().bytes, &diff[..]);
    }

    /// A scheme's 16-byte fields (the most an element carries), opaque here.
    fn fields16(seed: u8) -> SchemeFields {
        let b: Vec<u8> = (0..16)
            .map(|i| seed.wrapping_mul(31).wrapping_add(i))
            .collect();
        SchemeFields::new(&b).unwrap()
    }

    #[test]
    fn round_trip_bulk_and_scheme_fields_and_video() {
        let mut buf = Vec::new();
        let mut cases = vec![sample()];
        cases.push(DataHeader {
            fields: fields16(1),
            ..sample()
        });
        cases.push(DataHeader {
            fields: fields16(2),
            ..sample()
        });
        cases.push(DataHeader {
            fields: SchemeFields::new(&[7]).unwrap(),
            ..sample()
        });
        cases.push(DataHeader {
            content: Content::Video {
                frame: 7,
                last: true,
                key: true,
            },
            size: DataSize::from_bytes(200),
            ..sample()
        });
        cases.push(DataHeader {
            content: Content::Heartbeat,
            size: DataSize::from_bytes(40),
            ..sample()
        });
        for h in cases {
            encode(&h, 0xdead_beef, &mut buf).unwrap();
            let d = decode(&buf).unwrap();
            assert_eq!(d.header, h);
            assert_eq!(d.ssrc, 0xdead_beef);
            if h.size.bytes() >= 100 {
                assert_eq!(buf.len() as u64 + 28, h.size.bytes(), "{h:?}");
            }
        }
    }

    /// Over IPv6 (40 + 8 header bytes) a packet declared as N bytes is a datagram of N − 48
    /// bytes, so N bytes of IP on the wire; a receiver that counts the other family's headers
    /// refuses it instead of counting 20 bytes too many or too few.
    #[test]
    fn the_datagram_leaves_room_for_the_families_headers() {
        let mut buf = Vec::new();
        let h = sample();
        for (hdr, other) in [(28u32, 48u32), (48, 28)] {
            encode_over(&h, 3, &[], hdr, &mut buf).unwrap();
            assert_eq!(buf.len() as u64 + u64::from(hdr), 1500);
            let d = decode_over(&buf, hdr).unwrap();
            assert_eq!((d.header, d.wire_size.bytes()), (h, 1500));
            assert!(matches!(
                decode_over(&buf, other),
                Err(RtpError::Inconsistent(_))
            ));
        }
        // IPv6: 1452 bytes of UDP payload for a 1500-byte packet (RFC 8200 §3, RFC 768).
        encode_over(&h, 3, &[], crate::IPV6_UDP_HEADER, &mut buf).unwrap();
        assert_eq!(buf.len(), 1452);
    }

    #[test]
    fn fixed_bytes_of_the_fixed_header_and_standard_extensions() {
        let mut buf = Vec::new();
        let h = DataHeader {
            seq: 0x1_0203,
            send_time: Instant::from_secs(1),
            ..sample()
        };
        encode(&h, 0x0a0b_0c0d, &mut buf).unwrap();
        // V=2, X=1, CC=0; M=0, PT=96; seq 0x0203; timestamp 90000 = 0x00015f90; SSRC.
        assert_eq!(
            buf[..12],
            [
                0x90, 96, 0x02, 0x03, 0x00, 0x01, 0x5f, 0x90, 0x0a, 0x0b, 0x0c, 0x0d
            ]
        );
        // One-byte profile; the extension block's length in 32-bit words.
        assert_eq!(buf[12..14], [0xbe, 0xde]);
        // abs-send-time: id 1, len 3 → 0x12; 1 s = 0x040000 in 6.18.
        assert_eq!(buf[16..20], [0x12, 0x04, 0x00, 0x00]);
        // transport-cc: id 2, len 2 → 0x21; seq 0x0203.
        assert_eq!(buf[20..23], [0x21, 0x02, 0x03]);
        assert_eq!(buf.len(), 1472);
    }

    #[test]
    fn rejects_what_is_not_ours() {
        let mut buf = Vec::new();
        encode(&sample(), 1, &mut buf).unwrap();
        let mut v = buf.clone();
        v[0] = (v[0] & 0x3f) | 0x40;
        assert!(decode(&v).is_err());
        let mut v = buf.clone();
        v[1] = 97;
        assert_eq!(decode(&v), Err(RtpError::PayloadType(97)));
        let mut v = buf.clone();
        v[3] ^= 1;
        assert!(matches!(decode(&v), Err(RtpError::Inconsistent(_))));
        // A truncated datagram no longer matches its declared size.
        assert!(decode(&buf[..buf.len() - 1]).is_err());
        assert!(decode(&buf[..30]).is_err());
        assert!(decode(&[]).is_err());
        assert!(!is_rtcp(&buf));
        assert!(is_rtcp(&[0x80, 201, 0, 1]));
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..1600)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn decode_never_panics_on_mutated_packets(
            flips in proptest::collection::vec((0usize..120, any::<u8>()), 1..6),
            cut in 0usize..1500,
        ) {
            let mut buf = Vec::new();
            encode(&DataHeader { fields: fields16(3), ..sample() }, 9, &mut buf).unwrap();
            for (i, b) in flips {
                if i < buf.len() { buf[i] ^= b; }
            }
            buf.truncate(cut.max(1));
            let _ = decode(&buf);
        }

        #[test]
        fn any_header_round_trips(seq in any::<u64>(), byte_seq in any::<u64>(), t in any::<u64>(),
                                  size in 28u64..1500, fields in proptest::collection::vec(any::<u8>(), 0..=16),
                                  frame in any::<u32>(), video in any::<bool>()) {
            let h = DataHeader {
                seq, byte_seq, send_time: Instant::from_nanos(t), size: DataSize::from_bytes(size),
                content: if video { Content::Video { frame, last: frame % 2 == 0, key: frame % 3 == 0 } } else { Content::Bulk },
                ecn: Ecn::NotEct,
                fields: SchemeFields::new(&fields).unwrap(),
            };
            let mut buf = Vec::new();
            encode(&h, 3, &mut buf).unwrap();
            prop_assert_eq!(decode(&buf).unwrap().header, h);
        }
    }
}
