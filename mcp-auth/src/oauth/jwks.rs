//! The signature of the enterprise IdP's ID token, checked against the IdP's JSON Web Key
//! Set (`jwks_uri` of its metadata). Key sets are cached per URI for the process; a token
//! signed with a key the cached set lacks (the IdP rotated its keys) fetches the set once
//! more before it is refused.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use jsonwebtoken::jwk::JwkSet;
use mcp_key::McpServerKey;

use super::http::{self as oauth_http, bounded_body, check_endpoint};
use crate::error::AuthError;

static CACHE: LazyLock<Mutex<HashMap<String, JwkSet>>> = LazyLock::new(Mutex::default);

async fn fetch(server: &McpServerKey, uri: &str) -> Result<JwkSet, AuthError> {
    let url = check_endpoint(server, "JWKS URI", uri)?;
    let http = oauth_http::client(server)?;
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| AuthError::Http {
            server: server.clone(),
            what: "the identity provider's JWKS".to_owned(),
            source: Some(Box::new(e)),
        })?;
    let status = response.status();
    let body = bounded_body(server, "the identity provider's JWKS", response).await?;
    if !status.is_success() {
        return Err(AuthError::Http {
            server: server.clone(),
            what: format!("the identity provider's JWKS (HTTP {})", status.as_u16()),
            source: None,
        });
    }
    let set: JwkSet = serde_json::from_slice(&body).map_err(|_| AuthError::InvalidIdToken {
        server: server.clone(),
        reason: "the identity provider's JWKS is not a key set",
    })?;
    if let Ok(mut cache) = CACHE.lock() {
        cache.insert(uri.to_owned(), set.clone());
    }
    Ok(set)
}

fn find(set: &JwkSet, kid: Option<&str>) -> Option<jsonwebtoken::jwk::Jwk> {
    match kid {
        Some(kid) => set.find(kid).cloned(),
        // Without `kid`, only an unambiguous set will do.
        None if set.keys.len() == 1 => set.keys.first().cloned(),
        None => None,
    }
}

/// Verifies `jwt`'s signature with the key of `jwks_uri` it names (`kid`), plus `iss`,
/// `aud` and `exp` as the signature library checks them.
pub(crate) async fn verify(
    server: &McpServerKey,
    jwks_uri: &str,
    jwt: &str,
    issuer: &str,
    client_id: &str,
) -> Result<(), AuthError> {
    let invalid = |reason: &'static str| AuthError::InvalidIdToken {
        server: server.clone(),
        reason,
    };
    let header =
        jsonwebtoken::decode_header(jwt).map_err(|_| invalid("its header is unreadable"))?;
    let kid = header.kid.as_deref();
    let cached = CACHE
        .lock()
        .ok()
        .and_then(|c| c.get(jwks_uri).and_then(|set| find(set, kid)));
    let jwk = match cached {
        Some(jwk) => jwk,
        // Not cached, or an unknown key: fetch the set (once).
        None => find(&fetch(server, jwks_uri).await?, kid)
            .ok_or_else(|| invalid("its signing key is not in the identity provider's JWKS"))?,
    };
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwk)
        .map_err(|_| invalid("the identity provider's key is unusable"))?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[client_id]);
    jsonwebtoken::decode::<serde_json::Value>(jwt, &key, &validation)
        .map(|_| ())
        .map_err(|_| invalid("its signature does not verify with the identity provider's key"))
}
