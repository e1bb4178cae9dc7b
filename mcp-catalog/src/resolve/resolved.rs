//! The immutable result of merging every source: one server per key.

use std::collections::BTreeMap;

use mcp_key::{EnvironmentId, Fingerprint, McpServerKey, ServerName};

use crate::diagnostic::ConfigWarning;
use crate::env::EnvLookup;
use crate::model::config::{CredentialsStore, ElicitationPolicy, EnvironmentConfig, PluginRef};
use crate::model::defaults::ServerDefaults;
use crate::model::fingerprint::connection_fingerprint;
use crate::model::gateway::GatewayConfig;
use crate::model::log_level::LogLevel;
use crate::model::policy::{ProtocolChoice, StartupPolicy, ToolDriftPolicy};
use crate::model::server::{ApprovalMode, ServerConfig, ToolExposure};
use crate::resolve::builder::{CatalogBuilder, Settings};
use crate::resolve::source::{Conflict, Source, VetoReason};

#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) config: ServerConfig,
    pub(crate) source: Source,
}

pub(crate) struct Parts {
    pub(crate) active: BTreeMap<McpServerKey, Entry>,
    pub(crate) vetoed: BTreeMap<McpServerKey, (VetoReason, Source)>,
    pub(crate) conflicts: Vec<Conflict>,
    pub(crate) warnings: Vec<ConfigWarning>,
    pub(crate) environments: BTreeMap<EnvironmentId, EnvironmentConfig>,
    pub(crate) settings: Settings,
    pub(crate) plugins: Vec<PluginRef>,
    pub(crate) builder: CatalogBuilder,
}

/// One winner per [`McpServerKey`] after precedence and vetoes. Immutable; extend it with
/// [`ResolvedCatalog::to_builder`].
///
/// Servers are listed in key order. Only active (non-vetoed) servers are listed; with
/// `multi_environment` off, a host starts and shows only [`ResolvedCatalog::exposed_keys`].
///
/// The legacy winner of a name (what name-only callers get) is, among active keys with
/// that name: the unscoped key; else the key scoped to `local`; else the smallest key
/// (environment ids compared as strings).
#[derive(Clone, Debug)]
pub struct ResolvedCatalog {
    active: BTreeMap<McpServerKey, Entry>,
    vetoed: BTreeMap<McpServerKey, (VetoReason, Source)>,
    legacy: BTreeMap<ServerName, McpServerKey>,
    conflicts: Vec<Conflict>,
    warnings: Vec<ConfigWarning>,
    environments: BTreeMap<EnvironmentId, EnvironmentConfig>,
    settings: Settings,
    plugins: Vec<PluginRef>,
    builder: CatalogBuilder,
}

impl ResolvedCatalog {
    pub(crate) fn new(parts: Parts) -> Self {
        let mut legacy: BTreeMap<ServerName, McpServerKey> = BTreeMap::new();
        for key in parts.active.keys() {
            let better = match legacy.get(key.name()) {
                None => true,
                Some(current) => legacy_rank(key) < legacy_rank(current),
            };
            if better {
                legacy.insert(key.name().clone(), key.clone());
            }
        }
        Self {
            active: parts.active,
            vetoed: parts.vetoed,
            legacy,
            conflicts: parts.conflicts,
            warnings: parts.warnings,
            environments: parts.environments,
            settings: parts.settings,
            plugins: parts.plugins,
            builder: parts.builder,
        }
    }

    /// Active servers in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&McpServerKey, &ServerConfig)> + '_ {
        self.active.iter().map(|(key, entry)| (key, &entry.config))
    }

    /// Same as [`ResolvedCatalog::iter`].
    pub fn servers(&self) -> impl Iterator<Item = (&McpServerKey, &ServerConfig)> + '_ {
        self.iter()
    }

    /// Number of active servers.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    /// True when no server is active.
    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// The active server with this key.
    pub fn get(&self, key: &McpServerKey) -> Option<&ServerConfig> {
        self.active.get(key).map(|entry| &entry.config)
    }

    /// The source whose registration won for this active key.
    pub fn source(&self, key: &McpServerKey) -> Option<&Source> {
        self.active.get(key).map(|entry| &entry.source)
    }

    /// Vetoed keys in key order, with the reason.
    pub fn vetoed(&self) -> impl Iterator<Item = (&McpServerKey, &VetoReason)> + '_ {
        self.vetoed.iter().map(|(key, (reason, _))| (key, reason))
    }

    /// Why this key is vetoed, if it is.
    pub fn veto(&self, key: &McpServerKey) -> Option<&VetoReason> {
        self.vetoed.get(key).map(|(reason, _)| reason)
    }

    /// The legacy winner for a bare name (see the type docs for the rule).
    pub fn resolve_server_name(&self, name: &ServerName) -> Option<&McpServerKey> {
        self.legacy.get(name)
    }

    /// The bare name if `key` is its name's legacy winner; `None` for other keys.
    pub fn legacy_server_name(&self, key: &McpServerKey) -> Option<&ServerName> {
        self.legacy
            .get_key_value(key.name())
            .filter(|(_, winner)| *winner == key)
            .map(|(name, _)| name)
    }

    /// Keys to start and show: every active key with `multi_environment` on, otherwise only
    /// legacy winners (at most one per name). In key order.
    pub fn exposed_keys(&self) -> impl Iterator<Item = &McpServerKey> + '_ {
        let all = self.settings.multi_environment;
        self.active
            .keys()
            .filter(move |key| all || self.legacy.get(key.name()) == Some(*key))
    }

    /// The exposed servers with their configuration, in key order.
    pub fn exposed(&self) -> impl Iterator<Item = (&McpServerKey, &ServerConfig)> + '_ {
        self.exposed_keys()
            .filter_map(|key| self.get(key).map(|config| (key, config)))
    }

    /// Whether this key is among [`ResolvedCatalog::exposed_keys`].
    pub fn is_exposed(&self, key: &McpServerKey) -> bool {
        self.active.contains_key(key)
            && (self.settings.multi_environment || self.legacy.get(key.name()) == Some(key))
    }

    /// Whether environment-scoped servers are exposed alongside legacy winners.
    pub fn multi_environment(&self) -> bool {
        self.settings.multi_environment
    }

    /// A declared environment.
    pub fn environment(&self, id: &EnvironmentId) -> Option<&EnvironmentConfig> {
        self.environments.get(id)
    }

    /// Every declared environment.
    pub fn environments(&self) -> &BTreeMap<EnvironmentId, EnvironmentConfig> {
        &self.environments
    }

    /// Whether qualified tool names carry the `mcp__` prefix.
    pub fn tool_name_prefix(&self) -> bool {
        self.settings.tool_name_prefix
    }

    /// Where OAuth credentials are stored.
    pub fn credentials_store(&self) -> CredentialsStore {
        self.settings.credentials_store
    }

    /// The fixed OAuth callback port, if configured.
    pub fn oauth_callback_port(&self) -> Option<u16> {
        self.settings.oauth_callback_port
    }

    /// Plugins listed in the user configuration.
    pub fn plugins(&self) -> &[PluginRef] {
        &self.plugins
    }

    /// Same-tier registration conflicts, in key then tier order.
    pub fn conflicts(&self) -> &[Conflict] {
        &self.conflicts
    }

    /// Warnings from loading (unknown keys) and resolution (undeclared environments).
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// The approval mode for a tool of an active server: the tool's own mode, else the
    /// environment's `default_tools_approval_mode`, else the server default.
    pub fn approval_mode(&self, key: &McpServerKey, raw_tool_name: &str) -> Option<ApprovalMode> {
        let server = self.get(key)?;
        let own = server.tool_approval_modes().get(raw_tool_name).copied();
        let environment = self
            .environment(server.environment())
            .and_then(|e| e.default_approval_mode());
        Some(
            own.or(environment)
                .unwrap_or(server.default_approval_mode()),
        )
    }

    /// The elicitation policy for an active server: its environment's, else
    /// [`ElicitationPolicy::Ask`].
    pub fn elicitation_policy(&self, key: &McpServerKey) -> Option<ElicitationPolicy> {
        let server = self.get(key)?;
        let environment = self.environment(server.environment());
        Some(
            environment
                .and_then(EnvironmentConfig::elicitation)
                .unwrap_or_default(),
        )
    }

    /// The protocol era to speak with a server: its own `protocol`, else the catalog-wide
    /// `mcp_protocol`, else [`ProtocolChoice::Auto`]. A key that is not active gets the
    /// catalog-wide value.
    pub fn protocol(&self, key: &McpServerKey) -> ProtocolChoice {
        self.server_settings(key).protocol().unwrap_or_default()
    }

    /// What happens when a tool of a server changes since it was pinned: its own
    /// `tool_drift`, else the catalog-wide `tool_drift`, else
    /// [`ToolDriftPolicy::Reapprove`]. A key that is not active gets the catalog-wide value.
    pub fn tool_drift(&self, key: &McpServerKey) -> ToolDriftPolicy {
        self.server_settings(key).tool_drift().unwrap_or_default()
    }

    /// The least severe level of log messages a server should send (`logging/setLevel`):
    /// its own `log_level`, else the catalog-wide `log_level`, else `None`: send nothing,
    /// the server keeps its own level. A key that is not active gets the catalog-wide value.
    pub fn log_level(&self, key: &McpServerKey) -> Option<LogLevel> {
        self.server_settings(key).log_level()
    }

    /// Which tools a gateway in front of this catalog lists: the catalog-wide
    /// `tool_exposure`, else [`ToolExposure::All`].
    pub fn tool_exposure(&self) -> ToolExposure {
        self.settings.tool_exposure
    }

    /// The `[gateway]` table of the configuration (the last file's that writes one):
    /// how a gateway in front of this catalog authenticates callers and what each may use.
    pub fn gateway(&self) -> Option<&GatewayConfig> {
        self.settings.gateway.as_ref()
    }

    /// The effective startup policy of a server: its own `startup`, else the catalog-wide
    /// `mcp_startup`, else [`StartupPolicy::Eager`]. A key that is not active gets the
    /// catalog-wide policy.
    pub fn startup_policy(&self, key: &McpServerKey) -> StartupPolicy {
        self.server_settings(key)
            .startup_policy()
            .unwrap_or_default()
    }

    /// The settings a server inherits from the catalog, as it ends up with them: each its
    /// own value, else the catalog-wide one (the last configuration file's that writes
    /// it), else `None` (the setting's default applies). A key that is not active gets the
    /// catalog-wide values. The accessors above ([`ResolvedCatalog::startup_policy`], ...)
    /// apply the defaults.
    pub fn server_settings(&self, key: &McpServerKey) -> ServerDefaults {
        let catalog = &self.settings.defaults;
        match self.get(key) {
            Some(server) => server.overrides().inherit(catalog),
            None => *catalog,
        }
    }

    /// The catalog-wide settings servers inherit unless they write their own (each `None`
    /// when no configuration writes it).
    pub fn server_defaults(&self) -> &ServerDefaults {
        &self.settings.defaults
    }

    /// Whether the tool catalog cache may keep this server's tools (its `tool_cache`,
    /// default `true`). `false` for a key that is not active: there is nothing to cache.
    pub fn tool_cache_enabled(&self, key: &McpServerKey) -> bool {
        self.get(key).is_some_and(ServerConfig::tool_cache)
    }

    /// The connection fingerprint of an active server, reading referenced variables through
    /// `env` now.
    pub fn fingerprint(&self, key: &McpServerKey, env: &dyn EnvLookup) -> Option<Fingerprint> {
        let server = self.get(key)?;
        let environment = self.environment(server.environment());
        Some(connection_fingerprint(
            server,
            environment,
            self.credentials_store(),
            env,
        ))
    }

    /// A builder holding every registration of this catalog, to extend it. Vetoes carry
    /// over (a vetoed name stays vetoed), except that a selected plugin's veto does not
    /// apply to registrations added afterwards.
    pub fn to_builder(&self) -> CatalogBuilder {
        self.builder.clone().reopen(&self.vetoed)
    }
}

/// Lower ranks win: unscoped, then `local`-scoped, then other environments by id.
fn legacy_rank(key: &McpServerKey) -> (u8, Option<&str>) {
    match key.environment() {
        None => (0, None),
        Some(env) if env.is_local() => (1, None),
        Some(env) => (2, Some(env.as_str())),
    }
}
