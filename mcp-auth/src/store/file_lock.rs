//! Cross-process locks: `flock` on lock files, polled with a bounded wait.
//!
//! The locks of a data file `dir/credentials.json` live in `dir/credentials.json.locks/`
//! (0700): `document.lock` guards read-modify-write of the data file, and
//! `<16 hex digits>.lock` (a hash of the store key) guards one key's refresh. Keeping them
//! apart means a task holding a key lock can still save. `flock` locks belong to one open
//! file description, so two holders in one process exclude each other too; the kernel
//! releases them when a process dies, so a lock file left behind is never stale. Lock
//! files are never deleted (deleting one while held would let a second holder in).
//!
//! Neither the lock directory nor a lock file is ever followed through a symbolic link,
//! and both must belong to the current user (see `fs_private`): a planted link is refused
//! instead of creating a file wherever it points. Lock files are opened with `openat`
//! relative to the checked directory handle, so the check cannot be raced.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_key::Fingerprint;
use tokio::time::Instant;

use super::fs_private::LockDir;
use super::{StoreError, StoreKey, StoreLock, blocking};

/// First pause between lock attempts; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(2);
const MAX_PAUSE: Duration = Duration::from_millis(50);

/// Name of the lock that guards the data file itself.
const DOCUMENT_LOCK: &str = "document.lock";

/// A held `flock` (released on drop).
#[cfg(unix)]
pub(crate) type FileGuard = nix::fcntl::Flock<File>;
/// Without `flock`, an open lock file only (no cross-process exclusion).
#[cfg(not(unix))]
pub(crate) type FileGuard = File;

/// The lock directory of one data file.
#[derive(Debug, Clone)]
pub(crate) struct FileLocks {
    dir: PathBuf,
    timeout: Duration,
}

impl FileLocks {
    /// Locks for the data file at `data_file`.
    pub(crate) fn for_data_file(data_file: &Path, timeout: Duration) -> Self {
        let mut name = data_file
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_else(|| "credentials".into());
        name.push(".locks");
        Self {
            dir: super::fs_private::parent_dir(data_file).join(name),
            timeout,
        }
    }

    /// Locks in `dir`.
    pub(crate) fn in_dir(dir: PathBuf, timeout: Duration) -> Self {
        Self { dir, timeout }
    }

    pub(crate) fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lock serializing read-modify-write of the data file.
    pub(crate) async fn lock_document(&self) -> Result<FileGuard, StoreError> {
        let path = self.dir.join(DOCUMENT_LOCK);
        let description = path.display().to_string();
        acquire(path, description, self.timeout).await
    }

    /// The lock serializing one key's refresh.
    pub(crate) async fn lock_key(&self, key: &StoreKey) -> Result<StoreLock, StoreError> {
        let name = Fingerprint::builder("mcp-auth/key-lock")
            .str("key", key.as_str())
            .finish();
        let path = self.dir.join(format!("{name}.lock"));
        let description = format!("for {key} ({})", path.display());
        let guard = acquire(path, description.clone(), self.timeout).await?;
        Ok(StoreLock::new(guard, description))
    }
}

/// Takes an exclusive `flock` on `path` (created 0600, in a 0700 directory), trying again
/// with growing pauses until `timeout` has passed. `description` names the lock in errors.
/// A symlinked, foreign or loose lock directory or lock file is refused.
pub(crate) async fn acquire(
    path: PathBuf,
    description: String,
    timeout: Duration,
) -> Result<FileGuard, StoreError> {
    let deadline = Instant::now() + timeout;
    let dir = super::fs_private::parent_dir(&path).to_owned();
    let name = path.file_name().map(OsStr::to_owned).unwrap_or_default();
    let dir = Arc::new(blocking(move || LockDir::open(&dir)).await?);
    let mut pause = FIRST_PAUSE;
    loop {
        let (attempt_dir, attempt_name) = (Arc::clone(&dir), name.clone());
        if let Some(guard) = blocking(move || try_lock(&attempt_dir, &attempt_name)).await? {
            return Ok(guard);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(StoreError::LockTimeout {
                lock: description,
                waited: timeout,
            });
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

fn try_lock(dir: &LockDir, name: &OsStr) -> Result<Option<FileGuard>, StoreError> {
    let file = dir.open_file(name)?;
    lock_nonblocking(file).map_err(|e| StoreError::io("lock", dir.path().join(name), e))
}

#[cfg(unix)]
fn lock_nonblocking(file: File) -> io::Result<Option<FileGuard>> {
    use nix::errno::Errno;
    use nix::fcntl::{Flock, FlockArg};
    match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(guard) => Ok(Some(guard)),
        Err((_, errno)) if errno == Errno::EWOULDBLOCK || errno == Errno::EINTR => Ok(None),
        Err((_, errno)) => Err(errno.into()),
    }
}

#[cfg(not(unix))]
fn lock_nonblocking(file: File) -> io::Result<Option<FileGuard>> {
    Ok(Some(file))
}
