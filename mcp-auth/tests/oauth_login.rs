//! Interactive login against the testkit's authorization server, through the loopback
//! callback and the headless agent.

#![allow(clippy::unwrap_used, reason = "test helpers fail fast")]

use std::sync::Arc;
use std::time::Duration;

use mcp_auth::{
    AuthError, AuthStatus, CredentialStore, HeadlessAgent, MemoryStore, OAuthCredentials,
    OAuthSettings, login,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario,
};
use pretty_assertions::assert_eq;

/// The testkit's authorization server and an MCP server behind it, for one test.
struct Fake {
    auth: FakeAuthServer,
    mcp: FakeProtectedMcpServer,
}

impl Fake {
    async fn start(auth: AuthServerOptions) -> Self {
        Self::start_with(auth, ProtectedOptions::new()).await
    }

    async fn start_with(auth: AuthServerOptions, protected: ProtectedOptions) -> Self {
        let auth = FakeAuthServer::start(auth).await.unwrap();
        let mcp = FakeProtectedMcpServer::start(Scenario::new("tickets"), &auth, protected)
            .await
            .unwrap();
        Self { auth, mcp }
    }

    /// Token requests of the authorization-code grant (successful or not).
    fn code_exchanges(&self) -> u64 {
        self.auth.counters().authorization_code
    }

    /// The id of the one client that registered itself.
    fn registered_client(&self) -> String {
        let clients = self.auth.clients();
        assert_eq!(clients.len(), 1, "{clients:?}");
        clients[0].client_id.clone()
    }
}

fn creds(fake: &Fake, store: Arc<dyn CredentialStore>) -> OAuthCredentials {
    OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        fake.mcp.url(),
        OAuthSettings::new().with_login_timeout(Duration::from_secs(10)),
        store,
    )
}

async fn stored(
    store: &MemoryStore,
    creds: &OAuthCredentials,
) -> Option<mcp_auth::StoredCredentials> {
    store.load(creds.store_key()).await.unwrap()
}

#[tokio::test]
async fn headless_login_through_the_loopback_callback_stores_tokens() {
    let fake = Fake::start(AuthServerOptions::new()).await;
    let store = Arc::new(MemoryStore::new());
    let creds = creds(&fake, store.clone());
    assert_eq!(creds.status().await, AuthStatus::LoginRequired);
    assert!(creds.access_token().await.unwrap_err().is_login_required());

    let challenge = creds
        .probe()
        .await
        .unwrap()
        .expect("the fake MCP endpoint answers 401");
    assert!(challenge.contains("resource_metadata="));
    login(&creds, &HeadlessAgent::new(), Some(&challenge))
        .await
        .unwrap();

    assert_eq!(creds.status().await, AuthStatus::OAuth);
    // The one token the server issued, used without a refresh.
    let token = creds.access_token().await.unwrap();
    assert_eq!(
        fake.auth.issued_access_tokens(),
        vec![token.expose().to_owned()]
    );
    let record = stored(&store, &creds).await.unwrap();
    assert_eq!(record.client_id, fake.registered_client());
    assert_eq!(
        record.token_endpoint.as_deref(),
        Some(fake.auth.token_endpoint().as_str())
    );
    assert_eq!(record.issuer.as_deref(), Some(fake.auth.issuer().as_str()));
    let refresh = record.refresh_token.as_ref().map(|s| s.expose().to_owned());
    assert_eq!(
        refresh.into_iter().collect::<Vec<_>>(),
        fake.auth.valid_refresh_tokens()
    );
    assert_eq!(record.resource.as_deref(), Some(fake.mcp.url().as_str()));

    let query = fake.auth.authorize_requests()[0].clone();
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["resource"], fake.mcp.url());
    assert!(query["redirect_uri"].starts_with("http://127.0.0.1:"));
    assert_eq!(fake.code_exchanges(), 1);

    creds.logout().await.unwrap();
    assert_eq!(creds.status().await, AuthStatus::LoginRequired);
}

#[tokio::test]
async fn begin_login_returns_the_url_at_once_and_a_second_login_reuses_the_client() {
    let fake = Fake::start(AuthServerOptions::new()).await;
    let store = Arc::new(MemoryStore::new());
    let creds = creds(&fake, store.clone());
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();

    let pending = creds.begin_login(None).await.unwrap();
    assert!(
        pending
            .authorization_url()
            .starts_with(&format!("{}?", fake.auth.authorization_endpoint()))
    );
    assert!(pending.redirect_uri().starts_with("http://127.0.0.1:"));
    let client_id = format!("client_id={}", fake.registered_client());
    assert!(pending.authorization_url().contains(&client_id));
    // The callback has not arrived yet; the agent delivers it.
    let url = pending.authorization_url().to_owned();
    use mcp_auth::UserAgent;
    HeadlessAgent::new().open(&url).await.unwrap();
    pending.complete().await.unwrap();
    assert_eq!(fake.auth.counters().registrations, 1);
}

#[tokio::test]
async fn a_callback_with_another_state_is_ignored_and_the_login_times_out() {
    let fake = Fake::start(AuthServerOptions::new().with_state_override("forged")).await;
    let store = Arc::new(MemoryStore::new());
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        fake.mcp.url(),
        OAuthSettings::new().with_login_timeout(Duration::from_millis(500)),
        store.clone(),
    );
    let err = login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Timeout { .. }), "{err:?}");
    assert_eq!(fake.code_exchanges(), 0);
    assert_eq!(stored(&store, &creds).await, None);
}

/// Any local process can reach the loopback callback: requests without the pending login's
/// state get a 400 that echoes nothing, and neither end nor fail the login.
#[tokio::test]
async fn foreign_callbacks_get_400_and_the_login_waits_for_its_own() {
    let fake = Fake::start(AuthServerOptions::new()).await;
    let store = Arc::new(MemoryStore::new());
    let creds = creds(&fake, store.clone());
    let pending = creds.begin_login(None).await.unwrap();
    let callback = pending.redirect_uri().to_owned();
    let url = pending.authorization_url().to_owned();
    let state = url::Url::parse(&url)
        .unwrap()
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
        .unwrap();
    let waiting = tokio::spawn(pending.complete());

    let planted = "planted-foreign-value";
    let almost = &state[..state.len() - 1];
    let foreign = [
        format!("code={planted}&state=wrong"),
        format!("error=access_denied&error_description={planted}&state=wrong"),
        format!("code={planted}"),
        "error=access_denied".to_owned(),
        format!("code={planted}&state="),
        format!("code={planted}&state={almost}"),
    ];
    let http = reqwest::Client::new();
    for query in &foreign {
        let response = http
            .get(format!("{callback}?{query}"))
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            reqwest::StatusCode::BAD_REQUEST,
            "{query}"
        );
        let page = response.text().await.unwrap();
        assert!(page.contains("was ignored"), "{page}");
        assert!(!page.contains(planted) && !page.contains(&state), "{page}");
    }
    assert!(!waiting.is_finished(), "a foreign callback ended the login");

    // The real redirect still completes the login.
    use mcp_auth::UserAgent;
    HeadlessAgent::new().open(&url).await.unwrap();
    waiting.await.unwrap().unwrap();
    assert_eq!(creds.status().await, AuthStatus::OAuth);
    assert_eq!(fake.code_exchanges(), 1);
    assert!(stored(&store, &creds).await.is_some());
}

#[tokio::test]
async fn a_callback_iss_other_than_the_issuer_is_rejected() {
    let fake =
        Fake::start(AuthServerOptions::new().with_iss_parameter_value("https://evil.example"))
            .await;
    let store = Arc::new(MemoryStore::new());
    let creds = creds(&fake, store.clone());
    let err = login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap_err();
    match err {
        AuthError::IssuerMismatch {
            expected, received, ..
        } => {
            assert_eq!(expected, fake.auth.issuer());
            assert_eq!(received, "https://evil.example");
        }
        other => panic!("expected an issuer mismatch, got {other:?}"),
    }
    assert_eq!(fake.code_exchanges(), 0);
    assert_eq!(stored(&store, &creds).await, None);
}

#[tokio::test]
async fn a_callback_iss_equal_to_the_issuer_is_accepted() {
    let fake = Fake::start(AuthServerOptions::new()).await;
    fake.auth.set_iss_parameter_value(Some(&fake.auth.issuer()));
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    assert_eq!(creds.status().await, AuthStatus::OAuth);
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_rejected_when_the_server_publishes_resource_metadata() {
    let fake = Fake::start(AuthServerOptions::new()).await;
    // Same origin, under a path: what a 2025-03-26 server may say, refused here.
    fake.auth
        .set_issuer_override(Some(&format!("{}/oauth", fake.auth.url())));
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    let err = login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::IssuerMismatch { .. }), "{err:?}");
    assert!(fake.auth.authorize_requests().is_empty());
}

#[tokio::test]
async fn a_server_without_pkce_s256_is_refused() {
    let fake = Fake::start(AuthServerOptions::new().with_code_challenge_methods(["plain"])).await;
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    let err = login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("S256") || format!("{err:?}").contains("Pkce"),
        "{err:?}"
    );
    assert!(fake.auth.authorize_requests().is_empty());
    assert_eq!(creds.status().await, AuthStatus::LoginRequired);
}

#[tokio::test]
async fn a_login_without_callback_times_out() {
    let fake = Fake::start(AuthServerOptions::new()).await;
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        fake.mcp.url(),
        OAuthSettings::new().with_login_timeout(Duration::from_millis(300)),
        Arc::new(MemoryStore::new()),
    );
    let pending = creds.begin_login(None).await.unwrap();
    let err = pending.complete().await.unwrap_err();
    assert!(matches!(err, AuthError::Timeout { .. }), "{err:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn plain_http_endpoints_off_loopback_are_refused() {
    let fake = Fake::start(AuthServerOptions::new()).await;
    fake.auth
        .set_token_endpoint_override(Some("http://token.example/token"));
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    let err = login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("must use https"), "{err}");
}

#[tokio::test]
async fn an_authorization_error_is_reported_by_its_code_only() {
    let fake = Fake::start(AuthServerOptions::new().with_authorize_error("access_denied")).await;
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    let err = login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap_err();
    assert!(matches!(err, AuthError::Callback { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "MCP server `tickets`: login callback failed: the authorization server answered access_denied"
    );
    assert_eq!(fake.code_exchanges(), 0);
}

#[tokio::test]
async fn the_headless_agent_needs_a_redirect_to_loopback() {
    use mcp_auth::UserAgent;
    let fake = Fake::start(AuthServerOptions::new()).await;
    let no_redirect = fake.auth.metadata_url();
    let err = HeadlessAgent::new().open(&no_redirect).await.unwrap_err();
    assert!(matches!(err, AuthError::Agent { .. }), "{err:?}");
    assert!(err.to_string().contains("without a redirect"), "{err}");
}

#[tokio::test]
async fn rejected_discovered_scopes_are_retried_once_without_scopes() {
    // The resource metadata names scopes; the authorization server supports none, so it
    // answers any request for a scope with `invalid_scope`.
    let fake = Fake::start_with(
        AuthServerOptions::new().with_scopes(Vec::<String>::new()),
        ProtectedOptions::new().with_scopes(["mcp:read", "mcp:write"]),
    )
    .await;
    let creds = creds(&fake, Arc::new(MemoryStore::new()));
    login(&creds, &HeadlessAgent::new(), None).await.unwrap();
    let scopes: Vec<Option<String>> = fake
        .auth
        .authorize_requests()
        .iter()
        .map(|q| q.get("scope").cloned())
        .collect();
    assert_eq!(scopes, vec![Some("mcp:read mcp:write".to_owned()), None]);
}

#[tokio::test]
async fn rejected_configured_scopes_are_not_retried() {
    // `admin` is not among the scopes the authorization server supports.
    let fake = Fake::start(AuthServerOptions::new()).await;
    let creds = OAuthCredentials::new(
        "tickets".parse::<McpServerKey>().unwrap(),
        fake.mcp.url(),
        OAuthSettings::new()
            .with_scopes(["admin"])
            .with_login_timeout(Duration::from_secs(10)),
        Arc::new(MemoryStore::new()),
    );
    let err = login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, AuthError::Callback { code: Some(code), .. } if code == "invalid_scope"),
        "{err:?}"
    );
    assert_eq!(fake.auth.authorize_requests().len(), 1);
}
