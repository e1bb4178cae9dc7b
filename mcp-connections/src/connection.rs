//! One live connection to a server ([`Live`]): what the pool shares between connection
//! sets. It owns the rmcp session, the process of a stdio server and the server's tool
//! listing, and keeps the listing fresh on `tools/list_changed`. It knows nothing of the
//! sets using it: their per-session view lives in [`crate::slot`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, SystemTime};

use rmcp::RoleClient;
use rmcp::model::{ProtocolVersion, Tool};
use rmcp::service::{Peer, RunningService};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::StartupFailure;
use crate::events::FailureReason;
use crate::handler::{ConnectionShared, Handler};
use crate::paginate::{self, Listed};
use crate::stdio::Process;

/// A server's current tool listing, shared by every set using the connection.
pub(crate) struct Listing {
    /// The server's tools, one per raw name (see [`crate::tool_info::unique_tools`]).
    tools: RwLock<Arc<Vec<Tool>>>,
    /// What was wrong with the server's last tool list (duplicate or empty names).
    warnings: RwLock<Arc<Vec<String>>>,
    /// Bumped on every new listing.
    revision: watch::Sender<Stamp>,
    /// Bumped on every `tools/list_changed`, before the new listing is fetched.
    announced: watch::Sender<u64>,
}

/// Which listing a connection has, and how fresh it is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    /// Counts listings: 0 for the first.
    pub(crate) number: u64,
    /// When the fetch of this listing began.
    pub(crate) fetched: SystemTime,
    /// How long the server says it stays fresh (`ttlMs`), if it said.
    pub(crate) ttl: Option<Duration>,
    /// The server said `cacheScope: "private"`.
    pub(crate) private: bool,
}

impl Listing {
    fn new(key: &mcp_key::McpServerKey, listed: Listed, fetched: SystemTime) -> Self {
        let (tools, warnings) = crate::tool_info::unique_tools(key, listed.tools);
        for warning in &warnings {
            tracing::warn!(server = %key, "{warning}");
        }
        Self {
            tools: RwLock::new(Arc::new(tools)),
            warnings: RwLock::new(Arc::new(warnings)),
            revision: watch::channel(Stamp {
                number: 0,
                fetched,
                ttl: listed.ttl,
                private: listed.private,
            })
            .0,
            announced: watch::channel(0).0,
        }
    }

    fn read<T>(lock: &RwLock<Arc<T>>) -> Arc<T> {
        match lock.read() {
            Ok(v) => Arc::clone(&v),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    fn write<T>(lock: &RwLock<Arc<T>>, value: T) {
        match lock.write() {
            Ok(mut v) => *v = Arc::new(value),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(value),
        }
    }

    /// Replaces the tools with a new listing whose fetch began at `fetched`; logs the
    /// warnings the previous listing did not already have.
    fn set(&self, key: &mcp_key::McpServerKey, listed: Listed, fetched: SystemTime) {
        let (tools, warnings) = crate::tool_info::unique_tools(key, listed.tools);
        let previous = Self::read(&self.warnings);
        for warning in warnings.iter().filter(|w| !previous.contains(w)) {
            tracing::warn!(server = %key, "{warning}");
        }
        Self::write(&self.warnings, warnings);
        Self::write(&self.tools, tools);
        self.revision.send_modify(|stamp| {
            *stamp = Stamp {
                number: stamp.number + 1,
                fetched,
                ttl: listed.ttl,
                private: listed.private,
            };
        });
    }
}

/// A connection that completed startup (transport, initialize, first `tools/list`).
pub(crate) struct Live {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) shared: Arc<ConnectionShared>,
    pub(crate) instructions: Option<String>,
    listing: Arc<Listing>,
    pub(crate) process: Option<Process>,
    /// Stops the connection's background task (the `tools/list_changed` refresh).
    cancel: CancellationToken,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    dead: AtomicBool,
    /// `true` once [`Live::shutdown`] finished.
    stopped: watch::Sender<bool>,
    /// Resources subscribed on this connection, with their users.
    pub(crate) resource_watches: crate::subscriptions::ResourceWatches,
}

/// How the connection's `tools/list_changed` refresh lists.
pub(crate) struct RefreshSettings {
    pub(crate) debounce: Duration,
    pub(crate) timeout: Duration,
    pub(crate) byte_budget: usize,
}

impl Live {
    /// A live connection; starts its `tools/list_changed` refresh task, which ends when
    /// the connection shuts down or is dropped.
    pub(crate) fn new(
        service: RunningService<RoleClient, Handler>,
        shared: Arc<ConnectionShared>,
        listed: Listed,
        fetched: SystemTime,
        process: Option<Process>,
        refresh: RefreshSettings,
        changes: Option<crate::subscriptions::ChangeListen>,
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
        tokio::spawn(refresh_on_list_changed(
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
            resource_watches: crate::subscriptions::ResourceWatches::default(),
        }
    }

    pub(crate) fn tools(&self) -> Arc<Vec<Tool>> {
        Listing::read(&self.listing.tools)
    }

    /// Warnings about the server's last tool list, each logged once when it first appears.
    pub(crate) fn warnings(&self) -> Arc<Vec<String>> {
        Listing::read(&self.listing.warnings)
    }

    /// Changes whenever the tools are listed again.
    pub(crate) fn listing_revisions(&self) -> watch::Receiver<Stamp> {
        self.listing.revision.subscribe()
    }

    /// Which listing the connection has now.
    pub(crate) fn stamp(&self) -> Stamp {
        *self.listing.revision.borrow()
    }

    /// Changes whenever the server announces that its tools changed (before the new
    /// listing is fetched).
    pub(crate) fn announcements(&self) -> watch::Receiver<u64> {
        self.listing.announced.subscribe()
    }

    /// Cancelled when the connection stops: its background tasks end with it.
    pub(crate) fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The protocol version the connection speaks (from the handshake).
    pub(crate) fn protocol_version(&self) -> ProtocolVersion {
        self.peer
            .peer_info()
            .map(|info| info.protocol_version.clone())
            .unwrap_or_default()
    }

    /// The process id (and process group id) of a stdio server.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Process::pid)
    }

    pub(crate) fn mark_dead(&self) {
        self.dead.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_alive(&self) -> bool {
        !self.dead.load(Ordering::SeqCst)
            && !self.peer.is_transport_closed()
            && self.shared.transport_end().is_none()
            && self.process.as_ref().is_none_or(|p| !p.has_exited())
    }

    /// Closes the session and stops the process (escalating to SIGKILL). Idempotent.
    pub(crate) async fn shutdown(&self) {
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

    /// Waits until [`Live::shutdown`] finished (the process is gone).
    pub(crate) async fn stopped(&self) {
        let mut rx = self.stopped.subscribe();
        let _ = rx.wait_for(|stopped| *stopped).await;
    }

    /// The failure to report when this connection died on its own.
    pub(crate) async fn death(&self) -> StartupFailure {
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

    /// Why a connection without a process is closed: what its transport reported (the
    /// legacy SSE stream could not be recovered, the server forgot the session), else that
    /// it was closed.
    pub(crate) fn closed_detail(&self) -> String {
        self.shared
            .transport_end()
            .unwrap_or_else(|| "the connection was closed".to_owned())
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        // Ends the refresh task; the process group is killed by the launcher's own Drop.
        self.cancel.cancel();
    }
}

impl mcp_pool::PooledConnection for Live {
    fn is_alive(&self) -> bool {
        Live::is_alive(self)
    }

    async fn shutdown(&self) {
        Live::shutdown(self).await;
    }
}

/// Lists the tools again after `tools/list_changed` (debounced), for every set using the
/// connection at once.
async fn refresh_on_list_changed(
    peer: Peer<RoleClient>,
    shared: Arc<ConnectionShared>,
    listing: Arc<Listing>,
    cancel: CancellationToken,
    settings: RefreshSettings,
) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = shared.tools_changed.notified() => {}
        }
        listing.announced.send_modify(|n| *n += 1);
        // Debounce: let a burst of notifications collapse into one refresh.
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(settings.debounce) => {}
        }
        let fetched = SystemTime::now();
        let listed = tokio::select! {
            () = cancel.cancelled() => return,
            r = tokio::time::timeout(settings.timeout, paginate::all_tools(&peer, settings.byte_budget)) => r,
        };
        match listed {
            Ok(Ok(tools)) => listing.set(&shared.key, tools, fetched),
            Ok(Err(e)) => {
                tracing::warn!(server = %shared.key, "refreshing tools after list_changed failed: {e}");
            }
            Err(_) => {
                tracing::warn!(server = %shared.key, "refreshing tools after list_changed timed out");
            }
        }
    }
}
