//! What a client's set tells the gateway, passed on to the client: list changes, resource
//! updates and server log messages (2025 era), and every event to the 2026-era listens.

use std::sync::{Arc, OnceLock};

use mcp_connections::ConnectionEvent;
use rmcp::RoleServer;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::Peer;
use tokio::sync::{broadcast, mpsc};

use super::routing::{Owners, shown_uri};
use crate::serve::caller::Caller;
use crate::serve::host_requests::{self, ClientLevel};

/// Tells the client its tool list changed whenever a server of its set becomes ready,
/// fails or changes its tools, that its prompt or resource lists changed, that a resource
/// it subscribed to changed, and the servers' log messages at the level it asked for,
/// once the client initialized (2025 era); every event also goes to `listens`, where the
/// `subscriptions/listen` requests of 2026-era clients take them.
pub(super) async fn forward_list_changes(
    mut events: mpsc::UnboundedReceiver<ConnectionEvent>,
    peer: Arc<OnceLock<Peer<RoleServer>>>,
    listens: broadcast::Sender<ConnectionEvent>,
    (owners, log_level, caller): (Owners, ClientLevel, Arc<OnceLock<Arc<Caller>>>),
) {
    while let Some(event) = events.recv().await {
        // Nobody listening is fine.
        let _ = listens.send(event.clone());
        let Some(peer) = peer.get() else {
            continue;
        };
        // Nothing of a server the client may not use: its updates, its log messages.
        if let ConnectionEvent::ResourceUpdated { server, .. }
        | ConnectionEvent::ServerLog { server, .. } = &event
            && !caller.get().is_some_and(|c| c.may_use_server(server))
        {
            continue;
        }
        match event {
            ConnectionEvent::Ready { .. }
            | ConnectionEvent::Failed { .. }
            | ConnectionEvent::ToolsChanged { .. }
            | ConnectionEvent::ToolsDrifted { .. } => {
                let _ = peer.notify_tool_list_changed().await;
            }
            ConnectionEvent::ResourceUpdated { server, uri } => {
                let uri = shown_uri(&owners, &server, uri);
                let _ = peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await;
            }
            ConnectionEvent::PromptsChanged { .. } => {
                let _ = peer.notify_prompt_list_changed().await;
            }
            ConnectionEvent::ResourcesChanged { .. } => {
                let _ = peer.notify_resource_list_changed().await;
            }
            ConnectionEvent::ServerLog {
                server,
                level,
                logger,
                data,
                ..
            } => {
                if let Some(param) =
                    host_requests::log_for_client(&log_level, &server, level, logger, data)
                {
                    host_requests::send_log(peer, param).await;
                }
            }
            _ => {}
        }
    }
}

impl super::Gateway {
    /// The Events extension's requests (see [`super::event_relay`]): `events/list`,
    /// `events/poll` and `events/stream` ([`super::event_stream`]) over the servers the
    /// caller may use; any other method is not found.
    pub(super) async fn custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: rmcp::service::RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, rmcp::ErrorData> {
        let hub = &self.inner.hub;
        let answer = match request.method.as_str() {
            "events/list" => {
                let caller = self.caller(&context)?;
                hub.events.list(hub, &caller).await?
            }
            "events/poll" => {
                let caller = self.caller(&context)?;
                let params = request.params.unwrap_or(serde_json::Value::Null);
                hub.events.poll(hub, &caller, &params).await?
            }
            "events/stream" => {
                let caller = self.caller(&context)?;
                let params = request.params.unwrap_or(serde_json::Value::Null);
                hub.events.stream(hub, &caller, &params, &context).await?
            }
            "events/subscribe" | "events/unsubscribe" => {
                return Err(rmcp::ErrorData::invalid_params(
                    format!(
                        "mcpctl serve delivers events by poll and push, not webhook; use events/poll or events/stream instead of {}",
                        request.method
                    ),
                    None,
                ));
            }
            _ => {
                return Err(rmcp::ErrorData::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                ));
            }
        };
        Ok(rmcp::model::CustomResult::new(answer))
    }
}
