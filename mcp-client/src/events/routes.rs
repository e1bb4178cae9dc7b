//! Where an `events/stream`'s push notifications go as they are read: each stream's
//! channel, by the id of its request ([`EventRoutes`], held by the connection's state).
//! A leaf: it knows the notifications, not the connection.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use rmcp::model::{CustomNotification, RequestId};
use serde_json::Value;
use tokio::sync::mpsc;

/// The `_meta` key that ties a push notification to its `events/stream` request.
const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// The prefix of the extension's notifications.
pub(super) const NOTIFICATION_PREFIX: &str = "notifications/events/";

/// Notifications of one stream read but not yet taken; more and the stream is opened
/// again from its cursor (nothing is lost).
pub(super) const ROUTE_BUFFER: usize = 1024;

/// Notifications kept for a stream whose request id is not routed yet (read before the
/// client registered it).
const ORPHANS_KEPT: usize = 64;

/// One notification of the extension, as read.
#[derive(Debug, Clone)]
pub(crate) struct Pushed {
    pub(super) method: String,
    pub(super) params: Value,
}

/// Where the push notifications of a connection go: each stream's channel, by the id of
/// its `events/stream` request.
#[derive(Default)]
pub(crate) struct EventRoutes {
    inner: Mutex<Routes>,
}

#[derive(Default)]
struct Routes {
    by_id: HashMap<String, mpsc::Sender<Pushed>>,
    orphans: VecDeque<(String, Pushed)>,
}

/// The routing key of a request id.
fn key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

impl EventRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes `notification` when it is one of the extension's: to its stream's channel,
    /// in the order read. A stream that fell [`ROUTE_BUFFER`] behind loses its route (its
    /// supervision opens it again from its cursor).
    pub(crate) fn route(&self, notification: &CustomNotification) -> bool {
        if !notification.method.starts_with(NOTIFICATION_PREFIX) {
            return false;
        }
        let params = notification.params.clone().unwrap_or(Value::Null);
        let id = params
            .get("_meta")
            .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
            .cloned()
            .or_else(|| {
                use rmcp::model::GetMeta;
                notification
                    .get_meta()
                    .subscription_id()
                    .and_then(|id| serde_json::to_value(id).ok())
            });
        let Some(id) = id else {
            tracing::debug!(method = %notification.method, "an events notification without a subscription id; dropped");
            return true;
        };
        let key = id.to_string();
        let pushed = Pushed {
            method: notification.method.clone(),
            params,
        };
        let mut routes = self.lock();
        match routes.by_id.get(&key) {
            Some(sender) => {
                if sender.try_send(pushed).is_err() {
                    routes.by_id.remove(&key);
                }
            }
            None => {
                if routes.orphans.len() == ORPHANS_KEPT {
                    routes.orphans.pop_front();
                }
                routes.orphans.push_back((key, pushed));
            }
        }
        true
    }

    /// The channel of the stream whose request is `id`, with what was read for it before.
    pub(super) fn register(&self, id: &RequestId) -> mpsc::Receiver<Pushed> {
        let (sender, receiver) = mpsc::channel(ROUTE_BUFFER);
        let key = key(id);
        let mut routes = self.lock();
        let orphans = std::mem::take(&mut routes.orphans);
        for (k, pushed) in orphans {
            if k == key {
                let _ = sender.try_send(pushed);
            } else {
                routes.orphans.push_back((k, pushed));
            }
        }
        routes.by_id.insert(key, sender);
        receiver
    }

    pub(super) fn forget(&self, id: &RequestId) {
        self.lock().by_id.remove(&key(id));
    }
}
