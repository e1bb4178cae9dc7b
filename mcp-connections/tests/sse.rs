//! Legacy HTTP+SSE servers (MCP 2024-11-05): listed and called with the configured
//! credentials, never probed for the 2026 era, a dropped event stream resumed when the
//! server kept the session, a server restarted when it forgot it, reconnects bounded, and
//! an endpoint on another origin refused. Against the testkit's loopback SSE fake server.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Fixture, wait_event};
use mcp_catalog::{HttpConfig, ServerConfig, Transport};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, FailureReason, ServerState,
    SharedEnvLookup,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Faults, Scenario, SseCounters, SseFakeServer, SseOptions, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;

/// A generous bound for what happens at once; never a measurement.
const BOUND: Duration = Duration::from_secs(20);

fn key() -> McpServerKey {
    McpServerKey::unscoped("legacy".parse().unwrap())
}

fn scenario() -> Scenario {
    Scenario::new("legacy").with_tool(ToolSpec::echo("echo"))
}

fn sse(http: HttpConfig) -> ServerConfig {
    ServerConfig::new(Transport::Sse(http))
}

fn env(pairs: &'static [(&'static str, &'static str)]) -> SharedEnvLookup {
    Arc::new(move |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).into())
    })
}

fn state(set: &ConnectionSet) -> ServerState {
    set.status()
        .into_iter()
        .find(|s| s.key == key())
        .unwrap()
        .state
}

async fn echo(set: &ConnectionSet, n: u32) -> serde_json::Value {
    let result = tokio::time::timeout(
        BOUND,
        set.call_tool(&key(), "echo", Some(json!({ "n": n })), CallOptions::new()),
    )
    .await
    .expect("the call ends")
    .unwrap();
    result.structured_content.unwrap()
}

fn initializations(server: &SseFakeServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "initialize")
        .count()
}

/// After the set is gone, the client left nothing open: every event stream it opened is
/// closed, and (unless the server keeps sessions) every session ended with it.
async fn assert_nothing_left(server: &SseFakeServer, kept_sessions: bool) {
    let counters = tokio::time::timeout(
        BOUND,
        server.wait_for_counters(|c| {
            c.streams_closed == c.streams && (kept_sessions || c.sessions_ended == c.sessions)
        }),
    )
    .await
    .unwrap_or_else(|_| panic!("left open: {:?}", server.counters()));
    assert!(counters.streams > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_server_is_listed_and_called_with_the_configured_credentials() {
    let server =
        SseFakeServer::start_with(scenario(), SseOptions::new().with_bearer_token("tok-1"))
            .await
            .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "legacy",
        sse(HttpConfig::new(server.url())
            .with_bearer_token_env_var("LEGACY_TOKEN")
            .with_http_header("X-Team", "platform")),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_env_lookup(env(&[("LEGACY_TOKEN", "tok-1")])),
    );
    set.wait_startup().await;
    assert!(
        matches!(state(&set), ServerState::Ready { tools: 1 }),
        "{:?}",
        state(&set)
    );
    let status = set.status().into_iter().next().unwrap();
    assert_eq!(status.transport, "sse");
    assert_eq!(status.protocol_version.as_deref(), Some("2025-11-25"));
    let tools: Vec<String> = set
        .tools()
        .await
        .iter()
        .map(|t| t.qualified_name.clone())
        .collect();
    assert_eq!(tools, ["mcp__legacy__echo"]);
    assert_eq!(echo(&set, 1).await, json!({"n": 1}));

    // Every request carried the token and the configured header; no 2026 probe.
    let counters = server.counters();
    assert_eq!(counters.unauthorized, 0);
    assert_eq!((counters.sessions, counters.streams), (1, 1));
    let authorization = server.header_values("authorization");
    assert_eq!(
        authorization.len() as u64,
        counters.streams + counters.posts
    );
    assert!(
        authorization.iter().all(|v| v == "Bearer tok-1"),
        "{authorization:?}"
    );
    assert_eq!(
        server.header_values("x-team").len() as u64,
        counters.streams + counters.posts
    );
    let methods: Vec<String> = server.requests().iter().map(|r| r.method.clone()).collect();
    assert_eq!(methods, ["initialize", "tools/list", "tools/call"]);

    set.shutdown().await;
    assert_nothing_left(&server, false).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_login_required() {
    let server =
        SseFakeServer::start_with(scenario(), SseOptions::new().with_bearer_token("right"))
            .await
            .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "legacy",
        sse(HttpConfig::new(server.url()).with_bearer_token_env_var("LEGACY_TOKEN")),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_env_lookup(env(&[("LEGACY_TOKEN", "wrong")])),
    );
    set.wait_startup().await;
    let ServerState::Failed(failure) = state(&set) else {
        panic!("{:?}", state(&set))
    };
    assert_eq!(failure.reason(), &FailureReason::LoginRequired, "{failure}");
    // One refused stream, not a retry loop.
    assert_eq!(server.counters().unauthorized, 1);
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_is_resumed_when_the_server_kept_the_session() {
    let server = SseFakeServer::start_with(scenario(), SseOptions::new().with_keep_sessions(true))
        .await
        .unwrap();
    let mut fx = Fixture::new();
    fx.add("legacy", sse(HttpConfig::new(server.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    assert_eq!(echo(&set, 1).await, json!({"n": 1}));

    server.drop_streams();
    tokio::time::timeout(BOUND, server.wait_for_counters(|c| c.resumed == 1))
        .await
        .expect("the client reopens the stream with Last-Event-ID");
    assert_eq!(echo(&set, 2).await, json!({"n": 2}));
    // The same session and connection: no new initialize, no restart.
    let counters = server.counters();
    assert_eq!(
        (counters.sessions, counters.streams),
        (1, 2),
        "{counters:?}"
    );
    assert_eq!(initializations(&server), 1);
    assert!(matches!(state(&set), ServerState::Ready { .. }));

    set.shutdown().await;
    assert_nothing_left(&server, true).await;
    server.shutdown().await;
}

/// A stream that drops after every few messages (`Faults::sse_drop_after`) on a server
/// that keeps sessions: every call is answered, on one session, with one `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_stream_is_resumed_between_calls() {
    let scenario = scenario().with_faults(Faults::new().with_sse_drop_after(2));
    let server = SseFakeServer::start_with(scenario, SseOptions::new().with_keep_sessions(true))
        .await
        .unwrap();
    let mut fx = Fixture::new();
    fx.add("legacy", sse(HttpConfig::new(server.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    for n in 0..6 {
        assert_eq!(echo(&set, n).await, json!({ "n": n }));
    }
    let counters = server.counters();
    // initialize + tools/list + 6 calls, two messages per stream.
    assert!(counters.resumed >= 3, "{counters:?}");
    assert_eq!(counters.sessions, 1, "{counters:?}");
    assert_eq!(initializations(&server), 1);
    set.shutdown().await;
    assert_nothing_left(&server, true).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_forgot_the_session_is_reported_and_restarted() {
    // Like the SDKs' SSE servers: a session ends with its stream.
    let server = SseFakeServer::start(scenario()).await.unwrap();
    let mut fx = Fixture::new();
    fx.add("legacy", sse(HttpConfig::new(server.url())));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_events(tx));
    set.wait_startup().await;
    assert_eq!(echo(&set, 1).await, json!({"n": 1}));

    server.drop_streams();
    // Reported at once, without waiting for a call.
    let failed = wait_event(&mut rx, BOUND, |e| {
        matches!(e, ConnectionEvent::Failed { .. })
    })
    .await;
    let ConnectionEvent::Failed { error, reason, .. } = failed else {
        unreachable!()
    };
    assert_eq!(reason, FailureReason::Transport, "{error}");
    assert!(error.contains("MCP server `legacy`"), "{error}");
    assert!(error.contains("new session"), "{error}");
    assert!(matches!(state(&set), ServerState::Failed(_)));

    // The next call starts it again (the pool's restart): a new session, initialized.
    assert_eq!(echo(&set, 2).await, json!({"n": 2}));
    assert_eq!(initializations(&server), 2);
    assert!(matches!(state(&set), ServerState::Ready { .. }));

    set.shutdown().await;
    assert_nothing_left(&server, false).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_are_bounded_and_the_server_restarts_once_reachable() {
    let server = SseFakeServer::start_with(scenario(), SseOptions::new().with_keep_sessions(true))
        .await
        .unwrap();
    let mut fx = Fixture::new();
    fx.add("legacy", sse(HttpConfig::new(server.url())));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_events(tx));
    set.wait_startup().await;

    server.refuse_streams(true);
    server.drop_streams();
    let failed = wait_event(&mut rx, BOUND, |e| {
        matches!(e, ConnectionEvent::Failed { .. })
    })
    .await;
    let ConnectionEvent::Failed { error, reason, .. } = failed else {
        unreachable!()
    };
    assert_eq!(reason, FailureReason::Transport, "{error}");
    assert!(error.contains("3 reconnects failed"), "{error}");
    assert!(error.contains("HTTP 503"), "{error}");
    // Exactly the bound: three tries, then the connection is given up.
    assert_eq!(server.counters().refused, 3);

    server.refuse_streams(false);
    assert_eq!(echo(&set, 1).await, json!({"n": 1}));
    let counters: SseCounters = server.counters();
    assert_eq!(counters.refused, 3);
    assert_eq!(initializations(&server), 2);

    set.shutdown().await;
    assert_nothing_left(&server, true).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_on_another_origin_is_refused() {
    let server = SseFakeServer::start_with(
        scenario(),
        SseOptions::new().with_endpoint("http://collector.invalid/messages?session_id=1"),
    )
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "legacy",
        sse(HttpConfig::new(server.url()).with_http_header("X-Api-Key", "k-secret")),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let ServerState::Failed(failure) = state(&set) else {
        panic!("{:?}", state(&set))
    };
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    let text = failure.to_string();
    assert!(text.contains("MCP server `legacy`"), "{text}");
    assert!(text.contains("another origin"), "{text}");
    assert!(text.contains("http://collector.invalid/messages"), "{text}");
    assert!(!text.contains("k-secret"), "{text}");
    // Nothing was posted anywhere.
    assert_eq!(server.counters().posts, 0);
    set.shutdown().await;
    assert_nothing_left(&server, false).await;
    server.shutdown().await;
}
