//! Failures are reported when they happen, not after the process grace: the process of a
//! failed start is stopped in the background, and the set's shutdown still leaves no
//! process behind.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, faults};
use mcp_connections::{ConnectionEvent, ConnectionSet, ConnectionSetOptions, FailureReason};
use mcp_testkit::{Scenario, ToolSpec};
use tokio::sync::mpsc;

/// Long enough that waiting it out before reporting would fail every bound below.
const GRACE: Duration = Duration::from_secs(3);

fn scenario(f: impl FnOnce(&mut mcp_testkit::Faults)) -> Scenario {
    Scenario::new("s")
        .with_tool(ToolSpec::echo("echo"))
        .with_faults(faults(f))
}

/// Starts one server `s`, waits for its `failed` event and returns it with the time it
/// took from start, plus the time `wait_startup` took.
async fn first_failure(fx: &Fixture) -> (ConnectionSet, FailureReason, Duration, Duration) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = Instant::now();
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new()
            .with_events(tx)
            .with_client(|c| c.with_process_grace(GRACE)),
    );
    let event = common::wait_event(&mut rx, Duration::from_secs(30), |e| {
        matches!(e, ConnectionEvent::Failed { .. })
    })
    .await;
    let event_after = started.elapsed();
    set.wait_startup().await;
    let summary_after = started.elapsed();
    let ConnectionEvent::Failed { reason, .. } = event else {
        unreachable!()
    };
    (set, reason, event_after, summary_after)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_startup_timeout_is_reported_at_the_deadline() {
    let mut fx = Fixture::new();
    // Never answers `initialize`, and outlives a closed stdin and SIGTERM: stopping it
    // takes the full grace twice.
    fx.stdio_with(
        "s",
        scenario(|f| {
            f.hang_initialize = true;
            f.ignore_sigterm = true;
        }),
        |c| c.with_startup_timeout(Duration::from_secs(1)),
    );
    let (set, reason, event_after, summary_after) = first_failure(&fx).await;
    assert_eq!(reason, FailureReason::Timeout);
    // The deadline is 1 s; the process grace alone would add 3 s.
    assert!(
        event_after < Duration::from_secs(2),
        "failed event after {event_after:?}"
    );
    assert!(
        summary_after < Duration::from_secs(2),
        "wait_startup after {summary_after:?}"
    );
    let pid = fx.pids()[0];
    assert!(
        mcp_testkit::process_alive(pid),
        "the process is still being stopped in the background"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_protocol_failure_is_reported_at_once() {
    let mut fx = Fixture::new();
    // Answers with a protocol version the client does not speak, then keeps running.
    fx.stdio(
        "s",
        scenario(|f| {
            f.protocol_version = Some("1999-01-01".to_owned());
            f.ignore_sigterm = true;
        }),
    );
    let (set, reason, event_after, summary_after) = first_failure(&fx).await;
    assert_eq!(reason, FailureReason::Protocol);
    assert!(event_after < GRACE, "failed event after {event_after:?}");
    assert!(
        summary_after < GRACE,
        "wait_startup after {summary_after:?}"
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_cleanup_ends_when_the_set_is_dropped() {
    let mut fx = Fixture::new();
    fx.stdio_with(
        "s",
        scenario(|f| {
            f.hang_initialize = true;
            f.ignore_sigterm = true;
        }),
        |c| c.with_startup_timeout(Duration::from_secs(1)),
    );
    let (set, reason, _, _) = first_failure(&fx).await;
    assert_eq!(reason, FailureReason::Timeout);
    drop(set);
    fx.assert_no_processes().await;
}
