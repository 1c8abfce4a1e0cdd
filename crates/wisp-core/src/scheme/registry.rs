//! The seam every scheme plugs into: the [`Scheme`] trait, and a [`Registry`] of the schemes a
//! spec string may name.
//!
//! A scheme is one module. Its configuration type implements [`Scheme`]: the names it is listed
//! under, its parameters ([`Parameters`]: its own fields), and the factory of its two
//! halves ([`Scheme::build`]), whose [`Sender`](crate::controller::Sender) and [`Receiver`](crate::controller::Receiver) talk through the scheme's own
//! message types. Nothing shared lists a scheme's messages or header fields.
//!
//! Built-in schemes are listed once, in the `schemes!` invocation of [`crate::scheme`], which
//! generates the enums the simulator and `wisp-net` dispatch on statically
//! ([`SchemeConfig`], [`AnySender`],
//! [`AnyReceiver`]). A scheme from outside the crate (a test's, one written
//! in Python) is added at run time with [`Registry::with`] and runs through the same enums'
//! `Custom` variants, by dynamic dispatch. `docs/adding-a-scheme.md` walks through both.

pub use super::contract::{Halves, Scheme, SchemeInfo};
use super::params::Parameters;
use super::{
    AnyReceiver, AnySender, BuildError, Forecaster, Needs, ParamError, SchemeConfig, SchemeContext,
};
use crate::flow::FlowSender;
use crate::spec::{ItemError, key_values};
use crate::units::DataSize;
use core::fmt;

impl SchemeInfo {
    /// The parameters it accepts with their defaults, serialised from the scheme's parameter
    /// struct: `(key, default)`.
    pub fn param_list(&self) -> Vec<(&'static str, String)> {
        self.defaults().param_list()
    }

    /// Every key it accepts with its help text.
    pub fn param_docs(&self) -> Vec<(String, String)> {
        self.defaults().param_docs()
    }

    /// Every key it accepts: `(key, default, help)`, first those with a default (in
    /// [`SchemeInfo::param_list`]'s order), then those without one (unset by default).
    pub fn parameters(&self) -> Vec<(String, Option<String>, String)> {
        let list = self.param_list();
        let docs = self.param_docs();
        let mut out: Vec<_> = list
            .iter()
            .map(|(k, v)| {
                let doc = docs.iter().find(|(d, _)| d == k).map(|(_, t)| t.clone());
                (k.to_string(), Some(v.clone()), doc.unwrap_or_default())
            })
            .collect();
        for (k, doc) in docs {
            if !list.iter().any(|(l, _)| *l == k) {
                out.push((k, None, doc));
            }
        }
        out
    }

    /// [`SchemeInfo::param_list`] as `key=default` separated by commas.
    pub fn params(&self) -> String {
        super::params::join(&self.param_list())
    }

    fn defaults(&self) -> SchemeConfig {
        Registry::builtin()
            .named(self.name)
            .expect("every listed built-in scheme has a config")
    }
}

/// A [`Scheme`] behind a trait object: how a scheme registered at run time is configured and
/// built. Implemented for every [`Scheme`].
pub trait DynScheme: fmt::Debug + Send + Sync {
    fn name(&self) -> &'static str;
    fn param_list(&self) -> Vec<(&'static str, String)>;
    fn param_docs(&self) -> Vec<(String, String)>;
    /// The parameters of the default configuration of this one's name.
    fn default_param_list(&self) -> Vec<(&'static str, String)>;
    fn always_named(&self) -> &'static [&'static str];
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError>;
    fn build(&self, ctx: SchemeContext)
    -> Result<(FlowSender<AnySender>, AnyReceiver), BuildError>;
    fn clone_box(&self) -> Box<dyn DynScheme>;
    fn needs(&self) -> Needs;
    fn forecaster(&self, mtu: DataSize) -> Option<Box<dyn Forecaster>>;
}

impl<T: Scheme> DynScheme for T {
    fn name(&self) -> &'static str {
        Scheme::name(self)
    }
    fn param_list(&self) -> Vec<(&'static str, String)> {
        Parameters::param_list(self)
    }
    fn param_docs(&self) -> Vec<(String, String)> {
        Parameters::param_docs(self)
    }
    fn default_param_list(&self) -> Vec<(&'static str, String)> {
        let d = T::named(Scheme::name(self)).expect("a scheme's name is one of its own");
        Parameters::param_list(&d)
    }
    fn always_named(&self) -> &'static [&'static str] {
        T::ALWAYS_NAMED
    }
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        Parameters::set_params(self, given)
    }
    fn build(
        &self,
        ctx: SchemeContext,
    ) -> Result<(FlowSender<AnySender>, AnyReceiver), BuildError> {
        let h = Scheme::build(self, ctx)?;
        Ok((
            FlowSender::new(
                AnySender::Custom(Box::new(h.sender)),
                h.source,
                h.pacer,
                h.mtu,
            ),
            AnyReceiver::Custom(Box::new(h.receiver)),
        ))
    }
    fn clone_box(&self) -> Box<dyn DynScheme> {
        Box::new(self.clone())
    }
    fn needs(&self) -> Needs {
        Scheme::needs(self)
    }
    fn forecaster(&self, mtu: DataSize) -> Option<Box<dyn Forecaster>> {
        Scheme::forecaster(self, mtu)
    }
}

/// The configuration of a scheme registered at run time ([`SchemeConfig::Custom`]). Two are
/// equal when they name the same scheme with the same parameters.
#[derive(Debug)]
pub struct CustomScheme(Box<dyn DynScheme>);

impl CustomScheme {
    pub fn new<T: Scheme>(config: T) -> Self {
        CustomScheme(Box::new(config))
    }
}

impl core::ops::Deref for CustomScheme {
    type Target = dyn DynScheme;
    fn deref(&self) -> &(dyn DynScheme + 'static) {
        &*self.0
    }
}

impl core::ops::DerefMut for CustomScheme {
    fn deref_mut(&mut self) -> &mut (dyn DynScheme + 'static) {
        &mut *self.0
    }
}

impl Clone for CustomScheme {
    fn clone(&self) -> Self {
        CustomScheme(self.0.clone_box())
    }
}

impl PartialEq for CustomScheme {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name() && self.0.param_list() == other.0.param_list()
    }
}

/// A scheme the registry can make by name.
#[derive(Clone, Copy)]
struct Entry {
    info: SchemeInfo,
    make: fn(&str) -> Option<SchemeConfig>,
}

/// The schemes a spec string may name: the built-in ones, and any added with
/// [`Registry::with`]. `"NAME:K=V,…".parse::<SchemeConfig>()` uses [`Registry::builtin`].
#[derive(Clone)]
pub struct Registry {
    entries: Vec<Entry>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| e.info.name))
            .finish()
    }
}

impl Registry {
    /// The built-in schemes, in listing order.
    pub fn builtin() -> Self {
        Registry {
            entries: SchemeConfig::builtin_entries()
                .into_iter()
                .map(|(info, make)| Entry { info, make })
                .collect(),
        }
    }

    /// Adds the scheme `T` (all its names) to the registry. A name already registered is
    /// shadowed by the new one.
    pub fn with<T: Scheme>(mut self) -> Self {
        fn make<T: Scheme>(name: &str) -> Option<SchemeConfig> {
            T::named(name).map(|c| SchemeConfig::Custom(CustomScheme::new(c)))
        }
        for info in T::NAMES {
            self.entries.retain(|e| e.info.name != info.name);
            self.entries.push(Entry {
                info: *info,
                make: make::<T>,
            });
        }
        self
    }

    /// Every scheme, in listing order.
    pub fn schemes(&self) -> impl Iterator<Item = SchemeInfo> + '_ {
        self.entries.iter().map(|e| e.info)
    }

    /// The default configuration of the scheme called `name`.
    pub fn named(&self, name: &str) -> Result<SchemeConfig, ParamError> {
        self.entries
            .iter()
            .find(|e| e.info.name == name)
            .and_then(|e| (e.make)(name))
            .ok_or_else(|| ParamError::UnknownScheme {
                name: name.to_string(),
                known: self
                    .entries
                    .iter()
                    .map(|e| e.info.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Parses a spec string, `NAME[:KEY=VALUE,...]`.
    pub fn parse(&self, spec: &str) -> Result<SchemeConfig, ParamError> {
        let s = spec.trim();
        let (name, params) = s.split_once(':').unwrap_or((s, ""));
        let mut config = self.named(name)?;
        let given = key_values(params).map_err(|e| match e {
            ItemError::NotKeyValue(item) => ParamError::Malformed {
                scheme: name.to_string(),
                item: item.to_string(),
            },
            ItemError::GivenTwice(key) => ParamError::GivenTwice {
                scheme: name.to_string(),
                key: key.to_string(),
            },
        })?;
        config.set_params(&given)?;
        Ok(config)
    }
}
