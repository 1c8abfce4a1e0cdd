//! Precomputed tables that flows can share, owned by the caller.
//!
//! Some schemes precompute large tables from their parameters alone (Sprout's forecast tables
//! take tens of milliseconds). [`Tables`] keeps them so that flows with the same parameters share
//! one copy. It is an explicit object: whoever runs flows decides its lifetime — one per run
//! (the default of a simulator scenario), one per sweep or benchmark, one per process — and
//! passes it to [`crate::scheme::SchemeContext`]. Nothing is cached behind the caller's back.
//!
//! Cloning a `Tables` clones the handle: the clones share their contents. Entries are never
//! evicted.

use core::any::{Any, TypeId};
use core::fmt;
use core::hash::Hash;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type Entries = HashMap<(TypeId, TypeId), Box<dyn Any + Send + Sync>>;

/// A shareable store of immutable tables keyed by their parameters.
#[derive(Clone, Default)]
pub struct Tables {
    inner: Arc<Mutex<Entries>>,
}

impl Tables {
    /// An empty store.
    pub fn new() -> Self {
        Tables::default()
    }

    /// The table for `key`, made by `make` on first use and shared afterwards.
    ///
    /// `make` runs outside the lock: two threads asking for the same new key at once may both
    /// compute it, and the first to finish is kept (tables are pure functions of their key).
    pub fn get_or_make<K, V>(&self, key: K, make: impl FnOnce(&K) -> V) -> Arc<V>
    where
        K: Eq + Hash + Clone + Send + Sync + 'static,
        V: Send + Sync + 'static,
    {
        if let Some(v) = self.lookup::<K, V>(&key) {
            return v;
        }
        let made = Arc::new(make(&key));
        let mut entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let map = entries
            .entry((TypeId::of::<K>(), TypeId::of::<V>()))
            .or_insert_with(|| Box::new(HashMap::<K, Arc<V>>::new()))
            .downcast_mut::<HashMap<K, Arc<V>>>()
            .expect("entries are keyed by their types");
        Arc::clone(map.entry(key).or_insert(made))
    }

    fn lookup<K, V>(&self, key: &K) -> Option<Arc<V>>
    where
        K: Eq + Hash + 'static,
        V: Send + Sync + 'static,
    {
        let entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(&(TypeId::of::<K>(), TypeId::of::<V>()))?
            .downcast_ref::<HashMap<K, Arc<V>>>()?
            .get(key)
            .cloned()
    }

    /// Number of tables held.
    pub fn len(&self) -> usize {
        let entries = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for Tables {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tables({} kinds)", self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_by_key_and_type() {
        let t = Tables::new();
        let mut made = 0;
        let a = t.get_or_make(3u64, |k| {
            made += 1;
            vec![*k; 2]
        });
        let b = t.get_or_make(3u64, |_| -> Vec<u64> { unreachable!("cached") });
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(made, 1);
        // Another key, another value type: separate entries.
        let c = t.get_or_make(4u64, |k| vec![*k]);
        assert_eq!(*c, vec![4]);
        let d = t.get_or_make(3u64, |k| format!("{k}"));
        assert_eq!(*d, "3");
        // A clone is the same store; a new one is empty.
        assert!(Arc::ptr_eq(&t.clone().get_or_make(3u64, |_| vec![0]), &a));
        assert!(!Arc::ptr_eq(
            &Tables::new().get_or_make(3u64, |_| vec![3, 3]),
            &a
        ));
    }
}
