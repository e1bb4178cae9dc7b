//! What a server asks of the client, in both protocol eras: a 2025-11-25 server sends
//! `elicitation/create` and `roots/list` requests of its own; a 2026-07-28 server answers
//! the call `input_required` (MRTR, SEP-2322) and the client calls again with the inputs and
//! the request state. Either way the host's elicitation handler answers elicitations and
//! the host's roots answer `roots/list`, unless the host has a 2026-era server's questions
//! handed back to resume the call itself, perhaps in another set. Real `mcp-fake-server`
//! processes over stdio, and the testkit's HTTP server.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use futures::future::BoxFuture;
use mcp_catalog::ServerConfig;
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, ElicitationHandler, ElicitationRequest, Root,
    ServerPool,
};
use mcp_testkit::{Behavior, HttpFakeServer, RecordedRequest, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

/// A server of `era` (`None`: 2025-11-25) with a tool that elicits and one that asks for
/// the client's roots.
fn scenario(era: Option<&str>) -> Scenario {
    Scenario::new("asker")
        .with_tool(ToolSpec::new(
            "ask",
            Behavior::ElicitForm {
                message: "Who are you?".to_owned(),
                schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
            },
        ))
        .with_tool(ToolSpec::new("roots", Behavior::ListRoots))
        .with_faults(faults(|f| f.protocol_version = era.map(str::to_owned)))
}

/// Accepts with a name, recording each request's message and server.
#[derive(Default)]
struct Recording {
    seen: Mutex<Vec<(String, String)>>,
}

impl ElicitationHandler for Recording {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitResult> {
        self.seen
            .lock()
            .unwrap()
            .push((request.server.to_string(), request.message().to_owned()));
        Box::pin(async {
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}))
        })
    }
}

fn roots() -> Vec<Root> {
    vec![
        Root::new("file:///work/project").with_name("project"),
        Root::new("file:///tmp/scratch"),
    ]
}

async fn call(set: &ConnectionSet, tool: &str) -> Value {
    set.call_tool(&"asker".parse().unwrap(), tool, None, CallOptions::new())
        .await
        .unwrap()
        .structured_content
        .unwrap_or(Value::Null)
}

/// The handler answers the elicitation and the host's roots come back, in order.
async fn exercise(set: &ConnectionSet, handler: &Recording) {
    assert_eq!(
        call(set, "ask").await,
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    assert_eq!(
        *handler.seen.lock().unwrap(),
        [("asker".to_owned(), "Who are you?".to_owned())]
    );
    assert_eq!(
        call(set, "roots").await,
        json!({"roots": [
            {"uri": "file:///work/project", "name": "project"},
            {"uri": "file:///tmp/scratch"},
        ]})
    );
}

/// The `tools/call` requests of `log` as (tool, inputResponses, requestState).
fn calls(log: &[RecordedRequest]) -> Vec<(String, Value, Value)> {
    log.iter()
        .filter(|r| r.method == "tools/call")
        .map(|r| {
            (
                r.params["name"].as_str().unwrap_or_default().to_owned(),
                r.params["inputResponses"].clone(),
                r.params["requestState"].clone(),
            )
        })
        .collect()
}

/// Each era's own way over the wire: one call per tool in the 2025 era (the server asked
/// with requests of its own); two in the 2026 era, the retry carrying the answer and the
/// server's state unmodified.
fn assert_wire(era: Option<&str>, log: &[RecordedRequest]) {
    let expected = match era {
        None => vec![
            ("ask".to_owned(), Value::Null, Value::Null),
            ("roots".to_owned(), Value::Null, Value::Null),
        ],
        Some(_) => vec![
            ("ask".to_owned(), Value::Null, Value::Null),
            (
                "ask".to_owned(),
                json!({"input": {"action": "accept", "content": {"name": "Ada"}}}),
                json!("ask/round-1"),
            ),
            ("roots".to_owned(), Value::Null, Value::Null),
            (
                "roots".to_owned(),
                json!({"input": {"roots": [
                    {"uri": "file:///work/project", "name": "project"},
                    {"uri": "file:///tmp/scratch"},
                ]}}),
                json!("roots/round-1"),
            ),
        ],
    };
    assert_eq!(calls(log), expected, "{era:?}");
    if era.is_none() {
        // The capability was announced in the handshake.
        let init = log.iter().find(|r| r.method == "initialize").unwrap();
        assert_eq!(init.params["capabilities"]["roots"], json!({}), "{init:?}");
    }
}

/// A set with a recording handler and [`roots`], its one server ready in `era`.
async fn start_answering(fx: &Fixture, era: Option<&str>) -> (ConnectionSet, Arc<Recording>) {
    let handler = Arc::new(Recording::default());
    let options = ConnectionSetOptions::new()
        .with_elicitation_handler(handler.clone())
        .with_roots(roots());
    let set = ConnectionSet::start(&fx.catalog(), options);
    assert_eq!(set.wait_startup().await.ready(), 1, "{era:?}");
    assert_eq!(
        set.status()[0].protocol_version.as_deref(),
        Some(era.unwrap_or("2025-11-25"))
    );
    (set, handler)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_servers_of_both_eras_get_elicitations_and_roots_answered() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let (set, handler) = start_answering(&fx, era).await;
        exercise(&set, &handler).await;
        assert_wire(era, &RecordedRequest::read_log(fx.request_log("asker")));
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_servers_of_both_eras_get_elicitations_and_roots_answered() {
    for era in [None, Some(MODERN)] {
        let server = HttpFakeServer::start(scenario(era)).await.unwrap();
        let mut fx = Fixture::new();
        fx.add(
            "asker",
            ServerConfig::from(mcp_catalog::HttpConfig::new(server.url())),
        );
        let (set, handler) = start_answering(&fx, era).await;
        exercise(&set, &handler).await;
        assert_wire(era, &server.requests());
        set.shutdown().await;
    }
}

/// Without roots the capability is not announced, and a server that asks anyway gets an
/// empty list; without a handler an elicitation is declined (both eras).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_roots_or_a_handler_the_answers_are_empty_and_declined() {
    for era in [None, Some(MODERN)] {
        let mut fx = Fixture::new();
        fx.stdio("asker", scenario(era));
        let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
        assert_eq!(set.wait_startup().await.ready(), 1, "{era:?}");
        assert_eq!(call(&set, "roots").await, json!({"roots": []}), "{era:?}");
        assert_eq!(
            call(&set, "ask").await,
            json!({"action": "decline"}),
            "{era:?}"
        );
        let log = RecordedRequest::read_log(fx.request_log("asker"));
        if era.is_none() {
            let init = log.iter().find(|r| r.method == "initialize").unwrap();
            assert_eq!(init.params["capabilities"].get("roots"), None, "{init:?}");
        }
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

/// With the input handed back, a 2026-era server's `input_required` ends the call with
/// its requests and state (the handler is not asked); a second set, as another process
/// would, resumes it with the answer and the state, and the server sees one retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_back_call_is_resumed_by_another_set() {
    let mut fx = Fixture::new();
    fx.stdio("asker", scenario(Some(MODERN)));
    let (first, handler) = start_answering(&fx, Some(MODERN)).await;
    let asker = "asker".parse().unwrap();
    let handed = CallOptions::new().with_call(|c| c.with_input_handed_back(true));
    let e = first
        .call_tool(&asker, "ask", None, handed.clone())
        .await
        .unwrap_err();
    let asked = e
        .input_required()
        .unwrap_or_else(|| panic!("{e:?}"))
        .clone();
    assert!(!e.is_retryable(), "{e:?}");
    assert_eq!(asked["requestState"], json!("ask/round-1"));
    assert_eq!(
        asked["inputRequests"]["input"]["method"],
        json!("elicitation/create")
    );
    assert!(handler.seen.lock().unwrap().is_empty());
    first.shutdown().await;

    let (second, _) = start_answering(&fx, Some(MODERN)).await;
    let answer = json!({"action": "accept", "content": {"name": "Grace"}});
    let responses = [("input".to_owned(), answer.clone())].into_iter().collect();
    let resumed = second
        .call_tool(
            &asker,
            "ask",
            None,
            handed.with_call(|c| c.with_resume(Some(responses), Some("ask/round-1".to_owned()))),
        )
        .await
        .unwrap();
    assert_eq!(resumed.structured_content, Some(answer.clone()));
    assert_eq!(
        calls(&RecordedRequest::read_log(fx.request_log("asker"))),
        [
            ("ask".to_owned(), Value::Null, Value::Null),
            (
                "ask".to_owned(),
                json!({"input": answer}),
                json!("ask/round-1")
            ),
        ]
    );
    second.shutdown().await;
    fx.assert_no_processes().await;
}

/// Roots are part of what a connection announces: sets on one pool with the same roots
/// share a process, a set with other roots gets its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sets_with_other_roots_do_not_share_a_connection() {
    let mut fx = Fixture::new();
    fx.stdio("asker", scenario(None));
    let pool = ServerPool::new();
    let start = |roots: Vec<Root>| {
        ConnectionSet::start(
            &fx.catalog(),
            ConnectionSetOptions::new()
                .with_shared_pool(pool.clone())
                .with_roots(roots),
        )
    };
    let a = start(roots());
    let b = start(roots());
    let c = start(vec![Root::new("file:///elsewhere")]);
    for set in [&a, &b, &c] {
        assert_eq!(set.wait_startup().await.ready(), 1);
    }
    assert_eq!(pool.stats().starts, 2);
    assert_eq!(
        call(&c, "roots").await,
        json!({"roots": [{"uri": "file:///elsewhere"}]})
    );
    assert_eq!(
        call(&b, "roots").await["roots"][0]["name"],
        json!("project")
    );
    for set in [a, b, c] {
        set.shutdown().await;
    }
    pool.shutdown().await;
    fx.assert_no_processes().await;
}

/// URL-mode elicitation reaches the host through the set.
mod url_mode {
    use crate::common::Fixture;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use mcp_connections::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
    use mcp_connections::{
        BoxFuture, CallOptions, ConnectionSet, ConnectionSetOptions, ElicitationHandler,
        ElicitationRequest,
    };
    use mcp_key::McpServerKey;
    use mcp_testkit::{Behavior, Scenario, ToolSpec};
    use serde_json::json;

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    fn opts() -> ConnectionSetOptions {
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
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
}
