//! [`PoolError`]: why a lease could not be had.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use super::lease::Generation;

/// A start failure, shared by every acquirer that waited for that start.
pub type StartError = Arc<dyn StdError + Send + Sync + 'static>;

/// Why [`Pool::acquire`](crate::Pool::acquire) failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PoolError {
    /// The pool was shut down.
    #[error("cannot acquire {key}: the connection pool is shut down")]
    Closed {
        /// The key (its `Debug` form).
        key: String,
    },
    /// Starting the connection failed (the factory returned an error or panicked).
    /// The next acquisition retries after the crash-loop backoff.
    #[error("starting {key} (generation {generation}) failed")]
    StartFailed {
        /// The key (its `Debug` form).
        key: String,
        /// The generation that failed to start.
        generation: Generation,
        /// What the factory reported.
        #[source]
        source: StartError,
    },
    /// The key's starts keep failing; no new start before the backoff elapses.
    #[error(
        "{key} is in a crash loop: {failures} failures in a row, next retry in {retry_in:.1?}; last error: {last_error}"
    )]
    CrashLoop {
        /// The key (its `Debug` form).
        key: String,
        /// Failed starts in a row.
        failures: u32,
        /// Time until the next acquisition may start it again.
        retry_in: Duration,
        /// The last start error's message.
        last_error: String,
    },
}

impl PoolError {
    /// The pool is shut down.
    pub fn is_closed(&self) -> bool {
        matches!(self, Self::Closed { .. })
    }

    /// A start failed just now.
    pub fn is_start_failed(&self) -> bool {
        matches!(self, Self::StartFailed { .. })
    }

    /// The key is backing off after repeated failures.
    pub fn is_crash_loop(&self) -> bool {
        matches!(self, Self::CrashLoop { .. })
    }

    /// Whether a later acquisition may succeed (everything but a closed pool).
    pub fn is_retryable(&self) -> bool {
        !self.is_closed()
    }
}
