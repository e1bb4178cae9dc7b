//! Streamable-HTTP servers: auth headers, retries of transient failures, session expiry,
//! login required, unreachable servers. Against the testkit's loopback HTTP fake server.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Fixture;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, FailureReason, ServerState, SharedEnvLookup,
};
use mcp_key::McpServerKey;
use mcp_testkit::{HttpFakeServer, HttpOptions, InjectedFailure, Scenario, ToolSpec};
use serde_json::json;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn scenario() -> Scenario {
    Scenario::new("web").with_tool(ToolSpec::echo("echo"))
}

fn http(url: String) -> HttpConfig {
    HttpConfig::new(url)
}

fn state_of(set: &ConnectionSet, name: &str) -> ServerState {
    set.status()
        .into_iter()
        .find(|s| s.key == key(name))
        .unwrap()
        .state
}

fn env(pairs: &'static [(&'static str, &'static str)]) -> SharedEnvLookup {
    Arc::new(move |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| (*v).into())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_token_from_env_var_is_sent() {
    let server =
        HttpFakeServer::start_with(scenario(), HttpOptions::new().with_bearer_token("tok-123"))
            .await
            .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "web",
        ServerConfig::from(
            http(server.url())
                .with_bearer_token_env_var("WEB_TOKEN")
                .with_http_header("X-Team", "platform"),
        ),
    );
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_env_lookup(env(&[("WEB_TOKEN", "tok-123")])),
    );
    set.wait_startup().await;
    assert!(matches!(
        state_of(&set, "web"),
        ServerState::Ready { tools: 1 }
    ));
    let r = set
        .call_qualified("mcp__web__echo", Some(json!({"a": 1})), CallOptions::new())
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"a": 1})));
    assert_eq!(server.counters().unauthorized, 0);
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_token_variable_and_a_401_are_reported_without_retry_loops() {
    let server =
        HttpFakeServer::start_with(scenario(), HttpOptions::new().with_bearer_token("right"))
            .await
            .unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "unset",
        ServerConfig::from(http(server.url()).with_bearer_token_env_var("NOT_SET_ANYWHERE")),
    );
    fx.add("anon", ServerConfig::from(http(server.url())));
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_env_lookup(env(&[])),
    );
    set.wait_startup().await;
    let ServerState::Failed(unset) = state_of(&set, "unset") else {
        panic!()
    };
    assert_eq!(unset.reason(), &FailureReason::Config);
    assert!(
        unset.chain().contains("`NOT_SET_ANYWHERE`"),
        "{}",
        unset.chain()
    );
    let ServerState::Failed(anon) = state_of(&set, "anon") else {
        panic!()
    };
    assert_eq!(anon.reason(), &FailureReason::LoginRequired);
    // One 401, not a retry loop.
    assert_eq!(server.counters().unauthorized, 1);
    let err = set
        .call_tool(&key("anon"), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_auth_required(), "{err}");
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_5xx_at_startup_is_retried() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    server.fail_next(2, InjectedFailure::unavailable(0));
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(http(server.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    assert!(matches!(
        state_of(&set, "web"),
        ServerState::Ready { tools: 1 }
    ));
    assert_eq!(server.counters().injected, 2);
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_5xx_and_refused_connections_fail_as_transport_errors() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    server.fail_next(100, InjectedFailure::new(500));
    // A port nothing listens on: bind one, then free it.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut fx = Fixture::new();
    fx.add("broken", ServerConfig::from(http(server.url())));
    fx.add(
        "refused",
        ServerConfig::from(http(format!("http://{closed}/mcp"))),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    for name in ["broken", "refused"] {
        let ServerState::Failed(f) = state_of(&set, name) else {
            panic!("{name}")
        };
        assert_eq!(f.reason(), &FailureReason::Transport, "{name}: {f}");
        assert!(f.to_string().contains("after 3 attempts"), "{f}");
        assert!(
            !f.to_string().contains("rmcp::"),
            "no type names in messages: {f}"
        );
    }
    let ServerState::Failed(broken) = state_of(&set, "broken") else {
        panic!()
    };
    assert!(broken.to_string().contains("HTTP 500"), "{broken}");
    let ServerState::Failed(refused) = state_of(&set, "refused") else {
        panic!()
    };
    assert!(
        refused.to_string().contains("Connection refused"),
        "{refused}"
    );
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_reinitialized_once() {
    let server = HttpFakeServer::start(scenario()).await.unwrap();
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(http(server.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    // rmcp opens the session's GET stream in the background after `initialize`; the
    // injected 404 must hit the call, not that GET (under load it can come late).
    tokio::time::timeout(
        Duration::from_secs(10),
        server.wait_for_counters(|c| c.get > 0),
    )
    .await
    .expect("the client never opened its GET stream");
    server.fail_next(1, InjectedFailure::session_expired());
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        set.call_tool(
            &key("web"),
            "echo",
            Some(json!({"after": "expiry"})),
            CallOptions::new(),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(r.structured_content, Some(json!({"after": "expiry"})));
    let inits = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "initialize")
        .count();
    assert_eq!(inits, 2, "one re-initialization after the 404");
    set.shutdown().await;
    server.shutdown().await;
}

/// A provider whose token is rotated by the test; counts refreshes. With a `gate`, a
/// refresh completes only once the test adds a permit.
struct Rotating {
    current: std::sync::Mutex<String>,
    next: std::sync::Mutex<Option<String>>,
    refreshes: std::sync::atomic::AtomicUsize,
    gate: Option<tokio::sync::Semaphore>,
}

impl Rotating {
    /// "old" now, "new" after the one refresh it can give.
    fn old_then_new(gate: Option<tokio::sync::Semaphore>) -> Arc<Self> {
        Arc::new(Self {
            current: std::sync::Mutex::new("old".to_owned()),
            next: std::sync::Mutex::new(Some("new".to_owned())),
            refreshes: Default::default(),
            gate,
        })
    }
}

impl mcp_connections::AuthHeaderProvider for Rotating {
    fn authorization<'a>(
        &'a self,
        _server: &'a McpServerKey,
    ) -> mcp_connections::BoxFuture<
        'a,
        Result<Option<mcp_key::Secret>, mcp_connections::CredentialsError>,
    > {
        let token = self.current.lock().unwrap().clone();
        Box::pin(async move { Ok(Some(mcp_key::Secret::new(token))) })
    }

    fn refresh_after_unauthorized<'a>(
        &'a self,
        server: &'a McpServerKey,
        _rejected: Option<&'a mcp_key::Secret>,
        _challenge: Option<&'a str>,
    ) -> mcp_connections::BoxFuture<
        'a,
        Result<Option<mcp_key::Secret>, mcp_connections::CredentialsError>,
    > {
        Box::pin(async move {
            if let Some(gate) = &self.gate {
                let _permit = gate.acquire().await.unwrap();
            }
            self.refreshes
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let next = self.next.lock().unwrap().take();
            match next {
                Some(t) => {
                    *self.current.lock().unwrap() = t.clone();
                    Ok(Some(mcp_key::Secret::new(t)))
                }
                None => Err(mcp_connections::CredentialsError::ReloginRequired {
                    server: server.clone(),
                    source: None,
                }),
            }
        })
    }
}

/// A server accepting "old", and a ready set whose `provider` starts with "old": once the
/// client's GET stream is open (rmcp opens it in the background after `initialize`; opened
/// after a rotation it would get a 401, and a refresh, of its own).
async fn rotating_session(provider: &Arc<Rotating>) -> (HttpFakeServer, Fixture, ConnectionSet) {
    let server =
        HttpFakeServer::start_with(scenario(), HttpOptions::new().with_bearer_token("old"))
            .await
            .unwrap();
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(http(server.url())));
    let set = ConnectionSet::start(
        &fx.catalog(),
        ConnectionSetOptions::new().with_auth_provider(key("web"), provider.clone()),
    );
    set.wait_startup().await;
    assert!(matches!(state_of(&set, "web"), ServerState::Ready { .. }));
    tokio::time::timeout(
        Duration::from_secs(10),
        server.wait_for_counters(|c| c.get > 0),
    )
    .await
    .expect("the client never opened its GET stream");
    (server, fx, set)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_mid_session_refreshes_once_without_the_host_noticing() {
    let provider = Rotating::old_then_new(None);
    let (server, _fx, set) = rotating_session(&provider).await;
    // The server rotates its accepted token; the next call gets a 401 and is retried with
    // the refreshed token.
    server.set_bearer_token(Some("new".to_owned()));
    let r = set
        .call_tool(
            &key("web"),
            "echo",
            Some(json!({"n": 1})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 1})));
    assert_eq!(
        provider.refreshes.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    // Rotated again with nothing to refresh to: the call fails as needing login, no loop.
    server.set_bearer_token(Some("newer".to_owned()));
    let before = server.counters().unauthorized;
    let err = set
        .call_tool(&key("web"), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_auth_required(), "{err}");
    assert_eq!(server.counters().unauthorized - before, 1, "no retry loop");
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_requests_rejected_at_once_share_one_refresh() {
    let provider = Rotating::old_then_new(Some(tokio::sync::Semaphore::new(0)));
    let (server, _fx, set) = rotating_session(&provider).await;
    server.set_bearer_token(Some("new".to_owned()));
    let before = server.counters().unauthorized;
    let call = |n: u32| {
        let set = set.clone();
        tokio::spawn(async move {
            set.call_tool(
                &key("web"),
                "echo",
                Some(json!({ "n": n })),
                CallOptions::new(),
            )
            .await
        })
    };
    let (a, b) = (call(1), call(2));
    // Both calls were rejected with the old token before any refresh finished.
    tokio::time::timeout(
        Duration::from_secs(10),
        server.wait_for_counters(|c| c.unauthorized >= before + 2),
    )
    .await
    .expect("both calls reach the server with the old token");
    provider.gate.as_ref().unwrap().add_permits(8);
    for (n, call) in [(1, a), (2, b)] {
        let r = call.await.unwrap().unwrap();
        assert_eq!(r.structured_content, Some(json!({ "n": n })));
    }
    assert_eq!(
        provider.refreshes.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the second rejected request retries with the token the first refresh got"
    );
    assert!(matches!(state_of(&set, "web"), ServerState::Ready { .. }));
    set.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_fails_the_call_instead_of_hanging() {
    let server = HttpFakeServer::start(scenario().with_tool(ToolSpec::new(
        "die",
        mcp_testkit::Behavior::Exit { code: 1 },
    )))
    .await
    .unwrap();
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(http(server.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let outcome = tokio::time::timeout(
        Duration::from_secs(20),
        set.call_tool(
            &key("web"),
            "die",
            None,
            CallOptions::new().with_call(|c| c.with_timeout(Duration::from_secs(60))),
        ),
    )
    .await
    .expect("the call ends instead of hanging");
    let err = outcome.unwrap_err();
    assert!(!err.is_timeout(), "{err}");
    set.shutdown().await;
    server.shutdown().await;
}

/// A server of `era` (`None`: 2025-11-25) with a tool and a resource.
fn reads_scenario(era: Option<&str>) -> Scenario {
    scenario()
        .with_resource(mcp_testkit::ResourceSpec::new(
            "file:///notes.txt",
            "notes",
            "v1",
        ))
        .with_faults(common::faults(|f| {
            f.protocol_version = era.map(str::to_owned)
        }))
}

fn count(server: &HttpFakeServer, method: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == method)
        .count()
}

/// MCP 2026-07-28 has no stream resumption: a read whose answer was lost with its stream is
/// sent again, a call is not (it fails with a retryable error), and no `GET` tries to
/// resume anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_2026_era_a_lost_read_is_sent_again_and_a_lost_call_is_retryable() {
    let server = HttpFakeServer::start(reads_scenario(Some("2026-07-28")))
        .await
        .unwrap();
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(http(server.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(set.wait_startup().await.ready(), 1);
    let web = key("web");
    assert_eq!(
        set.status()[0].protocol_version.as_deref(),
        Some("2026-07-28")
    );

    server.cut_next_responses(1, "resources/read");
    let read = tokio::time::timeout(
        Duration::from_secs(20),
        set.read_resource(&web, "file:///notes.txt"),
    )
    .await
    .expect("the read ends")
    .expect("the read is sent again and answered");
    assert!(format!("{:?}", read.contents).contains("v1"), "{read:?}");
    assert_eq!(count(&server, "resources/read"), 2);

    server.cut_next_responses(2, "resources/list");
    let listing = set.list_resources().await;
    assert!(listing.failures.is_empty(), "{:?}", listing.failures);
    assert_eq!(listing.items.len(), 1);
    assert_eq!(count(&server, "resources/list"), 3);

    server.cut_next_responses(1, "tools/call");
    let err = set
        .call_tool(&web, "echo", Some(json!({"n": 1})), CallOptions::new())
        .await
        .unwrap_err();
    assert!(err.is_disconnected() && err.is_retryable(), "{err}");
    assert_eq!(
        count(&server, "tools/call"),
        1,
        "a call is never sent twice"
    );
    // The connection stays usable.
    set.call_tool(&web, "echo", Some(json!({"n": 2})), CallOptions::new())
        .await
        .unwrap();
    assert_eq!(server.counters().get, 0, "nothing tried to resume a stream");
    set.shutdown().await;
    server.shutdown().await;
}

/// Re-sending is bounded: a read whose answer is lost every time fails, retryable, after
/// three sends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_2026_era_a_read_lost_every_time_fails_after_three_sends() {
    let server = HttpFakeServer::start(reads_scenario(Some("2026-07-28")))
        .await
        .unwrap();
    let mut fx = Fixture::new();
    fx.add("web", ServerConfig::from(http(server.url())));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(set.wait_startup().await.ready(), 1);
    server.cut_next_responses(10, "resources/read");
    let err = set
        .read_resource(&key("web"), "file:///notes.txt")
        .await
        .unwrap_err();
    assert!(err.is_disconnected() && err.is_retryable(), "{err}");
    assert_eq!(count(&server, "resources/read"), 3);
    set.shutdown().await;
    server.shutdown().await;
}

/// In the 2025 era the transport resumes a broken stream (`GET` with `Last-Event-ID`)
/// instead: the read is not sent again. (This server has nothing to replay, so the read
/// ends at its timeout.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_2025_era_a_broken_stream_is_resumed_not_sent_again() {
    let server = HttpFakeServer::start(reads_scenario(None)).await.unwrap();
    let mut fx = Fixture::new();
    fx.add(
        "web",
        ServerConfig::from(http(server.url())).with_tool_timeout(Duration::from_secs(2)),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    assert_eq!(set.wait_startup().await.ready(), 1);
    let gets = server.counters().get;
    server.cut_next_responses(1, "resources/read");
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        set.read_resource(&key("web"), "file:///notes.txt"),
    )
    .await
    .expect("the read ends");
    assert!(outcome.unwrap_err().is_timeout());
    assert_eq!(count(&server, "resources/read"), 1);
    assert!(server.counters().get > gets, "a GET resumed the stream");
    set.shutdown().await;
    server.shutdown().await;
}

/// Configured headers and headers from variables reach an HTTP server.
mod configured_headers {
    use crate::common::Fixture;
    use mcp_catalog::{HttpConfig, ServerConfig};
    use std::sync::Arc;
    use std::time::Duration;

    use mcp_connections::{CallOptions, ConnectionSet, ConnectionSetOptions, SharedEnvLookup};
    use mcp_key::McpServerKey;
    use mcp_testkit::{HttpFakeServer, Scenario, ToolSpec};

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    fn opts() -> ConnectionSetOptions {
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn configured_and_environment_headers_reach_the_server() {
        let server = HttpFakeServer::start(Scenario::new("web").with_tool(ToolSpec::echo("echo")))
            .await
            .unwrap();
        let mut fx = Fixture::new();
        fx.add(
            "web",
            ServerConfig::from(
                HttpConfig::new(server.url())
                    .with_http_header("X-Team", "platform")
                    .with_env_http_header("X-Api-Key", "WEB_API_KEY"),
            ),
        );
        let env: SharedEnvLookup =
            Arc::new(|name: &str| (name == "WEB_API_KEY").then(|| "k-123".to_owned()));
        let set = ConnectionSet::start(&fx.catalog(), opts().with_env_lookup(env));
        set.wait_startup().await;
        set.call_tool(&key("web"), "echo", None, CallOptions::new())
            .await
            .unwrap();
        let posts = server.counters().post as usize;
        let teams = server.header_values("x-team");
        let keys = server.header_values("x-api-key");
        assert!(
            posts >= 3,
            "initialize, initialized, tools/list, tools/call: {posts}"
        );
        assert!(
            teams.len() >= posts && teams.iter().all(|v| v == "platform"),
            "{teams:?}"
        );
        assert!(
            keys.len() >= posts && keys.iter().all(|v| v == "k-123"),
            "{keys:?}"
        );
        set.shutdown().await;
        server.shutdown().await;
    }
}
