//! `-v` logs stay bounded when a server misbehaves: huge stdout and stderr lines are cut
//! and marked with their length, and a stderr flood is logged only up to a rate.

mod support;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::{Workdir, scenario_arg};

/// The longest log line accepted: a cut field (8 KiB) plus the line's prefix (time, level,
/// target, span fields).
const MAX_LINE: usize = 9 * 1024;

const FLOOD: usize = 20_000;

#[test]
fn verbose_logs_cut_huge_lines_and_rate_limit_stderr_floods() {
    let wd = Workdir::new();
    let scenario = json!({
        "tools": [{"name": "echo"}],
        "faults": {
            "huge_line": 1_000_000,
            "stderr": "e".repeat(100_000),
            "flood_stderr": FLOOD,
        },
    });
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "[mcp_servers.noisy]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n",
            scenario_arg(&scenario)
        ),
    );
    let run = wd.run(&["-v", "status", "--json"]);
    assert_eq!(run.code, 0, "{}", &run.stderr[..run.stderr.len().min(4096)]);
    assert_eq!(run.json()["servers"][0]["state"], json!("ready"));
    let longest = run.stderr.lines().map(str::len).max().unwrap_or(0);
    assert!(longest <= MAX_LINE, "a log line of {longest} bytes");
    // The server's 100,000-byte stderr line, cut by the launcher with its length.
    assert!(
        run.stderr
            .contains(&format!("{}… (100000 bytes)", "e".repeat(64))),
        "no cut stderr line in the log"
    );
    // rmcp's debug line quoting the 1,000,000-byte stdout line, cut by mcpctl.
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains("xxxxxxxx… (") && l.ends_with(" bytes)")),
        "no cut stdout line in the log"
    );
    let flood_logged = run
        .stderr
        .lines()
        .filter(|l| l.contains("stderr flood line"))
        .count();
    assert!(
        flood_logged <= FLOOD / 2,
        "{flood_logged} of {FLOOD} flood lines were logged"
    );
}

/// A server whose tool writes a log message and one that asks for a sample, in `era`.
fn asker(wd: &Workdir, era: Option<&str>) {
    let mut scenario = json!({
        "capabilities": {"logging": true},
        "tools": [
            {"name": "log", "behavior": {"kind": "log", "level": "warning", "logger": "db",
             "data": "pool exhausted\n\u{1b}[31m"}},
            {"name": "sample", "behavior": {"kind": "sample", "prompt": "hi", "max_tokens": 10}},
        ],
    });
    if let Some(era) = era {
        scenario["faults"] = json!({"protocol_version": era});
    }
    wd.write_trusted(
        "mcp.toml",
        &format!(
            "[mcp_servers.asker]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n",
            scenario_arg(&scenario)
        ),
    );
}

#[test]
fn verbose_shows_server_log_messages_escaped() {
    let wd = Workdir::new();
    asker(&wd, None);
    let run = wd.run(&["-v", "call", "--yes", "mcp__asker__log"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("mcp_server_log"))
        .unwrap_or_else(|| panic!("no server log line in:\n{}", run.stderr));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("server=asker"), "{line}");
    assert!(line.contains("logger=\"db\""), "{line}");
    // Control characters are written as escapes, never sent to the terminal.
    assert!(line.contains("pool exhausted\\n\\u{1b}[31m"), "{line}");
    assert!(
        !run.stderr.contains('\u{1b}'),
        "a raw escape reached stderr"
    );
    // Without -v nothing of it is shown.
    let quiet = wd.run(&["call", "--yes", "mcp__asker__log"]);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert!(!quiet.stderr.contains("pool exhausted"), "{}", quiet.stderr);
    wd.assert_no_server_left();
}

#[test]
fn call_refuses_sampling_saying_it_has_no_model() {
    for era in [None, Some("2026-07-28")] {
        let wd = Workdir::new();
        asker(&wd, era);
        let run = wd.run(&["call", "--yes", "mcp__asker__sample"]);
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(
            all.contains("this client does not offer sampling"),
            "{era:?}: {all}"
        );
        wd.assert_no_server_left();
    }
}
