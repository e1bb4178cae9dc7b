//! Configured headers and tokens never cross an origin: a redirect to another origin is
//! not followed (the request fails), a redirect within the origin is. Secrets in URLs are
//! redacted in messages.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{ConnectionSet, ConnectionSetOptions, ServerState};
use mcp_testkit::{HttpFakeServer, InjectedFailure, Scenario, ToolSpec};

fn scenario() -> Scenario {
    Scenario::new("web").with_tool(ToolSpec::echo("echo"))
}

fn state(set: &ConnectionSet) -> ServerState {
    set.status().into_iter().next().unwrap().state
}

async fn start_behind_redirect(from: &HttpFakeServer, to: String) -> ConnectionSet {
    from.fail_next(1, InjectedFailure::new(307).with_header("location", to));
    let mut fx = Fixture::new();
    fx.add(
        "web",
        ServerConfig::from(
            HttpConfig::new(format!("{}?k=query-secret", from.url()))
                .with_http_header("X-Secret", "header-secret"),
        ),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    set
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_another_origin_is_not_followed() {
    let origin = HttpFakeServer::start(scenario()).await.unwrap();
    let elsewhere = HttpFakeServer::start(scenario()).await.unwrap();
    let set = start_behind_redirect(&origin, elsewhere.url()).await;
    let ServerState::Failed(failure) = state(&set) else {
        panic!(
            "a cross-origin redirect must fail startup: {:?}",
            state(&set)
        );
    };
    assert!(failure.to_string().contains("307"), "{failure}");
    assert_eq!(
        elsewhere.counters().total,
        0,
        "the other origin received nothing (no header, no query string)"
    );
    set.shutdown().await;
    origin.shutdown().await;
    elsewhere.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_within_the_origin_is_followed() {
    let origin = HttpFakeServer::start(scenario()).await.unwrap();
    let set = start_behind_redirect(&origin, origin.url()).await;
    assert!(
        matches!(state(&set), ServerState::Ready { tools: 1 }),
        "{:?}",
        state(&set)
    );
    set.shutdown().await;
    origin.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_strings_and_userinfo_are_redacted_in_failures() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut fx = Fixture::new();
    fx.add(
        "web",
        ServerConfig::from(HttpConfig::new(format!(
            "http://user:pa55word@127.0.0.1:{port}/mcp?token=s3cr3t"
        ))),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let ServerState::Failed(failure) = state(&set) else {
        panic!("nothing listens: {:?}", state(&set));
    };
    let text = failure.to_string();
    assert!(
        !text.contains("s3cr3t") && !text.contains("pa55word"),
        "{text}"
    );
    assert!(text.contains("/mcp?***"), "{text}");
    set.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_never_go_over_plain_http_to_another_host() {
    // `.invalid` never resolves; the refusal comes before any lookup or connection.
    let url = "http://mcp.example.invalid/mcp?k=s3cr3t";
    let mut fx = Fixture::new();
    fx.add(
        "token",
        ServerConfig::from(HttpConfig::new(url).with_bearer_token_env_var("TOKEN")),
    );
    fx.add(
        "header",
        ServerConfig::from(HttpConfig::new(url).with_http_header("X-Api-Key", "abc")),
    );
    let env: mcp_connections::SharedEnvLookup =
        std::sync::Arc::new(|name: &str| (name == "TOKEN").then(|| "t0k3n".to_owned()));

    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_env_lookup(env),
    );
    set.wait_startup().await;
    for status in set.status() {
        let ServerState::Failed(failure) = &status.state else {
            panic!("{}: {:?}", status.key, status.state);
        };
        assert_eq!(
            failure.reason(),
            &mcp_connections::FailureReason::Config,
            "{failure}"
        );
        let text = failure.to_string();
        assert!(text.contains("refusing to send"), "{text}");
        assert!(text.contains("allow_plain_http"), "{text}");
        assert!(!text.contains("s3cr3t"), "{text}");
    }
    set.shutdown().await;
}
