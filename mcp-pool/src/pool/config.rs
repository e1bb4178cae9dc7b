//! [`PoolConfig`]: keep-alive and crash-loop backoff.

use std::time::Duration;

use tokio::time::Instant;

/// Default idle keep-alive: zero, none (the last release shuts the connection down).
pub const DEFAULT_IDLE_KEEP_ALIVE: Duration = Duration::ZERO;

/// Default first crash-loop backoff: 1 s, the wait before the start that follows a
/// second failure in a row (after a single failure the next acquisition retries at once;
/// see [`PoolConfig::backoff_after`]).
pub const DEFAULT_BACKOFF_INITIAL: Duration = Duration::from_secs(1);

/// Default cap on the retry wait of a crash-looping key: 30 s.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// How far ahead a deadline is put when a configured duration does not fit the clock
/// (30 years: practically never).
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// `now + wait`, or 30 years from now when that does not fit the clock: a configured
/// duration may be as large as `Duration::MAX`, which then means "never", not a panic.
/// The workspace's one rule for deadlines from configured durations (the pool's keep-alive
/// and backoff, and the connection set's startup, tool and call timeouts).
pub fn deadline_in(wait: Duration) -> Instant {
    deadline_after(Instant::now(), wait)
}

/// [`deadline_in`] from `now`.
pub(crate) fn deadline_after(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

/// How a [`Pool`](crate::Pool) keeps and retries connections.
///
/// ```
/// use std::time::Duration;
/// use mcp_pool::PoolConfig;
///
/// let config = PoolConfig::new()
///     .with_idle_keep_alive(Duration::from_secs(60))
///     .with_backoff(Duration::from_millis(100), Duration::from_secs(5));
/// // One failure may be bad luck: the next acquisition retries at once.
/// assert_eq!(config.backoff_after(1), Duration::ZERO);
/// // From the second failure in a row it is a crash loop.
/// assert_eq!(config.backoff_after(2), Duration::from_millis(100));
/// assert_eq!(config.backoff_after(4), Duration::from_millis(400));
/// assert_eq!(config.backoff_after(30), Duration::from_secs(5));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolConfig {
    idle_keep_alive: Duration,
    backoff_initial: Duration,
    backoff_max: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl PoolConfig {
    /// The defaults: [`DEFAULT_IDLE_KEEP_ALIVE`], [`DEFAULT_BACKOFF_INITIAL`],
    /// [`DEFAULT_BACKOFF_MAX`].
    pub fn new() -> Self {
        Self {
            idle_keep_alive: DEFAULT_IDLE_KEEP_ALIVE,
            backoff_initial: DEFAULT_BACKOFF_INITIAL,
            backoff_max: DEFAULT_BACKOFF_MAX,
        }
    }

    /// How long a connection with no lease stays up, ready to be revived without a
    /// new start. Zero shuts it down at the last release; `Duration::MAX` (or anything
    /// too large for the clock) keeps it until the pool shuts down.
    #[must_use]
    pub fn with_idle_keep_alive(mut self, keep_alive: Duration) -> Self {
        self.idle_keep_alive = keep_alive;
        self
    }

    /// Crash-loop backoff: after `n >= 2` failures in a row (failed starts and deaths),
    /// the next start waits `initial * 2^(n-2)`, capped at `max`. After a single failure
    /// the next acquisition retries at once. Any durations are accepted: one too large
    /// for the clock means the key is not started again before the pool is dropped.
    #[must_use]
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.backoff_initial = initial;
        self.backoff_max = max;
        self
    }

    /// The idle keep-alive.
    pub fn idle_keep_alive(&self) -> Duration {
        self.idle_keep_alive
    }

    /// The cap of the crash-loop backoff; a connection that lived at least this long
    /// before it died starts a new count.
    pub fn backoff_max(&self) -> Duration {
        self.backoff_max
    }

    /// The wait before the next start after `failures` failed starts in a row.
    pub fn backoff_after(&self, failures: u32) -> Duration {
        if failures <= 1 {
            return Duration::ZERO;
        }
        crate::Backoff::new(self.backoff_initial, self.backoff_max).delay(failures - 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_past_the_clock_is_far_away_not_a_panic() {
        let now = Instant::now();
        assert_eq!(
            deadline_after(now, Duration::from_secs(2)),
            now + Duration::from_secs(2)
        );
        assert!(deadline_after(now, Duration::MAX) >= now + FAR_FUTURE);
    }
}
