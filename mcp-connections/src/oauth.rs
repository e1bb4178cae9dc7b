//! OAuth credentials from `mcp-auth` as the connection set's [`AuthHeaderProvider`].

use std::sync::Arc;

use mcp_auth::{OAuthCredentials, OAuthSettings};
use mcp_key::{McpServerKey, Secret};

use crate::auth::{AuthError, AuthHeaderProvider};
use crate::elicitation::BoxFuture;
use crate::spec::HttpSpec;

/// Stored OAuth tokens of one server: refreshed before they expire and once after a 401;
/// with nothing stored, requests go out without credentials (the server may not need any,
/// and if it does its 401 reports `login_required`).
pub(crate) struct OAuthProvider {
    credentials: OAuthCredentials,
}

impl OAuthProvider {
    pub(crate) fn new(
        server: &McpServerKey,
        spec: &HttpSpec,
        store: Arc<dyn mcp_auth::CredentialStore>,
    ) -> Self {
        let mut settings = OAuthSettings::new().with_scopes(spec.scopes.iter().cloned());
        if let Some(id) = &spec.oauth_client_id {
            settings = settings.with_client_id(id.clone());
        }
        if let Some(resource) = &spec.oauth_resource {
            settings = settings.with_resource(resource.clone());
        }
        Self {
            credentials: OAuthCredentials::new(server.clone(), spec.url.clone(), settings, store),
        }
    }
}

fn convert(server: &McpServerKey, e: &mcp_auth::AuthError) -> AuthError {
    if e.is_relogin_required() {
        AuthError::ReloginRequired {
            server: server.clone(),
        }
    } else if e.is_login_required() {
        AuthError::LoginRequired {
            server: server.clone(),
        }
    } else {
        AuthError::Unavailable {
            server: server.clone(),
            detail: e.to_string(),
        }
    }
}

impl AuthHeaderProvider for OAuthProvider {
    fn authorization<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> BoxFuture<'a, Result<Option<Secret>, AuthError>> {
        Box::pin(async move {
            match self.credentials.access_token().await {
                Ok(token) => Ok(Some(token)),
                // Nothing stored: try without credentials.
                Err(e) if e.is_login_required() => Ok(None),
                Err(e) => Err(convert(server, &e)),
            }
        })
    }

    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        rejected: Option<&'a Secret>,
    ) -> BoxFuture<'a, Result<Option<Secret>, AuthError>> {
        Box::pin(async move {
            let Some(rejected) = rejected else {
                return Err(AuthError::LoginRequired {
                    server: server.clone(),
                });
            };
            self.credentials
                .refresh_after_unauthorized(rejected)
                .await
                .map(Some)
                .map_err(|e| convert(server, &e))
        })
    }
}
