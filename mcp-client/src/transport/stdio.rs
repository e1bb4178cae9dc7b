//! stdio servers through mcp-pool's launcher (the only place that spawns processes).

use std::sync::Arc;
use std::time::Duration;

use mcp_key::McpServerKey;
use mcp_pool::{LaunchError, LaunchSpec, ProcessExit, StdioProcess, StdioTransport};

use crate::failure::{FailureReason, StartupFailure};
use crate::settings::ClientSettings;
use crate::settings::environment::Environment;
use mcp_catalog::StdioConfig;

/// How long to wait for an exit status and the rest of stderr after the pipe closed.
const EXIT_SETTLE: Duration = Duration::from_millis(500);

/// How long to wait for a killed process to be reaped.
const KILL_REAP: Duration = Duration::from_secs(2);

/// A launched stdio server process.
pub(crate) struct Process {
    inner: StdioProcess,
}

/// The failure of a launch: this layer's sentence, the launcher's error as the cause. The
/// cause names the server (the launch is labelled with its key) and the command, so this
/// sentence does not name them again.
fn failure_for_launch(e: LaunchError) -> StartupFailure {
    let (reason, what) = match e {
        LaunchError::InvalidSpec { .. } => (
            FailureReason::Config,
            "its process cannot be launched as configured",
        ),
        _ => (
            FailureReason::SpawnFailed,
            "its process could not be started",
        ),
    };
    StartupFailure::new(reason, what).with_source(e)
}

/// An `env` value as the child gets it: a secret reference (`${secret:NAME}`,
/// [`mcp_catalog::RegistryInput::secret_reference`]) is read through the settings' lookup
/// under a name bound to the server; any other value is literal. A reference that is
/// malformed or names a secret the lookup does not have fails the start (reason `config`).
fn env_value(
    key: &McpServerKey,
    value: &str,
    options: &ClientSettings,
) -> Result<String, StartupFailure> {
    use mcp_catalog::RegistryInput;
    match RegistryInput::referenced_secret(value) {
        None => Ok(value.to_owned()),
        Some(Err(problem)) => Err(StartupFailure::new(
            FailureReason::Config,
            format!("MCP server `{key}`: {problem}"),
        )),
        Some(Ok(variable)) => options
            .env
            .get(&RegistryInput::secret_lookup_name(
                key.name().as_str(),
                variable,
            ))
            .ok_or_else(|| {
                StartupFailure::new(
                    FailureReason::Config,
                    format!(
                        "MCP server `{key}`: its {variable} refers to a stored secret, and none is \
                         stored for this server; store it by adding the server again (`mcpctl \
                         add`), or replace the reference with the variable in `env_vars`"
                    ),
                )
            }),
    }
}

/// Spawns the server (off the async executor, inside the launcher).
pub(crate) async fn launch(
    key: &McpServerKey,
    spec: &StdioConfig,
    environment: Option<&Arc<dyn Environment>>,
    options: &ClientSettings,
) -> Result<(Process, StdioTransport), StartupFailure> {
    let mut launch = LaunchSpec::new(spec.command().to_owned())
        .with_args(spec.args().iter().cloned())
        .with_label(key.to_string())
        .with_stdin_grace(options.process_grace)
        .with_term_grace(options.process_grace);
    // Named variables are read through the settings' lookup (so hosts and tests control it)
    // and passed on as literal values; a missing variable is simply not set.
    for name in spec.env_vars() {
        if let Some(value) = options.env.get(name) {
            launch = launch.with_env(name.clone(), value);
        }
    }
    for (k, v) in spec.env() {
        launch = launch.with_env(k.clone(), env_value(key, v, options)?);
    }
    if let Some(cwd) = spec.cwd() {
        launch = launch.with_cwd(cwd.to_path_buf());
    }
    if let Some(environment) = environment {
        environment.before_launch(key).await.map_err(|e| {
            let reason = e.failure.clone().unwrap_or(FailureReason::Environment);
            StartupFailure::new(reason, format!("MCP {e}"))
        })?;
        launch = environment
            .prepare_launch(key, launch)
            .map_err(|e| StartupFailure::new(FailureReason::Environment, format!("MCP {e}")))?;
    }
    let mut process = mcp_pool::launch(launch).await.map_err(failure_for_launch)?;
    let transport = process.take_transport().ok_or_else(|| {
        StartupFailure::new(
            FailureReason::Protocol,
            format!("MCP server `{key}`: no stdio transport"),
        )
    })?;
    Ok((Process { inner: process }, transport))
}

impl Process {
    pub(crate) fn has_exited(&self) -> bool {
        self.inner.has_exited()
    }

    /// A handle that resolves when the process exits.
    pub(crate) fn exit_watcher(&self) -> mcp_pool::ExitWatcher {
        self.inner.exit_watcher()
    }

    pub(crate) async fn wait_exit(&self) -> ProcessExit {
        self.inner.exit_watcher().wait_exit().await
    }

    pub(crate) fn stderr_tail(&self) -> String {
        self.inner.stderr_tail().snapshot()
    }

    pub(crate) async fn shutdown(&self) {
        let _ = self.inner.shutdown().await;
    }

    /// Kills the process group at once (no grace) and waits, bounded, for the leader to
    /// be reaped.
    pub(crate) async fn kill_and_reap(&self) {
        self.inner.kill();
        let _ = tokio::time::timeout(KILL_REAP, self.wait_exit()).await;
    }

    /// The leader's process id, which is also its process group id.
    pub(crate) fn pid(&self) -> u32 {
        self.inner.pid()
    }

    /// The failure of a process that went away on its own.
    pub(crate) async fn exit_failure(&self) -> StartupFailure {
        let exit = tokio::time::timeout(EXIT_SETTLE, self.wait_exit())
            .await
            .ok();
        let tail = self.inner.stderr_tail();
        let _ = tokio::time::timeout(EXIT_SETTLE, tail.wait_closed()).await;
        let label = self.inner.label().to_owned();
        let failure = if let Some(fault) = self.inner.stdout_fault() {
            StartupFailure::new(
                FailureReason::Protocol,
                format!("MCP server `{label}`: {fault}"),
            )
        } else {
            match exit {
                // The shell that was to run it (the remote login shell, the ssh
                // supervisor, a wrapper's shell) did not find the program.
                Some(ProcessExit::Exited(127)) if tail.snapshot().contains("not found") => {
                    StartupFailure::new(
                        FailureReason::CommandNotFound,
                        format!(
                            "MCP server `{label}`: its command was not found where it runs (exit status 127); install it there or fix `command`"
                        ),
                    )
                }
                Some(ProcessExit::Exited(code)) => StartupFailure::new(
                    FailureReason::Exited {
                        status: Some(code),
                        signal: None,
                    },
                    format!("MCP server `{label}` exited with status {code}"),
                ),
                Some(ProcessExit::Signaled(sig)) => StartupFailure::new(
                    FailureReason::Exited {
                        status: None,
                        signal: Some(sig),
                    },
                    format!("MCP server `{label}` was killed by signal {sig}"),
                ),
                Some(other) => StartupFailure::new(
                    FailureReason::Exited {
                        status: None,
                        signal: None,
                    },
                    format!("MCP server `{label}` exited ({other})"),
                ),
                None => StartupFailure::new(
                    FailureReason::Protocol,
                    format!("MCP server `{label}` closed its stdout"),
                ),
            }
        };
        failure.with_stderr_tail(tail.snapshot())
    }

    /// Classifies a startup that failed with `detail`: an exit (with status) when the
    /// process died, else a protocol failure.
    pub(crate) async fn startup_failure(
        &self,
        key: &McpServerKey,
        detail: String,
    ) -> StartupFailure {
        let exited = tokio::time::timeout(EXIT_SETTLE, self.wait_exit())
            .await
            .is_ok();
        if exited || self.inner.stdout_fault().is_some() {
            return self.exit_failure().await;
        }
        StartupFailure::new(
            FailureReason::Protocol,
            format!("MCP server `{key}`: {detail}"),
        )
        .with_stderr_tail(self.stderr_tail())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_secret_reference_is_read_under_the_servers_name_and_a_missing_one_is_named() {
        let env: BTreeMap<String, String> =
            BTreeMap::from([("secret:weather/API_KEY".to_owned(), "k3y".to_owned())]);
        let settings = ClientSettings::new().with_env(Arc::new(env));
        let weather: McpServerKey = "weather".parse().unwrap_or_else(|_| unreachable!());
        let other: McpServerKey = "other".parse().unwrap_or_else(|_| unreachable!());
        let value = |key: &McpServerKey, v: &str| env_value(key, v, &settings);

        assert_eq!(value(&weather, "plain").ok().as_deref(), Some("plain"));
        assert_eq!(
            value(&weather, "${secret:API_KEY}").ok().as_deref(),
            Some("k3y")
        );
        // Bound to the server: another server's reference of the same variable is not it.
        let missing = value(&other, "${secret:API_KEY}")
            .err()
            .map(|e| e.to_string());
        assert!(
            missing.as_deref().is_some_and(|m| m.contains("`other`")
                && m.contains("API_KEY")
                && m.contains("mcpctl add")),
            "{missing:?}"
        );
        let malformed = value(&weather, "${secret:API KEY}").err();
        assert_eq!(
            malformed.as_ref().map(StartupFailure::reason),
            Some(&FailureReason::Config)
        );
    }
}
