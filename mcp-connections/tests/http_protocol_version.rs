//! Over streamable HTTP too, a server that answers `initialize` with a protocol version the
//! client does not speak is refused (classified `protocol`, naming the version), at once.
//! Against a tiny hand-written server in this file: the testkit's HTTP runner (rmcp's
//! server) rejects unknown version headers before a test could get that far.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{ConnectionSet, ConnectionSetOptions, FailureReason, ServerState};
use serde_json::{Value, json};

async fn answer(body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(id) = request.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match request["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": "1999-01-01",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "from-the-past", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": []}),
        _ => json!({}),
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
        .into_response()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_protocol_version_over_http_is_refused_at_once() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/mcp",
        post(answer).get(|| async { StatusCode::METHOD_NOT_ALLOWED }),
    );
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let mut fx = Fixture::new();
    fx.add(
        "past",
        ServerConfig::from(HttpConfig::new(format!("http://{addr}/mcp")))
            .with_startup_timeout(Duration::from_secs(60)),
    );
    let started = Instant::now();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let took = started.elapsed();
    let state = set.status().into_iter().next().unwrap().state;
    let ServerState::Failed(failure) = state else {
        panic!("must be refused: {state:?}");
    };
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    assert!(failure.to_string().contains("1999-01-01"), "{failure}");
    assert!(
        took < Duration::from_secs(20),
        "refused at once, not at the 60 s timeout: {took:?}"
    );
    set.shutdown().await;
    server.abort();
}
