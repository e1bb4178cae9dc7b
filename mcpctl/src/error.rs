//! User-facing errors: one line, a hint, an exit code. Never a backtrace or a Debug dump.

use mcp_connections::{Error as SetError, FailureReason};

/// Exit code: something failed (a required server, a tool error).
pub(crate) const EXIT_FAILURE: u8 = 1;
/// Exit code: the command line or the configuration is wrong.
pub(crate) const EXIT_USAGE: u8 = 2;
/// Exit code: the server a call or read needs is not ready (it failed to start, needs a
/// login, or is in a crash loop).
pub(crate) const EXIT_UNAVAILABLE: u8 = 3;
/// Exit code: a project configuration is not trusted yet (nothing was started).
pub(crate) const EXIT_UNTRUSTED: u8 = 4;
/// Exit code after Ctrl-C (128 + SIGINT).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// An error to show to a person.
#[derive(Debug)]
pub(crate) struct CliError {
    message: String,
    details: Vec<String>,
    hint: Option<String>,
    code: u8,
    /// What went wrong, for scripts (`usage`, `unknown_tool`, `server_unavailable`, ...).
    kind: &'static str,
    /// The server that is not ready, with why (for `server_unavailable`).
    unavailable: Option<Box<(String, Option<FailureReason>)>>,
}

impl CliError {
    /// A usage or configuration error (exit code 2, kind `usage`).
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            details: Vec::new(),
            hint: None,
            code: EXIT_USAGE,
            kind: "usage",
            unavailable: None,
        }
    }

    /// A failure of a server or tool (exit code 1, kind `failure`).
    pub(crate) fn failure(message: impl Into<String>) -> Self {
        Self {
            code: EXIT_FAILURE,
            kind: "failure",
            ..Self::usage(message)
        }
    }

    /// The server a command needs is not ready (exit code 3, kind `server_unavailable`).
    pub(crate) fn unavailable(
        message: impl Into<String>,
        server: impl Into<String>,
        reason: Option<FailureReason>,
    ) -> Self {
        Self {
            code: EXIT_UNAVAILABLE,
            kind: "server_unavailable",
            unavailable: Some(Box::new((server.into(), reason))),
            ..Self::usage(message)
        }
    }

    /// A project configuration that is not trusted (exit code 4).
    pub(crate) fn untrusted(message: impl Into<String>) -> Self {
        Self {
            code: EXIT_UNTRUSTED,
            ..Self::usage(message)
        }
    }

    /// Ctrl-C.
    pub(crate) fn interrupted() -> Self {
        Self::interrupted_with("interrupted; servers were shut down")
    }

    /// Ctrl-C, with what was abandoned.
    pub(crate) fn interrupted_with(message: impl Into<String>) -> Self {
        Self {
            code: EXIT_INTERRUPTED,
            kind: "interrupted",
            ..Self::usage(message)
        }
    }

    /// Replaces the kind shown in `--json` output.
    pub(crate) fn with_kind(mut self, kind: &'static str) -> Self {
        self.kind = kind;
        self
    }

    /// Adds what to do about it.
    pub(crate) fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Adds lines shown between the message and the hint (e.g. every config error).
    pub(crate) fn with_details(mut self, details: Vec<String>) -> Self {
        self.details = details;
        self
    }

    /// The one-line message.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// The process exit code.
    pub(crate) fn code(&self) -> u8 {
        self.code
    }

    /// The error as JSON for `--json` output: `kind`, `message`, `details`, `hint`,
    /// `exit_code`, and for `server_unavailable` the `server` and its failure `reason`.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        let mut error = serde_json::json!({
            "kind": self.kind,
            "message": self.message,
            "details": self.details,
            "hint": self.hint,
            "exit_code": self.code,
        });
        if let (Some(unavailable), Some(map)) = (&self.unavailable, error.as_object_mut()) {
            let (server, reason) = unavailable.as_ref();
            map.insert("server".to_owned(), serde_json::json!(server));
            map.insert("reason".to_owned(), serde_json::json!(reason));
        }
        serde_json::json!({ "error": error })
    }

    /// Prints `error: ...`, the details, and `hint: ...` to stderr.
    pub(crate) fn print(&self) {
        // Messages carry server text (failure reasons, HTTP bodies, stderr tails).
        use crate::term::render::terminal_safe as safe;
        let s = crate::term::style::Style::stderr();
        eprintln!("{} {}", s.red_bold("error:"), safe(&self.message));
        for line in &self.details {
            eprintln!("  {}", safe(line));
        }
        if let Some(hint) = &self.hint {
            eprintln!("{} {}", s.cyan_bold("hint:"), safe(hint));
        }
    }
}

/// Converts an error of the connection set, with a hint for what to do.
impl From<SetError> for CliError {
    fn from(e: SetError) -> Self {
        // The whole chain: each layer of the set's error says its own part.
        let message = clean_message(&mcp_key::error_chain(&e));
        match &e {
            SetError::UnknownServer { .. } => Self::usage(message)
                .with_kind("unknown_server")
                .with_hint("run `mcpctl status` to see the configured servers"),
            SetError::AmbiguousServer { .. } => Self::usage(message)
                .with_kind("ambiguous_server")
                .with_hint("pass --server NAME@ENVIRONMENT"),
            SetError::UnknownTool { .. } => Self::usage(message).with_kind("unknown_tool").with_hint(
                "run `mcpctl tools` to see the qualified names, or pass --server KEY to call a tool by its own name",
            ),
            SetError::ToolFiltered { server, .. } => Self::usage(message)
                .with_kind("tool_filtered")
                .with_hint(format!(
                    "change enabled_tools / disabled_tools of [mcp_servers.{}] to allow it",
                    server.name()
                )),
            SetError::InvalidArguments { .. } => Self::usage(message)
                .with_kind("invalid_arguments")
                .with_hint(r#"pass a JSON object, for example '{"text": "hello"}'"#),
            SetError::NotReady { server, .. } => {
                let server = server.to_string();
                let reason = e.failure_reason().cloned();
                let hint = not_ready_hint(&server, reason.as_ref(), false);
                Self::unavailable(message, server, reason).with_hint(hint)
            }
            SetError::Timeout { .. } => Self::failure(message)
                .with_kind("timeout")
                .with_hint("retry with a larger --timeout, or check the server"),
            SetError::RequiredServersFailed { .. } => Self::failure(message)
                .with_kind("required_servers_failed")
                .with_hint("run `mcpctl status` for details"),
            SetError::CallDenied { .. } | SetError::HookRedirected { .. } => {
                Self::failure(message).with_kind("denied")
            }
            SetError::Server { .. } => Self::failure(message)
                .with_kind("server_error")
                .with_hint("run `mcpctl status` to check the server, or add -v for debug logs"),
            SetError::Disconnected { .. } | SetError::Protocol { .. } => Self::failure(message)
                .with_kind("server_failed")
                .with_hint("run `mcpctl status` to check the server, or add -v for debug logs"),
            _ => Self::failure(message)
                .with_hint("run `mcpctl status` to check the server, or add -v for debug logs"),
        }
    }
}

/// What to do about a server that did not start, by reason. `in_status` is true when the
/// hint is shown inside `mcpctl status` (which already shows the stderr tail).
pub(crate) fn not_ready_hint(
    server: &str,
    reason: Option<&FailureReason>,
    in_status: bool,
) -> String {
    match reason {
        Some(FailureReason::SpawnFailed) => format!(
            "check that the `command` of server `{server}` is installed and on PATH (or give its absolute path)"
        ),
        Some(FailureReason::Timeout) => format!(
            "server `{server}` did not start in time; raise its startup_timeout_sec or check that its command starts by hand"
        ),
        Some(FailureReason::EnterpriseReloginRequired) => {
            "sign in to the enterprise identity provider again: `mcpctl login --enterprise`"
                .to_owned()
        }
        Some(FailureReason::LoginRequired | FailureReason::ReloginRequired) => format!(
            "run `mcpctl login {server}` (or, if it uses bearer_token_env_var, check that variable)"
        ),
        Some(FailureReason::Config | FailureReason::Environment) => {
            "fix the server's configuration; `mcpctl config check` validates it".to_owned()
        }
        Some(FailureReason::Transport) => {
            format!("server `{server}` could not be reached; check its url and that it is running")
        }
        Some(FailureReason::Exited { .. }) if in_status => format!(
            "server `{server}` exited during startup; its stderr says why, or run its command by hand"
        ),
        Some(FailureReason::Protocol) if in_status => format!(
            "server `{server}` did not answer as an MCP server; check that its command and args start it in stdio mode"
        ),
        Some(FailureReason::Exited { .. }) => format!(
            "server `{server}` exited during startup; its stderr, quoted in the error, says why; or run its command by hand"
        ),
        Some(FailureReason::Protocol) => format!(
            "server `{server}` did not speak MCP as expected (the error says how); check that its command starts it in stdio mode and that this client supports its protocol version"
        ),
        _ => format!(
            "run `mcpctl status` to see why server `{server}` failed (with its stderr tail)"
        ),
    }
}

/// Removes Rust type names that some transport errors carry (`[rmcp::transport::...]`), so
/// a person sees the cause, not a type dump.
pub(crate) fn clean_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find("[rmcp::") {
        out.push_str(rest[..start].trim_end());
        match rest[start..].find(']') {
            Some(end) => rest = &rest[start + end + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_removed_from_messages() {
        assert_eq!(
            clean_message("Send message error Transport [rmcp::a::B<c::D>] error: refused"),
            "Send message error Transport error: refused"
        );
        assert_eq!(clean_message("plain"), "plain");
    }
}
