//! [`ServerPool`]: the live connections shared by every connection set of a host.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_key::{Fingerprint, McpServerKey};
use mcp_pool::{Pool, PoolConfig};

use crate::set::live::Live;
use mcp_client::{Era, StartupFailure};

/// Why the pool could not give a set a connection: the start's own [`StartupFailure`]
/// (shared by every set that waited for it), a crash loop, or a closed pool.
pub(crate) type AcquireError = mcp_pool::PoolError<ConnectionKey, StartupFailure>;

/// Default first delay before restarting a crashed server; it doubles up to
/// [`DEFAULT_RESTART_BACKOFF_MAX`].
pub const DEFAULT_RESTART_BACKOFF: Duration = Duration::from_secs(1);
/// Default longest delay between restarts of a crash-looping server.
pub const DEFAULT_RESTART_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// What identifies one shared connection: the server and the fingerprint of everything
/// that makes a connection to it (the catalog's connection fingerprint, the configured
/// protocol, and every setting the set opens it with:
/// [`ClientSettings::fingerprint`](mcp_client::ClientSettings::fingerprint)). Two sets
/// asking for the same key share one connection (one process); sets that would open it
/// differently (another byte budget, probe timeout, client identity, capability) get one
/// each.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnectionKey {
    /// The server.
    pub server: McpServerKey,
    /// The connection fingerprint.
    pub fingerprint: Fingerprint,
}

impl fmt::Display for ConnectionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.server, self.fingerprint)
    }
}

/// The pool settings of [`ServerPool::new`]: no keep-alive, the set's default restart
/// backoff.
fn default_config() -> PoolConfig {
    PoolConfig::new().with_backoff(DEFAULT_RESTART_BACKOFF, DEFAULT_RESTART_BACKOFF_MAX)
}

/// The state of one connection in a [`ServerPool`].
pub type ConnectionStatus = mcp_pool::KeyStatus;

/// Counters of a [`ServerPool`]: live connections, starts, failed starts, crashes, and
/// leases (connection sets using a connection) per key.
pub type PoolStats = mcp_pool::PoolStats<ConnectionKey>;

/// The connections of a host, shared by all its connection sets (one per session or
/// sub-agent): the same server with the same connection fingerprint is one connection,
/// one process, however many sets use it. Cheap to clone.
///
/// Give one to each set with
/// [`ConnectionSetOptions::with_shared_pool`](crate::ConnectionSetOptions::with_shared_pool).
/// Each set holds one lease per server; a set's
/// [`shutdown`](crate::ConnectionSet::shutdown) gives back only its own leases, and a
/// connection stops when its last lease is gone (after the pool's idle keep-alive).
/// Starting, single flight, crash-loop backoff and generations all happen here.
///
/// A connection's settings (what it announces, how long it waits, how much it holds) are
/// part of its key, so a set never uses a connection opened with another set's. What is
/// not a setting is taken from the set that starts the connection: its environment lookup
/// (the values it gives are in the key), credential providers and environments; sets
/// sharing a pool should agree on those, except a set acting for a user of its own:
/// [`ConnectionSetOptions::with_identity_auth`](crate::ConnectionSetOptions::with_identity_auth)
/// puts the user in the key. Requests from the server (elicitation) reach only the set whose call is
/// running on the connection: calls of different sets on one connection take turns.
///
/// Call [`ServerPool::shutdown`] when the host exits, after the sets.
///
/// ```no_run
/// use mcp_connections::{ConnectionSet, ConnectionSetOptions, ServerPool};
/// # fn demo(catalog: &mcp_catalog::ResolvedCatalog) {
/// let pool = ServerPool::new();
/// let main = ConnectionSet::start(catalog, ConnectionSetOptions::new().with_shared_pool(pool.clone()));
/// let sub_agent = ConnectionSet::start(catalog, ConnectionSetOptions::new().with_shared_pool(pool.clone()));
/// // Both sets use the same processes.
/// # }
/// ```
#[derive(Clone)]
pub struct ServerPool {
    pub(crate) pool: Pool<ConnectionKey, Live, StartupFailure>,
    /// The protocol era each connection spoke last, so the next start
    /// of a server under `protocol = "auto"` skips the probe.
    eras: Arc<Mutex<HashMap<ConnectionKey, Era>>>,
}

impl fmt::Debug for ServerPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerPool")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for ServerPool {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerPool {
    /// A pool with the default settings: no idle keep-alive, crash-loop backoff of 1 s
    /// doubling to 30 s.
    pub fn new() -> Self {
        Self::with_config(default_config())
    }

    /// A pool with its own idle keep-alive and backoff.
    pub fn with_config(config: PoolConfig) -> Self {
        Self {
            pool: Pool::new(config),
            eras: Arc::default(),
        }
    }

    /// A pool whose connections stay up for `keep_alive` after their last set let go of
    /// them, so a set started meanwhile reuses them without a new process.
    pub fn with_idle_keep_alive(keep_alive: Duration) -> Self {
        Self::with_config(default_config().with_idle_keep_alive(keep_alive))
    }

    /// The era `key` spoke at its last start.
    pub(crate) fn remembered_era(&self, key: &ConnectionKey) -> Option<Era> {
        self.eras.lock().ok()?.get(key).copied()
    }

    /// Remembers (`Some`) or forgets (`None`) the era of `key`.
    pub(crate) fn remember_era(&self, key: &ConnectionKey, era: Option<Era>) {
        if let Ok(mut eras) = self.eras.lock() {
            match era {
                Some(era) => {
                    eras.insert(key.clone(), era);
                }
                None => {
                    eras.remove(key);
                }
            }
        }
    }

    /// Counters: live connections, starts, failures, crashes, leases per connection.
    pub fn stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// The state of every connection the pool knows, in key order.
    pub fn statuses(&self) -> BTreeMap<ConnectionKey, ConnectionStatus> {
        self.pool.statuses()
    }

    /// Stops every connection and waits for their processes to be gone. Sets still using
    /// the pool see their servers fail. Idempotent.
    ///
    /// # Cancel safety
    /// Cancel-safe: the shutdown runs on its own; calling again waits for it.
    pub async fn shutdown(&self) {
        self.pool.shutdown().await;
    }
}
