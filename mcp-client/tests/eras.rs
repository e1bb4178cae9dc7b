//! Both protocol eras on one `Client`: the `server/discover` probe finds a 2026-07-28
//! server; a 2025-era server that answers the probe its way, refuses it or ignores it is
//! spoken to with `initialize` (on the same process when it can be, on a second one when
//! it exited on the probe); a pinned handshake never probes; a server's protocol version
//! is checked (older known ones accepted, an unknown one refused before any use). Against
//! real `mcp-fake-server` processes (behind `sh`, which counts their launches) and the
//! testkit's HTTP server: the counterparts, at the client level, of
//! `mcp-connections/tests/eras.rs` and the version checks of `misbehave.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, Era, FailureReason, Handshake,
    HttpTarget, StartupFailure, Target,
};
use mcp_testkit::{Faults, HttpFakeServer, Scenario, TestHome, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{Stdio, args, counted, key, launches, modern};

const CALL: Duration = Duration::from_secs(20);

fn legacy() -> Scenario {
    Scenario::new("era").with_tool(ToolSpec::echo("echo"))
}

fn with_faults(scenario: Scenario, faults: Faults) -> Scenario {
    scenario.with_faults(faults)
}

async fn try_connect(target: Target, settings: ClientSettings) -> Result<Client, StartupFailure> {
    Client::connect(
        key("era"),
        target,
        settings.with_process_grace(Duration::from_millis(300)),
        Arc::new(DeclineRequests),
    )
    .await
}

/// Calls `echo` and checks the answer.
async fn echoes(client: &Client, n: u32) {
    let result = client
        .call_tool("echo", args(json!({ "n": n })), CallSettings::new(CALL))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({ "n": n })));
}

fn methods(server: &Stdio) -> Vec<String> {
    mcp_testkit::RecordedRequest::read_log(&server.log)
        .into_iter()
        .map(|r| r.method)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_finds_a_2026_server_on_one_process() {
    let home = TestHome::new().unwrap();
    let (server, started) = counted(&home, modern(legacy()));
    let client = try_connect(server.target.clone(), ClientSettings::new())
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2026_07_28);
    assert_eq!(client.protocol_version().as_str(), "2026-07-28");
    assert_eq!(launches(&started), 1);
    echoes(&client, 1).await;
    assert!(
        !methods(&server).contains(&"initialize".to_owned()),
        "{:?}",
        methods(&server)
    );
    client.shutdown().await;
    server.assert_gone().await;
}

/// A 2025-era server as rmcp 3.x builds one answers the probe with the versions it
/// speaks; one of the TypeScript or Python SDKs answers "method not found". Either way
/// `initialize` follows on the same process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_server_answering_or_refusing_the_probe_keeps_its_process() {
    for faults in [Faults::new(), Faults::new().with_refuse_discover()] {
        let home = TestHome::new().unwrap();
        let (server, started) = counted(&home, with_faults(legacy(), faults.clone()));
        let client = try_connect(server.target.clone(), ClientSettings::new())
            .await
            .unwrap();
        assert_eq!(client.era(), Era::V2025_11_25, "{faults:?}");
        assert_eq!(client.protocol_version().as_str(), "2025-11-25");
        assert_eq!(launches(&started), 1, "{faults:?}");
        assert_eq!(
            client.pid(),
            mcp_testkit::read_pid_file(&server.pid_file),
            "the client holds the one process"
        );
        echoes(&client, 2).await;
        client.shutdown().await;
        server.assert_gone().await;
    }
}

/// Servers built on rmcp releases before 2026-07-28 exit on the probe: a second process
/// gets `initialize`, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_on_the_probe_is_started_again_once_with_initialize() {
    let home = TestHome::new().unwrap();
    let (server, started) = counted(
        &home,
        with_faults(legacy(), Faults::new().with_close_on_discover()),
    );
    let client = try_connect(server.target.clone(), ClientSettings::new())
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2025_11_25);
    assert_eq!(launches(&started), 2);
    assert_eq!(client.pid(), mcp_testkit::read_pid_file(&server.pid_file));
    echoes(&client, 3).await;
    client.shutdown().await;
    server.assert_gone().await;
}

/// rmcp alone waits 10 s for a server that leaves the probe unanswered; the client gives
/// up after its probe timeout. With a startup timeout of 5 s the connect would fail were
/// the probe not bounded below it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_silent_on_the_probe_is_connected_within_the_probe_bound() {
    let settings = || {
        ClientSettings::new()
            .with_probe_timeout(Duration::from_millis(500))
            .with_startup_timeout(Duration::from_secs(5))
    };
    let silent = || with_faults(legacy(), Faults::new().with_ignore_discover());
    let home = TestHome::new().unwrap();
    let (server, started) = counted(&home, silent());
    let client = try_connect(server.target.clone(), settings())
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2025_11_25);
    // Over stdio the unanswered probe cost one process, stopped before the second start.
    assert_eq!(launches(&started), 2);
    echoes(&client, 4).await;
    client.shutdown().await;
    server.assert_gone().await;

    // Over HTTP the same connection goes on with `initialize`.
    let web = HttpFakeServer::start(silent()).await.unwrap();
    let client = try_connect(Target::Http(HttpTarget::new(web.url())), settings())
        .await
        .unwrap();
    assert_eq!(client.era(), Era::V2025_11_25);
    echoes(&client, 5).await;
    client.shutdown().await;
    web.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_handshake_never_probes_and_a_mismatch_names_the_servers_version() {
    let home = TestHome::new().unwrap();
    let (server, started) = counted(&home, legacy());
    let client = try_connect(
        server.target.clone(),
        ClientSettings::new().with_handshake(Handshake::Initialize),
    )
    .await
    .unwrap();
    assert_eq!(client.era(), Era::V2025_11_25);
    assert_eq!(launches(&started), 1, "pinned: no probe");
    assert_eq!(methods(&server)[0], "initialize");
    assert!(!methods(&server).contains(&"server/discover".to_owned()));
    client.shutdown().await;
    server.assert_gone().await;

    // A 2026-only server pinned to the 2025 handshake cannot be spoken to, and it said
    // which version it speaks.
    let home = TestHome::new().unwrap();
    let (server, started) = counted(&home, modern(legacy()));
    let failure = try_connect(
        server.target.clone(),
        ClientSettings::new().with_handshake(Handshake::Initialize),
    )
    .await
    .unwrap_err();
    assert!(failure.to_string().contains("2026-07-28"), "{failure}");
    assert_eq!(launches(&started), 1, "pinned: no second start");
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_protocol_version_fails_the_connect_before_any_use() {
    let home = TestHome::new().unwrap();
    let server = support::stdio(
        &home,
        legacy().with_faults(Faults::new().with_protocol_version("1999-01-01")),
    );
    let started = Instant::now();
    let failure = try_connect(
        server.target.clone(),
        ClientSettings::new()
            .with_handshake(Handshake::Initialize)
            .with_startup_timeout(Duration::from_secs(600)),
    )
    .await
    .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the version check fails promptly, well within the startup timeout"
    );
    assert_eq!(failure.reason(), &FailureReason::Protocol);
    assert_eq!(
        failure.message(),
        "MCP server `era`: initialize answered with protocol version `1999-01-01`, which this client does not support (supported: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25); disconnected. Use a server release that speaks one of these versions"
    );
    // Disconnected before any use: no tools/list reached the server.
    assert_eq!(methods(&server), ["initialize"]);
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_older_known_protocol_version_is_accepted_over_stdio_and_http() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18"] {
        let home = TestHome::new().unwrap();
        let scenario = legacy().with_faults(Faults::new().with_protocol_version(version));
        let server = support::stdio(&home, scenario);
        let client = try_connect(server.target.clone(), ClientSettings::new())
            .await
            .unwrap();
        assert_eq!(client.protocol_version().as_str(), version);
        assert_eq!(client.era(), Era::V2025_11_25);
        echoes(&client, 6).await;
        client.shutdown().await;
        server.assert_gone().await;
    }
    let scenario = legacy().with_faults(Faults::new().with_protocol_version("2025-06-18"));
    let web = HttpFakeServer::start(scenario).await.unwrap();
    let client = try_connect(
        Target::Http(HttpTarget::new(web.url())),
        ClientSettings::new(),
    )
    .await
    .unwrap();
    assert_eq!(client.protocol_version().as_str(), "2025-06-18");
    echoes(&client, 7).await;
    client.shutdown().await;
    web.shutdown().await;
}
