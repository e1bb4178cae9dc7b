//! What upstream servers ask of a host, passed to the gateway's 2025-era clients: sampling
//! requests (to the client whose call caused them, when it announced sampling; a 2026-era
//! client gets them as `input_required` rounds, see `modern.rs`), log messages (to
//! clients that set a level, at that level or above), and the answer to a client's
//! completion request (routed to the server of the prompt or template).

#![expect(
    deprecated,
    reason = "rmcp marks sampling and logging deprecated (SEP-2577), yet MCP 2025-11-25 defines them"
)]

use std::sync::{Arc, Mutex, OnceLock};

use mcp_connections::{SamplingHandler, SamplingRefusal, sampling_fn};
use mcp_key::McpServerKey;
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, ServiceError};
use serde_json::Value;

/// What the server is told when the calling client offers no sampling (either era).
pub(crate) const NO_SAMPLING: &str = "the client of mcpctl serve does not offer sampling";

/// The sampling handler of a 2025-era client's set: the request goes to the client when it
/// announced sampling (with tools, when the request offers tools), else it is refused
/// naming why. `waiting` marks the HTTP session as having a question out, so that its
/// client is not taken for gone meanwhile.
pub(crate) fn forward_sampling(
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    session: Arc<OnceLock<String>>,
    waiting: Arc<super::absent::Waiting>,
) -> Arc<dyn SamplingHandler> {
    sampling_fn(move |request| {
        let peer = peer.get().cloned();
        let session = session.get().cloned();
        let waiting = Arc::clone(&waiting);
        async move {
            let Some(peer) = peer else {
                return Err(SamplingRefusal::new(
                    "the client of mcpctl serve has not initialized",
                ));
            };
            let capability = peer
                .peer_info()
                .and_then(|info| info.capabilities.sampling.clone());
            let Some(capability) = capability else {
                return Err(SamplingRefusal::new(NO_SAMPLING));
            };
            if request.offers_tools() && capability.tools.is_none() {
                return Err(SamplingRefusal::new(
                    "the client of mcpctl serve does not offer tool use in sampling",
                ));
            }
            let _out = session.map(|s| waiting.begin(&s, &peer));
            peer.create_message(request.params)
                .await
                .map_err(|e| refusal_of(&request.server, e))
        }
    })
}

/// The refusal of a request the client answered with an error (or never answered).
fn refusal_of(server: &McpServerKey, e: ServiceError) -> SamplingRefusal {
    match e {
        ServiceError::McpError(data) => SamplingRefusal::new(data.message.into_owned()),
        other => {
            tracing::warn!(%server, "the client's sampling failed: {other}");
            SamplingRefusal::new(format!(
                "the client of mcpctl serve did not answer: {other}"
            ))
        }
    }
}

/// The level a client asked for with `logging/setLevel` (none: it gets no log messages).
pub(crate) type ClientLevel = Arc<Mutex<Option<LoggingLevel>>>;

/// How severe `level` is: 0 for debug to 7 for emergency.
fn severity(level: LoggingLevel) -> u8 {
    level as u8
}

/// The message a client gets for an upstream server's log message, if its level lets it
/// through: the logger names the server (`server` or `server/logger`).
pub(crate) fn log_for_client(
    wanted: &ClientLevel,
    server: &McpServerKey,
    level: LoggingLevel,
    logger: Option<String>,
    data: Value,
) -> Option<LoggingMessageNotificationParam> {
    let wanted = (*wanted.lock().ok()?)?;
    if severity(level) < severity(wanted) {
        return None;
    }
    let logger = match logger {
        Some(logger) => format!("{server}/{logger}"),
        None => server.to_string(),
    };
    let mut param = LoggingMessageNotificationParam::new(level, data);
    param.logger = Some(logger);
    Some(param)
}

/// Sends one log message to the client (a client that went away misses it).
pub(crate) async fn send_log(peer: &Peer<RoleServer>, param: LoggingMessageNotificationParam) {
    let _ = peer.notify_logging_message(param).await;
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use serde_json::json;

    use super::*;

    #[test]
    fn only_clients_that_asked_get_logs_at_their_level() {
        let server = McpServerKey::unscoped("db".parse().unwrap());
        let wanted: ClientLevel = Arc::default();
        let log = |level| log_for_client(&wanted, &server, level, None, json!("x"));
        assert!(log(LoggingLevel::Emergency).is_none(), "no level asked");
        *wanted.lock().unwrap() = Some(LoggingLevel::Warning);
        assert!(log(LoggingLevel::Info).is_none());
        let sent = log_for_client(
            &wanted,
            &server,
            LoggingLevel::Error,
            Some("pool".into()),
            json!("x"),
        )
        .unwrap();
        assert_eq!(sent.logger.as_deref(), Some("db/pool"));
        assert_eq!(
            log(LoggingLevel::Warning).unwrap().logger.as_deref(),
            Some("db")
        );
    }
}
