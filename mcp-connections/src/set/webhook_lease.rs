//! A webhook subscription kept alive on a server's ready connection
//! ([`ConnectionSet::lease_webhook`]), for a host with a public URL (the gateway): the
//! set finds the connection, [`mcp_client::WebhookLease`] refreshes and unsubscribes.

use std::sync::Arc;

use mcp_client::{EventSubscription, WebhookLease, WebhookLeaseSettings, WebhookTarget};
use mcp_key::McpServerKey;
use mcp_pool::deadline_in;
use rmcp::model::JsonObject;

use crate::set::ConnectionSet;
use crate::set::events_impl::EventFeedError;

impl ConnectionSet {
    /// Subscribes `event_type` of `server` with the arguments `filter` by webhook to
    /// `target` from `cursor` (`None`: from now), on the server's ready connection, and
    /// keeps it alive ([`mcp_client::Client::lease_webhook`]): refreshed at half the time
    /// left before each grant's end with the latest cursor, failed refreshes retried with
    /// `settings`' backoff, and `events/unsubscribe` sent by [`WebhookLease::close`].
    ///
    /// The lease sends its refreshes on that connection, the one the subscription was
    /// made on.
    ///
    /// # Errors
    /// [`EventFeedError::Set`] for an unknown server or one that is not ready;
    /// [`EventFeedError::Event`] naming the server and the event type when the server
    /// refuses the first subscription or the request fails (nothing is kept then).
    ///
    /// # Cancel safety
    /// Cancel-safe as a request: the server may have subscribed meanwhile (the
    /// subscription lapses at its TTL).
    pub async fn lease_webhook(
        &self,
        server: &McpServerKey,
        event_type: &str,
        filter: JsonObject,
        target: WebhookTarget,
        cursor: Option<String>,
        settings: WebhookLeaseSettings,
    ) -> Result<WebhookLease, EventFeedError> {
        let slot = Arc::clone(self.inner.slot(server)?);
        let deadline = deadline_in(slot.spec.config.tool_timeout());
        let attached = self.ready_connection(&slot, deadline, false).await?;
        let subscription = EventSubscription::new(event_type).with_arguments(filter);
        Ok(attached
            .live()
            .lease_webhook(subscription, target, cursor, settings)
            .await?)
    }
}
