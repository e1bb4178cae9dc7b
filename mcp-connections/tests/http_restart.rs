//! A streamable-HTTP server that restarts (a deploy, a crash) must not hang calls: lost
//! sessions are recovered whether the server answers 404 or 400 without an id, HTTP error
//! responses fail their request at once, and a server that keeps losing sessions is backed
//! off. Against the testkit's loopback HTTP fake server, restarted on the same address.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::{Duration, Instant};

use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, Error};
use mcp_key::McpServerKey;
use mcp_testkit::{
    HttpFakeServer, HttpOptions, InjectedFailure, Scenario, ToolSpec,
    UNKNOWN_SESSION_BAD_REQUEST_BODY, UnknownSession,
};
use rmcp::model::CallToolResult;
use serde_json::json;

/// Longer than any error deserves: a call that needs it was hanging.
const HANG: Duration = Duration::from_secs(20);

fn key() -> McpServerKey {
    McpServerKey::unscoped("web".parse().unwrap())
}

fn scenario() -> Scenario {
    Scenario::new("web").with_tool(ToolSpec::echo("echo"))
}

async fn start_set(url: String) -> (Fixture, ConnectionSet) {
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(HttpConfig::new(url)));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    (fx, set)
}

/// Waits until the client opened its session's GET stream (rmcp does it in the background
/// after `initialize`), so a failure injected next hits the test's request, not that GET.
async fn wait_for_get(server: &HttpFakeServer) {
    tokio::time::timeout(
        Duration::from_secs(10),
        server.wait_for_counters(|c| c.get > 0),
    )
    .await
    .expect("the client never opened its GET stream");
}

/// Calls `echo` with a 60 s timeout, failing the test if the call takes [`HANG`].
async fn echo(set: &ConnectionSet, n: u32) -> Result<CallToolResult, Error> {
    tokio::time::timeout(
        HANG,
        set.call_tool(
            &key(),
            "echo",
            Some(json!({ "n": n })),
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(60))),
        ),
    )
    .await
    .expect("the call hung")
}

/// [`echo`] as a host would do it after a restart: a call that failed because it went out
/// on a keep-alive connection the old server had closed (`Disconnected`, retryable) is
/// tried again, at most twice.
async fn echo_retrying_disconnects(set: &ConnectionSet, n: u32) -> Result<CallToolResult, Error> {
    let mut attempts = 0;
    loop {
        match echo(set, n).await {
            Err(Error::Disconnected { .. }) if attempts < 2 => attempts += 1,
            other => return other,
        }
    }
}

fn initializes(server: &HttpFakeServer) -> usize {
    server
        .requests()
        .into_iter()
        .filter(|r| r.method == "initialize")
        .count()
}

async fn a_restarted_server_is_recovered(answer: UnknownSession) {
    let options = HttpOptions::new().with_unknown_session(answer);
    let first = HttpFakeServer::start_with(scenario(), options.clone())
        .await
        .unwrap();
    let addr = first.addr();
    let (_fx, set) = start_set(first.url()).await;
    let r = echo(&set, 1).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 1})));

    // Down: calls fail at once, never as a timeout.
    first.shutdown().await;
    let down = echo(&set, 2).await.unwrap_err();
    assert!(!down.is_timeout(), "{down}");

    // Back on the same address, without our session: the next call re-initializes once.
    let second = HttpFakeServer::start_with(scenario(), options.with_bind(addr))
        .await
        .unwrap();
    let r = echo_retrying_disconnects(&set, 3).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 3})));
    let r = echo(&set, 4).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 4})));
    assert_eq!(
        initializes(&second),
        1,
        "one new session on the restarted server"
    );
    set.shutdown().await;
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_answering_404_is_recovered() {
    a_restarted_server_is_recovered(UnknownSession::NotFound).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_answering_400_without_an_id_is_recovered() {
    a_restarted_server_is_recovered(UnknownSession::BadRequest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_errors_with_garbage_bodies_fail_their_request_at_once() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    let (_fx, set) = start_set(server.url()).await;
    wait_for_get(&server).await;
    let failures = [
        InjectedFailure::new(400).with_body("<html>garbage \u{1b}[2J</html>"),
        InjectedFailure::new(418).with_body("{not json"),
        InjectedFailure::new(400)
            .with_body("{\"not\": \"json-rpc\"}")
            .with_header("content-type", "application/json"),
        InjectedFailure::new(500)
            .with_body("{\"jsonrpc\": ")
            .with_header("content-type", "application/json"),
        InjectedFailure::new(200)
            .with_body("definitely not json")
            .with_header("content-type", "application/json"),
    ];
    for failure in failures {
        // Aimed at the call: "the next request" may be the GET stream reconnecting.
        server.fail_next_call(1, "tools/call", failure.clone());
        let started = Instant::now();
        let err = echo(&set, 1).await.unwrap_err();
        let took = started.elapsed();
        assert!(!err.is_timeout(), "{failure:?}: {err}");
        assert!(
            took < Duration::from_secs(1),
            "{failure:?} took {took:?}: {err}"
        );
        // The connection stays usable.
        echo(&set, 2).await.unwrap();
    }
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_for_another_request_fails_the_call_at_once() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    let (_fx, set) = start_set(server.url()).await;
    wait_for_get(&server).await;
    // Aimed at the call itself: a failure for "the next request" could be taken by the
    // client's GET stream reconnecting in between (it was, once, in a full run).
    server.fail_next_call(
        1,
        "tools/call",
        InjectedFailure::new(200)
            .with_body(r#"{"jsonrpc":"2.0","id":987654,"result":{"content":[]}}"#)
            .with_header("content-type", "application/json"),
    );
    let err = echo(&set, 1).await.unwrap_err();
    assert!(err.is_protocol(), "{err}");
    let chain = mcp_key::error_chain(&err);
    assert!(chain.contains("987654"), "{chain}");
    echo(&set, 2).await.unwrap();
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_without_an_id_is_a_lost_session_recovered_once() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    let (_fx, set) = start_set(server.url()).await;
    wait_for_get(&server).await;
    // Aimed at the call itself: a failure for "the next request" could be taken by the
    // client's GET stream reconnecting in between, and then nothing is lost (it was, once,
    // in a full run: one initialization, not two).
    server.fail_next_call(
        1,
        "tools/call",
        InjectedFailure::new(400)
            .with_body(UNKNOWN_SESSION_BAD_REQUEST_BODY)
            .with_header("content-type", "application/json"),
    );
    let r = echo(&set, 7).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 7})));
    assert_eq!(initializes(&server), 2, "one re-initialization");
    let calls = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "tools/call")
        .count();
    assert_eq!(
        calls, 1,
        "the lost request never reached the server; sent once"
    );
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_keeps_losing_sessions_is_backed_off() {
    let options = HttpOptions::new().with_unknown_session(UnknownSession::BadRequest);
    let mut server = HttpFakeServer::start_with(scenario(), options.clone())
        .await
        .unwrap();
    let addr = server.addr();
    let (_fx, set) = start_set(server.url()).await;
    echo(&set, 0).await.unwrap();
    // Each restart loses the session; the first two are recovered by re-initializing.
    let mut backed_off = None;
    for n in 1..=3 {
        server.shutdown().await;
        server = HttpFakeServer::start_with(scenario(), options.clone().with_bind(addr))
            .await
            .unwrap();
        // Stale keep-alive connections to the old server may fail a first attempt as
        // `Disconnected`; only lost sessions count towards the crash loop.
        match echo_retrying_disconnects(&set, n).await {
            Ok(_) => assert!(n < 3, "the third loss in a row is a crash loop"),
            Err(e) => {
                assert_eq!(n, 3, "only the third lost session is backed off: {e}");
                backed_off = Some(e);
            }
        }
    }
    let err = backed_off.expect("the third lost session is backed off");
    assert!(!err.is_timeout(), "{err}");
    let chain = mcp_key::error_chain(&err);
    assert!(chain.contains("keeps losing the session"), "{chain}");
    let restarted_inits = initializes(&server);
    assert_eq!(
        restarted_inits, 0,
        "no re-initialization during the backoff"
    );
    // The backoff is short: calls recover once it has passed.
    let deadline = Instant::now() + HANG;
    loop {
        match echo(&set, 9).await {
            Ok(r) => {
                assert_eq!(r.structured_content, Some(json!({"n": 9})));
                break;
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "never recovered: {e}");
                assert!(!e.is_timeout(), "{e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
    assert_eq!(initializes(&server), 1);
    set.shutdown().await;
    server.shutdown().await;
}
