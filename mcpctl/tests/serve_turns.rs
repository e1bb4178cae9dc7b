//! No gateway client holds another's calls hostage. Calls of different clients to one
//! upstream server take turns only where the server's requests cannot be tied to the call
//! that caused them (a 2025-era server); a 2026-era server asks through the call's own
//! reply, so nobody waits. Where turns are taken, a question the client does not answer is
//! cancelled at the answer deadline (`--answer-deadline`), and the others' calls go on.
//!
//! Each case starts `mcpctl serve --http` with two upstream servers of the same scenario,
//! `old` (2025-11-25) and `new` (2026-07-28), and two HTTP clients: one that never answers
//! an elicitation, and one that just calls `echo`. The bounds below only catch a hang (the
//! gateway used to hold the others for the whole question: minutes); they time nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod support;

use std::io::{BufRead, BufReader};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationCapability, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::json;
use support::{Served, Workdir};
use tokio::sync::Notify;

const TOKEN: &str = "turns-test-token-0123456789abcdef";

/// A client that announces elicitation and never answers one: it says it was asked, then
/// waits forever (a person who walked away).
#[derive(Clone)]
struct Absent {
    asked: Arc<Notify>,
}

impl ClientHandler for Absent {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::default());
        ClientConfig::new(capabilities, Implementation::new("absent", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.notify_one();
        std::future::pending().await
    }
}

fn config(wd: &Workdir) -> std::path::PathBuf {
    let log = wd.path().join("requests.jsonl");
    let server = |name: &str, protocol: &str| {
        let mut scenario = json!({
            "record": {"request_log": log},
            "tools": [
                {"name": "echo", "behavior": {"kind": "echo"}},
                {"name": "slow", "behavior": {"kind": "slow_progress", "steps": 100, "interval_ms": 100}},
                {"name": "ask", "behavior": {
                    "kind": "elicit_form",
                    "message": "who is calling?",
                    "schema": {"type": "object", "properties": {"who": {"type": "string"}}},
                }},
            ],
        });
        if protocol == "2026-07-28" {
            scenario["faults"] = json!({"protocol_version": protocol});
        }
        let scenario = support::toml_str(&scenario.to_string());
        format!(
            "[mcp_servers.{name}]\ncommand = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {scenario}]\nprotocol = \"{protocol}\"\ndefault_tools_approval_mode = \"approve\"\n\n",
            env!("CARGO_BIN_EXE_mcpctl")
        )
    };
    wd.write(
        "gateway.toml",
        &format!(
            "{}{}",
            server("old", "2025-11-25"),
            server("new", "2026-07-28")
        ),
    )
}

async fn connect<H: ClientHandler>(url: &str, handler: H) -> RunningService<RoleClient, H> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(TOKEN),
    );
    handler.serve(transport).await.unwrap()
}

fn plain() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("plain", "1"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// Both servers' tools are listed (they start in the background).
async fn wait_listed(client: &RunningService<RoleClient, ClientConfig>) {
    let mut names = Vec::new();
    for _ in 0..400 {
        let tools = client.list_all_tools().await.unwrap();
        names = tools.iter().map(|t| t.name.to_string()).collect();
        if names.iter().any(|n| n == "mcp__old__ask") && names.iter().any(|n| n == "mcp__new__ask")
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the upstream servers never listed: {names:?}");
}

fn call(name: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(json!({"text": "hi"}).as_object().unwrap().clone())
}

/// While one client's call to `tool` waits for an answer that never comes, another
/// client's `echo` on the same server returns; the absent client's call ends as
/// `expect_absent` says.
fn another_client_is_not_held(server: &str, extra: &[&str], absent_call_ends: bool) {
    let wd = Workdir::new();
    let mut served = Served::start(&wd, &config(&wd), TOKEN, extra);
    let runtime = support::runtime();
    runtime.block_on(async {
        let other = connect(&served.url, plain()).await;
        wait_listed(&other).await;
        let asked = Arc::new(Notify::new());
        let absent = connect(
            &served.url,
            Absent {
                asked: Arc::clone(&asked),
            },
        )
        .await;
        let absent_peer = absent.peer().clone();
        let ask = format!("mcp__{server}__ask");
        let waiting = tokio::spawn(async move { absent_peer.call_tool(call(&ask)).await });
        tokio::time::timeout(Duration::from_secs(30), asked.notified())
            .await
            .expect("the absent client was asked");

        let echo = tokio::time::timeout(
            Duration::from_secs(30),
            other.call_tool(call(&format!("mcp__{server}__echo"))),
        )
        .await
        .expect("another client's call was held by the absent client's question")
        .unwrap();
        assert_ne!(echo.is_error, Some(true), "{echo:?}");

        if absent_call_ends {
            // The question was cancelled at the deadline: the server got `cancel`.
            let result = tokio::time::timeout(Duration::from_secs(30), waiting)
                .await
                .expect("the absent client's call ended at the deadline")
                .unwrap()
                .unwrap();
            assert_eq!(
                result.structured_content.as_ref().unwrap()["action"],
                "cancel",
                "{result:?}"
            );
        } else {
            // Nobody cancelled it: it still waits for its own client.
            assert!(!waiting.is_finished());
            waiting.abort();
        }
        let _ = absent.cancel().await;
        let _ = other.cancel().await;
    });
    served.stop();
    wd.assert_no_server_left();
}

/// A 2026-era server asks through the call's own reply: no turns, so another client's
/// call is not held at all (it used to wait out the whole question).
#[test]
fn a_client_that_does_not_answer_holds_nobody_on_a_2026_server() {
    another_client_is_not_held("new", &[], false);
}

/// A 2025-era server's request names no call, so its calls take turns; the question of a
/// client that does not answer is cancelled at the answer deadline and the others go on.
#[test]
fn a_client_that_does_not_answer_holds_others_only_until_the_answer_deadline() {
    another_client_is_not_held("old", &["--answer-deadline", "2"], true);
}

#[test]
fn an_answer_deadline_of_zero_is_refused() {
    let wd = Workdir::new();
    let run = wd.run(&["serve", "--http", "127.0.0.1:0", "--answer-deadline", "0"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--answer-deadline 0"), "{}", run.stderr);
}

/// A 2026-era client has no session: its every request gets a gateway of its own, so the
/// per-client `--max-calls` did not bound it, and its requests counted against
/// `--max-clients` (with one session open and `--max-clients 1` it was refused). Now its
/// calls share one `--max-calls` bound, and only sessions count as clients.
#[test]
fn calls_of_2026_clients_are_bounded_and_are_no_clients() {
    let wd = Workdir::new();
    let mut served = Served::start(
        &wd,
        &config(&wd),
        TOKEN,
        &["--max-calls", "1", "--max-clients", "1"],
    );
    let runtime = support::runtime();
    runtime.block_on(async {
        // The one client a session may be.
        let session = connect(&served.url, plain()).await;
        wait_listed(&session).await;
        let modern = || async {
            let transport = StreamableHttpClientTransport::from_config(
                StreamableHttpClientTransportConfig::with_uri(served.url.clone())
                    .auth_header(TOKEN),
            );
            let info = ClientConfig::new(
                ClientCapabilities::default(),
                Implementation::new("modern", "1"),
            )
            .with_protocol_version(ProtocolVersion::V_2026_07_28);
            rmcp::service::ClientServiceExt::serve_with_lifecycle(
                info,
                transport,
                rmcp::service::ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap()
        };
        let first = modern().await;
        let second = modern().await;
        // Not refused as a second client.
        let echo = second.call_tool(call("mcp__old__echo")).await.unwrap();
        assert_ne!(echo.is_error, Some(true), "{echo:?}");

        // One slow call in flight (seen upstream), then another: over the bound.
        let peer = first.peer().clone();
        let slow = tokio::spawn(async move { peer.call_tool(call("mcp__old__slow")).await });
        let log = wd.path().join("requests.jsonl");
        let mut seen = false;
        for _ in 0..600 {
            seen = std::fs::read_to_string(&log).is_ok_and(|t| t.contains("\"slow\""));
            if seen {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(seen, "the slow call never reached the server");
        let refused = second.call_tool(call("mcp__old__echo")).await.unwrap();
        assert_eq!(refused.is_error, Some(true), "{refused:?}");
        assert!(
            format!("{refused:?}").contains("too many calls in flight"),
            "{refused:?}"
        );
        slow.abort();
        let _ = first.cancel().await;
        let _ = second.cancel().await;
        let _ = session.cancel().await;
    });
    served.stop();
    wd.assert_no_server_left();
}

/// One HTTP request on its own connection; returns the connection after the head, and
/// the head.
fn post(url: &str, session: Option<&str>, body: &str) -> (BufReader<std::net::TcpStream>, String) {
    request("POST", url, session, body)
}

fn request(
    method: &str,
    url: &str,
    session: Option<&str>,
    body: &str,
) -> (BufReader<std::net::TcpStream>, String) {
    use std::io::Write;
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    // Never hang the test on a read.
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "{method} /{path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
    }
    (reader, head)
}

/// Reads `reader` until a line contains `needle`.
fn read_until(reader: &mut BufReader<std::net::TcpStream>, needle: &str) {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "ended before {needle}"
        );
        if line.contains(needle) {
            return;
        }
    }
}

/// A 2025-era client that goes away (its connection closes) while the gateway waits for
/// its answer no longer holds the others' calls until the answer deadline (60 s here):
/// its broken stream makes the gateway ping it, and a client that does not answer is gone,
/// its session closed and its calls cancelled.
#[test]
fn a_client_that_goes_away_mid_question_holds_nobody() {
    let wd = Workdir::new();
    let mut served = Served::start(&wd, &config(&wd), TOKEN, &[]);
    let runtime = support::runtime();
    let other = runtime.block_on(async {
        let other = connect(&served.url, plain()).await;
        wait_listed(&other).await;
        other
    });

    // The client that goes away, by hand: initialize, initialized, then a call whose
    // server asks it something; once the question arrives, its connection closes.
    let (mut init, head) = post(
        &served.url,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"leaver","version":"1"}}}"#,
    );
    let session = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"));
    read_until(&mut init, "\"result\"");
    drop(init);
    drop(post(
        &served.url,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ));
    // Its event stream, where the gateway's questions to it go.
    let (mut events, _) = request("GET", &served.url, Some(&session), "");
    let (call_stream, _) = post(
        &served.url,
        Some(&session),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__old__ask","arguments":{}}}"#,
    );
    read_until(&mut events, "elicitation/create");
    drop(events);
    drop(call_stream);

    runtime.block_on(async {
        let echo = tokio::time::timeout(
            Duration::from_secs(30),
            other.call_tool(call("mcp__old__echo")),
        )
        .await
        .expect("a client that went away held another client's call")
        .unwrap();
        assert_ne!(echo.is_error, Some(true), "{echo:?}");
        let _ = other.cancel().await;
    });
    served.stop();
    wd.assert_no_server_left();
}
