//! What a data packet carries, as the two halves of a scheme see it.
//!
//! The simulator carries a [`DataHeader`] as a value; `wisp-net` maps it onto RTP and its header
//! extensions. Sizes are wire sizes (IP packet bytes): a 1500-byte packet uses exactly one
//! Mahimahi delivery opportunity.
//!
//! The header has the fields every scheme shares (sequence numbers, send time, size, content)
//! and one opaque [`SchemeFields`] block: the per-packet fields that belong to one scheme (Sprout's
//! time-to-next and throwaway number, say). A scheme encodes and decodes its own block through
//! [`HeaderFields`]; the layers below carry the bytes without looking at them (the simulator as a
//! value, `wisp-net` as one RTP header extension element).
//!
//! The header also carries the packet's IP ECN codepoint ([`Ecn`], RFC 3168 §5): not part of
//! RTP but of the IP header around it. The sender half chooses it
//! ([`Sender::ecn`](crate::controller::Sender::ecn), Not-ECT unless it says otherwise), a
//! marking queue on the path may turn an ECT codepoint into CE, and the receiver half reads
//! what arrived in [`DataHeader::ecn`] in its
//! [`on_packet_received`](crate::controller::Receiver::on_packet_received). The simulator
//! carries it end to end; `wisp-net` does not set or read the IP header's ECN bits yet, so over
//! real sockets a receiver sees Not-ECT.

use crate::time::Instant;
use crate::units::DataSize;
use crate::wire::WireError;
use core::fmt;

/// What a data packet is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Content {
    /// Bulk data from an always-backlogged source.
    #[default]
    Bulk,
    /// Part of a video frame.
    Video {
        /// Frame number.
        frame: u32,
        /// The last packet of the frame (RTP marker bit).
        last: bool,
        /// Part of a key frame.
        key: bool,
    },
    /// An audio packet.
    Audio,
    /// A small packet sent only so the receiver hears from the sender (Sprout heartbeat).
    Heartbeat,
    /// A probe or padding packet sent by the controller outside its allowance.
    Probe,
}

/// The 2-bit ECN field of the IP header (RFC 3168 §5), as the two halves of a scheme see it.
///
/// A sender that supports classic ECN (RFC 3168) sends ECT(0); an L4S sender (RFC 9331) sends
/// ECT(1); a queue that would drop an ECT packet may instead set it to CE, and never changes
/// Not-ECT or CE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Ecn {
    /// 0b00: the transport does not support ECN (the default).
    #[default]
    NotEct,
    /// 0b01: ECN-capable transport, codepoint 1 (the L4S identifier, RFC 9331 §4).
    Ect1,
    /// 0b10: ECN-capable transport, codepoint 0 (classic ECN, RFC 3168).
    Ect0,
    /// 0b11: congestion experienced, set by a queue on the path.
    Ce,
}

impl Ecn {
    /// The codepoint of the two low bits of `bits` (the higher bits are ignored: the IP TOS
    /// or traffic-class byte may be given whole).
    pub const fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The codepoint's two bits (0 to 3), as in the IP header and RFC 8888's ECN field.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// ECT(0) or ECT(1): a queue may mark the packet instead of dropping it.
    pub const fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }

    /// CE: a queue on the path marked the packet.
    pub const fn is_ce(self) -> bool {
        matches!(self, Ecn::Ce)
    }

    /// The packet is for an L4S queue (RFC 9331 §5.1: ECT(1) or CE, the low bit set).
    pub const fn is_l4s(self) -> bool {
        self.bits() & 0b01 == 0b01
    }

    /// The codepoint after a queue marks the packet: CE if it was ECT, else unchanged
    /// (RFC 3168 §5: a Not-ECT packet is dropped, never marked).
    #[must_use]
    pub const fn marked(self) -> Ecn {
        if self.is_ect() { Ecn::Ce } else { self }
    }
}

/// The header fields of a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DataHeader {
    /// Per-flow packet sequence number, from 0 (transport-wide sequence number).
    pub seq: u64,
    /// Bytes of this flow sent before this packet (Sprout's byte sequence number).
    pub byte_seq: u64,
    /// When the sender sent it (abs-send-time), stamped by the flow driver.
    pub send_time: Instant,
    /// Wire size.
    pub size: DataSize,
    pub content: Content,
    /// The IP ECN codepoint: the one the sender chose when the packet left (stamped from
    /// [`Sender::ecn`](crate::controller::Sender::ecn)), and CE once a queue marked it; a
    /// receiver reads the codepoint it arrived with.
    pub ecn: Ecn,
    /// The scheme's own per-packet fields, encoded by its sender ([`HeaderFields`]).
    pub fields: SchemeFields,
}

/// A scheme's per-packet header fields as bytes: at most [`SchemeFields::MAX`] of them, so that
/// they fit one RFC 8285 one-byte RTP header extension element.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct SchemeFields {
    len: u8,
    bytes: [u8; SchemeFields::MAX],
}

impl SchemeFields {
    /// The most bytes a scheme's fields may take.
    pub const MAX: usize = 16;

    /// No fields.
    pub const EMPTY: SchemeFields = SchemeFields {
        len: 0,
        bytes: [0; SchemeFields::MAX],
    };

    /// The fields `bytes`, if there are at most [`SchemeFields::MAX`] of them.
    pub fn new(bytes: &[u8]) -> Option<Self> {
        let mut f = SchemeFields::EMPTY;
        f.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        f.len = bytes.len() as u8;
        Some(f)
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for SchemeFields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SchemeFields({:02x?})", self.as_slice())
    }
}

/// A scheme's typed per-packet header fields and their encoding in a [`SchemeFields`] block.
///
/// `()` is the implementation for schemes that stamp nothing. Decoding never panics: foreign or
/// corrupt bytes are a [`WireError`], which the layers below count.
pub trait HeaderFields: Sized + Copy + Default + fmt::Debug {
    fn emit(&self) -> SchemeFields;
    fn parse(fields: &SchemeFields) -> Result<Self, WireError>;
}

impl HeaderFields for () {
    fn emit(&self) -> SchemeFields {
        SchemeFields::EMPTY
    }
    fn parse(fields: &SchemeFields) -> Result<Self, WireError> {
        match fields.len {
            0 => Ok(()),
            n => Err(WireError::Trailing(usize::from(n))),
        }
    }
}

impl DataHeader {
    /// The byte sequence number just past this packet.
    pub fn byte_end(&self) -> u64 {
        self.byte_seq + self.size.bytes()
    }
}

/// Bytes of IPv4 + UDP header that every packet wisp sends carries.
pub const IP_UDP_OVERHEAD: DataSize = DataSize::from_bytes(28);

/// The default maximum packet size on the wire (one Mahimahi delivery opportunity).
pub const DEFAULT_MTU: DataSize = DataSize::from_bytes(1500);

#[cfg(test)]
mod tests {
    use super::Ecn;

    /// RFC 3168 §5's codepoints: 00 Not-ECT, 01 ECT(1), 10 ECT(0), 11 CE; only ECT is marked;
    /// RFC 9331 §5.1's L4S identifier is the low bit.
    #[test]
    fn ecn_codepoints_bits_and_marking() {
        let all = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce];
        for (bits, e) in all.into_iter().enumerate() {
            assert_eq!(e.bits(), bits as u8);
            assert_eq!(Ecn::from_bits(bits as u8), e);
            // A whole TOS byte (DSCP 46, EF) gives the same codepoint.
            assert_eq!(Ecn::from_bits((46 << 2) | bits as u8), e);
        }
        assert_eq!(Ecn::default(), Ecn::NotEct);
        assert_eq!(all.map(Ecn::is_ect), [false, true, true, false]);
        assert_eq!(all.map(Ecn::is_l4s), [false, true, false, true]);
        assert_eq!(
            all.map(Ecn::marked),
            [Ecn::NotEct, Ecn::Ce, Ecn::Ce, Ecn::Ce]
        );
        assert!(Ecn::Ce.is_ce() && !Ecn::Ect0.is_ce());
    }
}
