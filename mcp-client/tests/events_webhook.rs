//! Webhook delivery of events (SEP-3415) against the real `mcp-fake-server` binary, which
//! POSTs signed deliveries to a loopback receiver built here from a tokio socket (a
//! minimal HTTP/1.1 server) that checks each with `WebhookVerifier` and answers the
//! callback verification with `WebhookBody::challenge_answer`: the same subscription by
//! poll, push and webhook yields the same events in order; forged, replayed and stale
//! deliveries are refused and counted; a subscription not refreshed lapses and its
//! deliveries stop while a `WebhookLease` keeps its own (also through a TTL the server
//! lets lapse early); a lease ends its subscription on close and, best effort, on drop.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, EventError, EventOccurrence,
    EventPoller, EventSubscription, StreamItem, StreamSettings, WebhookBody, WebhookHeaders,
    WebhookLeaseSettings, WebhookRejection, WebhookSecret, WebhookTarget, WebhookVerifier,
};
use mcp_testkit::{
    Behavior, EventTypeSpec, EventsSpec, Scenario, TestHome, ToolSpec, WebhookFault, WebhookSpec,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{PATIENCE, args, stdio};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What one callback path received.
#[derive(Default)]
struct Hook {
    verifier: Option<WebhookVerifier>,
    /// The events accepted, in arrival order.
    events: Vec<EventOccurrence>,
    /// Verification envelopes answered.
    verifications: usize,
    /// Deliveries refused, by reason.
    refused: BTreeMap<&'static str, usize>,
    /// The cursors of the `gap` envelopes.
    gaps: Vec<Option<String>>,
    /// The `X-MCP-Subscription-Id` of each delivery accepted.
    subscription_ids: Vec<String>,
    /// The last event accepted as received: `webhook-id`, `webhook-timestamp`,
    /// `webhook-signature`, body.
    last: Option<(String, String, String, Vec<u8>)>,
}

/// A loopback webhook receiver: one socket, a [`Hook`] per path.
struct Receiver {
    port: u16,
    hooks: Arc<Mutex<BTreeMap<String, Hook>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hooks: Arc<Mutex<BTreeMap<String, Hook>>> = Arc::default();
        let shared = Arc::clone(&hooks);
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let hooks = Arc::clone(&shared);
                tokio::spawn(serve(socket, hooks));
            }
        });
        Self { port, hooks, task }
    }

    /// A callback URL at `path`, whose deliveries are verified with `secret`.
    fn hook(&self, path: &str, secret: &WebhookSecret) -> String {
        self.hooks.lock().unwrap().insert(
            path.to_owned(),
            Hook {
                verifier: Some(WebhookVerifier::new(secret.clone())),
                ..Hook::default()
            },
        );
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn events(&self, path: &str) -> Vec<EventOccurrence> {
        self.hooks.lock().unwrap()[path].events.clone()
    }

    fn refused(&self, path: &str) -> BTreeMap<&'static str, usize> {
        self.hooks.lock().unwrap()[path].refused.clone()
    }

    fn gaps(&self, path: &str) -> Vec<Option<String>> {
        self.hooks.lock().unwrap()[path].gaps.clone()
    }

    fn subscription_ids(&self, path: &str) -> Vec<String> {
        self.hooks.lock().unwrap()[path].subscription_ids.clone()
    }

    fn verifications(&self, path: &str) -> usize {
        self.hooks.lock().unwrap()[path].verifications
    }

    /// The events of `path`, once at least `count` came.
    async fn wait_events(&self, path: &str, count: usize) -> Vec<EventOccurrence> {
        tokio::time::timeout(PATIENCE, async {
            loop {
                let events = self.events(path);
                if events.len() >= count {
                    return events;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{count} deliveries never came to {path}: {:?}",
                self.events(path)
            )
        })
    }

    /// The refusals of `path`, once they add up to `count`.
    async fn wait_refused(&self, path: &str, count: usize) -> BTreeMap<&'static str, usize> {
        tokio::time::timeout(PATIENCE, async {
            loop {
                let refused = self.refused(path);
                if refused.values().sum::<usize>() >= count {
                    return refused;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{count} refusals never came to {path}: {:?}",
                self.refused(path)
            )
        })
    }
}

/// Serves one connection: one request, one answer.
async fn serve(mut socket: tokio::net::TcpStream, hooks: Arc<Mutex<BTreeMap<String, Hook>>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_end, length) = loop {
        let Ok(read) = socket.read(&mut chunk).await else {
            return;
        };
        if read == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buffer[..end]).to_string();
            let length = header(&head, "content-length")
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while buffer.len() < head_end + length {
        let Ok(read) = socket.read(&mut chunk).await else {
            return;
        };
        if read == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
    let body = &buffer[head_end..head_end + length];
    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
    let (status, answer) = {
        let mut hooks = hooks.lock().unwrap();
        match hooks.get_mut(&path) {
            None => ("404 Not Found", Vec::new()),
            Some(hook) => receive(hook, &head, body),
        }
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        answer.len()
    );
    let _ = socket.write_all(reply.as_bytes()).await;
    let _ = socket.write_all(&answer).await;
    let _ = socket.shutdown().await;
}

/// Verifies and keeps one delivery; the answer's status and body.
fn receive(hook: &mut Hook, head: &str, body: &[u8]) -> (&'static str, Vec<u8>) {
    let headers = WebhookHeaders::from_lookup(|name| header(head, name));
    let verifier = hook.verifier.as_ref().expect("a verifier");
    if let Err(rejection) = verifier.verify(&headers, body, SystemTime::now()) {
        let reason = match rejection {
            WebhookRejection::BadSignature => "bad_signature",
            WebhookRejection::Replayed(_) => "replayed",
            WebhookRejection::OutsideWindow { .. } => "stale",
            _ => "other",
        };
        *hook.refused.entry(reason).or_default() += 1;
        // A replay of a delivery already handled is acknowledged (the server need not
        // retry it) but not handled again; anything else is refused.
        let status = if reason == "replayed" {
            "200 OK"
        } else {
            "401 Unauthorized"
        };
        return (status, Vec::new());
    }
    if let Some(id) = header(head, "x-mcp-subscription-id") {
        hook.subscription_ids.push(id.to_owned());
    }
    match WebhookBody::parse(body) {
        Ok(WebhookBody::Gap { cursor }) => {
            hook.gaps.push(cursor);
            ("200 OK", Vec::new())
        }
        Ok(WebhookBody::Event(event)) => {
            let raw = |name| header(head, name).unwrap_or_default().to_owned();
            hook.last = Some((
                raw("webhook-id"),
                raw("webhook-timestamp"),
                raw("webhook-signature"),
                body.to_vec(),
            ));
            hook.events.push(event);
            ("200 OK", Vec::new())
        }
        Ok(check @ WebhookBody::Verification { .. }) => {
            hook.verifications += 1;
            ("200 OK", check.challenge_answer().unwrap_or_default())
        }
        Ok(_) => ("200 OK", Vec::new()),
        Err(_) => ("400 Bad Request", Vec::new()),
    }
}

/// Header `name` of a request head (case-insensitive).
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

fn scenario(webhook: WebhookSpec) -> Scenario {
    Scenario::new("inbox")
        .with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("mail").with_delivery(["poll", "push", "webhook"]))
                .with_heartbeat_ms(100)
                .with_webhook(webhook),
        )
        .with_tool(ToolSpec::new(
            "send",
            Behavior::EmitEvent {
                name: "mail".into(),
                data: json!({"folder": "inbox"}),
            },
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

/// Emits mail number `n`.
async fn send(client: &Client, n: u64) {
    client
        .call_tool("send", args(json!({ "n": n })), CallSettings::new(PATIENCE))
        .await
        .unwrap();
}

fn identities(events: &[EventOccurrence]) -> Vec<(String, Value)> {
    events
        .iter()
        .map(|e| (e.event_id.clone(), e.data.clone()))
        .collect()
}

/// Fast refresh retries, for the tests.
fn quick() -> WebhookLeaseSettings {
    WebhookLeaseSettings::new().with_backoff(Duration::from_millis(20), Duration::from_millis(200))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poll_push_and_webhook_yield_the_same_events_in_order_and_bad_deliveries_are_refused() {
    let home = TestHome::new().unwrap();
    let faults = WebhookSpec::new()
        .with_fault(WebhookFault::BadSignature { delivery: 2 })
        .with_fault(WebhookFault::Replayed { delivery: 3 })
        .with_fault(WebhookFault::StaleTimestamp { delivery: 4 });
    let server = stdio(&home, scenario(faults));
    let client = connect(server.target.clone()).await;
    let receiver = Receiver::start().await;
    let mail = EventSubscription::new("mail");

    let mut poller = EventPoller::new(mail.clone());
    poller.poll(&client).await.unwrap();
    let mut stream = client
        .stream_events(mail.clone(), None, StreamSettings::new())
        .await
        .unwrap();
    let secret = WebhookSecret::generate().unwrap();
    let url = receiver.hook("/inbox", &secret);
    let lease = client
        .lease_webhook(
            mail.clone(),
            WebhookTarget::new(&url, secret).with_ttl(Duration::from_secs(60)),
            None,
            quick(),
        )
        .await
        .unwrap();
    // The callback was verified before the subscription was granted.
    assert_eq!(receiver.verifications("/inbox"), 1);
    assert!(lease.id().starts_with("sub_"), "{lease:?}");

    for n in 1..=5 {
        send(&client, n).await;
    }
    let mut polled = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        while polled.len() < 5 {
            polled.extend(poller.poll(&client).await.unwrap().events);
        }
    })
    .await
    .expect("5 events polled");
    let mut pushed = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        while pushed.len() < 5 {
            if let Some(StreamItem::Event(event)) = stream.next().await {
                pushed.push(event);
            }
        }
    })
    .await
    .expect("5 events pushed");
    let delivered = receiver.wait_events("/inbox", 5).await;

    let expected: Vec<(String, Value)> = (1..=5)
        .map(|n| (format!("evt-{n}"), json!({"folder": "inbox", "n": n})))
        .collect();
    assert_eq!(identities(&polled), expected);
    assert_eq!(identities(&pushed), expected);
    assert_eq!(identities(&delivered), expected);
    // Each delivery carries its watermark cursor; the host records it for refreshes.
    assert_eq!(delivered[4].cursor.as_deref(), Some("pos-5"));
    lease.record_cursor("pos-5");
    assert_eq!(lease.cursor().as_deref(), Some("pos-5"));

    // The forgery, the replay and the stale copy were refused, one each, and none of
    // them reached the events.
    let refused = receiver.wait_refused("/inbox", 3).await;
    assert_eq!(
        refused,
        BTreeMap::from([("bad_signature", 1), ("replayed", 1), ("stale", 1)])
    );
    assert_eq!(receiver.events("/inbox").len(), 5);
    // Every delivery (the verification too) names the subscription.
    let ids = receiver.subscription_ids("/inbox");
    assert_eq!(ids.len(), 6, "{ids:?}");
    assert!(ids.iter().all(|id| *id == lease.id()), "{ids:?}");

    lease.close().await.unwrap();
    // Closed: the server no longer has the subscription.
    let gone = client.unsubscribe_webhook(&mail, &url).await.unwrap_err();
    assert!(
        matches!(gone, EventError::UnknownSubscription { .. }),
        "{gone:?}"
    );
    drop(stream);
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_not_refreshed_lapses_and_its_deliveries_stop_while_a_lease_keeps_its_own() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario(WebhookSpec::new().with_min_ttl_ms(200)));
    let client = connect(server.target.clone()).await;
    let receiver = Receiver::start().await;
    let mail = EventSubscription::new("mail");
    let ttl = Duration::from_millis(300);

    let kept_secret = WebhookSecret::generate().unwrap();
    let kept_url = receiver.hook("/kept", &kept_secret);
    let lease = client
        .lease_webhook(
            mail.clone(),
            WebhookTarget::new(&kept_url, kept_secret).with_ttl(ttl),
            None,
            quick(),
        )
        .await
        .unwrap();
    let once_secret = WebhookSecret::generate().unwrap();
    let once_url = receiver.hook("/once", &once_secret);
    let once = client
        .subscribe_webhook(
            &mail,
            &WebhookTarget::new(&once_url, once_secret).with_ttl(ttl),
            None,
        )
        .await
        .unwrap();
    assert!(once.refresh_before.is_some());

    send(&client, 1).await;
    receiver.wait_events("/kept", 1).await;
    receiver.wait_events("/once", 1).await;

    // Several TTLs pass: the lease refreshes, the bare subscription lapses.
    let mut status = lease.watch_status();
    tokio::time::timeout(PATIENCE, status.wait_for(|s| s.refreshes >= 3))
        .await
        .expect("refreshed")
        .unwrap();
    tokio::time::sleep(ttl * 2).await;
    for n in 2..=3 {
        send(&client, n).await;
    }
    let kept = receiver.wait_events("/kept", 3).await;
    assert_eq!(
        identities(&kept)
            .into_iter()
            .map(|(id, _)| id)
            .collect::<Vec<_>>(),
        ["evt-1", "evt-2", "evt-3"]
    );
    // The lapsed one got only the first: the server forgot it (unsubscribing finds none).
    assert_eq!(receiver.events("/once").len(), 1);
    let lapsed = client
        .unsubscribe_webhook(&mail, &once_url)
        .await
        .unwrap_err();
    assert!(
        matches!(lapsed, EventError::UnknownSubscription { .. }),
        "{lapsed:?}"
    );
    // Its refreshes came before it lapsed: each found it live.
    assert!(lease.status().grant.delivery_status.is_some());
    assert_eq!(lease.status().failures, 0);
    assert_eq!(lease.status().last_error, None);

    // Dropped without close: the lease still unsubscribes, best effort.
    drop(lease);
    server.wait_for("events/unsubscribe").await;
    tokio::time::timeout(PATIENCE, async {
        while server
            .requests("events/unsubscribe")
            .iter()
            .all(|r| r.params["delivery"]["url"] != json!(kept_url))
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the dropped lease unsubscribed");
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_loses_no_event_when_the_server_lets_the_subscription_lapse_early() {
    let home = TestHome::new().unwrap();
    // Every subscription is forgotten 100 ms after each (re)subscription, long before its
    // 10 s grant: each refresh (at half the time left) makes it again from the cursor.
    let webhook = WebhookSpec::new()
        .with_min_ttl_ms(200)
        .with_fault(WebhookFault::LapseEarly { after_ms: 100 });
    let server = stdio(&home, scenario(webhook));
    let client = connect(server.target.clone()).await;
    let receiver = Receiver::start().await;
    let mail = EventSubscription::new("mail");
    let secret = WebhookSecret::generate().unwrap();
    let url = receiver.hook("/early", &secret);
    let lease = client
        .lease_webhook(
            mail.clone(),
            WebhookTarget::new(&url, secret).with_ttl(Duration::from_millis(400)),
            None,
            quick(),
        )
        .await
        .unwrap();
    let mut status = lease.watch_status();
    let mut remade = 0;
    for n in 1..=6 {
        send(&client, n).await;
        // Sends spread over several lapses and refreshes.
        let seen = status.borrow_and_update().refreshes;
        let grant = tokio::time::timeout(PATIENCE, status.wait_for(|s| s.refreshes > seen))
            .await
            .expect("refreshed")
            .unwrap()
            .grant
            .clone();
        // A refresh of a live subscription reports its delivery status; one the server
        // had forgotten is made again, without.
        if grant.delivery_status.is_none() {
            remade += 1;
        }
        if let Some(last) = receiver.events("/early").last()
            && let Some(cursor) = &last.cursor
        {
            lease.record_cursor(cursor.clone());
        }
    }
    assert!(remade > 0, "the subscription never lapsed early");
    let delivered = receiver.wait_events("/early", 6).await;
    let ids: Vec<String> = delivered.iter().map(|e| e.event_id.clone()).collect();
    assert_eq!(ids, (1..=6).map(|n| format!("evt-{n}")).collect::<Vec<_>>());
    // A redelivery after a lapse is refused as a replay, never handled twice.
    assert!(
        receiver
            .refused("/early")
            .keys()
            .all(|reason| *reason == "replayed"),
        "{:?}",
        receiver.refused("/early")
    );
    let _ = lease.close().await;
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refreshes_that_fail_are_retried_with_backoff_and_reported() {
    let home = TestHome::new().unwrap();
    let scenario = scenario(WebhookSpec::new().with_min_ttl_ms(200))
        .with_tool(ToolSpec::new("exit", Behavior::Exit { code: 1 }));
    let server = stdio(&home, scenario);
    let client = connect(server.target.clone()).await;
    let receiver = Receiver::start().await;
    let mail = EventSubscription::new("mail");
    let secret = WebhookSecret::generate().unwrap();
    let url = receiver.hook("/gone", &secret);
    let lease = client
        .lease_webhook(
            mail.clone(),
            WebhookTarget::new(&url, secret).with_ttl(Duration::from_millis(300)),
            None,
            quick(),
        )
        .await
        .unwrap();
    // The server goes away: every refresh fails from then on, and is tried again.
    let _ = client
        .call_tool("exit", None, CallSettings::new(PATIENCE))
        .await;
    let mut status = lease.watch_status();
    let failing = tokio::time::timeout(PATIENCE, status.wait_for(|s| s.failures >= 3))
        .await
        .expect("failures reported")
        .unwrap()
        .clone();
    let error = failing.last_error.expect("the last error kept");
    assert!(
        error.to_string().contains("server `inbox`"),
        "the error names the server: {error}"
    );
    assert!(matches!(error, EventError::Request { .. }), "{error:?}");
    assert!(lease.close().await.is_err());
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_behind_forgotten_events_starts_with_a_gap_envelope() {
    let home = TestHome::new().unwrap();
    let scenario = scenario(WebhookSpec::new())
        .with_tool(ToolSpec::new("forget", Behavior::ForgetEvents { keep: 1 }));
    let server = stdio(&home, scenario);
    let client = connect(server.target.clone()).await;
    let receiver = Receiver::start().await;
    let mail = EventSubscription::new("mail");
    for n in 1..=3 {
        send(&client, n).await;
    }
    client
        .call_tool("forget", None, CallSettings::new(PATIENCE))
        .await
        .unwrap();
    let secret = WebhookSecret::generate().unwrap();
    let url = receiver.hook("/gap", &secret);
    // From the start: events 1 and 2 are forgotten, so the replay is cut.
    let lease = client
        .lease_webhook(
            mail,
            WebhookTarget::new(&url, secret),
            Some("pos-0".to_owned()),
            quick(),
        )
        .await
        .unwrap();
    assert!(lease.status().grant.truncated);
    let delivered = receiver.wait_events("/gap", 1).await;
    assert_eq!(delivered[0].event_id, "evt-3");
    assert_eq!(receiver.gaps("/gap"), [Some("pos-2".to_owned())]);
    lease.close().await.unwrap();
    client.shutdown().await;
    server.assert_gone().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_with_a_new_secret_is_signed_with_both_during_the_rotation() {
    let home = TestHome::new().unwrap();
    let server = stdio(&home, scenario(WebhookSpec::new()));
    let client = connect(server.target.clone()).await;
    let receiver = Receiver::start().await;
    let mail = EventSubscription::new("mail");
    let old = WebhookSecret::generate().unwrap();
    let new = WebhookSecret::generate().unwrap();
    // The receiver knows only the old secret.
    let url = receiver.hook("/rotate", &old);
    client
        .subscribe_webhook(&mail, &WebhookTarget::new(&url, old), None)
        .await
        .unwrap();
    send(&client, 1).await;
    receiver.wait_events("/rotate", 1).await;
    let rotated = client
        .subscribe_webhook(&mail, &WebhookTarget::new(&url, new.clone()), None)
        .await
        .unwrap();
    assert!(rotated.delivery_status.is_some(), "a refresh: {rotated:?}");
    send(&client, 2).await;
    // Still verified by the old secret alone, and by the new one alone.
    let events = receiver.wait_events("/rotate", 2).await;
    assert_eq!(events[1].event_id, "evt-2");
    let (id, timestamp, signature, body) = receiver.hooks.lock().unwrap()["/rotate"]
        .last
        .clone()
        .unwrap();
    assert_eq!(signature.split(' ').count(), 2, "{signature}");
    let headers = WebhookHeaders::from_lookup(|name| match name {
        "webhook-id" => Some(id.as_str()),
        "webhook-timestamp" => Some(timestamp.as_str()),
        "webhook-signature" => Some(signature.as_str()),
        _ => None,
    });
    WebhookVerifier::new(new)
        .verify(&headers, &body, SystemTime::now())
        .unwrap();
    assert!(receiver.refused("/rotate").is_empty());
    client.unsubscribe_webhook(&mail, &url).await.unwrap();
    client.shutdown().await;
    server.assert_gone().await;
}
