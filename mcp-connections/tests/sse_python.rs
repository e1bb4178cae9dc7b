//! A real legacy HTTP+SSE server of another SDK: the Python `mcp` package's `MCPServer`
//! served with its `sse_app` (tests/fixtures/python_sse_server.py), listed and called with
//! a bearer token; then its process is killed (the event stream drops): the client's
//! bounded reconnects fail, the server is reported failed (`transport`) at once, and once
//! a new process listens on the same address the next call starts it again.
//!
//! Python `mcp` is installed by `scripts/gateway-clients.sh` into
//! target/gateway-clients/venv (CI runs it and sets `MCP_REQUIRE_GATEWAY_CLIENTS=1`, which
//! makes a missing install a failure). Without it and without that variable, the test
//! says so on stderr and does nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    clippy::disallowed_methods,
    reason = "tests; the skip notice goes to stderr; the test starts the Python server itself"
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
const TOKEN: &str = "py-sse-token";

fn python() -> Option<PathBuf> {
    let python =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/gateway-clients/venv/bin/python");
    if python.is_file() {
        return Some(python);
    }
    assert!(
        std::env::var_os("MCP_REQUIRE_GATEWAY_CLIENTS").is_none(),
        "Python mcp is not installed at {}: run scripts/gateway-clients.sh",
        python.display()
    );
    eprintln!(
        "SKIPPED: Python mcp is not installed at {}; run scripts/gateway-clients.sh",
        python.display()
    );
    None
}

/// One Python server process and the URL of its event stream.
struct PyServer {
    child: tokio::process::Child,
    pid: u32,
    url: String,
}

impl PyServer {
    /// Starts the server on `port` (0: any) and waits for its URL line.
    async fn start(python: &Path, port: u16) -> Self {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/python_sse_server.py");
        let mut child = tokio::process::Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .env("SSE_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = tokio::time::timeout(BOUND, lines.next_line())
            .await
            .expect("the Python server prints its URL")
            .unwrap()
            .expect("a URL line");
        Self { child, pid, url }
    }

    /// Kills the process and checks it is gone.
    async fn kill(mut self) {
        self.child.kill().await.unwrap();
        assert!(mcp_testkit::wait_gone(self.pid, BOUND).await);
        mcp_testkit::assert_no_process(self.pid);
    }
}

fn env() -> SharedEnvLookup {
    Arc::new(|name: &str| (name == "PY_SSE_TOKEN").then(|| TOKEN.to_owned()))
}

async fn call(set: &ConnectionSet, tool: &str, args: serde_json::Value) -> serde_json::Value {
    let result = tokio::time::timeout(
        BOUND,
        set.call_tool(&"py".parse().unwrap(), tool, Some(args), CallOptions::new()),
    )
    .await
    .expect("the call ends")
    .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    serde_json::to_value(&result.content).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sse_server_is_listed_called_and_recovered_after_its_stream_drops() {
    let Some(python) = python() else { return };
    let first = PyServer::start(&python, 0).await;
    let port = reqwest::Url::parse(&first.url).unwrap().port().unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "py",
        ServerConfig::new(Transport::Sse(
            HttpConfig::new(first.url.clone()).with_bearer_token_env_var("PY_SSE_TOKEN"),
        )),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_env_lookup(env())
            .with_events(tx),
    );
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
    assert_eq!(tools, ["mcp__py__add", "mcp__py__echo"]);
    assert_eq!(
        call(&set, "echo", json!({"text": "hi"})).await[0]["text"],
        json!("hi")
    );
    assert_eq!(
        call(&set, "add", json!({"a": 2, "b": 3})).await[0]["text"],
        json!("5")
    );

    // The process dies: the stream drops, the reconnects (bounded) find nobody.
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
    let second = PyServer::start(&python, port).await;
    assert_eq!(second.url, fx_url(&fx));
    assert_eq!(
        call(&set, "echo", json!({"text": "again"})).await[0]["text"],
        json!("again")
    );
    set.shutdown().await;
    second.kill().await;
}

fn fx_url(fx: &Fixture) -> String {
    fx.config()
        .servers()
        .values()
        .next()
        .unwrap()
        .transport()
        .as_http()
        .unwrap()
        .url()
        .to_owned()
}
