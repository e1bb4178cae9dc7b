//! A connection as the pool shares it between connection sets ([`Live`]): the server's
//! [`Client`] and the gate through which the server's requests (elicitation, sampling)
//! reach the set whose operation caused them ([`SessionRoute`], one per set).

#![expect(
    deprecated,
    reason = "rmcp marks sampling deprecated (SEP-2577), yet MCP 2025-11-25 and 2026-07-28 define sampling/createMessage"
)]

use std::collections::BTreeMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_catalog::ElicitationPolicy;
use mcp_client::{BoxFuture, Client, LogRoute, SamplingRefusal, ServerLog, ServerRequests};
use mcp_key::{EnvironmentId, McpServerKey};
use mcp_pool::{Route, SessionGate, SessionId};
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction,
};

use crate::event_sink::EventSink;
use crate::policy::authority::ApprovalPolicy;
use crate::policy::authority::{AuthorityCell, Rule};
use crate::policy::elicitation::{ElicitationHandler, ElicitationRequest};
use crate::policy::sampling::{SamplingAnswer, SamplingHandler, SamplingRequest};

static NEXT_ELICITATION: AtomicU64 = AtomicU64::new(1);
static NEXT_SAMPLING: AtomicU64 = AtomicU64::new(1);
static NEXT_IDLE_READER: AtomicU64 = AtomicU64::new(1);

/// How one session (connection set) answers server-to-client requests for one server:
/// its live authority (read once per request), the owning environment and its configured
/// policy, and its elicitation handler.
#[derive(Clone)]
pub(crate) struct SessionRoute {
    pub(crate) authority: AuthorityCell,
    pub(crate) environment: EnvironmentId,
    pub(crate) environment_policy: ElicitationPolicy,
    pub(crate) handler: Option<Arc<dyn ElicitationHandler>>,
    /// The host's model, for sampling requests.
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    /// Where this set's events go: the server's log messages written during this set's
    /// operations.
    pub(crate) events: Option<crate::event_sink::EventSink>,
    /// How long the handler may take (see `ConnectionSetOptions::with_answer_deadline`).
    pub(crate) answer_deadline: Option<std::time::Duration>,
}

impl SessionRoute {
    /// Answers one request by the rule of [`crate::HostAuthority`], applied to one
    /// snapshot of the authority.
    async fn answer(&self, request: ElicitationRequest) -> ElicitResult {
        let authority = self.authority.load();
        let ask_user = match authority.rule(
            &self.environment,
            self.environment_policy,
            &request.params,
        ) {
            Rule::Answer(answer) => {
                tracing::debug!(server = %request.server, id = %request.id, action = ?answer.action, "elicitation answered by the host's policy");
                return answer;
            }
            Rule::Review { ask_user } => ask_user,
        };
        if let Some(reviewer) = &authority.reviewer
            && let Some(answer) = reviewer.review(request.clone()).await
        {
            tracing::debug!(server = %request.server, id = %request.id, "elicitation answered by the reviewer");
            return answer;
        }
        let handler = match (&self.handler, ask_user) {
            (Some(handler), true) => handler,
            _ => return ElicitResult::new(ElicitationAction::Decline),
        };
        let (server, id) = (request.server.clone(), request.id.clone());
        within(self.answer_deadline, handler.elicit(request), |deadline| {
            tracing::warn!(server = %server, %id, "elicitation not answered within {deadline:?}; cancelled");
            ElicitResult::new(ElicitationAction::Cancel)
        })
        .await
    }
}

/// `answer`, unless the host's handler takes longer than `deadline` (when there is one):
/// then what `late` says.
async fn within<T>(
    deadline: Option<std::time::Duration>,
    answer: impl Future<Output = T>,
    late: impl FnOnce(std::time::Duration) -> T,
) -> T {
    match deadline {
        None => answer.await,
        Some(deadline) => tokio::time::timeout(deadline, answer)
            .await
            .unwrap_or_else(|_| late(deadline)),
    }
}

impl SessionRoute {
    /// Answers one sampling request by the rule of [`crate::policy::sampling`], applied to
    /// one snapshot of the authority.
    async fn sample(&self, request: SamplingRequest) -> SamplingAnswer {
        let authority = self.authority.load();
        if let Some(reviewer) = &authority.sampling_reviewer
            && let Some(answer) = reviewer.review(request.clone()).await
        {
            tracing::debug!(server = %request.server, id = %request.id, refused = answer.is_err(), "sampling decided by the reviewer");
            return answer;
        }
        if authority.approval_policy == ApprovalPolicy::Never {
            return Err(SamplingRefusal::new(
                "the host runs without asking anyone (approval policy never), so it does not spend its model on a server's request",
            ));
        }
        let Some(handler) = &self.sampling else {
            return Err(SamplingRefusal::not_offered());
        };
        let (server, id) = (request.server.clone(), request.id.clone());
        within(self.answer_deadline, handler.create_message(request), |deadline| {
            tracing::warn!(server = %server, %id, "sampling not answered within {deadline:?}; refused");
            Err(SamplingRefusal::new(format!(
                "the host's model did not answer within {}s",
                deadline.as_secs_f64()
            )))
        })
        .await
    }
}

impl ServerRequests for SessionRoute {
    fn create_message<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingRefusal>> {
        Box::pin(async move {
            let id = format!("sample-{}", NEXT_SAMPLING.fetch_add(1, Ordering::Relaxed));
            tracing::debug!(server = %server, %id, max_tokens = request.max_tokens, "sampling request");
            self.sample(SamplingRequest {
                id,
                server: server.clone(),
                params: request,
            })
            .await
        })
    }

    fn route_log(&self) -> Option<LogRoute> {
        let events = self.events.clone()?;
        Some(Arc::new(move |log: &ServerLog| {
            events.send(log_event(log.clone(), 0));
        }))
    }

    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            let id = format!(
                "elicit-{}",
                NEXT_ELICITATION.fetch_add(1, Ordering::Relaxed)
            );
            tracing::debug!(server = %server, %id, "elicitation request");
            self.answer(ElicitationRequest {
                id,
                server: server.clone(),
                params: request,
            })
            .await
        })
    }
}

/// The event of one server log message, with `missed` more dropped before it.
pub(crate) fn log_event(log: ServerLog, missed: u64) -> crate::events::ConnectionEvent {
    crate::events::ConnectionEvent::ServerLog {
        server: log.server,
        level: log.level,
        logger: log.logger,
        data: log.data,
        dropped: log.dropped + missed,
    }
}

/// The sessions (connection sets) sharing one connection: a server request goes to the
/// one whose operation is running (see [`mcp_pool::SessionGate`]), declined when that is
/// unclear. A log message written during one session's operation goes to that session
/// only; one written while none runs goes to every session ([`Gate::idle_logs`]) on a
/// 2025-era connection. A 2026-era connection's calls take no turns, so a log message is
/// the session's whose calls alone are in flight ([`Gate::mark_call`]); one that no
/// single session's calls explain goes to nobody while several sessions are attached
/// (each 2026-era call is one user's, and its log lines may name that user's data).
pub(crate) struct Gate {
    pub(crate) sessions: SessionGate<SessionRoute>,
    /// Where log messages written while no session's operation ran go: the events of
    /// every attached set that has events ([`Gate::idle_logs`]), each sent without
    /// waiting, as a message written during an operation is. (A broadcast channel here
    /// allocated its 256 slots up front: about 8 KiB a connection, most never used.)
    idle_readers: Mutex<BTreeMap<u64, EventSink>>,
    /// The 2026-era calls in flight, by the session that made them (with its route).
    calls: Mutex<BTreeMap<SessionId, (usize, SessionRoute)>>,
    /// Whether the connection speaks the 2026 era (known once it connected).
    modern: AtomicBool,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            sessions: SessionGate::default(),
            idle_readers: Mutex::default(),
            calls: Mutex::default(),
            modern: AtomicBool::new(false),
        }
    }
}

/// A set reading a connection's log messages written while no session's operation runs
/// ([`Gate::idle_logs`]); dropping it ends that.
pub(crate) struct IdleLogs {
    gate: Arc<Gate>,
    id: u64,
}

impl Drop for IdleLogs {
    fn drop(&mut self) {
        self.gate.lock_idle_readers().remove(&self.id);
    }
}

/// One 2026-era call of a session in flight ([`Gate::mark_call`]); dropping it ends it.
pub(crate) struct CallMark {
    gate: Arc<Gate>,
    session: SessionId,
}

impl Drop for CallMark {
    fn drop(&mut self) {
        let mut calls = self.gate.lock_calls();
        if let Some((count, _)) = calls.get_mut(&self.session) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                calls.remove(&self.session);
            }
        }
    }
}

impl Gate {
    /// Records that the connection speaks the 2026 era: its log messages are then only
    /// handed to a session they can be attributed to.
    pub(crate) fn set_modern(&self, modern: bool) {
        self.modern.store(modern, Ordering::SeqCst);
    }

    /// Marks one 2026-era call of `session` (whose server requests go to `route`) as in
    /// flight until the mark is dropped: log messages read meanwhile are that session's
    /// when no other session's call is in flight.
    pub(crate) fn mark_call(self: &Arc<Self>, session: SessionId, route: SessionRoute) -> CallMark {
        self.lock_calls().entry(session).or_insert((0, route)).0 += 1;
        CallMark {
            gate: Arc::clone(self),
            session,
        }
    }

    /// Sends the log messages written while no session's operation runs (2025 era) to
    /// `events` too, until the returned guard is dropped.
    pub(crate) fn idle_logs(self: &Arc<Self>, events: EventSink) -> IdleLogs {
        let id = NEXT_IDLE_READER.fetch_add(1, Ordering::Relaxed);
        self.lock_idle_readers().insert(id, events);
        IdleLogs {
            gate: Arc::clone(self),
            id,
        }
    }

    fn lock_idle_readers(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, EventSink>> {
        self.idle_readers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn lock_calls(&self) -> std::sync::MutexGuard<'_, BTreeMap<SessionId, (usize, SessionRoute)>> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The route of a 2026-era call's log message: `Some(route)` when the calls in flight
    /// are one session's, `Some(None)` when several sessions' are (nobody can tell whose it
    /// is), `None` when none is.
    fn calls_route(&self) -> Option<Option<LogRoute>> {
        let calls = self.lock_calls();
        let mut sessions = calls.values();
        match (sessions.next(), sessions.next()) {
            (None, _) => None,
            (Some((_, route)), None) => Some(route.route_log()),
            (Some(_), Some(_)) => Some(None),
        }
    }
}

impl ServerRequests for Gate {
    fn route_log(&self) -> Option<LogRoute> {
        if let Some(route) = self.calls_route() {
            return route;
        }
        match self.sessions.route() {
            Route::Deliver { handler, .. } => handler.route_log(),
            // A 2026-era connection's message outside any call, with several sessions
            // attached: it may be any one's, so it is nobody's.
            _ if self.modern.load(Ordering::SeqCst) => None,
            // Nobody's operation is running: it belongs to no one in particular.
            _ => {
                let readers: Vec<EventSink> = self.lock_idle_readers().values().cloned().collect();
                Some(Arc::new(move |log: &ServerLog| {
                    for events in &readers {
                        events.send(log_event(log.clone(), 0));
                    }
                }))
            }
        }
    }

    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async move {
            match self.sessions.route() {
                Route::Deliver { handler, .. } => handler.elicit(server, request).await,
                Route::Decline(reason) => {
                    tracing::info!(server = %server, %reason, "elicitation declined");
                    ElicitResult::new(ElicitationAction::Decline)
                }
                _ => ElicitResult::new(ElicitationAction::Decline),
            }
        })
    }

    fn create_message<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingRefusal>> {
        Box::pin(async move {
            match self.sessions.route() {
                Route::Deliver { handler, .. } => handler.create_message(server, request).await,
                Route::Decline(reason) => {
                    tracing::info!(server = %server, %reason, "sampling refused");
                    Err(SamplingRefusal::new(format!(
                        "the client cannot tell which of its users the request is for ({reason})"
                    )))
                }
                _ => Err(SamplingRefusal::not_offered()),
            }
        })
    }
}

/// One shared connection: the client and its gate.
pub(crate) struct Live {
    client: Client,
    pub(crate) gate: Arc<Gate>,
}

impl Live {
    pub(crate) fn new(client: Client, gate: Arc<Gate>) -> Self {
        Self { client, gate }
    }
}

impl Deref for Live {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

impl mcp_pool::PooledConnection for Live {
    fn is_alive(&self) -> bool {
        self.client.is_alive()
    }

    async fn shutdown(&self) {
        self.client.shutdown().await;
    }
}
