//! The requests of one `Client` in both eras: tool results passed through (tool errors as
//! results, a server's error as `Server`), timeouts, aborts and dropped calls cancelled on
//! the server, progress (and a timeout that restarts with it), calls that overlap,
//! `read_resource`, `get_prompt`, `complete` and `set_log_level`. Against the
//! `mcp-fake-server` binary over stdio and the testkit's HTTP server: the counterparts, at
//! the client level, of the one-server tests of `mcp-connections/tests/calls.rs` and the
//! completions and log level of `server_requests.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_catalog::LogLevel;
use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, Era, HttpTarget, Progress, RequestError,
    Target,
};
use mcp_testkit::{
    Behavior, CapabilityFlags, HttpFakeServer, PromptSpec, ResourceSpec, ResourceTemplateSpec,
    Scenario, TestHome, ToolSpec,
};
use pretty_assertions::assert_eq;
use rmcp::model::{ArgumentInfo, Reference, ResourceContents};
use serde_json::json;
use support::{PATIENCE, args, connect, in_era, stdio};
use tokio_util::sync::CancellationToken;

const CALL: Duration = Duration::from_secs(20);
const MODERN: Option<&str> = Some("2026-07-28");

/// A server with every kind of tool these tests call, a resource, a template and a prompt
/// with completions, and logging.
fn scenario() -> Scenario {
    Scenario::new("req")
        .with_capabilities(
            CapabilityFlags::default()
                .with_completions(true)
                .with_logging(true),
        )
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "fails",
            Behavior::Error {
                message: "boom".to_owned(),
            },
        ))
        .with_tool(ToolSpec::new(
            "structured",
            Behavior::Structured {
                value: json!({"rows": [1, 2, 3]}),
            },
        ))
        .with_tool(ToolSpec::new("hang", Behavior::Sleep { ms: 60_000 }))
        .with_tool(ToolSpec::new("steps", Behavior::Progress { steps: 3 }))
        .with_tool(ToolSpec::new(
            "ticks",
            Behavior::SlowProgress {
                steps: 6,
                interval_ms: 150,
            },
        ))
        .with_tool(ToolSpec::new(
            "meet",
            Behavior::Barrier {
                name: "b".to_owned(),
                parties: 3,
            },
        ))
        .with_tool(ToolSpec::new(
            "log",
            Behavior::Log {
                level: "info".to_owned(),
                logger: Some("app".to_owned()),
                data: json!("hello"),
                count: 1,
            },
        ))
        .with_resource(ResourceSpec::new("file:///notes.txt", "notes", "v1"))
        .with_resource_template(
            ResourceTemplateSpec::new("file:///logs/{day}", "logs")
                .with_completions("day", ["monday", "tuesday", "wednesday"]),
        )
        .with_prompt(
            PromptSpec::new("greet", "Hello {name}!")
                .with_argument("name")
                .with_completions("name", ["Ada", "Alan", "Grace"]),
        )
}

fn count(server: &support::Stdio, method: &str, tool: Option<&str>) -> usize {
    server
        .requests(method)
        .iter()
        .filter(|r| tool.is_none_or(|t| r.params["name"] == json!(t)))
        .count()
}

async fn until(server: &support::Stdio, method: &str, tool: Option<&str>, n: usize) {
    tokio::time::timeout(PATIENCE, async {
        // Polling another process's log file: there is no event to wait on.
        while count(server, method, tool) < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the server never received {n} {method}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_pass_through_and_errors_are_told_apart() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(
        "req",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;
    let failed = client
        .call_tool("fails", None, CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(
        failed.content[0].as_text().map(|t| t.text.as_str()),
        Some("boom")
    );
    let structured = client
        .call_tool("structured", None, CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(
        structured.structured_content,
        Some(json!({"rows": [1, 2, 3]}))
    );
    // A tool the server does not have: its JSON-RPC error, passed on.
    let err = client
        .call_tool("nope", None, CallSettings::new(CALL))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RequestError::Server { message, .. } if message.contains("nope")),
        "{err:?}"
    );
    assert!(!err.is_disconnected() && !err.is_timeout());
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timed_out_aborted_and_dropped_calls_are_cancelled_on_the_server() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(
        "req",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;

    let timeout = Duration::from_millis(300);
    let err = client
        .call_tool("hang", None, CallSettings::new(timeout))
        .await
        .unwrap_err();
    assert_eq!(err, RequestError::Timeout { after: timeout });
    assert!(err.is_timeout());
    until(&server, "notifications/cancelled", None, 1).await;

    // Aborted by the caller once the server has the call.
    let abort = CancellationToken::new();
    let call = client.call_tool(
        "hang",
        None,
        CallSettings::new(CALL).with_abort(abort.clone()),
    );
    tokio::pin!(call);
    tokio::select! {
        r = &mut call => panic!("the hanging call returned: {r:?}"),
        () = until(&server, "tools/call", Some("hang"), 2) => abort.cancel(),
    }
    assert_eq!(call.await.unwrap_err(), RequestError::Aborted);
    until(&server, "notifications/cancelled", None, 2).await;

    // Dropped once the server has the call.
    {
        let call = client.call_tool("hang", None, CallSettings::new(CALL));
        tokio::pin!(call);
        tokio::select! {
            r = &mut call => panic!("the hanging call returned: {r:?}"),
            () = until(&server, "tools/call", Some("hang"), 3) => {}
        }
    }
    until(&server, "notifications/cancelled", None, 3).await;

    // The server is still usable.
    let result = client
        .call_tool("echo", args(json!({"n": 1})), CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"n": 1})));
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_callback_and_can_restart_the_timeout() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(
        "req",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let result = client
        .call_tool(
            "steps",
            None,
            CallSettings::new(CALL).with_progress(Some(Arc::new(move |p: Progress| {
                sink.lock().unwrap().push(p)
            }))),
        )
        .await
        .unwrap();
    assert_eq!(
        result.structured_content.as_ref().unwrap()["steps"],
        json!(3)
    );
    assert!(
        !result.structured_content.as_ref().unwrap()["progress_token"].is_null(),
        "the call carried a progress token"
    );
    let steps: Vec<(f64, Option<f64>)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total))
        .collect();
    // In increasing order, each with the total; rmcp may drop an update still in flight
    // when the result arrives, so not all three are guaranteed.
    assert!(!steps.is_empty(), "no progress delivered");
    assert!(steps.windows(2).all(|w| w[0].0 < w[1].0), "{steps:?}");
    assert!(
        steps
            .iter()
            .all(|(p, t)| (1.0..=3.0).contains(p) && *t == Some(3.0)),
        "{steps:?}"
    );

    // Six ticks 150 ms apart take about 0.9 s: longer than a 600 ms timeout, unless every
    // tick restarts it.
    let timeout = Duration::from_millis(600);
    let err = client
        .call_tool("ticks", None, CallSettings::new(timeout))
        .await
        .unwrap_err();
    assert_eq!(err, RequestError::Timeout { after: timeout });
    let result = client
        .call_tool(
            "ticks",
            None,
            CallSettings::new(timeout).with_reset_timeout_on_progress(true),
        )
        .await
        .unwrap();
    assert_eq!(
        result.structured_content.as_ref().unwrap()["steps"],
        json!(6)
    );
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_on_one_connection_overlap() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(
        "req",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;
    // Three callers must all be inside the tool at once for any of them to return.
    let calls =
        (0..3).map(|i| client.call_tool("meet", args(json!({ "i": i })), CallSettings::new(CALL)));
    let results = tokio::time::timeout(PATIENCE, futures::future::join_all(calls))
        .await
        .expect("the barrier opens only if the calls overlap");
    let answers: Vec<_> = results
        .into_iter()
        .map(|r| r.unwrap().structured_content.unwrap())
        .collect();
    assert_eq!(answers, [json!({"i": 0}), json!({"i": 1}), json!({"i": 2})]);
    client.shutdown().await;
    server.assert_gone().await;
}

/// Reads, prompts and completions, asked of `client`.
async fn read_prompt_and_complete(client: &Client, label: &str) {
    let read = client.read_resource("file:///notes.txt").await.unwrap();
    let texts: Vec<&str> = read
        .contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => text.as_str(),
            other => panic!("{label}: {other:?}"),
        })
        .collect();
    assert_eq!(texts, ["v1"], "{label}");

    let prompt = client
        .get_prompt("greet", args(json!({"name": "Ada"})))
        .await
        .unwrap();
    let texts: Vec<&str> = prompt
        .messages
        .iter()
        .map(|m| {
            m.content
                .as_text()
                .map(|t| t.text.as_str())
                .unwrap_or_else(|| panic!("{label}: {m:?}"))
        })
        .collect();
    assert_eq!(texts, ["Hello Ada!"], "{label}");

    let names = client
        .complete(
            Reference::for_prompt("greet"),
            ArgumentInfo::new("name", "A"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(names.values, ["Ada", "Alan"], "{label}");
    assert_eq!(names.total, Some(2), "{label}");
    let days = client
        .complete(
            Reference::for_resource("file:///logs/{day}"),
            ArgumentInfo::new("day", "t"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(days.values, ["tuesday"], "{label}");

    // What the server does not have is its error, passed on.
    let err = client.get_prompt("nope", None).await.unwrap_err();
    assert!(
        matches!(err, RequestError::Server { .. }),
        "{label}: {err:?}"
    );
    let err = client
        .complete(
            Reference::for_prompt("nope"),
            ArgumentInfo::new("name", ""),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, RequestError::Server { message, .. } if message.contains("nope")),
        "{label}: {err:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_prompts_and_completions_in_both_eras_over_stdio_and_http() {
    for era in [None, MODERN] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(), era));
        let client = connect(
            "req",
            server.target.clone(),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        read_prompt_and_complete(&client, &format!("stdio {era:?}")).await;
        client.shutdown().await;
        server.assert_gone().await;

        let web = HttpFakeServer::start(in_era(scenario(), era))
            .await
            .unwrap();
        let client = connect(
            "req",
            Target::Http(HttpTarget::new(web.url())),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        read_prompt_and_complete(&client, &format!("http {era:?}")).await;
        client.shutdown().await;
        web.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_are_unsupported_without_the_capability() {
    let home = TestHome::new().unwrap();
    let mut plain = scenario();
    plain.capabilities = CapabilityFlags::default();
    let server = stdio(&home, plain);
    let client = connect(
        "req",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;
    let err = client
        .complete(
            Reference::for_prompt("greet"),
            ArgumentInfo::new("name", "A"),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, RequestError::Unsupported { .. }), "{err:?}");
    assert_eq!(
        count(&server, "completion/complete", None),
        0,
        "never asked"
    );
    let err = client.set_log_level(LogLevel::Debug).await.unwrap_err();
    assert!(matches!(err, RequestError::Unsupported { .. }), "{err:?}");
    client.shutdown().await;
    assert_eq!(count(&server, "logging/setLevel", None), 0, "never asked");
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_level_is_set_in_the_2025_era_and_filters_what_the_server_sends() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(
        "req",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;
    assert_eq!(client.era(), Era::V2025_11_25);
    let mut logs = client.server_logs();
    // No level set: the info message is sent and reaches the host.
    let sent = client
        .call_tool("log", None, CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(sent.structured_content, Some(json!({"sent": 1})));
    let log = tokio::time::timeout(PATIENCE, logs.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (log.server.to_string(), log.logger.as_deref(), log.text()),
        ("req".to_owned(), Some("app"), "hello".to_owned())
    );

    client.set_log_level(LogLevel::Warning).await.unwrap();
    let levels: Vec<_> = server
        .requests("logging/setLevel")
        .iter()
        .map(|r| r.params["level"].clone())
        .collect();
    assert_eq!(levels, [json!("warning")]);
    // An info message is below the level now: the server sends nothing.
    let sent = client
        .call_tool("log", None, CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(sent.structured_content, Some(json!({"sent": 0})));
    client.shutdown().await;
    server.assert_gone().await;

    // A 2026-07-28 server has no logging/setLevel.
    let home = TestHome::new().unwrap();
    let server = stdio(&home, in_era(scenario(), MODERN));
    let client = connect(
        "req",
        server.target.clone(),
        ClientSettings::new(),
        Arc::new(DeclineRequests),
    )
    .await;
    let err = client.set_log_level(LogLevel::Warning).await.unwrap_err();
    assert!(matches!(err, RequestError::Unsupported { .. }), "{err:?}");
    client.shutdown().await;
    server.assert_gone().await;
}
