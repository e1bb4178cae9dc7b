//! [`FileStore`]: every server's credentials in one JSON file.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::json_problem;
use super::file_lock::FileLocks;
use super::fs_private::{
    check_data_dir, check_private_file, create_private_dir, is_not_found, open_credential_file,
    open_error, parent_dir, private_file_options, sync_dir,
};
use super::{
    BoxFuture, CredentialStore, DEFAULT_LOCK_TIMEOUT, StoreError, StoreKey, StoreKind, StoreLock,
    StoredCredentials, blocking,
};

/// The document format this version reads and writes.
const FORMAT_VERSION: u64 = 1;

/// Stores every server's credentials in one JSON file.
///
/// The file (mode 0600; a missing directory is created 0700) holds
/// `{"version": 1, "credentials": {"<store key>": {record}, …}}`. Every save and delete is
/// a read-modify-write under the document lock (an `flock` on a separate lock file, waited
/// for at most the lock timeout, [`DEFAULT_LOCK_TIMEOUT`] by default), written to a
/// temporary 0600 file in the same directory, synced and renamed over the old file, so
/// readers (which take no lock) see the old or the new document, never a mix.
///
/// Safety of other entries: records of other keys are carried over verbatim (even ones
/// this version cannot read), and a file that is not a credential document is reported as
/// [`StoreError::Corrupt`] and never overwritten. An empty file counts as an empty store.
///
/// Safety of the file itself (Unix, as ssh checks `~/.ssh`): the file, the lock directory
/// and the lock files are never followed through a symbolic link and must belong to the
/// current user; the file must not be open to other users (mode & 077). Anything else is
/// refused with [`StoreError::Insecure`], which names the path and what to do (e.g.
/// `chmod 600`), and nothing is changed. The directory holding the file belongs to the
/// host: it must be owned by the current user or root, and one writable by other users gets
/// a warning.
///
/// Key locks ([`CredentialStore::lock`]) live beside the data file in
/// `<file name>.locks/` and work across processes; they are separate from the document
/// lock, so holding one never blocks `save`.
///
/// ```
/// use mcp_auth::{CredentialStore, FileStore, StoreKey, StoredCredentials};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
/// let dir = tempfile::tempdir()?;
/// let store = FileStore::new(dir.path().join("credentials.json"));
/// let key = StoreKey::new(&"tickets".parse()?, "https://tickets.example/mcp");
/// let _refresh = store.lock(&key).await?; // e.g. while refreshing
/// store.save(&key, &StoredCredentials::new("client-1")).await?;
/// assert_eq!(store.load(&key).await?.map(|c| c.client_id), Some("client-1".into()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    locks: FileLocks,
    dir_checked: AtomicBool,
    refusal_reported: AtomicBool,
}

impl FileStore {
    /// A store kept in the file at `path` (created on the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let locks = FileLocks::for_data_file(&path, DEFAULT_LOCK_TIMEOUT);
        Self {
            inner: Arc::new(Inner {
                path,
                locks,
                dir_checked: AtomicBool::new(false),
                refusal_reported: AtomicBool::new(false),
            }),
        }
    }

    /// Sets how long saves, deletes and key locks wait for a lock (default
    /// [`DEFAULT_LOCK_TIMEOUT`]).
    #[must_use]
    pub fn with_lock_timeout(self, timeout: Duration) -> Self {
        let inner = Inner {
            path: self.inner.path.clone(),
            locks: self.inner.locks.clone().with_timeout(timeout),
            dir_checked: AtomicBool::new(self.inner.dir_checked.load(Ordering::Relaxed)),
            refusal_reported: AtomicBool::new(self.inner.refusal_reported.load(Ordering::Relaxed)),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The data file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The directory holding the lock files.
    pub fn lock_dir(&self) -> &Path {
        self.inner.locks.dir()
    }

    /// Passes `result` on; the first [`StoreError::Insecure`] of this store is also logged
    /// as a security warning, so a refusal is seen even where the error is not shown (a
    /// status that only says "unknown").
    fn report<T>(&self, result: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(err) = &result
            && err.is_insecure()
            && !self.inner.refusal_reported.swap(true, Ordering::Relaxed)
        {
            tracing::warn!(target: crate::SECURITY_LOG_TARGET, "{err}");
        }
        result
    }

    /// Read-modify-write of the document under the document lock. `change` returns false
    /// when nothing changed, and then nothing is written.
    async fn update<F>(&self, change: F) -> Result<(), StoreError>
    where
        F: FnOnce(&mut BTreeMap<String, Value>) -> Result<bool, StoreError> + Send + 'static,
    {
        let updated = async move {
            self.check_dir_once(true).await?;
            let guard = self.inner.locks.lock_document().await?;
            let inner = Arc::clone(&self.inner);
            blocking(move || {
                let path = &inner.path;
                let mut doc = read_document(path)?.unwrap_or_default();
                if change(&mut doc.credentials)? {
                    write_document(path, &doc)?;
                }
                drop(guard);
                Ok(())
            })
            .await
        };
        self.report(updated.await)
    }

    /// Checks the existing data directory (owner; a warning when others may write to it)
    /// or, with `create`, creates a missing one (0700), once per store.
    async fn check_dir_once(&self, create: bool) -> Result<(), StoreError> {
        if self.inner.dir_checked.load(Ordering::Acquire) {
            return Ok(());
        }
        let inner = Arc::clone(&self.inner);
        blocking(move || {
            let dir = parent_dir(&inner.path);
            if !check_data_dir(dir)? {
                if !create {
                    return Ok(());
                }
                create_private_dir(dir)?;
            }
            inner.dir_checked.store(true, Ordering::Release);
            Ok(())
        })
        .await
    }
}

impl CredentialStore for FileStore {
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> BoxFuture<'a, Result<Option<StoredCredentials>, StoreError>> {
        let inner = Arc::clone(&self.inner);
        let key = key.clone();
        Box::pin(async move {
            let loaded = async move {
                self.check_dir_once(false).await?;
                blocking(move || load_entry(&inner.path, &key)).await
            };
            self.report(loaded.await)
        })
    }

    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        creds: &'a StoredCredentials,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let value = serde_json::to_value(creds).map_err(|e| {
                StoreError::io("encode credentials for", &self.inner.path, e.into())
            })?;
            let key = key.as_str().to_owned();
            self.update(move |entries| {
                entries.insert(key, value);
                Ok(true)
            })
            .await
        })
    }

    fn delete<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let path = self.inner.path.clone();
            // `symlink_metadata`: a dangling symlink is refused by `update`, not ignored.
            if !blocking(move || Ok(fs::symlink_metadata(path).is_ok())).await? {
                return Ok(());
            }
            let key = key.as_str().to_owned();
            self.update(move |entries| Ok(entries.remove(&key).is_some()))
                .await
        })
    }

    fn lock<'a>(&'a self, key: &'a StoreKey) -> BoxFuture<'a, Result<StoreLock, StoreError>> {
        Box::pin(async move {
            let locked = async move {
                self.check_dir_once(true).await?;
                self.inner.locks.lock_key(key).await
            };
            self.report(locked.await)
        })
    }

    fn kind(&self) -> StoreKind {
        StoreKind::File
    }

    fn location(&self) -> String {
        self.inner.path.display().to_string()
    }
}

/// The on-disk document. Unknown top-level fields are kept as they are.
#[derive(Debug, Serialize, Deserialize)]
struct Document {
    version: u64,
    #[serde(default)]
    credentials: BTreeMap<String, Value>,
    #[serde(flatten)]
    other: BTreeMap<String, Value>,
}

impl Default for Document {
    fn default() -> Self {
        Self {
            version: FORMAT_VERSION,
            credentials: BTreeMap::new(),
            other: BTreeMap::new(),
        }
    }
}

/// The record under `key`, if any.
fn load_entry(path: &Path, key: &StoreKey) -> Result<Option<StoredCredentials>, StoreError> {
    let Some(mut doc) = read_document(path)? else {
        return Ok(None);
    };
    let Some(value) = doc.credentials.remove(key.as_str()) else {
        return Ok(None);
    };
    serde_json::from_value(value)
        .map(Some)
        .map_err(|err| StoreError::CorruptEntry {
            location: path.display().to_string(),
            key: key.to_string(),
            detail: json_problem(&err),
        })
}

/// Reads the document; `None` when the file is missing or empty. A symlink, another
/// user's file or one open to other users is refused.
fn read_document(path: &Path) -> Result<Option<Document>, StoreError> {
    let mut file = match open_credential_file(path) {
        Ok(file) => file,
        Err(err) if is_not_found(&err) => return Ok(None),
        Err(err) => {
            return Err(open_error(
                "the credential file",
                "open the credential file",
                path,
                err,
            ));
        }
    };
    check_private_file(&file, path)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| StoreError::io("read the credential file", path, e))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let corrupt = |detail: String| StoreError::Corrupt {
        path: path.to_owned(),
        detail,
    };
    let doc: Document = serde_json::from_slice(&bytes).map_err(|e| corrupt(json_problem(&e)))?;
    if doc.version != FORMAT_VERSION {
        return Err(corrupt(format!(
            "format version {} is not supported (this program writes version \
             {FORMAT_VERSION}); it may come from a newer program",
            doc.version
        )));
    }
    Ok(Some(doc))
}

/// Replaces the file atomically: a 0600 temporary file in the same directory, synced, then
/// renamed over the old one.
fn write_document(path: &Path, doc: &Document) -> Result<(), StoreError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut bytes = serde_json::to_vec_pretty(doc)
        .map_err(|e| StoreError::io("encode the credential file", path, e.into()))?;
    bytes.push(b'\n');
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = private_file_options()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut file| {
            file.write_all(&bytes)?;
            file.sync_all()
        })
        .and_then(|()| fs::rename(&tmp, path));
    if let Err(err) = written {
        let _ = fs::remove_file(&tmp);
        return Err(StoreError::io("write the credential file", path, err));
    }
    sync_dir(dir);
    Ok(())
}
