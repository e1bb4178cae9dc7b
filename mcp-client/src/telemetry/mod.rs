//! Every request this client makes as a `tracing` span named and attributed the way the
//! OpenTelemetry semantic conventions for MCP say (status Development, in
//! `open-telemetry/semantic-conventions-genai`): a host that installs
//! `tracing-opentelemetry` gets conforming CLIENT spans with no code of ours on its path.
//!
//! The span (target [`SPAN_TARGET`], `tracing` name `mcp.request`) carries:
//! - `otel.name` = `{mcp.method.name} {target}`, the target being the tool or prompt name
//!   when there is one (`tools/call get_weather`), else the method alone;
//! - `otel.kind` = `client`, and `otel.status_code` = `error` when the request failed;
//! - `mcp.method.name`, `mcp.protocol.version`, `network.transport` (`pipe` for stdio,
//!   `tcp` for HTTP), `server.address` and `server.port` (HTTP);
//! - `gen_ai.tool.name` and `gen_ai.operation.name` = `execute_tool` for `tools/call`,
//!   `gen_ai.prompt.name` for `prompts/get`;
//! - `jsonrpc.request.id` where the client knows it (tool calls);
//! - `error.type` (`tool_error` for a result with `isError`, the JSON-RPC code for a
//!   server's error, else what failed: `timeout`, `protocol_error`, `disconnected`, …) and
//!   `rpc.response.status_code` (the JSON-RPC code).
//!
//! Beyond the conventions, in their style: `mcp.server.name` (the configured server, as
//! this workspace names it), and spans for what they do not cover yet: the 2026-07-28
//! era's `server/discover` handshake and each `tasks/get`, `tasks/update`, `tasks/cancel`
//! and `tasks/result` of a task (children of the call's span). Stateless 2026-era
//! connections have no `mcp.session.id`. The span is a child of whatever span is current,
//! so a host's own `execute_tool` span gets the MCP span under it, never a second root.
//!
//! Arguments and results are recorded only for a call whose host opted in
//! ([`CallSettings::with_recorded_payloads`](crate::CallSettings::with_recorded_payloads)),
//! as the conventions' opt-in `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`,
//! redacted ([`payloads`]).
//!
//! The names, the span and what records its attributes live in [`semconv`], shared with
//! servers built on this crate (`mcpctl serve`'s SERVER spans).

use std::borrow::Cow;

use tracing::Span;

use crate::error::RequestError;

#[cfg(feature = "otel")]
mod metrics;
pub(crate) mod payloads;
#[cfg(feature = "otel")]
mod propagation;
pub mod semconv;

#[cfg(feature = "otel")]
pub use metrics::{DURATION_BUCKETS, OPERATION_DURATION, SESSION_DURATION};

/// The `tracing` target of the request spans.
pub const SPAN_TARGET: &str = "mcp_client::request";

/// How the connection reaches its server, for `network.transport` and `server.*`.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// `pipe` or `tcp`.
    pub(crate) transport: &'static str,
    pub(crate) address: Option<String>,
    pub(crate) port: Option<u16>,
}

impl Endpoint {
    /// A stdio server.
    pub(crate) fn pipe() -> Self {
        Self {
            transport: "pipe",
            address: None,
            port: None,
        }
    }

    /// An HTTP server at `url` (address and port from it, the scheme's port when none).
    #[cfg(feature = "http")]
    pub(crate) fn tcp(url: &str) -> Self {
        let parsed = url::Url::parse(url).ok();
        Self {
            transport: "tcp",
            address: parsed
                .as_ref()
                .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_owned())),
            port: parsed.as_ref().and_then(url::Url::port_or_known_default),
        }
    }
}

/// The span of one request: `method` (e.g. `tools/call`) on `target` (a tool or prompt
/// name), of server `server` speaking `protocol` over `endpoint`.
pub(crate) fn request_span(
    server: &mcp_key::McpServerKey,
    protocol: Option<&str>,
    endpoint: &Endpoint,
    method: &'static str,
    target: Option<&str>,
) -> Span {
    let span = crate::request_span!(
        target: SPAN_TARGET,
        kind: "client",
        transport: endpoint.transport,
        method: method,
        target_name: target,
    );
    span.record(semconv::MCP_SERVER_NAME, tracing::field::display(server));
    if let Some(protocol) = protocol {
        span.record(semconv::MCP_PROTOCOL_VERSION, protocol);
    }
    if let Some(address) = &endpoint.address {
        span.record(semconv::SERVER_ADDRESS, address.as_str());
    }
    if let Some(port) = endpoint.port {
        span.record(semconv::SERVER_PORT, port);
    }
    semconv::record_target(&span, method, target);
    span
}

/// What a failed request's span and measurement say of it: `error.type` and the
/// JSON-RPC code (`rpc.response.status_code`) when the server answered with an error.
pub(crate) fn error_kind(error: &RequestError) -> (Cow<'static, str>, Option<i64>) {
    let kind = match error {
        RequestError::Server { code, .. } => {
            return (code.to_string().into(), Some(i64::from(*code)));
        }
        RequestError::Timeout { .. } => "timeout",
        RequestError::Protocol { .. } => "protocol_error",
        RequestError::AuthRequired => "auth_required",
        RequestError::Disconnected { .. } => "disconnected",
        RequestError::Unsupported { .. } => "unsupported",
        RequestError::Declined { .. } => "declined",
        RequestError::TaskLost { .. } => "task_lost",
        RequestError::Aborted => "aborted",
        RequestError::InputRequired { .. } => "input_required",
    };
    (kind.into(), None)
}

/// Records on `span` that its request ended as `error_type` (with `status_code`).
pub(crate) fn record_ended(span: &Span, error_type: &str, status_code: Option<i64>) {
    semconv::record_failure(span, error_type, status_code);
}

/// The `error.type` of a tool result: `tool_error` when it has `isError`.
pub(crate) fn tool_result_error(result: &rmcp::model::CallToolResult) -> Option<&'static str> {
    (result.is_error == Some(true)).then_some(semconv::TOOL_ERROR)
}

/// Records `failure` of a connection's start on its handshake span.
pub(crate) fn record_failure(span: &Span, failure: &crate::StartupFailure) -> String {
    let kind = failure.reason().to_string();
    record_ended(span, &kind, None);
    kind
}

/// Puts the trace context of the current span into `request`'s `_meta` (feature `otel`;
/// without it, nothing).
#[cfg_attr(
    not(feature = "otel"),
    expect(clippy::missing_const_for_fn, reason = "one signature for both builds")
)]
pub(crate) fn inject(request: &mut rmcp::model::ClientRequest) {
    #[cfg(feature = "otel")]
    propagation::inject_from(&Span::current(), request);
    #[cfg(not(feature = "otel"))]
    let _ = request;
}

/// Puts the trace context of `span` into `request`'s `_meta` (feature `otel`).
#[cfg_attr(
    not(feature = "otel"),
    expect(clippy::missing_const_for_fn, reason = "one signature for both builds")
)]
pub(crate) fn inject_from(span: &Span, request: &mut rmcp::model::ClientRequest) {
    #[cfg(feature = "otel")]
    propagation::inject_from(span, request);
    #[cfg(not(feature = "otel"))]
    let _ = (span, request);
}

/// Runs `work` (rmcp's handshake) on a task of its own, where no span is current (entering
/// a disabled span would leave the current one current). rmcp runs a connection's
/// service loop, and each message's task, in the span current when the handshake ends:
/// the handshake's span would stay open for the connection's life and be the parent of
/// everything the server sends. The task is aborted if this future is dropped; a panic in
/// it is resumed here.
///
/// The task is spawned by the call, not at the first poll: the returned future holds only
/// the task's handle, not `work` itself (several KiB for a handshake), so a caller's future
/// that awaits this is not sized by `work` on top of the task that runs it.
pub(crate) fn outside_spans<F>(work: F) -> impl Future<Output = F::Output> + Send + 'static
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let task = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(work));
    async move {
        match task.await {
            Ok(output) => output,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Cancelled: only when the runtime shuts down, which drops this future too.
            Err(_) => std::future::pending().await,
        }
    }
}

/// When a request or a connection began, for its measurement (feature `otel`; without
/// it, nothing is read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Began(#[cfg(feature = "otel")] std::time::Instant);

impl Began {
    /// Now.
    pub(crate) fn now() -> Self {
        Self(
            #[cfg(feature = "otel")]
            std::time::Instant::now(),
        )
    }
}

/// The id of the 2025-era HTTP session a connection's requests are sent with
/// (`mcp.session.id`), kept by its transport; none for stdio and the stateless 2026 era.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionSlot(std::sync::Arc<std::sync::RwLock<Option<std::sync::Arc<str>>>>);

impl SessionSlot {
    /// Keeps `id`, unless it is kept already.
    #[cfg_attr(
        not(feature = "http"),
        expect(dead_code, reason = "set by the HTTP transport")
    )]
    pub(crate) fn set(&self, id: &std::sync::Arc<str>) {
        let same = self
            .0
            .read()
            .is_ok_and(|kept| kept.as_deref() == Some(&**id));
        if !same && let Ok(mut kept) = self.0.write() {
            *kept = Some(std::sync::Arc::clone(id));
        }
    }

    fn get(&self) -> Option<std::sync::Arc<str>> {
        self.0.read().ok().and_then(|kept| kept.clone())
    }
}

/// What a connection keeps for its requests' spans and measurements.
#[derive(Debug)]
pub(crate) struct Instruments {
    /// How the connection reaches its server.
    pub(crate) endpoint: Endpoint,
    /// Its HTTP session's id, once it has one.
    pub(crate) session: SessionSlot,
    /// When its handshake began.
    #[cfg_attr(
        not(feature = "otel"),
        expect(dead_code, reason = "read by the metrics only")
    )]
    began: Began,
    #[cfg(feature = "otel")]
    metrics: metrics::Metrics,
    /// Whether the session's duration was recorded (once, by shutdown or drop).
    #[cfg(feature = "otel")]
    session_recorded: std::sync::atomic::AtomicBool,
}

impl Instruments {
    /// The instruments of a connection to `server` over `endpoint`, its handshake
    /// beginning now.
    pub(crate) fn new(server: &mcp_key::McpServerKey, endpoint: Endpoint) -> Self {
        #[cfg(not(feature = "otel"))]
        let _ = server;
        Self {
            #[cfg(feature = "otel")]
            metrics: metrics::Metrics::new(server, &endpoint),
            endpoint,
            session: SessionSlot::default(),
            began: Began::now(),
            #[cfg(feature = "otel")]
            session_recorded: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Records a request of `method` on `target` begun at `began`, ended as `error_type`.
    #[cfg_attr(
        not(feature = "otel"),
        expect(clippy::unused_self, reason = "one signature for both builds")
    )]
    pub(crate) fn ended(
        &self,
        began: Began,
        method: &'static str,
        target: Option<&str>,
        protocol: Option<&str>,
        error: Option<(&str, Option<i64>)>,
    ) {
        #[cfg(feature = "otel")]
        self.metrics.operation(
            began.0.elapsed(),
            &metrics::Ended {
                method,
                target,
                protocol,
                error_type: error.map(|(kind, _)| kind),
                status_code: error.and_then(|(_, code)| code),
            },
        );
        #[cfg(not(feature = "otel"))]
        let _ = (began, method, target, protocol, error);
    }

    /// Records the end of the connection's session (once), speaking `protocol`, ended as
    /// `error_type` (`None`: closed by its owner).
    #[cfg_attr(
        not(feature = "otel"),
        expect(clippy::unused_self, reason = "one signature for both builds")
    )]
    pub(crate) fn session_ended(&self, protocol: &str, error_type: Option<&str>) {
        #[cfg(feature = "otel")]
        if !self
            .session_recorded
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            self.metrics
                .session(self.began.0.elapsed(), protocol, error_type);
        }
        #[cfg(not(feature = "otel"))]
        let _ = (protocol, error_type);
    }

    /// The span of a request `method` on `target` of the connection to `server`, speaking
    /// `protocol`.
    pub(crate) fn span(
        &self,
        server: &mcp_key::McpServerKey,
        protocol: Option<&str>,
        method: &'static str,
        target: Option<&str>,
    ) -> Span {
        let span = request_span(server, protocol, &self.endpoint, method, target);
        if let Some(id) = self.session.get() {
            span.record(semconv::MCP_SESSION_ID, &*id);
        }
        span
    }

    /// Runs `request` in the span of `method` on `target`, recording how it ended on the
    /// span and in the metrics; `judge` tells the `error.type` of a result that is a
    /// failure all the same (a tool's `isError`). The span is made and the duration's
    /// clock started when the future is made: callers await it at once.
    pub(crate) fn traced<'a, T: 'a>(
        &'a self,
        server: &mcp_key::McpServerKey,
        protocol: Option<rmcp::model::ProtocolVersion>,
        method: &'static str,
        target: Option<&'a str>,
        judge: impl FnOnce(&T) -> Option<&'static str> + 'a,
        request: impl Future<Output = Result<T, RequestError>> + 'a,
    ) -> impl Future<Output = Result<T, RequestError>> + 'a {
        let span = self.span(
            server,
            protocol.as_ref().map(|p| p.as_str()),
            method,
            target,
        );
        let began = Began::now();
        // A combinator, not an `async` body: an `async` body would keep `request` beside
        // the future it awaits, twice its size, and every layer of wrapping doubles it
        // again (a tool call's future was 14 KB for 4.7 KB of its own).
        let instrumented = tracing::Instrument::instrument(request, span.clone());
        futures::FutureExt::map(instrumented, move |outcome| {
            let error = match &outcome {
                Err(e) => Some(error_kind(e)),
                Ok(result) => judge(result).map(|kind| (Cow::Borrowed(kind), None)),
            };
            if let Some((kind, code)) = &error {
                record_ended(&span, kind, *code);
            }
            self.ended(
                began,
                method,
                target,
                protocol.as_ref().map(|p| p.as_str()),
                error.as_ref().map(|(kind, code)| (kind.as_ref(), *code)),
            );
            outcome
        })
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_wait_holds_the_task_not_the_work() {
        let big = [7u8; 4096];
        let work = async move { big.iter().map(|&b| usize::from(b)).sum::<usize>() };
        let waiting = super::outside_spans(work);
        let size = std::mem::size_of_val(&waiting);
        assert!(size < 256, "the wait is {size} bytes");
        assert_eq!(waiting.await, 7 * 4096);
    }
}
