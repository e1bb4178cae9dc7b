//! Startup and catalog events a host can observe.

#![expect(
    deprecated,
    reason = "rmcp marks logging deprecated (SEP-2577), yet MCP 2025-11-25 defines notifications/message"
)]

use mcp_client::{FailureReason, ListenTopic};
use mcp_key::McpServerKey;
use serde::Serialize;

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
/// follow a `Failed`. `ToolsChanged`, `PromptsChanged`, `ResourcesChanged`, `ServerLog`
/// and the `Listen*` events may follow at any time after a server is ready.
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
    /// A server's tool list changed (after `notifications/tools/list_changed`), or its
    /// tools stopped being ready: it crashed, and its last listing stays in the catalog
    /// marked [`ToolInfo::ready`](crate::ToolInfo::ready) `false` (after the `Failed`
    /// event) until a call or [`ConnectionSet::ensure_started`](crate::ConnectionSet::ensure_started)
    /// brings it back (then `Ready`).
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
    /// A server's prompt list changed (after `notifications/prompts/list_changed`, a burst
    /// of them collected for the list-changed debounce): list the prompts again.
    PromptsChanged {
        /// The server.
        server: McpServerKey,
    },
    /// A server's resource list changed (after `notifications/resources/list_changed`,
    /// debounced like prompts): list the resources again.
    ResourcesChanged {
        /// The server.
        server: McpServerKey,
    },
    /// A log message of a server (`notifications/message`), also a `tracing` event under
    /// [`SERVER_LOG_TARGET`](mcp_client::SERVER_LOG_TARGET). Rate-limited per server (see
    /// [`mcp_client::LOG_RATE`]): `dropped` counts the messages held back before this one.
    ServerLog {
        /// The server.
        server: McpServerKey,
        /// The level, as the server sent it.
        level: rmcp::model::LoggingLevel,
        /// The logger, when the server named one.
        #[serde(skip_serializing_if = "Option::is_none")]
        logger: Option<String>,
        /// The message's data, unchanged.
        data: serde_json::Value,
        /// Messages of this server dropped (rate limit, or this set reading too slowly)
        /// since the last one delivered.
        dropped: u64,
    },
    /// A resource this set subscribed to ([`ConnectionSet::subscribe_resource`](crate::ConnectionSet::subscribe_resource)) changed:
    /// read it again to see how.
    ///
    /// [`ConnectionSet::subscribe_resource`]: crate::ConnectionSet::subscribe_resource
    ResourceUpdated {
        /// The server.
        server: McpServerKey,
        /// The resource.
        uri: String,
    },
    /// A `subscriptions/listen` request of a 2026-07-28 server broke (the server ended
    /// it, its stream failed or went silent for the listen stall, or opening it failed):
    /// the server's changes of `topic` go unseen until `ListenRestored`. The client opens
    /// it again with backoff for as long as the connection lives. Told once per loss; a
    /// set that starts using a connection whose listen is down hears it then.
    ListenLost {
        /// The server.
        server: McpServerKey,
        /// What the listen carries (a resource's updates only for resources this set
        /// subscribed to).
        topic: ListenTopic,
        /// Why it broke.
        reason: String,
    },
    /// A listen is open again after `ListenLost`. What it covers is refreshed as if it
    /// changed (the tools listed again, so a change made meanwhile comes as
    /// `ToolsChanged`; prompt and resource list changes and resource updates announced).
    ListenRestored {
        /// The server.
        server: McpServerKey,
        /// What the listen carries.
        topic: ListenTopic,
    },
    /// A 2026-07-28 server refused a `subscriptions/listen` request: it is not asked again
    /// on this connection, and its changes of `topic` go unseen (list the server again to
    /// see them). Told once; a set that starts using the connection later hears it then.
    ListenRefused {
        /// The server.
        server: McpServerKey,
        /// What the listen would have carried.
        topic: ListenTopic,
        /// What the server answered.
        reason: String,
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
            | Self::PromptsChanged { server }
            | Self::ResourcesChanged { server }
            | Self::ServerLog { server, .. }
            | Self::ResourceUpdated { server, .. }
            | Self::ListenLost { server, .. }
            | Self::ListenRestored { server, .. }
            | Self::ListenRefused { server, .. } => Some(server),
            Self::StartupComplete { .. } => None,
        }
    }
}
