//! Plugged models behind trait objects: a [`LoadLink`], a [`LinkProcess`] and its [`Serve`] as
//! the `Plugged` variants of [`LinkSpec`](super::LinkSpec), [`LinkModel`] and
//! [`Server`](super::Server) hold them. Two are equal when they are the same type with equal
//! values.

use super::LinkModel;
use super::contract::{LinkProcess, LoadLink, Serve, Service};
use crate::trace::TraceError;
use std::any::Any;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use wisp_core::{Duration, Instant};

/// Equality and downcasts behind a trait object.
trait DynEq: Any {
    fn as_any(&self) -> &dyn Any;
    /// `other` is a `Self` equal to this one.
    fn same(&self, other: &dyn Any) -> bool;
}

impl<T: PartialEq + Any> DynEq for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn same(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }
}

/// [`LoadLink`], object-safe.
trait DynLoad: DynEq + fmt::Debug + Send + Sync {
    fn load(&self) -> Result<LinkModel, TraceError>;
    fn reads_files(&self) -> bool;
    fn rebase(&mut self, base: &Path);
    fn clone_box(&self) -> Box<dyn DynLoad>;
}

impl<T: LoadLink> DynLoad for T {
    fn load(&self) -> Result<LinkModel, TraceError> {
        LoadLink::load(self)
    }
    fn reads_files(&self) -> bool {
        LoadLink::reads_files(self)
    }
    fn rebase(&mut self, base: &Path) {
        LoadLink::rebase(self, base);
    }
    fn clone_box(&self) -> Box<dyn DynLoad> {
        Box::new(self.clone())
    }
}

/// The spec of a plugged model ([`LinkSpec::Plugged`](super::LinkSpec::Plugged)).
#[derive(Debug)]
pub struct PluggedSpec(Box<dyn DynLoad>);

impl PluggedSpec {
    pub(super) fn new<T: LoadLink>(spec: T) -> Self {
        PluggedSpec(Box::new(spec))
    }
    pub(super) fn load(&self) -> Result<LinkModel, TraceError> {
        self.0.load()
    }
    pub(super) fn reads_files(&self) -> bool {
        self.0.reads_files()
    }
    pub(super) fn rebase(&mut self, base: &Path) {
        self.0.rebase(base);
    }
    /// The spec, if it is a `T`.
    pub fn downcast_ref<T: LoadLink>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
}

impl Clone for PluggedSpec {
    fn clone(&self) -> Self {
        PluggedSpec(self.0.clone_box())
    }
}

impl PartialEq for PluggedSpec {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_any())
    }
}

/// [`LinkProcess`], object-safe.
trait DynProcess: DynEq + fmt::Debug + Send + Sync {
    fn name(&self) -> String;
    fn default_duration(&self) -> Duration;
    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64;
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64>;
    fn server(&self, seed: u64) -> PluggedServer;
}

impl<T: LinkProcess> DynProcess for T {
    fn name(&self) -> String {
        LinkProcess::name(self)
    }
    fn default_duration(&self) -> Duration {
        LinkProcess::default_duration(self)
    }
    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
        LinkProcess::capacity_bytes(self, from, to)
    }
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        LinkProcess::capacity_bins(self, from, to, bin)
    }
    fn server(&self, seed: u64) -> PluggedServer {
        PluggedServer(Box::new(LinkProcess::server(self, seed)))
    }
}

/// The link of a plugged model ([`LinkModel::Plugged`]).
#[derive(Clone, Debug)]
pub struct PluggedLink(Arc<dyn DynProcess>);

impl PluggedLink {
    pub(super) fn new<T: LinkProcess>(link: T) -> Self {
        PluggedLink(Arc::new(link))
    }
    /// The link, if it is a `T`.
    pub fn downcast_ref<T: LinkProcess>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
}

impl PartialEq for PluggedLink {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_any())
    }
}

impl LinkProcess for PluggedLink {
    type Server = PluggedServer;
    fn name(&self) -> String {
        self.0.name()
    }
    fn default_duration(&self) -> Duration {
        self.0.default_duration()
    }
    fn capacity_bytes(&self, from: Instant, to: Instant) -> f64 {
        self.0.capacity_bytes(from, to)
    }
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        self.0.capacity_bins(from, to, bin)
    }
    fn server(&self, seed: u64) -> PluggedServer {
        self.0.server(seed)
    }
}

/// [`Serve`], object-safe.
trait DynServe: fmt::Debug + Send {
    fn next_start(&mut self, t: Instant) -> Option<Instant>;
    fn serve_packet(&mut self, t: Instant, size: u64) -> Service;
    fn discard_after(&self, now: Instant) -> Option<Duration>;
    fn clone_box(&self) -> Box<dyn DynServe>;
}

impl<T: Serve> DynServe for T {
    fn next_start(&mut self, t: Instant) -> Option<Instant> {
        Serve::next_start(self, t)
    }
    fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        Serve::serve_packet(self, t, size)
    }
    fn discard_after(&self, now: Instant) -> Option<Duration> {
        Serve::discard_after(self, now)
    }
    fn clone_box(&self) -> Box<dyn DynServe> {
        Box::new(self.clone())
    }
}

/// The server of a plugged model ([`Server::Plugged`](super::Server::Plugged)).
#[derive(Debug)]
pub struct PluggedServer(Box<dyn DynServe>);

impl Clone for PluggedServer {
    fn clone(&self) -> Self {
        PluggedServer(self.0.clone_box())
    }
}

impl Serve for PluggedServer {
    fn next_start(&mut self, t: Instant) -> Option<Instant> {
        self.0.next_start(t)
    }
    fn serve_packet(&mut self, t: Instant, size: u64) -> Service {
        self.0.serve_packet(t, size)
    }
    fn discard_after(&self, now: Instant) -> Option<Duration> {
        self.0.discard_after(now)
    }
}
