//! The embedding hook: a host's own model, for hybrid ranking.

/// An embedding model the host brings (a local ONNX model, an API client, a cache).
///
/// With one, [`ToolIndex::with_embedder`](crate::ToolIndex::with_embedder) embeds every
/// tool's text (name, title, description) when its server is indexed, embeds each query,
/// and fuses the cosine-similarity ranking with the lexical one by weighted reciprocal-rank
/// fusion ([`Fusion`]: the lexical rank `r`, from 1, adds `1 / (k + r)`, the embedding rank
/// `weight / (k + r)`, over the first [`HYBRID_DEPTH`](crate::HYBRID_DEPTH) of each list).
/// Exact name matches still rank first. Vectors are kept per tool: when a server is
/// indexed again, only its tools whose text changed are embedded again. The crate ships
/// no model and makes no network call: without an embedder the ranking is lexical only
/// (with the `semantic` feature, `StaticEmbedder` runs a local static model).
///
/// A tool found by meaning alone (no query term) has a [`Hit::coverage`](crate::Hit::coverage)
/// of 0, so [`ToolIndex::search_with`](crate::ToolIndex::search_with)'s minimum coverage
/// leaves it out: ask with `SearchOptions::with_min_coverage(0.0)` to keep such hits.
///
/// `embed` must return one vector per text, all of one length; it may block (call
/// `search` from a blocking context if it does).
///
/// ```
/// use mcp_search::Embedder;
/// /// Letter counts: a stand-in for a real model.
/// #[derive(Debug)]
/// struct Letters;
/// impl Embedder for Letters {
///     fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>> {
///         Ok(texts.iter().map(|t| {
///             let mut v = vec![0.0; 26];
///             for b in t.bytes().filter(u8::is_ascii_lowercase) {
///                 v[usize::from(b - b'a')] += 1.0;
///             }
///             v
///         }).collect())
///     }
/// }
/// let index = mcp_search::ToolIndex::with_embedder(std::sync::Arc::new(Letters));
/// # let _ = index;
/// ```
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// One vector per text, in order.
    fn embed(
        &self,
        texts: &[&str],
    ) -> Result<Vec<Vec<f32>>, Box<dyn std::error::Error + Send + Sync>>;
}

/// [`Fusion::rrf_k`]'s default.
pub const DEFAULT_RRF_K: f64 = 60.0;
/// [`Fusion::embedding_weight`]'s default.
pub const DEFAULT_EMBEDDING_WEIGHT: f64 = 1.0;

/// How the embedding ranking is fused with the lexical one: weighted reciprocal-rank
/// fusion. A tool at lexical rank `r` (from 1) gets `1 / (rrf_k + r)`, at embedding rank
/// `r` `embedding_weight / (rrf_k + r)`; the sums rank the tools.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Fusion {
    /// The rank offset: smaller lets the first few of each list weigh more.
    /// Default [`DEFAULT_RRF_K`].
    pub rrf_k: f64,
    /// The embedding list's weight against the lexical list's 1.
    /// Default [`DEFAULT_EMBEDDING_WEIGHT`].
    pub embedding_weight: f64,
    /// How the two are combined. Default [`FusionMethod::ReciprocalRank`].
    pub method: FusionMethod,
}

/// How [`Fusion`] combines the lexical and the embedding ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FusionMethod {
    /// By rank: `1 / (rrf_k + r)` from the lexical list, `embedding_weight / (rrf_k + r)`
    /// from the embedding list.
    ReciprocalRank,
    /// By score: the lexical score over the query's best lexical score, plus
    /// `embedding_weight` times the cosine similarity (`rrf_k` is not used).
    ScoreBlend,
}

impl Default for Fusion {
    fn default() -> Self {
        Self::new()
    }
}

impl Fusion {
    /// The defaults.
    pub fn new() -> Self {
        Self {
            rrf_k: DEFAULT_RRF_K,
            embedding_weight: DEFAULT_EMBEDDING_WEIGHT,
            method: FusionMethod::ReciprocalRank,
        }
    }

    /// Sets [`rrf_k`](Self::rrf_k) (clamped to at least 0).
    #[must_use]
    pub fn with_rrf_k(mut self, k: f64) -> Self {
        self.rrf_k = k.max(0.0);
        self
    }

    /// The constants chosen for `StaticEmbedder` with potion-base-8M (the
    /// `semantic` feature): a score blend at weight 0.5, the best top-1 on the tuning part of
    /// the public queries over reciprocal-rank fusion (k 5–60, weights 0.1–1.5) and score
    /// blends (weights 0.1–1.5); chosen there only, never on the held-out part or the
    /// independent queries.
    pub fn static_model() -> Self {
        Self::new()
            .with_method(FusionMethod::ScoreBlend)
            .with_embedding_weight(0.5)
    }

    /// Sets [`method`](Self::method).
    #[must_use]
    pub fn with_method(mut self, method: FusionMethod) -> Self {
        self.method = method;
        self
    }

    /// Sets [`embedding_weight`](Self::embedding_weight) (clamped to at least 0).
    #[must_use]
    pub fn with_embedding_weight(mut self, weight: f64) -> Self {
        self.embedding_weight = weight.max(0.0);
        self
    }
}

/// `v` scaled to length 1 (the zero vector stays zero), so that a dot product is the
/// cosine similarity.
pub(crate) fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        for x in &mut v {
            *x /= norm;
        }
    } else {
        v.iter_mut().for_each(|x| *x = 0.0);
    }
    v
}

/// The dot product (the cosine similarity of two unit vectors). Eight independent sums,
/// so that the compiler can use vector instructions (one running sum is a chain of
/// dependent additions, several times slower over a catalog's vectors).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    #[test]
    fn dot_adds_every_product_whatever_the_length() {
        for n in [0usize, 1, 7, 8, 9, 256, 259] {
            let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let b: Vec<f32> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { 2.0 }).collect();
            let expected: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert_eq!(super::dot(&a, &b), expected, "{n}");
        }
    }
}
