//! Reading real files from disk.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::collections::BTreeMap;
use std::io::Write;

use mcp_catalog::{CatalogBuilder, load_file, load_file_with_env};
use mcp_key::{McpServerKey, ServerName};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.path().join(name);
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
    path
}

#[test]
fn loads_toml_and_json_by_extension_and_content() {
    let dir = tempfile::tempdir().unwrap();
    let toml = write(&dir, "config.toml", "[mcp_servers.a]\ncommand = \"a\"\n");
    let json = write(
        &dir,
        ".mcp.json",
        r#"{"mcpServers": {"b": {"command": "${CMD:-b}"}}}"#,
    );
    let sniffed_json = write(&dir, "servers", "  {\"mcpServers\": {}}");
    let sniffed_toml = write(
        &dir,
        "servers.conf",
        "[mcp_servers.c]\nurl = \"https://c/mcp\"\n",
    );

    let loaded = load_file(&toml).unwrap();
    assert_eq!(loaded.origin(), toml.display().to_string());
    let catalog = CatalogBuilder::new().with_user_config(loaded).build();
    assert!(
        catalog
            .get(&McpServerKey::unscoped(ServerName::new("a").unwrap()))
            .is_some()
    );

    let env: BTreeMap<String, String> = [("CMD".to_owned(), "from-env".to_owned())].into();
    let loaded = load_file_with_env(&json, &env).unwrap();
    let b = &loaded.config().servers()[&ServerName::new("b").unwrap()];
    assert_eq!(b.transport().as_stdio().unwrap().command(), "from-env");

    assert!(
        load_file(&sniffed_json)
            .unwrap()
            .config()
            .servers()
            .is_empty()
    );
    assert_eq!(
        load_file(&sniffed_toml).unwrap().config().servers().len(),
        1
    );
}

#[test]
fn errors_carry_the_path() {
    let dir = tempfile::tempdir().unwrap();
    // An error inside one server entry fails that server only, with the path in its text.
    let path = write(&dir, "bad.toml", "[mcp_servers.a]\ncommand = 1\n");
    let loaded = load_file(&path).unwrap();
    let unusable: Vec<String> = loaded
        .config()
        .unusable_servers()
        .map(|(name, u)| format!("{name} {u}"))
        .collect();
    assert_eq!(unusable.len(), 1);
    assert!(unusable[0].starts_with(&format!(
        "a {}:2:11: server `a`: field `command`",
        path.display()
    )));

    // An error outside any server fails the file.
    let path = write(&dir, "worse.toml", "tool_name_prefix = 1\n");
    let err = load_file(&path).unwrap_err();
    assert!(err.is_invalid());
    assert!(
        err.to_string().starts_with(&format!(
            "{}:1:20: field `tool_name_prefix`",
            path.display()
        )),
        "{err}"
    );
    assert_eq!(err.config_errors().map(|e| e.len()), Some(1));

    let missing = dir.path().join("missing.toml");
    let err = load_file(&missing).unwrap_err();
    assert!(err.is_read());
    assert!(err.to_string().contains("missing.toml"));
    assert!(std::error::Error::source(&err).is_some());
}
