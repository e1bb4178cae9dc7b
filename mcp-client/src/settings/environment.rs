//! Execution environments: how a stdio server is launched "in" an environment other than the
//! local machine (a devbox over ssh, a container).

use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_key::{EnvironmentId, McpServerKey};
use mcp_pool::LaunchSpec;

/// Environment variable naming the environment, set for the wrapper process of the
/// built-in [`WrapperEnvironment`].
pub const ENVIRONMENT_ID_VAR: &str = "MCP_ENVIRONMENT";
/// Environment variable carrying the environment's default working directory, set for the
/// wrapper process of the built-in [`WrapperEnvironment`] when one is configured.
pub const ENVIRONMENT_CWD_VAR: &str = "MCP_ENVIRONMENT_CWD";

/// Why a server cannot be launched in an environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment `{environment}` cannot launch MCP server `{server}`: {reason}")]
pub struct EnvironmentError {
    /// The environment.
    pub environment: EnvironmentId,
    /// The server.
    pub server: McpServerKey,
    /// What is wrong.
    pub reason: String,
    /// A finer reason than [`crate::FailureReason::Environment`] (the ssh environment's
    /// connection failures); `None` fails the startup with `environment`.
    pub failure: Option<crate::FailureReason>,
}

/// A place stdio servers run in. The host implements it to launch servers its own way; the
/// built-in [`WrapperEnvironment`] runs the command behind a prefix such as
/// `["ssh", "devbox", "--"]`.
///
/// The result is still launched by `mcp-pool`'s launcher, so process groups, the cleared
/// environment and shutdown escalation apply to whatever runs locally.
pub trait Environment: Send + Sync {
    /// Adapts the launch of `server` (its command, arguments, variables) to this
    /// environment.
    fn prepare_launch(
        &self,
        server: &McpServerKey,
        launch: LaunchSpec,
    ) -> Result<LaunchSpec, EnvironmentError>;

    /// Gets the environment ready before each launch of `server` (the ssh environment
    /// brings its shared connection up here). The default has nothing to do.
    ///
    /// # Cancel safety
    /// Implementations must be cancel-safe: a cancelled startup drops the future.
    fn before_launch<'a>(
        &'a self,
        server: &'a McpServerKey,
    ) -> crate::BoxFuture<'a, Result<(), EnvironmentError>> {
        let _ = server;
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The built-in environment: runs the server's command behind a wrapper prefix, with extra
/// variables for the wrapper process.
///
/// The wrapper process also gets [`ENVIRONMENT_ID_VAR`] and, when a default directory is
/// configured, [`ENVIRONMENT_CWD_VAR`]: a remote working directory cannot be set from here
/// (the local process's cwd would be wrong for `ssh`), so a wrapper script that needs it
/// reads the variable.
#[derive(Debug, Clone)]
pub struct WrapperEnvironment {
    id: EnvironmentId,
    wrapper: Vec<String>,
    cwd: Option<PathBuf>,
    env: BTreeMap<String, String>,
}

impl WrapperEnvironment {
    /// An environment that prefixes commands with `wrapper`.
    pub fn new<I, S>(id: EnvironmentId, wrapper: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            id,
            wrapper: wrapper.into_iter().map(Into::into).collect(),
            cwd: None,
            env: BTreeMap::new(),
        }
    }

    /// The default working directory inside the environment.
    #[must_use]
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// An extra variable for the wrapper process.
    #[must_use]
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(name.into(), value.into());
        self
    }

    /// The environment `id` as its catalog entry (`[environments.<id>]`) describes it:
    /// its wrapper, default directory and variables.
    pub fn from_config(id: &EnvironmentId, config: &mcp_catalog::EnvironmentConfig) -> Self {
        let mut env = Self::new(id.clone(), config.wrapper().iter().cloned());
        if let Some(cwd) = config.cwd() {
            env = env.with_cwd(cwd);
        }
        for (k, v) in config.env() {
            env = env.with_env(k.clone(), v.clone());
        }
        env
    }
}

impl Environment for WrapperEnvironment {
    fn prepare_launch(
        &self,
        server: &McpServerKey,
        launch: LaunchSpec,
    ) -> Result<LaunchSpec, EnvironmentError> {
        if self.wrapper.is_empty() && !self.id.is_local() {
            return Err(EnvironmentError {
                environment: self.id.clone(),
                server: server.clone(),
                reason: "it has no wrapper command; set `ssh` or `wrapper` in [environments] or register a host environment".to_owned(),
                failure: None,
            });
        }
        let mut launch = launch
            .with_wrapper(self.wrapper.iter().cloned())
            .with_env(ENVIRONMENT_ID_VAR, self.id.as_str());
        if let Some(cwd) = &self.cwd {
            launch = launch.with_env(ENVIRONMENT_CWD_VAR, cwd.to_string_lossy());
        }
        // The server's own variables win over the environment's.
        for (k, v) in &self.env {
            if !launch.env().contains_key(k) {
                launch = launch.with_env(k.clone(), v.clone());
            }
        }
        Ok(launch)
    }
}
