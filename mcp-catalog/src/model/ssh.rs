//! The ssh environment kind (`[environments.<id>] ssh = { host = "…", … }`): how to reach
//! the machine where the servers run, and the local `ssh` argv up to its one remote
//! command word (built in `remote_line.rs`).

use std::path::{Path, PathBuf};

/// The local ssh program.
pub const SSH_PROGRAM: &str = "ssh";

/// Options always passed (after the configured ones would be too late: ssh keeps the
/// first value of an option, so these come first and cannot be weakened by `options`):
/// the host key must be known (never accepted silently) and ssh must never prompt.
pub const SSH_FIXED_OPTIONS: [&str; 4] = ["-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes"];

/// How to reach the machine of an ssh environment. `host` is required; everything else
/// falls back to ssh's own defaults (and `~/.ssh/config`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SshConfig {
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
    pub(crate) user: Option<String>,
    pub(crate) identity_file: Option<PathBuf>,
    pub(crate) known_hosts: Option<PathBuf>,
    pub(crate) options: Vec<String>,
}

impl SshConfig {
    /// Servers run on `host` (a name, an address, or a `Host` alias of `~/.ssh/config`).
    pub fn new(host: impl Into<String>) -> Self {
        Self {
            host: host.into(),
            port: None,
            user: None,
            identity_file: None,
            known_hosts: None,
            options: Vec::new(),
        }
    }

    /// Sets the port (`-p`).
    #[must_use]
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// Sets the login user (`user@host`).
    #[must_use]
    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    /// Sets the private key (`-i`).
    #[must_use]
    pub fn with_identity_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.identity_file = Some(path.into());
        self
    }

    /// Sets the known hosts file (`-o UserKnownHostsFile=…`).
    #[must_use]
    pub fn with_known_hosts(mut self, path: impl Into<PathBuf>) -> Self {
        self.known_hosts = Some(path.into());
        self
    }

    /// Adds ssh options, passed as written before the destination
    /// (e.g. `["-o", "ConnectTimeout=5"]`). A configuration file's `options` may only hold
    /// options that neither run a command nor read a file (checked when it is parsed);
    /// options set here are the host's own and are not checked.
    #[must_use]
    pub fn with_options<I, S>(mut self, options: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.extend(options.into_iter().map(Into::into));
        self
    }

    /// The host.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, if set.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The login user, if set.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The private key, if set.
    pub fn identity_file(&self) -> Option<&Path> {
        self.identity_file.as_deref()
    }

    /// The known hosts file, if set.
    pub fn known_hosts(&self) -> Option<&Path> {
        self.known_hosts.as_deref()
    }

    /// The extra ssh options, as written.
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// `user@host`, or `host` without a user.
    pub fn destination(&self) -> String {
        match &self.user {
            Some(user) => format!("{user}@{}", self.host),
            None => self.host.clone(),
        }
    }

    /// How a person names it: `user@host:port` (the parts that are set).
    pub fn display_target(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.destination()),
            None => self.destination(),
        }
    }

    /// The local argv up to the destination: `ssh -o StrictHostKeyChecking=yes -o
    /// BatchMode=yes [-p PORT] [-i KEY] [-o UserKnownHostsFile=FILE] OPTIONS… DEST`.
    pub fn ssh_argv(&self) -> Vec<String> {
        let mut argv = vec![SSH_PROGRAM.to_owned()];
        argv.extend(SSH_FIXED_OPTIONS.iter().map(|s| (*s).to_owned()));
        if let Some(port) = self.port {
            argv.extend(["-p".to_owned(), port.to_string()]);
        }
        if let Some(key) = &self.identity_file {
            argv.extend(["-i".to_owned(), key.display().to_string()]);
        }
        if let Some(file) = &self.known_hosts {
            argv.extend([
                "-o".to_owned(),
                format!("UserKnownHostsFile={}", file.display()),
            ]);
        }
        argv.extend(self.options.iter().cloned());
        argv.push(self.destination());
        argv
    }

    /// The whole local argv for a server: [`SshConfig::ssh_argv`], `--`, and `line` (from
    /// [`remote_line`](crate::remote_line) or [`server_remote_line`](crate::server_remote_line))
    /// as the one remote command word.
    pub fn argv(&self, line: impl Into<String>) -> Vec<String> {
        let mut argv = self.ssh_argv();
        argv.push("--".to_owned());
        argv.push(line.into());
        argv
    }
}
