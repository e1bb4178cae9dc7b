//! The conventions' client metrics, recorded through the global meter provider the host
//! installed (`opentelemetry::global::set_meter_provider`) when a connection was opened:
//! - [`OPERATION_DURATION`] (`mcp.client.operation.duration`), a histogram in seconds of
//!   every request, with the request span's attributes of low cardinality;
//! - [`SESSION_DURATION`] (`mcp.client.session.duration`), a histogram in seconds of each
//!   connection's life, from the start of its handshake to its end (in the stateless
//!   2026-07-28 era, the connection plays the session's part).
//!
//! Both use the conventions' bucket boundaries, [`DURATION_BUCKETS`].

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;

use super::Endpoint;
use super::semconv as sc;

/// The name of the request duration histogram.
pub const OPERATION_DURATION: &str = "mcp.client.operation.duration";
/// The name of the session duration histogram.
pub const SESSION_DURATION: &str = "mcp.client.session.duration";
/// The bucket boundaries (seconds) the conventions give both histograms.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
/// The instrumentation scope of the metrics.
const SCOPE: &str = "mcp-client";

/// One connection's instruments.
#[derive(Debug)]
pub(crate) struct Metrics {
    operation: Histogram<f64>,
    session: Histogram<f64>,
    /// The attributes every measurement of the connection has.
    base: Vec<KeyValue>,
}

/// How one request ended, for its measurement.
pub(crate) struct Ended<'a> {
    pub(crate) method: &'static str,
    pub(crate) target: Option<&'a str>,
    pub(crate) protocol: Option<&'a str>,
    pub(crate) error_type: Option<&'a str>,
    pub(crate) status_code: Option<i64>,
}

impl Metrics {
    /// The instruments of a connection to `server` over `endpoint`, from the global meter
    /// provider as it is now.
    pub(crate) fn new(server: &mcp_key::McpServerKey, endpoint: &Endpoint) -> Self {
        let scope = opentelemetry::InstrumentationScope::builder(SCOPE)
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        let meter = opentelemetry::global::meter_with_scope(scope);
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        let mut base = vec![
            KeyValue::new(sc::NETWORK_TRANSPORT, endpoint.transport),
            KeyValue::new(sc::MCP_SERVER_NAME, server.to_string()),
        ];
        if let Some(address) = &endpoint.address {
            base.push(KeyValue::new(sc::SERVER_ADDRESS, address.clone()));
        }
        if let Some(port) = endpoint.port {
            base.push(KeyValue::new(sc::SERVER_PORT, i64::from(port)));
        }
        Self {
            operation: histogram(
                OPERATION_DURATION,
                "The duration of an MCP request or notification as observed by the client.",
            ),
            session: histogram(
                SESSION_DURATION,
                "The duration of the MCP session as observed by the client.",
            ),
            base,
        }
    }

    /// Records one request that took `elapsed`.
    pub(crate) fn operation(&self, elapsed: Duration, ended: &Ended<'_>) {
        let mut attributes = self.base.clone();
        attributes.push(KeyValue::new(sc::MCP_METHOD_NAME, ended.method));
        for (name, value) in sc::target_attributes(ended.method, ended.target) {
            attributes.push(KeyValue::new(name, value.to_owned()));
        }
        if let Some(protocol) = ended.protocol {
            attributes.push(KeyValue::new(sc::MCP_PROTOCOL_VERSION, protocol.to_owned()));
        }
        if let Some(kind) = ended.error_type {
            attributes.push(KeyValue::new(sc::ERROR_TYPE, kind.to_owned()));
        }
        if let Some(code) = ended.status_code {
            attributes.push(KeyValue::new(sc::RPC_RESPONSE_STATUS_CODE, code));
        }
        self.operation.record(elapsed.as_secs_f64(), &attributes);
    }

    /// Records a session of `protocol` that lasted `elapsed` and ended with `error_type`
    /// (`None`: closed by its owner).
    pub(crate) fn session(&self, elapsed: Duration, protocol: &str, error_type: Option<&str>) {
        let mut attributes = self.base.clone();
        attributes.push(KeyValue::new(sc::MCP_PROTOCOL_VERSION, protocol.to_owned()));
        if let Some(kind) = error_type {
            attributes.push(KeyValue::new(sc::ERROR_TYPE, kind.to_owned()));
        }
        self.session.record(elapsed.as_secs_f64(), &attributes);
    }
}
