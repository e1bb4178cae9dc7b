//! `always_load` and `always_load_tools`: the tools a host lists beside the search tools in
//! search mode. Parsing, defaults, the export round trip and the errors, each naming the
//! server, the field and what to change.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{CatalogBuilder, Config, LoadedConfig, ServerConfig, export_toml};
use mcp_key::{McpServerKey, ServerName};
use pretty_assertions::assert_eq;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

const SERVERS: &str = r#"
[mcp_servers.plain]
command = "a"

[mcp_servers.pinned]
command = "b"
always_load = true

[mcp_servers.some]
command = "c"
always_load_tools = ["read_file", "list_directory"]
"#;

#[test]
fn always_load_is_off_by_default_and_read_per_server_and_per_tool() {
    assert!(!ServerConfig::stdio("x").always_load());
    assert!(ServerConfig::stdio("x").always_load_tools().is_empty());
    let loaded = Config::from_toml_str(SERVERS, "c.toml").unwrap();
    assert_eq!(loaded.warnings(), &[]);
    let catalog = CatalogBuilder::new().with_user_config(loaded).build();
    let server = |name: &str| catalog.get(&key(name)).unwrap().clone();
    assert!(!server("plain").always_loads("read_file"));
    assert!(server("pinned").always_load());
    assert!(server("pinned").always_loads("anything"));
    assert!(server("some").always_loads("read_file"));
    assert!(server("some").always_loads("list_directory"));
    assert!(!server("some").always_loads("write_file"));
    assert_eq!(
        server("some")
            .always_load_tools()
            .iter()
            .collect::<Vec<_>>(),
        ["list_directory", "read_file"]
    );
}

#[test]
fn always_load_survives_the_export() {
    let loaded = Config::from_toml_str(SERVERS, "c.toml").unwrap();
    let text = export_toml(std::slice::from_ref(&loaded));
    assert!(text.contains("always_load = true"), "{text}");
    assert!(
        text.contains("always_load_tools = [\"list_directory\", \"read_file\"]"),
        "{text}"
    );
    let again = Config::from_toml_str(&text, "exported.toml").unwrap();
    for name in ["plain", "pinned", "some"] {
        let a = loaded
            .config()
            .servers()
            .get(&ServerName::new(name).unwrap());
        let b = again
            .config()
            .servers()
            .get(&ServerName::new(name).unwrap());
        assert_eq!(
            a.map(|s| (s.always_load(), s.always_load_tools().clone())),
            b.map(|s| (s.always_load(), s.always_load_tools().clone())),
            "{name}"
        );
    }
}

/// Each wrong setting is an error naming the server and the field, with what to change.
#[test]
fn wrong_always_load_settings_are_errors_that_say_what_to_change() {
    let cases: [(&str, &str); 5] = [
        ("always_load = \"yes\"", "always_load"),
        ("always_load_tools = \"read_file\"", "always_load_tools"),
        ("always_load_tools = [\"\"]", "always_load_tools"),
        (
            "disabled_tools = [\"write_file\"]\nalways_load_tools = [\"write_file\"]",
            "always_load_tools",
        ),
        (
            "always_load = true\nalways_load_tools = [\"read_file\"]",
            "always_load_tools",
        ),
    ];
    for (lines, field) in cases {
        let text = format!("[mcp_servers.files]\ncommand = \"npx\"\n{lines}\n");
        let errors = Config::from_toml_str(&text, "c.toml")
            .and_then(LoadedConfig::into_strict)
            .unwrap_err();
        let error = &errors.errors()[0];
        assert_eq!(
            (error.server(), error.field()),
            (Some("files"), Some(field)),
            "{lines}: {error}"
        );
        assert!(error.hint().is_some(), "{lines}: {error}");
    }
    let hidden = Config::from_toml_str(
        "[mcp_servers.files]\ncommand = \"npx\"\nenabled_tools = [\"read_file\"]\n\
         always_load_tools = [\"write_file\"]\n",
        "c.toml",
    )
    .and_then(LoadedConfig::into_strict)
    .unwrap_err();
    assert_eq!(
        hidden.errors()[0].message(),
        "`write_file` is hidden by `enabled_tools` or `disabled_tools`"
    );
}
