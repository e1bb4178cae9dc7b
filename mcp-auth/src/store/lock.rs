//! [`StoreLock`] and the process-local per-key locks used by stores without a lock file.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{StoreError, StoreKey};

/// Proof of holding a store's lock for one key; the lock is released when this drops.
///
/// Obtained from [`CredentialStore::lock`](super::CredentialStore::lock). Holding it does
/// not stop this task (or any other) from calling `load`, `save` or `delete`.
pub struct StoreLock {
    // The mutex only makes the guard `Sync` without asking implementers for it; it is never
    // locked.
    _guard: Mutex<Box<dyn Send>>,
    description: String,
}

impl StoreLock {
    /// Wraps the guard of a host-implemented store's lock. `description` names the lock in
    /// `Debug` output (no secrets).
    pub fn new(guard: impl Send + 'static, description: impl Into<String>) -> Self {
        Self {
            _guard: Mutex::new(Box::new(guard)),
            description: description.into(),
        }
    }

    /// What is locked, e.g. a lock file path.
    pub fn description(&self) -> &str {
        &self.description
    }
}

impl fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreLock")
            .field("lock", &self.description)
            .finish_non_exhaustive()
    }
}

/// Per-key async mutexes inside one process, with a bounded wait.
#[derive(Debug, Default)]
pub(crate) struct KeyLocks {
    locks: Mutex<HashMap<StoreKey, Arc<tokio::sync::Mutex<()>>>>,
}

impl KeyLocks {
    pub(crate) async fn lock(
        &self,
        key: &StoreKey,
        timeout: Duration,
    ) -> Result<StoreLock, StoreError> {
        let mutex = {
            let mut locks = self
                .locks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(locks.entry(key.clone()).or_default())
        };
        let description = format!("for {key} (in this process)");
        match tokio::time::timeout(timeout, mutex.lock_owned()).await {
            Ok(guard) => Ok(StoreLock::new(guard, description)),
            Err(_) => Err(StoreError::LockTimeout {
                lock: description,
                waited: timeout,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shareable<T: Send + Sync + 'static>() {}

    #[test]
    fn guards_and_stores_can_cross_tasks() {
        shareable::<StoreLock>();
        shareable::<crate::FileStore>();
        shareable::<crate::KeyringStore>();
        shareable::<crate::AutoStore>();
        shareable::<crate::MemoryStore>();
        shareable::<crate::StoreError>();
    }

    #[tokio::test(start_paused = true)]
    async fn key_locks_are_per_key_and_bounded() {
        let locks = KeyLocks::default();
        let a = StoreKey::new(&"a".parse().unwrap(), "u");
        let b = StoreKey::new(&"b".parse().unwrap(), "u");
        let held = locks.lock(&a, Duration::from_secs(5)).await.unwrap();
        assert!(held.description().contains("a|"));
        assert!(format!("{held:?}").starts_with("StoreLock"));
        drop(locks.lock(&b, Duration::from_secs(5)).await.unwrap());
        let err = locks.lock(&a, Duration::from_secs(5)).await.unwrap_err();
        assert!(err.is_lock_timeout());
        drop(held);
        drop(locks.lock(&a, Duration::from_secs(5)).await.unwrap());
    }
}
