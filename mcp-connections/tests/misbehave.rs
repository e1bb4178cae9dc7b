//! Servers that break the rules in ways real servers do: duplicate or empty tool names,
//! colliding names, unknown protocol versions. Against real `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{Fixture, faults, wait_event};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, FailureReason, ServerState,
    ServerStatus,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, RecordedRequest, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn structured(name: &str, n: u64) -> ToolSpec {
    ToolSpec::new(
        name,
        Behavior::Structured {
            value: json!({"n": n}),
        },
    )
}

fn status_of(set: &ConnectionSet, name: &str) -> ServerStatus {
    set.status()
        .into_iter()
        .find(|s| s.key == key(name))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_empty_and_colliding_tool_names_give_one_catalog_entry_each() {
    let mut fx = Fixture::new();
    fx.stdio(
        "h",
        Scenario::new("h")
            .with_tool(structured("dup", 1))
            .with_tool(ToolSpec::echo(""))
            .with_tool(structured("dup", 2))
            .with_tool(structured("a.b", 3))
            .with_tool(structured("a_b", 4))
            .with_tool(ToolSpec::echo(""))
            .with_tool(ToolSpec::new(
                "grow",
                Behavior::ChangeTools {
                    add: vec![structured("dup", 5)],
                    remove: vec![],
                },
            )),
    );
    fx.stdio("g", Scenario::new("g").with_tool(structured("dup", 6)));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_events(tx));
    set.wait_startup().await;

    let tools = set.tools().await;
    let qualified: Vec<&str> = tools.iter().map(|t| t.qualified_name.as_str()).collect();
    let distinct: BTreeSet<&str> = qualified.iter().copied().collect();
    assert_eq!(distinct.len(), qualified.len(), "{qualified:?}");
    let raw_of_h: Vec<&str> = tools
        .iter()
        .filter(|t| t.server == key("h"))
        .map(|t| t.raw_name())
        .collect();
    assert_eq!(
        raw_of_h.iter().copied().collect::<BTreeSet<_>>(),
        BTreeSet::from(["a.b", "a_b", "dup", "grow"])
    );
    assert!(!qualified.contains(&"mcp__h__"), "{qualified:?}");
    // `a.b` and `a_b` sanitize to the same name: both get distinct hashed names.
    assert!(!qualified.contains(&"mcp__h__a_b"), "{qualified:?}");
    assert!(qualified.contains(&"mcp__g__dup"));

    // The first tool of a duplicated name is the one offered and called.
    let first = set
        .call_qualified("mcp__h__dup", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(first.structured_content, Some(json!({"n": 1})));
    let other = set
        .call_qualified("mcp__g__dup", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(other.structured_content, Some(json!({"n": 6})));

    let h = status_of(&set, "h");
    assert_eq!(h.state, ServerState::Ready { tools: 4 });
    assert_eq!(
        h.warnings,
        [
            "MCP server `h` lists a tool with an empty name (2 times); it is left out (the server must give every tool a name)",
            "MCP server `h` lists tool `dup` 2 times; only the first is offered (the server must give each tool a unique name)",
        ]
    );
    assert!(status_of(&set, "g").warnings.is_empty());

    // A refreshed list (after tools/list_changed) is held to the same rule.
    set.call_tool(&key("h"), "grow", None, CallOptions::new())
        .await
        .unwrap();
    wait_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::ToolsChanged { server, .. } if server == &key("h")),
    )
    .await;
    let after = set.tools().await;
    let qualified: Vec<&str> = after.iter().map(|t| t.qualified_name.as_str()).collect();
    assert_eq!(
        qualified.iter().copied().collect::<BTreeSet<_>>().len(),
        qualified.len(),
        "{qualified:?}"
    );
    assert_eq!(
        status_of(&set, "h").warnings[1],
        "MCP server `h` lists tool `dup` 3 times; only the first is offered (the server must give each tool a unique name)"
    );
    let first = set
        .call_qualified("mcp__h__dup", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(first.structured_content, Some(json!({"n": 1})));

    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_protocol_version_fails_startup_as_protocol_before_any_use() {
    let mut fx = Fixture::new();
    // A startup timeout far longer than the bound below: the failure must come from the
    // version check, not from the timeout.
    fx.stdio_with(
        "ancient",
        Scenario::new("ancient")
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(faults(|f| {
                f.protocol_version = Some("1999-01-01".to_owned())
            })),
        |c| c.with_startup_timeout(Duration::from_secs(600)),
    );
    fx.stdio(
        "fine",
        Scenario::new("fine").with_tool(ToolSpec::echo("echo")),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    // The binary is built (if stale) by `stdio_with` above, before this clock starts.
    let summary = tokio::time::timeout(Duration::from_secs(10), set.wait_startup())
        .await
        .expect("the version check fails startup promptly, well within the startup timeout");
    assert_eq!(summary.ready(), 1);
    let ServerState::Failed(failure) = status_of(&set, "ancient").state else {
        panic!("{:?}", status_of(&set, "ancient"));
    };
    assert_eq!(failure.reason(), &FailureReason::Protocol);
    assert_eq!(
        failure.message(),
        "MCP server `ancient`: initialize answered with protocol version `1999-01-01`, which this client does not support (supported: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25); disconnected. Use a server release that speaks one of these versions"
    );
    // Disconnected before any use: no tools/list, no call reached the server.
    let methods: Vec<String> = RecordedRequest::read_log(fx.request_log("ancient"))
        .into_iter()
        .map(|r| r.method)
        .collect();
    assert_eq!(methods, ["initialize"]);
    let err = set
        .call_tool(&key("ancient"), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_not_ready(), "{err}");
    let text = mcp_key::error_chain(&err);
    assert!(text.contains("1999-01-01"), "{text}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_older_known_protocol_version_is_accepted() {
    let versions = ["2024-11-05", "2025-03-26", "2025-06-18"];
    let mut fx = Fixture::new();
    for (i, version) in versions.iter().enumerate() {
        fx.stdio(
            &format!("v{i}"),
            Scenario::new(*version)
                .with_tool(ToolSpec::echo("echo"))
                .with_faults(faults(|f| f.protocol_version = Some((*version).to_owned()))),
        );
    }
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), versions.len(), "{summary:?}");
    for i in 0..versions.len() {
        let r = set
            .call_tool(
                &key(&format!("v{i}")),
                "echo",
                Some(json!({"i": i})),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"i": i})));
    }
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_qualified_name_of_a_server_that_is_not_ready_says_why() {
    let mut fx = Fixture::new();
    fx.stdio(
        "dies",
        Scenario::new("dies")
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(faults(|f| {
                f.exit_at_startup = Some(3);
                f.stderr = Some("fatal: missing API key".to_owned());
            })),
    );
    fx.stdio(
        "fine",
        Scenario::new("fine").with_tool(ToolSpec::echo("echo")),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let err = set
        .call_qualified("mcp__dies__echo", None, CallOptions::new())
        .await
        .unwrap_err();
    match &err {
        mcp_connections::Error::NotReady { server, state, .. } => {
            assert_eq!(server, &key("dies"));
            let mcp_connections::ServerState::Failed(failure) = state.as_ref() else {
                panic!("{state:?}");
            };
            assert_eq!(
                failure.reason(),
                &FailureReason::Exited {
                    status: Some(3),
                    signal: None
                }
            );
            assert_eq!(err.failure_reason(), Some(failure.reason()));
        }
        other => panic!("{other:?}"),
    }
    let text = mcp_key::error_chain(&err);
    assert!(text.contains("fatal: missing API key"), "{text}");
    for unknown in [
        "mcp__fine__nope",
        "mcp__nobody__echo",
        "mcp__dies__",
        "echo",
    ] {
        let err = set
            .call_qualified(unknown, None, CallOptions::new())
            .await
            .unwrap_err();
        assert!(
            matches!(err, mcp_connections::Error::UnknownTool { .. }),
            "{unknown}: {err:?}"
        );
    }
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_qualified_call_restarts_a_crashed_server() {
    let mut fx = Fixture::new();
    fx.stdio(
        "crashy",
        Scenario::new("crashy")
            .with_tool(ToolSpec::new("die", Behavior::Exit { code: 7 }))
            .with_tool(ToolSpec::echo("echo")),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_events(tx)
            .with_restart_backoff(Duration::ZERO, Duration::ZERO),
    );
    set.wait_startup().await;
    let first_pid = fx.pids()[0];
    set.call_qualified("mcp__crashy__die", None, CallOptions::new())
        .await
        .unwrap_err();
    // Once the crash is recorded, the server's tools stay in the catalog, not ready...
    wait_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::Failed { server, .. } if server == &key("crashy")),
    )
    .await;
    let echo = set
        .tools()
        .await
        .into_iter()
        .find(|t| t.qualified_name == "mcp__crashy__echo")
        .expect("still listed");
    assert!(!echo.ready);
    // ...and calling one by its qualified name restarts the server.
    let r = set
        .call_qualified(
            "mcp__crashy__echo",
            Some(json!({"a": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"a": 1})));
    assert_ne!(fx.pids()[0], first_pid);
    set.shutdown().await;
    assert!(mcp_testkit::wait_gone(first_pid, Duration::from_secs(10)).await);
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_elicitation_is_answered_invalid_params() {
    let mut fx = Fixture::new();
    fx.stdio(
        "asks",
        Scenario::new("asks")
            // A form request without `requestedSchema`.
            .with_tool(ToolSpec::new(
                "malformed",
                Behavior::ElicitRaw {
                    params: json!({"mode": "form", "message": "Your name?"}),
                },
            ))
            .with_tool(ToolSpec::new(
                "well_formed",
                Behavior::ElicitRaw {
                    params: json!({
                        "mode": "form",
                        "message": "Your name?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"name": {"type": "string", "default": "Ada"}},
                        },
                    }),
                },
            )),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_elicitation_handler(std::sync::Arc::new(mcp_connections::AcceptDefaults)),
    );
    set.wait_startup().await;
    let r = set
        .call_tool(&key("asks"), "malformed", None, CallOptions::new())
        .await
        .unwrap();
    let error = &r.structured_content.unwrap()["error"];
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("malformed elicitation/create request: "),
        "{error}"
    );
    let r = set
        .call_tool(&key("asks"), "well_formed", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(
        r.structured_content.unwrap()["result"],
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_known_protocol_version_is_accepted_over_http() {
    // (An unknown version cannot be played over HTTP: rmcp's server, under the testkit's
    // HTTP runner, answers 400 to requests whose `MCP-Protocol-Version` header it does not
    // know, so the client fails at `notifications/initialized`, before the version check.)
    let older = mcp_testkit::HttpFakeServer::start(
        Scenario::new("web")
            .with_tool(ToolSpec::echo("echo"))
            .with_faults(faults(|f| {
                f.protocol_version = Some("2025-06-18".to_owned())
            })),
    )
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "older",
        mcp_catalog::ServerConfig::from(mcp_catalog::HttpConfig::new(older.url())),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let r = set
        .call_qualified(
            "mcp__older__echo",
            Some(json!({"v": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"v": 1})));
    set.shutdown().await;
    older.shutdown().await;
}
