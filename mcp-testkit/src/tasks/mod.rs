//! The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) of the fake server:
//! a call to a [`Behavior::Task`](crate::Behavior::Task) tool becomes a task whose work
//! runs in the background, owned by the server's shared state.

mod spec;
pub(crate) mod table;
mod work;

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CreateTaskResult, GetTaskResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Value, json};

pub use spec::{TaskAsk, TaskEnd};

use crate::shared::Shared;
use crate::{Behavior, ToolSpec};
use table::NewTask;
use work::Plan;

/// `tools/call` of a task tool: a task when the server announces the extension and the
/// client declared it, else the work inside the call.
pub(crate) async fn call(
    server: &Shared,
    tool: &ToolSpec,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let Behavior::Task {
        work_ms,
        steps,
        end,
        ask,
        poll_interval_ms,
        ttl_ms,
        garbage_get,
    } = &tool.behavior
    else {
        return Err(McpError::internal_error(
            format!("fake tool {:?} is not a task tool", tool.name),
            None,
        ));
    };
    let plan = Plan {
        work_ms: *work_ms,
        steps: (*steps).max(1),
        end: end.clone(),
        ask: ask.clone(),
    };
    let declared = context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks());
    if !(server.scenario.capabilities.tasks && declared) {
        return work::in_call(server, tool, &plan, request, context).await;
    }
    let (task, cancel) = server.tasks.create(NewTask {
        ttl_ms: *ttl_ms,
        poll_interval_ms: *poll_interval_ms,
        garbage_get: *garbage_get,
        status_message: plan.step_message(1),
    });
    let table = Arc::clone(&server.tasks);
    let id = task.task_id.clone();
    let args = request.arguments.clone().unwrap_or_default();
    let stop = server.stop.clone();
    server.task_work.spawn(async move {
        tokio::select! {
            () = work::in_background(&table, &id, &plan, &args) => {}
            () = cancel.cancelled() => {}
            () = stop.cancelled() => {}
        }
    });
    Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
}

/// `tasks/get`. A task with `garbage_get` on the stdio binary: a reply with status
/// `"exploded"` is written straight to stdout, and no proper one follows.
pub(crate) async fn get(
    server: &Shared,
    id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<GetTaskResult, McpError> {
    let (task, garbage) = server.tasks.get(id)?;
    let result = GetTaskResult::new(task);
    if !(garbage && server.stdio) {
        return Ok(result);
    }
    let mut exploded = serde_json::to_value(&result).unwrap_or(Value::Null);
    exploded["status"] = json!("exploded");
    let line = json!({"jsonrpc": "2.0", "id": context.id, "result": exploded});
    crate::behavior::write_stdout_line(line.to_string().as_bytes());
    tokio::select! {
        () = context.ct.cancelled() => {}
        () = server.stop.cancelled() => {}
    }
    Err(McpError::internal_error(
        format!("fake server: tasks/get of {id:?} was answered with garbage"),
        None,
    ))
}
