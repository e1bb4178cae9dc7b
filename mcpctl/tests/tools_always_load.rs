//! `mcpctl tools` marks the tools a server pins with `always_load` / `always_load_tools`
//! (listed beside the search tools in search mode), in the table and in `--json`; a bad
//! pin is a configuration error naming the server and the field.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::Workdir;

fn server(name: &str, tools: &[&str], pid_file: &std::path::Path, extra: &str) -> String {
    let tools: Vec<_> = tools
        .iter()
        .map(|t| json!({"name": t, "description": format!("The {t} tool.")}))
        .collect();
    let scenario = json!({"tools": tools, "record": {"pid_file": pid_file}});
    let scenario = support::toml_str(&scenario.to_string());
    format!(
        "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {scenario}]\n{extra}\n"
    )
}

#[test]
fn tools_marks_the_always_loaded_ones() {
    let wd = Workdir::new();
    let files_pid = wd.path().join("files.pid");
    let clock_pid = wd.path().join("clock.pid");
    let config = format!(
        "{}{}",
        server(
            "files",
            &["read_file", "write_file"],
            &files_pid,
            "always_load_tools = [\"read_file\"]"
        ),
        server("clock", &["now"], &clock_pid, "always_load = true"),
    );
    wd.write_trusted("mcp.toml", &config);

    let out = wd.run(&["tools"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = |name: &str| {
        out.stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} not listed: {}", out.stdout))
            .to_owned()
    };
    assert!(line("mcp__files__read_file").contains("(always loaded)"));
    assert!(line("mcp__clock__now").contains("(always loaded)"));
    assert!(!line("mcp__files__write_file").contains("(always loaded)"));
    assert!(out.stdout.contains("2 always loaded"), "{}", out.stdout);

    let json = wd.run(&["tools", "--json"]).json();
    let pinned: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["always_load"] == json!(true))
        .map(|t| t["qualified_name"].as_str().unwrap())
        .collect();
    assert_eq!(pinned, ["mcp__clock__now", "mcp__files__read_file"]);
    assert!(files_pid.exists() && clock_pid.exists(), "the servers ran");
    wd.assert_no_server_left();
}

#[test]
fn a_pin_the_filter_hides_is_an_error_naming_server_and_field() {
    let wd = Workdir::new();
    let pid_file = wd.path().join("files.pid");
    wd.write_trusted(
        "mcp.toml",
        &server(
            "files",
            &["read_file"],
            &pid_file,
            "disabled_tools = [\"read_file\"]\nalways_load_tools = [\"read_file\"]",
        ),
    );
    // The server is left out, and `mcpctl status` says why.
    let out = wd.run(&["tools"]);
    assert!(
        out.stderr.contains("`files` is not ready"),
        "{}",
        out.stderr
    );
    let status = wd.run(&["status"]);
    let text = format!("{}{}", status.stdout, status.stderr);
    assert!(text.contains("always_load_tools"), "{text}");
    assert!(
        text.contains("`read_file` is hidden by `enabled_tools` or `disabled_tools`"),
        "{text}"
    );
    assert!(!pid_file.exists(), "a server with a broken entry started");
    wd.assert_no_server_left();
}
