//! Events (SEP-3415) through one `Client`, against the real `mcp-fake-server` binary over
//! stdio (and the streamable-HTTP fake, in both eras, for a host that restarts): the event types listed, the same subscription by poll and by push yields the same
//! events in order, nothing is lost across a push stream the server ends or that goes
//! silent (reopened from the last cursor), and an expired cursor and a truncated replay
//! are reported; webhook subscriptions are made, refreshed and ended with the host's URL
//! and secret.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, DeliveryMode, EventError,
    EventOccurrence, EventPoller, EventStream, EventSubscription, HttpTarget, StreamItem,
    StreamSettings, WebhookSecret, WebhookTarget,
};
use mcp_testkit::{
    Behavior, EventTypeSpec, EventsSpec, HttpFakeServer, Scenario, TestHome, ToolSpec,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{PATIENCE, args, stdio};

/// The push streams' heartbeat; the client's stall is many of them, so only a stream that
/// really went silent is taken for dead.
const HEARTBEAT_MS: u64 = 100;
const STALL: Duration = Duration::from_secs(2);

fn scenario() -> Scenario {
    Scenario::new("inbox")
        .with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("mail").with_description("A new mail"))
                .with_type(EventTypeSpec::new("bell").with_delivery(["poll"]))
                .with_heartbeat_ms(HEARTBEAT_MS),
        )
        .with_tool(ToolSpec::new(
            "send",
            Behavior::EmitEvent {
                name: "mail".into(),
                data: json!({"folder": "inbox"}),
            },
        ))
        .with_tool(ToolSpec::new("forget", Behavior::ForgetEvents { keep: 0 }))
        .with_tool(ToolSpec::new(
            "end_streams",
            Behavior::EndEventStreams { silent: false },
        ))
        .with_tool(ToolSpec::new(
            "freeze_streams",
            Behavior::EndEventStreams { silent: true },
        ))
}

async fn connect(target: mcp_client::Target) -> Client {
    support::connect(
        "inbox",
        target,
        ClientSettings::new().with_process_grace(Duration::from_millis(300)),
        Arc::new(DeclineRequests),
    )
    .await
}

async fn call(client: &Client, tool: &str, arguments: Value) -> Value {
    let result = client
        .call_tool(tool, args(arguments), CallSettings::new(PATIENCE))
        .await
        .unwrap();
    result.structured_content.expect("structured")
}

/// Emits mail number `n`.
async fn send(client: &Client, n: u64) {
    call(client, "send", json!({ "n": n })).await;
}

/// What identifies an event whatever the mode: its id and data.
fn identity(event: &EventOccurrence) -> (String, Value) {
    (event.event_id.clone(), event.data.clone())
}

/// The stream's items until `count` events came, the events and the other items apart.
async fn events(stream: &mut EventStream, count: usize) -> (Vec<EventOccurrence>, Vec<StreamItem>) {
    let mut events = Vec::new();
    let mut others = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        while events.len() < count {
            match stream.next().await.expect("the stream goes on") {
                StreamItem::Event(event) => events.push(event),
                other => others.push(other),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{count} events never came; got {events:?} and {others:?}"));
    (events, others)
}

/// The next item that is not an event.
async fn next_other(stream: &mut EventStream) -> StreamItem {
    let item = tokio::time::timeout(PATIENCE, stream.next())
        .await
        .expect("an item came")
        .expect("the stream goes on");
    assert!(
        !matches!(item, StreamItem::Event(_)),
        "an event where none was due: {item:?}"
    );
    item
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_types_are_listed_as_the_server_describes_them() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(server.target.clone()).await;
    assert!(client.offers_events());
    let types = client.list_event_types().await.unwrap();
    let listed: Vec<(String, Option<String>, Vec<DeliveryMode>, Value)> = types
        .into_iter()
        .map(|t| (t.name, t.description, t.delivery, t.input_schema))
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                "mail".to_owned(),
                Some("A new mail".to_owned()),
                vec![DeliveryMode::Poll, DeliveryMode::Push],
                json!({"type": "object"})
            ),
            (
                "bell".to_owned(),
                None,
                vec![DeliveryMode::Poll],
                json!({"type": "object"})
            ),
        ]
    );
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_and_push_yield_the_same_events_in_order_and_push_loses_none_across_dead_streams() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(server.target.clone()).await;
    let mail = EventSubscription::new("mail");

    // Both start from now: the poll's first answer is empty and gives the cursor.
    let mut poller = EventPoller::new(mail.clone());
    let first = poller.poll(&client).await.unwrap();
    assert_eq!(first.events, Vec::new());
    assert_eq!(poller.cursor(), Some("pos-0"));
    let settings = StreamSettings::new().with_stall(STALL);
    let mut stream = client
        .stream_events(mail.clone(), None, settings)
        .await
        .unwrap();

    for n in 1..=3 {
        send(&client, n).await;
    }
    let (mut pushed, others) = events(&mut stream, 3).await;
    assert_eq!(others, Vec::new());

    // The server ends the stream; what is emitted meanwhile is replayed from the cursor.
    assert_eq!(
        call(&client, "end_streams", json!({})).await,
        json!({"streams": 1})
    );
    for n in 4..=5 {
        send(&client, n).await;
    }
    let (more, others) = events(&mut stream, 2).await;
    pushed.extend(more);
    // The loss may be noticed after events 4 and 5 came on the old stream: then the
    // reopened stream replays nothing.
    assert!(
        matches!(&others[..], [StreamItem::Lost { reason }, StreamItem::Restored] if reason == "the server ended it")
            || others.is_empty(),
        "{others:?}"
    );
    if others.is_empty() {
        assert_eq!(
            next_other(&mut stream).await,
            StreamItem::Lost {
                reason: "the server ended it".to_owned()
            }
        );
        assert_eq!(next_other(&mut stream).await, StreamItem::Restored);
    }

    // The stream goes silent (no event, no heartbeat): the client notices, cancels it and
    // opens it again from its cursor.
    assert_eq!(
        call(&client, "freeze_streams", json!({})).await,
        json!({"streams": 1})
    );
    for n in 6..=7 {
        send(&client, n).await;
    }
    match next_other(&mut stream).await {
        StreamItem::Lost { reason } => {
            assert_eq!(reason, "it sent neither event nor heartbeat for 2s");
        }
        other => panic!("not a loss: {other:?}"),
    }
    assert_eq!(next_other(&mut stream).await, StreamItem::Restored);
    let (more, others) = events(&mut stream, 2).await;
    assert_eq!(others, Vec::new());
    pushed.extend(more);

    // The poll from its kept cursor yields the same events, in the same order.
    let polled = poller.poll(&client).await.unwrap();
    assert!(!polled.truncated && !polled.has_more);
    assert_eq!(
        polled.events.iter().map(identity).collect::<Vec<_>>(),
        pushed.iter().map(identity).collect::<Vec<_>>()
    );
    let expected: Vec<(String, Value)> = (1..=7)
        .map(|n| (format!("evt-{n}"), json!({"folder": "inbox", "n": n})))
        .collect();
    assert_eq!(pushed.iter().map(identity).collect::<Vec<_>>(), expected);
    assert_eq!(poller.cursor(), Some("pos-7"));
    assert_eq!(stream.cursor(), Some("pos-7"));
    // Opened three times; the silent one was cancelled with the server.
    let streams = server.requests("events/stream");
    assert_eq!(streams.len(), 3);
    assert_eq!(streams[1].params["cursor"], json!("pos-3"));
    assert!(!server.requests("notifications/cancelled").is_empty());

    stream.shutdown().await;
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_cursor_and_a_truncated_replay_are_reported_in_both_modes() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        scenario().with_tool(ToolSpec::new(
            "keep_one",
            Behavior::ForgetEvents { keep: 1 },
        )),
    );
    let client = connect(server.target.clone()).await;
    let mail = EventSubscription::new("mail");
    for n in 1..=3 {
        send(&client, n).await;
    }

    // A truncated replay: events 1 and 2 are gone, 3 is kept.
    assert_eq!(
        call(&client, "keep_one", json!({})).await,
        json!({"forgotten": 2})
    );
    let mut poller = EventPoller::new(mail.clone()).with_cursor(Some("pos-0".to_owned()));
    let batch = poller.poll(&client).await.unwrap();
    assert!(batch.truncated);
    assert_eq!(
        batch
            .events
            .iter()
            .map(|e| e.event_id.as_str())
            .collect::<Vec<_>>(),
        vec!["evt-3"]
    );
    assert_eq!(poller.cursor(), Some("pos-3"));
    let settings = StreamSettings::new().with_stall(STALL);
    let mut stream = client
        .stream_events(mail.clone(), Some("pos-0".to_owned()), settings.clone())
        .await
        .unwrap();
    assert_eq!(
        next_other(&mut stream).await,
        StreamItem::Truncated {
            cursor: Some("pos-2".to_owned())
        }
    );
    let (replayed, _) = events(&mut stream, 1).await;
    assert_eq!(replayed[0].event_id, "evt-3");
    stream.shutdown().await;

    // An expired cursor: everything after it is gone; delivery resumes from now.
    assert_eq!(
        call(&client, "forget", json!({})).await,
        json!({"forgotten": 1})
    );
    let expired = client
        .poll_events(&mail, Some("pos-0"), None)
        .await
        .unwrap();
    assert!(expired.truncated);
    assert_eq!(expired.events, Vec::new());
    assert_eq!(expired.cursor.as_deref(), Some("pos-3"));
    let mut stream = client
        .stream_events(mail.clone(), Some("pos-0".to_owned()), settings)
        .await
        .unwrap();
    assert_eq!(
        next_other(&mut stream).await,
        StreamItem::Truncated {
            cursor: Some("pos-3".to_owned())
        }
    );
    send(&client, 4).await;
    let (after, _) = events(&mut stream, 1).await;
    assert_eq!(after[0].event_id, "evt-4");
    assert_eq!(stream.cursor(), Some("pos-4"));
    stream.shutdown().await;

    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_name_the_server_and_the_event_type() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario());
    let client = connect(server.target.clone()).await;
    let unknown = client
        .poll_events(&EventSubscription::new("fax"), None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, EventError::UnknownEventType { .. }),
        "{unknown:?}"
    );
    assert_eq!(
        unknown.to_string(),
        "server `inbox` has no event type `fax`; list its event types (`events/list`) and subscribe to one of them"
    );
    let by_push = client
        .stream_events(EventSubscription::new("bell"), None, StreamSettings::new())
        .await
        .unwrap_err();
    assert_eq!(
        by_push.to_string(),
        "server `inbox` does not deliver event type `bell` by push; use a mode its `events/list` entry offers"
    );
    // A failed poll keeps the cursor the poller had.
    let mut poller =
        EventPoller::new(EventSubscription::new("fax")).with_cursor(Some("pos-0".to_owned()));
    assert!(poller.poll(&client).await.is_err());
    assert_eq!(poller.cursor(), Some("pos-0"));
    let bad_cursor = client
        .poll_events(&EventSubscription::new("mail"), Some("yesterday"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&bad_cursor, EventError::Refused { code: -32602, .. }),
        "{bad_cursor:?}"
    );
    client.shutdown().await;
    server.assert_gone().await;

    // A server without the extension is not asked.
    let home = TestHome::new().unwrap();
    let plain = stdio(
        &home,
        Scenario::new("plain").with_tool(ToolSpec::echo("echo")),
    );
    let client = connect(plain.target.clone()).await;
    assert!(!client.offers_events());
    let error = client.list_event_types().await.unwrap_err();
    assert!(matches!(error, EventError::Unsupported { .. }), "{error:?}");
    assert!(plain.requests("events/list").is_empty());
    client.shutdown().await;
    plain.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_emitted_on_a_timer_arrive_in_order() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        Scenario::new("clock").with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("tick").with_every_ms(20))
                .with_heartbeat_ms(HEARTBEAT_MS),
        ),
    );
    let client = connect(server.target.clone()).await;
    let mut stream = client
        .stream_events(
            EventSubscription::new("tick"),
            None,
            StreamSettings::new().with_stall(STALL),
        )
        .await
        .unwrap();
    let (ticks, _) = events(&mut stream, 3).await;
    let numbers: Vec<u64> = ticks
        .iter()
        .map(|t| t.data["tick"].as_u64().unwrap())
        .collect();
    assert!(
        numbers.windows(2).all(|w| w[1] == w[0] + 1),
        "ticks out of order: {numbers:?}"
    );
    // Dropping the stream cancels its request with the server.
    assert!(server.requests("notifications/cancelled").is_empty());
    drop(stream);
    let cancelled = server.wait_for("notifications/cancelled").await;
    let opened = &server.requests("events/stream")[0];
    assert_eq!(opened.params["name"], json!("tick"));
    assert_eq!(cancelled.len(), 1);
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_subscription_is_made_refreshed_and_ended_with_the_hosts_url_and_secret() {
    let home = TestHome::new().unwrap();
    let server = stdio(
        &home,
        Scenario::new("inbox").with_events(
            EventsSpec::new().with_type(EventTypeSpec::new("mail").with_delivery(["webhook"])),
        ),
    );
    let client = connect(server.target.clone()).await;
    let mail = EventSubscription::new("mail");
    let secret = WebhookSecret::generate().unwrap();
    let url = "https://hooks.example.invalid/inbox";
    let target = WebhookTarget::new(url, secret.clone()).with_ttl(Duration::from_secs(60));
    let made = client
        .subscribe_webhook(&mail, &target, None)
        .await
        .unwrap();
    assert!(made.id.starts_with("sub_"), "{made:?}");
    assert!(made.refresh_before.is_some());
    assert_eq!(made.cursor.as_deref(), Some("pos-0"));
    let sent = &server.requests("events/subscribe")[0].params;
    assert_eq!(
        sent["delivery"],
        json!({"mode": "webhook", "url": url, "secret": secret.to_whsec()})
    );
    assert_eq!(sent["ttlMs"], json!(60_000));
    // A refresh is the same call with the last cursor: the same subscription.
    let refreshed = client
        .subscribe_webhook(&mail, &target, made.cursor.as_deref())
        .await
        .unwrap();
    assert_eq!(refreshed.id, made.id);
    // No expiry asked: none granted.
    let forever = client
        .subscribe_webhook(&mail, &target.clone().with_no_expiry(), None)
        .await
        .unwrap();
    assert_eq!(forever.refresh_before, None);

    client.unsubscribe_webhook(&mail, url).await.unwrap();
    let again = client.unsubscribe_webhook(&mail, url).await.unwrap_err();
    assert_eq!(
        again.to_string(),
        "server `inbox` has no webhook subscription of event type `mail` to `https://hooks.example.invalid/inbox`"
    );
    let plain_http = WebhookTarget::new("http://hooks.example.invalid/inbox", secret);
    let refused = client
        .subscribe_webhook(&mail, &plain_http, None)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, EventError::Refused { code: -32602, .. }),
        "{refused:?}"
    );
    // Poll is not offered for this type.
    let by_poll = client.poll_events(&mail, None, None).await.unwrap_err();
    assert!(
        matches!(
            by_poll,
            EventError::ModeNotOffered {
                mode: DeliveryMode::Poll,
                ..
            }
        ),
        "{by_poll:?}"
    );
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_restarted_host_resumes_from_its_cursor_by_push_and_by_poll_in_both_eras() {
    for era in [None, Some("2026-07-28")] {
        let web = HttpFakeServer::start(support::in_era(scenario(), era))
            .await
            .unwrap();
        let target = || mcp_client::Target::Http(HttpTarget::new(web.url()));
        let mail = EventSubscription::new("mail");
        let settings = StreamSettings::new().with_stall(STALL);

        // The first host: two events by push, then it stops, keeping the cursor.
        let first = connect(target()).await;
        let mut stream = first
            .stream_events(mail.clone(), None, settings.clone())
            .await
            .unwrap_or_else(|e| panic!("era {era:?}: {e}"));
        for n in 1..=2 {
            send(&first, n).await;
        }
        let (seen, _) = events(&mut stream, 2).await;
        assert_eq!(
            seen.iter().map(|e| e.event_id.as_str()).collect::<Vec<_>>(),
            ["evt-1", "evt-2"]
        );
        let kept = stream.cursor().map(str::to_owned);
        assert_eq!(kept.as_deref(), Some("pos-2"), "era {era:?}");
        stream.shutdown().await;
        // Meanwhile, two more happen.
        for n in 3..=4 {
            send(&first, n).await;
        }
        first.shutdown().await;

        // The restarted host resumes from the kept cursor: nothing lost, nothing twice,
        // by push and by poll alike.
        let second = connect(target()).await;
        let mut stream = second
            .stream_events(mail.clone(), kept.clone(), settings)
            .await
            .unwrap();
        let (pushed, others) = events(&mut stream, 2).await;
        assert_eq!(others, Vec::new());
        let mut poller = EventPoller::new(mail.clone()).with_cursor(kept);
        let polled = poller.poll(&second).await.unwrap();
        assert_eq!(
            pushed.iter().map(identity).collect::<Vec<_>>(),
            polled.events.iter().map(identity).collect::<Vec<_>>()
        );
        assert_eq!(
            pushed
                .iter()
                .map(|e| e.event_id.as_str())
                .collect::<Vec<_>>(),
            ["evt-3", "evt-4"],
            "era {era:?}"
        );
        stream.shutdown().await;
        second.shutdown().await;
        web.shutdown().await;
    }
}
