//! `startup`, `mcp_startup`, `tool_cache` and the other per-server policies (`protocol`,
//! `tool_drift`, `log_level`, `tool_exposure`): parsing, defaults, precedence and errors.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{
    CatalogBuilder, Config, ConfigErrorKind, LoadedConfig, ResolvedCatalog, ServerConfig,
    StartupPolicy,
};
use mcp_key::{McpServerKey, ServerName};
use pretty_assertions::assert_eq;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(ServerName::new(name).unwrap())
}

fn catalog(text: &str) -> ResolvedCatalog {
    let loaded = Config::from_toml_str(text, "c.toml").unwrap();
    assert_eq!(loaded.warnings(), &[]);
    CatalogBuilder::new().with_user_config(loaded).build()
}

const SERVERS: &str = r#"
[mcp_servers.plain]
command = "a"

[mcp_servers.lazy]
command = "b"
startup = "lazy_when_cached"
tool_cache = true

[mcp_servers.eager]
command = "c"
startup = "eager"
tool_cache = false
"#;

#[test]
fn defaults_are_eager_and_cached() {
    let server = ServerConfig::stdio("x");
    assert_eq!(server.startup_policy(), None);
    assert!(server.tool_cache());
    assert_eq!(StartupPolicy::default(), StartupPolicy::Eager);

    let catalog = catalog(SERVERS);
    assert_eq!(catalog.startup_policy(&key("plain")), StartupPolicy::Eager);
    assert_eq!(
        catalog.startup_policy(&key("lazy")),
        StartupPolicy::LazyWhenCached
    );
    assert_eq!(catalog.startup_policy(&key("eager")), StartupPolicy::Eager);
    assert!(catalog.tool_cache_enabled(&key("plain")));
    assert!(catalog.tool_cache_enabled(&key("lazy")));
    assert!(!catalog.tool_cache_enabled(&key("eager")));
    assert!(!catalog.tool_cache_enabled(&key("absent")));
}

#[test]
fn the_catalog_wide_policy_applies_unless_a_server_sets_its_own() {
    let catalog = catalog(&format!("mcp_startup = \"lazy_when_cached\"\n{SERVERS}"));
    assert_eq!(
        catalog.startup_policy(&key("plain")),
        StartupPolicy::LazyWhenCached
    );
    assert_eq!(
        catalog.startup_policy(&key("lazy")),
        StartupPolicy::LazyWhenCached
    );
    assert_eq!(catalog.startup_policy(&key("eager")), StartupPolicy::Eager);
    assert_eq!(
        catalog.startup_policy(&key("absent")),
        StartupPolicy::LazyWhenCached
    );
}

#[test]
fn a_later_file_without_mcp_startup_keeps_the_earlier_value() {
    let global = Config::from_toml_str("mcp_startup = \"lazy_when_cached\"\n", "g.toml").unwrap();
    assert_eq!(
        global.config().startup_policy(),
        Some(StartupPolicy::LazyWhenCached)
    );
    let project = Config::from_toml_str("[mcp_servers.p]\ncommand = \"p\"\n", "p.toml").unwrap();
    let catalog = CatalogBuilder::new()
        .with_user_config(global)
        .with_user_config(project)
        .build();
    assert_eq!(
        catalog.startup_policy(&key("p")),
        StartupPolicy::LazyWhenCached
    );
    let overridden = catalog
        .to_builder()
        .with_startup_policy(StartupPolicy::Eager)
        .build();
    assert_eq!(overridden.startup_policy(&key("p")), StartupPolicy::Eager);
}

#[test]
fn builders_set_both_fields() {
    let server = ServerConfig::stdio("x")
        .with_startup_policy(StartupPolicy::LazyWhenCached)
        .with_tool_cache(false);
    assert_eq!(server.startup_policy(), Some(StartupPolicy::LazyWhenCached));
    assert!(!server.tool_cache());
    let config = Config::new().with_startup_policy(StartupPolicy::LazyWhenCached);
    assert_eq!(config.startup_policy(), Some(StartupPolicy::LazyWhenCached));
    assert_eq!(StartupPolicy::LazyWhenCached.as_str(), "lazy_when_cached");
    assert_eq!(StartupPolicy::Eager.to_string(), "eager");
}

#[test]
fn an_unknown_server_policy_names_server_field_value_and_choices() {
    let text = "[mcp_servers.files]\ncommand = \"npx\"\nstartup = \"lazy\"\n";
    let errors = Config::from_toml_str(text, "c.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    let error = &errors.errors()[0];
    assert_eq!(error.kind(), ConfigErrorKind::InvalidValue);
    assert_eq!(
        error.to_string(),
        "c.toml:3:11: server `files`: field `startup`: unknown startup policy `lazy` \
         (use one of `eager`, `lazy_when_cached`)"
    );
}

#[test]
fn an_unknown_catalog_policy_fails_the_text() {
    let errors = Config::from_toml_str("mcp_startup = \"later\"\n", "c.toml").unwrap_err();
    assert_eq!(
        errors.to_string(),
        "c.toml:1:15: field `mcp_startup`: unknown startup policy `later` \
         (use one of `eager`, `lazy_when_cached`)"
    );
}

#[test]
fn wrong_types_are_errors() {
    let text = "[mcp_servers.files]\ncommand = \"npx\"\nstartup = 1\ntool_cache = \"no\"\n";
    let errors = Config::from_toml_str(text, "c.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    let kinds: Vec<_> = errors.errors().iter().map(|e| e.kind()).collect();
    assert_eq!(
        kinds,
        [ConfigErrorKind::WrongType, ConfigErrorKind::WrongType]
    );
}

#[test]
fn protocol_choices_parse_with_the_server_value_winning() {
    let catalog = catalog(
        "mcp_protocol = \"2025-11-25\"\n[mcp_servers.a]\ncommand = \"a\"\n\
         [mcp_servers.b]\ncommand = \"b\"\nprotocol = \"2026-07-28\"\n\
         [mcp_servers.c]\ncommand = \"c\"\nprotocol = \"auto\"\n",
    );
    assert_eq!(
        catalog.protocol(&key("a")),
        mcp_catalog::ProtocolChoice::V2025_11_25
    );
    assert_eq!(
        catalog.protocol(&key("b")),
        mcp_catalog::ProtocolChoice::V2026_07_28
    );
    assert_eq!(
        catalog.protocol(&key("c")),
        mcp_catalog::ProtocolChoice::Auto
    );
    assert_eq!(
        self::catalog("[mcp_servers.d]\ncommand = \"d\"\n").protocol(&key("d")),
        mcp_catalog::ProtocolChoice::Auto
    );
}

#[test]
fn an_unknown_protocol_names_server_field_value_and_choices() {
    let text = "[mcp_servers.files]\ncommand = \"npx\"\nprotocol = \"2024\"\n";
    let errors = Config::from_toml_str(text, "c.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    assert_eq!(
        errors.errors()[0].to_string(),
        "c.toml:3:12: server `files`: field `protocol`: unknown protocol `2024` \
         (use one of `auto`, `2026-07-28`, `2025-11-25`)"
    );
}

#[test]
fn tool_drift_policies_parse_with_the_server_value_winning() {
    use mcp_catalog::ToolDriftPolicy;
    let catalog = catalog(
        "tool_drift = \"block\"\n[mcp_servers.a]\ncommand = \"a\"\n\
         [mcp_servers.b]\ncommand = \"b\"\ntool_drift = \"notice\"\n\
         [mcp_servers.c]\ncommand = \"c\"\ntool_drift = \"reapprove\"\n",
    );
    assert_eq!(catalog.tool_drift(&key("a")), ToolDriftPolicy::Block);
    assert_eq!(catalog.tool_drift(&key("b")), ToolDriftPolicy::Notice);
    assert_eq!(catalog.tool_drift(&key("c")), ToolDriftPolicy::Reapprove);
    assert_eq!(
        self::catalog("[mcp_servers.d]\ncommand = \"d\"\n").tool_drift(&key("d")),
        ToolDriftPolicy::Reapprove,
        "the default holds back only the changes that add risk"
    );
}

#[test]
fn an_unknown_tool_drift_policy_names_server_field_value_and_choices() {
    let text = "[mcp_servers.files]\ncommand = \"npx\"\ntool_drift = \"ignore\"\n";
    let errors = Config::from_toml_str(text, "c.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    assert_eq!(
        errors.errors()[0].to_string(),
        "c.toml:3:14: server `files`: field `tool_drift`: unknown tool drift policy `ignore` \
         (use one of `notice`, `reapprove`, `block`)"
    );
}

#[test]
fn exported_toml_keeps_startup_protocol_cache_and_drift_settings() {
    let text = "mcp_startup = \"lazy_when_cached\"\nmcp_protocol = \"2025-11-25\"\n\
                tool_drift = \"block\"\n[mcp_servers.a]\ncommand = \"a\"\n\
                startup = \"eager\"\nprotocol = \"auto\"\ntool_drift = \"notice\"\n\
                tool_cache = false\n";
    let loaded = Config::from_toml_str(text, "c.toml").unwrap();
    let written = mcp_catalog::export_toml(std::slice::from_ref(&loaded));
    let again = Config::from_toml_str(&written, "again.toml").unwrap();
    assert_eq!(again.config(), loaded.config(), "{written}");
}

#[test]
fn tool_exposure_parses_layers_and_exports() {
    use mcp_catalog::ToolExposure;
    assert_eq!(
        catalog("[mcp_servers.a]\ncommand = \"a\"\n").tool_exposure(),
        ToolExposure::All,
        "every tool is listed unless the configuration says otherwise"
    );
    let user = Config::from_toml_str("tool_exposure = \"search\"\n", "user.toml").unwrap();
    let project = Config::from_toml_str("[mcp_servers.a]\ncommand = \"a\"\n", "p.toml").unwrap();
    let exported = mcp_catalog::export_toml(&[user.clone(), project.clone()]);
    let catalog = CatalogBuilder::new()
        .with_user_config(user)
        .with_user_config(project)
        .build();
    assert_eq!(
        catalog.tool_exposure(),
        ToolExposure::Search,
        "a later file that does not write the key keeps the earlier value"
    );
    assert!(
        exported.contains("tool_exposure = \"search\""),
        "the export keeps the key: {exported}"
    );
}

#[test]
fn an_unknown_tool_exposure_names_field_value_and_choices() {
    let errors = Config::from_toml_str("tool_exposure = \"some\"\n", "c.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    assert_eq!(
        errors.errors()[0].to_string(),
        "c.toml:1:17: field `tool_exposure`: unknown tool exposure `some` (use one of `all`, \
         `search`)"
    );
}

#[test]
fn log_level_is_none_unless_written() {
    use mcp_catalog::LogLevel;
    assert_eq!(ServerConfig::stdio("x").log_level(), None);
    assert_eq!(Config::new().log_level(), None);
    assert_eq!(
        catalog("[mcp_servers.a]\ncommand = \"a\"\n").log_level(&key("a")),
        None,
        "with neither value written nothing is sent: the server keeps its own level"
    );
    assert_eq!(
        ServerConfig::stdio("x")
            .with_log_level(Some(LogLevel::Error))
            .log_level(),
        Some(LogLevel::Error)
    );
}

#[test]
fn log_level_of_the_server_wins_over_the_catalog_wide_one() {
    use mcp_catalog::LogLevel;
    let catalog = catalog(
        "log_level = \"info\"\n[mcp_servers.a]\ncommand = \"a\"\n\
         [mcp_servers.b]\ncommand = \"b\"\nlog_level = \"warning\"\n\
         [mcp_servers.c]\ncommand = \"c\"\nlog_level = \"debug\"\n",
    );
    assert_eq!(catalog.log_level(&key("a")), Some(LogLevel::Info));
    assert_eq!(catalog.log_level(&key("b")), Some(LogLevel::Warning));
    assert_eq!(catalog.log_level(&key("c")), Some(LogLevel::Debug));
    assert_eq!(
        catalog.log_level(&key("absent")),
        Some(LogLevel::Info),
        "a key that is not active gets the catalog-wide value"
    );
}

#[test]
fn log_level_layers_across_files_and_from_code() {
    use mcp_catalog::LogLevel;
    let user = Config::from_toml_str(
        "log_level = \"notice\"\n[mcp_servers.a]\ncommand = \"a\"\nlog_level = \"error\"\n",
        "user.toml",
    )
    .unwrap();
    let silent = Config::from_toml_str("[mcp_servers.b]\ncommand = \"b\"\n", "p.toml").unwrap();
    let layered = CatalogBuilder::new()
        .with_user_config(user.clone())
        .with_user_config(silent.clone())
        .build();
    assert_eq!(
        (layered.log_level(&key("a")), layered.log_level(&key("b"))),
        (Some(LogLevel::Error), Some(LogLevel::Notice)),
        "a later file that does not write the key keeps the earlier value"
    );

    let project = Config::from_toml_str(
        "log_level = \"critical\"\n[mcp_servers.a]\ncommand = \"a2\"\n",
        "project.toml",
    )
    .unwrap();
    let layered = CatalogBuilder::new()
        .with_user_config(user)
        .with_user_config(silent)
        .with_user_config(project)
        .build();
    assert_eq!(
        (layered.log_level(&key("a")), layered.log_level(&key("b"))),
        (Some(LogLevel::Critical), Some(LogLevel::Critical)),
        "the later file's catalog-wide value wins, and its entry for `a` (without a \
         level) replaces the earlier one"
    );

    let in_code = Config::new()
        .with_log_level(Some(LogLevel::Alert))
        .with_server(
            ServerName::new("c").unwrap(),
            ServerConfig::stdio("c").with_log_level(Some(LogLevel::Emergency)),
        )
        .with_server(ServerName::new("d").unwrap(), ServerConfig::stdio("d"));
    assert_eq!(in_code.log_level(), Some(LogLevel::Alert));
    let catalog = CatalogBuilder::new()
        .with_user_config(LoadedConfig::new("code", in_code))
        .build();
    assert_eq!(catalog.log_level(&key("c")), Some(LogLevel::Emergency));
    assert_eq!(catalog.log_level(&key("d")), Some(LogLevel::Alert));
}

#[test]
fn exported_toml_keeps_log_levels() {
    let text = "log_level = \"info\"\n[mcp_servers.a]\ncommand = \"a\"\n\
                log_level = \"warning\"\n[mcp_servers.b]\ncommand = \"b\"\n";
    let loaded = Config::from_toml_str(text, "c.toml").unwrap();
    let written = mcp_catalog::export_toml(std::slice::from_ref(&loaded));
    assert!(
        written.contains("log_level = \"info\"\n") && written.contains("log_level = \"warning\"\n"),
        "{written}"
    );
    let again = Config::from_toml_str(&written, "again.toml").unwrap();
    assert_eq!(again.config(), loaded.config(), "{written}");
}

#[test]
fn an_unknown_log_level_names_file_position_field_value_and_choices() {
    let text = "[mcp_servers.files]\ncommand = \"npx\"\nlog_level = \"warn\"\n";
    let errors = Config::from_toml_str(text, "c.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    assert_eq!(
        errors.errors()[0].to_string(),
        "c.toml:3:13: server `files`: field `log_level`: unknown log level `warn` (use one of \
         `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`)"
    );
    assert_eq!(errors.errors()[0].kind(), ConfigErrorKind::InvalidValue);

    let errors = Config::from_toml_str("log_level = \"DEBUG\"\n", "c.toml").unwrap_err();
    assert_eq!(
        errors.errors()[0].to_string(),
        "c.toml:1:13: field `log_level`: unknown log level `DEBUG` (use one of `debug`, \
         `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`)"
    );
}
