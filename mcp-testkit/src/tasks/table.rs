//! The tasks a fake server created, kept for the whole server (every session and every
//! HTTP connection sees the same tasks), and what `tasks/get`, `tasks/update` and
//! `tasks/cancel` do to them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, InputRequests, InputResponses, Task, TaskPayload, TaskStatus};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::record::lock;

/// The key of a task's one input request.
pub(crate) const INPUT_KEY: &str = "input";

/// What a new task is made of.
#[derive(Debug)]
pub(crate) struct NewTask {
    pub(crate) ttl_ms: Option<u64>,
    pub(crate) poll_interval_ms: Option<u64>,
    pub(crate) garbage_get: bool,
    pub(crate) status_message: String,
}

#[derive(Debug)]
struct Entry {
    /// The base fields; `task.status` always agrees with `payload`.
    task: Task,
    payload: TaskPayload,
    /// When the task is forgotten (its `ttlMs` after creation, on tokio time).
    expires: Option<Instant>,
    garbage_get: bool,
    /// Stops the task's work (cancelled, forgotten).
    cancel: CancellationToken,
    /// Where the answer to the outstanding input request goes.
    waiting: Option<oneshot::Sender<Value>>,
}

impl Entry {
    fn set(&mut self, payload: TaskPayload) {
        self.task.status = payload.status();
        self.payload = payload;
        self.task.last_updated_at = now();
    }
}

/// Every task of a server, by id (`task-1`, `task-2`, … in creation order).
#[derive(Debug, Default)]
pub(crate) struct TaskTable {
    entries: Mutex<BTreeMap<String, Entry>>,
    created: AtomicU64,
}

impl TaskTable {
    /// Creates a `working` task; returns its seed state and the token that stops its work.
    pub(crate) fn create(&self, new: NewTask) -> (Task, CancellationToken) {
        let n = 1 + self.created.fetch_add(1, Ordering::SeqCst);
        let at = now();
        let mut task = Task::new(format!("task-{n}"), TaskStatus::Working, at.clone(), at)
            .with_status_message(new.status_message);
        task.ttl_ms = new.ttl_ms;
        task.poll_interval_ms = new.poll_interval_ms;
        let cancel = CancellationToken::new();
        let entry = Entry {
            task: task.clone(),
            payload: TaskPayload::Working,
            expires: new
                .ttl_ms
                .and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms))),
            garbage_get: new.garbage_get,
            cancel: cancel.clone(),
            waiting: None,
        };
        self.live().insert(task.task_id.clone(), entry);
        (task, cancel)
    }

    /// The tasks not past their TTL; the others are forgotten (and their work stopped).
    fn live(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        let mut entries = lock(&self.entries);
        let now = Instant::now();
        entries.retain(|_, entry| {
            let alive = entry.expires.is_none_or(|at| now < at);
            if !alive {
                entry.cancel.cancel();
            }
            alive
        });
        entries
    }

    /// Sets the `statusMessage` of a task still working.
    pub(crate) fn set_message(&self, id: &str, message: String) {
        if let Some(entry) = self.live().get_mut(id)
            && !entry.task.status.is_terminal()
        {
            entry.task.status_message = Some(message);
            entry.task.last_updated_at = now();
        }
    }

    /// Puts a working task in `input_required` with `requests`; the answer to
    /// [`INPUT_KEY`] arrives on the receiver. `None` when the task is gone or over.
    pub(crate) fn ask(
        &self,
        id: &str,
        requests: InputRequests,
    ) -> Option<oneshot::Receiver<Value>> {
        let mut entries = self.live();
        let entry = entries.get_mut(id)?;
        if entry.task.status != TaskStatus::Working {
            return None;
        }
        let (sender, receiver) = oneshot::channel();
        entry.waiting = Some(sender);
        entry.set(TaskPayload::InputRequired {
            input_requests: requests,
        });
        Some(receiver)
    }

    /// Ends a task's work with `payload`, unless the task already ended (cancelled).
    pub(crate) fn finish(&self, id: &str, payload: TaskPayload) {
        if let Some(entry) = self.live().get_mut(id)
            && !entry.task.status.is_terminal()
        {
            entry.waiting = None;
            entry.set(payload);
        }
    }

    /// `tasks/get`: the task as it is now, and whether its `tasks/get` must be garbage.
    pub(crate) fn get(&self, id: &str) -> Result<(DetailedTask, bool), McpError> {
        let entries = self.live();
        let entry = entries.get(id).ok_or_else(|| unknown(id))?;
        let task = DetailedTask::new(entry.task.clone(), entry.payload.clone());
        Ok((task, entry.garbage_get))
    }

    /// `tasks/update`: delivers the answer to the task's outstanding input request; the
    /// task is `working` again at once.
    pub(crate) fn update(&self, id: &str, responses: &InputResponses) -> Result<(), McpError> {
        let mut entries = self.live();
        let entry = entries.get_mut(id).ok_or_else(|| unknown(id))?;
        if entry.task.status != TaskStatus::InputRequired {
            return Err(McpError::invalid_params(
                format!(
                    "fake server: task {id:?} is {}, not waiting for input",
                    status_name(entry.task.status)
                ),
                None,
            ));
        }
        if let Some(key) = responses.keys().find(|key| *key != INPUT_KEY) {
            return Err(McpError::invalid_params(
                format!(
                    "fake server: inputResponses key {key:?} is not an outstanding input \
                     request of task {id:?} (its one key is {INPUT_KEY:?})"
                ),
                None,
            ));
        }
        let answer = responses.get(INPUT_KEY).ok_or_else(|| {
            McpError::invalid_params(
                format!("fake server: inputResponses for task {id:?} has no {INPUT_KEY:?}"),
                None,
            )
        })?;
        if let Some(waiting) = entry.waiting.take() {
            // The work may just have been stopped; the task then stays as it is.
            let _ = waiting.send(answer.clone());
        }
        entry.set(TaskPayload::Working);
        Ok(())
    }

    /// `tasks/cancel`: a task not over yet becomes `cancelled` and its work stops; one
    /// that is over stays as it is.
    pub(crate) fn cancel(&self, id: &str) -> Result<(), McpError> {
        let mut entries = self.live();
        let entry = entries.get_mut(id).ok_or_else(|| unknown(id))?;
        if !entry.task.status.is_terminal() {
            entry.cancel.cancel();
            entry.waiting = None;
            entry.set(TaskPayload::Cancelled);
        }
        Ok(())
    }

    /// The status of every task not forgotten, by id.
    pub(crate) fn statuses(&self) -> BTreeMap<String, String> {
        self.live()
            .iter()
            .map(|(id, entry)| (id.clone(), status_name(entry.task.status)))
            .collect()
    }
}

fn unknown(id: &str) -> McpError {
    McpError::invalid_params(
        format!("fake server has no task {id:?} (never created, or forgotten after its ttlMs)"),
        None,
    )
}

/// The wire name of `status` (`"working"`, `"input_required"`, …).
fn status_name(status: TaskStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The current UTC time as ISO 8601 with milliseconds: `2026-07-28T09:05:01.042Z`.
fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc_with_milliseconds() {
        let stamp = now();
        assert_eq!(stamp.len(), "2026-07-28T09:05:01.042Z".len(), "{stamp}");
        assert!(
            stamp.ends_with('Z') && stamp.as_bytes()[19] == b'.',
            "{stamp}"
        );
        assert!(
            chrono::DateTime::parse_from_rfc3339(&stamp).is_ok(),
            "{stamp}"
        );
    }

    fn new_task(ttl_ms: Option<u64>) -> NewTask {
        NewTask {
            ttl_ms,
            poll_interval_ms: None,
            garbage_get: false,
            status_message: "step 1 of 1".into(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_is_forgotten_after_its_ttl() {
        let table = TaskTable::default();
        let (task, work) = table.create(new_task(Some(100)));
        tokio::time::advance(Duration::from_millis(99)).await;
        assert!(table.get(&task.task_id).is_ok());
        tokio::time::advance(Duration::from_millis(1)).await;
        let err = table.get(&task.task_id).unwrap_err();
        assert!(err.message.contains("\"task-1\""), "{err:?}");
        assert!(work.is_cancelled());
        assert!(table.statuses().is_empty());
    }

    #[test]
    fn an_answer_goes_to_the_waiting_work_and_the_task_works_again() {
        let table = TaskTable::default();
        let (task, _) = table.create(new_task(None));
        let id = task.task_id;
        let mut answer = table.ask(&id, InputRequests::new()).unwrap();
        let wrong = InputResponses::from([("other".to_owned(), Value::Null)]);
        assert!(table.update(&id, &wrong).is_err());
        assert!(table.update(&id, &InputResponses::new()).is_err());
        let right = InputResponses::from([(INPUT_KEY.to_owned(), serde_json::json!(1))]);
        table.update(&id, &right).unwrap();
        assert_eq!(answer.try_recv().unwrap(), serde_json::json!(1));
        assert_eq!(table.statuses()[&id], "working");
        // Nothing is outstanding any more.
        assert!(table.update(&id, &right).is_err());
    }

    #[test]
    fn cancelling_leaves_a_finished_task_as_it_is() {
        let table = TaskTable::default();
        let (done, _) = table.create(new_task(None));
        table.finish(&done.task_id, TaskPayload::Cancelled);
        let (running, work) = table.create(new_task(None));
        table.finish(
            &done.task_id,
            TaskPayload::Failed {
                error: serde_json::Map::new(),
            },
        );
        table.cancel(&running.task_id).unwrap();
        assert!(work.is_cancelled());
        table.finish(&running.task_id, TaskPayload::Working);
        let statuses = table.statuses();
        assert_eq!(statuses["task-1"], "cancelled");
        assert_eq!(statuses["task-2"], "cancelled");
        assert!(table.cancel("task-3").is_err());
    }
}
