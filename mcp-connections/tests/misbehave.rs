//! Servers that break the rules in ways real servers do: duplicate or empty tool names,
//! colliding names. Against real `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{Fixture, wait_event};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, ServerState, ServerStatus,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, Scenario, ToolSpec};
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
