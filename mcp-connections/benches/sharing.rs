//! The shared lifecycle, measured in one run against real `mcp-fake-server` processes:
//!
//! - `warm_start`: a new host lists the tools of 32 servers from the persisted catalog cache
//!   (load the file, start a set, list), no process started; beside it, the same 32 servers
//!   started for real (the cold start the cache saves).
//! - `shared_call`: a trivial call from a set that has the server to itself, versus from one
//!   of 8 sets sharing the server's one process (target ratio ≤ 1.1).
//! - `attach`: a set attaching to (and letting go of) a connection another set keeps warm,
//!   versus starting its own process.
//!
//! Run: `cargo bench -p mcp-connections --bench sharing`.

#![allow(clippy::expect_used, missing_docs, reason = "benchmark harness")]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_catalog::{
    CatalogBuilder, Config, LoadedConfig, ResolvedCatalog, ServerConfig, StartupPolicy,
};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, ServerPool, ToolCache};
use mcp_key::{McpServerKey, ServerName};
use mcp_testkit::{Scenario, ToolSpec};

fn catalog(home: &mcp_testkit::TestHome, servers: usize, lazy: bool) -> ResolvedCatalog {
    let scenario_path = home.join("bench.json");
    Scenario::new("bench")
        .with_tool(ToolSpec::echo("echo"))
        .write_json(&scenario_path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let mut config = Config::new();
    for i in 0..servers {
        config = config.with_server(
            ServerName::new(format!("s{i:02}")).expect("name"),
            ServerConfig::stdio(bin.to_string_lossy()).with_args([
                "--scenario".to_owned(),
                scenario_path.to_string_lossy().into_owned(),
            ]),
        );
    }
    if lazy {
        config = config.with_startup_policy(StartupPolicy::LazyWhenCached);
    }
    CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("bench", config))
        .build()
}

fn cache(dir: &std::path::Path) -> ToolCache {
    ToolCache::persisted(dir, 64, Duration::from_secs(3600))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");

    // warm start: fill the cache once, then measure new hosts reading it.
    let lazy = catalog(&home, 32, true);
    let dir = home.join("cache");
    rt.block_on(async {
        let set = ConnectionSet::start(
            &lazy,
            ConnectionSetOptions::new().with_tool_cache(cache(&dir)),
        );
        assert_eq!(set.wait_startup().await.ready(), 32);
        set.shutdown().await;
    });
    let eager = catalog(&home, 32, false);
    let mut group = c.benchmark_group("warm_start_32");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("from_cache", |b| {
        b.iter(|| {
            rt.block_on(async {
                let pool = ServerPool::new();
                let set = ConnectionSet::start(
                    &lazy,
                    ConnectionSetOptions::new()
                        .with_tool_cache(cache(&dir))
                        .with_shared_pool(pool.clone()),
                );
                assert_eq!(set.tools().await.len(), 32);
                assert_eq!(pool.stats().starts, 0);
                set.shutdown().await;
            });
        });
    });
    group.bench_function("cold_start", |b| {
        b.iter(|| {
            rt.block_on(async {
                let set = ConnectionSet::start(&eager, ConnectionSetOptions::new());
                assert_eq!(set.wait_startup().await.ready(), 32);
                assert_eq!(set.tools().await.len(), 32);
                set.shutdown().await;
            });
        });
    });
    group.finish();

    // shared call: one set alone on its server, versus one of 8 sets on one process.
    let one = catalog(&home, 1, false);
    let key = McpServerKey::unscoped(ServerName::new("s00").expect("name"));
    let (alone, shared, pool) = rt.block_on(async {
        let alone = ConnectionSet::start(&one, ConnectionSetOptions::new());
        alone.wait_startup().await;
        let pool = ServerPool::new();
        let mut shared = Vec::new();
        for _ in 0..8 {
            let set = ConnectionSet::start(
                &one,
                ConnectionSetOptions::new().with_shared_pool(pool.clone()),
            );
            set.wait_startup().await;
            shared.push(set);
        }
        assert_eq!(pool.stats().starts, 1);
        (alone, shared, pool)
    });
    let args = serde_json::json!({"text": "hi"});
    let mut group = c.benchmark_group("shared_call");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("one_session", |b| {
        b.iter(|| {
            rt.block_on(alone.call_tool(&key, "echo", Some(args.clone()), CallOptions::new()))
                .expect("call")
        });
    });
    let mut turn = 0usize;
    group.bench_function("one_of_8_sessions", |b| {
        b.iter(|| {
            turn = (turn + 1) % shared.len();
            rt.block_on(shared[turn].call_tool(
                &key,
                "echo",
                Some(args.clone()),
                CallOptions::new(),
            ))
            .expect("call")
        });
    });
    group.finish();

    // attach: a set joining a warm shared connection (no process) versus starting one.
    let mut group = c.benchmark_group("attach");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("warm_shared", |b| {
        b.iter(|| {
            rt.block_on(async {
                let set = ConnectionSet::start(
                    &one,
                    ConnectionSetOptions::new().with_shared_pool(pool.clone()),
                );
                set.wait_startup().await;
                set.shutdown().await;
            });
        });
    });
    group.bench_function("own_process", |b| {
        b.iter(|| {
            rt.block_on(async {
                let set = ConnectionSet::start(&one, ConnectionSetOptions::new());
                set.wait_startup().await;
                set.shutdown().await;
            });
        });
    });
    group.finish();
    assert_eq!(pool.stats().starts, 1, "attaching never started a process");

    rt.block_on(async {
        alone.shutdown().await;
        for set in &shared {
            set.shutdown().await;
        }
        pool.shutdown().await;
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
