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
//! Arguments and results are never recorded.

use tracing::Span;
use tracing::field::Empty;

use crate::error::RequestError;

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

/// The conventions' span name, `{mcp.method.name} {target}`, written only when a
/// subscriber records it.
struct SpanName<'a>(&'static str, Option<&'a str>);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
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
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "mcp.request",
        otel.name = %SpanName(method, target),
        otel.kind = "client",
        otel.status_code = Empty,
        mcp.method.name = method,
        mcp.protocol.version = Empty,
        mcp.server.name = %server,
        network.transport = endpoint.transport,
        server.address = Empty,
        server.port = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        gen_ai.operation.name = Empty,
        jsonrpc.request.id = Empty,
        rpc.response.status_code = Empty,
        error.type = Empty,
    );
    if let Some(protocol) = protocol {
        span.record("mcp.protocol.version", protocol);
    }
    if let Some(address) = &endpoint.address {
        span.record("server.address", address.as_str());
    }
    if let Some(port) = endpoint.port {
        span.record("server.port", port);
    }
    match (method, target) {
        ("tools/call", Some(tool)) => {
            span.record("gen_ai.tool.name", tool);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        ("prompts/get", Some(prompt)) => {
            span.record("gen_ai.prompt.name", prompt);
        }
        _ => {}
    }
    span
}

/// Records how the request of `span` ended.
pub(crate) fn record_error(span: &Span, error: &RequestError) {
    let kind = match error {
        RequestError::Server { code, .. } => {
            span.record("rpc.response.status_code", i64::from(*code));
            code.to_string()
        }
        RequestError::Timeout { .. } => "timeout".to_owned(),
        RequestError::Protocol { .. } => "protocol_error".to_owned(),
        RequestError::AuthRequired => "auth_required".to_owned(),
        RequestError::Disconnected { .. } => "disconnected".to_owned(),
        RequestError::Unsupported { .. } => "unsupported".to_owned(),
        RequestError::Declined { .. } => "declined".to_owned(),
        RequestError::TaskLost { .. } => "task_lost".to_owned(),
        RequestError::Aborted => "aborted".to_owned(),
    };
    span.record("error.type", kind.as_str());
    span.record("otel.status_code", "error");
}

/// Records a tool result with `isError` as the conventions' `tool_error`.
pub(crate) fn record_tool_result(span: &Span, result: &rmcp::model::CallToolResult) {
    if result.is_error == Some(true) {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "error");
    }
}

/// Records `failure` of a connection's start on its handshake span.
pub(crate) fn record_failure(span: &Span, failure: &crate::StartupFailure) {
    span.record("error.type", failure.reason().to_string().as_str());
    span.record("otel.status_code", "error");
}

impl crate::Client {
    /// The span of a request `method` on `target` of this connection.
    pub(crate) fn request_span(&self, method: &'static str, target: Option<&str>) -> Span {
        request_span(
            &self.shared.key,
            Some(self.protocol_version().as_str()),
            &self.shared.endpoint,
            method,
            target,
        )
    }

    /// Runs `request` in the span of `method` on `target`, recording its failure.
    pub(crate) async fn traced<T>(
        &self,
        method: &'static str,
        target: Option<&str>,
        request: impl Future<Output = Result<T, RequestError>>,
    ) -> Result<T, RequestError> {
        let span = self.request_span(method, target);
        let outcome = tracing::Instrument::instrument(request, span.clone()).await;
        if let Err(e) = &outcome {
            record_error(&span, e);
        }
        outcome
    }
}
