//! # wisp-core
//!
//! The sans-IO core of wisp: time and units, packet and feedback formats, the controller
//! contract, the flow driver, and the schemes. Nothing here reads a clock, opens a socket or
//! seeds a random number generator; the simulator (`wisp-sim`) and the real-network layer
//! (`wisp-net`) drive the same objects.
//!
//! * [`time`], [`units`]: [`Instant`]/[`Duration`] in nanoseconds, [`Bitrate`], [`DataSize`].
//! * [`packet`], [`wire`]: the data header and the feedback messages with their byte encoding;
//!   [`ccfb`]: RFC 8888 congestion control feedback and the receiver's record that builds it.
//! * [`controller`]: the [`Sender`]/[`Receiver`] contract every scheme implements.
//! * [`flow`], [`source`], [`pacer`]: turning a sender's allowance into packets (bulk or a media
//!   call).
//! * [`math`], [`stats`]: special functions, distributions, quantiles, EWMA.
//! * [`probe`]: probing tools (WBest) as sans-IO state machines.
//! * [`pingpair`]: Ping-Pair (CoNEXT'17 §5), sans-IO: validity, T_q, attribution, the WMM check.
//! * [`saturator`]: the Saturator (Sprout paper §5.1.1): window control, trace recording, the
//!   packet format.
//! * [`frame`]: the versioned, length-checked framing of wisp's own tool protocols (`wisp wbest`,
//!   `wisp saturate`).
//! * [`video`]: Alfalfa's explicit-state video layer (§4): diffs between states, state sync, Y4M.
//! * [`session`]: one flow as an RTP/RTCP session, sans-IO: the sending and receiving sides of
//!   `wisp send`/`wisp recv` over typed packets (the bytes are wisp-net's).
//! * [`scheme`]: the registry (`"cbr"` → [`scheme::SchemeConfig`] → halves) and the schemes.

pub mod ccfb;
pub mod controller;
pub mod flow;
pub mod frame;
pub mod math;
pub mod pacer;
pub mod packet;
pub mod pingpair;
pub mod probe;
pub mod saturator;
pub mod scheme;
pub mod session;
pub mod source;
pub mod spec;
pub mod stats;
pub mod tables;
pub mod time;
pub mod units;
pub mod video;
pub mod wire;

pub use controller::{Allowance, Receiver, Sender};
pub use time::{Duration, Instant};
pub use units::{Bitrate, DataSize};
