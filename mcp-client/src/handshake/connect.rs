//! Opening one connection: the transport (a stdio process through mcp-pool's launcher,
//! streamable HTTP, legacy HTTP+SSE), the handshake of the connection's era (with the
//! `server/discover` probe and its fallbacks), and the first `tools/list`, all within the
//! startup timeout.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mcp_key::McpServerKey;
use rmcp::RoleClient;
use rmcp::service::{ClientLifecycleMode, RunningService};

use crate::client::Client;
use crate::failure::{FailureReason, StartupFailure};
use crate::handshake::era::{EraPlan, check_protocol_version, probe_may_explain};
use crate::handshake::handler::Handler;
use crate::host::server_requests::ServerRequests;
use crate::listing::RefreshSettings;
use crate::listing::paginate::{self, Listed, PageError};
#[cfg(feature = "http")]
use crate::rmcp_errors::{HttpFailure, http_failure_of_service};
use crate::settings::{ClientSettings, Target};
use crate::state::ConnectionShared;
#[cfg(feature = "http")]
use crate::transport::http;
use crate::transport::stdio;

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

/// A connection whose handshake and first `tools/list` are done: the session, the listing
/// and, in the 2026 era, the listen for tool list changes.
type Opened = (
    RunningService<RoleClient, Handler>,
    Listed,
    Option<crate::listen::ChangeListen>,
);

/// Why opening a stdio server failed, before its process's fate is read.
enum StdioFault {
    /// The handshake failed (under a probe, possibly because the server does not know
    /// `server/discover`).
    Handshake(String),
    /// The server broke the protocol: reported as such even though the process exits
    /// afterwards (its stdin is closed on the way out).
    Protocol(String),
    /// The first `tools/list` failed without breaking the protocol.
    Listing(String),
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
    let endpoint = match target {
        #[cfg(feature = "http")]
        Target::Http(http) => crate::telemetry::Endpoint::tcp(&http.url),
        _ => crate::telemetry::Endpoint::pipe(),
    };
    let method = if matches!(era.lifecycle, rmcp::ClientLifecycleMode::Initialize) {
        "initialize"
    } else {
        "server/discover"
    };
    let shared = ConnectionShared::new(key.clone(), endpoint, settings, Arc::clone(requests));
    let span = shared.instruments.span(key, None, method, None);
    let began = crate::telemetry::Began::now();
    let opened = tracing::Instrument::instrument(
        open_once(key, target, settings, Arc::clone(&shared), era),
        span.clone(),
    )
    .await;
    match &opened {
        Ok(client) => {
            let version = client.protocol_version();
            span.record("mcp.protocol.version", version.as_str());
            // A probe the server answered the old way shook hands with `initialize` (a
            // span of its own under this one): the handshake is measured as that.
            let method = if client.era() == crate::Era::V2025_11_25 {
                "initialize"
            } else {
                method
            };
            let instruments = &shared.instruments;
            instruments.ended(began, method, None, Some(version.as_str()), None);
        }
        Err(failed) => {
            let kind = crate::telemetry::record_failure(&span, &failed.failure);
            let instruments = &shared.instruments;
            instruments.ended(began, method, None, None, Some((kind.as_str(), None)));
        }
    }
    opened
}

/// [`connect_once`] in its handshake span.
async fn open_once(
    key: &McpServerKey,
    target: &Target,
    settings: &ClientSettings,
    shared: Arc<ConnectionShared>,
    era: &EraPlan,
) -> Result<Client, Failed> {
    let fetched = SystemTime::now();
    let handler = Handler {
        shared: Arc::clone(&shared),
    };
    let ((service, tools, changes), process) = match target {
        Target::Stdio {
            config,
            environment,
        } => {
            let (opened, process) =
                connect_stdio(key, (config, environment.as_ref()), settings, handler, era).await?;
            (opened, Some(process))
        }
        #[cfg(feature = "http")]
        Target::Http(target) => (
            connect_http(key, target, settings, handler, era).await?,
            None,
        ),
        #[cfg(not(feature = "http"))]
        Target::Http(_) => {
            return Err(StartupFailure::new(
                FailureReason::Config,
                format!(
                    "MCP server `{key}` is an HTTP server, but this host was built without HTTP support (feature `http` of mcp-client, or mcp-connections); rebuild with it, or use a stdio server"
                ),
            )
            .into());
        }
    };
    let refresh = RefreshSettings {
        debounce: settings.list_changed_debounce,
        timeout: settings.startup_timeout,
        byte_budget: settings.list_byte_budget,
    };
    let client = Client::new(service, shared, (tools, fetched), process, refresh, changes);
    if let Some(level) = settings.log_level {
        // Boxed: a request's future is large (19 KB in a release build), and inline it
        // would size every start's future, most of which never send a log level.
        Box::pin(send_log_level(&client, level, settings.startup_timeout)).await;
    }
    Ok(client)
}

/// Sends the configured log level to a server that offers logging; a server that does not,
/// or fails the request, keeps its own level (the connection is fine either way).
async fn send_log_level(client: &Client, level: mcp_catalog::LogLevel, timeout: Duration) {
    let key = client.server();
    match tokio::time::timeout(timeout, client.set_log_level(level)).await {
        Ok(Ok(())) => tracing::debug!(server = %key, %level, "log level set"),
        Ok(Err(crate::RequestError::Unsupported { .. })) => {
            tracing::debug!(server = %key, "the server offers no logging/setLevel; log level not sent");
        }
        Ok(Err(e)) => tracing::warn!(server = %key, "logging/setLevel failed: {e}"),
        Err(_) => tracing::warn!(server = %key, "logging/setLevel not answered within {timeout:?}"),
    }
}

/// Launches a stdio server and opens it within the startup timeout; on failure the
/// process is stopped in the background and its exit, if it died, is the failure.
async fn connect_stdio(
    key: &McpServerKey,
    (config, environment): (
        &mcp_catalog::StdioConfig,
        Option<&Arc<dyn crate::Environment>>,
    ),
    settings: &ClientSettings,
    handler: Handler,
    era: &EraPlan,
) -> Result<(Opened, stdio::Process), Failed> {
    let timeout = settings.startup_timeout;
    let (process, transport) = stdio::launch(key, config, environment, settings).await?;
    let opened = open_stdio(key, transport, settings, handler, era);
    match tokio::time::timeout(timeout, opened).await {
        Ok(Ok(opened)) => Ok((opened, process)),
        Ok(Err(fault)) => {
            let in_probe = matches!(fault, StdioFault::Handshake(_)) && era.probes();
            let failure = match fault {
                StdioFault::Protocol(detail) => StartupFailure::new(
                    FailureReason::Protocol,
                    format!("MCP server `{key}`: {detail}"),
                )
                .with_stderr_tail(process.stderr_tail()),
                StdioFault::Handshake(detail) | StdioFault::Listing(detail) => {
                    process.startup_failure(key, detail).await
                }
            };
            stop_in_background(settings, process);
            Err(Failed { failure, in_probe })
        }
        Err(_) => {
            let tail = process.stderr_tail();
            stop_in_background(settings, process);
            Err(timeout_failure(key, timeout).with_stderr_tail(tail).into())
        }
    }
}

/// The handshake and first `tools/list` on a launched server's pipes. Unreadable replies
/// fail the listing at once (not at the startup timeout), and later the calls pending on
/// the connection.
async fn open_stdio(
    key: &McpServerKey,
    (stdout, stdin): mcp_pool::StdioTransport,
    settings: &ClientSettings,
    handler: Handler,
    era: &EraPlan,
) -> Result<Opened, StdioFault> {
    let shared = Arc::clone(&handler.shared);
    let fault_shared = Arc::clone(&shared);
    let tap_shared = Arc::clone(&shared);
    let faults: crate::transport::reply_check::FaultSink =
        Arc::new(move |what| fault_shared.report_reply_fault(what));
    let stdout = crate::transport::reply_check::ReplyCheck::new(
        stdout,
        mcp_pool::DEFAULT_MAX_LINE_BYTES,
        Arc::clone(&faults),
    )
    .with_tap(Arc::new(move |line| tap_shared.task_support.note(line)));
    let pipes = (stdout, stdin);
    let service = stdio_handshake(key, handler, pipes, faults, era, settings.probe_timeout)
        .await
        .map_err(StdioFault::Handshake)?;
    if let Err(detail) = check_protocol_version(
        service.peer().peer_info().as_deref(),
        era,
        &settings.protocol_version,
    ) {
        close_in_background(settings, service);
        return Err(StdioFault::Protocol(detail));
    }
    // A reply the reader refused (e.g. cut for holding too many values) fails the listing.
    let mut faults = shared.reply_faults();
    faults.mark_unchanged();
    let listed = tokio::select! {
        listed = paginate::all_tools(service.peer(), settings.list_byte_budget) => match listed {
            Ok(tools) => Ok(tools),
            Err(e @ PageError::Service(_)) => Err(StdioFault::Listing(format!("tools/list failed: {e}"))),
            Err(e) => Err(StdioFault::Protocol(format!("tools/list failed: {e}"))),
        },
        Ok(()) = faults.changed() => {
            let what = faults.borrow_and_update().last.clone();
            Err(StdioFault::Protocol(format!("tools/list failed: the server sent {what}")))
        }
    };
    match listed {
        Ok(tools) => {
            let changes = crate::listen::open_changes(service.peer(), &shared).await;
            Ok((service, tools, changes))
        }
        Err(fault) => {
            close_in_background(settings, service);
            Err(fault)
        }
    }
}

/// Opens an HTTP server (streamable HTTP or legacy SSE) within the startup timeout.
#[cfg(feature = "http")]
async fn connect_http(
    key: &McpServerKey,
    target: &crate::HttpTarget,
    settings: &ClientSettings,
    handler: Handler,
    era: &EraPlan,
) -> Result<Opened, StartupFailure> {
    let timeout = settings.startup_timeout;
    match tokio::time::timeout(timeout, open_http(key, target, settings, handler, era)).await {
        Ok(opened) => opened,
        Err(_) => Err(timeout_failure(key, timeout)),
    }
}

/// The handshake and first `tools/list` of an HTTP server; the listing is retried after
/// transient failures ([`http::RETRY_DELAYS`]).
#[cfg(feature = "http")]
async fn open_http(
    key: &McpServerKey,
    target: &crate::HttpTarget,
    settings: &ClientSettings,
    handler: Handler,
    era: &EraPlan,
) -> Result<Opened, StartupFailure> {
    let service = http::connect(key, target, settings, handler, &era.lifecycle).await?;
    if let Err(detail) = check_protocol_version(
        service.peer().peer_info().as_deref(),
        era,
        &settings.protocol_version,
    ) {
        close_in_background(settings, service);
        return Err(StartupFailure::new(
            FailureReason::Protocol,
            format!("MCP server `{key}`: {detail}"),
        ));
    }
    let mut attempt = 0;
    loop {
        let failure = match paginate::all_tools(service.peer(), settings.list_byte_budget).await {
            Ok(tools) => {
                let changes =
                    crate::listen::open_changes(service.peer(), &service.service().shared).await;
                return Ok((service, tools, changes));
            }
            Err(PageError::Service(e))
                if http_failure_of_service(&e) == HttpFailure::Transient
                    && attempt < http::RETRY_DELAYS.len() =>
            {
                tokio::time::sleep(http::RETRY_DELAYS[attempt]).await;
                attempt += 1;
                continue;
            }
            Err(PageError::Service(e))
                if http_failure_of_service(&e) == HttpFailure::AuthRequired =>
            {
                StartupFailure::new(
                    FailureReason::LoginRequired,
                    format!("MCP server `{key}` requires login (HTTP 401 on tools/list)"),
                )
            }
            Err(e) => StartupFailure::new(
                FailureReason::Protocol,
                format!("MCP server `{key}`: tools/list failed: {e}"),
            ),
        };
        close_in_background(settings, service);
        return Err(failure);
    }
}

/// The handshake on a stdio server's pipes under `era`'s lifecycle. A probe is bounded by
/// `probe_timeout` (rmcp alone waits 10 s for a server that ignores it; `connect` then
/// starts the server again with `initialize`). When rmcp gives up on a probe the server
/// answered the 2025 way (rmcp 3.x servers answer "unsupported protocol version" and wait
/// for `initialize`), `initialize` follows on the same process: the pipes are lent to rmcp
/// and come back when it drops them. A line the transport finds is not JSON is reported
/// to `faults` (the reply check's sink). `Err`: what failed, before any session existed.
async fn stdio_handshake<R, W>(
    key: &McpServerKey,
    handler: Handler,
    (stdout, stdin): (R, W),
    faults: crate::transport::reply_check::FaultSink,
    era: &EraPlan,
    probe_timeout: std::time::Duration,
) -> Result<RunningService<RoleClient, Handler>, String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use rmcp::service::ClientServiceExt;
    // Log messages are routed and progress delivered as they are read (see `read_order`).
    let shared = Arc::clone(&handler.shared);
    let wrap = |read: R, write: W| {
        crate::transport::read_order::ReadOrder::new(
            crate::transport::stdio_lines::StdioLines::new(read, write)
                .with_faults(Arc::clone(&faults)),
            Arc::clone(&shared),
        )
    };
    let initialize_failed = |e: &rmcp::service::ClientInitializeError| {
        format!(
            "initialize failed: {}",
            crate::rmcp_errors::describe_init(e)
        )
    };
    if !era.probes() {
        let served = handler.serve_with_lifecycle(wrap(stdout, stdin), era.lifecycle.clone());
        return crate::telemetry::outside_spans(served)
            .await
            .map_err(|e| initialize_failed(&e));
    }
    let (stdout, stdout_back) = crate::transport::lend::Lent::new(stdout);
    let (stdin, stdin_back) = crate::transport::lend::Lent::new(stdin);
    let wrap_lent = |read, write| {
        crate::transport::read_order::ReadOrder::new(
            crate::transport::stdio_lines::StdioLines::new(read, write)
                .with_faults(Arc::clone(&faults)),
            Arc::clone(&shared),
        )
    };
    let again = handler.clone();
    let probed = tokio::time::timeout(
        probe_timeout,
        crate::telemetry::outside_spans(
            handler.serve_with_lifecycle(wrap_lent(stdout, stdin), era.lifecycle.clone()),
        ),
    )
    .await
    .map_err(|_| format!("no answer to the server/discover probe within {probe_timeout:?}"))?;
    match probed {
        Err(e) if crate::rmcp_errors::answered_as_legacy(&e) => {
            let (Ok(stdout), Ok(stdin)) = (stdout_back.await, stdin_back.await) else {
                return Err(initialize_failed(&e));
            };
            tracing::debug!(server = %key, "the server/discover probe was answered the 2025 way ({e}); initialize on the same process");
            // The `initialize` that follows the probe is a request of its own.
            let initialize = shared.instruments.span(key, None, "initialize", None);
            let transport = initialize.in_scope(|| wrap(stdout, stdin));
            let served = again.serve_with_lifecycle(transport, ClientLifecycleMode::Initialize);
            crate::telemetry::outside_spans(served)
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
