//! [`OAuthCredentials`]: one server's OAuth tokens, refreshed on demand.

use std::sync::Arc;

use mcp_key::{McpServerKey, Secret};

use super::agent::UserAgent;
use super::http::{self as oauth_http, now_unix};
use super::login::{self, IdTokenRule, PendingLogin, ScopeChoice};
use super::machine::{self, ClientCredentials, EnterpriseGrant};
use super::settings::{DEFAULT_REFRESH_MARGIN_SECS, OAuthSettings};
use super::state::CredentialState;
use super::token::{self, RefreshOutcome};
use super::wif;
use super::workload::WorkloadIdentity;
use crate::error::AuthError;
use crate::status::AuthStatus;
use crate::store::{CredentialStore, StoreKey, StoredCredentials};

/// One server's OAuth credentials. Cheap to clone (clones share the refresh gate and the
/// step-up counter).
///
/// Refresh is single-flight inside the process (a per-credential async gate) and
/// serialized across processes by [`CredentialStore::lock`]; after taking both, the store
/// is reread and a token another task or process already refreshed is adopted.
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_auth::{AuthStatus, BrowserAgent, MemoryStore, OAuthCredentials, OAuthSettings, login};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let creds = OAuthCredentials::new(
///     "tickets".parse()?,
///     "https://tickets.example/mcp",
///     OAuthSettings::new(),
///     Arc::new(MemoryStore::new()),
/// );
/// if creds.status().await != AuthStatus::OAuth {
///     // The 401's WWW-Authenticate challenge seeds discovery and scope selection.
///     let challenge = creds.probe().await?;
///     login(&creds, &BrowserAgent, challenge.as_deref()).await?;
/// }
/// let token = creds.access_token().await?; // refreshed when it expires within 30 s
/// # let _ = token;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct OAuthCredentials {
    inner: Arc<CredentialState>,
}

impl std::fmt::Debug for OAuthCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthCredentials")
            .field("server", self.inner.server())
            .field("url", &self.inner.url())
            .field("key", &self.inner.store_key().as_str())
            .field("store", &self.inner.store().kind())
            .finish_non_exhaustive()
    }
}

impl OAuthCredentials {
    /// Credentials of `server` at `url`, kept in `store` under [`StoreKey::new`].
    pub fn new(
        server: McpServerKey,
        url: impl Into<String>,
        settings: OAuthSettings,
        store: Arc<dyn CredentialStore>,
    ) -> Self {
        let url = url.into();
        let key = StoreKey::new(&server, &url);
        Self::with_key(server, url, key, settings, store)
    }

    /// Like [`OAuthCredentials::new`] with an explicit store key.
    pub(crate) fn with_key(
        server: McpServerKey,
        url: String,
        key: StoreKey,
        settings: OAuthSettings,
        store: Arc<dyn CredentialStore>,
    ) -> Self {
        Self {
            inner: Arc::new(CredentialState::new(server, url, key, settings, store)),
        }
    }

    /// The server.
    pub fn server(&self) -> &McpServerKey {
        self.inner.server()
    }

    /// The MCP server URL.
    pub fn url(&self) -> &str {
        self.inner.url()
    }

    /// Where the record lives in the store.
    pub fn store_key(&self) -> &StoreKey {
        self.inner.store_key()
    }

    /// The settings.
    pub fn settings(&self) -> &OAuthSettings {
        self.inner.settings()
    }

    /// The stored record, if any.
    pub(crate) async fn load_record(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.inner.load_record().await
    }

    /// A usable access token, refreshed first when it expires within 30 s.
    ///
    /// `Err(LoginRequired)` when nothing is stored, `Err(ReloginRequired)` when the stored
    /// tokens cannot be used or refreshed (`invalid_grant` is remembered, so no request is
    /// repeated until a new login).
    ///
    /// # Cancel safety
    /// Cancel-safe: a refresh interrupted before it persisted leaves the old record.
    pub async fn access_token(&self) -> Result<Secret, AuthError> {
        let Some(record) = self.load_record().await? else {
            if self.inner.settings().workload.is_some() {
                return self.refresh(None).await;
            }
            return Err(AuthError::LoginRequired {
                server: self.inner.server().clone(),
            });
        };
        if let Some(at) = &record.access_token
            && !record.expires_within(DEFAULT_REFRESH_MARGIN_SECS, now_unix())
        {
            return Ok(at.clone());
        }
        self.refresh(record.access_token.as_ref()).await
    }

    /// After a 401 with the token `rejected`: refresh once (unless another task or process
    /// already replaced that token, which is then returned) or `Err(ReloginRequired)`.
    ///
    /// # Cancel safety
    /// Cancel-safe: a refresh interrupted before it persisted leaves the old record (a
    /// rotated refresh token the server already issued may then be lost, and the next use
    /// asks for a new login).
    pub async fn refresh_after_unauthorized(&self, rejected: &Secret) -> Result<Secret, AuthError> {
        self.refresh(Some(rejected)).await
    }

    /// Refreshes unless the stored token is no longer `seen` (the expiring or rejected
    /// token the caller holds): then another task or process refreshed while we waited for
    /// the gate and the lock, and its token is adopted if it has not expired.
    async fn refresh(&self, seen: Option<&Secret>) -> Result<Secret, AuthError> {
        let server = self.inner.server();
        let _gate = self.inner.refresh_gate.lock().await;
        let _lock = self
            .inner
            .store()
            .lock(self.inner.store_key())
            .await
            .map_err(|e| self.inner.store_error(e))?;
        let record = self.load_record().await?;
        if let Some(at) = record.as_ref().and_then(|r| r.access_token.as_ref())
            && seen != Some(at)
            && record
                .as_ref()
                .is_some_and(|r| !r.expires_within(0, now_unix()))
        {
            // Someone else refreshed (or redeemed) while we waited: adopt their token.
            return Ok(at.clone());
        }
        if let Some(identity) = &self.inner.settings().workload {
            // A workload has no refresh token: it redeems its platform token again.
            self.login_workload_identity(identity).await?;
            return self
                .load_record()
                .await?
                .and_then(|r| r.access_token)
                .ok_or_else(|| AuthError::ReloginRequired {
                    server: server.clone(),
                });
        }
        let record = record.ok_or_else(|| AuthError::LoginRequired {
            server: server.clone(),
        })?;
        if record.refresh_token.is_none() {
            return Err(AuthError::ReloginRequired {
                server: server.clone(),
            });
        }
        let http = oauth_http::client(server)?;
        match token::refresh(server, &http, &record).await? {
            RefreshOutcome::Refreshed(next) => {
                let next = *next;
                // Persist before use: if saving fails the old record stays and we fail.
                self.inner.persist(&next).await?;
                tracing::debug!(server = %server, "access token refreshed");
                next.access_token.ok_or_else(|| AuthError::ReloginRequired {
                    server: server.clone(),
                })
            }
            RefreshOutcome::Rejected => {
                tracing::info!(server = %server, "refresh token rejected (invalid_grant); login required");
                let mut dead = record.clone();
                dead.access_token = None;
                dead.refresh_token = None;
                if let Err(e) = self.inner.store().save(self.inner.store_key(), &dead).await {
                    tracing::warn!(server = %server, error = %e, "could not mark credentials as rejected");
                }
                Err(AuthError::ReloginRequired {
                    server: server.clone(),
                })
            }
        }
    }

    /// The status, from the store only (no network).
    ///
    /// # Cancel safety
    /// Cancel-safe: it only reads the store.
    pub async fn status(&self) -> AuthStatus {
        match self.load_record().await {
            Err(_) => AuthStatus::Unknown,
            Ok(None) => AuthStatus::LoginRequired,
            Ok(Some(record)) => {
                let fresh = record.access_token.is_some() && !record.expires_within(0, now_unix());
                let refreshable = record.refresh_token.is_some() && record.token_endpoint.is_some();
                if fresh || refreshable {
                    AuthStatus::OAuth
                } else {
                    AuthStatus::ReloginRequired
                }
            }
        }
    }

    /// Deletes the stored record.
    ///
    /// # Cancel safety
    /// Cancel-safe: the record is deleted entirely or not at all.
    pub async fn logout(&self) -> Result<(), AuthError> {
        self.inner
            .store()
            .delete(self.inner.store_key())
            .await
            .map_err(|e| self.inner.store_error(e))
    }

    /// Forgets the stored credentials and leaves a logout marker in the store, so a login
    /// of the same record still pending anywhere (another process waiting for its browser)
    /// stores nothing when it completes.
    ///
    /// # Cancel safety
    /// Not cancel-safe between its two writes: dropped after the marker, the record stays
    /// until the next logout (pending logins are stopped either way).
    pub(crate) async fn logout_everywhere(&self) -> Result<(), AuthError> {
        let marker = StoredCredentials::logout_marker(super::http::now_unix_ms());
        self.inner
            .store()
            .save(&self.inner.store_key().logout_marker(), &marker)
            .await
            .map_err(|e| self.inner.store_error(e))?;
        self.logout().await
    }

    /// Forgets past step-up attempts (call after a request succeeded).
    pub fn reset_step_up(&self) {
        self.inner.reset_step_up();
    }

    /// Sends an unauthenticated `initialize` to the server and returns the
    /// `WWW-Authenticate` challenge of a 401 (`Some("")` for a 401 without one), or `None`
    /// when the server does not ask for credentials.
    ///
    /// # Cancel safety
    /// Cancel-safe: nothing is stored; a session the probe opened may stay open on the
    /// server until it expires.
    pub async fn probe(&self) -> Result<Option<String>, AuthError> {
        let server = self.inner.server();
        let http = oauth_http::client(server)?;
        let body = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": self.inner.settings().client_name, "version": env!("CARGO_PKG_VERSION")}}
        });
        let response = http
            .post(self.inner.url())
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .json(&body)
            .send()
            .await
            .map_err(|e| AuthError::Http {
                server: server.clone(),
                what: "the MCP server".to_owned(),
                source: Some(Box::new(e)),
            })?;
        if response.status() != reqwest::StatusCode::UNAUTHORIZED {
            // The server let us in without credentials: end the session we just opened.
            if let Some(session) = response.headers().get("mcp-session-id").cloned() {
                let _ = http
                    .delete(self.inner.url())
                    .header("mcp-session-id", session)
                    .send()
                    .await;
            }
            return Ok(None);
        }
        Ok(Some(
            response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned(),
        ))
    }

    /// Starts an interactive login: discovery (from the 401 `challenge` when given), client
    /// identity (configured id, then a client ID metadata document if the server supports
    /// it, then dynamic registration), PKCE S256, and a loopback callback server. Returns at
    /// once with the URL; [`PendingLogin::complete`] waits for the callback.
    ///
    /// Scopes: configured scopes, else those discovered (challenge `scope`, else
    /// `scopes_supported`), else none.
    ///
    /// # Cancel safety
    /// Cancel-safe: discovery and registration store nothing; the callback server is
    /// dropped with the future.
    pub async fn begin_login(&self, challenge: Option<&str>) -> Result<PendingLogin, AuthError> {
        login::begin(&self.inner, challenge, ScopeChoice::Auto).await
    }

    /// Like [`OAuthCredentials::begin_login`] with explicit scopes (which win over
    /// configured and discovered ones when not empty).
    ///
    /// # Cancel safety
    /// As [`OAuthCredentials::begin_login`].
    pub async fn begin_login_with_scopes(
        &self,
        challenge: Option<&str>,
        explicit_scopes: Vec<String>,
    ) -> Result<PendingLogin, AuthError> {
        login::begin(
            &self.inner,
            challenge,
            ScopeChoice::Explicit(explicit_scopes),
        )
        .await
    }

    /// An enterprise IdP login: like [`OAuthCredentials::begin_login_with_scopes`], and the
    /// callback's token response must carry a valid ID token.
    pub(crate) async fn begin_id_token_login(
        &self,
        scopes: Vec<String>,
        rule: IdTokenRule,
    ) -> Result<PendingLogin, AuthError> {
        let mut pending = self.begin_login_with_scopes(None, scopes).await?;
        pending.expect_id_token(rule);
        Ok(pending)
    }

    /// Step-up after a 403 `insufficient_scope`: a new login with the union of the granted
    /// scopes and the ones `challenge` asks for, at most
    /// [`MAX_STEP_UP_ATTEMPTS`](super::settings::MAX_STEP_UP_ATTEMPTS) times until
    /// [`OAuthCredentials::reset_step_up`].
    ///
    /// # Cancel safety
    /// Dropping the future abandons the step-up login; the tokens stored before stay.
    pub async fn step_up(&self, agent: &dyn UserAgent, challenge: &str) -> Result<(), AuthError> {
        let scopes = login::step_up_scopes(&self.inner, challenge).await?;
        tracing::info!(server = %self.server(), scopes = %scopes.join(" "), "step-up login for a missing scope");
        let pending = self
            .begin_login_with_scopes(Some(challenge), scopes)
            .await?;
        agent.open(pending.authorization_url()).await?;
        pending.complete().await
    }

    /// Machine login with the client-credentials grant; stores the token.
    ///
    /// # Cancel safety
    /// Cancel-safe: the token is stored only once it was issued; dropping the future
    /// before that stores nothing.
    pub async fn login_client_credentials(
        &self,
        grant: ClientCredentials,
    ) -> Result<(), AuthError> {
        machine::client_credentials_login(&self.inner, grant).await
    }

    /// Enterprise-managed authorization: exchanges the user's ID token at the IdP for an
    /// ID-JAG naming this server's authorization server and resource, redeems it there
    /// (JWT-bearer grant) and stores the access token. `invalid_grant` from either server
    /// means the enterprise login must be redone ([`AuthError::ReloginRequired`]).
    ///
    /// # Cancel safety
    /// Cancel-safe: the access token is stored only at the end; dropping the future
    /// before that stores nothing.
    pub async fn login_enterprise(&self, grant: EnterpriseGrant) -> Result<(), AuthError> {
        machine::enterprise_login(&self.inner, grant).await
    }

    /// Workload login: discovers the authorization server, reads the platform token from
    /// `identity`'s source, redeems it with the JWT-bearer grant (bound to a DPoP key when
    /// the server and the settings allow it) and stores the access token. A refusal is
    /// reported by its OAuth error code and not retried (`invalid_grant`: the platform token
    /// is expired, for another audience, or not trusted).
    ///
    /// # Cancel safety
    /// Cancel-safe: the token is stored only once it was issued.
    pub async fn login_workload_identity(
        &self,
        identity: &WorkloadIdentity,
    ) -> Result<(), AuthError> {
        wif::workload_identity_login(&self.inner, identity).await
    }

    /// The DPoP proof for one resource request (`method` to `url`) that presents
    /// `access_token`, when that token is bound to a DPoP key; `None` for a Bearer token.
    /// `nonce` is the resource server's latest `DPoP-Nonce`, if it sent one.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only reads the store.
    pub async fn dpop_proof(
        &self,
        method: &str,
        url: &str,
        access_token: &Secret,
        nonce: Option<&str>,
    ) -> Result<Option<Secret>, crate::AuthError> {
        let Some(record) = self.inner.load_record().await? else {
            return Ok(None);
        };
        match (&record.dpop_key, &record.access_token) {
            (Some(key), Some(at)) if at == access_token => {
                key.proof(method, url, Some(access_token), nonce).map(Some)
            }
            _ => Ok(None),
        }
    }
}

/// Logs in: [`OAuthCredentials::begin_login`], hands the URL to `agent`, waits for the
/// callback and stores the tokens.
///
/// # Cancel safety
/// Dropping the future abandons the login; nothing is stored.
pub async fn login(
    creds: &OAuthCredentials,
    agent: &dyn UserAgent,
    challenge: Option<&str>,
) -> Result<(), AuthError> {
    let pending = creds.begin_login(challenge).await?;
    login::run(&creds.inner, pending, agent, challenge).await
}
