//! The streamable HTTP runner: [`HttpFakeServer`], with bearer enforcement, failure
//! injection and counters.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderName, HeaderValue, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::record::lock;
use crate::serve::Running;
use crate::server::{CrashMode, FakeServer};
use crate::{Error, RecordedRequest, Scenario};

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// How long [`HttpFakeServer::shutdown`] waits for open connections before aborting them.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Options for [`HttpFakeServer::start_with`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Address to bind (default `127.0.0.1:0`).
    pub bind: SocketAddr,
    /// Require `Authorization: Bearer <token>` (default: no auth).
    pub bearer_token: Option<String>,
    /// The `WWW-Authenticate` value of a 401 (default `Bearer realm="mcp-testkit"`).
    pub www_authenticate: String,
    /// How a request naming a session this server does not know is answered (default
    /// [`UnknownSession::NotFound`]).
    pub unknown_session: UnknownSession,
}

/// How a server answers a request whose `Mcp-Session-Id` it does not know, e.g. after a
/// restart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnknownSession {
    /// `404 Not Found`, as the MCP specification says (rmcp's own answer).
    #[default]
    NotFound,
    /// `400 Bad Request` with the JSON-RPC error
    /// `{"code":-32000,"message":"Bad Request: No valid session ID provided"}` and no `id`:
    /// what the TypeScript SDK's example servers (`server-everything`) answer.
    BadRequest,
}

/// The body of an [`UnknownSession::BadRequest`] answer.
pub const UNKNOWN_SESSION_BAD_REQUEST_BODY: &str = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#;

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            bearer_token: None,
            www_authenticate: DEFAULT_WWW_AUTHENTICATE.to_owned(),
            unknown_session: UnknownSession::default(),
        }
    }
}

/// The default `WWW-Authenticate` challenge.
pub const DEFAULT_WWW_AUTHENTICATE: &str = "Bearer realm=\"mcp-testkit\"";

impl HttpOptions {
    /// Defaults: loopback, any port, no auth.
    pub fn new() -> Self {
        Self::default()
    }

    /// Require this bearer token.
    #[must_use]
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// Set the `WWW-Authenticate` value sent with a 401.
    #[must_use]
    pub fn with_www_authenticate(mut self, value: impl Into<String>) -> Self {
        self.www_authenticate = value.into();
        self
    }

    /// Bind this address instead of `127.0.0.1:0`.
    #[must_use]
    pub fn with_bind(mut self, bind: SocketAddr) -> Self {
        self.bind = bind;
        self
    }

    /// Answer requests naming an unknown session this way.
    #[must_use]
    pub fn with_unknown_session(mut self, answer: UnknownSession) -> Self {
        self.unknown_session = answer;
        self
    }
}

/// A canned HTTP response injected by [`HttpFakeServer::fail_next`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InjectedFailure {
    /// The status code.
    pub status: u16,
    /// The body (sent as `text/plain` unless a header says otherwise).
    pub body: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
}

impl InjectedFailure {
    /// A failure with `status` and an empty body.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            body: String::new(),
            headers: Vec::new(),
        }
    }

    /// `404 Not Found`, what a server answers for an expired session.
    pub fn session_expired() -> Self {
        Self::new(404).with_body("session not found")
    }

    /// `503 Service Unavailable` with `Retry-After: <secs>`.
    pub fn unavailable(retry_after_secs: u64) -> Self {
        Self::new(503).with_header("retry-after", retry_after_secs.to_string())
    }

    /// Set the body.
    #[must_use]
    pub fn with_body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    /// Add a header.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// Request counters of an [`HttpFakeServer`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpCounters {
    /// Every HTTP request to the server.
    pub total: u64,
    /// `POST` requests.
    pub post: u64,
    /// `GET` requests (SSE streams).
    pub get: u64,
    /// `DELETE` requests (session ends).
    pub delete: u64,
    /// Requests answered with an injected failure.
    pub injected: u64,
    /// Requests refused with 401 for a missing or wrong bearer token.
    pub unauthorized: u64,
}

#[derive(Debug, Default)]
struct Control {
    failures: Mutex<VecDeque<InjectedFailure>>,
    bearer: Mutex<Option<String>>,
    www_authenticate: String,
    counters: tokio::sync::watch::Sender<HttpCounters>,
    unknown_session: UnknownSession,
    /// Session ids this server handed out (for [`UnknownSession::BadRequest`]).
    sessions: Mutex<std::collections::HashSet<String>>,
    /// Headers of the requests so far (at most [`MAX_RECORDED_HEADERS`]).
    headers: Mutex<Vec<http::HeaderMap>>,
    /// [`crate::Faults::ignore_discover`]: `server/discover` POSTs hang until `stop`.
    ignore_discover: bool,
    /// [`HttpFakeServer::cut_next_responses`]: JSON-RPC methods whose next POSTs are
    /// served, then answered with a stream that ends before the response.
    cuts: Mutex<VecDeque<String>>,
    /// Failures for the next POSTs of a JSON-RPC method (`fail_next_call`).
    method_failures: Mutex<VecDeque<(String, InjectedFailure)>>,
    /// The served server's listen faults ([`crate::Behavior::EndListens`],
    /// [`crate::Behavior::SilenceListens`]).
    listen_faults: Arc<crate::shared::ListenFaults>,
    stop: CancellationToken,
}

/// How many requests' headers [`HttpFakeServer::header_values`] remembers.
pub const MAX_RECORDED_HEADERS: usize = 1000;

/// A fake MCP server on streamable HTTP, bound to loopback.
///
/// Dropping it stops the server without waiting; prefer [`HttpFakeServer::shutdown`].
#[derive(Debug)]
pub struct HttpFakeServer {
    server: FakeServer,
    control: Arc<Control>,
    running: Running,
}

impl HttpFakeServer {
    /// Start serving `scenario` on `127.0.0.1:0` without auth.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// Cancel-safe: a server that was bound stops when its task is dropped with the future.
    pub async fn start(scenario: Scenario) -> Result<Self, Error> {
        Self::start_with(scenario, HttpOptions::new()).await
    }

    /// Start serving `scenario` with `options`.
    ///
    /// # Errors
    /// [`Error::Io`] when binding fails.
    ///
    /// # Cancel safety
    /// As [`HttpFakeServer::start`].
    pub async fn start_with(scenario: Scenario, options: HttpOptions) -> Result<Self, Error> {
        let stop = CancellationToken::new();
        let server =
            FakeServer::with_crash(scenario, CrashMode::Cancel(stop.clone()), stop.clone());
        Self::start_server(server, options).await
    }

    pub(crate) async fn start_server(
        server: FakeServer,
        options: HttpOptions,
    ) -> Result<Self, Error> {
        let stop = server.stop_token();
        let control = Arc::new(Control {
            bearer: Mutex::new(options.bearer_token),
            www_authenticate: options.www_authenticate,
            unknown_session: options.unknown_session,
            ignore_discover: server.scenario().faults.ignore_discover,
            listen_faults: Arc::clone(&server.shared.listen_faults),
            stop: stop.clone(),
            ..Control::default()
        });
        let keep_alive = server
            .scenario()
            .faults
            .sse_keep_alive_ms
            .map(Duration::from_millis);
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(stop.child_token())
            .with_sse_keep_alive(keep_alive);
        let factory_server = server.clone();
        let service = StreamableHttpService::new(
            move || Ok(factory_server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service(MCP_PATH, service).layer(
            axum::middleware::from_fn_with_state(Arc::clone(&control), gate),
        );
        let running = Running::start(options.bind, stop, "serving the fake HTTP server", |_| {
            router
        })
        .await?;
        Ok(Self {
            server,
            control,
            running,
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.running.addr
    }

    /// The MCP endpoint URL, `http://127.0.0.1:<port>/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.running.addr)
    }

    /// Answer the next `n` HTTP requests with `failure` instead of serving them.
    /// Calls queue up: `fail_next(1, a); fail_next(1, b)` fails with `a`, then `b`.
    pub fn fail_next(&self, n: usize, failure: InjectedFailure) {
        let mut queue = lock(&self.control.failures);
        queue.extend(std::iter::repeat_n(failure, n));
    }

    /// Answer the next `n` POSTs of JSON-RPC `method` (e.g. `"tools/call"`) with `failure`
    /// instead of serving them; other requests (the client's GET stream, notifications,
    /// other methods) are served as usual, so a test aims at exactly the request it means.
    pub fn fail_next_call(&self, n: usize, method: &str, failure: InjectedFailure) {
        lock(&self.control.method_failures)
            .extend(std::iter::repeat_n((method.to_owned(), failure), n));
    }

    /// Serve each of the next `n` POSTs of JSON-RPC `method` (e.g. `"tools/list"`), then
    /// answer it with an SSE stream that carries one priming event (with an event id) and
    /// ends before the response: what a proxy or server restart does to a request in
    /// flight. The request has been handled (it is in [`HttpFakeServer::requests`]); the
    /// client never gets the answer. A client of the 2025 era may resume the stream with
    /// `GET` and `Last-Event-ID` (this server has nothing to replay); one of the 2026 era,
    /// which has no resumption, has to send the request again.
    pub fn cut_next_responses(&self, n: usize, method: &str) {
        lock(&self.control.cuts).extend(std::iter::repeat_n(method.to_owned(), n));
    }

    /// Drop injected failures that have not been used yet.
    pub fn clear_failures(&self) {
        lock(&self.control.failures).clear();
    }

    /// Change (or remove, with `None`) the required bearer token.
    pub fn set_bearer_token(&self, token: Option<String>) {
        *lock(&self.control.bearer) = token;
    }

    /// Counters of HTTP requests so far.
    pub fn counters(&self) -> HttpCounters {
        *self.control.counters.borrow()
    }

    /// Waits until the counters satisfy `ready` (e.g. `|c| c.get > 0` once the client
    /// opened its GET stream) and returns them. Bound it with a timeout in tests.
    ///
    /// # Cancel safety
    /// Cancel-safe.
    pub async fn wait_for_counters(
        &self,
        ready: impl FnMut(&HttpCounters) -> bool,
    ) -> HttpCounters {
        let mut rx = self.control.counters.subscribe();
        let waited = rx.wait_for(ready).await.map(|counters| *counters);
        // The sender lives as long as `self`: the wait cannot fail.
        waited.unwrap_or_else(|_| *rx.borrow())
    }

    /// The values of header `name` on every HTTP request so far (the first
    /// [`MAX_RECORDED_HEADERS`] requests), in arrival order; requests without it add none.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        lock(&self.control.headers)
            .iter()
            .flat_map(|h| h.get_all(name).iter().cloned().collect::<Vec<_>>())
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }

    /// The latest MCP requests served (all sessions), in arrival order (at most
    /// [`Recording::kept_requests`](crate::Recording::kept_requests); every one is counted by
    /// [`FakeServer::request_counts`](crate::FakeServer::request_counts)).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// The shared server (tool set, request log).
    pub fn server(&self) -> &FakeServer {
        &self.server
    }

    /// True once the server stopped (shut down, or crashed by [`crate::Behavior::Exit`]).
    pub fn is_stopped(&self) -> bool {
        self.running.stop.is_cancelled()
    }

    /// Stop serving: refuse new connections and reset open ones (like a process
    /// exit), then wait up to [`SHUTDOWN_GRACE`](crate::SHUTDOWN_GRACE) for the server task.
    ///
    /// # Cancel safety
    /// Cancel-safe: the server is already told to stop; `Drop` aborts what is left.
    pub async fn shutdown(mut self) {
        self.running.shutdown().await;
    }
}

async fn gate(State(control): State<Arc<Control>>, request: Request, next: Next) -> Response {
    record_request(&control, &request);
    if let Some(refused) = injected_or_unauthorized(&control, &request) {
        return refused;
    }
    let (request, cut, listen) = match inspect_body(&control, request).await {
        Ok(inspected) => inspected,
        Err(refused) => return refused,
    };
    if let Some(refused) = unknown_session(&control, &request) {
        return refused;
    }
    let faults = &control.listen_faults;
    if listen {
        crate::listen_faults::http::wait_unless_held(faults, &control.stop).await;
    }
    let mut response = next.run(request).await;
    if listen {
        response = response.map(|body| {
            crate::listen_faults::http::silenceable(faults, body, control.stop.clone())
        });
    }
    if cut {
        // The request was handled; its answer is dropped with the original body.
        drop(response);
        let mut cut = Response::new(axum::body::Body::from(CUT_STREAM));
        cut.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        return cut;
    }
    if let Some(issued) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        lock(&control.sessions).insert(issued.to_owned());
    }
    response
}

/// Counts the request by method and keeps its headers (the first
/// [`MAX_RECORDED_HEADERS`] requests).
fn record_request(control: &Control, request: &Request) {
    control.counters.send_modify(|c| {
        c.total += 1;
        match *request.method() {
            http::Method::POST => c.post += 1,
            http::Method::GET => c.get += 1,
            http::Method::DELETE => c.delete += 1,
            _ => {}
        }
    });
    let mut seen = lock(&control.headers);
    if seen.len() < MAX_RECORDED_HEADERS {
        seen.push(request.headers().clone());
    }
}

/// The next injected failure, else a 401 when a bearer token is required and the request
/// lacks it.
fn injected_or_unauthorized(control: &Control, request: &Request) -> Option<Response> {
    let injected = lock(&control.failures).pop_front();
    if let Some(failure) = injected {
        control.counters.send_modify(|c| c.injected += 1);
        return Some(failure_response(&failure));
    }
    let expected = lock(&control.bearer).clone();
    let token = expected?;
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given == Some(token.as_str()) {
        return None;
    }
    control.counters.send_modify(|c| c.unauthorized += 1);
    let failure = InjectedFailure::new(401)
        .with_body("missing or invalid bearer token")
        .with_header("www-authenticate", control.www_authenticate.clone());
    Some(failure_response(&failure))
}

/// Reads a POST's JSON-RPC method: answers an ignored `server/discover` or a failure aimed
/// at the method at once, and says whether the answer is to be cut and whether the request
/// is a `subscriptions/listen` (for the listen faults). The request comes back with its
/// body.
async fn inspect_body(
    control: &Control,
    request: Request,
) -> Result<(Request, bool, bool), Response> {
    if request.method() != http::Method::POST {
        return Ok((request, false, false));
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 16 * 1024 * 1024).await else {
        return Err(failure_response(&InjectedFailure::new(413)));
    };
    let method = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|m| m["method"].as_str().map(str::to_owned));
    if control.ignore_discover && method.as_deref() == Some("server/discover") {
        control.stop.cancelled().await;
        return Err(failure_response(&InjectedFailure::new(503)));
    }
    let aimed = method.as_deref().and_then(|method| {
        let mut queue = lock(&control.method_failures);
        let at = queue.iter().position(|(m, _)| m == method)?;
        queue.remove(at).map(|(_, failure)| failure)
    });
    if let Some(failure) = aimed {
        control.counters.send_modify(|c| c.injected += 1);
        return Err(failure_response(&failure));
    }
    let listen = method.as_deref() == Some("subscriptions/listen");
    let cut = method.is_some_and(|method| {
        let mut cuts = lock(&control.cuts);
        let at = cuts.iter().position(|m| *m == method);
        at.and_then(|at| cuts.remove(at)).is_some()
    });
    Ok((
        Request::from_parts(parts, axum::body::Body::from(bytes)),
        cut,
        listen,
    ))
}

/// A 400 for a session id this server never issued, when so configured.
fn unknown_session(control: &Control, request: &Request) -> Option<Response> {
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok());
    if control.unknown_session == UnknownSession::BadRequest
        && let Some(session) = session
        && !lock(&control.sessions).contains(session)
    {
        let failure = InjectedFailure::new(400)
            .with_body(UNKNOWN_SESSION_BAD_REQUEST_BODY)
            .with_header("content-type", "application/json");
        return Some(failure_response(&failure));
    }
    None
}

/// The body of a response cut by [`HttpFakeServer::cut_next_responses`]: one priming event
/// with an id and no data, then the end of the stream.
const CUT_STREAM: &str = "id: cut-0\nretry: 50\ndata:\n\n";

/// The session header of streamable HTTP.
const SESSION_HEADER: &str = "mcp-session-id";

fn failure_response(failure: &InjectedFailure) -> Response {
    let mut response = Response::new(axum::body::Body::from(failure.body.clone()));
    *response.status_mut() =
        StatusCode::from_u16(failure.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    for (name, value) in &failure.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.insert(name, value);
        }
    }
    response
}

/// Run the HTTP fake as a process (`mcp-fake-server --http ADDR`): serve until SIGTERM,
/// SIGINT or a crash (with [`crate::Faults::ignore_sigterm`]: until SIGKILL). The
/// process faults of the stdio mode apply too (pid file, grandchild, stderr, exit at
/// startup). Once bound, the URL (`http://127.0.0.1:PORT/mcp`) is printed as
/// the first stdout line and, if given, written to `addr_file`.
///
/// # Errors
/// Binding, or writing the address or pid file.
///
/// # Cancel safety
/// Meant to be the whole of a process's `main`; dropping it stops the server.
pub async fn serve_http_process(
    scenario: Scenario,
    bind: SocketAddr,
    addr_file: Option<PathBuf>,
    bearer_token: Option<String>,
) -> Result<(), Error> {
    crate::stdio::process_startup(&scenario)?;
    let stubborn = scenario.faults.ignore_sigterm;
    let stop = CancellationToken::new();
    let server = FakeServer::with_crash(scenario, CrashMode::ExitProcess, stop);
    let mut options = HttpOptions::new().with_bind(bind);
    options.bearer_token = bearer_token;
    let served = HttpFakeServer::start_server(server, options).await?;
    announce_and_wait(
        &served.url(),
        addr_file.as_deref(),
        stubborn,
        &served.running.stop,
    )
    .await?;
    served.shutdown().await;
    Ok(())
}

/// The end of a fake-server process's `main`: writes `url` to `addr_file` (if given) and as
/// the first stdout line, then waits for SIGTERM or SIGINT (with `stubborn`: for SIGKILL)
/// or until `stop` is cancelled (a crash).
pub(crate) async fn announce_and_wait(
    url: &str,
    addr_file: Option<&std::path::Path>,
    stubborn: bool,
    stop: &CancellationToken,
) -> Result<(), Error> {
    if let Some(path) = addr_file {
        // Write then rename, so a reader never sees a partial line.
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, format!("{url}\n"))
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|source| Error::WriteFile {
                path: path.to_path_buf(),
                source,
            })?;
    }
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{url}");
        let _ = out.flush();
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|source| Error::Io {
            doing: "installing the SIGTERM handler",
            source,
        })?;
    loop {
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
            () = stop.cancelled() => break,
        }
        if !stubborn {
            break;
        }
    }
    Ok(())
}
