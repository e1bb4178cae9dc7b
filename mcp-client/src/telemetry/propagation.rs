//! The trace context of the current span, carried to the server in `params._meta`
//! (`traceparent`, `tracestate`, `baggage`, unprefixed, as the conventions and SEP-414
//! say), so a server that reads it joins the host's trace. Written through the global
//! text-map propagator the host installed (`opentelemetry::global::set_text_map_propagator`,
//! usually W3C Trace Context with Baggage); with none installed, or no OpenTelemetry layer
//! recording the span, nothing is written. Keys a caller already put in `_meta` are kept.

use rmcp::model::{ClientRequest, GetMeta, RequestMetaObject};
use serde_json::Value;
use tracing::Span;

/// Writes the propagator's keys into a request's `_meta`, keeping keys already there.
struct MetaInjector<'a>(&'a mut RequestMetaObject);

impl opentelemetry::propagation::Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.entry(key.to_owned()).or_insert(Value::String(value));
    }
}

/// Puts the trace context of `span` into `request`'s `_meta`.
pub(crate) fn inject_from(span: &Span, request: &mut ClientRequest) {
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let context = span.context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut MetaInjector(request.get_meta_mut()));
    });
}
