//! Plugins loaded from real folders and installed in several environments.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::path::{Path, PathBuf};

use mcp_catalog::{
    CatalogBuilder, Config, EmptyEnv, Plugin, PluginRef, PluginTier, ResolvedCatalog, ServerConfig,
    Source, Tier, load_file,
};
use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

const TOOLS_JSON: &str = r#"{
  "mcpServers": {
    "github": {"command": "gh-mcp", "args": ["--stdio"]},
    "files": {"type": "http", "url": "https://files.example.com/mcp"}
  }
}"#;

fn env(id: &str) -> EnvironmentId {
    EnvironmentId::new(id).unwrap()
}

fn name(raw: &str) -> ServerName {
    ServerName::new(raw).unwrap()
}

fn key(raw: &str) -> McpServerKey {
    raw.parse().unwrap()
}

fn strings<'a>(keys: impl Iterator<Item = &'a McpServerKey>) -> Vec<String> {
    keys.map(ToString::to_string).collect()
}

/// Writes `files` (relative path, contents) under `root`, creating folders.
fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// A user config in `root` that installs `plugins/tools` in local, devbox and sandbox.
fn config_with_tools(root: &Path, extra: &str) -> PathBuf {
    let config = format!(
        r#"
multi_environment = false
[environments.devbox]
wrapper = ["ssh", "devbox", "--"]
[environments.sandbox]

[[plugins]]
path = "plugins/tools"
environments = ["local", "devbox", "sandbox"]
{extra}
"#
    );
    write(
        root,
        &[
            ("config.toml", &config),
            ("plugins/tools/.mcp.json", TOOLS_JSON),
        ],
    );
    root.join("config.toml")
}

fn catalog_from(path: &Path, multi_environment: Option<bool>) -> ResolvedCatalog {
    let mut builder = CatalogBuilder::new();
    builder
        .add_user_config_with_plugins(load_file(path).unwrap(), &EmptyEnv)
        .unwrap();
    match multi_environment {
        Some(on) => builder.with_multi_environment(on).build(),
        None => builder.build(),
    }
}

#[test]
fn one_plugin_in_three_environments_gives_six_keys() {
    let dir = TempDir::new().unwrap();
    let catalog = catalog_from(&config_with_tools(dir.path(), ""), None);
    assert_eq!(
        strings(catalog.iter().map(|(k, _)| k)),
        [
            "files@devbox",
            "files@local",
            "files@sandbox",
            "github@devbox",
            "github@local",
            "github@sandbox",
        ]
    );
    for (k, server) in catalog.iter() {
        assert_eq!(Some(server.environment()), k.environment());
        assert_eq!(catalog.source(k), Some(&Source::selected_plugin("tools")));
    }
    let github = catalog.get(&key("github@devbox")).unwrap();
    assert_eq!(github.transport().as_stdio().unwrap().args(), ["--stdio"]);
    assert!(catalog.conflicts().is_empty());
    assert!(catalog.warnings().is_empty(), "{:?}", catalog.warnings());
}

#[test]
fn multi_environment_off_exposes_the_local_installation_as_legacy_winner() {
    let dir = TempDir::new().unwrap();
    let catalog = catalog_from(&config_with_tools(dir.path(), ""), Some(false));
    assert_eq!(
        strings(catalog.exposed_keys()),
        ["files@local", "github@local"]
    );
    assert_eq!(
        catalog.resolve_server_name(&name("github")),
        Some(&key("github@local"))
    );
    assert_eq!(
        catalog.legacy_server_name(&key("github@local")),
        Some(&name("github"))
    );
    assert_eq!(catalog.legacy_server_name(&key("github@devbox")), None);
}

#[test]
fn multi_environment_on_exposes_every_installation() {
    let dir = TempDir::new().unwrap();
    let catalog = catalog_from(&config_with_tools(dir.path(), ""), Some(true));
    assert_eq!(catalog.exposed_keys().count(), 6);
    assert!(catalog.is_exposed(&key("github@sandbox")));
    assert_eq!(
        catalog.resolve_server_name(&name("github")),
        Some(&key("github@local"))
    );
}

#[test]
fn a_user_server_wins_the_legacy_name_over_installations() {
    let dir = TempDir::new().unwrap();
    let extra = "[mcp_servers.github]\ncommand = \"my-github\"\n";
    let catalog = catalog_from(&config_with_tools(dir.path(), extra), Some(false));
    assert_eq!(
        catalog.resolve_server_name(&name("github")),
        Some(&key("github"))
    );
    assert_eq!(strings(catalog.exposed_keys()), ["files@local", "github"]);
    for scoped in ["github@local", "github@devbox", "github@sandbox"] {
        let server = catalog.get(&key(scoped)).unwrap();
        assert_eq!(server.transport().as_stdio().unwrap().command(), "gh-mcp");
        assert_eq!(catalog.legacy_server_name(&key(scoped)), None);
    }
}

#[test]
fn an_mcp_toml_plugin_ignores_environment_and_settings_with_warnings() {
    let dir = TempDir::new().unwrap();
    let toml = "multi_environment = true\n\n[mcp_servers.db]\ncommand = \"db-mcp\"\n\
                environment = \"elsewhere\"\ntool_timeout_sec = 9\n";
    write(dir.path(), &[("db-plugin/mcp.toml", toml)]);
    let plugin = Plugin::load(&dir.path().join("db-plugin"), &EmptyEnv).unwrap();
    assert_eq!(plugin.name(), "db-plugin");
    let manifest = dir.path().join("db-plugin").join("mcp.toml");
    assert_eq!(plugin.manifest(), Some(manifest.as_path()));
    let origin = manifest.display().to_string();
    let warnings: Vec<String> = plugin.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            format!(
                "{origin}:1:1: `multi_environment` is ignored in a plugin (a plugin only \
                 declares servers; set it in the user configuration)"
            ),
            format!(
                "{origin}:5:1: server `db`: `environment` is ignored in a plugin (the \
                 installation decides where a plugin runs: list environments in the user \
                 configuration's `[[plugins]] environments = [...]`)"
            ),
        ]
    );

    let catalog = CatalogBuilder::new()
        .with_plugin(PluginTier::Discovered, &plugin, &[env("devbox")])
        .build();
    let server = catalog.get(&key("db@devbox")).unwrap();
    assert_eq!(server.environment(), &env("devbox"));
    assert_eq!(server.tool_timeout().as_secs(), 9);
    assert!(!catalog.multi_environment());
    // The plugin's warnings, then the build's own about the undeclared environment.
    let messages: Vec<&str> = catalog.warnings().iter().map(|w| w.message()).collect();
    assert_eq!(
        messages,
        [
            "`multi_environment` is ignored in a plugin",
            "`environment` is ignored in a plugin",
            "environment `devbox` of `db@devbox` is not declared; its stdio servers run \
             without a wrapper",
        ]
    );
}

#[test]
fn a_json_plugin_environment_key_is_ignored_with_a_warning() {
    let dir = TempDir::new().unwrap();
    let json = r#"{"mcpServers": {"x": {"command": "x", "environment": "devbox"}}}"#;
    write(dir.path(), &[("p/.mcp.json", json)]);
    let plugin = Plugin::load(&dir.path().join("p"), &EmptyEnv).unwrap();
    let [warning] = plugin.warnings() else {
        panic!("{:?}", plugin.warnings())
    };
    assert_eq!(warning.message(), "`environment` is ignored in a plugin");
    assert_eq!(warning.server(), Some("x"));
    assert_eq!(warning.location().line(), Some(1));
    assert_eq!(warning.unknown_key_name(), None);
    // An empty environment list installs in `local`.
    let catalog = CatalogBuilder::new()
        .with_plugin(PluginTier::Selected, &plugin, &[])
        .build();
    assert_eq!(strings(catalog.iter().map(|(k, _)| k)), ["x@local"]);
}

#[test]
fn both_declaration_files_or_none_is_an_error_naming_the_folder() {
    let dir = TempDir::new().unwrap();
    write(
        dir.path(),
        &[
            ("both/.mcp.json", TOOLS_JSON),
            ("both/mcp.toml", "[mcp_servers.a]\ncommand = \"a\"\n"),
            ("none/README.md", "no servers here"),
        ],
    );
    let both = dir.path().join("both");
    let err = Plugin::load(&both, &EmptyEnv).unwrap_err();
    assert!(err.is_plugin_folder() && !err.is_invalid());
    assert_eq!(
        err.to_string(),
        format!(
            "plugin folder `{}` has both `.mcp.json` and `mcp.toml`: keep only one of them",
            both.display()
        )
    );
    let none = dir.path().join("none");
    let err = Plugin::load(&none, &EmptyEnv).unwrap_err();
    assert!(err.is_plugin_folder());
    assert_eq!(
        err.to_string(),
        format!(
            "plugin folder `{}` declares no servers: add a `.mcp.json` \
             (`{{\"mcpServers\": {{...}}}}`) or an `mcp.toml` (`[mcp_servers.<name>]`) to it",
            none.display()
        )
    );
    let file = none.join("README.md");
    assert!(
        Plugin::load(&file, &EmptyEnv)
            .unwrap_err()
            .is_plugin_folder()
    );
    assert!(
        Plugin::load(&dir.path().join("missing"), &EmptyEnv)
            .unwrap_err()
            .is_read()
    );
}

#[test]
fn an_invalid_plugin_file_error_carries_its_path_line_and_column() {
    let dir = TempDir::new().unwrap();
    // An invalid server name fails the whole file (an invalid entry with a valid name would
    // fail only that server).
    let json = "{\"mcpServers\": {\n  \"bad name\": {\"url\": \"https://host\"}\n}}";
    write(
        dir.path(),
        &[
            (
                "config.toml",
                "[[plugins]]\npath = \"ok\"\n[[plugins]]\npath = \"broken\"\n",
            ),
            ("ok/.mcp.json", TOOLS_JSON),
            ("broken/.mcp.json", json),
        ],
    );
    let manifest = dir.path().join("broken").join(".mcp.json");
    let mut builder = CatalogBuilder::new();
    let loaded = load_file(dir.path().join("config.toml")).unwrap();
    let err = builder
        .add_user_config_with_plugins(loaded, &EmptyEnv)
        .unwrap_err();
    assert!(err.is_plugin_entry() && err.is_invalid());
    assert_eq!(
        err.to_string(),
        format!(
            "plugin #2 of `[[plugins]]` (`{}`) could not be loaded",
            dir.path().join("broken").display()
        )
    );
    let errors = err.config_errors().unwrap();
    let location = errors.errors()[0].location();
    assert_eq!(location.origin(), manifest.display().to_string());
    assert_eq!((location.line(), location.column()), (Some(2), Some(3)));
    let source = std::error::Error::source(&err).unwrap().to_string();
    assert!(source.starts_with(&format!("{}:2:3: server `bad name`", manifest.display())));
    // Nothing was installed: the first plugin loaded, but the builder is unchanged.
    assert!(builder.build().is_empty());
}

#[test]
fn discovered_plugins_conflict_and_the_earlier_wins() {
    let github = name("github");
    let first = Plugin::new("first").with_server(github.clone(), ServerConfig::stdio("one"));
    let second = Plugin::new("second").with_server(github, ServerConfig::stdio("two"));
    let devbox = [env("devbox")];
    let catalog = CatalogBuilder::new()
        .with_plugin(PluginTier::Discovered, &first, &devbox)
        .with_plugin(PluginTier::Discovered, &second, &devbox)
        .build();
    let winner = catalog.get(&key("github@devbox")).unwrap();
    assert_eq!(winner.transport().as_stdio().unwrap().command(), "one");
    let [conflict] = catalog.conflicts() else {
        panic!("{:?}", catalog.conflicts())
    };
    assert_eq!(conflict.key(), &key("github@devbox"));
    assert_eq!(conflict.tier(), Tier::DiscoveredPlugin);
    assert_eq!(conflict.winner(), &Source::discovered_plugin("first"));
    assert_eq!(conflict.losers(), [Source::discovered_plugin("second")]);
}

#[test]
fn a_selected_plugin_beats_a_discovered_one_without_a_conflict() {
    let github = name("github");
    let found = Plugin::new("found").with_server(github.clone(), ServerConfig::stdio("found"));
    let chosen = Plugin::new("chosen").with_server(github, ServerConfig::stdio("chosen"));
    let catalog = CatalogBuilder::new()
        .with_plugin(PluginTier::Selected, &chosen, &[])
        .with_plugin(PluginTier::Discovered, &found, &[])
        .build();
    assert_eq!(
        catalog.source(&key("github@local")),
        Some(&Source::selected_plugin("chosen"))
    );
    assert!(catalog.conflicts().is_empty());
}

#[test]
fn load_plugins_resolves_relative_paths_and_expands_variables() {
    let dir = TempDir::new().unwrap();
    let json = r#"{"mcpServers": {"api": {"type": "http", "url": "${API_URL:-https://api.example.com/mcp}"}}}"#;
    write(dir.path(), &[("nested/api/.mcp.json", json)]);
    let entries = [PluginRef::new("api").with_environments([env("local"), env("local")])];
    let mut builder = CatalogBuilder::new();
    builder
        .load_plugins(&entries, &dir.path().join("nested"), &EmptyEnv)
        .unwrap();
    let catalog = builder.build();
    // Repeated environments install once.
    assert_eq!(strings(catalog.iter().map(|(k, _)| k)), ["api@local"]);
    let http = catalog.get(&key("api@local")).unwrap().transport();
    assert_eq!(http.as_http().unwrap().url(), "https://api.example.com/mcp");

    let err = builder
        .load_plugins(&[PluginRef::new("nope")], dir.path(), &EmptyEnv)
        .unwrap_err();
    assert!(err.is_plugin_entry() && err.is_read());
}

#[test]
fn plugin_entries_with_undeclared_environments_are_rejected_when_parsed() {
    let text = "[[plugins]]\npath = \"p\"\nenvironments = [\"devbox\"]\n";
    let errors = Config::from_toml_str(text, "c.toml").unwrap_err();
    assert_eq!(
        errors.to_string(),
        "c.toml:3:16: plugin #1: field `environments`: unknown environment `devbox` (use \
         `local` or declare it in `[environments.<id>]`)"
    );
}
