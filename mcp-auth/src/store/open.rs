//! [`open_store`]: the store a configuration asks for.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::{AutoStore, CredentialStore, FileStore, KeyringStore};

/// Keyring service name used by [`open_store`].
pub const DEFAULT_SERVICE: &str = "mcp-auth";

/// File name of the credential file inside the data directory, used by [`open_store`].
pub const DEFAULT_FILE_NAME: &str = "credentials.json";

/// Which credential store to use (the configuration's `credentials_store`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreMode {
    /// The OS keyring when available, else the file ([`AutoStore`]). The default.
    #[default]
    Auto,
    /// The OS keyring only ([`KeyringStore`]).
    Keyring,
    /// The file only ([`FileStore`]).
    File,
}

impl StoreMode {
    /// The configuration text: `auto`, `keyring` or `file`.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreMode::Auto => "auto",
            StoreMode::Keyring => "keyring",
            StoreMode::File => "file",
        }
    }

    /// Parses the configuration text (exact, lowercase).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(StoreMode::Auto),
            "keyring" => Some(StoreMode::Keyring),
            "file" => Some(StoreMode::File),
            _ => None,
        }
    }
}

impl fmt::Display for StoreMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Opens the store for `mode` with the keyring service [`DEFAULT_SERVICE`] and the file
/// `data_dir/`[`DEFAULT_FILE_NAME`]. See [`open_store_for_service`].
pub fn open_store(mode: StoreMode, data_dir: &Path) -> Arc<dyn CredentialStore> {
    open_store_for_service(mode, data_dir, DEFAULT_SERVICE)
}

/// Opens the store for `mode`: `auto` probes the keyring now (see [`AutoStore`]); every
/// mode takes key locks as files beside `data_dir/`[`DEFAULT_FILE_NAME`], so refreshes
/// are serialized across processes. Nothing is created on disk until first needed.
pub fn open_store_for_service(
    mode: StoreMode,
    data_dir: &Path,
    service: &str,
) -> Arc<dyn CredentialStore> {
    let path = data_dir.join(DEFAULT_FILE_NAME);
    match mode {
        StoreMode::Auto => Arc::new(AutoStore::new(service, path)),
        StoreMode::Keyring => {
            let lock_dir = FileStore::new(&path).lock_dir().to_owned();
            Arc::new(KeyringStore::new(service).with_lock_dir(lock_dir))
        }
        StoreMode::File => Arc::new(FileStore::new(path)),
    }
}
