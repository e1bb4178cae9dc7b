//! The work of a [`Behavior::Task`](crate::Behavior::Task) tool: its steps, its question
//! and its end, run in the background of a task or inside an ordinary call.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, InputRequest,
    TaskPayload,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{Map, Value, json};

use super::table::{INPUT_KEY, TaskTable};
use crate::behavior::{Round, elicit_value, elicitation_fields, is_modern, mrtr_round, structured};
use crate::shared::Shared;
use crate::{TaskAsk, TaskEnd, ToolSpec, wire};

/// What a task tool does, taken from its [`Behavior::Task`](crate::Behavior::Task).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) work_ms: u64,
    /// At least 1.
    pub(crate) steps: u32,
    pub(crate) end: TaskEnd,
    pub(crate) ask: Option<TaskAsk>,
}

impl Plan {
    /// The `statusMessage` of step `i`.
    pub(crate) fn step_message(&self, i: u32) -> String {
        format!("step {i} of {}", self.steps)
    }

    /// When step `i` ends, in milliseconds from the start.
    fn step_end(&self, i: u32) -> u64 {
        let end = u128::from(self.work_ms) * u128::from(i) / u128::from(self.steps);
        u64::try_from(end).unwrap_or(u64::MAX)
    }
}

/// Where the work reports its steps and asks its question.
enum Driver<'a> {
    /// A task: steps are its `statusMessage`, the question makes it `input_required`.
    Task { table: &'a TaskTable, id: &'a str },
    /// An ordinary call: the question is the server's own `elicitation/create`.
    Call {
        context: &'a RequestContext<RoleServer>,
    },
}

impl Driver<'_> {
    fn step(&self, plan: &Plan, i: u32) {
        if let Self::Task { table, id } = self {
            table.set_message(id, plan.step_message(i));
        }
    }

    /// The user's answer to `ask`: its `action` and `content`.
    async fn ask(&self, ask: &TaskAsk) -> Result<Value, McpError> {
        match self {
            Self::Task { table, id } => {
                let request: InputRequest = wire::from_wire("input request", ask.input_request())?;
                let requests = BTreeMap::from([(INPUT_KEY.to_owned(), request)]);
                let gone = || McpError::internal_error(format!("task {id:?} ended"), None);
                let answer = table.ask(id, requests).ok_or_else(gone)?;
                let answer = answer.await.map_err(|_| gone())?;
                Ok(elicitation_fields(&answer))
            }
            Self::Call { context } => elicit_value(context, ask.params()).await,
        }
    }
}

/// Runs the steps (asking the question halfway, unless `answer` is already known) and
/// returns the answer, if any.
async fn steps(
    plan: &Plan,
    driver: &Driver<'_>,
    mut answer: Option<Value>,
) -> Result<Option<Value>, McpError> {
    let half = plan.work_ms / 2;
    let mut question = plan.ask.as_ref().filter(|_| answer.is_none());
    let mut elapsed = 0;
    for i in 1..=plan.steps {
        driver.step(plan, i);
        let end = plan.step_end(i);
        if let Some(ask) = question
            && half <= end
        {
            sleep_ms(half.saturating_sub(elapsed)).await;
            elapsed = half;
            answer = Some(driver.ask(ask).await?);
            question = None;
        }
        sleep_ms(end.saturating_sub(elapsed)).await;
        elapsed = end;
    }
    Ok(answer)
}

async fn sleep_ms(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// The echoed arguments, with `"answer"` when the user answered.
fn echo(args: &Map<String, Value>, answer: Option<Value>) -> CallToolResult {
    let mut content = args.clone();
    if let Some(answer) = answer {
        content.insert("answer".to_owned(), answer);
    }
    structured(Value::Object(content))
}

fn tool_error(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_owned())])
}

fn error_object(code: i32, message: &str) -> Map<String, Value> {
    let mut error = Map::new();
    error.insert("code".to_owned(), json!(code));
    error.insert("message".to_owned(), json!(message));
    error
}

/// A task's work, from its first step to its last state (for [`TaskEnd::Never`]: never
/// returns). Stopping it is the caller's business.
pub(crate) async fn in_background(
    table: &TaskTable,
    id: &str,
    plan: &Plan,
    args: &Map<String, Value>,
) {
    let driver = Driver::Task { table, id };
    let payload = match steps(plan, &driver, None).await {
        Err(e) => TaskPayload::Failed {
            error: error_object(e.code.0, &e.message),
        },
        Ok(answer) => match &plan.end {
            TaskEnd::Complete => completed(&echo(args, answer)),
            TaskEnd::ToolError { message } => completed(&tool_error(message)),
            TaskEnd::Fail { code, message } => TaskPayload::Failed {
                error: error_object(*code, message),
            },
            TaskEnd::Never => std::future::pending().await,
        },
    };
    table.finish(id, payload);
}

fn completed(result: &CallToolResult) -> TaskPayload {
    let result = match serde_json::to_value(result) {
        Ok(Value::Object(result)) => result,
        _ => Map::new(),
    };
    TaskPayload::Completed { result }
}

/// The same work inside an ordinary call (no task: the server or the client does not
/// speak the extension). The question goes the way of
/// [`Behavior::ElicitForm`](crate::Behavior::ElicitForm): halfway through, as a request of
/// the server's own (2025-11-25 era), or as an MRTR round before the work (2026-07-28 era).
pub(crate) async fn in_call(
    server: &Shared,
    tool: &ToolSpec,
    plan: &Plan,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let mut answer = None;
    if let Some(ask) = &plan.ask
        && is_modern(context)
    {
        match mrtr_round(&tool.name, ask.input_request(), request)? {
            Round::Ask(response) => return Ok(response),
            Round::Answered(given) => answer = Some(elicitation_fields(&given)),
        }
    }
    let args = request.arguments.clone().unwrap_or_default();
    let work = async {
        let answer = steps(plan, &Driver::Call { context }, answer).await?;
        match &plan.end {
            TaskEnd::Complete => Ok(echo(&args, answer).into()),
            TaskEnd::ToolError { message } => Ok(tool_error(message).into()),
            TaskEnd::Fail { code, message } => {
                Err(McpError::new(ErrorCode(*code), message.clone(), None))
            }
            TaskEnd::Never => std::future::pending().await,
        }
    };
    let cancelled =
        || McpError::internal_error(format!("fake tool {:?} was cancelled", tool.name), None);
    tokio::select! {
        result = work => result,
        () = context.ct.cancelled() => Err(cancelled()),
        () = server.stop.cancelled() => Err(cancelled()),
    }
}
