//! Why an events request failed ([`EventError`]), naming the server and the event type.

use mcp_key::McpServerKey;

use super::DeliveryMode;
use crate::RequestError;

/// The extension's `NotFound` code: an unknown event type (or webhook subscription).
pub(crate) const NOT_FOUND: i32 = -32011;
/// The extension's `Unsupported` code: e.g. a delivery mode the event type does not offer.
pub(crate) const UNSUPPORTED: i32 = -32014;

/// Why listing event types, polling or streaming events failed. Every message names the
/// server, and the event type where there is one (texts are `Box<str>`, keeping the
/// error small).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// The server did not announce the events extension (`io.modelcontextprotocol/events`).
    #[error(
        "server `{server}` does not offer events (no `io.modelcontextprotocol/events` extension in its capabilities)"
    )]
    Unsupported {
        /// The server.
        server: McpServerKey,
    },
    /// The server has no event type of that name (`-32011`).
    #[error(
        "server `{server}` has no event type `{event_type}`; list its event types (`events/list`) and subscribe to one of them"
    )]
    UnknownEventType {
        /// The server.
        server: McpServerKey,
        /// The event type asked for.
        event_type: Box<str>,
    },
    /// The event type is not delivered in this mode (`-32014`).
    #[error(
        "server `{server}` does not deliver event type `{event_type}` by {mode}; use a mode its `events/list` entry offers"
    )]
    ModeNotOffered {
        /// The server.
        server: McpServerKey,
        /// The event type.
        event_type: Box<str>,
        /// The mode asked for.
        mode: DeliveryMode,
    },
    /// The server has no webhook subscription of that event type to that URL (`-32011`
    /// on `events/unsubscribe`).
    #[error(
        "server `{server}` has no webhook subscription of event type `{event_type}` to `{url}`"
    )]
    UnknownSubscription {
        /// The server.
        server: McpServerKey,
        /// The event type.
        event_type: Box<str>,
        /// The callback URL.
        url: Box<str>,
    },
    /// The server refused the subscription (forbidden, invalid arguments or cursor, a
    /// quota): asking again the same way gets the same answer.
    #[error(
        "server `{server}` refused the subscription to event type `{event_type}` (error {code}: {message}); check its arguments and the principal's grants"
    )]
    Refused {
        /// The server.
        server: McpServerKey,
        /// The event type.
        event_type: Box<str>,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: Box<str>,
    },
    /// The server ended a push subscription for good (`notifications/events/terminated`,
    /// e.g. access revoked).
    #[error(
        "server `{server}` ended the subscription to event type `{event_type}` (error {code}: {message}); subscribe again once the cause is fixed"
    )]
    Terminated {
        /// The server.
        server: McpServerKey,
        /// The event type.
        event_type: Box<str>,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's message.
        message: Box<str>,
    },
    /// A request to the server failed (the connection, a timeout, an unreadable answer).
    #[error("{what} on server `{server}` failed")]
    Request {
        /// The server.
        server: McpServerKey,
        /// What was asked (`listing the event types`, `polling event type mail`).
        what: Box<str>,
        /// Why it failed.
        #[source]
        source: RequestError,
    },
}

impl EventError {
    /// Whether asking again later may succeed (the connection failed or timed out), as
    /// opposed to a refusal the server will repeat.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Request { source, .. } => matches!(
                source,
                RequestError::Timeout { .. } | RequestError::Disconnected { .. }
            ),
            _ => false,
        }
    }

    /// The error for the server's JSON-RPC error `code` answering a request about
    /// `event_type` in `mode`.
    pub(crate) fn answered(
        server: &McpServerKey,
        event_type: &str,
        mode: DeliveryMode,
        code: i32,
        message: &str,
    ) -> Self {
        match code {
            NOT_FOUND => Self::UnknownEventType {
                server: server.clone(),
                event_type: event_type.into(),
            },
            UNSUPPORTED => Self::ModeNotOffered {
                server: server.clone(),
                event_type: event_type.into(),
                mode,
            },
            _ => Self::Refused {
                server: server.clone(),
                event_type: event_type.into(),
                code,
                message: message.into(),
            },
        }
    }

    /// The error of a failed request about `event_type` in `mode`: the server's answer
    /// classified, else the request's failure.
    pub(crate) fn of_request(
        server: &McpServerKey,
        event_type: &str,
        mode: DeliveryMode,
        what: String,
        source: RequestError,
    ) -> Self {
        match source {
            RequestError::Server { code, message } => {
                Self::answered(server, event_type, mode, code, &message)
            }
            source => Self::Request {
                server: server.clone(),
                what: what.into(),
                source,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The extension's `Forbidden` code.
    const FORBIDDEN: i32 = -32012;

    #[test]
    fn the_extension_codes_become_typed_errors_naming_server_and_type() {
        let server: McpServerKey = "inbox".parse().expect("a valid key");
        let unknown = EventError::answered(&server, "mail", DeliveryMode::Poll, NOT_FOUND, "x");
        assert_eq!(
            unknown.to_string(),
            "server `inbox` has no event type `mail`; list its event types (`events/list`) and subscribe to one of them"
        );
        let mode = EventError::answered(&server, "mail", DeliveryMode::Push, UNSUPPORTED, "x");
        assert!(matches!(mode, EventError::ModeNotOffered { .. }));
        assert!(mode.to_string().contains("by push"));
        let forbidden = EventError::answered(&server, "mail", DeliveryMode::Poll, FORBIDDEN, "no");
        assert!(matches!(
            forbidden,
            EventError::Refused {
                code: FORBIDDEN,
                ..
            }
        ));
        assert!(!forbidden.is_retryable());
    }
}
