//! The in-process runner over `tokio::io::duplex`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::time::Duration;

use common::{call, connect, suite};
use mcp_testkit::{Behavior, Faults, InProcessServer, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use rmcp::model::{PaginatedRequestParams, ProtocolVersion};
use serde_json::json;

#[tokio::test]
async fn every_tool_behaviour_works_in_process() {
    let (transport, server) = InProcessServer::start(suite::scenario());
    let (client, seen) = connect(transport).await;
    suite::run(&client, &seen).await;
    assert_eq!(
        client.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2025_11_25
    );
    let methods: Vec<String> = server.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods[0], "initialize");
    assert!(methods.contains(&"tools/call".to_owned()));
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn exit_closes_the_transport_mid_call() {
    let scenario =
        Scenario::new("crash").with_tool(ToolSpec::new("die", Behavior::Exit { code: 3 }));
    let (transport, server) = InProcessServer::start(scenario);
    let (client, _) = connect(transport).await;
    let err = client
        .call_tool(rmcp::model::CallToolRequestParams::new("die"))
        .await
        .expect_err("the call must fail, not answer");
    assert!(
        matches!(err, rmcp::ServiceError::TransportClosed),
        "a crash closes the transport, it does not answer: {err:?}"
    );
    tokio::time::timeout(Duration::from_secs(5), async {
        while !server.is_finished() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn pagination_repeating_and_endless_cursors() {
    let mut scenario = Scenario::new("pages");
    for name in ["a", "b", "c", "d", "e"] {
        scenario = scenario.with_tool(ToolSpec::echo(name));
    }
    let paged = scenario
        .clone()
        .with_faults(Faults::new().with_page_size(2));
    let (transport, server) = InProcessServer::start(paged);
    let (client, _) = connect(transport).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 2);
    assert_eq!(first.next_cursor.as_deref(), Some("2"));
    let all: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(all, ["a", "b", "c", "d", "e"]);
    client.cancel().await.unwrap();
    server.shutdown().await;

    let repeating = scenario
        .clone()
        .with_faults(Faults::new().with_page_size(2).with_repeating_cursor());
    let (transport, server) = InProcessServer::start(repeating);
    let (client, _) = connect(transport).await;
    let mut cursor = None;
    for _ in 0..3 {
        let page = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ))
            .await
            .unwrap();
        assert_eq!(page.tools.len(), 2);
        assert_eq!(
            page.next_cursor.as_deref(),
            Some(mcp_testkit::REPEATING_CURSOR)
        );
        cursor = page.next_cursor;
    }
    client.cancel().await.unwrap();
    server.shutdown().await;

    let endless = scenario.with_faults(Faults::new().with_endless_pages());
    let (transport, server) = InProcessServer::start(endless);
    let (client, _) = connect(transport).await;
    let mut cursor = None;
    let mut names = Vec::new();
    for _ in 0..20 {
        let page = client
            .list_tools(Some(
                PaginatedRequestParams::default().with_cursor(cursor.clone()),
            ))
            .await
            .unwrap();
        names.extend(page.tools.into_iter().map(|t| t.name.to_string()));
        cursor = page.next_cursor;
        assert!(cursor.is_some(), "an endless list always has a next page");
    }
    assert_eq!(names.len(), 5 + 19);
    assert_eq!(names.last().map(String::as_str), Some("endless_18"));
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn resources_paginate_too() {
    let mut scenario = Scenario::new("res").with_faults(Faults::new().with_page_size(1));
    for i in 0..3 {
        scenario = scenario.with_resource(mcp_testkit::ResourceSpec::new(
            format!("fake://{i}"),
            format!("r{i}"),
            "x",
        ));
    }
    let (transport, server) = InProcessServer::start(scenario);
    let (client, _) = connect(transport).await;
    let first = client.list_resources(None).await.unwrap();
    assert_eq!(first.resources.len(), 1);
    assert_eq!(client.list_all_resources().await.unwrap().len(), 3);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn slow_initialize_takes_the_delay() {
    let scenario = Scenario::new("slow")
        .with_tool(ToolSpec::echo("e"))
        .with_faults(Faults::new().with_init_delay_ms(30_000));
    let (transport, server) = InProcessServer::start(scenario);
    let start = tokio::time::Instant::now();
    let (client, _) = connect(transport).await;
    assert!(start.elapsed() >= Duration::from_secs(30));
    assert_eq!(
        call(&client, "e", json!({"a": 1})).await.structured_content,
        Some(json!({"a": 1}))
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn slow_tools_list_delays_each_page() {
    let scenario = Scenario::new("slow-list")
        .with_tool(ToolSpec::echo("a"))
        .with_tool(ToolSpec::echo("b"))
        .with_faults(Faults::new().with_list_delay_ms(10_000).with_page_size(1));
    let (transport, server) = InProcessServer::start(scenario);
    let (client, _) = connect(transport).await;
    let start = tokio::time::Instant::now();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    // Two pages, each answered after the delay.
    assert!(start.elapsed() >= Duration::from_secs(20));
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn hanging_initialize_never_answers() {
    let scenario = Scenario::new("hang").with_faults(Faults::new().with_hang_initialize());
    let (transport, server) = InProcessServer::start(scenario);
    let handshake = connect(transport);
    assert!(
        tokio::time::timeout(Duration::from_secs(3600), handshake)
            .await
            .is_err()
    );
    // The request was received and logged, just never answered.
    assert_eq!(server.requests()[0].method, "initialize");
    server.shutdown().await;
}

#[tokio::test]
async fn garbage_and_huge_line_precede_the_protocol() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let scenario = Scenario::new("noisy")
        .with_faults(Faults::new().with_garbage_stdout().with_huge_line(200_000));
    let (transport, server) = InProcessServer::start(scenario);
    let (read, mut write) = tokio::io::split(transport);
    let mut read = BufReader::new(read);
    let mut line = String::new();
    read.read_line(&mut line).await.unwrap();
    assert_eq!(line, format!("{}\n", mcp_testkit::GARBAGE_LINE));
    line.clear();
    read.read_line(&mut line).await.unwrap();
    assert_eq!(line.len(), 200_001);
    // The protocol still works afterwards.
    write
        .write_all(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#)
        .await
        .unwrap();
    write.write_all(b"\n").await.unwrap();
    line.clear();
    read.read_line(&mut line).await.unwrap();
    let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    server.shutdown().await;
}

#[tokio::test]
async fn rmcp_client_skips_garbage_and_oversized_lines() {
    let scenario = Scenario::new("noisy")
        .with_tool(ToolSpec::echo("e"))
        .with_faults(Faults::new().with_garbage_stdout().with_huge_line(100_000));
    let (transport, server) = InProcessServer::start(scenario);
    let (client, _) = connect(transport).await;
    assert_eq!(
        call(&client, "e", json!({})).await.structured_content,
        Some(json!({}))
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_and_recorded() {
    let scenario =
        Scenario::new("nap").with_tool(ToolSpec::new("nap", Behavior::Sleep { ms: 3_600_000 }));
    let (transport, server) = InProcessServer::start(scenario);
    let (client, _) = connect(transport).await;
    let call = client.call_tool(rmcp::model::CallToolRequestParams::new("nap"));
    // Dropping the call future makes rmcp send notifications/cancelled.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), call)
            .await
            .is_err()
    );
    let cancelled = tokio::time::timeout(
        Duration::from_secs(10),
        server.server().wait_for_request("notifications/cancelled"),
    )
    .await
    .expect("the server saw the cancellation");
    let call = server.server().wait_for_request("tools/call").await;
    assert_eq!(call.params["name"], "nap");
    assert!(
        cancelled.params["requestId"].is_number(),
        "{:?}",
        cancelled.params
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_forced_protocol_version_is_answered_whatever_the_client_asked() {
    for forced in ["1999-01-01", "2025-06-18"] {
        let scenario = Scenario::new("versions")
            .with_tool(ToolSpec::echo("e"))
            .with_faults(Faults::new().with_protocol_version(forced));
        let (transport, server) = InProcessServer::start(scenario);
        let (client, _) = connect(transport).await;
        assert_eq!(
            client.peer_info().unwrap().protocol_version.as_str(),
            forced
        );
        client.cancel().await.unwrap();
        server.shutdown().await;
    }
}

#[tokio::test]
async fn duplicate_and_empty_tool_names_are_listed_as_given() {
    let scenario = Scenario::new("dupes")
        .with_tool(ToolSpec::new(
            "twice",
            Behavior::Structured {
                value: json!({"n": 1}),
            },
        ))
        .with_tool(ToolSpec::new(
            "twice",
            Behavior::Structured {
                value: json!({"n": 2}),
            },
        ))
        .with_tool(ToolSpec::echo(""));
    let (transport, server) = InProcessServer::start(scenario);
    let (client, _) = connect(transport).await;
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    assert_eq!(names, ["twice", "twice", ""]);
    // A call goes to the first tool of that name.
    assert_eq!(
        call(&client, "twice", json!({})).await.structured_content,
        Some(json!({"n": 1}))
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_long_run_keeps_only_the_latest_requests_and_counts_them_all() {
    let scenario = Scenario::new("soak").with_tool(ToolSpec::echo("echo"));
    let (transport, server) = InProcessServer::start(scenario);
    let (client, _) = connect(transport).await;
    let calls = mcp_testkit::DEFAULT_KEPT_REQUESTS + 500;
    for i in 0..calls {
        let result = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new("echo")
                    .with_arguments(json!({ "i": i }).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
    }
    let kept = server.requests();
    assert_eq!(kept.len(), mcp_testkit::DEFAULT_KEPT_REQUESTS);
    assert_eq!(
        kept.last().unwrap().params["arguments"],
        json!({ "i": calls - 1 }),
        "the newest is kept, the oldest dropped"
    );
    let counts = server.server().request_counts();
    assert_eq!(counts["tools/call"], calls as u64);
    assert_eq!(counts["initialize"], 1);
    client.cancel().await.unwrap();
    server.shutdown().await;
}
