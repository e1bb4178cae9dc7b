//! Plugins: a folder whose `.mcp.json` or `mcp.toml` declares servers, installed by the
//! host in one or more environments.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_key::ServerName;

use crate::diagnostic::ConfigWarning;
use crate::env::EnvLookup;
use crate::error::{Error, PluginFolderProblem};
use crate::formats::collect::Role;
use crate::model::server::ServerConfig;
use crate::resolve::source::{Source, Tier};

/// The file name of a plugin's JSON declaration (`{"mcpServers": {...}}`).
pub const PLUGIN_JSON_FILE: &str = ".mcp.json";

/// The file name of a plugin's TOML declaration (`[mcp_servers.<name>]`).
pub const PLUGIN_TOML_FILE: &str = "mcp.toml";

/// Which of the two plugin precedence tiers an installation registers in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PluginTier {
    /// Found on disk ([`Tier::DiscoveredPlugin`], the lowest precedence).
    Discovered,
    /// Selected for this session, e.g. listed in `[[plugins]]` ([`Tier::SelectedPlugin`]).
    Selected,
}

impl PluginTier {
    /// The precedence tier.
    pub fn tier(self) -> Tier {
        match self {
            PluginTier::Discovered => Tier::DiscoveredPlugin,
            PluginTier::Selected => Tier::SelectedPlugin,
        }
    }

    /// The source that a plugin called `name` registers as in this tier.
    pub fn source(self, name: &str) -> Source {
        Source::new(self.tier(), name)
    }
}

/// A plugin's servers, loaded from its folder or built in code.
///
/// A plugin does not choose where it runs: each installation (see
/// [`CatalogBuilder::add_plugin`](crate::CatalogBuilder::add_plugin)) registers every
/// server under `McpServerKey::in_environment(env, name)`, so an `environment` written in
/// the plugin's file is ignored with a warning, as are top-level settings of an `mcp.toml`
/// (`multi_environment`, `[environments]`, `[[plugins]]`, ...).
///
/// ```
/// use mcp_catalog::{EmptyEnv, Plugin};
///
/// let dir = tempfile::tempdir()?;
/// let folder = dir.path().join("git-tools");
/// std::fs::create_dir(&folder)?;
/// std::fs::write(
///     folder.join(".mcp.json"),
///     r#"{"mcpServers": {"github": {"command": "gh-mcp"}}}"#,
/// )?;
/// let plugin = Plugin::load(&folder, &EmptyEnv)?;
/// assert_eq!(plugin.name(), "git-tools");
/// assert_eq!(plugin.servers().len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plugin {
    name: String,
    manifest: Option<PathBuf>,
    servers: BTreeMap<ServerName, ServerConfig>,
    warnings: Vec<ConfigWarning>,
}

impl Plugin {
    /// A plugin called `name` with no servers (add them with [`Plugin::with_server`]).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            manifest: None,
            servers: BTreeMap::new(),
            warnings: Vec::new(),
        }
    }

    /// Adds (or replaces) a server. Its `environment` is replaced by the installation's.
    #[must_use]
    pub fn with_server(mut self, name: ServerName, config: ServerConfig) -> Self {
        self.servers.insert(name, config);
        self
    }

    /// Loads the plugin in `dir`: exactly one of [`PLUGIN_JSON_FILE`] and
    /// [`PLUGIN_TOML_FILE`] must exist there. The plugin is named after the folder (file
    /// formats have no `name` field, and the folder name is what a person sees on disk).
    ///
    /// Errors: [`Error::PluginFolder`] when the folder has no declaration file, both, or
    /// is not a folder; [`Error::Read`]; [`Error::Invalid`] with the plugin file as the
    /// origin of every message, with line and column. `${VAR}` in `.mcp.json` is expanded
    /// through `env`.
    pub fn load(dir: &Path, env: &dyn EnvLookup) -> Result<Plugin, Error> {
        let metadata = std::fs::metadata(dir).map_err(|source| Error::Read {
            path: dir.to_path_buf(),
            source,
        })?;
        let folder_error = |problem| Error::PluginFolder {
            dir: dir.to_path_buf(),
            problem,
        };
        if !metadata.is_dir() {
            return Err(folder_error(PluginFolderProblem::NotAFolder));
        }
        let json = exists(&dir.join(PLUGIN_JSON_FILE))?;
        let toml = exists(&dir.join(PLUGIN_TOML_FILE))?;
        let (path, is_json) = match (json, toml) {
            (Some(path), None) => (path, true),
            (None, Some(path)) => (path, false),
            (Some(_), Some(_)) => return Err(folder_error(PluginFolderProblem::BothManifests)),
            (None, None) => return Err(folder_error(PluginFolderProblem::NoManifest)),
        };
        let text = std::fs::read_to_string(&path).map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
        let origin = path.display().to_string();
        let loaded = if is_json {
            crate::formats::json_parse::parse_as(&text, &origin, env, Role::Plugin)?
        } else {
            crate::formats::toml_parse::parse_as(&text, &origin, Role::Plugin)?
        };
        Ok(Plugin {
            name: folder_name(dir),
            manifest: Some(path),
            servers: loaded.config.servers,
            warnings: loaded.warnings,
        })
    }

    /// The plugin's name: its folder's name when loaded, the name given to
    /// [`Plugin::new`] otherwise. Its registrations come from a [`Source`] of this name
    /// (two folders with the same name therefore read alike in conflicts).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file the servers were read from (`None` for a plugin built in code).
    pub fn manifest(&self) -> Option<&Path> {
        self.manifest.as_deref()
    }

    /// The declared servers by name.
    pub fn servers(&self) -> &BTreeMap<ServerName, ServerConfig> {
        &self.servers
    }

    /// Non-fatal findings of loading (unknown and ignored keys), in document order.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }
}

/// `Some(path)` when it exists.
fn exists(path: &Path) -> Result<Option<PathBuf>, Error> {
    match path.try_exists() {
        Ok(true) => Ok(Some(path.to_path_buf())),
        Ok(false) => Ok(None),
        Err(source) => Err(Error::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The last component of `dir`, resolving `.` and `..` through the file system.
fn folder_name(dir: &Path) -> String {
    let resolved;
    let dir = match dir.file_name() {
        Some(_) => dir,
        None => {
            resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
            &resolved
        }
    };
    dir.file_name().map_or_else(
        || dir.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::env::EmptyEnv;

    const FRAGMENTS: &[&str] = &[
        "[mcp_servers.a]\n",
        "command = \"x\"\n",
        "url = \"https://h/m\"\n",
        "environment = \"dev\"\n",
        "environment = 3\n",
        "[environments.dev]\n",
        "multi_environment = true\n",
        "[[plugins]]\n",
        "path = \"p\"\n",
        "{\"mcpServers\": {\"a\": {\"command\": \"x\", ",
        "\"environment\": \"dev\"",
        "}}",
        "\"",
        "=",
        "\n",
    ];

    fn fragments() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(FRAGMENTS), 0..16)
            .prop_map(|parts| parts.concat())
    }

    /// Plugin files never panic and never carry an environment of their own.
    fn check(text: &str) {
        let toml = crate::formats::toml_parse::parse_as(text, "mcp.toml", Role::Plugin);
        let json = crate::formats::json_parse::parse_as(text, ".mcp.json", &EmptyEnv, Role::Plugin);
        for loaded in [toml, json].into_iter().flatten() {
            let config = loaded.config();
            assert!(config.environments().is_empty() && config.plugins().is_empty());
            assert!(config.multi_environment.is_none());
            for server in config.servers().values() {
                assert!(server.environment().is_local());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn plugin_files_never_choose_an_environment(text in fragments()) {
            check(&text);
        }
    }

    #[test]
    fn a_typo_in_a_plugin_file_suggests_mcp_servers() {
        let loaded =
            crate::formats::toml_parse::parse_as("[mcp_server.a]\n", "mcp.toml", Role::Plugin)
                .unwrap();
        let [warning] = loaded.warnings() else {
            panic!("{:?}", loaded.warnings())
        };
        assert_eq!(
            warning.to_string(),
            "mcp.toml:1:2: unknown key `mcp_server` ignored (did you mean `mcp_servers`?)"
        );
    }
}
