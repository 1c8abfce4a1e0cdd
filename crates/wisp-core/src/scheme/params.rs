//! Scheme parameters: the `KEY=VALUE,…` of a spec string ↔ a scheme's configuration.
//!
//! A scheme's configuration is one struct, declared with [`scheme_config!`]: it derives serde's
//! `Serialize` and `Deserialize` with `#[serde(rename_all = "kebab-case", deny_unknown_fields)]`,
//! its fields keep their typed units (a [`Duration`](crate::Duration), a
//! [`Bitrate`](crate::Bitrate)) and serde adapters ([`crate::units::serde_as`]) write them in
//! the unit their key names (`interval-ms`, `start-kbps`); each field's doc comment is its key's
//! help text. Besides plain parameters a declaration has:
//!
//! * groups (`#[group]`): a struct of parameters several schemes share (TCP's `iw`,
//!   `rto-min-ms`, `rwnd-kb`), itself declared with [`scheme_config!`], whose keys stand in its
//!   place;
//! * fields that are not parameters (`#[serde(skip)]`: a tuning set in code, the variant a
//!   scheme's name chose, a log): a read from pairs leaves them at their defaults, so
//!   [`Declared::keep`] puts the previous values back;
//! * keys that are read but not listed (`skip_serializing`, an optional value left out while
//!   unset): they belong to the configuration itself, not to a group.
//!
//! The configuration implements [`Validate`] for its ranges and cross checks. This module does
//! the rest the same way for every scheme:
//!
//! * [`pairs`] serialises a configuration to its `(key, value)` list — the canonical values
//!   `wisp schemes` lists and a spec string prints;
//! * [`read`] parses `KEY=VALUE` pairs on top of a configuration (the scheme's current one: every
//!   key keeps its value unless given), so a value is read by the type of its field, a key given
//!   twice or unknown is refused (an unknown one with the list of accepted ones), and the whole
//!   result is validated at once (so `min-kbps=3000,max-kbps=4000` is checked as a pair, not key
//!   by key);
//! * errors come back as one [`ParamError`] shape: the key, the value as given, what was
//!   expected.
//!
//! Values: numbers as Rust parses them (finite only), `true`/`false` (also `on`/`off`, `yes`/`no`,
//! `1`/`0`), `none` for an absent optional value, lists separated by `/` (`none` for an empty
//! one), and unit enum variants by their kebab-case names. Keys may be written with `_` for `-`.

use super::ParamError;
use core::fmt;
use serde::Serialize;
use serde::de::{self, DeserializeOwned, IntoDeserializer};
use serde::ser::{self, Impossible};

/// A rule a configuration breaks: the keys involved and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The keys the rule involves (one for a range, two or more for a cross check).
    pub keys: Vec<&'static str>,
    pub expected: String,
}

/// The result of a check.
pub type Checked = Result<(), Invalid>;

/// Ranges and cross checks of a configuration's parameters, beyond what the field types ensure,
/// and the few things a configuration may say about its keys beyond its declaration.
pub trait Validate {
    /// Checks the configuration just read from `given` (the values as written: times and rates
    /// are checked as written, see [`Given::time_ms`]).
    fn validate(&self, given: &Given<'_>) -> Checked;

    /// Whether the configuration takes `key`, one it declares: a configuration whose variants
    /// take different keys (Sprout's) neither lists nor reads the others. All of them by default.
    fn takes(&self, _key: &str) -> bool {
        true
    }

    /// The help text of `key` where it is not its field's doc comment (a variant's narrower
    /// meaning). None by default.
    fn help(&self, _key: &str) -> Option<&'static str> {
        None
    }

    /// Keys that set another key's value in another form, `(form, key)` (cbr's `rate` for
    /// `rate-kbps`): a form given before its key is dropped, one given after it is read too and
    /// [`Validate::settle`] puts it in place, so the one given last counts. None by default.
    const FORMS: &'static [(&'static str, &'static str)] = &[];

    /// Puts a value given in another form in its place, once read and validated (cbr's `rate`).
    /// Nothing by default.
    fn settle(&mut self) {}
}

/// What [`scheme_config!`] derives from a configuration's declaration.
pub trait Declared {
    /// Each key with its field's doc comment, in declaration order, a group's keys in its place.
    fn docs() -> Vec<(String, &'static str)>;
    /// Puts back `before`'s fields that are not parameters (`#[serde(skip)]`, in groups too),
    /// which a read from pairs leaves at their defaults.
    fn keep(&mut self, before: &Self);
}

/// Declares a scheme's configuration (or a group of parameters several share): the struct with
/// serde's derives (kebab-case keys, `deny_unknown_fields`) and [`Declared`].
///
/// Each field takes doc comments (its key's help text), then one of: `#[group]` (a struct
/// declared with this macro, whose keys stand in its place), `#[serde(skip)]` (not a
/// parameter), `#[serde(rename = "KEY", …)]` (the key, first in the attribute), or serde
/// attributes that keep the field's name as its key. Plain `//` comments say more about a field
/// without changing its help text. A unit struct declares a scheme without parameters. (The crate
/// using it needs `serde` with its `derive` feature.)
#[doc(hidden)]
#[macro_export]
macro_rules! __scheme_config {
    ($(#[$m:meta])* $vis:vis struct $name:ident;) => {
        $(#[$m])*
        #[derive(serde::Serialize, serde::Deserialize)]
        $vis struct $name;

        impl $crate::scheme::params::Declared for $name {
            fn docs() -> Vec<(String, &'static str)> {
                Vec::new()
            }
            fn keep(&mut self, _: &Self) {}
        }
    };
    ($(#[$m:meta])* $vis:vis struct $name:ident { $($body:tt)* }) => {
        $crate::__scheme_config!(@field [$(#[$m])* $vis struct $name] [] [] [] $($body)*);
    };
    // A group.
    (@field $head:tt [$($fields:tt)*] [$($docs:tt)*] [$($keep:tt)*]
        $(#[doc = $d:literal])* #[group] $fv:vis $f:ident: $t:ty, $($rest:tt)*) => {
        $crate::__scheme_config!(@field $head
            [$($fields)* $(#[doc = $d])* $fv $f: $t,]
            [$($docs)* (group $t)]
            [$($keep)* (group $f)]
            $($rest)*);
    };
    // Not a parameter.
    (@field $head:tt [$($fields:tt)*] $docs:tt [$($keep:tt)*]
        $(#[doc = $d:literal])* #[serde(skip)] $fv:vis $f:ident: $t:ty, $($rest:tt)*) => {
        $crate::__scheme_config!(@field $head
            [$($fields)* $(#[doc = $d])* #[serde(skip)] $fv $f: $t,]
            $docs
            [$($keep)* (skip $f)]
            $($rest)*);
    };
    // A parameter whose key is not its field's name.
    (@field $head:tt [$($fields:tt)*] [$($docs:tt)*] $keep:tt
        $(#[doc = $d:literal])* #[serde(rename = $k:literal $($o:tt)*)]
        $fv:vis $f:ident: $t:ty, $($rest:tt)*) => {
        $crate::__scheme_config!(@field $head
            [$($fields)* $(#[doc = $d])* #[serde(rename = $k $($o)*)] $fv $f: $t,]
            [$($docs)* (key ($k.to_string()) [$($d)*])]
            $keep
            $($rest)*);
    };
    // A parameter named after its field.
    (@field $head:tt [$($fields:tt)*] [$($docs:tt)*] $keep:tt
        $(#[doc = $d:literal])* $(#[serde $sa:tt])* $fv:vis $f:ident: $t:ty, $($rest:tt)*) => {
        $crate::__scheme_config!(@field $head
            [$($fields)* $(#[doc = $d])* $(#[serde $sa])* $fv $f: $t,]
            [$($docs)* (key (stringify!($f).replace('_', "-")) [$($d)*])]
            $keep
            $($rest)*);
    };
    (@field [$(#[$m:meta])* $vis:vis struct $name:ident] [$($fields:tt)*] [$($docs:tt)*]
        [$($keep:tt)*]) => {
        $(#[$m])*
        #[derive(serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        $vis struct $name { $($fields)* }

        impl $crate::scheme::params::Declared for $name {
            fn docs() -> Vec<(String, &'static str)> {
                [$($crate::__scheme_config!(@doc $docs)),*].concat()
            }
            fn keep(&mut self, before: &Self) {
                let _ = before;
                $($crate::__scheme_config!(@keep self before $keep);)*
            }
        }
    };
    (@doc (group $t:ty)) => {
        <$t as $crate::scheme::params::Declared>::docs()
    };
    (@doc (key $k:tt [$($d:literal)*])) => {
        vec![($k, concat!($($d, "\n",)* ""))]
    };
    (@keep $this:tt $before:ident (group $f:ident)) => {
        $crate::scheme::params::Declared::keep(&mut $this.$f, &$before.$f)
    };
    (@keep $this:tt $before:ident (skip $f:ident)) => {
        $this.$f = $before.$f.clone()
    };
}
pub use crate::__scheme_config as scheme_config;

/// What the registry asks of a scheme's configuration about its parameters. Every configuration
/// declared with [`scheme_config!`] and [`Validate`]d has it; a configuration that is a choice of
/// several (the Mehrotra family's) implements it by asking the chosen one, and one without
/// parameters can implement it with [`no_params`].
pub trait Parameters {
    /// Every parameter with its value.
    fn param_list(&self) -> Vec<(&'static str, String)>;
    /// Every key with its help text.
    fn param_docs(&self) -> Vec<(String, String)>;
    /// Sets the `given` parameters, all or none.
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError>;
}

impl<C> Parameters for C
where
    C: Declared + Validate + Serialize + DeserializeOwned,
{
    fn param_list(&self) -> Vec<(&'static str, String)> {
        let mut list = pairs(self);
        list.retain(|(k, _)| self.takes(k));
        list
    }

    fn param_docs(&self) -> Vec<(String, String)> {
        C::docs()
            .into_iter()
            .filter(|(k, _)| self.takes(k))
            .map(|(k, doc)| {
                let text = one_line(self.help(&k).unwrap_or(doc));
                (k, text)
            })
            .collect()
    }

    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        *self = read(self, given)?;
        Ok(())
    }
}

/// A doc comment on one line: its lines trimmed, the empty ones left out.
fn one_line(doc: &str) -> String {
    let text: Vec<&str> = doc
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    text.join(" ")
}

/// [`Parameters::set_params`] of a scheme without parameters: nothing given is fine, any key is
/// an unknown one (`accepted` says what the scheme takes instead, e.g. "(none)").
pub fn no_params(scheme: &str, given: &[(&str, &str)], accepted: &str) -> Result<(), ParamError> {
    match given.first() {
        None => Ok(()),
        Some((k, _)) => Err(ParamError::UnknownParam {
            scheme: scheme.to_string(),
            key: k.to_string(),
            accepted: accepted.to_string(),
        }),
    }
}

/// The parameters of `c` that differ from its type's `Default` (for tests).
#[cfg(test)]
pub(crate) fn changed<C: Parameters + Default>(c: &C) -> Vec<(&'static str, String)> {
    diff(c.param_list(), &C::default().param_list(), &[])
}

/// `ok`, or `key` is invalid: `expected`.
pub fn check(key: &'static str, ok: bool, expected: &str) -> Checked {
    if ok {
        Ok(())
    } else {
        Err(Invalid {
            keys: vec![key],
            expected: expected.to_string(),
        })
    }
}

/// `lo ≤ value ≤ hi`.
pub fn range(key: &'static str, value: f64, lo: f64, hi: f64, expected: &str) -> Checked {
    check(key, (lo..=hi).contains(&value), expected)
}

/// Each value at most the next (`min-kbps ≤ start-kbps ≤ max-kbps`).
pub fn ordered(items: &[(&'static str, f64)]) -> Checked {
    if items.windows(2).all(|w| w[0].1 <= w[1].1) {
        return Ok(());
    }
    let chain: Vec<&str> = items.iter().map(|(k, _)| *k).collect();
    let values: Vec<String> = items.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Err(Invalid {
        keys: items.iter().map(|(k, _)| *k).collect(),
        expected: format!("{} (here {})", chain.join(" ≤ "), values.join(", ")),
    })
}

/// A time in ms, `lo ≤ value ≤ hi`, in whole nanoseconds (the simulator's clock): a finer value
/// would be rounded in silence, so it is refused with the range and the resolution named.
pub fn time_ms(key: &'static str, value: f64, lo: f64, hi: f64, expected: &str) -> Checked {
    range(key, value, lo, hi, expected)?;
    let ns = crate::Duration::from_millis_f64(value).as_millis_f64();
    check(key, ns == value, &format!("{expected}, in whole ns"))
}

/// A time in seconds, as [`time_ms`].
pub fn time_s(key: &'static str, value: f64, lo: f64, hi: f64, expected: &str) -> Checked {
    range(key, value, lo, hi, expected)?;
    let ns = crate::Duration::from_secs_f64(value).as_secs_f64();
    check(key, ns == value, &format!("{expected}, in whole ns"))
}

/// A rate in kbit/s, `lo ≤ value ≤ hi`, in whole bit/s (a [`crate::Bitrate`]'s resolution).
pub fn rate_kbps(key: &'static str, value: f64, lo: f64, hi: f64, expected: &str) -> Checked {
    range(key, value, lo, hi, expected)?;
    let bps = crate::Bitrate::from_kbps_f64(value).kbps_f64();
    check(key, bps == value, &format!("{expected}, in whole bit/s"))
}

/// [`Given`]'s checks of a typed value: the free function of the same name on the value as
/// written, if given, else on the typed value in the key's unit.
macro_rules! as_written {
    ($($(#[$doc:meta])* $check:ident: $t:ty => $in_unit:ident,)*) => {$(
        $(#[$doc])*
        pub fn $check(
            &self,
            key: &'static str,
            typed: $t,
            lo: f64,
            hi: f64,
            expected: &str,
        ) -> Checked {
            $check(key, self.number(key, typed.$in_unit()), lo, hi, expected)
        }
    )*};
}

/// The pairs a configuration was read from, as written: by key as the configuration names it
/// (`_` read as `-`), in the order given, each key at most once.
#[derive(Debug)]
pub struct Given<'a> {
    /// `(key, key as written, value)`, both trimmed.
    items: Vec<(String, &'a str, &'a str)>,
}

impl<'a> Given<'a> {
    /// The `given` pairs: a key given twice is refused; a form given before its key is dropped
    /// ([`Validate::FORMS`]).
    fn new(given: &[(&'a str, &'a str)], forms: &[(&str, &str)]) -> Result<Self, ParamError> {
        let mut items: Vec<(String, &str, &str)> = Vec::new();
        for &(k, v) in given {
            let key = normalise(k);
            if items.iter().any(|(seen, _, _)| *seen == key) {
                return Err(ParamError::GivenTwice {
                    scheme: String::new(),
                    key: k.trim().to_string(),
                });
            }
            items.push((key, k.trim(), v.trim()));
        }
        let at = |key: &str| items.iter().position(|(k, _, _)| k == key);
        let dropped: Vec<usize> = (forms.iter())
            .filter_map(|(form, key)| at(form).filter(|f| at(key).is_some_and(|k| k > *f)))
            .collect();
        let items = (items.into_iter().enumerate())
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, item)| item)
            .collect();
        Ok(Given { items })
    }

    /// The number written for `key`, if it was given one; else `typed` (the value the
    /// configuration holds, in the key's unit). A configuration's checks see a time or a rate as
    /// written, before a field's type rounds it (to whole nanoseconds, whole bit/s), so that a
    /// value finer than the type holds is refused rather than rounded in silence ([`time_ms`]).
    pub fn number(&self, key: &str, typed: f64) -> f64 {
        self.items
            .iter()
            .find(|(k, _, _)| k == key)
            .and_then(|(_, _, v)| v.parse::<f64>().ok())
            .unwrap_or(typed)
    }

    as_written! {
        /// A time in ms, `lo ≤ value ≤ hi`, as written ([`time_ms`]).
        time_ms: crate::Duration => as_millis_f64,
        /// A time in seconds, as written ([`time_s`]).
        time_s: crate::Duration => as_secs_f64,
        /// A rate in kbit/s, as written ([`rate_kbps`]).
        rate_kbps: crate::Bitrate => kbps_f64,
    }

    /// The key given last among `keys` with its value as written.
    fn last_of(&self, keys: &[&str]) -> Option<(&str, &str)> {
        self.items
            .iter()
            .rev()
            .find(|(k, _, _)| keys.contains(&k.as_str()))
            .map(|(k, _, v)| (k.as_str(), *v))
    }

    /// The key as written.
    fn written(&self, key: &str) -> String {
        let item = self.items.iter().find(|(k, _, _)| k == key);
        item.map_or(key, |(_, written, _)| written).to_string()
    }
}

/// The `(key, value)` list of a configuration, in declaration order, a group's in its place
/// (fields whose value is skipped by `skip_serializing_if` are left out).
pub fn pairs<P: Serialize>(p: &P) -> Vec<(&'static str, String)> {
    fn flatten(fields: Vec<(&'static str, Item)>, out: &mut Vec<(&'static str, String)>) {
        for (key, item) in fields {
            match item {
                Item::Text(value) => out.push((key, value)),
                Item::Group(fields) => flatten(fields, out),
            }
        }
    }
    let mut out = Vec::new();
    flatten(fields(p), &mut out);
    out
}

/// `KEY=VALUE,…`.
pub fn join(pairs: &[(&'static str, String)]) -> String {
    let items: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    items.join(",")
}

/// The pairs of `full` whose value differs from `base` (or that `base` lacks), and those named
/// in `always`: the parameters a canonical spec string names.
pub fn diff(
    full: Vec<(&'static str, String)>,
    base: &[(&'static str, String)],
    always: &[&str],
) -> Vec<(&'static str, String)> {
    full.into_iter()
        .filter(|(k, v)| always.contains(k) || !base.iter().any(|(bk, bv)| bk == k && bv == v))
        .collect()
}

/// A key as the configurations name it: trimmed, `_` read as `-`.
pub(crate) fn normalise(key: &str) -> String {
    key.trim().replace('_', "-")
}

/// Parses `given` pairs on top of `base` and validates the result. A key given twice is refused;
/// fields that are not parameters keep `base`'s values. The error's scheme is left empty for the
/// registry to fill in.
pub fn read<C>(base: &C, given: &[(&str, &str)]) -> Result<C, ParamError>
where
    C: Declared + Validate + Serialize + DeserializeOwned,
{
    let given = Given::new(given, C::FORMS)?;
    let accepted: Vec<String> = C::docs()
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| base.takes(k))
        .collect();
    // The base's values with the user's in place; keys the base lists no value for follow, in the
    // order given, an unknown one as `None`.
    let mut fields = fields(base);
    let mut extra: Vec<(String, Option<String>)> = Vec::new();
    for (key, _, value) in &given.items {
        let known = accepted.contains(key);
        if !(known && set(&mut fields, key, value)) {
            extra.push((key.clone(), known.then(|| value.to_string())));
        }
    }
    let de = StructDe {
        fields: &fields,
        extra: &extra,
    };
    let mut next = C::deserialize(de).map_err(|e| de_error(e, &given, &accepted))?;
    next.keep(base);
    if let Err(Invalid { keys, expected }) = next.validate(&given) {
        // Blame the involved key the user gave last, else the first one.
        let (key, value) = match given.last_of(&keys) {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => {
                let key = keys.first().copied().unwrap_or_default();
                let value = pairs(base).into_iter().find(|(k, _)| *k == key);
                (key.to_string(), value.map(|(_, v)| v).unwrap_or_default())
            }
        };
        return Err(ParamError::BadValue {
            scheme: String::new(),
            key,
            value,
            expected,
        });
    }
    next.settle();
    Ok(next)
}

/// A read's error as a [`ParamError`].
fn de_error(e: DeError, given: &Given<'_>, accepted: &[String]) -> ParamError {
    match e {
        DeError::Unknown(key) => ParamError::UnknownParam {
            scheme: String::new(),
            key: given.written(&key),
            accepted: if accepted.is_empty() {
                "(none)".to_string()
            } else {
                accepted.join(", ")
            },
        },
        DeError::Bad {
            key,
            value,
            expected,
        } => ParamError::BadValue {
            scheme: String::new(),
            key,
            value,
            expected,
        },
        DeError::Custom(msg) => ParamError::BadValue {
            scheme: String::new(),
            key: String::new(),
            value: String::new(),
            expected: msg,
        },
    }
}

/// Sets the value of `key`, wherever it is among `fields`; false if it is not there.
fn set(fields: &mut [(&'static str, Item)], key: &str, value: &str) -> bool {
    fields.iter_mut().any(|(k, item)| match item {
        Item::Text(v) if *k == key => {
            *v = value.to_string();
            true
        }
        Item::Text(_) => false,
        Item::Group(fields) => set(fields, key, value),
    })
}

// ---- Serialisation: a configuration to its fields, each a value's text or a group.

/// One serialised field.
enum Item {
    Text(String),
    Group(Vec<(&'static str, Item)>),
}

/// The fields of a configuration.
fn fields<P: Serialize>(p: &P) -> Vec<(&'static str, Item)> {
    match p.serialize(ValueSer) {
        Ok(Item::Group(fields)) => fields,
        Ok(Item::Text(_)) => panic!("a configuration serialises to KEY=VALUE pairs"),
        Err(e) => panic!("a configuration serialises to KEY=VALUE pairs: {e}"),
    }
}

/// Serialisation only fails on shapes a configuration cannot have.
#[derive(Debug)]
struct SerError(String);

impl fmt::Display for SerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SerError {}
impl ser::Error for SerError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        SerError(msg.to_string())
    }
}

fn unsupported<T>(what: &str) -> Result<T, SerError> {
    Err(SerError(format!("a parameter cannot be {what}")))
}

/// One value as the text a spec string carries, or a struct as a group.
struct ValueSer;

/// A group's fields.
struct GroupSer(Vec<(&'static str, Item)>);

impl ser::SerializeStruct for GroupSer {
    type Ok = Item;
    type Error = SerError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        self.0.push((key, value.serialize(ValueSer)?));
        Ok(())
    }
    fn end(self) -> Result<Item, SerError> {
        Ok(Item::Group(self.0))
    }
}

/// A `/`-separated list.
struct ListSer(Vec<String>);

impl ser::SerializeSeq for ListSer {
    type Ok = Item;
    type Error = SerError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), SerError> {
        match v.serialize(ValueSer)? {
            Item::Text(t) => self.0.push(t),
            Item::Group(_) => return unsupported("a list of structs"),
        }
        Ok(())
    }
    fn end(self) -> Result<Item, SerError> {
        Ok(Item::Text(if self.0.is_empty() {
            "none".to_string()
        } else {
            self.0.join("/")
        }))
    }
}

/// Serialises primitives as their `Display` text (a float's is the shortest that parses back to
/// it: `1000`, `0.125`).
macro_rules! as_text {
    ($($method:ident $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<Item, SerError> {
            Ok(Item::Text(v.to_string()))
        }
    )*};
}

impl ser::Serializer for ValueSer {
    type Ok = Item;
    type Error = SerError;
    type SerializeSeq = ListSer;
    type SerializeTuple = Impossible<Item, SerError>;
    type SerializeTupleStruct = Impossible<Item, SerError>;
    type SerializeTupleVariant = Impossible<Item, SerError>;
    type SerializeMap = Impossible<Item, SerError>;
    type SerializeStruct = GroupSer;
    type SerializeStructVariant = Impossible<Item, SerError>;

    as_text! {
        serialize_bool bool, serialize_i8 i8, serialize_i16 i16, serialize_i32 i32,
        serialize_i64 i64, serialize_u8 u8, serialize_u16 u16, serialize_u32 u32,
        serialize_u64 u64, serialize_f32 f32, serialize_f64 f64, serialize_char char,
        serialize_str &str
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Item, SerError> {
        unsupported("bytes")
    }
    fn serialize_none(self) -> Result<Item, SerError> {
        Ok(Item::Text("none".to_string()))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<Item, SerError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Item, SerError> {
        unsupported("()")
    }
    /// A scheme without parameters.
    fn serialize_unit_struct(self, _: &'static str) -> Result<Item, SerError> {
        Ok(Item::Group(vec![]))
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Item, SerError> {
        Ok(Item::Text(variant.to_string()))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Item, SerError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Item, SerError> {
        unsupported("an enum with a value")
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<ListSer, SerError> {
        Ok(ListSer(Vec::new()))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, SerError> {
        unsupported("a tuple")
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, SerError> {
        unsupported("a tuple")
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, SerError> {
        unsupported("a tuple")
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, SerError> {
        unsupported("a map")
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<GroupSer, SerError> {
        Ok(GroupSer(Vec::new()))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, SerError> {
        unsupported("an enum with fields")
    }
}

// ---- Deserialisation: fields to a configuration, each value read by its field's type.

#[derive(Debug)]
enum DeError {
    /// A key the configuration does not take.
    Unknown(String),
    /// A value that does not parse (the key is filled in by the map).
    Bad {
        key: String,
        value: String,
        expected: String,
    },
    Custom(String),
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeError::Unknown(key) => write!(f, "unknown parameter `{key}`"),
            DeError::Bad {
                key,
                value,
                expected,
            } => write!(
                f,
                "invalid value `{value}` for `{key}`: expected {expected}"
            ),
            DeError::Custom(m) => f.write_str(m),
        }
    }
}
impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError::Custom(msg.to_string())
    }
    fn invalid_value(unexp: de::Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        let value = match unexp {
            de::Unexpected::Str(s) => s.to_string(),
            u => u.to_string(),
        };
        DeError::Bad {
            key: String::new(),
            value,
            expected: exp.to_string(),
        }
    }
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        let expected = match expected {
            [] => "nothing".to_string(),
            [one] => one.to_string(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
        };
        DeError::Bad {
            key: String::new(),
            value: variant.to_string(),
            expected,
        }
    }
    fn unknown_field(field: &str, _: &'static [&'static str]) -> Self {
        DeError::Unknown(field.to_string())
    }
}

/// A configuration or a group: its fields, then (at the top) the keys given that it lists no
/// value for, an unknown one as `None`.
struct StructDe<'a> {
    fields: &'a [(&'static str, Item)],
    extra: &'a [(String, Option<String>)],
}

impl<'de, 'a> de::Deserializer<'de> for StructDe<'a> {
    type Error = DeError;
    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_map(MapDe {
            fields: self.fields.iter(),
            extra: self.extra.iter(),
            value: None,
        })
    }
    fn deserialize_unit_struct<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.extra.first() {
            None => visitor.visit_unit(),
            Some((k, _)) => Err(DeError::Unknown(k.clone())),
        }
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// A field's value still to read.
enum Pending<'a> {
    Text(&'a str, &'a str),
    Group(&'a [(&'static str, Item)]),
}

struct MapDe<'a> {
    fields: core::slice::Iter<'a, (&'static str, Item)>,
    extra: core::slice::Iter<'a, (String, Option<String>)>,
    value: Option<Pending<'a>>,
}

impl<'de, 'a> de::MapAccess<'de> for MapDe<'a> {
    type Error = DeError;
    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        let key: &str = if let Some((key, item)) = self.fields.next() {
            self.value = Some(match item {
                Item::Text(v) => Pending::Text(key, v),
                Item::Group(fields) => Pending::Group(fields),
            });
            key
        } else if let Some((key, value)) = self.extra.next() {
            let value = value
                .as_deref()
                .ok_or_else(|| DeError::Unknown(key.clone()))?;
            self.value = Some(Pending::Text(key, value));
            key
        } else {
            return Ok(None);
        };
        seed.deserialize(key.into_deserializer()).map(Some)
    }
    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DeError> {
        let (key, raw) = match self.value.take().expect("a value follows its key") {
            Pending::Group(fields) => return seed.deserialize(StructDe { fields, extra: &[] }),
            Pending::Text(key, raw) => (key, raw),
        };
        seed.deserialize(ValueDe { raw }).map_err(|e| match e {
            DeError::Bad {
                value, expected, ..
            } => DeError::Bad {
                key: key.to_string(),
                value,
                expected,
            },
            DeError::Custom(expected) => DeError::Bad {
                key: key.to_string(),
                value: raw.to_string(),
                expected,
            },
            e => e,
        })
    }
}

/// One value, read by the type asked for.
struct ValueDe<'a> {
    raw: &'a str,
}

impl ValueDe<'_> {
    fn bad(&self, expected: &str) -> DeError {
        DeError::Bad {
            key: String::new(),
            value: self.raw.to_string(),
            expected: expected.to_string(),
        }
    }
    fn parse<T: core::str::FromStr>(&self, expected: &str) -> Result<T, DeError> {
        self.raw.trim().parse().map_err(|_| self.bad(expected))
    }
    fn number(&self) -> Result<f64, DeError> {
        self.parse::<f64>("a number").and_then(|v| {
            if v.is_finite() {
                Ok(v)
            } else {
                Err(self.bad("a finite number"))
            }
        })
    }
}

macro_rules! whole {
    ($($method:ident $visit:ident $t:ty),*) => {$(
        fn $method<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            visitor.$visit(self.parse::<$t>("a whole number")?)
        }
    )*};
}

impl<'de, 'a> de::Deserializer<'de> for ValueDe<'a> {
    type Error = DeError;
    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_str(self.raw)
    }
    fn deserialize_bool<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.raw.trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "yes" | "1" => visitor.visit_bool(true),
            "false" | "off" | "no" | "0" => visitor.visit_bool(false),
            _ => Err(self.bad("true or false")),
        }
    }
    whole! {
        deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16, deserialize_i32 visit_i32 i32,
        deserialize_i64 visit_i64 i64, deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32, deserialize_u64 visit_u64 u64
    }
    fn deserialize_f32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f32(self.number()? as f32)
    }
    fn deserialize_f64<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_f64(self.number()?)
    }
    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if self.raw.trim().eq_ignore_ascii_case("none") {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }
    fn deserialize_seq<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let raw = self.raw.trim();
        let items: Vec<&str> = if raw.eq_ignore_ascii_case("none") {
            vec![]
        } else {
            raw.split('/').collect()
        };
        visitor.visit_seq(ListDe {
            items: items.into_iter(),
        })
    }
    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_enum(UnitVariant {
            name: self.raw.trim(),
        })
    }
    fn deserialize_newtype_struct<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }
    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct tuple tuple_struct map
        struct identifier ignored_any
    }
}

struct ListDe<'a> {
    items: std::vec::IntoIter<&'a str>,
}

impl<'de, 'a> de::SeqAccess<'de> for ListDe<'a> {
    type Error = DeError;
    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.items.next() {
            None => Ok(None),
            Some(raw) => seed.deserialize(ValueDe { raw }).map(Some),
        }
    }
}

struct UnitVariant<'a> {
    name: &'a str,
}

impl<'de, 'a> de::EnumAccess<'de> for UnitVariant<'a> {
    type Error = DeError;
    type Variant = Self;
    fn variant_seed<V: de::DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), DeError> {
        let v = seed.deserialize(self.name.into_deserializer())?;
        Ok((v, self))
    }
}

impl<'de, 'a> de::VariantAccess<'de> for UnitVariant<'a> {
    type Error = DeError;
    fn unit_variant(self) -> Result<(), DeError> {
        Ok(())
    }
    fn newtype_variant_seed<T: de::DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, DeError> {
        Err(DeError::Custom("a plain name".to_string()))
    }
    fn tuple_variant<V: de::Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, DeError> {
        Err(DeError::Custom("a plain name".to_string()))
    }
    fn struct_variant<V: de::Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, DeError> {
        Err(DeError::Custom("a plain name".to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Bitrate;
    use crate::units::serde_as::{kbps, ms_or_auto, opt_bytes};
    use crate::{DataSize, Duration};
    use serde::Deserialize;

    scheme_config! {
        /// A group of the toy's.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Limits {
            /// The lowest rate, kbit/s.
            #[serde(rename = "min-kbps", with = "kbps")]
            pub min: Bitrate,
            #[serde(rename = "max-kbps", with = "kbps")]
            pub max: Bitrate,
            /// Not a parameter.
            #[serde(skip)]
            pub tuning: u32,
        }
    }

    scheme_config! {
        /// A configuration with one field of each kind.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Toy {
            /// The rate,
            /// kbit/s.
            #[serde(rename = "rate-kbps", with = "kbps")]
            pub rate: Bitrate,
            #[group]
            pub limits: Limits,
            pub count: u32,
            pub on: bool,
            pub limit_kb: Option<f64>,
            #[serde(rename = "size", skip_serializing_if = "Option::is_none", default, with = "opt_bytes")]
            pub size: Option<DataSize>,
            pub list: Vec<f64>,
            pub mode: Mode,
            /// A target, or `auto`.
            #[serde(rename = "target-ms", with = "ms_or_auto")]
            pub target: Option<Duration>,
            /// Not a parameter.
            #[serde(skip)]
            pub log: Vec<u32>,
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Mode {
        #[serde(alias = "none")]
        Off,
        Fast,
    }

    impl Validate for Toy {
        fn validate(&self, given: &Given<'_>) -> Checked {
            range("count", f64::from(self.count), 1.0, 10.0, "1 to 10")?;
            let kbps = "a rate in kbit/s";
            given.rate_kbps("rate-kbps", self.rate, 0.0, 1e6, kbps)?;
            let limits = &self.limits;
            ordered(&[
                ("min-kbps", given.number("min-kbps", limits.min.kbps_f64())),
                ("rate-kbps", given.number("rate-kbps", self.rate.kbps_f64())),
                ("max-kbps", given.number("max-kbps", limits.max.kbps_f64())),
            ])
        }
    }

    fn toy() -> Toy {
        Toy {
            rate: Bitrate::from_kbps(300),
            limits: Limits {
                min: Bitrate::from_kbps(50),
                max: Bitrate::from_kbps(2500),
                tuning: 7,
            },
            count: 3,
            on: true,
            limit_kb: None,
            size: None,
            list: vec![],
            mode: Mode::Off,
            target: None,
            log: vec![1, 2],
        }
    }

    fn set(given: &[(&str, &str)]) -> Result<Toy, ParamError> {
        let mut t = toy();
        t.set_params(given).map(|()| t)
    }

    #[test]
    fn serialises_in_declaration_order_with_spec_values() {
        assert_eq!(
            join(&pairs(&toy())),
            "rate-kbps=300,min-kbps=50,max-kbps=2500,count=3,on=true,limit-kb=none,list=none,\
             mode=off,target-ms=auto"
        );
        let t = Toy {
            limits: Limits {
                min: Bitrate::from_bps(125),
                ..toy().limits
            },
            size: Some(DataSize::from_bytes(300)),
            list: vec![1.0, 2.5],
            mode: Mode::Fast,
            target: Some(Duration::from_millis(40)),
            ..toy()
        };
        assert_eq!(
            join(&pairs(&t)),
            "rate-kbps=300,min-kbps=0.125,max-kbps=2500,count=3,on=true,limit-kb=none,size=300,\
             list=1/2.5,mode=fast,target-ms=40"
        );
        // And back.
        let owned = pairs(&t);
        let refs: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(set(&refs).unwrap(), t);
    }

    #[test]
    fn a_read_takes_each_value_by_its_type_and_keeps_what_is_not_a_parameter() {
        let t = set(&[
            ("count", "7"),
            ("on", "off"),
            ("limit_kb", "4.5"),
            ("size", "1200"),
            ("list", "100/300"),
            ("mode", "fast"),
            ("target-ms", "25"),
            ("max-kbps", "3000"),
        ])
        .unwrap();
        assert_eq!(t.count, 7);
        assert!(!t.on);
        assert_eq!(t.limit_kb, Some(4.5));
        assert_eq!(t.size, Some(DataSize::from_bytes(1200)));
        assert_eq!(t.list, vec![100.0, 300.0]);
        assert_eq!(t.mode, Mode::Fast);
        assert_eq!(t.target, Some(Duration::from_millis(25)));
        assert_eq!(t.limits.max, Bitrate::from_kbps(3000));
        // Untouched keys keep the base's values, fields that are not parameters too.
        assert_eq!(t.rate, Bitrate::from_kbps(300));
        assert_eq!((t.limits.tuning, t.log.as_slice()), (7, &[1, 2][..]));
        // `none`, `auto` and aliases read back.
        let mut back = t.clone();
        back.set_params(&[
            ("limit-kb", "none"),
            ("mode", "none"),
            ("target-ms", "auto"),
        ])
        .unwrap();
        assert_eq!(
            (back.limit_kb, back.mode, back.target),
            (None, Mode::Off, None)
        );
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        for (given, key) in [
            (&[("count", "2"), ("count", "5")][..], "count"),
            (
                &[("target_ms", "2"), ("on", "off"), (" target-ms", "5")][..],
                "target-ms",
            ),
        ] {
            let e = set(given).unwrap_err();
            let twice = ParamError::GivenTwice {
                scheme: String::new(),
                key: key.to_string(),
            };
            assert_eq!(e, twice);
            assert_eq!(
                e.to_string(),
                format!("scheme ``: parameter `{key}` given twice")
            );
        }
    }

    fn bad(given: &[(&str, &str)]) -> ParamError {
        set(given).unwrap_err()
    }

    #[test]
    fn errors_name_the_key_the_value_and_what_was_expected() {
        let e = bad(&[("speed", "3")]);
        assert_eq!(
            e,
            ParamError::UnknownParam {
                scheme: String::new(),
                key: "speed".to_string(),
                accepted: "rate-kbps, min-kbps, max-kbps, count, on, limit-kb, size, list, mode, \
                           target-ms"
                    .to_string()
            }
        );
        let value = |given: &[(&str, &str)]| match bad(given) {
            ParamError::BadValue {
                key,
                value,
                expected,
                ..
            } => (key, value, expected),
            e => panic!("{e:?}"),
        };
        assert_eq!(value(&[("count", "2.5")]).0, "count");
        assert_eq!(value(&[("count", "-1")]).1, "-1");
        assert_eq!(
            value(&[("rate_kbps", "x")]),
            ("rate-kbps".into(), "x".into(), "a number".into())
        );
        assert_eq!(value(&[("rate-kbps", "inf")]).2, "a finite number");
        assert_eq!(value(&[("on", "maybe")]).2, "true or false");
        assert_eq!(
            value(&[("mode", "slow")]),
            ("mode".into(), "slow".into(), "none, off or fast".into())
        );
        assert_eq!(value(&[("list", "1/x")]).1, "x");
        assert_eq!(value(&[("target-ms", "soon")]).2, "a number or auto");
        // Ranges, after parsing, on the values as written.
        assert_eq!(
            value(&[("count", "11")]),
            ("count".into(), "11".into(), "1 to 10".into())
        );
        assert_eq!(
            value(&[("rate-kbps", "0.0001")]),
            (
                "rate-kbps".into(),
                "0.0001".into(),
                "a rate in kbit/s, in whole bit/s".into()
            )
        );
        // A cross check blames the key given last among those involved, with the user's text.
        let (k, v, exp) = value(&[("max-kbps", "40")]);
        assert_eq!((k.as_str(), v.as_str()), ("max-kbps", "40"));
        assert_eq!(
            exp,
            "min-kbps ≤ rate-kbps ≤ max-kbps (here min-kbps=50, rate-kbps=300, max-kbps=40)"
        );
        assert_eq!(value(&[("min-kbps", "400"), ("count", "2")]).0, "min-kbps");
        assert_eq!(
            value(&[("max-kbps", "100"), ("rate-kbps", "200")]).0,
            "rate-kbps"
        );
        // Checked as a whole: a pair that is only consistent together is accepted.
        let t = set(&[
            ("min-kbps", "3000"),
            ("max-kbps", "5000"),
            ("rate-kbps", "4000"),
        ]);
        assert_eq!(t.unwrap().limits.min, Bitrate::from_kbps(3000));
    }

    #[test]
    fn docs_are_the_fields_doc_comments_a_groups_in_its_place() {
        let d = toy().param_docs();
        assert_eq!(d.len(), 10);
        assert_eq!(
            d[0],
            ("rate-kbps".to_string(), "The rate, kbit/s.".to_string())
        );
        assert_eq!(
            d[1],
            (
                "min-kbps".to_string(),
                "The lowest rate, kbit/s.".to_string()
            )
        );
        assert_eq!(d[2], ("max-kbps".to_string(), String::new()));
        assert_eq!(d[5], ("limit-kb".to_string(), String::new()));
        assert_eq!(
            d[9],
            ("target-ms".to_string(), "A target, or `auto`.".to_string())
        );
    }

    scheme_config! {
        /// A scheme without parameters.
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct Nothing;
    }

    impl Validate for Nothing {
        fn validate(&self, _: &Given<'_>) -> Checked {
            Ok(())
        }
    }

    #[test]
    fn a_unit_struct_has_no_parameters() {
        assert!(pairs(&Nothing).is_empty());
        assert!(Nothing.param_docs().is_empty());
        Nothing.set_params(&[]).unwrap();
        assert_eq!(
            Nothing.set_params(&[("x", "1")]),
            Err(ParamError::UnknownParam {
                scheme: String::new(),
                key: "x".to_string(),
                accepted: "(none)".to_string()
            })
        );
    }
}
