//! What one search asks for ([`SearchOptions`]) and answers ([`SearchResults`]): a bounded
//! number of hits, weak ones left out, and the closest names when nothing matches well.

use crate::tool::{EntryKind, Hit};

/// The minimum [`Hit::coverage`] that [`SearchOptions::new`] keeps: a hit that has less
/// than this share of the query's weight is a weak hit (see
/// [`ToolIndex::search_with`](crate::ToolIndex::search_with)).
///
/// Chosen on the tuning part of the public benchmark queries as the largest threshold
/// that loses no top-5 hit there (0.15 lost 7 of 183; 0.25 lost 11); it answers "no good
/// match" only when the best tools share little more than a common word with the query.
/// A host that prefers silence to weak hits raises it.
pub const DEFAULT_MIN_COVERAGE: f64 = 0.1;
/// How many names a no-match answer offers in [`SearchResults::did_you_mean`].
pub const DID_YOU_MEAN: usize = 3;

/// What one search asks for: at most `limit` hits, each with at least `min_coverage` of
/// the query's weight unless it is named in the query.
///
/// ```
/// use mcp_search::{SearchOptions, DEFAULT_MIN_COVERAGE};
/// let options = SearchOptions::new(5);
/// assert_eq!((options.limit(), options.min_coverage()), (5, DEFAULT_MIN_COVERAGE));
/// assert_eq!(options.with_min_coverage(2.0).min_coverage(), 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SearchOptions {
    limit: usize,
    min_coverage: f64,
    only: Option<EntryKind>,
}

impl SearchOptions {
    /// At most `limit` hits (0 is refused by the search; above
    /// [`MAX_LIMIT`](crate::MAX_LIMIT) is clamped), with the
    /// [`DEFAULT_MIN_COVERAGE`].
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            min_coverage: DEFAULT_MIN_COVERAGE,
            only: None,
        }
    }

    /// This search keeping only hits with at least `min_coverage` of the query's weight
    /// (clamped to 0..=1; 0 keeps every hit that matches a term).
    #[must_use]
    pub fn with_min_coverage(mut self, min_coverage: f64) -> Self {
        self.min_coverage = if min_coverage.is_nan() {
            0.0
        } else {
            min_coverage.clamp(0.0, 1.0)
        };
        self
    }

    /// Only entries of `kind` (hits and "did you mean" alike): a tool search of an index
    /// that also holds skills (the corpus statistics still count every entry).
    #[must_use]
    pub fn only(mut self, kind: EntryKind) -> Self {
        self.only = Some(kind);
        self
    }

    /// The one kind of entry asked for, if any (`None`: tools and skills).
    pub fn kind(&self) -> Option<EntryKind> {
        self.only
    }

    /// The most hits asked for.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The least coverage a hit needs (see [`Hit::coverage`]).
    pub fn min_coverage(&self) -> f64 {
        self.min_coverage
    }
}

/// What one search found: the hits, best first, and, when none is good enough, the
/// closest names.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchResults {
    /// The hits that passed, best first.
    pub hits: Vec<Hit>,
    /// Empty unless `hits` is: then up to [`DID_YOU_MEAN`] of the closest tools: the tool
    /// names nearest in spelling to the query first (score and coverage 0 unless they
    /// matched a word), then the best weak hits.
    pub did_you_mean: Vec<Hit>,
}

impl SearchResults {
    /// Whether no tool matched well enough ("no good match").
    pub fn is_no_match(&self) -> bool {
        self.hits.is_empty()
    }
}

/// The edit distance between `a` and `b` (insertions, deletions, substitutions of
/// characters), or `None` when it is above `max`.
pub(crate) fn edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > max {
        return None;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_and_cuts_off() {
        assert_eq!(edit_distance("read_file", "read_file", 2), Some(0));
        assert_eq!(edit_distance("raed_file", "read_file", 2), Some(2));
        assert_eq!(edit_distance("read_fil", "read_file", 2), Some(1));
        assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("a", "abcdef", 2), None);
    }
}
