//! Call overhead: a trivial tool call through the connection set versus a bare rmcp client,
//! each on its own `mcp-fake-server` process of the same scenario, measured in one run.
//!
//! Run: `cargo bench -p mcp-connections --bench call_overhead`.

#![allow(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself"
)]
#![allow(clippy::expect_used, missing_docs, reason = "benchmark harness")]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_catalog::{CatalogBuilder, Config, LoadedConfig, ServerConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::{McpServerKey, ServerName};
use mcp_testkit::{Scenario, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::transport::TokioChildProcess;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let scenario_path = home.join("bench.json");
    Scenario::new("bench")
        .with_tool(ToolSpec::echo("echo"))
        .write_json(&scenario_path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec![
        "--scenario".to_owned(),
        scenario_path.to_string_lossy().into_owned(),
    ];

    // Through the connection set.
    let name = ServerName::new("bench").expect("name");
    let config = Config::new().with_server(
        name.clone(),
        ServerConfig::stdio(bin.to_string_lossy()).with_args(args.clone()),
    );
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("bench", config))
        .build();
    let set = rt.block_on(async {
        let set = ConnectionSet::start(&catalog, ConnectionSetOptions::new());
        set.wait_required().await.expect("ready");
        set.wait_startup().await;
        set
    });
    let key = McpServerKey::unscoped(name);

    // A bare rmcp client on its own process of the same server.
    let bare = rt.block_on(async {
        let mut cmd = tokio::process::Command::new(&bin);
        cmd.args(&args);
        let transport = TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn")
            .0;
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("bench-bare", "0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25);
        info.serve(transport).await.expect("initialize")
    });

    let mut group = c.benchmark_group("trivial_call");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("bare_rmcp", |b| {
        b.iter(|| {
            rt.block_on(bare.call_tool(CallToolRequestParams::new("echo")))
                .expect("call")
        })
    });
    group.bench_function("connection_set", |b| {
        b.iter(|| {
            rt.block_on(set.call_tool(&key, "echo", None, CallOptions::new()))
                .expect("call")
        })
    });
    group.finish();

    rt.block_on(async {
        set.shutdown().await;
        let _ = bare.cancel().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
