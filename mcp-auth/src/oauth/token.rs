//! Requests to the token endpoint that rmcp does not make for us: refresh with a stored
//! record (so a refresh needs no rediscovery and works across processes).

use super::grant::{ClientAuth, GrantOutcome, request_token};
use super::http::now_unix;
use crate::error::AuthError;
use crate::store::StoredCredentials;
use mcp_key::{McpServerKey, Secret};

/// What a refresh produced.
pub(crate) enum RefreshOutcome {
    /// The record with the new tokens (not yet persisted).
    Refreshed(Box<StoredCredentials>),
    /// `invalid_grant`: the refresh token is dead.
    Rejected,
}

/// Refreshes `record` at its token endpoint (with a DPoP proof when the record is bound
/// to a key).
pub(crate) async fn refresh(
    server: &McpServerKey,
    http: &reqwest::Client,
    record: &StoredCredentials,
) -> Result<RefreshOutcome, AuthError> {
    let relogin = || AuthError::ReloginRequired {
        server: server.clone(),
    };
    let refresh_token = record.refresh_token.as_ref().ok_or_else(relogin)?;
    let endpoint = record.token_endpoint.as_deref().ok_or_else(relogin)?;
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token.expose()),
    ];
    if let Some(resource) = &record.resource {
        form.push(("resource", resource));
    }
    let method = record
        .token_endpoint_auth_method
        .as_deref()
        .unwrap_or("none");
    let client = ClientAuth::from_method(method, &record.client_id, record.client_secret.as_ref());
    let token = match request_token(
        server,
        http,
        endpoint,
        form,
        client,
        record.dpop_key.as_ref(),
    )
    .await?
    {
        GrantOutcome::Issued(token) => token,
        GrantOutcome::Refused(code) if code == "invalid_grant" => {
            return Ok(RefreshOutcome::Rejected);
        }
        GrantOutcome::Refused(code) => {
            return Err(AuthError::TokenEndpoint {
                server: server.clone(),
                code,
            });
        }
    };
    let mut next = record.clone();
    next.access_token = Some(Secret::new(token.access_token));
    // Rotation: a new refresh token replaces the old; otherwise the old one stays valid.
    if let Some(rt) = token.refresh_token {
        next.refresh_token = Some(Secret::new(rt));
    }
    next.expires_at = token.expires_in.map(|s| now_unix().saturating_add(s));
    if let Some(scope) = token.scope {
        next.scopes = scope.split_whitespace().map(str::to_owned).collect();
    }
    Ok(RefreshOutcome::Refreshed(Box::new(next)))
}
