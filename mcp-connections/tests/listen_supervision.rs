//! Supervised `subscriptions/listen` requests (MCP 2026-07-28) over streamable HTTP: a
//! listen the server ends, or whose stream goes silent without closing, is noticed,
//! reported (`ListenLost`, then `ListenRestored`), opened again, and what changed while it
//! was down reaches the catalog; a server that refuses to listen is reported once and not
//! asked again. Against the testkit's HTTP fake, in the test's process, on loopback.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use mcp_catalog::{HttpConfig, ServerConfig};
use mcp_connections::{
    CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions, ListenTopic,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, CapabilityFlags, Faults, HttpFakeServer, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Bound on every wait for something that must happen (generous: a slow 2-core machine).
const WAIT: Duration = Duration::from_secs(30);

/// A 2026-07-28 server advertising tool list changes, with a tool that changes its tools
/// and the listen faults as tools.
fn scenario(faults: Faults) -> Scenario {
    Scenario::new("srv")
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "grow",
            Behavior::ChangeTools {
                add: vec![ToolSpec::echo("grown")],
                remove: Vec::new(),
            },
        ))
        .with_tool(ToolSpec::new(
            "drop_listens",
            Behavior::EndListens { hold: true },
        ))
        .with_tool(ToolSpec::new("release", Behavior::ReleaseListens))
        .with_tool(ToolSpec::new("freeze", Behavior::SilenceListens))
        .with_capabilities(CapabilityFlags::default().with_tools_list_changed(true))
        .with_faults(faults.with_protocol_version("2026-07-28"))
}

/// A set using `server`, ready, with its events.
async fn start(
    server: &HttpFakeServer,
    options: ConnectionSetOptions,
) -> (ConnectionSet, mpsc::UnboundedReceiver<ConnectionEvent>) {
    let mut fx = Fixture::new();
    fx.add("srv", ServerConfig::from(HttpConfig::new(server.url())));
    let (tx, rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), options.with_events(tx));
    assert_eq!(set.wait_startup().await.ready(), 1);
    assert_eq!(
        set.status()[0].protocol_version.as_deref(),
        Some("2026-07-28")
    );
    (set, rx)
}

fn srv() -> McpServerKey {
    "srv".parse().unwrap()
}

async fn call(set: &ConnectionSet, tool: &str) -> Value {
    set.call_tool(&srv(), tool, None, CallOptions::new())
        .await
        .unwrap()
        .structured_content
        .unwrap_or(Value::Null)
}

async fn tool_names(set: &ConnectionSet) -> Vec<String> {
    set.tools()
        .await
        .iter()
        .map(|t| t.tool.name.to_string())
        .collect()
}

fn is_listen_event(e: &ConnectionEvent) -> bool {
    matches!(
        e,
        ConnectionEvent::ListenLost { .. }
            | ConnectionEvent::ListenRestored { .. }
            | ConnectionEvent::ListenRefused { .. }
    )
}

/// Receives events until one matches `f`, keeping the listen events seen on the way in
/// `seen`.
async fn wait_keeping(
    rx: &mut mpsc::UnboundedReceiver<ConnectionEvent>,
    seen: &mut Vec<ConnectionEvent>,
    f: impl Fn(&ConnectionEvent) -> bool,
) -> ConnectionEvent {
    tokio::time::timeout(WAIT, async {
        loop {
            let e = rx.recv().await.expect("event channel open");
            if is_listen_event(&e) {
                seen.push(e.clone());
            }
            if f(&e) {
                return e;
            }
        }
    })
    .await
    .expect("the expected event within the timeout")
}

/// The listen events left in `rx`, without waiting.
fn listen_events_now(rx: &mut mpsc::UnboundedReceiver<ConnectionEvent>) -> Vec<ConnectionEvent> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if is_listen_event(&e) {
            out.push(e);
        }
    }
    out
}

fn listens_received(server: &HttpFakeServer) -> u64 {
    server
        .server()
        .request_counts()
        .get("subscriptions/listen")
        .copied()
        .unwrap_or(0)
}

/// The listen requests the server received, once it recorded at least `n`: rmcp
/// acknowledges a listen before the fake's handler records it, so a count read right
/// after the client saw the acknowledgment can lag by one (bounded wait).
async fn listens_reaching(server: &HttpFakeServer, n: u64) -> u64 {
    let deadline = tokio::time::Instant::now() + WAIT;
    while listens_received(server) < n && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    listens_received(server)
}

/// Shuts the set down and checks that it left no listen open on the server, then stops
/// the server.
async fn finish(set: ConnectionSet, server: HttpFakeServer) {
    set.shutdown().await;
    let closed = async {
        while server.server().open_listens() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, closed)
        .await
        .expect("the set's listens end with it");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_the_server_ends_is_reported_reopened_and_catches_up() {
    let server = HttpFakeServer::start(scenario(Faults::new()))
        .await
        .unwrap();
    let (set, mut rx) = start(&server, ConnectionSetOptions::new()).await;
    assert_eq!(listens_reaching(&server, 1).await, 1);

    // The server ends the listen and holds the client's next one back.
    assert_eq!(call(&set, "drop_listens").await, json!({"ended": 1}));
    let mut seen = Vec::new();
    wait_keeping(&mut rx, &mut seen, |e| {
        matches!(e, ConnectionEvent::ListenLost { .. })
    })
    .await;

    // A change while no listen is open: nothing can tell the client about it.
    call(&set, "grow").await;
    assert!(!tool_names(&set).await.contains(&"grown".to_owned()));

    // Once the listen is back, the catalog is refreshed and has the change.
    call(&set, "release").await;
    wait_keeping(&mut rx, &mut seen, |e| {
        matches!(e, ConnectionEvent::ListenRestored { .. })
    })
    .await;
    wait_keeping(&mut rx, &mut seen, |e| {
        matches!(e, ConnectionEvent::ToolsChanged { .. })
    })
    .await;
    let names = tool_names(&set).await;
    assert!(names.contains(&"grown".to_owned()), "{names:?}");

    let reason = match &seen[0] {
        ConnectionEvent::ListenLost { reason, .. } => reason.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        seen,
        [
            ConnectionEvent::ListenLost {
                server: srv(),
                topic: ListenTopic::ListChanges,
                reason,
            },
            ConnectionEvent::ListenRestored {
                server: srv(),
                topic: ListenTopic::ListChanges,
            },
        ]
    );
    assert!(listen_events_now(&mut rx).is_empty());
    assert_eq!(listens_reaching(&server, 2).await, 2);
    assert_eq!(server.server().open_listens(), 1);
    finish(set, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_that_goes_silent_is_cut_after_the_stall_and_reopened() {
    // Keep-alives every 100 ms; a listen counts as stalled after 2 s of nothing at all.
    let server = HttpFakeServer::start(scenario(Faults::new().with_sse_keep_alive_ms(100)))
        .await
        .unwrap();
    let options =
        ConnectionSetOptions::new().with_client(|c| c.with_listen_stall(Duration::from_secs(2)));
    let (set, mut rx) = start(&server, options).await;

    // A quiet listen whose server keeps it alive is left alone, however long it is quiet
    // (here: more than twice the stall).
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(listen_events_now(&mut rx), []);
    assert_eq!(listens_reaching(&server, 1).await, 1);

    // The stream goes silent without closing: the client cuts it and opens another.
    assert_eq!(call(&set, "freeze").await, json!({"silenced": 1}));
    let mut seen = Vec::new();
    let lost = wait_keeping(&mut rx, &mut seen, |e| {
        matches!(e, ConnectionEvent::ListenLost { .. })
    })
    .await;
    let ConnectionEvent::ListenLost { topic, reason, .. } = lost else {
        unreachable!()
    };
    assert_eq!(topic, ListenTopic::ListChanges);
    assert!(reason.contains("silent"), "{reason}");
    wait_keeping(&mut rx, &mut seen, |e| {
        matches!(e, ConnectionEvent::ListenRestored { .. })
    })
    .await;
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(listens_reaching(&server, 2).await, 2);

    // The new listen carries changes.
    call(&set, "grow").await;
    let grown = async {
        while !tool_names(&set).await.contains(&"grown".to_owned()) {
            let e = rx.recv().await.expect("event channel open");
            assert!(!is_listen_event(&e), "{e:?}");
        }
    };
    tokio::time::timeout(WAIT, grown)
        .await
        .expect("the change reaches the catalog");
    finish(set, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_to_listen_is_reported_once_and_not_asked_again() {
    let server = HttpFakeServer::start(scenario(Faults::new().with_refuse_listen()))
        .await
        .unwrap();
    let (set, mut rx) = start(&server, ConnectionSetOptions::new()).await;
    let mut seen = Vec::new();
    let refused = wait_keeping(&mut rx, &mut seen, |e| {
        matches!(e, ConnectionEvent::ListenRefused { .. })
    })
    .await;
    let ConnectionEvent::ListenRefused { topic, reason, .. } = refused else {
        unreachable!()
    };
    assert_eq!(topic, ListenTopic::ListChanges);
    assert!(!reason.is_empty());

    // Time for several retries, had there been any (the first would come after 100 ms).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(call(&set, "echo").await, json!({}));
    assert_eq!(listen_events_now(&mut rx), []);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(listens_reaching(&server, 1).await, 1);
    finish(set, server).await;
}
