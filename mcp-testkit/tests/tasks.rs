//! Tasks (SEP-2663, `io.modelcontextprotocol/tasks`) driven by a plain rmcp client: a call
//! to a task tool answers with a task, which the client polls (`tasks/get`), answers
//! (`tasks/update`) and cancels (`tasks/cancel`). In process in both eras, over streamable
//! HTTP across a reconnection, and through the stdio binary.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the fake server binary)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::process::Stdio;
use std::time::Duration;

use mcp_testkit::{
    Behavior, CapabilityFlags, Faults, HttpFakeServer, InProcessServer, RecordedRequest, Recording,
    Scenario, TaskAsk, TaskEnd, ToolSpec,
};
use pretty_assertions::assert_eq;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, GetTaskParams,
    Implementation, InputResponses, ProtocolVersion, Task, TaskPayload, TaskStatus,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RunningService, ServiceError};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData as McpError};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// How long a test waits for a task to reach a state it must reach.
const PATIENCE: Duration = Duration::from_secs(10);

/// A client answering form elicitations with `{"name": "Ada"}`, declaring the tasks
/// extension when `tasks`.
#[derive(Clone, Debug)]
struct TaskClient {
    tasks: bool,
}

impl ClientHandler for TaskClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = json!({"elicitation": {"form": {}}});
        if self.tasks {
            capabilities["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
        }
        let capabilities: ClientCapabilities = serde_json::from_value(capabilities).unwrap();
        ClientConfig::new(capabilities, Implementation::new("task-tests", "1.0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})))
    }
}

type Client = RunningService<RoleClient, TaskClient>;

fn schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}})
}

fn task_tool(name: &str, work_ms: u64, end: TaskEnd) -> ToolSpec {
    ToolSpec::new(
        name,
        Behavior::Task {
            work_ms,
            steps: 2,
            end,
            ask: None,
            poll_interval_ms: None,
            ttl_ms: None,
            garbage_get: false,
        },
    )
}

/// A server speaking the extension, with one task tool per case.
fn scenario() -> Scenario {
    let never = |ttl_ms| Behavior::Task {
        work_ms: 0,
        steps: 0,
        end: TaskEnd::Never,
        ask: None,
        poll_interval_ms: Some(0),
        ttl_ms: Some(ttl_ms),
        garbage_get: false,
    };
    Scenario::new("tasks")
        .with_capabilities(CapabilityFlags::default().with_tasks(true))
        .with_tool(task_tool("build", 40, TaskEnd::Complete))
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::Task {
                work_ms: 20,
                steps: 1,
                end: TaskEnd::Complete,
                ask: Some(TaskAsk::new("Your name?", schema())),
                poll_interval_ms: None,
                ttl_ms: None,
                garbage_get: false,
            },
        ))
        .with_tool(task_tool(
            "quota",
            0,
            TaskEnd::Fail {
                code: -32050,
                message: "quota exceeded".into(),
            },
        ))
        .with_tool(task_tool(
            "lint",
            0,
            TaskEnd::ToolError {
                message: "3 warnings".into(),
            },
        ))
        .with_tool(ToolSpec::new("forever", never(86_400_000)))
        .with_tool(ToolSpec::new("brief", never(1_000)))
        .with_tool(ToolSpec::new(
            "garbled",
            Behavior::Task {
                work_ms: 0,
                steps: 0,
                end: TaskEnd::Complete,
                ask: None,
                poll_interval_ms: None,
                ttl_ms: None,
                garbage_get: true,
            },
        ))
}

/// Connects a client (declaring the extension when `tasks`) in process, in the 2026-07-28
/// era when `modern`.
async fn connect(scenario: Scenario, tasks: bool, modern: bool) -> (Client, InProcessServer) {
    let client = TaskClient { tasks };
    if modern {
        let scenario = scenario.with_faults(Faults::new().with_protocol_version("2026-07-28"));
        let (transport, server) = InProcessServer::start(scenario);
        let lifecycle = ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        };
        let client = client.serve_with_lifecycle(transport, lifecycle).await;
        (client.expect("discover"), server)
    } else {
        let (transport, server) = InProcessServer::start(scenario);
        (client.serve(transport).await.expect("initialize"), server)
    }
}

fn params(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(args.as_object().cloned().unwrap())
}

/// Calls `tool`, which must answer with a task.
async fn start(client: &Client, tool: &str, args: Value) -> Task {
    match client.call_tool_once(params(tool, args)).await.unwrap() {
        CallToolResponse::Task(created) => created.task,
        other => panic!("{tool} answered without a task: {other:?}"),
    }
}

async fn get(client: &Client, id: &str) -> Result<rmcp::model::DetailedTask, ServiceError> {
    Ok(client.get_task(GetTaskParams::new(id)).await?.task)
}

/// Polls task `id` until its status is `status`.
async fn poll_until(client: &Client, id: &str, status: TaskStatus) -> rmcp::model::DetailedTask {
    let poll = async {
        loop {
            let task = get(client, id).await.unwrap();
            if task.status() == status {
                return task;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(PATIENCE, poll)
        .await
        .unwrap_or_else(|_| panic!("task {id} never became {status:?}"))
}

/// The `CallToolResult` of a completed task.
fn result_of(task: &rmcp::model::DetailedTask) -> CallToolResult {
    match &task.payload {
        TaskPayload::Completed { result } => {
            serde_json::from_value(Value::Object(result.clone())).unwrap()
        }
        other => panic!("not completed: {other:?}"),
    }
}

/// The JSON-RPC error code of a failed request.
fn error_code(err: &ServiceError) -> ErrorCode {
    match err {
        ServiceError::McpError(e) => e.code,
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

/// Waits until no task work runs on `server`.
async fn wait_for_no_work(server: &InProcessServer) {
    let stopped = async {
        while server.server().task_work_running() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(PATIENCE, stopped)
        .await
        .expect("the work stops");
}

fn is_timestamp(text: &str) -> bool {
    text.len() == "2026-07-28T09:05:01.042Z".len() && text.ends_with('Z') && text[10..11] == *"T"
}

async fn a_task_completes_and_polling_gets_the_echoed_result(modern: bool) {
    let (client, server) = connect(scenario(), true, modern).await;
    let seed = start(&client, "build", json!({"target": "docs"})).await;
    assert_eq!(seed.task_id, "task-1");
    assert_eq!(seed.status, TaskStatus::Working);
    assert_eq!(seed.status_message.as_deref(), Some("step 1 of 2"));
    assert_eq!((seed.ttl_ms, seed.poll_interval_ms), (None, None));
    assert!(is_timestamp(&seed.created_at), "{}", seed.created_at);
    assert!(is_timestamp(&seed.last_updated_at));

    let done = poll_until(&client, "task-1", TaskStatus::Completed).await;
    assert_eq!(done.task.status_message.as_deref(), Some("step 2 of 2"));
    let result = result_of(&done);
    assert_eq!(result.structured_content, Some(json!({"target": "docs"})));
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        server.server().task_statuses(),
        [("task-1".to_owned(), "completed".to_owned())].into()
    );
    let gets = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "tasks/get")
        .collect::<Vec<_>>();
    assert!(!gets.is_empty());
    assert_eq!(gets[0].params["taskId"], json!("task-1"));
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_task_completes_with_the_echoed_arguments() {
    a_task_completes_and_polling_gets_the_echoed_result(false).await;
}

#[tokio::test]
async fn in_the_2026_era_a_task_completes_with_the_echoed_arguments() {
    a_task_completes_and_polling_gets_the_echoed_result(true).await;
}

#[tokio::test]
async fn a_question_makes_the_task_wait_for_tasks_update() {
    let (client, server) = connect(scenario(), true, false).await;
    let seed = start(&client, "ask", json!({"x": 1})).await;
    let waiting = poll_until(&client, &seed.task_id, TaskStatus::InputRequired).await;
    let wire = serde_json::to_value(&waiting).unwrap();
    assert_eq!(
        wire["inputRequests"],
        json!({"input": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Your name?", "requestedSchema": schema(),
        }}})
    );

    let answer = json!({"action": "accept", "content": {"name": "Ada"}});
    let update = |id: &str, key: &str| {
        let responses = InputResponses::from([(key.to_owned(), answer.clone())]);
        client.update_task(UpdateTaskParams::new(id, responses))
    };
    let wrong_key = update(&seed.task_id, "other").await.unwrap_err();
    assert_eq!(error_code(&wrong_key), ErrorCode::INVALID_PARAMS);
    let wrong_id = update("task-99", "input").await.unwrap_err();
    assert_eq!(error_code(&wrong_id), ErrorCode::INVALID_PARAMS);
    assert!(wrong_id.to_string().contains("task-99"), "{wrong_id}");
    update(&seed.task_id, "input").await.unwrap();

    let done = poll_until(&client, &seed.task_id, TaskStatus::Completed).await;
    assert_eq!(
        result_of(&done).structured_content,
        Some(json!({"x": 1, "answer": answer}))
    );
    // Nothing is outstanding any more.
    let late = update(&seed.task_id, "input").await.unwrap_err();
    assert_eq!(error_code(&late), ErrorCode::INVALID_PARAMS);
    let updates: Vec<RecordedRequest> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "tasks/update")
        .collect();
    assert_eq!(updates.len(), 4);
    assert_eq!(
        updates[2].params["inputResponses"],
        json!({"input": answer})
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_failing_task_carries_its_error_and_a_tool_error_completes() {
    let (client, server) = connect(scenario(), true, false).await;
    let failing = start(&client, "quota", json!({})).await;
    let failed = poll_until(&client, &failing.task_id, TaskStatus::Failed).await;
    assert_eq!(
        serde_json::to_value(&failed).unwrap()["error"],
        json!({"code": -32050, "message": "quota exceeded"})
    );
    let erring = start(&client, "lint", json!({})).await;
    let done = poll_until(&client, &erring.task_id, TaskStatus::Completed).await;
    let result = result_of(&done);
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        serde_json::to_value(&result.content).unwrap(),
        json!([{"type": "text", "text": "3 warnings"}])
    );
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_cancelled_task_stops_working_and_a_finished_one_stays_finished() {
    let (client, server) = connect(scenario(), true, false).await;
    let seed = start(&client, "forever", json!({})).await;
    assert_eq!(
        (seed.ttl_ms, seed.poll_interval_ms),
        (Some(86_400_000), Some(0))
    );
    assert_eq!(server.server().task_work_running(), 1);
    assert_eq!(
        get(&client, &seed.task_id).await.unwrap().status(),
        TaskStatus::Working
    );
    client
        .cancel_task(CancelTaskParams::new(&seed.task_id))
        .await
        .unwrap();
    assert_eq!(
        get(&client, &seed.task_id).await.unwrap().status(),
        TaskStatus::Cancelled
    );
    wait_for_no_work(&server).await;

    let lint = start(&client, "lint", json!({})).await;
    poll_until(&client, &lint.task_id, TaskStatus::Completed).await;
    client
        .cancel_task(CancelTaskParams::new(&lint.task_id))
        .await
        .unwrap();
    assert_eq!(
        server.server().task_statuses(),
        [
            ("task-1".to_owned(), "cancelled".to_owned()),
            ("task-2".to_owned(), "completed".to_owned()),
        ]
        .into()
    );
    let unknown = client
        .cancel_task(CancelTaskParams::new("task-9"))
        .await
        .unwrap_err();
    assert_eq!(error_code(&unknown), ErrorCode::INVALID_PARAMS);
    let cancels: Vec<Value> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "tasks/cancel")
        .map(|r| r.params["taskId"].clone())
        .collect();
    assert_eq!(cancels, [json!("task-1"), json!("task-2"), json!("task-9")]);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_task_past_its_ttl_is_unknown() {
    let (client, server) = connect(scenario(), true, false).await;
    let seed = start(&client, "brief", json!({})).await;
    assert_eq!(seed.ttl_ms, Some(1_000));
    tokio::time::advance(Duration::from_millis(999)).await;
    assert!(get(&client, &seed.task_id).await.is_ok());
    tokio::time::advance(Duration::from_millis(1)).await;
    let err = get(&client, &seed.task_id).await.unwrap_err();
    assert_eq!(error_code(&err), ErrorCode::INVALID_PARAMS);
    assert!(err.to_string().contains("\"task-1\""), "{err}");
    assert!(server.server().task_statuses().is_empty());
    wait_for_no_work(&server).await;
    client.cancel().await.unwrap();
    server.shutdown().await;
}

/// Without the extension on both sides, a task tool answers like any tool.
async fn a_plain_call_gets_the_final_result(modern: bool) {
    let (client, server) = connect(scenario(), false, modern).await;
    let result = client
        .call_tool(params("build", json!({"target": "docs"})))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"target": "docs"})));
    // The question goes the ElicitForm way: the host's handler answers it.
    let asked = client
        .call_tool(params("ask", json!({"x": 1})))
        .await
        .unwrap();
    assert_eq!(
        asked.structured_content,
        Some(json!({"x": 1, "answer": {"action": "accept", "content": {"name": "Ada"}}}))
    );
    let failed = client
        .call_tool(params("quota", json!({})))
        .await
        .unwrap_err();
    assert_eq!(error_code(&failed), ErrorCode(-32050));
    assert!(server.server().task_statuses().is_empty());
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_client_without_the_extension_gets_a_plain_result() {
    a_plain_call_gets_the_final_result(false).await;
}

#[tokio::test]
async fn in_the_2026_era_a_client_without_the_extension_gets_a_plain_result() {
    a_plain_call_gets_the_final_result(true).await;
}

#[tokio::test]
async fn a_server_without_the_extension_answers_plainly_and_refuses_tasks_get() {
    let mut scenario = scenario();
    scenario.capabilities = CapabilityFlags::default();
    let (client, server) = connect(scenario, true, false).await;
    let result = client.call_tool(params("lint", json!({}))).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let err = get(&client, "task-1").await.unwrap_err();
    assert_eq!(error_code(&err), ErrorCode::METHOD_NOT_FOUND);
    client.cancel().await.unwrap();
    server.shutdown().await;
}

/// A client starts a task over streamable HTTP and goes away; another connection (a new
/// session in the 2025-11-25 era) polls it to the end.
async fn a_reconnecting_client_gets_the_task_it_started(modern: bool) {
    let mut scenario = scenario();
    if modern {
        scenario = scenario.with_faults(Faults::new().with_protocol_version("2026-07-28"));
    }
    let server = HttpFakeServer::start(scenario).await.unwrap();
    let connect = || async {
        let config =
            rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                server.url(),
            );
        let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
            reqwest::Client::new(),
            config,
        );
        let client = TaskClient { tasks: true };
        if modern {
            let lifecycle = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            client
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .unwrap()
        } else {
            client.serve(transport).await.unwrap()
        }
    };
    let first = connect().await;
    let seed = start(&first, "build", json!({"n": 7})).await;
    first.cancel().await.unwrap();

    let second = connect().await;
    let done = poll_until(&second, &seed.task_id, TaskStatus::Completed).await;
    assert_eq!(result_of(&done).structured_content, Some(json!({"n": 7})));
    second.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn over_http_a_reconnecting_client_gets_the_task_it_started() {
    a_reconnecting_client_gets_the_task_it_started(false).await;
}

#[tokio::test]
async fn in_the_2026_era_over_http_a_reconnecting_client_gets_the_task_it_started() {
    a_reconnecting_client_gets_the_task_it_started(true).await;
}

#[tokio::test]
async fn shutting_the_server_down_stops_the_work_of_its_tasks() {
    let (client, server) = connect(scenario(), true, false).await;
    start(&client, "forever", json!({})).await;
    start(&client, "ask", json!({})).await;
    let fake = server.server().clone();
    assert_eq!(fake.task_work_running(), 2);
    client.cancel().await.unwrap();
    server.shutdown().await;
    let stopped = async {
        while fake.task_work_running() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    tokio::time::timeout(PATIENCE, stopped)
        .await
        .expect("the work stops with the server");
}

#[tokio::test]
async fn through_the_stdio_binary_tasks_complete_cancel_and_garble() {
    let home = common::temp();
    let (file, log) = (home.join("tasks.json"), home.join("requests.jsonl"));
    scenario()
        .with_record(Recording::new().with_request_log(&log))
        .write_json(&file)
        .unwrap();
    let mut server = common::spawn(&["--scenario", &common::path_arg(&file)], Stdio::null());
    let client = TaskClient { tasks: true }
        .serve(server.transport())
        .await
        .expect("initialize");

    let built = start(&client, "build", json!({"target": "docs"})).await;
    let done = poll_until(&client, &built.task_id, TaskStatus::Completed).await;
    assert_eq!(
        result_of(&done).structured_content,
        Some(json!({"target": "docs"}))
    );
    let forever = start(&client, "forever", json!({})).await;
    client
        .cancel_task(CancelTaskParams::new(&forever.task_id))
        .await
        .unwrap();
    poll_until(&client, &forever.task_id, TaskStatus::Cancelled).await;

    let garbled = start(&client, "garbled", json!({})).await;
    let read = tokio::time::timeout(PATIENCE, get(&client, &garbled.task_id))
        .await
        .expect("an answer, if an unreadable one");
    // rmcp reads the reply as some other result, not a task.
    assert!(
        matches!(read, Err(ServiceError::UnexpectedResponse)),
        "{read:?}"
    );
    // The connection is still usable.
    assert_eq!(
        get(&client, &built.task_id).await.unwrap().status(),
        TaskStatus::Completed
    );
    client.cancel().await.unwrap();
    server.kill_and_check().await;

    let logged = RecordedRequest::read_log(&log);
    let cancels: Vec<&RecordedRequest> = logged
        .iter()
        .filter(|r| r.method == "tasks/cancel")
        .collect();
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0].params["taskId"], json!("task-2"));
    assert!(logged.iter().any(|r| r.method == "tasks/get"));
}
