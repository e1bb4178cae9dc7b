//! [`KeyringStore`]: one OS keyring entry per server.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use keyring::Entry;

use super::error::{KeyringFailure, json_problem};
use super::file_lock::FileLocks;
use super::lock::KeyLocks;
use super::{
    BoxFuture, CredentialStore, DEFAULT_LOCK_TIMEOUT, StoreError, StoreKey, StoreKind, StoreLock,
    StoredCredentials, blocking,
};

/// Account name used by [`KeyringStore::probe`]; never written.
const PROBE_ACCOUNT: &str = "#probe";

/// Keeps each server's credentials in the OS keyring: service = the configured service
/// name, account = the [`StoreKey`] text, value = the record as JSON.
///
/// Backends: on Linux the kernel key store (keyutils, in the user keyring: no D-Bus or
/// login session needed, shared by the user's processes, gone after a reboot; values are
/// limited by the kernel's per-user key quota, 20 000 bytes by default for non-root
/// users), the Keychain on macOS, the Credential Manager on Windows. Each call runs on
/// tokio's blocking pool.
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
        let unavailable = |err: &keyring::Error| StoreError::Unavailable {
            reason: describe(err),
        };
        let entry = new_entry(&self.service, PROBE_ACCOUNT).map_err(|e| unavailable(&e))?;
        match entry.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(err) => Err(unavailable(&err)),
        }
    }

    fn entry(service: &str, key: &StoreKey) -> Result<Entry, StoreError> {
        new_entry(service, key.as_str()).map_err(|e| failure(service, key, &e))
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
            let corrupt = |detail: String| StoreError::CorruptEntry {
                location: format!("the OS keyring (service {service:?})"),
                key: key.to_string(),
                detail,
            };
            let text = match Self::entry(&service, &key)?.get_password() {
                Ok(text) => text,
                Err(keyring::Error::NoEntry) => return Ok(None),
                Err(keyring::Error::BadEncoding(_)) => {
                    return Err(corrupt("the value is not UTF-8".to_owned()));
                }
                Err(err) => return Err(failure(&service, &key, &err)),
            };
            serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| corrupt(json_problem(&e)))
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
            blocking(move || {
                Self::entry(&service, &key)?
                    .set_password(&json)
                    .map_err(|e| failure(&service, &key, &e))
            })
            .await
        })
    }

    fn delete<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<(), StoreError>> {
        let service = Arc::clone(&self.service);
        let key = key.clone();
        Box::pin(blocking(move || {
            match Self::entry(&service, &key)?.delete_credential() {
                Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(err) => Err(failure(&service, &key, &err)),
            }
        }))
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

/// The platform's entry; on Linux the kernel key store (see `keyutils.rs`).
fn new_entry(service: &str, account: &str) -> keyring::Result<Entry> {
    #[cfg(target_os = "linux")]
    return super::keyutils::entry(service, account);
    #[cfg(not(target_os = "linux"))]
    return Entry::new(service, account);
}

fn failure(service: &str, key: &StoreKey, err: &keyring::Error) -> StoreError {
    StoreError::Keyring {
        service: service.to_owned(),
        account: key.to_string(),
        source: KeyringFailure::new(describe(err)),
    }
}

/// The keyring error as text that never includes a stored value (`BadEncoding` carries the
/// raw bytes, so its payload is dropped).
fn describe(err: &keyring::Error) -> String {
    use keyring::Error as E;
    match err {
        E::PlatformFailure(inner) => format!("platform failure: {inner}"),
        E::NoStorageAccess(inner) => format!("no access to the secure storage: {inner}"),
        E::NoEntry => "no such entry".to_owned(),
        E::BadEncoding(_) => "the stored value is not UTF-8".to_owned(),
        E::TooLong(what, limit) => format!("{what} is longer than the platform limit {limit}"),
        E::Invalid(what, why) => format!("{what} is invalid: {why}"),
        E::Ambiguous(found) => format!("{} entries match", found.len()),
        _ => "unknown keyring error".to_owned(),
    }
}
