//! What a data packet carries, as the two halves of a scheme see it.
//!
//! The simulator carries a [`DataHeader`] as a value; `wisp-net` maps it onto RTP and its header
//! extensions. Sizes are wire sizes (IP packet bytes): a 1500-byte packet uses exactly one
//! Mahimahi delivery opportunity.

use crate::time::{Duration, Instant};
use crate::units::DataSize;

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
    /// Sprout: the sender's promise of how long until its next packet; `None` = no promise.
    pub time_to_next: Option<Duration>,
    /// Sprout: bytes before `byte_seq` that the receiver may declare received-or-lost.
    pub throwaway: Option<u64>,
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
