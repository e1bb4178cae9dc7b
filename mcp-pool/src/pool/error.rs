//! [`PoolError`]: why a lease could not be had, in the caller's own types (its key, its
//! factory's error, shared by every acquirer that waited for the start).

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::lease::Generation;

/// An error a connection factory may return: every `std::error::Error + Send + Sync +
/// 'static`, and [`AnyError`] (a pool's default, into which any boxed error converts).
///
/// The pool hands the factory's error back shared ([`Arc<E>`](Arc)), and a
/// [`PoolError`]'s [`source`](StdError::source) is that error itself
/// ([`as_error`](Self::as_error)), so a caller can read it by its own type or downcast the
/// source.
pub trait FactoryError: fmt::Debug + fmt::Display + Send + Sync + 'static {
    /// The error as a `std::error::Error` (for [`AnyError`], the boxed error inside it).
    fn as_error(&self) -> &(dyn StdError + 'static);
}

impl<T: StdError + Send + Sync + 'static> FactoryError for T {
    fn as_error(&self) -> &(dyn StdError + 'static) {
        self
    }
}

/// Any error, boxed: the factory error type of a [`Pool`](crate::Pool) that names none
/// (`Pool<K, C>`). Every `Into<Box<dyn Error + Send + Sync>>` converts into it (an
/// `io::Error`, a `Box<dyn Error + Send + Sync>`, a `String`).
///
/// It does not implement `std::error::Error` itself (that would keep it from converting
/// from every error); [`PoolError`] reports the boxed error as its source.
pub struct AnyError(Box<dyn StdError + Send + Sync>);

impl AnyError {
    /// The boxed error.
    pub fn get_ref(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.0
    }

    /// The boxed error, if it is a `T`.
    pub fn downcast_ref<T: StdError + 'static>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }

    /// The boxed error, taken out.
    pub fn into_inner(self) -> Box<dyn StdError + Send + Sync> {
        self.0
    }
}

impl<T: Into<Box<dyn StdError + Send + Sync>>> From<T> for AnyError {
    fn from(error: T) -> Self {
        Self(error.into())
    }
}

impl fmt::Debug for AnyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for AnyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl FactoryError for AnyError {
    fn as_error(&self) -> &(dyn StdError + 'static) {
        &*self.0
    }
}

/// Why a key's start failed, or why its last connection ended: the factory's error, or
/// what the pool itself saw.
#[derive(Debug)]
#[non_exhaustive]
pub enum Failure<E> {
    /// The factory returned this error.
    Factory(Arc<E>),
    /// The start task panicked (with the panic's message, when it had one).
    Panicked(String),
    /// The connection died this long after it started.
    Died {
        /// How long it had lived.
        after: Duration,
    },
}

impl<E> Clone for Failure<E> {
    fn clone(&self) -> Self {
        match self {
            Self::Factory(e) => Self::Factory(Arc::clone(e)),
            Self::Panicked(message) => Self::Panicked(message.clone()),
            Self::Died { after } => Self::Died { after: *after },
        }
    }
}

impl<E> Failure<E> {
    /// The factory's error, when that is what failed.
    pub fn factory_error(&self) -> Option<&Arc<E>> {
        match self {
            Self::Factory(e) => Some(e),
            _ => None,
        }
    }
}

impl<E: FactoryError> Failure<E> {
    /// The error to report as a source: the factory's own, else this one.
    fn as_source(&self) -> &(dyn StdError + 'static) {
        match self {
            Self::Factory(e) => e.as_error(),
            other => other,
        }
    }
}

impl<E: fmt::Display> fmt::Display for Failure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Factory(e) => e.fmt(f),
            Self::Panicked(message) if message.is_empty() => f.write_str("the start panicked"),
            Self::Panicked(message) => write!(f, "the start panicked: {message}"),
            Self::Died { after } => write!(f, "the connection died {after:.1?} after it started"),
        }
    }
}

impl<E: FactoryError> StdError for Failure<E> {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            // The factory's error stands in for this one (same text): its source follows.
            Self::Factory(e) => e.as_error().source(),
            _ => None,
        }
    }
}

/// Why [`Pool::acquire`](crate::Pool::acquire) failed, with the caller's key `K` and its
/// factory's error `E` (shared by every acquirer that waited for the failed start).
///
/// `Display` says what failed in the pool; the cause is the
/// [`source`](StdError::source): the factory's error itself, or the pool's [`Failure`]
/// (a panic, a death). [`PoolError::chain`] prints both on one line.
#[derive(Debug)]
#[non_exhaustive]
pub enum PoolError<K, E = AnyError> {
    /// The pool was shut down.
    Closed {
        /// The key.
        key: K,
    },
    /// Starting the connection failed (the factory returned an error or panicked).
    /// The next acquisition retries after the crash-loop backoff.
    StartFailed {
        /// The key.
        key: K,
        /// The generation that failed to start.
        generation: Generation,
        /// What failed: the factory's error, or a panic.
        failure: Failure<E>,
    },
    /// The key's starts keep failing; no new start before the backoff elapses.
    CrashLoop {
        /// The key.
        key: K,
        /// Failed starts (and deaths) in a row.
        failures: u32,
        /// Time until the next acquisition may start it again.
        retry_in: Duration,
        /// The last failure.
        last: Failure<E>,
    },
}

impl<K: Clone, E> Clone for PoolError<K, E> {
    fn clone(&self) -> Self {
        match self {
            Self::Closed { key } => Self::Closed { key: key.clone() },
            Self::StartFailed {
                key,
                generation,
                failure,
            } => Self::StartFailed {
                key: key.clone(),
                generation: *generation,
                failure: failure.clone(),
            },
            Self::CrashLoop {
                key,
                failures,
                retry_in,
                last,
            } => Self::CrashLoop {
                key: key.clone(),
                failures: *failures,
                retry_in: *retry_in,
                last: last.clone(),
            },
        }
    }
}

impl<K: fmt::Debug, E> fmt::Display for PoolError<K, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed { key } => {
                write!(
                    f,
                    "cannot acquire {key:?}: the connection pool is shut down"
                )
            }
            Self::StartFailed {
                key, generation, ..
            } => write!(f, "starting {key:?} (generation {generation}) failed"),
            Self::CrashLoop {
                key,
                failures,
                retry_in,
                ..
            } => write!(
                f,
                "{key:?} is in a crash loop ({failures} failures in a row, next retry in {retry_in:.1?})"
            ),
        }
    }
}

impl<K: fmt::Debug, E: FactoryError> StdError for PoolError<K, E> {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Self::Closed { .. } => None,
            Self::StartFailed { failure, .. } => Some(failure.as_source()),
            Self::CrashLoop { last, .. } => Some(last.as_source()),
        }
    }
}

impl<K, E> PoolError<K, E> {
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

    /// The key that could not be acquired.
    pub fn key(&self) -> &K {
        match self {
            Self::Closed { key } | Self::StartFailed { key, .. } | Self::CrashLoop { key, .. } => {
                key
            }
        }
    }

    /// The failure behind the error: the failed start's, or the last one of a crash loop.
    pub fn failure(&self) -> Option<&Failure<E>> {
        match self {
            Self::Closed { .. } => None,
            Self::StartFailed { failure, .. } => Some(failure),
            Self::CrashLoop { last, .. } => Some(last),
        }
    }

    /// The factory's error behind the error, when a factory's error is what failed (the
    /// start that failed, or the last start of a crash loop).
    pub fn factory_error(&self) -> Option<&Arc<E>> {
        self.failure().and_then(Failure::factory_error)
    }
}

impl<K: fmt::Debug + 'static, E: FactoryError> PoolError<K, E> {
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
    /// assert_eq!(*err.key(), "broken");
    /// assert_eq!(err.factory_error().unwrap().to_string(), "no such binary");
    /// # });
    /// ```
    pub fn chain(&self) -> ErrorChain<'_> {
        ErrorChain(self)
    }
}

/// An error and its sources on one line, `error: cause: cause`, each layer's text as it
/// is (an empty text is skipped). See [`PoolError::chain`].
#[derive(Debug, Clone, Copy)]
pub struct ErrorChain<'a>(pub &'a (dyn StdError + 'static));

impl fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut cur: Option<&(dyn StdError + 'static)> = Some(self.0);
        while let Some(e) = cur {
            let text = e.to_string();
            if !text.is_empty() {
                if !first {
                    f.write_str(": ")?;
                }
                f.write_str(&text)?;
                first = false;
            }
            cur = e.source();
        }
        Ok(())
    }
}
