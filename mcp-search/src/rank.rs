//! Lexical ranking: BM25F over the tool fields, compounds, name coverage, exact names.
//!
//! Our own scoring rather than a BM25 crate's: the crates on crates.io score one text per
//! document, and the per-field weights and length normalization (BM25F) add about 3 points
//! of top-1 on the benchmark over equal fields (see the crate docs' measured steps; the
//! crate's `Bm25Baseline` is the reference baseline, measured beside it by `mcp-bench
//! tool-search`).

use crate::FastMap;

use crate::analyze::Analyzer;
use crate::document::{FIELDS, NAME};
use crate::segment::{Segment, Stats};

/// At most this many distinct query terms count (the first ones).
const MAX_QUERY_TERMS: usize = 64;

/// The ranking's constants. General choices, not fitted to any query.
struct Params {
    k1: f64,
    /// Weight of each field's term frequency.
    weight: [f64; FIELDS],
    /// Length normalization of each field.
    b: [f64; FIELDS],
    /// Weight of each field in the server-level document.
    server_weight: [f64; FIELDS],
    /// How much of the server's own BM25 score each of its matching tools gets.
    server_share: f64,
    server_k1: f64,
    server_b: f64,
    /// A tool's score grows by this share times the fraction of its name's terms that the
    /// query has (a name fully spelled out in the request beats a partly matching one).
    name_coverage: f64,
}

/// k1 1.0 and b 0.5 on the text fields are the middle of the plain grid tried on the
/// public queries (k1 0.8 to 2.0, b 0.3 to 0.75; each within about 2 points of the others,
/// the extremes not taken); the server share is off (0.3 or more lost top-1).
const PARAMS: Params = Params {
    k1: 1.0,
    weight: [3.0, 1.0, 1.0, 0.5, 0.3],
    b: [0.3, 0.0, 0.5, 0.5, 0.5],
    server_weight: [1.0, 0.0, 1.0, 0.3, 0.2],
    server_share: 0.0,
    server_k1: 1.2,
    server_b: 0.75,
    name_coverage: 0.2,
};

/// Tiers above score: the whole query is the tool's name; the query writes a multi-word
/// tool name verbatim.
pub(crate) const TIER_EXACT: u8 = 2;
/// See [`TIER_EXACT`].
pub(crate) const TIER_VERBATIM: u8 = 1;

/// One candidate: tool `tool` of segment `segment`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scored {
    pub(crate) segment: usize,
    pub(crate) tool: u32,
    pub(crate) tier: u8,
    pub(crate) score: f64,
    /// The share of the query's weight (the sum of its terms' inverse document
    /// frequencies) that the tool has, from 0 to 1.
    pub(crate) coverage: f64,
}

/// Best first: tier, then score, then qualified name.
pub(crate) fn sort(list: &mut [Scored], segments: &[&Segment]) {
    list.sort_by(|a, b| {
        b.tier
            .cmp(&a.tier)
            .then(b.score.total_cmp(&a.score))
            .then_with(|| {
                let qa = &segments[a.segment].tools[a.tool as usize].qualified;
                let qb = &segments[b.segment].tools[b.tool as usize].qualified;
                qa.cmp(qb)
            })
    });
}

fn idf(n: f64, df: f64) -> f64 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The query's distinct terms with their counts, in first-seen order.
fn query_terms(analyzer: &Analyzer, stats: &Stats, query: &str) -> Vec<(String, u32)> {
    let mut raw = Vec::new();
    analyzer.terms(query, &mut raw);
    if raw.is_empty() {
        analyzer.terms_with(query, false, &mut raw);
    }
    let mut compounds = Vec::new();
    analyzer.compounds(query, &mut compounds);
    analyzer.splits(query, |t| stats.df.contains_key(t), &mut compounds);
    raw.extend(
        compounds
            .into_iter()
            .filter(|c| stats.df.contains_key(c.as_str())),
    );
    let mut seen: FastMap<&str, usize> = FastMap::default();
    let mut terms: Vec<(String, u32)> = Vec::new();
    for t in &raw {
        match seen.get(t.as_str()) {
            Some(&i) => terms[i].1 += 1,
            None if terms.len() < MAX_QUERY_TERMS => {
                seen.insert(t, terms.len());
                terms.push((t.clone(), 1));
            }
            None => {}
        }
    }
    terms
}

/// Every tool that matches `query`, unsorted.
pub(crate) fn score(
    analyzer: &Analyzer,
    stats: &Stats,
    segments: &[&Segment],
    query: &str,
) -> Vec<Scored> {
    let weights = QueryWeights::new(analyzer, stats, query);
    let mut out = Vec::new();
    let mut scratch = Scratch::default();
    for (si, seg) in segments.iter().enumerate() {
        weights.score_segment(si, seg, &mut scratch, &mut out);
    }
    add_name_tiers(stats, segments, query, &mut out);
    out
}

/// The query's terms, and what weighs them against this corpus (inverse document
/// frequencies, average field and server lengths).
struct QueryWeights {
    terms: Vec<(String, u32)>,
    /// Average length of each field over the tools (at least 1).
    avg: Vec<f64>,
    /// Each term's inverse document frequency over the tools.
    idfs: Vec<f64>,
    /// Each term's inverse document frequency over the servers.
    server_idfs: Vec<f64>,
    /// Average weighted length of a server's document (at least 1).
    avg_server_len: f64,
    /// The sum of the terms' inverse document frequencies: the query's whole weight.
    idf_sum: f64,
}

/// Buffers reused from one segment to the next, one slot per tool of the segment.
#[derive(Default)]
struct Scratch {
    /// The tool's BM25F score.
    acc: Vec<f64>,
    /// How often the query's terms occur in the tool's name.
    name_hits: Vec<u32>,
    /// The sum of the inverse document frequencies of the query terms the tool has.
    matched: Vec<f64>,
}

/// A server document's length: its fields' lengths, weighted.
fn server_len(len: &[u64; FIELDS]) -> f64 {
    len.iter()
        .zip(PARAMS.server_weight)
        .map(|(&l, w)| l as f64 * w)
        .sum()
}

impl QueryWeights {
    /// The terms of `query`, weighed against the corpus `stats` describes.
    fn new(analyzer: &Analyzer, stats: &Stats, query: &str) -> Self {
        let terms = query_terms(analyzer, stats, query);
        let n = stats.tools.max(1) as f64;
        let n_servers = stats.servers.max(1) as f64;
        let avg: Vec<f64> = stats
            .len_sum
            .iter()
            .map(|&s| (s as f64 / n).max(1.0))
            .collect();
        let idfs: Vec<f64> = terms
            .iter()
            .map(|(t, _)| idf(n, f64::from(stats.df.get(t.as_str()).copied().unwrap_or(0))))
            .collect();
        let server_idfs: Vec<f64> = terms
            .iter()
            .map(|(t, _)| {
                idf(
                    n_servers,
                    f64::from(stats.server_df.get(t.as_str()).copied().unwrap_or(0)),
                )
            })
            .collect();
        let avg_server_len = (server_len(&stats.len_sum) / n_servers).max(1.0);
        let idf_sum = idfs.iter().sum();
        Self {
            idf_sum,
            terms,
            avg,
            idfs,
            server_idfs,
            avg_server_len,
        }
    }

    /// Adds to `out` every tool of segment `si` that matches a term: its BM25F score,
    /// grown by its name's coverage and the server's share.
    fn score_segment(
        &self,
        si: usize,
        seg: &Segment,
        scratch: &mut Scratch,
        out: &mut Vec<Scored>,
    ) {
        let p = &PARAMS;
        let Scratch {
            acc,
            name_hits,
            matched,
        } = scratch;
        matched.clear();
        matched.resize(seg.tools.len(), 0.0);
        acc.clear();
        acc.resize(seg.tools.len(), 0.0);
        name_hits.clear();
        name_hits.resize(seg.tools.len(), 0);
        let seg_len = server_len(&seg.len_sum);
        let mut server_score = 0.0;
        for (qi, (term, _qtf)) in self.terms.iter().enumerate() {
            let Some(list) = seg.postings.get(term.as_str()) else {
                continue;
            };
            let mut server_tf = 0.0;
            for posting in list {
                let entry = &seg.tools[posting.tool as usize];
                let mut tfw = 0.0;
                for f in 0..FIELDS {
                    let tf = f64::from(posting.tf[f]);
                    if tf > 0.0 {
                        let norm = 1.0 - p.b[f] + p.b[f] * f64::from(entry.len[f]) / self.avg[f];
                        tfw += p.weight[f] * tf / norm;
                        server_tf += p.server_weight[f] * tf;
                    }
                }
                acc[posting.tool as usize] += self.idfs[qi] * tfw * (p.k1 + 1.0) / (p.k1 + tfw);
                matched[posting.tool as usize] += self.idfs[qi];
                if posting.tf[NAME] > 0 {
                    name_hits[posting.tool as usize] += u32::from(posting.tf[NAME]);
                }
            }
            let norm = 1.0 - p.server_b + p.server_b * seg_len / self.avg_server_len;
            let stf = server_tf / norm;
            server_score += self.server_idfs[qi] * stf * (p.server_k1 + 1.0) / (p.server_k1 + stf);
        }
        for (ti, &lex) in acc.iter().enumerate() {
            if lex > 0.0 {
                let name_len = seg.tools[ti].len[NAME].max(1);
                let name_coverage = f64::from(name_hits[ti].min(name_len)) / f64::from(name_len);
                out.push(Scored {
                    segment: si,
                    tool: u32::try_from(ti).unwrap_or(u32::MAX),
                    tier: 0,
                    score: lex * (1.0 + p.name_coverage * name_coverage)
                        + p.server_share * server_score,
                    coverage: if self.idf_sum > 0.0 {
                        (matched[ti] / self.idf_sum).min(1.0)
                    } else {
                        0.0
                    },
                });
            }
        }
    }
}

/// Raises the tier of the tools the query names exactly (the whole query) or verbatim (a
/// word of it names a multi-word tool), adding those that matched no term: a few hash
/// look-ups in the corpus-wide name map.
fn add_name_tiers(stats: &Stats, segments: &[&Segment], query: &str, out: &mut Vec<Scored>) {
    let whole = query.trim().to_lowercase();
    let words: Vec<String> = query
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut tiers: FastMap<(usize, u32), u8> = FastMap::default();
    let mut mark = |form: &str, tier: u8, multi_word_only: bool| {
        for (server, tool) in stats.exact.get(form).into_iter().flatten() {
            let Ok(si) = segments.binary_search_by(|s| s.server.cmp(server)) else {
                continue;
            };
            if multi_word_only && segments[si].tools[*tool as usize].name_pieces < 2 {
                continue;
            }
            let slot = tiers.entry((si, *tool)).or_insert(0);
            *slot = (*slot).max(tier);
        }
    };
    mark(&whole, TIER_EXACT, false);
    for w in &words {
        mark(w, TIER_VERBATIM, true);
    }
    if !tiers.is_empty() {
        for s in out.iter_mut() {
            if let Some(t) = tiers.remove(&(s.segment, s.tool)) {
                s.tier = t;
            }
        }
        for ((segment, tool), tier) in tiers {
            out.push(Scored {
                segment,
                tool,
                tier,
                score: 0.0,
                coverage: 0.0,
            });
        }
    }
}
