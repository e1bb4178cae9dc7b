//! [`open_store`]: the store a configuration asks for.

use std::path::Path;
use std::sync::Arc;

use mcp_catalog::CredentialsStore;

use super::{AutoStore, CredentialStore, FileStore, KeyringStore};

/// Keyring service name used by [`open_store`].
pub const DEFAULT_SERVICE: &str = "mcp-auth";

/// File name of the credential file inside the data directory, used by [`open_store`].
pub const DEFAULT_FILE_NAME: &str = "credentials.json";

/// Opens the store for `mode` with the keyring service [`DEFAULT_SERVICE`] and the file
/// `data_dir/`[`DEFAULT_FILE_NAME`]. See [`open_store_for_service`].
pub fn open_store(mode: CredentialsStore, data_dir: &Path) -> Arc<dyn CredentialStore> {
    open_store_for_service(mode, data_dir, DEFAULT_SERVICE)
}

/// Opens the store for `mode` (the configuration's `credentials_store`): `auto` probes the keyring now (see [`AutoStore`]); every
/// mode takes key locks as files beside `data_dir/`[`DEFAULT_FILE_NAME`], so refreshes
/// are serialized across processes. Nothing is created on disk until first needed.
pub fn open_store_for_service(
    mode: CredentialsStore,
    data_dir: &Path,
    service: &str,
) -> Arc<dyn CredentialStore> {
    let path = data_dir.join(DEFAULT_FILE_NAME);
    match mode {
        CredentialsStore::Keyring => {
            let lock_dir = FileStore::new(&path).lock_dir().to_owned();
            Arc::new(KeyringStore::new(service).with_lock_dir(lock_dir))
        }
        CredentialsStore::File => Arc::new(FileStore::new(path)),
        // `Auto`, and any mode a later configuration adds: the keyring when available,
        // else the file.
        _ => Arc::new(AutoStore::new(service, path)),
    }
}
