//! The settings a server inherits from the catalog: one struct, held catalog-wide by
//! [`Config`](crate::Config) and as each server's own overrides by
//! [`ServerConfig`](crate::ServerConfig), resolved by one function
//! ([`ServerDefaults::inherit`]).
//!
//! Adding an inheritable setting is a field here (with its setter, its accessor, its line
//! in `inherit`, `KEYS` and `values`) plus the line that parses it
//! (`formats/toml_defaults.rs`).

use crate::model::log_level::LogLevel;
use crate::model::policy::{ProtocolChoice, StartupPolicy, ToolDriftPolicy};

/// The name of each inheritable setting: catalog-wide (top level of the configuration)
/// and in a server's own table, in the order [`ServerDefaults::values`] gives them (the
/// order the export writes them in).
pub(crate) const KEYS: [(&str, &str); 4] = [
    ("mcp_startup", "startup"),
    ("mcp_protocol", "protocol"),
    ("tool_drift", "tool_drift"),
    ("log_level", "log_level"),
];

/// Settings a server may write for itself and the catalog may write for every server:
/// a server's own value wins, else the catalog-wide one, else the setting's default.
///
/// Every setting is `None` when not written, so that layering a second configuration
/// (e.g. a project `.mcp.json`) does not reset it, and a server without its own value
/// inherits. [`Config::server_defaults`](crate::Config::server_defaults) holds the
/// catalog-wide values, [`ServerConfig::overrides`](crate::ServerConfig::overrides) a
/// server's own, [`ResolvedCatalog::server_settings`](crate::ResolvedCatalog::server_settings)
/// the ones a server ends up with.
///
/// ```
/// use mcp_catalog::{ServerDefaults, StartupPolicy, ToolDriftPolicy};
///
/// let catalog = ServerDefaults::new()
///     .with_startup_policy(StartupPolicy::LazyWhenCached)
///     .with_tool_drift(ToolDriftPolicy::Block);
/// let own = ServerDefaults::new().with_tool_drift(ToolDriftPolicy::Notice);
/// let effective = own.inherit(&catalog);
/// assert_eq!(effective.startup_policy(), Some(StartupPolicy::LazyWhenCached));
/// assert_eq!(effective.tool_drift(), Some(ToolDriftPolicy::Notice));
/// assert_eq!(effective.protocol(), None); // neither writes one: the default applies
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ServerDefaults {
    pub(crate) startup_policy: Option<StartupPolicy>,
    pub(crate) protocol: Option<ProtocolChoice>,
    pub(crate) tool_drift: Option<ToolDriftPolicy>,
    pub(crate) log_level: Option<LogLevel>,
}

impl ServerDefaults {
    /// No setting written: every one inherits (or takes its default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Each setting `self` writes, else the one `fallback` writes: a server's own values
    /// over the catalog's (`own.inherit(&catalog)`), a later configuration file's over an
    /// earlier one's.
    #[must_use]
    pub fn inherit(self, fallback: &ServerDefaults) -> ServerDefaults {
        ServerDefaults {
            startup_policy: self.startup_policy.or(fallback.startup_policy),
            protocol: self.protocol.or(fallback.protocol),
            tool_drift: self.tool_drift.or(fallback.tool_drift),
            log_level: self.log_level.or(fallback.log_level),
        }
    }

    /// The written values as configuration text, in the order of [`KEYS`] (`None`: not
    /// written).
    pub(crate) fn values(&self) -> [Option<&'static str>; KEYS.len()] {
        [
            self.startup_policy.map(StartupPolicy::as_str),
            self.protocol.map(ProtocolChoice::as_str),
            self.tool_drift.map(ToolDriftPolicy::as_str),
            self.log_level.map(LogLevel::as_str),
        ]
    }

    /// Sets when the server starts (`startup` per server, `mcp_startup` catalog-wide;
    /// default [`StartupPolicy::Eager`]).
    #[must_use]
    pub fn with_startup_policy(mut self, policy: StartupPolicy) -> Self {
        self.startup_policy = Some(policy);
        self
    }

    /// When the server starts, `None` when not written.
    pub fn startup_policy(&self) -> Option<StartupPolicy> {
        self.startup_policy
    }

    /// Sets the protocol era to speak (`protocol` per server, `mcp_protocol` catalog-wide;
    /// default [`ProtocolChoice::Auto`]).
    #[must_use]
    pub fn with_protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.protocol = Some(protocol);
        self
    }

    /// The protocol era, `None` when not written.
    pub fn protocol(&self) -> Option<ProtocolChoice> {
        self.protocol
    }

    /// Sets what happens when a tool changes since it was pinned (`tool_drift`, per server
    /// and catalog-wide; default [`ToolDriftPolicy::Reapprove`]).
    #[must_use]
    pub fn with_tool_drift(mut self, policy: ToolDriftPolicy) -> Self {
        self.tool_drift = Some(policy);
        self
    }

    /// The tool drift policy, `None` when not written.
    pub fn tool_drift(&self) -> Option<ToolDriftPolicy> {
        self.tool_drift
    }

    /// Sets the least severe level of log messages the server should send (`log_level`,
    /// per server and catalog-wide; default none: the server keeps its own level).
    #[must_use]
    pub fn with_log_level(mut self, level: LogLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// The log level, `None` when not written.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.log_level
    }
}
