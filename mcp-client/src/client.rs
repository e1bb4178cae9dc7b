//! One live connection to one server ([`Client`]). It owns the rmcp session, the process
//! of a stdio server and the server's tool listing, and keeps the listing fresh on
//! `tools/list_changed`. It knows nothing of who uses it: a connection set shares one
//! `Client` between its sessions through a pool.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use mcp_key::McpServerKey;
use rmcp::RoleClient;
use rmcp::model::{ProtocolVersion, ServerPeerInfo, Tool};
use rmcp::service::{Peer, RunningService, ServiceError};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::RequestError;
use crate::failure::{FailureReason, StartupFailure};
use crate::handshake::era::Era;
use crate::handshake::handler::Handler;
use crate::listing::paginate::Listed;
use crate::listing::{Listing, RefreshSettings, Stamp};
use crate::rmcp_errors::ServiceFailure;
use crate::state::ConnectionShared;
use crate::transport::stdio::Process;

/// How long a closed pipe may wait for the process's exit to be reaped.
const EXIT_REAP: Duration = Duration::from_millis(500);

/// A connection to one MCP server that completed its start (transport, handshake, first
/// `tools/list`): see [`Client::connect`].
///
/// Dropping it stops its background tasks, and the launcher kills a stdio server's
/// process group; [`Client::shutdown`] closes the session and stops the process
/// gracefully first.
pub struct Client {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) shared: Arc<ConnectionShared>,
    instructions: Option<String>,
    listing: Arc<Listing>,
    process: Option<Process>,
    /// Stops the connection's background tasks (the `tools/list_changed` refresh, listens).
    cancel: CancellationToken,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    dead: AtomicBool,
    /// `true` once [`Client::shutdown`] finished.
    stopped: watch::Sender<bool>,
    /// Resources subscribed on this connection, with their users.
    pub(crate) resource_watches: Arc<crate::listen::ResourceWatches>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.shared.key)
            .field("protocol_version", &self.protocol_version())
            .field("pid", &self.pid())
            .field("alive", &self.is_alive())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A live connection; starts its `tools/list_changed` refresh task, which ends when
    /// the connection shuts down or is dropped.
    pub(crate) fn new(
        service: RunningService<RoleClient, Handler>,
        shared: Arc<ConnectionShared>,
        (listed, fetched): (Listed, SystemTime),
        process: Option<Process>,
        refresh: RefreshSettings,
        changes: Option<crate::listen::ChangeListen>,
    ) -> Self {
        let instructions = service
            .peer()
            .peer_info()
            .and_then(|i| i.instructions.clone());
        let listing = Arc::new(Listing::new(&shared.key, listed, fetched));
        let cancel = CancellationToken::new();
        // The 2026 era: tool list changes arrive on a `subscriptions/listen` kept open.
        if let Some(changes) = changes {
            changes.spawn(service.peer().clone(), Arc::clone(&shared), cancel.clone());
        }
        // Prompt and resource list changes: each burst counted once, like the tools'.
        tokio::spawn(crate::state::ListChanges::settle_all(
            [
                Arc::clone(&shared.prompts_changed),
                Arc::clone(&shared.resources_changed),
            ],
            refresh.debounce,
            cancel.clone(),
        ));
        // A streamable-HTTP session the server lost and rmcp opened again has none of the
        // old one's resource subscriptions. A stdio server's pipes have no session to
        // lose: its connection needs no task waiting for one (nor the task's channel).
        let resource_watches = Arc::<crate::listen::ResourceWatches>::default();
        if process.is_none() {
            tokio::spawn(crate::listen::after_new_sessions(
                service.peer().clone(),
                Arc::clone(&shared),
                Arc::clone(&resource_watches),
                cancel.clone(),
            ));
        }
        // A stdio server that exited: calls it can no longer answer fail soon after,
        // even while a process it left behind holds the pipe open.
        if let Some(process) = &process {
            tokio::spawn(crate::state::report_process_end(
                process.exit_watcher(),
                Arc::clone(&shared),
                cancel.clone(),
            ));
        }
        tokio::spawn(crate::listing::refresh_on_list_changed(
            service.peer().clone(),
            Arc::clone(&shared),
            Arc::clone(&listing),
            cancel.clone(),
            refresh,
        ));
        Self {
            peer: service.peer().clone(),
            shared,
            instructions,
            listing,
            process,
            cancel,
            service: tokio::sync::Mutex::new(Some(service)),
            dead: AtomicBool::new(false),
            stopped: watch::channel(false).0,
            resource_watches,
        }
    }

    /// The server this connection is to.
    pub fn server(&self) -> &McpServerKey {
        &self.shared.key
    }

    /// The server's tools, one per raw name, from its latest listing.
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.listing.tools()
    }

    /// What was wrong with the server's last tool list (duplicate or empty names), each
    /// logged once when it first appears.
    pub fn warnings(&self) -> Arc<Vec<String>> {
        self.listing.warnings()
    }

    /// Changes whenever the tools are listed again.
    pub fn listing_revisions(&self) -> watch::Receiver<Stamp> {
        self.listing.revisions()
    }

    /// Which listing the connection has now.
    pub fn stamp(&self) -> Stamp {
        self.listing.stamp()
    }

    /// Changes whenever the server announces that its tools changed (before the new
    /// listing is fetched).
    pub fn announcements(&self) -> watch::Receiver<u64> {
        self.listing.announcements()
    }

    /// The `instructions` of the server's handshake answer.
    pub fn instructions(&self) -> Option<&str> {
        self.instructions.as_deref()
    }

    /// The server's handshake answer: its identity, capabilities and protocol version.
    pub fn server_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.peer.peer_info()
    }

    /// The protocol version the connection speaks (from the handshake).
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.peer
            .peer_info()
            .map(|info| info.protocol_version.clone())
            .unwrap_or_default()
    }

    /// The era the connection speaks.
    pub fn era(&self) -> Era {
        Era::of(&self.protocol_version())
    }

    /// Whether the client announced a capability the server may use to ask the host at
    /// any time (elicitation, sampling): only then do requests of the server need to know
    /// which of several users' calls caused them.
    pub fn announces_requests(&self) -> bool {
        self.shared.announces_requests()
    }

    /// The server's log messages (`notifications/message`) from now on, rate-limited per
    /// connection (see [`ServerLog::dropped`](crate::ServerLog::dropped)); a reader that
    /// falls more than [`LOG_BUFFER`](crate::LOG_BUFFER) behind gets `Lagged` with the
    /// count it missed. Each message is also a `tracing` event under
    /// [`SERVER_LOG_TARGET`](crate::SERVER_LOG_TARGET).
    pub fn server_logs(&self) -> tokio::sync::broadcast::Receiver<crate::ServerLog> {
        self.shared.logs.subscribe()
    }

    /// Counts up once per burst of `prompts/list_changed` of the server (either era),
    /// collected for the list-changed debounce.
    pub fn prompt_list_changes(&self) -> watch::Receiver<u64> {
        self.shared.prompts_changed.subscribe()
    }

    /// Counts up once per burst of `resources/list_changed` of the server (either era),
    /// collected for the list-changed debounce.
    pub fn resource_list_changes(&self) -> watch::Receiver<u64> {
        self.shared.resources_changed.subscribe()
    }

    /// The process id (and process group id) of a stdio server.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Process::pid)
    }

    /// Marks the connection dead: [`Self::is_alive`] is `false` from now on.
    pub fn mark_dead(&self) {
        self.dead.store(true, Ordering::SeqCst);
    }

    /// Whether the connection can still be used: not marked dead, the transport open, the
    /// process running.
    pub fn is_alive(&self) -> bool {
        !self.dead.load(Ordering::SeqCst)
            && !self.peer.is_transport_closed()
            && self.shared.transport_end().is_none()
            && self.process.as_ref().is_none_or(|p| !p.has_exited())
    }

    /// Resolves once the connection ended on its own: the stdio server's process exited,
    /// or a transport that reports its end (legacy SSE) ended. Never for a streamable-HTTP
    /// connection, whose loss shows at its next request.
    pub async fn closed(&self) {
        match &self.process {
            Some(p) => {
                p.wait_exit().await;
            }
            None => self.shared.transport_ended().await,
        }
    }

    /// A receiver of the URI of every `notifications/resources/updated` (either era).
    pub fn resource_updates(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.shared.resource_updates.subscribe()
    }

    /// The health of the connection's `subscriptions/listen` requests (MCP 2026-07-28):
    /// the listens that are down now, and each transition from then on (lost, restored,
    /// refused), published once per transition whoever reads it. Nothing for a 2025-era
    /// connection, whose server notifies without a listen.
    pub fn listen_health(&self) -> crate::ListenHealthFeed {
        self.shared.listens.feed()
    }

    /// Cancelled when the connection stops: its background tasks end with it.
    pub(crate) fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Closes the session and stops the process (escalating to SIGKILL). Idempotent.
    pub async fn shutdown(&self) {
        self.end_session();
        self.cancel.cancel();
        self.mark_dead();
        let service = self.service.lock().await.take();
        if let Some(service) = service {
            let _ = service.cancel().await;
        }
        if let Some(p) = &self.process {
            p.shutdown().await;
        }
        self.stopped.send_replace(true);
    }

    /// Waits until [`Client::shutdown`] finished (the process is gone).
    pub async fn stopped(&self) {
        let mut rx = self.stopped.subscribe();
        let _ = rx.wait_for(|stopped| *stopped).await;
    }

    /// The failure to report when this connection died on its own: the exit status and
    /// stderr tail of a stdio server, what the transport reported otherwise.
    pub async fn death(&self) -> StartupFailure {
        match &self.process {
            Some(p) => p.exit_failure().await,
            None => StartupFailure::new(
                FailureReason::Transport,
                match self.shared.transport_end() {
                    Some(why) => format!("MCP server `{}`: {why}", self.shared.key),
                    None => "the connection was closed".to_owned(),
                },
            ),
        }
    }

    /// Why a request found the connection gone: the process's exit (waiting briefly for it
    /// to be reaped, as the pipe closes a moment before) with its stderr tail, else what
    /// the transport reported, else that it was closed.
    pub(crate) async fn gone_detail(&self) -> String {
        match &self.process {
            Some(p) => {
                let _ = tokio::time::timeout(EXIT_REAP, p.wait_exit()).await;
                self.death().await.to_string()
            }
            None => self
                .shared
                .transport_end()
                .unwrap_or_else(|| "the connection was closed".to_owned()),
        }
    }
}

impl Client {
    /// Records the session's end (once): closed by its owner, or lost before.
    fn end_session(&self) {
        let lost = (!self.is_alive()).then_some("disconnected");
        let protocol = self.protocol_version();
        let instruments = &self.shared.instruments;
        instruments.session_ended(protocol.as_str(), lost);
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.end_session();
        // Ends the refresh task; the process group is killed by the launcher's own Drop.
        self.cancel.cancel();
    }
}

impl mcp_pool::PooledConnection for Client {
    fn is_alive(&self) -> bool {
        Client::is_alive(self)
    }

    async fn shutdown(&self) {
        Client::shutdown(self).await;
    }
}

impl Client {
    /// Runs `request` in the span of `method` on `target` of this connection, recording
    /// how it ended.
    pub(crate) fn traced<'a, T: 'a>(
        &'a self,
        method: &'static str,
        target: Option<&'a str>,
        request: impl Future<Output = Result<T, RequestError>> + 'a,
    ) -> impl Future<Output = Result<T, RequestError>> + 'a {
        self.traced_judged(method, target, |_| None, request)
    }

    /// [`Self::traced`], with `judge` telling the `error.type` of a failed result.
    pub(crate) fn traced_judged<'a, T: 'a>(
        &'a self,
        method: &'static str,
        target: Option<&'a str>,
        judge: impl FnOnce(&T) -> Option<&'static str> + 'a,
        request: impl Future<Output = Result<T, RequestError>> + 'a,
    ) -> impl Future<Output = Result<T, RequestError>> + 'a {
        self.shared.instruments.traced(
            &self.shared.key,
            Some(self.protocol_version()),
            method,
            target,
            judge,
            request,
        )
    }
}

impl RequestError {
    /// The error of a request rmcp failed with `e` on `client`.
    pub(crate) async fn of_service(client: &Client, e: ServiceError) -> Self {
        match ServiceFailure::of(&e) {
            ServiceFailure::AuthRequired => Self::AuthRequired,
            ServiceFailure::Refused(data) => Self::Server {
                code: data.code.0,
                message: data.message.to_string(),
            },
            ServiceFailure::Closed => Self::Disconnected {
                detail: client.gone_detail().await,
            },
            ServiceFailure::UnexpectedResponse => Self::Protocol {
                detail: "unexpected response type".to_owned(),
            },
            ServiceFailure::ProtocolFault
            | ServiceFailure::SendFailed
            | ServiceFailure::Timeout
            | ServiceFailure::Other => Self::not_sent(&e),
        }
    }
}
