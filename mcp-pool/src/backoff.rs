//! [`Backoff`]: the one doubling delay of the workspace (restarts of a crash-looping
//! server, retries of a lost session, a dropped event stream, a listen).

use std::time::Duration;

/// A delay that doubles with each step: `base` at step 0, twice that at step 1, and so on,
/// never more than `max`. Saturating: a step or a base too large for the clock gives `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Backoff {
    base: Duration,
    max: Duration,
}

impl Backoff {
    /// Doubling from `base`, capped at `max`.
    pub const fn new(base: Duration, max: Duration) -> Self {
        Self { base, max }
    }

    /// The delay of step `step` (0 for the first): `base * 2^step`, capped at `max`.
    pub fn delay(&self, step: u32) -> Duration {
        let factor = 1u32.checked_shl(step).unwrap_or(u32::MAX);
        self.base
            .checked_mul(factor)
            .map_or(self.max, |d| d.min(self.max))
    }

    /// The first delay.
    pub const fn base(&self) -> Duration {
        self.base
    }

    /// The cap.
    pub const fn max(&self) -> Duration {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_the_base_up_to_the_cap() {
        let b = Backoff::new(Duration::from_secs(1), Duration::from_secs(30));
        let delays: Vec<u64> = (0..7).map(|s| b.delay(s).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
    }

    #[test]
    fn huge_steps_and_bases_saturate_at_the_cap() {
        let b = Backoff::new(Duration::from_millis(250), Duration::from_secs(2));
        assert_eq!(b.delay(31), Duration::from_secs(2));
        assert_eq!(b.delay(32), Duration::from_secs(2));
        assert_eq!(b.delay(u32::MAX), Duration::from_secs(2));
        let never = Backoff::new(Duration::MAX, Duration::MAX);
        assert_eq!(never.delay(3), Duration::MAX);
    }
}
