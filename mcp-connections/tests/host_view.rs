//! What a host sees and writes: process ids in status and events, safe elicitation
//! defaults, the closure adapter for elicitation handlers, bounded event channels and
//! result helpers, against real `mcp-fake-server` processes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Fixture, events_until_complete};
use mcp_connections::model::{ElicitResult, ElicitationAction};
use mcp_connections::{
    AcceptDefaults, CallOptions, CallToolResultExt, ConnectionEvent, ConnectionSet,
    ConnectionSetOptions, ServerState, elicitation_fn,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, Scenario, ToolSpec};
use serde_json::json;
use tokio::sync::mpsc;

fn key(name: &str) -> McpServerKey {
    McpServerKey::unscoped(name.parse().unwrap())
}

fn opts() -> ConnectionSetOptions {
    ConnectionSetOptions::new().with_client(|c| c.with_process_grace(Duration::from_millis(300)))
}

fn echo(name: &str) -> Scenario {
    Scenario::new(name).with_tool(ToolSpec::echo("echo"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_ids_are_in_status_and_ready_events() {
    let mut fx = Fixture::new();
    fx.stdio("a", echo("a")).stdio("b", echo("b"));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), opts().with_events(tx));
    let events = events_until_complete(&mut rx, Duration::from_secs(30)).await;
    let pid_of = |name: &str| mcp_testkit::read_pid_file(fx.home.join(format!("{name}.pid")));
    let mut ready = 0;
    for event in &events {
        if let ConnectionEvent::Ready {
            server,
            pid,
            process_group,
            ..
        } = event
        {
            let expected = pid_of(server.name().as_str());
            assert!(expected.is_some(), "{server} wrote its pid file");
            assert_eq!(*pid, expected, "{server}");
            assert_eq!(*process_group, expected, "{server}");
            ready += 1;
        }
    }
    assert_eq!(ready, 2, "{events:?}");
    for status in set.status() {
        assert!(matches!(status.state, ServerState::Ready { .. }));
        let expected = pid_of(status.key.name().as_str());
        assert_eq!(status.pid, expected, "{}", status.key);
        assert_eq!(status.process_group, expected, "{}", status.key);
    }
    set.shutdown().await;
    fx.assert_no_processes().await;
}

fn form_with_required_email() -> Scenario {
    Scenario::new("form").with_tool(ToolSpec::new(
        "ask",
        Behavior::ElicitForm {
            message: "Where do we send the receipt?".to_owned(),
            schema: json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "Ada"},
                    "email": {"type": "string"}
                },
                "required": ["name", "email"]
            }),
        },
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_defaults_declines_a_required_field_without_default_or_delegates_it() {
    let mut fx = Fixture::new();
    fx.stdio("form", form_with_required_email());

    let set = ConnectionSet::start(
        &fx.catalog(),
        opts().with_elicitation_handler(Arc::new(AcceptDefaults)),
    );
    let r = set
        .call_tool(&key("form"), "ask", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(r.structured(), Some(&json!({"action": "decline"})));
    set.shutdown().await;

    // With a fallback, what the defaults cannot answer goes to it (a closure handler).
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let fallback = elicitation_fn(move |request| {
        seen.lock().unwrap().push(request.message().to_owned());
        async move {
            ElicitResult::new(ElicitationAction::Accept)
                .with_content(json!({"name": "Ada", "email": "ada@example.test"}))
        }
    });
    let set = ConnectionSet::start(
        &fx.catalog(),
        opts().with_elicitation_handler(AcceptDefaults::or_else(fallback)),
    );
    let r = set
        .call_tool(&key("form"), "ask", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(
        r.structured(),
        Some(&json!({"action": "accept", "content": {"name": "Ada", "email": "ada@example.test"}}))
    );
    assert_eq!(*asked.lock().unwrap(), ["Where do we send the receipt?"]);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closure_handler_sees_the_url_of_a_url_request() {
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
    let urls = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&urls);
    let handler = elicitation_fn(move |request| {
        seen.lock()
            .unwrap()
            .push((request.server.clone(), request.url().map(str::to_owned)));
        async { ElicitResult::new(ElicitationAction::Decline) }
    });
    let set = ConnectionSet::start(&fx.catalog(), opts().with_elicitation_handler(handler));
    let r = set
        .call_tool(&key("pay"), "checkout", None, CallOptions::new())
        .await
        .unwrap();
    assert_eq!(r.structured(), Some(&json!({"action": "decline"})));
    assert_eq!(
        *urls.lock().unwrap(),
        [(
            key("pay"),
            Some("https://pay.example.test/confirm?id=42".to_owned())
        )]
    );
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_bounded_event_channel_drops_and_counts() {
    let mut fx = Fixture::new();
    fx.stdio("a", echo("a"));
    // Room for one event, and nobody reads: `Starting` fits, `Ready` and
    // `StartupComplete` are dropped.
    let (tx, mut rx) = mpsc::channel(1);
    let set = ConnectionSet::start(&fx.catalog(), opts().with_events_bounded(tx));
    set.wait_startup().await;
    set.shutdown().await;
    // Every event of the round was emitted by now (the set's tasks have ended).
    assert_eq!(set.dropped_events(), 2);
    assert_eq!(
        rx.try_recv().unwrap(),
        ConnectionEvent::Starting { server: key("a") }
    );
    assert!(rx.try_recv().is_err());
    drop(set);
    assert!(rx.recv().await.is_none(), "the channel ends with the set");
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unbounded_event_channel_ends_after_shutdown_and_drop() {
    let mut fx = Fixture::new();
    fx.stdio("a", echo("a"));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let set = ConnectionSet::start(&fx.catalog(), opts().with_events(tx));
    let r = set
        .call_tool(
            &key("a"),
            "echo",
            Some(json!({"text": "hi"})),
            CallOptions::new(),
        )
        .await
        .unwrap();
    assert!(!r.is_tool_error());
    set.shutdown().await;
    assert_eq!(set.dropped_events(), 0);
    drop(set);
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push(e);
        }
        events
    })
    .await
    .expect("the channel ends once the set is shut down and dropped");
    assert!(
        matches!(rest.last(), Some(ConnectionEvent::StartupComplete { .. })),
        "{rest:?}"
    );
    fx.assert_no_processes().await;
}

/// A listing names the servers that are not ready instead of leaving them out.
mod unready_in_listings {

    use crate::common::{Fixture, faults};
    use std::time::Duration;

    use mcp_connections::{ConnectionSet, ConnectionSetOptions};
    use mcp_key::McpServerKey;
    use mcp_testkit::{ResourceSpec, Scenario};

    fn key(name: &str) -> McpServerKey {
        McpServerKey::unscoped(name.parse().unwrap())
    }

    fn opts() -> ConnectionSetOptions {
        ConnectionSetOptions::new()
            .with_client(|c| c.with_process_grace(Duration::from_millis(300)))
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
}
