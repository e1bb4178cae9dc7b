//! Credentials for MCP servers: credential stores and an OAuth 2.1 client.
//!
//! ```
//! # #[cfg(feature = "oauth")] {
//! use std::sync::Arc;
//! use mcp_auth::{AuthStatus, MemoryStore, OAuthCredentials, OAuthSettings};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let creds = OAuthCredentials::new(
//!     "tickets".parse()?,
//!     "https://tickets.example/mcp",
//!     OAuthSettings::new(),
//!     Arc::new(MemoryStore::new()),
//! );
//! // Status comes from the store alone: nothing is contacted.
//! assert_eq!(creds.status().await, AuthStatus::LoginRequired);
//! assert!(creds.access_token().await.unwrap_err().is_login_required());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - Stores ([`CredentialStore`]): [`MemoryStore`], [`FileStore`], [`KeyringStore`],
//!   [`AutoStore`], keyed by [`StoreKey`] (server name + a hash of its URL).
//! - OAuth ([`OAuthCredentials`]): discovery (RFC 9728, RFC 8414 / OpenID, the 2025-03-26
//!   fallback), client identity (configured id, client ID metadata document, dynamic
//!   registration), authorization code + PKCE S256 through a loopback callback
//!   ([`login`], [`PendingLogin`], [`UserAgent`]), refresh (single flight, store lock,
//!   adoption, `invalid_grant` -> re-login), step-up on `insufficient_scope`, the
//!   client-credentials grant and enterprise-managed authorization (ID-JAG). Built on rmcp's
//!   `auth` module; this crate adds storage, policy and the login flow.
//! - [`AuthStatus`]: what a host shows per server, without starting it.
//! - [`may_carry_credentials`]: the one rule of where credentials may go (`https://`, or
//!   `http://` to loopback), for every host and transport.
//!
//! # Features
//!
//! - `keyring` (default): [`KeyringStore`] on the OS keyring (kernel keyutils on Linux,
//!   Keychain on macOS, Credential Manager on Windows). A host that keeps secrets in its
//!   own [`CredentialStore`] or in files can drop it (`default-features = false`): the
//!   `keyring` and `linux-keyutils` crates are then not compiled, [`KeyringStore`] reports
//!   [`StoreError::Unavailable`], and [`AutoStore`] (`credentials_store = "auto"`) pins the
//!   file.
//! - `oauth` (default): the OAuth client ([`OAuthCredentials`], [`login`], [`EnterpriseIdp`]
//!   and the rest of the list above). It brings rmcp's `auth` module, `oauth2`, reqwest
//!   (rustls) and axum (the loopback callback server). Without it the crate is the
//!   credential stores, [`AuthError`] and [`AuthStatus`]: what a host needs to read, list or
//!   delete what another process stored, or to keep its own secrets, at a fraction of the
//!   build (mcp-connections' `oauth` feature turns it on).
//! - `shared-store` (off): `CredentialVault`, a gateway's per-user upstream credentials
//!   keyed by (caller, server, environment), sealed with AES-256-GCM under the gateway's
//!   `VaultKeys` (key id per row, for rotation), in SQLite (one instance) or PostgreSQL
//!   (several), through sqlx with migrations run at open.
//!
//! No token, client secret or error text from a server ever appears in `Debug`,
//! `Display`, logs or errors of this crate (rmcp logs the one-time authorization code at
//! DEBUG under `rmcp::transport::auth`).

mod error;
#[cfg(feature = "oauth")]
mod oauth;
mod secure_target;
mod status;
mod store;
#[cfg(feature = "shared-store")]
mod vault;

pub use error::{AuthError, BoxError};
/// The JSON Web Key types of [`KeySetCache`] and [`KeySetSource`] (the `jsonwebtoken`
/// crate's), so a host needs no version of its own to match.
#[cfg(feature = "oauth")]
pub use jsonwebtoken::jwk::{Jwk, JwkSet};
#[cfg(feature = "oauth")]
pub use oauth::{
    BrowserAgent, ClientCredentials, DEFAULT_CLIENT_NAME, DEFAULT_HTTP_TIMEOUT,
    DEFAULT_LOGIN_TIMEOUT, DEFAULT_REFRESH_MARGIN_SECS, ENTERPRISE_IDP_NAME, EnterpriseGrant,
    EnterpriseIdp, HeadlessAgent, KeyProblem, KeySetCache, KeySetSource, KeySetTiming,
    MAX_STEP_UP_ATTEMPTS, OAuthCredentials, OAuthSettings, PendingLogin, PrintUrlAgent, UserAgent,
    WorkloadIdentity, WorkloadTokenSource, login,
};
#[cfg(feature = "oauth")]
pub use oauth::{
    DEFAULT_EXCHANGE_MARGIN, DEFAULT_UNKNOWN_LIFETIME, MAX_CACHED_EXCHANGES, TokenExchanger,
};
pub use secure_target::may_carry_credentials;
pub use status::AuthStatus;
#[cfg(feature = "shared-store")]
pub use vault::{
    AcceptedDrift, CredentialVault, DEFAULT_ACQUIRE_TIMEOUT, MAX_CALLER_LEN, MAX_KEY_ID_LEN,
    MAX_REFRESH_FAILURE_LEN, MIGRATIONS_TABLE, RefreshFailure, RememberedApproval, VAULT_KEY_LEN,
    VAULT_NONCE_LEN, VaultEntry, VaultError, VaultKey, VaultKeys, VaultLocation, VaultOptions,
};

/// The `tracing` target of this crate's security warnings, which a user should see even
/// when other logs are off: a credential directory writable by other users, a credential
/// file, lock directory or lock file refused as unsafe, the fallback from the OS keyring
/// to a file, and a 2025-03-26 authorization server accepted with a differing issuer.
///
/// A CLI can keep them on with a filter like `off,mcp_auth::security=warn`:
///
/// ```
/// assert_eq!(mcp_auth::SECURITY_LOG_TARGET, "mcp_auth::security");
/// ```
pub const SECURITY_LOG_TARGET: &str = "mcp_auth::security";

pub use store::{
    AutoStore, BoxFuture, CredentialStore, DEFAULT_FILE_NAME, DEFAULT_LOCK_TIMEOUT,
    DEFAULT_SERVICE, DPOP_ALGORITHM, DpopKey, FileStore, KeyringFailure, KeyringStore,
    LEGACY_SECRET_CLIENT_ID, MemoryStore, StoreError, StoreKey, StoreKind, StoreLock,
    StoredCredentials, StoredSecret, is_nonce_challenge, open_store, open_store_for_service,
};

// The README's example, compiled and run as a doc test (not part of the rendered docs).
#[cfg(all(doctest, feature = "oauth"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctest;
