//! Medians and percentiles of samples, and the interleaving of A/B runs.

use std::time::Duration;

/// The `q` quantile (0.0..=1.0) of `samples`, nearest rank; 0 for no samples.
pub(crate) fn quantile(samples: &[f64], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (q * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The median of `samples`.
pub(crate) fn median(samples: &[f64]) -> f64 {
    quantile(samples, 0.5)
}

/// Whether round `round` runs B before A: the order alternates (ABBA ABBA …) so a drift
/// of the machine during the run weighs on both sides alike.
pub(crate) fn b_first(round: usize) -> bool {
    round % 2 == 1
}

/// A pause between the two sides of a round, so the processes just stopped are gone.
pub(crate) const SETTLE: Duration = Duration::from_millis(20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_use_the_nearest_rank() {
        let s = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(median(&s), 3.0);
        assert_eq!(quantile(&s, 0.0), 1.0);
        assert_eq!(quantile(&s, 1.0), 5.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}
