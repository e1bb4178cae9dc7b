//! OAuth credentials from `mcp-auth` as the connection set's [`AuthHeaderProvider`].

use std::sync::Arc;

use mcp_auth::{OAuthCredentials, OAuthSettings, UserAgent};
use mcp_key::{McpServerKey, Secret};

use mcp_client::BoxFuture;
use mcp_client::{AuthHeaderProvider, CredentialsError, challenge_scope};

/// One server's stored OAuth tokens (`mcp-auth`) as an [`AuthHeaderProvider`]: refreshed
/// before they expire and once after a 401. With nothing stored, requests go out without
/// credentials (the server may not need any).
///
/// Without a login agent, a server that wants a login reports `login_required` and the host
/// logs in separately (e.g. `mcpctl login`). With one ([`OAuthProvider::with_login_agent`]),
/// a 401 that refreshing cannot fix starts a login through the agent, and a 403
/// `insufficient_scope` a step-up login with the union of scopes (`mcp-auth` caps the
/// attempts).
#[derive(Clone)]
pub struct OAuthProvider {
    credentials: OAuthCredentials,
    agent: Option<Arc<dyn UserAgent>>,
}

impl std::fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("credentials", &self.credentials)
            .field("login_agent", &self.agent.is_some())
            .finish()
    }
}

impl OAuthProvider {
    /// Uses `credentials` (their store, settings and URL).
    pub fn new(credentials: OAuthCredentials) -> Self {
        Self {
            credentials,
            agent: None,
        }
    }

    /// Logs in (and steps up) through `agent` when the server asks for it.
    #[must_use]
    pub fn with_login_agent(mut self, agent: Arc<dyn UserAgent>) -> Self {
        self.agent = Some(agent);
        self
    }

    /// The provider the set builds for a configured HTTP server, with the settings of its
    /// configuration ([`OAuthSettings::from_config`]).
    pub(crate) fn for_server(
        server: &McpServerKey,
        url: &str,
        settings: OAuthSettings,
        store: Arc<dyn mcp_auth::CredentialStore>,
        agent: Option<Arc<dyn UserAgent>>,
    ) -> Self {
        Self {
            credentials: OAuthCredentials::new(server.clone(), url, settings, store),
            agent,
        }
    }

    async fn login(
        &self,
        server: &McpServerKey,
        challenge: Option<&str>,
    ) -> Result<Option<Secret>, CredentialsError> {
        let Some(agent) = &self.agent else {
            return Err(CredentialsError::LoginRequired {
                server: server.clone(),
                source: None,
            });
        };
        mcp_auth::login(&self.credentials, agent.as_ref(), challenge)
            .await
            .map_err(|e| convert(server, e))?;
        self.credentials
            .access_token()
            .await
            .map(Some)
            .map_err(|e| convert(server, e))
    }
}

/// Classifies an `mcp-auth` error, keeping it as the source.
fn convert(server: &McpServerKey, e: mcp_auth::AuthError) -> CredentialsError {
    let server = server.clone();
    if e.is_relogin_required() {
        CredentialsError::ReloginRequired {
            server,
            source: Some(Arc::new(e)),
        }
    } else if e.is_login_required() {
        CredentialsError::LoginRequired {
            server,
            source: Some(Arc::new(e)),
        }
    } else {
        CredentialsError::Unavailable {
            server,
            detail: e.to_string(),
            source: Some(Arc::new(e)),
        }
    }
}

impl AuthHeaderProvider for OAuthProvider {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            match self.credentials.access_token().await {
                Ok(token) => Ok(Some(token)),
                // Nothing stored: try without credentials.
                Err(e) if e.is_login_required() => Ok(None),
                Err(e) => Err(convert(server, e)),
            }
        })
    }

    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        rejected: Option<&'a Secret>,
        challenge: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            if let Some(rejected) = rejected {
                match self.credentials.refresh_after_unauthorized(rejected).await {
                    Ok(token) => return Ok(Some(token)),
                    Err(e) if !e.is_auth_required() => return Err(convert(server, e)),
                    Err(e) if self.agent.is_none() => return Err(convert(server, e)),
                    Err(_) => {}
                }
            }
            self.login(server, challenge).await
        })
    }

    fn step_up<'a>(
        &'a self,
        server: &'a McpServerKey,
        challenge: &'a str,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            let Some(agent) = &self.agent else {
                return Err(CredentialsError::InsufficientScope {
                    server: server.clone(),
                    scope: challenge_scope(challenge),
                });
            };
            self.credentials
                .step_up(agent.as_ref(), challenge)
                .await
                .map_err(|e| convert(server, e))?;
            self.credentials
                .access_token()
                .await
                .map(Some)
                .map_err(|e| convert(server, e))
        })
    }

    fn dpop_proof<'a>(
        &'a self,
        server: &'a McpServerKey,
        method: &'a str,
        url: &'a str,
        token: &'a Secret,
        nonce: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Secret>, CredentialsError>> {
        Box::pin(async move {
            self.credentials
                .dpop_proof(method, url, token, nonce)
                .await
                .map_err(|e| convert(server, e))
        })
    }

    fn request_succeeded(&self, _server: &McpServerKey) {
        self.credentials.reset_step_up();
    }
}
