//! The 2025-03-26 interoperability rule: a differing issuer is accepted only on the legacy
//! path (no protected-resource metadata) and only within the MCP server's origin.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthError, AuthStatus, HeadlessAgent, MemoryStore, OAuthCredentials, OAuthSettings, login,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario,
};
use pretty_assertions::assert_eq;

/// An MCP server whose origin is also its authorization server, as in 2025-03-26.
struct Fake {
    auth: FakeAuthServer,
    mcp: FakeProtectedMcpServer,
}

impl Fake {
    /// The shared origin, `http://127.0.0.1:<port>`.
    fn origin(&self) -> String {
        self.auth.url()
    }

    fn port(&self) -> u16 {
        self.mcp.addr().port()
    }
}

fn creds(fake: &Fake) -> OAuthCredentials {
    OAuthCredentials::new(
        "legacy".parse::<McpServerKey>().unwrap(),
        fake.mcp.url(),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        Arc::new(MemoryStore::new()),
    )
}

/// A 2025-03-26 server: its authorization server on its origin, naming itself
/// `<origin>/oauth`; with `resource_metadata`, a server that publishes RFC 9728 metadata
/// (which makes it a modern server).
async fn legacy_fake(resource_metadata: bool) -> Fake {
    let auth = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let mut options = ProtectedOptions::new().with_same_origin_auth_server();
    if !resource_metadata {
        options = options.without_resource_metadata();
    }
    let mcp = FakeProtectedMcpServer::start(Scenario::new("legacy"), &auth, options)
        .await
        .unwrap();
    let fake = Fake { auth, mcp };
    assert!(fake.mcp.url().starts_with(&fake.origin()));
    fake.auth
        .set_issuer_override(Some(&format!("{}/oauth", fake.origin())));
    fake
}

async fn login_with_probe(creds: &OAuthCredentials) -> Result<(), AuthError> {
    let challenge = creds.probe().await?;
    login(creds, &HeadlessAgent::new(), challenge.as_deref()).await
}

#[tokio::test]
async fn a_same_origin_issuer_of_a_legacy_server_is_accepted_and_pinned() {
    let fake = legacy_fake(false).await;
    let creds = creds(&fake);
    let (logs, guard) = mcp_testkit::capture_logs();
    login_with_probe(&creds).await.unwrap();
    drop(guard);
    assert_eq!(creds.status().await, AuthStatus::OAuth);
    let issuer = format!("{}/oauth", fake.origin());
    // A security warning, which a CLI shows by default.
    let text = logs.text();
    assert!(
        text.contains("WARN mcp_auth::security: accepting a 2025-03-26 authorization server"),
        "{text}"
    );
    // The accepted issuer is what the callback's `iss` is checked against.
    fake.auth.set_iss_parameter_value(Some(&fake.origin()));
    let err = login_with_probe(&creds).await.unwrap_err();
    match err {
        AuthError::IssuerMismatch { expected, .. } => assert_eq!(expected, issuer),
        other => panic!("expected an issuer mismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn a_cross_origin_issuer_of_a_legacy_server_is_rejected() {
    let fake = legacy_fake(false).await;
    let port = fake.port();
    fake.auth
        .set_issuer_override(Some(&format!("http://localhost:{port}/oauth")));
    let err = login_with_probe(&creds(&fake)).await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    assert!(fake.auth.authorize_requests().is_empty());
}

#[tokio::test]
async fn a_legacy_server_naming_a_cross_origin_token_endpoint_is_rejected() {
    let fake = legacy_fake(false).await;
    let port = fake.port();
    fake.auth
        .set_token_endpoint_override(Some(&format!("http://localhost:{port}/token")));
    let err = login_with_probe(&creds(&fake)).await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
}

#[tokio::test]
async fn a_server_with_resource_metadata_keeps_the_strict_issuer_check() {
    let fake = legacy_fake(true).await;
    let err = login_with_probe(&creds(&fake)).await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    assert!(fake.auth.authorize_requests().is_empty());
}
