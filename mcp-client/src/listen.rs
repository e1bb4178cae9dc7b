//! Change notifications in both protocol eras, and resource subscriptions.
//!
//! A 2025-11-25 server sends `tools/list_changed` and `resources/updated` whenever it likes
//! (rmcp hands them to the [`Handler`](crate::handler::Handler)); resources are subscribed
//! with `resources/subscribe`. A 2026-07-28 server sends notifications only on a
//! `subscriptions/listen` request the client keeps open: each connection of that era keeps
//! one listen for the tool list changes the server advertises, and one per subscribed
//! resource. A listen that ends (the server closed it, the stream dropped, the client fell
//! behind) is opened again; there is nothing to resume, so a lagging listen also counts as
//! a tool list change. Everything ends up where the 2025 path delivers it: the connection's
//! `tools_changed` and `resource_updates`.
//!
//! The connection counts the users subscribed to each URI ([`Client::watch_resource`]),
//! so users sharing a connection subscribe once.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ProtocolVersion, ServerNotification, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, ServiceError, Subscription};
use tokio_util::sync::CancellationToken;

use crate::client::Client;
use crate::error::RequestError;
use crate::handler::ConnectionShared;

/// Failed listens in a row before a connection stops trying (it may not implement
/// `subscriptions/listen` for that filter, or be on its way down).
const MAX_LISTEN_FAILURES: u32 = 5;

/// First delay before a listen is opened again; doubles up to [`LISTEN_RETRY_MAX`].
const LISTEN_RETRY_BASE: Duration = Duration::from_millis(100);
const LISTEN_RETRY_MAX: Duration = Duration::from_secs(5);

/// Whether `version` is of the era without sessions, whose notifications need a listen.
fn needs_listen(version: &ProtocolVersion) -> bool {
    crate::Era::of(version) == crate::Era::V2026_07_28
}

/// The listen a 2026-era connection keeps for its tool, prompt and resource lists: each
/// list the server advertises `listChanged` for (nothing when it advertises none).
pub(crate) fn list_changes_filter(peer: &Peer<RoleClient>) -> Option<SubscriptionFilter> {
    let info = peer.peer_info()?;
    if !needs_listen(&info.protocol_version) {
        return None;
    }
    let caps = &info.capabilities;
    let tools = caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true);
    let prompts = caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true);
    let resources = caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true);
    if !(tools || prompts || resources) {
        return None;
    }
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = tools.then_some(true);
    filter.prompts_list_changed = prompts.then_some(true);
    filter.resources_list_changed = resources.then_some(true);
    Some(filter)
}

/// The listen for tool list changes of a 2026-era connection, opened during startup so
/// that no change is missed once the server is ready.
pub(crate) struct ChangeListen {
    filter: SubscriptionFilter,
    first: Option<Subscription>,
}

/// Opens the listen for tool list changes, when the connection needs one. A failure other
/// than a refusal is retried in the background.
pub(crate) async fn open_changes(peer: &Peer<RoleClient>) -> Option<ChangeListen> {
    let filter = list_changes_filter(peer)?;
    match peer.listen(filter.clone()).await {
        Ok(subscription) => Some(ChangeListen {
            filter,
            first: Some(subscription),
        }),
        Err(e) if is_refusal(&e) => {
            tracing::debug!(
                "subscriptions/listen refused: {e}; tool list changes will not be seen"
            );
            None
        }
        Err(e) => {
            tracing::debug!("subscriptions/listen failed at startup: {e}; trying again");
            Some(ChangeListen {
                filter,
                first: None,
            })
        }
    }
}

impl ChangeListen {
    /// Keeps the listen open until `cancel` (see [`keep_listening`]).
    pub(crate) fn spawn(
        self,
        peer: Peer<RoleClient>,
        shared: Arc<ConnectionShared>,
        cancel: CancellationToken,
    ) {
        tokio::spawn(keep_listening(
            peer,
            shared,
            self.filter,
            self.first,
            cancel,
        ));
    }
}

/// Keeps a listen with `filter` open until `cancel`, delivering what arrives. `first` is a
/// listen already opened (its errors went to whoever opened it). Each listen opened again
/// after a break counts as a change of everything it covers: what happened in between is
/// not resumable.
pub(crate) async fn keep_listening(
    peer: Peer<RoleClient>,
    shared: Arc<ConnectionShared>,
    filter: SubscriptionFilter,
    first: Option<Subscription>,
    cancel: CancellationToken,
) {
    let mut open = first;
    let mut failures = 0u32;
    let mut reopened = open.is_none();
    loop {
        let mut subscription = match open.take() {
            Some(s) => s,
            None => {
                let opened = tokio::select! {
                    () = cancel.cancelled() => return,
                    r = peer.listen(filter.clone()) => r,
                };
                match opened {
                    Ok(s) => s,
                    Err(e) => {
                        failures += 1;
                        if peer.is_transport_closed() || is_refusal(&e) {
                            tracing::debug!(server = %shared.key, "subscriptions/listen not available: {e}");
                            return;
                        }
                        if failures >= MAX_LISTEN_FAILURES {
                            tracing::warn!(server = %shared.key, "subscriptions/listen failed {failures} times in a row, giving up: {e}");
                            return;
                        }
                        if !pause(&cancel, failures).await {
                            return;
                        }
                        continue;
                    }
                }
            }
        };
        failures = 0;
        if reopened {
            changed_meanwhile(&shared, subscription.acknowledged());
        }
        reopened = true;
        loop {
            let next = tokio::select! {
                () = cancel.cancelled() => {
                    let _ = subscription.cancel().await;
                    return;
                }
                n = subscription.next() => n,
            };
            match next {
                Ok(Some(notification)) => deliver(&shared, notification),
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(server = %shared.key, "subscriptions/listen stream failed: {e}");
                    break;
                }
            }
        }
        if peer.is_transport_closed() || !pause(&cancel, 1).await {
            return;
        }
    }
}

/// Waits before the `attempt`th retry; `false` when cancelled meanwhile.
async fn pause(cancel: &CancellationToken, attempt: u32) -> bool {
    let delay = mcp_pool::Backoff::new(LISTEN_RETRY_BASE, LISTEN_RETRY_MAX)
        .delay(attempt.saturating_sub(1));
    tokio::select! {
        () = cancel.cancelled() => false,
        () = tokio::time::sleep(delay) => true,
    }
}

/// The server answered the listen with an error: it will answer the same again.
fn is_refusal(e: &ServiceError) -> bool {
    matches!(e, ServiceError::McpError(_))
}

/// What a listen opened again may have missed: a tool list change and an update of each
/// resource it covers.
fn changed_meanwhile(shared: &ConnectionShared, filter: &SubscriptionFilter) {
    if filter.tools_list_changed == Some(true) {
        shared.tools_changed.notify_one();
    }
    if filter.prompts_list_changed == Some(true) {
        shared.prompts_changed.announce();
    }
    if filter.resources_list_changed == Some(true) {
        shared.resources_changed.announce();
    }
    for uri in filter.resource_subscriptions.iter().flatten() {
        let _ = shared.resource_updates.send(uri.clone());
    }
}

fn deliver(shared: &ConnectionShared, notification: ServerNotification) {
    match notification {
        ServerNotification::ToolListChangedNotification(_) => {
            tracing::debug!(server = %shared.key, "tools/list_changed (subscription)");
            shared.tools_changed.notify_one();
        }
        ServerNotification::PromptListChangedNotification(_) => {
            tracing::debug!(server = %shared.key, "prompts/list_changed (subscription)");
            shared.prompts_changed.announce();
        }
        ServerNotification::ResourceListChangedNotification(_) => {
            tracing::debug!(server = %shared.key, "resources/list_changed (subscription)");
            shared.resources_changed.announce();
        }
        ServerNotification::LoggingMessageNotification(n) => shared.receive_log(n.params, None),
        ServerNotification::ResourceUpdatedNotification(n) => {
            tracing::debug!(server = %shared.key, uri = %n.params.uri, "resources/updated (subscription)");
            let _ = shared.resource_updates.send(n.params.uri);
        }
        _ => {}
    }
}

/// One subscribed resource of a connection: how many sets want it, and (2026 era) the
/// listen that carries its updates.
pub(crate) struct ResourceWatch {
    users: usize,
    listen: Option<CancellationToken>,
}

/// The resource subscriptions of one connection.
#[derive(Default)]
pub(crate) struct ResourceWatches {
    by_uri: tokio::sync::Mutex<BTreeMap<String, ResourceWatch>>,
}

impl Client {
    /// Subscribes this connection to changes of resource `uri` for one more user; only the
    /// first user talks to the server. Works in both eras (`resources/subscribe`, or a
    /// `subscriptions/listen` request kept open and opened again when it ends). Each change
    /// arrives on [`Client::resource_updates`].
    ///
    /// # Errors
    /// [`RequestError::Unsupported`] when the server lacks the `resources.subscribe`
    /// capability or refuses the URI; the request's own errors otherwise.
    pub async fn watch_resource(&self, uri: &str) -> Result<(), RequestError> {
        let key = &self.shared.key;
        let mut watches = self.resource_watches.by_uri.lock().await;
        if let Some(watch) = watches.get_mut(uri) {
            watch.users += 1;
            return Ok(());
        }
        let info = self.peer.peer_info();
        let supported = info
            .as_ref()
            .and_then(|i| i.capabilities.resources.as_ref())
            .is_some_and(|r| r.subscribe == Some(true));
        if !supported {
            return Err(RequestError::Unsupported {
                detail: format!(
                    "MCP server `{key}` does not offer resource subscriptions (no `resources.subscribe` capability); read the resource again instead"
                ),
            });
        }
        let listen = if needs_listen(&self.protocol_version()) {
            let mut filter = SubscriptionFilter::new();
            filter.resource_subscriptions = Some(vec![uri.to_owned()]);
            let subscription = match self.peer.listen(filter.clone()).await {
                Ok(subscription) => subscription,
                Err(e) => return Err(RequestError::of_service(self, e).await),
            };
            let accepted = subscription
                .acknowledged()
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| u == uri));
            if !accepted {
                let mut subscription = subscription;
                let _ = subscription.cancel().await;
                return Err(RequestError::Unsupported {
                    detail: format!("MCP server `{key}` did not accept a subscription to `{uri}`"),
                });
            }
            let cancel = self.cancel_token().child_token();
            tokio::spawn(keep_listening(
                self.peer.clone(),
                Arc::clone(&self.shared),
                filter,
                Some(subscription),
                cancel.clone(),
            ));
            Some(cancel)
        } else {
            #[allow(deprecated, reason = "resources/subscribe is the 2025-11-25 era's way")]
            let subscribed = self.peer.subscribe(SubscribeRequestParams::new(uri)).await;
            if let Err(e) = subscribed {
                return Err(RequestError::of_service(self, e).await);
            }
            None
        };
        watches.insert(uri.to_owned(), ResourceWatch { users: 1, listen });
        Ok(())
    }

    /// One user fewer for `uri`; the last one unsubscribes (2025 era) or ends the listen.
    pub async fn unwatch_resource(&self, uri: &str) {
        let mut watches = self.resource_watches.by_uri.lock().await;
        let Some(watch) = watches.get_mut(uri) else {
            return;
        };
        watch.users -= 1;
        if watch.users > 0 {
            return;
        }
        let Some(watch) = watches.remove(uri) else {
            return;
        };
        match watch.listen {
            Some(cancel) => cancel.cancel(),
            None => {
                #[allow(
                    deprecated,
                    reason = "resources/unsubscribe is the 2025-11-25 era's way"
                )]
                let result = self
                    .peer
                    .unsubscribe(UnsubscribeRequestParams::new(uri))
                    .await;
                if let Err(e) = result {
                    tracing::debug!(server = %self.shared.key, %uri, "resources/unsubscribe failed: {e}");
                }
            }
        }
    }
}
