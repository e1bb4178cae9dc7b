//! The `.mcp.json` form and `${VAR}` expansion.
#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

use std::collections::BTreeMap;

use mcp_catalog::{Config, ConfigErrorKind, EmptyEnv, LoadedConfig, Transport};
use mcp_key::ServerName;
use pretty_assertions::assert_eq;

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn maps_stdio_and_http_servers_with_expansion() {
    let text = r#"{
  "mcpServers": {
    "files": {
      "command": "npx",
      "args": ["-y", "server-fs", "${HOME}/src"],
      "env": {"TOKEN": "${FILES_TOKEN}", "LEVEL": "${LEVEL:-warn}"},
      "cwd": "${HOME}"
    },
    "tickets": {
      "type": "http",
      "url": "https://${HOST:-tickets.example.com}/mcp",
      "headers": {"Authorization": "Bearer ${TICKETS_TOKEN}"}
    },
    "other": {"type": "streamable-http", "url": "http://127.0.0.1:8080/mcp"},
    "implicit": {"url": "https://implicit.example.com/mcp"}
  }
}"#;
    let lookup = env(&[
        ("HOME", "/home/me"),
        ("FILES_TOKEN", "f"),
        ("TICKETS_TOKEN", "t"),
    ]);
    let loaded = Config::from_mcp_json_str(text, ".mcp.json", &lookup).unwrap();
    assert_eq!(loaded.warnings(), &[]);
    let servers = loaded.config().servers();
    assert_eq!(servers.len(), 4);

    let files = &servers[&ServerName::new("files").unwrap()];
    let Transport::Stdio(stdio) = files.transport() else {
        panic!("stdio expected")
    };
    assert_eq!(stdio.command(), "npx");
    assert_eq!(stdio.args(), ["-y", "server-fs", "/home/me/src"]);
    assert_eq!(stdio.env(), &env(&[("TOKEN", "f"), ("LEVEL", "warn")]));
    assert_eq!(stdio.cwd().and_then(|p| p.to_str()), Some("/home/me"));

    let tickets = &servers[&ServerName::new("tickets").unwrap()];
    let http = tickets.transport().as_http().unwrap();
    assert_eq!(http.url(), "https://tickets.example.com/mcp");
    assert_eq!(http.http_headers(), &env(&[("Authorization", "Bearer t")]));
    for name in ["other", "implicit"] {
        let server = &servers[&ServerName::new(name).unwrap()];
        assert!(server.transport().as_http().is_some(), "{name}");
    }
}

#[test]
fn closures_work_as_lookups() {
    let text = r#"{"mcpServers": {"a": {"command": "${CMD}"}}}"#;
    let lookup = |name: &str| (name == "CMD").then(|| "run-me".to_owned());
    let loaded = Config::from_mcp_json_str(text, ".mcp.json", &lookup).unwrap();
    let a = &loaded.config().servers()[&ServerName::new("a").unwrap()];
    assert_eq!(a.transport().as_stdio().unwrap().command(), "run-me");
}

#[test]
fn undefined_variable_names_server_field_and_variable() {
    let text = "{\n  \"mcpServers\": {\n    \"tickets\": {\n      \"url\": \"https://x/mcp\",\n      \
                \"headers\": {\"Authorization\": \"Bearer ${TICKETS_TOKEN}\"}\n    }\n  }\n}\n";
    let errors = Config::from_mcp_json_str(text, ".mcp.json", &EmptyEnv)
        .and_then(LoadedConfig::into_strict)
        .unwrap_err();
    assert_eq!(errors.len(), 1);
    let error = &errors.errors()[0];
    assert_eq!(error.kind(), ConfigErrorKind::UndefinedVariable);
    assert_eq!(error.server(), Some("tickets"));
    assert_eq!(error.field(), Some("headers.Authorization"));
    assert_eq!(error.location().line(), Some(5));
    assert!(error.message().contains("TICKETS_TOKEN"));
}

#[test]
fn invalid_json_configs_report_every_error() {
    let cases: &[(&str, &str)] = &[
        ("syntax", "{\"mcpServers\": {\"a\": {\"command\": \"x\",}}}"),
        ("not_an_object", "[1, 2]"),
        ("servers_not_an_object", "{\"mcpServers\": []}"),
        (
            "many",
            r#"{
  "mcpServers": {
    "bad name": {"command": "x"},
    "both": {"command": "x", "url": "https://x/mcp"},
    "neither": {"args": []},
    "sse": {"type": "sse"},
    "wrong": {"command": "x", "headers": {"A": "b"}},
    "types": {"command": 5, "args": "x", "env": {"A": 1}},
    "url": {"type": "http", "url": "ftp://x"},
    "missing": {"type": "http"},
    "stdio_url": {"type": "stdio", "url": "https://x/mcp"},
    "undefined": {"command": "${NOPE}", "args": ["${ALSO_NOPE:-ok}", "${"]}
  },
  "extra": true
}"#,
        ),
    ];
    let mut report = String::new();
    for (name, text) in cases {
        let errors = Config::from_mcp_json_str(text, ".mcp.json", &EmptyEnv)
            .and_then(LoadedConfig::into_strict)
            .unwrap_err();
        for error in &errors {
            assert!(error.location().line().is_some(), "{name}: {error}");
        }
        report.push_str(&format!("## {name}\n{errors}\n\n"));
    }
    insta::assert_snapshot!(report);
}

#[test]
fn unknown_json_keys_are_warnings() {
    let text = r#"{"mcpServers": {"a": {"command": "x", "disabled": true}}, "other": 1}"#;
    let loaded = Config::from_mcp_json_str(text, ".mcp.json", &EmptyEnv).unwrap();
    let warnings: Vec<String> = loaded.warnings().iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            ".mcp.json:1:39: server `a`: unknown key `disabled` ignored (check the spelling; it may \
             belong to a newer version)",
            ".mcp.json:1:59: unknown key `other` ignored (not an MCP setting; fine if another \
             program reads this file)",
        ]
    );
}

/// One unsupported and one invalid entry among working ones (a legacy SSE server among
/// them) fail only themselves, each with its errors located; the file loads.
#[test]
fn a_broken_entry_fails_only_its_server() {
    let text = r#"{
  "mcpServers": {
    "files": {"command": "files-server"},
    "legacy": {"type": "sse", "url": "https://example.com/sse"},
    "socket": {"type": "websocket", "url": "wss://example.com/ws"},
    "tickets": {"type": "http", "url": "https://example.com/mcp"},
    "typo": {"command": 5}
  }
}"#;
    let loaded = Config::from_mcp_json_str(text, ".mcp.json", &EmptyEnv).unwrap();
    let usable: Vec<&str> = loaded
        .config()
        .servers()
        .iter()
        .filter(|(_, s)| s.transport().as_unusable().is_none())
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(usable, ["files", "legacy", "tickets"]);
    let legacy = &loaded.config().servers()[&ServerName::new("legacy").unwrap()];
    assert!(legacy.transport().is_sse(), "{:?}", legacy.transport());
    assert_eq!(
        legacy.transport().as_http().unwrap().url(),
        "https://example.com/sse"
    );
    let unusable: Vec<String> = loaded
        .config()
        .unusable_servers()
        .map(|(name, u)| format!("{name}: {u}"))
        .collect();
    insta::assert_snapshot!(unusable.join("\n"));
    let strict = loaded.into_strict().unwrap_err();
    assert_eq!(strict.len(), 2, "{strict}");
}
