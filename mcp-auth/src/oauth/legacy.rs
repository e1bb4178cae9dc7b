//! Interoperability with 2025-03-26 servers whose metadata names an issuer other than the
//! URL it was fetched from.
//!
//! # The rule
//!
//! rmcp checks RFC 8414 section 3.3 strictly: the `issuer` in authorization-server metadata
//! must equal the issuer the metadata URL was derived from. We keep that check for every
//! modern server. We relax it on exactly one path, the 2025-03-26 fallback, where the MCP
//! server publishes no protected-resource metadata and the client fetches
//! `{mcp origin}/.well-known/oauth-authorization-server` because that spec revision said
//! the MCP server's origin *is* the authorization server. Such servers often mount their
//! authorization server under a path (`https://mcp.example/oauth`) and say so in `issuer`.
//!
//! A differing issuer is accepted only if ALL of these hold:
//! 1. the server's challenge carries no `resource_metadata`, and both protected-resource
//!    well-known URLs (path-specific and root) answer with a non-success status, so this
//!    really is the legacy path and not a modern server with a bad document;
//! 2. the issuer rmcp expected is the MCP server's own origin;
//! 3. the metadata served at the origin's well-known URL names that issuer;
//! 4. the issuer, the authorization endpoint, the token endpoint and the registration
//!    endpoint (if any) all share the MCP server's origin (scheme, host, port) — only the
//!    path may differ.
//!
//! Why this is safe: the mix-up attack that the issuer check prevents needs metadata served
//! by one party to send codes or tokens to another. Under rule 4 every endpoint belongs to
//! the origin that already receives the bearer token for MCP requests, so the relaxed
//! document cannot direct anything to a third party. The accepted issuer is then pinned: the
//! RFC 9207 `iss` callback parameter is checked against it and it is stored with the
//! tokens. A cross-origin issuer or endpoint on this path is still an [`AuthError::IssuerMismatch`].

use mcp_key::McpServerKey;
use rmcp::transport::auth::{AuthorizationMetadata, WWWAuthenticateParams};
use url::Url;

use super::http::bounded_body;
use crate::error::AuthError;

fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// Tries to accept `received` as the issuer of a legacy server; see the module docs.
pub(crate) async fn accept_legacy_issuer(
    server: &McpServerKey,
    http: &reqwest::Client,
    mcp_url: &Url,
    challenge: Option<&str>,
    expected: &str,
    received: &str,
) -> Result<AuthorizationMetadata, AuthError> {
    let mismatch = || AuthError::IssuerMismatch {
        server: server.clone(),
        expected: expected.to_owned(),
        received: received.to_owned(),
    };
    // Rule 1: no protected-resource metadata anywhere.
    if let Some(challenge) = challenge
        && WWWAuthenticateParams::parse(challenge, mcp_url)
            .resource_metadata_url
            .is_some()
    {
        return Err(mismatch());
    }
    let origin = mcp_url.origin().ascii_serialization();
    let path = mcp_url.path().trim_end_matches('/');
    let mut prm_urls = vec![format!("{origin}/.well-known/oauth-protected-resource")];
    if !path.is_empty() {
        prm_urls.insert(
            0,
            format!("{origin}/.well-known/oauth-protected-resource{path}"),
        );
    }
    for url in prm_urls {
        let status = http
            .get(&url)
            .send()
            .await
            .map(|r| r.status())
            .map_err(|e| AuthError::Http {
                server: server.clone(),
                what: url.clone(),
                source: Some(Box::new(e)),
            })?;
        if status.is_success() {
            return Err(mismatch());
        }
    }
    // Rule 2: rmcp expected the MCP origin itself.
    let expected_url = Url::parse(expected).map_err(|_| mismatch())?;
    if !same_origin(&expected_url, mcp_url) || !expected_url.path().trim_end_matches('/').is_empty()
    {
        return Err(mismatch());
    }
    // Rule 3: the document at the origin names `received`.
    let metadata_url = format!("{origin}/.well-known/oauth-authorization-server");
    let response = http
        .get(&metadata_url)
        .send()
        .await
        .map_err(|e| AuthError::Http {
            server: server.clone(),
            what: metadata_url.clone(),
            source: Some(Box::new(e)),
        })?;
    if !response.status().is_success() {
        return Err(mismatch());
    }
    let body = bounded_body(server, &metadata_url, response).await?;
    let metadata: AuthorizationMetadata =
        serde_json::from_slice(&body).map_err(|e| AuthError::Discovery {
            server: server.clone(),
            detail: format!("{metadata_url} is not authorization server metadata"),
            source: Some(Box::new(e)),
        })?;
    if metadata.issuer.as_deref() != Some(received) {
        return Err(mismatch());
    }
    // Rule 4: issuer and endpoints on the MCP server's origin.
    let mut urls = vec![
        received,
        metadata.authorization_endpoint.as_str(),
        metadata.token_endpoint.as_str(),
    ];
    urls.extend(metadata.registration_endpoint.as_deref());
    for u in urls {
        let parsed = Url::parse(u).map_err(|_| mismatch())?;
        if !same_origin(&parsed, mcp_url) {
            return Err(mismatch());
        }
    }
    tracing::warn!(
        target: crate::SECURITY_LOG_TARGET,
        server = %server,
        issuer = received,
        "accepting a 2025-03-26 authorization server whose issuer differs from its metadata URL (same origin, no protected-resource metadata)"
    );
    Ok(metadata)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let a = Url::parse("http://127.0.0.1:80/mcp").unwrap();
        assert!(same_origin(
            &a,
            &Url::parse("http://127.0.0.1/oauth").unwrap()
        ));
        assert!(!same_origin(
            &a,
            &Url::parse("https://127.0.0.1/oauth").unwrap()
        ));
        assert!(!same_origin(
            &a,
            &Url::parse("http://127.0.0.1:81/oauth").unwrap()
        ));
        assert!(!same_origin(
            &a,
            &Url::parse("http://localhost/oauth").unwrap()
        ));
    }
}
