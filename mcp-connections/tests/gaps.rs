//! Behaviours the review found untested: listings name servers that are not ready, URL-mode
//! elicitation through the set, progress that resets the timeout, a cancelled required
//! server reported as cancelled, configured headers reaching an HTTP server.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Fixture, faults};
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use mcp_connections::{
    BoxFuture, CallOptions, ConnectionSet, ConnectionSetOptions, ElicitationHandler,
    ElicitationRequest, Error, FailureReason, SharedEnvLookup,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, HttpFakeServer, ResourceSpec, Scenario, ToolSpec};
use serde_json::json;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn opts() -> ConnectionSetOptions {
    ConnectionSetOptions::new().with_process_grace(Duration::from_millis(300))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_names_the_servers_that_are_not_ready() {
    let mut fx = Fixture::new();
    fx.stdio(
        "docs",
        Scenario::new("docs").with_resource(ResourceSpec::new("file:///a.txt", "a", "alpha")),
    );
    fx.stdio(
        "broken",
        Scenario::new("broken").with_faults(faults(|f| f.exit_at_startup = Some(3))),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let listing = set.list_resources().await;
    assert_eq!(listing.items.len(), 1);
    assert_eq!(listing.items[0].server, key("docs"));
    assert_eq!(listing.failures.len(), 1, "{:?}", listing.failures);
    let (server, why) = &listing.failures[0];
    assert_eq!(server, &key("broken"));
    assert!(why.starts_with("not ready: it failed (exited)"), "{why}");
    let templates = set.list_resource_templates().await;
    assert_eq!(templates.failures.len(), 1);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// Records every request and accepts.
#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<ElicitationRequest>>,
}

impl ElicitationHandler for Recorder {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        self.seen.lock().unwrap().push(request);
        Box::pin(async { ElicitResult::new(ElicitationAction::Accept) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_mode_elicitation_reaches_the_host_through_the_set() {
    let mut fx = Fixture::new();
    fx.stdio(
        "pay",
        Scenario::new("pay").with_tool(ToolSpec::new(
            "checkout",
            Behavior::ElicitUrl {
                message: "Confirm the payment".to_owned(),
                url: "https://pay.example.test/confirm?id=42".to_owned(),
                elicitation_id: "el-42".to_owned(),
            },
        )),
    );
    let handler = Arc::new(Recorder::default());
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts().with_elicitation_handler(handler.clone()),
    );
    set.wait_startup().await;
    let result = set
        .call_tool(&key("pay"), "checkout", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"action": "accept"})));
    let seen: Vec<ElicitationRequest> = std::mem::take(&mut *handler.seen.lock().unwrap());
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].server, key("pay"));
    assert_eq!(seen[0].message(), "Confirm the payment");
    match &seen[0].params {
        ElicitRequestParams::UrlElicitationParams {
            url,
            elicitation_id,
            ..
        } => {
            assert_eq!(url, "https://pay.example.test/confirm?id=42");
            assert_eq!(elicitation_id, "el-42");
        }
        other => panic!("not URL mode: {other:?}"),
    }
    assert_ne!(seen[0].id, "el-42", "the host's id is the set's own");
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_resets_the_timeout_only_when_asked() {
    let mut fx = Fixture::new();
    // 8 notifications 150 ms apart: 1.2 s in all, against a 600 ms timeout.
    fx.stdio(
        "slow",
        Scenario::new("slow").with_tool(ToolSpec::new(
            "work",
            Behavior::SlowProgress {
                steps: 8,
                interval_ms: 150,
            },
        )),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.wait_startup().await;
    let timeout = Duration::from_millis(600);
    let with_progress = |reset: bool| {
        CallOptions::new()
            .with_timeout(timeout)
            .with_progress(Arc::new(|_| {}))
            .with_reset_timeout_on_progress(reset)
    };
    let err = set
        .call_tool(&key("slow"), "work", None, with_progress(false))
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let done = set
        .call_tool(&key("slow"), "work", None, with_progress(true))
        .await
        .unwrap();
    assert_eq!(done.structured_content.unwrap()["steps"], json!(8));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_required_server_is_reported_as_cancelled() {
    let mut fx = Fixture::new();
    fx.stdio_with(
        "needed",
        Scenario::new("needed").with_faults(faults(|f| f.hang_initialize = true)),
        |c| c.with_required(true),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    set.cancel_startup();
    let err = set.wait_required().await.unwrap_err();
    let Error::RequiredServersFailed { failures } = &err else {
        panic!("{err}");
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].0, key("needed"));
    assert_eq!(failures[0].1.reason(), &FailureReason::Cancelled, "{err}");
    assert!(!err.to_string().contains("timeout"), "{err}");
    set.shutdown().await;
    fx.assert_no_processes().await;
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
