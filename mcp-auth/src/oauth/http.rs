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
    if crate::may_carry_credentials(parsed.scheme(), parsed.host_str()) {
        Ok(parsed)
    } else {
        Err(AuthError::Config {
            server: server.clone(),
            detail: format!("the {what} `{url}` must use https (plain http only on loopback)"),
        })
    }
}

/// True when `url` names this machine or a private network by its host: `localhost`,
/// loopback, private (RFC 1918, IPv6 unique local), link-local or unspecified addresses.
/// A DNS name that resolves to such an address is not caught here.
pub(crate) fn is_local_address(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            d.eq_ignore_ascii_case("localhost") || d.to_ascii_lowercase().ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Some(url::Host::Ipv6(ip)) => {
            let first = ip.segments()[0];
            ip.is_loopback()
                || ip.is_unspecified()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || ip.to_ipv4_mapped().is_some_and(|v4| {
                    v4.is_loopback() || v4.is_private() || v4.is_link_local()
                })
        }
        None => false,
    }
}

/// An endpoint that a server's metadata names: as [`check_endpoint`], and, for an MCP
/// server that is not itself local, not on a local address (a remote server's metadata
/// must not aim the client's POSTs, with their credentials, at this machine or its
/// network).
pub(crate) fn check_advertised_endpoint(
    server: &McpServerKey,
    what: &str,
    url: &str,
    mcp_url: &Url,
    allow_private: bool,
) -> Result<Url, AuthError> {
    let parsed = check_endpoint(server, what, url)?;
    if !allow_private && !is_local_address(mcp_url) && is_local_address(&parsed) {
        return Err(AuthError::Config {
            server: server.clone(),
            detail: format!(
                "the {what} `{url}` that the remote server's metadata names is on a local or private address; refused (a host that means it sets `OAuthSettings::with_allow_private_addresses`)"
            ),
        });
    }
    Ok(parsed)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn local_and_private_hosts_are_told_apart_from_public_ones() {
        for local in [
            "http://localhost/",
            "http://app.localhost/",
            "http://127.0.0.1/",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert!(is_local_address(&url(local)), "{local}");
        }
        for public in [
            "https://auth.example.com/",
            "https://8.8.8.8/",
            "https://[2001:db8::1]/",
        ] {
            assert!(!is_local_address(&url(public)), "{public}");
        }
    }

    #[test]
    fn a_remote_server_cannot_aim_its_endpoints_at_local_addresses() {
        let server = McpServerKey::unscoped("remote".parse().unwrap());
        let remote = url("https://mcp.example.com/mcp");
        let local = url("http://127.0.0.1:8080/mcp");
        let aimed = "https://169.254.169.254/latest/meta-data";
        assert!(
            check_advertised_endpoint(&server, "token endpoint", aimed, &remote, false).is_err()
        );
        assert!(check_advertised_endpoint(&server, "token endpoint", aimed, &remote, true).is_ok());
        assert!(
            check_advertised_endpoint(
                &server,
                "token endpoint",
                "http://127.0.0.1:9/t",
                &local,
                false
            )
            .is_ok()
        );
        assert!(
            check_advertised_endpoint(
                &server,
                "token endpoint",
                "https://auth.example.com/t",
                &remote,
                false
            )
            .is_ok()
        );
    }
}
