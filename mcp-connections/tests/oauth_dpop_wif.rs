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
