//! No token, refresh token, authorization code or server error text appears in `Debug`,
//! `Display` or tracing output (captured at TRACE level, rmcp's included).

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    CredentialStore, HeadlessAgent, MemoryStore, OAuthCredentials, OAuthSettings, login,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario,
};

/// Planted by the authorization server in every token and every error description.
const PLANTED: &str = "PLANTED-SECRET";

fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(PLANTED), "{what} leaks `{PLANTED}`:\n{text}");
}

#[tokio::test]
async fn tokens_never_reach_debug_display_or_logs() {
    let (capture, _guard) = mcp_testkit::capture_logs();

    let auth = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_planted_secret(PLANTED)
            .with_token_lifetime(Duration::from_secs(10)),
    )
    .await
    .unwrap();
    let mcp =
        FakeProtectedMcpServer::start(Scenario::new("tickets"), &auth, ProtectedOptions::new())
            .await
            .unwrap();
    let store = Arc::new(MemoryStore::new());
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        mcp.url(),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        store.clone(),
    );
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    let token = creds.access_token().await.unwrap(); // refreshes (expires in 10 s)
    assert!(
        token.expose().starts_with(PLANTED),
        "the planted token is really in use"
    );
    assert_eq!(auth.counters().refresh_token, 1);
    // The next refresh is refused, with the planted value in its description.
    auth.fail_next_refreshes(1);
    let err = creds.refresh_after_unauthorized(&token).await.unwrap_err();
    assert_eq!(auth.counters().token_errors, 1, "the error was really sent");
    let record = store.load(creds.store_key()).await.unwrap();
    tracing::info!(?record, ?creds, error = %err, "end of test");

    let logs = capture.text();
    assert!(logs.contains("end of test"), "the capture works");
    assert_clean("tracing output", &logs);
    // rmcp logs the one-time authorization code at DEBUG (`rmcp::transport::auth`); it is
    // useless without the PKCE verifier, which must never appear.
    let verifier = auth
        .token_requests()
        .iter()
        .find(|form| form.get("grant_type").map(String::as_str) == Some("authorization_code"))
        .and_then(|form| form.get("code_verifier").cloned())
        .unwrap();
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
