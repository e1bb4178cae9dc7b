//! One POST to a token endpoint, as this crate makes it itself (refresh, the DPoP-bound
//! authorization-code exchange, the workload JWT-bearer grant): client authentication,
//! the DPoP proof (RFC 9449 section 5) with one retry after `use_dpop_nonce` (section 8),
//! bounded response, error codes only (never the server's text).

use mcp_key::{McpServerKey, Secret};
use serde::Deserialize;

use super::dpop::DpopKey;
use super::http::{bounded_body, check_endpoint};
use crate::error::AuthError;

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

/// The `DPoP-Nonce` response header.
pub(crate) const DPOP_NONCE_HEADER: &str = "dpop-nonce";

/// How the client authenticates at the token endpoint.
pub(crate) enum ClientAuth<'a> {
    /// `client_id` in the body (public client), when there is one.
    None(Option<&'a str>),
    /// HTTP Basic with the form-urlencoded id and secret.
    Basic(&'a str, &'a Secret),
    /// `client_id` and `client_secret` in the body.
    Post(&'a str, &'a Secret),
}

impl<'a> ClientAuth<'a> {
    /// From a stored auth method name.
    pub(crate) fn from_method(
        method: &str,
        client_id: &'a str,
        secret: Option<&'a Secret>,
    ) -> Self {
        match (method, secret) {
            ("client_secret_basic", Some(s)) => Self::Basic(client_id, s),
            ("client_secret_post", Some(s)) => Self::Post(client_id, s),
            _ => Self::None(Some(client_id)),
        }
    }
}

/// A successful token response (RFC 6749 section 5.1). No `Debug`: it holds tokens.
#[derive(Deserialize)]
pub(crate) struct IssuedToken {
    pub(crate) access_token: String,
    pub(crate) token_type: String,
    pub(crate) expires_in: Option<u64>,
    pub(crate) refresh_token: Option<String>,
    pub(crate) scope: Option<String>,
}

impl IssuedToken {
    /// `Bearer`, or `DPoP` when we sent a proof (RFC 9449 section 5: a DPoP token type
    /// without a proof, or a Bearer one when we asked for binding, are both usable; anything
    /// else is not).
    pub(crate) fn check_type(&self, server: &McpServerKey) -> Result<(), AuthError> {
        let t = self.token_type.as_str();
        if t.eq_ignore_ascii_case("bearer") || t.eq_ignore_ascii_case("dpop") {
            Ok(())
        } else {
            Err(AuthError::TokenEndpoint {
                server: server.clone(),
                code: "unsupported_token_type".to_owned(),
            })
        }
    }

    /// The token is DPoP-bound.
    pub(crate) fn is_dpop(&self) -> bool {
        self.token_type.eq_ignore_ascii_case("dpop")
    }
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: String,
}

/// What a token request produced.
pub(crate) enum GrantOutcome {
    /// A token.
    Issued(IssuedToken),
    /// The server refused with this OAuth error code (sanitized), e.g. `invalid_grant`.
    Refused(String),
}

/// POSTs `form` to `endpoint`, with a DPoP proof made with `dpop` when given; after a
/// `use_dpop_nonce` refusal that names a nonce, once more with it.
pub(crate) async fn request_token(
    server: &McpServerKey,
    http: &reqwest::Client,
    endpoint: &str,
    mut form: Vec<(&str, &str)>,
    client: ClientAuth<'_>,
    dpop: Option<&DpopKey>,
) -> Result<GrantOutcome, AuthError> {
    let endpoint = check_endpoint(server, "token endpoint", endpoint)?;
    let mut basic = None;
    match client {
        ClientAuth::None(Some(id)) => form.push(("client_id", id)),
        ClientAuth::None(None) => {}
        ClientAuth::Basic(id, secret) => {
            basic = Some((form_urlencode(id), form_urlencode(secret.expose())))
        }
        ClientAuth::Post(id, secret) => {
            form.push(("client_id", id));
            form.push(("client_secret", secret.expose()));
        }
    }
    let mut nonce: Option<String> = None;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut request = http
            .post(endpoint.clone())
            .header(reqwest::header::ACCEPT, "application/json");
        if let Some((id, secret)) = &basic {
            request = request.basic_auth(id, Some(secret));
        }
        if let Some(key) = dpop {
            let proof = key.proof("POST", endpoint.as_str(), None, nonce.as_deref())?;
            request = request.header("DPoP", proof.expose());
        }
        let response = request
            .form(&form)
            .send()
            .await
            .map_err(|e| AuthError::Http {
                server: server.clone(),
                what: "the token endpoint".to_owned(),
                source: Some(Box::new(e)),
            })?;
        let status = response.status();
        let offered_nonce = response
            .headers()
            .get(DPOP_NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty() && v.len() <= 512)
            .map(str::to_owned);
        let body = bounded_body(server, "the token endpoint", response).await?;
        if status.is_success() {
            let token: IssuedToken =
                serde_json::from_slice(&body).map_err(|_| AuthError::TokenEndpoint {
                    server: server.clone(),
                    code: "invalid_response".to_owned(),
                })?;
            token.check_type(server)?;
            return Ok(GrantOutcome::Issued(token));
        }
        let code = serde_json::from_slice::<ErrorResponse>(&body)
            .map(|e| sanitize_code(&e.error))
            .unwrap_or_else(|_| format!("http_{}", status.as_u16()));
        if code == "use_dpop_nonce" && dpop.is_some() && attempt == 1 && offered_nonce.is_some() {
            tracing::debug!(server = %server, "the token endpoint asked for a DPoP nonce; retrying once");
            nonce = offered_nonce;
            continue;
        }
        if status.is_server_error() {
            return Err(AuthError::Http {
                server: server.clone(),
                what: format!("the token endpoint (HTTP {})", status.as_u16()),
                source: None,
            });
        }
        return Ok(GrantOutcome::Refused(code));
    }
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
