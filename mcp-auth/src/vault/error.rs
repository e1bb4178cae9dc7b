//! [`VaultError`]: what can go wrong in the gateway's credential store.

use std::path::PathBuf;

/// A [`CredentialVault`](crate::CredentialVault) operation failed.
///
/// Messages name the store (a file path, or a PostgreSQL URL without its password), the
/// caller and server of the row, and what to do. They never contain a token, key material
/// or a decrypted record.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VaultError {
    /// The store cannot be reached: PostgreSQL is down or refuses connections, the SQLite
    /// file cannot be opened, the pool timed out. Servers that use the gateway's own
    /// credentials are not affected; a later attempt may succeed.
    #[error(
        "the gateway's credential store {location} is unreachable ({doing}); check that the \
         database is running and reachable, then retry"
    )]
    Unreachable {
        /// The store (file path, or URL without password).
        location: String,
        /// What was being done, e.g. `reading credentials`.
        doing: &'static str,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The database answered with an error other than a lost connection (a constraint,
    /// a missing table, permissions).
    #[error("the gateway's credential store {location} failed while {doing}")]
    Database {
        /// The store.
        location: String,
        /// What was being done.
        doing: &'static str,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// The store's schema could not be brought up to date at open.
    #[error(
        "the gateway's credential store {location} could not be migrated; the database may \
         belong to a newer version of the gateway"
    )]
    Migrate {
        /// The store.
        location: String,
        /// The migration error.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    /// The SQLite file (or its folder) could not be created or inspected.
    #[error("could not {action} {}", path.display())]
    Io {
        /// What was being done, e.g. `create the credential database`.
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The SQLite file is not safe to use (a symbolic link, not a file, or open to other
    /// users). Nothing was read or changed.
    #[error("refusing to use the credential database {}: {problem}; {fix}", path.display())]
    Insecure {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
        /// What to do.
        fix: &'static str,
    },
    /// A row was sealed under a key id the gateway does not have: add that key (as a
    /// previous key) to decrypt it, or sign the caller in again.
    #[error(
        "credentials of caller `{caller}` for `{server}` are sealed with key `{key_id}`, which \
         the gateway does not have; add key `{key_id}` to the gateway's previous keys, or \
         have the caller sign in again"
    )]
    UnknownKey {
        /// The caller of the row.
        caller: String,
        /// The server of the row (`name` or `name@environment`).
        server: String,
        /// The row's key id.
        key_id: String,
    },
    /// A row did not decrypt with the key its key id names: the key under that id is not
    /// the one that sealed it, or the row was altered or moved from another (caller,
    /// server, environment).
    #[error(
        "credentials of caller `{caller}` for `{server}` do not decrypt with key `{key_id}`: \
         the key under that id is not the one that sealed them, or the row was altered or \
         copied from another caller or server; check the gateway's keys, or have the caller \
         sign in again"
    )]
    Decrypt {
        /// The caller of the row.
        caller: String,
        /// The server of the row.
        server: String,
        /// The row's key id.
        key_id: String,
    },
    /// A row decrypted (or was read) but is not a usable record: a nonce of the wrong
    /// length, a record that is not credentials, a server name that is not valid.
    #[error(
        "credentials of caller `{caller}` for `{server}` are corrupt ({detail}); have the \
         caller sign out of that server and sign in again"
    )]
    Corrupt {
        /// The caller of the row.
        caller: String,
        /// The server of the row.
        server: String,
        /// How it is broken (never its content).
        detail: String,
    },
    /// An argument is not usable: an empty or too long caller, an invalid key id, a key
    /// of the wrong length, two keys with one id.
    #[error("credential store: {detail}")]
    Invalid {
        /// What is wrong and how to fix it.
        detail: String,
    },
    /// The operating system's random number generator failed (no nonce, no key).
    #[error("credential store: the system random number generator failed")]
    Random,
}

impl VaultError {
    /// The store could not be reached (database down, connection refused or lost, pool
    /// timeout): calls that need a caller's credentials fail, the rest go on.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Self::Unreachable { .. })
    }

    /// A row cannot be decrypted with the gateway's keys: its key id is unknown, or the
    /// key under that id does not open it (wrong key, or a row altered or moved).
    pub fn is_wrong_key(&self) -> bool {
        matches!(self, Self::UnknownKey { .. } | Self::Decrypt { .. })
    }

    /// A row is unreadable for another reason than the key (bad nonce, not a record).
    pub fn is_corrupt(&self) -> bool {
        matches!(self, Self::Corrupt { .. })
    }

    /// A later attempt may succeed without anyone changing anything (the store was
    /// unreachable).
    pub fn is_retryable(&self) -> bool {
        self.is_unreachable()
    }
}
