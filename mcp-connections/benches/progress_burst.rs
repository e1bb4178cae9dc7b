//! Notification burst: one tool call whose server sends 100,000 `notifications/progress`
//! before the result, with a progress callback, through the connection set, beside the
//! same call sending none (the baseline), measured in one run on one `mcp-fake-server`.
//!
//! Run: `cargo bench -p mcp-connections --bench progress_burst -- --warm-up-time 1
//! --measurement-time 5` (the burst case takes ~45 s: 10 flat samples).
//!
//! What it measures today is mostly the fake server's sending: `mcp-fake-server` awaits
//! each `notify_progress`, and rmcp's stdio transport writes and flushes every message
//! through tokio's stdout (a blocking-pool hop per write). Measured on 2 shared cores
//! (2026-12-01): 4.46 s per 100,000-notification call through the connection set; the same
//! server read by a raw line reader (Python) took 4.0-4.1 s; the same connection set fed
//! by a throwaway Python server that writes the whole burst at once took 0.92 s, of which
//! 82% of the updates reached the callback (the rest overtaken, see
//! `CallSettings::with_progress` through `CallOptions::with_call`); a call with no notifications took ~0.1 ms. That Python
//! server read by a raw reader took 0.2-0.3 s, so the client side costs ~7 µs per
//! notification. Most of it is rmcp's (rmcp 3.11 `service.rs`: each notification is
//! parsed, passed through the progress-timeout watcher and handled on its own spawned
//! task, which is also why updates arrive out of order); our handler adds one mutex lock,
//! one map lookup and the callback (`handler.rs`, `deliver_progress`).

#![allow(
    clippy::disallowed_methods,
    reason = "the fake server binary is located (and built if missing) by the testkit"
)]
#![allow(clippy::expect_used, missing_docs, reason = "benchmark harness")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use mcp_catalog::{CatalogBuilder, Config, LoadedConfig, ServerConfig};
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, Progress};
use mcp_key::{McpServerKey, ServerName};
use mcp_testkit::{Behavior, Scenario, ToolSpec};

/// Notifications in the burst.
const BURST: u32 = 100_000;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let home = mcp_testkit::TestHome::new().expect("temp dir");
    let scenario_path = home.join("burst.json");
    Scenario::new("burst")
        .with_tool(ToolSpec::new("burst", Behavior::Progress { steps: BURST }))
        .with_tool(ToolSpec::new("none", Behavior::Progress { steps: 0 }))
        .write_json(&scenario_path)
        .expect("scenario");
    let bin = mcp_testkit::fake_server_bin();
    let args = vec![
        "--scenario".to_owned(),
        scenario_path.to_string_lossy().into_owned(),
    ];

    let name = ServerName::new("burst").expect("name");
    let config = Config::new().with_server(
        name.clone(),
        ServerConfig::stdio(bin.to_string_lossy())
            .with_args(args)
            .with_tool_timeout(Duration::from_secs(600)),
    );
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("burst", config))
        .build();
    let set = rt.block_on(async {
        let set = ConnectionSet::start(&catalog, ConnectionSetOptions::new());
        set.wait_required().await.expect("ready");
        set.wait_startup().await;
        set
    });
    let key = McpServerKey::unscoped(name);

    let delivered = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&delivered);
    let options = CallOptions::new().with_call(|c| {
        c.with_progress(Some(Arc::new(move |_: Progress| {
            counter.fetch_add(1, Ordering::Relaxed);
        })))
    });

    let mut group = c.benchmark_group("progress_burst");
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    for (label, tool) in [("0_notifications", "none"), ("100k_notifications", "burst")] {
        delivered.store(0, Ordering::Relaxed);
        calls.store(0, Ordering::Relaxed);
        group.bench_function(label, |b| {
            b.iter(|| {
                calls.fetch_add(1, Ordering::Relaxed);
                rt.block_on(set.call_tool(&key, tool, None, options.clone()))
                    .expect("call")
            })
        });
        let n = calls.load(Ordering::Relaxed).max(1);
        #[expect(clippy::print_stdout, reason = "benchmark report")]
        {
            println!(
                "{label}: {} progress callbacks per call on average",
                delivered.load(Ordering::Relaxed) / n
            );
        }
    }
    group.finish();

    rt.block_on(set.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
