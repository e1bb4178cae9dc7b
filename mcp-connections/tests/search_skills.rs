//! Skills in the set's search, against real `mcp-fake-server` processes: a skill is found
//! by a word of its description and ranked among the tools, under its qualified name and
//! said to be a skill; a tool search leaves skills out; search mode lists the skills itself
//! and answers a skill as a skill (no input schema, its `SKILL.md` URI), reading no file; a
//! held-back skill is not found.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::*;
use std::sync::Arc;

use mcp_connections::{
    CallOptions, CatalogHit, ConnectionSet, ConnectionSetOptions, SEARCH_TOOL, SearchModeConfig,
    ToolPins,
};
use mcp_search::SearchOptions;
use mcp_testkit::{RecordedRequest, Scenario, SkillSpec, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;

fn pdf() -> SkillSpec {
    SkillSpec::new(
        "pdf-processing",
        "Extract, fill, and assemble PDF documents",
    )
    .with_file("references/FORMS.md", "Forms.\n")
}

fn docs(skill: SkillSpec) -> Scenario {
    Scenario::new("docs")
        .with_tool(
            ToolSpec::echo("convert").with_description("Convert a document to another format."),
        )
        .with_tool(ToolSpec::echo("fill_form").with_description("Fill the fields of a PDF form."))
        .with_skill(skill)
}

fn fixture() -> Fixture {
    let mut fx = Fixture::new();
    fx.stdio("docs", docs(pdf()));
    fx.stdio(
        "files",
        Scenario::new("files")
            .with_tool(ToolSpec::echo("read_file").with_description("Read a file's contents."))
            .with_tool(ToolSpec::echo("assemble").with_description("Concatenate files into one.")),
    );
    fx
}

async fn start(fx: &Fixture) -> ConnectionSet {
    start_with(fx, ConnectionSetOptions::new()).await
}

async fn start_with(fx: &Fixture, options: ConnectionSetOptions) -> ConnectionSet {
    let set = ConnectionSet::start(&fx.catalog(), options);
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 2, "{summary:?}");
    set
}

fn names(hits: &[CatalogHit]) -> Vec<(&str, bool)> {
    hits.iter()
        .map(|h| (h.qualified_name(), h.is_skill()))
        .collect()
}

fn reads(fx: &Fixture, server: &str) -> usize {
    RecordedRequest::read_log(fx.request_log(server))
        .iter()
        .filter(|r| r.method == "resources/read")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_is_found_by_its_description_and_ranked_among_the_tools() {
    let fx = fixture();
    let set = start(&fx).await;
    let all = SearchOptions::new(10).with_min_coverage(0.0);
    // Not listed yet: the search knows no skill.
    let found = set.find_tools_and_skills("extract pages", &all).unwrap();
    assert_eq!(names(&found.hits), []);

    assert_eq!(set.skills().await.len(), 1);
    // "extract" is only in the skill's description.
    let found = set.find_tools_and_skills("extract pages", &all).unwrap();
    assert_eq!(names(&found.hits), [("mcp__docs__pdf-processing", true)]);
    let CatalogHit::Skill(hit) = &found.hits[0] else {
        panic!("not a skill: {:?}", found.hits[0]);
    };
    assert_eq!(hit.info.name(), "pdf-processing");
    assert_eq!(hit.info.skill.uri, "skill://pdf-processing/SKILL.md");

    // A tool's name and a word of the skill's description: both, the name first.
    let found = set.find_tools_and_skills("assemble", &all).unwrap();
    assert_eq!(
        names(&found.hits),
        [
            ("mcp__files__assemble", false),
            ("mcp__docs__pdf-processing", true)
        ]
    );
    // Words of both a tool's description and the skill's: the skill (all of them) first,
    // the tool among the hits.
    let found = set
        .find_tools_and_skills("fill and assemble PDF documents", &all)
        .unwrap();
    assert_eq!(names(&found.hits)[0], ("mcp__docs__pdf-processing", true));
    assert!(
        names(&found.hits).contains(&("mcp__docs__fill_form", false)),
        "{:?}",
        names(&found.hits)
    );
    // Its qualified name, typed as the query, ranks it first.
    let found = set
        .find_tools_and_skills("mcp__docs__pdf-processing", &all)
        .unwrap();
    assert_eq!(names(&found.hits)[0], ("mcp__docs__pdf-processing", true));

    // A tool search leaves skills out.
    let tools = set.search_tools("assemble", 10).unwrap();
    let tool_names: Vec<&str> = tools
        .iter()
        .map(|h| h.info.qualified_name.as_str())
        .collect();
    assert_eq!(tool_names, ["mcp__files__assemble"]);
    assert_eq!(set.search_tools("extract pages", 10).unwrap(), []);
    assert_eq!(reads(&fx, "docs"), 0, "searching read a file");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_mode_answers_a_skill_as_a_skill() {
    let fx = fixture();
    let set = start(&fx).await;
    // No skills() before: search mode lists them itself.
    let args = json!({"query": "extract and assemble PDF documents"});
    let result = set
        .answer_search_mode_for(
            SEARCH_TOOL,
            args.as_object(),
            CallOptions::new(),
            &SearchModeConfig::new(),
        )
        .await
        .expect("a search-mode tool")
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let answer = result.structured_content.unwrap();
    let first = &answer["tools"][0];
    assert_eq!(
        first,
        &json!({
            "name": "mcp__docs__pdf-processing",
            "kind": "skill",
            "description": "Extract, fill, and assemble PDF documents",
            "uri": "skill://pdf-processing/SKILL.md",
        })
    );
    // The tools in the same answer keep their shape (no kind, an input schema).
    let tools = answer["tools"].as_array().unwrap();
    let assemble = tools
        .iter()
        .find(|t| t["name"] == "mcp__files__assemble")
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(assemble.get("kind").is_none(), "{assemble}");
    assert!(assemble["inputSchema"].is_object(), "{assemble}");
    assert_eq!(reads(&fx, "docs"), 0, "searching read a file");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_back_skill_is_not_found_until_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let options =
        || ConnectionSetOptions::new().with_tool_pins(Arc::new(ToolPins::persisted(dir.path())));
    let all = SearchOptions::new(10).with_min_coverage(0.0);
    let query = "mcp__docs__pdf-processing";
    let mut fx = fixture();
    let set = start_with(&fx, options()).await;
    assert!(!set.skills().await[0].held);
    let found = set.find_tools_and_skills(query, &all).unwrap();
    assert_eq!(names(&found.hits)[..1], [(query, true)]);
    set.shutdown().await;
    fx.assert_no_processes().await;

    // The same command now serves another revision of the skill: held under the default
    // `reapprove`, not found.
    fx.stdio("docs", docs(pdf().with_revision(1)));
    let set = start_with(&fx, options()).await;
    assert!(set.skills().await[0].held);
    let found = set.find_tools_and_skills(query, &all).unwrap();
    assert!(!found.hits.iter().any(CatalogHit::is_skill), "{found:?}");
    assert!(
        !found.did_you_mean.iter().any(CatalogHit::is_skill),
        "{found:?}"
    );
    // Accepted: found again.
    assert_eq!(
        set.accept_skill_changes(&"docs".parse().unwrap(), None)
            .unwrap(),
        1
    );
    assert!(!set.skills().await[0].held);
    let found = set.find_tools_and_skills(query, &all).unwrap();
    assert_eq!(names(&found.hits)[..1], [(query, true)]);
    set.shutdown().await;
    fx.assert_no_processes().await;
}
