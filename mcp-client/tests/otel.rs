//! The client through a real OpenTelemetry pipeline (feature `otel`): the host installs
//! `tracing-opentelemetry` over an SDK tracer with an in-memory exporter, an SDK meter
//! provider with an in-memory exporter, and the W3C Trace Context propagator, as a host
//! would. The exported spans and metrics are compared with what the MCP semantic
//! conventions say (names, kinds, attributes, bucket boundaries), and the `traceparent`
//! each fake server received with the span that sent it.
//!
//! The pipeline is global, so each test uses servers of its own name and reads only what
//! they produced.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_client::{CallSettings, Client, ClientSettings, DeclineRequests, HttpTarget, Target};
use mcp_testkit::{
    Behavior, HttpFakeServer, RecordedRequest, ResourceSpec, Scenario, TestHome, ToolSpec,
};
use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, HistogramDataPoint, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing_subscriber::layer::SubscriberExt;

mod support;

use support::stdio;

/// The bucket boundaries the conventions give `mcp.client.operation.duration` and
/// `mcp.client.session.duration`, written out here (not taken from the crate).
const CONVENTION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The host's OpenTelemetry pipeline, installed once for the test process.
struct Pipeline {
    spans: InMemorySpanExporter,
    metrics: InMemoryMetricExporter,
    meters: SdkMeterProvider,
}

fn pipeline() -> &'static Pipeline {
    static PIPELINE: OnceLock<Pipeline> = OnceLock::new();
    PIPELINE.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let tracers = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(tracers.tracer("host"));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("one global subscriber");
        let metrics = InMemoryMetricExporter::default();
        let meters = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        opentelemetry::global::set_meter_provider(meters.clone());
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        Pipeline {
            spans,
            metrics,
            meters,
        }
    })
}

/// The attribute `key` of `attributes`, as text.
fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| match &kv.value {
            Value::String(s) => s.as_str().to_owned(),
            other => other.to_string(),
        })
}

/// The exported spans of server `server` (its `mcp.server.name`).
fn spans_of(server: &str) -> Vec<SpanData> {
    pipeline()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|s| attribute(&s.attributes, "mcp.server.name").as_deref() == Some(server))
        .collect()
}

/// The one exported span named `name` of `server`.
fn span(server: &str, name: &str) -> SpanData {
    let mut found: Vec<SpanData> = spans_of(server)
        .into_iter()
        .filter(|s| s.name == name)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{name}: {:#?}",
        spans_of(server)
            .iter()
            .map(|s| (s.name.clone(), s.attributes.clone()))
            .collect::<Vec<_>>()
    );
    found.remove(0)
}

/// The `traceparent` a span's request carries: version 00, its trace and span ids,
/// sampled.
fn traceparent_of(span: &SpanData) -> String {
    format!(
        "00-{}-{}-01",
        span.span_context.trace_id(),
        span.span_context.span_id()
    )
}

/// The `_meta.traceparent` of a recorded request.
fn sent_traceparent(request: &RecordedRequest) -> Option<String> {
    request.params["_meta"]["traceparent"]
        .as_str()
        .map(str::to_owned)
}

fn scenario(name: &str) -> Scenario {
    Scenario::new(name)
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "broken",
            Behavior::Error {
                message: "it broke".to_owned(),
            },
        ))
        .with_tool(ToolSpec::new("slow", Behavior::Sleep { ms: 60_000 }))
        .with_resource(ResourceSpec::new("file:///notes.txt", "notes", "hello"))
}

async fn connect(server: &str, target: Target) -> Client {
    pipeline();
    Client::connect(
        server.parse().unwrap(),
        target,
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap()
}

/// The data points of histogram `name` whose `mcp.server.name` is `server`, after a flush.
fn histogram_points(name: &str, server: &str) -> (String, Vec<HistogramDataPoint<f64>>) {
    let (unit, points) = exported_histogram(name, server);
    (unit.unwrap_or_else(|| panic!("no metric {name}")), points)
}

/// The unit of histogram `name` (`None` while nothing has recorded into it in this
/// process: the exporter lists no instrument without data) and its points for `server`.
fn exported_histogram(name: &str, server: &str) -> (Option<String>, Vec<HistogramDataPoint<f64>>) {
    let pipeline = pipeline();
    pipeline.meters.force_flush().unwrap();
    let mut unit = None;
    let mut points = Vec::new();
    // Each flush exports everything so far (cumulative): the latest export is whole.
    let exported = pipeline.metrics.get_finished_metrics().unwrap();
    for resource in exported.iter().rev().take(1) {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics().filter(|m| m.name() == name) {
                unit = Some(metric.unit().to_owned());
                let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
                    panic!("{name} is not a histogram of f64: {metric:#?}");
                };
                points.extend(histogram.data_points().cloned());
            }
        }
    }
    let points = points
        .into_iter()
        .filter(|p| {
            let attributes: Vec<KeyValue> = p.attributes().cloned().collect();
            attribute(&attributes, "mcp.server.name").as_deref() == Some(server)
        })
        .collect();
    (unit, points)
}

fn attributes_of(point: &HistogramDataPoint<f64>) -> Vec<KeyValue> {
    point.attributes().cloned().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_a_client_span_in_the_hosts_trace_and_the_server_receives_its_context() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario("otel-call"));
    pipeline();
    let host = tracing::info_span!("host turn");
    let client =
        tracing::Instrument::instrument(connect("otel-call", server.target.clone()), host.clone())
            .await;
    let call = client.call_tool(
        "echo",
        serde_json::json!({"secret": "s3cr3t"}).as_object().cloned(),
        CallSettings::new(Duration::from_secs(20)),
    );
    tracing::Instrument::instrument(call, host.clone())
        .await
        .unwrap();
    drop(host);
    client.shutdown().await;
    server.assert_gone().await;

    let host = pipeline()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .find(|s| s.name == "host turn")
        .unwrap_or_else(|| {
            panic!(
                "the host's span was not exported: {:#?}",
                pipeline()
                    .spans
                    .get_finished_spans()
                    .unwrap()
                    .iter()
                    .map(|s| (s.name.clone(), s.parent_span_id, s.span_context.span_id()))
                    .collect::<Vec<_>>()
            )
        });
    let call = span("otel-call", "tools/call echo");
    assert_eq!(call.span_kind, SpanKind::Client);
    assert_eq!(call.span_context.trace_id(), host.span_context.trace_id());
    assert_eq!(call.parent_span_id, host.span_context.span_id());
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("network.transport", "pipe"),
        ("mcp.protocol.version", "2025-11-25"),
    ] {
        assert_eq!(
            attribute(&call.attributes, key).as_deref(),
            Some(value),
            "{key}: {call:#?}"
        );
    }
    assert!(attribute(&call.attributes, "jsonrpc.request.id").is_some());
    assert_eq!(attribute(&call.attributes, "error.type"), None);
    assert!(
        !format!("{call:?}").contains("s3cr3t"),
        "arguments are not recorded"
    );

    // The server received the call's own context: same trace, the MCP span as parent.
    let received = server.wait_for("tools/call").await;
    assert_eq!(
        sent_traceparent(&received[0]).as_deref(),
        Some(traceparent_of(&call).as_str()),
        "{received:#?}"
    );
    // The handshake too: the era is probed with `server/discover` (a span under the
    // host's), which this 2025-era server answers the old way; the `initialize` that
    // follows is a span of its own under the probe's.
    let probe = span("otel-call", "server/discover");
    assert_eq!(probe.parent_span_id, host.span_context.span_id());
    let handshake = span("otel-call", "initialize");
    assert_eq!(handshake.span_kind, SpanKind::Client);
    assert_eq!(handshake.parent_span_id, probe.span_context.span_id());
    assert_eq!(
        attribute(&handshake.attributes, "mcp.method.name").as_deref(),
        Some("initialize")
    );
    let initialize = server.wait_for("initialize").await;
    assert_eq!(
        sent_traceparent(&initialize[0]).as_deref(),
        Some(traceparent_of(&handshake).as_str())
    );
    // And the first listing, read in the handshake.
    let list = server.wait_for("tools/list").await;
    assert_eq!(
        sent_traceparent(&list[0]).map(|t| t[3..35].to_owned()),
        Some(host.span_context.trace_id().to_string()),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_typed_and_the_durations_are_histograms_with_the_conventions_buckets() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario("otel-errors"));
    let client = connect("otel-errors", server.target.clone()).await;
    let settings = || CallSettings::new(Duration::from_secs(20));
    client.call_tool("echo", None, settings()).await.unwrap();
    let broken = client.call_tool("broken", None, settings()).await.unwrap();
    assert_eq!(broken.is_error, Some(true));
    let unknown = client
        .call_tool("nope", None, settings())
        .await
        .unwrap_err();
    let mcp_client::RequestError::Server { code, .. } = unknown else {
        panic!("an unknown tool is the server's error: {unknown}");
    };
    let timeout = client
        .call_tool("slow", None, CallSettings::new(Duration::from_millis(200)))
        .await
        .unwrap_err();
    assert!(timeout.is_timeout());
    client.read_resource("file:///notes.txt").await.unwrap();

    let broken = span("otel-errors", "tools/call broken");
    assert_eq!(
        attribute(&broken.attributes, "error.type").as_deref(),
        Some("tool_error")
    );
    assert!(matches!(broken.status, Status::Error { .. }), "{broken:#?}");
    let nope = span("otel-errors", "tools/call nope");
    assert_eq!(
        attribute(&nope.attributes, "error.type"),
        Some(code.to_string())
    );
    assert_eq!(
        attribute(&nope.attributes, "rpc.response.status_code"),
        Some(code.to_string())
    );
    let slow = span("otel-errors", "tools/call slow");
    assert_eq!(
        attribute(&slow.attributes, "error.type").as_deref(),
        Some("timeout")
    );
    let read = span("otel-errors", "resources/read");
    assert_eq!(read.span_kind, SpanKind::Client);
    assert_eq!(attribute(&read.attributes, "error.type"), None);
    let reads = server.wait_for("resources/read").await;
    assert_eq!(
        sent_traceparent(&reads[0]).as_deref(),
        Some(traceparent_of(&read).as_str())
    );

    let (unit, points) = histogram_points("mcp.client.operation.duration", "otel-errors");
    assert_eq!(unit, "s");
    for point in &points {
        assert_eq!(point.bounds().collect::<Vec<_>>(), CONVENTION_BUCKETS);
    }
    let point = |method: &str, tool: Option<&str>, error: Option<&str>| {
        points.iter().find(|p| {
            let a = attributes_of(p);
            attribute(&a, "mcp.method.name").as_deref() == Some(method)
                && attribute(&a, "gen_ai.tool.name").as_deref() == tool
                && attribute(&a, "error.type").as_deref() == error
        })
    };
    let echo = point("tools/call", Some("echo"), None).expect("the echo call was measured");
    assert_eq!(echo.count(), 1);
    let echo = attributes_of(echo);
    assert_eq!(
        attribute(&echo, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        attribute(&echo, "network.transport").as_deref(),
        Some("pipe")
    );
    assert_eq!(
        attribute(&echo, "mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    assert!(point("tools/call", Some("broken"), Some("tool_error")).is_some());
    let nope = point("tools/call", Some("nope"), Some(&code.to_string()))
        .expect("the server's error was measured");
    assert_eq!(
        attribute(&attributes_of(nope), "rpc.response.status_code"),
        Some(code.to_string())
    );
    let slow = point("tools/call", Some("slow"), Some("timeout")).expect("the timeout");
    assert!(slow.sum() >= 0.2, "the timeout took its 200 ms: {slow:#?}");
    assert!(point("resources/read", None, None).is_some());
    assert!(point("initialize", None, None).is_some());
    assert!(
        point("tools/list", None, None).is_none(),
        "the handshake's listing is part of it"
    );

    // The session: measured once the connection ends.
    // Alone in its process (as nextest runs it), no session has ended yet, so the
    // histogram is not exported at all; beside other tests it may be, with their points.
    let (_, before) = exported_histogram("mcp.client.session.duration", "otel-errors");
    assert!(before.is_empty(), "the session is still open: {before:#?}");
    client.shutdown().await;
    drop(client);
    let (unit, sessions) = histogram_points("mcp.client.session.duration", "otel-errors");
    assert_eq!(unit, "s");
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    assert_eq!(sessions[0].count(), 1, "recorded once, not again on drop");
    assert_eq!(sessions[0].bounds().collect::<Vec<_>>(), CONVENTION_BUCKETS);
    let session = attributes_of(&sessions[0]);
    assert_eq!(
        attribute(&session, "mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    assert_eq!(attribute(&session, "error.type"), None);
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_era_server_gets_the_context_of_its_discover_and_calls() {
    let mut faults = mcp_testkit::Faults::default();
    faults.protocol_version = Some("2026-07-28".to_owned());
    let server = HttpFakeServer::start(scenario("otel-2026").with_faults(faults))
        .await
        .unwrap();
    pipeline();
    let host = tracing::info_span!("host 2026");
    let client = tracing::Instrument::instrument(
        connect("otel-2026", Target::Http(HttpTarget::new(server.url()))),
        host.clone(),
    )
    .await;
    let call = client.call_tool("echo", None, CallSettings::new(Duration::from_secs(20)));
    tracing::Instrument::instrument(call, host.clone())
        .await
        .unwrap();
    drop(host);
    let discover = span("otel-2026", "server/discover");
    assert_eq!(discover.span_kind, SpanKind::Client);
    assert_eq!(
        attribute(&discover.attributes, "network.transport").as_deref(),
        Some("tcp")
    );
    let call = span("otel-2026", "tools/call echo");
    assert_eq!(
        call.span_context.trace_id(),
        discover.span_context.trace_id()
    );
    assert_eq!(
        attribute(&call.attributes, "mcp.protocol.version").as_deref(),
        Some("2026-07-28")
    );
    assert_eq!(
        attribute(&call.attributes, "mcp.session.id"),
        None,
        "no session in the 2026 era"
    );
    let calls: Vec<RecordedRequest> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "tools/call")
        .collect();
    assert_eq!(
        calls.first().and_then(sent_traceparent).as_deref(),
        Some(traceparent_of(&call).as_str()),
        "{calls:#?}"
    );
    let (_, points) = histogram_points("mcp.client.operation.duration", "otel-2026");
    assert!(
        points.iter().any(
            |p| attribute(&attributes_of(p), "mcp.method.name").as_deref()
                == Some("server/discover")
        ),
        "{points:#?}"
    );
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_http_session_is_named_on_the_spans() {
    let server = HttpFakeServer::start(scenario("otel-session"))
        .await
        .unwrap();
    let client = connect("otel-session", Target::Http(HttpTarget::new(server.url()))).await;
    client
        .call_tool("echo", None, CallSettings::new(Duration::from_secs(20)))
        .await
        .unwrap();
    let call = span("otel-session", "tools/call echo");
    let session = attribute(&call.attributes, "mcp.session.id").expect("a session id");
    assert!(
        server.header_values("mcp-session-id").contains(&session),
        "the id the client sent: {session}"
    );
    let calls: Vec<RecordedRequest> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "tools/call")
        .collect();
    assert_eq!(
        calls
            .first()
            .and_then(sent_traceparent)
            .map(|t| t[3..35].to_owned()),
        Some(call.span_context.trace_id().to_string())
    );
    client.shutdown().await;
    server.shutdown().await;
}
