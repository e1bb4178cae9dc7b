//! Enterprise-managed authorization from configuration (`auth = "ema"`): one enterprise
//! login at the testkit's fake IdP, then servers behind different fake authorization
//! servers that trust it connect without interaction; a refusal at the IdP is
//! `enterprise_relogin_required`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;

use common::Fixture;
use mcp_auth::{
    CredentialStore, EnterpriseIdp, HeadlessAgent, MemoryStore, OAuthSettings, UserAgent,
};
use mcp_catalog::{EmaConfig, HttpConfig, ServerConfig};
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, FailureReason, ServerState,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeIdp, FakeProtectedMcpServer, IdpOptions, IdpRejection,
    OAuthClient, ProtectedOptions, Scenario, ToolSpec,
};
use serde_json::json;

const CLIENT: &str = "agent-host";

struct World {
    idp: FakeIdp,
    servers: Vec<(FakeAuthServer, FakeProtectedMcpServer)>,
    store: Arc<dyn CredentialStore>,
    fx: Fixture,
}

async fn world() -> World {
    let idp = FakeIdp::start(IdpOptions::new().with_client(OAuthClient::public(CLIENT)))
        .await
        .unwrap();
    let mut fx = Fixture::new();
    let mut servers = Vec::new();
    for name in ["tickets", "wiki"] {
        let auth = FakeAuthServer::start(
            AuthServerOptions::new()
                .with_trusted_idp(idp.issuer())
                .with_client(OAuthClient::public(CLIENT)),
        )
        .await
        .unwrap();
        let mcp = FakeProtectedMcpServer::start(
            Scenario::new(name).with_tool(ToolSpec::echo("echo")),
            &auth,
            ProtectedOptions::new(),
        )
        .await
        .unwrap();
        fx.add(
            name,
            ServerConfig::from(
                HttpConfig::new(mcp.url()).with_ema(EmaConfig::new(idp.issuer(), CLIENT)),
            ),
        );
        servers.push((auth, mcp));
    }
    World {
        idp,
        servers,
        store: Arc::new(MemoryStore::new()),
        fx,
    }
}

async fn enterprise_login(w: &World) {
    let idp = EnterpriseIdp::new(
        w.idp.issuer(),
        CLIENT,
        OAuthSettings::new(),
        Arc::clone(&w.store),
    )
    .unwrap();
    let pending = idp.begin_login().await.unwrap();
    HeadlessAgent::new()
        .open(pending.authorization_url())
        .await
        .unwrap();
    pending.complete().await.unwrap();
}

fn start(w: &World) -> ConnectionSet {
    ConnectionSet::start(
        &w.fx.catalog(),
        ConnectionSetOptions::new().with_credential_store(Arc::clone(&w.store)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_behind_two_authorization_servers_connect_after_one_enterprise_login() {
    let w = world().await;
    enterprise_login(&w).await;
    let set = start(&w);
    set.wait_startup().await;
    for status in set.status() {
        assert!(
            matches!(status.state, ServerState::Ready { tools: 1 }),
            "{}: {:?}",
            status.key,
            status.state
        );
    }
    assert_eq!(w.idp.counters().token_exchange, 2, "one ID-JAG per server");
    for (auth, _) in &w.servers {
        assert_eq!(auth.counters().jwt_bearer, 1);
        assert_eq!(
            auth.counters().authorization_code,
            0,
            "no interactive login"
        );
    }
    // Tokens are kept: calls need no new exchange.
    let tickets = McpServerKey::unscoped("tickets".parse().unwrap());
    let echo = || set.call_tool(&tickets, "echo", Some(json!({"n": 1})), CallOptions::new());
    assert_eq!(
        echo().await.unwrap().structured_content,
        Some(json!({"n": 1}))
    );
    assert_eq!(w.idp.counters().token_exchange, 2);

    // A token the server rejects is exchanged again.
    w.servers[0].0.expire_access_tokens();
    assert_eq!(
        echo().await.unwrap().structured_content,
        Some(json!({"n": 1}))
    );
    assert_eq!(w.idp.counters().token_exchange, 3);
    assert_eq!(w.servers[0].0.counters().jwt_bearer, 2);
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_at_the_idp_reports_enterprise_relogin_required() {
    let w = world().await;
    enterprise_login(&w).await;
    w.idp.set_rejection(Some(IdpRejection::InvalidGrant));
    let set = start(&w);
    set.wait_startup().await;
    for status in set.status() {
        let ServerState::Failed(failure) = &status.state else {
            panic!("{}: {:?}", status.key, status.state);
        };
        assert_eq!(failure.reason(), &FailureReason::EnterpriseReloginRequired);
        assert!(
            failure.chain().contains("needs a new enterprise sign-in"),
            "{}",
            failure.chain()
        );
    }
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_enterprise_login_the_servers_ask_for_one() {
    let w = world().await;
    let set = start(&w);
    set.wait_startup().await;
    for status in set.status() {
        let ServerState::Failed(failure) = &status.state else {
            panic!("{}: {:?}", status.key, status.state);
        };
        assert_eq!(failure.reason(), &FailureReason::EnterpriseReloginRequired);
    }
    assert_eq!(w.idp.counters().token_exchange, 0);
    set.shutdown().await;
}
