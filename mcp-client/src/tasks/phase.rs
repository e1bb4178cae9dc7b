//! A task's state as the caller sees it: its phase, the server's message, and the
//! callback that receives each new state. A leaf: the call settings name the callback, the
//! task driver fills it in.

use std::sync::Arc;

use rmcp::model::TaskStatus;

/// Where a task is, as the server last said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TaskPhase {
    /// The server is working on it.
    Working,
    /// The server waits for an answer of the client (the client is answering it).
    InputRequired,
    /// Done; the result is available.
    Completed,
    /// Ended with an error.
    Failed,
    /// Cancelled before it ended.
    Cancelled,
}

impl TaskPhase {
    pub(super) fn of(status: TaskStatus) -> Self {
        match status {
            TaskStatus::InputRequired => Self::InputRequired,
            TaskStatus::Completed => Self::Completed,
            TaskStatus::Failed => Self::Failed,
            TaskStatus::Cancelled => Self::Cancelled,
            _ => Self::Working,
        }
    }

    pub(super) fn parse(status: &str) -> Option<Self> {
        Some(match status {
            "working" => Self::Working,
            "input_required" => Self::InputRequired,
            "completed" => Self::Completed,
            "failed" => Self::Failed,
            "cancelled" => Self::Cancelled,
            _ => return None,
        })
    }

    /// Whether the task has ended (completed, failed or cancelled).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// A task's state as the server last reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskState {
    /// Where the task is.
    pub phase: TaskPhase,
    /// The server's status message, if any.
    pub message: Option<String>,
}

/// Receives each new state of a task a call runs as (see
/// [`CallSettings::with_task_state`](crate::CallSettings::with_task_state)).
pub type TaskStateCallback = Arc<dyn Fn(&TaskState) + Send + Sync>;
