//! Starting one server: a lease from the pool, whose start is transport, initialize and
//! first `tools/list` within the startup timeout; and this set's watchers of the
//! connection it attached to.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, RunningService};

use crate::connection::{Live, RefreshSettings};
use crate::era::{
    EraPlan, answered_as_legacy, check_protocol_version, era_plan, probe_may_explain,
};
use crate::error::StartupFailure;
use crate::events::{ConnectionEvent, FailureReason};
use crate::handler::{ConnectionShared, Handler};
#[cfg(feature = "http")]
use crate::http::{self, HttpTarget};
use crate::inner::SetInner;
use crate::paginate::{self, PageError};
use crate::slot::{Attached, Slot, SlotState};
use crate::spec::{ServerSpec, TransportSpec};
use crate::stdio;

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
        move || async move {
            let era = era_plan(&inner, &spec.key, &pool_key);
            let result = connect(&inner, &spec, &era).await;
            match &result {
                Ok(live) => inner.pool.remember_era(
                    &pool_key,
                    Some(live.protocol_version() == ProtocolVersion::V_2026_07_28),
                ),
                // A remembered era that failed is probed again next time.
                Err(_) if era.remembered => inner.pool.remember_era(&pool_key, None),
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
                error: failure.to_string(),
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
    let (Some(store), Some(http)) = (&inner.options.credential_store, slot.spec.transport.http())
    else {
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

/// The failure a set reports for a lease it could not have.
fn failure_of(
    key: &mcp_key::McpServerKey,
    e: &mcp_pool::PoolError,
    previous: &SlotState,
) -> StartupFailure {
    match e {
        mcp_pool::PoolError::StartFailed { source, .. } => {
            match source.downcast_ref::<StartupFailure>() {
                Some(failure) => failure.clone(),
                None => StartupFailure::new(
                    FailureReason::Transport,
                    format!(
                        "MCP server `{key}`: {}",
                        mcp_key::error_chain(source.as_ref())
                    ),
                ),
            }
        }
        other => match previous {
            SlotState::Failed(f) => f.clone(),
            _ => StartupFailure::new(
                FailureReason::Transport,
                format!("MCP server `{key}`: {other}"),
            ),
        },
    }
}

/// Attaches this set to a leased connection: a session on the connection's gate (so
/// requests from the server reach this set only while its calls run) and the set's
/// watchers of the connection (its process exit, its new tool listings).
fn attach(inner: &Arc<SetInner>, slot: &Arc<Slot>, lease: mcp_pool::Lease<Live>) -> Arc<Attached> {
    let token = inner.shutdown.child_token();
    let attached = Arc::new(Attached::new(
        lease,
        inner.session_route(&slot.spec.key),
        token.clone().drop_guard(),
    ));
    let live = Arc::clone(attached.live());
    let (inner2, slot2) = (Arc::clone(inner), Arc::clone(slot));
    inner.tasks.spawn(async move {
        let mut updates = live.shared.resource_updates.subscribe();
        resubscribe(&slot2, &live).await;
        let mut listings = live.listing_revisions();
        listings.mark_unchanged();
        let mut announcements = live.announcements();
        announcements.mark_unchanged();
        let exited = async {
            match &live.process {
                Some(p) => {
                    p.wait_exit().await;
                }
                None => live.shared.transport_ended().await,
            }
        };
        tokio::pin!(exited);
        loop {
            tokio::select! {
                () = token.cancelled() => return,
                () = &mut exited => {
                    on_death(&inner2, &slot2, &live).await;
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
                update = updates.recv() => match update {
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

/// Makes this set's resource subscriptions on a connection it attached to (after a
/// restart the new connection has none). Failures are logged: the server may have lost the
/// capability, and the host learns nothing new by an error here.
async fn resubscribe(slot: &Slot, live: &Live) {
    let uris: Vec<String> = slot
        .resource_subscriptions
        .lock()
        .await
        .iter()
        .cloned()
        .collect();
    for uri in uris {
        if let Err(e) = live.watch_resource(&slot.spec.key, &uri).await {
            let detail = match e {
                crate::subscriptions::WatchError::Unsupported(d) => d,
                crate::subscriptions::WatchError::Service(e) => e.to_string(),
            };
            tracing::warn!(server = %slot.spec.key, %uri, "subscribing again after a restart failed: {detail}");
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
        error: failure.to_string(),
        reason: failure.reason().clone(),
    };
    let _order = inner.event_order();
    let _previous = inner.publish(slot, SlotState::Failed(failure));
    inner.emit(event);
    if let Some(crash_loop) = crash_loop {
        inner.emit(ConnectionEvent::CrashLoop {
            server: slot.spec.key.clone(),
            crash_loop,
        });
    }
}

/// Starts one connection (the pool calls this once per start, whoever asked). Under a
/// `server/discover` probe (`auto`), a stdio server that fails the probe in a way a
/// 2025-era server may (it closes the connection or exits on the unknown request) is
/// started again with the `initialize` handshake alone, once.
async fn connect(
    inner: &Arc<SetInner>,
    spec: &ServerSpec,
    era: &EraPlan,
) -> Result<Live, StartupFailure> {
    // The legacy SSE transport predates the 2026-07-28 era: no probe, whatever the plan
    // (the catalog refuses `protocol = "2026-07-28"` on an SSE server in a file; set
    // through the API, it is ignored here).
    if matches!(spec.transport, TransportSpec::Sse(_)) {
        let legacy = EraPlan {
            lifecycle: ClientLifecycleMode::Initialize,
            requested: inner.options.protocol_version.clone(),
            remembered: false,
        };
        return connect_once(inner, spec, &legacy)
            .await
            .map_err(|f| f.failure);
    }
    // A probe the server answered the 2025 way is followed by `initialize` on the same
    // connection (HTTP client or stdio process); a stdio server of rmcp releases before
    // 2026-07-28 exits on the probe instead, which only a new process can recover from.
    match connect_once(inner, spec, era).await {
        Err(Failed {
            failure,
            in_probe: true,
        }) if probe_may_explain(&failure) => {
            tracing::info!(server = %spec.key, "the server/discover probe failed ({failure}); connecting again with the initialize handshake");
            let legacy = EraPlan {
                lifecycle: ClientLifecycleMode::Initialize,
                requested: inner.options.protocol_version.clone(),
                remembered: false,
            };
            connect_once(inner, spec, &legacy)
                .await
                .map_err(|f| f.failure)
        }
        other => other.map_err(|f| f.failure),
    }
}

/// A failed attempt of [`connect_once`], and whether it failed before the handshake under
/// a `server/discover` probe was done (only then, and only over stdio, may another
/// process help).
struct Failed {
    failure: StartupFailure,
    in_probe: bool,
}

impl From<StartupFailure> for Failed {
    fn from(failure: StartupFailure) -> Self {
        Self {
            failure,
            in_probe: false,
        }
    }
}

/// The extensions the client announces to `spec`'s server: enterprise-managed
/// authorization for a server that uses it (feature `oauth`).
fn announced_extensions(spec: &ServerSpec) -> &'static [&'static str] {
    #[cfg(feature = "oauth")]
    if let TransportSpec::Http(http) | TransportSpec::Sse(http) = &spec.transport
        && http.auth() == mcp_catalog::AuthMode::Ema
    {
        return &[crate::ema::EMA_EXTENSION];
    }
    let _ = spec;
    &[]
}

/// One attempt: transport, handshake (`initialize`, or `server/discover` in the 2026-07-28
/// era), first `tools/list`, within the startup timeout.
async fn connect_once(
    inner: &Arc<SetInner>,
    spec: &ServerSpec,
    era: &EraPlan,
) -> Result<Live, Failed> {
    let key = &spec.key;
    if let Some(problem) = &spec.environment_problem {
        return Err(StartupFailure::new(FailureReason::Environment, problem.clone()).into());
    }
    let shared = ConnectionShared::new(
        key.clone(),
        &inner.options.client,
        inner.options.protocol_version.clone(),
        crate::from_catalog::announces_elicitation(&inner.catalog, &inner.options, key),
        announced_extensions(spec),
        std::sync::Arc::clone(&inner.options.roots),
    );
    let refresh = || RefreshSettings {
        debounce: inner.options.list_changed_debounce,
        timeout: spec.startup_timeout,
        byte_budget: inner.options.list_byte_budget,
    };
    let fetched = std::time::SystemTime::now();
    let handler = Handler {
        shared: Arc::clone(&shared),
    };
    let timeout = spec.startup_timeout;
    let legacy = inner.options.protocol_version.clone();
    match &spec.transport {
        TransportSpec::Unsupported(why) | TransportSpec::Invalid(why) => Err(StartupFailure::new(
            FailureReason::Config,
            format!("MCP server `{key}`: {why}"),
        )
        .into()),
        TransportSpec::Stdio(stdio_spec) => {
            let environment = spec
                .environment
                .as_ref()
                .and_then(|e| inner.environments.get(e));
            let (process, transport) =
                stdio::launch(key, stdio_spec, environment, &inner.options).await?;
            // Err((detail, broke_protocol, in_handshake)): a protocol violation is reported as
            // such even though the process exits afterwards (its stdin is closed on the way
            // out); a failure before the handshake completed may be the era probe's.
            let work = async {
                // Unreadable replies fail the calls pending on this connection at once.
                let (stdout, stdin) = transport;
                let fault_shared = Arc::clone(&shared);
                let stdout = crate::reply_check::ReplyCheck::new(
                    stdout,
                    mcp_pool::DEFAULT_MAX_LINE_BYTES,
                    Arc::new(move |what| fault_shared.report_reply_fault(what)),
                );
                let pipes = (stdout, stdin);
                let service =
                    match stdio_handshake(key, handler, pipes, era, inner.options.probe_timeout)
                        .await
                    {
                        Ok(service) => service,
                        Err(detail) => return Err((detail, false, true)),
                    };
                if let Err(detail) = check_protocol_version(&service, era, &legacy) {
                    close_in_background(inner, service);
                    return Err((detail, true, false));
                }
                // A reply the reader refused (e.g. cut for holding too many values) fails
                // the listing at once instead of at the startup timeout.
                let mut faults = shared.reply_faults();
                faults.mark_unchanged();
                let listed = tokio::select! {
                    listed = paginate::all_tools(service.peer(), inner.options.list_byte_budget) => {
                        listed.map_err(|e| (e.to_string(), !matches!(e, PageError::Service(_))))
                    }
                    Ok(()) = faults.changed() => {
                        let what = faults.borrow_and_update().1.clone();
                        Err((format!("the server sent {what}"), true))
                    }
                };
                match listed {
                    Ok(tools) => {
                        let changes = crate::subscriptions::open_changes(service.peer()).await;
                        Ok((service, tools, changes))
                    }
                    Err((detail, broke_protocol)) => {
                        close_in_background(inner, service);
                        Err((format!("tools/list failed: {detail}"), broke_protocol, false))
                    }
                }
            };
            match tokio::time::timeout(timeout, work).await {
                Ok(Ok((service, tools, changes))) => Ok(Live::new(
                    service,
                    shared,
                    tools,
                    fetched,
                    Some(process),
                    refresh(),
                    changes,
                )),
                Ok(Err((detail, broke_protocol, in_handshake))) => {
                    let failure = if broke_protocol {
                        StartupFailure::new(
                            FailureReason::Protocol,
                            format!("MCP server `{key}`: {detail}"),
                        )
                        .with_stderr_tail(process.stderr_tail())
                    } else {
                        process.startup_failure(key, detail).await
                    };
                    stop_in_background(inner, process);
                    Err(Failed {
                        failure,
                        in_probe: in_handshake
                            && matches!(era.lifecycle, ClientLifecycleMode::Auto { .. }),
                    })
                }
                Err(_) => {
                    let tail = process.stderr_tail();
                    stop_in_background(inner, process);
                    Err(timeout_failure(key, timeout).with_stderr_tail(tail).into())
                }
            }
        }
        #[cfg(not(feature = "http"))]
        TransportSpec::Http(_) | TransportSpec::Sse(_) => Err(StartupFailure::new(
            FailureReason::Config,
            format!(
                "MCP server `{key}` is an HTTP server, but this host was built without HTTP support (mcp-connections feature `http`); rebuild with it, or use a stdio server"
            ),
        )
        .into()),
        #[cfg(feature = "http")]
        TransportSpec::Http(http_spec) | TransportSpec::Sse(http_spec) => {
            let target = HttpTarget {
                url: http_spec.url().to_owned(),
                headers: inner.http_headers(key, http_spec)?,
                auth: inner.auth_provider(key, http_spec),
                user_agent: inner.user_agent(),
                allow_plain_http: http_spec.allow_plain_http(),
                probe_timeout: inner.options.probe_timeout,
                sse: matches!(spec.transport, TransportSpec::Sse(_)),
            };
            let work = async {
                let service = http::connect(key, &target, handler, &era.lifecycle).await?;
                if let Err(detail) = check_protocol_version(&service, era, &legacy) {
                    close_in_background(inner, service);
                    return Err(StartupFailure::new(
                        FailureReason::Protocol,
                        format!("MCP server `{key}`: {detail}"),
                    ));
                }
                let mut attempt = 0;
                loop {
                    match paginate::all_tools(service.peer(), inner.options.list_byte_budget).await
                    {
                        Ok(tools) => {
                            let changes = crate::subscriptions::open_changes(service.peer()).await;
                            return Ok((service, tools, changes));
                        }
                        Err(PageError::Service(e))
                            if http::classify_service(&e) == http::HttpFailure::Transient
                                && attempt < http::RETRY_DELAYS.len() =>
                        {
                            tokio::time::sleep(http::RETRY_DELAYS[attempt]).await;
                            attempt += 1;
                        }
                        Err(PageError::Service(e))
                            if http::classify_service(&e) == http::HttpFailure::AuthRequired =>
                        {
                            close_in_background(inner, service);
                            return Err(StartupFailure::new(
                                FailureReason::LoginRequired,
                                format!(
                                    "MCP server `{key}` requires login (HTTP 401 on tools/list)"
                                ),
                            ));
                        }
                        Err(e) => {
                            close_in_background(inner, service);
                            return Err(StartupFailure::new(
                                FailureReason::Protocol,
                                format!("MCP server `{key}`: tools/list failed: {e}"),
                            ));
                        }
                    }
                }
            };
            match tokio::time::timeout(timeout, work).await {
                Ok(Ok((service, tools, changes))) => Ok(Live::new(
                    service,
                    shared,
                    tools,
                    fetched,
                    None,
                    refresh(),
                    changes,
                )),
                Ok(Err(failure)) => Err(failure.into()),
                Err(_) => Err(timeout_failure(key, timeout).into()),
            }
        }
    }
}

/// The handshake on a stdio server's pipes under `era`'s lifecycle. A probe is bounded by
/// `probe_timeout` (rmcp alone waits 10 s for a server that ignores it; `connect` then
/// starts the server again with `initialize`). When rmcp gives up on a probe the server
/// answered the 2025 way (rmcp 3.x servers answer "unsupported protocol version" and wait
/// for `initialize`), `initialize` follows on the same process: the pipes are lent to rmcp
/// and come back when it drops them. `Err`: what failed, before any session existed.
async fn stdio_handshake<R, W>(
    key: &mcp_key::McpServerKey,
    handler: Handler,
    (stdout, stdin): (R, W),
    era: &EraPlan,
    probe_timeout: std::time::Duration,
) -> Result<RunningService<RoleClient, Handler>, String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::service::ClientServiceExt;
    let initialize_failed = |e: &rmcp::service::ClientInitializeError| {
        format!(
            "initialize failed: {}",
            crate::rmcp_errors::describe_init(e)
        )
    };
    if !matches!(era.lifecycle, ClientLifecycleMode::Auto { .. }) {
        return handler
            .serve_with_lifecycle((stdout, stdin), era.lifecycle.clone())
            .await
            .map_err(|e| initialize_failed(&e));
    }
    let (stdout, stdout_back) = crate::lend::Lent::new(stdout);
    let (stdin, stdin_back) = crate::lend::Lent::new(stdin);
    let again = handler.clone();
    let probed = tokio::time::timeout(
        probe_timeout,
        handler.serve_with_lifecycle((stdout, stdin), era.lifecycle.clone()),
    )
    .await
    .map_err(|_| format!("no answer to the server/discover probe within {probe_timeout:?}"))?;
    match probed {
        Err(e) if answered_as_legacy(&e) => {
            let (Ok(stdout), Ok(stdin)) = (stdout_back.await, stdin_back.await) else {
                return Err(initialize_failed(&e));
            };
            tracing::debug!(server = %key, "the server/discover probe was answered the 2025 way ({e}); initialize on the same process");
            again
                .serve_with_lifecycle((stdout, stdin), ClientLifecycleMode::Initialize)
                .await
                .map_err(|e| initialize_failed(&e))
        }
        other => other.map_err(|e| initialize_failed(&e)),
    }
}

/// Closes the session of a failed start on a task the set owns (closing an HTTP session
/// sends a `DELETE` a failing server may be slow to answer), so the failure is reported at
/// once. If the set shuts down first, the session is dropped, which cancels it.
fn close_in_background(inner: &Arc<SetInner>, service: RunningService<RoleClient, Handler>) {
    let shutdown = inner.shutdown.clone();
    inner.tasks.spawn(async move {
        tokio::select! {
            _ = service.cancel() => {}
            () = shutdown.cancelled() => {}
        }
    });
}

/// Stops the process of a failed start on a task the set owns, so the failure is reported
/// at once instead of after the process grace. `ConnectionSet::shutdown` waits for the task;
/// if the set shuts down first, the process group is killed instead of waiting out the
/// grace (the start already failed, there is nothing to save).
fn stop_in_background(inner: &Arc<SetInner>, process: stdio::Process) {
    let shutdown = inner.shutdown.clone();
    inner.tasks.spawn(async move {
        tokio::select! {
            () = process.shutdown() => {}
            () = shutdown.cancelled() => process.kill_and_reap().await,
        }
    });
}

fn timeout_failure(key: &mcp_key::McpServerKey, timeout: std::time::Duration) -> StartupFailure {
    StartupFailure::new(
        FailureReason::Timeout,
        format!(
            "MCP server `{key}` did not start within {}s (create + initialize + tools/list); raise startup_timeout_sec for this server if it is just slow",
            timeout.as_secs_f64()
        ),
    )
}
