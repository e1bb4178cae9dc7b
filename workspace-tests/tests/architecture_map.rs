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
