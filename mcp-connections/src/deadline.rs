//! Deadlines from configured durations, which may be as large as `Duration::MAX`
//! (`tool_timeout_sec = 1e19`, `CallOptions::with_timeout(Duration::MAX)`): one that
//! does not fit the clock is put far away instead of panicking.

use std::time::Duration;

use tokio::time::Instant;

/// How far ahead a deadline goes when a duration does not fit the clock (30 years).
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 24 * 60 * 60);

/// The instant `wait` from now, saturated at [`FAR_FUTURE`] from now.
pub(crate) fn deadline_in(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .unwrap_or(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_past_the_clock_is_far_away_not_a_panic() {
        let before = Instant::now();
        assert!(deadline_in(Duration::MAX) >= before + FAR_FUTURE);
        assert!(deadline_in(Duration::from_secs(1)) <= Instant::now() + Duration::from_secs(1));
    }
}
