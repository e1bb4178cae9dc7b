//! Connections opened as a user: on a shared pool, a set that connects to an HTTP server
//! as one identity never shares that connection with a set connecting as another, so one
//! user's credentials never carry another user's calls.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;

use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_client::StaticBearer;
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, ServerPool};
use mcp_key::{McpServerKey, Secret};
use mcp_testkit::{HttpFakeServer, Scenario, ToolSpec};

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

fn bearer(token: &str) -> Arc<StaticBearer> {
    Arc::new(StaticBearer::new(Secret::new(token.to_owned())))
}

/// Starts a set on `pool` connecting to `web` as `identity` with `token`, and calls once.
async fn call_as(
    catalog: &mcp_catalog::ResolvedCatalog,
    pool: &ServerPool,
    identity: &str,
    token: &str,
) -> ConnectionSet {
    let set = ConnectionSet::start(
        catalog,
        ConnectionSetOptions::new()
            .with_shared_pool(pool.clone())
            .with_identity_auth(key("web"), identity, bearer(token)),
    );
    assert_eq!(set.wait_startup().await.ready(), 1, "{identity}'s set");
    set.call_tool(&key("web"), "echo", None, CallOptions::new())
        .await
        .unwrap();
    set
}

fn count(server: &HttpFakeServer, value: &str) -> usize {
    server
        .header_values("authorization")
        .iter()
        .filter(|v| *v == value)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_identity_gets_its_own_connection_on_a_shared_pool() {
    let server = HttpFakeServer::start(Scenario::new("web").with_tool(ToolSpec::echo("echo")))
        .await
        .unwrap();
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(HttpConfig::new(server.url())));
    let catalog = fx.catalog();
    let pool = ServerPool::new();

    let alice = call_as(&catalog, &pool, "alice", "alice-token").await;
    assert_eq!(pool.stats().starts, 1);
    // alice again (another session of hers): her connection is shared.
    let alice_again = call_as(&catalog, &pool, "alice", "alice-token").await;
    assert_eq!(
        pool.stats().starts,
        1,
        "alice's two sets share one connection"
    );
    let alice_seen = count(&server, "Bearer alice-token");
    // bob: a connection of his own, with his own token.
    let bob = call_as(&catalog, &pool, "bob", "bob-token").await;
    assert_eq!(pool.stats().starts, 2, "bob got a connection of his own");
    assert!(
        count(&server, "Bearer bob-token") > 0,
        "bob's token was sent"
    );
    assert!(alice_seen > 0, "alice's token was sent");

    // The same providers without identities share one connection: the identity is
    // what keeps them apart.
    let plain_pool = ServerPool::new();
    let plain = |token: &str| {
        ConnectionSet::start(
            &catalog,
            ConnectionSetOptions::new()
                .with_shared_pool(plain_pool.clone())
                .with_auth_provider(key("web"), bearer(token)),
        )
    };
    let (p1, p2) = (plain("alice-token"), plain("bob-token"));
    assert_eq!(p1.wait_startup().await.ready(), 1);
    assert_eq!(p2.wait_startup().await.ready(), 1);
    assert_eq!(plain_pool.stats().starts, 1);

    for set in [alice, alice_again, bob, p1, p2] {
        set.shutdown().await;
    }
    pool.shutdown().await;
    plain_pool.shutdown().await;
    server.shutdown().await;
}
