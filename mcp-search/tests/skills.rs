//! Skills in the index beside tools: found by a word of their description, ranked among
//! the tools, said to be skills; a search can ask for one kind only; a skill and a tool of
//! one server may share a name, two skills may not.

#![allow(clippy::unwrap_used, reason = "tests")]

use mcp_search::{EntryKind, SearchOptions, ToolDef, ToolIndex};
use pretty_assertions::assert_eq;

fn index() -> ToolIndex {
    let mut index = ToolIndex::new();
    index
        .replace_server(
            "docs".parse().unwrap(),
            [
                ToolDef::new("convert", "Convert a document to another format."),
                ToolDef::new("fill_form", "Fill the fields of a PDF form."),
                ToolDef::skill(
                    "pdf-processing",
                    "Extract, fill, and assemble PDF documents",
                ),
                ToolDef::skill("notes", "Take notes while you work"),
            ],
        )
        .unwrap();
    index
        .replace_server(
            "files".parse().unwrap(),
            [
                ToolDef::new("read_file", "Read a file's contents."),
                ToolDef::new("assemble", "Concatenate files into one."),
            ],
        )
        .unwrap();
    index
}

fn ranked(hits: &[mcp_search::Hit]) -> Vec<(&str, EntryKind)> {
    hits.iter()
        .map(|h| (h.qualified_name(), h.kind()))
        .collect()
}

#[test]
fn a_skill_is_found_by_a_word_of_its_description_among_the_tools() {
    let index = index();
    assert_eq!(index.len(), 6);
    // "extract" is only in the skill's description.
    let hits = index.search("extract pages", 5).unwrap();
    assert_eq!(ranked(&hits), [("docs/pdf-processing", EntryKind::Skill)]);
    assert!(hits[0].is_skill());
    assert_eq!(hits[0].name(), "pdf-processing");

    // "assemble" is a tool's name and a word of the skill's description: both rank, the
    // name first; "fill" is in a tool's and the skill's description.
    let hits = index.search("assemble", 5).unwrap();
    assert_eq!(
        ranked(&hits),
        [
            ("files/assemble", EntryKind::Tool),
            ("docs/pdf-processing", EntryKind::Skill)
        ]
    );
    let hits = index.search("fill and assemble PDF documents", 5).unwrap();
    assert_eq!(hits[0].qualified_name(), "docs/pdf-processing");
    assert!(
        hits.iter()
            .any(|h| h.qualified_name() == "docs/fill_form" && h.kind() == EntryKind::Tool),
        "{hits:?}"
    );

    // Its name, typed as the query, ranks it first.
    let hits = index.search("notes", 5).unwrap();
    assert_eq!(ranked(&hits)[0], ("docs/notes", EntryKind::Skill));
}

#[test]
fn a_search_can_ask_for_one_kind() {
    let index = index();
    let tools = SearchOptions::new(5)
        .with_min_coverage(0.0)
        .only(EntryKind::Tool);
    let found = index.search_with("assemble", &tools).unwrap();
    assert_eq!(ranked(&found.hits), [("files/assemble", EntryKind::Tool)]);
    // Only a skill matches: no tool hit, and no skill offered as "did you mean".
    let found = index.search_with("extract", &tools).unwrap();
    assert!(found.is_no_match());
    assert!(
        found.did_you_mean.iter().all(|h| !h.is_skill()),
        "{found:?}"
    );
    let skills = SearchOptions::new(5).only(EntryKind::Skill);
    let found = index.search_with("assemble", &skills).unwrap();
    assert_eq!(
        ranked(&found.hits),
        [("docs/pdf-processing", EntryKind::Skill)]
    );
}

#[test]
fn a_skill_may_share_a_tools_name_but_not_another_skills() {
    let mut index = ToolIndex::new();
    index
        .replace_server(
            "s".parse().unwrap(),
            [
                ToolDef::new("review", "Review a change."),
                ToolDef::skill("review", "How to review a change."),
            ],
        )
        .unwrap();
    assert_eq!(index.len(), 2);
    let kinds: Vec<EntryKind> = index
        .search("review", 5)
        .unwrap()
        .iter()
        .map(mcp_search::Hit::kind)
        .collect();
    assert_eq!(kinds, [EntryKind::Tool, EntryKind::Skill]);
    let err = index
        .replace_server(
            "s".parse().unwrap(),
            [ToolDef::skill("a", "x"), ToolDef::skill("a", "y")],
        )
        .unwrap_err();
    assert!(err.is_duplicate_tool(), "{err}");
    assert_eq!(
        err.to_string(),
        "server `s` lists skill `a` twice: skill names must be unique per server"
    );
    assert_eq!(index.len(), 2, "unchanged on error");
}
