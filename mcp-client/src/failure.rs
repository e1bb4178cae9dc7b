//! Why a server could not be connected, or stopped working: a classified reason and the
//! failure record with its message, stderr tail and cause.

use serde::Serialize;

/// Why a server could not start (or stopped working).
///
/// Serialized as `{"kind": "exited", "status": 3}` and so on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureReason {
    /// Startup (create transport + initialize + first `tools/list`) did not finish within
    /// `startup_timeout_sec`.
    Timeout,
    /// The process could not be spawned (program missing, not executable, bad cwd).
    SpawnFailed,
    /// The process exited. `status` is its exit code, `signal` the signal that ended it.
    Exited {
        /// Exit code, when the process exited normally.
        status: Option<i32>,
        /// Signal number, when a signal ended the process.
        signal: Option<i32>,
    },
    /// The server broke the protocol: a bad handshake, garbage on stdout, an oversized
    /// line, a bad list page.
    Protocol,
    /// The HTTP server could not be reached or kept failing (connection refused, 5xx).
    Transport,
    /// The server needs the user to log in (HTTP 401).
    LoginRequired,
    /// Stored credentials exist but can no longer be used; the user must log in again.
    ReloginRequired,
    /// The enterprise identity provider refused to grant access for a server with
    /// enterprise-managed authorization (`auth = "ema"`): the enterprise login must be
    /// redone (the host's enterprise sign-in).
    EnterpriseReloginRequired,
    /// The server's execution environment is unknown or has no launcher.
    Environment,
    /// The server's configuration cannot be used as given (for example a missing
    /// environment variable it names).
    Config,
    /// Its start was cancelled (`cancel_startup`, the host's cancellation token, shutdown)
    /// before it finished.
    Cancelled,
    /// The machine of its ssh environment could not be reached (connection refused,
    /// timed out, no route, unknown host name). Restarted with backoff: the machine may
    /// come up.
    HostUnreachable,
    /// The machine of its ssh environment refused the login (`Permission denied`): the
    /// user or the key is wrong.
    AuthRefused,
    /// The host key of its ssh environment's machine is unknown or changed; it is never
    /// accepted silently.
    HostKeyRejected,
    /// The program was not found where it runs (exit status 127 from the remote shell or
    /// a wrapper's shell).
    CommandNotFound,
}

impl FailureReason {
    /// Whether the next use of the server restarts it (with backoff): after it exited or
    /// its transport failed, not after configuration, login or spawn problems.
    pub fn is_restartable(&self) -> bool {
        matches!(
            self,
            Self::Exited { .. } | Self::Transport | Self::HostUnreachable
        )
    }

    /// The short snake_case label used in events and CLI output (`timeout`, `exited`, ...).
    pub fn label(&self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::SpawnFailed => "spawn_failed",
            Self::Exited { .. } => "exited",
            Self::Protocol => "protocol",
            Self::Transport => "transport",
            Self::LoginRequired => "login_required",
            Self::ReloginRequired => "relogin_required",
            Self::EnterpriseReloginRequired => "enterprise_relogin_required",
            Self::Environment => "environment",
            Self::Config => "config",
            Self::Cancelled => "cancelled",
            Self::HostUnreachable => "host_unreachable",
            Self::AuthRefused => "auth_refused",
            Self::HostKeyRejected => "host_key_rejected",
            Self::CommandNotFound => "command_not_found",
        }
    }
}

impl std::fmt::Display for FailureReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Exited {
                status: Some(code), ..
            } => write!(f, "exited with status {code}"),
            Self::Exited {
                signal: Some(sig), ..
            } => write!(f, "killed by signal {sig}"),
            other => f.write_str(other.label()),
        }
    }
}

/// Why one server is not usable: a classified reason, a message, for stdio servers the
/// tail of the process's stderr, and the underlying error (its
/// [`source`](std::error::Error::source)) when there is one, e.g. an `mcp-auth` error.
#[derive(Debug, Clone)]
pub struct StartupFailure {
    reason: FailureReason,
    message: String,
    stderr_tail: Option<String>,
    auth_challenge: Option<String>,
    source: Option<std::sync::Arc<dyn std::error::Error + Send + Sync>>,
}

/// Equal when reason, message, stderr tail and challenge are (the source is not compared).
impl PartialEq for StartupFailure {
    fn eq(&self, other: &Self) -> bool {
        self.reason == other.reason
            && self.message == other.message
            && self.stderr_tail == other.stderr_tail
            && self.auth_challenge == other.auth_challenge
    }
}

impl Eq for StartupFailure {}

impl std::error::Error for StartupFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl StartupFailure {
    /// A failure of `reason` with `message` (one sentence that names the server).
    pub fn new(reason: FailureReason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
            stderr_tail: None,
            auth_challenge: None,
            source: None,
        }
    }

    /// Keeps `source` as the failure's cause.
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(std::sync::Arc::new(source));
        self
    }

    /// Keeps `source`, already shared, as the failure's cause (its own type stays what a
    /// host downcasts to).
    #[must_use]
    pub fn with_shared_source(
        mut self,
        source: std::sync::Arc<dyn std::error::Error + Send + Sync>,
    ) -> Self {
        self.source = Some(source);
        self
    }

    /// The server's `WWW-Authenticate` challenge, for `login_required`.
    #[must_use]
    pub fn with_auth_challenge(mut self, challenge: Option<&str>) -> Self {
        self.auth_challenge = challenge.map(ToOwned::to_owned);
        self
    }

    /// For `login_required`: the server's `WWW-Authenticate` challenge, which a login can
    /// start from (it names the resource metadata and scopes).
    pub fn auth_challenge(&self) -> Option<&str> {
        self.auth_challenge.as_deref()
    }

    /// The last lines the process wrote to stderr (trimmed; empty is none), with the
    /// secrets in them redacted ([`mcp_key::redact_secrets`]): the tail is shown on status
    /// pages and in call errors.
    #[must_use]
    pub fn with_stderr_tail(mut self, tail: String) -> Self {
        let trimmed = tail.trim_end();
        if !trimmed.is_empty() {
            self.stderr_tail = Some(mcp_key::redact_secrets(trimmed).into_owned());
        }
        self
    }

    /// The classified reason.
    pub fn reason(&self) -> &FailureReason {
        &self.reason
    }

    /// The message, without the stderr tail.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The last lines the process wrote to stderr, if it is a stdio server and wrote any
    /// (secrets redacted).
    pub fn stderr_tail(&self) -> Option<&str> {
        self.stderr_tail.as_deref()
    }

    /// The whole text to show a person: this failure's own sentence (with the stderr
    /// tail), then each cause's, joined with `: ` (secrets redacted). [`Display`] is this
    /// layer's sentence alone, like every error of the workspace.
    ///
    /// [`Display`]: std::fmt::Display
    pub fn chain(&self) -> String {
        mcp_key::error_chain(self)
    }

    /// The message and each cause's text, joined with `: ` (secrets redacted), without the
    /// stderr tail: for a display that shows the tail on lines of its own.
    pub fn detail(&self) -> String {
        let mut text = self.message.clone();
        let mut cause = std::error::Error::source(self);
        while let Some(e) = cause {
            text.push_str(": ");
            text.push_str(&e.to_string());
            cause = e.source();
        }
        mcp_key::redact_secrets(&text).into_owned()
    }
}

impl std::fmt::Display for StartupFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(tail) = &self.stderr_tail {
            write!(f, "; stderr: {}", tail.replace('\n', " | "))?;
        }
        Ok(())
    }
}
