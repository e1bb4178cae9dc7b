//! The HTTP client under rmcp's streamable-HTTP transport, for every HTTP server.
//!
//! It wraps reqwest's client (rmcp's own `StreamableHttpClient`) with two jobs rmcp leaves
//! to us:
//! - **Credentials.** With an [`AuthHeaderProvider`], every request asks it for the bearer
//!   token; after a 401 it asks once for a fresh token and retries, after a 403
//!   `insufficient_scope` once for a step-up. Token refresh is invisible to the host.
//! - **Replies that can never complete their request.** rmcp forwards a JSON reply of a POST
//!   to the request table by its id. A server that lost our session (a restart, a deploy)
//!   often answers `400` with a JSON-RPC error *without* an id (the TypeScript SDK's servers
//!   do), which matches no pending request: the call would wait for its whole timeout.
//!   Such a reply to a request that carried a session id is a lost session, returned to rmcp
//!   as [`StreamableHttpError::SessionExpired`] so it re-initializes once and retries the
//!   request once (as on a 404); without a session, or for a reply whose id is another
//!   request's, the request fails at once with what the server said.
//!
//! Lost sessions in a short window are a crash loop: after [`LOSS_BURST`] distinct sessions
//! lost within [`LOSS_WINDOW`], requests fail at once for a backoff (doubling from
//! [`LOSS_BACKOFF_BASE`] up to [`LOSS_BACKOFF_MAX`]) instead of re-initializing again.
//!
//! A `subscriptions/listen` request (MCP 2026-07-28) is sent with a reqwest client of its
//! own whose read timeout is the listen stall ([`ListenWatch`]): a listen stream that
//! stays open but sends nothing at all for that long ends with an error, which the listen's
//! supervisor (`crate::listen`) treats like any other end. The watchdog has to watch bytes:
//! SSE comment lines (the keep-alives servers send on idle streams) never surface as events
//! of the parsed stream (`sse-stream` drops them while parsing, inside rmcp's reqwest
//! client), so above the bytes a quiet but healthy stream cannot be told from a dead one.
//!
//! A `notifications/initialized` after the handshake's is rmcp opening a new session for
//! one the server lost: it is told (`with_renewal_note`), as the new session has none of
//! the old one's resource subscriptions.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use mcp_key::{McpServerKey, Secret};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse};
use tokio::time::Instant;

use crate::settings::auth::{AuthHeaderProvider, CredentialsError};
use crate::transport::http_call_reply::{CALL_REPLY_HOLD, CallStream, read_call_stream};
use crate::transport::http_dpop::{NonceSlot, Presented, fetch_nonce, present};

type HttpError = StreamableHttpError<reqwest::Error>;

/// Distinct lost sessions within [`LOSS_WINDOW`] that make a crash loop.
pub(crate) const LOSS_BURST: usize = 3;
/// The window in which lost sessions are counted.
pub(crate) const LOSS_WINDOW: Duration = Duration::from_secs(30);
/// The first backoff of a session-loss crash loop.
pub(crate) const LOSS_BACKOFF_BASE: Duration = Duration::from_secs(1);
/// The longest backoff of a session-loss crash loop.
pub(crate) const LOSS_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Lost sessions of one connection, for crash-loop backoff.
#[derive(Debug, Default)]
struct Losses {
    /// When each recently lost session was lost (distinct session ids).
    recent: VecDeque<(Arc<str>, Instant)>,
    /// Backoffs imposed in a row; reset when a window passes without a loss.
    loops: u32,
    /// No re-initialization before this instant.
    backoff_until: Option<Instant>,
}

impl Losses {
    /// Records that `session` was lost at `now`. Returns the backoff to impose, if this loss
    /// completes a burst.
    fn record(&mut self, session: &Arc<str>, now: Instant) -> Option<Duration> {
        while self
            .recent
            .front()
            .is_some_and(|(_, at)| now.duration_since(*at) > LOSS_WINDOW)
        {
            self.recent.pop_front();
        }
        if self.recent.is_empty() {
            self.loops = 0;
        }
        if self.recent.iter().any(|(id, _)| id == session) {
            // Concurrent requests of one session report the same loss.
            return None;
        }
        self.recent.push_back((Arc::clone(session), now));
        if self.recent.len() < LOSS_BURST {
            return None;
        }
        let backoff = mcp_pool::Backoff::new(LOSS_BACKOFF_BASE, LOSS_BACKOFF_MAX).delay(self.loops);
        self.loops = self.loops.saturating_add(1);
        self.backoff_until = Some(now + backoff);
        Some(backoff)
    }

    /// The time left of a running backoff.
    fn backoff_left(&self, now: Instant) -> Option<Duration> {
        self.backoff_until
            .filter(|until| *until > now)
            .map(|until| until - now)
    }
}

/// reqwest plus an optional credential provider and the reply checks above.
#[derive(Clone)]
pub(crate) struct McpHttpClient {
    inner: reqwest::Client,
    provider: Option<Arc<dyn AuthHeaderProvider>>,
    server: McpServerKey,
    /// Why the provider could not fix the last 401/403, so startup can report
    /// `relogin_required` (a rejected refresh) rather than a plain `login_required`.
    last_failure: Arc<Mutex<Option<CredentialsError>>>,
    losses: Arc<Mutex<Losses>>,
    /// Plain http to a non-loopback host: a token is never sent.
    tokens_forbidden: bool,
    /// The server's latest DPoP nonce.
    dpop_nonce: NonceSlot,
    /// Set once the connection speaks MCP 2026-07-28, which has no `GET` stream and no
    /// resumption: a `GET` is then refused here, without a request.
    modern: Arc<AtomicBool>,
    /// Held while a 401 is answered ([`McpHttpClient::fresh_after_401`]).
    refresh_turn: Arc<tokio::sync::Mutex<()>>,
    /// Sees the data of each event of a response stream (what rmcp does not keep).
    tap: Option<crate::tasks::MessageTap>,
    /// How `subscriptions/listen` requests are sent and watched for silence.
    listen: Option<ListenWatch>,
    /// Told when rmcp opened a new session after the server lost the old one.
    renewed: Option<Arc<dyn Fn() + Send + Sync>>,
    /// `notifications/initialized` delivered so far: the first completes the handshake,
    /// each later one a session opened again (`reinit_on_expired_session`).
    initialized: Arc<std::sync::atomic::AtomicU64>,
    /// Where the session id a request is sent with is kept (for `mcp.session.id`).
    session: Option<crate::telemetry::SessionSlot>,
}

/// Called with the id of a listen request whose stream was ended for silence.
pub(crate) type StallNote = Arc<dyn Fn(RequestId) + Send + Sync>;

/// The stall watchdog of `subscriptions/listen` streams: the reqwest client they are sent
/// with, whose read timeout (reset by every byte of the body, keep-alive comments
/// included) is the stall, and who is told of a stall.
#[derive(Clone)]
pub(crate) struct ListenWatch {
    pub(crate) client: reqwest::Client,
    pub(crate) stall: Duration,
    pub(crate) note: StallNote,
}

/// The error a stalled listen stream ends with.
#[derive(Debug, thiserror::Error)]
#[error("the subscriptions/listen stream sent nothing (no event, no keep-alive) for {}s", .0.as_secs_f64())]
struct ListenStalled(Duration);

/// Whether `error` (of a listen stream read with [`ListenWatch::client`]) is its read
/// timeout. rmcp wraps reqwest's error transparently, so its source is reqwest's private
/// `TimedOut`, known only by its text.
fn is_stall(error: &SseError) -> bool {
    let SseError::Body(body) = error else {
        return false;
    };
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(body.as_ref());
    while let Some(e) = current {
        if e.downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_timeout)
            || e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
            || e.to_string() == "operation timed out"
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// Whether `message` is `notifications/initialized`, which completes a session.
fn is_initialized(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        JsonRpcMessage::Notification(n)
            if matches!(n.notification, rmcp::model::ClientNotification::InitializedNotification(_))
    )
}

/// Whether `message` opens a `subscriptions/listen` stream.
fn is_listen(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(r)
            if matches!(r.request, rmcp::model::ClientRequest::SubscriptionsListenRequest(_))
    )
}

impl McpHttpClient {
    pub(crate) fn new(
        inner: reqwest::Client,
        provider: Option<Arc<dyn AuthHeaderProvider>>,
        server: McpServerKey,
    ) -> Self {
        Self {
            inner,
            provider,
            server,
            last_failure: Arc::default(),
            losses: Arc::default(),
            tokens_forbidden: false,
            dpop_nonce: NonceSlot::default(),
            modern: Arc::default(),
            refresh_turn: Arc::default(),
            tap: None,
            listen: None,
            renewed: None,
            initialized: Arc::default(),
            session: None,
        }
    }

    /// Keeps the id of the session each request is sent with in `slot`.
    pub(crate) fn with_session_slot(mut self, slot: crate::telemetry::SessionSlot) -> Self {
        self.session = Some(slot);
        self
    }

    /// Tells `renewed` each time rmcp opened a new session after the server lost the old
    /// one (seen as a `notifications/initialized` after the handshake's).
    pub(crate) fn with_renewal_note(mut self, renewed: Arc<dyn Fn() + Send + Sync>) -> Self {
        self.renewed = Some(renewed);
        self
    }

    /// Sends `subscriptions/listen` requests through `watch`'s client, and ends their
    /// streams once silent for its stall.
    pub(crate) fn with_listen_watch(mut self, watch: ListenWatch) -> Self {
        self.listen = Some(watch);
        self
    }

    /// Hands the data of each event of a response stream to `tap`.
    pub(crate) fn with_tap(mut self, tap: crate::tasks::MessageTap) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Shares the flag that says the connection speaks MCP 2026-07-28.
    pub(crate) fn with_modern_flag(mut self, modern: Arc<AtomicBool>) -> Self {
        self.modern = modern;
        self
    }

    /// Never send a token (the URL is plain http to a host that is not loopback).
    pub(crate) fn with_tokens_forbidden(mut self, forbidden: bool) -> Self {
        self.tokens_forbidden = forbidden;
        self
    }

    /// Shares `slot` for the server's DPoP nonce (with the other attempts of a startup).
    pub(crate) fn with_dpop_nonce(mut self, slot: NonceSlot) -> Self {
        self.dpop_nonce = slot;
        self
    }

    /// Why the provider last failed to supply credentials, if it did.
    pub(crate) fn last_failure(&self) -> Option<CredentialsError> {
        self.last_failure.lock().ok().and_then(|f| f.clone())
    }

    fn remember(&self, error: Option<CredentialsError>) {
        if let (Some(error), Ok(mut slot)) = (error, self.last_failure.lock()) {
            *slot = Some(error);
        }
    }

    fn unauthorized(detail: &str) -> HttpError {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(detail.to_owned()))
    }

    /// The reqwest client underneath (redirect policy, User-Agent), for requests this
    /// wrapper does not make itself (the legacy SSE transport's POSTs, under
    /// [`McpHttpClient::with_auth`]).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.inner
    }

    /// Runs `call` with the current token; after a 401 once more with a refreshed token,
    /// after a 403 `insufficient_scope` once more after a step-up. Without a provider,
    /// `call` runs once without a token. A DPoP-bound token goes with a fresh proof for
    /// `method` and `uri` on every attempt (see [`crate::transport::http_dpop`]).
    pub(crate) async fn with_auth<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Presented) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(provider) = &self.provider else {
            return call(Presented::none()).await;
        };
        let token = provider
            .authorization(&self.server)
            .await
            .map_err(|e| Self::unauthorized(&e.to_string()))?;
        if token.is_some() && self.tokens_forbidden {
            return Err(Self::unauthorized(
                "refusing to send a bearer token over plain http to a host that is not loopback",
            ));
        }
        let retry_token = match self
            .send(provider.as_ref(), token.as_ref(), method, uri, &call)
            .await
        {
            Err(StreamableHttpError::AuthRequired(challenge)) => {
                let fresh = self
                    .fresh_after_401(provider.as_ref(), token.as_ref(), &challenge)
                    .await;
                match fresh {
                    Ok(Some(fresh)) if Some(&fresh) != token.as_ref() => fresh,
                    other => {
                        self.remember(other.err());
                        return Err(StreamableHttpError::AuthRequired(challenge));
                    }
                }
            }
            Err(StreamableHttpError::InsufficientScope(challenge)) => {
                tracing::debug!(server = %self.server, "HTTP 403 insufficient_scope: stepping up once");
                let stepped = provider
                    .step_up(&self.server, &challenge.www_authenticate_header)
                    .await;
                match stepped {
                    Ok(Some(fresh)) => fresh,
                    other => {
                        self.remember(other.err());
                        return Err(StreamableHttpError::InsufficientScope(challenge));
                    }
                }
            }
            Ok(value) => {
                provider.request_succeeded(&self.server);
                return Ok(value);
            }
            Err(other) => return Err(other),
        };
        if self.tokens_forbidden {
            return Err(Self::unauthorized(
                "refusing to send a bearer token over plain http to a host that is not loopback",
            ));
        }
        let result = self
            .send(provider.as_ref(), Some(&retry_token), method, uri, &call)
            .await;
        if result.is_ok() {
            provider.request_succeeded(&self.server);
        }
        result
    }

    /// A token to retry with after `rejected` got a 401: the provider's current one if
    /// another request already refreshed it while this one was in flight, else one
    /// refresh. Refreshes of one connection take turns, so requests rejected together
    /// share a single refresh instead of each spending one (a provider may be able to
    /// refresh only once: a second refresh would fail the server as needing a login).
    async fn fresh_after_401(
        &self,
        provider: &dyn AuthHeaderProvider,
        rejected: Option<&Secret>,
        challenge: &AuthRequiredError,
    ) -> Result<Option<Secret>, CredentialsError> {
        let _turn = self.refresh_turn.lock().await;
        if let Ok(Some(current)) = provider.authorization(&self.server).await
            && Some(&current) != rejected
        {
            tracing::debug!(server = %self.server, "HTTP 401: another request refreshed the credentials; retrying with them");
            return Ok(Some(current));
        }
        tracing::debug!(server = %self.server, "HTTP 401: refreshing credentials once");
        provider
            .refresh_after_unauthorized(
                &self.server,
                rejected,
                Some(challenge.www_authenticate_header.as_str()),
            )
            .await
    }

    /// One attempt with `token`; for a DPoP-bound token that the server answers with
    /// `use_dpop_nonce`, once more with the server's nonce.
    async fn send<T, F, Fut>(
        &self,
        provider: &dyn AuthHeaderProvider,
        token: Option<&Secret>,
        method: &str,
        uri: &str,
        call: &F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Presented) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let presented = present(provider, &self.server, token, method, uri, &self.dpop_nonce)
            .await
            .map_err(|e| Self::unauthorized(&e.to_string()))?;
        let bound = presented.bound;
        match call(presented).await {
            Err(StreamableHttpError::AuthRequired(challenge))
                if bound && mcp_auth::is_nonce_challenge(&challenge.www_authenticate_header) =>
            {
                let Some(token) = token else {
                    return Err(StreamableHttpError::AuthRequired(challenge));
                };
                tracing::debug!(server = %self.server, "the server asked for a DPoP nonce; retrying once with it");
                if fetch_nonce(
                    &self.inner,
                    provider,
                    &self.server,
                    token,
                    uri,
                    &self.dpop_nonce,
                )
                .await
                .is_none()
                {
                    return Err(StreamableHttpError::AuthRequired(challenge));
                }
                let presented = present(
                    provider,
                    &self.server,
                    Some(token),
                    method,
                    uri,
                    &self.dpop_nonce,
                )
                .await
                .map_err(|e| Self::unauthorized(&e.to_string()))?;
                call(presented).await
            }
            other => other,
        }
    }

    /// Names the end of listen request `id`'s stream by its read timeout: a stall, told to
    /// [`ListenWatch::note`] and logged.
    fn watch_listen(
        &self,
        stream: BoxStream<'static, Result<Sse, SseError>>,
        watch: &ListenWatch,
        id: RequestId,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let (server, stall, note) = (self.server.clone(), watch.stall, Arc::clone(&watch.note));
        Box::pin(futures::StreamExt::map(stream, move |event| match event {
            Err(e) if is_stall(&e) => {
                tracing::info!(%server, request = %id, "the subscriptions/listen stream sent nothing for {}s: ending it as stalled", stall.as_secs_f64());
                note(id.clone());
                Err(SseError::Body(Box::new(ListenStalled(stall))))
            }
            other => other,
        }))
    }

    /// Turns a reply that cannot complete `request` into an error, and a lost session into
    /// `SessionExpired` (or, in a crash loop, into an error that says so).
    fn check_reply(
        &self,
        request: Option<&RequestId>,
        session: Option<&Arc<str>>,
        result: Result<StreamableHttpPostResponse, HttpError>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let lost = match (&result, request) {
            (Err(StreamableHttpError::SessionExpired), _) => true,
            (Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(error), _)), Some(id))
                if error.id.as_ref() != Some(id) =>
            {
                if session.is_none() {
                    return Err(unexpected(format!(
                        "the server answered request {id} with an error for no request (code {}): {}",
                        error.error.code.0, error.error.message
                    )));
                }
                tracing::debug!(
                    server = %self.server,
                    code = error.error.code.0,
                    message = %error.error.message,
                    "an error without the request's id in reply to a request with a session: the session is lost"
                );
                true
            }
            (Ok(StreamableHttpPostResponse::Json(reply, _)), Some(id)) if !answers(reply, id) => {
                return Err(unexpected(format!(
                    "the server's reply to request {id} is not its response ({})",
                    describe_reply(reply)
                )));
            }
            _ => false,
        };
        if !lost {
            return result;
        }
        let Some(session) = session else {
            return result;
        };
        let now = Instant::now();
        let Ok(mut losses) = self.losses.lock() else {
            return Err(StreamableHttpError::SessionExpired);
        };
        if let Some(backoff) = losses.record(session, now) {
            tracing::warn!(
                server = %self.server,
                backoff_ms = u64::try_from(backoff.as_millis()).unwrap_or(u64::MAX),
                "the server lost {LOSS_BURST} sessions within {}s; not re-initializing for a while",
                LOSS_WINDOW.as_secs()
            );
        }
        match losses.backoff_left(now) {
            Some(left) => Err(unexpected(format!(
                "the server keeps losing the session (restarting?): {LOSS_BURST} sessions lost within {}s; the next re-initialization is in {:.1}s",
                LOSS_WINDOW.as_secs(),
                left.as_secs_f64()
            ))),
            None => Err(StreamableHttpError::SessionExpired),
        }
    }
}

/// True when `reply` is the response or error of request `id`.
fn answers(reply: &ServerJsonRpcMessage, id: &RequestId) -> bool {
    match reply {
        JsonRpcMessage::Response(r) => &r.id == id,
        JsonRpcMessage::Error(e) => e.id.as_ref() == Some(id),
        _ => false,
    }
}

fn describe_reply(reply: &ServerJsonRpcMessage) -> String {
    match reply {
        JsonRpcMessage::Response(r) => format!("a response to request {}", r.id),
        JsonRpcMessage::Error(e) => match &e.id {
            Some(id) => format!("an error for request {id}"),
            None => "an error for no request".to_owned(),
        },
        JsonRpcMessage::Request(_) => "a request".to_owned(),
        JsonRpcMessage::Notification(_) => "a notification".to_owned(),
    }
}

fn unexpected(text: String) -> HttpError {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(text))
}

/// The id of `message` when it is a `tools/call` request.
fn call_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(r)
            if matches!(r.request, rmcp::model::ClientRequest::CallToolRequest(_)) =>
        {
            Some(r.id.clone())
        }
        _ => None,
    }
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

impl StreamableHttpClient for McpHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let request = request_id(&message);
        let call = call_id(&message);
        let initialized = is_initialized(&message);
        if let (Some(slot), Some(id)) = (&self.session, &session_id) {
            slot.set(id);
        }
        let listen = self.listen.as_ref().filter(|_| is_listen(&message));
        let client = listen.map_or(&self.inner, |watch| &watch.client);
        let result = if self.provider.is_none() {
            // One attempt, nothing to retry with: the message and headers are not copied.
            client
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id.clone(),
                    None,
                    custom_headers,
                    limits,
                )
                .await
        } else {
            self.with_auth("POST", &uri, |auth| {
                let mut headers = custom_headers.clone();
                headers.extend(auth.headers);
                client.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    auth.bearer,
                    headers,
                    limits,
                )
            })
            .await
        };
        let checked = self.check_reply(request.as_ref(), session_id.as_ref(), result);
        if checked.is_ok() && initialized {
            let before = self.initialized.fetch_add(1, Ordering::SeqCst);
            if let (true, Some(renewed)) = (before > 0, &self.renewed) {
                tracing::debug!(server = %self.server, "a new session replaces the one the server lost");
                renewed();
            }
        }
        let Ok(StreamableHttpPostResponse::Sse(mut stream, session)) = checked else {
            return checked;
        };
        if let Some(id) = &call {
            let tap = |data: &[u8]| {
                if let Some(tap) = &self.tap {
                    tap(data);
                }
            };
            match read_call_stream(stream, id, CALL_REPLY_HOLD, tap).await {
                CallStream::Reply(reply) => {
                    return Ok(StreamableHttpPostResponse::Json(reply, session));
                }
                CallStream::Stream(events) => stream = events,
            }
        }
        if let Some(tap) = &self.tap {
            let tap = Arc::clone(tap);
            stream = Box::pin(futures::StreamExt::inspect(stream, move |event| {
                if let Ok(Sse {
                    data: Some(data), ..
                }) = event
                {
                    tap(data.as_bytes());
                }
            }));
        }
        if let (Some(watch), Some(id)) = (listen, request) {
            stream = self.watch_listen(stream, watch, id);
        }
        Ok(StreamableHttpPostResponse::Sse(stream, session))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.with_auth("DELETE", &uri, |auth| {
            let mut headers = custom_headers.clone();
            headers.extend(auth.headers);
            self.inner
                .delete_session(uri.clone(), session_id.clone(), auth.bearer, headers)
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        // rmcp resumes a response stream whose server sent `retry` once whatever the retry
        // policy says; in the 2026 era the request is sent again instead (crate::transport::reissue).
        if self.modern.load(Ordering::Relaxed) {
            tracing::debug!(server = %self.server, "no stream resumption in MCP 2026-07-28");
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        self.with_auth("GET", &uri, |auth| {
            let mut headers = custom_headers.clone();
            headers.extend(auth.headers);
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                auth.bearer,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_session_lost_twice_counts_once() {
        let mut losses = Losses::default();
        let now = Instant::now();
        let a: Arc<str> = Arc::from("a");
        assert_eq!(losses.record(&a, now), None);
        assert_eq!(losses.record(&a, now), None);
        assert_eq!(losses.recent.len(), 1);
    }

    #[test]
    fn a_burst_of_lost_sessions_backs_off_doubling_up_to_the_cap() {
        let mut losses = Losses::default();
        let start = Instant::now();
        let mut backoffs = Vec::new();
        for i in 0..12u64 {
            let id: Arc<str> = Arc::from(format!("s{i}"));
            if let Some(b) = losses.record(&id, start + Duration::from_millis(i)) {
                backoffs.push(b);
            }
        }
        assert_eq!(backoffs.len(), 10, "every loss from the third on");
        assert_eq!(backoffs[0], LOSS_BACKOFF_BASE);
        assert_eq!(backoffs[1], LOSS_BACKOFF_BASE * 2);
        assert_eq!(
            *backoffs.last().unwrap_or(&Duration::ZERO),
            LOSS_BACKOFF_MAX
        );
        assert!(losses.backoff_left(start).is_some());
    }

    #[test]
    fn losses_spread_beyond_the_window_never_back_off() {
        let mut losses = Losses::default();
        let start = Instant::now();
        for i in 0..10u32 {
            let id: Arc<str> = Arc::from(format!("s{i}"));
            let at = start + (LOSS_WINDOW / 2 + Duration::from_secs(1)) * i;
            assert_eq!(losses.record(&id, at), None, "loss {i}");
        }
    }
}
