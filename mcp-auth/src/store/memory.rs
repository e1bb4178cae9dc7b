//! [`MemoryStore`]: credentials kept in process memory.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::lock::KeyLocks;
use super::{
    BoxFuture, CredentialStore, DEFAULT_LOCK_TIMEOUT, StoreError, StoreKey, StoreKind, StoreLock,
    StoredCredentials,
};

/// Keeps credentials in memory only: for tests, and for hosts that persist secrets
/// themselves. Clones share the same records. Key locks are process-local.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    records: Mutex<BTreeMap<StoreKey, StoredCredentials>>,
    locks: KeyLocks,
    lock_timeout: Option<Duration>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store whose key locks wait at most `timeout` (default
    /// [`DEFAULT_LOCK_TIMEOUT`]).
    pub fn with_lock_timeout(timeout: Duration) -> Self {
        Self {
            inner: Arc::new(Inner {
                lock_timeout: Some(timeout),
                ..Inner::default()
            }),
        }
    }

    /// The keys that have records, sorted.
    pub fn keys(&self) -> Vec<StoreKey> {
        self.records().keys().cloned().collect()
    }

    fn records(&self) -> std::sync::MutexGuard<'_, BTreeMap<StoreKey, StoredCredentials>> {
        self.inner
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl CredentialStore for MemoryStore {
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> BoxFuture<'a, Result<Option<StoredCredentials>, StoreError>> {
        Box::pin(async move { Ok(self.records().get(key).cloned()) })
    }

    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        creds: &'a StoredCredentials,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.records().insert(key.clone(), creds.clone());
            Ok(())
        })
    }

    fn delete<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.records().remove(key);
            Ok(())
        })
    }

    fn lock<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<StoreLock, StoreError>> {
        let timeout = self.inner.lock_timeout.unwrap_or(DEFAULT_LOCK_TIMEOUT);
        Box::pin(self.inner.locks.lock(key, timeout))
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Memory
    }

    fn location(&self) -> String {
        "memory".to_owned()
    }
}
