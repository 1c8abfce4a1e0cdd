//! The seam a link model plugs into.
//!
//! A link model is four pieces, each a trait:
//!
//! | piece | trait | what it does |
//! |---|---|---|
//! | its kind | [`LinkKind`] | the names its specs start with, a help line each, and the parser of `NAME[:ARGS]` |
//! | its spec | [`LoadLink`] | what the spec names, before any file is read; loads into the link |
//! | its link | [`LinkProcess`] | its delivery opportunities over time: capacity, natural run length, report name; makes servers |
//! | its server | [`Serve`] | drains a queue: when the next packet may start, when it is done and delivered |
//!
//! The simulator's bottlenecks and the emulator's directions (`wisp link`) both drive a
//! [`Server`](super::Server); the spec parser, its error messages and the command line's help
//! list the kinds of the registry ([`super::kinds`]).
//!
//! The built-in models are variants of [`LinkSpec`], [`LinkModel`] and
//! [`Server`](super::Server), dispatched statically on the simulator's hot path. Any other
//! model — a new one in this crate, or one from outside registered at run time with
//! [`super::register`] — parses into [`LinkSpec::plugged`], loads into [`LinkModel::plugged`]
//! and runs through the `Plugged` variants: one dynamic call per server event.
//! `docs/adding-a-link.md` walks through it with the test `tests/toy_link.rs`.
//!
//! The 802.11 medium (`wifi:`) is a kind like the others (its names, help and parser are in the
//! registry), but its spec loads into no [`LinkModel`]: it is a hop that several stations and
//! both directions share, not a server that drains one queue ([`LinkSpec::medium`]). The
//! engine and the emulator run it on their Wi-Fi hop; a plugged kind cannot be a medium.

use super::{LinkModel, LinkSpec};
use crate::trace::TraceError;
use std::fmt;
use std::path::Path;
use wisp_core::{Duration, Instant};

/// One name a link spec may start with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkName {
    /// What the spec starts with, before any `:`.
    pub name: &'static str,
    /// How it is written, e.g. `trace:FILE` or `wifi-outage[:…]`. A `:` right after the name
    /// says the spec cannot do without its arguments.
    pub usage: &'static str,
    /// What it is, in a line (the command line's help).
    pub help: &'static str,
}

impl LinkName {
    /// The spec needs arguments after the name (`NAME:ARGS`).
    pub fn needs_args(&self) -> bool {
        self.usage.as_bytes().get(self.name.len()) == Some(&b':')
    }
}

/// A kind of link: the names its specs start with and how they parse.
pub trait LinkKind: Sync {
    /// Its names, with their usage and help, in the order of the help texts.
    fn names(&self) -> &'static [LinkName];

    /// Parses the spec `NAME[:ARGS]`: `name` is one of its [`LinkKind::names`], `args` what
    /// follows the first `:` (`None` without one; never `None` for a name that
    /// [needs arguments](LinkName::needs_args)). The error is the message, without the spec
    /// (the caller names it).
    fn parse(&self, name: &str, args: Option<&str>) -> Result<LinkSpec, String>;
}

/// A parsed spec of a plugged model ([`LinkSpec::plugged`]): what it names, before any file is
/// read.
pub trait LoadLink: Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// Reads what it names and builds the link.
    fn load(&self) -> Result<LinkModel, TraceError>;

    /// It names a file (a scenario file checked without reading files makes it a pipe).
    fn reads_files(&self) -> bool {
        false
    }

    /// Takes its relative paths from `base` (a scenario file's folder).
    fn rebase(&mut self, _base: &Path) {}
}

/// A loaded link: its delivery opportunities over time, and the servers that drain a queue
/// with them.
pub trait LinkProcess: Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    type Server: Serve;

    /// A short name for reports: its canonical spec, or a trace's file name.
    fn name(&self) -> String;

    /// The natural length of a run over it (60 s unless it says otherwise).
    fn default_duration(&self) -> Duration {
        Duration::from_secs(60)
    }

    /// The bytes it offers in `[from, to)`.
    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64;

    /// The bytes it offers in `[from, to)`, in bins of `bin` from `from` (the last bin may be
    /// partial): [`LinkProcess::capacity_bytes`] of each bin unless it has a faster way.
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        let mut out = empty_bins(from, to, bin);
        for (b, slot) in out.iter_mut().enumerate() {
            let lo = from + bin * b as u64;
            let hi = (lo + bin).min(to);
            *slot = self.capacity_bytes(lo, hi);
        }
        out
    }

    /// A fresh server at time zero whose random draws, if it makes any, come from `seed` (the
    /// run's).
    fn server(&self, seed: u64) -> Self::Server;
}

/// A link's server: what drains its queue.
pub trait Serve: Clone + fmt::Debug + Send + 'static {
    /// The earliest instant at or after `t` at which a packet can start service; `None` if
    /// the link never serves again. Opportunities before `t` are wasted.
    fn next_start(&mut self, t: Instant) -> Option<Instant>;

    /// Serves a packet of `size` bytes from `t` (which [`Serve::next_start`] returned): when
    /// the server is free again (`Instant::MAX`: never), and when (if) the receiver gets the
    /// packet.
    fn serve_packet(&mut self, t: Instant, size: u64) -> Service;

    /// The buffer's discard timer at `now`, if the link has one: a packet that has waited
    /// longer in the queue is discarded when it reaches the head.
    fn discard_after(&self, _now: Instant) -> Option<Duration> {
        None
    }
}

/// What a link did with a packet: when the server is free again (`done`) and when the receiver
/// gets it (`delivered`, `None` if it was lost on the way). Most links deliver at `done`; the
/// mobile profiles' radio later, or never.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Service {
    pub done: Instant,
    pub delivered: Option<Instant>,
}

impl Service {
    /// Delivered the instant the server is done.
    pub fn at(done: Instant) -> Self {
        Service {
            done,
            delivered: Some(done),
        }
    }
}

/// The bins of `[from, to)` in steps of `bin` (the last may be partial), all zero.
pub(super) fn empty_bins(from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
    let nbins = ((to - from).as_nanos().div_ceil(bin.as_nanos().max(1))) as usize;
    vec![0.0; nbins]
}
