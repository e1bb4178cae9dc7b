//! `upstream_identity` and `[mcp_servers.<name>.token_exchange]`: whose credentials a
//! gateway presents to an HTTP server. What a team writes reads back as written; every
//! mistake is an error naming the server, the field and what to write instead; the trust
//! review shows where callers' tokens go; the setting changes the connection fingerprint
//! and survives an export.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::collections::BTreeMap;

use mcp_catalog::{
    Config, CredentialsStore, HttpConfig, LoadedConfig, ServerConfig, TokenExchangeConfig,
    UpstreamIdentity, connection_fingerprint, export_toml, review_file,
};
use pretty_assertions::assert_eq;

fn load(text: &str) -> LoadedConfig {
    Config::from_toml_str(text, "mcp.toml").unwrap()
}

fn identity(text: &str, server: &str) -> UpstreamIdentity {
    let loaded = load(text);
    let server = &loaded.config().servers()[&server.parse().unwrap()];
    server
        .transport()
        .as_http()
        .unwrap()
        .upstream_identity()
        .clone()
}

/// Every error of `text`, one line each: `server field: message (hint)`.
fn errors(text: &str) -> Vec<String> {
    let errors = Config::from_toml_str(text, "mcp.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    errors
        .errors()
        .iter()
        .map(|e| {
            format!(
                "{} {}: {} ({})",
                e.server().map(|s| s.to_string()).unwrap_or_default(),
                e.field().unwrap_or_default(),
                e.message(),
                e.hint().unwrap_or_default()
            )
        })
        .collect()
}

const TEAM: &str = r#"
[mcp_servers.plain]
url = "https://plain.example.com/mcp"

[mcp_servers.shared]
url = "https://shared.example.com/mcp"
upstream_identity = "gateway"

[mcp_servers.github]
url = "https://mcp.github.example.com/mcp"
upstream_identity = "caller"

[mcp_servers.tickets]
url = "https://tickets.example.com/mcp"
upstream_identity = "exchange"

[mcp_servers.tickets.token_exchange]
token_endpoint = "https://idp.example.com/oauth2/token"
audience = "https://tickets.example.com"
resource = "https://tickets.example.com/mcp"
scope = "tickets:read"
client_id = "mcp-gateway"
client_secret_env = "GATEWAY_EXCHANGE_SECRET"
"#;

fn tickets_exchange() -> TokenExchangeConfig {
    TokenExchangeConfig::new("https://idp.example.com/oauth2/token")
        .with_audience("https://tickets.example.com")
        .with_resource("https://tickets.example.com/mcp")
        .with_scope("tickets:read")
        .with_client("mcp-gateway", Some("GATEWAY_EXCHANGE_SECRET".to_owned()))
}

#[test]
fn each_mode_reads_back_as_written_and_the_default_is_the_gateway() {
    assert_eq!(identity(TEAM, "plain"), UpstreamIdentity::Gateway);
    assert_eq!(identity(TEAM, "shared"), UpstreamIdentity::Gateway);
    assert_eq!(identity(TEAM, "github"), UpstreamIdentity::Caller);
    assert_eq!(
        identity(TEAM, "tickets"),
        UpstreamIdentity::Exchange(tickets_exchange())
    );
    assert!(!UpstreamIdentity::Gateway.is_per_caller());
    assert!(UpstreamIdentity::Caller.is_per_caller());
    assert_eq!(UpstreamIdentity::Caller.to_string(), "caller");
}

#[test]
fn plain_http_is_accepted_for_a_loopback_token_endpoint_only() {
    for host in ["127.0.0.1:8080", "localhost:9", "[::1]:9"] {
        let text = format!(
            "[mcp_servers.t]\nurl = \"https://t.example.com/mcp\"\nupstream_identity = \
             \"exchange\"\ntoken_exchange = {{ token_endpoint = \"http://{host}/token\", \
             audience = \"t\" }}\n"
        );
        let expected = TokenExchangeConfig::new(format!("http://{host}/token")).with_audience("t");
        assert_eq!(
            identity(&text, "t"),
            UpstreamIdentity::Exchange(expected),
            "{host}"
        );
    }
    let text = r#"
[mcp_servers.t]
url = "https://t.example.com/mcp"
upstream_identity = "exchange"
token_exchange = { token_endpoint = "http://idp.example.com/token", audience = "t" }
"#;
    assert_eq!(
        errors(text),
        [
            "t token_exchange.token_endpoint: `http://idp.example.com/token` sends callers' \
          tokens over plain http to a host that is not loopback (use the authorization \
          server's `https://` token endpoint (plain `http://` only to 127.0.0.1, ::1 or \
          localhost))"
        ]
    );
}

#[test]
fn every_mistake_names_the_server_the_field_and_what_to_write() {
    let cases: &[(&str, &str)] = &[
        (
            "[mcp_servers.s]\ncommand = \"srv\"\nupstream_identity = \"caller\"\n",
            "s upstream_identity: `upstream_identity` is not supported for stdio server `s` \
             (remove it, or replace `command` with `url` to make `s` a streamable HTTP server)",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"user\"\n",
            "h upstream_identity: unknown upstream identity `user` (use one of `gateway` (the \
             default), `caller`, `exchange`)",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"exchange\"\n",
            "h upstream_identity: `upstream_identity = \"exchange\"` needs a `token_exchange` \
             table (add `[mcp_servers.h.token_exchange]` with `token_endpoint` and `audience` \
             or `resource`)",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"caller\"\n\
             token_exchange = { token_endpoint = \"https://idp.example.com/token\", audience = \"h\" }\n",
            "h token_exchange: a `token_exchange` table is only read with `upstream_identity = \
             \"exchange\"` (set `upstream_identity = \"exchange\"` in `[mcp_servers.h]`, or \
             remove `[mcp_servers.h.token_exchange]`)",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"exchange\"\n\
             token_exchange = { audience = \"h\" }\n",
            "h token_exchange.token_endpoint: `token_exchange` has no `token_endpoint` (set \
             `token_endpoint` to the authorization server's token endpoint, e.g. \
             `https://idp.example.com/oauth2/token`)",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"exchange\"\n\
             token_exchange = { token_endpoint = \"https://idp.example.com/token\" }\n",
            "h token_exchange: `token_exchange` names neither an `audience` nor a `resource` \
             (set `audience` (the server's name at the authorization server) and/or \
             `resource` (its URL))",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"exchange\"\n\
             token_exchange = { token_endpoint = \"https://idp.example.com/token\", audience = \
             \"h\", client_secret_env = \"S\" }\n",
            "h token_exchange.client_secret_env: `client_secret_env` without `client_id` (set \
             `client_id` to the gateway's client at the token endpoint)",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"exchange\"\n\
             token_exchange = { token_endpoint = \"https://idp.example.com/token\", audience = \
             \"h\", client_id = \"g\", client_secret = \"hunter2\" }\n",
            "h token_exchange.client_secret: inline secrets are not accepted (put the secret \
             in an environment variable and set `client_secret_env = \"NAME\"`)",
        ),
        (
            "[mcp_servers.h]\nurl = \"https://h.example.com/mcp\"\nupstream_identity = \"exchange\"\n\
             token_exchange = { token_endpoint = \"not a url\", audience = \"h\" }\n",
            "h token_exchange.token_endpoint: `not a url` must be an absolute URL starting \
             with http:// or https:// (use the authorization server's `https://` token \
             endpoint (plain `http://` only to 127.0.0.1, ::1 or localhost))",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(errors(text), [*expected], "{text}");
    }
}

#[test]
fn an_unknown_key_of_the_exchange_table_is_refused() {
    let text = r#"
[mcp_servers.h]
url = "https://h.example.com/mcp"
upstream_identity = "exchange"

[mcp_servers.h.token_exchange]
token_endpoint = "https://idp.example.com/token"
audience = "h"
audiences = ["x"]
"#;
    assert_eq!(
        errors(text),
        [
            "h token_exchange.audiences: unknown key `audiences` in `token_exchange` (use only \
          token_endpoint, audience, resource, scope, client_id, client_secret_env)"
        ]
    );
}

#[test]
fn the_trust_review_shows_where_callers_tokens_go_and_the_secrets_variable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.toml");
    std::fs::write(&path, TEAM).unwrap();
    let (_, review) = review_file(&path).unwrap();
    let text = review.to_string();
    for line in [
        "authorizes: github: upstream_identity=caller",
        "authorizes: tickets: upstream_identity=exchange, \
         token_exchange.token_endpoint=https://idp.example.com/oauth2/token, \
         token_exchange.audience=https://tickets.example.com, \
         token_exchange.resource=https://tickets.example.com/mcp, \
         token_exchange.scope=tickets:read, token_exchange.client_id=mcp-gateway, \
         token_exchange.client_secret=$GATEWAY_EXCHANGE_SECRET",
        "reads variable: GATEWAY_EXCHANGE_SECRET",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in:\n{text}"
        );
    }
    assert!(
        !text.lines().any(|l| l.starts_with("authorizes: shared")),
        "the default is not shown:\n{text}"
    );
}

#[test]
fn the_identity_changes_the_connection_fingerprint_and_the_default_changes_nothing() {
    let env: BTreeMap<String, String> = BTreeMap::new();
    let fp = |http: HttpConfig| {
        connection_fingerprint(
            &ServerConfig::from(http),
            None,
            CredentialsStore::Auto,
            &env,
        )
    };
    let base = || HttpConfig::new("https://tickets.example.com/mcp");
    let gateway = fp(base());
    assert_eq!(
        fp(base().with_upstream_identity(UpstreamIdentity::Gateway)),
        gateway
    );
    let caller = fp(base().with_upstream_identity(UpstreamIdentity::Caller));
    let exchange =
        fp(base().with_upstream_identity(UpstreamIdentity::Exchange(tickets_exchange())));
    let other_audience = fp(base().with_upstream_identity(UpstreamIdentity::Exchange(
        tickets_exchange().with_audience("https://other.example.com"),
    )));
    assert_ne!(caller, gateway);
    assert_ne!(exchange, gateway);
    assert_ne!(exchange, caller);
    assert_ne!(other_audience, exchange);
}

#[test]
fn an_exported_catalog_keeps_the_identity() {
    let loaded = load(TEAM);
    let written = export_toml(std::slice::from_ref(&loaded));
    let back = load(&written);
    for name in ["plain", "shared", "github", "tickets"] {
        assert_eq!(
            identity(&written, name),
            identity(TEAM, name),
            "{name}\n{written}"
        );
    }
    assert_eq!(back.config().servers().len(), 4);
}
