//! `mcpctl serve --http` as an OAuth 2.1 resource server (the configuration's
//! `[gateway.oauth]`), for a team whose clients log in against its identity provider.
//!
//! - `GET /.well-known/oauth-protected-resource` and its path-suffixed form
//!   `/.well-known/oauth-protected-resource/mcp` serve the Protected Resource Metadata
//!   (RFC 9728): `resource` (the gateway's URL as clients see it: `resource`, else the
//!   bound URL), `authorization_servers` (the issuer), `scopes_supported` (the scopes
//!   required), `bearer_methods_supported` (`header`). No token needed.
//! - A request without a bearer token gets `401` with `WWW-Authenticate: Bearer
//!   resource_metadata="…"`, which is what MCP clients start their login from; one with
//!   a token that is not valid here also gets `error="invalid_token"`; a valid token
//!   without every required scope gets `403` with `error="insufficient_scope"` and the
//!   `scope` needed. When the issuer's keys or its introspection endpoint cannot be
//!   reached the answer is `503` (the token may be fine; retry later); when one client
//!   address sends more unknown tokens to introspect than its allowance, `429` with
//!   `Retry-After` ([`introspect`]).
//! - An `Authorization` value longer than [`MAX_AUTHORIZATION_BYTES`] is refused before
//!   anything reads it (hyper refuses a whole header block beyond its own bound, about
//!   400 KB, with `431`).
//! - Tokens are JWTs checked against the issuer's keys ([`jwt`], [`keys`]) or asked about
//!   by introspection ([`introspect`]); either way the caller ([`super::caller::Caller`])
//!   is the token's `sub`, its groups (the configured claim, an array of strings or a
//!   space-separated string) and scopes (`scope`, or `scp`).
//!
//! The client's token is never sent anywhere: upstream servers get the gateway's own
//! credentials (`mcpctl login`), as before.

mod discovery;
pub(crate) mod fetch;
mod introspect;
mod jwt;
mod keys;

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use mcp_catalog::{GatewayGrant, GatewayOAuth, TokenValidation};
use mcp_key::Secret;
use serde_json::{Value, json};

use super::caller::Caller;
use crate::error::CliError;

/// The longest `Authorization` header value read.
pub(crate) const MAX_AUTHORIZATION_BYTES: usize = 8 * 1024;

/// The path of the Protected Resource Metadata (RFC 9728).
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// How a token is checked.
#[derive(Debug)]
enum Check {
    Jwt(jwt::JwtCheck),
    Introspection(introspect::Introspection),
}

/// The gateway as a resource server: what it requires and how it checks tokens.
#[derive(Debug)]
pub(crate) struct ResourceServer {
    issuer: String,
    resource: String,
    metadata_url: String,
    scopes: Vec<String>,
    groups_claim: String,
    grants: Vec<GatewayGrant>,
    check: Check,
}

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// No bearer token.
    NoToken,
    /// A token (or an `Authorization` value) that is not valid here, and why.
    InvalidToken(&'static str),
    /// A valid token without every required scope.
    InsufficientScope,
    /// The token could not be checked: what went wrong (logged, not shown).
    Unavailable(String),
    /// The client's address asked about too many tokens (introspection): how long until
    /// it may ask again.
    RateLimited(std::time::Duration),
}

impl ResourceServer {
    /// The resource server `config` describes, for a gateway bound at `bound_url` (its
    /// MCP endpoint's URL); a usage error naming the setting otherwise.
    pub(crate) fn new(
        config: &GatewayOAuth,
        grants: &[GatewayGrant],
        bound_url: &str,
    ) -> Result<Self, CliError> {
        let issuer = config.issuer().to_owned();
        fetch::checked(&issuer).map_err(|e| {
            CliError::usage(format!("[gateway.oauth] issuer: {e}")).with_hint(
                "name the authorization server by its https:// issuer URL (http:// only on this machine)",
            )
        })?;
        let resource = config.resource().unwrap_or(bound_url).to_owned();
        let metadata_url = metadata_url(&resource).ok_or_else(|| {
            CliError::usage(format!(
                "[gateway.oauth] resource `{resource}` is not a URL"
            ))
            .with_hint(
                "write the gateway's URL as clients reach it, e.g. https://mcp.example.com/mcp",
            )
        })?;
        let fetcher = fetch::Fetcher::new().map_err(CliError::failure)?;
        let discovery = Arc::new(discovery::Discovery::new(&issuer, fetcher.clone()));
        let check = match config.validation() {
            TokenValidation::Introspection(settings) => {
                let var = settings.client_secret_env();
                let secret = std::env::var(var)
                    .ok()
                    .filter(|s| !s.is_empty())
                    .ok_or_else(|| {
                        CliError::usage(format!(
                            "[gateway.oauth] client_secret_env: ${var} is not set"
                        ))
                        .with_hint(format!(
                            "set {var} to the client secret of `{}` at the authorization server",
                            settings.client_id()
                        ))
                    })?;
                Check::Introspection(introspect::Introspection::new(
                    Arc::clone(&discovery),
                    fetcher,
                    settings.endpoint().map(str::to_owned),
                    (settings.client_id().to_owned(), Secret::new(secret)),
                    (issuer.clone(), resource.clone()),
                ))
            }
            // `TokenValidation` is non-exhaustive: anything else is a JWT.
            _ => Check::Jwt(jwt::JwtCheck {
                keys: keys::keys(discovery, fetcher),
                issuer: issuer.clone(),
                resource: resource.clone(),
                algorithms: jwt::algorithms(config.algorithms()),
            }),
        };
        Ok(Self {
            issuer,
            resource,
            metadata_url,
            scopes: config.scopes().to_vec(),
            groups_claim: config.groups_claim().to_owned(),
            grants: grants.to_vec(),
            check,
        })
    }

    /// The gateway's resource URL.
    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the Protected Resource Metadata, as clients see it.
    pub(crate) fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The Protected Resource Metadata document (RFC 9728).
    pub(crate) fn metadata(&self) -> Value {
        let mut document = json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": "mcpctl serve",
        });
        if !self.scopes.is_empty() {
            document["scopes_supported"] = json!(self.scopes);
        }
        document
    }

    /// The caller of a request with these headers from `client` (its address, when
    /// known), or why it is refused.
    ///
    /// # Cancel safety
    /// Cancel-safe: nothing is left half done (a key set read given up is read again).
    pub(crate) async fn authenticate(
        &self,
        headers: &HeaderMap,
        client: Option<std::net::IpAddr>,
    ) -> Result<Caller, Refusal> {
        let token = bearer_token(headers)?;
        let claims = match &self.check {
            Check::Jwt(check) => check.claims(token).await,
            Check::Introspection(check) => check.claims(token, client).await,
        }
        .map_err(|rejection| match rejection {
            jwt::Rejection::Invalid(why) => Refusal::InvalidToken(why),
            jwt::Rejection::Unavailable(e) => Refusal::Unavailable(e),
            jwt::Rejection::Limited(wait) => Refusal::RateLimited(wait),
        })?;
        let subject = claims
            .get("sub")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or(Refusal::InvalidToken("the token has no subject"))?
            .to_owned();
        let scopes = words(claims.get("scope").or_else(|| claims.get("scp")));
        if !self.scopes.iter().all(|s| scopes.contains(s)) {
            return Err(Refusal::InsufficientScope);
        }
        let groups = words(claims.get(&self.groups_claim));
        // The token stays with the caller for `upstream_identity = "exchange"` servers.
        Ok(Caller::from_token(subject, groups, scopes, &self.grants)
            .with_token(mcp_key::Secret::new(token.to_owned())))
    }

    /// The answer to a refused request.
    pub(crate) fn refuse(&self, refusal: &Refusal) -> Response {
        let metadata = &self.metadata_url;
        let (status, challenge, text) = match refusal {
            Refusal::NoToken => (
                StatusCode::UNAUTHORIZED,
                format!("Bearer resource_metadata=\"{metadata}\""),
                "a bearer token from the team's authorization server is required".to_owned(),
            ),
            Refusal::InvalidToken(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    "Bearer error=\"invalid_token\", error_description=\"{why}\", resource_metadata=\"{metadata}\""
                ),
                format!("{why}; log in again"),
            ),
            Refusal::InsufficientScope => (
                StatusCode::FORBIDDEN,
                format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{metadata}\"",
                    self.scopes.join(" ")
                ),
                format!(
                    "the token lacks a scope this gateway requires ({})",
                    self.scopes.join(" ")
                ),
            ),
            Refusal::RateLimited(wait) => {
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                let text =
                    "mcpctl serve: too many tokens to check from this address; try again shortly\n";
                return (
                    StatusCode::TOO_MANY_REQUESTS,
                    [(header::RETRY_AFTER, secs.max(1).to_string())],
                    text,
                )
                    .into_response();
            }
            Refusal::Unavailable(e) => {
                tracing::warn!("a token could not be checked: {e}");
                let text = "mcpctl serve: the authorization server could not be reached to check the token; try again shortly\n";
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(header::RETRY_AFTER, "5")],
                    text,
                )
                    .into_response();
            }
        };
        let mut response = (status, format!("mcpctl serve: {text}\n")).into_response();
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// The unguarded routes of the Protected Resource Metadata: [`METADATA_PATH`], its
/// form suffixed with the MCP endpoint's path (`mcp_path`), and with the configured
/// resource's path when that differs (a proxy in front that keeps the path).
pub(crate) fn routes(server: Arc<ResourceServer>, mcp_path: &str) -> axum::Router {
    let document = axum::Json(server.metadata());
    let mut paths = vec![
        METADATA_PATH.to_owned(),
        format!("{METADATA_PATH}{mcp_path}"),
    ];
    if let Ok(url) = reqwest::Url::parse(&server.resource) {
        let own = format!("{METADATA_PATH}{}", url.path().trim_end_matches('/'));
        if !paths.contains(&own) {
            paths.push(own);
        }
    }
    paths.into_iter().fold(axum::Router::new(), |router, path| {
        let document = document.clone();
        router.route(&path, axum::routing::get(move || async move { document }))
    })
}

/// The bearer token of the request's one `Authorization` header.
fn bearer_token(headers: &HeaderMap) -> Result<&str, Refusal> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(Refusal::NoToken);
    };
    if values.next().is_some() {
        return Err(Refusal::InvalidToken(
            "the request has several Authorization headers",
        ));
    }
    if value.len() > MAX_AUTHORIZATION_BYTES {
        return Err(Refusal::InvalidToken(
            "the Authorization header is too long",
        ));
    }
    let text = value
        .to_str()
        .map_err(|_| Refusal::InvalidToken("the Authorization header is not text"))?;
    let Some((scheme, token)) = text.split_once(' ') else {
        return Err(if text.eq_ignore_ascii_case("bearer") {
            Refusal::InvalidToken("the Authorization header has no token")
        } else {
            Refusal::NoToken
        });
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme is no bearer token at all (RFC 6750 3.1: no error code).
        return Err(Refusal::NoToken);
    }
    let token = token.trim_matches(' ');
    // RFC 6750 2.1: b64token characters only.
    let b64token = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    if token.is_empty() || !token.chars().all(b64token) {
        return Err(Refusal::InvalidToken("the bearer token is malformed"));
    }
    Ok(token)
}

/// Strings of a claim: an array of strings, or one space-separated string.
fn words(claim: Option<&Value>) -> Vec<String> {
    match claim {
        Some(Value::String(text)) => text.split_whitespace().map(str::to_owned).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The Protected Resource Metadata URL of `resource` (RFC 9728 section 3.1: the
/// well-known segment between the host and the resource's path).
fn metadata_url(resource: &str) -> Option<String> {
    let url = reqwest::Url::parse(resource).ok()?;
    // A URL without a host (`data:`, `file:///x`) names no resource.
    url.host()?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    Some(format!("{origin}{METADATA_PATH}{path}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for value in values {
            map.append(
                header::AUTHORIZATION,
                HeaderValue::from_bytes(value).unwrap(),
            );
        }
        map
    }

    #[test]
    fn malformed_authorization_headers_are_refused_without_a_panic() {
        assert_eq!(bearer_token(&headers(&[])), Err(Refusal::NoToken));
        assert_eq!(
            bearer_token(&headers(&[b"Basic abc"])),
            Err(Refusal::NoToken)
        );
        assert_eq!(
            bearer_token(&headers(&[b"Bearer abc.def-_~+/="])),
            Ok("abc.def-_~+/=")
        );
        assert_eq!(bearer_token(&headers(&[b"bearer abc"])), Ok("abc"));
        for bad in [
            &b"Bearer"[..],
            b"Bearer ",
            b"Bearer a b",
            b"Bearer a,b",
            b"Bearer \"quoted\"",
            b"Bearer \xff\xfe",
        ] {
            assert!(
                matches!(
                    bearer_token(&headers(&[bad])),
                    Err(Refusal::InvalidToken(_))
                ),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert!(matches!(
            bearer_token(&headers(&[b"Bearer a", b"Bearer b"])),
            Err(Refusal::InvalidToken(_))
        ));
        let long = format!("Bearer {}", "a".repeat(MAX_AUTHORIZATION_BYTES));
        assert_eq!(
            bearer_token(&headers(&[long.as_bytes()])),
            Err(Refusal::InvalidToken(
                "the Authorization header is too long"
            ))
        );
    }

    #[test]
    fn the_metadata_url_puts_the_well_known_segment_before_the_path() {
        assert_eq!(
            metadata_url("https://mcp.example.com/mcp").as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8931/").as_deref(),
            Some("http://127.0.0.1:8931/.well-known/oauth-protected-resource")
        );
        assert_eq!(metadata_url("not a url"), None);
    }

    #[test]
    fn claims_of_either_shape_are_words() {
        assert_eq!(words(Some(&json!("a b  c"))), ["a", "b", "c"]);
        assert_eq!(words(Some(&json!(["a", 1, "b"]))), ["a", "b"]);
        assert!(words(Some(&json!(7))).is_empty());
        assert!(words(None).is_empty());
    }
}
