//! MCP Tasks (the tasks extension, SEP-2663) for 2026-era downstream clients that declare
//! it. A call runs as a [`Run`] as every 2026-era call does; when its upstream server
//! makes a task of it (the set reports the task's state), the gateway answers the client
//! with a task of its own and keeps the run here under a random id. The client then polls
//! (`tasks/get`: the run's state, its question, or its outcome), answers the run's
//! questions (`tasks/update`) and may cancel it (`tasks/cancel`, which cancels the
//! upstream task). A client without the extension gets the upstream task's result as a
//! plain call (the set drives it), and so does every 2025-era client.
//!
//! A task waiting for its client's answer longer than the hub's answer deadline is given
//! up; an ended one is kept for [`KEEP_ENDED`] for its client to fetch, then forgotten.
//! A task is its caller's ([`super::caller`]): another caller naming its id is refused and
//! the task is left as it was.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, InputRequest, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::Value;
use tokio::sync::oneshot;

use super::caller::Caller;
use super::modern::{INPUT_KEY, MAX_PARKED, MAX_PARKED_PER_CALLER, Run};

/// How long an ended task's outcome is kept for its client.
pub(crate) const KEEP_ENDED: Duration = Duration::from_secs(300);

/// Prefix of the task ids this gateway hands out.
const ID_PREFIX: &str = "mcpctl-task-";

/// The time now, as the specification's timestamps want it.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A question of a run, waiting for its client's `tasks/update`.
struct Question {
    request: InputRequest,
    answer: oneshot::Sender<Option<Value>>,
    since: Instant,
}

enum State {
    Running {
        run: Box<Run>,
        question: Option<Box<Question>>,
        message: Option<String>,
    },
    Ended {
        payload: TaskPayload,
        since: Instant,
    },
}

struct Entry {
    /// The id of the caller whose call it is.
    owner: String,
    created_at: String,
    updated_at: String,
    state: State,
}

/// The tasks of 2026-era clients, by id.
#[derive(Default)]
pub(crate) struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.entries.lock().map_or(0, |e| e.len());
        f.debug_struct("Tasks").field("tasks", &n).finish()
    }
}

fn unknown(id: &str) -> McpError {
    McpError::invalid_params(
        format!("no task `{id}` here (never started, or forgotten {KEEP_ENDED:?} after it ended)"),
        None,
    )
}

impl Tasks {
    /// How many tasks each caller has kept (running or ended), by caller id (sorted): the
    /// status page's tasks per principal.
    pub(crate) fn by_caller(&self) -> std::collections::BTreeMap<String, usize> {
        let mut counts = std::collections::BTreeMap::new();
        if let Ok(entries) = self.entries.lock() {
            for entry in entries.values() {
                *counts.entry(entry.owner.clone()).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Keeps `run` as a new task; its seed state, or the run back when too many tasks
    /// are kept already (of all callers, or [`MAX_PARKED_PER_CALLER`] of its caller).
    pub(crate) fn adopt(&self, run: Run, message: Option<String>) -> Result<Task, Run> {
        let Ok(mut entries) = self.entries.lock() else {
            return Err(run);
        };
        let theirs = entries
            .values()
            .filter(|e| e.owner == run.caller.id())
            .count();
        if entries.len() >= MAX_PARKED || theirs >= MAX_PARKED_PER_CALLER {
            return Err(run);
        }
        let Ok(random) = super::random_hex(16) else {
            return Err(run);
        };
        let id = format!("{ID_PREFIX}{random}");
        let created_at = now();
        let mut task = Task::new(
            id.clone(),
            TaskStatus::Working,
            created_at.clone(),
            created_at.clone(),
        );
        task.status_message.clone_from(&message);
        entries.insert(
            id,
            Entry {
                owner: run.caller.id().to_owned(),
                updated_at: created_at.clone(),
                created_at,
                state: State::Running {
                    run: Box::new(run),
                    question: None,
                    message,
                },
            },
        );
        Ok(task)
    }

    /// The task `id` of `caller`, taken out until [`Self::put`] brings it back.
    fn take(&self, id: &str, caller: &Caller) -> Result<Entry, McpError> {
        let mut entries = self.entries.lock().map_err(|_| unknown(id))?;
        match entries.get(id) {
            None => Err(unknown(id)),
            Some(entry) if entry.owner != caller.id() => Err(McpError::invalid_params(
                format!(
                    "task `{id}` belongs to another caller; only the caller that started it may use it"
                ),
                None,
            )),
            Some(_) => entries.remove(id).ok_or_else(|| unknown(id)),
        }
    }

    fn put(&self, id: String, entry: Entry) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(id, entry);
        }
    }

    /// The task's state now (`tasks/get`): its outcome once the run ended, its question
    /// while one waits, else `working` with the latest status message.
    pub(crate) async fn get(&self, id: &str, caller: &Caller) -> Result<DetailedTask, McpError> {
        let mut entry = self.take(id, caller)?;
        let mut finished = false;
        if let State::Running {
            run,
            question,
            message,
        } = &mut entry.state
        {
            if let Some(state) = run.task_state()
                && state.message.is_some()
            {
                message.clone_from(&state.message);
            }
            finished = run.task.is_finished();
            if !finished
                && question.is_none()
                && let Ok((input, answer)) = run.asks.try_recv()
            {
                match serde_json::from_value::<InputRequest>(input) {
                    Ok(request) => {
                        *question = Some(Box::new(Question {
                            request,
                            answer,
                            since: Instant::now(),
                        }));
                        entry.updated_at = now();
                    }
                    Err(e) => {
                        tracing::warn!("a question could not be passed on: {e}");
                        let _ = answer.send(None);
                    }
                }
            }
        }
        if finished
            && let State::Running { mut run, .. } =
                std::mem::replace(&mut entry.state, ended(TaskPayload::Cancelled))
        {
            let payload = match (&mut run.task).await {
                Ok(Ok(result)) => completed(&result),
                Ok(Err(e)) => failed(&e),
                Err(e) => failed(&McpError::internal_error(
                    format!("the call stopped: {e}"),
                    None,
                )),
            };
            run.set.release().await;
            entry.state = ended(payload);
            entry.updated_at = now();
        }
        let detailed = detailed(id, &entry);
        self.put(id.to_owned(), entry);
        Ok(detailed)
    }

    /// The client's answers (`tasks/update`) to the task's waiting question.
    pub(crate) fn update(
        &self,
        id: &str,
        responses: &rmcp::model::InputResponses,
        caller: &Caller,
    ) -> Result<(), McpError> {
        let mut entry = self.take(id, caller)?;
        let outcome = match &mut entry.state {
            State::Running { question, .. } => match question.take() {
                Some(q) => {
                    let _ = q.answer.send(responses.get(INPUT_KEY).cloned());
                    entry.updated_at = now();
                    Ok(())
                }
                None => Err(McpError::invalid_params(
                    format!("task `{id}` waits for no answer"),
                    None,
                )),
            },
            State::Ended { .. } => Err(McpError::invalid_params(
                format!("task `{id}` has ended"),
                None,
            )),
        };
        self.put(id.to_owned(), entry);
        outcome
    }

    /// Cancels the task (`tasks/cancel`): its run stops, which cancels the upstream call
    /// and its task; an ended task stays as it was.
    pub(crate) async fn cancel(&self, id: &str, caller: &Caller) -> Result<(), McpError> {
        let mut entry = self.take(id, caller)?;
        if matches!(entry.state, State::Running { .. })
            && let State::Running { run, .. } =
                std::mem::replace(&mut entry.state, ended(TaskPayload::Cancelled))
        {
            (*run).abandon().await;
            entry.updated_at = now();
        }
        self.put(id.to_owned(), entry);
        Ok(())
    }

    /// Gives up tasks whose question waited longer than `deadline`, and forgets tasks
    /// ended more than [`KEEP_ENDED`] ago.
    pub(crate) async fn expire(&self, deadline: Duration) {
        let mut given_up = Vec::new();
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|_, entry| match &entry.state {
                State::Ended { since, .. } => since.elapsed() <= KEEP_ENDED,
                State::Running { .. } => true,
            });
            let waited: Vec<String> = entries
                .iter()
                .filter(|(_, e)| {
                    matches!(&e.state, State::Running { question: Some(q), .. } if q.since.elapsed() > deadline)
                })
                .map(|(id, _)| id.clone())
                .collect();
            for id in waited {
                if let Some(entry) = entries.get_mut(&id) {
                    let cancelled = ended(TaskPayload::Cancelled);
                    if let State::Running { run, .. } =
                        std::mem::replace(&mut entry.state, cancelled)
                    {
                        entry.updated_at = now();
                        given_up.push(run);
                    }
                }
            }
        }
        for run in given_up {
            tracing::info!(
                "a task waited more than {deadline:?} for its client's answer; given up"
            );
            (*run).abandon().await;
        }
    }

    /// Gives up every running task (the gateway stops).
    pub(crate) async fn clear(&self) {
        let all: Vec<Entry> = match self.entries.lock() {
            Ok(mut entries) => entries.drain().map(|(_, e)| e).collect(),
            Err(_) => Vec::new(),
        };
        for entry in all {
            if let State::Running { run, .. } = entry.state {
                (*run).abandon().await;
            }
        }
    }
}

fn ended(payload: TaskPayload) -> State {
    State::Ended {
        payload,
        since: Instant::now(),
    }
}

fn completed(result: &rmcp::model::CallToolResult) -> TaskPayload {
    match serde_json::to_value(result) {
        Ok(Value::Object(mut result)) => {
            // The task's result is a plain tools/call result, whatever era framed it.
            result.remove("resultType");
            TaskPayload::Completed { result }
        }
        _ => failed(&McpError::internal_error(
            "the call's result could not be written",
            None,
        )),
    }
}

fn failed(error: &McpError) -> TaskPayload {
    let mut object = JsonObject::new();
    object.insert("code".to_owned(), error.code.0.into());
    object.insert("message".to_owned(), error.message.to_string().into());
    if let Some(data) = &error.data {
        object.insert("data".to_owned(), data.clone());
    }
    TaskPayload::Failed { error: object }
}

fn detailed(id: &str, entry: &Entry) -> DetailedTask {
    let mut task = Task::new(
        id.to_owned(),
        TaskStatus::Working,
        entry.created_at.clone(),
        entry.updated_at.clone(),
    );
    let payload = match &entry.state {
        State::Running {
            question: Some(q), ..
        } => TaskPayload::InputRequired {
            input_requests: std::collections::BTreeMap::from([(
                INPUT_KEY.to_owned(),
                q.request.clone(),
            )]),
        },
        State::Running { message, .. } => {
            task.status_message.clone_from(message);
            TaskPayload::Working
        }
        State::Ended { payload, .. } => payload.clone(),
    };
    DetailedTask::new(task, payload)
}
