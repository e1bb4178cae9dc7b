//! What the pool reports: [`KeyStatus`] and [`PoolStats`].

use std::collections::BTreeMap;
use std::time::Duration;

use super::lease::Generation;

/// The state of one key in the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyStatus {
    /// Nothing running, no recent failure.
    Absent,
    /// A start is in flight.
    Starting {
        /// The generation being started.
        generation: Generation,
    },
    /// A connection is up and leased.
    Ready {
        /// The current generation.
        generation: Generation,
        /// Leases on it.
        leases: usize,
    },
    /// A connection is up with no lease, kept alive for a while.
    Idle {
        /// The current generation.
        generation: Generation,
    },
    /// The current connection died; the next acquisition starts a new generation
    /// (leases on it keep it until they are dropped).
    Dead {
        /// The dead generation.
        generation: Generation,
        /// Leases still on it.
        leases: usize,
    },
    /// The last start(s) failed or the connection died; the next acquisition
    /// retries after `retry_in`.
    CrashLoop {
        /// Failures (failed starts and deaths) in a row.
        failures: u32,
        /// Time until a start is allowed again (zero: the next acquisition retries).
        retry_in: Duration,
        /// The last start error's message.
        last_error: String,
    },
}

impl KeyStatus {
    /// Whether the key is crash-looping.
    pub fn is_crash_loop(&self) -> bool {
        matches!(self, Self::CrashLoop { .. })
    }
}

/// Plain counters a host can read at any time ([`Pool::stats`](crate::Pool::stats)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats<K: Ord> {
    /// Connections started and not yet fully shut down (all generations).
    pub live_connections: usize,
    /// Successful starts since the pool was created.
    pub starts: u64,
    /// Failed starts since the pool was created.
    pub failures: u64,
    /// Connections that died while they were the current generation (each death
    /// counted once, however many users saw it).
    pub crashes: u64,
    /// Leases held per key (all generations), keys with none left out.
    pub leases: BTreeMap<K, usize>,
}

impl<K: Ord> PoolStats<K> {
    /// Total leases over all keys.
    pub fn total_leases(&self) -> usize {
        self.leases.values().sum()
    }
}
