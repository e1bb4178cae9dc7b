//! Credentials for MCP servers: credential stores and an OAuth 2.1 client.
//!
//! Work in progress: see the auth issue. Module owners: `store` (credential stores),
//! `oauth` (discovery, registration, login, refresh, status).

mod oauth;
mod store;

pub use store::{
    AutoStore, BoxFuture, CredentialStore, DEFAULT_FILE_NAME, DEFAULT_LOCK_TIMEOUT,
    DEFAULT_SERVICE, FileStore, KeyringFailure, KeyringStore, MemoryStore, StoreError, StoreKey,
    StoreKind, StoreLock, StoreMode, StoredCredentials, open_store, open_store_for_service,
};
