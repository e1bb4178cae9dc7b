//! Requests to the token endpoint that rmcp does not make for us: refresh with a stored
//! record (so a refresh needs no rediscovery and works across processes).

use mcp_key::{McpServerKey, Secret};
use serde::Deserialize;

use super::http::{bounded_body, check_endpoint, now_unix};
use crate::error::AuthError;
use crate::store::StoredCredentials;

/// A successful token response (RFC 6749 section 5.1). No `Debug`: it holds tokens.
#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    token_type: String,
    expires_in: Option<u64>,
    refresh_token: Option<String>,
    scope: Option<String>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
}

/// Keeps an OAuth error code only if it looks like one (never echo free text).
pub(crate) fn sanitize_code(code: &str) -> String {
    let ok = !code.is_empty()
        && code.len() <= 64
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b.is_ascii_digit());
    if ok {
        code.to_owned()
    } else {
        "invalid_response".to_owned()
    }
}

/// What a refresh produced.
pub(crate) enum RefreshOutcome {
    /// The record with the new tokens (not yet persisted).
    Refreshed(Box<StoredCredentials>),
    /// `invalid_grant`: the refresh token is dead.
    Rejected,
}

/// Refreshes `record` at its token endpoint.
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
    let endpoint = check_endpoint(server, "token endpoint", endpoint)?;
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
    let mut request = http.post(endpoint.clone());
    match (method, &record.client_secret) {
        ("client_secret_basic", Some(secret)) => {
            request = request.basic_auth(
                form_urlencode(&record.client_id),
                Some(form_urlencode(secret.expose())),
            );
        }
        ("client_secret_post", Some(secret)) => {
            form.push(("client_id", &record.client_id));
            form.push(("client_secret", secret.expose()));
        }
        _ => form.push(("client_id", &record.client_id)),
    }
    let response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .form(&form)
        .send()
        .await
        .map_err(|e| AuthError::Http {
            server: server.clone(),
            what: "the token endpoint".to_owned(),
            source: Some(Box::new(e)),
        })?;
    let status = response.status();
    let body = bounded_body(server, "the token endpoint", response).await?;
    if !status.is_success() {
        let code = serde_json::from_slice::<ErrorResponse>(&body)
            .map(|e| sanitize_code(&e.error))
            .unwrap_or_else(|_| format!("http_{}", status.as_u16()));
        if code == "invalid_grant" {
            return Ok(RefreshOutcome::Rejected);
        }
        if status.is_server_error() {
            return Err(AuthError::Http {
                server: server.clone(),
                what: format!("the token endpoint (HTTP {})", status.as_u16()),
                source: None,
            });
        }
        return Err(AuthError::TokenEndpoint {
            server: server.clone(),
            code,
        });
    }
    let token: TokenResponse =
        serde_json::from_slice(&body).map_err(|_| AuthError::TokenEndpoint {
            server: server.clone(),
            code: "invalid_response".to_owned(),
        })?;
    if !token.token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::TokenEndpoint {
            server: server.clone(),
            code: "unsupported_token_type".to_owned(),
        });
    }
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

/// RFC 6749 section 2.3.1: client id and secret are form-urlencoded before HTTP Basic.
fn form_urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_kept_only_when_they_look_like_codes() {
        assert_eq!(sanitize_code("invalid_grant"), "invalid_grant");
        assert_eq!(
            sanitize_code("<script>alert(1)</script>"),
            "invalid_response"
        );
        assert_eq!(sanitize_code(""), "invalid_response");
    }
}
