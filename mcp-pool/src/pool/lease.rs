//! [`Lease`]: one session's share of a pooled connection.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A connection generation: each start gets a new, larger one. Generations are numbered
/// pool-wide, not per key: the first start of a second key may be generation 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Generation(pub(crate) u64);

impl Generation {
    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Gives a lease back to its pool (type-erased over the key).
pub(crate) trait Release: Send + Sync {
    fn release(&self, generation: Generation);
}

/// One session's ownership of a pooled connection; dropping it releases it.
///
/// For one in-flight operation, clone the [`Arc<C>`](Lease::connection) rather than
/// acquiring again: that is not a new lease. When the last lease of a generation is
/// dropped, the pool shuts that connection down (after the idle keep-alive, for the
/// current generation).
pub struct Lease<C> {
    conn: Arc<C>,
    generation: Generation,
    release: Arc<dyn Release>,
}

impl<C> Lease<C> {
    pub(crate) fn new(conn: Arc<C>, generation: Generation, release: Arc<dyn Release>) -> Self {
        Self {
            conn,
            generation,
            release,
        }
    }

    /// The shared connection.
    pub fn connection(&self) -> &Arc<C> {
        &self.conn
    }

    /// The generation this lease belongs to.
    pub fn generation(&self) -> Generation {
        self.generation
    }
}

impl<C> Deref for Lease<C> {
    type Target = C;

    fn deref(&self) -> &C {
        &self.conn
    }
}

impl<C> Drop for Lease<C> {
    fn drop(&mut self) {
        self.release.release(self.generation);
    }
}

impl<C> fmt::Debug for Lease<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}
