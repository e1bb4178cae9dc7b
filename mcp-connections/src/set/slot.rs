//! One configured server as one connection set sees it ([`Slot`]): its state for this
//! set's status and events, and this set's attachment to the shared connection (a pool
//! lease plus a session on the connection's gate). Starting, restarting, crash-loop
//! backoff and generations are the pool's business, not the slot's.

use std::ops::Deref;
use std::sync::Arc;

use mcp_pool::{Lease, OperationGuard, Session};
use tokio::sync::watch;
use tokio_util::sync::DropGuard;

use crate::catalog::spec::ServerSpec;
use crate::catalog::tool_cache::CachedTools;
use crate::set::live::Live;
use crate::set::live::SessionRoute;
use crate::set::pool::ConnectionKey;
use crate::status::ServerState;
use mcp_client::{ClientSettings, StartupFailure};

/// Where a server is in its life, as this set sees it.
#[derive(Clone)]
pub(crate) enum SlotState {
    /// A start is running (or this set waits for one another set began).
    Starting,
    /// Not started: its tools come from the catalog cache until first use.
    /// (Annotations cleared: not trusted until the live server confirms them.)
    Deferred(Arc<CachedTools>),
    /// Connected and listed.
    Ready(Arc<Attached>),
    /// The last start failed, or the live connection died.
    Failed(StartupFailure),
    /// The start was cancelled, or the set shut down.
    Cancelled,
}

impl SlotState {
    pub(crate) fn is_settled(&self) -> bool {
        !matches!(self, Self::Starting)
    }

    /// The state as a host reads it.
    pub(crate) fn to_server_state(&self) -> ServerState {
        match self {
            Self::Starting => ServerState::Starting,
            Self::Deferred(cached) => ServerState::Deferred {
                tools: cached.tools.len(),
                cached_at: cached.fetched_at,
            },
            Self::Ready(live) => ServerState::Ready {
                tools: live.tools().len(),
            },
            Self::Failed(f) => ServerState::Failed(f.clone()),
            Self::Cancelled => ServerState::Cancelled,
        }
    }

    /// The state with the failure's whole text, for a message that carries no source (a
    /// listing's failures are text).
    pub(crate) fn describe(&self) -> String {
        let state = self.to_server_state();
        match self {
            Self::Failed(f) => format!("{}: {}", state.in_words(), f.chain()),
            _ => state.in_words(),
        }
    }
}

/// This set's share of a live connection: its pool lease and its session on the
/// connection's gate. Calls in flight hold a clone of the `Arc`, so a connection the set
/// lets go of (a restart, `replace`, shutdown) stays up until they finish; the lease is
/// given back when the last clone is dropped.
pub(crate) struct Attached {
    /// Declared first so the session closes before the lease is released.
    pub(crate) session: Session<SessionRoute>,
    pub(crate) lease: Lease<Live>,
    /// This set's reader of the connection's resource updates, made at its first use and
    /// taken by the watcher.
    pub(crate) updates: Arc<UpdatesReader>,
    /// Stops this set's watchers of the connection (exit, new listings).
    _watchers: DropGuard,
}

impl Attached {
    pub(crate) fn new(
        lease: Lease<Live>,
        route: SessionRoute,
        updates: Arc<UpdatesReader>,
        watchers: DropGuard,
    ) -> Self {
        let session = lease.gate.sessions.open_session(route);
        Self {
            session,
            lease,
            updates,
            _watchers: watchers,
        }
    }

    /// Waits for this set's turn on the connection and holds it for one operation (a
    /// call, a read) while the guard lives. Sets sharing a connection take turns only
    /// when the server can send them requests (elicitation was announced): then a request
    /// reaches the set whose operation caused it. Otherwise they never wait.
    pub(crate) async fn turn(&self) -> Option<OperationGuard<SessionRoute>> {
        if self.lease.announces_requests() {
            Some(self.session.begin().await)
        } else {
            None
        }
    }

    /// Marks one 2026-era call of this set as in flight while the mark lives (it takes no
    /// turn): the server's log messages read meanwhile are this set's when no other set's
    /// call runs (see [`crate::set::live::Gate`]).
    pub(crate) fn mark_call(&self) -> Option<crate::set::live::CallMark> {
        let route = self.session.handler()?;
        Some(self.lease.gate.mark_call(self.session.id(), route))
    }

    /// The shared connection.
    pub(crate) fn live(&self) -> &Arc<Live> {
        self.lease.connection()
    }
}

impl Deref for Attached {
    type Target = Live;

    fn deref(&self) -> &Live {
        self.lease.connection()
    }
}

/// This set's reader of a connection's `notifications/resources/updated` URIs, made only
/// once the set subscribes a resource: the connection makes the channel behind it (a few
/// KiB of slots) for its first reader, and most connections never have one. It is made
/// before the subscription's request is sent, so no update of it is missed, and handed to
/// the set's watcher of the connection, which holds no [`Attached`] (that would keep the
/// watcher alive for good).
#[derive(Default)]
pub(crate) struct UpdatesReader {
    made: std::sync::atomic::AtomicBool,
    reader: std::sync::Mutex<Option<tokio::sync::broadcast::Receiver<String>>>,
    ready: tokio::sync::Notify,
}

impl UpdatesReader {
    /// Makes the reader on `live`, once; the watcher takes it when [`Self::ready`] wakes it.
    pub(crate) fn make(&self, live: &Live) {
        if self.made.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        if let Ok(mut reader) = self.reader.lock() {
            *reader = Some(live.resource_updates());
        }
        self.ready.notify_one();
    }

    /// Waits until the reader is made, then takes it (`None` only if its lock was poisoned).
    pub(crate) async fn ready(&self) -> Option<tokio::sync::broadcast::Receiver<String>> {
        self.ready.notified().await;
        self.reader.lock().ok()?.take()
    }
}

/// One configured server.
pub(crate) struct Slot {
    pub(crate) spec: ServerSpec,
    /// The settings this set opens the server's connections with (each start adds its
    /// handshake); [`Slot::pool_key`] is derived from them.
    pub(crate) settings: ClientSettings,
    /// The connection this server needs (server key + fingerprint): sets and
    /// generations with the same key share one connection.
    pub(crate) pool_key: ConnectionKey,
    pub(crate) state: watch::Sender<SlotState>,
    /// Held while this set moves the slot through a start, so its events keep their
    /// order. Single flight across sets is the pool's (one start per key).
    pub(crate) transition: tokio::sync::Mutex<()>,
    /// The resources this set subscribed to on this server
    /// ([`crate::ConnectionSet::subscribe_resource`]); made again on a new connection.
    pub(crate) resource_subscriptions: tokio::sync::Mutex<std::collections::BTreeSet<String>>,
    /// The tools the server listed when its last connection of this set ended (a crash),
    /// for the catalog while it is down or restarting: still listed and searchable,
    /// marked not ready, so a model can find them and a call brings the server back.
    last_listing: std::sync::Mutex<Option<Arc<Vec<rmcp::model::Tool>>>>,
}

impl Slot {
    pub(crate) fn new(
        spec: ServerSpec,
        settings: ClientSettings,
        pool_key: ConnectionKey,
        initial: SlotState,
    ) -> Self {
        Self {
            spec,
            settings,
            pool_key,
            state: watch::channel(initial).0,
            transition: tokio::sync::Mutex::new(()),
            resource_subscriptions: tokio::sync::Mutex::new(std::collections::BTreeSet::new()),
            last_listing: std::sync::Mutex::new(None),
        }
    }

    /// Keeps `tools` as the listing of the connection this set just left.
    pub(crate) fn remember_listing(&self, tools: Arc<Vec<rmcp::model::Tool>>) {
        *self
            .last_listing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(tools);
    }

    /// The tools the server listed on the last connection this set left, if any.
    pub(crate) fn last_listing(&self) -> Option<Arc<Vec<rmcp::model::Tool>>> {
        self.last_listing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn current(&self) -> SlotState {
        self.state.borrow().clone()
    }

    /// Waits until the state is settled (not `Starting`) and returns it.
    pub(crate) async fn settled(&self) -> SlotState {
        let mut rx = self.state.subscribe();
        match rx.wait_for(SlotState::is_settled).await {
            Ok(s) => s.clone(),
            Err(_) => SlotState::Cancelled,
        }
    }
}
