//! Plugged models behind trait objects: a [`LoadLink`], a [`LinkProcess`] and its [`Serve`] as
//! the `Plugged` variants of [`LinkSpec`](super::LinkSpec), [`LinkModel`] and
//! [`Server`](super::Server) hold them ([`Plugged`]: it dereferences to its object-safe trait,
//! which the enums call). Two are equal when they are the same type with equal values.

use super::LinkModel;
use super::contract::{LinkProcess, LoadLink, Serve, Service};
use crate::trace::TraceError;
use std::any::Any;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use wisp_core::{Duration, Instant};

/// Equality and downcasts behind a trait object.
pub trait DynEq: Any {
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
pub trait DynLoad: DynEq + fmt::Debug + Send + Sync {
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

/// [`LinkProcess`], object-safe.
pub trait DynProcess: DynEq + fmt::Debug + Send + Sync {
    fn clone_box(&self) -> Box<dyn DynProcess>;
    fn name(&self) -> String;
    fn default_duration(&self) -> Duration;
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64>;
    fn server(&self, seed: u64) -> PluggedServer;
}

impl<T: LinkProcess> DynProcess for T {
    fn clone_box(&self) -> Box<dyn DynProcess> {
        Box::new(self.clone())
    }
    fn name(&self) -> String {
        LinkProcess::name(self)
    }
    fn default_duration(&self) -> Duration {
        LinkProcess::default_duration(self)
    }
    fn capacity_bins(&self, from: Instant, to: Instant, bin: Duration) -> Vec<f64> {
        LinkProcess::capacity_bins(self, from, to, bin)
    }
    fn server(&self, seed: u64) -> PluggedServer {
        Plugged(Box::new(LinkProcess::server(self, seed)))
    }
}

/// [`Serve`], object-safe.
pub trait DynServe: fmt::Debug + Send {
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

/// A plugged model's spec, link or server behind its object-safe trait: [`PluggedSpec`],
/// [`PluggedLink`], [`PluggedServer`]. It dereferences to the trait object.
#[derive(Debug)]
pub struct Plugged<T: ?Sized>(pub(super) Box<T>);

/// The spec of a plugged model ([`LinkSpec::Plugged`](super::LinkSpec::Plugged)).
pub type PluggedSpec = Plugged<dyn DynLoad>;

/// The link of a plugged model ([`LinkModel::Plugged`]).
pub type PluggedLink = Plugged<dyn DynProcess>;

/// The server of a plugged model ([`Server::Plugged`](super::Server::Plugged)).
pub type PluggedServer = Plugged<dyn DynServe>;

impl<T: ?Sized + DynEq> Plugged<T> {
    /// The value, if it is a `U`.
    pub fn downcast_ref<U: Any>(&self) -> Option<&U> {
        self.0.as_any().downcast_ref()
    }
}

impl<T: ?Sized + DynEq> PartialEq for Plugged<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0.same(other.0.as_any())
    }
}

impl<T: ?Sized> Deref for Plugged<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> DerefMut for Plugged<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// `Clone` for each wrapper, through its trait's `clone_box`.
macro_rules! clone_boxed {
    ($($t:ident),*) => {$(
        impl Clone for Plugged<dyn $t> {
            fn clone(&self) -> Self {
                Plugged(self.0.clone_box())
            }
        }
    )*};
}

clone_boxed!(DynLoad, DynProcess, DynServe);
