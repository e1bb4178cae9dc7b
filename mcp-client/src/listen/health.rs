//! How the `subscriptions/listen` requests of a connection fare, told to the host.
//!
//! A 2026-07-28 connection learns of list changes and resource updates only while its
//! listens are open (see [`crate::listen`]). When one breaks, what the server sends
//! meanwhile is missed: the host hears [`ListenHealth::Lost`], and
//! [`ListenHealth::Restored`] once it is open again (everything it covers is then
//! refreshed, as if changed). A server that refuses a listen is told once
//! ([`ListenHealth::Refused`]) and not asked again. Each transition is published once, by
//! the connection, whoever uses it; [`Client::listen_health`](crate::Client::listen_health)
//! hands a new reader the listens that are down at that moment, then every transition.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

use rmcp::model::{RequestId, SubscriptionFilter};
use serde::Serialize;
use tokio::sync::broadcast;

/// Transitions kept for readers that are slow to take them.
const HEALTH_BUFFER: usize = 64;

/// Stalled listen requests remembered until their listen asks why it ended.
#[cfg(feature = "http")]
const STALLS_KEPT: usize = 64;

/// What one `subscriptions/listen` request of a connection carries.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ListenTopic {
    /// The server's tool, prompt and resource list changes (those it advertises
    /// `listChanged` for): one listen per connection.
    ListChanges,
    /// The updates of one resource the connection watches
    /// ([`Client::watch_resource`](crate::Client::watch_resource)).
    Resource {
        /// The resource.
        uri: String,
    },
}

impl ListenTopic {
    /// The topic of a listen opened with `filter`: a listen for one resource, else the
    /// list changes.
    pub(crate) fn of(filter: &SubscriptionFilter) -> Self {
        match filter.resource_subscriptions.as_deref() {
            Some([uri]) => Self::Resource { uri: uri.clone() },
            _ => Self::ListChanges,
        }
    }
}

impl std::fmt::Display for ListenTopic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ListChanges => f.write_str("list changes"),
            Self::Resource { uri } => write!(f, "updates of `{uri}`"),
        }
    }
}

/// A transition of one `subscriptions/listen` request of a connection (MCP 2026-07-28).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "health", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ListenHealth {
    /// The listen broke: the server ended it, its stream failed or went silent for longer
    /// than [`ClientSettings::with_listen_stall`](crate::ClientSettings::with_listen_stall),
    /// or opening it failed. What the server sends meanwhile is missed. The client opens it
    /// again with backoff (capped at a few seconds) for as long as the connection lives.
    Lost {
        /// What the listen carries.
        topic: ListenTopic,
        /// Why it broke.
        reason: String,
    },
    /// The listen is open again after [`ListenHealth::Lost`]. Everything it covers is
    /// refreshed as if it had changed (the tools listed again, list and resource changes
    /// announced), since what happened meanwhile cannot be replayed.
    Restored {
        /// What the listen carries.
        topic: ListenTopic,
    },
    /// The server answered the listen with an error: it is not asked again on this
    /// connection, and the changes of `topic` go unseen until the connection is replaced.
    Refused {
        /// What the listen carries.
        topic: ListenTopic,
        /// What the server answered.
        reason: String,
    },
}

impl ListenHealth {
    /// What the listen carries.
    pub fn topic(&self) -> &ListenTopic {
        match self {
            Self::Lost { topic, .. } | Self::Restored { topic } | Self::Refused { topic, .. } => {
                topic
            }
        }
    }
}

/// The health of a connection's listens now, and every transition from then on: see
/// [`Client::listen_health`](crate::Client::listen_health).
#[derive(Debug)]
#[non_exhaustive]
pub struct ListenHealthFeed {
    /// The listens that are down at the moment of the call ([`ListenHealth::Lost`] or
    /// [`ListenHealth::Refused`]), sorted by topic.
    pub current: Vec<ListenHealth>,
    /// Every transition after `current` was taken, in order. A reader that falls more than
    /// 64 transitions behind gets `Lagged`.
    pub changes: broadcast::Receiver<ListenHealth>,
}

/// The listens of one connection that are down, and where their transitions go.
pub(crate) struct ListenBoard {
    down: Mutex<BTreeMap<ListenTopic, ListenHealth>>,
    /// Made by the first feed: a 2025-era connection never has a listen, and many hosts
    /// never ask.
    changes: crate::state::lazy_broadcast::LazyBroadcast<ListenHealth>,
    /// Listen requests whose stream the HTTP client ended for silence.
    stalls: Mutex<VecDeque<RequestId>>,
}

impl Default for ListenBoard {
    fn default() -> Self {
        Self {
            down: Mutex::default(),
            changes: crate::state::lazy_broadcast::LazyBroadcast::new(HEALTH_BUFFER),
            stalls: Mutex::default(),
        }
    }
}

impl ListenBoard {
    /// Publishes `health` if it is a transition (a second `Lost` of a listen that is down,
    /// or a `Restored` of one that is not, is not). Returns whether it was published.
    pub(crate) fn publish(&self, health: ListenHealth) -> bool {
        let Ok(mut down) = self.down.lock() else {
            return false;
        };
        let topic = health.topic().clone();
        let transition = match (&health, down.get(&topic)) {
            (ListenHealth::Restored { .. }, previous) => {
                matches!(previous, Some(ListenHealth::Lost { .. }))
            }
            (ListenHealth::Lost { .. }, Some(ListenHealth::Lost { .. })) => false,
            (ListenHealth::Refused { .. }, Some(ListenHealth::Refused { .. })) => false,
            _ => true,
        };
        if !transition {
            return false;
        }
        match &health {
            ListenHealth::Restored { .. } => {
                down.remove(&topic);
            }
            _ => {
                down.insert(topic, health.clone());
            }
        }
        // Sent under the lock, so that a feed taken meanwhile sees it exactly once.
        let _ = self.changes.send(health);
        true
    }

    /// Forgets a listen the client ended itself (a resource no longer watched).
    pub(crate) fn forget(&self, topic: &ListenTopic) {
        if let Ok(mut down) = self.down.lock() {
            down.remove(topic);
        }
    }

    /// The listens down now, and a receiver of the transitions after them.
    pub(crate) fn feed(&self) -> ListenHealthFeed {
        let down = self.down.lock();
        let changes = self.changes.subscribe();
        let current = down
            .map(|down| down.values().cloned().collect())
            .unwrap_or_default();
        ListenHealthFeed { current, changes }
    }

    /// Records that the stream of listen request `id` was ended for silence.
    #[cfg(feature = "http")]
    pub(crate) fn note_stall(&self, id: RequestId) {
        if let Ok(mut stalls) = self.stalls.lock() {
            if stalls.len() >= STALLS_KEPT {
                stalls.pop_front();
            }
            stalls.push_back(id);
        }
    }

    /// Whether the stream of listen request `id` was ended for silence (forgotten once
    /// asked).
    pub(crate) fn take_stall(&self, id: &RequestId) -> bool {
        let Ok(mut stalls) = self.stalls.lock() else {
            return false;
        };
        match stalls.iter().position(|s| s == id) {
            Some(at) => {
                stalls.remove(at);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use pretty_assertions::assert_eq;

    use super::*;

    fn lost(topic: ListenTopic) -> ListenHealth {
        ListenHealth::Lost {
            topic,
            reason: "gone".into(),
        }
    }

    #[test]
    fn each_transition_is_published_once() {
        let board = ListenBoard::default();
        let mut feed = board.feed();
        let topic = ListenTopic::ListChanges;
        assert!(!board.publish(ListenHealth::Restored {
            topic: topic.clone()
        }));
        assert!(board.publish(lost(topic.clone())));
        assert!(!board.publish(lost(topic.clone())), "still down");
        assert!(board.publish(ListenHealth::Restored {
            topic: topic.clone()
        }));
        assert!(!board.publish(ListenHealth::Restored {
            topic: topic.clone()
        }));
        assert_eq!(feed.changes.try_recv().unwrap(), lost(topic.clone()));
        assert_eq!(
            feed.changes.try_recv().unwrap(),
            ListenHealth::Restored { topic }
        );
        assert!(feed.changes.try_recv().is_err());
    }

    #[test]
    fn a_new_reader_sees_what_is_down_then_what_changes() {
        let board = ListenBoard::default();
        let refused = ListenHealth::Refused {
            topic: ListenTopic::ListChanges,
            reason: "method not found".into(),
        };
        let resource = ListenTopic::Resource {
            uri: "file:///a".into(),
        };
        board.publish(refused.clone());
        board.publish(lost(resource.clone()));
        let mut feed = board.feed();
        assert_eq!(feed.current, [refused, lost(resource.clone())]);
        board.publish(ListenHealth::Restored {
            topic: resource.clone(),
        });
        assert_eq!(
            feed.changes.try_recv().unwrap(),
            ListenHealth::Restored { topic: resource }
        );
        assert_eq!(board.feed().current.len(), 1, "only the refusal is left");
    }

    #[test]
    fn a_listen_for_one_resource_is_that_resource_topic() {
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = Some(true);
        assert_eq!(ListenTopic::of(&filter), ListenTopic::ListChanges);
        filter = SubscriptionFilter::new();
        filter.resource_subscriptions = Some(vec!["file:///a".into()]);
        assert_eq!(
            ListenTopic::of(&filter),
            ListenTopic::Resource {
                uri: "file:///a".into()
            }
        );
    }
}
