//! The built-in ssh environment: a stdio server runs on another machine, reached with the
//! local `ssh` program, and its command goes over as one remote line quoted for POSIX `sh`
//! (`mcp_catalog::server_remote_line`, the same line the trust review shows).

use std::sync::Arc;

use mcp_catalog::{EnvironmentConfig, SshConfig};
use mcp_key::{EnvironmentId, McpServerKey};
use mcp_pool::LaunchSpec;

use crate::environments::ssh_master::{ControlFolder, Master, client_options};
use mcp_client::{ENVIRONMENT_ID_VAR, Environment, EnvironmentError};

/// The agent socket ssh authenticates with, passed through to the local `ssh` when the
/// host has one (the launcher clears every other variable).
pub const SSH_AUTH_SOCK_VAR: &str = "SSH_AUTH_SOCK";

/// Runs servers on the machine of an [`SshConfig`]: the local process is `ssh … DEST --
/// LINE`; the server's folder is set on the remote side by the line (`cd DIR && exec …`),
/// its variables (literal and named) are written first on ssh's stdin and set there with
/// `env`, so their values are on no local command line.
///
/// Its servers share one ssh connection: a control master started before the first
/// launch (and again after it dropped), with its socket in a private 0700 folder under
/// `/tmp`; the master is ended and the folder removed when the environment is dropped
/// (with its `ConnectionSet`).
#[derive(Debug, Clone)]
pub struct SshEnvironment {
    id: EnvironmentId,
    ssh: SshConfig,
    /// The environment's own folder and variables (the server's win).
    config: EnvironmentConfig,
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    // Dropped first: the master goes before its socket's folder.
    master: tokio::sync::Mutex<Option<Master>>,
    /// `None` when the folder could not be made: then every server connects on its own.
    folder: Option<ControlFolder>,
}

impl Shared {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            master: tokio::sync::Mutex::new(None),
            folder: ControlFolder::create().ok(),
        })
    }
}

impl SshEnvironment {
    /// An environment `id` whose servers run over `ssh`.
    pub fn new(id: EnvironmentId, ssh: SshConfig) -> Self {
        Self {
            id,
            config: EnvironmentConfig::new().with_ssh(ssh.clone()),
            ssh,
            shared: Shared::new(),
        }
    }

    /// The ssh environment of a catalog entry, if it is one.
    pub(crate) fn from_catalog(id: &EnvironmentId, config: &EnvironmentConfig) -> Option<Self> {
        Some(Self {
            id: id.clone(),
            ssh: config.ssh()?.clone(),
            config: config.clone(),
            shared: Shared::new(),
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
    fn before_launch<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> crate::BoxFuture<'a, Result<(), EnvironmentError>> {
        Box::pin(async move {
            let Some(folder) = &self.shared.folder else {
                return Ok(());
            };
            // Single flight: one master per environment, started by the first launch.
            let mut master = self.shared.master.lock().await;
            if master.as_ref().is_some_and(Master::is_up) {
                return Ok(());
            }
            if let Some(old) = master.take() {
                old.shutdown().await;
            }
            // A master killed without cleaning up leaves its socket behind.
            let _ = std::fs::remove_file(folder.socket());
            match Master::start(&self.ssh, self.id.as_str(), folder.socket()).await {
                Ok(started) => {
                    *master = Some(started);
                    Ok(())
                }
                Err(failure) => Err(EnvironmentError {
                    environment: self.id.clone(),
                    server: server.clone(),
                    reason: crate::environments::ssh_failure::describe(&self.ssh, &failure),
                    failure: Some(crate::environments::ssh_failure::reason(&failure)),
                }),
            }
        })
    }

    fn prepare_launch(
        &self,
        _server: &McpServerKey,
        launch: LaunchSpec,
    ) -> Result<LaunchSpec, EnvironmentError> {
        let mut words = vec![launch.program().to_owned()];
        words.extend(launch.args().iter().cloned());
        let line =
            mcp_catalog::server_remote_line(&self.config, &words, launch.env(), launch.cwd());
        // The values go on stdin, before the server's first message: on the command line
        // any local user would see them with `ps`.
        let variables = mcp_catalog::server_remote_stdin(&self.config, launch.env());
        let mut argv = self.ssh.argv(line);
        if let Some(folder) = &self.shared.folder {
            // Right after the program: ssh keeps the first value of each option.
            argv.splice(1..1, client_options(&folder.socket()));
        }
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
            .with_env_var(SSH_AUTH_SOCK_VAR)
            .with_stdin_preamble(variables))
    }
}
