//! The generic connection pool: leases, single-flight starts, generations, idle
//! keep-alive, crash-loop backoff, and failures in the caller's own types ([`PoolError`]).

mod config;
mod error;
mod lease;
mod state;
mod status;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::hash::Hash;
use std::sync::Arc;

use tracing::Instrument;

pub use config::{
    DEFAULT_BACKOFF_INITIAL, DEFAULT_BACKOFF_MAX, DEFAULT_IDLE_KEEP_ALIVE, PoolConfig, deadline_in,
};
pub use error::{AnyError, ErrorChain, FactoryError, Failure, PoolError};
pub use lease::{Generation, Lease};
pub use status::{KeyStatus, PoolStats};

use state::{Inner, Step};

/// A connection the pool can share: it can say whether it still works, and shut
/// itself down.
pub trait PooledConnection: Send + Sync + 'static {
    /// Whether the connection still works (e.g. its process has not exited). A
    /// connection that is not alive is never handed out again.
    fn is_alive(&self) -> bool;

    /// Closes the connection and releases its resources (e.g. stops its process).
    /// Called once, when its last lease is gone (or at pool shutdown).
    fn shutdown(&self) -> impl Future<Output = ()> + Send;
}

/// What a pool key must be: opaque to the pool, cloneable, comparable and
/// printable (for messages). Implemented for every such type.
pub trait PoolKey: Clone + fmt::Debug + Eq + Hash + Ord + Send + Sync + 'static {}

impl<T> PoolKey for T where T: Clone + fmt::Debug + Eq + Hash + Ord + Send + Sync + 'static {}

/// A pool of shared connections, one per key, each used by many leases.
///
/// - Concurrent [`acquire`](Self::acquire)s of a key share one start (one factory
///   call); later ones get the running connection.
/// - The last lease released shuts the connection down, after the configured idle
///   keep-alive during which an acquisition revives it.
/// - [`replace`](Self::replace) or a dead connection starts a new generation; leases
///   on the old one keep it until they are dropped.
/// - A failed start is retried by a later acquisition after a doubling backoff;
///   meanwhile acquisitions fail fast with [`PoolError::CrashLoop`].
/// - Failures come back in the caller's types: [`PoolError<K, E>`](PoolError) holds the
///   key and the factory's error `E` (shared by every acquirer that waited for the start).
///   `E` is [`AnyError`] unless the pool names its own (`Pool<K, C, MyError>`), so any
///   error converts into it.
///
/// Cheap to clone (all clones share one pool). Call [`shutdown`](Self::shutdown)
/// for an orderly stop; dropping the last clone instead drops the connections
/// (whatever their own `Drop` does, e.g. killing a process group).
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use mcp_pool::{Pool, PoolConfig, PooledConnection};
///
/// struct Conn(AtomicBool);
/// impl PooledConnection for Conn {
///     fn is_alive(&self) -> bool { !self.0.load(Ordering::SeqCst) }
///     async fn shutdown(&self) { self.0.store(true, Ordering::SeqCst) }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let pool: Pool<&str, Conn> = Pool::new(PoolConfig::new());
/// let start = || async { Ok::<_, std::io::Error>(Conn(AtomicBool::new(false))) };
/// let a = pool.acquire("fs", start).await.unwrap();
/// let b = pool.acquire("fs", start).await.unwrap(); // shared, no second start
/// assert!(std::sync::Arc::ptr_eq(a.connection(), b.connection()));
/// assert_eq!(pool.stats().starts, 1);
/// drop((a, b)); // last lease: shut down
/// pool.shutdown().await;
/// assert_eq!(pool.stats().live_connections, 0);
/// # });
/// ```
pub struct Pool<K: PoolKey, C: PooledConnection, E: FactoryError = AnyError> {
    inner: Arc<Inner<K, C, E>>,
}

impl<K: PoolKey, C: PooledConnection, E: FactoryError> Clone for Pool<K, C, E> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

impl<K: PoolKey, C: PooledConnection, E: FactoryError> fmt::Debug for Pool<K, C, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool")
            .field("config", self.inner.config())
            .finish_non_exhaustive()
    }
}

impl<K: PoolKey, C: PooledConnection, E: FactoryError> Pool<K, C, E> {
    /// An empty pool. Needs no runtime; its tasks run on the runtime of the first
    /// [`acquire`](Self::acquire).
    pub fn new(config: PoolConfig) -> Self {
        Self {
            inner: Inner::new(config),
        }
    }

    /// A lease on the connection for `key`, starting it with `factory` if none is
    /// running. `factory` is called at most once per call, and only when this call
    /// is the one that starts the key; every concurrent acquirer of the key waits
    /// for that single start. The factory's error converts into the pool's `E`.
    ///
    /// # Errors
    /// [`PoolError::StartFailed`] when the start this call waited for failed (with the
    /// factory's error, shared by every waiter),
    /// [`PoolError::CrashLoop`] while the key backs off after failures,
    /// [`PoolError::Closed`] after [`shutdown`](Self::shutdown).
    ///
    /// Must run inside a tokio runtime (the start, shutdown and keep-alive tasks are
    /// spawned on it).
    ///
    /// # Cancel safety
    /// Cancel-safe: the start runs in its own task and goes on for the other
    /// acquirers; a cancelled waiter takes no lease.
    pub async fn acquire<F, Fut, E2>(&self, key: K, factory: F) -> Result<Lease<C>, PoolError<K, E>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<C, E2>> + Send + 'static,
        E2: Into<E>,
    {
        let span = tracing::debug_span!("pool_acquire", key = ?key);
        async {
            let mut factory = Some(factory);
            loop {
                match self.inner.begin_acquire(&key, &mut factory)? {
                    Step::Leased(lease) => return Ok(lease),
                    Step::Wait(ticket) => {
                        if let Some(result) = ticket.wait().await {
                            return result;
                        }
                    }
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Retires the current generation of `key`: new acquisitions start a new one,
    /// leases on the old one keep it until they are dropped, then it is shut down.
    /// Returns whether there was a running connection to retire. A start in flight is
    /// left alone (it is already new).
    pub fn replace(&self, key: &K) -> bool {
        self.inner.replace(key)
    }

    /// Reports that the connection of `key`'s `generation` died (for example its
    /// process exited). The first report retires that generation (leases on it keep it
    /// until they are dropped) and counts one failure for the crash-loop backoff;
    /// later reports of the same generation, and reports of a generation that is no
    /// longer current, do nothing and return `false`. An acquisition that finds the
    /// current connection dead does the same, so a death is counted exactly once
    /// whoever notices it first.
    ///
    /// The pool does not watch connections itself: it notices a death at the next
    /// [`acquire`](Self::acquire) (through [`PooledConnection::is_alive`]) or when told
    /// here. A supervisor that keeps a server up watches its connection and reports:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicBool, Ordering};
    /// use std::time::Duration;
    /// use mcp_pool::{Pool, PoolConfig, PooledConnection};
    ///
    /// /// Stands for a server process; `alive` is cleared when it exits.
    /// struct Server {
    ///     alive: AtomicBool,
    /// }
    /// impl PooledConnection for Server {
    ///     fn is_alive(&self) -> bool {
    ///         self.alive.load(Ordering::SeqCst)
    ///     }
    ///     async fn shutdown(&self) {}
    /// }
    ///
    /// /// Holds a lease on `name` until `rounds` deaths were seen, restarting each time.
    /// async fn supervise(pool: Pool<&'static str, Server>, name: &'static str, rounds: u32) {
    ///     for _ in 0..rounds {
    ///         let lease = match pool
    ///             .acquire(name, || async {
    ///                 Ok::<_, std::io::Error>(Server { alive: AtomicBool::new(true) })
    ///             })
    ///             .await
    ///         {
    ///             Ok(lease) => lease,
    ///             // Crash loop or failed start: wait and try again (err.chain() says why).
    ///             Err(err) if err.is_retryable() => {
    ///                 tokio::time::sleep(Duration::from_millis(10)).await;
    ///                 continue;
    ///             }
    ///             Err(_closed) => return,
    ///         };
    ///         // A real supervisor awaits the process's exit here; this one kills it.
    ///         lease.alive.store(false, Ordering::SeqCst);
    ///         // The first report counts the death and retires the generation; the next
    ///         // acquire starts a new one (after the backoff, if it keeps dying).
    ///         pool.report_dead(&name, lease.generation());
    ///     }
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pool = Pool::new(PoolConfig::new().with_backoff(Duration::ZERO, Duration::ZERO));
    /// supervise(pool.clone(), "notes", 3).await;
    /// assert_eq!(pool.stats().crashes, 3);
    /// pool.shutdown().await;
    /// # });
    /// ```
    pub fn report_dead(&self, key: &K, generation: Generation) -> bool {
        self.inner.report_dead(key, generation)
    }

    /// Lets the next acquisition of `key` start at once even if it is backing off
    /// (for example because the reason it failed went away: credentials appeared).
    /// The failure count is kept. Returns whether a backoff was cleared.
    pub fn clear_backoff(&self, key: &K) -> bool {
        self.inner.clear_backoff(key)
    }

    /// The configuration the pool was created with.
    pub fn config(&self) -> &PoolConfig {
        self.inner.config()
    }

    /// The state of `key`.
    pub fn status(&self, key: &K) -> KeyStatus {
        self.inner.status(key)
    }

    /// Statuses of every key the pool knows, in key order.
    pub fn statuses(&self) -> BTreeMap<K, KeyStatus> {
        self.inner.statuses()
    }

    /// Counters: live connections, starts, failures, leases per key.
    pub fn stats(&self) -> PoolStats<K> {
        self.inner.stats()
    }

    /// Stops the pool: later acquisitions fail with [`PoolError::Closed`], starts in
    /// flight are cancelled, and every connection is shut down (leases still held
    /// keep their `Arc` but the connection is closed). Waits until all of that is
    /// done. Idempotent.
    ///
    /// # Cancel safety
    /// Cancel-safe: the shutdown tasks run on their own; calling again waits for them.
    pub async fn shutdown(&self) {
        self.inner.shutdown().await;
    }
}

#[cfg(test)]
mod tests;
