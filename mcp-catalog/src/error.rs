//! The crate's error type.

use std::path::PathBuf;

use crate::diagnostic::ConfigErrors;

/// Why a configuration could not be loaded.
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
}

impl Error {
    /// True when the file could not be read.
    pub fn is_read(&self) -> bool {
        matches!(self, Error::Read { .. })
    }

    /// True when the configuration is invalid.
    pub fn is_invalid(&self) -> bool {
        matches!(self, Error::Invalid(_))
    }

    /// The validation errors, when the configuration is invalid.
    pub fn config_errors(&self) -> Option<&ConfigErrors> {
        match self {
            Error::Invalid(errors) => Some(errors),
            Error::Read { .. } => None,
        }
    }
}
