//! The index: one segment per server, corpus statistics, search.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_key::McpServerKey;

use crate::analyze::Analyzer;
use crate::embed::{Embedder, Fusion, FusionMethod, dot, unit};
use crate::error::SearchError;
use crate::rank::{self, Scored};
use crate::results::{DID_YOU_MEAN, SearchOptions, SearchResults};
use crate::segment::{Segment, Stats};
use crate::tool::{Hit, ToolDef};

/// The longest query accepted, in characters; a longer one is a
/// [`SearchError::QueryTooLong`].
pub const MAX_QUERY_CHARS: usize = 4096;
/// The most results one search returns; a larger limit is clamped to it.
pub const MAX_LIMIT: usize = 1000;
/// How many results of each list (lexical, embedding) hybrid ranking fuses.
pub const HYBRID_DEPTH: usize = 100;

/// A search index over the tools of many servers, keyed by server.
///
/// Update it per server ([`replace_server`](Self::replace_server),
/// [`remove_server`](Self::remove_server)); query it through `&self`
/// ([`search`](Self::search)). It is `Send + Sync` and `Clone`: keep it behind an
/// `RwLock`, or publish snapshots as `Arc<ToolIndex>` (segments are shared between clones,
/// so a clone copies only the corpus statistics and the server map).
///
/// # Cost
///
/// Replacing a server re-analyzes that server's tools only (and embeds them when an
/// embedder is set) and adjusts the corpus statistics by its old and new terms: O(size of
/// that server), never a rebuild of the other servers' postings. A search looks each
/// query term up in every server's postings (O(servers × query terms) hash look-ups plus the
/// matching postings); on the 3,361-tool benchmark catalog it takes well under a
/// millisecond.
#[derive(Clone)]
pub struct ToolIndex {
    analyzer: Arc<Analyzer>,
    servers: BTreeMap<McpServerKey, Arc<Segment>>,
    stats: Stats,
    embedder: Option<Arc<dyn Embedder>>,
    fusion: Fusion,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("servers", &self.stats.servers)
            .field("tools", &self.stats.tools)
            .field("embedder", &self.embedder)
            .field("fusion", &self.fusion)
            .finish_non_exhaustive()
    }
}

impl Default for ToolIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolIndex {
    /// An empty index with lexical ranking only (no model, no network).
    pub fn new() -> Self {
        Self {
            analyzer: Arc::new(Analyzer::new()),
            servers: BTreeMap::new(),
            stats: Stats::default(),
            embedder: None,
            fusion: Fusion::new(),
        }
    }

    /// An empty index that also ranks by `embedder`'s vectors (see [`Embedder`]), fused
    /// with the lexical ranking by [`Fusion`]'s defaults.
    pub fn with_embedder(embedder: Arc<dyn Embedder>) -> Self {
        Self {
            embedder: Some(embedder),
            ..Self::new()
        }
    }

    /// This index with `fusion` for its embedding ranking (no effect without an embedder).
    /// Changing it re-embeds nothing.
    #[must_use]
    pub fn with_fusion(mut self, fusion: Fusion) -> Self {
        self.fusion = fusion;
        self
    }

    /// How the embedding ranking is fused with the lexical one.
    pub fn fusion(&self) -> Fusion {
        self.fusion
    }

    /// Indexes `tools` as the whole tool list of `server`, replacing what it had.
    ///
    /// On error the index is unchanged. An empty list leaves the server with no tools
    /// (as [`remove_server`](Self::remove_server) does).
    pub fn replace_server(
        &mut self,
        server: McpServerKey,
        tools: impl IntoIterator<Item = ToolDef>,
    ) -> Result<(), SearchError> {
        let mut tools: Vec<ToolDef> = tools.into_iter().collect();
        let mut seg = Segment::build(&self.analyzer, server.clone(), &mut tools)?;
        if let Some(embedder) = &self.embedder
            && !seg.tools.is_empty()
        {
            let old = self.servers.get(&server).map(Arc::as_ref);
            (seg.vectors, seg.text_hashes) = embed_tools(embedder.as_ref(), &seg, &tools, old)?;
        }
        self.remove_server(&server);
        if seg.tools.is_empty() {
            return Ok(());
        }
        self.stats.add(&seg);
        self.servers.insert(server, Arc::new(seg));
        Ok(())
    }

    /// Drops `server` and its tools; returns whether it was there.
    pub fn remove_server(&mut self, server: &McpServerKey) -> bool {
        match self.servers.remove(server) {
            Some(old) => {
                self.stats.remove(&old);
                true
            }
            None => false,
        }
    }

    /// The indexed servers, in order.
    pub fn servers(&self) -> impl Iterator<Item = &McpServerKey> {
        self.servers.keys()
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        usize::try_from(self.stats.tools).unwrap_or(usize::MAX)
    }

    /// Whether no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.stats.tools == 0
    }

    /// The heap bytes the index holds, estimated from its structures' capacities (strings,
    /// vectors, hash-table slots); the allocator's own overhead is not counted.
    pub fn heap_bytes(&self) -> usize {
        let mut n = self.stats.heap_bytes() + self.analyzer.heap_bytes();
        for seg in self.servers.values() {
            n += std::mem::size_of::<Segment>() + seg.heap_bytes();
        }
        n + self.servers.len() * (std::mem::size_of::<McpServerKey>() + 16)
    }

    /// The tools that best match `query`, best first, at most `limit` of them.
    ///
    /// A query equal (ignoring case and surrounding space) to a tool's raw name, its
    /// `server/tool` name or an alias ranks that tool first; a multi-word tool name
    /// (`read_file`, `getTicker`) written verbatim in the query ranks that tool above
    /// those that are merely similar. Equal scores are ordered by qualified name, so the
    /// order is deterministic. Only tools that match some query term are returned.
    ///
    /// Limits: `limit` 0 is [`SearchError::ZeroLimit`]; a limit above [`MAX_LIMIT`] is
    /// clamped. A query with no letter or digit (empty, blank, control characters or
    /// punctuation only) is [`SearchError::EmptyQuery`]; one longer than
    /// [`MAX_QUERY_CHARS`] is [`SearchError::QueryTooLong`]. A query made only of stop
    /// words is searched with them kept.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let options = SearchOptions::new(limit).with_min_coverage(0.0);
        Ok(self.search_with(query, &options)?.hits)
    }

    /// As [`search`](Self::search), with weak hits left out: a hit stays only if it has
    /// at least [`SearchOptions::min_coverage`] of the query's weight
    /// ([`Hit::coverage`]), or the query names it (exactly, or a multi-word tool name
    /// verbatim). When none stays, the answer is "no good match"
    /// ([`SearchResults::is_no_match`]) with the closest names in
    /// [`SearchResults::did_you_mean`]: the tool names (raw, qualified or alias) within a
    /// quarter of the query's length in spelling (at least 1 edit), nearest first, then
    /// the best weak hits.
    ///
    /// ```
    /// use mcp_search::{SearchOptions, ToolDef, ToolIndex};
    /// let mut index = ToolIndex::new();
    /// index.replace_server("files".parse()?, [
    ///     ToolDef::new("read_file", "Read a file's contents."),
    ///     ToolDef::new("move_file", "Move or rename a file."),
    /// ])?;
    /// let found = index.search_with("rename a file", &SearchOptions::new(5))?;
    /// assert_eq!(found.hits[0].qualified_name(), "files/move_file");
    /// // Nothing is about the weather: no weak hits, and no name is near.
    /// let none = index.search_with("weather in Paris tomorrow", &SearchOptions::new(5))?;
    /// assert!(none.is_no_match() && none.did_you_mean.is_empty());
    /// // A misspelt name: no hit, but the name it was meant to be.
    /// let strict = SearchOptions::new(5).with_min_coverage(0.5);
    /// let typo = index.search_with("raed_file", &strict)?;
    /// assert!(typo.is_no_match());
    /// assert_eq!(typo.did_you_mean[0].qualified_name(), "files/read_file");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors as [`search`](Self::search).
    pub fn search_with(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        let limit = options.limit();
        let chars = query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(SearchError::QueryTooLong {
                chars,
                max: MAX_QUERY_CHARS,
            });
        }
        if limit == 0 {
            return Err(SearchError::ZeroLimit);
        }
        if !query.chars().any(char::is_alphanumeric) {
            return Err(SearchError::EmptyQuery);
        }
        let limit = limit.min(MAX_LIMIT);
        let segments: Vec<&Segment> = self.servers.values().map(|s| s.as_ref()).collect();
        let mut scored = rank::score(&self.analyzer, &self.stats, &segments, query);
        if let Some(embedder) = &self.embedder {
            scored = self.fuse(embedder.as_ref(), &segments, query, scored)?;
        }
        rank::sort(&mut scored, &segments);
        let hit = |s: &Scored| {
            let seg = segments[s.segment];
            let entry = &seg.tools[s.tool as usize];
            Hit {
                server: seg.server.clone(),
                tool: entry.name.clone(),
                qualified: entry.qualified.clone(),
                score: s.score,
                coverage: s.coverage,
                kind: entry.kind,
            }
        };
        let kind_of = |segment: usize, tool: u32| segments[segment].tools[tool as usize].kind;
        let wanted = |segment: usize, tool: u32| {
            options
                .kind()
                .is_none_or(|kind| kind == kind_of(segment, tool))
        };
        scored.retain(|s| wanted(s.segment, s.tool));
        let min = options.min_coverage();
        let strong = |s: &&Scored| s.tier > 0 || s.coverage >= min;
        let hits: Vec<Hit> = scored.iter().filter(strong).take(limit).map(hit).collect();
        let mut did_you_mean = Vec::new();
        if hits.is_empty() {
            let mut near = self.names_near(&segments, query);
            near.retain(|&(segment, tool)| wanted(segment, tool));
            for s in &scored {
                if near.len() >= DID_YOU_MEAN {
                    break;
                }
                if !near.contains(&(s.segment, s.tool)) {
                    near.push((s.segment, s.tool));
                }
            }
            did_you_mean = near
                .into_iter()
                .map(|(segment, tool)| {
                    let found = scored
                        .iter()
                        .find(|s| (s.segment, s.tool) == (segment, tool));
                    hit(found.unwrap_or(&Scored {
                        segment,
                        tool,
                        tier: 0,
                        score: 0.0,
                        coverage: 0.0,
                    }))
                })
                .collect();
        }
        Ok(SearchResults { hits, did_you_mean })
    }

    /// Up to [`DID_YOU_MEAN`] tools (segment, tool) whose names (raw, qualified or alias)
    /// are nearest to `query` in spelling, within a quarter of its length.
    fn names_near(&self, segments: &[&Segment], query: &str) -> Vec<(usize, u32)> {
        let query = query.trim().to_lowercase();
        let max = (query.chars().count() / 4).max(1);
        let mut near: Vec<(usize, &str, usize, u32)> = Vec::new();
        for (form, tools) in &self.stats.exact {
            let Some(d) = crate::results::edit_distance(&query, form, max) else {
                continue;
            };
            for (server, tool) in tools {
                if let Ok(si) = segments.binary_search_by(|s| s.server.cmp(server)) {
                    let name = segments[si].tools[*tool as usize].qualified.as_str();
                    near.push((d, name, si, *tool));
                }
            }
        }
        near.sort_unstable();
        let mut tools: Vec<(usize, u32)> = Vec::new();
        for (_, _, si, tool) in near {
            if !tools.contains(&(si, tool)) {
                tools.push((si, tool));
            }
            if tools.len() == DID_YOU_MEAN {
                break;
            }
        }
        tools
    }

    /// Fuses the lexical list with the embedding ranking ([`Fusion`]).
    fn fuse(
        &self,
        embedder: &dyn Embedder,
        segments: &[&Segment],
        query: &str,
        lexical: Vec<Scored>,
    ) -> Result<Vec<Scored>, SearchError> {
        let Fusion {
            rrf_k,
            embedding_weight,
            method,
        } = self.fusion;
        let qv = query_vector(embedder, query)?;
        let similarities = Similarities::of_every_tool(segments, &qv)?;
        let dense = nearest(segments, &similarities);
        Ok(if method == FusionMethod::ScoreBlend {
            blend_scores(&lexical, &dense, &similarities, embedding_weight)
        } else {
            reciprocal_rank(lexical, &dense, segments, rrf_k, embedding_weight)
        })
    }
}

/// Every tool's cosine similarity to the query: tool `t` of segment `s` at
/// `values[offsets[s] + t]`.
struct Similarities {
    /// Where each segment's tools start in `values`.
    offsets: Vec<usize>,
    /// The similarities, segment after segment, in tool order.
    values: Vec<f64>,
}

impl Similarities {
    /// Step 2 of [`ToolIndex::fuse`]: the dot product of the unit query vector `qv` with
    /// every tool's (unit) vector; an [`SearchError::EmbeddingShape`] when a tool's vector
    /// is not as long as the query's.
    fn of_every_tool(segments: &[&Segment], qv: &[f32]) -> Result<Self, SearchError> {
        let mut offsets = Vec::with_capacity(segments.len());
        let mut values: Vec<f64> = Vec::new();
        for seg in segments {
            offsets.push(values.len());
            for v in &seg.vectors {
                if v.len() != qv.len() {
                    return Err(SearchError::EmbeddingShape {
                        wanted: format!("vectors of length {}", v.len()),
                        got: format!("a query vector of length {}", qv.len()),
                    });
                }
                values.push(f64::from(dot(qv, v)));
            }
        }
        Ok(Self { offsets, values })
    }

    /// The similarity of the tool `s` scores (0 for one outside the segments measured).
    fn of(&self, s: &Scored) -> f64 {
        self.offsets
            .get(s.segment)
            .and_then(|o| self.values.get(o + s.tool as usize))
            .copied()
            .unwrap_or(0.0)
    }
}

/// Step 1 of [`ToolIndex::fuse`]: the query's unit vector from `embedder`; an
/// [`SearchError::EmbeddingShape`] when it answers other than one vector.
fn query_vector(embedder: &dyn Embedder, query: &str) -> Result<Vec<f32>, SearchError> {
    let vectors = embedder
        .embed(&[query])
        .map_err(|source| SearchError::Embedding { source })?;
    let [qv] = vectors.as_slice() else {
        return Err(SearchError::EmbeddingShape {
            wanted: "1 vector".to_owned(),
            got: format!("{} vectors", vectors.len()),
        });
    };
    Ok(unit(qv.clone()))
}

/// Step 3 of [`ToolIndex::fuse`]: the embedding ranking, the first [`HYBRID_DEPTH`] tools
/// by similarity (selected, not sorted, past that depth; ties by qualified name), best
/// first ([`rank::sort`]).
fn nearest(segments: &[&Segment], similarities: &Similarities) -> Vec<Scored> {
    let mut dense: Vec<Scored> = Vec::with_capacity(similarities.values.len());
    for (si, seg) in segments.iter().enumerate() {
        for ti in 0..seg.vectors.len() {
            dense.push(Scored {
                segment: si,
                tool: u32::try_from(ti).unwrap_or(u32::MAX),
                tier: 0,
                score: similarities.values[similarities.offsets[si] + ti],
                coverage: 0.0,
            });
        }
    }
    if dense.len() > HYBRID_DEPTH {
        let name = |s: &Scored| &segments[s.segment].tools[s.tool as usize].qualified;
        dense.select_nth_unstable_by(HYBRID_DEPTH - 1, |a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| name(a).cmp(name(b)))
        });
        dense.truncate(HYBRID_DEPTH);
    }
    rank::sort(&mut dense, segments);
    dense
}

/// Step 4 of [`ToolIndex::fuse`], [`FusionMethod::ScoreBlend`]: each lexical hit scores
/// its lexical score over the best untiered one's (exact and verbatim matches aside), plus
/// `embedding_weight` times its
/// similarity; an embedding hit with no lexical score scores the weighted similarity
/// alone. Unsorted (in tool order).
fn blend_scores(
    lexical: &[Scored],
    dense: &[Scored],
    similarities: &Similarities,
    embedding_weight: f64,
) -> Vec<Scored> {
    let mut fused: BTreeMap<(usize, u32), Scored> = BTreeMap::new();
    let best = lexical
        .iter()
        .filter(|s| s.tier == 0)
        .map(|s| s.score)
        .fold(0.0f64, f64::max);
    for s in lexical {
        let lex = if best > 0.0 { s.score / best } else { 0.0 };
        fused.insert(
            (s.segment, s.tool),
            Scored {
                score: lex + embedding_weight * similarities.of(s),
                ..*s
            },
        );
    }
    for s in dense {
        fused.entry((s.segment, s.tool)).or_insert(Scored {
            score: embedding_weight * s.score,
            ..*s
        });
    }
    fused.into_values().collect()
}

/// Step 4 of [`ToolIndex::fuse`], [`FusionMethod::ReciprocalRank`]: each tool scores
/// `weight / (rrf_k + r)` from its rank `r` (from 1) in the first [`HYBRID_DEPTH`] of each
/// list (weight 1 for the lexical list, `embedding_weight` for the embedding one) and keeps
/// its best tier; lexical exact and verbatim matches past that depth stay, with score 0.
/// Unsorted (in tool order).
fn reciprocal_rank(
    mut lexical: Vec<Scored>,
    dense: &[Scored],
    segments: &[&Segment],
    rrf_k: f64,
    embedding_weight: f64,
) -> Vec<Scored> {
    let mut fused: BTreeMap<(usize, u32), Scored> = BTreeMap::new();
    rank::sort(&mut lexical, segments);
    for (list, weight) in [(lexical.as_slice(), 1.0), (dense, embedding_weight)] {
        for (r, s) in list.iter().take(HYBRID_DEPTH).enumerate() {
            let slot = fused.entry((s.segment, s.tool)).or_insert(Scored {
                score: 0.0,
                tier: 0,
                ..*s
            });
            slot.score += weight / (rrf_k + r as f64 + 1.0);
            slot.tier = slot.tier.max(s.tier);
        }
    }
    // Exact and verbatim matches keep their place even beyond the fused depth.
    for s in lexical.iter().skip(HYBRID_DEPTH).filter(|s| s.tier > 0) {
        fused
            .entry((s.segment, s.tool))
            .or_insert(Scored { score: 0.0, ..*s });
    }
    fused.into_values().collect()
}

/// One unit vector per tool of `seg`, from `tools` (the same tools, any order), with the
/// hash of the text each came from. Tools whose text `old` (the server's previous segment)
/// already embedded keep that vector; only the others go to the embedder.
fn embed_tools(
    embedder: &dyn Embedder,
    seg: &Segment,
    tools: &[ToolDef],
    old: Option<&Segment>,
) -> Result<(Vec<Vec<f32>>, Vec<u64>), SearchError> {
    let by_name: BTreeMap<(&str, crate::tool::EntryKind), &ToolDef> =
        tools.iter().map(|t| ((t.name(), t.kind()), t)).collect();
    let texts: Vec<String> = seg
        .tools
        .iter()
        .filter_map(|e| by_name.get(&(e.name.as_str(), e.kind)))
        .map(|t| embedding_text(t))
        .collect();
    let hashes: Vec<u64> = texts.iter().map(|t| text_hash(t)).collect();
    let known: std::collections::HashMap<u64, &Vec<f32>> = old
        .map(|o| o.text_hashes.iter().copied().zip(&o.vectors).collect())
        .unwrap_or_default();
    let missing: Vec<&str> = texts
        .iter()
        .zip(&hashes)
        .filter(|(_, h)| !known.contains_key(h))
        .map(|(t, _)| t.as_str())
        .collect();
    let fresh = if missing.is_empty() {
        Vec::new()
    } else {
        embedder
            .embed(&missing)
            .map_err(|source| SearchError::Embedding { source })?
    };
    if fresh.len() != missing.len() {
        return Err(SearchError::EmbeddingShape {
            wanted: format!("{} vectors", missing.len()),
            got: format!("{} vectors", fresh.len()),
        });
    }
    let len = known
        .values()
        .next()
        .map(|v| v.len())
        .or_else(|| fresh.first().map(Vec::len));
    if fresh.iter().any(|v| Some(v.len()) != len) {
        return Err(SearchError::EmbeddingShape {
            wanted: "vectors of one length".to_owned(),
            got: "vectors of different lengths".to_owned(),
        });
    }
    let mut fresh = fresh.into_iter().map(unit);
    let mut vectors = Vec::with_capacity(hashes.len());
    for h in &hashes {
        match known.get(h) {
            Some(v) => vectors.push((*v).clone()),
            None => vectors.push(fresh.next().unwrap_or_default()),
        }
    }
    Ok((vectors, hashes))
}

/// What a tool's vector is embedded from: its name, title and description.
fn embedding_text(t: &ToolDef) -> String {
    let mut text = t.name().to_owned();
    if let Some(title) = t.title() {
        text.push_str(": ");
        text.push_str(title);
    }
    if !t.description().is_empty() {
        text.push_str(". ");
        text.push_str(t.description());
    }
    text
}

/// A 64-bit FNV-1a hash of `text` (stable across runs and platforms).
fn text_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

// Hosts share one index across threads.
const _: () = {
    const fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<ToolIndex>();
};
