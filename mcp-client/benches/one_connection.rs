//! One connection alone: a trivial tool call through `mcp_client::Client` versus a bare
//! rmcp client on the same kind of transport, in one run: over stdio (each on its own
//! `mcp-fake-server` process of the same scenario) and over streamable HTTP (both on one
//! loopback fake server, in each era). A transport-level delay (such as the ~44 ms of a
//! delayed ACK) shows here as an absolute time far above the stdio rows.
//!
//! Run: `cargo bench -p mcp-client --bench one_connection`.

#![allow(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself"
)]
#![allow(clippy::expect_used, missing_docs, reason = "benchmark harness")]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_catalog::StdioConfig;
use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, Handshake, HttpTarget, Target,
};
use mcp_testkit::{HttpFakeServer, Scenario, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

const CALL: Duration = Duration::from_secs(30);

fn bare_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench-bare", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let scenario_path = home.join("bench.json");
    let scenario = Scenario::new("bench").with_tool(ToolSpec::echo("echo"));
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

    let stdio = connect(
        Target::stdio(StdioConfig::new(bin.to_string_lossy()).with_args(args.clone())),
        Handshake::Initialize,
    );
    let bare_stdio = rt.block_on(async {
        let mut cmd = tokio::process::Command::new(&bin);
        cmd.args(&args);
        let transport = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn")
            .0;
        bare_info().serve(transport).await.expect("initialize")
    });

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
        http_2025.shutdown().await;
        http_2026.shutdown().await;
        let _ = bare_stdio.cancel().await;
        let _ = bare_http.cancel().await;
        http_server.shutdown().await;
        http_2026_server.shutdown().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
