//! Agents: programs the engine runs at a node of a Wi-Fi medium beside a flow, with frames and
//! timers of their own — Ping-Pair's prober at a flow's station ([`super::pingpair`]).
//!
//! The engine knows an agent only through [`Agent`]: it schedules the timers the agent asks
//! for and calls it when one is due, hands it each frame of its own that leaves the medium
//! (delivered or dropped), and lends it an [`AgentCx`] to push frames, read the medium, log,
//! and tell its flow's receiver. The core loop has no code of any particular agent.
//!
//! A frame an agent pushes carries the tag [`AGENT`] | agent << 32 | the agent's own number, so
//! the engine tells it from the flows' packets (32-bit handles) when the medium gives it back.

use super::Medium;
use super::events::{AgentId, Ev, Events, MediumId, PacketId, Timer};
use crate::log::RunLog;
use crate::wifi::link::{NodeId, WifiLink, WifiOutput};
use std::fmt;
use wisp_core::Instant;
use wisp_core::scheme::AnyReceiver;

/// The bit of a Wi-Fi tag that marks an agent's frame.
const AGENT: u64 = 1 << 63;

/// What a tag the engine gave a medium stands for.
pub(crate) enum Frame {
    /// A flow's packet.
    Packet(PacketId),
    /// An agent's frame: the agent and the number it gave the frame.
    Agent(AgentId, u32),
}

impl Frame {
    pub(crate) fn of_tag(tag: u64) -> Frame {
        if tag & AGENT == 0 {
            Frame::Packet(PacketId::from_raw(tag as u32))
        } else {
            Frame::Agent(AgentId((tag >> 32) as u16), tag as u32)
        }
    }
}

/// A program at a node of a Wi-Fi medium, beside a flow.
pub(crate) trait Agent: fmt::Debug + Send {
    /// The medium it sends on.
    fn medium(&self) -> MediumId;
    /// Asks for its first timers; called once, right after its flow's start is scheduled.
    fn start(&mut self, cx: &mut AgentCx<'_>);
    /// Whether the engine must run the medium up to now before it handles `timer` (to read
    /// the medium's queues as of now). No by default.
    fn needs_medium(&self, _now: Instant, _timer: Timer) -> bool {
        false
    }
    /// Its timer `timer` is due.
    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<'_>);
    /// A frame it pushed as `number` left the medium: delivered (`out.delivered`) or dropped.
    fn on_frame(&mut self, number: u32, out: &WifiOutput, cx: &mut AgentCx<'_>);
}

/// What an agent may do while the engine has called it: now, its medium, its timers, the
/// run's log and its flow's receiver.
pub(crate) struct AgentCx<'a> {
    pub now: Instant,
    /// Its flow's receiver.
    pub receiver: &'a mut AnyReceiver,
    pub log: &'a mut RunLog,
    pub(super) id: AgentId,
    pub(super) medium_id: MediumId,
    pub(super) medium: &'a mut Medium,
    pub(super) events: &'a mut Events,
    /// A frame pushed wakes the medium at once: not while the engine is running the medium
    /// (it schedules the medium's next wake-up itself when it is done).
    pub(super) wake_on_push: bool,
}

impl AgentCx<'_> {
    /// Its medium.
    pub fn medium(&self) -> &WifiLink {
        &self.medium.link
    }

    /// Pushes a frame of `bytes` from node `from` to node `to` with `dscp` onto its medium, as
    /// `number` (given back with the frame to [`Agent::on_frame`]); `false` if the queue
    /// refused it.
    pub fn push(&mut self, from: NodeId, to: NodeId, dscp: u8, number: u32, bytes: u32) -> bool {
        let tag = AGENT | u64::from(self.id.0) << 32 | u64::from(number);
        let queued = self.medium.link.push(self.now, from, to, dscp, tag, bytes);
        if queued && self.wake_on_push {
            self.medium.wake(self.medium_id, self.now, self.events);
        }
        queued
    }

    /// Asks for `timer` at `at`.
    pub fn schedule(&mut self, at: Instant, timer: Timer) {
        self.events.schedule(at, Ev::Agent(self.id, timer));
    }
}
