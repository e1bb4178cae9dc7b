//! The crate's error type ([`Error`]): one sentence per layer. Each variant says what
//! failed, for which server, and what to change; the cause (a server's failure, what a
//! request ran into) is the [`source`](std::error::Error::source), never repeated in the
//! variant's own text. Hosts print the whole chain with [`mcp_key::error_chain`].

use std::fmt;
use std::time::Duration;

use mcp_key::McpServerKey;

use mcp_client::{FailureReason, StartupFailure};

use crate::events::CrashLoop;
use crate::status::ServerState;

/// Errors of the connection set.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No configured server has this key or name.
    UnknownServer {
        /// The key or name as given.
        server: String,
        /// Extra text such as the known servers.
        hint: String,
    },
    /// No tool has this qualified (model-visible) name.
    UnknownTool {
        /// The qualified name as given.
        name: String,
    },
    /// A qualified name taken from an older catalog revision
    /// ([`CallOptions::with_catalog_revision`](crate::CallOptions::with_catalog_revision))
    /// no longer names the same tool (a `list_changed` removed or renamed it), or the set
    /// no longer remembers that revision; the call was not sent.
    StaleToolName {
        /// The qualified name as given.
        name: String,
        /// The revision the caller took it from.
        revision: u64,
        /// The current revision.
        current_revision: u64,
    },
    /// The tool exists but the server's `enabled_tools`/`disabled_tools` filter hides it.
    ToolFiltered {
        /// The server.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
    },
    /// The server is not ready (still starting, not started yet, failed or cancelled).
    /// The message says which, from the state; the failure of a failed server (its
    /// sentence, its cause and the end of its stderr) is the
    /// [`source`](std::error::Error::source), not repeated in this message: show
    /// [`mcp_key::error_chain`] of the error to a person, which has both.
    NotReady {
        /// The server.
        server: McpServerKey,
        /// Its state (with the failure, when it failed).
        state: Box<ServerState>,
        /// Set when a failed server is held back after failures in a row: how many, and
        /// the wait before it is started again.
        crash_loop: Option<CrashLoop>,
    },
    /// The arguments of a call are not a JSON object.
    InvalidArguments {
        /// The server.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
        /// The JSON type that was given.
        got: &'static str,
    },
    /// The call did not finish within its timeout; `notifications/cancelled` was sent.
    Timeout {
        /// The server.
        server: McpServerKey,
        /// The raw tool name (or the operation).
        tool: String,
        /// The effective timeout.
        after: Duration,
    },
    /// The server answered with a JSON-RPC error: its code here, its code and message in
    /// the source.
    Server {
        /// The server.
        server: McpServerKey,
        /// The request, e.g. `tools/call echo`.
        operation: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's answer.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The connection broke during the operation (the process exited, the HTTP session
    /// failed); the source says how.
    Disconnected {
        /// The server.
        server: McpServerKey,
        /// The request.
        operation: String,
        /// What is known about the failure.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The server answered something that is not a valid reply; the source says what.
    Protocol {
        /// The server.
        server: McpServerKey,
        /// The request.
        operation: String,
        /// What was wrong.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// One or more required servers failed to start.
    RequiredServersFailed {
        /// Each failed required server with its failure, sorted by key.
        failures: Vec<(McpServerKey, StartupFailure)>,
    },
    /// A bare server name matches servers in several environments; name one.
    AmbiguousServer {
        /// The name as given.
        name: String,
        /// Every key with that name, sorted.
        candidates: Vec<McpServerKey>,
    },
    /// A pre-call hook denied the call.
    CallDenied {
        /// The server.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
        /// The hook's reason.
        reason: String,
    },
    /// A pre-call hook tried to move the call to another server, environment or tool.
    HookRedirected {
        /// The server the call was made for.
        server: McpServerKey,
        /// The raw tool name.
        tool: String,
        /// Where the hook tried to send it (`server/tool`).
        attempted: String,
    },
    /// The connection set is shut down.
    ShutDown,
    /// The tool changed since it was pinned, in a way that adds risk, and the change was
    /// not accepted yet ([`ConnectionSet::accept_tool_changes`](crate::ConnectionSet::accept_tool_changes)).
    ToolChanged {
        /// The server.
        server: McpServerKey,
        /// The tool's raw name.
        tool: String,
        /// What changed, readable.
        changes: String,
    },
    /// [`ConnectionSet::call_approved`](crate::ConnectionSet::call_approved) did not call
    /// the tool: its approval mode asks and the approval was not given (`reason` says
    /// why). Nothing was sent to the server.
    NotApproved {
        /// The server.
        server: McpServerKey,
        /// The tool's raw name.
        tool: String,
        /// Why it was not approved.
        reason: NotApprovedReason,
    },
    /// A tool search that cannot be run as asked (an empty or too long query, a limit of
    /// 0): the index's own error, which says what to do.
    Search(mcp_search::SearchError),
    /// The server does not offer what was asked (e.g. resource subscriptions without the
    /// `resources.subscribe` capability); the source says why, and what to do instead.
    Unsupported {
        /// The server.
        server: McpServerKey,
        /// What was asked, e.g. `resources/subscribe file:///a`.
        operation: String,
        /// Why.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A task the server ran for the request ended without a result (cancelled by the
    /// server, past its time to live, or forgotten by it); the source says which.
    TaskLost {
        /// The server.
        server: McpServerKey,
        /// What was asked, e.g. the tool's name.
        operation: String,
        /// The server's id of the task.
        task: String,
        /// What happened to it.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The host declined what the server asked in the middle of the request (a sampling
    /// request of a 2026-era call it would not answer), so the request could not go on;
    /// the source says what was declined, and why.
    Declined {
        /// The server.
        server: McpServerKey,
        /// What was asked.
        operation: String,
        /// What was declined.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A 2026-era server asked for input during the call, whose options hand such
    /// requests back ([`CallSettings::with_input_handed_back`](mcp_client::CallSettings::with_input_handed_back)):
    /// not a failure, the call waits to be resumed with the answers.
    InputRequired {
        /// The server.
        server: McpServerKey,
        /// What was asked.
        operation: String,
        /// The server's `input_required` result as it sent it (`inputRequests`,
        /// `requestState`).
        result: Box<serde_json::Value>,
    },
}

// A flat match, one sentence per variant. It is written by hand rather than derived with
// `thiserror` because a derive can only return a field as the source, and `NotReady`'s
// source is the failure inside its state (when it failed), not a field of its own; the
// parts of a message with logic in them are the small `Display` types below it.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownServer { server, hint } => {
                write!(f, "unknown MCP server `{server}`{hint}")
            }
            Self::UnknownTool { name } => write!(
                f,
                "unknown tool `{name}`: it is not in the current tool list (list tools to see the names)"
            ),
            Self::StaleToolName {
                name,
                revision,
                current_revision,
            } => write!(
                f,
                "tool `{name}` from catalog revision {revision} does not name the same tool in the current revision {current_revision}; list the tools again"
            ),
            Self::ToolFiltered { server, tool } => write!(
                f,
                "tool `{tool}` of MCP server `{server}` is disabled by the server's tool filter (enabled_tools / disabled_tools)"
            ),
            Self::NotReady {
                server,
                state,
                crash_loop,
            } => write!(
                f,
                "MCP server `{server}` is not ready: {}{}",
                state.in_words(),
                CrashLoopNote(crash_loop.as_ref())
            ),
            Self::InvalidArguments { server, tool, got } => write!(
                f,
                "arguments for tool `{tool}` of MCP server `{server}` must be a JSON object, got {got}"
            ),
            Self::Timeout {
                server,
                tool,
                after,
            } => write!(
                f,
                "tool `{tool}` of MCP server `{server}` timed out after {}s (raise tool_timeout_sec or the call's timeout)",
                after.as_secs_f64()
            ),
            Self::Server {
                server, operation, ..
            } => write!(
                f,
                "MCP server `{server}` returned an error for `{operation}`"
            ),
            Self::Disconnected {
                server, operation, ..
            } => write!(f, "MCP server `{server}` disconnected during `{operation}`"),
            Self::Protocol {
                server, operation, ..
            } => write!(
                f,
                "MCP server `{server}` broke the protocol during `{operation}`"
            ),
            Self::RequiredServersFailed { failures } => write!(
                f,
                "required MCP servers failed to initialize: {}",
                Failures(failures)
            ),
            Self::AmbiguousServer { name, candidates } => write!(
                f,
                "MCP server name `{name}` exists in several environments ({}); name the environment, e.g. `{}`",
                Keys(candidates),
                candidates
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ),
            Self::CallDenied {
                server,
                tool,
                reason,
            } => write!(
                f,
                "the call of tool `{tool}` on MCP server `{server}` was denied by a hook: {reason}"
            ),
            Self::HookRedirected {
                server,
                tool,
                attempted,
            } => write!(
                f,
                "a pre-call hook tried to move the call of tool `{tool}` on MCP server `{server}` to `{attempted}`; hooks may rewrite arguments or deny a call, never change where it runs"
            ),
            Self::ShutDown => f.write_str("the MCP connection set is shut down"),
            Self::ToolChanged {
                server,
                tool,
                changes,
            } => write!(
                f,
                "tool `{tool}` of MCP server `{server}` changed since it was approved ({changes}); it is not called until the host accepts the change (ConnectionSet::accept_tool_changes)"
            ),
            Self::NotApproved {
                server,
                tool,
                reason,
            } => write!(
                f,
                "tool `{tool}` of MCP server `{server}` was not called: {}",
                NotApprovedText(*reason)
            ),
            Self::Search(e) => fmt::Display::fmt(e, f),
            Self::Unsupported {
                server, operation, ..
            } => write!(f, "MCP server `{server}` does not support `{operation}`"),
            Self::TaskLost {
                server, operation, ..
            } => write!(
                f,
                "MCP server `{server}` ran `{operation}` as a task that gave no result"
            ),
            Self::Declined {
                server, operation, ..
            } => write!(f, "MCP server `{server}`: `{operation}` could not go on"),
            Self::InputRequired {
                server, operation, ..
            } => write!(
                f,
                "MCP server `{server}` asked for input during `{operation}`; the call waits to be resumed with the answers"
            ),
        }
    }
}

/// The end of a `NotReady` message for a server held back by a crash loop (how many
/// failures, when it starts again), or nothing.
struct CrashLoopNote<'a>(Option<&'a CrashLoop>);

impl fmt::Display for CrashLoopNote<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(crash_loop) = self.0 else {
            return Ok(());
        };
        let crashes = crash_loop.crashes;
        write!(
            f,
            " (crash loop: {crashes} failure{} in a row; next restart in {:.1}s)",
            if crashes == 1 { "" } else { "s" },
            crash_loop.retry_in.as_secs_f64()
        )
    }
}

/// Keys joined with `, `.
struct Keys<'a>(&'a [McpServerKey]);

impl fmt::Display for Keys<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{key}")?;
        }
        Ok(())
    }
}

/// Failed servers joined with `; `, each as `key: whole chain (reason)`.
struct Failures<'a>(&'a [(McpServerKey, StartupFailure)]);

impl fmt::Display for Failures<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, failure)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{key}: {} ({})", failure.chain(), failure.reason())?;
        }
        Ok(())
    }
}

/// Why a call was not approved, and what to do about it.
struct NotApprovedText(NotApprovedReason);

impl fmt::Display for NotApprovedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            NotApprovedReason::Declined => f.write_str(
                "the approval was declined (call it again to be asked again, or set the tool's approval_mode to \"approve\" in the configuration to run it without asking)",
            ),
            NotApprovedReason::NoApprover => f.write_str(
                "its approval mode asks the user and this host has no approver (set one with ConnectionSetOptions::with_approver, or set the tool's approval_mode to \"approve\" in the configuration)",
            ),
            NotApprovedReason::KeptChanging { answers } => write!(
                f,
                "the server changed the tool's definition after each of {answers} answers, so what it lists now was never approved (call it again to be asked about the definition it lists then)",
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::NotReady { state, .. } => match state.as_ref() {
                ServerState::Failed(failure) => Some(failure),
                _ => None,
            },
            Self::Server { source, .. }
            | Self::Disconnected { source, .. }
            | Self::Protocol { source, .. }
            | Self::Unsupported { source, .. }
            | Self::TaskLost { source, .. }
            | Self::Declined { source, .. } => Some(source.as_ref()),
            // Transparent: the index's own error stands for this one.
            Self::Search(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

impl From<mcp_search::SearchError> for Error {
    fn from(e: mcp_search::SearchError) -> Self {
        Self::Search(e)
    }
}

/// Why [`Error::NotApproved`] refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotApprovedReason {
    /// The approver declined (or was asked to accept a changed tool and did not).
    Declined,
    /// The approval mode asks and the set has no approver
    /// ([`ConnectionSetOptions::with_approver`](crate::ConnectionSetOptions::with_approver)).
    NoApprover,
    /// The server listed another definition of the tool after each answer, so no
    /// definition it listed when the call was to be sent had been approved.
    KeptChanging {
        /// How many answers were given (each about a definition gone by the call).
        answers: usize,
    },
}

impl Error {
    /// [`ConnectionSet::call_approved`](crate::ConnectionSet::call_approved) did not call
    /// the tool because it was not approved ([`Error::NotApproved`]).
    pub fn is_not_approved(&self) -> bool {
        matches!(self, Self::NotApproved { .. })
    }

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
            Self::NotReady { state, .. } => match state.as_ref() {
                ServerState::Failed(f) => Some(f.reason()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The error of `server` not being ready in `state` (not held back by a crash loop).
    pub(crate) fn not_ready(server: &McpServerKey, state: ServerState) -> Self {
        Self::NotReady {
            server: server.clone(),
            state: Box::new(state),
            crash_loop: None,
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

    /// The server's `input_required` result, handed back as the call's options asked
    /// ([`Error::InputRequired`]).
    pub fn input_required(&self) -> Option<&serde_json::Value> {
        match self {
            Self::InputRequired { result, .. } => Some(result),
            _ => None,
        }
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
            source: "bad".into(),
        };
        assert!(server.is_server_error());
        assert_eq!(server.server_error_code(), Some(-32602));
        let protocol = Error::Protocol {
            server: key(),
            operation: "tools/call".to_owned(),
            source: "d".into(),
        };
        assert!(protocol.is_protocol() && !protocol.is_disconnected());
        let gone = Error::Disconnected {
            server: key(),
            operation: "tools/call".to_owned(),
            source: "d".into(),
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
            source: "d".into(),
        };
        assert!(unsupported.is_unsupported() && !unsupported.is_retryable());
        let lost = Error::TaskLost {
            server: key(),
            operation: "research".to_owned(),
            task: "t1".to_owned(),
            source: "d".into(),
        };
        assert!(lost.is_task_lost() && !lost.is_retryable() && !lost.is_disconnected());
        let declined = Error::Declined {
            server: key(),
            operation: "tools/call".to_owned(),
            source: "d".into(),
        };
        assert!(declined.is_declined() && !declined.is_retryable());
    }
}

#[cfg(test)]
mod message_tests;
