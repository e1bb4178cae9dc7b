//! Search mode over real `mcp-fake-server` processes: tools pinned with `always_load` /
//! `always_load_tools` are listed beside the two search tools, a search with no good match
//! answers so with the closest names, and the results per call are bounded by the host's
//! [`SearchModeConfig`].

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::*;
use mcp_connections::{
    CALL_TOOL, CallOptions, ConnectionSet, ConnectionSetOptions, SEARCH_TOOL, SearchModeConfig,
};
use mcp_testkit::{Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;

fn fixture() -> Fixture {
    let mut fx = Fixture::new();
    fx.stdio_with(
        "files",
        Scenario::new("files")
            .with_tool(ToolSpec::echo("read_file").with_description("Read a file from disk."))
            .with_tool(ToolSpec::echo("write_file").with_description("Write a file to disk."))
            .with_tool(
                ToolSpec::echo("list_directory")
                    .with_description("List the files and folders of a directory."),
            ),
        |c| c.with_always_load_tools(["read_file"]),
    );
    fx.stdio_with(
        "clock",
        Scenario::new("clock").with_tool(
            ToolSpec::echo("current_time").with_description("The current time in a time zone."),
        ),
        |c| c.with_always_load(true),
    );
    fx.stdio(
        "weather",
        Scenario::new("weather").with_tool(
            ToolSpec::echo("get_forecast").with_description("The weather forecast for a city."),
        ),
    );
    fx
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_tools_are_listed_beside_the_search_tools() {
    let fx = fixture();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(set.wait_startup().await.ready(), 3);
    let pinned: Vec<String> = set
        .always_loaded_tools()
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    assert_eq!(
        pinned,
        ["mcp__clock__current_time", "mcp__files__read_file"],
        "a server pinned whole, one tool of another, none of the third"
    );
    let listing = set.search_mode_listing(&SearchModeConfig::new());
    assert_eq!(
        names(&listing),
        [
            SEARCH_TOOL,
            CALL_TOOL,
            "mcp__clock__current_time",
            "mcp__files__read_file"
        ]
    );
    // A pinned tool is listed with its description and schema, as in the full listing.
    assert_eq!(
        listing[3].description.as_deref(),
        Some("Read a file from disk.")
    );
    // The model may call it directly.
    let called = set
        .call_qualified(
            "mcp__files__read_file",
            Some(json!({"path": "a.txt"})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(called.structured_content, Some(json!({"path": "a.txt"})));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_with_no_good_match_says_so_and_offers_the_closest_names() {
    let fx = fixture();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let args = |v: serde_json::Value| v.as_object().cloned();
    let search = |query: &str, config: SearchModeConfig| {
        let set = set.clone();
        let arguments = args(json!({ "query": query }));
        async move {
            set.answer_search_mode_for(SEARCH_TOOL, arguments.as_ref(), CallOptions::new(), &config)
                .await
                .expect("the search tool")
                .unwrap()
        }
    };

    // Nothing is about this: no tools, a sentence, nothing close.
    let none = search(
        "book a table for two at an Italian restaurant",
        SearchModeConfig::new(),
    )
    .await;
    assert_eq!(none.is_error, Some(false));
    let answer = none.structured_content.unwrap();
    assert_eq!(answer["tools"], json!([]));
    assert_eq!(answer["did_you_mean"], json!([]));
    assert!(
        answer["no_match"]
            .as_str()
            .unwrap()
            .contains("No tool matches")
    );

    // A misspelt name: no good match, the name it was meant to be offered.
    let strict = SearchModeConfig::new().with_min_coverage(0.9);
    let typo = search("get_forcast", strict)
        .await
        .structured_content
        .unwrap();
    assert_eq!(typo["tools"], json!([]));
    assert_eq!(typo["did_you_mean"][0], "mcp__weather__get_forecast");
    assert!(
        typo["no_match"]
            .as_str()
            .unwrap()
            .contains("mcp__weather__get_forecast")
    );

    // A good match is answered as before.
    let good = search("the weather forecast for a city", SearchModeConfig::new())
        .await
        .structured_content
        .unwrap();
    assert_eq!(good["tools"][0]["name"], "mcp__weather__get_forecast");
    assert!(good.get("no_match").is_none());
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_results_per_call_are_bounded_by_the_host_config() {
    let fx = fixture();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let config = SearchModeConfig::new()
        .with_results(1, 2)
        .with_min_coverage(0.0);
    // The schema tells the model the bounds.
    let listing = set.search_mode_listing(&config);
    assert_eq!(listing[0].input_schema["properties"]["limit"]["maximum"], 2);
    let run = |limit: Option<u64>| {
        let set = set.clone();
        let mut arguments = json!({"query": "file directory disk"});
        if let Some(limit) = limit {
            arguments["limit"] = json!(limit);
        }
        async move {
            set.answer_search_mode_for(
                SEARCH_TOOL,
                arguments.as_object(),
                CallOptions::new(),
                &config,
            )
            .await
            .expect("the search tool")
            .unwrap()
        }
    };
    let count = |r: &rmcp::model::CallToolResult| {
        r.structured_content.as_ref().unwrap()["tools"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(count(&run(None).await), 1, "the host's default");
    assert_eq!(count(&run(Some(2)).await), 2);
    let over = run(Some(3)).await;
    assert_eq!(over.is_error, Some(true), "above the host's maximum");
    set.shutdown().await;
    fx.assert_no_processes().await;
}
