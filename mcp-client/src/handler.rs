//! The rmcp client handler of one connection: routes progress notifications to the calls
//! that asked for them, elicitation and sampling requests to the host, log messages to
//! `tracing` and their subscribers, and list changes to whoever watches them.

#![expect(
    deprecated,
    reason = "rmcp marks logging and sampling deprecated (SEP-2577), yet MCP 2025-11-25 defines them and hosts still meet them"
)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use mcp_key::McpServerKey;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    CustomRequest, CustomResult, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorCode, FormElicitationCapability, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use tokio::sync::{Notify, watch};

use crate::BoxFuture;
use crate::sampling::{SAMPLING_CREATE, SamplingRefusal};
use crate::server_log::ServerLogs;
use crate::settings::ClientSettings;

/// A progress update of one tool call.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// Total, when the server knows it.
    pub total: Option<f64>,
    /// Optional message.
    pub message: Option<String>,
}

/// A per-call progress callback.
pub type ProgressCallback = Arc<dyn Fn(Progress) + Send + Sync>;

/// The method of server-to-client elicitation requests.
const ELICITATION_CREATE: &str = "elicitation/create";

/// Answers what a server asks of the host on one connection: the trait the host (or a
/// connection set routing requests to the session whose call caused them) implements.
///
/// Object-safe, taken as `Arc<dyn ServerRequests>`. Both eras come here: a 2025-era
/// `elicitation/create` or `sampling/createMessage` request and a 2026-era
/// `input_required` result of a call.
pub trait ServerRequests: Send + Sync {
    /// Answers one elicitation of `server`. Decline when there is nobody to ask.
    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult>;

    /// Answers one sampling request of `server` (a message from the host's model), as the
    /// server sent it (`maxTokens`, tools and all). The request was checked before it
    /// comes here, and the answer is checked against it before the server sees it
    /// ([`check_answer`](crate::check_answer)). The default refuses: the client offers
    /// sampling only when [`ClientSettings::with_sampling`] says so.
    fn create_message<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingRefusal>> {
        let _ = (server, request);
        Box::pin(std::future::ready(Err(SamplingRefusal::not_offered())))
    }

    /// Where a log message of the server (`notifications/message`) that arrives now
    /// goes, after the connection's rate limit: asked as the message is read off the
    /// transport (in the server's order, so before the reply of the call it was written
    /// during; on a 2026-era listen, as rmcp hands it over). A connection shared by several users
    /// routes it to the user whose call is running. The default (`None`) hands it to
    /// nobody; every message also goes to [`Client::server_logs`](crate::Client::server_logs)
    /// and `tracing`.
    fn route_log(&self) -> Option<crate::LogRoute> {
        None
    }
}

/// A [`ServerRequests`] that declines every request: for a host that asks its user
/// nothing (the client then announces no elicitation capability either, see
/// [`ClientSettings::with_elicitation`](crate::ClientSettings::with_elicitation)).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeclineRequests;

impl ServerRequests for DeclineRequests {
    fn elicit<'a>(
        &'a self,
        _server: &'a McpServerKey,
        _request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async { ElicitResult::new(ElicitationAction::Decline) })
    }
}

/// `resources/updated` notifications kept for sets that are slow to take them.
const RESOURCE_UPDATE_BUFFER: usize = 64;

/// State shared between one connection's handler and the calls running on it.
pub(crate) struct ConnectionShared {
    pub(crate) key: McpServerKey,
    /// How the connection reaches its server, and its measurements (for the request
    /// spans and metrics).
    pub(crate) instruments: crate::telemetry::Instruments,
    config: ClientConfig,
    /// The roots the connection announced (empty: the capability was not announced).
    roots: Arc<[crate::roots::Root]>,
    /// Who answers the server's requests made outside a call's own reply.
    requests: Arc<dyn ServerRequests>,
    progress: Mutex<ProgressRoutes>,
    /// Number of elicitations and sampling requests in flight; calls pause their timeouts
    /// while it is non-zero (the host's user or model is at work).
    pending_answers: watch::Sender<usize>,
    /// Signalled on `notifications/tools/list_changed`.
    pub(crate) tools_changed: Notify,
    /// `notifications/prompts/list_changed` (either era), debounced.
    pub(crate) prompts_changed: Arc<crate::listing::ListChanges>,
    /// `notifications/resources/list_changed` (either era), debounced.
    pub(crate) resources_changed: Arc<crate::listing::ListChanges>,
    /// The server's log messages.
    pub(crate) logs: ServerLogs,
    /// The URI of every `notifications/resources/updated` (either era).
    pub(crate) resource_updates: tokio::sync::broadcast::Sender<String>,
    /// The health of the 2026 era's `subscriptions/listen` requests.
    pub(crate) listens: crate::listen_health::ListenBoard,
    /// Counts the sessions the streamable-HTTP transport opened again after the server
    /// lost one (2025 era): a new session has none of the old one's subscriptions.
    sessions_renewed: watch::Sender<u64>,
    /// Counts unreadable replies (stdio), with what was wrong with the last one; calls
    /// pending when it changes fail as a protocol error.
    reply_faults: watch::Sender<(u64, String)>,
    /// The tools of a 2025-era server that must be called as tasks.
    pub(crate) task_support: crate::tasks::TaskSupport,
    /// Why a transport without a process (legacy SSE) ended on its own, once it did: the
    /// connection is dead and the set reports it without waiting for the next call.
    transport_end: watch::Sender<Option<String>>,
}

/// Notifications of a progress token nobody watches (yet) kept for a later watcher:
/// at most this many, the oldest dropped first.
const EARLY_PROGRESS: usize = 64;

/// Where progress notifications go, by token.
#[derive(Default)]
struct ProgressRoutes {
    sinks: HashMap<ProgressToken, ProgressSink>,
    /// Notifications that arrived before their call watched its token: rmcp picks the
    /// token as it sends the request, so a server's first notification can beat the call's
    /// [`ConnectionShared::watch_progress`] (the first of three was lost under load).
    early: VecDeque<ProgressNotificationParam>,
}

impl ProgressRoutes {
    /// Delivers `params` to its sink, or keeps it for a watcher to come.
    fn deliver(&mut self, params: ProgressNotificationParam) {
        match self.sinks.get_mut(&params.progress_token) {
            Some(sink) => sink.deliver(params),
            None => {
                if self.early.len() >= EARLY_PROGRESS {
                    self.early.pop_front();
                }
                self.early.push_back(params);
            }
        }
    }

    /// Registers `sink` for `token` and hands it what arrived for the token before.
    fn watch(&mut self, token: ProgressToken, mut sink: ProgressSink) {
        let early = std::mem::take(&mut self.early);
        for params in early {
            if params.progress_token == token {
                sink.deliver(params);
            } else {
                self.early.push_back(params);
            }
        }
        self.sinks.insert(token, sink);
    }
}

pub(crate) struct ProgressSink {
    pub(crate) callback: Option<ProgressCallback>,
    pub(crate) tick: Option<tokio::sync::mpsc::UnboundedSender<()>>,
    /// The last progress delivered.
    pub(crate) last: Option<f64>,
}

impl ProgressSink {
    /// Passes `params` on, unless an update with as much progress came first.
    fn deliver(&mut self, params: ProgressNotificationParam) {
        if self.last.is_some_and(|last| params.progress <= last) {
            return;
        }
        self.last = Some(params.progress);
        if let Some(tick) = &self.tick {
            let _ = tick.send(());
        }
        if let Some(cb) = &self.callback {
            cb(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
    }
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
            pending_answers: watch::channel(0).0,
            reply_faults: watch::channel((0, String::new())).0,
            tools_changed: Notify::new(),
            prompts_changed: Arc::default(),
            resources_changed: Arc::default(),
            logs: ServerLogs::new(),
            resource_updates: tokio::sync::broadcast::channel(RESOURCE_UPDATE_BUFFER).0,
            listens: crate::listen_health::ListenBoard::default(),
            sessions_renewed: watch::channel(0).0,
            task_support: crate::tasks::TaskSupport::default(),
            transport_end: watch::channel(None).0,
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
        if let Err(problem) = crate::sampling::check_request(&request) {
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
        if let Err(problem) = crate::sampling::check_answer(&request, &answer) {
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
                    serde_json::to_value(crate::roots::list_result(&self.roots))
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
        route: Option<crate::LogRoute>,
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
        self.reply_faults.send_modify(|(count, last)| {
            *count += 1;
            *last = what;
        });
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
        self.transport_end.borrow().clone()
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

    /// A receiver of unreadable-reply reports (count, what was wrong with the last one).
    pub(crate) fn reply_faults(&self) -> watch::Receiver<(u64, String)> {
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
struct PendingAnswer<'a>(&'a watch::Sender<usize>);

impl<'a> PendingAnswer<'a> {
    fn start(tx: &'a watch::Sender<usize>) -> Self {
        tx.send_modify(|n| *n += 1);
        Self(tx)
    }
}

impl Drop for PendingAnswer<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The rmcp client handler of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) shared: Arc<ConnectionShared>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        self.shared.config.clone()
    }

    #[expect(
        deprecated,
        reason = "roots are deprecated by SEP-2577 in rmcp, yet MCP 2025-11-25 defines roots/list"
    )]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        Ok(crate::roots::list_result(&self.shared.roots))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.shared.elicit(request).await)
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.shared
            .create_message(None, request)
            .await
            .map_err(SamplingRefusal::into_error)
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let route = context
            .extensions
            .get::<crate::read_order::RoutedLog>()
            .map(|routed| routed.0.clone());
        self.shared.receive_log(params, route);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.shared.key, "prompts/list_changed");
        self.shared.prompts_changed.announce();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.shared.key, "resources/list_changed");
        self.shared.resources_changed.announce();
    }

    /// rmcp hands a request it cannot parse to this method under its raw method name; for
    /// a malformed `elicitation/create` or `sampling/createMessage` (which this client
    /// advertises when it has a handler) the right answer is "invalid params", not rmcp's
    /// default "method not found".
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        if request.method == SAMPLING_CREATE && self.shared.announces_sampling() {
            let problem = malformed_sampling(&request);
            tracing::warn!(server = %self.shared.key, "malformed sampling/createMessage: {problem}");
            return Err(ErrorData::invalid_params(
                format!("malformed sampling/createMessage request: {problem}"),
                None,
            ));
        }
        if request.method != ELICITATION_CREATE {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let problem = match request.params_as::<ElicitRequestParams>() {
            Ok(None) => "params are missing".to_owned(),
            Err(e) => e.to_string(),
            // Parsed now but not by rmcp's typed dispatch (e.g. the method's typed form
            // rejected something else); still not a request this client can answer.
            Ok(Some(_)) => "the request does not match the elicitation/create schema".to_owned(),
        };
        tracing::warn!(server = %self.shared.key, "malformed elicitation/create: {problem}");
        Err(ErrorData::invalid_params(
            format!("malformed elicitation/create request: {problem}"),
            None,
        ))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.shared.key, "tools/list_changed");
        self.shared.tools_changed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.shared.key, uri = %params.uri, "resources/updated");
        let _ = self.shared.resource_updates.send(params.uri);
    }
}

/// What is wrong with a `sampling/createMessage` rmcp could not parse.
fn malformed_sampling(request: &CustomRequest) -> String {
    match request.params_as::<CreateMessageRequestParams>() {
        Ok(None) => "params are missing".to_owned(),
        Err(e) => e.to_string(),
        Ok(Some(_)) => "the request does not match the sampling/createMessage schema".to_owned(),
    }
}

#[cfg(test)]
mod progress_tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use std::sync::Arc;

    use rmcp::model::NumberOrString;

    use super::*;

    fn notification(token: &str, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(
            ProgressToken(NumberOrString::String(token.into())),
            progress,
        )
        .with_total(3.0)
    }

    fn recording() -> (ProgressSink, Arc<Mutex<Vec<f64>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&seen);
        let sink = ProgressSink {
            callback: Some(Arc::new(move |p: Progress| {
                into.lock().unwrap().push(p.progress)
            })),
            tick: None,
            last: None,
        };
        (sink, seen)
    }

    #[test]
    fn a_notification_that_beats_its_watcher_is_delivered_when_it_watches() {
        let mut routes = ProgressRoutes::default();
        routes.deliver(notification("a", 1.0));
        routes.deliver(notification("other", 1.0));
        let (sink, seen) = recording();
        routes.watch(ProgressToken(NumberOrString::String("a".into())), sink);
        routes.deliver(notification("a", 2.0));
        routes.deliver(notification("a", 1.5)); // overtaken: skipped
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
        assert_eq!(
            routes.early.len(),
            1,
            "the other token's stays for its watcher"
        );
    }

    #[test]
    fn unwatched_notifications_are_bounded() {
        let mut routes = ProgressRoutes::default();
        for i in 0..1000 {
            routes.deliver(notification(&format!("t{i}"), 1.0));
        }
        assert_eq!(routes.early.len(), EARLY_PROGRESS);
    }
}
