//! The legacy HTTP+SSE runner: [`SseFakeServer`], the fake server over the transport of
//! MCP 2024-11-05, with bearer enforcement, a dropped-stream fault and counters.
//!
//! A `GET` on [`SSE_PATH`] opens a session: the event stream's first event is `endpoint`
//! (`/messages?session_id=ID`), then every message of the server is a `message` event.
//! `POST`s of JSON-RPC messages to the endpoint are answered `202 Accepted`; a session the
//! server does not know is `404`. Each session is one rmcp server on a transport made of
//! two channels (the `POST`s in, the events out).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::Stream;
use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, ServiceExt, TxJsonRpcMessage};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::http::{DEFAULT_WWW_AUTHENTICATE, MAX_RECORDED_HEADERS};
use crate::record::lock;
use crate::serve::Running;
use crate::server::{CrashMode, FakeServer};
use crate::{Error, RecordedRequest, Scenario};

/// The path of the event stream.
pub const SSE_PATH: &str = "/sse";
/// The path of the message endpoint (`?session_id=ID` names the session).
pub const MESSAGES_PATH: &str = "/messages";

/// Options for [`SseFakeServer::start_with`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SseOptions {
    /// Address to bind (default `127.0.0.1:0`).
    pub bind: SocketAddr,
    /// Require `Authorization: Bearer <token>` on every request (default: no auth).
    pub bearer_token: Option<String>,
    /// Keep a session when its event stream drops, so a client that opens the stream
    /// again with `Last-Event-ID` (an event id of that session) gets the same endpoint and
    /// the messages sent meanwhile. Default `false`: like the SSE servers of the
    /// TypeScript and Python SDKs, a session ends with its stream.
    pub keep_sessions: bool,
    /// Announce this endpoint verbatim instead of the server's own (default: none), e.g.
    /// a URL on another origin, to test what a client does with it.
    pub endpoint: Option<String>,
}

impl Default for SseOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            bearer_token: None,
            keep_sessions: false,
            endpoint: None,
        }
    }
}

impl SseOptions {
    /// Defaults: loopback, any port, no auth, sessions end with their stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bind this address instead of `127.0.0.1:0`.
    #[must_use]
    pub fn with_bind(mut self, bind: SocketAddr) -> Self {
        self.bind = bind;
        self
    }

    /// Require this bearer token.
    #[must_use]
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Keep sessions across dropped streams (see [`SseOptions::keep_sessions`]).
    #[must_use]
    pub fn with_keep_sessions(mut self, keep: bool) -> Self {
        self.keep_sessions = keep;
        self
    }

    /// Announce `endpoint` instead of the server's own message endpoint.
    #[must_use]
    pub fn with_endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }
}

/// Request counters of an [`SseFakeServer`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseCounters {
    /// Event streams opened (`GET`s answered with a stream), resumed ones included.
    pub streams: u64,
    /// Event streams that ended (the client went away, [`SseFakeServer::drop_streams`], or
    /// the session or server ended). Equal to `streams` once no stream is open.
    pub streams_closed: u64,
    /// Sessions started (a stream that was not a resume).
    pub sessions: u64,
    /// Streams that resumed a kept session.
    pub resumed: u64,
    /// Sessions that ended (their stream dropped without [`SseOptions::keep_sessions`], or
    /// the server stopped).
    pub sessions_ended: u64,
    /// `POST`s to the message endpoint.
    pub posts: u64,
    /// `POST`s naming a session the server does not know (answered 404).
    pub unknown_session: u64,
    /// Requests refused with 401 for a missing or wrong bearer token.
    pub unauthorized: u64,
    /// Times [`SseFakeServer::drop_streams`] was called.
    pub drops: u64,
    /// `GET`s answered 503 while [`SseFakeServer::refuse_streams`] was on.
    pub refused: u64,
}

/// One session: the rmcp server's input, and its output while no stream carries it.
struct Session {
    id: String,
    to_server: mpsc::UnboundedSender<RxJsonRpcMessage<RoleServer>>,
    /// Taken by the stream that carries the session; put back when it drops (if kept).
    from_server: Mutex<Option<mpsc::UnboundedReceiver<TxJsonRpcMessage<RoleServer>>>>,
    next_event: AtomicU64,
    /// Ends the session's rmcp server.
    stop: CancellationToken,
}

struct Control {
    server: FakeServer,
    options: SseOptions,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    next_session: AtomicU64,
    counters: watch::Sender<SseCounters>,
    /// Replaced by [`SseFakeServer::drop_streams`]: every stream open then ends.
    drop_streams: Mutex<CancellationToken>,
    headers: Mutex<Vec<HeaderMap>>,
    /// Answer `GET`s with 503 (see [`SseFakeServer::refuse_streams`]).
    refuse_streams: std::sync::atomic::AtomicBool,
    stop: CancellationToken,
}

impl Control {
    fn count(&self, f: impl FnOnce(&mut SseCounters)) {
        self.counters.send_modify(f);
    }

    /// `None` when the request may go on, else the 401 to answer.
    fn refuse(&self, headers: &HeaderMap) -> Option<Response> {
        {
            let mut seen = lock(&self.headers);
            if seen.len() < MAX_RECORDED_HEADERS {
                seen.push(headers.clone());
            }
        }
        let expected = self.options.bearer_token.as_deref()?;
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given == Some(expected) {
            return None;
        }
        self.count(|c| c.unauthorized += 1);
        Some(
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, DEFAULT_WWW_AUTHENTICATE)],
                "missing or invalid bearer token",
            )
                .into_response(),
        )
    }

    /// Starts a new session with its own rmcp server.
    fn new_session(self: &Arc<Self>) -> Arc<Session> {
        let id = format!("s{}", self.next_session.fetch_add(1, Ordering::Relaxed) + 1);
        let (to_server, server_rx) = mpsc::unbounded_channel();
        let (server_tx, from_server) = mpsc::unbounded_channel();
        let session = Arc::new(Session {
            id: id.clone(),
            to_server,
            from_server: Mutex::new(Some(from_server)),
            next_event: AtomicU64::new(0),
            stop: self.stop.child_token(),
        });
        lock(&self.sessions).insert(id.clone(), Arc::clone(&session));
        self.count(|c| c.sessions += 1);
        let transport = ChannelTransport {
            rx: server_rx,
            tx: server_tx,
        };
        let (control, token, server) =
            (Arc::clone(self), session.stop.clone(), self.server.clone());
        tokio::spawn(async move {
            if let Ok(service) = server.serve_with_ct(transport, token.clone()).await {
                let _ = service.waiting().await;
            }
            token.cancel();
            if lock(&control.sessions).remove(&id).is_some() {
                control.count(|c| c.sessions_ended += 1);
            }
        });
        session
    }

    /// The kept session an event id belongs to, if its output is free to take.
    fn resumable(&self, last_event_id: &str) -> Option<Arc<Session>> {
        let (id, _) = last_event_id.rsplit_once('-')?;
        let session = lock(&self.sessions).get(id).cloned()?;
        let free = lock(&session.from_server).is_some();
        free.then_some(session)
    }
}

/// The rmcp server's transport of one session: messages `POST`ed in, events out.
struct ChannelTransport {
    rx: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleServer>>,
    tx: mpsc::UnboundedSender<TxJsonRpcMessage<RoleServer>>,
}

impl rmcp::transport::Transport<RoleServer> for ChannelTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self
            .tx
            .send(item)
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the session ended"));
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.rx.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.rx.close();
        Ok(())
    }
}

/// What an open event stream holds: its session's output, given back (or the session
/// ended) when the stream drops, however it ends.
struct Carrier {
    control: Arc<Control>,
    session: Arc<Session>,
    output: Option<mpsc::UnboundedReceiver<TxJsonRpcMessage<RoleServer>>>,
    /// `message` events this stream may still carry ([`crate::Faults::sse_drop_after`]).
    left: Option<u64>,
}

impl Drop for Carrier {
    fn drop(&mut self) {
        self.control.count(|c| c.streams_closed += 1);
        if self.control.options.keep_sessions && !self.session.stop.is_cancelled() {
            *lock(&self.session.from_server) = self.output.take();
        } else {
            self.session.stop.cancel();
        }
    }
}

impl Carrier {
    fn event(&self) -> Event {
        let n = self.session.next_event.fetch_add(1, Ordering::Relaxed);
        Event::default().id(format!("{}-{n}", self.session.id))
    }
}

/// A fake MCP server on the legacy HTTP+SSE transport, bound to loopback.
///
/// Dropping it stops the server without waiting; prefer [`SseFakeServer::shutdown`].
pub struct SseFakeServer {
    control: Arc<Control>,
    running: Running,
}

impl std::fmt::Debug for SseFakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseFakeServer")
            .field("addr", &self.running.addr)
            .field("options", &self.control.options)
            .finish_non_exhaustive()
    }
}

impl SseFakeServer {
    /// Start serving `scenario` on `127.0.0.1:0` without auth.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// Cancel-safe: a server that was bound stops when its task is dropped with the future.
    pub async fn start(scenario: Scenario) -> Result<Self, Error> {
        Self::start_with(scenario, SseOptions::new()).await
    }

    /// Start serving `scenario` with `options`.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// As [`SseFakeServer::start`].
    pub async fn start_with(scenario: Scenario, options: SseOptions) -> Result<Self, Error> {
        let stop = CancellationToken::new();
        let server =
            FakeServer::with_crash(scenario, CrashMode::Cancel(stop.clone()), stop.clone());
        Self::start_server(server, options).await
    }

    pub(crate) async fn start_server(
        server: FakeServer,
        options: SseOptions,
    ) -> Result<Self, Error> {
        let stop = server.stop_token();
        let bind = options.bind;
        let control = Arc::new(Control {
            server,
            options,
            sessions: Mutex::default(),
            next_session: AtomicU64::new(0),
            counters: watch::channel(SseCounters::default()).0,
            drop_streams: Mutex::new(stop.child_token()),
            headers: Mutex::default(),
            refuse_streams: std::sync::atomic::AtomicBool::new(false),
            stop: stop.clone(),
        });
        let router = axum::Router::new()
            .route(SSE_PATH, axum::routing::get(open_stream))
            .route(MESSAGES_PATH, axum::routing::post(post_message))
            .with_state(Arc::clone(&control));
        let running = Running::start(bind, stop, "serving the fake SSE server", |_| router).await?;
        Ok(Self { control, running })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// The event stream's URL, `http://127.0.0.1:<port>/sse` (what a client is configured
    /// with).
    pub fn url(&self) -> String {
        format!("http://{}{SSE_PATH}", self.running.addr)
    }

    /// Ends every event stream open now, as a network failure or a proxy timeout would.
    /// Without [`SseOptions::keep_sessions`] their sessions end too.
    pub fn drop_streams(&self) {
        let mut current = lock(&self.control.drop_streams);
        current.cancel();
        *current = self.control.stop.child_token();
        self.control.count(|c| c.drops += 1);
    }

    /// While `refuse` is on, answer every `GET` of the event stream with `503 Service
    /// Unavailable` (counted in [`SseCounters::refused`]): with [`SseFakeServer::drop_streams`],
    /// a server that stays unreachable for a client's reconnects.
    pub fn refuse_streams(&self, refuse: bool) {
        self.control.refuse_streams.store(refuse, Ordering::SeqCst);
    }

    /// Counters of requests so far.
    pub fn counters(&self) -> SseCounters {
        *self.control.counters.borrow()
    }

    /// Waits until the counters satisfy `ready` (e.g. `|c| c.streams >= 2` after a
    /// dropped stream), and returns them. Bound it with a timeout in tests.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn wait_for_counters(&self, ready: impl FnMut(&SseCounters) -> bool) -> SseCounters {
        let mut rx = self.control.counters.subscribe();
        let waited = rx.wait_for(ready).await.map(|counters| *counters);
        // The sender lives as long as `self`: the wait cannot fail.
        waited.unwrap_or_else(|_| *rx.borrow())
    }

    /// The values of header `name` on every request so far (the first
    /// [`MAX_RECORDED_HEADERS`] requests), in arrival order.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        lock(&self.control.headers)
            .iter()
            .flat_map(|h| h.get_all(name).iter().cloned().collect::<Vec<_>>())
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }

    /// MCP requests served so far (all sessions), in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.control.server.requests()
    }

    /// The shared server (tool set, request log).
    pub fn server(&self) -> &FakeServer {
        &self.control.server
    }

    /// Stop serving: end every session, refuse new connections and reset open ones, then
    /// wait up to [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE) for the server task.
    ///
    /// # Cancel safety
    /// Cancel-safe: the server is already told to stop; `Drop` aborts what is left.
    pub async fn shutdown(mut self) {
        self.running.shutdown().await;
    }
}

/// `GET /sse`: a new session, or a kept one resumed with `Last-Event-ID`.
async fn open_stream(State(control): State<Arc<Control>>, headers: HeaderMap) -> Response {
    if let Some(refused) = control.refuse(&headers) {
        return refused;
    }
    if control.refuse_streams.load(Ordering::SeqCst) {
        control.count(|c| c.refused += 1);
        return (StatusCode::SERVICE_UNAVAILABLE, "refusing event streams").into_response();
    }
    let resumed = control
        .options
        .keep_sessions
        .then(|| headers.get("last-event-id")?.to_str().ok())
        .flatten()
        .and_then(|id| control.resumable(id));
    let session = match &resumed {
        Some(session) => {
            control.count(|c| c.resumed += 1);
            Arc::clone(session)
        }
        None => control.new_session(),
    };
    let Some(output) = lock(&session.from_server).take() else {
        return (
            StatusCode::CONFLICT,
            "the session is carried by another stream",
        )
            .into_response();
    };
    control.count(|c| c.streams += 1);
    let endpoint = control
        .options
        .endpoint
        .clone()
        .unwrap_or_else(|| format!("{MESSAGES_PATH}?session_id={}", session.id));
    let dropped = lock(&control.drop_streams).clone();
    let drop_after = control.server.scenario().faults.sse_drop_after;
    let carrier = Carrier {
        control: Arc::clone(&control),
        session,
        output: Some(output),
        left: drop_after,
    };
    Sse::new(events(carrier, endpoint, dropped)).into_response()
}

/// The `endpoint` event, then one `message` event per message of the server, until the
/// stream is dropped (by [`SseFakeServer::drop_streams`] or after
/// [`crate::Faults::sse_drop_after`] messages), the session ends or the server stops.
fn events(
    carrier: Carrier,
    endpoint: String,
    dropped: CancellationToken,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let first = carrier.event().event("endpoint").data(endpoint);
    futures::stream::unfold(
        (carrier, Some(first), dropped),
        |(mut carrier, first, dropped)| async move {
            if let Some(first) = first {
                return Some((Ok(first), (carrier, None, dropped)));
            }
            if carrier.left == Some(0) {
                return None;
            }
            let stop = carrier.session.stop.clone();
            let output = carrier.output.as_mut()?;
            let message = tokio::select! {
                () = dropped.cancelled() => return None,
                () = stop.cancelled() => return None,
                m = output.recv() => m?,
            };
            let data = serde_json::to_string(&message).ok()?;
            let event = carrier.event().event("message").data(data);
            carrier.left = carrier.left.map(|n| n.saturating_sub(1));
            Some((Ok(event), (carrier, None, dropped)))
        },
    )
}

/// The query of the message endpoint.
#[derive(serde::Deserialize)]
struct SessionQuery {
    session_id: Option<String>,
}

/// `POST /messages?session_id=ID`: one JSON-RPC message for the session's server.
async fn post_message(
    State(control): State<Arc<Control>>,
    Query(query): Query<SessionQuery>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Some(refused) = control.refuse(&headers) {
        return refused;
    }
    control.count(|c| c.posts += 1);
    let session = query
        .session_id
        .and_then(|id| lock(&control.sessions).get(&id).cloned());
    let Some(session) = session else {
        control.count(|c| c.unknown_session += 1);
        return (StatusCode::NOT_FOUND, "Could not find session").into_response();
    };
    let message: RxJsonRpcMessage<RoleServer> = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("not a JSON-RPC message: {e}"),
            )
                .into_response();
        }
    };
    if session.to_server.send(message).is_err() {
        control.count(|c| c.unknown_session += 1);
        return (StatusCode::NOT_FOUND, "Could not find session").into_response();
    }
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

/// Run the SSE fake as a process (`mcp-fake-server --http ADDR --sse`): serve until
/// SIGTERM, SIGINT or a crash (with [`crate::Faults::ignore_sigterm`]: until SIGKILL). The
/// process faults of the stdio mode apply too (pid file, grandchild, stderr, exit at
/// startup). Once bound, the event stream's URL (`http://127.0.0.1:PORT/sse`) is printed
/// as the first stdout line and, if given, written to `addr_file`.
///
/// # Errors
/// Binding, or writing the address or pid file.
///
/// # Cancel safety
/// Meant to be the whole of a process's `main`; dropping it stops the server.
pub async fn serve_sse_process(
    scenario: Scenario,
    bind: SocketAddr,
    addr_file: Option<std::path::PathBuf>,
    bearer_token: Option<String>,
) -> Result<(), Error> {
    crate::stdio::process_startup(&scenario)?;
    let stubborn = scenario.faults.ignore_sigterm;
    let server = FakeServer::with_crash(scenario, CrashMode::ExitProcess, CancellationToken::new());
    let mut options = SseOptions::new().with_bind(bind);
    options.bearer_token = bearer_token;
    let running = SseFakeServer::start_server(server, options).await?;
    let stop = running.control.stop.clone();
    crate::http::announce_and_wait(&running.url(), addr_file.as_deref(), stubborn, &stop).await?;
    running.shutdown().await;
    Ok(())
}
