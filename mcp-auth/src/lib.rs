//! Credentials for MCP servers: credential stores and an OAuth 2.1 client.
//!
//! Work in progress: see the auth issue. Module owners: `store` (credential stores),
//! `oauth` (discovery, registration, login, refresh, status).

mod error;
mod oauth;
mod status;
mod store;

pub use error::{AuthError, BoxError};
pub use oauth::{
    BrowserAgent, ClientCredentials, DEFAULT_CLIENT_NAME, DEFAULT_HTTP_TIMEOUT,
    DEFAULT_LOGIN_TIMEOUT, DEFAULT_REFRESH_MARGIN_SECS, EnterpriseGrant, HeadlessAgent,
    MAX_STEP_UP_ATTEMPTS, OAuthCredentials, OAuthSettings, PendingLogin, PrintUrlAgent, UserAgent,
    login,
};
pub use status::AuthStatus;

pub use store::{
    AutoStore, BoxFuture, CredentialStore, DEFAULT_FILE_NAME, DEFAULT_LOCK_TIMEOUT,
    DEFAULT_SERVICE, FileStore, KeyringFailure, KeyringStore, MemoryStore, StoreError, StoreKey,
    StoreKind, StoreLock, StoreMode, StoredCredentials, open_store, open_store_for_service,
};
