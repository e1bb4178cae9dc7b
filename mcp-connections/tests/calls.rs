//! Tool names, calls, timeouts, progress, elicitation, list changes and crashes, against real
//! `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Fixture, wait_event};
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    AcceptDefaults, BoxFuture, CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions,
    ElicitationHandler, ElicitationRequest, Error, Progress,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, RecordedRequest, Scenario, ToolSpec};
use serde_json::json;
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn opts() -> ConnectionSetOptions {
    ConnectionSetOptions::new()
        .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
        .with_restart_backoff(Duration::from_millis(50), Duration::from_millis(400))
}

fn valid_model_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colliding_dotted_and_long_tool_names_are_distinct_valid_and_callable() {
    let long = "t".repeat(200);
    let mut fx = Fixture::new();
    fx.stdio(
        "alpha",
        Scenario::new("a")
            .with_tool(ToolSpec::echo("search"))
            .with_tool(ToolSpec::echo("files.read"))
            .with_tool(ToolSpec::echo("files_read"))
            .with_tool(ToolSpec::echo(long.clone())),
    );
    fx.stdio(
        "beta",
        Scenario::new("b").with_tool(ToolSpec::echo("search")),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let tools = set.tools().await;
    assert_eq!(tools.len(), 5);
    let mut names: Vec<&str> = tools.iter().map(|t| t.qualified_name.as_str()).collect();
    assert!(names.iter().all(|n| valid_model_name(n)), "{names:?}");
    names.dedup();
    assert_eq!(names.len(), 5, "names must be distinct: {names:?}");
    assert!(names.contains(&"mcp__alpha__search") && names.contains(&"mcp__beta__search"));

    // Every name routes back to its own raw tool, and calls go through.
    for t in &tools {
        let (server, raw) = set.resolve_tool(&t.qualified_name).unwrap();
        assert_eq!((&server, raw.as_str()), (&t.server, t.raw_name()));
        let r = set
            .call_qualified(
                &t.qualified_name,
                Some(json!({"who": t.raw_name()})),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"who": t.raw_name()})));
    }

    // Stable: a second set over the same catalog gives the same names.
    let again = ConnectionSet::start(&fx.catalog(), opts());
    again.wait_startup().await;
    let names_again: Vec<String> = again
        .tools()
        .await
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    let names: Vec<String> = tools.into_iter().map(|t| t.qualified_name).collect();
    assert_eq!(names, names_again);
    again.shutdown().await;
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_to_one_server_run_in_parallel() {
    let mut fx = Fixture::new();
    fx.stdio_with(
        "par",
        Scenario::new("p").with_tool(ToolSpec::new(
            "meet",
            Behavior::Barrier {
                name: "b".to_owned(),
                parties: 3,
            },
        )),
        |c| c.with_supports_parallel_tool_calls(true),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    assert!(set.can_run_in_parallel(&key("par"), "meet"));
    // Three callers must all be inside the tool at once for any of them to return.
    let calls = (0..3).map(|i| {
        let set = set.clone();
        async move {
            set.call_tool(
                &key("par"),
                "meet",
                Some(json!({"i": i})),
                CallOptions::new(),
            )
            .await
        }
    });
    let results = tokio::time::timeout(Duration::from_secs(20), futures::future::join_all(calls))
        .await
        .expect("the barrier opens only if the calls overlap");
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_errors_are_distinct_and_results_pass_through() {
    let mut fx = Fixture::new();
    fx.stdio_with(
        "svc",
        Scenario::new("s")
            .with_tool(ToolSpec::echo("open"))
            .with_tool(ToolSpec::echo("secret"))
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
            )),
        |c| c.with_tool_filter(mcp_catalog::ToolFilter::new().with_disabled_tools(["secret"])),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;

    let unknown_server = set
        .call_tool(&key("nope"), "open", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(unknown_server, Error::UnknownServer { .. }),
        "{unknown_server}"
    );
    assert!(
        unknown_server.to_string().contains("configured: svc"),
        "{unknown_server}"
    );
    let unknown_tool = set
        .call_qualified("mcp__svc__nope", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(unknown_tool, Error::UnknownTool { .. }),
        "{unknown_tool}"
    );
    let filtered = set
        .call_tool(&key("svc"), "secret", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(filtered.is_filtered(), "{filtered}");
    assert!(set.tools().await.iter().all(|t| t.raw_name() != "secret"));
    let bad_args = set
        .call_tool(&key("svc"), "open", Some(json!([1, 2])), CallOptions::new())
        .await
        .unwrap_err();
    assert_eq!(
        bad_args.to_string(),
        "arguments for tool `open` of MCP server `svc` must be a JSON object, got an array"
    );

    let err_result = set
        .call_tool(&key("svc"), "fails", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(err_result.is_error, Some(true));
    let structured = set
        .call_tool(&key("svc"), "structured", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(
        structured.structured_content,
        Some(json!({"rows": [1, 2, 3]}))
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_call_times_out_and_the_server_stays_usable() {
    let mut fx = Fixture::new();
    fx.stdio_with(
        "slow",
        Scenario::new("s")
            .with_tool(ToolSpec::new("hang", Behavior::Sleep { ms: 60_000 }))
            .with_tool(ToolSpec::echo("echo")),
        |c| c.with_tool_timeout(Duration::from_secs(30)),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let err = set
        .call_tool(
            &key("slow"),
            "hang",
            None,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_millis(300))),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(err.to_string().contains("timed out after 0.3s"), "{err}");
    // Dropping a call future cancels it too: drop it once the server has received the call.
    let log_path = fx.request_log("slow");
    let count = |method: &str| {
        RecordedRequest::read_log(&log_path)
            .iter()
            .filter(|r| {
                r.method == method && (method != "tools/call" || r.params["name"] == json!("hang"))
            })
            .count()
    };
    let until = |method: &'static str, n: usize| {
        let count = &count;
        async move {
            tokio::time::timeout(Duration::from_secs(20), async {
                // Polling another process's log file: there is no event to wait on.
                while count(method) < n {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
            .await
            .is_ok()
        }
    };
    let slow = key("slow");
    {
        let call = set.call_tool(&slow, "hang", None, CallOptions::new());
        tokio::pin!(call);
        tokio::select! {
            r = &mut call => panic!("the hanging call returned: {r:?}"),
            reached = until("tools/call", 2) => assert!(reached, "the second call never arrived"),
        }
    }
    // Both the timeout and the dropped future told the server to stop working.
    assert!(
        until("notifications/cancelled", 2).await,
        "{:?}",
        RecordedRequest::read_log(&log_path)
    );
    set.call_tool(&key("slow"), "echo", None, CallOptions::new())
        .await
        .unwrap();
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_callback() {
    let mut fx = Fixture::new();
    fx.stdio(
        "prog",
        Scenario::new("p").with_tool(ToolSpec::new("work", Behavior::Progress { steps: 3 })),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let r = set
        .call_tool(
            &key("prog"),
            "work",
            None,
            CallOptions::new().with_call(|c| {
                c.with_progress(Some(Arc::new(move |p| sink.lock().unwrap().push(p))))
            }),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content.as_ref().unwrap()["steps"], json!(3));
    let steps: Vec<(f64, Option<f64>)> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|p| (p.progress, p.total))
        .collect();
    // Delivered in increasing order, each with the total; rmcp may reorder or drop an
    // update still in flight when the result arrives, so not all three are guaranteed.
    assert!(!steps.is_empty(), "no progress delivered");
    assert!(steps.windows(2).all(|w| w[0].0 < w[1].0), "{steps:?}");
    assert!(
        steps
            .iter()
            .all(|(p, t)| (1.0..=3.0).contains(p) && *t == Some(3.0)),
        "{steps:?}"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// Answers after a delay longer than the call timeout, recording what it saw.
struct SlowAccept {
    seen: Mutex<Vec<(String, McpServerKey, String)>>,
    delay: Duration,
}

impl ElicitationHandler for SlowAccept {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        self.seen.lock().unwrap().push((
            request.id.clone(),
            request.server.clone(),
            request.message().to_owned(),
        ));
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
        })
    }
}

fn elicit_scenario() -> Scenario {
    Scenario::new("e").with_tool(ToolSpec::new(
        "ask",
        Behavior::ElicitForm {
            message: "Who are you?".to_owned(),
            schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                    "verified": {"type": "boolean", "default": true}
                }
            }),
        },
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_goes_to_the_handler_and_pauses_the_timeout() {
    let mut fx = Fixture::new();
    fx.stdio("asker", elicit_scenario());
    let handler = Arc::new(SlowAccept {
        seen: Mutex::default(),
        delay: Duration::from_millis(800),
    });
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts().with_elicitation_handler(handler.clone()),
    );
    set.wait_startup().await;
    // The handler takes longer than the call timeout; the pending elicitation pauses it.
    let r = set
        .call_tool(
            &key("asker"),
            "ask",
            None,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_millis(500))),
        )
        .await
        .unwrap();
    assert_eq!(
        r.structured_content,
        Some(json!({"action": "accept", "content": {"name": "Ada"}}))
    );
    let seen = handler.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].0.starts_with("elicit-"));
    assert_eq!(
        (&seen[0].1, seen[0].2.as_str()),
        (&key("asker"), "Who are you?")
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_defaults_are_filled_and_no_handler_declines() {
    let mut fx = Fixture::new();
    fx.stdio("asker", elicit_scenario());
    let with_defaults = ConnectionSet::start(
        &fx.catalog(),
        opts().with_elicitation_handler(Arc::new(AcceptDefaults)),
    );
    with_defaults.wait_startup().await;
    let r = with_defaults
        .call_tool(&key("asker"), "ask", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(
        r.structured_content,
        Some(json!({"action": "accept", "content": {
            "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true
        }}))
    );
    with_defaults.shutdown().await;

    let declines = ConnectionSet::start(&fx.catalog(), opts());
    declines.wait_startup().await;
    let r = declines
        .call_tool(&key("asker"), "ask", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(
        r.structured_content.as_ref().unwrap()["action"],
        json!("decline")
    );
    declines.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_refreshes_the_server_and_bumps_the_revision() {
    let mut fx = Fixture::new();
    fx.stdio(
        "dyn",
        Scenario::new("d").with_tool(ToolSpec::new(
            "grow",
            Behavior::ChangeTools {
                add: vec![ToolSpec::echo("fresh")],
                remove: vec![],
            },
        )),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), opts().with_events(tx));
    set.wait_startup().await;
    let before = set.revision();
    assert_eq!(set.tools().await.len(), 1);
    set.call_tool(&key("dyn"), "grow", None, CallOptions::new())
        .await
        .unwrap();
    let e = wait_event(&mut rx, Duration::from_secs(10), |e| {
        matches!(e, ConnectionEvent::ToolsChanged { .. })
    })
    .await;
    assert!(
        matches!(e, ConnectionEvent::ToolsChanged { ref server, revision } if server == &key("dyn") && revision > before)
    );
    let names: Vec<String> = set
        .tools()
        .await
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    assert_eq!(names, vec!["mcp__dyn__fresh", "mcp__dyn__grow"]);
    set.call_qualified("mcp__dyn__fresh", None, CallOptions::new())
        .await
        .unwrap();
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// A started set of one server, `crashy` (its `die` exits, its `echo` echoes), restarted
/// without backoff on next use, and the set's events.
async fn crashy_set() -> (
    Fixture,
    ConnectionSet,
    mpsc::UnboundedReceiver<ConnectionEvent>,
) {
    let mut fx = Fixture::new();
    fx.stdio(
        "crashy",
        Scenario::new("c")
            .with_tool(ToolSpec::new("die", Behavior::Exit { code: 7 }))
            .with_tool(ToolSpec::echo("echo")),
    );
    let (tx, rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts()
            .with_events(tx)
            .with_restart_backoff(Duration::ZERO, Duration::ZERO),
    );
    set.wait_startup().await;
    (fx, set, rx)
}

/// Makes `crashy` exit and waits until the set saw it fail.
async fn crash(set: &ConnectionSet, events: &mut mpsc::UnboundedReceiver<ConnectionEvent>) {
    let _ = set
        .call_tool(&key("crashy"), "die", None, CallOptions::new())
        .await;
    wait_event(
        events,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::Failed { server, .. } if server == &key("crashy")),
    )
    .await;
}

/// A host that must know which tool a qualified name means before it calls (to ask for
/// approval) gets it from `resolve_tool_settled` even while the server is down: the server
/// is brought up first, as a call would, and only that server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_tool_settled_brings_a_crashed_server_up_before_resolving() {
    let (fx, set, mut rx) = crashy_set().await;
    let first_pid = fx.pids()[0];
    crash(&set, &mut rx).await;
    // Down, its tools are still known (last listing, not ready).
    assert_eq!(
        set.resolve_tool("mcp__crashy__echo"),
        Some((key("crashy"), "echo".to_owned()))
    );
    assert_eq!(
        set.resolve_tool_settled("mcp__crashy__echo").await,
        Some((key("crashy"), "echo".to_owned()))
    );
    // A call brings it back.
    set.call_qualified("mcp__crashy__echo", None, CallOptions::new())
        .await
        .unwrap();
    assert_ne!(fx.pids()[0], first_pid, "a new process");
    assert_eq!(set.resolve_tool_settled("mcp__nobody__echo").await, None);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// `not_ready_owner` names the server a name's namespace belongs to only while that
/// server is not ready: a ready server's names resolve through the catalog, and a name in
/// nobody's namespace has no owner.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_in_a_down_servers_namespace_names_its_owner() {
    let (fx, set, mut rx) = crashy_set().await;
    assert_eq!(set.not_ready_owner("mcp__crashy__made_up"), None, "ready");
    crash(&set, &mut rx).await;
    assert_eq!(
        set.not_ready_owner("mcp__crashy__made_up"),
        Some(key("crashy"))
    );
    assert_eq!(set.not_ready_owner("mcp__nobody__echo"), None);
    assert_eq!(set.not_ready_owner("mcp__crashy__"), None, "no tool part");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// A server killed with SIGKILL keeps its tools in the catalog and in search, marked not
/// ready, with a `ToolsChanged` after its `Failed`; a made-up name in its namespace starts
/// nothing; `ensure_started` brings it back (a new process) and its tools are ready again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_servers_tools_stay_findable_and_ensure_started_brings_it_back() {
    let (fx, set, mut rx) = crashy_set().await;
    let names = |tools: &[mcp_connections::ToolInfo]| {
        tools
            .iter()
            .map(|t| (t.qualified_name.clone(), t.ready))
            .collect::<Vec<_>>()
    };
    let ready = vec![
        ("mcp__crashy__die".to_owned(), true),
        ("mcp__crashy__echo".to_owned(), true),
    ];
    assert_eq!(names(&set.tools().await), ready);
    let first_pid = fx.pids()[0];
    mcp_testkit::kill_process(first_pid);
    wait_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::Failed { server, .. } if server == &key("crashy")),
    )
    .await;
    let changed = wait_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::ToolsChanged { server, .. } if server == &key("crashy")),
    )
    .await;
    let ConnectionEvent::ToolsChanged { revision, .. } = changed else {
        unreachable!()
    };
    assert_eq!(revision, set.revision());
    let down = vec![
        ("mcp__crashy__die".to_owned(), false),
        ("mcp__crashy__echo".to_owned(), false),
    ];
    assert_eq!(names(&set.tools().await), down);
    let hits = set.search_tools("echo", 5).unwrap();
    assert!(
        hits.iter()
            .any(|h| h.info.qualified_name == "mcp__crashy__echo"),
        "{hits:?}"
    );
    // A name no listing of the server has starts nothing.
    let err = set
        .call_qualified("mcp__crashy__made_up", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_not_ready(), "{err}");
    assert_eq!(set.resolve_tool_settled("mcp__crashy__made_up").await, None);
    assert_eq!(fx.pids()[0], first_pid, "nothing was started");
    // Brought back explicitly.
    set.ensure_started(&key("crashy")).await.unwrap();
    assert_ne!(fx.pids()[0], first_pid, "a new process");
    assert_eq!(names(&set.tools().await), ready);
    set.ensure_started(&key("crashy")).await.unwrap();
    assert!(set.ensure_started(&key("nobody")).await.is_err());
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// `resolve_qualified` is `resolve_tool_settled` with the reason: unknown names and names a
/// crashed server never listed are errors that say so (starting nothing), a crashed
/// server's known tool brings the server up and resolves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_qualified_says_why_a_name_resolves_to_nothing() {
    let (fx, set, mut rx) = crashy_set().await;
    let err = set
        .resolve_qualified("mcp__nobody__echo")
        .await
        .unwrap_err();
    assert!(err.is_unknown(), "{err}");
    crash(&set, &mut rx).await;
    let crashed = fx.pids();
    let err = set
        .resolve_qualified("mcp__crashy__made_up")
        .await
        .unwrap_err();
    assert!(err.is_not_ready(), "{err}");
    assert!(err.to_string().contains("crashy"), "{err}");
    assert_eq!(fx.pids(), crashed, "nothing started for a made-up name");
    assert_eq!(
        set.resolve_qualified("mcp__crashy__echo").await.unwrap(),
        (key("crashy"), "echo".to_owned())
    );
    assert_ne!(fx.pids(), crashed, "the known tool's server was brought up");
    assert!(set.tools().await.iter().all(|t| t.ready));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_fails_promptly_and_the_next_use_restarts_the_server() {
    let mut fx = Fixture::new();
    fx.stdio(
        "crashy",
        Scenario::new("c")
            .with_tool(ToolSpec::new("die", Behavior::Exit { code: 7 }))
            .with_tool(ToolSpec::echo("echo")),
    );
    fx.stdio(
        "steady",
        Scenario::new("s").with_tool(ToolSpec::echo("echo")),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    // No backoff: the next use may restart at once (the backoff has its own test).
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts()
            .with_events(tx)
            .with_restart_backoff(Duration::ZERO, Duration::ZERO),
    );
    set.wait_startup().await;
    let first_pid = fx.pids()[0];
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        set.call_tool(&key("crashy"), "die", None, CallOptions::new()),
    )
    .await
    .expect("a crash ends the pending call promptly")
    .unwrap_err();
    assert!(matches!(err, Error::Disconnected { .. }), "{err}");
    let chain = mcp_key::error_chain(&err);
    assert!(chain.contains("exited with status 7"), "{chain}");
    wait_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::Failed { server, .. } if server == &key("crashy")),
    )
    .await;
    // The other server is unaffected.
    set.call_tool(&key("steady"), "echo", None, CallOptions::new())
        .await
        .unwrap();
    // The next use restarts it as a new process.
    let r = set
        .call_tool(
            &key("crashy"),
            "echo",
            Some(json!({"again": true})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"again": true})));
    let second_pid = fx.pids()[0];
    assert_ne!(first_pid, second_pid);
    assert!(mcp_testkit::wait_gone(first_pid, Duration::from_secs(5)).await);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_owned_meta_keys_are_stripped_from_caller_meta() {
    let mut fx = Fixture::new();
    fx.stdio("m", Scenario::new("m").with_tool(ToolSpec::echo("echo")));
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts().with_reserved_meta_prefix("host.example/"),
    );
    set.wait_startup().await;
    let mut meta = serde_json::Map::new();
    meta.insert("host.example/approved".to_owned(), json!(true));
    meta.insert("trace".to_owned(), json!("abc"));
    set.call_tool(
        &key("m"),
        "echo",
        None,
        CallOptions::new().with_call(|c| c.with_meta(Some(meta))),
    )
    .await
    .unwrap();
    set.shutdown().await;
    let calls: Vec<RecordedRequest> = RecordedRequest::read_log(fx.request_log("m"))
        .into_iter()
        .filter(|r| r.method == "tools/call")
        .collect();
    assert_eq!(calls.len(), 1);
    let sent = &calls[0].params["_meta"];
    assert_eq!(sent["trace"], json!("abc"));
    assert!(sent.get("host.example/approved").is_none(), "{sent}");
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_across_servers_and_read() {
    let mut fx = Fixture::new();
    fx.stdio(
        "docs",
        Scenario::new("d")
            .with_resource(mcp_testkit::ResourceSpec::new(
                "file:///readme",
                "readme",
                "hello",
            ))
            .with_resource_template(mcp_testkit::ResourceTemplateSpec::new(
                "file:///{path}",
                "files",
            )),
    );
    fx.stdio(
        "more",
        Scenario::new("m")
            .with_resource(mcp_testkit::ResourceSpec::new("mem://a", "a", "A"))
            .with_faults(common::faults(|f| f.page_size = Some(1))),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let listing = set.list_resources().await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    let uris: Vec<(String, String)> = listing
        .items
        .iter()
        .map(|i| (i.server.to_string(), i.item.uri.clone()))
        .collect();
    assert_eq!(
        uris,
        vec![
            ("docs".to_owned(), "file:///readme".to_owned()),
            ("more".to_owned(), "mem://a".to_owned())
        ]
    );
    assert!(listing.items.iter().all(|i| i.environment_id.is_none()));
    let templates = set.list_resource_templates().await;
    assert_eq!(templates.items.len(), 1);
    let read = set
        .read_resource(&key("docs"), "file:///readme")
        .await
        .unwrap();
    let text = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(text["text"], json!("hello"));
    let page = set.list_resources_page(&key("more"), None).await.unwrap();
    assert_eq!(page.items.len(), 1);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_not_restarted_during_its_backoff() {
    let mut fx = Fixture::new();
    fx.stdio(
        "crashy",
        Scenario::new("c").with_tool(ToolSpec::new("die", Behavior::Exit { code: 7 })),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts()
            .with_events(tx)
            .with_restart_backoff(Duration::from_secs(60), Duration::from_secs(120)),
    );
    set.wait_startup().await;
    let first_pid = fx.pids()[0];
    let failed = |e: &ConnectionEvent| matches!(e, ConnectionEvent::Failed { server, .. } if server == &key("crashy"));
    set.call_tool(&key("crashy"), "die", None, CallOptions::new())
        .await
        .unwrap_err();
    wait_event(&mut rx, Duration::from_secs(10), failed).await;
    // One crash: the next use restarts it at once (a new process), which dies too.
    set.call_tool(&key("crashy"), "die", None, CallOptions::new())
        .await
        .unwrap_err();
    wait_event(&mut rx, Duration::from_secs(10), failed).await;
    let second_pid = fx.pids()[0];
    assert_ne!(second_pid, first_pid);

    // Two in a row: a crash loop, a typed state in events and in status.
    let event = wait_event(
        &mut rx,
        Duration::from_secs(10),
        |e| matches!(e, ConnectionEvent::CrashLoop { server, .. } if server == &key("crashy")),
    )
    .await;
    let ConnectionEvent::CrashLoop { crash_loop, .. } = event else {
        unreachable!()
    };
    assert_eq!(crash_loop.crashes, 2);
    assert!(
        crash_loop.retry_in > Duration::from_secs(50),
        "{crash_loop:?}"
    );
    let crash_loop = set.status()[0].crash_loop.expect("a crash loop in status");
    assert_eq!(crash_loop.crashes, 2);

    let err = set
        .call_tool(&key("crashy"), "die", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_not_ready(), "{err}");
    assert!(
        err.to_string()
            .contains("crash loop: 2 failures in a row; next restart in"),
        "{err}"
    );
    // No new process was started during the backoff.
    assert_eq!(fx.pids(), vec![second_pid]);
    // Asked for explicitly, it is held back too: ensure_started says when, starting
    // nothing; and its tools stay listed, not ready.
    let held = set.ensure_started(&key("crashy")).await.unwrap_err();
    assert!(held.is_not_ready(), "{held}");
    assert!(held.to_string().contains("next restart in"), "{held}");
    assert_eq!(fx.pids(), vec![second_pid]);
    assert!(set.tools().await.iter().all(|t| !t.ready));
    // A host that knows the cause went away starts it now, backoff or not.
    set.start_now(&key("crashy")).await.unwrap();
    let third_pid = fx.pids()[0];
    assert_ne!(third_pid, second_pid);
    assert!(set.tools().await.iter().all(|t| t.ready));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_across_servers_and_got_from_their_server() {
    let mut fx = Fixture::new();
    fx.stdio(
        "writer",
        Scenario::new("w").with_prompt(
            mcp_testkit::PromptSpec::new("greet", "Say hello to {who}.").with_argument("who"),
        ),
    );
    fx.stdio(
        "plain",
        Scenario::new("p").with_tool(ToolSpec::echo("echo")),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let listing = set.list_prompts().await;
    // The server without prompts is left out, not reported as failing.
    assert_eq!(listing.failures, vec![]);
    let names: Vec<(String, String)> = listing
        .items
        .iter()
        .map(|i| (i.server.to_string(), i.item.name.clone()))
        .collect();
    assert_eq!(names, vec![("writer".to_owned(), "greet".to_owned())]);
    let mut args = serde_json::Map::new();
    args.insert("who".into(), json!("you"));
    let got = set
        .get_prompt(&key("writer"), "greet", Some(args))
        .await
        .unwrap();
    let text = serde_json::to_value(&got.messages[0]).unwrap();
    assert_eq!(text["content"]["text"], json!("Say hello to you."));
    // A missing argument is the server's error, named.
    let err = set
        .get_prompt(&key("writer"), "greet", None)
        .await
        .unwrap_err();
    assert!(err.is_server_error(), "{err}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// Progress restarts a call's timeout only when the call asks for it.
mod progress_and_timeout {
    use crate::common::Fixture;
    use std::sync::Arc;
    use std::time::Duration;

    use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
    use mcp_key::McpServerKey;
    use mcp_testkit::{Behavior, Scenario, ToolSpec};
    use serde_json::json;

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    fn opts() -> ConnectionSetOptions {
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn progress_resets_the_timeout_only_when_asked() {
        let mut fx = Fixture::new();
        // 8 notifications 150 ms apart: 1.2 s in all, against a 600 ms timeout.
        fx.stdio(
            "slow",
            Scenario::new("slow").with_tool(ToolSpec::new(
                "work",
                Behavior::SlowProgress {
                    steps: 8,
                    interval_ms: 150,
                },
            )),
        );
        let set = ConnectionSet::start(&fx.catalog(), opts());
        set.wait_startup().await;
        let timeout = Duration::from_millis(600);
        let with_progress = |reset: bool| {
            CallOptions::new().with_call(|c| {
                c.with_timeout(timeout)
                    .with_progress(Some(Arc::new(|_| {})))
                    .with_reset_timeout_on_progress(reset)
            })
        };
        let err = set
            .call_tool(&key("slow"), "work", None, with_progress(false))
            .await
            .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        let done = set
            .call_tool(&key("slow"), "work", None, with_progress(true))
            .await
            .unwrap();
        assert_eq!(done.structured_content.unwrap()["steps"], json!(8));
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

/// A name looked up while its server attaches: a set that starts on a pool whose
/// connection is already up (as a gateway's per-request sets do) becomes ready within
/// moments, and a lookup racing that moment must still find the tool, never call it
/// unknown because the server was starting at the first look and ready at the second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_resolved_while_its_server_attaches_is_found() {
    let mut fx = Fixture::new();
    fx.stdio(
        "quick",
        Scenario::new("q").with_tool(ToolSpec::echo("echo")),
    );
    let pool = mcp_connections::ServerPool::new();
    let warm = ConnectionSet::start(&fx.catalog(), opts().with_shared_pool(pool.clone()));
    assert_eq!(warm.wait_startup().await.ready(), 1);
    for round in 0..300 {
        let set = ConnectionSet::start(&fx.catalog(), opts().with_shared_pool(pool.clone()));
        assert_eq!(
            set.resolve_tool_settled("mcp__quick__echo").await,
            Some((key("quick"), "echo".to_owned())),
            "round {round}: resolve_tool_settled"
        );
        drop(set);
        let set = ConnectionSet::start(&fx.catalog(), opts().with_shared_pool(pool.clone()));
        let called = set
            .call_qualified("mcp__quick__echo", None, CallOptions::new())
            .await;
        assert!(called.is_ok(), "round {round}: call_qualified: {called:?}");
        drop(set);
    }
    warm.shutdown().await;
    pool.shutdown().await;
    assert_eq!(fx.pids().len(), 1, "one process for every set");
    fx.assert_no_processes().await;
}

/// `resolve_qualified_now` says what a fail-fast call of a name would reach, without
/// calling: the tool when the name resolves, else the call's error (unknown, or not
/// ready with why), starting nothing for a crashed server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_qualified_now_reports_without_calling_or_starting() {
    let (fx, set, mut rx) = crashy_set().await;
    assert_eq!(
        set.resolve_qualified_now("mcp__crashy__echo")
            .await
            .unwrap(),
        (key("crashy"), "echo".to_owned())
    );
    assert!(
        set.resolve_qualified_now("mcp__nobody__echo")
            .await
            .unwrap_err()
            .is_unknown()
    );
    crash(&set, &mut rx).await;
    let crashed = fx.pids();
    let down = set
        .resolve_qualified_now("mcp__crashy__echo")
        .await
        .unwrap_err();
    assert!(
        matches!(down, mcp_connections::Error::NotReady { .. }),
        "{down:?}"
    );
    assert_eq!(fx.pids(), crashed, "no new process was started");
    let log = RecordedRequest::read_log(fx.request_log("crashy"));
    assert!(
        !log.iter()
            .any(|r| r.method == "tools/call" && r.params["name"] == "echo"),
        "nothing was called"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}
