//! Configuration files: discovery, errors with line and column, coding-agent files,
//! filtered tools, servers that fail to start.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]

mod support;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{Workdir, scenario_arg};

const BAD: &str = r#"[mcp_servers.remote]
url = "ftp://example.com/mcp"

[mcp_servers.local]
command = "server"
startup_timeout_sec = -1
"#;

#[test]
fn an_invalid_config_shows_every_error_with_line_and_column() {
    let wd = Workdir::new();
    wd.write("bad.toml", BAD);
    // Each broken entry fails only its server (reason `config`, located); neither is
    // required, so status itself succeeds.
    let run = wd.run(&["status", "--config", "bad.toml"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("invalid_config_status", run.snapshot_sorted_stderr());
    // The check fails on any error.
    let run = wd.run(&["config", "check", "--config", "bad.toml"]);
    assert_eq!(run.code, 2);
    assert_snapshot!("invalid_config_check", run.snapshot());
    let run = wd.run(&["config", "check", "--config", "bad.toml", "--json"]);
    assert_eq!(run.code, 2);
    assert_snapshot!("invalid_config_check_json", run.stdout);
}

#[test]
fn an_invalid_mcp_json_is_located_too() {
    let wd = Workdir::new();
    wd.write(
        ".mcp.json",
        "{\n  \"mcpServers\": {\n    \"x\": {\"command\": 42}\n  }\n}\n",
    );
    let run = wd.run(&["config", "check"]);
    assert_eq!(run.code, 2);
    assert_snapshot!(run.snapshot());
}

/// The user file (`$XDG_CONFIG_HOME/mcpctl/mcp.toml`, where `mcpctl add --scope user`
/// writes) is read in any folder without trust, below the project file: a project server
/// of the same name wins, the user's other servers stay; `--config` alone ignores it.
#[test]
fn the_user_file_is_read_below_the_project_file() {
    let wd = Workdir::new();
    let server = |tool: &str| {
        let scenario = support::toml_str(&json!({"tools": [{"name": tool}]}).to_string());
        format!(
            "command = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {scenario}]\n"
        )
    };
    std::fs::create_dir_all(wd.path().join("config/mcpctl")).unwrap();
    wd.write(
        "config/mcpctl/mcp.toml",
        &format!(
            "[mcp_servers.mine]\n{}\n[mcp_servers.shared]\n{}",
            server("from_user"),
            server("user_shared")
        ),
    );
    let tools = |run: &support::Run| -> Vec<String> {
        assert_eq!(run.code, 0, "{}", run.stderr);
        let json = run.json();
        let mut names: Vec<String> = json
            .as_array()
            .unwrap_or_else(|| panic!("{json}"))
            .iter()
            .map(|t| t["qualified_name"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    // No project file: the user file alone, no demo, no trust asked.
    let run = wd.run(&["tools", "--json"]);
    assert!(!run.stderr.contains("embedded demo"), "{}", run.stderr);
    assert_eq!(
        tools(&run),
        ["mcp__mine__from_user", "mcp__shared__user_shared"]
    );
    // A trusted project file wins per server; the user's own server stays.
    wd.write_trusted(
        "mcp.toml",
        &format!("[mcp_servers.shared]\n{}", server("project_shared")),
    );
    let run = wd.run(&["tools", "--json"]);
    assert_eq!(
        tools(&run),
        ["mcp__mine__from_user", "mcp__shared__project_shared"]
    );
    // --config FILE is the one file used.
    let run = wd.run(&["tools", "--json", "--config", "mcp.toml"]);
    assert_eq!(tools(&run), ["mcp__shared__project_shared"]);
    wd.assert_no_server_left();
}

/// One broken entry (an unknown transport) and one invalid entry among working ones: the
/// working servers start and answer; status shows the broken ones failed with their
/// positions.
#[test]
fn broken_entries_fail_only_their_servers() {
    let wd = Workdir::new();
    let scenario = support::toml_str(&json!({"tools": [{"name": "echo"}]}).to_string());
    wd.write_trusted(
        ".mcp.json",
        &format!(
            r#"{{
  "mcpServers": {{
    "alpha": {{"command": "{{MCPCTL}}", "args": ["fake-server", "--scenario-json", {scenario}]}},
    "socket": {{"type": "websocket", "url": "wss://example.com/ws"}},
    "beta": {{"command": "{{MCPCTL}}", "args": ["fake-server", "--scenario-json", {scenario}]}},
    "typo": {{"command": ["not", "a", "string"]}}
  }}
}}
"#
        ),
    );
    let run = wd.run(&["status", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let servers = run.json()["servers"].clone();
    let states: Vec<(String, String)> = servers
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["server"].as_str().unwrap().to_owned(),
                s["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("alpha".to_owned(), "ready".to_owned()),
            ("beta".to_owned(), "ready".to_owned()),
            ("socket".to_owned(), "failed".to_owned()),
            ("typo".to_owned(), "failed".to_owned()),
        ]
    );
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("broken_entries_status", run.snapshot_sorted_stderr());
    let run = wd.run(&["call", "--yes", "mcp__beta__echo", r#"{"text": "hi"}"#]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = wd.run(&["config", "check"]);
    assert_eq!(run.code, 2);
    assert_snapshot!("broken_entries_check", run.snapshot());
}

/// A VS Code `.vscode/mcp.json` (comments, `servers`, an `${input:...}` answered from
/// `MCP_INPUT_<ID>`) and a Gemini CLI `settings.json` (`includeTools`, a legacy SSE `url`)
/// given with `--config` start their servers.
#[test]
fn other_clients_files_start_their_servers() {
    let mut wd = Workdir::new();
    wd.set_env("MCP_INPUT_NOTES_KEY", Some("k-123"));
    let scenario = json!({
        "tools": [{"name": "env", "behavior": {"kind": "report_env"}}, {"name": "drop_table"}]
    });
    let scenario = support::toml_str(&scenario.to_string());
    std::fs::create_dir_all(wd.path().join(".vscode")).unwrap();
    wd.write(
        ".vscode/mcp.json",
        &format!(
            r#"{{
  // VS Code asks for inputs; mcpctl reads MCP_INPUT_<ID>.
  "inputs": [{{"type": "promptString", "id": "notes-key", "password": true}}],
  "servers": {{
    "notes": {{
      "type": "stdio",
      "command": "{{MCPCTL}}",
      "args": ["fake-server", "--scenario-json", {scenario}],
      "env": {{"NOTES_KEY": "${{input:notes-key}}"}},
    }},
  }},
}}
"#
        ),
    );
    let run = wd.run(&[
        "call",
        "--yes",
        "--config",
        ".vscode/mcp.json",
        "mcp__notes__env",
        "{}",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("k-123"), "{}", run.stdout);
    let run = wd.run(&["config", "check", "--config", ".vscode/mcp.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_snapshot!("vscode_config_check", run.snapshot());

    std::fs::create_dir_all(wd.path().join(".gemini")).unwrap();
    wd.write(
        ".gemini/settings.json",
        &format!(
            r#"{{
  "theme": "GitHub",
  "mcpServers": {{
    "notes": {{
      "command": "{{MCPCTL}}",
      "args": ["fake-server", "--scenario-json", {scenario}],
      "env": {{"NOTES_KEY": "$MCP_INPUT_NOTES_KEY"}},
      "includeTools": ["env"],
      "timeout": 20000
    }},
    "events": {{"url": "http://localhost:9/sse"}}
  }}
}}
"#
        ),
    );
    let run = wd.run(&["tools", "--config", ".gemini/settings.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("mcp__notes__env"), "{}", run.stdout);
    assert!(!run.stdout.contains("drop_table"), "{}", run.stdout);
    let run = wd.run(&[
        "call",
        "--yes",
        "--config",
        ".gemini/settings.json",
        "mcp__notes__env",
        "{}",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("k-123"), "{}", run.stdout);
    let run = wd.run(&["status", "--config", ".gemini/settings.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_snapshot!("gemini_status", run.snapshot_sorted_stderr());

    // Goose: `env_keys` copies the host's variable into the server's environment.
    wd.set_env("NOTES_KEY", Some("k-goose"));
    let scenario_yaml = serde_json::to_string(
        &json!({
            "tools": [{"name": "env", "behavior": {"kind": "report_env"}}]
        })
        .to_string(),
    )
    .unwrap();
    wd.write(
        "config.yaml",
        &format!(
            "GOOSE_PROVIDER: anthropic\nextensions:\n  developer:\n    type: builtin\n    enabled: true\n  notes:\n    type: stdio\n    cmd: \"{{MCPCTL}}\"\n    args: [fake-server, --scenario-json, {scenario_yaml}]\n    env_keys: [NOTES_KEY]\n    timeout: 300\n"
        ),
    );
    let run = wd.run(&[
        "call",
        "--yes",
        "--config",
        "config.yaml",
        "mcp__notes__env",
        "{}",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("k-goose"), "{}", run.stdout);
}

#[test]
fn a_missing_config_file_is_one_error_with_a_hint() {
    let wd = Workdir::new();
    let run = wd.run(&["tools", "--config", "nowhere.toml"]);
    assert_eq!(run.code, 2);
    assert_snapshot!(run.snapshot());
}

fn notes_server(extra: &str) -> String {
    let scenario = json!({
        "tools": [
            {"name": "echo"},
            {"name": "drop_table", "behavior": {"kind": "error", "message": "never"}}
        ]
    });
    format!(
        "[mcp_servers.notes]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n{extra}\n",
        scenario_arg(&scenario)
    )
}

#[test]
fn a_coding_agent_config_works_and_unknown_keys_are_warnings() {
    let wd = Workdir::new();
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "model = \"o3\"\napproval_policy = \"never\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n\n{}",
            notes_server("")
        ),
    );
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("agent_config_status", run.snapshot());
    let run = wd.run(&["config", "check"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("agent_config_check", run.snapshot());
}

#[test]
fn a_filtered_tool_is_not_listed_and_cannot_be_called() {
    let wd = Workdir::new();
    wd.write_trusted(
        "mcp.toml",
        &notes_server("disabled_tools = [\"drop_table\"]"),
    );
    let run = wd.run(&["tools"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("filtered_tools", run.snapshot());
    let run = wd.run(&["call", "--yes", "--server", "notes", "drop_table"]);
    assert_eq!(run.code, 2);
    assert_snapshot!("filtered_call", run.snapshot());
    let run = wd.run(&["call", "--yes", "mcp__notes__drop_table"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.lines().next(),
        Some(
            "error: tool `drop_table` of MCP server `notes` is disabled by the server's tool filter (enabled_tools / disabled_tools)"
        )
    );
}

#[test]
fn a_required_server_that_is_not_installed_fails_status_with_exit_1() {
    let wd = Workdir::new();
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "{}\n[mcp_servers.missing]\ncommand = \"mcpctl-test-no-such-program\"\nrequired = true\n",
            notes_server("")
        ),
    );
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 1);
    assert_snapshot!("not_installed_status", run.snapshot_sorted_stderr());
    let run = wd.run(&["status", "--json"]);
    assert_eq!(run.code, 1);
    let servers = run.json()["servers"].clone();
    assert_eq!(servers[0]["server"], json!("missing"));
    assert_eq!(servers[0]["reason"], json!({"kind": "spawn_failed"}));
    assert_eq!(servers[1]["state"], json!("ready"));
}

#[test]
fn a_server_that_exits_at_startup_shows_its_stderr() {
    let wd = Workdir::new();
    let scenario =
        json!({"faults": {"exit_at_startup": 7, "stderr": "fatal: no database at ./db"}});
    wd.write_trusted(
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{"db": {{"command": "{{MCPCTL}}", "args": ["fake-server", "--scenario-json", {}]}}}}}}"#,
            support::toml_str(&scenario.to_string())
        ),
    );
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 0, "not required");
    assert_snapshot!("exits_at_startup_status", run.snapshot_sorted_stderr());
    let run = wd.run(&["tools"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("exits_at_startup_tools", run.snapshot());
}

#[test]
fn an_empty_config_has_no_servers() {
    let wd = Workdir::new();
    wd.write_trusted("mcp.toml", "# nothing yet\n");
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 0);
    assert_snapshot!(run.snapshot());
}

#[test]
fn ctrl_c_during_a_call_shuts_the_servers_down_and_exits_130() {
    let wd = Workdir::new();
    let pid_file = wd.path().join("server.pid");
    let scenario = json!({
        "tools": [{"name": "wait", "behavior": {"kind": "sleep", "ms": 60000}}],
        "record": {"pid_file": pid_file},
    });
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "[mcp_servers.slow]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n",
            scenario_arg(&scenario)
        ),
    );
    let child = wd.spawn(&["call", "--yes", "mcp__slow__wait"]);
    // The server writes its pid when it starts; then interrupt mcpctl.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let server_pid = loop {
        if let Some(pid) = mcp_testkit::read_pid_file(&pid_file) {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert_eq!(
        wd.clean(&String::from_utf8_lossy(&output.stderr)),
        "error: interrupted; servers were shut down\n"
    );
    assert!(
        !mcp_testkit::process_alive(server_pid),
        "the server outlived mcpctl"
    );
    wd.assert_no_server_left();
}

#[test]
fn commands_about_one_server_do_not_wait_for_others_still_starting() {
    let wd = Workdir::new();
    let hung = json!({"faults": {"hang_initialize": true}});
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "{}\n[mcp_servers.stuck]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\nstartup_timeout_sec = 600\n",
            notes_server(""),
            scenario_arg(&hung)
        ),
    );
    let started = std::time::Instant::now();
    let run = wd.run(&["call", "--yes", "mcp__notes__echo", r#"{"n": 1}"#]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "{\n  \"n\": 1\n}\n");
    let run = wd.run(&["tools", "--server", "notes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("mcp__notes__echo"), "{}", run.stdout);
    let run = wd.run(&["resources", "--server", "notes", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["resources"], json!([]));
    // Waiting for `stuck` would take its 600 s startup timeout (three times).
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn a_plugin_in_two_environments_is_grouped_and_callable_by_environment() {
    let wd = Workdir::new();
    let wrapper = wd.write(
        "wrap.sh",
        "#!/bin/sh\nENV_MARKER=\"$1\"\nexport ENV_MARKER\nshift\nexec \"$@\"\n",
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::create_dir(wd.path().join("plugin")).unwrap();
    let scenario = json!({"tools": [{"name": "whereami", "behavior": {"kind": "report_env"}}]});
    wd.write(
        "plugin/mcp.toml",
        &format!(
            "[mcp_servers.github]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n",
            scenario_arg(&scenario)
        ),
    );
    wd.write_trusted(
        "mcp.toml",
        "multi_environment = true\n\n[environments.devbox]\nwrapper = [\"./wrap.sh\", \"devbox\"]\n\n[[plugins]]\npath = \"plugin\"\nenvironments = [\"local\", \"devbox\"]\n",
    );
    let run = wd.run(&["tools"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_snapshot!("environments_tools", run.snapshot());
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_snapshot!("environments_status", run.snapshot_sorted_stderr());

    // By qualified name and by --server name@env, each call runs in its environment.
    let run = wd.run(&["call", "--yes", "--json", "mcp__github__devbox__whereami"]);
    assert_eq!(
        run.json()["structuredContent"]["env"]["ENV_MARKER"],
        json!("devbox")
    );
    let run = wd.run(&[
        "call",
        "--yes",
        "--json",
        "--server",
        "github@local",
        "whereami",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.json()["structuredContent"]["env"]
            .get("ENV_MARKER")
            .is_none()
    );
    // A bare name is ambiguous.
    let run = wd.run(&["call", "--yes", "--server", "github", "whereami"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("exists in several environments (github@devbox, github@local)"),
        "{}",
        run.stderr
    );
}

#[test]
fn duplicate_and_empty_tool_names_are_warnings_in_status() {
    let wd = Workdir::new();
    let scenario = json!({"tools": [{"name": "echo"}, {"name": ""}, {"name": "echo"}]});
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "[mcp_servers.sloppy]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n",
            scenario_arg(&scenario)
        ),
    );
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("duplicate_tools_status", run.stdout);
    let run = wd.run(&["status", "--json"]);
    assert_eq!(
        run.json()["servers"][0]["warnings"],
        json!([
            "MCP server `sloppy` lists a tool with an empty name; it is left out (the server must give every tool a name)",
            "MCP server `sloppy` lists tool `echo` 2 times; only the first is offered (the server must give each tool a unique name)",
        ])
    );
    assert_eq!(run.json()["servers"][0]["tools"], json!(1));
    let run = wd.run(&["tools", "--json"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.json().as_array().map(Vec::len),
        Some(1),
        "{}",
        run.stdout
    );
}
