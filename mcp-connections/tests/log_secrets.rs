//! No secret reaches the logs: the set's own tracing output (and rmcp's, and mcp-pool's)
//! at TRACE level, captured while servers with a bearer token from the environment,
//! literal and environment headers, a secret in the URL's query string and a secret
//! environment variable for a stdio server start, list and are called, holds none of them.
//!
//! One test per binary: the subscriber is process-wide, so tasks on every worker thread
//! are captured.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;

use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, SharedEnvLookup};
use mcp_key::McpServerKey;
use mcp_testkit::{HttpFakeServer, HttpOptions, Scenario, ToolSpec};
use serde_json::json;

const SECRETS: [&str; 5] = [
    "tok-SECRET-1",
    "hdr-SECRET-2",
    "env-SECRET-3",
    "url-SECRET-4",
    "proc-SECRET-5",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trace_logs_hold_no_secret() {
    let captured =
        mcp_testkit::capture_logs_globally().expect("the first subscriber of this test binary");

    let server = HttpFakeServer::start_with(
        Scenario::new("web").with_tool(ToolSpec::echo("echo")),
        HttpOptions::new().with_bearer_token(SECRETS[0]),
    )
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "web",
        ServerConfig::from(
            HttpConfig::new(format!("{}?k={}", server.url(), SECRETS[3]))
                .with_bearer_token_env_var("WEB_TOKEN")
                .with_http_header("X-Secret", SECRETS[1])
                .with_env_http_header("X-Env", "WEB_ENV_HEADER"),
        ),
    );
    fx.stdio_with(
        "local",
        Scenario::new("local").with_tool(ToolSpec::echo("echo")),
        |c| {
            let stdio = c
                .transport()
                .as_stdio()
                .unwrap()
                .clone()
                .with_env_var("LOCAL_SECRET");
            c.with_transport(mcp_catalog::Transport::Stdio(stdio))
        },
    );
    let env: SharedEnvLookup = Arc::new(|name: &str| match name {
        "WEB_TOKEN" => Some(SECRETS[0].to_owned()),
        "WEB_ENV_HEADER" => Some(SECRETS[2].to_owned()),
        "LOCAL_SECRET" => Some(SECRETS[4].to_owned()),
        _ => None,
    });
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_env_lookup(env),
    );
    set.wait_startup().await;
    let key = |n: &str| McpServerKey::unscoped(n.parse().unwrap());
    let r = set
        .call_tool(
            &key("web"),
            "echo",
            Some(json!({"n": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 1})));
    // The stdio server is launched with the secret in its environment. (Message payloads
    // are traced whole by rmcp: a tool that returned the secret would put it in the
    // TRACE log, which is why this one only echoes.)
    set.call_tool(&key("local"), "echo", None, CallOptions::new())
        .await
        .unwrap();
    let _ = set.list_resources().await;
    set.shutdown().await;
    server.shutdown().await;
    fx.assert_no_processes().await;

    let text = captured.text();
    assert!(
        text.contains("TRACE") && text.lines().count() > 20,
        "the capture works: {} lines",
        text.lines().count()
    );
    for secret in SECRETS {
        let leaks: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(secret))
            .take(3)
            .collect();
        assert!(leaks.is_empty(), "`{secret}` is in the logs: {leaks:#?}");
    }
}
