//! Why one request on a live connection failed ([`RequestError`]), and the one place that
//! classifies rmcp's request errors into it.

use std::time::Duration;

use rmcp::service::ServiceError;

/// Why one request on a [`Client`](crate::Client) failed. The messages say what happened to the
/// request; the caller names the server and the operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// No answer within the timeout; the server was told the request is cancelled.
    #[error("no answer within {}s", after.as_secs_f64())]
    Timeout {
        /// The timeout that ran out.
        after: Duration,
    },
    /// The server broke the protocol (a reply that cannot be read or cannot answer the
    /// request).
    #[error("{detail}")]
    Protocol {
        /// What was wrong.
        detail: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("the server answered with error {code}: {message}")]
    Server {
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The server rejected the credentials (HTTP 401): a login is needed.
    #[error("the server rejected the credentials (HTTP 401); log in again")]
    AuthRequired,
    /// The connection is gone (the process exited, the transport closed); the request
    /// may be sent again on a new connection.
    #[error("{detail}")]
    Disconnected {
        /// What ended the connection (exit status and stderr tail for a stdio server).
        detail: String,
    },
    /// The server does not offer what the request needs.
    #[error("{detail}")]
    Unsupported {
        /// What is missing.
        detail: String,
    },
    /// The host declined what the server asked in the middle of the request (a 2026-era
    /// sampling request it would not answer), so the request cannot go on.
    #[error("{detail}")]
    Declined {
        /// What was declined, and why.
        detail: String,
    },
    /// A task the server ran for the request ended without a result: cancelled by the
    /// server, past its time to live, or no longer known to the server.
    #[error("task `{task}` ended without a result: {detail}")]
    TaskLost {
        /// The server's id of the task.
        task: String,
        /// What happened to it.
        detail: String,
    },
    /// The caller aborted the request (its abort token was cancelled); the server was told
    /// the request is cancelled.
    #[error("the request was aborted")]
    Aborted,
    /// A 2026-era server asked for input, and the call's settings hand such requests back
    /// to the caller ([`CallSettings::with_input_handed_back`](crate::CallSettings::with_input_handed_back))
    /// instead of answering them: the caller gathers the answers and calls again with
    /// them and the server's state ([`CallSettings::with_resume`](crate::CallSettings::with_resume)).
    #[error("the server asked for input, handed back to the caller")]
    InputRequired {
        /// The server's `input_required` result as it sent it (its `inputRequests` and
        /// `requestState`).
        result: Box<serde_json::Value>,
    },
}

impl RequestError {
    /// Whether the connection is gone (a new connection may succeed).
    pub fn is_disconnected(&self) -> bool {
        matches!(self, Self::Disconnected { .. })
    }

    /// Whether the server needs a login.
    pub fn is_auth_required(&self) -> bool {
        matches!(self, Self::AuthRequired)
    }

    /// Whether a task of the request ended without a result.
    pub fn is_task_lost(&self) -> bool {
        matches!(self, Self::TaskLost { .. })
    }

    /// Whether the request timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Self::Timeout { .. })
    }

    /// The server's `input_required` result handed back to the caller, if that is why the
    /// call ended.
    pub fn input_required(&self) -> Option<&serde_json::Value> {
        match self {
            Self::InputRequired { result } => Some(result),
            _ => None,
        }
    }

    /// A request that could not be sent, or whose POST failed: a protocol error when the
    /// server's answer was at fault, a disconnect otherwise.
    pub(crate) fn not_sent(e: &ServiceError) -> Self {
        use crate::rmcp_errors::ServiceFailure;
        let detail = crate::rmcp_errors::describe_service(e);
        match ServiceFailure::of(e) {
            ServiceFailure::ProtocolFault => Self::Protocol { detail },
            _ => Self::Disconnected { detail },
        }
    }
}
