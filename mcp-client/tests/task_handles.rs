//! A task kept by its handle on one `Client` (`start_tool_task`), in both eras: a call the
//! server answers at once is `Started::Done`; a task the host cancels with
//! `TaskHandle::cancel` is cancelled on the server (`tasks/cancel` with its id) and its
//! result is then `TaskLost`; cancelling a task the server does not know is the server's
//! error. Against the `mcp-fake-server` binary over stdio. (Tasks driven by `call_tool`
//! and a handle outliving its connection are in `tasks.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;

use mcp_client::{
    CallSettings, ClientSettings, DeclineRequests, RequestError, Started, TaskHandle, TaskPhase,
};
use mcp_testkit::{Behavior, CapabilityFlags, Scenario, TaskEnd, TestHome, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{PATIENCE, args, connect, in_era, stdio};

fn scenario() -> Scenario {
    Scenario::new("tasks")
        .with_capabilities(CapabilityFlags::default().with_tasks(true))
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "forever",
            Behavior::Task {
                work_ms: 0,
                steps: 0,
                end: TaskEnd::Never,
                ask: None,
                poll_interval_ms: Some(20),
                ttl_ms: None,
                garbage_get: false,
            },
        ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_task_is_cancelled_on_the_server_in_both_eras() {
    for era in [None, Some("2026-07-28")] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(), era));
        let client = connect(
            "tasks",
            server.target.clone(),
            ClientSettings::new().with_tasks(true),
            Arc::new(DeclineRequests),
        )
        .await;
        assert!(client.offers_tasks(), "{era:?}");

        // A tool that is no task is answered at once.
        let started = client
            .start_tool_task("echo", args(json!({"n": 1})), CallSettings::new(PATIENCE))
            .await
            .unwrap();
        let Started::Done(result) = started else {
            panic!("{era:?}: echo made a task");
        };
        assert_eq!(result.structured_content, Some(json!({"n": 1})));

        let started = client
            .start_tool_task("forever", None, CallSettings::new(PATIENCE))
            .await
            .unwrap();
        let Started::Task(handle) = started else {
            panic!("{era:?}: the server makes a task of the call");
        };
        assert_eq!(handle.state().phase, TaskPhase::Working, "{era:?}");
        handle.cancel(&client).await.unwrap();
        let cancels: Vec<_> = server
            .requests("tasks/cancel")
            .iter()
            .map(|r| r.params["taskId"].clone())
            .collect();
        assert_eq!(cancels, [json!(handle.id())], "{era:?}");

        let err = handle
            .result(&client, CallSettings::new(PATIENCE))
            .await
            .unwrap_err();
        assert!(err.is_task_lost(), "{era:?}: {err:?}");
        assert_eq!(handle.state().phase, TaskPhase::Cancelled, "{era:?}");

        // A task the server never had.
        let err = TaskHandle::resume("task-none")
            .cancel(&client)
            .await
            .unwrap_err();
        assert!(
            matches!(err, RequestError::Server { .. }),
            "{era:?}: {err:?}"
        );
        client.shutdown().await;
        server.assert_gone().await;
    }
}
