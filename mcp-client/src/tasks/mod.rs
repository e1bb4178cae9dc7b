//! MCP Tasks: a server may answer a `tools/call` with a task, which the client polls
//! (`tasks/get`) until it ends, answering what the task asks for and cancelling it
//! (`tasks/cancel`) when the caller gives up. Two dialects exist:
//! - the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663), negotiated in
//!   either era through the capabilities' `extensions`: the server decides to answer with
//!   a task, `tasks/get` carries the input requests (answered with `tasks/update`) and the
//!   result or error inline;
//! - MCP 2025-11-25's own tasks (SEP-1686): the client asks for a task (`params.task`)
//!   for a tool whose `execution.taskSupport` wants one, and fetches the outcome with
//!   `tasks/result`, during which the server sends its requests (elicitation, sampling)
//!   as ordinary requests. rmcp 3.11 keeps neither the tool's `taskSupport` nor the
//!   server's `tasks` capability, so this client calls plainly first and, when a
//!   2025-era server refuses with "method not found" (what the specification has a
//!   server answer for a tool that requires a task), once more as a task.
//!
//! [`Client::call_tool`] drives a task transparently: the caller gets the task's result
//! (or its failure) as if the call had answered at once, within the call's timeout
//! (paused while the host answers the server), the call's progress keeps flowing, and
//! dropping the call, its timeout or its abort cancels the task on the server. Hosts
//! that want the task itself start it with [`Client::start_tool_task`] and keep a
//! [`TaskHandle`], which outlives the connection it was started on (the task's id is all a
//! later connection to the same server needs).
//!
//! Polling follows the server's poll interval, bounded by [`MIN_POLL_INTERVAL`] and
//! [`MAX_POLL_INTERVAL`] (a server asking for 0 ms or for a day gets the bound); without
//! one the client backs off with [`UNSUGGESTED_POLL`]. A task whose time to live has
//! passed is given up with [`RequestError::TaskLost`].
//!
//! The folder owns the task driver and [`TaskHandle`] (here) and a task's state as the
//! caller sees it ([`phase`], a leaf the call settings name).

use std::sync::Arc;
use std::time::Duration;

use mcp_pool::Backoff;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelTaskParams, CancelTaskRequest, ClientRequest,
    CustomRequest, DetailedTask, GetTaskParams, GetTaskRequest, InputRequests, InputRequiredResult,
    JsonObject, ServerResult, Task, TaskPayload, UpdateTaskParams, UpdateTaskRequest,
};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::Client;
use crate::error::RequestError;
use crate::host::server_requests::ServerRequests;
use crate::requests::CallSettings;

pub(crate) mod phase;

pub use phase::{TaskPhase, TaskState, TaskStateCallback};

/// The shortest wait between two polls of a task, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest wait between two polls of a task, whatever the server suggests.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(5);
/// The waits between polls of a task whose server suggests no interval.
pub const UNSUGGESTED_POLL: Backoff = Backoff::new(Duration::from_millis(100), MAX_POLL_INTERVAL);

/// Which Tasks protocol a task speaks (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// The tasks extension (SEP-2663).
    Extension,
    /// MCP 2025-11-25 (SEP-1686).
    Legacy,
}

/// What a server said about a task: when it was made, or polled.
#[derive(Debug, Clone)]
pub(crate) struct Seed {
    id: String,
    dialect: Dialect,
    state: TaskState,
    ttl: Option<Duration>,
    poll_interval: Option<Duration>,
}

impl Seed {
    /// A task of the extension's `CreateTaskResult`.
    pub(crate) fn of_extension(task: &Task) -> Self {
        Self {
            id: task.task_id.clone(),
            dialect: Dialect::Extension,
            state: TaskState {
                phase: TaskPhase::of(task.status),
                message: task.status_message.clone(),
            },
            ttl: task.ttl_ms.map(Duration::from_millis),
            poll_interval: task.poll_interval_ms.map(Duration::from_millis),
        }
    }

    /// A task of a 2025-era `CreateTaskResult` (`{"task": {...}}`).
    pub(crate) fn of_legacy(result: &Value) -> Result<Self, RequestError> {
        let task = result
            .get("task")
            .and_then(Value::as_object)
            .ok_or_else(|| RequestError::Protocol {
                detail: "the reply to a task-augmented tools/call has no `task` object".to_owned(),
            })?;
        let id =
            task.get("taskId")
                .and_then(Value::as_str)
                .ok_or_else(|| RequestError::Protocol {
                    detail: "the task of a task-augmented tools/call has no `taskId`".to_owned(),
                })?;
        let polled = Polled::of_object(id, task)?;
        Ok(Self {
            id: id.to_owned(),
            dialect: Dialect::Legacy,
            state: polled.state,
            ttl: polled.ttl,
            poll_interval: polled.poll_interval,
        })
    }
}

/// One `tasks/get` answer, in either dialect.
#[derive(Debug)]
struct Polled {
    state: TaskState,
    ttl: Option<Duration>,
    poll_interval: Option<Duration>,
    input_requests: Option<InputRequests>,
    result: Option<JsonObject>,
    error: Option<JsonObject>,
}

impl Polled {
    fn of_extension(task: DetailedTask) -> Self {
        let (input_requests, result, error) = match task.payload {
            TaskPayload::InputRequired { input_requests } => (Some(input_requests), None, None),
            TaskPayload::Completed { result } => (None, Some(result), None),
            TaskPayload::Failed { error } => (None, None, Some(error)),
            _ => (None, None, None),
        };
        Self {
            state: TaskState {
                phase: TaskPhase::of(task.task.status),
                message: task.task.status_message,
            },
            ttl: task.task.ttl_ms.map(Duration::from_millis),
            poll_interval: task.task.poll_interval_ms.map(Duration::from_millis),
            input_requests,
            result,
            error,
        }
    }

    /// A task object as JSON: the 2025 era's field names (`ttl`, `pollInterval`) or the
    /// extension's (`ttlMs`, `pollIntervalMs`).
    fn of_object(id: &str, task: &JsonObject) -> Result<Self, RequestError> {
        let protocol = |detail: String| RequestError::Protocol { detail };
        let status = task.get("status").and_then(Value::as_str).ok_or_else(|| {
            protocol(format!("the server's state of task `{id}` has no `status`"))
        })?;
        let phase = TaskPhase::parse(status).ok_or_else(|| {
            protocol(format!(
                "the server's state of task `{id}` has status `{status}`, which is not a task status (working, input_required, completed, failed, cancelled)"
            ))
        })?;
        let millis = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|name| task.get(*name).and_then(Value::as_u64))
                .map(Duration::from_millis)
        };
        let input_requests = match task.get("inputRequests") {
            Some(requests) => Some(serde_json::from_value(requests.clone()).map_err(|e| {
                protocol(format!(
                    "the input requests of task `{id}` cannot be read: {e}"
                ))
            })?),
            None => None,
        };
        let object = |name: &str| task.get(name).and_then(Value::as_object).cloned();
        Ok(Self {
            state: TaskState {
                phase,
                message: task
                    .get("statusMessage")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            },
            ttl: millis(["ttlMs", "ttl"]),
            poll_interval: millis(["pollIntervalMs", "pollInterval"]),
            input_requests,
            result: object("result"),
            error: object("error"),
        })
    }
}

/// Raw bytes of one message as read (a stdio line, an SSE event's data), for readers that
/// need what rmcp does not keep.
pub(crate) type MessageTap = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// A 2025-era task-augmented `tools/call` (`params.task`), asking the server to keep the
/// task's result for `ttl`.
pub(crate) fn legacy_task_call(params: &CallToolRequestParams, ttl: Duration) -> ClientRequest {
    let mut value = serde_json::to_value(params).unwrap_or_else(|_| json!({}));
    if let Some(map) = value.as_object_mut() {
        let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        map.insert("task".to_owned(), json!({ "ttl": ttl }));
    }
    ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(value)))
}

/// A task a server runs for this client (see the module docs): its id and the state
/// seen last. Cloning shares the state; the handle holds no connection, so each
/// operation names the [`Client`] to use (the one it started on, or a later connection to
/// the same server).
#[derive(Debug, Clone)]
pub struct TaskHandle {
    id: String,
    /// `None` for a resumed handle: the dialect of the connection it is used on.
    dialect: Option<Dialect>,
    state: Arc<watch::Sender<TaskState>>,
    /// When this handle was made: a task's time to live counts from its creation, which
    /// the client knows only as "before it saw the task", so it counts from here (the
    /// client gives up at most a poll late, never early).
    seen: Instant,
    ttl: Option<Duration>,
    poll_interval: Option<Duration>,
}

/// What [`Client::start_tool_task`] got back.
#[derive(Debug)]
#[non_exhaustive]
pub enum Started {
    /// The server runs the call as a task.
    Task(TaskHandle),
    /// The server answered the call at once (it did not make a task of it).
    Done(CallToolResult),
}

impl TaskHandle {
    fn from_seed(seed: Seed) -> Self {
        let (state, _) = watch::channel(seed.state);
        Self {
            id: seed.id,
            dialect: Some(seed.dialect),
            state: Arc::new(state),
            seen: Instant::now(),
            ttl: seed.ttl,
            poll_interval: seed.poll_interval,
        }
    }

    /// A handle for a task started earlier (by another connection to the same server, or
    /// before the host restarted): its state is unknown until the first poll.
    pub fn resume(id: impl Into<String>) -> Self {
        let (state, _) = watch::channel(TaskState {
            phase: TaskPhase::Working,
            message: None,
        });
        Self {
            id: id.into(),
            dialect: None,
            state: Arc::new(state),
            seen: Instant::now(),
            ttl: None,
            poll_interval: None,
        }
    }

    /// The server's id of the task.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The state seen last.
    pub fn state(&self) -> TaskState {
        self.state.borrow().clone()
    }

    /// Each state the handle sees from now on (while some operation polls the task).
    pub fn watch(&self) -> watch::Receiver<TaskState> {
        self.state.subscribe()
    }

    /// Polls the task until it ends and returns its result, answering what it asks for
    /// through `settings`' requests (else the connection's), within `settings`' timeout
    /// (paused while the host answers). The task is not cancelled when this fails or is
    /// dropped: call [`Self::cancel`] for that.
    ///
    /// # Errors
    /// [`RequestError::Timeout`]; [`RequestError::Server`] for a task that failed with an
    /// error; [`RequestError::TaskLost`] for one cancelled, expired or unknown to the
    /// server; a protocol fault for a reply that is not a task; a lost connection.
    pub async fn result(
        &self,
        client: &Client,
        settings: CallSettings,
    ) -> Result<CallToolResult, RequestError> {
        let mut deadline = settings.first_deadline();
        let abort = settings.abort_token();
        self.drive(client, &settings, &abort, &mut deadline).await
    }

    /// Asks the server to cancel the task (`tasks/cancel`); the server may take a moment
    /// to stop it, and a task that already ended stays as it was.
    ///
    /// # Errors
    /// The server's error (an unknown task, for one), a lost connection.
    pub async fn cancel(&self, client: &Client) -> Result<(), RequestError> {
        client
            .send_task_request(cancel_request(&self.id), self.dialect_on(client))
            .await
            .map(|_| ())
    }

    fn dialect_on(&self, client: &Client) -> Dialect {
        self.dialect.unwrap_or(if client.offers_tasks() {
            Dialect::Extension
        } else {
            Dialect::Legacy
        })
    }

    fn publish(&self, state: &TaskState, settings: &CallSettings) {
        let changed = self.state.send_if_modified(|seen| {
            let changed = seen != state;
            seen.clone_from(state);
            changed
        });
        if changed && let Some(callback) = settings.task_state() {
            callback(state);
        }
    }

    /// The poll loop of [`Self::result`] and of a transparent call.
    pub(crate) async fn drive(
        &self,
        client: &Client,
        settings: &CallSettings,
        abort: &CancellationToken,
        deadline: &mut Instant,
    ) -> Result<CallToolResult, RequestError> {
        let dialect = self.dialect_on(client);
        let mut ttl = self.ttl;
        let mut suggested = self.poll_interval;
        let mut step = 0u32;
        loop {
            let wait = poll_wait(suggested, step);
            step = step.saturating_add(1);
            if ttl.is_some_and(|ttl| self.seen.elapsed() >= ttl) {
                return Err(self.lost("its time to live ran out before it ended"));
            }
            let timeout = RequestError::Timeout {
                after: settings.effective_timeout(),
            };
            tokio::select! {
                biased;
                () = abort.cancelled() => return Err(RequestError::Aborted),
                () = tokio::time::sleep_until(*deadline) => return Err(timeout),
                () = tokio::time::sleep(wait) => {}
            }
            let polled = tokio::select! {
                biased;
                () = abort.cancelled() => return Err(RequestError::Aborted),
                () = tokio::time::sleep_until(*deadline) => return Err(timeout),
                polled = self.get(client, dialect) => polled?,
            };
            self.publish(&polled.state, settings);
            ttl = polled.ttl.or(ttl);
            suggested = polled.poll_interval.or(suggested);
            let phase = polled.state.phase;
            match (phase, dialect) {
                (TaskPhase::Completed, Dialect::Extension) => {
                    return self.completed(polled.result);
                }
                (TaskPhase::Failed, Dialect::Extension) => {
                    return Err(self.failed(polled.error));
                }
                (TaskPhase::Cancelled, _) => return Err(self.lost("the server cancelled it")),
                (TaskPhase::InputRequired, Dialect::Extension) => {
                    let asked = Instant::now();
                    let requests = polled.input_requests.unwrap_or_default();
                    self.answer(client, settings.requests(), requests).await?;
                    // The host's time does not count against the call.
                    *deadline += asked.elapsed();
                    step = 0;
                }
                // The 2025 era: the outcome, and the server's requests, come with
                // `tasks/result`, which waits for the task to end.
                (TaskPhase::Completed | TaskPhase::Failed | TaskPhase::InputRequired, _) => {
                    return self.legacy_result(client, settings, abort, deadline).await;
                }
                (TaskPhase::Working, _) => {}
            }
        }
    }

    /// One `tasks/get`.
    async fn get(&self, client: &Client, dialect: Dialect) -> Result<Polled, RequestError> {
        let request =
            ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(self.id.clone())));
        // rmcp reads a reply by its shape: a task with its payload is a `GetTaskResult`,
        // a 2025-era task (no payload, other field names) a `CustomResult`.
        let reply = match client.send_task_request(request, dialect).await {
            // "Invalid params" names an id the server does not know (any more): a task
            // past its time to live, or one the server lost when it restarted.
            Err(RequestError::Server {
                code: -32602,
                message,
            }) => {
                return Err(self.lost(&format!("the server no longer knows it ({message})")));
            }
            other => other?,
        };
        match reply {
            ServerResult::GetTaskResult(got) if got.task.task.task_id == self.id => {
                Ok(Polled::of_extension(got.task))
            }
            ServerResult::CustomResult(raw) => match raw.0.as_object() {
                Some(task) if task.get("taskId").and_then(Value::as_str) == Some(&self.id) => {
                    Polled::of_object(&self.id, task)
                }
                _ => Err(self.not_a_task()),
            },
            _ => Err(self.not_a_task()),
        }
    }

    fn not_a_task(&self) -> RequestError {
        RequestError::Protocol {
            detail: format!(
                "the reply to tasks/get for task `{}` is not that task's state (another task, an unknown status, or a missing field)",
                self.id
            ),
        }
    }

    /// A 2025-era task's outcome (`tasks/result`), answering the server's requests
    /// meanwhile, within the call's deadline.
    async fn legacy_result(
        &self,
        client: &Client,
        settings: &CallSettings,
        abort: &CancellationToken,
        deadline: &mut Instant,
    ) -> Result<CallToolResult, RequestError> {
        let request = ClientRequest::CustomRequest(CustomRequest::new(
            "tasks/result",
            Some(json!({ "taskId": self.id })),
        ));
        let fetched = client.traced(
            "tasks/result",
            None,
            client.call_round(request, settings, abort, deadline),
        );
        match fetched.await {
            Ok((ServerResult::CallToolResult(result), _)) => Ok(result),
            Ok(_) => Err(RequestError::Protocol {
                detail: format!(
                    "the reply to tasks/result for task `{}` is not a tools/call result",
                    self.id
                ),
            }),
            Err(RequestError::Server { code, message }) => Err(RequestError::Server {
                code,
                message: format!("task `{}` failed: {message}", self.id),
            }),
            Err(other) => Err(other),
        }
    }

    /// The result of a completed task (extension dialect: carried inline).
    fn completed(&self, result: Option<JsonObject>) -> Result<CallToolResult, RequestError> {
        let result = result.ok_or_else(|| RequestError::Protocol {
            detail: format!("task `{}` completed without a result", self.id),
        })?;
        serde_json::from_value(Value::Object(result)).map_err(|e| RequestError::Protocol {
            detail: format!(
                "task `{}` completed with a result that is not a tools/call result: {e}",
                self.id
            ),
        })
    }

    /// Answers the task's input requests and sends the answers (`tasks/update`).
    async fn answer(
        &self,
        client: &Client,
        caller: Option<&Arc<dyn ServerRequests>>,
        input_requests: InputRequests,
    ) -> Result<(), RequestError> {
        if input_requests.is_empty() {
            return Err(RequestError::Protocol {
                detail: format!(
                    "task `{}` asks for input without saying what (no input requests)",
                    self.id
                ),
            });
        }
        let (responses, _) = client
            .shared
            .fulfil_input_requests(
                caller,
                InputRequiredResult::from_input_requests(input_requests),
            )
            .await?;
        let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
            UpdateTaskParams::new(self.id.clone(), responses.unwrap_or_default()),
        ));
        client
            .send_task_request(request, Dialect::Extension)
            .await
            .map(|_| ())
    }

    fn lost(&self, detail: &str) -> RequestError {
        RequestError::TaskLost {
            task: self.id.clone(),
            detail: detail.to_owned(),
        }
    }

    /// The error of a failed task: the server's JSON-RPC error when it is one.
    fn failed(&self, error: Option<JsonObject>) -> RequestError {
        let error = error.unwrap_or_default();
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok());
        let message = error.get("message").and_then(Value::as_str);
        match (code, message) {
            (Some(code), Some(message)) => RequestError::Server {
                code,
                message: format!("task `{}` failed: {message}", self.id),
            },
            _ => RequestError::Protocol {
                detail: format!(
                    "task `{}` failed with an error that is not a JSON-RPC error: {}",
                    self.id,
                    Value::Object(error)
                ),
            },
        }
    }
}

fn cancel_request(id: &str) -> ClientRequest {
    ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(id)))
}

/// The wait before poll `step` (0 for the first): the server's suggestion within the
/// bounds, else the doubling [`UNSUGGESTED_POLL`].
fn poll_wait(suggested: Option<Duration>, step: u32) -> Duration {
    match suggested {
        Some(d) => d.clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL),
        None => UNSUGGESTED_POLL.delay(step),
    }
}

/// Sends `tasks/cancel` for task `id` if dropped while armed (a transparent call that was
/// dropped, timed out or aborted).
fn cancel_task_on_drop(
    peer: &rmcp::service::Peer<rmcp::RoleClient>,
    id: String,
) -> crate::requests::on_drop::SpawnOnDrop {
    let peer = peer.clone();
    // Made now, in the call's span: the guard's task runs in none.
    let mut request = cancel_request(&id);
    crate::telemetry::inject(&mut request);
    crate::requests::on_drop::SpawnOnDrop::new(async move {
        let sent = peer.send_request(request);
        let _ = tokio::time::timeout(MAX_POLL_INTERVAL, sent).await;
    })
}

impl Client {
    /// Calls `tool` and, where the server makes a task of the call, returns a handle of
    /// the task at once: a host that wants to keep the task (show its state, wait later,
    /// cancel it) uses this; [`Client::call_tool`] drives a task transparently instead.
    /// A server that answers at once (it made no task) gives [`Started::Done`].
    ///
    /// # Errors
    /// As [`Client::call_tool`] for the call itself.
    pub async fn start_tool_task(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        settings: CallSettings,
    ) -> Result<Started, RequestError> {
        let started = self.traced("tools/call", Some(tool), async {
            match self.call_until_task(tool, arguments, &settings).await? {
                crate::requests::CallOutcome::Result(result) => Ok(Started::Done(result)),
                crate::requests::CallOutcome::Task(seed, _progress) => {
                    Ok(Started::Task(TaskHandle::from_seed(seed)))
                }
            }
        });
        started.await
    }

    /// Drives the task a transparent call got (see the module docs): cancelled on the
    /// server unless it ends here with its outcome.
    pub(crate) async fn finish_task(
        &self,
        seed: crate::tasks::Seed,
        settings: &CallSettings,
        abort: &CancellationToken,
        deadline: &mut Instant,
    ) -> Result<CallToolResult, RequestError> {
        let handle = TaskHandle::from_seed(seed);
        if let Some(callback) = settings.task_state() {
            callback(&handle.state());
        }
        let mut guard = cancel_task_on_drop(&self.peer, handle.id.clone());
        let outcome = handle.drive(self, settings, abort, deadline).await;
        let ended_on_server = matches!(
            &outcome,
            Ok(_) | Err(RequestError::TaskLost { .. } | RequestError::Server { .. })
        );
        if ended_on_server {
            guard.disarm();
        }
        outcome
    }

    /// Sends one task request (`tasks/get`, `tasks/update`, `tasks/cancel`).
    async fn send_task_request(
        &self,
        request: ClientRequest,
        dialect: Dialect,
    ) -> Result<ServerResult, RequestError> {
        if dialect == Dialect::Extension && !self.offers_tasks() {
            return Err(RequestError::Unsupported {
                detail:
                    "the server does not offer tasks (no `io.modelcontextprotocol/tasks` extension)"
                        .to_owned(),
            });
        }
        let method = match &request {
            ClientRequest::GetTaskRequest(_) => "tasks/get",
            ClientRequest::UpdateTaskRequest(_) => "tasks/update",
            ClientRequest::CancelTaskRequest(_) => "tasks/cancel",
            _ => "tasks",
        };
        self.traced(method, None, async {
            let mut request = request;
            crate::telemetry::inject(&mut request);
            match self.peer.send_request(request).await {
                Ok(result) => Ok(result),
                Err(e) => Err(RequestError::of_service(self, e).await),
            }
        })
        .await
    }

    /// Whether the server announced the tasks extension (SEP-2663).
    pub fn offers_tasks(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_tasks())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_interval_is_kept_within_bounds() {
        assert_eq!(poll_wait(Some(Duration::ZERO), 0), MIN_POLL_INTERVAL);
        assert_eq!(
            poll_wait(Some(Duration::from_secs(86_400)), 3),
            MAX_POLL_INTERVAL
        );
        let second = Duration::from_millis(700);
        assert_eq!(poll_wait(Some(second), 9), second);
    }

    #[test]
    fn without_a_suggestion_polls_back_off_to_the_cap() {
        assert_eq!(poll_wait(None, 0), UNSUGGESTED_POLL.base());
        assert_eq!(poll_wait(None, 1), UNSUGGESTED_POLL.base() * 2);
        assert_eq!(poll_wait(None, 40), MAX_POLL_INTERVAL);
    }

    #[test]
    fn a_failed_tasks_error_is_the_servers_or_a_protocol_fault() {
        let handle = TaskHandle::resume("t1");
        let mut error = JsonObject::new();
        error.insert("code".into(), (-32000).into());
        error.insert("message".into(), "disk full".into());
        let RequestError::Server { code, message } = handle.failed(Some(error)) else {
            panic!("a JSON-RPC error is the server's error");
        };
        assert_eq!(code, -32000);
        assert_eq!(message, "task `t1` failed: disk full");
        let mut garbage = JsonObject::new();
        garbage.insert("why".into(), "no".into());
        assert!(matches!(
            handle.failed(Some(garbage)),
            RequestError::Protocol { .. }
        ));
    }

    #[test]
    fn a_2025_task_is_read_with_its_own_field_names() {
        let created = json!({"task": {
            "taskId": "r1", "status": "working", "ttl": 300000, "pollInterval": 1000,
            "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "statusMessage": "Gathering sources..."
        }});
        let seed = Seed::of_legacy(&created).unwrap();
        assert_eq!(seed.id, "r1");
        assert_eq!(seed.dialect, Dialect::Legacy);
        assert_eq!(seed.ttl, Some(Duration::from_secs(300)));
        assert_eq!(seed.poll_interval, Some(Duration::from_secs(1)));
        assert_eq!(seed.state.message.as_deref(), Some("Gathering sources..."));
        assert!(Seed::of_legacy(&json!({"content": []})).is_err());
    }

    #[test]
    fn an_unknown_status_is_a_protocol_fault_naming_it() {
        let task = json!({"taskId": "t", "status": "exploded"});
        let Err(RequestError::Protocol { detail }) =
            Polled::of_object("t", task.as_object().unwrap())
        else {
            panic!("an unknown status is not a task state");
        };
        assert!(detail.contains("`exploded`"), "{detail}");
    }
}
