//! Concurrent startup, events, required servers, and startup faults, against real
//! `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{Fixture, events_until_complete, faults};
use mcp_connections::{ConnectionEvent, ConnectionSet, ConnectionSetOptions, FailureReason};
use mcp_key::McpServerKey;
use mcp_testkit::{Scenario, ToolSpec};
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn echo_scenario(name: &str) -> Scenario {
    Scenario::new(name).with_tool(ToolSpec::echo("echo"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_servers_start_concurrently_and_a_hanging_one_times_out() {
    let mut fx = Fixture::new();
    for i in 0..15 {
        fx.stdio(&format!("s{i:02}"), echo_scenario("ok"));
    }
    fx.stdio_with(
        "hangs",
        echo_scenario("hang").with_faults(faults(|f| f.hang_initialize = true)),
        |c| c.with_startup_timeout(Duration::from_secs(2)),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_events(tx)
            .with_client(|c| c.with_process_grace(Duration::from_millis(200))),
    );
    let events = events_until_complete(&mut rx, Duration::from_secs(60)).await;

    // Per server: Starting first, then exactly one terminal event.
    let mut per_server: BTreeMap<McpServerKey, Vec<&ConnectionEvent>> = BTreeMap::new();
    for e in &events {
        if let Some(k) = e.server() {
            per_server.entry(k.clone()).or_default().push(e);
        }
    }
    assert_eq!(per_server.len(), 16);
    for (k, evs) in &per_server {
        assert_eq!(evs.len(), 2, "{k}: {evs:?}");
        assert!(
            matches!(evs[0], ConnectionEvent::Starting { .. }),
            "{k}: {evs:?}"
        );
        if k == &key("hangs") {
            match evs[1] {
                ConnectionEvent::Failed { error, reason, .. } => {
                    assert_eq!(reason, &FailureReason::Timeout);
                    assert!(error.contains("startup_timeout_sec"), "{error}");
                    assert!(error.contains("`hangs`"), "{error}");
                }
                other => panic!("hangs: {other:?}"),
            }
        } else {
            assert!(
                matches!(evs[1], ConnectionEvent::Ready { tools: 1, .. }),
                "{k}: {evs:?}"
            );
        }
    }
    match events.last() {
        Some(ConnectionEvent::StartupComplete {
            ready,
            failed,
            cancelled,
        }) => {
            assert_eq!(ready.len(), 15);
            assert_eq!(failed, &vec![key("hangs")]);
            assert!(cancelled.is_empty());
        }
        other => panic!("last event: {other:?}"),
    }
    // The other fifteen work.
    assert_eq!(set.tools().await.len(), 15);
    let r = set
        .call_qualified(
            "mcp__s07__echo",
            Some(serde_json::json!({"x": 1})),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(serde_json::json!({"x": 1})));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_at_startup_is_classified_with_status_and_stderr() {
    let mut fx = Fixture::new();
    fx.stdio(
        "dies",
        echo_scenario("dies").with_faults(faults(|f| {
            f.exit_at_startup = Some(3);
            f.stderr = Some("fatal: missing API key".to_owned());
        })),
    );
    fx.stdio("fine", echo_scenario("fine"));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    let summary = set.wait_startup().await;
    assert_eq!(summary.ready(), 1);
    let status = set.status();
    let dies = status.iter().find(|s| s.key == key("dies")).unwrap();
    match &dies.state {
        mcp_connections::ServerState::Failed(f) => {
            assert_eq!(
                f.reason(),
                &FailureReason::Exited {
                    status: Some(3),
                    signal: None
                }
            );
            assert_eq!(f.stderr_tail(), Some("fatal: missing API key"));
            assert!(f.to_string().contains("exited with status 3"), "{f}");
        }
        other => panic!("{other:?}"),
    }
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_program_is_a_spawn_failure_naming_the_command() {
    let mut fx = Fixture::new();
    fx.add(
        "ghost",
        mcp_catalog::ServerConfig::stdio("definitely-not-installed-mcp-server"),
    );
    fx.stdio("fine", echo_scenario("fine"));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let st = set.status();
    let ghost = st.iter().find(|s| s.key == key("ghost")).unwrap();
    let mcp_connections::ServerState::Failed(f) = &ghost.state else {
        panic!("{ghost:?}");
    };
    assert_eq!(f.reason(), &FailureReason::SpawnFailed);
    assert!(
        f.chain()
            .contains("`definitely-not-installed-mcp-server` not found"),
        "{}",
        f.chain()
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_faults_are_classified_and_do_not_disturb_others() {
    let mut fx = Fixture::new();
    fx.stdio(
        "huge",
        echo_scenario("huge").with_faults(faults(|f| f.huge_line = Some(9 * 1024 * 1024))),
    );
    fx.stdio(
        "repeat",
        echo_scenario("repeat").with_faults(faults(|f| {
            f.page_size = Some(1);
            f.repeating_cursor = true;
        })),
    );
    fx.stdio(
        "endless",
        echo_scenario("endless").with_faults(faults(|f| {
            f.page_size = Some(1);
            f.endless_pages = true;
        })),
    );
    fx.stdio(
        "flood",
        echo_scenario("flood").with_faults(faults(|f| f.flood_stderr = Some(20_000))),
    );
    fx.stdio(
        "garbage",
        echo_scenario("garbage").with_faults(faults(|f| f.garbage_stdout = true)),
    );
    fx.stdio("fine", echo_scenario("fine"));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let by_key: BTreeMap<McpServerKey, mcp_connections::ServerState> =
        set.status().into_iter().map(|s| (s.key, s.state)).collect();
    let failure = |name: &str| match &by_key[&key(name)] {
        mcp_connections::ServerState::Failed(f) => f.clone(),
        other => panic!("{name}: {other:?}"),
    };
    let huge = failure("huge");
    assert_eq!(huge.reason(), &FailureReason::Protocol);
    assert!(huge.to_string().contains("longer than"), "{huge}");
    let repeat = failure("repeat");
    assert_eq!(repeat.reason(), &FailureReason::Protocol);
    assert!(repeat.to_string().contains("repeated a cursor"), "{repeat}");
    let endless = failure("endless");
    assert!(
        endless.to_string().contains("more than 100 pages"),
        "{endless}"
    );
    // A stray non-JSON line on stdout (a log print) is skipped by rmcp's codec: the server
    // is usable. A stderr flood is survivable too.
    assert!(matches!(
        by_key[&key("garbage")],
        mcp_connections::ServerState::Ready { .. }
    ));
    set.call_tool(&key("garbage"), "echo", None, Default::default())
        .await
        .unwrap();
    assert!(matches!(
        by_key[&key("flood")],
        mcp_connections::ServerState::Ready { .. }
    ));
    assert!(matches!(
        by_key[&key("fine")],
        mcp_connections::ServerState::Ready { tools: 1 }
    ));
    set.call_tool(&key("fine"), "echo", None, Default::default())
        .await
        .unwrap();
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_required_lists_every_failed_required_server() {
    let mut fx = Fixture::new();
    fx.stdio_with(
        "alpha",
        echo_scenario("a").with_faults(faults(|f| f.exit_at_startup = Some(2))),
        |c| c.with_required(true),
    );
    fx.add(
        "beta",
        mcp_catalog::ServerConfig::stdio("no-such-binary-beta").with_required(true),
    );
    fx.stdio_with("gamma", echo_scenario("g"), |c| c.with_required(true));
    fx.stdio(
        "optional",
        echo_scenario("o").with_faults(faults(|f| f.exit_at_startup = Some(1))),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    let err = set.wait_required().await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("required MCP servers failed to initialize: alpha: "),
        "{text}"
    );
    assert!(text.contains("; beta: "), "{text}");
    assert!(
        !text.contains("gamma") && !text.contains("optional"),
        "{text}"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_startup_marks_pending_servers_and_keeps_ready_ones() {
    let mut fx = Fixture::new();
    fx.stdio("quick", echo_scenario("q"));
    fx.stdio(
        "slow",
        echo_scenario("s").with_faults(faults(|f| f.hang_initialize = true)),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_events(tx)
            .with_client(|c| c.with_process_grace(Duration::from_millis(200))),
    );
    common::wait_event(
        &mut rx,
        Duration::from_secs(30),
        |e| matches!(e, ConnectionEvent::Ready { server, .. } if server == &key("quick")),
    )
    .await;
    set.cancel_startup();
    let events = events_until_complete(&mut rx, Duration::from_secs(30)).await;
    assert!(
        events.contains(&ConnectionEvent::Cancelled {
            server: key("slow")
        }),
        "{events:?}"
    );
    match events.last() {
        Some(ConnectionEvent::StartupComplete {
            ready, cancelled, ..
        }) => {
            assert_eq!(ready, &vec![key("quick")]);
            assert_eq!(cancelled, &vec![key("slow")]);
        }
        other => panic!("{other:?}"),
    }
    set.call_tool(&key("quick"), "echo", None, Default::default())
        .await
        .unwrap();
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_completes_even_when_its_caller_gives_up() {
    let mut fx = Fixture::new();
    // Ignores SIGTERM, so shutdown has to wait for the SIGKILL step.
    fx.stdio(
        "stubborn",
        echo_scenario("s").with_faults(faults(|f| f.ignore_sigterm = true)),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300))),
    );
    set.wait_startup().await;
    let pid = fx.pids()[0];
    // The caller stops waiting almost at once; the shutdown goes on without it.
    let gave_up = tokio::time::timeout(Duration::from_millis(50), set.shutdown()).await;
    assert!(gave_up.is_err(), "the SIGKILL path takes longer than 50 ms");
    assert!(
        mcp_testkit::wait_gone(pid, Duration::from_secs(10)).await,
        "the server was killed by the detached shutdown"
    );
    let err = set
        .call_tool(&key("stubborn"), "echo", None, Default::default())
        .await
        .unwrap_err();
    assert!(matches!(err, mcp_connections::Error::ShutDown), "{err}");
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_set_without_shutdown_kills_its_processes() {
    let mut fx = Fixture::new();
    fx.stdio("a", echo_scenario("a"));
    fx.stdio("b", echo_scenario("b"));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    assert_eq!(fx.pids().len(), 2);
    drop(set);
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_tools_list_times_out_at_the_startup_deadline_and_a_merely_slow_one_is_ready() {
    let mut fx = Fixture::new();
    // The budget covers create + initialize + tools/list: a list answered after 60 s
    // must fail at the 2 s deadline, not when the answer comes.
    fx.stdio_with(
        "stuck",
        echo_scenario("stuck").with_faults(faults(|f| f.list_delay_ms = Some(60_000))),
        |c| c.with_startup_timeout(Duration::from_secs(2)),
    );
    // Slow (two pages of 300 ms each) but well within its budget.
    fx.stdio_with(
        "slowish",
        Scenario::new("slowish")
            .with_tool(ToolSpec::echo("a"))
            .with_tool(ToolSpec::echo("b"))
            .with_faults(faults(|f| {
                f.list_delay_ms = Some(300);
                f.page_size = Some(1);
            })),
        |c| c.with_startup_timeout(Duration::from_secs(30)),
    );
    let started = std::time::Instant::now();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_events(tx)
            .with_client(|c| c.with_process_grace(Duration::from_millis(200))),
    );
    let failed = common::wait_event(
        &mut rx,
        Duration::from_secs(30),
        |e| matches!(e, ConnectionEvent::Failed { server, .. } if server == &key("stuck")),
    )
    .await;
    let elapsed = started.elapsed();
    match &failed {
        ConnectionEvent::Failed { error, reason, .. } => {
            assert_eq!(reason, &FailureReason::Timeout);
            assert!(error.contains("startup_timeout_sec"), "{error}");
            assert!(error.contains("tools/list"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    // At the deadline: not before it, and far from the 60 s the answer would take
    // (a generous bound for a shared machine, not a measurement).
    assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    // The server asked for its tools, and the failed server's process is gone before
    // the set is shut down.
    let logged = std::fs::read_to_string(fx.request_log("stuck")).unwrap_or_default();
    assert!(logged.contains("tools/list"), "{logged}");
    let stuck_pid = mcp_testkit::read_pid_file(fx.home.join("stuck.pid")).unwrap();
    assert!(mcp_testkit::wait_gone(stuck_pid, Duration::from_secs(10)).await);
    mcp_testkit::assert_no_process_group(stuck_pid);

    let events = events_until_complete(&mut rx, Duration::from_secs(60)).await;
    match events.last() {
        Some(ConnectionEvent::StartupComplete { ready, failed, .. }) => {
            assert_eq!(ready, &vec![key("slowish")]);
            assert_eq!(failed, &vec![key("stuck")]);
        }
        other => panic!("last event: {other:?}"),
    }
    let mut tools: Vec<String> = set
        .tools()
        .await
        .iter()
        .map(|t| t.qualified_name.clone())
        .collect();
    tools.sort();
    assert_eq!(tools, ["mcp__slowish__a", "mcp__slowish__b"]);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// A required server whose start is cancelled is reported as cancelled.
mod cancelled_required {

    use crate::common::{Fixture, faults};
    use std::time::Duration;

    use mcp_connections::{ConnectionSet, ConnectionSetOptions, Error, FailureReason};
    use mcp_key::McpServerKey;
    use mcp_testkit::Scenario;

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    fn opts() -> ConnectionSetOptions {
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_required_server_is_reported_as_cancelled() {
        let mut fx = Fixture::new();
        fx.stdio_with(
            "needed",
            Scenario::new("needed").with_faults(faults(|f| f.hang_initialize = true)),
            |c| c.with_required(true),
        );
        let set = ConnectionSet::start(&fx.catalog(), opts());
        set.cancel_startup();
        let err = set.wait_required().await.unwrap_err();
        let Error::RequiredServersFailed { failures } = &err else {
            panic!("{err}");
        };
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].0, key("needed"));
        assert_eq!(failures[0].1.reason(), &FailureReason::Cancelled, "{err}");
        assert!(!err.to_string().contains("timeout"), "{err}");
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

/// A call in flight when `shutdown()` begins ends with `ShutDown` (not retryable), never
/// with `Disconnected`, whichever of the abort and the closed connection the call sees
/// first; so does every call made after. Several rounds, since the order is a race.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_during_shutdown_ends_shut_down_every_time() {
    let mut fx = Fixture::new();
    fx.stdio(
        "slow",
        Scenario::new("slow").with_tool(ToolSpec::new(
            "nap",
            mcp_testkit::Behavior::Sleep { ms: 5_000 },
        )),
    );
    let catalog = fx.catalog();
    for round in 0..10 {
        let set = ConnectionSet::start(
            &catalog,
            ConnectionSetOptions::new()
                .with_client(|c| c.with_process_grace(Duration::from_millis(200))),
        );
        set.wait_startup().await;
        let calls = || {
            mcp_testkit::RecordedRequest::read_log(fx.request_log("slow"))
                .iter()
                .filter(|r| r.method == "tools/call")
                .count()
        };
        let before = calls();
        let call = {
            let set = set.clone();
            tokio::spawn(async move {
                set.call_tool(&key("slow"), "nap", None, Default::default())
                    .await
            })
        };
        // The call is in flight: the server has it.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while calls() <= before {
            assert!(
                std::time::Instant::now() < deadline,
                "round {round}: the call never arrived"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        set.shutdown().await;
        let err = call.await.unwrap().unwrap_err();
        assert!(
            err.is_shut_down() && !err.is_retryable(),
            "round {round}: {err:?}"
        );
        let after = set
            .call_tool(&key("slow"), "nap", None, Default::default())
            .await
            .unwrap_err();
        assert!(after.is_shut_down(), "round {round}: {after:?}");
    }
    fx.assert_no_processes().await;
}

/// The quick start of the crate docs and README (`wait_startup`, then `tools`) lists the
/// tools of a server that takes 2 s to start: longer than any grace a host might pick,
/// and the quick start's own `npx -y …` server takes that long on a first run. With
/// `wait_required` (the quick start before) this listed nothing: no server is required.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quick_start_lists_the_tools_of_a_server_slow_to_start() {
    let mut fx = Fixture::new();
    fx.stdio(
        "files",
        echo_scenario("files").with_faults(faults(|f| f.init_delay_ms = Some(2_000))),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let names: Vec<String> = set
        .tools()
        .await
        .iter()
        .map(|t| t.qualified_name.to_string())
        .collect();
    assert_eq!(names, vec!["mcp__files__echo".to_owned()]);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// After `shutdown()` every server process is gone; the one process left is the
/// launcher's reaper helper, which `ConnectionSet::reaper_pid` names so a host's leak
/// check can tell it apart: alive, named `mcp-pool-reaper`, and not any server's pid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reaper_helper_is_the_one_process_left_and_is_named() {
    let mut fx = Fixture::new();
    fx.stdio("a", echo_scenario("a"));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let servers = fx.pids();
    set.shutdown().await;
    fx.assert_no_processes().await;
    let reaper = ConnectionSet::reaper_pid().expect("a stdio launch started the reaper");
    assert!(!servers.contains(&reaper));
    let cmdline = std::fs::read(format!("/proc/{reaper}/cmdline")).expect("the reaper lives");
    let cmdline = String::from_utf8_lossy(&cmdline);
    assert!(cmdline.contains("mcp-pool-reaper"), "{cmdline:?}");
}
