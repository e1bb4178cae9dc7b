//! The life of one `Client` of a stdio server, from start to stop: a server that exits,
//! hangs or garbles its startup is classified; `shutdown` stops the process and its whole
//! group (one that ignores SIGTERM too, after the grace) and `stopped` resolves; dropping
//! the client kills the process; a server that dies mid-call fails the call at once,
//! `closed` resolves and `death` says how it ended; a call in flight during `shutdown`
//! ends. Against real `mcp-fake-server` processes, checking their pids are gone: the
//! counterparts, at the client level, of the one-server tests of
//! `mcp-connections/tests/startup.rs` and the crash of `calls.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, FailureReason, StartupFailure,
};
use mcp_testkit::{Behavior, Faults, Scenario, TestHome, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{PATIENCE, Stdio, args, key, stdio};

const CALL: Duration = Duration::from_secs(20);

fn scenario() -> Scenario {
    Scenario::new("life")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new("nap", Behavior::Sleep { ms: 60_000 }))
        .with_tool(ToolSpec::new("die", Behavior::Exit { code: 7 }))
}

async fn try_connect(server: &Stdio, settings: ClientSettings) -> Result<Client, StartupFailure> {
    Client::connect(
        key("life"),
        server.target.clone(),
        settings.with_process_grace(Duration::from_millis(300)),
        Arc::new(DeclineRequests),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_the_process_and_its_group_and_stopped_resolves() {
    let home = TestHome::new().unwrap();
    let grandchild = home.join("grandchild.pid");
    let server = stdio(
        &home,
        scenario().with_faults(Faults::new().with_spawn_grandchild(&grandchild)),
    );
    let client = Arc::new(try_connect(&server, ClientSettings::new()).await.unwrap());
    let pid = client.pid().expect("a stdio server has a pid");
    assert_eq!(Some(pid), mcp_testkit::read_pid_file(&server.pid_file));
    let sleeper = mcp_testkit::read_pid_file(&grandchild).expect("the grandchild started");
    assert!(mcp_testkit::process_alive(sleeper));
    assert!(client.is_alive());

    // A waiter from before the shutdown is woken by it.
    let waiter = tokio::spawn({
        let client = Arc::clone(&client);
        async move { client.stopped().await }
    });
    client.shutdown().await;
    tokio::time::timeout(PATIENCE, waiter)
        .await
        .expect("stopped() resolves once shutdown finished")
        .unwrap();
    assert!(!client.is_alive());
    server.assert_gone().await;
    assert!(
        mcp_testkit::wait_gone(sleeper, Duration::from_secs(10)).await,
        "the process group's other member {sleeper} outlived the client"
    );
    // Shutting down again is harmless, and nothing more can be asked.
    client.shutdown().await;
    client.stopped().await;
    let err = client
        .call_tool("echo", None, CallSettings::new(CALL))
        .await
        .unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_sigterm_is_killed_after_the_grace() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        scenario().with_faults(Faults::new().with_ignore_sigterm()),
    );
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();
    let started = Instant::now();
    tokio::time::timeout(PATIENCE, client.shutdown())
        .await
        .expect("shutdown escalates instead of waiting for the process");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "SIGKILL only after the grace: {:?}",
        started.elapsed()
    );
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_client_without_shutdown_kills_its_process() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();
    let pid = client.pid().unwrap();
    assert!(mcp_testkit::process_alive(pid));
    drop(client);
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_startup_is_classified_with_its_status_and_stderr() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        scenario().with_faults(
            Faults::new()
                .with_exit_at_startup(3)
                .with_stderr("fatal: missing API key"),
        ),
    );
    let failure = try_connect(&server, ClientSettings::new())
        .await
        .unwrap_err();
    assert_eq!(
        failure.reason(),
        &FailureReason::Exited {
            status: Some(3),
            signal: None
        }
    );
    assert_eq!(failure.stderr_tail(), Some("fatal: missing API key"));
    assert!(
        failure.to_string().contains("exited with status 3"),
        "{failure}"
    );
    assert!(failure.to_string().contains("`life`"), "{failure}");
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_in_initialize_times_out_and_is_stopped() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        scenario().with_faults(Faults::new().with_hang_initialize()),
    );
    let timeout = Duration::from_secs(1);
    let started = Instant::now();
    let failure = try_connect(
        &server,
        ClientSettings::new()
            .with_handshake(mcp_client::Handshake::Initialize)
            .with_startup_timeout(timeout),
    )
    .await
    .unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::Timeout, "{failure}");
    assert!(started.elapsed() >= timeout, "{:?}", started.elapsed());
    assert!(started.elapsed() < PATIENCE, "{:?}", started.elapsed());
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_line_fails_the_startup_and_stray_output_does_not() {
    let home = TestHome::new().unwrap();
    let huge = stdio(
        &home,
        scenario().with_faults(Faults::new().with_huge_line(9 * 1024 * 1024)),
    );
    let failure = try_connect(&huge, ClientSettings::new()).await.unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::Protocol, "{failure}");
    assert!(failure.to_string().contains("longer than"), "{failure}");
    huge.assert_gone().await;

    // A stray non-JSON line on stdout (a log print) is skipped; a stderr flood is
    // survivable too.
    for faults in [
        Faults::new().with_garbage_stdout(),
        Faults::new().with_flood_stderr(20_000),
    ] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, scenario().with_faults(faults.clone()));
        let client = try_connect(&server, ClientSettings::new()).await.unwrap();
        let result = client
            .call_tool("echo", args(json!({"ok": true})), CallSettings::new(CALL))
            .await
            .unwrap();
        assert_eq!(
            result.structured_content,
            Some(json!({"ok": true})),
            "{faults:?}"
        );
        client.shutdown().await;
        server.assert_gone().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_fails_it_at_once_and_its_death_is_told() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = try_connect(&server, ClientSettings::new()).await.unwrap();
    let started = Instant::now();
    let err = client
        .call_tool("die", None, CallSettings::new(Duration::from_secs(60)))
        .await
        .unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
    assert!(
        started.elapsed() < PATIENCE,
        "not the 60 s timeout: {:?}",
        started.elapsed()
    );
    // The call's error says how the process ended.
    assert!(err.to_string().contains("exited with status 7"), "{err}");
    tokio::time::timeout(PATIENCE, client.closed())
        .await
        .expect("closed() resolves once the process is gone");
    assert!(!client.is_alive());
    let death = client.death().await;
    assert_eq!(
        death.reason(),
        &FailureReason::Exited {
            status: Some(7),
            signal: None
        },
        "{death}"
    );
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_in_flight_during_shutdown_ends_every_time() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    for round in 1..=5 {
        let client = Arc::new(try_connect(&server, ClientSettings::new()).await.unwrap());
        let call = tokio::spawn({
            let client = Arc::clone(&client);
            async move {
                client
                    .call_tool("nap", None, CallSettings::new(Duration::from_secs(60)))
                    .await
            }
        });
        // The call is in flight: the server has it.
        server.wait_for_count("tools/call", round).await;
        client.shutdown().await;
        let err = tokio::time::timeout(PATIENCE, call)
            .await
            .unwrap_or_else(|_| panic!("round {round}: the call outlived the shutdown"))
            .unwrap()
            .unwrap_err();
        assert!(err.is_disconnected(), "round {round}: {err:?}");
        server.assert_gone().await;
    }
}
