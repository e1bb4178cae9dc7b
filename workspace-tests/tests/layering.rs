//! The crate order is a one-way street. This test reads `cargo metadata` and fails when a
//! workspace crate depends on one that sits at or above it in the order, or when `mcp-key`
//! gains a runtime dependency it must never have.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(clippy::expect_used, reason = "test")]

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Rank of each layered crate: a crate may depend only on crates of a strictly lower rank.
/// `mcp-auth`, `mcp-pool` and `mcp-registry` share a rank, so none may depend on another.
fn rank(name: &str) -> Option<u8> {
    Some(match name {
        "mcp-key" => 0,
        // Tool search needs names only: the catalog, auth and pool never depend on it.
        "mcp-catalog" | "mcp-search" => 1,
        // The MCP Registry's client reads server.json documents into the catalog's model;
        // it is no MCP server, so neither the client nor the set below it needs it.
        "mcp-auth" | "mcp-pool" | "mcp-registry" => 2,
        // One server, one connection: under the set of many.
        "mcp-client" => 3,
        "mcp-connections" => 4,
        "mcpctl" | "mcp-conformance" => 5,
        _ => return None,
    })
}

/// Crates that `mcp-testkit` may never depend on (in any dependency section).
const TESTKIT_FORBIDDEN: &[&str] = &["mcp-connections", "mcpctl"];

/// Crates `mcp-key` may never depend on, directly (it is pure values: no I/O, no runtime).
const KEY_FORBIDDEN: &[&str] = &["tokio", "rmcp", "reqwest", "mcp-catalog"];

struct Edge {
    from: String,
    to: String,
    kind: String,
}

fn workspace_edges() -> (BTreeSet<String>, Vec<Edge>) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages array");
    let members: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_owned())
        .collect();
    let mut edges = Vec::new();
    for p in packages {
        let from = p["name"].as_str().expect("name").to_owned();
        for d in p["dependencies"].as_array().expect("dependencies") {
            edges.push(Edge {
                from: from.clone(),
                to: d["name"].as_str().expect("dep name").to_owned(),
                kind: d["kind"].as_str().unwrap_or("normal").to_owned(),
            });
        }
    }
    (members, edges)
}

fn violations(edges: &[Edge]) -> Vec<String> {
    let mut bad = Vec::new();
    for e in edges {
        // Dev-dependencies may reach sideways for tests (e.g. mcp-pool's tests use the
        // testkit), but never upward in the layered order.
        if let (Some(a), Some(b)) = (rank(&e.from), rank(&e.to))
            && b >= a
        {
            bad.push(format!(
                "{} ({}) depends on {} ({kind}): a crate may only depend on lower layers",
                e.from,
                a,
                e.to,
                kind = e.kind
            ));
        }
        if e.from == "mcp-testkit" && TESTKIT_FORBIDDEN.contains(&e.to.as_str()) {
            bad.push(format!("mcp-testkit depends on {} ({})", e.to, e.kind));
        }
        // The pool is generic (no MCP, no identities): a supervisor built on it alone
        // compiles none of the workspace's other crates.
        if e.from == "mcp-pool" && e.kind != "dev" && e.to.starts_with("mcp-") {
            bad.push(format!(
                "mcp-pool depends on {} ({}): it must stand alone",
                e.to, e.kind
            ));
        }
        if e.from == "mcp-key" && e.kind != "dev" && KEY_FORBIDDEN.contains(&e.to.as_str()) {
            bad.push(format!(
                "mcp-key depends on {}: it must stay free of I/O",
                e.to
            ));
        }
    }
    bad
}

#[test]
fn crates_depend_only_downward() {
    let (members, edges) = workspace_edges();
    for expected in [
        "mcp-key",
        "mcp-catalog",
        "mcp-pool",
        "mcp-client",
        "mcp-connections",
        "mcp-registry",
        "mcpctl",
    ] {
        assert!(members.contains(expected), "workspace lost {expected}");
    }
    let bad = violations(&edges);
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_catches_upward_and_forbidden_edges() {
    let edge = |from: &str, to: &str, kind: &str| Edge {
        from: from.to_owned(),
        to: to.to_owned(),
        kind: kind.to_owned(),
    };
    let edges = [
        edge("mcp-key", "mcp-catalog", "normal"),
        edge("mcp-pool", "mcp-auth", "normal"),
        edge("mcp-catalog", "mcp-connections", "dev"),
        edge("mcp-testkit", "mcp-connections", "dev"),
        edge("mcp-key", "tokio", "normal"),
        edge("mcp-connections", "mcp-pool", "normal"),
        edge("mcp-key", "proptest", "dev"),
        edge("mcp-pool", "mcp-key", "normal"),
        edge("mcp-pool", "mcp-testkit", "dev"),
        edge("mcp-client", "mcp-connections", "normal"),
        edge("mcp-connections", "mcp-client", "normal"),
    ];
    let got: BTreeMap<usize, String> = violations(&edges).into_iter().enumerate().collect();
    assert_eq!(got.len(), 9, "{got:#?}");
}

/// Names of `mcp-catalog`'s resolution of many servers (and of the set), which the
/// single-server client must never use: it takes one server's settings only.
const CLIENT_FORBIDDEN_NAMES: &[&str] = &[
    "ResolvedCatalog",
    "CatalogBuilder",
    "ResolvedServer",
    "mcp_connections",
    "ConnectionSet",
];

/// Every `(file, line, name)` of `forbidden` in the Rust sources under `dir`.
fn forbidden_names(dir: &std::path::Path, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("source folder readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("source readable");
                for (n, line) in text.lines().enumerate() {
                    for name in forbidden {
                        if line.contains(name) {
                            found.push(format!("{}:{}: {name}", path.display(), n + 1));
                        }
                    }
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_client_never_names_a_set_or_a_resolved_catalog() {
    let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../mcp-client/src"));
    let found = forbidden_names(src, CLIENT_FORBIDDEN_NAMES);
    assert!(
        found.is_empty(),
        "mcp-client names what belongs to the set:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_name_check_finds_a_forbidden_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("a.rs"),
        "fn f(c: &mcp_catalog::ResolvedCatalog) {}\n",
    )
    .expect("write");
    assert_eq!(
        forbidden_names(dir.path(), CLIENT_FORBIDDEN_NAMES).len(),
        1,
        "the check must see the name"
    );
}
