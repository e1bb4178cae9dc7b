//! The values of the settings a server inherits from the catalog
//! ([`ServerDefaults`](crate::ServerDefaults)): when it starts, which protocol era it
//! speaks, what happens when one of its tools changes. (Its log level is `log_level.rs`.)

use std::fmt;

/// When a server starts (`startup`, per server, or `mcp_startup`, catalog-wide).
///
/// A server's own `startup` wins over the catalog-wide `mcp_startup`; with neither written
/// the policy is [`StartupPolicy::Eager`] (see
/// [`ResolvedCatalog::startup_policy`](crate::ResolvedCatalog::startup_policy)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum StartupPolicy {
    /// Start with every other server when the connection set is built. The default.
    #[default]
    Eager,
    /// When the tool catalog cache holds this server's tools, show the cached tools and
    /// start the server only on first use; without a cached catalog, start eagerly.
    LazyWhenCached,
}

impl StartupPolicy {
    /// The text form used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            StartupPolicy::Eager => "eager",
            StartupPolicy::LazyWhenCached => "lazy_when_cached",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "eager" => Some(StartupPolicy::Eager),
            "lazy_when_cached" => Some(StartupPolicy::LazyWhenCached),
            _ => None,
        }
    }
}

impl fmt::Display for StartupPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which MCP protocol era to speak with a server (`protocol`, per server, or
/// `mcp_protocol`, catalog-wide; a server's own value wins, default [`ProtocolChoice::Auto`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolChoice {
    /// Try MCP 2026-07-28 (`server/discover`) and fall back to the 2025-11-25 `initialize`
    /// handshake for a server of the older era. The default.
    #[default]
    Auto,
    /// Only MCP 2026-07-28 (`server/discover`, stateless requests).
    V2026_07_28,
    /// Only the 2025-11-25 `initialize` handshake (and the versions before it the server
    /// may answer with).
    V2025_11_25,
}

impl ProtocolChoice {
    /// The text form used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolChoice::Auto => "auto",
            ProtocolChoice::V2026_07_28 => "2026-07-28",
            ProtocolChoice::V2025_11_25 => "2025-11-25",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(ProtocolChoice::Auto),
            "2026-07-28" => Some(ProtocolChoice::V2026_07_28),
            "2025-11-25" => Some(ProtocolChoice::V2025_11_25),
            _ => None,
        }
    }
}

impl fmt::Display for ProtocolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens when a tool's definition changes since it was pinned (`tool_drift`, per
/// server, or catalog-wide; a server's own value wins, default
/// [`ToolDriftPolicy::Reapprove`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ToolDriftPolicy {
    /// Every change is reported and the new definition pinned; nothing is held back.
    Notice,
    /// Changes that add risk (a new tool, a wider input schema, annotations that say less
    /// safe, a tool the model now sees, a text the model reads changed beyond spacing and
    /// punctuation) hold the tool back until the user accepts it, which a host may ask
    /// in-band; other changes are reported and re-pinned. The default.
    #[default]
    Reapprove,
    /// Every change holds the tool back until it is accepted out of band (e.g. `mcpctl
    /// accept`); a host does not offer to accept it in the middle of a call.
    Block,
}

impl ToolDriftPolicy {
    /// The text form used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolDriftPolicy::Notice => "notice",
            ToolDriftPolicy::Reapprove => "reapprove",
            ToolDriftPolicy::Block => "block",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "notice" => Some(ToolDriftPolicy::Notice),
            "reapprove" => Some(ToolDriftPolicy::Reapprove),
            "block" => Some(ToolDriftPolicy::Block),
            _ => None,
        }
    }
}

impl fmt::Display for ToolDriftPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
