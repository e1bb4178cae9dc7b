//! The Events extension (SEP-3415) through the gateway: a client of `mcpctl serve` lists
//! the event types of every server it may use (`events/list`, named like the tools:
//! `mcp__<server>__<type>`) and polls them (`events/poll`) with the gateway's own opaque
//! cursor, or has them pushed (`events/stream`, [`super::event_stream`]) from that same
//! cursor, whatever mode the upstream server delivers in.
//!
//! Each caller's subscription (caller, event type, arguments) has one upstream
//! subscription and a bounded buffer ([`BUFFER`] events; older ones are dropped and a poll
//! from before them says `truncated`). Upstream, the gateway uses push or poll when the
//! server offers them (`ConnectionSet::subscribe_events`), and webhook when that is all
//! the server offers and `[gateway] public_url` is set: it subscribes with a callback URL
//! under that URL and a secret of that subscription, kept by a [`mcp_client::WebhookLease`]
//! (refreshed at half the time left, with the cursor of the latest delivery), and its
//! receiver ([`super::webhook`]) checks each delivery (signature, timestamp, id) before it
//! reaches that one subscription's buffer, so an event goes only to the caller whose
//! subscription asked for it. A subscription no stream uses and not polled for [`IDLE`]
//! is ended, upstream too; the gateway's stop ends every webhook subscription upstream
//! (`events/unsubscribe`, [`EventRelay::close`]).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use mcp_client::{
    DeliveryMode, EventError, EventOccurrence, StreamItem, WebhookLease, WebhookLeaseSettings,
    WebhookSecret, WebhookTarget, WebhookVerifier,
};
use mcp_connections::{ConnectionSet, EventFeedError, EventFeedOptions};
use mcp_key::McpServerKey;
use rmcp::ErrorData as McpError;
use rmcp::model::JsonObject;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Hub;
use crate::serve::caller::Caller;

/// Events one caller's subscription keeps for its polls; older ones are dropped (a poll
/// from before them says `truncated`).
pub(crate) const BUFFER: usize = 256;

/// Events one `events/poll` returns at most (unless it asks for fewer).
const MAX_BATCH: usize = 100;

/// The `nextPollMs` the gateway advises.
const NEXT_POLL_MS: u64 = 500;

/// Subscriptions the gateway keeps at once, over every caller.
const MAX_SUBSCRIPTIONS: usize = 1024;

/// A subscription its caller has not polled for this long is ended, upstream too (its
/// next poll starts it again, from now).
pub(crate) const IDLE: Duration = Duration::from_secs(10 * 60);

/// The path under `public_url` (and on the `--http` listener) where deliveries arrive,
/// followed by `/<token of the subscription>`.
pub(crate) const WEBHOOK_PATH: &str = "/events/webhook";

/// The first pause before a failed refresh of a webhook subscription is tried again
/// (doubled after each failure).
const REFRESH_BACKOFF: Duration = Duration::from_secs(1);

/// The longest pause between the attempts of a failing refresh.
const REFRESH_RETRY: Duration = Duration::from_secs(30);

/// How long the gateway's stop waits for its webhook subscriptions to end upstream.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What the webhook receiver refused and accepted, for the operator.
#[derive(Debug, Default)]
pub(crate) struct WebhookCounts {
    /// Deliveries accepted (events and callback verifications).
    pub(crate) accepted: AtomicU64,
    /// Refused: no valid signature of the subscription's secret (or a header missing).
    pub(crate) forged: AtomicU64,
    /// Refused: a delivery id accepted before.
    pub(crate) replayed: AtomicU64,
    /// Refused: a timestamp outside the window.
    pub(crate) stale: AtomicU64,
    /// Refused: no subscription has that callback URL.
    pub(crate) unknown: AtomicU64,
}

impl WebhookCounts {
    /// The counts as JSON.
    pub(crate) fn json(&self) -> Value {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "accepted": n(&self.accepted),
            "forged": n(&self.forged),
            "replayed": n(&self.replayed),
            "stale": n(&self.stale),
            "unknown": n(&self.unknown),
        })
    }
}

/// The events of every caller's subscriptions, shared by the hub's gateways.
#[derive(Default)]
pub(crate) struct EventRelay {
    /// The relay's own connection set on the hub's pool (a 2026-era request's gateway
    /// lives for one request; subscriptions outlive it).
    set: OnceLock<ConnectionSet>,
    subscriptions: Mutex<HashMap<SubscriptionKey, Arc<Relayed>>>,
    /// Webhook subscriptions by the token of their callback URL.
    hooks: Mutex<HashMap<String, Arc<Hook>>>,
    /// What the receiver accepted and refused.
    pub(crate) counts: WebhookCounts,
    /// Whether the receiver's route is served (`--http`): without it, no webhook
    /// subscription is made.
    pub(crate) receiving: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for EventRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventRelay").finish_non_exhaustive()
    }
}

/// Who subscribed to what: the caller, the qualified event type, the arguments (as
/// canonical JSON).
type SubscriptionKey = (String, String, String);

/// One caller's subscription: its buffer and the upstream subscription feeding it.
pub(crate) struct Relayed {
    buffer: Mutex<Buffer>,
    /// Ends the upstream subscription (its task).
    cancel: CancellationToken,
    /// When its caller last polled it (or a stream of it ended).
    polled: Mutex<Instant>,
    /// Told each time the buffer changes (an event, a truncation, the end), for the
    /// streams of this subscription.
    heads: watch::Sender<()>,
    /// `events/stream` requests open on it: while one is, it is not idle.
    streams: AtomicUsize,
}

impl Drop for Relayed {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

#[derive(Default)]
struct Buffer {
    /// Events with their sequence numbers, oldest first.
    events: VecDeque<(u64, EventOccurrence)>,
    /// The sequence number of the next event.
    next: u64,
    /// Event ids kept, to hand each event once (an upstream retry is not a new event).
    ids: VecDeque<String>,
    /// The upstream skipped events after this sequence number (reported once to a poll
    /// from before it).
    truncated_at: Option<u64>,
    /// Why the upstream subscription ended, if it did.
    ended: Option<String>,
}

impl Buffer {
    fn push(&mut self, event: EventOccurrence) {
        if self.ids.contains(&event.event_id) {
            return;
        }
        if self.ids.len() == BUFFER {
            self.ids.pop_front();
        }
        self.ids.push_back(event.event_id.clone());
        if self.events.len() == BUFFER {
            self.events.pop_front();
        }
        self.events.push_back((self.next, event));
        self.next += 1;
    }
}

/// What a subscription's buffer holds from a cursor on (see [`Relayed::read`]).
pub(super) struct Read {
    /// The events from `start` on, with their sequence numbers, oldest first.
    pub(super) events: Vec<(u64, EventOccurrence)>,
    /// Where the events start: the cursor asked for, or the oldest event kept when the
    /// cursor is older.
    pub(super) start: u64,
    /// Whether events between the cursor asked for and `start` were dropped, here or
    /// upstream.
    pub(super) truncated: bool,
    /// The sequence number after the last upstream truncation, if any.
    pub(super) truncated_at: Option<u64>,
    /// Why the upstream subscription ended, if it did.
    pub(super) ended: Option<String>,
}

/// An `events/stream` open on a subscription: counted while it lives (the subscription is
/// not idle meanwhile), and its end counts as a poll.
pub(super) struct StreamOpen(Arc<Relayed>);

impl Drop for StreamOpen {
    fn drop(&mut self) {
        self.0.touch(Instant::now());
        self.0.streams.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Relayed {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            buffer: Mutex::default(),
            cancel: CancellationToken::new(),
            polled: Mutex::new(Instant::now()),
            heads: watch::Sender::new(()),
            streams: AtomicUsize::new(0),
        })
    }

    /// Tells the streams of this subscription that its buffer changed.
    fn changed(&self) {
        self.heads.send_modify(|()| {});
    }

    /// A receiver told of every change to the buffer after this call.
    pub(super) fn heads(&self) -> watch::Receiver<()> {
        self.heads.subscribe()
    }

    /// Counts a stream open on this subscription until the guard drops.
    pub(super) fn stream_opened(self: &Arc<Self>) -> StreamOpen {
        self.streams.fetch_add(1, Ordering::SeqCst);
        StreamOpen(Arc::clone(self))
    }

    /// What the buffer holds from sequence number `from` on (`None`: from now), at most
    /// `max` events.
    pub(super) fn read(&self, from: Option<u64>, max: usize) -> Read {
        let buffer = self.lock();
        let from = from.unwrap_or(buffer.next);
        let oldest = buffer.events.front().map_or(buffer.next, |(seq, _)| *seq);
        let truncated = from < oldest || buffer.truncated_at.is_some_and(|at| from <= at);
        let start = from.max(oldest).min(buffer.next);
        let events = buffer
            .events
            .iter()
            .filter(|(seq, _)| *seq >= start)
            .take(max)
            .cloned()
            .collect();
        Read {
            events,
            start,
            truncated,
            truncated_at: buffer.truncated_at,
            ended: buffer.ended.clone(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a poll at `now`.
    fn touch(&self, now: Instant) {
        *self.polled.lock().unwrap_or_else(PoisonError::into_inner) = now;
    }

    /// Whether no stream uses it and its caller has not polled it within [`IDLE`] before
    /// `now`.
    fn idle_at(&self, now: Instant) -> bool {
        if self.streams.load(Ordering::SeqCst) > 0 {
            return false;
        }
        let polled = *self.polled.lock().unwrap_or_else(PoisonError::into_inner);
        now.saturating_duration_since(polled) > IDLE
    }

    /// Takes an event delivered upstream.
    pub(crate) fn deliver(&self, event: EventOccurrence) {
        self.lock().push(event);
        self.changed();
    }

    /// The upstream skipped events (a webhook `gap`): a read from before this point says
    /// `truncated`, as for a push or poll upstream.
    pub(crate) fn skipped(&self) {
        let mut buffer = self.lock();
        buffer.truncated_at = Some(buffer.next);
        drop(buffer);
        self.changed();
    }

    /// The upstream ended the subscription (a webhook `terminated`): streams end with
    /// `why` after what is buffered.
    pub(crate) fn terminated(&self, why: String) {
        self.lock().ended = Some(why);
        self.changed();
    }
}

/// A webhook subscription's receiving end: its verifier, the event type it delivers and
/// the subscription it feeds.
pub(crate) struct Hook {
    pub(crate) verifier: WebhookVerifier,
    pub(crate) event_type: String,
    pub(crate) relayed: std::sync::Weak<Relayed>,
    /// The upstream subscription, once the server granted it; taken by its end.
    lease: Mutex<Option<WebhookLease>>,
}

impl Hook {
    fn lock_lease(&self) -> std::sync::MutexGuard<'_, Option<WebhookLease>> {
        self.lease.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the cursor of an accepted delivery: the lease's next refresh resumes from
    /// there.
    pub(crate) fn record_cursor(&self, cursor: Option<&str>) {
        if let (Some(cursor), Some(lease)) = (cursor, self.lock_lease().as_ref()) {
            lease.record_cursor(cursor);
        }
    }

    /// Ends the upstream subscription (`events/unsubscribe`), once: a server that no
    /// longer has it (it lapsed) is no failure.
    async fn close(&self) {
        let Some(lease) = self.lock_lease().take() else {
            return;
        };
        match lease.close().await {
            Ok(()) | Err(EventError::UnknownSubscription { .. }) => {}
            Err(e) => tracing::warn!(
                event_type = %self.event_type,
                "ending a webhook subscription upstream failed (it lapses at its TTL): {}",
                mcp_key::error_chain(&e)
            ),
        }
    }
}

/// The gateway's cursor of sequence number `seq`.
pub(super) fn cursor_of(seq: u64) -> String {
    format!("g{seq}")
}

/// The sequence number of one of the gateway's cursors.
pub(super) fn seq_of(cursor: &str) -> Option<u64> {
    cursor.strip_prefix('g')?.parse().ok()
}

/// A JSON-RPC error of the extension: invalid params naming what is wrong.
pub(super) fn invalid(message: String) -> McpError {
    McpError::invalid_params(message, None)
}

/// The arguments of a request's params.
pub(super) fn arguments_of(params: &Value) -> Result<JsonObject, McpError> {
    match params.get("arguments") {
        None | Some(Value::Null) => Ok(JsonObject::new()),
        Some(Value::Object(o)) => Ok(o.clone()),
        Some(_) => Err(invalid("`arguments` must be an object".to_owned())),
    }
}

/// JSON with object keys sorted, to compare arguments whatever their order.
fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&o[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// The error a caller gets for an upstream failure, naming the server and event type.
fn upstream_error(e: &EventFeedError) -> McpError {
    match e {
        EventFeedError::Event(EventError::UnknownEventType { .. }) => {
            invalid(mcp_key::error_chain(e))
        }
        _ => McpError::internal_error(mcp_key::error_chain(e), None),
    }
}

impl EventRelay {
    /// The relay's connection set, started at first use.
    fn set(&self, hub: &Hub) -> &ConnectionSet {
        self.set.get_or_init(|| {
            // Announcing what the clients' sets announce (elicitation, sampling), it
            // shares their connections: a subscription is made on the same server process
            // as the calls that cause its events. Nobody is there to answer: declined.
            let decline = mcp_connections::elicitation_fn(|_| async {
                mcp_connections::model::ElicitResult::new(
                    mcp_connections::model::ElicitationAction::Decline,
                )
            });
            let refuse = mcp_connections::sampling_fn(|_| async {
                Err(mcp_connections::SamplingRefusal::new(
                    "mcpctl serve relays events here; no client answers",
                ))
            });
            // Servers reached as each caller are never reached as the gateway here.
            let options = crate::serve::identity::for_no_caller(hub, hub.options.clone())
                .with_shared_pool(hub.pool.clone())
                .with_elicitation_handler(decline)
                .with_sampling_handler(refuse);
            ConnectionSet::start(&hub.catalog, options)
        })
    }

    /// `events/list`: the event types of every server `caller` may use that offers
    /// events, under qualified names, each offered by poll and push; a type delivered only by
    /// webhook only while the receiver is served (`--http`).
    pub(crate) async fn list(&self, hub: &Hub, caller: &Caller) -> Result<Value, McpError> {
        let types = self.types(hub, caller).await;
        let receiving = self.receiving.load(Ordering::SeqCst);
        let relayable = |t: &mcp_client::EventType| {
            receiving
                || t.delivery.contains(&DeliveryMode::Push)
                || t.delivery.contains(&DeliveryMode::Poll)
        };
        let events: Vec<Value> = types
            .into_iter()
            .filter(|(_, _, t)| relayable(t))
            .map(|(qualified, _, t)| {
                let mut entry = json!({
                    "name": qualified,
                    "delivery": ["poll", "push"],
                    "inputSchema": t.input_schema,
                    "payloadSchema": t.payload_schema,
                });
                if let Some(d) = t.description {
                    entry["description"] = Value::String(d);
                }
                entry
            })
            .collect();
        Ok(json!({ "events": events }))
    }

    /// Every event type of the servers `caller` may use: (qualified name, server, type).
    async fn types(
        &self,
        hub: &Hub,
        caller: &Caller,
    ) -> Vec<(String, McpServerKey, mcp_client::EventType)> {
        let set = self.set(hub);
        let _ = tokio::time::timeout(Duration::from_secs(5), set.wait_startup()).await;
        let servers: Vec<McpServerKey> = set
            .servers()
            .filter(|s| caller.may_use_server(s))
            .cloned()
            .collect();
        let mut found = Vec::new();
        for server in servers {
            match set.event_types(&server).await {
                Ok(types) => found.extend(types.into_iter().map(|t| (server.clone(), t))),
                Err(EventFeedError::Event(EventError::Unsupported { .. })) => {}
                Err(e) => tracing::warn!(%server, "events/list: {}", mcp_key::error_chain(&e)),
            }
        }
        let table = set
            .namer()
            .qualify(found.iter().map(|(s, t)| (s, t.name.as_str())));
        found
            .into_iter()
            .filter_map(|(server, t)| {
                let qualified = table.qualified_name(&server, &t.name)?.to_owned();
                Some((qualified, server, t))
            })
            .collect()
    }

    /// `events/poll` of `caller`: the events of its subscription after the cursor given
    /// (none and the cursor to poll with next when it gave none: from now).
    pub(crate) async fn poll(
        self: &Arc<Self>,
        hub: &Hub,
        caller: &Caller,
        params: &Value,
    ) -> Result<Value, McpError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("events/poll needs the event type's `name`".to_owned()))?;
        let arguments = arguments_of(params)?;
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(c)) => Some(c.as_str()),
            Some(_) => return Err(invalid("`cursor` must be a string or null".to_owned())),
        };
        let max = params
            .get("maxEvents")
            .and_then(Value::as_u64)
            .map_or(MAX_BATCH, |m| usize::try_from(m).unwrap_or(MAX_BATCH))
            .clamp(1, MAX_BATCH);
        let from = cursor.map(|cursor| {
            seq_of(cursor).ok_or_else(|| {
                invalid(format!(
                    "`{cursor}` is not a cursor of this gateway; poll without one to start from now"
                ))
            })
        });
        let from = from.transpose()?;
        let relayed = self.subscription(hub, caller, name, arguments).await?;
        let Some(from) = from else {
            return Ok(json!({
                "events": [],
                "cursor": cursor_of(relayed.read(None, 0).start),
                "truncated": false,
                "hasMore": false,
                "nextPollMs": NEXT_POLL_MS,
            }));
        };
        let read = relayed.read(Some(from), max + 1);
        let has_more = read.events.len() > max;
        let events: Vec<&EventOccurrence> = read.events.iter().take(max).map(|(_, e)| e).collect();
        let after = read.start + events.len() as u64;
        let mut answer = json!({
            "events": events,
            "cursor": cursor_of(after),
            "truncated": read.truncated,
            "hasMore": has_more,
            "nextPollMs": NEXT_POLL_MS,
        });
        if let Some(why) = &read.ended {
            answer["_meta"] = json!({ "io.modelcontextprotocol/events": { "ended": why } });
        }
        Ok(answer)
    }

    /// The subscription of `caller` to `name` with `arguments`, made (with its upstream
    /// subscription) at first use.
    pub(super) async fn subscription(
        self: &Arc<Self>,
        hub: &Hub,
        caller: &Caller,
        name: &str,
        arguments: JsonObject,
    ) -> Result<Arc<Relayed>, McpError> {
        let key = (
            caller.id().to_owned(),
            name.to_owned(),
            canonical(&Value::Object(arguments.clone())),
        );
        let now = Instant::now();
        {
            let mut subscriptions = self.lock_subscriptions();
            // Dropped, a subscription ends upstream (see `Relayed`'s drop).
            subscriptions.retain(|_, r| !r.idle_at(now));
            if let Some(found) = subscriptions.get(&key) {
                found.touch(now);
                return Ok(Arc::clone(found));
            }
        }
        let types = self.types(hub, caller).await;
        let Some((_, server, described)) = types.into_iter().find(|(q, _, _)| q == name) else {
            return Err(invalid(format!(
                "no configured MCP server you may use has the event type `{name}`; list them with events/list"
            )));
        };
        if self.lock_subscriptions().len() >= MAX_SUBSCRIPTIONS {
            return Err(McpError::internal_error(
                format!(
                    "mcpctl serve already relays {MAX_SUBSCRIPTIONS} event subscriptions; try again later"
                ),
                None,
            ));
        }
        let relayed = Relayed::new();
        let offers = |m| described.delivery.contains(&m);
        if offers(DeliveryMode::Push) || offers(DeliveryMode::Poll) {
            self.feed(hub, &server, &described.name, arguments, &relayed)
                .await?;
        } else if offers(DeliveryMode::Webhook) {
            self.webhook(hub, &server, &described.name, arguments, &relayed)
                .await?;
        } else {
            return Err(invalid(format!(
                "server `{server}` offers event type `{}` in no delivery mode the gateway knows",
                described.name
            )));
        }
        let mut subscriptions = self.lock_subscriptions();
        // Two first polls at once: the first kept wins, the other's upstream ends.
        Ok(Arc::clone(subscriptions.entry(key).or_insert(relayed)))
    }

    fn lock_subscriptions(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<SubscriptionKey, Arc<Relayed>>> {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Feeds `relayed` from the server's own push or poll.
    async fn feed(
        &self,
        hub: &Hub,
        server: &McpServerKey,
        event_type: &str,
        arguments: JsonObject,
        relayed: &Arc<Relayed>,
    ) -> Result<(), McpError> {
        let mut feed = self
            .set(hub)
            .subscribe_events(server, event_type, arguments, EventFeedOptions::new())
            .await
            .map_err(|e| upstream_error(&e))?;
        let weak = Arc::downgrade(relayed);
        let cancel = relayed.cancel.clone();
        tokio::spawn(async move {
            loop {
                let item = tokio::select! {
                    () = cancel.cancelled() => break,
                    item = feed.next() => item,
                };
                let Some(relayed) = weak.upgrade() else { break };
                let over = {
                    let mut buffer = relayed.lock();
                    match item {
                        Some(StreamItem::Event(event)) => {
                            buffer.push(event);
                            false
                        }
                        Some(StreamItem::Truncated { .. }) => {
                            buffer.truncated_at = Some(buffer.next);
                            false
                        }
                        Some(StreamItem::Ended(e)) => {
                            buffer.ended = Some(mcp_key::error_chain(&e));
                            true
                        }
                        Some(_) => false,
                        None => {
                            buffer.ended = Some("the upstream subscription ended".to_owned());
                            true
                        }
                    }
                };
                relayed.changed();
                if over {
                    break;
                }
            }
            feed.shutdown().await;
        });
        Ok(())
    }

    /// Subscribes by webhook to a callback URL under `[gateway] public_url`, with a
    /// secret of its own, leased ([`mcp_client::WebhookLease`]: refreshed at half the time
    /// left with the latest cursor a delivery brought, failures retried with backoff). The
    /// subscription's end (idle, the gateway's stop: [`Self::close`]) ends the lease, which
    /// unsubscribes upstream.
    async fn webhook(
        self: &Arc<Self>,
        hub: &Hub,
        server: &McpServerKey,
        event_type: &str,
        arguments: JsonObject,
        relayed: &Arc<Relayed>,
    ) -> Result<(), McpError> {
        let url_of = |token: &str| self.callback_url(hub, server, event_type, token);
        let fail = |what: String| McpError::internal_error(what, None);
        let token = crate::serve::random_hex(16)
            .map_err(|e| fail(format!("no random token for a webhook: {e}")))?;
        let url = url_of(&token)?;
        let secret =
            WebhookSecret::generate().map_err(|e| fail(format!("no secret for a webhook: {e}")))?;
        // Known before subscribing: the server may verify the callback meanwhile.
        let hook = Arc::new(Hook {
            verifier: WebhookVerifier::new(secret.clone()),
            event_type: event_type.to_owned(),
            relayed: Arc::downgrade(relayed),
            lease: Mutex::new(None),
        });
        self.lock_hooks().insert(token.clone(), Arc::clone(&hook));
        let leased = self
            .set(hub)
            .lease_webhook(
                server,
                event_type,
                arguments,
                WebhookTarget::new(url, secret),
                None,
                WebhookLeaseSettings::new().with_backoff(REFRESH_BACKOFF, REFRESH_RETRY),
            )
            .await;
        let lease = match leased {
            Ok(lease) => lease,
            Err(e) => {
                self.lock_hooks().remove(&token);
                return Err(upstream_error(&e));
            }
        };
        *hook.lock_lease() = Some(lease);
        let relay = Arc::downgrade(self);
        let cancel = relayed.cancel.clone();
        tokio::spawn(async move {
            cancel.cancelled().await;
            if let Some(relay) = relay.upgrade() {
                relay.lock_hooks().remove(&token);
            }
            hook.close().await;
        });
        Ok(())
    }

    /// The callback URL of the webhook subscription with `token`, under `[gateway]
    /// public_url`; refused naming what to set when the gateway cannot receive webhooks.
    fn callback_url(
        &self,
        hub: &Hub,
        server: &McpServerKey,
        event_type: &str,
        token: &str,
    ) -> Result<String, McpError> {
        if !self.receiving.load(Ordering::SeqCst) {
            return Err(invalid(format!(
                "server `{server}` delivers event type `{event_type}` only by webhook, which mcpctl serve receives only over HTTP; run `mcpctl serve --http ADDR` with `public_url` in the [gateway] table"
            )));
        }
        let Some(public) = hub.catalog.gateway().and_then(|g| g.public_url()) else {
            return Err(invalid(format!(
                "server `{server}` delivers event type `{event_type}` only by webhook, and mcpctl serve has no public URL to receive it at; set `public_url` in the [gateway] table to the URL servers reach `mcpctl serve --http` at"
            )));
        };
        Ok(format!(
            "{}{WEBHOOK_PATH}/{token}",
            public.trim_end_matches('/')
        ))
    }

    /// Ends every webhook subscription upstream (each lease is closed: its refreshes stop
    /// and `events/unsubscribe` is awaited, all at once, within [`CLOSE_WAIT`]) and
    /// forgets every caller subscription. The gateway's stop, before its servers stop.
    pub(crate) async fn close(&self) {
        let hooks: Vec<Arc<Hook>> = self.lock_hooks().drain().map(|(_, h)| h).collect();
        let closing = futures::future::join_all(hooks.iter().map(|h| h.close()));
        if tokio::time::timeout(CLOSE_WAIT, closing).await.is_err() {
            tracing::warn!(
                "ending the webhook subscriptions upstream took over {}s; the rest lapse at their TTL",
                CLOSE_WAIT.as_secs()
            );
        }
        self.lock_subscriptions().clear();
    }

    fn lock_hooks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Hook>>> {
        self.hooks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The webhook subscription whose callback URL ends with `token`.
    pub(crate) fn hook(&self, token: &str) -> Option<Arc<Hook>> {
        self.lock_hooks().get(token).cloned()
    }

    /// How many caller subscriptions the relay keeps.
    pub(crate) fn subscriptions(&self) -> usize {
        self.lock_subscriptions().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: &str) -> EventOccurrence {
        serde_json::from_value(json!({"eventId": id, "name": "t", "timestamp": "x", "data": {}}))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_buffer_keeps_each_event_once_and_the_last_ones() {
        let mut buffer = Buffer::default();
        buffer.push(event("a"));
        buffer.push(event("a"));
        assert_eq!(buffer.events.len(), 1);
        for i in 0..BUFFER + 5 {
            buffer.push(event(&format!("e{i}")));
        }
        assert_eq!(buffer.events.len(), BUFFER);
        assert_eq!(buffer.next, BUFFER as u64 + 6);
        assert_eq!(buffer.events.front().map(|(s, _)| *s), Some(6));
    }

    #[test]
    fn a_subscription_not_polled_for_the_idle_time_is_idle() {
        let relayed = Relayed::new();
        let start = Instant::now();
        relayed.touch(start);
        assert!(!relayed.idle_at(start + IDLE));
        assert!(relayed.idle_at(start + IDLE + Duration::from_secs(1)));
        relayed.touch(start + IDLE);
        assert!(!relayed.idle_at(start + IDLE + Duration::from_secs(1)));
        // Dropped, it ends its upstream subscription.
        let cancel = relayed.cancel.clone();
        drop(relayed);
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn a_subscription_a_stream_uses_is_not_idle_and_its_end_counts_as_a_poll() {
        let relayed = Relayed::new();
        let start = Instant::now();
        relayed.touch(start);
        let open = relayed.stream_opened();
        assert!(!relayed.idle_at(start + IDLE * 3));
        let before_the_end = Instant::now();
        drop(open);
        assert!(!relayed.idle_at(before_the_end + IDLE));
        assert!(relayed.idle_at(Instant::now() + IDLE + Duration::from_secs(1)));
    }

    #[test]
    fn a_webhook_gap_makes_reads_from_before_it_truncated_and_terminated_ends_it() {
        let relayed = Relayed::new();
        relayed.deliver(event("e0"));
        relayed.deliver(event("e1"));
        let mut heads = relayed.heads();
        heads.mark_unchanged();
        relayed.skipped();
        assert!(heads.has_changed().unwrap(), "streams are told");
        relayed.deliver(event("e2"));
        // A read from before the gap says so (the reader of e0 and e1 missed what the
        // upstream skipped before e2); one from after it does not.
        let before = relayed.read(Some(1), usize::MAX);
        assert!(before.truncated);
        assert_eq!(before.events.len(), 2);
        let at_the_gap = relayed.read(Some(2), usize::MAX);
        assert!(at_the_gap.truncated);
        assert_eq!(at_the_gap.events.len(), 1);
        let after = relayed.read(Some(3), usize::MAX);
        assert!(!after.truncated && after.events.is_empty());
        assert!(after.ended.is_none());
        relayed.terminated("the upstream subscription ended: revoked".to_owned());
        let last = relayed.read(Some(3), usize::MAX);
        assert_eq!(
            last.ended.as_deref(),
            Some("the upstream subscription ended: revoked")
        );
    }

    #[test]
    fn a_read_from_before_the_buffer_is_truncated_and_starts_at_the_oldest_kept() {
        let relayed = Relayed::new();
        for i in 0..BUFFER + 2 {
            relayed.deliver(event(&format!("e{i}")));
        }
        let read = relayed.read(Some(1), usize::MAX);
        assert!(read.truncated);
        assert_eq!(read.start, 2);
        assert_eq!(read.events.len(), BUFFER);
        let now = relayed.read(None, usize::MAX);
        assert!(!now.truncated && now.events.is_empty());
        assert_eq!(now.start, BUFFER as u64 + 2);
    }

    #[test]
    fn cursors_are_the_gateways_own() {
        assert_eq!(seq_of(&cursor_of(42)), Some(42));
        assert_eq!(seq_of("42"), None);
        assert_eq!(
            canonical(&json!({"b": 1, "a": {"d": 2, "c": 3}})),
            canonical(&json!({"a": {"c": 3, "d": 2}, "b": 1}))
        );
    }
}
