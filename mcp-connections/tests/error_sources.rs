//! What an error holds, besides its text: a server that is not ready holds its state only,
//! whose failure is the error's source (one value, not a copy beside it); a failed request
//! keeps the connection's own error as its opaque source, under the set's one sentence.
//! Against the fake server binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use std::error::Error as _;
use std::time::Duration;

use common::Fixture;
use mcp_catalog::ServerConfig;
use mcp_client::RequestError;
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, Error, FailureReason, ServerState,
    StartupFailure,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, PromptSpec, Scenario, ToolSpec};

fn key(name: &str) -> McpServerKey {
    name.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_is_not_ready_holds_its_failure_once_as_the_source() {
    let mut fx = Fixture::new();
    fx.add("missing", ServerConfig::stdio("/nonexistent/mcp-server"));
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;
    let err = set
        .call_tool(&key("missing"), "echo", None, CallOptions::new())
        .await
        .unwrap_err();
    let Error::NotReady {
        server,
        state,
        crash_loop,
    } = &err
    else {
        panic!("expected NotReady, got {err:?}");
    };
    assert_eq!(server, &key("missing"));
    assert_eq!(crash_loop, &None, "a spawn failure is not restarted");
    let ServerState::Failed(failure) = state.as_ref() else {
        panic!("expected a failed state, got {state:?}");
    };
    assert_eq!(failure.reason(), &FailureReason::SpawnFailed);
    assert_eq!(err.failure_reason(), Some(&FailureReason::SpawnFailed));
    // The source is the failure inside the state, not a second copy of it.
    let source = err.source().unwrap().downcast_ref::<StartupFailure>();
    assert!(
        source.is_some_and(|s| std::ptr::eq(s, failure)),
        "the source is the state's failure"
    );
    // Held once: the whole error, debug-printed, names the missing command once.
    let debug = format!("{err:?}");
    assert_eq!(
        debug.matches("/nonexistent/mcp-server").count(),
        1,
        "{debug}"
    );
    // The message derives from the state; the failure follows it once, as the source.
    assert_eq!(
        err.to_string(),
        "MCP server `missing` is not ready: it failed (spawn_failed)"
    );
    assert_eq!(
        mcp_key::error_chain(&err),
        format!("{err}: {}", failure.chain())
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_request_keeps_the_connections_error_as_its_source() {
    let mut fx = Fixture::new();
    fx.stdio(
        "tools",
        Scenario::new("tools")
            .with_tool(ToolSpec::new("die", Behavior::Exit { code: 7 }))
            .with_prompt(PromptSpec::new("greet", "Say hello to {who}.").with_argument("who")),
    );
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
    set.wait_startup().await;

    // The server's JSON-RPC error: its code on the set's error, its answer as the source.
    let err = set
        .get_prompt(&key("tools"), "greet", None)
        .await
        .unwrap_err();
    let Error::Server { code, .. } = &err else {
        panic!("expected a server error, got {err:?}");
    };
    let Some(RequestError::Server {
        code: answered,
        message,
    }) = err.source().and_then(|s| s.downcast_ref::<RequestError>())
    else {
        panic!("the source is the connection's error: {err:?}");
    };
    assert_eq!((code, err.server_error_code()), (answered, Some(*answered)));
    assert!(!message.is_empty());
    assert_eq!(
        err.to_string(),
        "MCP server `tools` returned an error for `prompts/get greet`"
    );
    assert!(!err.to_string().contains(message.as_str()), "said once");

    // A connection lost mid-call: the set names the server and the call, the source says
    // how it ended.
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        set.call_tool(&key("tools"), "die", None, CallOptions::new()),
    )
    .await
    .expect("a crash ends the call promptly")
    .unwrap_err();
    assert!(err.is_disconnected(), "{err:?}");
    let source = err.source().unwrap();
    assert!(
        matches!(
            source.downcast_ref::<RequestError>(),
            Some(RequestError::Disconnected { .. })
        ),
        "{source:?}"
    );
    assert_eq!(
        err.to_string(),
        "MCP server `tools` disconnected during `tools/call die`"
    );
    assert!(
        source.to_string().contains("exited with status 7"),
        "{source}"
    );
    assert_eq!(mcp_key::error_chain(&err), format!("{err}: {source}"));

    set.shutdown().await;
    fx.assert_no_processes().await;
}
