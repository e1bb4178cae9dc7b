//! The gateway's span for each request of its client: a SERVER span named and attributed
//! like `mcp-client`'s CLIENT spans (the OpenTelemetry semantic conventions for MCP), and a
//! child of the client's own trace when the request carries one.
//!
//! [`Traced`] is the MCP server rmcp runs: it hands every request to the client's
//! [`Gateway`] inside a span (target [`SPAN_TARGET`], `tracing` name `mcp.request`) with
//! - `otel.name` = `{mcp.method.name} {target}` (the tool or prompt name as the client
//!   called it, e.g. `tools/call mcp__notes__echo`; else the method alone), `otel.kind` =
//!   `server`, `otel.status_code` = `error` when it failed;
//! - `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id` (2025-era HTTP sessions),
//!   `network.transport` (`pipe` over stdio, `tcp` over HTTP) and `network.protocol.name`
//!   (`http`), `jsonrpc.request.id`;
//! - `gen_ai.tool.name` and `gen_ai.operation.name` = `execute_tool` for `tools/call`,
//!   `gen_ai.prompt.name` for `prompts/get`, `mcp.resource.uri` for the resource methods;
//! - `error.type`: `tool_error` for a result with `isError`, else the JSON-RPC error code,
//!   with `rpc.response.status_code`.
//!
//! The gateway's work, upstream requests included, runs in the span, so `mcp-client`'s
//! upstream spans, and the `traceparent` it sends upstream, are in the span's trace. What
//! trace that is follows `--client-trace` ([`ClientTrace`]) when the request's
//! `params._meta` carries a W3C `traceparent`:
//! - `link` (the default): the span is a root of a trace of the gateway's own, with a link
//!   to the client's span. Nothing the client sent (its trace id, sampled flag,
//!   `tracestate`, `baggage`) reaches an upstream server;
//! - `continue`: the client's `traceparent` becomes the span's parent, so the upstream
//!   servers are in the client's trace; its `tracestate` and `baggage` are still dropped
//!   (baggage such as `user.id=admin` is the client's say, and no upstream's business).
//!
//! Only `traceparent` is read, with the W3C trace-context propagator whatever the global
//! one is. Without an OpenTelemetry layer these are plain `tracing` spans, and nothing is
//! read from `_meta` when nobody records them.
//!
//! Every handler [`Gateway`] implements is delegated here (a test checks that none is
//! left out: one left out would silently answer with rmcp's default).

use std::borrow::Cow;
use std::pin::Pin;

use mcp_client::semconv;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tracing::{Instrument, Span};

use super::Gateway;
pub(crate) use crate::cli::ClientTrace;

/// The `tracing` target of the gateway's request spans.
pub(crate) const SPAN_TARGET: &str = "mcpctl::serve::request";

/// How the client reaches the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Over stdin/stdout.
    Pipe,
    /// Over streamable HTTP.
    Http,
}

/// A client's [`Gateway`], each request in its span.
#[derive(Debug, Clone)]
pub(crate) struct Traced {
    gateway: Gateway,
    transport: Transport,
    client_trace: ClientTrace,
}

impl Traced {
    /// `gateway`, its client reaching it over `transport`, its trace context taken as
    /// `client_trace` says.
    pub(crate) fn new(gateway: Gateway, transport: Transport, client_trace: ClientTrace) -> Self {
        Self {
            gateway,
            transport,
            client_trace,
        }
    }

    /// The span of a request `method` on `target` (a tool or prompt name).
    fn span(
        &self,
        method: &'static str,
        target: Option<&str>,
        context: &RequestContext<RoleServer>,
    ) -> Span {
        request_span(method, target, context, self.transport, self.client_trace)
    }
}

/// A request's `_meta` as the trace-context propagator sees it: its `traceparent` and
/// nothing else (the client's `tracestate` and `baggage` stay out of the gateway's trace).
struct TraceparentOnly<'a>(&'a rmcp::model::JsonObject);

impl TraceparentOnly<'_> {
    const KEY: &'static str = "traceparent";

    fn value(&self) -> Option<&str> {
        self.0.get(Self::KEY)?.as_str()
    }
}

impl opentelemetry::propagation::Extractor for TraceparentOnly<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        (key == Self::KEY).then(|| self.value()).flatten()
    }

    fn keys(&self) -> Vec<&str> {
        self.value().map(|_| vec![Self::KEY]).unwrap_or_default()
    }
}

/// The client's span in `meta`, from its `traceparent` alone, if it carries a valid one.
fn client_span(meta: &rmcp::model::JsonObject) -> Option<opentelemetry::trace::SpanContext> {
    use opentelemetry::propagation::TextMapPropagator as _;
    use opentelemetry::trace::TraceContextExt as _;
    let carrier = TraceparentOnly(meta);
    carrier.value()?;
    let context = opentelemetry_sdk::propagation::TraceContextPropagator::new()
        .extract_with_context(&opentelemetry::Context::new(), &carrier);
    let span = context.span().span_context().clone();
    span.is_valid().then_some(span)
}

/// See [`Traced::span`]; a child of the trace context in the request's `_meta`, if any.
fn request_span(
    method: &'static str,
    target: Option<&str>,
    context: &RequestContext<RoleServer>,
    transport: Transport,
    client_trace: ClientTrace,
) -> Span {
    let span = mcp_client::request_span!(
        target: SPAN_TARGET,
        parent: None,
        kind: "server",
        transport: match transport {
            Transport::Pipe => semconv::TRANSPORT_PIPE,
            Transport::Http => semconv::TRANSPORT_TCP,
        },
        method: method,
        target_name: target,
    );
    if span.is_disabled() {
        return span;
    }
    span.record(
        semconv::JSONRPC_REQUEST_ID,
        tracing::field::display(&context.id),
    );
    let modern = super::modern::is_modern(context);
    if let Some(version) = context.protocol_version() {
        span.record(semconv::MCP_PROTOCOL_VERSION, version.as_str());
    }
    if transport == Transport::Http {
        span.record(semconv::NETWORK_PROTOCOL_NAME, "http");
    }
    if !modern && let Some(session) = session_of(context) {
        span.record(semconv::MCP_SESSION_ID, session);
    }
    semconv::record_target(&span, method, target);
    if let Some(client) = client_span(&context.meta) {
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        match client_trace {
            ClientTrace::Link => span.add_link(client),
            ClientTrace::Continue => {
                // From an empty context: no baggage, and what is current here (rmcp's
                // session) is no parent.
                let parent = opentelemetry::Context::new().with_remote_span_context(client);
                if let Err(e) = span.set_parent(parent) {
                    tracing::trace!("the client's trace context was not taken: {e}");
                }
            }
        }
    }
    span
}

/// The HTTP session a request came in (2025-era clients over HTTP).
fn session_of(context: &RequestContext<RoleServer>) -> Option<&str> {
    context
        .extensions
        .get::<http::request::Parts>()?
        .headers
        .get(super::absent::SESSION_HEADER)?
        .to_str()
        .ok()
}

/// Runs `work` in `span`, recording its failure. `work` comes boxed: the gateway's
/// futures are large, and held inline here (as rmcp holds this one) they would be copied
/// on the stack of each poll's construction (beyond a worker's stack in debug builds).
async fn run<T>(
    span: Span,
    work: Pin<Box<impl Future<Output = Result<T, McpError>>>>,
) -> Result<T, McpError> {
    let outcome = work.instrument(span.clone()).await;
    if let Err(e) = &outcome {
        semconv::record_failure(&span, &e.code.0.to_string(), Some(i64::from(e.code.0)));
    }
    outcome
}

impl ServerHandler for Traced {
    fn get_info(&self) -> ServerConfig {
        self.gateway.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.gateway.supported_protocol_versions()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let span = self.span("initialize", None, &context);
        if !span.is_disabled() {
            span.record(
                semconv::MCP_PROTOCOL_VERSION,
                request.protocol_version.as_str(),
            );
        }
        run(span, Box::pin(self.gateway.initialize(request, context))).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let span = self.span("tools/list", None, &context);
        run(span, Box::pin(self.gateway.list_tools(request, context))).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let span = self.span("tools/call", Some(&request.name), &context);
        let outcome = run(
            span.clone(),
            Box::pin(self.gateway.call_tool(request, context)),
        )
        .await;
        if let Ok(CallToolResponse::Complete(result)) = &outcome
            && result.is_error == Some(true)
        {
            semconv::record_failure(&span, semconv::TOOL_ERROR, None);
        }
        outcome
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        self.gateway.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let span = self.span("subscriptions/listen", None, context.request_context());
        run(span, Box::pin(self.gateway.listen(context))).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        let span = self.span("tasks/get", None, &context);
        run(span, Box::pin(self.gateway.get_task(request, context))).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = self.span("tasks/update", None, &context);
        run(span, Box::pin(self.gateway.update_task(request, context))).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = self.span("tasks/cancel", None, &context);
        run(span, Box::pin(self.gateway.cancel_task(request, context))).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let span = self.span("resources/list", None, &context);
        run(
            span,
            Box::pin(self.gateway.list_resources(request, context)),
        )
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let span = self.span("resources/templates/list", None, &context);
        run(
            span,
            Box::pin(self.gateway.list_resource_templates(request, context)),
        )
        .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let span = self.span("prompts/list", None, &context);
        run(span, Box::pin(self.gateway.list_prompts(request, context))).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let span = self.span("prompts/get", Some(&request.name), &context);
        run(span, Box::pin(self.gateway.get_prompt(request, context))).await
    }

    #[allow(
        deprecated,
        reason = "the gateway speaks the 2025-11-25 era downstream"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = self.span("logging/setLevel", None, &context);
        run(span, Box::pin(self.gateway.set_level(request, context))).await
    }

    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        let span = self.span("completion/complete", None, &context);
        run(span, Box::pin(self.gateway.complete(request, context))).await
    }

    #[allow(
        deprecated,
        reason = "the gateway speaks the 2025-11-25 era downstream"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = self.span("resources/subscribe", None, &context);
        span.record(semconv::MCP_RESOURCE_URI, request.uri.as_str());
        run(span, Box::pin(self.gateway.subscribe(request, context))).await
    }

    #[allow(
        deprecated,
        reason = "the gateway speaks the 2025-11-25 era downstream"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let span = self.span("resources/unsubscribe", None, &context);
        span.record(semconv::MCP_RESOURCE_URI, request.uri.as_str());
        run(span, Box::pin(self.gateway.unsubscribe(request, context))).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListSkillsResult, McpError> {
        let span = self.span("skills/list", None, &context);
        run(span, Box::pin(self.gateway.list_skills(request, context))).await
    }

    async fn get_skill(
        &self,
        request: rmcp::model::GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetSkillResult, McpError> {
        let span = self.span("skills/get", None, &context);
        span.record(semconv::MCP_RESOURCE_URI, request.uri.as_str());
        run(span, Box::pin(self.gateway.get_skill(request, context))).await
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, McpError> {
        let method = match request.method.as_str() {
            "events/list" => "events/list",
            "events/poll" => "events/poll",
            _ => "custom",
        };
        let span = self.span(method, None, &context);
        run(
            span,
            Box::pin(self.gateway.on_custom_request(request, context)),
        )
        .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let span = self.span("resources/read", None, &context);
        span.record(semconv::MCP_RESOURCE_URI, request.uri.as_str());
        run(span, Box::pin(self.gateway.read_resource(request, context))).await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use pretty_assertions::assert_eq;

    /// The names of the functions in `impl ServerHandler for <ty>` of `source`.
    fn handlers(source: &str, ty: &str) -> Vec<String> {
        let start = source
            .find(&format!("impl ServerHandler for {ty} {{"))
            .unwrap();
        let body = &source[start..];
        let body = &body[..body.find("\n}\n").unwrap()];
        let mut names: Vec<String> = body
            .lines()
            .filter_map(|line| {
                let line = line.trim_start();
                let rest = line
                    .strip_prefix("async fn ")
                    .or_else(|| line.strip_prefix("fn "))?;
                Some(rest[..rest.find(['(', '<'])?].to_owned())
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn every_handler_of_the_gateway_is_delegated() {
        let gateway = handlers(include_str!("gateway/mod.rs"), "Gateway");
        assert!(gateway.contains(&"call_tool".to_owned()), "{gateway:?}");
        assert_eq!(handlers(include_str!("trace.rs"), "Traced"), gateway);
    }
}
