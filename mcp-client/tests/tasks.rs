//! MCP Tasks driven by one `Client` against real servers: the testkit's `mcp-fake-server`
//! binary over stdio (both eras) and its streamable-HTTP server on loopback. A call the
//! server makes a task of returns the task's outcome; bad servers give bounded, clear
//! errors; dropping a call cancels its task; a task outlives its connection.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{
    BoxFuture, CallSettings, Client, ClientSettings, HttpTarget, RequestError, ServerRequests,
    Started, Target, TaskPhase, TaskState,
};
use mcp_key::McpServerKey;
use mcp_testkit::{
    Behavior, CapabilityFlags, HttpFakeServer, Scenario, TaskAsk, TaskEnd, TestHome, ToolSpec,
};
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use serde_json::{Map, Value, json};

mod support;

use support::{PATIENCE, stdio};

fn task(work_ms: u64, end: TaskEnd) -> Behavior {
    Behavior::Task {
        work_ms,
        steps: 2,
        end,
        ask: None,
        poll_interval_ms: Some(20),
        ttl_ms: None,
        garbage_get: false,
    }
}

fn never(poll_interval_ms: Option<u64>, ttl_ms: Option<u64>) -> Behavior {
    Behavior::Task {
        work_ms: 0,
        steps: 0,
        end: TaskEnd::Never,
        ask: None,
        poll_interval_ms,
        ttl_ms,
        garbage_get: false,
    }
}

/// A server offering the tasks extension, one task tool per case.
fn scenario() -> Scenario {
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    Scenario::new("tasks")
        .with_capabilities(CapabilityFlags::default().with_tasks(true))
        .with_tool(ToolSpec::new("build", task(200, TaskEnd::Complete)))
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::Task {
                work_ms: 100,
                steps: 1,
                end: TaskEnd::Complete,
                ask: Some(TaskAsk::new("Your name?", schema)),
                poll_interval_ms: Some(20),
                ttl_ms: None,
                garbage_get: false,
            },
        ))
        .with_tool(ToolSpec::new(
            "quota",
            task(
                0,
                TaskEnd::Fail {
                    code: -32050,
                    message: "quota exceeded".to_owned(),
                },
            ),
        ))
        .with_tool(ToolSpec::new(
            "lint",
            task(
                0,
                TaskEnd::ToolError {
                    message: "3 warnings".to_owned(),
                },
            ),
        ))
        .with_tool(ToolSpec::new("forever", never(Some(0), None)))
        .with_tool(ToolSpec::new("brief", never(Some(20), Some(300))))
        .with_tool(ToolSpec::new(
            "sleepy",
            Behavior::Task {
                work_ms: 0,
                steps: 0,
                end: TaskEnd::Complete,
                ask: None,
                poll_interval_ms: Some(86_400_000),
                ttl_ms: None,
                garbage_get: false,
            },
        ))
        .with_tool(ToolSpec::new(
            "garbled",
            Behavior::Task {
                work_ms: 0,
                steps: 0,
                end: TaskEnd::Complete,
                ask: None,
                poll_interval_ms: Some(20),
                ttl_ms: None,
                garbage_get: true,
            },
        ))
}

fn modern(scenario: Scenario) -> Scenario {
    let mut faults = mcp_testkit::Faults::default();
    faults.protocol_version = Some("2026-07-28".to_owned());
    scenario.with_faults(faults)
}

/// Answers every elicitation with `{"name": "Ada"}`.
struct Ada;

impl ServerRequests for Ada {
    fn elicit<'a>(
        &'a self,
        _server: &'a McpServerKey,
        _request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
        })
    }
}

async fn connect(target: Target) -> Client {
    Client::connect(
        "tasks".parse().unwrap(),
        target,
        ClientSettings::new(),
        Arc::new(Ada),
    )
    .await
    .expect("the fake server connects")
}

fn args(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

fn settings(timeout: Duration) -> CallSettings {
    CallSettings::new(timeout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_to_its_result_and_its_questions_are_answered_in_both_eras() {
    for (era, scenario) in [
        ("2025-11-25", scenario()),
        ("2026-07-28", modern(scenario())),
    ] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, scenario);
        let client = connect(server.target.clone()).await;
        assert!(client.offers_tasks(), "{era}");
        let states: Arc<Mutex<Vec<TaskState>>> = Arc::default();
        let into = Arc::clone(&states);
        let call = settings(PATIENCE).with_task_state(Some(Arc::new(move |s: &TaskState| {
            into.lock().unwrap().push(s.clone());
        })));
        let result = client
            .call_tool("build", args(json!({"n": 7})), call)
            .await
            .unwrap();
        assert_eq!(result.structured_content, Some(json!({"n": 7})), "{era}");
        let states = states.lock().unwrap().clone();
        assert_eq!(states.first().map(|s| s.phase), Some(TaskPhase::Working));
        assert!(
            states
                .iter()
                .any(|s| s.message.as_deref() == Some("step 1 of 2")),
            "{era}: {states:?}"
        );
        assert_eq!(
            states.last().map(|s| s.phase),
            Some(TaskPhase::Completed),
            "{era}"
        );

        let answered = client
            .call_tool("ask", args(json!({"q": 1})), settings(PATIENCE))
            .await
            .unwrap();
        let content = answered.structured_content.unwrap();
        assert_eq!(
            content["answer"]["content"],
            json!({"name": "Ada"}),
            "{era}"
        );
        assert_eq!(content["q"], 1, "{era}");
        assert_eq!(server.requests("tasks/update").len(), 1, "{era}");
        assert!(!server.requests("tasks/get").is_empty(), "{era}");
        client.shutdown().await;
        server.assert_gone().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_endless_expired_and_garbled_tasks_end_in_clear_bounded_errors() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, modern(scenario()));
    let client = connect(server.target.clone()).await;

    let failed = client
        .call_tool("quota", None, settings(PATIENCE))
        .await
        .unwrap_err();
    let RequestError::Server { code, message } = &failed else {
        panic!("a failed task is the server's error: {failed}");
    };
    assert_eq!(*code, -32050);
    assert!(message.contains("quota exceeded"), "{message}");

    let tool_error = client
        .call_tool("lint", None, settings(PATIENCE))
        .await
        .unwrap();
    assert_eq!(tool_error.is_error, Some(true));

    // Endless, with a poll interval of 0: the call's timeout ends it, polls are spaced
    // (no busy loop), and the task is cancelled on the server.
    let timeout = Duration::from_millis(800);
    let endless = client
        .call_tool("forever", None, settings(timeout))
        .await
        .unwrap_err();
    assert!(endless.is_timeout(), "{endless}");
    let cancelled = server.wait_for("tasks/cancel").await;
    assert_eq!(cancelled.len(), 1);
    let polls = server.requests("tasks/get").len();
    let most = usize::try_from(timeout.as_millis() / mcp_client::MIN_POLL_INTERVAL.as_millis())
        .unwrap()
        + 1;
    assert!((1..=most).contains(&polls), "{polls} polls in {timeout:?}");

    // A time to live shorter than the work: given up, saying so.
    let expired = client
        .call_tool("brief", None, settings(PATIENCE))
        .await
        .unwrap_err();
    assert!(expired.is_task_lost(), "{expired}");

    // A poll interval of a day is capped: the task's result comes after one capped wait.
    let sleepy = client
        .call_tool("sleepy", args(json!({"z": 1})), settings(PATIENCE))
        .await
        .unwrap();
    assert_eq!(sleepy.structured_content, Some(json!({"z": 1})));

    // A `tasks/get` answered with a status that does not exist.
    let garbled = client
        .call_tool("garbled", None, settings(PATIENCE))
        .await
        .unwrap_err();
    let RequestError::Protocol { detail } = &garbled else {
        panic!("an unreadable task state is a protocol fault: {garbled}");
    };
    assert!(
        detail.contains("task-") && detail.contains("`exploded`"),
        "{detail}"
    );
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_call_cancels_its_task_on_the_server() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, modern(scenario()));
    let client = Arc::new(connect(server.target.clone()).await);
    let caller = Arc::clone(&client);
    let call = tokio::spawn(async move {
        caller
            .call_tool("forever", None, settings(Duration::from_secs(600)))
            .await
    });
    let polled = server.wait_for("tasks/get").await;
    let id = polled[0].params["taskId"].clone();
    call.abort();
    let cancelled = server.wait_for("tasks/cancel").await;
    assert_eq!(cancelled[0].params["taskId"], id);
    Arc::into_inner(client)
        .expect("the aborted call let go of the client")
        .shutdown()
        .await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_kept_by_its_handle_outlives_the_connection_that_started_it() {
    let server = HttpFakeServer::start(modern(
        Scenario::new("kept")
            .with_capabilities(CapabilityFlags::default().with_tasks(true))
            .with_tool(ToolSpec::new("build", task(1_000, TaskEnd::Complete))),
    ))
    .await
    .unwrap();
    let target = || Target::Http(HttpTarget::new(server.url()));
    let first = connect(target()).await;
    let started = first
        .start_tool_task("build", args(json!({"kept": true})), settings(PATIENCE))
        .await
        .unwrap();
    let Started::Task(handle) = started else {
        panic!("the server makes a task of the call");
    };
    let id = handle.id().to_owned();
    first.shutdown().await;

    let second = connect(target()).await;
    let result = handle.result(&second, settings(PATIENCE)).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"kept": true})));
    assert_eq!(handle.state().phase, TaskPhase::Completed);
    // A host that kept only the id resumes the same way.
    let resumed = mcp_client::TaskHandle::resume(id);
    let again = resumed.result(&second, settings(PATIENCE)).await.unwrap();
    assert_eq!(again.structured_content, Some(json!({"kept": true})));
    second.shutdown().await;
    server.shutdown().await;
}
