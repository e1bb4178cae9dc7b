//! One server installed in two environments, `local` and `devbox`, where devbox is a real
//! OpenSSH sshd on 127.0.0.1 (mcp-testkit's `SshdFixture`): through `mcpctl` and through
//! `mcpctl serve` (with the Python `mcp` SDK as the client), calls and resources reach the
//! environment they name, and approvals are asked and remembered per environment.
//!
//! Needs sshd (skipped with a line on stderr without it; a failure under
//! `MCP_REQUIRE_SSHD=1`) and, for the gateway half, the clients `scripts/gateway-clients.sh`
//! installs (a failure under `MCP_REQUIRE_GATEWAY_CLIENTS=1`).

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the gateway's client)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    reason = "tests; the skip notice goes to stderr"
)]

mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use mcp_testkit::SshdFixture;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{MCPCTL, Workdir, toml_str};

/// The fake server's request log, shared by both installations (one machine).
fn log_path(wd: &Workdir) -> PathBuf {
    wd.path().join("github-requests.jsonl")
}

/// A trusted project configuration: the plugin `github` (a fake server with `whereami`,
/// which runs unasked, `guarded`, which always asks, and `file:///marker`, which reads
/// `ENV_MARKER`) in `local` and in `devbox`, where every tool asks (the environment's
/// default wins over the server's) and `ENV_MARKER=devbox`.
fn write_config(wd: &Workdir, sshd: &SshdFixture) {
    let scenario = json!({
        "tools": [
            {"name": "whereami", "behavior": {"kind": "report_env"}},
            {"name": "guarded", "behavior": {"kind": "echo"}},
        ],
        "resources": [{"uri": "file:///marker", "name": "marker", "text_from_env": "ENV_MARKER"}],
        "record": {"request_log": log_path(wd)},
    });
    std::fs::create_dir(wd.path().join("plugin")).unwrap();
    wd.write(
        "plugin/mcp.toml",
        &format!(
            "[mcp_servers.github]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n\n[mcp_servers.github.tools.guarded]\napproval_mode = \"prompt\"\n",
            toml_str(&scenario.to_string())
        ),
    );
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "multi_environment = true\n\n[environments.devbox]\nssh = {{ host = \"127.0.0.1\", port = {}, user = {}, identity_file = {}, known_hosts = {}, options = [\"-F\", \"/dev/null\"] }}\nenv = {{ ENV_MARKER = \"devbox\" }}\ndefault_tools_approval_mode = \"prompt\"\n\n[[plugins]]\npath = \"plugin\"\nenvironments = [\"local\", \"devbox\"]\n",
            sshd.port(),
            toml_str(sshd.user()),
            toml_str(&sshd.identity_file().display().to_string()),
            toml_str(&sshd.known_hosts().display().to_string()),
        ),
    );
}

/// `whereami`'s report ran in devbox: the environment's variable and sshd's session.
fn assert_devbox(report: &Value, sshd: &SshdFixture) {
    let env = &report["env"];
    assert_eq!(env["ENV_MARKER"], json!("devbox"), "{report}");
    let connection = env["SSH_CONNECTION"].as_str().unwrap_or_default();
    assert!(
        connection.ends_with(&format!(" {}", sshd.port())),
        "not through the fixture's sshd: {report}"
    );
}

/// `whereami`'s report ran locally: neither the environment's variable nor the fixture's
/// sshd.
fn assert_local(report: &Value, sshd: &SshdFixture) {
    let env = &report["env"];
    assert!(env.get("ENV_MARKER").is_none(), "{report}");
    let connection = env["SSH_CONNECTION"].as_str().unwrap_or_default();
    assert!(
        !connection.ends_with(&format!(" {}", sshd.port())),
        "{report}"
    );
}

#[test]
fn the_same_server_in_local_and_over_ssh_through_mcpctl() {
    let Some(sshd) = SshdFixture::start_or_skip("the_same_server_in_local_and_over_ssh") else {
        return;
    };
    let wd = Workdir::new();
    write_config(&wd, &sshd);

    let run = wd.run(&["tools", "--json"]);
    assert_eq!(run.code, 0, "{}\nsshd log:\n{}", run.stderr, sshd.log());
    let listed = run.stdout;
    for name in [
        "mcp__github__devbox__guarded",
        "mcp__github__devbox__whereami",
        "mcp__github__local__guarded",
        "mcp__github__local__whereami",
    ] {
        assert!(listed.contains(name), "{name} missing from {listed}");
    }

    // Calls by qualified name and by --server name@env run in their environment.
    let run = wd.run(&["call", "--yes", "--json", "mcp__github__devbox__whereami"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_devbox(&run.json()["structuredContent"], &sshd);
    let run = wd.run(&[
        "call",
        "--yes",
        "--json",
        "--server",
        "github@local",
        "whereami",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_local(&run.json()["structuredContent"], &sshd);

    // Resources: listed once per environment, read from the one named.
    let run = wd.run(&["resources", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let resources = run.json()["resources"].clone();
    assert_eq!(resources.as_array().map(Vec::len), Some(2), "{resources}");
    for (key, text) in [("github@devbox", "devbox"), ("github@local", "")] {
        let run = wd.run(&["read", "--json", key, "file:///marker"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.json()["contents"][0]["text"],
            json!(text),
            "{key}: {}",
            run.stdout
        );
    }
    wd.assert_no_server_left();
}

/// The installed gateway clients, or `None` (skipped) without them.
fn clients() -> Option<PathBuf> {
    support::gateway_clients(&[("py_env_client.py", include_str!("gateway/py_env_client.py"))])
}

#[test]
fn the_same_server_in_local_and_over_ssh_through_the_gateway() {
    let Some(sshd) = SshdFixture::start_or_skip("the_same_server_through_the_gateway") else {
        return;
    };
    let Some(clients) = clients() else { return };
    let wd = Workdir::new();
    write_config(&wd, &sshd);
    let output = Command::new(clients.join("venv/bin/python"))
        .arg(clients.join("py_env_client.py"))
        .args(["stdio", MCPCTL, r#"["serve"]"#])
        .current_dir(wd.path())
        .env("MCPCTL_HOME", wd.path().join("home"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run the client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "client failed ({}):\nstdout: {stdout}\nstderr: {stderr}\nsshd log:\n{}",
        output.status,
        sshd.log()
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON ({e}):\n{stdout}\n{stderr}"));

    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        tools,
        [
            "mcp__github__devbox__guarded",
            "mcp__github__devbox__whereami",
            "mcp__github__local__guarded",
            "mcp__github__local__whereami",
        ],
        "{report}"
    );
    // local's whereami is not asked (the server default); devbox's is (its environment's
    // default), and runs on the other side of sshd.
    assert_eq!(report["questions_after_local"], json!(0), "{report}");
    assert_local(&report["local_whereami"]["structuredContent"], &sshd);
    assert_devbox(&report["devbox_whereami"]["structuredContent"], &sshd);
    // devbox's guarded: asked once, approved and remembered; local's guarded is another
    // server's tool: asked again, refused, and never reached the server.
    assert_ne!(report["devbox_guarded"]["isError"], json!(true), "{report}");
    assert_ne!(
        report["devbox_guarded_again"]["isError"],
        json!(true),
        "{report}"
    );
    assert_eq!(report["local_guarded"]["isError"], json!(true), "{report}");
    let questions: Vec<&str> = report["questions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(questions.len(), 3, "{report}");
    for (question, (tool, server)) in questions.iter().zip([
        ("whereami", "github@devbox"),
        ("guarded", "github@devbox"),
        ("guarded", "github@local"),
    ]) {
        assert!(
            question.starts_with(&format!(
                "Allow the tool \"{tool}\" of MCP server \"{server}\""
            )),
            "{question}"
        );
    }
    let log = std::fs::read_to_string(log_path(&wd)).unwrap();
    let calls: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"tools/call\""))
        .collect();
    assert!(calls.iter().any(|c| c.contains("\"two\"")), "{log}");
    assert!(
        !calls.iter().any(|c| c.contains("\"three\"")),
        "the refused call reached the server: {log}"
    );

    // The URI both list is shown once per server, each read from its own environment; the
    // bare URI is refused, naming both servers.
    assert_eq!(
        report["resources"],
        json!([
            "mcpctl-server://github@devbox/file:///marker",
            "mcpctl-server://github@local/file:///marker",
        ]),
        "{report}"
    );
    for (uri, text) in [
        ("mcpctl-server://github@devbox/file:///marker", "devbox"),
        ("mcpctl-server://github@local/file:///marker", ""),
    ] {
        let contents = &report["reads"][uri][0];
        assert_eq!(contents["text"], json!(text), "{report}");
        assert_eq!(contents["uri"], json!(uri), "{report}");
    }
    let bare = report["bare_read"].as_str().unwrap_or_default();
    assert!(
        bare.contains("github@devbox") && bare.contains("github@local"),
        "{report}"
    );
    wd.assert_no_server_left();
}
