//! The streamable HTTP runner, driven by rmcp's reqwest client and raw HTTP.

#![allow(
    clippy::disallowed_methods,
    reason = "tests start processes directly (the host under test, reference servers, signals)"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests and their helpers"
)]

mod common;

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use common::{BIN, call, connect, path_arg, suite, temp};
use mcp_testkit::{
    Behavior, HttpFakeServer, HttpOptions, InjectedFailure, Scenario, ToolSpec, read_pid_file,
};
use pretty_assertions::assert_eq;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::FixedInterval;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

async fn post_init(url: &str, token: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INIT);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn every_tool_behaviour_works_over_http() {
    let server = HttpFakeServer::start(suite::scenario()).await.unwrap();
    assert!(server.addr().ip().is_loopback());
    assert_eq!(server.url(), format!("http://{}/mcp", server.addr()));
    let (client, seen) = connect(StreamableHttpClientTransport::from_uri(server.url())).await;
    suite::run(&client, &seen).await;
    client.cancel().await.unwrap();
    let counters = server.counters();
    assert!(counters.post >= 20, "{counters:?}");
    assert_eq!(counters.injected, 0);
    assert_eq!(server.requests()[0].method, "initialize");
    server.shutdown().await;
}

#[tokio::test]
async fn bearer_token_is_enforced() {
    let options = HttpOptions::new()
        .with_bearer_token("s3cret")
        .with_www_authenticate(r#"Bearer resource_metadata="http://127.0.0.1/x""#);
    let scenario = Scenario::new("auth").with_tool(ToolSpec::echo("e"));
    let server = HttpFakeServer::start_with(scenario, options).await.unwrap();

    let raw = post_init(&server.url(), None).await;
    assert_eq!(raw.status(), 401);
    assert_eq!(
        raw.headers()["www-authenticate"],
        r#"Bearer resource_metadata="http://127.0.0.1/x""#
    );
    assert_eq!(post_init(&server.url(), Some("wrong")).await.status(), 401);

    let err = common::TestClient::default()
        .serve_http(&server.url(), None)
        .await
        .expect_err("no token");
    assert!(err.is_authorization_required(), "{err}");

    let (client, _) = connect(StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        StreamableHttpClientTransportConfig::with_uri(server.url()).auth_header("s3cret"),
    ))
    .await;
    assert_eq!(
        call(&client, "e", json!({"a": 1})).await.structured_content,
        Some(json!({"a": 1}))
    );
    client.cancel().await.unwrap();
    assert_eq!(server.counters().unauthorized, 3);

    // The token can be rotated.
    server.set_bearer_token(Some("new".into()));
    assert_eq!(post_init(&server.url(), Some("s3cret")).await.status(), 401);
    assert_eq!(post_init(&server.url(), Some("new")).await.status(), 200);
    server.shutdown().await;
}

#[tokio::test]
async fn next_requests_fail_as_injected_then_recover() {
    let scenario = Scenario::new("flaky").with_tool(ToolSpec::echo("e"));
    let server = HttpFakeServer::start(scenario).await.unwrap();
    server.fail_next(2, InjectedFailure::unavailable(7).with_body("busy"));
    server.fail_next(
        1,
        InjectedFailure::new(403)
            .with_header("www-authenticate", "Bearer error=\"insufficient_scope\""),
    );
    for _ in 0..2 {
        let r = post_init(&server.url(), None).await;
        assert_eq!(r.status(), 503);
        assert_eq!(r.headers()["retry-after"], "7");
        assert_eq!(r.text().await.unwrap(), "busy");
    }
    let r = post_init(&server.url(), None).await;
    assert_eq!(r.status(), 403);
    assert_eq!(
        r.headers()["www-authenticate"],
        "Bearer error=\"insufficient_scope\""
    );
    assert_eq!(post_init(&server.url(), None).await.status(), 200);
    let c = server.counters();
    assert_eq!((c.total, c.post, c.injected), (4, 4, 3));

    // Unused failures can be dropped.
    server.fail_next(5, InjectedFailure::new(500));
    server.clear_failures();
    assert_eq!(post_init(&server.url(), None).await.status(), 200);
    server.shutdown().await;
}

#[tokio::test]
async fn an_injected_404_looks_like_an_expired_session_to_rmcp() {
    let scenario = Scenario::new("expiry").with_tool(ToolSpec::echo("e"));
    let server = HttpFakeServer::start(scenario).await.unwrap();
    let transport = StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        StreamableHttpClientTransportConfig::with_uri(server.url())
            .reinit_on_expired_session(false),
    );
    let (client, _) = connect(transport).await;
    assert_eq!(
        call(&client, "e", json!({})).await.structured_content,
        Some(json!({}))
    );
    server.fail_next(1, InjectedFailure::session_expired());
    let err = client
        .call_tool(CallToolRequestParams::new("e"))
        .await
        .expect_err("the 404 reaches the client");
    assert!(!err.to_string().is_empty());
    assert_eq!(server.counters().injected, 1);
    let _ = client.cancel().await;
    server.shutdown().await;
}

#[tokio::test]
async fn exit_behaviour_stops_the_http_server() {
    let scenario =
        Scenario::new("crash").with_tool(ToolSpec::new("die", Behavior::Exit { code: 1 }));
    let server = HttpFakeServer::start(scenario).await.unwrap();
    // rmcp's default SSE reconnect policy retries forever; give up after one attempt.
    let mut retry = FixedInterval::default();
    retry.max_times = Some(1);
    retry.duration = Duration::from_millis(10);
    let mut config = StreamableHttpClientTransportConfig::with_uri(server.url());
    config.retry_config = Arc::new(retry);
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let (client, _) = connect(transport).await;
    let call = client.call_tool(CallToolRequestParams::new("die"));
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ends")
        .expect_err("no answer");
    assert!(server.is_stopped());
    let _ = client.cancel().await;
    let url = server.url();
    server.shutdown().await;
    assert!(
        reqwest::Client::new()
            .post(&url)
            .body(INIT)
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn shutdown_closes_the_port() {
    let server = HttpFakeServer::start(Scenario::new("s")).await.unwrap();
    let url = server.url();
    assert_eq!(post_init(&url, None).await.status(), 200);
    server.shutdown().await;
    assert!(
        reqwest::Client::new()
            .post(&url)
            .body(INIT)
            .send()
            .await
            .is_err()
    );
}

#[tokio::test]
async fn http_mode_of_the_binary() {
    let home = temp();
    let (addr_file, pid_file, log) = (home.join("addr"), home.join("pid"), home.join("log.jsonl"));
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "--http",
            "127.0.0.1:0",
            "--addr-file",
            &path_arg(&addr_file),
            "--tool",
            "e",
            "--pid-file",
            &path_arg(&pid_file),
            "--request-log",
            &path_arg(&log),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .await
        .unwrap();
    let url = first.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert_eq!(std::fs::read_to_string(&addr_file).unwrap().trim(), url);
    assert_eq!(read_pid_file(&pid_file), Some(pid));

    let (client, _) = connect(StreamableHttpClientTransport::from_uri(url)).await;
    assert_eq!(
        call(&client, "e", json!({"k": 1})).await.structured_content,
        Some(json!({"k": 1}))
    );
    client.cancel().await.unwrap();

    mcp_testkit::terminate_process(pid);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(mcp_testkit::wait_gone(pid, Duration::from_secs(5)).await);
    let methods: Vec<String> = mcp_testkit::RecordedRequest::read_log(&log)
        .into_iter()
        .map(|r| r.method)
        .collect();
    assert_eq!(methods, ["initialize", "tools/call"]);
}

#[tokio::test]
async fn list_faults_over_http() {
    let mut scenario = Scenario::new("pages").with_faults(
        mcp_testkit::Faults::new()
            .with_page_size(1)
            .with_repeating_cursor(),
    );
    for name in ["a", "b"] {
        scenario = scenario.with_tool(ToolSpec::echo(name));
    }
    let server = HttpFakeServer::start(scenario).await.unwrap();
    let (client, _) = connect(StreamableHttpClientTransport::from_uri(server.url())).await;
    let mut cursor = None;
    for _ in 0..3 {
        let page = client
            .list_tools(Some(
                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor),
            ))
            .await
            .unwrap();
        assert_eq!(page.tools.len(), 1);
        assert_eq!(page.tools[0].name, "a");
        cursor = page.next_cursor;
        assert_eq!(cursor.as_deref(), Some(mcp_testkit::REPEATING_CURSOR));
    }
    client.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn slow_and_hanging_initialize_over_http() {
    let scenario = Scenario::new("slow")
        .with_tool(ToolSpec::echo("e"))
        .with_faults(mcp_testkit::Faults::new().with_init_delay_ms(300));
    let server = HttpFakeServer::start(scenario).await.unwrap();
    let start = std::time::Instant::now();
    let (client, _) = connect(StreamableHttpClientTransport::from_uri(server.url())).await;
    assert!(start.elapsed() >= Duration::from_millis(300));
    client.cancel().await.unwrap();
    server.shutdown().await;

    let scenario =
        Scenario::new("hang").with_faults(mcp_testkit::Faults::new().with_hang_initialize());
    let server = HttpFakeServer::start(scenario).await.unwrap();
    let handshake = connect(StreamableHttpClientTransport::from_uri(server.url()));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), handshake)
            .await
            .is_err()
    );
    assert_eq!(server.requests()[0].method, "initialize");
    server.shutdown().await;
}

#[tokio::test]
async fn a_barrier_spans_http_sessions() {
    let scenario = Scenario::new("meet")
        .with_tool(ToolSpec::echo("e"))
        .with_tool(ToolSpec::new(
            "meet",
            Behavior::Barrier {
                name: "b".into(),
                parties: 2,
            },
        ));
    let server = HttpFakeServer::start(scenario).await.unwrap();
    let (one, _) = connect(StreamableHttpClientTransport::from_uri(server.url())).await;
    let (two, _) = connect(StreamableHttpClientTransport::from_uri(server.url())).await;
    let first = {
        let peer = one.peer().clone();
        tokio::spawn(async move { peer.call_tool(CallToolRequestParams::new("meet")).await })
    };
    call(&one, "e", json!({})).await;
    assert!(!first.is_finished(), "a lone barrier caller must wait");
    call(&two, "meet", json!({})).await;
    tokio::time::timeout(Duration::from_secs(10), first)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    one.cancel().await.unwrap();
    two.cancel().await.unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn http_mode_honours_process_faults() {
    let home = temp();
    let grandchild_file = home.join("grandchild.pid");
    let mut child = tokio::process::Command::new(BIN)
        .args([
            "--http",
            "127.0.0.1:0",
            "--ignore-sigterm",
            "--spawn-grandchild",
        ])
        .arg(&grandchild_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .await
        .unwrap();
    let grandchild = read_pid_file(&grandchild_file).unwrap();
    assert_eq!(mcp_testkit::process_group_members(pid).len(), 2);
    mcp_testkit::terminate_process(pid);
    assert!(
        !mcp_testkit::wait_gone(pid, Duration::from_millis(300)).await,
        "SIGTERM is ignored"
    );
    assert_eq!(
        post_init(first.trim(), None).await.status(),
        200,
        "still serving"
    );
    mcp_testkit::kill_process_group(pid);
    let _ = child.wait().await;
    assert!(mcp_testkit::wait_group_gone(pid, Duration::from_secs(5)).await);
    mcp_testkit::assert_no_process(grandchild);
}
