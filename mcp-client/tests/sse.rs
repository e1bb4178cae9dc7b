//! One `Client` over the legacy HTTP+SSE transport (MCP 2024-11-05), against the testkit's
//! loopback SSE fake: listed and called with the configured credentials and never probed
//! for the 2026 era, a wrong token refused once, a dropped stream resumed when the server
//! kept the session, a forgotten session or refused reconnects reported through
//! `closed()` and `death()`, and an endpoint on another origin refused. The counterparts,
//! at the client level, of `mcp-connections/tests/sse.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, Era, FailureReason, HttpTarget,
    StaticBearer, Target,
};
use mcp_key::Secret;
use mcp_testkit::{Faults, Scenario, SseFakeServer, SseOptions, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{args, key};

/// A generous bound for what happens at once; never a measurement.
const BOUND: Duration = Duration::from_secs(20);

fn scenario() -> Scenario {
    Scenario::new("legacy").with_tool(ToolSpec::echo("echo"))
}

fn sse(server: &SseFakeServer) -> HttpTarget {
    HttpTarget::new(server.url()).with_legacy_sse(true)
}

async fn connect(target: HttpTarget) -> Result<Client, mcp_client::StartupFailure> {
    Client::connect(
        key("legacy"),
        Target::Http(target),
        ClientSettings::new().with_startup_timeout(BOUND),
        Arc::new(DeclineRequests),
    )
    .await
}

async fn echo(client: &Client, n: u32) -> Value {
    let result = tokio::time::timeout(
        BOUND,
        client.call_tool("echo", args(json!({ "n": n })), CallSettings::new(BOUND)),
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

/// After the client is gone it left nothing open: every event stream it opened is
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
async fn an_sse_server_is_listed_and_called_with_its_credentials_and_never_probed() {
    let server =
        SseFakeServer::start_with(scenario(), SseOptions::new().with_bearer_token("tok-1"))
            .await
            .unwrap();
    let target = sse(&server)
        .with_auth(Some(Arc::new(StaticBearer::new(Secret::new("tok-1")))))
        .with_headers(vec![("X-Team".to_owned(), Secret::new("platform"))]);
    let client = connect(target).await.unwrap();
    assert_eq!(client.era(), Era::V2025_11_25);
    assert_eq!(client.protocol_version().as_str(), "2025-11-25");
    let names: Vec<String> = client.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["echo"]);
    assert_eq!(client.pid(), None);
    assert_eq!(echo(&client, 1).await, json!({"n": 1}));

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
        server.header_values("x-team"),
        vec!["platform".to_owned(); (counters.streams + counters.posts) as usize]
    );
    let methods: Vec<String> = server.requests().iter().map(|r| r.method.clone()).collect();
    assert_eq!(methods, ["initialize", "tools/list", "tools/call"]);

    client.shutdown().await;
    assert!(!client.is_alive());
    assert_nothing_left(&server, false).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_login_required_after_one_refused_stream() {
    let server =
        SseFakeServer::start_with(scenario(), SseOptions::new().with_bearer_token("right"))
            .await
            .unwrap();
    let target = sse(&server).with_auth(Some(Arc::new(StaticBearer::new(Secret::new("wrong")))));
    let failure = connect(target).await.unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::LoginRequired, "{failure}");
    assert!(!failure.to_string().contains("wrong"), "{failure}");
    // One refused stream, not a retry loop.
    assert_eq!(server.counters().unauthorized, 1);
    assert_eq!(server.counters().posts, 0);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_is_resumed_on_the_same_session() {
    let server = SseFakeServer::start_with(scenario(), SseOptions::new().with_keep_sessions(true))
        .await
        .unwrap();
    let client = connect(sse(&server)).await.unwrap();
    assert_eq!(echo(&client, 1).await, json!({"n": 1}));

    server.drop_streams();
    tokio::time::timeout(BOUND, server.wait_for_counters(|c| c.resumed == 1))
        .await
        .expect("the client reopens the stream with Last-Event-ID");
    assert_eq!(echo(&client, 2).await, json!({"n": 2}));
    // The same session and connection: no new initialize.
    let counters = server.counters();
    assert_eq!(
        (counters.sessions, counters.streams),
        (1, 2),
        "{counters:?}"
    );
    assert_eq!(initializations(&server), 1);
    assert!(client.is_alive());

    client.shutdown().await;
    assert_nothing_left(&server, true).await;
    server.shutdown().await;
}

/// A stream that drops after every two messages on a server that keeps sessions: every
/// call is answered, on one session, with one `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_stream_is_resumed_between_calls() {
    let scenario = scenario().with_faults(Faults::new().with_sse_drop_after(2));
    let server = SseFakeServer::start_with(scenario, SseOptions::new().with_keep_sessions(true))
        .await
        .unwrap();
    let client = connect(sse(&server)).await.unwrap();
    for n in 0..6 {
        assert_eq!(echo(&client, n).await, json!({ "n": n }));
    }
    let counters = server.counters();
    // initialize + tools/list + 6 calls, two messages per stream.
    assert!(counters.resumed >= 3, "{counters:?}");
    assert_eq!(counters.sessions, 1, "{counters:?}");
    assert_eq!(initializations(&server), 1);
    client.shutdown().await;
    assert_nothing_left(&server, true).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_forgot_the_session_closes_the_connection_with_its_reason() {
    // Like the SDKs' SSE servers: a session ends with its stream.
    let server = SseFakeServer::start(scenario()).await.unwrap();
    let client = connect(sse(&server)).await.unwrap();
    assert_eq!(echo(&client, 1).await, json!({"n": 1}));

    server.drop_streams();
    // Told at once, without waiting for a call.
    tokio::time::timeout(BOUND, client.closed())
        .await
        .expect("closed() resolves once the session is lost");
    assert!(!client.is_alive());
    let death = client.death().await;
    assert_eq!(death.reason(), &FailureReason::Transport, "{death}");
    let text = death.to_string();
    assert!(text.contains("MCP server `legacy`"), "{text}");
    assert!(text.contains("new session"), "{text}");
    let err = client
        .call_tool("echo", None, CallSettings::new(BOUND))
        .await
        .unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
    client.shutdown().await;

    // A new connection is a new session, initialized again.
    let again = connect(sse(&server)).await.unwrap();
    assert_eq!(echo(&again, 2).await, json!({"n": 2}));
    assert_eq!(initializations(&server), 2);
    again.shutdown().await;
    assert_nothing_left(&server, false).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_are_bounded_and_their_failure_is_the_death() {
    let server = SseFakeServer::start_with(scenario(), SseOptions::new().with_keep_sessions(true))
        .await
        .unwrap();
    let client = connect(sse(&server)).await.unwrap();

    server.refuse_streams(true);
    server.drop_streams();
    tokio::time::timeout(BOUND, client.closed())
        .await
        .expect("closed() resolves once reconnecting is given up");
    let death = client.death().await;
    assert_eq!(death.reason(), &FailureReason::Transport, "{death}");
    let text = death.to_string();
    assert!(text.contains("3 reconnects failed"), "{text}");
    assert!(text.contains("HTTP 503"), "{text}");
    // Exactly the bound: three tries, then the connection is given up.
    assert_eq!(server.counters().refused, 3);
    client.shutdown().await;

    server.refuse_streams(false);
    let again = connect(sse(&server)).await.unwrap();
    assert_eq!(echo(&again, 1).await, json!({"n": 1}));
    assert_eq!(server.counters().refused, 3);
    assert_eq!(initializations(&server), 2);
    again.shutdown().await;
    assert_nothing_left(&server, true).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_on_another_origin_is_refused_before_anything_is_posted() {
    let server = SseFakeServer::start_with(
        scenario(),
        SseOptions::new().with_endpoint("http://collector.invalid/messages?session_id=1"),
    )
    .await
    .unwrap();
    let target = sse(&server).with_headers(vec![("X-Api-Key".to_owned(), Secret::new("k-secret"))]);
    let failure = connect(target).await.unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    let text = failure.to_string();
    assert!(text.contains("MCP server `legacy`"), "{text}");
    assert!(text.contains("another origin"), "{text}");
    assert!(text.contains("http://collector.invalid/messages"), "{text}");
    assert!(!text.contains("k-secret"), "{text}");
    assert_eq!(server.counters().posts, 0);
    assert_nothing_left(&server, false).await;
    server.shutdown().await;
}
