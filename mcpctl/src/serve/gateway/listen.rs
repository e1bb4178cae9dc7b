//! A 2026-era client's `subscriptions/listen` through the gateway, and the listens whose
//! setup a 2026-era call waits for.

use std::time::{Duration, Instant};

use mcp_connections::{ConnectionEvent, ServerState};
use rmcp::ErrorData as McpError;
use rmcp::service::SubscriptionContext;
use tokio::sync::{broadcast, watch};

use super::Gateway;
use super::routing::{route, shown_uri};
use crate::serve::shared_uri;

impl Gateway {
    /// The body of [`rmcp::ServerHandler::listen`] for the gateway: see there.
    pub(super) async fn listen_until_ended(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), McpError> {
        let setup = self.inner.hub.listen_setups.setting_up();
        // A listen is a client of its caller while it lasts; the URIs it may watch are
        // those of servers the caller may use (the listings below are the caller's).
        let caller = self.caller(context.request_context())?;
        let _slot = self.inner.hub.bindings.admit_client(&caller).map_err(|n| {
            McpError::invalid_request(
                format!(
                    "you already have {n} clients connected to mcpctl serve ([gateway.limits] clients_per_principal); end a listen and try again"
                ),
                None,
            )
        })?;
        // Only 2026-era clients listen: see `settle_for`.
        self.settle().await;
        let accepted = context.accepted().clone();
        let sink = context.sink().clone();
        let mut events = self.inner.events.subscribe();
        let set = &self.inner.set;
        let mut settled = set
            .status()
            .iter()
            .all(|s| !matches!(s.state, ServerState::Starting));
        let tools = accepted.tools_list_changed == Some(true);
        let prompts = accepted.prompts_list_changed == Some(true);
        let resources = accepted.resources_list_changed == Some(true);
        let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
        let mut subscribed = Vec::new();
        if !uris.is_empty() {
            // One listing and one template listing for all the URIs, however many name
            // nothing (each unknown URI used to cost two full upstream listings).
            let _ = self.list_resources_and_owners().await;
            let templates = self.template_prefixes().await;
            for uri in &uris {
                let (server, upstream) = match shared_uri::split(uri) {
                    Some((server, upstream)) => (Some(server), upstream),
                    None => (route(&self.listers(uri), &templates, uri), uri.as_str()),
                };
                // A server the caller may not use is watched for nobody (`mcpctl-server://`
                // names any server).
                if let Some(server) = server
                    && caller.may_use_server(&server)
                    && set.subscribe_resource(&server, upstream).await.is_ok()
                {
                    subscribed.push((server, upstream.to_owned()));
                }
            }
        }
        drop(setup);
        loop {
            tokio::select! {
                () = context.cancelled() => break,
                event = events.recv() => match event {
                    Ok(ConnectionEvent::StartupComplete { .. }) => settled = true,
                    Ok(ConnectionEvent::ToolsChanged { .. } | ConnectionEvent::ToolsDrifted { .. })
                        if tools =>
                    {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    Ok(ConnectionEvent::Ready { .. } | ConnectionEvent::Failed { .. })
                        if tools && settled =>
                    {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    Ok(ConnectionEvent::PromptsChanged { .. }) if prompts => {
                        let _ = sink.notify_prompt_list_changed().await;
                    }
                    Ok(ConnectionEvent::ResourcesChanged { .. }) if resources => {
                        let _ = sink.notify_resource_list_changed().await;
                    }
                    Ok(ConnectionEvent::ResourceUpdated { server, uri })
                        if caller.may_use_server(&server) =>
                    {
                        let shown = shown_uri(&self.inner.resource_owners, &server, uri);
                        if uris.contains(&shown) {
                            let _ = sink.notify_resource_updated(shown).await;
                        }
                    }
                    // Events were lost: the tools may have changed.
                    Err(broadcast::error::RecvError::Lagged(_)) if tools => {
                        let _ = sink.notify_tool_list_changed().await;
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                    _ => {}
                },
            }
        }
        for (server, uri) in subscribed {
            let _ = set.unsubscribe_resource(&server, &uri).await;
        }
        Ok(())
    }
}

/// How long a call waits for listens acknowledged before it to be set up, at most.
const LISTEN_SETUP_BOUND: Duration = Duration::from_secs(5);

/// `subscriptions/listen` requests acknowledged (rmcp acknowledges before the gateway's
/// `listen` runs) whose setup is not done: the set's event stream taken, the resources it
/// names subscribed upstream. A 2026-era call waits for them, at most
/// [`LISTEN_SETUP_BOUND`], so that an update the call causes reaches a listen its client
/// saw acknowledged before it called. An entry whose `listen` never ran (the
/// acknowledgment failed) stops counting after the bound.
pub(crate) struct ListenSetups {
    pending: watch::Sender<Vec<Instant>>,
}

impl Default for ListenSetups {
    fn default() -> Self {
        Self {
            pending: watch::Sender::new(Vec::new()),
        }
    }
}

impl std::fmt::Debug for ListenSetups {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenSetups")
            .field("pending", &self.pending.borrow().len())
            .finish()
    }
}

impl ListenSetups {
    /// A listen was accepted; its setup is to come.
    pub(crate) fn begin(&self) {
        self.pending.send_modify(|p| p.push(Instant::now()));
    }

    /// The setup of a listen [`Self::begin`] counted: done when the guard drops (also when
    /// the listen ends early).
    pub(crate) fn setting_up(&self) -> SetupGuard<'_> {
        SetupGuard(self)
    }

    /// A listen's setup is done (or given up).
    fn done(&self) {
        self.pending.send_modify(|p| {
            if !p.is_empty() {
                p.remove(0);
            }
        });
    }

    /// Waits until no listen is being set up (or the bound passed).
    pub(crate) async fn settled(&self) {
        let mut pending = self.pending.subscribe();
        let idle = pending.wait_for(|p| p.iter().all(|t| t.elapsed() >= LISTEN_SETUP_BOUND));
        let _ = tokio::time::timeout(LISTEN_SETUP_BOUND, idle).await;
    }
}

/// See [`ListenSetups::setting_up`].
pub(crate) struct SetupGuard<'a>(&'a ListenSetups);

impl Drop for SetupGuard<'_> {
    fn drop(&mut self) {
        self.0.done();
    }
}
