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
