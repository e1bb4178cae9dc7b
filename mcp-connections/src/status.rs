//! What a host reads of one server's state ([`ServerStatus`], [`ServerState`]) and of a
//! startup round ([`StartupSummary`]): plain values, taken from the set.

use mcp_client::StartupFailure;
use mcp_key::McpServerKey;

use crate::events::CrashLoop;

/// A summary of one server's state, for status displays.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The server.
    pub key: McpServerKey,
    /// Its state.
    pub state: ServerState,
    /// Whether the configuration marks it required.
    pub required: bool,
    /// How it is reached: `stdio`, `streamable_http`, `sse` (legacy HTTP+SSE) or
    /// `unusable` (its configuration entry is invalid), as
    /// [`Transport::label`](mcp_catalog::Transport::label) names them.
    pub transport: &'static str,
    /// What was wrong with a ready server's tool list: a raw name listed more than once
    /// (only the first tool of that name is offered) or an empty name (left out). Sorted;
    /// empty when nothing was wrong or the server is not ready. Each is also logged once
    /// with `tracing::warn!`.
    pub warnings: Vec<String>,
    /// The process id of a ready stdio server (for a wrapped server: the wrapper's, the
    /// process the launcher started). `None` for HTTP servers and for servers that are not
    /// ready (a failed server's process may still be stopping in the background).
    pub pid: Option<u32>,
    /// The process group of a ready stdio server: every process it started, unless one
    /// left the group (`setsid`). The launcher makes each server the leader of its own
    /// group, so today this equals `pid`; `None` when `pid` is.
    pub process_group: Option<u32>,
    /// The protocol version a ready server speaks (`2026-07-28` for the stateless era,
    /// else the version `initialize` agreed on); `None` when not ready.
    pub protocol_version: Option<String>,
    /// Set while a failed server that the next use restarts (it exited or lost its
    /// transport) is held back after failures in a row (deaths and failed starts): how
    /// many, and the wait before the next start.
    pub crash_loop: Option<CrashLoop>,
    /// The plugin that provided the server, if a plugin did.
    pub plugin: Option<crate::catalog::tool_info::PluginOrigin>,
}

/// The state part of a [`ServerStatus`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerState {
    /// Still starting.
    Starting,
    /// Ready, with this many tools listed (before filters).
    Ready {
        /// Tools listed by the server (each raw name counted once, empty names left out).
        tools: usize,
    },
    /// Failed.
    Failed(StartupFailure),
    /// Start cancelled (or the set shut down).
    Cancelled,
    /// Not started yet (policy `lazy_when_cached`): its tools come from the catalog cache
    /// and it starts on first use.
    Deferred {
        /// Tools in the cached listing (before filters).
        tools: usize,
        /// When the cached listing was fetched.
        cached_at: std::time::SystemTime,
    },
}

impl ServerState {
    /// The state in a few words, for a message that already names the server and keeps
    /// the failure as its source (`it failed (spawn_failed)`).
    pub(crate) fn in_words(&self) -> String {
        match self {
            Self::Starting => "still starting".to_owned(),
            Self::Deferred { .. } => "not started yet (its tools come from the cache)".to_owned(),
            Self::Ready { .. } => "ready".to_owned(),
            Self::Failed(f) => format!("it failed ({})", f.reason().label()),
            Self::Cancelled => "startup was cancelled".to_owned(),
        }
    }
}

/// What `wait_startup` returns: every server's settled state.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StartupSummary {
    /// Every server, sorted by key.
    pub servers: Vec<ServerStatus>,
}

impl StartupSummary {
    /// Number of ready servers.
    pub fn ready(&self) -> usize {
        self.count(|s| matches!(s, ServerState::Ready { .. }))
    }

    /// Number of failed servers.
    pub fn failed(&self) -> usize {
        self.count(|s| matches!(s, ServerState::Failed(_)))
    }

    fn count(&self, f: impl Fn(&ServerState) -> bool) -> usize {
        self.servers.iter().filter(|s| f(&s.state)).count()
    }
}
