//! The crate's one error type.

use std::path::PathBuf;

/// Why a search, an index update or a catalog load failed.
///
/// Branch on the `is_*` predicates rather than on variants: new variants may come.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SearchError {
    /// The query has no letter or digit (empty, whitespace, control characters or
    /// punctuation only).
    #[error("the search query is empty: give some words that describe the tool")]
    EmptyQuery,
    /// The query is longer than [`MAX_QUERY_CHARS`](crate::MAX_QUERY_CHARS).
    #[error("the search query has {chars} characters; at most {max} are accepted: shorten it")]
    QueryTooLong {
        /// The query's length in characters.
        chars: usize,
        /// The most accepted.
        max: usize,
    },
    /// A limit of 0 was asked for.
    #[error("the search limit is 0: ask for at least 1 result")]
    ZeroLimit,
    /// One server's tool list names a tool twice.
    #[error("server `{server}` lists tool `{tool}` twice: tool names must be unique per server")]
    DuplicateTool {
        /// The server.
        server: String,
        /// The repeated tool name.
        tool: String,
    },
    /// One server's skill list names a skill twice.
    #[error("server `{server}` lists skill `{skill}` twice: skill names must be unique per server")]
    DuplicateSkill {
        /// The server.
        server: String,
        /// The repeated skill name.
        skill: String,
    },
    /// The host's [`Embedder`](crate::Embedder) failed.
    #[error("the embedder failed")]
    Embedding {
        /// The embedder's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The [`Embedder`](crate::Embedder) returned the wrong number of vectors, or vectors
    /// of different lengths.
    #[error(
        "the embedder returned {got} for {wanted}: it must return one vector per text, all of one length"
    )]
    EmbeddingShape {
        /// What was wanted (e.g. "3 vectors").
        wanted: String,
        /// What came back.
        got: String,
    },
    /// An embedding model folder could not be loaded (the `semantic` feature's
    /// `StaticEmbedder`).
    #[error("cannot load the embedding model in {}: {message}", path.display())]
    Model {
        /// The model folder.
        path: PathBuf,
        /// What is missing or wrong, and what to do.
        message: String,
    },
    /// A catalog or queries file could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A catalog or queries file is malformed.
    #[error("{origin}:{line}:{column}: {message}")]
    Malformed {
        /// Where the text came from (a path, or what the caller named it).
        origin: String,
        /// 1-based line of the problem (0 when unknown).
        line: usize,
        /// 1-based column of the problem (0 when unknown).
        column: usize,
        /// What is wrong.
        message: String,
    },
}

impl SearchError {
    /// The query was empty or had no letter or digit.
    pub fn is_empty_query(&self) -> bool {
        matches!(self, Self::EmptyQuery)
    }

    /// The query was too long.
    pub fn is_query_too_long(&self) -> bool {
        matches!(self, Self::QueryTooLong { .. })
    }

    /// The limit was invalid (0).
    pub fn is_invalid_limit(&self) -> bool {
        matches!(self, Self::ZeroLimit)
    }

    /// The query or limit was bad: the caller should change its request (every case above).
    pub fn is_bad_request(&self) -> bool {
        self.is_empty_query() || self.is_query_too_long() || self.is_invalid_limit()
    }

    /// A server's tool list repeated a tool name, or its skills a skill name.
    pub fn is_duplicate_tool(&self) -> bool {
        matches!(
            self,
            Self::DuplicateTool { .. } | Self::DuplicateSkill { .. }
        )
    }

    /// The embedder failed or returned vectors of the wrong shape.
    pub fn is_embedding(&self) -> bool {
        matches!(self, Self::Embedding { .. } | Self::EmbeddingShape { .. })
    }

    /// An embedding model folder could not be loaded.
    pub fn is_model(&self) -> bool {
        matches!(self, Self::Model { .. })
    }

    /// A catalog or queries file could not be read or parsed.
    pub fn is_load(&self) -> bool {
        matches!(self, Self::Io { .. } | Self::Malformed { .. })
    }

    /// The 1-based line of a malformed file's problem, when known.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Malformed { line, .. } if *line > 0 => Some(*line),
            _ => None,
        }
    }
}
