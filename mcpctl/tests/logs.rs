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
