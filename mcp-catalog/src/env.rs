//! Host environment lookups, injected so that loading and fingerprints are deterministic.

use std::collections::{BTreeMap, HashMap};

/// Reads host environment variables.
///
/// Implemented for closures `Fn(&str) -> Option<String>`, for maps of names to values
/// (handy in tests) and by [`ProcessEnv`] for the real process environment.
pub trait EnvLookup {
    /// The value of `name`, or `None` when unset (or not valid Unicode).
    fn get(&self, name: &str) -> Option<String>;
}

impl<F> EnvLookup for F
where
    F: Fn(&str) -> Option<String>,
{
    fn get(&self, name: &str) -> Option<String> {
        self(name)
    }
}

impl EnvLookup for BTreeMap<String, String> {
    fn get(&self, name: &str) -> Option<String> {
        BTreeMap::get(self, name).cloned()
    }
}

impl<S: std::hash::BuildHasher> EnvLookup for HashMap<String, String, S> {
    fn get(&self, name: &str) -> Option<String> {
        HashMap::get(self, name).cloned()
    }
}

/// The environment of the current process (`std::env::var`).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcessEnv;

impl EnvLookup for ProcessEnv {
    fn get(&self, name: &str) -> Option<String> {
        if name.is_empty() || name.contains(['=', '\0']) {
            return None;
        }
        std::env::var(name).ok()
    }
}

/// A lookup in which no variable is set.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptyEnv;

impl EnvLookup for EmptyEnv {
    fn get(&self, _name: &str) -> Option<String> {
        None
    }
}
