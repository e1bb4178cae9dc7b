//! Events of a server (the Events extension, SEP-3415) as a host takes them from the set:
//! the event types a server describes ([`ConnectionSet::event_types`]) and a subscription
//! delivered as a bounded feed ([`ConnectionSet::subscribe_events`], [`EventFeed`]).
//!
//! The feed picks push (`events/stream`) when the event type offers it and poll
//! (`events/poll`) otherwise; both come from [`mcp_client`], whose push stream is
//! supervised (re-opened from its cursor when it breaks). Webhook delivery is never
//! chosen: the server would POST to a public URL, which a library host does not have.
//! A host that has one subscribes through [`ConnectionSet::subscribe_webhook`] (refreshing
//! it by the same call before its TTL) and checks deliveries with
//! [`mcp_client::WebhookVerifier`].
//!
//! The set keeps each feed's subscription (server, event type, filter, mode, the cursor
//! after the last item; listed by [`ConnectionSet::event_feeds`]) and opens it again from
//! that cursor when the connection it runs on is gone (`feed_task.rs`); a host that restarts itself keeps the cursor where it
//! chooses ([`CursorStore`], [`FileCursorStore`]). Each feed is its own subscription with
//! the server, so sets sharing one connection (sessions of one pool) never share or end
//! each other's feeds.

mod cursor_store;
mod feed_task;
pub(crate) mod registry;

pub use cursor_store::{CursorStore, FileCursorStore};
pub use registry::EventFeedInfo;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use feed_task::{Feed, FeedTask, Sender, Subscription, WeakSet};
use mcp_client::{
    DeliveryMode, EventError, EventSubscription, EventType, StreamItem, WebhookSubscription,
    WebhookTarget,
};
use mcp_key::McpServerKey;
use mcp_pool::deadline_in;
use rmcp::model::JsonObject;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::error::Error;
use crate::set::ConnectionSet;
use crate::set::slot::Attached;

/// Default [`EventFeedOptions::with_capacity`]: items an [`EventFeed`] holds for a host
/// that has not taken them yet; more are dropped and counted ([`EventFeed::dropped`]).
pub const DEFAULT_EVENT_FEED_CAPACITY: usize = 256;

/// How [`ConnectionSet::subscribe_events`] subscribes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EventFeedOptions {
    /// Where to start: a cursor an earlier feed gave ([`EventFeed::cursor`]); `None`
    /// (the default) starts from now.
    pub cursor: Option<String>,
    /// Items held for the host; default [`DEFAULT_EVENT_FEED_CAPACITY`].
    pub capacity: usize,
    /// The delivery mode to use; `None` (the default) takes push when the event type
    /// offers it, else poll.
    pub mode: Option<DeliveryMode>,
    /// The least wait between polls; default [`mcp_client::DEFAULT_MIN_POLL_INTERVAL`].
    pub min_poll_interval: Duration,
    /// A push stream silent this long is re-opened; default
    /// [`mcp_client::DEFAULT_STREAM_STALL`].
    pub stall: Duration,
    /// Whether the feed goes on over the server's next connection when the one it runs
    /// on is gone; default `true` (see [`ConnectionSet::subscribe_events`]).
    pub restore: bool,
    /// Where the cursor is kept for a host that restarts; default none
    /// ([`Self::persist_cursor`]).
    pub cursor_store: Option<Arc<dyn CursorStore>>,
}

impl Default for EventFeedOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl EventFeedOptions {
    /// The defaults: from now, push when offered, [`DEFAULT_EVENT_FEED_CAPACITY`] items.
    pub fn new() -> Self {
        Self {
            cursor: None,
            capacity: DEFAULT_EVENT_FEED_CAPACITY,
            mode: None,
            min_poll_interval: mcp_client::DEFAULT_MIN_POLL_INTERVAL,
            stall: mcp_client::DEFAULT_STREAM_STALL,
            restore: true,
            cursor_store: None,
        }
    }

    /// Resume from `cursor`, one an earlier feed of the same subscription gave
    /// ([`EventFeed::cursor`], persisted by the host across a restart).
    #[must_use]
    pub fn resume_from(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// Hold at most `capacity` items (at least 1) for the host.
    #[must_use]
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// Use `mode` (poll or push) whatever else the event type offers.
    #[must_use]
    pub fn with_mode(mut self, mode: DeliveryMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Set the least wait between polls.
    #[must_use]
    pub fn with_min_poll_interval(mut self, interval: Duration) -> Self {
        self.min_poll_interval = interval;
        self
    }

    /// Set the push stall (about twice the server's heartbeat interval).
    #[must_use]
    pub fn with_stall(mut self, stall: Duration) -> Self {
        self.stall = stall;
        self
    }

    /// End the feed with [`StreamItem::Ended`] when the connection it runs on is gone,
    /// instead of going on over the next one: for a host that resubscribes itself.
    #[must_use]
    pub fn without_restore(mut self) -> Self {
        self.restore = false;
        self
    }

    /// Keep the feed's cursor in `store` for a host that restarts: the feed stores the
    /// cursor after an item once the host is done with it (when it asks for the next one,
    /// [`EventFeed::next`], or ends the feed, [`EventFeed::shutdown`]), and without
    /// [`Self::resume_from`] the feed starts from the cursor `store` holds (from now when
    /// it holds none). Delivery is at least once: an item the host took but did not finish
    /// before it stopped comes again.
    #[must_use]
    pub fn persist_cursor(mut self, store: impl CursorStore + 'static) -> Self {
        self.cursor_store = Some(Arc::new(store));
        self
    }
}

/// Why [`ConnectionSet::event_types`] or [`ConnectionSet::subscribe_events`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventFeedError {
    /// The set could not reach the server (unknown, not ready, shut down).
    #[error(transparent)]
    Set(Box<Error>),
    /// The server does not offer events, has no such event type, does not deliver it in
    /// the mode asked, refused the subscription, or the request failed; the error names
    /// the server and the event type.
    #[error(transparent)]
    Event(#[from] EventError),
    /// The event type is delivered only by webhook, which needs a public URL the server
    /// can POST to.
    #[error(
        "server `{server}` delivers event type `{event_type}` only by webhook, which a host without a public URL cannot receive; subscribe with `mcp_client::Client::subscribe_webhook` from a host that has one"
    )]
    WebhookOnly {
        /// The server.
        server: McpServerKey,
        /// The event type.
        event_type: String,
    },
    /// The cursor store ([`EventFeedOptions::persist_cursor`]) could not be read.
    #[error(
        "could not read the kept cursor of event type `{event_type}` of server `{server}`; fix the cursor store (or remove its file to start from now)"
    )]
    CursorStore {
        /// The server.
        server: McpServerKey,
        /// The event type.
        event_type: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl From<Error> for EventFeedError {
    fn from(e: Error) -> Self {
        Self::Set(Box::new(e))
    }
}

/// A subscription to one event type of one server: its items in order, at most
/// [`EventFeedOptions::capacity`] held for the host (more are dropped and counted by
/// [`Self::dropped`]). The items are those of [`mcp_client::EventStream`]: events,
/// [`StreamItem::Truncated`] when the server skipped some, [`StreamItem::Lost`] and
/// [`StreamItem::Restored`] around an outage (a broken push stream, failing polls, the
/// connection gone until the server is back), and [`StreamItem::Ended`] last. Dropping
/// the feed ends the subscription (a push stream is cancelled with the server); so does
/// the shutdown of the set that made it, and of no other set.
#[derive(Debug)]
pub struct EventFeed {
    server: McpServerKey,
    event_type: String,
    filter: JsonObject,
    mode: DeliveryMode,
    feed: mpsc::Receiver<Feed>,
    cursor: Option<String>,
    dropped: Arc<AtomicU64>,
    store: Option<Arc<dyn CursorStore>>,
    /// The cursor last given to `store`.
    stored: Option<String>,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl EventFeed {
    /// The next item; `None` once the subscription ended (after [`StreamItem::Ended`]),
    /// or the set shut down. With [`EventFeedOptions::persist_cursor`], first stores the
    /// cursor after the item returned before (the host asking for more is done with it).
    ///
    /// # Cancel safety
    /// Cancel-safe: an item not returned stays for the next call.
    pub async fn next(&mut self) -> Option<StreamItem> {
        loop {
            self.persist();
            let feed = self.feed.recv().await?;
            self.cursor = feed.cursor;
            if let Some(item) = feed.item {
                return Some(item);
            }
        }
    }

    /// Gives the cursor to the store when it moved since it was last stored.
    fn persist(&mut self) {
        let (Some(store), Some(cursor)) = (&self.store, &self.cursor) else {
            return;
        };
        if self.stored.as_ref() == Some(cursor) {
            return;
        }
        match store.store(cursor) {
            Ok(()) => self.stored = Some(cursor.clone()),
            Err(e) => tracing::warn!(
                server = %self.server,
                event_type = %self.event_type,
                "could not keep the cursor of the event feed ({e}); a restarted host would get these events again"
            ),
        }
    }

    /// The cursor after the last item [`Self::next`] returned: persist it once that item
    /// is dealt with (or let [`EventFeedOptions::persist_cursor`] do it), and give it to
    /// [`EventFeedOptions::resume_from`] to go on from there (in either mode). Events
    /// dropped after that item come again on such a resume.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }

    /// Items dropped so far because the host let [`EventFeedOptions::capacity`] of them
    /// wait.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The delivery mode in use.
    pub fn mode(&self) -> DeliveryMode {
        self.mode
    }

    /// The server.
    pub fn server(&self) -> &McpServerKey {
        &self.server
    }

    /// The event type.
    pub fn event_type(&self) -> &str {
        &self.event_type
    }

    /// The arguments the subscription filters on.
    pub fn filter(&self) -> &JsonObject {
        &self.filter
    }

    /// Ends the subscription and waits until it is over (a push stream cancelled with
    /// the server). With [`EventFeedOptions::persist_cursor`], first stores the cursor
    /// after the last item [`Self::next`] returned.
    pub async fn shutdown(mut self) {
        self.persist();
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for EventFeed {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl ConnectionSet {
    /// The event types `server` describes (`events/list`), in its order. Waits for a
    /// server that is still starting (and starts a deferred one) like a call does.
    ///
    /// # Errors
    /// [`EventFeedError::Set`] for an unknown server or one that is not ready;
    /// [`EventFeedError::Event`] when the server does not offer events
    /// ([`EventError::Unsupported`]) or the listing fails.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn event_types(
        &self,
        server: &McpServerKey,
    ) -> Result<Vec<EventType>, EventFeedError> {
        let attached = self.events_connection(server).await?;
        Ok(attached.live().list_event_types().await?)
    }

    /// Subscribes to `event_type` of `server` with the arguments its input schema
    /// describes (`filter`), delivered as an [`EventFeed`]: push when the event type
    /// offers it (or `options` ask for it), else poll. Webhook delivery is not chosen: it
    /// needs a public URL (see [`EventFeedError::WebhookOnly`]). The first stream or poll
    /// is made before this returns, so events from then on (or from
    /// [`EventFeedOptions::resume_from`], or the cursor of
    /// [`EventFeedOptions::persist_cursor`]) are delivered.
    ///
    /// The set keeps the subscription: when the connection the feed runs on is gone (the
    /// server crashed or exited, the connection was lost), the feed tells
    /// [`StreamItem::Lost`], reaches the server again as a call would (starting it again,
    /// within its crash-loop backoff), opens the same subscription there from the cursor
    /// after the last item it handed on, and tells [`StreamItem::Restored`]: the events
    /// after that cursor follow, none lost and none twice, or [`StreamItem::Truncated`]
    /// first when the server no longer has them all. While the server cannot be reached
    /// the feed waits, trying again with backoff up to 30 s. It ends with
    /// [`StreamItem::Ended`] when the server refuses the subscription on its new
    /// connection (say, a server that lost its events refuses the cursor); with
    /// [`EventFeedOptions::without_restore`], when the connection is gone.
    ///
    /// Each feed is a subscription of its own with the server, scoped to this set: sets
    /// sharing a connection ([`crate::ServerPool`]) get their own feeds of the same event
    /// type, and one set's shutdown or dropped feed ends none of the other's.
    ///
    /// # Errors
    /// [`EventFeedError::Set`] for an unknown server or one that is not ready;
    /// [`EventFeedError::Event`] naming the server and the event type when the server does
    /// not offer events, has no such event type, does not deliver it in the mode asked,
    /// or refuses the subscription; [`EventFeedError::WebhookOnly`];
    /// [`EventFeedError::CursorStore`] when the kept cursor cannot be read.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future before it returns ends what it opened.
    pub async fn subscribe_events(
        &self,
        server: &McpServerKey,
        event_type: &str,
        filter: JsonObject,
        options: EventFeedOptions,
    ) -> Result<EventFeed, EventFeedError> {
        let cursor = starting_cursor(server, event_type, &options)?;
        let attached = self.events_connection(server).await?;
        let types = attached.live().list_event_types().await?;
        let Some(described) = types.iter().find(|t| t.name == event_type) else {
            return Err(EventError::UnknownEventType {
                server: server.clone(),
                event_type: event_type.into(),
            }
            .into());
        };
        let subscription = Subscription {
            server: server.clone(),
            event_type: event_type.to_owned(),
            filter,
            mode: choose_mode(server, described, options.mode)?,
            min_poll_interval: options.min_poll_interval,
            stall: options.stall,
        };
        let opened = feed_task::open(&attached, &subscription, cursor.clone()).await?;
        let (tx, feed) = mpsc::channel(options.capacity.max(1));
        let dropped = Arc::new(AtomicU64::new(0));
        let cancel = self.inner.shutdown.child_token();
        let (filter, mode) = (subscription.filter.clone(), subscription.mode);
        let kept = self.inner.event_feeds.keep(EventFeedInfo {
            server: server.clone(),
            event_type: event_type.to_owned(),
            filter: filter.clone(),
            mode,
            cursor: cursor.clone(),
            connected: true,
        });
        let task = FeedTask {
            set: WeakSet::of(self),
            subscription,
            sender: Sender {
                tx,
                dropped: Arc::clone(&dropped),
            },
            cancel: cancel.clone(),
            restore: options.restore,
            cursor: cursor.clone(),
            lost: false,
            kept,
        };
        let task = self.inner.tasks.spawn(task.run(attached, opened));
        Ok(EventFeed {
            server: server.clone(),
            event_type: event_type.to_owned(),
            filter,
            mode,
            feed,
            cursor: cursor.clone(),
            dropped,
            store: options.cursor_store,
            stored: cursor,
            cancel,
            task: Some(task),
        })
    }

    /// The event feeds this set keeps ([`Self::subscribe_events`]), in the order they were
    /// made: each one's subscription and the cursor it is opened again from on a new
    /// connection. A feed leaves the list when it is over (dropped, ended, or the set shut
    /// down); feeds of other sets sharing the connections are not listed.
    pub fn event_feeds(&self) -> Vec<EventFeedInfo> {
        self.inner.event_feeds.list()
    }

    /// Subscribes `event_type` of `server` with the arguments `filter` by webhook to
    /// `target` from `cursor` (`None`: from now), on the server's ready connection
    /// ([`mcp_client::Client::subscribe_webhook`]); the same call again refreshes it. For
    /// a host with a public URL: the server POSTs signed deliveries there, which the host
    /// checks with [`mcp_client::WebhookVerifier`].
    ///
    /// # Errors
    /// [`EventFeedError::Set`] for an unknown server or one that is not ready;
    /// [`EventFeedError::Event`] naming the server and the event type when the server
    /// refuses or the request fails.
    ///
    /// # Cancel safety
    /// Cancel-safe as a request: the server may have subscribed meanwhile.
    pub async fn subscribe_webhook(
        &self,
        server: &McpServerKey,
        event_type: &str,
        filter: JsonObject,
        target: &WebhookTarget,
        cursor: Option<&str>,
    ) -> Result<WebhookSubscription, EventFeedError> {
        let attached = self.events_connection(server).await?;
        let subscription = EventSubscription::new(event_type).with_arguments(filter);
        Ok(attached
            .live()
            .subscribe_webhook(&subscription, target, cursor)
            .await?)
    }

    /// Ends the webhook subscription of `event_type` of `server` with the arguments
    /// `filter` to `url` ([`mcp_client::Client::unsubscribe_webhook`]).
    ///
    /// # Errors
    /// As [`Self::subscribe_webhook`], and [`EventError::UnknownSubscription`] when the
    /// server has no such subscription.
    ///
    /// # Cancel safety
    /// Cancel-safe as a request.
    pub async fn unsubscribe_webhook(
        &self,
        server: &McpServerKey,
        event_type: &str,
        filter: JsonObject,
        url: &str,
    ) -> Result<(), EventFeedError> {
        let attached = self.events_connection(server).await?;
        let subscription = EventSubscription::new(event_type).with_arguments(filter);
        Ok(attached
            .live()
            .unsubscribe_webhook(&subscription, url)
            .await?)
    }

    /// The ready connection of `server`, within its tool timeout.
    async fn events_connection(&self, server: &McpServerKey) -> Result<Arc<Attached>, Error> {
        let slot = Arc::clone(self.inner.slot(server)?);
        let deadline = deadline_in(slot.spec.config.tool_timeout());
        self.ready_connection(&slot, deadline, false).await
    }
}

/// Where a feed starts: the cursor given, else the one the cursor store keeps, else now.
fn starting_cursor(
    server: &McpServerKey,
    event_type: &str,
    options: &EventFeedOptions,
) -> Result<Option<String>, EventFeedError> {
    if let Some(cursor) = &options.cursor {
        return Ok(Some(cursor.clone()));
    }
    let Some(store) = &options.cursor_store else {
        return Ok(None);
    };
    store.load().map_err(|source| EventFeedError::CursorStore {
        server: server.clone(),
        event_type: event_type.to_owned(),
        source,
    })
}

/// The mode to use for `described`: the one asked if offered, else push, else poll.
fn choose_mode(
    server: &McpServerKey,
    described: &EventType,
    asked: Option<DeliveryMode>,
) -> Result<DeliveryMode, EventFeedError> {
    let offered = |m: DeliveryMode| described.delivery.contains(&m);
    if let Some(mode) = asked {
        return match mode {
            DeliveryMode::Poll | DeliveryMode::Push if offered(mode) => Ok(mode),
            DeliveryMode::Webhook => Err(EventFeedError::WebhookOnly {
                server: server.clone(),
                event_type: described.name.clone(),
            }),
            _ => Err(EventError::ModeNotOffered {
                server: server.clone(),
                event_type: described.name.as_str().into(),
                mode,
            }
            .into()),
        };
    }
    if offered(DeliveryMode::Push) {
        Ok(DeliveryMode::Push)
    } else if offered(DeliveryMode::Poll) {
        Ok(DeliveryMode::Poll)
    } else if offered(DeliveryMode::Webhook) {
        Err(EventFeedError::WebhookOnly {
            server: server.clone(),
            event_type: described.name.clone(),
        })
    } else {
        Err(EventError::ModeNotOffered {
            server: server.clone(),
            event_type: described.name.as_str().into(),
            mode: DeliveryMode::Poll,
        }
        .into())
    }
}
