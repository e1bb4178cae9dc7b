//! The authorization-code exchange of a DPoP-bound login (RFC 9449 section 5).
//!
//! rmcp's session makes the exchange without a proof, so a login that binds its tokens
//! keeps rmcp's authorization state (the PKCE verifier) in a store it can read back, and
//! makes the token request itself through [`super::grant`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_key::{McpServerKey, Secret};
use rmcp::transport::auth::{AuthError as RmcpAuthError, StateStore, StoredAuthorizationState};

use super::dpop::DpopKey;
use super::grant::{ClientAuth, GrantOutcome, IssuedToken, request_token};
use super::http as oauth_http;
use crate::error::AuthError;

/// rmcp's authorization state, kept where the DPoP exchange can read it.
#[derive(Clone, Default)]
pub(crate) struct CapturedStates(Arc<Mutex<HashMap<String, StoredAuthorizationState>>>);

impl CapturedStates {
    fn take(&self, csrf: &str) -> Option<StoredAuthorizationState> {
        self.0.lock().ok()?.remove(csrf)
    }
}

#[async_trait::async_trait]
impl StateStore for CapturedStates {
    async fn save(&self, csrf: &str, state: StoredAuthorizationState) -> Result<(), RmcpAuthError> {
        if let Ok(mut map) = self.0.lock() {
            map.insert(csrf.to_owned(), state);
        }
        Ok(())
    }

    async fn load(&self, csrf: &str) -> Result<Option<StoredAuthorizationState>, RmcpAuthError> {
        Ok(self.0.lock().ok().and_then(|m| m.get(csrf).cloned()))
    }

    async fn delete(&self, csrf: &str) -> Result<(), RmcpAuthError> {
        if let Ok(mut map) = self.0.lock() {
            map.remove(csrf);
        }
        Ok(())
    }
}

/// What a DPoP-bound login needs at the exchange. No `Debug` derive: it holds the key.
pub(crate) struct DpopExchange {
    pub(crate) key: DpopKey,
    pub(crate) states: CapturedStates,
    pub(crate) client_id: String,
    pub(crate) redirect_uri: String,
    pub(crate) token_endpoint: String,
}

/// What the exchange needs besides [`DpopExchange`].
pub(crate) struct CodeGrant<'a> {
    pub(crate) code: &'a str,
    pub(crate) state: &'a str,
    pub(crate) resource: Option<&'a str>,
    pub(crate) auth_method: &'a str,
    pub(crate) client_secret: Option<&'a Secret>,
}

impl DpopExchange {
    /// Redeems `grant.code` with the PKCE verifier of `grant.state` and a proof of our key.
    pub(crate) async fn exchange(
        &self,
        server: &McpServerKey,
        grant: CodeGrant<'_>,
    ) -> Result<IssuedToken, AuthError> {
        let state = self
            .states
            .take(grant.state)
            .ok_or_else(|| AuthError::StateMismatch {
                server: server.clone(),
            })?;
        let mut form: Vec<(&str, &str)> = vec![
            ("grant_type", "authorization_code"),
            ("code", grant.code),
            ("redirect_uri", &self.redirect_uri),
            ("code_verifier", &state.pkce_verifier),
        ];
        if let Some(resource) = grant.resource {
            form.push(("resource", resource));
        }
        let client =
            ClientAuth::from_method(grant.auth_method, &self.client_id, grant.client_secret);
        let http = oauth_http::client(server)?;
        match request_token(
            server,
            &http,
            &self.token_endpoint,
            form,
            client,
            Some(&self.key),
        )
        .await?
        {
            GrantOutcome::Issued(token) => Ok(token),
            GrantOutcome::Refused(code) => Err(AuthError::TokenEndpoint {
                server: server.clone(),
                code,
            }),
        }
    }
}
