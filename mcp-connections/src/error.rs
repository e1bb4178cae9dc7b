//! The crate's error type.

use std::time::Duration;

use mcp_key::McpServerKey;

use mcp_client::{FailureReason, StartupFailure};

/// Errors of the connection set.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No configured server has this key or name.
    #[error("unknown MCP server `{server}`{hint}")]
    UnknownServer {
        /// The key or name as given.
        server: String,
        /// Extra text such as the known servers.
        hint: String,
    },
    /// No tool has this qualified (model-visible) name.
    #[error(
        "unknown tool `{name}`: it is not in the current tool list (list tools to see the names)"
    )]
    UnknownTool {
        /// The qualified name as given.
        name: String,
    },
    /// A qualified name taken from an older catalog revision
    /// ([`CallOptions::with_catalog_revision`](crate::CallOptions::with_catalog_revision))
    /// no longer names the same tool (a `list_changed` removed or renamed it), or the set
    /// no longer remembers that revision; the call was not sent.
    #[error(
        "tool `{name}` from catalog revision {revision} does not name the same tool in the current revision {current_revision}; list the tools again"
    )]
    StaleToolName {
        /// The qualified name as given.
        name: String,
        /// The revision the caller took it from.
        revision: u64,
        /// The current revision.
        current_revision: u64,
    },
    /// The tool exists but the server's `enabled_tools`/`disabled_tools` filter hides it.
    #[error(
        "tool `{tool}` of MCP server `{server}` is disabled by the server's tool filter (enabled_tools / disabled_tools)"
    )]
    ToolFiltered {
        /// The server.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
    },
    /// The server is not ready (still starting, failed or cancelled).
    #[error("MCP server `{server}` is not ready: {detail}")]
    NotReady {
        /// The server.
        server: McpServerKey,
        /// Its state (with the failure, when it failed).
        state: Box<crate::status::ServerState>,
        /// The state in words, with what is known (a crash loop's next restart, say).
        detail: String,
        /// The failure (with its own source chain) when the server failed; the same one
        /// as in `state`.
        #[source]
        failure: Option<Box<StartupFailure>>,
    },
    /// The arguments of a call are not a JSON object.
    #[error(
        "arguments for tool `{tool}` of MCP server `{server}` must be a JSON object, got {got}"
    )]
    InvalidArguments {
        /// The server.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
        /// The JSON type that was given.
        got: &'static str,
    },
    /// The call did not finish within its timeout; `notifications/cancelled` was sent.
    #[error("tool `{tool}` of MCP server `{server}` timed out after {}s (raise tool_timeout_sec or the call's timeout)", after.as_secs_f64())]
    Timeout {
        /// The server.
        server: McpServerKey,
        /// The raw tool name (or the operation).
        tool: String,
        /// The effective timeout.
        after: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server `{server}` returned an error for `{operation}`: {message} (code {code})")]
    Server {
        /// The server.
        server: McpServerKey,
        /// The request, e.g. `tools/call echo`.
        operation: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The connection broke during the operation (the process exited, the HTTP session
    /// failed).
    #[error("MCP server `{server}` disconnected during `{operation}`: {detail}")]
    Disconnected {
        /// The server.
        server: McpServerKey,
        /// The request.
        operation: String,
        /// What is known about the failure.
        detail: String,
    },
    /// The server answered something that is not a valid reply.
    #[error("MCP server `{server}` broke the protocol during `{operation}`: {detail}")]
    Protocol {
        /// The server.
        server: McpServerKey,
        /// The request.
        operation: String,
        /// What was wrong.
        detail: String,
    },
    /// One or more required servers failed to start.
    #[error("required MCP servers failed to initialize: {}", format_failures(.failures))]
    RequiredServersFailed {
        /// Each failed required server with its failure, sorted by key.
        failures: Vec<(McpServerKey, StartupFailure)>,
    },
    /// A bare server name matches servers in several environments; name one.
    #[error("MCP server name `{name}` exists in several environments ({}); name the environment, e.g. `{}`", candidates.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "), candidates.first().map(ToString::to_string).unwrap_or_default())]
    AmbiguousServer {
        /// The name as given.
        name: String,
        /// Every key with that name, sorted.
        candidates: Vec<McpServerKey>,
    },
    /// A pre-call hook denied the call.
    #[error("the call of tool `{tool}` on MCP server `{server}` was denied by a hook: {reason}")]
    CallDenied {
        /// The server.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
        /// The hook's reason.
        reason: String,
    },
    /// A pre-call hook tried to move the call to another server, environment or tool.
    #[error(
        "a pre-call hook tried to move the call of tool `{tool}` on MCP server `{server}` to `{attempted}`; hooks may rewrite arguments or deny a call, never change where it runs"
    )]
    HookRedirected {
        /// The server the call was made for.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
        /// Where the hook tried to send it (`server/tool`).
        attempted: String,
    },
    /// The connection set is shut down.
    #[error("the MCP connection set is shut down")]
    ShutDown,
    /// The tool changed since it was pinned, in a way that adds risk, and the change was
    /// not accepted yet ([`ConnectionSet::accept_tool_changes`](crate::ConnectionSet::accept_tool_changes)).
    #[error(
        "tool `{tool}` of MCP server `{server}` changed since it was approved ({changes}); it is not called until the host accepts the change (ConnectionSet::accept_tool_changes)"
    )]
    ToolChanged {
        /// The server.
        server: McpServerKey,
        /// The tool's raw name.
        tool: String,
        /// What changed, readable.
        changes: String,
    },
    /// A tool search that cannot be run as asked (an empty or too long query, a limit of
    /// 0): the index's own error, which says what to do.
    #[error(transparent)]
    Search(#[from] mcp_search::SearchError),
    /// The server does not offer what was asked (e.g. resource subscriptions without the
    /// `resources.subscribe` capability).
    #[error("MCP server `{server}` does not support `{operation}`: {detail}")]
    Unsupported {
        /// The server.
        server: McpServerKey,
        /// What was asked, e.g. `resources/subscribe file:///a`.
        operation: String,
        /// Why, and what to do instead.
        detail: String,
    },
    /// A task the server ran for the request ended without a result (cancelled by the
    /// server, past its time to live, or forgotten by it).
    #[error(
        "MCP server `{server}`: the task `{task}` of `{operation}` ended without a result: {detail}"
    )]
    TaskLost {
        /// The server.
        server: McpServerKey,
        /// What was asked, e.g. the tool's name.
        operation: String,
        /// The server's id of the task.
        task: String,
        /// What happened to it.
        detail: String,
    },
    /// The host declined what the server asked in the middle of the request (a sampling
    /// request of a 2026-era call it would not answer), so the request could not go on.
    #[error("MCP server `{server}`: `{operation}` could not go on: {detail}")]
    Declined {
        /// The server.
        server: McpServerKey,
        /// What was asked.
        operation: String,
        /// What was declined, and why.
        detail: String,
    },
}

fn format_failures(failures: &[(McpServerKey, StartupFailure)]) -> String {
    failures
        .iter()
        .map(|(k, f)| format!("{k}: {} ({})", f.chain(), f.reason()))
        .collect::<Vec<_>>()
        .join("; ")
}

impl Error {
    /// The tool changed since it was pinned and waits for the change to be accepted.
    pub fn is_tool_changed(&self) -> bool {
        matches!(self, Error::ToolChanged { .. })
    }

    /// A tool search refused its query or limit.
    pub fn is_search_refused(&self) -> bool {
        matches!(self, Error::Search(_))
    }

    /// The operation timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout { .. })
    }

    /// A hook denied the call or tried to redirect it.
    pub fn is_denied(&self) -> bool {
        matches!(self, Self::CallDenied { .. } | Self::HookRedirected { .. })
    }

    /// The server or tool name is not known.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::UnknownServer { .. } | Self::UnknownTool { .. })
    }

    /// A qualified name from an older catalog revision no longer names the same tool.
    pub fn is_stale_name(&self) -> bool {
        matches!(self, Self::StaleToolName { .. })
    }

    /// The tool is hidden by the server's tool filter.
    pub fn is_filtered(&self) -> bool {
        matches!(self, Self::ToolFiltered { .. })
    }

    /// The server is not ready.
    pub fn is_not_ready(&self) -> bool {
        matches!(self, Self::NotReady { .. })
    }

    /// The server needs a (new) login.
    pub fn is_auth_required(&self) -> bool {
        matches!(
            self.failure_reason(),
            Some(
                FailureReason::LoginRequired
                    | FailureReason::ReloginRequired
                    | FailureReason::EnterpriseReloginRequired
            )
        )
    }

    /// Why the server is not usable, when it failed (`NotReady` of a failed server).
    pub fn failure_reason(&self) -> Option<&FailureReason> {
        match self {
            Self::NotReady {
                failure: Some(f), ..
            } => Some(f.reason()),
            _ => None,
        }
    }

    /// The caller's arguments were refused before reaching the server (not a JSON object).
    pub fn is_invalid_arguments(&self) -> bool {
        matches!(self, Self::InvalidArguments { .. })
    }

    /// The server answered the request with a JSON-RPC error (see [`Error::server_error_code`]).
    /// A tool that ran and failed is not this: its result has `is_error` set.
    pub fn is_server_error(&self) -> bool {
        matches!(self, Self::Server { .. })
    }

    /// The JSON-RPC error code of a [server error](Error::is_server_error).
    pub fn server_error_code(&self) -> Option<i32> {
        match self {
            Self::Server { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The connection to the server broke during the request.
    pub fn is_disconnected(&self) -> bool {
        matches!(self, Self::Disconnected { .. })
    }

    /// A task of the request ended without a result.
    pub fn is_task_lost(&self) -> bool {
        matches!(self, Self::TaskLost { .. })
    }

    /// The host declined what the server asked during the request.
    pub fn is_declined(&self) -> bool {
        matches!(self, Self::Declined { .. })
    }

    /// The server broke the protocol (a reply that does not fit the request, bad pages).
    pub fn is_protocol(&self) -> bool {
        matches!(self, Self::Protocol { .. })
    }

    /// Required servers failed to start (from `wait_required`).
    pub fn is_required_servers_failed(&self) -> bool {
        matches!(self, Self::RequiredServersFailed { .. })
    }

    /// A server name matched servers in more than one environment.
    pub fn is_ambiguous(&self) -> bool {
        matches!(self, Self::AmbiguousServer { .. })
    }

    /// The connection set was shut down.
    pub fn is_shut_down(&self) -> bool {
        matches!(self, Self::ShutDown)
    }

    /// The server does not offer what was asked.
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Self::Unsupported { .. })
    }

    /// Trying again later may succeed (timeouts, disconnects, servers not ready yet).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Timeout { .. } | Self::Disconnected { .. } | Self::NotReady { .. }
        )
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod predicate_tests {
    use super::*;

    fn key() -> McpServerKey {
        McpServerKey::unscoped(mcp_key::ServerName::new("s").unwrap_or_else(|_| unreachable!()))
    }

    #[test]
    fn each_kind_has_its_predicate() {
        let invalid = Error::InvalidArguments {
            server: key(),
            tool: "t".to_owned(),
            got: "array",
        };
        assert!(invalid.is_invalid_arguments() && !invalid.is_server_error());
        let server = Error::Server {
            server: key(),
            operation: "tools/call".to_owned(),
            code: -32602,
            message: "bad".to_owned(),
        };
        assert!(server.is_server_error());
        assert_eq!(server.server_error_code(), Some(-32602));
        let protocol = Error::Protocol {
            server: key(),
            operation: "tools/call".to_owned(),
            detail: "d".to_owned(),
        };
        assert!(protocol.is_protocol() && !protocol.is_disconnected());
        let gone = Error::Disconnected {
            server: key(),
            operation: "tools/call".to_owned(),
            detail: "d".to_owned(),
        };
        assert!(gone.is_disconnected() && gone.is_retryable());
        assert!(Error::ShutDown.is_shut_down() && !Error::ShutDown.is_retryable());
        assert!(
            Error::AmbiguousServer {
                name: "s".to_owned(),
                candidates: vec![key()],
            }
            .is_ambiguous()
        );
        assert!(Error::RequiredServersFailed { failures: vec![] }.is_required_servers_failed());
        let unsupported = Error::Unsupported {
            server: key(),
            operation: "resources/subscribe x".to_owned(),
            detail: "d".to_owned(),
        };
        assert!(unsupported.is_unsupported() && !unsupported.is_retryable());
        let lost = Error::TaskLost {
            server: key(),
            operation: "research".to_owned(),
            task: "t1".to_owned(),
            detail: "d".to_owned(),
        };
        assert!(lost.is_task_lost() && !lost.is_retryable() && !lost.is_disconnected());
        let declined = Error::Declined {
            server: key(),
            operation: "tools/call".to_owned(),
            detail: "d".to_owned(),
        };
        assert!(declined.is_declined() && !declined.is_retryable());
    }
}
