//! Delivery by poll: `events/poll` ([`Client::poll_events`](crate::Client::poll_events)),
//! and [`EventPoller`], which keeps a subscription's cursor from one poll to the next.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::error::EventError;
use super::{DeliveryMode, EVENTS_REQUEST_TIMEOUT, EventBatch, EventOccurrence, EventSubscription};
use crate::{Client, RequestError};

/// The least time [`EventPoller::next_delay`] waits between polls, whatever `nextPollMs`
/// says: the extension's advised floor against a server that would have the client spin.
pub const DEFAULT_MIN_POLL_INTERVAL: Duration = Duration::from_secs(1);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireBatch {
    #[serde(default)]
    events: Vec<EventOccurrence>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    has_more: bool,
    #[serde(default)]
    next_poll_ms: Option<u64>,
}

impl Client {
    /// One `events/poll` of `subscription` from `cursor` (`None`: from now, which returns
    /// no events and the cursor to poll with next), at most `max_events` events (`None`:
    /// the server's default). [`EventPoller`] keeps the cursor for you.
    ///
    /// # Errors
    /// [`EventError::Unsupported`] without asking when the server did not announce the
    /// extension; [`EventError::UnknownEventType`], [`EventError::ModeNotOffered`] or
    /// [`EventError::Refused`] when the server refuses; [`EventError::Request`] when the
    /// request fails or its answer cannot be read.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future abandons the poll; the cursor given stays valid.
    pub async fn poll_events(
        &self,
        subscription: &EventSubscription,
        cursor: Option<&str>,
        max_events: Option<u32>,
    ) -> Result<EventBatch, EventError> {
        self.events_offered()?;
        let what = || format!("polling event type `{}`", subscription.name);
        let mut params = subscription.params(cursor);
        if let Some(max) = max_events {
            params.insert("maxEvents".to_owned(), Value::from(max));
        }
        let answer = self
            .events_request("events/poll", params, EVENTS_REQUEST_TIMEOUT)
            .await
            .map_err(|e| {
                EventError::of_request(
                    self.server(),
                    &subscription.name,
                    DeliveryMode::Poll,
                    what(),
                    e,
                )
            })?;
        let batch: WireBatch = serde_json::from_value(answer).map_err(|e| EventError::Request {
            server: self.server().clone(),
            what: what().into(),
            source: RequestError::Protocol {
                detail: format!("an events/poll answer that is not one: {e}"),
            },
        })?;
        if batch.truncated {
            tracing::info!(server = %self.server(), event_type = %subscription.name, "events/poll: the server skipped events (truncated)");
        }
        Ok(EventBatch {
            events: batch.events,
            cursor: batch.cursor,
            truncated: batch.truncated,
            has_more: batch.has_more,
            next_poll: batch.next_poll_ms.map(Duration::from_millis),
        })
    }
}

/// A subscription delivered by poll: each [`EventPoller::poll`] starts where the last one
/// ended. The cursor is the host's to persist ([`EventPoller::cursor`]) and to give back
/// after a restart ([`EventPoller::with_cursor`]).
#[derive(Debug, Clone, PartialEq)]
pub struct EventPoller {
    subscription: EventSubscription,
    cursor: Option<String>,
    max_events: Option<u32>,
    min_interval: Duration,
}

impl EventPoller {
    /// A poller of `subscription` from now (its first poll returns no events).
    pub fn new(subscription: EventSubscription) -> Self {
        Self {
            subscription,
            cursor: None,
            max_events: None,
            min_interval: DEFAULT_MIN_POLL_INTERVAL,
        }
    }

    /// Resume from a cursor kept earlier.
    #[must_use]
    pub fn with_cursor(mut self, cursor: Option<String>) -> Self {
        self.cursor = cursor;
        self
    }

    /// Ask for at most `max` events per poll.
    #[must_use]
    pub fn with_max_events(mut self, max: u32) -> Self {
        self.max_events = Some(max);
        self
    }

    /// Set the least delay [`Self::next_delay`] gives (default
    /// [`DEFAULT_MIN_POLL_INTERVAL`]).
    #[must_use]
    pub fn with_min_interval(mut self, interval: Duration) -> Self {
        self.min_interval = interval;
        self
    }

    /// The subscription polled.
    pub fn subscription(&self) -> &EventSubscription {
        &self.subscription
    }

    /// Where the next poll starts: persist it to resume after a restart.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }

    /// Polls once from the kept cursor, and keeps the answer's cursor. A failed poll keeps
    /// the cursor it had, so nothing is skipped.
    ///
    /// # Errors
    /// Those of [`Client::poll_events`].
    ///
    /// # Cancel safety
    /// Cancel-safe: the cursor changes only once an answer is in hand.
    pub async fn poll(&mut self, client: &Client) -> Result<EventBatch, EventError> {
        let batch = client
            .poll_events(&self.subscription, self.cursor.as_deref(), self.max_events)
            .await?;
        self.cursor.clone_from(&batch.cursor);
        Ok(batch)
    }

    /// How long to wait after `batch` before polling again: nothing when more events
    /// wait, else the server's `nextPollMs` (or the floor when it gave none), never less
    /// than the floor.
    pub fn next_delay(&self, batch: &EventBatch) -> Duration {
        if batch.has_more {
            return Duration::ZERO;
        }
        batch
            .next_poll
            .unwrap_or(self.min_interval)
            .max(self.min_interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_poll_waits_at_least_the_floor_and_not_at_all_when_more_wait() {
        let poller = EventPoller::new(EventSubscription::new("mail"));
        let mut batch = EventBatch {
            events: Vec::new(),
            cursor: None,
            truncated: false,
            has_more: false,
            next_poll: Some(Duration::from_millis(10)),
        };
        assert_eq!(poller.next_delay(&batch), DEFAULT_MIN_POLL_INTERVAL);
        batch.next_poll = Some(Duration::from_secs(7));
        assert_eq!(poller.next_delay(&batch), Duration::from_secs(7));
        batch.has_more = true;
        assert_eq!(poller.next_delay(&batch), Duration::ZERO);
    }
}
