//! Invalid TOML configurations: every error at once, located and actionable.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use mcp_catalog::{Config, ConfigErrorKind, LoadedConfig};
use pretty_assertions::assert_eq;

/// (case name, TOML text, expected kinds in document order)
const CASES: &[(&str, &str, &[ConfigErrorKind])] = &[
    (
        "both_command_and_url",
        "[mcp_servers.a]\ncommand = \"a\"\nurl = \"https://x/mcp\"\n",
        &[ConfigErrorKind::ConflictingTransport],
    ),
    (
        "neither_command_nor_url",
        "[mcp_servers.a]\nargs = [\"x\"]\n",
        &[ConfigErrorKind::MissingTransport],
    ),
    (
        "http_field_on_stdio",
        "[mcp_servers.files]\ncommand = \"a\"\nhttp_headers = { X = \"y\" }\nscopes = [\"s\"]\n",
        &[
            ConfigErrorKind::WrongTransportField,
            ConfigErrorKind::WrongTransportField,
        ],
    ),
    (
        "stdio_field_on_http",
        "[mcp_servers.t]\nurl = \"https://x/mcp\"\nenv_vars = [\"A\"]\n",
        &[ConfigErrorKind::WrongTransportField],
    ),
    (
        "inline_bearer_token",
        "[mcp_servers.t]\nurl = \"https://x/mcp\"\nbearer_token = \"s3cret\"\n",
        &[ConfigErrorKind::InlineSecret],
    ),
    (
        "invalid_server_name",
        "[mcp_servers.\"my srv\"]\ncommand = \"a\"\n",
        &[ConfigErrorKind::InvalidServerName],
    ),
    (
        "unknown_environment",
        "[environments.devbox]\n[mcp_servers.a]\ncommand = \"a\"\nenvironment = \"prod\"\n",
        &[ConfigErrorKind::UnknownEnvironment],
    ),
    (
        "invalid_environment_id",
        "[environments.\"dev box\"]\nwrapper = []\n[environments.ok]\nelicitation = \"maybe\"\n",
        &[
            ConfigErrorKind::UnknownEnvironment,
            ConfigErrorKind::InvalidValue,
        ],
    ),
    (
        "zero_and_negative_timeouts",
        "[mcp_servers.a]\ncommand = \"a\"\nstartup_timeout_sec = 0\ntool_timeout_sec = -5\n",
        &[
            ConfigErrorKind::InvalidTimeout,
            ConfigErrorKind::InvalidTimeout,
        ],
    ),
    (
        "nan_and_huge_timeouts",
        "[mcp_servers.a]\ncommand = \"a\"\nstartup_timeout_sec = nan\ntool_timeout_sec = 1e300\n",
        &[
            ConfigErrorKind::InvalidTimeout,
            ConfigErrorKind::InvalidTimeout,
        ],
    ),
    (
        "unknown_approval_modes",
        "[mcp_servers.a]\ncommand = \"a\"\ndefault_tools_approval_mode = \"never\"\n\
         [mcp_servers.a.tools.w]\napproval_mode = \"ask\"\n",
        &[
            ConfigErrorKind::UnknownApprovalMode,
            ConfigErrorKind::UnknownApprovalMode,
        ],
    ),
    (
        "wrong_types",
        "tool_name_prefix = \"yes\"\n[mcp_servers.a]\ncommand = 1\nargs = \"x\"\nenv = { A = 1 }\n\
         required = \"no\"\nstartup_timeout_sec = \"30\"\n",
        &[
            ConfigErrorKind::WrongType,
            ConfigErrorKind::WrongType,
            ConfigErrorKind::WrongType,
            ConfigErrorKind::WrongType,
            ConfigErrorKind::WrongType,
            ConfigErrorKind::WrongType,
        ],
    ),
    (
        "bad_urls",
        "[mcp_servers.a]\nurl = \"ftp://x\"\noauth_resource = \"x\"\n[mcp_servers.b]\nurl = \"https://\"\n",
        &[
            ConfigErrorKind::InvalidUrl,
            ConfigErrorKind::InvalidUrl,
            ConfigErrorKind::InvalidUrl,
        ],
    ),
    (
        "auth_and_ema",
        "[mcp_servers.a]\nurl = \"https://x/mcp\"\nauth = \"ema\"\n\
         [mcp_servers.b]\nurl = \"https://x/mcp\"\nauth = \"basic\"\n\
         [mcp_servers.c]\nurl = \"https://x/mcp\"\nema = { issuer = \"https://idp\" }\n\
         [mcp_servers.d]\nurl = \"https://x/mcp\"\nauth = \"oauth\"\nema = { issuer = \"https://idp\", client_id = \"c\" }\n\
         [mcp_servers.e]\nurl = \"https://x/mcp\"\nauth = \"ema\"\nema = { issuer = \"idp\", client_id = \"c\" }\n",
        &[
            ConfigErrorKind::MissingField,
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::MissingField,
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::InvalidUrl,
        ],
    ),
    (
        "top_level_values",
        "credentials_store = \"vault\"\noauth_callback_port = 70000\nmulti_environment = 1\n",
        &[
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::WrongType,
        ],
    ),
    (
        "plugins",
        "[[plugins]]\nenvironments = [\"mars\"]\n",
        &[
            ConfigErrorKind::MissingField,
            ConfigErrorKind::UnknownEnvironment,
        ],
    ),
    (
        "sections_that_are_not_tables",
        "plugins = [1]\n[mcp_servers]\nfoo = 1\n[environments]\ndev = \"x\"\n",
        &[
            ConfigErrorKind::WrongType,
            ConfigErrorKind::WrongType,
            ConfigErrorKind::WrongType,
        ],
    ),
    (
        "syntax",
        "[mcp_servers.a\ncommand = \"a\"\n",
        &[ConfigErrorKind::Syntax],
    ),
    (
        "duplicate_key",
        "[mcp_servers.a]\ncommand = \"a\"\ncommand = \"b\"\n",
        &[ConfigErrorKind::Syntax],
    ),
    (
        "sse_transport_values",
        "[mcp_servers.a]\nurl = \"https://x/sse\"\ntransport = \"websocket\"\n\
         [mcp_servers.b]\nurl = \"https://x/sse\"\ntransport = \"sse\"\nprotocol = \"2026-07-28\"\n\
         [mcp_servers.c]\ncommand = \"c\"\ntransport = \"sse\"\n",
        &[
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::WrongTransportField,
        ],
    ),
    (
        "bad_headers_and_vars",
        "[mcp_servers.a]\nurl = \"https://x/mcp\"\nhttp_headers = { \"Bad Header\" = \"v\" }\n\
         env_http_headers = { X = \"A=B\" }\nbearer_token_env_var = \"\"\n",
        &[
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::InvalidValue,
            ConfigErrorKind::InvalidValue,
        ],
    ),
];

#[test]
fn invalid_configs_report_every_error() {
    let mut report = String::new();
    for (name, text, kinds) in CASES {
        let errors = Config::from_toml_str(text, "config.toml")
            .and_then(LoadedConfig::into_strict)
            .expect_err(&format!("case {name} must be rejected"));
        let actual: Vec<ConfigErrorKind> = errors.iter().map(|e| e.kind()).collect();
        assert_eq!(&actual, kinds, "case {name}: {errors}");
        for error in &errors {
            assert!(
                error.location().line().is_some(),
                "case {name}: {error} has no line"
            );
        }
        report.push_str(&format!("## {name}\n{errors}\n\n"));
    }
    insta::assert_snapshot!(report);
}

/// One configuration with an error in ten different places yields ten distinct messages.
#[test]
fn ten_errors_in_one_config() {
    let text = r#"
[environments.devbox]
wrapper = "ssh devbox"

[mcp_servers."bad name"]
command = "x"

[mcp_servers.files]
command = "npx"
http_headers = { "X-Team" = "platform" }
startup_timeout_sec = 0
default_tools_approval_mode = "sometimes"
environment = "staging"

[mcp_servers.tickets]
url = "tickets.example.com/mcp"
bearer_token = "hunter2"
tool_timeout_sec = -1

[mcp_servers.empty]
description = "no transport"
"#;
    let errors = Config::from_toml_str(text, "/etc/agent/config.toml")
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    assert_eq!(errors.len(), 10, "{errors}");
    let lines: std::collections::BTreeSet<String> =
        errors.iter().map(ToString::to_string).collect();
    assert_eq!(lines.len(), 10);
    insta::assert_snapshot!(errors.to_string());
}

#[test]
fn errors_expose_server_field_and_hint() {
    let errors = Config::from_toml_str(
        "[mcp_servers.files]\ncommand = \"npx\"\nhttp_headers = { X = \"y\" }\n",
        "c.toml",
    )
    .and_then(LoadedConfig::into_strict)
    .unwrap_err();
    let error = &errors.errors()[0];
    assert_eq!(error.server(), Some("files"));
    assert_eq!(error.field(), Some("http_headers"));
    assert_eq!(
        error.message(),
        "`http_headers` is not supported for stdio server `files`"
    );
    assert!(error.hint().is_some());
    assert_eq!(
        (error.location().line(), error.location().column()),
        (Some(3), Some(1))
    );
}

/// A broken entry keeps the settings that parsed: disabled stays disabled (nothing starts),
/// required stays required (its failure is the host's failure).
#[test]
fn a_broken_entry_keeps_enabled_and_required() {
    let text = "[mcp_servers.off]\ncommand = 1\nenabled = false\n\n\
                [mcp_servers.must]\nurl = \"ftp://x\"\nrequired = true\n\n\
                [mcp_servers.ok]\ncommand = \"server\"\n";
    let loaded = Config::from_toml_str(text, "c.toml").unwrap();
    let servers = loaded.config().servers();
    let get = |name: &str| &servers[&mcp_key::ServerName::new(name).unwrap()];
    assert!(get("off").transport().as_unusable().is_some());
    assert!(!get("off").enabled());
    assert!(get("must").transport().as_unusable().is_some());
    assert!(get("must").required());
    assert_eq!(
        get("ok").transport().as_stdio().unwrap().command(),
        "server"
    );
    let names: Vec<&str> = loaded
        .config()
        .unusable_servers()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["must", "off"]);
}
