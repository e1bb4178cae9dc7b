//! Other clients' files: `--from CLIENT` finds them in the client's usual places (user
//! files under `$HOME`, project files in the working directory, project over user), project
//! files need trust, and `config import` writes an `mcp.toml` that loads back to the same
//! servers.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

mod support;

use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::Workdir;

/// Exit code of an untrusted project configuration.
const EXIT_UNTRUSTED: i32 = 4;

/// The client fixtures of mcp-catalog's tests.
const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../mcp-catalog/tests/fixtures/clients"
);

/// A working directory whose `$HOME` is `<dir>/user` (for the user's files of clients).
fn workdir() -> (Workdir, PathBuf) {
    let mut wd = Workdir::new();
    let home = wd.path().join("user");
    std::fs::create_dir_all(&home).unwrap();
    wd.set_env("HOME", Some(&home.display().to_string()));
    (wd, home)
}

/// Writes `text` to `path`, creating its folders; `{MCPCTL}` is replaced by the binary.
fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text.replace("{MCPCTL}", support::MCPCTL)).unwrap();
}

/// A stdio server entry of a JSON file: the fake server with these tools.
fn fake_json(tools: &[&str]) -> String {
    let scenario = json!({"tools": tools.iter().map(|t| json!({"name": t})).collect::<Vec<_>>()});
    format!(
        r#"{{"command": "{{MCPCTL}}", "args": ["fake-server", "--scenario-json", {}]}}"#,
        support::toml_str(&scenario.to_string())
    )
}

/// The `servers` of `config check --json` or `status --json`.
fn servers(run: &support::Run) -> Value {
    run.json()["servers"].clone()
}

/// `server` of each entry of `servers`.
fn names(servers: &Value) -> Vec<String> {
    servers
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"].as_str().unwrap().to_owned())
        .collect()
}

/// Each catalog fixture, placed where its client keeps it, is found by `--from`, imported,
/// and the written file loads back to the same servers.
#[test]
fn every_clients_fixture_is_found_and_imports_to_the_same_servers() {
    // (client, fixture, where (under "~/" or the project), usable servers)
    let cases: [(&str, &str, &str, &[&str]); 7] = [
        (
            "claude-desktop",
            "claude-desktop/claude_desktop_config.json",
            "~/.config/Claude/claude_desktop_config.json",
            &["filesystem", "weather"],
        ),
        (
            "cursor",
            "cursor/.cursor/mcp.json",
            "~/.cursor/mcp.json",
            &["remote", "server-name"],
        ),
        (
            "gemini",
            "gemini/.gemini/settings.json",
            "~/.gemini/settings.json",
            &[
                "filtered",
                "httpServer",
                "pythonTools",
                "sseServer",
                "withOauth",
            ],
        ),
        (
            "goose",
            "goose/.config/goose/config.yaml",
            "~/.config/goose/config.yaml",
            // `remote` is imported with `enabled = false`, and a check lists only enabled
            // servers.
            &["github", "legacy"],
        ),
        (
            "vscode",
            "vscode/.vscode/mcp.json",
            ".vscode/mcp.json",
            &["fetch", "github", "legacy", "missing-input", "perplexity"],
        ),
        (
            "windsurf",
            "windsurf/mcp_config.json",
            "~/.codeium/windsurf/mcp_config.json",
            &["figma", "github"],
        ),
        (
            "zed",
            "zed/zed/settings.json",
            "~/.config/zed/settings.json",
            &["local-mcp-server", "old-style", "remote-mcp-server"],
        ),
    ];
    for (client, fixture, place, expected) in cases {
        let (wd, home) = workdir();
        let dest = match place.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => wd.path().join(place),
        };
        put(
            &dest,
            &std::fs::read_to_string(Path::new(FIXTURES).join(fixture)).unwrap(),
        );
        let shown = wd.clean(&dest.display().to_string());
        let shown = shown
            .strip_prefix("[TMP]/")
            .map_or(shown.clone(), str::to_owned);
        let shown = if place.starts_with("~/") {
            format!("[TMP]/{shown}")
        } else {
            shown
        };
        if !place.starts_with("~/") {
            // A project file: the check reviews it; anything else needs trust first.
            let run = wd.run(&["--from", client, "tools"]);
            assert_eq!(run.code, EXIT_UNTRUSTED, "{client}: {}", run.snapshot());
            let run = wd.run(&["trust", place]);
            assert_eq!(run.code, 0, "{client}: {}", run.snapshot());
        }

        // To stdout: the origin line names the file found.
        let run = wd.run(&["--from", client, "config", "import"]);
        assert_eq!(run.code, 0, "{client}: {}", run.snapshot());
        assert_eq!(
            run.stdout.lines().next(),
            Some(format!("# Imported from {shown}.").as_str()),
            "{client}"
        );

        let run = wd.run(&[
            "--from",
            client,
            "config",
            "import",
            "--output",
            "mcp-imported.toml",
        ]);
        assert_eq!(run.code, 0, "{client}: {}", run.snapshot());
        let run = wd.run(&["--config", "mcp-imported.toml", "config", "check", "--json"]);
        assert_eq!(run.code, 0, "{client}: {}", run.snapshot());
        let imported = servers(&run);
        assert_eq!(names(&imported), expected, "{client}");
        assert_eq!(run.json()["files"][0]["format"], "toml", "{client}");

        // The check of the client's own file names its format, and (when every entry of
        // the fixture is usable) lists the same servers.
        let run = wd.run(&["--from", client, "config", "check", "--json"]);
        if run.code == 0 {
            assert_eq!(servers(&run), imported, "{client}");
            let files = &run.json()["files"];
            assert_eq!(files.as_array().map(Vec::len), Some(1), "{client}");
            assert_eq!(files[0]["format"], client, "{client}");
        } else {
            assert_eq!(run.code, 2, "{client}: {}", run.snapshot());
            assert_eq!(run.json()["valid"], false, "{client}");
        }
    }
}

/// Claude Code: the project's `.mcp.json` (trusted) wins over the user's `~/.claude.json`;
/// the import starts the same servers as the originals.
#[test]
fn claude_code_project_file_wins_and_the_import_runs_the_same_servers() {
    let (wd, home) = workdir();
    put(
        &home.join(".claude.json"),
        &format!(
            r#"{{"numStartups": 3, "mcpServers": {{"notes": {}, "mine": {}}},
                "projects": {{"/elsewhere": {{"mcpServers": {{"local": {}}}}}}}}}"#,
            fake_json(&["user_tool"]),
            fake_json(&["mine_tool"]),
            fake_json(&["local_tool"])
        ),
    );
    put(
        &wd.path().join(".mcp.json"),
        &format!(
            r#"{{"mcpServers": {{"notes": {}}}}}"#,
            fake_json(&["project_tool"])
        ),
    );
    let run = wd.run(&["--from", "claude", "tools"]);
    assert_eq!(run.code, EXIT_UNTRUSTED, "{}", run.snapshot());
    assert!(
        run.stderr
            .contains("project configuration `.mcp.json` is not trusted yet"),
        "{}",
        run.stderr
    );
    assert_eq!(wd.run(&["trust", ".mcp.json"]).code, 0);

    let run = wd.run(&["--from", "claude", "tools"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert!(
        run.stdout.contains("mcp__notes__project_tool"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("mcp__mine__mine_tool"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("user_tool"), "{}", run.stdout);

    let run = wd.run(&["--from", "claude", "config", "check"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert!(
        run.stdout
            .contains("format: mcp-json ([TMP]/user/.claude.json)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("format: mcp-json (.mcp.json)"),
        "{}",
        run.stdout
    );

    let original = wd.run(&["--from", "claude", "status", "--json"]);
    assert_eq!(original.code, 0, "{}", original.snapshot());
    let run = wd.run(&[
        "--from", "claude", "config", "import", "--output", "out.toml",
    ]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    let text = wd.clean(&std::fs::read_to_string(wd.path().join("out.toml")).unwrap());
    assert!(
        text.contains(
            "# the server of this name in [TMP]/user/.claude.json is overridden by .mcp.json"
        ),
        "{text}"
    );
    // Claude Code's state keys (`numStartups`) are no setting to carry over; its
    // local-scope servers are, and are named.
    assert!(
        text.contains("# not carried over:") && text.contains("local-scope servers"),
        "{text}"
    );
    assert!(!text.contains("numStartups"), "{text}");
    let imported = wd.run(&["--config", "out.toml", "status", "--json"]);
    assert_eq!(imported.code, 0, "{}", imported.snapshot());
    assert_eq!(servers(&imported), servers(&original));
    assert_eq!(names(&servers(&imported)), ["mine", "notes"]);
}

/// Codex: the user's `~/.codex/config.toml` is the user's own file and needs no trust.
#[test]
fn codex_user_config_is_used_without_trust() {
    let (wd, home) = workdir();
    let scenario = json!({"tools": [{"name": "echo"}]}).to_string();
    put(
        &home.join(".codex/config.toml"),
        &format!(
            "model = \"o3\"\n\n[mcp_servers.notes]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", '{scenario}']\n"
        ),
    );
    let run = wd.run(&["--from", "codex", "tools"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert!(run.stdout.contains("mcp__notes__echo"), "{}", run.stdout);
    let run = wd.run(&["--from", "codex", "config", "check", "--json"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert_eq!(
        run.json()["files"],
        json!([{"path": "[TMP]/user/.codex/config.toml", "format": "codex"}])
    );
}

/// Codex's files behave as in Codex: `$CODEX_HOME/config.toml` replaces
/// `~/.codex/config.toml`, a server that sets no timeout gets Codex's defaults (startup
/// 10 s, tool calls 60 s, where this crate's own TOML has 30 s and 300 s) while a set one
/// is kept, and a project's `.codex/config.toml` is read, once trusted, winning over the
/// user's file.
#[test]
fn codex_files_get_codex_home_codex_defaults_and_the_trusted_project_file() {
    let (mut wd, home) = workdir();
    let codex_home = wd.path().join("codex-home");
    wd.set_env("CODEX_HOME", Some(&codex_home.display().to_string()));
    let scenario = |tool: &str| json!({"tools": [{"name": tool}]}).to_string();
    let server = |name: &str, tool: &str, extra: &str| {
        format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", '{}']\n{extra}",
            scenario(tool)
        )
    };
    // Not read: CODEX_HOME moves the user's file.
    put(
        &home.join(".codex/config.toml"),
        &server("ignored", "ignored_tool", ""),
    );
    put(
        &codex_home.join("config.toml"),
        &format!(
            "{}\n{}\n{}",
            server("plain", "plain_tool", ""),
            server("timed", "timed_tool", "tool_timeout_sec = 5\n"),
            server("shared", "user_tool", "")
        ),
    );
    let run = wd.run(&["--from", "codex", "config", "import"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    let imported = &run.stdout;
    assert!(!imported.contains("ignored"), "{imported}");
    let table = |name: &str| {
        let start = imported
            .find(&format!("[mcp_servers.{name}]"))
            .unwrap_or_else(|| panic!("no [mcp_servers.{name}] in:\n{imported}"));
        let rest = &imported[start + 1..];
        rest[..rest.find("\n[").unwrap_or(rest.len())].to_owned()
    };
    let plain = table("plain");
    assert!(plain.contains("startup_timeout_sec = 10"), "{plain}");
    assert!(plain.contains("tool_timeout_sec = 60"), "{plain}");
    let timed = table("timed");
    assert!(timed.contains("tool_timeout_sec = 5"), "{timed}");
    assert!(timed.contains("startup_timeout_sec = 10"), "{timed}");

    // The project's file runs nothing until trusted, then wins over the user's.
    put(
        &wd.path().join(".codex/config.toml"),
        &server("shared", "project_tool", ""),
    );
    let run = wd.run(&["--from", "codex", "tools"]);
    assert_eq!(run.code, EXIT_UNTRUSTED, "{}", run.snapshot());
    let run = wd.run(&["trust", ".codex/config.toml"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    let run = wd.run(&["--from", "codex", "tools"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert!(
        run.stdout.contains("mcp__shared__project_tool"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("mcp__plain__plain_tool"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("user_tool"), "{}", run.stdout);
}

/// A project file of another client runs nothing until trusted, like ./mcp.toml.
#[test]
fn an_untrusted_project_file_of_another_client_runs_nothing() {
    let (wd, home) = workdir();
    put(
        &home.join(".cursor/mcp.json"),
        &format!(
            r#"{{"mcpServers": {{"mine": {}}}}}"#,
            fake_json(&["mine_tool"])
        ),
    );
    let marker = wd.path().join("pwned");
    put(
        &wd.path().join(".cursor/mcp.json"),
        &format!(
            r#"{{"mcpServers": {{"evil": {{"command": "sh", "args": ["-c", "touch {}"]}}}}}}"#,
            marker.display()
        ),
    );
    for args in [
        &["--from", "cursor", "status"][..],
        &["--from", "cursor", "tools", "--json"],
    ] {
        let run = wd.run(args);
        assert_eq!(run.code, EXIT_UNTRUSTED, "{args:?}: {}", run.snapshot());
        assert!(!marker.exists(), "{args:?} ran the project's command");
    }
    let run = wd.run(&["--from", "cursor", "status"]);
    assert!(
        run.stderr.contains(
            "project configuration `.cursor/mcp.json` is not trusted yet; nothing was started"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("mcpctl trust .cursor/mcp.json"),
        "{}",
        run.stderr
    );
    // The check reviews it without running it.
    let run = wd.run(&["--from", "cursor", "config", "check"]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    assert!(
        run.stdout.contains("format: cursor (.cursor/mcp.json)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("format: cursor ([TMP]/user/.cursor/mcp.json)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("  evil  stdio  enabled"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("  mine  stdio  enabled"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("untrusted: project file .cursor/mcp.json is not trusted"),
        "{}",
        run.stdout
    );
    assert!(!marker.exists());
}

#[test]
fn import_refuses_to_overwrite_without_force() {
    let (wd, home) = workdir();
    put(
        &home.join(".codeium/windsurf/mcp_config.json"),
        &std::fs::read_to_string(Path::new(FIXTURES).join("windsurf/mcp_config.json")).unwrap(),
    );
    wd.write("mcp.toml", "# mine\n");
    let run = wd.run(&[
        "--from", "windsurf", "config", "import", "--output", "mcp.toml",
    ]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(
        run.stderr
            .contains("`mcp.toml` already exists; nothing was written"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--force"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(wd.path().join("mcp.toml")).unwrap(),
        "# mine\n"
    );

    let run = wd.run(&[
        "--from", "windsurf", "config", "import", "--output", "mcp.toml", "--force",
    ]);
    assert_eq!(run.code, 0, "{}", run.snapshot());
    let text = std::fs::read_to_string(wd.path().join("mcp.toml")).unwrap();
    assert!(text.contains("[mcp_servers.figma]"), "{text}");
    assert!(
        text.contains("# `env.GITHUB_PERSONAL_ACCESS_TOKEN` holds `${GITHUB_TOKEN}`"),
        "{text}"
    );
}

#[test]
fn a_client_without_files_lists_where_it_looked() {
    let (wd, _) = workdir();
    let run = wd.run(&["--from", "zed", "status"]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(
        run.stderr.contains("no MCP configuration of zed found"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("not found: [TMP]/user/.config/zed/settings.json"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("not found: .zed/settings.json"),
        "{}",
        run.stderr
    );
    let run = wd.run(&["config", "import"]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(run.stderr.contains("--from CLIENT"), "{}", run.stderr);
    let run = wd.run(&["--from", "emacs", "status"]);
    assert_eq!(run.code, 2, "{}", run.snapshot());
    assert!(
        run.stderr.contains("unknown client `emacs`"),
        "{}",
        run.stderr
    );
}
