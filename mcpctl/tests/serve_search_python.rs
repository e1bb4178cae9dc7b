//! `mcpctl serve --tool-exposure search` in front of the pinned Python `mcp` SDK client
//! (`gateway/py_search_always_client.py`), over stdio and over `--http`: the tools a
//! server pins (`always_load` on a whole server, `always_load_tools` on one tool of
//! another) are listed beside `search_tools` and `call_tool` before any search and answer
//! when called directly by their listed names; a tool nobody pinned is not listed; a good
//! query ranks the tool it describes first; a misspelt one gets the "no good match"
//! answer with the closest names (names the catalog has) as `did_you_mean`. The server
//! pinned whole starts slowly, so its tools reach the client after its first listing,
//! through the gateway's `tools/list_changed`.
//!
//! The client is installed by `scripts/gateway-clients.sh` into target/gateway-clients;
//! without it each test says so on stderr and does nothing, unless
//! `MCP_REQUIRE_GATEWAY_CLIENTS` is set (then a missing install fails).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test helpers may panic; the test starts the gateway and the client as a person would; how many listings it took goes to stderr"
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_testkit::{Faults, Recording, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{MCPCTL, Served, Workdir};

const TOKEN: &str = "search-python-test-token-0123456789";

/// The tools listed before any search: the two of search mode, then every tool of
/// `clock` (`always_load = true`) and `files`' `read_file` (`always_load_tools`).
const PINNED: [&str; 3] = [
    "mcp__clock__now",
    "mcp__clock__timezone",
    "mcp__files__read_file",
];

/// How long `clock` takes to answer `initialize`, in milliseconds: a slow server start,
/// longer than the gateway's `initialize` waits for its servers (2 s).
const CLOCK_START_MS: u64 = 3000;

/// Every tool of the catalog, by qualified name.
const CATALOG: [&str; 5] = [
    "mcp__clock__now",
    "mcp__clock__timezone",
    "mcp__files__read_file",
    "mcp__files__write_file",
    "mcp__weather__forecast",
];

/// A query that describes `mcp__weather__forecast` (not pinned).
const GOOD: &str = "weather forecast for a city";
/// A misspelt tool name: no tool matches it well, `forecast` is one edit away.
const WEAK: &str = "forcast";

/// The installed Python client, or `None` (test skipped) when it is not installed.
fn clients() -> Option<PathBuf> {
    support::gateway_clients(&[(
        "py_search_always_client.py",
        include_str!("gateway/py_search_always_client.py"),
    )])
}

/// Three fake servers, each logging its requests to `<name>-requests.jsonl`: `clock`
/// (pinned whole), `files` (`read_file` pinned, `write_file` not) and `weather` (nothing
/// pinned), each tool approved to run without asking. `clock` answers `initialize` only
/// after [`CLOCK_START_MS`]: its pinned tools come after the gateway's first listing, so
/// the client lists them again on the gateway's `tools/list_changed`, as a client
/// connecting while servers start does.
fn write_config(wd: &Workdir) -> PathBuf {
    let servers = [
        (
            "clock",
            vec![
                // An output schema: the Python SDK checks the direct call's result by it.
                ToolSpec::echo("now")
                    .with_description("Tell the current date and time")
                    .with_output_schema(json!({
                        "type": "object",
                        "properties": {"text": {"type": "string"}},
                        "required": ["text"],
                    })),
                ToolSpec::echo("timezone").with_description("Name the time zone of a place"),
            ],
            "always_load = true\n",
            CLOCK_START_MS,
        ),
        (
            "files",
            vec![
                ToolSpec::echo("read_file").with_description("Read a file from the disk"),
                ToolSpec::echo("write_file").with_description("Write a file to the disk"),
            ],
            "always_load_tools = [\"read_file\"]\n",
            0,
        ),
        (
            "weather",
            vec![ToolSpec::echo("forecast").with_description("Forecast the weather for a city")],
            "",
            0,
        ),
    ];
    let mut config = String::new();
    for (name, tools, pin, start_ms) in servers {
        let scenario = tools
            .into_iter()
            .fold(Scenario::new(name), Scenario::with_tool);
        scenario
            .with_faults(Faults::new().with_init_delay_ms(start_ms))
            .with_record(
                Recording::new().with_request_log(wd.path().join(format!("{name}-requests.jsonl"))),
            )
            .write_json(wd.path().join(format!("{name}.json")))
            .unwrap();
        config.push_str(&format!(
            "[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario\", \"{name}.json\"]\ndefault_tools_approval_mode = \"approve\"\n{pin}\n"
        ));
    }
    wd.write("gateway.toml", &config)
}

/// The raw names of the tools `server` was called with, in order.
fn upstream_calls(wd: &Workdir, server: &str) -> Vec<String> {
    std::fs::read_to_string(wd.path().join(format!("{server}-requests.jsonl")))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["method"] == "tools/call")
        .map(|v| v["params"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Runs the client (`stdio COMMAND ARGS_JSON` or `http URL TOKEN`) in `wd`: what it
/// printed.
fn run_client(clients: &Path, wd: &Workdir, args: [&str; 3]) -> Value {
    let plan = json!({"pinned": PINNED, "good": GOOD, "weak": WEAK}).to_string();
    let output = Command::new(clients.join("venv/bin/python"))
        .arg(clients.join("py_search_always_client.py"))
        .args(args)
        .arg(plan)
        .current_dir(wd.path())
        .env("MCPCTL_HOME", wd.path().join("home"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run the Python client");
    support::client_report("the Python client", &output)
}

/// What the client must have seen, and what the servers must have been asked.
fn assert_report(wd: &Workdir, report: &Value) {
    // Information, not asserted (it depends on how fast the servers start).
    eprintln!(
        "tools/list calls until the pinned tools were listed: {}",
        report["listings"]
    );
    // Before any search: the two search-mode tools and the pinned ones, nothing else.
    let mut listed = vec!["search_tools", "call_tool"];
    listed.extend(PINNED);
    assert_eq!(report["tools_before"], json!(listed), "{report}");
    for unpinned in ["mcp__files__write_file", "mcp__weather__forecast"] {
        assert!(
            !report["tools_before"]
                .as_array()
                .unwrap()
                .contains(&json!(unpinned)),
            "{unpinned} is listed before a search: {report}"
        );
    }

    // Each pinned tool, called directly by its listed name, answers with the fake
    // server's result (echo: the arguments back), and its server got the call.
    for name in PINNED {
        let called = &report["called"][name];
        assert_ne!(called["isError"], json!(true), "{name}: {report}");
        assert_eq!(
            called["structuredContent"],
            json!({"text": format!("pinned {name}")}),
            "{name}: {report}"
        );
    }
    assert_eq!(upstream_calls(wd, "clock"), ["now", "timezone"]);
    assert_eq!(upstream_calls(wd, "files"), ["read_file"]);
    assert_eq!(upstream_calls(wd, "weather"), Vec::<String>::new());

    // A good query ranks the tool it describes first.
    let good = &report["searches"][GOOD];
    assert_eq!(good["isError"], json!(false), "{report}");
    assert_eq!(
        good["structuredContent"]["tools"][0]["name"], "mcp__weather__forecast",
        "{report}"
    );
    assert!(
        good["structuredContent"].get("no_match").is_none(),
        "{report}"
    );

    // A misspelt name: no weak hits, "no good match", and the closest names, which are
    // tools of the catalog, the meant one first.
    let weak = &report["searches"][WEAK];
    assert_eq!(weak["isError"], json!(false), "{report}");
    let answer = &weak["structuredContent"];
    assert_eq!(answer["tools"], json!([]), "{report}");
    let did_you_mean = answer["did_you_mean"].as_array().unwrap();
    assert_eq!(did_you_mean[0], "mcp__weather__forecast", "{report}");
    for name in did_you_mean {
        assert!(
            CATALOG.contains(&name.as_str().unwrap()),
            "{name} is not a tool of the catalog: {report}"
        );
    }
    let text = answer["no_match"].as_str().unwrap();
    assert!(
        text.contains(&format!("{WEAK:?}")) && text.contains("mcp__weather__forecast"),
        "{report}"
    );
}

#[test]
fn python_client_over_stdio_sees_the_pinned_tools_and_the_no_match_answer() {
    let Some(clients) = clients() else { return };
    let wd = Workdir::new();
    let config = write_config(&wd);
    let args = serde_json::to_string(&json!([
        "--config",
        config,
        "serve",
        "--tool-exposure",
        "search"
    ]))
    .unwrap();
    let report = run_client(&clients, &wd, ["stdio", MCPCTL, &args]);
    assert_report(&wd, &report);
    wd.assert_no_server_left();
}

#[test]
fn python_client_over_http_sees_the_pinned_tools_and_the_no_match_answer() {
    let Some(clients) = clients() else { return };
    let wd = Workdir::new();
    let config = write_config(&wd);
    let mut served = Served::start(&wd, &config, TOKEN, &["--tool-exposure", "search"]);
    let report = run_client(&clients, &wd, ["http", &served.url, TOKEN]);
    assert_report(&wd, &report);
    assert!(served.stop().success());
    wd.assert_no_server_left();
}
