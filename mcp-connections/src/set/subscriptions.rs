//! Resource subscriptions of a set: the set's own list of subscribed URIs (made again on
//! a new connection), over the connection's subscriptions (see
//! [`mcp_client::Client::watch_resource`], which sets sharing a connection share).

use std::sync::Arc;

use mcp_key::McpServerKey;

use crate::error::Result;
use crate::set::ConnectionSet;
use mcp_pool::deadline_in;

impl ConnectionSet {
    /// Subscribes this set to changes of resource `uri` of `server`: each change is a
    /// [`ConnectionEvent::ResourceUpdated`](crate::ConnectionEvent::ResourceUpdated) on
    /// this set's events. Works in both protocol eras (`resources/subscribe`, or a
    /// `subscriptions/listen` request kept open). Sets sharing a connection subscribe it
    /// once. After a restart of the server the subscription is made again. Subscribing
    /// twice is the same as once.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) when the server lacks the `resources.subscribe` capability
    /// or refuses the URI; [`Error::UnknownServer`](crate::Error::UnknownServer), [`Error::NotReady`](crate::Error::NotReady), [`Error::Timeout`](crate::Error::Timeout)
    /// and the request errors of [`ConnectionSet::read_resource`].
    pub async fn subscribe_resource(&self, server: &McpServerKey, uri: &str) -> Result<()> {
        let slot = Arc::clone(self.inner.slot(server)?);
        let deadline = deadline_in(slot.spec.config.tool_timeout());
        let attached = self.ready_connection(&slot, deadline, false).await?;
        {
            let mut mine = slot.resource_subscriptions.lock().await;
            if !mine.insert(uri.to_owned()) {
                return Ok(());
            }
        }
        // Before the request: an update that follows its answer at once is read.
        attached.updates.make(attached.live());
        match attached.live().watch_resource(uri).await {
            Ok(()) => Ok(()),
            Err(e) => {
                slot.resource_subscriptions.lock().await.remove(uri);
                Err(self.request_error(server, &format!("resources/subscribe {uri}"), e))
            }
        }
    }

    /// Ends this set's subscription to `uri` of `server` (nothing when there is none).
    ///
    /// # Errors
    /// [`Error::UnknownServer`](crate::Error::UnknownServer).
    pub async fn unsubscribe_resource(&self, server: &McpServerKey, uri: &str) -> Result<()> {
        let slot = Arc::clone(self.inner.slot(server)?);
        if !slot.resource_subscriptions.lock().await.remove(uri) {
            return Ok(());
        }
        if let crate::set::slot::SlotState::Ready(attached) = slot.current() {
            attached.live().unwatch_resource(uri).await;
        }
        Ok(())
    }
}
