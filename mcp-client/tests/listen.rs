//! What one `Client` hears from its server between requests, in both eras: a tool list
//! change refreshes `tools()` (a new stamp), a watched resource's updates arrive on
//! `resource_updates()` until it is unwatched (`resources/subscribe` in 2025,
//! `subscriptions/listen` in 2026), and a server without subscriptions says so. In the
//! 2026 era the listens are supervised: one the server ends or that goes silent is
//! reported on `listen_health()` (lost, then restored) and opened again, catching up on
//! what changed meanwhile; one the server refuses is reported once and not asked again.
//! Against the `mcp-fake-server` binary over stdio and the testkit's HTTP server: the
//! counterparts, at the client level, of `mcp-connections/tests/{subscriptions,
//! listen_supervision}.rs` and the list change of `calls.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, Era, HttpTarget, ListenHealth,
    ListenTopic, RequestError, Target,
};
use mcp_testkit::{
    Behavior, CapabilityFlags, Faults, HttpFakeServer, ResourceSpec, Scenario, TestHome, ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{PATIENCE, connect, in_era, modern, stdio};
use tokio::sync::broadcast;

const URI: &str = "file:///notes.txt";
const MODERN: Option<&str> = Some("2026-07-28");

/// A server that changes its tools, updates a resource and plays the listen faults on
/// request, advertising `tools.listChanged`, and `resources.subscribe` when `subscribe`.
fn scenario(subscribe: bool) -> Scenario {
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
            "touch",
            Behavior::UpdateResource {
                uri: URI.to_owned(),
            },
        ))
        .with_tool(ToolSpec::new(
            "drop_listens",
            Behavior::EndListens { hold: true },
        ))
        .with_tool(ToolSpec::new("release", Behavior::ReleaseListens))
        .with_tool(ToolSpec::new("freeze", Behavior::SilenceListens))
        .with_resource(ResourceSpec::new(URI, "notes", "v1"))
        .with_capabilities(
            CapabilityFlags::default()
                .with_tools_list_changed(true)
                .with_resources_subscribe(subscribe),
        )
}

async fn call(client: &Client, tool: &str) -> Value {
    client
        .call_tool(tool, None, CallSettings::new(PATIENCE))
        .await
        .unwrap()
        .structured_content
        .unwrap_or(Value::Null)
}

fn names(client: &Client) -> Vec<String> {
    client.tools().iter().map(|t| t.name.to_string()).collect()
}

/// A tool list change refreshes the client's tools; a watched resource's updates arrive
/// until the last watcher is gone.
async fn exercise(client: &Client, label: &str) {
    let mut revisions = client.listing_revisions();
    let before = revisions.borrow_and_update().number;
    assert!(!names(client).contains(&"grown".to_owned()));
    call(client, "grow").await;
    tokio::time::timeout(PATIENCE, revisions.changed())
        .await
        .expect("the tools are listed again")
        .unwrap();
    assert!(client.stamp().number > before, "{label}");
    assert_eq!(
        names(client),
        [
            "echo",
            "grow",
            "touch",
            "drop_listens",
            "release",
            "freeze",
            "grown"
        ],
        "{label}"
    );

    // Nobody watches yet: the server has nobody to tell.
    assert_eq!(
        call(client, "touch").await,
        json!({"notified": 0}),
        "{label}"
    );
    let mut updates = client.resource_updates();
    client.watch_resource(URI).await.unwrap();
    // A second watcher shares the subscription.
    client.watch_resource(URI).await.unwrap();
    assert_eq!(
        call(client, "touch").await,
        json!({"notified": 1}),
        "{label}"
    );
    let uri = tokio::time::timeout(PATIENCE, updates.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(uri, URI, "{label}");

    // One watcher left: still subscribed.
    client.unwatch_resource(URI).await;
    assert_eq!(
        call(client, "touch").await,
        json!({"notified": 1}),
        "{label}"
    );
    client.unwatch_resource(URI).await;
    // The 2026 era's listen ends when the client cancels it: ask until the server has no
    // subscriber left (bounded by PATIENCE).
    let gone = async {
        while call(client, "touch").await != json!({"notified": 0}) {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(PATIENCE, gone)
        .await
        .expect("the subscription ends with its last watcher");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_servers_of_both_eras_refresh_tools_and_take_watches() {
    for era in [None, MODERN] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(true), era));
        let client = connect(
            "srv",
            server.target.clone(),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        assert_eq!(
            client.protocol_version().as_str(),
            era.unwrap_or("2025-11-25")
        );
        exercise(&client, &format!("stdio {era:?}")).await;
        // What went over the wire: the era's own way of subscribing.
        let methods: Vec<String> = mcp_testkit::RecordedRequest::read_log(&server.log)
            .into_iter()
            .map(|r| r.method)
            .filter(|m| m.contains("subscri"))
            .collect();
        match era {
            None => assert_eq!(methods, ["resources/subscribe", "resources/unsubscribe"]),
            // One listen for list changes, one for the resource.
            Some(_) => assert_eq!(methods, ["subscriptions/listen", "subscriptions/listen"]),
        }
        client.shutdown().await;
        server.assert_gone().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_servers_of_both_eras_refresh_tools_and_take_watches() {
    for era in [None, MODERN] {
        let web = HttpFakeServer::start(in_era(scenario(true), era))
            .await
            .unwrap();
        let client = connect(
            "srv",
            Target::Http(HttpTarget::new(web.url())),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        exercise(&client, &format!("http {era:?}")).await;
        let listens = web
            .requests()
            .iter()
            .filter(|r| r.method == "subscriptions/listen")
            .count();
        assert_eq!(listens, if era.is_some() { 2 } else { 0 }, "{era:?}");
        client.shutdown().await;
        web.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_subscriptions_says_so() {
    for era in [None, MODERN] {
        let home = TestHome::new().unwrap();
        let server = stdio(&home, in_era(scenario(false), era));
        let client = connect(
            "srv",
            server.target.clone(),
            ClientSettings::new(),
            Arc::new(DeclineRequests),
        )
        .await;
        let err = client.watch_resource(URI).await.unwrap_err();
        let RequestError::Unsupported { detail } = &err else {
            panic!("{era:?}: {err:?}");
        };
        assert!(detail.contains("resources.subscribe"), "{detail}");
        client.shutdown().await;
        server.assert_gone().await;
    }
}

/// A 2026-07-28 HTTP server of [`scenario`] with `faults`, and a client of it.
async fn supervised(faults: Faults, settings: ClientSettings) -> (HttpFakeServer, Client) {
    let web = HttpFakeServer::start(modern(scenario(false).with_faults(faults)))
        .await
        .unwrap();
    let client = connect(
        "srv",
        Target::Http(HttpTarget::new(web.url())),
        settings,
        Arc::new(DeclineRequests),
    )
    .await;
    assert_eq!(client.era(), Era::V2026_07_28);
    (web, client)
}

fn listens_received(server: &HttpFakeServer) -> u64 {
    server
        .server()
        .request_counts()
        .get("subscriptions/listen")
        .copied()
        .unwrap_or(0)
}

/// The listen requests the server received, once it recorded at least `n` (rmcp
/// acknowledges a listen before the fake records it: bounded wait).
async fn listens_reaching(server: &HttpFakeServer, n: u64) -> u64 {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while listens_received(server) < n && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    listens_received(server)
}

async fn next_health(changes: &mut broadcast::Receiver<ListenHealth>) -> ListenHealth {
    tokio::time::timeout(PATIENCE, changes.recv())
        .await
        .expect("a listen transition within the bound")
        .unwrap()
}

/// Shuts the client down and checks that it left no listen open, then stops the server.
async fn finish(client: Client, server: HttpFakeServer) {
    client.shutdown().await;
    let closed = async {
        while server.server().open_listens() > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(PATIENCE, closed)
        .await
        .expect("the client's listens end with it");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_the_server_ends_is_reported_reopened_and_catches_up() {
    let (server, client) = supervised(Faults::new(), ClientSettings::new()).await;
    assert_eq!(listens_reaching(&server, 1).await, 1);
    let feed = client.listen_health();
    assert_eq!(feed.current, []);
    let mut changes = feed.changes;

    // The server ends the listen and holds the client's next one back.
    assert_eq!(call(&client, "drop_listens").await, json!({"ended": 1}));
    let lost = next_health(&mut changes).await;
    let ListenHealth::Lost { topic, .. } = &lost else {
        panic!("{lost:?}");
    };
    assert_eq!(topic, &ListenTopic::ListChanges);
    assert_eq!(client.listen_health().current, std::slice::from_ref(&lost));

    // A change while no listen is open: nothing can tell the client about it.
    let mut revisions = client.listing_revisions();
    call(&client, "grow").await;
    assert!(!names(&client).contains(&"grown".to_owned()));

    // Once the listen is back, the tools are listed again and have the change.
    call(&client, "release").await;
    assert_eq!(
        next_health(&mut changes).await,
        ListenHealth::Restored {
            topic: ListenTopic::ListChanges
        }
    );
    tokio::time::timeout(
        PATIENCE,
        revisions.wait_for(|_| names(&client).contains(&"grown".to_owned())),
    )
    .await
    .expect("the change reaches the tools")
    .unwrap();
    assert_eq!(client.listen_health().current, []);
    assert!(changes.try_recv().is_err(), "no other transition");
    assert_eq!(listens_reaching(&server, 2).await, 2);
    assert_eq!(server.server().open_listens(), 1);
    finish(client, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_that_goes_silent_is_cut_after_the_stall_and_reopened() {
    // Keep-alives every 100 ms; a listen counts as stalled after 2 s of nothing at all.
    let (server, client) = supervised(
        Faults::new().with_sse_keep_alive_ms(100),
        ClientSettings::new().with_listen_stall(Duration::from_secs(2)),
    )
    .await;
    let mut changes = client.listen_health().changes;

    // A quiet listen whose server keeps it alive is left alone, however long it is quiet
    // (here: more than twice the stall).
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        changes.try_recv().is_err(),
        "no transition while kept alive"
    );
    assert_eq!(listens_reaching(&server, 1).await, 1);

    // The stream goes silent without closing: the client cuts it and opens another.
    assert_eq!(call(&client, "freeze").await, json!({"silenced": 1}));
    let lost = next_health(&mut changes).await;
    let ListenHealth::Lost { topic, reason } = &lost else {
        panic!("{lost:?}");
    };
    assert_eq!(topic, &ListenTopic::ListChanges);
    assert!(reason.contains("silent"), "{reason}");
    assert_eq!(
        next_health(&mut changes).await,
        ListenHealth::Restored {
            topic: ListenTopic::ListChanges
        }
    );
    assert_eq!(listens_reaching(&server, 2).await, 2);

    // The new listen carries changes.
    let mut revisions = client.listing_revisions();
    call(&client, "grow").await;
    tokio::time::timeout(
        PATIENCE,
        revisions.wait_for(|_| names(&client).contains(&"grown".to_owned())),
    )
    .await
    .expect("the change reaches the tools")
    .unwrap();
    assert!(changes.try_recv().is_err(), "no other transition");
    finish(client, server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_refuses_to_listen_is_reported_once_and_not_asked_again() {
    let (server, client) =
        supervised(Faults::new().with_refuse_listen(), ClientSettings::new()).await;
    // The refusal may come before or after the feed is taken: either way it is told once.
    let feed = client.listen_health();
    let refused = match feed.current.as_slice() {
        [] => {
            let mut changes = feed.changes;
            next_health(&mut changes).await
        }
        [one] => one.clone(),
        more => panic!("{more:?}"),
    };
    let ListenHealth::Refused { topic, reason } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(topic, &ListenTopic::ListChanges);
    assert!(!reason.is_empty());
    let mut changes = client.listen_health().changes;

    // Time for several retries, had there been any (the first would come after 100 ms).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(call(&client, "echo").await, json!({}));
    assert!(changes.try_recv().is_err(), "told once");
    assert_eq!(client.listen_health().current, [refused]);
    assert_eq!(listens_reaching(&server, 1).await, 1);
    finish(client, server).await;
}
