//! Finding and loading a host's configuration in one call: an explicit file, else the
//! host's own user file ([`Discovery::with_user_file`]) below the first project file in a
//! folder (`mcp.toml`, then `.mcp.json`), or another client's user and project files
//! ([`Discovery::with_client`]), with their plugins, under the trust model of
//! [`crate::TrustStore`].

use std::path::{Path, PathBuf};

use crate::env::EnvLookup;
use crate::error::Error;
use crate::hosts::clients::{ClientKind, Scope, client_config_paths_in};
use crate::hosts::trust::{Review, TrustState, TrustStore, review_file, trust_target};
use crate::model::config::LoadedConfig;
use crate::resolve::builder::CatalogBuilder;

/// The project files looked for in a folder, in this order.
pub const PROJECT_FILES: [&str; 2] = ["mcp.toml", ".mcp.json"];

/// Where to look for a configuration: an explicit file (the user's choice, e.g. a
/// `--config` flag), else the first of [`PROJECT_FILES`] in a folder.
///
/// ```no_run
/// use mcp_catalog::{Discovered, Discovery, ProcessEnv, TrustStore};
///
/// # fn demo() -> Result<(), mcp_catalog::Error> {
/// let store = TrustStore::open("/home/me/.local/share/myhost/trusted-configs.json")?;
/// match Discovery::new(".").find(Some(&store), &ProcessEnv)? {
///     Discovered::Ready { builder, .. } => {
///         let catalog = builder.build();
///         # drop(catalog);
///     }
///     Discovered::NeedsTrust { untrusted, review, .. } => {
///         // Show `review` to the user; once they agree: `store.trust(&untrusted)`.
///         println!("{} would run:\n{review}", untrusted.display());
///     }
///     Discovered::NotFound => { /* no configuration: run without servers */ }
///     _ => {}
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Discovery {
    dir: PathBuf,
    explicit: Option<PathBuf>,
    /// The host's own user file, below the project file.
    user: Option<PathBuf>,
    /// The client, with the locations of its files.
    client: Option<(ClientKind, Vec<(Scope, PathBuf)>)>,
}

/// What [`Discovery::find`] found.
#[derive(Debug)]
#[non_exhaustive]
pub enum Discovered {
    /// A configuration that may be used: `builder` holds it as the user configuration,
    /// with the plugins its `[[plugins]]` entries install. Add other tiers, then `build()`.
    Ready {
        /// The configuration file (of several, the one that takes precedence).
        path: PathBuf,
        /// Whether the files were found (project files trusted by the store, or a client's
        /// files) rather than given explicitly.
        discovered: bool,
        /// The catalog builder with the files and their plugins.
        builder: CatalogBuilder,
        /// Every file in `builder`, as loaded (expanded), lowest precedence first: for its
        /// origin, format and warnings, or a strict check ([`LoadedConfig::into_strict`]).
        files: Vec<LoadedConfig>,
    },
    /// A project file, or a plugin of it that lies outside its folder, is not trusted with
    /// its current content. Nothing of it was expanded (`${VAR}` stays as written), no
    /// plugin was loaded, nothing may start. Show `review`; to use it, the user trusts
    /// `untrusted` ([`TrustStore::trust`]) and the host calls [`Discovery::find`] again.
    NeedsTrust {
        /// The project configuration file.
        config: PathBuf,
        /// The file to trust: `config` itself, or the manifest of a plugin outside its
        /// folder.
        untrusted: PathBuf,
        /// Never trusted, or changed since.
        state: TrustState,
        /// What `untrusted` would run.
        review: Review,
        /// `config` loaded for review only: nothing expanded, no plugin loaded. Never to
        /// be started.
        loaded: LoadedConfig,
    },
    /// No explicit file, and none of [`PROJECT_FILES`] in the folder (or none of the
    /// client's locations, [`Discovery::locations`]).
    NotFound,
}

impl Discovery {
    /// Looks for project files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            explicit: None,
            user: None,
            client: None,
        }
    }

    /// Reads another client's files instead of [`PROJECT_FILES`]: the locations of
    /// [`client_config_paths`](crate::client_config_paths) under `home` (the user's home folder) and the folder, every
    /// one that exists, in that client's precedence (a later file's server wins). Files of
    /// [`Scope::Project`] need trust like any project file; the user's own files do not.
    /// An explicit file ([`Discovery::with_explicit_file`]) still comes first.
    #[must_use]
    pub fn with_client(self, kind: ClientKind, home: impl Into<PathBuf>) -> Self {
        self.with_client_in(kind, home, &crate::env::EmptyEnv)
    }

    /// [`Discovery::with_client`] with the client's own variables read through `env`
    /// ([`client_config_paths_in`]: Codex's `CODEX_HOME`).
    #[must_use]
    pub fn with_client_in(
        mut self,
        kind: ClientKind,
        home: impl Into<PathBuf>,
        env: &dyn EnvLookup,
    ) -> Self {
        let paths = client_config_paths_in(kind, &home.into(), &self.dir, env);
        self.client = Some((kind, paths));
        self
    }

    /// Adds the host's own user file (e.g. `~/.config/myhost/mcp.toml`): where it exists, it
    /// is loaded below the project file, so a project's server of the same name wins and
    /// the user's other servers stay. It is the user's own and needs no trust; a missing
    /// file is not an error. Not used with an explicit file (that file alone is the
    /// user's choice) nor with another client's files ([`Discovery::with_client`]).
    #[must_use]
    pub fn with_user_file(mut self, file: Option<PathBuf>) -> Self {
        self.user = file;
        self
    }

    /// Every place looked at, whether it exists or not, lowest precedence first: the
    /// explicit file, else the client's locations, else the user file
    /// ([`Discovery::with_user_file`]) and [`PROJECT_FILES`] in the folder (of which only
    /// the first that exists is used). For messages such as "no configuration found in …".
    pub fn locations(&self) -> Vec<PathBuf> {
        if let Some(file) = &self.explicit {
            return vec![file.clone()];
        }
        match &self.client {
            Some((_, paths)) => paths.iter().map(|(_, path)| path.clone()).collect(),
            None => self
                .user
                .iter()
                .cloned()
                .chain(PROJECT_FILES.iter().map(|name| self.dir.join(name)))
                .collect(),
        }
    }

    /// The files that would be used, lowest precedence first, each with whether it needs
    /// trust (a project file). Reads nothing but folders.
    fn files(&self) -> Vec<(PathBuf, bool)> {
        if let Some(file) = &self.explicit {
            return vec![(file.clone(), false)];
        }
        match &self.client {
            Some((_, paths)) => paths
                .iter()
                .filter(|(_, path)| path.is_file())
                .map(|(scope, path)| (path.clone(), *scope == Scope::Project))
                .collect(),
            None => {
                let user = self
                    .user
                    .iter()
                    .filter(|path| path.is_file())
                    .map(|path| (path.clone(), false));
                let project = PROJECT_FILES
                    .iter()
                    .map(|name| self.dir.join(name))
                    .find(|p| p.is_file())
                    .map(|path| (path, true));
                user.chain(project).collect()
            }
        }
    }

    /// Uses `file` instead of looking in the folder. An explicit file is the user's own
    /// choice and is trusted as it is (a missing file is an error, not `NotFound`).
    #[must_use]
    pub fn with_explicit_file(mut self, file: Option<PathBuf>) -> Self {
        self.explicit = file;
        self
    }

    /// The file that would be used (of several, the one that takes precedence): the
    /// explicit one, else the last existing location of the client, else the first of
    /// [`PROJECT_FILES`] that exists in the folder, else the user file. Reads nothing but
    /// folders.
    pub fn path(&self) -> Option<PathBuf> {
        self.files().pop().map(|(path, _)| path)
    }

    /// Every file that would be used, lowest precedence first, loaded for review only
    /// ([`review_file`]): nothing expanded, no plugin loaded, no trust needed. For showing
    /// or converting a configuration (e.g. [`crate::export_toml`]); never to be started.
    ///
    /// Errors: a file that cannot be read or is invalid (as [`crate::load_file`]).
    pub fn review(&self) -> Result<Vec<LoadedConfig>, Error> {
        self.files()
            .iter()
            .map(|(path, _)| match self.forced_format() {
                // A TOML file reads no variable: loading it as the client's format
                // expands nothing.
                Some(format) if format.is_toml() => {
                    crate::formats::load::load_file_as(path, Some(format), &crate::env::EmptyEnv)
                }
                _ => review_file(path).map(|(loaded, _)| loaded),
            })
            .collect()
    }

    /// The format the files are read as whatever their name: the client's, when its files
    /// are used and its name does not always say it (Codex's `$CODEX_HOME/config.toml`).
    fn forced_format(&self) -> Option<crate::model::format::ConfigFormat> {
        match (&self.explicit, &self.client) {
            (None, Some((kind, _))) => kind.forced_format(),
            _ => None,
        }
    }

    /// Whether [`Discovery::find`] needs a trust store to use what it finds: true when a
    /// project file would be used (found in the folder rather than given explicitly).
    pub fn uses_trust(&self) -> bool {
        self.files().iter().any(|(_, project)| *project)
    }

    /// Finds, checks and loads the configuration. `${VAR}` values are read through `env`
    /// only once the files may be used. A project file may be used when `trust` holds it
    /// with its current content, and every plugin folder it names outside its own folder
    /// too; without a store no project file is used. With a client
    /// ([`Discovery::with_client`]) every existing location is loaded into one builder,
    /// lowest precedence first, and each project file is checked before anything is
    /// loaded.
    ///
    /// Errors: a file that cannot be read or is invalid (as [`crate::load_file`]), a
    /// `[[plugins]]` entry that cannot be loaded, or a trust store check that cannot read
    /// the file.
    pub fn find(
        &self,
        trust: Option<&TrustStore>,
        env: &dyn EnvLookup,
    ) -> Result<Discovered, Error> {
        let files = self.files();
        let Some((path, _)) = files.last().cloned() else {
            return Ok(Discovered::NotFound);
        };
        for (file, project) in &files {
            if *project && let Some(needs) = needs_trust(file, trust)? {
                return Ok(needs);
            }
        }
        let mut builder = CatalogBuilder::new();
        let mut loaded = Vec::with_capacity(files.len());
        for (file, _) in &files {
            // A client's file is read as that client's, also where its name does not say
            // so (Codex's `$CODEX_HOME/config.toml`); an explicit file by detection.
            let one = crate::formats::load::load_file_as(file, self.forced_format(), env)?;
            builder.add_user_config_with_plugins(one.clone(), env)?;
            loaded.push(one);
        }
        Ok(Discovered::Ready {
            path,
            discovered: self.explicit.is_none(),
            builder,
            files: loaded,
        })
    }
}

/// `None` when the project file `path`, and every plugin folder it names outside its
/// folder, is trusted with its current content; else what needs trust.
fn needs_trust(path: &Path, trust: Option<&TrustStore>) -> Result<Option<Discovered>, Error> {
    let state_of = |file: &Path| match trust {
        Some(store) => store.state(file),
        None => Ok(TrustState::Unknown),
    };
    let state = state_of(path)?;
    let (unexpanded, review) = review_file(path)?;
    if !state.is_trusted() {
        return Ok(Some(Discovered::NeedsTrust {
            untrusted: path.to_path_buf(),
            config: path.to_path_buf(),
            state,
            review,
            loaded: unexpanded,
        }));
    }
    for dir in plugins_outside_folder(&unexpanded) {
        let state = state_of(&dir)?;
        if !state.is_trusted() {
            let untrusted = trust_target(&dir);
            let (_, review) = review_file(&untrusted)?;
            return Ok(Some(Discovered::NeedsTrust {
                config: path.to_path_buf(),
                untrusted,
                state,
                review,
                loaded: unexpanded,
            }));
        }
    }
    Ok(None)
}

/// The `[[plugins]]` folders of `loaded` that lie outside the folder of its file (a
/// project file's own folder is covered by trusting the file; anything else needs its own
/// trust). A folder that cannot be resolved counts as outside.
pub fn plugins_outside_folder(loaded: &LoadedConfig) -> Vec<PathBuf> {
    let base = Path::new(loaded.origin())
        .parent()
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let root = std::fs::canonicalize(if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &base
    })
    .unwrap_or_else(|_| base.clone());
    loaded
        .config()
        .plugins()
        .iter()
        .map(|p| base.join(p.path()))
        .filter(|dir| std::fs::canonicalize(dir).map_or(true, |r| !r.starts_with(&root)))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;
    use crate::env::EmptyEnv;

    fn store(dir: &Path) -> TrustStore {
        TrustStore::open(dir.join("trust.json")).unwrap()
    }

    const PROJECT: &str = "[mcp_servers.a]\ncommand = \"${TOOL}\"\n";

    #[test]
    fn nothing_found_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let found = Discovery::new(dir.path()).find(None, &EmptyEnv).unwrap();
        assert!(matches!(found, Discovered::NotFound), "{found:?}");
    }

    #[test]
    fn an_untrusted_project_file_is_returned_for_review_unexpanded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mcp.toml"), PROJECT).unwrap();
        std::fs::write(dir.path().join(".mcp.json"), "{}").unwrap();
        let mut trust = store(dir.path());
        let found = Discovery::new(dir.path())
            .find(Some(&trust), &EmptyEnv)
            .unwrap();
        let Discovered::NeedsTrust {
            config,
            untrusted,
            state,
            review,
            ..
        } = found
        else {
            panic!("{found:?}")
        };
        assert_eq!(config, dir.path().join("mcp.toml"), "mcp.toml comes first");
        assert_eq!(untrusted, config);
        assert_eq!(state, TrustState::Unknown);
        assert!(review.to_string().contains("${TOOL}"), "{review}");

        trust.trust(&config).unwrap();
        let found = Discovery::new(dir.path())
            .find(Some(&trust), &EmptyEnv)
            .unwrap();
        assert!(
            matches!(
                found,
                Discovered::Ready {
                    discovered: true,
                    ..
                }
            ),
            "{found:?}"
        );
        std::fs::write(&config, format!("{PROJECT}args = [\"x\"]\n")).unwrap();
        let found = Discovery::new(dir.path())
            .find(Some(&trust), &EmptyEnv)
            .unwrap();
        assert!(
            matches!(
                found,
                Discovered::NeedsTrust {
                    state: TrustState::Changed,
                    ..
                }
            ),
            "{found:?}"
        );
    }

    #[test]
    fn an_explicit_file_is_used_as_it_is_and_a_missing_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mine.toml");
        std::fs::write(&file, "[mcp_servers.a]\ncommand = \"tool\"\n").unwrap();
        let found = Discovery::new(dir.path())
            .with_explicit_file(Some(file.clone()))
            .find(None, &EmptyEnv)
            .unwrap();
        let Discovered::Ready {
            path,
            discovered,
            builder,
            ..
        } = found
        else {
            panic!("{found:?}")
        };
        assert_eq!((path, discovered), (file, false));
        assert_eq!(builder.build().servers().count(), 1);
        let err = Discovery::new(dir.path())
            .with_explicit_file(Some(dir.path().join("missing.toml")))
            .find(None, &EmptyEnv)
            .unwrap_err();
        assert!(err.is_read(), "{err}");
    }

    #[test]
    fn the_user_file_lies_below_the_project_file_and_needs_no_trust() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user").join("mcp.toml");
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(
            &user,
            "[mcp_servers.a]\ncommand = \"from-user\"\n[mcp_servers.b]\ncommand = \"mine\"\n",
        )
        .unwrap();
        let project_dir = dir.path().join("project");
        std::fs::create_dir_all(&project_dir).unwrap();
        let discovery = || Discovery::new(&project_dir).with_user_file(Some(user.clone()));

        // The user file alone: used without any trust store.
        let Discovered::Ready { path, builder, .. } = discovery().find(None, &EmptyEnv).unwrap()
        else {
            panic!("the user file alone is ready")
        };
        assert_eq!(path, user);
        assert_eq!(builder.build().servers().count(), 2);
        assert!(!discovery().uses_trust());

        // With a project file: the project file needs trust before anything is used...
        let project = project_dir.join("mcp.toml");
        std::fs::write(&project, "[mcp_servers.a]\ncommand = \"from-project\"\n").unwrap();
        let mut trust = store(dir.path());
        let found = discovery().find(Some(&trust), &EmptyEnv).unwrap();
        assert!(
            matches!(&found, Discovered::NeedsTrust { config, .. } if *config == project),
            "{found:?}"
        );
        // ...and once trusted it wins over the user file per server; the user's own stays.
        trust.trust(&project).unwrap();
        let Discovered::Ready {
            path,
            builder,
            files,
            ..
        } = discovery().find(Some(&trust), &EmptyEnv).unwrap()
        else {
            panic!("trusted project file is ready")
        };
        assert_eq!(path, project);
        assert_eq!(files.len(), 2);
        let catalog = builder.build();
        let commands: Vec<(String, String)> = catalog
            .servers()
            .map(|(key, config)| {
                let command = match config.transport() {
                    crate::Transport::Stdio(stdio) => stdio.command().to_owned(),
                    other => panic!("{other:?}"),
                };
                (key.name().to_string(), command)
            })
            .collect();
        assert_eq!(
            commands,
            [
                ("a".to_owned(), "from-project".to_owned()),
                ("b".to_owned(), "mine".to_owned())
            ]
        );
        assert_eq!(
            discovery().locations(),
            [user.clone(), project.clone(), project_dir.join(".mcp.json")]
        );

        // An explicit file is used alone.
        let only = dir.path().join("only.toml");
        std::fs::write(&only, "[mcp_servers.c]\ncommand = \"x\"\n").unwrap();
        let Discovered::Ready { builder, .. } = discovery()
            .with_explicit_file(Some(only))
            .find(None, &EmptyEnv)
            .unwrap()
        else {
            panic!("explicit file is ready")
        };
        assert_eq!(builder.build().servers().count(), 1);
    }

    #[test]
    fn a_plugin_outside_the_project_folder_needs_its_own_trust() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        let plugin = root.path().join("plugin");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&plugin).unwrap();
        std::fs::write(
            plugin.join("mcp.toml"),
            "[mcp_servers.p]\ncommand = \"plugged\"\n",
        )
        .unwrap();
        let config = project.join("mcp.toml");
        std::fs::write(
            &config,
            "[[plugins]]\npath = \"../plugin\"\n\n[mcp_servers.a]\ncommand = \"tool\"\n",
        )
        .unwrap();
        let mut trust = store(root.path());
        trust.trust(&config).unwrap();
        let found = Discovery::new(&project)
            .find(Some(&trust), &EmptyEnv)
            .unwrap();
        let Discovered::NeedsTrust { untrusted, .. } = found else {
            panic!("{found:?}")
        };
        assert_eq!(
            untrusted.canonicalize().unwrap(),
            plugin.join("mcp.toml").canonicalize().unwrap()
        );
        trust.trust(&plugin).unwrap();
        let found = Discovery::new(&project)
            .find(Some(&trust), &EmptyEnv)
            .unwrap();
        let Discovered::Ready { builder, .. } = found else {
            panic!("{found:?}")
        };
        assert_eq!(builder.build().servers().count(), 2);
    }

    #[test]
    fn a_clients_project_file_needs_trust_and_wins_over_its_user_file() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let project = root.path().join("project");
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::create_dir_all(project.join(".cursor")).unwrap();
        let server =
            |command: &str| format!(r#"{{"mcpServers": {{"a": {{"command": "{command}"}}}}}}"#);
        std::fs::write(home.join(".cursor/mcp.json"), server("user-tool")).unwrap();
        let project_file = project.join(".cursor/mcp.json");
        std::fs::write(&project_file, server("project-tool")).unwrap();
        let discovery = Discovery::new(&project).with_client(ClientKind::Cursor, &home);
        assert!(discovery.uses_trust());
        assert_eq!(discovery.path(), Some(project_file.clone()));
        let mut trust = store(root.path());
        let found = discovery.find(Some(&trust), &EmptyEnv).unwrap();
        let Discovered::NeedsTrust { untrusted, .. } = found else {
            panic!("{found:?}")
        };
        assert_eq!(untrusted, project_file);

        trust.trust(&project_file).unwrap();
        let found = discovery.find(Some(&trust), &EmptyEnv).unwrap();
        let Discovered::Ready { builder, files, .. } = found else {
            panic!("{found:?}")
        };
        assert_eq!(files.len(), 2);
        let catalog = builder.build();
        let key = mcp_key::McpServerKey::unscoped(mcp_key::ServerName::new("a").unwrap());
        let command = catalog
            .get(&key)
            .and_then(|s| s.transport().as_stdio())
            .map(|s| s.command().to_owned());
        assert_eq!(command.as_deref(), Some("project-tool"));

        // Without the project file only the user's own file is used, without trust.
        std::fs::remove_file(&project_file).unwrap();
        assert!(!discovery.uses_trust());
        let found = discovery.find(None, &EmptyEnv).unwrap();
        assert!(matches!(found, Discovered::Ready { .. }), "{found:?}");
        std::fs::remove_file(home.join(".cursor/mcp.json")).unwrap();
        let found = discovery.find(None, &EmptyEnv).unwrap();
        assert!(matches!(found, Discovered::NotFound), "{found:?}");
        assert_eq!(discovery.locations().len(), 2);
    }
}
