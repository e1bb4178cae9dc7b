//! The connection set's view of one configured server, derived from the catalog.

use std::time::Duration;

use mcp_key::McpServerKey;

/// Everything the set needs to start and use one server.
#[derive(Debug, Clone)]
pub(crate) struct ServerSpec {
    pub(crate) key: McpServerKey,
    pub(crate) transport: TransportSpec,
    pub(crate) startup_timeout: Duration,
    pub(crate) tool_timeout: Duration,
    pub(crate) filter: mcp_catalog::ToolFilter,
    pub(crate) required: bool,
    pub(crate) parallel_tool_calls: bool,
    /// The environment the server runs in, when it is not `local`.
    pub(crate) environment: Option<mcp_key::EnvironmentId>,
    /// Set when the server's environment cannot be used; startup fails with reason
    /// `environment`.
    pub(crate) environment_problem: Option<String>,
    /// What a change of one of its pinned tools does (`tool_drift`).
    pub(crate) tool_drift: mcp_catalog::ToolDriftPolicy,
}

/// How to reach the server: the catalog's own transport model (the set translates it once,
/// into a `LaunchSpec` for stdio or the HTTP client's settings, when it starts the server).
/// [`TransportSpec::http`] gives the settings of either HTTP transport.
#[derive(Debug, Clone)]
pub(crate) enum TransportSpec {
    Stdio(mcp_catalog::StdioConfig),
    Http(mcp_catalog::HttpConfig),
    /// The legacy HTTP+SSE transport (MCP 2024-11-05); the URL is the event stream.
    Sse(mcp_catalog::HttpConfig),
    /// A server this version of the set cannot start, with why: an unknown transport kind
    /// or the catalog's located errors for an unusable entry. Fails with reason `config`.
    Unsupported(String),
    /// The configuration entry cannot be used: invalid, or a transport the catalog knows
    /// but the set does not (its errors, with file, line and column).
    Invalid(String),
}

impl TransportSpec {
    /// The HTTP settings of a streamable HTTP or legacy SSE server.
    pub(crate) fn http(&self) -> Option<&mcp_catalog::HttpConfig> {
        match self {
            TransportSpec::Http(http) | TransportSpec::Sse(http) => Some(http),
            _ => None,
        }
    }
}
