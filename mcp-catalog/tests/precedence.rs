//! Sources, precedence, conflicts and vetoes.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{CatalogBuilder, ServerConfig, Source, Tier, VetoReason};
use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use pretty_assertions::assert_eq;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

fn command_of(catalog: &mcp_catalog::ResolvedCatalog, key: &McpServerKey) -> Option<String> {
    catalog
        .get(key)
        .and_then(|s| s.transport().as_stdio())
        .map(|s| s.command().to_owned())
}

fn stdio(command: &str) -> ServerConfig {
    ServerConfig::stdio(command)
}

#[test]
fn higher_tiers_win_in_order() {
    let k = key("files");
    let sources = [
        Source::runtime("ext"),
        Source::built_in("compat"),
        Source::user("config.toml"),
        Source::selected_plugin("sel"),
        Source::discovered_plugin("disc"),
    ];
    // Register from highest to lowest: registration order must not matter across tiers.
    for count in 1..=sources.len() {
        let mut builder = CatalogBuilder::new();
        for source in sources.iter().rev().take(count) {
            builder.register(source.clone(), k.clone(), stdio(source.name()));
        }
        let catalog = builder.build();
        let expected = sources[sources.len() - count].name();
        assert_eq!(command_of(&catalog, &k).as_deref(), Some(expected));
        assert!(catalog.conflicts().is_empty());
    }
    let mut builder = CatalogBuilder::new();
    for source in &sources {
        builder.register(source.clone(), k.clone(), stdio(source.name()));
    }
    let catalog = builder.build();
    assert_eq!(command_of(&catalog, &k).as_deref(), Some("ext"));
    assert_eq!(catalog.source(&k).map(Source::tier), Some(Tier::Runtime));
}

#[test]
fn plugins_earlier_wins_and_runtime_later_wins_with_conflicts_reported() {
    let a = key("a");
    let b = key("b");
    let mut builder = CatalogBuilder::new();
    builder
        .register(Source::discovered_plugin("p1"), a.clone(), stdio("p1"))
        .register(Source::discovered_plugin("p2"), a.clone(), stdio("p2"))
        .register(Source::discovered_plugin("p3"), a.clone(), stdio("p3"))
        .register(Source::selected_plugin("s1"), b.clone(), stdio("s1"))
        .register(Source::selected_plugin("s2"), b.clone(), stdio("s2"))
        .register(Source::runtime("r1"), b.clone(), stdio("r1"))
        .register(Source::runtime("r2"), b.clone(), stdio("r2"));
    let catalog = builder.build();
    assert_eq!(command_of(&catalog, &a).as_deref(), Some("p1"));
    assert_eq!(command_of(&catalog, &b).as_deref(), Some("r2"));
    let conflicts: Vec<String> = catalog
        .conflicts()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        conflicts,
        [
            "server `a` is registered more than once by discovered plugin sources: discovered \
             plugin `p1` wins over discovered plugin `p2`, discovered plugin `p3`",
            "server `b` is registered more than once by selected plugin sources: selected plugin \
             `s1` wins over selected plugin `s2`",
            "server `b` is registered more than once by runtime extension sources: runtime \
             extension `r2` wins over runtime extension `r1`",
        ]
    );
    let first = &catalog.conflicts()[0];
    assert_eq!((first.key(), first.tier()), (&a, Tier::DiscoveredPlugin));
    assert_eq!(first.winner(), &Source::discovered_plugin("p1"));
    assert_eq!(first.losers().len(), 2);
}

#[test]
fn same_name_in_different_environments_does_not_conflict() {
    let devbox = EnvironmentId::new("devbox").unwrap();
    let name = ServerName::new("files").unwrap();
    let mut builder = CatalogBuilder::new();
    builder
        .register(
            Source::discovered_plugin("p"),
            McpServerKey::unscoped(name.clone()),
            stdio("l"),
        )
        .register(
            Source::discovered_plugin("p"),
            McpServerKey::in_environment(devbox.clone(), name.clone()),
            stdio("d"),
        );
    let catalog = builder.build();
    assert!(catalog.conflicts().is_empty());
    assert_eq!(catalog.len(), 2);
    let scoped = McpServerKey::in_environment(devbox.clone(), name);
    assert_eq!(catalog.get(&scoped).map(|s| s.environment()), Some(&devbox));
}

#[test]
fn enabled_false_on_the_winner_vetoes_and_lower_tiers_do_not_resurrect() {
    let k = key("files");
    let mut builder = CatalogBuilder::new();
    builder
        .register(Source::discovered_plugin("p"), k.clone(), stdio("plugin"))
        .register(
            Source::user("config.toml"),
            k.clone(),
            stdio("user").with_enabled(false),
        );
    let catalog = builder.build();
    assert!(catalog.get(&k).is_none());
    assert_eq!(
        catalog.veto(&k),
        Some(&VetoReason::DisabledInConfig {
            source: Source::user("config.toml")
        })
    );
    assert_eq!(catalog.exposed_keys().count(), 0);
    assert_eq!(catalog.resolve_server_name(k.name()), None);

    // enabled = false on a loser does not veto.
    let mut builder = CatalogBuilder::new();
    builder
        .register(
            Source::discovered_plugin("p"),
            k.clone(),
            stdio("plugin").with_enabled(false),
        )
        .register(Source::user("config.toml"), k.clone(), stdio("user"));
    assert_eq!(command_of(&builder.build(), &k).as_deref(), Some("user"));
}

#[test]
fn disable_by_name_from_any_source_vetoes_every_environment() {
    let name = ServerName::new("files").unwrap();
    let scoped = McpServerKey::in_environment(EnvironmentId::new("devbox").unwrap(), name.clone());
    let mut builder = CatalogBuilder::new();
    builder
        .register(Source::runtime("ext"), key("files"), stdio("x"))
        .register(Source::runtime("ext"), scoped.clone(), stdio("y"))
        .register(Source::runtime("ext"), key("other"), stdio("z"))
        .disable(Source::discovered_plugin("low"), name);
    let catalog = builder.build();
    let active: Vec<String> = catalog.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(active, ["other"]);
    let vetoed: Vec<String> = catalog.vetoed().map(|(k, r)| format!("{k}: {r}")).collect();
    assert_eq!(
        vetoed,
        [
            "files: disabled by name by discovered plugin `low`",
            "files@devbox: disabled by name by discovered plugin `low`",
        ]
    );
}

#[test]
fn vetoes_persist_through_to_builder() {
    let k = key("files");
    let mut builder = CatalogBuilder::new();
    builder.register(
        Source::user("config.toml"),
        k.clone(),
        stdio("user").with_enabled(false),
    );
    builder.register(Source::runtime("ext"), key("n"), stdio("n"));
    builder.disable(Source::built_in("compat"), ServerName::new("n").unwrap());
    let first = builder.build();
    assert!(first.get(&k).is_none());

    // A later, higher-precedence overlay does not revive vetoed servers.
    let mut more = first.to_builder();
    more.register(Source::runtime("ext2"), k.clone(), stdio("overlay"));
    more.register(Source::runtime("ext2"), key("n"), stdio("overlay"));
    more.register(Source::runtime("ext2"), key("fresh"), stdio("fresh"));
    let second = more.build();
    assert!(
        second.get(&k).is_none(),
        "enabled = false veto must persist"
    );
    assert!(
        second.get(&key("n")).is_none(),
        "disable(name) must persist"
    );
    assert_eq!(command_of(&second, &key("fresh")).as_deref(), Some("fresh"));
    // The first catalog is unchanged (immutable).
    assert_eq!(first.len(), 0);
    assert!(first.get(&key("fresh")).is_none());
}

#[test]
fn disabled_selected_plugin_does_not_veto_later_overlays() {
    let k = key("files");
    let n = key("named");
    let mut builder = CatalogBuilder::new();
    builder
        .register(
            Source::selected_plugin("sel"),
            k.clone(),
            stdio("sel").with_enabled(false),
        )
        .register(Source::selected_plugin("sel"), n.clone(), stdio("sel"))
        .disable(Source::selected_plugin("sel"), n.name().clone());
    let first = builder.build();
    assert!(first.get(&k).is_none());
    assert!(first.get(&n).is_none());

    // Rebuilding without overlays keeps them disabled.
    let unchanged = first.to_builder().build();
    assert!(unchanged.get(&k).is_none());
    assert!(unchanged.get(&n).is_none());

    let mut more = first.to_builder();
    more.register(Source::runtime("ext"), k.clone(), stdio("overlay"));
    more.register(Source::runtime("ext"), n.clone(), stdio("overlay"));
    let second = more.build();
    assert_eq!(command_of(&second, &k).as_deref(), Some("overlay"));
    assert_eq!(command_of(&second, &n).as_deref(), Some("overlay"));
}

#[test]
fn user_config_registers_with_user_tier_and_carries_settings() {
    let loaded = mcp_catalog::Config::from_toml_str(
        "multi_environment = true\ntool_name_prefix = false\ncredentials_store = \"file\"\n\
         [mcp_servers.files]\ncommand = \"user\"\n",
        "config.toml",
    )
    .unwrap();
    let mut builder = CatalogBuilder::new().with_user_config(loaded);
    builder.register(
        Source::discovered_plugin("p"),
        key("files"),
        stdio("plugin"),
    );
    builder.register(Source::built_in("compat"), key("compat"), stdio("compat"));
    let catalog = builder.build();
    assert_eq!(command_of(&catalog, &key("files")).as_deref(), Some("user"));
    assert_eq!(
        catalog.source(&key("files")),
        Some(&Source::user("config.toml"))
    );
    assert!(catalog.multi_environment());
    assert!(!catalog.tool_name_prefix());
    assert_eq!(
        catalog.credentials_store(),
        mcp_catalog::CredentialsStore::File
    );
    let keys: Vec<String> = catalog.servers().map(|(k, _)| k.to_string()).collect();
    assert_eq!(keys, ["compat", "files"]);
}

#[test]
fn layered_user_configs_later_file_wins_and_unwritten_settings_survive() {
    let global = mcp_catalog::Config::from_toml_str(
        "multi_environment = true\n[mcp_servers.files]\ncommand = \"global\"\n",
        "global.toml",
    )
    .unwrap();
    let project = mcp_catalog::Config::from_mcp_json_str(
        r#"{"mcpServers": {"files": {"command": "project"}}}"#,
        ".mcp.json",
        &mcp_catalog::EmptyEnv,
    )
    .unwrap();
    let catalog = CatalogBuilder::new()
        .with_user_config(global)
        .with_user_config(project)
        .build();
    assert_eq!(
        command_of(&catalog, &key("files")).as_deref(),
        Some("project")
    );
    assert!(
        catalog.multi_environment(),
        "a JSON file does not reset multi_environment"
    );
    let conflicts: Vec<String> = catalog
        .conflicts()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        conflicts,
        [
            "server `files` is registered more than once by user config sources: user config \
          `.mcp.json` wins over user config `global.toml`"
        ]
    );
}
