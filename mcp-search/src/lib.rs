//! Search over MCP tool definitions, so a model can look tools up instead of reading every
//! definition: a lexical index (BM25F over name, server, title and description, schema
//! property names and descriptions) with name-aware tokenization, stemming and stop words,
//! CJK bigrams, per-server incremental updates and an optional embedding hook.
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
//! document, and the field weighting is where most of the measured gain over the reference
//! baseline ([`Bm25Baseline`]) comes from. On top: a query that is exactly a tool's raw,
//! qualified (`server/tool`) or alias name ranks that tool first; a multi-word tool name
//! written verbatim in a query ranks that tool above merely similar ones; ties are broken
//! by qualified name. `mcp-bench tool-search` measures the ranking against the baseline on
//! the workspace's benchmark data (3,361 real tools, labelled queries).
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
mod segment;
mod tool;

pub use baseline::Bm25Baseline;
pub use catalog::{Catalog, LabelledQuery};
pub use embed::Embedder;
pub use error::SearchError;
pub use index::{HYBRID_DEPTH, MAX_LIMIT, MAX_QUERY_CHARS, ToolIndex};
pub use tool::{Hit, ToolDef, qualified_name};
