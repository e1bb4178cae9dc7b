//! The crate's module layering as a test: each folder of `src/` imports only the layers
//! below it, and no two source files import each other, directly or through others.
//!
//! Edges are the `crate::…` paths of code lines (comments and `#[cfg(test)]` modules are
//! skipped). Inside the crate a path names the module it comes from
//! (`crate::model::config::Config`), not the root's re-export (`crate::Config`), so that
//! every edge is visible here.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first. `root` is `diagnostic.rs`, `env.rs` and `error.rs`.
const LAYERS: &[(&str, &[&str])] = &[
    ("root", &[]),
    ("model", &["root"]),
    ("formats", &["root", "model"]),
    ("resolve", &["root", "model", "formats"]),
    ("export", &["root", "model"]),
    ("hosts", &["root", "model", "formats", "resolve"]),
    ("registry", &["root", "model", "formats"]),
];

const ROOT_MODULES: &[&str] = &["diagnostic", "env", "error"];

/// Source files by module path (`model::config`, `env`), with their text.
fn sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let folder = path.file_name().unwrap().to_str().unwrap().to_owned();
            for file in std::fs::read_dir(&path).unwrap() {
                let file = file.unwrap().path();
                let stem = file.file_stem().unwrap().to_str().unwrap();
                let module = if stem == "mod" {
                    folder.clone()
                } else {
                    format!("{folder}::{stem}")
                };
                files.insert(module, std::fs::read_to_string(&file).unwrap());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            files.insert(stem, std::fs::read_to_string(&path).unwrap());
        }
    }
    files
}

/// The code lines of a file, without comments and without its `#[cfg(test)]` module.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .take_while(|line| line.trim() != "#[cfg(test)]")
        .filter(|line| !line.trim_start().starts_with("//"))
}

/// The modules a file names through `crate::`: `model::config`, `diagnostic`, or the
/// bare name after `crate::` when it is neither a folder nor a root module.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in code_lines(text) {
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let words: Vec<&str> = rest
                .split("::")
                .map(|w| {
                    w.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .next()
                        .unwrap_or_default()
                })
                .collect();
            let first = words.first().copied().unwrap_or_default();
            let is_folder = LAYERS.iter().any(|(layer, _)| *layer == first);
            match words.get(1) {
                Some(second) if is_folder && !second.is_empty() => {
                    out.insert(format!("{first}::{second}"));
                }
                _ => {
                    out.insert(first.to_owned());
                }
            }
        }
    }
    out
}

fn layer_of(module: &str) -> &str {
    match module.split_once("::") {
        Some((folder, _)) => folder,
        None if ROOT_MODULES.contains(&module) || module == "lib" => "root",
        None => module,
    }
}

#[test]
fn each_folder_imports_only_the_layers_below_it() {
    let mut wrong = Vec::new();
    for (module, text) in sources() {
        if module == "lib" {
            continue;
        }
        let layer = layer_of(&module);
        let (_, allowed) = LAYERS
            .iter()
            .find(|(name, _)| *name == layer)
            .unwrap_or_else(|| panic!("`{module}` is in no layer: add its folder to LAYERS"));
        for import in imports(&text) {
            let target = layer_of(&import);
            let known = LAYERS.iter().any(|(name, _)| *name == target);
            if !known {
                wrong.push(format!(
                    "{module} -> crate::{import}: name the module path, not a root re-export"
                ));
            } else if target != layer && !allowed.contains(&target) {
                wrong.push(format!("{module} ({layer}) -> {import} ({target})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other() {
    let sources = sources();
    let graph: BTreeMap<String, BTreeSet<String>> = sources
        .iter()
        .filter(|(module, _)| *module != "lib")
        .map(|(module, text)| {
            let edges = imports(text)
                .into_iter()
                .filter(|import| import != module && sources.contains_key(import))
                .collect();
            (module.clone(), edges)
        })
        .collect();
    // Depth-first search; a module met again while still on the path closes a circle.
    fn visit<'g>(
        module: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
        circles: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            let mut circle = path[at..].to_vec();
            circle.push(module);
            circles.push(circle.join(" -> "));
            return;
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for next in graph.get(module).into_iter().flatten() {
            visit(next, graph, path, done, circles);
        }
        path.pop();
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(module, &graph, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}
