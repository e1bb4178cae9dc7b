//! The full text of the main failure kinds, as a host prints it: the error and every
//! source, joined plainly (no de-duplication), from real servers (the fake server binary,
//! loopback HTTP). Each layer must write its own sentence: a phrase of five words or more
//! that appears twice in one chain fails the test, and the texts are kept as snapshots.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Fixture, faults};
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, SharedEnvLookup, StartupFailure,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, HttpFakeServer, HttpOptions, Scenario, ToolSpec};

/// The error and its sources, joined with `: `, nothing left out.
fn plain_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        parts.push(e.to_string());
        cur = e.source();
    }
    parts.join(": ")
}

/// The first run of `n` words that appears twice in `text` (case and punctuation aside).
fn repeated_phrase(text: &str, n: usize) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut seen = std::collections::HashSet::new();
    for window in words.windows(n) {
        let phrase = window.join(" ");
        if !seen.insert(phrase.clone()) {
            return Some(phrase);
        }
    }
    None
}

/// Replaces what changes from run to run (temporary paths, ports, process ids).
fn stable(text: &str, fx: &Fixture) -> String {
    let mut out = text.replace(&fx.home.path().to_string_lossy().into_owned(), "<home>");
    out = out.replace(
        &mcp_testkit::fake_server_bin()
            .to_string_lossy()
            .into_owned(),
        "<fake-server>",
    );
    let port = regex_lite_port(&out);
    if let Some(port) = port {
        out = out.replace(&port, "<port>");
    }
    out
}

/// The port of the first `127.0.0.1:PORT` in `text`.
fn regex_lite_port(text: &str) -> Option<String> {
    let at = text.find("127.0.0.1:")? + "127.0.0.1:".len();
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!digits.is_empty()).then_some(digits)
}

/// Checks one chain: no repeated phrase, and records it under `kind`.
fn check(kind: &str, chain: &str, out: &mut Vec<String>) {
    if let Some(phrase) = repeated_phrase(chain, 5) {
        panic!("the {kind} message repeats \"{phrase}\": {chain}");
    }
    out.push(format!("{kind}:\n  {chain}"));
}

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

/// The startup failure of the one server of `fx`, started with `options`.
async fn failure_of(fx: &Fixture, options: ConnectionSetOptions) -> StartupFailure {
    let set = ConnectionSet::start(&fx.catalog(), options);
    set.wait_startup().await;
    let status = set.status();
    let failure = match &status[0].state {
        mcp_connections::ServerState::Failed(f) => f.clone(),
        other => panic!("expected a failure, got {other:?}"),
    };
    set.shutdown().await;
    fx.assert_no_processes().await;
    failure
}

#[test]
fn the_checker_finds_a_repeated_phrase() {
    assert_eq!(
        repeated_phrase(
            "MCP server `a` failed to spawn: server `a` failed to spawn: no such file",
            4
        ),
        Some("server a failed to".to_owned())
    );
    assert_eq!(repeated_phrase("one two three four five six", 5), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_failures_say_each_thing_once() {
    let mut out = Vec::new();

    let mut fx = Fixture::new();
    fx.add("missing", ServerConfig::stdio("/nonexistent/mcp-server"));
    let f = failure_of(&fx, ConnectionSetOptions::new()).await;
    check("spawn_failed", &stable(&plain_chain(&f), &fx), &mut out);

    let mut fx = Fixture::new();
    fx.stdio(
        "exits",
        Scenario::new("exits").with_faults(faults(|f| {
            f.exit_at_startup = Some(3);
            f.stderr = Some("cannot open the database".to_owned());
        })),
    );
    let f = failure_of(&fx, ConnectionSetOptions::new()).await;
    check("exited", &stable(&plain_chain(&f), &fx), &mut out);

    let mut fx = Fixture::new();
    fx.stdio_with(
        "hangs",
        Scenario::new("hangs").with_faults(faults(|f| f.hang_initialize = true)),
        |c| c.with_startup_timeout(Duration::from_millis(800)),
    );
    let f = failure_of(&fx, ConnectionSetOptions::new()).await;
    check("timeout", &stable(&plain_chain(&f), &fx), &mut out);

    let mut fx = Fixture::new();
    fx.stdio(
        "ancient",
        Scenario::new("ancient").with_faults(faults(|f| {
            f.protocol_version = Some("1999-01-01".to_owned())
        })),
    );
    let f = failure_of(&fx, ConnectionSetOptions::new()).await;
    check("protocol", &stable(&plain_chain(&f), &fx), &mut out);

    let port = mcp_testkit::free_loopback_port().unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "gone",
        ServerConfig::http(format!("http://127.0.0.1:{port}/mcp"))
            .with_startup_timeout(Duration::from_secs(10)),
    );
    let f = failure_of(&fx, ConnectionSetOptions::new()).await;
    check("transport", &stable(&plain_chain(&f), &fx), &mut out);

    let server = HttpFakeServer::start_with(
        Scenario::new("locked").with_tool(ToolSpec::echo("echo")),
        HttpOptions::new().with_bearer_token("s3cret"),
    )
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add("locked", ServerConfig::http(server.url()));
    let f = failure_of(&fx, ConnectionSetOptions::new()).await;
    check("login_required", &stable(&plain_chain(&f), &fx), &mut out);
    server.shutdown().await;

    let mut fx = Fixture::new();
    fx.add(
        "headers",
        ServerConfig::from(
            HttpConfig::new("http://127.0.0.1:9/mcp").with_env_http_header("X-Key", "NO_SUCH_VAR"),
        ),
    );
    let env: SharedEnvLookup = Arc::new(|_: &str| None);
    let f = failure_of(&fx, ConnectionSetOptions::new().with_env_lookup(env)).await;
    check("config", &stable(&plain_chain(&f), &fx), &mut out);

    insta::assert_snapshot!("startup_failures", out.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_errors_say_each_thing_once() {
    let mut out = Vec::new();
    let mut fx = Fixture::new();
    fx.stdio(
        "tools",
        Scenario::new("tools")
            .with_tool(ToolSpec::echo("echo"))
            .with_tool(ToolSpec::new("slow", Behavior::Sleep { ms: 60_000 })),
    );
    fx.add("missing", ServerConfig::stdio("/nonexistent/mcp-server"));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;

    let e = set
        .call_qualified("mcp__tools__nope", None, CallOptions::new())
        .await
        .unwrap_err();
    check("unknown_tool", &stable(&plain_chain(&e), &fx), &mut out);

    let e = set
        .call_tool(
            &key("tools"),
            "slow",
            None,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_millis(300))),
        )
        .await
        .unwrap_err();
    check("call_timeout", &stable(&plain_chain(&e), &fx), &mut out);

    let e = set
        .call_tool(&key("missing"), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    check("not_ready", &stable(&plain_chain(&e), &fx), &mut out);

    let e = set
        .call_tool(
            &key("tools"),
            "echo",
            Some(serde_json::json!([1, 2])),
            CallOptions::new(),
        )
        .await
        .unwrap_err();
    check(
        "invalid_arguments",
        &stable(&plain_chain(&e), &fx),
        &mut out,
    );

    let pid = set
        .status()
        .iter()
        .find(|s| s.key == key("tools"))
        .and_then(|s| s.pid)
        .unwrap();
    let tools = key("tools");
    let call = set.call_tool(&tools, "slow", None, CallOptions::new());
    // The process dies once the server holds the call (its request is recorded), so the
    // call is pending when it does.
    let log = fx.request_log("tools");
    let slow_calls = || {
        mcp_testkit::RecordedRequest::read_log(&log)
            .iter()
            .filter(|r| r.method == "tools/call" && r.params["name"] == "slow")
            .count()
    };
    let before = slow_calls();
    let kill = async {
        while slow_calls() == before {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        mcp_testkit::kill_process_group(pid);
    };
    let (result, ()) = tokio::join!(call, kill);
    let e = result.unwrap_err();
    let text = stable(&plain_chain(&e), &fx).replace(&pid.to_string(), "<pid>");
    check("disconnected", &text, &mut out);

    set.shutdown().await;
    fx.assert_no_processes().await;
    insta::assert_snapshot!("call_errors", out.join("\n"));
}
