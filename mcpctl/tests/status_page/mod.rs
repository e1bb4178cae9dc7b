//! What the status page tests share: a gateway configuration with a working server, one
//! that fails at startup writing hostile text to stderr, and one whose `serverInfo` and
//! tool names are hostile; a 2025-era client; plain HTTP requests.

#![allow(
    dead_code,
    reason = "each test file uses a different part of the harness"
)]
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test harness")]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::support::{self, Workdir};

/// HTML, an attribute breakout and terminal escapes (colour, window title, clear screen).
pub(crate) const HOSTILE: &str = "<script>alert('pwned')</script>\"><img src=x onerror=alert(2)>\u{1b}[31mRED\u{1b}[0m\u{1b}]0;title\u{7}\u{1b}[2J";

/// What the failing server writes to stderr before it exits.
pub(crate) const HOSTILE_STDERR: &str =
    "boom <script>alert('stderr')</script>\u{1b}[1;31mFATAL\u{1b}[0m";

/// The hostile text as the page shows it: escaped for HTML, escapes as text.
pub(crate) const HOSTILE_SHOWN: &str = "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;\\e[31mRED\\e[0m\\e]0;title\\x07\\e[2J";

/// `broken` (exits at startup), `echo` (echo, a tool error, a crash), `hostile`, and
/// `modern` (MCP 2026-07-28).
pub(crate) fn config(wd: &Workdir) -> PathBuf {
    let server = |name: &str, scenario: Value| {
        let scenario = support::toml_str(&scenario.to_string());
        format!(
            "[mcp_servers.{name}]\ncommand = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {scenario}]\ndefault_tools_approval_mode = \"approve\"\n\n",
            env!("CARGO_BIN_EXE_mcpctl")
        )
    };
    let text = [
        server(
            "broken",
            json!({"faults": {"exit_at_startup": 3, "stderr": HOSTILE_STDERR}}),
        ),
        server(
            "echo",
            json!({"tools": [
                {"name": "echo", "behavior": {"kind": "echo"}},
                {"name": "fail", "behavior": {"kind": "error", "message": "no"}},
                {"name": "crash", "behavior": {"kind": "exit", "code": 7}},
            ]}),
        ),
        server(
            "hostile",
            json!({
                "server_info": {"name": HOSTILE, "version": "<b>6.6.6</b>", "title": HOSTILE},
                "tools": [
                    {"name": "echo", "behavior": {"kind": "echo"}},
                    {"name": HOSTILE, "behavior": {"kind": "echo"}},
                    {"name": HOSTILE, "behavior": {"kind": "echo"}},
                ],
            }),
        ),
        server(
            "modern",
            json!({"faults": {"protocol_version": "2026-07-28"},
                   "tools": [{"name": "echo", "behavior": {"kind": "echo"}}]}),
        ),
    ]
    .concat();
    wd.write("gateway.toml", &text)
}

/// A 2025-era client of the gateway at `url` (the MCP endpoint).
pub(crate) async fn connect(url: &str, token: &str) -> RunningService<RoleClient, ClientConfig> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token),
    );
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("status-test", "1"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25);
    tokio::time::timeout(BOUND, rmcp::ServiceExt::serve(info, transport))
        .await
        .expect("the client initializes in time")
        .unwrap()
}

/// How long one request of the test may take.
const BOUND: Duration = Duration::from_secs(30);

/// Calls the gateway's tool `name` with `{"text": "hi"}`; whether the result is an error.
pub(crate) async fn call(client: &RunningService<RoleClient, ClientConfig>, name: &str) -> bool {
    let params = CallToolRequestParams::new(name.to_owned())
        .with_arguments(json!({"text": "hi"}).as_object().unwrap().clone());
    tokio::time::timeout(BOUND, client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{name} returned in time"))
        .unwrap()
        .is_error
        == Some(true)
}

/// The gateway's address (`http://127.0.0.1:PORT`) from its MCP endpoint's URL.
pub(crate) fn base(mcp_url: &str) -> String {
    mcp_url.strip_suffix("/mcp").unwrap().to_owned()
}

/// An HTTP response: status, head (lowercase), body.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

/// `GET base + path` on its own connection, with `Authorization: Bearer token` when given.
pub(crate) fn get(base: &str, path: &str, token: Option<&str>) -> Reply {
    let authority = base.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(BOUND)).unwrap();
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    if let Some(token) = token {
        request.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let head = head.to_ascii_lowercase();
    assert!(
        !head.contains("transfer-encoding: chunked"),
        "a whole body with its length: {head}"
    );
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Reply {
        status,
        head,
        body: body.to_owned(),
    }
}

/// `/status.json`, parsed.
pub(crate) fn status_json(base: &str, token: &str) -> Value {
    let reply = get(base, "/status.json", Some(token));
    assert_eq!(reply.status, 200, "{reply:?}");
    serde_json::from_str(&reply.body).unwrap()
}

/// The server named `name` in a `/status.json` value.
pub(crate) fn server<'a>(status: &'a Value, name: &str) -> &'a Value {
    status["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["server"] == name)
        .unwrap_or_else(|| panic!("no server {name} in {status:#}"))
}

/// Reads `/status.json` until `done` holds of it (bounded: 30 s).
pub(crate) async fn wait_for(base: &str, token: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = status_json(base, token);
        if done(&status) {
            return status;
        }
        assert!(Instant::now() < deadline, "never reached: {status:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every server settled: `echo`, `hostile` and `modern` ready, `broken` failed.
pub(crate) fn settled(status: &Value) -> bool {
    server(status, "echo")["state"] == "ready"
        && server(status, "hostile")["state"] == "ready"
        && server(status, "modern")["state"] == "ready"
        && server(status, "broken")["state"] == "failed"
}
