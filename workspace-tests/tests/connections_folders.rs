//! Inside `mcp-connections` the folders are layered: what the set knows of servers without
//! running them (`catalog/`), where credentials come from (`auth/`) and where servers run
//! (`environments/`) never import the host's policy (`policy/`) or the set (`set/`); the
//! policy never imports the set; the crate's plain values at the top (`error.rs`,
//! `events.rs`, `status.rs`, ...) import neither; and every `impl ConnectionSet` lives in
//! `set/`. This test reads the sources and fails when an import breaks that.

#![allow(clippy::expect_used, reason = "test")]

use std::path::{Path, PathBuf};

/// The folders (or top-level files, by `""`) and the module paths they must never name.
const RULES: &[(&str, &[&str])] = &[
    ("catalog", &["crate::set", "crate::policy"]),
    ("auth", &["crate::set", "crate::policy"]),
    ("environments", &["crate::set", "crate::policy"]),
    ("policy", &["crate::set"]),
    ("", &["crate::set", "crate::policy"]),
];

/// Ways to write the set's type in an `impl` header.
const IMPL_SET: &[&str] = &[
    "impl ConnectionSet",
    "impl crate::ConnectionSet",
    "impl crate::set::ConnectionSet",
];

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("source folder readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The code of a file without its unit tests (`#[cfg(test)]` and what follows) and
/// without comment lines, which may name any module.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every broken rule under `src`, as `file: what`.
fn violations(src: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for path in rust_files(src) {
        let rel = path.strip_prefix(src).expect("under src");
        let folder = match rel.components().count() {
            1 => "",
            _ => rel
                .components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .unwrap_or_default(),
        };
        // The crate root re-exports everything; the set may import anything below it.
        let name = rel.to_string_lossy();
        let text = code(&std::fs::read_to_string(&path).expect("source readable"));
        if name != "lib.rs" {
            for (rule_folder, forbidden) in RULES {
                if *rule_folder == folder {
                    for module in *forbidden {
                        if text.contains(module) {
                            bad.push(format!("{name}: names `{module}`"));
                        }
                    }
                }
            }
        }
        if folder != "set" {
            for header in IMPL_SET {
                if text.contains(&format!("{header} {{")) {
                    bad.push(format!("{name}: `{header}` outside set/"));
                }
            }
        }
    }
    bad
}

#[test]
fn the_folders_of_mcp_connections_import_downward_only() {
    let src = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mcp-connections/src"
    ));
    for folder in ["catalog", "auth", "environments", "policy", "set"] {
        assert!(src.join(folder).is_dir(), "mcp-connections lost {folder}/");
    }
    let bad = violations(src);
    assert!(
        bad.is_empty(),
        "folder layering broken:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_catches_an_upward_import_and_a_stray_impl() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    for folder in ["catalog", "policy", "set"] {
        std::fs::create_dir(src.join(folder)).expect("folder");
    }
    std::fs::write(src.join("lib.rs"), "use crate::set::ConnectionSet;\n").expect("write");
    std::fs::write(
        src.join("catalog/a.rs"),
        "use crate::set::inner::SetInner;\n",
    )
    .expect("write");
    std::fs::write(src.join("policy/b.rs"), "impl ConnectionSet {\n}\n").expect("write");
    std::fs::write(
        src.join("set/c.rs"),
        "use crate::policy::b;\nimpl ConnectionSet {\n}\n",
    )
    .expect("write");
    std::fs::write(src.join("error.rs"), "// crate::set in a comment is fine\n").expect("write");
    let bad = violations(src);
    assert_eq!(
        bad,
        [
            "catalog/a.rs: names `crate::set`",
            "policy/b.rs: `impl ConnectionSet` outside set/",
        ],
        "{bad:#?}"
    );
}
