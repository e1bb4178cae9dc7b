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

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcp_client::{
    DeliveryMode, EventError, EventPoller, EventStream, EventSubscription, EventType, StreamItem,
    StreamSettings, WebhookSubscription, WebhookTarget,
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

/// Longest wait between polls after failed ones (the wait doubles from the poll floor).
const POLL_RETRY_MAX: Duration = Duration::from_secs(30);

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
}

impl From<Error> for EventFeedError {
    fn from(e: Error) -> Self {
        Self::Set(Box::new(e))
    }
}

/// What the feed's task sends: an item (none for a cursor alone) with the cursor after it.
struct Feed {
    item: Option<StreamItem>,
    cursor: Option<String>,
}

/// A subscription to one event type of one server: its items in order, at most
/// [`EventFeedOptions::capacity`] held for the host (more are dropped and counted by
/// [`Self::dropped`]). The items are those of [`mcp_client::EventStream`]: events,
/// [`StreamItem::Truncated`] when the server skipped some, [`StreamItem::Lost`] and
/// [`StreamItem::Restored`] around an outage (a broken push stream, failing polls), and
/// [`StreamItem::Ended`] last. Dropping the feed ends the subscription (a push stream is
/// cancelled with the server); so does the set's shutdown.
#[derive(Debug)]
pub struct EventFeed {
    server: McpServerKey,
    event_type: String,
    mode: DeliveryMode,
    feed: mpsc::Receiver<Feed>,
    cursor: Option<String>,
    dropped: Arc<AtomicU64>,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed").field("item", &self.item).finish()
    }
}

impl EventFeed {
    /// The next item; `None` once the subscription ended (after [`StreamItem::Ended`]),
    /// or the set shut down.
    ///
    /// # Cancel safety
    /// Cancel-safe: an item not returned stays for the next call.
    pub async fn next(&mut self) -> Option<StreamItem> {
        loop {
            let feed = self.feed.recv().await?;
            self.cursor = feed.cursor;
            if let Some(item) = feed.item {
                return Some(item);
            }
        }
    }

    /// The cursor after the last item [`Self::next`] returned: persist it once that item
    /// is dealt with, and give it to [`EventFeedOptions::resume_from`] to go on from there
    /// (in either mode). Events dropped after that item come again on such a resume.
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

    /// Ends the subscription and waits until it is over (a push stream cancelled with
    /// the server).
    pub async fn shutdown(mut self) {
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

/// The sending half of a feed: drops and counts what the host has no room for.
struct Sender {
    tx: mpsc::Sender<Feed>,
    dropped: Arc<AtomicU64>,
}

impl Sender {
    /// Sends `item` with the cursor after it; `false` once the host dropped the feed.
    fn send(&self, item: Option<StreamItem>, cursor: Option<String>) -> bool {
        let counts = item.is_some();
        match self.tx.try_send(Feed { item, cursor }) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                if counts {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
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
    /// [`EventFeedOptions::resume_from`]) are delivered. The feed lasts as long as the
    /// connection it was made on; a server restart ends it with [`StreamItem::Ended`], and
    /// a new feed resumed from its cursor goes on.
    ///
    /// # Errors
    /// [`EventFeedError::Set`] for an unknown server or one that is not ready;
    /// [`EventFeedError::Event`] naming the server and the event type when the server does
    /// not offer events, has no such event type, does not deliver it in the mode asked,
    /// or refuses the subscription; [`EventFeedError::WebhookOnly`].
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
        let attached = self.events_connection(server).await?;
        let types = attached.live().list_event_types().await?;
        let Some(described) = types.iter().find(|t| t.name == event_type) else {
            return Err(EventError::UnknownEventType {
                server: server.clone(),
                event_type: event_type.into(),
            }
            .into());
        };
        let mode = choose_mode(server, described, options.mode)?;
        let subscription = EventSubscription::new(event_type).with_arguments(filter);
        let (tx, feed) = mpsc::channel(options.capacity.max(1));
        let sender = Sender {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        let dropped = Arc::clone(&sender.dropped);
        let cancel = self.inner.shutdown.child_token();
        let task = match mode {
            DeliveryMode::Push => {
                let stream = attached
                    .live()
                    .stream_events(
                        subscription,
                        options.cursor.clone(),
                        StreamSettings::new().with_stall(options.stall),
                    )
                    .await?;
                self.inner
                    .tasks
                    .spawn(run_push(stream, sender, cancel.clone(), attached))
            }
            _ => {
                let mut poller = EventPoller::new(subscription)
                    .with_cursor(options.cursor.clone())
                    .with_min_interval(options.min_poll_interval);
                let first = poller.poll(attached.live()).await?;
                self.inner.tasks.spawn(run_poll(
                    poller,
                    options.cursor.clone(),
                    first,
                    sender,
                    cancel.clone(),
                    attached,
                    options.min_poll_interval,
                ))
            }
        };
        Ok(EventFeed {
            server: server.clone(),
            event_type: event_type.to_owned(),
            mode,
            feed,
            cursor: options.cursor,
            dropped,
            cancel,
            task: Some(task),
        })
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

/// Hands a push stream's items on until it ends, the host drops the feed, or the set shuts
/// down. Holds the connection while it runs.
async fn run_push(
    mut stream: EventStream,
    sender: Sender,
    cancel: CancellationToken,
    _attached: Arc<Attached>,
) {
    loop {
        let item = tokio::select! {
            () = cancel.cancelled() => break,
            item = stream.next() => item,
        };
        let Some(item) = item else { break };
        let ended = matches!(item, StreamItem::Ended(_));
        let cursor = stream.cursor().map(str::to_owned);
        if !sender.send(Some(item), cursor) || ended {
            break;
        }
    }
    stream.shutdown().await;
}

/// Polls until the subscription ends, the host drops the feed, or the set shuts down,
/// starting with the batch `first` already polled from `before`. Holds the connection
/// while it runs.
async fn run_poll(
    mut poller: EventPoller,
    mut before: Option<String>,
    first: mcp_client::EventBatch,
    sender: Sender,
    cancel: CancellationToken,
    attached: Arc<Attached>,
    floor: Duration,
) {
    let mut answer: Result<mcp_client::EventBatch, EventError> = Ok(first);
    let mut failures: u32 = 0;
    loop {
        let delay = match answer {
            Ok(batch) => {
                if failures > 0 {
                    failures = 0;
                    if !sender.send(Some(StreamItem::Restored), before.clone()) {
                        return;
                    }
                }
                let delay = poller.next_delay(&batch);
                let after = poller.cursor().map(str::to_owned);
                if !hand_batch(&sender, &before, &after, batch) {
                    return;
                }
                before = after;
                delay
            }
            Err(e) if e.is_retryable() && attached.live().is_alive() => {
                failures = failures.saturating_add(1);
                let lost = StreamItem::Lost {
                    reason: mcp_key::error_chain(&e),
                };
                if failures == 1 && !sender.send(Some(lost), before.clone()) {
                    return;
                }
                floor
                    .saturating_mul(2u32.saturating_pow(failures.min(16)))
                    .min(POLL_RETRY_MAX)
            }
            Err(e) => {
                sender.send(Some(StreamItem::Ended(e)), before);
                return;
            }
        };
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(delay) => {}
        }
        answer = tokio::select! {
            () = cancel.cancelled() => return,
            answer = poller.poll(attached.live()) => answer,
        };
    }
}

/// Hands one poll's answer (polled from `before`, ending at `after`) on: `Truncated`
/// first when the server skipped events, then its events (the last one with `after`),
/// or `after` alone when there were none.
fn hand_batch(
    sender: &Sender,
    before: &Option<String>,
    after: &Option<String>,
    batch: mcp_client::EventBatch,
) -> bool {
    if batch.truncated
        && !sender.send(
            Some(StreamItem::Truncated {
                cursor: after.clone(),
            }),
            before.clone(),
        )
    {
        return false;
    }
    let count = batch.events.len();
    if count == 0 {
        // A cursor alone takes a slot: sent only when it moved, so an idle feed does not
        // fill up with them.
        return after == before || sender.send(None, after.clone());
    }
    for (i, event) in batch.events.into_iter().enumerate() {
        let cursor = if i + 1 == count { after } else { before };
        if !sender.send(Some(StreamItem::Event(event)), cursor.clone()) {
            return false;
        }
    }
    true
}
