//! `mcpctl tools --search`: the best matching tools of every configured server; a server
//! whose listing is cached is searched from the cache and not started.

#![allow(clippy::unwrap_used, reason = "test helpers may panic")]

mod support;

use serde_json::json;
use support::{Workdir, scenario_arg};

fn config(wd: &Workdir) -> std::path::PathBuf {
    let server = |name: &str, tools: serde_json::Value| {
        let log = wd.path().join(format!("{name}.jsonl"));
        let scenario = json!({"tools": tools, "record": {"request_log": log}});
        format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\n\n",
            scenario_arg(&scenario)
        )
    };
    wd.write(
        "mcp.toml",
        &format!(
            "{}{}",
            server(
                "files",
                json!([
                    {"name": "read_file", "description": "Read a file from disk.", "behavior": {"kind": "echo"}},
                    {"name": "list_directory", "description": "List the files and folders of a directory.", "behavior": {"kind": "echo"}}
                ])
            ),
            server(
                "weather",
                json!([{"name": "get_forecast", "description": "The weather forecast for a city.", "behavior": {"kind": "echo"}}])
            )
        ),
    )
}

fn starts(wd: &Workdir, name: &str) -> usize {
    std::fs::read_to_string(wd.path().join(format!("{name}.jsonl")))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"initialize\""))
        .count()
}

#[test]
fn search_ranks_the_tools_and_searches_cached_servers_without_starting_them() {
    let wd = Workdir::new();
    let config = config(&wd);
    let config = config.to_str().unwrap();
    let first = wd.run(&[
        "--config",
        config,
        "--json",
        "tools",
        "--search",
        "forecast for Paris",
    ]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let hits = first.json();
    assert_eq!(
        hits[0]["qualified_name"], "mcp__weather__get_forecast",
        "{hits}"
    );
    assert!(hits[0]["score"].as_f64().unwrap() > 0.0);
    let (files, weather) = (starts(&wd, "files"), starts(&wd, "weather"));
    assert!(
        files >= 1 && weather >= 1,
        "the first search starts what it never saw"
    );

    // Listed once: now both come from the cache, and nothing starts.
    let second = wd.run(&[
        "--config",
        config,
        "tools",
        "--search",
        "folders in a directory",
        "--limit",
        "1",
    ]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stdout.contains("mcp__files__list_directory"),
        "{}",
        second.stdout
    );
    assert!(
        !second.stdout.contains("mcp__files__read_file"),
        "--limit 1: {}",
        second.stdout
    );
    assert!(
        second.stdout.contains("1 tool best matching"),
        "{}",
        second.stdout
    );
    assert_eq!(
        (starts(&wd, "files"), starts(&wd, "weather")),
        (files, weather)
    );

    // Bad input: said, with what to do.
    let empty = wd.run(&["--config", config, "tools", "--search", " \u{7} "]);
    assert_eq!(empty.code, 2, "{}", empty.stderr);
    assert!(empty.stderr.contains("empty"), "{}", empty.stderr);
    let zero = wd.run(&[
        "--config", config, "tools", "--search", "file", "--limit", "0",
    ]);
    assert_eq!(zero.code, 2, "{}", zero.stderr);
    assert!(zero.stderr.contains("--limit 0"), "{}", zero.stderr);
    wd.assert_no_server_left();
}

#[test]
fn a_weak_match_is_left_out_and_the_closest_names_are_offered() {
    let wd = Workdir::new();
    let config = config(&wd);
    let config = config.to_str().unwrap();
    // "file" is one word of nine here: too little of the query for any tool to be shown.
    let query = "please book a table for two at an italian restaurant near the file";
    let weak = wd.run(&["--config", config, "tools", "--search", query]);
    assert_eq!(weak.code, 0, "{}", weak.stderr);
    assert!(
        weak.stdout.contains("no good match for") && weak.stdout.contains("did you mean"),
        "{}",
        weak.stdout
    );
    assert!(
        weak.stdout.contains("mcp__files__read_file"),
        "the closest name is offered: {}",
        weak.stdout
    );
    assert!(
        !weak.stdout.contains("best matching"),
        "no table of weak hits: {}",
        weak.stdout
    );
    let json = wd.run(&["--config", config, "--json", "tools", "--search", query]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    assert_eq!(json.json(), serde_json::json!([]), "{}", json.stdout);
    // A query sharing nothing with any tool: nothing to offer.
    let nothing = wd.run(&["--config", config, "tools", "--search", "zebra quantum"]);
    assert_eq!(nothing.code, 0, "{}", nothing.stderr);
    assert!(
        nothing.stdout.contains("no tool matches"),
        "{}",
        nothing.stdout
    );
    wd.assert_no_server_left();
}
