//! The adapter from mcp-auth's [`OAuthCredentials`] to the connection set's
//! [`AuthHeaderProvider`].

use mcp_auth::{AuthError as OAuthError, HeadlessAgent, OAuthCredentials};
use mcp_connections::{AuthError, AuthHeaderProvider, BoxFuture};
use mcp_key::{McpServerKey, Secret};

/// Hands the connection set the stored OAuth token; after a 401 it refreshes, and when
/// nothing usable is stored it logs in with the headless agent (the conformance servers
/// approve at once). A real host would report "login required" instead of logging in.
#[derive(Debug, Clone)]
pub(crate) struct OAuthProvider {
    creds: OAuthCredentials,
}

impl OAuthProvider {
    pub(crate) fn new(creds: OAuthCredentials) -> Self {
        Self { creds }
    }
}

fn map(server: &McpServerKey, err: OAuthError) -> AuthError {
    tracing::warn!(server = %server, error = %err, "credentials unavailable");
    if err.is_relogin_required() {
        AuthError::ReloginRequired {
            server: server.clone(),
        }
    } else {
        AuthError::LoginRequired {
            server: server.clone(),
        }
    }
}

impl AuthHeaderProvider for OAuthProvider {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, AuthError>> {
        Box::pin(async move {
            match self.creds.access_token().await {
                Ok(token) => Ok(Some(token)),
                // Nothing stored yet: connect without credentials; a 401 starts the login.
                Err(e) if e.is_login_required() => Ok(None),
                Err(e) => Err(map(server, e)),
            }
        })
    }

    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        rejected: Option<&'a Secret>,
    ) -> BoxFuture<'a, Result<Option<Secret>, AuthError>> {
        Box::pin(async move {
            if let Some(rejected) = rejected {
                match self.creds.refresh_after_unauthorized(rejected).await {
                    Ok(token) => return Ok(Some(token)),
                    Err(e) if !e.is_auth_required() => return Err(map(server, e)),
                    Err(_) => {}
                }
            }
            // The connection set does not hand us the 401's challenge yet, so discovery
            // starts from the well-known URLs.
            let challenge = self.creds.probe().await.ok().flatten();
            mcp_auth::login(&self.creds, &HeadlessAgent::new(), challenge.as_deref())
                .await
                .map_err(|e| map(server, e))?;
            self.creds
                .access_token()
                .await
                .map(Some)
                .map_err(|e| map(server, e))
        })
    }
}
