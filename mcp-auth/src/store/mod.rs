//! Credential stores: where OAuth tokens live between runs, and the secrets a host keeps
//! for configuration entries ([`StoredSecret`], a record kind of its own).
//!
//! [`CredentialStore`] is the object-safe extension point (taken as
//! `Arc<dyn CredentialStore>`). Implementations shipped here:
//!
//! - [`MemoryStore`]: a map in memory, for tests and hosts that keep secrets elsewhere.
//! - [`FileStore`]: one JSON document (mode 0600 in a 0700 directory), every
//!   read-modify-write under a cross-process `flock` with a bounded wait, replaced
//!   atomically; a corrupt file is reported and never overwritten; a symlinked, foreign or
//!   loose file, lock directory or lock file is refused ([`StoreError::Insecure`]).
//! - [`KeyringStore`]: the OS keyring (kernel keyutils on Linux, Keychain on macOS,
//!   Credential Manager on Windows), one entry per [`StoreKey`]. Needs the default
//!   feature `keyring`; without it the store reports [`StoreError::Unavailable`].
//! - [`AutoStore`]: the keyring when it works, else the file, chosen once and pinned.
//!
//! # Locks
//!
//! [`CredentialStore::lock`] serializes a read-refresh-persist cycle for one key. It never
//! blocks [`CredentialStore::load`], [`CredentialStore::save`] or
//! [`CredentialStore::delete`]: those take their own short-lived lock (the file store's
//! document lock) or none, so a task holding a key lock may call them freely without
//! deadlocking. Two holders of a key lock exclude each other even inside one process.

mod auto;
mod dpop_key;
mod error;
mod file;
mod file_lock;
mod fs_private;
mod key;
mod keyring;
#[cfg(not(feature = "keyring"))]
#[path = "keyring_none.rs"]
mod keyring_os;
#[cfg(feature = "keyring")]
mod keyring_os;
#[cfg(all(feature = "keyring", target_os = "linux"))]
mod keyutils;
mod lock;
mod memory;
mod open;
mod record;
mod secret;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

pub use auto::AutoStore;
pub use dpop_key::{DPOP_ALGORITHM, DpopKey, is_nonce_challenge};
pub use error::{KeyringFailure, StoreError};
pub use file::FileStore;
pub use key::StoreKey;
pub use keyring::KeyringStore;
pub use lock::StoreLock;
pub use memory::MemoryStore;
pub use open::{DEFAULT_FILE_NAME, DEFAULT_SERVICE, open_store, open_store_for_service};
pub use record::StoredCredentials;
pub use secret::{LEGACY_SECRET_CLIENT_ID, StoredSecret};

/// A boxed, `Send` future: what [`CredentialStore`] methods return, so the trait stays
/// object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How long lock acquisition waits before failing with [`StoreError::LockTimeout`].
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(5);

/// Where OAuth credentials are kept, keyed by [`StoreKey`].
///
/// Implementations must be cheap to share (`Arc<dyn CredentialStore>`) and do blocking work
/// (files, keyring calls) off the async threads. Hosts may implement it to keep secrets in
/// their own vault; [`StoreLock::new`] wraps whatever guard such a store uses.
///
/// ```
/// use std::sync::Arc;
/// use mcp_auth::{CredentialStore, MemoryStore, StoreKey, StoredCredentials};
/// use mcp_key::{McpServerKey, Secret};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let store: Arc<dyn CredentialStore> = Arc::new(MemoryStore::new());
/// let key = StoreKey::new(&"tickets".parse::<McpServerKey>()?, "https://tickets.example/mcp");
/// let creds = StoredCredentials::new("client-1").with_access_token(Secret::new("at-1"));
/// store.save(&key, &creds).await?;
/// assert_eq!(store.load(&key).await?, Some(creds));
/// store.delete(&key).await?;
/// assert_eq!(store.load(&key).await?, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait CredentialStore: Send + Sync + fmt::Debug {
    /// The record stored under `key`, or `None` when there is none.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only reads.
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> BoxFuture<'a, Result<Option<StoredCredentials>, StoreError>>;

    /// Stores `creds` under `key`, replacing any previous record; other keys are untouched.
    ///
    /// # Cancel safety
    /// Dropping the future after it started writing may or may not leave the new record
    /// stored, but never a partial or mixed record.
    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        creds: &'a StoredCredentials,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Removes the record under `key`. Removing a missing record succeeds.
    ///
    /// # Cancel safety
    /// Like [`CredentialStore::save`].
    fn delete<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Takes the lock that serializes read-refresh-persist for `key` (across processes for
    /// the file store and stores built with a lock directory, else within this process),
    /// waiting at most the store's lock timeout. Held until the [`StoreLock`] drops.
    ///
    /// # Cancel safety
    /// Cancel-safe: a dropped future holds no lock.
    fn lock<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<StoreLock, StoreError>>;

    /// Which kind of store this is (for an [`AutoStore`], the one it pinned).
    fn kind(&self) -> StoreKind;

    /// Where the records live, for status output: a file path or a keyring service name.
    /// Never contains a secret.
    fn location(&self) -> String {
        self.kind().to_string()
    }
}

/// The kind of a [`CredentialStore`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum StoreKind {
    /// The OS keyring.
    Keyring,
    /// A JSON file.
    File,
    /// Process memory.
    Memory,
    /// A store supplied by the host.
    Custom,
}

impl StoreKind {
    /// Lowercase name: `keyring`, `file`, `memory` or `custom`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Keyring => "keyring",
            StoreKind::File => "file",
            StoreKind::Memory => "memory",
            StoreKind::Custom => "custom",
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Runs blocking store work on tokio's blocking pool, logging to the caller's tracing
/// subscriber; a panic there is re-raised here.
async fn blocking<T, F>(f: F) -> Result<T, StoreError>
where
    F: FnOnce() -> Result<T, StoreError> + Send + 'static,
    T: Send + 'static,
{
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    let task = move || tracing::dispatcher::with_default(&dispatch, f);
    match tokio::task::spawn_blocking(task).await {
        Ok(result) => result,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(_) => Err(StoreError::ShuttingDown),
    }
}
