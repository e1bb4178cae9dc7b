//! Plugin installations: each one registers a plugin's servers in one environment.

use std::path::Path;

use mcp_key::{EnvironmentId, McpServerKey};

use crate::env::EnvLookup;
use crate::error::Error;
use crate::model::config::{LoadedConfig, PluginRef};
use crate::resolve::builder::CatalogBuilder;
use crate::resolve::plugin::{Plugin, PluginTier};

impl CatalogBuilder {
    /// Installs `plugin` in each of `environments` (an empty list means `["local"]`;
    /// repeats are ignored): every server is registered under
    /// `McpServerKey::in_environment(env, name)` by `tier.source(plugin.name())`, so the
    /// usual precedence applies (earlier plugin wins within a plugin tier, conflicts are
    /// reported, `enabled = false` vetoes). The plugin's warnings join the catalog's.
    ///
    /// Environments are not checked here: [`CatalogBuilder::build`] warns about servers
    /// whose environment is not declared (`[[plugins]]` in a TOML configuration rejects
    /// undeclared ones when it is parsed).
    ///
    /// ```
    /// use mcp_catalog::{CatalogBuilder, Plugin, PluginTier, ServerConfig};
    /// use mcp_key::{EnvironmentId, McpServerKey, ServerName};
    ///
    /// let github = ServerName::new("github")?;
    /// let plugin = Plugin::new("git-tools").with_server(github.clone(), ServerConfig::stdio("gh"));
    /// let devbox = EnvironmentId::new("devbox")?;
    /// let catalog = CatalogBuilder::new()
    ///     .with_plugin(PluginTier::Selected, &plugin, &[EnvironmentId::LOCAL, devbox.clone()])
    ///     .build();
    /// let keys: Vec<String> = catalog.iter().map(|(key, _)| key.to_string()).collect();
    /// assert_eq!(keys, ["github@devbox", "github@local"]);
    /// let in_devbox = McpServerKey::in_environment(devbox.clone(), github);
    /// assert_eq!(catalog.get(&in_devbox).map(|s| s.environment()), Some(&devbox));
    /// # Ok::<(), mcp_key::KeyError>(())
    /// ```
    pub fn add_plugin(
        &mut self,
        tier: PluginTier,
        plugin: &Plugin,
        environments: &[EnvironmentId],
    ) -> &mut Self {
        let mut installed: Vec<&EnvironmentId> = Vec::new();
        for environment in environments {
            if !installed.contains(&environment) {
                installed.push(environment);
            }
        }
        let local = [EnvironmentId::LOCAL];
        if installed.is_empty() {
            installed.extend(&local);
        }
        let source = tier.source(plugin.name());
        for environment in installed {
            for (name, config) in plugin.servers() {
                let key = McpServerKey::in_environment(environment.clone(), name.clone());
                self.register(source.clone(), key, config.clone());
            }
        }
        for warning in plugin.warnings() {
            // The same plugin may be installed from several places; say it once.
            if !self.warnings.contains(warning) {
                self.warnings.push(warning.clone());
            }
        }
        self
    }

    /// [`CatalogBuilder::add_plugin`], consuming.
    #[must_use]
    pub fn with_plugin(
        mut self,
        tier: PluginTier,
        plugin: &Plugin,
        environments: &[EnvironmentId],
    ) -> Self {
        self.add_plugin(tier, plugin, environments);
        self
    }

    /// Loads every plugin of `plugins` (relative paths are resolved against `base_dir`,
    /// the folder of the configuration that lists them) and installs each as a *selected*
    /// plugin in its environments, in list order (so an earlier entry wins a contested
    /// key). All are loaded before any is installed: on error the builder is unchanged.
    ///
    /// Errors: [`Error::PluginEntry`] naming the entry and the resolved path, with the
    /// [`Plugin::load`] error as its source.
    pub fn load_plugins(
        &mut self,
        plugins: &[PluginRef],
        base_dir: &Path,
        env: &dyn EnvLookup,
    ) -> Result<&mut Self, Error> {
        let loaded = load_all(plugins, base_dir, env)?;
        for (plugin, environments) in &loaded {
            self.add_plugin(PluginTier::Selected, plugin, environments);
        }
        Ok(self)
    }

    /// [`CatalogBuilder::add_user_config`] followed by [`CatalogBuilder::load_plugins`] for
    /// its `[[plugins]]`, resolved against the folder of the configuration's origin (the
    /// file path, as [`load_file`](crate::load_file) records it; a bare label resolves
    /// against the working directory). On error the builder is unchanged.
    pub fn add_user_config_with_plugins(
        &mut self,
        loaded: LoadedConfig,
        env: &dyn EnvLookup,
    ) -> Result<&mut Self, Error> {
        let base_dir = Path::new(loaded.origin())
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let entries = loaded.config().plugins().to_vec();
        let plugins = load_all(&entries, &base_dir, env)?;
        self.add_user_config(loaded);
        for (plugin, environments) in &plugins {
            self.add_plugin(PluginTier::Selected, plugin, environments);
        }
        Ok(self)
    }
}

/// Loads every entry, or fails on the first one that cannot be loaded.
fn load_all<'p>(
    plugins: &'p [PluginRef],
    base_dir: &Path,
    env: &dyn EnvLookup,
) -> Result<Vec<(Plugin, &'p [EnvironmentId])>, Error> {
    let mut loaded = Vec::with_capacity(plugins.len());
    for (index, entry) in plugins.iter().enumerate() {
        let path = base_dir.join(entry.path());
        match Plugin::load(&path, env) {
            Ok(plugin) => loaded.push((plugin, entry.environments())),
            Err(source) => {
                return Err(Error::PluginEntry {
                    index,
                    path,
                    source: Box::new(source),
                });
            }
        }
    }
    Ok(loaded)
}
