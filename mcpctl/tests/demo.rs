//! The embedded demo, run through the real binary with no configuration file.

mod support;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde_json::json;
use support::Workdir;

#[test]
fn demo_status_shows_each_server_sorted_with_a_summary() {
    let wd = Workdir::new();
    let run = wd.run(&["status"]);
    assert_eq!(run.code, 0, "the failing demo server is not required");
    assert_snapshot!(run.snapshot_sorted_stderr());
}

#[test]
fn demo_status_json() {
    let wd = Workdir::new();
    let run = wd.run(&["status", "--json"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stderr,
        "mcpctl: no config found (--config, ./mcp.toml, ./.mcp.json, ~/.config/mcpctl/mcp.toml); running the embedded demo\n",
        "JSON mode shows no progress"
    );
    assert_snapshot!(run.stdout);
}

#[test]
fn demo_tools_human_and_json() {
    let wd = Workdir::new();
    let run = wd.run(&["tools"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("demo_tools_human", run.snapshot());
    let run = wd.run(&["tools", "--json"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("demo_tools_json", run.stdout);
}

#[test]
fn tools_of_one_server() {
    let wd = Workdir::new();
    let run = wd.run(&["tools", "--server", "weather"]);
    assert_eq!(run.code, 0);
    assert_snapshot!(run.snapshot());
}

#[test]
fn calls_print_text_json_and_structured_results() {
    let wd = Workdir::new();
    let echo = wd.run(&["call", "--yes", "mcp__notes__echo", r#"{"text": "hi"}"#]);
    assert_eq!(echo.code, 0);
    assert_eq!(echo.stdout, "{\n  \"text\": \"hi\"\n}\n");

    let search = wd.run(&[
        "call",
        "--yes",
        "mcp__notes__search_notes",
        r#"{"query": "milk"}"#,
    ]);
    assert_eq!(search.code, 0);
    assert_snapshot!("call_structured", search.stdout);

    let raw = wd.run(&[
        "call",
        "--yes",
        "mcp__weather__get_forecast",
        r#"{"city": "Lisbon"}"#,
        "--json",
    ]);
    assert_eq!(raw.code, 0);
    let result = raw.json();
    assert_eq!(result["structuredContent"]["city"], json!("Lisbon"));
    assert_eq!(result["content"][0]["type"], json!("text"));
}

#[test]
fn arguments_can_come_from_stdin() {
    let wd = Workdir::new();
    let run = wd.run_with_stdin(
        &["call", "--yes", "mcp__notes__echo", "-"],
        Some(r#"{"from": "stdin"}"#),
    );
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, "{\n  \"from\": \"stdin\"\n}\n");
}

#[test]
fn a_tool_error_result_is_shown_and_exits_1() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "mcp__notes__delete_note", r#"{"id": 42}"#]);
    assert_eq!(run.code, 1);
    assert_snapshot!("tool_error_human", run.snapshot());
    let run = wd.run(&[
        "call",
        "--yes",
        "mcp__notes__delete_note",
        r#"{"id": 42}"#,
        "--json",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.json()["isError"], json!(true));
}

#[test]
fn elicitation_is_declined_when_stdin_is_not_a_terminal() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "mcp__notes__create_note"]);
    assert_eq!(run.code, 0);
    assert_snapshot!(run.snapshot());
}

/// `echo` has no read-only hint, so its approval mode (`auto`) asks: off a terminal the
/// question is declined and nothing is called; `--yes` approves it, and a read-only tool
/// is never asked about.
#[test]
fn an_approval_is_declined_when_stdin_is_not_a_terminal() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "mcp__notes__echo", r#"{"text": "hi"}"#]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "declined running tool `echo` of server `notes`: its approval mode asks, and stdin is not a terminal"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("tool `echo` of MCP server `notes` was not called"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("pass --yes"), "{}", run.stderr);
    let json = wd.run(&["call", "--json", "mcp__notes__echo", "{}"]);
    assert!(json.stdout.contains("\"not_approved\""), "{}", json.stdout);
    let yes = wd.run(&["call", "--yes", "mcp__notes__echo", r#"{"text": "hi"}"#]);
    assert_eq!(yes.code, 0, "{}", yes.stderr);
    assert!(yes.stdout.contains("hi"), "{}", yes.stdout);
    let read_only = wd.run(&["call", "mcp__notes__search_notes", r#"{"query": "milk"}"#]);
    assert_eq!(read_only.code, 0, "{}", read_only.stderr);
}

#[test]
fn unknown_tool_is_a_usage_error_with_a_hint() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "mcp__notes__nope"]);
    assert_eq!(run.code, 2);
    assert_snapshot!(run.snapshot());
    let run = wd.run(&["call", "--yes", "mcp__notes__ecoh"]);
    assert_eq!(run.code, 2);
    assert_snapshot!("unknown_tool_close_name", run.snapshot());
}

#[test]
fn unknown_server_is_a_usage_error_with_the_known_servers() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "echo", "--server", "nope"]);
    assert_eq!(run.code, 2);
    assert_snapshot!("unknown_server_call", run.snapshot());
    let run = wd.run(&["tools", "--server", "nope"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.lines().nth(1),
        Some("error: unknown MCP server `nope`")
    );
}

#[test]
fn bad_json_arguments_fail_before_any_server_starts() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "mcp__notes__echo", r#"{"text": "#]);
    assert_eq!(run.code, 2);
    assert_snapshot!("bad_json_arguments", run.snapshot());
    let run = wd.run(&["call", "--yes", "mcp__notes__echo", "[1, 2]"]);
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr.lines().next(),
        Some("error: the tool arguments must be a JSON object, got an array")
    );
}

#[test]
fn calling_a_server_that_failed_to_start_says_why_and_exits_3() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "echo", "--server", "broken"]);
    assert_eq!(run.code, 3);
    assert_snapshot!(run.snapshot());
    // By qualified name: the server part names a configured server that is not ready.
    let run = wd.run(&["call", "--yes", "mcp__broken__echo"]);
    assert_eq!(run.code, 3);
    assert_snapshot!("qualified_call_of_a_failed_server", run.snapshot());
    let run = wd.run(&["read", "broken", "notes://readme"]);
    assert_eq!(run.code, 3);
    assert_eq!(
        run.stderr.lines().nth(1),
        Some(
            "error: MCP server `broken` is not ready: it failed (exited): MCP server `broken` exited with status 3; stderr: demo: this server fails on purpose"
        )
    );
}

#[test]
fn json_errors_carry_a_kind() {
    let wd = Workdir::new();
    let run = wd.run(&["call", "--yes", "mcp__broken__echo", "--json"]);
    assert_eq!(run.code, 3);
    let error = &run.json()["error"];
    assert_eq!(error["kind"], json!("server_unavailable"));
    assert_eq!(error["exit_code"], json!(3));
    assert_eq!(error["server"], json!("broken"));
    assert_eq!(
        error["reason"],
        json!({"kind": "exited", "status": 3, "signal": null})
    );
    let run = wd.run(&["call", "--yes", "mcp__notes__nope", "--json"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["error"]["kind"], json!("unknown_tool"));
    assert_eq!(run.json()["error"].get("server"), None);
    let run = wd.run(&["call", "--yes", "echo", "--server", "nope", "--json"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["error"]["kind"], json!("unknown_server"));
    let run = wd.run(&["call", "--yes", "mcp__notes__echo", "[1]", "--json"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["error"]["kind"], json!("usage"));
}

#[test]
fn help_documents_the_exit_codes() {
    let wd = Workdir::new();
    let run = wd.run(&["--help"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .contains("  3    server unavailable: the server `call` or `read` needs is not ready"),
        "{}",
        run.stdout
    );
}

#[test]
fn resources_and_read() {
    let wd = Workdir::new();
    let run = wd.run(&["resources"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("demo_resources", run.snapshot());
    let run = wd.run(&["resources", "--json", "--server", "weather"]);
    assert_eq!(run.code, 0);
    assert_snapshot!("demo_resources_weather_json", run.stdout);
    let run = wd.run(&["read", "notes", "notes://readme"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "# Notes\n\nThis is the demo note store of mcpctl.\n"
    );
    let run = wd.run(&["read", "weather", "weather://stations", "--json"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.json()["contents"][0]["text"],
        json!("{\"stations\": [\"LIS\", \"OPO\", \"FAO\"]}\n")
    );
}

#[test]
fn usage_errors_exit_2() {
    let wd = Workdir::new();
    assert_eq!(wd.run(&["bogus"]).code, 2);
    assert_eq!(wd.run(&["read", "notes"]).code, 2);
    assert_eq!(wd.run(&["call"]).code, 2);
}
