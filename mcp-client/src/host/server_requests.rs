//! What a server asks of the host on one connection: the trait the host implements
//! ([`ServerRequests`]), the one that declines everything, and where a log message goes
//! ([`LogRoute`]).

#![expect(
    deprecated,
    reason = "rmcp marks sampling deprecated (SEP-2577), yet MCP 2025-11-25 defines it and hosts still meet it"
)]

use std::sync::Arc;

use mcp_key::McpServerKey;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction,
};

use crate::BoxFuture;
use crate::host::sampling::SamplingRefusal;
use crate::host::server_log::ServerLog;

/// Where one log message goes, chosen by [`crate::ServerRequests::route_log`] when the
/// message was read.
pub type LogRoute = Arc<dyn Fn(&ServerLog) + Send + Sync>;

/// Answers what a server asks of the host on one connection: the trait the host (or a
/// connection set routing requests to the session whose call caused them) implements.
///
/// Object-safe, taken as `Arc<dyn ServerRequests>`. Both eras come here: a 2025-era
/// `elicitation/create` or `sampling/createMessage` request and a 2026-era
/// `input_required` result of a call.
pub trait ServerRequests: Send + Sync {
    /// Answers one elicitation of `server`. Decline when there is nobody to ask.
    fn elicit<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult>;

    /// Answers one sampling request of `server` (a message from the host's model), as the
    /// server sent it (`maxTokens`, tools and all). The request was checked before it
    /// comes here, and the answer is checked against it before the server sees it
    /// ([`check_answer`](crate::check_answer)). The default refuses: the client offers
    /// sampling only when [`ClientSettings::with_sampling`](crate::ClientSettings::with_sampling) says so.
    fn create_message<'a>(
        &'a self,
        server: &'a McpServerKey,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingRefusal>> {
        let _ = (server, request);
        Box::pin(std::future::ready(Err(SamplingRefusal::not_offered())))
    }

    /// Where a log message of the server (`notifications/message`) that arrives now
    /// goes, after the connection's rate limit: asked as the message is read off the
    /// transport (in the server's order, so before the reply of the call it was written
    /// during; on a 2026-era listen, as rmcp hands it over). A connection shared by several users
    /// routes it to the user whose call is running. The default (`None`) hands it to
    /// nobody; every message also goes to [`Client::server_logs`](crate::Client::server_logs)
    /// and `tracing`.
    fn route_log(&self) -> Option<LogRoute> {
        None
    }
}

/// A [`ServerRequests`] that declines every request: for a host that asks its user
/// nothing (the client then announces no elicitation capability either, see
/// [`ClientSettings::with_elicitation`](crate::ClientSettings::with_elicitation)).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeclineRequests;

impl ServerRequests for DeclineRequests {
    fn elicit<'a>(
        &'a self,
        _server: &'a McpServerKey,
        _request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async { ElicitResult::new(ElicitationAction::Decline) })
    }
}
