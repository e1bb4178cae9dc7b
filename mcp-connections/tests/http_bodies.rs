//! HTTP response bodies that misbehave after the headers: one that trickles forever and
//! one larger than the JSON limit. Against a tiny hand-written MCP server in this file
//! (the testkit's fake answers whole bodies at once).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::McpServerKey;
use mcp_testkit::{HttpFakeServer, Scenario, ToolSpec};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

/// Bytes of the oversized answer: above rmcp's 16 MiB `max_json_response_size`.
const HUGE: usize = 20 * 1024 * 1024;

/// A minimal stateless MCP server over streamable HTTP with two tools: `trickle`
/// answers headers at once, then one byte of the body every 500 ms, forever; `huge`
/// answers a JSON body of [`HUGE`] bytes.
struct BadBodies {
    url: String,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl BadBodies {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let app = axum::Router::new().route(
            "/mcp",
            post(answer).get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        );
        let shutdown = stop.clone();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(shutdown.cancelled_owned())
                .await;
        });
        Self {
            url: format!("http://{addr}/mcp"),
            stop,
            task,
        }
    }

    async fn shutdown(self) {
        self.stop.cancel();
        // Open trickling bodies keep a graceful shutdown waiting; stop the task.
        self.task.abort();
        let _ = self.task.await;
    }
}

fn json_response(body: Value) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn answer(body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(id) = request.get("id").cloned() else {
        // A notification.
        return StatusCode::ACCEPTED.into_response();
    };
    let method = request["method"].as_str().unwrap_or_default();
    let result = match method {
        "initialize" => json!({
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bad-bodies", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [
            {"name": "trickle", "inputSchema": {"type": "object"}},
            {"name": "huge", "inputSchema": {"type": "object"}},
        ]}),
        "tools/call" if request["params"]["name"] == "trickle" => {
            let prefix = json!({"jsonrpc": "2.0", "id": id}).to_string();
            let head = prefix.trim_end_matches('}').to_owned();
            let bytes = futures::stream::unfold(Some(head), |first| async move {
                if let Some(first) = first {
                    return Some((Ok::<_, std::io::Error>(Bytes::from(first)), None));
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
                Some((Ok(Bytes::from_static(b" ")), None))
            });
            return (
                [(header::CONTENT_TYPE, "application/json")],
                Body::from_stream(bytes),
            )
                .into_response();
        }
        "tools/call" if request["params"]["name"] == "huge" => {
            let text = "x".repeat(HUGE);
            json!({"content": [{"type": "text", "text": text}]})
        }
        "ping" => json!({}),
        _ => {
            return json_response(json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"},
            }));
        }
    };
    json_response(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

async fn start_set(bad: &BadBodies, good: &HttpFakeServer) -> (Fixture, ConnectionSet) {
    let mut fx = Fixture::new();
    fx.add("bad", ServerConfig::from(HttpConfig::new(bad.url.clone())));
    fx.add("good", ServerConfig::from(HttpConfig::new(good.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 2, "{:?}", set.status());
    (fx, set)
}

async fn good_still_answers(set: &ConnectionSet) {
    let r = set
        .call_tool(
            &key("good"),
            "echo",
            Some(json!({"n": 1})),
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(30))),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 1})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_forever_times_out_at_the_call_deadline() {
    let bad = BadBodies::start().await;
    let good = HttpFakeServer::start(Scenario::new("good").with_tool(ToolSpec::echo("echo")))
        .await
        .unwrap();
    let (_fx, set) = start_set(&bad, &good).await;

    let started = Instant::now();
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        set.call_tool(
            &key("bad"),
            "trickle",
            None,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(2))),
        ),
    )
    .await
    .expect("the call ends at its deadline instead of hanging");
    let elapsed = started.elapsed();
    let err = outcome.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    // Not before the deadline, and nowhere near the 30 s bound (a generous bound for a
    // shared machine, not a measurement).
    assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");

    good_still_answers(&set).await;
    set.shutdown().await;
    good.shutdown().await;
    bad.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_json_limit_fails_at_once_and_is_not_a_timeout() {
    let bad = BadBodies::start().await;
    let good = HttpFakeServer::start(Scenario::new("good").with_tool(ToolSpec::echo("echo")))
        .await
        .unwrap();
    let (_fx, set) = start_set(&bad, &good).await;

    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        set.call_tool(
            &key("bad"),
            "huge",
            None,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(120))),
        ),
    )
    .await
    .expect("the call fails instead of waiting for its 120 s deadline");
    let err = outcome.unwrap_err();
    assert!(!err.is_timeout(), "{err}");
    assert!(err.is_protocol(), "what the server sent is at fault: {err}");
    // Classified by rmcp's body limit, counted before parsing (so memory is bounded).
    let text = mcp_key::error_chain(&err);
    assert!(text.contains("MCP server `bad`"), "{text}");
    assert!(text.contains("exceeded the maximum size"), "{text}");

    good_still_answers(&set).await;
    set.shutdown().await;
    good.shutdown().await;
    bad.shutdown().await;
}
