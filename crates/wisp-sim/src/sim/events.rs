//! The engine's events and the heap they wait in, ordered by `(time, seq)`: two events at the
//! same instant run in the order they were scheduled.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use wisp_core::Instant;

/// An agent of the engine ([`super::agent`]): its index among the network's agents.
pub(crate) type AgentId = u16;

/// One of an agent's timers, numbered by the agent.
pub(crate) type Timer = u8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ev {
    FlowStart(u16),
    SenderWake(u16),
    ReceiverWake(u16),
    /// A packet reaches a link's queue (after the link's delay).
    Arrive(u16, u32),
    /// The link's server may start on the head of its queue.
    Start(u16),
    /// The link's server finished a packet.
    Complete(u16, u32),
    /// A packet the server finished earlier leaves the link (a link whose delivery lags its
    /// server).
    Deliver(u16, u32),
    /// Wi-Fi medium `m` may have something to do.
    WifiWake(u16),
    /// A timer an agent asked for is due.
    Agent(AgentId, Timer),
}

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
