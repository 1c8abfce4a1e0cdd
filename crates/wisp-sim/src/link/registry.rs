//! The kinds a link spec may name: the built-in ones ([`super::BUILTIN`]) and those registered
//! at run time ([`register`]). Every spec is parsed through them — `"…".parse::<LinkSpec>()`,
//! the command line, the scenario files, the Python package — and the help texts and the
//! parser's errors list them.

use super::contract::{LinkKind, LinkName};
use super::{LinkSpec, LinkSpecError};
use std::sync::{PoisonError, RwLock};

/// The kinds registered at run time, in order.
static REGISTERED: RwLock<Vec<&'static dyn LinkKind>> = RwLock::new(Vec::new());

/// Adds `kind` to the kinds every spec is parsed with, after the built-in ones. Registering the
/// same kind again does nothing; a kind that names a name another kind has is refused (the
/// error names it).
pub fn register(kind: &'static dyn LinkKind) -> Result<(), String> {
    let mut registered = REGISTERED.write().unwrap_or_else(PoisonError::into_inner);
    let same = |k: &&'static dyn LinkKind| std::ptr::addr_eq(*k, kind);
    if registered.iter().any(same) {
        return Ok(());
    }
    let known = super::BUILTIN.iter().chain(registered.iter());
    for k in known {
        for n in k.names() {
            if kind.names().iter().any(|m| m.name == n.name) {
                return Err(format!("a link kind named `{}` is known already", n.name));
            }
        }
    }
    registered.push(kind);
    Ok(())
}

/// Every kind: the built-in ones, then those registered, in order.
pub fn kinds() -> Vec<&'static dyn LinkKind> {
    let registered = REGISTERED.read().unwrap_or_else(PoisonError::into_inner);
    super::BUILTIN
        .iter()
        .copied()
        .chain(registered.iter().copied())
        .collect()
}

/// Every name a spec may start with, in the order of [`kinds`].
pub fn names() -> Vec<LinkName> {
    kinds()
        .into_iter()
        .flat_map(|k| k.names().iter().copied())
        .collect()
}

/// The kinds as help: `USAGE (HELP)` for each name (names in a row with the same help share
/// it, `USAGE, USAGE (HELP)`), joined by `; `.
pub fn help() -> String {
    let names = names();
    let mut out: Vec<String> = vec![];
    for (i, n) in names.iter().enumerate() {
        let next = names.get(i + 1);
        let sep = if next.is_some_and(|m| m.help == n.help) {
            ", ".to_string()
        } else if next.is_some() {
            format!(" ({}); ", n.help)
        } else {
            format!(" ({})", n.help)
        };
        out.push(format!("{}{sep}", n.usage));
    }
    out.concat()
}

/// Parses `NAME[:ARGS]` with the kind that has that name.
pub(super) fn parse(s: &str) -> Result<LinkSpec, LinkSpecError> {
    let err = |message: String| LinkSpecError {
        spec: s.to_string(),
        message,
    };
    let (name, args) = s.split_once(':').map_or((s, None), |(k, a)| (k, Some(a)));
    let kinds = kinds();
    let found = kinds
        .iter()
        .find_map(|k| Some((*k, k.names().iter().find(|n| n.name == name)?)));
    let list = |f: fn(&LinkName) -> &'static str| {
        kinds
            .iter()
            .flat_map(|k| k.names().iter().map(f))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match found {
        Some((kind, n)) if args.is_some() || !n.needs_args() => kind.parse(name, args).map_err(err),
        None if args.is_some() => Err(err(format!(
            "unknown link kind `{name}` (known: {})",
            list(|n| n.name)
        ))),
        _ => Err(err(format!(
            "expected KIND:ARGS, one of {}",
            list(|n| n.usage)
        ))),
    }
}
