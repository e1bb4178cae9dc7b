//! [`OwnSet`]: a gateway's own connection set, started the first time a request needs it.
//!
//! Over HTTP every 2026-era request gets a gateway of its own (the era has no session),
//! and most of them never touch its set: a `tools/call` runs on a set the hub lends to
//! the call (see `modern::kept`), where a caller's grants are checked too (see
//! `modern::launch`), a task or `requestState` lookup needs no set at all.
//! Starting the set, its event forwarder and its entry on the status page for each such
//! request, and shutting them down right after, cost more than the call (issue #55): so
//! they start when a request first reads the set (a list, a read, a prompt, a search, a
//! listen), and never for a request that does not. A 2025-era session's set starts at
//! its `initialize`, as before.

use std::any::Any;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::{Mutex, OnceLock, PoisonError};

use mcp_connections::ConnectionSet;

/// What forwards the set's events once it runs (see `events::forward_list_changes`).
pub(super) type Forwarder = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What lives as long as the set (its entry on the status page, taken off when dropped).
pub(super) type Companion = Box<dyn Any + Send + Sync>;

/// What starts the set (on the hub's pool, with the gateway's options): the set and its
/// [`Companion`].
pub(super) type Start = Box<dyn Fn() -> (ConnectionSet, Companion) + Send + Sync>;

/// A gateway's connection set, started on first use ([`Self::start`], or any read
/// through [`Deref`]), then its event forwarder spawned.
pub(super) struct OwnSet {
    started: OnceLock<(ConnectionSet, Companion)>,
    start: Start,
    /// Spawned when the set starts; dropped unspawned when it never does.
    forwarder: Mutex<Option<Forwarder>>,
}

impl OwnSet {
    /// A set not started yet: [`Self::start`] starts it with `start` and spawns
    /// `forwarder`.
    pub(super) fn new(start: Start, forwarder: Forwarder) -> Self {
        Self {
            started: OnceLock::new(),
            start,
            forwarder: Mutex::new(Some(forwarder)),
        }
    }

    /// The set, started now if it was not (once: later calls return the same set). Must
    /// run inside the Tokio runtime (the forwarder is spawned on it).
    pub(super) fn start(&self) -> &ConnectionSet {
        &self
            .started
            .get_or_init(|| {
                tracing::debug!("a gateway's own connection set started");
                let started = (self.start)();
                let forwarder = self
                    .forwarder
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                if let Some(forwarder) = forwarder {
                    tokio::spawn(forwarder);
                }
                started
            })
            .0
    }

    /// The set if it was started, without starting it.
    pub(super) fn started(&self) -> Option<&ConnectionSet> {
        self.started.get().map(|(set, _)| set)
    }
}

/// Reading the set starts it ([`OwnSet::start`]): every handler that uses the set reads
/// it through here, so none can see a set that is not running.
impl Deref for OwnSet {
    type Target = ConnectionSet;

    fn deref(&self) -> &ConnectionSet {
        self.start()
    }
}

impl std::fmt::Debug for OwnSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnSet")
            .field("started", &self.started())
            .finish_non_exhaustive()
    }
}
