//! The README of every crate whose API carries rmcp types says which rmcp it pairs with,
//! and that is the version the workspace depends on.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::Path;

#[test]
fn each_readme_names_the_rmcp_the_workspace_uses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("rmcp = "))
        .expect("rmcp in [workspace.dependencies]");
    let version = line
        .split("version = \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a version");
    for krate in ["mcp-client", "mcp-connections", "mcp-testkit", "mcp-auth"] {
        let readme = std::fs::read_to_string(root.join(krate).join("README.md")).unwrap();
        let says = format!("rmcp pairing: built and tested against rmcp {version} ");
        assert!(readme.contains(&says), "{krate}/README.md lacks {says:?}");
    }
}
