//! Delivery by push: an `events/stream` request kept open
//! ([`Client::stream_events`](crate::Client::stream_events)), its notifications routed to
//! it as they are read ([`super::routes::EventRoutes`]), and its supervision: a stream the server ends,
//! that fails, or that sends neither event nor heartbeat for longer than the stall is
//! opened again, with backoff, from the last cursor the host was handed.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, ServiceError};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::EventError;
use super::routes::{EventRoutes, NOTIFICATION_PREFIX, Pushed, ROUTE_BUFFER};
use super::{DeliveryMode, EventOccurrence, EventSubscription};
use crate::state::ConnectionShared;
use crate::{Client, RequestError};

/// Default [`StreamSettings::stall`]: twice the heartbeat interval the extension asks of
/// servers (at least every 30 seconds).
pub const DEFAULT_STREAM_STALL: Duration = Duration::from_secs(60);

/// Items handed to the host and not yet taken.
const ITEM_BUFFER: usize = 64;

/// Event ids remembered to drop an event a reopened stream replays again.
const SEEN_KEPT: usize = 256;

/// First delay before a stream is opened again; doubles up to [`RETRY_MAX`].
const RETRY_BASE: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

/// A stream open at least this long before it ended was a healthy one: the next is
/// opened after the first delay again.
const STEADY: Duration = Duration::from_secs(30);

/// How a push subscription is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamSettings {
    /// A stream that sends neither event nor heartbeat for this long is taken for dead,
    /// cancelled and opened again. Default [`DEFAULT_STREAM_STALL`].
    pub stall: Duration,
}

impl Default for StreamSettings {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamSettings {
    /// The default stall.
    pub fn new() -> Self {
        Self {
            stall: DEFAULT_STREAM_STALL,
        }
    }

    /// Set the stall (use about twice the server's heartbeat interval).
    #[must_use]
    pub fn with_stall(mut self, stall: Duration) -> Self {
        self.stall = stall;
        self
    }
}

/// What a push subscription hands the host, in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamItem {
    /// An event.
    Event(EventOccurrence),
    /// The server skipped events (the cursor was older than what it keeps, or it cut the
    /// replay); delivery goes on from `cursor`.
    Truncated {
        /// Where delivery resumes.
        cursor: Option<String>,
    },
    /// The stream broke (the server ended it, it failed, or it went silent for longer
    /// than the stall); it is opened again from the last cursor, with backoff. Told once
    /// per outage.
    Lost {
        /// Why.
        reason: String,
    },
    /// The stream is open again after [`StreamItem::Lost`]; what the server still holds
    /// from the cursor on follows.
    Restored,
    /// The server reported a passing failure (`notifications/events/error`); the
    /// subscription stays.
    ServerError {
        /// The JSON-RPC error code.
        code: i64,
        /// The server's message.
        message: String,
    },
    /// The subscription ended for good (the server terminated or refused it, or the
    /// connection is gone); nothing follows.
    Ended(EventError),
}

/// A push subscription: events as they come, supervised (see the module docs). Dropping
/// it cancels the stream.
#[derive(Debug)]
pub struct EventStream {
    feed: mpsc::Receiver<Feed>,
    cursor: Option<String>,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl EventStream {
    /// The next item; `None` once the subscription ended (after [`StreamItem::Ended`]) or
    /// was shut down.
    ///
    /// # Cancel safety
    /// Cancel-safe: an item not returned stays for the next call.
    pub async fn next(&mut self) -> Option<StreamItem> {
        loop {
            match self.feed.recv().await? {
                Feed::Item(item, cursor) => {
                    if let Some(cursor) = cursor {
                        self.cursor = cursor;
                    }
                    return Some(item);
                }
                Feed::Cursor(cursor) => self.cursor = cursor,
            }
        }
    }

    /// The cursor after the last item [`Self::next`] returned (a heartbeat read meanwhile
    /// may have moved it on): persist it once that item is dealt with, and give it to
    /// [`Client::stream_events`] or [`super::EventPoller::with_cursor`] to resume.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }

    /// Cancels the stream (the server is told) and waits for its supervision to end.
    pub async fn shutdown(mut self) {
        self.cancel.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        // The supervision cancels the request with the server as it ends.
        self.cancel.cancel();
    }
}

/// What the supervision sends the host's [`EventStream`]: an item with the cursor after
/// it (when it moves it), or a cursor alone (a heartbeat).
#[derive(Debug)]
enum Feed {
    Item(StreamItem, Option<Option<String>>),
    Cursor(Option<String>),
}

/// A stream request sent, and its first message (the server's `active`, usually).
struct Open {
    handle: RequestHandle<RoleClient>,
    rx: mpsc::Receiver<Pushed>,
    first: Pushed,
}

/// Why opening a stream failed.
enum OpenError {
    /// The server answered with an error.
    Refused { code: i32, message: String },
    /// The server answered at once, without a stream.
    EndedAtOnce,
    /// Nothing came within the stall.
    Silent(Duration),
    /// The request failed.
    Service(ServiceError),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused { code, message } => write!(f, "error {code}: {message}"),
            Self::EndedAtOnce => f.write_str("the server answered at once, without a stream"),
            Self::Silent(stall) => {
                write!(f, "the server sent nothing within {}s", stall.as_secs_f64())
            }
            Self::Service(e) => write!(f, "{e}"),
        }
    }
}

/// Sends `events/stream` for `subscription` from `cursor`, and waits for its first
/// message (or its answer, or the stall).
async fn open(
    peer: &Peer<RoleClient>,
    routes: &EventRoutes,
    subscription: &EventSubscription,
    cursor: Option<&str>,
    stall: Duration,
) -> Result<Open, OpenError> {
    let mut request = ClientRequest::CustomRequest(CustomRequest::new(
        "events/stream",
        Some(Value::Object(subscription.params(cursor))),
    ));
    crate::telemetry::inject(&mut request);
    let mut handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(OpenError::Service)?;
    let mut rx = routes.register(&handle.id);
    tokio::select! {
        biased;
        first = rx.recv() => match first {
            Some(first) => Ok(Open { handle, rx, first }),
            None => {
                cancel(routes, handle, "fell behind").await;
                Err(OpenError::Silent(stall))
            }
        },
        answer = &mut handle.rx => {
            routes.forget(&handle.id);
            Err(match answer {
                Ok(Ok(_)) => OpenError::EndedAtOnce,
                Ok(Err(e)) => match crate::rmcp_errors::ServiceFailure::of(&e) {
                    crate::rmcp_errors::ServiceFailure::Refused(data) => OpenError::Refused {
                        code: data.code.0,
                        message: data.message.to_string(),
                    },
                    _ => OpenError::Service(e),
                },
                Err(_) => OpenError::Service(ServiceError::TransportClosed),
            })
        }
        () = tokio::time::sleep(stall) => {
            cancel(routes, handle, "no first message within the stall").await;
            Err(OpenError::Silent(stall))
        }
    }
}

/// Cancels a stream's request with the server and forgets its route.
async fn cancel(routes: &EventRoutes, handle: RequestHandle<RoleClient>, reason: &str) {
    routes.forget(&handle.id);
    let _ = handle.cancel(Some(reason.to_owned())).await;
}

impl Client {
    /// Subscribes to `subscription` by push (`events/stream`) from `cursor` (`None`: from
    /// now), and keeps the stream open (see [`EventStream`] and the module docs) until
    /// the stream is dropped or shut down, or the connection ends.
    ///
    /// # Errors
    /// [`EventError::Unsupported`] without asking when the server did not announce the
    /// extension; [`EventError::UnknownEventType`], [`EventError::ModeNotOffered`] or
    /// [`EventError::Refused`] when the server refuses the first stream;
    /// [`EventError::Request`] when it fails or sends nothing within the stall. Later
    /// failures are told on the stream.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future before it returns cancels the stream opened.
    pub async fn stream_events(
        &self,
        subscription: EventSubscription,
        cursor: Option<String>,
        settings: StreamSettings,
    ) -> Result<EventStream, EventError> {
        self.events_offered()?;
        let what = format!("streaming event type `{}`", subscription.name);
        let opened = open(
            &self.peer,
            &self.shared.events,
            &subscription,
            cursor.as_deref(),
            settings.stall,
        )
        .await;
        let first = match opened {
            Ok(first) => first,
            Err(OpenError::Refused { code, message }) => {
                return Err(EventError::answered(
                    self.server(),
                    &subscription.name,
                    DeliveryMode::Push,
                    code,
                    &message,
                ));
            }
            Err(OpenError::Service(e)) => {
                return Err(EventError::Request {
                    server: self.server().clone(),
                    what: what.into(),
                    source: RequestError::of_service(self, e).await,
                });
            }
            Err(other @ (OpenError::EndedAtOnce | OpenError::Silent(_))) => {
                return Err(EventError::Request {
                    server: self.server().clone(),
                    what: what.into(),
                    source: RequestError::Protocol {
                        detail: other.to_string(),
                    },
                });
            }
        };
        let (feed_tx, feed) = mpsc::channel(ITEM_BUFFER);
        let cancel = self.cancel_token().child_token();
        let supervisor = Supervisor {
            peer: self.peer.clone(),
            shared: Arc::clone(&self.shared),
            subscription,
            stall: settings.stall,
            feed: feed_tx,
            cursor: cursor.clone(),
            cancel: cancel.clone(),
            seen: VecDeque::new(),
        };
        let task = tokio::spawn(supervisor.run(first));
        Ok(EventStream {
            feed,
            cursor,
            cancel,
            task: Some(task),
        })
    }
}

/// Keeps one push subscription open.
struct Supervisor {
    peer: Peer<RoleClient>,
    shared: Arc<ConnectionShared>,
    subscription: EventSubscription,
    stall: Duration,
    feed: mpsc::Sender<Feed>,
    /// The cursor after the last notification handed on: where a stream opened again
    /// starts.
    cursor: Option<String>,
    cancel: CancellationToken,
    /// The latest event ids handed out.
    seen: VecDeque<String>,
}

/// How serving one stream ended.
enum Outcome {
    /// The subscription is over (cancelled, terminated, the host gone).
    Stop,
    /// The stream broke, for this reason: open it again.
    Lost(String),
}

/// What one notification means for the stream.
enum Taken {
    Go,
    Stop,
}

impl Supervisor {
    async fn run(mut self, first: Open) {
        let mut open_now = Some(first);
        let mut down = false;
        let mut failures = 0u32;
        let mut short_lived = 0u32;
        loop {
            let current = match open_now.take() {
                Some(current) => current,
                None => {
                    let cursor = self.cursor.clone();
                    let opened = tokio::select! {
                        () = self.cancel.cancelled() => return,
                        opened = open(
                            &self.peer,
                            &self.shared.events,
                            &self.subscription,
                            cursor.as_deref(),
                            self.stall,
                        ) => opened,
                    };
                    match opened {
                        Ok(current) => current,
                        Err(OpenError::Refused { code, message }) => {
                            let error = EventError::answered(
                                &self.shared.key,
                                &self.subscription.name,
                                DeliveryMode::Push,
                                code,
                                &message,
                            );
                            self.hand(StreamItem::Ended(error)).await;
                            return;
                        }
                        Err(e) => {
                            if self.peer.is_transport_closed() {
                                self.disconnected().await;
                                return;
                            }
                            failures += 1;
                            tracing::info!(server = %self.shared.key, event_type = %self.subscription.name, "events/stream: opening it again failed: {e}");
                            if !down {
                                down = true;
                                let reason = format!("opening it again failed: {e}");
                                if !self.hand(StreamItem::Lost { reason }).await {
                                    return;
                                }
                            }
                            if !self.pause(failures.max(short_lived)).await {
                                return;
                            }
                            continue;
                        }
                    }
                }
            };
            failures = 0;
            if down {
                tracing::info!(server = %self.shared.key, event_type = %self.subscription.name, "events/stream open again");
                if !self.hand(StreamItem::Restored).await {
                    let Open { handle, .. } = current;
                    cancel(&self.shared.events, handle, "the host is gone").await;
                    return;
                }
            }
            let opened_at = Instant::now();
            let reason = match self.serve(current).await {
                Outcome::Stop => return,
                Outcome::Lost(reason) => reason,
            };
            if self.peer.is_transport_closed() {
                self.disconnected().await;
                return;
            }
            tracing::info!(server = %self.shared.key, event_type = %self.subscription.name, "events/stream lost: {reason}; opening it again from the last cursor");
            down = true;
            if !self.hand(StreamItem::Lost { reason }).await {
                return;
            }
            short_lived = if opened_at.elapsed() >= STEADY {
                1
            } else {
                short_lived.saturating_add(1)
            };
            if !self.pause(short_lived).await {
                return;
            }
        }
    }

    /// Serves one open stream until it breaks or the subscription is over.
    async fn serve(&mut self, current: Open) -> Outcome {
        let Open {
            mut handle,
            mut rx,
            first,
        } = current;
        let shared = Arc::clone(&self.shared);
        let routes = &shared.events;
        let mut pending = Some(first);
        loop {
            let pushed = match pending.take() {
                Some(pushed) => Some(pushed),
                None => {
                    tokio::select! {
                        biased;
                        () = self.cancel.cancelled() => {
                            cancel(routes, handle, "unsubscribed").await;
                            return Outcome::Stop;
                        }
                        pushed = rx.recv() => pushed,
                        answer = &mut handle.rx => {
                            routes.forget(&handle.id);
                            return Outcome::Lost(match answer {
                                Ok(Ok(_)) => "the server ended it".to_owned(),
                                Ok(Err(e)) => format!("its request failed: {e}"),
                                Err(_) => "its request was dropped".to_owned(),
                            });
                        }
                        () = tokio::time::sleep(self.stall) => {
                            cancel(routes, handle, "silent for longer than the stall").await;
                            return Outcome::Lost(format!(
                                "it sent neither event nor heartbeat for {}s",
                                self.stall.as_secs_f64()
                            ));
                        }
                    }
                }
            };
            let Some(pushed) = pushed else {
                cancel(routes, handle, "fell behind").await;
                return Outcome::Lost(format!(
                    "the client fell more than {ROUTE_BUFFER} notifications behind"
                ));
            };
            if let Taken::Stop = self.take(pushed).await {
                cancel(routes, handle, "the subscription ended").await;
                return Outcome::Stop;
            }
        }
    }

    /// Handles one notification of the stream.
    async fn take(&mut self, pushed: Pushed) -> Taken {
        let kind = pushed
            .method
            .strip_prefix(NOTIFICATION_PREFIX)
            .unwrap_or_default();
        let params = pushed.params;
        let cursor = match params.get("cursor") {
            Some(Value::String(c)) => Some(Some(c.clone())),
            Some(Value::Null) => Some(None),
            _ => None,
        };
        let handed = match kind {
            "event" => match serde_json::from_value::<EventOccurrence>(params.clone()) {
                Ok(event) => {
                    if self.seen.contains(&event.event_id) {
                        self.move_cursor(cursor.clone()).await
                    } else {
                        if self.seen.len() == SEEN_KEPT {
                            self.seen.pop_front();
                        }
                        self.seen.push_back(event.event_id.clone());
                        self.hand_at(StreamItem::Event(event), cursor.clone()).await
                    }
                }
                Err(e) => {
                    tracing::warn!(server = %self.shared.key, event_type = %self.subscription.name, "an unreadable event was dropped: {e}");
                    true
                }
            },
            "active" => {
                if params.get("truncated") == Some(&Value::Bool(true)) {
                    tracing::info!(server = %self.shared.key, event_type = %self.subscription.name, "events/stream: the server skipped events (truncated)");
                    let at = cursor.clone().flatten();
                    self.hand_at(StreamItem::Truncated { cursor: at }, cursor.clone())
                        .await
                } else {
                    self.move_cursor(cursor.clone()).await
                }
            }
            "error" => {
                let error = params.get("error").unwrap_or(&Value::Null);
                let item = StreamItem::ServerError {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                };
                self.hand(item).await
            }
            "terminated" => {
                let error = params.get("error").unwrap_or(&Value::Null);
                let item = StreamItem::Ended(EventError::Terminated {
                    server: self.shared.key.clone(),
                    event_type: self.subscription.name.as_str().into(),
                    code: error
                        .get("code")
                        .and_then(Value::as_i64)
                        .and_then(|c| i32::try_from(c).ok())
                        .unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .into(),
                });
                self.hand(item).await;
                return Taken::Stop;
            }
            // Heartbeats carry only the cursor; other kinds are not known yet.
            _ => self.move_cursor(cursor.clone()).await,
        };
        if !handed {
            return Taken::Stop;
        }
        if let Some(cursor) = cursor {
            self.cursor = cursor;
        }
        Taken::Go
    }

    /// Hands `item` to the host; `false` once the host dropped the stream.
    async fn hand(&self, item: StreamItem) -> bool {
        self.send(Feed::Item(item, None)).await
    }

    /// Hands `item` to the host with the cursor after it (when it moves it).
    async fn hand_at(&self, item: StreamItem, cursor: Option<Option<String>>) -> bool {
        self.send(Feed::Item(item, cursor)).await
    }

    /// Tells the host's stream of a new cursor (a heartbeat's), if any.
    async fn move_cursor(&self, cursor: Option<Option<String>>) -> bool {
        match cursor {
            Some(cursor) if cursor != self.cursor => self.send(Feed::Cursor(cursor)).await,
            _ => true,
        }
    }

    async fn send(&self, feed: Feed) -> bool {
        tokio::select! {
            () = self.cancel.cancelled() => false,
            sent = self.feed.send(feed) => sent.is_ok(),
        }
    }

    async fn disconnected(&self) {
        let error = EventError::Request {
            server: self.shared.key.clone(),
            what: format!("streaming event type `{}`", self.subscription.name).into(),
            source: RequestError::Disconnected {
                detail: "the connection to the server is gone".to_owned(),
            },
        };
        self.hand(StreamItem::Ended(error)).await;
    }

    /// Waits before the `attempt`th retry; `false` when cancelled meanwhile.
    async fn pause(&self, attempt: u32) -> bool {
        let delay = mcp_pool::Backoff::new(RETRY_BASE, RETRY_MAX).delay(attempt.saturating_sub(1));
        tokio::select! {
            () = self.cancel.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }
}
