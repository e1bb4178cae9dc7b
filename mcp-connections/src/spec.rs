//! The connection set's view of one configured server, derived from the catalog.

use std::collections::BTreeMap;
use std::path::PathBuf;
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
}

#[derive(Debug, Clone)]
pub(crate) enum TransportSpec {
    Stdio(StdioSpec),
    Http(HttpSpec),
    /// A transport this version of the set cannot start (named by kind).
    Unsupported(String),
}

#[derive(Debug, Clone)]
pub(crate) struct StdioSpec {
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) env_vars: Vec<String>,
    pub(crate) cwd: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub(crate) struct HttpSpec {
    pub(crate) url: String,
    pub(crate) bearer_token_env_var: Option<String>,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) env_headers: BTreeMap<String, String>,
    /// Whether stored OAuth credentials may be used (`auth` is not `none`/`ema`).
    pub(crate) oauth: bool,
    pub(crate) oauth_client_id: Option<String>,
    pub(crate) oauth_resource: Option<String>,
    pub(crate) scopes: Vec<String>,
    /// Credentials may go over plain http to a non-loopback host.
    pub(crate) allow_plain_http: bool,
}
