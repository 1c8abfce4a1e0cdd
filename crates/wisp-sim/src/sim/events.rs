//! The engine's events and the heap they wait in, ordered by `(time, seq)`: two events at the
//! same instant run in the order they were scheduled.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use wisp_core::Instant;

/// A flow: its index in [`Network::flows`](super::Network::flows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlowId(pub u16);

/// A wired link: its index in [`Network::links`](super::Network::links) (a path's
/// [`Hop::Link`](super::Hop::Link)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinkId(pub u16);

/// A Wi-Fi medium: its index in [`Network::media`](super::Network::media).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MediumId(pub u16);

/// An agent of the engine ([`super::agent`]): its index among the network's agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AgentId(pub u16);

/// One of an agent's timers, numbered by the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timer(pub u8);

macro_rules! index {
    ($($id:ident),*) => {$(
        impl $id {
            /// The index it stands for.
            pub(crate) fn index(self) -> usize {
                usize::from(self.0)
            }
        }
    )*};
}
index!(FlowId, LinkId, MediumId, AgentId);

/// A packet the engine carries: a data packet (its record's index in the run's log) or a
/// feedback message (its slot among those in flight), told apart by the top bit. Queues and
/// media carry it as its 32 bits ([`PacketId::raw`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PacketId(u32);

/// What a [`PacketId`] names.
pub(crate) enum Packet {
    /// A data packet: its index in the log's packets.
    Data(usize),
    /// A feedback message: its slot among those in flight.
    Feedback(usize),
}

impl PacketId {
    const FEEDBACK: u32 = 1 << 31;

    /// Data packet `index` of the log.
    pub(crate) fn data(index: usize) -> Self {
        PacketId(index as u32)
    }

    /// The feedback message in slot `slot`.
    pub(crate) fn feedback(slot: usize) -> Self {
        PacketId(slot as u32 | Self::FEEDBACK)
    }

    /// A handle a queue or a medium gives back.
    pub(crate) fn from_raw(raw: u32) -> Self {
        PacketId(raw)
    }

    /// The handle queues and media carry.
    pub(crate) fn raw(self) -> u32 {
        self.0
    }

    pub(crate) fn get(self) -> Packet {
        if self.0 & Self::FEEDBACK == 0 {
            Packet::Data(self.0 as usize)
        } else {
            Packet::Feedback((self.0 & !Self::FEEDBACK) as usize)
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    FlowStart(FlowId),
    SenderWake(FlowId),
    ReceiverWake(FlowId),
    /// A packet reaches a link's queue (after the link's delay).
    Arrive(LinkId, PacketId),
    /// The link's server may start on the head of its queue.
    Start(LinkId),
    /// The link's server finished a packet.
    Complete(LinkId, PacketId),
    /// A packet the server finished earlier leaves the link (a link whose delivery lags its
    /// server).
    Deliver(LinkId, PacketId),
    /// The Wi-Fi medium may have something to do.
    WifiWake(MediumId),
    /// A timer an agent asked for is due.
    Agent(AgentId, Timer),
}

// The ids cost nothing: an event is as small as with bare integers.
const _: () = assert!(std::mem::size_of::<Ev>() == 8);

#[derive(Debug)]
struct Scheduled {
    at: Instant,
    seq: u64,
    ev: Ev,
}
impl PartialEq for Scheduled {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Scheduled {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// The pending events.
#[derive(Debug, Default)]
pub(crate) struct Events {
    heap: BinaryHeap<Scheduled>,
    seq: u64,
}

impl Events {
    pub(crate) fn schedule(&mut self, at: Instant, ev: Ev) {
        self.heap.push(Scheduled {
            at,
            seq: self.seq,
            ev,
        });
        self.seq += 1;
    }

    /// The next event, if it is due before `end`.
    pub(crate) fn pop_before(&mut self, end: Instant) -> Option<(Instant, Ev)> {
        if self.heap.peek()?.at >= end {
            return None;
        }
        let Scheduled { at, ev, .. } = self.heap.pop().expect("peeked");
        Some((at, ev))
    }
}
