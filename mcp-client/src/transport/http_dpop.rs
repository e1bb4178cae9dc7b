//! How a token is presented on one HTTP request: `Authorization: Bearer`, or for a
//! DPoP-bound token (RFC 9449 section 7.1) `Authorization: DPoP` plus a fresh proof in the
//! `DPoP` header, and the resource server's nonce (section 9).
//!
//! rmcp's streamable-HTTP client reports a 401 by its `WWW-Authenticate` value only, so the
//! `DPoP-Nonce` header of a `use_dpop_nonce` answer never reaches us. The nonce is then
//! fetched with a `ping` carrying a proof (side-effect free; the server answers it with the
//! same challenge and its nonce), and the request is retried once with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::{HeaderName, HeaderValue};
use mcp_key::{McpServerKey, Secret};

use crate::settings::auth::{AuthHeaderProvider, CredentialsError};

/// The `DPoP` request header and the `DPoP-Nonce` response header.
const DPOP: &str = "dpop";
const DPOP_NONCE: &str = "dpop-nonce";

/// A token as one request presents it.
pub(crate) struct Presented {
    /// For rmcp's `bearer_auth` (a Bearer token).
    pub(crate) bearer: Option<String>,
    /// Extra headers (the DPoP scheme and proof), marked sensitive.
    pub(crate) headers: HashMap<HeaderName, HeaderValue>,
    /// The token is DPoP-bound.
    pub(crate) bound: bool,
}

impl Presented {
    /// No credentials.
    pub(crate) fn none() -> Self {
        Self {
            bearer: None,
            headers: HashMap::new(),
            bound: false,
        }
    }
}

/// The latest `DPoP-Nonce` a resource server gave (shared by a connection's requests).
pub(crate) type NonceSlot = Arc<Mutex<Option<String>>>;

fn sensitive(value: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// How `token` goes on a `method` request to `uri`.
pub(crate) async fn present(
    provider: &dyn AuthHeaderProvider,
    server: &McpServerKey,
    token: Option<&Secret>,
    method: &str,
    uri: &str,
    nonce: &NonceSlot,
) -> Result<Presented, CredentialsError> {
    let Some(token) = token else {
        return Ok(Presented::none());
    };
    let current = nonce.lock().ok().and_then(|n| n.clone());
    let proof = provider
        .dpop_proof(server, method, uri, token, current.as_deref())
        .await?;
    let Some(proof) = proof else {
        return Ok(Presented {
            bearer: Some(token.expose().to_owned()),
            headers: HashMap::new(),
            bound: false,
        });
    };
    let invalid = || CredentialsError::Unavailable {
        server: server.clone(),
        detail: "the token or its DPoP proof is not a valid header value".to_owned(),
        source: None,
    };
    let mut headers = HashMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        sensitive(&format!("DPoP {}", token.expose())).ok_or_else(invalid)?,
    );
    headers.insert(
        HeaderName::from_static(DPOP),
        sensitive(proof.expose()).ok_or_else(invalid)?,
    );
    Ok(Presented {
        bearer: None,
        headers,
        bound: true,
    })
}

/// Asks the resource server for a DPoP nonce: a `ping` POSTed to `uri` with `token` and a
/// fresh proof, whose answer carries `DPoP-Nonce`. Stores and returns it.
pub(crate) async fn fetch_nonce(
    http: &reqwest::Client,
    provider: &dyn AuthHeaderProvider,
    server: &McpServerKey,
    token: &Secret,
    uri: &str,
    nonce: &NonceSlot,
) -> Option<String> {
    let presented = present(provider, server, Some(token), "POST", uri, nonce)
        .await
        .ok()
        .filter(|p| p.bound)?;
    let mut request = http
        .post(uri)
        .header(http::header::ACCEPT, "application/json, text/event-stream")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(r#"{"jsonrpc":"2.0","id":"dpop-nonce","method":"ping"}"#);
    for (name, value) in presented.headers {
        request = request.header(name, value);
    }
    let response = request.send().await.ok()?;
    let fresh = response
        .headers()
        .get(DPOP_NONCE)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 512)
        .map(str::to_owned)?;
    if let Ok(mut slot) = nonce.lock() {
        *slot = Some(fresh.clone());
    }
    Some(fresh)
}
