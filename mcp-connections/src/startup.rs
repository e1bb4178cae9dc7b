//! Starting one server: transport, initialize, first `tools/list`, within the startup
//! timeout; and the background tasks of a live connection.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use tokio_util::sync::CancellationToken;

use crate::error::StartupFailure;
use crate::events::{ConnectionEvent, FailureReason};
use crate::handler::{ConnectionShared, Handler};
use crate::http::{self, HttpTarget};
use crate::inner::SetInner;
use crate::paginate::{self, PageError};
use crate::slot::{Live, Slot, SlotState};
use crate::spec::TransportSpec;
use crate::stdio;

enum StartError {
    Failed(StartupFailure),
    Cancelled,
}

/// Runs one start of `slot` to completion and publishes the result. The caller holds the
/// slot's start lock.
///
/// `initial` starts (the set's startup round) also stop when the caller cancels startup;
/// restarts stop only when the set shuts down.
pub(crate) async fn run_start(inner: &Arc<SetInner>, slot: &Arc<Slot>, initial: bool) {
    let key = slot.spec.key.clone();
    slot.state.send_replace(SlotState::Starting);
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
    let result = tokio::select! {
        biased;
        () = startup_cancelled => Err(StartError::Cancelled),
        () = inner.shutdown.cancelled() => Err(StartError::Cancelled),
        r = start_within_timeout(inner, slot) => r,
    };
    match result {
        Ok(live) => {
            let live = Arc::new(live);
            let tools = live.tools().len();
            let pid = live.pid();
            spawn_background(inner, slot, &live);
            tracing::info!(server = %key, tools, "MCP server ready");
            // State and event change together, so `StartupComplete` (sent once every state
            // settled, under the same lock) never overtakes this `Ready`.
            let _order = inner.event_order();
            slot.state.send_replace(SlotState::Ready(live));
            inner.revision.fetch_add(1, Ordering::SeqCst);
            inner.emit(ConnectionEvent::Ready {
                server: key,
                tools,
                pid,
                process_group: pid,
            });
        }
        Err(StartError::Failed(failure)) => {
            tracing::warn!(server = %key, reason = %failure.reason(), "MCP server failed: {failure}");
            let _order = inner.event_order();
            inner.emit(ConnectionEvent::Failed {
                server: key,
                error: failure.to_string(),
                reason: failure.reason().clone(),
            });
            slot.state.send_replace(SlotState::Failed(failure));
        }
        Err(StartError::Cancelled) => {
            let _order = inner.event_order();
            inner.emit(ConnectionEvent::Cancelled { server: key });
            slot.state.send_replace(SlotState::Cancelled);
        }
    }
}

async fn start_within_timeout(inner: &Arc<SetInner>, slot: &Arc<Slot>) -> Result<Live, StartError> {
    let spec = &slot.spec;
    let key = &spec.key;
    if let Some(problem) = &spec.environment_problem {
        return Err(StartError::Failed(StartupFailure::new(
            FailureReason::Environment,
            problem.clone(),
        )));
    }
    // The owning environment's (or server's) elicitation policy decides whether requests
    // reach the host's handler at all.
    let elicitation = match inner.catalog.elicitation_policy(key) {
        Some(mcp_catalog::ElicitationPolicy::Decline) => None,
        _ => inner.options.elicitation.clone(),
    };
    let shared = ConnectionShared::new(
        key.clone(),
        &inner.options.client,
        inner.options.protocol_version.clone(),
        elicitation,
    );
    let handler = Handler {
        shared: Arc::clone(&shared),
    };
    let timeout = spec.startup_timeout;
    let requested = inner.options.protocol_version.clone();
    match &spec.transport {
        TransportSpec::Unsupported(why) | TransportSpec::Invalid(why) => Err(StartError::Failed(
            StartupFailure::new(FailureReason::Config, format!("MCP server `{key}`: {why}")),
        )),
        TransportSpec::Stdio(stdio_spec) => {
            let environment = spec
                .environment
                .as_ref()
                .and_then(|e| inner.environments.get(e));
            let (process, transport) = stdio::launch(key, stdio_spec, environment, &inner.options)
                .await
                .map_err(StartError::Failed)?;
            // Err((detail, broke_protocol)): a protocol violation is reported as such even
            // though the process exits afterwards (its stdin is closed on the way out).
            let work = async {
                // Unreadable replies fail the calls pending on this connection at once.
                let (stdout, stdin) = transport;
                let fault_shared = Arc::clone(&shared);
                let stdout = crate::reply_check::ReplyCheck::new(
                    stdout,
                    mcp_pool::DEFAULT_MAX_LINE_BYTES,
                    Arc::new(move |what| fault_shared.report_reply_fault(what)),
                );
                let service = match rmcp::ServiceExt::serve(handler, (stdout, stdin)).await {
                    Ok(s) => s,
                    Err(e) => {
                        return Err((
                            format!("initialize failed: {}", http::describe_init(&e)),
                            false,
                        ));
                    }
                };
                if let Err(detail) = check_protocol_version(&service, &requested) {
                    close_in_background(inner, service);
                    return Err((detail, true));
                }
                match paginate::all_tools(service.peer(), inner.options.list_byte_budget).await {
                    Ok(tools) => Ok((service, tools)),
                    Err(e) => {
                        let broke_protocol = !matches!(e, PageError::Service(_));
                        close_in_background(inner, service);
                        Err((format!("tools/list failed: {e}"), broke_protocol))
                    }
                }
            };
            match tokio::time::timeout(timeout, work).await {
                Ok(Ok((service, tools))) => Ok(Live::new(
                    service,
                    shared,
                    tools,
                    Some(process),
                    inner.live_cancel(),
                )),
                Ok(Err((detail, broke_protocol))) => {
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
                    Err(StartError::Failed(failure))
                }
                Err(_) => {
                    let tail = process.stderr_tail();
                    stop_in_background(inner, process);
                    Err(StartError::Failed(
                        timeout_failure(key, timeout).with_stderr_tail(tail),
                    ))
                }
            }
        }
        TransportSpec::Http(http_spec) => {
            let target = HttpTarget {
                url: http_spec.url().to_owned(),
                headers: inner
                    .http_headers(key, http_spec)
                    .map_err(StartError::Failed)?,
                auth: inner.auth_provider(key, http_spec),
                user_agent: inner.user_agent(),
                allow_plain_http: http_spec.allow_plain_http(),
            };
            let work = async {
                let service = http::connect(key, &target, handler).await?;
                if let Err(detail) = check_protocol_version(&service, &requested) {
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
                        Ok(tools) => return Ok((service, tools)),
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
                Ok(Ok((service, tools))) => {
                    Ok(Live::new(service, shared, tools, None, inner.live_cancel()))
                }
                Ok(Err(failure)) => Err(StartError::Failed(failure)),
                Err(_) => Err(StartError::Failed(timeout_failure(key, timeout))),
            }
        }
    }
}

/// The protocol versions this client can speak when it asks for `requested` in
/// `initialize`: every version rmcp knows up to and including the requested one (a server
/// may answer with an older version, never a newer or an unknown one), oldest first.
pub(crate) fn supported_protocol_versions(requested: &ProtocolVersion) -> Vec<ProtocolVersion> {
    let mut versions = ProtocolVersion::known_up_to(requested).to_vec();
    if !versions.contains(requested) {
        versions.push(requested.clone());
    }
    versions
}

/// Refuses a server whose `initialize` answer names a protocol version this client does
/// not speak (the specification says the client should then disconnect).
fn check_protocol_version(
    service: &RunningService<RoleClient, Handler>,
    requested: &ProtocolVersion,
) -> Result<(), String> {
    let Some(info) = service.peer().peer_info() else {
        return Err("the initialize answer was not recorded".to_owned());
    };
    let answered = &info.protocol_version;
    let supported = supported_protocol_versions(requested);
    if supported.contains(answered) {
        return Ok(());
    }
    let list = supported
        .iter()
        .map(ProtocolVersion::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    Err(format!(
        "initialize answered with protocol version `{answered}`, which this client does not support (supported: {list}); disconnected. Use a server release that speaks one of these versions"
    ))
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

/// Stops a live connection that died, on a task the set owns, so the failure is reported
/// (and a restart can begin) without waiting for the process grace. When the set shuts down
/// first, the process group is killed.
pub(crate) fn shut_down_in_background(inner: &Arc<SetInner>, live: Arc<Live>) {
    let shutdown = inner.shutdown.clone();
    inner.tasks.spawn(async move {
        tokio::select! {
            () = live.shutdown() => {}
            () = shutdown.cancelled() => live.kill_and_reap().await,
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

/// Spawns the exit monitor (stdio) and the `tools/list_changed` refresher of a live
/// connection. Both stop when the connection's cancel token fires.
fn spawn_background(inner: &Arc<SetInner>, slot: &Arc<Slot>, live: &Arc<Live>) {
    if live.process.is_some() {
        let (inner2, slot2, live2) = (Arc::clone(inner), Arc::clone(slot), Arc::clone(live));
        inner.tasks.spawn(async move {
            let Some(process) = &live2.process else {
                return;
            };
            tokio::select! {
                () = live2.cancel.cancelled() => {}
                _ = process.wait_exit() => {
                    on_death(&inner2, &slot2, &live2).await;
                }
            }
        });
    }
    let (inner2, slot2, live2) = (Arc::clone(inner), Arc::clone(slot), Arc::clone(live));
    inner.tasks.spawn(async move {
        refresh_on_list_changed(&inner2, &slot2, &live2).await;
    });
}

/// Marks the slot failed when its live connection died, if that connection is still the
/// current one.
pub(crate) async fn on_death(inner: &Arc<SetInner>, slot: &Arc<Slot>, live: &Arc<Live>) {
    live.mark_dead();
    let failure = live.death().await;
    let current = matches!(slot.current(), SlotState::Ready(ref l) if Arc::ptr_eq(l, live));
    if !current {
        return;
    }
    let delay = slot.record_crash(
        live.started_at.elapsed(),
        inner.options.restart_backoff,
        inner.options.restart_backoff_max,
    );
    tracing::warn!(server = %slot.spec.key, restart_in = ?delay, "MCP server died: {failure}");
    // State and revision first: whoever sees the event sees the server failed and its
    // tools gone from the catalog.
    let event = ConnectionEvent::Failed {
        server: slot.spec.key.clone(),
        error: failure.to_string(),
        reason: failure.reason().clone(),
    };
    slot.state.send_replace(SlotState::Failed(failure));
    inner.revision.fetch_add(1, Ordering::SeqCst);
    inner.emit(event);
    shut_down_in_background(inner, Arc::clone(live));
}

async fn refresh_on_list_changed(inner: &Arc<SetInner>, slot: &Arc<Slot>, live: &Arc<Live>) {
    let cancel: &CancellationToken = &live.cancel;
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = live.shared.tools_changed.notified() => {}
        }
        // Debounce: let a burst of notifications collapse into one refresh.
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(inner.options.list_changed_debounce) => {}
        }
        let listed = tokio::select! {
            () = cancel.cancelled() => return,
            r = tokio::time::timeout(slot.spec.startup_timeout, paginate::all_tools(&live.peer, inner.options.list_byte_budget)) => r,
        };
        match listed {
            Ok(Ok(tools)) => {
                live.set_tools(tools);
                let revision = inner.revision.fetch_add(1, Ordering::SeqCst) + 1;
                inner.emit(ConnectionEvent::ToolsChanged {
                    server: slot.spec.key.clone(),
                    revision,
                });
            }
            Ok(Err(e)) => {
                tracing::warn!(server = %slot.spec.key, "refreshing tools after list_changed failed: {e}");
            }
            Err(_) => {
                tracing::warn!(server = %slot.spec.key, "refreshing tools after list_changed timed out");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_version_up_to_the_requested_one_is_supported() {
        assert_eq!(
            supported_protocol_versions(&ProtocolVersion::V_2025_11_25),
            [
                ProtocolVersion::V_2024_11_05,
                ProtocolVersion::V_2025_03_26,
                ProtocolVersion::V_2025_06_18,
                ProtocolVersion::V_2025_11_25,
            ]
        );
        assert_eq!(
            supported_protocol_versions(&ProtocolVersion::V_2026_07_28),
            ProtocolVersion::KNOWN_VERSIONS
        );
    }
}
