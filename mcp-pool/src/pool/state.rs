//! The pool's shared state and its transitions. The mutex is never held across an
//! `.await`; work that must run outside it (shutting connections down, timers) is
//! collected as [`Action`]s and spawned after unlocking.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};

use tokio::runtime::Handle;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use super::config::{PoolConfig, deadline_in};
use super::error::{ErrorChain, FactoryError, Failure, PoolError};
use super::lease::{Generation, Lease, Release};
use super::status::{KeyStatus, PoolStats};
use super::{PoolKey, PooledConnection};

pub(crate) struct Inner<K: PoolKey, C: PooledConnection, E: FactoryError> {
    state: Mutex<State<K, C, E>>,
    config: PoolConfig,
    tracker: TaskTracker,
    cancel: CancellationToken,
    runtime: OnceLock<Handle>,
    counters: Arc<Counters>,
    me: Weak<Inner<K, C, E>>,
}

#[derive(Default)]
struct Counters {
    live: AtomicUsize,
    starts: AtomicU64,
    failures: AtomicU64,
    crashes: AtomicU64,
}

struct State<K, C, E> {
    keys: HashMap<K, Entry<C, E>>,
    closed: bool,
    next_generation: u64,
    next_idle: u64,
}

struct Entry<C, E> {
    current: Current<C, E>,
    retired: Vec<Retired<C>>,
    failures: u32,
    retry_at: Option<Instant>,
    /// The last failure (set whenever `retry_at` is).
    last: Option<Failure<E>>,
}

enum Current<C, E> {
    Empty,
    Starting {
        generation: Generation,
        /// Acquirers waiting for this start; each gets a lease when it succeeds.
        waiters: usize,
        outcome: watch::Receiver<Outcome<C, E>>,
    },
    Live(Live<C>),
}

struct Live<C> {
    generation: Generation,
    conn: Arc<C>,
    /// When the start finished (a crash after a long, healthy life is not part of a loop).
    started: Instant,
    leases: usize,
    release: Arc<dyn Release>,
    /// Set while unleased and kept alive: (epoch, timer cancel token).
    idle: Option<(u64, CancellationToken)>,
}

struct Retired<C> {
    generation: Generation,
    conn: Arc<C>,
    leases: usize,
}

/// The result of a start, as seen by its waiters.
enum Outcome<C, E> {
    Pending,
    Ready(Arc<C>, Arc<dyn Release>),
    Failed(Failure<E>),
    /// The pool shut down (or forgot the key) before the start could be used.
    Closed,
}

impl<C, E> Clone for Outcome<C, E> {
    fn clone(&self) -> Self {
        match self {
            Self::Pending => Self::Pending,
            Self::Ready(conn, release) => Self::Ready(conn.clone(), release.clone()),
            Self::Failed(failure) => Self::Failed(failure.clone()),
            Self::Closed => Self::Closed,
        }
    }
}

/// Work to do once the lock is released.
enum Action<K, C> {
    Shutdown(Arc<C>),
    IdleTimer {
        key: K,
        generation: Generation,
        epoch: u64,
        token: CancellationToken,
    },
}

/// What `begin_acquire` decided.
pub(crate) enum Step<K: PoolKey, C: PooledConnection, E: FactoryError> {
    Leased(Lease<C>),
    Wait(Ticket<K, C, E>),
}

/// A waiter's claim on a start in flight. Dropping it before [`Ticket::wait`]
/// returns gives the claim back (or the lease it was granted).
pub(crate) struct Ticket<K: PoolKey, C: PooledConnection, E: FactoryError> {
    inner: Arc<Inner<K, C, E>>,
    key: K,
    generation: Generation,
    outcome: watch::Receiver<Outcome<C, E>>,
    settled: bool,
}

impl<K: PoolKey, C: PooledConnection, E: FactoryError> Ticket<K, C, E> {
    /// Waits for the start. `None` means "look again" (the start vanished).
    pub(crate) async fn wait(mut self) -> Option<Result<Lease<C>, PoolError<K, E>>> {
        let outcome = match self
            .outcome
            .wait_for(|o| !matches!(o, Outcome::Pending))
            .await
        {
            Ok(outcome) => outcome.clone(),
            Err(_) => Outcome::Pending,
        };
        self.settled = true;
        match outcome {
            Outcome::Ready(conn, release) => Some(Ok(Lease::new(conn, self.generation, release))),
            Outcome::Failed(failure) => Some(Err(PoolError::StartFailed {
                key: self.key.clone(),
                generation: self.generation,
                failure,
            })),
            // The pool shut down, or the start task vanished without an answer (its
            // runtime is gone).
            Outcome::Closed | Outcome::Pending => Some(Err(PoolError::Closed {
                key: self.key.clone(),
            })),
        }
    }
}

impl<K: PoolKey, C: PooledConnection, E: FactoryError> Drop for Ticket<K, C, E> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let actions = {
            let mut state = self.inner.lock();
            // Starts publish their outcome under the lock, so this read is in step
            // with the entry.
            let outcome = self.outcome.borrow().clone();
            match outcome {
                Outcome::Pending => {
                    if let Some(entry) = state.keys.get_mut(&self.key)
                        && let Current::Starting {
                            generation,
                            waiters,
                            ..
                        } = &mut entry.current
                        && *generation == self.generation
                    {
                        *waiters = waiters.saturating_sub(1);
                    }
                    Vec::new()
                }
                Outcome::Ready(..) => {
                    self.inner
                        .release_locked(&mut state, &self.key, self.generation)
                }
                Outcome::Failed(_) | Outcome::Closed => Vec::new(),
            }
        };
        self.inner.run(actions);
    }
}

/// Releases leases of one generation back to the pool (type-erased key).
struct GenRelease<K: PoolKey, C: PooledConnection, E: FactoryError> {
    pool: Weak<Inner<K, C, E>>,
    key: K,
}

impl<K: PoolKey, C: PooledConnection, E: FactoryError> Release for GenRelease<K, C, E> {
    fn release(&self, generation: Generation) {
        if let Some(inner) = self.pool.upgrade() {
            let actions = {
                let mut state = inner.lock();
                inner.release_locked(&mut state, &self.key, generation)
            };
            inner.run(actions);
        }
    }
}

impl<C, E> Entry<C, E> {
    fn new() -> Self {
        Self {
            current: Current::Empty,
            retired: Vec::new(),
            failures: 0,
            retry_at: None,
            last: None,
        }
    }

    fn is_forgettable(&self) -> bool {
        matches!(self.current, Current::Empty) && self.retired.is_empty() && self.failures == 0
    }

    fn leases(&self) -> usize {
        let current = match &self.current {
            Current::Live(live) => live.leases,
            _ => 0,
        };
        current + self.retired.iter().map(|r| r.leases).sum::<usize>()
    }

    /// Records one failure (a failed start or a death) and arms the backoff.
    fn record_failure(&mut self, config: &PoolConfig, failure: Failure<E>) -> std::time::Duration {
        self.failures = self.failures.saturating_add(1);
        let backoff = config.backoff_after(self.failures);
        self.retry_at = Some(deadline_in(backoff));
        self.last = Some(failure);
        backoff
    }

    /// Forgets past failures (the connection was retired in good health).
    fn clear_failures(&mut self) {
        self.failures = 0;
        self.retry_at = None;
        self.last = None;
    }

    /// Moves the live connection out of `current`: into `retired` while leased,
    /// else to be shut down.
    fn retire_current<K>(&mut self, actions: &mut Vec<Action<K, C>>) {
        if let Current::Live(live) = std::mem::replace(&mut self.current, Current::Empty) {
            if let Some((_, token)) = live.idle {
                token.cancel();
            }
            if live.leases > 0 {
                self.retired.push(Retired {
                    generation: live.generation,
                    conn: live.conn,
                    leases: live.leases,
                });
            } else {
                actions.push(Action::Shutdown(live.conn));
            }
        }
    }
}

impl<K: PoolKey, C: PooledConnection, E: FactoryError> Inner<K, C, E> {
    pub(crate) fn new(config: PoolConfig) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            state: Mutex::new(State {
                keys: HashMap::new(),
                closed: false,
                next_generation: 1,
                next_idle: 0,
            }),
            config,
            tracker: TaskTracker::new(),
            cancel: CancellationToken::new(),
            runtime: OnceLock::new(),
            counters: Arc::new(Counters::default()),
            me: me.clone(),
        })
    }

    /// Tasks of the pool still running (starts, shutdowns, idle timers).
    #[cfg(test)]
    pub(crate) fn running_tasks(&self) -> usize {
        self.tracker.len()
    }

    pub(crate) fn config(&self) -> &PoolConfig {
        &self.config
    }

    fn lock(&self) -> MutexGuard<'_, State<K, C, E>> {
        // A panic while holding the lock leaves consistent-enough counters; keep going.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn arc(&self) -> Option<Arc<Self>> {
        self.me.upgrade()
    }

    /// The synchronous part of `acquire`: lease a live connection, join a start in
    /// flight, or begin a start.
    pub(crate) fn begin_acquire<F, Fut, E2>(
        &self,
        key: &K,
        factory: &mut Option<F>,
    ) -> Result<Step<K, C, E>, PoolError<K, E>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<C, E2>> + Send + 'static,
        E2: Into<E>,
    {
        let runtime = self.runtime.get_or_init(Handle::current).clone();
        let Some(me) = self.arc() else {
            return Err(PoolError::Closed { key: key.clone() });
        };
        let mut actions = Vec::new();
        let mut state = self.lock();
        if state.closed {
            return Err(PoolError::Closed { key: key.clone() });
        }
        let generation = Generation(state.next_generation);
        let entry = state.keys.entry(key.clone()).or_insert_with(Entry::new);

        if let Some(lease) = self.lease_live(entry, &mut actions) {
            return Ok(Step::Leased(lease));
        }
        if let Current::Starting {
            generation,
            waiters,
            outcome,
        } = &mut entry.current
        {
            *waiters += 1;
            let ticket = Ticket {
                inner: me,
                key: key.clone(),
                generation: *generation,
                outcome: outcome.clone(),
                settled: false,
            };
            drop(state);
            self.run(actions);
            return Ok(Step::Wait(ticket));
        }
        if let Some(err) = Self::crash_loop(key, entry) {
            drop(state);
            self.run(actions);
            return Err(err);
        }
        let Some(factory) = factory.take() else {
            // Our own start succeeded but the connection was dead before we could
            // take our lease: report it rather than start again behind the caller.
            drop(state);
            self.run(actions);
            return Err(PoolError::StartFailed {
                key: key.clone(),
                generation,
                failure: Failure::Died {
                    after: std::time::Duration::ZERO,
                },
            });
        };
        let (tx, rx) = watch::channel(Outcome::Pending);
        entry.current = Current::Starting {
            generation,
            waiters: 1,
            outcome: rx.clone(),
        };
        state.next_generation += 1;
        drop(state);
        self.run(actions);

        let ticket = Ticket {
            inner: me.clone(),
            key: key.clone(),
            generation,
            outcome: rx,
            settled: false,
        };
        self.spawn_start(me, &runtime, key.clone(), generation, factory, tx);
        Ok(Step::Wait(ticket))
    }

    /// A lease on the entry's live connection; a dead one is retired instead (into
    /// `actions`) and `None` returned.
    fn lease_live(
        &self,
        entry: &mut Entry<C, E>,
        actions: &mut Vec<Action<K, C>>,
    ) -> Option<Lease<C>> {
        let Current::Live(live) = &mut entry.current else {
            return None;
        };
        if live.conn.is_alive() {
            live.leases += 1;
            if let Some((_, token)) = live.idle.take() {
                token.cancel();
            }
            return Some(Lease::new(
                live.conn.clone(),
                live.generation,
                live.release.clone(),
            ));
        }
        let generation = live.generation;
        self.retire_dead_locked(entry, generation, actions);
        None
    }

    /// The crash-loop refusal while the entry's backoff lasts.
    fn crash_loop(key: &K, entry: &Entry<C, E>) -> Option<PoolError<K, E>> {
        let retry_at = entry.retry_at?;
        let last = entry.last.clone()?;
        let now = Instant::now();
        (now < retry_at).then(|| PoolError::CrashLoop {
            key: key.clone(),
            failures: entry.failures,
            retry_in: retry_at - now,
            last,
        })
    }

    /// Runs `factory` on `runtime` as the start of `generation`, owned by the pool's task
    /// tracker and stopped by its cancellation; the outcome goes to [`Inner::finish_start`].
    fn spawn_start<F, Fut, E2>(
        &self,
        me: Arc<Self>,
        runtime: &Handle,
        key: K,
        generation: Generation,
        factory: F,
        tx: watch::Sender<Outcome<C, E>>,
    ) where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<C, E2>> + Send + 'static,
        E2: Into<E>,
    {
        let span = tracing::info_span!("pool_start", key = ?key, %generation);
        // Boxed, so the start task's own allocation holds a pointer rather than the
        // factory's future (kilobytes: a whole launch and handshake). A waker of the start
        // task that something long-lived still holds (an I/O registration or channel the
        // handshake polled) keeps that allocation alive for the connection's life; the
        // box itself is freed as soon as the start ends.
        let starting = Box::pin(factory());
        // In the start's span (a child of the first acquirer's): what the factory does, a
        // handshake say, is part of that acquirer's trace.
        let start = runtime.spawn(
            async move {
                starting
                    .await
                    .map_err(|err| Failure::Factory(Arc::new(err.into())))
            }
            .instrument(span.clone()),
        );
        let cancel = self.cancel.clone();
        self.tracker.spawn_on(
            async move {
                let mut start = start;
                let joined = tokio::select! {
                    () = cancel.cancelled() => {
                        start.abort();
                        None
                    }
                    joined = &mut start => Some(joined),
                };
                // `None`: the pool shut down (it is closed before it cancels its starts).
                let result: Option<Result<C, Failure<E>>> = joined.map(|joined| match joined {
                    Ok(result) => result,
                    Err(join) => Err(Failure::Panicked(panic_message(join))),
                });
                me.finish_start(key, generation, result, tx);
            }
            .instrument(span),
            runtime,
        );
    }

    fn finish_start(
        &self,
        key: K,
        generation: Generation,
        result: Option<Result<C, Failure<E>>>,
        tx: watch::Sender<Outcome<C, E>>,
    ) {
        let mut actions = Vec::new();
        let mut state = self.lock();
        let closed = state.closed;
        let entry = state.keys.get_mut(&key).filter(|entry| {
            matches!(entry.current, Current::Starting { generation: g, .. } if g == generation)
        });
        let (entry, waiters, result) = match (entry, closed, result) {
            (Some(entry), false, Some(result)) => {
                let waiters = match entry.current {
                    Current::Starting { waiters, .. } => waiters,
                    _ => 0,
                };
                (entry, waiters, result)
            }
            (_, _, result) => {
                // Shut down (or the entry is gone): nobody may use this start.
                if let Some(Ok(conn)) = result {
                    self.counters.live.fetch_add(1, Ordering::Relaxed);
                    actions.push(Action::Shutdown(Arc::new(conn)));
                }
                tx.send_replace(Outcome::Closed);
                drop(state);
                self.run(actions);
                return;
            }
        };
        match result {
            Ok(conn) => {
                self.counters.live.fetch_add(1, Ordering::Relaxed);
                self.counters.starts.fetch_add(1, Ordering::Relaxed);
                let conn = Arc::new(conn);
                let release: Arc<dyn Release> = Arc::new(GenRelease {
                    pool: self.me.clone(),
                    key: key.clone(),
                });
                entry.current = Current::Live(Live {
                    generation,
                    conn: conn.clone(),
                    started: Instant::now(),
                    leases: waiters,
                    release: release.clone(),
                    idle: None,
                });
                // Past failures are kept: a server that crashes right after each start
                // stays in its crash loop. They are forgotten when the connection is
                // retired in good health, or when it dies after a long life.
                tracing::info!(waiters, "pooled connection started");
                tx.send_replace(Outcome::Ready(conn, release));
                if waiters == 0 {
                    let epoch = state.next_idle;
                    state.next_idle += 1;
                    if let Some(entry) = state.keys.get_mut(&key) {
                        self.unleased(entry, &key, epoch, &mut actions);
                    }
                }
            }
            Err(failure) => {
                self.counters.failures.fetch_add(1, Ordering::Relaxed);
                entry.current = Current::Empty;
                let backoff = entry.record_failure(&self.config, failure.clone());
                tracing::warn!(failures = entry.failures, ?backoff, error = %ErrorChain(&failure), "pooled connection failed to start");
                tx.send_replace(Outcome::Failed(failure));
            }
        }
        drop(state);
        self.run(actions);
    }

    /// The current generation has no lease left: keep it alive or shut it down.
    fn unleased(
        &self,
        entry: &mut Entry<C, E>,
        key: &K,
        epoch: u64,
        actions: &mut Vec<Action<K, C>>,
    ) {
        let keep = self.config.idle_keep_alive();
        if let Current::Live(live) = &mut entry.current {
            if !live.conn.is_alive() {
                let generation = live.generation;
                self.retire_dead_locked(entry, generation, actions);
            } else if keep.is_zero() {
                entry.retire_current(actions);
                entry.clear_failures();
            } else {
                let token = self.cancel.child_token();
                live.idle = Some((epoch, token.clone()));
                actions.push(Action::IdleTimer {
                    key: key.clone(),
                    generation: live.generation,
                    epoch,
                    token,
                });
            }
        }
    }

    fn release_locked(
        &self,
        state: &mut State<K, C, E>,
        key: &K,
        generation: Generation,
    ) -> Vec<Action<K, C>> {
        let mut actions = Vec::new();
        let epoch = state.next_idle;
        let Some(entry) = state.keys.get_mut(key) else {
            return actions;
        };
        let mut now_unleased = false;
        if let Current::Live(live) = &mut entry.current
            && live.generation == generation
        {
            live.leases = live.leases.saturating_sub(1);
            now_unleased = live.leases == 0;
        } else if let Some(i) = entry
            .retired
            .iter()
            .position(|r| r.generation == generation)
        {
            let retired = &mut entry.retired[i];
            retired.leases = retired.leases.saturating_sub(1);
            if retired.leases == 0 {
                let retired = entry.retired.swap_remove(i);
                tracing::debug!(key = ?key, generation = %retired.generation, "last lease of a retired generation released");
                actions.push(Action::Shutdown(retired.conn));
            }
        }
        if now_unleased {
            state.next_idle += 1;
            if let Some(entry) = state.keys.get_mut(key) {
                self.unleased(entry, key, epoch, &mut actions);
            }
        }
        Self::forget_if_empty(state, key);
        actions
    }

    fn forget_if_empty(state: &mut State<K, C, E>, key: &K) {
        if state.keys.get(key).is_some_and(Entry::is_forgettable) {
            state.keys.remove(key);
        }
    }

    fn expire_idle(&self, key: &K, generation: Generation, epoch: u64) {
        let mut actions = Vec::new();
        {
            let mut state = self.lock();
            if let Some(entry) = state.keys.get_mut(key)
                && let Current::Live(live) = &entry.current
                && live.generation == generation
                && live.leases == 0
                && live.idle.as_ref().is_some_and(|(e, _)| *e == epoch)
            {
                tracing::debug!(key = ?key, %generation, "idle keep-alive expired");
                entry.retire_current(&mut actions);
                entry.clear_failures();
            }
            Self::forget_if_empty(&mut state, key);
        }
        self.run(actions);
    }

    /// Retires the current generation of an entry because its connection died, and
    /// counts that as one failure. Does nothing unless `generation` is the live current
    /// one, so however many observers report a death, it is counted once.
    fn retire_dead_locked(
        &self,
        entry: &mut Entry<C, E>,
        generation: Generation,
        actions: &mut Vec<Action<K, C>>,
    ) -> bool {
        let lived = match &entry.current {
            Current::Live(live) if live.generation == generation => live.started.elapsed(),
            _ => return false,
        };
        entry.retire_current(actions);
        if lived >= self.config.backoff_max() {
            // A long, healthy life before this death: not part of a loop.
            entry.clear_failures();
        }
        self.counters.crashes.fetch_add(1, Ordering::Relaxed);
        let backoff = entry.record_failure(&self.config, Failure::Died { after: lived });
        tracing::warn!(%generation, failures = entry.failures, ?backoff, "pooled connection died; the next start waits out the backoff");
        true
    }

    pub(crate) fn report_dead(&self, key: &K, generation: Generation) -> bool {
        let mut actions = Vec::new();
        let counted = {
            let mut state = self.lock();
            match state.keys.get_mut(key) {
                Some(entry) => self.retire_dead_locked(entry, generation, &mut actions),
                None => false,
            }
        };
        self.run(actions);
        counted
    }

    pub(crate) fn clear_backoff(&self, key: &K) -> bool {
        let mut state = self.lock();
        let cleared = match state.keys.get_mut(key) {
            Some(entry) if entry.retry_at.is_some() => {
                entry.retry_at = None;
                true
            }
            _ => false,
        };
        Self::forget_if_empty(&mut state, key);
        cleared
    }

    pub(crate) fn replace(&self, key: &K) -> bool {
        let mut actions = Vec::new();
        let replaced = {
            let mut state = self.lock();
            let replaced = match state.keys.get_mut(key) {
                Some(entry) if matches!(entry.current, Current::Live(_)) => {
                    entry.retire_current(&mut actions);
                    entry.clear_failures();
                    true
                }
                _ => false,
            };
            Self::forget_if_empty(&mut state, key);
            replaced
        };
        if replaced {
            tracing::info!(key = ?key, "pooled connection replaced; the next acquisition starts a new generation");
        }
        self.run(actions);
        replaced
    }

    /// Runs deferred work outside the lock.
    fn run(&self, actions: Vec<Action<K, C>>) {
        if actions.is_empty() {
            return;
        }
        let Some(runtime) = self.runtime.get() else {
            return;
        };
        for action in actions {
            match action {
                Action::Shutdown(conn) => {
                    let counters = self.counters.clone();
                    self.tracker.spawn_on(
                        async move {
                            conn.shutdown().await;
                            counters.live.fetch_sub(1, Ordering::Relaxed);
                        },
                        runtime,
                    );
                }
                Action::IdleTimer {
                    key,
                    generation,
                    epoch,
                    token,
                } => {
                    let pool = self.me.clone();
                    let deadline = deadline_in(self.config.idle_keep_alive());
                    self.tracker.spawn_on(
                        async move {
                            tokio::select! {
                                () = token.cancelled() => {}
                                () = tokio::time::sleep_until(deadline) => {
                                    if let Some(pool) = pool.upgrade() {
                                        pool.expire_idle(&key, generation, epoch);
                                    }
                                }
                            }
                        },
                        runtime,
                    );
                }
            }
        }
    }

    pub(crate) fn status(&self, key: &K) -> KeyStatus {
        let state = self.lock();
        state
            .keys
            .get(key)
            .map_or(KeyStatus::Absent, Self::entry_status)
    }

    pub(crate) fn statuses(&self) -> BTreeMap<K, KeyStatus> {
        let state = self.lock();
        state
            .keys
            .iter()
            .map(|(k, e)| (k.clone(), Self::entry_status(e)))
            .collect()
    }

    fn entry_status(entry: &Entry<C, E>) -> KeyStatus {
        match &entry.current {
            Current::Starting { generation, .. } => KeyStatus::Starting {
                generation: *generation,
            },
            Current::Live(live) if !live.conn.is_alive() => KeyStatus::Dead {
                generation: live.generation,
                leases: live.leases,
            },
            Current::Live(live) if live.leases == 0 => KeyStatus::Idle {
                generation: live.generation,
            },
            Current::Live(live) => KeyStatus::Ready {
                generation: live.generation,
                leases: live.leases,
            },
            Current::Empty if entry.failures > 0 => KeyStatus::CrashLoop {
                failures: entry.failures,
                retry_in: entry
                    .retry_at
                    .map(|at| at.saturating_duration_since(Instant::now()))
                    .unwrap_or_default(),
                last_error: entry
                    .last
                    .as_ref()
                    .map(|last| ErrorChain(last).to_string())
                    .unwrap_or_default(),
            },
            Current::Empty => KeyStatus::Absent,
        }
    }

    pub(crate) fn stats(&self) -> PoolStats<K> {
        let leases = {
            let state = self.lock();
            state
                .keys
                .iter()
                .map(|(k, e)| (k.clone(), e.leases()))
                .filter(|(_, n)| *n > 0)
                .collect()
        };
        PoolStats {
            live_connections: self.counters.live.load(Ordering::Relaxed),
            starts: self.counters.starts.load(Ordering::Relaxed),
            failures: self.counters.failures.load(Ordering::Relaxed),
            crashes: self.counters.crashes.load(Ordering::Relaxed),
            leases,
        }
    }

    pub(crate) async fn shutdown(&self) {
        let mut actions = Vec::new();
        {
            let mut state = self.lock();
            state.closed = true;
            for (_, mut entry) in state.keys.drain() {
                if let Current::Live(live) = std::mem::replace(&mut entry.current, Current::Empty) {
                    actions.push(Action::Shutdown(live.conn));
                }
                actions.extend(entry.retired.into_iter().map(|r| Action::Shutdown(r.conn)));
            }
        }
        self.cancel.cancel();
        tracing::debug!(connections = actions.len(), "shutting the pool down");
        self.run(actions);
        self.tracker.close();
        self.tracker.wait().await;
    }
}

/// The message of a start task's panic (empty when it had none that is text).
fn panic_message(join: tokio::task::JoinError) -> String {
    let Ok(payload) = join.try_into_panic() else {
        return String::new();
    };
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
