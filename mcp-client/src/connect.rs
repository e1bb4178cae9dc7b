//! Opening one connection: the transport (a stdio process through mcp-pool's launcher,
//! streamable HTTP, legacy HTTP+SSE), the handshake of the connection's era (with the
//! `server/discover` probe and its fallbacks), and the first `tools/list`, all within the
//! startup timeout.

use std::sync::Arc;
use std::time::SystemTime;

use mcp_key::McpServerKey;
use rmcp::RoleClient;
use rmcp::service::{ClientLifecycleMode, RunningService};

use crate::client::Client;
use crate::era::{EraPlan, answered_as_legacy, check_protocol_version, probe_may_explain};
use crate::failure::{FailureReason, StartupFailure};
use crate::handler::{ConnectionShared, Handler, ServerRequests};
#[cfg(feature = "http")]
use crate::http;
use crate::listing::RefreshSettings;
use crate::paginate::{self, PageError};
use crate::settings::{ClientSettings, Target};
use crate::stdio;

impl Client {
    /// Connects to `server` at `target`: transport, handshake and first `tools/list`,
    /// within [`ClientSettings::with_startup_timeout`]. Requests the server makes of the
    /// host outside a call's own reply go to `requests`.
    ///
    /// Under [`Handshake::Probe`](crate::Handshake::Probe) a stdio server that fails the
    /// `server/discover` probe the way a 2025-era server may (it closes the connection or
    /// exits on the unknown request) is started again with `initialize`, once.
    ///
    /// # Errors
    /// A [`StartupFailure`] whose [`reason`](StartupFailure::reason) classifies what went
    /// wrong (timeout, spawn failure, exit, protocol, transport, login required, ...).
    pub async fn connect(
        server: McpServerKey,
        target: Target,
        settings: ClientSettings,
        requests: Arc<dyn ServerRequests>,
    ) -> Result<Client, StartupFailure> {
        let legacy = EraPlan::initialize(&settings.protocol_version);
        // The legacy SSE transport predates the 2026-07-28 era: no probe, whatever the
        // handshake asked for.
        if let Target::Http(http) = &target
            && http.legacy_sse
        {
            return connect_once(&server, &target, &settings, &requests, &legacy)
                .await
                .map_err(|f| f.failure);
        }
        let era = EraPlan::new(settings.handshake, &settings.protocol_version);
        // A probe the server answered the 2025 way is followed by `initialize` on the same
        // connection (HTTP client or stdio process); a stdio server of rmcp releases before
        // 2026-07-28 exits on the probe instead, which only a new process can recover from.
        match connect_once(&server, &target, &settings, &requests, &era).await {
            Err(Failed {
                failure,
                in_probe: true,
            }) if probe_may_explain(&failure) => {
                tracing::info!(server = %server, "the server/discover probe failed ({failure}); connecting again with the initialize handshake");
                connect_once(&server, &target, &settings, &requests, &legacy)
                    .await
                    .map_err(|f| f.failure)
            }
            other => other.map_err(|f| f.failure),
        }
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

/// One attempt: transport, handshake (`initialize`, or `server/discover` in the 2026-07-28
/// era), first `tools/list`, within the startup timeout.
async fn connect_once(
    key: &McpServerKey,
    target: &Target,
    settings: &ClientSettings,
    requests: &Arc<dyn ServerRequests>,
    era: &EraPlan,
) -> Result<Client, Failed> {
    let shared = ConnectionShared::new(
        key.clone(),
        &settings.client,
        settings.protocol_version.clone(),
        settings.elicitation,
        &settings.extensions,
        Arc::clone(&settings.roots),
        Arc::clone(requests),
    );
    let refresh = || RefreshSettings {
        debounce: settings.list_changed_debounce,
        timeout: settings.startup_timeout,
        byte_budget: settings.list_byte_budget,
    };
    let fetched = SystemTime::now();
    let handler = Handler {
        shared: Arc::clone(&shared),
    };
    let timeout = settings.startup_timeout;
    let legacy = &settings.protocol_version;
    match target {
        Target::Stdio {
            config,
            environment,
        } => {
            let (process, transport) =
                stdio::launch(key, config, environment.as_ref(), settings).await?;
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
                    match stdio_handshake(key, handler, pipes, era, settings.probe_timeout)
                        .await
                    {
                        Ok(service) => service,
                        Err(detail) => return Err((detail, false, true)),
                    };
                if let Err(detail) = check_protocol_version(&service, era, legacy) {
                    close_in_background(settings, service);
                    return Err((detail, true, false));
                }
                // A reply the reader refused (e.g. cut for holding too many values) fails
                // the listing at once instead of at the startup timeout.
                let mut faults = shared.reply_faults();
                faults.mark_unchanged();
                let listed = tokio::select! {
                    listed = paginate::all_tools(service.peer(), settings.list_byte_budget) => {
                        listed.map_err(|e| (e.to_string(), !matches!(e, PageError::Service(_))))
                    }
                    Ok(()) = faults.changed() => {
                        let what = faults.borrow_and_update().1.clone();
                        Err((format!("the server sent {what}"), true))
                    }
                };
                match listed {
                    Ok(tools) => {
                        let changes = crate::listen::open_changes(service.peer()).await;
                        Ok((service, tools, changes))
                    }
                    Err((detail, broke_protocol)) => {
                        close_in_background(settings, service);
                        Err((format!("tools/list failed: {detail}"), broke_protocol, false))
                    }
                }
            };
            match tokio::time::timeout(timeout, work).await {
                Ok(Ok((service, tools, changes))) => Ok(Client::new(
                    service,
                    shared,
                    (tools, fetched),
                    Some(process),
                    refresh(),
                    changes,
                    settings.elicitation,
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
                    stop_in_background(settings, process);
                    Err(Failed {
                        failure,
                        in_probe: in_handshake && era.probes(),
                    })
                }
                Err(_) => {
                    let tail = process.stderr_tail();
                    stop_in_background(settings, process);
                    Err(timeout_failure(key, timeout).with_stderr_tail(tail).into())
                }
            }
        }
        #[cfg(not(feature = "http"))]
        Target::Http(_) => Err(StartupFailure::new(
            FailureReason::Config,
            format!(
                "MCP server `{key}` is an HTTP server, but this host was built without HTTP support (feature `http` of mcp-client, or mcp-connections); rebuild with it, or use a stdio server"
            ),
        )
        .into()),
        #[cfg(feature = "http")]
        Target::Http(target) => {
            let work = async {
                let service = http::connect(key, target, settings, handler, &era.lifecycle).await?;
                if let Err(detail) = check_protocol_version(&service, era, legacy) {
                    close_in_background(settings, service);
                    return Err(StartupFailure::new(
                        FailureReason::Protocol,
                        format!("MCP server `{key}`: {detail}"),
                    ));
                }
                let mut attempt = 0;
                loop {
                    match paginate::all_tools(service.peer(), settings.list_byte_budget).await {
                        Ok(tools) => {
                            let changes = crate::listen::open_changes(service.peer()).await;
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
                            close_in_background(settings, service);
                            return Err(StartupFailure::new(
                                FailureReason::LoginRequired,
                                format!(
                                    "MCP server `{key}` requires login (HTTP 401 on tools/list)"
                                ),
                            ));
                        }
                        Err(e) => {
                            close_in_background(settings, service);
                            return Err(StartupFailure::new(
                                FailureReason::Protocol,
                                format!("MCP server `{key}`: tools/list failed: {e}"),
                            ));
                        }
                    }
                }
            };
            match tokio::time::timeout(timeout, work).await {
                Ok(Ok((service, tools, changes))) => Ok(Client::new(
                    service,
                    shared,
                    (tools, fetched),
                    None,
                    refresh(),
                    changes,
                    settings.elicitation,
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
    key: &McpServerKey,
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
    if !era.probes() {
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

/// Runs the cleanup of a failed start on the settings' background tasks (or a task of
/// its own), so the failure is reported at once: `work` normally, `abort` once the
/// background's stop token is cancelled first.
fn in_background<W, A>(
    settings: &ClientSettings,
    work: W,
    abort: impl FnOnce() -> A + Send + 'static,
) where
    W: Future<Output = ()> + Send + 'static,
    A: Future<Output = ()> + Send + 'static,
{
    match &settings.background {
        Some((tasks, stop)) => {
            let stop = stop.clone();
            tasks.spawn(async move {
                tokio::select! {
                    () = work => {}
                    () = stop.cancelled() => abort().await,
                }
            });
        }
        None => {
            tokio::spawn(work);
        }
    }
}

/// Closes the session of a failed start in the background (closing an HTTP session sends
/// a `DELETE` a failing server may be slow to answer); dropped, which cancels it, when the
/// background stops first.
fn close_in_background(settings: &ClientSettings, service: RunningService<RoleClient, Handler>) {
    in_background(
        settings,
        async move {
            let _ = service.cancel().await;
        },
        || async {},
    );
}

/// Stops the process of a failed start in the background, instead of after the process
/// grace; killed at once when the background stops first (the start already failed,
/// there is nothing to save).
fn stop_in_background(settings: &ClientSettings, process: stdio::Process) {
    let process = Arc::new(process);
    let again = Arc::clone(&process);
    in_background(
        settings,
        async move { process.shutdown().await },
        move || async move { again.kill_and_reap().await },
    );
}

fn timeout_failure(key: &McpServerKey, timeout: std::time::Duration) -> StartupFailure {
    StartupFailure::new(
        FailureReason::Timeout,
        format!(
            "MCP server `{key}` did not start within {}s (create + initialize + tools/list); raise startup_timeout_sec for this server if it is just slow",
            timeout.as_secs_f64()
        ),
    )
}
