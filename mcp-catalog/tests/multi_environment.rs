//! One server name in `local` and two other environments.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{
    CatalogBuilder, Config, EnvironmentConfig, ResolvedCatalog, ServerConfig, Source,
};
use mcp_key::{EnvironmentId, McpServerKey, ServerName};
use pretty_assertions::assert_eq;

const CONFIG: &str = r#"
[environments.devbox]
wrapper = ["ssh", "devbox", "--"]
[environments.container]
wrapper = ["docker", "exec", "-i", "c1"]
default_tools_approval_mode = "prompt"
elicitation = "decline"

[mcp_servers.git]
command = "git-mcp"
"#;

fn name() -> ServerName {
    ServerName::new("git").unwrap()
}

fn env(id: &str) -> EnvironmentId {
    EnvironmentId::new(id).unwrap()
}

/// `git` unscoped (user config, local) plus `git@devbox` and `git@container` from a plugin
/// installed in both environments.
fn catalog(multi_environment: bool) -> ResolvedCatalog {
    let loaded = Config::from_toml_str(CONFIG, "config.toml").unwrap();
    let mut builder = CatalogBuilder::new()
        .with_user_config(loaded)
        .with_multi_environment(multi_environment);
    for id in ["devbox", "container"] {
        builder.register(
            Source::discovered_plugin("git-plugin"),
            McpServerKey::in_environment(env(id), name()),
            ServerConfig::stdio("git-mcp"),
        );
    }
    builder.build()
}

fn strings<'a>(keys: impl Iterator<Item = &'a McpServerKey>) -> Vec<String> {
    keys.map(ToString::to_string).collect()
}

#[test]
fn off_exposes_only_the_legacy_winner() {
    let catalog = catalog(false);
    assert!(!catalog.multi_environment());
    assert_eq!(
        strings(catalog.iter().map(|(k, _)| k)),
        ["git", "git@container", "git@devbox"]
    );
    assert_eq!(strings(catalog.exposed_keys()), ["git"]);
    assert_eq!(strings(catalog.exposed().map(|(k, _)| k)), ["git"]);
    let unscoped = McpServerKey::unscoped(name());
    assert_eq!(catalog.resolve_server_name(&name()), Some(&unscoped));
    assert_eq!(catalog.legacy_server_name(&unscoped), Some(&name()));
    let devbox = McpServerKey::in_environment(env("devbox"), name());
    assert_eq!(catalog.legacy_server_name(&devbox), None);
    assert!(!catalog.is_exposed(&devbox));
}

#[test]
fn on_exposes_every_key_and_keeps_the_legacy_winner() {
    let catalog = catalog(true);
    assert!(catalog.multi_environment());
    assert_eq!(
        strings(catalog.exposed_keys()),
        ["git", "git@container", "git@devbox"]
    );
    assert_eq!(
        catalog.resolve_server_name(&name()),
        Some(&McpServerKey::unscoped(name()))
    );
    let devbox = McpServerKey::in_environment(env("devbox"), name());
    let server = catalog.get(&devbox).unwrap();
    assert_eq!(server.environment(), &env("devbox"));
    let wrapper = catalog.environment(server.environment()).unwrap().wrapper();
    assert_eq!(wrapper, ["ssh", "devbox", "--"]);
}

#[test]
fn legacy_winner_without_an_unscoped_key() {
    let plugin = Source::discovered_plugin("p");
    let build = |ids: &[&str]| {
        let mut builder = CatalogBuilder::new()
            .with_environment(env("devbox"), EnvironmentConfig::new())
            .with_environment(env("container"), EnvironmentConfig::new());
        for id in ids {
            let key = McpServerKey::in_environment(env(id), name());
            builder.register(plugin.clone(), key, ServerConfig::stdio("x"));
        }
        builder.build()
    };
    // The `local`-scoped key wins over other environments.
    let catalog = build(&["devbox", "local", "container"]);
    let local = McpServerKey::in_environment(EnvironmentId::LOCAL, name());
    assert_eq!(catalog.resolve_server_name(&name()), Some(&local));
    assert_eq!(strings(catalog.exposed_keys()), ["git@local"]);
    // Otherwise the smallest environment id wins, whatever the registration order.
    let a = build(&["devbox", "container"]);
    let b = build(&["container", "devbox"]);
    let container = McpServerKey::in_environment(env("container"), name());
    assert_eq!(a.resolve_server_name(&name()), Some(&container));
    assert_eq!(b.resolve_server_name(&name()), Some(&container));
    assert_eq!(a.legacy_server_name(&container), Some(&name()));
}

#[test]
fn user_config_scopes_servers_outside_local() {
    let text = "[environments.devbox]\n[mcp_servers.a]\ncommand = \"a\"\nenvironment = \"devbox\"\n\
                [mcp_servers.b]\ncommand = \"b\"\nenvironment = \"local\"\n";
    let loaded = Config::from_toml_str(text, "config.toml").unwrap();
    let catalog = CatalogBuilder::new().with_user_config(loaded).build();
    assert_eq!(strings(catalog.iter().map(|(k, _)| k)), ["a@devbox", "b"]);
    // With multi_environment off, a name that only exists in one environment is still
    // reachable by its bare name.
    assert_eq!(strings(catalog.exposed_keys()), ["a@devbox", "b"]);
}

#[test]
fn undeclared_environment_is_a_warning() {
    let mut builder = CatalogBuilder::new();
    builder.register(
        Source::runtime("ext"),
        McpServerKey::in_environment(env("mars"), name()),
        ServerConfig::stdio("x"),
    );
    let catalog = builder.build();
    let warnings: Vec<String> = catalog.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "ext: server `git`: environment `mars` of `git@mars` is not declared; its stdio servers \
          run without a wrapper"
        ]
    );
}

#[test]
fn environment_policies_apply_to_their_servers() {
    use mcp_catalog::{ApprovalMode, ElicitationPolicy};
    let catalog = catalog(true);
    let container = McpServerKey::in_environment(env("container"), name());
    let devbox = McpServerKey::in_environment(env("devbox"), name());
    let local = McpServerKey::unscoped(name());
    assert_eq!(
        catalog.approval_mode(&container, "push"),
        Some(ApprovalMode::Prompt)
    );
    assert_eq!(
        catalog.approval_mode(&devbox, "push"),
        Some(ApprovalMode::Auto)
    );
    assert_eq!(
        catalog.approval_mode(&local, "push"),
        Some(ApprovalMode::Auto)
    );
    assert_eq!(
        catalog.elicitation_policy(&container),
        Some(ElicitationPolicy::Decline)
    );
    assert_eq!(
        catalog.elicitation_policy(&devbox),
        Some(ElicitationPolicy::Ask)
    );
    assert_eq!(
        catalog.elicitation_policy(&local),
        Some(ElicitationPolicy::Ask)
    );
}
