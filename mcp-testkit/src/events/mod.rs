//! The Events extension (`io.modelcontextprotocol/events`, SEP-3415) as the fake server
//! plays it: the event types of [`EventsSpec`] listed by `events/list`, delivered by poll
//! (`events/poll`, an opaque resumable cursor) and push (`events/stream`, a long-lived
//! request whose `notifications/events/*` carry the request's id in
//! `_meta["io.modelcontextprotocol/subscriptionId"]`). Webhook subscriptions
//! (`events/subscribe`, `events/unsubscribe`) are checked and answered, but no delivery is
//! POSTed yet.
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

pub(crate) mod log;
pub(crate) mod serve;

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
}

impl Default for EventsSpec {
    fn default() -> Self {
        Self {
            types: Vec::new(),
            heartbeat_ms: DEFAULT_HEARTBEAT_MS,
            next_poll_ms: DEFAULT_NEXT_POLL_MS,
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
