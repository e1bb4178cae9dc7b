//! Change notifications and resource subscriptions in both protocol eras: a 2025-11-25
//! server notifies whenever it likes (and takes `resources/subscribe`); a 2026-07-28 server
//! notifies only on `subscriptions/listen` requests the client keeps open. Real
//! `mcp-fake-server` processes over stdio, and the testkit's HTTP server.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use mcp_catalog::ServerConfig;
use mcp_connections::{CallOptions, ConnectionEvent, ConnectionSet, ConnectionSetOptions};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, CapabilityFlags, HttpFakeServer, ResourceSpec, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc;

const URI: &str = "file:///notes.txt";
const WAIT: Duration = Duration::from_secs(20);

/// A server of `era` (`None`: 2025-11-25) that changes its tools and updates a resource
/// on request, advertising `tools.listChanged` and `resources.subscribe` when `subscribe`.
fn scenario(name: &str, era: Option<&str>, subscribe: bool) -> Scenario {
    Scenario::new(name)
        .with_tool(ToolSpec::echo("echo"))
        .with_tool(ToolSpec::new(
            "grow",
            Behavior::ChangeTools {
                add: vec![ToolSpec::echo("grown")],
                remove: Vec::new(),
            },
        ))
        .with_tool(ToolSpec::new(
            "touch",
            Behavior::UpdateResource {
                uri: URI.to_owned(),
            },
        ))
        .with_resource(ResourceSpec::new(URI, "notes", "v1"))
        .with_capabilities(
            CapabilityFlags::default()
                .with_tools_list_changed(true)
                .with_resources_subscribe(subscribe),
        )
        .with_faults(faults(|f| f.protocol_version = era.map(str::to_owned)))
}

async fn call(set: &ConnectionSet, server: &McpServerKey, tool: &str) -> Value {
    set.call_tool(server, tool, None, CallOptions::new())
        .await
        .unwrap()
        .structured_content
        .unwrap_or(Value::Null)
}

/// Tool list changes reach the set, and a subscribed resource's updates arrive as events
/// until the set unsubscribes.
async fn exercise(set: &ConnectionSet, rx: &mut mpsc::UnboundedReceiver<ConnectionEvent>) {
    let server: McpServerKey = "srv".parse().unwrap();

    call(set, &server, "grow").await;
    wait_event(rx, WAIT, |e| {
        matches!(e, ConnectionEvent::ToolsChanged { .. })
    })
    .await;
    let names: Vec<String> = set
        .tools()
        .await
        .iter()
        .map(|t| t.tool.name.to_string())
        .collect();
    assert!(names.contains(&"grown".to_owned()), "{names:?}");

    // Nobody subscribed yet: the server has nobody to tell.
    assert_eq!(call(set, &server, "touch").await, json!({"notified": 0}));

    set.subscribe_resource(&server, URI).await.unwrap();
    // Subscribing twice is the same as once.
    set.subscribe_resource(&server, URI).await.unwrap();
    assert_eq!(call(set, &server, "touch").await, json!({"notified": 1}));
    let event = wait_event(rx, WAIT, |e| {
        matches!(e, ConnectionEvent::ResourceUpdated { .. })
    })
    .await;
    assert_eq!(
        event,
        ConnectionEvent::ResourceUpdated {
            server: server.clone(),
            uri: URI.to_owned(),
        }
    );

    set.unsubscribe_resource(&server, URI).await.unwrap();
    // The 2026 era's listen ends when the client cancels it: poll the server's count
    // of subscribers until it reaches zero (no sleeps; bounded by WAIT).
    let gone = async {
        loop {
            if call(set, &server, "touch").await == json!({"notified": 0}) {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(WAIT, gone)
        .await
        .expect("the subscription ends after unsubscribe");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_servers_of_both_eras_notify_and_take_subscriptions() {
    for era in [None, Some("2026-07-28")] {
        let mut fx = Fixture::new();
        fx.stdio("srv", scenario("srv", era, true));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_events(tx));
        assert_eq!(set.wait_startup().await.ready(), 1, "{era:?}");
        let spoken = set.status()[0].protocol_version.clone();
        assert_eq!(spoken.as_deref(), Some(era.unwrap_or("2025-11-25")));
        exercise(&set, &mut rx).await;

        // What went over the wire: the era's own way of subscribing.
        let log = std::fs::read_to_string(fx.request_log("srv")).unwrap();
        let methods: Vec<String> = log
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["method"].as_str().map(str::to_owned))
            .filter(|m| m.contains("subscri"))
            .collect();
        match era {
            None => assert_eq!(methods, ["resources/subscribe", "resources/unsubscribe"]),
            // One listen for tool list changes, one for the resource.
            Some(_) => assert_eq!(methods, ["subscriptions/listen", "subscriptions/listen"]),
        }
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_servers_of_both_eras_notify_and_take_subscriptions() {
    for era in [None, Some("2026-07-28")] {
        let server = HttpFakeServer::start(scenario("srv", era, true))
            .await
            .unwrap();
        let mut fx = Fixture::new();
        fx.add(
            "srv",
            ServerConfig::from(mcp_catalog::HttpConfig::new(server.url())),
        );
        let (tx, mut rx) = mpsc::unbounded_channel();
        let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_events(tx));
        assert_eq!(set.wait_startup().await.ready(), 1, "{era:?}");
        exercise(&set, &mut rx).await;
        let listens = server
            .requests()
            .iter()
            .filter(|r| r.method == "subscriptions/listen")
            .count();
        assert_eq!(listens, if era.is_some() { 2 } else { 0 }, "{era:?}");
        set.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_capability_says_so() {
    for era in [None, Some("2026-07-28")] {
        let mut fx = Fixture::new();
        fx.stdio("srv", scenario("srv", era, false));
        let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new());
        assert_eq!(set.wait_startup().await.ready(), 1);
        let err = set
            .subscribe_resource(&"srv".parse().unwrap(), URI)
            .await
            .unwrap_err();
        assert!(err.is_unsupported(), "{era:?}: {err}");
        let chain = mcp_key::error_chain(&err);
        assert!(chain.contains("resources.subscribe"), "{chain}");
        set.shutdown().await;
        fx.assert_no_processes().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_http_server_that_lost_the_session_is_subscribed_again() {
    let first = HttpFakeServer::start(scenario("srv", None, true))
        .await
        .unwrap();
    let addr = first.addr();
    let mut fx = Fixture::new();
    fx.add(
        "srv",
        ServerConfig::from(mcp_catalog::HttpConfig::new(first.url())),
    );
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_events(tx));
    assert_eq!(set.wait_startup().await.ready(), 1);
    let server: McpServerKey = "srv".parse().unwrap();
    set.subscribe_resource(&server, URI).await.unwrap();
    assert_eq!(call(&set, &server, "touch").await, json!({"notified": 1}));
    wait_event(&mut rx, WAIT, |e| {
        matches!(e, ConnectionEvent::ResourceUpdated { .. })
    })
    .await;

    // The server restarts on the same address: it knows neither the session nor the
    // subscription. The next request opens a new session (a call that went out on a
    // connection the old server had closed fails as retryable: tried again).
    first.shutdown().await;
    let second = HttpFakeServer::start_with(
        scenario("srv", None, true),
        mcp_testkit::HttpOptions::new().with_bind(addr),
    )
    .await
    .unwrap();
    let mut echoed = None;
    for _ in 0..3 {
        match set
            .call_tool(&server, "echo", None, CallOptions::new())
            .await
        {
            Ok(result) => {
                echoed = Some(result);
                break;
            }
            Err(e) => assert!(e.is_retryable(), "{e}"),
        }
    }
    assert!(echoed.is_some(), "a call succeeds on the new session");

    // The client subscribes the new session again by itself, and the host hears that the
    // resource may have changed meanwhile, then of the next change.
    tokio::time::timeout(
        WAIT,
        second.server().wait_for_request("resources/subscribe"),
    )
    .await
    .expect("subscribed again");
    // The server records the request before it registers the subscription: touch until
    // the subscription is there (a touch that notified nobody sent nothing).
    let mut notified = json!({"notified": 0});
    for _ in 0..100 {
        notified = call(&set, &server, "touch").await;
        if notified == json!({"notified": 1}) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(notified, json!({"notified": 1}));
    for _ in 0..2 {
        let event = wait_event(&mut rx, WAIT, |e| {
            matches!(e, ConnectionEvent::ResourceUpdated { .. })
        })
        .await;
        assert_eq!(
            event,
            ConnectionEvent::ResourceUpdated {
                server: server.clone(),
                uri: URI.to_owned(),
            }
        );
    }
    set.shutdown().await;
    second.shutdown().await;
}

/// `subscribe_resource`'s promise: after a restart of the server the subscription is made
/// again, and the new connection's updates reach the set (its reader of updates is made
/// anew for the new connection, before the subscription is sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_is_made_again_on_the_restarted_server() {
    let server: McpServerKey = "srv".parse().unwrap();
    let mut fx = Fixture::new();
    fx.stdio("srv", scenario("srv", None, true));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), ConnectionSetOptions::new().with_events(tx));
    assert_eq!(set.wait_startup().await.ready(), 1);
    set.subscribe_resource(&server, URI).await.unwrap();
    assert_eq!(call(&set, &server, "touch").await, json!({"notified": 1}));
    wait_event(&mut rx, WAIT, |e| {
        matches!(e, ConnectionEvent::ResourceUpdated { .. })
    })
    .await;

    let killed = fx.pids()[0];
    mcp_testkit::kill_process(killed);
    assert!(
        mcp_testkit::wait_gone(killed, WAIT).await,
        "the killed server is gone"
    );
    // Calls start the server again; the new process counts the set's subscription once
    // the set made it again on the new connection.
    tokio::time::timeout(WAIT, async {
        loop {
            let touched = set
                .call_tool(&server, "touch", None, CallOptions::new())
                .await;
            if let Ok(result) = touched
                && result.structured_content == Some(json!({"notified": 1}))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the restarted server has the set's subscription");
    assert_ne!(fx.pids()[0], killed, "a new process");
    let event = wait_event(&mut rx, WAIT, |e| {
        matches!(e, ConnectionEvent::ResourceUpdated { .. })
    })
    .await;
    assert_eq!(
        event,
        ConnectionEvent::ResourceUpdated {
            server: server.clone(),
            uri: URI.to_owned(),
        }
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}
