//! The Events extension (`io.modelcontextprotocol/events`, SEP-3415) as the fake server
//! plays it: the event types of [`EventsSpec`] listed by `events/list`, delivered by poll
//! (`events/poll`, an opaque resumable cursor) and push (`events/stream`, a long-lived
//! request whose `notifications/events/*` carry the request's id in
//! `_meta["io.modelcontextprotocol/subscriptionId"]`) and webhook (`events/subscribe`,
//! `events/unsubscribe`: signed POSTs to the callback URL, under a TTL; see
//! [`WebhookSpec`]).
//!
//! Events are emitted by a timer ([`EventTypeSpec::every_ms`]) and by tool calls
//! ([`Behavior::EmitEvent`](crate::Behavior::EmitEvent)); every session sees the same
//! history. Faults, driven by tools: [`Behavior::ForgetEvents`](crate::Behavior::ForgetEvents)
//! drops old events, so that a cursor behind them is answered `truncated: true` (all
//! forgotten: an expired cursor; some: a truncated replay), and
//! [`Behavior::EndEventStreams`](crate::Behavior::EndEventStreams) kills the open push
//! streams (ended by the server, or silent: no event and no heartbeat any more).
//!
//! A cursor is `pos-N`: the position after the N-th event emitted. An event matches a
//! subscription when each of its `arguments` equals the field of that name in the event's
//! `data`.

pub(crate) mod cursor;
pub(crate) mod delivery;
pub(crate) mod log;
pub(crate) mod serve;
pub(crate) mod webhook;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The extension's identifier, under which the fake server announces it in
/// `capabilities.extensions` (rmcp's typed capabilities have no `events` member).
pub const EVENTS_EXTENSION_ID: &str = "io.modelcontextprotocol/events";

/// Default [`EventsSpec::heartbeat_ms`]: the extension's "at least every 30 seconds".
pub const DEFAULT_HEARTBEAT_MS: u64 = 30_000;

/// Default [`EventsSpec::next_poll_ms`].
pub const DEFAULT_NEXT_POLL_MS: u64 = 1_000;

/// The events a scenario serves ([`crate::Scenario::with_events`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct EventsSpec {
    /// The event types, in `events/list` order.
    pub types: Vec<EventTypeSpec>,
    /// How often an open push stream sends `notifications/events/heartbeat`. Default
    /// [`DEFAULT_HEARTBEAT_MS`].
    pub heartbeat_ms: u64,
    /// `nextPollMs` of every poll answer. Default [`DEFAULT_NEXT_POLL_MS`].
    pub next_poll_ms: u64,
    /// Webhook delivery: the shortest TTL granted, the callback handshake, the faults.
    pub webhook: WebhookSpec,
    /// A file the event history is kept in (JSON lines, appended as events are emitted),
    /// so a server restarted on the same file goes on with the same events and cursors, as
    /// a real server keeping its events does. A line is
    /// `{"seq": N, "name": TYPE, "occurrence": EventOccurrence without cursor}`; the events
    /// before the first line are forgotten (a cursor behind them is truncated). `None` (the
    /// default): the history dies with the process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_file: Option<std::path::PathBuf>,
}

impl Default for EventsSpec {
    fn default() -> Self {
        Self {
            types: Vec::new(),
            heartbeat_ms: DEFAULT_HEARTBEAT_MS,
            next_poll_ms: DEFAULT_NEXT_POLL_MS,
            webhook: WebhookSpec::default(),
            history_file: None,
        }
    }
}

impl EventsSpec {
    /// No event types yet, the default heartbeat and poll interval.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add an event type.
    #[must_use]
    pub fn with_type(mut self, event_type: EventTypeSpec) -> Self {
        self.types.push(event_type);
        self
    }

    /// Set the push streams' heartbeat interval.
    #[must_use]
    pub fn with_heartbeat_ms(mut self, ms: u64) -> Self {
        self.heartbeat_ms = ms;
        self
    }

    /// Set `nextPollMs`.
    #[must_use]
    pub fn with_next_poll_ms(mut self, ms: u64) -> Self {
        self.next_poll_ms = ms;
        self
    }

    /// Keep the event history in `path` ([`Self::history_file`]).
    #[must_use]
    pub fn with_history_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.history_file = Some(path.into());
        self
    }

    /// Set how webhooks are delivered.
    #[must_use]
    pub fn with_webhook(mut self, webhook: WebhookSpec) -> Self {
        self.webhook = webhook;
        self
    }
}

/// Default [`WebhookSpec::min_ttl_ms`]: a second.
pub const DEFAULT_MIN_TTL_MS: u64 = 1_000;

/// How many times one webhook delivery is attempted before it is abandoned.
pub const WEBHOOK_DELIVERY_ATTEMPTS: u32 = 5;

/// How the fake server delivers by webhook ([`EventsSpec::webhook`]).
///
/// A callback URL is `https` (accepted and answered, but the fake speaks no TLS: nothing
/// is POSTed there) or plain `http` to a loopback host (`127.0.0.1`, `localhost`, `[::1]`),
/// which the fake really POSTs to; any other `http` URL is refused (`-32602`). For a
/// loopback URL:
///
/// - Before the first subscription to a URL, a `verification` control envelope
///   (`{"type":"verification","challenge":"<nonce>"}`, signed and headed like a delivery,
///   `webhook-id: msg_verification_<n>`) is POSTed; the endpoint proves intent by answering
///   `2xx` with `{"challenge":"<nonce>"}`. Otherwise `events/subscribe` fails with `-32015`
///   (`data.reason`: `challenge_failed`, `connection_refused`, `timeout`, `http_4xx`,
///   `http_5xx`). A verified URL stays verified for the server's life
///   ([`Self::verify_callbacks`] turns the handshake off).
/// - Each event the subscription matches is POSTed, in order, one at a time: the body is
///   the `EventOccurrence` with its `cursor`, the headers `Content-Type:
///   application/json`, `webhook-id` (the `eventId`), `webhook-timestamp` (Unix seconds),
///   `webhook-signature` (`v1,` + base64 HMAC-SHA256 over `id.timestamp.body` with the
///   subscription's secret) and `X-MCP-Subscription-Id`. A non-`2xx` answer or a failed
///   connection is retried (new timestamp and signature) up to
///   [`WEBHOOK_DELIVERY_ATTEMPTS`] times, then the event is abandoned (the refresh's
///   `deliveryStatus.lastError` says why). A cursor behind forgotten events makes a `gap`
///   envelope (`{"type":"gap","cursor":…}`) first.
/// - The grant (`refreshBefore`) is the `ttlMs` asked for (default an hour), at least
///   [`Self::min_ttl_ms`]; `ttlMs: null` is granted no expiry. A subscription not
///   refreshed (`events/subscribe` again, same URL, type and arguments) before its grant
///   lapses: the server forgets it and POSTs stop. A refresh of a lapsed subscription
///   starts delivery again from the cursor it gives; a refresh of a live one keeps its
///   position and answers `deliveryStatus` (`active`, `lastDeliveryAt`, `lastError`, and
///   `delivered`, the events acknowledged so far). A refresh with a new secret replaces
///   it; for five seconds deliveries carry two signatures (`v1,<new> v1,<old>`), so those
///   in flight verify under either.
/// - Faults ([`Self::faults`], [`WebhookFault`]): a forged delivery (bad
///   signature), a replayed one (the same request twice) and a stale one (a timestamp ten
///   minutes old) are POSTed *besides* the genuine delivery, so a receiver that refuses
///   them still gets every event once; a TTL that lapses early forgets the subscription
///   before its grant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct WebhookSpec {
    /// The shortest TTL granted: a shorter `ttlMs` is clamped up to it. Default
    /// [`DEFAULT_MIN_TTL_MS`].
    pub min_ttl_ms: u64,
    /// POST the `verification` handshake before the first subscription to a URL. Default
    /// `true`.
    pub verify_callbacks: bool,
    /// The faults, applied to every subscription.
    pub faults: Vec<WebhookFault>,
}

impl Default for WebhookSpec {
    fn default() -> Self {
        Self {
            min_ttl_ms: DEFAULT_MIN_TTL_MS,
            verify_callbacks: true,
            faults: Vec::new(),
        }
    }
}

impl WebhookSpec {
    /// The defaults: TTLs of at least a second, callbacks verified, no fault.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set the shortest TTL granted.
    #[must_use]
    pub fn with_min_ttl_ms(mut self, ms: u64) -> Self {
        self.min_ttl_ms = ms;
        self
    }

    /// Skip (or keep) the callback verification handshake.
    #[must_use]
    pub fn with_verify_callbacks(mut self, verify: bool) -> Self {
        self.verify_callbacks = verify;
        self
    }

    /// Add a fault.
    #[must_use]
    pub fn with_fault(mut self, fault: WebhookFault) -> Self {
        self.faults.push(fault);
        self
    }
}

/// A webhook delivery fault. `delivery` counts the events POSTed to one subscription,
/// from 1 (the same for every subscription of the server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum WebhookFault {
    /// Before the `delivery`-th event, POST it with a signature made with another secret
    /// (a forgery).
    BadSignature {
        /// Which delivery.
        delivery: u64,
    },
    /// After the `delivery`-th event was POSTed, POST the very same request again (same
    /// `webhook-id`, timestamp and signature: a replay).
    Replayed {
        /// Which delivery.
        delivery: u64,
    },
    /// Before the `delivery`-th event, POST it signed correctly but with a
    /// `webhook-timestamp` ten minutes old (a stale delivery).
    StaleTimestamp {
        /// Which delivery.
        delivery: u64,
    },
    /// Every subscription lapses `after_ms` milliseconds after it was made or refreshed,
    /// whatever its grant said.
    LapseEarly {
        /// Milliseconds after the (re)subscription.
        after_ms: u64,
    },
}

/// One event type of `events/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct EventTypeSpec {
    /// `name`.
    pub name: String,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `delivery`: the modes offered (`"poll"`, `"push"`, `"webhook"`); a request in a mode
    /// not listed is answered `-32014` (Unsupported). Default: poll and push.
    #[serde(default = "poll_and_push")]
    pub delivery: Vec<String>,
    /// `inputSchema`. Default: an object schema without properties.
    #[serde(default = "object_schema")]
    pub input_schema: Value,
    /// `payloadSchema`. Default: an object schema without properties.
    #[serde(default = "object_schema")]
    pub payload_schema: Value,
    /// Emit an event of this type every this many milliseconds, with `data`
    /// `{"tick": N}` (N from 1), from the first events request on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_ms: Option<u64>,
}

fn poll_and_push() -> Vec<String> {
    vec!["poll".to_owned(), "push".to_owned()]
}

fn object_schema() -> Value {
    serde_json::json!({"type": "object"})
}

impl EventTypeSpec {
    /// An event type offered by poll and push, emitted only by tool calls.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: None,
            delivery: poll_and_push(),
            input_schema: object_schema(),
            payload_schema: object_schema(),
            every_ms: None,
        }
    }

    /// Set the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Set the delivery modes offered.
    #[must_use]
    pub fn with_delivery<S: Into<String>>(mut self, modes: impl IntoIterator<Item = S>) -> Self {
        self.delivery = modes.into_iter().map(Into::into).collect();
        self
    }

    /// Set the input schema.
    #[must_use]
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Emit an event on a timer.
    #[must_use]
    pub fn with_every_ms(mut self, ms: u64) -> Self {
        self.every_ms = Some(ms);
        self
    }
}
