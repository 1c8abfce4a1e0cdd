//! The `KEY=VALUE,…` lists of the specs (a scheme's parameters; the simulator's queues, loss,
//! links, `wifi:` links, Ping-Pair): one splitter, so that every spec trims, skips empty items and
//! refuses a key given twice the same way. Each spec keeps its own messages: it maps
//! [`ItemError`] to them.

/// Why a list did not split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemError<'a> {
    /// An item without `=` (the item, trimmed).
    NotKeyValue(&'a str),
    /// A key given a second time (the key, trimmed): one value would be dropped without a word.
    GivenTwice(&'a str),
}

/// Splits `list` at commas into `(key, value)` pairs, both trimmed, in order; empty items are
/// skipped. The first bad item, in order, is the error.
pub fn key_values(list: &str) -> Result<Vec<(&str, &str)>, ItemError<'_>> {
    let mut kv: Vec<(&str, &str)> = vec![];
    for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (k, v) = item.split_once('=').ok_or(ItemError::NotKeyValue(item))?;
        let (k, v) = (k.trim(), v.trim());
        if kv.iter().any(|&(seen, _)| seen == k) {
            return Err(ItemError::GivenTwice(k));
        }
        kv.push((k, v));
    }
    Ok(kv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_trims_and_skips_empty_items() {
        assert_eq!(
            key_values(" a = 1 ,, b=x y ,").unwrap(),
            vec![("a", "1"), ("b", "x y")]
        );
        assert_eq!(key_values("").unwrap(), vec![]);
        assert_eq!(key_values("a=").unwrap(), vec![("a", "")]);
    }

    #[test]
    fn the_first_bad_item_is_the_error() {
        assert_eq!(key_values("a=1, a =2"), Err(ItemError::GivenTwice("a")));
        assert_eq!(
            key_values("a=1, junk ,a=2"),
            Err(ItemError::NotKeyValue("junk"))
        );
        assert_eq!(key_values("a=1,a=2,junk"), Err(ItemError::GivenTwice("a")));
    }
}
