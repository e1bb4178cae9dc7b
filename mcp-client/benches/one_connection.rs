//! One connection alone: a trivial tool call through `mcp_client::Client` versus a bare
//! rmcp client on the same kind of transport, in one run: over stdio (each on its own
//! `mcp-fake-server` process of the same scenario) and over streamable HTTP (both on one
//! loopback fake server, in each era). A transport-level delay (such as the ~44 ms of a
//! delayed ACK) shows here as an absolute time far above the stdio rows.
//!
//! Two more pairs over stdio measure what servers send besides the answer: a call whose
//! server writes one log message first (`client_stdio_log`: routed as it is read,
//! rate-limited, a `tracing` event; the bare client's handler drops it), and a call whose
//! server asks for a sample first (`client_stdio_sampling`: checked both ways; the bare
//! client's handler answers at once).
//!
//! A last pair runs a call the server makes a task of (the tasks extension, SEP-2663):
//! `client_stdio_task` drives it transparently; the bare client calls, then polls
//! `tasks/get` itself at the same interval ([`mcp_client::MIN_POLL_INTERVAL`], the
//! server's suggestion of 0 raised to it) until the task completes.
//!
//! One more pair prices the request spans (`mcp_client::SPAN_TARGET`): the stdio `echo`
//! with a subscriber that formats every span's fields (as an exporter would read them)
//! against the same call with none (`client_stdio_traced` vs `client_stdio`).
//!
//! With the `otel` feature, one more row prices the whole OpenTelemetry path
//! (`client_stdio_otel`): the span exported through `tracing-opentelemetry` to an SDK
//! tracer (sampled, no exporter: exporting runs on the SDK's own thread), its trace
//! context injected into the request's `_meta` through the W3C propagator, and the
//! duration histogram recorded through an SDK meter provider; beside `client_stdio` in
//! the same run.
//!
//! Run: `cargo bench -p mcp-client --bench one_connection` (add `--features otel` for the
//! OpenTelemetry row).

#![allow(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself"
)]
#![allow(clippy::expect_used, missing_docs, reason = "benchmark harness")]
#![allow(
    deprecated,
    reason = "rmcp marks sampling and logging deprecated (SEP-2577)"
)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_catalog::StdioConfig;
use mcp_client::{BoxFuture, SamplingRefusal, ServerRequests};
use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, Handshake, HttpTarget, Target,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, HttpFakeServer, Scenario, ToolSpec};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    ProtocolVersion, SamplingCapability, SamplingMessage,
};
use rmcp::service::RequestContext;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};

const CALL: Duration = Duration::from_secs(30);

/// The model's answer in both clients.
fn answer() -> CreateMessageResult {
    CreateMessageResult::new(SamplingMessage::assistant_text("ok"), "bench".to_owned())
}

/// The host of the `Client` rows: answers sampling at once.
struct Model;

impl ServerRequests for Model {
    fn elicit<'a>(
        &'a self,
        _server: &'a McpServerKey,
        _request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async { ElicitResult::new(ElicitationAction::Decline) })
    }

    fn create_message<'a>(
        &'a self,
        _server: &'a McpServerKey,
        _request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingRefusal>> {
        Box::pin(async { Ok(answer()) })
    }
}

/// The bare rmcp client's handler: announces sampling and answers it at once.
#[derive(Clone)]
struct BareModel;

impl ClientHandler for BareModel {
    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        caps.sampling = Some(SamplingCapability::default());
        ClientConfig::new(caps, Implementation::new("bench-bare", "0"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok(answer())
    }
}

fn bare_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench-bare", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// A bare client declaring the tasks extension.
fn bare_tasks_info() -> ClientConfig {
    let caps: ClientCapabilities = serde_json::from_value(
        serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    )
    .expect("capabilities");
    ClientConfig::new(caps, Implementation::new("bench-bare", "0"))
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

/// What the bare client does for a task: call, then poll until it completes.
async fn bare_task(peer: &rmcp::Peer<rmcp::RoleClient>) {
    let created = peer
        .call_tool_once(CallToolRequestParams::new("task"))
        .await
        .expect("call");
    let rmcp::model::CallToolResponse::Task(created) = created else {
        panic!("the server makes a task of the call");
    };
    loop {
        tokio::time::sleep(mcp_client::MIN_POLL_INTERVAL).await;
        let got = peer
            .get_task(rmcp::model::GetTaskParams::new(
                created.task.task_id.clone(),
            ))
            .await
            .expect("tasks/get");
        if got.task.status() == rmcp::model::TaskStatus::Completed {
            return;
        }
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let scenario_path = home.join("bench.json");
    let scenario = Scenario::new("bench")
        .with_capabilities(mcp_testkit::CapabilityFlags::default().with_tasks(true))
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "task",
            Behavior::Task {
                work_ms: 0,
                steps: 0,
                end: mcp_testkit::TaskEnd::Complete,
                ask: None,
                poll_interval_ms: Some(0),
                ttl_ms: None,
                garbage_get: false,
            },
        ))
        .with_tool(ToolSpec::new(
            "log",
            Behavior::Log {
                level: "info".to_owned(),
                logger: None,
                data: serde_json::json!("a line of the server's log"),
                count: 1,
            },
        ))
        .with_tool(ToolSpec::new(
            "sample",
            Behavior::Sample {
                prompt: "hi".to_owned(),
                max_tokens: 10,
                tools: Vec::new(),
            },
        ));
    scenario.write_json(&scenario_path).expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec![
        "--scenario".to_owned(),
        scenario_path.to_string_lossy().into_owned(),
    ];
    let connect = |target: Target, handshake: Handshake| {
        rt.block_on(Client::connect(
            "bench".parse().expect("name"),
            target,
            ClientSettings::new().with_handshake(handshake),
            Arc::new(DeclineRequests),
        ))
        .expect("connect")
    };

    let stdio_target =
        || Target::stdio(StdioConfig::new(bin.to_string_lossy()).with_args(args.clone()));
    let stdio = connect(stdio_target(), Handshake::Initialize);
    let sampling = rt
        .block_on(Client::connect(
            "bench".parse().expect("name"),
            stdio_target(),
            ClientSettings::new()
                .with_handshake(Handshake::Initialize)
                .with_sampling(true),
            Arc::new(Model),
        ))
        .expect("connect");
    let spawn = || {
        let mut cmd = tokio::process::Command::new(&bin);
        cmd.args(&args);
        TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn")
            .0
    };
    let bare_stdio = rt.block_on(async { bare_info().serve(spawn()).await.expect("initialize") });
    let bare_sampling = rt.block_on(async { BareModel.serve(spawn()).await.expect("initialize") });
    let bare_tasks =
        rt.block_on(async { bare_tasks_info().serve(spawn()).await.expect("initialize") });

    let http_server = rt
        .block_on(HttpFakeServer::start(scenario))
        .expect("http server");
    let url = http_server.url();
    let http_2025 = connect(
        Target::Http(HttpTarget::new(url.clone())),
        Handshake::Initialize,
    );
    let http_2026_server = rt
        .block_on(HttpFakeServer::start(
            Scenario::new("bench")
                .with_tool(ToolSpec::echo("echo"))
                .with_faults({
                    let mut faults = mcp_testkit::Faults::default();
                    faults.protocol_version = Some("2026-07-28".to_owned());
                    faults
                }),
        ))
        .expect("http server");
    let http_2026 = connect(
        Target::Http(HttpTarget::new(http_2026_server.url())),
        Handshake::Discover,
    );
    let bare_http = rt.block_on(async {
        bare_info()
            .serve(StreamableHttpClientTransport::from_uri(url.clone()))
            .await
            .expect("initialize")
    });

    let mut group = c.benchmark_group("one_connection_call");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("bare_rmcp_stdio", |b| {
        b.iter(|| {
            rt.block_on(bare_stdio.call_tool(CallToolRequestParams::new("echo")))
                .expect("call")
        })
    });
    group.bench_function("client_stdio", |b| {
        b.iter(|| {
            rt.block_on(stdio.call_tool("echo", None, CallSettings::new(CALL)))
                .expect("call")
        })
    });
    // The subscriber is this thread's (the call runs on it, in `block_on`), so the other
    // rows stay without one.
    let traced = tracing_subscriber::fmt()
        .with_writer(std::io::sink)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let traced = tracing::Dispatch::new(traced);
    group.bench_function("client_stdio_traced", |b| {
        tracing::dispatcher::with_default(&traced, || {
            b.iter(|| {
                rt.block_on(stdio.call_tool("echo", None, CallSettings::new(CALL)))
                    .expect("call")
            })
        })
    });
    #[cfg(feature = "otel")]
    {
        let (dispatch, _meters) = otel_pipeline();
        // Connected after the meter provider is installed: its instruments are real.
        let otel = connect(stdio_target(), Handshake::Initialize);
        group.bench_function("client_stdio_otel", |b| {
            tracing::dispatcher::with_default(&dispatch, || {
                b.iter(|| {
                    rt.block_on(otel.call_tool("echo", None, CallSettings::new(CALL)))
                        .expect("call")
                })
            })
        });
        rt.block_on(otel.shutdown());
    }
    group.bench_function("bare_rmcp_stdio_log", |b| {
        b.iter(|| {
            rt.block_on(bare_stdio.call_tool(CallToolRequestParams::new("log")))
                .expect("call")
        })
    });
    group.bench_function("client_stdio_log", |b| {
        b.iter(|| {
            rt.block_on(stdio.call_tool("log", None, CallSettings::new(CALL)))
                .expect("call")
        })
    });
    group.bench_function("bare_rmcp_stdio_sampling", |b| {
        b.iter(|| {
            rt.block_on(bare_sampling.call_tool(CallToolRequestParams::new("sample")))
                .expect("call")
        })
    });
    group.bench_function("client_stdio_sampling", |b| {
        b.iter(|| {
            rt.block_on(sampling.call_tool("sample", None, CallSettings::new(CALL)))
                .expect("call")
        })
    });
    group.bench_function("bare_rmcp_stdio_task", |b| {
        b.iter(|| rt.block_on(bare_task(bare_tasks.peer())))
    });
    group.bench_function("client_stdio_task", |b| {
        b.iter(|| {
            rt.block_on(stdio.call_tool("task", None, CallSettings::new(CALL)))
                .expect("call")
        })
    });
    group.bench_function("bare_rmcp_http_2025", |b| {
        b.iter(|| {
            rt.block_on(bare_http.call_tool(CallToolRequestParams::new("echo")))
                .expect("call")
        })
    });
    group.bench_function("client_http_2025", |b| {
        b.iter(|| {
            rt.block_on(http_2025.call_tool("echo", None, CallSettings::new(CALL)))
                .expect("call")
        })
    });
    group.bench_function("client_http_2026", |b| {
        b.iter(|| {
            rt.block_on(http_2026.call_tool("echo", None, CallSettings::new(CALL)))
                .expect("call")
        })
    });
    group.finish();

    rt.block_on(async {
        stdio.shutdown().await;
        sampling.shutdown().await;
        let _ = bare_sampling.cancel().await;
        let _ = bare_tasks.cancel().await;
        http_2025.shutdown().await;
        http_2026.shutdown().await;
        let _ = bare_stdio.cancel().await;
        let _ = bare_http.cancel().await;
        http_server.shutdown().await;
        http_2026_server.shutdown().await;
    });
}

/// A host's OpenTelemetry pipeline: a `tracing` dispatch exporting to an SDK tracer
/// (every span sampled, none exported), the W3C propagator and an SDK meter provider
/// (global), as a host installs them.
#[cfg(feature = "otel")]
fn otel_pipeline() -> (
    tracing::Dispatch,
    opentelemetry_sdk::metrics::SdkMeterProvider,
) {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    let tracers = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let layer = tracing_opentelemetry::layer().with_tracer(tracers.tracer("bench"));
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(layer));
    opentelemetry::global::set_text_map_propagator(
        opentelemetry_sdk::propagation::TraceContextPropagator::new(),
    );
    let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(
        opentelemetry_sdk::metrics::InMemoryMetricExporter::default(),
    )
    .build();
    let meters = opentelemetry_sdk::metrics::SdkMeterProvider::builder()
        .with_reader(reader)
        .build();
    opentelemetry::global::set_meter_provider(meters.clone());
    (dispatch, meters)
}

criterion_group!(benches, bench);
criterion_main!(benches);
