//! The pool with real stdio servers: one process per key, no leftovers, crashes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::collections::BTreeSet;
use std::error::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use mcp_pool::{LaunchSpec, Pool, PoolConfig, PooledConnection, StdioProcess, launch};
use mcp_testkit::{Behavior, ToolSpec};
use pretty_assertions::assert_eq;
use rmcp::ServiceExt;

/// A pooled MCP connection: the process and an rmcp client over its pipes.
struct Conn {
    process: StdioProcess,
    client: Client,
}

impl PooledConnection for Conn {
    fn is_alive(&self) -> bool {
        !self.process.has_exited() && !self.client.is_transport_closed()
    }

    async fn shutdown(&self) {
        self.client.cancellation_token().cancel();
        self.process.shutdown().await;
    }
}

type StartResult = Result<Conn, Box<dyn Error + Send + Sync>>;

async fn start(spec: LaunchSpec, starts: Arc<AtomicUsize>) -> StartResult {
    starts.fetch_add(1, Ordering::SeqCst);
    let mut process = launch(spec).await?;
    let transport = process.take_transport().ok_or("transport already taken")?;
    let client = client_config().serve(transport).await?;
    Ok(Conn { process, client })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_concurrent_acquisitions_start_one_process() {
    let pool: Pool<&str, Conn> = Pool::new(PoolConfig::new());
    let starts = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let (pool, starts) = (pool.clone(), starts.clone());
        tasks.spawn(async move {
            let spec = fake(&["--tool", "echo"]);
            pool.acquire("echo", || start(spec, starts)).await.unwrap()
        });
    }
    let leases = tasks.join_all().await;
    assert_eq!(starts.load(Ordering::SeqCst), 1);
    let pids: BTreeSet<u32> = leases.iter().map(|l| l.process.pid()).collect();
    assert_eq!(pids.len(), 1);
    assert_eq!(pool.stats().leases.get("echo"), Some(&100));
    assert_eq!(
        call(&leases[99].client, "echo").await.unwrap().is_error,
        Some(false)
    );

    drop(leases);
    let pids: Vec<u32> = pids.into_iter().collect();
    assert_all_gone(&pids).await;
    pool.shutdown().await;
    assert_eq!(pool.stats().live_connections, 0);
    assert_eq!(pool.stats().starts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_sessions_in_a_loop_leave_no_process() {
    let pool: Pool<&str, Conn> = Pool::new(PoolConfig::new());
    let starts = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(BTreeSet::new()));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let (pool, starts, seen) = (pool.clone(), starts.clone(), seen.clone());
        tasks.spawn(async move {
            for _ in 0..3 {
                let spec = fake(&["--tool", "echo"]);
                let lease = pool
                    .acquire("echo", || start(spec, starts.clone()))
                    .await
                    .unwrap();
                seen.lock().unwrap().insert(lease.process.pid());
                let result = call(&lease.client, "echo").await.unwrap();
                assert_eq!(result.is_error, Some(false));
                drop(lease);
            }
        });
    }
    tasks.join_all().await;
    pool.shutdown().await;
    let pids: Vec<u32> = seen.lock().unwrap().iter().copied().collect();
    assert_eq!(pids.len(), starts.load(Ordering::SeqCst));
    assert_all_gone(&pids).await;
    let stats = pool.stats();
    assert_eq!((stats.live_connections, stats.total_leases()), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_use_fails_in_flight_work_and_the_next_acquirer_gets_a_fresh_generation() {
    let dir = tempfile::tempdir().unwrap();
    let args = scenario(
        dir.path(),
        vec![
            ToolSpec::echo("echo"),
            ToolSpec::new("die", Behavior::Exit { code: 1 }),
            ToolSpec::new("slow", Behavior::Sleep { ms: 60_000 }),
        ],
    );
    let spec = fake(&[]).with_args(args);
    // No crash-loop backoff: the acquirer after the crash starts a new generation at once.
    let pool: Pool<&str, Conn> =
        Pool::new(PoolConfig::new().with_backoff(Duration::ZERO, Duration::ZERO));
    let starts = Arc::new(AtomicUsize::new(0));

    let a = pool
        .acquire("k", || start(spec.clone(), starts.clone()))
        .await
        .unwrap();
    let b = pool
        .acquire("k", || start(spec.clone(), starts.clone()))
        .await
        .unwrap();
    let old_pid = a.process.pid();
    let in_flight = tokio::spawn({
        let conn = a.connection().clone();
        async move { call(&conn.client, "slow").await }
    });
    // The crash, triggered by another session's call.
    assert!(call(&b.client, "die").await.is_err());
    let finished = tokio::time::timeout(GONE, in_flight).await;
    let in_flight = finished
        .expect("in-flight call hung after the crash")
        .unwrap();
    assert!(in_flight.is_err(), "the in-flight call must fail");
    a.process.exit_watcher().wait_exit().await;

    let c = pool
        .acquire("k", || start(spec.clone(), starts.clone()))
        .await
        .unwrap();
    assert!(c.generation() > a.generation());
    assert_ne!(c.process.pid(), old_pid);
    assert_eq!(call(&c.client, "echo").await.unwrap().is_error, Some(false));
    assert_eq!(starts.load(Ordering::SeqCst), 2);
    assert_eq!(pool.stats().leases.get("k"), Some(&3));

    drop((a, b));
    let new_pid = c.process.pid();
    drop(c);
    pool.shutdown().await;
    assert_all_gone(&[old_pid, new_pid]).await;
    assert_eq!(pool.stats().live_connections, 0);
}

#[tokio::test]
async fn a_server_that_exits_at_startup_is_a_crash_loop_with_its_stderr() {
    let pool: Pool<&str, Conn> =
        Pool::new(PoolConfig::new().with_backoff(Duration::from_secs(60), Duration::from_secs(60)));
    let starts = Arc::new(AtomicUsize::new(0));
    let spec = fake(&["--exit-at-startup", "2", "--stderr", "missing API key"]);
    let err = pool
        .acquire("bad", || start(spec.clone(), starts.clone()))
        .await
        .unwrap_err();
    assert!(err.is_start_failed(), "{err}");
    // One failure is retried at once; the second in a row starts the crash loop.
    let err = pool
        .acquire("bad", || start(spec.clone(), starts.clone()))
        .await
        .unwrap_err();
    assert!(err.is_start_failed(), "{err}");
    let err = pool
        .acquire("bad", || start(spec.clone(), starts.clone()))
        .await
        .unwrap_err();
    assert!(err.is_crash_loop(), "{err}");
    assert!(pool.status(&"bad").is_crash_loop());
    assert_eq!(starts.load(Ordering::SeqCst), 2);
    pool.shutdown().await;
}
