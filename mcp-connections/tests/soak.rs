//! Fault soak: 1,000 concurrent calls over 16 real stdio servers while servers are killed at
//! random. Every call must end with exactly one result or one error (no hang), and after
//! shutdown no process and no file descriptor may be left over.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::Fixture;
use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, Scenario, ToolSpec};
use serde_json::json;

const SERVERS: usize = 16;
const CALLS: usize = 1000;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_calls_with_random_kills_all_end_and_leave_nothing() {
    let mut fx = Fixture::new();
    for i in 0..SERVERS {
        fx.stdio(
            &format!("s{i:02}"),
            Scenario::new("soak")
                .with_tool(ToolSpec::echo("echo"))
                .with_tool(ToolSpec::new("nap", Behavior::Sleep { ms: 20 })),
        );
    }
    let fds_before = open_fds();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(200)))
            .with_restart_backoff(Duration::from_millis(20), Duration::from_millis(200)),
    );
    assert_eq!(set.wait_startup().await.ready(), SERVERS);

    // The killer: SIGKILLs a pseudo-random server every 25 ms while the calls run.
    let pid_files: Vec<_> = (0..SERVERS)
        .map(|i| fx.home.join(format!("s{i:02}.pid")))
        .collect();
    let stop = tokio_util::sync::CancellationToken::new();
    let killer = {
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut kills = 0usize;
            let mut seed = 0x2545_f491_u64;
            while !stop.is_cancelled() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let victim = &pid_files[(seed as usize) % pid_files.len()];
                if let Some(pid) = mcp_testkit::read_pid_file(victim) {
                    mcp_testkit::kill_process(pid);
                    kills += 1;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            kills
        })
    };

    let calls = (0..CALLS).map(|i| {
        let set = set.clone();
        async move {
            let key = McpServerKey::unscoped(format!("s{:02}", i % SERVERS).parse().unwrap());
            let tool = if i % 3 == 0 { "nap" } else { "echo" };
            set.call_tool(
                &key,
                tool,
                Some(json!({"i": i})),
                CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(20))),
            )
            .await
        }
    });
    let outcomes = tokio::time::timeout(Duration::from_secs(120), futures::future::join_all(calls))
        .await
        .expect("every call ends: no hang");
    stop.cancel();
    let kills = killer.await.unwrap();

    let ok = outcomes.iter().filter(|r| r.is_ok()).count();
    let failed = outcomes.len() - ok;
    eprintln!("soak: {ok} ok, {failed} failed, {kills} kills");
    assert_eq!(outcomes.len(), CALLS, "exactly one outcome per call");
    assert!(kills > 0, "the killer never fired");
    assert!(ok > 0, "no call succeeded ({failed} failed, {kills} kills)");
    // Successful results are the call's own (no cross-talk between calls).
    for (i, r) in outcomes.iter().enumerate() {
        if let Ok(result) = r {
            assert_eq!(result.structured_content, Some(json!({"i": i})), "call {i}");
        }
    }
    // Failures are classified, never protocol garbage.
    for e in outcomes.iter().filter_map(|r| r.as_ref().err()) {
        assert!(e.is_retryable(), "unexpected error kind: {e}");
    }

    set.shutdown().await;
    drop(set);
    fx.assert_no_processes().await;
    // Every pipe and socket of the servers is closed again (a little slack for the
    // runtime's own descriptors, which it may open lazily).
    let fds_after = open_fds();
    assert!(
        fds_after <= fds_before + 4,
        "file descriptors leaked: {fds_before} before, {fds_after} after"
    );
}
