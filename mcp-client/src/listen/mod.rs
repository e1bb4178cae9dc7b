//! Change notifications in both protocol eras, and resource subscriptions.
//!
//! A 2025-11-25 server sends `tools/list_changed` and `resources/updated` whenever it likes
//! (rmcp hands them to the [`Handler`](crate::handshake::handler::Handler)); resources are subscribed
//! with `resources/subscribe`. A 2026-07-28 server sends notifications only on a
//! `subscriptions/listen` request the client keeps open: each connection of that era keeps
//! one listen for the list changes the server advertises, and one per subscribed
//! resource. Everything ends up where the 2025 path delivers it: the connection's
//! `tools_changed` and `resource_updates`.
//!
//! Each listen is supervised ([`keep_listening`]): one that ends (the server closed it, the
//! stream dropped or went silent for the listen stall, the client fell behind) is opened
//! again with backoff for as long as the connection lives, and there being nothing to
//! resume, a listen opened again counts as a change of everything it covers. Each loss,
//! return and refusal is published once ([`crate::ListenHealth`]); a server that refuses a
//! listen is not asked again.
//!
//! The connection counts the users subscribed to each URI ([`Client::watch_resource`]),
//! so users sharing a connection subscribe once.
//!
//! The folder owns the listens and subscriptions (here) and how they fare, told to the host
//! ([`health`]: a leaf the connection's state carries). It sits above the state and the
//! requests, below the face ([`crate::client`]).

pub(crate) mod health;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, ProtocolVersion, ServerNotification, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams,
};
use rmcp::service::{Peer, ServiceError, Subscription, SubscriptionEnd};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::Client;
use crate::error::RequestError;
use crate::state::ConnectionShared;
use health::{ListenHealth, ListenTopic};

/// Failed opens in a row after which a warning says the listen keeps failing. It is still
/// opened again, every [`LISTEN_RETRY_MAX`], for as long as the connection lives: the
/// server may be restarting behind its URL.
const MAX_LISTEN_FAILURES: u32 = 5;

/// First delay before a listen is opened again; doubles up to [`LISTEN_RETRY_MAX`].
const LISTEN_RETRY_BASE: Duration = Duration::from_millis(100);
const LISTEN_RETRY_MAX: Duration = Duration::from_secs(5);

/// A listen open at least this long before it ended was a healthy one: the next is opened
/// after the first delay again. Listens that end sooner, one after the other (a server
/// that ends each at once), are opened again ever more slowly, up to [`LISTEN_RETRY_MAX`]:
/// each one refreshes what it covers.
const LISTEN_STEADY: Duration = Duration::from_secs(30);

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

/// The listen for list changes of a 2026-era connection, opened during startup so that no
/// change is missed once the server is ready.
pub(crate) struct ChangeListen {
    filter: SubscriptionFilter,
    first: Option<Subscription>,
}

/// Opens the listen for list changes, when the connection needs one. A refusal is
/// published and not retried; another failure is published as a loss and retried in the
/// background.
pub(crate) async fn open_changes(
    peer: &Peer<RoleClient>,
    shared: &ConnectionShared,
) -> Option<ChangeListen> {
    let filter = list_changes_filter(peer)?;
    match peer.listen(filter.clone()).await {
        Ok(subscription) => Some(ChangeListen {
            filter,
            first: Some(subscription),
        }),
        Err(e) if is_refusal(&e) => {
            refused(shared, ListenTopic::ListChanges, &e);
            None
        }
        Err(e) => {
            lost(
                shared,
                ListenTopic::ListChanges,
                format!("opening it failed: {e}"),
            );
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

/// Publishes that the listen of `topic` broke (once, while it stays down).
fn lost(shared: &ConnectionShared, topic: ListenTopic, reason: String) {
    let health = ListenHealth::Lost { topic, reason };
    if shared.listens.publish(health.clone())
        && let ListenHealth::Lost { topic, reason } = health
    {
        tracing::info!(server = %shared.key, %topic, "subscriptions/listen lost: {reason}; opening it again");
    }
}

/// Publishes that the server refused the listen of `topic`.
fn refused(shared: &ConnectionShared, topic: ListenTopic, e: &ServiceError) {
    tracing::info!(server = %shared.key, %topic, "subscriptions/listen refused: {e}; not asking again");
    shared.listens.publish(ListenHealth::Refused {
        topic,
        reason: e.to_string(),
    });
}

/// Keeps a listen with `filter` open until `cancel`, delivering what arrives. `first` is a
/// listen already opened (its errors went to whoever opened it); without it the listen is
/// down (and was published so) until opened here. A listen that ends is published as
/// lost, opened again with backoff for as long as the connection lives (a server that
/// refuses it is not asked again), and published as restored once open. Each listen
/// opened again after a break counts as a change of everything it covers: what happened
/// in between is not resumable.
pub(crate) async fn keep_listening(
    peer: Peer<RoleClient>,
    shared: Arc<ConnectionShared>,
    filter: SubscriptionFilter,
    first: Option<Subscription>,
    cancel: CancellationToken,
) {
    let topic = ListenTopic::of(&filter);
    let mut open = first;
    let mut reopened = open.is_none();
    // Failed opens in a row, and listens in a row that ended before `LISTEN_STEADY`.
    let mut failures = 0u32;
    let mut short_lived = 0u32;
    loop {
        let mut subscription = match open.take() {
            Some(s) => s,
            None => {
                let opened = tokio::select! {
                    () = cancel.cancelled() => break,
                    r = peer.listen(filter.clone()) => r,
                };
                match opened {
                    Ok(s) => s,
                    Err(e) => {
                        if peer.is_transport_closed() {
                            // The connection is gone: its death is reported, not this.
                            return;
                        }
                        if is_refusal(&e) {
                            refused(&shared, topic, &e);
                            return;
                        }
                        failures += 1;
                        lost(&shared, topic.clone(), format!("opening it failed: {e}"));
                        if failures == MAX_LISTEN_FAILURES {
                            tracing::warn!(server = %shared.key, %topic, "subscriptions/listen failed {failures} times in a row ({e}); still trying every {}s while the connection lives", LISTEN_RETRY_MAX.as_secs());
                        }
                        if !pause(&cancel, failures.max(short_lived)).await {
                            break;
                        }
                        continue;
                    }
                }
            }
        };
        failures = 0;
        if reopened {
            changed_meanwhile(&shared, subscription.acknowledged());
            if shared.listens.publish(ListenHealth::Restored {
                topic: topic.clone(),
            }) {
                tracing::info!(server = %shared.key, %topic, "subscriptions/listen open again");
            }
        }
        reopened = true;
        let opened_at = Instant::now();
        let ended = loop {
            let next = tokio::select! {
                () = cancel.cancelled() => {
                    let _ = subscription.cancel().await;
                    shared.listens.forget(&topic);
                    return;
                }
                n = subscription.next() => n,
            };
            match next {
                Ok(Some(notification)) => deliver(&shared, notification),
                Ok(None) => break why_ended(&shared, &subscription, None),
                Err(e) => break why_ended(&shared, &subscription, Some(e)),
            }
        };
        if peer.is_transport_closed() {
            return;
        }
        lost(&shared, topic.clone(), ended);
        short_lived = if opened_at.elapsed() >= LISTEN_STEADY {
            1
        } else {
            short_lived.saturating_add(1)
        };
        if !pause(&cancel, short_lived).await {
            break;
        }
    }
    shared.listens.forget(&topic);
}

/// Why the stream of `subscription` ended: for silence (the HTTP client cut it, see
/// [`ClientSettings::with_listen_stall`](crate::ClientSettings::with_listen_stall)), by
/// the server, or with `error`.
fn why_ended(
    shared: &ConnectionShared,
    subscription: &Subscription,
    error: Option<ServiceError>,
) -> String {
    if shared.listens.take_stall(subscription.id()) {
        return "its stream went silent (no event and no keep-alive) for longer than the listen stall".to_owned();
    }
    match (error, subscription.end()) {
        (Some(e), _) => format!("its stream failed: {e}"),
        (None, Some(SubscriptionEnd::Graceful(_))) => "the server ended it".to_owned(),
        (None, Some(SubscriptionEnd::Cancelled)) => "the server cancelled it".to_owned(),
        (None, Some(SubscriptionEnd::Lagged { capacity })) => {
            format!("the client fell more than {capacity} notifications behind")
        }
        (None, _) => "its stream closed without a final result".to_owned(),
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
    matches!(
        crate::rmcp_errors::ServiceFailure::of(e),
        crate::rmcp_errors::ServiceFailure::Refused(_)
    )
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

/// Each time the streamable-HTTP transport opened a new session after the server lost the
/// old one (2025 era, `reinit_on_expired_session`), until `cancel`: subscribes the new
/// session to the watched resources again (it starts with none), and counts everything
/// the lost session may have missed as changed (the tools listed again, prompt and
/// resource list changes announced, an update of each watched resource).
pub(crate) async fn after_new_sessions(
    peer: Peer<RoleClient>,
    shared: Arc<ConnectionShared>,
    watches: Arc<ResourceWatches>,
    cancel: CancellationToken,
) {
    let mut renewed = shared.sessions_renewed();
    renewed.mark_unchanged();
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            changed = renewed.changed() => if changed.is_err() {
                return;
            },
        }
        // Boxed: the requests' futures are large, and inline they would stay in this task's
        // (one per connection) for the connection's whole life.
        Box::pin(renew_session(&peer, &shared, &watches)).await;
    }
}

/// What a new session needs: every list counted as changed, the watched resources
/// subscribed again (2025 era) and announced as updated.
async fn renew_session(
    peer: &Peer<RoleClient>,
    shared: &ConnectionShared,
    watches: &ResourceWatches,
) {
    let watches = watches.by_uri.lock().await;
    tracing::info!(server = %shared.key, resources = watches.len(), "the server lost the session and a new one was opened; subscribing to the watched resources again");
    shared.tools_changed.notify_one();
    shared.prompts_changed.announce();
    shared.resources_changed.announce();
    for (uri, watch) in watches.iter() {
        if watch.listen.is_none() {
            #[allow(deprecated, reason = "resources/subscribe is the 2025-11-25 era's way")]
            let subscribed = peer.subscribe(SubscribeRequestParams::new(uri)).await;
            if let Err(e) = subscribed {
                tracing::warn!(server = %shared.key, %uri, "subscribing again on the new session failed: {e}");
            }
        }
        let _ = shared.resource_updates.send(uri.clone());
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
            let opened = self.traced("subscriptions/listen", None, async {
                match self.peer.listen(filter.clone()).await {
                    Ok(subscription) => Ok(subscription),
                    Err(e) => Err(RequestError::of_service(self, e).await),
                }
            });
            let subscription = opened.await?;
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
            let subscribed = self.traced("resources/subscribe", None, async {
                #[allow(deprecated, reason = "resources/subscribe is the 2025-11-25 era's way")]
                let mut request = ClientRequest::SubscribeRequest(
                    rmcp::model::SubscribeRequest::new(SubscribeRequestParams::new(uri)),
                );
                crate::telemetry::inject(&mut request);
                match self.peer.send_request(request).await {
                    Ok(_) => Ok(()),
                    Err(e) => Err(RequestError::of_service(self, e).await),
                }
            });
            subscribed.await?;
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
