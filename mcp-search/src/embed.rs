//! The embedding hook: a host's own model, for hybrid ranking.

/// An embedding model the host brings (a local ONNX model, an API client, a cache).
///
/// With one, [`ToolIndex::with_embedder`](crate::ToolIndex::with_embedder) embeds every
/// tool's text (name, title, description) when its server is indexed, embeds each query,
/// and fuses the cosine-similarity ranking with the lexical one by reciprocal-rank fusion
/// (each list's rank `r` adds `1 / (60 + r)`, over the first
/// [`HYBRID_DEPTH`](crate::HYBRID_DEPTH) of each list). Exact name matches still rank
/// first. The crate ships no model and makes no network call: without an embedder the
/// ranking is lexical only.
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

/// Cosine similarity; 0 when either vector is zero.
pub(crate) fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let mut dot = 0.0f64;
    let mut na = 0.0f64;
    let mut nb = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}
