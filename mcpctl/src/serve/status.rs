//! The gateway's status page: `GET /status` (HTML, readable without JavaScript, no
//! external assets) and `GET /status.json` of `mcpctl serve --http`, behind the same
//! guard as the MCP endpoint ([`super::http`]).
//!
//! What it shows comes from what the gateway already has, plus two small records kept
//! here ([`Board`]):
//! - each upstream server's state, protocol era, process id and tool count from the
//!   connection sets of the clients connected now (`ConnectionSet::status`, as `mcpctl
//!   status` shows them), and from the shared pool (`ServerPool::statuses`) for a server no
//!   client uses: `idle` (up, kept alive after its last client left), `stopped`, or
//!   failed in a crash loop;
//! - restarts: the connections started for a server after its first, counted from the
//!   pool's generations whenever a client's set reports the server ready or the page is
//!   read (a start that never came up counts in the crash loop's failures instead);
//! - calls per server ([`Board::timed`]): totals since the gateway started, and the count,
//!   errors and p50/p99 latency of the calls that ended in the last [`WINDOW`], at most
//!   the last [`WINDOW_CALLS`] of each server (bounded memory; a busier server's window is
//!   its last [`WINDOW_CALLS`] calls). An error is a call that failed or whose result is
//!   a tool error (`isError`); a call its client cancelled is not counted;
//! - clients per caller: the sessions and listens [`super::binding`] counts, and the
//!   2026-era calls waiting for the caller's answers and the tasks kept for it (each
//!   bounded per caller, see [`super::modern::MAX_PARKED_PER_CALLER`]).
//!
//! What a caller sees follows its grants ([`super::caller`]): the servers it may use, and
//! only its own clients; the whole gateway (every server, every caller's clients, the tool
//! warnings, which name tools) only for a caller with everything (the static token, or a
//! token when no grant is written).
//!
//! Everything a server supplies (its failure text and stderr, its `serverInfo`, tool
//! names in warnings) is HTML-escaped on the page, control characters and terminal escape
//! sequences shown as text (`\e[31m`, as on terminals); the page is sent with a
//! Content-Security-Policy that runs no script. The JSON keeps the text as it came (JSON
//! escapes it; credentials in a failure's text and stderr are redacted at the source,
//! [`mcp_key::redact_secrets`]) and has a stable shape, versioned by its `version` field ([`SHAPE_VERSION`],
//! described in the README); servers are in key order (by name).

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::response::{IntoResponse, Response};
use http::header;
use mcp_connections::model::CallToolResult;
use mcp_connections::{ConnectionEvent, ConnectionSet, ServerPool, ServerState, ServerStatus};
use mcp_key::McpServerKey;
use serde::Serialize;
use tokio::sync::broadcast;
use tokio_util::task::AbortOnDropHandle;

use super::Hub;
use super::caller::Caller;

mod page;

/// How far back the latency percentiles and windowed counts look.
pub(crate) const WINDOW: Duration = Duration::from_secs(5 * 60);

/// The most calls kept per server for the window.
pub(crate) const WINDOW_CALLS: usize = 512;

/// The version of the JSON shape; bumped when a field changes meaning or goes away.
pub(crate) const SHAPE_VERSION: u32 = 1;

/// What the status page keeps beyond what sets and the pool report: the live client
/// sets, what was last seen of each server, and the calls. Cheap to clone (a handle).
#[derive(Clone, Default)]
pub(crate) struct Board {
    shared: Arc<Shared>,
}

struct Shared {
    started: Instant,
    next_id: AtomicU64,
    /// The connection sets of live gateways (clients and 2026-era requests), by id.
    sets: Mutex<BTreeMap<u64, ConnectionSet>>,
    seen: Mutex<BTreeMap<McpServerKey, Seen>>,
    calls: Mutex<BTreeMap<McpServerKey, CallLog>>,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            started: Instant::now(),
            next_id: AtomicU64::default(),
            sets: Mutex::default(),
            seen: Mutex::default(),
            calls: Mutex::default(),
        }
    }
}

/// What the board saw of one server's connections.
#[derive(Default)]
struct Seen {
    /// The newest pool generation seen up (ready or idle).
    generation: Option<u64>,
    restarts: u64,
    /// What a client's set said of the connection of `generation`, for when no client
    /// uses it (idle).
    details: Option<Details>,
}

#[derive(Clone)]
struct Details {
    pid: Option<u32>,
    protocol_version: Option<String>,
    tools: usize,
    info: Option<InfoRow>,
}

/// One server's calls: totals and the recent ones (end, latency, failed).
#[derive(Default)]
struct CallLog {
    total: u64,
    errors: u64,
    recent: VecDeque<(Instant, Duration, bool)>,
}

/// A live gateway's set on the board; taken off when dropped (with the gateway).
pub(crate) struct Tracked {
    shared: Arc<Shared>,
    id: u64,
    _watch: AbortOnDropHandle<()>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        lock(&self.shared.sets).remove(&self.id);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Board {
    /// Puts a gateway's `set` on the board until the returned handle is dropped, and counts
    /// the restarts its `events` show (each `Ready` is compared with the pool).
    pub(crate) fn track(
        &self,
        pool: &ServerPool,
        set: &ConnectionSet,
        events: &broadcast::Sender<ConnectionEvent>,
    ) -> Tracked {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.shared.sets).insert(id, set.clone());
        let mut events = events.subscribe();
        let (shared, pool) = (Arc::clone(&self.shared), pool.clone());
        let watch = tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(ConnectionEvent::Ready { server, .. }) => {
                        shared.observe(&pool.statuses(), &server);
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        Tracked {
            shared: Arc::clone(&self.shared),
            id,
            _watch: AbortOnDropHandle::new(watch),
        }
    }

    /// Runs `call` to `server` and records its latency and whether it failed (an error,
    /// or a result marked `isError`). Dropped before it ends (the client cancelled), it
    /// records nothing.
    pub(crate) async fn timed(
        &self,
        server: &McpServerKey,
        call: impl Future<Output = mcp_connections::Result<CallToolResult>>,
    ) -> mcp_connections::Result<CallToolResult> {
        let began = Instant::now();
        let outcome = call.await;
        // A call handed back to its client for input (see `modern.rs`) has not failed.
        let failed = outcome.as_ref().map_or_else(
            |e| e.input_required().is_none(),
            |result| result.is_error == Some(true),
        );
        self.shared.record(server, began.elapsed(), failed);
        outcome
    }

    /// Runs `call` to a tool that resolved to no server; when it fails because its server
    /// is not up, it counts as a failed call of that server.
    pub(crate) async fn timed_unresolved(
        &self,
        call: impl Future<Output = mcp_connections::Result<CallToolResult>>,
    ) -> mcp_connections::Result<CallToolResult> {
        let began = Instant::now();
        let outcome = call.await;
        if let Err(mcp_connections::Error::NotReady { server, .. }) = &outcome {
            self.shared.record(server, began.elapsed(), true);
        }
        outcome
    }
}

impl Shared {
    fn record(&self, server: &McpServerKey, latency: Duration, failed: bool) {
        let mut calls = lock(&self.calls);
        let log = calls.entry(server.clone()).or_default();
        log.total += 1;
        log.errors += u64::from(failed);
        if log.recent.len() == WINDOW_CALLS {
            log.recent.pop_front();
        }
        log.recent.push_back((Instant::now(), latency, failed));
    }

    /// Notes the newest generation of `server` that is up in the pool: a newer one than
    /// last seen is a restart.
    fn observe(&self, pool: &Pool, server: &McpServerKey) {
        let Some(generation) = up_generation(pool, server) else {
            return;
        };
        let mut seen = lock(&self.seen);
        let seen = seen.entry(server.clone()).or_default();
        match seen.generation {
            Some(last) if generation <= last => {}
            last => {
                seen.restarts += u64::from(last.is_some());
                seen.generation = Some(generation);
                seen.details = None;
            }
        }
    }
}

/// The pool's connection states, by key.
type Pool = BTreeMap<mcp_connections::ConnectionKey, mcp_connections::ConnectionStatus>;

/// The newest generation of `server`'s connections that is up (ready or idle).
fn up_generation(pool: &Pool, server: &McpServerKey) -> Option<u64> {
    use mcp_connections::ConnectionStatus as S;
    pool.iter()
        .filter(|(key, _)| &key.server == server)
        .filter_map(|(_, status)| match status {
            S::Ready { generation, .. } | S::Idle { generation } => Some(generation.get()),
            _ => None,
        })
        .max()
}

/// The whole page as data: what `/status.json` returns and `/status` renders.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Snapshot {
    /// [`SHAPE_VERSION`].
    version: u32,
    /// The mcpctl version serving.
    mcpctl: &'static str,
    uptime_secs: u64,
    window: WindowSpec,
    clients: Clients,
    servers: Vec<ServerRow>,
}

#[derive(Debug, Clone, Serialize)]
struct WindowSpec {
    secs: u64,
    max_calls: usize,
}

#[derive(Debug, Clone, Serialize)]
struct Clients {
    /// The sum of `by_principal`.
    connected: usize,
    /// Sessions (2025 era) and open `subscriptions/listen` requests (2026 era) per
    /// caller id (`static-token`, `sub:<subject>`), with its parked calls and kept tasks.
    by_principal: Vec<PrincipalClients>,
    /// Calls of 2026-era clients (which have no session) in flight.
    stateless_calls_in_flight: usize,
}

#[derive(Debug, Clone, Serialize)]
struct PrincipalClients {
    principal: String,
    clients: usize,
    /// 2026-era calls waiting for this caller's answers (at most
    /// [`super::modern::MAX_PARKED_PER_CALLER`]).
    parked: usize,
    /// Tasks kept for this caller (at most as many).
    tasks: usize,
}

#[derive(Debug, Clone, Serialize)]
struct ServerRow {
    server: String,
    transport: &'static str,
    /// `ready`, `starting`, `failed`, `deferred`, `idle`, `stopped` or `cancelled`.
    state: &'static str,
    /// A failed server's classified reason (`{"kind": "exited", ...}`), as `mcpctl status
    /// --json` shows it.
    reason: Option<serde_json::Value>,
    /// The reason in words, for the page.
    #[serde(skip)]
    reason_text: Option<String>,
    /// A failed server's message (server-supplied text, unescaped).
    error: Option<String>,
    stderr_tail: Option<String>,
    /// The protocol era (`2025-11-25` or `2026-07-28`) and the exact version.
    era: Option<&'static str>,
    protocol_version: Option<String>,
    pid: Option<u32>,
    restarts: u64,
    crash_loop: Option<CrashLoopRow>,
    tools: Option<usize>,
    warnings: Vec<String>,
    server_info: Option<InfoRow>,
    calls: CallsRow,
}

#[derive(Debug, Clone, Serialize)]
struct CrashLoopRow {
    crashes: u32,
    retry_in_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
struct InfoRow {
    name: String,
    version: String,
    title: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
struct CallsRow {
    total: u64,
    errors: u64,
    window: WindowCalls,
}

#[derive(Debug, Clone, Default, Serialize)]
struct WindowCalls {
    calls: usize,
    errors: usize,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
}

/// The gateway as the page shows it now to `caller`. Does not wait.
pub(crate) fn snapshot(hub: &Hub, caller: &Caller) -> Snapshot {
    let shared = &hub.status.shared;
    let sets: Vec<ConnectionSet> = lock(&shared.sets).values().cloned().collect();
    let pool = hub.pool.statuses();
    // Every live set's view of each server, with the set it came from.
    let mut views: BTreeMap<McpServerKey, Vec<(usize, ServerStatus)>> = BTreeMap::new();
    for (i, set) in sets.iter().enumerate() {
        for status in set.status() {
            views
                .entry(status.key.clone())
                .or_default()
                .push((i, status));
        }
    }
    let now = Instant::now();
    let mut servers = Vec::new();
    let shown = hub
        .catalog
        .exposed()
        .filter(|(key, config)| config.enabled() && caller.may_use_server(key));
    for (key, config) in shown {
        shared.observe(&pool, key);
        let best = views
            .remove(key)
            .unwrap_or_default()
            .into_iter()
            .min_by_key(|(_, s)| rank(&s.state));
        let mut row = match best {
            Some((i, status)) if !matches!(status.state, ServerState::Cancelled) => {
                from_set(shared, &pool, &sets[i], status)
            }
            _ => from_pool(shared, &pool, key),
        };
        row.transport = config.transport().label();
        if !caller.has_everything() {
            // They name tools, which the caller may not be granted.
            row.warnings.clear();
        }
        row.restarts = lock(&shared.seen).get(key).map_or(0, |s| s.restarts);
        row.calls = lock(&shared.calls)
            .get(key)
            .map(|log| calls_row(log, now))
            .unwrap_or_default();
        servers.push(row);
    }
    let clients = hub.bindings.clients_by_caller();
    let parked = hub.parked.by_caller();
    let tasks = hub.tasks.by_caller();
    let principals: std::collections::BTreeSet<&String> = clients
        .keys()
        .chain(parked.keys())
        .chain(tasks.keys())
        .collect();
    let count =
        |of: &std::collections::BTreeMap<String, usize>, id: &str| of.get(id).copied().unwrap_or(0);
    let by_principal: Vec<PrincipalClients> = principals
        .into_iter()
        .filter(|id| caller.has_everything() || *id == caller.id())
        .map(|id| PrincipalClients {
            principal: id.clone(),
            clients: count(&clients, id),
            parked: count(&parked, id),
            tasks: count(&tasks, id),
        })
        .collect();
    Snapshot {
        version: SHAPE_VERSION,
        mcpctl: env!("CARGO_PKG_VERSION"),
        uptime_secs: shared.started.elapsed().as_secs(),
        window: WindowSpec {
            secs: WINDOW.as_secs(),
            max_calls: WINDOW_CALLS,
        },
        clients: Clients {
            connected: by_principal.iter().map(|p| p.clients).sum(),
            by_principal,
            stateless_calls_in_flight: hub
                .max_calls
                .saturating_sub(hub.modern_calls.available_permits()),
        },
        servers,
    }
}

/// Which of several sets' views of one server to show: ready first.
fn rank(state: &ServerState) -> u8 {
    match state {
        ServerState::Ready { .. } => 0,
        ServerState::Starting => 1,
        ServerState::Failed(_) => 2,
        ServerState::Deferred { .. } => 3,
        _ => 4,
    }
}

fn empty_row(key: &McpServerKey, state: &'static str) -> ServerRow {
    ServerRow {
        server: key.to_string(),
        transport: "",
        state,
        reason: None,
        reason_text: None,
        error: None,
        stderr_tail: None,
        era: None,
        protocol_version: None,
        pid: None,
        restarts: 0,
        crash_loop: None,
        tools: None,
        warnings: Vec::new(),
        server_info: None,
        calls: CallsRow::default(),
    }
}

/// A server as a client's set sees it.
fn from_set(shared: &Shared, pool: &Pool, set: &ConnectionSet, status: ServerStatus) -> ServerRow {
    let mut row = empty_row(&status.key, "");
    // One failure is just a failure; from the second in a row it is a loop.
    row.crash_loop = status
        .crash_loop
        .filter(|c| c.crashes > 1)
        .map(|c| CrashLoopRow {
            crashes: c.crashes,
            retry_in_ms: millis(c.retry_in),
        })
        .or_else(|| pool_crash_loop(pool, &status.key));
    row.warnings = status.warnings;
    match status.state {
        ServerState::Ready { tools } => {
            row.state = "ready";
            row.tools = Some(tools);
            row.pid = status.pid;
            row.era = status.protocol_version.as_deref().map(era);
            row.protocol_version = status.protocol_version;
            row.server_info = set.server_info(&status.key).map(|i| InfoRow {
                name: i.name,
                version: i.version,
                title: i.title,
            });
            // Kept for when no client uses the connection.
            let details = Details {
                pid: row.pid,
                protocol_version: row.protocol_version.clone(),
                tools,
                info: row.server_info.clone(),
            };
            let generation = up_generation(pool, &status.key);
            let mut seen = lock(&shared.seen);
            if let Some(seen) = seen.get_mut(&status.key)
                && seen.generation == generation
            {
                seen.details = Some(details);
            }
        }
        ServerState::Starting => row.state = "starting",
        ServerState::Failed(f) => {
            row.state = "failed";
            row.reason = serde_json::to_value(f.reason()).ok();
            row.reason_text = Some(f.reason().to_string());
            row.error = Some(crate::error::clean_message(&f.detail()));
            row.stderr_tail = f.stderr_tail().map(str::to_owned);
        }
        ServerState::Deferred { tools, .. } => {
            row.state = "deferred";
            row.tools = Some(tools);
        }
        _ => row.state = "cancelled",
    }
    row
}

/// A server no client's set uses, as the shared pool has it.
fn from_pool(shared: &Shared, pool: &Pool, key: &McpServerKey) -> ServerRow {
    use mcp_connections::ConnectionStatus as S;
    let mine: Vec<&S> = pool
        .iter()
        .filter(|(k, _)| &k.server == key)
        .map(|(_, s)| s)
        .collect();
    let any = |f: fn(&S) -> bool| mine.iter().any(|s| f(s));
    let mut row = if any(|s| matches!(s, S::Ready { .. })) {
        // Leased, by no client's set: by 2026-era calls in flight.
        empty_row(key, "ready")
    } else if any(|s| matches!(s, S::Idle { .. })) {
        empty_row(key, "idle")
    } else if any(|s| matches!(s, S::Starting { .. })) {
        empty_row(key, "starting")
    } else if let Some(S::CrashLoop { last_error, .. }) =
        mine.iter().find(|s| matches!(s, S::CrashLoop { .. }))
    {
        let mut row = empty_row(key, "failed");
        row.error = Some(crate::error::clean_message(&mcp_key::redact_secrets(
            last_error,
        )));
        row
    } else if any(|s| matches!(s, S::Dead { .. })) {
        let mut row = empty_row(key, "failed");
        row.error = Some("its connection ended; the next use starts it again".to_owned());
        row
    } else {
        empty_row(key, "stopped")
    };
    row.crash_loop = pool_crash_loop(pool, key);
    if matches!(row.state, "ready" | "idle")
        && let Some(seen) = lock(&shared.seen).get(key)
        && seen.generation == up_generation(pool, key)
        && let Some(d) = seen.details.clone()
    {
        row.pid = d.pid;
        row.era = d.protocol_version.as_deref().map(era);
        row.protocol_version = d.protocol_version;
        row.tools = Some(d.tools);
        row.server_info = d.info;
    }
    row
}

fn pool_crash_loop(pool: &Pool, key: &McpServerKey) -> Option<CrashLoopRow> {
    pool.iter()
        .filter(|(k, _)| &k.server == key)
        .find_map(|(_, status)| match status {
            mcp_connections::ConnectionStatus::CrashLoop {
                failures, retry_in, ..
            } if *failures > 1 => Some(CrashLoopRow {
                crashes: *failures,
                retry_in_ms: millis(*retry_in),
            }),
            _ => None,
        })
}

fn era(version: &str) -> &'static str {
    mcp_client::Era::of_version(version).as_str()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn calls_row(log: &CallLog, now: Instant) -> CallsRow {
    let recent: Vec<&(Instant, Duration, bool)> = log
        .recent
        .iter()
        .filter(|(ended, _, _)| now.saturating_duration_since(*ended) <= WINDOW)
        .collect();
    let mut latencies: Vec<Duration> = recent.iter().map(|(_, d, _)| *d).collect();
    latencies.sort_unstable();
    CallsRow {
        total: log.total,
        errors: log.errors,
        window: WindowCalls {
            calls: recent.len(),
            errors: recent.iter().filter(|(_, _, failed)| *failed).count(),
            p50_ms: percentile(&latencies, 50),
            p99_ms: percentile(&latencies, 99),
        },
    }
}

/// The nearest-rank `p`th percentile of `sorted`, in milliseconds (to the microsecond).
fn percentile(sorted: &[Duration], p: usize) -> Option<f64> {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    let d = sorted.get(rank - 1)?;
    #[expect(
        clippy::cast_precision_loss,
        reason = "microseconds of a call fit an f64 exactly"
    )]
    let micros = d.as_micros() as f64;
    Some(micros / 1000.0)
}

/// `GET /status` and `GET /status.json`, for the router behind the guard.
pub(crate) fn routes(hub: Arc<Hub>) -> axum::Router {
    axum::Router::new()
        .route("/status", axum::routing::get(page))
        .route("/status.json", axum::routing::get(json))
        .with_state(hub)
}

/// Scripts never run, nothing is loaded from elsewhere, and no other site frames the page:
/// a second line of defence behind the escaping.
const PAGE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The caller the guard found for `request`; without its word, nobody.
fn caller_of(request: &axum::extract::Request) -> Arc<Caller> {
    request
        .extensions()
        .get::<Arc<Caller>>()
        .cloned()
        .unwrap_or_else(|| Arc::new(Caller::nobody()))
}

async fn page(
    axum::extract::State(hub): axum::extract::State<Arc<Hub>>,
    request: axum::extract::Request,
) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, PAGE_POLICY),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        page::html(&snapshot(&hub, &caller_of(&request))),
    )
        .into_response()
}

async fn json(
    axum::extract::State(hub): axum::extract::State<Arc<Hub>>,
    request: axum::extract::Request,
) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(snapshot(&hub, &caller_of(&request))),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted = ms(&(1..=100).collect::<Vec<_>>());
        assert_eq!(percentile(&sorted, 50), Some(50.0));
        assert_eq!(percentile(&sorted, 99), Some(99.0));
        assert_eq!(percentile(&ms(&[7]), 99), Some(7.0));
        assert_eq!(percentile(&ms(&[1, 2, 3]), 50), Some(2.0));
        assert_eq!(percentile(&[], 50), None);
    }

    #[test]
    fn the_window_keeps_the_last_calls_of_the_last_minutes() {
        let shared = Shared::default();
        let key: McpServerKey = "echo".parse().unwrap();
        for i in 0..(WINDOW_CALLS + 10) {
            shared.record(&key, Duration::from_millis(10), i % 2 == 0);
        }
        let calls = lock(&shared.calls);
        let log = calls.get(&key).unwrap();
        assert_eq!(log.recent.len(), WINDOW_CALLS, "bounded");
        let row = calls_row(log, Instant::now());
        assert_eq!((row.total, row.errors), (WINDOW_CALLS as u64 + 10, 261));
        assert_eq!((row.window.calls, row.window.errors), (WINDOW_CALLS, 256));
        assert_eq!(row.window.p50_ms, Some(10.0));
        // Calls that ended before the window are no longer in it; the totals stay.
        let later = calls_row(log, Instant::now() + WINDOW + Duration::from_secs(1));
        assert_eq!((later.window.calls, later.window.p99_ms), (0, None));
        assert_eq!(later.total, WINDOW_CALLS as u64 + 10);
    }

    /// A snapshot with hostile text in every server-supplied field.
    pub(super) fn hostile_snapshot() -> Snapshot {
        let hostile = "<script>alert(1)</script>\u{1b}]0;title\u{7}";
        let mut row = empty_row(&"evil".parse().unwrap(), "failed");
        row.transport = "stdio";
        row.error = Some(hostile.to_owned());
        row.reason_text = Some("exited with status 3".to_owned());
        row.stderr_tail = Some(format!("{hostile}\n<img src=x onerror=alert(2)>"));
        row.warnings = vec![format!("tool {hostile} is listed twice")];
        row.server_info = Some(InfoRow {
            name: hostile.to_owned(),
            version: "<b>1</b>".to_owned(),
            title: Some(hostile.to_owned()),
        });
        Snapshot {
            version: SHAPE_VERSION,
            mcpctl: "0.0.0",
            uptime_secs: 3725,
            window: WindowSpec {
                secs: 300,
                max_calls: WINDOW_CALLS,
            },
            clients: Clients {
                connected: 1,
                by_principal: vec![PrincipalClients {
                    principal: "<i>someone</i>".to_owned(),
                    clients: 1,
                    parked: 0,
                    tasks: 0,
                }],
                stateless_calls_in_flight: 0,
            },
            servers: vec![row],
        }
    }

    #[test]
    fn the_json_keeps_server_text_as_it_came() {
        let json = serde_json::to_value(hostile_snapshot()).unwrap();
        assert_eq!(
            json["servers"][0]["error"],
            "<script>alert(1)</script>\u{1b}]0;title\u{7}"
        );
        assert!(json["servers"][0].get("reason_text").is_none());
    }
}
