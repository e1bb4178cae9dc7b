//! [`AutoStore`]: the OS keyring when it works, else a file; chosen once.

use std::path::PathBuf;

use super::{
    BoxFuture, CredentialStore, FileStore, KeyringStore, StoreError, StoreKey, StoreKind,
    StoreLock, StoredCredentials,
};

/// The default store: the OS keyring if it answers, else a [`FileStore`], with one warning.
///
/// The keyring is probed once, when the store is built ([`KeyringStore::probe`], which
/// blocks briefly), and the choice is pinned for the store's lifetime: it never switches
/// stores mid-session, even if the keyring later fails. Key locks are file locks beside
/// the file in both cases, so refreshes are serialized across processes whichever store
/// was chosen. [`CredentialStore::delete`] removes the record from the keyring and the
/// file when the keyring was chosen (a record may be left in the file from a session that
/// had no keyring).
///
/// ```
/// use mcp_auth::{AutoStore, CredentialStore, StoreError, StoreKind};
///
/// let dir = tempfile::tempdir()?;
/// // A host that knows the keyring is unusable (or a test) can decide the probe itself.
/// let store = AutoStore::with_probe("my-host", dir.path().join("credentials.json"), |_| {
///     Err(StoreError::Unavailable { reason: "no keyring in this sandbox".into() })
/// });
/// assert_eq!(store.kind(), StoreKind::File);
/// assert!(store.fallback_reason().is_some());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct AutoStore {
    keyring: KeyringStore,
    file: FileStore,
    /// Why the file was chosen; `None` when the keyring is pinned.
    fallback: Option<String>,
}

impl AutoStore {
    /// Probes the keyring of `service` and pins it, or the file at `file_path` when the
    /// keyring is unavailable.
    pub fn new(service: impl Into<String>, file_path: impl Into<PathBuf>) -> Self {
        Self::with_probe(service, file_path, KeyringStore::probe)
    }

    /// Like [`AutoStore::new`] with a caller-supplied probe: the keyring is pinned when
    /// `probe` returns `Ok`, the file otherwise.
    pub fn with_probe<F>(
        service: impl Into<String>,
        file_path: impl Into<PathBuf>,
        probe: F,
    ) -> Self
    where
        F: FnOnce(&KeyringStore) -> Result<(), StoreError>,
    {
        let file = FileStore::new(file_path);
        let keyring = KeyringStore::new(service).with_lock_dir(file.lock_dir());
        let fallback = match probe(&keyring) {
            Ok(()) => None,
            Err(err) => {
                tracing::warn!(
                    target: crate::SECURITY_LOG_TARGET,
                    "storing credentials in the file {} instead of the OS keyring: {err}",
                    file.path().display()
                );
                Some(err.to_string())
            }
        };
        Self {
            keyring,
            file,
            fallback,
        }
    }

    /// Why the keyring was not used, or `None` when it is.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    fn pinned(&self) -> &dyn CredentialStore {
        if self.fallback.is_none() {
            &self.keyring
        } else {
            &self.file
        }
    }
}

impl CredentialStore for AutoStore {
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> BoxFuture<'a, Result<Option<StoredCredentials>, StoreError>> {
        self.pinned().load(key)
    }

    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        creds: &'a StoredCredentials,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.pinned().save(key, creds)
    }

    fn delete<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.pinned().delete(key).await?;
            if self.fallback.is_none() {
                self.file.delete(key).await?;
            }
            Ok(())
        })
    }

    fn lock<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<StoreLock, StoreError>> {
        self.pinned().lock(key)
    }

    fn kind(&self) -> StoreKind {
        self.pinned().kind()
    }

    fn location(&self) -> String {
        self.pinned().location()
    }
}
