//! Call latency through `mcpctl serve` (stdio) versus straight to the same server, each
//! driven by a bare rmcp client, measured in one run. The server is mcpctl's fake server
//! with one `echo` tool; through the gateway the call is `mcp__notes__echo`, from a client
//! of the 2025-11-25 era (a session) and from one of the 2026-07-28 era (no session: each
//! of its calls runs on a connection set of its own inside the gateway).
//!
//! Run: `cargo bench -p mcpctl --bench gateway` (target ratio ≤ 1.5×).

#![allow(
    clippy::disallowed_methods,
    reason = "the bench starts the gateway and the server itself, as a client would"
)]
#![allow(clippy::expect_used, missing_docs, reason = "benchmark harness")]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;

const MCPCTL: &str = env!("CARGO_BIN_EXE_mcpctl");

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("bench", "0"),
    )
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let scenario =
        serde_json::json!({"tools": [{"name": "echo", "behavior": {"kind": "echo"}}]}).to_string();
    let config = dir.path().join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[mcp_servers.notes]\ncommand = {MCPCTL:?}\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n",
            serde_json::to_string(&scenario).expect("toml string")
        ),
    )
    .expect("config");
    let spawn = |args: Vec<String>| {
        let mut cmd = tokio::process::Command::new(MCPCTL);
        cmd.args(args)
            .env("MCPCTL_HOME", dir.path().join("home"))
            .env("RUST_LOG", "off");
        TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn")
            .0
    };
    let gateway_args = || {
        vec![
            "--config".to_owned(),
            config.display().to_string(),
            "serve".to_owned(),
        ]
    };
    let (direct, gateway, modern) = rt.block_on(async {
        let direct = client_info()
            .serve(spawn(vec![
                "fake-server".into(),
                "--scenario-json".into(),
                scenario.clone(),
            ]))
            .await
            .expect("initialize the server");
        let gateway = client_info()
            .serve(spawn(gateway_args()))
            .await
            .expect("initialize the gateway");
        let modern = client_info()
            .serve_with_lifecycle(
                spawn(gateway_args()),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("discover the gateway");
        // Wait until the gateway's upstream server is ready (its tool is listed).
        for _ in 0..200 {
            let tools = gateway.peer().list_all_tools().await.expect("tools/list");
            if tools.iter().any(|t| t.name == "mcp__notes__echo") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        (direct, gateway, modern)
    });
    let mut group = c.benchmark_group("gateway_call");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("direct", |b| {
        b.iter(|| {
            rt.block_on(direct.call_tool(CallToolRequestParams::new("echo")))
                .expect("call")
        });
    });
    group.bench_function("through_gateway", |b| {
        b.iter(|| {
            let result = rt
                .block_on(gateway.call_tool(CallToolRequestParams::new("mcp__notes__echo")))
                .expect("call");
            assert_ne!(result.is_error, Some(true), "{result:?}");
        });
    });
    group.bench_function("through_gateway_2026", |b| {
        b.iter(|| {
            let result = rt
                .block_on(modern.call_tool(CallToolRequestParams::new("mcp__notes__echo")))
                .expect("call");
            assert_ne!(result.is_error, Some(true), "{result:?}");
        });
    });
    group.finish();
    rt.block_on(async {
        let _ = direct.cancel().await;
        let _ = gateway.cancel().await;
        let _ = modern.cancel().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
