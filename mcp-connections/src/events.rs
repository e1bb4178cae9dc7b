//! Startup and catalog events a host can observe.

use mcp_key::McpServerKey;
use serde::Serialize;

/// Why a server could not start (or stopped working).
///
/// Serialized as `{"kind": "exited", "status": 3}` and so on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureReason {
    /// Startup (create transport + initialize + first `tools/list`) did not finish within
    /// `startup_timeout_sec`.
    Timeout,
    /// The process could not be spawned (program missing, not executable, bad cwd).
    SpawnFailed,
    /// The process exited. `status` is its exit code, `signal` the signal that ended it.
    Exited {
        /// Exit code, when the process exited normally.
        status: Option<i32>,
        /// Signal number, when a signal ended the process.
        signal: Option<i32>,
    },
    /// The server broke the protocol: a bad handshake, garbage on stdout, an oversized
    /// line, a bad list page.
    Protocol,
    /// The HTTP server could not be reached or kept failing (connection refused, 5xx).
    Transport,
    /// The server needs the user to log in (HTTP 401).
    LoginRequired,
    /// Stored credentials exist but can no longer be used; the user must log in again.
    ReloginRequired,
    /// The enterprise identity provider refused to grant access for a server with
    /// enterprise-managed authorization (`auth = "ema"`): the enterprise login must be
    /// redone (`mcpctl login --enterprise`).
    EnterpriseReloginRequired,
    /// The server's execution environment is unknown or has no launcher.
    Environment,
    /// The server's configuration cannot be used as given (for example a missing
    /// environment variable it names).
    Config,
    /// Its start was cancelled (`cancel_startup`, the host's cancellation token, shutdown)
    /// before it finished.
    Cancelled,
    /// The machine of its ssh environment could not be reached (connection refused,
    /// timed out, no route, unknown host name). Restarted with backoff: the machine may
    /// come up.
    HostUnreachable,
    /// The machine of its ssh environment refused the login (`Permission denied`): the
    /// user or the key is wrong.
    AuthRefused,
    /// The host key of its ssh environment's machine is unknown or changed; it is never
    /// accepted silently.
    HostKeyRejected,
    /// The program was not found where it runs (exit status 127 from the remote shell or
    /// a wrapper's shell).
    CommandNotFound,
}

impl FailureReason {
    /// Whether the next use of the server restarts it (with backoff): after it exited or
    /// its transport failed, not after configuration, login or spawn problems.
    pub fn is_restartable(&self) -> bool {
        matches!(
            self,
            Self::Exited { .. } | Self::Transport | Self::HostUnreachable
        )
    }

    /// The short snake_case label used in events and CLI output (`timeout`, `exited`, ...).
    pub fn label(&self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::SpawnFailed => "spawn_failed",
            Self::Exited { .. } => "exited",
            Self::Protocol => "protocol",
            Self::Transport => "transport",
            Self::LoginRequired => "login_required",
            Self::ReloginRequired => "relogin_required",
            Self::EnterpriseReloginRequired => "enterprise_relogin_required",
            Self::Environment => "environment",
            Self::Config => "config",
            Self::Cancelled => "cancelled",
            Self::HostUnreachable => "host_unreachable",
            Self::AuthRefused => "auth_refused",
            Self::HostKeyRejected => "host_key_rejected",
            Self::CommandNotFound => "command_not_found",
        }
    }
}

impl std::fmt::Display for FailureReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exited {
                status: Some(code), ..
            } => write!(f, "exited with status {code}"),
            Self::Exited {
                signal: Some(sig), ..
            } => write!(f, "killed by signal {sig}"),
            other => f.write_str(other.label()),
        }
    }
}

/// A server held back after failures in a row (deaths and failed starts, each counted
/// once by the pool however many sets saw it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CrashLoop {
    /// Failures in a row.
    pub crashes: u32,
    /// Time until the next start is allowed, as of when this was taken.
    #[serde(rename = "retry_in_ms", serialize_with = "millis")]
    pub retry_in: std::time::Duration,
}

fn millis<S: serde::Serializer>(d: &std::time::Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One event of the connection set, in the order the set emits them.
///
/// For each server: `Starting`, then exactly one of `Ready`, `Failed` or `Cancelled`
/// (a deferred server: `Deferred`, and `Starting` with its outcome on first use). After
/// every server of a startup round settled: one `StartupComplete`. A `CrashLoop` may
/// follow a `Failed`. `ToolsChanged` may follow
/// at any time after a server is ready.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ConnectionEvent {
    /// The server is starting (process spawn or HTTP connect begins).
    Starting {
        /// The server.
        server: McpServerKey,
    },
    /// The server is initialized and its tools are listed.
    Ready {
        /// The server.
        server: McpServerKey,
        /// Tools the server listed (before filters; each raw name counted once, empty
        /// names left out).
        tools: usize,
        /// The process id of a stdio server (for a wrapped server: the wrapper's, the
        /// process the launcher started); `None` for HTTP servers.
        #[serde(skip_serializing_if = "Option::is_none")]
        pid: Option<u32>,
        /// The process group of a stdio server: every process it started, unless one left
        /// the group (`setsid`). The launcher makes the server the leader of its own
        /// group, so today this equals `pid`; `None` for HTTP servers.
        #[serde(skip_serializing_if = "Option::is_none")]
        process_group: Option<u32>,
        /// The protocol version the server speaks: `2026-07-28` (the stateless era, after
        /// `server/discover`) or the version `initialize` agreed on.
        protocol_version: String,
    },
    /// The server failed to start.
    Failed {
        /// The server.
        server: McpServerKey,
        /// Human-readable error, including the stderr tail for stdio servers.
        error: String,
        /// Classified reason.
        reason: FailureReason,
    },
    /// The start was cancelled before it finished.
    Cancelled {
        /// The server.
        server: McpServerKey,
    },
    /// Every server of the startup round settled.
    StartupComplete {
        /// Servers that are ready, sorted.
        ready: Vec<McpServerKey>,
        /// Servers that failed, sorted.
        failed: Vec<McpServerKey>,
        /// Servers whose start was cancelled, sorted.
        cancelled: Vec<McpServerKey>,
    },
    /// The server keeps failing (it died or failed to start, again): it is held back
    /// until `retry_in` has passed, then the next use starts it. Follows its `Failed`.
    CrashLoop {
        /// The server.
        server: McpServerKey,
        /// The crash loop: failures in a row and the wait before the next start.
        #[serde(flatten)]
        crash_loop: CrashLoop,
    },
    /// A deferred server (policy `lazy_when_cached`) lists its tools from the catalog
    /// cache and starts on first use. Counts as settled for `StartupComplete`.
    Deferred {
        /// The server.
        server: McpServerKey,
        /// Tools in the cached listing (before filters).
        tools: usize,
    },
    /// A server's tool list changed (after `notifications/tools/list_changed`).
    ToolsChanged {
        /// The server.
        server: McpServerKey,
        /// The set's catalog revision after the change.
        revision: u64,
    },
    /// A server's listing differs from its pinned tools
    /// ([`ConnectionSetOptions::with_tool_pins`](crate::ConnectionSetOptions::with_tool_pins)):
    /// the changes that add risk keep their tools out of the catalog and uncallable until
    /// accepted ([`ConnectionSet::accept_tool_changes`](crate::ConnectionSet::accept_tool_changes));
    /// the others were re-pinned. Details: [`ConnectionSet::tool_drift`](crate::ConnectionSet::tool_drift).
    ToolsDrifted {
        /// The server.
        server: McpServerKey,
        /// Tools held back until accepted (raw names).
        held: Vec<String>,
        /// Tools whose change was only a notice, pinned as they are now.
        repinned: Vec<String>,
    },
    /// A resource this set subscribed to ([`ConnectionSet::subscribe_resource`]) changed:
    /// read it again to see how.
    ///
    /// [`ConnectionSet::subscribe_resource`]: crate::ConnectionSet::subscribe_resource
    ResourceUpdated {
        /// The server.
        server: McpServerKey,
        /// The resource.
        uri: String,
    },
}

impl ConnectionEvent {
    /// The server this event is about, if it is about one.
    pub fn server(&self) -> Option<&McpServerKey> {
        match self {
            Self::Starting { server }
            | Self::Ready { server, .. }
            | Self::Failed { server, .. }
            | Self::Cancelled { server }
            | Self::CrashLoop { server, .. }
            | Self::Deferred { server, .. }
            | Self::ToolsChanged { server, .. }
            | Self::ToolsDrifted { server, .. }
            | Self::ResourceUpdated { server, .. } => Some(server),
            Self::StartupComplete { .. } => None,
        }
    }
}
