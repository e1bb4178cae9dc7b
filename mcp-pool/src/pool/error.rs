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
    /// The next acquisition retries after the crash-loop backoff. The factory's error is
    /// the [`source`](StdError::source); [`PoolError::chain`] prints both on one line.
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

    /// This error and its causes on one line (`starting "k" (generation 1) failed:
    /// connection refused`), for messages and logs: `Display` alone says what failed in
    /// the pool, the causes say why.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_pool::{Pool, PoolConfig, PooledConnection};
    ///
    /// struct Conn;
    /// impl PooledConnection for Conn {
    ///     fn is_alive(&self) -> bool { true }
    ///     async fn shutdown(&self) {}
    /// }
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let pool: Pool<&str, Conn> = Pool::new(PoolConfig::new());
    /// let err = pool
    ///     .acquire("broken", || async { Err::<Conn, _>(std::io::Error::other("no such binary")) })
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(err.to_string(), r#"starting "broken" (generation 1) failed"#);
    /// assert_eq!(
    ///     err.chain().to_string(),
    ///     r#"starting "broken" (generation 1) failed: no such binary"#
    /// );
    /// # });
    /// ```
    pub fn chain(&self) -> ErrorChain<'_> {
        ErrorChain(self)
    }

    /// Whether a later acquisition may succeed (everything but a closed pool).
    pub fn is_retryable(&self) -> bool {
        !self.is_closed()
    }
}

/// An error and its sources on one line, `error: cause: cause`, leaving out a cause whose
/// text the line already holds. See [`PoolError::chain`].
#[derive(Debug, Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn StdError + 'static));

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut written = String::new();
        let mut cur: Option<&(dyn StdError + 'static)> = Some(self.0);
        while let Some(e) = cur {
            let text = e.to_string();
            if !text.is_empty() && !written.contains(&text) {
                if !written.is_empty() {
                    written.push_str(": ");
                }
                written.push_str(&text);
            }
            cur = e.source();
        }
        f.write_str(&written)
    }
}
