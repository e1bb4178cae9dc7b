//! One `Client` against a streamable-HTTP server that misbehaves at the HTTP level: a
//! redirect to another origin (not followed) or within it (followed), secrets in URLs
//! (redacted), credentials over plain HTTP to another host (refused), transient and
//! persistent 5xx, refused connections, a 401, responses lost mid-stream in the 2026 era
//! (a read sent again, a call not) and a server that dies mid-call. Against the testkit's
//! loopback HTTP fake with fault injection: the counterparts, at the client level, of
//! `mcp-connections/tests/{http,http_redirects}.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{
    BearerEnvVar, CallSettings, Client, ClientSettings, DeclineRequests, Era, FailureReason,
    HttpTarget, SharedEnvLookup, StartupFailure, Target,
};
use mcp_key::Secret;
use mcp_testkit::{
    Behavior, HttpFakeServer, HttpOptions, InjectedFailure, ResourceSpec, Scenario, ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use support::{args, key, modern};

/// A generous bound for what happens at once; never a measurement.
const BOUND: Duration = Duration::from_secs(20);

fn scenario() -> Scenario {
    Scenario::new("web")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new("die", Behavior::Exit { code: 1 }))
        .with_resource(ResourceSpec::new("file:///notes.txt", "notes", "v1"))
}

async fn connect(name: &str, target: HttpTarget) -> Result<Client, StartupFailure> {
    Client::connect(
        key(name),
        Target::Http(target),
        ClientSettings::new().with_startup_timeout(BOUND),
        Arc::new(DeclineRequests),
    )
    .await
}

/// A port that was free a moment ago: nothing listens on it.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn count(server: &HttpFakeServer, method: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == method)
        .count()
}

/// `from` answers its next request with a 307 to `to`; the client is told a URL with a
/// secret query string and a secret header.
async fn connect_behind_redirect(
    from: &HttpFakeServer,
    to: String,
) -> Result<Client, StartupFailure> {
    from.fail_next(1, InjectedFailure::new(307).with_header("location", to));
    let target = HttpTarget::new(format!("{}?k=query-secret", from.url()))
        .with_headers(vec![("X-Secret".to_owned(), Secret::new("header-secret"))]);
    connect("web", target).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_is_not_followed() {
    let origin = HttpFakeServer::start(scenario()).await.unwrap();
    let elsewhere = HttpFakeServer::start(scenario()).await.unwrap();
    let failure = connect_behind_redirect(&origin, elsewhere.url())
        .await
        .unwrap_err();
    assert!(failure.to_string().contains("307"), "{failure}");
    assert!(!failure.to_string().contains("query-secret"), "{failure}");
    assert_eq!(
        elsewhere.counters().total,
        0,
        "the other origin received nothing (no header, no query string)"
    );
    origin.shutdown().await;
    elsewhere.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_within_the_origin_is_followed() {
    let origin = HttpFakeServer::start(scenario()).await.unwrap();
    let client = connect_behind_redirect(&origin, origin.url())
        .await
        .unwrap();
    assert_eq!(origin.counters().injected, 1);
    assert_eq!(client.tools().len(), 2);
    let result = client
        .call_tool("echo", args(json!({"n": 1})), CallSettings::new(BOUND))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"n": 1})));
    let secrets = origin.header_values("x-secret");
    assert!(
        !secrets.is_empty() && secrets.iter().all(|v| v == "header-secret"),
        "{secrets:?}"
    );
    client.shutdown().await;
    origin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_strings_and_userinfo_are_redacted_in_failures() {
    let port = closed_port();
    let target = HttpTarget::new(format!(
        "http://user:pa55word@127.0.0.1:{port}/mcp?token=s3cr3t"
    ));
    let failure = connect("web", target).await.unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::Transport, "{failure}");
    let text = mcp_key::error_chain(&failure);
    assert!(
        !text.contains("s3cr3t") && !text.contains("pa55word"),
        "{text}"
    );
    assert!(text.contains("/mcp?***"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_never_go_over_plain_http_to_another_host() {
    // `.invalid` never resolves; the refusal comes before any lookup or connection.
    let url = "http://mcp.example.invalid/mcp?k=s3cr3t";
    let env: SharedEnvLookup = Arc::new(|name: &str| (name == "TOKEN").then(|| "t0k3n".into()));
    let targets = [
        HttpTarget::new(url).with_auth(Some(Arc::new(BearerEnvVar::with_lookup("TOKEN", env)))),
        HttpTarget::new(url).with_headers(vec![("X-Api-Key".to_owned(), Secret::new("abc"))]),
    ];
    for target in targets {
        let failure = connect("token", target).await.unwrap_err();
        assert_eq!(failure.reason(), &FailureReason::Config, "{failure}");
        let text = failure.to_string();
        assert!(text.contains("refusing to send"), "{text}");
        assert!(text.contains("allow_plain_http"), "{text}");
        assert!(
            !text.contains("s3cr3t") && !text.contains("t0k3n"),
            "{text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_5xx_at_startup_are_retried() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    server.fail_next(2, InjectedFailure::unavailable(0));
    let client = connect("web", HttpTarget::new(server.url())).await.unwrap();
    assert_eq!(server.counters().injected, 2);
    assert_eq!(client.tools().len(), 2);
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_5xx_and_refused_connections_fail_as_transport_errors_after_three_attempts() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    server.fail_next(100, InjectedFailure::new(500));
    let broken = connect("broken", HttpTarget::new(server.url()))
        .await
        .unwrap_err();
    let refused = connect(
        "refused",
        HttpTarget::new(format!("http://127.0.0.1:{}/mcp", closed_port())),
    )
    .await
    .unwrap_err();
    for (failure, cause) in [(&broken, "HTTP 500"), (&refused, "Connection refused")] {
        assert_eq!(failure.reason(), &FailureReason::Transport, "{failure}");
        let text = failure.to_string();
        assert!(text.contains("after 3 attempts"), "{text}");
        assert!(text.contains(cause), "{text}");
        assert!(
            !text.contains("rmcp::"),
            "no type names in messages: {text}"
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_is_login_required_without_a_retry_loop() {
    let server =
        HttpFakeServer::start_with(scenario(), HttpOptions::new().with_bearer_token("right"))
            .await
            .unwrap();
    let failure = connect("anon", HttpTarget::new(server.url()))
        .await
        .unwrap_err();
    assert_eq!(failure.reason(), &FailureReason::LoginRequired, "{failure}");
    assert_eq!(server.counters().unauthorized, 1);

    // The right token gets in.
    let target = HttpTarget::new(server.url()).with_auth(Some(Arc::new(
        mcp_client::StaticBearer::new(Secret::new("right")),
    )));
    let client = connect("web", target).await.unwrap();
    assert_eq!(server.counters().unauthorized, 1);
    client.shutdown().await;
    server.shutdown().await;
}

/// MCP 2026-07-28 has no stream resumption: a read whose answer was lost with its stream
/// is sent again, a call is not (it fails as a disconnect), and no `GET` tries to resume
/// anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_2026_era_a_lost_read_is_sent_again_and_a_lost_call_is_not() {
    let server = HttpFakeServer::start(modern(scenario())).await.unwrap();
    let client = connect("web", HttpTarget::new(server.url())).await.unwrap();
    assert_eq!(client.era(), Era::V2026_07_28);

    server.cut_next_responses(1, "resources/read");
    let read = tokio::time::timeout(BOUND, client.read_resource("file:///notes.txt"))
        .await
        .expect("the read ends")
        .expect("the read is sent again and answered");
    assert!(format!("{:?}", read.contents).contains("v1"), "{read:?}");
    assert_eq!(count(&server, "resources/read"), 2);

    server.cut_next_responses(2, "resources/list");
    let listed = client.list_resources(usize::MAX).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(count(&server, "resources/list"), 3);

    server.cut_next_responses(1, "tools/call");
    let err = client
        .call_tool("echo", args(json!({"n": 1})), CallSettings::new(BOUND))
        .await
        .unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
    assert_eq!(
        count(&server, "tools/call"),
        1,
        "a call is never sent twice"
    );
    // The connection stays usable.
    let result = client
        .call_tool("echo", args(json!({"n": 2})), CallSettings::new(BOUND))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"n": 2})));
    assert_eq!(server.counters().get, 0, "nothing tried to resume a stream");
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_2026_era_a_read_lost_every_time_fails_after_three_sends() {
    let server = HttpFakeServer::start(modern(scenario())).await.unwrap();
    let client = connect("web", HttpTarget::new(server.url())).await.unwrap();
    server.cut_next_responses(10, "resources/read");
    let err = client.read_resource("file:///notes.txt").await.unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
    assert_eq!(count(&server, "resources/read"), 3);
    client.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_fails_the_call_instead_of_hanging() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    let client = connect("web", HttpTarget::new(server.url())).await.unwrap();
    let outcome = tokio::time::timeout(
        BOUND,
        client.call_tool("die", None, CallSettings::new(Duration::from_secs(60))),
    )
    .await
    .expect("the call ends instead of hanging");
    let err = outcome.unwrap_err();
    assert!(!err.is_timeout(), "{err:?}");
    assert!(err.is_disconnected(), "{err:?}");
    client.shutdown().await;
    server.shutdown().await;
}
