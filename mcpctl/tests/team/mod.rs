//! What the tests of `mcpctl serve --http` as a team's gateway share: the testkit's fake
//! authorization server as the team's identity provider, a configuration with two
//! upstream servers and `[gateway.oauth]`, tokens, and raw HTTP requests (so a test can
//! present one caller's session or `requestState` with another caller's token).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers; each test file uses a part"
)]

use std::path::PathBuf;

use mcp_testkit::{AccessTokenClaims, AuthServerOptions, FakeAuthServer};
use serde_json::{Value, json};

use crate::support::{self, Workdir};

/// The scope every token needs at the gateway.
pub(crate) const SCOPE: &str = "mcp:read";

/// The token `MCPCTL_SERVE_TOKEN` is set to (unused with `[gateway.oauth]`).
pub(crate) const STATIC_TOKEN: &str = "static-token-0123456789abcdef";

/// The team's authorization server: JWT access tokens, `alice` logging in.
pub(crate) async fn auth_server() -> FakeAuthServer {
    FakeAuthServer::start(
        AuthServerOptions::new()
            .with_jwt_access_tokens()
            .with_subject("alice", ["readers"]),
    )
    .await
    .unwrap()
}

/// A configuration with two servers behind the gateway and `[gateway.oauth]` for
/// `issuer` (plus `oauth` lines), then `rest` (grants, limits).
///
/// - `notes`: tools `echo`, `ask` (asks who is calling), a resource `file:///readme`, a
///   prompt `greet`;
/// - `files`: tools `read_file`, `delete_file`, a resource `file:///secret`, a prompt
///   `wipe`;
/// - `work` (MCP 2026-07-28, so calls of several clients run side by side): `meet`, which
///   waits for a second call of it (a call kept in flight).
pub(crate) fn config(wd: &Workdir, issuer: &str, oauth: &str, rest: &str) -> PathBuf {
    let notes = json!({
        "tools": [
            {"name": "echo", "behavior": {"kind": "echo"}},
            {"name": "ask", "behavior": {
                "kind": "elicit_form",
                "message": "who is calling?",
                "schema": {"type": "object", "properties": {"who": {"type": "string"}}},
            }},
        ],
        "record": {"request_log": request_log(wd, "notes")},
        "resources": [{"uri": "file:///readme", "name": "readme", "text": "hello"}],
        "capabilities": {"resources_subscribe": true},
        "prompts": [{"name": "greet", "arguments": ["who"], "text": "Say hello to {who}."}],
    });
    let files = json!({
        "tools": [
            {"name": "read_file", "behavior": {"kind": "echo"}},
            {"name": "delete_file", "behavior": {"kind": "echo"}},
        ],
        "record": {"request_log": request_log(wd, "files")},
        "resources": [{"uri": "file:///secret", "name": "secret", "text": "the secret"}],
        "capabilities": {"resources_subscribe": true},
        "prompts": [{"name": "wipe", "text": "Delete everything."}],
    });
    let work = json!({
        "record": {"request_log": work_log(wd)},
        "faults": {"protocol_version": "2026-07-28"},
        "tools": [
            {"name": "meet", "behavior": {"kind": "barrier", "name": "m", "parties": 2}},
        ],
    });
    let server = |name: &str, scenario: &Value, more: &str| {
        format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n{more}\n",
            support::toml_str(&scenario.to_string())
        )
    };
    let text = format!(
        "{}{}{}[gateway.oauth]\nissuer = {}\nscopes = [\"{SCOPE}\"]\n{oauth}\n{rest}",
        server("notes", &notes, ""),
        server("files", &files, ""),
        server("work", &work, "protocol = \"2026-07-28\"\n"),
        support::toml_str(issuer),
    );
    wd.write("mcp.toml", &text)
}

/// Where `work` logs the requests it gets.
pub(crate) fn work_log(wd: &Workdir) -> PathBuf {
    wd.path().join("work-requests.jsonl")
}

/// Where `notes` or `files` logs the requests it gets.
pub(crate) fn request_log(wd: &Workdir, server: &str) -> PathBuf {
    wd.path().join(format!("{server}-requests.jsonl"))
}

/// The `resources/subscribe` requests `server` (`notes`, `files`) got: their URIs.
pub(crate) fn subscribed(wd: &Workdir, server: &str) -> Vec<String> {
    mcp_testkit::RecordedRequest::read_log(request_log(wd, server))
        .iter()
        .filter(|r| r.method == "resources/subscribe")
        .map(|r| r.params["uri"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Opens a 2026-era `subscriptions/listen` with `token` for the resources `uris`: the
/// response, whose event stream stays open while it lives.
pub(crate) async fn listen(url: &str, token: &str, uris: &[&str]) -> reqwest::Response {
    let message = request(
        "subscriptions/listen",
        json!({"_meta": modern_meta(), "notifications": {"resourceSubscriptions": uris}}),
    );
    http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", bearer(token))
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .json(&message)
        .send()
        .await
        .unwrap()
}

/// Waits (bounded) until `work` got a call of `tool`.
pub(crate) async fn work_called(wd: &Workdir, tool: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !mcp_testkit::RecordedRequest::read_log(work_log(wd))
        .iter()
        .any(|r| r.method == "tools/call" && r.params["name"] == tool)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "work never got a call of {tool}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A valid token of `subject` (in `groups`) for the gateway at `url`.
pub(crate) fn token(auth: &FakeAuthServer, url: &str, subject: &str, groups: &[&str]) -> String {
    auth.mint_jwt(
        &AccessTokenClaims::new(subject)
            .with_groups(groups.iter().copied())
            .with_scopes([SCOPE])
            .with_audience(url),
    )
}

/// An HTTP client for raw requests (no redirects followed).
pub(crate) fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .unwrap()
}

/// What the gateway answered a raw request.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: reqwest::header::HeaderMap,
    /// The JSON-RPC message (the last one of an event stream), or the body as a string.
    pub(crate) body: Value,
}

impl Answer {
    /// A header's value as text.
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap_or_default().to_owned())
    }
}

/// POSTs one JSON-RPC message with `authorization` (the whole header value) and the
/// session id, if any; 2026-era requests (no session) get the era's headers.
pub(crate) async fn post(
    url: &str,
    authorization: Option<&str>,
    session: Option<&str>,
    message: &Value,
) -> Answer {
    let mut request = http()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(message);
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    match session {
        Some(session) => {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        None if message["method"] != "initialize" => {
            request = request
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", message["method"].as_str().unwrap_or_default());
            let params = &message["params"];
            let name = params["name"].as_str().or_else(|| params["uri"].as_str());
            if let Some(name) = name.or_else(|| params["taskId"].as_str()) {
                request = request.header("mcp-name", name);
            }
        }
        None => {}
    }
    answer(request.send().await.unwrap()).await
}

/// Reads an answer: JSON, or the last event of an event stream.
pub(crate) async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .next_back()
            .unwrap_or(Value::String(text.clone()))
    });
    Answer {
        status,
        headers,
        body,
    }
}

/// `Bearer <token>`.
pub(crate) fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// A 2025-era `initialize` request.
pub(crate) fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

/// Opens a 2025-era session with `token`: its id.
pub(crate) async fn open_session(url: &str, token: &str) -> String {
    let answer = post(url, Some(&bearer(token)), None, &initialize()).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    let session = answer.header("mcp-session-id").expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let done = post(url, Some(&bearer(token)), Some(&session), &initialized).await;
    assert_eq!(done.status, 202, "{done:?}");
    session
}

/// A request `method` with `params`, id 2.
pub(crate) fn request(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params})
}

/// The `_meta` of a 2026-era request from a client that answers elicitations.
pub(crate) fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    })
}

/// A 2026-era `tools/call` of `name` (a retry when `state` is given, answering `who`).
pub(crate) fn modern_call(name: &str, state: Option<(&str, &str)>) -> Value {
    let mut params = json!({"name": name, "arguments": {}, "_meta": modern_meta()});
    if let Some((state, who)) = state {
        params["requestState"] = json!(state);
        params["inputResponses"] = json!({"input": {"action": "accept", "content": {"who": who}}});
    }
    request("tools/call", params)
}

/// The names of the tools a `tools/list` answer lists, sorted.
pub(crate) fn tool_names(answer: &Answer) -> Vec<String> {
    let mut names: Vec<String> = answer.body["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {answer:?}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}
