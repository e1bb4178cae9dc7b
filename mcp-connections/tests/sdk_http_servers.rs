//! Real HTTP servers of other SDKs, from the pinned install of
//! `scripts/gateway-clients.sh` (target/gateway-clients):
//! - the Python `mcp` package's `MCPServer` over streamable HTTP (its
//!   `streamable_http_app`, tests/fixtures/python_http_server.py) under `protocol = "auto"`:
//!   the era it negotiates, its tools, calls with a bearer token;
//! - the same server's legacy HTTP+SSE transport (its `sse_app`): listed and called with a
//!   bearer token; then its
//!   process is killed (the event stream drops): the client's bounded reconnects fail, the
//!   server is reported failed (`transport`) at once, and once a new process listens on the
//!   same address the next call starts it again;
//! - the TypeScript SDK's `SSEServerTransport` (tests/fixtures/ts_sse_server.mjs): listed
//!   and called with a bearer token.
//!
//! CI runs the install script and sets `MCP_REQUIRE_GATEWAY_CLIENTS=1`, which makes a
//! missing install a failure. Without it and without that variable, a test says so on
//! stderr and does nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "tests; the skip notice goes to stderr; the tests start the SDK servers themselves"
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use common::{Fixture, wait_event};
use mcp_catalog::{HttpConfig, ServerConfig, Transport};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, FailureReason,
    SharedEnvLookup,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const BOUND: Duration = Duration::from_secs(30);
const TOKEN: &str = "sdk-sse-token";

/// The pinned installs' folder, or `None` (test skipped) when `wanted` is not there.
fn installed(wanted: &str) -> Option<PathBuf> {
    mcp_testkit::installed_test_client(env!("CARGO_MANIFEST_DIR"), wanted, wanted)?;
    Some(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(mcp_testkit::INSTALLED_CLIENTS_DIR),
    )
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// One SDK server process and the URL of its event stream.
struct SdkServer {
    child: tokio::process::Child,
    pid: u32,
    url: String,
}

impl SdkServer {
    /// Starts `program script port` (0: any port) and waits for its URL line.
    async fn start(program: &Path, script: &Path, port: u16, env: &[(&str, &str)]) -> Self {
        let mut command = tokio::process::Command::new(program);
        command
            .arg(script)
            .arg(port.to_string())
            .env("SSE_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let pid = child.id().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = tokio::time::timeout(BOUND, lines.next_line())
            .await
            .expect("the server prints its URL")
            .unwrap()
            .expect("a URL line");
        Self { child, pid, url }
    }

    fn port(&self) -> u16 {
        reqwest::Url::parse(&self.url).unwrap().port().unwrap()
    }

    /// Kills the process and checks it is gone.
    async fn kill(mut self) {
        self.child.kill().await.unwrap();
        assert!(mcp_testkit::wait_gone(self.pid, BOUND).await);
        mcp_testkit::assert_no_process(self.pid);
    }
}

fn env() -> SharedEnvLookup {
    Arc::new(|name: &str| (name == "SDK_SSE_TOKEN").then(|| TOKEN.to_owned()))
}

/// A set with one SSE server `name` at `url`, its token from `SDK_SSE_TOKEN`.
fn start_set(
    fx: &mut Fixture,
    name: &str,
    url: &str,
) -> (
    ConnectionSet,
    tokio::sync::mpsc::UnboundedReceiver<ConnectionEvent>,
) {
    fx.add(
        name,
        ServerConfig::new(Transport::Sse(
            HttpConfig::new(url).with_bearer_token_env_var("SDK_SSE_TOKEN"),
        )),
    );
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_env_lookup(env())
            .with_events(tx),
    );
    (set, rx)
}

async fn call(set: &ConnectionSet, server: &str, tool: &str, args: serde_json::Value) -> String {
    let result = tokio::time::timeout(
        BOUND,
        set.call_tool(
            &server.parse().unwrap(),
            tool,
            Some(args),
            CallOptions::new(),
        ),
    )
    .await
    .expect("the call ends")
    .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap().to_owned()
}

async fn ready_with_tools(set: &ConnectionSet) -> Vec<String> {
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 1, "{summary:?} {:?}", set.status());
    let status = set.status().into_iter().next().unwrap();
    assert_eq!(status.transport, "sse");
    assert_eq!(
        status.protocol_version.as_deref(),
        Some("2025-11-25"),
        "the legacy transport always shakes hands with initialize"
    );
    let mut tools: Vec<String> = set
        .tools()
        .await
        .iter()
        .map(|t| t.qualified_name.clone())
        .collect();
    tools.sort();
    tools
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sse_server_is_listed_called_and_recovered_after_its_stream_drops() {
    let Some(dir) = installed("venv/bin/python") else {
        return;
    };
    let python = dir.join("venv/bin/python");
    let script = fixture("python_http_server.py");
    let first = SdkServer::start(&python, &script, 0, &[]).await;
    let mut fx = Fixture::new();
    let (set, mut rx) = start_set(&mut fx, "py", &first.url);
    assert_eq!(
        ready_with_tools(&set).await,
        ["mcp__py__add", "mcp__py__echo"]
    );
    assert_eq!(call(&set, "py", "echo", json!({"text": "hi"})).await, "hi");
    assert_eq!(call(&set, "py", "add", json!({"a": 2, "b": 3})).await, "5");

    // The process dies: the stream drops, the reconnects (bounded) find nobody.
    let port = first.port();
    first.kill().await;
    let failed = wait_event(&mut rx, BOUND, |e| {
        matches!(e, ConnectionEvent::Failed { .. })
    })
    .await;
    let ConnectionEvent::Failed { error, reason, .. } = failed else {
        unreachable!()
    };
    assert_eq!(reason, FailureReason::Transport, "{error}");
    assert!(error.contains("SSE event stream dropped"), "{error}");
    assert!(error.contains("3 reconnects failed"), "{error}");

    // A new process on the same address: the next call starts the server again.
    let second = SdkServer::start(&python, &script, port, &[]).await;
    assert_eq!(second.port(), port);
    assert_eq!(
        call(&set, "py", "echo", json!({"text": "again"})).await,
        "again"
    );
    set.shutdown().await;
    second.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_sse_server_is_listed_and_called() {
    let Some(dir) = installed("node_modules/@modelcontextprotocol/sdk/package.json") else {
        return;
    };
    let sdk = dir.join("node_modules/@modelcontextprotocol/sdk/dist/esm");
    let server = SdkServer::start(
        Path::new("node"),
        &fixture("ts_sse_server.mjs"),
        0,
        &[("MCP_TS_SDK", sdk.to_str().unwrap())],
    )
    .await;
    let mut fx = Fixture::new();
    let (set, _rx) = start_set(&mut fx, "ts", &server.url);
    assert_eq!(ready_with_tools(&set).await, ["mcp__ts__echo"]);
    assert_eq!(call(&set, "ts", "echo", json!({"text": "hi"})).await, "hi");
    assert_eq!(
        call(&set, "ts", "echo", json!({"text": "bye"})).await,
        "bye"
    );
    set.shutdown().await;
    server.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_streamable_http_server_under_auto() {
    let Some(dir) = installed("venv/bin/python") else {
        return;
    };
    let python = dir.join("venv/bin/python");
    let script = fixture("python_http_server.py");
    let server = SdkServer::start(&python, &script, 0, &[("MCP_PY_APP", "streamable")]).await;
    let mut fx = Fixture::new();
    fx.add(
        "py",
        ServerConfig::from(HttpConfig::new(&server.url).with_bearer_token_env_var("SDK_SSE_TOKEN")),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_env_lookup(env()),
    );
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 1, "{summary:?} {:?}", set.status());
    let status = set.status().into_iter().next().unwrap();
    assert_eq!(status.transport, "streamable_http");
    assert_eq!(
        status.protocol_version.as_deref(),
        Some("2026-07-28"),
        "the era Python mcp 2.3 negotiates over streamable HTTP under auto"
    );
    let mut tools: Vec<String> = set
        .tools()
        .await
        .iter()
        .map(|t| t.qualified_name.clone())
        .collect();
    tools.sort();
    assert_eq!(tools, ["mcp__py__add", "mcp__py__echo"]);
    assert_eq!(call(&set, "py", "echo", json!({"text": "hi"})).await, "hi");
    assert_eq!(call(&set, "py", "add", json!({"a": 2, "b": 3})).await, "5");
    set.shutdown().await;
    server.kill().await;
}
