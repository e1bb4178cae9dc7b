//! The cost of the era probe: starting a 2025-era stdio server (the testkit's fake server,
//! which closes its end on `server/discover`, as rmcp's own older servers do) under
//! `protocol = "auto"` the first time (probe, then a second process for `initialize`) and
//! once its era is remembered, against `protocol = "2025-11-25"`, in one run. Each
//! iteration starts a connection set, waits until the server is ready and shuts it down.
//!
//! Run: `cargo bench -p mcp-connections --bench era_probe` (quality.md: first ≤ 1.2×,
//! remembered ≤ 1.05×).

#![allow(clippy::expect_used, missing_docs, reason = "benchmark harness")]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_catalog::{
    CatalogBuilder, Config, LoadedConfig, ProtocolChoice, ResolvedCatalog, ServerConfig,
};
use mcp_connections::{ConnectionSet, ConnectionSetOptions, ServerPool};
use mcp_key::ServerName;
use mcp_testkit::{Scenario, ToolSpec};

fn catalog(home: &mcp_testkit::TestHome, protocol: ProtocolChoice) -> ResolvedCatalog {
    let path = home.join("era.json");
    Scenario::new("era")
        .with_tool(ToolSpec::echo("echo"))
        .write_json(&path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let server = ServerConfig::stdio(bin.to_string_lossy())
        .with_args(["--scenario".to_owned(), path.to_string_lossy().into_owned()])
        .with_protocol(protocol);
    CatalogBuilder::new()
        .with_user_config(LoadedConfig::new(
            "bench",
            Config::new().with_server(ServerName::new("era").expect("name"), server),
        ))
        .build()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let pinned = catalog(&home, ProtocolChoice::V2025_11_25);
    let auto = catalog(&home, ProtocolChoice::Auto);
    let start = |catalog: &ResolvedCatalog, pool: &ServerPool| {
        rt.block_on(async {
            let set = ConnectionSet::start(
                catalog,
                ConnectionSetOptions::new()
                    .with_shared_pool(pool.clone())
                    .with_client(|c| c.with_process_grace(Duration::from_millis(50))),
            );
            assert_eq!(set.wait_startup().await.ready(), 1);
            set.shutdown().await;
        });
    };
    // A pool that remembers the era (a first start already probed).
    let remembering = ServerPool::new();
    start(&auto, &remembering);

    let mut group = c.benchmark_group("era_probe_startup");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("pinned_2025_11_25", |b| {
        b.iter(|| start(&pinned, &ServerPool::new()));
    });
    group.bench_function("auto_first_start", |b| {
        // A new pool each time: nothing remembered, the probe runs.
        b.iter(|| start(&auto, &ServerPool::new()));
    });
    group.bench_function("auto_remembered", |b| {
        b.iter(|| start(&auto, &remembering));
    });
    group.finish();
    rt.block_on(remembering.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
