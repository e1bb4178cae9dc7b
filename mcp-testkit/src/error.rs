//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while loading a scenario or running a fake server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A scenario file could not be read.
    #[error("cannot read scenario file {path}: check that it exists and is readable")]
    ScenarioRead {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A scenario (file or string) is not valid TOML/JSON for a [`crate::Scenario`].
    #[error("invalid scenario {origin}: {message}")]
    ScenarioParse {
        /// Where the scenario came from (a path, or `<string>`).
        origin: String,
        /// The parser's message (line and field included).
        message: String,
    },
    /// A scenario file has an extension other than `.toml` or `.json`.
    #[error("scenario file {path} must end in .toml or .json")]
    ScenarioExtension {
        /// The file.
        path: PathBuf,
    },
    /// A file the fake server writes (pid file, request log, addr file) failed.
    #[error("fake server cannot write {path}: check the directory exists")]
    WriteFile {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Some other I/O failure, with what was being done.
    #[error("fake server I/O failed while {doing}")]
    Io {
        /// What was being done.
        doing: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The rmcp service failed to start or run.
    #[error("fake server protocol failure while {doing}: {message}")]
    Protocol {
        /// What was being done.
        doing: &'static str,
        /// rmcp's message.
        message: String,
    },
    /// The `mcp-fake-server` binary could not be found or built.
    #[error("cannot find or build the mcp-fake-server binary: {message}")]
    Binary {
        /// What was tried.
        message: String,
    },
    /// The sshd test fixture could not start sshd (or generate its keys).
    #[error("sshd fixture failed to start; its output:\n{log}")]
    Sshd {
        /// sshd's log or ssh-keygen's stderr.
        log: String,
    },
}

impl Error {
    /// True when the error is about the scenario description (read, parse, extension).
    pub fn is_scenario(&self) -> bool {
        matches!(
            self,
            Self::ScenarioRead { .. } | Self::ScenarioParse { .. } | Self::ScenarioExtension { .. }
        )
    }

    /// True when the `mcp-fake-server` binary could not be located or built.
    pub fn is_binary(&self) -> bool {
        matches!(self, Self::Binary { .. })
    }

    /// True for I/O failures (files, sockets, pipes).
    pub fn is_io(&self) -> bool {
        matches!(self, Self::Io { .. } | Self::WriteFile { .. })
    }
}
