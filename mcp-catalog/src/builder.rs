//! Registrations from several sources, merged by precedence into a [`ResolvedCatalog`].

use std::collections::BTreeMap;

use mcp_key::{EnvironmentId, McpServerKey, ServerName};

use crate::config::{CredentialsStore, EnvironmentConfig, LoadedConfig, PluginRef};
use crate::diagnostic::{ConfigWarning, Location, Scope};
use crate::resolved::{Entry, ResolvedCatalog, Settings};
use crate::server::{ServerConfig, StartupPolicy};
use crate::source::{Conflict, Source, Tier, VetoReason};

#[derive(Clone, Debug)]
pub(crate) struct Registration {
    seq: u64,
    source: Source,
    key: McpServerKey,
    config: ServerConfig,
}

#[derive(Clone, Debug)]
pub(crate) struct Disable {
    source: Source,
    name: ServerName,
    /// For a selected plugin's disable carried over by `to_builder`: it only vetoes
    /// registrations made before this sequence number (not later overlays).
    sealed_at: Option<u64>,
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
    registrations: Vec<Registration>,
    disables: Vec<Disable>,
    /// Vetoes carried over from an earlier build (key-level, `enabled = false` winners).
    sticky: BTreeMap<McpServerKey, VetoReason>,
    environments: BTreeMap<EnvironmentId, EnvironmentConfig>,
    settings: Settings,
    plugins: Vec<PluginRef>,
    pub(crate) warnings: Vec<ConfigWarning>,
    next_seq: u64,
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
        settings.startup_policy = config.startup_policy.unwrap_or(settings.startup_policy);
        settings.protocol = config.protocol.unwrap_or(settings.protocol);
        settings.tool_drift = config.tool_drift.unwrap_or(settings.tool_drift);
        settings.tool_exposure = config.tool_exposure.unwrap_or(settings.tool_exposure);
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
        self.settings.startup_policy = policy;
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

    /// Resolves one winner per key, applies vetoes and freezes the result.
    pub fn build(&self) -> ResolvedCatalog {
        let mut by_key: BTreeMap<&McpServerKey, Vec<&Registration>> = BTreeMap::new();
        for registration in &self.registrations {
            by_key
                .entry(&registration.key)
                .or_default()
                .push(registration);
        }
        let mut conflicts = Vec::new();
        let mut winners = BTreeMap::new();
        for (key, registrations) in by_key {
            let mut by_tier: BTreeMap<Tier, Vec<&Registration>> = BTreeMap::new();
            for registration in registrations {
                by_tier
                    .entry(registration.source.tier())
                    .or_default()
                    .push(registration);
            }
            let mut winner = None;
            for (tier, mut group) in by_tier {
                group.sort_by_key(|r| r.seq);
                if !tier.earlier_wins() {
                    group.reverse();
                }
                let Some((first, rest)) = group.split_first() else {
                    continue;
                };
                if !rest.is_empty() {
                    let mut losers: Vec<&Registration> = rest.to_vec();
                    losers.sort_by_key(|r| r.seq);
                    conflicts.push(Conflict {
                        key: key.clone(),
                        tier,
                        winner: first.source.clone(),
                        losers: losers.into_iter().map(|r| r.source.clone()).collect(),
                    });
                }
                // Tiers iterate in ascending precedence: the last one wins overall.
                winner = Some(*first);
            }
            if let Some(winner) = winner {
                winners.insert(key.clone(), winner);
            }
        }

        let mut active = BTreeMap::new();
        let mut vetoed = BTreeMap::new();
        for (key, winner) in winners {
            match self.veto_for(&key, winner) {
                Some(reason) => {
                    vetoed.insert(key, (reason, winner.source.clone()));
                }
                None => {
                    let entry = Entry {
                        config: winner.config.clone(),
                        source: winner.source.clone(),
                    };
                    active.insert(key, entry);
                }
            }
        }
        let mut warnings = self.warnings.clone();
        for (key, entry) in &active {
            let environment = entry.config.environment();
            if !environment.is_local() && !self.environments.contains_key(environment) {
                warnings.push(ConfigWarning::other(
                    Location::origin_only(entry.source.name()),
                    Scope::Server(key.name().as_str().to_owned()),
                    format!(
                        "environment `{environment}` of `{key}` is not declared; its stdio \
                         servers run without a wrapper"
                    ),
                ));
            }
        }
        ResolvedCatalog::new(crate::resolved::Parts {
            active,
            vetoed,
            conflicts,
            warnings,
            environments: self.environments.clone(),
            settings: self.settings.clone(),
            plugins: self.plugins.clone(),
            builder: self.clone(),
        })
    }

    fn veto_for(&self, key: &McpServerKey, winner: &Registration) -> Option<VetoReason> {
        if let Some(reason) = self.sticky.get(key) {
            return Some(reason.clone());
        }
        let by_name = self
            .disables
            .iter()
            .filter(|d| &d.name == key.name())
            .find(|d| d.sealed_at.is_none_or(|sealed_at| winner.seq < sealed_at));
        if let Some(disable) = by_name {
            return Some(VetoReason::DisabledByName {
                source: disable.source.clone(),
            });
        }
        (!winner.config.enabled()).then(|| VetoReason::DisabledInConfig {
            source: winner.source.clone(),
        })
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
