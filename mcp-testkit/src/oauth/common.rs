//! Pieces shared by the fake OAuth servers: serving on loopback, OAuth error
//! responses, random tokens, PKCE, client authentication and redirect checks.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::{HeaderMap, StatusCode, header};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::options::{ClientAuthMethod, OAuthClient};

/// Form parameters of a request, by name (last value wins).
pub(crate) type Params = BTreeMap<String, String>;

/// `urn:ietf:params:oauth:client-assertion-type:jwt-bearer`.
pub(crate) const CLIENT_ASSERTION_TYPE: &str =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// An OAuth error response (RFC 6749 section 5.2).
#[derive(Debug)]
pub(crate) struct OAuthError {
    pub(crate) status: StatusCode,
    pub(crate) code: &'static str,
    pub(crate) description: String,
}

impl OAuthError {
    pub(crate) fn new(code: &'static str, description: impl Into<String>) -> Self {
        let status = if code == "invalid_client" {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::BAD_REQUEST
        };
        Self {
            status,
            code,
            description: description.into(),
        }
    }

    pub(crate) fn invalid_grant(description: impl Into<String>) -> Self {
        Self::new("invalid_grant", description)
    }

    pub(crate) fn invalid_request(description: impl Into<String>) -> Self {
        Self::new("invalid_request", description)
    }

    pub(crate) fn invalid_client(description: impl Into<String>) -> Self {
        Self::new("invalid_client", description)
    }
}

impl IntoResponse for OAuthError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(json!({"error": self.code, "error_description": self.description})),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Basic realm=\"mcp-testkit\""),
            );
        }
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-store"),
        );
        response
    }
}

/// A JSON token response with `Cache-Control: no-store`.
pub(crate) fn token_response(body: serde_json::Value) -> Response {
    let mut response = Json(body).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    response
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// An unguessable-enough token for a fake: `<prefix>_<seq>_<128 random bits in hex>`.
pub(crate) fn random_token(prefix: &str) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(1);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let mut parts = [0_u64; 2];
    for part in &mut parts {
        let mut hasher = std::hash::RandomState::new().build_hasher();
        hasher.write_u64(seq);
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        *part = hasher.finish();
    }
    format!("{prefix}_{seq}_{:016x}{:016x}", parts[0], parts[1])
}

/// The S256 code challenge of `verifier`.
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// True for `http://127.0.0.1`, `http://[::1]` and `http://localhost` URLs (any port).
pub(crate) fn is_loopback_redirect(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else {
        return false;
    };
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    url.scheme() == "http" && loopback && url.fragment().is_none()
}

/// True when `given` matches a registered redirect URI: exactly, or for loopback URIs,
/// with any port (RFC 8252 section 7.3). An empty list accepts any loopback URI.
pub(crate) fn redirect_allowed(registered: &[String], given: &str) -> bool {
    if !is_loopback_redirect(given) {
        return false;
    }
    if registered.is_empty() {
        return true;
    }
    let strip_port = |uri: &str| {
        url::Url::parse(uri).ok().map(|mut u| {
            let _ = u.set_port(None);
            u.to_string()
        })
    };
    registered
        .iter()
        .any(|r| r == given || (strip_port(r).is_some() && strip_port(r) == strip_port(given)))
}

/// `given` with `params` appended to its query.
pub(crate) fn with_query(given: &str, params: &[(&str, &str)]) -> String {
    match url::Url::parse(given) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(params.iter().copied());
            url.to_string()
        }
        Err(_) => given.to_owned(),
    }
}

/// A `302 Found` to `location`.
pub(crate) fn redirect(location: &str) -> Response {
    let mut response = StatusCode::FOUND.into_response();
    if let Ok(value) = http::HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// How a token request authenticated its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UsedAuth {
    Basic,
    Post,
    Jwt,
    None,
}

/// Authenticate the client of a token request against `clients`.
///
/// Accepted: HTTP Basic (`client_secret_basic`), `client_secret` in the form
/// (`client_secret_post`), a `client_assertion` JWT (`private_key_jwt`, signature
/// verified against the client's registered public key, `aud` one of `audiences`),
/// or a bare `client_id` for clients registered with method `none`. A client with a
/// secret may use Basic or post, whichever it was registered with.
pub(crate) fn authenticate_client(
    clients: &BTreeMap<String, OAuthClient>,
    headers: &HeaderMap,
    params: &Params,
    audiences: &[String],
) -> Result<(OAuthClient, UsedAuth), OAuthError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "));
    if let Some(encoded) = basic {
        let decoded = STANDARD
            .decode(encoded.trim())
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or_else(|| OAuthError::invalid_client("malformed Basic authorization header"))?;
        let (id, secret) = decoded
            .split_once(':')
            .ok_or_else(|| OAuthError::invalid_client("Basic credentials need id:secret"))?;
        let id = form_decode(id);
        let secret = form_decode(secret);
        let client = known(clients, &id)?;
        if client.client_secret.as_deref() != Some(secret.as_str()) {
            return Err(OAuthError::invalid_client(format!(
                "wrong client secret for client {id}"
            )));
        }
        return Ok((client, UsedAuth::Basic));
    }
    if let Some(assertion) = params.get("client_assertion") {
        if params.get("client_assertion_type").map(String::as_str) != Some(CLIENT_ASSERTION_TYPE) {
            return Err(OAuthError::invalid_client(
                "client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            ));
        }
        let client = verify_client_assertion(clients, assertion, params, audiences)?;
        return Ok((client, UsedAuth::Jwt));
    }
    let id = params
        .get("client_id")
        .ok_or_else(|| OAuthError::invalid_client("no client authentication and no client_id"))?;
    let client = known(clients, id)?;
    if let Some(secret) = params.get("client_secret") {
        if client.client_secret.as_deref() != Some(secret.as_str()) {
            return Err(OAuthError::invalid_client(format!(
                "wrong client secret for client {id}"
            )));
        }
        return Ok((client, UsedAuth::Post));
    }
    if client.auth_method != ClientAuthMethod::None {
        return Err(OAuthError::invalid_client(format!(
            "client {id} must authenticate with {}",
            client.auth_method.as_str()
        )));
    }
    Ok((client, UsedAuth::None))
}

fn known(clients: &BTreeMap<String, OAuthClient>, id: &str) -> Result<OAuthClient, OAuthError> {
    clients
        .get(id)
        .cloned()
        .ok_or_else(|| OAuthError::invalid_client(format!("unknown client {id}")))
}

fn form_decode(value: &str) -> String {
    url::form_urlencoded::parse(format!("x={value}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

fn verify_client_assertion(
    clients: &BTreeMap<String, OAuthClient>,
    assertion: &str,
    params: &Params,
    audiences: &[String],
) -> Result<OAuthClient, OAuthError> {
    let bad = |why: &str| OAuthError::invalid_client(format!("client assertion rejected: {why}"));
    let header = jsonwebtoken::decode_header(assertion).map_err(|_| bad("malformed JWT"))?;
    let claims = jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(assertion)
        .map_err(|_| bad("malformed JWT claims"))?
        .claims;
    let issuer = claims
        .get("iss")
        .and_then(|v| v.as_str())
        .ok_or_else(|| bad("no iss claim"))?;
    if claims.get("sub").and_then(|v| v.as_str()) != Some(issuer) {
        return Err(bad("iss and sub must both be the client id"));
    }
    if params.get("client_id").is_some_and(|id| id != issuer) {
        return Err(bad("client_id differs from the assertion's iss"));
    }
    let client = known(clients, issuer)?;
    let pem = client
        .public_key_pem
        .as_deref()
        .ok_or_else(|| bad("the client has no registered public key"))?;
    let key = match header.alg {
        jsonwebtoken::Algorithm::RS256
        | jsonwebtoken::Algorithm::RS384
        | jsonwebtoken::Algorithm::RS512 => jsonwebtoken::DecodingKey::from_rsa_pem(pem.as_bytes()),
        jsonwebtoken::Algorithm::ES256 | jsonwebtoken::Algorithm::ES384 => {
            jsonwebtoken::DecodingKey::from_ec_pem(pem.as_bytes())
        }
        _ => return Err(bad("alg must be RS256/384/512 or ES256/384")),
    }
    .map_err(|_| bad("the registered public key does not fit the JWT's alg"))?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_audience(audiences);
    validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
    jsonwebtoken::decode::<serde_json::Value>(assertion, &key, &validation)
        .map_err(|e| bad(&format!("{e}")))?;
    Ok(client)
}

pub(crate) use crate::serve::Running;

/// Seconds of `lifetime`, at least 1.
pub(crate) fn secs(lifetime: Duration) -> u64 {
    lifetime.as_secs().max(1)
}

/// Check a PKCE verifier against a stored S256 challenge.
pub(crate) fn verifier_matches(
    verifier: Option<&String>,
    challenge: &str,
) -> Result<(), OAuthError> {
    let verifier =
        verifier.ok_or_else(|| OAuthError::invalid_request("code_verifier is required (PKCE)"))?;
    if s256(verifier) != challenge {
        return Err(OAuthError::invalid_grant(
            "code_verifier does not match the code_challenge",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_is_base64url_sha256() {
        // Computed independently with Python's hashlib and base64.
        assert_eq!(
            s256("dBjftJeZ4CVP-mJ92K9cdVxRQ7iL3ndNHwHyF2ik2ZY"),
            "ASdTWWRpGz5GtOrkuZ2J_WOruLt2sbFg4xvZ4xh81N0"
        );
    }

    #[test]
    fn redirects_must_be_loopback_and_registered_up_to_the_port() {
        assert!(redirect_allowed(&[], "http://127.0.0.1:8080/cb"));
        assert!(redirect_allowed(&[], "http://[::1]/cb"));
        assert!(redirect_allowed(&[], "http://localhost:1/cb"));
        assert!(!redirect_allowed(&[], "https://127.0.0.1/cb"));
        assert!(!redirect_allowed(&[], "http://example.com/cb"));
        assert!(!redirect_allowed(&[], "http://127.0.0.1/cb#frag"));
        assert!(!redirect_allowed(&[], "not a url"));
        let registered = vec!["http://127.0.0.1:1234/cb".to_owned()];
        assert!(redirect_allowed(&registered, "http://127.0.0.1:1234/cb"));
        assert!(redirect_allowed(&registered, "http://127.0.0.1:5555/cb"));
        assert!(!redirect_allowed(
            &registered,
            "http://127.0.0.1:1234/other"
        ));
    }

    #[test]
    fn query_parameters_are_appended_and_encoded() {
        assert_eq!(
            with_query(
                "http://127.0.0.1/cb?x=1",
                &[("code", "a b"), ("state", "s&t")]
            ),
            "http://127.0.0.1/cb?x=1&code=a+b&state=s%26t"
        );
    }

    #[test]
    fn random_tokens_differ() {
        assert_ne!(random_token("at"), random_token("at"));
        assert!(random_token("rt").starts_with("rt_"));
    }
}
