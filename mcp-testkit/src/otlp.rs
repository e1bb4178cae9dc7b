//! [`OtlpReceiver`]: an OpenTelemetry collector on loopback for tests. It accepts what a
//! program under test exports over OTLP/HTTP (`POST /v1/traces` and `POST /v1/metrics`,
//! protobuf or JSON), answers each export with success, and keeps the spans and metrics in
//! a form a test compares directly: names, kinds as words, ids as lowercase hex,
//! attributes as JSON.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use http::{HeaderMap, StatusCode, header};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric, number_data_point};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{Span, span, status};
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::record::lock;
use crate::serve::Running;

/// The path of trace exports (`OTEL_EXPORTER_OTLP_ENDPOINT` + this).
pub const TRACES_PATH: &str = "/v1/traces";
/// The path of metric exports (`OTEL_EXPORTER_OTLP_ENDPOINT` + this).
pub const METRICS_PATH: &str = "/v1/metrics";
/// The largest export body accepted (bigger ones are answered 413).
pub const MAX_EXPORT_BODY: usize = 16 * 1024 * 1024;
/// How many export requests' headers [`OtlpReceiver::header_values`] remembers.
pub const MAX_RECORDED_EXPORTS: usize = 1000;

/// One span as it arrived.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ReceivedSpan {
    /// Its name (what `tracing-opentelemetry` takes from `otel.name`).
    pub name: String,
    /// Its kind in lower case, as the OTLP enum names it without the prefix: `internal`,
    /// `server`, `client`, `producer`, `consumer` or `unspecified`.
    pub kind: String,
    /// The trace id, 32 lowercase hex digits.
    pub trace_id: String,
    /// The span id, 16 lowercase hex digits.
    pub span_id: String,
    /// The parent's span id (16 lowercase hex digits); `None` for a root span.
    pub parent_span_id: Option<String>,
    /// The attributes, each value as JSON (strings, numbers, booleans, arrays, objects;
    /// bytes as lowercase hex).
    pub attributes: Map<String, Value>,
    /// The status code in lower case: `unset`, `ok` or `error`.
    pub status_code: String,
    /// The status message (empty when none).
    pub status_message: String,
    /// The names of the span's events, in order.
    pub events: Vec<String>,
    /// The spans it links to, as `(trace id, span id)` in lowercase hex, in order.
    pub links: Vec<(String, String)>,
    /// `service.name` of the exporting resource.
    pub service_name: Option<String>,
    /// The instrumentation scope's name (empty when none).
    pub scope_name: String,
}

/// What kind of metric a [`ReceivedMetric`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MetricKind {
    /// A gauge (last value).
    Gauge,
    /// A sum (counter or up-down counter).
    Sum,
    /// A histogram with explicit bucket boundaries.
    Histogram,
    /// An exponential histogram.
    ExponentialHistogram,
    /// A summary.
    Summary,
}

/// One data point of a [`ReceivedMetric`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DataPoint {
    /// Its attributes, each value as JSON (as [`ReceivedSpan::attributes`]).
    pub attributes: Map<String, Value>,
    /// A gauge's or sum's value (integers as `f64`); `None` for the others.
    pub value: Option<f64>,
    /// How many measurements a histogram or summary counted; `None` for the others.
    pub count: Option<u64>,
    /// Their sum, when the exporter sent it.
    pub sum: Option<f64>,
    /// A histogram's explicit bucket boundaries (empty for the others).
    pub explicit_bounds: Vec<f64>,
    /// A histogram's count per bucket (one more than the boundaries; empty for the
    /// others).
    pub bucket_counts: Vec<u64>,
}

/// One metric as it arrived in one export (a periodic exporter sends the same metric again
/// in each export: each arrival is kept).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ReceivedMetric {
    /// Its name, e.g. `mcp.client.operation.duration`.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its unit, e.g. `s`.
    pub unit: String,
    /// Its kind.
    pub kind: MetricKind,
    /// A histogram's explicit bucket boundaries (those of its first data point; empty for
    /// other kinds).
    pub explicit_bounds: Vec<f64>,
    /// Its data points.
    pub data_points: Vec<DataPoint>,
    /// `service.name` of the exporting resource.
    pub service_name: Option<String>,
    /// The instrumentation scope's name (empty when none).
    pub scope_name: String,
}

/// How many exports arrived, per signal.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OtlpCounters {
    /// Trace exports accepted.
    pub traces: u64,
    /// Metric exports accepted.
    pub metrics: u64,
    /// Exports refused (unknown content type or encoding, a body that does not decode).
    pub refused: u64,
}

/// An OTLP/HTTP receiver on `127.0.0.1:0` keeping every span and metric exported to it.
///
/// Dropping it stops serving without waiting; prefer [`OtlpReceiver::shutdown`].
///
/// ```
/// use std::time::Duration;
///
/// use mcp_testkit::OtlpReceiver;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let receiver = OtlpReceiver::start().await.unwrap();
/// // Give the program under test `OTEL_EXPORTER_OTLP_ENDPOINT=<endpoint>`.
/// assert!(receiver.endpoint().starts_with("http://127.0.0.1:"));
/// // Nothing exported yet: the wait ends at its bound.
/// let found = receiver
///     .wait_for_span(|s| s.name == "tools/call echo", Duration::from_millis(10))
///     .await;
/// assert!(found.is_none());
/// receiver.shutdown().await;
/// # }
/// ```
#[derive(Debug)]
pub struct OtlpReceiver {
    store: Arc<Store>,
    running: Running,
}

/// What arrived so far.
#[derive(Debug)]
struct Store {
    spans: Mutex<Vec<ReceivedSpan>>,
    metrics: Mutex<Vec<ReceivedMetric>>,
    counters: Mutex<OtlpCounters>,
    /// The headers of the latest exports (at most [`MAX_RECORDED_EXPORTS`]).
    headers: Mutex<Vec<HeaderMap>>,
    /// Bumped after each accepted export: what waiters watch.
    arrivals: watch::Sender<u64>,
}

impl OtlpReceiver {
    /// Starts serving on `127.0.0.1:0`.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// Cancel-safe: a receiver that was bound stops when dropped with the future.
    pub async fn start() -> Result<Self, Error> {
        let store = Arc::new(Store {
            spans: Mutex::default(),
            metrics: Mutex::default(),
            counters: Mutex::default(),
            headers: Mutex::default(),
            arrivals: watch::Sender::new(0),
        });
        let state = Arc::clone(&store);
        let running = Running::start(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            CancellationToken::new(),
            "binding the OTLP receiver",
            move |_| {
                axum::Router::new()
                    .route(TRACES_PATH, post(traces))
                    .route(METRICS_PATH, post(metrics))
                    .layer(DefaultBodyLimit::max(MAX_EXPORT_BODY))
                    .with_state(state)
            },
        )
        .await?;
        Ok(Self { store, running })
    }

    /// The base URL, `http://127.0.0.1:<port>`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (exporters append [`TRACES_PATH`] and [`METRICS_PATH`]).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.running.addr)
    }

    /// `<endpoint>/v1/traces`: the value of `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, which
    /// exporters take as the whole URL.
    pub fn traces_url(&self) -> String {
        format!("{}{TRACES_PATH}", self.endpoint())
    }

    /// `<endpoint>/v1/metrics`: the value of `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`.
    pub fn metrics_url(&self) -> String {
        format!("{}{METRICS_PATH}", self.endpoint())
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// Every span received so far, in arrival order.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        lock(&self.store.spans).clone()
    }

    /// Every metric received so far, in arrival order (one entry per metric per export).
    pub fn metrics(&self) -> Vec<ReceivedMetric> {
        lock(&self.store.metrics).clone()
    }

    /// The latest arrival of the metric `name`, if any came: with a cumulative exporter,
    /// its totals so far.
    pub fn last_metric(&self, name: &str) -> Option<ReceivedMetric> {
        lock(&self.store.metrics)
            .iter()
            .rev()
            .find(|m| m.name == name)
            .cloned()
    }

    /// Exports received so far, per signal.
    pub fn counters(&self) -> OtlpCounters {
        *lock(&self.store.counters)
    }

    /// The values of the header `name` on the exports received so far (of the latest
    /// [`MAX_RECORDED_EXPORTS`]), in arrival order; for checking
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        lock(&self.store.headers)
            .iter()
            .flat_map(|h| h.get_all(name))
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }

    /// The first span received for which `predicate` holds, waiting up to `timeout` for
    /// one to arrive; `None` when none did.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only reads.
    pub async fn wait_for_span(
        &self,
        predicate: impl Fn(&ReceivedSpan) -> bool,
        timeout: Duration,
    ) -> Option<ReceivedSpan> {
        self.wait_for(
            || {
                lock(&self.store.spans)
                    .iter()
                    .find(|s| predicate(s))
                    .cloned()
            },
            timeout,
        )
        .await
    }

    /// The latest arrival of a metric for which `predicate` holds, waiting up to `timeout`
    /// for one to arrive; `None` when none did.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only reads.
    pub async fn wait_for_metric(
        &self,
        predicate: impl Fn(&ReceivedMetric) -> bool,
        timeout: Duration,
    ) -> Option<ReceivedMetric> {
        self.wait_for(
            || {
                lock(&self.store.metrics)
                    .iter()
                    .rev()
                    .find(|m| predicate(m))
                    .cloned()
            },
            timeout,
        )
        .await
    }

    /// `find`'s answer once it has one, looking again after each export, until `timeout`.
    async fn wait_for<T>(&self, find: impl Fn() -> Option<T>, timeout: Duration) -> Option<T> {
        // Subscribed before looking: an export between the look and the wait is seen.
        let mut arrivals = self.store.arrivals.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(found) = find() {
                return Some(found);
            }
            match tokio::time::timeout_at(deadline, arrivals.changed()).await {
                Ok(Ok(())) => {}
                // The deadline passed (or the store went away, which it cannot while
                // `self` holds it).
                _ => return None,
            }
        }
    }

    /// Stops serving and waits up to [`crate::SHUTDOWN_GRACE`] for the server task.
    ///
    /// # Cancel safety
    /// Cancel-safe: the receiver is already told to stop; `Drop` aborts what is left.
    pub async fn shutdown(mut self) {
        self.running.shutdown().await;
    }
}

/// How an export body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Protobuf,
    Json,
}

/// The encoding named by the request's `Content-Type`, or the answer refusing it (415:
/// another type, or a `Content-Encoding` such as gzip, which this receiver does not undo).
#[expect(clippy::result_large_err, reason = "the error is the response to send")]
fn encoding(headers: &HeaderMap) -> Result<Encoding, Response> {
    let compressed = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| !v.trim().eq_ignore_ascii_case("identity"));
    if compressed {
        return Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the OTLP receiver takes uncompressed bodies only\n",
        )
            .into_response());
    }
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match media.as_str() {
        "application/x-protobuf" | "application/protobuf" => Ok(Encoding::Protobuf),
        "application/json" => Ok(Encoding::Json),
        _ => Err((
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "OTLP/HTTP bodies are application/x-protobuf or application/json\n",
        )
            .into_response()),
    }
}

/// Decodes an export request of either encoding.
fn decode<T>(encoding: Encoding, body: &[u8]) -> Result<T, String>
where
    T: prost::Message + Default + serde::de::DeserializeOwned,
{
    match encoding {
        Encoding::Protobuf => T::decode(body).map_err(|e| e.to_string()),
        Encoding::Json => serde_json::from_slice(body).map_err(|e| e.to_string()),
    }
}

/// The success answer (an empty export response: no partial success), in the request's
/// encoding.
fn accepted<T: prost::Message>(encoding: Encoding, answer: &T) -> Response {
    match encoding {
        Encoding::Protobuf => (
            [(header::CONTENT_TYPE, "application/x-protobuf")],
            answer.encode_to_vec(),
        )
            .into_response(),
        Encoding::Json => ([(header::CONTENT_TYPE, "application/json")], "{}").into_response(),
    }
}

impl Store {
    /// A refused export: counted, answered with `status` and `reason`.
    fn refuse(&self, status: StatusCode, reason: String) -> Response {
        lock(&self.counters).refused += 1;
        (status, reason).into_response()
    }

    /// An accepted export's headers kept, and its waiters woken.
    fn arrived(&self, headers: HeaderMap) {
        {
            let mut kept = lock(&self.headers);
            if kept.len() >= MAX_RECORDED_EXPORTS {
                kept.remove(0);
            }
            kept.push(headers);
        }
        self.arrivals.send_modify(|n| *n += 1);
    }
}

async fn traces(State(store): State<Arc<Store>>, headers: HeaderMap, body: Bytes) -> Response {
    let encoding = match encoding(&headers) {
        Ok(encoding) => encoding,
        Err(refused) => {
            lock(&store.counters).refused += 1;
            return refused;
        }
    };
    let request: ExportTraceServiceRequest = match decode(encoding, &body) {
        Ok(request) => request,
        Err(e) => {
            return store.refuse(
                StatusCode::BAD_REQUEST,
                format!("not an OTLP trace export: {e}\n"),
            );
        }
    };
    let mut received = Vec::new();
    for resource_spans in &request.resource_spans {
        let service = service_name(resource_spans.resource.as_ref());
        for scope_spans in &resource_spans.scope_spans {
            let scope = scope_name(scope_spans.scope.as_ref());
            received.extend(
                scope_spans
                    .spans
                    .iter()
                    .map(|s| received_span(s, service.clone(), scope.clone())),
            );
        }
    }
    lock(&store.spans).extend(received);
    lock(&store.counters).traces += 1;
    store.arrived(headers);
    accepted(encoding, &ExportTraceServiceResponse::default())
}

async fn metrics(State(store): State<Arc<Store>>, headers: HeaderMap, body: Bytes) -> Response {
    let encoding = match encoding(&headers) {
        Ok(encoding) => encoding,
        Err(refused) => {
            lock(&store.counters).refused += 1;
            return refused;
        }
    };
    let request: ExportMetricsServiceRequest = match decode(encoding, &body) {
        Ok(request) => request,
        Err(e) => {
            return store.refuse(
                StatusCode::BAD_REQUEST,
                format!("not an OTLP metric export: {e}\n"),
            );
        }
    };
    let mut received = Vec::new();
    for resource_metrics in &request.resource_metrics {
        let service = service_name(resource_metrics.resource.as_ref());
        for scope_metrics in &resource_metrics.scope_metrics {
            let scope = scope_name(scope_metrics.scope.as_ref());
            received.extend(
                scope_metrics
                    .metrics
                    .iter()
                    .filter_map(|m| received_metric(m, service.clone(), scope.clone())),
            );
        }
    }
    lock(&store.metrics).extend(received);
    lock(&store.counters).metrics += 1;
    store.arrived(headers);
    accepted(encoding, &ExportMetricsServiceResponse::default())
}

fn service_name(resource: Option<&Resource>) -> Option<String> {
    resource?
        .attributes
        .iter()
        .find(|kv| kv.key == "service.name")
        .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(name) => Some(name.clone()),
            _ => None,
        })
}

fn scope_name(scope: Option<&InstrumentationScope>) -> String {
    scope.map(|s| s.name.clone()).unwrap_or_default()
}

fn received_span(span: &Span, service_name: Option<String>, scope_name: String) -> ReceivedSpan {
    let kind = span::SpanKind::try_from(span.kind).map_or_else(
        |_| format!("unknown ({})", span.kind),
        |k| enum_word(k.as_str_name(), "SPAN_KIND_"),
    );
    let (status_code, status_message) = match &span.status {
        Some(s) => (
            status::StatusCode::try_from(s.code).map_or_else(
                |_| format!("unknown ({})", s.code),
                |c| enum_word(c.as_str_name(), "STATUS_CODE_"),
            ),
            s.message.clone(),
        ),
        None => ("unset".to_owned(), String::new()),
    };
    ReceivedSpan {
        name: span.name.clone(),
        kind,
        trace_id: hex(&span.trace_id),
        span_id: hex(&span.span_id),
        parent_span_id: (!span.parent_span_id.is_empty()).then(|| hex(&span.parent_span_id)),
        attributes: attributes(&span.attributes),
        status_code,
        status_message,
        events: span.events.iter().map(|e| e.name.clone()).collect(),
        links: span
            .links
            .iter()
            .map(|l| (hex(&l.trace_id), hex(&l.span_id)))
            .collect(),
        service_name,
        scope_name,
    }
}

fn received_metric(
    metric: &Metric,
    service_name: Option<String>,
    scope_name: String,
) -> Option<ReceivedMetric> {
    let (kind, data_points): (MetricKind, Vec<DataPoint>) = match metric.data.as_ref()? {
        metric::Data::Gauge(gauge) => (
            MetricKind::Gauge,
            gauge
                .data_points
                .iter()
                .map(|p| number_point(&p.attributes, p.value))
                .collect(),
        ),
        metric::Data::Sum(sum) => (
            MetricKind::Sum,
            sum.data_points
                .iter()
                .map(|p| number_point(&p.attributes, p.value))
                .collect(),
        ),
        metric::Data::Histogram(histogram) => (
            MetricKind::Histogram,
            histogram
                .data_points
                .iter()
                .map(|p| DataPoint {
                    attributes: attributes(&p.attributes),
                    value: None,
                    count: Some(p.count),
                    sum: p.sum,
                    explicit_bounds: p.explicit_bounds.clone(),
                    bucket_counts: p.bucket_counts.clone(),
                })
                .collect(),
        ),
        metric::Data::ExponentialHistogram(histogram) => (
            MetricKind::ExponentialHistogram,
            histogram
                .data_points
                .iter()
                .map(|p| DataPoint {
                    count: Some(p.count),
                    sum: p.sum,
                    ..number_point(&p.attributes, None)
                })
                .collect(),
        ),
        metric::Data::Summary(summary) => (
            MetricKind::Summary,
            summary
                .data_points
                .iter()
                .map(|p| DataPoint {
                    count: Some(p.count),
                    sum: Some(p.sum),
                    ..number_point(&p.attributes, None)
                })
                .collect(),
        ),
    };
    let explicit_bounds = match kind {
        MetricKind::Histogram => data_points
            .first()
            .map(|p| p.explicit_bounds.clone())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Some(ReceivedMetric {
        name: metric.name.clone(),
        description: metric.description.clone(),
        unit: metric.unit.clone(),
        kind,
        explicit_bounds,
        data_points,
        service_name,
        scope_name,
    })
}

#[expect(
    clippy::cast_precision_loss,
    reason = "a test compares values, far below 2^53"
)]
fn number_point(attrs: &[KeyValue], value: Option<number_data_point::Value>) -> DataPoint {
    DataPoint {
        attributes: attributes(attrs),
        value: value.map(|v| match v {
            number_data_point::Value::AsDouble(d) => d,
            number_data_point::Value::AsInt(i) => i as f64,
        }),
        count: None,
        sum: None,
        explicit_bounds: Vec::new(),
        bucket_counts: Vec::new(),
    }
}

/// `SPAN_KIND_CLIENT` without `prefix`, in lower case: `client`.
fn enum_word(name: &str, prefix: &str) -> String {
    name.strip_prefix(prefix)
        .unwrap_or(name)
        .to_ascii_lowercase()
}

/// Attributes as a JSON object (a key given twice: the last value).
fn attributes(pairs: &[KeyValue]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|kv| (kv.key.clone(), json(kv.value.as_ref())))
        .collect()
}

/// An attribute value as JSON: a double that JSON cannot hold (NaN, infinities) as its
/// text, bytes as lowercase hex, nothing as `null`.
fn json(value: Option<&AnyValue>) -> Value {
    let Some(value) = value.and_then(|v| v.value.as_ref()) else {
        return Value::Null;
    };
    match value {
        any_value::Value::StringValue(s) => Value::String(s.clone()),
        any_value::Value::BoolValue(b) => Value::Bool(*b),
        any_value::Value::IntValue(i) => Value::from(*i),
        any_value::Value::DoubleValue(d) => serde_json::Number::from_f64(*d)
            .map_or_else(|| Value::String(d.to_string()), Value::Number),
        any_value::Value::ArrayValue(array) => {
            Value::Array(array.values.iter().map(|v| json(Some(v))).collect())
        }
        any_value::Value::KvlistValue(list) => Value::Object(attributes(&list.values)),
        any_value::Value::BytesValue(bytes) => Value::String(hex(bytes)),
        // A profiles-only reference to a string table this signal does not have.
        any_value::Value::StringValueStrindex(_) => Value::Null,
    }
}

/// `bytes` as lowercase hex.
fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        // Writing to a String cannot fail.
        let _ = write!(text, "{byte:02x}");
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use opentelemetry_proto::tonic::common::v1::ArrayValue;
    use opentelemetry_proto::tonic::metrics::v1::{
        Histogram, HistogramDataPoint, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
    };
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Status};
    use pretty_assertions::assert_eq;
    use prost::Message;
    use serde_json::json;

    use super::*;

    fn kv(key: &str, value: any_value::Value) -> KeyValue {
        KeyValue {
            key: key.to_owned(),
            value: Some(AnyValue { value: Some(value) }),
            ..KeyValue::default()
        }
    }

    fn text(s: &str) -> any_value::Value {
        any_value::Value::StringValue(s.to_owned())
    }

    fn resource() -> Resource {
        Resource {
            attributes: vec![kv("service.name", text("under-test"))],
            ..Resource::default()
        }
    }

    fn scope() -> InstrumentationScope {
        InstrumentationScope {
            name: "scope-a".to_owned(),
            ..InstrumentationScope::default()
        }
    }

    fn trace_request() -> ExportTraceServiceRequest {
        let span = Span {
            trace_id: (1..=16).collect(),
            span_id: vec![0xab; 8],
            parent_span_id: vec![0x0c; 8],
            name: "tools/call echo".to_owned(),
            kind: span::SpanKind::Client as i32,
            attributes: vec![
                kv("mcp.method.name", text("tools/call")),
                kv("server.port", any_value::Value::IntValue(8080)),
                kv("flag", any_value::Value::BoolValue(true)),
                kv("ratio", any_value::Value::DoubleValue(0.5)),
                kv(
                    "list",
                    any_value::Value::ArrayValue(ArrayValue {
                        values: vec![AnyValue {
                            value: Some(text("a")),
                        }],
                    }),
                ),
            ],
            status: Some(Status {
                message: "boom".to_owned(),
                code: status::StatusCode::Error as i32,
            }),
            events: vec![span::Event {
                name: "retry".to_owned(),
                ..span::Event::default()
            }],
            links: vec![span::Link {
                trace_id: vec![0xee; 16],
                span_id: vec![0xdd; 8],
                ..span::Link::default()
            }],
            ..Span::default()
        };
        let root = Span {
            trace_id: (1..=16).collect(),
            span_id: vec![0x0c; 8],
            name: "root".to_owned(),
            kind: span::SpanKind::Server as i32,
            ..Span::default()
        };
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(resource()),
                scope_spans: vec![ScopeSpans {
                    scope: Some(scope()),
                    spans: vec![span, root],
                    ..ScopeSpans::default()
                }],
                ..ResourceSpans::default()
            }],
        }
    }

    fn expected_spans() -> Vec<ReceivedSpan> {
        vec![
            ReceivedSpan {
                name: "tools/call echo".to_owned(),
                kind: "client".to_owned(),
                trace_id: "0102030405060708090a0b0c0d0e0f10".to_owned(),
                span_id: "abababababababab".to_owned(),
                parent_span_id: Some("0c0c0c0c0c0c0c0c".to_owned()),
                attributes: json!({
                    "mcp.method.name": "tools/call",
                    "server.port": 8080,
                    "flag": true,
                    "ratio": 0.5,
                    "list": ["a"],
                })
                .as_object()
                .unwrap()
                .clone(),
                status_code: "error".to_owned(),
                status_message: "boom".to_owned(),
                events: vec!["retry".to_owned()],
                links: vec![("ee".repeat(16), "dd".repeat(8))],
                service_name: Some("under-test".to_owned()),
                scope_name: "scope-a".to_owned(),
            },
            ReceivedSpan {
                name: "root".to_owned(),
                kind: "server".to_owned(),
                trace_id: "0102030405060708090a0b0c0d0e0f10".to_owned(),
                span_id: "0c0c0c0c0c0c0c0c".to_owned(),
                parent_span_id: None,
                attributes: Map::new(),
                status_code: "unset".to_owned(),
                status_message: String::new(),
                events: Vec::new(),
                links: Vec::new(),
                service_name: Some("under-test".to_owned()),
                scope_name: "scope-a".to_owned(),
            },
        ]
    }

    const BOUNDS: [f64; 3] = [0.01, 0.1, 1.0];

    fn metrics_request() -> ExportMetricsServiceRequest {
        let histogram = Metric {
            name: "mcp.client.operation.duration".to_owned(),
            description: "how long".to_owned(),
            unit: "s".to_owned(),
            data: Some(metric::Data::Histogram(Histogram {
                data_points: vec![HistogramDataPoint {
                    attributes: vec![kv("mcp.method.name", text("tools/call"))],
                    count: 2,
                    sum: Some(0.25),
                    bucket_counts: vec![0, 1, 1, 0],
                    explicit_bounds: BOUNDS.to_vec(),
                    ..HistogramDataPoint::default()
                }],
                aggregation_temporality: 2,
            })),
            ..Metric::default()
        };
        let counter = Metric {
            name: "calls".to_owned(),
            data: Some(metric::Data::Sum(Sum {
                data_points: vec![NumberDataPoint {
                    value: Some(number_data_point::Value::AsInt(3)),
                    ..NumberDataPoint::default()
                }],
                aggregation_temporality: 2,
                is_monotonic: true,
            })),
            ..Metric::default()
        };
        ExportMetricsServiceRequest {
            resource_metrics: vec![ResourceMetrics {
                resource: Some(resource()),
                scope_metrics: vec![ScopeMetrics {
                    scope: Some(scope()),
                    metrics: vec![histogram, counter],
                    ..ScopeMetrics::default()
                }],
                ..ResourceMetrics::default()
            }],
        }
    }

    async fn post(url: String, content_type: &str, body: Vec<u8>) -> reqwest::Response {
        reqwest::Client::new()
            .post(url)
            .header("content-type", content_type)
            .header("x-token", "secret-1")
            .body(body)
            .send()
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_protobuf_trace_export_is_kept_as_received_spans() {
        let receiver = OtlpReceiver::start().await.unwrap();
        let response = post(
            receiver.traces_url(),
            "application/x-protobuf",
            trace_request().encode_to_vec(),
        )
        .await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "application/x-protobuf");
        let answer = response.bytes().await.unwrap();
        assert_eq!(
            ExportTraceServiceResponse::decode(answer).unwrap(),
            ExportTraceServiceResponse::default()
        );
        assert_eq!(receiver.spans(), expected_spans());
        assert_eq!(receiver.header_values("x-token"), vec!["secret-1"]);
        assert_eq!(receiver.counters().traces, 1);
        receiver.shutdown().await;
    }

    #[tokio::test]
    async fn a_json_trace_export_reads_the_same() {
        let receiver = OtlpReceiver::start().await.unwrap();
        let body = serde_json::to_vec(&trace_request()).unwrap();
        let response = post(receiver.traces_url(), "application/json", body).await;
        assert_eq!(response.status(), 200);
        assert_eq!(response.text().await.unwrap(), "{}");
        assert_eq!(receiver.spans(), expected_spans());
        receiver.shutdown().await;
    }

    #[tokio::test]
    async fn a_metric_export_keeps_histograms_with_their_bounds() {
        let receiver = OtlpReceiver::start().await.unwrap();
        let response = post(
            receiver.metrics_url(),
            "application/x-protobuf",
            metrics_request().encode_to_vec(),
        )
        .await;
        assert_eq!(response.status(), 200);
        let attributes = json!({"mcp.method.name": "tools/call"});
        assert_eq!(
            receiver.metrics(),
            vec![
                ReceivedMetric {
                    name: "mcp.client.operation.duration".to_owned(),
                    description: "how long".to_owned(),
                    unit: "s".to_owned(),
                    kind: MetricKind::Histogram,
                    explicit_bounds: BOUNDS.to_vec(),
                    data_points: vec![DataPoint {
                        attributes: attributes.as_object().unwrap().clone(),
                        value: None,
                        count: Some(2),
                        sum: Some(0.25),
                        explicit_bounds: BOUNDS.to_vec(),
                        bucket_counts: vec![0, 1, 1, 0],
                    }],
                    service_name: Some("under-test".to_owned()),
                    scope_name: "scope-a".to_owned(),
                },
                ReceivedMetric {
                    name: "calls".to_owned(),
                    description: String::new(),
                    unit: String::new(),
                    kind: MetricKind::Sum,
                    explicit_bounds: Vec::new(),
                    data_points: vec![DataPoint {
                        attributes: Map::new(),
                        value: Some(3.0),
                        count: None,
                        sum: None,
                        explicit_bounds: Vec::new(),
                        bucket_counts: Vec::new(),
                    }],
                    service_name: Some("under-test".to_owned()),
                    scope_name: "scope-a".to_owned(),
                },
            ]
        );
        assert_eq!(
            receiver.last_metric("calls").map(|m| m.kind),
            Some(MetricKind::Sum)
        );
        receiver.shutdown().await;
    }

    #[tokio::test]
    async fn other_media_types_and_garbage_are_refused() {
        let receiver = OtlpReceiver::start().await.unwrap();
        let refused = post(receiver.traces_url(), "text/plain", b"hi".to_vec()).await;
        assert_eq!(refused.status(), 415);
        let garbage = post(
            receiver.metrics_url(),
            "application/x-protobuf",
            vec![0xff; 7],
        )
        .await;
        assert_eq!(garbage.status(), 400);
        assert_eq!(
            receiver.counters(),
            OtlpCounters {
                traces: 0,
                metrics: 0,
                refused: 2
            }
        );
        assert!(receiver.spans().is_empty() && receiver.metrics().is_empty());
        receiver.shutdown().await;
    }

    #[tokio::test]
    async fn a_waiter_sees_a_span_that_arrives_later() {
        let receiver = OtlpReceiver::start().await.unwrap();
        let url = receiver.traces_url();
        let waiting = receiver.wait_for_span(|s| s.kind == "server", Duration::from_secs(30));
        let sending = post(
            url,
            "application/x-protobuf",
            trace_request().encode_to_vec(),
        );
        let (found, response) = tokio::join!(waiting, sending);
        assert_eq!(response.status(), 200);
        assert_eq!(found.map(|s| s.name), Some("root".to_owned()));
        let none = receiver
            .wait_for_span(|s| s.name == "never", Duration::from_millis(20))
            .await;
        assert_eq!(none, None);
        receiver.shutdown().await;
    }
}
