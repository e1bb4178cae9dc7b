//! [`StoreError`]: what can go wrong in a credential store.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// A credential store operation failed.
///
/// Messages name the file, keyring service or key involved and what to do; they never
/// contain a token or any text read from a stored record.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The credential file is not a readable credential document. It is left untouched.
    #[error(
        "credential file {} is corrupt ({detail}); fix it or delete it and log in again \
         (it was not modified)",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Where and how it is broken (never its content).
        detail: String,
    },
    /// One stored record could not be read as credentials; the other records are fine.
    #[error(
        "stored credentials for {key} in {location} are unreadable ({detail}); log out and \
         log in again to replace them"
    )]
    CorruptEntry {
        /// The file path or keyring service holding the record.
        location: String,
        /// The record's key text.
        key: String,
        /// How it is broken (never its content).
        detail: String,
    },
    /// A file system operation failed.
    #[error("could not {action} {}", path.display())]
    Io {
        /// What was being done, e.g. `write the credential file`.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A credential file, its lock directory or a lock file is not safe to use: a symbolic
    /// link, not owned by the current user, or open to other users. Nothing was read,
    /// written or changed; the message says what to do.
    #[error("refusing to use {what} {}: {problem}; {fix}", path.display())]
    Insecure {
        /// What the path is, e.g. `the credential file`.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What is wrong with it, e.g. `it is a symbolic link`.
        problem: String,
        /// What to do about it, e.g. ``run `chmod 600 …` ``.
        fix: String,
    },
    /// Another holder kept a lock longer than the bounded wait.
    #[error(
        "timed out after {:.1}s waiting for the credential lock {lock}; another process or \
         task is using these credentials, try again",
        waited.as_secs_f64()
    )]
    LockTimeout {
        /// The lock: a lock file path or a process-local key lock.
        lock: String,
        /// How long it waited.
        waited: Duration,
    },
    /// The OS keyring rejected an operation.
    #[error(
        "the OS keyring (service {service:?}) failed for {account}; if it keeps failing use \
         the file credential store (credentials_store = \"file\")"
    )]
    Keyring {
        /// The keyring service name.
        service: String,
        /// The keyring account (the store key text).
        account: String,
        /// What the keyring reported.
        #[source]
        source: KeyringFailure,
    },
    /// The OS keyring cannot be used on this machine.
    #[error(
        "the OS keyring is unavailable ({reason}); use the file credential store \
         (credentials_store = \"file\") or \"auto\""
    )]
    Unavailable {
        /// Why.
        reason: String,
    },
    /// The async runtime is shutting down, so blocking store work could not run.
    #[error("the credential store could not run because the runtime is shutting down")]
    ShuttingDown,
}

impl StoreError {
    /// The credential file or one record in a store is unreadable.
    pub fn is_corrupt(&self) -> bool {
        matches!(
            self,
            StoreError::Corrupt { .. } | StoreError::CorruptEntry { .. }
        )
    }

    /// A file system operation failed.
    pub fn is_io(&self) -> bool {
        matches!(self, StoreError::Io { .. })
    }

    /// A credential file, lock directory or lock file was refused as unsafe (a symlink,
    /// another user's, or open to other users); see [`StoreError::Insecure`].
    pub fn is_insecure(&self) -> bool {
        matches!(self, StoreError::Insecure { .. })
    }

    /// A lock was not acquired within the bounded wait.
    pub fn is_lock_timeout(&self) -> bool {
        matches!(self, StoreError::LockTimeout { .. })
    }

    /// The OS keyring failed.
    pub fn is_keyring(&self) -> bool {
        matches!(self, StoreError::Keyring { .. })
    }

    /// The OS keyring is unavailable on this machine.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }

    /// Trying again later may succeed (a lock was busy).
    pub fn is_retryable(&self) -> bool {
        self.is_lock_timeout()
    }

    pub(crate) fn insecure(
        what: &'static str,
        path: impl Into<PathBuf>,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> Self {
        StoreError::Insecure {
            what,
            path: path.into(),
            problem: problem.into(),
            fix: fix.into(),
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        StoreError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// What the OS keyring reported, reduced to text that cannot contain a stored value (the
/// keyring crate's own errors may carry the bytes of an undecodable entry).
#[derive(Debug)]
pub struct KeyringFailure(String);

impl KeyringFailure {
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }
}

impl fmt::Display for KeyringFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyringFailure {}

/// Describes a `serde_json` error by category and position only: its message may quote the
/// offending value, which could be a token.
pub(crate) fn json_problem(err: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match err.classify() {
        Category::Io => "read error",
        Category::Syntax => "invalid JSON",
        Category::Data => "unexpected structure",
        Category::Eof => "truncated JSON",
    };
    if err.line() == 0 {
        what.to_owned()
    } else {
        format!("{what} at line {} column {}", err.line(), err.column())
    }
}
