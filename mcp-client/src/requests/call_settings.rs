//! What one tool call is made with ([`CallSettings`]): its timeout (or none given), its
//! progress and task-state callbacks, its `_meta`, who answers the server's requests tied
//! to it, what aborts it, and whether its payloads are recorded. The one home of every
//! per-call setting: a connection set's per-call options hold these settings rather than
//! copying them, so a setting added here reaches the set's callers as it is.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::host::server_requests::ServerRequests;
use crate::state::ProgressCallback;
use crate::tasks::phase::TaskStateCallback;

/// How one tool call runs: its timeout, progress, `_meta`, who answers the server's
/// requests tied to it, and what aborts it.
#[derive(Clone)]
#[non_exhaustive]
pub struct CallSettings {
    timeout: Option<Duration>,
    deadline: Option<Instant>,
    pub(super) progress: Option<ProgressCallback>,
    pub(super) reset_timeout_on_progress: bool,
    pub(super) meta: Option<Map<String, Value>>,
    requests: Option<Arc<dyn ServerRequests>>,
    abort: Option<CancellationToken>,
    task_state: Option<TaskStateCallback>,
    pub(super) hand_back_input: bool,
    pub(super) resume: Option<(Option<rmcp::model::InputResponses>, Option<String>)>,
    pub(super) record_payloads: bool,
}

impl Default for CallSettings {
    /// No timeout given (the call takes [`mcp_catalog::DEFAULT_TOOL_TIMEOUT`] unless one
    /// is set with [`CallSettings::with_timeout`]), nothing else.
    fn default() -> Self {
        Self {
            timeout: None,
            deadline: None,
            progress: None,
            reset_timeout_on_progress: false,
            meta: None,
            requests: None,
            abort: None,
            task_state: None,
            hand_back_input: false,
            record_payloads: false,
            resume: None,
        }
    }
}

impl std::fmt::Debug for CallSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallSettings")
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("progress", &self.progress.is_some())
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("meta", &self.meta)
            .field("requests", &self.requests.is_some())
            .field("abort", &self.abort.is_some())
            .field("task_state", &self.task_state.is_some())
            .field("hand_back_input", &self.hand_back_input)
            .field("resume", &self.resume.is_some())
            .field("record_payloads", &self.record_payloads)
            .finish()
    }
}

impl CallSettings {
    /// A call that may take `timeout` (paused while an elicitation of the server is
    /// pending).
    pub fn new(timeout: Duration) -> Self {
        Self::default().with_timeout(timeout)
    }

    /// How long the call may take (paused while an elicitation of the server is pending).
    /// Without it the call takes [`mcp_catalog::DEFAULT_TOOL_TIMEOUT`]; a caller that has a
    /// bound of its own (a connection set's per-server `tool_timeout_sec`) reads
    /// [`Self::timeout`] to tell "none given" from a given one.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Records the call's arguments and result on its span (`tools/call`), as the
    /// OpenTelemetry conventions' opt-in `gen_ai.tool.call.arguments` and
    /// `gen_ai.tool.call.result`: JSON text with strings redacted as in logs
    /// ([`mcp_key::redact_secrets`]), the value of every member whose name marks a secret
    /// ([`mcp_key::is_secret_name`]: `password`, `token`, `apiKey`, `pwd`, `auth`, …) and
    /// of every header written as a name/value pair replaced by `***`, cut at [`MAX_RECORDED_PAYLOAD`](crate::MAX_RECORDED_PAYLOAD)
    /// bytes. Off by default: a call's arguments and results are the user's data.
    #[must_use]
    pub fn with_recorded_payloads(mut self, on: bool) -> Self {
        self.record_payloads = on;
        self
    }

    /// A 2026-era server's `input_required` reply ends the call with
    /// [`RequestError::InputRequired`](crate::RequestError::InputRequired) instead of being answered here: for a caller that
    /// passes the questions on to someone who answers later, perhaps elsewhere.
    #[must_use]
    pub fn with_input_handed_back(mut self, on: bool) -> Self {
        self.hand_back_input = on;
        self
    }

    /// The call resumes an earlier one that was handed back
    /// ([`Self::with_input_handed_back`]): its first request carries the answers
    /// (`inputResponses`) and the server's `requestState`, unmodified.
    #[must_use]
    pub fn with_resume(
        mut self,
        responses: Option<rmcp::model::InputResponses>,
        request_state: Option<String>,
    ) -> Self {
        self.resume = Some((responses, request_state));
        self
    }

    /// The first deadline, when part of the timeout was already spent (waiting for the
    /// connection); later deadlines (after progress, see
    /// [`Self::with_reset_timeout_on_progress`]) are the full timeout again.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Receives the server's progress notifications for this call, in increasing order of
    /// progress.
    #[must_use]
    pub fn with_progress(mut self, callback: Option<ProgressCallback>) -> Self {
        self.progress = callback;
        self
    }

    /// Each progress notification restarts the timeout.
    #[must_use]
    pub fn with_reset_timeout_on_progress(mut self, on: bool) -> Self {
        self.reset_timeout_on_progress = on;
        self
    }

    /// The request's `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Option<Map<String, Value>>) -> Self {
        self.meta = meta;
        self
    }

    /// Adds one entry to the request's `_meta`, keeping the others (given before, one by
    /// one or whole with [`Self::with_meta`]): a tenant, session or trace id a server reads,
    /// without building the map. An entry with the same key replaces the earlier one; a
    /// later [`Self::with_meta`] replaces them all.
    #[must_use]
    pub fn with_meta_entry(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }

    /// Who answers what a 2026-era server asks in this call's own `input_required`
    /// replies (default: the connection's [`ServerRequests`]).
    #[must_use]
    pub fn with_requests(mut self, requests: Option<Arc<dyn ServerRequests>>) -> Self {
        self.requests = requests;
        self
    }

    /// Receives each new state of the task the server makes of this call, if it makes one
    /// (its phase and status message: a long task's way of saying how far it is).
    #[must_use]
    pub fn with_task_state(mut self, callback: Option<TaskStateCallback>) -> Self {
        self.task_state = callback;
        self
    }

    /// Ends the call with [`RequestError::Aborted`](crate::RequestError::Aborted) when `abort` is cancelled (the server
    /// is told the call is cancelled).
    #[must_use]
    pub fn with_abort(mut self, abort: CancellationToken) -> Self {
        self.abort = Some(abort);
        self
    }
}

impl CallSettings {
    /// The timeout given ([`Self::new`], [`Self::with_timeout`]), `None` when none was.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The request's `_meta`, as given ([`Self::with_meta`]).
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.meta.as_ref()
    }

    /// The timeout the call runs with: the one given, else
    /// [`mcp_catalog::DEFAULT_TOOL_TIMEOUT`].
    pub(crate) fn effective_timeout(&self) -> Duration {
        self.timeout.unwrap_or(mcp_catalog::DEFAULT_TOOL_TIMEOUT)
    }

    /// The first deadline: the one given, else the timeout from now.
    pub(crate) fn first_deadline(&self) -> Instant {
        self.deadline
            .unwrap_or_else(|| mcp_pool::deadline_in(self.effective_timeout()))
    }

    /// The abort token (a fresh one, never cancelled, when none was given).
    pub(crate) fn abort_token(&self) -> CancellationToken {
        self.abort.clone().unwrap_or_default()
    }

    /// Who answers the server's requests of this call, when not the connection's.
    pub(crate) fn requests(&self) -> Option<&Arc<dyn ServerRequests>> {
        self.requests.as_ref()
    }

    /// Where the states of the call's task go.
    pub(crate) fn task_state(&self) -> Option<&TaskStateCallback> {
        self.task_state.as_ref()
    }
}
