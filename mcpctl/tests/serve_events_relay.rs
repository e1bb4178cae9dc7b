//! The gateway's event relay end to end, against `mcpctl fake-server` upstream and
//! mcp-client through `mcpctl serve --http`:
//!
//! - the gateway's upstream webhook subscriptions are leases ended by its stop: after
//!   SIGTERM the upstream server has received `events/unsubscribe` for the callback URL it
//!   was subscribed with (before, they lapsed at their TTL);
//! - an `events/stream` is a client of its caller, as a `subscriptions/listen` is: a caller
//!   holding `[gateway.limits] clients_per_principal` (sessions, listens and streams) is
//!   refused, naming the limit, and admitted again once one of its streams ends; another
//!   caller is not affected;
//! - when the upstream subscription ends for good (its server gone, and back without the
//!   event type), the gateway's push stream sends `notifications/events/terminated` and the
//!   client's `EventStream` ends with `EventError::Terminated` naming the gateway's event
//!   type and why the upstream ended (naming the server), and nothing follows;
//! - when the upstream skips events in the middle of a stream (its replay after a stalled
//!   stream is truncated), the gateway's stream says `truncated` (the client's
//!   `StreamItem::Truncated`) and goes on with the events the upstream kept, none of the
//!   skipped ones; a poll from before the gap says `truncated` too.
//!
//! Every test checks that no server process is left.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test helpers may panic; the test stops mcpctl serve with `kill -TERM`"
)]

mod support;
mod team;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, EventError, EventOccurrence,
    EventStream, EventSubscription, Handshake, HttpTarget, StreamItem, StreamSettings, Target,
};
use mcp_testkit::{
    Behavior, EventTypeSpec, EventsSpec, RecordedRequest, Recording, Scenario, ToolSpec,
};
use serde_json::{Value, json};
use support::{Served, Workdir};

const TOKEN: &str = "events-relay-test-token";

/// A client of the gateway at `url` with `token`.
async fn connect(url: &str, token: &str, handshake: Handshake) -> Client {
    let target = Target::Http(HttpTarget::new(url.to_owned()).with_headers(vec![(
        "Authorization".to_owned(),
        mcp_key::Secret::new(format!("Bearer {token}")),
    )]));
    Client::connect(
        "gateway".parse().unwrap(),
        target,
        ClientSettings::new().with_handshake(handshake),
        Arc::new(DeclineRequests),
    )
    .await
    .unwrap_or_else(|e| panic!("connect to the gateway: {e}"))
}

/// Calls the gateway's tool `name` with `arguments`.
async fn call(client: &Client, name: &str, arguments: Value) {
    client
        .call_tool(
            name,
            arguments.as_object().cloned(),
            CallSettings::new(Duration::from_secs(30)),
        )
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// The next item of `stream` that is no heartbeat's doing, within 120 s (a stalled
/// upstream stream is opened again after 60 s).
async fn next_item(stream: &mut EventStream) -> StreamItem {
    tokio::time::timeout(Duration::from_secs(120), stream.next())
        .await
        .expect("an item within 120s")
        .expect("the stream goes on")
}

/// The next event of `stream`, failing on anything else.
async fn next_event(stream: &mut EventStream) -> EventOccurrence {
    match next_item(stream).await {
        StreamItem::Event(event) => event,
        other => panic!("an event, not {other:?}"),
    }
}

/// The requests `method` the server logging to `log` received.
fn requests(log: &Path, method: &str) -> Vec<RecordedRequest> {
    RecordedRequest::read_log(log)
        .into_iter()
        .filter(|r| r.method == method)
        .collect()
}

/// `[mcp_servers.inbox]` running `mcpctl fake-server --scenario inbox.json`.
const INBOX: &str = "[mcp_servers.inbox]\ncommand = \"{MCPCTL}\"\nargs = [\"fake-server\", \"--scenario\", \"inbox.json\"]\ndefault_tools_approval_mode = \"approve\"\n";

#[test]
fn stopping_mcpctl_serve_ends_its_webhook_subscriptions_upstream() {
    let wd = Workdir::new();
    let log = wd.path().join("inbox.requests");
    let mut record = Recording::default();
    record.request_log = Some(log.clone());
    Scenario::new("inbox")
        .with_events(
            EventsSpec::new().with_type(EventTypeSpec::new("hook").with_delivery(["webhook"])),
        )
        .with_tool(ToolSpec::new(
            "ring",
            Behavior::EmitEvent {
                name: "hook".into(),
                data: json!({"rang": true}),
            },
        ))
        .with_record(record)
        .write_json(wd.path().join("inbox.json"))
        .unwrap();
    let port = mcp_testkit::free_loopback_port().unwrap();
    let public = format!("http://127.0.0.1:{port}");
    let config = wd.write(
        "mcp.toml",
        &format!("[gateway]\npublic_url = \"{public}\"\n\n{INBOX}"),
    );
    let mut gateway = Served::start_at(&wd, &config, TOKEN, &format!("127.0.0.1:{port}"), &[], &[]);
    support::runtime().block_on(async {
        let client = connect(&format!("{public}/mcp"), TOKEN, Handshake::Initialize).await;
        let hook = EventSubscription::new("mcp__inbox__hook");
        // The first poll subscribes upstream, by webhook to the gateway's receiver.
        let first = client.poll_events(&hook, None, None).await.unwrap();
        let mut cursor = first.cursor;
        call(&client, "mcp__inbox__ring", json!({})).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut events = Vec::new();
        while events.is_empty() {
            assert!(Instant::now() < deadline, "the webhook delivery never came");
            tokio::time::sleep(Duration::from_millis(50)).await;
            let batch = client
                .poll_events(&hook, cursor.as_deref(), None)
                .await
                .unwrap();
            events.extend(batch.events.into_iter().map(|e| e.data));
            cursor = batch.cursor;
        }
        assert_eq!(events, [json!({"rang": true})]);
        client.shutdown().await;
    });
    let subscribed = requests(&log, "events/subscribe");
    assert_eq!(subscribed.len(), 1, "{subscribed:?}");
    let url = subscribed[0].params["delivery"]["url"].clone();
    assert!(
        url.as_str()
            .is_some_and(|u| u.starts_with(&format!("{public}/events/webhook/"))),
        "{url}"
    );
    assert!(
        requests(&log, "events/unsubscribe").is_empty(),
        "nothing ends it while the gateway runs"
    );

    assert!(gateway.stop().success(), "mcpctl serve stops cleanly");
    let ended = requests(&log, "events/unsubscribe");
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0].params["name"], json!("hook"));
    assert_eq!(
        ended[0].params["delivery"]["url"], url,
        "the same subscription"
    );
    drop(gateway);
    wd.assert_no_server_left();
}

/// A fake server emitting `mail` (push and poll) when its tool `send` is called.
fn mail_server(name: &str) -> String {
    let scenario = Scenario::new(name)
        .with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("mail"))
                .with_heartbeat_ms(100),
        )
        .with_tool(ToolSpec::new(
            "send",
            Behavior::EmitEvent {
                name: "mail".into(),
                data: json!({}),
            },
        ));
    format!(
        "\n[mcp_servers.{name}]\ncommand = \"{{MCPCTL}}\"\nargs = [\"fake-server\", \"--scenario-json\", {}]\ndefault_tools_approval_mode = \"approve\"\n",
        support::toml_str(&serde_json::to_string(&scenario).unwrap())
    )
}

/// A push stream of `mcp__inbox__mail` from now.
async fn open(client: &Client) -> Result<EventStream, EventError> {
    let mail = EventSubscription::new("mcp__inbox__mail");
    client
        .stream_events(mail, None, StreamSettings::new())
        .await
}

#[test]
fn an_event_stream_takes_a_client_slot_of_its_caller() {
    use team::STATIC_TOKEN;
    let wd = Workdir::new();
    let runtime = support::runtime();
    let auth = runtime.block_on(team::auth_server());
    let rest = format!(
        "[gateway.limits]\nclients_per_principal = 3\n{}",
        mail_server("inbox")
    );
    let config = team::config(&wd, &auth.issuer(), "", &rest);
    let served = support::Served::start(&wd, &config, STATIC_TOKEN, &[]);
    let url = served.url.clone();
    runtime.block_on(async {
        let alice = team::token(&auth, &url, "alice", &[]);
        let bob = team::token(&auth, &url, "bob", &[]);
        // 2025-era clients: the session takes one slot, each stream one more.
        let client = connect(&url, &alice, Handshake::Initialize).await;
        let first = open(&client).await.unwrap();
        let mut second = open(&client).await.unwrap();
        let refused = open(&client)
            .await
            .expect_err("a third client of alice's")
            .to_string();
        for part in [
            "you already have 3 clients connected to mcpctl serve",
            "[gateway.limits] clients_per_principal",
            "end an events/stream",
        ] {
            assert!(refused.contains(part), "no {part:?} in {refused}");
        }
        // Another caller has slots of its own.
        let other = connect(&url, &bob, Handshake::Initialize).await;
        let bobs = open(&other).await.unwrap();

        // A stream that ends gives its slot back (once the gateway saw it end).
        first.shutdown().await;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut third = loop {
            match open(&client).await {
                Ok(stream) => break stream,
                Err(e) => assert!(Instant::now() < deadline, "no slot came back: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        call(&client, "mcp__inbox__send", json!({"n": 1})).await;
        for stream in [&mut second, &mut third] {
            assert_eq!(next_event(stream).await.data, json!({"n": 1}));
        }
        for stream in [second, third, bobs] {
            stream.shutdown().await;
        }
        client.shutdown().await;
        other.shutdown().await;
    });
    drop(served);
    runtime.block_on(auth.shutdown());
    wd.assert_no_server_left();
}

/// Writes `inbox.json`: `mail` by push and poll (none with `events: false`), and the tools
/// `send` (emits `mail` with the call's arguments), `die` (the server exits), `silence`
/// (open push streams go silent), `forget` (all events but the latest are forgotten).
fn write_inbox(wd: &Workdir, events: bool) {
    let mut scenario = Scenario::new("inbox")
        .with_tool(ToolSpec::new(
            "send",
            Behavior::EmitEvent {
                name: "mail".into(),
                data: json!({}),
            },
        ))
        .with_tool(ToolSpec::new("die", Behavior::Exit { code: 3 }))
        .with_tool(ToolSpec::new(
            "silence",
            Behavior::EndEventStreams { silent: true },
        ))
        .with_tool(ToolSpec::new("forget", Behavior::ForgetEvents { keep: 1 }));
    if events {
        scenario = scenario.with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("mail"))
                .with_heartbeat_ms(100),
        );
    }
    scenario.write_json(wd.path().join("inbox.json")).unwrap();
}

#[test]
fn a_stream_through_the_gateway_says_terminated_when_the_upstream_subscription_ends() {
    let wd = Workdir::new();
    write_inbox(&wd, true);
    let config = wd.write("mcp.toml", INBOX);
    let served = support::Served::start(&wd, &config, TOKEN, &[]);
    support::runtime().block_on(async {
        let client = connect(&served.url, TOKEN, Handshake::Discover).await;
        let mail = EventSubscription::new("mcp__inbox__mail");
        let mut stream = client
            .stream_events(mail, None, StreamSettings::new())
            .await
            .unwrap();
        call(&client, "mcp__inbox__send", json!({"n": 1})).await;
        assert_eq!(next_event(&mut stream).await.data, json!({"n": 1}));

        // The server goes, and comes back without the event type: the upstream
        // subscription cannot go on.
        write_inbox(&wd, false);
        let died = client
            .call_tool(
                "mcp__inbox__die",
                None,
                CallSettings::new(Duration::from_secs(30)),
            )
            .await;
        assert!(
            died.as_ref().map_or(true, |r| r.is_error == Some(true)),
            "the server exited mid-call: {died:?}"
        );
        let item = next_item(&mut stream).await;
        let StreamItem::Ended(EventError::Terminated {
            event_type,
            message,
            ..
        }) = item
        else {
            panic!("terminated, not {item:?}");
        };
        assert_eq!(&*event_type, "mcp__inbox__mail");
        assert!(
            message.contains("server `inbox`"),
            "why the upstream ended, naming the server: {message}"
        );
        let after = tokio::time::timeout(Duration::from_secs(30), stream.next()).await;
        assert!(
            matches!(after, Ok(None)),
            "nothing after the end: {after:?}"
        );
        client.shutdown().await;
    });
    drop(served);
    wd.assert_no_server_left();
}

#[test]
fn a_truncated_replay_upstream_reaches_the_gateways_stream_as_truncated() {
    let wd = Workdir::new();
    write_inbox(&wd, true);
    let config = wd.write("mcp.toml", INBOX);
    let served = support::Served::start(&wd, &config, TOKEN, &[]);
    support::runtime().block_on(async {
        let client = connect(&served.url, TOKEN, Handshake::Discover).await;
        let mail = EventSubscription::new("mcp__inbox__mail");
        let mut stream = client
            .stream_events(mail.clone(), None, StreamSettings::new())
            .await
            .unwrap();
        call(&client, "mcp__inbox__send", json!({"n": 0})).await;
        assert_eq!(next_event(&mut stream).await.data, json!({"n": 0}));
        let before_the_gap = stream.cursor().map(str::to_owned);

        // The gateway's upstream stream goes silent; meanwhile three events happen and
        // the server forgets all but the last. The gateway opens its upstream stream again
        // (after its stall) from its cursor, and the server's replay skips two events.
        call(&client, "mcp__inbox__silence", json!({})).await;
        for n in 1..=3 {
            call(&client, "mcp__inbox__send", json!({ "n": n })).await;
        }
        call(&client, "mcp__inbox__forget", json!({})).await;

        let item = next_item(&mut stream).await;
        assert!(
            matches!(item, StreamItem::Truncated { .. }),
            "truncated first, not {item:?}"
        );
        assert_eq!(
            next_event(&mut stream).await.data,
            json!({"n": 3}),
            "then the kept event, none of the skipped ones"
        );
        call(&client, "mcp__inbox__send", json!({"n": 4})).await;
        assert_eq!(next_event(&mut stream).await.data, json!({"n": 4}));

        let polled = client
            .poll_events(&mail, before_the_gap.as_deref(), None)
            .await
            .unwrap();
        assert!(polled.truncated, "a poll from before the gap: {polled:?}");
        let data: Vec<Value> = polled.events.into_iter().map(|e| e.data).collect();
        assert_eq!(data, [json!({"n": 3}), json!({"n": 4})]);
        stream.shutdown().await;
        client.shutdown().await;
    });
    drop(served);
    wd.assert_no_server_left();
}
