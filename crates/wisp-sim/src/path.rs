//! The hops a flow's packets take through a [`Network`](crate::sim::Network).

use crate::wifi::link::NodeId;

/// One hop of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    /// Link `i` of [`Network::links`](crate::sim::Network::links).
    Link(u16),
    /// Across Wi-Fi medium `medium` of [`Network::media`](crate::sim::Network::media), from node `from` to node `to` of
    /// that medium (0 is its AP; see [`crate::wifi::link`]).
    Wifi {
        medium: u16,
        from: NodeId,
        to: NodeId,
    },
}
