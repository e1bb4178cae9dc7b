//! Events (SEP-3415) through the connection set, against real `mcp-fake-server` processes:
//! the set picks push when offered and poll otherwise, and both yield the same events in
//! order; a push stream the server kills loses nothing, and a feed resumed from the cursor
//! of a dropped one goes on where it stopped; a host that lets its feed fill up loses the
//! overflow and sees it counted; dropping a feed cancels its stream with the server; a
//! feed ends with its connection and with the set; clear errors name the server and the
//! event type. No process is left.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use std::time::Duration;

use common::*;
use mcp_connections::{
    CallOptions, ConnectionSet, ConnectionSetOptions, DeliveryMode, EventError, EventFeed,
    EventFeedError, EventFeedOptions, EventOccurrence, StreamItem,
};
use mcp_key::McpServerKey;
use mcp_testkit::{Behavior, EventTypeSpec, EventsSpec, RecordedRequest, Scenario, ToolSpec};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(50);

fn scenario() -> Scenario {
    Scenario::new("inbox")
        .with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("mail").with_description("A new mail"))
                .with_type(EventTypeSpec::new("bell").with_delivery(["poll"]))
                .with_type(EventTypeSpec::new("hook").with_delivery(["webhook"]))
                .with_heartbeat_ms(100)
                .with_next_poll_ms(50),
        )
        .with_tool(ToolSpec::new(
            "send",
            Behavior::EmitEvent {
                name: "mail".into(),
                data: json!({"folder": "inbox"}),
            },
        ))
        .with_tool(ToolSpec::new("exit", Behavior::Exit { code: 1 }))
        .with_tool(ToolSpec::new(
            "end_streams",
            Behavior::EndEventStreams { silent: false },
        ))
}

fn opts() -> ConnectionSetOptions {
    ConnectionSetOptions::new().with_client(|c| c.with_process_grace(Duration::from_millis(300)))
}

async fn started(fx: &Fixture) -> ConnectionSet {
    let set = ConnectionSet::start(&fx.catalog(), opts());
    assert_eq!(set.wait_startup().await.ready(), fx.pids().len().max(1));
    set
}

fn inbox() -> McpServerKey {
    "inbox".parse().unwrap()
}

async fn call(set: &ConnectionSet, tool: &str, arguments: Value) {
    set.call_tool(&inbox(), tool, Some(arguments), CallOptions::new())
        .await
        .unwrap();
}

async fn send(set: &ConnectionSet, n: u64) {
    call(set, "send", json!({ "n": n })).await;
}

async fn subscribe(set: &ConnectionSet, event_type: &str, options: EventFeedOptions) -> EventFeed {
    set.subscribe_events(&inbox(), event_type, serde_json::Map::new(), options)
        .await
        .unwrap()
}

/// What identifies an event whatever the mode: its id and data.
fn identity(event: &EventOccurrence) -> (String, Value) {
    (event.event_id.clone(), event.data.clone())
}

/// The feed's items until `count` events came: the events and the other items apart.
async fn events(feed: &mut EventFeed, count: usize) -> (Vec<(String, Value)>, Vec<StreamItem>) {
    let mut events = Vec::new();
    let mut others = Vec::new();
    tokio::time::timeout(WAIT, async {
        while events.len() < count {
            match feed.next().await.expect("the feed goes on") {
                StreamItem::Event(event) => events.push(identity(&event)),
                other => others.push(other),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{count} events never came; got {events:?} and {others:?}"));
    (events, others)
}

/// The data of mails `ns`, as the fake server emits them.
fn mails(ns: impl IntoIterator<Item = u64>) -> Vec<Value> {
    ns.into_iter()
        .map(|n| json!({"folder": "inbox", "n": n}))
        .collect()
}

fn data(events: &[(String, Value)]) -> Vec<Value> {
    events.iter().map(|(_, d)| d.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_and_poll_yield_the_same_events_in_order() {
    let mut fx = Fixture::new();
    fx.stdio("inbox", scenario());
    let set = started(&fx).await;

    let types = set.event_types(&inbox()).await.unwrap();
    let names: Vec<(&str, Vec<DeliveryMode>)> = types
        .iter()
        .map(|t| (t.name.as_str(), t.delivery.clone()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("mail", vec![DeliveryMode::Poll, DeliveryMode::Push]),
            ("bell", vec![DeliveryMode::Poll]),
            ("hook", vec![DeliveryMode::Webhook]),
        ]
    );

    // Push is taken when offered, poll otherwise.
    let mut pushed = subscribe(&set, "mail", EventFeedOptions::new()).await;
    assert_eq!(pushed.mode(), DeliveryMode::Push);
    let bell = subscribe(&set, "bell", EventFeedOptions::new()).await;
    assert_eq!(bell.mode(), DeliveryMode::Poll);
    drop(bell);
    let mut polled = subscribe(
        &set,
        "mail",
        EventFeedOptions::new()
            .with_mode(DeliveryMode::Poll)
            .with_min_poll_interval(POLL),
    )
    .await;
    assert_eq!(polled.mode(), DeliveryMode::Poll);
    assert_eq!((pushed.server(), pushed.event_type()), (&inbox(), "mail"));

    for n in 1..=5 {
        send(&set, n).await;
    }
    let (by_push, _) = events(&mut pushed, 5).await;
    let (by_poll, _) = events(&mut polled, 5).await;
    assert_eq!(data(&by_push), mails(1..=5));
    assert_eq!(by_push, by_poll);
    assert_eq!((pushed.dropped(), polled.dropped()), (0, 0));

    drop((pushed, polled));
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_stream_loses_nothing_and_a_new_feed_resumes_from_the_cursor() {
    let mut fx = Fixture::new();
    fx.stdio("inbox", scenario());
    let set = started(&fx).await;

    let mut feed = subscribe(
        &set,
        "mail",
        EventFeedOptions::new().with_stall(Duration::from_secs(2)),
    )
    .await;
    send(&set, 1).await;
    send(&set, 2).await;
    let (first, _) = events(&mut feed, 2).await;
    // The server ends the stream; what comes meanwhile is delivered once it is re-opened.
    call(&set, "end_streams", json!({})).await;
    send(&set, 3).await;
    send(&set, 4).await;
    let (second, others) = events(&mut feed, 2).await;
    assert_eq!(data(&first), mails(1..=2));
    assert_eq!(data(&second), mails(3..=4));
    assert!(
        others.iter().any(|i| matches!(i, StreamItem::Lost { .. })),
        "{others:?}"
    );

    // A host that stops and comes back with the cursor it kept gets what it missed, by
    // either mode.
    let cursor = feed.cursor().expect("a cursor").to_owned();
    feed.shutdown().await;
    send(&set, 5).await;
    send(&set, 6).await;
    // Push first (mails 5 and 6 missed, 7 sent meanwhile), then poll from the same
    // cursor (5 to 7 missed, 8 sent meanwhile).
    for (mode, last) in [(DeliveryMode::Push, 6), (DeliveryMode::Poll, 7)] {
        let mut resumed = subscribe(
            &set,
            "mail",
            EventFeedOptions::new()
                .resume_from(cursor.clone())
                .with_mode(mode)
                .with_min_poll_interval(POLL),
        )
        .await;
        let missed = usize::try_from(last - 4).unwrap();
        let (got, _) = events(&mut resumed, missed).await;
        assert_eq!(data(&got), mails(5..=last), "{mode}");
        // Nothing twice: the next event is the next mail.
        send(&set, last + 1).await;
        let (next, _) = events(&mut resumed, 1).await;
        assert_eq!(data(&next), mails([last + 1]), "{mode}");
        drop(resumed);
    }

    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_the_host_does_not_empty_drops_the_overflow_and_counts_it() {
    let mut fx = Fixture::new();
    fx.stdio("inbox", scenario());
    let set = started(&fx).await;

    let mut feed = subscribe(&set, "mail", EventFeedOptions::new().with_capacity(2)).await;
    for n in 1..=5 {
        send(&set, n).await;
    }
    tokio::time::timeout(WAIT, async {
        while feed.dropped() < 3 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the overflow is counted");
    assert_eq!(feed.dropped(), 3);
    // The two held are the first two; the next one taken after room was made is new.
    let (held, _) = events(&mut feed, 2).await;
    assert_eq!(data(&held), mails(1..=2));
    // The dropped ones come again to a feed resumed from the cursor after the last taken.
    let mut resumed = subscribe(
        &set,
        "mail",
        EventFeedOptions::new().resume_from(feed.cursor().expect("a cursor")),
    )
    .await;
    let (again, _) = events(&mut resumed, 3).await;
    assert_eq!(data(&again), mails(3..=5));
    drop(resumed);
    send(&set, 6).await;
    let (next, _) = events(&mut feed, 1).await;
    assert_eq!(data(&next), mails([6]));
    assert_eq!(feed.dropped(), 3);

    drop(feed);
    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_feed_cancels_its_stream_with_the_server() {
    let mut fx = Fixture::new();
    fx.stdio("inbox", scenario());
    let set = started(&fx).await;
    let cancelled = || {
        RecordedRequest::read_log(fx.request_log("inbox"))
            .into_iter()
            .filter(|r| r.method == "notifications/cancelled")
            .count()
    };

    let feed = subscribe(&set, "mail", EventFeedOptions::new()).await;
    assert_eq!(cancelled(), 0);
    drop(feed);
    tokio::time::timeout(WAIT, async {
        while cancelled() == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the stream is cancelled with the server");

    set.shutdown().await;
    fx.assert_no_processes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_name_the_server_and_the_event_type() {
    let mut fx = Fixture::new();
    fx.stdio("inbox", scenario());
    fx.stdio(
        "plain",
        Scenario::new("plain").with_tool(ToolSpec::echo("echo")),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    assert_eq!(set.wait_startup().await.ready(), 2);
    let text = |e: EventFeedError| e.to_string();
    let subscribe_to = |server: &'static str, event_type: &'static str, options| {
        let set = set.clone();
        async move {
            set.subscribe_events(
                &server.parse().unwrap(),
                event_type,
                serde_json::Map::new(),
                options,
            )
            .await
            .map(|_| ())
        }
    };

    let unknown = subscribe_to("inbox", "fax", EventFeedOptions::new())
        .await
        .unwrap_err();
    assert!(
        matches!(
            unknown,
            EventFeedError::Event(EventError::UnknownEventType { .. })
        ),
        "{unknown:?}"
    );
    assert_eq!(
        text(unknown),
        "server `inbox` has no event type `fax`; list its event types (`events/list`) and subscribe to one of them"
    );

    let plain = subscribe_to("plain", "mail", EventFeedOptions::new())
        .await
        .unwrap_err();
    assert_eq!(
        text(plain),
        "server `plain` does not offer events (no `io.modelcontextprotocol/events` extension in its capabilities)"
    );
    let listed = set
        .event_types(&"plain".parse().unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(
            listed,
            EventFeedError::Event(EventError::Unsupported { .. })
        ),
        "{listed:?}"
    );

    let hook = subscribe_to("inbox", "hook", EventFeedOptions::new())
        .await
        .unwrap_err();
    assert_eq!(
        text(hook),
        "server `inbox` delivers event type `hook` only by webhook, which a host without a public URL cannot receive; subscribe with `mcp_client::Client::subscribe_webhook` from a host that has one"
    );

    let not_push = subscribe_to(
        "inbox",
        "bell",
        EventFeedOptions::new().with_mode(DeliveryMode::Push),
    )
    .await
    .unwrap_err();
    assert_eq!(
        text(not_push),
        "server `inbox` does not deliver event type `bell` by push; use a mode its `events/list` entry offers"
    );

    let nobody = subscribe_to("nobody", "mail", EventFeedOptions::new())
        .await
        .unwrap_err();
    assert!(matches!(nobody, EventFeedError::Set(_)), "{nobody:?}");

    set.shutdown().await;
    fx.assert_no_processes().await;
}

/// The item after the events of `feed`: what ends it.
async fn end_of(feed: &mut EventFeed) -> Option<StreamItem> {
    tokio::time::timeout(WAIT, async {
        loop {
            match feed.next().await {
                Some(StreamItem::Event(_) | StreamItem::Lost { .. }) => {}
                other => return other,
            }
        }
    })
    .await
    .expect("the feed ends")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_feed_ends_with_its_connection_and_with_the_set() {
    let mut fx = Fixture::new();
    fx.stdio("inbox", scenario());
    let set = started(&fx).await;

    let mut pushed = subscribe(&set, "mail", EventFeedOptions::new().without_restore()).await;
    let mut polled = subscribe(
        &set,
        "mail",
        EventFeedOptions::new()
            .with_mode(DeliveryMode::Poll)
            .with_min_poll_interval(POLL)
            .without_restore(),
    )
    .await;
    // The server dies: both feeds made `without_restore` end, saying why.
    let _ = set
        .call_tool(&inbox(), "exit", None, CallOptions::new())
        .await;
    for feed in [&mut pushed, &mut polled] {
        let end = end_of(feed).await;
        assert!(matches!(end, Some(StreamItem::Ended(_))), "{end:?}");
        assert!(feed.next().await.is_none());
    }

    // A feed made on the restarted server (the set waits for it) ends with the set.
    let mut feed = subscribe(&set, "mail", EventFeedOptions::new()).await;
    set.shutdown().await;
    let end = end_of(&mut feed).await;
    assert!(matches!(end, None | Some(StreamItem::Ended(_))), "{end:?}");
    fx.assert_no_processes().await;
}

#[tokio::test]
async fn webhook_subscriptions_go_to_the_server_and_errors_name_it() {
    let mut fx = Fixture::new();
    fx.stdio("inbox", scenario());
    fx.stdio(
        "plain",
        Scenario::new("plain").with_tool(ToolSpec::echo("echo")),
    );
    let set = ConnectionSet::start(&fx.catalog(), opts());
    assert_eq!(set.wait_startup().await.ready(), 2);
    let secret = mcp_client::WebhookSecret::generate().unwrap();
    let target = mcp_client::WebhookTarget::new("https://hooks.invalid/in", secret);
    // A server without events is refused before anything is sent.
    let plain = set
        .subscribe_webhook(
            &"plain".parse().unwrap(),
            "hook",
            serde_json::Map::new(),
            &target,
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(plain, EventFeedError::Event(EventError::Unsupported { .. })),
        "{plain:?}"
    );
    assert!(plain.to_string().contains("`plain`"), "{plain}");
    // The server has no subscription to that URL: its answer, with the server named.
    let unknown = set
        .unsubscribe_webhook(
            &inbox(),
            "hook",
            serde_json::Map::new(),
            "https://hooks.invalid/other",
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            unknown,
            EventFeedError::Event(EventError::UnknownSubscription { .. })
        ),
        "{unknown:?}"
    );
    assert!(unknown.to_string().contains("`inbox`"), "{unknown}");
    set.shutdown().await;
    fx.assert_no_processes().await;
}
