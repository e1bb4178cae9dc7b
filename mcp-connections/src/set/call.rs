//! Tool calls: validation, timeouts (paused while an elicitation is pending), progress,
//! cancellation.

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{Era, FailureReason, RequestError, StartupFailure};
use mcp_key::McpServerKey;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::policy::hooks::ToolCall;
use crate::set::ConnectionSet;
use crate::set::slot::{Attached, Slot, SlotState};
use crate::set::startup;
use crate::status::ServerState;
use mcp_pool::deadline_in;

/// A call prepared to be sent: its connection, arguments, settings and turn.
struct PreparedCall {
    live: Arc<Attached>,
    arguments: Option<Map<String, Value>>,
    settings: mcp_client::CallSettings,
    /// Held while the call runs (2025 era: the server's requests reach this set).
    _turn: Option<mcp_pool::OperationGuard<crate::set::live::SessionRoute>>,
    /// Held while the call runs (2026 era: its log messages reach this set).
    _mark: Option<crate::set::live::CallMark>,
}

/// A task a server runs for a call of this set ([`ConnectionSet::start_tool_task`]): the
/// server, the tool and the task's handle (its id and state).
#[derive(Debug, Clone)]
pub struct SetTask {
    server: McpServerKey,
    tool: String,
    handle: mcp_client::TaskHandle,
}

impl SetTask {
    /// A task of `server`'s `tool` known by its id only (kept by a host across its own
    /// restart): its state is unknown until polled.
    pub fn resume(server: McpServerKey, tool: impl Into<String>, id: impl Into<String>) -> Self {
        Self {
            server,
            tool: tool.into(),
            handle: mcp_client::TaskHandle::resume(id),
        }
    }

    /// The server running the task.
    pub fn server(&self) -> &McpServerKey {
        &self.server
    }

    /// The tool whose call it runs.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The server's id of the task.
    pub fn id(&self) -> &str {
        self.handle.id()
    }

    /// The task's handle: its state now and a stream of its states.
    pub fn handle(&self) -> &mcp_client::TaskHandle {
        &self.handle
    }
}

/// What [`ConnectionSet::start_tool_task`] got back.
#[derive(Debug)]
#[non_exhaustive]
pub enum StartedCall {
    /// The server runs the call as a task.
    Task(SetTask),
    /// The server answered at once.
    Done(CallToolResult),
}

/// Options of one tool call through the set: the client's settings of the call
/// ([`mcp_client::CallSettings`], held as they are: every per-call setting of `mcp-client`
/// is one here, through [`Self::with_call`]) and what only the set knows
/// ([`Self::with_fail_fast`], [`Self::with_catalog_revision`]).
///
/// ```
/// use std::time::Duration;
/// use mcp_connections::CallOptions;
///
/// let options = CallOptions::new()
///     .with_call(|call| call.with_timeout(Duration::from_secs(5)).with_recorded_payloads(true))
///     .with_fail_fast(true);
/// assert_eq!(options.call().timeout(), Some(Duration::from_secs(5)));
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CallOptions {
    pub(crate) call: mcp_client::CallSettings,
    pub(crate) fail_fast: bool,
    pub(crate) catalog_revision: Option<u64>,
}

impl From<mcp_client::CallSettings> for CallOptions {
    fn from(call: mcp_client::CallSettings) -> Self {
        Self::new().with_call(|_| call)
    }
}

impl CallOptions {
    /// No per-call timeout (the server's `tool_timeout_sec` applies), no progress callback.
    pub fn new() -> Self {
        Self::default()
    }

    /// The call's settings, changed by `change` (`|call| call.with_…()`): its timeout, progress,
    /// task states, `_meta`, payload recording, input handed back or resumed (see
    /// [`mcp_client::CallSettings`]). The set applies them with three rules of its own:
    /// - the effective timeout is the smaller of the one given here and the server's
    ///   `tool_timeout_sec` (none given: the server's), and it also bounds the wait for a
    ///   server that is not ready yet;
    /// - `_meta` keys under the host's reserved prefix are removed, and the host's own
    ///   metadata added for servers that advertise the prefix;
    /// - who answers the server's requests and what aborts the call are the set's (its
    ///   elicitation and sampling handlers, its shutdown): a deadline, requests or abort
    ///   given here are replaced.
    ///
    /// A call the server runs as a task keeps its progress while the task runs. A handed
    /// back call ends with [`Error::InputRequired`].
    #[must_use]
    pub fn with_call(
        mut self,
        change: impl FnOnce(mcp_client::CallSettings) -> mcp_client::CallSettings,
    ) -> Self {
        self.call = change(self.call);
        self
    }

    /// The call's settings as given ([`Self::with_call`]).
    pub fn call(&self) -> &mcp_client::CallSettings {
        &self.call
    }

    /// The call's effective timeout: the smaller of its own and the server's
    /// `tool_timeout` (the server's when the call gives none).
    pub(crate) fn timeout_within(&self, tool_timeout: Duration) -> Duration {
        self.call
            .timeout()
            .map_or(tool_timeout, |t| t.min(tool_timeout))
    }

    /// Fail at once with [`Error::NotReady`] when the server is not ready (starting,
    /// deferred, or crashed and due for a restart) instead of waiting for it or starting
    /// it within the call's timeout. Default `false`.
    #[must_use]
    pub fn with_fail_fast(mut self, on: bool) -> Self {
        self.fail_fast = on;
        self
    }

    /// The catalog revision the caller took the qualified name from
    /// ([`ToolInfo::catalog_revision`](crate::ToolInfo::catalog_revision)). With it,
    /// [`ConnectionSet::call_qualified`] refuses with [`Error::StaleToolName`] a name that
    /// no longer names the same tool (server and raw name) in the current catalog, or
    /// that it cannot prove still does (a revision too old to remember), so a stale name
    /// never reaches a different tool.
    #[must_use]
    pub fn with_catalog_revision(mut self, revision: u64) -> Self {
        self.catalog_revision = Some(revision);
        self
    }
}

impl ConnectionSet {
    /// Calls `tool` (its raw name) on `server`.
    ///
    /// `arguments` must be a JSON object (or `None`). The effective timeout is the smaller
    /// of the server's `tool_timeout_sec` and the call's own; it is paused while an
    /// elicitation of the server is pending. On timeout, and when this future is dropped
    /// before the result arrives, `notifications/cancelled` is sent to the server. The
    /// result (content, `structuredContent`, `isError`, `_meta`) is returned unchanged.
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request on the server.
    pub async fn call_tool(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<Value>,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let call = self.prepare_call(server, tool, arguments, options).await?;
        call.live
            .call_tool(tool, call.arguments, call.settings)
            .await
            .map_err(|e| self.call_error(server, tool, e))
    }

    /// Calls `tool` on `server` as [`Self::call_tool`] does (the same checks, hooks and
    /// timeout; like it, no approval is asked: a host that must ask asks first, as
    /// [`Self::call_approved`] does) and, where the server makes a task of the call,
    /// returns the task at once for the host to keep: its state, its result later
    /// ([`Self::task_result`]), its cancellation ([`Self::cancel_task`]). A server that
    /// answers at once gives [`StartedCall::Done`].
    ///
    /// # Errors
    /// As [`Self::call_tool`] for the call itself.
    pub async fn start_tool_task(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<Value>,
        options: CallOptions,
    ) -> Result<StartedCall> {
        let call = self.prepare_call(server, tool, arguments, options).await?;
        let started = call
            .live
            .start_tool_task(tool, call.arguments, call.settings)
            .await
            .map_err(|e| self.call_error(server, tool, e))?;
        Ok(match started {
            mcp_client::Started::Task(handle) => StartedCall::Task(SetTask {
                server: server.clone(),
                tool: tool.to_owned(),
                handle,
            }),
            mcp_client::Started::Done(result) => StartedCall::Done(result),
            _ => {
                return Err(Error::Protocol {
                    server: server.clone(),
                    operation: format!("tools/call {tool}"),
                    source: "the call started in a way this set does not know".into(),
                });
            }
        })
    }

    /// Waits for the result of `task` (from [`Self::start_tool_task`]), polling it on
    /// the server's current connection (a new one, when the old one was lost: the task
    /// goes on where the server keeps it), answering what it asks through this set,
    /// within `options`' timeout. The task is not cancelled when this fails or is
    /// dropped.
    ///
    /// # Errors
    /// As [`Self::call_tool`]; [`Error::TaskLost`] for a task that ended without a
    /// result (cancelled, expired, forgotten by the server).
    pub async fn task_result(
        &self,
        task: &SetTask,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let call = self
            .connection_for(&task.server, &task.tool, options)
            .await?;
        task.handle
            .result(&call.live, call.settings)
            .await
            .map_err(|e| self.call_error(&task.server, &task.tool, e))
    }

    /// Cancels `task` on its server (`tasks/cancel`).
    ///
    /// # Errors
    /// The server's error (an unknown task), a server that is not ready.
    pub async fn cancel_task(&self, task: &SetTask) -> Result<()> {
        let call = self
            .connection_for(&task.server, &task.tool, CallOptions::new())
            .await?;
        task.handle
            .cancel(&call.live)
            .await
            .map_err(|e| self.call_error(&task.server, &task.tool, e))
    }

    /// The server's ready connection and the settings of a call of `tool` (no hooks, no
    /// approvals: the call they guard was made already).
    async fn connection_for(
        &self,
        server: &McpServerKey,
        tool: &str,
        options: CallOptions,
    ) -> Result<PreparedCall> {
        self.prepare(server, tool, None, options, false).await
    }

    /// Everything a call of `tool` needs before it is sent: the checks, hooks and
    /// approvals, the ready connection, the turn on it, the call's settings.
    async fn prepare_call(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<Value>,
        options: CallOptions,
    ) -> Result<PreparedCall> {
        self.prepare(server, tool, arguments, options, true).await
    }

    async fn prepare(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<Value>,
        options: CallOptions,
        new_call: bool,
    ) -> Result<PreparedCall> {
        let slot = Arc::clone(self.inner.slot(server)?);
        if !slot.spec.config.tool_filter().allows(tool) {
            return Err(Error::ToolFiltered {
                server: server.clone(),
                tool: tool.to_owned(),
            });
        }
        let arguments = if new_call {
            self.run_hooks(server, tool, arguments).await?
        } else {
            arguments
        };
        let arguments = match arguments {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map),
            Some(other) => {
                return Err(Error::InvalidArguments {
                    server: server.clone(),
                    tool: tool.to_owned(),
                    got: mcp_catalog::json_type_name(&other),
                });
            }
        };
        let timeout = options.timeout_within(slot.spec.config.tool_timeout());
        let deadline = deadline_in(timeout);
        let live = self
            .ready_connection(&slot, deadline, options.fail_fast)
            .await?;
        if new_call && self.inner.options.tool_pins.is_some() {
            // The catalog's build checks the pins (now that the server is ready, with its
            // live listing): bring it up to date, then refuse a tool held back.
            let _ = self.catalog();
            if let Some(changes) = self.held_changes(server, tool) {
                return Err(Error::ToolChanged {
                    server: server.clone(),
                    tool: tool.to_owned(),
                    changes,
                });
            }
        }
        // Calls of different sets sharing a 2025-era connection take turns, so a request
        // from the server reaches the set whose call caused it. A 2026-era server asks
        // through the call's own reply (`input_required`): that reaches this set without
        // a turn, and no other set's call waits behind this one.
        let modern = live.era() == Era::V2026_07_28;
        let caller = modern
            .then(|| live.session.handler())
            .flatten()
            .map(|route| Arc::new(route) as Arc<dyn mcp_client::ServerRequests>);
        let _mark = modern.then(|| live.mark_call()).flatten();
        let _turn = if modern {
            None
        } else {
            let Ok(turn) = tokio::time::timeout_at(deadline, live.turn()).await else {
                return Err(Error::Timeout {
                    server: server.clone(),
                    tool: tool.to_owned(),
                    after: timeout,
                });
            };
            turn
        };

        let meta = self.call_meta(&slot, &live, options.call.meta().cloned());
        let settings = options
            .call
            .with_timeout(timeout)
            .with_deadline(deadline)
            .with_meta(meta)
            .with_requests(caller)
            .with_abort(self.inner.abort_calls.clone());
        Ok(PreparedCall {
            live,
            arguments,
            settings,
            _turn,
            _mark,
        })
    }

    /// The set's error for a call of `tool` on `server` that failed with `e`.
    fn call_error(&self, server: &McpServerKey, tool: &str, e: RequestError) -> Error {
        match e {
            RequestError::Timeout { after } if !self.inner.abort_calls.is_cancelled() => {
                Error::Timeout {
                    server: server.clone(),
                    tool: tool.to_owned(),
                    after,
                }
            }
            other => self.request_error(server, &format!("tools/call {tool}"), other),
        }
    }

    /// Calls a tool by its qualified (model-visible) name from [`Self::tools`].
    ///
    /// The tools of a server that crashed stay in the catalog (its last listing, marked
    /// not ready): calling one restarts the server (with backoff, as [`Self::call_tool`]
    /// does) within the call's timeout. A name that is not in the current catalog but lies
    /// in the namespace of a configured server that is not ready (`mcp__<server>__…`) waits
    /// for a start in progress or starts a deferred server, then looks the name up again;
    /// a name no listing of a failed server has starts nothing. If the server is not ready
    /// the error is [`Error::NotReady`] with its failure reason, not
    /// [`Error::UnknownTool`].
    ///
    /// # Cancel safety
    /// As [`Self::call_tool`].
    pub async fn call_qualified(
        &self,
        qualified_name: &str,
        arguments: Option<Value>,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let (server, tool) = self.resolve_for_call(qualified_name, &options).await?;
        self.call_tool(&server, &tool, arguments, options).await
    }

    /// Calls a tool by its qualified name as [`Self::call_qualified`] does, enforcing its
    /// approval in the same call: the name is resolved once (its server brought up first:
    /// started, or restarted after a crash), and when the tool's approval mode asks
    /// ([`Self::approval`]) the host's approver
    /// ([`ConnectionSetOptions::with_approver`](crate::ConnectionSetOptions::with_approver))
    /// is asked about the definition the server lists; the call is sent only if the server
    /// still lists exactly that definition (its [`tool_fingerprint`](crate::tool_fingerprint))
    /// when it goes out. A definition that changed in between is looked at (and asked
    /// about) again, at most three times, then refused.
    ///
    /// A tool held back by tool pins ([`Self::tool_drift`]) whose server's `tool_drift`
    /// policy is `reapprove` is asked about with its changes
    /// ([`ApprovalRequest::drift`](crate::ApprovalRequest::drift)); a yes accepts exactly
    /// the definition shown ([`Self::accept_tool_change_seen`]) and approves the call.
    /// Under `block` it is refused with [`Error::ToolChanged`] without asking.
    /// [`ApprovalAnswer::ApproveForSession`](crate::ApprovalAnswer::ApproveForSession)
    /// remembers the approval of that definition ([`Self::remember_approval`]).
    ///
    /// # Errors
    /// [`Error::NotApproved`] when the approver declined, the mode asks and there is no
    /// approver, or the definition kept changing; nothing was sent. Otherwise as
    /// [`Self::call_qualified`]; [`Error::UnknownTool`] when the ready server no longer
    /// lists the tool.
    ///
    /// # Cancel safety
    /// Dropping the future while the approver is asked drops its question and calls
    /// nothing; after that, as [`Self::call_tool`].
    pub async fn call_approved(
        &self,
        qualified_name: &str,
        arguments: Option<Value>,
        options: CallOptions,
    ) -> Result<CallToolResult> {
        let (server, tool) = self.resolve_for_call(qualified_name, &options).await?;
        self.call_tool_approved(&server, &tool, arguments, options)
            .await
    }

    /// Sends the call of `tool` as [`Self::call_tool`] does only if `server` lists it as
    /// `approved` (its fingerprint) once the call is ready to go; `Ok(None)`, sending
    /// nothing, when it lists another definition or none.
    pub(crate) async fn call_if_listed_as(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<Value>,
        options: CallOptions,
        approved: &mcp_key::Fingerprint,
    ) -> Result<Option<CallToolResult>> {
        let call = self.prepare_call(server, tool, arguments, options).await?;
        let listed = call
            .live
            .tools()
            .iter()
            .find(|t| t.name == tool)
            .map(crate::policy::drift::tool_fingerprint);
        if listed.as_ref() != Some(approved) {
            return Ok(None);
        }
        call.live
            .call_tool(tool, call.arguments, call.settings)
            .await
            .map(Some)
            .map_err(|e| self.call_error(server, tool, e))
    }

    /// What [`Self::call_qualified`] with [`CallOptions::with_fail_fast`] would call, without
    /// calling it: the tool (server and raw name) when the name resolves now, else the
    /// error such a call ends with ([`Error::UnknownTool`], or [`Error::NotReady`] saying
    /// why), without waiting for a server. For a host that decided about a name while it resolved to
    /// nothing and must not call a tool its decision never saw (a server that came up in
    /// between): it reports why the name is not callable, or learns that it now is.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only looks.
    pub async fn resolve_qualified_now(
        &self,
        qualified_name: &str,
    ) -> Result<(McpServerKey, String)> {
        let found = self
            .resolve_for_call(qualified_name, &CallOptions::new().with_fail_fast(true))
            .await?;
        // A crashed server's tools stay listed: the fail-fast call would end here.
        let slot = self.inner.slot(&found.0)?;
        match slot.current() {
            SlotState::Ready(_) => Ok(found),
            state => Err(not_ready_now(&found.0, &state)),
        }
    }

    /// The tool `qualified_name` names for a call with `options` (see
    /// [`Self::call_qualified`]): the server whose namespace it lies in is waited for or
    /// restarted first, unless `options` fail fast.
    pub(crate) async fn resolve_for_call(
        &self,
        qualified_name: &str,
        options: &CallOptions,
    ) -> Result<(McpServerKey, String)> {
        let unknown = || Error::UnknownTool {
            name: qualified_name.to_owned(),
        };
        // With the caller's revision: the tool the name meant then; every later lookup
        // must find that same tool.
        let meant = match options.catalog_revision {
            Some(revision) => Some(self.meant_at(qualified_name, revision)?),
            None => None,
        };
        let check = |found: (McpServerKey, String)| match &meant {
            Some(meant) if *meant != found => {
                Err(self.stale(qualified_name, options.catalog_revision))
            }
            _ => Ok(found),
        };
        if let Some(found) = self.resolve_tool(qualified_name) {
            return check(found);
        }
        let Some(slot) = self.namespace_owner(qualified_name) else {
            // Its server may have become ready between the two looks.
            if let Some(found) = self.resolve_tool(qualified_name) {
                return check(found);
            }
            return Err(match meant {
                Some(_) => self.stale(qualified_name, options.catalog_revision),
                None => unknown(),
            });
        };
        let timeout = options.timeout_within(slot.spec.config.tool_timeout());
        // A failed server's known tools are in the catalog: a name that is not is made
        // up, and starts nothing.
        let fail_fast = options.fail_fast || matches!(slot.current(), SlotState::Failed(_));
        self.ready_connection(&slot, deadline_in(timeout), fail_fast)
            .await?;
        let found = self
            .resolve_tool(qualified_name)
            .ok_or_else(|| match meant {
                Some(_) => self.stale(qualified_name, options.catalog_revision),
                None => unknown(),
            })?;
        check(found)
    }

    /// [`Self::resolve_tool`], after bringing up the server whose namespace the name lies
    /// in (`mcp__<server>__…`) when the name is not in the current catalog: a start in
    /// progress is waited for, a deferred server started, as [`Self::call_qualified`]
    /// does, within that server's tool timeout (a crashed server's known tools are in the
    /// catalog already; a made-up name in its namespace starts nothing). Other servers are
    /// not waited for. For a host that must know which tool a name means before calling
    /// it (to ask for approval first): [`Self::resolve_tool`] alone says "unknown" for a
    /// tool whose server is attaching or restarting. `None` when no server has the tool,
    /// or its server did not come up.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting (a restart it began goes on).
    pub async fn resolve_tool_settled(&self, qualified: &str) -> Option<(McpServerKey, String)> {
        if let Some(found) = self.resolve_tool(qualified) {
            return Some(found);
        }
        let Some(slot) = self.namespace_owner(qualified) else {
            // Its server may have become ready between the two looks.
            return self.resolve_tool(qualified);
        };
        let deadline = deadline_in(slot.spec.config.tool_timeout());
        let fail_fast = matches!(slot.current(), SlotState::Failed(_));
        let _ = self.ready_connection(&slot, deadline, fail_fast).await;
        self.resolve_tool(qualified)
    }

    /// The tool `qualified` named at catalog `revision`; an error naming the current
    /// revision when it named none or the revision is no longer remembered.
    fn meant_at(&self, qualified: &str, revision: u64) -> Result<(McpServerKey, String)> {
        let current = self.catalog();
        let table = if revision == current.revision {
            Some(Arc::clone(&current.names))
        } else {
            self.inner.names_at(revision)
        };
        table
            .and_then(|t| t.resolve(qualified).map(|(k, t)| (k.clone(), t.to_owned())))
            .ok_or_else(|| self.stale(qualified, Some(revision)))
    }

    fn stale(&self, qualified: &str, revision: Option<u64>) -> Error {
        let current_revision = self.revision();
        Error::StaleToolName {
            name: qualified.to_owned(),
            revision: revision.unwrap_or(current_revision),
            current_revision,
        }
    }

    /// The configured server that is not ready (starting, deferred, failed) and in whose
    /// tool namespace `qualified` lies (`mcp__<server>__…`; the longest such namespace,
    /// none if two servers share it): the server a call of that name would wait for or
    /// start, although the catalog does not list the name. `None` when no such server
    /// owns the name (a ready server's tools resolve through the catalog).
    pub fn not_ready_owner(&self, qualified: &str) -> Option<McpServerKey> {
        self.namespace_owner(qualified)
            .map(|slot| slot.spec.key.clone())
    }

    /// The configured server that is not ready and in whose tool namespace `qualified`
    /// lies (the longest such namespace; none if two servers share it).
    fn namespace_owner(&self, qualified: &str) -> Option<Arc<Slot>> {
        let namer = mcp_key::ToolNamer::new(self.inner.naming.clone());
        let mut best: Option<(usize, &Arc<Slot>)> = None;
        let mut tied = false;
        for (key, slot) in &self.inner.slots {
            if matches!(slot.current(), SlotState::Ready(_)) {
                continue;
            }
            let namespace = namer.namespace(key);
            if qualified.len() <= namespace.len() || !qualified.starts_with(&namespace) {
                continue;
            }
            match best {
                Some((len, _)) if len > namespace.len() => {}
                Some((len, _)) if len == namespace.len() => tied = true,
                _ => {
                    best = Some((namespace.len(), slot));
                    tied = false;
                }
            }
        }
        best.filter(|_| !tied).map(|(_, slot)| Arc::clone(slot))
    }

    /// Runs the pre-call hooks; they may rewrite the arguments or deny the call, never move
    /// it. Without hooks the arguments pass as they are (no copy of the call is made).
    async fn run_hooks(
        &self,
        server: &McpServerKey,
        tool: &str,
        arguments: Option<Value>,
    ) -> Result<Option<Value>> {
        if self.inner.options.hooks.is_empty() {
            return Ok(arguments);
        }
        let mut call = ToolCall {
            server: server.clone(),
            tool: tool.to_owned(),
            arguments,
        };
        for hook in &self.inner.options.hooks {
            call = hook
                .before_call(call)
                .await
                .map_err(|d| Error::CallDenied {
                    server: server.clone(),
                    tool: tool.to_owned(),
                    reason: d.reason().to_owned(),
                })?;
            if &call.server != server || call.tool != tool {
                return Err(Error::HookRedirected {
                    server: server.clone(),
                    tool: tool.to_owned(),
                    attempted: format!("{}/{}", call.server, call.tool),
                });
            }
        }
        Ok(call.arguments)
    }

    /// The call's `_meta`: the caller's without host-owned keys (the reserved prefix),
    /// plus the host metadata provider's keys when the server advertised the prefix.
    fn call_meta(
        &self,
        slot: &Slot,
        live: &Attached,
        meta: Option<Map<String, Value>>,
    ) -> Option<Map<String, Value>> {
        let mut meta = meta.unwrap_or_default();
        let options = &self.inner.options;
        if let Some(prefix) = &options.reserved_meta_prefix {
            meta.retain(|k, _| !k.starts_with(prefix.as_str()));
            let advertised = live.server_info().is_some_and(|info| {
                crate::policy::host_meta::advertises(&info.capabilities, prefix)
            });
            if let (Some(provider), true) = (&options.host_metadata, advertised) {
                let environment = self.inner.running_environment(&slot.spec.key);
                let context = crate::policy::host_meta::MetadataContext {
                    server: slot.spec.key.clone(),
                    profile: self.inner.authority.load().profile(&environment),
                    environment,
                };
                meta.extend(crate::policy::host_meta::host_keys(
                    provider.as_ref(),
                    prefix,
                    &context,
                ));
            }
        }
        (!meta.is_empty()).then_some(meta)
    }

    /// This set's attachment to the live connection of `slot`, waiting for a start in
    /// progress, starting a deferred server, and restarting a crashed one (unless the pool
    /// holds it back in a crash loop) until `deadline`.
    pub(crate) async fn ready_connection(
        &self,
        slot: &Arc<Slot>,
        deadline: Instant,
        fail_fast: bool,
    ) -> Result<Arc<Attached>> {
        if self.inner.shutdown.is_cancelled() {
            return Err(Error::ShutDown);
        }
        let key = &slot.spec.key;
        loop {
            let state = slot.current();
            if fail_fast
                && let SlotState::Starting | SlotState::Deferred(_) | SlotState::Failed(_) = &state
            {
                return Err(not_ready_now(key, &state));
            }
            match state {
                SlotState::Ready(attached) if attached.is_alive() => return Ok(attached),
                SlotState::Ready(attached) => {
                    startup::on_death(&self.inner, slot, attached.live()).await;
                }
                SlotState::Starting => {
                    if tokio::time::timeout_at(deadline, slot.settled())
                        .await
                        .is_err()
                    {
                        return Err(Error::not_ready(key, ServerState::Starting));
                    }
                }
                SlotState::Deferred(_) => {
                    let guard = slot.transition.lock().await;
                    if matches!(slot.current(), SlotState::Deferred(_)) {
                        tracing::info!(server = %key, "starting deferred MCP server on first use");
                        startup::run_start(&self.inner, slot, false).await;
                    }
                    drop(guard);
                }
                SlotState::Failed(f)
                    if f.reason().is_restartable() && !self.inner.shutdown.is_cancelled() =>
                {
                    if let Some(crash_loop) = self.inner.crash_loop(slot)
                        && !crash_loop.retry_in.is_zero()
                    {
                        return Err(Error::NotReady {
                            server: key.clone(),
                            state: Box::new(ServerState::Failed(f)),
                            crash_loop: Some(crash_loop),
                        });
                    }
                    let guard = slot.transition.lock().await;
                    if matches!(slot.current(), SlotState::Failed(_)) {
                        tracing::info!(server = %key, "restarting MCP server");
                        startup::run_start(&self.inner, slot, false).await;
                    }
                    drop(guard);
                    if let SlotState::Failed(f) = slot.current() {
                        return Err(Error::not_ready(key, ServerState::Failed(f)));
                    }
                }
                state @ (SlotState::Failed(_) | SlotState::Cancelled) => {
                    if self.inner.shutdown.is_cancelled() {
                        return Err(Error::ShutDown);
                    }
                    return Err(Error::not_ready(key, state.to_server_state()));
                }
            }
        }
    }

    /// The set's error for a request on `server`'s connection that failed with `e`: the
    /// set's sentence (the server, the operation), with `e` as its source.
    pub(crate) fn request_error(
        &self,
        server: &McpServerKey,
        operation: &str,
        e: RequestError,
    ) -> Error {
        // Once shutdown() has begun, whatever a request in flight met (its connection
        // closed under it, its reply channel dropped) is the shutdown: a host that retries
        // retryable errors must not retry these.
        if self.inner.abort_calls.is_cancelled() {
            return Error::ShutDown;
        }
        let (server, operation) = (server.clone(), operation.to_owned());
        match e {
            RequestError::Timeout { after } => Error::Timeout {
                server,
                tool: operation,
                after,
            },
            RequestError::AuthRequired => Error::not_ready(
                &server,
                ServerState::Failed(StartupFailure::new(
                    FailureReason::LoginRequired,
                    format!(
                        "MCP server `{server}` rejected the credentials (HTTP 401); log in again"
                    ),
                )),
            ),
            RequestError::Aborted => Error::ShutDown,
            e @ RequestError::Server { code, .. } => Error::Server {
                server,
                operation,
                code,
                source: Box::new(e),
            },
            e @ RequestError::Protocol { .. } => Error::Protocol {
                server,
                operation,
                source: Box::new(e),
            },
            e @ RequestError::Unsupported { .. } => Error::Unsupported {
                server,
                operation,
                source: Box::new(e),
            },
            RequestError::TaskLost { ref task, .. } => Error::TaskLost {
                server,
                operation,
                task: task.clone(),
                source: Box::new(e),
            },
            e @ RequestError::Declined { .. } => Error::Declined {
                server,
                operation,
                source: Box::new(e),
            },
            RequestError::InputRequired { result } => Error::InputRequired {
                server,
                operation,
                result,
            },
            other => Error::Disconnected {
                server,
                operation,
                source: Box::new(other),
            },
        }
    }
}

/// The error of a fail-fast call to a server that is not ready (the host asked not to
/// wait).
fn not_ready_now(key: &McpServerKey, state: &SlotState) -> Error {
    Error::not_ready(key, state.to_server_state())
}
