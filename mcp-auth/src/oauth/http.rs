//! The HTTP client for OAuth endpoints and small helpers around it.

use std::time::{SystemTime, UNIX_EPOCH};

use mcp_key::McpServerKey;
use url::Url;

use super::settings::DEFAULT_HTTP_TIMEOUT;
use crate::error::AuthError;

/// Largest OAuth response body read (metadata, token responses).
pub(crate) const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// A client that never follows redirects (so credentials never cross origins) and times
/// out after [`DEFAULT_HTTP_TIMEOUT`].
pub(crate) fn client(server: &McpServerKey) -> Result<reqwest::Client, AuthError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(DEFAULT_HTTP_TIMEOUT)
        .build()
        .map_err(|e| AuthError::Http {
            server: server.clone(),
            what: "the OAuth HTTP client setup".to_owned(),
            source: Some(Box::new(e)),
        })
}

/// Reads a response body of at most [`MAX_RESPONSE_BYTES`].
pub(crate) async fn bounded_body(
    server: &McpServerKey,
    what: &str,
    mut response: reqwest::Response,
) -> Result<Vec<u8>, AuthError> {
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err(AuthError::Http {
                        server: server.clone(),
                        what: format!("{what} (response larger than 1 MiB)"),
                        source: None,
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => {
                return Err(AuthError::Http {
                    server: server.clone(),
                    what: what.to_owned(),
                    source: Some(Box::new(e)),
                });
            }
        }
    }
}

/// True for `localhost` and loopback IP literals.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// OAuth endpoints must be https, or http on a loopback address.
pub(crate) fn check_endpoint(
    server: &McpServerKey,
    what: &str,
    url: &str,
) -> Result<Url, AuthError> {
    let parsed = Url::parse(url).map_err(|_| AuthError::Config {
        server: server.clone(),
        detail: format!("the {what} `{url}` is not a valid URL"),
    })?;
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if is_loopback(&parsed) => Ok(parsed),
        _ => Err(AuthError::Config {
            server: server.clone(),
            detail: format!("the {what} `{url}` must use https (plain http only on loopback)"),
        }),
    }
}

/// Seconds since the Unix epoch.
/// Milliseconds since the Unix epoch (0 before it).
pub(crate) fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

pub(crate) fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
