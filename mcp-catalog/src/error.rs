//! The crate's error type.

use std::fmt;
use std::path::PathBuf;

use crate::diagnostic::ConfigErrors;

/// Why a configuration or a plugin could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read (missing, unreadable, not UTF-8).
    #[error("cannot read MCP configuration `{}`: check that it exists and is readable UTF-8", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The text was read but is invalid; every problem is listed, one per line.
    #[error(transparent)]
    Invalid(#[from] ConfigErrors),
    /// A plugin folder does not declare its servers in exactly one file.
    #[error("plugin folder `{}` {problem}", dir.display())]
    PluginFolder {
        /// The folder.
        dir: PathBuf,
        /// What is wrong with it.
        problem: PluginFolderProblem,
    },
    /// A `[[plugins]]` entry of a user configuration could not be loaded; the source says
    /// why (with the plugin file, line and column when its file is invalid).
    #[error("plugin #{} of `[[plugins]]` (`{}`) could not be loaded", index + 1, path.display())]
    PluginEntry {
        /// The entry's position in `[[plugins]]` (0-based).
        index: usize,
        /// The plugin folder, resolved against the configuration's folder.
        path: PathBuf,
        /// Why it could not be loaded.
        #[source]
        source: Box<Error>,
    },
    /// The trust store ([`TrustStore`](crate::TrustStore)) cannot be used.
    #[error("trust store `{}` {problem}", path.display())]
    TrustStore {
        /// The store's file.
        path: PathBuf,
        /// What is wrong, and what to do.
        problem: String,
    },
}

/// What is wrong with a plugin folder ([`Error::PluginFolder`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PluginFolderProblem {
    /// Neither `.mcp.json` nor `mcp.toml` exists in it.
    NoManifest,
    /// Both `.mcp.json` and `mcp.toml` exist in it.
    BothManifests,
    /// The path exists but is not a folder.
    NotAFolder,
}

impl fmt::Display for PluginFolderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PluginFolderProblem::NoManifest => {
                "declares no servers: add a `.mcp.json` (`{\"mcpServers\": {...}}`) or an \
                 `mcp.toml` (`[mcp_servers.<name>]`) to it"
            }
            PluginFolderProblem::BothManifests => {
                "has both `.mcp.json` and `mcp.toml`: keep only one of them"
            }
            PluginFolderProblem::NotAFolder => {
                "is not a folder: point the plugin's `path` at the folder that holds its \
                 `.mcp.json` or `mcp.toml`"
            }
        })
    }
}

impl Error {
    /// True when a file could not be read (also through a `[[plugins]]` entry).
    pub fn is_read(&self) -> bool {
        match self {
            Error::Read { .. } => true,
            Error::PluginEntry { source, .. } => source.is_read(),
            _ => false,
        }
    }

    /// True when a configuration or plugin file is invalid (also through a `[[plugins]]`
    /// entry).
    pub fn is_invalid(&self) -> bool {
        match self {
            Error::Invalid(_) => true,
            Error::PluginEntry { source, .. } => source.is_invalid(),
            _ => false,
        }
    }

    /// True when a plugin folder has no declaration file, two, or is not a folder (also
    /// through a `[[plugins]]` entry).
    pub fn is_plugin_folder(&self) -> bool {
        match self {
            Error::PluginFolder { .. } => true,
            Error::PluginEntry { source, .. } => source.is_plugin_folder(),
            _ => false,
        }
    }

    /// True when the trust store cannot be read or written.
    pub fn is_trust_store(&self) -> bool {
        matches!(self, Error::TrustStore { .. })
    }

    /// True when the error is about a `[[plugins]]` entry of a user configuration.
    pub fn is_plugin_entry(&self) -> bool {
        matches!(self, Error::PluginEntry { .. })
    }

    /// The validation errors, when a configuration or plugin file is invalid (also through
    /// a `[[plugins]]` entry).
    pub fn config_errors(&self) -> Option<&ConfigErrors> {
        match self {
            Error::Invalid(errors) => Some(errors),
            Error::PluginEntry { source, .. } => source.config_errors(),
            Error::Read { .. } | Error::PluginFolder { .. } | Error::TrustStore { .. } => None,
        }
    }
}
