//! The persisted tool catalog cache and deferred startup (`lazy_when_cached`), against
//! real `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use mcp_catalog::StartupPolicy;
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, ServerPool, ServerState,
    TOOL_CACHE_FILE, ToolCache,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

fn cache(dir: &std::path::Path) -> ToolCache {
    ToolCache::persisted(dir, 64, Duration::from_secs(3600))
}

fn opts(pool: &ServerPool, dir: &std::path::Path) -> ConnectionSetOptions {
    ConnectionSetOptions::new()
        .with_shared_pool(pool.clone())
        .with_tool_cache(cache(dir))
        .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
}

fn fixture(servers: usize) -> Fixture {
    let mut fx = Fixture::new();
    for i in 0..servers {
        let name = format!("s{i:02}");
        fx.stdio(
            &name,
            Scenario::new(&name)
                .with_instructions("use me")
                .with_tool(ToolSpec::echo("echo").with_annotations(json!({"readOnlyHint": true}))),
        );
    }
    fx
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_host_lists_32_servers_from_the_cache_and_starts_one_on_first_use() {
    let fx = fixture(32);
    let catalog = fx.catalog_with(
        |_, config| Some(config),
        |c| c.with_startup_policy(StartupPolicy::LazyWhenCached),
    );
    let dir = tempfile::tempdir().unwrap();

    // The first host: nothing cached yet, so every server starts; the cache is saved.
    let pool = ServerPool::new();
    let first = ConnectionSet::start(&catalog, opts(&pool, dir.path()));
    assert_eq!(first.wait_startup().await.ready(), 32);
    first.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
    assert!(dir.path().join(TOOL_CACHE_FILE).is_file());

    // The second host (a new cache loaded from the file, a new pool).
    let pool = ServerPool::new();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let second = ConnectionSet::start(&catalog, opts(&pool, dir.path()).with_events(tx));
    let tools = second.tools().await;
    assert_eq!(tools.len(), 32);
    assert_eq!(pool.stats().starts, 0, "no process for a cached listing");
    for tool in &tools {
        // Not trusted until the live server confirms them.
        assert_eq!(tool.tool.annotations, None, "{}", tool.qualified_name);
        assert_eq!(tool.namespace_description, None);
    }
    assert!(
        second
            .status()
            .iter()
            .all(|s| matches!(s.state, ServerState::Deferred { tools: 1, .. }))
    );
    let summary = second.wait_startup().await;
    assert_eq!((summary.ready(), summary.failed()), (0, 0));

    // The first call starts exactly that server, with its events before the result.
    let result = second
        .call_qualified(
            "mcp__s07__echo",
            Some(json!({"text": "hi"})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(pool.stats().starts, 1);
    let mut seen = Vec::new();
    while let Ok(event) = rx.try_recv() {
        seen.push(event);
    }
    let s07 = key("s07");
    let about_s07: Vec<&ConnectionEvent> =
        seen.iter().filter(|e| e.server() == Some(&s07)).collect();
    assert!(
        matches!(
            about_s07.as_slice(),
            [
                ConnectionEvent::Deferred { .. },
                ConnectionEvent::Starting { .. },
                ConnectionEvent::Ready { .. }
            ]
        ),
        "{about_s07:?}"
    );
    let ready: Vec<_> = second
        .status()
        .into_iter()
        .filter(|s| matches!(s.state, ServerState::Ready { .. }))
        .map(|s| s.key)
        .collect();
    assert_eq!(ready, vec![s07.clone()]);
    // Live now: its annotations and instructions are back.
    let echo = second
        .tools()
        .await
        .into_iter()
        .find(|t| t.server == s07)
        .unwrap();
    assert!(echo.tool.annotations.is_some());
    assert_eq!(echo.namespace_description.as_deref(), Some("use me"));

    second.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opted_out_or_eager_server_starts_even_when_cached() {
    let fx = fixture(3);
    let dir = tempfile::tempdir().unwrap();
    let lazy = fx.catalog_with(
        |name, config| match name {
            "s01" => Some(config.with_tool_cache(false)),
            "s02" => Some(config.with_startup_policy(StartupPolicy::Eager)),
            _ => Some(config),
        },
        |c| c.with_startup_policy(StartupPolicy::LazyWhenCached),
    );
    let pool = ServerPool::new();
    let first = ConnectionSet::start(&lazy, opts(&pool, dir.path()));
    assert_eq!(first.wait_startup().await.ready(), 3);
    first.shutdown().await;

    let second = ConnectionSet::start(&lazy, opts(&pool, dir.path()));
    let summary = second.wait_startup().await;
    let states: Vec<(String, bool)> = summary
        .servers
        .iter()
        .map(|s| {
            (
                s.key.to_string(),
                matches!(s.state, ServerState::Deferred { .. }),
            )
        })
        .collect();
    assert_eq!(
        states,
        vec![
            ("s00".to_owned(), true),
            ("s01".to_owned(), false),
            ("s02".to_owned(), false)
        ]
    );
    second.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_cache_file_is_reported_and_ignored() {
    let fx = fixture(1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(TOOL_CACHE_FILE), "{ not json").unwrap();
    let catalog = fx.catalog_with(
        |_, config| Some(config),
        |c| c.with_startup_policy(StartupPolicy::LazyWhenCached),
    );
    let broken = cache(dir.path());
    assert!(broken.load_problem().is_some());
    let set = ConnectionSet::start(
        &catalog,
        ConnectionSetOptions::new().with_tool_cache(broken),
    );
    assert_eq!(set.wait_startup().await.ready(), 1);
    set.shutdown().await;
    fx.assert_no_processes().await;
    // The file was replaced by a good one.
    assert!(cache(dir.path()).load_problem().is_none());
    assert_eq!(cache(dir.path()).entries().len(), 1);
}
