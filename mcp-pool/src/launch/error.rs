//! [`LaunchError`]: why a server process could not be started.

use std::io;
use std::path::PathBuf;

/// Why [`launch`](crate::launch) could not start a server.
///
/// Every message names the server and the command that was spawned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The program does not exist (not in the child's `PATH`, or no such file).
    #[error(
        "server `{server}`: command `{command}` not found{}; install it or fix the command",
        if command.contains('/') { "" } else { " in PATH" }
    )]
    CommandNotFound {
        /// The server's label.
        server: String,
        /// The program that was spawned.
        command: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The program exists but cannot be executed (permissions, not a binary).
    #[error(
        "server `{server}`: command `{command}` is not executable; check its permissions (chmod +x) or its format"
    )]
    NotExecutable {
        /// The server's label.
        server: String,
        /// The program that was spawned.
        command: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The configured working directory does not exist or is not a directory.
    #[error(
        "server `{server}`: working directory `{}` for command `{command}` does not exist or is not a directory",
        cwd.display()
    )]
    BadCwd {
        /// The server's label.
        server: String,
        /// The program that was spawned.
        command: String,
        /// The configured directory.
        cwd: PathBuf,
    },
    /// The spec cannot be launched as written (e.g. an empty program).
    #[error("server `{server}`: invalid launch spec: {reason}")]
    InvalidSpec {
        /// The server's label.
        server: String,
        /// What is wrong.
        reason: String,
    },
    /// Any other spawn failure (resource limits, pipes, the runtime).
    #[error("server `{server}`: could not start command `{command}`")]
    Spawn {
        /// The server's label.
        server: String,
        /// The program that was spawned.
        command: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

impl LaunchError {
    /// The program was not found.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::CommandNotFound { .. })
    }

    /// The program is not executable.
    pub fn is_not_executable(&self) -> bool {
        matches!(self, Self::NotExecutable { .. })
    }

    /// The working directory is bad.
    pub fn is_bad_cwd(&self) -> bool {
        matches!(self, Self::BadCwd { .. })
    }

    /// The failure is a configuration problem that retrying will not fix.
    pub fn is_config_error(&self) -> bool {
        !matches!(self, Self::Spawn { .. })
    }

    /// The command named in the message, if any.
    pub fn command(&self) -> Option<&str> {
        match self {
            Self::CommandNotFound { command, .. }
            | Self::NotExecutable { command, .. }
            | Self::BadCwd { command, .. }
            | Self::Spawn { command, .. } => Some(command),
            Self::InvalidSpec { .. } => None,
        }
    }
}
