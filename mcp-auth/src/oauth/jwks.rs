//! The signature of the enterprise IdP's ID token, checked against the IdP's JSON Web Key
//! Set (`jwks_uri` of its metadata). Key sets are kept per URI for the process in a
//! [`KeySetCache`] (the one home of the rules: read again after its TTL, a rotated key
//! fetched once, made-up key ids costing at most one read per interval).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use jsonwebtoken::jwk::JwkSet;
use mcp_key::McpServerKey;

use super::http::{self as oauth_http, bounded_body, check_endpoint};
use super::key_set::{KeyProblem, KeySetCache, KeySetSource, KeySetTiming};
use crate::error::AuthError;

/// The IdPs' key sets, per JWKS URI.
static CACHES: LazyLock<Mutex<HashMap<String, Arc<KeySetCache<IdpKeys>>>>> =
    LazyLock::new(Mutex::default);

/// An IdP's key set at its `jwks_uri`.
struct IdpKeys {
    /// The server whose login first needed the set (named in errors).
    server: McpServerKey,
    uri: String,
}

impl KeySetSource for IdpKeys {
    async fn read(&self) -> Result<JwkSet, String> {
        let what = "the identity provider's JWKS";
        let url = check_endpoint(&self.server, "JWKS URI", &self.uri).map_err(|e| e.to_string())?;
        let http = oauth_http::client(&self.server).map_err(|e| e.to_string())?;
        let response = http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| format!("{what} at {}: {e}", self.uri))?;
        let status = response.status();
        let body = bounded_body(&self.server, what, response)
            .await
            .map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!("{what} at {}: HTTP {}", self.uri, status.as_u16()));
        }
        serde_json::from_slice(&body)
            .map_err(|_| format!("{what} at {} is not a key set", self.uri))
    }
}

/// The kept key set of `uri`.
fn cache(server: &McpServerKey, uri: &str) -> Arc<KeySetCache<IdpKeys>> {
    let mut caches = CACHES.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(caches.entry(uri.to_owned()).or_insert_with(|| {
        Arc::new(KeySetCache::new(
            IdpKeys {
                server: server.clone(),
                uri: uri.to_owned(),
            },
            KeySetTiming::default(),
        ))
    }))
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
    let jwk = cache(server, jwks_uri)
        .key(header.kid.as_deref())
        .await
        .map_err(|problem| match problem {
            KeyProblem::Unavailable(e) => AuthError::Http {
                server: server.clone(),
                what: e,
                source: None,
            },
            _ => invalid("its signing key is not in the identity provider's JWKS"),
        })?;
    let key = jsonwebtoken::DecodingKey::from_jwk(&jwk)
        .map_err(|_| invalid("the identity provider's key is unusable"))?;
    let mut validation = jsonwebtoken::Validation::new(header.alg);
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[client_id]);
    jsonwebtoken::decode::<serde_json::Value>(jwt, &key, &validation)
        .map(|_| ())
        .map_err(|_| invalid("its signature does not verify with the identity provider's key"))
}
