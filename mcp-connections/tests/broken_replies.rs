//! A reply rmcp cannot read (both `result` and `error`, nested too deeply, invalid UTF-8,
//! not JSON) fails the pending call at once as a protocol error naming what was wrong,
//! instead of a timeout; the connection stays usable. Against the fake server binary.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::{Duration, Instant};

use common::Fixture;
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, Error};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, ReplyFault, Scenario, ToolSpec};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_replies_fail_the_call_at_once_as_protocol_errors() {
    let faults = [
        (ReplyFault::ResultAndError, "both `result` and `error`"),
        (
            ReplyFault::TooDeep,
            "not valid JSON (recursion limit exceeded",
        ),
        (ReplyFault::InvalidUtf8, "not valid UTF-8"),
        (ReplyFault::NotJson, "not a JSON object"),
        (
            ReplyFault::Unterminated,
            "not valid JSON (EOF while parsing",
        ),
    ];
    let mut scenario = Scenario::new("odd").with_tool(ToolSpec::echo("echo"));
    for (i, (fault, _)) in faults.iter().enumerate() {
        scenario = scenario.with_tool(ToolSpec::new(
            format!("broken{i}"),
            Behavior::BrokenReply { fault: *fault },
        ));
    }
    let mut fx = Fixture::new();
    fx.stdio("odd", scenario);
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300))),
    );
    set.wait_startup().await;
    let key = McpServerKey::unscoped("odd".parse().unwrap());
    for (i, (fault, expected)) in faults.iter().enumerate() {
        let started = Instant::now();
        let err = set
            .call_tool(
                &key,
                &format!("broken{i}"),
                None,
                CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(60))),
            )
            .await
            .unwrap_err();
        let took = started.elapsed();
        assert!(matches!(err, Error::Protocol { .. }), "{fault:?}: {err}");
        let chain = mcp_key::error_chain(&err);
        assert!(chain.contains(expected), "{fault:?}: {chain}");
        // Far from the 60 s timeout: the error comes with the broken line.
        assert!(took < Duration::from_secs(2), "{fault:?} took {took:?}");
        // The connection is still usable.
        let r = set
            .call_tool(&key, "echo", Some(json!({"i": i})), CallOptions::new())
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"i": i})));
    }
    set.shutdown().await;
    fx.assert_no_processes().await;
}
