//! Event latency (SEP-3415): from the moment a tool call emits an event on the fake
//! server to the moment the host has it, through `mcp-client`'s three delivery modes at
//! once on one server (an `EventPoller` loop, a push `EventStream`, a `WebhookLease` whose
//! deliveries a loopback receiver verifies with `WebhookVerifier`), beside a bare rmcp
//! client's `events/poll` custom-request loop on a server of its own, polling at the same
//! interval. The clock starts just before the emitting call on each side, so both include
//! the same call's request.

#![expect(
    clippy::disallowed_methods,
    reason = "the baseline is a bare rmcp client spawning the server itself, as a host without this workspace would"
)]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use mcp_catalog::StdioConfig;
use mcp_client::{
    CallSettings, Client, ClientSettings, DeclineRequests, EventPoller, EventSubscription,
    StreamItem, StreamSettings, Target, WebhookBody, WebhookHeaders, WebhookLeaseSettings,
    WebhookSecret, WebhookTarget, WebhookVerifier,
};
use mcp_testkit::{Behavior, EventTypeSpec, EventsSpec, Scenario, ToolSpec};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest, CustomRequest,
    Implementation, ProtocolVersion,
};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::fixture::Fixture;
use crate::stats::{b_first, median};
use crate::table::{Row, Unit};
use crate::{Result, Settings, fail};

/// The poll interval of both poll loops (the scenario's `nextPollMs`, the poller's floor,
/// the bare loop's sleep).
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// How long one event may take to arrive before the row fails.
const ARRIVAL_BOUND: Duration = Duration::from_secs(10);

/// Arrivals: event id and when the host had it.
type Arrivals = mpsc::UnboundedSender<(String, Instant)>;

/// The receiving end of [`Arrivals`].
type ArrivalsRx = mpsc::UnboundedReceiver<(String, Instant)>;

/// The scenario: one event type offered in every mode, emitted by `send`.
fn scenario() -> Scenario {
    Scenario::new("bench")
        .with_events(
            EventsSpec::new()
                .with_type(EventTypeSpec::new("tick").with_delivery(["poll", "push", "webhook"]))
                .with_next_poll_ms(u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(20)),
        )
        .with_tool(ToolSpec::new(
            "send",
            Behavior::EmitEvent {
                name: "tick".into(),
                data: json!({}),
            },
        ))
}

/// Waits for event `id` on `rx` (arrivals of other ids are kept for later).
async fn arrival(
    rx: &mut ArrivalsRx,
    early: &mut HashMap<String, Instant>,
    id: &str,
) -> Result<Instant> {
    if let Some(at) = early.remove(id) {
        return Ok(at);
    }
    let waited = tokio::time::timeout(ARRIVAL_BOUND, async {
        while let Some((got, at)) = rx.recv().await {
            if got == id {
                return Some(at);
            }
            early.insert(got, at);
        }
        None
    })
    .await;
    match waited {
        Ok(Some(at)) => Ok(at),
        _ => Err(fail(format!("event latency: event {id} never arrived"))),
    }
}

/// The loopback webhook receiver: verifies each delivery, answers the verification
/// handshake, reports events.
async fn receiver(verifier: WebhookVerifier, arrivals: Arrivals) -> Result<(u16, Task)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    let verifier = Arc::new(verifier);
    let task = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(receive(socket, Arc::clone(&verifier), arrivals.clone()));
        }
    });
    Ok((port, Task(task)))
}

/// A spawned task aborted when dropped.
struct Task(tokio::task::JoinHandle<()>);

impl Task {
    /// Aborts the task and waits until it is gone (with what it held).
    async fn stop(mut self) {
        self.0.abort();
        let _ = (&mut self.0).await;
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn receive(
    mut socket: tokio::net::TcpStream,
    verifier: Arc<WebhookVerifier>,
    arrivals: Arrivals,
) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut wanted = None;
    loop {
        if let Some((end, length)) = wanted
            && buffer.len() >= end + length
        {
            break;
        }
        let Ok(read) = socket.read(&mut chunk).await else {
            return;
        };
        if read == 0 {
            return;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if wanted.is_none()
            && let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n")
        {
            let head = String::from_utf8_lossy(&buffer[..end]).to_string();
            let length = header(&head, "content-length")
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            wanted = Some((end + 4, length));
        }
    }
    let Some((end, length)) = wanted else {
        return;
    };
    let at = Instant::now();
    let head = String::from_utf8_lossy(&buffer[..end]).to_string();
    let body = &buffer[end..end + length];
    let headers = WebhookHeaders::from_lookup(|name| header(&head, name));
    let (status, answer) = match verifier.verify(&headers, body, SystemTime::now()) {
        Err(_) => ("401 Unauthorized", Vec::new()),
        Ok(()) => match WebhookBody::parse(body) {
            Ok(WebhookBody::Event(event)) => {
                let _ = arrivals.send((event.event_id, at));
                ("200 OK", Vec::new())
            }
            Ok(check) => ("200 OK", check.challenge_answer().unwrap_or_default()),
            Err(_) => ("400 Bad Request", Vec::new()),
        },
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        answer.len()
    );
    let _ = socket.write_all(reply.as_bytes()).await;
    let _ = socket.write_all(&answer).await;
    let _ = socket.shutdown().await;
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

/// The bare baseline's `events/poll` loop: polls every [`POLL_INTERVAL`] (at once again
/// when events came), reporting each event.
async fn bare_poll_loop(peer: rmcp::Peer<rmcp::RoleClient>, arrivals: Arrivals) {
    let mut cursor = Value::Null;
    loop {
        let request = ClientRequest::CustomRequest(CustomRequest::new(
            "events/poll",
            Some(json!({"name": "tick", "arguments": {}, "cursor": cursor})),
        ));
        let Ok(answer) = peer.send_request(request).await else {
            return;
        };
        let Ok(answer) = serde_json::to_value(answer) else {
            return;
        };
        let at = Instant::now();
        let events = answer["events"].as_array().cloned().unwrap_or_default();
        for event in &events {
            if let Some(id) = event["eventId"].as_str() {
                let _ = arrivals.send((id.to_owned(), at));
            }
        }
        cursor = answer["cursor"].clone();
        if events.is_empty() {
            tokio::time::sleep(POLL_INTERVAL).await;
        }
    }
}

/// `mcp-client`'s poll loop: an `EventPoller` paced by its own `next_delay`.
async fn client_poll_loop(client: Arc<Client>, arrivals: Arrivals) {
    let mut poller =
        EventPoller::new(EventSubscription::new("tick")).with_min_interval(POLL_INTERVAL);
    loop {
        let Ok(batch) = poller.poll(&client).await else {
            return;
        };
        let at = Instant::now();
        for event in &batch.events {
            let _ = arrivals.send((event.event_id.clone(), at));
        }
        tokio::time::sleep(poller.next_delay(&batch)).await;
    }
}

/// The event id a `send` call emitted (its result is the occurrence).
fn emitted_id(result: &rmcp::model::CallToolResult) -> Result<String> {
    result
        .structured_content
        .as_ref()
        .and_then(|s| s["eventId"].as_str())
        .map(str::to_owned)
        .ok_or_else(|| fail("event latency: `send` did not return the event"))
}

/// Latency samples of each side, in seconds.
#[derive(Default)]
struct Samples {
    poll: Vec<f64>,
    push: Vec<f64>,
    webhook: Vec<f64>,
    bare: Vec<f64>,
}

pub(crate) async fn event_latency(fx: &Fixture, s: &Settings) -> Result<Vec<Row>> {
    let path = fx.join("bench.json.events.json");
    scenario().write_json(&path)?;
    let (bin, _) = fx.server_command();
    let args = vec!["--scenario".to_owned(), path.to_string_lossy().into_owned()];

    let config = StdioConfig::new(bin.to_string_lossy()).with_args(args.clone());
    let client = Client::connect(
        "bench-events".parse()?,
        Target::stdio(config),
        ClientSettings::new().with_process_grace(Duration::from_millis(100)),
        Arc::new(DeclineRequests),
    )
    .await?;
    let client = Arc::new(client);
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(&args);
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let bare_info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-bench-bare", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25);
    let bare = match bare_info.serve(transport).await {
        Ok(bare) => bare,
        Err(e) => {
            shut(client).await;
            return Err(e.into());
        }
    };
    let measured = measure(&client, bare.peer(), s).await;
    let _ = bare.cancel().await;
    shut(client).await;
    let samples = measured?;
    let rows = vec![
        Row::versus(
            "event latency: poll (EventPoller)",
            Unit::Seconds,
            median(&samples.poll),
            median(&samples.bare),
            "bare rmcp events/poll loop, same interval",
            "≤ 1.2× bare",
            |_, r| r <= 1.2,
        )
        .with_note(format!(
            "emission to host, median of {}; both poll every {} ms",
            samples.poll.len(),
            POLL_INTERVAL.as_millis()
        )),
        Row::reported(
            "event latency: push (EventStream)",
            Unit::Seconds,
            median(&samples.push),
            median(&samples.bare),
            "bare rmcp events/poll loop, same interval",
        ),
        Row::reported(
            "event latency: webhook (WebhookLease, verified loopback receiver)",
            Unit::Seconds,
            median(&samples.webhook),
            median(&samples.bare),
            "bare rmcp events/poll loop, same interval",
        ),
    ];
    Ok(rows)
}

/// Emits events (with `emit`) until each of `consumers` has received one, then forgets what
/// they received: a poll loop's first poll and a push stream start from the newest event,
/// so an event emitted before they are in place would never reach them.
async fn warm_up<F, Fut>(emit: F, consumers: &mut [(&str, &mut ArrivalsRx)]) -> Result<()>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let mut received = vec![false; consumers.len()];
    let deadline = Instant::now() + ARRIVAL_BOUND;
    while received.iter().any(|got| !got) {
        if Instant::now() > deadline {
            let missing: Vec<&str> = consumers
                .iter()
                .zip(&received)
                .filter(|(_, got)| !**got)
                .map(|((name, _), _)| *name)
                .collect();
            return Err(fail(format!(
                "event latency: no event reached {} while warming up",
                missing.join(", ")
            )));
        }
        emit().await?;
        tokio::time::sleep(POLL_INTERVAL * 3).await;
        for ((_, rx), got) in consumers.iter_mut().zip(received.iter_mut()) {
            while rx.try_recv().is_ok() {
                *got = true;
            }
        }
    }
    Ok(())
}

/// Shuts the client down once nothing else holds it.
async fn shut(client: Arc<Client>) {
    match Arc::try_unwrap(client) {
        Ok(client) => client.shutdown().await,
        Err(client) => drop(client),
    }
}

/// Warms up the set's three consumers and the bare poll loop: every one has
/// received an event before the first measured one is emitted.
async fn warm_up_all(
    client: &Arc<Client>,
    bare: &rmcp::Peer<rmcp::RoleClient>,
    poll_rx: &mut ArrivalsRx,
    push_rx: &mut ArrivalsRx,
    hook_rx: &mut ArrivalsRx,
    bare_rx: &mut ArrivalsRx,
) -> Result<()> {
    warm_up(
        || async {
            client
                .call_tool("send", None, CallSettings::new(ARRIVAL_BOUND))
                .await
                .map(drop)
                .map_err(crate::Error::from)
        },
        &mut [("poll", poll_rx), ("push", push_rx), ("webhook", hook_rx)],
    )
    .await?;
    warm_up(
        || async {
            bare.call_tool(CallToolRequestParams::new("send"))
                .await
                .map(drop)
                .map_err(crate::Error::from)
        },
        &mut [("bare poll", bare_rx)],
    )
    .await
}

async fn measure(
    client: &Arc<Client>,
    bare: &rmcp::Peer<rmcp::RoleClient>,
    s: &Settings,
) -> Result<Samples> {
    let (poll_tx, mut poll_rx) = mpsc::unbounded_channel();
    let (push_tx, mut push_rx) = mpsc::unbounded_channel();
    let (hook_tx, mut hook_rx) = mpsc::unbounded_channel();
    let (bare_tx, mut bare_rx) = mpsc::unbounded_channel();
    let tick = EventSubscription::new("tick");

    let secret = WebhookSecret::generate()?;
    let (port, _receiver) = receiver(WebhookVerifier::new(secret.clone()), hook_tx).await?;
    let url = format!("http://127.0.0.1:{port}/events");
    let lease = client
        .lease_webhook(
            tick.clone(),
            WebhookTarget::new(url, secret).with_ttl(Duration::from_secs(60)),
            None,
            WebhookLeaseSettings::new(),
        )
        .await?;
    let mut stream = client
        .stream_events(tick.clone(), None, StreamSettings::new())
        .await?;
    let _push = Task(tokio::spawn(async move {
        while let Some(item) = stream.next().await {
            if let StreamItem::Event(event) = item {
                let _ = push_tx.send((event.event_id, Instant::now()));
            }
        }
    }));
    let poll_task = Task(tokio::spawn(client_poll_loop(Arc::clone(client), poll_tx)));
    let _bare_poll = Task(tokio::spawn(bare_poll_loop(bare.clone(), bare_tx)));

    // Every consumer starts "from now": none may miss the first measured event.
    warm_up_all(
        client,
        bare,
        &mut poll_rx,
        &mut push_rx,
        &mut hook_rx,
        &mut bare_rx,
    )
    .await?;
    let rounds = (s.rounds_calls * 2).max(8);
    let mut samples = Samples::default();
    let (mut early_poll, mut early_push, mut early_hook, mut early_bare) = (
        HashMap::new(),
        HashMap::new(),
        HashMap::new(),
        HashMap::new(),
    );
    let stagger = u64::try_from(POLL_INTERVAL.as_millis()).unwrap_or(20);
    for round in 0..rounds {
        // Spread the emissions over the poll loops' phase.
        let offset = (u64::try_from(round).unwrap_or(0) * 7) % stagger;
        tokio::time::sleep(Duration::from_millis(offset)).await;
        let set_side = async {
            let t = Instant::now();
            let result = client
                .call_tool("send", None, CallSettings::new(ARRIVAL_BOUND))
                .await?;
            let id = emitted_id(&result)?;
            let poll = arrival(&mut poll_rx, &mut early_poll, &id).await?;
            let push = arrival(&mut push_rx, &mut early_push, &id).await?;
            let hook = arrival(&mut hook_rx, &mut early_hook, &id).await?;
            Ok::<_, crate::Error>((
                poll.duration_since(t).as_secs_f64(),
                push.duration_since(t).as_secs_f64(),
                hook.duration_since(t).as_secs_f64(),
            ))
        };
        let bare_side = async {
            let t = Instant::now();
            let result = bare.call_tool(CallToolRequestParams::new("send")).await?;
            let id = emitted_id(&result)?;
            let at = arrival(&mut bare_rx, &mut early_bare, &id).await?;
            Ok::<_, crate::Error>(at.duration_since(t).as_secs_f64())
        };
        // Alternate which side goes first so drift in the machine's load hits both alike.
        let ((poll, push, hook), base) = if b_first(round) {
            let base = bare_side.await?;
            (set_side.await?, base)
        } else {
            let set = set_side.await?;
            (set, bare_side.await?)
        };
        samples.poll.push(poll);
        samples.push.push(push);
        samples.webhook.push(hook);
        samples.bare.push(base);
    }
    // The poll loop's clone of the client goes before the client is shut down.
    poll_task.stop().await;
    lease.close().await?;
    Ok(samples)
}
