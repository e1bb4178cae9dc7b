//! The exact text of every error message: what failed, where, and what to write instead.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers fail loudly on bad fixtures"
)]

use mcp_key::{EnvironmentId, KeyError, McpServerKey, ServerName};
use pretty_assertions::assert_eq;

fn server(s: &str) -> KeyError {
    ServerName::new(s).unwrap_err()
}

fn env(s: &str) -> KeyError {
    EnvironmentId::new(s).unwrap_err()
}

fn key(s: &str) -> KeyError {
    s.parse::<McpServerKey>().unwrap_err()
}

#[test]
fn messages() {
    let long = "x".repeat(65);
    let cases = [
        (
            server("my srv"),
            "invalid server name `my srv`: character ' ' at position 2 is not allowed \
             (use A-Z a-z 0-9 _ -)",
        ),
        (
            server(""),
            "invalid server name ``: it is empty (use 1 to 64 of A-Z a-z 0-9 _ -)",
        ),
        (
            server(&long),
            "invalid server name `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`: \
             it is 65 bytes long (use at most 64)",
        ),
        (
            server("tab\there"),
            "invalid server name `tab\\there`: character '\\t' at position 3 is not allowed \
             (use A-Z a-z 0-9 _ -)",
        ),
        (
            server("café"),
            "invalid server name `café`: character 'é' at position 3 is not allowed \
             (use A-Z a-z 0-9 _ -)",
        ),
        (
            env("dev/box"),
            "invalid environment id `dev/box`: character '/' at position 3 is not allowed \
             (use A-Z a-z 0-9 . _ -)",
        ),
        (
            env(""),
            "invalid environment id ``: it is empty (use 1 to 64 of A-Z a-z 0-9 . _ -)",
        ),
        (
            key("my srv@dev"),
            "invalid server key `my srv@dev`: server name: character ' ' at position 2 is not \
             allowed (use A-Z a-z 0-9 _ -); write `name` or `name@environment`",
        ),
        (
            key("srv@dev@box"),
            "invalid server key `srv@dev@box`: environment id: character '@' at position 7 is \
             not allowed (use A-Z a-z 0-9 . _ -); write `name` or `name@environment`",
        ),
        (
            key("srv@"),
            "invalid server key `srv@`: environment id: it is empty (use 1 to 64 of \
             A-Z a-z 0-9 . _ -); write `name` or `name@environment`",
        ),
    ];
    for (err, text) in cases {
        assert_eq!(err.to_string(), text);
    }
}

#[test]
fn very_long_values_are_cut_in_messages() {
    let err = server(&format!("{} ", "a".repeat(10_000)));
    let text = err.to_string();
    assert!(text.len() < 200, "{text}");
    assert!(text.contains("a…`"));
    assert!(text.contains("position 10000"));
    assert_eq!(err.value().len(), 10_001);
}
