//! The index as a host uses it: ranking rules, determinism, incremental updates, the
//! embedding hook, and bad input.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::Arc;

use mcp_key::{McpServerKey, ServerName};
use mcp_search::{Embedder, MAX_QUERY_CHARS, SearchError, ToolDef, ToolIndex};
use serde_json::json;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

fn files() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "read_file",
            "Read the complete contents of a file from disk.",
        )
        .with_input_schema(json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Path of the file to read"}}})),
        ToolDef::new(
            "write_file",
            "Create a new file or overwrite a file with new content.",
        ),
        ToolDef::new(
            "list_directory",
            "List the files and folders in a directory.",
        ),
    ]
}

fn weather() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "get_forecast",
            "Weather forecast for a city for the next days.",
        ),
        ToolDef::new(
            "getCurrentConditions",
            "Current temperature and wind at a place.",
        ),
    ]
}

fn names(index: &ToolIndex, query: &str) -> Vec<String> {
    index
        .search(query, 10)
        .unwrap()
        .iter()
        .map(|h| h.qualified_name().to_owned())
        .collect()
}

fn both() -> ToolIndex {
    let mut index = ToolIndex::new();
    index.replace_server(key("files"), files()).unwrap();
    index.replace_server(key("weather"), weather()).unwrap();
    index
}

#[test]
fn words_find_the_tool_they_describe() {
    let index = both();
    assert_eq!(
        names(&index, "what will the weather be tomorrow")[0],
        "weather/get_forecast"
    );
    assert_eq!(
        names(&index, "show the folders in a directory")[0],
        "files/list_directory"
    );
    // camelCase names are split: "current conditions" finds getCurrentConditions.
    assert_eq!(
        names(&index, "current conditions")[0],
        "weather/getCurrentConditions"
    );
    // Stemming: "reading files" matches "read ... file".
    assert_eq!(names(&index, "reading files")[0], "files/read_file");
}

#[test]
fn an_exact_name_ranks_first() {
    let index = both();
    for query in ["write_file", "files/write_file", "WRITE_FILE "] {
        assert_eq!(names(&index, query)[0], "files/write_file", "{query}");
    }
    // An alias (a host's model-facing name) is a name too.
    let mut aliased = ToolIndex::new();
    aliased
        .replace_server(
            key("files"),
            files().into_iter().map(|t| {
                let alias = format!("mcp__files__{}", t.name());
                t.with_alias(alias)
            }),
        )
        .unwrap();
    assert_eq!(
        names(&aliased, "mcp__files__list_directory")[0],
        "files/list_directory"
    );
}

#[test]
fn ties_are_ordered_by_qualified_name_and_results_repeat() {
    let mut index = ToolIndex::new();
    let same = |n: &str| ToolDef::new(n, "Sends a message.");
    index.replace_server(key("b"), [same("send")]).unwrap();
    index.replace_server(key("a"), [same("send")]).unwrap();
    let first = names(&index, "message");
    assert_eq!(first, ["a/send", "b/send"]);
    for _ in 0..5 {
        assert_eq!(names(&index, "message"), first);
    }
}

#[test]
fn replacing_one_server_equals_a_fresh_build() {
    let mut index = both();
    let changed = vec![ToolDef::new(
        "get_alerts",
        "Severe weather alerts for a region.",
    )];
    index
        .replace_server(key("weather"), changed.clone())
        .unwrap();
    let mut fresh = ToolIndex::new();
    fresh.replace_server(key("files"), files()).unwrap();
    fresh.replace_server(key("weather"), changed).unwrap();
    for query in [
        "weather alerts",
        "read a file",
        "forecast",
        "directory listing",
    ] {
        let a = index.search(query, 10).unwrap();
        let b = fresh.search(query, 10).unwrap();
        assert_eq!(a, b, "{query}");
    }
    assert_eq!(index.len(), 4);
    assert!(index.remove_server(&key("weather")));
    assert!(!index.remove_server(&key("weather")));
    assert_eq!(index.len(), 3);
    assert!(names(&index, "forecast").is_empty());
}

#[test]
fn cjk_text_is_searchable() {
    let mut index = ToolIndex::new();
    index
        .replace_server(
            key("trains"),
            [
                ToolDef::new("search_tickets", "查询火车票余票信息"),
                ToolDef::new("station_code", "获取车站代码"),
            ],
        )
        .unwrap();
    assert_eq!(names(&index, "火车票")[0], "trains/search_tickets");
    assert_eq!(names(&index, "车站")[0], "trains/station_code");
}

/// Ranks by a fixed vector per text: tools and queries containing "alpha" point one way,
/// the rest another.
#[derive(Debug)]
struct FakeEmbedder;

impl Embedder for FakeEmbedder {
    fn embed(
        &self,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(texts
            .iter()
            .map(|t| {
                if t.contains("alpha") || t.contains("zeta") {
                    vec![1.0, 0.0]
                } else {
                    vec![0.0, 1.0]
                }
            })
            .collect())
    }
}

#[derive(Debug)]
struct Broken;

impl Embedder for Broken {
    fn embed(
        &self,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
        Ok(texts
            .iter()
            .map(|_| vec![])
            .take(texts.len().saturating_sub(1))
            .collect())
    }
}

#[test]
fn an_embedder_adds_what_words_alone_miss() {
    let tools = || {
        vec![
            ToolDef::new("one", "Handles alpha records."),
            ToolDef::new("two", "Handles beta records."),
        ]
    };
    let mut lexical = ToolIndex::new();
    lexical.replace_server(key("s"), tools()).unwrap();
    // No shared word: lexical search finds nothing for "zeta".
    assert!(names(&lexical, "zeta").is_empty());
    let mut hybrid = ToolIndex::with_embedder(Arc::new(FakeEmbedder));
    hybrid.replace_server(key("s"), tools()).unwrap();
    assert_eq!(names(&hybrid, "zeta")[0], "s/one");
    // An embedder that breaks its contract is an error, and the index is unchanged.
    let mut broken = ToolIndex::with_embedder(Arc::new(Broken));
    let err = broken.replace_server(key("s"), tools()).unwrap_err();
    assert!(err.to_string().contains("embedder"), "{err}");
    assert!(broken.is_empty());
}

#[test]
fn bad_input_gets_a_clear_error_never_a_panic() {
    let index = both();
    for query in ["", "   ", "\u{1}\u{2}\u{7f}", "!!! ???"] {
        let err = index.search(query, 5).unwrap_err();
        assert!(matches!(err, SearchError::EmptyQuery), "{query:?}: {err}");
    }
    let long = "file ".repeat(2_000);
    let err = index.search(&long, 5).unwrap_err();
    assert!(matches!(err, SearchError::QueryTooLong { .. }), "{err}");
    assert!(
        err.to_string().contains(&MAX_QUERY_CHARS.to_string()),
        "{err}"
    );
    // Just at the bound is fine.
    let at_bound: String = "a".repeat(MAX_QUERY_CHARS);
    assert!(index.search(&at_bound, 5).is_ok());
    assert!(matches!(
        index.search("file", 0).unwrap_err(),
        SearchError::ZeroLimit
    ));
    // A huge limit is clamped, not an error.
    assert_eq!(index.search("file", 10_000).unwrap().len(), 3);
    // A server listing one name twice is refused, naming both.
    let mut twice = ToolIndex::new();
    let err = twice
        .replace_server(key("dup"), [ToolDef::new("t", ""), ToolDef::new("t", "")])
        .unwrap_err();
    assert!(
        err.to_string().contains("`dup`") && err.to_string().contains("`t`"),
        "{err}"
    );
}

#[test]
fn words_written_apart_match_a_name_that_joins_them() {
    let mut index = ToolIndex::new();
    index
        .replace_server(
            key("cloud"),
            [
                ToolDef::new("eventgrid_topic_list", "List topics."),
                ToolDef::new("event_list", "List the events of a topic."),
            ],
        )
        .unwrap();
    assert_eq!(
        names(&index, "list the Event Grid topics")[0],
        "cloud/eventgrid_topic_list"
    );
}

#[test]
fn a_name_the_query_spells_out_beats_a_longer_one_it_only_touches() {
    let mut index = ToolIndex::new();
    let tools = [
        ToolDef::new("sql_server_show", "Show a server."),
        ToolDef::new("sql_server_firewall_rule_show", "Show a server."),
    ];
    index.replace_server(key("db"), tools).unwrap();
    assert_eq!(
        names(&index, "show the sql server"),
        ["db/sql_server_show", "db/sql_server_firewall_rule_show"]
    );
}

#[test]
fn a_word_the_corpus_lacks_matches_as_two_parts_it_has() {
    let mut index = ToolIndex::new();
    let tools = [
        ToolDef::new(
            "cosmos_account_list",
            "List accounts of the Cosmos service.",
        ),
        // Without the split this one wins: its name is all "account" and "list".
        ToolDef::new("account_list", "List accounts."),
        ToolDef::new("sql_db_show", "Show a SQL db."),
    ];
    index.replace_server(key("cloud"), tools).unwrap();
    assert_eq!(
        names(&index, "my cosmosdb accounts")[0],
        "cloud/cosmos_account_list"
    );
}
