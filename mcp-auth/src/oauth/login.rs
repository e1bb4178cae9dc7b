//! Interactive login: authorization code with PKCE (S256) through a loopback callback.

use std::collections::BTreeSet;
use std::sync::Arc;

use mcp_key::{McpServerKey, Secret};
use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthError as RmcpAuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationSession,
    OAuthClientConfig, OAuthTokenResponse,
};
use url::Url;

use super::agent::UserAgent;
use super::callback::{self, CallbackServer};
use super::discovery::{
    Discovered, discover, map_rmcp, secret_auth_method, supports_client_metadata_documents,
};
use super::dpop::{self, DpopKey};
use super::dpop_exchange::{CapturedStates, CodeGrant, DpopExchange};
use super::grant::sanitize_code;
use super::http::{self as oauth_http, now_unix};
use super::settings::OAuthSettings;
use super::state::CredentialState;
use crate::error::AuthError;
use crate::store::StoredCredentials;

/// A login in progress: the URL to show, and [`PendingLogin::complete`] to wait for the
/// callback. Dropping it stops the callback server.
pub struct PendingLogin {
    creds: Arc<CredentialState>,
    session: AuthorizationSession,
    callback: CallbackServer,
    authorization_url: String,
    state: String,
    resource: Option<String>,
    requested_scopes: Vec<String>,
    metadata: AuthorizationMetadata,
    client_secret: Option<Secret>,
    auth_method: String,
    id_token_rule: Option<IdTokenRule>,
    scopes_discovered: bool,
    /// Set when the tokens are to be bound to a DPoP key.
    dpop: Option<DpopExchange>,
    /// When the login began (Unix milliseconds): a logout marker from after it stops it.
    begun_at_ms: u64,
}

/// Which scopes a login asks for.
pub(crate) enum ScopeChoice {
    /// These (when not empty), else as for `Auto`.
    Explicit(Vec<String>),
    /// Configured, else discovered, else none.
    Auto,
    /// None at all (the retry after discovered scopes were rejected).
    NoScopes,
}

/// An enterprise login expects an ID token from this issuer for this client.
#[derive(Clone, Debug)]
pub(crate) struct IdTokenRule {
    pub(crate) issuer: String,
    pub(crate) client_id: String,
}

impl std::fmt::Debug for PendingLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingLogin")
            .field("server", self.creds.server())
            .field("redirect_uri", &self.callback.redirect_uri)
            .finish_non_exhaustive()
    }
}

fn query_param(url: &str, name: &str) -> Option<String> {
    Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

impl PendingLogin {
    /// The authorization URL to open in a browser.
    pub fn authorization_url(&self) -> &str {
        &self.authorization_url
    }

    /// The loopback redirect URI the authorization server will call.
    pub fn redirect_uri(&self) -> &str {
        &self.callback.redirect_uri
    }

    /// Waits for the callback (at most the settings' login timeout), checks `state` and
    /// `iss`, exchanges the code (with the PKCE verifier) and persists the tokens.
    ///
    /// Requests to the callback without this login's `state` (any local process can send
    /// one) are answered with HTTP 400 and ignored: they neither end nor fail the login.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the login; nothing is stored.
    pub async fn complete(self) -> Result<(), AuthError> {
        let server = self.creds.server().clone();
        let timeout = self.creds.settings().login_timeout;
        let PendingLogin {
            creds,
            session,
            callback,
            state,
            resource,
            requested_scopes,
            metadata,
            client_secret,
            auth_method,
            id_token_rule,
            dpop,
            begun_at_ms,
            ..
        } = self;
        // The callback server lives until the end, as long as the login.
        let mut callback = callback;
        let params = wait_for_callback(&server, &mut callback.received, timeout).await?;
        let code = callback_code(&server, &params, &state)?;
        let iss = params.get("iss");
        check_response_issuer(&server, &metadata, iss.map(String::as_str))?;
        let context = TokenContext {
            client_secret,
            auth_method,
            resource,
            requested_scopes,
        };
        if let Some(dpop) = dpop.filter(|_| id_token_rule.is_none()) {
            let record = dpop_record(&server, dpop, code, &state, &metadata, context).await?;
            return creds.persist_login(&record, begun_at_ms).await;
        }
        let token = session
            .handle_callback_with_issuer(code, &state, iss.map(String::as_str))
            .await
            .map_err(|e| match e {
                RmcpAuthError::TokenExchangeFailed(_) => AuthError::TokenEndpoint {
                    server: server.clone(),
                    code: "token_request_failed".to_owned(),
                },
                other => map_rmcp(&server, other),
            })?;
        let client_id = session
            .get_credentials()
            .await
            .map(|(id, _)| id)
            .map_err(|e| map_rmcp(&server, e))?;
        let mut record = record_from_token(client_id, &token, &metadata, context);
        if let Some(rule) = id_token_rule {
            keep_id_token(&server, &token, &metadata, &rule, &mut record).await?;
        }
        creds.persist_login(&record, begun_at_ms).await
    }
}

/// The callback's parameters, within the login timeout.
async fn wait_for_callback(
    server: &McpServerKey,
    received: &mut tokio::sync::oneshot::Receiver<callback::CallbackParams>,
    timeout: std::time::Duration,
) -> Result<callback::CallbackParams, AuthError> {
    match tokio::time::timeout(timeout, received).await {
        Err(_) => Err(AuthError::Timeout {
            server: server.clone(),
            what: "the login",
        }),
        Ok(Err(_)) => Err(AuthError::Callback {
            server: server.clone(),
            detail: "the callback server stopped".to_owned(),
            code: None,
        }),
        Ok(Ok(params)) => Ok(params),
    }
}

/// The authorization code of a callback with this login's `state`, or the error it reports.
fn callback_code<'a>(
    server: &McpServerKey,
    params: &'a callback::CallbackParams,
    state: &str,
) -> Result<&'a String, AuthError> {
    // The callback server already dropped other states; checked again here so the
    // exchange never depends on it.
    if params.get("state").map(String::as_str) != Some(state) {
        return Err(AuthError::StateMismatch {
            server: server.clone(),
        });
    }
    if let Some(error) = params.get("error") {
        let code = sanitize_code(error);
        return Err(AuthError::Callback {
            server: server.clone(),
            detail: format!("the authorization server answered {code}"),
            code: Some(code),
        });
    }
    params.get("code").ok_or_else(|| AuthError::Callback {
        server: server.clone(),
        detail: "the callback carries no authorization code".to_owned(),
        code: None,
    })
}

/// Redeems the code with a DPoP proof (our own exchange, not rmcp's) and builds the record.
async fn dpop_record(
    server: &McpServerKey,
    dpop: DpopExchange,
    code: &str,
    state: &str,
    metadata: &AuthorizationMetadata,
    context: TokenContext,
) -> Result<StoredCredentials, AuthError> {
    let TokenContext {
        client_secret,
        auth_method,
        resource,
        requested_scopes,
    } = context;
    let token = dpop
        .exchange(
            server,
            CodeGrant {
                code,
                state,
                resource: resource.as_deref(),
                auth_method: &auth_method,
                client_secret: client_secret.as_ref(),
            },
        )
        .await?;
    let mut record = StoredCredentials::new(dpop.client_id.clone())
        .with_access_token(Secret::new(token.access_token.clone()))
        .with_token_endpoint(metadata.token_endpoint.clone())
        .with_token_endpoint_auth_method(auth_method)
        .with_scopes(match &token.scope {
            Some(granted) => granted.split_whitespace().map(str::to_owned).collect(),
            None => requested_scopes,
        });
    if let Some(rt) = &token.refresh_token {
        record = record.with_refresh_token(Secret::new(rt.clone()));
    }
    if let Some(expires_in) = token.expires_in {
        record = record.with_expires_at(now_unix().saturating_add(expires_in));
    }
    if let Some(secret) = client_secret {
        record = record.with_client_secret(secret);
    }
    if let Some(issuer) = &metadata.issuer {
        record = record.with_issuer(issuer.clone());
    }
    if let Some(resource) = resource {
        record = record.with_resource(resource);
    }
    if token.is_dpop() {
        record = record.with_dpop_key(dpop.key);
    }
    Ok(record)
}

/// An enterprise IdP login: checks the token response's ID token (claims, then signature
/// against the IdP's JWKS) and keeps it in `record` as its access token.
async fn keep_id_token(
    server: &McpServerKey,
    token: &OAuthTokenResponse,
    metadata: &AuthorizationMetadata,
    rule: &IdTokenRule,
    record: &mut StoredCredentials,
) -> Result<(), AuthError> {
    let id_token = token
        .extra_fields()
        .0
        .get("id_token")
        .and_then(|v| v.as_str())
        .ok_or_else(|| AuthError::InvalidIdToken {
            server: server.clone(),
            reason: "the token response carries none",
        })?;
    let exp =
        super::id_token::validate(server, id_token, &rule.issuer, &rule.client_id, now_unix())?;
    let jwks_uri = metadata
        .jwks_uri
        .as_deref()
        .ok_or_else(|| AuthError::InvalidIdToken {
            server: server.clone(),
            reason: "the identity provider publishes no JWKS to check it with",
        })?;
    super::jwks::verify(server, jwks_uri, id_token, &rule.issuer, &rule.client_id).await?;
    record.access_token = Some(Secret::new(id_token.to_owned()));
    record.expires_at = Some(exp);
    Ok(())
}

/// What a token response alone does not say.
pub(crate) struct TokenContext {
    pub(crate) client_secret: Option<Secret>,
    pub(crate) auth_method: String,
    pub(crate) resource: Option<String>,
    pub(crate) requested_scopes: Vec<String>,
}

/// The record to store after a successful grant.
pub(crate) fn record_from_token(
    client_id: String,
    token: &OAuthTokenResponse,
    metadata: &AuthorizationMetadata,
    ctx: TokenContext,
) -> StoredCredentials {
    let mut record = StoredCredentials::new(client_id)
        .with_access_token(Secret::new(token.access_token().secret().clone()))
        .with_token_endpoint(metadata.token_endpoint.clone())
        .with_token_endpoint_auth_method(ctx.auth_method);
    if let Some(rt) = token.refresh_token() {
        record = record.with_refresh_token(Secret::new(rt.secret().clone()));
    }
    if let Some(expires_in) = token.expires_in() {
        record = record.with_expires_at(now_unix().saturating_add(expires_in.as_secs()));
    }
    let scopes: Vec<String> = match token.scopes() {
        Some(granted) => granted.iter().map(|s| s.to_string()).collect(),
        None => ctx.requested_scopes,
    };
    record = record.with_scopes(scopes);
    if let Some(secret) = ctx.client_secret {
        record = record.with_client_secret(secret);
    }
    if let Some(issuer) = &metadata.issuer {
        record = record.with_issuer(issuer.clone());
    }
    if let Some(resource) = ctx.resource {
        record = record.with_resource(resource);
    }
    record
}

/// The steps of [`OAuthCredentials::begin_login`](super::OAuthCredentials::begin_login): discovery, scopes, client identity,
/// PKCE (and DPoP) set-up, and the loopback callback server.
pub(super) async fn begin(
    creds: &Arc<CredentialState>,
    challenge: Option<&str>,
    choice: ScopeChoice,
) -> Result<PendingLogin, AuthError> {
    let begun_at_ms = oauth_http::now_unix_ms();
    let server = creds.server().clone();
    let settings = creds.settings();
    let http = oauth_http::client(&server)?;
    let callback = callback::start(&server, settings.callback_port).await?;
    let Discovered {
        mut manager,
        metadata,
    } = discover(&server, &http, creds.url(), challenge, settings).await?;
    let (scopes, scopes_discovered) = choose_scopes(&manager, settings, &metadata, choice).await;
    let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let redirect_uri = callback.redirect_uri.clone();
    let ClientIdentity {
        client_id,
        client_secret,
        auth_method,
    } = client_identity(creds, &mut manager, &metadata, &redirect_uri, &refs).await?;
    let client_id_for_dpop = client_id.clone();
    let mut config =
        OAuthClientConfig::new(client_id, redirect_uri.clone()).with_scopes(scopes.clone());
    if let Some(secret) = &client_secret {
        config = config.with_client_secret(secret.expose());
    }
    manager
        .configure_client(config)
        .map_err(|e| map_rmcp(&server, e))?;
    let dpop = if settings.dpop && dpop::supported_by(&metadata) {
        let states = CapturedStates::default();
        manager.set_state_store(states.clone());
        Some(DpopExchange {
            key: DpopKey::generate()?,
            states,
            client_id: client_id_for_dpop.clone(),
            redirect_uri: redirect_uri.clone(),
            token_endpoint: metadata.token_endpoint.clone(),
        })
    } else {
        None
    };
    let url = manager
        .get_authorization_url(&refs)
        .await
        .map_err(|e| map_rmcp(&server, e))?;
    let session = AuthorizationSession::for_scope_upgrade(manager, url, &redirect_uri);
    let authorization_url = session.get_authorization_url().to_owned();
    let state = query_param(&authorization_url, "state").ok_or_else(|| AuthError::Discovery {
        server: server.clone(),
        detail: "the authorization URL carries no state".to_owned(),
        source: None,
    })?;
    callback.expect_state(&state);
    let resource = settings
        .resource
        .clone()
        .or_else(|| query_param(&authorization_url, "resource"));
    let requested_scopes = query_param(&authorization_url, "scope")
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    Ok(PendingLogin {
        creds: creds.clone(),
        session,
        callback,
        authorization_url,
        state,
        resource,
        requested_scopes,
        metadata,
        client_secret,
        auth_method,
        id_token_rule: None,
        scopes_discovered,
        dpop,
        begun_at_ms,
    })
}

/// The scopes a login asks for (deduplicated, plus `offline_access` when the authorization
/// server lists it), and whether they were discovered rather than configured.
async fn choose_scopes(
    manager: &AuthorizationManager,
    settings: &OAuthSettings,
    metadata: &AuthorizationMetadata,
    choice: ScopeChoice,
) -> (Vec<String>, bool) {
    let (scopes, scopes_discovered) = match choice {
        ScopeChoice::Explicit(scopes) if !scopes.is_empty() => (scopes, false),
        ScopeChoice::NoScopes => (Vec::new(), false),
        _ if !settings.scopes.is_empty() => (settings.scopes.clone(), false),
        // Challenge `scope`, else `scopes_supported` (plus `offline_access` when the
        // authorization server lists it), else none.
        _ => (manager.select_initial_scopes(&[]).await, true),
    };
    let mut scopes: Vec<String> = {
        let mut seen = BTreeSet::new();
        scopes
            .into_iter()
            .filter(|s| seen.insert(s.clone()))
            .collect()
    };
    let offline_supported = metadata
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
    if !scopes.is_empty() && offline_supported && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".to_owned());
    }
    (scopes, scopes_discovered)
}

/// Who the login's client is, and how it authenticates at the token endpoint.
struct ClientIdentity {
    client_id: String,
    client_secret: Option<Secret>,
    auth_method: String,
}

/// The client identity of a login: the configured client id, else the client registered
/// in an earlier login at the same issuer, else a client ID metadata document (when the
/// server supports them), else a dynamic registration.
async fn client_identity(
    creds: &CredentialState,
    manager: &mut AuthorizationManager,
    metadata: &AuthorizationMetadata,
    redirect_uri: &str,
    scopes: &[&str],
) -> Result<ClientIdentity, AuthError> {
    let server = creds.server();
    let settings = creds.settings();
    let previous = creds.reusable_client(metadata).await;
    let (client_id, client_secret, auth_method) = if let Some(id) = &settings.client_id {
        let method = if settings.client_secret.is_some() {
            secret_auth_method(metadata)
        } else {
            "none"
        };
        (
            id.clone(),
            settings.client_secret.clone(),
            method.to_owned(),
        )
    } else if let Some(prev) = previous {
        let method = prev
            .token_endpoint_auth_method
            .clone()
            .unwrap_or_else(|| "none".to_owned());
        (prev.client_id.clone(), prev.client_secret.clone(), method)
    } else if let Some(cimd) = settings
        .client_metadata_url
        .as_ref()
        .filter(|_| supports_client_metadata_documents(metadata))
    {
        if !cimd.starts_with("https://") {
            return Err(AuthError::Config {
                server: server.clone(),
                detail: format!("the client metadata document URL `{cimd}` must be https"),
            });
        }
        (cimd.clone(), None, "none".to_owned())
    } else {
        let registered = manager
            .register_client(&settings.client_name, redirect_uri, scopes)
            .await
            .map_err(|e| map_rmcp(server, e))?;
        let secret = registered.client_secret.clone().map(Secret::new);
        let method = if secret.is_some() {
            secret_auth_method(metadata)
        } else {
            "none"
        };
        (registered.client_id.clone(), secret, method.to_owned())
    };
    Ok(ClientIdentity {
        client_id,
        client_secret,
        auth_method,
    })
}

/// The scopes a step-up login asks for: those granted plus those `challenge` requires.
/// [`AuthError::InsufficientScope`] when the challenge is no `insufficient_scope`, asks for
/// nothing new, or the step-up attempts are used up.
pub(super) async fn step_up_scopes(
    creds: &CredentialState,
    challenge: &str,
) -> Result<Vec<String>, AuthError> {
    let server = creds.server().clone();
    let base = Url::parse(creds.url()).map_err(|_| AuthError::Config {
        server: server.clone(),
        detail: format!("`{}` is not a valid URL", creds.url()),
    })?;
    let params = rmcp::transport::auth::WWWAuthenticateParams::parse(challenge, &base);
    let required = params.scope.clone().unwrap_or_default();
    if !params.is_insufficient_scope() || required.trim().is_empty() {
        return Err(AuthError::InsufficientScope {
            server,
            scope: required,
        });
    }
    let granted: Vec<String> = creds
        .load_record()
        .await
        .ok()
        .flatten()
        .map(|r| r.scopes)
        .unwrap_or_default();
    // Asking again for scopes we already hold cannot help: stop instead of looping.
    if required
        .split_whitespace()
        .all(|s| granted.iter().any(|g| g == s))
        || !creds.take_step_up_attempt()
    {
        return Err(AuthError::InsufficientScope {
            server,
            scope: required,
        });
    }
    let mut scopes = granted;
    for s in required.split_whitespace() {
        if !scopes.iter().any(|have| have == s) {
            scopes.push(s.to_owned());
        }
    }
    Ok(scopes)
}

impl PendingLogin {
    /// Marks the login as an enterprise IdP login: the callback's token response must
    /// carry a valid ID token from `rule`'s issuer.
    pub(super) fn expect_id_token(&mut self, rule: IdTokenRule) {
        self.id_token_rule = Some(rule);
    }
}

/// The steps of [`login`](super::login) after its first
/// [`begin`]: hands the URL to `agent`, waits for the callback, and logs in again without
/// scopes when discovered ones were rejected.
pub(super) async fn run(
    state: &Arc<CredentialState>,
    pending: PendingLogin,
    agent: &dyn UserAgent,
    challenge: Option<&str>,
) -> Result<(), AuthError> {
    let discovered = pending.scopes_discovered;
    agent.open(pending.authorization_url()).await?;
    match pending.complete().await {
        Err(AuthError::Callback {
            code: Some(code), ..
        }) if discovered && code == "invalid_scope" => {
            tracing::info!(server = %state.server(), "discovered scopes were rejected; retrying the login without scopes");
            let pending = begin(state, challenge, ScopeChoice::NoScopes).await?;
            agent.open(pending.authorization_url()).await?;
            pending.complete().await
        }
        other => other,
    }
}

/// RFC 9207: an authorization response's `iss` must name the issuer the login began with,
/// and an authorization server that says it always sends `iss`
/// (`authorization_response_iss_parameter_supported`) must have sent one. Either failure
/// means the response may come from another authorization server (a mix-up attack): its
/// code is not redeemed. Checked on every path, ours (DPoP) and rmcp's.
fn check_response_issuer(
    server: &McpServerKey,
    metadata: &AuthorizationMetadata,
    iss: Option<&str>,
) -> Result<(), AuthError> {
    match iss {
        Some(iss) if metadata.issuer.as_deref() != Some(iss) => Err(AuthError::IssuerMismatch {
            server: server.clone(),
            expected: metadata.issuer.clone().unwrap_or_default(),
            received: iss.to_owned(),
        }),
        Some(_) => Ok(()),
        None if metadata
            .additional_fields
            .get("authorization_response_iss_parameter_supported")
            .and_then(serde_json::Value::as_bool)
            == Some(true) =>
        {
            Err(AuthError::Callback {
                server: server.clone(),
                detail: format!(
                    "the authorization server `{}` says it names itself in every authorization \
                     response (RFC 9207 `iss`), and this one has no `iss`; it was refused as \
                     possibly forged. Log in again; if it happens every time, report it to the \
                     server's operator",
                    metadata.issuer.as_deref().unwrap_or("(unnamed)")
                ),
                code: None,
            })
        }
        None => Ok(()),
    }
}
