//! [`KeyringStore`]: one OS keyring entry per server.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::error::{KeyringFailure, json_problem};
use super::file_lock::FileLocks;
use super::keyring_os as os;
use super::lock::KeyLocks;
use super::{
    BoxFuture, CredentialStore, DEFAULT_LOCK_TIMEOUT, StoreError, StoreKey, StoreKind, StoreLock,
    StoredCredentials, blocking,
};

/// Keeps each server's credentials in the OS keyring: service = the configured service
/// name, account = the [`StoreKey`] text, value = the record as JSON.
///
/// Backends: on Linux the kernel key store (keyutils, in the user keyring: no D-Bus or
/// login session needed, shared by the user's processes, gone after a reboot; values are
/// limited by the kernel's per-user key quota, 20 000 bytes by default for non-root
/// users), the Keychain on macOS, the Credential Manager on Windows. Each call runs on
/// tokio's blocking pool.
///
/// Without the crate's default feature `keyring` the type remains (so code written for it
/// compiles either way), but [`KeyringStore::probe`], `load`, `save` and `delete` return
/// [`StoreError::Unavailable`] and the keyring crates are not compiled.
///
/// Key locks ([`CredentialStore::lock`]) are process-local unless the store was built
/// with [`KeyringStore::with_lock_dir`], which makes them cross-process file locks.
#[derive(Debug, Clone)]
pub struct KeyringStore {
    service: Arc<str>,
    locks: Locks,
    timeout: Duration,
}

#[derive(Debug, Clone)]
enum Locks {
    Local(Arc<KeyLocks>),
    Files(FileLocks),
}

impl KeyringStore {
    /// A store using the keyring entries of `service` (e.g. the host application's name).
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into().into(),
            locks: Locks::Local(Arc::default()),
            timeout: DEFAULT_LOCK_TIMEOUT,
        }
    }

    /// Takes key locks as `flock`ed files in `dir` (created 0700), so refreshes are
    /// serialized across processes.
    #[must_use]
    pub fn with_lock_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.locks = Locks::Files(FileLocks::in_dir(dir.into(), self.timeout));
        self
    }

    /// Sets how long key locks wait (default [`DEFAULT_LOCK_TIMEOUT`]).
    #[must_use]
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        if let Locks::Files(files) = &mut self.locks {
            *files = files.clone().with_timeout(timeout);
        }
        self
    }

    /// The keyring service name.
    pub fn service(&self) -> &str {
        &self.service
    }

    /// Checks, blocking briefly, that the keyring answers: looks up an entry that never
    /// exists. [`StoreError::Unavailable`] when it does not.
    pub fn probe(&self) -> Result<(), StoreError> {
        os::probe(&self.service)
    }
}

impl CredentialStore for KeyringStore {
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> BoxFuture<'a, Result<Option<StoredCredentials>, StoreError>> {
        let service = Arc::clone(&self.service);
        let key = key.clone();
        Box::pin(blocking(move || {
            let Some(text) = os::get(&service, &key)? else {
                return Ok(None);
            };
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| StoreError::CorruptEntry {
                    location: format!("the OS keyring (service {service:?})"),
                    key: key.to_string(),
                    detail: json_problem(&e),
                })
        }))
    }

    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        creds: &'a StoredCredentials,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let service = Arc::clone(&self.service);
            let key = key.clone();
            let json = serde_json::to_string(creds).map_err(|_| StoreError::Keyring {
                service: service.to_string(),
                account: key.to_string(),
                source: KeyringFailure::new("the record could not be encoded as JSON"),
            })?;
            blocking(move || os::set(&service, &key, &json)).await
        })
    }

    fn delete<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<(), StoreError>> {
        let service = Arc::clone(&self.service);
        let key = key.clone();
        Box::pin(blocking(move || os::delete(&service, &key)))
    }

    fn lock<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<StoreLock, StoreError>> {
        match &self.locks {
            Locks::Local(locks) => Box::pin(locks.lock(key, self.timeout)),
            Locks::Files(files) => Box::pin(files.lock_key(key)),
        }
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Keyring
    }

    fn location(&self) -> String {
        format!("OS keyring (service {:?})", self.service)
    }
}
