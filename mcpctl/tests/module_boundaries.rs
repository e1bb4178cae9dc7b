//! The rules the `mod.rs` of `src/term/` and `src/host/` state, checked on the source:
//! `term` imports nothing else of mcpctl, and `host` never imports `commands` or `serve`.

#![allow(clippy::unwrap_used, reason = "test")]

use std::path::Path;

use pretty_assertions::assert_eq;

/// Every `crate::` path in the `.rs` files of `src/<folder>`, as `folder/file: crate::path`,
/// sorted by file.
fn crate_paths(folder: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut found = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            found.push(format!("{folder}/{name}: crate::{}", &rest[..end]));
        }
    }
    found
}

/// The paths of `folder` that go to one of the top-level modules `modules`.
fn into(folder: &str, modules: &[&str]) -> Vec<String> {
    crate_paths(folder)
        .into_iter()
        .filter(|line| {
            let path = &line[line.find(": crate::").unwrap() + ": crate::".len()..];
            let top = path.split("::").next().unwrap_or_default();
            modules.contains(&top) || top.is_empty()
        })
        .collect()
}

#[test]
fn the_terminal_module_imports_nothing_else_of_mcpctl() {
    let others = crate_paths("term")
        .into_iter()
        .filter(|line| !line.contains(": crate::term::"))
        .collect::<Vec<_>>();
    assert_eq!(others, Vec::<String>::new());
}

#[test]
fn host_setup_never_imports_commands_or_the_gateway() {
    assert_eq!(into("host", &["commands", "serve"]), Vec::<String>::new());
    // The scan sees imports where there are some.
    assert!(!into("commands", &["host"]).is_empty());
}
