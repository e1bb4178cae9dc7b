//! The OpenTelemetry semantic conventions for MCP, in one place: the attribute names, the
//! span a request runs in ([`request_span!`](crate::request_span)) and what records its
//! attributes. This crate's CLIENT spans and a server's SERVER spans (`mcpctl serve`'s
//! gateway) are built here, so both say the same things under the same names.
//!
//! ```
//! use mcp_client::semconv;
//!
//! let span = mcp_client::request_span!(
//!     target: "my_host::request",
//!     kind: "server",
//!     transport: semconv::TRANSPORT_PIPE,
//!     method: "tools/call",
//!     target_name: Some("get_weather"),
//! );
//! semconv::record_target(&span, "tools/call", Some("get_weather"));
//! semconv::record_failure(&span, semconv::TOOL_ERROR, None);
//! assert_eq!(
//!     semconv::SpanName::new("tools/call", Some("get_weather")).to_string(),
//!     "tools/call get_weather"
//! );
//! ```

use tracing::Span;

/// The `tracing` name of every request span.
pub const REQUEST_SPAN_NAME: &str = "mcp.request";

/// `otel.name`: the span's name for OpenTelemetry ([`SpanName`]).
pub const OTEL_NAME: &str = "otel.name";
/// `otel.kind`: `client` or `server`.
pub const OTEL_KIND: &str = "otel.kind";
/// `otel.status_code`: `error` when the request failed.
pub const OTEL_STATUS_CODE: &str = "otel.status_code";
/// `mcp.method.name`: the JSON-RPC method (`tools/call`).
pub const MCP_METHOD_NAME: &str = "mcp.method.name";
/// `mcp.protocol.version`: the protocol version the connection speaks.
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// `mcp.session.id`: the HTTP session (2025 era), when there is one.
pub const MCP_SESSION_ID: &str = "mcp.session.id";
/// `mcp.resource.uri`: the resource of a `resources/*` request.
pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
/// `mcp.server.name`: the configured server, as this workspace names it (beyond the
/// conventions, in their style).
pub const MCP_SERVER_NAME: &str = "mcp.server.name";
/// `network.transport`: [`TRANSPORT_PIPE`] or [`TRANSPORT_TCP`].
pub const NETWORK_TRANSPORT: &str = "network.transport";
/// `network.protocol.name`: `http` over HTTP.
pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";
/// `server.address`: the HTTP server's host.
pub const SERVER_ADDRESS: &str = "server.address";
/// `server.port`: the HTTP server's port.
pub const SERVER_PORT: &str = "server.port";
/// `gen_ai.tool.name`: the tool of a `tools/call`.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// `gen_ai.prompt.name`: the prompt of a `prompts/get`.
pub const GEN_AI_PROMPT_NAME: &str = "gen_ai.prompt.name";
/// `gen_ai.operation.name`: [`EXECUTE_TOOL`] for a `tools/call`.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// `gen_ai.tool.call.arguments`: a call's arguments (opt-in, redacted).
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// `gen_ai.tool.call.result`: a call's result (opt-in, redacted).
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// `jsonrpc.request.id`: the request's JSON-RPC id.
pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
/// `rpc.response.status_code`: the JSON-RPC error code of a failed request.
pub const RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";
/// `error.type`: what failed ([`TOOL_ERROR`], a JSON-RPC code, `timeout`, ...).
pub const ERROR_TYPE: &str = "error.type";

/// `network.transport` over stdio.
pub const TRANSPORT_PIPE: &str = "pipe";
/// `network.transport` over HTTP.
pub const TRANSPORT_TCP: &str = "tcp";
/// `gen_ai.operation.name` of a tool call.
pub const EXECUTE_TOOL: &str = "execute_tool";
/// `error.type` of a tool result with `isError`.
pub const TOOL_ERROR: &str = "tool_error";

/// The conventions' span name, `{mcp.method.name} {target}` (the target being the tool or
/// prompt name when there is one), written only when a subscriber records it.
#[derive(Debug, Clone, Copy)]
pub struct SpanName<'a> {
    method: &'a str,
    target: Option<&'a str>,
}

impl<'a> SpanName<'a> {
    /// The name of a request `method` on `target`.
    pub fn new(method: &'a str, target: Option<&'a str>) -> Self {
        Self { method, target }
    }
}

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.target {
            Some(target) => write!(f, "{} {target}", self.method),
            None => f.write_str(self.method),
        }
    }
}

/// The span of one MCP request, with every attribute of the conventions declared (those
/// not given here empty, for [`record_target`], [`record_failure`] and `Span::record` with
/// the names above):
///
/// ```text
/// request_span!(
///     target: <the tracing target>,
///     [parent: <an explicit parent, e.g. None>,]
///     kind: "client" | "server",
///     transport: TRANSPORT_PIPE | TRANSPORT_TCP,
///     method: <&'static str>,
///     target_name: <Option<&str>, the tool or prompt>,
/// )
/// ```
///
/// A macro because a `tracing` span's target and fields are part of its static call site.
#[macro_export]
macro_rules! request_span {
    (
        target: $target:expr,
        $(parent: $parent:expr,)?
        kind: $kind:expr,
        transport: $transport:expr,
        method: $method:expr,
        target_name: $name:expr $(,)?
    ) => {{
        use $crate::__private::tracing::field::Empty;
        use $crate::semconv as sc;
        $crate::__private::tracing::info_span!(
            target: $target,
            $(parent: $parent,)?
            "mcp.request",
            { sc::OTEL_NAME } = %sc::SpanName::new($method, $name),
            { sc::OTEL_KIND } = $kind,
            { sc::OTEL_STATUS_CODE } = Empty,
            { sc::MCP_METHOD_NAME } = $method,
            { sc::MCP_PROTOCOL_VERSION } = Empty,
            { sc::MCP_SESSION_ID } = Empty,
            { sc::MCP_RESOURCE_URI } = Empty,
            { sc::MCP_SERVER_NAME } = Empty,
            { sc::NETWORK_TRANSPORT } = $transport,
            { sc::NETWORK_PROTOCOL_NAME } = Empty,
            { sc::SERVER_ADDRESS } = Empty,
            { sc::SERVER_PORT } = Empty,
            { sc::GEN_AI_TOOL_NAME } = Empty,
            { sc::GEN_AI_PROMPT_NAME } = Empty,
            { sc::GEN_AI_OPERATION_NAME } = Empty,
            { sc::GEN_AI_TOOL_CALL_ARGUMENTS } = Empty,
            { sc::GEN_AI_TOOL_CALL_RESULT } = Empty,
            { sc::JSONRPC_REQUEST_ID } = Empty,
            { sc::RPC_RESPONSE_STATUS_CODE } = Empty,
            { sc::ERROR_TYPE } = Empty,
        )
    }};
}

/// The attributes a request `method` on `target` adds: `gen_ai.tool.name` and
/// `gen_ai.operation.name` for `tools/call`, `gen_ai.prompt.name` for `prompts/get`.
pub fn target_attributes<'a>(
    method: &str,
    target: Option<&'a str>,
) -> impl Iterator<Item = (&'static str, &'a str)> + use<'a> {
    let pairs: [Option<(&'static str, &'a str)>; 2] = match (method, target) {
        ("tools/call", Some(tool)) => [
            Some((GEN_AI_TOOL_NAME, tool)),
            Some((GEN_AI_OPERATION_NAME, EXECUTE_TOOL)),
        ],
        ("prompts/get", Some(prompt)) => [Some((GEN_AI_PROMPT_NAME, prompt)), None],
        _ => [None, None],
    };
    pairs.into_iter().flatten()
}

/// Records on `span` the attributes of its `method`'s `target` ([`target_attributes`]).
pub fn record_target(span: &Span, method: &str, target: Option<&str>) {
    for (name, value) in target_attributes(method, target) {
        span.record(name, value);
    }
}

/// Records on `span` that its request failed as `error_type` (with the JSON-RPC
/// `status_code` when the peer answered with an error).
pub fn record_failure(span: &Span, error_type: &str, status_code: Option<i64>) {
    if let Some(code) = status_code {
        span.record(RPC_RESPONSE_STATUS_CODE, code);
    }
    span.record(ERROR_TYPE, error_type);
    span.record(OTEL_STATUS_CODE, "error");
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use pretty_assertions::assert_eq;
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing_subscriber::layer::{Context, SubscriberExt as _};

    use super::*;

    /// Every field a span was given, as text, in the order given.
    #[derive(Clone, Default)]
    struct Fields(Arc<Mutex<Vec<(String, String)>>>);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let mut fields = self.0.lock().unwrap_or_else(|e| e.into_inner());
            fields.push((field.name().to_owned(), format!("{value:?}")));
        }

        fn record_str(&mut self, field: &Field, value: &str) {
            let mut fields = self.0.lock().unwrap_or_else(|e| e.into_inner());
            fields.push((field.name().to_owned(), value.to_owned()));
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Fields {
        fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
            attrs.record(&mut self.clone());
        }

        fn on_record(&self, _: &Id, values: &Record<'_>, _: Context<'_, S>) {
            values.record(&mut self.clone());
        }
    }

    #[test]
    fn a_tool_call_span_says_what_the_conventions_ask() {
        let fields = Fields::default();
        let subscriber = tracing_subscriber::registry().with(fields.clone());
        tracing::subscriber::with_default(subscriber, || {
            let span = crate::request_span!(
                target: "semconv_test",
                parent: None,
                kind: "server",
                transport: TRANSPORT_TCP,
                method: "tools/call",
                target_name: Some("echo"),
            );
            record_target(&span, "tools/call", Some("echo"));
            record_failure(&span, "-32602", Some(-32602));
        });
        let got = fields.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let got: Vec<(&str, &str)> = got.iter().map(|(k, v)| (&**k, &**v)).collect();
        assert_eq!(
            got,
            [
                ("otel.name", "tools/call echo"),
                ("otel.kind", "server"),
                ("mcp.method.name", "tools/call"),
                ("network.transport", "tcp"),
                ("gen_ai.tool.name", "echo"),
                ("gen_ai.operation.name", "execute_tool"),
                ("rpc.response.status_code", "-32602"),
                ("error.type", "-32602"),
                ("otel.status_code", "error"),
            ]
        );
    }

    #[test]
    fn the_span_name_is_the_method_and_its_target() {
        assert_eq!(
            SpanName::new("tools/call", Some("mcp__a__echo")).to_string(),
            "tools/call mcp__a__echo"
        );
        assert_eq!(SpanName::new("tools/list", None).to_string(), "tools/list");
    }

    #[test]
    fn only_calls_and_prompts_have_target_attributes() {
        let pairs = |method, target| target_attributes(method, target).collect::<Vec<_>>();
        assert_eq!(
            pairs("prompts/get", Some("greet")),
            [("gen_ai.prompt.name", "greet")]
        );
        assert_eq!(pairs("tools/list", None), []);
        assert_eq!(pairs("tools/call", None), []);
    }
}
