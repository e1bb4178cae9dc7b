//! Registrations from several sources, to be merged by precedence into a
//! [`ResolvedCatalog`](crate::ResolvedCatalog) (see `merge.rs`).

use std::collections::BTreeMap;

use mcp_key::{EnvironmentId, McpServerKey, ServerName};

use crate::diagnostic::ConfigWarning;
use crate::model::config::{CredentialsStore, EnvironmentConfig, LoadedConfig, PluginRef};
use crate::model::defaults::ServerDefaults;
use crate::model::gateway::GatewayConfig;
use crate::model::policy::StartupPolicy;
use crate::model::server::{ServerConfig, ToolExposure};
use crate::resolve::source::{Source, Tier, VetoReason};

/// Top-level settings carried from the user configuration.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) credentials_store: CredentialsStore,
    pub(crate) oauth_callback_port: Option<u16>,
    pub(crate) tool_name_prefix: bool,
    pub(crate) multi_environment: bool,
    /// The catalog-wide settings servers inherit (each `None` when no file writes it).
    pub(crate) defaults: ServerDefaults,
    pub(crate) tool_exposure: ToolExposure,
    pub(crate) gateway: Option<GatewayConfig>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            credentials_store: CredentialsStore::Auto,
            oauth_callback_port: None,
            tool_name_prefix: true,
            multi_environment: false,
            defaults: ServerDefaults::new(),
            tool_exposure: ToolExposure::All,
            gateway: None,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Registration {
    pub(super) seq: u64,
    pub(super) source: Source,
    pub(super) key: McpServerKey,
    pub(super) config: ServerConfig,
}

#[derive(Clone, Debug)]
pub(crate) struct Disable {
    pub(super) source: Source,
    pub(super) name: ServerName,
    /// For a selected plugin's disable carried over by `to_builder`: it only vetoes
    /// registrations made before this sequence number (not later overlays).
    pub(super) sealed_at: Option<u64>,
}

/// Collects registrations from every source; [`CatalogBuilder::build`] picks one winner per
/// [`McpServerKey`] and applies vetoes.
///
/// Precedence, lowest to highest: discovered plugins (earlier wins), selected plugins
/// (earlier wins), user configuration, built-in servers, run-time extensions (later wins).
///
/// ```
/// use mcp_catalog::{CatalogBuilder, ServerConfig, Source};
/// use mcp_key::{McpServerKey, ServerName};
///
/// let key = McpServerKey::unscoped(ServerName::new("files")?);
/// let mut builder = CatalogBuilder::new();
/// builder
///     .register(Source::discovered_plugin("fs-plugin"), key.clone(), ServerConfig::stdio("old"))
///     .register(Source::user("config.toml"), key.clone(), ServerConfig::stdio("new"));
/// let catalog = builder.build();
/// let command = catalog.get(&key).and_then(|s| s.transport().as_stdio()).map(|s| s.command());
/// assert_eq!(command, Some("new"));
/// # Ok::<(), mcp_key::KeyError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct CatalogBuilder {
    pub(super) registrations: Vec<Registration>,
    pub(super) disables: Vec<Disable>,
    /// Vetoes carried over from an earlier build (key-level, `enabled = false` winners).
    pub(super) sticky: BTreeMap<McpServerKey, VetoReason>,
    pub(super) environments: BTreeMap<EnvironmentId, EnvironmentConfig>,
    pub(super) settings: Settings,
    pub(super) plugins: Vec<PluginRef>,
    pub(crate) warnings: Vec<ConfigWarning>,
    pub(super) next_seq: u64,
}

impl CatalogBuilder {
    /// An empty builder with default settings.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a loaded user configuration: its servers (tier [`Tier::User`], unscoped keys, or
    /// keys scoped to their `environment` when it is not `local`), environments, plugins,
    /// the top-level settings it writes, and its warnings. Call it once per file, global
    /// first: within the user tier a later file's server wins (and the conflict is
    /// reported), and settings a file does not write keep their earlier value.
    #[must_use]
    pub fn with_user_config(mut self, loaded: LoadedConfig) -> Self {
        self.add_user_config(loaded);
        self
    }

    /// [`CatalogBuilder::with_user_config`] by reference.
    pub fn add_user_config(&mut self, loaded: LoadedConfig) -> &mut Self {
        let source = Source::user(loaded.origin);
        let config = loaded.config;
        // Only settings the configuration writes override earlier ones.
        let settings = &mut self.settings;
        settings.credentials_store = config
            .credentials_store
            .unwrap_or(settings.credentials_store);
        settings.oauth_callback_port = config.oauth_callback_port.or(settings.oauth_callback_port);
        settings.tool_name_prefix = config.tool_name_prefix.unwrap_or(settings.tool_name_prefix);
        settings.multi_environment = config
            .multi_environment
            .unwrap_or(settings.multi_environment);
        settings.defaults = config.defaults.inherit(&settings.defaults);
        settings.tool_exposure = config.tool_exposure.unwrap_or(settings.tool_exposure);
        // A `[gateway]` table is one setting: a later file's replaces the earlier whole.
        if let Some(gateway) = config.gateway {
            settings.gateway = Some(gateway);
        }
        self.environments.extend(config.environments);
        self.plugins.extend(config.plugins);
        self.warnings.extend(loaded.warnings);
        for (name, server) in config.servers {
            let key = if server.environment().is_local() {
                McpServerKey::unscoped(name)
            } else {
                McpServerKey::in_environment(server.environment().clone(), name)
            };
            self.register(source.clone(), key, server);
        }
        self
    }

    /// Registers a server. For a scoped key the config's environment is set to the key's;
    /// an unscoped key keeps the config's environment.
    pub fn register(
        &mut self,
        source: Source,
        key: McpServerKey,
        mut config: ServerConfig,
    ) -> &mut Self {
        if let Some(environment) = key.environment() {
            config.environment = environment.clone();
        }
        let seq = self.bump();
        self.registrations.push(Registration {
            seq,
            source,
            key,
            config,
        });
        self
    }

    /// [`CatalogBuilder::register`], consuming.
    #[must_use]
    pub fn with_server(mut self, source: Source, key: McpServerKey, config: ServerConfig) -> Self {
        self.register(source, key, config);
        self
    }

    /// Vetoes every server with this name, in every environment, whoever registers it.
    pub fn disable(&mut self, source: Source, name: ServerName) -> &mut Self {
        self.disables.push(Disable {
            source,
            name,
            sealed_at: None,
        });
        self
    }

    /// [`CatalogBuilder::disable`], consuming.
    #[must_use]
    pub fn with_disabled(mut self, source: Source, name: ServerName) -> Self {
        self.disable(source, name);
        self
    }

    /// Declares (or replaces) an execution environment.
    #[must_use]
    pub fn with_environment(mut self, id: EnvironmentId, environment: EnvironmentConfig) -> Self {
        self.environments.insert(id, environment);
        self
    }

    /// Turns multi-environment exposure on or off (overrides the user config's setting).
    #[must_use]
    pub fn with_multi_environment(mut self, on: bool) -> Self {
        self.settings.multi_environment = on;
        self
    }

    /// Turns the `mcp__` tool name prefix on or off.
    #[must_use]
    pub fn with_tool_name_prefix(mut self, on: bool) -> Self {
        self.settings.tool_name_prefix = on;
        self
    }

    /// Sets the catalog-wide startup policy (overrides the user config's `mcp_startup`; a
    /// server's own `startup` still wins).
    #[must_use]
    pub fn with_startup_policy(mut self, policy: StartupPolicy) -> Self {
        self.settings.defaults = self.settings.defaults.with_startup_policy(policy);
        self
    }

    /// Sets the credential store mode.
    #[must_use]
    pub fn with_credentials_store(mut self, store: CredentialsStore) -> Self {
        self.settings.credentials_store = store;
        self
    }

    fn bump(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// The builder behind a resolved catalog, ready for more registrations. Vetoes carry
    /// over, except those made by selected plugins, which do not veto later overlays.
    pub(crate) fn reopen(mut self, vetoed: &BTreeMap<McpServerKey, (VetoReason, Source)>) -> Self {
        for (key, (reason, _)) in vetoed {
            if let VetoReason::DisabledInConfig { source } = reason
                && source.tier() != Tier::SelectedPlugin
            {
                self.sticky.insert(key.clone(), reason.clone());
            }
        }
        let next = self.next_seq;
        for disable in &mut self.disables {
            if disable.source.tier() == Tier::SelectedPlugin && disable.sealed_at.is_none() {
                disable.sealed_at = Some(next);
            }
        }
        self
    }
}
