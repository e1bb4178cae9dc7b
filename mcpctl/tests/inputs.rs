//! VS Code `${input:id}` values: asked on a terminal (a real pseudo-terminal, through
//! util-linux `script`), else read from `MCP_INPUT_<ID>`, else the server using it fails
//! alone with reason `config` and the variable to set.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

mod support;

use serde_json::json;
use support::Workdir;

/// A VS Code file: `keyed` gets its scenario through a password input, `plain` needs none.
fn vscode_file(wd: &Workdir) {
    let scenario = json!({"tools": [{"name": "ping"}]}).to_string();
    let text = format!(
        r#"{{
  // As VS Code documents it: inputs, then servers using them.
  "inputs": [
    {{"type": "promptString", "id": "scenario", "description": "Scenario of the keyed server", "password": true}}
  ],
  "servers": {{
    "keyed": {{"command": "{{MCPCTL}}", "args": ["fake-server", "--scenario-json", "${{input:scenario}}"]}},
    "plain": {{"command": "{{MCPCTL}}", "args": ["fake-server", "--scenario-json", {plain}]}}
  }}
}}"#,
        plain = serde_json::to_string(&scenario).unwrap()
    );
    std::fs::create_dir_all(wd.path().join(".vscode")).unwrap();
    wd.write(".vscode/mcp.json", &text);
}

#[test]
fn an_input_is_asked_on_the_terminal_and_used() {
    let wd = Workdir::new();
    vscode_file(&wd);
    let scenario = json!({"tools": [{"name": "secret_tool"}]}).to_string();
    let run = wd.run_on_terminal(
        &["--config", ".vscode/mcp.json", "tools"],
        &format!("{scenario}\n"),
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "Scenario of the keyed server (input `scenario`, or set MCP_INPUT_SCENARIO):"
        ),
        "{}",
        run.stdout
    );
    // The answer reached the server: it lists the tool the typed scenario names.
    assert!(run.stdout.contains("secret_tool"), "{}", run.stdout);
    assert!(run.stdout.contains("ping"), "{}", run.stdout);
}

#[test]
fn without_a_terminal_the_environment_answers_or_only_that_server_fails() {
    let mut wd = Workdir::new();
    vscode_file(&wd);
    let run = wd.run(&["--config", ".vscode/mcp.json", "--json", "status"]);
    let servers = run.json()["servers"].clone();
    let state = |name: &str| {
        servers
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(state("plain")["state"], "ready", "{servers:#}");
    let keyed = state("keyed");
    assert_eq!(keyed["state"], "failed", "{keyed:#}");
    assert_eq!(keyed["reason"]["kind"], "config", "{keyed:#}");
    let error = keyed["error"].as_str().unwrap();
    assert!(error.contains("MCP_INPUT_SCENARIO"), "{error}");
    assert!(error.contains(".vscode/mcp.json:"), "{error}");

    let scenario = json!({"tools": [{"name": "from_env"}]}).to_string();
    wd.set_env("MCP_INPUT_SCENARIO", Some(&scenario));
    let run = wd.run(&["--config", ".vscode/mcp.json", "tools"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("from_env"), "{}", run.stdout);
}
