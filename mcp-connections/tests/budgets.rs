//! Byte budgets: a server cannot make the set hold more JSON for one list than the budget
//! (plus one page), however it splits the list into pages. Against the fake server binary.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::{Fixture, faults};
use mcp_connections::{ConnectionSet, ConnectionSetOptions, FailureReason, ServerState};
use mcp_testkit::{Scenario, ToolSpec};
use serde_json::json;

/// A tool whose input schema holds `elements` array elements (about 2 bytes each).
fn fat_tool(name: &str, elements: usize) -> ToolSpec {
    ToolSpec::echo(name).with_input_schema(json!({
        "type": "object",
        "properties": {"x": {"enum": vec![0; elements]}},
    }))
}

fn scenario(tools: usize, elements: usize) -> Scenario {
    let mut s = Scenario::new("fat").with_faults(faults(|f| f.page_size = Some(1)));
    for i in 0..tools {
        s = s.with_tool(fat_tool(&format!("t{i}"), elements));
    }
    s
}

async fn start(scenario: Scenario, budget: usize) -> (Fixture, ConnectionSet) {
    let mut fx = Fixture::new();
    fx.stdio("fat", scenario);
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_client(|c| c.with_list_byte_budget(budget)),
    );
    set.wait_startup().await;
    (fx, set)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_amplified_tool_list_fails_classified_at_the_budget() {
    // 40 pages of ~40 KiB each against a 256 KiB budget.
    let (fx, set) = start(scenario(40, 20_000), 256 * 1024).await;
    let state = set.status().into_iter().next().unwrap().state;
    let ServerState::Failed(failure) = state else {
        panic!("over budget must fail: {state:?}");
    };
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    assert!(failure.to_string().contains("byte budget"), "{failure}");
    assert!(failure.to_string().contains("262144"), "{failure}");
    // It stopped at the budget instead of reading all 40 pages.
    let listed = std::fs::read_to_string(fx.request_log("fat"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("tools/list"))
        .count();
    assert!(listed < 10, "{listed} pages read");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_within_the_budget_is_served() {
    let (fx, set) = start(scenario(4, 20_000), 256 * 1024).await;
    let state = set.status().into_iter().next().unwrap().state;
    assert!(
        matches!(state, ServerState::Ready { tools: 4 }),
        "{state:?}"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}
