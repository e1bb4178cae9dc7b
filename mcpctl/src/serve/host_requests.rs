//! What upstream servers ask of a host, passed to the gateway's 2025-era clients: sampling
//! requests (to the client whose call caused them, when it announced sampling; a 2026-era
//! client gets them as `input_required` rounds, see `modern.rs`), log messages (to
//! clients that set a level, at that level or above), and the answer to a client's
//! completion request (routed to the server of the prompt or template).

#![expect(
    deprecated,
    reason = "rmcp marks sampling and logging deprecated (SEP-2577), yet MCP 2025-11-25 defines them"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use mcp_client::ServiceFailure;
use mcp_connections::{SamplingHandler, SamplingRefusal, sampling_fn};
use mcp_key::McpServerKey;
use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, ServiceError};
use serde_json::Value;

use super::caller::Caller;

/// What the server is told when the calling client offers no sampling (either era).
pub(crate) const NO_SAMPLING: &str = "the client of mcpctl serve does not offer sampling";

/// The sampling handler of a 2025-era client's set: the request goes to the client when it
/// announced sampling (with tools, when the request offers tools), else it is refused
/// naming why; so is a request of a server the caller may not use, or sent outside a call
/// of the client to that server ([`refusal`]). `waiting` marks the HTTP session as having a question out, so that its
/// client is not taken for gone meanwhile.
pub(crate) fn forward_sampling(
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    session: Arc<OnceLock<String>>,
    waiting: Arc<super::absent::Waiting>,
    (calls, caller): (Arc<InCalls>, Arc<OnceLock<Arc<Caller>>>),
) -> Arc<dyn SamplingHandler> {
    sampling_fn(move |request| {
        let peer = peer.get().cloned();
        let session = session.get().cloned();
        let waiting = Arc::clone(&waiting);
        let refused = refusal(&calls, caller.get().map(|c| &**c), &request.server);
        async move {
            if let Some(why) = refused {
                tracing::info!(server = %request.server, "sampling refused: {why}");
                return Err(SamplingRefusal::new(why));
            }
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
    match ServiceFailure::of(&e) {
        ServiceFailure::Refused(data) => SamplingRefusal::new(data.message.to_string()),
        _ => {
            tracing::warn!(%server, "the client's sampling failed: {e}");
            SamplingRefusal::new(format!("the client of mcpctl serve did not answer: {e}"))
        }
    }
}

/// The servers one client's calls are running on (a 2025-era session's, or one 2026-era
/// call's run): a server's request (elicitation, sampling) reaches the client only during
/// a call of it to that server ([`refusal`]).
#[derive(Debug, Default)]
pub(crate) struct InCalls(Mutex<BTreeMap<McpServerKey, usize>>);

/// One call of a client to a server, running while it lives ([`InCalls::enter`]).
pub(crate) struct InCall {
    calls: Arc<InCalls>,
    server: McpServerKey,
}

impl InCalls {
    /// Marks a call to `server` as running until the returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>, server: &McpServerKey) -> InCall {
        *self.lock().entry(server.clone()).or_insert(0) += 1;
        InCall {
            calls: Arc::clone(self),
            server: server.clone(),
        }
    }

    /// Whether a call to `server` is running.
    fn running(&self, server: &McpServerKey) -> bool {
        self.lock().contains_key(server)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<McpServerKey, usize>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        let mut calls = self.calls.lock();
        if let Some(n) = calls.get_mut(&self.server) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                calls.remove(&self.server);
            }
        }
    }
}

/// Why a request of `server` (elicitation, sampling) is not passed to a client of
/// `caller` whose running calls are `calls`, if it is not: the caller has no grant on
/// the server, or no call of the client to that server runs (a request sent outside any
/// call may be meant for anyone sharing the server; in a gateway it is declined).
pub(crate) fn refusal(
    calls: &InCalls,
    caller: Option<&Caller>,
    server: &McpServerKey,
) -> Option<String> {
    if !caller.is_some_and(|c| c.may_use_server(server)) {
        return Some(format!(
            "MCP server `{server}` is not one this client of mcpctl serve may use"
        ));
    }
    if !calls.running(server) {
        return Some(format!(
            "MCP server `{server}` asked outside a call of this client to it; mcpctl serve passes a server's requests on only during such a call"
        ));
    }
    None
}

/// A question a server puts to the user, with who asks in front (`MCP server `notes`
/// asks: …`): the client sees one gateway, which must not speak for its servers.
pub(crate) fn with_asker(server: &str, mut params: ElicitRequestParams) -> ElicitRequestParams {
    match &mut params {
        ElicitRequestParams::FormElicitationParams { message, .. }
        | ElicitRequestParams::UrlElicitationParams { message, .. } => {
            *message = asked_by(server, message);
        }
        _ => {}
    }
    params
}

/// The same for a question as JSON (`{"method": "elicitation/create", "params": {…}}`,
/// a 2026-era server's input request).
pub(crate) fn json_with_asker(server: &str, request: &mut Value) {
    if let Some(message) = request.pointer_mut("/params/message")
        && let Some(text) = message.as_str()
    {
        *message = Value::String(asked_by(server, text));
    }
}

fn asked_by(server: &str, message: &str) -> String {
    format!("MCP server `{server}` asks: {message}")
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
    fn a_server_asks_a_client_only_during_its_call_and_with_a_grant() {
        let db = McpServerKey::unscoped("db".parse().unwrap());
        let web = McpServerKey::unscoped("web".parse().unwrap());
        let calls = Arc::<InCalls>::default();
        let everything = Caller::static_token();
        let outside = refusal(&calls, Some(&everything), &db).unwrap();
        assert!(outside.contains("asked outside a call"), "{outside}");
        let call = calls.enter(&db);
        assert_eq!(refusal(&calls, Some(&everything), &db), None);
        assert!(
            refusal(&calls, Some(&everything), &web).is_some(),
            "another server"
        );
        let ungranted = refusal(&calls, Some(&Caller::nobody()), &db).unwrap();
        assert!(ungranted.contains("may use"), "{ungranted}");
        assert!(refusal(&calls, None, &db).is_some(), "nobody known yet");
        let second = calls.enter(&db);
        drop(call);
        assert_eq!(
            refusal(&calls, Some(&everything), &db),
            None,
            "one still runs"
        );
        drop(second);
        assert!(refusal(&calls, Some(&everything), &db).is_some());
    }

    #[test]
    fn a_forwarded_question_names_its_server() {
        let mut request = json!({"method": "elicitation/create", "params": {"message": "PIN?"}});
        json_with_asker("bank", &mut request);
        assert_eq!(request["params"]["message"], "MCP server `bank` asks: PIN?");
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": "PIN?",
            "requestedSchema": {"type": "object", "properties": {}},
        }))
        .unwrap();
        let asked = serde_json::to_value(with_asker("bank", params)).unwrap();
        assert_eq!(asked["message"], "MCP server `bank` asks: PIN?");
    }

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
