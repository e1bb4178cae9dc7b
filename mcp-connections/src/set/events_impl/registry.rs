//! The event feeds a set keeps ([`crate::ConnectionSet::event_feeds`]): each feed's
//! subscription and where it is, updated by its task and removed when the feed is over.
//! A leaf: the set's state holds the registry.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use mcp_client::DeliveryMode;
use mcp_key::McpServerKey;
use rmcp::model::JsonObject;

/// One feed a set keeps, as [`crate::ConnectionSet::event_feeds`] lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EventFeedInfo {
    /// The server.
    pub server: McpServerKey,
    /// The event type.
    pub event_type: String,
    /// The arguments the subscription filters on.
    pub filter: JsonObject,
    /// The delivery mode.
    pub mode: DeliveryMode,
    /// The cursor after the last item handed on to the feed (the host may not have taken
    /// it yet): where the subscription is opened again on a new connection.
    pub cursor: Option<String>,
    /// Whether the feed runs on a connection now (`false` while the server is being
    /// reached again).
    pub connected: bool,
}

/// What the set and a feed's task share of one feed.
#[derive(Debug)]
pub(crate) struct Entry {
    info: Mutex<EventFeedInfo>,
}

impl Entry {
    pub(crate) fn set_cursor(&self, cursor: Option<String>) {
        self.lock().cursor = cursor;
    }

    pub(crate) fn set_connected(&self, connected: bool) {
        self.lock().connected = connected;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, EventFeedInfo> {
        self.info.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The feeds of one set, in the order they were made.
#[derive(Debug, Default)]
pub(crate) struct FeedRegistry {
    next: AtomicU64,
    feeds: Mutex<BTreeMap<u64, Arc<Entry>>>,
}

impl FeedRegistry {
    /// Keeps the feed `info` tells until the returned guard drops.
    pub(crate) fn keep(self: &Arc<Self>, info: EventFeedInfo) -> Kept {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(Entry {
            info: Mutex::new(info),
        });
        self.lock().insert(id, Arc::clone(&entry));
        Kept {
            registry: Arc::downgrade(self),
            id,
            entry,
        }
    }

    /// The feeds kept now.
    pub(crate) fn list(&self) -> Vec<EventFeedInfo> {
        self.lock().values().map(|e| e.lock().clone()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Entry>>> {
        self.feeds.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A feed kept in the registry while this lives (held by the feed's task).
pub(crate) struct Kept {
    registry: std::sync::Weak<FeedRegistry>,
    id: u64,
    pub(crate) entry: Arc<Entry>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.upgrade() {
            registry.lock().remove(&self.id);
        }
    }
}
