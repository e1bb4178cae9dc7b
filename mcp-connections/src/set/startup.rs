//! Starting one server: a lease from the pool, whose start is transport, initialize and
//! first `tools/list` within the startup timeout; and this set's watchers of the
//! connection it attached to.

use std::sync::Arc;

use mcp_client::{
    Client, ClientSettings, Era, FailureReason, Handshake, ListenHealth, ListenTopic, RequestError,
    StartupFailure, Target,
};

use mcp_catalog::Transport;

use crate::catalog::spec::ServerSpec;
use crate::events::ConnectionEvent;
use crate::set::inner::SetInner;
use crate::set::live::{Gate, Live};
use crate::set::slot::{Attached, Slot, SlotState, UpdatesReader};

/// Runs one start of `slot` for this set and publishes the result: a lease from the pool
/// (which starts the connection, or hands out the one that is up), attached to this set.
/// The caller holds the slot's transition lock.
///
/// `initial` starts (the set's startup round) also stop when the caller cancels startup;
/// restarts stop only when the set shuts down. Stopping only stops this set's wait: a
/// start in flight goes on in the pool for whoever else waits (and is shut down if nobody
/// takes it).
pub(crate) async fn run_start(inner: &Arc<SetInner>, slot: &Arc<Slot>, initial: bool) {
    let key = slot.spec.key.clone();
    let previous = slot.state.send_replace(SlotState::Starting);
    inner.emit(ConnectionEvent::Starting {
        server: key.clone(),
    });
    let startup_cancelled = async {
        if initial {
            inner.startup_cancel.cancelled().await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    let factory = {
        let (inner, spec, pool_key) = (Arc::clone(inner), slot.spec.clone(), slot.pool_key.clone());
        let settings = slot.settings.clone();
        move || async move {
            let (handshake, remembered) = handshake_of(&inner, &spec.key, &pool_key);
            let result = connect(&inner, &spec, settings.with_handshake(handshake)).await;
            match &result {
                Ok(live) => inner.pool.remember_era(&pool_key, Some(live.era())),
                // A remembered era that failed is probed again next time.
                Err(_) if remembered => inner.pool.remember_era(&pool_key, None),
                Err(_) => {}
            }
            result
        }
    };
    let acquired = tokio::select! {
        biased;
        () = startup_cancelled => None,
        () = inner.shutdown.cancelled() => None,
        r = inner.pool.pool.acquire(slot.pool_key.clone(), factory) => Some(r),
    };
    match acquired {
        Some(Ok(lease)) => {
            let attached = attach(inner, slot, lease);
            let tools = attached.tools().len();
            let pid = attached.pid();
            let protocol_version = attached.protocol_version().as_str().to_owned();
            tracing::info!(server = %key, tools, "MCP server ready");
            inner.remember_tools(slot, &attached);
            // State and event change together, so `StartupComplete` (sent once every state
            // settled, under the same lock) never overtakes this `Ready`.
            let _order = inner.event_order();
            let _previous = inner.publish(slot, SlotState::Ready(attached));
            inner.emit(ConnectionEvent::Ready {
                server: key,
                tools,
                pid,
                process_group: pid,
                protocol_version,
            });
        }
        Some(Err(e)) if !e.is_closed() => {
            let failure = failure_of(&key, &e, &previous);
            tracing::warn!(server = %key, reason = %failure.reason(), "MCP server failed: {failure}");
            // Only a failure the set restarts from is a crash loop to report; the others
            // wait for the host (configuration, login, a longer timeout).
            let crash_loop = failure
                .reason()
                .is_restartable()
                .then(|| inner.crash_loop(slot))
                .flatten();
            let _order = inner.event_order();
            inner.emit(ConnectionEvent::Failed {
                server: key.clone(),
                error: failure.chain(),
                reason: failure.reason().clone(),
            });
            let login = matches!(failure.reason(), FailureReason::LoginRequired);
            slot.state.send_replace(SlotState::Failed(failure));
            if let Some(crash_loop) = crash_loop {
                inner.emit(ConnectionEvent::CrashLoop {
                    server: key,
                    crash_loop,
                });
            }
            if login {
                watch_for_login(inner, slot);
            }
        }
        _ => {
            let _order = inner.event_order();
            inner.emit(ConnectionEvent::Cancelled { server: key });
            slot.state.send_replace(SlotState::Cancelled);
        }
    }
}

/// Starts the server again by itself once credentials for it appear (or change) in the
/// credential store, for example after `mcpctl login` in another process: the store is
/// read every [`login poll interval`](crate::ConnectionSetOptions::with_login_poll_interval)
/// while the server's last failure is `login_required`. One watch per server and set.
fn watch_for_login(inner: &Arc<SetInner>, slot: &Arc<Slot>) {
    let (Some(store), Some(http)) = (&inner.options.credential_store, slot.spec.http()) else {
        return;
    };
    if let Ok(mut watches) = inner.login_watches.lock()
        && !watches.insert(slot.spec.key.clone())
    {
        return;
    }
    let store = Arc::clone(store);
    let store_key = mcp_auth::StoreKey::new(&slot.spec.key, http.url());
    let (inner2, slot2) = (Arc::clone(inner), Arc::clone(slot));
    inner.tasks.spawn(async move {
        let waiting = |slot: &Slot| {
            matches!(slot.current(), SlotState::Failed(f) if matches!(f.reason(), FailureReason::LoginRequired))
        };
        let mut seen = store.load(&store_key).await.ok().flatten();
        loop {
            tokio::select! {
                () = inner2.shutdown.cancelled() => break,
                () = tokio::time::sleep(inner2.options.login_poll) => {}
            }
            if !waiting(&slot2) {
                break;
            }
            let now = store.load(&store_key).await.ok().flatten();
            let usable = now
                .as_ref()
                .is_some_and(|c| c.access_token.is_some() || c.refresh_token.is_some());
            if !usable || now == seen {
                continue;
            }
            seen = now;
            tracing::info!(server = %slot2.spec.key, "credentials appeared in the store; starting the server again");
            inner2.pool.pool.clear_backoff(&slot2.pool_key);
            let _transition = slot2.transition.lock().await;
            if waiting(&slot2) {
                run_start(&inner2, &slot2, false).await;
            }
            if !waiting(&slot2) {
                break;
            }
        }
        if let Ok(mut watches) = inner2.login_watches.lock() {
            watches.remove(&slot2.spec.key);
        }
    });
}

/// The failure a set reports for a lease it could not have: the start's own failure (the
/// pool hands it back as it is), or the one this set saw last for a crash loop.
fn failure_of(
    key: &mcp_key::McpServerKey,
    e: &crate::set::pool::AcquireError,
    previous: &SlotState,
) -> StartupFailure {
    if let (mcp_pool::PoolError::CrashLoop { .. }, SlotState::Failed(f)) = (e, previous) {
        return f.clone();
    }
    match e.failure() {
        Some(mcp_pool::Failure::Factory(failure)) => StartupFailure::clone(failure),
        Some(other) => StartupFailure::new(
            FailureReason::Transport,
            format!("MCP server `{key}` could not be started: {other}"),
        ),
        None => StartupFailure::new(
            FailureReason::Transport,
            format!("MCP server `{key}` could not be started: its connection pool is shut down"),
        ),
    }
}

/// Attaches this set to a leased connection: a session on the connection's gate (so
/// requests from the server reach this set only while its calls run) and the set's
/// watchers of the connection (its process exit, its new tool listings).
fn attach(inner: &Arc<SetInner>, slot: &Arc<Slot>, lease: mcp_pool::Lease<Live>) -> Arc<Attached> {
    let token = inner.shutdown.child_token();
    let updates = Arc::<UpdatesReader>::default();
    let attached = Arc::new(Attached::new(
        lease,
        inner.session_route(&slot.spec.key),
        Arc::clone(&updates),
        token.clone().drop_guard(),
    ));
    let live = Arc::clone(attached.live());
    inner.tasks.spawn(forward_notices(
        Arc::clone(inner),
        Arc::clone(slot),
        Arc::clone(&live),
        token.clone(),
    ));
    let (inner2, slot2) = (Arc::clone(inner), Arc::clone(slot));
    inner.tasks.spawn(async move {
        // The reader of resource updates is made once this set subscribes one (here, when
        // it had subscriptions before a restart; else by `subscribe_resource`).
        let mut reader = None;
        // The rare paths are boxed: inline, their futures (requests, a death's report)
        // would stay in this task's, one per connection and set, for the connection's life.
        Box::pin(resubscribe(&slot2, &live, &updates)).await;
        let mut listings = live.listing_revisions();
        listings.mark_unchanged();
        let mut announcements = live.announcements();
        announcements.mark_unchanged();
        let exited = live.closed();
        tokio::pin!(exited);
        loop {
            tokio::select! {
                () = token.cancelled() => return,
                () = &mut exited => {
                    Box::pin(on_death(&inner2, &slot2, &live)).await;
                    return;
                }
                changed = announcements.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    announcements.mark_unchanged();
                    inner2.forget_tools(&slot2);
                }
                changed = listings.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    listings.mark_unchanged();
                    inner2.tools_listed_again(&slot2, &live);
                }
                made = updates.ready(), if reader.is_none() => reader = made,
                update = next_of(&mut reader) => match update {
                    Ok(uri) => {
                        if slot2.resource_subscriptions.lock().await.contains(&uri) {
                            inner2.emit(ConnectionEvent::ResourceUpdated {
                                server: slot2.spec.key.clone(),
                                uri,
                            });
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(server = %slot2.spec.key, missed, "resource updates were dropped: this set took them too slowly");
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    });
    attached
}

/// Passes what a connection's server tells everyone on to this set's events until `stop`:
/// its log messages written while no set's operation ran (the connection sends them
/// straight to this set's events meanwhile, with what its rate limit dropped; those
/// written during this set's operations come through its session route), its prompt and
/// resource list changes (each burst counted once by the connection), and the health of
/// its listens (those that are down as this set attaches, then each transition).
async fn forward_notices(
    inner: Arc<SetInner>,
    slot: Arc<Slot>,
    live: Arc<Live>,
    stop: tokio_util::sync::CancellationToken,
) {
    use tokio::sync::broadcast::error::RecvError;
    let server = slot.spec.key.clone();
    // Log messages written while no set's operation runs reach this set's events
    // straight from the connection, until this returns.
    let _idle_logs = inner
        .options
        .events
        .clone()
        .map(|events| live.gate.idle_logs(events));
    let mut prompts = live.prompt_list_changes();
    let mut resources = live.resource_list_changes();
    prompts.mark_unchanged();
    resources.mark_unchanged();
    // Only a 2026-era connection has listens: a 2025-era one's feed would never carry a
    // transition, and taking it would make the connection's channel for them.
    let mut listens = if live.era() == Era::V2026_07_28 {
        let feed = live.listen_health();
        for health in feed.current {
            if let Some(event) = listen_event(&slot, health).await {
                inner.emit(event);
            }
        }
        Some(feed.changes)
    } else {
        None
    };
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => return,
            Ok(()) = prompts.changed() => ConnectionEvent::PromptsChanged { server: server.clone() },
            Ok(()) = resources.changed() => ConnectionEvent::ResourcesChanged { server: server.clone() },
            health = next_of(&mut listens) => match health {
                Ok(health) => match listen_event(&slot, health).await {
                    Some(event) => event,
                    None => continue,
                },
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(%server, missed = n, "listen health transitions were dropped: this set took them too slowly");
                    continue;
                }
                Err(RecvError::Closed) => return,
            },
        };
        inner.emit(event);
    }
}

/// The next message of `receiver`; never, while there is none (a connection without
/// listens, or before this set reads the connection's resource updates).
async fn next_of<T: Clone>(
    receiver: &mut Option<tokio::sync::broadcast::Receiver<T>>,
) -> Result<T, tokio::sync::broadcast::error::RecvError> {
    match receiver {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// The event of a listen's transition, for this set: the listens for a resource's updates
/// only when this set subscribed to it.
async fn listen_event(slot: &Slot, health: ListenHealth) -> Option<ConnectionEvent> {
    if let ListenTopic::Resource { uri } = health.topic()
        && !slot.resource_subscriptions.lock().await.contains(uri)
    {
        return None;
    }
    let server = slot.spec.key.clone();
    Some(match health {
        ListenHealth::Lost { topic, reason } => ConnectionEvent::ListenLost {
            server,
            topic,
            reason,
        },
        ListenHealth::Restored { topic } => ConnectionEvent::ListenRestored { server, topic },
        ListenHealth::Refused { topic, reason } => ConnectionEvent::ListenRefused {
            server,
            topic,
            reason,
        },
        // A kind of transition this set does not know yet.
        _ => return None,
    })
}

/// Makes this set's resource subscriptions on a connection it attached to (after a
/// restart the new connection has none). Failures are logged: the server may have lost the
/// capability, and the host learns nothing new by an error here.
async fn resubscribe(slot: &Slot, live: &Live, updates: &UpdatesReader) {
    let uris: Vec<String> = slot
        .resource_subscriptions
        .lock()
        .await
        .iter()
        .cloned()
        .collect();
    if !uris.is_empty() {
        updates.make(live);
    }
    for uri in uris {
        if let Err(e) = live.watch_resource(&uri).await {
            let e: RequestError = e;
            tracing::warn!(server = %slot.spec.key, %uri, "subscribing again after a restart failed: {e}");
        }
    }
}

/// Marks the slot failed when its live connection died, if that connection is still the
/// one this set uses, and reports the death to the pool (which counts it once, however
/// many sets report it).
pub(crate) async fn on_death(inner: &Arc<SetInner>, slot: &Arc<Slot>, live: &Arc<Live>) {
    live.mark_dead();
    let failure = live.death().await;
    let _transition = slot.transition.lock().await;
    let generation = match slot.current() {
        SlotState::Ready(attached) if Arc::ptr_eq(attached.live(), live) => {
            attached.lease.generation()
        }
        _ => return,
    };
    inner.pool.pool.report_dead(&slot.pool_key, generation);
    let crash_loop = failure
        .reason()
        .is_restartable()
        .then(|| inner.crash_loop(slot))
        .flatten();
    tracing::warn!(server = %slot.spec.key, ?crash_loop, "MCP server died: {failure}");
    // State and revision first: whoever sees the event sees the server failed and its
    // tools gone from the catalog.
    let event = ConnectionEvent::Failed {
        server: slot.spec.key.clone(),
        error: failure.chain(),
        reason: failure.reason().clone(),
    };
    let _order = inner.event_order();
    let restartable = failure.reason().is_restartable();
    let _previous = inner.publish(slot, SlotState::Failed(failure));
    inner.emit(event);
    // Its tools are still listed, now as not ready: the catalog changed.
    if restartable && slot.last_listing().is_some() {
        inner.emit(ConnectionEvent::ToolsChanged {
            server: slot.spec.key.clone(),
            revision: inner.revision.load(std::sync::atomic::Ordering::SeqCst),
        });
    }
    if let Some(crash_loop) = crash_loop {
        inner.emit(ConnectionEvent::CrashLoop {
            server: slot.spec.key.clone(),
            crash_loop,
        });
    }
}

/// The handshake a start of `key` opens with: its `protocol` setting, and under `auto`
/// the era its connection spoke last time (no probe: from the pool, or from the catalog
/// cache for a new process), else a `server/discover` probe that falls back to
/// `initialize`. Also says whether the choice follows a remembered era.
fn handshake_of(
    inner: &SetInner,
    key: &mcp_key::McpServerKey,
    pool_key: &crate::set::pool::ConnectionKey,
) -> (Handshake, bool) {
    match inner.catalog.protocol(key) {
        mcp_catalog::ProtocolChoice::V2025_11_25 => (Handshake::Initialize, false),
        mcp_catalog::ProtocolChoice::V2026_07_28 => (Handshake::Discover, false),
        _ => match inner
            .pool
            .remembered_era(pool_key)
            .or_else(|| inner.cached_era(key, pool_key))
        {
            Some(Era::V2026_07_28) => (Handshake::Discover, true),
            Some(_) => (Handshake::Initialize, true),
            None => (Handshake::Probe, false),
        },
    }
}

/// Starts one connection (the pool calls this once per start, whoever asked): the
/// server's target and the slot's client settings with this start's handshake, handed to
/// [`Client::connect`].
async fn connect(
    inner: &Arc<SetInner>,
    spec: &ServerSpec,
    settings: ClientSettings,
) -> Result<Live, StartupFailure> {
    let key = &spec.key;
    if let Some(problem) = &spec.environment_problem {
        return Err(StartupFailure::new(
            FailureReason::Environment,
            problem.clone(),
        ));
    }
    if let Some(why) = spec.unusable() {
        return Err(StartupFailure::new(
            FailureReason::Config,
            format!("MCP server `{key}`: {why}"),
        ));
    }
    let target = match spec.config.transport() {
        Transport::Stdio(config) => Target::Stdio {
            config: config.clone(),
            environment: spec
                .environment()
                .and_then(|e| inner.environments.get(e))
                .cloned(),
        },
        #[cfg(feature = "http")]
        Transport::StreamableHttp(http) => Target::Http(inner.http_target(key, http, false)?),
        #[cfg(feature = "http")]
        Transport::Sse(http) => Target::Http(inner.http_target(key, http, true)?),
        _ => {
            return Err(StartupFailure::new(
                FailureReason::Config,
                format!(
                    "MCP server `{key}` is an HTTP server, but this host was built without HTTP support (mcp-connections feature `http`); rebuild with it, or use a stdio server"
                ),
            ));
        }
    };
    let settings = settings.with_background(inner.tasks.clone(), inner.shutdown.clone());
    let gate = Arc::new(Gate::default());
    let requests: Arc<dyn mcp_client::ServerRequests> = Arc::clone(&gate) as _;
    let client = Client::connect(key.clone(), target, settings, requests).await?;
    gate.set_modern(client.era() == mcp_client::Era::V2026_07_28);
    Ok(Live::new(client, gate))
}
