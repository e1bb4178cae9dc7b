//! One lifecycle shared by every session: connection sets over one `ServerPool`, against
//! real `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_catalog::{ServerConfig, Transport};
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, ServerPool, ServerState,
    elicitation_fn,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

fn opts(pool: &ServerPool) -> ConnectionSetOptions {
    ConnectionSetOptions::new()
        .with_shared_pool(pool.clone())
        .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
}

fn ask_scenario(name: &str) -> Scenario {
    Scenario::new(name)
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::ElicitForm {
                message: "who are you?".into(),
                schema: json!({"type": "object", "properties": {"who": {"type": "string"}}}),
            },
        ))
}

/// An elicitation handler that answers with its session's name and records each request.
fn answering(who: &'static str, seen: &Arc<Mutex<Vec<String>>>) -> ConnectionSetOptions {
    let seen = Arc::clone(seen);
    ConnectionSetOptions::new().with_elicitation_handler(elicitation_fn(move |request| {
        let seen = Arc::clone(&seen);
        async move {
            seen.lock()
                .unwrap()
                .push(format!("{who}:{}", request.server));
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"who": who}))
        }
    }))
}

fn with_env(config: ServerConfig, name: &str, value: &str) -> ServerConfig {
    match config.transport().clone() {
        Transport::Stdio(stdio) => {
            config.with_transport(Transport::Stdio(stdio.with_env(name, value)))
        }
        _ => config,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_share_eight_servers_and_requests_reach_only_their_caller() {
    let mut fx = Fixture::new();
    let names: Vec<String> = (0..8).map(|i| format!("s{i}")).collect();
    for name in &names {
        fx.stdio(name, ask_scenario(name));
    }
    let catalog = fx.catalog();
    let pool = ServerPool::new();
    let (seen_a, seen_b) = (Arc::default(), Arc::default());
    let options = |who, seen| {
        answering(who, seen)
            .with_shared_pool(pool.clone())
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    };
    let a = ConnectionSet::start(&catalog, options("A", &seen_a));
    let b = ConnectionSet::start(&catalog, options("B", &seen_b));
    assert_eq!(a.wait_startup().await.ready(), 8);
    assert_eq!(b.wait_startup().await.ready(), 8);

    // One process per server, whoever asked.
    assert_eq!(pool.stats().starts, 8);
    let pids: BTreeSet<u32> = fx.pids().into_iter().collect();
    assert_eq!(pids.len(), 8);
    let pids_of = |set: &ConnectionSet| -> BTreeSet<u32> {
        set.status().iter().filter_map(|s| s.pid).collect()
    };
    assert_eq!(pids_of(&a), pids);
    assert_eq!(pids_of(&b), pids);

    // Both sessions call every server, the elicitations of both racing on each.
    for name in &names {
        let server = key(name);
        let (ra, rb) = tokio::join!(
            a.call_tool(&server, "ask", None, CallOptions::new()),
            b.call_tool(&server, "ask", None, CallOptions::new()),
        );
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        assert_eq!(
            ra.structured_content.unwrap()["content"]["who"],
            json!("A"),
            "{name}"
        );
        assert_eq!(
            rb.structured_content.unwrap()["content"]["who"],
            json!("B"),
            "{name}"
        );
    }
    let expect =
        |who: &str| -> Vec<String> { names.iter().map(|n| format!("{who}:{n}")).collect() };
    assert_eq!(*seen_a.lock().unwrap(), expect("A"));
    assert_eq!(*seen_b.lock().unwrap(), expect("B"));

    // B's shutdown leaves A working, on the same processes.
    b.shutdown().await;
    for name in &names {
        let result = a
            .call_tool(
                &key(name),
                "echo",
                Some(json!({"text": "hi"})),
                CallOptions::new(),
            )
            .await
            .unwrap();
        assert_eq!(result.is_error, Some(false));
    }
    assert_eq!(pids_of(&a), pids);
    assert_eq!(pool.stats().starts, 8);

    // The last shutdown leaves no process.
    a.shutdown().await;
    fx.assert_no_processes().await;
    assert_eq!(pool.stats().live_connections, 0);
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_sessions_starting_at_once_start_one_process() {
    let mut fx = Fixture::new();
    fx.stdio(
        "one",
        Scenario::new("one").with_tool(ToolSpec::echo("echo")),
    );
    let catalog = fx.catalog();
    let pool = ServerPool::new();
    let sets: Vec<ConnectionSet> = (0..100)
        .map(|_| ConnectionSet::start(&catalog, opts(&pool)))
        .collect();
    for set in &sets {
        assert_eq!(set.wait_startup().await.ready(), 1);
    }
    assert_eq!(pool.stats().starts, 1);
    assert_eq!(pool.stats().total_leases(), 100);
    let pid = fx.pids()[0];
    assert!(sets.iter().all(|s| s.status()[0].pid == Some(pid)));
    for set in &sets {
        set.shutdown().await;
    }
    fx.assert_no_processes().await;
    assert_eq!(pool.stats().live_connections, 0);
    pool.shutdown().await;
}

/// A set that looked a tool up while its server was still attaching finds it the moment
/// the server is ready: the catalog it cached while starting is never served after that
/// (found as a gateway flake: a new set on a warm pool answered "unknown tool" right after
/// `wait_startup`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_is_found_as_soon_as_its_server_is_ready() {
    let mut fx = Fixture::new();
    fx.stdio(
        "one",
        Scenario::new("one").with_tool(ToolSpec::echo("echo")),
    );
    let catalog = fx.catalog();
    let pool = ServerPool::new();
    let warm = ConnectionSet::start(&catalog, opts(&pool));
    assert_eq!(warm.wait_startup().await.ready(), 1);
    for round in 0..300 {
        let set = ConnectionSet::start(&catalog, opts(&pool));
        // Looked up while starting (caches the catalog of that moment), then once ready.
        let _ = set.resolve_tool("mcp__one__echo");
        assert_eq!(set.wait_startup().await.ready(), 1);
        assert!(
            set.resolve_tool("mcp__one__echo").is_some(),
            "round {round}: the ready server's tool was not found"
        );
        set.shutdown().await;
    }
    warm.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_racing_a_pending_call_is_counted_once() {
    let mut fx = Fixture::new();
    fx.stdio(
        "crashy",
        Scenario::new("c")
            .with_tool(ToolSpec::new("die", Behavior::Exit { code: 3 }))
            .with_tool(ToolSpec::new("slow", Behavior::Sleep { ms: 60_000 })),
    );
    let catalog = fx.catalog();
    let pool = ServerPool::with_config(
        mcp_pool::PoolConfig::new().with_backoff(Duration::from_secs(60), Duration::from_secs(120)),
    );
    let (tx_a, mut rx_a) = mpsc::unbounded_channel();
    let (tx_b, mut rx_b) = mpsc::unbounded_channel();
    let a = ConnectionSet::start(&catalog, opts(&pool).with_events(tx_a));
    let b = ConnectionSet::start(&catalog, opts(&pool).with_events(tx_b));
    a.wait_startup().await;
    b.wait_startup().await;

    // A call pending on the connection while the server dies: the pending call, the
    // call that killed it and both sets' exit watchers all see the same death.
    let crashy = key("crashy");
    let (slow, die) = tokio::join!(
        a.call_tool(&crashy, "slow", None, CallOptions::new()),
        b.call_tool(&crashy, "die", None, CallOptions::new()),
    );
    assert!(slow.unwrap_err().is_disconnected());
    assert!(die.is_err());
    let failed = |e: &ConnectionEvent| matches!(e, ConnectionEvent::Failed { .. });
    for rx in [&mut rx_a, &mut rx_b] {
        wait_event(rx, Duration::from_secs(10), failed).await;
    }
    assert_eq!(pool.stats().crashes, 1);
    let failures = |pool: &ServerPool| -> Vec<u32> {
        pool.statuses()
            .values()
            .filter_map(|s| match s {
                mcp_pool::KeyStatus::CrashLoop { failures, .. } => Some(*failures),
                _ => None,
            })
            .collect()
    };
    assert_eq!(failures(&pool), vec![1]);
    for set in [&a, &b] {
        let status = &set.status()[0];
        assert!(matches!(status.state, ServerState::Failed(_)), "{status:?}");
        // One failure is not a loop yet: the next use restarts the server at once.
        assert_eq!(status.crash_loop, None);
    }

    // Both sets restart it (one start in the pool, one new process, whichever asks first)
    // and B kills it again: the second failure in a row, counted once, is a crash loop both
    // sets report. The server dies only on B's `die`, so both are attached by then.
    let (slow, die) = tokio::join!(
        a.call_tool(&crashy, "slow", None, CallOptions::new()),
        b.call_tool(&crashy, "die", None, CallOptions::new()),
    );
    assert!(slow.is_err());
    assert!(die.is_err());
    for rx in [&mut rx_a, &mut rx_b] {
        wait_event(rx, Duration::from_secs(10), |e| {
            matches!(e, ConnectionEvent::CrashLoop { .. })
        })
        .await;
    }
    assert_eq!(pool.stats().starts, 2);
    assert_eq!(pool.stats().crashes, 2);
    assert_eq!(failures(&pool), vec![2]);
    for set in [&a, &b] {
        assert_eq!(set.status()[0].crash_loop.map(|c| c.crashes), Some(2));
    }
    // Held back by the backoff: no new process.
    let err = a
        .call_tool(&crashy, "die", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_not_ready(), "{err}");
    assert_eq!(pool.stats().starts, 2);
    a.shutdown().await;
    b.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_reuses_unchanged_servers_and_restarts_only_changed_ones() {
    let mut fx = Fixture::new();
    let scenario = |name: &str| Scenario::new(name).with_tool(ToolSpec::echo("echo"));
    fx.stdio("kept", scenario("kept"));
    fx.stdio("changed", scenario("changed"));
    fx.stdio("removed", scenario("removed"));
    fx.stdio("policy", scenario("policy"));
    let before = fx.catalog();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(
        &before,
        ConnectionSetOptions::new()
            .with_events(tx)
            .with_client(|c| c.with_process_grace(Duration::from_millis(300))),
    );
    assert_eq!(set.wait_startup().await.ready(), 4);
    let pid = |set: &ConnectionSet, name: &str| {
        set.status()
            .into_iter()
            .find(|s| s.key == key(name))
            .and_then(|s| s.pid)
    };
    let old: Vec<Option<u32>> = ["kept", "changed", "removed", "policy"]
        .iter()
        .map(|n| pid(&set, n))
        .collect();
    let removed_pid = old[2].unwrap();

    // The new catalog: `changed` gets a new literal env value (a new connection),
    // `policy` only a tool filter, `removed` is gone, `added` is new.
    fx.stdio("added", scenario("added"));
    let after = fx.catalog_with(
        |name, config| match name {
            "changed" => Some(with_env(config, "GENERATION", "2")),
            "policy" => Some(
                config
                    .with_tool_filter(mcp_catalog::ToolFilter::new().with_disabled_tools(["echo"])),
            ),
            "removed" => None,
            _ => Some(config),
        },
        |c| c,
    );

    let calls_before = std::fs::read_to_string(fx.request_log("kept")).unwrap_or_default();
    let set2 = set.replace(&after).await;
    assert_eq!(set2.wait_startup().await.ready(), 4);
    assert_eq!(pid(&set2, "kept"), old[0], "unchanged: same process");
    assert_eq!(pid(&set2, "policy"), old[3], "policy-only: same process");
    assert_ne!(pid(&set2, "changed"), old[1], "changed: a new process");
    assert!(pid(&set2, "changed").is_some());
    assert!(pid(&set2, "added").is_some());
    assert!(
        mcp_testkit::wait_gone(removed_pid, Duration::from_secs(10)).await,
        "the removed server was stopped"
    );
    // The reused server was not listed again.
    let calls_after = std::fs::read_to_string(fx.request_log("kept")).unwrap_or_default();
    assert_eq!(
        calls_after.matches("tools/list").count(),
        calls_before.matches("tools/list").count()
    );
    // The policy applies at once: `echo` of `policy` is filtered now.
    let err = set2
        .call_tool(&key("policy"), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("filter"), "{err}");
    // The old set is retired.
    assert!(
        set.call_tool(&key("kept"), "echo", None, CallOptions::new())
            .await
            .unwrap_err()
            .is_shut_down()
    );
    while rx.try_recv().is_ok() {}
    set2.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_reaches_every_session_and_the_cache_after_one_refresh() {
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
    let catalog = fx.catalog();
    let pool = ServerPool::new();
    let dir = tempfile::tempdir().unwrap();
    let cache = mcp_connections::ToolCache::persisted(dir.path(), 8, Duration::from_secs(3600));
    let (tx_a, mut rx_a) = mpsc::unbounded_channel();
    let (tx_b, mut rx_b) = mpsc::unbounded_channel();
    let a = ConnectionSet::start(
        &catalog,
        opts(&pool).with_events(tx_a).with_tool_cache(cache.clone()),
    );
    let b = ConnectionSet::start(
        &catalog,
        opts(&pool).with_events(tx_b).with_tool_cache(cache.clone()),
    );
    a.wait_startup().await;
    b.wait_startup().await;
    a.call_tool(&key("dyn"), "grow", None, CallOptions::new())
        .await
        .unwrap();
    // The session that did not call learns of the change too.
    for rx in [&mut rx_a, &mut rx_b] {
        wait_event(
            rx,
            Duration::from_secs(10),
            |e| matches!(e, ConnectionEvent::ToolsChanged { server, .. } if server == &key("dyn")),
        )
        .await;
    }
    for set in [&a, &b] {
        let names: Vec<String> = set
            .tools()
            .await
            .into_iter()
            .map(|t| t.qualified_name)
            .collect();
        assert_eq!(names, vec!["mcp__dyn__fresh", "mcp__dyn__grow"]);
    }
    // One refresh for the connection, not one per session: two tools/list in all.
    let log = std::fs::read_to_string(fx.request_log("dyn")).unwrap();
    assert_eq!(log.matches("tools/list").count(), 2, "{log}");
    // The cache holds the new listing.
    let entries = cache.entries();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].tools.len(), 2);
    a.shutdown().await;
    b.shutdown().await;
    pool.shutdown().await;
    fx.assert_no_processes().await;
}
