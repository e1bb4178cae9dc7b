//! The 2025-03-26 interoperability rule: a differing issuer is accepted only on the legacy
//! path (no protected-resource metadata) and only within the MCP server's origin.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

mod oauth_fake;

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthError, AuthStatus, HeadlessAgent, MemoryStore, OAuthCredentials, OAuthSettings, login,
};
use mcp_key::McpServerKey;
use oauth_fake::{Config, FakeAs};
use pretty_assertions::assert_eq;

fn creds(fake: &FakeAs) -> OAuthCredentials {
    OAuthCredentials::new(
        "legacy".parse::<McpServerKey>().unwrap(),
        fake.mcp_url(),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        Arc::new(MemoryStore::new()),
    )
}

async fn legacy_fake() -> FakeAs {
    let fake = FakeAs::start(Config {
        prm: false,
        ..Config::default()
    })
    .await;
    fake.set(|c| c.issuer = Some(format!("{}/oauth", fake.origin)));
    fake
}

async fn login_with_probe(creds: &OAuthCredentials) -> Result<(), AuthError> {
    let challenge = creds.probe().await?;
    login(creds, &HeadlessAgent::new(), challenge.as_deref()).await
}

#[tokio::test]
async fn a_same_origin_issuer_of_a_legacy_server_is_accepted_and_pinned() {
    let fake = legacy_fake().await;
    let creds = creds(&fake);
    let (logs, guard) = mcp_testkit::capture_logs();
    login_with_probe(&creds).await.unwrap();
    drop(guard);
    assert_eq!(creds.status().await, AuthStatus::OAuth);
    let issuer = format!("{}/oauth", fake.origin);
    // A security warning, which a CLI shows by default.
    let text = logs.text();
    assert!(
        text.contains("WARN mcp_auth::security: accepting a 2025-03-26 authorization server"),
        "{text}"
    );
    // The accepted issuer is what the callback's `iss` is checked against.
    fake.set(|c| c.iss_param = Some(fake.origin.clone()));
    let err = login_with_probe(&creds).await.unwrap_err();
    match err {
        AuthError::IssuerMismatch { expected, .. } => assert_eq!(expected, issuer),
        other => panic!("expected an issuer mismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn a_cross_origin_issuer_of_a_legacy_server_is_rejected() {
    let fake = legacy_fake().await;
    let port = fake.origin.rsplit(':').next().unwrap().to_owned();
    fake.set(|c| c.issuer = Some(format!("http://localhost:{port}/oauth")));
    let err = login_with_probe(&creds(&fake)).await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    assert!(fake.seen(|s| s.authorize_queries.is_empty()));
}

#[tokio::test]
async fn a_legacy_server_naming_a_cross_origin_token_endpoint_is_rejected() {
    let fake = legacy_fake().await;
    let port = fake.origin.rsplit(':').next().unwrap().to_owned();
    fake.set(|c| c.token_endpoint = Some(format!("http://localhost:{port}/token")));
    let err = login_with_probe(&creds(&fake)).await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
}

#[tokio::test]
async fn a_server_with_resource_metadata_keeps_the_strict_issuer_check() {
    let fake = legacy_fake().await;
    fake.set(|c| c.prm = true);
    let err = login_with_probe(&creds(&fake)).await.unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    assert!(fake.seen(|s| s.authorize_queries.is_empty()));
}
