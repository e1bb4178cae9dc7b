//! MCP Tasks through the connection set: a plain call the server makes a task of returns
//! the task's outcome, and a question the task asks mid-way reaches the session whose
//! call started it, never another set sharing the same server process.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, ServerPool, elicitation_fn,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    Behavior, CapabilityFlags, RecordedRequest, Scenario, TaskAsk, TaskEnd, ToolSpec,
};
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn scenario(era: Option<&str>) -> Scenario {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let mut scenario = Scenario::new("worker")
        .with_capabilities(CapabilityFlags::default().with_tasks(true))
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::Task {
                work_ms: 150,
                steps: 2,
                end: TaskEnd::Complete,
                ask: Some(TaskAsk::new("Your name?", schema)),
                poll_interval_ms: Some(20),
                ttl_ms: None,
                garbage_get: false,
            },
        ));
    if let Some(version) = era {
        let mut faults = mcp_testkit::Faults::default();
        faults.protocol_version = Some(version.to_owned());
        scenario = scenario.with_faults(faults);
    }
    scenario
}

/// Options whose elicitation handler answers `name` and counts its questions.
fn answering(name: &'static str, asked: &Arc<Mutex<usize>>) -> ConnectionSetOptions {
    let asked = Arc::clone(asked);
    ConnectionSetOptions::new().with_elicitation_handler(elicitation_fn(move |_| {
        *asked.lock().unwrap() += 1;
        async move { ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": name})) }
    }))
}

async fn ask(set: &ConnectionSet, who: &str) -> Value {
    let result = set
        .call_tool(
            &key("worker"),
            "ask",
            Some(json!({"who": who})),
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(30))),
        )
        .await
        .unwrap();
    result.structured_content.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_question_reaches_the_session_whose_call_started_it() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("worker", scenario(era));
        let catalog = fx.catalog();
        let pool = ServerPool::new();
        let (asked_a, asked_b) = (Arc::default(), Arc::default());
        let options = |name, asked| {
            answering(name, asked)
                .with_shared_pool(pool.clone())
                .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
        };
        let a = ConnectionSet::start(&catalog, options("Ada", &asked_a));
        let b = ConnectionSet::start(&catalog, options("Bob", &asked_b));
        assert_eq!(a.wait_startup().await.ready(), 1);
        assert_eq!(b.wait_startup().await.ready(), 1);
        assert_eq!(pool.stats().starts, 1, "one process for both");
        for _ in 0..3 {
            let (ra, rb) = tokio::join!(ask(&a, "a"), ask(&b, "b"));
            assert_eq!(ra["who"], "a", "{era:?}");
            assert_eq!(ra["answer"]["content"]["name"], "Ada", "{era:?}");
            assert_eq!(rb["who"], "b", "{era:?}");
            assert_eq!(rb["answer"]["content"]["name"], "Bob", "{era:?}");
        }
        assert_eq!(*asked_a.lock().unwrap(), 3, "{era:?}");
        assert_eq!(*asked_b.lock().unwrap(), 3, "{era:?}");
        let log = RecordedRequest::read_log(fx.request_log("worker"));
        let updates = log.iter().filter(|r| r.method == "tasks/update").count();
        assert_eq!(
            updates, 6,
            "{era:?}: every answer went back with tasks/update"
        );
        a.shutdown().await;
        b.shutdown().await;
        pool.shutdown().await;
        fx.assert_no_processes().await;
    }
}

/// A host keeps a task it started (`start_tool_task`), then gets its result on a new
/// connection to the same server (another set: the first one is gone), by its id alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_task_is_finished_on_a_new_connection_to_its_server() {
    use mcp_catalog::{HttpConfig, ServerConfig};
    use mcp_connections::{SetTask, StartedCall};
    let mut faults = mcp_testkit::Faults::default();
    faults.protocol_version = Some(MODERN.to_owned());
    let server = mcp_testkit::HttpFakeServer::start(
        Scenario::new("worker")
            .with_capabilities(CapabilityFlags::default().with_tasks(true))
            .with_tool(ToolSpec::new(
                "build",
                Behavior::Task {
                    work_ms: 800,
                    steps: 2,
                    end: TaskEnd::Complete,
                    ask: None,
                    poll_interval_ms: Some(20),
                    ttl_ms: None,
                    garbage_get: false,
                },
            ))
            .with_faults(faults),
    )
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add("worker", ServerConfig::from(HttpConfig::new(server.url())));
    let first = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(first.wait_startup().await.ready(), 1);
    let started = first
        .start_tool_task(
            &key("worker"),
            "build",
            Some(json!({"kept": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    let StartedCall::Task(task) = started else {
        panic!("the server makes a task of the call");
    };
    let id = task.id().to_owned();
    first.shutdown().await;

    let second = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(second.wait_startup().await.ready(), 1);
    let kept = SetTask::resume(key("worker"), "build", id);
    let result = second
        .task_result(
            &kept,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(30))),
        )
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"kept": 1})));
    // Cancelling a task that ended leaves it as it was: its result is still there.
    second.cancel_task(&kept).await.unwrap();
    let again = second
        .task_result(
            &kept,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(30))),
        )
        .await
        .unwrap();
    assert_eq!(again.structured_content, Some(json!({"kept": 1})));
    second.shutdown().await;
    server.shutdown().await;
}
