//! OpenTelemetry export, on when the environment asks for it and absent otherwise.
//!
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` (or the per-signal `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//! / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`) set, and `OTEL_SDK_DISABLED` not `true`, mcpctl
//! installs:
//! - for traces: a `tracing-opentelemetry` layer beside the stderr log, over a tracer
//!   provider whose batch processor exports OTLP/HTTP protobuf, so `mcp-client`'s request
//!   spans (and the gateway's server spans, `serve/trace.rs`) become OpenTelemetry spans;
//!   the global text-map propagator (W3C trace context and baggage), through which
//!   `mcp-client` injects `traceparent` into each request's `_meta` (the gateway reads a
//!   client's `traceparent` alone, `serve/trace.rs`); and the tracer provider as the
//!   global one;
//! - for metrics: a meter provider with a periodic reader exporting OTLP/HTTP protobuf, set
//!   as the global meter provider (`mcp-client` records `mcp.client.operation.duration` and
//!   `mcp.client.session.duration` through it).
//!
//! `OTEL_TRACES_EXPORTER=none` / `OTEL_METRICS_EXPORTER=none` turn one signal off. The
//! exporters and the SDK read the rest of the standard variables themselves: the
//! endpoints, `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TIMEOUT` (and their
//! per-signal forms), `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (the service name
//! is `mcpctl` when neither names one), `OTEL_BSP_*` and `OTEL_METRIC_EXPORT_INTERVAL`. The
//! protocol is always `http/protobuf`: another `OTEL_EXPORTER_OTLP_PROTOCOL` is reported and
//! ignored.
//!
//! Export never fails or holds up a command: exports run on the SDK's own threads, their
//! failures go to the log (`-v`), and when mcpctl exits [`Telemetry::shutdown`] flushes what
//! is left, waiting at most [`SHUTDOWN_BOUND`].

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};

/// The service name when the environment names none.
pub(crate) const DEFAULT_SERVICE_NAME: &str = "mcpctl";

/// The longest mcpctl waits at exit for the last exports.
pub(crate) const SHUTDOWN_BOUND: Duration = Duration::from_secs(5);

/// The instrumentation scope of the spans mcpctl exports.
const TRACER_NAME: &str = "mcpctl";

/// The log target of what this module reports.
const LOG_TARGET: &str = "mcpctl::telemetry";

/// The one protocol mcpctl's exporters speak.
const PROTOCOL: &str = "http/protobuf";

/// A layer of mcpctl's subscriber.
pub(crate) type BoxedLayer = Box<dyn Layer<tracing_subscriber::Registry> + Send + Sync>;

/// Which signals the environment asks to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Wanted {
    traces: bool,
    metrics: bool,
}

/// What the environment asks for, read through `var` (the process environment, or a table
/// in tests).
fn wanted(var: impl Fn(&str) -> Option<String>) -> Wanted {
    let set = |name: &str| var(name).is_some_and(|v| !v.trim().is_empty());
    let is =
        |name: &str, value: &str| var(name).is_some_and(|v| v.trim().eq_ignore_ascii_case(value));
    if is("OTEL_SDK_DISABLED", "true") {
        return Wanted::default();
    }
    let both = set("OTEL_EXPORTER_OTLP_ENDPOINT");
    Wanted {
        traces: (both || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
            && !is("OTEL_TRACES_EXPORTER", "none"),
        metrics: (both || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))
            && !is("OTEL_METRICS_EXPORTER", "none"),
    }
}

/// The protocol settings other than mcpctl's, named for the report that they are ignored.
fn ignored_protocols(var: impl Fn(&str) -> Option<String>) -> Vec<String> {
    [
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    ]
    .into_iter()
    .filter_map(|name| {
        let value = var(name)?;
        let value = value.trim();
        (!value.is_empty() && value != PROTOCOL).then(|| format!("{name}={value}"))
    })
    .collect()
}

/// The installed providers (none when the environment asked for nothing), to flush and shut
/// down when mcpctl exits.
#[derive(Debug, Default)]
pub(crate) struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    /// What went wrong while setting up, reported once logging is installed.
    problems: Vec<String>,
}

impl Telemetry {
    /// The providers the environment asks for, the meter provider and the propagator
    /// installed globally; and the layer to add to the subscriber (`None`: no traces).
    pub(crate) fn from_env() -> (Self, Option<BoxedLayer>) {
        let var = |name: &str| std::env::var(name).ok();
        let wanted = wanted(var);
        let mut telemetry = Self::default();
        if wanted == Wanted::default() {
            return (telemetry, None);
        }
        for setting in ignored_protocols(var) {
            telemetry.problems.push(format!(
                "{setting} is ignored: mcpctl exports OTLP over {PROTOCOL} only"
            ));
        }
        let resource = resource();
        let mut layer = None;
        if wanted.traces {
            match SpanExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .build()
            {
                Ok(exporter) => {
                    let provider = SdkTracerProvider::builder()
                        .with_resource(resource.clone())
                        .with_batch_exporter(exporter)
                        .build();
                    layer = Some(otel_layer(&provider));
                    opentelemetry::global::set_tracer_provider(provider.clone());
                    opentelemetry::global::set_text_map_propagator(
                        opentelemetry::propagation::TextMapCompositePropagator::new(vec![
                            Box::new(TraceContextPropagator::new()),
                            Box::new(BaggagePropagator::new()),
                        ]),
                    );
                    telemetry.tracer = Some(provider);
                }
                Err(e) => telemetry
                    .problems
                    .push(format!("no trace export (OTLP span exporter: {e})")),
            }
        }
        if wanted.metrics {
            match MetricExporter::builder()
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .build()
            {
                Ok(exporter) => {
                    let provider = SdkMeterProvider::builder()
                        .with_resource(resource)
                        .with_reader(PeriodicReader::builder(exporter).build())
                        .build();
                    opentelemetry::global::set_meter_provider(provider.clone());
                    telemetry.meter = Some(provider);
                }
                Err(e) => telemetry
                    .problems
                    .push(format!("no metric export (OTLP metric exporter: {e})")),
            }
        }
        (telemetry, layer)
    }

    /// Logs what went wrong while setting up (call once logging is installed).
    pub(crate) fn report_setup(&mut self) {
        for problem in self.problems.drain(..) {
            tracing::warn!(target: LOG_TARGET, "OpenTelemetry: {problem}");
        }
        if self.tracer.is_some() || self.meter.is_some() {
            tracing::debug!(
                target: LOG_TARGET,
                traces = self.tracer.is_some(),
                metrics = self.meter.is_some(),
                "OpenTelemetry export on (OTLP/HTTP)"
            );
        }
    }

    /// Exports what is left and shuts the providers down, waiting at most
    /// [`SHUTDOWN_BOUND`]: an exporter that hangs (a collector that accepts and never
    /// answers) is left behind with the process.
    pub(crate) fn shutdown(self) {
        let Self { tracer, meter, .. } = self;
        if tracer.is_none() && meter.is_none() {
            return;
        }
        let (done, finished) = std::sync::mpsc::channel();
        let flushing = std::thread::Builder::new()
            .name("otel-shutdown".to_owned())
            .spawn(move || {
                // Spans first: the metrics' last export then waits for nothing of theirs.
                let traces = tracer.map(|p| p.shutdown_with_timeout(SHUTDOWN_BOUND));
                let metrics = meter.map(|p| p.shutdown_with_timeout(SHUTDOWN_BOUND));
                let _ = done.send((traces, metrics));
            });
        if let Err(e) = flushing {
            tracing::warn!(target: LOG_TARGET, "OpenTelemetry: the last export did not start: {e}");
            return;
        }
        match finished.recv_timeout(SHUTDOWN_BOUND) {
            Ok((traces, metrics)) => {
                for (signal, outcome) in [("spans", traces), ("metrics", metrics)] {
                    if let Some(Err(e)) = outcome {
                        tracing::warn!(target: LOG_TARGET, "OpenTelemetry: the last export of {signal} failed: {e}");
                    }
                }
            }
            Err(_) => tracing::warn!(
                target: LOG_TARGET,
                "OpenTelemetry: the last export took longer than {SHUTDOWN_BOUND:?}; what it held is lost"
            ),
        }
    }
}

/// The exporting resource: what the SDK reads from the environment, named
/// [`DEFAULT_SERVICE_NAME`] when the environment names no service.
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        return detected;
    }
    Resource::builder()
        .with_attribute(KeyValue::new("service.name", DEFAULT_SERVICE_NAME))
        .build()
}

/// The layer turning `tracing` spans into OpenTelemetry spans of `provider`: only the
/// attributes the spans carry (no source locations, threads, targets or levels), for
/// info-level spans and up, but none of the exporters' own (HTTP client, SDK) and only
/// warnings of rmcp (whose session-long spans would swallow the requests' own).
fn otel_layer(provider: &SdkTracerProvider) -> BoxedLayer {
    let filter = Targets::new()
        .with_default(LevelFilter::INFO)
        .with_target("rmcp", LevelFilter::WARN)
        .with_target("opentelemetry", LevelFilter::OFF)
        .with_target("opentelemetry_sdk", LevelFilter::OFF)
        .with_target("opentelemetry-otlp", LevelFilter::OFF)
        .with_target("opentelemetry_otlp", LevelFilter::OFF)
        .with_target("reqwest", LevelFilter::OFF)
        .with_target("hyper", LevelFilter::OFF)
        .with_target("hyper_util", LevelFilter::OFF)
        .with_target("h2", LevelFilter::OFF);
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer(TRACER_NAME))
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_level(false)
        .with_tracked_inactivity(false)
        .with_filter(filter)
        .boxed()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn nothing_is_wanted_without_an_endpoint() {
        assert_eq!(wanted(env(&[])), Wanted::default());
        assert_eq!(
            wanted(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])),
            Wanted::default()
        );
        assert_eq!(
            wanted(env(&[("OTEL_SERVICE_NAME", "x")])),
            Wanted::default()
        );
    }

    #[test]
    fn the_endpoints_choose_the_signals() {
        let both = Wanted {
            traces: true,
            metrics: true,
        };
        let url = "http://127.0.0.1:4318";
        assert_eq!(wanted(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", url)])), both);
        assert_eq!(
            wanted(env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url)])),
            Wanted {
                traces: true,
                metrics: false
            }
        );
        assert_eq!(
            wanted(env(&[("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", url)])),
            Wanted {
                traces: false,
                metrics: true
            }
        );
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", url),
                ("OTEL_METRICS_EXPORTER", "none"),
            ])),
            Wanted {
                traces: true,
                metrics: false
            }
        );
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", url),
                ("OTEL_TRACES_EXPORTER", "None"),
            ])),
            Wanted {
                traces: false,
                metrics: true
            }
        );
    }

    #[test]
    fn the_sdk_disabled_turns_everything_off() {
        let url = "http://127.0.0.1:4318";
        assert_eq!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", url),
                ("OTEL_SDK_DISABLED", "TRUE"),
            ])),
            Wanted::default()
        );
        assert!(
            wanted(env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", url),
                ("OTEL_SDK_DISABLED", "false"),
            ]))
            .traces
        );
    }

    #[test]
    fn protocols_other_than_http_protobuf_are_named_as_ignored() {
        assert_eq!(
            ignored_protocols(env(&[
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"),
            ])),
            vec![
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc".to_owned(),
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/json".to_owned(),
            ]
        );
    }
}
