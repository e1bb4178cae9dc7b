//! The bottom of a connection: the state its handler, its transports and the calls running
//! on it share ([`ConnectionShared`]), and the types it carries (progress routes,
//! list-change announcements, the tools that need a task; what the server asks of the
//! host is in [`crate::host`], a leaf below it). It imports nothing above it: the
//! behaviours that use it (requests, listings, listens, tasks, the transports) import it.

#![expect(
    deprecated,
    reason = "rmcp marks logging and sampling deprecated (SEP-2577), yet MCP 2025-11-25 defines them and hosts still meet them"
)]

pub(crate) mod lazy_broadcast;
mod lazy_watch;
mod list_changes;
mod progress;
mod task_support;

use std::sync::{Arc, Mutex};

use mcp_key::McpServerKey;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, FormElicitationCapability,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
    UrlElicitationCapability,
};
use tokio::sync::{Notify, watch};

pub(crate) use lazy_broadcast::LazyBroadcast;
use lazy_watch::LazyWatch;
pub(crate) use list_changes::ListChanges;
use progress::ProgressRoutes;
pub(crate) use progress::ProgressSink;
pub use progress::{Progress, ProgressCallback};

pub(crate) use task_support::TaskSupport;

use crate::host::sampling::SamplingRefusal;
use crate::host::server_log::ServerLogs;
use crate::host::server_requests::{LogRoute, ServerRequests};
use crate::settings::ClientSettings;

/// `resources/updated` notifications kept for sets that are slow to take them.
const RESOURCE_UPDATE_BUFFER: usize = 64;

/// How long after a stdio server's process exited its last replies are still waited
/// for. They were in the pipe before it exited, so rmcp reads them at once; the margin is
/// for a loaded machine. A call still pending then fails as disconnected (the pipe's
/// end-of-file, which fails it otherwise, does not come while a process the server left
/// behind holds its stdout).
pub(crate) const LAST_REPLIES: std::time::Duration = std::time::Duration::from_secs(2);

/// What fails the calls pending on a connection when it changes.
#[derive(Debug, Default)]
pub(crate) struct ReplyFaults {
    /// How many replies could not be read (each fails the calls pending then).
    pub(crate) unreadable: u64,
    /// What was wrong with the last of them.
    pub(crate) last: String,
    /// The stdio server's process exited [`LAST_REPLIES`] ago: no answer can come.
    pub(crate) gone: bool,
}

impl ReplyFaults {
    /// What was wrong with the last unreadable reply, if there were more than `before`.
    pub(crate) fn unreadable_since(&self, before: u64) -> Option<String> {
        (self.unreadable > before).then(|| self.last.clone())
    }
}

/// Reports the process's end to pending calls [`LAST_REPLIES`] after it exited, unless
/// the connection is shut down first.
pub(crate) async fn report_process_end(
    exit: mcp_pool::ExitWatcher,
    shared: Arc<ConnectionShared>,
    cancel: tokio_util::sync::CancellationToken,
) {
    let ended = async {
        exit.wait_exit().await;
        tokio::time::sleep(LAST_REPLIES).await;
    };
    tokio::select! {
        () = cancel.cancelled() => {}
        () = ended => shared.report_process_gone(),
    }
}

/// State shared between one connection's handler and the calls running on it.
pub(crate) struct ConnectionShared {
    pub(crate) key: McpServerKey,
    /// How the connection reaches its server, and its measurements (for the request
    /// spans and metrics).
    pub(crate) instruments: crate::telemetry::Instruments,
    pub(crate) config: ClientConfig,
    /// The roots the connection announced (empty: the capability was not announced).
    pub(crate) roots: Arc<[crate::host::roots::Root]>,
    /// Who answers the server's requests made outside a call's own reply.
    requests: Arc<dyn ServerRequests>,
    progress: Mutex<ProgressRoutes>,
    /// Number of elicitations and sampling requests in flight; calls pause their timeouts
    /// while it is non-zero (the host's user or model is at work).
    pending_answers: LazyWatch<usize>,
    /// Signalled on `notifications/tools/list_changed`.
    pub(crate) tools_changed: Notify,
    /// `notifications/prompts/list_changed` (either era), debounced.
    pub(crate) prompts_changed: Arc<ListChanges>,
    /// `notifications/resources/list_changed` (either era), debounced.
    pub(crate) resources_changed: Arc<ListChanges>,
    /// The server's log messages.
    pub(crate) logs: ServerLogs,
    /// The URI of every `notifications/resources/updated` (either era), for its readers
    /// (the channel is made by the first).
    pub(crate) resource_updates: LazyBroadcast<String>,
    /// The health of the 2026 era's `subscriptions/listen` requests.
    pub(crate) listens: crate::listen::health::ListenBoard,
    /// Counts the sessions the streamable-HTTP transport opened again after the server
    /// lost one (2025 era): a new session has none of the old one's subscriptions.
    sessions_renewed: LazyWatch<u64>,
    /// Unreadable replies (stdio, legacy SSE) and the end of a stdio server's process:
    /// calls pending when it changes fail (see [`ReplyFaults`]).
    reply_faults: watch::Sender<ReplyFaults>,
    /// The tools of a 2025-era server that must be called as tasks.
    pub(crate) task_support: TaskSupport,
    /// Why a transport without a process (legacy SSE) ended on its own, once it did: the
    /// connection is dead and the set reports it without waiting for the next call.
    /// (Made at first use: only the legacy SSE transport reports, and only a connection
    /// without a process waits for it.)
    transport_end: LazyWatch<Option<String>>,
    /// Where the events extension's push notifications go (see [`crate::events`]).
    pub(crate) events: crate::events::routes::EventRoutes,
}

impl ConnectionShared {
    pub(crate) fn new(
        key: McpServerKey,
        endpoint: crate::telemetry::Endpoint,
        settings: &ClientSettings,
        requests: Arc<dyn ServerRequests>,
    ) -> Arc<Self> {
        let roots = Arc::clone(&settings.roots);
        let extensions = &settings.extensions;
        let mut caps = ClientCapabilities::default();
        if !roots.is_empty() {
            // The list is fixed for the connection's life: no list changes to announce.
            caps.roots = Some(rmcp::model::RootsCapabilities::default());
        }
        let mut announced: rmcp::model::ExtensionCapabilities = extensions
            .iter()
            .map(|(id, settings)| (id.clone(), settings.clone()))
            .collect();
        if settings.tasks {
            announced
                .entry(rmcp::model::TASKS_EXTENSION_ID.to_owned())
                .or_default();
        }
        if !announced.is_empty() {
            caps.extensions = Some(announced);
        }
        if settings.sampling {
            // Tool use in sampling (SEP-1577) is offered with it: the host's answer is
            // checked against the tools the request offered.
            let mut sampling = rmcp::model::SamplingCapability::default();
            sampling.tools = Some(Default::default());
            caps.sampling = Some(sampling);
        }
        if settings.elicitation {
            caps.elicitation = Some(
                ElicitationCapability::new()
                    .with_form(FormElicitationCapability::new().with_schema_validation(true))
                    .with_url(UrlElicitationCapability::new()),
            );
        }
        let config = ClientConfig::new(caps, settings.client.clone())
            .with_protocol_version(settings.protocol_version.clone());
        Arc::new(Self {
            instruments: crate::telemetry::Instruments::new(&key, endpoint),
            key,
            config,
            roots,
            requests,
            progress: Mutex::new(ProgressRoutes::default()),
            pending_answers: LazyWatch::default(),
            reply_faults: watch::channel(ReplyFaults::default()).0,
            tools_changed: Notify::new(),
            prompts_changed: Arc::default(),
            resources_changed: Arc::default(),
            logs: ServerLogs::new(),
            resource_updates: LazyBroadcast::new(RESOURCE_UPDATE_BUFFER),
            listens: crate::listen::health::ListenBoard::default(),
            sessions_renewed: LazyWatch::default(),
            task_support: TaskSupport::default(),
            transport_end: LazyWatch::default(),
            events: crate::events::routes::EventRoutes::default(),
        })
    }

    /// Whether the connection announced a capability the server may use to ask the host
    /// (elicitation, sampling).
    pub(crate) fn announces_requests(&self) -> bool {
        self.config.capabilities.elicitation.is_some() || self.announces_sampling()
    }

    /// Whether the connection announced the sampling capability.
    pub(crate) fn announces_sampling(&self) -> bool {
        self.config.capabilities.sampling.is_some()
    }

    /// Answers a sampling request of the server through `caller` (a 2026-era call's own
    /// `input_required` round) or the connection's [`ServerRequests`]: refused when the
    /// connection did not announce sampling, or the request is malformed; the host's
    /// answer is checked against the request. Calls on the connection pause their timeouts
    /// meanwhile when the request is not tied to one of them.
    pub(crate) async fn create_message(
        &self,
        caller: Option<&Arc<dyn ServerRequests>>,
        request: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, SamplingRefusal> {
        if !self.announces_sampling() {
            return Err(SamplingRefusal::not_offered());
        }
        if let Err(problem) = crate::host::sampling::check_request(&request) {
            tracing::warn!(server = %self.key, "malformed sampling request: {problem}");
            return Err(SamplingRefusal::new(format!(
                "malformed sampling/createMessage request: {problem}"
            )));
        }
        tracing::debug!(server = %self.key, max_tokens = request.max_tokens, "sampling request");
        let answer = match caller {
            Some(caller) => caller.create_message(&self.key, request.clone()).await,
            None => {
                let _pending = PendingAnswer::start(&self.pending_answers);
                self.requests
                    .create_message(&self.key, request.clone())
                    .await
            }
        }?;
        if let Err(problem) = crate::host::sampling::check_answer(&request, &answer) {
            tracing::warn!(server = %self.key, "the host's sampling answer does not fit the request: {problem}");
            return Err(SamplingRefusal::new(format!(
                "the client's answer did not fit the request ({problem})"
            )));
        }
        Ok(answer)
    }

    /// Registers where progress for `token` goes until the returned guard drops.
    pub(crate) fn watch_progress(
        self: &Arc<Self>,
        token: ProgressToken,
        sink: ProgressSink,
    ) -> ProgressGuard {
        if let Ok(mut routes) = self.progress.lock() {
            routes.watch(token.clone(), sink);
        }
        ProgressGuard {
            shared: Arc::clone(self),
            token,
        }
    }

    /// Answers an elicitation of the server through the connection's
    /// [`ServerRequests`], pausing the timeouts of the calls on the connection while it is
    /// pending (whichever call caused it is waiting for it).
    pub(crate) async fn elicit(&self, request: ElicitRequestParams) -> ElicitResult {
        let _pending = PendingAnswer::start(&self.pending_answers);
        tracing::debug!(server = %self.key, "elicitation request");
        self.requests.elicit(&self.key, request).await
    }

    /// [`Self::elicit`], answered by `caller` when the transport already ties the request
    /// to the call that caused it (a 2026-era `input_required` result is that call's own
    /// reply): it pauses no other call's timeout.
    pub(crate) async fn elicit_for(
        &self,
        caller: Option<&Arc<dyn ServerRequests>>,
        request: ElicitRequestParams,
    ) -> ElicitResult {
        match caller {
            Some(caller) => caller.elicit(&self.key, request).await,
            None => self.elicit(request).await,
        }
    }

    /// Gathers the inputs a 2026-era server asked for in an `input_required` result
    /// (SEP-2322): elicitations through [`Self::elicit`], sampling through
    /// [`Self::create_message`], roots from the host's list (empty when it gave none).
    /// Returns the responses and the server's request state, unmodified, for the retry.
    pub(crate) async fn fulfil_input_requests(
        &self,
        caller: Option<&Arc<dyn ServerRequests>>,
        result: rmcp::model::InputRequiredResult,
    ) -> Result<(Option<rmcp::model::InputResponses>, Option<String>), crate::RequestError> {
        let protocol = |detail: String| crate::RequestError::Protocol { detail };
        let requests = result.input_requests.unwrap_or_default();
        if requests.is_empty() && result.request_state.is_none() {
            return Err(protocol(
                "an input_required result with neither input requests nor request state".to_owned(),
            ));
        }
        let mut responses = rmcp::model::InputResponses::new();
        for (key, request) in requests {
            let value = match request {
                rmcp::model::InputRequest::Elicitation(request) => {
                    serde_json::to_value(self.elicit_for(caller, request.params).await)
                        .map_err(|e| protocol(e.to_string()))?
                }
                rmcp::model::InputRequest::ListRoots(_) => {
                    serde_json::to_value(crate::host::roots::list_result(&self.roots))
                        .map_err(|e| protocol(e.to_string()))?
                }
                rmcp::model::InputRequest::CreateMessage(request) => {
                    let answer = self
                        .create_message(caller, request.params)
                        .await
                        .map_err(|refusal| crate::RequestError::Declined {
                            detail: format!(
                                "the server asked for a message of the host's model (sampling) and was refused: {refusal}"
                            ),
                        })?;
                    serde_json::to_value(answer).map_err(|e| protocol(e.to_string()))?
                }
                other => {
                    return Err(protocol(format!(
                        "the server asked for an input this client does not know: {}",
                        serde_json::to_string(&other).unwrap_or_default()
                    )));
                }
            };
            responses.insert(key, value);
        }
        Ok((
            (!responses.is_empty()).then_some(responses),
            result.request_state,
        ))
    }

    /// Takes one log message: rate-limited, then to `tracing`, its route (chosen as it
    /// was read, else now: [`ServerRequests::route_log`]) and
    /// [`Client::server_logs`](crate::Client::server_logs).
    pub(crate) fn receive_log(
        &self,
        params: LoggingMessageNotificationParam,
        route: Option<LogRoute>,
    ) {
        if let Some(log) = self.logs.receive(&self.key, params) {
            if let Some(route) = route.or_else(|| self.requests.route_log()) {
                route(&log);
            }
            self.logs.publish(log);
        }
    }

    /// Who answers the server's requests made outside a call's own reply.
    pub(crate) fn requests(&self) -> &Arc<dyn ServerRequests> {
        &self.requests
    }

    /// Records an unreadable line from the server (see `reply_check`).
    pub(crate) fn report_reply_fault(&self, what: String) {
        tracing::warn!(server = %self.key, problem = %what, "the server sent a line that cannot be read");
        self.reply_faults.send_modify(|faults| {
            faults.unreadable += 1;
            faults.last = what;
        });
    }

    /// Records that the stdio server's process exited and the time for its last replies
    /// passed: a call still pending can get no answer.
    pub(crate) fn report_process_gone(&self) {
        tracing::debug!(server = %self.key, "the process exited; calls still pending fail");
        self.reply_faults
            .send_if_modified(|faults| !std::mem::replace(&mut faults.gone, true));
    }

    /// Records that the transport ended on its own (not by our shutdown), with why. The
    /// first report wins. (Only the legacy SSE transport reports so far.)
    #[cfg(feature = "http")]
    pub(crate) fn report_transport_end(&self, why: String) {
        tracing::warn!(server = %self.key, "the connection ended: {why}");
        self.transport_end.send_if_modified(|end| {
            if end.is_some() {
                return false;
            }
            *end = Some(why);
            true
        });
    }

    /// Records that the transport opened a new session after the server lost the old one.
    #[cfg(feature = "http")]
    pub(crate) fn note_session_renewed(&self) {
        self.sessions_renewed.send_modify(|n| *n += 1);
    }

    /// A receiver of the count of sessions opened again (see [`Self::note_session_renewed`]).
    pub(crate) fn sessions_renewed(&self) -> watch::Receiver<u64> {
        self.sessions_renewed.subscribe()
    }

    /// Why the transport ended on its own, if it did.
    pub(crate) fn transport_end(&self) -> Option<String> {
        self.transport_end.current()
    }

    /// Resolves once the transport ended on its own (never for transports that do not
    /// report it: stdio has its process, streamable HTTP is noticed at the next request).
    pub(crate) async fn transport_ended(&self) {
        let mut rx = self.transport_end.subscribe();
        let _ = rx.wait_for(Option::is_some).await;
        // A sender that is gone (never: `self` holds it) must not end the wait.
        if rx.borrow().is_none() {
            std::future::pending::<()>().await;
        }
    }

    /// A receiver of unreadable-reply reports and of the process's end.
    pub(crate) fn reply_faults(&self) -> watch::Receiver<ReplyFaults> {
        self.reply_faults.subscribe()
    }

    /// A receiver of the number of answers of the host (elicitations, samples) pending on this connection.
    pub(crate) fn pending_answers(&self) -> watch::Receiver<usize> {
        self.pending_answers.subscribe()
    }

    /// Delivers one progress notification, as it is read off the transport (see
    /// `read_order`); an update that does not move progress forward is dropped.
    pub(crate) fn deliver_progress(&self, params: ProgressNotificationParam) {
        if let Ok(mut routes) = self.progress.lock() {
            routes.deliver(params);
        }
    }
}

/// Removes a progress registration when the call ends (or its future is dropped).
pub(crate) struct ProgressGuard {
    shared: Arc<ConnectionShared>,
    token: ProgressToken,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.shared.progress.lock() {
            routes.sinks.remove(&self.token);
        }
    }
}

/// Counts one pending answer of the host (an elicitation, a sample) while alive.
struct PendingAnswer<'a>(&'a LazyWatch<usize>);

impl<'a> PendingAnswer<'a> {
    fn start(tx: &'a LazyWatch<usize>) -> Self {
        tx.send_modify(|n| *n += 1);
        Self(tx)
    }
}

impl Drop for PendingAnswer<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}
