//! Configured durations of any size, up to `Duration::MAX`, never panic a call: a server's
//! `tool_timeout`/`startup_timeout` and a call's own timeout too large for the clock mean
//! "no deadline". Against a real `mcp-fake-server` process.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::Fixture;
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::McpServerKey;
use mcp_testkit::{Scenario, ToolSpec};
use proptest::prelude::*;
use serde_json::json;

fn key() -> McpServerKey {
    McpServerKey::unscoped("notes".parse().unwrap())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Durations from zero to `Duration::MAX`, the extremes included often; never below
/// 10 s, so a real call has the time it needs.
fn long_duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        Just(Duration::MAX),
        (10u64..=u64::MAX).prop_map(Duration::from_secs),
        (u64::MAX / 2..=u64::MAX, 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

#[test]
fn endless_server_timeouts_call_resources_and_prompts_without_a_panic() {
    runtime().block_on(async {
        let mut fx = Fixture::new();
        fx.stdio_with(
            "notes",
            Scenario::new("notes").with_tool(ToolSpec::echo("echo")),
            |c| {
                c.with_tool_timeout(Duration::MAX)
                    .with_startup_timeout(Duration::MAX)
            },
        );
        let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
        assert_eq!(set.wait_startup().await.ready(), 1);
        let r = set
            .call_tool(&key(), "echo", Some(json!({"a": 1})), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"a": 1})));
        set.list_resources().await;
        set.shutdown().await;
        fx.assert_no_processes().await;
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn any_tool_timeout_and_call_timeout_call_without_a_panic(
        tool_timeout in long_duration(),
        timeout in long_duration(),
    ) {
        runtime().block_on(async {
            let mut fx = Fixture::new();
            fx.stdio_with(
                "notes",
                Scenario::new("notes").with_tool(ToolSpec::echo("echo")),
                |c| c.with_tool_timeout(tool_timeout),
            );
            let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
            let r = set
                .call_tool(&key(), "echo", Some(json!({"t": 1})), CallOptions::new().with_call(|c| c.with_timeout(timeout)))
                .await
                .unwrap();
            assert_eq!(r.structured_content, Some(json!({"t": 1})));
            set.shutdown().await;
            fx.assert_no_processes().await;
        });
    }
}
