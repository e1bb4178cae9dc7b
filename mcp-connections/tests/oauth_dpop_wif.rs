//! Sender-constrained and workload credentials through the connection set, against the
//! testkit's fake authorization server and token-checking MCP server over loopback:
//! DPoP-bound tokens (RFC 9449) with server nonces, and workload identity federation
//! (JWT-bearer grant from a platform token file that rotates).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;

use common::Fixture;
use mcp_auth::{CredentialStore, HeadlessAgent, MemoryStore, OAuthCredentials, OAuthSettings};
use mcp_catalog::{HttpConfig, ServerConfig, WorkloadIdentityConfig, WorkloadTokenLocation};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, ServerState};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, OAuthClient, ProtectedOptions,
    Scenario, ToolSpec, mint_workload_token,
};
use serde_json::json;

fn key() -> McpServerKey {
    McpServerKey::unscoped("tickets".parse().unwrap())
}

fn state(set: &ConnectionSet) -> ServerState {
    set.status().into_iter().next().unwrap().state
}

async fn protected(auth: &FakeAuthServer, options: ProtectedOptions) -> FakeProtectedMcpServer {
    FakeProtectedMcpServer::start(
        Scenario::new("tickets").with_tool(ToolSpec::echo("echo")),
        auth,
        options,
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dpop_bound_token_goes_with_a_fresh_proof_per_request_and_nonces_are_answered_once() {
    let auth = FakeAuthServer::start(AuthServerOptions::new().with_dpop_nonce("as-nonce-1"))
        .await
        .unwrap();
    let mcp = protected(&auth, ProtectedOptions::new().with_dpop_nonce("rs-nonce-1")).await;
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryStore::new());

    // The login binds the token: its code exchange is refused once for want of the
    // authorization server's nonce and retried once with it.
    let creds = OAuthCredentials::new(
        key(),
        mcp.url(),
        OAuthSettings::new().with_dpop(true),
        Arc::clone(&store),
    );
    mcp_auth::login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap();
    let counters = auth.counters();
    assert_eq!(counters.dpop_proofs, 2, "one nonce retry");
    assert_eq!(counters.dpop_nonce_challenges, 1);
    assert_eq!(counters.authorization_code, 1, "the code is redeemed once");
    assert_eq!(counters.dpop_rejections, 0);
    let issued = auth.issued_access_tokens();
    let bound = auth.token_info(issued.last().unwrap()).unwrap();
    assert!(bound.dpop_jkt.is_some(), "the token is bound to our key");

    let mut fx = Fixture::new();
    fx.add(
        "tickets",
        ServerConfig::from(HttpConfig::new(mcp.url()).with_dpop(true)),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_credential_store(Arc::clone(&store)),
    );
    set.wait_startup().await;
    assert!(
        matches!(state(&set), ServerState::Ready { tools: 1 }),
        "{:?}",
        state(&set)
    );
    let k = key();
    for n in 0..3 {
        let result = set
            .call_tool(&k, "echo", Some(json!({ "n": n })), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({ "n": n })));
    }
    let rs = mcp.counters();
    // The first request without the nonce is challenged; rmcp hands back no response
    // headers, so the nonce is fetched with one `ping` (challenged too), and the request
    // is retried once. Every later request carries the nonce and a fresh proof (a reused
    // `jti` would be rejected).
    assert_eq!(rs.dpop_nonce_challenges, 2, "{rs:?}");
    assert_eq!(rs.dpop_rejections, 0, "{rs:?}");
    assert!(rs.dpop_requests >= 4, "{rs:?}");

    // The server expires the token: the refresh carries a proof too (and meets the
    // authorization server's nonce again), and the new token is bound to the same key.
    auth.expire_access_tokens();
    let result = set
        .call_tool(&k, "echo", Some(json!({ "n": 9 })), CallOptions::new())
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({ "n": 9 })));
    let counters = auth.counters();
    assert_eq!(counters.refresh_token, 1);
    assert_eq!(
        counters.dpop_nonce_challenges, 2,
        "the refresh met the nonce once more"
    );
    let refreshed = auth
        .token_info(auth.issued_access_tokens().last().unwrap())
        .unwrap();
    assert_eq!(refreshed.dpop_jkt, bound.dpop_jkt);
    assert_eq!(mcp.counters().dpop_rejections, 0);
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_token_file_rotated_mid_run_is_read_again() {
    const PLATFORM: &str = "https://ci.platform.example";
    let auth = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_trusted_workload_issuer(PLATFORM)
            .with_client(OAuthClient::public("ci-agent")),
    )
    .await
    .unwrap();
    let mcp = protected(&auth, ProtectedOptions::new()).await;
    let mut fx = Fixture::new();
    let token_file = fx.home.path().join("platform-token");
    let first = mint_workload_token(PLATFORM, &auth.issuer(), 3600);
    std::fs::write(&token_file, &first).unwrap();
    fx.add(
        "tickets",
        ServerConfig::from(
            HttpConfig::new(mcp.url()).with_workload_identity(
                WorkloadIdentityConfig::new(WorkloadTokenLocation::File(
                    token_file.display().to_string(),
                ))
                .with_client_id("ci-agent"),
            ),
        ),
    );
    // No login: the set redeems the platform token by itself.
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_credential_store(Arc::new(MemoryStore::new())),
    );
    set.wait_startup().await;
    assert!(
        matches!(state(&set), ServerState::Ready { tools: 1 }),
        "{:?}",
        state(&set)
    );
    assert_eq!(auth.counters().workload_grants, 1);
    let assertions = || -> Vec<String> {
        auth.token_requests()
            .iter()
            .filter_map(|r| r.get("assertion").cloned())
            .collect()
    };
    assert_eq!(assertions(), std::slice::from_ref(&first));

    // The platform rotates the file; the access token expires at the server: the next
    // call is refused once, and the grant runs again with the new platform token.
    let second = mint_workload_token(PLATFORM, &auth.issuer(), 3600);
    assert_ne!(first, second);
    std::fs::write(&token_file, &second).unwrap();
    auth.expire_access_tokens();
    let k = key();
    let result = set
        .call_tool(&k, "echo", Some(json!({ "n": 1 })), CallOptions::new())
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({ "n": 1 })));
    assert_eq!(auth.counters().workload_grants, 2);
    assert_eq!(assertions(), [first, second]);
    let info = auth
        .token_info(auth.issued_access_tokens().last().unwrap())
        .unwrap();
    assert_eq!(info.client_id, "ci-agent");
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_or_foreign_workload_token_is_refused_without_retry() {
    const PLATFORM: &str = "https://ci.platform.example";
    let auth =
        FakeAuthServer::start(AuthServerOptions::new().with_trusted_workload_issuer(PLATFORM))
            .await
            .unwrap();
    let mcp = protected(&auth, ProtectedOptions::new()).await;
    for token in [
        mint_workload_token(PLATFORM, &auth.issuer(), -120),
        mint_workload_token("https://untrusted.example", &auth.issuer(), 3600),
        mint_workload_token(PLATFORM, "https://another-as.example", 3600),
    ] {
        let before = auth.counters().jwt_bearer;
        let creds = OAuthCredentials::new(
            key(),
            mcp.url(),
            OAuthSettings::new(),
            Arc::new(MemoryStore::new()),
        );
        let identity = mcp_auth::WorkloadIdentity::new(mcp_auth::WorkloadTokenSource::Value(
            mcp_key::Secret::new(token),
        ));
        let err = creds.login_workload_identity(&identity).await.unwrap_err();
        assert!(err.to_string().contains("invalid_grant"), "{err}");
        assert_eq!(auth.counters().jwt_bearer, before + 1, "no retry");
    }
    assert_eq!(auth.counters().workload_grants, 0);
}

/// The fake servers refuse what a DPoP client must not send: a malformed, misdirected or
/// replayed proof at the token endpoint; a bound token with the Bearer scheme, with a
/// proof of another key, without `ath`, or with a replayed proof at the MCP server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_servers_reject_bad_dpop_proofs() {
    use mcp_auth::{DpopKey, StoreKey};

    let auth = FakeAuthServer::start(AuthServerOptions::new().with_dpop())
        .await
        .unwrap();
    let mcp = protected(&auth, ProtectedOptions::new()).await;
    let http = reqwest::Client::new();
    let token_request = |proof: String| {
        http.post(auth.token_endpoint())
            .header("DPoP", proof)
            .form(&[("grant_type", "refresh_token"), ("refresh_token", "x")])
            .send()
    };
    let error_of = |response: reqwest::Response| async move {
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().await.unwrap();
        (
            status,
            body["error"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let stranger = DpopKey::generate().unwrap();
    let rejected = (400, "invalid_dpop_proof".to_owned());
    assert_eq!(
        error_of(token_request("not-a-jwt".into()).await.unwrap()).await,
        rejected
    );
    let elsewhere = stranger.proof("POST", &mcp.url(), None, None).unwrap();
    assert_eq!(
        error_of(token_request(elsewhere.expose().into()).await.unwrap()).await,
        rejected
    );
    let proof = stranger
        .proof("POST", &auth.token_endpoint(), None, None)
        .unwrap();
    let first = error_of(token_request(proof.expose().into()).await.unwrap()).await;
    assert_ne!(
        first, rejected,
        "a good proof passes (the grant itself then fails)"
    );
    assert_eq!(
        error_of(token_request(proof.expose().into()).await.unwrap()).await,
        rejected,
        "replay"
    );
    assert_eq!(auth.counters().dpop_rejections, 3);

    // A bound token from a DPoP login.
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryStore::new());
    let creds = OAuthCredentials::new(
        key(),
        mcp.url(),
        OAuthSettings::new().with_dpop(true),
        Arc::clone(&store),
    );
    mcp_auth::login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap();
    let record = store
        .load(&StoreKey::new(&key(), &mcp.url()))
        .await
        .unwrap()
        .unwrap();
    let token = record.access_token.unwrap();
    let bound_key = record.dpop_key.unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
    let post = |scheme: &str, proof: Option<String>| {
        let mut request = http
            .post(mcp.url())
            .header("Authorization", format!("{scheme} {}", token.expose()))
            .header("Accept", "application/json, text/event-stream")
            .json(&init);
        if let Some(proof) = proof {
            request = request.header("DPoP", proof);
        }
        request.send()
    };
    let status = |r: reqwest::Response| r.status().as_u16();
    let good = || {
        bound_key
            .proof("POST", &mcp.url(), Some(&token), None)
            .unwrap()
            .expose()
            .to_owned()
    };
    assert_eq!(status(post("Bearer", Some(good())).await.unwrap()), 401);
    let other = stranger
        .proof("POST", &mcp.url(), Some(&token), None)
        .unwrap();
    assert_eq!(
        status(post("DPoP", Some(other.expose().into())).await.unwrap()),
        401
    );
    let no_ath = bound_key.proof("POST", &mcp.url(), None, None).unwrap();
    assert_eq!(
        status(post("DPoP", Some(no_ath.expose().into())).await.unwrap()),
        401
    );
    assert_eq!(status(post("DPoP", None).await.unwrap()), 401);
    let once = good();
    assert_ne!(status(post("DPoP", Some(once.clone())).await.unwrap()), 401);
    assert_eq!(
        status(post("DPoP", Some(once)).await.unwrap()),
        401,
        "replay"
    );
    assert_eq!(mcp.counters().dpop_rejections, 5);
}

/// RFC 9207: an authorization server that advertises `iss` on its authorization responses
/// and sends a response without one is refused before its code is redeemed, on the DPoP
/// path (our code exchange) as on the plain one (rmcp's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callback_without_the_promised_iss_is_refused_on_both_exchange_paths() {
    for dpop in [true, false] {
        let mut options = AuthServerOptions::new().with_iss_parameter_omitted();
        if dpop {
            options = options.with_dpop();
        }
        let auth = FakeAuthServer::start(options).await.unwrap();
        let mcp = protected(&auth, ProtectedOptions::new()).await;
        let store: Arc<dyn CredentialStore> = Arc::new(MemoryStore::new());
        let creds = OAuthCredentials::new(
            key(),
            mcp.url(),
            OAuthSettings::new().with_dpop(dpop),
            Arc::clone(&store),
        );
        let err = mcp_auth::login(&creds, &HeadlessAgent::new(), None)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("RFC 9207") && text.contains("tickets"),
            "{dpop}: {text}"
        );
        assert_eq!(
            auth.counters().authorization_code,
            0,
            "{dpop}: no code redeemed"
        );
        assert_eq!(
            store
                .load(&mcp_auth::StoreKey::new(&key(), &mcp.url()))
                .await
                .unwrap(),
            None,
            "{dpop}"
        );
        mcp.shutdown().await;
        auth.shutdown().await;
    }
}
