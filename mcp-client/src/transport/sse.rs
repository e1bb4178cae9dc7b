//! The legacy HTTP+SSE transport of MCP 2024-11-05, as an rmcp transport.
//!
//! A `GET` opens an event stream whose first `endpoint` event names (relative to the
//! stream's URL) where the client `POST`s its JSON-RPC messages; the server's messages
//! arrive as `message` events on the stream. rmcp does the protocol: this module only moves
//! messages, as an rmcp transport [`Worker`] ([`SseTransport`]).
//!
//! - Requests go through [`McpHttpClient`]: the same credentials as streamable HTTP (a token
//!   per request, one refresh after a 401, one step-up after a 403), headers, redirect
//!   policy and User-Agent; events are bounded as rmcp bounds them (16 MiB).
//! - The endpoint must be on the event stream's origin (scheme, host, port): messages and
//!   credentials never go to another party.
//! - `POST`s are sent one at a time, in order: the server reads them as one ordered
//!   session (a request before `notifications/initialized` is an error to some servers).
//! - A dropped stream is reopened up to [`RECONNECT_TRIES`] times, [`RECONNECT_BASE`]
//!   doubling up to [`RECONNECT_MAX`] apart, with `Last-Event-ID`. A server that announces
//!   the same endpoint again kept the session and the connection goes on; a new endpoint, or
//!   a `POST` answered 404, means the server forgot the session. A connection that cannot go
//!   on ends and says why ([`ConnectionShared::report_transport_end`]): the set marks the
//!   server failed (reason `transport`) at once and the pool starts it again at its next
//!   use.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, StatusCode, header};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpClient,
    StreamableHttpError,
};
use rmcp::transport::worker::{
    Worker, WorkerContext, WorkerQuitReason, WorkerSendRequest, WorkerTransport,
};
use sse_stream::{Error as SseError, Sse};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::rmcp_errors::error_chain;
use crate::rmcp_errors::{HttpFailure, http_failure};
use crate::state::ConnectionShared;
use crate::transport::http_client::McpHttpClient;

type HttpError = StreamableHttpError<reqwest::Error>;
type Events = BoxStream<'static, Result<Sse, SseError>>;

/// The rmcp transport of one legacy SSE connection.
pub(crate) type SseTransport = WorkerTransport<SseWorker>;

/// Reconnects of a dropped event stream before the connection is given up.
pub(crate) const RECONNECT_TRIES: u32 = 3;
/// The wait before the first reconnect; it doubles for each further one.
pub(crate) const RECONNECT_BASE: Duration = Duration::from_millis(250);
/// The longest wait between reconnects.
pub(crate) const RECONNECT_MAX: Duration = Duration::from_secs(2);
/// How long a reopened stream may take to announce its endpoint. (At startup the startup
/// timeout bounds the whole connection instead.)
pub(crate) const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest JSON body read from a `POST` answer (as rmcp's limit for streamable HTTP).
const MAX_JSON_BODY: usize = 16 * 1024 * 1024;
/// How much of an error body is kept for the message.
const MAX_ERROR_BODY: usize = 4 * 1024;

/// The name of the event that announces the message endpoint.
const ENDPOINT_EVENT: &str = "endpoint";

/// Where the connection goes and how requests are made.
#[derive(Clone)]
struct Link {
    client: McpHttpClient,
    /// The event stream's URL (the configured one).
    url: reqwest::Url,
    headers: HashMap<HeaderName, HeaderValue>,
}

/// Opens the event stream at `url` and waits for its endpoint; the returned transport
/// then carries the connection. Errors are streamable HTTP's (so the set classifies both
/// transports alike): 401 `AuthRequired`, connect errors, statuses, and
/// `UnexpectedServerResponse` for an endpoint that cannot be used.
///
/// # Cancel safety
/// Cancel-safe: nothing outlives the future until it returns the transport.
pub(crate) async fn open(
    client: McpHttpClient,
    url: &str,
    headers: HashMap<HeaderName, HeaderValue>,
    shared: Arc<ConnectionShared>,
) -> Result<SseTransport, HttpError> {
    let url = reqwest::Url::parse(url).map_err(|e| {
        unexpected(format!(
            "`{}` is not a valid URL: {e}",
            mcp_key::redact_url(url)
        ))
    })?;
    let link = Link {
        client,
        url,
        headers,
    };
    let mut last_event_id = None;
    let (events, endpoint) = link.reopen(&mut last_event_id).await?;
    tracing::debug!(server = %shared.key, endpoint = %mcp_key::redact_url(endpoint.as_str()), "SSE event stream open");
    let worker = SseWorker {
        link,
        events,
        endpoint,
        last_event_id,
        shared,
    };
    Ok(WorkerTransport::spawn(worker))
}

impl Link {
    /// Opens the event stream (with `Last-Event-ID` when one was seen) and reads it up to
    /// the `endpoint` event.
    async fn reopen(
        &self,
        last_event_id: &mut Option<String>,
    ) -> Result<(Events, reqwest::Url), HttpError> {
        let mut events = self
            .client
            .get_stream(
                Arc::from(self.url.as_str()),
                None,
                last_event_id.clone(),
                None,
                self.headers.clone(),
            )
            .await?;
        loop {
            let event = match events.next().await {
                Some(Ok(event)) => event,
                Some(Err(e)) => return Err(StreamableHttpError::Sse(e)),
                None => return Err(StreamableHttpError::UnexpectedEndOfStream),
            };
            if let Some(id) = event.id {
                *last_event_id = Some(id);
            }
            if event.event.as_deref() == Some(ENDPOINT_EVENT) {
                let endpoint = endpoint_url(&self.url, event.data.as_deref().unwrap_or(""))?;
                return Ok((events, endpoint));
            }
            // Nothing can be addressed to this client before it has a session.
            tracing::debug!(event = ?event.event, "SSE event before the endpoint, ignored");
        }
    }

    /// `POST`s one message to the endpoint. A JSON answer that is a JSON-RPC message is
    /// returned (the transport expects `202 Accepted`, but a reply in the body is used).
    async fn post(
        &self,
        endpoint: &reqwest::Url,
        message: &ClientJsonRpcMessage,
    ) -> Result<Option<ServerJsonRpcMessage>, HttpError> {
        let body = serde_json::to_vec(message)?;
        self.client
            .with_auth("POST", endpoint.as_str(), |auth| {
                let mut request = self
                    .client
                    .http()
                    .post(endpoint.clone())
                    .header(header::CONTENT_TYPE, "application/json")
                    .header(header::ACCEPT, "application/json, text/event-stream")
                    .body(body.clone());
                for (name, value) in self.headers.iter().chain(&auth.headers) {
                    request = request.header(name.clone(), value.clone());
                }
                if let Some(token) = auth.bearer {
                    request = request.bearer_auth(token);
                }
                async move {
                    let response = request.send().await.map_err(StreamableHttpError::Client)?;
                    post_answer(response).await
                }
            })
            .await
    }
}

/// The endpoint announced by `data`, resolved against the stream's URL; refused on
/// another origin.
fn endpoint_url(stream: &reqwest::Url, data: &str) -> Result<reqwest::Url, HttpError> {
    let data = data.trim();
    let endpoint = stream.join(data).map_err(|e| {
        unexpected(format!(
            "the SSE `endpoint` event does not name a URL ({e}): `{}`",
            mcp_key::redact_url(data)
        ))
    })?;
    if endpoint.origin() != stream.origin() {
        return Err(unexpected(format!(
            "the SSE `endpoint` event names {} on another origin than the event stream ({}); \
             refusing to send messages or credentials there",
            mcp_key::redact_url(endpoint.as_str()),
            stream.origin().ascii_serialization()
        )));
    }
    Ok(endpoint)
}

/// Classifies the answer to a `POST`.
async fn post_answer(
    mut response: reqwest::Response,
) -> Result<Option<ServerJsonRpcMessage>, HttpError> {
    let status = response.status();
    let challenge = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match status {
        StatusCode::UNAUTHORIZED => {
            return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                challenge.unwrap_or_default(),
            )));
        }
        StatusCode::FORBIDDEN => {
            if let Some(challenge) = challenge.filter(|c| c.contains("insufficient_scope")) {
                let scope = required_scope(&challenge);
                return Err(StreamableHttpError::InsufficientScope(
                    InsufficientScopeError::new(challenge, scope),
                ));
            }
        }
        // The session this endpoint names is gone (a restart, or the stream it belonged to
        // was closed).
        StatusCode::NOT_FOUND => return Err(StreamableHttpError::SessionExpired),
        _ => {}
    }
    if status.is_success() {
        let json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/json"));
        if !json {
            return Ok(None);
        }
        let body = read_body(&mut response, MAX_JSON_BODY, false).await?;
        return Ok(serde_json::from_slice(&body).ok());
    }
    if status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error()
    {
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        return Err(HttpStatusError::new(status.as_u16(), retry_after).into());
    }
    let body = read_body(&mut response, MAX_ERROR_BODY, true).await?;
    Err(unexpected(format!(
        "HTTP {status}: {}",
        String::from_utf8_lossy(&body).trim()
    )))
}

/// The `scope` parameter of a `WWW-Authenticate` challenge.
fn required_scope(challenge: &str) -> Option<String> {
    let start = challenge.find("scope=\"")? + "scope=\"".len();
    let len = challenge[start..].find('"')?;
    Some(challenge[start..start + len].to_owned())
}

/// Reads at most `max` bytes of a body: cut there when `truncate`, else an error.
async fn read_body(
    response: &mut reqwest::Response,
    max: usize,
    truncate: bool,
) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if body.len() + chunk.len() > max {
            if truncate {
                body.extend_from_slice(&chunk[..max - body.len()]);
                return Ok(body);
            }
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn unexpected(text: String) -> HttpError {
    StreamableHttpError::UnexpectedServerResponse(text.into())
}

/// Why the worker stops.
enum Stop {
    /// Our side closed the connection.
    Cancelled,
    /// rmcp's side of the transport is gone.
    Handler,
    /// The connection cannot go on, with why.
    End(String),
}

/// The transport worker of one connection: reads the event stream (reconnecting it within
/// the bounds) while a task of its own sends the `POST`s.
pub(crate) struct SseWorker {
    link: Link,
    events: Events,
    endpoint: reqwest::Url,
    last_event_id: Option<String>,
    shared: Arc<ConnectionShared>,
}

impl Worker for SseWorker {
    type Error = HttpError;
    type Role = RoleClient;

    fn err_closed() -> Self::Error {
        StreamableHttpError::TransportChannelClosed
    }

    fn err_join(e: tokio::task::JoinError) -> Self::Error {
        StreamableHttpError::TokioJoinError(e)
    }

    async fn run(mut self, cx: WorkerContext<Self>) -> Result<(), WorkerQuitReason<Self::Error>> {
        let WorkerContext {
            to_handler_tx,
            from_handler_rx,
            cancellation_token,
            ..
        } = cx;
        let (lost_tx, mut lost_rx) = oneshot::channel();
        let _poster = AbortOnDropHandle::new(tokio::spawn(post_in_order(
            self.link.clone(),
            self.endpoint.clone(),
            from_handler_rx,
            to_handler_tx.clone(),
            lost_tx,
        )));
        let stop = loop {
            let cause = tokio::select! {
                () = cancellation_token.cancelled() => break Stop::Cancelled,
                lost = &mut lost_rx => match lost {
                    Ok(why) => break Stop::End(why),
                    // The sender ends only when rmcp's side is gone.
                    Err(_) => break Stop::Handler,
                },
                event = self.events.next() => match event {
                    Some(Ok(event)) => {
                        match self.on_event(event, &to_handler_tx, &cancellation_token).await {
                            Ok(()) => continue,
                            Err(stop) => break stop,
                        }
                    }
                    Some(Err(e)) => e.to_string(),
                    None => "the server closed it".to_owned(),
                },
            };
            if let Err(stop) = self.reconnect(&cancellation_token, &cause).await {
                break stop;
            }
        };
        match stop {
            Stop::Cancelled => Err(WorkerQuitReason::Cancelled),
            Stop::Handler => Err(WorkerQuitReason::HandlerTerminated),
            Stop::End(why) => {
                // Ending the worker closes rmcp's side: calls in flight fail as
                // disconnected, and the set sees the connection dead.
                self.shared.report_transport_end(why);
                Ok(())
            }
        }
    }
}

impl SseWorker {
    /// Hands a `message` event to rmcp; an `endpoint` event naming another endpoint means
    /// the session moved; other events are ignored.
    async fn on_event(
        &mut self,
        event: Sse,
        to_handler: &mpsc::Sender<ServerJsonRpcMessage>,
        cancel: &CancellationToken,
    ) -> Result<(), Stop> {
        if let Some(id) = event.id {
            self.last_event_id = Some(id);
        }
        match event.event.as_deref() {
            None | Some("message") => {
                let Some(data) = event.data else {
                    return Ok(());
                };
                match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                    // rmcp stops reading before it closes the transport: a full channel
                    // must not hold up the close.
                    Ok(message) => tokio::select! {
                        () = cancel.cancelled() => Err(Stop::Cancelled),
                        sent = to_handler.send(message) => sent.map_err(|_| Stop::Handler),
                    },
                    Err(e) => {
                        self.shared.report_reply_fault(format!(
                            "an SSE message event that is not a JSON-RPC message: {e}"
                        ));
                        Ok(())
                    }
                }
            }
            Some(ENDPOINT_EVENT) => {
                match endpoint_url(&self.link.url, event.data.as_deref().unwrap_or("")) {
                    Ok(endpoint) if endpoint == self.endpoint => Ok(()),
                    Ok(endpoint) => Err(Stop::End(format!(
                        "the server moved the SSE session to another endpoint ({}); the \
                         session this connection initialized is gone",
                        mcp_key::redact_url(endpoint.as_str())
                    ))),
                    Err(e) => Err(Stop::End(error_chain(&e))),
                }
            }
            Some(other) => {
                tracing::debug!(server = %self.shared.key, event = other, "unknown SSE event ignored");
                Ok(())
            }
        }
    }

    /// Reopens a dropped event stream within the bounds. `Ok` when the server kept the
    /// session (it announced the same endpoint again).
    async fn reconnect(&mut self, cancel: &CancellationToken, cause: &str) -> Result<(), Stop> {
        let cause = mcp_key::redact_urls(cause).into_owned();
        let mut last_failure = String::new();
        for attempt in 0..RECONNECT_TRIES {
            let delay = mcp_pool::Backoff::new(RECONNECT_BASE, RECONNECT_MAX).delay(attempt);
            tracing::info!(
                server = %self.shared.key,
                attempt = attempt + 1,
                of = RECONNECT_TRIES,
                delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                "the SSE event stream dropped ({cause}); reconnecting"
            );
            let mut last_event_id = self.last_event_id.clone();
            let reopened = tokio::select! {
                () = cancel.cancelled() => return Err(Stop::Cancelled),
                r = async {
                    tokio::time::sleep(delay).await;
                    tokio::time::timeout(ENDPOINT_TIMEOUT, self.link.reopen(&mut last_event_id)).await
                } => r,
            };
            match reopened {
                Ok(Ok((events, endpoint))) if endpoint == self.endpoint => {
                    tracing::info!(server = %self.shared.key, "the SSE event stream is back; the server kept the session");
                    self.events = events;
                    self.last_event_id = last_event_id;
                    return Ok(());
                }
                Ok(Ok((_, endpoint))) => {
                    return Err(Stop::End(format!(
                        "the SSE event stream dropped ({cause}) and the server answered the \
                         reconnect with a new session ({}): it no longer knows the session \
                         this connection initialized",
                        mcp_key::redact_url(endpoint.as_str())
                    )));
                }
                Ok(Err(e)) if worth_retrying(&e) => last_failure = error_chain(&e),
                Ok(Err(e)) => {
                    return Err(Stop::End(format!(
                        "the SSE event stream dropped ({cause}) and reopening it failed: {}",
                        error_chain(&e)
                    )));
                }
                Err(_) => {
                    last_failure =
                        format!("no `endpoint` event within {}s", ENDPOINT_TIMEOUT.as_secs());
                }
            }
        }
        Err(Stop::End(format!(
            "the SSE event stream dropped ({cause}) and {RECONNECT_TRIES} reconnects failed \
             (last: {last_failure})"
        )))
    }
}

/// Whether reopening the stream may work on another try: connection failures, transient
/// statuses and streams that broke before their endpoint; not a 401 or a refused endpoint.
fn worth_retrying(e: &HttpError) -> bool {
    matches!(
        e,
        StreamableHttpError::Sse(_) | StreamableHttpError::UnexpectedEndOfStream
    ) || http_failure(e) == HttpFailure::Transient
}

/// Sends the messages rmcp hands over, one at a time and in order. A `POST` answered 404
/// means the server forgot the session: reported on `lost`, and no more are sent.
async fn post_in_order(
    link: Link,
    endpoint: reqwest::Url,
    mut from_handler: mpsc::Receiver<WorkerSendRequest<SseWorker>>,
    to_handler: mpsc::Sender<ServerJsonRpcMessage>,
    lost: oneshot::Sender<String>,
) {
    while let Some(request) = from_handler.recv().await {
        let WorkerSendRequest {
            message, responder, ..
        } = request;
        let result = match link.post(&endpoint, &message).await {
            Ok(Some(reply)) => {
                if to_handler.send(reply).await.is_err() {
                    return;
                }
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(StreamableHttpError::SessionExpired) => {
                let _ = responder.send(Err(StreamableHttpError::SessionExpired));
                let _ = lost.send(
                    "the server no longer knows the SSE session (HTTP 404 on a POST); did it \
                     restart?"
                        .to_owned(),
                );
                return;
            }
            Err(e) => Err(e),
        };
        let _ = responder.send(result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> reqwest::Url {
        reqwest::Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn endpoints_resolve_against_the_stream_url_on_its_origin_only() {
        let stream = url("http://127.0.0.1:8000/mcp/sse?team=a");
        for (data, expected) in [
            (
                "/messages/?session_id=1",
                "http://127.0.0.1:8000/messages/?session_id=1",
            ),
            ("messages?s=2", "http://127.0.0.1:8000/mcp/messages?s=2"),
            (
                " http://127.0.0.1:8000/m?s=3\n",
                "http://127.0.0.1:8000/m?s=3",
            ),
        ] {
            let resolved = endpoint_url(&stream, data).map(|u| u.to_string());
            assert_eq!(resolved.ok().as_deref(), Some(expected), "{data}");
        }
        for data in [
            "http://127.0.0.1:8001/messages",
            "https://127.0.0.1:8000/messages",
            "http://evil.example/messages",
            "//evil.example/messages",
            "javascript:alert(1)",
        ] {
            let refused = endpoint_url(&stream, data);
            assert!(
                matches!(&refused, Err(StreamableHttpError::UnexpectedServerResponse(m)) if m.contains("another origin")),
                "{data}: {:?}",
                refused.map(|u| u.to_string())
            );
        }
    }

    #[test]
    fn the_required_scope_is_read_from_the_challenge() {
        assert_eq!(
            required_scope(r#"Bearer error="insufficient_scope", scope="files.write""#),
            Some("files.write".to_owned())
        );
        assert_eq!(required_scope("Bearer error=\"insufficient_scope\""), None);
    }
}
