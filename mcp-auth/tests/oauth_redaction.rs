//! No token, refresh token, authorization code or server error text appears in `Debug`,
//! `Display` or tracing output (captured at TRACE level, rmcp's included).

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

mod oauth_fake;

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    CredentialStore, HeadlessAgent, MemoryStore, OAuthCredentials, OAuthSettings, login,
};
use mcp_key::McpServerKey;
use oauth_fake::{Config, FakeAs};

const PLANTED: &str = "PLANTED-SECRET";

fn assert_clean(what: &str, text: &str) {
    for needle in [PLANTED, "SENSITIVE-DESCRIPTION"] {
        assert!(!text.contains(needle), "{what} leaks `{needle}`:\n{text}");
    }
}

#[tokio::test]
async fn tokens_never_reach_debug_display_or_logs() {
    let (capture, _guard) = mcp_testkit::capture_logs();

    let fake = FakeAs::start(Config {
        token_prefix: PLANTED.into(),
        expires_in: 10,
        ..Config::default()
    })
    .await;
    let store = Arc::new(MemoryStore::new());
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        fake.mcp_url(),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        store.clone(),
    );
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    let token = creds.access_token().await.unwrap(); // refreshes (expires in 10 s)
    assert!(
        token.expose().starts_with(PLANTED),
        "the planted token is really in use"
    );
    fake.set(|c| c.reject_refresh = true);
    let err = creds.refresh_after_unauthorized(&token).await.unwrap_err();
    let record = store.load(creds.store_key()).await.unwrap();
    tracing::info!(?record, ?creds, error = %err, "end of test");

    let logs = capture.text();
    assert!(logs.contains("end of test"), "the capture works");
    assert_clean("tracing output", &logs);
    // rmcp logs the one-time authorization code at DEBUG (`rmcp::transport::auth`); it is
    // useless without the PKCE verifier, which must never appear.
    let verifier = fake.seen(|s| s.last_code_verifier.clone()).unwrap();
    assert!(
        !logs.contains(&verifier),
        "tracing output leaks the PKCE verifier"
    );
    assert_clean("error Display", &err.to_string());
    assert_clean("error Debug", &format!("{err:?}"));
    assert_clean("credentials Debug", &format!("{creds:?}"));
    assert_clean("record Debug", &format!("{record:?}"));
    assert_clean("token Debug/Display", &format!("{token:?} {token}"));
}
