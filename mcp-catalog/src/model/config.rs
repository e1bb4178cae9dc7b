//! The whole user configuration: top-level settings, environments, servers, plugins.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use mcp_key::{EnvironmentId, ServerName};

use crate::diagnostic::{ConfigError, ConfigErrors, ConfigWarning};
use crate::model::defaults::ServerDefaults;
use crate::model::format::ConfigFormat;
use crate::model::gateway::GatewayConfig;
use crate::model::log_level::LogLevel;
use crate::model::policy::{ProtocolChoice, StartupPolicy, ToolDriftPolicy};
use crate::model::server::{ApprovalMode, ServerConfig, ToolExposure};
use crate::model::ssh::SshConfig;
use crate::model::transport::{Transport, UnusableServer};

/// Where OAuth credentials are stored (`credentials_store`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CredentialsStore {
    /// The OS keyring when available, else a file (the default).
    #[default]
    Auto,
    /// The OS keyring only.
    Keyring,
    /// A file only.
    File,
}

impl CredentialsStore {
    /// The text form used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialsStore::Auto => "auto",
            CredentialsStore::Keyring => "keyring",
            CredentialsStore::File => "file",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(CredentialsStore::Auto),
            "keyring" => Some(CredentialsStore::Keyring),
            "file" => Some(CredentialsStore::File),
            _ => None,
        }
    }
}

impl fmt::Display for CredentialsStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens to a server's `elicitation/create` requests (`elicitation` of an
/// environment).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElicitationPolicy {
    /// Forward them to the host's elicitation handler (the default).
    #[default]
    Ask,
    /// Decline them without asking.
    Decline,
}

impl ElicitationPolicy {
    /// The text form used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationPolicy::Ask => "ask",
            ElicitationPolicy::Decline => "decline",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "ask" => Some(ElicitationPolicy::Ask),
            "decline" => Some(ElicitationPolicy::Decline),
            _ => None,
        }
    }
}

impl fmt::Display for ElicitationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An execution environment other than the host itself (`[environments.<id>]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvironmentConfig {
    pub(crate) wrapper: Vec<String>,
    pub(crate) ssh: Option<SshConfig>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) default_approval_mode: Option<ApprovalMode>,
    pub(crate) elicitation: Option<ElicitationPolicy>,
}

impl EnvironmentConfig {
    /// An environment with no wrapper, working directory or variables.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the command prefix stdio servers of this environment run behind
    /// (e.g. `["ssh", "devbox", "--"]`).
    #[must_use]
    pub fn with_wrapper<I, S>(mut self, wrapper: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.wrapper = wrapper.into_iter().map(Into::into).collect();
        self
    }

    /// Runs the stdio servers of this environment on another machine over ssh (see
    /// [`SshConfig`]); used instead of a wrapper.
    #[must_use]
    pub fn with_ssh(mut self, ssh: SshConfig) -> Self {
        self.ssh = Some(ssh);
        self
    }

    /// The ssh settings, when the environment is an ssh one.
    pub fn ssh(&self) -> Option<&SshConfig> {
        self.ssh.as_ref()
    }

    /// Sets the default working directory there.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds a literal environment variable for every server of this environment.
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// Sets an approval mode that overrides the default of servers in this environment
    /// (per-tool modes still win).
    #[must_use]
    pub fn with_default_approval_mode(mut self, mode: ApprovalMode) -> Self {
        self.default_approval_mode = Some(mode);
        self
    }

    /// Sets the elicitation policy for servers of this environment.
    #[must_use]
    pub fn with_elicitation(mut self, policy: ElicitationPolicy) -> Self {
        self.elicitation = Some(policy);
        self
    }

    /// The elicitation policy, if set (hosts default to [`ElicitationPolicy::Ask`]).
    pub fn elicitation(&self) -> Option<ElicitationPolicy> {
        self.elicitation
    }

    /// The command prefix for stdio servers (empty: none).
    pub fn wrapper(&self) -> &[String] {
        &self.wrapper
    }

    /// The default working directory, if set.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// Literal environment variables for every server of this environment.
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }

    /// The environment-wide approval mode, if set.
    pub fn default_approval_mode(&self) -> Option<ApprovalMode> {
        self.default_approval_mode
    }
}

/// A plugin to load (`[[plugins]]`); loading itself is done elsewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginRef {
    pub(crate) path: PathBuf,
    pub(crate) environments: Vec<EnvironmentId>,
}

impl PluginRef {
    /// A plugin at `path`, installed in the `local` environment only.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            environments: Vec::new(),
        }
    }

    /// Sets the environments the plugin is installed in.
    #[must_use]
    pub fn with_environments<I: IntoIterator<Item = EnvironmentId>>(mut self, envs: I) -> Self {
        self.environments = envs.into_iter().collect();
        self
    }

    /// Where the plugin lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The environments it is installed in (empty: `local` only).
    pub fn environments(&self) -> &[EnvironmentId] {
        &self.environments
    }
}

/// A parsed and validated user configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    // Top-level settings are `None` when not written, so that layering a second
    // configuration (e.g. a project `.mcp.json`) does not reset them to defaults.
    pub(crate) credentials_store: Option<CredentialsStore>,
    pub(crate) oauth_callback_port: Option<u16>,
    pub(crate) tool_name_prefix: Option<bool>,
    pub(crate) multi_environment: Option<bool>,
    /// The settings every server inherits unless it writes its own.
    pub(crate) defaults: ServerDefaults,
    pub(crate) tool_exposure: Option<ToolExposure>,
    pub(crate) gateway: Option<GatewayConfig>,
    pub(crate) environments: BTreeMap<EnvironmentId, EnvironmentConfig>,
    pub(crate) servers: BTreeMap<ServerName, ServerConfig>,
    pub(crate) plugins: Vec<PluginRef>,
}

impl Config {
    /// An empty configuration with every default (`tool_name_prefix = true`).
    pub fn new() -> Self {
        Self {
            credentials_store: None,
            oauth_callback_port: None,
            tool_name_prefix: None,
            multi_environment: None,
            defaults: ServerDefaults::new(),
            tool_exposure: None,
            gateway: None,
            environments: BTreeMap::new(),
            servers: BTreeMap::new(),
            plugins: Vec::new(),
        }
    }

    /// Adds (or replaces) a server.
    #[must_use]
    pub fn with_server(mut self, name: ServerName, server: ServerConfig) -> Self {
        self.servers.insert(name, server);
        self
    }

    /// Adds (or replaces) an environment.
    #[must_use]
    pub fn with_environment(mut self, id: EnvironmentId, environment: EnvironmentConfig) -> Self {
        self.environments.insert(id, environment);
        self
    }

    /// Turns multi-environment exposure on or off.
    #[must_use]
    pub fn with_multi_environment(mut self, on: bool) -> Self {
        self.multi_environment = Some(on);
        self
    }

    /// Turns the `mcp__` tool name prefix on or off.
    #[must_use]
    pub fn with_tool_name_prefix(mut self, on: bool) -> Self {
        self.tool_name_prefix = Some(on);
        self
    }

    /// Sets the catalog-wide startup policy (`mcp_startup`); a server's own `startup` wins.
    #[must_use]
    pub fn with_startup_policy(mut self, policy: StartupPolicy) -> Self {
        self.defaults = self.defaults.with_startup_policy(policy);
        self
    }

    /// Sets the credential store mode.
    #[must_use]
    pub fn with_credentials_store(mut self, store: CredentialsStore) -> Self {
        self.credentials_store = Some(store);
        self
    }

    /// Where OAuth credentials are stored.
    pub fn credentials_store(&self) -> CredentialsStore {
        self.credentials_store.unwrap_or_default()
    }

    /// The fixed loopback port for OAuth callbacks (`None`: random).
    pub fn oauth_callback_port(&self) -> Option<u16> {
        self.oauth_callback_port
    }

    /// Whether qualified tool names carry the `mcp__` prefix.
    pub fn tool_name_prefix(&self) -> bool {
        self.tool_name_prefix.unwrap_or(true)
    }

    /// Whether environment-scoped servers are exposed.
    pub fn multi_environment(&self) -> bool {
        self.multi_environment.unwrap_or(false)
    }

    /// Sets the catalog-wide protocol era (`mcp_protocol`); a server's own `protocol` wins.
    #[must_use]
    pub fn with_protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.defaults = self.defaults.with_protocol(protocol);
        self
    }

    /// The catalog-wide protocol era (`mcp_protocol`), `None` when not written.
    pub fn protocol(&self) -> Option<ProtocolChoice> {
        self.defaults.protocol()
    }

    /// Sets the catalog-wide tool drift policy (`tool_drift`); a server's own value wins.
    #[must_use]
    pub fn with_tool_drift(mut self, policy: ToolDriftPolicy) -> Self {
        self.defaults = self.defaults.with_tool_drift(policy);
        self
    }

    /// The catalog-wide tool drift policy (`tool_drift`), `None` when not written.
    pub fn tool_drift(&self) -> Option<ToolDriftPolicy> {
        self.defaults.tool_drift()
    }

    /// Sets the catalog-wide least severe level of log messages servers should send
    /// (`log_level`); a server's own value wins. `None` writes no value.
    #[must_use]
    pub fn with_log_level(mut self, level: Option<LogLevel>) -> Self {
        self.defaults.log_level = level;
        self
    }

    /// The catalog-wide log level (`log_level`), `None` when not written.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.defaults.log_level()
    }

    /// Sets which tools a gateway lists (`tool_exposure`).
    #[must_use]
    pub fn with_tool_exposure(mut self, exposure: ToolExposure) -> Self {
        self.tool_exposure = Some(exposure);
        self
    }

    /// Which tools a gateway lists (`tool_exposure`), `None` when not written.
    pub fn tool_exposure(&self) -> Option<ToolExposure> {
        self.tool_exposure
    }

    /// Sets the `[gateway]` table.
    #[must_use]
    pub fn with_gateway(mut self, gateway: GatewayConfig) -> Self {
        self.gateway = Some(gateway);
        self
    }

    /// The `[gateway]` table, `None` when not written.
    pub fn gateway(&self) -> Option<&GatewayConfig> {
        self.gateway.as_ref()
    }

    /// The catalog-wide startup policy (`mcp_startup`), `None` when not written.
    pub fn startup_policy(&self) -> Option<StartupPolicy> {
        self.defaults.startup_policy()
    }

    /// Replaces the catalog-wide settings every server inherits unless it writes its own
    /// (`mcp_startup`, `mcp_protocol`, `tool_drift`, ...).
    #[must_use]
    pub fn with_server_defaults(mut self, defaults: ServerDefaults) -> Self {
        self.defaults = defaults;
        self
    }

    /// The catalog-wide settings every server inherits unless it writes its own (each
    /// `None` when not written).
    pub fn server_defaults(&self) -> &ServerDefaults {
        &self.defaults
    }

    /// Declared environments.
    pub fn environments(&self) -> &BTreeMap<EnvironmentId, EnvironmentConfig> {
        &self.environments
    }

    /// Servers by name.
    pub fn servers(&self) -> &BTreeMap<ServerName, ServerConfig> {
        &self.servers
    }

    /// Plugins to load.
    pub fn plugins(&self) -> &[PluginRef] {
        &self.plugins
    }

    /// Makes each named server [`Transport::Unusable`](crate::Transport::Unusable), keeping
    /// the settings of its entry that parsed (`enabled`, `required`, ...).
    pub(crate) fn mark_unusable(&mut self, unusable: BTreeMap<ServerName, UnusableServer>) {
        for (name, unusable) in unusable {
            let transport = Transport::Unusable(unusable);
            match self.servers.get_mut(&name) {
                Some(server) => server.transport = transport,
                None => {
                    self.servers.insert(name, ServerConfig::new(transport));
                }
            }
        }
    }

    /// Servers whose entry cannot be used ([`Transport::Unusable`](crate::Transport::Unusable)), by name.
    pub fn unusable_servers(&self) -> impl Iterator<Item = (&ServerName, &UnusableServer)> {
        self.servers
            .iter()
            .filter_map(|(name, server)| Some((name, server.transport().as_unusable()?)))
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

/// A configuration as loaded from one text, with its origin and warnings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedConfig {
    pub(crate) origin: String,
    pub(crate) config: Config,
    pub(crate) warnings: Vec<ConfigWarning>,
    pub(crate) format: Option<ConfigFormat>,
}

impl LoadedConfig {
    /// Wraps a configuration built in code (no warnings).
    pub fn new(origin: impl Into<String>, config: Config) -> Self {
        Self {
            origin: origin.into(),
            config,
            warnings: Vec::new(),
            format: None,
        }
    }

    /// The format the text was read as (`None` for a configuration built in code).
    pub fn format(&self) -> Option<ConfigFormat> {
        self.format
    }

    /// The file path or label it was loaded from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Takes the configuration out.
    pub fn into_config(self) -> Config {
        self.config
    }

    /// Fails with every error of every unusable server (see
    /// [`Config::unusable_servers`]), in document order; otherwise returns `self`.
    ///
    /// For callers that want the whole text rejected when any server entry is broken.
    pub fn into_strict(self) -> Result<Self, ConfigErrors> {
        let mut errors: Vec<ConfigError> = self
            .config
            .unusable_servers()
            .flat_map(|(_, unusable)| unusable.errors().iter().cloned())
            .collect();
        if errors.is_empty() {
            return Ok(self);
        }
        errors.sort_by(|a, b| {
            let key = |e: &ConfigError| (e.location().line(), e.location().column());
            key(a).cmp(&key(b))
        });
        Err(ConfigErrors::new(errors))
    }

    /// Non-fatal findings (unknown keys), in document order.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }
}
