//! One server's slot in the set: its state machine and its live connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::Tool;
use rmcp::service::{Peer, RunningService};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::StartupFailure;
use crate::events::FailureReason;
use crate::handler::{ConnectionShared, Handler};
use crate::spec::ServerSpec;
use crate::stdio::Process;

/// Where a server is in its life.
#[derive(Clone)]
pub(crate) enum SlotState {
    /// A start is running.
    Starting,
    /// Initialized and listed.
    Ready(Arc<Live>),
    /// The last start failed, or the live connection died.
    Failed(StartupFailure),
    /// The start was cancelled.
    Cancelled,
}

impl SlotState {
    pub(crate) fn is_settled(&self) -> bool {
        !matches!(self, Self::Starting)
    }

    /// The state for a message that already names the server.
    pub(crate) fn describe(&self, key: &mcp_key::McpServerKey) -> String {
        match self {
            Self::Starting => "still starting".to_owned(),
            Self::Ready(_) => "ready".to_owned(),
            Self::Failed(f) => {
                let text = f.to_string();
                let prefix = format!("MCP server `{key}`");
                let text = text.strip_prefix(&prefix).map_or(text.as_str(), |rest| {
                    rest.trim_start_matches(':').trim_start()
                });
                format!("it failed ({}): {text}", f.reason().label())
            }
            Self::Cancelled => "startup was cancelled".to_owned(),
        }
    }
}

/// A connection that completed startup.
pub(crate) struct Live {
    pub(crate) peer: Peer<RoleClient>,
    pub(crate) shared: Arc<ConnectionShared>,
    pub(crate) instructions: Option<String>,
    /// The server's tools, one per raw name (see [`crate::tool_info::unique_tools`]).
    pub(crate) tools: RwLock<Arc<Vec<Tool>>>,
    /// What was wrong with the server's last tool list (duplicate or empty names).
    warnings: RwLock<Arc<Vec<String>>>,
    pub(crate) process: Option<Process>,
    pub(crate) started_at: Instant,
    /// Stops the connection's background tasks (exit monitor, list refresh).
    pub(crate) cancel: CancellationToken,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    dead: AtomicBool,
}

impl Live {
    pub(crate) fn new(
        service: RunningService<RoleClient, Handler>,
        shared: Arc<ConnectionShared>,
        tools: Vec<Tool>,
        process: Option<Process>,
        cancel: CancellationToken,
    ) -> Self {
        let instructions = service
            .peer()
            .peer_info()
            .and_then(|i| i.instructions.clone());
        let (tools, warnings) = crate::tool_info::unique_tools(&shared.key, tools);
        for warning in &warnings {
            tracing::warn!(server = %shared.key, "{warning}");
        }
        Self {
            peer: service.peer().clone(),
            shared,
            instructions,
            tools: RwLock::new(Arc::new(tools)),
            warnings: RwLock::new(Arc::new(warnings)),
            process,
            started_at: Instant::now(),
            cancel,
            service: tokio::sync::Mutex::new(Some(service)),
            dead: AtomicBool::new(false),
        }
    }

    pub(crate) fn tools(&self) -> Arc<Vec<Tool>> {
        match self.tools.read() {
            Ok(t) => Arc::clone(&t),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Warnings about the server's last tool list, each logged once when it first appears.
    pub(crate) fn warnings(&self) -> Arc<Vec<String>> {
        match self.warnings.read() {
            Ok(w) => Arc::clone(&w),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Replaces the tools with a new listing; logs the warnings the previous listing did
    /// not already have.
    pub(crate) fn set_tools(&self, tools: Vec<Tool>) {
        let (tools, warnings) = crate::tool_info::unique_tools(&self.shared.key, tools);
        let previous = self.warnings();
        for warning in warnings.iter().filter(|w| !previous.contains(w)) {
            tracing::warn!(server = %self.shared.key, "{warning}");
        }
        match self.warnings.write() {
            Ok(mut w) => *w = Arc::new(warnings),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(warnings),
        }
        match self.tools.write() {
            Ok(mut t) => *t = Arc::new(tools),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(tools),
        }
    }

    /// The process id (and process group id) of a stdio server.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Process::pid)
    }

    pub(crate) fn mark_dead(&self) {
        self.dead.store(true, Ordering::SeqCst);
    }

    pub(crate) fn is_alive(&self) -> bool {
        !self.dead.load(Ordering::SeqCst)
            && !self.peer.is_transport_closed()
            && self.process.as_ref().is_none_or(|p| !p.has_exited())
    }

    /// Closes the session and stops the process (escalating to SIGKILL). Idempotent.
    pub(crate) async fn shutdown(&self) {
        self.cancel.cancel();
        self.mark_dead();
        let service = self.service.lock().await.take();
        if let Some(service) = service {
            let _ = service.cancel().await;
        }
        if let Some(p) = &self.process {
            p.shutdown().await;
        }
    }

    /// Kills the process group at once (used when the set shuts down while a dead
    /// connection is still being stopped gracefully).
    pub(crate) async fn kill_and_reap(&self) {
        self.cancel.cancel();
        self.mark_dead();
        if let Some(p) = &self.process {
            p.kill_and_reap().await;
        }
    }

    /// The failure to report when this connection died on its own.
    pub(crate) async fn death(&self) -> StartupFailure {
        match &self.process {
            Some(p) => p.exit_failure().await,
            None => StartupFailure::new(FailureReason::Transport, "the connection was closed"),
        }
    }
}

/// Restart bookkeeping for crash loops.
#[derive(Debug, Default)]
struct Crashes {
    count: u32,
    next_attempt: Option<Instant>,
}

/// One configured server.
pub(crate) struct Slot {
    pub(crate) spec: ServerSpec,
    pub(crate) state: watch::Sender<SlotState>,
    /// Held while a start runs, so starts of one server never overlap (single flight).
    pub(crate) start_lock: tokio::sync::Mutex<()>,
    crashes: Mutex<Crashes>,
}

impl Slot {
    pub(crate) fn new(spec: ServerSpec) -> Self {
        Self {
            spec,
            state: watch::channel(SlotState::Starting).0,
            start_lock: tokio::sync::Mutex::new(()),
            crashes: Mutex::new(Crashes::default()),
        }
    }

    pub(crate) fn current(&self) -> SlotState {
        self.state.borrow().clone()
    }

    /// Waits until the state is settled (not `Starting`) and returns it.
    pub(crate) async fn settled(&self) -> SlotState {
        let mut rx = self.state.subscribe();
        match rx.wait_for(SlotState::is_settled).await {
            Ok(s) => s.clone(),
            Err(_) => SlotState::Cancelled,
        }
    }

    /// Records that a live connection died, and when the next restart may happen.
    pub(crate) fn record_crash(&self, lived: Duration, base: Duration, max: Duration) -> Duration {
        let Ok(mut c) = self.crashes.lock() else {
            return base;
        };
        if lived > max {
            c.count = 0;
        }
        c.count = c.count.saturating_add(1);
        let factor = 2u32.saturating_pow(c.count.saturating_sub(1).min(16));
        let delay = base.saturating_mul(factor).min(max);
        c.next_attempt = Some(Instant::now() + delay);
        delay
    }

    /// `None` if a restart may happen now, else how long until it may.
    pub(crate) fn restart_wait(&self) -> Option<Duration> {
        let c = self.crashes.lock().ok()?;
        let next = c.next_attempt?;
        let now = Instant::now();
        (next > now).then(|| next - now)
    }

    pub(crate) fn crash_count(&self) -> u32 {
        self.crashes.lock().map(|c| c.count).unwrap_or(0)
    }
}
