//! Streamable-HTTP servers authenticated with stored OAuth tokens (mcp-auth), against the
//! testkit's fake authorization server and token-checking MCP server, over loopback.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;

use common::Fixture;
use mcp_auth::{CredentialStore, HeadlessAgent, MemoryStore, OAuthCredentials, OAuthSettings};
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, FailureReason, ServerState,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    AuthServerOptions, FakeAuthServer, FakeProtectedMcpServer, ProtectedOptions, Scenario, ToolSpec,
};
use serde_json::json;

fn key() -> McpServerKey {
    McpServerKey::unscoped("tickets".parse().unwrap())
}

struct World {
    auth: FakeAuthServer,
    mcp: FakeProtectedMcpServer,
    store: Arc<dyn CredentialStore>,
    fx: Fixture,
}

async fn world() -> World {
    let auth = FakeAuthServer::start(AuthServerOptions::new())
        .await
        .unwrap();
    let mcp = FakeProtectedMcpServer::start(
        Scenario::new("tickets").with_tool(ToolSpec::echo("echo")),
        &auth,
        ProtectedOptions::new(),
    )
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add("tickets", ServerConfig::from(HttpConfig::new(mcp.url())));
    World {
        auth,
        mcp,
        store: Arc::new(MemoryStore::new()),
        fx,
    }
}

fn start(w: &World) -> ConnectionSet {
    ConnectionSet::start(
        &w.fx.catalog(),
        ConnectionSetOptions::new().with_credential_store(Arc::clone(&w.store)),
    )
}

async fn log_in(w: &World) {
    let creds = OAuthCredentials::new(
        key(),
        w.mcp.url(),
        OAuthSettings::new(),
        Arc::clone(&w.store),
    );
    mcp_auth::login(&creds, &HeadlessAgent::new(), None)
        .await
        .unwrap();
}

fn state(set: &ConnectionSet) -> ServerState {
    set.status().into_iter().next().unwrap().state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_stored_tokens_the_server_reports_login_required() {
    let w = world().await;
    let set = start(&w);
    set.wait_startup().await;
    let ServerState::Failed(f) = state(&set) else {
        panic!("{:?}", state(&set))
    };
    assert_eq!(f.reason(), &FailureReason::LoginRequired);
    assert_eq!(w.mcp.counters().unauthorized, 1, "one 401, no retry loop");
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_login_tokens_are_used_and_refreshed_without_the_host_noticing() {
    let w = world().await;
    log_in(&w).await;
    let set = start(&w);
    set.wait_startup().await;
    assert!(
        matches!(state(&set), ServerState::Ready { tools: 1 }),
        "{:?}",
        state(&set)
    );
    let k = key();
    let call = || set.call_tool(&k, "echo", Some(json!({"n": 1})), CallOptions::new());
    assert_eq!(
        call().await.unwrap().structured_content,
        Some(json!({"n": 1}))
    );

    // The authorization server expires every access token: the next request gets a 401,
    // the set refreshes once and retries; the call succeeds.
    w.auth.expire_access_tokens();
    assert_eq!(
        call().await.unwrap().structured_content,
        Some(json!({"n": 1}))
    );
    assert_eq!(w.auth.counters().refresh_token, 1);

    // A rejected refresh (invalid_grant): the call fails as needing a new login, no loop.
    w.auth.expire_access_tokens();
    w.auth.fail_next_refreshes(1);
    let err = call().await.unwrap_err();
    assert!(err.is_auth_required(), "{err}");
    assert_eq!(w.auth.counters().refresh_token, 2);
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_login_agent_the_set_logs_in_and_steps_up_by_itself() {
    let auth = FakeAuthServer::start(AuthServerOptions::new().with_scopes([
        "mcp:read",
        "admin",
        "offline_access",
    ]))
    .await
    .unwrap();
    let mcp = FakeProtectedMcpServer::start(
        Scenario::new("tickets")
            .with_tool(ToolSpec::echo("echo"))
            .with_tool(ToolSpec::echo("purge")),
        &auth,
        ProtectedOptions::new()
            .with_scopes(["mcp:read"])
            .with_tool_scope("purge", "admin"),
    )
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add("tickets", ServerConfig::from(HttpConfig::new(mcp.url())));
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_credential_store(Arc::new(MemoryStore::new()))
            .with_login_agent(Arc::new(HeadlessAgent::new())),
    );
    set.wait_startup().await;
    assert!(
        matches!(state(&set), ServerState::Ready { .. }),
        "{:?}",
        state(&set)
    );
    assert_eq!(auth.counters().authorization_code, 1, "one login");
    set.call_tool(&key(), "echo", None, CallOptions::new())
        .await
        .unwrap();
    // `purge` needs the `admin` scope: 403 insufficient_scope -> step-up login -> retry.
    set.call_tool(&key(), "purge", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(auth.counters().authorization_code, 2, "one step-up login");
    assert!(auth.last_scope().unwrap_or_default().contains("admin"));
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_refresh_at_startup_reports_relogin_required() {
    let w = world().await;
    log_in(&w).await;
    w.auth.expire_access_tokens();
    w.auth.fail_next_refreshes(1);
    let set = start(&w);
    set.wait_startup().await;
    let ServerState::Failed(f) = state(&set) else {
        panic!("{:?}", state(&set))
    };
    assert_eq!(f.reason(), &FailureReason::ReloginRequired, "{f}");
    assert_eq!(
        w.auth.counters().refresh_token,
        1,
        "one refresh attempt, no loop"
    );
    // A host reaches mcp-auth's own error, and its predicates, through the source chain of
    // the set's error.
    let err = set
        .call_tool(&key(), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_auth_required(), "{err}");
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    let mut auth_error = None;
    while let Some(e) = cause {
        if let Some(found) = e.downcast_ref::<mcp_auth::AuthError>() {
            auth_error = Some(found);
            break;
        }
        cause = e.source();
    }
    let auth_error = auth_error.expect("mcp-auth's error is in the source chain");
    assert!(auth_error.is_relogin_required(), "{auth_error}");
    set.shutdown().await;
}

/// The set builds a server's OAuth settings with the one translation of the catalog
/// (`OAuthSettings::from_config`): the configuration's callback port and the host's client
/// name reach the authorization server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_set_logs_in_with_the_configured_callback_port_and_the_hosts_client_name() {
    let w = world().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let loaded = mcp_catalog::Config::from_toml_str(
        &format!(
            "oauth_callback_port = {port}\n\n[mcp_servers.tickets]\nurl = \"{}\"\n",
            w.mcp.url()
        ),
        "test.toml",
    )
    .unwrap();
    let catalog = mcp_catalog::CatalogBuilder::new()
        .with_user_config(loaded)
        .build();
    let set = ConnectionSet::start(
        &catalog,
        ConnectionSetOptions::new()
            .with_client(|c| {
                c.with_client_info(mcp_connections::model::Implementation::new(
                    "host-app", "1.2.3",
                ))
            })
            .with_credential_store(Arc::clone(&w.store))
            .with_login_agent(Arc::new(HeadlessAgent::new())),
    );
    set.wait_startup().await;
    assert!(
        matches!(state(&set), ServerState::Ready { .. }),
        "{:?}",
        state(&set)
    );
    let names: Vec<Option<String>> = w
        .auth
        .clients()
        .into_iter()
        .map(|c| c.client_name)
        .collect();
    assert_eq!(names, [Some("host-app".to_owned())]);
    let redirect = w.auth.authorize_requests()[0]["redirect_uri"].clone();
    assert!(
        redirect.starts_with(&format!("http://127.0.0.1:{port}/")),
        "{redirect}"
    );
    set.shutdown().await;
}
