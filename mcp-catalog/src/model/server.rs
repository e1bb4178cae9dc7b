//! One configured server: transport plus the settings around it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use mcp_key::EnvironmentId;

use crate::model::defaults::ServerDefaults;
use crate::model::filter::ToolFilter;
use crate::model::log_level::LogLevel;
use crate::model::policy::{ProtocolChoice, StartupPolicy, ToolDriftPolicy};
use crate::model::transport::{HttpConfig, StdioConfig, Transport};

/// Default time allowed for create + initialize + first `tools/list` (`startup_timeout_sec`).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Default time allowed for one tool call (`tool_timeout_sec`).
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(300);

/// When a tool call needs the user's approval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ApprovalMode {
    /// A fixed rule on the tool's annotations (the default): ask when it is annotated
    /// destructive or carries neither a read-only nor a destructive hint; run it without
    /// asking when it is annotated read-only or not destructive
    /// (`mcp_connections::must_ask`).
    #[default]
    Auto,
    /// Always ask before calling.
    Prompt,
    /// Ask before calls that may write (tools not annotated read-only).
    Writes,
    /// Always approved without asking.
    Approve,
}

impl ApprovalMode {
    /// The text form used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Auto => "auto",
            ApprovalMode::Prompt => "prompt",
            ApprovalMode::Writes => "writes",
            ApprovalMode::Approve => "approve",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(ApprovalMode::Auto),
            "prompt" => Some(ApprovalMode::Prompt),
            "writes" => Some(ApprovalMode::Writes),
            "approve" => Some(ApprovalMode::Approve),
            _ => None,
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which tools a gateway in front of the catalog lists to its clients (`tool_exposure`,
/// catalog-wide; a command-line flag wins, default [`ToolExposure::All`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ToolExposure {
    /// Every tool of every server, under its qualified name. The default.
    #[default]
    All,
    /// A tool that searches the catalog and one that calls a tool by its qualified name,
    /// instead of every tool (for catalogs too large to send a model whole).
    Search,
}

impl ToolExposure {
    /// The text form used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolExposure::All => "all",
            ToolExposure::Search => "search",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "all" => Some(ToolExposure::All),
            "search" => Some(ToolExposure::Search),
            _ => None,
        }
    }
}

impl std::str::FromStr for ToolExposure {
    type Err = String;

    /// Parses `all` or `search`; the error says which values there are.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| format!("unknown tool exposure `{s}`: use `all` or `search`"))
    }
}

impl fmt::Display for ToolExposure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The configuration of one server (`[mcp_servers.<name>]`), independent of its name.
///
/// Build one in code with [`ServerConfig::stdio`] or [`ServerConfig::http`] and the
/// `with_*` setters, or from a transport's settings with `From`:
///
/// ```
/// use std::time::Duration;
/// use mcp_catalog::{ApprovalMode, ServerConfig};
/// let files = ServerConfig::stdio("npx")
///     .with_args(["-y", "@modelcontextprotocol/server-filesystem", "."])
///     .with_tool_timeout(Duration::from_secs(60))
///     .with_tool_approval_mode("write_file", ApprovalMode::Prompt);
/// assert_eq!(files.approval_mode("write_file"), ApprovalMode::Prompt);
/// assert_eq!(files.approval_mode("read_file"), ApprovalMode::Auto);
///
/// use mcp_catalog::HttpConfig;
/// let tickets = ServerConfig::from(
///     HttpConfig::new("https://tickets.example.com/mcp").with_bearer_token_env_var("TOKEN"),
/// );
/// assert!(tickets.transport().as_http().is_some());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    pub(crate) transport: Transport,
    pub(crate) startup_timeout: Duration,
    pub(crate) tool_timeout: Duration,
    pub(crate) tool_filter: ToolFilter,
    pub(crate) required: bool,
    pub(crate) enabled: bool,
    pub(crate) environment: EnvironmentId,
    pub(crate) supports_parallel_tool_calls: bool,
    pub(crate) default_approval_mode: ApprovalMode,
    pub(crate) tool_approval_modes: BTreeMap<String, ApprovalMode>,
    pub(crate) description: Option<String>,
    /// Its own values of the settings it otherwise inherits from the catalog.
    pub(crate) overrides: ServerDefaults,
    pub(crate) tool_cache: bool,
    /// `always_load`: every tool of the server is listed beside the search tools in
    /// search mode.
    pub(crate) always_load: bool,
    /// `always_load_tools`: these raw tool names are listed beside the search tools.
    pub(crate) always_load_tools: BTreeSet<String>,
}

impl ServerConfig {
    /// A server with this transport and every other setting at its default.
    pub fn new(transport: Transport) -> Self {
        Self {
            transport,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            tool_filter: ToolFilter::new(),
            required: false,
            enabled: true,
            environment: EnvironmentId::LOCAL,
            supports_parallel_tool_calls: false,
            default_approval_mode: ApprovalMode::Auto,
            tool_approval_modes: BTreeMap::new(),
            description: None,
            overrides: ServerDefaults::new(),
            tool_cache: true,
            always_load: false,
            always_load_tools: BTreeSet::new(),
        }
    }

    /// A stdio server running `command`.
    pub fn stdio(command: impl Into<String>) -> Self {
        Self::new(Transport::Stdio(StdioConfig::new(command)))
    }

    /// A streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        Self::new(Transport::StreamableHttp(HttpConfig::new(url)))
    }

    /// A legacy HTTP+SSE server whose event stream is at `url`.
    pub fn sse(url: impl Into<String>) -> Self {
        Self::new(Transport::Sse(HttpConfig::new(url)))
    }

    /// Replaces the transport.
    #[must_use]
    pub fn with_transport(mut self, transport: Transport) -> Self {
        self.transport = transport;
        self
    }

    /// Sets the arguments of a stdio server (no effect on an HTTP server).
    #[must_use]
    pub fn with_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Transport::Stdio(stdio) = &mut self.transport {
            stdio.args = args.into_iter().map(Into::into).collect();
        }
        self
    }

    /// Sets the startup timeout (zero is replaced by the default).
    #[must_use]
    pub fn with_startup_timeout(mut self, timeout: Duration) -> Self {
        self.startup_timeout = if timeout.is_zero() {
            DEFAULT_STARTUP_TIMEOUT
        } else {
            timeout
        };
        self
    }

    /// Sets the per-call timeout (zero is replaced by the default).
    #[must_use]
    pub fn with_tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = if timeout.is_zero() {
            DEFAULT_TOOL_TIMEOUT
        } else {
            timeout
        };
        self
    }

    /// Sets the tool filter.
    #[must_use]
    pub fn with_tool_filter(mut self, filter: ToolFilter) -> Self {
        self.tool_filter = filter;
        self
    }

    /// Marks the server as required: startup fails as a whole if it fails.
    #[must_use]
    pub fn with_required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Enables or disables the server (`enabled = false` vetoes it when it wins).
    #[must_use]
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Sets the environment the server runs in.
    #[must_use]
    pub fn with_environment(mut self, environment: EnvironmentId) -> Self {
        self.environment = environment;
        self
    }

    /// Declares whether the server handles concurrent tool calls.
    #[must_use]
    pub fn with_supports_parallel_tool_calls(mut self, supports: bool) -> Self {
        self.supports_parallel_tool_calls = supports;
        self
    }

    /// Sets the approval mode for tools without their own.
    #[must_use]
    pub fn with_default_approval_mode(mut self, mode: ApprovalMode) -> Self {
        self.default_approval_mode = mode;
        self
    }

    /// Sets the approval mode of one tool (raw name).
    #[must_use]
    pub fn with_tool_approval_mode(mut self, tool: impl Into<String>, mode: ApprovalMode) -> Self {
        self.tool_approval_modes.insert(tool.into(), mode);
        self
    }

    /// Sets a human-readable description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets this server's startup policy (`startup`), overriding the catalog-wide
    /// `mcp_startup`.
    #[must_use]
    pub fn with_startup_policy(mut self, policy: StartupPolicy) -> Self {
        self.overrides = self.overrides.with_startup_policy(policy);
        self
    }

    /// Sets the protocol era to speak with this server (`protocol`), overriding the
    /// catalog-wide `mcp_protocol`.
    #[must_use]
    pub fn with_protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.overrides = self.overrides.with_protocol(protocol);
        self
    }

    /// This server's own `protocol`, `None` when not written (the catalog-wide value, else
    /// `auto`, applies: [`ResolvedCatalog::protocol`](crate::ResolvedCatalog::protocol)).
    pub fn protocol(&self) -> Option<ProtocolChoice> {
        self.overrides.protocol()
    }

    /// Sets what happens when one of its tools changes since it was pinned (`tool_drift`);
    /// wins over the catalog-wide value.
    #[must_use]
    pub fn with_tool_drift(mut self, policy: ToolDriftPolicy) -> Self {
        self.overrides = self.overrides.with_tool_drift(policy);
        self
    }

    /// Its own `tool_drift`, `None` when not written (the catalog-wide value applies).
    pub fn tool_drift(&self) -> Option<ToolDriftPolicy> {
        self.overrides.tool_drift()
    }

    /// Sets the least severe level of log messages this server should send (`log_level`),
    /// overriding the catalog-wide value; `None` leaves it to the catalog-wide value.
    #[must_use]
    pub fn with_log_level(mut self, level: Option<LogLevel>) -> Self {
        self.overrides.log_level = level;
        self
    }

    /// Its own `log_level`, `None` when not written (the catalog-wide value applies:
    /// [`ResolvedCatalog::log_level`](crate::ResolvedCatalog::log_level)).
    pub fn log_level(&self) -> Option<LogLevel> {
        self.overrides.log_level()
    }

    /// Lets the tool catalog cache keep this server's tools (`tool_cache`, default `true`),
    /// or opts the server out of it.
    #[must_use]
    pub fn with_tool_cache(mut self, enabled: bool) -> Self {
        self.tool_cache = enabled;
        self
    }

    /// Lists every tool of the server beside the search tools when a host exposes tools
    /// through search (`always_load`, default `false`): for the few tools a model needs in
    /// every conversation.
    #[must_use]
    pub fn with_always_load(mut self, always: bool) -> Self {
        self.always_load = always;
        self
    }

    /// Lists these tools (raw names) beside the search tools when a host exposes tools
    /// through search (`always_load_tools`, default none); adds to any set before.
    #[must_use]
    pub fn with_always_load_tools<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.always_load_tools
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// Whether every tool of the server is always loaded (`always_load`).
    pub fn always_load(&self) -> bool {
        self.always_load
    }

    /// The tools always loaded by name (`always_load_tools`).
    pub fn always_load_tools(&self) -> &BTreeSet<String> {
        &self.always_load_tools
    }

    /// Whether the tool with this raw name is listed beside the search tools in search
    /// mode: the server is `always_load`, or `always_load_tools` names it.
    ///
    /// ```
    /// use mcp_catalog::ServerConfig;
    /// let files = ServerConfig::stdio("files").with_always_load_tools(["read_file"]);
    /// assert!(files.always_loads("read_file"));
    /// assert!(!files.always_loads("write_file"));
    /// assert!(ServerConfig::stdio("x").with_always_load(true).always_loads("anything"));
    /// ```
    pub fn always_loads(&self, raw_tool_name: &str) -> bool {
        self.always_load || self.always_load_tools.contains(raw_tool_name)
    }

    /// How to reach the server.
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Time allowed for create + initialize + first `tools/list`.
    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout
    }

    /// Time allowed for one tool call.
    pub fn tool_timeout(&self) -> Duration {
        self.tool_timeout
    }

    /// Which tools may be listed and called.
    pub fn tool_filter(&self) -> &ToolFilter {
        &self.tool_filter
    }

    /// Whether startup fails as a whole if this server fails.
    pub fn required(&self) -> bool {
        self.required
    }

    /// Whether the server is enabled in its own configuration.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The environment the server runs in (`local` by default).
    pub fn environment(&self) -> &EnvironmentId {
        &self.environment
    }

    /// Whether the server handles concurrent tool calls.
    pub fn supports_parallel_tool_calls(&self) -> bool {
        self.supports_parallel_tool_calls
    }

    /// The approval mode for tools without their own.
    pub fn default_approval_mode(&self) -> ApprovalMode {
        self.default_approval_mode
    }

    /// Per-tool approval modes (raw tool name -> mode).
    pub fn tool_approval_modes(&self) -> &BTreeMap<String, ApprovalMode> {
        &self.tool_approval_modes
    }

    /// The approval mode for one tool: its own, else the server default. An environment's
    /// `default_tools_approval_mode` is applied by
    /// [`ResolvedCatalog::approval_mode`](crate::ResolvedCatalog::approval_mode).
    pub fn approval_mode(&self, raw_tool_name: &str) -> ApprovalMode {
        self.tool_approval_modes
            .get(raw_tool_name)
            .copied()
            .unwrap_or(self.default_approval_mode)
    }

    /// The human-readable description, if any.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// This server's own startup policy (`startup`), `None` when it does not set one. The
    /// effective policy, with the catalog-wide `mcp_startup` applied, is
    /// [`ResolvedCatalog::startup_policy`](crate::ResolvedCatalog::startup_policy).
    pub fn startup_policy(&self) -> Option<StartupPolicy> {
        self.overrides.startup_policy()
    }

    /// Replaces its own values of the settings it otherwise inherits from the catalog
    /// (`startup`, `protocol`, `tool_drift`, ...).
    #[must_use]
    pub fn with_overrides(mut self, overrides: ServerDefaults) -> Self {
        self.overrides = overrides;
        self
    }

    /// Its own values of the settings it otherwise inherits from the catalog (each `None`
    /// when not written; the ones it ends up with:
    /// [`ResolvedCatalog::server_settings`](crate::ResolvedCatalog::server_settings)).
    pub fn overrides(&self) -> &ServerDefaults {
        &self.overrides
    }

    /// Whether the tool catalog cache may keep this server's tools (`tool_cache`, default
    /// `true`).
    pub fn tool_cache(&self) -> bool {
        self.tool_cache
    }
}

impl From<Transport> for ServerConfig {
    fn from(transport: Transport) -> Self {
        Self::new(transport)
    }
}

impl From<StdioConfig> for ServerConfig {
    fn from(stdio: StdioConfig) -> Self {
        Self::new(Transport::Stdio(stdio))
    }
}

impl From<HttpConfig> for ServerConfig {
    fn from(http: HttpConfig) -> Self {
        Self::new(Transport::StreamableHttp(http))
    }
}
