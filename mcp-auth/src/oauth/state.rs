//! The state one server's credentials share, at the bottom of `oauth/`: who the server is,
//! its settings, where its record lives in the store, the refresh gate and the step-up
//! counter. The flows (login, machine, workload) take a [`CredentialState`]; the facade
//! [`OAuthCredentials`](super::OAuthCredentials) wraps one and calls them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mcp_key::McpServerKey;
use rmcp::transport::auth::AuthorizationMetadata;

use super::settings::{MAX_STEP_UP_ATTEMPTS, OAuthSettings};
use crate::error::AuthError;
use crate::store::{CredentialStore, StoreError, StoreKey, StoredCredentials};

/// One server's credential state, shared by the clones of its
/// [`OAuthCredentials`](super::OAuthCredentials) and by its logins in progress.
pub(super) struct CredentialState {
    server: McpServerKey,
    url: String,
    key: StoreKey,
    settings: OAuthSettings,
    store: Arc<dyn CredentialStore>,
    /// Held while one refresh runs in this process (single-flight).
    pub(super) refresh_gate: tokio::sync::Mutex<()>,
    step_ups: AtomicU32,
}

impl CredentialState {
    /// The state of `server` at `url`, kept in `store` under `key`.
    pub(super) fn new(
        server: McpServerKey,
        url: String,
        key: StoreKey,
        settings: OAuthSettings,
        store: Arc<dyn CredentialStore>,
    ) -> Self {
        Self {
            server,
            url,
            key,
            settings,
            store,
            refresh_gate: tokio::sync::Mutex::new(()),
            step_ups: AtomicU32::new(0),
        }
    }

    /// The server.
    pub(super) fn server(&self) -> &McpServerKey {
        &self.server
    }

    /// The MCP server URL.
    pub(super) fn url(&self) -> &str {
        &self.url
    }

    /// Where the record lives in the store.
    pub(super) fn store_key(&self) -> &StoreKey {
        &self.key
    }

    /// The settings.
    pub(super) fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// The store the record lives in.
    pub(super) fn store(&self) -> &dyn CredentialStore {
        self.store.as_ref()
    }

    /// A store failure, naming the server.
    pub(super) fn store_error(&self, source: StoreError) -> AuthError {
        AuthError::Store {
            server: self.server.clone(),
            source: Box::new(source),
        }
    }

    /// The stored record, if any.
    pub(super) async fn load_record(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.store
            .load(&self.key)
            .await
            .map_err(|e| self.store_error(e))
    }

    /// Saves `record` from a login begun at `begun_at_ms`, unless a logout with a marker
    /// ([`OAuthCredentials::logout_everywhere`](super::OAuthCredentials::logout_everywhere))
    /// happened since the login began, in this process or another: then nothing is stored.
    pub(super) async fn persist_login(
        &self,
        record: &StoredCredentials,
        begun_at_ms: u64,
    ) -> Result<(), AuthError> {
        let marker = self
            .store
            .load(&self.key.logout_marker())
            .await
            .map_err(|e| self.store_error(e))?;
        if let Some(at) = marker.and_then(|m| m.logged_out_at_ms)
            && at >= begun_at_ms
        {
            return Err(AuthError::Callback {
                server: self.server.clone(),
                detail: "a logout happened while this login was waiting for the browser, so \
                         nothing was stored; log in again"
                    .to_owned(),
                code: None,
            });
        }
        self.persist(record).await
    }

    /// Saves `record` (used after a grant; the caller uses the token only after this).
    pub(super) async fn persist(&self, record: &StoredCredentials) -> Result<(), AuthError> {
        self.store
            .save(&self.key, record)
            .await
            .map_err(|e| self.store_error(e))
    }

    /// The resource (RFC 8707) tokens are asked for: the configured one, else the URL.
    pub(super) fn resource(&self) -> String {
        self.settings
            .resource
            .clone()
            .unwrap_or_else(|| self.url.clone())
    }

    /// A client registered in an earlier login at the same issuer, reused instead of
    /// registering again.
    pub(super) async fn reusable_client(
        &self,
        metadata: &AuthorizationMetadata,
    ) -> Option<StoredCredentials> {
        let record = self.load_record().await.ok()??;
        (record.issuer.is_some() && record.issuer == metadata.issuer).then_some(record)
    }

    /// Counts one step-up attempt; false once [`MAX_STEP_UP_ATTEMPTS`] are used.
    pub(super) fn take_step_up_attempt(&self) -> bool {
        self.step_ups
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_STEP_UP_ATTEMPTS).then_some(n + 1)
            })
            .is_ok()
    }

    /// Forgets past step-up attempts.
    pub(super) fn reset_step_up(&self) {
        self.step_ups.store(0, Ordering::SeqCst);
    }
}
