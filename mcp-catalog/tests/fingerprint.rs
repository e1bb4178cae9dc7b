//! Connection fingerprints: what forces a reconnect and what does not.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_catalog::{
    ApprovalMode, AuthMode, CredentialsStore, EmaConfig, EnvironmentConfig, HttpConfig, LogLevel,
    OAuthConfig, ServerConfig, StartupPolicy, StdioConfig, ToolFilter, Transport,
    connection_fingerprint,
};
use mcp_key::{EnvironmentId, Fingerprint};

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn base_env() -> BTreeMap<String, String> {
    vars(&[
        ("FILES_TOKEN", "a"),
        ("TICKETS_TOKEN", "t1"),
        ("TENANT_ID", "acme"),
    ])
}

fn stdio() -> ServerConfig {
    ServerConfig::new(Transport::Stdio(
        StdioConfig::new("npx")
            .with_args(["-y", "fs"])
            .with_env("L", "warn")
            .with_env_var("FILES_TOKEN"),
    ))
}

fn http() -> ServerConfig {
    ServerConfig::new(Transport::StreamableHttp(
        HttpConfig::new("https://tickets.example.com/mcp")
            .with_bearer_token_env_var("TICKETS_TOKEN")
            .with_http_header("X-Team", "platform")
            .with_env_http_header("X-Tenant", "TENANT_ID")
            .with_oauth(OAuthConfig::new("registered")),
    ))
}

fn fp(server: &ServerConfig, env: &BTreeMap<String, String>) -> Fingerprint {
    connection_fingerprint(server, None, CredentialsStore::Auto, env)
}

#[test]
fn stable_for_equal_inputs() {
    assert_eq!(fp(&stdio(), &base_env()), fp(&stdio(), &base_env()));
    assert_eq!(fp(&http(), &base_env()), fp(&http(), &base_env()));
    assert_ne!(fp(&stdio(), &base_env()), fp(&http(), &base_env()));
}

#[test]
fn changes_that_require_a_new_connection_change_it() {
    let env = base_env();
    let base_stdio = fp(&stdio(), &env);
    let stdio_variants = [
        ServerConfig::stdio("node").with_args(["-y", "fs"]),
        stdio().with_args(["-y", "fs2"]),
        stdio().with_transport(Transport::Stdio(
            StdioConfig::new("npx").with_args(["-y", "fs"]),
        )),
        stdio().with_environment(EnvironmentId::new("devbox").unwrap()),
    ];
    for variant in &stdio_variants {
        assert_ne!(fp(variant, &env), base_stdio, "{variant:?}");
    }
    let with_cwd = ServerConfig::new(Transport::Stdio(
        StdioConfig::new("npx")
            .with_args(["-y", "fs"])
            .with_env("L", "warn")
            .with_env_var("FILES_TOKEN")
            .with_cwd("/srv"),
    ));
    assert_ne!(fp(&with_cwd, &env), base_stdio);
    let other_literal_env = ServerConfig::from(
        StdioConfig::new("npx")
            .with_args(["-y", "fs"])
            .with_env("L", "debug")
            .with_env_var("FILES_TOKEN"),
    );
    assert_ne!(fp(&other_literal_env, &env), base_stdio);
    let same = ServerConfig::from(
        StdioConfig::new("npx")
            .with_args(["-y", "fs"])
            .with_env("L", "warn")
            .with_env_var("FILES_TOKEN"),
    );
    assert_eq!(fp(&same, &env), base_stdio);

    // Current values of referenced variables: a rotated token forces a reconnect.
    let mut rotated = env.clone();
    rotated.insert("FILES_TOKEN".into(), "b".into());
    assert_ne!(fp(&stdio(), &rotated), base_stdio);
    let mut unset = env.clone();
    unset.remove("FILES_TOKEN");
    assert_ne!(fp(&stdio(), &unset), base_stdio);
    let mut empty = env.clone();
    empty.insert("FILES_TOKEN".into(), String::new());
    assert_ne!(fp(&stdio(), &empty), fp(&stdio(), &unset));

    let base_http = fp(&http(), &env);
    for var in ["TICKETS_TOKEN", "TENANT_ID"] {
        let mut rotated = env.clone();
        rotated.insert(var.into(), "rotated".into());
        assert_ne!(fp(&http(), &rotated), base_http, "{var}");
    }
    let http_variants = [
        ServerConfig::http("https://other.example.com/mcp"),
        http().with_transport(Transport::StreamableHttp(
            HttpConfig::new("https://tickets.example.com/mcp")
                .with_bearer_token_env_var("TICKETS_TOKEN")
                .with_http_header("X-Team", "other")
                .with_env_http_header("X-Tenant", "TENANT_ID")
                .with_oauth(OAuthConfig::new("registered")),
        )),
        http().with_transport(Transport::StreamableHttp(
            HttpConfig::new("https://tickets.example.com/mcp")
                .with_bearer_token_env_var("TICKETS_TOKEN")
                .with_http_header("X-Team", "platform")
                .with_env_http_header("X-Tenant", "TENANT_ID")
                .with_oauth(OAuthConfig::new("another-client")),
        )),
        http().with_transport(Transport::StreamableHttp(
            HttpConfig::new("https://tickets.example.com/mcp")
                .with_bearer_token_env_var("TICKETS_TOKEN")
                .with_http_header("X-Team", "platform")
                .with_env_http_header("X-Tenant", "TENANT_ID")
                .with_oauth(OAuthConfig::new("registered"))
                .with_auth(AuthMode::None),
        )),
        http().with_transport(Transport::StreamableHttp(
            HttpConfig::new("https://tickets.example.com/mcp")
                .with_bearer_token_env_var("TICKETS_TOKEN")
                .with_http_header("X-Team", "platform")
                .with_env_http_header("X-Tenant", "TENANT_ID")
                .with_oauth(OAuthConfig::new("registered"))
                .with_ema(EmaConfig::new("https://idp", "host")),
        )),
        // The same endpoint over the legacy SSE transport is another connection.
        http().with_transport(Transport::Sse(
            HttpConfig::new("https://tickets.example.com/mcp")
                .with_bearer_token_env_var("TICKETS_TOKEN")
                .with_http_header("X-Team", "platform")
                .with_env_http_header("X-Tenant", "TENANT_ID")
                .with_oauth(OAuthConfig::new("registered")),
        )),
    ];
    for variant in &http_variants {
        assert_ne!(fp(variant, &env), base_http, "{variant:?}");
    }

    // Environment wrapper and credential store.
    let devbox = EnvironmentConfig::new().with_wrapper(["ssh", "devbox", "--"]);
    let other = EnvironmentConfig::new().with_wrapper(["ssh", "other", "--"]);
    let server = stdio().with_environment(EnvironmentId::new("devbox").unwrap());
    let a = connection_fingerprint(&server, Some(&devbox), CredentialsStore::Auto, &env);
    let b = connection_fingerprint(&server, Some(&other), CredentialsStore::Auto, &env);
    let c = connection_fingerprint(&server, Some(&devbox), CredentialsStore::Keyring, &env);
    let d = connection_fingerprint(
        &server,
        Some(&devbox.clone().with_cwd("/w")),
        CredentialsStore::Auto,
        &env,
    );
    let e = connection_fingerprint(
        &server,
        Some(&devbox.clone().with_env("K", "v")),
        CredentialsStore::Auto,
        &env,
    );
    assert_ne!(a, b);
    assert_ne!(a, c);
    assert_ne!(a, d);
    assert_ne!(a, e);
}

#[test]
fn changes_that_do_not_need_a_reconnect_leave_it_alone() {
    let env = base_env();
    for base in [stdio(), http()] {
        let expected = fp(&base, &env);
        let variants = [
            base.clone()
                .with_tool_filter(ToolFilter::new().with_enabled_tools(["x"])),
            base.clone()
                .with_tool_filter(ToolFilter::new().with_disabled_tools(["y"])),
            base.clone().with_tool_timeout(Duration::from_secs(1)),
            base.clone().with_startup_timeout(Duration::from_secs(1)),
            base.clone()
                .with_default_approval_mode(ApprovalMode::Prompt),
            base.clone()
                .with_tool_approval_mode("t", ApprovalMode::Approve),
            base.clone().with_description("a description"),
            base.clone().with_required(true),
            base.clone().with_supports_parallel_tool_calls(true),
            base.clone()
                .with_startup_policy(StartupPolicy::LazyWhenCached),
            base.clone().with_startup_policy(StartupPolicy::Eager),
            base.clone().with_tool_cache(false),
            // A live connection sends a new level with `logging/setLevel`.
            base.clone().with_log_level(Some(LogLevel::Debug)),
        ];
        for variant in &variants {
            assert_eq!(fp(variant, &env), expected, "{variant:?}");
        }
        // Unrelated variables do not matter either.
        let mut more = env.clone();
        more.insert("UNRELATED".into(), "x".into());
        assert_eq!(fp(&base, &more), expected);
    }
}

#[test]
fn catalog_fingerprint_uses_the_environment_and_store() {
    let text = "credentials_store = \"file\"\n[environments.devbox]\nwrapper = [\"ssh\"]\n\
                [mcp_servers.a]\ncommand = \"a\"\nenvironment = \"devbox\"\nenv_vars = [\"V\"]\n";
    let loaded = mcp_catalog::Config::from_toml_str(text, "c.toml").unwrap();
    let catalog = mcp_catalog::CatalogBuilder::new()
        .with_user_config(loaded)
        .build();
    let (key, server) = catalog.iter().next().unwrap();
    let env = vars(&[("V", "1")]);
    let from_catalog = catalog.fingerprint(key, &env).unwrap();
    let devbox = catalog.environment(server.environment());
    let direct = connection_fingerprint(server, devbox, CredentialsStore::File, &env);
    assert_eq!(from_catalog, direct);
    assert_ne!(
        from_catalog,
        connection_fingerprint(server, None, CredentialsStore::File, &env)
    );
}

/// `startup`, `mcp_startup` and `tool_cache` decide when and whether a cached catalog is
/// used, never what connection is opened: a policy-only change keeps the fingerprint.
#[test]
fn startup_and_tool_cache_policies_keep_the_fingerprint() {
    let key = mcp_key::McpServerKey::unscoped(mcp_key::ServerName::new("files").unwrap());
    let catalog = |text: &str| {
        let loaded = mcp_catalog::Config::from_toml_str(text, "c.toml").unwrap();
        mcp_catalog::CatalogBuilder::new()
            .with_user_config(loaded)
            .build()
    };
    let base = "[mcp_servers.files]\ncommand = \"npx\"\n";
    let expected = catalog(base).fingerprint(&key, &base_env()).unwrap();
    for text in [
        format!("mcp_startup = \"lazy_when_cached\"\n{base}"),
        format!("{base}startup = \"lazy_when_cached\"\n"),
        format!("{base}startup = \"eager\"\ntool_cache = false\n"),
    ] {
        let changed = catalog(&text);
        assert_eq!(
            changed.fingerprint(&key, &base_env()).unwrap(),
            expected,
            "{text}"
        );
    }
}
