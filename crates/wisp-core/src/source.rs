//! Traffic sources: what an application gives the flow driver to send.

use crate::packet::Content;
use crate::time::Instant;
use crate::units::{Bitrate, DataSize};

/// An always-backlogged source (a bulk transfer): it always has data.
#[derive(Clone, Debug)]
pub struct BulkSource {
    /// The smallest packet it sends when a window allows less than a full packet; a window
    /// smaller than this sends nothing. Equal to the MTU, only full-size packets leave.
    pub min_packet: DataSize,
}

/// What a flow sends.
#[derive(Clone, Debug)]
pub enum Source {
    Bulk(BulkSource),
}

impl Source {
    /// A bulk source that only sends full `mtu`-size packets.
    pub fn bulk(mtu: DataSize) -> Self {
        Source::Bulk(BulkSource { min_packet: mtu })
    }

    /// Lets a time-driven source (a media encoder) produce data up to `now`, at `target` if the
    /// controller is rate-based.
    pub fn advance(&mut self, _now: Instant, _target: Option<Bitrate>) {
        match self {
            Source::Bulk(_) => {}
        }
    }

    /// The next packet's size and content, at most `mtu` and at most `limit` if given.
    pub fn peek(&self, mtu: DataSize, limit: Option<DataSize>) -> Option<(DataSize, Content)> {
        match self {
            Source::Bulk(b) => {
                let size = limit.map_or(mtu, |l| l.min(mtu));
                (size >= b.min_packet.min(mtu) && size > DataSize::ZERO)
                    .then_some((size, Content::Bulk))
            }
        }
    }

    /// Removes the packet [`Source::peek`] returned.
    pub fn pop(&mut self, _size: DataSize) {
        match self {
            Source::Bulk(_) => {}
        }
    }

    /// Bytes ready to send; `None` if unlimited.
    pub fn backlog(&self) -> Option<DataSize> {
        match self {
            Source::Bulk(_) => None,
        }
    }

    /// When the source next produces data on its own (a frame), if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Source::Bulk(_) => None,
        }
    }
}
