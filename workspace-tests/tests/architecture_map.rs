//! ARCHITECTURE.md is a map: every backticked path in it must exist, and it stays short
//! enough to read (at most 2,500 words).

#![allow(clippy::expect_used, reason = "test")]

use std::path::Path;

/// The backticked words of `text` that look like paths of the repository: they contain a
/// `/`, no space, no `::`, and start with a folder of the workspace.
fn paths(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            w.contains('/')
                && !w.contains(' ')
                && !w.contains("::")
                && !w.starts_with("http")
                && !w.starts_with('/')
                && w.split('/').next().is_some_and(|first| {
                    first.starts_with("mcp")
                        || ["workspace-tests", "scripts", "examples", ".ci"].contains(&first)
                })
        })
        .map(ToOwned::to_owned)
        .collect()
}

#[test]
fn every_path_in_the_map_exists_and_it_stays_short() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let text =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md readable");
    let named = paths(&text);
    assert!(named.len() > 20, "the map names its files: {named:?}");
    let missing: Vec<&String> = named.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
    let words = text.split_whitespace().count();
    assert!(
        words <= 2500,
        "ARCHITECTURE.md has {words} words; keep it a map (at most 2,500)"
    );
}

#[test]
fn the_path_reader_sees_paths_and_only_paths() {
    let text = "see `mcp-client/src/lib.rs`, `mcp_client::Client`, `a b/c`, `https://x/y` and `scripts/test.sh`";
    assert_eq!(paths(text), ["mcp-client/src/lib.rs", "scripts/test.sh"]);
}

/// The `### `crate`` sections of the map and the text of each.
fn crate_sections(text: &str) -> Vec<(String, String)> {
    let mut sections = Vec::new();
    for part in text.split("\n### ").skip(1) {
        let (title, body) = part.split_once('\n').unwrap_or((part, ""));
        let body = body.split("\n## ").next().unwrap_or(body);
        if let Some(name) = title.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
            sections.push((name.to_owned(), body.to_owned()));
        }
    }
    sections
}

/// The invariants of a section: each starts at `**Invariant` and runs to the next blank
/// line or the next bold lead.
fn invariants(body: &str) -> Vec<String> {
    body.split("**Invariant")
        .skip(1)
        .map(|rest| {
            rest.split("\n\n")
                .next()
                .unwrap_or(rest)
                .split("\n**")
                .next()
                .unwrap_or(rest)
                .to_owned()
        })
        .collect()
}

#[test]
fn every_crate_has_invariants_each_with_its_test_or_a_reason() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let text =
        std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md readable");
    let sections = crate_sections(&text);
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    for member in manifest
        .lines()
        .map(|l| l.trim().trim_end_matches(',').trim_matches('"'))
        .filter(|l| l.starts_with("mcp") && !l.contains(' ') && root.join(l).is_dir())
        .filter(|l| !["mcp-conformance", "mcp-bench"].contains(l))
    {
        assert!(
            sections.iter().any(|(name, _)| name == member),
            "ARCHITECTURE.md has no section for the crate {member}"
        );
    }
    for (name, body) in &sections {
        let found = invariants(body);
        assert!(
            !found.is_empty(),
            "the section of {name} states no invariant"
        );
        for invariant in found {
            assert!(
                !paths(&invariant).is_empty()
                    || invariant.contains("(no test:")
                    // The lint rules (`disallowed-methods`) are checked by clippy in CI.
                    || (invariant.contains("`clippy.toml`") && root.join("clippy.toml").is_file()),
                "an invariant of {name} names no test and gives no reason: {invariant}"
            );
        }
    }
}

#[test]
fn the_section_reader_sees_sections_and_their_invariants() {
    let text = "# A\n### `mcp-x`\nowns x.\n\n**Invariant:** never y (`mcp-x/tests/y.rs`).\n**Invariant:** never z (no test: why).\n\n### `mcp-w`\nowns w.\n## Cross\n";
    let sections = crate_sections(text);
    assert_eq!(sections.len(), 2);
    assert_eq!(invariants(&sections[0].1).len(), 2);
    assert!(invariants(&sections[1].1).is_empty());
}
