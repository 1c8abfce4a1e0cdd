//! Scheme parameters: the `KEY=VALUE,…` of a spec string ↔ a typed struct per scheme.
//!
//! Each scheme declares its parameters once, as a struct deriving serde's `Serialize` and
//! `Deserialize` with `#[serde(rename_all = "kebab-case", deny_unknown_fields)]`, in user units
//! (kbit/s, ms, …), and implements [`Validate`] for its ranges and cross checks. This module
//! does the rest the same way for every scheme:
//!
//! * [`pairs`] serialises a parameter struct to its `(key, value)` list — the canonical values
//!   `wisp schemes` lists and a spec string prints;
//! * [`overlay`] parses `KEY=VALUE` pairs on top of a base struct (the scheme's current
//!   parameters: every key keeps its value unless given), so a value is read by the type of its
//!   field, unknown keys are rejected with the list of accepted ones, and the whole result is
//!   validated at once (so `min-kbps=3000,max-kbps=4000` is checked as a pair, not key by key);
//! * errors come back as one [`ParamError`] shape: the key, the value as given, what was
//!   expected.
//!
//! Values: numbers as Rust parses them (finite only), `true`/`false` (also `on`/`off`, `yes`/`no`,
//! `1`/`0`), `none` for an absent optional value, lists separated by `/` (`none` for an empty
//! one), and unit enum variants by their kebab-case names. Keys may be written with `_` for `-`.

use super::ParamError;
use core::fmt;
use serde::de::{self, DeserializeOwned, IntoDeserializer};
use serde::ser::{self, Impossible};
use serde::{Deserialize, Serialize};

/// A rule a parameter struct breaks: the keys involved and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The keys the rule involves (one for a range, two or more for a cross check).
    pub keys: Vec<&'static str>,
    pub expected: String,
}

/// The result of a check.
pub type Checked = Result<(), Invalid>;

/// Ranges and cross checks of a parameter struct, beyond what the field types ensure.
pub trait Validate {
    fn validate(&self) -> Checked;
}

/// The doc comment of each field of a parameter struct (the help text of its key), as
/// [`scheme_params!`] collects them.
pub trait Documented {
    /// `(field name, doc comment)` in declaration order.
    const DOCS: &'static [(&'static str, &'static str)];
}

/// A scheme's parameter struct.
pub trait Params: Serialize + DeserializeOwned + Validate + Documented {}
impl<P: Serialize + DeserializeOwned + Validate + Documented> Params for P {}

/// Each key of a parameter struct with its help text (its field's doc comment on one line).
pub fn docs<P: Documented>() -> Vec<(String, String)> {
    P::DOCS
        .iter()
        .map(|(field, doc)| {
            let text: Vec<&str> = doc
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            (field.replace('_', "-"), text.join(" "))
        })
        .collect()
}

/// Declares a parameter struct: serde with kebab-case keys and `deny_unknown_fields`, and
/// [`Documented`] from the fields' doc comments. Fields take doc comments, then `#[serde(…)]`
/// attributes. (The crate using it needs `serde` with its `derive` feature.)
#[doc(hidden)]
#[macro_export]
macro_rules! __scheme_params {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                $(#[serde $sa:tt])*
                pub $f:ident: $t:ty,
            )*
        }
    ) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        pub struct $name {
            $(
                $(#[doc = $doc])*
                $(#[serde $sa])*
                pub $f: $t,
            )*
        }

        impl $crate::scheme::params::Documented for $name {
            const DOCS: &'static [(&'static str, &'static str)] =
                &[$((stringify!($f), concat!($($doc, "\n",)* ""))),*];
        }
    };
}
pub use crate::__scheme_params as scheme_params;

/// A scheme configuration whose parameters are a [`Params`] struct.
pub trait Configurable {
    type Params: Params;
    /// The configuration's parameters.
    fn to_params(&self) -> Self::Params;
    /// Sets the parameters to `p` (validated), keeping the rest of the configuration.
    fn apply(&mut self, p: Self::Params);

    /// Every parameter with its value.
    fn param_list(&self) -> Vec<(&'static str, String)> {
        pairs(&self.to_params())
    }

    /// Every key with its help text.
    fn param_docs(&self) -> Vec<(String, String)> {
        docs::<Self::Params>()
    }

    /// Sets the `given` parameters, all or none.
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        let p = overlay(&self.to_params(), given)?;
        self.apply(p);
        Ok(())
    }
}

/// What the registry asks of a scheme's configuration about its parameters. Every
/// [`Configurable`] type has it; a configuration whose parameter struct depends on its variant
/// (Sprout's, the Mehrotra family's) implements it by choosing the struct.
pub trait Parameters {
    /// Every parameter with its value.
    fn param_list(&self) -> Vec<(&'static str, String)>;
    /// Every key with its help text.
    fn param_docs(&self) -> Vec<(String, String)>;
    /// Sets the `given` parameters, all or none.
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError>;
}

impl<C: Configurable> Parameters for C {
    fn param_list(&self) -> Vec<(&'static str, String)> {
        Configurable::param_list(self)
    }
    fn param_docs(&self) -> Vec<(String, String)> {
        Configurable::param_docs(self)
    }
    fn set_params(&mut self, given: &[(&str, &str)]) -> Result<(), ParamError> {
        Configurable::set_params(self, given)
    }
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
pub(crate) fn changed<C: Configurable + Default>(c: &C) -> Vec<(&'static str, String)> {
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

/// The `(key, value)` list of a parameter struct, in declaration order (fields whose value is
/// skipped by `skip_serializing_if` are left out).
pub fn pairs<P: Serialize>(p: &P) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    p.serialize(PairsSer { out: &mut out })
        .expect("a parameter struct serialises to KEY=VALUE pairs");
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

/// A key as the structs name it: trimmed, `_` read as `-`.
pub(crate) fn normalise(key: &str) -> String {
    key.trim().replace('_', "-")
}

/// Parses `given` pairs on top of `base` and validates the result. The error's scheme is left
/// empty for the registry to fill in.
pub fn overlay<P: Params>(base: &P, given: &[(&str, &str)]) -> Result<P, ParamError> {
    let mut all: Vec<(String, String)> = pairs(base)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    // The user's keys, normalised, as given (the last of a repeated key wins).
    let mut user: Vec<(String, &str, &str)> = Vec::new();
    for &(k, v) in given {
        let nk = normalise(k);
        let v = v.trim();
        match all.iter_mut().find(|(ak, _)| *ak == nk) {
            Some(slot) => slot.1 = v.to_string(),
            None => all.push((nk.clone(), v.to_string())),
        }
        user.retain(|(uk, _, _)| *uk != nk);
        user.push((nk, k.trim(), v));
    }
    let p = P::deserialize(PairsDe { pairs: &all }).map_err(|e| match e {
        DeError::Unknown { key, accepted } => {
            let typed = user
                .iter()
                .find(|(nk, _, _)| *nk == key)
                .map_or(key.as_str(), |(_, k, _)| k);
            ParamError::UnknownParam {
                scheme: String::new(),
                key: typed.to_string(),
                accepted: if accepted.is_empty() {
                    "(none)".to_string()
                } else {
                    accepted.join(", ")
                },
            }
        }
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
    })?;
    if let Err(Invalid { keys, expected }) = p.validate() {
        // Blame the involved key the user gave last, else the first one.
        let given_last = user
            .iter()
            .rev()
            .find(|(nk, _, _)| keys.iter().any(|k| k == nk));
        let (key, value) = match given_last {
            Some((nk, _, v)) => (nk.clone(), v.to_string()),
            None => {
                let key = keys.first().copied().unwrap_or_default();
                let value = all
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                (key.to_string(), value)
            }
        };
        return Err(ParamError::BadValue {
            scheme: String::new(),
            key,
            value,
            expected,
        });
    }
    Ok(p)
}

/// The accepted keys of a parameter struct (including those `pairs` may leave out), by asking
/// serde for an unknown one.
pub fn accepted<P: DeserializeOwned>() -> Vec<&'static str> {
    let probe = [("\u{1}".to_string(), String::new())];
    match P::deserialize(PairsDe { pairs: &probe }) {
        Err(DeError::Unknown { accepted, .. }) => accepted.to_vec(),
        _ => vec![],
    }
}

/// `Option<f64>` written as `auto` when absent (`delta-hat-ms=auto`).
pub mod auto {
    use serde::{Deserialize, Deserializer, Serializer, de};

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_str("auto"),
            Some(x) => s.serialize_f64(*x),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let s = String::deserialize(d)?;
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(None);
        }
        match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(de::Error::invalid_value(
                de::Unexpected::Str(&s),
                &"a number or auto",
            )),
        }
    }
}

// ---- Serialisation: a struct to (key, value) pairs.

/// Serialisation only fails on shapes a parameter struct cannot have.
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

struct PairsSer<'a> {
    out: &'a mut Vec<(&'static str, String)>,
}

impl<'a> ser::Serializer for PairsSer<'a> {
    type Ok = ();
    type Error = SerError;
    type SerializeSeq = Impossible<(), SerError>;
    type SerializeTuple = Impossible<(), SerError>;
    type SerializeTupleStruct = Impossible<(), SerError>;
    type SerializeTupleVariant = Impossible<(), SerError>;
    type SerializeMap = Impossible<(), SerError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), SerError>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, SerError> {
        Ok(self)
    }
    fn serialize_bool(self, _: bool) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_i8(self, _: i8) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_i16(self, _: i16) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_i32(self, _: i32) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_i64(self, _: i64) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_u8(self, _: u8) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_u16(self, _: u16) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_u32(self, _: u32) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_u64(self, _: u64) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_f32(self, _: f32) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_f64(self, _: f64) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_char(self, _: char) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_str(self, _: &str) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_none(self) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_unit(self) -> Result<(), SerError> {
        // A scheme without parameters.
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), SerError> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), SerError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), SerError> {
        unsupported("a bare value")
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, SerError> {
        unsupported("a bare list")
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

impl<'a> ser::SerializeStruct for PairsSer<'a> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), SerError> {
        let v = value.serialize(ValueSer)?;
        self.out.push((key, v));
        Ok(())
    }
    fn end(self) -> Result<(), SerError> {
        Ok(())
    }
}

/// One value as the text a spec string carries.
struct ValueSer;

/// A `/`-separated list.
struct ListSer(Vec<String>);

impl ser::SerializeSeq for ListSer {
    type Ok = String;
    type Error = SerError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), SerError> {
        self.0.push(v.serialize(ValueSer)?);
        Ok(())
    }
    fn end(self) -> Result<String, SerError> {
        Ok(if self.0.is_empty() {
            "none".to_string()
        } else {
            self.0.join("/")
        })
    }
}

impl ser::Serializer for ValueSer {
    type Ok = String;
    type Error = SerError;
    type SerializeSeq = ListSer;
    type SerializeTuple = Impossible<String, SerError>;
    type SerializeTupleStruct = Impossible<String, SerError>;
    type SerializeTupleVariant = Impossible<String, SerError>;
    type SerializeMap = Impossible<String, SerError>;
    type SerializeStruct = Impossible<String, SerError>;
    type SerializeStructVariant = Impossible<String, SerError>;

    fn serialize_bool(self, v: bool) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_i8(self, v: i8) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_i16(self, v: i16) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_i32(self, v: i32) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_i64(self, v: i64) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_u8(self, v: u8) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_u16(self, v: u16) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_u32(self, v: u32) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_u64(self, v: u64) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_f32(self, v: f32) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    /// The shortest text that parses back to `v` (`1000`, `0.125`).
    fn serialize_f64(self, v: f64) -> Result<String, SerError> {
        Ok(format!("{v}"))
    }
    fn serialize_char(self, v: char) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<String, SerError> {
        Ok(v.to_string())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, SerError> {
        unsupported("bytes")
    }
    fn serialize_none(self) -> Result<String, SerError> {
        Ok("none".to_string())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<String, SerError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<String, SerError> {
        unsupported("()")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, SerError> {
        unsupported("a unit struct")
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<String, SerError> {
        Ok(variant.to_string())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<String, SerError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, SerError> {
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
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, SerError> {
        unsupported("a nested struct")
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

// ---- Deserialisation: (key, value) pairs to a struct, each value read by its field's type.

#[derive(Debug)]
enum DeError {
    Unknown {
        key: String,
        accepted: &'static [&'static str],
    },
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
            DeError::Unknown { key, .. } => write!(f, "unknown parameter `{key}`"),
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
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        DeError::Unknown {
            key: field.to_string(),
            accepted: expected,
        }
    }
}

struct PairsDe<'a> {
    pairs: &'a [(String, String)],
}

impl<'de, 'a> de::Deserializer<'de> for PairsDe<'a> {
    type Error = DeError;
    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_map(PairsMap {
            iter: self.pairs.iter(),
            value: None,
        })
    }
    fn deserialize_unit_struct<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.pairs.first() {
            None => visitor.visit_unit(),
            Some((k, _)) => Err(DeError::Unknown {
                key: k.clone(),
                accepted: &[],
            }),
        }
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

struct PairsMap<'a> {
    iter: core::slice::Iter<'a, (String, String)>,
    value: Option<&'a (String, String)>,
}

impl<'de, 'a> de::MapAccess<'de> for PairsMap<'a> {
    type Error = DeError;
    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.iter.next() {
            None => Ok(None),
            Some(pair) => {
                self.value = Some(pair);
                seed.deserialize(pair.0.as_str().into_deserializer())
                    .map(Some)
            }
        }
    }
    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DeError> {
        let (key, raw) = self.value.take().expect("a value follows its key");
        seed.deserialize(ValueDe { raw }).map_err(|e| match e {
            DeError::Bad {
                value, expected, ..
            } => DeError::Bad {
                key: key.clone(),
                value,
                expected,
            },
            DeError::Custom(expected) => DeError::Bad {
                key: key.clone(),
                value: raw.clone(),
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

/// A scheme without parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoParams;

impl Validate for NoParams {
    fn validate(&self) -> Checked {
        Ok(())
    }
}

impl Documented for NoParams {
    const DOCS: &'static [(&'static str, &'static str)] = &[];
}

#[cfg(test)]
mod tests {
    use super::*;

    scheme_params! {
        /// A parameter struct with one field of each kind.
        pub struct Toy {
            /// The rate,
            /// kbit/s.
            pub rate_kbps: f64,
            pub min_kbps: f64,
            pub max_kbps: f64,
            pub count: u32,
            pub on: bool,
            pub limit_kb: Option<f64>,
            #[serde(skip_serializing_if = "Option::is_none", default)]
            pub size: Option<u64>,
            pub list: Vec<f64>,
            pub mode: Mode,
            /// A target, or `auto`.
            #[serde(with = "auto")]
            pub target_ms: Option<f64>,
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
        fn validate(&self) -> Checked {
            range("count", f64::from(self.count), 1.0, 10.0, "1 to 10")?;
            ordered(&[
                ("min-kbps", self.min_kbps),
                ("rate-kbps", self.rate_kbps),
                ("max-kbps", self.max_kbps),
            ])
        }
    }

    fn toy() -> Toy {
        Toy {
            rate_kbps: 300.0,
            min_kbps: 50.0,
            max_kbps: 2500.0,
            count: 3,
            on: true,
            limit_kb: None,
            size: None,
            list: vec![],
            mode: Mode::Off,
            target_ms: None,
        }
    }

    #[test]
    fn serialises_in_declaration_order_with_spec_values() {
        assert_eq!(
            join(&pairs(&toy())),
            "rate-kbps=300,min-kbps=50,max-kbps=2500,count=3,on=true,limit-kb=none,list=none,\
             mode=off,target-ms=auto"
        );
        let t = Toy {
            min_kbps: 0.125,
            size: Some(300),
            list: vec![1.0, 2.5],
            mode: Mode::Fast,
            target_ms: Some(40.0),
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
        assert_eq!(overlay(&toy(), &refs).unwrap(), t);
    }

    #[test]
    fn overlay_reads_each_value_by_its_type() {
        let t = overlay(
            &toy(),
            &[
                ("count", "7"),
                ("on", "off"),
                ("limit_kb", "4.5"),
                ("size", "1200"),
                ("list", "100/300"),
                ("mode", "fast"),
                ("target-ms", "25"),
            ],
        )
        .unwrap();
        assert_eq!(t.count, 7);
        assert!(!t.on);
        assert_eq!(t.limit_kb, Some(4.5));
        assert_eq!(t.size, Some(1200));
        assert_eq!(t.list, vec![100.0, 300.0]);
        assert_eq!(t.mode, Mode::Fast);
        assert_eq!(t.target_ms, Some(25.0));
        // Untouched keys keep the base's values; `none`, `auto` and aliases read back.
        assert_eq!(t.rate_kbps, 300.0);
        let back = overlay(
            &t,
            &[
                ("limit-kb", "none"),
                ("mode", "none"),
                ("target-ms", "auto"),
            ],
        )
        .unwrap();
        assert_eq!(
            (back.limit_kb, back.mode, back.target_ms),
            (None, Mode::Off, None)
        );
        // The last of a repeated key wins.
        assert_eq!(
            overlay(&toy(), &[("count", "2"), ("count", "5")])
                .unwrap()
                .count,
            5
        );
    }

    fn bad(given: &[(&str, &str)]) -> ParamError {
        overlay(&toy(), given).unwrap_err()
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
        // Ranges, after parsing.
        assert_eq!(
            value(&[("count", "11")]),
            ("count".into(), "11".into(), "1 to 10".into())
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
        let t = overlay(
            &toy(),
            &[
                ("min-kbps", "3000"),
                ("max-kbps", "5000"),
                ("rate-kbps", "4000"),
            ],
        );
        assert_eq!(t.unwrap().min_kbps, 3000.0);
    }

    #[test]
    fn docs_are_the_fields_doc_comments() {
        let d = docs::<Toy>();
        assert_eq!(d.len(), 10);
        assert_eq!(
            d[0],
            ("rate-kbps".to_string(), "The rate, kbit/s.".to_string())
        );
        assert_eq!(d[1], ("min-kbps".to_string(), String::new()));
        assert_eq!(
            d[9],
            ("target-ms".to_string(), "A target, or `auto`.".to_string())
        );
    }

    #[test]
    fn accepted_lists_every_key() {
        assert_eq!(accepted::<Toy>().len(), 10);
        assert!(accepted::<Toy>().contains(&"size"));
        assert!(accepted::<NoParams>().is_empty());
        assert!(pairs(&NoParams).is_empty());
        assert_eq!(overlay(&NoParams, &[]).unwrap(), NoParams);
        assert!(matches!(
            overlay(&NoParams, &[("x", "1")]),
            Err(ParamError::UnknownParam { .. })
        ));
    }
}
