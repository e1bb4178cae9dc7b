//! Events from the world (the Events extension, SEP-3415, `io.modelcontextprotocol/events`):
//! the event types a server describes ([`Client::list_event_types`], `events/list`), and
//! their occurrences by poll ([`Client::poll_events`], [`EventPoller`]: `events/poll` with
//! an opaque cursor kept and resumed) or by push ([`Client::stream_events`],
//! [`EventStream`]: an `events/stream` request kept open, supervised like the
//! `subscriptions/listen` requests of [`crate::listen`]: a stream that ends, fails or goes
//! silent for longer than its stall is noticed and opened again from the last cursor, so
//! nothing the server still holds is lost).
//!
//! A server that skipped events (a cursor older than what it keeps, a replay it cut) says
//! so with `truncated`: a poll's [`EventBatch::truncated`], a stream's
//! [`StreamItem::Truncated`].
//!
//! By webhook, [`Client::subscribe_webhook`] subscribes (and refreshes) once, and
//! [`Client::lease_webhook`] keeps a subscription alive ([`WebhookLease`]: refreshed before
//! each grant ends, with backoff on failure, unsubscribed on close or drop); the host's
//! HTTP server checks each delivery with [`WebhookVerifier`] and reads it with
//! [`WebhookBody`]. The cursor is the host's to persist ([`EventPoller::cursor`],
//! [`EventStream::cursor`]) and to give back after a restart.
//!
//! The extension's specification announces the capability as `capabilities.events`; rmcp's
//! typed capabilities keep only `capabilities.extensions`, so a server is taken to offer
//! events when it announces [`EVENTS_EXTENSION_ID`] there. Which mode to use for a
//! subscription, and who may subscribe, is the caller's decision (`mcp-connections`).
//!
//! Push notifications are routed to their stream as they are read off the transport, in
//! the order the server wrote them (rmcp would hand each to a task of its own).
//!
//! [`Client::list_event_types`]: crate::Client::list_event_types
//! [`Client::poll_events`]: crate::Client::poll_events
//! [`Client::stream_events`]: crate::Client::stream_events
//! [`Client::subscribe_webhook`]: crate::Client::subscribe_webhook
//! [`Client::lease_webhook`]: crate::Client::lease_webhook

pub(crate) mod error;
mod lease;
mod poll;
pub(crate) mod push;
pub(crate) mod routes;
mod subscribe;
mod webhook;

use std::time::Duration;

use rmcp::model::{ClientRequest, CustomRequest, JsonObject};
use rmcp::service::PeerRequestOptions;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Client, RequestError};
use error::EventError;
pub use lease::{
    DEFAULT_MAX_REFRESH_BACKOFF, DEFAULT_REFRESH_BACKOFF, WebhookLease, WebhookLeaseSettings,
    WebhookLeaseStatus,
};
pub use poll::{DEFAULT_MIN_POLL_INTERVAL, EventPoller};
pub use push::{DEFAULT_STREAM_STALL, EventStream, StreamItem, StreamSettings};
pub use subscribe::{WebhookSubscription, WebhookTarget};
pub use webhook::{
    WEBHOOK_IDS_KEPT, WEBHOOK_TOLERANCE, WebhookBody, WebhookHeaders, WebhookRejection,
    WebhookSecret, WebhookSecretError, WebhookVerifier,
};

/// The extension's identifier, under `capabilities.extensions`.
pub const EVENTS_EXTENSION_ID: &str = "io.modelcontextprotocol/events";

/// How long `events/list` and `events/poll` wait for their answer.
pub const EVENTS_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Most `events/list` pages read.
const MAX_LIST_PAGES: usize = 100;

/// How a server delivers an event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DeliveryMode {
    /// `events/poll`: the client asks, with its cursor.
    Poll,
    /// `events/stream`: a long-lived request the server sends events on.
    Push,
    /// `events/subscribe`: the server POSTs signed events to a callback URL.
    Webhook,
}

impl std::fmt::Display for DeliveryMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Poll => "poll",
            Self::Push => "push",
            Self::Webhook => "webhook",
        })
    }
}

/// One event type of `events/list`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EventType {
    /// Its name, the subscription's `name`.
    pub name: String,
    /// What it is, if the server said.
    pub description: Option<String>,
    /// The delivery modes offered, in the server's order (modes this client does not know
    /// are left out).
    pub delivery: Vec<DeliveryMode>,
    /// The JSON Schema of a subscription's `arguments`.
    pub input_schema: Value,
    /// The JSON Schema of an occurrence's `data`.
    pub payload_schema: Value,
}

/// One occurrence of an event (`EventOccurrence`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EventOccurrence {
    /// Its stable identifier, for de-duplication.
    pub event_id: String,
    /// Its event type.
    pub name: String,
    /// When it happened (ISO 8601, as the server wrote it).
    pub timestamp: String,
    /// Its payload.
    pub data: Value,
    /// The subscription's position after it (push; a poll's cursor is its batch's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// What a subscription asks for: an event type, and the arguments its `inputSchema`
/// describes (filters, transforms).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EventSubscription {
    /// The event type.
    pub name: String,
    /// The arguments.
    pub arguments: JsonObject,
}

impl EventSubscription {
    /// A subscription to `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: JsonObject::new(),
        }
    }

    /// Set the arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: JsonObject) -> Self {
        self.arguments = arguments;
        self
    }

    /// The params of a poll or stream request from `cursor`.
    pub(crate) fn params(&self, cursor: Option<&str>) -> serde_json::Map<String, Value> {
        let mut params = serde_json::Map::new();
        params.insert("name".to_owned(), Value::String(self.name.clone()));
        params.insert(
            "arguments".to_owned(),
            Value::Object(self.arguments.clone()),
        );
        params.insert(
            "cursor".to_owned(),
            cursor.map_or(Value::Null, |c| Value::String(c.to_owned())),
        );
        params
    }
}

/// One answer of `events/poll`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EventBatch {
    /// The events, in order.
    pub events: Vec<EventOccurrence>,
    /// Where the next poll starts (`None`: the event type has no replay; poll without).
    pub cursor: Option<String>,
    /// The server skipped events: the cursor was older than what it keeps (expired), or it
    /// cut the replay.
    pub truncated: bool,
    /// More events wait: poll again at once.
    pub has_more: bool,
    /// When the server asks to be polled next (`nextPollMs`).
    pub next_poll: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireType {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    delivery: Vec<Value>,
    #[serde(default)]
    input_schema: Value,
    #[serde(default)]
    payload_schema: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireList {
    events: Vec<WireType>,
    #[serde(default)]
    next_cursor: Option<String>,
}

impl Client {
    /// Whether the server announced the events extension.
    pub fn offers_events(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .extensions
                .as_ref()
                .is_some_and(|e| e.contains_key(EVENTS_EXTENSION_ID))
        })
    }

    pub(crate) fn events_offered(&self) -> Result<(), EventError> {
        if self.offers_events() {
            Ok(())
        } else {
            Err(EventError::Unsupported {
                server: self.server().clone(),
            })
        }
    }

    /// Every event type the server describes (`events/list`, all pages), in its order.
    ///
    /// # Errors
    /// [`EventError::Unsupported`] without asking when the server did not announce the
    /// extension; [`EventError::Request`] when a page fails, cannot be read, or the pages
    /// do not end.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future abandons the page in flight.
    pub async fn list_event_types(&self) -> Result<Vec<EventType>, EventError> {
        self.events_offered()?;
        let failed = |source| EventError::Request {
            server: self.server().clone(),
            what: "listing the event types".into(),
            source,
        };
        let mut types = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let mut params = serde_json::Map::new();
            if let Some(c) = &cursor {
                params.insert("cursor".to_owned(), Value::String(c.clone()));
            }
            let answer = self
                .events_request("events/list", params, EVENTS_REQUEST_TIMEOUT)
                .await
                .map_err(failed)?;
            let page: WireList = serde_json::from_value(answer).map_err(|e| {
                failed(RequestError::Protocol {
                    detail: format!("an events/list page that is not one: {e}"),
                })
            })?;
            types.extend(page.events.into_iter().map(|t| {
                EventType {
                    name: t.name,
                    description: t.description,
                    delivery: t
                        .delivery
                        .into_iter()
                        .filter_map(|m| serde_json::from_value(m).ok())
                        .collect(),
                    input_schema: t.input_schema,
                    payload_schema: t.payload_schema,
                }
            }));
            match page.next_cursor {
                Some(next) if Some(&next) != cursor.as_ref() => cursor = Some(next),
                Some(_) => {
                    return Err(failed(RequestError::Protocol {
                        detail: "events/list gave the same cursor twice".to_owned(),
                    }));
                }
                None => return Ok(types),
            }
        }
        Err(failed(RequestError::Protocol {
            detail: format!("events/list did not end within {MAX_LIST_PAGES} pages"),
        }))
    }

    /// Sends the extension's request `method` with `params`, answered within `timeout`;
    /// the answer's JSON.
    pub(crate) async fn events_request(
        &self,
        method: &'static str,
        params: serde_json::Map<String, Value>,
        timeout: Duration,
    ) -> Result<Value, RequestError> {
        self.traced(method, None, async {
            let mut request = ClientRequest::CustomRequest(CustomRequest::new(
                method,
                Some(Value::Object(params)),
            ));
            crate::telemetry::inject(&mut request);
            let sent = self
                .peer
                .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
                .await;
            let answered = match sent {
                Ok(handle) => handle.await_response().await,
                Err(e) => Err(e),
            };
            match answered {
                Ok(result) => serde_json::to_value(result).map_err(|e| RequestError::Protocol {
                    detail: format!("an answer to {method} that cannot be read: {e}"),
                }),
                Err(e) => Err(RequestError::of_service(self, e).await),
            }
        })
        .await
    }
}
