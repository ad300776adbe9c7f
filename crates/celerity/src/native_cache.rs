//! An environment's cache of native programs: a program made again from an expression this
//! environment already compiled shares the native code, and its plan, instead of making them
//! again (a host that makes a program per request, or rebuilds its programs when its
//! configuration changes, pays for parsing and checking only).
//!
//! The key is the expression's text and the compile options. That identifies the checked
//! expression only because the cache is consulted for [`Ast`](crate::Ast)s this very
//! environment both parsed and checked (`Ast::origin`): parsing and checking are
//! deterministic, so the same text gives the same checked tree, with the same types,
//! overloads and expression ids, and the environment gives the same functions and costs.
//! Expressions from elsewhere, and texts longer than [`MAX_KEY_BYTES`], are compiled as
//! before, without the cache.
//!
//! Bounded: at most `capacity` programs, the least recently used evicted first (a native
//! program holds a few pages of code and data). Expressions over the native-code budget are
//! remembered too, so asking again does not lower them again.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::native::{JitOptions, JitProgram};
use indexmap::{Equivalent, IndexMap};

/// The longest expression text the cache keeps (keys are held in full, so that a hit is
/// exact); rules are usually a few hundred bytes.
pub(crate) const MAX_KEY_BYTES: usize = 16 * 1024;

/// How many native programs an environment keeps by default.
pub(crate) const DEFAULT_CAPACITY: usize = 128;

/// A fresh identity for an environment (what `Ast::origin` records).
pub(crate) fn next_env_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// What a compile of one key gave.
#[derive(Clone, Debug)]
pub(crate) enum Cached {
    Compiled(Arc<JitProgram>),
    /// Over the native-code budget of this many IR instructions.
    TooLarge {
        budget: usize,
    },
}

/// An expression's text and compile options, as the cache keeps them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CacheKey {
    source: Box<str>,
    options: JitOptions,
}

/// The same key borrowing the text, for lookups: a hit copies nothing. Its derived `Hash`
/// hashes the same fields in the same order as [`CacheKey`]'s (a `&str` hashes as the
/// `str`), which [`Equivalent`] requires.
#[derive(Clone, Copy, Debug, Hash)]
pub(crate) struct KeyRef<'a> {
    source: &'a str,
    options: JitOptions,
}

impl<'a> KeyRef<'a> {
    /// The key of an expression this environment parsed and checked, or `None` when its text
    /// is too long to keep.
    pub(crate) fn new(source: &'a str, options: JitOptions) -> Option<KeyRef<'a>> {
        (source.len() <= MAX_KEY_BYTES).then_some(KeyRef { source, options })
    }

    /// The key to keep (made on a miss, when the compile's outcome is inserted).
    pub(crate) fn owned(self) -> CacheKey {
        CacheKey {
            source: self.source.into(),
            options: self.options,
        }
    }
}

impl Equivalent<CacheKey> for KeyRef<'_> {
    fn equivalent(&self, key: &CacheKey) -> bool {
        *self.source == *key.source && self.options == key.options
    }
}

/// The cache of one environment (shared by its clones).
#[derive(Debug)]
pub(crate) struct NativeCache {
    capacity: usize,
    /// In order of use, the most recent last.
    entries: Mutex<IndexMap<CacheKey, Cached>>,
}

impl NativeCache {
    pub(crate) fn new(capacity: usize) -> NativeCache {
        NativeCache {
            capacity,
            entries: Mutex::new(IndexMap::new()),
        }
    }

    fn entries(&self) -> MutexGuard<'_, IndexMap<CacheKey, Cached>> {
        // The map is consistent after any panic of a holder (each operation is one call on
        // it), so a poisoned lock is taken as it is.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What an earlier compile of `key` gave, marked as just used.
    pub(crate) fn get(&self, key: KeyRef<'_>) -> Option<Cached> {
        if self.capacity == 0 {
            return None;
        }
        let mut entries = self.entries();
        let index = entries.get_index_of(&key)?;
        let last = entries.len() - 1;
        entries.move_index(index, last);
        entries.get_index(last).map(|(_, cached)| cached.clone())
    }

    /// Remembers what compiling `key` gave, evicting the least recently used entry when full.
    pub(crate) fn insert(&self, key: CacheKey, cached: Cached) {
        if self.capacity == 0 {
            return;
        }
        let mut entries = self.entries();
        entries.shift_remove(&key);
        while entries.len() >= self.capacity {
            entries.shift_remove_index(0);
        }
        entries.insert(key, cached);
    }

    /// How many programs are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> KeyRef<'_> {
        KeyRef::new(text, JitOptions::default()).unwrap()
    }

    fn too_large(budget: usize) -> Cached {
        Cached::TooLarge { budget }
    }

    fn budget_of(cached: Option<Cached>) -> Option<usize> {
        match cached? {
            Cached::TooLarge { budget } => Some(budget),
            Cached::Compiled(_) => None,
        }
    }

    #[test]
    fn evicts_the_least_recently_used() {
        let cache = NativeCache::new(2);
        cache.insert(key("a").owned(), too_large(1));
        cache.insert(key("b").owned(), too_large(2));
        assert_eq!(budget_of(cache.get(key("a"))), Some(1)); // `b` is now the oldest
        cache.insert(key("c").owned(), too_large(3));
        assert_eq!(cache.len(), 2);
        assert_eq!(budget_of(cache.get(key("b"))), None);
        assert_eq!(budget_of(cache.get(key("a"))), Some(1));
        assert_eq!(budget_of(cache.get(key("c"))), Some(3));
    }

    #[test]
    fn options_are_part_of_the_key() {
        let cache = NativeCache::new(4);
        cache.insert(key("a").owned(), too_large(1));
        let untracked = JitOptions {
            track_cost: false,
            ..JitOptions::default()
        };
        assert!(cache.get(KeyRef::new("a", untracked).unwrap()).is_none());
        assert!(cache.get(key("a")).is_some());
    }

    #[test]
    fn capacity_zero_keeps_nothing_and_long_texts_have_no_key() {
        let cache = NativeCache::new(0);
        cache.insert(key("a").owned(), too_large(1));
        assert!(cache.get(key("a")).is_none());
        assert_eq!(cache.len(), 0);
        let long = "1".repeat(MAX_KEY_BYTES + 1);
        assert!(KeyRef::new(&long, JitOptions::default()).is_none());
        assert!(KeyRef::new(&long[1..], JitOptions::default()).is_some());
    }
}
