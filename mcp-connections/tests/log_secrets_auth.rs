//! No credential of the auth extensions reaches the logs: at TRACE level, while a
//! DPoP-bound login (with nonces at both servers) and a workload identity grant run and
//! their servers are called, the captured output holds no access or refresh token, no
//! workload token and no DPoP private key.
//!
//! One test per binary: the subscriber is process-wide.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;

use common::Fixture;
use mcp_auth::{
    CredentialStore, HeadlessAgent, MemoryStore, OAuthCredentials, OAuthSettings, StoreKey,
};
use mcp_catalog::{HttpConfig, ServerConfig, WorkloadIdentityConfig, WorkloadTokenLocation};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, OAuthClient, ProtectedOptions,
    Scenario, ToolSpec, mint_workload_token,
};
use serde_json::json;

const PLATFORM: &str = "https://ci.platform.example";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trace_logs_hold_no_token_or_key() {
    let captured =
        mcp_testkit::capture_logs_globally().expect("the first subscriber of this test binary");

    let auth = FakeAuthServer::start(
        AuthServerOptions::new()
            .with_dpop_nonce("as-nonce")
            .with_trusted_workload_issuer(PLATFORM)
            .with_client(OAuthClient::public("ci-agent")),
    )
    .await
    .unwrap();
    let scenario = |name: &str| Scenario::new(name).with_tool(ToolSpec::echo("echo"));
    let bound = FakeProtectedMcpServer::start(
        scenario("bound"),
        &auth,
        ProtectedOptions::new().with_dpop_nonce("rs-nonce"),
    )
    .await
    .unwrap();
    let workload =
        FakeProtectedMcpServer::start(scenario("workload"), &auth, ProtectedOptions::new())
            .await
            .unwrap();
    let store: Arc<dyn CredentialStore> = Arc::new(MemoryStore::new());
    let bound_key = McpServerKey::unscoped("bound".parse().unwrap());
    let creds = OAuthCredentials::new(
        bound_key.clone(),
        bound.url(),
        OAuthSettings::new().with_dpop(true),
        Arc::clone(&store),
    );
    mcp_auth::login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap();

    let mut fx = Fixture::new();
    let token_file = fx.home.path().join("platform-token");
    let platform_token = mint_workload_token(PLATFORM, &auth.issuer(), 3600);
    std::fs::write(&token_file, &platform_token).unwrap();
    fx.add(
        "bound",
        ServerConfig::from(HttpConfig::new(bound.url()).with_dpop(true)),
    );
    fx.add(
        "workload",
        ServerConfig::from(
            HttpConfig::new(workload.url()).with_workload_identity(
                WorkloadIdentityConfig::new(WorkloadTokenLocation::File(
                    token_file.display().to_string(),
                ))
                .with_client_id("ci-agent"),
            ),
        ),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_credential_store(Arc::clone(&store)),
    );
    set.wait_startup().await;
    for name in ["bound", "workload"] {
        let key = McpServerKey::unscoped(name.parse().unwrap());
        let r = set
            .call_tool(&key, "echo", Some(json!({"n": 1})), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"n": 1})));
    }
    // A refresh of the bound token, with its proof and the nonce retry.
    auth.expire_access_tokens();
    set.call_tool(
        &bound_key,
        "echo",
        Some(json!({"n": 2})),
        CallOptions::new(),
    )
    .await
    .unwrap();
    set.shutdown().await;

    let record = store
        .load(&StoreKey::new(&bound_key, &bound.url()))
        .await
        .unwrap()
        .unwrap();
    let key_json = serde_json::to_value(record.dpop_key.as_ref().unwrap()).unwrap();
    let private_key = key_json["pkcs8"].as_str().unwrap().to_owned();
    let mut secrets: Vec<String> = auth.issued_access_tokens();
    assert!(secrets.len() >= 3, "tokens were issued: {}", secrets.len());
    secrets.extend(record.refresh_token.map(|t| t.expose().to_owned()));
    secrets.push(platform_token);
    secrets.push(private_key);

    let text = captured.text();
    assert!(
        text.contains("TRACE") && text.lines().count() > 20,
        "the capture works: {} lines",
        text.lines().count()
    );
    for secret in &secrets {
        let leaks: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(secret.as_str()))
            .take(3)
            .collect();
        assert!(leaks.is_empty(), "a secret is in the logs: {leaks:#?}");
    }
}
