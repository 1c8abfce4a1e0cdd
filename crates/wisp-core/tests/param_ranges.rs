//! Every numeric parameter of every built-in scheme either keeps the value given, exactly as
//! its display form reads back, or refuses it: nothing is clamped or wrapped in silence
//! (`heartbeat-ms=1e308` was shown back as `18446744073709.55`).

use proptest::prelude::*;
use wisp_core::scheme::Registry;

/// The numeric keys of each scheme: `(scheme, key)`. Optional keys (`none` or `auto` by
/// default, or unset) count when they take a number.
fn numeric_keys() -> Vec<(&'static str, String)> {
    let mut out = vec![];
    for info in Registry::builtin().schemes() {
        for (k, default, _) in info.parameters() {
            let numeric = default.as_deref().is_some_and(|v| v.parse::<f64>().is_ok())
                || ["1", "100", "0.5"]
                    .iter()
                    .any(|x| shown(info.name, &k, x).is_some_and(|s| s.parse::<f64>().is_ok()));
            if numeric {
                out.push((info.name, k));
            }
        }
    }
    out
}

/// Sets `key=value` on `scheme`'s defaults: `None` when refused, else the value shown back
/// (`None` too for a key shown under another name, as cbr's `rate` is under `rate-kbps`).
fn shown(scheme: &str, key: &str, value: &str) -> Option<String> {
    let mut c = Registry::builtin().named(scheme).unwrap();
    c.set_params(&[(key, value)]).ok()?;
    let list = c.param_list();
    let (_, v) = list.iter().find(|(k, _)| *k == key)?;
    Some(v.clone())
}

/// The given value and the one shown are the same number (an integer key reads "2" as 2).
fn same(given: &str, shown: &str) -> bool {
    match (given.trim().parse::<f64>(), shown.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn check(scheme: &str, key: &str, value: &str) -> Result<(), String> {
    match shown(scheme, key, value) {
        None => Ok(()),
        Some(s) if same(value, &s) => Ok(()),
        Some(s) => Err(format!("{scheme} {key}={value} is shown back as {s}")),
    }
}

const HOSTILE: &[&str] = &[
    "1e308",
    "-1e308",
    "18446744073709551616",
    "18446744073709551615",
    "9223372036854775808",
    "4294967296",
    "4294967295",
    "65536",
    "1e20",
    "1e15",
    "1e12",
    "1e9",
    "-1",
    "0",
    "-0",
    "1e-300",
    "1e-9",
    "0.0000001",
    "0.3333333333333333",
    "2.5",
    "1",
    "100",
];

#[test]
fn hostile_values_are_kept_or_refused() {
    let mut bad = vec![];
    let keys = numeric_keys();
    assert!(keys.len() > 100, "{} keys", keys.len());
    for (scheme, key) in &keys {
        for v in HOSTILE {
            if let Err(e) = check(scheme, key, v) {
                bad.push(e);
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} values changed:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn any_value_is_kept_or_refused(
        i in 0usize..1000,
        mantissa in -10.0f64..10.0,
        exp in -320i32..310,
        whole in any::<u64>(),
        pick in 0u8..3,
    ) {
        let keys = numeric_keys();
        let (scheme, key) = &keys[i % keys.len()];
        let value = match pick {
            0 => format!("{mantissa}e{exp}"),
            1 => whole.to_string(),
            _ => format!("{}", mantissa * 10f64.powi(exp.clamp(-12, 12))),
        };
        prop_assert!(check(scheme, key, &value).is_ok(), "{}", check(scheme, key, &value).unwrap_err());
    }
}
