//! The built-in ssh environment: a stdio server runs on another machine, reached with the
//! local `ssh` program, and its command goes over as one remote line quoted for POSIX `sh`
//! (`mcp_catalog::server_remote_line`, the same line the trust review shows).

use mcp_catalog::{EnvironmentConfig, SshConfig};
use mcp_key::{EnvironmentId, McpServerKey};
use mcp_pool::LaunchSpec;

use crate::environment::{ENVIRONMENT_ID_VAR, Environment, EnvironmentError};

/// The agent socket ssh authenticates with, passed through to the local `ssh` when the
/// host has one (the launcher clears every other variable).
pub const SSH_AUTH_SOCK_VAR: &str = "SSH_AUTH_SOCK";

/// Runs servers on the machine of an [`SshConfig`]: the local process is `ssh … DEST --
/// LINE`; the server's variables (literal and named) and folder are set on the remote
/// side by the line (`cd DIR && exec env K=V… program args…`).
#[derive(Debug, Clone)]
pub struct SshEnvironment {
    id: EnvironmentId,
    ssh: SshConfig,
    /// The environment's own folder and variables (the server's win).
    config: EnvironmentConfig,
}

impl SshEnvironment {
    /// An environment `id` whose servers run over `ssh`.
    pub fn new(id: EnvironmentId, ssh: SshConfig) -> Self {
        Self {
            id,
            config: EnvironmentConfig::new().with_ssh(ssh.clone()),
            ssh,
        }
    }

    /// The ssh environment of a catalog entry, if it is one.
    pub(crate) fn from_catalog(id: &EnvironmentId, config: &EnvironmentConfig) -> Option<Self> {
        Some(Self {
            id: id.clone(),
            ssh: config.ssh()?.clone(),
            config: config.clone(),
        })
    }

    /// The environment's id.
    pub fn id(&self) -> &EnvironmentId {
        &self.id
    }

    /// Its ssh settings.
    pub fn ssh(&self) -> &SshConfig {
        &self.ssh
    }
}

impl Environment for SshEnvironment {
    fn prepare_launch(
        &self,
        _server: &McpServerKey,
        launch: LaunchSpec,
    ) -> Result<LaunchSpec, EnvironmentError> {
        let mut words = vec![launch.program().to_owned()];
        words.extend(launch.args().iter().cloned());
        let line =
            mcp_catalog::server_remote_line(&self.config, &words, launch.env(), launch.cwd());
        let argv = self.ssh.argv(line);
        let (tail_lines, tail_bytes) = launch.stderr_tail_limits();
        // A new spec: the local process is ssh, started in no particular folder and with
        // none of the server's variables (they are the remote side's).
        Ok(LaunchSpec::new(argv[0].clone())
            .with_args(argv[1..].iter().cloned())
            .with_label(launch.label().to_owned())
            .with_line_limit(launch.line_limit())
            .with_stdin_grace(launch.stdin_grace())
            .with_term_grace(launch.term_grace())
            .with_stderr_tail(tail_lines, tail_bytes)
            .with_env(ENVIRONMENT_ID_VAR, self.id.as_str())
            .with_env_var(SSH_AUTH_SOCK_VAR))
    }
}
