//! A real server of another SDK: the Python `mcp` package's `MCPServer`, over stdio, under
//! `protocol = "auto"`: which era it negotiates, and that calls work in it.
//!
//! Python `mcp` is installed by `scripts/gateway-clients.sh` into
//! target/gateway-clients/venv (CI runs it and sets `MCP_REQUIRE_GATEWAY_CLIENTS=1`, which
//! makes a missing install a failure). Without it and without that variable, the test
//! says so on stderr and does nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "tests; the skip notice goes to stderr"
)]

mod common;

use std::path::PathBuf;

use common::Fixture;
use mcp_catalog::ServerConfig;
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use pretty_assertions::assert_eq;
use serde_json::json;

const SERVER: &str = r#"
from mcp.server.mcpserver import MCPServer

app = MCPServer("py-echo")


@app.tool()
def echo(text: str) -> str:
    """Echo the text."""
    return text


app.run()
"#;

/// The Python mcp venv's Python, or `None` (test skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    mcp_testkit::installed_test_client(env!("CARGO_MANIFEST_DIR"), "venv/bin/python", "Python mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_mcp_server_under_auto() {
    let Some(python) = python() else { return };
    let mut fx = Fixture::new();
    let script = fx.home.join("py_echo.py");
    std::fs::write(&script, SERVER).unwrap();
    fx.add(
        "py",
        ServerConfig::stdio(python.display().to_string()).with_args([script.display().to_string()]),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 1, "{summary:?}");
    assert_eq!(
        set.status()[0].protocol_version.as_deref(),
        Some(PYTHON_MCP_ERA),
        "the era Python mcp 2.3 negotiates under auto"
    );
    let result = set
        .call_tool(
            &"py".parse().unwrap(),
            "echo",
            Some(json!({"text": "hi"})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    set.shutdown().await;
}

/// What Python `mcp` 2.3.0's `MCPServer` negotiates under `auto`.
const PYTHON_MCP_ERA: &str = "2026-07-28";
