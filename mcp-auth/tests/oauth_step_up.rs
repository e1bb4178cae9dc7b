//! Step-up after 403 `insufficient_scope`: the union of scopes, no pointless re-login, and
//! a bounded number of attempts.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthError, HeadlessAgent, MAX_STEP_UP_ATTEMPTS, MemoryStore, OAuthCredentials, OAuthSettings,
    login,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario,
};
use pretty_assertions::assert_eq;

/// The testkit's authorization server and an MCP server behind it, for one test.
struct Fake {
    auth: FakeAuthServer,
    _mcp: FakeProtectedMcpServer,
}

/// Every scope the tests ask for (and no `offline_access`, which a login adds when the
/// authorization server lists it).
const SCOPES: &[&str] = &["read", "write", "s0", "s1", "s2", "s3", "more"];

async fn logged_in_with(scopes: &[&str]) -> (Fake, OAuthCredentials) {
    let auth = FakeAuthServer::start(AuthServerOptions::new().with_scopes(SCOPES.iter().copied()))
        .await
        .unwrap();
    let mcp =
        FakeProtectedMcpServer::start(Scenario::new("tickets"), &auth, ProtectedOptions::new())
            .await
            .unwrap();
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        mcp.url(),
        OAuthSettings::new()
            .with_scopes(scopes.iter().copied())
            .with_login_timeout(Duration::from_secs(10)),
        Arc::new(MemoryStore::new()),
    );
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    (Fake { auth, _mcp: mcp }, creds)
}

fn challenge(scope: &str) -> String {
    format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\"")
}

fn authorize_count(fake: &Fake) -> usize {
    fake.auth.authorize_requests().len()
}

#[tokio::test]
async fn step_up_asks_for_the_union_of_granted_and_required_scopes() {
    let (fake, creds) = logged_in_with(&["read"]).await;
    creds
        .step_up(&HeadlessAgent::new(), &challenge("write"))
        .await
        .unwrap();
    let query = fake.auth.authorize_requests().last().unwrap().clone();
    assert_eq!(query["scope"], "read write");
    // The token in use is the one the step-up login got, with both scopes.
    let issued = fake.auth.issued_access_tokens();
    assert_eq!(issued.len(), 2);
    let token = creds.access_token().await.unwrap();
    assert_eq!(token.expose(), issued[1]);
    assert_eq!(
        fake.auth.token_info(token.expose()).unwrap().scopes,
        vec!["read".to_owned(), "write".to_owned()]
    );
}

#[tokio::test]
async fn step_up_for_scopes_already_granted_fails_without_a_login() {
    let (fake, creds) = logged_in_with(&["read", "write"]).await;
    let err = creds
        .step_up(&HeadlessAgent::new(), &challenge("write"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AuthError::InsufficientScope { scope, .. } if scope == "write"),
        "{err:?}"
    );
    assert!(err.is_auth_required());
    assert_eq!(authorize_count(&fake), 1);
}

#[tokio::test]
async fn step_up_stops_after_the_attempt_limit_until_reset() {
    let (fake, creds) = logged_in_with(&["s0"]).await;
    for i in 1..=MAX_STEP_UP_ATTEMPTS {
        creds
            .step_up(&HeadlessAgent::new(), &challenge(&format!("s{i}")))
            .await
            .unwrap();
    }
    let err = creds
        .step_up(&HeadlessAgent::new(), &challenge("more"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, AuthError::InsufficientScope { .. }),
        "{err:?}"
    );
    // The first login plus the step-ups: at most 3 authorization requests.
    assert_eq!(authorize_count(&fake), 1 + MAX_STEP_UP_ATTEMPTS as usize);
    assert!(authorize_count(&fake) <= 3);
    creds.reset_step_up();
    creds
        .step_up(&HeadlessAgent::new(), &challenge("more"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_challenge_that_is_not_insufficient_scope_is_not_a_step_up() {
    let (fake, creds) = logged_in_with(&[]).await;
    let err = creds
        .step_up(&HeadlessAgent::new(), "Bearer error=\"invalid_token\"")
        .await
        .unwrap_err();
    assert!(
        matches!(err, AuthError::InsufficientScope { .. }),
        "{err:?}"
    );
    assert_eq!(authorize_count(&fake), 1);
}
