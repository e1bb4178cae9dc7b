//! Weak hits and "no good match": coverage, the minimum a host asks for, the bounded
//! number of hits, and the closest names offered instead.

#![allow(clippy::unwrap_used, reason = "tests")]

use mcp_search::{DID_YOU_MEAN, MAX_LIMIT, SearchOptions, ToolDef, ToolIndex};
use pretty_assertions::assert_eq;

fn index() -> ToolIndex {
    let mut index = ToolIndex::new();
    index
        .replace_server(
            "files".parse().unwrap(),
            [
                ToolDef::new("read_file", "Read the contents of a file from disk."),
                ToolDef::new("write_file", "Write a file to disk."),
                ToolDef::new("move_file", "Move or rename a file or directory."),
            ],
        )
        .unwrap();
    index
        .replace_server(
            "weather".parse().unwrap(),
            [ToolDef::new(
                "get_forecast",
                "Weather forecast for a city for the next days.",
            )],
        )
        .unwrap();
    index
}

fn names(hits: &[mcp_search::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.qualified_name()).collect()
}

#[test]
fn coverage_is_the_share_of_the_query_a_tool_has() {
    let index = index();
    let hits = index.search("weather forecast city", 5).unwrap();
    assert_eq!(hits[0].qualified_name(), "weather/get_forecast");
    assert!((hits[0].coverage() - 1.0).abs() < 1e-9, "{hits:?}");
    // One word of three, and a common one: a small share.
    let hits = index.search("file forecast city", 5).unwrap();
    let read = hits
        .iter()
        .find(|h| h.qualified_name() == "files/read_file")
        .unwrap();
    assert!(read.coverage() > 0.0 && read.coverage() < 0.5, "{hits:?}");
    for h in &hits {
        assert!((0.0..=1.0).contains(&h.coverage()), "{h:?}");
    }
}

#[test]
fn weak_hits_are_left_out_and_a_no_match_offers_the_closest_names() {
    let index = index();
    let query = "rename the forecast city file on disk";
    // Without a minimum every tool that matches a word comes back.
    let all = index
        .search_with(query, &SearchOptions::new(10).with_min_coverage(0.0))
        .unwrap();
    assert_eq!(all.hits.len(), 4, "{all:?}");
    assert!(all.did_you_mean.is_empty());
    // With one, only those with that share of the query.
    let min = 0.4;
    let strong = index
        .search_with(query, &SearchOptions::new(10).with_min_coverage(min))
        .unwrap();
    assert!(
        !strong.hits.is_empty() && strong.hits.len() < 4,
        "{strong:?}"
    );
    assert!(strong.hits.iter().all(|h| h.coverage() >= min));
    // Nothing passes: no hit, and the best weak ones as "did you mean".
    let none = index
        .search_with(query, &SearchOptions::new(10).with_min_coverage(1.0))
        .unwrap();
    assert!(none.is_no_match());
    assert_eq!(none.did_you_mean.len(), DID_YOU_MEAN, "{none:?}");
    assert_eq!(none.did_you_mean[0], all.hits[0]);
}

#[test]
fn a_named_tool_passes_any_minimum_and_a_misspelt_name_is_offered() {
    let index = index();
    let strict = SearchOptions::new(5).with_min_coverage(1.0);
    let named = index
        .search_with("please run move_file for me now", &strict)
        .unwrap();
    assert_eq!(names(&named.hits), ["files/move_file"]);
    // A name one edit away: its spelling is near, so it is offered first.
    let typo = index.search_with("get_forcast", &strict).unwrap();
    assert!(typo.is_no_match());
    assert_eq!(
        typo.did_you_mean[0].qualified_name(),
        "weather/get_forecast"
    );
    // Nothing near at all: no hit and nothing to offer.
    let far = index
        .search_with("quantum chromodynamics", &SearchOptions::new(5))
        .unwrap();
    assert!(far.is_no_match() && far.did_you_mean.is_empty(), "{far:?}");
}

#[test]
fn the_number_of_hits_is_bounded_by_the_limit_and_the_largest_limit() {
    let index = index();
    let found = index
        .search_with("file", &SearchOptions::new(2).with_min_coverage(0.0))
        .unwrap();
    assert_eq!(found.hits.len(), 2);
    let every = index
        .search_with("file", &SearchOptions::new(usize::MAX))
        .unwrap();
    assert_eq!(every.hits.len(), 3);
    assert!(every.hits.len() <= MAX_LIMIT);
    assert!(
        index
            .search_with("file", &SearchOptions::new(0))
            .unwrap_err()
            .is_invalid_limit()
    );
}
