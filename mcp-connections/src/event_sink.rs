//! Where a set's events go: an unbounded channel, or a bounded one that drops events
//! (counting them) rather than grow without limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;

use crate::events::ConnectionEvent;

/// The sender a host handed to `with_events` or `with_events_bounded`.
#[derive(Clone)]
pub(crate) enum EventSink {
    Unbounded(mpsc::UnboundedSender<ConnectionEvent>),
    Bounded {
        sender: mpsc::Sender<ConnectionEvent>,
        dropped: Arc<AtomicU64>,
    },
}

impl EventSink {
    pub(crate) fn bounded(sender: mpsc::Sender<ConnectionEvent>) -> Self {
        Self::Bounded {
            sender,
            dropped: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Sends without waiting. A full bounded channel drops the event, counts it and logs
    /// a warning; a closed channel (the host dropped its receiver) drops it silently.
    pub(crate) fn send(&self, event: ConnectionEvent) {
        match self {
            Self::Unbounded(tx) => {
                let _ = tx.send(event);
            }
            Self::Bounded { sender, dropped } => {
                if let Err(TrySendError::Full(event)) = sender.try_send(event) {
                    let total = dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    tracing::warn!(
                        dropped_total = total,
                        server = ?event.server(),
                        "event channel full: dropped a connection event (read events faster or give the channel more capacity)"
                    );
                }
            }
        }
    }

    /// Events dropped because the bounded channel was full.
    pub(crate) fn dropped(&self) -> u64 {
        match self {
            Self::Unbounded(_) => 0,
            Self::Bounded { dropped, .. } => dropped.load(Ordering::Relaxed),
        }
    }
}
