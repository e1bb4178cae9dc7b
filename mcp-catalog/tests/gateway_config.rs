//! The `[gateway]` table: what a team writes reads back as written, and every mistake is
//! an error naming the field and what to write instead.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{
    CatalogBuilder, Config, GatewayConfig, GatewayGrant, GatewayLimits, GatewayOAuth,
    Introspection, TokenValidation,
};
use pretty_assertions::assert_eq;

fn gateway(text: &str) -> GatewayConfig {
    let loaded = Config::from_toml_str(text, "mcp.toml").unwrap();
    CatalogBuilder::new()
        .with_user_config(loaded)
        .build()
        .gateway()
        .cloned()
        .unwrap()
}

/// Every error of `text`, one line each: `line:column field: message (hint)`.
fn errors(text: &str) -> Vec<String> {
    let errors = Config::from_toml_str(text, "mcp.toml").unwrap_err();
    errors
        .errors()
        .iter()
        .map(|e| {
            format!(
                "{}:{} {}: {} ({})",
                e.location().line().unwrap_or_default(),
                e.location().column().unwrap_or_default(),
                e.field().unwrap_or_default(),
                e.message(),
                e.hint().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn a_team_configuration_reads_back_as_written() {
    let text = r#"
[gateway.oauth]
issuer = "https://idp.example.com/realms/team"
resource = "https://mcp.example.com/mcp"
scopes = ["mcp"]
groups_claim = "roles"
algorithms = ["ES256"]

[gateway.limits]
clients_per_principal = 4
calls_per_principal = 8

[[gateway.grants]]
groups = ["platform"]
servers = ["*"]
accept_drift = true

[[gateway.grants]]
subjects = ["alice"]
servers = ["notes"]
tools = ["echo", "read_*"]
"#;
    let expected = GatewayConfig::new()
        .with_oauth(
            GatewayOAuth::new("https://idp.example.com/realms/team")
                .with_resource("https://mcp.example.com/mcp")
                .with_scopes(["mcp"])
                .with_groups_claim("roles")
                .with_algorithms(["ES256"]),
        )
        .with_limits(
            GatewayLimits::new()
                .with_clients_per_principal(4)
                .with_calls_per_principal(8),
        )
        .with_grant(
            GatewayGrant::new(["*"])
                .with_groups(["platform"])
                .with_accept_drift(true),
        )
        .with_grant(
            GatewayGrant::new(["notes"])
                .with_subjects(["alice"])
                .with_tools(["echo", "read_*"]),
        );
    assert_eq!(gateway(text), expected);
    assert_eq!(expected.oauth().unwrap().groups_claim(), "roles");
    let accepts: Vec<bool> = expected
        .grants()
        .iter()
        .map(|g| g.accepts_drift())
        .collect();
    assert_eq!(accepts, [true, false], "off unless written");
}

#[test]
fn introspection_reads_its_client_and_the_variable_of_its_secret() {
    let text = r#"
[gateway.oauth]
issuer = "https://idp.example.com"
validation = "introspection"
introspection_endpoint = "https://idp.example.com/introspect"
client_id = "gateway"
client_secret_env = "GATEWAY_SECRET"
"#;
    let oauth = gateway(text).oauth().cloned().unwrap();
    assert_eq!(
        oauth.validation(),
        &TokenValidation::Introspection(
            Introspection::new("gateway", "GATEWAY_SECRET")
                .with_endpoint("https://idp.example.com/introspect")
        )
    );
    assert_eq!(oauth.groups_claim(), "groups", "the default claim");
}

#[test]
fn a_later_file_replaces_the_table_whole() {
    let first = Config::from_toml_str(
        "[gateway.oauth]\nissuer = \"https://a.example\"\n[[gateway.grants]]\nsubjects = [\"*\"]\nservers = [\"*\"]\n",
        "global.toml",
    )
    .unwrap();
    let second =
        Config::from_toml_str("[gateway.limits]\ncalls_per_principal = 2\n", "mcp.toml").unwrap();
    let none = Config::from_toml_str("tool_exposure = \"all\"\n", "other.toml").unwrap();
    let catalog = CatalogBuilder::new()
        .with_user_config(first)
        .with_user_config(second)
        .with_user_config(none)
        .build();
    let gateway = catalog.gateway().unwrap();
    assert_eq!(gateway.oauth(), None);
    assert!(gateway.grants().is_empty());
    assert_eq!(gateway.limits().calls_per_principal(), Some(2));
}

#[test]
fn mistakes_are_errors_naming_the_field_and_the_fix() {
    let text = r#"
[gateway.oauth]
resource = "mcp.example.com"
algorithms = ["RS256", "none", "HS256"]
client_id = "gateway"

[gateway.limits]
calls_per_principal = 0
clients_per_principal = "many"

[[gateway.grants]]
servers = ["notes"]

[[gateway.grants]]
groups = ["platform"]
"#;
    assert_eq!(
        errors(text),
        [
            "2:1 gateway.oauth.issuer: `[gateway.oauth]` has no `issuer` (set `issuer` to the authorization server's issuer URL (its metadata's `issuer`))",
            "3:12 gateway.oauth.resource: `mcp.example.com` must be an absolute URL starting with http:// or https:// (write the whole URL, e.g. `https://idp.example.com`)",
            "4:14 gateway.oauth.algorithms: `none` is not an accepted token signature algorithm (use asymmetric ones: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA (never `none` or a shared-secret HS*))",
            "4:14 gateway.oauth.algorithms: `HS256` is not an accepted token signature algorithm (use asymmetric ones: RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, EdDSA (never `none` or a shared-secret HS*))",
            "5:13 gateway.oauth.client_id: `client_id` is for `validation = \"introspection\"` only (remove it, or set `validation = \"introspection\"`)",
            "8:23 gateway.limits.calls_per_principal: must be at least 1 (remove it for the default)",
            "9:25 gateway.limits.clients_per_principal: expected a whole number, found a string (write it as `gateway.limits.clients_per_principal = 8`)",
            "11:1 gateway.grants[0]: grant #1 is for nobody (add `subjects`, `groups` or `scopes` (`subjects = [\"*\"]` for everyone with a valid token))",
            "14:1 gateway.grants[1].servers: grant #2 names no `servers` (add `servers = [\"name\", ...]` (`[\"*\"]` for every server))",
        ]
    );
}

#[test]
fn introspection_without_its_client_and_an_unknown_mode_are_errors() {
    let text =
        "[gateway.oauth]\nissuer = \"https://idp.example.com\"\nvalidation = \"introspection\"\n";
    assert_eq!(
        errors(text),
        [
            "1:1 gateway.oauth.validation: token introspection needs the gateway's `client_id` and `client_secret_env` (set both: the gateway authenticates to the introspection endpoint as that client)"
        ]
    );
    let text = "[gateway.oauth]\nissuer = \"https://idp.example.com\"\nvalidation = \"opaque\"\n";
    assert_eq!(
        errors(text),
        [
            "3:14 gateway.oauth.validation: unknown token validation `opaque` (use one of `jwt`, `introspection`)"
        ]
    );
}

#[test]
fn the_public_url_reads_back_and_must_be_a_whole_url() {
    let gateway = gateway("[gateway]\npublic_url = \"https://mcp.example.com/gw\"\n");
    assert_eq!(gateway.public_url(), Some("https://mcp.example.com/gw"));
    assert_eq!(
        gateway,
        GatewayConfig::new().with_public_url("https://mcp.example.com/gw")
    );
    assert_eq!(
        errors("[gateway]\npublic_url = \"mcp.example.com\"\n"),
        [
            "2:14 gateway.public_url: `mcp.example.com` must be an absolute URL starting with http:// or https:// (write the whole URL, e.g. `https://idp.example.com`)"
        ]
    );
    assert_eq!(GatewayConfig::new().public_url(), None);
}
