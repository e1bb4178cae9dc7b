//! Webhook subscriptions, the requests: `events/subscribe` (also the refresh: the same
//! call again before `refreshBefore`) and `events/unsubscribe`, with the callback URL and
//! the secret the host gives ([`WebhookTarget`]). Receiving the deliveries is the host's
//! HTTP server's job, checked with [`super::webhook::WebhookVerifier`].

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::error::{EventError, NOT_FOUND};
use super::webhook::WebhookSecret;
use super::{DeliveryMode, EVENTS_REQUEST_TIMEOUT, EventSubscription};
use crate::{Client, RequestError};

/// Where and how a server is to deliver a subscription's events by webhook.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebhookTarget {
    /// The callback URL (`https`: servers refuse anything else).
    pub url: String,
    /// The secret the server signs deliveries with.
    pub secret: WebhookSecret,
    /// The lifetime suggested (`ttlMs`): `None` leaves it to the server, `Some(None)` asks
    /// for no expiry.
    pub ttl: Option<Option<Duration>>,
}

impl WebhookTarget {
    /// Deliveries to `url` signed with `secret`, for the server's default lifetime.
    pub fn new(url: impl Into<String>, secret: WebhookSecret) -> Self {
        Self {
            url: url.into(),
            secret,
            ttl: None,
        }
    }

    /// Suggest a lifetime.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(Some(ttl));
        self
    }

    /// Ask for no expiry (the server may still grant one).
    #[must_use]
    pub fn with_no_expiry(mut self) -> Self {
        self.ttl = Some(None);
        self
    }
}

/// The server's answer to `events/subscribe`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WebhookSubscription {
    /// The server's id of the subscription (the `X-MCP-Subscription-Id` of its
    /// deliveries), stable across refreshes.
    pub id: String,
    /// When the subscription lapses unless refreshed (ISO 8601); `None`: no expiry.
    #[serde(default)]
    pub refresh_before: Option<String>,
    /// A position safe to persist (events up to it were delivered or abandoned).
    #[serde(default)]
    pub cursor: Option<String>,
    /// Delivery starts later than the cursor given: events were skipped.
    #[serde(default)]
    pub truncated: bool,
    /// How deliveries fare, if the server said (on a refresh).
    #[serde(default)]
    pub delivery_status: Option<Value>,
}

impl Client {
    /// Subscribes `subscription` by webhook to `target`, from `cursor` (`None`: from now);
    /// the same call again with the last cursor refreshes it (it is idempotent per URL,
    /// event type and arguments). The host refreshes before
    /// [`WebhookSubscription::refresh_before`].
    ///
    /// # Errors
    /// [`EventError::Unsupported`] without asking when the server did not announce the
    /// extension; [`EventError::UnknownEventType`], [`EventError::ModeNotOffered`] or
    /// [`EventError::Refused`] (a non-`https` URL, a callback that failed verification)
    /// when the server refuses; [`EventError::Request`] when the request fails.
    ///
    /// # Cancel safety
    /// Cancel-safe as a request: the server may have subscribed meanwhile; subscribing
    /// again is harmless.
    pub async fn subscribe_webhook(
        &self,
        subscription: &EventSubscription,
        target: &WebhookTarget,
        cursor: Option<&str>,
    ) -> Result<WebhookSubscription, EventError> {
        self.events_offered()?;
        let what = || format!("subscribing event type `{}` by webhook", subscription.name);
        let params = subscribe_params(subscription, target, cursor);
        let answer = self
            .events_request("events/subscribe", params, EVENTS_REQUEST_TIMEOUT)
            .await
            .map_err(|e| {
                EventError::of_request(
                    self.server(),
                    &subscription.name,
                    DeliveryMode::Webhook,
                    what(),
                    e,
                )
            })?;
        serde_json::from_value(answer).map_err(|e| EventError::Request {
            server: self.server().clone(),
            what: what().into(),
            source: RequestError::Protocol {
                detail: format!("an events/subscribe answer that is not one: {e}"),
            },
        })
    }

    /// Ends the webhook subscription of `subscription` to `url` (otherwise it lapses when
    /// not refreshed).
    ///
    /// # Errors
    /// [`EventError::UnknownSubscription`] when the server has no such subscription;
    /// otherwise as [`Client::subscribe_webhook`].
    ///
    /// # Cancel safety
    /// Cancel-safe as a request.
    pub async fn unsubscribe_webhook(
        &self,
        subscription: &EventSubscription,
        url: &str,
    ) -> Result<(), EventError> {
        self.events_offered()?;
        let answered = self
            .events_request(
                "events/unsubscribe",
                unsubscribe_params(subscription, url),
                EVENTS_REQUEST_TIMEOUT,
            )
            .await;
        match answered {
            Ok(_) => Ok(()),
            Err(RequestError::Server { code, .. }) if code == NOT_FOUND => {
                Err(EventError::UnknownSubscription {
                    server: self.server().clone(),
                    event_type: subscription.name.as_str().into(),
                    url: url.into(),
                })
            }
            Err(e) => Err(EventError::of_request(
                self.server(),
                &subscription.name,
                DeliveryMode::Webhook,
                format!(
                    "unsubscribing event type `{}` from `{url}`",
                    subscription.name
                ),
                e,
            )),
        }
    }
}

/// The params of `events/subscribe` for `subscription` to `target` from `cursor`.
pub(crate) fn subscribe_params(
    subscription: &EventSubscription,
    target: &WebhookTarget,
    cursor: Option<&str>,
) -> Map<String, Value> {
    let mut params = subscription.params(cursor);
    params.insert(
        "delivery".to_owned(),
        json!({"mode": "webhook", "url": target.url, "secret": target.secret.to_whsec()}),
    );
    if let Some(ttl) = target.ttl {
        params.insert(
            "ttlMs".to_owned(),
            ttl.map_or(Value::Null, |t| {
                Value::from(u64::try_from(t.as_millis()).unwrap_or(u64::MAX))
            }),
        );
    }
    params
}

/// The params of `events/unsubscribe` for `subscription` to `url`.
pub(crate) fn unsubscribe_params(
    subscription: &EventSubscription,
    url: &str,
) -> Map<String, Value> {
    let mut params = subscription.params(None);
    params.remove("cursor");
    params.insert("delivery".to_owned(), json!({ "url": url }));
    params
}
