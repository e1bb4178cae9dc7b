//! MCP Tasks through `mcpctl serve --http`: a 2026-era client that declares the tasks
//! extension gets a task when the upstream server makes one (polls it, answers its
//! question with `tasks/update`, cancels one, which cancels the upstream task); a client
//! without the extension gets the task's result as a plain call. Real processes: the
//! gateway, the fake upstream server, an rmcp client on loopback HTTP.

#![allow(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test starts the gateway as a client would"
)]

mod support;

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    DetailedTask, GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
    UpdateTaskParams,
};
use rmcp::service::{ClientLifecycleMode, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use support::{Served, Workdir};

const TOKEN: &str = "tasks-token-0123456789abcdef";

fn config(wd: &Workdir) -> std::path::PathBuf {
    let scenario = json!({
        "record": {"request_log": wd.path().join("requests.jsonl")},
        "capabilities": {"tasks": true},
        "faults": {"protocol_version": "2026-07-28"},
        "tools": [
            {"name": "build", "behavior": {
                "kind": "task", "work_ms": 300, "steps": 2, "poll_interval_ms": 20,
                "ask": {"message": "Which branch?", "schema": {
                    "type": "object", "properties": {"branch": {"type": "string"}}}},
            }},
            {"name": "forever", "behavior": {
                "kind": "task", "work_ms": 0, "end": "never", "poll_interval_ms": 20,
            }},
        ],
    });
    let scenario = support::toml_str(&scenario.to_string());
    wd.write(
        "gateway.toml",
        &format!(
            "[mcp_servers.work]\ncommand = {:?}\nargs = [\"fake-server\", \"--scenario-json\", {scenario}]\nprotocol = \"2026-07-28\"\ndefault_tools_approval_mode = \"approve\"\n",
            env!("CARGO_BIN_EXE_mcpctl")
        ),
    )
}

/// A 2026-era client of the gateway, declaring the tasks extension when `tasks`.
async fn connect(url: &str, tasks: bool) -> RunningService<RoleClient, ClientConfig> {
    let mut caps = json!({"elicitation": {"form": {}}});
    if tasks {
        caps["extensions"] = json!({"io.modelcontextprotocol/tasks": {}});
    }
    let caps: ClientCapabilities = serde_json::from_value(caps).unwrap();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(TOKEN),
    );
    let info = ClientConfig::new(caps, Implementation::new("tasks", "1"))
        .with_protocol_version(ProtocolVersion::V_2026_07_28);
    rmcp::service::ClientServiceExt::serve_with_lifecycle(
        info,
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap()
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(args.as_object().unwrap().clone())
}

/// Polls the gateway's task `id` until its status is `status`.
async fn poll_until(
    client: &RunningService<RoleClient, ClientConfig>,
    id: &str,
    status: TaskStatus,
) -> DetailedTask {
    for _ in 0..600 {
        let task = client.get_task(GetTaskParams::new(id)).await.unwrap().task;
        if task.status() == status {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("task {id} never became {status:?}");
}

/// The upstream server's recorded requests of `method`.
fn upstream(wd: &Workdir, method: &str) -> Vec<Value> {
    std::fs::read_to_string(wd.path().join("requests.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["method"] == method)
        .collect()
}

#[test]
fn a_client_that_declares_tasks_gets_the_upstream_task_through_the_gateway() {
    let wd = Workdir::new();
    let mut served = Served::start(&wd, &config(&wd), TOKEN, &[]);
    let runtime = support::runtime();
    runtime.block_on(async {
        let client = connect(&served.url, true).await;
        let announced = client
            .peer_info()
            .is_some_and(|i| i.capabilities.supports_tasks());
        assert!(announced, "the gateway offers the tasks extension");

        let created = client
            .call_tool_once(call("mcp__work__build", json!({"n": 1})))
            .await
            .unwrap();
        let CallToolResponse::Task(created) = created else {
            panic!("the upstream task comes through as a task: {created:?}");
        };
        let id = created.task.task_id.clone();
        let asking = poll_until(&client, &id, TaskStatus::InputRequired).await;
        let TaskPayload::InputRequired { input_requests } = asking.payload else {
            panic!("an input_required task carries its question");
        };
        let (key, question) = input_requests.into_iter().next().unwrap();
        assert!(
            serde_json::to_string(&question)
                .unwrap()
                .contains("Which branch?"),
            "{question:?}"
        );
        let answer = json!({"action": "accept", "content": {"branch": "main"}});
        client
            .update_task(UpdateTaskParams::new(
                id.clone(),
                [(key, answer)].into_iter().collect(),
            ))
            .await
            .unwrap();
        let done = poll_until(&client, &id, TaskStatus::Completed).await;
        let TaskPayload::Completed { result } = done.payload else {
            panic!("a completed task carries its result");
        };
        assert_eq!(result["structuredContent"]["n"], 1, "{result:?}");
        assert_eq!(
            result["structuredContent"]["answer"]["content"]["branch"], "main",
            "{result:?}"
        );

        // An endless one, cancelled: the upstream task is cancelled too.
        let created = client
            .call_tool_once(call("mcp__work__forever", json!({})))
            .await
            .unwrap();
        let CallToolResponse::Task(created) = created else {
            panic!("the upstream task comes through as a task: {created:?}");
        };
        let id = created.task.task_id.clone();
        client
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .unwrap();
        poll_until(&client, &id, TaskStatus::Cancelled).await;
        let mut cancelled = Vec::new();
        for _ in 0..400 {
            cancelled = upstream(&wd, "tasks/cancel");
            if !cancelled.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(cancelled.len(), 1, "the upstream task was cancelled once");
        let unknown = client
            .get_task(GetTaskParams::new("mcpctl-task-nope"))
            .await;
        assert!(unknown.is_err(), "an id the gateway never gave is refused");
        client.cancel().await.unwrap();

        // Without the extension: the upstream task is driven for the client.
        let plain = connect(&served.url, false).await;
        let result = plain
            .call_tool(call("mcp__work__build", json!({"n": 2})))
            .await
            .unwrap();
        assert_eq!(result.structured_content.unwrap()["n"], 2);
        plain.cancel().await.unwrap();
    });
    served.stop();
    wd.assert_no_server_left();
}
