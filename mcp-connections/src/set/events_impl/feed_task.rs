//! The task behind an [`super::EventFeed`]: it hands the items of a push stream or a poll
//! loop on to the host and, when the connection they run on is gone (the server crashed,
//! was restarted, the connection was lost), waits for the set's next connection to the
//! server and opens the same subscription there from the cursor after the last item
//! handed on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use mcp_client::{
    DeliveryMode, EventBatch, EventError, EventPoller, EventStream, EventSubscription,
    RequestError, StreamItem, StreamSettings,
};
use mcp_key::McpServerKey;
use rmcp::model::JsonObject;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::error::Error;
use crate::set::ConnectionSet;
use crate::set::inner::SetInner;
use crate::set::slot::Attached;

/// Longest wait between polls after failed ones, and between attempts to reach the
/// server again (the wait doubles from its floor).
const RETRY_MAX: Duration = Duration::from_secs(30);

/// The first wait before reaching a lost server again.
const REOPEN_FLOOR: Duration = Duration::from_millis(100);

/// What the feed's task sends: an item (none for a cursor alone) with the cursor after it.
pub(super) struct Feed {
    pub(super) item: Option<StreamItem>,
    pub(super) cursor: Option<String>,
}

impl std::fmt::Debug for Feed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Feed").field("item", &self.item).finish()
    }
}

/// The sending half of a feed: drops and counts what the host has no room for.
pub(super) struct Sender {
    pub(super) tx: mpsc::Sender<Feed>,
    pub(super) dropped: Arc<AtomicU64>,
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

/// What the set keeps of one subscription to open it again on a new connection.
#[derive(Debug, Clone)]
pub(super) struct Subscription {
    pub(super) server: McpServerKey,
    pub(super) event_type: String,
    pub(super) filter: JsonObject,
    pub(super) mode: DeliveryMode,
    pub(super) min_poll_interval: Duration,
    pub(super) stall: Duration,
}

impl Subscription {
    fn request(&self) -> EventSubscription {
        EventSubscription::new(self.event_type.as_str()).with_arguments(self.filter.clone())
    }
}

/// A subscription opened on one connection: a push stream, or a poller with its first
/// answer.
pub(super) enum Opened {
    Push(EventStream),
    Poll(EventPoller, EventBatch),
}

/// Opens `subscription` on `attached` from `cursor`: the stream is open, or the first
/// poll answered, when this returns.
pub(super) async fn open(
    attached: &Attached,
    subscription: &Subscription,
    cursor: Option<String>,
) -> Result<Opened, EventError> {
    if subscription.mode == DeliveryMode::Push {
        let settings = StreamSettings::new().with_stall(subscription.stall);
        let stream = attached
            .live()
            .stream_events(subscription.request(), cursor, settings)
            .await?;
        return Ok(Opened::Push(stream));
    }
    let mut poller = EventPoller::new(subscription.request())
        .with_cursor(cursor)
        .with_min_interval(subscription.min_poll_interval);
    let first = poller.poll(attached.live()).await?;
    Ok(Opened::Poll(poller, first))
}

/// The set without keeping it alive: a feed does not hold a set its host let go of.
pub(super) struct WeakSet {
    inner: Weak<SetInner>,
    lifetime: Weak<DropGuard>,
}

impl WeakSet {
    pub(super) fn of(set: &ConnectionSet) -> Self {
        Self {
            inner: Arc::downgrade(&set.inner),
            lifetime: Arc::downgrade(&set._lifetime),
        }
    }

    fn upgrade(&self) -> Option<ConnectionSet> {
        Some(ConnectionSet {
            inner: self.inner.upgrade()?,
            _lifetime: self.lifetime.upgrade()?,
        })
    }
}

/// How one connection's run of a feed came to an end.
enum Outcome {
    /// The feed is over: the host dropped it, the set shut down, or the subscription
    /// ended for good (told to the host).
    Over,
    /// The connection is gone (told to the host as nothing yet).
    ConnectionLost(EventError),
}

/// The task of one feed.
pub(super) struct FeedTask {
    pub(super) set: WeakSet,
    pub(super) subscription: Subscription,
    pub(super) sender: Sender,
    pub(super) cancel: CancellationToken,
    /// Whether a lost connection is replaced (else the feed ends with it).
    pub(super) restore: bool,
    /// The cursor after the last item handed on (or dropped for want of room).
    pub(super) cursor: Option<String>,
    /// The host was told [`StreamItem::Lost`] and not [`StreamItem::Restored`] since.
    pub(super) lost: bool,
    /// The feed in the set's list while the task runs.
    pub(super) kept: super::registry::Kept,
}

impl FeedTask {
    /// Records `cursor` as the one after the last item handed on.
    fn moved(&mut self, cursor: Option<String>) {
        self.kept.entry.set_cursor(cursor.clone());
        self.cursor = cursor;
    }

    /// Runs the feed, `opened` on `attached` first, until it is over.
    pub(super) async fn run(mut self, mut attached: Arc<Attached>, mut opened: Opened) {
        loop {
            let outcome = match opened {
                Opened::Push(stream) => self.run_push(stream, &attached).await,
                Opened::Poll(poller, first) => self.run_poll(poller, first, &attached).await,
            };
            let Outcome::ConnectionLost(e) = outcome else {
                return;
            };
            drop(attached);
            self.kept.entry.set_connected(false);
            if !self.restore {
                self.sender
                    .send(Some(StreamItem::Ended(e)), self.cursor.clone());
                return;
            }
            if !self.lost {
                let lost = StreamItem::Lost {
                    reason: mcp_key::error_chain(&e),
                };
                if !self.sender.send(Some(lost), self.cursor.clone()) {
                    return;
                }
                self.lost = true;
            }
            let Some(reopened) = self.reopen().await else {
                return;
            };
            (attached, opened) = reopened;
            self.kept.entry.set_connected(true);
            self.lost = false;
            if !self
                .sender
                .send(Some(StreamItem::Restored), self.cursor.clone())
            {
                return;
            }
        }
    }

    /// Reaches the server again through the set (starting it again when it crashed, as a
    /// call does) and opens the subscription from the cursor, trying again with backoff
    /// while it cannot. `None` when the feed is over: dropped, the set shut down or let
    /// go of, or the server refused the subscription (told to the host).
    async fn reopen(&mut self) -> Option<(Arc<Attached>, Opened)> {
        let mut failures: u32 = 0;
        loop {
            let set = self.set.upgrade()?;
            let attempt = tokio::select! {
                () = self.cancel.cancelled() => return None,
                attempt = attach_and_open(&set, &self.subscription, self.cursor.clone()) => attempt,
            };
            drop(set);
            match attempt {
                Ok(reopened) => return Some(reopened),
                Err(Some(e)) if !e.is_retryable() => {
                    self.sender
                        .send(Some(StreamItem::Ended(e)), self.cursor.clone());
                    return None;
                }
                Err(None) => return None,
                Err(Some(e)) => {
                    tracing::debug!(server = %self.subscription.server, event_type = %self.subscription.event_type, error = %mcp_key::error_chain(&e), "event subscription not restored yet");
                }
            }
            failures = failures.saturating_add(1);
            let delay = REOPEN_FLOOR
                .saturating_mul(2u32.saturating_pow(failures.min(16)))
                .min(RETRY_MAX);
            tokio::select! {
                () = self.cancel.cancelled() => return None,
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    /// Hands a push stream's items on until the feed is over or the connection is gone.
    async fn run_push(&mut self, mut stream: EventStream, attached: &Attached) -> Outcome {
        let outcome = loop {
            let item = tokio::select! {
                () = self.cancel.cancelled() => break Outcome::Over,
                item = stream.next() => item,
            };
            let Some(item) = item else {
                break Outcome::Over;
            };
            let item = match item {
                StreamItem::Ended(e) if e.is_retryable() || !attached.live().is_alive() => {
                    break Outcome::ConnectionLost(e);
                }
                StreamItem::Lost { .. } => {
                    self.lost = true;
                    item
                }
                StreamItem::Restored => {
                    self.lost = false;
                    item
                }
                item => item,
            };
            let ended = matches!(item, StreamItem::Ended(_));
            self.moved(stream.cursor().map(str::to_owned));
            if !self.sender.send(Some(item), self.cursor.clone()) || ended {
                break Outcome::Over;
            }
        };
        stream.shutdown().await;
        outcome
    }

    /// Polls until the feed is over or the connection is gone, starting with the batch
    /// `first` already polled from [`Self::cursor`].
    async fn run_poll(
        &mut self,
        mut poller: EventPoller,
        first: EventBatch,
        attached: &Attached,
    ) -> Outcome {
        let floor = self.subscription.min_poll_interval;
        let mut answer: Result<EventBatch, EventError> = Ok(first);
        let mut failures: u32 = 0;
        loop {
            let delay = match answer {
                Ok(batch) => {
                    if failures > 0 || self.lost {
                        failures = 0;
                        self.lost = false;
                        if !self
                            .sender
                            .send(Some(StreamItem::Restored), self.cursor.clone())
                        {
                            return Outcome::Over;
                        }
                    }
                    let delay = poller.next_delay(&batch);
                    let after = poller.cursor().map(str::to_owned);
                    let before = self.cursor.clone();
                    self.moved(after.clone());
                    if !hand_batch(&self.sender, &before, &after, batch) {
                        return Outcome::Over;
                    }
                    delay
                }
                Err(e) if !attached.live().is_alive() => return Outcome::ConnectionLost(e),
                Err(e) if e.is_retryable() => {
                    failures = failures.saturating_add(1);
                    if !self.lost {
                        let lost = StreamItem::Lost {
                            reason: mcp_key::error_chain(&e),
                        };
                        if !self.sender.send(Some(lost), self.cursor.clone()) {
                            return Outcome::Over;
                        }
                        self.lost = true;
                    }
                    floor
                        .saturating_mul(2u32.saturating_pow(failures.min(16)))
                        .min(RETRY_MAX)
                }
                Err(e) => {
                    self.sender
                        .send(Some(StreamItem::Ended(e)), self.cursor.clone());
                    return Outcome::Over;
                }
            };
            tokio::select! {
                () = self.cancel.cancelled() => return Outcome::Over,
                () = tokio::time::sleep(delay) => {}
            }
            answer = tokio::select! {
                () = self.cancel.cancelled() => return Outcome::Over,
                answer = poller.poll(attached.live()) => answer,
            };
        }
    }
}

/// The set's ready connection to the server with the subscription opened on it. `Err`
/// with the error when it failed (retryable or not), `Err(None)` when the set shut down.
async fn attach_and_open(
    set: &ConnectionSet,
    subscription: &Subscription,
    cursor: Option<String>,
) -> Result<(Arc<Attached>, Opened), Option<EventError>> {
    let attached = match set.events_connection(&subscription.server).await {
        Ok(attached) => attached,
        Err(Error::ShutDown) => return Err(None),
        Err(e) => {
            let gone = e.is_unknown();
            let detail = mcp_key::error_chain(&e);
            let source = if gone {
                RequestError::Protocol { detail }
            } else {
                RequestError::Disconnected { detail }
            };
            return Err(Some(EventError::Request {
                server: subscription.server.clone(),
                what: format!(
                    "restoring the subscription to event type {}",
                    subscription.event_type
                )
                .into(),
                source,
            }));
        }
    };
    match open(&attached, subscription, cursor).await {
        Ok(opened) => Ok((attached, opened)),
        Err(e) => Err(Some(e)),
    }
}

/// Hands one poll's answer (polled from `before`, ending at `after`) on: `Truncated`
/// first when the server skipped events, then its events (the last one with `after`),
/// or `after` alone when there were none.
fn hand_batch(
    sender: &Sender,
    before: &Option<String>,
    after: &Option<String>,
    batch: EventBatch,
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
