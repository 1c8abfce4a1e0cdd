//! ICMP echo messages for Ping-Pair (RFC 792): the request wisp sends and the reply it reads,
//! with or without the IPv4 header in front (a raw socket delivers it, a ping socket does not).
//!
//! Parsing never panics: anything that is not an echo reply to one of our probes (too short, a
//! bad IPv4 header or checksum, another ICMP type, another identifier, a payload without our
//! token) is an [`IcmpError`], which the caller counts and drops.

/// ICMP type of an echo reply and of an echo request.
pub const ECHO_REPLY: u8 = 0;
pub const ECHO_REQUEST: u8 = 8;
/// The payload of every wisp probe starts with this, then the run's 8-byte token.
pub const MAGIC: &[u8; 4] = b"wPP1";
/// Magic and token.
pub const PREFIX: usize = MAGIC.len() + 8;

/// Why a received datagram is not one of our echo replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IcmpError {
    #[error("truncated ({0} bytes)")]
    Truncated(usize),
    #[error("not an IPv4 header")]
    BadIpHeader,
    #[error("not ICMP (IP protocol {0})")]
    NotIcmp(u8),
    #[error("bad ICMP checksum")]
    Checksum,
    #[error("ICMP type {0} code {1}, not an echo reply")]
    NotEchoReply(u8, u8),
    #[error("identifier {0} is not ours")]
    ForeignIdent(u16),
    #[error("payload is not a wisp probe's")]
    ForeignPayload,
}

impl IcmpError {
    /// Whether the datagram was well formed but meant for someone else (another program's
    /// ping, another message type), rather than malformed.
    pub fn is_foreign(&self) -> bool {
        matches!(
            self,
            IcmpError::NotIcmp(_)
                | IcmpError::NotEchoReply(..)
                | IcmpError::ForeignIdent(_)
                | IcmpError::ForeignPayload
        )
    }
}

/// An echo reply to one of our probes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EchoReply {
    pub ident: u16,
    pub seq: u16,
    /// The reply's TOS byte, when the IPv4 header was there to read it.
    pub tos: Option<u8>,
    /// ICMP message length (header and payload).
    pub len: usize,
}

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u32::from(*last) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// An echo request with identifier `ident`, sequence `seq` and a payload of `payload_len` bytes
/// (at least [`PREFIX`]: the magic and `token`, then zeros).
pub fn echo_request(ident: u16, seq: u16, token: u64, payload_len: usize) -> Vec<u8> {
    let payload_len = payload_len.max(PREFIX);
    let mut m = Vec::with_capacity(8 + payload_len);
    m.extend_from_slice(&[ECHO_REQUEST, 0, 0, 0]);
    m.extend_from_slice(&ident.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(MAGIC);
    m.extend_from_slice(&token.to_be_bytes());
    m.resize(8 + payload_len, 0);
    let c = checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

/// Parses a datagram as an echo reply to one of our probes: `with_ip` when the socket delivers
/// the IPv4 header (raw sockets); `ident` is the identifier to accept (`None` on a ping socket,
/// where the kernel already matched it); `token` is the run's.
pub fn parse_reply(
    buf: &[u8],
    with_ip: bool,
    ident: Option<u16>,
    token: u64,
) -> Result<EchoReply, IcmpError> {
    let (icmp, tos) = if with_ip {
        if buf.len() < 20 {
            return Err(IcmpError::Truncated(buf.len()));
        }
        let version = buf[0] >> 4;
        let ihl = usize::from(buf[0] & 0x0f) * 4;
        let total = usize::from(u16::from_be_bytes([buf[2], buf[3]]));
        if version != 4 || ihl < 20 || ihl > buf.len() || total < ihl {
            return Err(IcmpError::BadIpHeader);
        }
        if buf[9] != 1 {
            return Err(IcmpError::NotIcmp(buf[9]));
        }
        // The kernel may hand over a datagram longer than the IP length says: trust the length.
        let end = total.min(buf.len());
        (&buf[ihl..end], Some(buf[1]))
    } else {
        (buf, None)
    };
    if icmp.len() < 8 {
        return Err(IcmpError::Truncated(icmp.len()));
    }
    if checksum(icmp) != 0 {
        return Err(IcmpError::Checksum);
    }
    if icmp[0] != ECHO_REPLY || icmp[1] != 0 {
        return Err(IcmpError::NotEchoReply(icmp[0], icmp[1]));
    }
    let id = u16::from_be_bytes([icmp[4], icmp[5]]);
    if ident.is_some_and(|want| want != id) {
        return Err(IcmpError::ForeignIdent(id));
    }
    let payload = &icmp[8..];
    if payload.len() < PREFIX
        || &payload[..MAGIC.len()] != MAGIC
        || payload[MAGIC.len()..PREFIX] != token.to_be_bytes()
    {
        return Err(IcmpError::ForeignPayload);
    }
    Ok(EchoReply {
        ident: id,
        seq: u16::from_be_bytes([icmp[6], icmp[7]]),
        tos,
        len: icmp.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reply a host sends: the request with type 0 and the checksum fixed up.
    fn reply_of(req: &[u8]) -> Vec<u8> {
        let mut r = req.to_vec();
        r[0] = ECHO_REPLY;
        r[2..4].copy_from_slice(&[0, 0]);
        let c = checksum(&r);
        r[2..4].copy_from_slice(&c.to_be_bytes());
        r
    }

    fn with_ip(icmp: &[u8], tos: u8) -> Vec<u8> {
        let total = (20 + icmp.len()) as u16;
        let mut ip = vec![
            0x45, tos, 0, 0, 0, 0, 0x40, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        let c = checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        ip.extend_from_slice(icmp);
        ip
    }

    #[test]
    fn checksum_of_rfc_1071s_example() {
        // RFC 1071 §3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2; the checksum is its complement.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            !0xddf2
        );
        // Odd length: the last byte is padded with a zero.
        assert_eq!(checksum(&[0x01]), !0x0100);
    }

    #[test]
    fn request_bytes_and_reply_round_trip() {
        let req = echo_request(0x1234, 7, 0x0102_0304_0506_0708, 12);
        assert_eq!(req.len(), 20);
        assert_eq!(&req[..2], &[8, 0]);
        assert_eq!(&req[4..8], &[0x12, 0x34, 0, 7]);
        assert_eq!(&req[8..12], b"wPP1");
        assert_eq!(&req[12..20], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(
            checksum(&req),
            0,
            "a message with its checksum sums to zero"
        );
        let rep = reply_of(&req);
        let want = EchoReply {
            ident: 0x1234,
            seq: 7,
            tos: None,
            len: 20,
        };
        let token = 0x0102_0304_0506_0708;
        assert_eq!(parse_reply(&rep, false, Some(0x1234), token), Ok(want));
        assert_eq!(
            parse_reply(&with_ip(&rep, 0xb8), true, Some(0x1234), token),
            Ok(EchoReply {
                tos: Some(0xb8),
                ..want
            })
        );
    }

    #[test]
    fn foreign_and_malformed_replies_are_refused() {
        let token = 99;
        let rep = reply_of(&echo_request(5, 1, token, 56));
        assert_eq!(
            parse_reply(&rep, false, Some(6), token),
            Err(IcmpError::ForeignIdent(5))
        );
        assert_eq!(
            parse_reply(&rep, false, Some(5), 100),
            Err(IcmpError::ForeignPayload)
        );
        // Our own request looped back (a raw socket sees it): not a reply.
        let req = echo_request(5, 1, token, 56);
        assert_eq!(
            parse_reply(&req, false, Some(5), token),
            Err(IcmpError::NotEchoReply(8, 0))
        );
        let mut bad = rep.clone();
        bad[20] ^= 0xff;
        assert_eq!(
            parse_reply(&bad, false, Some(5), token),
            Err(IcmpError::Checksum)
        );
        assert_eq!(
            parse_reply(&rep[..7], false, None, token),
            Err(IcmpError::Truncated(7))
        );
        let mut udp = with_ip(&rep, 0);
        udp[9] = 17;
        assert_eq!(
            parse_reply(&udp, true, None, token),
            Err(IcmpError::NotIcmp(17))
        );
        let mut v6 = with_ip(&rep, 0);
        v6[0] = 0x65;
        assert_eq!(
            parse_reply(&v6, true, None, token),
            Err(IcmpError::BadIpHeader)
        );
        assert!(IcmpError::ForeignIdent(1).is_foreign() && !IcmpError::Checksum.is_foreign());
    }

    proptest! {
        /// Any bytes, either framing: an answer, never a panic.
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200),
                              ip in any::<bool>(), ident in any::<Option<u16>>()) {
            let _ = parse_reply(&bytes, ip, ident, 1);
        }

        /// Every reply to a request we made parses back to its identifier and sequence, and
        /// any single flipped byte is refused.
        #[test]
        fn replies_round_trip_and_corruption_is_caught(ident in any::<u16>(), seq in any::<u16>(),
                token in any::<u64>(), len in 0usize..1400, flip in any::<prop::sample::Index>(),
                mask in 1u8..=255) {
            let rep = reply_of(&echo_request(ident, seq, token, len));
            let r = parse_reply(&rep, false, Some(ident), token).unwrap();
            prop_assert_eq!((r.ident, r.seq), (ident, seq));
            let mut bad = rep.clone();
            let i = flip.index(bad.len());
            bad[i] ^= mask;
            prop_assert!(parse_reply(&bad, false, Some(ident), token).is_err());
        }
    }
}
