//! Step-up after 403 `insufficient_scope`: the union of scopes, no pointless re-login, and
//! a bounded number of attempts.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

mod oauth_fake;

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthError, HeadlessAgent, MAX_STEP_UP_ATTEMPTS, MemoryStore, OAuthCredentials, OAuthSettings,
    login,
};
use mcp_key::McpServerKey;
use oauth_fake::{Config, FakeAs};
use pretty_assertions::assert_eq;

async fn logged_in_with(scopes: &[&str]) -> (FakeAs, OAuthCredentials) {
    let fake = FakeAs::start(Config::default()).await;
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        fake.mcp_url(),
        OAuthSettings::new()
            .with_scopes(scopes.iter().copied())
            .with_login_timeout(Duration::from_secs(10)),
        Arc::new(MemoryStore::new()),
    );
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    (fake, creds)
}

fn challenge(scope: &str) -> String {
    format!("Bearer error=\"insufficient_scope\", scope=\"{scope}\"")
}

fn authorize_count(fake: &FakeAs) -> usize {
    fake.seen(|s| s.authorize_queries.len())
}

#[tokio::test]
async fn step_up_asks_for_the_union_of_granted_and_required_scopes() {
    let (fake, creds) = logged_in_with(&["read"]).await;
    creds
        .step_up(&HeadlessAgent::new(), &challenge("write"))
        .await
        .unwrap();
    let query = fake.seen(|s| s.authorize_queries.last().unwrap().clone());
    assert_eq!(query["scope"], "read write");
    assert_eq!(creds.access_token().await.unwrap().expose(), "tok-access-4");
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
