//! `ConnectionSet::search_tools` over real `mcp-fake-server` processes: the set's whole
//! catalog, deferred servers' cached listings included (searching starts nothing), with
//! qualified names ranking first and bad queries refused.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use mcp_connections::{ConnectionSet, ConnectionSetOptions, ServerPool, ToolCache};
use mcp_testkit::{Scenario, ToolSpec};
use pretty_assertions::assert_eq;

fn fixture() -> Fixture {
    let mut fx = Fixture::new();
    fx.stdio(
        "files",
        Scenario::new("files")
            .with_tool(ToolSpec::echo("read_file").with_description("Read a file from disk."))
            .with_tool(
                ToolSpec::echo("list_directory")
                    .with_description("List the files and folders of a directory."),
            ),
    );
    fx.stdio(
        "weather",
        Scenario::new("weather").with_tool(
            ToolSpec::echo("get_forecast").with_description("The weather forecast for a city."),
        ),
    );
    fx
}

fn top(set: &ConnectionSet, query: &str) -> Vec<String> {
    set.search_tools(query, 5)
        .unwrap()
        .into_iter()
        .map(|h| h.info.qualified_name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_set_searches_its_catalog_and_cached_servers_without_starting_them() {
    let fx = fixture();
    let catalog = fx.catalog();
    let dir = tempfile::tempdir().unwrap();
    let cache = || ToolCache::persisted(dir.path(), 64, Duration::from_secs(3600));

    // Live servers.
    let pool = ServerPool::new();
    let set = ConnectionSet::start(
        &catalog,
        ConnectionSetOptions::new()
            .with_shared_pool(pool.clone())
            .with_tool_cache(cache()),
    );
    assert_eq!(set.wait_startup().await.ready(), 2);
    let weather = top(&set, "will it rain in Paris tomorrow: the forecast");
    assert_eq!(weather[0], "mcp__weather__get_forecast");
    assert_eq!(
        top(&set, "folders of a directory")[0],
        "mcp__files__list_directory"
    );
    // A qualified name, as a model would write it, ranks its tool first.
    assert_eq!(
        top(&set, "mcp__files__read_file")[0],
        "mcp__files__read_file"
    );
    // Bad input is an error that says what to do, never a panic.
    let err = set.search_tools("  \u{7} ", 5).unwrap_err();
    assert!(err.is_search_refused(), "{err}");
    assert!(set.search_tools("file", 0).unwrap_err().is_search_refused());
    // A limit above the index's largest is clamped: `usize::MAX` asks for every match.
    let every = set
        .search_tools("file directory forecast", usize::MAX)
        .unwrap();
    assert_eq!(every.len(), 3, "{every:?}");
    set.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;

    // Another host, deferring what the cache holds: the same answers, nothing started.
    let pool = ServerPool::new();
    let deferred = ConnectionSet::start(
        &catalog,
        ConnectionSetOptions::new()
            .with_shared_pool(pool.clone())
            .with_tool_cache(cache())
            .with_defer_cached(true),
    );
    deferred.wait_startup().await;
    assert_eq!(
        top(&deferred, "the forecast for a city")[0],
        "mcp__weather__get_forecast"
    );
    assert_eq!(pool.stats().starts, 0, "searching started a server");
    deferred.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

/// `answer_search_mode` answers a model's calls of the two search-mode tools as the
/// gateway does: a search returns the matches (structured and as text), `call_tool` is
/// the call of the tool it names, wrong arguments get an error result saying what to fix,
/// and any other name is not its business.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_two_search_mode_tools_are_answered_by_the_set() {
    use mcp_connections::{CALL_TOOL, CallOptions, SEARCH_TOOL};
    use serde_json::json;

    let fx = fixture();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let args = |v: serde_json::Value| v.as_object().cloned();

    let search = args(json!({"query": "weather forecast for a city", "limit": 1}));
    let found = set
        .answer_search_mode(SEARCH_TOOL, search.as_ref(), CallOptions::new())
        .await
        .expect("the search tool")
        .unwrap();
    assert_eq!(found.is_error, Some(false));
    let structured = found.structured_content.clone().unwrap();
    assert_eq!(structured["tools"].as_array().unwrap().len(), 1);
    assert_eq!(structured["tools"][0]["name"], "mcp__weather__get_forecast");
    assert_eq!(
        structured["tools"][0]["description"],
        "The weather forecast for a city."
    );

    let call = args(json!({"name": "mcp__weather__get_forecast", "arguments": {"city": "Oslo"}}));
    let called = set
        .answer_search_mode(CALL_TOOL, call.as_ref(), CallOptions::new())
        .await
        .expect("the call tool")
        .unwrap();
    assert_eq!(called.structured_content, Some(json!({"city": "Oslo"})));

    let wrong = args(json!({"query": "x", "limit": 0}));
    let refused = set
        .answer_search_mode(SEARCH_TOOL, wrong.as_ref(), CallOptions::new())
        .await
        .expect("the search tool")
        .unwrap();
    assert_eq!(refused.is_error, Some(true));
    let unknown = args(json!({"name": "mcp__weather__nope"}));
    let err = set
        .answer_search_mode(CALL_TOOL, unknown.as_ref(), CallOptions::new())
        .await
        .expect("the call tool")
        .unwrap_err();
    assert!(err.is_unknown(), "{err}");
    assert!(
        set.answer_search_mode("mcp__weather__get_forecast", None, CallOptions::new())
            .await
            .is_none()
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}
