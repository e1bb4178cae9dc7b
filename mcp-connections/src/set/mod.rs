//! The connection set: construction, startup, state queries and shutdown.

pub(crate) mod approvals_impl;
pub(crate) mod authority_impl;
pub(crate) mod call;
pub(crate) mod completions;
pub(crate) mod events_impl;
pub(crate) mod from_catalog;
#[cfg(feature = "http")]
pub(crate) mod http_auth;
pub(crate) mod inner;
pub(crate) mod live;
pub(crate) mod options;
pub(crate) mod pins_impl;
pub(crate) mod pool;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod search_impl;
pub(crate) mod server_info;
pub(crate) mod skill_state;
pub(crate) mod skills_impl;
pub(crate) mod slot;
pub(crate) mod startup;
pub(crate) mod subscriptions;
pub(crate) mod tools;
pub(crate) mod webhook_lease;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Duration;

use mcp_catalog::ResolvedCatalog;
use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::catalog::spec::ServerSpec;
use crate::error::{Error, Result};
use crate::events::ConnectionEvent;
use crate::set::inner::{SetInner, known_servers_hint};
use crate::set::options::ConnectionSetOptions;
use crate::set::pool::ServerPool;
use crate::set::slot::{Slot, SlotState};
pub(crate) use crate::status::{ServerStatus, StartupSummary};
use mcp_client::FailureReason;
use mcp_client::StartupFailure;

/// The connection set: every enabled server of a catalog, started concurrently, with their
/// tools and resources aggregated. Cheap to clone (a handle).
///
/// Create it with [`ConnectionSet::start`] inside a tokio runtime; end it with
/// [`ConnectionSet::shutdown`]. Dropping the last handle without shutdown still kills every
/// stdio process (the launcher's `Drop`), but does not wait for them.
#[derive(Clone)]
pub struct ConnectionSet {
    pub(crate) inner: Arc<SetInner>,
    /// Cancels `inner.shutdown` when the last handle is dropped, so background tasks end and
    /// release the connections (whose processes are then killed by the launcher's `Drop`).
    _lifetime: Arc<tokio_util::sync::DropGuard>,
}

impl std::fmt::Debug for ConnectionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionSet")
            .field("servers", &self.inner.slots.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ConnectionSet {
    /// Starts every exposed, enabled server of `catalog` concurrently and returns at once.
    /// Observe progress through the events channel of `options`, [`Self::wait_startup`],
    /// [`Self::wait_required`] or [`Self::status`].
    pub fn start(catalog: &ResolvedCatalog, options: ConnectionSetOptions) -> Self {
        let (pool, owns_pool) = match &options.shared_pool {
            Some(pool) => (pool.clone(), false),
            None => (
                ServerPool::with_config(
                    mcp_pool::PoolConfig::new()
                        .with_backoff(options.restart_backoff, options.restart_backoff_max),
                ),
                true,
            ),
        };
        Self::start_with_pool(catalog, options, None, pool, owns_pool)
    }

    pub(crate) fn start_with_pool(
        catalog: &ResolvedCatalog,
        options: ConnectionSetOptions,
        authority: Option<crate::policy::authority::AuthorityCell>,
        pool: ServerPool,
        owns_pool: bool,
    ) -> Self {
        let mut specs = crate::set::from_catalog::specs(catalog);
        let environments = crate::set::from_catalog::environments(catalog, &options);
        crate::set::from_catalog::check_environments(&mut specs, &environments);
        let naming = crate::set::from_catalog::naming(catalog);
        let by_name = crate::set::from_catalog::legacy_names(catalog, &specs);
        let multi_environment = catalog.multi_environment();
        let startup_cancel = options.cancel.child_token();
        let slots = slots(catalog, &options, specs);
        // A replacement set shares its predecessor's live authority.
        let authority = authority.unwrap_or_else(|| {
            crate::policy::authority::AuthorityCell::new(options.authority.clone())
        });
        let inner = Arc::new(SetInner {
            authority,
            options,
            slots,
            naming,
            multi_environment,
            catalog: catalog.clone(),
            environments,
            approvals: std::sync::Mutex::default(),
            by_name,
            revision: AtomicU64::new(0),
            event_order: std::sync::Mutex::new(()),
            catalog_cache: std::sync::Mutex::new(None),
            search: std::sync::Mutex::default(),
            drift: std::sync::Mutex::default(),
            name_history: std::sync::Mutex::default(),
            tasks: TaskTracker::new(),
            startup_cancel,
            shutdown: CancellationToken::new(),
            abort_calls: CancellationToken::new(),
            login_watches: std::sync::Mutex::default(),
            pool,
            owns_pool: AtomicBool::new(owns_pool),
            skills: crate::set::skill_state::SkillState::default(),
            event_feeds: Arc::default(),
        });
        let lifetime = Arc::new(inner.shutdown.clone().drop_guard());
        start_servers(&inner);
        announce_startup(&inner);
        Self {
            inner,
            _lifetime: lifetime,
        }
    }

    /// The keys of every server in the set, sorted.
    pub fn servers(&self) -> impl Iterator<Item = &McpServerKey> {
        self.inner.slots.keys()
    }

    /// The key that answers for a bare server name (the legacy winner).
    pub fn resolve_name(&self, name: &ServerName) -> Option<&McpServerKey> {
        self.inner.by_name.get(name)
    }

    /// The server a caller means by a name and an optional environment.
    ///
    /// With an environment: the server of that name scoped to it (for `local`, the unscoped
    /// server if there is no `local`-scoped one). Without one: with multi-environment
    /// exposure, the only server of that name, or [`Error::AmbiguousServer`] listing the
    /// candidates when several environments have one; without exposure, the legacy winner.
    pub fn server_key(
        &self,
        name: &ServerName,
        environment: Option<&EnvironmentId>,
    ) -> Result<McpServerKey> {
        let candidates: Vec<&McpServerKey> = self
            .inner
            .slots
            .keys()
            .filter(|k| k.name() == name)
            .collect();
        let unknown = || Error::UnknownServer {
            server: match environment {
                Some(env) => format!("{name}@{env}"),
                None => name.to_string(),
            },
            hint: known_servers_hint(self.inner.slots.keys()),
        };
        if let Some(env) = environment {
            let scoped = candidates.iter().find(|k| k.environment() == Some(env));
            let fallback = env
                .is_local()
                .then(|| candidates.iter().find(|k| !k.is_scoped()))
                .flatten();
            return scoped
                .or(fallback)
                .map(|k| (*k).clone())
                .ok_or_else(unknown);
        }
        if !self.inner.multi_environment {
            return self.inner.by_name.get(name).cloned().ok_or_else(unknown);
        }
        match candidates.as_slice() {
            [] => Err(unknown()),
            [one] => Ok((*one).clone()),
            many => Err(Error::AmbiguousServer {
                name: name.to_string(),
                candidates: many.iter().map(|k| (*k).clone()).collect(),
            }),
        }
    }

    /// Whether multi-environment exposure is on (from the catalog).
    pub fn multi_environment(&self) -> bool {
        self.inner.multi_environment
    }

    /// A namer with the catalog's naming options, the ones [`Self::tools`] are named with:
    /// for naming other per-server items (prompts, say) the same way.
    pub fn namer(&self) -> mcp_key::ToolNamer {
        mcp_key::ToolNamer::new(self.inner.naming.clone())
    }

    /// The current state of every server, sorted by key. Does not wait.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.inner
            .slots
            .values()
            .map(|slot| status_of(&self.inner, slot, &slot.current()))
            .collect()
    }

    /// Events dropped because the channel given to
    /// [`ConnectionSetOptions::with_events_bounded`] was full; 0 with an unbounded channel
    /// or none.
    pub fn dropped_events(&self) -> u64 {
        self.inner
            .options
            .events
            .as_ref()
            .map_or(0, |s| s.dropped())
    }

    /// The catalog revision: bumped whenever a server becomes ready, fails, or changes its
    /// tools.
    pub fn revision(&self) -> u64 {
        self.inner
            .revision
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits until every server settled (ready, failed or cancelled).
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting.
    pub async fn wait_startup(&self) -> StartupSummary {
        let mut servers = Vec::with_capacity(self.inner.slots.len());
        for slot in self.inner.slots.values() {
            let state = slot.settled().await;
            servers.push(status_of(&self.inner, slot, &state));
        }
        StartupSummary { servers }
    }

    /// Waits for the required servers and fails with one error listing every required
    /// server that did not become ready, with its reason.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn wait_required(&self) -> Result<()> {
        let mut failures = Vec::new();
        for (key, slot) in &self.inner.slots {
            if !slot.spec.config.required() {
                continue;
            }
            match slot.settled().await {
                SlotState::Ready(_) | SlotState::Deferred(_) => {}
                SlotState::Failed(f) => failures.push((key.clone(), f)),
                SlotState::Cancelled | SlotState::Starting => failures.push((
                    key.clone(),
                    StartupFailure::new(
                        FailureReason::Cancelled,
                        format!("MCP server `{key}`: startup was cancelled"),
                    ),
                )),
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Error::RequiredServersFailed { failures })
        }
    }

    /// Cancels starts that are still running: those servers become `cancelled`; servers
    /// that are ready stay ready.
    pub fn cancel_startup(&self) {
        self.inner.startup_cancel.cancel();
    }

    /// Applies a changed catalog without disturbing what did not change: returns a new set
    /// for `catalog` (same options, same pool, the approvals remembered for this session)
    /// and retires this one.
    ///
    /// - A server whose connection fingerprint is unchanged and that is up is reused: same
    ///   connection, same process, no new `tools/list`.
    /// - A changed server (transport, command, URL, referenced variable values,
    ///   environment, auth) gets a new connection; the old one stops once nothing uses it.
    /// - A removed server stops; an added one starts.
    /// - Policy-only changes (tool filters, call timeouts, approval modes, descriptions)
    ///   change no fingerprint, so they restart nothing.
    ///
    /// Calls in flight on this set finish on the connection they started on; new calls on
    /// this set fail with [`Error::ShutDown`]. The new set emits its own events (a reused
    /// server goes `starting` → `ready` at once). Returns once the new set holds every
    /// connection it reuses, so none of them is stopped in between.
    pub async fn replace(&self, catalog: &ResolvedCatalog) -> ConnectionSet {
        let owns_pool = self
            .inner
            .owns_pool
            .swap(false, std::sync::atomic::Ordering::SeqCst);
        let next = Self::start_with_pool(
            catalog,
            self.inner.options.clone(),
            Some(self.inner.authority.clone()),
            self.inner.pool.clone(),
            owns_pool,
        );
        if let (Ok(old), Ok(mut new)) = (self.inner.approvals.lock(), next.inner.approvals.lock()) {
            new.extend(
                old.iter()
                    .filter(|((key, _), _)| next.inner.slots.contains_key(key))
                    .map(|(k, v)| (k.clone(), *v)),
            );
        }
        for (key, slot) in &next.inner.slots {
            let reused = self.inner.slots.get(key).is_some_and(|old| {
                old.pool_key == slot.pool_key && matches!(old.current(), SlotState::Ready(_))
            });
            if reused {
                let _ =
                    tokio::time::timeout(slot.spec.config.startup_timeout(), slot.settled()).await;
            }
        }
        self.retire().await;
        next
    }

    /// Lets go of this set's connections without stopping calls in flight (they keep the
    /// connection they run on until they finish); new calls fail with `ShutDown`.
    async fn retire(&self) {
        let inner = &self.inner;
        inner.startup_cancel.cancel();
        inner.shutdown.cancel();
        let _ = inner.release_all(inner.options.shutdown_timeout).await;
    }

    /// Stops every server and waits for their processes to be gone, bounded per server by
    /// the shutdown timeout (10 s by default). Idempotent. Processes of servers that failed
    /// (and are still being stopped in the background, since failures are reported before
    /// their process is gone) are killed at once and waited for too.
    ///
    /// One process stays, by design: the launcher's reaper helper (`/bin/sh` named
    /// `mcp-pool-reaper`), one per host process, started by the first stdio launch. It
    /// owns no server; it is what kills the servers' process groups if the host itself is
    /// SIGKILLed, so it lives as long as the host. A host's own check for leftover
    /// processes tells it apart by [`Self::reaper_pid`].
    ///
    /// # Cancel safety
    /// The shutdown runs on its own task: it completes even if this future is dropped.
    pub async fn shutdown(&self) {
        self.shutdown_inner().await;
    }

    /// The pid of the launcher's reaper helper, the one process a [`Self::shutdown`]
    /// leaves running (see there), or `None` before any stdio server was launched in this
    /// host process. Not a server: a leak check skips it.
    #[cfg(unix)]
    pub fn reaper_pid() -> Option<u32> {
        mcp_pool::reaper_pid()
    }

    async fn shutdown_inner(&self) {
        let inner = Arc::clone(&self.inner);
        let task = tokio::spawn(async move {
            inner.startup_cancel.cancel();
            inner.shutdown.cancel();
            inner.abort_calls.cancel();
            let per_server = inner.options.shutdown_timeout;
            let released = inner.release_all(per_server).await;
            inner.persist_cache();
            if inner
                .owns_pool
                .swap(false, std::sync::atomic::Ordering::SeqCst)
            {
                let bound = per_server.saturating_add(Duration::from_secs(1));
                if tokio::time::timeout(bound, inner.pool.shutdown())
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        "shutting the connections down timed out; their process groups are killed when they are dropped"
                    );
                }
            } else {
                // A shared pool: wait for the connections this set was the last user of.
                let mut stops = tokio::task::JoinSet::new();
                for (key, live) in released {
                    if inner.pool.pool.stats().leases.contains_key(&key)
                        || matches!(
                            inner.pool.pool.status(&key),
                            mcp_pool::KeyStatus::Idle { .. }
                        )
                    {
                        continue;
                    }
                    stops.spawn(async move {
                        let _ = tokio::time::timeout(per_server, live.stopped()).await;
                    });
                }
                while stops.join_next().await.is_some() {}
            }
            inner.tasks.close();
            let _ = tokio::time::timeout(Duration::from_secs(5), inner.tasks.wait()).await;
        });
        let _ = task.await;
    }
}

fn status_of(inner: &SetInner, slot: &Slot, state: &SlotState) -> ServerStatus {
    ServerStatus {
        key: slot.spec.key.clone(),
        state: state.to_server_state(),
        required: slot.spec.config.required(),
        warnings: match state {
            SlotState::Ready(live) => live.warnings().as_ref().clone(),
            _ => Vec::new(),
        },
        pid: pid_of(state),
        process_group: pid_of(state),
        protocol_version: match state {
            SlotState::Ready(live) => Some(live.protocol_version().as_str().to_owned()),
            _ => None,
        },
        crash_loop: match state {
            SlotState::Failed(f) if f.reason().is_restartable() => inner.crash_loop(slot),
            _ => None,
        },
        plugin: crate::catalog::tool_info::PluginOrigin::of(&inner.catalog, &slot.spec.key),
        transport: slot.spec.config.transport().label(),
    }
}

fn pid_of(state: &SlotState) -> Option<u32> {
    match state {
        SlotState::Ready(live) => live.pid(),
        _ => None,
    }
}

/// Each server's slot, starting: its spec with the client settings and the pool key the
/// catalog and the options give it.
fn slots(
    catalog: &ResolvedCatalog,
    options: &ConnectionSetOptions,
    specs: Vec<ServerSpec>,
) -> BTreeMap<McpServerKey, Arc<Slot>> {
    specs
        .into_iter()
        .map(|s| {
            let settings = crate::set::from_catalog::client_settings(catalog, options, &s);
            let pool_key =
                crate::set::from_catalog::connection_key(catalog, options, &s, &settings);
            (
                s.key.clone(),
                Arc::new(Slot::new(s, settings, pool_key, SlotState::Starting)),
            )
        })
        .collect()
}

/// Starts every server of a new set on its tasks: a server with a cached listing under
/// `lazy_when_cached` is deferred instead, and with `cache_only` nothing starts (a server
/// without a cached listing shows as cancelled).
fn start_servers(inner: &Arc<SetInner>) {
    for slot in inner.slots.values() {
        if let Some(cached) = inner.deferred_tools(&slot.spec.key, &slot.pool_key) {
            let tools = cached.tools.len();
            tracing::info!(server = %slot.spec.key, tools, age = ?cached.age(), "MCP server deferred: its tools come from the cache until first use");
            let _order = inner.event_order();
            slot.state
                .send_replace(SlotState::Deferred(Arc::new(cached)));
            inner.emit(ConnectionEvent::Deferred {
                server: slot.spec.key.clone(),
                tools,
            });
            continue;
        }
        if inner.options.cache_only {
            // Nothing starts: a server without a cached listing shows as cancelled.
            let _order = inner.event_order();
            slot.state.send_replace(SlotState::Cancelled);
            inner.emit(ConnectionEvent::Cancelled {
                server: slot.spec.key.clone(),
            });
            continue;
        }
        let (inner2, slot2) = (Arc::clone(inner), Arc::clone(slot));
        // In the starter's span: each server's handshake is part of its trace.
        let start = async move {
            let _guard = slot2.transition.lock().await;
            startup::run_start(&inner2, &slot2, true).await;
        };
        inner
            .tasks
            .spawn(tracing::Instrument::in_current_span(start));
    }
}

/// Emits [`ConnectionEvent::StartupComplete`] once every server of the startup round
/// settled (deferred ones are not part of it), after saving the tool cache.
fn announce_startup(inner: &Arc<SetInner>) {
    let inner2 = Arc::clone(inner);
    inner.tasks.spawn(async move {
        let mut ready = Vec::new();
        let mut failed = Vec::new();
        let mut cancelled = Vec::new();
        for (key, slot) in &inner2.slots {
            match slot.settled().await {
                // Deferred servers are not part of the startup round.
                SlotState::Deferred(_) => {}
                SlotState::Ready(_) => ready.push(key.clone()),
                SlotState::Failed(_) => failed.push(key.clone()),
                SlotState::Cancelled | SlotState::Starting => cancelled.push(key.clone()),
            }
        }
        inner2.persist_cache();
        let _order = inner2.event_order();
        inner2.emit(ConnectionEvent::StartupComplete {
            ready,
            failed,
            cancelled,
        });
    });
}
